//! Parquet output read back by other tools: `scripts/check_parquet.py` reads the file
//! with pyarrow and with DuckDB and compares it with the NDJSON (or CSV) of the same
//! input.

use std::path::Path;

use crate::util::{self, assert_code, path_str, stderr, stdout, tlsgap, write};

fn python_ready(test: &str) -> bool {
    util::python_ready(
        test,
        &["pyarrow", "pyarrow.parquet", "duckdb"],
        "pyarrow duckdb",
        "reading the Parquet output back with pyarrow and DuckDB",
    )
}

/// `python3 scripts/check_parquet.py PARQUET EXPECTED [extra...]`, failing with its
/// report.
#[track_caller]
fn check_parquet(parquet: &Path, expected: &Path, extra: &[&str]) {
    let o = std::process::Command::new("python3")
        .arg(util::repo_root().join("scripts/check_parquet.py"))
        .arg(parquet)
        .arg(expected)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "check_parquet.py {} {}:\n{}{}",
        parquet.display(),
        expected.display(),
        stdout(&o),
        stderr(&o)
    );
}

/// Export `log` as Parquet and as NDJSON into `dir` and compare them.
fn export_and_check(dir: &Path, stem: &str, log: &Path, log_format: &str, jobs: &str) {
    export_all_and_check(dir, stem, &[log], log_format, jobs);
}

/// Export `logs` as Parquet and as NDJSON into `dir` and compare them.
fn export_all_and_check(dir: &Path, stem: &str, logs: &[&Path], log_format: &str, jobs: &str) {
    let parquet = dir.join(format!("{stem}.parquet"));
    let o = tlsgap()
        .args([
            "export",
            "--format",
            "parquet",
            "-q",
            "-j",
            jobs,
            "--log-format",
            log_format,
        ])
        .arg("-o")
        .arg(&parquet)
        .args(logs)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(o.stdout.is_empty(), "nothing on stdout with -o");
    let o = tlsgap()
        .args([
            "export",
            "--format",
            "ndjson",
            "-q",
            "-j",
            jobs,
            "--log-format",
            log_format,
        ])
        .args(logs)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let ndjson = write(dir, &format!("{stem}.ndjson"), &o.stdout);
    check_parquet(&parquet, &ndjson, &[]);
}

#[test]
fn export_parquet_of_the_real_vectors_matches_ndjson() {
    if !python_ready("export_parquet_of_the_real_vectors_matches_ndjson") {
        return;
    }
    let dir = util::tempdir();
    let formats: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(&std::fs::read(util::real_dir().join("formats.json")).unwrap())
            .unwrap();
    assert!(formats.len() >= 5);
    for (name, fmt) in &formats {
        let log = util::real_dir().join(name);
        export_and_check(dir.path(), name, &log, fmt.as_str().unwrap(), "2");
    }
}

#[test]
fn export_parquet_of_a_generated_multi_block_log_matches_ndjson() {
    if !python_ready("export_parquet_of_a_generated_multi_block_log_matches_ndjson") {
        return;
    }
    let dir = util::tempdir();
    // Times in four offsets; NDJSON in several 4 MiB blocks, Parquet in one 32 MiB
    // block (several row groups: the test below).
    let g = util::generated_log(9 << 20);
    let log = write(dir.path(), "big.log", &g.bytes);
    export_and_check(dir.path(), "big", &log, "combinedssl", "2");
}

/// Two files of two row groups each (a worker reads each 32 MiB range of a file
/// itself and numbers its lines from the range's first; the merging side adds the lines
/// before it, per file), the first damaged in its second range (garbage, a NUL byte, a
/// line cut short): the `line` column holds each file's own line numbers, as NDJSON's.
#[test]
fn export_parquet_of_two_damaged_files_numbers_each_files_lines() {
    if !python_ready("export_parquet_of_two_damaged_files_numbers_each_files_lines") {
        return;
    }
    let dir = util::tempdir();
    let g = util::generated_log(34 << 20);
    let cut = 33 << 20;
    let at = cut + g.bytes[cut..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut damaged = g.bytes[..at].to_vec();
    damaged.extend_from_slice(b"garbage \0 line\n10.0.0.1 - - [21/Nov/2026:18:0\n");
    damaged.extend_from_slice(&g.bytes[at..]);
    let a = write(dir.path(), "a.log", &damaged);
    let b = write(dir.path(), "b.log", &g.bytes);
    export_all_and_check(dir.path(), "two", &[&a, &b], "combinedssl", "2");
}

#[test]
fn export_parquet_writes_one_row_group_per_32_mib_of_log() {
    if !python_ready("export_parquet_writes_one_row_group_per_32_mib_of_log") {
        return;
    }
    let dir = util::tempdir();
    // 72 MiB of log: blocks of 32 MiB, each one row group encoded by a worker (issue
    // 12: the writer only appends), so 32 + 32 + 8 MiB: three groups, the first two
    // of at least 32 MiB worth of lines. Not the 4 MiB blocks of the other commands:
    // many small row groups made the writer's memory grow and the file larger.
    let g = util::generated_log(72 << 20);
    let longest = g
        .bytes
        .split(|&b| b == b'\n')
        .map(<[u8]>::len)
        .max()
        .unwrap()
        + 1;
    // A malformed line after every 997th: the line numbers (checked against the
    // NDJSON's) do not all rise by one.
    let mut bytes = Vec::with_capacity(g.bytes.len() + (g.bytes.len() >> 10));
    for (i, line) in g.bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        bytes.extend_from_slice(line);
        if i % 997 == 996 {
            bytes.extend_from_slice(b"not a log line\n");
        }
    }
    let log = write(dir.path(), "rg.log", &bytes);
    export_and_check(dir.path(), "rg", &log, "combinedssl", "2");
    let parquet = dir.path().join("rg.parquet");
    // Per row group: its rows, then its `line` column's encodings and compressed bytes.
    let script = "import sys, pyarrow.parquet as pq\n\
        m = pq.ParquetFile(sys.argv[1]).metadata\n\
        for i in range(m.num_row_groups):\n\
        \x20   g = m.row_group(i)\n\
        \x20   c = [g.column(j) for j in range(g.num_columns) if g.column(j).path_in_schema == 'line'][0]\n\
        \x20   print(g.num_rows, ','.join(c.encodings), c.total_compressed_size)";
    let o = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(&parquet)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(' ').collect()).collect();
    let groups: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    // The line numbers go as deltas (issue 12): a few bytes a page, not 8 a row for
    // zstd to squeeze.
    for r in &rows {
        assert!(
            r[1].split(',').any(|e| e == "DELTA_BINARY_PACKED"),
            "{text}"
        );
        let (n, bytes): (u64, u64) = (r[0].parse().unwrap(), r[2].parse().unwrap());
        assert!(
            bytes * 50 < n,
            "line column of {n} rows takes {bytes} bytes: {text}"
        );
    }
    assert_eq!(groups.len(), 3, "row groups {groups:?}");
    let parsed: u64 = groups.iter().sum();
    assert!(parsed <= g.lines, "{groups:?} of {} lines", g.lines);
    for &rows in &groups[..2] {
        assert!(
            rows >= (32 << 20) / longest as u64,
            "row groups {groups:?} (longest line {longest} bytes)"
        );
    }
}

