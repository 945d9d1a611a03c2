//! Gap analysis on hand-made traces in every form strace writes.

use proptest::prelude::*;
use tlsgap_agg::fdtable::ResKind;
use tlsgap_agg::gaps::{
    gap_rows, gap_table, pid_from_file_name, Cause, Clock, Gap, GapAnalyzer, GapKind, GapOptions,
    GapsReport, GAP_COLUMNS,
};

fn run(inputs: &[(&str, Option<u32>, &str)]) -> GapsReport {
    run_with(inputs, GapOptions::default())
}

fn run_with(inputs: &[(&str, Option<u32>, &str)], opts: GapOptions) -> GapsReport {
    let mut a = GapAnalyzer::new(opts);
    for (name, hint, text) in inputs {
        a.begin_input(name, *hint);
        for (i, l) in text.lines().enumerate() {
            a.line(i as u64 + 1, l.as_bytes());
        }
        a.end_input();
    }
    a.finish()
}

/// `-ff` inputs named `trace.PID` with the PID from the name.
fn run_ff(files: &[(String, String)]) -> GapsReport {
    let inputs: Vec<(&str, Option<u32>, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), pid_from_file_name(n), t.as_str()))
        .collect();
    run(&inputs)
}

fn json(r: &GapsReport) -> String {
    serde_json::to_string_pretty(r).unwrap()
}

fn gap_at(r: &GapsReport, pid: u32, line: u64) -> &Gap {
    r.gaps
        .iter()
        .find(|g| g.pid == pid && g.line == line)
        .unwrap_or_else(|| panic!("no gap of {pid} at line {line}:\n{}", json(r)))
}

const B: u64 = 1_795_296_993;

/// `-ttt` stamp `B + us` microseconds.
fn ts(us: u64) -> String {
    format!("{}.{:06}", B + us / 1_000_000, us % 1_000_000)
}

// ------------------------------------------------------------------ auth

const HTPASSWD_FF: &str = r#"1795296993.000000 getpid() = 4242 <0.000003>
1795296993.000100 accept4(3, {sa_family=AF_INET, sin_port=htons(52428), sin_addr=inet_addr("127.0.0.1")}, [16], SOCK_CLOEXEC) = 8 <2.500000>
1795296995.500200 read(8, "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YWxpY2U6c2VjcmV0\r\n\r\n", 8000) = 70 <0.000010>
1795296995.500300 openat(AT_FDCWD, "/etc/apache2/htpasswd.users", O_RDONLY|O_CLOEXEC) = 15 <0.000020>
1795296995.500400 fstat(15, {st_mode=S_IFREG|0640, st_size=61, ...}) = 0 <0.000005>
1795296995.500500 read(15, "alice:$2y$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW\n", 4096) = 61 <0.000010>
1795296995.500600 close(15) = 0 <0.000005>
1795296995.900605 openat(AT_FDCWD, "/var/www/html/index.html", O_RDONLY|O_CLOEXEC) = 15 <0.000020>
1795296995.900700 writev(8, [{iov_base="HTTP/1.1 200 OK\r\n", iov_len=17}], 1) = 17 <0.000010>
"#;

#[test]
fn htpasswd_read_then_hash_is_auth_with_bcrypt_cost() {
    let r = run(&[("trace.4242", Some(4242), HTPASSWD_FF)]);
    assert_eq!(r.gaps.len(), 1, "{}", json(&r));
    let g = gap_at(&r, 4242, 8);
    assert_eq!(g.kind, GapKind::Gap);
    assert_eq!(g.cause, Cause::Auth);
    assert_eq!(g.detail.as_deref(), Some("bcrypt cost 12"));
    assert!((g.seconds - 0.4).abs() < 1e-9, "{}", g.seconds);
    assert_eq!(g.start, "2026-11-21T21:36:35.500605Z");
    assert_eq!(g.end, "2026-11-21T21:36:35.900605Z");
    assert_eq!(g.clock, Clock::Unix);
    assert_eq!(g.start_nanos, 1_795_296_995_500_605_000);
    assert_eq!(g.before_line, Some(7));
    assert_eq!(g.call.as_deref(), Some("close"));
    assert_eq!(g.resource.as_deref(), Some("/etc/apache2/htpasswd.users"));
    assert_eq!(g.resource_kind, ResKind::File);
    assert!(!g.includes_call_time && !g.inside_call);
    assert_eq!(g.before.as_deref(), Some("close(15) = 0 <0.000005>"));
    assert!(g
        .after
        .as_deref()
        .unwrap()
        .starts_with("openat(AT_FDCWD, \"/var/www/html/index.html\""));
    assert_eq!(g.resources[0], "/etc/apache2/htpasswd.users");
    assert!(
        g.resources
            .contains(&"socket:[accepted on fd 3]".to_string()),
        "{:?}",
        g.resources
    );

    // The accept waited 2.5 s: blocked, not slowness.
    assert_eq!(r.blocked.len(), 1);
    let b = &r.blocked[0];
    assert_eq!(
        (b.cause, b.kind, b.line, b.inside_call),
        (Cause::Blocked, GapKind::Blocked, 2, true)
    );
    assert!((b.seconds - 2.5).abs() < 1e-9);
    assert_eq!(b.call.as_deref(), Some("accept4"));

    // Summaries.
    let auth = r.by_cause.iter().find(|c| c.cause == Cause::Auth).unwrap();
    assert_eq!(auth.dist.count, 1);
    assert!((auth.dist.p95_seconds - 0.4).abs() < 1e-9);
    let res = r
        .by_resource
        .iter()
        .find(|x| x.resource == "/etc/apache2/htpasswd.users")
        .unwrap();
    assert_eq!((res.kind, res.dist.count), (GapKind::Gap, 1));
    assert_eq!(r.by_pid.len(), 1);
    assert_eq!(r.by_pid[0].pid, 4242);
    assert_eq!(r.by_pid[0].causes["auth"], 1);
    assert_eq!(r.top.len(), 1);
}

