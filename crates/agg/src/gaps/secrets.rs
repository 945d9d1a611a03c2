//! Password hashes and `Authorization:` values in call text: found, never stored.

#[allow(unused_imports)]
use super::*;

pub(super) enum Secret {
    /// A hash prefix; whether it looks like a real hash.
    Hash(HashInfo, bool),
    Authorization,
}

/// The first password-hash prefix in `s` (recognised by `tlsgap_auth`), and whether
/// what follows looks like a hash. Redaction goes by the prefix alone; the `auth`
/// cause needs the plausible kind.
pub(super) fn find_hash(s: &[u8]) -> Option<(HashInfo, bool)> {
    tlsgap_auth::find_hash(s).map(|f| {
        let info = HashInfo {
            scheme: f.scheme,
            param: f.work(),
            only_entry: false,
        };
        (info, f.plausible)
    })
}

/// Whether the first quoted string of `args` that holds a hash is shown whole (not cut
/// by strace's `-s`) and holds one entry (one non-blank, non-comment line).
pub(super) fn only_entry(args: &[u8]) -> bool {
    let Some((text, cut)) = tlsgap_parser::strace::args(args)
        .filter_map(tlsgap_parser::strace::quoted)
        .find(|(t, _)| find_hash(t).is_some_and(|(_, plausible)| plausible))
    else {
        return false;
    };
    let entries = text
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .count();
    !cut && entries == 1
}

/// Whether a string (contents, decoded) is a secret.
pub(super) fn secret_in(s: &[u8]) -> Option<Secret> {
    if let Some((h, plausible)) = find_hash(s) {
        return Some(Secret::Hash(h, plausible));
    }
    if find_ci(s, b"authorization:") {
        return Some(Secret::Authorization);
    }
    None
}

/// The first plausible hash in the quoted strings of `src`: what [`redact_into`]
/// returns, without copying or decoding the strings that cannot hold one.
pub(super) fn hash_in(src: &[u8], scratch: &mut Vec<u8>) -> Option<HashInfo> {
    // `contains` on bytes is a word-at-a-time search: most calls stop here.
    if !(src.contains(&b'$') || src.contains(&b'{') || src.contains(&b'\\')) {
        return None;
    }
    if !may_hold_hash(src) {
        return None;
    }
    let mut i = 0;
    // Strings as `redact_into` splits them: from a quote to the next unescaped one.
    while let Some(p) = src.get(i..).and_then(|t| t.iter().position(|&c| c == b'"')) {
        i += p;
        let mut j = i + 1;
        let mut has_escape = false;
        // Whether the decoded string may hold a `$` or `{` (a hash prefix needs one).
        let mut maybe = false;
        while let Some(&c) = src.get(j) {
            match c {
                b'\\' => {
                    has_escape = true;
                    if matches!(src.get(j + 1), Some(b'x' | b'0'..=b'7' | b'$' | b'{')) {
                        maybe = true;
                    }
                    j += 2;
                }
                b'"' => break,
                b'$' | b'{' => {
                    maybe = true;
                    j += 1;
                }
                _ => j += 1,
            }
        }
        if maybe {
            let body = src.get(i + 1..j.min(src.len())).unwrap_or_default();
            let decoded: &[u8] = if has_escape {
                unescape_into(body, scratch);
                scratch
            } else {
                body
            };
            if let Some((h, true)) = find_hash(decoded) {
                return Some(h);
            }
        }
        i = j + 1;
    }
    None
}

/// Whether decoding the strings of `src` could give a hash prefix: a `$` before one
/// of `2a56yg1` (`$2y$`, `$apr1$`, `$5$`, `$6$`, `$y$`, `$gy$`, `$argon2`, `$1$`) or a
/// `{` before `S` (`{SHA}`, `{SSHA}`), where the byte after may come from an escape;
/// or an escape that decodes to `$` or `{`. Every `\` is looked at, paired or not, so
/// this never misses one that [`unescape_into`](tlsgap_parser::strace::unescape_into) would decode: binary data, dense with
/// escapes and stray `$`, mostly passes without being decoded.
pub(super) fn may_hold_hash(src: &[u8]) -> bool {
    // The byte after a `$` or `{` at `k - 1`, as decoded (a `\` there starts an escape).
    let next = |k: usize| match src.get(k) {
        Some(b'\\') => Some(escape_at(src, k).0),
        b => b.copied(),
    };
    let mut k = 0;
    while let Some(p) = src
        .get(k..)
        .and_then(|t| t.iter().position(|&b| matches!(b, b'$' | b'{' | b'\\')))
    {
        let Some(&b) = src.get(k + p) else { break };
        k += p + 1;
        let found = match b {
            b'$' => matches!(
                next(k),
                Some(b'2' | b'a' | b'5' | b'6' | b'y' | b'g' | b'1')
            ),
            b'{' => next(k) == Some(b'S'),
            // Only these can start an escape of `$` (`\44`, `\044`, `\444`, `\x24`) or
            // `{` (`\173`, `\573`, `\x7b`); most escapes of binary data stop here.
            _ => {
                matches!(
                    src.get(k),
                    Some(b'$' | b'{' | b'x' | b'0' | b'1' | b'4' | b'5')
                ) && matches!(escape_at(src, k - 1).0, b'$' | b'{')
            }
        };
        if found {
            return true;
        }
    }
    false
}

