//! The catalogue against the reference's rule table and name list, and against the
//! local `openssl ciphers` (the oracle for every suite OpenSSL still knows).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;

use tlsgap_ciphers::catalogue::{self, all, by_code, by_name, lookup};
use tlsgap_ciphers::suite::StrengthClass;
use tlsgap_ciphers::verdict::{protocol_verdict, suite_verdict, suite_verdict_reason};
use tlsgap_ciphers::{Mode, Protocol, Suite, Verdict};

fn get(protocol: &str, name: &str) -> &'static Suite {
    lookup(protocol, name).unwrap_or_else(|| panic!("{protocol} {name} not in the catalogue"))
}

fn verdict_of(protocol: &str, name: &str) -> Verdict {
    get(protocol, name).verdict
}

// ---------------------------------------------------------------------------
// The table itself

#[test]
fn every_row_verdict_equals_the_computed_verdict() {
    assert!(all().len() > 350, "{} suites", all().len());
    for s in all() {
        assert_eq!(
            s.verdict,
            suite_verdict(s),
            "{:#06x} {:?} {:?}: CSV verdict differs from the rules ({:?})",
            s.code,
            s.iana,
            s.openssl,
            suite_verdict_reason(s)
        );
    }
}

#[test]
fn rows_are_consistent() {
    let mut codes = BTreeSet::new();
    for s in all() {
        assert!(codes.insert(s.code), "duplicate code {:#x}", s.code);
        assert_eq!(by_code(s.code), Some(s));
        assert_eq!(s.aead, s.mode == Mode::Aead, "{s:?}");
        assert_eq!(s.mode == Mode::Null, s.enc == "None", "{s:?}");
        assert_eq!(s.sslv2_code, s.min_protocol == Protocol::SslV2, "{s:?}");
        assert_eq!(s.sslv2_code, s.code > 0xFFFF, "{s:?}");
        assert!(s.iana.is_some() || !s.openssl.is_empty(), "nameless {s:?}");
        assert!(s.strength_bits <= s.key_bits, "{s:?}");
        if s.enc == "3DES" {
            assert_eq!((s.key_bits, s.strength_bits), (168, 112), "{s:?}");
        }
        if s.export {
            assert!(matches!(s.strength_bits, 40 | 56), "{s:?}");
            assert_eq!(s.strength_class, StrengthClass::Export, "{s:?}");
        }
        if s.min_protocol == Protocol::TlsV1_3 {
            assert!(s.forward_secrecy, "{s:?}");
        }
        for name in s.openssl.iter().chain(s.iana.iter()) {
            assert!(by_name(name).contains(&s), "{name} does not find its suite");
        }
    }
}

#[test]
fn every_iana_registered_suite_is_present() {
    // Spot checks across the registry, including ones no OpenSSL ever named.
    for (code, iana) in [
        (0x0000, "TLS_NULL_WITH_NULL_NULL"),
        (0x0042, "TLS_DH_DSS_WITH_CAMELLIA_128_CBC_SHA"),
        (0xC03C, "TLS_RSA_WITH_ARIA_128_CBC_SHA256"),
        (0xC0B0, "TLS_ECCPWD_WITH_AES_128_GCM_SHA256"),
        (0xC103, "TLS_GOSTR341112_256_WITH_KUZNYECHIK_MGM_L"),
        (0xD001, "TLS_ECDHE_PSK_WITH_AES_128_GCM_SHA256"),
        (0x1306, "TLS_AEGIS_256_SHA384"),
    ] {
        let s = by_code(code).unwrap_or_else(|| panic!("{code:#06x} missing"));
        assert_eq!(s.iana.as_deref(), Some(iana));
    }
    // Signalling values are not suites.
    assert!(by_code(0x00FF).is_none());
    assert!(by_code(0x5600).is_none());
    assert!(lookup("TLSv1.2", "TLS_FALLBACK_SCSV").is_none());
}

// ---------------------------------------------------------------------------
// Rule table: every cipher condition and every protocol, on real suites ...

