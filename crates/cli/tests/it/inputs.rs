//! Opening inputs: compression by content, stdin, missing and damaged files, blocks
//! and worker threads.

use serde_json::Value;

use crate::util::{
    self, assert_code, generated_log, ndjson, path_str, stderr, tls_json, tlsgap, without_inputs,
    write,
};

/// `tls --format json` of the sample log, without `inputs`.
fn plain_result(dir: &std::path::Path) -> Value {
    let plain = write(dir, "access.log", &util::sample_log());
    let (v, o) = tls_json(&[path_str(&plain)]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["total"], 79);
    assert_eq!(v["lines"]["malformed"], 0);
    without_inputs(v)
}

#[test]
fn compressed_inputs_give_the_same_result_as_plain() {
    let dir = util::tempdir();
    let d = dir.path();
    let want = plain_result(d);
    let plain = d.join("access.log");
    let p = path_str(&plain);

    util::run_tool("gzip", &["-k", "-f", p]);
    util::run_tool("zstd", &["-q", "-k", "-f", p]);
    util::run_tool("bzip2", &["-k", "-f", p]);
    let gz = std::fs::read(d.join("access.log.gz")).unwrap();
    // gzip content behind a name that says nothing about it.
    write(d, "gzip-inside.log", &gz);
    // No extension at all, zstd inside.
    write(
        d,
        "zstd-inside",
        &std::fs::read(d.join("access.log.zst")).unwrap(),
    );

    for name in [
        "access.log.gz",
        "access.log.zst",
        "access.log.bz2",
        "gzip-inside.log",
        "zstd-inside",
    ] {
        let f = d.join(name);
        let (v, o) = tls_json(&[path_str(&f)]);
        assert_code(&o, 0);
        assert_eq!(without_inputs(v), want, "{name}");
    }
}

#[test]
fn concatenated_gzip_members_are_all_read() {
    let dir = util::tempdir();
    let d = dir.path();
    let plain = write(d, "access.log", &util::sample_log());
    // The same content under two names (one file given twice is read once).
    let copy = write(d, "copy.log", &util::sample_log());
    let (twice, o) = tls_json(&[path_str(&plain), path_str(&copy)]);
    assert_code(&o, 0);
    util::run_tool("gzip", &["-k", "-f", path_str(&plain)]);
    let member = std::fs::read(d.join("access.log.gz")).unwrap();
    let two = write(d, "two-members.log.gz", &[member.clone(), member].concat());
    let (v, o) = tls_json(&[path_str(&two)]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["total"], 158);
    assert_eq!(without_inputs(v), without_inputs(twice));
}

#[test]
fn stdin_is_read_with_dash_and_without_file_arguments() {
    let dir = util::tempdir();
    let want = plain_result(dir.path());
    for args in [&["-"][..], &[][..]] {
        let o = tlsgap()
            .args(["tls", "--format", "json", "-q"])
            .args(args)
            .write_stdin(util::sample_log())
            .output()
            .unwrap();
        assert_code(&o, 0);
        let v = util::json(&o);
        assert_eq!(v["inputs"][0]["name"], "-", "{args:?}");
        assert_eq!(without_inputs(v), want, "{args:?}");
    }
    // Compressed standard input (`zcat`-less pipelines).
    util::run_tool(
        "gzip",
        &["-k", "-f", path_str(&dir.path().join("access.log"))],
    );
    let o = tlsgap()
        .args(["tls", "--format", "json", "-q"])
        .write_stdin(std::fs::read(dir.path().join("access.log.gz")).unwrap())
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(without_inputs(util::json(&o)), want, "gzip on stdin");
}

