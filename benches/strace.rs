//! strace line-parser throughput, in MB/s.
//!
//! The trace is generated (deterministic, about 4 MB, 30 000 lines) in the
//! `strace -f -tt -T -y -o` style of an Apache worker pool: bare PIDs, `-tt` stamps,
//! `-T` durations, `-y` decorations on fds (files, TCP sockets, pipes), `-s 32` strings
//! with escapes and `"..."...` cuts, `epoll_wait`/`futex` calls split into
//! `<unfinished ...>`/`<... resumed>` pairs between workers, errors with errno text,
//! `/* comments */`, signals and the odd exit. Every line is checked to parse first.
//!
//! `strace/parse` is `parse_line` on every line; `strace/args` also splits every
//! call's arguments with `args` and reads fds with `fd_arg` and strings with `quoted`
//! (what the gap analysis reads); `strace/s4096` is `parse_line` on a trace made with
//! `-s 4096` (long strings dominate).
//!
//! Run: `cargo bench -p tlsgap-benches --bench strace -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tlsgap_parser::strace::{args, fd_arg, parse_line, quoted, Body};

/// Lines per generated trace.
const LINES: usize = 30_000;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// strace's quoting of `raw`, cut at `max` bytes like `-s`.
fn quote(raw: &[u8], max: usize) -> String {
    let mut out = String::from("\"");
    for &b in raw.iter().take(max) {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b' '..=b'~' => out.push(b as char),
            _ => out.push_str(&format!("\\{b:o}")),
        }
    }
    out.push('"');
    if raw.len() > max {
        out.push_str("...");
    }
    out
}

const REQUESTS: &[&[u8]] = &[
    b"GET /index.html HTTP/1.1\r\nHost: www.example.org\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\nAccept: */*\r\nAuthorization: Basic YWxpY2U6c2VjcmV0\r\n\r\n",
    b"POST /api/v1/orders HTTP/1.1\r\nHost: api.example.org\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"id\": 7, \"qty\": \"3) = 1\"}",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\xd1\x9e\x00\x8a\x13\x01\x13\x02\x13\x03\xc0\x2b\xc0\x2f\xc0\x2c\xc0\x30\xcc\xa9\xcc\xa8",
];
const FILES: &[&str] = &[
    "/var/www/html/index.html",
    "/etc/apache2/.htpasswd",
    "/var/www/html/static/app.3f9a1c.js",
    "/usr/lib/x86_64-linux-gnu/libssl.so.3",
    "/var/log/apache2/access.log",
];
const HTPASSWD: &[u8] =
    b"alice:$2y$13$Ie0xW7ZpR9iHqS1Uo2XnE.OGsm9nE2Pk4cGm4U8bB3z7lJfa3a1xW\nbob:{SHA}fEqNCco3Yq9h5ZUglD3CZJT4lBs=\n";