#[test]
fn insecure_suites() {
    for (proto, name, reason) in [
        ("TLSv1.2", "NULL-SHA", "no encryption"),
        ("TLSv1.2", "NULL-SHA256", "no encryption"),
        ("TLSv1.2", "ECDHE-RSA-NULL-SHA", "no encryption"),
        ("TLSv1.3", "TLS_SHA256_SHA256", "no encryption"),
        (
            "TLSv1.2",
            "ADH-AES256-GCM-SHA384",
            "anonymous (no authentication)",
        ),
        (
            "TLSv1.2",
            "AECDH-AES128-SHA",
            "anonymous (no authentication)",
        ),
        ("TLSv1", "EXP-DES-CBC-SHA", "export grade"),
        ("TLSv1", "EXP-EDH-RSA-DES-CBC-SHA", "export grade"),
        ("TLSv1", "EXP1024-RC4-SHA", "export grade"),
        ("TLSv1", "EXP1024-DHE-DSS-DES-CBC-SHA", "export grade"),
        ("TLSv1", "DES-CBC-SHA", "single DES"),
        ("TLSv1", "EDH-RSA-DES-CBC-SHA", "single DES"),
        ("TLSv1", "RC4-SHA", "RC4"),
        ("TLSv1.2", "ECDHE-RSA-RC4-SHA", "RC4"),
        ("TLSv1", "RC4-MD5", "RC4"),
        ("TLSv1", "GOST-MD5", "MD5 MAC"),
        ("TLSv1", "KRB5-DES-CBC3-MD5", "MD5 MAC"),
        ("SSLv2", "DES-CBC3-MD5", "SSLv2 suite"),
        ("SSLv2", "RC2-CBC-MD5", "SSLv2 suite"),
        ("SSLv2", "IDEA-CBC-MD5", "SSLv2 suite"),
    ] {
        let s = get(proto, name);
        assert_eq!(s.verdict, Verdict::Insecure, "{name}");
        assert_eq!(suite_verdict_reason(s).1, reason, "{name}");
    }
    // RC2 outside SSLv2 only ever came as export; the RC2 rule itself is tested below.
    assert_eq!(verdict_of("TLSv1", "EXP-RC2-CBC-MD5"), Verdict::Insecure);
}

#[test]
fn weak_suites() {
    for (proto, name, reason) in [
        ("TLSv1", "DES-CBC3-SHA", "3DES (64-bit block)"),
        ("TLSv1", "EDH-RSA-DES-CBC3-SHA", "3DES (64-bit block)"),
        ("TLSv1.2", "ECDHE-RSA-DES-CBC3-SHA", "3DES (64-bit block)"),
        ("TLSv1", "IDEA-CBC-SHA", "IDEA (64-bit block)"),
        ("TLSv1.2", "ECDHE-RSA-AES128-SHA256", "not AEAD"),
        ("TLSv1.2", "DHE-RSA-CAMELLIA256-SHA256", "not AEAD"),
        ("TLSv1", "ECDHE-RSA-AES128-SHA", "not AEAD"),
        ("TLSv1.2", "AES128-GCM-SHA256", "no forward secrecy"),
        (
            "TLSv1.2",
            "ECDH-RSA-AES128-GCM-SHA256",
            "no forward secrecy",
        ),
        ("TLSv1.2", "DH-DSS-AES256-GCM-SHA384", "no forward secrecy"),
        ("TLSv1.2", "PSK-AES128-GCM-SHA256", "no forward secrecy"),
        ("TLSv1.2", "RSA-PSK-CHACHA20-POLY1305", "no forward secrecy"),
        ("TLSv1", "GOST2001-GOST89-GOST89", "GOST/SM4 (policy)"),
        (
            "TLSv1.2",
            "GOST2012-KUZNYECHIK-KUZNYECHIKOMAC",
            "GOST/SM4 (policy)",
        ),
        (
            "TLSv1.3",
            "TLS_GOSTR341112_256_WITH_MAGMA_MGM_L",
            "GOST/SM4 (policy)",
        ),
        ("TLSv1.3", "TLS_SM4_GCM_SM3", "GOST/SM4 (policy)"),
        ("TLSv1.3", "TLS_SM4_CCM_SM3", "GOST/SM4 (policy)"),
    ] {
        let s = get(proto, name);
        assert_eq!(s.verdict, Verdict::Weak, "{name}");
        assert_eq!(suite_verdict_reason(s).1, reason, "{name}");
    }
}

