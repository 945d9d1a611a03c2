//! Round trips: random records are written the way Apache and nginx write them
//! (their escaping, their `-` for absent values, their time formats), parsed back, and
//! every value must come back unchanged. Also: any bytes through any format never
//! panic, and the edge cases the reference calls out.
//!
//! The escapers here are written from the reference (`shared/reference/
//! access-log-formats.md`), not from the parser, so that they check it.

use proptest::prelude::*;
use tlsgap_parser::{Format, LineParser, Record, Role, Timestamp};

// ------------------------------------------------------------------ the model

/// `%u` / `$remote_user`.
#[derive(Debug, Clone)]
enum User {
    /// No authentication: `-`.
    Absent,
    /// Authenticated with an empty name: Apache writes `""`, nginx nothing.
    Empty,
    Name(Vec<u8>),
}

/// One request, as the server knew it before writing the log.
#[derive(Debug, Clone)]
struct Req {
    client: String,
    user: User,
    /// Seconds since the epoch and the server's UTC offset in minutes.
    unix: i64,
    offset_minutes: i16,
    method: &'static str,
    target: Vec<u8>,
    protocol: &'static str,
    status: u16,
    bytes: Option<u64>,
    referer: Option<Vec<u8>>,
    user_agent: Option<Vec<u8>>,
    tls_protocol: Option<String>,
    tls_cipher: Option<String>,
    duration_us: u64,
    pid: u32,
}

impl Req {
    fn request_line(&self) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend_from_slice(self.method.as_bytes());
        r.push(b' ');
        r.extend_from_slice(&self.target);
        r.push(b' ');
        r.extend_from_slice(self.protocol.as_bytes());
        r
    }

    fn timestamp(&self) -> Timestamp {
        Timestamp {
            unix: self.unix,
            nanos: 0,
            offset_minutes: Some(self.offset_minutes),
        }
    }
}

// ------------------------------------------------------------------ time text

/// Civil date of a day number, by counting whole years and months: slow and plain, so
/// that it checks the parser's arithmetic rather than repeating it.
fn civil(mut days: i64) -> (i64, u32, u32) {
    let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let mut y = 1970;
    while days < 0 {
        y -= 1;
        days += if leap(y) { 366 } else { 365 };
    }
    loop {
        let len = if leap(y) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
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
    (y, m as u32 + 1, days as u32 + 1)
}

struct Local {
    y: i64,
    mo: u32,
    d: u32,
    h: i64,
    mi: i64,
    s: i64,
    sign: char,
    off_h: u16,
    off_m: u16,
}

fn local(unix: i64, offset_minutes: i16) -> Local {
    let t = unix + i64::from(offset_minutes) * 60;
    let (y, mo, d) = civil(t.div_euclid(86_400));
    let secs = t.rem_euclid(86_400);
    let a = offset_minutes.unsigned_abs();
    Local {
        y,
        mo,
        d,
        h: secs / 3600,
        mi: secs / 60 % 60,
        s: secs % 60,
        sign: if offset_minutes < 0 { '-' } else { '+' },
        off_h: a / 60,
        off_m: a % 60,
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `21/Nov/2026:18:07:40 -0330`.
fn clf(unix: i64, offset_minutes: i16) -> String {
    let l = local(unix, offset_minutes);
    format!(
        "{:02}/{}/{:04}:{:02}:{:02}:{:02} {}{:02}{:02}",
        l.d,
        MONTHS[l.mo as usize - 1],
        l.y,
        l.h,
        l.mi,
        l.s,
        l.sign,
        l.off_h,
        l.off_m
    )
}

/// `2026-11-21T18:08:24-03:30`.
fn iso8601(unix: i64, offset_minutes: i16) -> String {
    let l = local(unix, offset_minutes);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{}{:02}:{:02}",
        l.y, l.mo, l.d, l.h, l.mi, l.s, l.sign, l.off_h, l.off_m
    )
}

// ------------------------------------------------------------------ escapers

/// Apache `ap_escape_logitem`.
fn apache_escape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 8);
    for &b in raw {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x0b => out.extend_from_slice(b"\\v"),
            0x00..=0x1f | 0x7f..=0xff => {
                out.extend_from_slice(format!("\\x{b:02x}").as_bytes());
            }
            _ => out.push(b),
        }
    }
    out
}

