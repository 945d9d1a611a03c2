//! strace text output, one line at a time, on bytes, zero-copy.
//!
//! [`parse_line`] reads every line form strace 4.x–6.x writes (see
//! `shared/reference/strace-output.md`): the PID prefixes of `-f`/`-ff`/`-Y`, the
//! stamps of `-t`/`-tt`/`-ttt`/`--absolute-timestamps`/`-r`, the `-n`/`-i` brackets,
//! complete, unfinished and resumed calls, signals and exits. Lines that are not trace
//! lines come back as a [`Skip`] reason. Nothing is allocated per line: the record
//! borrows the line, and the argument helpers ([`args`], [`fd_arg`], [`quoted`],
//! [`decoration_path`]) decode only what is asked for.
//!
//! ```
//! use tlsgap_parser::strace::{args, fd_arg, parse_line, quoted, Body, Stamp};
//!
//! let line = br#"[pid 12085] 21:36:32.596155 read(3</etc/x\76y>, "a) = \"b\""..., 4096) = 4096 <0.000123>"#;
//! let t = parse_line(line).unwrap();
//! assert_eq!(t.pid, Some(12085));
//! assert_eq!(t.stamp, Some(Stamp::TimeOfDay { nanos: 77_792_596_155_000 }));
//! let Body::Call(call) = t.body else { panic!() };
//! assert_eq!(call.name, b"read");
//! assert_eq!(call.ret.value, Some(4096));
//! assert_eq!(call.duration_ns, Some(123_000));
//! let a: Vec<&[u8]> = args(call.args).collect();
//! assert_eq!(a.len(), 3);
//! assert_eq!(fd_arg(a[0]), Some((3, Some(&br"/etc/x\76y"[..]))));
//! let (text, truncated) = quoted(a[1]).unwrap();
//! assert_eq!((&*text, truncated), (&b"a) = \"b\""[..], true));
//! ```
//!
//! # Lines glued to `strace: Process N attached`
//!
//! With `-f` and output to stderr, strace prints the attach message in the middle of
//! the line it was writing and the rest of that line follows on the next one:
//!
//! ```text
//! [pid  9435] clone(child_stack=NULL, flags=...|SIGCHLDstrace: Process 9438 attached
//! , child_tidptr=0x7f9169e12a10) = 9438
//! ```
//!
//! [`parse_line`] is stateless, so the first line is [`Skip::StraceMessage`] (the
//! message is what it can vouch for) and the second [`Skip::NotTrace`]. A reader that
//! wants the call back uses [`split_glued`]: it gives the head (`[pid  9435] clone(...`)
//! to join with the next line in a reused buffer and parse again (see its example).
use std::borrow::Cow;

use memchr::memmem;

/// An absolute timestamp as strace printed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stamp {
    /// `-t`, `-tt`, `precision:ms|us|ns`: wall-clock time of day in strace's local time
    /// zone, with no date, as nanoseconds since midnight.
    TimeOfDay {
        /// Nanoseconds since local midnight.
        nanos: u64,
    },
    /// `-ttt`, `format:unix`: nanoseconds since the Unix epoch.
    Unix {
        /// Nanoseconds since 1970-01-01T00:00:00Z.
        nanos: i64,
    },
}

/// The return part of a call: `= RET [errno (text)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ret<'a> {
    /// Everything after `= ` up to the ` <duration>` (or the end), trailing spaces cut.
    pub raw: &'a [u8],
    /// The numeric value (decimal or `0x` hex); `None` for `?`.
    pub value: Option<i64>,
    /// A `-y` decoration on the value (`3</etc/passwd>` gives `/etc/passwd`), escapes kept.
    pub decoration: Option<&'a [u8]>,
    /// The errno name (`ENOENT`, `ERESTARTSYS`), if any.
    pub errno: Option<&'a [u8]>,
}

/// A system call with its arguments and result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// Syscall name (`openat`, `restart_syscall`).
    pub name: &'a [u8],
    /// The text between the parentheses, as printed (for a resumed call: after
    /// `resumed>`), unparsed; split it with [`args`].
    pub args: &'a [u8],
    /// The result.
    pub ret: Ret<'a>,
    /// `-T`: time spent inside the call, in nanoseconds.
    pub duration_ns: Option<u64>,
}

/// How a traced process ended (`+++ ... +++`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit<'a> {
    /// `+++ exited with N +++`.
    Exited(i32),
    /// `+++ killed by SIGX [(core dumped)] +++`.
    Killed {
        /// The signal name.
        signal: &'a [u8],
        /// `(core dumped)` was printed.
        core_dumped: bool,
    },
    /// `+++ superseded by execve in pid N +++`.
    Superseded(u32),
}

/// What a trace line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// `name(args) = ret [<dur>]`.
    Call(Call<'a>),
    /// `name(args <unfinished ...>`: the call started, its end comes later.
    Unfinished {
        /// Syscall name.
        name: &'a [u8],
        /// The arguments printed so far.
        args: &'a [u8],
    },
    /// `<... name resumed>args) = ret [<dur>]`: the end of an unfinished call; the
    /// line's stamp is the exit time.
    Resumed(Call<'a>),
    /// `--- SIGNAME {siginfo} ---`.
    Signal {
        /// Signal name (`SIGPROF`).
        name: &'a [u8],
        /// The `{...}` text, unparsed.
        info: &'a [u8],
    },
    /// `+++ ... +++`.
    Exit(Exit<'a>),
}

/// One parsed trace line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceLine<'a> {
    /// The PID (thread id) from the prefix, if there was one.
    pub pid: Option<u32>,
    /// `-Y`: the command name printed with the PID.
    pub comm: Option<&'a [u8]>,
    /// Absolute timestamp, if printed.
    pub stamp: Option<Stamp>,
    /// `-r`: time since the previous printed line, in nanoseconds.
    pub relative_ns: Option<u64>,
    /// The body.
    pub body: Body<'a>,
}

/// Why a line is not a trace line (skipped and counted by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Skip {
    /// Empty or blank.
    Empty,
    /// `strace: ...` messages (`Process N attached`, ...).
    StraceMessage,
    /// `-k` stack frames (` > /lib/...`).
    StackFrame,
    /// `-e read=`/`write=` hex dumps (` | 00000  47 45 ...`).
    HexDump,
    /// `-c`/`-C` summary tables.
    Summary,
    /// Anything else (program output mixed in, a cut line).
    NotTrace,
}

impl Skip {
    /// Snake-case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::Empty => "empty",
            Skip::StraceMessage => "strace_message",
            Skip::StackFrame => "stack_frame",
            Skip::HexDump => "hex_dump",
            Skip::Summary => "summary",
            Skip::NotTrace => "not_trace",
        }
    }
}

/// Largest PID Linux hands out (`PID_MAX_LIMIT` on 64-bit). A bare leading integer
/// above it is a `format:unix,precision:s` stamp, not a PID.
const PID_MAX: u64 = 4_194_304;

/// Absolute decimal stamps have at least this many integer digits (`-ttt` epochs have
/// 10 since 2001); a decimal with fewer is an `-r` delta (under 3 years).
const EPOCH_MIN_DIGITS: usize = 9;

