//! `tlsgap ciphers`: the catalogue from the command line.

use serde_json::Value;

use crate::util::{self, assert_code, json, path_str, stderr, stdout};

fn ciphers(args: &[&str]) -> std::process::Output {
    util::tlsgap().arg("ciphers").args(args).output().unwrap()
}

#[test]
fn one_name_every_fact_in_json() {
    let o = ciphers(&["--format", "json", "ECDHE-RSA-AES128-GCM-SHA256"]);
    assert_code(&o, 0);
    let v = json(&o);
    let s = &v.as_array().unwrap()[0];
    assert_eq!(s["query"], "ECDHE-RSA-AES128-GCM-SHA256");
    assert_eq!(s["code"], "0xC0,0x2F");
    assert_eq!(s["iana"], "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
    assert_eq!(s["openssl"][0], "ECDHE-RSA-AES128-GCM-SHA256");
    assert_eq!(s["min_protocol"], "TLSv1.2");
    assert_eq!(s["kx"], "ECDH");
    assert_eq!(s["au"], "RSA");
    assert_eq!(s["mode"], "aead");
    assert_eq!(s["strength_bits"], 128);
    assert_eq!(s["mac"], "AEAD");
    assert_eq!(s["forward_secrecy"], true);
    assert_eq!(s["aead"], true);
    assert_eq!(s["export"], false);
    assert_eq!(s["iana_recommended"], "Y");
    assert_eq!(s["verdict"], "recommended");
}

#[test]
fn iana_names_and_old_aliases_resolve() {
    let o = ciphers(&[
        "--format",
        "json",
        "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
        "EDH-RSA-DES-CBC3-SHA",
    ]);
    assert_code(&o, 0);
    let v = json(&o);
    let rows = v.as_array().unwrap();
    assert_eq!(rows[0]["code"], "0x00,0x0A");
    assert_eq!(rows[0]["openssl"][0], "DES-CBC3-SHA");
    assert_eq!(rows[0]["strength_bits"], 112);
    assert_eq!(rows[0]["verdict"], "weak");
    assert_eq!(rows[1]["code"], "0x00,0x16");
    assert_eq!(rows[1]["forward_secrecy"], true);
}

#[test]
fn sslv2_names_resolve_by_protocol() {
    let o = ciphers(&["--format", "json", "--protocol", "SSLv2", "RC4-MD5"]);
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v[0]["code"], "0x01,0x00,0x80");
    assert_eq!(v[0]["verdict"], "insecure");
    let o = ciphers(&["--format", "json", "--protocol", "TLSv1.2", "RC4-MD5"]);
    assert_code(&o, 0);
    assert_eq!(json(&o)[0]["code"], "0x00,0x04");
    // Without a protocol, both.
    let o = ciphers(&["--format", "json", "RC4-MD5"]);
    let codes: Vec<String> = json(&o)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["code"].as_str().unwrap().to_string())
        .collect();
    assert!(codes.contains(&"0x01,0x00,0x80".to_string()), "{codes:?}");
    assert!(codes.contains(&"0x00,0x04".to_string()), "{codes:?}");
}

#[test]
fn unknown_names_are_listed_and_exit_1() {
    let o = ciphers(&["--format", "json", "NO-SUCH-SUITE", "AES128-SHA"]);
    assert_code(&o, 1);
    let v = json(&o);
    assert_eq!(v[0]["query"], "NO-SUCH-SUITE");
    assert_eq!(v[0]["verdict"], "unknown");
    assert_eq!(v[0]["code"], Value::Null);
    assert_eq!(v[1]["openssl"][0], "AES128-SHA");
    let o = ciphers(&["NO-SUCH-\u{1b}[31mSUITE"]);
    assert_code(&o, 1);
    assert!(stdout(&o).contains("unknown"), "{}", stdout(&o));
    assert!(!stdout(&o).contains('\u{1b}'), "raw escape on the terminal");
}

#[test]
fn filters_by_verdict_and_protocol() {
    let o = ciphers(&["--format", "csv", "--verdict", "insecure"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let mut lines = out.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let verdict_col = header.iter().position(|h| *h == "verdict").unwrap();
    let rows: Vec<&str> = lines.collect();
    assert!(rows.len() > 20, "only {} insecure suites", rows.len());
    for r in &rows {
        assert!(r.ends_with(",\"insecure\""), "{r}");
    }
    assert_eq!(verdict_col, header.len() - 1);

    let o = ciphers(&["--format", "json", "--protocol", "TLSv1.3"]);
    let v = json(&o);
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["iana"].as_str().unwrap())
        .collect();
    for want in [
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_AES_128_CCM_SHA256",
        "TLS_AES_128_CCM_8_SHA256",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["min_protocol"] == "TLSv1.3"));
}

#[test]
fn whole_table_as_text_fits_and_counts() {
    let o = ciphers(&[]);
    assert_code(&o, 0);
    let out = stdout(&o);
    let last = out.lines().last().unwrap();
    let n: usize = last.trim_end_matches(" suites").parse().unwrap();
    // 80 columns (standard output is no terminal): kx/au and enc(bits) give way.
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    let left_out = "(left out to fit 80 columns: kx/au, enc(bits); set COLUMNS wider to show them)";
    assert!(out.lines().any(|l| l == left_out), "{out}");
    assert_eq!(
        out.lines().count(),
        n + 3,
        "header + rows + columns left out + count"
    );
    assert!(
        n >= 158,
        "the catalogue has at least OpenSSL 3's suites: {n}"
    );
}