/// nginx `escape=default`.
fn nginx_escape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 8);
    for &b in raw {
        match b {
            b'"' | b'\\' | 0x00..=0x1f | 0x7f..=0xff => {
                out.extend_from_slice(format!("\\x{b:02X}").as_bytes());
            }
            _ => out.push(b),
        }
    }
    out
}

/// nginx `escape=json`: 0x7f and bytes ≥ 0x80 stay raw.
fn json_escape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + 8);
    for &b in raw {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0x00..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out
}

/// How each renderer writes one value.
trait Dialect {
    fn escape(raw: &[u8]) -> Vec<u8>;
    /// An absent value.
    const ABSENT: &'static [u8];
}

struct Apache;
impl Dialect for Apache {
    fn escape(raw: &[u8]) -> Vec<u8> {
        apache_escape(raw)
    }
    const ABSENT: &'static [u8] = b"-";
}

struct Nginx;
impl Dialect for Nginx {
    fn escape(raw: &[u8]) -> Vec<u8> {
        nginx_escape(raw)
    }
    const ABSENT: &'static [u8] = b"-";
}

/// With `escape=json`, nginx writes a variable that is not found as an empty string.
struct NginxJson;
impl Dialect for NginxJson {
    fn escape(raw: &[u8]) -> Vec<u8> {
        json_escape(raw)
    }
    const ABSENT: &'static [u8] = b"";
}

fn opt<D: Dialect>(v: &Option<Vec<u8>>) -> Vec<u8> {
    match v {
        Some(v) => D::escape(v),
        None => D::ABSENT.to_vec(),
    }
}

fn opt_str<D: Dialect>(v: &Option<String>) -> Vec<u8> {
    opt::<D>(&v.as_ref().map(|s| s.clone().into_bytes()))
}

fn num(v: Option<u64>) -> Vec<u8> {
    v.map_or_else(|| b"-".to_vec(), |n| n.to_string().into_bytes())
}

/// Concatenate byte pieces.
fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

// ------------------------------------------------------------------ renderers

const COMBINEDSSL_DP: &str = r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %D %P"#;

const NGINX_JSON: &str = r#"log_format nginx_json escape=json '{"time":"$time_iso8601","remote_addr":"$remote_addr","remote_user":"$remote_user","request":"$request","status":$status,"body_bytes_sent":$body_bytes_sent,"http_referer":"$http_referer","http_user_agent":"$http_user_agent","ssl_protocol":"$ssl_protocol","ssl_cipher":"$ssl_cipher","request_time":$request_time}';"#;

fn apache_user(u: &User) -> Vec<u8> {
    match u {
        User::Absent => b"-".to_vec(),
        User::Empty => b"\"\"".to_vec(),
        User::Name(n) => apache_escape(n),
    }
}

fn nginx_user<D: Dialect>(u: &User) -> Vec<u8> {
    match u {
        User::Absent => D::ABSENT.to_vec(),
        User::Empty => Vec::new(),
        User::Name(n) => D::escape(n),
    }
}

/// `combinedssl`, optionally with ` %D %P`.
fn render_combinedssl(r: &Req, dp: bool) -> Vec<u8> {
    let time = format!("[{}]", clf(r.unix, r.offset_minutes));
    let mut line = cat(&[
        r.client.as_bytes(),
        b" - ",
        &apache_user(&r.user),
        b" ",
        time.as_bytes(),
        b" \"",
        &apache_escape(&r.request_line()),
        b"\" ",
        r.status.to_string().as_bytes(),
        b" ",
        &num(r.bytes),
        b" \"",
        &opt::<Apache>(&r.referer),
        b"\" \"",
        &opt::<Apache>(&r.user_agent),
        b"\" ",
        &opt_str::<Apache>(&r.tls_protocol),
        b" ",
        &opt_str::<Apache>(&r.tls_cipher),
    ]);
    if dp {
        line.extend_from_slice(format!(" {} {}", r.duration_us, r.pid).as_bytes());
    }
    line
}

/// mod_ssl's `ssl_request_log`: `%t %h %{SSL_PROTOCOL}x %{SSL_CIPHER}x "%r" %b`.
fn render_ssl_request(r: &Req) -> Vec<u8> {
    let time = format!("[{}]", clf(r.unix, r.offset_minutes));
    cat(&[
        time.as_bytes(),
        b" ",
        r.client.as_bytes(),
        b" ",
        &opt_str::<Apache>(&r.tls_protocol),
        b" ",
        &opt_str::<Apache>(&r.tls_cipher),
        b" \"",
        &apache_escape(&r.request_line()),
        b"\" ",
        &num(r.bytes),
    ])
}

