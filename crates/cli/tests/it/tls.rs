//! `tlsgap tls`: the JSON contract, counting modes, CSV, the table, format choice and
//! usage errors.

use std::io::Read;
use std::process::Stdio;

use serde_json::{json, Value};

use crate::util::{self, assert_code, line, path_str, stderr, stdout, tls_json, tlsgap, write};

/// The hand-written log: (client, protocol, cipher); `-` is plain HTTP.
const HAND: &[(&str, &str, &str)] = &[
    ("192.0.2.1", "-", "-"),
    ("192.0.2.1", "TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
    ("192.0.2.1", "TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    ("192.0.2.2", "TLSv1.3", "TLS_AES_256_GCM_SHA384"),
    ("192.0.2.2", "TLSv1.2", "AES128-SHA"),
    ("192.0.2.3", "TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    ("192.0.2.3", "TLSv1.3", "TLS_AES_256_GCM_SHA384"),
    ("192.0.2.4", "-", "-"),
    ("192.0.2.4", "-", "-"),
    ("192.0.2.5", "TLSv1", "ECDHE-RSA-AES256-SHA"),
    ("192.0.2.6", "TLSv1.1", "ECDHE-RSA-AES256-SHA"),
    ("192.0.2.7", "TLSv1.2", "RC4-SHA"),
    ("192.0.2.8", "TLSv1.2", "FOO-BAR"),
    ("192.0.2.9", "TLSv1.3", "TLS_AES_256_GCM_SHA384"),
];

/// The hand log plus one truncated line, written to `dir/hand.log`.
fn hand_log(dir: &std::path::Path) -> std::path::PathBuf {
    let mut s = String::new();
    for (c, p, x) in HAND {
        s.push_str(&line(c, p, x));
        s.push('\n');
    }
    s.push_str("192.0.2.10 - - [21/Nov/2026:18:07:40 +0100] \"GET /x HTTP/1.1\" 200\n");
    write(dir, "hand.log", s.as_bytes())
}

#[track_caller]
fn assert_share(v: &Value, count: u64, total: u64) {
    let share = v["share"]
        .as_f64()
        .unwrap_or_else(|| panic!("share in {v}"));
    let want = count as f64 / total as f64;
    assert!(
        (share - want).abs() < 1e-12,
        "share {share}, want {want} in {v}"
    );
    assert_eq!(v["count"], count, "{v}");
}

/// A cipher row: name, count, verdict, forward secrecy, AEAD.
#[track_caller]
fn assert_cipher(
    c: &Value,
    name: &str,
    count: u64,
    total: u64,
    verdict: &str,
    fs: Value,
    aead: Value,
) {
    assert_eq!(c["cipher"], name, "{c}");
    assert_share(c, count, total);
    assert_eq!(c["verdict"], verdict, "{c}");
    assert_eq!(c["forward_secrecy"], fs, "{c}");
    assert_eq!(c["aead"], aead, "{c}");
    let keys: Vec<&String> = c.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 7, "cipher keys: {keys:?}");
}

#[test]
fn json_contract_field_by_field() {
    let dir = util::tempdir();
    let f = hand_log(dir.path());
    let (v, o) = tls_json(&["--log-format", "combinedssl", path_str(&f)]);
    assert_code(&o, 0);

    assert_eq!(v["count"], "requests");
    // The verdict summary: legacy TLSv1 + TLSv1.1; insecure RC4-SHA; weak AES128-SHA
    // and ECDHE-RSA-AES256-SHA twice; no FS AES128-SHA, RC4-SHA; no AEAD those and
    // the two CBC ECDHE; unknown FOO-BAR.
    let sm = &v["summary"];
    for (key, n) in [
        ("legacy_protocols", 2),
        ("insecure_ciphers", 1),
        ("weak_ciphers", 3),
        ("no_forward_secrecy", 2),
        ("no_aead", 4),
        ("unknown", 1),
    ] {
        assert_share(&sm[key], n, 11);
    }
    let caps: Vec<(String, String)> = sm["caps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["grade"].as_str().unwrap().into(),
                c["reason"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        caps,
        [
            ("C".to_string(), "RC4 with TLSv1.2".to_string()),
            ("B".into(), "TLSv1 negotiated".into()),
            ("B".into(), "TLSv1.1 negotiated".into()),
        ]
    );
    assert_eq!(sm["grade_cap"], "C");
    assert_eq!(v["lines"]["total"], 15);
    assert_eq!(v["lines"]["parsed"], 14);
    assert_eq!(v["lines"]["malformed"], 1);
    let reasons = v["lines"]["malformed_by_reason"].as_object().unwrap();
    assert_eq!(reasons.len(), 10, "every reason is listed: {reasons:?}");
    assert_eq!(reasons["truncated"], 1);
    assert_eq!(reasons.values().filter_map(Value::as_u64).sum::<u64>(), 1);
    assert_eq!(v["plain"], 3);
    assert_eq!(v["total"], 11);
    let t = 11;

    let protocols = v["protocols"].as_array().unwrap();
    let names: Vec<&str> = protocols
        .iter()
        .map(|p| p["protocol"].as_str().unwrap())
        .collect();
    // By count (5, 4, 1, 1), then by name.
    assert_eq!(names, ["TLSv1.3", "TLSv1.2", "TLSv1", "TLSv1.1"]);
    for p in protocols {
        let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 5, "protocol keys: {keys:?}");
    }

    let (p13, p12, p10, p11) = (&protocols[0], &protocols[1], &protocols[2], &protocols[3]);
    assert_share(p13, 5, t);
    assert_eq!(p13["verdict"], "recommended");
    let c = p13["ciphers"].as_array().unwrap();
    assert_eq!(c.len(), 2);
    // 3 before 2: count beats name.
    assert_cipher(
        &c[0],
        "TLS_AES_256_GCM_SHA384",
        3,
        t,
        "recommended",
        json!(true),
        json!(true),
    );
    assert_cipher(
        &c[1],
        "TLS_AES_128_GCM_SHA256",
        2,
        t,
        "recommended",
        json!(true),
        json!(true),
    );

    assert_share(p12, 4, t);
    assert_eq!(p12["verdict"], "secure");
    let c = p12["ciphers"].as_array().unwrap();
    assert_eq!(c.len(), 4);
    // All 1: by name.
    assert_cipher(
        &c[0],
        "AES128-SHA",
        1,
        t,
        "weak",
        json!(false),
        json!(false),
    );
    assert_cipher(
        &c[1],
        "ECDHE-RSA-AES128-GCM-SHA256",
        1,
        t,
        "recommended",
        json!(true),
        json!(true),
    );
    assert_cipher(&c[2], "FOO-BAR", 1, t, "unknown", Value::Null, Value::Null);
    assert_cipher(
        &c[3],
        "RC4-SHA",
        1,
        t,
        "insecure",
        json!(false),
        json!(false),
    );

    assert_share(p10, 1, t);
    assert_eq!(p10["verdict"], "weak");
    assert_cipher(
        &p10["ciphers"][0],
        "ECDHE-RSA-AES256-SHA",
        1,
        t,
        "weak",
        json!(true),
        json!(false),
    );
    assert_share(p11, 1, t);
    assert_eq!(p11["verdict"], "weak");

    // Shares are against the TLS total, so they sum to 1.
    let sum: f64 = protocols.iter().map(|p| p["share"].as_f64().unwrap()).sum();
    assert!((sum - 1.0).abs() < 1e-9, "{sum}");
}

#[test]
fn clients_count_once_with_their_first_tls_request() {
    let dir = util::tempdir();
    let f = hand_log(dir.path());
    let (v, o) = tls_json(&[
        "--count",
        "clients",
        "--log-format",
        "combinedssl",
        path_str(&f),
    ]);
    assert_code(&o, 0);
    assert_eq!(v["count"], "clients");
    // Lines are still lines.
    assert_eq!(v["lines"]["total"], 15);
    // 192.0.2.4 was only ever plain.
    assert_eq!(v["plain"], 1);
    assert_eq!(v["total"], 8);
    let got = util::pair_counts(&v);
    let want: std::collections::BTreeMap<(String, String), u64> = [
        // 192.0.2.1: plain first, then TLSv1.2 (its first TLS request), then TLSv1.3.
        ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256", 1),
        // .2 and .9 (.2 later used TLSv1.2: not counted again).
        ("TLSv1.3", "TLS_AES_256_GCM_SHA384", 2),
        ("TLSv1.3", "TLS_AES_128_GCM_SHA256", 1),
        ("TLSv1", "ECDHE-RSA-AES256-SHA", 1),
        ("TLSv1.1", "ECDHE-RSA-AES256-SHA", 1),
        ("TLSv1.2", "RC4-SHA", 1),
        ("TLSv1.2", "FOO-BAR", 1),
    ]
    .into_iter()
    .map(|(p, c, n)| ((p.to_string(), c.to_string()), n))
    .collect();
    assert_eq!(got, want);
    let names: Vec<&str> = v["protocols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["protocol"].as_str().unwrap())
        .collect();
    // TLSv1.2 and TLSv1.3 both have 3 clients: by name.
    assert_eq!(names, ["TLSv1.2", "TLSv1.3", "TLSv1", "TLSv1.1"]);
    assert_share(&v["protocols"][0], 3, 8);
}

#[test]
fn csv_has_a_header_and_one_row_per_cipher_then_plain() {
    let dir = util::tempdir();
    let f = hand_log(dir.path());
    let o = tlsgap()
        .args([
            "tls",
            "--format",
            "csv",
            "-q",
            "--log-format",
            "combinedssl",
            path_str(&f),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(
        rows[0],
        "kind,protocol,cipher,count,share,verdict,protocol_verdict,forward_secrecy,aead,bits,group,post_quantum"
    );
    let share = |n: u64| (n as f64 / 11.0).to_string();
    let want = [
        format!(
            "tls,\"TLSv1.3\",\"TLS_AES_256_GCM_SHA384\",3,{},recommended,recommended,true,true,256",
            share(3)
        ),
        format!(
            "tls,\"TLSv1.3\",\"TLS_AES_128_GCM_SHA256\",2,{},recommended,recommended,true,true,128",
            share(2)
        ),
        format!(
            "tls,\"TLSv1.2\",\"AES128-SHA\",1,{},weak,secure,false,false,128",
            share(1)
        ),
        format!(
            "tls,\"TLSv1.2\",\"ECDHE-RSA-AES128-GCM-SHA256\",1,{},recommended,secure,true,true,128",
            share(1)
        ),
        format!(
            "tls,\"TLSv1.2\",\"FOO-BAR\",1,{},unknown,secure,,,",
            share(1)
        ),
        format!(
            "tls,\"TLSv1.2\",\"RC4-SHA\",1,{},insecure,secure,false,false,128",
            share(1)
        ),
        format!(
            "tls,\"TLSv1\",\"ECDHE-RSA-AES256-SHA\",1,{},weak,weak,true,false,256",
            share(1)
        ),
        format!(
            "tls,\"TLSv1.1\",\"ECDHE-RSA-AES256-SHA\",1,{},weak,weak,true,false,256",
            share(1)
        ),
        "plain,,,3,,,,,,".to_string(),
    ];
    // No group columns in this format: the two last columns stay empty, no group rows.
    let want: Vec<String> = want.iter().map(|r| format!("{r},,")).collect();
    assert_eq!(&rows[1..], &want[..]);
}

#[test]
fn table_snapshot() {
    let dir = util::tempdir();
    hand_log(dir.path());
    for (name, count) in [("table_requests", "requests"), ("table_clients", "clients")] {
        let o = util::run_ok_in(
            dir.path(),
            &[
                "tls",
                "--count",
                count,
                "--log-format",
                "combinedssl",
                "hand.log",
            ],
        );
        let out = stdout(&o);
        for l in out.lines() {
            assert!(l.chars().count() <= 80, "wider than 80 columns: {l:?}");
        }
        insta::assert_snapshot!(name, out);
    }
}

/// With short cipher names the name column is narrower than "TLS total (requests)":
/// the totals must still line up with the counts above them.
#[test]
fn table_totals_line_up_with_counts_when_names_are_short() {
    let dir = util::tempdir();
    let log = [
        line("192.0.2.1", "TLSv1.2", "AES128-SHA"),
        line("192.0.2.2", "-", "-"),
    ]
    .join("\n");
    write(dir.path(), "short.log", log.as_bytes());
    for count in ["requests", "clients"] {
        let o = util::run_ok_in(
            dir.path(),
            &[
                "tls",
                "--count",
                count,
                "--log-format",
                "combinedssl",
                "short.log",
            ],
        );
        let out = stdout(&o);
        let header = out.lines().next().unwrap();
        let right_edge = header.find(count).unwrap() + count.len();
        for l in out.lines().skip(1).take_while(|l| !l.is_empty()) {
            // The count's last digit sits under the header's last letter.
            let b = l.as_bytes();
            let aligned = b.get(right_edge - 1).is_some_and(u8::is_ascii_digit)
                && b.get(right_edge).is_none_or(|c| *c == b' ');
            assert!(aligned, "count not under {count:?}:\n{out}");
        }
    }
}

/// Control bytes from a log (or a file name) must never reach a terminal raw.
#[test]
fn hostile_bytes_never_reach_the_table_raw() {
    let dir = util::tempdir();
    let lines = [
        // Apache-escaped ESC sequences in protocol, cipher and User-Agent.
        line("192.0.2.1", r"TLSv1.2\x1b[31m", r"ECDHE-RSA-\x1b[31mEVIL"),
        line("192.0.2.1", "TLSv1.3", r"TLS_\x1b]0;owned\x07"),
        // Raw ESC in the User-Agent (parses), in protocol and cipher (binary).
        line("192.0.2.2", "TLSv1.2", "AES128-SHA").replace("(test)", "(\x1b[2J\x1b[31m)"),
        line("192.0.2.3", "TLSv1.2\x1b[31m", "ECDHE-\x1b[31mX"),
        // C1 control and bidi override, in UTF-8.
        line("192.0.2.4", "TLSv1.2", "AES\u{9b}31m-\u{202e}SHA"),
    ];
    let log = lines.join("\n") + "\n";
    let name = "evil\x1b[31m.log";
    write(dir.path(), name, log.as_bytes());
    for fmt in ["table", "csv", "json"] {
        for count in ["requests", "clients"] {
            let o = tlsgap()
                .current_dir(dir.path())
                .args([
                    "tls",
                    "--format",
                    fmt,
                    "--count",
                    count,
                    "--log-format",
                    "combinedssl",
                    name,
                ])
                .output()
                .unwrap();
            assert_code(&o, 0);
            if fmt == "table" {
                for bad in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
                    assert!(
                        !stdout(&o).contains(bad),
                        "{bad:?} reached the table raw:\n{}",
                        stdout(&o).escape_debug()
                    );
                }
                // The raw-ESC User-Agent line still counted; the raw-ESC protocol one is binary.
                assert!(stdout(&o).contains("lines: 5 read, 4 parsed, 1 malformed (binary 1)"));
            }
            // JSON and CSV are for machines, but stdout still never carries a raw ESC
            // (JSON escapes it; CSV shows what the log held, escaped or not).
            if fmt != "csv" {
                assert!(!o.stdout.contains(&0x1b), "{fmt}: raw ESC on stdout");
            }
            assert!(
                !o.stderr.contains(&0x1b),
                "{fmt}: raw ESC on stderr: {:?}",
                stderr(&o)
            );
        }
    }
    // The detection note and the "no preset fits" message show file name and line.
    let junk = "\x1b[31mjunk\x1b]0;title\x07 line\n";
    write(dir.path(), name, junk.as_bytes());
    let o = tlsgap()
        .current_dir(dir.path())
        .args(["tls", name])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(
        !o.stderr.contains(&0x1b) && !o.stderr.contains(&0x07),
        "{:?}",
        stderr(&o)
    );
}

#[test]
fn auto_detects_nginx_ssl_and_says_so() {
    let f = util::real_dir().join("nginx-ssl.log");
    let o = tlsgap()
        .args(["tls", "--format", "json", path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let err = stderr(&o);
    assert!(err.contains("nginx-ssl"), "{err}");
    assert!(err.contains("auto-detected"), "{err}");
    assert_eq!(util::json(&o)["lines"]["malformed"], 0);

    // -q: nothing on stderr at all.
    let o = tlsgap()
        .args(["tls", "--format", "json", "-q", path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
    // Also with the table, whose summary goes to stdout.
    let o = tlsgap().args(["tls", "-q", path_str(&f)]).output().unwrap();
    assert_code(&o, 0);
    assert_eq!(stderr(&o), "");
}

#[test]
fn auto_detection_picks_the_apache_presets_of_the_real_logs() {
    for (log, preset) in [
        ("apache-combinedssl.log", "combinedssl"),
        ("apache-ssl_request.log", "ssl_request"),
    ] {
        let f = util::real_dir().join(log);
        let o = tlsgap()
            .args(["tls", "--format", "json", path_str(&f)])
            .output()
            .unwrap();
        assert_code(&o, 0);
        let err = stderr(&o);
        assert!(
            err.contains(&format!("log format: {preset} ")),
            "{log}: {err}"
        );
        assert_eq!(util::json(&o)["lines"]["malformed"], 0, "{log}");
    }
}

#[test]
fn no_preset_fits_exits_2_showing_the_line_and_mentioning_log_format() {
    let dir = util::tempdir();
    let f = write(
        dir.path(),
        "odd.log",
        b"2026-11-21 18:07:40 some-app INFO started listener on :8443\nmore of the same\n",
    );
    let o = tlsgap().args(["tls", path_str(&f)]).output().unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains("some-app INFO started listener on :8443"),
        "{err}"
    );
    assert!(err.contains("--log-format"), "{err}");
    assert!(err.contains("odd.log"), "{err}");
    assert!(o.stdout.is_empty());
}

#[test]
fn unknown_directive_in_log_format_exits_2_with_a_caret() {
    let dir = util::tempdir();
    let f = write(dir.path(), "a.log", &util::sample_log());
    let o = tlsgap()
        .args(["tls", "--log-format", "%h %Z", path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    let fmt_line = lines
        .iter()
        .position(|l| l.ends_with("%h %Z"))
        .unwrap_or_else(|| panic!("the format is shown: {err}"));
    let caret = lines
        .get(fmt_line + 1)
        .unwrap_or_else(|| panic!("no caret line: {err}"));
    let col = caret.find('^').unwrap_or_else(|| panic!("no caret: {err}"));
    assert_eq!(&lines[fmt_line][col..], "Z", "caret under the Z: {err}");
    assert!(err.contains("%Z"), "{err}");
}

#[test]
fn tls_on_a_log_without_tls_fields_exits_2_with_a_clear_message() {
    let dir = util::tempdir();
    let combined = "192.0.2.1 - - [21/Nov/2026:18:07:40 +0100] \"GET / HTTP/1.1\" 200 512 \"-\" \"curl/8.0\"\n";
    let f = write(dir.path(), "combined.log", combined.repeat(3).as_bytes());
    for args in [&["--log-format", "combined"][..], &[][..]] {
        let o = tlsgap().arg("tls").args(args).arg(&f).output().unwrap();
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains("no TLS"), "{args:?}: {err}");
        assert!(
            err.contains("SSL_PROTOCOL") && err.contains("$ssl_protocol"),
            "{err}"
        );
        assert!(o.stdout.is_empty());
    }
}

#[test]
fn parquet_without_output_path_exits_2() {
    let dir = util::tempdir();
    let f = write(dir.path(), "a.log", &util::sample_log());
    for cmd in ["tls", "export"] {
        for out in [&[][..], &["-o", "-"][..]] {
            let o = tlsgap()
                .args([cmd, "--format", "parquet"])
                .args(out)
                .arg(&f)
                .output()
                .unwrap();
            assert_code(&o, 2);
            assert!(stderr(&o).contains("-o"), "{cmd}: {}", stderr(&o));
            assert!(o.stdout.is_empty(), "{cmd}: no Parquet on stdout");
        }
    }
}

#[test]
fn output_file_gets_the_result_and_stdout_stays_empty() {
    let dir = util::tempdir();
    let f = hand_log(dir.path());
    let out = dir.path().join("result.json");
    let o = tlsgap()
        .args([
            "tls",
            "--format",
            "json",
            "-q",
            "--log-format",
            "combinedssl",
            "-o",
        ])
        .arg(&out)
        .arg(&f)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(o.stdout.is_empty());
    let (want, _) = tls_json(&["--log-format", "combinedssl", path_str(&f)]);
    let got: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(got, want);
    // `-o -` is standard output.
    let o = tlsgap()
        .args([
            "tls",
            "--format",
            "json",
            "-q",
            "--log-format",
            "combinedssl",
            "-o",
            "-",
        ])
        .arg(&f)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(util::json(&o), want);
    // No temporary file is left next to the result.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["tls", "--format", "xml"][..],
        &["tls", "--count", "hosts"][..],
        &["tls", "--no-such-flag"][..],
        &["frobnicate"][..],
        &[][..],
    ] {
        let o = tlsgap().args(args).output().unwrap();
        assert_code(&o, 2);
    }
}

/// `tlsgap ... | head -1`: the reader goes away; that is not an error.
fn closed_pipe(args: &[&str], read_first: bool) {
    let dir = util::tempdir();
    let g = util::generated_log(6 << 20);
    let f = write(dir.path(), "big.log", &g.bytes);
    let mut child = std::process::Command::new(util::tlsgap_path())
        .args(args)
        .arg(&f)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    if read_first {
        let mut buf = [0u8; 64];
        let n = out.read(&mut buf).unwrap();
        assert!(n > 0);
    }
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 0);
    let err = stderr(&o);
    assert!(!err.contains("error"), "{args:?}: {err}");
    assert!(
        !err.to_lowercase().contains("broken pipe"),
        "{args:?}: {err}"
    );
}

#[test]
fn closed_stdout_pipe_is_not_an_error() {
    closed_pipe(&["tls", "-q"], false);
    closed_pipe(&["tls", "--format", "json"], false);
    closed_pipe(&["export", "--format", "ndjson"], true);
    closed_pipe(&["export", "--format", "csv", "-j", "2"], true);
}

/// Completions and the manual page come from the same clap definitions.
#[test]
fn completions_and_man_page_are_generated() {
    let o = tlsgap().args(["completions", "bash"]).output().unwrap();
    assert_code(&o, 0);
    let s = stdout(&o);
    assert!(s.contains("tlsgap") && s.contains("--log-format"), "{s}");
    let o = tlsgap().arg("man").output().unwrap();
    assert_code(&o, 0);
    let s = stdout(&o);
    assert!(s.contains(".TH tlsgap") && s.contains("export"), "{s}");
}

/// `tlsgap man --dir DIR`: one page per subcommand, each holding every flag its
/// `--help` lists, and each one `man` renders.
#[test]
fn a_man_page_per_subcommand() {
    let dir = util::tempdir();
    let o = tlsgap()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_code(&o, 0);
    let man = util::find_program("man");
    for sub in [
        "tls", "export", "ciphers", "whatif", "gaps", "auth", "report", "check", "merge",
    ] {
        let page = dir.path().join(format!("tlsgap-{sub}.1"));
        let roff = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{page:?}: {e}"));
        assert!(roff.contains(&format!(".TH tlsgap-{sub} 1")), "{sub}");
        assert!(
            roff.contains(&format!("\\fBtlsgap {sub}\\fR")),
            "{sub}: synopsis"
        );
        let help = stdout(&tlsgap().args([sub, "--help"]).output().unwrap());
        for flag in help
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| w.starts_with("--") && w.len() > 2)
        {
            let flag = flag.split(['=', '<', '[']).next().unwrap();
            assert!(
                roff.contains(&flag.replace('-', "\\-")),
                "{sub}: {flag} missing"
            );
        }
        let man = man.as_ref().expect("man (apt-get install man-db)");
        let shown = std::process::Command::new(man)
            .arg("-l")
            .arg(&page)
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        assert!(shown.status.success(), "{sub}: {}", stderr(&shown));
        assert!(stdout(&shown).contains(&format!("tlsgap-{sub}")), "{sub}");
    }
    assert!(dir.path().join("tlsgap.1").is_file());
}

/// The completion scripts load in the shells they are for, and complete.
#[test]
fn completions_load_in_bash_and_zsh() {
    let bin = util::tlsgap_path();
    let bin = bin.to_str().unwrap();
    let bash = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source <('{bin}' completions bash) && complete -p tlsgap && \
             COMP_WORDS=(tlsgap wh); COMP_CWORD=1; _tlsgap tlsgap wh tlsgap; \
             echo \"reply: ${{COMPREPLY[*]}}\""
        ))
        .output()
        .unwrap();
    assert_code(&bash, 0);
    let out = stdout(&bash);
    assert!(out.contains("-F _tlsgap tlsgap"), "{out}");
    assert!(out.contains("reply: whatif"), "{out}");
    let zsh = util::find_program("zsh").expect("zsh (apt-get install zsh)");
    let z = std::process::Command::new(zsh)
        .args(["-f", "-c"])
        .arg(format!(
            "autoload -U compinit && compinit -u -D && source <('{bin}' completions zsh) \
             && print -r -- \"registered: ${{_comps[tlsgap]}}\""
        ))
        .output()
        .unwrap();
    assert_code(&z, 0);
    assert!(stdout(&z).contains("registered: _tlsgap"), "{}", stdout(&z));
}
