//! `tlsgap check`: the monitoring-plugin contract (exit 0/1/2/3, one status line,
//! perfdata `label=value[UOM];warn;crit;min;max`).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{self, code, line, path_str, stderr, stdout, tlsgap, write};

/// A combinedssl log: `n` lines of each (protocol, cipher), then `garbage` lines that
/// fit no format.
fn log(dir: &Path, name: &str, mix: &[(usize, &str, &str)], garbage: usize) -> PathBuf {
    let mut text = String::new();
    for (i, (n, protocol, cipher)) in mix.iter().enumerate() {
        for k in 0..*n {
            text.push_str(&line(&format!("10.0.{i}.{}", k % 250), protocol, cipher));
            text.push('\n');
        }
    }
    for _ in 0..garbage {
        text.push_str("this is not an access log line\n");
    }
    write(dir, name, text.as_bytes())
}

fn check(args: &[&str]) -> Output {
    tlsgap().arg("check").args(args).output().unwrap()
}

/// The one status line, checked for shape: `TLSGAP <STATE> - text[ | perfdata]`.
#[track_caller]
fn status(o: &Output, state: &str, exit: i32) -> String {
    let out = stdout(o);
    assert_eq!(
        code(o),
        exit,
        "exit code for {state}; stdout:\n{out}\nstderr:\n{}",
        stderr(o)
    );
    assert!(out.ends_with('\n'), "{out:?}");
    let l = out.trim_end().to_string();
    assert!(
        l.starts_with(&format!("TLSGAP {state} - ")),
        "status line starts with the state: {l}"
    );
    // The guidelines' layout: a short first line, then the long text, the perfdata
    // after ` | ` (on the last line).
    let first = l.lines().next().unwrap_or_default();
    assert!(
        first.chars().count() < 80,
        "first line of {} characters: {first}",
        first.chars().count()
    );
    assert!(!first.contains('|') || l.lines().count() == 1, "{l}");
    assert!(l.matches('|').count() <= 1, "one perfdata separator: {l}");
    l
}

/// A perfdata item as the Monitoring Plugins guidelines define it.
#[derive(Debug, PartialEq)]
struct Perf {
    label: String,
    value: f64,
    uom: String,
    warn: Option<f64>,
    crit: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
}

/// Parse and validate the perfdata after `|`: labels without quotes need no
/// spaces, `=` or `'`; numbers are `[-0-9.]` only (C locale, no exponent); the UOM is
/// one the guidelines list.
#[track_caller]
fn perfdata(status: &str) -> Vec<Perf> {
    let (_, perf) = status
        .split_once(" | ")
        .unwrap_or_else(|| panic!("no perfdata: {status}"));
    let number = |s: &str| -> Option<f64> {
        if s.is_empty() {
            return None;
        }
        assert!(
            s.chars()
                .all(|c| c.is_ascii_digit() || c == '.' || c == '-'),
            "perfdata number {s:?} in {perf}"
        );
        Some(s.parse().unwrap())
    };
    // warn and crit are ranges: [@][start:][end], start a number or ~ (a plain
    // number is the common 0..end and is returned as one).
    let threshold = |s: &str| -> Option<f64> {
        let body = s.strip_prefix('@').unwrap_or(s);
        match body.split_once(':') {
            None => number(body),
            Some((a, b)) => {
                assert!(
                    a == "~" || a.is_empty() || number(a).is_some(),
                    "range {s:?} in {perf}"
                );
                assert!(b.is_empty() || number(b).is_some(), "range {s:?} in {perf}");
                None
            }
        }
    };
    perf.split(' ')
        .map(|item| {
            let (label, rest) = item.split_once('=').unwrap();
            assert!(
                !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                "label {label:?}"
            );
            let fields: Vec<&str> = rest.split(';').collect();
            assert_eq!(fields.len(), 5, "value;warn;crit;min;max in {item}");
            let v = fields[0];
            let split = v
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
                .unwrap_or(v.len());
            let (value, uom) = v.split_at(split);
            assert!(
                ["", "s", "ms", "us", "%", "B", "KB", "MB", "TB", "c"].contains(&uom),
                "UOM {uom:?} in {item}"
            );
            Perf {
                label: label.to_string(),
                value: number(value).unwrap(),
                uom: uom.to_string(),
                warn: threshold(fields[1]),
                crit: threshold(fields[2]),
                min: number(fields[3]),
                max: number(fields[4]),
            }
        })
        .collect()
}