/// Parse one line (without its newline; a trailing `\n` or `\r\n` is ignored).
///
/// The layout is `[PID prefix] [stamp] [(+ relative)] [[nr]] [[ip]] BODY`; see the
/// module docs for the forms. A line that is not a trace line gives the reason to count
/// it under.
///
/// Where the text alone is ambiguous: a leading integer up to 4 194 304 followed by a
/// space is a PID, a bigger one a `format:unix,precision:s` stamp; a leading decimal
/// with 9 or more integer digits is an epoch stamp (`-ttt`), a shorter one an `-r`
/// delta. `-n` syscall numbers and `-i` instruction pointers are recognised and
/// dropped. `--- stopped by SIGSTOP ---` gives [`Body::Signal`] with empty `info`.
/// Unfinished calls also end in `<detached ...>` or `<pid changed to N ...>` (a
/// thread's `execve`, which then resumes under the PID of the `+++ superseded +++`
/// line). For an unfinished call, `args` has its trailing `,` cut. With `-f` to
/// stderr the `[pid N]` prefix comes and goes with the number of tracees, so an
/// unfinished call and its resumption may differ in having a PID.
///
/// ```
/// use tlsgap_parser::strace::{parse_line, Body, Exit, Skip, Stamp};
///
/// let t = parse_line(b"12085<httpd> 1795296993.226906 (+     0.000291) --- SIGPROF {si_signo=SIGPROF} ---").unwrap();
/// assert_eq!((t.pid, t.comm), (Some(12085), Some(&b"httpd"[..])));
/// assert_eq!(t.stamp, Some(Stamp::Unix { nanos: 1_795_296_993_226_906_000 }));
/// assert_eq!(t.relative_ns, Some(291_000));
/// assert!(matches!(t.body, Body::Signal { name: b"SIGPROF", .. }));
///
/// let t = parse_line(b"     0.000065 +++ killed by SIGSEGV (core dumped) +++").unwrap();
/// assert_eq!(t.relative_ns, Some(65_000));
/// assert_eq!(t.body, Body::Exit(Exit::Killed { signal: b"SIGSEGV", core_dumped: true }));
///
/// assert_eq!(parse_line(b"strace: Process 8497 attached"), Err(Skip::StraceMessage));
/// ```
pub fn parse_line(line: &[u8]) -> Result<TraceLine<'_>, Skip> {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Err(Skip::Empty);
    }
    trace_line(line).ok_or_else(|| classify(line))
}

fn trace_line(line: &[u8]) -> Option<TraceLine<'_>> {
    let mut i = 0;
    let mut pid = None;
    let mut comm = None;
    if let Some(rest) = line.strip_prefix(b"[pid ") {
        // `[pid %5u] ` (right-aligned) or `[pid %u<comm>] `.
        let start = line.len() - rest.len();
        let d = skip_spaces(line, start);
        let e = digits_end(line, d);
        pid = Some(parse_u32(line.get(d..e)?)?);
        i = e;
        if byte(line, i) == Some(b'<') {
            let (c, next) = comm_at(line, i, b']')?;
            comm = Some(c);
            i = next;
        }
        if byte(line, i) != Some(b']') || byte(line, i + 1) != Some(b' ') {
            return None;
        }
        i += 2;
    } else if byte(line, 0).is_some_and(|b| b.is_ascii_digit()) {
        // `-o` with `-f`: `%-5u ` (left-aligned), or `%u<comm> ` with `-Y`.
        let e = digits_end(line, 0);
        match byte(line, e) {
            Some(b'<') => {
                pid = Some(parse_u32(line.get(..e)?)?);
                let (c, next) = comm_at(line, e, b' ')?;
                comm = Some(c);
                i = next + 1;
            }
            Some(b' ') => {
                let v = crate::time::parse_u64(line.get(..e)?)?;
                if v <= PID_MAX {
                    pid = u32::try_from(v).ok();
                    i = e + 1;
                }
            }
            _ => {}
        }
    }
    i = skip_spaces(line, i);

    let mut stamp = None;
    let mut relative_ns = None;
    if byte(line, i).is_some_and(|b| b.is_ascii_digit()) {
        let e = digits_end(line, i);
        match byte(line, e) {
            Some(b':') => {
                let (nanos, end) = time_of_day(line, i)?;
                stamp = Some(Stamp::TimeOfDay { nanos });
                i = end;
            }
            Some(b'.') => {
                let (nanos, end) = decimal(line, i)?;
                if e - i >= EPOCH_MIN_DIGITS {
                    stamp = Some(Stamp::Unix {
                        nanos: i64::try_from(nanos).ok()?,
                    });
                } else {
                    relative_ns = Some(nanos);
                }
                i = end;
            }
            Some(b' ') => {
                // `format:unix,precision:s`: whole seconds (after a PID, or too big to
                // be one).
                let secs = crate::time::parse_u64(line.get(i..e)?)?;
                stamp = Some(Stamp::Unix {
                    nanos: i64::try_from(secs).ok()?.checked_mul(1_000_000_000)?,
                });
                i = e;
            }
            _ => return None,
        }
        if byte(line, i) != Some(b' ') {
            return None;
        }
        i = skip_spaces(line, i);
        if stamp.is_some() && line.get(i..)?.starts_with(b"(+") {
            let d = skip_spaces(line, i + 2);
            let (nanos, end) = decimal(line, d)?;
            if byte(line, end) != Some(b')') || byte(line, end + 1) != Some(b' ') {
                return None;
            }
            relative_ns = Some(nanos);
            i = end + 2;
        }
    }

    // `-n` `[ 59] ` and `-i` `[00007ffbb4547ad7] `, in that order when both.
    while byte(line, i) == Some(b'[') {
        let close = i
            + 1
            + line
                .get(i + 1..)?
                .iter()
                .take(24)
                .position(|&b| b == b']')?;
        let inner = line.get(i + 1..close)?;
        if !inner
            .iter()
            .all(|&b| b.is_ascii_hexdigit() || b == b' ' || b == b'?')
            || byte(line, close + 1) != Some(b' ')
        {
            return None;
        }
        i = skip_spaces(line, close + 1);
    }

    let body = body(line.get(i..)?)?;
    Some(TraceLine {
        pid,
        comm,
        stamp,
        relative_ns,
        body,
    })
}

fn body(s: &[u8]) -> Option<Body<'_>> {
    match *s.first()? {
        b'-' => signal(s),
        b'+' => exit(s),
        b'<' => resumed(s),
        _ => {
            let n = ident_end(s, 0);
            if n == 0 || byte(s, n) != Some(b'(') || s.first()?.is_ascii_digit() {
                return None;
            }
            let name = s.get(..n)?;
            match call_tail(s.get(n + 1..)?)? {
                Tail::Done { args, ret } => {
                    let (ret, duration_ns) = ret_and_duration(ret);
                    Some(Body::Call(Call {
                        name,
                        args,
                        ret,
                        duration_ns,
                    }))
                }
                Tail::Unfinished { args } => Some(Body::Unfinished { name, args }),
            }
        }
    }
}

/// `--- SIGCHLD {si_signo=SIGCHLD, ...} ---`, `--- stopped by SIGSTOP ---`.
fn signal(s: &[u8]) -> Option<Body<'_>> {
    let inner = s.strip_prefix(b"--- ")?.strip_suffix(b" ---")?;
    if let Some(sig) = inner.strip_prefix(b"stopped by ") {
        // A group-stop: no siginfo. Reported as the signal with empty info.
        return Some(Body::Signal {
            name: sig,
            info: &[],
        });
    }
    let sp = memchr::memchr(b' ', inner).unwrap_or(inner.len());
    let name = inner.get(..sp)?;
    if name.is_empty() {
        return None;
    }
    Some(Body::Signal {
        name,
        info: trim(inner.get(sp..)?),
    })
}

/// The four `+++ ... +++` forms.
fn exit(s: &[u8]) -> Option<Body<'_>> {
    let inner = s.strip_prefix(b"+++ ")?.strip_suffix(b" +++")?;
    let exit = if let Some(code) = inner.strip_prefix(b"exited with ") {
        let (neg, digits) = match code.strip_prefix(b"-") {
            Some(d) => (true, d),
            None => (false, code),
        };
        let v = i32::try_from(crate::time::parse_u64(digits)?).ok()?;
        Exit::Exited(if neg { -v } else { v })
    } else if let Some(sig) = inner.strip_prefix(b"killed by ") {
        let (signal, core_dumped) = match sig.strip_suffix(b" (core dumped)") {
            Some(s) => (s, true),
            None => (sig, false),
        };
        if signal.is_empty() || signal.contains(&b' ') {
            return None;
        }
        Exit::Killed {
            signal,
            core_dumped,
        }
    } else if let Some(pid) = inner.strip_prefix(b"superseded by execve in pid ") {
        Exit::Superseded(parse_u32(pid)?)
    } else {
        return None;
    };
    Some(Body::Exit(exit))
}

