//! The access-log lines a server's workers write, found in their strace (`write`,
//! `writev`, `pwrite64`, whole or cut by `-s`, finished or not): who wrote which line
//! when, and the user it logs, read from the line's first bytes where the log format
//! puts it ([`UserSlot`]). `tlsgap auth` joins them with the gaps (the `attribute`
//! module).

use tlsgap_parser::format::{Item, Kind};
use tlsgap_parser::strace::{self, Body, Stamp};
use tlsgap_parser::{Escaping, Format, Role, TimeSpec};

use super::model::{LogWrite, Turn, HEAD_MAX};

/// Where `%u` sits in the first bytes of an access-log line, so that the user can be
/// read from a worker's `write()` of its log line even when strace cut the string at
/// 32 bytes (its default `-s`): after `before` space-separated fields (`%h %l %u`: 2,
/// `%v %h %l %u`: 3), ended by ` [` when `%t` follows it, else by a space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserSlot {
    before: usize,
    bracket_after: bool,
    /// How the server escapes the user in its lines (`jürgen` is `j\xc3\xbcrgen` in
    /// Apache's): the name is unescaped as the access log's is, or one user would
    /// show as two.
    escaping: Escaping,
}

impl UserSlot {
    /// `%h %l %u %t ...` as Apache writes it: common, combined, combinedssl (nginx's
    /// combined has the same slot, its own escaping).
    pub const COMBINED: UserSlot = UserSlot {
        before: 2,
        bracket_after: true,
        escaping: Escaping::Apache,
    };

    /// The slot of `format`'s user field; `None` when it has none (`ssl_request`) or
    /// when a field before it is not a plain space-separated one (a quoted request).
    pub fn of(format: &Format) -> Option<UserSlot> {
        let user = format.role(Role::User)?;
        let mut before = 0;
        let mut items = format.items.iter();
        while let Some(item) = items.next() {
            match item {
                Item::Field(f) if *f == user => {
                    let rest: Vec<&Item> = items.take(2).collect();
                    let bracket_after = match rest.as_slice() {
                        [Item::Lit(l), ..] if l.as_slice() == b" [" => true,
                        [Item::Lit(l), Item::Field(t)] if l.as_slice() == b" " => matches!(
                            format.fields.get(*t).map(|f| &f.kind),
                            Some(Kind::Time(TimeSpec::Clf { brackets: true }))
                        ),
                        _ => false,
                    };
                    return Some(UserSlot {
                        before,
                        bracket_after,
                        escaping: format.escaping,
                    });
                }
                Item::Field(f) => {
                    let kind = &format.fields.get(*f)?.kind;
                    if !matches!(kind, Kind::Token | Kind::Int | Kind::Text) {
                        return None;
                    }
                }
                Item::Lit(l) if l.as_slice() == b" " => before += 1,
                // `%v:%p` is one space-separated field.
                Item::Lit(l) if !l.contains(&b' ') => {}
                Item::Lit(_) => return None,
            }
        }
        None
    }
}

/// What a worker's write says about the user of the request it logs.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Logged {
    /// The user field (`-` for none).
    User(String),
    /// A log line, cut by strace before the user field ended; `-s` this large would
    /// show it.
    Cut { string_limit: usize },
}

