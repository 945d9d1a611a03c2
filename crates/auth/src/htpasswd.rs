//! Reading an htpasswd file the way Apache's mod_authn_file does.
//!
//! mod_authn_file reads the file line by line, strips surrounding white space, skips
//! blank lines and lines that start with `#`, and splits the rest at `:`: the first
//! field is the user, the second the stored hash; anything after a second `:` is
//! ignored (htdigest-style extra fields, comments some tools append). The first line
//! that names a user wins, so later duplicates are shadowed.
//!
//! [`parse`] does the same, never panics, and keeps every line it cannot use as a
//! [`Malformed`] with its line number and a [`MalformedReason`]: a bad line is data.
//!
//! An [`Entry`] keeps the stored hash in a private field. It is never shown: `Debug`
//! prints `<redacted>`, there is no `Display`, no `Serialize` and no accessor. The
//! scheme and its work factor are public because they are what makes a request slow;
//! [`Entry::verify`] checks a password without handing the hash out.

use std::collections::HashMap;
use std::fmt;

use serde::Serialize;

use crate::verify;

/// How a stored password is hashed, with the work factor where the scheme has one.
///
/// The variant is decided from the hash's prefix, the way `apr_password_validate` and
/// the system `crypt()` decide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Scheme {
    /// `{SHA}` + base64 of an unsalted SHA-1 (`htpasswd -s`).
    Sha1,
    /// `$apr1$`: Apache's MD5-crypt variant, 1000 MD5 rounds (`htpasswd -m`, the default).
    Apr1,
    /// 13-character traditional DES `crypt(3)` (`htpasswd -d`); only the first 8
    /// password bytes count.
    DesCrypt,
    /// `$2y$`, `$2a$`, `$2b$` (and `$2x$`): bcrypt, `2^cost` key-setup rounds
    /// (`htpasswd -B -C cost`).
    Bcrypt {
        /// The cost, 4..=31; each step doubles the work.
        cost: u32,
    },
    /// `$1$`: FreeBSD/glibc MD5-crypt (checked by the system `crypt()`).
    Md5Crypt,
    /// `$5$`: SHA-256-crypt (`htpasswd -2`), checked by the system `crypt()`.
    Sha256Crypt {
        /// `rounds=N` as `crypt()` applies it (clamped to 1000..=999999999), 5000 when absent.
        rounds: u32,
    },
    /// `$6$`: SHA-512-crypt (`htpasswd -5`), checked by the system `crypt()`.
    Sha512Crypt {
        /// `rounds=N` as `crypt()` applies it (clamped to 1000..=999999999), 5000 when absent.
        rounds: u32,
    },
    /// `$y$`: yescrypt (libxcrypt's default on current Debian/Fedora).
    Yescrypt,
    /// `$argon2i$`, `$argon2d$`, `$argon2id$`.
    Argon2,
    /// A `{NAME}` prefix other than `{SHA}` (`{SSHA}`, `{SMD5}`, `{MD5}`, `{CRYPT}`, as
    /// LDAP tools write them): `apr_password_validate` does not know it, so on Linux
    /// httpd hands the value to `crypt(3)`, which rejects it: the user cannot log in.
    Unsupported,
    /// No recognised prefix and not a DES crypt string: plain text. Apache's own
    /// documentation lists plain text as "Windows & Netware only"; elsewhere httpd
    /// hands the value to `crypt()`, so such a user can never log in.
    Plain,
}

/// The default `rounds` of SHA-crypt when the hash does not say `rounds=`.
pub const SHA_CRYPT_DEFAULT_ROUNDS: u32 = 5000;
const SHA_CRYPT_MIN_ROUNDS: u32 = 1000;
const SHA_CRYPT_MAX_ROUNDS: u32 = 999_999_999;

