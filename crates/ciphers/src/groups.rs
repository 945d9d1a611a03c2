//! Key-exchange groups (the TLS "supported groups", once "elliptic curves"): code points,
//! the names OpenSSL and nginx log, their strength, and which are post-quantum.
//!
//! ```
//! use tlsgap_ciphers::groups::{self, GroupKind};
//!
//! let g = groups::by_name("prime256v1").unwrap();
//! assert_eq!(g.code, 0x0017);
//! assert_eq!(groups::by_name("P-256").unwrap().code, 0x0017);
//! assert_eq!(groups::by_code(0x11ec).unwrap().name, "X25519MLKEM768");
//! assert_eq!(groups::by_code(0x11ec).unwrap().kind, GroupKind::HybridPostQuantum);
//! assert!(groups::is_grease(0x5a5a));
//! ```

/// What a group is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupKind {
    /// An elliptic curve (ECDHE), X25519 and X448 included.
    Ecdhe,
    /// A finite-field Diffie-Hellman group of RFC 7919 (TLS 1.3 only in OpenSSL 3).
    Ffdhe,
    /// A classical curve combined with ML-KEM (`X25519MLKEM768`, ...): post-quantum.
    HybridPostQuantum,
    /// ML-KEM alone: post-quantum.
    PostQuantum,
    /// A pre-standard Kyber draft hybrid (`X25519Kyber768Draft00`): post-quantum, but
    /// withdrawn.
    DraftPostQuantum,
}

/// One group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The IANA code point.
    pub code: u16,
    /// The name OpenSSL (and so nginx's `$ssl_curve`/`$ssl_curves`) writes.
    pub name: &'static str,
    /// Other spellings (IANA's, NIST's, OpenSSL's group-list aliases).
    pub aliases: &'static [&'static str],
    /// What it is.
    pub kind: GroupKind,
    /// Security bits OpenSSL rates it at (what its security levels compare).
    pub bits: u16,
    /// Whether it can be used in TLS <= 1.2 (ECDHE curves; not FFDHE or ML-KEM groups).
    pub tls12: bool,
    /// Whether the OpenSSL 3.0 of Debian 12 has it.
    pub in_openssl30: bool,
}

impl Group {
    /// Whether a key exchange with this group resists a quantum computer.
    pub fn post_quantum(&self) -> bool {
        matches!(
            self.kind,
            GroupKind::HybridPostQuantum | GroupKind::PostQuantum | GroupKind::DraftPostQuantum
        )
    }
}

const fn g(
    code: u16,
    name: &'static str,
    aliases: &'static [&'static str],
    kind: GroupKind,
    bits: u16,
    in_openssl30: bool,
) -> Group {
    Group {
        code,
        name,
        aliases,
        kind,
        bits,
        tls12: matches!(kind, GroupKind::Ecdhe),
        in_openssl30,
    }
}

use GroupKind::{DraftPostQuantum, Ecdhe, Ffdhe, HybridPostQuantum, PostQuantum};

/// Every group tlsgap knows (IANA's TLS Supported Groups registry, the curves OpenSSL
/// names, the post-quantum groups of RFC drafts in use), by code point.
pub const ALL: &[Group] = &[
    g(0x0001, "sect163k1", &["K-163"], Ecdhe, 80, true),
    g(0x0002, "sect163r1", &[], Ecdhe, 80, true),
    g(0x0003, "sect163r2", &["B-163"], Ecdhe, 80, true),
    g(0x0004, "sect193r1", &[], Ecdhe, 80, true),
    g(0x0005, "sect193r2", &[], Ecdhe, 80, true),
    g(0x0006, "sect233k1", &["K-233"], Ecdhe, 112, true),
    g(0x0007, "sect233r1", &["B-233"], Ecdhe, 112, true),
    g(0x0008, "sect239k1", &[], Ecdhe, 112, true),
    g(0x0009, "sect283k1", &["K-283"], Ecdhe, 128, true),
    g(0x000a, "sect283r1", &["B-283"], Ecdhe, 128, true),
    g(0x000b, "sect409k1", &["K-409"], Ecdhe, 192, true),
    g(0x000c, "sect409r1", &["B-409"], Ecdhe, 192, true),
    g(0x000d, "sect571k1", &["K-571"], Ecdhe, 256, true),
    g(0x000e, "sect571r1", &["B-571"], Ecdhe, 256, true),
    g(0x000f, "secp160k1", &[], Ecdhe, 80, true),
    g(0x0010, "secp160r1", &[], Ecdhe, 80, true),
    g(0x0011, "secp160r2", &[], Ecdhe, 80, true),
    g(0x0012, "secp192k1", &[], Ecdhe, 80, true),
    g(
        0x0013,
        "prime192v1",
        &["secp192r1", "P-192"],
        Ecdhe,
        80,
        true,
    ),
    g(0x0014, "secp224k1", &[], Ecdhe, 112, true),
    g(0x0015, "secp224r1", &["P-224"], Ecdhe, 112, true),
    g(0x0016, "secp256k1", &[], Ecdhe, 128, true),
    g(
        0x0017,
        "prime256v1",
        &["secp256r1", "P-256"],
        Ecdhe,
        128,
        true,
    ),
    g(0x0018, "secp384r1", &["P-384"], Ecdhe, 192, true),
    g(0x0019, "secp521r1", &["P-521"], Ecdhe, 256, true),
    g(0x001a, "brainpoolP256r1", &[], Ecdhe, 128, true),
    g(0x001b, "brainpoolP384r1", &[], Ecdhe, 192, true),
    g(0x001c, "brainpoolP512r1", &[], Ecdhe, 256, true),
    g(0x001d, "X25519", &["x25519"], Ecdhe, 128, true),
    g(0x001e, "X448", &["x448"], Ecdhe, 224, true),
    g(0x001f, "brainpoolP256r1tls13", &[], Ecdhe, 128, false),
    g(0x0020, "brainpoolP384r1tls13", &[], Ecdhe, 192, false),
    g(0x0021, "brainpoolP512r1tls13", &[], Ecdhe, 256, false),
    g(0x0100, "ffdhe2048", &[], Ffdhe, 112, true),
    g(0x0101, "ffdhe3072", &[], Ffdhe, 128, true),
    g(0x0102, "ffdhe4096", &[], Ffdhe, 152, true),
    g(0x0103, "ffdhe6144", &[], Ffdhe, 176, true),
    g(0x0104, "ffdhe8192", &[], Ffdhe, 192, true),
    g(0x0200, "MLKEM512", &["mlkem512"], PostQuantum, 128, false),
    g(0x0201, "MLKEM768", &["mlkem768"], PostQuantum, 192, false),
    g(0x0202, "MLKEM1024", &["mlkem1024"], PostQuantum, 256, false),
    g(
        0x11eb,
        "SecP256r1MLKEM768",
        &["secp256r1mlkem768"],
        HybridPostQuantum,
        192,
        false,
    ),
    g(
        0x11ec,
        "X25519MLKEM768",
        &["x25519mlkem768"],
        HybridPostQuantum,
        192,
        false,
    ),
    g(
        0x11ed,
        "SecP384r1MLKEM1024",
        &["secp384r1mlkem1024"],
        HybridPostQuantum,
        256,
        false,
    ),
    g(
        0x6399,
        "X25519Kyber768Draft00",
        &["x25519kyber768"],
        DraftPostQuantum,
        192,
        false,
    ),
    g(
        0x639a,
        "SecP256r1Kyber768Draft00",
        &[],
        DraftPostQuantum,
        192,
        false,
    ),
];

