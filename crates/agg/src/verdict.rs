//! Verdicts for protocols and cipher suites, derived from the names servers log.
//!
//! The rule table is the one in the project's reference (a synthesis of SSL Labs,
//! testssl.sh, ciphersuite.info and Mozilla), applied to the structure of OpenSSL and
//! IANA suite names:
//!
//! | verdict | cipher | protocol |
//! |---|---|---|
//! | insecure | NULL, anonymous (ADH/AECDH), EXPORT, single DES, RC2, RC4, MD5 MAC, any SSLv2 suite | SSLv2, SSLv3 |
//! | weak | 3DES, IDEA, CBC mode, SHA-1 MAC, no forward secrecy, GOST/SM4 | TLSv1, TLSv1.1 |
//! | secure | forward secrecy + AEAD otherwise (DHE key exchange, CCM) | TLSv1.2 |
//! | recommended | TLS 1.3 AES-GCM/ChaCha20 suites; ECDHE with AES-GCM or ChaCha20-Poly1305 | TLSv1.3 |
//!
//! Names that do not look like a suite are `unknown`: counted and listed, never dropped.

use serde::Serialize;

pub use tlsgap_ciphers::Verdict;

/// The verdict of a protocol name as OpenSSL (or GnuTLS) writes it.
pub fn protocol_verdict(protocol: &str) -> Verdict {
    match protocol {
        "SSLv2" | "SSLv3" | "SSL3.0" => Verdict::Insecure,
        "TLSv1" | "TLSv1.0" | "TLSv1.1" | "TLS1.0" | "TLS1.1" => Verdict::Weak,
        "TLSv1.2" | "TLS1.2" => Verdict::Secure,
        "TLSv1.3" | "TLS1.3" => Verdict::Recommended,
        _ => Verdict::Unknown,
    }
}

/// What the name of a suite tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CipherFacts {
    /// The verdict under the rule table above.
    pub verdict: Verdict,
    /// Ephemeral key exchange (ECDHE, DHE/EDH, or any TLS 1.3 suite).
    pub forward_secrecy: Option<bool>,
    /// Authenticated encryption (GCM, CCM, ChaCha20-Poly1305, all TLS 1.3 suites).
    pub aead: Option<bool>,
}

const UNKNOWN: CipherFacts = CipherFacts {
    verdict: Verdict::Unknown,
    forward_secrecy: None,
    aead: None,
};

const CIPHER_TOKENS: &[&str] = &[
    "AES",
    "AES128",
    "AES256",
    "CHACHA20",
    "CAMELLIA",
    "CAMELLIA128",
    "CAMELLIA256",
    "ARIA",
    "ARIA128",
    "ARIA256",
    "DES",
    "RC4",
    "RC2",
    "IDEA",
    "SEED",
    "NULL",
    "GOST89",
    "GOST",
    "SM4",
    "3DES",
];

/// Judge the suite `cipher` negotiated under `protocol`.
pub fn cipher_facts(protocol: &str, cipher: &str) -> CipherFacts {
    if let Some(rest) = cipher.strip_prefix("TLS_") {
        return tls13_facts(rest);
    }
    let tokens: Vec<&str> = cipher.split('-').collect();
    let has = |t: &str| tokens.contains(&t);
    let known_cipher = tokens
        .iter()
        .any(|t| CIPHER_TOKENS.contains(t) || t.starts_with("AES") || t.starts_with("ARIA"));
    if !known_cipher {
        return UNKNOWN;
    }
    let first = tokens.first().copied().unwrap_or("");
    let fs = matches!(first, "ECDHE" | "DHE" | "EDH" | "ECCPWD")
        || (first == "EXP" && tokens.get(1).is_some_and(|t| *t == "EDH" || *t == "DHE"));
    let chacha = has("CHACHA20") && has("POLY1305");
    let aead = cipher.contains("GCM") || cipher.contains("CCM") || chacha;
    let anonymous = matches!(first, "ADH" | "AECDH") || cipher.contains("-ADH-");
    let export = first == "EXP" || first == "EXP1024" || cipher.starts_with("EXP-");
    let single_des = cipher.contains("DES-CBC-") || cipher.ends_with("DES-CBC");
    let triple_des = cipher.contains("DES-CBC3") || has("3DES");
    let md5 = tokens.last() == Some(&"MD5") || has("MD5");
    let sha1 = tokens.last() == Some(&"SHA");
    let insecure = protocol == "SSLv2"
        || has("NULL")
        || anonymous
        || export
        || single_des
        || cipher.contains("RC2")
        || cipher.contains("RC4")
        || md5;
    let verdict = if insecure {
        Verdict::Insecure
    } else if triple_des
        || has("IDEA")
        || !aead
        || sha1
        || !fs
        || cipher.contains("GOST")
        || cipher.contains("SM4")
    {
        Verdict::Weak
    } else if first == "ECDHE"
        && (chacha || (cipher.contains("AES") && cipher.contains("GCM")))
        && !cipher.contains("PSK")
    {
        Verdict::Recommended
    } else {
        Verdict::Secure
    };
    CipherFacts {
        verdict,
        forward_secrecy: Some(fs),
        aead: Some(aead),
    }
}

