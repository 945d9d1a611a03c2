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
