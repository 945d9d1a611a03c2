//! `tlsgap clients`: fingerprints from logged ClientHello offers.
//!
//! No server here can log these offers as these tests need them: Debian 12's Apache
//! 2.4 has no `SSLClientHelloVars` (httpd trunk only), and its OpenSSL 3.0 cannot
//! negotiate ML-KEM. So the lines are written by hand in the encodings the servers
//! document: httpd trunk's `SSL_CLIENTHELLO_*` hex lists (four hex digits an item,
//! two for EC point formats, GREASE included), nginx's `$ssl_ciphers`/`$ssl_curves`
//! (OpenSSL names, `0x....` for what OpenSSL cannot name) with group names as OpenSSL
//! 3.5 prints them (`X25519MLKEM768`) and `0x11ec` as an older nginx prints that group.

use serde_json::Value;

use crate::util::{assert_code, json, path_str, stdout, tempdir, tlsgap, write};

const CHROME_UA: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const FIREFOX_UA: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0";
const CURL_UA: &str = "curl/7.88.1";

/// Chrome's suites as nginx logs them; GREASE first (a different value every
/// connection).
const CHROME_CIPHERS: &str = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA:AES256-SHA";
/// curl 7.88 on OpenSSL 3.0 (Debian 12).
const CURL_CIPHERS: &str = "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES128-GCM-SHA256:0x00ff";
const CURL_CURVES: &str =
    "X25519:prime256v1:X448:secp521r1:secp384r1:ffdhe2048:ffdhe3072:ffdhe4096:ffdhe6144:ffdhe8192";

/// One `nginx-ssl-full` line.
fn nginx(addr: &str, ua: &str, proto: &str, cipher: &str, ciphers: &str, curves: &str) -> String {
    format!(
        "{addr} - - [12/Jan/2025:10:00:00 +0000] \"GET / HTTP/1.1\" 200 612 \"-\" \"{ua}\" \
         {proto} {cipher} \"{ciphers}\" \"{curves}\" . example.org\n"
    )
}

fn chrome(addr: &str, grease: &str, curves_first: &str) -> String {
    nginx(
        addr,
        CHROME_UA,
        "TLSv1.3",
        "TLS_AES_128_GCM_SHA256",
        &format!("{grease}:{CHROME_CIPHERS}"),
        &format!("{grease}:{curves_first}:X25519:prime256v1:secp384r1"),
    )
}

fn curl(addr: &str, ua: &str) -> String {
    nginx(
        addr,
        ua,
        "TLSv1.3",
        "TLS_AES_256_GCM_SHA384",
        CURL_CIPHERS,
        CURL_CURVES,
    )
}

/// Chrome (twice, different GREASE, PQ by name and by hex code), curl, a script with
/// curl's stack claiming to be Chrome, Firefox; a resumed session logging no offer
/// and a plain-HTTP request.
fn nginx_log() -> String {
    let mut log = String::new();
    log.push_str(&chrome("198.51.100.1", "0x2a2a", "X25519MLKEM768"));
    log.push_str(&chrome("198.51.100.2", "0x8a8a", "0x11ec"));
    log.push_str(&chrome("198.51.100.1", "0xdada", "X25519MLKEM768"));
    log.push_str(&curl("203.0.113.5", CURL_UA));
    log.push_str(&curl("203.0.113.6", CHROME_UA));
    log.push_str(&nginx(
        "192.0.2.9",
        FIREFOX_UA,
        "TLSv1.3",
        "TLS_AES_128_GCM_SHA256",
        "TLS_AES_128_GCM_SHA256:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
        "X25519MLKEM768:X25519:prime256v1:secp384r1:secp521r1:ffdhe2048:ffdhe3072",
    ));
    log.push_str(&nginx(
        "198.51.100.1",
        CHROME_UA,
        "TLSv1.3",
        "TLS_AES_128_GCM_SHA256",
        "-",
        "-",
    ));
    log.push_str(&nginx("192.0.2.10", CURL_UA, "-", "-", "-", "-"));
    log
}

fn clients_json(args: &[&str]) -> Value {
    let o = tlsgap()
        .args(["clients", "--format", "json", "-q"])
        .args(args)
        .output()
        .unwrap();
    assert_code(&o, 0);
    json(&o)
}

