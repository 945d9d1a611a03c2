//! Terminal width (issue 13): every `--format table` but `report`'s fits the width
//! `COLUMNS` says (80 when it is unset and the output is no terminal), on standard
//! output and in the notes on standard error; a wide `COLUMNS` keeps the full tables;
//! a narrow one leaves columns out (and says which) instead of failing.
//!
//! The cases are the table cases of `scripts/golden.sh` over the test corpus, plus
//! `whatif --dataset`, `merge --by day` and `ciphers --explain`.

use std::path::Path;
use std::process::Output;

use unicode_width::UnicodeWidthStr;

use crate::util::{code, path_str, repo_root, stderr, stdout, tempdir, tlsgap};

/// One command whose table is checked.
struct Case {
    name: &'static str,
    args: Vec<String>,
    /// Whether the corpus makes this table wider than 80 columns when it may be
    /// (so that the 200-column run proves the width really changes something).
    wide: bool,
}

fn case(name: &'static str, wide: bool, args: &[&str]) -> Case {
    Case {
        name,
        args: args.iter().map(|s| s.to_string()).collect(),
        wide,
    }
}

/// The cases; `ds` is a dataset exported from the sample and a real Apache log.
fn cases(ds: &Path) -> Vec<Case> {
    let s = "testdata/sample/combinedssl.log.gz";
    let real = "testdata/real/apache-combinedssl.log";
    let ds = path_str(ds);
    let manifest: serde_json::Value = serde_json::from_slice(
        &std::fs::read(repo_root().join("testdata/auth/real/manifest.json")).unwrap(),
    )
    .unwrap();
    let authfmt = manifest["log_format"].as_str().unwrap();
    let traces = [
        "testdata/auth/real/traces/trace.5693",
        "testdata/auth/real/traces/trace.5694",
        "testdata/auth/real/traces/trace.5695",
    ];
    let ff = [
        "testdata/strace/real/apache-ff/trace.7015",
        "testdata/strace/real/apache-ff/trace.7016",
        "testdata/strace/real/apache-ff/trace.7017",
    ];
    let mut auth_full = vec![
        "auth",
        "--htpasswd",
        "testdata/auth/real/htpasswd",
        "--log",
        "testdata/auth/real/access.log",
        "--log-format",
        authfmt,
        "--traces",
    ];
    auth_full.extend(traces);
    let mut auth_traces = vec!["auth", "--traces"];
    auth_traces.extend(traces);
    let mut gaps_ff = vec!["gaps"];
    gaps_ff.extend(ff);
    vec![
        // The summary line under the table (136 columns) and the period shares.
        case("tls", true, &["tls", "-j1", s]),
        case("tls-by-hour", true, &["tls", "-j1", "--by", "hour", s]),
        case(
            "tls-by-day-clients",
            true,
            &["tls", "-j1", "--by", "day", "--count", "clients", s],
        ),
        case("tls-real", false, &["tls", "-j1", real]),
        case(
            "whatif-modern",
            true,
            &["whatif", "-j1", "--policy", "mozilla-modern", s],
        ),
        case(
            "whatif-intermediate-explain",
            true,
            &[
                "whatif",
                "-j1",
                "--policy",
                "mozilla-intermediate",
                "--explain",
                s,
            ],
        ),
        case(
            "whatif-apache-inline",
            true,
            &[
                "whatif",
                "-j1",
                "--policy",
                "SSLProtocol -all +TLSv1.2 +TLSv1.3\nSSLCipherSuite HIGH:!aNULL:!MD5",
                s,
            ],
        ),
        case(
            "whatif-dataset",
            true,
            &[
                "whatif",
                "--policy",
                "mozilla-intermediate",
                "--dataset",
                ds,
            ],
        ),
        case("merge", false, &["merge", ds]),
        case("merge-by-day", true, &["merge", "--by", "day", ds]),
        case("ciphers", true, &["ciphers"]),
        case(
            "ciphers-names",
            false,
            &[
                "ciphers",
                "ECDHE-RSA-AES128-GCM-SHA256",
                "EDH-RSA-DES-CBC3-SHA",
                "RC4-MD5",
                "NO-SUCH",
            ],
        ),
        case(
            "ciphers-explain",
            false,
            &["ciphers", "--explain", "HIGH:!aNULL:!MD5"],
        ),
        case(
            "gaps-threads",
            true,
            &["gaps", "testdata/strace/real/threads/f-tt-T-y-o.trace"],
        ),
        case("gaps-apache-ff", true, &gaps_ff),
        case("auth-full", false, &auth_full),
        case("auth-traces", false, &auth_traces),
    ]
}

