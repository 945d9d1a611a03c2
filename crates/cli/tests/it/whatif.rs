//! `tlsgap whatif`: policies against a hand-made log (exact figures), and against
//! real Apache + curl runs (see `real_clients_refused_exactly`).

use serde_json::Value;

use crate::util::{self, assert_code, json, path_str, stdout};

const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";
const GOOGLEBOT: &str = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";

fn line(client: &str, ua: &str, protocol: &str, cipher: &str) -> String {
    format!(
        "{client} - - [21/Nov/2026:18:07:40 +0100] \"GET /x HTTP/1.1\" 200 512 \"-\" \
         \"{ua}\" {protocol} {cipher}\n"
    )
}

fn hand_log(dir: &std::path::Path) -> std::path::PathBuf {
    let mut s = String::new();
    for _ in 0..3 {
        s += &line("10.0.0.1", CHROME, "TLSv1.3", "TLS_AES_128_GCM_SHA256");
    }
    for _ in 0..2 {
        s += &line("10.0.0.2", "curl/8.5.0", "TLSv1.2", "AES256-SHA");
    }
    s += &line("10.0.0.3", GOOGLEBOT, "TLSv1", "ECDHE-RSA-AES128-SHA");
    s += &line(
        "10.0.0.3",
        GOOGLEBOT,
        "TLSv1.2",
        "ECDHE-RSA-AES128-GCM-SHA256",
    );
    s += &line(
        "10.0.0.4",
        "python-requests/2.31.0",
        "TLSv1.2",
        "DHE-RSA-AES128-GCM-SHA256",
    );
    s += &line("10.0.0.5", "-", "TLSv1.2", "FOO-BAR");
    s += &line("10.0.0.6", CHROME, "-", "-");
    util::write(dir, "access.log", s.as_bytes())
}

fn whatif(policy: &str, log: &std::path::Path, format: &str) -> std::process::Output {
    util::tlsgap()
        .args(["whatif", "--log-format", "combinedssl", "--policy", policy])
        .args(["--format", format, path_str(log)])
        .output()
        .unwrap()
}

fn kind_row<'a>(v: &'a Value, kind: &str) -> &'a Value {
    v["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} row in {}", v["kinds"]))
}