/// Copy `src` into `out` up to about `limit` bytes of `out`, with every quoted string
/// that holds a secret replaced by a placeholder. Scans every string of `src` (also
/// past the limit) and returns the first hash seen.
pub(super) fn redact_into(
    src: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    scratch: &mut Vec<u8>,
) -> Option<HashInfo> {
    let mut hash = None;
    let mut i = 0;
    let mut cut = false;
    while i < src.len() {
        let Some(&b) = src.get(i) else { break };
        if b != b'"' {
            if out.len() < limit {
                out.push(b);
                i += 1;
            } else {
                cut = true;
                // Nothing more is shown: jump to the next string to scan it.
                match src.get(i..).and_then(|t| t.iter().position(|&c| c == b'"')) {
                    Some(p) => i += p,
                    None => break,
                }
            }
            continue;
        }
        // A quoted string: find its end, skipping escapes.
        let mut j = i + 1;
        let mut has_escape = false;
        while let Some(&c) = src.get(j) {
            if c == b'\\' {
                has_escape = true;
                j += 2;
                continue;
            }
            if c == b'"' {
                break;
            }
            j += 1;
        }
        let body = src.get(i + 1..j.min(src.len())).unwrap_or_default();
        let decoded: &[u8] = if has_escape {
            unescape_into(body, scratch);
            scratch
        } else {
            body
        };
        let secret = if decoded.contains(&b'$') || decoded.contains(&b'{') || decoded.len() >= 14 {
            secret_in(decoded)
        } else {
            None
        };
        if let (None, Some(Secret::Hash(h, true))) = (hash, &secret) {
            hash = Some(*h);
        }
        if out.len() < limit {
            match secret {
                Some(s) => {
                    let what = match s {
                        Secret::Hash(h, _) => h.to_string(),
                        Secret::Authorization => "Authorization header".to_string(),
                    };
                    out.extend_from_slice(
                        format!("\"<redacted: {what}, {} bytes>\"", decoded.len()).as_bytes(),
                    );
                }
                None => {
                    let whole = src.get(i..(j + 1).min(src.len())).unwrap_or_default();
                    let room = limit.saturating_sub(out.len());
                    if whole.len() <= room {
                        out.extend_from_slice(whole);
                    } else {
                        // Cut on a character, not inside an escape.
                        let k = escape_boundary(whole, room);
                        out.extend_from_slice(whole.get(..k).unwrap_or_default());
                        out.extend_from_slice(b"\"");
                        cut = true;
                    }
                }
            }
        } else {
            cut = true;
        }
        i = j + 1;
    }
    if cut {
        out.extend_from_slice(b"...");
    }
    hash
}

