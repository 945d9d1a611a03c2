//! When no preset fits: infer a format from the first lines, from what their tokens look
//! like (addresses, bracketed times, quoted requests and strings, status codes, numbers,
//! TLS protocol and cipher names), and give it as a `LogFormat` line to paste.
//!
//! ```
//! use tlsgap_parser::infer::infer;
//!
//! let l: &[u8] = br#"[23/Oct/2025:11:08:24 +0300] 192.0.2.7 "GET / HTTP/1.1" 200 TLSv1.3 TLS_AES_128_GCM_SHA256 host-a"#;
//! let i = infer(&[l, l]).unwrap();
//! assert_eq!(i.format_text, r#"%t %h "%r" %>s %{SSL_PROTOCOL}x %{SSL_CIPHER}x %{field7}i"#);
//! assert_eq!((i.fits, i.sampled), (2, 2));
//! assert_eq!(i.tls_fields, Some((5, 6)));
//! ```
//!
//! The rule: lines are split into tokens at single spaces, a `[...]` or a `"..."` (with
//! backslash escapes) being one token; the most common token count wins; each column is
//! classified by what most of its values look like (a lone `-` fits anything). Columns
//! nothing recognises become opaque `%{fieldN}i` fields (quoted when the values are), so
//! the line always compiles; a column of decimals (nginx's `$request_time`) makes the
//! result an nginx `log_format` instead. The guess is only a starting point: the fit count
//! says how many sample lines it parses.

use crate::access::{LineParser, Record};
use crate::format::Format;

/// What [`infer`] found.
#[derive(Debug, Clone)]
pub struct Inferred {
    /// The format text (Apache `LogFormat` syntax, or nginx's when `nginx` is set).
    pub format_text: String,
    /// Whether the text is nginx `log_format` syntax.
    pub nginx: bool,
    /// The compiled format.
    pub format: Format,
    /// How many of the sampled lines it parses.
    pub fits: usize,
    /// How many non-empty lines were sampled.
    pub sampled: usize,
    /// The 1-based field positions of the TLS protocol and cipher, when found.
    pub tls_fields: Option<(usize, usize)>,
}