impl Scheme {
    /// A short lower-case name for output: `sha1`, `apr1`, `crypt`, `bcrypt`, `md5-crypt`,
    /// `sha256-crypt`, `sha512-crypt`, `yescrypt`, `argon2`, `plain`.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Sha1 => "sha1",
            Scheme::Apr1 => "apr1",
            Scheme::DesCrypt => "crypt",
            Scheme::Bcrypt { .. } => "bcrypt",
            Scheme::Md5Crypt => "md5-crypt",
            Scheme::Sha256Crypt { .. } => "sha256-crypt",
            Scheme::Sha512Crypt { .. } => "sha512-crypt",
            Scheme::Yescrypt => "yescrypt",
            Scheme::Argon2 => "argon2",
            Scheme::Plain => "plain",
            Scheme::Unsupported => "unsupported",
        }
    }

    /// The bcrypt cost, if this is bcrypt.
    pub fn cost(self) -> Option<u32> {
        match self {
            Scheme::Bcrypt { cost } => Some(cost),
            _ => None,
        }
    }

    /// The SHA-crypt rounds, if this is `$5$` or `$6$`.
    pub fn rounds(self) -> Option<u32> {
        match self {
            Scheme::Sha256Crypt { rounds } | Scheme::Sha512Crypt { rounds } => Some(rounds),
            _ => None,
        }
    }
}

/// Scheme plus work factor, e.g. `bcrypt cost 12`, `sha512-crypt rounds 5000`, `apr1`.
impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        if let Some(cost) = self.cost() {
            write!(f, " cost {cost}")?;
        }
        if let Some(rounds) = self.rounds() {
            write!(f, " rounds {rounds}")?;
        }
        Ok(())
    }
}

impl Serialize for Scheme {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// One usable `user:hash` line.
///
/// The hash is private and never printed (see the module docs).
#[derive(Clone)]
pub struct Entry {
    /// The user name (lossily decoded if it is not UTF-8). Escape it for where it goes.
    pub user: String,
    /// 1-based line number in the file.
    pub line: usize,
    /// The scheme and work factor.
    pub scheme: Scheme,
    hash: Box<[u8]>,
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("user", &self.user)
            .field("line", &self.line)
            .field("scheme", &self.scheme)
            .field("hash", &format_args!("<redacted>"))
            .finish()
    }
}

/// The answer of [`Entry::verify`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verification {
    /// The password is the one stored.
    Match,
    /// It is not (or the stored value is not a valid hash of its scheme).
    Mismatch,
    /// tlsgap has no implementation of this scheme (yescrypt, argon2).
    Unsupported,
}

impl Entry {
    /// Checks `password` against the stored hash with the scheme's real algorithm.
    ///
    /// `Plain` compares bytes, as httpd does on Windows and NetWare.
    pub fn verify(&self, password: &[u8]) -> Verification {
        verify::verify(self.scheme, &self.hash, password)
    }

    /// The bcrypt cost, if the entry is bcrypt.
    pub fn cost(&self) -> Option<u32> {
        self.scheme.cost()
    }

    /// The SHA-crypt rounds, if the entry is `$5$` or `$6$`.
    pub fn rounds(&self) -> Option<u32> {
        self.scheme.rounds()
    }
}

/// Why a line was not used. Never carries any part of the hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum MalformedReason {
    /// No `:` separates a user from a hash.
    NoColon,
    /// The user field is empty.
    EmptyUser,
    /// The hash field is empty: mod_authn_file would compare against an empty string.
    EmptyHash,
    /// A `$2?$` hash whose cost is not a number in 4..=31.
    BadBcryptCost,
    /// A `$5$`/`$6$` hash whose `rounds=` is not a number.
    BadRounds,
    /// A `$`-prefixed hash of a scheme tlsgap does not know (e.g. `$3$`, `$md5$`).
    UnknownScheme,
    /// The user already appeared; mod_authn_file uses the first line only.
    DuplicateUser {
        /// The line that wins.
        first_line: usize,
    },
}

impl fmt::Display for MalformedReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MalformedReason::NoColon => f.write_str("no ':' between user and hash"),
            MalformedReason::EmptyUser => f.write_str("empty user name"),
            MalformedReason::EmptyHash => f.write_str("empty hash"),
            MalformedReason::BadBcryptCost => {
                f.write_str("bcrypt cost is not a number between 4 and 31")
            }
            MalformedReason::BadRounds => f.write_str("SHA-crypt rounds= is not a number"),
            MalformedReason::UnknownScheme => f.write_str("unknown $-prefixed hash scheme"),
            MalformedReason::DuplicateUser { first_line } => {
                write!(
                    f,
                    "duplicate user; line {first_line} is the one Apache uses"
                )
            }
        }
    }
}