/// The user of the access-log line (or its cut beginning) in `bytes`; `None` when the
/// bytes are not the beginning of an access-log line.
fn logged_user(bytes: &[u8], cut: bool, slot: UserSlot) -> Option<Logged> {
    let plain = |t: &[u8]| !t.is_empty() && t.iter().all(|&b| b.is_ascii_graphic() || b >= 0x80);
    // An address or a name (`%h`, `%v`, `%v:%p`); a bracketed IPv6 address, not an
    // error-log line's `[Tue Nov ...`.
    let host_like = |t: &[u8]| match t.strip_prefix(b"[") {
        Some(v6) => {
            !v6.is_empty()
                && v6
                    .iter()
                    .all(|&b| b.is_ascii_hexdigit() || b":.]%".contains(&b))
        }
        None => {
            !t.is_empty()
                && t.iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b"._-:%".contains(&b))
        }
    };
    // Strace's default -s is 32: suggest a limit that shows a user name of up to
    // about 30 bytes after where it starts.
    let limit = |start: usize| {
        let want = (start + 40).max(bytes.len() + 1);
        want.next_power_of_two().max(64)
    };
    let mut at = 0;
    for k in 0..slot.before {
        let rest = bytes.get(at..)?;
        let Some(sp) = rest.iter().position(|&b| b == b' ') else {
            let ok = if k == 0 { host_like(rest) } else { plain(rest) } || rest.is_empty();
            return (cut && ok).then(|| Logged::Cut {
                string_limit: limit(bytes.len()),
            });
        };
        let token = rest.get(..sp)?;
        let ok = if k == 0 {
            host_like(token)
        } else {
            plain(token)
        };
        if !ok {
            return None;
        }
        at += sp + 1;
    }
    let rest = bytes.get(at..)?;
    let end = if slot.bracket_after {
        rest.windows(2).position(|w| w == b" [")
    } else {
        rest.iter().position(|&b| b == b' ')
    };
    let Some(end) = end else {
        let ok = rest.iter().all(|&b| b >= 0x20 && b != 0x7f) && rest.len() < 256;
        return (cut && ok).then(|| Logged::Cut {
            string_limit: limit(at),
        });
    };
    let user = rest.get(..end)?;
    if user.is_empty() || user.len() > 256 || user.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return None;
    }
    if slot.bracket_after {
        // `[` then the day of %t, or the cut.
        match rest.get(end + 2) {
            Some(b) if b.is_ascii_digit() => {}
            None if cut => {}
            _ => return None,
        }
    }
    let user = tlsgap_parser::unescape(user, slot.escaping);
    Some(Logged::User(
        tlsgap_parser::lossless_text(&user).into_owned(),
    ))
}

/// Whether the fd of a write (as `-y`/`-yy` decorate it) can be an access log: a file
/// or a pipe (piped logs, rotatelogs); not a socket.
fn may_be_log_fd(arg: &[u8]) -> bool {
    match strace::fd_arg(arg) {
        Some((_, Some(decoration))) => {
            decoration.starts_with(b"/") || decoration.starts_with(b"pipe:")
        }
        _ => true,
    }
}

fn clock_us(stamp: Stamp, day: i64) -> (i64, bool) {
    match stamp {
        Stamp::Unix { nanos } => (nanos / 1000, true),
        Stamp::TimeOfDay { nanos } => (day * 86_400_000_000 + (nanos / 1000) as i64, false),
    }
}

/// Finds the access-log lines traced workers wrote (`write`/`writev`/`pwrite64`),
/// one trace at a time (`-t`/`-tt` stamps roll over at midnight).
pub struct WriteScan {
    day: i64,
    last_tod: u64,
    slot: UserSlot,
    /// For `-t`/`-tt` stamps: dates a time on the trace's clock (µs from the
    /// midnight that starts the run's first day) as µs since the epoch.
    date: Option<DateFn>,
    /// Per write pushed: the path written to, when `-y` shows it.
    paths: Vec<Option<Vec<u8>>>,
    /// The thread of lines without a PID in a trace whose name gives none.
    unprefixed: u32,
    /// `-r`: the sum of the deltas so far, in nanoseconds (the gaps' clock of the
    /// same trace, which sums them alike).
    relative: i64,
    /// Where the workers turned to a request ([`Turn`]), in the trace's order.
    turns: Vec<Turn>,
}

/// How a scan dates a `-t`/`-tt` time ([`WriteScan::new`]).
pub type DateFn = Box<dyn Fn(i64) -> i64>;

impl std::fmt::Debug for WriteScan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteScan")
            .field("day", &self.day)
            .field("slot", &self.slot)
            .field("dated", &self.date.is_some())
            .finish_non_exhaustive()
    }
}

