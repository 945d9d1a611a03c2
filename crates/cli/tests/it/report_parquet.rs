//! The Parquet form of the generic-table reports (`whatif`, `gaps`) read back with
//! pyarrow and DuckDB (`scripts/check_parquet.py`) and compared with the CSV of the
//! same input: same rows, same column names in the same order, and the types each
//! column is documented to have (ints as ints, floats as floats, booleans as
//! booleans, text as UTF-8; an unquoted empty CSV field is a null, `""` an empty
//! string).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{self, assert_code, path_str, stderr, stdout, tlsgap, write};

/// The columns of `tlsgap whatif --format csv|parquet`, with their types.
const WHATIF_TYPES: &[(&str, &str)] = &[
    ("section", "text"),
    ("protocol", "text"),
    ("cipher", "text"),
    ("kind", "text"),
    ("user_agent", "text"),
    ("client", "text"),
    ("decision", "text"),
    ("requests", "int"),
    ("refused_requests", "int"),
    ("clients", "int"),
    ("refused_clients", "int"),
    ("reason", "text"),
    ("group", "text"),
];

/// The columns of `tlsgap gaps --format csv|parquet`, with their types.
const GAPS_TYPES: &[(&str, &str)] = &[
    ("kind", "text"),
    ("cause", "text"),
    ("detail", "text"),
    ("file", "text"),
    ("line", "int"),
    ("pid", "int"),
    ("clock", "text"),
    ("start", "text"),
    ("end", "text"),
    ("seconds", "float"),
    ("start_day", "int"),
    ("start_nanos", "int"),
    ("end_day", "int"),
    ("end_nanos", "int"),
    ("inside_call", "bool"),
    ("includes_call_time", "bool"),
    ("timer_signals", "int"),
    ("call", "text"),
    ("resource", "text"),
    ("resource_kind", "text"),
    ("resources", "text"),
    ("before", "text"),
    ("after", "text"),
];

fn python_ready(test: &str) -> bool {
    util::python_ready(
        test,
        &["pyarrow", "pyarrow.parquet", "duckdb"],
        "pyarrow duckdb",
        "reading report Parquet back with pyarrow and DuckDB",
    )
}

