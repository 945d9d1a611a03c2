//! Malformed lines: counted by reason, written verbatim with `--invalid-lines`,
//! fatal with `--strict`; CRLF line ends are not malformed.

use serde_json::{json, Value};

use crate::util::{self, assert_code, ndjson, path_str, stderr, stdout, tlsgap, write};

const GOOD: &str = "192.0.2.1 - - [21/Nov/2026:18:07:40 +0100] \"GET / HTTP/1.1\" 200 512 \"-\" \
                    \"curl/8.0\" TLSv1.3 TLS_AES_128_GCM_SHA256";

/// The mixed file: (line bytes, reason or `None` for a good line), one per line.
fn mixed_lines() -> Vec<(Vec<u8>, Option<&'static str>)> {
    let good = GOOD.as_bytes().to_vec();
    let crlf = [GOOD.as_bytes(), b"\r"].concat();
    vec![
        (good.clone(), None),
        (crlf.clone(), None),
        (good[..60].to_vec(), Some("truncated")),
        (good.clone(), None),
        (
            b"\x00\x00\x00\x00garbage\x00\x01\x02 \xff\xfe".to_vec(),
            Some("binary"),
        ),
        (
            // The User-Agent's closing quote is missing: an odd number of quotes.
            GOOD.replace("\"curl/8.0\"", "\"curl/8.0").into_bytes(),
            Some("unbalanced_quotes"),
        ),
        ([GOOD, " extra"].concat().into_bytes(), Some("field_count")),
        (
            GOOD.replace("21/Nov/2026", "32/Foo/2026").into_bytes(),
            Some("bad_time"),
        ),
        (crlf, None),
        (good, None),
    ]
}

fn mixed_file(dir: &std::path::Path, name: &str) -> std::path::PathBuf {
    let mut bytes = Vec::new();
    for (l, _) in mixed_lines() {
        bytes.extend_from_slice(&l);
        bytes.push(b'\n');
    }
    write(dir, name, &bytes)
}

fn all_reasons(counts: &[(&str, u64)]) -> Value {
    let mut m = serde_json::Map::new();
    for r in [
        "bad_number",
        "bad_time",
        "binary",
        "empty",
        "field_count",
        "glued",
        "mismatch",
        "too_long",
        "truncated",
        "unbalanced_quotes",
    ] {
        m.insert(r.to_string(), json!(0));
    }
    for (r, n) in counts {
        assert!(m.contains_key(*r), "unknown reason {r}");
        m.insert(r.to_string(), json!(n));
    }
    Value::Object(m)
}

#[test]
fn malformed_lines_are_counted_by_reason() {
    let dir = util::tempdir();
    let f = mixed_file(dir.path(), "mixed.log");
    let (v, o) = util::tls_json(&["--log-format", "combinedssl", path_str(&f)]);
    assert_code(&o, 0);
    assert_eq!(
        v["lines"],
        json!({
            "total": 10,
            "parsed": 5,
            "malformed": 5,
            "malformed_by_reason": all_reasons(&[
                ("truncated", 1),
                ("binary", 1),
                ("unbalanced_quotes", 1),
                ("field_count", 1),
                ("bad_time", 1),
            ]),
        })
    );
    // The five good lines (two of them CRLF) are all TLSv1.3.
    assert_eq!(v["total"], 5);
    assert_eq!(
        v["protocols"][0]["ciphers"][0]["cipher"],
        "TLS_AES_128_GCM_SHA256"
    );
    // The summary line says the same.
    let o = tlsgap()
        .args(["tls", "--format", "json", "--log-format", "combinedssl"])
        .arg(&f)
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(err.contains("10 read, 5 parsed, 5 malformed"), "{err}");
}