/// A line that was not used, with why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Malformed {
    /// 1-based line number.
    pub line: usize,
    /// The user, when the line had one.
    pub user: Option<String>,
    /// Why the line was rejected.
    #[serde(flatten)]
    pub reason: MalformedReason,
}

/// A parsed htpasswd file.
#[derive(Clone, Debug, Default)]
pub struct Htpasswd {
    /// Usable entries in file order (the first line per user).
    pub entries: Vec<Entry>,
    /// Lines that were not used, in file order.
    pub malformed: Vec<Malformed>,
}

impl Htpasswd {
    /// The entry mod_authn_file would use for `user`.
    pub fn get(&self, user: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.user == user)
    }
}

/// Parses an htpasswd file. Never panics; every non-blank, non-comment line ends up in
/// either [`Htpasswd::entries`] or [`Htpasswd::malformed`].
pub fn parse(bytes: &[u8]) -> Htpasswd {
    let mut out = Htpasswd::default();
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = index + 1;
        // ap_cfg_getline strips leading and trailing white space, which takes care of CRLF.
        let text = raw.trim_ascii();
        if text.is_empty() || text.first() == Some(&b'#') {
            continue;
        }
        let mut fields = text.splitn(3, |&b| b == b':');
        let user_bytes = fields.next().unwrap_or_default();
        let Some(hash) = fields.next() else {
            out.malformed.push(Malformed {
                line,
                user: None,
                reason: MalformedReason::NoColon,
            });
            continue;
        };
        let user = String::from_utf8_lossy(user_bytes).into_owned();
        let reject = |reason| Malformed {
            line,
            user: (!user.is_empty()).then(|| user.clone()),
            reason,
        };
        if user.is_empty() {
            out.malformed.push(reject(MalformedReason::EmptyUser));
            continue;
        }
        if hash.is_empty() {
            out.malformed.push(reject(MalformedReason::EmptyHash));
            continue;
        }
        let scheme = match classify(hash) {
            Ok(scheme) => scheme,
            Err(reason) => {
                out.malformed.push(reject(reason));
                continue;
            }
        };
        if let Some(&first_line) = first_line_of.get(&user) {
            out.malformed
                .push(reject(MalformedReason::DuplicateUser { first_line }));
            continue;
        }
        first_line_of.insert(user.clone(), line);
        out.entries.push(Entry {
            user,
            line,
            scheme,
            hash: hash.into(),
        });
    }
    out
}

/// The characters of crypt's base-64 alphabet.
pub(crate) fn is_crypt64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'.' || b == b'/'
}

fn classify(hash: &[u8]) -> Result<Scheme, MalformedReason> {
    if hash.starts_with(b"{SHA}") {
        return Ok(Scheme::Sha1);
    }
    if hash.starts_with(b"$apr1$") {
        return Ok(Scheme::Apr1);
    }
    if let Some(rest) = hash
        .strip_prefix(b"$2y$")
        .or_else(|| hash.strip_prefix(b"$2a$"))
        .or_else(|| hash.strip_prefix(b"$2b$"))
        .or_else(|| hash.strip_prefix(b"$2x$"))
    {
        let digits = rest.split(|&b| b == b'$').next().unwrap_or_default();
        return parse_number(digits)
            .filter(|cost| (4..=31).contains(cost))
            .map(|cost| Scheme::Bcrypt { cost })
            .ok_or(MalformedReason::BadBcryptCost);
    }
    if hash.starts_with(b"$1$") {
        return Ok(Scheme::Md5Crypt);
    }
    if let Some(rest) = hash.strip_prefix(b"$5$") {
        return sha_crypt_rounds(rest).map(|rounds| Scheme::Sha256Crypt { rounds });
    }
    if let Some(rest) = hash.strip_prefix(b"$6$") {
        return sha_crypt_rounds(rest).map(|rounds| Scheme::Sha512Crypt { rounds });
    }
    if hash.starts_with(b"$y$") {
        return Ok(Scheme::Yescrypt);
    }
    if hash.starts_with(b"$argon2") {
        return Ok(Scheme::Argon2);
    }
    if hash.first() == Some(&b'$') {
        return Err(MalformedReason::UnknownScheme);
    }
    if let Some(rest) = hash.strip_prefix(b"{") {
        let name = rest.split(|&b| b == b'}').next().unwrap_or_default();
        let closed = rest.get(name.len()) == Some(&b'}');
        if closed
            && !name.is_empty()
            && name.len() <= 16
            && name.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        {
            return Ok(Scheme::Unsupported);
        }
    }
    if hash.len() == 13 && hash.iter().all(|&b| is_crypt64(b)) {
        return Ok(Scheme::DesCrypt);
    }
    Ok(Scheme::Plain)
}

