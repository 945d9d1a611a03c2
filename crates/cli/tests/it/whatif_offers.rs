//! `whatif` decides requests exactly from the offer the server logged.
//!
//! The nginx lines are written the way the real nginx 1.22 of `scripts/tls-offers.py`
//! logs them (names, `TLS_EMPTY_RENEGOTIATION_INFO_SCSV`, `"-"` for no groups and for
//! the groups of a resumed TLS 1.2 session; see `scripts/tls-offers.md`). The Apache
//! lines follow the httpd trunk documentation's encoding of `SSL_CLIENTHELLO_*` (four
//! hex digits an item, GREASE included): no Apache here has those variables.

use serde_json::Value;

use crate::util::{self, assert_code, json, path_str, stdout};

const CURL_TLS13: &str = r#""TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:DHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-SHA:AES256-SHA:TLS_EMPTY_RENEGOTIATION_INFO_SCSV" "X25519:prime256v1:X448:secp521r1:secp384r1:ffdhe2048:ffdhe3072:ffdhe4096:ffdhe6144:ffdhe8192""#;

fn nginx_line(n: u32, ua: &str, negotiated: &str, offer: &str, reused: &str) -> String {
    format!(
        "192.0.2.{n} - - [26/Nov/2026:08:00:{n:02} +0000] \"GET /c/{n} HTTP/1.1\" 200 5 \"-\" \"{ua}\" {negotiated} {offer} {reused} localhost\n"
    )
}

