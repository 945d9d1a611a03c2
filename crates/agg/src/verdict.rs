//! Verdicts for the protocols and suites a log names, backed by the catalogue in
//! `tlsgap-ciphers` (its rule table is documented there).
//!
//! A name the catalogue does not know is `unknown`: counted and listed, never dropped.

use serde::Serialize;
use tlsgap_ciphers::{catalogue, Suite};

pub use tlsgap_ciphers::verdict::protocol_verdict;
pub use tlsgap_ciphers::Verdict;

/// What the catalogue says of a logged suite.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CipherFacts {
    /// The verdict.
    pub verdict: Verdict,
    /// Ephemeral key exchange (ECDHE, DHE, or any TLS 1.3 suite).
    pub forward_secrecy: Option<bool>,
    /// Authenticated encryption.
    pub aead: Option<bool>,
    /// Effective strength in bits (3DES: 112).
    pub bits: Option<u16>,
    /// The catalogue row, when known.
    #[serde(skip)]
    pub suite: Option<&'static Suite>,
}

/// Judge the suite `cipher` negotiated under `protocol` (both as logged).
pub fn cipher_facts(protocol: &str, cipher: &str) -> CipherFacts {
    match catalogue::lookup(protocol, cipher) {
        Some(s) => CipherFacts {
            verdict: s.verdict,
            forward_secrecy: Some(s.forward_secrecy),
            aead: Some(s.aead),
            bits: Some(s.strength_bits),
            suite: Some(s),
        },
        None => CipherFacts {
            verdict: Verdict::Unknown,
            forward_secrecy: None,
            aead: None,
            bits: None,
            suite: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_come_from_the_catalogue() {
        let f = cipher_facts("TLSv1.2", "ECDHE-RSA-AES128-SHA");
        assert_eq!((f.forward_secrecy, f.aead), (Some(true), Some(false)));
        assert_eq!(f.verdict, Verdict::Weak);
        let f = cipher_facts("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256");
        assert_eq!(
            (f.forward_secrecy, f.aead, f.bits),
            (Some(true), Some(true), Some(256))
        );
        assert_eq!(f.verdict, Verdict::Recommended);
        let f = cipher_facts("TLSv1.2", "AES256-GCM-SHA384");
        assert_eq!((f.forward_secrecy, f.aead), (Some(false), Some(true)));
        let f = cipher_facts("TLSv1", "DES-CBC3-SHA");
        assert_eq!(f.bits, Some(112));
        assert_eq!(cipher_facts("SSLv2", "RC4-MD5").verdict, Verdict::Insecure);
    }

    #[test]
    fn unknown_names_are_unknown() {
        let f = cipher_facts("TLSv1.2", "WHATEVER");
        assert_eq!(f.verdict, Verdict::Unknown);
        assert_eq!((f.forward_secrecy, f.aead, f.bits), (None, None, None));
    }
}