/// `nginx-ssl` (`escape=default`).
fn render_nginx_ssl(r: &Req) -> Vec<u8> {
    cat(&[
        r.client.as_bytes(),
        b" - ",
        &nginx_user::<Nginx>(&r.user),
        b" [",
        clf(r.unix, r.offset_minutes).as_bytes(),
        b"] \"",
        &nginx_escape(&r.request_line()),
        b"\" ",
        r.status.to_string().as_bytes(),
        b" ",
        r.bytes.unwrap_or(0).to_string().as_bytes(),
        b" \"",
        &opt::<Nginx>(&r.referer),
        b"\" \"",
        &opt::<Nginx>(&r.user_agent),
        b"\" ",
        &opt_str::<Nginx>(&r.tls_protocol),
        b" ",
        &opt_str::<Nginx>(&r.tls_cipher),
    ])
}

/// [`NGINX_JSON`]: `$request_time` is seconds with milliseconds.
fn render_nginx_json(r: &Req) -> Vec<u8> {
    let ms = r.duration_us / 1000;
    cat(&[
        b"{\"time\":\"",
        iso8601(r.unix, r.offset_minutes).as_bytes(),
        b"\",\"remote_addr\":\"",
        r.client.as_bytes(),
        b"\",\"remote_user\":\"",
        &nginx_user::<NginxJson>(&r.user),
        b"\",\"request\":\"",
        &json_escape(&r.request_line()),
        b"\",\"status\":",
        r.status.to_string().as_bytes(),
        b",\"body_bytes_sent\":",
        r.bytes.unwrap_or(0).to_string().as_bytes(),
        b",\"http_referer\":\"",
        &opt::<NginxJson>(&r.referer),
        b"\",\"http_user_agent\":\"",
        &opt::<NginxJson>(&r.user_agent),
        b"\",\"ssl_protocol\":\"",
        &opt_str::<NginxJson>(&r.tls_protocol),
        b"\",\"ssl_cipher\":\"",
        &opt_str::<NginxJson>(&r.tls_cipher),
        b"\",\"request_time\":",
        format!("{}.{:03}", ms / 1000, ms % 1000).as_bytes(),
        b"}",
    ])
}

// ------------------------------------------------------------------ checking

/// What a parsed line must say, role by role (`None`: absent).
type Expect = Vec<(Role, Option<Vec<u8>>)>;

fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(&b.escape_ascii().collect::<Vec<u8>>()).into_owned()
}

/// Parse `line` with `format` (as is and with a CRLF ending) and compare.
fn check_line(
    format: &Format,
    line: &[u8],
    r: &Req,
    expect: &Expect,
    duration_us: Option<u64>,
) -> Result<(), TestCaseError> {
    let mut crlf = line.to_vec();
    crlf.push(b'\r');
    let mut parser = LineParser::new(format);
    for variant in [line, &crlf[..]] {
        let mut rec = Record::new(format);
        let res = parser.parse(variant, &mut rec);
        prop_assert!(res.is_ok(), "{:?} for line {}", res, show(variant));
        for (role, want) in expect {
            let got = rec.role(*role).map(|c| c.into_owned());
            prop_assert_eq!(
                got.as_deref().map(show),
                want.as_deref().map(show),
                "{:?} of line {}",
                role,
                show(variant)
            );
        }
        prop_assert_eq!(rec.time(), Some(r.timestamp()), "time of {}", show(variant));
        let parts = rec.request_parts();
        prop_assert_eq!(
            parts.method.as_deref().map(show),
            Some(r.method.to_string())
        );
        prop_assert_eq!(parts.target.as_deref().map(show), Some(show(&r.target)));
        prop_assert_eq!(
            parts.http_version.as_deref().map(show),
            Some(r.protocol.to_string())
        );
        prop_assert_eq!(rec.duration_us(), duration_us);
    }
    Ok(())
}

fn some(b: &[u8]) -> Option<Vec<u8>> {
    Some(b.to_vec())
}

fn user_value(u: &User, absent: Option<Vec<u8>>) -> Option<Vec<u8>> {
    match u {
        User::Absent => absent,
        User::Empty => Some(Vec::new()),
        User::Name(n) => Some(n.clone()),
    }
}