/// A dataset of the sample (host web1) and a real Apache log (host `web 2/é`).
fn dataset(dir: &Path) -> std::path::PathBuf {
    let ds = dir.join("ds");
    for (host, log) in [
        ("web1", "testdata/sample/combinedssl.log.gz"),
        ("web 2/é", "testdata/real/apache-combinedssl.log"),
    ] {
        let o = tlsgap()
            .current_dir(repo_root())
            .args([
                "export",
                "-j1",
                "-q",
                "--format",
                "parquet",
                "--partition-by",
                "date",
            ])
            .args([
                "--log-format",
                "combinedssl",
                "--host",
                host,
                "-o",
                path_str(&ds),
                log,
            ])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "export {host}: {}", stderr(&o));
    }
    ds
}

/// `columns`: the value of `COLUMNS`, or `None` to leave it unset.
fn run(c: &Case, columns: Option<&str>) -> Output {
    let mut cmd = tlsgap();
    cmd.current_dir(repo_root()).args(&c.args);
    match columns {
        Some(v) => cmd.env("COLUMNS", v),
        None => cmd.env_remove("COLUMNS"),
    };
    cmd.output().unwrap()
}

fn widest(s: &str) -> usize {
    s.lines().map(UnicodeWidthStr::width).max().unwrap_or(0)
}

/// The lines wider than `width`, for a failure message.
fn over(s: &str, width: usize) -> String {
    s.lines()
        .filter(|l| l.width() > width)
        .map(|l| format!("  {:>3} |{l}|\n", l.width()))
        .collect()
}

/// The exit code each case must have (ciphers: `NO-SUCH` is unknown).
fn expected_code(c: &Case) -> i32 {
    i32::from(c.name == "ciphers-names")
}

#[test]
fn columns_80_every_table_and_note_fits() {
    let dir = tempdir();
    let ds = dataset(dir.path());
    for c in cases(&ds) {
        let o = run(&c, Some("80"));
        assert_eq!(code(&o), expected_code(&c), "{}: {}", c.name, stderr(&o));
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(!out.is_empty(), "{}: no output", c.name);
        assert!(
            widest(&out) <= 80,
            "{}: stdout wider than 80:\n{}",
            c.name,
            over(&out, 80)
        );
        assert!(
            widest(&err) <= 80,
            "{}: stderr wider than 80:\n{}",
            c.name,
            over(&err, 80)
        );
    }
}

#[test]
fn columns_200_keeps_the_full_tables() {
    let dir = tempdir();
    let ds = dataset(dir.path());
    let mut wide = 0;
    for c in cases(&ds) {
        let o = run(&c, Some("200"));
        assert_eq!(code(&o), expected_code(&c), "{}: {}", c.name, stderr(&o));
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(!out.contains("left out to fit"), "{}:\n{out}", c.name);
        assert!(widest(&out) <= 200, "{}:\n{}", c.name, over(&out, 200));
        assert!(widest(&err) <= 200, "{}:\n{}", c.name, over(&err, 200));
        if c.wide {
            // The data calls for more than 80 columns: at 200 they are used.
            assert!(
                widest(&out) > 80,
                "{}: nothing wider than 80:\n{out}",
                c.name
            );
            wide += 1;
        }
        let header = |h: &str| out.lines().any(|l| l.starts_with(h));
        match c.name {
            n if n.starts_with("tls") || n.starts_with("merge") => {
                assert!(header("protocol / cipher"), "{n}:\n{out}");
                assert!(
                    out.lines()
                        .any(|l| l.trim_end().ends_with("verdict     FS  AEAD")),
                    "{n}:\n{out}"
                );
            }
            n if n.starts_with("whatif") => {
                let h = out
                    .lines()
                    .find(|l| l.split_whitespace().next() == Some("protocol"))
                    .unwrap();
                let cols: Vec<&str> = h.split_whitespace().collect();
                assert_eq!(
                    cols,
                    ["protocol", "cipher", "requests", "clients", "verdict", "policy"],
                    "{n}:\n{out}"
                );
                // Whole rows: the reason a suite is refused is not cut.
                assert!(out.contains("protocol off"), "{n}:\n{out}");
            }
            "ciphers" => {
                let h = out.lines().next().unwrap();
                let cols: Vec<&str> = h.split_whitespace().collect();
                assert_eq!(
                    cols,
                    ["code", "name", "since", "kx/au", "enc(bits)", "verdict"],
                    "{out}"
                );
            }
            _ => {}
        }
    }
    assert!(wide >= 10, "only {wide} cases wider than 80");
}

