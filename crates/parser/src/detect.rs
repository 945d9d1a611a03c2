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

/// What a candidate layout checks in its duration field, from its label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DurationCheck {
    /// Nothing (a preset, or a variant that adds no duration).
    None,
    /// nginx's `$request_time`: always written with milliseconds (`0.004`), so an
    /// integer there (Apache's `%D`, a PID) is another layout.
    NginxTime,
    /// `%D` (microseconds): never 0 and rarely under 50, so the median is at least 50.
    Micros,
    /// `%T` (whole seconds): mostly 0, so the median is at most 5.
    Seconds,
}

impl DurationCheck {
    fn of(label: &str, variant: bool) -> DurationCheck {
        if !variant {
            DurationCheck::None
        } else if label.contains("$request_time") {
            DurationCheck::NginxTime
        } else if label.ends_with("%D") {
            DurationCheck::Micros
        } else if label.ends_with("%T") {
            DurationCheck::Seconds
        } else {
            DurationCheck::None
        }
    }
}

/// One pass of a candidate layout over the sample: the lines it parses, and what its
/// plausibility needs, gathered from the same parses.
#[derive(Debug, Default)]
struct Fit {
    parsed: usize,
    /// Parsed lines whose TLS protocol field holds a protocol name.
    named: usize,
    /// `$request_time`: a value with a `.` seen; a value neither that nor `-` seen.
    time_seen: bool,
    time_bad: bool,
    /// `%D`/`%T`: the integers read.
    values: Vec<u64>,
}

impl Fit {
    /// Parse the sample with `format` (stopping once fewer than `need` lines can
    /// parse: the count is then below `need`, and nothing else is looked at).
    fn of(format: &Format, check: DurationCheck, sample: &[&[u8]], need: usize) -> Fit {
        let mut parser = LineParser::new(format);
        let mut rec = Record::new(format);
        let tls = format.role(Role::TlsProtocol);
        let duration = format.role(Role::Duration);
        let mut fit = Fit::default();
        for (k, line) in sample.iter().enumerate() {
            if parser.parse(line, &mut rec).is_ok() {
                fit.parsed += 1;
                if let Some(idx) = tls {
                    let v = rec.raw(idx).unwrap_or(b"");
                    if v.is_empty()
                        || v == b"-"
                        || v.starts_with(b"TLSv")
                        || v.starts_with(b"SSLv")
                        || v.starts_with(b"TLS1")
                    {
                        fit.named += 1;
                    }
                }
                if let Some(idx) = duration {
                    match check {
                        DurationCheck::NginxTime => match rec.raw(idx) {
                            Some(v) if v.contains(&b'.') => fit.time_seen = true,
                            Some(b"-") | None => {}
                            Some(_) => fit.time_bad = true,
                        },
                        DurationCheck::Micros | DurationCheck::Seconds => {
                            fit.values.extend(rec.int(idx));
                        }
                        DurationCheck::None => {}
                    }
                }
            }
            if fit.parsed + (sample.len() - k - 1) < need {
                break;
            }
        }
        fit
    }