/// `<... read resumed>"x", 1) = 1`, and the older `<... read resumed> "x", 1) = 1`.
fn resumed(s: &[u8]) -> Option<Body<'_>> {
    let rest = s.strip_prefix(b"<... ")?;
    let n = ident_end(rest, 0);
    let name = rest.get(..n)?;
    let after = rest.get(n..)?.strip_prefix(b" resumed>")?;
    let after = after.get(skip_spaces(after, 0)..)?;
    match call_tail(after)? {
        Tail::Done { args, ret } if n > 0 => {
            let (ret, duration_ns) = ret_and_duration(ret);
            Some(Body::Resumed(Call {
                name,
                args,
                ret,
                duration_ns,
            }))
        }
        _ => None,
    }
}

enum Tail<'a> {
    /// `args) = ret`: the arguments and everything after `= `.
    Done { args: &'a [u8], ret: &'a [u8] },
    /// `args <unfinished ...>`.
    Unfinished { args: &'a [u8] },
}

/// The part of a call after its `(` (or after `resumed>`).
fn call_tail(s: &[u8]) -> Option<Tail<'_>> {
    let mut from = 0;
    let mut give_up = GiveUp::default();
    loop {
        match scan(s, from, false, &mut give_up) {
            Scan::Found(close) => {
                // `) ` + padding towards column 40 + `= ` (or `=` at the very end).
                let sp = skip_spaces(s, close + 1);
                if sp > close + 1
                    && byte(s, sp) == Some(b'=')
                    && matches!(byte(s, sp + 1), None | Some(b' '))
                {
                    return Some(Tail::Done {
                        args: s.get(..close)?,
                        ret: s.get((sp + 2).min(s.len())..)?,
                    });
                }
                from = close + 1;
            }
            Scan::End => {
                let t = trim_end(s);
                let args = trim_end(t.get(..t.len() - unfinished_marker(t)?)?);
                let args = args.strip_suffix(b",").unwrap_or(args);
                return Some(Tail::Unfinished { args });
            }
            Scan::Open => return None,
        }
    }
}

/// Length of the marker that ends an unfinished call: `<unfinished ...>`,
/// `<detached ...>` (strace detached mid-call) or `<pid changed to N ...>` (a thread's
/// `execve`, which resumes under the leader's PID after `+++ superseded ... +++`).
fn unfinished_marker(t: &[u8]) -> Option<usize> {
    for m in [&b"<unfinished ...>"[..], b"<detached ...>"] {
        if t.ends_with(m) {
            return Some(m.len());
        }
    }
    let body = t.strip_suffix(b" ...>")?;
    let lt = memchr::memrchr(b'<', body)?;
    let pid = body.get(lt + 1..)?.strip_prefix(b"pid changed to ")?;
    parse_u32(pid)?;
    Some(t.len() - lt)
}

/// Split the text after `= ` into the return and the `-T` duration.
fn ret_and_duration(t: &[u8]) -> (Ret<'_>, Option<u64>) {
    let t = trim_end(t);
    let mut raw = t;
    let mut duration_ns = None;
    if let Some(body) = t.strip_suffix(b">") {
        if let Some(lt) = memchr::memrchr(b'<', body) {
            let inside = body.get(lt + 1..).unwrap_or_default();
            if lt > 0 && byte(body, lt - 1) == Some(b' ') {
                if let Some((ns, end)) = decimal(inside, 0) {
                    if end == inside.len() {
                        duration_ns = Some(ns);
                        raw = trim_end(body.get(..lt).unwrap_or_default());
                    }
                }
            }
        }
    }
    (ret(raw), duration_ns)
}

fn ret(raw: &[u8]) -> Ret<'_> {
    let mut r = Ret {
        raw,
        value: None,
        decoration: None,
        errno: None,
    };
    let mut i;
    if let Some(hex) = raw.strip_prefix(b"0x") {
        let n = hex.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        r.value = hex
            .get(..n)
            .and_then(parse_hex)
            .map(|v| i64::from_ne_bytes(v.to_ne_bytes()));
        i = 2 + n;
    } else if byte(raw, 0) == Some(b'?') {
        i = 1;
    } else {
        let neg = byte(raw, 0) == Some(b'-');
        let d = usize::from(neg);
        let e = digits_end(raw, d);
        r.value = raw.get(d..e).and_then(parse_dec).map(|v| {
            // Unsigned returns above i64::MAX (lseek offsets) keep their bits.
            let v = i64::from_ne_bytes(v.to_ne_bytes());
            if neg {
                v.wrapping_neg()
            } else {
                v
            }
        });
        i = e;
    }
    if r.value.is_some() && byte(raw, i) == Some(b'<') {
        if let Some(end) = skip_decoration(raw, i) {
            r.decoration = raw.get(i + 1..end - 1);
            i = end;
        }
    }
    let tok_start = skip_spaces(raw, i);
    let tok = raw.get(tok_start..).unwrap_or_default();
    let tok = tok
        .get(..memchr::memchr(b' ', tok).unwrap_or(tok.len()))
        .unwrap_or_default();
    if tok.len() > 1
        && tok.first() == Some(&b'E')
        && tok
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_')
    {
        r.errno = Some(tok);
    }
    r
}

// ------------------------------------------------------------------ scanning

enum Scan {
    /// A top-level `)` (or `,` when splitting) at this index.
    Found(usize),
    /// Reached the end of the input at top level.
    End,
    /// The input ends inside a quoted string.
    Open,
}

/// Bytes the scanner stops at; everything else is skipped in a tight loop.
static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut k = 0;
    let bytes = *b"\"()[]{}</,";
    while k < bytes.len() {
        t[bytes[k] as usize] = true;
        k += 1;
    }
    t
};

/// Constructs found unclosed once: the rest of the input cannot close them either, so
/// later scans of the same input treat their openers as plain bytes. Keeps every scan
/// of a line linear in its length (a line of `<)` or `/*)` repeated would otherwise
/// be quadratic).
#[derive(Clone, Copy, Debug, Default)]
struct GiveUp {
    decorations: bool,
    comments: bool,
}

/// Find the next top-level `)` (or `,` with `commas`) from `i`, skipping quoted
/// strings, `<...>` decorations, `/* comments */` and nested brackets.
fn scan(s: &[u8], mut i: usize, commas: bool, give_up: &mut GiveUp) -> Scan {
    let mut depth = 0usize;
    loop {
        let Some(off) = s
            .get(i..)
            .and_then(|r| r.iter().position(|&b| SPECIAL[usize::from(b)]))
        else {
            return Scan::End;
        };
        i += off;
        let Some(&b) = s.get(i) else {
            return Scan::End;
        };
        match b {
            b'"' => match skip_string(s, i) {
                Some(end) => i = end,
                None => return Scan::Open,
            },
            b'(' | b'[' | b'{' => {
                depth += 1;
                i += 1;
            }
            b')' if depth == 0 && !commas => return Scan::Found(i),
            b',' if depth == 0 && commas => return Scan::Found(i),
            b')' | b']' | b'}' => {
                // Never below zero: a resumed call may close what its first half opened.
                depth = depth.saturating_sub(1);
                i += 1;
            }
            b'<' => {
                if !give_up.decorations && opens_decoration(s, i) {
                    match skip_decoration(s, i) {
                        Some(end) => {
                            i = end;
                            continue;
                        }
                        None => give_up.decorations = true,
                    }
                }
                i += 1;
            }
            b'/' if !give_up.comments && byte(s, i + 1) == Some(b'*') => {
                match s.get(i + 2..).and_then(|r| memmem::find(r, b"*/")) {
                    Some(e) => i += 2 + e + 2,
                    None => {
                        give_up.comments = true;
                        i += 1;
                    }
                }
            }
            _ => i += 1,
        }
    }
}

/// `s[i]` is `"`: the index after the closing quote, `None` when unterminated.
fn skip_string(s: &[u8], i: usize) -> Option<usize> {
    closing_quote(s, i).map(|q| q + 1)
}