#[test]
fn missing_file_next_to_a_good_one_exits_1_and_keeps_the_good_counts() {
    let dir = util::tempdir();
    let want = plain_result(dir.path());
    let good = dir.path().join("access.log");
    let missing = dir.path().join("no-such-file.log");
    let (v, o) = tls_json(&[path_str(&good), path_str(&missing)]);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(
        err.contains(path_str(&missing)),
        "stderr names the missing file: {err}"
    );
    assert!(
        !err.contains(&format!("{}:", path_str(&good))),
        "good file is not blamed: {err}"
    );
    assert!(v["inputs"][1]["error"].is_string(), "{}", v["inputs"]);
    assert_eq!(v["inputs"][0]["error"], Value::Null);
    assert_eq!(without_inputs(v), want);

    // Missing first: the format is still detected from the good one.
    let o = tlsgap()
        .args([
            "tls",
            "--format",
            "json",
            path_str(&missing),
            path_str(&good),
        ])
        .output()
        .unwrap();
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("log format: combinedssl"),
        "{}",
        stderr(&o)
    );
    assert_eq!(without_inputs(util::json(&o)), want);
}

/// A log of another format among the inputs (nginx's JSON log next to Apache's
/// combinedssl: the format is detected from the first) is named, with how few of its
/// lines fit; the counts are those of the run, as before; a log whose lines mostly fit
/// is not named, nor is the only input (nothing fits: the run fails).
#[test]
fn an_input_of_another_format_is_named() {
    let dir = util::tempdir();
    let want = plain_result(dir.path());
    let apache = dir.path().join("access.log");
    let nginx = util::real_dir().join("nginx-json.log");
    let (v, o) = tls_json(&[path_str(&apache), path_str(&nginx)]);
    assert_code(&o, 0);
    let err = stderr(&o);
    let json_lines = std::fs::read(&nginx)
        .unwrap()
        .split(|b| *b == b'\n')
        .count()
        - 1;
    assert!(
        err.contains(&format!(
            "{}: only 0 of its {json_lines} lines fit the log format",
            path_str(&nginx)
        )),
        "{err}"
    );
    assert!(!err.contains(&format!("{}:", path_str(&apache))), "{err}");
    assert_eq!(v["lines"]["parsed"], want["lines"]["parsed"]);
    // A few damaged lines in a log are counted, not named.
    let mut damaged = util::sample_log();
    damaged.extend_from_slice(b"garbage\n\x00\x01 more garbage\n");
    let damaged = write(dir.path(), "damaged.log", &damaged);
    let (_, o) = tls_json(&[path_str(&apache), path_str(&damaged)]);
    assert_code(&o, 0);
    assert!(!stderr(&o).contains("fit the log format"), "{}", stderr(&o));
}

/// Each input says how many of its lines did not fit the format (their sum is the
/// run's): a clean log, one with garbage appended, and a rotated one cut inside its
/// last line (a copy taken while the server wrote) then gzipped. The text summary
/// and the HTML report name the two that hold them, with their counts.
#[test]
fn each_input_counts_its_malformed_lines() {
    let dir = util::tempdir();
    let d = dir.path();
    let log = util::sample_log();
    let clean = write(d, "access.log", &log);
    let mut damaged = log.clone();
    damaged.extend_from_slice(b"garbage\n\x00\x01 more garbage\n");
    let damaged = write(d, "access.log.1", &damaged);
    let cut = write(d, "access.log.2", &log[..log.len() - 20]);
    util::run_tool("gzip", &["-f", path_str(&cut)]);
    let cut = d.join("access.log.2.gz");
    let names = [path_str(&clean), path_str(&damaged), path_str(&cut)];
    let (v, o) = tls_json(&names);
    assert_code(&o, 0);
    let malformed: Vec<u64> = (0..3)
        .map(|i| v["inputs"][i]["malformed"].as_u64().unwrap())
        .collect();
    assert_eq!(malformed, [0, 2, 1], "{}", v["inputs"]);
    assert_eq!(v["lines"]["malformed"], 3);
    let o = tlsgap().arg("tls").args(names).output().unwrap();
    assert_code(&o, 0);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        text.contains(&format!("{} [2 malformed]", names[1])),
        "{text}"
    );
    assert!(
        text.contains(&format!("{} [1 malformed]", names[2])),
        "{text}"
    );
    assert!(!text.contains(&format!("{} [", names[0])), "{text}");
    // The HTML report's inputs line, the same.
    let page = d.join("report.html");
    let o = tlsgap()
        .args(["report", "-q", "--html", path_str(&page)])
        .args(names)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let html = std::fs::read_to_string(&page).unwrap();
    let header = html.split("</header>").next().unwrap();
    let marks: Vec<&str> = header.matches("data-malformed=").collect();
    assert_eq!(marks.len(), 2, "{header}");
    assert!(
        header.contains("data-malformed=\"2\">(2 malformed)"),
        "{header}"
    );
    assert!(
        header.contains("data-malformed=\"1\">(1 malformed)"),
        "{header}"
    );
}

