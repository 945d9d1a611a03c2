//! `tlsgap tls --format prom` read back by a real parser: the Prometheus Python
//! client's `text_string_to_metric_families`, with hostile cipher names in the log.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::Stdio;

use serde_json::Value;

use crate::util::{self, assert_code, line, path_str, stderr, tls_json, tlsgap, write};

/// Parse exposition text with prometheus_client and print the families as JSON.
const PARSE: &str = r#"
import json, math, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "help": f.documentation,
                "samples": [{"name": s.name, "labels": s.labels,
                             "value": None if math.isnan(s.value) else s.value}
                            for s in f.samples]})
json.dump(out, sys.stdout)
"#;

fn prometheus_client_ready(test: &str) -> bool {
    util::python_ready(
        test,
        &["prometheus_client.parser"],
        "prometheus-client",
        "reading the prom output back with prometheus_client",
    )
}

/// The families prometheus_client finds in `text`, by name.
fn parse(text: &[u8]) -> BTreeMap<String, Value> {
    let mut child = std::process::Command::new("python3")
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(text).unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "prometheus_client rejects the output:\n{}\n---\n{}",
        stderr(&o),
        String::from_utf8_lossy(text)
    );
    let families: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap();
    let mut by_name = BTreeMap::new();
    for f in families {
        let name = f["name"].as_str().unwrap().to_string();
        assert!(
            by_name.insert(name.clone(), f).is_none(),
            "family {name} appears once"
        );
    }
    by_name
}

