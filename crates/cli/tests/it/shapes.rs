//! The shapes of the outputs, as snapshots (`insta`): the key set of every JSON
//! document the binary writes, every table, every CSV header and the `check` status
//! line. A renamed, added or removed key, column or row label shows up as a snapshot
//! difference to accept on purpose (`cargo insta review`, or `INSTA_UPDATE=always`).
//!
//! Key sets are paths: `a.b` for an object member, `a[]` for the elements of an array
//! (the union over all elements, so an optional member is seen wherever it occurs).
//! Maps whose keys are data rather than schema are collapsed to `*` where listed in
//! `DATA_KEYED` (none of the documents has one today: reasons and causes are fixed
//! vocabularies and part of the contract, so they stay named).

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::util;

/// Object paths whose members are data (collapsed to `*`).
const DATA_KEYED: &[&str] = &[];

fn key_paths(v: &Value, at: &str, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            let data = DATA_KEYED.contains(&at);
            for (k, x) in m {
                let name = if data { "*" } else { k.as_str() };
                let path = if at.is_empty() {
                    name.to_owned()
                } else {
                    format!("{at}.{name}")
                };
                out.insert(path.clone());
                key_paths(x, &path, out);
            }
        }
        Value::Array(a) => {
            let path = format!("{at}[]");
            for x in a {
                key_paths(x, &path, out);
            }
        }
        _ => {}
    }
}

fn shape(v: &Value) -> String {
    let mut out = BTreeSet::new();
    key_paths(v, "", &mut out);
    out.into_iter().collect::<Vec<_>>().join("\n") + "\n"
}

fn run_in(dir: &Path, args: &[&str]) -> String {
    util::stdout_in(dir, args)
}

fn run(args: &[&str]) -> String {
    run_in(&util::repo_root(), args)
}

fn json_shape(dir: &Path, args: &[&str]) -> String {
    let text = run_in(dir, args);
    shape(&serde_json::from_str(&text).unwrap())
}

const SAMPLE: &str = "testdata/sample/combinedssl.log.gz";
const TRACE: &str = "testdata/strace/real/apache-f-stderr/trace";

fn auth_dir() -> std::path::PathBuf {
    util::repo_root().join("testdata/auth/real")
}

fn auth_format() -> String {
    let m: Value =
        serde_json::from_slice(&std::fs::read(auth_dir().join("manifest.json")).unwrap()).unwrap();
    m["log_format"].as_str().unwrap().to_owned()
}

const TRACES: [&str; 3] = [
    "traces/trace.5693",
    "traces/trace.5694",
    "traces/trace.5695",
];

fn auth_args<'a>(format: &'a str, fmt: &'a str, htpasswd: bool) -> Vec<&'a str> {
    // A given bcrypt speed: users without an entry are labelled alike each run.
    let mut a = vec!["auth", "--format", format, "--bcrypt-speed", "0.02"];
    if htpasswd {
        a.extend(["--htpasswd", "htpasswd"]);
    }
    a.extend(["--log", "access.log", "--log-format", fmt, "--traces"]);
    a.extend(TRACES);
    a
}

/// A temporary directory with `ds/`, the sample exported as a dataset.
fn dataset() -> tempfile::TempDir {
    let tmp = util::tempdir();
    let sample = util::repo_root().join(SAMPLE);
    let args = [
        "export",
        "-j1",
        "--format",
        "parquet",
        "--partition-by",
        "date",
    ];
    let mut args = args.to_vec();
    args.extend(["--host", "web1", "-o", "ds", sample.to_str().unwrap()]);
    run_in(tmp.path(), &args);
    tmp
}

