//! `--log-format auto`: pick the preset that parses the first lines of the input.

use crate::access::{LineParser, Record};
use crate::format::{Dialect, Format, PRESETS};

/// The outcome of detection.
#[derive(Debug, Clone)]
pub struct Detection {
    /// The preset's name.
    pub preset: &'static str,
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
    for (name, _) in PRESETS {
        let Ok(format) = Format::compile(name) else {
            continue;
        };
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
        let better = match &best {
            None => true,
            Some((p, fits, _)) => parsed > *p || (parsed == *p && dialect_fits && !fits),
        };
        if better {
            best = Some((
                parsed,
                dialect_fits,
                Detection {
                    preset: name,
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
    fn nginx_escapes_choose_nginx() {
        let l = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET /\xFF HTTP/1.1" 200 512 "-" "a\x22b" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
        assert_eq!(detect(&[l]).unwrap().preset, "nginx-ssl");
    }
}
