//! Line-parser throughput, per format, in MB/s.
//!
//! Each bench parses an in-memory log of about 10 000 lines (~2.5 MB for the
//! combined layouts) made by a small deterministic generator: varied IPv4/IPv6
//! clients, mostly `-` users, times that advance by 0–2 s (so the time cache sees
//! the repeats real logs have), a few escaped bytes in targets, User-Agents with
//! escaped quotes, ~60 % TLSv1.3, ~30 % TLSv1.2, a few old protocols and plain-HTTP
//! lines. Every generated line is checked to parse before anything is measured.
//!
//! `parse/*` measures splitting the buffer into lines and `LineParser::parse`;
//! `tls/*` also reads what `tlsgap tls` reads per line (client, protocol, cipher)
//! and counts protocols, so that lazy work that parsing skipped is paid for.
//!
//! Run: `cargo bench -p tlsgap-benches -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tlsgap_parser::{Format, LineParser, Record, Role};

/// Lines per generated log.
const LINES: usize = 10_000;

// ------------------------------------------------------------------ generator

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

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The values of one request before a server escapes and writes them.
struct Entry {
    client: String,
    user: Option<&'static str>,
    unix: i64,
    method: &'static str,
    target: Vec<u8>,
    protocol: &'static str,
    status: u16,
    bytes: u64,
    referer: Option<String>,
    user_agent: Vec<u8>,
    tls: Option<(&'static str, &'static str)>,
    duration_us: u64,
    pid: u32,
    vhost: &'static str,
}

const USER_AGENTS: &[&[u8]] = &[
    b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
    b"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    b"Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
    b"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
    b"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    b"curl/8.5.0",
    b"python-requests/2.31.0",
    b"Go-http-client/1.1",
    b"Mozilla/5.0 (compatible; \"scanner\" v2; +https://scan.example/about)",
    b"Java/1.8.0_292 \"legacy\" client",
];

const PATHS: &[&str] = &[
    "/",
    "/index.html",
    "/static/app.3f9a1c.js",
    "/static/style.css",
    "/api/v1/orders",
    "/api/v1/users/",
    "/images/logo.png",
    "/search",
    "/wp-login.php",
    "/favicon.ico",
];

const TLS13: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];
const TLS12: &[&str] = &[
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-AES256-SHA",
];
const OLD: &[(&str, &str)] = &[
    ("TLSv1", "ECDHE-RSA-AES256-SHA"),
    ("TLSv1.1", "ECDHE-RSA-AES128-SHA"),
    ("TLSv1", "AES128-SHA"),
];

fn entries(seed: u64) -> Vec<Entry> {
    let mut rng = Rng(seed);
    let mut unix = 1_795_297_000i64;
    (0..LINES)
        .map(|_| {
            unix += rng.below(3) as i64;
            let client = if rng.chance(10) {
                format!(
                    "2001:db8:{:x}:{:x}::{:x}",
                    rng.below(0x10000),
                    rng.below(0x10000),
                    rng.below(0x10000)
                )
            } else {
                format!(
                    "{}.{}.{}.{}",
                    rng.below(223) + 1,
                    rng.below(256),
                    rng.below(256),
                    rng.below(254) + 1
                )
            };
            let mut target = rng.pick(PATHS).as_bytes().to_vec();
            if rng.chance(40) {
                target.extend_from_slice(
                    format!("?id={}&page={}", rng.below(100_000), rng.below(50)).as_bytes(),
                );
            }
            if rng.chance(3) {
                // Raw UTF-8 and a quote in the target: escaped differently by each server.
                target.extend_from_slice("/caf\u{e9}\"x".as_bytes());
            }
            let tls = match rng.below(100) {
                0..=59 => Some(("TLSv1.3", rng.pick(TLS13))),
                60..=89 => Some(("TLSv1.2", rng.pick(TLS12))),
                90..=94 => Some(rng.pick(OLD)),
                _ => None,
            };
            let status = rng.pick(&[200, 200, 200, 200, 200, 200, 304, 301, 404, 500]);
            Entry {
                client,
                user: rng
                    .chance(3)
                    .then(|| rng.pick(&["alice", "bob", "svc-backup"])),
                unix,
                method: rng.pick(&["GET", "GET", "GET", "GET", "GET", "POST", "HEAD"]),
                target,
                protocol: rng.pick(&["HTTP/1.1", "HTTP/1.1", "HTTP/2.0", "HTTP/1.0"]),
                status,
                bytes: if status == 304 {
                    0
                } else {
                    rng.below(60_000) + 1
                },
                referer: rng
                    .chance(45)
                    .then(|| format!("https://www.example.com{}", rng.pick(PATHS))),
                user_agent: rng.pick(USER_AGENTS).to_vec(),
                tls,
                duration_us: rng.below(2_000_000) + 50,
                pid: 11_000 + rng.below(16) as u32,
                vhost: rng.pick(&["www.example.com", "api.example.com", "example.org"]),
            }
        })
        .collect()
}