fn perf<'a>(items: &'a [Perf], label: &str) -> &'a Perf {
    items
        .iter()
        .find(|p| p.label == label)
        .unwrap_or_else(|| panic!("no {label} in {items:?}"))
}

#[test]
fn ok_status_line_and_perfdata_exactly() {
    let dir = util::tempdir();
    let f = log(
        dir.path(),
        "ok.log",
        &[(90, "TLSv1.3", "TLS_AES_128_GCM_SHA256"), (10, "-", "-")],
        0,
    );
    let o = check(&["-q", path_str(&f)]);
    let l = status(&o, "OK", 0);
    assert_eq!(
        l,
        "TLSGAP OK - legacy protocols 0.00% (warn 1%, crit 5%)\n\
         insecure ciphers 0.00% (warn 0%, crit 1%)\n\
         malformed lines 0.00% (warn 1%, crit 10%)\n\
         90 TLS requests, 10 plain, 100 lines | legacy_share=0;0.01;0.05;0;1 \
         insecure_share=0;0;0.01;0;1 malformed_share=0;0.01;0.1;0;1 tls_requests=90;;;0; \
         plain_requests=10;;;0; lines=100;;;0;"
    );
    let p = perfdata(&l);
    assert_eq!(p.len(), 6);
    assert_eq!(
        perf(&p, "legacy_share"),
        &Perf {
            label: "legacy_share".into(),
            value: 0.0,
            uom: String::new(),
            warn: Some(0.01),
            crit: Some(0.05),
            min: Some(0.0),
            max: Some(1.0),
        }
    );
}

#[test]
fn legacy_share_over_warn_is_warning() {
    let dir = util::tempdir();
    // 4.2% on TLS 1.1 with a suite that is weak, not insecure.
    let f = log(
        dir.path(),
        "warn.log",
        &[
            (958, "TLSv1.3", "TLS_AES_256_GCM_SHA384"),
            (42, "TLSv1.1", "ECDHE-RSA-AES256-SHA"),
        ],
        0,
    );
    let o = check(&["-q", path_str(&f)]);
    let l = status(&o, "WARNING", 1);
    assert!(
        l.starts_with("TLSGAP WARNING - legacy protocols 4.20% (warn 1%, crit 5%)\n"),
        "the cause comes first: {l}"
    );
    let p = perfdata(&l);
    assert_eq!(perf(&p, "legacy_share").value, 0.042);
    assert_eq!(perf(&p, "insecure_share").value, 0.0);
    assert_eq!(perf(&p, "tls_requests").value, 1000.0);

    // The same traffic under looser thresholds is OK, under stricter ones CRITICAL.
    let o = check(&[
        "-q",
        "--legacy-warn",
        "0.05",
        "--legacy-crit",
        "0.1",
        path_str(&f),
    ]);
    let l = status(&o, "OK", 0);
    assert!(l.contains("legacy_share=0.042;0.05;0.1;0;1"), "{l}");
    let o = check(&["-q", "--legacy-crit", "0.042", path_str(&f)]);
    status(&o, "WARNING", 1);
    let o = check(&["-q", "--legacy-crit", "0.04", path_str(&f)]);
    status(&o, "CRITICAL", 2);
}

