//! MD5-crypt with a configurable magic string: `$1$` (FreeBSD/glibc) and `$apr1$`
//! (Apache). The two differ only in the magic mixed into the first digest, so one
//! function serves both; `$1$` is cross-checked against `pwhash` in the tests, `$apr1$`
//! against the real `htpasswd -m` in `tests/htpasswd.rs`.

use md5::{Digest, Md5};

/// crypt's base-64 alphabet.
const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// The magic of Apache's variant.
pub(crate) const APR1_MAGIC: &str = "$apr1$";

/// Computes `magic + salt + "$" + checksum`. The salt is cut at the first `$` and at
/// 8 bytes, as every implementation does.
pub(crate) fn md5_crypt(password: &[u8], salt: &[u8], magic: &str) -> String {
    let salt = salt.split(|&b| b == b'$').next().unwrap_or_default();
    let salt = salt.get(..8).unwrap_or(salt);

    let mut alternate = Md5::new();
    alternate.update(password);
    alternate.update(salt);
    alternate.update(password);
    let alternate = alternate.finalize();

    let mut digest = Md5::new();
    digest.update(password);
    digest.update(magic.as_bytes());
    digest.update(salt);
    let mut remaining = password.len();
    while remaining > 0 {
        let take = remaining.min(16);
        digest.update(&alternate[..take]);
        remaining -= take;
    }
    // The historical quirk: for each bit of the length, a NUL or the first password byte.
    let mut bits = password.len();
    while bits > 0 {
        if bits & 1 == 1 {
            digest.update([0u8]);
        } else {
            digest.update(&password[..1]);
        }
        bits >>= 1;
    }
    let mut result: [u8; 16] = digest.finalize().into();

    // 1000 rounds are what makes it "slow" (about 0.1 ms today).
    for round in 0..1000 {
        let mut step = Md5::new();
        if round % 2 == 1 {
            step.update(password);
        } else {
            step.update(result);
        }
        if round % 3 != 0 {
            step.update(salt);
        }
        if round % 7 != 0 {
            step.update(password);
        }
        if round % 2 == 1 {
            step.update(result);
        } else {
            step.update(password);
        }
        result = step.finalize().into();
    }

    let mut out = String::with_capacity(magic.len() + salt.len() + 23);
    out.push_str(magic);
    out.extend(salt.iter().map(|&b| char::from(b)));
    out.push('$');
    for [a, b, c] in [[0, 6, 12], [1, 7, 13], [2, 8, 14], [3, 9, 15], [4, 10, 5]] {
        let value = u32::from(result[a]) << 16 | u32::from(result[b]) << 8 | u32::from(result[c]);
        push_base64(&mut out, value, 4);
    }
    push_base64(&mut out, u32::from(result[11]), 2);
    out
}

fn push_base64(out: &mut String, mut value: u32, chars: usize) {
    for _ in 0..chars {
        out.push(char::from(ITOA64[(value & 0x3f) as usize]));
        value >>= 6;
    }
}

/// Checks `password` against a full `$apr1$salt$checksum` string.
pub(crate) fn verify_apr1(password: &[u8], hash: &[u8]) -> bool {
    let Some(rest) = hash.strip_prefix(APR1_MAGIC.as_bytes()) else {
        return false;
    };
    let computed = md5_crypt(password, rest, APR1_MAGIC);
    crate::verify::constant_time_eq(computed.as_bytes(), hash)
}

/// A random 8-character salt in crypt's alphabet.
pub(crate) fn random_salt() -> [u8; 8] {
    let mut bytes = [0u8; 8];
    // Falling back to a fixed salt only weakens a throw-away hash used for timing.
    let _ = getrandom::fill(&mut bytes);
    bytes.map(|b| ITOA64[usize::from(b & 0x3f)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(deprecated)] // pwhash discourages MD5-crypt for new passwords; this is a cross-check.
    fn md5_crypt_with_dollar_one_matches_pwhash() {
        for (password, salt) in [
            (&b"password"[..], &b"saltsalt"[..]),
            (b"", b"ab"),
            (
                b"a much longer password than sixteen bytes, twice over",
                b"x.y/Z09",
            ),
        ] {
            let ours = md5_crypt(password, salt, "$1$");
            let salt_str = std::str::from_utf8(salt).unwrap();
            let theirs =
                pwhash::md5_crypt::hash_with(format!("$1${salt_str}$").as_str(), password).unwrap();
            assert_eq!(ours, theirs);
        }
    }

    #[test]
    fn apr1_round_trip_and_wrong_password() {
        let salt = random_salt();
        assert!(salt.iter().all(|&b| crate::htpasswd::is_crypt64(b)));
        let hash = md5_crypt(b"hunter2", &salt, APR1_MAGIC);
        assert!(hash.starts_with("$apr1$"));
        assert_eq!(hash.len(), 6 + 8 + 1 + 22);
        assert!(verify_apr1(b"hunter2", hash.as_bytes()));
        assert!(!verify_apr1(b"hunter3", hash.as_bytes()));
        assert!(!verify_apr1(b"hunter2", b"$1$abc$def"));
    }
}
