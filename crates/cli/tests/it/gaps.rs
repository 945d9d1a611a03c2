//! `tlsgap gaps` on real traces with known ground truth: the checked-in set in
//! `testdata/strace/real` and a fresh set made during the run by
//! `scripts/real-traces.py` (real strace of CPU-spinning programs, of a threaded
//! program with SIGPROF timers, and of a real Apache prefork doing HTTP Basic auth
//! over TLS against an htpasswd file with a bcrypt cost-12 user and a {SHA} user).

use std::path::Path;

use serde_json::Value;

use crate::util::{self, assert_code, json, stderr};

fn gaps_json(dir: &Path, files: &[String]) -> Value {
    gaps_json_with(dir, files, &[])
}

fn gaps_json_with(dir: &Path, files: &[String], more: &[&str]) -> Value {
    let o = util::tlsgap()
        .current_dir(dir)
        .args([
            "gaps",
            "--format",
            "json",
            "--min-gap",
            "0.1",
            "--top",
            "1000",
        ])
        .args(more)
        .args(files)
        .output()
        .unwrap();
    assert_code(&o, 0);
    json(&o)
}

fn list<'a>(v: &'a Value, key: &str) -> &'a Vec<Value> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key} in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

/// Every expected gap and blocked interval of the manifest in `dir` is reported with
/// the right thread, length and cause; no `auth` gap is reported that is not expected.
/// Returns the problems found.
fn check_manifest(dir: &Path) -> Vec<String> {
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let verify = f(&manifest["bcrypt"], "verify_seconds");
    let mut problems = Vec::new();
    for t in list(&manifest, "traces") {
        let id = t["id"].as_str().unwrap();
        let files: Vec<String> = list(t, "files")
            .iter()
            .map(|f| f.as_str().unwrap().to_string())
            .collect();
        let flags: Vec<&str> = list(t, "strace_flags")
            .iter()
            .map(|f| f.as_str().unwrap())
            .collect();
        let report = gaps_json(dir, &files);
        if files.len() > 1 {
            // Several files at once: the answer of one after another (the bcrypt speed
            // given, so that both runs compare gaps with the same figure).
            let run =
                |jobs: &str| gaps_json_with(dir, &files, &["--bcrypt-speed", "0.02", "-j", jobs]);
            if run("1") != run("4") {
                problems.push(format!("{id}: -j 1 and -j 4 give different reports"));
            }
        }
        if report["lines"]["trace"].as_u64().unwrap_or(0) == 0 {
            problems.push(format!("{id}: no trace lines recognised"));
            continue;
        }
        let format = &t["format"];
        if format["timestamps"] == "none" {
            // Without stamps there is no time to measure: say so, report nothing.
            let notes = serde_json::to_string(&report["notes"]).unwrap();
            if !list(&report, "gaps").is_empty() || !notes.contains("no timestamps") {
                problems.push(format!("{id}: no stamps, yet gaps or no note: {report}"));
            }
            continue;
        }
        // `-t` stamps have whole seconds: a 0.3 s stretch cannot be measured.
        if flags.contains(&"-t") {
            continue;
        }
        // Without -f/-ff nothing in the trace names the process.
        let has_pid = format["pid_prefix"] != "none";
        let gaps = list(&report, "gaps");
        let apache = t["scenario"] == "apache";
        for want in list(t, "expected_gaps") {
            let tid = want["tid"].as_u64().unwrap();
            let found = gaps.iter().find(|g| {
                let secs = f(g, "seconds");
                (!has_pid || g["pid"].as_u64() == Some(tid))
                    && if apache {
                        g["cause"] == "auth"
                            && secs >= 0.5 * verify
                            && secs <= verify + 0.25
                            && g["detail"]
                                .as_str()
                                .is_some_and(|d| d.contains("bcrypt cost 12"))
                    } else {
                        g["cause"] == "cpu" && (secs - f(want, "seconds")).abs() <= 0.05
                    }
            });
            match found {
                None => problems.push(format!(
                    "{id}: expected gap not found: {want}\nreported: {}",
                    serde_json::to_string_pretty(gaps).unwrap()
                )),
                Some(g) => {
                    if want.get("sigprof_lines_in_trace").is_some()
                        && g["timer_signals"].as_u64().unwrap_or(0) == 0
                    {
                        problems.push(format!("{id}: SIGPROF noise not merged: {g}"));
                    }
                }
            }
        }
        if apache {
            let auth = gaps.iter().filter(|g| g["cause"] == "auth").count();
            let want = list(t, "expected_gaps").len();
            if auth != want {
                problems.push(format!(
                    "{id}: {auth} auth gaps reported, {want} expected (bcrypt requests only, \
                     none for the {{SHA}} user)"
                ));
            }
            let text = serde_json::to_string(&report).unwrap();
            if text.contains("$2y$") || text.contains("{SHA}") && text.contains("shauser:{SHA}") {
                problems.push(format!("{id}: a password hash reached the report"));
            }
        }
        let blocked = list(&report, "blocked");
        for want in t["expected_blocked"].as_array().into_iter().flatten() {
            let tid = want["tid"].as_u64().unwrap();
            let ok = blocked.iter().any(|b| {
                (!has_pid || b["pid"].as_u64() == Some(tid))
                    && (f(b, "seconds") - f(want, "seconds")).abs() <= 0.05
            });
            if !ok {
                problems.push(format!("{id}: expected blocked interval not found: {want}"));
            }
            let as_gap = gaps.iter().any(|g| {
                (!has_pid || g["pid"].as_u64() == Some(tid))
                    && (f(g, "seconds") - f(want, "seconds")).abs() <= 0.05
            });
            if as_gap {
                problems.push(format!("{id}: a blocked sleep was counted as a gap"));
            }
        }
    }
    problems
}