#[test]
fn insecure_suites_over_crit_are_critical() {
    let dir = util::tempdir();
    let f = log(
        dir.path(),
        "crit.log",
        &[
            (80, "TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
            (20, "TLSv1", "RC4-SHA"),
        ],
        0,
    );
    let o = check(&["-q", path_str(&f)]);
    let l = status(&o, "CRITICAL", 2);
    assert!(
        l.contains("legacy protocols 20.00% (warn 1%, crit 5%)"),
        "{l}"
    );
    assert!(
        l.contains("insecure ciphers 20.00% (warn 0%, crit 1%)"),
        "{l}"
    );
    let p = perfdata(&l);
    assert_eq!(perf(&p, "insecure_share").value, 0.2);
    assert_eq!(perf(&p, "legacy_share").value, 0.2);
}

#[test]
fn malformed_lines_count_against_all_lines() {
    let dir = util::tempdir();
    let f = log(
        dir.path(),
        "bad.log",
        &[(97, "TLSv1.3", "TLS_AES_128_GCM_SHA256")],
        3,
    );
    let o = check(&["-q", "--log-format", "combinedssl", path_str(&f)]);
    let l = status(&o, "WARNING", 1);
    assert!(
        l.starts_with("TLSGAP WARNING - malformed lines 3.00% (warn 1%, crit 10%)"),
        "{l}"
    );
    assert_eq!(perf(&perfdata(&l), "malformed_share").value, 0.03);
    assert_eq!(perf(&perfdata(&l), "lines").value, 100.0);
}

#[test]
fn missing_file_is_unknown() {
    let dir = util::tempdir();
    let missing = dir.path().join("nope.log");
    let o = check(&["-q", path_str(&missing)]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(!l.contains('|'), "no perfdata when UNKNOWN: {l}");

    // One good file does not hide a missing one.
    let good = log(
        dir.path(),
        "good.log",
        &[(10, "TLSv1.3", "TLS_AES_128_GCM_SHA256")],
        0,
    );
    let o = check(&["-q", path_str(&good), path_str(&missing)]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(l.contains("nope.log"), "names the file: {l}");
}

#[test]
fn truncated_gzip_is_unknown() {
    let dir = util::tempdir();
    let d = dir.path();
    let g = util::generated_log(2 << 20);
    let plain = write(d, "big.log", &g.bytes);
    util::run_tool("gzip", &["-k", "-f", path_str(&plain)]);
    let full = std::fs::read(d.join("big.log.gz")).unwrap();
    let cut = write(d, "cut.log.gz", &full[..full.len() / 2]);
    let o = check(&["-q", "--log-format", "combinedssl", path_str(&cut)]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(l.contains("cut.log.gz"), "names the file: {l}");
    assert!(
        l.contains("truncated") || l.contains("corrupt"),
        "says why: {l}"
    );
    // The whole file is fine (and has legacy traffic: WARNING or CRITICAL, not UNKNOWN).
    let o = check(&[
        "-q",
        "--log-format",
        "combinedssl",
        path_str(&d.join("big.log.gz")),
    ]);
    assert!([1, 2].contains(&code(&o)), "{}", stdout(&o));
}

#[test]
fn nothing_parsed_is_unknown() {
    let dir = util::tempdir();
    let f = log(dir.path(), "garbage.log", &[], 5);
    let o = check(&["-q", "--log-format", "combinedssl", path_str(&f)]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(l.contains("nothing could be processed"), "{l}");
    let empty = write(dir.path(), "empty.log", b"");
    let o = check(&["-q", path_str(&empty)]);
    status(&o, "UNKNOWN", 3);
}

#[test]
fn usage_errors_are_unknown_for_check_only() {
    let dir = util::tempdir();
    let f = log(
        dir.path(),
        "ok.log",
        &[(10, "TLSv1.3", "TLS_AES_128_GCM_SHA256")],
        0,
    );
    for args in [
        vec!["--no-such-flag"],
        vec!["--legacy-warn", "5"],
        vec!["--insecure-crit", "lots"],
        vec!["--auth-warn", "-1"],
    ] {
        let o = check(&[&args[..], &[path_str(&f)]].concat());
        assert_eq!(code(&o), 3, "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty(), "clap explains {args:?}");
        // And the monitoring system, which shows standard output, gets a status
        // line and what was wrong as its long text (audit of 2026-11-28: it got
        // nothing).
        let l = status(&o, "UNKNOWN", 3);
        let lines: Vec<&str> = l.lines().collect();
        assert_eq!(
            lines.first().copied(),
            Some("TLSGAP UNKNOWN - usage error (tlsgap check --help)"),
            "{args:?}: {l}"
        );
        assert_eq!(lines.len(), 2, "{args:?}: {l}");
        let flag = args[0].trim_start_matches('-');
        assert!(
            lines[1].contains(flag) || lines[1].contains("argument"),
            "the long text says what was wrong: {l}"
        );
    }
    // warn above crit is caught after parsing, with a status line.
    let o = check(&["--legacy-warn", "0.2", "--legacy-crit", "0.1", path_str(&f)]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(l.contains("--legacy-warn"), "{l}");
    // Other commands keep clap's exit code 2; help is still 0.
    let o = tlsgap().args(["tls", "--no-such-flag"]).output().unwrap();
    assert_eq!(code(&o), 2);
    let o = check(&["--help"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).contains("--legacy-warn"));
}

/// `htpasswd -c -b -B -C COST FILE USER PASSWORD` (apache2-utils).
fn real_htpasswd(dir: &Path, cost: &str) -> Option<PathBuf> {
    let program = util::tool_ready(
        "htpasswd_bcrypt_cost_10_over_auth_warn",
        "htpasswd",
        "apache2-utils",
        "TLSGAP_SKIP_HTPASSWD_TESTS",
    )?;
    let f = dir.join("users.htpasswd");
    let o = std::process::Command::new(program)
        .args(["-c", "-b", "-B", "-C", cost])
        .arg(&f)
        .args(["alice", "correct horse"])
        .output()
        .unwrap();
    assert!(o.status.success(), "htpasswd: {}", stderr(&o));
    let text = std::fs::read_to_string(&f).unwrap();
    assert!(text.starts_with("alice:$2y$10$"), "bcrypt cost 10: {text}");
    Some(f)
}

#[test]
fn htpasswd_bcrypt_cost_10_over_auth_warn() {
    let dir = util::tempdir();
    let Some(h) = real_htpasswd(dir.path(), "10") else {
        return;
    };
    // A bcrypt cost-10 verification is tens of milliseconds: far over 0.01 s. The
    // critical threshold is out of reach so that the state does not depend on speed.
    let o = check(&[
        "--htpasswd",
        path_str(&h),
        "--auth-warn",
        "0.01",
        "--auth-crit",
        "1000",
    ]);
    let l = status(&o, "WARNING", 1);
    assert!(
        l.starts_with("TLSGAP WARNING - slowest auth "),
        "htpasswd only, no log read: {l}"
    );
    assert!(
        l.contains(" s for alice (bcrypt cost 10; warn 0.01 s, crit 1000 s)"),
        "{l}"
    );
    assert!(!l.contains("correct horse") && !l.contains("$2y$"), "{l}");
    let p = perfdata(&l);
    assert_eq!(p.len(), 1);
    let a = perf(&p, "auth_seconds");
    assert_eq!(a.uom, "s");
    assert!(a.value > 0.01, "{a:?}");
    assert_eq!(
        (a.warn, a.crit, a.min, a.max),
        (Some(0.01), Some(1000.0), Some(0.0), None)
    );

    // With a log too: both parts are judged and reported.
    let f = log(
        dir.path(),
        "ok.log",
        &[(10, "TLSv1.3", "TLS_AES_128_GCM_SHA256")],
        0,
    );
    let o = check(&[
        "-q",
        "--htpasswd",
        path_str(&h),
        "--auth-warn",
        "0.01",
        "--auth-crit",
        "1000",
        path_str(&f),
    ]);
    let l = status(&o, "WARNING", 1);
    assert!(l.starts_with("TLSGAP WARNING - slowest auth "), "{l}");
    let p = perfdata(&l);
    assert_eq!(p.len(), 7);
    perf(&p, "legacy_share");
    perf(&p, "auth_seconds");
}

#[test]
fn unusable_htpasswd_is_unknown() {
    let dir = util::tempdir();
    let o = check(&["--htpasswd", path_str(&dir.path().join("missing"))]);
    status(&o, "UNKNOWN", 3);
    let h = write(dir.path(), "empty.htpasswd", b"# nobody\nnot an entry\n");
    let o = check(&["--htpasswd", path_str(&h)]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(l.contains("no usable entries"), "{l}");
}

/// `--stale-after AGE`: a newest line older than AGE is WARNING with its age, and so is
/// a time window with no line in it (UNKNOWN without the flag); a fresh enough log adds
/// only the age to the perfdata.
#[test]
fn stale_after_warns_on_an_old_log_and_an_empty_window() {
    let sample = util::repo_root().join("testdata/sample/combinedssl.log.gz");
    let s = path_str(&sample);
    let o = check(&["-q", "--since", "-1h", s]);
    assert_eq!(code(&o), 3, "{}", stdout(&o));
    assert!(stdout(&o).starts_with("TLSGAP UNKNOWN - no line inside the time window"));
    let o = check(&["-q", "--since", "-1h", "--stale-after", "2h", s]);
    assert_eq!(code(&o), 1, "{}", stdout(&o));
    assert!(
        stdout(&o).starts_with("TLSGAP WARNING - log stale: no line inside the time window"),
        "{}",
        stdout(&o)
    );
    // The sample's newest line is from 2026-11-20: days old.
    let o = check(&["-q", "--stale-after", "2h", s]);
    let out = stdout(&o);
    assert!(
        out.starts_with("TLSGAP WARNING - log stale: newest line "),
        "{out}"
    );
    assert!(out.contains("old (stale after 2h00m)"), "{out}");
    assert!(out.contains("| newest_line_age_seconds="), "{out}");
    let o = check(&["-q", "--stale-after", "36500d", s]);
    let out = stdout(&o);
    assert!(!out.contains("log stale"), "{out}");
    assert!(out.contains(";3153600000;;0;"), "{out}");
    let o = check(&["-q", "--stale-after", "soon", s]);
    assert_eq!(code(&o), 3);
}

/// At the `--stale-after` boundary the state agrees with the perfdata it prints: a
/// WARNING only when the age shown is above the threshold shown (a line 1800.4 s old
/// was a WARNING with `newest_line_age_seconds=1800s;1800`).
#[test]
fn stale_after_state_agrees_with_its_perfdata_at_the_boundary() {
    let dir = util::tempdir();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    for back in [1799, 1800, 1801] {
        let stamp = chrono::DateTime::from_timestamp(now - back, 0)
            .unwrap()
            .format("%d/%b/%Y:%H:%M:%S +0000");
        let f = dir.path().join(format!("age-{back}.log"));
        std::fs::write(
            &f,
            format!(
                "192.0.2.1 - - [{stamp}] \"GET / HTTP/1.1\" 200 5 \"-\" \"curl/8\" \
                 TLSv1.3 TLS_AES_128_GCM_SHA256\n"
            ),
        )
        .unwrap();
        let o = check(&[
            "-q",
            "--log-format",
            "combinedssl",
            "--stale-after",
            "30m",
            path_str(&f),
        ]);
        let out = stdout(&o);
        let perf = out
            .split("newest_line_age_seconds=")
            .nth(1)
            .unwrap_or_else(|| panic!("{out}"));
        let (shown, rest) = perf.split_once("s;").unwrap();
        let threshold: i64 = rest.split(';').next().unwrap().parse().unwrap();
        let shown: i64 = shown.parse().unwrap();
        assert_eq!(threshold, 1800, "{out}");
        assert!(shown >= back, "{out}");
        assert_eq!(
            out.contains("log stale"),
            shown > threshold,
            "{back}: {out}"
        );
    }
}

/// `check` writes its status line to standard output only: `-o` is not offered.
/// The only input missing, or a directory: the UNKNOWN line names it and says why
/// (it said "no input could be opened", the name only on standard error, which
/// monitoring cores do not show).
#[test]
fn unknown_names_the_input_that_could_not_be_opened() {
    let dir = util::tempdir();
    let missing = dir.path().join("missing.log");
    let o = check(&[path_str(&missing)]);
    let l = status(&o, "UNKNOWN", 3);
    let all = stdout(&o);
    assert!(all.contains("missing.log: cannot open"), "{l}\n{all}");
    let o = check(&[path_str(dir.path())]);
    status(&o, "UNKNOWN", 3);
    assert!(
        stdout(&o).contains(&path_str(dir.path()).to_string()),
        "{}",
        stdout(&o)
    );
}

#[test]
fn check_help_does_not_offer_output() {
    let o = tlsgap().args(["check", "--help"]).output().unwrap();
    assert_eq!(code(&o), 0);
    assert!(!stdout(&o).contains("--output"), "{}", stdout(&o));
}

/// `--metric M -w RANGE -c RANGE` in the Monitoring Plugins range syntax.
#[test]
fn ranges_for_each_metric() {
    let dir = util::tempdir();
    let f = log(
        dir.path(),
        "mix.log",
        &[
            (958, "TLSv1.3", "TLS_AES_256_GCM_SHA384"),
            (42, "TLSv1.1", "ECDHE-RSA-AES256-SHA"),
        ],
        0,
    );
    let f = path_str(&f);
    // Requests: 1000 read. CRITICAL below 2000, WARNING below 5000.
    let o = check(&[
        "-q", "--metric", "requests", "-w", "5000:", "-c", "2000:", f,
    ]);
    let l = status(&o, "CRITICAL", 2);
    assert!(
        l.starts_with("TLSGAP CRITICAL - 1000 TLS requests (warn 5000:, crit 2000:)"),
        "{l}"
    );
    assert_eq!(perf(&perfdata(&l), "tls_requests").value, 1000.0);
    assert!(l.contains("tls_requests=1000;5000:;2000:;0;"), "{l}");
    let o = check(&["-q", "--metric", "requests", "-w", "5000:", "-c", "500:", f]);
    status(&o, "WARNING", 1);
    let o = check(&["-q", "--metric", "requests", "-w", "@~:999", f]);
    status(&o, "WARNING", 1); // the legacy share (4.2%) is over its default 1%
                              // Legacy share 0.042: inside @0.04:0.05 is CRITICAL; outside 0:0.1 nothing.
    let o = check(&["-q", "--metric", "legacy", "-c", "@0.04:0.05", f]);
    status(&o, "CRITICAL", 2);
    let o = check(&["-q", "--metric", "legacy", "-w", "0.1", "-c", "0.2", f]);
    let l = status(&o, "OK", 0);
    assert!(l.contains("legacy_share=0.042;0.1;0.2;0;1"), "{l}");
    // A bad range, or -w without --metric: UNKNOWN (usage), exit 3.
    let o = check(&["-q", "--metric", "legacy", "-w", "0.2:0.1", f]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(l.contains("--warning"), "{l}");
    let o = check(&["-q", "-w", "10", f]);
    assert_eq!(code(&o), 3);
    // -w/-c of --metric legacy and --legacy-warn/--legacy-crit both set the legacy
    // thresholds: UNKNOWN (usage), not one silently dropped.
    for own in [["--legacy-warn", "0.01"], ["--legacy-crit", "0.02"]] {
        let mut args = vec!["-q", "--metric", "legacy", "-w", "0.5", "-c", "0.9"];
        args.extend(own);
        args.push(f);
        let o = check(&args);
        let l = status(&o, "UNKNOWN", 3);
        assert!(
            l.contains("--metric legacy with -w/-c sets the legacy thresholds"),
            "{l}"
        );
    }
    // Another figure's own thresholds stay with it: the legacy share (4.2%) is over
    // --legacy-warn 0.01 while --metric insecure judges the insecure share.
    let o = check(&[
        "-q",
        "--metric",
        "insecure",
        "-w",
        "0.5",
        "--legacy-warn",
        "0.01",
        f,
    ]);
    status(&o, "WARNING", 1);
}

/// Too few requests to judge, and a check that hangs: UNKNOWN.
#[test]
fn min_requests_and_timeout_are_unknown() {
    let dir = util::tempdir();
    let f = log(
        dir.path(),
        "few.log",
        &[(20, "TLSv1.3", "TLS_AES_256_GCM_SHA384")],
        0,
    );
    let o = check(&["-q", "--min-requests", "100", path_str(&f)]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(
        l.contains("only 20 TLS requests, fewer than --min-requests 100"),
        "{l}"
    );
    let o = check(&["-q", "--min-requests", "20", path_str(&f)]);
    status(&o, "OK", 0);
    // A FIFO nobody writes to: reading it never ends.
    let fifo = dir.path().join("stuck.log");
    util::run_tool("mkfifo", &[path_str(&fifo)]);
    let o = check(&[
        "-q",
        "--timeout",
        "0.5",
        "--log-format",
        "combinedssl",
        path_str(&fifo),
    ]);
    let l = status(&o, "UNKNOWN", 3);
    assert!(l.contains("timed out after 0.5 s"), "{l}");
}