#[test]
fn secure_suites() {
    for (proto, name) in [
        ("TLSv1.2", "DHE-RSA-AES256-GCM-SHA384"),
        ("TLSv1.2", "DHE-RSA-CHACHA20-POLY1305"),
        ("TLSv1.2", "ECDHE-ECDSA-AES128-CCM"),
        ("TLSv1.2", "ECDHE-ECDSA-AES256-CCM8"),
        ("TLSv1.2", "ECDHE-ARIA128-GCM-SHA256"),
        ("TLSv1.2", "ECDHE-PSK-CHACHA20-POLY1305"),
        ("TLSv1.2", "DHE-PSK-AES128-GCM-SHA256"),
        ("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305-OLD"),
        ("TLSv1.3", "TLS_AES_128_CCM_SHA256"),
        ("TLSv1.3", "TLS_AES_128_CCM_8_SHA256"),
        ("TLSv1.3", "TLS_AEGIS_128L_SHA256"),
    ] {
        assert_eq!(verdict_of(proto, name), Verdict::Secure, "{name}");
    }
}

#[test]
fn recommended_suites() {
    for (proto, name) in [
        ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"),
        ("TLSv1.2", "ECDHE-ECDSA-AES128-GCM-SHA256"),
        ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384"),
        ("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305"),
        ("TLSv1.2", "ECDHE-ECDSA-CHACHA20-POLY1305"),
        ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
        ("TLSv1.3", "TLS_AES_256_GCM_SHA384"),
        ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
    ] {
        assert_eq!(verdict_of(proto, name), Verdict::Recommended, "{name}");
    }
    let n = all()
        .iter()
        .filter(|s| s.verdict == Verdict::Recommended)
        .count();
    assert_eq!(n, 9, "only the nine suites above are recommended");
}

// ... and each condition in isolation, by changing one field of a recommended suite.

fn mutated(change: impl FnOnce(&mut Suite)) -> Verdict {
    let mut s = get("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256").clone();
    assert_eq!(suite_verdict(&s), Verdict::Recommended);
    change(&mut s);
    suite_verdict(&s)
}

#[test]
fn each_condition_alone_decides() {
    use Verdict::*;
    // insecure
    assert_eq!(mutated(|s| s.sslv2_code = true), Insecure, "SSLv2 code");
    assert_eq!(
        mutated(|s| s.min_protocol = Protocol::SslV2),
        Insecure,
        "SSLv2 suite"
    );
    assert_eq!(
        mutated(|s| {
            s.enc = "None".into();
            s.mode = Mode::Null;
            s.aead = false;
        }),
        Insecure,
        "NULL"
    );
    assert_eq!(mutated(|s| s.au = "None".into()), Insecure, "anonymous");
    assert_eq!(mutated(|s| s.export = true), Insecure, "export");
    assert_eq!(mutated(|s| s.enc = "DES".into()), Insecure, "DES");
    assert_eq!(mutated(|s| s.enc = "RC2".into()), Insecure, "RC2");
    assert_eq!(mutated(|s| s.enc = "RC4".into()), Insecure, "RC4");
    assert_eq!(mutated(|s| s.mac = "MD5".into()), Insecure, "MD5");
    // weak
    assert_eq!(mutated(|s| s.enc = "3DES".into()), Weak, "3DES");
    assert_eq!(mutated(|s| s.enc = "IDEA".into()), Weak, "IDEA");
    assert_eq!(
        mutated(|s| {
            s.enc = "AES".into();
            s.mode = Mode::Cbc;
            s.aead = false;
            s.mac = "SHA256".into();
        }),
        Weak,
        "CBC"
    );
    assert_eq!(mutated(|s| s.mac = "SHA1".into()), Weak, "SHA-1");
    assert_eq!(
        mutated(|s| {
            s.kx = "RSA".into();
            s.forward_secrecy = false;
        }),
        Weak,
        "no forward secrecy"
    );
    assert_eq!(mutated(|s| s.enc = "SM4GCM".into()), Weak, "SM4");
    assert_eq!(mutated(|s| s.au = "GOST12".into()), Weak, "GOST");
    // secure
    assert_eq!(mutated(|s| s.kx = "DH".into()), Secure, "DHE");
    assert_eq!(mutated(|s| s.enc = "AESCCM".into()), Secure, "CCM");
    assert_eq!(mutated(|s| s.enc = "AESCCM8".into()), Secure, "CCM8");
    assert_eq!(mutated(|s| s.iana = None), Secure, "draft code point");
    // recommended
    assert_eq!(
        mutated(|s| {
            s.kx = "any".into();
            s.au = "any".into();
            s.min_protocol = Protocol::TlsV1_3;
        }),
        Recommended,
        "TLS 1.3 AES-GCM"
    );
    assert_eq!(
        mutated(|s| s.enc = "CHACHA20/POLY1305".into()),
        Recommended,
        "ChaCha20"
    );
}