#[test]
fn all_inputs_missing_exits_2() {
    let dir = util::tempdir();
    let a = dir.path().join("a.log");
    let b = dir.path().join("b.log");
    let o = tlsgap()
        .args(["tls", path_str(&a), path_str(&b)])
        .output()
        .unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("a.log") && err.contains("b.log"), "{err}");
    assert!(o.stdout.is_empty(), "no result when nothing was read");
}

#[test]
fn empty_file_exits_0_with_zeros() {
    let dir = util::tempdir();
    let empty = write(dir.path(), "empty.log", b"");
    let (v, o) = tls_json(&["--log-format", "combinedssl", path_str(&empty)]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["total"], 0);
    assert_eq!(v["lines"]["parsed"], 0);
    assert_eq!(v["lines"]["malformed"], 0);
    assert_eq!(v["total"], 0);
    assert_eq!(v["plain"], 0);
    assert_eq!(v["protocols"], serde_json::json!([]));
    // And with the default `--log-format auto`, which has nothing to look at.
    let (v, o) = tls_json(&[path_str(&empty)]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["total"], 0);
}

/// Cut a compressed file in the middle: the lines before the damage count, the
/// file is named, and the run says it was incomplete.
fn check_truncated(tool: &[&str], ext: &str) {
    let dir = util::tempdir();
    let d = dir.path();
    let g = generated_log(3 << 20);
    let plain = write(d, "big.log", &g.bytes);
    let mut args = tool.to_vec();
    args.push(path_str(&plain));
    util::run_tool(args[0], &args[1..]);
    let full = std::fs::read(d.join(format!("big.log.{ext}"))).unwrap();
    let cut = write(d, &format!("cut.log.{ext}"), &full[..full.len() / 2]);
    let (v, o) = tls_json(&["--log-format", "combinedssl", path_str(&cut)]);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(err.contains(path_str(&cut)), "stderr names the file: {err}");
    assert!(
        err.contains("truncated") || err.contains("corrupt"),
        "stderr says truncated/corrupt: {err}"
    );
    let parsed = v["lines"]["parsed"].as_u64().unwrap();
    assert!(
        parsed > 0,
        "lines before the damage are counted: {}",
        v["lines"]
    );
    assert!(parsed < g.lines, "{parsed} of {}", g.lines);
    // At most the one line cut in half is malformed.
    assert!(
        v["lines"]["malformed"].as_u64().unwrap() <= 1,
        "{}",
        v["lines"]
    );
    assert!(v["inputs"][0]["error"].is_string(), "{}", v["inputs"]);

    // The rows counted are exactly the first lines of the file.
    let export = |f: &std::path::Path| {
        let o = tlsgap()
            .args(["export", "-q", "--log-format", "combinedssl", path_str(f)])
            .output()
            .unwrap();
        let mut rows = ndjson(&o);
        for r in &mut rows {
            r.as_object_mut().unwrap().remove("file");
        }
        (rows, o)
    };
    let (cut_rows, o) = export(&cut);
    assert_code(&o, 1);
    let (full_rows, o) = export(&plain);
    assert_code(&o, 0);
    assert_eq!(cut_rows.len() as u64, parsed);
    // All but the last: the line the damage cut may wrongly parse (see
    // `partial_line_cut_by_compressed_damage_is_not_counted_as_parsed`).
    let whole = cut_rows.len() - 1;
    assert!(
        cut_rows[..whole] == full_rows[..whole],
        "rows before the damage differ"
    );

    // If the message gives the bytes decoded before the damage, they cover at least
    // the whole lines counted (regression: it gave the bytes before the last read).
    if let Some(n) = err
        .split("after ")
        .nth(1)
        .and_then(|rest| rest.split(" bytes").next())
        .and_then(|n| n.parse::<usize>().ok())
    {
        let counted: usize = g
            .bytes
            .split(|&b| b == b'\n')
            .take(whole)
            .map(|l| l.len() + 1)
            .sum();
        assert!(
            n >= counted,
            "{n} bytes reported, {counted} bytes counted: {err}"
        );
    }
}

