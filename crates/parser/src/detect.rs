//! `--log-format auto`: pick the preset, or the common variant of one, that parses the
//! first lines of the input.

use crate::access::{LineParser, Record};
use crate::format::{Dialect, Format, Role, PRESETS};

/// Layouts operators run that are a preset plus a field or two: a duration appended
/// (`%D` µs, `%T` s, nginx's `$request_time`), TLS fields after `vhost_combined`, and
/// nginx's default `main` (combined + `"$http_x_forwarded_for"`). Tried after the
/// presets; the label names the preset and what was added.
pub const VARIANTS: &[(&str, &str)] = &[
    (
        "combinedssl + %D",
        r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %D"#,
    ),
    (
        "combinedssl + %T",
        r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %T"#,
    ),
    (
        "combined + %D",
        r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D"#,
    ),
    (
        "combined + %T",
        r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %T"#,
    ),
    (
        "vhost_combined + TLS",
        r#"%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x"#,
    ),
    (
        "vhost_combined + TLS + %D",
        r#"%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %D"#,
    ),
    (
        "nginx main",
        r#"log_format main '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_forwarded_for"';"#,
    ),
    (
        "nginx main + TLS",
        r#"log_format main_ssl '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_forwarded_for" $ssl_protocol $ssl_cipher';"#,
    ),
    (
        "nginx-ssl + $request_time",
        r#"log_format ssl_timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol $ssl_cipher $request_time';"#,
    ),
    (
        "nginx-ssl + $request_time $upstream_response_time",
        r#"log_format ssl_upstream '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol $ssl_cipher $request_time $upstream_response_time';"#,
    ),
    (
        "nginx-combined + $request_time $upstream_response_time",
        r#"log_format upstream '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time $upstream_response_time';"#,
    ),
    (
        "nginx-combined + $request_time",
        r#"log_format timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $request_time';"#,
    ),
];

/// Whether a layout's TLS protocol field holds protocol names: at least half of the
/// values it parsed are `TLSv1.x`, `SSLv2/3`, GnuTLS's `TLS1.x` or `-` (else a number or
/// a word sits where the protocol would be, and another layout reads the lines better;
/// a hostile line or two does not change the layout).
fn tls_plausible(format: &Format, sample: &[&[u8]]) -> bool {
    let Some(idx) = format.role(Role::TlsProtocol) else {
        return true;
    };
    let mut parser = LineParser::new(format);
    let mut rec = Record::new(format);
    let (mut parsed, mut named) = (0usize, 0usize);
    for line in sample {
        if parser.parse(line, &mut rec).is_err() {
            continue;
        }
        parsed += 1;
        let v = rec.raw(idx).unwrap_or(b"");
        if v.is_empty()
            || v == b"-"
            || v.starts_with(b"TLSv")
            || v.starts_with(b"SSLv")
            || v.starts_with(b"TLS1")
        {
            named += 1;
        }
    }
    named * 2 >= parsed
}

/// Whether nginx's `$request_time` is what the layout reads as one: nginx always writes
/// it with milliseconds (`0.004`), so an integer there (Apache's `%D`, a PID) is another
/// layout.
fn nginx_times(format: &Format, sample: &[&[u8]]) -> bool {
    let Some(idx) = format.role(Role::Duration) else {
        return true;
    };
    let mut parser = LineParser::new(format);
    let mut rec = Record::new(format);
    let mut seen = false;
    for line in sample {
        if parser.parse(line, &mut rec).is_ok() {
            match rec.raw(idx) {
                Some(v) if v.contains(&b'.') => seen = true,
                Some(b"-") | None => {}
                Some(_) => return false,
            }
        }
    }
    seen
}

/// Whether a variant's appended duration looks like what it claims: `%D`
/// (microseconds) is never 0 and rarely under 50; `%T` (whole seconds) is mostly 0.
fn plausible(label: &str, format: &Format, sample: &[&[u8]]) -> bool {
    if label.contains("$request_time") {
        return nginx_times(format, sample);
    }
    let (micros, seconds) = (label.ends_with("%D"), label.ends_with("%T"));
    if !(micros || seconds) {
        return true;
    }
    let Some(idx) = format.role(Role::Duration) else {
        return true;
    };
    let mut parser = LineParser::new(format);
    let mut rec = Record::new(format);
    let mut values: Vec<u64> = Vec::new();
    for line in sample {
        if parser.parse(line, &mut rec).is_ok() {
            values.extend(rec.int(idx));
        }
    }
    if values.is_empty() {
        return false;
    }
    values.sort_unstable();
    let median = values.get(values.len() / 2).copied().unwrap_or(0);
    if micros {
        median >= 50
    } else {
        median <= 5
    }
}

/// The outcome of detection.
#[derive(Debug, Clone)]
pub struct Detection {
    /// The preset's name, or a variant's label (`combinedssl + %D`).
    pub preset: &'static str,
    /// A variant's format text (to show as a `LogFormat`/`log_format` to paste);
    /// `None` for a preset.
    pub variant: Option<&'static str>,
    /// The compiled preset.
    pub format: Format,
    /// How many of the sampled lines it parsed.
    pub parsed: usize,
    /// How many non-empty lines were sampled.
    pub sampled: usize,
}