fn types_arg(types: &[(&str, &str)]) -> String {
    types
        .iter()
        .map(|(n, k)| format!("{n}={k}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `python3 scripts/check_parquet.py PARQUET CSV --quoted-text --types ...`, without
/// judging the outcome.
fn check_parquet_output(parquet: &Path, csv: &Path, types: &str) -> Output {
    std::process::Command::new("python3")
        .arg(util::repo_root().join("scripts/check_parquet.py"))
        .args([parquet.as_os_str(), csv.as_os_str()])
        .args(["--quoted-text", "--types", types])
        .output()
        .unwrap()
}

/// The same, failing the test with the script's report when anything differs.
#[track_caller]
fn check_parquet(parquet: &Path, csv: &Path, types: &[(&str, &str)]) {
    let o = util::run_script(
        "check_parquet.py",
        &[
            parquet.as_os_str(),
            csv.as_os_str(),
            OsStr::new("--quoted-text"),
            OsStr::new("--types"),
            OsStr::new(&types_arg(types)),
        ],
    );
    assert!(
        stdout(&o).contains("match"),
        "check_parquet.py said:\n{}",
        stdout(&o)
    );
}

/// Run `tlsgap ARGS --format csv` and `tlsgap ARGS --format parquet -o F` into `dir`:
/// (csv path, parquet path, csv text).
fn csv_and_parquet(dir: &Path, stem: &str, args: &[&str]) -> (PathBuf, PathBuf, String) {
    let o = tlsgap()
        .args(args)
        .args(["--format", "csv"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o);
    let csv = write(dir, &format!("{stem}.csv"), &o.stdout);
    let parquet = dir.join(format!("{stem}.parquet"));
    let o = tlsgap()
        .args(args)
        .args(["--format", "parquet", "-o", path_str(&parquet)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(o.stdout.is_empty(), "nothing on stdout with -o");
    (csv, parquet, text)
}

/// The header of a CSV must be exactly the documented columns.
#[track_caller]
fn assert_header(csv: &str, types: &[(&str, &str)]) {
    let header = csv.lines().next().unwrap_or_default();
    let want: Vec<&str> = types.iter().map(|(n, _)| *n).collect();
    assert_eq!(header, want.join(","), "CSV header");
}

const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36";

fn line(client: &str, ua: &str, protocol: &str, cipher: &str) -> String {
    format!(
        "{client} - - [21/Nov/2026:18:07:40 +0100] \"GET /x HTTP/1.1\" 200 512 \"-\" \
         \"{ua}\" {protocol} {cipher}\n"
    )
}

/// A small combinedssl log that fills every section of the whatif table: allowed and
/// refused protocols and ciphers, an unknown cipher, a plain request, browsers, a bot,
/// tools, a User-Agent with a comma and quotes, and no User-Agent at all.
fn whatif_log(dir: &Path) -> PathBuf {
    let mut s = String::new();
    for _ in 0..3 {
        s += &line("10.0.0.1", CHROME, "TLSv1.3", "TLS_AES_128_GCM_SHA256");
    }
    s += &line("10.0.0.2", "curl/8.5.0", "TLSv1.2", "AES256-SHA");
    s += &line("10.0.0.2", "curl/8.5.0", "TLSv1.2", "AES256-SHA");
    s += &line(
        "10.0.0.3",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "TLSv1",
        "ECDHE-RSA-AES128-SHA",
    );
    s += &line(
        "10.0.0.3",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "TLSv1.2",
        "ECDHE-RSA-AES128-GCM-SHA256",
    );
    s += &line(
        "2001:db8::7",
        r#"odd, \"quoted\" agent"#,
        "TLSv1.1",
        "ECDHE-RSA-AES256-SHA",
    );
    s += &line("10.0.0.5", "-", "TLSv1.2", "FOO-BAR");
    s += &line("10.0.0.6", CHROME, "-", "-");
    write(dir, "access.log", s.as_bytes())
}

#[test]
fn whatif_parquet_reads_back_like_the_csv() {
    if !python_ready("whatif_parquet_reads_back_like_the_csv") {
        return;
    }
    let dir = util::tempdir();
    let log = whatif_log(dir.path());
    let (csv, parquet, text) = csv_and_parquet(
        dir.path(),
        "whatif",
        &[
            "whatif",
            "--log-format",
            "combinedssl",
            "--policy",
            "mozilla-intermediate",
            path_str(&log),
        ],
    );
    assert_header(&text, WHATIF_TYPES);
    // Not a vacuous comparison: every section is there, with nulls and text that
    // needs quoting.
    for section in [
        "total",
        "protocol",
        "cipher",
        "kind",
        "user_agent",
        "address",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(&format!("\"{section}\","))),
            "no {section} row in:\n{text}"
        );
    }
    // The User-Agent is unescaped, then quoted for CSV.
    assert!(text.contains(r#""odd, ""quoted"" agent""#), "{text}");
    check_parquet(&parquet, &csv, WHATIF_TYPES);
}

/// The real `-ff` trace of Apache with bcrypt and {SHA} users.
fn apache_ff_traces() -> Vec<String> {
    let dir = util::repo_root().join("testdata/strace/real/apache-ff");
    let mut traces: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .and_then(OsStr::to_str)
                .is_some_and(|n| n.starts_with("trace."))
        })
        .map(|p| path_str(&p).to_string())
        .collect();
    traces.sort();
    assert!(traces.len() >= 2, "trace.* in {}", dir.display());
    traces
}

#[test]
fn gaps_parquet_reads_back_like_the_csv() {
    if !python_ready("gaps_parquet_reads_back_like_the_csv") {
        return;
    }
    let dir = util::tempdir();
    let traces = apache_ff_traces();
    // A given bcrypt speed: two runs label the auth gaps alike.
    let mut args = vec!["gaps", "--bcrypt-speed", "0.02"];
    args.extend(traces.iter().map(String::as_str));
    let (csv, parquet, text) = csv_and_parquet(dir.path(), "gaps", &args);
    assert_header(&text, GAPS_TYPES);
    assert!(
        text.lines().any(|l| l.starts_with("\"gap\",\"auth\",")),
        "the bcrypt gaps are rows:\n{text}"
    );
    assert!(
        text.lines().any(|l| l.starts_with("\"blocked\",")),
        "blocked intervals are rows too:\n{text}"
    );
    check_parquet(&parquet, &csv, GAPS_TYPES);
}

#[test]
fn gaps_parquet_without_rows_keeps_the_column_types() {
    if !python_ready("gaps_parquet_without_rows_keeps_the_column_types") {
        return;
    }
    let dir = util::tempdir();
    // A one-line trace has no gap and nothing blocked: a header and no rows.
    let trace = write(
        dir.path(),
        "one.strace",
        b"1795307607.327674 getpid()              = 7016 <0.000011>\n",
    );
    let (csv, parquet, text) = csv_and_parquet(dir.path(), "empty", &["gaps", path_str(&trace)]);
    assert_header(&text, GAPS_TYPES);
    assert_eq!(text.lines().count(), 1, "header only:\n{text}");
    check_parquet(&parquet, &csv, GAPS_TYPES);
}

/// The check itself tells a wrong type, a wrong value and a missing null apart from a
/// match, so the tests above can fail.
#[test]
fn check_parquet_catches_type_value_and_null_differences() {
    if !python_ready("check_parquet_catches_type_value_and_null_differences") {
        return;
    }
    let dir = util::tempdir();
    let log = whatif_log(dir.path());
    let (csv, parquet, text) = csv_and_parquet(
        dir.path(),
        "whatif",
        &[
            "whatif",
            "--log-format",
            "combinedssl",
            "--policy",
            "mozilla-intermediate",
            path_str(&log),
        ],
    );
    let good = check_parquet_output(&parquet, &csv, &types_arg(WHATIF_TYPES));
    assert_code(&good, 0);

    // `requests` declared a float: the Parquet column is an integer.
    let as_float: Vec<(&str, &str)> = WHATIF_TYPES
        .iter()
        .map(|&(n, k)| (n, if n == "requests" { "float" } else { k }))
        .collect();
    let o = check_parquet_output(&parquet, &csv, &types_arg(&as_float));
    assert_code(&o, 1);
    assert!(stderr(&o).contains("requests"), "{}", stderr(&o));

    // One count changed in the CSV: the total row's requests.
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let total = lines
        .iter_mut()
        .find(|l| l.starts_with("\"total\","))
        .expect("total row");
    let mut cells: Vec<String> = total.split(',').map(str::to_string).collect();
    let requests: i64 = cells[7].parse().expect("total requests is an integer");
    cells[7] = (requests + 1).to_string();
    *total = cells.join(",");
    let changed = write(
        dir.path(),
        "changed.csv",
        (lines.join("\n") + "\n").as_bytes(),
    );
    let o = check_parquet_output(&parquet, &changed, &types_arg(WHATIF_TYPES));
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("row 1, column requests"),
        "{}",
        stderr(&o)
    );

    // A null (unquoted empty) turned into an empty string (`""`).
    let nulled = text.replacen("\"total\",,", "\"total\",\"\",", 1);
    assert_ne!(nulled, text, "the total row starts with a null protocol");
    let nulled = write(dir.path(), "nulled.csv", nulled.as_bytes());
    let o = check_parquet_output(&parquet, &nulled, &types_arg(WHATIF_TYPES));
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("row 1, column protocol"),
        "{}",
        stderr(&o)
    );
}