impl Inferred {
    /// The line to paste into the server's configuration (and `--log-format`).
    pub fn directive(&self) -> String {
        if self.nginx {
            format!("log_format inferred '{}';", self.format_text)
        } else {
            format!(
                "LogFormat \"{}\" inferred",
                self.format_text.replace('"', "\\\"")
            )
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Dash,
    Addr,
    HostPort,
    Host,
    Time,
    Request,
    Quoted,
    QuotedDash,
    Int,
    Float,
    Protocol,
    Cipher,
    Other,
}

fn tokens(line: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < line.len() {
        let start = i;
        match line[i] {
            b'"' => {
                i += 1;
                while i < line.len() && line[i] != b'"' {
                    i += if line[i] == b'\\' { 2 } else { 1 };
                }
                if i >= line.len() {
                    return None;
                }
                i += 1;
            }
            b'[' => {
                while i < line.len() && line[i] != b']' {
                    i += 1;
                }
                if i >= line.len() {
                    return None;
                }
                i += 1;
            }
            _ => {
                while i < line.len() && line[i] != b' ' {
                    i += 1;
                }
            }
        }
        if start == i {
            return None;
        }
        out.push(&line[start..i]);
        // One space between fields; anything else is not a layout this rule reads.
        match line.get(i) {
            None => {}
            Some(b' ') if i + 1 < line.len() => i += 1,
            _ => return None,
        }
    }
    Some(out)
}

fn is_addr(t: &[u8]) -> bool {
    let Ok(s) = std::str::from_utf8(t) else {
        return false;
    };
    s.parse::<std::net::IpAddr>().is_ok()
}

fn is_host(t: &[u8]) -> bool {
    t.contains(&b'.')
        && t.iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        && t.iter().any(u8::is_ascii_alphabetic)
}

fn is_time(t: &[u8]) -> bool {
    // `[23/Oct/2025:11:08:24 +0300]`
    t.len() == 28 && t.first() == Some(&b'[') && t.get(3) == Some(&b'/') && t.get(21) == Some(&b' ')
}

fn is_request(inner: &[u8]) -> bool {
    let mut parts = inner.split(|&b| b == b' ');
    let method = parts.next().unwrap_or(b"");
    let target = parts.next().unwrap_or(b"");
    !method.is_empty()
        && method.iter().all(u8::is_ascii_uppercase)
        && (target.starts_with(b"/") || target == b"*" || target.contains(&b':'))
}

fn is_protocol(t: &[u8]) -> bool {
    matches!(
        t,
        b"TLSv1" | b"TLSv1.1" | b"TLSv1.2" | b"TLSv1.3" | b"SSLv3" | b"SSLv2"
    )
}

fn is_cipher(t: &[u8]) -> bool {
    let shape = t.len() >= 6
        && t.iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_'));
    let words = [
        &b"AES"[..],
        b"CHACHA20",
        b"RC4",
        b"DES",
        b"CAMELLIA",
        b"ARIA",
        b"NULL",
        b"SEED",
        b"IDEA",
        b"GOST",
        b"SM4",
    ];
    shape && words.iter().any(|w| t.windows(w.len()).any(|x| x == *w))
}

fn kind(t: &[u8]) -> Kind {
    if t == b"-" {
        return Kind::Dash;
    }
    if let Some(inner) = t.strip_prefix(b"\"").and_then(|r| r.strip_suffix(b"\"")) {
        return if is_request(inner) {
            Kind::Request
        } else if inner == b"-" || inner.is_empty() {
            Kind::QuotedDash
        } else {
            Kind::Quoted
        };
    }
    if is_time(t) {
        return Kind::Time;
    }
    if is_protocol(t) {
        return Kind::Protocol;
    }
    if is_cipher(t) {
        return Kind::Cipher;
    }
    if is_addr(t) {
        return Kind::Addr;
    }
    if let Some(colon) = t.iter().rposition(|&b| b == b':') {
        let (host, port) = (&t[..colon], &t[colon + 1..]);
        if !port.is_empty()
            && port.iter().all(u8::is_ascii_digit)
            && (is_host(host) || is_addr(host.trim_ascii_start()))
        {
            return Kind::HostPort;
        }
    }
    if !t.is_empty() && t.iter().all(u8::is_ascii_digit) {
        return Kind::Int;
    }
    if t.iter().filter(|&&b| b == b'.').count() == 1
        && t.iter().all(|b| b.is_ascii_digit() || *b == b'.')
        && t.len() > 1
    {
        return Kind::Float;
    }
    if is_host(t) {
        return Kind::Host;
    }
    Kind::Other
}

/// The kind most values of a column have; `-` counts for every kind, and a column of
/// dashes only is `Dash`.
fn column_kind(values: &[&[u8]]) -> (Kind, Vec<Kind>) {
    let kinds: Vec<Kind> = values.iter().map(|v| kind(v)).collect();
    let mut best = (Kind::Dash, 0usize);
    for k in [
        Kind::Time,
        Kind::Request,
        Kind::Protocol,
        Kind::Cipher,
        Kind::Addr,
        Kind::HostPort,
        Kind::Float,
        Kind::Int,
        Kind::Host,
        Kind::Quoted,
        Kind::QuotedDash,
        Kind::Other,
    ] {
        let n = kinds.iter().filter(|&&x| x == k).count();
        if n > best.1 {
            best = (k, n);
        }
    }
    // Quoted dashes among quoted strings are just empty values.
    if best.0 == Kind::QuotedDash && kinds.contains(&Kind::Quoted) {
        best.0 = Kind::Quoted;
    }
    // Ints among floats are floats written without a fraction.
    if best.0 == Kind::Int && kinds.contains(&Kind::Float) {
        best.0 = Kind::Float;
    }
    (best.0, kinds)
}

fn looks_like_user_agent(values: &[&[u8]]) -> bool {
    values.iter().any(|v| {
        let s = v.strip_prefix(b"\"").unwrap_or(v);
        s.windows(8).any(|w| w == b"Mozilla/")
            || s.windows(5).any(|w| w == b"curl/")
            || s.iter()
                .position(|&b| b == b'/')
                .is_some_and(|slash| slash > 1 && s.get(slash + 1).is_some_and(u8::is_ascii_digit))
    })
}

/// The 1-based columns of the TLS protocol and its cipher: the cipher right after the
/// protocol (or a column of dashes there: a `- -` pair of plain-HTTP lines), else the
/// first column of cipher names anywhere on the line (nginx logs may put
/// `$ssl_protocol` and `$ssl_cipher` far apart). `None` without both.
fn tls_columns(columns: &[(Kind, Vec<&[u8]>)]) -> Option<(usize, usize)> {
    let protocol = columns.iter().position(|(k, _)| *k == Kind::Protocol)?;
    let next = columns.get(protocol + 1).map(|(k, _)| *k);
    let cipher = if next == Some(Kind::Cipher) {
        protocol + 1
    } else {
        match columns.iter().position(|(k, _)| *k == Kind::Cipher) {
            Some(c) => c,
            None if next == Some(Kind::Dash) => protocol + 1,
            None => return None,
        }
    };
    Some((protocol + 1, cipher + 1))
}

/// Infer a format from `lines` (see the module docs); `None` when the lines have no
/// common layout this rule can read.
pub fn infer(lines: &[&[u8]]) -> Option<Inferred> {
    let sample: Vec<&[u8]> = lines
        .iter()
        .copied()
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .collect();
    let split: Vec<Vec<&[u8]>> = sample.iter().filter_map(|l| tokens(l)).collect();
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for t in &split {
        match counts.iter_mut().find(|(n, _)| *n == t.len()) {
            Some((_, c)) => *c += 1,
            None => counts.push((t.len(), 1)),
        }
    }
    let width = counts.iter().max_by_key(|(n, c)| (*c, *n))?.0;
    if width < 2 {
        return None;
    }
    let rows: Vec<&Vec<&[u8]>> = split.iter().filter(|t| t.len() == width).collect();
    let columns: Vec<(Kind, Vec<&[u8]>)> = (0..width)
        .map(|c| {
            let values: Vec<&[u8]> = rows.iter().map(|r| r[c]).collect();
            (column_kind(&values).0, values)
        })
        .collect();
    let nginx = columns.iter().any(|(k, _)| *k == Kind::Float);
    let mut out: Vec<String> = Vec::new();
    let mut seen_addr = false;
    let mut seen_time = false;
    let mut seen_request = false;
    let mut seen_status = false;
    let mut seen_bytes = false;
    let mut quoted_after_status = 0;
    let mut seen_duration = false;
    let tls = tls_columns(&columns);
    let dashes_before_time = columns
        .iter()
        .take_while(|(k, _)| *k != Kind::Time)
        .filter(|(k, _)| matches!(k, Kind::Dash | Kind::Other))
        .count();
    let mut dash_seen = 0;
    for (i, (k, values)) in columns.iter().enumerate() {
        let n = i + 1;
        let opaque = |quoted: bool| -> String {
            match (nginx, quoted) {
                (true, true) => format!("\"$http_x_field{n}\""),
                (true, false) => format!("$http_x_field{n}"),
                (false, true) => format!("\"%{{field{n}}}i\""),
                (false, false) => format!("%{{field{n}}}i"),
            }
        };
        let pick = |apache: &str, ngx: &str| if nginx { ngx } else { apache }.to_string();
        let field = match k {
            Kind::Time if !seen_time => {
                seen_time = true;
                pick("%t", "[$time_local]")
            }
            Kind::Addr if !seen_addr => {
                seen_addr = true;
                pick("%h", "$remote_addr")
            }
            Kind::HostPort => pick("%v:%p", "$host:$server_port"),
            Kind::Host if !seen_addr && !seen_time => pick("%v", "$host"),
            Kind::Request if !seen_request => {
                seen_request = true;
                pick("\"%r\"", "\"$request\"")
            }
            Kind::Int
                if seen_request
                    && !seen_status
                    && values
                        .iter()
                        .all(|v| v.len() == 3 && (b'1'..=b'5').contains(&v[0])) =>
            {
                seen_status = true;
                pick("%>s", "$status")
            }
            Kind::Int | Kind::Dash if seen_status && !seen_bytes => {
                seen_bytes = true;
                pick("%b", "$body_bytes_sent")
            }
            Kind::Protocol => pick("%{SSL_PROTOCOL}x", "$ssl_protocol"),
            Kind::Cipher | Kind::Dash if tls.is_some_and(|(_, c)| c == n) => {
                pick("%{SSL_CIPHER}x", "$ssl_cipher")
            }
            Kind::Dash | Kind::Other if !seen_time && seen_addr && dash_seen < 2 => {
                dash_seen += 1;
                if dashes_before_time >= 2 && dash_seen == 1 {
                    pick("%l", "-")
                } else {
                    pick("%u", "$remote_user")
                }
            }
            Kind::Quoted | Kind::QuotedDash if seen_status => {
                quoted_after_status += 1;
                if quoted_after_status == 1 && !looks_like_user_agent(values) {
                    pick("\"%{Referer}i\"", "\"$http_referer\"")
                } else if looks_like_user_agent(values) {
                    pick("\"%{User-Agent}i\"", "\"$http_user_agent\"")
                } else {
                    opaque(true)
                }
            }
            Kind::Float if !seen_duration => {
                seen_duration = true;
                pick("%T", "$request_time")
            }
            Kind::Int if seen_status && !seen_duration => {
                seen_duration = true;
                let mut v: Vec<u64> = values
                    .iter()
                    .filter_map(|v| std::str::from_utf8(v).ok()?.parse().ok())
                    .collect();
                v.sort_unstable();
                let median = v.get(v.len() / 2).copied().unwrap_or(0);
                let max = v.last().copied().unwrap_or(0);
                if median >= 50 {
                    pick("%D", "$request_length")
                } else if max >= 60 {
                    // Mostly small, some a minute or more: milliseconds (a password
                    // check of 188 ms among static files of 0-1 ms), not seconds.
                    pick("%{ms}T", "$request_time")
                } else {
                    pick("%T", "$request_time")
                }
            }
            Kind::Quoted | Kind::QuotedDash | Kind::Request => opaque(true),
            _ => opaque(false),
        };
        out.push(field);
    }
    let format_text = out.join(" ");
    let spec = if nginx {
        format!("log_format inferred '{format_text}';")
    } else {
        format!(
            "LogFormat \"{}\" inferred",
            format_text.replace('"', "\\\"")
        )
    };
    let format = Format::compile(&spec).ok()?;
    let mut parser = LineParser::new(&format);
    let mut rec = Record::new(&format);
    let fits = sample
        .iter()
        .filter(|l| parser.parse(l, &mut rec).is_ok())
        .count();
    Some(Inferred {
        format_text,
        nginx,
        format,
        fits,
        sampled: sample.len(),
        tls_fields: tls,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Role;

    #[test]
    fn a_reordered_combined_with_tls_in_the_middle() {
        let lines: Vec<&[u8]> = vec![
            br#"2001:db8::7 [23/Oct/2025:11:08:24 +0300] TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 "GET /a HTTP/1.1" 200 5120 "-" "Mozilla/5.0 (X11)" 2585"#,
            br#"192.0.2.8 [23/Oct/2025:11:08:25 +0300] TLSv1.3 TLS_AES_256_GCM_SHA384 "POST /login HTTP/2.0" 302 - "https://example.org/" "curl/8.5.0" 912"#,
            br#"192.0.2.9 [23/Oct/2025:11:08:26 +0300] - - "GET / HTTP/1.1" 404 17 "-" "Go-http-client/1.1" 77"#,
        ];
        let i = infer(&lines).unwrap();
        assert_eq!(
            i.format_text,
            r#"%h %t %{SSL_PROTOCOL}x %{SSL_CIPHER}x "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D"#
        );
        assert_eq!((i.fits, i.sampled), (3, 3));
        assert_eq!(i.tls_fields, Some((3, 4)));
        assert!(i.format.has(Role::TlsCipher) && i.format.has(Role::Duration));
        assert!(i.directive().starts_with("LogFormat \"%h %t "));
    }

    /// nginx with `$ssl_protocol` third and `$ssl_cipher` last (lines as nginx 1.22.1
    /// wrote them, the second a plain-HTTP request).
    #[test]
    fn protocol_and_cipher_apart() {
        let lines: Vec<&[u8]> = vec![
            br#"127.0.0.1 [28/Nov/2026:03:21:06 +0000] TLSv1.2 "GET / HTTP/1.1" 200 6 "curl-a" ECDHE-RSA-AES128-GCM-SHA256"#,
            br#"127.0.0.1 [28/Nov/2026:03:21:06 +0000] - "GET / HTTP/1.1" 200 6 "plain-ua" -"#,
            br#"::1 [28/Nov/2026:03:21:07 +0000] TLSv1.3 "GET /x HTTP/1.1" 200 6 "h2-client" TLS_AES_128_GCM_SHA256"#,
        ];
        let i = infer(&lines).unwrap();
        assert_eq!(
            i.format_text,
            r#"%h %t %{SSL_PROTOCOL}x "%r" %>s %b "%{Referer}i" %{SSL_CIPHER}x"#
        );
        assert_eq!(i.tls_fields, Some((3, 8)));
        assert_eq!((i.fits, i.sampled), (3, 3));
        // A protocol without any cipher column names no pair.
        let lines: Vec<&[u8]> =
            vec![br#"127.0.0.1 [28/Nov/2026:03:21:06 +0000] TLSv1.2 "GET / HTTP/1.1" 200 6"#];
        assert_eq!(infer(&lines).unwrap().tls_fields, None);
    }

    #[test]
    fn combined_with_ident_user_and_unknown_columns() {
        let lines: Vec<&[u8]> = vec![
            br#"10.0.0.1 - alice [23/Oct/2025:11:08:24 +0000] "GET / HTTP/1.1" 200 12 "-" "Mozilla/5.0" shard-7 "x y""#,
            br#"10.0.0.2 - - [23/Oct/2025:11:08:24 +0000] "GET /b HTTP/1.1" 200 12 "-" "Mozilla/5.0" shard-3 "-""#,
        ];
        let i = infer(&lines).unwrap();
        assert_eq!(
            i.format_text,
            r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{field10}i "%{field11}i""#
        );
        assert_eq!(i.fits, 2);
        assert_eq!(i.tls_fields, None);
    }

    #[test]
    fn nginx_request_time_gives_a_log_format() {
        let lines: Vec<&[u8]> = vec![
            br#"192.0.2.7 - - [23/Oct/2025:11:08:24 +0000] "GET / HTTP/1.1" 200 512 0.004 TLSv1.3 TLS_AES_128_GCM_SHA256"#,
            br#"192.0.2.7 - - [23/Oct/2025:11:08:24 +0000] "GET / HTTP/1.1" 200 512 1.250 TLSv1.2 AES128-SHA"#,
        ];
        let i = infer(&lines).unwrap();
        assert!(i.nginx);
        assert_eq!(
            i.format_text,
            r#"$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent $request_time $ssl_protocol $ssl_cipher"#
        );
        assert_eq!(i.fits, 2);
        assert!(i.directive().starts_with("log_format inferred '"));
    }

    #[test]
    fn a_second_number_is_not_a_second_duration() {
        let l: &[u8] = br#"127.0.0.1 - - [21/Nov/2026:22:13:07 +0000] "GET /?id=1 HTTP/1.1" 200 52 "-" "Mozilla/5.0 (X11)" TLSv1 ECDHE-RSA-AES256-SHA 210 11102"#;
        let i = infer(&[l]).unwrap();
        assert!(
            i.format_text.ends_with("%{SSL_CIPHER}x %D %{field13}i"),
            "{}",
            i.format_text
        );
        assert_eq!(i.fits, 1);
    }

    /// `%{ms}T`: public requests of 0-1 ms and Basic-auth ones of ~190 ms (bcrypt
    /// cost 12), as Apache 2.4.71 wrote them; `%T` stays `%T`.
    #[test]
    fn milliseconds_are_not_seconds() {
        let ms: Vec<&[u8]> = vec![
            br#"127.0.0.1 - - [28/Nov/2026:03:19:15 +0000] "GET /public/ HTTP/1.1" 200 6 "-" "curl/7.88.1" TLSv1.3 TLS_AES_256_GCM_SHA384 0"#,
            br#"127.0.0.1 - bc12user [28/Nov/2026:03:19:15 +0000] "GET /private/ HTTP/1.1" 200 8 "-" "curl/7.88.1" TLSv1.3 TLS_AES_256_GCM_SHA384 188"#,
            br#"127.0.0.1 - - [28/Nov/2026:03:19:16 +0000] "GET /public/ HTTP/1.1" 200 6 "-" "curl/7.88.1" TLSv1.3 TLS_AES_256_GCM_SHA384 1"#,
        ];
        let i = infer(&ms).unwrap();
        assert!(
            i.format_text.ends_with("%{SSL_CIPHER}x %{ms}T"),
            "{}",
            i.format_text
        );
        let s: Vec<&[u8]> = vec![
            br#"127.0.0.1 - - [28/Nov/2026:03:19:15 +0000] "GET /public/ HTTP/1.1" 200 6 "-" "curl/7.88.1" TLSv1.3 TLS_AES_256_GCM_SHA384 0"#,
            br#"127.0.0.1 - bob [28/Nov/2026:03:19:15 +0000] "GET /report HTTP/1.1" 200 8 "-" "curl/7.88.1" TLSv1.3 TLS_AES_256_GCM_SHA384 12"#,
        ];
        let i = infer(&s).unwrap();
        assert!(
            i.format_text.ends_with("%{SSL_CIPHER}x %T"),
            "{}",
            i.format_text
        );
    }

    #[test]
    fn nothing_common_gives_nothing() {
        assert!(infer(&[b"hello"]).is_none());
        assert!(infer(&[]).is_none());
        // Unbalanced quotes and double spaces are not a layout.
        assert!(infer(&[br#"a "b c"#, b"x  y"]).is_none());
    }
}