#[test]
fn by_period_shares_are_all_shown_at_80_and_on_one_line_at_200() {
    let dir = tempdir();
    let ds = dataset(dir.path());
    let c = cases(&ds)
        .into_iter()
        .find(|c| c.name == "merge-by-day")
        .unwrap();
    let narrow = stdout(&run(&c, Some("80")));
    let full = stdout(&run(&c, Some("200")));
    // Before issue 13 the shares were cut at 52 characters (`…`): the smallest ones
    // of a day were lost. Now every share of every period is there, folded.
    let shares = |s: &str| -> Vec<String> {
        let from = s.find("by period").unwrap();
        s[from..]
            .split_whitespace()
            .filter(|w| w.ends_with('%'))
            .map(str::to_string)
            .collect()
    };
    assert!(!narrow.contains('…'), "{narrow}");
    assert_eq!(shares(&narrow), shares(&full));
    assert!(shares(&full).len() > 8, "{full}");
    let periods = |s: &str| s.lines().filter(|l| l.starts_with("2026-")).count();
    assert_eq!(periods(&narrow), periods(&full));
    // At 200 columns each period is one line; at 80 some need a second.
    let section = |s: &str| s[s.find("by period").unwrap()..].lines().skip(1).count();
    assert_eq!(section(&full), periods(&full), "{full}");
    assert!(section(&narrow) > periods(&narrow), "{narrow}");
}

#[test]
fn columns_40_leaves_columns_out_and_says_so() {
    let dir = tempdir();
    let ds = dataset(dir.path());
    for c in cases(&ds) {
        let o = run(&c, Some("40"));
        let (out, err) = (stdout(&o), stderr(&o));
        assert_eq!(code(&o), expected_code(&c), "{}: {err}", c.name);
        assert!(!err.contains("panicked"), "{}: {err}", c.name);
        assert!(!out.is_empty(), "{}: no output", c.name);
        // What cannot be cut (a header row, a suite or a file name) may pass 40 a
        // little; nothing is laid out for 80 any more.
        assert!(widest(&out) <= 60, "{}:\n{}", c.name, over(&out, 60));
        assert!(widest(&err) <= 60, "{}:\n{}", c.name, over(&err, 60));
        let lines_over = out.lines().filter(|l| l.width() > 40).count();
        assert!(
            lines_over * 10 <= out.lines().count(),
            "{}: {lines_over} lines over 40:\n{}",
            c.name,
            over(&out, 40)
        );
        if c.name.starts_with("tls") || c.name.starts_with("merge") {
            assert!(
                out.contains("(left out to fit 40 columns: verdict,"),
                "{}:\n{out}",
                c.name
            );
        }
        if c.name.starts_with("whatif") {
            assert!(
                out.contains("(left out to fit 40 columns:"),
                "{}:\n{out}",
                c.name
            );
        }
    }
}

#[test]
fn not_a_terminal_without_columns_is_80_and_bad_columns_are_ignored() {
    let dir = tempdir();
    let ds = dataset(dir.path());
    for c in cases(&ds).into_iter().filter(
        |c| // Not the apache-ff traces: their bcrypt costs are measured at each run.
        ["tls", "whatif-modern", "ciphers", "gaps-threads"].contains(&c.name),
    ) {
        let at_80 = stdout(&run(&c, Some("80")));
        // Standard output is a pipe here: 80 columns whoever runs the tests.
        assert_eq!(stdout(&run(&c, None)), at_80, "{}: COLUMNS unset", c.name);
        for bad in ["", "0", "wide", "-5"] {
            assert_eq!(
                stdout(&run(&c, Some(bad))),
                at_80,
                "{}: COLUMNS={bad:?}",
                c.name
            );
        }
        // Unset, standard error (a pipe) gets one line per note, as before.
        let o = run(&c, None);
        for l in stderr(&o).lines() {
            assert!(l.starts_with("tlsgap: "), "{}: {l}", c.name);
        }
    }
}
