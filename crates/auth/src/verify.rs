//! Checking a password against a stored hash, per scheme, with real implementations:
//! `bcrypt` for `$2?$`, `pwhash` for DES crypt, `$1$`, `$5$` and `$6$`, our
//! [`crate::apr1`] (on `md-5`) for `$apr1$`, `sha1` + `base64` for `{SHA}`.

use base64::Engine as _;
use sha1::{Digest, Sha1};

use crate::htpasswd::{Scheme, Verification};

pub(crate) fn verify(scheme: Scheme, hash: &[u8], password: &[u8]) -> Verification {
    let matched = match scheme {
        Scheme::Plain => constant_time_eq(password, hash),
        Scheme::Sha1 => constant_time_eq(sha1_htpasswd(password).as_bytes(), hash),
        Scheme::Apr1 => crate::apr1::verify_apr1(password, hash),
        Scheme::Yescrypt | Scheme::Argon2 | Scheme::Unsupported => {
            return Verification::Unsupported
        }
        Scheme::DesCrypt
        | Scheme::Bcrypt { .. }
        | Scheme::Md5Crypt
        | Scheme::Sha256Crypt { .. }
        | Scheme::Sha512Crypt { .. } => {
            // pwhash slices by byte offset; a non-ASCII hash is not valid for any of
            // these schemes and crypt() would reject it too.
            let Some(hash) = std::str::from_utf8(hash).ok().filter(|h| h.is_ascii()) else {
                return Verification::Mismatch;
            };
            match scheme {
                Scheme::DesCrypt => pwhash::unix_crypt::verify(password, hash),
                Scheme::Bcrypt { .. } => bcrypt::verify(password, hash).unwrap_or(false),
                Scheme::Md5Crypt => pwhash::md5_crypt::verify(password, hash),
                Scheme::Sha256Crypt { .. } => pwhash::sha256_crypt::verify(password, hash),
                _ => pwhash::sha512_crypt::verify(password, hash),
            }
        }
    };
    if matched {
        Verification::Match
    } else {
        Verification::Mismatch
    }
}

/// `{SHA}` + base64(SHA-1(password)), what `htpasswd -s` writes.
pub(crate) fn sha1_htpasswd(password: &[u8]) -> String {
    let digest = Sha1::digest(password);
    format!(
        "{{SHA}}{}",
        base64::engine::general_purpose::STANDARD.encode(digest)
    )
}

/// Compares without an early exit on the first differing byte.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_known_answer() {
        // SHA-1("password") = 5baa61e4c9b93f3f0682250b6cf8331b7ee68fd8
        assert_eq!(
            sha1_htpasswd(b"password"),
            "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="
        );
    }

    #[test]
    fn constant_time_eq_cases() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }

    #[test]
    fn non_ascii_hash_is_a_mismatch_not_a_panic() {
        let hash = "$6$rounds=1000$\u{e9}\u{e9}$xx".as_bytes();
        assert_eq!(
            verify(Scheme::Sha512Crypt { rounds: 1000 }, hash, b"pw"),
            Verification::Mismatch
        );
    }
}