#[test]
fn protocols() {
    for (p, v) in [
        ("SSLv2", Verdict::Insecure),
        ("SSLv3", Verdict::Insecure),
        ("SSL3.0", Verdict::Insecure),
        ("TLSv1", Verdict::Weak),
        ("TLSv1.0", Verdict::Weak),
        ("TLS1.0", Verdict::Weak),
        ("TLSv1.1", Verdict::Weak),
        ("TLS1.1", Verdict::Weak),
        ("TLSv1.2", Verdict::Secure),
        ("TLS1.2", Verdict::Secure),
        ("TLSv1.3", Verdict::Recommended),
        ("TLS1.3", Verdict::Recommended),
        ("QUIC", Verdict::Unknown),
        ("-", Verdict::Unknown),
        ("", Verdict::Unknown),
        ("tlsv1.2", Verdict::Unknown),
    ] {
        assert_eq!(protocol_verdict(p), v, "{p:?}");
    }
}

// ---------------------------------------------------------------------------
// Names the reference says the table must know

#[test]
fn sslv2_names() {
    for (name, code) in [
        ("RC4-MD5", 0x010080),
        ("EXP-RC4-MD5", 0x020080),
        ("RC2-CBC-MD5", 0x030080),
        ("EXP-RC2-CBC-MD5", 0x040080),
        ("IDEA-CBC-MD5", 0x050080),
        ("DES-CBC-MD5", 0x060040),
        ("DES-CBC3-MD5", 0x0700C0),
        ("RC4-64-MD5", 0x080080),
    ] {
        let s = get("SSLv2", name);
        assert_eq!(s.code, code, "{name}");
        assert!(s.sslv2_code && s.min_protocol == Protocol::SslV2, "{name}");
        assert_eq!(s.verdict, Verdict::Insecure, "{name}");
    }
}

#[test]
fn sslv2_tls_name_collision_resolves_by_protocol() {
    let v2 = get("SSLv2", "RC4-MD5");
    assert_eq!((v2.code, v2.sslv2_code), (0x010080, true));
    for proto in ["SSLv3", "TLSv1", "TLSv1.2", "TLS1.2", "", "garbage"] {
        let s = get(proto, "RC4-MD5");
        assert_eq!((s.code, s.sslv2_code), (0x0004, false), "{proto:?}");
        assert_eq!(s.iana.as_deref(), Some("TLS_RSA_WITH_RC4_128_MD5"));
    }
    assert_eq!(get("SSLv2", "EXP-RC4-MD5").code, 0x020080);
    assert_eq!(get("TLSv1", "EXP-RC4-MD5").code, 0x0003);
    assert_eq!(get("SSLv2", "EXP-RC2-CBC-MD5").code, 0x040080);
    assert_eq!(get("TLSv1", "EXP-RC2-CBC-MD5").code, 0x0006);
    let both: Vec<u32> = by_name("RC4-MD5").iter().map(|s| s.code).collect();
    assert_eq!(both, [0x0004, 0x010080]);
    // A name only one side has resolves to it whatever the protocol says.
    assert_eq!(get("TLSv1", "DES-CBC3-MD5").code, 0x0700C0);
    assert_eq!(get("SSLv2", "AES128-SHA").code, 0x002F);
}