fn str_value(v: &Option<String>) -> Option<Vec<u8>> {
    v.as_ref().map(|s| s.clone().into_bytes())
}

fn apache_expect(r: &Req) -> Expect {
    vec![
        (Role::Client, some(r.client.as_bytes())),
        (Role::Ident, None),
        (Role::User, user_value(&r.user, None)),
        (Role::Request, Some(r.request_line())),
        (Role::Status, Some(r.status.to_string().into_bytes())),
        (Role::Bytes, r.bytes.map(|n| n.to_string().into_bytes())),
        (Role::Referer, r.referer.clone()),
        (Role::UserAgent, r.user_agent.clone()),
        (Role::TlsProtocol, str_value(&r.tls_protocol)),
        (Role::TlsCipher, str_value(&r.tls_cipher)),
    ]
}

// ------------------------------------------------------------------ strategies

/// Bytes biased towards the ones that matter to a log parser: quotes, backslashes,
/// spaces, brackets, `-`, control bytes, DEL and bytes ≥ 0x80.
fn nasty_byte() -> impl Strategy<Value = u8> {
    prop_oneof![
        8 => 0x21u8..0x7f,
        2 => Just(b' '),
        3 => prop::sample::select(b"\"\\-[]x{}:/%$".to_vec()),
        2 => 0x00u8..0x20,
        1 => Just(0x7fu8),
        2 => 0x80u8..=0xff,
    ]
}

fn nasty_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(nasty_byte(), 0..max)
}

/// A present header value: anything except exactly `-`, which a log cannot tell from
/// an absent one.
fn header_value() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::weighted(
        0.8,
        nasty_bytes(60).prop_filter("`-` is absent", |v| v != b"-"),
    )
}

fn client() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<[u8; 4]>().prop_map(|o| format!("{}.{}.{}.{}", o[0], o[1], o[2], o[3])),
        any::<[u16; 8]>().prop_map(|s| std::net::Ipv6Addr::from(s).to_string()),
    ]
}

/// A user name. `space` says whether it may hold a space (see `apache_user_with_space`).
fn user(space: bool) -> impl Strategy<Value = User> {
    let name = prop::collection::vec(nasty_byte(), 1..24)
        .prop_map(move |mut v| {
            // Rewrite rather than filter, so that few cases are rejected.
            for i in 0..v.len() {
                if v[i] == b' ' && !space {
                    v[i] = b'_';
                }
                if v[i] == b'[' && i > 0 && v[i - 1] == b' ' {
                    v[i] = b'(';
                }
            }
            v
        })
        .prop_filter("`-` is absent", |v| v != b"-");
    prop_oneof![
        1 => Just(User::Absent),
        1 => Just(User::Empty),
        3 => name.prop_map(User::Name),
    ]
}

fn tls_token(names: &'static [&'static str]) -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(
        0.8,
        prop_oneof![
            3 => prop::sample::select(names).prop_map(str::to_string),
            1 => "[A-Za-z0-9_.-]{1,40}".prop_filter("`-` is absent", |s| s != "-"),
        ],
    )
}

const PROTOCOLS: &[&str] = &["SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"];
const CIPHERS: &[&str] = &[
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES256-SHA",
    "AES128-SHA",
    "RC4-MD5",
];

/// A request; `user_space` allows spaces in the user name.
fn req(user_space: bool) -> impl Strategy<Value = Req> {
    (
        (
            client(),
            user(user_space),
            0i64..4_102_444_800, // 1970 up to 2100
            -1439i16..=1439,
            prop::sample::select(
                &[
                    "GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PROPFIND",
                ][..],
            ),
            nasty_bytes(80),
            prop::sample::select(&["HTTP/1.0", "HTTP/1.1", "HTTP/2.0"][..]),
        ),
        (
            100u16..600,
            prop::option::of(0u64..10_000_000_000),
            header_value(),
            header_value(),
            tls_token(PROTOCOLS),
            tls_token(CIPHERS),
            0u64..100_000_000,
            1u32..4_194_304,
        ),
    )
        .prop_map(
            |(
                (client, user, unix, offset_minutes, method, target, protocol),
                (status, bytes, referer, user_agent, tls_protocol, tls_cipher, duration_us, pid),
            )| Req {
                client,
                user,
                unix,
                offset_minutes,
                method,
                target,
                protocol,
                status,
                bytes,
                referer,
                user_agent,
                tls_protocol,
                tls_cipher,
                duration_us,
                pid,
            },
        )
}