fn tls13_facts(rest: &str) -> CipherFacts {
    let verdict = match rest {
        "AES_128_GCM_SHA256" | "AES_256_GCM_SHA384" | "CHACHA20_POLY1305_SHA256" => {
            Verdict::Recommended
        }
        "AES_128_CCM_SHA256" | "AES_128_CCM_8_SHA256" => Verdict::Secure,
        "SM4_GCM_SM3" | "SM4_CCM_SM3" => Verdict::Weak,
        _ => return UNKNOWN,
    };
    CipherFacts {
        verdict,
        forward_secrecy: Some(true),
        aead: Some(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(p: &str, c: &str) -> Verdict {
        cipher_facts(p, c).verdict
    }

    #[test]
    fn rule_table_rows() {
        // insecure
        for c in [
            "NULL-SHA",
            "ADH-AES128-SHA",
            "AECDH-AES256-SHA",
            "EXP-RC4-MD5",
            "EXP1024-DHE-DSS-DES-CBC-SHA",
            "DES-CBC-SHA",
            "RC2-CBC-MD5",
            "RC4-SHA",
            "ECDHE-RSA-RC4-SHA",
        ] {
            assert_eq!(v("TLSv1.2", c), Verdict::Insecure, "{c}");
        }
        assert_eq!(v("SSLv2", "DES-CBC3-MD5"), Verdict::Insecure);
        // weak
        for c in [
            "DES-CBC3-SHA",
            "EDH-RSA-DES-CBC3-SHA",
            "IDEA-CBC-SHA",
            "ECDHE-RSA-AES128-SHA",
            "ECDHE-RSA-AES128-SHA256",
            "AES128-GCM-SHA256",
            "AES128-SHA",
            "PSK-AES128-GCM-SHA256",
            "GOST2001-GOST89-GOST89",
        ] {
            assert_eq!(v("TLSv1.2", c), Verdict::Weak, "{c}");
        }
        assert_eq!(v("TLSv1.3", "TLS_SM4_GCM_SM3"), Verdict::Weak);
        // secure
        for c in [
            "DHE-RSA-AES256-GCM-SHA384",
            "ECDHE-ECDSA-AES128-CCM",
            "DHE-RSA-CHACHA20-POLY1305",
        ] {
            assert_eq!(v("TLSv1.2", c), Verdict::Secure, "{c}");
        }
        assert_eq!(v("TLSv1.3", "TLS_AES_128_CCM_8_SHA256"), Verdict::Secure);
        // recommended
        for c in [
            "ECDHE-RSA-AES128-GCM-SHA256",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            "ECDHE-RSA-CHACHA20-POLY1305",
        ] {
            assert_eq!(v("TLSv1.2", c), Verdict::Recommended, "{c}");
        }
        assert_eq!(v("TLSv1.3", "TLS_AES_256_GCM_SHA384"), Verdict::Recommended);
        // unknown
        assert_eq!(v("TLSv1.2", "WHATEVER"), Verdict::Unknown);
        assert_eq!(cipher_facts("TLSv1.2", "x").forward_secrecy, None);
    }

    #[test]
    fn facts_behind_verdicts() {
        let f = cipher_facts("TLSv1.2", "ECDHE-RSA-AES128-SHA");
        assert_eq!((f.forward_secrecy, f.aead), (Some(true), Some(false)));
        let f = cipher_facts("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256");
        assert_eq!((f.forward_secrecy, f.aead), (Some(true), Some(true)));
        let f = cipher_facts("TLSv1.2", "AES256-GCM-SHA384");
        assert_eq!((f.forward_secrecy, f.aead), (Some(false), Some(true)));
    }

    #[test]
    fn protocols() {
        assert_eq!(protocol_verdict("SSLv3"), Verdict::Insecure);
        assert_eq!(protocol_verdict("TLSv1"), Verdict::Weak);
        assert_eq!(protocol_verdict("TLSv1.1"), Verdict::Weak);
        assert_eq!(protocol_verdict("TLSv1.2"), Verdict::Secure);
        assert_eq!(protocol_verdict("TLSv1.3"), Verdict::Recommended);
        assert_eq!(protocol_verdict("QUIC"), Verdict::Unknown);
    }
}