#[test]
fn export_names() {
    for (name, code) in [
        ("EXP-DES-CBC-SHA", 0x0008),
        ("EXP-DH-DSS-DES-CBC-SHA", 0x000B),
        ("EXP-DH-RSA-DES-CBC-SHA", 0x000E),
        ("EXP-EDH-DSS-DES-CBC-SHA", 0x0011),
        ("EXP-EDH-RSA-DES-CBC-SHA", 0x0014),
        ("EXP-ADH-RC4-MD5", 0x0017),
        ("EXP-ADH-DES-CBC-SHA", 0x0019),
        ("EXP-KRB5-RC4-SHA", 0x0028),
        ("EXP1024-RC4-MD5", 0x0060),
        ("EXP1024-RC2-CBC-MD5", 0x0061),
        ("EXP1024-DES-CBC-SHA", 0x0062),
        ("EXP1024-DHE-DSS-DES-CBC-SHA", 0x0063),
        ("EXP1024-RC4-SHA", 0x0064),
        ("EXP1024-DHE-DSS-RC4-SHA", 0x0065),
    ] {
        let s = get("TLSv1", name);
        assert_eq!(s.code, code, "{name}");
        assert!(s.export, "{name}");
        let bits = if name.starts_with("EXP1024") { 56 } else { 40 };
        assert_eq!(s.strength_bits, bits, "{name}");
    }
}

#[test]
fn edh_aliases() {
    for (edh, dhe, code) in [
        ("EDH-RSA-DES-CBC3-SHA", Some("DHE-RSA-DES-CBC3-SHA"), 0x0016),
        ("EDH-DSS-DES-CBC3-SHA", Some("DHE-DSS-DES-CBC3-SHA"), 0x0013),
        ("EDH-RSA-DES-CBC-SHA", None, 0x0015),
        ("EDH-DSS-DES-CBC-SHA", None, 0x0012),
    ] {
        let s = get("TLSv1", edh);
        assert_eq!(s.code, code, "{edh}");
        assert!(s.openssl.iter().any(|n| n == edh));
        assert!(s.forward_secrecy, "{edh}");
        if let Some(dhe) = dhe {
            assert_eq!(get("TLSv1", dhe), s);
            assert_eq!(s.openssl[0], dhe, "current name first");
        }
    }
}