/// The largest prefix length of a quoted string (opening quote included) not
/// longer than `max` that does not end inside an escape (`\n`, `\312`, `\x41`).
pub(super) fn escape_boundary(s: &[u8], max: usize) -> usize {
    let mut i = 1;
    let mut last = 1.min(max);
    while i < s.len() {
        let len = match (s.get(i), s.get(i + 1)) {
            (Some(b'\\'), Some(b'0'..=b'7')) => {
                2 + s
                    .get(i + 2..)
                    .unwrap_or_default()
                    .iter()
                    .take(2)
                    .take_while(|c| (b'0'..=b'7').contains(*c))
                    .count()
            }
            (Some(b'\\'), Some(b'x')) => 4,
            (Some(b'\\'), _) => 2,
            _ => 1,
        };
        if i + len > max {
            break;
        }
        i += len;
        last = i;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_details() {
        let h = |s: &[u8]| find_hash(s).map(|(h, plausible)| (h.to_string(), plausible));
        assert_eq!(
            h(b"alice:$2y$12$abcdefghij"),
            Some(("bcrypt cost 12".into(), true))
        );
        assert_eq!(h(b"bob:$apr1$xyz$abc"), Some(("apr1 (MD5)".into(), true)));
        assert_eq!(h(b"c:{SHA}abc="), Some(("{SHA} (SHA-1)".into(), true)));
        assert_eq!(
            h(b"d:$6$rounds=5000$salt$h"),
            Some(("SHA-512 crypt rounds 5000".into(), true))
        );
        assert_eq!(h(b"e:$y$j9T$x"), Some(("yescrypt".into(), true)));
        assert_eq!(h(b"$argon2id$v=19$m=65536"), Some(("argon2".into(), true)));
        assert_eq!(h(b"f:$1$salt$h"), Some(("MD5 crypt".into(), true)));
        assert_eq!(h(b"g:$5$saltsalt$h"), Some(("SHA-256 crypt".into(), true)));
        // Prefixes alone: redacted, but not evidence of password checking.
        assert_eq!(h(b"echo $1$2"), Some(("MD5 crypt".into(), false)));
        assert_eq!(h(b"{SHA}"), Some(("{SHA} (SHA-1)".into(), false)));
        assert_eq!(h(b"price: $5 or {x}"), None);
    }

    #[test]
    fn redaction_replaces_whole_strings_and_scans_past_the_limit() {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let src = br#"15, "alice:$2y$12$abcdefghijklmnopqrstuv"..., 4096"#;
        let h = redact_into(src, &mut out, 200, &mut scratch);
        assert_eq!(h.unwrap().param, Some(12));
        let text = String::from_utf8(out.clone()).unwrap();
        assert_eq!(
            text,
            r#"15, "<redacted: bcrypt cost 12, 35 bytes>"..., 4096"#
        );
        // Hex-escaped (-xx) hashes are found too.
        out.clear();
        let src = br#""\x24\x32\x79\x24\x31\x30\x24\x61\x62""#;
        assert!(redact_into(src, &mut out, 200, &mut scratch).is_some());
        assert!(!String::from_utf8_lossy(&out).contains("x24"));
        // Authorization headers.
        out.clear();
        let src = br#"8, "GET / HTTP/1.1\r\nauthorization: Basic YWxpY2U6c2VjcmV0\r\n", 60"#;
        redact_into(src, &mut out, 200, &mut scratch);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("<redacted: Authorization header"), "{text}");
        assert!(!text.contains("YWxp"));
        // Past the limit: not shown, still scanned.
        out.clear();
        let mut long = b"\"".to_vec();
        long.extend(std::iter::repeat_n(b'a', 300));
        long.extend_from_slice(b"\", \"x:$2b$10$abc\"");
        let h = redact_into(&long, &mut out, 50, &mut scratch);
        assert_eq!(h.unwrap().param, Some(10));
        assert!(out.len() < 60);
        assert!(out.ends_with(b"..."));
    }

    /// `hash_in` (every call) must find what `redact_into` (calls shown) would.
    #[test]
    fn hash_in_agrees_with_redact_into() {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let fixed: [&[u8]; 12] = [
            br#"15, "alice:$2y$12$abcdefghijklmnopqrstuv"..., 4096"#,
            br#""\x24\x32\x79\x24\x31\x30\x24\x61\x62""#,
            br#""\44\62y$10$abc", "$1$2""#,
            br#""\0442y$10$abcd""#,
            br#""\4442y$10$abcd""#,
            br#""$\62y$10$abcd""#,
            br#""\$2y$10$abcd""#,
            br#""\\$2y$10$abcd""#,
            br#""x{SHA}abcd", "{\123SHA}abc""#,
            br#"[{iov_base="\27\3$\3\1{\32_", iov_len=5}], "$6$rounds=5000$abcd$""#,
            br#""\x7B\x53HA}abcd""#,
            br#""unterminated $5$abcdef"#,
        ];
        for src in fixed {
            out.clear();
            let want = redact_into(src, &mut out, 200, &mut scratch);
            assert_eq!(
                hash_in(src, &mut scratch),
                want,
                "{}",
                String::from_utf8_lossy(src)
            );
        }
        // Random mixes of the pieces hashes, escapes and strings are made of.
        let pieces: Vec<&[u8]> = br#""|\|$|{|}|2y$|12$|abcdefghij|apr1$|5$|6$|y$|gy$|argon2id$|1$|SHA}|SSHA}|\x24|\44|\173|\x7b|\0|\n|, |\x32|\62|\123|\x"#
            .split(|&b| b == b'|')
            .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut found = 0;
        for _ in 0..20_000 {
            let mut src = Vec::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = (seed % 16) as usize;
            let mut r = seed;
            for _ in 0..n {
                r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                src.extend_from_slice(pieces[(r >> 33) as usize % pieces.len()]);
            }
            out.clear();
            let want = redact_into(&src, &mut out, 200, &mut scratch);
            found += usize::from(want.is_some());
            assert_eq!(
                hash_in(&src, &mut scratch),
                want,
                "{}",
                String::from_utf8_lossy(&src)
            );
        }
        assert!(found > 100, "{found}");
    }

    #[test]
    fn cuts_strings_between_escapes() {
        let s = br#""ab\305\256\ncd""#;
        assert_eq!(escape_boundary(s, 4), 3);
        assert_eq!(escape_boundary(s, 5), 3, "not inside \\305");
        assert_eq!(escape_boundary(s, 7), 7);
        assert_eq!(escape_boundary(s, 12), 11);
        assert_eq!(escape_boundary(br#""\x41\x42""#, 6), 5);
        assert_eq!(escape_boundary(b"\"", 0), 0);
    }
}