#[test]
fn export_parquet_keeps_offsets_nulls_and_escaped_bytes() {
    if !python_ready("export_parquet_keeps_offsets_nulls_and_escaped_bytes") {
        return;
    }
    let dir = util::tempdir();
    let log = [
        &br#"192.0.2.7 - "" [21/Nov/2026:18:07:40 -0330] "GET /a\xffb?q=\"x\" HTTP/1.1" 200 - "-" "" TLSv1.3 TLS_AES_128_GCM_SHA256"#[..],
        b"\n192.0.2.8 - bob [01/Jan/2026:00:00:00 +0545] \"GET /\xe9t\\xc3\\xa9 HTTP/1.1\" 404 12 ",
        br#""http://r/,\"q\"" "UA, with \"quote\"\nnewline" - -"#,
        b"\n",
    ]
    .concat();
    let f = write(dir.path(), "hand.log", &log);
    export_and_check(dir.path(), "hand", &f, "combinedssl", "1");
    // A format with duration and pid, and nginx escape=json.
    let formats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(util::real_dir().join("formats.json")).unwrap())
            .unwrap();
    let dp = "apache-combinedssl_dp.log";
    export_and_check(
        dir.path(),
        "dp",
        &util::real_dir().join(dp),
        formats[dp].as_str().unwrap(),
        "1",
    );
}

#[test]
fn export_parquet_of_an_empty_input_has_the_schema_and_no_rows() {
    if !python_ready("export_parquet_of_an_empty_input_has_the_schema_and_no_rows") {
        return;
    }
    let dir = util::tempdir();
    let f = write(dir.path(), "empty.log", b"");
    let parquet = dir.path().join("empty.parquet");
    let o = tlsgap()
        .args([
            "export",
            "--format",
            "parquet",
            "-q",
            "--log-format",
            "combinedssl",
            "-o",
        ])
        .arg(&parquet)
        .arg(&f)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let none = write(dir.path(), "empty.ndjson", b"");
    check_parquet(
        &parquet,
        &none,
        &[
            "--columns",
            "file,line,time,client,ident,user,request,method,target,http_version,status,\
             bytes,referer,user_agent,tls_protocol,tls_cipher",
        ],
    );
}

#[test]
fn tls_parquet_reads_back_with_the_csv_columns() {
    if !python_ready("tls_parquet_reads_back_with_the_csv_columns") {
        return;
    }
    let dir = util::tempdir();
    let formats: serde_json::Value =
        serde_json::from_slice(&std::fs::read(util::real_dir().join("formats.json")).unwrap())
            .unwrap();
    for (name, count) in [
        ("apache-combinedssl.log", "requests"),
        ("nginx-json.log", "clients"),
    ] {
        let log = util::real_dir().join(name);
        let parquet = dir.path().join(format!("{name}.{count}.parquet"));
        let fmt = formats[name].as_str().unwrap();
        let o = tlsgap()
            .args(["tls", "--format", "parquet", "-q", "--count", count, "-o"])
            .arg(&parquet)
            .args(["--log-format", fmt])
            .arg(&log)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let o = tlsgap()
            .args(["tls", "--format", "csv", "-q", "--count", count])
            .args(["--log-format", fmt])
            .arg(&log)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let csv = write(dir.path(), &format!("{name}.{count}.csv"), &o.stdout);
        check_parquet(&parquet, &csv, &[]);
    }
}

#[test]
fn failed_parquet_export_leaves_no_file_behind() {
    let dir = util::tempdir();
    let parquet = dir.path().join("out.parquet");
    let missing = dir.path().join("missing.log");
    let o = tlsgap()
        .args([
            "export",
            "--format",
            "parquet",
            "-o",
            path_str(&parquet),
            path_str(&missing),
        ])
        .output()
        .unwrap();
    assert_code(&o, 2);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}
