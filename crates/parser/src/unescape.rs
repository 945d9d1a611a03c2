//! Undo the escaping servers apply to logged values, lazily: values without a
//! backslash are returned borrowed.

use std::borrow::Cow;

use crate::format::Escaping;

/// The first `"` in `s` at or after `from` that no backslash escapes: one after an
/// even run of `\\` (an odd run escapes it), the run counted back no further than
/// `start` (where the quoted value begins). Found by searching for quotes, not by
/// walking the escapes (strace strings of binary data hold one every byte or two).
pub(crate) fn unescaped_quote(s: &[u8], start: usize, from: usize) -> Option<usize> {
    let mut from = from;
    loop {
        let q = from + memchr::memchr(b'"', s.get(from..)?)?;
        let run = s
            .get(start..q)?
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if run % 2 == 0 {
            return Some(q);
        }
        from = q + 1;
    }
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn hex_pair(b: &[u8]) -> Option<u8> {
    match b {
        [h, l, ..] => Some(hex(*h)? << 4 | hex(*l)?),
        _ => None,
    }
}

/// The bytes `raw` stands for under `escaping`.
pub fn unescape(raw: &[u8], escaping: Escaping) -> Cow<'_, [u8]> {
    if escaping == Escaping::None || memchr::memchr(b'\\', raw).is_none() {
        return Cow::Borrowed(raw);
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        if b != b'\\' {
            out.push(b);
            i += 1;
            continue;
        }
        let next = raw.get(i + 1).copied();
        let rest = raw.get(i + 2..).unwrap_or(&[]);
        let (bytes, used): (Option<u8>, usize) = match (escaping, next) {
            (_, Some(b'x')) if hex_pair(rest).is_some() => (hex_pair(rest), 4),
            (Escaping::Apache | Escaping::NginxJson, Some(b'"')) => (Some(b'"'), 2),
            (Escaping::Apache | Escaping::NginxJson, Some(b'\\')) => (Some(b'\\'), 2),
            (Escaping::Apache | Escaping::NginxJson, Some(b'n')) => (Some(b'\n'), 2),
            (Escaping::Apache | Escaping::NginxJson, Some(b'r')) => (Some(b'\r'), 2),
            (Escaping::Apache | Escaping::NginxJson, Some(b't')) => (Some(b'\t'), 2),
            (Escaping::Apache | Escaping::NginxJson, Some(b'b')) => (Some(8), 2),
            (Escaping::Apache, Some(b'v')) => (Some(11), 2),
            (Escaping::NginxJson, Some(b'f')) => (Some(12), 2),
            (Escaping::NginxJson, Some(b'/')) => (Some(b'/'), 2),
            (Escaping::NginxJson, Some(b'u')) => {
                if let Some(cp) = json_u(rest) {
                    let mut buf = [0u8; 4];
                    let c = char::from_u32(cp).unwrap_or('\u{fffd}');
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    i += 6;
                    continue;
                }
                (None, 1)
            }
            _ => (None, 1),
        };
        match bytes {
            Some(v) => out.push(v),
            None => out.push(b'\\'),
        }
        i += used;
    }
    Cow::Owned(out)
}

fn json_u(b: &[u8]) -> Option<u32> {
    let d = b.get(..4)?;
    let mut v = 0u32;
    for &c in d {
        v = v << 4 | u32::from(hex(c)?);
    }
    Some(v)
}

/// Text for output: valid UTF-8 is kept, every byte that is not part of valid UTF-8
/// becomes the four characters `\xHH` (the export contract).
pub fn lossless_text(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len() + 8);
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                for b in chunk.invalid() {
                    out.push_str(&format!("\\x{b:02X}"));
                }
            }
            Cow::Owned(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apache_escapes() {
        let raw = br#"a\"b\\c\x1b\xc3\xa9\n\v\q"#;
        let v = unescape(raw, Escaping::Apache);
        assert_eq!(&*v, b"a\"b\\c\x1b\xc3\xa9\n\x0b\\q");
        assert!(matches!(
            unescape(b"plain", Escaping::Apache),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn nginx_default_only_knows_hex() {
        let v = unescape(br#"\x22quoted\x22 \x5C \xFF \n"#, Escaping::NginxDefault);
        assert_eq!(&*v, b"\"quoted\" \\ \xff \\n");
    }

    #[test]
    fn nginx_json() {
        let v = unescape(br#"\"\\\u0001\u00e9\/\t"#, Escaping::NginxJson);
        assert_eq!(&*v, "\"\\\u{1}\u{e9}/\t".as_bytes());
    }

    #[test]
    fn truncated_escapes_do_not_panic() {
        for raw in [&b"\\"[..], b"\\x", b"\\x4", b"\\u12", b"abc\\"] {
            for e in [
                Escaping::Apache,
                Escaping::NginxDefault,
                Escaping::NginxJson,
                Escaping::None,
            ] {
                let _ = unescape(raw, e);
            }
        }
    }

    #[test]
    fn lossless_text_marks_invalid_bytes() {
        assert_eq!(lossless_text(b"/a\xffb"), "/a\\xFFb");
        assert_eq!(lossless_text("é".as_bytes()), "é");
    }
}
