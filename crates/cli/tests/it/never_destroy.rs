//! Never destroy, lose or leak: outputs onto devices, FIFOs, symbolic links and
//! inputs; `--state` saved only after the outputs are durably written (a missing
//! directory, a full filesystem, a file-size limit); real line numbers across
//! `--state` runs; the same file twice; the line cap on a newline-free gzip bomb;
//! thousands of inputs under `ulimit -n`; and the clear answers (zero-padded gzip,
//! nothing parsed, a long first line, an empty state file, write errors by name).

use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::util::{self, assert_code, path_str, stderr, stdout, tempdir, write};

/// The binary as a plain process (standard input given explicitly where it matters).
fn bin() -> Command {
    let mut c = Command::new(util::tlsgap_path());
    c.stdin(Stdio::null());
    c
}

/// `n` combinedssl lines, numbered in their path (`/x?i=N`) from `from`.
fn lines(from: usize, n: usize) -> String {
    (from..from + n)
        .map(|i| util::line(&format!("192.0.2.{}", i % 250 + 1), "TLSv1.2", "AES128-SHA"))
        .enumerate()
        .map(|(k, l)| format!("{}\n", l.replace("/x", &format!("/x?i={}", from + k))))
        .collect()
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

fn tls_total(o: &std::process::Output) -> u64 {
    util::json(o)["total"].as_u64().unwrap()
}

/// `tls -q --format json --state STATE LOG`, which must succeed: its total.
fn tls_with_state(state: &Path, log: &Path) -> u64 {
    let o = bin()
        .args(["tls", "-q", "--format", "json", "--state"])
        .arg(state)
        .arg(log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    tls_total(&o)
}

/// Run `tlsgap` under `sh -c 'ulimit ...; exec tlsgap "$@"'`.
fn tlsgap_limited(limit: &str, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("{limit}; exec \"$0\" \"$@\""))
        .arg(util::tlsgap_path())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn output_onto_a_device_node_writes_to_it_and_keeps_the_node() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", lines(0, 5).as_bytes());
    // A private null device, so that the test never touches the system's.
    let null = dir.path().join("null");
    util::run_tool("mknod", &[path_str(&null), "c", "1", "3"]);
    let o = bin()
        .args(["tls", "-q", "-o", path_str(&null), path_str(&log)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let meta = std::fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device(), "{null:?} was replaced");
    assert_eq!(meta.rdev(), libc_makedev(1, 3));
    // A full device: the error names it, and it stays a device.
    let full = dir.path().join("full");
    util::run_tool("mknod", &[path_str(&full), "c", "1", "7"]);
    let o = bin()
        .args([
            "export",
            "-q",
            "--format",
            "ndjson",
            "-o",
            path_str(&full),
            path_str(&log),
        ])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains(path_str(&full)), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(&full)
        .unwrap()
        .file_type()
        .is_char_device());
    // --invalid-lines too.
    append(&log, "garbage\n");
    let o = bin()
        .args([
            "tls",
            "-q",
            "--invalid-lines",
            path_str(&full),
            path_str(&log),
        ])
        .output()
        .unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(
        err.contains(&format!("--invalid-lines file {}", path_str(&full))),
        "{err}"
    );
}

/// `makedev` as glibc encodes it, for the small numbers used here.
fn libc_makedev(major: u64, minor: u64) -> u64 {
    (major << 8) | minor
}

#[test]
fn output_onto_a_fifo_is_streamed_and_dev_stdout_is_standard_output() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", lines(0, 5).as_bytes());
    let fifo = dir.path().join("feed");
    util::run_tool("mkfifo", &[path_str(&fifo)]);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = bin()
        .args([
            "tls",
            "-q",
            "--format",
            "json",
            "-o",
            path_str(&fifo),
            path_str(&log),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let got: serde_json::Value = serde_json::from_str(&reader.join().unwrap()).unwrap();
    assert_eq!(got["total"], 5);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());

    let o = bin()
        .args([
            "tls",
            "-q",
            "--format",
            "json",
            "-o",
            "/dev/stdout",
            path_str(&log),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(tls_total(&o), 5);
}

/// A cron job's `2>> cron.log` (or `> run.out`): `--invalid-lines /dev/stderr` and
/// `-o /dev/stderr` write through the process's own descriptor, after what the file
/// held, and `--invalid-lines /dev/stdout` beside the result on standard output. Before,
/// the name was opened anew: truncated (the cron log's earlier lines gone) or, for
/// `-o`, replaced by a new file (a black-box audit).
#[test]
fn standard_streams_named_as_paths_keep_what_their_files_hold() {
    let dir = tempdir();
    let log = write(
        dir.path(),
        "access.log",
        format!("{}not a log line\n", lines(0, 3)).as_bytes(),
    );
    let cron = write(dir.path(), "cron.log", b"OLD LINE 1\nOLD LINE 2\n");
    let appending = || {
        std::fs::OpenOptions::new()
            .append(true)
            .open(&cron)
            .unwrap()
    };
    for args in [
        &["--invalid-lines", "/dev/stderr", "-o", "/dev/null"][..],
        &["-o", "/dev/stderr", "--format", "json"][..],
    ] {
        let o = bin()
            .args(["tls", "-q"])
            .args(args)
            .arg(&log)
            .stderr(Stdio::from(appending()))
            .output()
            .unwrap();
        assert_code(&o, 0);
    }
    let text = std::fs::read_to_string(&cron).unwrap();
    assert!(text.starts_with("OLD LINE 1\nOLD LINE 2\n"), "{text}");
    assert!(text.contains("\t4\tmismatch\tnot a log line\n"), "{text}");
    assert!(text.contains("\"total\": 3"), "{text}");

    let out = write(dir.path(), "run.out", b"");
    let o = bin()
        .args([
            "tls",
            "-q",
            "--format",
            "json",
            "--invalid-lines",
            "/dev/stdout",
        ])
        .arg(&log)
        .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("\t4\tmismatch\tnot a log line\n"), "{text}");
    assert!(text.contains("\"total\": 3"), "{text}");
}

#[test]
fn output_through_a_symlink_replaces_the_target_and_keeps_link_mode_and_owner() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", lines(0, 5).as_bytes());
    std::fs::create_dir(dir.path().join("reports")).unwrap();
    let target = write(dir.path(), "reports/2026-11-26.prom", b"old\n");
    std::fs::set_permissions(&target, std::os::unix::fs::PermissionsExt::from_mode(0o604)).unwrap();
    // Owned by someone else (root can), as a file a metrics collector owns would be.
    std::os::unix::fs::chown(&target, Some(65534), Some(65534)).unwrap();
    let link = dir.path().join("latest.prom");
    std::os::unix::fs::symlink("reports/2026-11-26.prom", &link).unwrap();
    let o = bin()
        .args([
            "tls",
            "-q",
            "--format",
            "prom",
            "-o",
            path_str(&link),
            path_str(&log),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.contains("tlsgap_"), "{text}");
    let meta = std::fs::metadata(&target).unwrap();
    assert_eq!(meta.mode() & 0o7777, 0o604);
    assert_eq!((meta.uid(), meta.gid()), (65534, 65534));
    // Nothing left behind beside it.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn an_output_that_is_an_input_is_refused_before_anything_is_read() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", lines(0, 5).as_bytes());
    let before = std::fs::read(&log).unwrap();
    let link = dir.path().join("current.log");
    std::os::unix::fs::symlink("access.log", &link).unwrap();
    let dotted = format!("{}/./access.log", path_str(dir.path()));
    for args in [
        vec!["tls", "-o", path_str(&log), path_str(&log)],
        vec!["tls", "-o", &dotted, path_str(&log)],
        vec![
            "whatif",
            "--policy",
            "mozilla-modern",
            "-o",
            path_str(&link),
            path_str(&log),
        ],
        vec!["tls", "--invalid-lines", &dotted, path_str(&log)],
        vec!["tls", "--state", path_str(&link), path_str(&log)],
        vec!["report", "--html", path_str(&link), path_str(&log)],
        vec!["gaps", "-o", path_str(&log), path_str(&log)],
    ] {
        let o = bin().args(&args).stdin(Stdio::null()).output().unwrap();
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(
            err.contains("refusing to overwrite an input"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("auto-detected"),
            "{args:?} read the input: {err}"
        );
        assert_eq!(std::fs::read(&log).unwrap(), before, "{args:?}");
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // Standard input redirected from the file is the file too.
    let o = bin()
        .args(["tls", "-o", path_str(&log)])
        .stdin(std::fs::File::open(&log).unwrap())
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert_eq!(std::fs::read(&log).unwrap(), before);
}

/// A state run whose output cannot be written leaves the state as it was; the next
/// run, with a good output, counts every line once.
fn state_survives(fail: impl Fn(&Path, &Path, &Path) -> std::process::Output) {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", lines(0, 40).as_bytes());
    let state = dir.path().join("state.json");
    assert_eq!(tls_with_state(&state, &log), 40);
    let saved = std::fs::read(&state).unwrap();
    append(&log, &lines(40, 25));
    let o = fail(dir.path(), &log, &state);
    assert_ne!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&state).unwrap(), saved, "the state advanced");
    assert_eq!(
        tls_with_state(&state, &log),
        25,
        "the lines of the failed run are counted next time"
    );
}

#[test]
fn state_is_not_advanced_when_the_output_cannot_be_written() {
    // -o into a directory that does not exist.
    state_survives(|dir, log, state| {
        let o = bin()
            .args(["tls", "--format", "prom", "--state", path_str(state)])
            .arg("-o")
            .arg(dir.join("no/such/dir/tls.prom"))
            .arg(log)
            .output()
            .unwrap();
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains("no/such/dir/tls.prom"), "{err}");
        assert!(
            err.contains("--state not advanced") || err.contains("creating"),
            "{err}"
        );
        o
    });
    // A file-size limit (SIGXFSZ): the process dies writing, the state stays.
    state_survives(|dir, log, state| {
        let out = dir.join("rows.ndjson");
        tlsgap_limited(
            "ulimit -f 4",
            &[
                "export",
                "-q",
                "--format",
                "ndjson",
                "--state",
                path_str(state),
                "-o",
                path_str(&out),
                path_str(log),
            ],
        )
    });
    // A report (two outputs): the page cannot be written, so neither is the state.
    state_survives(|dir, log, state| {
        let o = bin()
            .args(["report", "--state", path_str(state), "-o"])
            .arg(dir.join("report.txt"))
            .arg("--html")
            .arg(dir.join("missing/report.html"))
            .arg(log)
            .output()
            .unwrap();
        assert_code(&o, 2);
        assert!(!dir.join("report.txt").exists(), "the text went out alone");
        o
    });
}

#[test]
fn state_is_not_advanced_when_the_filesystem_is_full() {
    if util::env_is_1("TLSGAP_SKIP_MOUNT_TESTS") {
        util::loud_skip(
            "state_is_not_advanced_when_the_filesystem_is_full",
            "TLSGAP_SKIP_MOUNT_TESTS=1",
        );
        return;
    }
    let dir = tempdir();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    // Needs root (CI runs as root); set TLSGAP_SKIP_MOUNT_TESTS=1 elsewhere.
    util::run_tool(
        "mount",
        &["-t", "tmpfs", "-o", "size=64k", "tmpfs", path_str(&mnt)],
    );
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    // Fill it but for a few bytes.
    let _ = Command::new("dd")
        .args(["if=/dev/zero", "bs=1k", "count=100"])
        .arg(format!("of={}", mnt.join("filler").display()))
        .stderr(Stdio::null())
        .status();
    state_survives(|_, log, state| {
        let o = bin()
            .args([
                "export",
                "--format",
                "csv",
                "--state",
                path_str(state),
                "-o",
            ])
            .arg(mnt.join("rows.csv"))
            .arg(log)
            .output()
            .unwrap();
        assert_code(&o, 2);
        let err = stderr(&o);
        assert!(err.contains("rows.csv"), "{err}");
        assert!(err.contains("No space left"), "{err}");
        o
    });
}

#[test]
fn a_closed_pipe_with_state_is_success_and_the_state_is_saved() {
    let dir = tempdir();
    let g = util::generated_log(4 << 20);
    let log = write(dir.path(), "big.log", &g.bytes);
    let state = dir.path().join("state.json");
    let mut child = bin()
        .args([
            "export",
            "-q",
            "--format",
            "ndjson",
            "--state",
            path_str(&state),
            path_str(&log),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut buf = [0u8; 64];
    assert!(out.read(&mut buf).unwrap() > 0);
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_code(&o, 0);
    // Every line was read and recorded: the next run has nothing new.
    assert_eq!(tls_with_state(&state, &log), 0);
}

#[test]
fn line_numbers_continue_across_state_runs() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", lines(0, 7).as_bytes());
    let state = dir.path().join("state.json");
    let bad = dir.path().join("bad.tsv");
    let run = |extra: &[&str]| {
        bin()
            .args([
                "export",
                "-q",
                "--format",
                "ndjson",
                "--log-format",
                "combinedssl",
            ])
            .args([
                "--state",
                path_str(&state),
                "--invalid-lines",
                path_str(&bad),
            ])
            .args(extra)
            .arg(&log)
            .output()
            .unwrap()
    };
    assert_code(&run(&[]), 0);
    append(
        &log,
        &format!("{}garbage line\n{}", lines(7, 2), lines(9, 1)),
    );
    let o = run(&[]);
    assert_code(&o, 0);
    let rows = util::ndjson(&o);
    let numbers: Vec<u64> = rows.iter().map(|r| r["line"].as_u64().unwrap()).collect();
    assert_eq!(numbers, vec![8, 9, 11]);
    let tsv = std::fs::read_to_string(&bad).unwrap();
    assert!(tsv.contains("\t10\t"), "{tsv}");
    // --strict names the file's own line too.
    append(&log, &format!("{}more garbage\n", lines(10, 3)));
    let o = run(&["--strict"]);
    assert_code(&o, 1);
    assert!(stderr(&o).contains(":15: malformed line"), "{}", stderr(&o));
}

#[test]
fn the_same_file_given_twice_is_read_once() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", lines(0, 6).as_bytes());
    let hard = dir.path().join("hard.log");
    std::fs::hard_link(&log, &hard).unwrap();
    let dotted = format!("{}/./access.log", path_str(dir.path()));
    let o = bin()
        .args([
            "tls",
            "--format",
            "json",
            path_str(&log),
            &dotted,
            path_str(&hard),
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(tls_total(&o), 6);
    let err = stderr(&o);
    assert_eq!(err.matches("read once").count(), 2, "{err}");
}

#[test]
fn a_newline_free_gzip_bomb_is_one_too_long_line_in_flat_memory() {
    let time = util::tool_ready(
        "a_newline_free_gzip_bomb_is_one_too_long_line_in_flat_memory",
        "time",
        "time",
        "TLSGAP_SKIP_TIME_TESTS",
    );
    let Some(time) = time else { return };
    let dir = tempdir();
    let gz = dir.path().join("bomb.log.gz");
    {
        // One good line, 512 MiB without a newline, one good line.
        let f = std::fs::File::create(&gz).unwrap();
        let mut enc = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
        enc.write_all(lines(0, 1).as_bytes()).unwrap();
        let chunk = vec![b'A'; 1 << 20];
        for _ in 0..512 {
            enc.write_all(&chunk).unwrap();
        }
        enc.write_all(b"\n").unwrap();
        enc.write_all(lines(1, 1).as_bytes()).unwrap();
        enc.finish().unwrap();
    }
    let o = Command::new(time)
        .arg("-v")
        .arg(util::tlsgap_path())
        .args([
            "tls",
            "--format",
            "json",
            "--log-format",
            "combinedssl",
            "-j1",
        ])
        .arg(&gz)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["total"], 2);
    assert_eq!(v["lines"]["malformed"], 1);
    assert_eq!(v["lines"]["malformed_by_reason"]["too_long"], 1, "{v}");
    let err = stderr(&o);
    let peak_kb: u64 = err
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {err}"));
    assert!(peak_kb < 150 * 1024, "peak {peak_kb} kB for a 512 MiB line");
}

#[test]
fn fifteen_hundred_inputs_under_ulimit_n_1024() {
    let dir = tempdir();
    let mut names = Vec::new();
    for i in 0..1500 {
        let p = write(
            dir.path(),
            &format!("access.log.{i}"),
            lines(i, 1).as_bytes(),
        );
        names.push(p.to_string_lossy().into_owned());
    }
    let mut args = vec!["tls", "--format", "json", "-q"];
    args.extend(names.iter().map(String::as_str));
    let o = tlsgap_limited("ulimit -n 1024", &args);
    assert_code(&o, 0);
    assert_eq!(tls_total(&o), 1500, "{}", stderr(&o));
}

#[test]
fn a_gzip_with_zero_padding_is_not_corrupt() {
    let dir = tempdir();
    let plain = write(dir.path(), "a.log", lines(0, 9).as_bytes());
    util::run_tool("gzip", &["-k", path_str(&plain)]);
    let gz = dir.path().join("a.log.gz");
    append(&gz, &"\0".repeat(4096));
    // gzip itself accepts it.
    let t = Command::new("gzip").arg("-t").arg(&gz).output().unwrap();
    assert!(t.status.success(), "{}", stderr(&t));
    let o = bin()
        .args(["tls", "--format", "json", path_str(&gz)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(tls_total(&o), 9);
    assert!(!stderr(&o).contains("corrupt"), "{}", stderr(&o));
    // Garbage that is not zeros is still damage.
    let bad = dir.path().join("b.log.gz");
    std::fs::copy(dir.path().join("a.log.gz"), &bad).unwrap();
    append(&bad, "trailing junk");
    let o = bin()
        .args(["tls", "--format", "json", path_str(&bad)])
        .output()
        .unwrap();
    assert_code(&o, 1);
    assert_eq!(tls_total(&o), 9);
}

#[test]
fn nothing_parsed_is_exit_2() {
    let dir = tempdir();
    let noise: Vec<u8> = (0..20_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let f = write(dir.path(), "noise.bin", &noise);
    let o = bin()
        .args(["tls", "--log-format", "combinedssl", path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("nothing could be processed"),
        "{}",
        stderr(&o)
    );
    let text = write(dir.path(), "notes.txt", b"hello\nthis is not strace\n");
    let o = bin().args(["gaps", path_str(&text)]).output().unwrap();
    assert_code(&o, 2);
    assert!(
        stderr(&o).contains("nothing could be processed"),
        "{}",
        stderr(&o)
    );
    // An empty log is nothing to do, not an error.
    let empty = write(dir.path(), "empty.log", b"");
    let o = bin().args(["tls", path_str(&empty)]).output().unwrap();
    assert_code(&o, 0);
}

#[test]
fn detection_reads_past_a_first_line_longer_than_its_window() {
    let dir = tempdir();
    let huge_ua = "Mozilla/5.0 ".to_string() + &"x".repeat(200_000);
    let first = lines(0, 1).replace("Mozilla/5.0 (test)", &huge_ua);
    let log = write(
        dir.path(),
        "a.log",
        format!("{first}{}", lines(1, 60)).as_bytes(),
    );
    let o = bin()
        .args(["tls", "--format", "json", path_str(&log)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(tls_total(&o), 61);
    assert!(
        stderr(&o).contains("combinedssl (auto-detected"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn an_empty_state_file_is_an_error_not_a_fresh_start() {
    let dir = tempdir();
    let log = write(dir.path(), "a.log", lines(0, 3).as_bytes());
    let state = write(dir.path(), "state.json", b"");
    let o = bin()
        .args(["tls", "--state", path_str(&state), path_str(&log)])
        .output()
        .unwrap();
    assert_code(&o, 2);
    let err = stderr(&o);
    assert!(err.contains("is empty"), "{err}");
    assert!(err.contains("delete it to start afresh"), "{err}");
}

#[test]
fn a_file_rewritten_shorter_in_place_warns_of_double_counting() {
    let dir = tempdir();
    let log = write(dir.path(), "a.log", lines(0, 30).as_bytes());
    let state = dir.path().join("state.json");
    let o = bin()
        .args(["tls", "-q", "--state", path_str(&state), path_str(&log)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    // Rewritten in place (same inode), shorter, with different first bytes.
    let f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&log)
        .unwrap();
    drop(f);
    append(&log, &lines(100, 5));
    let o = bin()
        .args(["tls", "--state", path_str(&state), path_str(&log)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let err = stderr(&o);
    assert!(err.contains("counted twice"), "{err}");
    assert!(err.contains("lost"), "{err}");
}

#[test]
fn a_latin1_file_name_is_opened_and_shown_escaped() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempdir();
    // "accès.log" written by a Latin-1 system: 0xE8 is not UTF-8.
    let log = dir.path().join(OsStr::from_bytes(b"acc\xe8s.log"));
    std::fs::write(&log, lines(0, 4)).unwrap();
    let state = dir.path().join("state.json");
    let o = bin()
        .args(["tls", "--format", "json", "--state", path_str(&state)])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(tls_total(&o), 4);
    let err = stderr(&o);
    assert!(err.contains("acc\\xE8s.log"), "{err}");
    // The state remembers it: appended lines only, next time.
    append(&log, &lines(4, 2));
    assert_eq!(tls_with_state(&state, &log), 2);
    // strace output under such a name too.
    let trace = dir.path().join(OsStr::from_bytes(b"trace.\xe9t\xe9"));
    std::fs::write(
        &trace,
        "1234  12:00:00.000100 read(3, \"x\", 1) = 1\n1234  12:00:00.500100 read(3, \"y\", 1) = 1\n",
    )
    .unwrap();
    let o = bin()
        .args(["gaps", "--format", "json"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(
        stdout(&o).contains("trace.\\\\xE9t\\\\xE9"),
        "{}",
        stdout(&o)
    );
}

/// Two outputs of one run naming the same file are refused before anything is
/// written, whether the file exists yet or not, however it is spelt (audit of
/// 2026-11-28: `--state X -o X` left the state's JSON in the Prometheus file, which
/// node_exporter rejects; `--invalid-lines Y -o Y` lost the malformed lines;
/// `report --state P --html P` replaced the page with the state).
#[test]
fn two_outputs_naming_one_file_are_refused_before_anything_is_written() {
    let dir = tempdir();
    let log = write(dir.path(), "access.log", lines(0, 5).as_bytes());
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let same = |name: &str| (dir.path().join(name), sub.join("..").join(name));
    let (prom, prom_again) = same("tlsgap.prom");
    let (bad, bad_again) = same("bad.txt");
    let (page, page_again) = same("page.html");
    let runs: [Vec<&std::ffi::OsStr>; 3] = [
        vec![
            "tls".as_ref(),
            "--format".as_ref(),
            "prom".as_ref(),
            "--state".as_ref(),
            prom.as_os_str(),
            "-o".as_ref(),
            prom_again.as_os_str(),
        ],
        vec![
            "tls".as_ref(),
            "--invalid-lines".as_ref(),
            bad.as_os_str(),
            "-o".as_ref(),
            bad_again.as_os_str(),
        ],
        vec![
            "report".as_ref(),
            "--state".as_ref(),
            page.as_os_str(),
            "--html".as_ref(),
            page_again.as_os_str(),
        ],
    ];
    for args in runs {
        let o = bin().args(&args).arg(&log).output().unwrap();
        assert_code(&o, 2);
        assert!(
            stderr(&o).contains("are the same file"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    for p in [&prom, &bad, &page] {
        assert!(!p.exists(), "{} written", p.display());
    }
    // Existing files too: the state of a run made first.
    let o = bin()
        .args(["tls", "--format", "prom", "--state"])
        .arg(&prom)
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let before = std::fs::read(&prom).unwrap();
    let o = bin()
        .args(["tls", "--format", "prom", "--state"])
        .arg(&prom)
        .arg("-o")
        .arg(&prom_again)
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert_eq!(std::fs::read(&prom).unwrap(), before);
}