#[test]
fn truncated_gzip_exits_1_and_counts_lines_before_the_damage() {
    check_truncated(&["gzip", "-k", "-f"], "gz");
}

#[test]
fn truncated_zstd_exits_1_and_counts_lines_before_the_damage() {
    check_truncated(&["zstd", "-q", "-k", "-f"], "zst");
}

#[test]
fn truncated_bzip2_exits_1_and_counts_lines_before_the_damage() {
    check_truncated(&["bzip2", "-k", "-f"], "bz2");
}

/// The line the damage cut in two is not a complete line, even when what is left of
/// it fits the format (cut inside the last field: `AES128-SHA256` -> `AES128-SHA`).
#[test]
fn partial_line_cut_by_compressed_damage_is_not_counted_as_parsed() {
    let dir = util::tempdir();
    let d = dir.path();
    let good = "192.0.2.1 - - [21/Nov/2026:18:07:40 +0100] \"GET / HTTP/1.1\" 200 512 \"-\" \
                \"curl/8.0\" TLSv1.2 AES128-SHA256\n";
    // First gzip member: three lines and the start of a fourth, cut in the cipher.
    let first = [good.repeat(3).as_str(), &good[..good.len() - 4]].concat();
    let f = write(d, "first", first.as_bytes());
    util::run_tool("gzip", &["-f", path_str(&f)]);
    let mut damaged = std::fs::read(d.join("first.gz")).unwrap();
    // Second member: only its 10-byte header, then the file ends.
    damaged.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
    let f = write(d, "damaged.log.gz", &damaged);
    let (v, o) = tls_json(&["--log-format", "combinedssl", path_str(&f)]);
    assert_code(&o, 1);
    assert_eq!(v["lines"]["parsed"], 3, "{}", v["lines"]);
    assert_eq!(v["total"], 3);
    assert_eq!(
        util::pair_counts(&v).into_keys().collect::<Vec<_>>(),
        [("TLSv1.2".to_string(), "AES128-SHA256".to_string())]
    );
}

#[test]
fn directory_as_input_is_reported_by_name() {
    let dir = util::tempdir();
    let want = plain_result(dir.path());
    let good = dir.path().join("access.log");
    let sub = dir.path().join("a-directory");
    std::fs::create_dir(&sub).unwrap();
    let (v, o) = tls_json(&[path_str(&good), path_str(&sub)]);
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(err.contains(path_str(&sub)), "{err}");
    assert!(err.contains("directory"), "{err}");
    assert_eq!(without_inputs(v), want);

    // Only a directory: nothing could be processed.
    let o = tlsgap().args(["tls", path_str(&sub)]).output().unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains(path_str(&sub)));
}