/// A crash leaves blocks of zeros in a log. A NUL run inside a quoted value, and
/// one that swallowed the ends of lines so that the head of one record and the tail
/// of a later one make a line of the right shape, are `binary`, written out verbatim,
/// and nothing of them is counted; the lines around them are. Before, both parsed: the
/// second as the first record's client with the later record's TLS pair (a
/// black-box audit found 14 such runs in 60 random NUL blocks). Under nginx
/// `escape=json` as well; not under `escape=none`.
#[test]
fn nul_runs_are_binary_even_where_the_line_would_parse() {
    let dir = util::tempdir();
    let head = "192.0.2.1 - - [21/Nov/2026:18:07:40 +0100] \"GET / HTTP/1.1\" 200 512 \"-\" \"Mozilla/5.0 (X11; Lin";
    let tail = "ko) Safari/537.36\" TLSv1 ECDHE-RSA-AES128-SHA";
    let in_ua = GOOD.replace("curl/8.0", "curl/\0\0\0\08.0");
    let merged = [head, &"\0".repeat(300), tail].concat();
    let mut bytes = Vec::new();
    for l in [GOOD, &in_ua, GOOD, &merged, GOOD] {
        bytes.extend_from_slice(l.as_bytes());
        bytes.push(b'\n');
    }
    let f = write(dir.path(), "crashed.log", &bytes);
    let bad = dir.path().join("bad.tsv");
    let (v, o) = util::tls_json(&[
        "--log-format",
        "combinedssl",
        "--invalid-lines",
        path_str(&bad),
        path_str(&f),
    ]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["parsed"], 3);
    assert_eq!(v["lines"]["malformed_by_reason"]["binary"], 2);
    assert_eq!(v["total"], 3, "only the good lines' TLS pairs");
    let written = std::fs::read(&bad).unwrap();
    for (n, l) in [(2, &in_ua), (4, &merged)] {
        let record = [
            format!("{}\t{n}\tbinary\t", path_str(&f)).as_bytes(),
            l.as_bytes(),
            b"\n",
        ]
        .concat();
        assert!(
            written.windows(record.len()).any(|w| w == record),
            "line {n} verbatim"
        );
    }
    // nginx escape=json: the same User-Agent damage.
    let json = "log_format j escape=json '$remote_addr - $remote_user [$time_local] \"$request\" $status $body_bytes_sent \"$http_referer\" \"$http_user_agent\" $ssl_protocol $ssl_cipher';";
    let (v, o) = util::tls_json(&["--log-format", json, path_str(&f)]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["malformed_by_reason"]["binary"], 2);
    assert_eq!(v["lines"]["parsed"], 3);
    // nginx `escape=none` writes a refused request's NUL bytes as they came (a TLS
    // ClientHello on the plain port): there a NUL is not damage by itself.
    let none = json.replace("escape=json", "escape=none");
    let (v, o) = util::tls_json(&["--log-format", &none, path_str(&f)]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["parsed"], 5);
}