/// `s[i]` is `"`: the index of the quote that closes the string, `None` when
/// unterminated. That is the first `"` after an even run of `\\` (an odd run escapes
/// it; a run starts after a byte that is not `\\`, where walking the escapes from the
/// opening quote would be at a fresh byte too). Found by searching for quotes, which
/// strings of binary data have few of, and not by stopping at each escape, which such
/// strings have every byte or two.
pub fn closing_quote(s: &[u8], i: usize) -> Option<usize> {
    crate::unescape::unescaped_quote(s, i + 1, i + 1)
}

/// Whether the `<` at `i` starts a decoration (not `<<`, `<=` or `< `).
fn opens_decoration(s: &[u8], i: usize) -> bool {
    !matches!(byte(s, i + 1), None | Some(b'<' | b'=' | b' '))
        && (i == 0 || byte(s, i - 1) != Some(b'<'))
}

/// Length of a socket-style tag `TCP:[`, `UNIX-STREAM:[`, `pipe:[` at `i`, if any.
fn socket_tag(s: &[u8], i: usize) -> Option<usize> {
    let n = s
        .get(i..)?
        .iter()
        .take(32)
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-' || **b == b'_')
        .count();
    (n > 0 && s.get(i + n..)?.starts_with(b":[")).then_some(n + 2)
}

/// `s[i]` is `<`: the index after the `>` that closes the decoration.
///
/// Socket forms (`TCP:[a->b]`, `UNIX-STREAM:[1->2,"/p"]`, `pipe:[3]`) close at `]>`
/// and may hold `->` and quoted paths; path forms close at the `>` that balances
/// nested `<...>` (`/dev/null<char 1:3>`), their own `<`/`>` being escaped (`\76`).
fn skip_decoration(s: &[u8], i: usize) -> Option<usize> {
    let start = i + 1;
    if let Some(tag) = socket_tag(s, start) {
        let mut j = start + tag;
        loop {
            let k = j + memchr::memchr3(b']', b'"', b'\\', s.get(j..)?)?;
            match byte(s, k)? {
                b']' if byte(s, k + 1) == Some(b'>') => return Some(k + 2),
                b']' => j = k + 1,
                b'"' => j = skip_string(s, k)?,
                _ => j = k + 2,
            }
        }
    }
    let mut depth = 1usize;
    let mut j = start;
    loop {
        let k = j + memchr::memchr3(b'<', b'>', b'\\', s.get(j..)?)?;
        match byte(s, k)? {
            b'<' => depth += 1,
            b'>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(k + 1);
                }
            }
            _ => {
                j = k + 2;
                continue;
            }
        }
        j = k + 1;
    }
}

// ------------------------------------------------------------------ arguments

/// The top-level items of an argument list, from [`args`].
#[derive(Clone, Debug)]
pub struct Args<'a> {
    rest: &'a [u8],
    done: bool,
    give_up: GiveUp,
}

impl<'a> Iterator for Args<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        if self.done {
            return None;
        }
        match scan(self.rest, 0, true, &mut self.give_up) {
            Scan::Found(comma) => {
                let item = self.rest.get(..comma).unwrap_or_default();
                self.rest = self.rest.get(comma + 1..).unwrap_or_default();
                Some(trim(item))
            }
            Scan::End | Scan::Open => {
                self.done = true;
                Some(trim(self.rest))
            }
        }
    }
}

/// Split call arguments at top-level commas (quotes, escapes, `<...>` decorations,
/// brackets and comments respected); each item is trimmed of spaces. An empty or
/// all-blank list has no items.
///
/// Also splits the inside of a structure or array (see [`inner`]).
///
/// ```
/// use tlsgap_parser::strace::args;
///
/// let a: Vec<&[u8]> = args(br#"8<TCP:[127.0.0.1:8081->127.0.0.1:52428]>, "a, b) = 1", [{fd=3, events=POLLIN}, {fd=4}], 0x7ffd /* 35 vars */"#).collect();
/// assert_eq!(a, [
///     &b"8<TCP:[127.0.0.1:8081->127.0.0.1:52428]>"[..],
///     br#""a, b) = 1""#,
///     b"[{fd=3, events=POLLIN}, {fd=4}]",
///     b"0x7ffd /* 35 vars */",
/// ]);
/// assert_eq!(args(b"").count(), 0);
/// ```
pub fn args(args: &[u8]) -> Args<'_> {
    Args {
        rest: args,
        done: trim(args).is_empty(),
        give_up: GiveUp::default(),
    }
}

/// The inside of one `[...]` array, `{...}` structure or `~[...]` set, to split with
/// [`args`]; `None` for anything else.
///
/// ```
/// use tlsgap_parser::strace::{args, fd_arg, inner};
///
/// let fds: Vec<_> = args(inner(b"[3<pipe:[22395]>, 4<pipe:[22395]>]").unwrap()).filter_map(fd_arg).collect();
/// assert_eq!(fds, [(3, Some(&b"pipe:[22395]"[..])), (4, Some(&b"pipe:[22395]"[..]))]);
/// assert_eq!(inner(b"{st_mode=S_IFREG|0644, ...}"), Some(&b"st_mode=S_IFREG|0644, ..."[..]));
/// ```
pub fn inner(arg: &[u8]) -> Option<&[u8]> {
    let arg = trim(arg);
    let arg = arg.strip_prefix(b"~").unwrap_or(arg);
    let close = match *arg.first()? {
        b'[' => b']',
        b'{' => b'}',
        _ => return None,
    };
    if *arg.last()? != close || arg.len() < 2 {
        return None;
    }
    arg.get(1..arg.len() - 1)
}

/// A file-descriptor argument or return: the number (`AT_FDCWD` is -100) and the raw
/// `-y`/`-yy` decoration, escapes kept (unescape it with [`decoration_path`]).
/// `None` when `arg` is not an fd.
///
/// ```
/// use tlsgap_parser::strace::fd_arg;
///
/// assert_eq!(fd_arg(b"3</etc/x>"), Some((3, Some(&b"/etc/x"[..]))));
/// assert_eq!(fd_arg(b"AT_FDCWD</>"), Some((-100, Some(&b"/"[..]))));
/// assert_eq!(fd_arg(b"1</dev/null<char 1:3>>"), Some((1, Some(&b"/dev/null<char 1:3>"[..]))));
/// assert_eq!(fd_arg(b"5"), Some((5, None)));
/// assert_eq!(fd_arg(b"\"5\""), None);
/// ```
pub fn fd_arg(arg: &[u8]) -> Option<(i64, Option<&[u8]>)> {
    let arg = trim(arg);
    let (fd, rest) = if let Some(rest) = arg.strip_prefix(b"AT_FDCWD") {
        (-100, rest)
    } else {
        let neg = byte(arg, 0) == Some(b'-');
        let d = usize::from(neg);
        let e = digits_end(arg, d);
        let v = i64::try_from(crate::time::parse_u64(arg.get(d..e)?)?).ok()?;
        (if neg { -v } else { v }, arg.get(e..)?)
    };
    if rest.is_empty() {
        return Some((fd, None));
    }
    if rest.first() != Some(&b'<') || skip_decoration(rest, 0)? != rest.len() {
        return None;
    }
    Some((fd, rest.get(1..rest.len() - 1)))
}

/// Decode a C-quoted strace string argument: `\"`, `\\`, `\t`, `\n`, `\v`, `\f`, `\r`,
/// octal (`\0`, `\312`) and `-x` hex (`\x61`). The flag says it was cut by `-s`
/// (`"..."...`). `None` when `arg` is not a quoted string (`NULL`, an address).
/// Borrowed when there is nothing to unescape.
///
/// ```
/// use tlsgap_parser::strace::quoted;
///
/// let (s, cut) = quoted(br#""GET / HTTP/1.1\r\nHost\t\0\312\x41"..."#).unwrap();
/// assert_eq!((&*s, cut), (&b"GET / HTTP/1.1\r\nHost\t\0\xcaA"[..], true));
/// assert_eq!(quoted(b"\"plain\"").unwrap().1, false);
/// assert_eq!(quoted(b"NULL"), None);
/// ```
pub fn quoted(arg: &[u8]) -> Option<(Cow<'_, [u8]>, bool)> {
    let arg = trim(arg);
    if arg.first() != Some(&b'"') {
        return None;
    }
    let end = skip_string(arg, 0)?;
    let truncated = match arg.get(end..)? {
        b"" => false,
        b"..." => true,
        _ => return None,
    };
    Some((unescape_c(arg.get(1..end - 1)?), truncated))
}