impl WriteScan {
    /// A scan of input `input` (its number tells apart the threads of traces without
    /// PIDs, [`unprefixed_thread`]) of a server whose log format puts the user where
    /// `slot` says; `date` dates `-t`/`-tt` times (`None`: they stay undated).
    pub fn new(slot: UserSlot, date: Option<DateFn>, input: usize) -> WriteScan {
        WriteScan {
            day: 0,
            last_tod: 0,
            slot,
            date,
            paths: Vec::new(),
            unprefixed: unprefixed_thread(input),
            relative: 0,
            turns: Vec::new(),
        }
    }

    /// Per write found, in order: the path written to, when `-y` showed it; and the
    /// moments the workers turned to a request ([`Turn`]).
    pub fn into_parts(self) -> (Vec<Option<Vec<u8>>>, Vec<Turn>) {
        (self.paths, self.turns)
    }
}

/// The access-log writes one trace's text shows, as `tlsgap auth` finds them to join
/// with the gaps: each line (`\n`-separated) read as the workers' trace of a server
/// whose log format puts the user where `slot` says, with no date for `-t`/`-tt`
/// stamps and no PID for lines without one (the scan [`WriteScan`] runs, on a whole
/// text: what the fuzz target `log_writes` drives).
pub fn scan_log_writes(trace: &[u8], slot: UserSlot) -> Vec<LogWrite> {
    let mut scan = WriteScan::new(slot, None, 0);
    let mut out = Vec::new();
    for line in trace.split(|&b| b == b'\n') {
        scan.line(None, line, &mut out);
    }
    out
}

/// The thread of the lines of input `input` that carry no PID when the file's name
/// gives none either: `strace -tt -p PID -o trace` of one process writes no PID, and
/// the gap analysis calls that thread 0 in every such input. A number no real PID
/// takes (Linux's are below 2^22), one per input, so that a gap is only ever tied to a
/// log write of its own trace.
pub fn unprefixed_thread(input: usize) -> u32 {
    u32::MAX
        - u32::try_from(input)
            .unwrap_or(u32::MAX / 2)
            .min(u32::MAX / 2)
}

impl WriteScan {
    /// Read one trace line (`hint`: the thread, when the trace's name gives it),
    /// adding the access-log write it shows, if any, to `out`.
    pub fn line(&mut self, hint: Option<u32>, line: &[u8], out: &mut Vec<LogWrite>) {
        let Ok(t) = strace::parse_line(line) else {
            return;
        };
        // When, µs on the trace's clock, and whether that is the epoch's; an undated
        // clock is dated by `date` only for `-t`/`-tt`.
        let (at, epoch, datable) = match (t.stamp, t.relative_ns) {
            (Some(stamp), _) => {
                if let Stamp::TimeOfDay { nanos } = stamp {
                    if nanos + 12 * 3_600_000_000_000 < self.last_tod {
                        self.day += 1;
                    }
                    self.last_tod = nanos;
                }
                let (at, epoch) = clock_us(stamp, self.day);
                (at, epoch, true)
            }
            // `-r` deltas count from the previous line of any thread: summed over
            // the one file of `-f`, meaningless per `-ff` file (the gaps skip those).
            (None, Some(delta)) if hint.is_none() => {
                let delta = i64::try_from(delta).unwrap_or(i64::MAX);
                self.relative = self.relative.saturating_add(delta);
                (self.relative / 1000, false, false)
            }
            _ => return,
        };
        // A write another thread's line interrupted (`-f` into one file) shows its
        // bytes on the `<unfinished ...>` line, at the call's start.
        let (name, call_args, ret) = match t.body {
            Body::Call(c) | Body::Resumed(c) => (c.name, c.args, c.ret.value),
            Body::Unfinished { name, args } => (name, args, None),
            _ => return,
        };
        let pid = t.pid.or(hint).unwrap_or(self.unprefixed);
        let finished = !matches!(t.body, Body::Unfinished { .. });
        if is_turn(name, call_args, finished) {
            self.turns.push(Turn { pid, at });
            return;
        }
        if !matches!(name, b"write" | b"writev" | b"pwrite64") {
            return;
        }
        let len = written_len(name, call_args, ret);
        let mut args = strace::args(call_args);
        let Some(fd_arg) = args.next().filter(|a| may_be_log_fd(a)) else {
            return;
        };
        let (fd, path) = match strace::fd_arg(fd_arg) {
            Some((fd, Some(p))) if p.starts_with(b"/") => (Some(fd), Some(p.to_vec())),
            Some((fd, _)) => (Some(fd), None),
            None => (None, None),
        };
        let logged = args
            .filter_map(|a| first_string(a, 3))
            .find_map(|(s, cut)| logged_user(&s, cut, self.slot).map(|l| (l, s, cut)));
        if let Some((logged, bytes, cut)) = logged {
            let (user, string_limit) = match logged {
                Logged::User(u) => (Some(u), None),
                Logged::Cut { string_limit } => (None, Some(string_limit)),
            };
            let epoch_at = if epoch {
                Some(at)
            } else if datable {
                self.date.as_ref().map(|date| date(at))
            } else {
                None
            };
            let mut head = bytes.into_owned();
            let cut = cut || head.len() > HEAD_MAX;
            head.truncate(HEAD_MAX);
            self.paths.push(path);
            out.push(LogWrite {
                pid,
                at,
                user,
                string_limit,
                epoch_at,
                head,
                cut,
                fd,
                len,
            });
        }
    }
}