/// `n` cases, or `PROPTEST_CASES` when set (for a longer hunt).
fn cases(n: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n)
}

fn compile(spec: &str) -> Format {
    Format::compile(spec).unwrap_or_else(|e| panic!("{spec}: {e}"))
}

// ------------------------------------------------------------------ properties

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(512)))]

    #[test]
    fn combinedssl_round_trips(r in req(false)) {
        let f = compile("combinedssl");
        check_line(&f, &render_combinedssl(&r, false), &r, &apache_expect(&r), None)?;
    }

    #[test]
    fn combinedssl_with_duration_and_pid_round_trips(r in req(false)) {
        let f = compile(COMBINEDSSL_DP);
        let mut expect = apache_expect(&r);
        expect.push((Role::Duration, Some(r.duration_us.to_string().into_bytes())));
        expect.push((Role::Pid, Some(r.pid.to_string().into_bytes())));
        check_line(&f, &render_combinedssl(&r, true), &r, &expect, Some(r.duration_us))?;
    }

    #[test]
    fn ssl_request_round_trips(r in req(false)) {
        let f = compile("ssl_request");
        let expect = vec![
            (Role::Client, some(r.client.as_bytes())),
            (Role::Request, Some(r.request_line())),
            (Role::Bytes, r.bytes.map(|n| n.to_string().into_bytes())),
            (Role::TlsProtocol, str_value(&r.tls_protocol)),
            (Role::TlsCipher, str_value(&r.tls_cipher)),
        ];
        check_line(&f, &render_ssl_request(&r), &r, &expect, None)?;
    }

    #[test]
    fn nginx_ssl_round_trips(r in req(true)) {
        let f = compile("nginx-ssl");
        let expect = vec![
            (Role::Client, some(r.client.as_bytes())),
            (Role::User, user_value(&r.user, None)),
            (Role::Request, Some(r.request_line())),
            (Role::Status, Some(r.status.to_string().into_bytes())),
            (Role::Bytes, Some(r.bytes.unwrap_or(0).to_string().into_bytes())),
            (Role::Referer, r.referer.clone()),
            (Role::UserAgent, r.user_agent.clone()),
            (Role::TlsProtocol, str_value(&r.tls_protocol)),
            (Role::TlsCipher, str_value(&r.tls_cipher)),
        ];
        check_line(&f, &render_nginx_ssl(&r), &r, &expect, None)?;
    }

    #[test]
    fn nginx_json_round_trips(r in req(true)) {
        let f = compile(NGINX_JSON);
        // nginx writes absent values as "" in JSON logs and cannot tell them from empty
        // ones: both read back as absent.
        let or_empty = |v: Option<Vec<u8>>| v.filter(|b| !b.is_empty());
        let ms = r.duration_us / 1000;
        let expect = vec![
            (Role::Client, some(r.client.as_bytes())),
            (Role::User, or_empty(user_value(&r.user, None))),
            (Role::Request, Some(r.request_line())),
            (Role::Status, Some(r.status.to_string().into_bytes())),
            (Role::Bytes, Some(r.bytes.unwrap_or(0).to_string().into_bytes())),
            (Role::Referer, or_empty(r.referer.clone())),
            (Role::UserAgent, or_empty(r.user_agent.clone())),
            (Role::TlsProtocol, or_empty(str_value(&r.tls_protocol))),
            (Role::TlsCipher, or_empty(str_value(&r.tls_cipher))),
        ];
        check_line(&f, &render_nginx_json(&r), &r, &expect, Some(ms * 1000))?;
    }

    /// Any bytes through any format: an `Ok` or an `Err`, never a panic, and every
    /// accessor answers.
    #[test]
    fn arbitrary_bytes_never_panic(line in prop::collection::vec(any::<u8>(), 0..400)) {
        for f in all_formats() {
            parse_and_read(&f, &line);
        }
    }

    /// Real-looking lines cut short or with one byte changed.
    #[test]
    fn damaged_lines_never_panic(
        r in req(true),
        cut in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let lines = [
            render_combinedssl(&r, false),
            render_combinedssl(&r, true),
            render_ssl_request(&r),
            render_nginx_ssl(&r),
            render_nginx_json(&r),
        ];
        for f in all_formats() {
            for line in &lines {
                parse_and_read(&f, &line[..cut.index(line.len() + 1)]);
                let mut changed = line.clone();
                let i = at.index(changed.len());
                changed[i] = byte;
                parse_and_read(&f, &changed);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(64)))]

    /// One parser (one time cache) over many lines whose times differ, repeat and
    /// come back: every line gets its own time.
    #[test]
    fn one_parser_many_lines_keeps_times_apart(
        rs in prop::collection::vec(req(false), 1..40),
        order in prop::collection::vec(any::<prop::sample::Index>(), 1..80),
    ) {
        let f = compile("combinedssl");
        let n = compile("nginx-ssl");
        let mut parser = LineParser::new(&f);
        let mut nparser = LineParser::new(&n);
        for i in order {
            let r = &rs[i.index(rs.len())];
            let line = render_combinedssl(r, false);
            let mut rec = Record::new(&f);
            prop_assert!(parser.parse(&line, &mut rec).is_ok());
            prop_assert_eq!(rec.time(), Some(r.timestamp()));
            let line = render_nginx_ssl(r);
            let mut rec = Record::new(&n);
            prop_assert!(nparser.parse(&line, &mut rec).is_ok());
            prop_assert_eq!(rec.time(), Some(r.timestamp()));
        }
    }

    /// `--log-format auto` on lines written by Apache with `combinedssl`.
    #[test]
    fn detect_finds_combinedssl(rs in prop::collection::vec(req(false), 1..20)) {
        // Detection reads a TLS protocol column as one only when it holds protocol
        // names (a number there is another layout), so give the lines real ones.
        let names = ["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3", "SSLv3", "-"];
        let mut rs = rs;
        for (i, r) in rs.iter_mut().enumerate() {
            if r.tls_protocol.is_some() {
                r.tls_protocol = Some(names[i % names.len()].to_string());
            }
        }
        let lines: Vec<Vec<u8>> = rs.iter().map(|r| render_combinedssl(r, false)).collect();
        let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        let d = tlsgap_parser::detect::detect(&refs);
        prop_assert!(d.is_some());
        let d = d.unwrap();
        prop_assert_eq!(d.preset, "combinedssl");
        prop_assert_eq!(d.parsed, lines.len());
    }
}