/// The path in a `-y` decoration (from [`fd_arg`] or [`Ret::decoration`]): the `-yy`
/// device suffix (`<char 1:3>`) dropped and strace's escapes undone (`\76` is `>`).
/// Socket forms (`TCP:[...]`) come back as they are.
///
/// ```
/// use tlsgap_parser::strace::decoration_path;
///
/// assert_eq!(&*decoration_path(br#"/tmp/we\"ird\76dir/x\n"#), b"/tmp/we\"ird>dir/x\n");
/// assert_eq!(&*decoration_path(b"/dev/null<char 1:3>"), b"/dev/null");
/// assert_eq!(&*decoration_path(b"TCP:[127.0.0.1:8081->127.0.0.1:52428]"), b"TCP:[127.0.0.1:8081->127.0.0.1:52428]");
/// ```
pub fn decoration_path(decoration: &[u8]) -> Cow<'_, [u8]> {
    if socket_tag(decoration, 0).is_some() {
        return Cow::Borrowed(decoration);
    }
    // A path's own `<` is escaped (`\74`), so the first bare `<` starts the suffix.
    let path = match memchr::memchr(b'<', decoration) {
        Some(lt) => decoration.get(..lt).unwrap_or(decoration),
        None => decoration,
    };
    unescape_c(path)
}

/// Undo strace's `string_quote` escapes.
fn unescape_c(s: &[u8]) -> Cow<'_, [u8]> {
    if memchr::memchr(b'\\', s).is_none() {
        return Cow::Borrowed(s);
    }
    let mut out = Vec::with_capacity(s.len());
    unescape_into(s, &mut out);
    Cow::Owned(out)
}

/// Undo strace's `string_quote` escapes of `s` (the text between the quotes) into
/// `out`, which is cleared first: the one decoder of strace strings, for callers that
/// reuse a buffer.
pub fn unescape_into(s: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while let Some(&b) = s.get(i) {
        if b == b'\\' {
            let (v, len) = escape_at(s, i);
            out.push(v);
            i += len;
        } else {
            out.push(b);
            i += 1;
        }
    }
}

/// The byte the escape starting at `s[at]` (a `\\`) decodes to, and how many bytes
/// it spans: `\\n \\t \\r \\v \\f \\a \\b`, `\\xHH`, one to three octal digits, any
/// other character as itself; a `\\x` without two hex digits is `x`, and a `\\` at the
/// very end is itself.
pub fn escape_at(s: &[u8], at: usize) -> (u8, usize) {
    let Some(&c) = s.get(at + 1) else {
        return (b'\\', 1);
    };
    let v = match c {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'v' => 0x0b,
        b'f' => 0x0c,
        b'a' => 0x07,
        b'b' => 0x08,
        b'x' => {
            return match s.get(at + 2..at + 4).and_then(parse_hex) {
                Some(v) => (v as u8, 4),
                None => (b'x', 2),
            }
        }
        b'0'..=b'7' => {
            let mut v = u32::from(c - b'0');
            let mut len = 2;
            while len < 4 {
                match s.get(at + len) {
                    Some(&d @ b'0'..=b'7') => {
                        v = v * 8 + u32::from(d - b'0');
                        len += 1;
                    }
                    _ => break,
                }
            }
            return ((v & 0xff) as u8, len);
        }
        other => other,
    };
    (v, 2)
}

// ------------------------------------------------------------------ glued lines

/// A line that an attach/detach message cut in two: the head (the start of a trace
/// line) and the message (`strace: Process 9438 attached`). `None` when the line has
/// no such message after its start.
///
/// The rest of the head's line is the next line of the file: join the two (in a
/// buffer reused across lines) and parse that.
///
/// ```
/// use tlsgap_parser::strace::{parse_line, split_glued, Body, Skip};
///
/// let first = b"[pid  9435] clone(child_stack=NULL, flags=CLONE_CHILD_SETTID|SIGCHLDstrace: Process 9438 attached";
/// let next = b", child_tidptr=0x7f9169e12a10) = 9438";
/// assert_eq!(parse_line(first), Err(Skip::StraceMessage));
/// assert_eq!(parse_line(next), Err(Skip::NotTrace));
///
/// let (head, message) = split_glued(first).unwrap();
/// assert_eq!(message, b"strace: Process 9438 attached");
/// let mut buf = Vec::new();
/// buf.extend_from_slice(head);
/// buf.extend_from_slice(next);
/// let t = parse_line(&buf).unwrap();
/// let Body::Call(call) = t.body else { panic!() };
/// assert_eq!((t.pid, call.name, call.ret.value), (Some(9435), &b"clone"[..], Some(9438)));
/// ```
pub fn split_glued(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = memmem::rfind(line, b"strace: Process ")?;
    if at == 0 {
        return None;
    }
    let msg = line.get(at..)?;
    let rest = msg.get(b"strace: Process ".len()..)?;
    let d = digits_end(rest, 0);
    let word = rest.get(d..)?;
    if d == 0 || !(word.starts_with(b" attached") || word.starts_with(b" detached")) {
        return None;
    }
    Some((line.get(..at)?, msg))
}

// ------------------------------------------------------------------ skips

fn classify(line: &[u8]) -> Skip {
    if line.starts_with(b"strace: ") || split_glued(line).is_some() {
        return Skip::StraceMessage;
    }
    if line.starts_with(b" > ") {
        return Skip::StackFrame;
    }
    if let Some(rest) = line.strip_prefix(b" | ") {
        let n = rest.iter().take_while(|b| b.is_ascii_hexdigit()).count();
        if n >= 5 {
            return Skip::HexDump;
        }
    }
    if is_summary(line) {
        return Skip::Summary;
    }
    Skip::NotTrace
}

/// `-c`/`-C` tables: the header, the rules, the rows and the total.
fn is_summary(line: &[u8]) -> bool {
    if line.starts_with(b"% time")
        || line.starts_with(b"------ ")
        || line.starts_with(b"System call usage summary")
    {
        return true;
    }
    // `  0.00    0.000000           0         6           read` and
    // `100.00    0.023177         121       190        24 total`.
    let mut words = line
        .split(|&b| b == b' ')
        .filter(|w| !w.is_empty())
        .peekable();
    let mut numbers = 0;
    while let Some(w) = words.next() {
        let is_last = words.peek().is_none();
        if w.iter().all(|&b| b.is_ascii_digit() || b == b'.') && w.iter().any(u8::is_ascii_digit) {
            if is_last {
                return false;
            }
            numbers += 1;
        } else {
            return is_last
                && numbers >= 3
                && w.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_');
        }
    }
    false
}

// ------------------------------------------------------------------ small helpers

fn byte(s: &[u8], i: usize) -> Option<u8> {
    s.get(i).copied()
}

fn skip_spaces(s: &[u8], mut i: usize) -> usize {
    while byte(s, i) == Some(b' ') {
        i += 1;
    }
    i
}

fn digits_end(s: &[u8], mut i: usize) -> usize {
    while byte(s, i).is_some_and(|b| b.is_ascii_digit()) {
        i += 1;
    }
    i
}

/// Index after a syscall-name-like identifier starting at `i`.
fn ident_end(s: &[u8], mut i: usize) -> usize {
    while byte(s, i).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
        i += 1;
    }
    i
}

fn trim_end(s: &[u8]) -> &[u8] {
    let n = s.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1);
    s.get(..n).unwrap_or_default()
}

fn trim(s: &[u8]) -> &[u8] {
    let s = trim_end(s);
    s.get(skip_spaces(s, 0)..).unwrap_or_default()
}

fn parse_u32(b: &[u8]) -> Option<u32> {
    u32::try_from(crate::time::parse_u64(b)?).ok()
}

