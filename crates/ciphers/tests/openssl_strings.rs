//! Differential test of the cipher-string evaluator against the local `openssl ciphers`.
//!
//! Every string below is evaluated by `tlsgap_ciphers::cipherstring::evaluate_over` and by
//! `openssl ciphers -V STRING` (TLS 1.3 lines dropped); the ordered lists of OpenSSL names
//! must be equal, and so must the lists after the security level is applied (`openssl
//! ciphers -s -psk -srp -V STRING`, `-psk -srp` so PSK and SRP suites count as supported).
//! A string OpenSSL rejects must be rejected too.
//!
//! openssl runs with `OPENSSL_CONF=/dev/null`, so a system configuration (Debian's
//! `/etc/ssl/openssl.cnf` may set `CipherString = DEFAULT@SECLEVEL=2`) cannot change the
//! result; the compiled-in default security level (2 on Debian, 1 upstream) is detected
//! by comparing `-s` output for `ALL` with `ALL:@SECLEVEL=N`.
//!
//! The suites evaluated over are parsed from `openssl ciphers -V -stdname
//! 'ALL:COMPLEMENTOFALL:@SECLEVEL=0'`; when the catalogue is filled, the same strings are
//! also evaluated over `catalogue::all()` (restricted to the names this openssl knows).
//!
//! Without `openssl` the tests fail, naming the package, unless
//! `TLSGAP_SKIP_OPENSSL_TESTS=1` says to skip them, and then each skip is printed.

use std::io::Write as _;
use std::process::Command;

use tlsgap_ciphers::catalogue;
use tlsgap_ciphers::cipherstring::evaluate_over;
use tlsgap_ciphers::suite::StrengthClass;
use tlsgap_ciphers::{Mode, Protocol, Suite, Verdict};

