//! Nightly-run features end to end: time windows (`--since/--until/--tz`, DST) and
//! incremental runs (`--state` across appends and logrotate, the lock).

use std::io::Write;
use std::path::Path;

use crate::util::{self, assert_code, json, path_str};

/// A combinedssl line at `unix` seconds, written with `offset` minutes.
fn line_at(unix: i64, offset: i32, n: usize) -> String {
    let local = unix + i64::from(offset) * 60;
    let days = local.div_euclid(86_400);
    let secs = local.rem_euclid(86_400);
    // Civil date from days since the epoch (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let sign = if offset < 0 { '-' } else { '+' };
    format!(
        "192.0.2.{} - - [{:02}/{}/{}:{:02}:{:02}:{:02} {}{:02}{:02}] \"GET /{n} HTTP/1.1\" 200 5 \"-\" \"t\" TLSv1.3 TLS_AES_128_GCM_SHA256\n",
        n % 250,
        d,
        MONTHS[(m - 1) as usize],
        y,
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
        sign,
        offset.abs() / 60,
        offset.abs() % 60
    )
}

fn tls_total(dir: &Path, args: &[&str]) -> u64 {
    let o = util::tlsgap()
        .current_dir(dir)
        .args([
            "tls",
            "-q",
            "--format",
            "json",
            "--log-format",
            "combinedssl",
        ])
        .args(args)
        .output()
        .unwrap();
    assert_code(&o, 0);
    json(&o)["total"].as_u64().unwrap()
}

#[test]
fn window_is_by_instant_whatever_the_offset() {
    let dir = util::tempdir();
    // 2026-11-21T00:00:00Z = 1795219200. One line per hour for three days, the
    // offsets alternating; Europe/Sofia is UTC+2 in November.
    let start = 1_795_219_200 - 86_400;
    let mut s = String::new();
    let mut want = 0;
    for h in 0..72 {
        let t = start + h * 3600;
        let offset = [0, 120, -210, 330][(h % 4) as usize];
        s += &line_at(t, offset, h as usize);
        // 2026-11-21 in Sofia: [2026-11-20T22:00Z, 2026-11-21T22:00Z).
        if (1_795_219_200 - 7200..1_795_219_200 + 86_400 - 7200).contains(&t) {
            want += 1;
        }
    }
    util::write(dir.path(), "a.log", s.as_bytes());
    let got = tls_total(
        dir.path(),
        &[
            "--since",
            "2026-11-21",
            "--until",
            "2026-11-22",
            "--tz",
            "Europe/Sofia",
            "a.log",
        ],
    );
    assert_eq!((got, want), (24, 24));
    let o = util::tlsgap()
        .current_dir(dir.path())
        .args(["tls", "--format", "json", "--log-format", "combinedssl"])
        .args([
            "--since",
            "2026-11-21T00:00:00Z",
            "--until",
            "2026-11-21T06:00:00Z",
            "a.log",
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v["total"], 6);
    assert_eq!(v["lines"]["outside_window"], 66);
    assert_eq!(v["lines"]["parsed"], 72);
    // A bad bound is a usage error naming the flag.
    let o = util::tlsgap()
        .current_dir(dir.path())
        .args(["tls", "--since", "2026-13-40", "a.log"])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(util::stderr(&o).contains("--since"), "{}", util::stderr(&o));
}

#[test]
fn calendar_days_across_dst_in_sofia() {
    let dir = util::tempdir();
    // One line per UTC hour from 2026-10-24T00:00Z for 4 days (EU autumn change on
    // Sunday 2026-10-25 at 01:00Z) and from 2026-03-28T00:00Z (spring change on
    // Sunday 2026-03-29 at 01:00Z).
    let mut s = String::new();
    for base in [1_792_800_000i64, 1_774_656_000] {
        for h in 0..96 {
            s += &line_at(base + h * 3600, 0, h as usize);
        }
    }
    util::write(dir.path(), "dst.log", s.as_bytes());
    let day = |d: &str, next: &str| {
        tls_total(
            dir.path(),
            &[
                "--since",
                d,
                "--until",
                next,
                "--tz",
                "Europe/Sofia",
                "dst.log",
            ],
        )
    };
    assert_eq!(day("2026-10-25", "2026-10-26"), 25, "autumn: a 25-hour day");
    assert_eq!(day("2026-03-29", "2026-03-30"), 23, "spring: a 23-hour day");
    assert_eq!(day("2026-10-26", "2026-10-27"), 24);
}

#[test]
fn state_continues_across_appends_and_logrotate() {
    let dir = util::tempdir();
    let d = dir.path();
    let log = d.join("access.log");
    let state = d.join("state.json");
    let mut n = 0usize;
    let mut append = |count: usize| {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log)
            .unwrap();
        for _ in 0..count {
            f.write_all(line_at(1_795_219_200 + n as i64, 0, n).as_bytes())
                .unwrap();
            n += 1;
        }
    };
    let run = || tls_total(d, &["--state", path_str(&state), "access.log"]);
    append(10);
    assert_eq!(run(), 10);
    assert_eq!(run(), 0, "nothing new");
    append(5);
    assert_eq!(run(), 5);
    // A half-written last line waits for its newline.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .unwrap()
        .write_all(b"192.0.2.1 - - [21/Nov/2026:00:00:00 +0000] \"GET /x HTTP/1.1\" 200 5")
        .unwrap();
    assert_eq!(run(), 0);
    std::fs::OpenOptions::new()
        .append(true)
        .open(&log)
        .unwrap()
        .write_all(b" \"-\" \"t\" TLSv1.2 AES128-SHA\n")
        .unwrap();
    assert_eq!(run(), 1);
    // logrotate `create` + `compress`: lines written after the last run, then rotated.
    append(3);
    std::fs::rename(&log, d.join("access.log.1")).unwrap();
    let o = std::process::Command::new("gzip")
        .arg(d.join("access.log.1"))
        .output()
        .unwrap();
    assert!(o.status.success());
    append(4);
    assert_eq!(run(), 7, "3 from the rotated .gz, 4 from the new file");
    // copytruncate.
    append(2);
    std::fs::copy(&log, d.join("access.log.1")).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(0)
        .unwrap();
    append(6);
    assert_eq!(run(), 8, "2 from the copy, 6 after the truncation");
}