// ------------------------------------------------------------------ writers

#[derive(Clone, Copy, PartialEq)]
enum Esc {
    Apache,
    Nginx,
    Json,
}

fn escape(out: &mut Vec<u8>, raw: &[u8], esc: Esc) {
    for &b in raw {
        match (esc, b) {
            (Esc::Apache | Esc::Json, b'"') => out.extend_from_slice(b"\\\""),
            (Esc::Apache | Esc::Json, b'\\') => out.extend_from_slice(b"\\\\"),
            (Esc::Apache, 0..=0x1f | 0x7f..=0xff) => {
                out.extend_from_slice(format!("\\x{b:02x}").as_bytes())
            }
            (Esc::Nginx, b'"' | b'\\' | 0..=0x1f | 0x7f..=0xff) => {
                out.extend_from_slice(format!("\\x{b:02X}").as_bytes())
            }
            (Esc::Json, 0..=0x1f) => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Local civil time for `unix` at `offset_minutes`.
fn civil(unix: i64, offset_minutes: i64) -> (i64, usize, i64, i64, i64, i64) {
    let t = unix + offset_minutes * 60;
    let mut days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut y = 1970;
    while days >= if leap(y) { 366 } else { 365 } {
        days -= if leap(y) { 366 } else { 365 };
        y += 1;
    }
    let lens = [
        31,
        if leap(y) { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let mut m = 0;
    while days >= lens[m] {
        days -= lens[m];
        m += 1;
    }
    (y, m, days + 1, secs / 3600, secs / 60 % 60, secs % 60)
}

/// All generated logs use this offset (+01:00).
const OFFSET: i64 = 60;

fn clf(unix: i64) -> String {
    let (y, m, d, h, mi, s) = civil(unix, OFFSET);
    format!("{d:02}/{}/{y}:{h:02}:{mi:02}:{s:02} +0100", MONTHS[m])
}

fn iso(unix: i64) -> String {
    let (y, m, d, h, mi, s) = civil(unix, OFFSET);
    format!("{y}-{:02}-{d:02}T{h:02}:{mi:02}:{s:02}+01:00", m + 1)
}

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    CombinedSsl,
    CombinedSslDp,
    Combined,
    Common,
    VhostCombined,
    SslRequest,
    NginxSsl,
    NginxCombined,
    NginxJson,
}

fn write_line(out: &mut Vec<u8>, e: &Entry, layout: Layout) {
    use Layout::*;
    let esc = match layout {
        NginxSsl | NginxCombined => Esc::Nginx,
        NginxJson => Esc::Json,
        _ => Esc::Apache,
    };
    let request = |out: &mut Vec<u8>| {
        let mut r = Vec::with_capacity(e.target.len() + 16);
        r.extend_from_slice(e.method.as_bytes());
        r.push(b' ');
        r.extend_from_slice(&e.target);
        r.push(b' ');
        r.extend_from_slice(e.protocol.as_bytes());
        escape(out, &r, esc);
    };
    let user = e.user.unwrap_or("-");
    let (proto, cipher) = e.tls.unwrap_or(("-", "-"));
    // Apache's %b writes `-` for an empty body; %O and nginx always write a number.
    let clf_bytes = if e.bytes == 0 {
        "-".to_string()
    } else {
        e.bytes.to_string()
    };
    let referer = e.referer.as_deref().unwrap_or("-");
    let head = |out: &mut Vec<u8>, time: &str| {
        out.extend_from_slice(format!("{} - {user} {time} \"", e.client).as_bytes());
    };
    match layout {
        CombinedSsl | CombinedSslDp | Combined | Common | VhostCombined | NginxSsl
        | NginxCombined => {
            if layout == VhostCombined {
                out.extend_from_slice(format!("{}:443 ", e.vhost).as_bytes());
            }
            head(out, &format!("[{}]", clf(e.unix)));
            request(out);
            let bytes = match layout {
                VhostCombined | NginxSsl | NginxCombined => e.bytes.to_string(),
                _ => clf_bytes,
            };
            out.extend_from_slice(format!("\" {} {bytes}", e.status).as_bytes());
            if layout != Common {
                out.extend_from_slice(format!(" \"{referer}\" \"").as_bytes());
                escape(out, &e.user_agent, esc);
                out.push(b'"');
            }
            if matches!(layout, CombinedSsl | CombinedSslDp | NginxSsl) {
                out.extend_from_slice(format!(" {proto} {cipher}").as_bytes());
            }
            if layout == CombinedSslDp {
                out.extend_from_slice(format!(" {} {}", e.duration_us, e.pid).as_bytes());
            }
        }
        SslRequest => {
            out.extend_from_slice(
                format!("[{}] {} {proto} {cipher} \"", clf(e.unix), e.client).as_bytes(),
            );
            request(out);
            out.extend_from_slice(format!("\" {clf_bytes}").as_bytes());
        }
        NginxJson => {
            // Not-found variables are empty strings under escape=json.
            let blank = |v: &str| {
                if v == "-" {
                    String::new()
                } else {
                    v.to_string()
                }
            };
            out.extend_from_slice(
                format!(
                    "{{\"time\":\"{}\",\"remote_addr\":\"{}\",\"remote_user\":\"{}\",\"request\":\"",
                    iso(e.unix),
                    e.client,
                    blank(user)
                )
                .as_bytes(),
            );
            request(out);
            out.extend_from_slice(
                format!(
                    "\",\"status\":{},\"body_bytes_sent\":{},\"http_referer\":\"{}\",\"http_user_agent\":\"",
                    e.status,
                    e.bytes,
                    blank(referer)
                )
                .as_bytes(),
            );
            escape(out, &e.user_agent, esc);
            let ms = e.duration_us / 1000;
            out.extend_from_slice(
                format!(
                    "\",\"ssl_protocol\":\"{}\",\"ssl_cipher\":\"{}\",\"request_time\":{}.{:03}}}",
                    blank(proto),
                    blank(cipher),
                    ms / 1000,
                    ms % 1000
                )
                .as_bytes(),
            );
        }
    }
    out.push(b'\n');
}

// ------------------------------------------------------------------ benches

const COMBINEDSSL_DP: &str = r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %D %P"#;
const NGINX_JSON: &str = r#"log_format nginx_json escape=json '{"time":"$time_iso8601","remote_addr":"$remote_addr","remote_user":"$remote_user","request":"$request","status":$status,"body_bytes_sent":$body_bytes_sent,"http_referer":"$http_referer","http_user_agent":"$http_user_agent","ssl_protocol":"$ssl_protocol","ssl_cipher":"$ssl_cipher","request_time":$request_time}';"#;

/// Bench name, format spec, how lines are written, whether it logs TLS.
const CASES: &[(&str, &str, Layout, bool)] = &[
    ("combinedssl", "combinedssl", Layout::CombinedSsl, true),
    (
        "combinedssl_dp",
        COMBINEDSSL_DP,
        Layout::CombinedSslDp,
        true,
    ),
    ("combined", "combined", Layout::Combined, false),
    ("common", "common", Layout::Common, false),
    (
        "vhost_combined",
        "vhost_combined",
        Layout::VhostCombined,
        false,
    ),
    ("ssl_request", "ssl_request", Layout::SslRequest, true),
    ("nginx-ssl", "nginx-ssl", Layout::NginxSsl, true),
    (
        "nginx-combined",
        "nginx-combined",
        Layout::NginxCombined,
        false,
    ),
    ("nginx-json", NGINX_JSON, Layout::NginxJson, true),
];

fn lines(buf: &[u8]) -> impl Iterator<Item = &[u8]> {
    buf.strip_suffix(b"\n")
        .unwrap_or(buf)
        .split(|&b| b == b'\n')
}

/// The log for `layout`, checked line by line against `format`.
fn log_for(name: &str, format: &Format, layout: Layout, entries: &[Entry]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(entries.len() * 300);
    for e in entries {
        write_line(&mut buf, e, layout);
    }
    let mut parser = LineParser::new(format);
    let mut rec = Record::new(format);
    for (n, line) in lines(&buf).enumerate() {
        if let Err(reason) = parser.parse(line, &mut rec) {
            panic!(
                "{name}: generated line {} does not parse ({reason}): {}",
                n + 1,
                String::from_utf8_lossy(line)
            );
        }
    }
    eprintln!(
        "{name}: {} lines, {} bytes ({:.0} bytes a line)",
        entries.len(),
        buf.len(),
        buf.len() as f64 / entries.len() as f64
    );
    buf
}

fn parse_all(parser: &mut LineParser<'_>, format: &Format, buf: &[u8]) -> usize {
    let mut rec = Record::new(format);
    let mut ok = 0;
    for line in lines(buf) {
        ok += usize::from(parser.parse(line, &mut rec).is_ok());
    }
    ok
}

/// What `tlsgap tls` needs per line: client, protocol and cipher, counted by protocol.
fn tls_all(parser: &mut LineParser<'_>, format: &Format, buf: &[u8]) -> [usize; 8] {
    let mut rec = Record::new(format);
    let mut counts = [0usize; 8];
    for line in lines(buf) {
        if parser.parse(line, &mut rec).is_err() {
            continue;
        }
        let client = rec.raw_role(Role::Client);
        let cipher = rec.raw_role(Role::TlsCipher);
        let slot = match rec.raw_role(Role::TlsProtocol) {
            None => 0,
            Some(b"TLSv1.3") => 1,
            Some(b"TLSv1.2") => 2,
            Some(b"TLSv1.1") => 3,
            Some(b"TLSv1") => 4,
            Some(_) => 5,
        };
        counts[slot] += 1;
        counts[6] += client.map_or(0, <[u8]>::len);
        counts[7] += cipher.map_or(0, <[u8]>::len);
    }
    counts
}

fn benches(c: &mut Criterion) {
    let entries = entries(0x7157_9a9e_u64);
    let mut parse = c.benchmark_group("parse");
    parse.sample_size(30);
    let mut logs = Vec::new();
    for &(name, spec, layout, has_tls) in CASES {
        let format = Format::compile(spec).unwrap_or_else(|e| panic!("{name}: {e}"));
        let buf = log_for(name, &format, layout, &entries);
        parse.throughput(Throughput::Bytes(buf.len() as u64));
        parse.bench_function(name, |b| {
            let mut parser = LineParser::new(&format);
            b.iter(|| black_box(parse_all(&mut parser, &format, black_box(&buf))));
        });
        logs.push((name, format, buf, has_tls));
    }
    parse.finish();

    let mut tls = c.benchmark_group("tls");
    tls.sample_size(30);
    for (name, format, buf, has_tls) in &logs {
        if !has_tls {
            continue;
        }
        let counts = tls_all(&mut LineParser::new(format), format, buf);
        assert_eq!(counts[..6].iter().sum::<usize>(), LINES, "{name}");
        assert!(
            counts[1] > LINES / 2,
            "{name}: about 60 % TLSv1.3, got {counts:?}"
        );
        tls.throughput(Throughput::Bytes(buf.len() as u64));
        tls.bench_function(*name, |b| {
            let mut parser = LineParser::new(format);
            b.iter(|| black_box(tls_all(&mut parser, format, black_box(buf))));
        });
    }
    tls.finish();
}

criterion_group!(parse_benches, benches);
criterion_main!(parse_benches);