/// More than two 4 MiB blocks: results must not depend on `-j`, and must be the
/// counts the generator knows (including "first TLS request wins" in clients mode
/// across block boundaries).
#[test]
fn jobs_do_not_change_results_on_a_multi_block_input() {
    let dir = util::tempdir();
    let g = generated_log(10 << 20);
    assert!(g.bytes.len() > 2 * (4 << 20) && g.lines > 40_000);
    let big = write(dir.path(), "big.log", &g.bytes);
    let big = path_str(&big);

    let mut first: Option<(Value, Value)> = None;
    for j in ["1", "2", "4"] {
        let (req, o) = tls_json(&["-j", j, big]);
        assert_code(&o, 0);
        let (cli, o) = tls_json(&["-j", j, "--count", "clients", "--client-key", "addr", big]);
        assert_code(&o, 0);
        match &first {
            None => {
                assert_eq!(req["lines"]["total"], g.lines);
                assert_eq!(req["lines"]["malformed"], 0);
                assert_eq!(util::pair_counts(&req), g.requests, "requests -j{j}");
                assert_eq!(req["plain"], g.plain_requests);
                assert_eq!(util::pair_counts(&cli), g.clients, "clients -j{j}");
                assert_eq!(cli["plain"], g.plain_clients);
                first = Some((req, cli));
            }
            Some((r1, c1)) => {
                assert_eq!(&req, r1, "requests: -j{j} differs from -j1");
                assert_eq!(&cli, c1, "clients: -j{j} differs from -j1");
            }
        }
    }

    // Row output keeps input order and line numbers across blocks.
    let export = |j: &str| {
        let o = tlsgap()
            .args(["export", "--format", "ndjson", "-q", "-j", j, big])
            .output()
            .unwrap();
        assert_code(&o, 0);
        o.stdout
    };
    let one = export("1");
    let four = export("4");
    assert!(one == four, "export -j4 differs from -j1");
    let mut n = 0u64;
    for l in one.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        n += 1;
        // Cheap check of the line number without parsing every row.
        let prefix = format!(
            "{{\"file\":{},\"line\":{n},",
            serde_json::to_string(big).unwrap()
        );
        assert!(
            l.starts_with(prefix.as_bytes()),
            "row {n}: {}",
            String::from_utf8_lossy(l)
        );
    }
    assert_eq!(n, g.lines);
}

#[test]
fn multi_block_gzip_input_matches_plain() {
    let dir = util::tempdir();
    let g = generated_log(9 << 20);
    let big = write(dir.path(), "big.log", &g.bytes);
    let (want, o) = tls_json(&["-j", "2", "--count", "clients", path_str(&big)]);
    assert_code(&o, 0);
    util::run_tool("gzip", &["-1", "-k", "-f", path_str(&big)]);
    let gz = dir.path().join("big.log.gz");
    let (v, o) = tls_json(&["-j", "2", "--count", "clients", path_str(&gz)]);
    assert_code(&o, 0);
    assert_eq!(without_inputs(v), without_inputs(want));
}

