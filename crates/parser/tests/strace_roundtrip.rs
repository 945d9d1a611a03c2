//! Round trips: random calls are rendered the way strace prints them (its quoting,
//! its `-y` decorations, every PID prefix and stamp form), parsed back, and every
//! field must come back. Arguments carry hostile bytes: `)`, ` = `, `>`, `<`, quotes,
//! backslashes, newlines, `/*`, commas.
//!
//! The renderer follows strace's `string_quote` and `printleader` as described in
//! `shared/reference/strace-output.md`, not the parser.

use proptest::prelude::*;
use tlsgap_parser::strace::{
    args, decoration_path, fd_arg, parse_line, quoted, Body, Exit, Stamp, TraceLine,
};

// ------------------------------------------------------------------ rendering

/// strace's `string_quote`: `\" \\ \t \n \v \f \r`, other non-printables octal
/// (`-x`: hex), the shortest octal unless a digit follows. `extra` bytes are escaped
/// too (`<>` in decorations).
fn quote(raw: &[u8], hex: bool, extra: &[u8]) -> String {
    let mut out = String::new();
    for (i, &b) in raw.iter().enumerate() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b' '..=b'~' if !extra.contains(&b) => out.push(b as char),
            _ if hex => out.push_str(&format!("\\x{b:02x}")),
            _ => {
                let next_digit = raw.get(i + 1).is_some_and(|n| n.is_ascii_digit());
                if next_digit {
                    out.push_str(&format!("\\{b:03o}"));
                } else {
                    out.push_str(&format!("\\{b:o}"));
                }
            }
        }
    }
    out
}