fn all_formats() -> Vec<Format> {
    let mut v: Vec<Format> = tlsgap_parser::PRESETS
        .iter()
        .map(|(name, _)| compile(name))
        .collect();
    v.push(compile(COMBINEDSSL_DP));
    v.push(compile(NGINX_JSON));
    v
}

fn parse_and_read(f: &Format, line: &[u8]) {
    let mut parser = LineParser::new(f);
    let mut rec = Record::new(f);
    if parser.parse(line, &mut rec).is_err() {
        return;
    }
    for i in 0..=f.fields.len() {
        let _ = rec.raw(i);
        let _ = rec.value(i);
        let _ = rec.int(i);
    }
    for role in Role::ALL {
        let _ = rec.role(role);
    }
    let _ = rec.time().map(|t| t.to_string());
    let _ = rec.request_parts();
    let _ = rec.duration_us();
}

// ------------------------------------------------------------------ edge cases

fn parse_one<'a>(f: &'a Format, line: &'a [u8]) -> Record<'a> {
    let mut parser = LineParser::new(f);
    let mut rec = Record::new(f);
    if let Err(e) = parser.parse(line, &mut rec) {
        panic!("{e} for {}", show(line));
    }
    rec
}

#[test]
fn empty_target_is_legal_in_the_request_line() {
    let f = compile("combinedssl");
    let line = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 -0330] "GET  HTTP/1.1" 400 226 "-" "-" - -"#;
    let rec = parse_one(&f, line);
    let parts = rec.request_parts();
    assert_eq!(parts.method.as_deref(), Some(&b"GET"[..]));
    assert_eq!(parts.target.as_deref(), Some(&b""[..]));
    assert_eq!(parts.http_version.as_deref(), Some(&b"HTTP/1.1"[..]));
}

#[test]
fn target_with_spaces_is_kept_whole() {
    let f = compile("combinedssl");
    let line = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 -0330] "GET /a b  c HTTP/1.1" 404 196 "-" "curl/8.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
    let rec = parse_one(&f, line);
    let parts = rec.request_parts();
    assert_eq!(parts.target.as_deref(), Some(&b"/a b  c"[..]));
    assert_eq!(parts.http_version.as_deref(), Some(&b"HTTP/1.1"[..]));
}

