//! Policies: Mozilla profiles (guidelines 6.0 and 5.7) and Apache/nginx directives.

use tlsgap_ciphers::catalogue;
use tlsgap_ciphers::cipherstring::evaluate_over;
use tlsgap_ciphers::policy::{ConfigOptions, Decision, Policy, Reason};
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
        ..ConfigOptions::default()
    };
    Policy::from_config_with(text, options, catalogue::all()).unwrap()
}

/// The TLS <= 1.2 names `s` enables at security level 2 over the catalogue, of the suites
/// OpenSSL 3 has.
fn string_names(s: &str) -> Vec<String> {
    let suites = catalogue::all();
    let e = evaluate_over(s, suites, 2).unwrap();
    e.order
        .iter()
        .filter(|&&i| suites[i].in_openssl3)
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
    assert_eq!(p.title(), "mozilla-modern 6.0");
    assert_eq!(p.version.as_deref(), Some("6.0"));
    assert_eq!(p.protocols, vec![TlsV1_3]);
    assert!(p.tls12.is_empty());
    assert_eq!(names(&p.tls13), TLS13_MOZILLA);
}

#[test]
fn mozilla_intermediate_60() {
    let p = Policy::mozilla("mozilla-intermediate").unwrap();
    assert_eq!(p.version.as_deref(), Some("6.0"));
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
        ]
    );
    assert_eq!(names(&p.tls13), TLS13_MOZILLA);
    assert_eq!(p.groups[0], "X25519MLKEM768");
    // The same profile named with its version.
    let v = Policy::mozilla("intermediate-6.0").unwrap();
    assert_eq!(v.name, "mozilla-intermediate-6.0");
    assert_eq!(v.tls12, p.tls12);
    assert_eq!(
        p.explain("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256"),
        (Decision::RefusedCipher, Some(Reason::SuiteNotListed))
    );
}

#[test]
fn mozilla_intermediate_57() {
    let p = Policy::mozilla("mozilla-intermediate-5.7").unwrap();
    assert_eq!(p.name, "mozilla-intermediate-5.7");
    assert_eq!(p.title(), "mozilla-intermediate-5.7");
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
    let p = Policy::mozilla("old-5.7").unwrap();
    assert_eq!(p.name, "mozilla-old-5.7");
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
    assert!(Policy::mozilla("mozilla-intermediate-4.0").is_err());
    // Guideline 6.0 removed `old`: the error names the last version that has it.
    let e = Policy::mozilla("mozilla-old").unwrap_err();
    assert!(e.message.contains("mozilla-old-5.7"), "{e}");
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

    let old = Policy::mozilla("mozilla-old-5.7").unwrap();
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
        (
            "SSLProtocol all -TLSv1.3",
            &[SslV3, TlsV1, TlsV1_1, TlsV1_2],
        ),
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
        assert_eq!(p.configured_protocols, *want, "{text}");
        // At the default security level OpenSSL 3 leaves TLS 1.2 and 1.3 of them.
        let usable: Vec<Protocol> = want.iter().copied().filter(|p| *p >= TlsV1_2).collect();
        assert_eq!(p.protocols, usable, "{text}");
    }
}