#[test]
fn mozilla_intermediate_exact_figures() {
    let dir = util::tempdir();
    let log = hand_log(dir.path());
    let o = whatif("mozilla-intermediate", &log, "json");
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v["policy"]["name"], "mozilla-intermediate");
    assert_eq!(v["policy"]["version"], "5.7");
    assert_eq!(
        v["policy"]["protocols"],
        serde_json::json!(["TLSv1.2", "TLSv1.3"])
    );
    assert!(v["caveat"].as_str().unwrap().contains("upper bound"));
    assert_eq!(v["plain"], 1);
    assert_eq!(v["requests"]["total"], 9);
    assert_eq!(v["requests"]["refused"], 3);
    assert_eq!(v["clients"]["total"], 5);
    assert_eq!(v["clients"]["refused"], 1, "curl: every handshake refused");
    assert_eq!(
        v["clients"]["partly"], 1,
        "Googlebot: TLSv1 refused, TLSv1.2 not"
    );
    assert_eq!(
        v["undecided_requests"], 1,
        "FOO-BAR is not in the catalogue"
    );

    let decision = |p: &str, c: &str| -> String {
        v["ciphers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["protocol"] == p && r["cipher"] == c)
            .unwrap_or_else(|| panic!("no row {p} {c}"))["decision"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(decision("TLSv1.3", "TLS_AES_128_GCM_SHA256"), "allowed");
    assert_eq!(decision("TLSv1.2", "AES256-SHA"), "refused_cipher");
    assert_eq!(
        decision("TLSv1", "ECDHE-RSA-AES128-SHA"),
        "refused_protocol"
    );
    assert_eq!(
        decision("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        "allowed"
    );
    assert_eq!(decision("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256"), "allowed");
    assert_eq!(decision("TLSv1.2", "FOO-BAR"), "unknown");

    for (kind, req, refused, clients, refused_clients) in [
        ("browser", 3, 0, 1, 0),
        ("bot", 2, 1, 1, 0),
        ("library", 3, 2, 2, 1),
        ("unknown", 1, 0, 1, 0),
    ] {
        let k = kind_row(&v, kind);
        assert_eq!(
            (
                &k["requests"],
                &k["refused_requests"],
                &k["clients"],
                &k["refused_clients"]
            ),
            (
                &req.into(),
                &refused.into(),
                &clients.into(),
                &refused_clients.into()
            ),
            "{kind}: {k}"
        );
    }
    let uas = v["top_user_agents"].as_array().unwrap();
    assert_eq!(uas.len(), 2);
    assert_eq!(uas[0]["user_agent"], "curl/8.5.0");
    assert_eq!(uas[0]["kind"], "library");
    assert_eq!(uas[0]["refused_requests"], 2);
    assert_eq!(uas[1]["user_agent"], GOOGLEBOT);
    assert_eq!(uas[1]["kind"], "bot");
    let addrs = v["top_addresses"].as_array().unwrap();
    assert_eq!(addrs[0]["client"], "10.0.0.2");
    assert_eq!(addrs[1]["client"], "10.0.0.3");
}

#[test]
fn apache_directives_inline_and_from_a_file() {
    let dir = util::tempdir();
    let log = hand_log(dir.path());
    let conf = "# from ssl.conf\nSSLProtocol all -SSLv3 -TLSv1 -TLSv1.1\n  SSLCipherSuite HIGH:!aNULL:!MD5\n";
    let file = util::write(dir.path(), "ssl.conf", conf.as_bytes());
    for policy in [conf.to_string(), path_str(&file).to_string()] {
        let o = whatif(&policy, &log, "json");
        assert_code(&o, 0);
        let v = json(&o);
        assert_eq!(v["policy"]["name"], "apache");
        assert_eq!(v["requests"]["refused"], 1, "only the TLSv1 request");
        assert_eq!(v["clients"]["refused"], 0);
    }
    let nginx = "ssl_protocols TLSv1.3;\nssl_ciphers HIGH:!aNULL:!MD5;\n";
    let o = whatif(nginx, &log, "json");
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v["policy"]["name"], "nginx");
    assert_eq!(
        v["requests"]["refused"], 5,
        "every TLS 1.0-1.2 request but FOO-BAR"
    );
}

#[test]
fn table_csv_and_hostile_user_agents() {
    let dir = util::tempdir();
    let mut s = String::new();
    s += &line(
        "10.0.0.9",
        "evil\u{1b}[2J<script>x</script>",
        "TLSv1",
        "AES128-SHA",
    );
    let log = util::write(dir.path(), "evil.log", s.as_bytes());
    let o = whatif("mozilla-modern", &log, "table");
    assert_code(&o, 0);
    let out = stdout(&o);
    assert!(
        !out.contains('\u{1b}'),
        "raw escape reached the terminal:\n{out}"
    );
    assert!(out.contains("upper bound"), "{out}");
    assert!(out.contains("would refuse 1 of 1 TLS requests"), "{out}");
    let o = whatif("mozilla-modern", &log, "csv");
    assert_code(&o, 0);
    let out = stdout(&o);
    let header = out.lines().next().unwrap();
    assert_eq!(
        header,
        "section,protocol,cipher,kind,user_agent,client,decision,requests,refused_requests,clients,refused_clients"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("\"total\",,,,,,,1,1,1,1")),
        "{out}"
    );
    let o = whatif("no-such-profile", &log, "json");
    assert_code(&o, 2);
}

/// The end-to-end check: a real Apache with a permissive `SSLCipherSuite` and 17 real
/// curl clients of every kind and TLS version (`scripts/tls-clients.py`); `whatif`
/// with the strict directives on that log; then a second real Apache run with the
/// strict directives. The clients `whatif` says would be refused are exactly those
/// the strict server refuses (curl exit code), and no others.
#[test]
fn real_clients_refused_exactly() {
    if !util::server_test_enabled(
        "real_clients_refused_exactly",
        &["apache2", "curl", "openssl", "python3"],
        "apache2 curl openssl python3",
    ) {
        return;
    }
    let dir = util::tempdir();
    let permissive = dir.path().join("permissive");
    let strict = dir.path().join("strict");
    for (preset, out) in [("permissive", &permissive), ("strict", &strict)] {
        util::run_script(
            "tls-clients.py",
            &[
                "--preset".as_ref(),
                preset.as_ref(),
                "--out".as_ref(),
                out.as_os_str(),
            ],
        );
    }
    let read = |d: &std::path::Path| -> Value {
        serde_json::from_slice(&std::fs::read(d.join("clients.json")).unwrap()).unwrap()
    };
    let (perm, strict_run) = (read(&permissive), read(&strict));
    // Every client connected under the permissive policy.
    for c in perm["clients"].as_array().unwrap() {
        assert_eq!(c["connected"], true, "permissive run: {c}");
    }
    let directives: Vec<&str> = strict_run["config"]["directives"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    let policy = directives.join("\n");
    let o = util::tlsgap()
        .args(["whatif", "--log-format", "combinedssl", "--top", "1000"])
        .args(["--policy", &policy, "--format", "json"])
        .arg(permissive.join("access.log"))
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    let predicted: std::collections::BTreeSet<String> = v["top_user_agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|u| u["refused_clients"].as_u64().unwrap() > 0)
        .map(|u| u["user_agent"].as_str().unwrap().to_string())
        .collect();
    let logged_ua = |c: &Value| -> String {
        match c["user_agent_logged"].as_str() {
            Some(s) => s.to_string(),
            None => "-".to_string(),
        }
    };
    let refused: std::collections::BTreeSet<String> = strict_run["clients"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["connected"] == false)
        .map(logged_ua)
        .collect();
    assert!(!refused.is_empty(), "the strict server refused nobody");
    assert_eq!(
        predicted, refused,
        "whatif's refused clients vs the strict server's"
    );
    assert_eq!(v["clients"]["partly"], 0);
    // Requests: every logged request of a refused client, and no other.
    let refused_requests: u64 = perm["clients"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| refused.contains(&logged_ua(c)))
        .map(|c| c["requests"].as_array().unwrap().len() as u64)
        .sum();
    assert_eq!(v["requests"]["refused"], refused_requests);
    assert_eq!(v["requests"]["total"], perm["summary"]["log_lines"]);
}