fn trace(seed: u64, max_string: usize) -> Vec<u8> {
    let mut rng = Rng(seed);
    let mut out = Vec::with_capacity(LINES * 140);
    let mut now_us: u64 = 61_200_000_000; // 17:00:00
    let pids = [2811u32, 2812, 2813, 2814, 2815, 2816, 2817, 2818];
    // A worker blocked in epoll_wait/futex, waiting to resume.
    let mut pending: Vec<(u32, &str)> = Vec::new();
    let mut n = 0;
    while n < LINES {
        now_us += rng.below(400);
        let s = now_us / 1_000_000;
        let stamp = format!(
            "{:02}:{:02}:{:02}.{:06}",
            s / 3600 % 24,
            s / 60 % 60,
            s % 60,
            now_us % 1_000_000
        );
        let pid = rng.pick(&pids);
        let dur = format!("<0.{:06}>", rng.below(2000));
        let fd = 10 + rng.below(20);
        let port = 40_000 + rng.below(20_000);
        let sock = format!("{fd}<TCPv6:[[::ffff:127.0.0.1]:443->[::ffff:127.0.0.1]:{port}]>");
        let body = match rng.below(20) {
            0 | 1 => {
                let req = rng.pick(REQUESTS);
                let len = req.len();
                format!("read({sock}, {}, 8000) = {len} {dur}", quote(req, max_string))
            }
            2 => {
                let file = rng.pick(FILES);
                let ret = 15 + rng.below(5);
                format!("openat(AT_FDCWD</>, \"{file}\", O_RDONLY|O_CLOEXEC) = {ret}<{file}> {dur}")
            }
            3 => format!("read(15</etc/apache2/.htpasswd>, {}, 4096) = {} {dur}", quote(HTPASSWD, max_string), HTPASSWD.len()),
            4 => format!("close(15</etc/apache2/.htpasswd>) = 0 {dur}"),
            5 => format!("newfstatat(15</var/www/html/index.html>, \"\", {{st_mode=S_IFREG|0644, st_size={}, ...}}, AT_EMPTY_PATH) = 0 {dur}", rng.below(100_000)),
            6 => format!("write(7</var/log/apache2/access.log>, {}, 182) = 182 {dur}", quote(b"127.0.0.1 - alice [21/Nov/2026:17:00:01 +0000] \"GET /index.html HTTP/1.1\" 200 5120 \"-\" \"curl/8.5.0\"\n", max_string)),
            7 => format!("writev({sock}, [{{iov_base={}, iov_len=254}}, {{iov_base={}, iov_len=5120}}], 2) = 5374 {dur}",
                quote(b"HTTP/1.1 200 OK\r\nDate: Sat, 21 Nov 2026 17:00:01 GMT\r\nServer: Apache\r\n", max_string),
                quote(b"<!doctype html>\n<html><head><title>It works</title>", max_string)),
            8 => format!("poll([{{fd={fd}, events=POLLIN}}], 1, 60000) = 1 ([{{fd={fd}, revents=POLLIN}}]) {dur}"),
            9 => format!("mmap(NULL, 262144, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f{:010x} {dur}", rng.next() & 0xff_ffff_ffff),
            10 => format!("accept4(4<TCPv6:[[::]:443]>, {{sa_family=AF_INET6, sin6_port=htons({port}), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, \"::ffff:127.0.0.1\", &sin6_addr), sin6_scope_id=0}}, [128 => 28], SOCK_CLOEXEC) = {sock} {dur}"),
            11 => format!("read({sock}, 0x7f3c4c01a2b3, 8000) = -1 EAGAIN (Resource temporarily unavailable) {dur}"),
            12 => format!("stat(\"/var/www/html/missing.php\", 0x7ffd1f5e3c40) = -1 ENOENT (No such file or directory) {dur}"),
            13 => format!("getpid() = {pid} {dur}"),
            14 => format!("fcntl({sock}, F_GETFL) = 0x2 (flags O_RDWR) {dur}"),
            15 if !pending.iter().any(|(p, _)| *p == pid) => {
                let name = rng.pick(&["epoll_wait", "futex"]);
                pending.push((pid, name));
                match name {
                    "epoll_wait" => "epoll_wait(9<anon_inode:[eventpoll]>,  <unfinished ...>".to_string(),
                    _ => "futex(0x55d0c2a3b2c8, FUTEX_WAIT_PRIVATE, 0, NULL <unfinished ...>".to_string(),
                }
            }
            16 if !pending.is_empty() => {
                let (p, name) = pending.remove(rng.below(pending.len() as u64) as usize);
                let body = match name {
                    "epoll_wait" => format!("<... epoll_wait resumed>[{{events=EPOLLIN, data={{u32={fd}, u64={fd}}}}}], 2, 10000) = 1 {dur}"),
                    _ => format!("<... futex resumed>) = 0 {dur}"),
                };
                out.extend_from_slice(format!("{p:<5} {stamp} {body}\n").as_bytes());
                n += 1;
                continue;
            }
            17 => "--- SIGPROF {si_signo=SIGPROF, si_code=SI_KERNEL} ---".to_string(),
            18 => format!("rt_sigprocmask(SIG_SETMASK, [], NULL, 8) = 0 {dur}"),
            _ => format!("execve(\"/usr/sbin/apache2\", [\"apache2\", \"-k\", \"start\"], 0x7ffc /* 22 vars */) = 0 {dur}"),
        };
        out.extend_from_slice(format!("{pid:<5} {stamp} {body}\n").as_bytes());
        n += 1;
    }
    out
}

fn lines(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    buf.split(|&b| b == b'\n').filter(|l| !l.is_empty())
}

/// `parse_line` on every line; counts calls (so nothing is optimised away).
fn parse_all(buf: &[u8]) -> usize {
    lines(buf)
        .filter(|l| matches!(parse_line(l), Ok(t) if matches!(t.body, Body::Call(_) | Body::Resumed(_))))
        .count()
}

/// Also split every call's arguments and read fds and strings.
fn args_all(buf: &[u8]) -> (usize, usize) {
    let (mut fds, mut strings) = (0, 0);
    for line in lines(buf) {
        if let Ok(t) = parse_line(line) {
            if let Body::Call(c) | Body::Resumed(c) = t.body {
                for a in args(c.args) {
                    if fd_arg(a).is_some() {
                        fds += 1;
                    } else if let Some((s, _)) = quoted(a) {
                        strings += s.len();
                    }
                }
            }
        }
    }
    (fds, strings)
}

fn benches(c: &mut Criterion) {
    let short = trace(0x5eed_57ace, 32);
    let long = trace(0x5eed_57ace, 4096);
    for buf in [&short, &long] {
        for line in lines(buf) {
            if let Err(e) = parse_line(line) {
                panic!("{e:?}: {}", String::from_utf8_lossy(line));
            }
        }
    }
    let mut g = c.benchmark_group("strace");
    g.sample_size(30);
    g.throughput(Throughput::Bytes(short.len() as u64));
    g.bench_function("parse", |b| {
        b.iter(|| black_box(parse_all(black_box(&short))))
    });
    g.bench_function("args", |b| {
        b.iter(|| black_box(args_all(black_box(&short))))
    });
    g.throughput(Throughput::Bytes(long.len() as u64));
    g.bench_function("s4096", |b| {
        b.iter(|| black_box(parse_all(black_box(&long))))
    });
    g.finish();
    eprintln!(
        "strace bench traces: {} lines, {:.1} MB (-s 32), {:.1} MB (-s 4096)",
        LINES,
        short.len() as f64 / 1e6,
        long.len() as f64 / 1e6
    );
}

criterion_group!(strace_benches, benches);
criterion_main!(strace_benches);