    /// Whether the layout reads the lines as what it claims. Its TLS protocol field
    /// holds protocol names in at least half of the lines it parsed (`TLSv1.x`,
    /// `SSLv2/3`, GnuTLS's `TLS1.x` or `-`; else a number or a word sits where the
    /// protocol would be, and another layout reads the lines better; a hostile line or
    /// two does not change the layout), and an appended duration looks like its kind
    /// ([`DurationCheck`]).
    fn plausible(&mut self, format: &Format, check: DurationCheck) -> bool {
        if format.role(Role::TlsProtocol).is_some() && self.named * 2 < self.parsed {
            return false;
        }
        if format.role(Role::Duration).is_none() {
            return true;
        }
        match check {
            DurationCheck::None => true,
            DurationCheck::NginxTime => self.time_seen && !self.time_bad,
            DurationCheck::Micros | DurationCheck::Seconds => {
                if self.values.is_empty() {
                    return false;
                }
                self.values.sort_unstable();
                let median = self.values.get(self.values.len() / 2).copied().unwrap_or(0);
                if check == DurationCheck::Micros {
                    median >= 50
                } else {
                    median <= 5
                }
            }
        }
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
    detect_with(lines, true)
}

/// [`detect`] with every candidate tried on every sampled line: the same outcome,
/// slower (what the fuzz target holds [`detect`] to).
#[doc(hidden)]
pub fn detect_unpruned(lines: &[&[u8]]) -> Option<Detection> {
    detect_with(lines, false)
}

/// [`detect`]; with `prune`, a candidate stops being tried on the sample once it can
/// no longer parse as many lines as the best so far, or as the first candidate that
/// parses the first line (it can then neither win nor tie, so the outcome is the
/// same). Without it a run's detection tried about two dozen formats on every sampled
/// line, most failing on each, and was most of the CPU time of a run over a short log.
fn detect_with(lines: &[&[u8]], prune: bool) -> Option<Detection> {
    let sample: Vec<&[u8]> = lines
        .iter()
        .copied()
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .collect();
    if sample.is_empty() {
        return None;
    }
    let nginx_hint = nginx_escapes(&sample);
    let candidates: Vec<(&'static str, Option<&'static str>, Format, DurationCheck)> = PRESETS
        .iter()
        .map(|(name, _)| (*name, *name, None))
        .chain(
            VARIANTS
                .iter()
                .map(|(label, text)| (*label, *text, Some(*text))),
        )
        .filter_map(|(name, spec, variant)| {
            let format = Format::compile(spec).ok()?;
            let check = DurationCheck::of(name, variant.is_some());
            Some((name, variant, format, check))
        })
        .collect();
    // How many lines a candidate parses (`None`: it reads them as something they are
    // not); below `need` when it stopped because it could not reach it.
    let count = |format: &Format, check: DurationCheck, need: usize| {
        let mut fit = Fit::of(format, check, &sample, need);
        if fit.parsed < need {
            return Some(fit.parsed);
        }
        fit.plausible(format, check).then_some(fit.parsed)
    };
    // A count the winner reaches, known before the loop: most logs are a preset or a
    // variant that parses the first line, and every other candidate then stops within
    // a few lines.
    // Full counts already taken (while looking for the floor), not taken again.
    let mut known: Vec<Option<Option<usize>>> = vec![None; candidates.len()];
    let mut floor = 0;
    if prune {
        let first = sample.first().copied().unwrap_or_default();
        for (i, (_, _, f, check)) in candidates.iter().enumerate() {
            if LineParser::new(f)
                .parse(first, &mut Record::new(f))
                .is_err()
            {
                continue;
            }
            let full = count(f, *check, 0);
            if let Some(slot) = known.get_mut(i) {
                *slot = Some(full);
            }
            if let Some(n) = full {
                floor = n;
                break;
            }
        }
    }
    let mut best: Option<(usize, bool, Detection)> = None;
    for (i, (name, variant, format, check)) in candidates.into_iter().enumerate() {
        let need = match &best {
            Some((p, _, _)) if prune => floor.max(*p),
            _ => floor,
        };
        let counted = match known.get(i).copied().flatten() {
            Some(full) => full,
            None => count(&format, check, need),
        };
        let Some(parsed) = counted else {
            continue;
        };
        if parsed == 0 || parsed < need {
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

    /// Pruning hopeless candidates changes no outcome: samples of every preset and
    /// variant the tests know, alone, mixed in several orders and with lines of no
    /// format, give the same detection (preset, parsed count) both ways.
    #[test]
    fn pruning_changes_no_detection() {
        let ssl_d = [SSL, b" 2585"].concat();
        let ssl_t = [SSL, b" 0"].concat();
        let timed = [SSL, b" 0.004"].concat();
        let up = [SSL, b" 3.004 0.500, 2.501 : 0.001"].concat();
        let combined_d = [COMBINED, b" 181000"].concat();
        let upc = [COMBINED, b" 0.015 0.012"].concat();
        let vhost: &[u8] = br#"www.example.org:443 2001:db8::1 - - [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
        let main: &[u8] = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.0" "203.0.113.9""#;
        let nginx: &[u8] = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET /\xFF HTTP/1.1" 200 512 "-" "a\x22b" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
        let noise: &[u8] = b"not a log line at all";
        let kinds: [&[u8]; 12] = [
            SSL,
            COMBINED,
            SSL_REQUEST,
            &ssl_d,
            &ssl_t,
            &timed,
            &up,
            &combined_d,
            &upc,
            vhost,
            main,
            nginx,
        ];
        let key = |d: Option<Detection>| d.map(|d| (d.preset, d.variant, d.parsed, d.sampled));
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut samples: Vec<Vec<&[u8]>> = kinds.iter().map(|k| vec![*k]).collect();
        for _ in 0..300 {
            let n = 1 + (seed % 9) as usize;
            let mut s = Vec::new();
            for _ in 0..n {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let pick = (seed % (kinds.len() as u64 + 2)) as usize;
                s.push(kinds.get(pick).copied().unwrap_or(noise));
            }
            samples.push(s);
        }
        for s in &samples {
            assert_eq!(
                key(detect_with(s, true)),
                key(detect_with(s, false)),
                "{:?}",
                s.iter()
                    .map(|l| String::from_utf8_lossy(l))
                    .collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn nginx_escapes_choose_nginx() {
        let l = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET /\xFF HTTP/1.1" 200 512 "-" "a\x22b" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
        assert_eq!(detect(&[l]).unwrap().preset, "nginx-ssl");
    }
}