/// A run of digits as a `u64`, up to `u64::MAX` (20 digits).
fn parse_dec(b: &[u8]) -> Option<u64> {
    if b.is_empty() {
        return None;
    }
    b.iter().try_fold(0u64, |v, &c| {
        if !c.is_ascii_digit() {
            return None;
        }
        v.checked_mul(10)?.checked_add(u64::from(c - b'0'))
    })
}

fn parse_hex(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v << 4 | u64::from(d);
    }
    Some(v)
}

/// `-Y`: `<comm>` at `i` closed by `>` then `closer` (`]` or space). Returns the comm
/// and the index of `closer`.
fn comm_at(s: &[u8], i: usize, closer: u8) -> Option<(&[u8], usize)> {
    let rest = s.get(i + 1..)?;
    // comm is at most 15 bytes, each at most 4 when escaped.
    let n = rest
        .windows(2)
        .take(64)
        .position(|w| w[0] == b'>' && w[1] == closer)?;
    Some((rest.get(..n)?, i + 1 + n + 1))
}

/// `D+[.F{1,9}]` at `i` as nanoseconds; returns the index after it.
fn decimal(s: &[u8], i: usize) -> Option<(u64, usize)> {
    // One pass over the digits (this runs twice a line: the time stamp and `<0.000011>`).
    let (secs, n) = digits_value(s.get(i..)?, 19)?;
    if n == 0 {
        return None;
    }
    let mut end = i + n;
    let mut nanos = 0u64;
    if byte(s, end) == Some(b'.') {
        let (frac, k) = digits_value(s.get(end + 1..)?, 9)?;
        nanos = frac * u64::from(crate::time::FRAC_SCALE.get(k).copied().unwrap_or(1));
        end += 1 + k;
    }
    Some((secs.checked_mul(1_000_000_000)?.checked_add(nanos)?, end))
}