#[test]
fn checked_in_real_traces_match_ground_truth() {
    let problems = check_manifest(&util::repo_root().join("testdata/strace/real"));
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn fresh_real_traces_match_ground_truth() {
    if !util::server_test_enabled(
        "fresh_real_traces_match_ground_truth",
        &[
            "strace", "apache2", "htpasswd", "curl", "openssl", "python3",
        ],
        "strace apache2 apache2-utils curl openssl python3",
    ) {
        return;
    }
    let dir = util::tempdir();
    let out = dir.path().join("traces");
    util::run_script("real-traces.py", &[out.as_os_str()]);
    let problems = check_manifest(&out);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn ff_files_in_any_order_and_f_plus_ff_give_the_same_gaps() {
    let dir = util::repo_root().join("testdata/strace/real");
    let a = vec![
        "threads/ff-ttt-T.trace.6964".to_string(),
        "threads/ff-ttt-T.trace.6965".to_string(),
    ];
    let b: Vec<String> = a.iter().rev().cloned().collect();
    let (ra, rb) = (gaps_json(&dir, &a), gaps_json(&dir, &b));
    assert_eq!(ra["gaps"], rb["gaps"]);
    assert_eq!(ra["blocked"], rb["blocked"]);
    assert!(!list(&ra, "gaps").is_empty());
}

#[test]
fn several_threads_give_the_answer_of_one_in_every_format() {
    // Real -ff and -f captures, hand-made -ff files, a gzip copy and a file that does
    // not exist, in one run: every thread count gives the same bytes, warnings and
    // exit code (the unreadable file is still named, in its place among the inputs).
    let root = util::repo_root().join("testdata/strace");
    let tmp = util::tempdir();
    let gz = tmp.path().join("trace.7016.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(
        &mut enc,
        &std::fs::read(root.join("real/apache-ff/trace.7016")).unwrap(),
    )
    .unwrap();
    let gz_bytes = enc.finish().unwrap();
    std::fs::write(&gz, &gz_bytes).unwrap();
    // A rotated trace cut short: read up to the damage, the damage named.
    let cut = tmp.path().join("trace.7017.gz");
    std::fs::write(&cut, &gz_bytes[..gz_bytes.len() / 2]).unwrap();
    let files: Vec<String> = [
        "real/apache-ff/trace.7015",
        "real/threads/f-tt-T-y-o.trace",
        "real/threads/ff-ttt-T.trace.6964",
        "no-such-trace.1234",
        "real/threads/ff-ttt-T.trace.6965",
        "forms/ff/trace.1",
        "forms/ff/trace.2",
        "forms/ff/trace.3",
        "real/apache-ff/trace.7017",
        "forms/f-tt-T-yy.strace",
    ]
    .iter()
    .map(|f| f.to_string())
    .chain([gz.display().to_string(), cut.display().to_string()])
    .collect();
    for format in ["json", "table", "csv"] {
        let run = |jobs: &str| {
            util::tlsgap()
                .current_dir(&root)
                .args(["gaps", "--bcrypt-speed", "0.015", "--min-gap", "0.01"])
                .args(["--format", format, "-j", jobs])
                .args(&files)
                .output()
                .unwrap()
        };
        let one = run("1");
        assert_code(&one, 1);
        for named in ["no-such-trace.1234", "trace.7017.gz"] {
            assert!(util::stderr(&one).contains(named), "{}", util::stderr(&one));
        }
        for jobs in ["2", "3", "16"] {
            util::assert_same_run(&run(jobs), &one, &format!("{format}, -j {jobs}"));
        }
        if format == "json" {
            let v: Value = serde_json::from_str(&util::stdout(&one)).unwrap();
            assert_eq!(list(&v, "inputs").len(), files.len() - 1);
            let damaged = list(&v, "inputs")
                .iter()
                .find(|i| i["name"].as_str().unwrap().ends_with("trace.7017.gz"))
                .unwrap();
            assert!(damaged["lines"].as_u64().unwrap() > 0, "{damaged}");
            assert!(list(&v, "gaps").len() > 10, "{}", util::stdout(&one));
        }
    }
}

#[test]
fn unreadable_input_is_named_and_the_rest_processed() {
    let dir = util::repo_root().join("testdata/strace/real");
    let o = util::tlsgap()
        .current_dir(&dir)
        .args([
            "gaps",
            "--format",
            "json",
            "no-such-trace",
            "spin/ttt-T-y.trace",
        ])
        .output()
        .unwrap();
    assert_code(&o, 1);
    assert!(
        util::stderr(&o).contains("no-such-trace"),
        "{}",
        util::stderr(&o)
    );
    assert!(!list(&json(&o), "gaps").is_empty());
    let o = util::tlsgap()
        .args(["gaps", "no-such-trace"])
        .output()
        .unwrap();
    assert_code(&o, 2);
}

#[test]
fn table_csv_and_compressed_stdin() {
    let dir = util::repo_root().join("testdata/strace/real");
    let o = util::tlsgap()
        .current_dir(&dir)
        .args([
            "gaps",
            "apache-ff/trace.7015",
            "apache-ff/trace.7016",
            "apache-ff/trace.7017",
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = util::stdout(&o);
    assert!(out.contains("auth"), "{out}");
    assert!(out.contains("bcrypt cost 12"), "{out}");
    assert!(!out.contains("$2y$"), "hash printed:\n{out}");
    let o = util::tlsgap()
        .current_dir(&dir)
        .args(["gaps", "--format", "csv", "spin/ttt-T-y.trace"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = util::stdout(&o);
    assert!(out.lines().next().unwrap().contains("seconds"), "{out}");
    assert!(out.lines().count() >= 3, "{out}");
    // gzip on stdin.
    let raw = std::fs::read(dir.join("spin/ttt-T-y.trace")).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &raw).unwrap();
    let gz = gz.finish().unwrap();
    let o = util::tlsgap()
        .args(["gaps", "--format", "json"])
        .write_stdin(gz)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    let g = list(&v, "gaps");
    assert!(
        g.iter().any(|g| (f(g, "seconds") - 0.30).abs() < 0.05),
        "{v}"
    );
}

/// `--since/--until` (and `--tz`) on `gaps`: with strace -ttt times, only the gaps that
/// start inside are reported, so a boundary splits the gaps (and blocked intervals)
/// into the two sides exactly; `-q` silences the notes.
#[test]
fn a_time_window_splits_the_gaps_of_ttt_traces() {
    let dir = util::repo_root().join("testdata/strace/real/apache-ff");
    let gaps = |extra: &[&str]| -> Value {
        let o = util::tlsgap()
            .current_dir(&dir)
            .args(["gaps", "-q", "--format", "json", "--bcrypt-speed", "0.02"])
            .args(extra)
            .arg("trace.*")
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.stderr.is_empty(),
            "-q: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let starts = |v: &Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["start"].as_str().unwrap().to_string())
            .collect()
    };
    let all = gaps(&[]);
    let mut every: Vec<String> = starts(&all, "gaps");
    every.extend(starts(&all, "blocked"));
    every.sort();
    assert!(every.len() >= 4, "{every:?}");
    let cut = every[every.len() / 2].clone();
    let after = gaps(&["--since", &cut]);
    let before = gaps(&["--until", &cut]);
    for key in ["gaps", "blocked"] {
        let (a, b) = (starts(&after, key), starts(&before, key));
        assert!(a.iter().all(|s| *s >= cut), "{key} after {cut}: {a:?}");
        assert!(b.iter().all(|s| *s < cut), "{key} before {cut}: {b:?}");
        assert_eq!(a.len() + b.len(), starts(&all, key).len(), "{key}");
    }
    assert!(!starts(&after, "gaps").is_empty() || !starts(&after, "blocked").is_empty());
    // A zone only changes how naive times read: the same instant in +02:00.
    let t: chrono::DateTime<chrono::FixedOffset> = cut.parse().unwrap();
    let local = t
        .with_timezone(&chrono::FixedOffset::east_opt(2 * 3600).unwrap())
        .format("%Y-%m-%dT%H:%M:%S%.f")
        .to_string();
    let zoned = gaps(&["--since", &local, "--tz", "+02:00"]);
    assert_eq!(starts(&zoned, "gaps"), starts(&after, "gaps"));
}

/// Stamps of whole seconds (`strace -t`) cannot measure a gap: the real strace on a
/// program that computes for 0.3 s three times, once with `-tt` (three gaps of about
/// 0.3 s) and once with `-t`, from which no gap is reported and a note names the file
/// (audit of 2026-11-28: three bcrypt checks of 0.25 s read as one of 1.000 s, fitted
/// to the wrong cost, and a CPU gap that never happened).
/// A Python program that spins 0.3 s of CPU `times` times, printing a line after
/// each: a real process with known CPU gaps to trace.
fn spin_program(times: usize) -> String {
    format!(
        "import time\n\
         for _ in range({times}):\n\
         \x20   end = time.monotonic() + 0.3\n\
         \x20   while time.monotonic() < end:\n\
         \x20       pass\n\
         \x20   print(flush=True)\n"
    )
}

/// `strace -Z` (`--failed-only`) prints only the calls that failed: the time between
/// two of them holds the hidden successful calls, here 0.3 s sleeps, which were read
/// as CPU gaps (audit of the strace variations, F5).
#[test]
fn a_trace_of_failed_calls_only_measures_no_gap_and_says_so() {
    if !util::server_test_enabled(
        "a_trace_of_failed_calls_only_measures_no_gap_and_says_so",
        &["strace", "python3"],
        "strace python3",
    ) {
        return;
    }
    let dir = util::tempdir();
    let program = "import os, time\n\
        for i in range(6):\n\
        \x20   os.path.exists('/nonexistent/tlsgap-%d' % i)\n\
        \x20   time.sleep(0.3)\n";
    for (name, flags) in [("trace-Z", &["-Z"][..]), ("trace-all", &[][..])] {
        let o = std::process::Command::new("strace")
            .args(["-f", "-tt"])
            .args(flags)
            .arg("-o")
            .arg(dir.path().join(name))
            .args(["python3", "-c", program])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let failed = std::fs::read_to_string(dir.path().join("trace-Z")).unwrap();
    assert!(failed.contains("/nonexistent/tlsgap-5"), "{failed}");
    let only = gaps_json(dir.path(), &["trace-Z".to_string()]);
    assert!(list(&only, "gaps").is_empty(), "-Z: {only}");
    let notes = only["notes"].to_string();
    assert!(notes.contains("trace-Z: every one of its"), "{notes}");
    assert!(notes.contains("strace -Z"), "{notes}");
    let all = gaps_json(dir.path(), &["trace-all".to_string()]);
    assert!(!all["notes"].to_string().contains("-Z"), "{all}");
}

/// One process traced without `-f` (`strace -tt -o trace -p PID` of one worker): its
/// lines carry no PID. The table shows `pid ?`, not `pid 0` (the kernel's idle task;
/// strace audit F7); JSON keeps 0.
#[test]
fn a_trace_without_pids_shows_no_pid_in_the_table() {
    if !util::server_test_enabled(
        "a_trace_without_pids_shows_no_pid_in_the_table",
        &["strace", "python3"],
        "strace python3",
    ) {
        return;
    }
    let dir = util::tempdir();
    let program = spin_program(2);
    let o = std::process::Command::new("strace")
        .args(["-tt", "-o"])
        .arg(dir.path().join("trace"))
        .args(["python3", "-c", program.as_str()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v = gaps_json(dir.path(), &["trace".to_string()]);
    // The first spin is a gap; the second, after a write to the pipe, may be read as
    // blocked in that write (no -T).
    let spins = list(&v, "gaps");
    assert!(!spins.is_empty(), "{v}");
    assert!(spins.iter().all(|g| g["pid"] == 0), "{v}");
    let o = util::tlsgap()
        .current_dir(dir.path())
        .args(["gaps", "--min-gap", "0.1", "trace"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = util::stdout(&o);
    assert!(text.contains("  pid ?"), "{text}");
    assert!(!text.contains("pid 0"), "{text}");
}

#[test]
fn whole_second_stamps_measure_no_gap_and_say_so() {
    if !util::server_test_enabled(
        "whole_second_stamps_measure_no_gap_and_say_so",
        &["strace", "python3"],
        "strace python3",
    ) {
        return;
    }
    let dir = util::tempdir();
    let program = spin_program(3);
    for stamps in ["-tt", "-t"] {
        let o = std::process::Command::new("strace")
            .args(["-f", stamps, "-T", "-o"])
            .arg(dir.path().join(format!("trace{stamps}")))
            .args(["python3", "-c", program.as_str()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let fine = gaps_json(dir.path(), &["trace-tt".to_string()]);
    let near = list(&fine, "gaps")
        .iter()
        .filter(|g| (0.25..0.6).contains(&f(g, "seconds")))
        .count();
    assert!(near >= 3, "-tt: {fine}");
    let coarse = gaps_json(dir.path(), &["trace-t".to_string()]);
    assert!(list(&coarse, "gaps").is_empty(), "-t: {coarse}");
    assert!(list(&coarse, "blocked").is_empty(), "-t: {coarse}");
    let notes = coarse["notes"].to_string();
    assert!(
        notes.contains("trace-t: its stamps are whole seconds"),
        "{notes}"
    );
}