fn sha_crypt_rounds(rest: &[u8]) -> Result<u32, MalformedReason> {
    let Some(value) = rest.strip_prefix(b"rounds=") else {
        return Ok(SHA_CRYPT_DEFAULT_ROUNDS);
    };
    let digits = value.split(|&b| b == b'$').next().unwrap_or_default();
    // crypt() clamps out-of-range values rather than rejecting them.
    let rounds = if !digits.is_empty() && digits.len() > 10 && digits.iter().all(u8::is_ascii_digit)
    {
        SHA_CRYPT_MAX_ROUNDS
    } else {
        parse_number(digits).ok_or(MalformedReason::BadRounds)?
    };
    Ok(rounds.clamp(SHA_CRYPT_MIN_ROUNDS, SHA_CRYPT_MAX_ROUNDS))
}

/// Parses 1..=10 ASCII digits into a u32 (saturating), `None` otherwise.
fn parse_number(digits: &[u8]) -> Option<u32> {
    if digits.is_empty() || digits.len() > 10 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let value = digits
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
    Some(u32::try_from(value).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scheme_of(line: &str) -> Scheme {
        let parsed = parse(line.as_bytes());
        assert!(parsed.malformed.is_empty(), "{:?}", parsed.malformed);
        parsed.entries[0].scheme
    }

    #[test]
    fn schemes_from_prefixes() {
        assert_eq!(
            scheme_of("a:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M="),
            Scheme::Sha1
        );
        assert_eq!(
            scheme_of("a:$apr1$abcdefgh$0123456789012345678901"),
            Scheme::Apr1
        );
        assert_eq!(scheme_of("a:abJnggxhB/yWI"), Scheme::DesCrypt);
        // LDAP-style prefixes Apache does not verify, as slapd and ldap tools write them.
        assert_eq!(
            scheme_of("a:{SSHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g7gMfC"),
            Scheme::Unsupported
        );
        assert_eq!(scheme_of("a:{SMD5}abc"), Scheme::Unsupported);
        assert_eq!(scheme_of("a:{CRYPT}$6$salt$x"), Scheme::Unsupported);
        // Not a prefix: plain text that starts with a brace.
        assert_eq!(scheme_of("a:{not a prefix"), Scheme::Plain);
        assert_eq!(scheme_of("a:$2y$05$x"), Scheme::Bcrypt { cost: 5 });
        assert_eq!(scheme_of("a:$2a$12$x"), Scheme::Bcrypt { cost: 12 });
        assert_eq!(scheme_of("a:$2b$15$x"), Scheme::Bcrypt { cost: 15 });
        assert_eq!(scheme_of("a:$1$salt$x"), Scheme::Md5Crypt);
        assert_eq!(
            scheme_of("a:$5$salt$x"),
            Scheme::Sha256Crypt { rounds: 5000 }
        );
        assert_eq!(
            scheme_of("a:$6$rounds=20000$salt$x"),
            Scheme::Sha512Crypt { rounds: 20000 }
        );
        assert_eq!(
            scheme_of("a:$6$rounds=10$salt$x"),
            Scheme::Sha512Crypt { rounds: 1000 },
            "crypt() clamps small rounds up to 1000"
        );
        assert_eq!(scheme_of("a:$y$j9T$salt$x"), Scheme::Yescrypt);
        assert_eq!(scheme_of("a:$argon2id$v=19$m=65536$x"), Scheme::Argon2);
        assert_eq!(scheme_of("a:secret"), Scheme::Plain);
        // 13 characters but one outside crypt's alphabet: plain text.
        assert_eq!(scheme_of("a:abcdefghijk-m"), Scheme::Plain);
    }

    #[test]
    fn comments_blank_lines_crlf_and_trailing_fields() {
        let file = b"# users\r\n\r\n   \nalice:$2y$10$x:Alice Liddell:extra\r\n  # indented comment\nbob:{SHA}abc=\r\n";
        let parsed = parse(file);
        assert!(parsed.malformed.is_empty(), "{:?}", parsed.malformed);
        let users: Vec<_> = parsed
            .entries
            .iter()
            .map(|e| (e.user.as_str(), e.line, e.scheme))
            .collect();
        assert_eq!(
            users,
            [
                ("alice", 4, Scheme::Bcrypt { cost: 10 }),
                ("bob", 6, Scheme::Sha1)
            ]
        );
        assert_eq!(parsed.entries[1].verify(b"x"), Verification::Mismatch);
    }

    #[test]
    fn malformed_lines_keep_line_and_reason() {
        let file = b"nocolon\n:$2y$05$x\ncarol:\ndave:$2y$xx$abc\neve:$2y$99$abc\nfrank:$5$rounds=abc$s$h\ngina:$3$x\nok:plain\nok:{SHA}x\n";
        let parsed = parse(file);
        let got: Vec<_> = parsed
            .malformed
            .iter()
            .map(|m| (m.line, m.user.as_deref(), m.reason.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (1, None, MalformedReason::NoColon),
                (2, None, MalformedReason::EmptyUser),
                (3, Some("carol"), MalformedReason::EmptyHash),
                (4, Some("dave"), MalformedReason::BadBcryptCost),
                (5, Some("eve"), MalformedReason::BadBcryptCost),
                (6, Some("frank"), MalformedReason::BadRounds),
                (7, Some("gina"), MalformedReason::UnknownScheme),
                (
                    9,
                    Some("ok"),
                    MalformedReason::DuplicateUser { first_line: 8 }
                ),
            ]
        );
        assert_eq!(parsed.entries.len(), 1);
        assert_eq!(parsed.get("ok").map(|e| e.line), Some(8));
    }

    #[test]
    fn debug_redacts_the_hash() {
        let parsed = parse(b"alice:$apr1$SALTsalt$HASHhashHASHhashHASHha\n");
        let debug = format!("{parsed:?}");
        assert!(debug.contains("alice"));
        assert!(debug.contains("<redacted>"));
        assert!(!debug.contains("SALTsalt"), "{debug}");
        assert!(!debug.contains("HASHhash"), "{debug}");
    }

    #[test]
    fn random_inputs_never_panic_and_every_line_is_accounted_for() {
        // A poor man's fuzz run until the cargo-fuzz target exists: bytes from an
        // alphabet dense in separators and prefix characters.
        const ALPHABET: &[u8] = b"::$$$2y5601{SHA}apr1rounds=#\r\n\n \xff.a/";
        let mut noise = [0u8; 64 * 500];
        getrandom::fill(&mut noise).unwrap();
        for chunk in noise.chunks(64) {
            let input: Vec<u8> = chunk
                .iter()
                .map(|&b| ALPHABET[usize::from(b) % ALPHABET.len()])
                .collect();
            let parsed = parse(&input);
            let used = parsed.entries.len() + parsed.malformed.len();
            let candidate_lines = input
                .split(|&b| b == b'\n')
                .map(<[u8]>::trim_ascii)
                .filter(|l| !l.is_empty() && l[0] != b'#')
                .count();
            assert_eq!(
                used,
                candidate_lines,
                "{:?}",
                String::from_utf8_lossy(&input)
            );
        }
    }

    #[test]
    fn odd_bytes_never_panic() {
        let inputs: [&[u8]; 8] = [
            b"",
            b":",
            b"\xff\xfe:\xff",
            b"a:$2y$",
            b"a:$5$rounds=",
            b"a:$6$rounds=99999999999999999999$s$h",
            b"a:$2y$4294967296$",
            b"\r\n\r\n#\n:::",
        ];
        for input in inputs {
            let parsed = parse(input);
            for entry in &parsed.entries {
                // Skip the deliberately huge rounds=: verifying it would take minutes.
                if entry.rounds().is_none_or(|r| r <= 10_000) {
                    assert_ne!(entry.verify(b"pw"), Verification::Match);
                }
            }
        }
        assert_eq!(
            parse(b"a:$6$rounds=99999999999999999999$s$h").entries[0].scheme,
            Scheme::Sha512Crypt {
                rounds: SHA_CRYPT_MAX_ROUNDS
            }
        );
    }
}