#[test]
fn apache_sslv3_only_without_openssl3() {
    let p = config("SSLProtocol all");
    assert_eq!(
        p.configured_protocols,
        [SslV3, TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]
    );
    // OpenSSL 3 has no SSLv3, whatever the level.
    let p3 = config("SSLProtocol all\nSSLCipherSuite ALL:@SECLEVEL=0");
    assert_eq!(p3.protocols, [TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]);
    assert_eq!(
        p3.explain("SSLv3", "AES128-SHA"),
        (
            Decision::RefusedProtocol,
            Some(Reason::ProtocolNotInOpenssl3)
        )
    );
    assert_eq!(
        p.explain("SSLv3", "AES128-SHA").1,
        Some(Reason::ProtocolNotInOpenssl3)
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
    // nginx 1.22 (Debian 12) has no TLSv1.3 unless ssl_protocols lists it.
    let p = config("ssl_ciphers HIGH;");
    assert_eq!(p.configured_protocols, [TlsV1, TlsV1_1, TlsV1_2]);
    assert_eq!(p.protocols, [TlsV1_2]);
    assert_eq!(
        p.explain("TLSv1.3", "TLS_AES_128_GCM_SHA256").1,
        Some(Reason::ProtocolNotEnabled)
    );
}

// --- security level and OpenSSL 3 -------------------------------------------------------

#[test]
fn seclevel_default_and_override() {
    // Without OpenSSL 3 (its legacy suites kept), the level alone filters the suites.
    let p = config_with("ssl_ciphers 'ALL:RC4';", 2, false);
    assert_eq!(p.seclevel, Some(2));
    assert_eq!(p.decide("TLSv1.2", "RC4-SHA"), Decision::RefusedCipher);
    assert_eq!(p.decide("TLSv1.2", "DES-CBC3-SHA"), Decision::Allowed);
    assert_eq!(p.decide("TLSv1.2", "EXP-RC4-MD5"), Decision::RefusedCipher);
    let p = config_with("ssl_ciphers 'ALL:RC4:@SECLEVEL=1';", 2, false);
    assert_eq!(p.seclevel, Some(1));
    assert_eq!(p.decide("TLSv1.2", "RC4-SHA"), Decision::Allowed);

    // OpenSSL 3 has neither RC4 nor 3DES, whatever the level.
    let p = config("ssl_ciphers 'ALL:RC4:@SECLEVEL=0';");
    assert_eq!(
        p.explain("TLSv1.2", "RC4-SHA"),
        (Decision::RefusedCipher, Some(Reason::SuiteNotInOpenssl3))
    );
    assert_eq!(
        p.explain("TLSv1.2", "DES-CBC3-SHA"),
        (Decision::RefusedCipher, Some(Reason::SuiteNotInOpenssl3))
    );

    let p = config("ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3; ssl_ciphers 'ALL:@SECLEVEL=3';");
    assert_eq!(p.protocols, [TlsV1_2, TlsV1_3]);
    assert_eq!(
        p.explain("TLSv1.2", "AES128-GCM-SHA256"),
        (Decision::RefusedCipher, Some(Reason::SuiteSecurityLevel))
    );
    let suite = catalogue::lookup("TLSv1.2", "AES128-GCM-SHA256").unwrap();
    assert!(p
        .describe(Reason::SuiteSecurityLevel, TlsV1_2, suite)
        .contains("no forward secrecy"));
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::Allowed
    );
    assert_eq!(
        p.explain("TLSv1", "ECDHE-RSA-AES128-SHA"),
        (
            Decision::RefusedProtocol,
            Some(Reason::ProtocolSecurityLevel)
        )
    );

    let p = config("ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers 'ALL:@SECLEVEL=4';");
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

/// OpenSSL 3 at security level 1 or more refuses every SSLv3, TLSv1 and TLSv1.1
/// handshake, plain-RSA key exchange included (seen with real Apache and nginx); level 0
/// lets them through.
#[test]
fn openssl3_refuses_tls10_and_tls11_from_level_1() {
    for level in ["", ":@SECLEVEL=1", ":@SECLEVEL=2"] {
        let p = config(&format!(
            "SSLProtocol all\nSSLCipherSuite HIGH:!aNULL:!MD5{level}"
        ));
        assert_eq!(
            p.configured_protocols,
            [SslV3, TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]
        );
        assert_eq!(p.protocols, [TlsV1_2, TlsV1_3], "{level}");
        for (proto, suite) in [
            ("TLSv1", "ECDHE-RSA-AES128-SHA"),
            ("TLSv1", "AES128-SHA"),
            ("TLSv1.1", "AES256-SHA"),
            ("TLSv1.1", "DHE-RSA-AES256-SHA"),
        ] {
            assert_eq!(
                p.explain(proto, suite),
                (
                    Decision::RefusedProtocol,
                    Some(Reason::ProtocolSecurityLevel)
                ),
                "{level} {proto} {suite}"
            );
        }
        assert_eq!(p.decide("TLSv1.2", "AES128-SHA"), Decision::Allowed);
    }
    let p = config("ssl_protocols TLSv1 TLSv1.2; ssl_ciphers 'HIGH:!aNULL:@SECLEVEL=0';");
    assert_eq!(p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"), Decision::Allowed);
    assert_eq!(p.decide("TLSv1", "AES128-SHA"), Decision::Allowed);
    assert_eq!(
        p.explain("TLSv1.1", "AES128-SHA"),
        (Decision::RefusedProtocol, Some(Reason::ProtocolNotEnabled))
    );
    // A system default of 0 (openssl.cnf) has the same effect as @SECLEVEL=0.
    let p = config_with("ssl_protocols TLSv1 TLSv1.2;", 0, true);
    assert_eq!(p.decide("TLSv1", "AES128-SHA"), Decision::Allowed);
    // Before OpenSSL 3, TLSv1 passed up to level 2.
    let p = config_with("ssl_protocols TLSv1 TLSv1.2;", 2, false);
    assert_eq!(p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"), Decision::Allowed);
}

/// A cipher string that leaves no suite OpenSSL 3 has stops the server: say so.
#[test]
fn a_string_matching_nothing_openssl3_has_is_an_error() {
    for (text, server) in [
        ("SSLCipherSuite RC4-SHA", "Apache would not start"),
        ("ssl_ciphers '3DES:+RSA';", "nginx would refuse"),
        ("SSLCipherSuite RC4:@SECLEVEL=0", "Apache would not start"),
    ] {
        let e = Policy::from_config(text).unwrap_err();
        assert!(e.message.contains("matches no suite OpenSSL 3 has"), "{e}");
        assert!(e.message.contains(server), "{e}");
        assert_eq!(e.line, Some(1));
    }
    // Before OpenSSL 3 the same string was a policy.
    assert!(config_with("SSLCipherSuite RC4-SHA", 0, false)
        .decide("TLSv1.2", "RC4-SHA")
        .eq(&Decision::Allowed));
}

/// nginx negotiates DHE only with `ssl_dhparam`; Apache has built-in parameters.
#[test]
fn nginx_dhe_needs_dhparam() {
    let text = "ssl_protocols TLSv1.2;\nssl_ciphers 'DHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256';";
    let p = config(text);
    assert_eq!(
        p.explain("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256"),
        (Decision::RefusedCipher, Some(Reason::NoDhParameters))
    );
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::Allowed
    );
    let p = config(&format!("{text}\nssl_dhparam /etc/nginx/dhparam.pem;"));
    assert_eq!(
        p.decide("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256"),
        Decision::Allowed
    );
    let p = config("SSLProtocol TLSv1.2\nSSLCipherSuite DHE-RSA-AES128-GCM-SHA256");
    assert_eq!(
        p.decide("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256"),
        Decision::Allowed
    );
}

/// `expand` lists each suite with why it is in or out, as `--explain` prints it.
#[test]
fn expand_says_why_each_suite_is_in_or_out() {
    let p = config("SSLProtocol all\nSSLCipherSuite HIGH:!aNULL:!MD5:-RSA:AES128-SHA");
    let rows = p.expand();
    let find = |n: &str| {
        rows.iter()
            .find(|r| r.suite.openssl.iter().any(|x| x == n))
            .unwrap_or_else(|| panic!("{n} not expanded"))
    };
    let r = find("ECDHE-RSA-AES128-GCM-SHA256");
    assert_eq!(r.refused, None);
    assert_eq!(r.step.as_ref().unwrap().term, "HIGH");
    let r = find("ADH-AES128-SHA");
    assert_eq!(r.refused, Some(Reason::SuiteNotListed));
    assert_eq!(r.step.as_ref().unwrap().term, "!aNULL");
    let r = find("AES256-SHA");
    assert_eq!(r.refused, Some(Reason::SuiteNotListed));
    assert_eq!(r.step.as_ref().unwrap().term, "-RSA");
    // Added back after the removal.
    let r = find("AES128-SHA");
    assert_eq!(r.refused, None);
    assert_eq!(r.step.as_ref().unwrap().term, "AES128-SHA");
    // TLS 1.3 suites come first, the configured ones in.
    assert_eq!(
        rows[0].suite.iana.as_deref(),
        Some("TLS_AES_256_GCM_SHA384")
    );
    assert_eq!(rows[0].refused, None);
    // The usable suites appear in the server's order.
    let usable: Vec<&str> = rows
        .iter()
        .filter(|r| r.refused.is_none() && r.suite.min_protocol != TlsV1_3)
        .map(|r| r.suite.openssl[0].as_str())
        .collect();
    assert_eq!(usable, names(&p.tls12));
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

/// Every vendored guideline file is compiled in and every profile it names builds.
#[test]
fn every_vendored_mozilla_guideline_is_usable() {
    let dir = std::path::PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("data/mozilla");
    let names = tlsgap_ciphers::policy::mozilla_profile_names();
    let mut files = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let version = path.file_stem().unwrap().to_str().unwrap().to_string();
        files += 1;
        assert!(
            tlsgap_ciphers::policy::MOZILLA_VERSIONS.contains(&version.as_str()),
            "{version} is vendored but not compiled in (MOZILLA_JSON)"
        );
        let suffix = format!("-{version}");
        let profiles: Vec<&String> = names.iter().filter(|n| n.ends_with(&suffix)).collect();
        assert!(!profiles.is_empty(), "{version}: no profile");
        for name in profiles {
            let p = Policy::mozilla(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(p.version.as_deref(), Some(version.as_str()));
            assert!(!p.tls13.is_empty(), "{name}");
        }
    }
    assert_eq!(files, tlsgap_ciphers::policy::MOZILLA_VERSIONS.len());
}

// --- OpenSSL conf commands (ssl_conf_command, SSLOpenSSLConfCmd) -------------------------
// The cases and results are those of a real nginx 1.22.1 / Apache 2.4 on OpenSSL 3.0
// (cipher audit, finding F2).

#[test]
fn conf_command_min_protocol_refuses_older_protocols() {
    let nginx = config(
        "ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;\nssl_ciphers ALL:@SECLEVEL=0;\n\
         ssl_conf_command MinProtocol TLSv1.2;",
    );
    assert_eq!(nginx.configured_protocols, [TlsV1_2, TlsV1_3]);
    assert_eq!(
        nginx.decide("TLSv1", "ECDHE-RSA-AES128-SHA"),
        Decision::RefusedProtocol
    );
    assert_eq!(
        nginx.decide("TLSv1.1", "AES128-SHA"),
        Decision::RefusedProtocol
    );
    assert_eq!(
        nginx.decide("TLSv1.2", "ECDHE-RSA-AES128-SHA"),
        Decision::Allowed
    );
    let apache = config(
        "SSLProtocol all\nSSLCipherSuite ALL:@SECLEVEL=0\nSSLOpenSSLConfCmd MinProtocol TLSv1.2",
    );
    assert_eq!(apache.configured_protocols, [TlsV1_2, TlsV1_3]);
    assert_eq!(
        apache.decide("TLSv1", "AES128-SHA"),
        Decision::RefusedProtocol
    );
    // The directive's order does not matter: the servers apply conf commands last.
    let first = config("ssl_conf_command MaxProtocol TLSv1.2;\nssl_protocols TLSv1.2 TLSv1.3;");
    assert_eq!(first.configured_protocols, [TlsV1_2]);
}

#[test]
fn conf_command_protocol_switches_protocols() {
    let p = config(
        "ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;\nssl_ciphers ALL:@SECLEVEL=0;\n\
         ssl_conf_command Protocol -TLSv1.3;",
    );
    assert_eq!(p.configured_protocols, [TlsV1, TlsV1_1, TlsV1_2]);
    assert_eq!(
        p.decide("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
        Decision::RefusedProtocol
    );
    // nginx disables the protocols ssl_protocols leaves out by option, which `Protocol`
    // switches back on; a list is comma-separated and case-insensitive.
    let p = config("ssl_protocols TLSv1.2;\nssl_conf_command Protocol \"+tlsv1.3, -TLSv1.2\";");
    assert_eq!(p.configured_protocols, [TlsV1_3]);
    // mod_ssl sets a range, which `Protocol` does not widen but MinProtocol moves.
    let p = config("SSLProtocol TLSv1.2\nSSLOpenSSLConfCmd Protocol +TLSv1.3");
    assert_eq!(p.configured_protocols, [TlsV1_2]);
    let p = config("SSLProtocol TLSv1.2\nSSLOpenSSLConfCmd MaxProtocol None");
    assert_eq!(p.configured_protocols, [TlsV1_2, TlsV1_3]);
}

#[test]
fn conf_command_values_openssl_refuses_are_errors() {
    for (text, line) in [
        // MinProtocol names are case-sensitive.
        (
            "ssl_protocols TLSv1.2;\nssl_conf_command MinProtocol tlsv1.2;",
            2,
        ),
        ("SSLProtocol all\nSSLOpenSSLConfCmd MaxProtocol TLSv1.4", 2),
        // `Protocol` takes a comma-separated list; `-TLSv1 -TLSv1.1` is one unknown name.
        (
            "ssl_protocols TLSv1.2;\nssl_conf_command Protocol \"-TLSv1 -TLSv1.1\";",
            2,
        ),
        ("ssl_conf_command Protocol;\nssl_protocols TLSv1.2;", 1),
    ] {
        let e = Policy::from_config(text).unwrap_err();
        assert_eq!(e.line, Some(line), "{text:?}: {e}");
    }
}

#[test]
fn apache_conf_command_cipher_string_and_ciphersuites_override() {
    let p = config(
        "SSLProtocol -all +TLSv1.2 +TLSv1.3\n\
         SSLOpenSSLConfCmd CipherString ECDHE-RSA-AES256-GCM-SHA384\n\
         SSLOpenSSLConfCmd Ciphersuites TLS_AES_128_GCM_SHA256",
    );
    assert_eq!(names(&p.tls12), ["ECDHE-RSA-AES256-GCM-SHA384"]);
    assert_eq!(names(&p.tls13), ["TLS_AES_128_GCM_SHA256"]);
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::RefusedCipher
    );
    assert_eq!(
        p.decide("TLSv1.3", "TLS_AES_256_GCM_SHA384"),
        Decision::RefusedCipher
    );
    // Before or after SSLCipherSuite, the conf command wins.
    let p = config(
        "SSLOpenSSLConfCmd CipherString AES128-SHA\nSSLCipherSuite HIGH\n\
         SSLOpenSSLConfCmd Ciphersuites TLS_AES_128_GCM_SHA256\n\
         SSLCipherSuite TLSv1.3 TLS_AES_256_GCM_SHA384",
    );
    assert_eq!(names(&p.tls12), ["AES128-SHA"]);
    assert_eq!(names(&p.tls13), ["TLS_AES_128_GCM_SHA256"]);
    let p = config("ssl_conf_command CipherString AES128-SHA;\nssl_ciphers HIGH;");
    assert_eq!(names(&p.tls12), ["AES128-SHA"]);
    // The level the server's own string set stays unless the command sets one.
    let p = config(
        "ssl_protocols TLSv1 TLSv1.2;\nssl_ciphers ALL:@SECLEVEL=0;\n\
         ssl_conf_command CipherString AES128-SHA;",
    );
    assert_eq!(p.seclevel, Some(0));
    assert_eq!(p.protocols, [TlsV1, TlsV1_2]);
}

#[test]
fn unmodelled_conf_commands_are_listed_as_ignored() {
    let p = config(
        "ssl_protocols TLSv1.2;\nssl_conf_command Options PrioritizeChaCha;\n\
         ssl_conf_command SignatureAlgorithms RSA+SHA256;\nssl_conf_command Options -SessionTicket;",
    );
    assert_eq!(
        p.ignored_words,
        [
            "ssl_conf_command Options",
            "ssl_conf_command SignatureAlgorithms"
        ]
    );
    let p = config("SSLProtocol TLSv1.2\nSSLOpenSSLConfCmd ECDHParameters prime256v1");
    assert_eq!(p.ignored_words, ["SSLOpenSSLConfCmd ECDHParameters"]);
}

// --- Configuration syntax the real servers read (cipher audit, finding F4) ---------------

#[test]
fn apache_backslash_continues_a_line() {
    let p = config(
        "  SSLProtocol -all \\\n      +TLSv1.2\n  SSLCipherSuite ECDHE-ECDSA-AES128-GCM-SHA256:\\\n\
         ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA\nSSLProtocol -all \\\n+TLSv1.2 \\\n+TLSv1.3",
    );
    assert_eq!(p.configured_protocols, [TlsV1_2, TlsV1_3]);
    assert_eq!(
        names(&p.tls12),
        [
            "ECDHE-ECDSA-AES128-GCM-SHA256",
            "ECDHE-RSA-AES128-GCM-SHA256",
            "AES256-SHA"
        ]
    );
    // An error in a continued directive names its first line.
    let e = Policy::from_config("ServerName x\nSSLProtocol -all \\\n+TLSv1.4").unwrap_err();
    assert_eq!(e.line, Some(2));
}

#[test]
fn nginx_protocol_names_are_case_insensitive() {
    let p = config("ssl_protocols tlsv1.2 TLSV1.3;\nssl_ciphers HIGH;");
    assert_eq!(p.configured_protocols, [TlsV1_2, TlsV1_3]);
    assert!(Policy::from_config("ssl_protocols all;").is_err());
}

#[test]
fn nginx_ssl_protocols_of_one_block_add_up() {
    let p = config("    ssl_protocols TLSv1.2;\n    ssl_protocols TLSv1.3;");
    assert_eq!(p.configured_protocols, [TlsV1_2, TlsV1_3]);
    let p = config("server {\n ssl_protocols TLSv1.2; ssl_protocols TLSv1.3;\n}");
    assert_eq!(p.configured_protocols, [TlsV1_2, TlsV1_3]);
    // Across blocks the inner one replaces the outer one.
    let p = config(
        "http {\n    ssl_protocols TLSv1.2 TLSv1.3;\n    server {\n        ssl_protocols TLSv1.3;\n    }\n}",
    );
    assert_eq!(p.configured_protocols, [TlsV1_3]);
}

#[test]
fn nginx_duplicate_ssl_ciphers_in_a_block_is_an_error() {
    let e = Policy::from_config(
        "    ssl_protocols TLSv1.2;\n    ssl_ciphers HIGH;\n    ssl_ciphers AES128-SHA;",
    )
    .unwrap_err();
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("duplicate"), "{e}");
    // In nested blocks the inner one wins.
    let p = config("http {\n ssl_ciphers HIGH;\n server {\n  ssl_ciphers AES128-SHA;\n }\n}");
    assert_eq!(names(&p.tls12), ["AES128-SHA"]);
}

#[test]
fn apache_trailing_comment_is_an_error() {
    for (text, line) in [
        (
            "  SSLProtocol -all +TLSv1.2 # no 1.3 yet\n  SSLCipherSuite HIGH:!aNULL",
            1,
        ),
        (
            "  SSLProtocol -all +TLSv1.2\n  SSLCipherSuite \"HIGH:!aNULL\" # keep it strong",
            2,
        ),
        (
            "SSLProtocol TLSv1.2\nSSLHonorCipherOrder on # server order",
            2,
        ),
    ] {
        let e = Policy::from_config(text).unwrap_err();
        assert_eq!(e.line, Some(line), "{text:?}: {e}");
        assert!(e.message.contains("Apache would not start"), "{e}");
    }
    // Comments on their own line are fine.
    let p = config("# SSLProtocol all\n  # comment\nSSLProtocol TLSv1.2\nSSLCipherSuite HIGH");
    assert_eq!(p.configured_protocols, [TlsV1_2]);
}

#[test]
fn apache_cipher_suite_protocol_is_case_sensitive() {
    let e = Policy::from_config(
        "  SSLProtocol -all +TLSv1.3\n  SSLCipherSuite tlsv1.3 TLS_CHACHA20_POLY1305_SHA256",
    )
    .unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(e.message.contains("SSLCipherSuite"), "{e}");
    assert!(e.message.contains("Apache would not start"), "{e}");
}

/// Real Apache 2.4.71 on OpenSSL 3.0 (built without SSLv3) refused to start with
/// `SSLProtocol SSLv3` ("SSLv3 not supported by this version of OpenSSL"): mod_ssl
/// rejects `SSLv3` and `+SSLv3` there (and `SSLv2` always), and accepts `-SSLv3`.
#[test]
fn apache_sslv3_stops_apache_under_openssl3() {
    for text in [
        "SSLProtocol SSLv3",
        "SSLProtocol -all +TLSv1.2 +SSLv3",
        "SSLProtocol TLSv1.2 sslv3",
        "SSLProtocol all +SSLv2",
    ] {
        let e = Policy::from_config(text).unwrap_err();
        assert_eq!(e.line, Some(1), "{text:?}: {e}");
        assert!(
            e.message.contains("Apache would not start"),
            "{text:?}: {e}"
        );
    }
    let e = Policy::from_config("SSLProtocol SSLv3").unwrap_err();
    assert!(
        e.message
            .contains("SSLv3 not supported by this version of OpenSSL"),
        "{e}"
    );
    // Switching them off is fine.
    let p = config("SSLProtocol all -SSLv2 -SSLv3");
    assert_eq!(p.configured_protocols, [TlsV1, TlsV1_1, TlsV1_2, TlsV1_3]);
    // An OpenSSL with SSLv3 (not OpenSSL 3) takes it.
    let p = config_with(
        "SSLProtocol SSLv3
SSLCipherSuite ALL:@SECLEVEL=0",
        0,
        false,
    );
    assert_eq!(p.protocols, [SslV3]);
}

/// `openssl ciphers 'HIGH !aNULL'` works (OpenSSL 3.0: a space separates like `:`), so
/// such a string is a cipher string, not directives; what servers read stays directives.
#[test]
fn a_cipher_string_with_spaces_is_not_directives() {
    use tlsgap_ciphers::policy::is_directives;
    for s in [
        "HIGH !aNULL",
        "ECDHE+AESGCM  !SHA1:@SECLEVEL=2",
        "SSLv3 !aNULL",
        "HIGH",
    ] {
        assert!(!is_directives(s), "{s:?}");
    }
    for s in [
        "SSLCipherSuite HIGH",
        "sslprotocol -all +TLSv1.2",
        "ssl_protocols TLSv1.2 TLSv1.3",
        "ssl_ciphers HIGH;",
        "SSLHonorCipherOrder on",
        "server { ssl_ciphers HIGH; }",
        "SSLProtocol TLSv1.2\nSSLCipherSuite HIGH",
        "<VirtualHost *:443>\nSSLProtocol TLSv1.2\n</VirtualHost>",
    ] {
        assert!(is_directives(s), "{s:?}");
    }
    let spaced =
        Policy::from_cipher_string("HIGH !aNULL", ConfigOptions::default(), catalogue::all())
            .unwrap();
    let colons =
        Policy::from_cipher_string("HIGH:!aNULL", ConfigOptions::default(), catalogue::all())
            .unwrap();
    assert_eq!(names(&spaced.tls12), names(&colons.tls12));
    assert_eq!(names(&spaced.listed12), names(&colons.listed12));
}

/// Real nginx 1.22.1 (OpenSSL 3.0) with `ssl_protocols TLSv1.2 TLSv1.3` and
/// `ssl_conf_command Ciphersuites "";` started, and every handshake failed, TLS 1.2
/// included (`openssl s_server -ciphersuites ""` likewise): OpenSSL takes the empty list,
/// then finds no suite for its newest protocol. With TLSv1.3 off nothing changes.
#[test]
fn empty_ciphersuites_with_tls13_on_fails_every_handshake() {
    for text in [
        "ssl_protocols TLSv1.2 TLSv1.3;\nssl_ciphers HIGH;\nssl_conf_command Ciphersuites \"\";",
        "SSLProtocol -all +TLSv1.2 +TLSv1.3\nSSLCipherSuite TLSv1.3 \"\"",
    ] {
        let p = config(text);
        assert!(p.no_suite_for_newest_protocol, "{text}");
        for (proto, cipher) in [
            ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
            ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
        ] {
            assert_eq!(
                p.explain(proto, cipher),
                (
                    Decision::RefusedCipher,
                    Some(Reason::NoSuiteForNewestProtocol)
                ),
                "{text} {proto}"
            );
        }
        assert!(p.expand().iter().all(|e| e.refused.is_some()), "{text}");
        let suite = catalogue::lookup("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256").unwrap();
        let why = p.describe(Reason::NoSuiteForNewestProtocol, TlsV1_2, suite);
        assert!(why.contains("every handshake"), "{why}");
    }
    let p =
        config("ssl_protocols TLSv1.2;\nssl_ciphers HIGH;\nssl_conf_command Ciphersuites \"\";");
    assert!(!p.no_suite_for_newest_protocol);
    assert_eq!(
        p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        Decision::Allowed
    );
    // A list naming no suite OpenSSL knows is refused (SSL_CONF_cmd fails).
    assert!(
        Policy::from_config("ssl_protocols TLSv1.3;\nssl_conf_command Ciphersuites NOPE;").is_err()
    );
}

/// Real nginx 1.22.1 without any `Ciphersuites` refused the TLS 1.3 CCM suites because
/// OpenSSL's default list leaves them out: the reason names that list, not an
/// `ssl_conf_command Ciphersuites` the configuration does not have.
#[test]
fn a_tls13_refusal_names_where_the_list_comes_from() {
    let ccm = catalogue::lookup("TLSv1.3", "TLS_AES_128_CCM_SHA256").unwrap();
    let why = |p: &Policy| p.describe(Reason::SuiteNotListed, TlsV1_3, ccm);
    let p = config("ssl_protocols TLSv1.2 TLSv1.3;");
    assert_eq!(
        p.explain("TLSv1.3", "TLS_AES_128_CCM_SHA256").1,
        Some(Reason::SuiteNotListed)
    );
    assert_eq!(why(&p), "suite not in OpenSSL's default Ciphersuites");
    let p = config("SSLProtocol -all +TLSv1.3");
    assert_eq!(why(&p), "suite not in OpenSSL's default Ciphersuites");
    for (text, named) in [
        (
            "ssl_protocols TLSv1.3;\nssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;",
            "ssl_conf_command Ciphersuites",
        ),
        (
            "SSLProtocol TLSv1.3\nSSLCipherSuite TLSv1.3 TLS_AES_128_GCM_SHA256",
            "SSLCipherSuite TLSv1.3",
        ),
        (
            "SSLProtocol TLSv1.3\nSSLOpenSSLConfCmd Ciphersuites TLS_AES_128_GCM_SHA256",
            "SSLOpenSSLConfCmd Ciphersuites",
        ),
    ] {
        assert_eq!(
            why(&config(text)),
            format!("suite not in {named}"),
            "{text}"
        );
    }
    let options = ConfigOptions {
        default_ciphersuites: Some("TLS_AES_256_GCM_SHA384".to_string()),
        ..ConfigOptions::default()
    };
    let p = Policy::from_config_with("ssl_protocols TLSv1.3;", options, catalogue::all()).unwrap();
    assert_eq!(
        why(&p),
        "suite not in the system Ciphersuites (openssl.cnf)"
    );
}

/// A system `Ciphersuites` (openssl.cnf) holds unless the directives set TLS 1.3 suites
/// (cipher audit, F2: real nginx and Apache refused the suites it leaves out).
#[test]
fn system_ciphersuites_are_the_default() {
    let options = ConfigOptions {
        default_ciphersuites: Some("TLS_AES_256_GCM_SHA384".to_string()),
        ..ConfigOptions::default()
    };
    for text in [
        "ssl_protocols TLSv1.2 TLSv1.3;",
        "SSLProtocol -all +TLSv1.2 +TLSv1.3",
    ] {
        let p = Policy::from_config_with(text, options.clone(), catalogue::all()).unwrap();
        assert_eq!(names(&p.tls13), ["TLS_AES_256_GCM_SHA384"], "{text}");
        assert_eq!(
            p.decide("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
            Decision::RefusedCipher
        );
        assert_eq!(
            p.decide("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
            Decision::RefusedCipher
        );
    }
    for text in [
        "ssl_protocols TLSv1.3;\nssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;",
        "SSLProtocol TLSv1.3\nSSLCipherSuite TLSv1.3 TLS_AES_128_GCM_SHA256",
    ] {
        let p = Policy::from_config_with(text, options.clone(), catalogue::all()).unwrap();
        assert_eq!(names(&p.tls13), ["TLS_AES_128_GCM_SHA256"], "{text}");
    }
}