#[test]
fn empty_apache_user_is_two_quotes() {
    let f = compile("combinedssl");
    let line = br#"192.0.2.7 - "" [21/Nov/2026:18:07:40 -0330] "GET / HTTP/1.1" 401 381 "-" "curl/8.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
    let rec = parse_one(&f, line);
    assert_eq!(rec.role(Role::User).as_deref(), Some(&b""[..]));
}

#[test]
fn crlf_line_parses_without_the_cr_in_the_last_field() {
    let f = compile("combinedssl");
    let line = b"192.0.2.7 - - [21/Nov/2026:18:07:40 -0330] \"GET / HTTP/1.1\" 200 5 \"-\" \"curl/8.0\" TLSv1.2 AES128-SHA\r";
    let rec = parse_one(&f, line);
    assert_eq!(rec.raw_role(Role::TlsCipher), Some(&b"AES128-SHA"[..]));
}

/// Apache escapes `%u` but does not quote it, so a user name can hold a space (Basic
/// auth sends whatever the client typed). The line is unambiguous: the time field
/// starts at the first ` [` that is followed by a valid `%t`.
#[test]
fn apache_user_with_space() {
    let f = compile("combinedssl");
    let line = br#"192.0.2.7 - alice smith [21/Nov/2026:18:07:40 -0330] "GET / HTTP/1.1" 401 381 "-" "curl/8.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
    let rec = parse_one(&f, line);
    assert_eq!(rec.role(Role::User).as_deref(), Some(&b"alice smith"[..]));
}

proptest! {
    /// The property form of [`apache_user_with_space`].
    #[test]
    fn combinedssl_round_trips_with_spaces_in_user(r in req(true)) {
        let f = compile("combinedssl");
        check_line(&f, &render_combinedssl(&r, false), &r, &apache_expect(&r), None)?;
    }
}

/// `[` is not escaped by either server, so a user name can hold ` [`; the parser must
/// not take the first ` [` as the start of the time when the time does not parse there.
#[test]
fn nginx_user_with_space_bracket() {
    let f = compile("nginx-ssl");
    let line = br#"192.0.2.7 - a [b [21/Nov/2026:18:07:40 -0330] "GET / HTTP/1.1" 401 381 "-" "curl/8.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
    let rec = parse_one(&f, line);
    assert_eq!(rec.role(Role::User).as_deref(), Some(&b"a [b"[..]));
}

/// Apache writes a literal backslash as `\\`, so a URL holding the text `\xAB` shows
/// `\\xAB` in the log; the four bytes `\xAB` inside it are not an nginx escape.
#[test]
fn detect_is_not_fooled_by_an_escaped_backslash() {
    let line = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 -0330] "GET /a\\xAB HTTP/1.1" 404 196 "-" "curl/8.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
    let d = tlsgap_parser::detect::detect(&[line]).expect("a preset parses it");
    assert_eq!(d.preset, "combinedssl");
    let mut parser = LineParser::new(&d.format);
    let mut rec = Record::new(&d.format);
    parser.parse(line, &mut rec).unwrap();
    assert_eq!(rec.request_parts().target.as_deref(), Some(&br"/a\xAB"[..]));
}

/// `parse_epoch` is public and documents its units as 1, 1000 or 1000000; any other
/// value should give `None` (or be impossible to pass), not a panic.
#[test]
fn parse_epoch_with_zero_units_does_not_panic() {
    assert_eq!(tlsgap_parser::time::parse_epoch(b"1", 0), None);
}

/// Regression: naming repeated fields (`remote_host`, `remote_host_2`, …) once tried
/// every suffix against every field (cubic; a 4 KB format of `%h ` took tens of
/// seconds). Checked by result, not by a timer: every name distinct, in order.
#[test]
fn repeated_fields_get_distinct_numbered_names() {
    let spec = "%h ".repeat(1365);
    let f = compile(&spec);
    assert_eq!(f.fields.len(), 1365);
    assert_eq!(f.fields[1].name, "remote_host");
    assert_eq!(f.fields[1364].name, "remote_host_1364");
    let names: std::collections::HashSet<&str> = f.fields.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names.len(), 1365);
}