fn by_ua<'a>(v: &'a Value, ua: &str) -> &'a Value {
    v["fingerprints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| {
            f["user_agents"]
                .as_array()
                .unwrap()
                .iter()
                .any(|u| u["user_agent"] == ua)
        })
        .unwrap_or_else(|| panic!("no fingerprint with {ua}"))
}

#[test]
fn nginx_offers_give_tg1_fingerprints_with_kinds_and_the_mixed_flag() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", nginx_log().as_bytes());
    let v = clients_json(&["--log-format", "nginx-ssl-full", path_str(&log)]);
    assert_eq!(v["requests"], 6, "{v:#}");
    assert_eq!(v["no_offer"], 2);
    assert_eq!(v["distinct_fingerprints"], 3);
    assert_eq!(v["mixed"], 1);
    let fps = v["fingerprints"].as_array().unwrap();
    // Ranked by requests: Chrome's 3 (GREASE and name/hex spelling do not matter).
    let chrome = &fps[0];
    assert_eq!(chrome["method"], "tg1");
    assert!(chrome["fingerprint"].as_str().unwrap().starts_with("tg1_"));
    assert_eq!(chrome["requests"], 3);
    assert_eq!(chrome["clients"], 2);
    assert_eq!(chrome["post_quantum"], true);
    assert_eq!(chrome["mixed"], false);
    assert_eq!(chrome["kinds"]["browser"], 3);
    assert_eq!(chrome["negotiated"][0]["protocol"], "TLSv1.3");
    assert_eq!(chrome["negotiated"][0]["cipher"], "TLS_AES_128_GCM_SHA256");
    // curl's stack under curl's name and under Chrome's: flagged.
    let curl = &fps[1];
    assert_eq!(curl["requests"], 2);
    assert_eq!(curl["mixed"], true);
    assert_eq!(curl["post_quantum"], false);
    assert_eq!(
        (
            curl["kinds"]["browser"].as_u64(),
            curl["kinds"]["library"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let firefox = by_ua(&v, FIREFOX_UA);
    assert_ne!(firefox["fingerprint"], chrome["fingerprint"]);
    assert_eq!(firefox["post_quantum"], true);
    assert_eq!(v["post_quantum_offered"]["requests"], 4);
    assert_eq!(v["post_quantum_offered"]["fingerprints"], 2);

    // The same lines again, in another order and over two jobs: the same fingerprints.
    let text = nginx_log();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.reverse();
    let log2 = write(
        dir.path(),
        "reversed.log",
        (lines.join("\n") + "\n").as_bytes(),
    );
    let w = clients_json(&["--log-format", "nginx-ssl-full", "-j2", path_str(&log2)]);
    let names = |v: &Value| -> Vec<(String, u64)> {
        let mut n: Vec<(String, u64)> = v["fingerprints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["fingerprint"].as_str().unwrap().to_string(),
                    f["requests"].as_u64().unwrap(),
                )
            })
            .collect();
        n.sort();
        n
    };
    assert_eq!(names(&v), names(&w));
}