#[test]
fn other_legacy_families() {
    for (name, code) in [
        ("ADH-AES128-SHA", 0x0034),
        ("ADH-DES-CBC3-SHA", 0x001B),
        ("ADH-RC4-MD5", 0x0018),
        ("ADH-SEED-SHA", 0x009B),
        ("AECDH-AES256-SHA", 0xC019),
        ("AECDH-RC4-SHA", 0xC016),
        ("AECDH-NULL-SHA", 0xC015),
        ("PSK-AES128-CBC-SHA", 0x008C),
        ("PSK-RC4-SHA", 0x008A),
        ("PSK-3DES-EDE-CBC-SHA", 0x008B),
        ("DHE-PSK-AES256-GCM-SHA384", 0x00AB),
        ("DHE-PSK-3DES-EDE-CBC-SHA", 0x008F),
        ("RSA-PSK-AES128-GCM-SHA256", 0x00AC),
        ("RSA-PSK-RC4-SHA", 0x0092),
        ("ECDHE-PSK-AES128-CBC-SHA", 0xC035),
        ("ECDHE-PSK-3DES-EDE-CBC-SHA", 0xC034),
        ("SRP-AES-128-CBC-SHA", 0xC01D),
        ("SRP-RSA-AES-256-CBC-SHA", 0xC021),
        ("SRP-3DES-EDE-CBC-SHA", 0xC01A),
        ("SRP-DSS-3DES-EDE-CBC-SHA", 0xC01C),
        ("KRB5-DES-CBC-SHA", 0x001E),
        ("KRB5-DES-CBC3-SHA", 0x001F),
        ("KRB5-RC4-MD5", 0x0024),
        ("KRB5-IDEA-CBC-SHA", 0x0021),
        ("GOST2001-GOST89-GOST89", 0x0081),
        ("GOST94-GOST89-GOST89", 0x0080),
        ("GOST-MD5", 0xFF00),
        ("GOST-GOST94", 0xFF01),
        ("GOST2012-GOST8912-GOST8912", 0xFF85),
        ("LEGACY-GOST2012-GOST8912-GOST8912", 0xFF85),
        ("IANA-GOST2012-GOST8912-GOST8912", 0xC102),
        ("ECDHE-RSA-CHACHA20-POLY1305-OLD", 0xCC13),
        ("ECDHE-ECDSA-CHACHA20-POLY1305-OLD", 0xCC14),
        ("DHE-RSA-CHACHA20-POLY1305-OLD", 0xCC15),
        ("SEED-SHA", 0x0096),
        ("IDEA-CBC-SHA", 0x0007),
        ("DES-CBC3-SHA", 0x000A),
        ("ECDH-ECDSA-AES128-SHA", 0xC004),
        ("DH-RSA-AES256-SHA", 0x0037),
    ] {
        assert_eq!(get("TLSv1.2", name).code, code, "{name}");
    }
    // The draft ChaCha20 codes are distinct from the RFC 7905 ones.
    assert_eq!(get("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305").code, 0xCCA8);
    assert!(get("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305-OLD")
        .iana
        .is_none());
}

#[test]
fn tls13_names() {
    for (name, code, enc) in [
        ("TLS_AES_128_GCM_SHA256", 0x1301, "AESGCM"),
        ("TLS_AES_256_GCM_SHA384", 0x1302, "AESGCM"),
        ("TLS_CHACHA20_POLY1305_SHA256", 0x1303, "CHACHA20/POLY1305"),
        ("TLS_AES_128_CCM_SHA256", 0x1304, "AESCCM"),
        ("TLS_AES_128_CCM_8_SHA256", 0x1305, "AESCCM8"),
        ("TLS_SM4_GCM_SM3", 0x00C6, "SM4GCM"),
        ("TLS_SM4_CCM_SM3", 0x00C7, "SM4CCM"),
    ] {
        let s = get("TLSv1.3", name);
        assert_eq!((s.code, s.enc.as_str()), (code, enc), "{name}");
        assert_eq!(s.min_protocol, Protocol::TlsV1_3);
        assert!(s.aead && s.forward_secrecy, "{name}");
        assert_eq!(s.iana.as_deref(), Some(name));
        assert_eq!(get("TLS1.3", name), s);
    }
}

