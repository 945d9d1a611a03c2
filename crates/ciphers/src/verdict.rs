//! Verdict rules for protocols and cipher suites.
//!
//! One rule set, a synthesis of SSL Labs, testssl.sh, ciphersuite.info and Mozilla's
//! Server Side TLS guidelines, applied to a suite's *fields* (not its name), so the
//! fields a verdict came from can be shown next to it. `scripts/gen-ciphers.py` applies
//! the same rules to fill the catalogue's `verdict` column, and a test checks that every
//! row agrees with [`suite_verdict`].
//!
//! Rules are tried top to bottom; the first row whose condition holds decides.
//!
//! | verdict | cipher suite (any of) | protocol |
//! |---|---|---|
//! | insecure | SSLv2 suite (three-byte code); no encryption (`enc = None`); anonymous (`au = None`: ADH, AECDH, aNULL); export grade (EXP, EXP1024); single DES or DES40; RC2; RC4; MD5 MAC | SSLv2 (RFC 6176), SSLv3 (RFC 7568) |
//! | weak | 3DES or IDEA (64-bit blocks); not AEAD (CBC or stream); SHA-1 MAC; no forward secrecy (key exchange RSA, static DH/ECDH, PSK, RSA-PSK, KRB5, SRP, GOST); GOST or SM4 (by policy: not in mainstream guidance) | TLSv1, TLSv1.1 (RFC 8996) |
//! | recommended | IANA-registered AES-GCM or ChaCha20-Poly1305 suite that is TLS 1.3, or TLS 1.2 ECDHE with RSA or ECDSA authentication (Mozilla intermediate) | TLSv1.3 |
//! | secure | everything else, i.e. forward secrecy + AEAD: DHE key exchange, CCM/CCM8, ARIA-GCM, Camellia-GCM, ECDHE-PSK/DHE-PSK, ECCPWD, AEGIS, draft ChaCha20 codes | TLSv1.2 |
//!
//! Choices where the sources disagree:
//! - DHE with AEAD is **secure**, not weak: ciphersuite.info calls DHE weak (the DHEat
//!   denial of service); Mozilla intermediate 5.7 still lists DHE-RSA AES-GCM/ChaCha20.
//! - ECDHE-RSA with AES-GCM is **recommended**: ciphersuite.info only says "secure"
//!   because of RSA authentication; Mozilla intermediate lists it first.
//! - TLS 1.3 CCM and CCM8 are **secure**, not recommended: IANA does not recommend CCM8
//!   and no mainstream profile enables either.
//! - Forward secrecy is the reference's rule (ECDHE, DHE/EDH, ECCPWD, or TLS 1.3). SRP
//!   is a PAKE with ephemeral values but is not counted; it is CBC with SHA-1 anyway.
//! - The pre-RFC 7905 ChaCha20 code points (`...-CHACHA20-POLY1305-OLD`, 0xCC13-0xCC15)
//!   are **secure** at most: "recommended" requires an IANA-registered code point.
//! - Pre-TLS 1.3 key exchanges are judged per suite; the protocol is judged separately by
//!   [`protocol_verdict`]. A connection's overall verdict is the lower of the two
//!   ([`connection_verdict`]).

use serde::Serialize;

use crate::suite::{Mode, Protocol, Suite};

/// How a protocol or suite is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Broken: must not be used.
    Insecure,
    /// Deprecated or lacking a property (forward secrecy, AEAD).
    Weak,
    /// Acceptable.
    Secure,
    /// What current guidance recommends.
    Recommended,
    /// Not a name the rules know.
    Unknown,
}

impl Verdict {
    /// The lower-case name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Insecure => "insecure",
            Verdict::Weak => "weak",
            Verdict::Secure => "secure",
            Verdict::Recommended => "recommended",
            Verdict::Unknown => "unknown",
        }
    }
}

/// The verdict of a protocol as OpenSSL, GnuTLS or a person writes it (`TLSv1.2`,
/// `TLS1.2`, `SSLv3`, ...); [`Verdict::Unknown`] for anything else.
pub fn protocol_verdict(protocol: &str) -> Verdict {
    match Protocol::parse(protocol) {
        Some(Protocol::SslV2 | Protocol::SslV3) => Verdict::Insecure,
        Some(Protocol::TlsV1 | Protocol::TlsV1_1) => Verdict::Weak,
        Some(Protocol::TlsV1_2) => Verdict::Secure,
        Some(Protocol::TlsV1_3) => Verdict::Recommended,
        None => Verdict::Unknown,
    }
}

/// The verdict of a suite under the rule table above, computed from its fields
/// (`verdict` itself is ignored).
pub fn suite_verdict(suite: &Suite) -> Verdict {
    suite_verdict_reason(suite).0
}