#[test]
fn redaction_keeps_hashes_and_authorization_out_of_every_output() {
    let r = run(&[("trace.4242", Some(4242), HTPASSWD_FF)]);
    let text = json(&r);
    for secret in ["R9h/cIPz0gi", "$2y$12$R9h", "YWxpY2U6c2VjcmV0", "Basic YWx"] {
        assert!(!text.contains(secret), "{secret} leaked:\n{text}");
    }
    let rows = format!("{:?}", gap_rows(&r));
    assert!(!rows.contains("R9h/cIPz0gi") && !rows.contains("YWxpY2U6"));
    // The placeholder says what was there.
    let g = &r.gaps[0];
    let ctx = r.gaps[0].resources.join(" ");
    assert!(!ctx.contains("$2y$"));
    // The read of the hash is in the context of the gap only as a placeholder: make
    // it the call right before the gap to see it.
    let t = HTPASSWD_FF.replace("1795296995.500600 close(15) = 0 <0.000005>\n", "");
    let r2 = run(&[("trace.4242", Some(4242), &t)]);
    let g2 = &r2.gaps[0];
    assert_eq!(
        g2.before.as_deref(),
        Some(r#"read(15, "<redacted: bcrypt cost 12, 67 bytes>", 4096) = 61 <0.000010>"#)
    );
    assert!(!json(&r2).contains("R9h/cIPz0gi"));
    assert_eq!(g.cause, Cause::Auth);
}

#[test]
fn authorization_header_in_context_is_redacted() {
    let t = r#"1795296993.000000 getpid() = 7 <0.000001>
1795296993.000100 read(8<TCP:[127.0.0.1:80->127.0.0.1:50000]>, "GET /x HTTP/1.1\r\nAuthorization: Basic bWFsbG9yeTpodW50ZXIy\r\n\r\n", 4096) = 62 <0.000010>
1795296993.300110 getuid() = 0 <0.000001>
"#;
    let r = run(&[("trace.7", Some(7), t)]);
    let g = gap_at(&r, 7, 3);
    let before = g.before.as_deref().unwrap();
    assert!(
        before.contains("<redacted: Authorization header, 62 bytes>"),
        "{before}"
    );
    assert!(!json(&r).contains("bWFsbG9yeTpodW50ZXIy"));
    // A header is not a hash: the gap is CPU.
    assert_eq!(g.cause, Cause::Cpu);
    assert_eq!(
        g.resource.as_deref(),
        Some("TCP:[127.0.0.1:80->127.0.0.1:50000]")
    );
}

#[test]
fn a_hash_in_a_file_name_is_not_shown_either() {
    let t = r#"1795296993.000000 getpid() = 7 <0.000001>
1795296993.000100 openat(AT_FDCWD</tmp>, "cache/$2b$10$N9qo8uLOickgx2ZMRZoMye", O_RDONLY) = 3</tmp/cache/$2b$10$N9qo8uLOickgx2ZMRZoMye> <0.000010>
1795296993.300110 getuid() = 0 <0.000001>
"#;
    let r = run(&[("trace.7", Some(7), t)]);
    let g = gap_at(&r, 7, 3);
    assert_eq!(g.cause, Cause::Auth);
    assert_eq!(g.resource.as_deref(), Some("<redacted: name of 40 bytes>"));
    assert!(!json(&r).contains("N9qo8uLOickgx2ZMRZoMye"), "{}", json(&r));
}

// ------------------------------------------------------------------ blocked, -y

#[test]
fn long_accept_with_y_is_blocked_and_not_a_gap() {
    let t = r#"1795296993.000000 getpid() = 9 <0.000002>
1795296993.100000 accept4(3<TCP:[0.0.0.0:443]>, {sa_family=AF_INET, sin_port=htons(52428), sin_addr=inet_addr("127.0.0.1")}, [16], SOCK_CLOEXEC) = 8<TCP:[127.0.0.1:443->127.0.0.1:52428]> <2.000000>
1795296995.100100 read(8<TCP:[127.0.0.1:443->127.0.0.1:52428]>, "\26\3\1\2\0", 5) = 5 <0.000004>
1795296995.100200 epoll_wait(4<anon_inode:[eventpoll]>, [{events=EPOLLIN, data={u32=8, u64=8}}], 10, 30000) = 1 <0.250000>
1795296995.350300 read(8<TCP:[127.0.0.1:443->127.0.0.1:52428]>, "x", 1) = 1 <0.150000>
1795296995.500400 fsync(5</var/lib/app/db>) = 0 <0.300000>
"#;
    let r = run(&[("trace.9", Some(9), t)]);
    assert!(
        r.gaps.iter().all(|g| g.cause != Cause::Blocked),
        "{}",
        json(&r)
    );
    assert_eq!(r.blocked.len(), 3, "{}", json(&r));
    let accept = &r.blocked[0];
    assert_eq!(accept.call.as_deref(), Some("accept4"));
    assert_eq!(accept.resource.as_deref(), Some("TCP:[0.0.0.0:443]"));
    assert_eq!(accept.resource_kind, ResKind::Socket);
    assert!((accept.seconds - 2.0).abs() < 1e-9);
    assert_eq!(r.blocked[1].call.as_deref(), Some("epoll_wait"));
    assert_eq!(r.blocked[2].call.as_deref(), Some("read"));
    // fsync inside the kernel on a file: io, reported as a gap.
    assert_eq!(r.gaps.len(), 1);
    let io = &r.gaps[0];
    assert_eq!((io.cause, io.inside_call), (Cause::Io, true));
    assert_eq!(io.resource.as_deref(), Some("/var/lib/app/db"));
    // by_resource masks the ephemeral port.
    assert!(r
        .by_resource
        .iter()
        .any(|x| x.resource == "TCP:[127.0.0.1:443->127.0.0.1:*]" && x.kind == GapKind::Blocked));
    let blocked = r
        .by_cause
        .iter()
        .find(|c| c.cause == Cause::Blocked)
        .unwrap();
    assert_eq!((blocked.kind, blocked.dist.count), (GapKind::Blocked, 3));
    assert!((blocked.dist.max_seconds - 2.0).abs() < 1e-9);
    assert!(r.top.iter().all(|g| g.kind == GapKind::Gap));
}

// ------------------------------------------------------------------ fd table

#[test]
fn fd_table_without_y_names_the_file_read_before_a_gap() {
    let t = r#"1795296993.000000 openat(AT_FDCWD, "/data/big.csv", O_RDONLY) = 5 <0.000010>
1795296993.000100 read(5, "a,b,c\n1,2,3\n", 65536) = 12 <0.000010>
1795296993.200110 write(1, "6\n", 2) = 2 <0.000005>
"#;
    let r = run(&[("trace.31", Some(31), t)]);
    let g = gap_at(&r, 31, 3);
    assert_eq!(g.cause, Cause::Cpu);
    assert_eq!(g.resource.as_deref(), Some("/data/big.csv"));
    assert_eq!(g.resources, ["/data/big.csv"]);
}

/// `-f -o FILE`: dup2, close, execve with O_CLOEXEC, clone with and without CLONE_FILES.
fn fd_table_f(prefix: impl Fn(u32) -> String) -> String {
    let l = |pid: u32, us: u64, body: &str| format!("{}{} {body}\n", prefix(pid), ts(us));
    [
        l(100, 0, r#"execve("/usr/sbin/httpd", ["httpd"], 0x7ffd /* 20 vars */) = 0 <0.000500>"#),
        l(100, 1_000, r#"openat(AT_FDCWD, "/var/log/app.log", O_WRONLY|O_APPEND|O_CREAT|O_CLOEXEC, 0644) = 3 <0.000010>"#),
        l(100, 2_000, r#"openat(AT_FDCWD, "/etc/app/htpasswd", O_RDONLY) = 4 <0.000010>"#),
        l(100, 3_000, "dup2(4, 7) = 7 <0.000003>"),
        l(100, 4_000, "close(4) = 0 <0.000003>"),
        l(100, 5_000, "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f0000000a10) = 101 <0.000100>"),
        l(100, 6_000, "clone(child_stack=0x7f0000001000, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, parent_tid=[102], tls=0x7f0000002000, child_tidptr=0x7f0000002a10) = 102 <0.000100>"),
        l(100, 7_000, "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f0000000a10) = 103 <0.000100>"),
        l(101, 10_000, r#"openat(AT_FDCWD, "/tmp/child-only", O_RDONLY) = 10 <0.000010>"#),
        l(101, 11_000, r#"execve("/bin/helper", ["helper"], 0x7ffd /* 20 vars */) = 0 <0.000400>"#),
        l(101, 12_000, r#"write(7, "y", 1) = 1 <0.000003>"#),
        l(102, 20_000, r#"openat(AT_FDCWD, "/srv/data.bin", O_RDONLY) = 9 <0.000010>"#),
        l(100, 30_000, r#"read(9, "xyz", 3) = 3 <0.000005>"#),
        l(103, 40_000, r#"write(3, "z", 1) = 1 <0.000003>"#),
        l(100, 230_005, "getpid() = 100 <0.000002>"),
        l(100, 240_000, r#"read(10, "q", 1) = 1 <0.000005>"#),
        l(101, 312_003, r#"write(3, "x", 1) = -1 EBADF (Bad file descriptor) <0.000003>"#),
        l(103, 340_003, "getppid() = 100 <0.000002>"),
        l(100, 540_005, "getuid() = 0 <0.000002>"),
        l(101, 612_006, "getppid() = 100 <0.000002>"),
    ]
    .concat()
}

#[test]
fn fd_table_dup2_close_exec_cloexec_and_clone_files() {
    let t = fd_table_f(|pid| format!("{pid:<5} "));
    let r = run(&[("run.trace", None, &t)]);
    let line_of = |needle: &str| t.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1;
    // Thread 102 (CLONE_FILES) opened fd 9; its parent reads it: shared table.
    let g = gap_at(&r, 100, line_of("getpid() = 100"));
    assert_eq!(g.resource.as_deref(), Some("/srv/data.bin"), "{}", json(&r));
    // fd 7 is a dup2 of the htpasswd fd, inherited by 101 and kept across execve.
    let g = gap_at(&r, 101, line_of(r#"write(3, "x""#));
    assert_eq!(g.resource.as_deref(), Some("/etc/app/htpasswd"));
    assert_eq!(g.cause, Cause::Auth);
    assert_eq!(g.detail, None);
    // fd 3 was O_CLOEXEC: after 101's execve it names nothing.
    let g = gap_at(&r, 101, 20);
    assert!(
        !g.resources.iter().any(|x| x == "/var/log/app.log"),
        "{:?}",
        g.resources
    );
    // ... while 103, forked without exec, still writes to the log.
    let g = gap_at(&r, 103, line_of("getppid() = 100 <0.000002>"));
    assert_eq!(g.resource.as_deref(), Some("/var/log/app.log"));
    // fd 10 was opened by 101 after the fork (no CLONE_FILES): the parent cannot know it.
    let g = gap_at(&r, 100, line_of("getuid() = 0"));
    assert_eq!(g.resource.as_deref(), Some("fd 10"));
    assert_eq!(g.resource_kind, ResKind::Unknown);
    assert!(r.notes.iter().any(|n| n.contains("could not be named")));
    // The closed fd 4 is not in the parent's table any more.
    assert!(r
        .gaps
        .iter()
        .all(|g| g.pid != 100 || g.resource.as_deref() != Some("/etc/app/htpasswd")));
    // Startup: none of these threads was attached to.
    assert!(r.blocked.is_empty());
}

// ------------------------------------------------------------------ -f to stderr

#[test]
fn f_to_stderr_lines_without_prefix_before_the_fork_and_after_the_children() {
    let t = "\
1795296993.000000 execve(\"./srv\", [\"./srv\"], 0x7ffd /* 20 vars */) = 0 <0.000300>
1795296993.001000 openat(AT_FDCWD, \"/etc/srv.conf\", O_RDONLY) = 3 <0.000010>
1795296993.002000 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTIDstrace: Process 501 attached
, child_tidptr=0x7f0000000a10) = 501 <0.000100>
[pid   501] 1795296993.003000 read(3, \"a\", 1) = 1 <0.000005>
[pid   500] 1795296993.004000 wait4(-1,  <unfinished ...>
[pid   501] 1795296993.303005 getpid() = 501 <0.000002>
[pid   501] 1795296993.304000 exit_group(0) = ?
[pid   501] 1795296993.304100 +++ exited with 0 +++
[pid   500] 1795296993.304200 <... wait4 resumed>NULL, 0, NULL) = 501 <0.300200>
1795296993.304300 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=501, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---
1795296993.704300 getuid() = 0 <0.000002>
";
    let r = run(&[("stderr.txt", None, t)]);
    // The child reads fd 3, opened by the parent before its PID was known.
    let g = gap_at(&r, 501, 7);
    assert_eq!(g.resource.as_deref(), Some("/etc/srv.conf"), "{}", json(&r));
    assert_eq!(g.cause, Cause::Cpu);
    // The parent's wait is blocked, under its real PID.
    assert_eq!(r.blocked.len(), 1, "{}", json(&r));
    assert_eq!(
        (r.blocked[0].pid, r.blocked[0].call.as_deref()),
        (500, Some("wait4"))
    );
    assert_eq!(r.blocked[0].line, 10);
    // After the child exited, lines without prefix are the parent's again.
    let g = gap_at(&r, 500, 12);
    assert!(g.before.as_deref().unwrap().starts_with("--- SIGCHLD {"));
    assert!(r.gaps.iter().all(|g| g.pid != 0));
    assert_eq!(r.lines.skipped_by_reason["strace_message"], 1);
    assert_eq!(r.lines.total, 12);
}

// ------------------------------------------------------------------ midnight

#[test]
fn tt_across_midnight_rolls_over() {
    let t = "\
23:59:59.700000 getpid() = 5 <0.000010>
23:59:59.800000 getppid() = 1 <0.000010>
00:00:00.200010 getuid() = 0 <0.000010>
00:00:00.250020 geteuid() = 0 <0.000010>
";
    let r = run(&[("trace.5", Some(5), t)]);
    assert_eq!(r.gaps.len(), 1, "{}", json(&r));
    let g = &r.gaps[0];
    assert_eq!(g.clock, Clock::TimeOfDay);
    assert_eq!(g.start, "23:59:59.800010");
    assert_eq!(g.end, "00:00:00.200010 +1d");
    assert_eq!((g.start_day, g.end_day), (0, 1));
    assert_eq!(g.end_nanos, 200_010_000);
    assert!((g.seconds - 0.4).abs() < 1e-9);
    assert_eq!(r.inputs[0].rollovers, 1);
    assert!(r.notes.iter().any(|n| n.contains("no date")));
}

#[test]
fn tt_ff_file_started_after_midnight_is_on_day_one() {
    let parent = "\
23:59:59.000000 clone(child_stack=NULL, flags=SIGCHLD) = 6 <0.000100>
23:59:59.900000 wait4(-1, NULL, 0, NULL) = 6 <3.000000>
";
    let child = "\
00:00:01.000000 getpid() = 6 <0.000010>
00:00:01.500010 exit_group(0) = ?
";
    let files = [
        ("trace.5".to_string(), parent.to_string()),
        ("trace.6".to_string(), child.to_string()),
    ];
    let r = run_ff(&files);
    let g = gap_at(&r, 6, 2);
    assert_eq!((g.start_day, g.end_day), (1, 1), "{}", json(&r));
    assert_eq!(g.start, "00:00:01.000010 +1d");
    let w = &r.blocked[0];
    assert_eq!((w.pid, w.start_day, w.end_day), (5, 0, 1));
    assert_eq!(w.end, "00:00:02.900000 +1d");
    // Input order does not matter.
    let rev = run_ff(&[files[1].clone(), files[0].clone()]);
    assert_eq!(json(&r), json(&rev));
}

#[test]
fn tt_without_t_durations_gap_includes_the_call() {
    let t = "\
10:00:00.000000 getpid() = 5
10:00:00.000100 getuid() = 0
10:00:00.500100 getppid() = 1
";
    let r = run(&[("trace.5", Some(5), t)]);
    assert_eq!(r.gaps.len(), 1, "{}", json(&r));
    let g = &r.gaps[0];
    assert!(g.includes_call_time);
    assert_eq!(g.cause, Cause::Cpu);
    assert!(r.notes.iter().any(|n| n.starts_with("no -T durations")));
    // The first call of a thread nobody saw created may have started before the
    // attach: a gap after it is startup.
    let t = "10:00:00.000000 getpid() = 5\n10:00:00.500000 getppid() = 1\n";
    let r = run(&[("trace.5", Some(5), t)]);
    assert!(r.gaps.is_empty());
    assert_eq!(r.blocked[0].cause, Cause::Startup);
}

// ------------------------------------------------------------------ -r

#[test]
fn relative_stamps_are_summed() {
    let t = "\
strace: Process 5 attached
     0.000000 getpid() = 5
     0.000050 getppid() = 1
     0.300000 read(0, \"x\", 1) = 1
     0.500000 getuid() = 0
";
    let r = run(&[("r.txt", None, t)]);
    assert_eq!(r.gaps.len(), 1, "{}", json(&r));
    let g = &r.gaps[0];
    assert_eq!(g.pid, 5);
    assert_eq!(g.clock, Clock::Relative);
    assert_eq!(
        (g.start.as_str(), g.end.as_str()),
        ("+0.000050", "+0.300050")
    );
    assert!(g.includes_call_time);
    assert_eq!(g.cause, Cause::Cpu);
    // No -T: the next 0.5 s may have been inside the read of stdin, which waits.
    assert_eq!(r.blocked.len(), 1);
    let b = &r.blocked[0];
    assert_eq!(
        (b.cause, b.includes_call_time, b.inside_call),
        (Cause::Blocked, true, false)
    );
    assert_eq!(b.call.as_deref(), Some("read"));
}

// ------------------------------------------------------------------ split calls

#[test]
fn unfinished_resumed_without_start_and_never_resumed() {
    let t = "\
[pid    11] 1795296993.000000 getpid() = 11 <0.000002>
[pid    11] 1795296993.000010 read(5</tmp/in>,  <unfinished ...>
[pid    12] 1795296993.000100 getpid() = 12 <0.000002>
[pid    11] 1795296993.500010 <... read resumed>\"abc\", 3) = 3 <0.500000>
[pid    13] 1795296993.600000 <... accept4 resumed>{sa_family=AF_INET, sin_port=htons(1), sin_addr=inet_addr(\"10.0.0.1\")}, [16], SOCK_CLOEXEC) = 8<TCP:[10.0.0.2:80->10.0.0.1:1]> <1.000000>
[pid    14] 1795296993.650000 getpid() = 14 <0.000002>
[pid    14] 1795296993.700000 wait4(-1,  <unfinished ...>
[pid    12] 1795296993.800000 nanosleep({tv_sec=5, tv_nsec=0},  <unfinished ...>
[pid    14] 1795296994.000000 +++ killed by SIGKILL +++
";
    let r = run(&[("f.txt", None, t)]);
    // A 0.5 s read on a regular file, split in two lines: io, inside the call.
    let io = r.gaps.iter().find(|g| g.pid == 11).expect("read gap");
    assert_eq!((io.cause, io.inside_call, io.line), (Cause::Io, true, 4));
    assert_eq!(io.resource.as_deref(), Some("/tmp/in"));
    assert!((io.seconds - 0.5).abs() < 1e-9);
    // Attached mid-accept: startup (its start is meaningless), blocked list.
    let s = r.blocked.iter().find(|g| g.pid == 13).expect("startup");
    assert_eq!(s.cause, Cause::Startup);
    assert!((s.seconds - 1.0).abs() < 1e-9);
    // Killed inside wait4: blocked until the kill.
    let w = r.blocked.iter().find(|g| g.pid == 14).expect("wait4");
    assert_eq!(
        (w.cause, w.call.as_deref()),
        (Cause::Blocked, Some("wait4"))
    );
    assert!((w.seconds - 0.3).abs() < 1e-9);
    let input = &r.inputs[0];
    assert_eq!(input.resumed_without_start, 1);
    assert_eq!(
        input.unfinished_never_resumed, 2,
        "wait4 killed + nanosleep at the end"
    );
    assert!(r.notes.iter().any(|n| n.contains("never resumed")));
}

#[test]
fn older_resumed_form_with_a_space() {
    let t = "\
[pid    11] 1795296993.000000 getpid() = 11 <0.000002>
[pid    11] 1795296993.000010 poll([{fd=3, events=POLLIN}], 1, -1 <unfinished ...>
[pid    12] 1795296993.100000 getpid() = 12 <0.000002>
[pid    11] 1795296993.400000 <... poll resumed> ) = 1 ([{fd=3, revents=POLLIN}]) <0.399990>
[pid    11] 1795296993.400100 getppid() = 1 <0.000002>
";
    let r = run(&[("f.txt", None, t)]);
    assert!(r.gaps.is_empty(), "{}", json(&r));
    assert_eq!(r.blocked.len(), 1);
    assert_eq!(r.blocked[0].call.as_deref(), Some("poll"));
    assert!(r.blocked[0]
        .after
        .as_deref()
        .unwrap()
        .starts_with("poll([{fd=3"));
}

// ------------------------------------------------------------------ timers

#[test]
fn sigprof_noise_merges_into_one_gap() {
    let mut t = String::from("1795296993.000000 getpid() = 7 <0.000001>\n");
    for k in 1..=6u64 {
        t += &format!(
            "{} --- SIGPROF {{si_signo=SIGPROF, si_code=SI_KERNEL}} ---\n",
            ts(k * 50_000)
        );
        t += &format!(
            "{} rt_sigreturn({{mask=[]}}) = 7 <0.000002>\n",
            ts(k * 50_000 + 10)
        );
    }
    t += &format!("{} getppid() = 1 <0.000001>\n", ts(330_001));
    let r = run(&[("trace.7", Some(7), &t)]);
    assert_eq!(r.gaps.len(), 1, "{}", json(&r));
    let g = &r.gaps[0];
    assert_eq!(g.timer_signals, 6);
    assert!((g.seconds - 0.33).abs() < 1e-9);
    assert_eq!(g.before.as_deref(), Some("getpid() = 7 <0.000001>"));
    assert_eq!(r.inputs[0].timer_signals, 6);
    // Without merging, no piece would reach 100 ms.
    let r = run_with(
        &[("trace.7", Some(7), &t)],
        GapOptions {
            min_gap_ns: 300_000_000,
            ..GapOptions::default()
        },
    );
    assert_eq!(r.gaps.len(), 1);
}

// ------------------------------------------------------------------ -f vs -ff

/// One call of a synthetic run: (pid, start µs, duration µs, name, first arg, rest, ret).
type Ev = (
    u32,
    u64,
    u64,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

/// A prefork server: parent 700 forks 701 and 702; each accepts, checks a password
/// against htpasswd (bcrypt), and serves a file.
fn web_run() -> Vec<Ev> {
    let mut ev: Vec<Ev> = vec![
        (
            700,
            0,
            300,
            "execve",
            r#""/usr/sbin/apache2""#,
            r#"["apache2"], 0x7ffd /* 20 vars */"#,
            "0",
        ),
        (
            700,
            1_000,
            10,
            "socket",
            "AF_INET",
            "SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_IP",
            "3<TCP:[0.0.0.0:80]>",
        ),
        (
            700,
            2_000,
            100,
            "clone",
            "child_stack=NULL",
            "flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f0000000a10",
            "701",
        ),
        (
            700,
            3_000,
            100,
            "clone",
            "child_stack=NULL",
            "flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f0000000a10",
            "702",
        ),
        (700, 4_000, 5_000_000, "wait4", "-1", "NULL, 0, NULL", "701"),
    ];
    for (pid, base, port) in [(701u32, 10_000u64, "52428"), (702, 60_000, "52430")] {
        let conn: &'static str = if port == "52428" {
            "8<TCP:[127.0.0.1:80->127.0.0.1:52428]>"
        } else {
            "8<TCP:[127.0.0.1:80->127.0.0.1:52430]>"
        };
        let rest_read: &'static str =
            r#""GET / HTTP/1.1\r\nAuthorization: Basic YWxpY2U6c2VjcmV0\r\n\r\n", 8000"#;
        ev.extend_from_slice(&[
            (
                pid,
                base,
                1_000_000,
                "accept4",
                "3<TCP:[0.0.0.0:80]>",
                "NULL, NULL, SOCK_CLOEXEC",
                conn,
            ),
            (pid, base + 1_000_100, 10, "read", conn, rest_read, "62"),
            (
                pid,
                base + 1_000_200,
                20,
                "openat",
                "AT_FDCWD</>",
                r#""/etc/apache2/htpasswd.users", O_RDONLY|O_CLOEXEC"#,
                "15</etc/apache2/htpasswd.users>",
            ),
            (
                pid,
                base + 1_000_300,
                10,
                "read",
                "15</etc/apache2/htpasswd.users>",
                r#""alice:$2y$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW\n", 4096"#,
                "61",
            ),
            (
                pid,
                base + 1_000_400,
                5,
                "close",
                "15</etc/apache2/htpasswd.users>",
                "",
                "0",
            ),
            (
                pid,
                base + 1_380_405,
                20,
                "openat",
                "AT_FDCWD</>",
                r#""/var/www/html/index.html", O_RDONLY|O_CLOEXEC"#,
                "15</var/www/html/index.html>",
            ),
            (
                pid,
                base + 1_380_500,
                30,
                "sendfile",
                conn,
                "15</var/www/html/index.html>, NULL, 512",
                "512",
            ),
            (
                pid,
                base + 1_380_600,
                10,
                "write",
                "9</var/log/apache2/access.log>",
                r#""127.0.0.1 - alice [21/Nov/2026"..., 90"#,
                "90",
            ),
            (pid, base + 1_380_700, 0, "exit_group", "0", "", "?"),
        ]);
    }
    ev
}

fn call_text(name: &str, first: &str, rest: &str) -> String {
    if rest.is_empty() {
        format!("{name}({first})")
    } else {
        format!("{name}({first}, {rest})")
    }
}

fn ret_text(ret: &str, dur: u64, name: &str) -> String {
    if name == "exit_group" {
        " = ?".to_string()
    } else {
        format!(" = {ret} <{}.{:06}>", dur / 1_000_000, dur % 1_000_000)
    }
}

/// The `-ff` files of the run.
fn ff_files(ev: &[Ev]) -> Vec<(String, String)> {
    let mut pids: Vec<u32> = ev.iter().map(|e| e.0).collect();
    pids.sort();
    pids.dedup();
    pids.into_iter()
        .map(|pid| {
            let mut text = String::new();
            for &(p, start, dur, name, first, rest, ret) in ev.iter().filter(|e| e.0 == pid) {
                let _ = p;
                text += &format!(
                    "{} {}{}\n",
                    ts(start),
                    call_text(name, first, rest),
                    ret_text(ret, dur, name)
                );
            }
            text += &format!(
                "{} +++ exited with 0 +++\n",
                ts(ev
                    .iter()
                    .filter(|e| e.0 == pid)
                    .map(|e| e.1 + e.2)
                    .max()
                    .unwrap()
                    + 50)
            );
            (format!("trace.{pid}"), text)
        })
        .collect()
}

/// The same run as one `-f -o FILE` file: calls that other threads' lines interrupt
/// are split into `<unfinished ...>` and `<... resumed>`.
fn f_file(ev: &[Ev]) -> String {
    let mut items: Vec<(u64, u32, String)> = Vec::new();
    for &(pid, start, dur, name, first, rest, ret) in ev {
        let end = start + dur;
        let interrupted = ev.iter().any(|o| o.0 != pid && o.1 > start && o.1 < end);
        if interrupted && !rest.is_empty() {
            items.push((start, pid, format!("{name}({first},  <unfinished ...>")));
            items.push((
                end,
                pid,
                format!("<... {name} resumed>{rest}){}", ret_text(ret, dur, name)),
            ));
        } else {
            items.push((
                start,
                pid,
                format!(
                    "{}{}",
                    call_text(name, first, rest),
                    ret_text(ret, dur, name)
                ),
            ));
        }
    }
    items.sort_by_key(|(t, pid, _)| (*t, *pid));
    items
        .into_iter()
        .map(|(t, pid, body)| format!("{pid:<5} {} {body}\n", ts(t)))
        .collect()
}

type Proj = (
    GapKind,
    Cause,
    u32,
    i64,
    i64,
    Option<String>,
    Option<String>,
);

fn project(r: &GapsReport) -> Vec<Proj> {
    r.gaps
        .iter()
        .chain(&r.blocked)
        .map(|g| {
            (
                g.kind,
                g.cause,
                g.pid,
                g.start_nanos,
                g.end_nanos,
                g.detail.clone(),
                g.resource.clone(),
            )
        })
        .collect()
}

#[test]
fn f_and_ff_of_one_run_give_the_same_gaps_alone_and_together() {
    let ev = web_run();
    let ff = ff_files(&ev);
    let f = f_file(&ev);
    assert!(
        f.contains("<unfinished ...>"),
        "the -f form must have split calls:\n{f}"
    );
    let alone_f = run(&[("run.f", None, &f)]);
    let alone_ff = run_ff(&ff);
    let mut all: Vec<(&str, Option<u32>, &str)> = vec![("run.f", None, f.as_str())];
    for (n, t) in &ff {
        all.push((n.as_str(), pid_from_file_name(n), t.as_str()));
    }
    let together = run(&all);
    let p = project(&alone_ff);
    assert_eq!(project(&alone_f), p, "-f:\n{}", json(&alone_f));
    assert_eq!(project(&together), p, "together:\n{}", json(&together));
    assert!(together.notes.iter().any(|n| n.contains("counted once")));
    // What the run holds: two auth gaps (bcrypt cost 12), two blocked accepts, a
    // blocked wait4.
    let auth: Vec<&Gap> = alone_ff
        .gaps
        .iter()
        .filter(|g| g.cause == Cause::Auth)
        .collect();
    assert_eq!(auth.len(), 2, "{}", json(&alone_ff));
    assert!(auth
        .iter()
        .all(|g| g.detail.as_deref() == Some("bcrypt cost 12")));
    assert!(auth.iter().all(|g| (g.seconds - 0.38).abs() < 1e-9));
    assert_eq!(alone_ff.blocked.len(), 3);
    // And no secret anywhere.
    for r in [&alone_f, &alone_ff, &together] {
        let j = json(r);
        assert!(!j.contains("R9h/cIPz0gi") && !j.contains("YWxpY2U6c2VjcmV0"));
    }
}

/// A run without `-y`: children inherit fds whose names only the parent's file holds.
fn inherit_run() -> Vec<(String, String)> {
    let p = |us: u64, body: &str| format!("{} {body}\n", ts(us));
    let parent = [
        p(0, r#"execve("/usr/sbin/httpd", ["httpd"], 0x7ffd /* 20 vars */) = 0 <0.000300>"#),
        p(1_000, r#"openat(AT_FDCWD, "/etc/httpd/passwords.htpasswd", O_RDONLY) = 5 <0.000010>"#),
        p(2_000, r#"openat(AT_FDCWD, "/var/log/httpd.log", O_WRONLY|O_CLOEXEC) = 6 <0.000010>"#),
        p(3_000, "clone(child_stack=NULL, flags=SIGCHLD) = 801 <0.000100>"),
        p(4_000, "clone(child_stack=NULL, flags=SIGCHLD) = 802 <0.000100>"),
        p(5_000, "clone(child_stack=0x7f0000001000, flags=CLONE_VM|CLONE_FILES|CLONE_THREAD, parent_tid=[803]) = 803 <0.000100>"),
        p(7_000, "wait4(-1, NULL, 0, NULL) = 801 <2.000000>"),
    ]
    .concat();
    let c801 = [
        p(
            10_000,
            r#"pread64(5, "alice:$2y$10$abcdefghijklmnopqrstuv", 64, 0) = 34 <0.000010>"#,
        ),
        p(310_010, r#"write(6, "x", 1) = 1 <0.000003>"#),
        p(
            400_013,
            r#"execve("/bin/true", ["true"], 0x7ffd /* 20 vars */) = 0 <0.000300>"#,
        ),
        p(
            420_000,
            r#"write(6, "y", 1) = -1 EBADF (Bad file descriptor) <0.000003>"#,
        ),
        p(720_003, "exit_group(0) = ?"),
    ]
    .concat();
    let c802 = [
        p(
            20_000,
            r#"read(5, "bob:{SHA}abcdefghijklmnopqrstuvwxyz=", 64) = 37 <0.000010>"#,
        ),
        p(270_010, "getpid() = 802 <0.000002>"),
        p(280_000, "dup2(6, 1) = 1 <0.000003>"),
        p(290_000, r#"write(1, "z", 1) = 1 <0.000003>"#),
        p(590_003, "exit_group(0) = ?"),
    ]
    .concat();
    let t803 = [
        p(30_000, r#"read(5, "", 64) = 0 <0.000010>"#),
        p(230_010, "getpid() = 800 <0.000002>"),
    ]
    .concat();
    vec![
        ("trace.800".to_string(), parent),
        ("trace.801".to_string(), c801),
        ("trace.802".to_string(), c802),
        ("trace.803".to_string(), t803),
    ]
}

#[test]
fn inherited_fds_are_named_whatever_the_file_order() {
    let files = inherit_run();
    let r = run_ff(&files);
    let g = gap_at(&r, 801, 2);
    assert_eq!(
        g.resource.as_deref(),
        Some("/etc/httpd/passwords.htpasswd"),
        "{}",
        json(&r)
    );
    assert_eq!(
        (g.cause, g.detail.as_deref()),
        (Cause::Auth, Some("bcrypt cost 10"))
    );
    // 801 exec'd: the O_CLOEXEC log is gone, the gap after the failed write points
    // back at the exec'd program.
    let g = gap_at(&r, 801, 5);
    assert_eq!(g.resource.as_deref(), Some("/bin/true"), "{}", json(&r));
    // 802 reads an {SHA} hash.
    let g = gap_at(&r, 802, 2);
    assert_eq!(
        (g.cause, g.detail.as_deref()),
        (Cause::Auth, Some("{SHA} (SHA-1)"))
    );
    // dup2 of the inherited log onto stdout.
    let g = gap_at(&r, 802, 5);
    assert_eq!(g.resource.as_deref(), Some("/var/log/httpd.log"));
    // The thread (CLONE_FILES) reads fd 5, open when it was created.
    let g = gap_at(&r, 803, 2);
    assert_eq!(g.resource.as_deref(), Some("/etc/httpd/passwords.htpasswd"));
    // The parent was started by strace (execve first): its wait is blocked, not startup.
    assert_eq!(r.blocked.len(), 1);
    assert_eq!(r.blocked[0].cause, Cause::Blocked);
    let reversed: Vec<_> = files.iter().rev().cloned().collect();
    assert_eq!(json(&r), json(&run_ff(&reversed)));
}

fn all_ff_files() -> Vec<(String, String)> {
    let mut files = inherit_run();
    files.extend(ff_files(&web_run()));
    files
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn shuffled_ff_inputs_give_the_same_report(shuffled in Just(all_ff_files()).prop_shuffle()) {
        prop_assert_eq!(json(&run_ff(&shuffled)), json(&run_ff(&all_ff_files())));
    }

    #[test]
    fn any_bytes_do_not_panic(lines in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..200), 0..20)) {
        let mut a = GapAnalyzer::new(GapOptions::default());
        a.begin_input("x", None);
        for (i, l) in lines.iter().enumerate() {
            a.line(i as u64 + 1, l);
        }
        let r = a.finish();
        prop_assert_eq!(r.lines.total, lines.len() as u64);
    }
}

// ------------------------------------------------------------------ rows

#[test]
fn flat_rows_have_every_column_and_one_row_per_interval() {
    let r = run(&[("trace.4242", Some(4242), HTPASSWD_FF)]);
    let rows = gap_rows(&r);
    assert_eq!(rows.len(), r.gaps.len() + r.blocked.len());
    assert_eq!(rows[0].kind, "gap");
    assert_eq!(rows[1].kind, "blocked");
    assert_eq!(rows[0].cause, "auth");
    let table = gap_table(&r);
    assert_eq!(table.columns.len(), GAP_COLUMNS.len());
    assert!(table.rows.iter().all(|row| row.len() == GAP_COLUMNS.len()));
    let names: Vec<&str> = GAP_COLUMNS.iter().map(|(n, _)| *n).collect();
    assert_eq!(names[..3], ["kind", "cause", "detail"]);
}

#[test]
fn json_shape() {
    let r = run(&[("trace.4242", Some(4242), HTPASSWD_FF)]);
    let v: serde_json::Value = serde_json::to_value(&r).unwrap();
    for key in [
        "min_gap_seconds",
        "lines",
        "inputs",
        "notes",
        "gaps",
        "blocked",
        "by_cause",
        "by_resource",
        "by_pid",
        "top",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    assert_eq!(v["lines"]["trace"], 9);
    assert_eq!(v["lines"]["skipped_by_reason"]["not_trace"], 0);
    assert_eq!(v["gaps"][0]["cause"], "auth");
    assert_eq!(v["gaps"][0]["kind"], "gap");
    assert_eq!(v["gaps"][0]["clock"], "unix");
    assert_eq!(v["gaps"][0]["resource_kind"], "file");
    assert_eq!(v["by_cause"][0]["count"], 1);
    assert!(v["by_cause"][0].get("p95_seconds").is_some());
    assert_eq!(v["inputs"][0]["pid_hint"], 4242);
    assert_eq!(v["inputs"][0]["calls_with_duration"], 9);
}

/// An input: its name, the PID hint its name gives, its bytes.
type Trace = (String, Option<u32>, Vec<u8>);

/// Every trace of the repository's corpus (real captures and hand-made forms), as
/// (name, PID hint from the name, bytes), in name order.
fn corpus_traces() -> Vec<Trace> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/strace");
    let mut dirs = vec![root];
    let mut out = Vec::new();
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                dirs.push(path);
            } else if name.contains(".trace") || name.ends_with(".strace") {
                let hint = pid_from_file_name(&name);
                let shown = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
                out.push((
                    shown.display().to_string(),
                    hint,
                    std::fs::read(&path).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

fn analyzer_of(inputs: &[Trace]) -> GapAnalyzer {
    let mut a = GapAnalyzer::new(GapOptions::default());
    for (name, hint, bytes) in inputs {
        a.begin_input(name, *hint);
        for (i, l) in bytes.split(|&b| b == b'\n').enumerate() {
            a.line(i as u64 + 1, l);
        }
        a.end_input();
    }
    a
}

#[test]
fn inputs_read_in_runs_then_absorbed_give_the_report_of_one_reading() {
    fn send<T: Send>(_: &T) {}
    let mut sets: Vec<Vec<Trace>> = vec![corpus_traces()];
    let as_bytes = |files: Vec<(String, String)>| -> Vec<Trace> {
        files
            .into_iter()
            .map(|(n, t)| (n.clone(), pid_from_file_name(&n), t.into_bytes()))
            .collect()
    };
    let web = web_run();
    let mut web_both = as_bytes(ff_files(&web));
    web_both.insert(1, ("run.f".into(), None, f_file(&web).into_bytes()));
    sets.push(web_both);
    sets.push(as_bytes(inherit_run()));
    // A child that uses its parent's fds, and whose first call waits.
    sets.push(as_bytes(parent_made_fds_run()));
    sets.push(as_bytes(parent_made_fds_run().into_iter().rev().collect()));
    // The children's files first, then their parent's.
    sets.push(as_bytes(inherit_run().into_iter().rev().collect()));
    assert!(sets[0].len() > 30, "{} traces", sets[0].len());
    for inputs in &sets {
        let whole = json(&analyzer_of(inputs).finish());
        for cut in 0..=inputs.len() {
            let (head, tail) = inputs.split_at(cut);
            let mut a = analyzer_of(head);
            let b = analyzer_of(tail);
            send(&b);
            a.absorb(b);
            assert_eq!(json(&a.finish()), whole, "cut before input {cut}");
        }
        // Three runs, absorbed one after the other.
        let third = inputs.len() / 3;
        let mut a = analyzer_of(&inputs[..third]);
        a.absorb(analyzer_of(&inputs[third..2 * third]));
        a.absorb(analyzer_of(&inputs[2 * third..]));
        assert_eq!(json(&a.finish()), whole, "three runs");
    }
}

/// A `-ff` run without `-y` in which what a child's calls mean depends on its
/// parent's fds: the child waits 0.25 s in its first call (attached or created is known
/// from its parent's file only), accepts on the listening socket its parent created,
/// and reads a secret cut by `-s` on a socket it inherited.
fn parent_made_fds_run() -> Vec<(String, String)> {
    let p = |us: u64, body: &str| format!("{} {body}\n", ts(us));
    let parent = [
        p(0, "socket(AF_INET, SOCK_STREAM|SOCK_CLOEXEC, IPPROTO_TCP) = 3 <0.000010>"),
        p(100, "bind(3, {sa_family=AF_INET, sin_port=htons(8443), sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 0 <0.000010>"),
        p(200, "listen(3, 511) = 0 <0.000010>"),
        p(300, "socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) = 5 <0.000010>"),
        p(400, "connect(5, {sa_family=AF_INET, sin_port=htons(389), sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 0 <0.000010>"),
        p(1_000, "clone(child_stack=NULL, flags=SIGCHLD) = 901 <0.000100>"),
        p(2_000, "wait4(-1, NULL, 0, NULL) = 901 <2.000000>"),
    ]
    .concat();
    let child = [
        p(
            1_000,
            "nanosleep({tv_sec=0, tv_nsec=5000000}, NULL) = 0 <0.250000>",
        ),
        p(
            260_000,
            "accept4(3, NULL, NULL, SOCK_CLOEXEC) = 4 <0.000010>",
        ),
        p(
            300_000,
            "read(4, \"GET / HTTP/1.1\\r\\n\", 8000) = 16 <0.000010>",
        ),
        p(
            310_000,
            "read(5, \"userPassword: {SSHA}abcdefghijklmnopqrstu\"..., 32) = 32 <0.000010>",
        ),
        p(
            320_000,
            "read(5, \"vwxyz0123456789\\n\", 32) = 16 <0.000010>",
        ),
        p(620_000, "getpid() = 901 <0.000002>"),
        p(900_000, "exit_group(0) = ?"),
    ]
    .concat();
    vec![
        ("trace.900".to_string(), parent),
        ("trace.901".to_string(), child),
    ]
}

#[test]
fn ff_file_order_changes_no_answer_even_where_a_child_uses_its_parents_fds() {
    let files = parent_made_fds_run();
    let ahead = run_ff(&files);
    let behind = run_ff(&files.iter().rev().cloned().collect::<Vec<_>>());
    // Read parent first, the child's accepted socket used to be named after the
    // listening socket the parent's table held, child first after its number: now the
    // number either way (the parent's socket is named where the child touches it
    // itself: the LDAP connection, resolved at report time).
    assert_eq!(json(&ahead), json(&behind));
    let g = gap_at(&ahead, 901, 6);
    assert_eq!(g.resource.as_deref(), Some("TCP:[->127.0.0.1:389]"));
    assert!(
        g.resources.iter().any(|r| r == "socket:[accepted on fd 3]"),
        "{:?}",
        g.resources
    );
    assert!(!json(&ahead).contains("vwxyz0123"), "{}", json(&ahead));
    assert!(!ahead.gaps.is_empty(), "{}", json(&ahead));
}
