//! Policies: Mozilla profiles (guideline 5.7) and Apache/nginx directives.

use tlsgap_ciphers::catalogue;
use tlsgap_ciphers::cipherstring::evaluate_over;
use tlsgap_ciphers::policy::{ConfigOptions, Decision, Policy};
use tlsgap_ciphers::{Protocol, Suite};

use Protocol::{SslV3, TlsV1, TlsV1_1, TlsV1_2, TlsV1_3};

fn names(v: &[&Suite]) -> Vec<String> {
    v.iter().map(|s| s.openssl[0].clone()).collect()
}

fn config(text: &str) -> Policy {
    Policy::from_config(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn config_with(text: &str, default_seclevel: u8, openssl3: bool) -> Policy {
    let options = ConfigOptions {
        default_seclevel,
        openssl3,
    };
    Policy::from_config_with(text, options, catalogue::all()).unwrap()
}

/// The TLS <= 1.2 names `s` enables at security level 2 over the catalogue.
fn string_names(s: &str) -> Vec<String> {
    let suites = catalogue::all();
    let e = evaluate_over(s, suites, 2).unwrap();
    e.order
        .iter()
        .map(|&i| suites[i].openssl[0].clone())
        .collect()
}

const TLS13_MOZILLA: [&str; 3] = [
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

const TLS13_OPENSSL: [&str; 3] = [
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "TLS_AES_128_GCM_SHA256",
];

// --- Mozilla profiles -------------------------------------------------------------------

#[test]
fn mozilla_modern_is_tls13_only() {
    let p = Policy::mozilla("mozilla-modern").unwrap();
    assert_eq!(p.name, "mozilla-modern");
    assert_eq!(p.version.as_deref(), Some("5.7"));
    assert_eq!(p.protocols, vec![TlsV1_3]);
    assert!(p.tls12.is_empty());
    assert_eq!(names(&p.tls13), TLS13_MOZILLA);
}

#[test]
fn mozilla_intermediate_57() {
    let p = Policy::mozilla("mozilla-intermediate").unwrap();
    assert_eq!(p.version.as_deref(), Some("5.7"));
    assert_eq!(p.protocols, vec![TlsV1_2, TlsV1_3]);
    assert_eq!(
        names(&p.tls12),
        [
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            "ECDHE-RSA-AES128-GCM-SHA256",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            "ECDHE-RSA-AES256-GCM-SHA384",
            "ECDHE-ECDSA-CHACHA20-POLY1305",
            "ECDHE-RSA-CHACHA20-POLY1305",
            "DHE-RSA-AES128-GCM-SHA256",
            "DHE-RSA-AES256-GCM-SHA384",
            "DHE-RSA-CHACHA20-POLY1305",
        ]
    );
    assert_eq!(names(&p.tls13), TLS13_MOZILLA);
    // Every suite is forward secret and AEAD.
    assert!(p.tls12.iter().all(|s| s.forward_secrecy && s.aead));
}

#[test]
fn mozilla_old_57() {
    let p = Policy::mozilla("old").unwrap();
    assert_eq!(p.name, "mozilla-old");
    assert_eq!(p.version.as_deref(), Some("5.7"));
    assert_eq!(p.protocols, vec![TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]);
    assert_eq!(p.tls12.len(), 26);
    let n = names(&p.tls12);
    assert_eq!(n[0], "ECDHE-ECDSA-AES128-GCM-SHA256");
    assert_eq!(n[8], "DHE-RSA-CHACHA20-POLY1305");
    assert_eq!(n[25], "DES-CBC3-SHA");
    for cbc in [
        "ECDHE-RSA-AES128-SHA",
        "AES256-SHA",
        "DHE-RSA-AES256-SHA256",
    ] {
        assert!(n.iter().any(|x| x == cbc), "{cbc}");
    }
    assert_eq!(names(&p.tls13), TLS13_MOZILLA);
}

#[test]
fn unknown_profile_is_an_error() {
    assert!(Policy::mozilla("mozilla-paranoid").is_err());
}

#[test]
fn mozilla_decisions() {
    let p = Policy::mozilla("mozilla-intermediate").unwrap();
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::Allowed
    );
    assert_eq!(
        p.decide("TLS1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::Allowed
    );
    assert_eq!(
        p.decide("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
        Decision::Allowed
    );
    assert_eq!(
        p.decide("TLSv1.3", "TLS_AES_256_GCM_SHA384"),
        Decision::Allowed
    );
    assert_eq!(
        p.decide("TLSv1.3", "TLS_AES_128_CCM_SHA256"),
        Decision::RefusedCipher
    );
    assert_eq!(p.decide("TLSv1.2", "AES128-SHA"), Decision::RefusedCipher);
    assert_eq!(p.decide("TLSv1.2", "RC4-SHA"), Decision::RefusedCipher);
    assert_eq!(
        p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"),
        Decision::RefusedProtocol
    );
    assert_eq!(p.decide("SSLv3", "RC4-MD5"), Decision::RefusedProtocol);
    assert_eq!(p.decide("SSLv2", "RC4-MD5"), Decision::RefusedProtocol);
    assert_eq!(p.decide("TLSv9", "AES128-SHA"), Decision::Unknown);
    assert_eq!(p.decide("TLSv1.2", "NOT-A-CIPHER"), Decision::Unknown);
    // A TLS 1.2 suite logged under TLS 1.3 (or the reverse) cannot have been negotiated.
    assert_eq!(
        p.decide("TLSv1.3", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::RefusedCipher
    );
    assert_eq!(
        p.decide("TLSv1.2", "TLS_AES_256_GCM_SHA384"),
        Decision::RefusedCipher
    );

    let old = Policy::mozilla("mozilla-old").unwrap();
    assert_eq!(old.decide("TLSv1", "DES-CBC3-SHA"), Decision::Allowed);
    assert_eq!(
        old.decide("TLSv1", "ECDHE-RSA-AES128-SHA"),
        Decision::Allowed
    );
    // A TLS 1.2-only suite cannot be negotiated under TLSv1.
    assert_eq!(
        old.decide("TLSv1", "AES128-GCM-SHA256"),
        Decision::RefusedCipher
    );
    assert_eq!(
        old.decide("SSLv3", "DES-CBC3-SHA"),
        Decision::RefusedProtocol
    );

    let modern = Policy::mozilla("mozilla-modern").unwrap();
    assert_eq!(
        modern.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::RefusedProtocol
    );
    assert_eq!(
        modern.decide("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
        Decision::Allowed
    );
}

// --- Apache -----------------------------------------------------------------------------

#[test]
fn apache_protocol_forms() {
    let cases: &[(&str, &[Protocol])] = &[
        (
            "SSLProtocol all -SSLv3 -TLSv1 -TLSv1.1",
            &[TlsV1_2, TlsV1_3],
        ),
        ("SSLProtocol +TLSv1.2", &[TlsV1_2]),
        ("SSLProtocol -all +TLSv1.3", &[TlsV1_3]),
        ("SSLProtocol TLSv1.2 +TLSv1.3", &[TlsV1_2, TlsV1_3]),
        ("SSLProtocol all -TLSv1.3", &[TlsV1, TlsV1_1, TlsV1_2]),
        (
            "sslprotocol ALL -sslv3",
            &[TlsV1, TlsV1_1, TlsV1_2, TlsV1_3],
        ),
        // The last directive wins, and each starts from an empty set.
        ("SSLProtocol TLSv1\nSSLProtocol TLSv1.2", &[TlsV1_2]),
        // Missing: `all -SSLv3`.
        ("SSLCipherSuite HIGH", &[TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]),
    ];
    for (text, want) in cases {
        let p = config(text);
        assert_eq!(p.name, "apache");
        assert_eq!(p.protocols, *want, "{text}");
    }
}

#[test]
fn apache_sslv3_only_without_openssl3() {
    assert_eq!(
        config("SSLProtocol all").protocols,
        [TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]
    );
    let p = config_with("SSLProtocol all", 1, false);
    assert_eq!(p.protocols, [SslV3, TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]);
    // Security level 2 forbids SSLv3 even then.
    let p = config_with("SSLProtocol all\nSSLCipherSuite HIGH:@SECLEVEL=2", 1, false);
    assert_eq!(p.protocols, [TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]);
}

#[test]
fn apache_cipher_suite_forms() {
    let p = config("SSLCipherSuite HIGH:!aNULL:!MD5");
    assert_eq!(names(&p.tls12), string_names("HIGH:!aNULL:!MD5"));
    assert_eq!(names(&p.tls13), TLS13_OPENSSL);

    let p = config("SSLCipherSuite SSL ECDHE+AESGCM");
    assert_eq!(
        names(&p.tls12),
        [
            "ECDHE-ECDSA-AES256-GCM-SHA384",
            "ECDHE-RSA-AES256-GCM-SHA384",
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            "ECDHE-RSA-AES128-GCM-SHA256",
        ]
    );

    let p = config(
        "SSLCipherSuite TLSv1.3 TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256\n\
         SSLCipherSuite \"ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384\"",
    );
    assert_eq!(
        names(&p.tls13),
        ["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]
    );
    assert_eq!(
        names(&p.tls12),
        ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384"]
    );
}

#[test]
fn apache_default_cipher_suite_is_default() {
    let p = config("SSLProtocol all -SSLv3");
    assert_eq!(names(&p.tls12), string_names("DEFAULT"));
    assert!(!p.tls12.is_empty());
    assert_eq!(p.seclevel, Some(2));
}

#[test]
fn apache_ignores_proxy_comments_and_other_lines() {
    let text = "\
<VirtualHost *:443>
    ServerName example.org
    # SSLProtocol TLSv1
    SSLEngine on
    SSLProxyProtocol TLSv1
    SSLProxyCipherSuite RC4-SHA
    SSLProtocol -all +TLSv1.2
    SSLCipherSuite ECDHE-RSA-AES128-GCM-SHA256
    SSLHonorCipherOrder on
</VirtualHost>
";
    let p = config(text);
    assert_eq!(p.protocols, [TlsV1_2]);
    assert_eq!(names(&p.tls12), ["ECDHE-RSA-AES128-GCM-SHA256"]);
}

// --- nginx ------------------------------------------------------------------------------

#[test]
fn nginx_directives() {
    let text = "\
server {
    listen 443 ssl;   # comment; with a semicolon
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers 'ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM';
    ssl_conf_command Ciphersuites TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256;
    proxy_ssl_ciphers RC4-SHA;
}
";
    let p = config(text);
    assert_eq!(p.name, "nginx");
    assert_eq!(p.protocols, [TlsV1_2, TlsV1_3]);
    assert_eq!(
        names(&p.tls12),
        string_names("ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM")
    );
    assert_eq!(
        names(&p.tls13),
        ["TLS_CHACHA20_POLY1305_SHA256", "TLS_AES_128_GCM_SHA256"]
    );
}

#[test]
fn nginx_statement_spanning_lines_and_sharing_a_line() {
    let p = config(
        "ssl_protocols TLSv1.2; ssl_ciphers\n    \"ECDHE-RSA-AES128-GCM-SHA256:AES128-SHA\"\n    ;",
    );
    assert_eq!(p.protocols, [TlsV1_2]);
    assert_eq!(
        names(&p.tls12),
        ["ECDHE-RSA-AES128-GCM-SHA256", "AES128-SHA"]
    );
    // OpenSSL does not take a newline as a separator, so a string broken inside the
    // quotes is refused (nginx would not start).
    let e = Policy::from_config("ssl_ciphers 'ECDHE-RSA-AES128-GCM-SHA256:\n AES128-SHA';");
    assert!(e.is_err());
}

#[test]
fn nginx_defaults() {
    let p = config("ssl_protocols TLSv1.2 TLSv1.3;");
    assert_eq!(names(&p.tls12), string_names("HIGH:!aNULL:!MD5"));
    assert_eq!(names(&p.tls13), TLS13_OPENSSL);
    let p = config("ssl_ciphers HIGH;");
    assert_eq!(p.protocols, [TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]);
}

// --- security level and OpenSSL 3 -------------------------------------------------------

#[test]
fn seclevel_default_and_override() {
    let p = config("ssl_ciphers 'ALL:RC4';");
    assert_eq!(p.seclevel, Some(2));
    assert_eq!(p.decide("TLSv1.2", "RC4-SHA"), Decision::RefusedCipher);
    assert_eq!(p.decide("TLSv1.2", "DES-CBC3-SHA"), Decision::Allowed);
    assert_eq!(p.decide("TLSv1.2", "EXP-RC4-MD5"), Decision::RefusedCipher);

    let p = config("ssl_ciphers 'ALL:RC4:@SECLEVEL=1';");
    assert_eq!(p.seclevel, Some(1));
    assert_eq!(p.decide("TLSv1.2", "RC4-SHA"), Decision::Allowed);

    let p = config("ssl_ciphers 'ALL:@SECLEVEL=3';");
    assert_eq!(p.protocols, [TlsV1_1, TlsV1_2, TlsV1_3]);
    assert_eq!(p.decide("TLSv1.2", "DES-CBC3-SHA"), Decision::RefusedCipher);
    assert_eq!(
        p.decide("TLSv1.2", "AES128-GCM-SHA256"),
        Decision::RefusedCipher
    );
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::Allowed
    );
    assert_eq!(
        p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"),
        Decision::RefusedProtocol
    );

    let p = config("ssl_ciphers 'ALL:@SECLEVEL=4';");
    assert_eq!(p.protocols, [TlsV1_2, TlsV1_3]);
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::RefusedCipher
    );
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"),
        Decision::Allowed
    );
    assert_eq!(
        p.decide("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
        Decision::RefusedCipher
    );
    assert_eq!(
        p.decide("TLSv1.3", "TLS_AES_256_GCM_SHA384"),
        Decision::Allowed
    );
}

#[test]
fn openssl3_refuses_signed_key_exchange_below_tls12() {
    let p = config("ssl_protocols TLSv1 TLSv1.1 TLSv1.2;");
    assert_eq!(
        p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"),
        Decision::RefusedCipher
    );
    assert_eq!(
        p.decide("TLSv1.1", "DHE-RSA-AES256-SHA"),
        Decision::RefusedCipher
    );
    assert_eq!(p.decide("TLSv1", "AES128-SHA"), Decision::Allowed);
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES128-SHA"),
        Decision::Allowed
    );

    let p = config("ssl_protocols TLSv1 TLSv1.2; ssl_ciphers 'HIGH:!aNULL:@SECLEVEL=0';");
    assert_eq!(p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"), Decision::Allowed);

    let p = config_with("ssl_protocols TLSv1 TLSv1.2;", 2, false);
    assert_eq!(p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"), Decision::Allowed);
}

// --- errors -----------------------------------------------------------------------------

#[test]
fn configuration_errors() {
    for text in [
        "",
        "# nothing here\nServerName example.org",
        "SSLProtocol TLSv1.2\nssl_protocols TLSv1.2;",
        "SSLProtocol TLSv1.4",
        "ssl_protocols TLSv1.2 TLS9;",
        "ssl_ciphers 'NOTHING:AT:AL';",
        "ssl_ciphers 'TLS_AES_128_GCM_SHA256';",
        "SSLCipherSuite HIGH:@SECLEVEL=9",
        "SSLCipherSuite TLSv1.3 NOT_A_SUITE",
        "SSLCipherSuite TLSv1.2 HIGH",
    ] {
        let e = Policy::from_config(text);
        assert!(e.is_err(), "{text:?} should be refused, got {e:?}");
    }
    let e = Policy::from_config("ServerName x\nSSLProtocol TLSv1.4").unwrap_err();
    assert_eq!(e.line, Some(2));
}