/// The single sample of a family without labels.
fn scalar(families: &BTreeMap<String, Value>, name: &str) -> f64 {
    let f = families
        .get(name)
        .unwrap_or_else(|| panic!("no family {name}"));
    let samples = f["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 1, "{name}: {samples:?}");
    assert_eq!(samples[0]["labels"], serde_json::json!({}), "{name}");
    samples[0]["value"].as_f64().unwrap()
}

const HOSTILE: &[(&str, &str)] = &[
    ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
    ("TLSv1", "DES-CBC3-SHA"),
    // Quotes, backslashes and braces as a client or a broken module might log them.
    ("TLSv1.2", r#"EVIL"}1\n"#),
    (r"TLS\v9", r#"x\"y"#),
    ("TLSv1.2", "café{a=\"b\"}"),
];

#[test]
fn prom_output_parses_and_matches_the_json() {
    let test = "prom_output_parses_and_matches_the_json";
    if !prometheus_client_ready(test) {
        return;
    }
    let dir = util::tempdir();
    let mut text = String::new();
    for (i, (protocol, cipher)) in HOSTILE.iter().enumerate() {
        for k in 0..=i {
            text.push_str(&line(&format!("10.1.{i}.{k}"), protocol, cipher));
            text.push('\n');
        }
    }
    for k in 0..4 {
        text.push_str(&line(&format!("10.2.0.{k}"), "-", "-"));
        text.push('\n');
    }
    text.push_str("garbage\n");
    let f = write(dir.path(), "hostile.log", text.as_bytes());
    let args = ["--log-format", "combinedssl", path_str(&f)];

    let (json, o) = tls_json(&args);
    assert_code(&o, 0);
    let o = tlsgap()
        .args(["tls", "--format", "prom", "-q"])
        .args(args)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let families = parse(&o.stdout);

    // prometheus_client names a counter family without its `_total`.
    const COUNTERS: [&str; 5] = [
        "tlsgap_requests",
        "tlsgap_plain_requests",
        "tlsgap_lines",
        "tlsgap_parsed_lines",
        "tlsgap_malformed_lines",
    ];
    for name in COUNTERS {
        assert!(families.contains_key(name), "{name}");
    }
    for (name, f) in &families {
        let counter = COUNTERS.contains(&name.as_str());
        assert_eq!(
            f["type"],
            if counter { "counter" } else { "gauge" },
            "{name}"
        );
        assert!(!f["help"].as_str().unwrap().is_empty(), "{name} has HELP");
        assert!(name.starts_with("tlsgap_"), "{name}");
        for s in f["samples"].as_array().unwrap() {
            let want = if counter {
                format!("{name}_total")
            } else {
                name.clone()
            };
            assert_eq!(s["name"], want.as_str(), "{name}");
        }
    }

    // Every (protocol, cipher) of the JSON, with its labels intact, and nothing else.
    let mut want: BTreeMap<(String, String), (f64, String)> = BTreeMap::new();
    for p in json["protocols"].as_array().unwrap() {
        for c in p["ciphers"].as_array().unwrap() {
            want.insert(
                (
                    p["protocol"].as_str().unwrap().into(),
                    c["cipher"].as_str().unwrap().into(),
                ),
                (
                    c["count"].as_f64().unwrap(),
                    c["verdict"].as_str().unwrap().into(),
                ),
            );
        }
    }
    let mut got = BTreeMap::new();
    for s in families["tlsgap_requests"]["samples"].as_array().unwrap() {
        let l = &s["labels"];
        got.insert(
            (
                l["protocol"].as_str().unwrap().to_string(),
                l["cipher"].as_str().unwrap().to_string(),
            ),
            (
                s["value"].as_f64().unwrap(),
                l["verdict"].as_str().unwrap().to_string(),
            ),
        );
    }
    assert_eq!(got, want);
    // The hostile names reached the JSON as logged, so they reached the labels too.
    for (protocol, cipher) in &HOSTILE[3..] {
        assert!(
            got.contains_key(&(protocol.to_string(), cipher.to_string())),
            "{protocol} {cipher} in {got:?}"
        );
    }

    assert_eq!(
        scalar(&families, "tlsgap_plain_requests"),
        json["plain"].as_f64().unwrap()
    );
    assert_eq!(
        scalar(&families, "tlsgap_lines"),
        json["lines"]["total"].as_f64().unwrap()
    );
    assert_eq!(
        scalar(&families, "tlsgap_parsed_lines"),
        json["lines"]["parsed"].as_f64().unwrap()
    );
    let summary = &json["summary"];
    for (metric, key) in [
        ("tlsgap_legacy_protocol_ratio", "legacy_protocols"),
        ("tlsgap_insecure_cipher_ratio", "insecure_ciphers"),
        ("tlsgap_weak_cipher_ratio", "weak_ciphers"),
        ("tlsgap_no_forward_secrecy_ratio", "no_forward_secrecy"),
        ("tlsgap_no_aead_ratio", "no_aead"),
    ] {
        let v = scalar(&families, metric);
        assert_eq!(v, summary[key]["share"].as_f64().unwrap(), "{metric}");
        assert!((0.0..=1.0).contains(&v), "{metric} is a ratio: {v}");
    }
    assert!(scalar(&families, "tlsgap_legacy_protocol_ratio") > 0.0);
    let malformed = families["tlsgap_malformed_lines"]["samples"]
        .as_array()
        .unwrap();
    let by_reason = json["lines"]["malformed_by_reason"].as_object().unwrap();
    assert_eq!(malformed.len(), by_reason.len());
    for s in malformed {
        let reason = s["labels"]["reason"].as_str().unwrap();
        assert_eq!(
            s["value"].as_f64().unwrap(),
            by_reason[reason].as_f64().unwrap(),
            "{reason}"
        );
    }
    assert_eq!(scalar(&families, "tlsgap_unreadable_inputs"), 0.0);
    assert!(scalar(&families, "tlsgap_run_timestamp_seconds") > 1.6e9);
}

#[test]
fn prom_written_with_o_is_a_complete_prom_file() {
    let test = "prom_written_with_o_is_a_complete_prom_file";
    if !prometheus_client_ready(test) {
        return;
    }
    let dir = util::tempdir();
    let f = write(dir.path(), "access.log", &util::sample_log());
    let dest = dir.path().join("tlsgap.prom");
    let o = tlsgap()
        .args(["tls", "--format", "prom", "-q", "-o"])
        .arg(&dest)
        .arg(&f)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(o.stdout.is_empty(), "nothing on stdout with -o");
    let text = std::fs::read(&dest).unwrap();
    assert!(text.ends_with(b"\n"), "the last line ends with a line feed");
    let families = parse(&text);
    assert!(families.contains_key("tlsgap_requests"));
    assert!(scalar(&families, "tlsgap_lines") > 0.0);
    // Only the .prom file is left in the directory: no temporary file.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["access.log", "tlsgap.prom"]);
}