#[derive(Debug, Clone)]
enum Arg {
    Int(i64),
    Hex(u64),
    Flags(&'static str),
    /// A string, printed `-x` or not, maybe cut (`"..."...`).
    Str(Vec<u8>, bool, bool),
    /// An fd with a `-y` path decoration (optionally with a `-yy` device suffix).
    FdPath(i64, Vec<u8>, bool),
    /// An fd with a socket decoration.
    FdSock(i64, &'static str),
    Struct(Vec<(&'static str, Arg)>),
    Array(Vec<Arg>),
    Comment(i64, String),
}

fn render_arg(a: &Arg) -> String {
    match a {
        Arg::Int(v) => v.to_string(),
        Arg::Hex(v) => format!("{v:#x}"),
        Arg::Flags(f) => f.to_string(),
        Arg::Str(s, hex, cut) => {
            format!(
                "\"{}\"{}",
                quote(s, *hex, b""),
                if *cut { "..." } else { "" }
            )
        }
        Arg::FdPath(fd, p, dev) => {
            let fd = if *fd == -100 {
                "AT_FDCWD".to_string()
            } else {
                fd.to_string()
            };
            let dev = if *dev { "<char 1:3>" } else { "" };
            format!("{fd}<{}{dev}>", quote(p, false, b"<>"))
        }
        Arg::FdSock(fd, s) => format!("{fd}<{s}>"),
        Arg::Struct(fields) => {
            let f: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k}={}", render_arg(v)))
                .collect();
            format!("{{{}}}", f.join(", "))
        }
        Arg::Array(items) => {
            let f: Vec<String> = items.iter().map(render_arg).collect();
            format!("[{}]", f.join(", "))
        }
        Arg::Comment(v, c) => format!("{v:#x} /* {c} */"),
    }
}

fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
    let pieces = prop_oneof![
        Just(b")".to_vec()),
        Just(b" = ".to_vec()),
        Just(b") = 1 <0.5>".to_vec()),
        Just(b">".to_vec()),
        Just(b"<".to_vec()),
        Just(b"\"".to_vec()),
        Just(b"\\".to_vec()),
        Just(b"\\76".to_vec()),
        Just(b"\n".to_vec()),
        Just(b",".to_vec()),
        Just(b"/*".to_vec()),
        Just(b"*/".to_vec()),
        Just(b"<unfinished ...>".to_vec()),
        Just(b"strace: Process 1 attached".to_vec()),
        Just(vec![0u8, b'7']),
        Just(vec![0xff, 0x80, 0x7f]),
        proptest::collection::vec(any::<u8>(), 0..4),
        "[a-z/ .]{0,8}".prop_map(String::into_bytes),
    ];
    proptest::collection::vec(pieces, 0..6).prop_map(|v| v.concat())
}

fn leaf_arg() -> impl Strategy<Value = Arg> {
    prop_oneof![
        any::<i32>().prop_map(|v| Arg::Int(v.into())),
        any::<u64>().prop_map(Arg::Hex),
        prop_oneof![
            Just("O_RDONLY|O_CLOEXEC"),
            Just("NULL"),
            Just("~[CHLD RTMIN]"),
            Just("1<<3")
        ]
        .prop_map(Arg::Flags),
        (hostile_bytes(), any::<bool>(), any::<bool>()).prop_map(|(s, h, c)| Arg::Str(s, h, c)),
        (
            prop_oneof![Just(-100i64), 0i64..100],
            hostile_bytes(),
            any::<bool>()
        )
            .prop_map(|(fd, p, dev)| Arg::FdPath(fd, [b"/".as_slice(), &p].concat(), dev)),
        (
            0i64..100,
            prop_oneof![
                Just("TCP:[127.0.0.1:8081->127.0.0.1:52428]"),
                Just("TCPv6:[[::1]:38139->[::1]:53890]"),
                Just("UNIX-STREAM:[37691->37687,\"/tmp/u) = >.sock\"]"),
                Just("pipe:[22395]"),
                Just("anon_inode:[eventpoll]"),
            ]
        )
            .prop_map(|(fd, s)| Arg::FdSock(fd, s)),
        (any::<u32>(), "[a-z0-9 ()=<>,]{0,12}").prop_map(|(v, c)| Arg::Comment(v.into(), c)),
    ]
}

fn arg() -> impl Strategy<Value = Arg> {
    leaf_arg().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            proptest::collection::vec(
                (
                    prop_oneof![Just("st_mode"), Just("fd"), Just("sa_data")],
                    inner.clone()
                ),
                0..3
            )
            .prop_map(Arg::Struct),
            proptest::collection::vec(inner, 0..3).prop_map(Arg::Array),
        ]
    })
}