fn nginx_log(dir: &std::path::Path) -> std::path::PathBuf {
    let lines = [
        // curl 7.88 defaults, TLS 1.3.
        nginx_line(
            1,
            "curl/7.88.1",
            "TLSv1.3 TLS_AES_256_GCM_SHA384",
            CURL_TLS13,
            ".",
        ),
        // s_client -tls1 -cipher AES256-SHA:@SECLEVEL=0: no groups at all.
        nginx_line(
            2,
            "old-client",
            "TLSv1 AES256-SHA",
            r#""AES256-SHA:TLS_EMPTY_RENEGOTIATION_INFO_SCSV" "-""#,
            ".",
        ),
        // TLS 1.2, CBC suites only.
        nginx_line(
            3,
            "python-requests/2.31",
            "TLSv1.2 ECDHE-RSA-AES256-SHA",
            r#""ECDHE-RSA-AES256-SHA:AES256-SHA:TLS_EMPTY_RENEGOTIATION_INFO_SCSV" "X25519:prime256v1""#,
            ".",
        ),
        // Negotiated a CBC suite, but offers GCM suites too (client order put CBC first).
        nginx_line(
            4,
            "Java/1.8.0_412",
            "TLSv1.2 ECDHE-RSA-AES256-SHA",
            r#""ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:TLS_EMPTY_RENEGOTIATION_INFO_SCSV" "secp384r1:prime256v1""#,
            ".",
        ),
        // A resumed TLS 1.2 session: the groups are not logged.
        nginx_line(
            5,
            "curl/7.88.1",
            "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256",
            r#""ECDHE-RSA-AES128-GCM-SHA256:AES128-SHA:TLS_EMPTY_RENEGOTIATION_INFO_SCSV" "-""#,
            "r",
        ),
        // No offer logged: judged by the negotiated suite.
        nginx_line(
            6,
            "Wget/1.21",
            "TLSv1.2 ECDHE-RSA-AES256-SHA",
            r#""-" "-""#,
            ".",
        ),
        // Plain HTTP.
        nginx_line(7, "curl/7.88.1", "- -", r#""-" "-""#, "-"),
    ];
    util::write(dir, "access.log", lines.concat().as_bytes())
}

const STRICT: &str =
    "ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM; ssl_prefer_server_ciphers on;";

fn whatif(args: &[&str]) -> std::process::Output {
    util::tlsgap()
        .args(["whatif", "-q"])
        .args(args)
        .output()
        .unwrap()
}

fn negotiated(x: &Value) -> Vec<(String, String, Option<String>, u64)> {
    x["negotiated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["protocol"].as_str().unwrap().to_string(),
                n["cipher"].as_str().unwrap().to_string(),
                n["group"].as_str().map(str::to_string),
                n["requests"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn reasons(x: &Value) -> Vec<(String, u64)> {
    x["by_reason"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["reason"].as_str().unwrap().to_string(),
                r["requests"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn nginx_offers_are_decided_exactly_and_the_rest_by_upper_bound() {
    let dir = util::tempdir();
    let log = nginx_log(dir.path());
    let o = whatif(&[
        "--log-format",
        "nginx-ssl-full",
        "--policy",
        STRICT,
        "--format",
        "json",
        path_str(&log),
    ]);
    assert_code(&o, 0);
    let v = json(&o);
    let x = &v["exact"];
    assert_eq!(x["certs"], "rsa");
    assert_eq!(x["requests"], 5);
    assert_eq!(x["works"], 3);
    assert_eq!(x["fails"], 2);
    // Line 4 moves from its CBC suite to GCM.
    assert_eq!(x["changed"], 1);
    assert_eq!(x["clients"], 5);
    assert_eq!(x["clients_failing"], 2);
    let mut r = reasons(x);
    r.sort();
    assert_eq!(
        r,
        vec![
            ("no_common_cipher".to_string(), 1),
            ("no_common_protocol".to_string(), 1)
        ]
    );
    let mut n = negotiated(x);
    n.sort();
    let s = |a: &str| a.to_string();
    assert_eq!(
        n,
        vec![
            // Server order: AES256 before AES128 in `ECDHE+AESGCM`; the resumed line
            // logs no groups, so none is named.
            (s("TLSv1.2"), s("ECDHE-RSA-AES128-GCM-SHA256"), None, 1),
            // With server preference the curve follows the server's order too
            // (OpenSSL's default list has prime256v1 before secp384r1).
            (
                s("TLSv1.2"),
                s("ECDHE-RSA-AES256-GCM-SHA384"),
                Some(s("prime256v1")),
                1
            ),
            // OpenSSL's default TLS 1.3 order starts with AES-256; curl's key share
            // is for X25519.
            (
                s("TLSv1.3"),
                s("TLS_AES_256_GCM_SHA384"),
                Some(s("X25519")),
                1
            ),
        ]
    );
    assert_eq!(x["without_offer"]["total"], 1);
    assert_eq!(x["without_offer"]["refused"], 1);
    // Headline: exact failures plus the upper bound for the line without an offer.
    assert_eq!(v["requests"]["total"], 6);
    assert_eq!(v["requests"]["refused"], 3);
    assert_eq!(v["plain"], 1);
    assert!(v["caveat"].as_str().unwrap().contains("exactly"));

    // Client preference: the Java client's own first GCM suite.
    let client_pref = STRICT.replace(" ssl_prefer_server_ciphers on;", "");
    let v = json(&whatif(&[
        "--log-format",
        "nginx-ssl-full",
        "--policy",
        &client_pref,
        "--format",
        "json",
        path_str(&log),
    ]));
    assert!(negotiated(&v["exact"]).iter().any(
        |(_, c, g, _)| c == "ECDHE-RSA-AES128-GCM-SHA256" && g.as_deref() == Some("secp384r1")
    ));

    // An ECDSA-only server: no TLS 1.2 suite the clients offer can be served.
    let v = json(&whatif(&[
        "--log-format",
        "nginx-ssl-full",
        "--policy",
        STRICT,
        "--cert",
        "ecdsa",
        "--format",
        "json",
        path_str(&log),
    ]));
    assert_eq!(v["exact"]["certs"], "ecdsa");
    assert_eq!(v["exact"]["certs_origin"], "given");
    assert_eq!(v["exact"]["works"], 1);
    assert_eq!(v["exact"]["fails"], 4);

    // Table and CSV say the same.
    let o = whatif(&[
        "--log-format",
        "nginx-ssl-full",
        "--policy",
        STRICT,
        path_str(&log),
    ]);
    let t = stdout(&o);
    assert!(t.contains("from the clients' logged offers"), "{t}");
    assert!(
        t.contains("3 of 5 requests would still work, 2 would fail (40.00%)"),
        "{t}"
    );
    assert!(t.contains("1 requests logged no offer: 1 refused"), "{t}");
    assert!(
        t.contains("no protocol version the client offers is enabled"),
        "{t}"
    );
    let o = whatif(&[
        "--log-format",
        "nginx-ssl-full",
        "--policy",
        STRICT,
        "--format",
        "csv",
        path_str(&log),
    ]);
    let csv = stdout(&o);
    assert!(
        csv.lines().next().unwrap().ends_with(",reason,group"),
        "{csv}"
    );
    assert!(
        csv.contains("\"exact\",,,,,,\"exact\",5,2,5,2,\"rsa\","),
        "{csv}"
    );
    assert!(csv.contains(
        "\"exact_negotiated\",\"TLSv1.3\",\"TLS_AES_256_GCM_SHA384\",,,,\"works\",1,0,,,,\"X25519\""
    ));
    assert!(
        csv.contains("\"no_offer\",,,,,,\"upper_bound\",1,1,,,,"),
        "{csv}"
    );
}

#[test]
fn list_requests_decides_each_line() {
    let dir = util::tempdir();
    let log = nginx_log(dir.path());
    let listing = dir.path().join("requests.csv");
    let o = whatif(&[
        "--log-format",
        "nginx-ssl-full",
        "--policy",
        STRICT,
        "--list-requests",
        path_str(&listing),
        path_str(&log),
    ]);
    assert_code(&o, 0);
    let text = std::fs::read_to_string(&listing).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("file,line,client,user_agent,protocol,cipher,offer,outcome,new_protocol,new_cipher,new_group,reason")
    );
    let rows: Vec<Vec<String>> = lines
        .map(|l| {
            l.split(',')
                .map(|c| c.trim_matches('"').to_string())
                .collect()
        })
        .collect();
    // Six TLS lines; the plain-HTTP line 7 is not listed.
    let numbers: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
    assert_eq!(numbers, ["1", "2", "3", "4", "5", "6"]);
    let cols = |n: usize| -> Vec<&str> { rows[n][6..].iter().map(String::as_str).collect() };
    assert_eq!(
        cols(0),
        [
            "yes",
            "works",
            "TLSv1.3",
            "TLS_AES_256_GCM_SHA384",
            "X25519",
            ""
        ]
    );
    assert_eq!(cols(1), ["yes", "fails", "", "", "", "no_common_protocol"]);
    assert_eq!(cols(2), ["yes", "fails", "", "", "", "no_common_cipher"]);
    assert_eq!(
        cols(3),
        [
            "yes",
            "works",
            "TLSv1.2",
            "ECDHE-RSA-AES256-GCM-SHA384",
            "prime256v1",
            ""
        ]
    );
    assert_eq!(
        cols(4),
        [
            "yes",
            "works",
            "TLSv1.2",
            "ECDHE-RSA-AES128-GCM-SHA256",
            "",
            ""
        ]
    );
    assert_eq!(cols(5), ["no", "refused", "", "", "", "suite_not_listed"]);
    // The listing agrees with the summary.
    let fails = rows.iter().filter(|r| r[7] == "fails").count();
    let v = json(&whatif(&[
        "--log-format",
        "nginx-ssl-full",
        "--policy",
        STRICT,
        "--format",
        "json",
        path_str(&log),
    ]));
    assert_eq!(v["exact"]["fails"], fails);
    // Never over an input.
    let o = whatif(&[
        "--log-format",
        "nginx-ssl-full",
        "--policy",
        STRICT,
        "--list-requests",
        path_str(&log),
        path_str(&log),
    ]);
    assert_code(&o, 2);
}

#[test]
fn without_offer_fields_nothing_changes() {
    let dir = util::tempdir();
    let log = nginx_log(dir.path());
    // The same lines read with a format that names the offer fields as other text.
    let other = r#"log_format x '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol $ssl_cipher "$http_x_a" "$http_x_b" $http_x_c $host';"#;
    let v = json(&whatif(&[
        "--log-format",
        other,
        "--policy",
        STRICT,
        "--format",
        "json",
        path_str(&log),
    ]));
    assert!(v.get("exact").is_none());
    // Upper bound: every non-AESGCM and every TLSv1 request.
    assert_eq!(v["requests"]["refused"], 4);
    assert!(v["caveat"].as_str().unwrap().contains("upper bound"));
}

#[test]
fn apache_clienthello_hex_lists() {
    let dir = util::tempdir();
    let format = r#"%h %l %u %t "%r" %>s %b "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %{SSL_CLIENTHELLO_VERSION}x %{SSL_CLIENTHELLO_CIPHERS}x %{SSL_CLIENTHELLO_GROUPS}x %{SSL_CLIENTHELLO_VERSIONS}x"#;
    let lines = concat!(
        // A browser: GREASE everywhere, X25519MLKEM768 first among its groups.
        "198.51.100.1 - - [26/Nov/2026:09:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \"Mozilla/5.0 Chrome/131.0\" TLSv1.3 TLS_AES_128_GCM_SHA256 0303 3a3a130113021303c02bc02fcca9c013009c002f0035 5a5a11ec001d00170018 fafa03040303\n",
        // An old client: TLS 1.0, no supported_versions.
        "198.51.100.2 - - [26/Nov/2026:09:00:01 +0000] \"GET / HTTP/1.1\" 200 5 \"OldBot/1.0\" TLSv1 ECDHE-RSA-AES256-SHA 0301 c014002f0035000a00ff 00170018 -\n",
        // TLS 1.2 only (supported_versions lists 1.2 and 1.1), GCM offered.
        "198.51.100.3 - - [26/Nov/2026:09:00:02 +0000] \"GET / HTTP/1.1\" 200 5 \"Go-http-client/1.1\" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 0303 c02fc030c013c014 001d0017 03030302\n",
    );
    let log = util::write(dir.path(), "ssl_access.log", lines.as_bytes());
    let v = json(&whatif(&[
        "--log-format",
        format,
        "--policy",
        "mozilla-intermediate",
        "--format",
        "json",
        path_str(&log),
    ]));
    let x = &v["exact"];
    assert_eq!(
        (x["requests"].as_u64(), x["works"].as_u64()),
        (Some(3), Some(2))
    );
    assert_eq!(reasons(x), vec![("no_common_protocol".to_string(), 1)]);
    let mut n = negotiated(x);
    n.sort();
    let s = |a: &str| a.to_string();
    assert_eq!(
        n,
        vec![
            (
                s("TLSv1.2"),
                s("ECDHE-RSA-AES128-GCM-SHA256"),
                Some(s("X25519")),
                1
            ),
            // Mozilla 6.0 lists X25519MLKEM768 first and the browser offers it.
            (
                s("TLSv1.3"),
                s("TLS_AES_128_GCM_SHA256"),
                Some(s("X25519MLKEM768")),
                1
            ),
        ]
    );
    // The TLS 1.2-only client under a TLS 1.3-only profile: no protocol in common.
    let v = json(&whatif(&[
        "--log-format",
        format,
        "--policy",
        "mozilla-modern",
        "--format",
        "json",
        path_str(&log),
    ]));
    assert_eq!(v["exact"]["fails"], 2);
    assert_eq!(v["exact"]["works"], 1);
}

#[test]
fn report_carries_the_exact_answer() {
    let dir = util::tempdir();
    let log = nginx_log(dir.path());
    let o = util::tlsgap()
        .args([
            "report",
            "-q",
            "--log-format",
            "nginx-ssl-full",
            "--policy",
            STRICT,
            "--format",
            "json",
            path_str(&log),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v["whatif"][0]["exact"]["fails"], 2);
    let text = util::tlsgap()
        .args([
            "report",
            "-q",
            "--log-format",
            "nginx-ssl-full",
            "--policy",
            STRICT,
            "--format",
            "text",
            path_str(&log),
        ])
        .output()
        .unwrap();
    let t = stdout(&text);
    assert!(t.contains("FROM THE CLIENTS' LOGGED OFFERS"), "{t}");
}

#[test]
fn dataset_whatif_reads_the_offer_lists_back() {
    let dir = util::tempdir();
    let nginx = nginx_log(dir.path());
    let apache_format = r#"%h %l %u %t "%r" %>s %b "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %{SSL_CLIENTHELLO_VERSION}x %{SSL_CLIENTHELLO_CIPHERS}x %{SSL_CLIENTHELLO_GROUPS}x %{SSL_CLIENTHELLO_VERSIONS}x"#;
    let apache = util::write(
        dir.path(),
        "ssl.log",
        b"198.51.100.2 - - [26/Nov/2026:09:00:01 +0000] \"GET / HTTP/1.1\" 200 5 \"OldBot/1.0\" TLSv1 ECDHE-RSA-AES256-SHA 0301 c014002f0035000a00ff 00170018 -\n\
198.51.100.3 - - [26/Nov/2026:09:00:02 +0000] \"GET / HTTP/1.1\" 200 5 \"Go-http-client/1.1\" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 0303 c02fc030c013c014 001d0017 03030302\n",
    );
    for (format, log) in [("nginx-ssl-full", &nginx), (apache_format, &apache)] {
        let ds = dir
            .path()
            .join(format!("ds-{}", log.file_name().unwrap().to_string_lossy()));
        let o = util::tlsgap()
            .args([
                "export",
                "-q",
                "--log-format",
                format,
                "--format",
                "parquet",
            ])
            .args(["--partition-by", "date", "-o", path_str(&ds), path_str(log)])
            .output()
            .unwrap();
        assert_code(&o, 0);
        let from_log = json(&whatif(&[
            "--log-format",
            format,
            "--policy",
            STRICT,
            "--format",
            "json",
            path_str(log),
        ]));
        let from_ds = json(&whatif(&[
            "--policy",
            STRICT,
            "--dataset",
            path_str(&ds),
            "--format",
            "json",
        ]));
        assert!(from_log["exact"]["requests"].as_u64().unwrap() > 0);
        for key in ["exact", "requests", "clients", "ciphers", "kinds"] {
            assert_eq!(from_ds[key], from_log[key], "{key} ({format})");
        }
    }
}

/// Lines written from nginx's documented encoding of `$ssl_curve`/`$ssl_curves` as an
/// OpenSSL 3.5 build logs them (`X25519MLKEM768` by name; an older build writes an
/// unknown group as `0x11ec`): the local OpenSSL 3.0 cannot negotiate ML-KEM.
#[test]
fn report_shows_post_quantum_shares_when_groups_are_logged() {
    let dir = util::tempdir();
    let format = r#"log_format pq '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol $ssl_cipher "$ssl_ciphers" "$ssl_curves" $ssl_curve';"#;
    let lines = concat!(
        "192.0.2.1 - - [26/Nov/2026:08:00:01 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 Chrome/131.0\" TLSv1.3 TLS_AES_128_GCM_SHA256 \"TLS_AES_128_GCM_SHA256\" \"0x3a3a:X25519MLKEM768:X25519\" X25519MLKEM768\n",
        "192.0.2.2 - - [26/Nov/2026:08:00:02 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 Firefox/133.0\" TLSv1.3 TLS_AES_128_GCM_SHA256 \"TLS_AES_128_GCM_SHA256\" \"0x11ec:X25519\" X25519\n",
        "192.0.2.3 - - [26/Nov/2026:08:00:03 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"curl/7.88.1\" TLSv1.2 AES256-SHA \"AES256-SHA\" \"-\" -\n",
    );
    let log = util::write(dir.path(), "pq.log", lines.as_bytes());
    let report = |fmt: &str| {
        let o = util::tlsgap()
            .args(["report", "-q", "--log-format", format, "--format", fmt])
            .arg(path_str(&log))
            .output()
            .unwrap();
        assert_code(&o, 0);
        o
    };
    let v = json(&report("json"));
    let pq = &v["distribution"]["post_quantum"];
    assert_eq!(pq["negotiated"]["post_quantum"]["count"], 1, "{pq}");
    assert_eq!(pq["offered"]["post_quantum"]["count"], 2, "{pq}");
    // Requests that logged their groups: the plain-RSA line logged `-`.
    assert_eq!(pq["offered"]["requests"], 2, "{pq}");
    assert_eq!(pq["negotiated"]["requests"], 2, "{pq}");
    let t = stdout(&report("text"));
    assert!(t.contains("KEY EXCHANGE GROUPS (POST-QUANTUM)"), "{t}");
    assert!(t.contains("X25519MLKEM768 (post-quantum)"), "{t}");
    assert!(
        t.contains("offered a post-quantum group: 2 of 2 requests (100.00%)"),
        "{t}"
    );
    assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
    let page = dir.path().join("report.html");
    let o = util::tlsgap()
        .args([
            "report",
            "-q",
            "--log-format",
            format,
            "--html",
            path_str(&page),
        ])
        .arg(path_str(&log))
        .output()
        .unwrap();
    assert_code(&o, 0);
    let h = std::fs::read_to_string(&page).unwrap();
    assert!(h.contains("data-pq-negotiated=\"1\""), "{h}");
    assert!(h.contains("data-pq-offered=\"2\""), "{h}");
    // A format without groups has no such section.
    let o = util::tlsgap()
        .args([
            "report",
            "-q",
            "--log-format",
            "combinedssl",
            "--format",
            "text",
        ])
        .arg(util::repo_root().join("testdata/sample/combinedssl.log.gz"))
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(!stdout(&o).contains("KEY EXCHANGE GROUPS"));
}