/// Whether a call shows its worker turning to a request ([`Turn`]): waiting for a
/// connection or an event, or (`finished`: its buffer is printed) reading bytes that
/// start with an HTTP request line (a method, a space, a target).
fn is_turn(name: &[u8], args: &[u8], finished: bool) -> bool {
    match name {
        b"accept" | b"accept4" | b"epoll_wait" | b"epoll_pwait" | b"epoll_pwait2" | b"poll"
        | b"ppoll" | b"select" | b"_newselect" | b"pselect6" => true,
        // A resumed read prints its buffer first: the first string either way.
        b"read" | b"recvfrom" | b"recv" | b"readv" if finished => strace::args(args)
            .find_map(|a| first_string(a, 2))
            .is_some_and(|(s, _)| request_line(&s)),
        _ => false,
    }
}

/// Whether `bytes` start like an HTTP/1 request: a method of capital letters (`GET`,
/// `PROPFIND`, `VERSION-CONTROL`), one space, then the target.
fn request_line(bytes: &[u8]) -> bool {
    let method = bytes
        .iter()
        .take_while(|b| b.is_ascii_uppercase() || **b == b'-')
        .count();
    (3..=20).contains(&method)
        && bytes.get(method) == Some(&b' ')
        && bytes.get(method + 1).is_some_and(|b| b.is_ascii_graphic())
}

/// The first quoted string in an argument: the argument itself (`write`'s buffer) or
/// the first inside its brackets and braces, `name=` prefixes dropped (`writev`'s
/// `[{iov_base="...", iov_len=N}, ...]`), at most `depth` levels down.
fn first_string(arg: &[u8], depth: u8) -> Option<(std::borrow::Cow<'_, [u8]>, bool)> {
    let arg = arg.trim_ascii();
    let arg = arg.strip_prefix(b"iov_base=").unwrap_or(arg);
    if let Some(s) = strace::quoted(arg) {
        return Some(s);
    }
    let inner = strace::inner(arg).filter(|_| depth > 0)?;
    strace::args(inner).find_map(|a| first_string(a, depth - 1))
}