#[test]
fn last_line_without_newline_is_counted() {
    let dir = util::tempdir();
    let mut log = util::sample_log();
    assert_eq!(log.pop(), Some(b'\n'));
    let f = write(dir.path(), "no-final-newline.log", &log);
    let (v, o) = tls_json(&[path_str(&f)]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["total"], 79);
    assert_eq!(v["lines"]["malformed"], 0);
    let o = tlsgap()
        .args(["export", "-q", path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let rows = ndjson(&o);
    assert_eq!(rows.len(), 79);
    assert_eq!(rows[78]["line"], 79);
}

/// Six combinedssl lines, the fourth with a User-Agent of `ua_bytes` bytes.
fn with_a_long_line(ua_bytes: usize) -> String {
    let short = util::line("192.0.2.1", "TLSv1.3", "TLS_AES_128_GCM_SHA256") + "\n";
    let long = short.replace("Mozilla/5.0 (test)", &"U".repeat(ua_bytes));
    [short.repeat(3), long, short.repeat(2)].concat()
}

/// A line longer than a whole 4 MiB block (a giant User-Agent) is still one line.
#[test]
fn line_longer_than_a_block_is_one_line() {
    let dir = util::tempdir();
    let log = with_a_long_line(9 << 20);
    let f = write(dir.path(), "giant.log", log.as_bytes());
    for j in ["1", "2"] {
        let (v, o) = tls_json(&[
            "-j",
            j,
            "--max-line-bytes",
            "16M",
            "--log-format",
            "combinedssl",
            path_str(&f),
        ]);
        assert_code(&o, 0);
        assert_eq!(v["lines"]["total"], 6, "-j{j}");
        assert_eq!(v["lines"]["parsed"], 6, "-j{j}");
        assert_eq!(v["total"], 6, "-j{j}");
        // Under the default cap (1 MiB) it is one too-long line, the others intact.
        let (v, o) = tls_json(&["-j", j, "--log-format", "combinedssl", path_str(&f)]);
        assert_code(&o, 0);
        assert_eq!(v["lines"]["total"], 6, "-j{j}");
        assert_eq!(v["lines"]["malformed_by_reason"]["too_long"], 1, "-j{j}");
        assert_eq!(v["total"], 5, "-j{j}");
    }
    let o = tlsgap()
        .args([
            "export",
            "-q",
            "-j",
            "2",
            "--max-line-bytes",
            "10M",
            "--log-format",
            "combinedssl",
            path_str(&f),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let rows = ndjson(&o);
    let lines: Vec<u64> = rows.iter().map(|r| r["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [1, 2, 3, 4, 5, 6]);
    assert_eq!(rows[3]["user_agent"].as_str().unwrap().len(), 9 << 20);
}

/// The line cap holds for every line, however the input reaches the blocks: a 2 MiB
/// line read whole inside one block of a file was once parsed as a good line, while the
/// same bytes piped (read in small pieces) were `too_long`. File, pipe and gzip agree,
/// with any number of workers, and `--invalid-lines` keeps the line's first bytes up to
/// the cap.
#[test]
fn the_line_cap_holds_however_the_input_is_read() {
    let dir = util::tempdir();
    let log = with_a_long_line(2 << 20);
    let f = write(dir.path(), "long.log", log.as_bytes());
    util::run_tool("gzip", &["-k", path_str(&f)]);
    let gz = dir.path().join("long.log.gz");
    for j in ["1", "2", "3"] {
        for (what, input) in [("file", path_str(&f)), ("gzip", path_str(&gz))] {
            let rejects = dir.path().join(format!("rejects-{what}-{j}.txt"));
            let (v, o) = tls_json(&[
                "-j",
                j,
                "--log-format",
                "combinedssl",
                "--invalid-lines",
                path_str(&rejects),
                input,
            ]);
            assert_code(&o, 0);
            assert_eq!(v["lines"]["total"], 6, "{what} -j{j}");
            assert_eq!(
                v["lines"]["malformed_by_reason"]["too_long"], 1,
                "{what} -j{j}"
            );
            assert_eq!(v["total"], 5, "{what} -j{j}");
            let kept = std::fs::read(&rejects).unwrap();
            let head = format!("{input}\t4\ttoo_long\t");
            assert!(kept.starts_with(head.as_bytes()), "{what} -j{j}");
            assert_eq!(kept.len(), head.len() + (1 << 20) + 1, "{what} -j{j}");
        }
        let o = tlsgap()
            .args(["tls", "--format", "json", "-q", "-j", j])
            .args(["--log-format", "combinedssl", "-"])
            .pipe_stdin(&f)
            .unwrap()
            .output()
            .unwrap();
        assert_code(&o, 0);
        let v = util::json(&o);
        assert_eq!(
            v["lines"]["malformed_by_reason"]["too_long"], 1,
            "stdin -j{j}"
        );
        assert_eq!(v["total"], 5, "stdin -j{j}");
    }
}

/// Standard input redirected from a file (`tlsgap tls - < access.log`) is read by the
/// workers like a named file, from where the shell left it: after a `read` took the
/// first line, the rest is exactly the log without that line.
#[test]
fn stdin_redirected_from_a_file_is_read_from_where_it_stands() {
    let dir = util::tempdir();
    let log = util::sample_log();
    let f = write(dir.path(), "access.log", &log);
    let cut = log.iter().position(|&b| b == b'\n').unwrap() + 1;
    let rest = write(dir.path(), "rest.log", log.get(cut..).unwrap());
    for j in ["1", "2"] {
        let (want, o) = tls_json(&["-j", j, path_str(&rest)]);
        assert_code(&o, 0);
        assert_eq!(want["lines"]["total"], 78);
        let script = format!(
            "read -r first && exec \"$0\" tls --format json -q -j {j} -",
            j = j
        );
        let o = std::process::Command::new("bash")
            .args(["-c", &script, util::tlsgap_path().to_str().unwrap()])
            .stdin(std::fs::File::open(&f).unwrap())
            .output()
            .unwrap();
        assert_code(&o, 0);
        assert_eq!(
            without_inputs(util::json(&o)),
            without_inputs(want),
            "-j{j}"
        );
    }
}