/// `--explain STRING` expands a cipher string like `openssl ciphers -v`, saying what put
/// each suite in or took it out; a string OpenSSL 3 cannot use is an error that says so.
#[test]
fn explain_expands_a_cipher_string_with_reasons() {
    let o = ciphers(&[
        "--explain",
        "ECDHE+AESGCM:AES128-SHA:-RSA:!SHA1:@SECLEVEL=3",
        "--format",
        "json",
    ]);
    assert_code(&o, 0);
    let v = json(&o);
    let rows = v.as_array().unwrap();
    let row = |n: &str| {
        rows.iter()
            .find(|r| r["suite"] == n)
            .unwrap_or_else(|| panic!("{n} missing"))
    };
    let r = row("ECDHE-RSA-AES128-GCM-SHA256");
    assert_eq!(r["usable"], true);
    assert_eq!(r["by"], "added by ECDHE+AESGCM");
    assert_eq!(r["position"], 4);
    let r = row("AES128-SHA");
    assert_eq!(r["usable"], false);
    assert_eq!(r["reason"], "suite_not_listed");
    assert_eq!(r["by"], "killed by !SHA1");
    // OpenSSL takes spaces between words as it takes colons (`openssl ciphers
    // 'HIGH !aNULL'`): the same suites, not an error asking for directives.
    let spaced = ciphers(&["--explain", "HIGH !aNULL", "--format", "json"]);
    let coloned = ciphers(&["--explain", "HIGH:!aNULL", "--format", "json"]);
    assert_code(&spaced, 0);
    assert_eq!(json(&spaced), json(&coloned));
    // Listed suites the level refuses say so.
    let o = ciphers(&["--explain", "AES128-GCM-SHA256:ECDHE+AESGCM:@SECLEVEL=3"]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(
        out.contains("security level: 3 (@SECLEVEL=3 in the cipher string)"),
        "{out}"
    );
    let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("out: security level 3 refuses the suite (no forward secrecy) (added by AES128-GCM-SHA256)"),
        "{out}"
    );
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    // Without @SECLEVEL, --seclevel sets the level the string starts from.
    let o = ciphers(&[
        "--explain",
        "AES128-GCM-SHA256:ECDHE+AESGCM",
        "--seclevel",
        "3",
    ]);
    assert!(
        stdout(&o).contains("security level: 3 (--seclevel 3)"),
        "{}",
        stdout(&o)
    );
    // What OpenSSL 3 no longer has.
    let o = ciphers(&["--explain", "RC4-SHA"]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("matches no suite OpenSSL 3 has"),
        "{}",
        stderr(&o)
    );
    // Pasted directives work too, with the server's own additions.
    let o = ciphers(&[
        "--explain",
        "SSLCipherSuite ALL:@SECLEVEL=0",
        "--format",
        "csv",
    ]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert_eq!(
        out.lines().next().unwrap(),
        "position,suite,min_protocol,verdict,usable,reason,by,why"
    );
    assert!(
        out.contains("\"ADH-AES128-SHA\",\"SSLv3\",\"insecure\",false,\"suite_not_listed\",\"killed by !aNULL\""),
        "mod_ssl's appended !aNULL: {out}"
    );
}

/// The level comes from the server's openssl.cnf when the string has none.
#[test]
fn explain_reads_the_level_from_openssl_cnf() {
    let dir = util::tempdir();
    let cnf = util::write(
        dir.path(),
        "openssl.cnf",
        b"openssl_conf = init\n[init]\nssl_conf = ssl\n[ssl]\nsystem_default = sys\n[sys]\nMinProtocol = TLSv1.2\nCipherString = DEFAULT:@SECLEVEL=0\n",
    );
    let o = ciphers(&["--explain", "AES128-SHA", "--openssl-conf", path_str(&cnf)]);
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(
        out.contains(&format!(
            "security level: 0 (CipherString in {})",
            cnf.display()
        )),
        "{out}"
    );
    // A named file that cannot be read is an error naming it.
    let o = ciphers(&[
        "--explain",
        "HIGH",
        "--openssl-conf",
        "/nonexistent/openssl.cnf",
    ]);
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("/nonexistent/openssl.cnf"),
        "{}",
        stderr(&o)
    );
    // --seclevel wins over the file.
    let o = ciphers(&[
        "--explain",
        "AES128-SHA:ECDHE+AESGCM",
        "--openssl-conf",
        path_str(&cnf),
        "--seclevel",
        "3",
    ]);
    assert!(stdout(&o).contains("security level: 3 (--seclevel 3)"));
}

/// Blocks for names asked for are separated by one blank line, with none at the end.
#[test]
fn named_blocks_have_no_trailing_blank_line() {
    let o = util::tlsgap()
        .args(["ciphers", "NO-SUCH", "AES128-SHA"])
        .output()
        .unwrap();
    assert_code(&o, 1);
    let s = stdout(&o);
    assert!(
        s.starts_with("NO-SUCH: unknown (not in the catalogue)\n\nAES128-SHA\n"),
        "{s}"
    );
    assert!(!s.ends_with("\n\n"), "{s:?}");
    let o = util::tlsgap()
        .args(["ciphers", "NO-SUCH"])
        .output()
        .unwrap();
    assert_eq!(stdout(&o), "NO-SUCH: unknown (not in the catalogue)\n");
}