/// The bytes a logging call wrote: `write`'s and `pwrite64`'s count argument (printed
/// even when the call is unfinished or failed part-way), `writev`'s result.
fn written_len(name: &[u8], args: &[u8], ret: Option<i64>) -> Option<u64> {
    let count = || {
        let arg = strace::args(args).nth(2)?;
        std::str::from_utf8(arg).ok()?.trim().parse::<u64>().ok()
    };
    match name {
        b"writev" => ret.and_then(|v| u64::try_from(v).ok()),
        _ => count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(s: &str) -> Option<Logged> {
        Some(Logged::User(s.to_string()))
    }

    #[test]
    fn turns_are_waits_and_request_reads() {
        let trace = [
            "16:31:26.669624 epoll_wait(11, [{events=EPOLLIN, data={u32=1, u64=1}}], 512, -1) = 1",
            "16:31:27.685716 accept4(5, {sa_family=AF_INET, sin_port=htons(36472), sin_addr=inet_addr(\"127.0.0.1\")}, [112 => 16], SOCK_NONBLOCK) = 7",
            "16:31:27.686147 recvfrom(7, \"GET /wiki/?n=0 HTTP/1.1\\r\\nHost: 1\"..., 1024, 0, NULL, NULL) = 131",
            "16:31:27.686688 pread64(8, \"bcuser:$2y$12$7biIfGd1jbbBmhSTn1\"..., 2048, 0) = 415",
            "16:31:27.686690 read(8, \"bcuser:$2y$12$7biIfGd1jbbBmhSTn1\"..., 4096) = 415",
            "16:31:27.686700 read(8, \"GETTER: x\", 9) = 9",
            "16:31:27.686710 read(9,  <unfinished ...>",
            "[pid 4242] 16:31:27.686720 <... read resumed>\"PROPFIND /dav/ HTTP/1.1\\r\\n\", 8000) = 25",
            "16:31:27.686730 poll([{fd=7, events=POLLIN}], 1, 5000) = 1 ([{fd=7, revents=POLLIN}])",
        ];
        let mut scan = WriteScan::new(UserSlot::COMBINED, None, 0);
        let mut writes = Vec::new();
        for line in trace {
            scan.line(Some(30904), line.as_bytes(), &mut writes);
        }
        let (_, turns) = scan.into_parts();
        let at: Vec<(u32, i64)> = turns.iter().map(|t| (t.pid, t.at % 1_000_000)).collect();
        assert_eq!(
            at,
            [
                (30904, 669_624),
                (30904, 685_716),
                (30904, 686_147),
                (4242, 686_720),
                (30904, 686_730)
            ]
        );
        assert!(writes.is_empty());
    }

    #[test]
    fn logged_user_from_whole_and_cut_writes() {
        let c = UserSlot::COMBINED;
        let whole = b"127.0.0.1 - mallory [21/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5\n";
        assert_eq!(logged_user(whole, false, c), user("mallory"));
        // strace's default -s 32 cuts here: the user is whole, the time is not.
        assert_eq!(
            logged_user(b"203.0.113.7 - sam [03/Mar/2026:1", true, c),
            user("sam")
        );
        assert_eq!(
            logged_user(b"::1 - bc12user [24/Nov/2026:04:4", true, c),
            user("bc12user")
        );
        assert_eq!(
            logged_user(b"127.0.0.1 - - [24/Nov/2026:04:47", true, c),
            user("-")
        );
        assert_eq!(
            logged_user(b"127.0.0.1 - user with space [24/", true, c),
            user("user with space")
        );
        // Cut inside or before the user: say so, with a -s that would show it.
        assert_eq!(
            logged_user(b"2001:db8:85a3::8a2e:370:7334 - bc", true, c),
            Some(Logged::Cut { string_limit: 128 })
        );
        assert_eq!(
            logged_user(b"2001:0db8:85a3:0000:0000:8a2e:037", true, c),
            Some(Logged::Cut { string_limit: 128 })
        );
        // Not access-log lines: responses, TLS records, requests, error-log lines.
        assert_eq!(
            logged_user(b"HTTP/1.1 401 Unauthorized\r\nDate: ", true, c),
            None
        );
        assert_eq!(logged_user(b"GET / HTTP/1.1\r\nHost: x", false, c), None);
        assert_eq!(logged_user(b"\x17\x03\x03\x00\x35\x8a", true, c), None);
        assert_eq!(
            logged_user(b"[Mon Nov 24 04:47:01.1 2026] [a", true, c),
            None
        );
        assert_eq!(logged_user(b"127.0.0.1 - bob", false, c), None);
    }

    #[test]
    fn writes_carry_their_length_and_unfinished_ones_are_seen() {
        let mut scan = WriteScan::new(UserSlot::COMBINED, None, 0);
        let mut out = Vec::new();
        for line in [
            // -ff, one file per worker: the whole call on one line.
            r#"01:11:01.986023 write(8, "127.0.0.1 - bc13user [27/Nov/202"..., 139) = 139"#,
            // -f into one file: another thread's line cut the call in two.
            r#"[pid 41] 01:11:02.100000 write(8, "::1 - ann [27/Nov/2026:01:11:02 +"..., 97 <unfinished ...>"#,
            r#"[pid 42] 01:11:02.100100 read(5, "x", 1) = 1"#,
            r#"[pid 41] 01:11:02.100200 <... write resumed>) = 97"#,
            r#"01:11:03.000000 writev(8, [{iov_base="10.0.0.1 - bob [27/Nov/2026:01:11"..., iov_len=120}, {iov_base="
", iov_len=1}], 2) = 121"#,
            // A write that failed part-way still asked for the line's length.
            r#"01:11:04.000000 write(8, "10.0.0.1 - eve [27/Nov/2026:01:11"..., 130) = -1 ENOSPC (No space left on device)"#,
        ] {
            scan.line(Some(7), line.as_bytes(), &mut out);
        }
        let got: Vec<(u32, Option<&str>, Option<u64>)> = out
            .iter()
            .map(|w| (w.pid, w.user.as_deref(), w.len))
            .collect();
        assert_eq!(
            got,
            [
                (7, Some("bc13user"), Some(139)),
                (41, Some("ann"), Some(97)),
                (7, Some("bob"), Some(121)),
                (7, Some("eve"), Some(130)),
            ]
        );
        // The unfinished write is timed at its start, not at the resume.
        assert_eq!(
            out[1].at % 86_400_000_000,
            (3_600 + 11 * 60 + 2) * 1_000_000 + 100_000
        );
    }

    /// Apache escapes a user name in its line (`\xc3\xbc`, `\"`, `\\`); strace shows
    /// those backslashes doubled. The name read from the write is the access log's:
    /// unescaped (writes as Apache 2.4.71 made them, traced by `strace -tt -f -p`).
    #[test]
    fn escaped_user_names_read_as_the_access_log_reads_them() {
        let trace =
            br#"32490 03:19:15.822176 write(8, "127.0.0.1 - j\\xc3\\xbcrgen [28/No"..., 135) = 135
30200 03:35:01.814187 write(8, "127.0.0.1 - o\\\"brien [28/Nov/202"..., 109) = 109
30200 03:35:01.874208 write(8, "127.0.0.1 - tab\\\\back [28/Nov/20"..., 110) = 110"#;
        let users: Vec<Option<String>> = scan_log_writes(trace, UserSlot::COMBINED)
            .into_iter()
            .map(|w| w.user)
            .collect();
        assert_eq!(
            users,
            [
                Some("jürgen".to_string()),
                Some("o\"brien".to_string()),
                Some("tab\\back".to_string())
            ]
        );
        // With nginx's escaping (`\xHH`), as a format with nginx's slot would have it.
        let nginx = UserSlot {
            escaping: Escaping::NginxDefault,
            ..UserSlot::COMBINED
        };
        assert_eq!(
            logged_user(b"10.0.0.1 - j\\xC3\\xBCrgen [28/No", true, nginx),
            user("jürgen")
        );
    }

    /// `strace -r -f`: each line's delta counts from the previous line of any thread;
    /// a write's time is their sum, as the gaps of the same trace are timed (lines of
    /// Apache 2.4.71's event MPM). Per `-ff` file the sum means nothing: no time.
    #[test]
    fn relative_stamps_are_summed_over_the_trace() {
        let trace = br#"21193      0.000016 read(18, "bc12user:$2y$12$9kvtxSu3kRG2BZHt"..., 4096) = 660
21193      0.000014 close(18)           = 0
21193      0.212720 mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f603c311000
21194      0.000050 epoll_wait(10, [], 64, 100) = 0
21193      0.000113 write(7, "127.0.0.1 - bc12user [28/Nov/202"..., 130) = 130"#;
        let w = scan_log_writes(trace, UserSlot::COMBINED);
        assert_eq!(w.len(), 1);
        assert_eq!((w[0].pid, w[0].user.as_deref()), (21193, Some("bc12user")));
        assert_eq!(w[0].at, 16 + 14 + 212_720 + 50 + 113);
        assert_eq!(w[0].epoch_at, None);
        let mut per_file = WriteScan::new(UserSlot::COMBINED, None, 0);
        let mut out = Vec::new();
        per_file.line(
            Some(21193),
            br#"     0.000113 write(7, "127.0.0.1 - bc12user [28/Nov/202"..., 130) = 130"#,
            &mut out,
        );
        assert!(out.is_empty());
    }

    #[test]
    fn a_whole_trace_text_is_scanned_line_by_line() {
        let trace = b"4242  1795296993.000050 write(8, \"10.0.0.1 - bob [27/Nov/2026:12:0\"..., 90) = 90\n\
            4242  1795296993.000060 read(5, \"x\", 1) = 1\n\
            4243  1795296993.000070 write(8, \"::1 - - [27/Nov/2026:12:00:00 +0000] \\\"GET /\"..., 70) = 70";
        let got: Vec<(u32, Option<String>)> = scan_log_writes(trace, UserSlot::COMBINED)
            .into_iter()
            .map(|w| (w.pid, w.user))
            .collect();
        assert_eq!(
            got,
            [
                (4242, Some("bob".to_string())),
                (4243, Some("-".to_string()))
            ]
        );
    }

    #[test]
    fn a_trace_without_pids_has_one_thread_of_its_own() {
        // `strace -tt -p PID -o trace`: no PID on the lines, none in the file's name.
        let line = r#"03:04:12.580278 write(4, "127.0.0.1 - bcuser [27/Nov/2026:"..., 104) = 104"#;
        let mut out = Vec::new();
        for input in [0, 1] {
            let mut scan = WriteScan::new(UserSlot::COMBINED, None, input);
            scan.line(None, line.as_bytes(), &mut out);
        }
        let pids: Vec<u32> = out.iter().map(|w| w.pid).collect();
        assert_eq!(pids, [unprefixed_thread(0), unprefixed_thread(1)]);
        assert!(pids.iter().all(|&p| p > 1 << 22), "{pids:?}");
        assert_ne!(pids[0], pids[1]);
    }

    #[test]
    fn user_slot_of_formats() {
        let slot = |f: &str| UserSlot::of(&Format::compile(f).unwrap());
        assert_eq!(slot("combinedssl"), Some(UserSlot::COMBINED));
        assert_eq!(slot("common"), Some(UserSlot::COMBINED));
        let vhost = UserSlot {
            before: 3,
            bracket_after: true,
            escaping: Escaping::Apache,
        };
        assert_eq!(slot("%v %h %l %u %t \"%r\" %>s %b"), Some(vhost));
        assert_eq!(slot("%v:%p %h %l %u %t \"%r\" %>s %b"), Some(vhost));
        assert_eq!(slot("ssl_request"), None);
        assert_eq!(slot("%h \"%r\" %u %t"), None);
        let c = vhost;
        assert_eq!(
            logged_user(b"www.example.org:443 ::1 - ann [2", true, c),
            user("ann")
        );
        assert_eq!(
            logged_user(b"www.example.org:443 10.0.0.1 - an", true, c),
            Some(Logged::Cut { string_limit: 128 })
        );
    }
}