#[test]
fn crlf_line_ends_are_not_malformed() {
    let dir = util::tempdir();
    let log: Vec<u8> = util::sample_log()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .flat_map(|l| [l, b"\r\n"].concat())
        .collect();
    let f = write(dir.path(), "crlf.log", &log);
    let (v, o) = util::tls_json(&[path_str(&f)]);
    assert_code(&o, 0);
    assert_eq!(v["lines"]["total"], 79);
    assert_eq!(v["lines"]["malformed"], 0, "{}", v["lines"]);
    let o = tlsgap()
        .args(["export", "-q", "--log-format", "combinedssl", path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    for row in ndjson(&o) {
        for key in ["tls_cipher", "tls_protocol"] {
            if let Some(s) = row[key].as_str() {
                assert!(!s.contains('\r'), "CR kept in {key}: {row}");
            }
        }
    }
}

#[test]
fn invalid_lines_file_holds_exactly_the_bad_lines_verbatim() {
    let dir = util::tempdir();
    let d = dir.path();
    mixed_file(d, "mixed.log");
    let other = [GOOD, "\n", &GOOD[..30], "\n", GOOD, "\n"].concat();
    write(d, "other.log", other.as_bytes());
    let o = tlsgap()
        .current_dir(d)
        .args([
            "tls",
            "--format",
            "json",
            "-q",
            "--log-format",
            "combinedssl",
        ])
        .args(["--invalid-lines", "rejects.txt", "mixed.log", "other.log"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let mut want = Vec::new();
    for (i, (l, reason)) in mixed_lines().into_iter().enumerate() {
        if let Some(r) = reason {
            want.extend_from_slice(format!("mixed.log\t{}\t{r}\t", i + 1).as_bytes());
            want.extend_from_slice(&l);
            want.push(b'\n');
        }
    }
    want.extend_from_slice(format!("other.log\t2\ttruncated\t{}\n", &GOOD[..30]).as_bytes());
    let got = std::fs::read(d.join("rejects.txt")).unwrap();
    assert!(
        got == want,
        "--invalid-lines:\n{}\nexpected:\n{}",
        String::from_utf8_lossy(&got).escape_debug(),
        String::from_utf8_lossy(&want).escape_debug()
    );
    assert_eq!(util::json(&o)["lines"]["malformed"], 6);
}

#[test]
fn invalid_lines_numbers_are_right_across_blocks() {
    let dir = util::tempdir();
    let g = util::generated_log(10 << 20);
    let mut lines: Vec<&[u8]> = g
        .bytes
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    // A line cut short, as a crash or a full disk leaves it.
    let bad: &[u8] = &GOOD.as_bytes()[..60];
    // 1-based positions after insertion, in increasing order; the later ones are in
    // the second and third 4 MiB blocks.
    let at = [1usize, 2, 25_001, 40_000, lines.len() + 5];
    for &p in &at {
        lines.insert(p - 1, bad);
    }
    let mut bytes = lines.join(&b'\n');
    bytes.push(b'\n');
    write(dir.path(), "big.log", &bytes);
    let o = tlsgap()
        .current_dir(dir.path())
        .args([
            "tls",
            "--format",
            "json",
            "-q",
            "-j",
            "2",
            "--log-format",
            "combinedssl",
        ])
        .args(["--invalid-lines", "rejects.txt", "big.log"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let got = std::fs::read_to_string(dir.path().join("rejects.txt")).unwrap();
    let want: String = at
        .iter()
        .map(|p| format!("big.log\t{p}\ttruncated\t{}\n", &GOOD[..60]))
        .collect();
    assert_eq!(got, want);

    // --strict names the first one even when it is not in the first block.
    let late = [&g.bytes[..], bad, b"\n"].concat();
    write(dir.path(), "late.log", &late);
    let o = tlsgap()
        .current_dir(dir.path())
        .args([
            "tls",
            "-q",
            "-j",
            "2",
            "--strict",
            "--log-format",
            "combinedssl",
            "late.log",
        ])
        .output()
        .unwrap();
    assert_code(&o, 1);
    let err = stderr(&o);
    assert!(err.contains(&format!("late.log:{}:", g.lines + 1)), "{err}");
}

#[test]
fn strict_stops_at_the_first_malformed_line_naming_file_line_and_reason() {
    let dir = util::tempdir();
    mixed_file(dir.path(), "mixed.log");
    for cmd in ["tls", "export"] {
        let o = tlsgap()
            .current_dir(dir.path())
            .args([cmd, "--strict", "--log-format", "combinedssl", "mixed.log"])
            .output()
            .unwrap();
        assert_code(&o, 1);
        let err = stderr(&o);
        assert!(err.contains("mixed.log:3:"), "{cmd}: {err}");
        assert!(err.contains("truncated"), "{cmd}: {err}");
        assert!(
            !err.contains("mixed.log:5:"),
            "{cmd}: only the first: {err}"
        );
        if cmd == "export" {
            // To standard output, no row at or after the line it stopped at (the
            // block holding it is not written; before, all of it was: rows 4 to 10).
            let rows = String::from_utf8_lossy(&o.stdout).lines().count();
            assert_eq!(rows, 0, "no row: {}", stdout(&o));
        }
    }
    // A clean file passes --strict.
    let clean = write(dir.path(), "clean.log", &util::sample_log());
    let o = tlsgap()
        .args(["tls", "-q", "--strict", path_str(&clean)])
        .output()
        .unwrap();
    assert_code(&o, 0);
}