#[test]
fn iana_names_and_java_spellings() {
    let s = get("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256");
    assert_eq!(get("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), s);
    assert_eq!(get("TLSv1", "SSL_RSA_WITH_RC4_128_MD5").code, 0x0004);
    assert_eq!(get("TLSv1", "SSL_RSA_WITH_3DES_EDE_CBC_SHA").code, 0x000A);
    // IANA-only suites have no OpenSSL name but are found by their IANA name.
    let aria = get("TLSv1.2", "TLS_RSA_WITH_ARIA_128_CBC_SHA256");
    assert!(aria.openssl.is_empty());
}

#[test]
fn unknown_names_are_none() {
    for name in [
        "",
        "WHATEVER",
        "ecdhe-rsa-aes128-gcm-sha256",
        "ECDHE-RSA-AES128-GCM-SHA256 ",
        "TLS_",
        "SSL_",
        "SSL_NOT_A_SUITE",
        "RC4",
        "-",
    ] {
        assert!(lookup("TLSv1.2", name).is_none(), "{name:?}");
        assert!(by_name(name).is_empty(), "{name:?}");
    }
    assert!(by_code(0x1234).is_none());
    assert!(by_code(0x090080).is_none());
}

// ---------------------------------------------------------------------------
// The local OpenSSL as an oracle

/// Run a tool the test needs (`openssl`, `python3`). Missing, it fails the test, unless
/// `TLSGAP_SKIP_OPENSSL_TESTS=1` (`TLSGAP_SKIP_PY_TESTS=1` for python3) says to skip:
/// then `None`, after a loud SKIPPED line.
fn run(tool: &str, args: &[&str]) -> Option<String> {
    match Command::new(tool).args(args).output() {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => panic!(
            "{tool} {args:?} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            let (var, package) = if tool == "python3" {
                ("TLSGAP_SKIP_PY_TESTS", "python3")
            } else {
                ("TLSGAP_SKIP_OPENSSL_TESTS", tool)
            };
            let skip = std::env::var_os(var).is_some_and(|v| v == "1");
            assert!(
                skip,
                "{tool} is not runnable ({e}): apt-get install {package}, or set {var}=1 to \
                 skip this test"
            );
            // Written to the stderr handle, not with eprintln!, so libtest's output capture
            // does not swallow it for a passing test.
            let msg = format!(
                "\n*** SKIPPED: {var}=1 and `{tool}` is not runnable ({e}); this test checked \
                 nothing ***\n"
            );
            let _ = std::io::Write::write_all(&mut std::io::stderr(), msg.as_bytes());
            None
        }
    }
}

struct OpensslRow {
    code: u32,
    std: String,
    name: String,
    proto: String,
    kx: String,
    au: String,
    enc: String,
    bits: u16,
    mac: String,
}

fn parse_openssl_v(text: &str) -> Vec<OpensslRow> {
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 10, "unexpected openssl line {line:?}");
        let field = |i: usize, key: &str| {
            f[i].strip_prefix(key)
                .unwrap_or_else(|| panic!("{key} missing in {line:?}"))
                .to_string()
        };
        let code = f[0]
            .split(',')
            .map(|b| u32::from_str_radix(b.trim_start_matches("0x"), 16).expect("hex"))
            .fold(0, |acc, b| (acc << 8) | b);
        let enc = field(8, "Enc=");
        let (enc, bits) = match enc.split_once('(') {
            Some((e, b)) => (
                e.to_string(),
                b.trim_end_matches(')').parse().expect("bits"),
            ),
            None => (enc, 0),
        };
        rows.push(OpensslRow {
            code,
            std: f[2].to_string(),
            name: f[4].to_string(),
            proto: f[5].to_string(),
            kx: field(6, "Kx="),
            au: field(7, "Au="),
            enc,
            bits,
            mac: field(9, "Mac="),
        });
    }
    rows
}

