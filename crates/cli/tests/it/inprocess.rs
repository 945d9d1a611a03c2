//! Every analysis called as a library function (`tlsgap_engine`), in this process,
//! gives what the binary gives: the same JSON document, the same rows, the same status
//! line. And run settings are values: two analyses with different windows in one
//! process each keep their own.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tlsgap_agg::CountMode;
use tlsgap_engine::{
    auth, check, export, gaps, merge, report, tls, whatif, Notes, Period, RunOptions, Window,
};

use crate::util;

fn sample() -> PathBuf {
    util::repo_root().join("testdata/sample/combinedssl.log.gz")
}

fn auth_dir() -> PathBuf {
    util::repo_root().join("testdata/auth/real")
}

fn run_options(inputs: &[&Path]) -> RunOptions {
    RunOptions {
        inputs: inputs.iter().map(|p| p.to_path_buf()).collect(),
        jobs: 1,
        notes: Notes::collect(),
        ..RunOptions::default()
    }
}

/// Through text, as the binary's output is read: `serde_json` parses some floats one
/// unit in the last place off, the same way on both sides.
fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::from_str(&serde_json::to_string(v).unwrap()).unwrap()
}

fn binary_json(dir: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&util::stdout_in(dir, args)).unwrap()
}

#[test]
fn tls_in_process_equals_the_binary() {
    let log = sample();
    for (count, flag) in [
        (CountMode::Requests, "requests"),
        (CountMode::Clients, "clients"),
    ] {
        let got = tls::run(
            &run_options(&[&log]),
            &tls::TlsOptions {
                count,
                ..tls::TlsOptions::default()
            },
        )
        .unwrap();
        let want = binary_json(
            &util::repo_root(),
            &[
                "tls",
                "--format",
                "json",
                "--count",
                flag,
                "-j1",
                log.to_str().unwrap(),
            ],
        );
        assert!(got.report.total > 1000, "{}", got.report.total);
        assert_eq!(to_value(&got.report), want, "--count {flag}");
    }
}

#[test]
fn whatif_in_process_equals_the_binary() {
    let log = sample();
    let policy = whatif::load_policy("mozilla-intermediate", &Default::default()).unwrap();
    let got = whatif::run(
        &run_options(&[&log]),
        &whatif::WhatifOptions {
            policy,
            top: 10,
            client_key: Default::default(),
            certs: None,
            list_requests: false,
        },
    )
    .unwrap();
    let want = binary_json(
        &util::repo_root(),
        &[
            "whatif",
            "--policy",
            "mozilla-intermediate",
            "--format",
            "json",
            "-j1",
            log.to_str().unwrap(),
        ],
    );
    assert!(got.report.requests.refused > 0);
    assert_eq!(to_value(&got.report), want);
}