/// Try every preset on `lines`; the one that parses most wins. Apache and nginx
/// layouts that are the same apart from escaping are told apart by the escapes seen
/// (`\xHH` upper case and `\x22` are nginx's, `\"` and lower-case `\xhh` Apache's).
pub fn detect(lines: &[&[u8]]) -> Option<Detection> {
    let sample: Vec<&[u8]> = lines
        .iter()
        .copied()
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .collect();
    if sample.is_empty() {
        return None;
    }
    let nginx_hint = nginx_escapes(&sample);
    let mut best: Option<(usize, bool, Detection)> = None;
    let candidates = PRESETS.iter().map(|(name, _)| (*name, *name, None)).chain(
        VARIANTS
            .iter()
            .map(|(label, text)| (*label, *text, Some(*text))),
    );
    for (name, spec, variant) in candidates {
        let Ok(format) = Format::compile(spec) else {
            continue;
        };
        if variant.is_some() && !plausible(name, &format, &sample) {
            continue;
        }
        if !tls_plausible(&format, &sample) {
            continue;
        }
        let parsed = {
            let mut parser = LineParser::new(&format);
            let mut rec = Record::new(&format);
            sample
                .iter()
                .filter(|l| parser.parse(l, &mut rec).is_ok())
                .count()
        };
        if parsed == 0 {
            continue;
        }
        let dialect_fits = (format.dialect == Dialect::Nginx) == nginx_hint;
        // On a tie: the dialect the escapes point to, then the layout with more
        // fields (`%v:%p %h %l %u` read as `%h %l %u` would need a user `- -`).
        let better = match &best {
            None => true,
            Some((p, fits, d)) => {
                parsed > *p
                    || (parsed == *p && dialect_fits && !fits)
                    || (parsed == *p
                        && dialect_fits == *fits
                        && format.fields.len() > d.format.fields.len())
            }
        };
        if better {
            best = Some((
                parsed,
                dialect_fits,
                Detection {
                    preset: name,
                    variant,
                    format,
                    parsed,
                    sampled: sample.len(),
                },
            ));
        }
    }
    best.map(|(_, _, d)| d)
}

fn nginx_escapes(sample: &[&[u8]]) -> bool {
    let mut nginx = 0usize;
    let mut apache = 0usize;
    for line in sample {
        // Left to right, so that `\\xAB` (an escaped backslash, then text) is not
        // taken for an escape.
        let mut i = 0;
        while let Some(&b) = line.get(i) {
            if b != b'\\' {
                i += 1;
                continue;
            }
            match (line.get(i + 1), line.get(i + 2), line.get(i + 3)) {
                (Some(b'x'), Some(h), Some(l))
                    if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() =>
                {
                    if h.is_ascii_uppercase() || l.is_ascii_uppercase() || (*h, *l) == (b'2', b'2')
                    {
                        nginx += 1;
                    } else if h.is_ascii_lowercase() || l.is_ascii_lowercase() {
                        apache += 1;
                    }
                    i += 4;
                }
                (Some(b'"'), _, _) => {
                    apache += 1;
                    i += 2;
                }
                _ => i += 2,
            }
        }
    }
    nginx > apache
}

#[cfg(test)]
mod tests {
    use super::*;

    const SSL: &[u8] = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
    const COMBINED: &[u8] =
        br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.0""#;
    const SSL_REQUEST: &[u8] =
        br#"[21/Nov/2026:18:07:40 +0000] 192.0.2.7 TLSv1.2 AES128-SHA "GET / HTTP/1.1" 512"#;

    #[test]
    fn picks_the_specific_preset() {
        assert_eq!(detect(&[SSL]).unwrap().preset, "combinedssl");
        assert_eq!(detect(&[COMBINED]).unwrap().preset, "combined");
        assert_eq!(detect(&[SSL_REQUEST]).unwrap().preset, "ssl_request");
        assert!(detect(&[b"hello world"]).is_none());
        assert!(detect(&[]).is_none());
    }

    #[test]
    fn common_variants_of_the_presets() {
        let d = detect(&[&[SSL, b" 2585"].concat()]).unwrap();
        assert_eq!(
            (d.preset, d.format.has(Role::Duration)),
            ("combinedssl + %D", true)
        );
        assert!(d.variant.unwrap().ends_with("%D"));
        assert_eq!(
            detect(&[&[SSL, b" 0"].concat(), &[SSL, b" 1"].concat()])
                .unwrap()
                .preset,
            "combinedssl + %T"
        );
        assert_eq!(
            detect(&[&[COMBINED, b" 181000"].concat()]).unwrap().preset,
            "combined + %D"
        );
        let vhost = br#"www.example.org:443 2001:db8::1 - - [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
        assert_eq!(detect(&[vhost]).unwrap().preset, "vhost_combined + TLS");
        let main = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.0" "203.0.113.9""#;
        assert_eq!(detect(&[main]).unwrap().preset, "nginx main");
        let timed = [SSL, b" 0.004"].concat();
        assert_eq!(
            detect(&[&timed]).unwrap().preset,
            "nginx-ssl + $request_time"
        );
        // $upstream_response_time: one value, `-`, or a list over several upstreams.
        let up = [SSL, b" 3.004 0.500, 2.501 : 0.001"].concat();
        let up1 = [SSL, b" 0.004 -"].concat();
        assert_eq!(
            detect(&[&up, &up1]).unwrap().preset,
            "nginx-ssl + $request_time $upstream_response_time"
        );
        // Apache's `%D %P` is not nginx's `$request_time $upstream_response_time`.
        let dp = [SSL, b" 210 11102"].concat();
        assert!(detect(&[&dp]).is_none_or(|d| !d.preset.contains("request_time")));
        let upc = [COMBINED, b" 0.015 0.012"].concat();
        assert_eq!(
            detect(&[&upc]).unwrap().preset,
            "nginx-combined + $request_time $upstream_response_time"
        );
        // The presets themselves still win when they fit.
        assert_eq!(detect(&[SSL]).unwrap().variant, None);
    }

    #[test]
    fn nginx_escapes_choose_nginx() {
        let l = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET /\xFF HTTP/1.1" 200 512 "-" "a\x22b" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
        assert_eq!(detect(&[l]).unwrap().preset, "nginx-ssl");
    }
}