#[derive(Debug, Clone)]
enum Ret {
    Int(i64),
    Fd(i64, Vec<u8>),
    Err(i64, &'static str, &'static str),
    Hex(u64),
    Unknown,
    Restart,
    Comment(i64, &'static str),
}

fn ret() -> impl Strategy<Value = Ret> {
    prop_oneof![
        any::<i32>().prop_map(|v| Ret::Int(v.into())),
        (0i64..1000, hostile_bytes())
            .prop_map(|(fd, p)| Ret::Fd(fd, [b"/".as_slice(), &p].concat())),
        prop_oneof![
            Just(Ret::Err(-1, "ENOENT", "No such file or directory")),
            Just(Ret::Err(-1, "EAGAIN", "Resource temporarily unavailable")),
        ],
        any::<u64>().prop_map(Ret::Hex),
        Just(Ret::Unknown),
        Just(Ret::Restart),
        prop_oneof![
            Just(Ret::Comment(0, "(Timeout)")),
            Just(Ret::Comment(1, "([{fd=8, revents=POLLIN}])"))
        ],
    ]
}

impl Ret {
    fn render(&self) -> String {
        match self {
            Ret::Int(v) => v.to_string(),
            Ret::Fd(fd, p) => format!("{fd}<{}>", quote(p, false, b"<>")),
            Ret::Err(v, e, t) => format!("{v} {e} ({t})"),
            Ret::Hex(v) => format!("{v:#x}"),
            Ret::Unknown => "?".into(),
            Ret::Restart => "? ERESTARTSYS (To be restarted if SA_RESTART is set)".into(),
            Ret::Comment(v, c) => format!("{v} {c}"),
        }
    }
    fn value(&self) -> Option<i64> {
        match self {
            Ret::Int(v) | Ret::Fd(v, _) | Ret::Err(v, _, _) | Ret::Comment(v, _) => Some(*v),
            Ret::Hex(v) => Some(*v as i64),
            Ret::Unknown | Ret::Restart => None,
        }
    }
    fn errno(&self) -> Option<&'static str> {
        match self {
            Ret::Err(_, e, _) => Some(e),
            Ret::Restart => Some("ERESTARTSYS"),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
enum Pid {
    None,
    Bare(u32, Option<String>),
    Bracketed(u32, Option<String>),
}

#[derive(Debug, Clone, Copy)]
enum StampForm {
    None,
    /// `-t`, `-tt`, `precision:ms`, `precision:ns` (fraction digits).
    TimeOfDay(usize),
    /// `-ttt` (6), `format:unix,precision:ns` (9), `precision:s` (0).
    Unix(usize),
}

#[derive(Debug, Clone)]
struct Leader {
    pid: Pid,
    stamp: StampForm,
    /// Seconds since midnight or since the epoch, and nanoseconds.
    secs: u64,
    nanos: u64,
    relative: Option<u64>,
    nr: Option<u16>,
    ip: Option<u64>,
}

fn leader() -> impl Strategy<Value = Leader> {
    let comm = proptest::option::of("[a-z][a-z0-9 ._-]{0,14}");
    (
        prop_oneof![
            Just(Pid::None),
            (1u32..4_194_304, comm.clone()).prop_map(|(p, c)| Pid::Bare(p, c)),
            (1u32..4_194_304, comm).prop_map(|(p, c)| Pid::Bracketed(p, c)),
        ],
        prop_oneof![
            Just(StampForm::None),
            Just(StampForm::TimeOfDay(0)),
            Just(StampForm::TimeOfDay(3)),
            Just(StampForm::TimeOfDay(6)),
            Just(StampForm::TimeOfDay(9)),
            Just(StampForm::Unix(0)),
            Just(StampForm::Unix(6)),
            Just(StampForm::Unix(9)),
        ],
        0u64..86_400,
        1_000_000_000u64..4_000_000_000,
        0u64..1_000_000_000,
        proptest::option::of(0u64..100_000_000_000_000),
        proptest::option::of(0u16..1000),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(|(pid, stamp, tod, epoch, nanos, relative, nr, ip)| {
            let secs = if matches!(stamp, StampForm::Unix(_)) {
                epoch
            } else {
                tod
            };
            Leader {
                pid,
                stamp,
                secs,
                nanos,
                relative,
                nr,
                ip,
            }
        })
}

fn frac(nanos: u64, digits: usize) -> (String, u64) {
    if digits == 0 {
        return (String::new(), 0);
    }
    let s = format!("{nanos:09}");
    let kept = &s[..digits];
    let back = format!("{kept:0<9}").parse().unwrap();
    (format!(".{kept}"), back)
}

impl Leader {
    /// The leader text and the stamp it should parse to.
    fn render(&self) -> (String, Option<Stamp>, Option<u64>) {
        let mut out = String::new();
        match &self.pid {
            Pid::None => {}
            Pid::Bare(p, None) => out.push_str(&format!("{p:<5} ")),
            Pid::Bare(p, Some(c)) => out.push_str(&format!("{p}<{c}> ")),
            Pid::Bracketed(p, None) => out.push_str(&format!("[pid {p:>5}] ")),
            Pid::Bracketed(p, Some(c)) => out.push_str(&format!("[pid {p}<{c}>] ")),
        }
        let stamp = match self.stamp {
            StampForm::None => None,
            StampForm::TimeOfDay(d) => {
                let (f, ns) = frac(self.nanos, d);
                let s = self.secs;
                out.push_str(&format!(
                    "{:02}:{:02}:{:02}{f} ",
                    s / 3600,
                    s / 60 % 60,
                    s % 60
                ));
                Some(Stamp::TimeOfDay {
                    nanos: s * 1_000_000_000 + ns,
                })
            }
            StampForm::Unix(d) => {
                let (f, ns) = frac(self.nanos, d);
                out.push_str(&format!("{}{f} ", self.secs));
                Some(Stamp::Unix {
                    nanos: (self.secs * 1_000_000_000 + ns) as i64,
                })
            }
        };
        let relative = self.relative.map(|r| {
            let shown = format!("{:>6}.{:06}", r / 1_000_000_000, r % 1_000_000_000 / 1000);
            if stamp.is_some() {
                out.push_str(&format!("(+{shown}) "));
            } else {
                out.push_str(&format!("{shown} "));
            }
            r / 1000 * 1000
        });
        if let Some(nr) = self.nr {
            out.push_str(&format!("[{nr:>4}] "));
        }
        if let Some(ip) = self.ip {
            out.push_str(&format!("[{ip:016x}] "));
        }
        (out, stamp, relative)
    }

    fn check(&self, t: &TraceLine<'_>, stamp: Option<Stamp>, relative: Option<u64>) {
        let (pid, comm) = match &self.pid {
            Pid::None => (None, None),
            Pid::Bare(p, c) | Pid::Bracketed(p, c) => (Some(*p), c.clone()),
        };
        assert_eq!(t.pid, pid);
        assert_eq!(
            t.comm.map(|c| String::from_utf8_lossy(c).into_owned()),
            comm
        );
        assert_eq!(t.stamp, stamp);
        assert_eq!(t.relative_ns, relative);
    }
}

#[derive(Debug, Clone)]
enum Form {
    Complete,
    Unfinished,
    Resumed,
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("read".to_string()),
        Just("openat".to_string()),
        "[a-z_][a-z0-9_]{0,15}"
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn calls_round_trip(
        lead in leader(),
        name in name(),
        call_args in proptest::collection::vec(arg(), 0..5),
        ret in ret(),
        pad in 0usize..40,
        duration in proptest::option::of(0u64..10_000_000_000),
        form in prop_oneof![Just(Form::Complete), Just(Form::Unfinished), Just(Form::Resumed)],
    ) {
        let (leader_text, stamp, relative) = lead.render();
        let rendered: Vec<String> = call_args.iter().map(render_arg).collect();
        let args_text = rendered.join(", ");
        let dur_text = duration.map(|d| format!(" <{}.{:06}>", d / 1_000_000_000, d % 1_000_000_000 / 1000));
        let ret_text = ret.render();
        let tail = format!(
            "){} = {ret_text}{}",
            " ".repeat(pad),
            dur_text.unwrap_or_default()
        );
        let line = match form {
            Form::Complete => format!("{leader_text}{name}({args_text}{tail}"),
            Form::Unfinished => format!("{leader_text}{name}({args_text}{} <unfinished ...>", if rendered.is_empty() { "" } else { "," }),
            Form::Resumed => format!("{leader_text}<... {name} resumed>{args_text}{tail}"),
        };
        let t = parse_line(line.as_bytes()).unwrap_or_else(|e| panic!("{e:?}: {line}"));
        lead.check(&t, stamp, relative);
        let (got_name, got_args) = match (&form, t.body) {
            (Form::Unfinished, Body::Unfinished { name, args }) => (name, args),
            (Form::Complete, Body::Call(c)) | (Form::Resumed, Body::Resumed(c)) => {
                prop_assert_eq!(String::from_utf8_lossy(c.ret.raw), ret_text.clone());
                prop_assert_eq!(c.ret.value, ret.value());
                prop_assert_eq!(c.ret.errno.map(|e| String::from_utf8_lossy(e).into_owned()), ret.errno().map(str::to_string));
                prop_assert_eq!(c.duration_ns, duration.map(|d| d / 1000 * 1000));
                if let Ret::Fd(_, p) = &ret {
                    let d = c.ret.decoration.expect("decoration");
                    prop_assert_eq!(&*decoration_path(d), &p[..]);
                }
                (c.name, c.args)
            }
            (f, b) => panic!("{f:?} parsed as {b:?}: {line}"),
        };
        prop_assert_eq!(String::from_utf8_lossy(got_name), name);
        prop_assert_eq!(String::from_utf8_lossy(got_args), args_text.clone());

        // The splitter gives the rendered arguments back, and the helpers decode them.
        let items: Vec<&[u8]> = args(got_args).collect();
        prop_assert_eq!(items.len(), call_args.len(), "{}", line);
        for ((item, want), a) in items.iter().zip(&rendered).zip(&call_args) {
            prop_assert_eq!(String::from_utf8_lossy(item), want.clone());
            match a {
                Arg::Str(s, _, cut) => {
                    let (v, c) = quoted(item).expect("a string");
                    prop_assert_eq!(&*v, &s[..]);
                    prop_assert_eq!(c, *cut);
                }
                Arg::FdPath(fd, p, _) => {
                    let (n, d) = fd_arg(item).expect("an fd");
                    prop_assert_eq!(n, *fd);
                    prop_assert_eq!(&*decoration_path(d.expect("decorated")), &p[..]);
                }
                Arg::FdSock(fd, s) => {
                    prop_assert_eq!(fd_arg(item), Some((*fd, Some(s.as_bytes()))));
                }
                Arg::Int(v) => prop_assert_eq!(fd_arg(item), Some((*v, None))),
                _ => {}
            }
        }
    }

    #[test]
    fn signals_and_exits_round_trip(
        lead in leader(),
        sig in "SIG[A-Z]{2,6}",
        info in proptest::collection::vec(arg(), 0..3),
        code in 0i32..256,
        which in 0u8..5,
        pid in 1u32..4_194_304,
    ) {
        let (leader_text, stamp, relative) = lead.render();
        let (body, want) = match which {
            0 => {
                let i: Vec<String> = info.iter().map(render_arg).collect();
                let info = format!("{{si_signo={sig}, {}}}", i.join(", "));
                (format!("--- {sig} {info} ---"), None)
            }
            1 => (format!("+++ exited with {code} +++"), Some(Exit::Exited(code))),
            2 => (format!("+++ killed by {sig} +++"), Some(Exit::Killed { signal: sig.as_bytes(), core_dumped: false })),
            3 => (format!("+++ killed by {sig} (core dumped) +++"), Some(Exit::Killed { signal: sig.as_bytes(), core_dumped: true })),
            _ => (format!("+++ superseded by execve in pid {pid} +++"), Some(Exit::Superseded(pid))),
        };
        let line = format!("{leader_text}{body}");
        let t = parse_line(line.as_bytes()).unwrap_or_else(|e| panic!("{e:?}: {line}"));
        lead.check(&t, stamp, relative);
        match (want, t.body) {
            (None, Body::Signal { name, info }) => {
                prop_assert_eq!(name, sig.as_bytes());
                let framed = info.starts_with(b"{si_signo=") && info.ends_with(b"}");
                prop_assert!(framed);
            }
            (Some(e), Body::Exit(got)) => prop_assert_eq!(got, e),
            (w, b) => panic!("{w:?} parsed as {b:?}: {line}"),
        }
    }

    #[test]
    fn any_bytes_never_panic(line in proptest::collection::vec(any::<u8>(), 0..200)) {
        if let Ok(t) = parse_line(&line) {
            if let Body::Call(c) | Body::Resumed(c) = t.body {
                for a in args(c.args) {
                    let _ = (quoted(a), fd_arg(a));
                }
            }
        }
    }
}
