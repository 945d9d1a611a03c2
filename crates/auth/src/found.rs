//! Password hashes found inside other text: a traced `read()` of an htpasswd file, a
//! write to a socket, a shell script. The same [`Scheme`] as an htpasswd entry's, with
//! what the text showed of it: strace cuts strings (`-s 32` by default), so the work
//! factor may be cut off, and a prefix such as `$1$` may just be text.

use crate::htpasswd::{Scheme, SHA_CRYPT_DEFAULT_ROUNDS};

/// A hash prefix found in text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FoundHash {
    /// The scheme. Its work factor is what the text showed when `work_shown`;
    /// otherwise a placeholder (bcrypt cost 0, SHA-crypt's default 5000 rounds).
    pub scheme: Scheme,
    /// Whether the text showed the bcrypt cost or the SHA-crypt `rounds=`.
    pub work_shown: bool,
    /// Whether what follows the prefix looks like a hash (salt characters), rather
    /// than, say, `$1$2` in a shell script.
    pub plausible: bool,
}

impl FoundHash {
    /// The bcrypt cost or SHA-crypt rounds, when the text showed it.
    pub fn work(&self) -> Option<u32> {
        if self.work_shown {
            self.scheme.cost().or(self.scheme.rounds())
        } else {
            None
        }
    }
}

/// The first password-hash prefix in `s` (`{SHA}`, `{SSHA}`, `$2y$`/`$2a$`/`$2b$`/`$2x$`,
/// `$apr1$`, `$5$`, `$6$`, `$y$`, `$gy$`, `$argon2`, `$1$`). A redactor goes by the
/// prefix alone; a diagnosis should want [`FoundHash::plausible`].
pub fn find_hash(s: &[u8]) -> Option<FoundHash> {
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
    let found = |scheme, work_shown, plausible| FoundHash {
        scheme,
        work_shown,
        plausible,
    };
    let mut i = 0;
    while let Some(p) = s
        .get(i..)
        .and_then(|t| t.iter().position(|&b| b == b'$' || b == b'{'))
    {
        let at = i + p;
        let rest = s.get(at + 1..).unwrap_or_default();
        let after = |n: usize| rest.get(n..).unwrap_or_default();
        // SHA-crypt: `$5$[rounds=N$]salt$hash`.
        let sha_crypt = |scheme: fn(u32) -> Scheme| {
            let t = after(2);
            match t.strip_prefix(b"rounds=") {
                Some(r) => {
                    let d = r.iter().take_while(|b| b.is_ascii_digit()).count();
                    let tail = r.get(d + 1..).unwrap_or_default();
                    let rounds = num(r);
                    found(
                        scheme(rounds.unwrap_or(SHA_CRYPT_DEFAULT_ROUNDS)),
                        rounds.is_some(),
                        r.get(d) == Some(&b'$') && crypt(tail),
                    )
                }
                None => found(scheme(SHA_CRYPT_DEFAULT_ROUNDS), false, crypt(t)),
            }
        };
        let hit = if s.get(at) == Some(&b'{') {
            if rest.starts_with(b"SHA}") {
                Some(found(Scheme::Sha1, false, base64(after(4))))
            } else if rest.starts_with(b"SSHA}") {
                Some(found(Scheme::Sha1, false, base64(after(5))))
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
            Some(found(
                Scheme::Bcrypt {
                    cost: cost.unwrap_or(0),
                },
                cost.is_some(),
                cost.is_some(),
            ))
        } else if rest.starts_with(b"apr1$") {
            Some(found(Scheme::Apr1, false, crypt(after(5))))
        } else if rest.starts_with(b"5$") {
            Some(sha_crypt(|rounds| Scheme::Sha256Crypt { rounds }))
        } else if rest.starts_with(b"6$") {
            Some(sha_crypt(|rounds| Scheme::Sha512Crypt { rounds }))
        } else if rest.starts_with(b"y$") {
            Some(found(Scheme::Yescrypt, false, crypt(after(2))))
        } else if rest.starts_with(b"gy$") {
            Some(found(Scheme::Yescrypt, false, crypt(after(3))))
        } else if rest.starts_with(b"argon2") {
            let variant = [&b"argon2id$"[..], b"argon2i$", b"argon2d$"]
                .iter()
                .any(|v| rest.starts_with(v));
            Some(found(Scheme::Argon2, false, variant))
        } else if rest.starts_with(b"1$") {
            Some(found(Scheme::Md5Crypt, false, crypt(after(2))))
        } else {
            None
        };
        if hit.is_some() {
            return hit;
        }
        i = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_scheme_as_an_htpasswd_entry() {
        let line = b"sam:$2y$12$abcdefghijklmnopqrstuu0123456789abcdefghijklmnopqrs";
        let entry = crate::parse(line);
        let found = find_hash(line).unwrap();
        assert_eq!(found.scheme, entry.entries[0].scheme);
        assert!(found.work_shown && found.plausible);
        assert_eq!(found.work(), Some(12));
    }

    #[test]
    fn cut_off_work_factors_are_not_invented() {
        // strace's default -s 32 cut the string inside the cost.
        let f = find_hash(b"\"sam:$2y$1\"...").unwrap();
        assert!(matches!(f.scheme, Scheme::Bcrypt { .. }));
        assert_eq!((f.work(), f.plausible), (None, false));
        let f = find_hash(b"x:$6$saltsalt$hash").unwrap();
        assert_eq!(f.scheme, Scheme::Sha512Crypt { rounds: 5000 });
        assert_eq!(f.work(), None);
        let f = find_hash(b"x:$5$rounds=8000$salt$h").unwrap();
        assert_eq!(f.work(), Some(8000));
        assert_eq!(find_hash(b"{SHA}").map(|f| f.plausible), Some(false));
        assert_eq!(find_hash(b"price: $5 or {x}"), None);
    }
}
