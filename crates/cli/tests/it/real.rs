//! Real vectors: logs written by real Apache and nginx servers, with what the client
//! sent for every line (`scripts/real-vectors.py`, `testdata/real/README.md`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{self, assert_code, ndjson, path_str, tls_json, tlsgap};

/// The logs of `dir` (sorted) with their format from `formats.json`.
fn logs_in(dir: &Path) -> Vec<(PathBuf, String)> {
    let formats: BTreeMap<String, String> = serde_json::from_slice(
        &std::fs::read(dir.join("formats.json"))
            .unwrap_or_else(|e| panic!("{}/formats.json: {e}", dir.display())),
    )
    .unwrap();
    let mut logs: Vec<(PathBuf, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            let format = formats
                .get(&name)
                .unwrap_or_else(|| panic!("{name} is not in formats.json"))
                .clone();
            (p, format)
        })
        .collect();
    logs.sort();
    assert!(
        logs.len() >= 5,
        "expected the five real logs in {}, found {}",
        dir.display(),
        logs.len()
    );
    logs
}

fn expected_rows(log: &Path) -> Vec<Value> {
    let p = PathBuf::from(format!("{}.expected.jsonl", log.display()));
    std::fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Check every log of `dir` against its expected rows; returns the differences that
/// differ from what was sent.
fn check_dir(dir: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    for (log, format) in logs_in(dir) {
        let name = log.file_name().unwrap().to_str().unwrap().to_string();
        let expected = expected_rows(&log);

        let o = tlsgap()
            .args([
                "export",
                "--format",
                "ndjson",
                "-q",
                "--log-format",
                &format,
            ])
            .arg(&log)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let rows = ndjson(&o);
        if rows.len() != expected.len() {
            failures.push(format!(
                "{name}: {} rows exported, {} expected",
                rows.len(),
                expected.len()
            ));
            continue;
        }
        for (i, (exp, row)) in expected.iter().zip(&rows).enumerate() {
            assert_eq!(row["line"], Value::from(i + 1), "{name}: line numbers");
            assert_eq!(row["file"], Value::from(path_str(&log)), "{name}: file");
            for (key, want) in exp.as_object().unwrap() {
                let got = row.get(key).unwrap_or(&Value::Null);
                // `==` on serde_json values is exact: null != "", 52 != "52", 52 != 52.0.
                let same = row.get(key).is_some() && got == want;
                if same {
                    continue;
                }
                let msg = format!(
                    "{name}:{}: {key}: expected {want}, exported {}",
                    i + 1,
                    if row.get(key).is_some() {
                        got.to_string()
                    } else {
                        "no such key".into()
                    }
                );
                failures.push(msg);
            }
        }

        // The same file through `tls`: nothing malformed, and the counts the
        // expected rows imply.
        let (v, o) = tls_json(&["--log-format", &format, path_str(&log)]);
        assert_code(&o, 0);
        let lines = &v["lines"];
        if lines["malformed"] != 0 || lines["total"] != expected.len() {
            failures.push(format!("{name}: tls lines: {lines}"));
        }
        let mut want: BTreeMap<(String, String), u64> = BTreeMap::new();
        let mut plain = 0u64;
        for exp in &expected {
            match (exp.get("tls_protocol"), exp.get("tls_cipher")) {
                (Some(Value::String(p)), Some(Value::String(c))) => {
                    *want.entry((p.clone(), c.clone())).or_default() += 1;
                }
                (Some(Value::Null), Some(Value::Null)) => plain += 1,
                other => panic!("{name}: unexpected TLS keys in expected row: {other:?}"),
            }
        }
        let got = util::pair_counts(&v);
        if got != want || v["plain"] != plain || v["total"] != want.values().sum::<u64>() {
            failures.push(format!(
                "{name}: tls counts {got:?} plain {} total {}, expected {want:?} plain {plain}",
                v["plain"], v["total"]
            ));
        }
    }
    failures
}

#[track_caller]
fn assert_no_failures(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} differences from the real vectors:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Regression: Apache `%b` `-` exported as null, lowercase methods were not split
/// from `%r`, nginx `escape=json` empty values exported as "".
#[test]
fn checked_in_real_vectors_match_expected_exactly() {
    assert_no_failures(&check_dir(&util::real_dir()));
}

/// Fresh lines from real servers: `scripts/real-vectors.py` starts Apache and nginx on
/// 127.0.0.1 and drives them with curl.
#[test]
fn fresh_real_vectors_from_real_servers_match_expected() {
    if !util::server_test_enabled(
        "fresh_real_vectors_from_real_servers_match_expected",
        &["apache2", "nginx", "curl", "openssl", "python3"],
        "apache2 nginx curl openssl python3",
    ) {
        return;
    }
    let root = running_as_root();
    assert!(
        root,
        "this test starts Apache and nginx, which must run as root (they drop to \
         www-data); set TLSGAP_SKIP_SERVER_TESTS=1 to skip it"
    );
    let dir = util::tempdir();
    let out = dir.path().join("real");
    util::run_script("real-vectors.py", &[out.as_os_str()]);
    assert_no_failures(&check_dir(&out));
    check_upstream_lists(&out);
    // `--log-format auto` on what the servers wrote: the presets and the common
    // variants (a duration or X-Forwarded-For appended) are recognised, and the
    // answer is the one the pasted format gives.
    let formats: BTreeMap<String, String> =
        serde_json::from_slice(&std::fs::read(out.join("formats.json")).unwrap()).unwrap();
    for (log, label) in [
        ("apache-combinedssl.log", "combinedssl"),
        ("apache-ssl_request.log", "ssl_request"),
        ("apache-combinedssl_t.log", "combinedssl + %T"),
        ("nginx-main_ssl.log", "nginx main + TLS"),
        ("nginx-ssl_rt.log", "nginx-ssl + $request_time"),
    ] {
        let auto = tlsgap()
            .current_dir(&out)
            .args(["tls", "--format", "json", log])
            .output()
            .unwrap();
        assert_code(&auto, 0);
        let note = util::stderr(&auto);
        assert!(
            note.contains(&format!("log format: {label} (auto-detected")),
            "{log}: {note}"
        );
        let given = tlsgap()
            .current_dir(&out)
            .args([
                "tls",
                "--format",
                "json",
                "--log-format",
                &formats[log],
                log,
            ])
            .output()
            .unwrap();
        assert_code(&given, 0);
        assert_eq!(util::stdout(&auto), util::stdout(&given), "{log}");
    }
}

/// nginx's upstream lists as `export` reads them from what nginx wrote (the first of
/// the two upstream servers is not listening): per row, the three variables list one
/// item per server tried, statuses are statuses and times are times, and some row
/// tried both servers.
fn check_upstream_lists(dir: &Path) {
    let formats: BTreeMap<String, String> =
        serde_json::from_slice(&std::fs::read(dir.join("formats.json")).unwrap()).unwrap();
    let log = dir.join("nginx-upstream.log");
    let o = tlsgap()
        .args(["export", "--format", "ndjson", "-q", "--log-format"])
        .arg(&formats["nginx-upstream.log"])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let mut proxied = 0;
    let mut lists = 0;
    for row in ndjson(&o) {
        let items = |key: &str| -> Vec<String> {
            match &row[key] {
                Value::String(s) => s.split(", ").map(str::to_string).collect(),
                Value::Null => Vec::new(),
                other => panic!("{key}: {other}"),
            }
        };
        let (addr, status, time) = (
            items("upstream_addr"),
            items("upstream_status"),
            items("upstream_response_time"),
        );
        assert!(
            addr.len() == status.len() && status.len() == time.len(),
            "upstream lists of unequal length: {row}"
        );
        if addr.is_empty() {
            continue;
        }
        proxied += 1;
        lists += usize::from(addr.len() > 1);
        assert!(
            addr.iter().all(|a| a.starts_with("127.0.0.1:"))
                && status
                    .iter()
                    .all(|s| s.len() == 3 && s.bytes().all(|b| b.is_ascii_digit()))
                && time.iter().all(|t| t.parse::<f64>().is_ok()),
            "upstream values: {row}"
        );
    }
    assert!(
        proxied >= 3 && lists >= 1,
        "{proxied} proxied rows, {lists} with lists"
    );
}

/// Whether the tests run as root (`id -u`).
fn running_as_root() -> bool {
    let o = util::run_tool("id", &["-u"]);
    util::stdout(&o).trim() == "0"
}