#[test]
fn state_lock_refuses_a_second_run() {
    let dir = util::tempdir();
    let d = dir.path();
    util::write(d, "access.log", line_at(1_795_219_200, 0, 1).as_bytes());
    let state = d.join("state.json");
    // Hold the lock with util-linux flock(1) while tlsgap tries.
    let lock = d.join("state.json.lock");
    std::fs::write(&lock, b"").unwrap();
    let mut holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["sleep", "30"])
        .spawn()
        .unwrap();
    // Wait until flock holds it (probe with a non-blocking flock).
    for _ in 0..100 {
        let probe = std::process::Command::new("flock")
            .args(["-n"])
            .arg(&lock)
            .arg("true")
            .status()
            .unwrap();
        if !probe.success() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let o = util::tlsgap()
        .current_dir(d)
        .args([
            "tls",
            "-q",
            "--log-format",
            "combinedssl",
            "--state",
            path_str(&state),
        ])
        .arg("access.log")
        .output()
        .unwrap();
    let _ = holder.kill();
    let _ = holder.wait();
    assert_code(&o, 2);
    assert!(
        util::stderr(&o).contains("--lock-wait"),
        "{}",
        util::stderr(&o)
    );
    assert!(!state.exists(), "no state written by the refused run");
}

#[test]
fn by_day_follows_the_local_calendar() {
    let dir = util::tempdir();
    // One line per UTC hour from 2026-10-24T00:00Z for 4 days, across Sofia's autumn
    // change (UTC+3 -> UTC+2 on 2026-10-25 at 01:00Z).
    let mut s = String::new();
    for h in 0..96 {
        s += &line_at(1_792_800_000 + h * 3600, 0, h as usize);
    }
    util::write(dir.path(), "dst.log", s.as_bytes());
    let o = util::tlsgap()
        .current_dir(dir.path())
        .args([
            "tls",
            "-q",
            "--format",
            "json",
            "--log-format",
            "combinedssl",
        ])
        .args(["--by", "day", "--tz", "Europe/Sofia", "dst.log"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    let got: Vec<(String, u64)> = v["periods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["period"].as_str().unwrap().to_string(),
                p["total"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = [
        ("2026-10-24", 21),
        ("2026-10-25", 25),
        ("2026-10-26", 24),
        ("2026-10-27", 24),
        ("2026-10-28", 2),
    ]
    .iter()
    .map(|(d, n)| (d.to_string(), *n))
    .collect();
    assert_eq!(got, want);
    assert_eq!(v["periods"][1]["start"], "2026-10-25T00:00:00+03:00");
    // Hours: the repeated 03:00 hour is one two-hour period.
    let o = util::tlsgap()
        .current_dir(dir.path())
        .args([
            "tls",
            "-q",
            "--format",
            "csv",
            "--log-format",
            "combinedssl",
        ])
        .args(["--by", "hour", "--tz", "Europe/Sofia", "dst.log"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let out = util::stdout(&o);
    assert_eq!(
        out.lines().next().unwrap(),
        "period,period_start,protocol,count,share"
    );
    let repeated: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("\"2026-10-25T03\""))
        .collect();
    assert_eq!(repeated.len(), 1, "{out}");
    assert!(
        repeated[0].contains(",2,"),
        "two lines in the repeated hour: {}",
        repeated[0]
    );
}

#[test]
fn progress_bar_on_a_terminal_only() {
    let dir = util::tempdir();
    let mut s = String::new();
    for i in 0..2000 {
        s += &line_at(1_795_219_200 + i, 0, i as usize);
    }
    let log = util::write(dir.path(), "a.log", s.as_bytes());
    // Piped (stderr captured): no bar, whatever happens.
    let o = util::tlsgap()
        .env_remove("CI")
        .args(["tls", "--log-format", "combinedssl"])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(!util::stderr(&o).contains('\r'), "bar drawn on a pipe");
    assert!(!util::stderr(&o).contains("read,"), "bar drawn on a pipe");
    // On a terminal (script(1) gives the command a pty), with input that keeps coming
    // for a while: the bar shows. `-q` and `CI` keep it off there too.
    let Some(script) = util::find_program("script") else {
        panic!("script(1) from util-linux is needed for this test");
    };
    let run = |extra: &str, ci: bool| -> String {
        let cmd = format!(
            "(cat {log}; sleep 1.5; cat {log}) | {bin} tls --log-format combinedssl {extra} - > /dev/null",
            log = path_str(&log),
            bin = util::tlsgap_path().display()
        );
        let mut c = std::process::Command::new(&script);
        c.args(["-qfec", &cmd, "/dev/null"]);
        if ci {
            c.env("CI", "true");
        } else {
            c.env_remove("CI");
        }
        let o = c.output().unwrap();
        assert!(o.status.success(), "{}", util::stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let tty = run("", false);
    assert!(tty.contains("read,"), "no bar on a terminal: {tty:?}");
    assert!(!run("-q", false).contains("read,"), "bar despite -q");
    assert!(!run("", true).contains("read,"), "bar despite CI");
}

/// A log written by a program that does not append (started with `> access.log`),
/// rotated by the real `logrotate` with `copytruncate`: the writer keeps its offset,
/// so the truncated file starts with a hole (NUL bytes as long as the file was) and
/// its next lines after it. Those lines are read, the format is still detected, the
/// hole is named, and `--state` goes on after it; the compressed copy of such a file
/// (gzip keeps the NULs) reads the same.
#[test]
fn a_copytruncate_hole_before_a_non_appending_writers_lines_is_skipped_and_named() {
    let Some(logrotate) = util::tool_ready(
        "a_copytruncate_hole_before_a_non_appending_writers_lines_is_skipped_and_named",
        "logrotate",
        "logrotate",
        "TLSGAP_SKIP_LOGROTATE",
    ) else {
        return;
    };
    let dir = util::tempdir();
    let d = dir.path();
    let log = d.join("access.log");
    // The writer: a shell loop whose output was opened by `>` (O_TRUNC, no O_APPEND).
    let mut writer = std::process::Command::new("sh")
        .arg("-c")
        .arg("while IFS= read -r l; do printf '%s\\n' \"$l\"; done > access.log")
        .current_dir(d)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut feed = writer.stdin.take().unwrap();
    let mut written = 0u64;
    let mut send = |lines: std::ops::Range<usize>, written: &mut u64| {
        for n in lines {
            let l = line_at(1_795_219_200 + n as i64, 0, n);
            feed.write_all(l.as_bytes()).unwrap();
            *written += l.len() as u64;
        }
        feed.flush().unwrap();
        // Wait until the writer wrote them all (its offset is where the file ends).
        for _ in 0..400 {
            if std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) >= *written {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("the writer did not write its lines");
    };
    send(0..40, &mut written);
    let before = written;
    let conf = d.join("rotate.conf");
    std::fs::write(
        &conf,
        format!(
            "{} {{\n  copytruncate\n  rotate 2\n  missingok\n}}\n",
            path_str(&log)
        ),
    )
    .unwrap();
    let o = std::process::Command::new(&logrotate)
        .arg("-f")
        .arg("-s")
        .arg(d.join("logrotate.status"))
        .arg(&conf)
        .output()
        .unwrap();
    assert!(o.status.success(), "logrotate: {}", util::stderr(&o));
    assert_eq!(
        std::fs::metadata(d.join("access.log.1")).unwrap().len(),
        before
    );
    send(40..55, &mut written);
    let bytes = std::fs::read(&log).unwrap();
    assert_eq!(bytes.len() as u64, written, "the writer kept its offset");
    assert!(
        bytes[..before as usize].iter().all(|&b| b == 0),
        "a hole where the rotated lines were"
    );
    let gz = d.join("access.log.gz");
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg("gzip -c access.log > access.log.gz")
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success());
    let hole_note = format!("skipped {before} NUL bytes where it starts");
    for (input, jobs) in [(&log, "1"), (&log, "2"), (&gz, "2")] {
        // No --log-format: the format is detected past the hole.
        let o = util::tlsgap()
            .args(["tls", "--format", "json", "-j", jobs])
            .arg(input)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let v = json(&o);
        assert_eq!(
            v["total"], 15,
            "{input:?} -j{jobs}: the lines after the hole"
        );
        assert_eq!(v["lines"]["malformed"], 0, "{input:?} -j{jobs}");
        assert_eq!(v["lines"]["total"], 15, "{input:?} -j{jobs}");
        let err = util::stderr(&o);
        assert!(err.contains(&hole_note), "{input:?} -j{jobs}: {err}");
    }
    // Piped (`zcat access.log.gz | tlsgap tls`): the hole where standard input starts.
    let o = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "zcat access.log.gz | '{}' tls --format json -",
            path_str(&util::tlsgap_path())
        ))
        .current_dir(d)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(json(&o)["total"], 15, "piped");
    assert!(
        util::stderr(&o).contains(&hole_note),
        "{}",
        util::stderr(&o)
    );
    // Incremental: the state's offset counts the hole; the next run reads what came after.
    let state = d.join("state.json");
    let run = || tls_total(d, &["--state", path_str(&state), path_str(&log)]);
    assert_eq!(run(), 15);
    send(55..60, &mut written);
    assert_eq!(run(), 5, "only the lines written since");
    drop(feed);
    writer.wait().unwrap();
}
