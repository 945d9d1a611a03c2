//! `tlsgap auth` on real evidence: the checked-in Apache run of
//! `testdata/strace/real/apache-ff` (bcrypt cost 12 and {SHA} users, traced), and a
//! fresh run of `scripts/real-auth.py` (six users: {SHA}, MD5, crypt, bcrypt 5/10/12;
//! pages with assets; wrong passwords; traced workers) made during the test.

use std::path::Path;

use serde_json::Value;

use crate::util::{self, assert_code, json};

/// A run directory's `manifest.json` (what the script that made it knows).
fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn auth(dir: &Path, args: &[&str]) -> Value {
    let o = util::tlsgap()
        .current_dir(dir)
        .args(["auth", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = String::from_utf8(o.stdout.clone()).unwrap();
    assert_no_secrets(dir, &text);
    json(&o)
}

/// No hash, salt or Authorization value of the htpasswd file in `dir` appears.
fn assert_no_secrets(dir: &Path, text: &str) {
    assert!(!text.contains("Authorization"), "Authorization in output");
    assert!(!text.contains("Basic "), "a Basic credential in output");
    for name in ["htpasswd", "htpasswd.users"] {
        let Ok(file) = std::fs::read_to_string(dir.join(name)) else {
            continue;
        };
        for line in file.lines() {
            let Some((_, hash)) = line.split_once(':') else {
                continue;
            };
            assert!(!text.contains(hash), "a hash reached the output");
            // The salt and checksum parts of modular-crypt hashes.
            for part in hash.split('$').filter(|p| p.len() >= 8) {
                assert!(
                    !text.contains(part),
                    "part of a hash reached the output: {part}"
                );
            }
            if let Some(b64) = hash.strip_prefix("{SHA}") {
                assert!(!text.contains(b64), "a {{SHA}} hash reached the output");
            }
        }
    }
}

fn users(v: &Value) -> Vec<String> {
    v["users"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["user"].as_str().unwrap().to_string())
        .collect()
}

fn user<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["users"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["user"] == name)
        .unwrap_or_else(|| panic!("no user {name} in {v}"))
}

fn log_format(dir: &Path, conf: &str) -> String {
    let conf = std::fs::read_to_string(dir.join(conf)).unwrap();
    conf.lines()
        .find(|l| l.trim_start().starts_with("LogFormat"))
        .unwrap()
        .trim()
        .to_string()
}

/// Observed gaps and extra latency agree with the verification time measured outside
/// Apache: within half of it or 0.1 s (a loaded 2-core machine stretches user time).
fn within(observed: f64, measured: f64) -> bool {
    (observed - measured).abs() <= (0.5 * measured).max(0.1)
}

#[test]
fn checked_in_apache_run_each_evidence_alone_and_together() {
    let dir = util::repo_root().join("testdata/strace/real");
    let manifest: Value = manifest(&dir);
    let verify = manifest["bcrypt"]["verify_seconds"].as_f64().unwrap();
    let run = dir.join("apache-ff");
    let fmt = log_format(&run, "httpd.conf");
    let traces = "trace.*";

    // htpasswd alone: the scheme decides.
    let v = auth(&run, &["--htpasswd", "htpasswd"]);
    assert_eq!(users(&v), ["slowuser", "shauser"]);
    let slow = user(&v, "slowuser");
    assert_eq!(slow["htpasswd"]["scheme"], "bcrypt");
    assert_eq!(slow["htpasswd"]["cost"], 12);
    assert_eq!(slow["htpasswd"]["flagged"], true);
    assert_eq!(user(&v, "shauser")["htpasswd"]["flagged"], false);

    // The log alone (with %D): the extra latency decides.
    let v = auth(&run, &["--log", "access.log", "--log-format", &fmt]);
    assert_eq!(users(&v), ["slowuser", "shauser"]);
    let slow = user(&v, "slowuser");
    assert_eq!(slow["requests"], 6, "4 good + 2 wrong passwords");
    assert_eq!(slow["requests_401"], 2);
    assert!(
        within(slow["extra_latency_seconds"].as_f64().unwrap(), verify),
        "{slow}"
    );

    // Traces alone: the gaps, tied to users by the workers' log writes.
    let v = auth(&run, &["--traces", traces]);
    assert_eq!(users(&v), ["slowuser"]);
    let gaps = &user(&v, "slowuser")["observed_gaps"];
    assert_eq!(gaps["count"], 6);
    assert!(
        within(gaps["p50_seconds"].as_f64().unwrap(), verify),
        "{gaps}"
    );
    assert_eq!(v["attribution"]["by_log_write"], 6);

    // Everything: PID and time first.
    let v = auth(
        &run,
        &[
            "--htpasswd",
            "htpasswd",
            "--log",
            "access.log",
            "--log-format",
            &fmt,
            "--traces",
            traces,
        ],
    );
    assert_eq!(users(&v), ["slowuser", "shauser"]);
    assert_eq!(v["attribution"]["by_pid_and_time"], 6);
    assert_eq!(v["attribution"]["unattributed"], 0);
    let slow = user(&v, "slowuser");
    // The prediction is measured now, on a machine that may be busy with the other
    // tests: only that the comparison is made is checked here; the observed figures
    // are checked against the verification time measured when the trace was taken.
    assert!(slow["gaps_match_prediction"].is_boolean(), "{slow}");
    assert!(slow["latency_matches_prediction"].is_boolean(), "{slow}");
    let gap = slow["observed_gaps"]["p50_seconds"].as_f64().unwrap();
    assert!(within(gap, verify), "{gap} vs {verify}");
    assert_eq!(
        v["htpasswd_users_without_gaps"],
        serde_json::json!(["shauser"])
    );
    // Table and CSV carry no secret either.
    for format in ["table", "csv"] {
        let o = util::tlsgap()
            .current_dir(&run)
            .args([
                "auth",
                "--format",
                format,
                "--htpasswd",
                "htpasswd",
                "--traces",
                traces,
            ])
            .output()
            .unwrap();
        assert_code(&o, 0);
        assert_no_secrets(&run, &util::stdout(&o));
    }
}

#[test]
fn needs_some_evidence_and_names_a_missing_file() {
    let o = util::tlsgap().args(["auth"]).output().unwrap();
    assert_code(&o, 2);
    let o = util::tlsgap()
        .args(["auth", "--htpasswd", "/no/such/htpasswd"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(
        util::stderr(&o).contains("/no/such/htpasswd"),
        "{}",
        util::stderr(&o)
    );
}

/// An htpasswd file as LDAP tools leave them: `{SSHA}` (salted SHA-1, slappasswd's
/// default) next to entries `htpasswd` wrote. Apache does not know the prefix and
/// hands it to crypt(3), which rejects it: the user is reported as unable to log in,
/// not as plain text, and the salted hash never reaches the output.
#[test]
fn ldap_prefixes_are_unsupported_not_plain() {
    let dir = util::tempdir();
    let htp = dir.path().join("htpasswd");
    std::fs::write(
        &htp,
        "ldapuser:{SSHA}iHFmyA0BGrNuGz09DsEyLwE+Hy8RIjNE\n\
         olduser:{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=\n",
    )
    .unwrap();
    let v = auth(dir.path(), &["--htpasswd", "htpasswd"]);
    let u = user(&v, "ldapuser");
    assert_eq!(u["htpasswd"]["scheme"], "unsupported", "{u}");
    assert!(u["htpasswd"]["verify_seconds"].is_null(), "{u}");
    let advice = u["htpasswd"]["advice"].as_str().unwrap();
    assert!(advice.contains("crypt(3), which rejects it"), "{advice}");
    assert_eq!(user(&v, "olduser")["htpasswd"]["scheme"], "sha1");
    assert!(!v.to_string().contains("iHFmyA0BGrNuGz09"), "{v}");
}

/// The six-user scenario of `scripts/real-auth.py` in `dir`: every evidence kind alone
/// and all together rank the expensive users (bcrypt 12, then 10) first, in order, and
/// the cheap ones after them; observed gaps and extra latency are within tolerance of
/// the verification times measured outside Apache.
fn check_real_auth(dir: &Path) {
    let m: Value = manifest(dir);
    let ranked: Vec<String> = m["expected_ranking"]["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect();
    let cheap: std::collections::BTreeSet<String> = m["expected_ranking"]["cheap"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect();
    let verify = |u: &str| m["users"][u]["verify_seconds"].as_f64().unwrap();
    let fmt = m["log_format"].as_str().unwrap();
    let traces = "traces/trace.*";
    let check_order = |v: &Value, what: &str, with_cheap: bool| {
        let got = users(v);
        assert_eq!(got[..ranked.len()], ranked[..], "{what}: ranking {got:?}");
        if with_cheap {
            let rest: std::collections::BTreeSet<String> =
                got[ranked.len()..].iter().cloned().collect();
            assert_eq!(rest, cheap, "{what}: the cheap users");
        }
    };
    let v = auth(dir, &["--htpasswd", "htpasswd"]);
    check_order(&v, "htpasswd alone", true);
    // tlsgap times its own verification of the hash, the run timed `htpasswd -vb`:
    // two timings of one cost, on a machine whose speed moves between days (bcrypt
    // cost 10 took 82 ms in the checked-in run, under 50 ms on 2026-11-28). A user
    // within 1.5x of the 50 ms threshold may fall on either side of it; the others
    // must be judged as the run measured them.
    let mut judged = 0;
    for u in &ranked {
        let s = verify(u);
        if s > 0.05 / 1.5 && s < 0.05 * 1.5 {
            continue;
        }
        assert_eq!(user(&v, u)["htpasswd"]["flagged"], s > 0.05, "{u}: {s} s");
        judged += 1;
    }
    assert!(judged > 0, "no user far from the threshold: {ranked:?}");
    let v = auth(dir, &["--log", "access.log", "--log-format", fmt]);
    check_order(&v, "log alone", true);
    for u in &ranked {
        let row = user(&v, u);
        assert_eq!(row["requests"], m["users"][u]["requests"]["total"], "{u}");
        assert_eq!(
            row["requests_401"], m["users"][u]["requests"]["unauthorized"],
            "{u}"
        );
        let extra = row["extra_latency_seconds"].as_f64().unwrap();
        assert!(
            within(extra, verify(u)),
            "{u}: extra {extra} vs {}",
            verify(u)
        );
    }
    let v = auth(dir, &["--traces", traces]);
    check_order(&v, "traces alone", false);
    for u in &ranked {
        let g = &user(&v, u)["observed_gaps"];
        // One gap per request; a verification that a call interrupts (the allocator's
        // mmap or brk inside the hash) shows as two gaps, so allow a few more.
        let (count, requests) = (
            g["count"].as_u64().unwrap(),
            m["users"][u]["requests"]["total"].as_u64().unwrap(),
        );
        assert!(
            (requests..=requests + requests / 4).contains(&count),
            "{u}: {count} gaps for {requests} requests"
        );
        let p50 = g["p50_seconds"].as_f64().unwrap();
        assert!(within(p50, verify(u)), "{u}: gap {p50} vs {}", verify(u));
    }
    let v = auth(
        dir,
        &[
            "--htpasswd",
            "htpasswd",
            "--log",
            "access.log",
            "--log-format",
            fmt,
            "--traces",
            traces,
        ],
    );
    check_order(&v, "all evidence", true);
    assert_eq!(v["attribution"]["unattributed"], 0, "{}", v["attribution"]);
    for u in &ranked {
        let row = user(&v, u);
        assert_eq!(
            row["evidence"],
            serde_json::json!(["htpasswd", "log", "traces"])
        );
    }
}

#[test]
fn checked_in_six_user_run() {
    check_real_auth(&util::repo_root().join("testdata/auth/real"));
}

#[test]
fn fresh_six_user_run_from_real_apache() {
    if !util::server_test_enabled(
        "fresh_six_user_run_from_real_apache",
        &[
            "strace", "apache2", "htpasswd", "curl", "openssl", "python3",
        ],
        "strace apache2 apache2-utils curl openssl python3",
    ) {
        return;
    }
    let dir = util::tempdir();
    let out = dir.path().join("auth");
    util::run_script("real-auth.py", &[out.as_os_str()]);
    check_real_auth(&out);
}

/// `-tt` traces carry no date: it comes from the access log, in strace's zone
/// (`--trace-tz`, default the log's offset). A wrong zone moves every gap out of its
/// request's window, so only the workers' own log writes can tie them to users.
#[test]
fn tt_traces_take_their_date_from_the_log() {
    let run = util::repo_root().join("testdata/strace/real/apache-f-stderr");
    let fmt = log_format(&run, "httpd.conf");
    let base = [
        "--htpasswd",
        "htpasswd",
        "--log",
        "access.log",
        "--log-format",
        &fmt,
    ];
    let v = auth(&run, &[&base[..], &["--traces", "trace"]].concat());
    assert_eq!(
        v["attribution"]["by_pid_and_time"], 2,
        "{}",
        v["attribution"]
    );
    assert_eq!(user(&v, "slowuser")["observed_gaps"]["count"], 2);
    let v = auth(
        &run,
        &[&base[..], &["--trace-tz", "+05:00", "--traces", "trace"]].concat(),
    );
    assert_eq!(
        v["attribution"]["by_pid_and_time"], 0,
        "{}",
        v["attribution"]
    );
    assert_eq!(v["attribution"]["by_log_write"], 2, "{}", v["attribution"]);
    let v = auth(&run, &["--traces", "trace"]);
    assert!(
        v["notes"].to_string().contains("no date"),
        "the missing date is said: {}",
        v["notes"]
    );
}

/// CSV and Parquet of the ranking: the same rows, read back with pyarrow.
#[test]
fn ranking_as_csv_and_parquet() {
    let run = util::repo_root().join("testdata/auth/real");
    let out = util::tempdir();
    let pq = out.path().join("auth.parquet");
    let o = util::tlsgap()
        .current_dir(&run)
        .args(["auth", "--htpasswd", "htpasswd", "--format", "csv"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let csv = util::stdout(&o);
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("rank,user,cost_per_request_seconds,"),
        "{header}"
    );
    assert_eq!(csv.lines().count(), 7, "header + six users");
    assert_no_secrets(&run, &csv);
    let o = util::tlsgap()
        .current_dir(&run)
        .args([
            "auth",
            "--htpasswd",
            "htpasswd",
            "--format",
            "parquet",
            "-o",
        ])
        .arg(&pq)
        .output()
        .unwrap();
    assert_code(&o, 0);
    if !util::python_ready(
        "ranking_as_csv_and_parquet",
        &["pyarrow.parquet"],
        "pyarrow",
        "reading the auth Parquet back",
    ) {
        return;
    }
    let o = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, pyarrow.parquet as pq; t = pq.read_table(sys.argv[1]); \
             print(t.num_rows, t.column('user').to_pylist()[0], t.schema.field('rank').type)",
        ])
        .arg(&pq)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", util::stderr(&o));
    assert_eq!(util::stdout(&o).trim(), "6 bc12user int64");
}

#[test]
fn log_window_applies_to_auth() {
    let run = util::repo_root().join("testdata/auth/real");
    let m: Value = manifest(&run);
    let fmt = m["log_format"].as_str().unwrap();
    let args = ["--log", "access.log", "--log-format", fmt];
    let all = auth(&run, &args);
    assert_eq!(users(&all).len(), 6);
    let none = auth(
        &run,
        &[
            &args[..],
            &["--since", "2000-01-01", "--until", "2000-01-02"],
        ]
        .concat(),
    );
    assert!(users(&none).is_empty(), "{none}");
}

/// A trace on standard input is read once: the gaps and the log lines the workers
/// wrote come from the same pass (reading `-` twice used to lose the second pass, so
/// no gap was tied to a user).
#[test]
fn traces_on_stdin_are_read_once() {
    let dir = util::repo_root().join("testdata/strace/real/apache-f-stderr");
    let run = |stdin: Option<&[u8]>| {
        let mut cmd = util::tlsgap();
        cmd.current_dir(&dir).args([
            "auth",
            "--format",
            "json",
            "--bcrypt-speed",
            "0.02",
            "--traces",
        ]);
        match stdin {
            Some(bytes) => cmd.arg("-").write_stdin(bytes.to_vec()),
            None => cmd.arg("trace"),
        };
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}", util::stderr(&o));
        util::json(&o)
    };
    let from_file = run(None);
    let from_stdin = run(Some(&std::fs::read(dir.join("trace")).unwrap()));
    assert_eq!(from_file["attribution"]["by_log_write"], 2, "{from_file}");
    assert_eq!(from_stdin["attribution"], from_file["attribution"]);
    assert_eq!(from_stdin["users"], from_file["users"]);
}

/// The classic capture, for real: Apache (prefork here) with Basic auth over bcrypt users of
/// costs 5, 10, 12 and 13 (and {SHA}, MD5, crypt users; a 2-letter name and a name too
/// long for strace's 32 bytes; an unknown user; an IPv6 client on ::1), `strace -tt -ff
/// -o trace -p ...` attached to its running workers with strace's default 32-byte
/// strings, and a plain combinedssl access log (no %P, no %D). Every slow gap (bcrypt
/// cost >= 10, wrong passwords included) is tied to its user — through the worker's own
/// 32-byte log write, or, for the long name the write cuts, through the access-log line
/// that write starts — none to a wrong user; the per-user median gap matches the
/// verification time measured against the same server (the user's extra request time
/// in Apache's own %D, from a ground-truth log tlsgap is not given); the advice is the
/// same on a second run.
#[test]
fn classic_capture_ties_every_slow_gap_to_its_user() {
    classic_capture(
        "classic_capture_ties_every_slow_gap_to_its_user",
        "prefork",
        Strace::TtPerThread,
    );
}

/// The same with Apache's event MPM: one process serves requests in threads, strace
/// `-ff` writes a file per thread, and attribution follows the thread.
#[test]
fn classic_capture_of_the_event_mpm_follows_threads() {
    classic_capture(
        "classic_capture_of_the_event_mpm_follows_threads",
        "event",
        Strace::TtPerThread,
    );
}

/// The event MPM traced the other way operators do it, `strace -f -tt -o trace -p ...`:
/// every thread in one file, each line led by its thread's ID, and a call that
/// another thread's line interrupts split into `<unfinished ...>` and `<... resumed>`.
#[test]
fn classic_capture_of_the_event_mpm_in_one_file() {
    classic_capture(
        "classic_capture_of_the_event_mpm_in_one_file",
        "event",
        Strace::TtOneFile,
    );
}

/// The same with `strace -ttt -T -y` and a log with %D (but no %P): requests of
/// different users overlap in time; the gaps still go to the right users.
#[test]
fn classic_capture_with_ttt_traces_and_a_duration_log() {
    classic_capture(
        "classic_capture_with_ttt_traces_and_a_duration_log",
        "prefork",
        Strace::TttPerThread,
    );
}

/// Per user: the median over their 200s of (%D − the median %D of anonymous requests
/// for the same kind of file), seconds: the password check as that server paid it.
fn server_verification(m: &Value) -> std::collections::BTreeMap<String, f64> {
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let reqs = m["requests"].as_array().unwrap();
    let dur = |r: &Value| r["log"]["duration_us"].as_f64().unwrap() / 1e6;
    let mut public = std::collections::BTreeMap::new();
    for kind in ["html", "css", "js", "png"] {
        let v: Vec<f64> = reqs
            .iter()
            .filter(|r| r["user"].is_null() && r["kind"] == kind)
            .map(dur)
            .collect();
        public.insert(kind, median(v));
    }
    let mut out = std::collections::BTreeMap::new();
    for name in m["users"].as_object().unwrap().keys() {
        let v: Vec<f64> = reqs
            .iter()
            .filter(|r| r["user"] == name.as_str() && r["status"] == 200)
            .map(|r| dur(r) - public[r["kind"].as_str().unwrap()])
            .collect();
        out.insert(name.clone(), median(v));
    }
    out
}

/// A live capture's directory, kept (and named on standard error) when the test fails:
/// these tests time real Apache workers, and a rare failure under load is worth a look
/// at the very traces and log that caused it.
struct KeepOnFailure(Option<tempfile::TempDir>);

impl KeepOnFailure {
    fn path(&self) -> &Path {
        self.0.as_ref().map_or(Path::new("."), |d| d.path())
    }
}

impl Drop for KeepOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Some(d) = self.0.take() {
                eprintln!("the capture is kept for a look: {}", d.keep().display());
            }
        }
    }
}