/// The value of the digits `s` starts with and how many there are; `None` when there
/// are more than `max` (at most 19: no overflow).
fn digits_value(s: &[u8], max: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    let mut n = 0;
    for &c in s {
        if !c.is_ascii_digit() {
            break;
        }
        if n == max {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
        n += 1;
    }
    Some((v, n))
}

/// `HH:MM:SS[.F]` at `i` as nanoseconds since midnight.
fn time_of_day(s: &[u8], i: usize) -> Option<(u64, usize)> {
    let field = |at: usize, max: u64| -> Option<(u64, usize)> {
        let e = digits_end(s, at);
        if e == at || e - at > 2 {
            return None;
        }
        let v = crate::time::parse_u64(s.get(at..e)?)?;
        (v <= max).then_some((v, e))
    };
    let (h, e) = field(i, 23)?;
    if byte(s, e) != Some(b':') {
        return None;
    }
    let (m, e) = field(e + 1, 59)?;
    if byte(s, e) != Some(b':') {
        return None;
    }
    let (sec, e) = field(e + 1, 60)?;
    let (mut nanos, mut end) = (0, e);
    if byte(s, e) == Some(b'.') {
        end = digits_end(s, e + 1);
        nanos = crate::time::parse_frac(s.get(e + 1..end)?)?;
    }
    Some((
        ((h * 60 + m) * 60 + sec) * 1_000_000_000 + u64::from(nanos),
        end,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(line: &[u8]) -> (TraceLine<'_>, Call<'_>) {
        let t =
            parse_line(line).unwrap_or_else(|e| panic!("{e:?}: {}", String::from_utf8_lossy(line)));
        match t.body {
            Body::Call(c) | Body::Resumed(c) => (t, c),
            other => panic!("not a call: {other:?}"),
        }
    }

    fn split(a: &[u8]) -> Vec<&[u8]> {
        args(a).collect()
    }

    #[test]
    fn pid_prefixes() {
        let (t, c) = call(b"12085 read(3, \"x\", 1) = 1");
        assert_eq!((t.pid, t.comm, c.name), (Some(12085), None, &b"read"[..]));
        let (t, _) = call(b"7852  write(1, \"x\\n\", 2)                = 2");
        assert_eq!(t.pid, Some(7852));
        let (t, _) = call(b"[pid   123] getpid()                      = 123");
        assert_eq!(t.pid, Some(123));
        let (t, _) = call(b"[pid 12085<httpd>] getpid() = 12085");
        assert_eq!((t.pid, t.comm), (Some(12085), Some(&b"httpd"[..])));
        let (t, _) = call(b"7843<sh> 00:26:37.103416 brk(NULL) = 0x556825ad6000");
        assert_eq!((t.pid, t.comm), (Some(7843), Some(&b"sh"[..])));
        let (t, _) = call(b"[pid 77<Web Content>] getpid() = 77");
        assert_eq!(t.comm, Some(&b"Web Content"[..]));
        let (t, _) = call(b"getpid() = 5");
        assert_eq!((t.pid, t.stamp, t.relative_ns), (None, None, None));
    }

    #[test]
    fn stamps() {
        let (t, _) = call(b"21:36:31 getpid() = 1");
        assert_eq!(
            t.stamp,
            Some(Stamp::TimeOfDay {
                nanos: 77_791_000_000_000
            })
        );
        let (t, _) = call(b"21:36:35.718 getpid() = 1");
        assert_eq!(
            t.stamp,
            Some(Stamp::TimeOfDay {
                nanos: 77_795_718_000_000
            })
        );
        let (t, _) = call(b"1795296995.090249344 getpid() = 1");
        assert_eq!(
            t.stamp,
            Some(Stamp::Unix {
                nanos: 1_795_296_995_090_249_344
            })
        );
        let (t, _) = call(b"12 1795296995 getpid() = 1");
        assert_eq!(
            (t.pid, t.stamp),
            (
                Some(12),
                Some(Stamp::Unix {
                    nanos: 1_795_296_995_000_000_000
                })
            )
        );
        // Too big for a PID: a whole-second epoch stamp.
        let (t, _) = call(b"1795296995 getpid() = 1");
        assert_eq!(
            (t.pid, t.stamp),
            (
                None,
                Some(Stamp::Unix {
                    nanos: 1_795_296_995_000_000_000
                })
            )
        );
        let (t, _) = call(b"     0.000291 getpid() = 1");
        assert_eq!((t.pid, t.stamp, t.relative_ns), (None, None, Some(291_000)));
        let (t, _) = call(b"[pid  7865]      1.000291 getpid() = 1");
        assert_eq!((t.pid, t.relative_ns), (Some(7865), Some(1_000_291_000)));
        let (t, _) = call(b"123   21:36:32.596155 (+     0.000291) getpid() = 1");
        assert_eq!(t.relative_ns, Some(291_000));
        assert_eq!(
            t.stamp,
            Some(Stamp::TimeOfDay {
                nanos: 77_792_596_155_000
            })
        );
        assert_eq!(parse_line(b"25:00:00 getpid() = 1"), Err(Skip::NotTrace));
    }

    #[test]
    fn syscall_number_and_ip() {
        let (t, c) = call(b"7843<sh> 00:26:37.104081 [ 257] [00007fc26471cb1d] openat(AT_FDCWD</tmp/st>, \"/etc/ld.so.cache\", O_RDONLY|O_CLOEXEC) = 3</etc/ld.so.cache> <0.000061>");
        assert_eq!(t.pid, Some(7843));
        assert_eq!(c.name, b"openat");
        assert_eq!(c.ret.value, Some(3));
        assert_eq!(c.ret.decoration, Some(&b"/etc/ld.so.cache"[..]));
        assert_eq!(c.duration_ns, Some(61_000));
        let (_, c) = call(b"[????????????????] exit_group(0) = ?");
        assert_eq!(c.ret.value, None);
    }

    #[test]
    fn returns() {
        let (_, c) = call(b"access(\"/etc/ld.so.preload\", R_OK)      = -1 ENOENT (No such file or directory) <0.000059>");
        assert_eq!((c.ret.value, c.ret.errno), (Some(-1), Some(&b"ENOENT"[..])));
        assert_eq!(c.ret.raw, b"-1 ENOENT (No such file or directory)");
        assert_eq!(c.duration_ns, Some(59_000));
        let (_, c) = call(b"poll([{fd=8, events=POLLIN}], 1, 100) = 1 ([{fd=8, revents=POLLIN}])");
        assert_eq!((c.ret.value, c.ret.errno), (Some(1), None));
        let (_, c) = call(b"select(0, NULL, NULL, NULL, {tv_sec=0, tv_usec=100}) = 0 (Timeout)");
        assert_eq!(c.ret.raw, b"0 (Timeout)");
        let (_, c) = call(b"read(0,  <unfinished ...>) = ? ERESTARTSYS (To be restarted if SA_RESTART is set) <1.5>");
        assert_eq!(
            (c.ret.value, c.ret.errno, c.duration_ns),
            (None, Some(&b"ERESTARTSYS"[..]), Some(1_500_000_000))
        );
        let (_, c) = call(b"exit_group(0)                           = ?");
        assert_eq!(
            (c.ret.raw, c.ret.value, c.duration_ns),
            (&b"?"[..], None, None)
        );
        let (_, c) = call(b"read(3, 0x7f, 10) = ? <unavailable>");
        assert_eq!(
            (c.ret.raw, c.ret.value, c.duration_ns),
            (&b"? <unavailable>"[..], None, None)
        );
        let (_, c) = call(b"mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, -1, 0) = 0x7fc2646f2000");
        assert_eq!(c.ret.value, Some(0x7fc2646f2000));
        let (_, c) = call(b"lseek(3, 0, SEEK_END) = 18446744073709551615");
        assert_eq!(c.ret.value, Some(-1));
        let (_, c) = call(b"fcntl(3, F_GETFL) = 0x8002 (flags O_RDWR|O_LARGEFILE)");
        assert_eq!(c.ret.value, Some(0x8002));
        let (_, c) = call(b"dup(1</dev/null<char 1:3>>) = 5</dev/null<char 1:3>> <0.000010>");
        assert_eq!(c.ret.decoration, Some(&b"/dev/null<char 1:3>"[..]));
        assert_eq!(c.duration_ns, Some(10_000));
        let (_, c) = call(b"accept4(4<TCP:[0.0.0.0:80]>, NULL, NULL, 0) = 8<TCP:[127.0.0.1:8081->127.0.0.1:52428]> <0.5>");
        assert_eq!(
            c.ret.decoration,
            Some(&b"TCP:[127.0.0.1:8081->127.0.0.1:52428]"[..])
        );
        assert_eq!(c.duration_ns, Some(500_000_000));
        let (_, c) =
            call(b"open(\"/x\", O_RDONLY) = -1 ENOENT (No such file or directory) (INJECTED)");
        assert_eq!(c.ret.errno, Some(&b"ENOENT"[..]));
    }

    #[test]
    fn hostile_arguments() {
        let (_, c) = call(br#"write(1, "a) = 1 <0.1> \"x\" >", 17) = 17 <0.000002>"#);
        assert_eq!(c.args, br#"1, "a) = 1 <0.1> \"x\" >", 17"#);
        assert_eq!((c.ret.value, c.duration_ns), (Some(17), Some(2_000)));
        let (_, c) = call(br#"openat(AT_FDCWD</tmp/st/we\"ird\76dir>, ") = x", O_RDONLY) = 3</tmp/a\76b\\> <0.000001>"#);
        assert_eq!(c.ret.decoration, Some(&br"/tmp/a\76b\\"[..]));
        assert_eq!(split(c.args).len(), 3);
        let (_, c) = call(b"connect(8<UNIX-STREAM:[37691->37687,\"/tmp/u) = >.sock\"]>, {sa_family=AF_UNIX}, 110) = 0");
        assert_eq!(
            split(c.args)[0],
            &b"8<UNIX-STREAM:[37691->37687,\"/tmp/u) = >.sock\"]>"[..]
        );
        let (_, c) = call(
            b"getsockname(5<TCPv6:[[::1]:38139->[::1]:53890]>, {sa_family=AF_INET6}, [28]) = 0",
        );
        assert_eq!(split(c.args).len(), 3);
        let (_, c) = call(b"execve(\"/bin/sh\", [\"sh\"], 0x7ffd /* 39 vars ) = 1 */) = 0");
        assert_eq!(c.ret.value, Some(0));
        assert_eq!(split(c.args)[2], b"0x7ffd /* 39 vars ) = 1 */");
        let (_, c) =
            call(b"restart_syscall(<... resuming interrupted clock_nanosleep ...>) = 0 <0.9>");
        assert_eq!(
            (c.name, c.args),
            (
                &b"restart_syscall"[..],
                &b"<... resuming interrupted clock_nanosleep ...>"[..]
            )
        );
        let (_, c) = call(b"wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 13877");
        assert_eq!(c.ret.value, Some(13877));
        let (_, c) = call(b"ioctl(1, 1<<3, x) = 0");
        assert_eq!(split(c.args), [&b"1"[..], b"1<<3", b"x"]);
        let (_, c) =
            call(b"clone3({flags=CLONE_VM, exit_signal=0} => {parent_tid=[9614]}, 88) = 9614");
        assert_eq!(split(c.args).len(), 2);
    }

    #[test]
    fn unfinished_and_resumed() {
        let t = parse_line(b"[pid 22] read(3<pipe:[22395]>,  <unfinished ...>").unwrap();
        assert_eq!(
            t.body,
            Body::Unfinished {
                name: b"read",
                args: b"3<pipe:[22395]>"
            }
        );
        let t = parse_line(b"[pid 22] wait4(-1,  <unfinished ...>)").unwrap_err();
        assert_eq!(t, Skip::NotTrace);
        let t = parse_line(b"12 read(0, <detached ...>").unwrap();
        assert!(matches!(t.body, Body::Unfinished { name: b"read", .. }));
        let t = parse_line(b"[pid 18407] execve(\"/bin/true\", [\"true\"], 0x7fff86c79808 /* 35 vars */ <pid changed to 18406 ...>").unwrap();
        assert_eq!(
            t.body,
            Body::Unfinished {
                name: b"execve",
                args: b"\"/bin/true\", [\"true\"], 0x7fff86c79808 /* 35 vars */"
            }
        );
        let t = parse_line(b"12 nanosleep({tv_sec=1, tv_nsec=0},  <unfinished ...>").unwrap();
        assert_eq!(
            t.body,
            Body::Unfinished {
                name: b"nanosleep",
                args: b"{tv_sec=1, tv_nsec=0}"
            }
        );
        // A string that merely ends like the marker is not a marker.
        assert_eq!(
            parse_line(b"12 write(1, \"<unfinished ...>"),
            Err(Skip::NotTrace)
        );

        let (t, c) = call(b"[pid 22] <... read resumed>\"x\", 1) = 1 <0.103564>");
        assert!(matches!(t.body, Body::Resumed(_)));
        assert_eq!(
            (c.name, c.args, c.ret.value, c.duration_ns),
            (&b"read"[..], &b"\"x\", 1"[..], Some(1), Some(103_564_000))
        );
        // Older strace: a space after `resumed>`.
        let (_, c) = call(
            b"22    <... wait4 resumed> [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 13877",
        );
        assert_eq!((c.name, c.ret.value), (&b"wait4"[..], Some(13877)));
        assert_eq!(split(c.args).len(), 3);
        let (_, c) = call(b"<... select resumed> )      = 1 (in [3])");
        assert_eq!((c.args, c.ret.value), (&b""[..], Some(1)));
        let (_, c) = call(b"<... exit_group resumed>) = ?");
        assert_eq!(c.ret.value, None);
        let (_, c) =
            call(b"<... ppoll resumed>}], 1, NULL, NULL, 8) = 1 ([{fd=3, revents=POLLIN}])");
        assert_eq!(c.ret.value, Some(1));
    }

    #[test]
    fn signals_and_exits() {
        let t = parse_line(b"--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=13877, si_utime=19 /* 0.19 s */} ---").unwrap();
        assert!(
            matches!(t.body, Body::Signal { name: b"SIGCHLD", info } if info.starts_with(b"{si_signo") && info.ends_with(b"*/}"))
        );
        let t = parse_line(b"[pid 5] --- stopped by SIGSTOP ---").unwrap();
        assert_eq!(
            t.body,
            Body::Signal {
                name: b"SIGSTOP",
                info: b""
            }
        );
        let exits: [(&[u8], Exit); 5] = [
            (b"+++ exited with 0 +++", Exit::Exited(0)),
            (b"+++ exited with 255 +++", Exit::Exited(255)),
            (
                b"+++ killed by SIGKILL +++",
                Exit::Killed {
                    signal: b"SIGKILL",
                    core_dumped: false,
                },
            ),
            (
                b"+++ killed by SIGSEGV (core dumped) +++",
                Exit::Killed {
                    signal: b"SIGSEGV",
                    core_dumped: true,
                },
            ),
            (
                b"+++ superseded by execve in pid 4242 +++",
                Exit::Superseded(4242),
            ),
        ];
        for (line, want) in exits {
            assert_eq!(parse_line(line).unwrap().body, Body::Exit(want));
        }
        assert_eq!(parse_line(b"+++ vanished +++"), Err(Skip::NotTrace));
    }

    #[test]
    fn skips() {
        let cases: [(&[u8], Skip); 14] = [
            (b"", Skip::Empty),
            (b"   \r\n", Skip::Empty),
            (b"strace: Process 8497 attached", Skip::StraceMessage),
            (b"strace: Process 8497 detached", Skip::StraceMessage),
            (
                b"[pid  9438] read(3, strace: Process 9439 attached",
                Skip::StraceMessage,
            ),
            (
                b" > /usr/lib/x86_64-linux-gnu/libc.so.6(__write+0x10) [0xf8350]",
                Skip::StackFrame,
            ),
            (
                b" | 00000  76 6d 0a                                          vm.              |",
                Skip::HexDump,
            ),
            (
                b"% time     seconds  usecs/call     calls    errors syscall",
                Skip::Summary,
            ),
            (
                b"------ ----------- ----------- --------- --------- ----------------",
                Skip::Summary,
            ),
            (
                b"  0.00    0.000000           0         6           read",
                Skip::Summary,
            ),
            (
                b"100.00    0.023177         121       190        24 total",
                Skip::Summary,
            ),
            (b"hello world", Skip::NotTrace),
            (b", child_tidptr=0x7f9169e12a10) = 9438", Skip::NotTrace),
            (b"12085 read(3, \"abc", Skip::NotTrace),
        ];
        for (line, want) in cases {
            assert_eq!(
                parse_line(line),
                Err(want),
                "{}",
                String::from_utf8_lossy(line)
            );
        }
    }

    #[test]
    fn glued_line_rejoins() {
        let first = b"clone3({flags=CLONE_VM, tls=0x7f9b0df986c0}strace: Process 9614 attached";
        let (head, msg) = split_glued(first).unwrap();
        assert_eq!(msg, b"strace: Process 9614 attached");
        let joined = [head, &b" => {parent_tid=[9614]}, 88) = 9614"[..]].concat();
        let (_, c) = call(&joined);
        assert_eq!((c.name, c.ret.value), (&b"clone3"[..], Some(9614)));
        assert_eq!(split_glued(b"strace: Process 1 attached"), None);
        assert_eq!(
            split_glued(b"write(1, \"strace: Process x attached\", 9) = 9"),
            None
        );
    }

    #[test]
    fn args_splitting() {
        assert_eq!(
            split(b"  3 ,  \"a,b\" , [1, 2]  "),
            [&b"3"[..], b"\"a,b\"", b"[1, 2]"]
        );
        assert_eq!(split(b"a,"), [&b"a"[..], b""]);
        assert_eq!(split(b"\"unterminated, x"), [&b"\"unterminated, x"[..]]);
        assert_eq!(split(b"x<unclosed, y"), [&b"x<unclosed"[..], b"y"]);
        assert_eq!(
            split(b"{a=1, b={c=2, d=3}}, ~[CHLD RTMIN]"),
            [&b"{a=1, b={c=2, d=3}}"[..], b"~[CHLD RTMIN]"]
        );
    }

    proptest::proptest! {
        /// The one-pass `D+[.F{0,9}]` reads what splitting at the digits and parsing
        /// each part reads (at most 19 digits of seconds, 9 of fraction).
        #[test]
        fn decimal_is_seconds_and_fraction(
            v in proptest::collection::vec(proptest::sample::select(vec![b'0', b'7', b'9', b'.', b' ', b'>']), 0..34),
            at in 0usize..3,
        ) {
            let want = (|| {
                let e = digits_end(&v, at);
                let secs = crate::time::parse_u64(v.get(at..e)?)?;
                let (mut end, mut nanos) = (e, 0);
                if byte(&v, e) == Some(b'.') {
                    end = digits_end(&v, e + 1);
                    nanos = crate::time::parse_frac(v.get(e + 1..end)?)?;
                }
                Some((secs.checked_mul(1_000_000_000)?.checked_add(u64::from(nanos))?, end))
            })();
            proptest::prop_assert_eq!(decimal(&v, at), want);
        }

        /// The quote search finds the quote a walk over the escapes from the opening
        /// quote stops at, on strings made of quotes, backslashes and plain bytes.
        #[test]
        fn closing_quote_is_where_the_escape_walk_stops(
            v in proptest::collection::vec(proptest::sample::select(vec![b'"', b'\\', b'a', b'x']), 0..40)
        ) {
            let mut s = vec![b'"'];
            s.extend_from_slice(&v);
            let mut j = 1;
            let walked = loop {
                match s.get(j) {
                    None => break None,
                    Some(b'"') => break Some(j),
                    Some(b'\\') => j += 2,
                    Some(_) => j += 1,
                }
            };
            proptest::prop_assert_eq!(closing_quote(&s, 0), walked);
        }
    }

    #[test]
    fn quoted_strings() {
        let (v, t) = quoted(br#""\x47\x45\x54 \"\\\v\f\7\18""#).unwrap();
        assert_eq!((&*v, t), (&b"GET \"\\\x0b\x0c\x07\x018"[..], false));
        assert!(matches!(quoted(b"\"abc\"").unwrap().0, Cow::Borrowed(_)));
        assert_eq!(quoted(b"\"abc\"x"), None);
        assert_eq!(quoted(b"\"abc"), None);
        assert_eq!(quoted(b"0x7ffd"), None);
    }

    #[test]
    fn fd_args() {
        assert_eq!(fd_arg(b"-1"), Some((-1, None)));
        assert_eq!(fd_arg(b"AT_FDCWD"), Some((-100, None)));
        assert_eq!(fd_arg(b"3</a>b"), None);
        assert_eq!(fd_arg(b"3<"), None);
        assert_eq!(fd_arg(b"O_RDONLY"), None);
        assert_eq!(
            fd_arg(b"4<pipe:[18610]>"),
            Some((4, Some(&b"pipe:[18610]"[..])))
        );
        assert_eq!(&*decoration_path(b"/x/y (deleted)"), b"/x/y (deleted)");
    }

    #[test]
    fn unclosed_openers_stay_linear() {
        // Quadratic scanning would take minutes here.
        for unit in [&b"<) "[..], b"/*) ", b"<TCP:[) "] {
            let mut line = b"12 f(".to_vec();
            line.extend(std::iter::repeat_n(unit, 200_000).flatten());
            let start = std::time::Instant::now();
            assert_eq!(parse_line(&line), Err(Skip::NotTrace));
            assert_eq!(args(&line).count(), 1);
            assert!(start.elapsed().as_secs() < 5, "{:?}", start.elapsed());
        }
    }

    #[test]
    fn no_length_limit() {
        let mut line = b"12 write(1, \"".to_vec();
        line.extend(std::iter::repeat_n(b"a) = 1 ".as_slice(), 100_000).flatten());
        line.extend_from_slice(b"\", 700000) = 700000 <0.001>");
        let (_, c) = call(&line);
        assert_eq!(
            (c.ret.value, c.duration_ns),
            (Some(700_000), Some(1_000_000))
        );
    }
}