fn check_against_openssl(rows: &[OpensslRow]) {
    let mut bad = Vec::new();
    for r in rows {
        let Some(s) = by_code(r.code) else {
            bad.push(format!(
                "{:#06x} {} missing from the catalogue",
                r.code, r.name
            ));
            continue;
        };
        let ours = (
            s.iana.as_deref().unwrap_or(""),
            s.openssl.first().map(String::as_str).unwrap_or(""),
            s.min_protocol.as_str(),
            s.kx.as_str(),
            s.au.as_str(),
            s.enc.as_str(),
            s.key_bits,
            s.mac.as_str(),
        );
        let theirs = (
            r.std.as_str(),
            r.name.as_str(),
            r.proto.as_str(),
            r.kx.as_str(),
            r.au.as_str(),
            r.enc.as_str(),
            r.bits,
            r.mac.as_str(),
        );
        if ours != theirs {
            bad.push(format!(
                "{:#06x}: catalogue {ours:?} != openssl {theirs:?}",
                r.code
            ));
        }
        if lookup(&r.proto, &r.name) != Some(s) {
            bad.push(format!(
                "lookup({}, {}) does not find {:#06x}",
                r.proto, r.name, r.code
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "{} disagreements:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn agrees_with_local_openssl() {
    let args = [
        "ciphers",
        "-V",
        "-stdname",
        "ALL:COMPLEMENTOFALL:@SECLEVEL=0",
    ];
    let Some(out) = run("openssl", &args) else {
        return;
    };
    let rows = parse_openssl_v(&out);
    assert!(rows.len() > 100, "only {} suites from openssl", rows.len());
    check_against_openssl(&rows);

    // TLS 1.3 suites outside OpenSSL's default TLS 1.3 list.
    let ccm = "TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256";
    let args = [
        "ciphers",
        "-V",
        "-stdname",
        "-ciphersuites",
        ccm,
        "NULL-SHA",
    ];
    let out = run("openssl", &args).expect("openssl ran a moment ago");
    let rows13 = parse_openssl_v(&out);
    assert_eq!(rows13.len(), 3);
    check_against_openssl(&rows13);

    // The build the table was generated from: the same suite set, the same HIGH class.
    let version = run("openssl", &["version"]).expect("openssl ran a moment ago");
    if !version.starts_with("OpenSSL 3.0.") {
        // A version difference, not a missing tool: said on the real stderr.
        let msg = format!(
            "\n*** NOTE: local {} is not 3.0: the suite-set comparison was NOT made ***\n",
            version.trim()
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), msg.as_bytes());
        return;
    }
    let local: BTreeSet<u32> = rows.iter().map(|r| r.code).collect();
    let listed: BTreeSet<u32> = all()
        .iter()
        .filter(|s| s.in_openssl3)
        .map(|s| s.code)
        .collect();
    assert_eq!(
        local, listed,
        "in_openssl3 differs from the local OpenSSL 3.0"
    );
    let high_out = run("openssl", &["ciphers", "-V", "HIGH:@SECLEVEL=0"]).expect("openssl");
    let high: BTreeSet<u32> = parse_openssl_v_codes(&high_out);
    let ours: BTreeSet<u32> = all()
        .iter()
        .filter(|s| s.in_openssl3 && s.strength_class == StrengthClass::High)
        .map(|s| s.code)
        .collect();
    assert_eq!(
        high, ours,
        "strength_class HIGH differs from `openssl ciphers HIGH`"
    );
}

/// Codes from `openssl ciphers -V` without `-stdname` (one name column fewer).
fn parse_openssl_v_codes(text: &str) -> BTreeSet<u32> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|c| {
            c.split(',')
                .map(|b| u32::from_str_radix(b.trim_start_matches("0x"), 16).expect("hex"))
                .fold(0, |acc, b| (acc << 8) | b)
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The checked-in CSV is what the generator makes of the checked-in sources

#[test]
fn csv_is_up_to_date_with_its_sources() {
    let root = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../..");
    let script = root.join("scripts/gen-ciphers.py");
    let script = script.to_str().expect("utf-8 path");
    let Some(out) = run("python3", &[script, "--check"]) else {
        return;
    };
    assert!(out.contains("up to date"), "{out}");
    // And the table compiled into this build is that file.
    let on_disk = std::fs::read_to_string(root.join("crates/ciphers/data/ciphers.csv"))
        .expect("read ciphers.csv");
    assert_eq!(on_disk, catalogue::CSV);
}

#[test]
fn verdict_counts_are_plausible() {
    let mut counts: BTreeMap<Verdict, usize> = BTreeMap::new();
    for s in all() {
        *counts.entry(s.verdict).or_default() += 1;
    }
    assert!(!counts.contains_key(&Verdict::Unknown));
    for v in [Verdict::Insecure, Verdict::Weak, Verdict::Secure] {
        assert!(counts.get(&v).copied().unwrap_or(0) > 10, "{counts:?}");
    }
}