/// How a classic capture is traced.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strace {
    /// `strace -ff -tt`: a file per thread.
    TtPerThread,
    /// `strace -ff -ttt -T -y`, and `%D` in the log.
    TttPerThread,
    /// `strace -f -tt`: one file.
    TtOneFile,
}

fn classic_capture(test: &str, mpm: &str, strace: Strace) {
    let ttt = strace == Strace::TttPerThread;
    if !util::server_test_enabled(
        test,
        &[
            "strace", "apache2", "htpasswd", "curl", "openssl", "python3",
        ],
        "strace apache2 apache2-utils curl openssl python3",
    ) {
        return;
    }
    let dir = KeepOnFailure(Some(util::tempdir()));
    let out = dir.path().join("classic");
    let mut script = vec!["--classic", "--mpm", mpm, "--apache-mode", "attach"];
    match strace {
        Strace::TtPerThread => {}
        Strace::TttPerThread => script.push("--ttt"),
        Strace::TtOneFile => script.push("--one-file"),
    }
    let mut script: Vec<&std::ffi::OsStr> = script.iter().map(std::ffi::OsStr::new).collect();
    script.push(out.as_os_str());
    util::run_script("real-auth.py", &script);
    let m: Value = manifest(&out);
    assert_eq!(m["apache"]["mpm"], mpm);
    assert_eq!(m["strace"]["string_limit"], 32);
    assert_eq!(m["trace_timestamps"], if ttt { "ttt" } else { "tt" });
    let one_file = strace == Strace::TtOneFile;
    assert_eq!(
        m["strace"]["output"],
        if one_file { "one-file" } else { "per-pid" }
    );
    // The operator's LogFormat, as pasted from httpd.conf; the -ttt run's log
    // (combinedssl + %D) is left to auto-detection.
    let log_format = format!(
        "LogFormat \"{}\" combinedssl",
        m["log_format"].as_str().unwrap().replace('"', "\\\"")
    );
    let traces: Vec<String> = m["strace"]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    let traces: Vec<&str> = traces.iter().map(String::as_str).collect();
    let mut logs = vec!["--log", "access.log"];
    if !ttt {
        logs.extend(["--log-format", log_format.as_str()]);
    }
    let htpasswd = ["--htpasswd", "htpasswd"];
    let with = |htp: bool| -> Vec<&str> {
        let mut a = logs.clone();
        if htp {
            a.extend(htpasswd);
        }
        a.push("--traces");
        a.extend(traces.iter().copied());
        a
    };
    let args = with(true);
    let v = auth(&out, &args);
    // The traces read one at a time and several at once: the same report (without the
    // htpasswd file, whose verification times are measured at each run).
    let jobs = |n: &'static str| {
        let mut a = with(false);
        a.extend(["--bcrypt-speed", "0.02", "-j", n]);
        auth(&out, &a)
    };
    assert_eq!(jobs("1"), jobs("4"), "-j 1 against -j 4");
    let a = &v["attribution"];
    assert_eq!(a["user_cut_off"], 0, "{v}");
    assert_eq!(a["by_pid_and_time"], 0, "no %P in the log: {v}");
    // The long name is cut in every one of its writes: its line in the access log
    // names it.
    let long = "alexandra.longname@example.org";
    assert_eq!(
        a["by_log_line"], m["users"][long]["requests"]["total"],
        "{v}"
    );
    // Every slow request's gap is tied (the per-user counts below). On a loaded machine
    // a scheduling delay right after the htpasswd read can also look like an auth gap;
    // with no log write of its own it must stay unattributed, never go to a user.
    assert!(a["unattributed"].as_u64().unwrap() <= 2, "{v}");
    let server = server_verification(&m);
    let mut slow_requests = 0;
    let mut fast_gaps = 0;
    for u in v["users"].as_array().unwrap() {
        let name = u["user"].as_str().unwrap();
        let gaps = &u["observed_gaps"];
        if name == "mallory" {
            // Unknown: Apache finds no entry and verifies nothing.
            assert!(gaps.is_null(), "{u}");
            assert_eq!(u["requests_401"], 2, "{u}");
            assert!(
                v["users_not_in_htpasswd"]
                    .as_array()
                    .unwrap()
                    .contains(&"mallory".into()),
                "{v}"
            );
            continue;
        }
        let truth = &m["users"][name];
        if truth["cost"].as_u64().is_some_and(|c| c >= 10) {
            // Every request of the user, 401s included, paid one verification.
            assert_eq!(gaps["count"], truth["requests"]["total"], "{name}: {u}");
            // The status comes from the write's access-log line: the write's length
            // tells it from the user's next line, even one that says the same second
            // of %t (a wrong password is logged within 50 ms of the retry's start).
            assert_eq!(
                u["observed_gaps_401"], truth["requests"]["unauthorized"],
                "{name}: {u}"
            );
            slow_requests += truth["requests"]["total"].as_u64().unwrap();
            let want = server[name];
            let got = gaps["p50_seconds"].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 0.3 * want,
                "{name}: median gap {got} s, verification against the server {want} s"
            );
            // Predictions are on the server's time, calibrated on these gaps.
            let predicted = u["htpasswd"]["server_seconds"].as_f64().unwrap();
            assert!(
                (predicted - want).abs() <= 0.3 * want,
                "{name}: predicted {predicted} s, server {want} s"
            );
            // A page view starts at each page request (wrong passwords included).
            let pages = m["requests"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["user"] == name && r["kind"] == "html")
                .count();
            assert_eq!(u["page_views"], pages, "{name}: {u}");
        } else {
            // Fast schemes leave no gap of 10 ms. On a loaded machine the scheduler
            // can still stop a worker right after its htpasswd read: a real wait in
            // that user's request, tied to it by its log write, but rare.
            assert!(
                gaps.is_null() || gaps["count"].as_u64() <= Some(2),
                "{name}: {u}"
            );
            fast_gaps += gaps["count"].as_u64().unwrap_or(0);
        }
    }
    assert_eq!(v["calibration"]["basis"], "trace_gaps", "{v}");
    // The ::1 client's requests are among them (bc12user's second round).
    if m["ipv6"] == true {
        let log = std::fs::read_to_string(out.join("access.log")).unwrap();
        assert!(
            log.lines().any(|l| l.starts_with("::1 - bc12user [")),
            "{log}"
        );
    }
    // The gaps themselves: no slow gap wears the scheme of the file's first entry
    // ({SHA}), which is all a 32-byte read() of the htpasswd file shows; each says what
    // its duration fits.
    let mut g = vec!["gaps", "--format", "json", "--min-gap", "0.03"];
    g.extend(traces.iter().copied());
    let gaps: Value = serde_json::from_str(&util::stdout_in(&out, &g)).unwrap();
    let auth_gaps: Vec<&Value> = gaps["gaps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["cause"] == "auth")
        .collect();
    assert!(
        auth_gaps.len() as u64 >= slow_requests
            && auth_gaps.len() as u64 <= slow_requests + fast_gaps + 2,
        "{} auth gaps for {slow_requests} slow requests: {gaps}",
        auth_gaps.len()
    );
    for g in auth_gaps {
        let detail = g["detail"].as_str().unwrap();
        assert!(detail.starts_with("verified entry not shown"), "{detail}");
        assert!(detail.contains("the duration fits bcrypt cost"), "{detail}");
    }
    // Without the htpasswd file the scheme is unknown: each slow user's gaps are said
    // to fit a bcrypt cost at this machine's speed, within one step of the real one.
    let b = auth(&out, &with(false));
    for u in b["users"].as_array().unwrap() {
        let name = u["user"].as_str().unwrap();
        let Some(cost) = m["users"][name]["cost"].as_i64().filter(|c| *c >= 10) else {
            continue;
        };
        let fits = u["gaps_fit_bcrypt_costs"].as_array().unwrap();
        let (lo, hi) = (fits[0].as_i64().unwrap(), fits[1].as_i64().unwrap());
        assert!(lo - 1 <= cost && cost <= hi + 1, "{name}: cost {cost}, {u}");
        assert!(
            u["gap_note"].as_str().unwrap().contains("scheme unknown"),
            "{u}"
        );
    }
    // Same input twice, same advice.
    let advice = |v: &Value| -> Vec<Value> {
        v["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                serde_json::json!([
                    u["user"],
                    u["htpasswd"]["flagged"],
                    u["htpasswd"]["suggested_cost"],
                    u["suggested_cost_per_page"],
                ])
            })
            .collect()
    };
    // (The bcrypt reference speed pinned: measured, a user near a boundary can read
    // one cost under a loaded machine and the next one a second later.)
    let mut pinned = args.clone();
    pinned.extend(["--bcrypt-speed", "0.05"]);
    // (Compared by user: users whose measured costs are a few µs apart may swap ranks.)
    let by_user = |v: &Value| {
        let mut a = advice(v);
        a.sort_by_key(|r| r[0].as_str().unwrap_or_default().to_string());
        a
    };
    let once = auth(&out, &pinned);
    let again = auth(&out, &pinned);
    assert_eq!(by_user(&again), by_user(&once));
    // Every output format, and no hash, salt or Authorization value in any of them.
    assert_no_secrets(&out, &v.to_string());
    for format in ["table", "csv"] {
        let o = util::tlsgap()
            .current_dir(&out)
            .args(["auth", "--format", format])
            .args(&args)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let text = util::stdout(&o);
        if format == "table" {
            for line in text.lines() {
                assert!(line.chars().count() <= 80, "wider than 80 columns: {line}");
            }
        }
        assert_no_secrets(&out, &(text + &util::stderr(&o)));
    }
    let parquet = out.join("auth.parquet");
    let o = util::tlsgap()
        .current_dir(&out)
        .args(["auth", "--format", "parquet", "-o"])
        .arg(&parquet)
        .args(&args)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let bytes = std::fs::read(&parquet).unwrap();
    assert_no_secrets(&out, &String::from_utf8_lossy(&bytes));
}

