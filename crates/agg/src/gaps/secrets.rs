//! Password hashes and `Authorization:` values in call text: found, never stored.

#[allow(unused_imports)]
use super::*;

pub(super) enum Secret {
    /// A hash prefix; whether it looks like a real hash.
    Hash(HashInfo, bool),
    Authorization,
}

/// The first password-hash prefix in `s`, and whether what follows looks like a hash
/// (salt characters after it) rather than, say, `$1$2` in a shell script. Redaction
/// goes by the prefix alone; the `auth` cause needs the plausible kind.
pub(super) fn find_hash(s: &[u8]) -> Option<(HashInfo, bool)> {
    let crypt = |t: &[u8]| {
        t.iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'.' || b == b'/')
            .count()
            >= 3
    };
    let base64 = |t: &[u8]| {
        t.iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
            .count()
            >= 3
    };
    let num = |t: &[u8]| -> Option<u32> {
        let d = t.iter().take_while(|b| b.is_ascii_digit()).count();
        std::str::from_utf8(t.get(..d)?).ok()?.parse().ok()
    };
    let hash = |scheme, param| HashInfo { scheme, param };
    let mut i = 0;
    while let Some(p) = s
        .get(i..)
        .and_then(|t| t.iter().position(|&b| b == b'$' || b == b'{'))
    {
        let at = i + p;
        let rest = s.get(at + 1..).unwrap_or_default();
        let after = |n: usize| rest.get(n..).unwrap_or_default();
        // SHA-crypt: `$5$[rounds=N$]salt$hash`.
        let sha_crypt = |scheme| {
            let t = after(2);
            match t.strip_prefix(b"rounds=") {
                Some(r) => {
                    let d = r.iter().take_while(|b| b.is_ascii_digit()).count();
                    let tail = r.get(d + 1..).unwrap_or_default();
                    (hash(scheme, num(r)), r.get(d) == Some(&b'$') && crypt(tail))
                }
                None => (hash(scheme, None), crypt(t)),
            }
        };
        let found = if s.get(at) == Some(&b'{') {
            if rest.starts_with(b"SHA}") {
                Some((hash(Scheme::Sha1, None), base64(after(4))))
            } else if rest.starts_with(b"SSHA}") {
                Some((hash(Scheme::Sha1, None), base64(after(5))))
            } else {
                None
            }
        } else if [&b"2y$"[..], b"2a$", b"2b$", b"2x$"]
            .iter()
            .any(|p| rest.starts_with(p))
        {
            let cost = rest
                .get(3..)
                .filter(|t| t.get(2) == Some(&b'$'))
                .and_then(num);
            Some((hash(Scheme::Bcrypt, cost), cost.is_some()))
        } else if rest.starts_with(b"apr1$") {
            Some((hash(Scheme::Apr1, None), crypt(after(5))))
        } else if rest.starts_with(b"5$") {
            Some(sha_crypt(Scheme::Sha256Crypt))
        } else if rest.starts_with(b"6$") {
            Some(sha_crypt(Scheme::Sha512Crypt))
        } else if rest.starts_with(b"y$") {
            Some((hash(Scheme::Yescrypt, None), crypt(after(2))))
        } else if rest.starts_with(b"gy$") {
            Some((hash(Scheme::Yescrypt, None), crypt(after(3))))
        } else if rest.starts_with(b"argon2") {
            let variant = [&b"argon2id$"[..], b"argon2i$", b"argon2d$"]
                .iter()
                .any(|v| rest.starts_with(v));
            Some((hash(Scheme::Argon2, None), variant))
        } else if rest.starts_with(b"1$") {
            Some((hash(Scheme::Md5Crypt, None), crypt(after(2))))
        } else {
            None
        };
        if found.is_some() {
            return found;
        }
        i = at + 1;
    }
    None
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