#[test]
fn json_key_sets() {
    let root = util::repo_root();
    let tls = |extra: &[&str]| {
        let mut a = vec!["tls", "-j1", "--format", "json"];
        a.extend(extra);
        a.push(SAMPLE);
        json_shape(&root, &a)
    };
    insta::assert_snapshot!("json_tls", tls(&[]));
    insta::assert_snapshot!("json_tls_clients", tls(&["--count", "clients"]));
    insta::assert_snapshot!("json_tls_by_day", tls(&["--by", "day"]));
    insta::assert_snapshot!(
        "json_whatif",
        json_shape(
            &root,
            &[
                "whatif",
                "-j1",
                "--format",
                "json",
                "--policy",
                "mozilla-intermediate",
                SAMPLE
            ]
        )
    );
    insta::assert_snapshot!(
        "json_gaps",
        json_shape(&root, &["gaps", "--format", "json", TRACE])
    );
    insta::assert_snapshot!(
        "json_ciphers",
        json_shape(&root, &["ciphers", "--format", "json", "AES128-SHA"])
    );
    let fmt = auth_format();
    insta::assert_snapshot!(
        "json_auth",
        json_shape(&auth_dir(), &auth_args("json", &fmt, true))
    );

    insta::assert_snapshot!(
        "json_report",
        json_shape(&root, &["report", "-j1", "--format", "json", SAMPLE])
    );
    let mut report_auth = vec!["report", "--format", "json"];
    report_auth.extend(&auth_args("json", &fmt, true)[5..]);
    report_auth.retain(|a| *a != "--log");
    insta::assert_snapshot!("json_report_auth", json_shape(&auth_dir(), &report_auth));

    let export = run(&["export", "-j1", SAMPLE]);
    let first: Value = serde_json::from_str(export.lines().next().unwrap()).unwrap();
    insta::assert_snapshot!("json_export_row", shape(&first));

    let tmp = dataset();
    insta::assert_snapshot!(
        "json_merge",
        json_shape(tmp.path(), &["merge", "--format", "json", "ds"])
    );
}

#[test]
fn tables() {
    insta::assert_snapshot!("table_tls", run(&["tls", "-j1", SAMPLE]));
    insta::assert_snapshot!(
        "table_tls_by_day",
        run(&["tls", "-j1", "--by", "day", SAMPLE])
    );
    insta::assert_snapshot!(
        "table_whatif",
        run(&["whatif", "-j1", "--policy", "mozilla-intermediate", SAMPLE])
    );
    insta::assert_snapshot!(
        "table_gaps",
        run(&["gaps", "--bcrypt-speed", "0.02", TRACE])
    );
    insta::assert_snapshot!(
        "table_ciphers",
        run(&["ciphers", "AES128-SHA", "TLS_AES_128_GCM_SHA256", "RC4-MD5"])
    );
    // Without --htpasswd and with a given bcrypt speed: nothing is timed, so the table
    // is the same each run.
    let fmt = auth_format();
    insta::assert_snapshot!(
        "table_auth",
        run_in(&auth_dir(), &auth_args("table", &fmt, false))
    );
    let o = util::tlsgap()
        .current_dir(util::repo_root())
        .args(["check", "-j1", SAMPLE])
        .output()
        .unwrap();
    insta::assert_snapshot!("check_status_line", util::stdout(&o));
    let tmp = dataset();
    insta::assert_snapshot!("table_merge", run_in(tmp.path(), &["merge", "ds"]));
}

#[test]
fn csv_headers() {
    let header = |text: String| text.lines().next().unwrap_or_default().to_owned() + "\n";
    let fmt = auth_format();
    let mut all = String::new();
    for (name, text) in [
        ("tls", run(&["tls", "-j1", "--format", "csv", SAMPLE])),
        (
            "tls --by day",
            run(&["tls", "-j1", "--by", "day", "--format", "csv", SAMPLE]),
        ),
        ("export", run(&["export", "-j1", "--format", "csv", SAMPLE])),
        (
            "whatif",
            run(&[
                "whatif",
                "-j1",
                "--format",
                "csv",
                "--policy",
                "mozilla-modern",
                SAMPLE,
            ]),
        ),
        ("gaps", run(&["gaps", "--format", "csv", TRACE])),
        (
            "ciphers",
            run(&["ciphers", "--format", "csv", "AES128-SHA"]),
        ),
        ("auth", run_in(&auth_dir(), &auth_args("csv", &fmt, false))),
    ] {
        all.push_str(&format!("{name}: {}", header(text)));
    }
    insta::assert_snapshot!("csv_headers", all);
}