fn openssl(args: &[&str]) -> Option<(bool, String)> {
    let out = Command::new("openssl")
        .args(args)
        .env("OPENSSL_CONF", "/dev/null")
        .output()
        .ok()?;
    Some((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

fn openssl_available() -> bool {
    match openssl(&["version"]) {
        Some((true, _)) => true,
        _ => {
            let skip = std::env::var_os("TLSGAP_SKIP_OPENSSL_TESTS").is_some_and(|v| v == "1");
            assert!(
                skip,
                "`openssl` is not installed (apt-get install openssl); \
                 set TLSGAP_SKIP_OPENSSL_TESTS=1 to skip the differential tests"
            );
            // Straight to stderr: the test harness captures eprintln! of passing tests.
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: TLSGAP_SKIP_OPENSSL_TESTS=1: cipher strings were NOT checked \
                 against openssl ***\n"
            );
            false
        }
    }
}

/// One suite from a `openssl ciphers -V -stdname` line.
fn parse_suite(line: &str) -> Option<Suite> {
    let t: Vec<&str> = line.split_whitespace().collect();
    if t.len() < 10 || t[1] != "-" || t[3] != "-" {
        return None;
    }
    let code = t[0].replace("0x", "").replace(',', "");
    let code = u32::from_str_radix(&code, 16).ok()?;
    let field = |key: &str| {
        t.iter()
            .find_map(|x| x.strip_prefix(key))
            .unwrap_or("")
            .to_string()
    };
    let enc_field = field("Enc=");
    let (enc, bits) = match enc_field.split_once('(') {
        Some((e, b)) => (e.to_string(), b.trim_end_matches(')').parse().unwrap_or(0)),
        None => (enc_field.clone(), 0),
    };
    let mac = field("Mac=");
    let kx = field("Kx=");
    let aead = mac == "AEAD";
    let mode = if enc == "None" {
        Mode::Null
    } else if aead {
        Mode::Aead
    } else if enc == "RC4" {
        Mode::Stream
    } else {
        Mode::Cbc
    };
    let strength = if enc == "3DES" { 112 } else { bits };
    // Every suite OpenSSL 3 still lists is HIGH, except the eNULL ones.
    let enc_is_null = enc == "None";
    Some(Suite {
        code,
        sslv2_code: false,
        iana: Some(t[2].to_string()),
        openssl: vec![t[4].to_string()],
        min_protocol: Protocol::parse(t[5])?,
        forward_secrecy: kx.contains("DH") || kx == "any",
        kx,
        au: field("Au="),
        enc,
        mode,
        key_bits: bits,
        strength_bits: strength,
        mac,
        aead,
        export: false,
        iana_recommended: None,
        verdict: Verdict::Unknown,
        strength_class: if enc_is_null {
            StrengthClass::None
        } else {
            StrengthClass::High
        },
        in_openssl3: true,
    })
}

fn local_suites() -> Vec<Suite> {
    let (ok, out) = openssl(&[
        "ciphers",
        "-V",
        "-stdname",
        "ALL:COMPLEMENTOFALL:@SECLEVEL=0",
    ])
    .expect("openssl runs");
    assert!(ok, "openssl ciphers ALL:COMPLEMENTOFALL failed");
    let suites: Vec<Suite> = out.lines().filter_map(parse_suite).collect();
    assert!(
        suites.len() > 50,
        "could not parse `openssl ciphers -V -stdname` output:\n{out}"
    );
    suites
}

/// The TLS <= 1.2 names `openssl ciphers [flags] -V s` prints; `None` when it rejects `s`.
fn expected(s: &str, supported_only: bool) -> Option<Vec<String>> {
    let mut args = vec!["ciphers"];
    if supported_only {
        args.extend(["-s", "-psk", "-srp"]);
    }
    args.extend(["-V", s]);
    let (ok, out) = openssl(&args).expect("openssl runs");
    if !ok {
        return None;
    }
    Some(
        out.lines()
            .filter_map(|l| {
                let t: Vec<&str> = l.split_whitespace().collect();
                (t.len() >= 4 && t[1] == "-" && t[3] != "TLSv1.3").then(|| t[2].to_string())
            })
            .collect(),
    )
}

/// The compiled-in default security level of the local openssl.
fn local_default_seclevel() -> u8 {
    let base = expected("ALL:COMPLEMENTOFALL", true);
    (0..=5u8)
        .find(|n| expected(&format!("ALL:COMPLEMENTOFALL:@SECLEVEL={n}"), true) == base)
        .expect("some @SECLEVEL reproduces the default")
}

const MOZILLA_OLD_57: &str = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:\
ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:\
DHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-SHA256:ECDHE-RSA-AES128-SHA256:\
ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384:ECDHE-RSA-AES256-SHA384:\
ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA:DHE-RSA-AES128-SHA256:DHE-RSA-AES256-SHA256:\
AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA256:AES256-SHA256:AES128-SHA:AES256-SHA:DES-CBC3-SHA";

/// Hand-written strings: real-world configurations and the corners of the grammar.
const HAND: &[&str] = &[
    "ALL",
    "ALL:COMPLEMENTOFALL",
    "COMPLEMENTOFALL",
    "DEFAULT",
    "COMPLEMENTOFDEFAULT",
    "ALL:!COMPLEMENTOFDEFAULT:!eNULL",
    "HIGH",
    "MEDIUM",
    "LOW",
    "EXP",
    "EXPORT",
    "HIGH:MEDIUM",
    "HIGH:!aNULL:!MD5",
    "HIGH:!aNULL:!MD5:!RC4",
    "TLSv1.2:RC4:HIGH:!aNULL:!eNULL:!MD5",
    "ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM",
    "EECDH+AESGCM:EDH+AESGCM",
    "EECDH+AESGCM:EDH+AESGCM:AES256+EECDH:AES256+EDH",
    "ALL:!EXPORT:!LOW:!aNULL:!eNULL:!SSLv2",
    "!SSLv3:ALL:!aNULL",
    "!SSLv3:HIGH:!aNULL",
    "HIGH:!SSLv3:!TLSv1.0:!aNULL",
    "DEFAULT:!SSLv3",
    "DEFAULT:@STRENGTH",
    "DEFAULT:!DHE",
    "DEFAULT:-kRSA:+kRSA",
    "DEFAULT:+AES128",
    "DEFAULT+AES",
    "DEFAULT-AES",
    "DEFAULT!AES",
    "DEFAULTX",
    " DEFAULT:AES",
    "ALL:DEFAULT",
    "AESGCM:DEFAULT",
    "DEFAULT:DEFAULT",
    "HIGH:!aNULL:!eNULL:!EXPORT:!DES:!RC4:!MD5:!PSK:!SRP:!CAMELLIA",
    "EECDH+ECDSA+AESGCM:EECDH+aRSA+AESGCM:EECDH+ECDSA+SHA384:EECDH+ECDSA+SHA256:EECDH+aRSA+SHA384:EECDH+aRSA+SHA256:EECDH:EDH+aRSA:!aNULL:!eNULL:!LOW:!3DES:!MD5:!EXP:!PSK:!SRP:!DSS:!RC4",
    "ECDH+AESGCM:DH+AESGCM:ECDH+AES256:DH+AES256:ECDH+AES128:DH+AES:RSA+AESGCM:RSA+AES:!aNULL:!MD5:!DSS",
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:DHE-RSA-CHACHA20-POLY1305",
    MOZILLA_OLD_57,
    "AES128+EECDH:AES128+EDH",
    "kEECDH:kEDH:!aNULL",
    "EECDH:EDH:!aNULL:@STRENGTH",
    "ALL:@STRENGTH",
    "ALL:COMPLEMENTOFALL:@STRENGTH",
    "ALL:+kRSA",
    "ALL:+AES128:+SHA1",
    "ALL:-AES:AES",
    "ALL:-AES:AES128",
    "ALL:!AES:AES",
    "ALL:-ECDHE:+AESGCM:ECDHE",
    "ALL:-ALL:DHE-RSA-AES256-SHA:ALL",
    "kEDH+AES256:-kEDH+AES256+DSS:kEDH+AES256",
    "kEDH+AES256:-DSS:DSS",
    "kEDH+AES256:+DSS",
    "DHE-DSS-AES256-SHA:DHE-RSA-AES256-SHA:-DHE-DSS-AES256-SHA:-DHE-RSA-AES256-SHA:kEDH+AES256",
    "DHE-DSS-AES256-SHA:DHE-RSA-AES256-SHA:-ALL:kEDH+AES256",
    "AES128-SHA:@STRENGTH:AES256-SHA:@STRENGTH",
    "AES128-SHA:AES256-SHA@STRENGTH",
    "AES128-SHA:@STRENGTH+AES",
    "AES128-SHA,AES256-SHA AES128-SHA256;CAMELLIA128-SHA",
    ":AES128-SHA::AES256-SHA:",
    "AES128-SHA!AES128-SHA",
    "AES128-SHA:fo*o:AES256-SHA",
    "AES128-SHA:(foo):AES256-SHA",
    "AES128-SHA:AES256-SHA*:CAMELLIA128-SHA",
    "AES128-SHA:_FOO:AES256-SHA",
    "AES128-SHA:\n AES256-SHA",
    "AES128-SHA:\tAES256-SHA",
    "FOO:AES128-SHA",
    "FOO+AES:AES128-SHA",
    "kRSA+FOO:AES128-SHA",
    "high",
    "NOTHING",
    "!",
    "AES128-SHA:!",
    "AES128-SHA:-",
    "AES128-SHA:+",
    "AES128-SHA:++AES",
    "AES128-SHA:+-AES",
    "AES128-SHA:AES+",
    "AES128-SHA:AES++RSA",
    "AES128-SHA:!@STRENGTH",
    "AES128-SHA:@FOO",
    "AES128-SHA:@SECLEVEL",
    "AES128-SHA:@SECLEVEL=x",
    "AES128-SHA:@SECLEVEL=9",
    "AES128-SHA:@SECLEVEL=1x",
    "AES128-SHA+kRSA:AES256-SHA+kDHE",
    "AES128-SHA+AES256-SHA",
    "AES128-SHA256+AES256-SHA:AES128-SHA",
    "AES+AES",
    "AES128+AES256",
    "ALL+RSA",
    "@STRENGTH",
    "TLS_RSA_WITH_AES_128_CBC_SHA",
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_128_GCM_SHA256:AES128-SHA",
    "EDH-RSA-DES-CBC3-SHA:AES128-SHA",
    "AES128-SHA:TLSv1.1",
    "AES128-SHA:SSLv2",
    "SUITEB128",
    "SUITEB128ONLY",
    "SUITEB128C2",
    "SUITEB192",
    "SUITEB128:ALL",
    "SUITEB128:!ECDHE-ECDSA-AES128-GCM-SHA256",
    "ALL:SUITEB128",
    "AES128-SHA:SUITEB128",
    "PSK:!aPSK",
    "PSK+AESGCM:SRP",
    "kPSK:kRSAPSK:kDHEPSK:kECDHEPSK",
    "aPSK:@STRENGTH",
    "aSRP:kSRP",
    "SHA256:SHA384:SHA1:MD5",
    "NULL:aNULL",
    "eNULL:@STRENGTH",
    "ALL:eNULL",
    "AESCCM:AESCCM8:ARIA:CAMELLIA",
    "CAMELLIA128:CAMELLIA256:ARIA128:ARIA256:ARIAGCM",
    "CBC",
    "CBC+SHA256",
    "FIPS",
    "HIGH:!FIPS",
    "3DES:RC4:DES:IDEA:SEED:AES128-SHA",
    "ALL:!3DES:!RC4:!DES:!IDEA:!SEED:!RC2",
];

const ALIASES: &[&str] = &[
    "ALL",
    "COMPLEMENTOFALL",
    "COMPLEMENTOFDEFAULT",
    "HIGH",
    "aNULL",
    "eNULL",
    "NULL",
    "kRSA",
    "RSA",
    "aRSA",
    "kEDH",
    "kDHE",
    "EDH",
    "DHE",
    "DH",
    "kEECDH",
    "kECDHE",
    "ECDHE",
    "EECDH",
    "ECDH",
    "ADH",
    "AECDH",
    "aECDSA",
    "ECDSA",
    "aDSS",
    "DSS",
    "AES",
    "AES128",
    "AES256",
    "AESGCM",
    "AESCCM",
    "AESCCM8",
    "CHACHA20",
    "CAMELLIA",
    "CAMELLIA128",
    "CAMELLIA256",
    "ARIA",
    "ARIA128",
    "ARIA256",
    "ARIAGCM",
    "SHA1",
    "SHA",
    "SHA256",
    "SHA384",
    "PSK",
    "kPSK",
    "aPSK",
    "kRSAPSK",
    "kDHEPSK",
    "kECDHEPSK",
    "SRP",
    "kSRP",
    "aSRP",
    "TLSv1.2",
    "TLSv1.0",
    "TLSv1",
    "SSLv3",
    "CBC",
];

fn all_strings() -> Vec<String> {
    let mut v: Vec<String> = HAND.iter().map(|s| s.to_string()).collect();
    for a in ALIASES {
        v.push(a.to_string());
        v.push(format!("{a}:@STRENGTH"));
        v.push(format!("ALL:-{a}:{a}"));
        v.push(format!("ALL:+{a}"));
        v.push(format!("HIGH:!{a}"));
        for lvl in 0..=5 {
            v.push(format!("{a}:@SECLEVEL={lvl}"));
        }
    }
    for a in ["ECDHE", "DHE", "kRSA", "PSK", "aECDSA", "aRSA", "ADH"] {
        for b in [
            "AESGCM", "CHACHA20", "AES256", "SHA1", "SHA384", "TLSv1.2", "CAMELLIA",
        ] {
            v.push(format!("{a}+{b}"));
            v.push(format!("{b}+{a}:{a}"));
        }
    }
    for lvl in 0..=5 {
        v.push(format!("DEFAULT:@SECLEVEL={lvl}"));
        v.push(format!("ALL:COMPLEMENTOFALL:@SECLEVEL={lvl}"));
        v.push(format!("@SECLEVEL={lvl}:HIGH:!aNULL"));
        v.push(format!("{MOZILLA_OLD_57}:@SECLEVEL={lvl}"));
    }
    v
}

/// Compare evaluator and openssl on every string over `suites`, keeping only names in
/// `known` in our output (the catalogue has suites this openssl lacks).
fn compare(suites: &[Suite], known: &[String], default_level: u8) -> (usize, Vec<String>) {
    let strings = all_strings();
    let mut failures = Vec::new();
    for s in &strings {
        let ours = evaluate_over(s, suites, default_level);
        let names = |idx: &[usize]| -> Vec<String> {
            idx.iter()
                .map(|&i| suites[i].openssl[0].clone())
                .filter(|n| known.contains(n))
                .collect()
        };
        for supported in [false, true] {
            let theirs = expected(s, supported);
            let mine = ours.as_ref().ok().map(|e| {
                if supported {
                    names(&e.order)
                } else {
                    names(&e.listed)
                }
            });
            // Over the catalogue, a list made only of suites this openssl lacks is what
            // openssl reports as "no cipher match".
            let only_unknown = theirs.is_none() && mine.as_ref().is_some_and(|m| m.is_empty());
            if mine != theirs && !only_unknown {
                let what = if supported {
                    "openssl ciphers -s -psk -srp -V"
                } else {
                    "openssl ciphers -V"
                };
                failures.push(format!(
                    "string {s:?} ({what}):\n  ours:    {:?}\n  openssl: {:?}\n  (ours result: {:?})",
                    mine,
                    theirs,
                    ours.as_ref().map(|e| e.seclevel).map_err(|e| e.message.clone()),
                ));
                // One failure per string, so the count below is a count of strings.
                break;
            }
        }
    }
    (strings.len(), failures)
}

fn report(what: &str, total: usize, failures: &[String]) {
    eprintln!(
        "{what}: {} of {total} cipher strings agree with openssl ({} differences)",
        total - failures.len(),
        failures.len()
    );
    if let Some(first) = failures.first() {
        panic!(
            "{what}: {} difference(s) with openssl; first:\n{first}\n\nall differing strings:\n{}",
            failures.len(),
            failures
                .iter()
                .map(|f| f.lines().next().unwrap_or_default())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn strings_agree_with_local_openssl() {
    if !openssl_available() {
        return;
    }
    let suites = local_suites();
    let known: Vec<String> = suites.iter().map(|s| s.openssl[0].clone()).collect();
    let level = local_default_seclevel();
    let (total, failures) = compare(&suites, &known, level);
    assert!(total >= 100, "only {total} strings");
    report("suites parsed from openssl", total, &failures);
}

#[test]
fn strings_agree_with_local_openssl_over_catalogue() {
    if !openssl_available() {
        return;
    }
    if catalogue::all().is_empty() {
        eprintln!("NOTE: catalogue::all() is empty; catalogue differential run not possible yet");
        return;
    }
    let local = local_suites();
    let known: Vec<String> = local.iter().map(|s| s.openssl[0].clone()).collect();
    let level = local_default_seclevel();
    let (total, failures) = compare(catalogue::all(), &known, level);
    report("catalogue::all()", total, &failures);
}

#[test]
fn the_differential_test_can_fail() {
    // A deliberately wrong table (strength bits zeroed) must produce differences.
    if !openssl_available() {
        return;
    }
    let mut suites = local_suites();
    for s in &mut suites {
        s.strength_bits = 0;
    }
    let known: Vec<String> = suites.iter().map(|s| s.openssl[0].clone()).collect();
    let (_, failures) = compare(&suites, &known, local_default_seclevel());
    assert!(!failures.is_empty());
}