/// OpenSSL 3.0's default server group list, in its preference order (what nginx's
/// `ssl_ecdh_curve auto` and an Apache without `SSLOpenSSLConfCmd Groups` use).
pub const OPENSSL30_DEFAULT: [u16; 10] = [
    0x001d, 0x0017, 0x001e, 0x0019, 0x0018, 0x0100, 0x0101, 0x0102, 0x0103, 0x0104,
];

/// The group with code point `code`.
pub fn by_code(code: u16) -> Option<&'static Group> {
    ALL.iter().find(|g| g.code == code)
}

/// The group called `name` (OpenSSL's name or an alias, any case; `0x001d` hex as nginx
/// writes unknown groups).
pub fn by_name(name: &str) -> Option<&'static Group> {
    if let Some(code) = hex_code(name) {
        return by_code(code);
    }
    ALL.iter().find(|g| {
        g.name.eq_ignore_ascii_case(name) || g.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
    })
}

/// `0x001d` (nginx's spelling of a code point it has no name for) as a number.
pub fn hex_code(s: &str) -> Option<u16> {
    let digits = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    if digits.is_empty() || digits.len() > 4 {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

/// Whether `code` is a GREASE value (RFC 8701: `0x0a0a`, `0x1a1a`, ... `0xfafa`), which
/// clients send in cipher, group, extension and version lists to keep servers tolerant.
pub fn is_grease(code: u16) -> bool {
    let [hi, lo] = code.to_be_bytes();
    hi == lo && lo & 0x0f == 0x0a
}

/// OpenSSL 3.0's default groups, resolved.
pub fn openssl30_default() -> Vec<&'static Group> {
    OPENSSL30_DEFAULT
        .iter()
        .filter_map(|&c| by_code(c))
        .collect()
}

/// The minimum security bits of OpenSSL security level `level` (0: none).
pub fn seclevel_bits(level: u8) -> u16 {
    match level {
        0 => 0,
        1 => 80,
        2 => 112,
        3 => 128,
        4 => 192,
        _ => 256,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_names_are_unique() {
        for (i, a) in ALL.iter().enumerate() {
            for b in &ALL[i + 1..] {
                assert_ne!(a.code, b.code, "{}", a.name);
                assert!(!a.name.eq_ignore_ascii_case(b.name), "{}", a.name);
            }
            assert_eq!(by_code(a.code), Some(a));
            assert_eq!(by_name(a.name), Some(a));
            assert_eq!(by_name(&format!("0x{:04x}", a.code)), Some(a));
        }
        assert!(ALL.windows(2).all(|w| w[0].code < w[1].code));
    }

    #[test]
    fn grease_values() {
        let grease: Vec<u16> = (0..=u16::MAX).filter(|&c| is_grease(c)).collect();
        assert_eq!(grease.len(), 16);
        assert_eq!(grease.first(), Some(&0x0a0a));
        assert_eq!(grease.last(), Some(&0xfafa));
        assert!(!is_grease(0x001d) && !is_grease(0x0a0b));
    }

    #[test]
    fn post_quantum_and_tls12() {
        assert!(by_name("X25519MLKEM768").is_some_and(Group::post_quantum));
        assert!(by_name("X25519Kyber768Draft00").is_some_and(Group::post_quantum));
        assert!(!by_name("X25519").is_some_and(Group::post_quantum));
        assert!(by_name("secp384r1").is_some_and(|g| g.tls12));
        assert!(!by_name("ffdhe2048").is_some_and(|g| g.tls12));
        assert_eq!(openssl30_default().len(), 10);
        assert_eq!(hex_code("0x11ec"), Some(0x11ec));
        assert_eq!(hex_code("11ec"), None);
        assert_eq!(hex_code("0x11ec1"), None);
    }
}