/// The verdict of a suite and the rule that decided it (`"RC4"`, `"no forward secrecy"`,
/// ...), for showing users why.
pub fn suite_verdict_reason(suite: &Suite) -> (Verdict, &'static str) {
    if let Some(reason) = insecure_reason(suite) {
        return (Verdict::Insecure, reason);
    }
    if let Some(reason) = weak_reason(suite) {
        return (Verdict::Weak, reason);
    }
    let modern_aead = matches!(suite.enc.as_str(), "AESGCM" | "CHACHA20/POLY1305");
    let ecdhe_signed = suite.kx == "ECDH" && matches!(suite.au.as_str(), "RSA" | "ECDSA");
    if suite.iana.is_some() && modern_aead && suite.min_protocol == Protocol::TlsV1_3 {
        return (Verdict::Recommended, "TLS 1.3 AES-GCM/ChaCha20-Poly1305");
    }
    if suite.iana.is_some() && modern_aead && ecdhe_signed {
        return (Verdict::Recommended, "ECDHE with AES-GCM/ChaCha20-Poly1305");
    }
    (Verdict::Secure, "forward secrecy and AEAD")
}

/// The lower of [`protocol_verdict`] and the suite's verdict: what a logged
/// (protocol, suite) pair amounts to. [`Verdict::Unknown`] if either is unknown.
pub fn connection_verdict(protocol: &str, suite: &Suite) -> Verdict {
    let p = protocol_verdict(protocol);
    if p == Verdict::Unknown || suite.verdict == Verdict::Unknown {
        return Verdict::Unknown;
    }
    p.min(suite.verdict)
}

fn insecure_reason(s: &Suite) -> Option<&'static str> {
    Some(if s.sslv2_code || s.min_protocol == Protocol::SslV2 {
        "SSLv2 suite"
    } else if s.enc == "None" || s.mode == Mode::Null {
        "no encryption"
    } else if s.au == "None" {
        "anonymous (no authentication)"
    } else if s.export {
        "export grade"
    } else if s.enc == "DES" {
        "single DES"
    } else if s.enc == "RC2" {
        "RC2"
    } else if s.enc == "RC4" {
        "RC4"
    } else if s.mac == "MD5" {
        "MD5 MAC"
    } else {
        return None;
    })
}

const GOST_SM4_ENCS: &[&str] = &[
    "GOST89",
    "KUZNYECHIK",
    "MAGMA",
    "KUZNYECHIKMGM",
    "MAGMAMGM",
    "SM4GCM",
    "SM4CCM",
];

fn weak_reason(s: &Suite) -> Option<&'static str> {
    Some(if s.enc == "3DES" {
        "3DES (64-bit block)"
    } else if s.enc == "IDEA" {
        "IDEA (64-bit block)"
    } else if GOST_SM4_ENCS.contains(&s.enc.as_str())
        || s.kx.starts_with("GOST")
        || s.au.starts_with("GOST")
    {
        "GOST/SM4 (policy)"
    } else if s.mode != Mode::Aead || !s.aead {
        "not AEAD"
    } else if s.mac == "SHA1" {
        "SHA-1 MAC"
    } else if !s.forward_secrecy {
        "no forward secrecy"
    } else {
        return None;
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::StrengthClass;

    fn suite(kx: &str, au: &str, enc: &str, mode: Mode, mac: &str, fs: bool) -> Suite {
        Suite {
            code: 0xC02F,
            sslv2_code: false,
            iana: Some("TLS_TEST".into()),
            openssl: vec!["TEST".into()],
            min_protocol: Protocol::TlsV1_2,
            kx: kx.into(),
            au: au.into(),
            enc: enc.into(),
            mode,
            key_bits: 128,
            strength_bits: 128,
            mac: mac.into(),
            forward_secrecy: fs,
            aead: mode == Mode::Aead,
            export: false,
            iana_recommended: None,
            verdict: Verdict::Unknown,
            strength_class: StrengthClass::High,
            in_openssl3: true,
        }
    }

    #[test]
    fn reasons_name_the_deciding_rule() {
        let good = suite("ECDH", "RSA", "AESGCM", Mode::Aead, "AEAD", true);
        assert_eq!(
            suite_verdict_reason(&good),
            (Verdict::Recommended, "ECDHE with AES-GCM/ChaCha20-Poly1305")
        );
        let rc4 = suite("RSA", "RSA", "RC4", Mode::Stream, "MD5", false);
        assert_eq!(suite_verdict_reason(&rc4), (Verdict::Insecure, "RC4"));
        let cbc = suite("ECDH", "RSA", "AES", Mode::Cbc, "SHA256", true);
        assert_eq!(suite_verdict_reason(&cbc), (Verdict::Weak, "not AEAD"));
    }

    #[test]
    fn connection_is_the_lower_of_protocol_and_suite() {
        let mut good = suite("ECDH", "RSA", "AESGCM", Mode::Aead, "AEAD", true);
        good.verdict = Verdict::Recommended;
        assert_eq!(connection_verdict("TLSv1.2", &good), Verdict::Secure);
        assert_eq!(connection_verdict("TLSv1", &good), Verdict::Weak);
        assert_eq!(connection_verdict("QUIC", &good), Verdict::Unknown);
    }
}