/// `--log` and `--traces` take several values: a trace after `--log` (a shell glob)
/// or a log after `--traces` is read as what it is, with a warning, and the answer is
/// the same as with the files in their places.
#[test]
fn logs_and_traces_in_each_others_place_are_read_as_what_they_are() {
    let run = util::repo_root().join("testdata/auth/real");
    let m: Value = manifest(&run);
    let fmt = m["log_format"].as_str().unwrap();
    let traces = [
        "traces/trace.5693",
        "traces/trace.5694",
        "traces/trace.5695",
    ];
    let go = |args: &[&str]| {
        let o = util::tlsgap()
            .current_dir(&run)
            .args(["auth", "--format", "json", "--log-format", fmt])
            .args(args)
            .output()
            .unwrap();
        assert_code(&o, 0);
        (json(&o), util::stderr(&o))
    };
    let mut right = vec!["--log", "access.log", "--traces"];
    right.extend(traces);
    let mut swapped = vec!["--log", "access.log"];
    swapped.extend(traces);
    let mut swapped_back = vec!["--traces"];
    swapped_back.extend(traces);
    swapped_back.push("access.log");
    let (want, quiet) = go(&right);
    assert!(!quiet.contains("warning"), "{quiet}");
    for args in [swapped, swapped_back] {
        let (got, err) = go(&args);
        assert!(err.contains("warning: "), "{args:?}: {err}");
        assert_eq!(got["attribution"], want["attribution"], "{args:?}");
        assert_eq!(users(&got), users(&want), "{args:?}");
    }
}