#[test]
fn table_flags_the_mixed_fingerprint() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", nginx_log().as_bytes());
    let o = tlsgap()
        .current_dir(dir.path())
        .args(["clients", "--log-format", "nginx-ssl-full", "access.log"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let _ = log;
    let out = stdout(&o);
    assert!(out.contains("FLAG: 1 fingerprint(s)"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    insta::assert_snapshot!(out);
}

/// The two ClientHellos whose JA3 was published with its digest: pyJA3's README example
/// (`2aef69b4ba1938c3a400de4188743185`, computed by Salesforce's JA3 from a capture) and
/// a Chrome hello with X25519MLKEM768 as browserleaks.com published it
/// (`98487aa16281980e7d1120d399efb6a4`), written as httpd trunk logs them, with GREASE
/// values (different each connection) that JA3 ignores.
#[test]
fn apache_clienthello_lines_give_the_published_ja3() {
    fn hex(v: &[u16]) -> String {
        v.iter().map(|c| format!("{c:04x}")).collect()
    }
    let old_ciphers = [
        255, 49162, 49172, 136, 135, 57, 56, 49167, 49157, 132, 53, 49159, 49161, 49169, 49171, 69,
        68, 51, 50, 49164, 49166, 49154, 49156, 150, 65, 4, 5, 47, 49160, 49170, 22, 19, 49165,
        49155, 65279, 10,
    ];
    let chrome_ciphers = [
        4865, 4866, 4867, 49195, 49199, 49196, 49200, 52393, 52392, 49171, 49172, 156, 157, 47, 53,
    ];
    let chrome_ext = [
        45, 51, 16, 65037, 23, 17613, 0, 11, 10, 43, 65281, 35, 18, 5, 13, 27,
    ];
    let line = |addr: &str,
                ua: &str,
                proto: &str,
                cipher: &str,
                version: &str,
                ciphers: String,
                ext: String,
                groups: String| {
        format!(
            "{addr} - - [12/Jan/2025:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"{ua}\" {proto} \
             {cipher} {version} {ciphers} {ext} {groups} 00\n"
        )
    };
    let mut log = String::new();
    for grease in [0x0a0a_u16, 0xbaba] {
        let mut c = vec![grease];
        c.extend_from_slice(&chrome_ciphers);
        let mut e = vec![grease];
        e.extend_from_slice(&chrome_ext);
        e.push(0x1a1a);
        log.push_str(&line(
            "198.51.100.7",
            CHROME_UA,
            "TLSv1.3",
            "TLS_AES_128_GCM_SHA256",
            "0303",
            hex(&c),
            hex(&e),
            hex(&[grease, 4588, 29, 23, 24]),
        ));
    }
    log.push_str(&line(
        "192.0.2.4",
        "Python-urllib/2.7",
        "TLSv1",
        "ECDHE-RSA-AES256-SHA",
        "0301",
        hex(&old_ciphers),
        hex(&[0, 10, 11, 35]),
        hex(&[23, 24, 25]),
    ));
    let dir = tempdir();
    let path = write(dir.path(), "ssl_access.log", log.as_bytes());
    let format = "%h %l %u %t \"%r\" %>s %b \"%{User-Agent}i\" %{SSL_PROTOCOL}x %{SSL_CIPHER}x \
                  %{SSL_CLIENTHELLO_VERSION}x %{SSL_CLIENTHELLO_CIPHERS}x \
                  %{SSL_CLIENTHELLO_EXTENSIONS}x %{SSL_CLIENTHELLO_GROUPS}x \
                  %{SSL_CLIENTHELLO_EC_FORMATS}x";
    let v = clients_json(&["--log-format", format, path_str(&path)]);
    let fps = v["fingerprints"].as_array().unwrap();
    assert_eq!(fps.len(), 2, "{v:#}");
    assert_eq!(fps[0]["method"], "ja3");
    assert_eq!(fps[0]["fingerprint"], "98487aa16281980e7d1120d399efb6a4");
    assert_eq!(fps[0]["requests"], 2);
    assert_eq!(fps[0]["post_quantum"], true);
    assert_eq!(fps[1]["fingerprint"], "2aef69b4ba1938c3a400de4188743185");
    assert_eq!(
        fps[1]["ja3"],
        "769,255-49162-49172-136-135-57-56-49167-49157-132-53-49159-49161-49169-49171-69-68-51-50-49164-49166-49154-49156-150-65-4-5-47-49160-49170-22-19-49165-49155-65279-10,0-10-11-35,23-24-25,0"
    );
    assert_eq!(fps[1]["user_agents"][0]["kind"], "library");
    // Under Mozilla's modern profile the 2012 client has no protocol in common.
    let w = clients_json(&[
        "--log-format",
        format,
        "--policy",
        "mozilla-modern",
        path_str(&path),
    ]);
    let fps = w["fingerprints"].as_array().unwrap();
    assert_eq!(fps[0]["policy"]["works"], true, "{w:#}");
    assert_eq!(fps[0]["policy"]["protocol"], "TLSv1.3");
    assert_eq!(fps[1]["policy"]["works"], false);
    assert_eq!(fps[1]["policy"]["failure"], "no_common_protocol");
    assert_eq!(w["policy"]["certs"], "rsa");
}

#[test]
fn hostile_user_agents_are_escaped_in_table_and_csv() {
    let evil = "curl/8.0 \u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}gnp.exe";
    // As nginx would log it unescaped (a default `escape` logs \x1B; the raw bytes are
    // the worse case).
    let log = nginx(
        "203.0.113.66",
        evil,
        "TLSv1.3",
        "TLS_AES_256_GCM_SHA384",
        CURL_CIPHERS,
        CURL_CURVES,
    ) + &nginx(
        "203.0.113.67",
        "=cmd|' /C calc'!A0",
        "TLSv1.3",
        "TLS_AES_256_GCM_SHA384",
        CURL_CIPHERS,
        CURL_CURVES,
    );
    let dir = tempdir();
    let path = write(dir.path(), "access.log", log.as_bytes());
    let o = tlsgap()
        .args(["clients", "--log-format", "nginx-ssl-full", path_str(&path)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(
        !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'),
        "{out}"
    );
    assert!(out.contains("\\x1B]0;pwned\\x07"), "{out}");
    let o = tlsgap()
        .args([
            "clients",
            "--format",
            "csv",
            "-q",
            "--top",
            "1",
            "--log-format",
            "nginx-ssl-full",
            path_str(&path),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let csv = stdout(&o);
    assert!(
        csv.starts_with("fingerprint,method,requests,share,clients,post_quantum,mixed,"),
        "{csv}"
    );
    assert!(!csv.contains('\u{1b}'), "{csv}");
    assert_eq!(csv.lines().count(), 2, "{csv}");
}

#[test]
fn formats_without_an_offer_are_refused() {
    let dir = tempdir();
    let path = write(
        dir.path(),
        "a.log",
        b"192.0.2.1 TLSv1.3 TLS_AES_128_GCM_SHA256\n",
    );
    let o = tlsgap()
        .args([
            "clients",
            "--log-format",
            "%h %{SSL_PROTOCOL}x %{SSL_CIPHER}x",
            path_str(&path),
        ])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(crate::util::stderr(&o).contains("$ssl_ciphers"));
}

/// `tls` with the negotiated group (`$ssl_curve`) and the offered ones: the
/// post-quantum shares, by name and by the hex code an older nginx logs.
#[test]
fn tls_shows_post_quantum_shares_only_when_groups_are_logged() {
    let format = r#"$remote_addr [$time_local] "$request" $status "$http_user_agent" $ssl_protocol $ssl_cipher $ssl_curve "$ssl_curves""#;
    let line = |addr: &str, ua: &str, curve: &str, curves: &str| {
        format!(
            "{addr} [12/Jan/2025:10:00:00 +0000] \"GET / HTTP/1.1\" 200 \"{ua}\" TLSv1.3 \
             TLS_AES_128_GCM_SHA256 {curve} \"{curves}\"\n"
        )
    };
    let log = line(
        "198.51.100.1",
        CHROME_UA,
        "X25519MLKEM768",
        "0x2a2a:X25519MLKEM768:X25519",
    ) + &line("198.51.100.2", CHROME_UA, "0x11ec", "0x11ec:X25519")
        + &line("203.0.113.5", CURL_UA, "X25519", CURL_CURVES)
        + &line("203.0.113.5", CURL_UA, "X25519", CURL_CURVES);
    let dir = tempdir();
    let path = write(dir.path(), "access.log", log.as_bytes());
    let (v, o) = crate::util::tls_json(&["--log-format", format, path_str(&path)]);
    assert_code(&o, 0);
    let pq = &v["post_quantum"];
    assert_eq!(pq["negotiated"]["requests"], 4, "{v:#}");
    assert_eq!(pq["negotiated"]["post_quantum"]["count"], 2);
    assert_eq!(pq["negotiated"]["groups"][0]["group"], "X25519");
    assert_eq!(pq["negotiated"]["groups"][1]["group"], "X25519MLKEM768");
    assert_eq!(pq["offered"]["post_quantum"]["count"], 2);
    assert_eq!(pq["offered"]["clients"], 3);
    assert_eq!(pq["offered"]["post_quantum_clients"]["count"], 2);
    let o = tlsgap()
        .args(["tls", "--log-format", format, path_str(&path)])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(out.contains("X25519MLKEM768 (post-quantum)"), "{out}");
    assert!(
        out.contains("offered a post-quantum group: 2 of 4 requests"),
        "{out}"
    );
    // The same figures in CSV: group rows, then the offered rows, after `plain`.
    let o = tlsgap()
        .args(["tls", "-q", "--format", "csv", "--log-format", format])
        .arg(&path)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let csv = stdout(&o);
    let tail: Vec<&str> = csv
        .lines()
        .skip_while(|l| !l.starts_with("plain,"))
        .collect();
    assert_eq!(
        tail,
        [
            "plain,,,0,,,,,,,,",
            "group,,,2,0.5,,,,,,\"X25519\",false",
            "group,,,2,0.5,,,,,,\"X25519MLKEM768\",true",
            "offered_groups,,,4,,,,,,,,",
            "offered_post_quantum,,,2,0.5,,,,,,,true",
            "offered_clients,,,3,,,,,,,,",
            &format!("offered_post_quantum_clients,,,2,{},,,,,,,true", 2.0 / 3.0),
        ],
        "{csv}"
    );
    // And in Parquet, read back by DuckDB.
    let pq_path = dir.path().join("tls.parquet");
    let o = tlsgap()
        .args([
            "tls",
            "-q",
            "--format",
            "parquet",
            "--log-format",
            format,
            "-o",
        ])
        .arg(&pq_path)
        .arg(&path)
        .output()
        .unwrap();
    assert_code(&o, 0);
    if crate::util::python_ready(
        "tls_shows_post_quantum_shares_only_when_groups_are_logged",
        &["duckdb"],
        "duckdb",
        "reading the tls Parquet group rows back",
    ) {
        let o = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys, duckdb; print(duckdb.sql(\"select kind, \\\"group\\\", count, \
                 post_quantum from read_parquet('\" + sys.argv[1] + \"') where kind <> 'tls' \
                 order by all\").fetchall())",
            ])
            .arg(&pq_path)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", crate::util::stderr(&o));
        assert_eq!(
            stdout(&o).trim(),
            "[('group', 'X25519', 2, False), ('group', 'X25519MLKEM768', 2, True), \
             ('offered_clients', None, 3, None), ('offered_groups', None, 4, None), \
             ('offered_post_quantum', None, 2, True), \
             ('offered_post_quantum_clients', None, 2, True), ('plain', None, 0, None)]"
        );
        // The README's query for the negotiated post-quantum share.
        let q =
            crate::fleet::readme_query("tls group rows").replace("tls.parquet", path_str(&pq_path));
        let o = std::process::Command::new("python3")
            .args([
                "-c",
                "import sys, duckdb; print(duckdb.sql(sys.argv[1]).fetchall())",
                &q,
            ])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", crate::util::stderr(&o));
        assert_eq!(stdout(&o).trim(), "[(0.5,)]");
    }
    // Without group fields: no such key, no such section.
    let plain = "198.51.100.1 TLSv1.3 TLS_AES_128_GCM_SHA256\n";
    let path = write(dir.path(), "plain.log", plain.as_bytes());
    let fmt = "%h %{SSL_PROTOCOL}x %{SSL_CIPHER}x";
    let (v, _) = crate::util::tls_json(&["--log-format", fmt, path_str(&path)]);
    assert!(v.get("post_quantum").is_none(), "{v:#}");
    let o = tlsgap()
        .args(["tls", "--log-format", fmt, path_str(&path)])
        .output()
        .unwrap();
    assert!(!stdout(&o).contains("post-quantum"));
    let o = tlsgap()
        .args([
            "tls",
            "-q",
            "--format",
            "csv",
            "--log-format",
            fmt,
            path_str(&path),
        ])
        .output()
        .unwrap();
    let csv = stdout(&o);
    assert!(
        csv.lines()
            .skip(1)
            .all(|l| l.starts_with("tls,") || l.starts_with("plain,")),
        "{csv}"
    );
}