#[test]
fn gaps_in_process_equals_the_binary() {
    let dir = auth_dir();
    let traces: Vec<String> = std::fs::read_dir(dir.join("traces"))
        .unwrap()
        .map(|e| format!("traces/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    let mut traces = traces;
    traces.sort();
    // The library resolves relative names against the process's directory; the binary
    // runs in `dir`, so give the library absolute names and compare without them.
    let abs: Vec<PathBuf> = traces.iter().map(|t| dir.join(t)).collect();
    let got = gaps::run(
        &gaps::GapsOptions {
            traces: abs,
            min_gap_seconds: 0.1,
            top: 20,
            bcrypt_speed: Some(0.02),
            window: None,
            jobs: 2,
        },
        &Notes::collect(),
    )
    .unwrap();
    let mut args = vec!["gaps", "--format", "json", "--bcrypt-speed", "0.02"];
    args.extend(traces.iter().map(String::as_str));
    let want = binary_json(&dir, &args);
    assert!(!got.report.gaps.is_empty());
    let strip = |mut v: Value| {
        let root = dir.to_string_lossy().into_owned() + "/";
        let text = serde_json::to_string(&v).unwrap().replace(&root, "");
        v = serde_json::from_str(&text).unwrap();
        v
    };
    assert_eq!(strip(to_value(&got.report)), want);
}

fn auth_log_format() -> String {
    let m: Value =
        serde_json::from_slice(&std::fs::read(auth_dir().join("manifest.json")).unwrap()).unwrap();
    m["log_format"].as_str().unwrap().to_owned()
}

fn auth_options(dir: &Path) -> auth::AuthOptions {
    let mut traces: Vec<PathBuf> = std::fs::read_dir(dir.join("traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    traces.sort();
    auth::AuthOptions {
        htpasswd: Some(dir.join("htpasswd")),
        traces,
        trace_tz: None,
        threshold: 0.05,
        min_gap_seconds: 0.01,
        ..auth::AuthOptions::default()
    }
}

/// Verification times are measured on this machine at each run, and what follows from
/// them (costs, flags, suggestions, advice, rank); everything else must match.
fn without_measured(mut v: Value) -> Value {
    const MEASURED: [&str; 13] = [
        "cost",
        "gap_note",
        "server",
        "calibration",
        "page_advice",
        "auth_seconds",
        "verify",
        "advice",
        "flagged",
        "prediction",
        "predicted",
        "rank",
        "how_measured",
    ];
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if MEASURED.iter().any(|w| k.contains(w)) {
                        *x = Value::Null;
                    } else {
                        walk(x);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut v);
    if let Some(users) = v["users"].as_array_mut() {
        users.sort_by_key(|u| u["user"].to_string());
    }
    v
}

#[test]
fn auth_in_process_equals_the_binary() {
    let dir = auth_dir();
    let fmt = auth_log_format();
    let opts = auth_options(&dir);
    let mut logs = run_options(&[&dir.join("access.log")]);
    logs.log_format = fmt.clone();
    let got = auth::run(Some(&logs), &opts, &Notes::collect()).unwrap();
    let mut args = vec![
        "auth".to_owned(),
        "--format".into(),
        "json".into(),
        "--htpasswd".into(),
        "htpasswd".into(),
        "--log".into(),
        "access.log".into(),
        "--log-format".into(),
        fmt,
        "--traces".into(),
    ];
    args.extend(opts.traces.iter().map(|p| p.to_string_lossy().into_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let want = binary_json(&dir, &args);
    assert!(!got.failed);
    assert_eq!(got.report.users.len(), 6);
    let root = dir.to_string_lossy().into_owned() + "/";
    let got_text = serde_json::to_string(&to_value(&got.report))
        .unwrap()
        .replace(&root, "");
    let got: Value = serde_json::from_str(&got_text).unwrap();
    let want_text = serde_json::to_string(&want).unwrap().replace(&root, "");
    let want: Value = serde_json::from_str(&want_text).unwrap();
    assert_eq!(without_measured(got), without_measured(want));
}

#[test]
fn report_and_check_call_the_same_analyses() {
    let log = sample();
    let run = run_options(&[&log]);
    let rep = report::run(
        &run,
        &report::ReportOptions {
            by: Period::Day,
            zone: tlsgap_engine::window::resolve_tz(Some("UTC")).unwrap(),
            client_key: Default::default(),
            policies: report::ReportPolicy::defaults().unwrap(),
            auth: None,
        },
    )
    .unwrap();
    let tls_json = binary_json(
        &util::repo_root(),
        &["tls", "--format", "json", "-j1", log.to_str().unwrap()],
    );
    assert_eq!(to_value(&rep.tls), tls_json);
    let policy = whatif::load_policy("mozilla-intermediate", &Default::default()).unwrap();
    let wi = whatif::run(
        &run,
        &whatif::WhatifOptions {
            policy,
            top: 10,
            client_key: Default::default(),
            certs: None,
            list_requests: false,
        },
    )
    .unwrap();
    assert!(
        rep.whatifs
            .iter()
            .any(|w| to_value(&w.report) == to_value(&wi.report)),
        "the report's mozilla-intermediate what-if is whatif's"
    );

    // The binary's defaults (see `tlsgap check --help`).
    let limits = check::Limits::above;
    let opts = check::CheckOptions {
        legacy: limits(0.01, 0.05),
        insecure: limits(0.0, 0.01),
        malformed: limits(0.01, 0.10),
        auth: limits(0.05, 0.25),
        requests: None,
        min_requests: 0,
        htpasswd: None,
        stale_after: None,
    };
    let result = check::run(Some(&run), &opts).result;
    let o = util::tlsgap()
        .env("TZ", "UTC")
        .args(["check", "-j1", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        util::stdout(&o).trim_end(),
        result.status_line(|s| s.to_owned())
    );
    assert_eq!(o.status.code(), Some(i32::from(result.state.exit_code())));
}

#[test]
fn export_and_merge_in_process_equal_the_binary() {
    let log = sample();
    let mut rows = Vec::new();
    export::run(
        &run_options(&[&log]),
        &export::ExportOptions {
            format: export::RowFormat::Ndjson,
        },
        &mut rows,
    )
    .unwrap();
    let o = util::tlsgap()
        .env("TZ", "UTC")
        .args(["export", "-j1", log.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", util::stderr(&o));
    assert!(rows.len() > 100_000);
    assert!(rows == o.stdout, "export ndjson differs");

    let tmp = util::tempdir();
    let ds = tmp.path().join("ds");
    export::run_dataset(
        &run_options(&[&log]),
        &export::DatasetTarget {
            dir: ds.clone(),
            host: "web1".into(),
        },
    )
    .unwrap();
    let got = merge::run(
        &merge::MergeOptions {
            paths: vec![ds.to_string_lossy().into_owned()],
            count: CountMode::Requests,
            client_key: Default::default(),
            since_date: None,
            until_date: None,
            memory_limit: tlsgap_engine::default_memory_limit(),
            window: None,
            by: None,
            hosts: Vec::new(),
            newest: false,
        },
        &Notes::collect(),
    )
    .unwrap();
    let want = binary_json(
        tmp.path(),
        &["merge", "--format", "json", ds.to_str().unwrap()],
    );
    let tls_json = binary_json(
        &util::repo_root(),
        &["tls", "--format", "json", "-j1", log.to_str().unwrap()],
    );
    assert_eq!(to_value(&got.report), want);
    assert_eq!(got.report.total, tls_json["total"].as_u64().unwrap());
}

/// The old binary kept the first `--since` in a process-wide static, so a second
/// window in the same process was silently ignored. Windows are values now.
#[test]
fn two_windows_in_one_process_each_apply() {
    let dir = util::tempdir();
    let mut text = String::new();
    for day in 1..=4 {
        for i in 0..day {
            text.push_str(&format!(
                "192.0.2.{i} - - [0{day}/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \
                 \"-\" \"curl/8.5.0\" TLSv1.3 TLS_AES_128_GCM_SHA256\n"
            ));
        }
    }
    let log = util::write(dir.path(), "access.log", text.as_bytes());
    let day_us = 86_400_000_000i64;
    let nov1 = 1_793_491_200_000_000i64; // 2026-11-01T00:00:00Z
    let count = |since: i64, until: i64| {
        let mut run = run_options(&[&log]);
        run.window = Some(Window {
            since: Some(since),
            until: Some(until),
        });
        tls::run(&run, &tls::TlsOptions::default())
            .unwrap()
            .report
            .total
    };
    // In alternation, twice: each call sees only its own window.
    for _ in 0..2 {
        assert_eq!(count(nov1 + 3 * day_us, nov1 + 4 * day_us), 4);
        assert_eq!(count(nov1, nov1 + day_us), 1);
        assert_eq!(count(nov1 + day_us, nov1 + 3 * day_us), 2 + 3);
    }
    // And no window at all after them: every line.
    let all = tls::run(&run_options(&[&log]), &tls::TlsOptions::default()).unwrap();
    assert_eq!(all.report.total, 10);
}