/// htpasswd as real Apache reads it (`scripts/real-htpasswd.py`): one user per scheme,
/// made by `htpasswd`, `openssl passwd`, libxcrypt and by hand for the LDAP-style
/// `{SSHA}`-family prefixes, each tried against a real Apache with the right password.
/// tlsgap says a user can log in (a scheme Apache verifies) exactly when Apache let the
/// right password in; `{SSHA}`, `{SMD5}`, `{MD5}`, `{CRYPT}`, a lower-case `{sha}` and
/// plain text are refused by Apache on Linux and are `unsupported`/`plain` here; a
/// `user:hash:comment` line works in both.
#[test]
fn htpasswd_schemes_as_real_apache_verifies_them() {
    if !util::server_test_enabled(
        "htpasswd_schemes_as_real_apache_verifies_them",
        &["apache2", "htpasswd", "openssl", "python3"],
        "apache2 apache2-utils openssl python3",
    ) {
        return;
    }
    let dir = util::tempdir();
    let out = dir.path().join("rh");
    util::run_script("real-htpasswd.py", &["--out".as_ref(), out.as_os_str()]);
    let truth: Value =
        serde_json::from_slice(&std::fs::read(out.join("truth.json")).unwrap()).unwrap();
    let o = util::tlsgap()
        .args([
            "auth",
            "--format",
            "json",
            "--bcrypt-speed",
            "0.01",
            "--htpasswd",
        ])
        .arg(out.join("htpasswd"))
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    let scheme_of = |user: &str| -> String {
        v["users"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["user"] == user)
            .unwrap_or_else(|| panic!("{user} not in tlsgap's users"))["htpasswd"]["scheme"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut wrong = Vec::new();
    let mut refused = 0;
    for u in truth["users"].as_array().unwrap() {
        let user = u["user"].as_str().unwrap();
        if u["scheme_label"] == "sha-wrong-hash" {
            continue; // the control: a valid {SHA} of another password
        }
        let apache = u["right_password_status"] == 200;
        let scheme = scheme_of(user);
        let ours = scheme != "unsupported" && scheme != "plain";
        refused += usize::from(!apache);
        if apache != ours {
            wrong.push(format!(
                "{user} ({}): Apache {}, tlsgap scheme {scheme}",
                u["scheme_label"], u["right_password_status"]
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(refused >= 6, "{refused}: the LDAP prefixes were not tried");
    // No hash reaches the output.
    let text = util::stdout(&o);
    for line in std::fs::read_to_string(out.join("htpasswd"))
        .unwrap()
        .lines()
    {
        if let Some((_, hash)) = line.split_once(':') {
            let hash = hash.split(':').next().unwrap();
            if hash.len() > 12 {
                assert!(!text.contains(hash), "a hash leaked: {hash}");
            }
        }
    }
}

/// `per_day` follows `--tz` when it is given (the checked-in run's requests are at
/// 01:09 UTC on 2026-11-22: the evening before in New York), else each line's offset.
#[test]
fn per_day_follows_tz() {
    let dir = util::repo_root().join("testdata/auth/real");
    let m: Value = manifest(&dir);
    let fmt = m["log_format"].as_str().unwrap();
    let days = |extra: &[&str]| -> Vec<String> {
        let mut args = vec![
            "--htpasswd",
            "htpasswd",
            "--log",
            "access.log",
            "--log-format",
            fmt,
        ];
        args.extend(extra);
        let v = auth(&dir, &args);
        v["per_day"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["date"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(days(&[]), ["2026-11-22"]);
    assert_eq!(days(&["--tz", "America/New_York"]), ["2026-11-21"]);
    assert_eq!(days(&["--tz", "+02:00"]), ["2026-11-22"]);
}

/// Reality from the other server: a real nginx worker with `auth_basic` against an
/// htpasswd file the real `htpasswd` made (bcrypt cost 10 for `bcuser` and for
/// `ops@example.org`, {SHA} for `shauser`; nginx checks them with the C library's
/// `crypt`), strace attached to the worker the way operators do it (`strace -tt -o
/// trace -p PID`, default `-s 32`), curl as the client, wrong passwords and an unknown
/// user among the requests. nginx reopens the htpasswd file for every request; each
/// bcrypt request's gap goes to its user through the worker's log write, with the
/// status of its line; the {SHA} and unknown users pay nothing.
/// `htpasswd` in `d` holding `users` (name, password, `htpasswd` flags), made by the
/// real `htpasswd`, and a page `www/index.html`.
fn htpasswd_and_page(d: &Path, users: &[(&str, &str, &[&str])]) {
    use std::process::{Command, Stdio};
    let htpasswd = util::find_program("htpasswd").unwrap();
    for (i, (user, pw, flags)) in users.iter().enumerate() {
        let mut c = Command::new(&htpasswd);
        if i == 0 {
            c.arg("-c");
        }
        let st = c
            .args(*flags)
            .arg("-b")
            .arg(d.join("htpasswd"))
            .args([user, pw])
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "htpasswd for {user}");
    }
    std::fs::create_dir(d.join("www")).unwrap();
    std::fs::write(d.join("www").join("index.html"), "<p>private</p>\n").unwrap();
}

/// One nginx worker serving `d/www` behind `auth_basic` with `d/htpasswd`, logging
/// `combined` to `d/access.log` in UTC, traced the way an operator does (`strace -tt
/// -p`), strace in the zone `strace_tz` when given.
fn traced_nginx_with_auth(d: &Path, strace_tz: Option<&str>) -> util::TracedNginx {
    let conf = |port| {
        format!(
            "daemon off; worker_processes 1; pid {d}/nginx.pid; error_log {d}/error.log;\n\
             events {{ worker_connections 16; }}\n\
             http {{ access_log {d}/access.log combined; client_body_temp_path {d}; \
             server {{ listen 127.0.0.1:{port}; root {d}/www; \
             location / {{ auth_basic \"private\"; auth_basic_user_file {d}/htpasswd; }} }} }}\n",
            d = d.display(),
        )
    };
    util::TracedNginx::start_in_zones(d, conf, strace_tz)
}

/// A real-nginx auth test's set-up: `d/htpasswd` with `users` and the traced nginx
/// ([`traced_nginx_with_auth`]); `None` when server tests are skipped. The directory
/// is kept when the test fails.
fn nginx_auth_setup(
    test: &str,
    users: &[(&str, &str, &[&str])],
    strace_tz: Option<&str>,
) -> Option<(KeepOnFailure, std::path::PathBuf, util::TracedNginx)> {
    if !util::server_test_enabled(
        test,
        &["nginx", "strace", "htpasswd", "curl"],
        "nginx strace apache2-utils curl",
    ) {
        return None;
    }
    let dir = KeepOnFailure(Some(util::tempdir()));
    let d = dir.path().to_path_buf();
    htpasswd_and_page(&d, users);
    let nginx = traced_nginx_with_auth(&d, strace_tz);
    Some((dir, d, nginx))
}

/// `tlsgap auth`'s evidence in a [`nginx_auth_setup`] directory.
const NGINX_AUTH_ARGS: [&str; 6] = [
    "--log",
    "access.log",
    "--htpasswd",
    "htpasswd",
    "--traces",
    "trace",
];

/// The status real curl gets for `url` with `user:pw`.
fn curl_status(url: &str, user: &str, pw: &str) -> String {
    let o = std::process::Command::new(util::find_program("curl").unwrap())
        .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "-u"])
        .arg(format!("{user}:{pw}"))
        .arg(url)
        .output()
        .unwrap();
    util::stdout(&o)
}

#[test]
fn real_nginx_auth_basic_gaps_go_to_their_users() {
    let Some((_dir, d, mut nginx)) = nginx_auth_setup(
        "real_nginx_auth_basic_gaps_go_to_their_users",
        &[
            ("bcuser", "correct horse", &["-B", "-C", "10"]),
            ("ops@example.org", "battery staple", &["-B", "-C", "10"]),
            ("shauser", "sha secret", &["-s"]),
        ],
        None,
    ) else {
        return;
    };
    let port = nginx.port;
    // (user, password, times, expected status)
    let plan: [(&str, &str, usize, &str); 7] = [
        ("bcuser", "correct horse", 3, "200"),
        ("bcuser", "wrong", 2, "401"),
        ("ops@example.org", "battery staple", 3, "200"),
        ("ops@example.org", "nope", 1, "401"),
        ("shauser", "sha secret", 3, "200"),
        ("shauser", "bad", 1, "401"),
        ("mallory", "guess", 2, "401"),
    ];
    for round in 0..2 {
        for (user, pw, times, want) in plan {
            for _ in 0..times {
                let url = format!("http://127.0.0.1:{port}/index.html?r={round}");
                assert_eq!(curl_status(&url, user, pw), want, "{user} {pw}");
            }
        }
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    nginx.stop();
    let v = auth(&d, &NGINX_AUTH_ARGS);
    let a = &v["attribution"];
    assert!(a["unattributed"].as_u64().unwrap() <= 1, "{v}");
    assert_eq!(a["user_cut_off"], 0, "{v}");
    let user = |name: &str| {
        v["users"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["user"] == name)
            .unwrap_or_else(|| panic!("{name} in {v}"))
            .clone()
    };
    for (name, requests, wrong) in [("bcuser", 10, 4), ("ops@example.org", 8, 2)] {
        let u = user(name);
        assert_eq!(u["observed_gaps"]["count"], requests, "{name}: {u}");
        assert_eq!(u["observed_gaps_401"], wrong, "{name}: {u}");
        assert_eq!(u["requests_401"], wrong, "{name}: {u}");
    }
    // {SHA} costs microseconds; on a loaded machine a stop right after the read can
    // still look like a gap, rarely.
    let sha = user("shauser");
    assert!(
        sha["observed_gaps"].is_null() || sha["observed_gaps"]["count"].as_u64() <= Some(1),
        "{sha}"
    );
    let mallory = user("mallory");
    assert!(mallory["observed_gaps"].is_null(), "{mallory}");
    assert_eq!(mallory["requests_401"], 4, "{mallory}");
    assert!(
        a["by_log_write"].as_u64().unwrap() >= 18,
        "nginx writes each request's line itself: {v}"
    );
}

/// nginx's `index` module answers a directory URL with an internal redirect to the
/// index file, and the access phase runs again: `auth_basic` checks the password a
/// second time, with no new request read between the two checks (audit of the strace
/// variations, F2). Both checks are the request's, and its cost counts both.
#[test]
fn real_nginx_checks_a_directory_url_twice_and_both_checks_are_its_users() {
    let Some((_dir, d, mut nginx)) = nginx_auth_setup(
        "real_nginx_checks_a_directory_url_twice_and_both_checks_are_its_users",
        &[
            ("bcuser", "correct horse", &["-B", "-C", "10"]),
            ("ops@example.org", "battery staple", &["-B", "-C", "10"]),
        ],
        None,
    ) else {
        return;
    };
    let base = format!("http://127.0.0.1:{}", nginx.port);
    // bcuser asks for the directory: three times checked twice (200), once checked
    // once (the wrong password ends it at the first check); ops@example.org asks for
    // the file itself, checked once.
    for (path, user, pw, want) in [
        ("/", "bcuser", "correct horse", "200"),
        ("/index.html", "ops@example.org", "battery staple", "200"),
        ("/?n=1", "bcuser", "correct horse", "200"),
        ("/", "bcuser", "wrong", "401"),
        (
            "/index.html?n=1",
            "ops@example.org",
            "battery staple",
            "200",
        ),
        ("/?n=2", "bcuser", "correct horse", "200"),
    ] {
        assert_eq!(
            curl_status(&format!("{base}{path}"), user, pw),
            want,
            "{path} {user}"
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    nginx.stop();
    let trace = std::fs::read_to_string(d.join("trace")).unwrap();
    let checks = trace.matches("htpasswd\", O_RDONLY").count();
    assert_eq!(
        checks, 9,
        "nginx opened the password file once per check:\n{trace}"
    );
    let v = auth(&d, &NGINX_AUTH_ARGS);
    let a = &v["attribution"];
    assert_eq!(a["unattributed"], 0, "{v}");
    let bc = user(&v, "bcuser");
    assert_eq!(bc["observed_gaps"]["count"], 7, "{bc}");
    assert_eq!(bc["observed_gaps_401"], 1, "{bc}");
    assert_eq!(bc["checks_per_request"], 1.75, "{bc}");
    let per_check = bc["htpasswd"]["server_seconds"].as_f64().unwrap();
    let per_request = bc["cost_per_request_seconds"].as_f64().unwrap();
    assert!((per_request - 1.75 * per_check).abs() < 1e-9, "{bc}");
    let ops = user(&v, "ops@example.org");
    assert_eq!(ops["observed_gaps"]["count"], 2, "{ops}");
    assert!(ops["checks_per_request"].is_null(), "{ops}");
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("bcuser: the traces show 7 password checks in 4 requests"),
        "{notes}"
    );
}

/// strace prints `-tt` times in the zone of the shell it ran in; an operator in Tokyo
/// tracing a server that logs in UTC gets times 9 h off the log's (audit of the strace
/// variations, F3). The report says so and names the zone; given it, the checks meet
/// their log lines (the wrong password's 401 among them).
#[test]
fn traces_taken_in_another_zone_than_the_log_are_said_to_be() {
    let Some((_dir, d, mut nginx)) = nginx_auth_setup(
        "traces_taken_in_another_zone_than_the_log_are_said_to_be",
        &[("bcuser", "correct horse", &["-B", "-C", "10"])],
        Some("Asia/Tokyo"),
    ) else {
        return;
    };
    let base = format!("http://127.0.0.1:{}/index.html", nginx.port);
    for (pw, want) in [
        ("correct horse", "200"),
        ("wrong", "401"),
        ("correct horse", "200"),
    ] {
        assert_eq!(curl_status(&base, "bcuser", pw), want);
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    nginx.stop();
    let args = NGINX_AUTH_ARGS;
    let v = auth(&d, &args);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("looks like UTC+09:00; give --trace-tz +09:00"),
        "{notes}"
    );
    let given = auth(&d, &[&args[..], &["--trace-tz", "Asia/Tokyo"]].concat());
    assert!(
        !given["notes"].to_string().contains("--trace-tz"),
        "{given}"
    );
    let bc = user(&given, "bcuser");
    assert_eq!(bc["observed_gaps"]["count"], 3, "{bc}");
    assert_eq!(bc["observed_gaps_401"], 1, "{bc}");
    assert_eq!(bc["observed_gaps_status_unknown"], 0, "{bc}");
}

#[test]
fn several_threads_give_the_answer_of_one() {
    // The real prefork capture: the parent's and two workers' -ff files, a missing
    // one among them; the gaps are tied to users by the workers' log writes, which
    // each trace's own pass collects.
    let dir = util::repo_root().join("testdata/strace/real/apache-ff");
    let conf = std::fs::read_to_string(dir.join("httpd.conf")).unwrap();
    let fmt = conf.lines().find(|l| l.starts_with("LogFormat")).unwrap();
    for format in ["json", "table"] {
        let run = |jobs: &str| {
            util::tlsgap()
                .current_dir(&dir)
                .args(["auth", "--format", format, "--bcrypt-speed", "0.015"])
                .args(["--log", "access.log", "--log-format", fmt, "-j", jobs])
                .args([
                    "--traces",
                    "trace.7015",
                    "trace.7016",
                    "trace.nope",
                    "trace.7017",
                ])
                .output()
                .unwrap()
        };
        let one = run("1");
        assert_code(&one, 1);
        assert!(
            util::stderr(&one).contains("trace.nope"),
            "{}",
            util::stderr(&one)
        );
        if format == "json" {
            let v = json(&one);
            assert!(
                v["attribution"]["by_pid_and_time"].as_u64().unwrap() > 0,
                "{v}"
            );
        }
        for jobs in ["2", "4"] {
            util::assert_same_run(&run(jobs), &one, &format!("{format}, -j {jobs}"));
        }
    }
}
