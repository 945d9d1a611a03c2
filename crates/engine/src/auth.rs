//! Per-user authentication cost (`tlsgap auth`, and the report's auth section): the
//! htpasswd file, access-log requests and strace traces, joined and ranked.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tlsgap_agg::authjoin::{
    join, path_kind, AuthGap, AuthReport, Evidence, LogWrite, Predicted, Request,
    DEFAULT_PAGE_BUDGET_SECONDS, HEAD_MAX,
};
use tlsgap_agg::gaps::{Cause, Clock, GapAnalyzer};
use tlsgap_agg::LineStats;
use tlsgap_auth::{AuthFileReport, MeasureOptions};
use tlsgap_parser::format::{Item, Kind};
use tlsgap_parser::strace::{self, Body, Stamp};
use tlsgap_parser::TimeSpec;
use tlsgap_parser::{Format, Record, Role};

use crate::gaps::{analyzer_options, expand_inputs, feed};
use crate::lines::{self, has_lines, BadLineSink, LineLoop, LinePartial};
use crate::runner::{Block, Job};
use crate::{bail, Context, Notes, Result, RunOptions};

/// The evidence besides the access logs, and the budget.
#[derive(Debug, Clone)]
pub struct AuthOptions {
    /// The htpasswd file.
    pub htpasswd: Option<PathBuf>,
    /// strace output of the workers (files, `-`, or `prefix.*` patterns).
    pub traces: Vec<PathBuf>,
    /// strace's UTC offset for `-t`/`-tt` traces (`+02:00`, `-0500`, `UTC`); default:
    /// the access log's.
    pub trace_tz: Option<String>,
    /// Flag users whose verification takes longer than this (seconds per request).
    pub threshold: f64,
    /// Shortest trace gap considered (seconds).
    pub min_gap_seconds: f64,
    /// Password-check seconds per page view above which a user gets page advice.
    pub page_budget: f64,
    /// Seconds per bcrypt cost-8 verification on the server, to say what the gaps of
    /// users without a measured entry fit; `None`: measured here (and calibrated).
    pub bcrypt_speed: Option<f64>,
    /// `--since`/`--until`: only trace gaps that start inside (`-ttt` traces; the log
    /// lines are windowed by the log run's own window).
    pub window: Option<crate::window::Window>,
    /// `--tz` when given: the zone `per_day` groups requests by (else each line's own
    /// offset).
    pub day_zone: Option<crate::window::Zone>,
}

impl Default for AuthOptions {
    fn default() -> AuthOptions {
        AuthOptions {
            htpasswd: None,
            traces: Vec::new(),
            trace_tz: None,
            threshold: 0.05,
            min_gap_seconds: 0.01,
            page_budget: DEFAULT_PAGE_BUDGET_SECONDS,
            bcrypt_speed: None,
            window: None,
            day_zone: None,
        }
    }
}

/// What the analysis found.
#[derive(Debug)]
pub struct AuthOutcome {
    /// Users ranked by cost.
    pub report: AuthReport,
    /// Whether an input (log or trace) could not be read.
    pub failed: bool,
}

/// Read the access logs, then join them with the other evidence.
pub fn run(logs: Option<&RunOptions>, opts: &AuthOptions, notes: &Notes) -> Result<AuthOutcome> {
    if opts.htpasswd.is_none() && logs.is_none() && opts.traces.is_empty() {
        bail!("give at least one of --htpasswd FILE, --log FILE..., --traces FILE...");
    }
    let logs = logs.map(read_logs).transpose()?;
    build_report(opts, logs, notes)
}

/// Read access logs into per-request evidence (any format with `%u`).
pub fn read_logs(run: &RunOptions) -> Result<LogEvidence> {
    let prepared = lines::prepare(run)?;
    let format = prepared.format.clone();
    if !format.has(Role::User) {
        bail!("the log format has no user field (%u / $remote_user): auth needs it");
    }
    let mut bad = BadLineSink::new(run)?;
    let window = prepared.window;
    let job = AuthJob {
        lines: LineLoop::new(&format, window.as_ref(), &bad),
    };
    let mut requests = Vec::new();
    let summary = lines::run_job(run, prepared, &job, &mut bad, |_, p| {
        requests.extend(p.requests);
        Ok(())
    })?;
    Ok(LogEvidence {
        requests,
        failed: summary.input_failed(),
        stats: summary.stats,
        user_slot: UserSlot::of(&format),
        sub_second_times: sub_second_times(&format),
        names: run
            .inputs
            .iter()
            .map(|p| crate::input::path_text(p))
            .collect(),
    })
}

/// Whether `format`'s request time has sub-second resolution (a fraction field,
/// `%{msec}t`, `$msec`, ...), else the second of `%t`.
pub fn sub_second_times(format: &Format) -> bool {
    format.fields.iter().any(|f| {
        matches!(
            f.kind,
            Kind::Time(
                TimeSpec::Frac { .. }
                    | TimeSpec::EpochDecimal
                    | TimeSpec::Epoch { per_second: 1000.. }
            )
        )
    })
}

struct AuthJob<'f> {
    lines: LineLoop<'f>,
}

struct AuthPartial {
    lines: LinePartial,
    requests: Vec<Request>,
}

has_lines!(AuthPartial);

impl Job for AuthJob<'_> {
    type Out = AuthPartial;
    type Worker = ();

    fn lines_of(&self, out: &AuthPartial) -> Option<u64> {
        Some(out.lines.stats.total)
    }

    fn worker(&self) {}

    fn run(&self, block: &Block, (): &mut ()) -> AuthPartial {
        let mut requests = Vec::new();
        let fields = RequestFields::new(self.lines.format);
        let lines = self.lines.parse_block(block, |_, rec| {
            requests.push(fields.request(rec));
        });
        AuthPartial { lines, requests }
    }
}

/// Where the fields auth evidence needs are in a format; [`RequestFields::request`]
/// turns a parsed line into a [`Request`] (shared with `tlsgap report`).
#[derive(Debug)]
pub struct RequestFields {
    user: Option<usize>,
    status: Option<usize>,
    pid: Option<usize>,
    client: Option<usize>,
}

impl RequestFields {
    /// Where the fields are in `f`.
    pub fn new(f: &Format) -> RequestFields {
        RequestFields {
            user: f.role(Role::User),
            status: f.role(Role::Status),
            pid: f.role(Role::Pid),
            client: f.role(Role::Client),
        }
    }

    /// The request a parsed line describes.
    pub fn request(&self, rec: &Record<'_>) -> Request {
        let user = self
            .user
            .and_then(|i| rec.value(i))
            .filter(|u| !u.is_empty() && u.as_ref() != b"-")
            .map(|u| tlsgap_parser::lossless_text(&u).into_owned());
        let time = rec.time();
        let target = rec
            .request_parts()
            .target
            .or_else(|| rec.role(Role::Path))
            .unwrap_or_default();
        Request {
            status: self
                .status
                .and_then(|i| rec.int(i))
                .and_then(|s| u16::try_from(s).ok()),
            begin_us: time.map(|t| t.unix_micros()),
            offset_minutes: time.and_then(|t| t.offset_minutes),
            day_offset_minutes: None,
            duration_us: rec.duration_us(),
            pid: self
                .pid
                .and_then(|i| rec.int(i))
                .and_then(|p| u32::try_from(p).ok()),
            kind: path_kind(&target),
            // Only users' requests make page views: no copy of the others' clients.
            client: self
                .client
                .filter(|_| user.is_some())
                .and_then(|i| rec.raw(i))
                .map(|c| tlsgap_parser::lossless_text(c).into_owned()),
            head: user.is_some().then(|| line_head(rec, self.user)).flatten(),
            line_len: user
                .is_some()
                .then(|| u32::try_from(rec.line().len() + 1).ok())
                .flatten(),
            user,
        }
    }
}

/// The start of `rec`'s line through its user field and 32 bytes more (the time, in
/// the common formats), at most [`HEAD_MAX`] bytes.
fn line_head(rec: &Record<'_>, user: Option<usize>) -> Option<Box<[u8]>> {
    let line = rec.line();
    let field = rec.raw(user?)?;
    let start = (field.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    let end = (start + field.len() + 32).min(line.len()).min(HEAD_MAX);
    line.get(..end).map(Box::from)
}

/// Access-log evidence: the requests, their line counts, and whether an input failed.
#[derive(Debug, Default)]
pub struct LogEvidence {
    /// One per parsed line inside the window.
    pub requests: Vec<Request>,
    /// Line counts.
    pub stats: LineStats,
    /// Whether an input could not be read.
    pub failed: bool,
    /// Where the user field is in the first bytes of a line of this format (to read
    /// it from the workers' log writes in the traces).
    pub user_slot: Option<UserSlot>,
    /// Whether the format's request time has sub-second resolution.
    pub sub_second_times: bool,
    /// The access logs' names as given (to know the log among a worker's writes
    /// when strace `-y` shows the path written to).
    pub names: Vec<String>,
}

/// Where `%u` sits in the first bytes of an access-log line, so that the user can be
/// read from a worker's `write()` of its log line even when strace cut the string at
/// 32 bytes (its default `-s`): after `before` space-separated fields (`%h %l %u`: 2,
/// `%v %h %l %u`: 3), ended by ` [` when `%t` follows it, else by a space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserSlot {
    before: usize,
    bracket_after: bool,
}

impl UserSlot {
    /// `%h %l %u %t ...`: common, combined, combinedssl and nginx's combined.
    pub const COMBINED: UserSlot = UserSlot {
        before: 2,
        bracket_after: true,
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
    Some(Logged::User(
        tlsgap_parser::lossless_text(user).into_owned(),
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
#[derive(Debug)]
struct WriteScan {
    day: i64,
    last_tod: u64,
    slot: UserSlot,
    /// For `-t`/`-tt` stamps: an instant on the run's first day and the zone, to date
    /// them.
    anchor: Option<(i64, TraceTz)>,
    /// Per write pushed: the path written to, when `-y` shows it.
    paths: Vec<Option<Vec<u8>>>,
    /// The thread of lines without a PID in a trace whose name gives none.
    unprefixed: u32,
}

impl WriteScan {
    fn new(slot: UserSlot, anchor: Option<(i64, TraceTz)>, input: usize) -> WriteScan {
        WriteScan {
            day: 0,
            last_tod: 0,
            slot,
            anchor,
            paths: Vec::new(),
            unprefixed: unprefixed_thread(input),
        }
    }
}

/// The access-log writes one trace's text shows, as `tlsgap auth` finds them to join
/// with the gaps: each line (`\n`-separated) read as the workers' trace of a server
/// whose log format puts the user where `slot` says, with no date for `-t`/`-tt`
/// stamps and no PID for lines without one. (The same scan the command runs; public
/// for its fuzz target.)
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
fn unprefixed_thread(input: usize) -> u32 {
    u32::MAX
        - u32::try_from(input)
            .unwrap_or(u32::MAX / 2)
            .min(u32::MAX / 2)
}

/// With `-y`, a write names its file: when some of the workers' log writes go to a
/// file named like one of the access logs given (`access.log` for `access.log` or
/// `access.log.1`), the writes to other files (a second `CustomLog`) are not that
/// log's lines. Without `-y`, or when no name fits (a copied log), all are kept.
fn keep_given_log(
    writes: Vec<LogWrite>,
    paths: Vec<Option<Vec<u8>>>,
    names: &[String],
) -> Vec<LogWrite> {
    let base = |p: &[u8]| {
        p.rsplit(|&b| b == b'/')
            .next()
            .map(<[u8]>::to_vec)
            .unwrap_or_default()
    };
    let given: Vec<Vec<u8>> = names.iter().map(|n| base(n.as_bytes())).collect();
    let fits = |p: &Option<Vec<u8>>| {
        p.as_deref().is_some_and(|p| {
            let b = base(p);
            !b.is_empty() && given.iter().any(|g| g.starts_with(&b))
        })
    };
    if !paths.iter().any(fits) {
        return writes;
    }
    writes
        .into_iter()
        .zip(paths)
        .filter(|(_, p)| p.is_none() || fits(p))
        .map(|(w, _)| w)
        .collect()
}

impl WriteScan {
    fn line(&mut self, hint: Option<u32>, line: &[u8], out: &mut Vec<LogWrite>) {
        let Ok(t) = strace::parse_line(line) else {
            return;
        };
        let Some(stamp) = t.stamp else { return };
        if let Stamp::TimeOfDay { nanos } = stamp {
            if nanos + 12 * 3_600_000_000_000 < self.last_tod {
                self.day += 1;
            }
            self.last_tod = nanos;
        }
        // A write another thread's line interrupted (`-f` into one file) shows its
        // bytes on the `<unfinished ...>` line, at the call's start.
        let (name, call_args, ret) = match t.body {
            Body::Call(c) | Body::Resumed(c) => (c.name, c.args, c.ret.value),
            Body::Unfinished { name, args } => (name, args, None),
            _ => return,
        };
        if !matches!(name, b"write" | b"writev" | b"pwrite64") {
            return;
        }
        let pid = t.pid.or(hint).unwrap_or(self.unprefixed);
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
            let (at, epoch) = clock_us(stamp, self.day);
            let epoch_at = if epoch {
                Some(at)
            } else {
                self.anchor.map(|(anchor, tz)| tz.instant(anchor, at))
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

/// strace's zone for `-t`/`-tt` stamps (strace prints the traced machine's local time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceTz {
    /// A fixed offset, minutes east of UTC.
    Offset(i16),
    /// An IANA zone: the offset follows daylight-saving time.
    Zone(chrono_tz::Tz),
}

impl TraceTz {
    /// `--trace-tz`: an IANA zone (`Europe/Berlin`) or an offset (see [`parse_offset`]).
    pub fn parse(s: &str) -> Result<TraceTz> {
        if let Ok(tz) = s.parse::<chrono_tz::Tz>() {
            return Ok(TraceTz::Zone(tz));
        }
        parse_offset(s).map(TraceTz::Offset).map_err(|_| {
            crate::err!(
                "--trace-tz {s:?}: use an IANA zone such as Europe/Berlin, or an offset \
                 such as +02:00, -0500 or UTC"
            )
        })
    }

    /// The instant (µs since the epoch) of `local_us` µs after the local midnight that
    /// begins the day of `anchor_us` (an instant) in this zone. A local time that
    /// occurs twice (autumn) is the first; one that does not occur (spring) is read
    /// with the offset before the change.
    pub fn instant(self, anchor_us: i64, local_us: i64) -> i64 {
        const DAY: i64 = 86_400_000_000;
        match self {
            TraceTz::Offset(minutes) => {
                let off = i64::from(minutes) * 60_000_000;
                (anchor_us + off).div_euclid(DAY) * DAY - off + local_us
            }
            TraceTz::Zone(tz) => {
                use chrono::{Offset, TimeZone};
                let at = |us: i64| tz.timestamp_micros(us).single();
                let Some(anchor) = at(anchor_us) else {
                    return anchor_us;
                };
                let off_us = |dt: chrono::DateTime<chrono_tz::Tz>| {
                    i64::from(dt.offset().fix().local_minus_utc()) * 1_000_000
                };
                let midnight_local = (anchor_us + off_us(anchor)).div_euclid(DAY) * DAY;
                let naive_us = midnight_local + local_us;
                let naive =
                    chrono::DateTime::from_timestamp_micros(naive_us).map(|d| d.naive_utc());
                let local = |n: chrono::NaiveDateTime| tz.from_local_datetime(&n).earliest();
                match naive.map(|n| (local(n), local(n - chrono::TimeDelta::hours(3)))) {
                    Some((Some(dt), _)) => dt.timestamp_micros(),
                    // Skipped by a spring change: the offset in force before it.
                    Some((None, Some(before))) => naive_us - off_us(before),
                    _ => naive_us - off_us(anchor),
                }
            }
        }
    }
}

/// Parse `+02:00`, `+0200`, `-5`, `UTC`/`Z` into minutes east of UTC.
pub fn parse_offset(s: &str) -> Result<i16> {
    if s.eq_ignore_ascii_case("utc") || s == "Z" {
        return Ok(0);
    }
    let usage = || crate::err!("--trace-tz {s:?}: use an offset such as +02:00, -0500 or UTC");
    let (sign, rest) = match (s.strip_prefix('+'), s.strip_prefix('-')) {
        (Some(rest), _) => (1, rest),
        (_, Some(rest)) => (-1, rest),
        _ => return Err(usage()),
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    // ASCII digits only: anything else (`+1é1`) is a usage error, never a panic.
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(usage());
    }
    let number = |d: &str| d.parse::<i16>().map_err(|_| usage());
    let (h, m) = match digits.len() {
        1 | 2 => (number(&digits)?, 0),
        4 => (
            number(digits.get(..2).unwrap_or(""))?,
            number(digits.get(2..).unwrap_or(""))?,
        ),
        _ => return Err(usage()),
    };
    if h > 14 || m > 59 {
        bail!("--trace-tz {s:?}: out of range");
    }
    Ok(sign * (h * 60 + m))
}

/// Join the evidence `opts` names (htpasswd, traces) with access-log evidence the
/// caller read ([`read_logs`], or the report's own pass over the logs).
pub fn build_report(
    opts: &AuthOptions,
    logs: Option<LogEvidence>,
    notes_out: &Notes,
) -> Result<AuthOutcome> {
    let args = opts;
    if !(args.threshold.is_finite() && args.threshold > 0.0) {
        bail!(
            "--threshold {}: not a positive number of seconds",
            args.threshold
        );
    }
    if !(args.page_budget.is_finite() && args.page_budget > 0.0) {
        bail!(
            "--page-budget {}: not a positive number of seconds",
            args.page_budget
        );
    }
    crate::gaps::check_bcrypt_speed(args.bcrypt_speed)?;
    let mut logs = logs;
    if let (Some(zone), Some(l)) = (&args.day_zone, logs.as_mut()) {
        for r in &mut l.requests {
            r.day_offset_minutes = r.begin_us.map(|b| zone.offset_minutes_at(b));
        }
    }
    let trace_tz = args.trace_tz.as_deref().map(TraceTz::parse).transpose()?;
    let mut failed = false;
    let mut notes = Vec::new();

    let htpasswd = match &args.htpasswd {
        None => None,
        Some(path) => {
            let bytes = std::fs::read(path)
                .with_context(|| format!("reading --htpasswd {}", path.display()))?;
            let file = tlsgap_auth::parse(&bytes);
            for m in &file.malformed {
                notes.push(format!(
                    "{}:{}: not an htpasswd entry ({:?})",
                    path.display(),
                    m.line,
                    m.reason
                ));
            }
            let report = AuthFileReport::build(&file, &MeasureOptions::default(), args.threshold);
            // One row per entry, in file order.
            let map: BTreeMap<String, Predicted> = report
                .users
                .into_iter()
                .zip(&file.entries)
                .map(|(u, entry)| {
                    (
                        u.user.clone(),
                        Predicted {
                            scheme: u.scheme,
                            kind: Some(entry.scheme),
                            cost: u.cost,
                            rounds: u.rounds,
                            verify_seconds: u.verify_seconds,
                            verify_range_seconds: u.verify_range_seconds,
                            how_measured: u.how_measured,
                            server_seconds: u.verify_seconds,
                            flagged: u.flagged,
                            suggested_cost: u.suggested_cost,
                            advice: u.advice,
                        },
                    )
                })
                .collect();
            Some(map)
        }
    };

    // Without an access log, the workers' writes are read as the common formats'
    // `%h %l %u [`.
    let slot = match &logs {
        None => Some(UserSlot::COMBINED),
        Some(l) => l.user_slot,
    };
    if slot.is_none() && !args.traces.is_empty() {
        notes.push(
            "the log format's user field does not come after plain space-separated fields: \
             the workers' log writes in the traces cannot name users"
                .to_string(),
        );
    }
    let sub_second_times = logs.as_ref().is_some_and(|l| l.sub_second_times);
    let log_names = logs.as_ref().map(|l| l.names.clone()).unwrap_or_default();
    let requests = logs.map(|l| {
        failed |= l.failed;
        if l.stats.malformed_total() > 0 {
            notes.push(format!(
                "{} access-log lines did not fit the format and were skipped",
                l.stats.malformed_total()
            ));
        }
        l.requests
    });

    let (gaps, writes) = if args.traces.is_empty() {
        (None, Vec::new())
    } else {
        // A date for -t/-tt traces: the first request's, in the trace's zone.
        let first = requests
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .filter_map(|r| r.begin_us.map(|b| (b, r.offset_minutes.unwrap_or(0))))
            .min();
        let anchor = first.map(|(b, log_off)| (b, trace_tz.unwrap_or(TraceTz::Offset(log_off))));
        let names = expand_inputs(&args.traces);
        let mut analyzer = GapAnalyzer::new(analyzer_options(
            args.min_gap_seconds,
            0,
            args.window.as_ref(),
        )?);
        // One pass per trace feeds the analyzer and collects the workers' log writes
        // (standard input can be read only once).
        let mut writes = Vec::new();
        let mut paths = Vec::new();
        let inputs: Vec<_> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let mut scan = slot.map(|s| WriteScan::new(s, anchor, i));
                let read = feed(n, &mut analyzer, notes_out, |hint, line| {
                    if let Some(scan) = scan.as_mut() {
                        scan.line(hint, line, &mut writes);
                    }
                });
                paths.extend(scan.map(|s| s.paths).unwrap_or_default());
                read
            })
            .collect();
        let writes = keep_given_log(writes, paths, &log_names);
        failed |= inputs.iter().any(|i| i.error.is_some());
        let report = analyzer.finish();
        if args.window.is_some() {
            crate::gaps::note_undated_traces(&report, notes_out);
        }
        let mut no_date = false;
        let gaps: Vec<AuthGap> = report
            .gaps
            .iter()
            .filter(|g| g.cause == Cause::Auth)
            .map(|g| {
                let start = g.start_day * 86_400_000_000 + g.start_nanos / 1000;
                let end = g.end_day * 86_400_000_000 + g.end_nanos / 1000;
                let (epoch_start, epoch_end) = match g.clock {
                    Clock::Unix => (Some(g.start_nanos / 1000), Some(g.end_nanos / 1000)),
                    Clock::TimeOfDay => match anchor {
                        Some((b, tz)) => (Some(tz.instant(b, start)), Some(tz.instant(b, end))),
                        None => {
                            no_date = true;
                            (None, None)
                        }
                    },
                    Clock::Relative => (None, None),
                };
                // Thread 0: the lines of a trace without PIDs (see `unprefixed_thread`).
                let pid = match g.pid {
                    0 => inputs
                        .iter()
                        .position(|i| i.name == g.file)
                        .map_or(0, unprefixed_thread),
                    p => p,
                };
                AuthGap {
                    pid,
                    start,
                    end,
                    epoch_start,
                    epoch_end,
                    seconds: g.seconds,
                    detail: g.detail.clone(),
                    at: format!("{}:{}", g.file, g.line),
                }
            })
            .collect();
        if no_date {
            notes.push(
                "-t/-tt traces carry no date and no access log gave one: gaps were tied to \
                 users only through the workers' own log writes"
                    .to_string(),
            );
        }
        (Some(gaps), writes)
    };

    let mut report = join(&Evidence {
        htpasswd,
        requests,
        gaps,
        writes,
        threshold_seconds: args.threshold,
        page_budget_seconds: args.page_budget,
        sub_second_times,
    });
    note_unknown_schemes(&mut report, args.bcrypt_speed);
    report.notes.extend(notes);
    Ok(AuthOutcome { report, failed })
}

/// For users with auth gaps but no measured htpasswd entry (none given, or not in
/// it): which bcrypt costs their median gap fits, at the report's basis — this
/// machine's speed, scaled by the calibration when there is one.
fn note_unknown_schemes(report: &mut AuthReport, given: Option<f64>) {
    use crate::gaps::{bcrypt_speed, BcryptSpeed, BCRYPT_REFERENCE_COST};
    let unknown = |u: &tlsgap_agg::authjoin::UserCost| {
        u.observed_gaps.is_some() && u.htpasswd.as_ref().and_then(|p| p.verify_seconds).is_none()
    };
    if !report.users.iter().any(unknown) {
        return;
    }
    let Some(BcryptSpeed { seconds, place }) = bcrypt_speed(given) else {
        return;
    };
    // Measured here and calibrated: on the server's time.
    let c = &report.calibration;
    let (speed, place) = match (given, c.basis) {
        (None, basis) if basis != tlsgap_agg::authjoin::Basis::ThisMachine => {
            (seconds * c.server_time_ratio, "the server's speed")
        }
        _ => (seconds, place),
    };
    for u in report.users.iter_mut().filter(|u| unknown(u)) {
        let Some(g) = u.observed_gaps else { continue };
        u.gaps_fit_bcrypt_costs =
            tlsgap_agg::gaps::bcrypt_costs_fitting(g.p50_seconds, speed, BCRYPT_REFERENCE_COST)
                .map(|(a, b)| [a, b]);
        u.gap_note = Some(format!(
            "scheme unknown (no measured htpasswd entry): {}",
            tlsgap_agg::gaps::duration_note(g.p50_seconds, speed, BCRYPT_REFERENCE_COST, place)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(s: &str) -> Option<Logged> {
        Some(Logged::User(s.to_string()))
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
    fn with_y_only_the_given_logs_writes_are_kept() {
        let w = |fd: i64| LogWrite {
            pid: 1,
            at: 0,
            user: Some("bob".into()),
            string_limit: None,
            epoch_at: None,
            head: Vec::new(),
            cut: false,
            fd: Some(fd),
            len: None,
        };
        let writes = vec![w(7), w(8), w(9)];
        let paths = vec![
            Some(b"/var/log/apache2/access.log".to_vec()),
            Some(b"/var/log/apache2/truth.log".to_vec()),
            None,
        ];
        let names = ["logs/access.log.1".to_string()];
        let kept = keep_given_log(writes.clone(), paths.clone(), &names);
        assert_eq!(
            kept.iter().map(|w| w.fd).collect::<Vec<_>>(),
            [Some(7), Some(9)]
        );
        // A log under another name (a copy): nothing to tell them apart, all kept.
        let kept = keep_given_log(writes, paths, &["copy.txt".to_string()]);
        assert_eq!(kept.len(), 3);
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

    #[test]
    fn offsets() {
        assert_eq!(parse_offset("+02:00").unwrap(), 120);
        assert_eq!(parse_offset("-0530").unwrap(), -330);
        assert_eq!(parse_offset("UTC").unwrap(), 0);
        assert!(parse_offset("Europe/Sofia").is_err());
    }

    #[test]
    fn trace_tz_zones_follow_daylight_saving_time() {
        use chrono::TimeZone;
        let berlin = TraceTz::parse("Europe/Berlin").unwrap();
        assert_eq!(TraceTz::parse("+02:00").unwrap(), TraceTz::Offset(120));
        assert!(TraceTz::parse("Mars/Olympus").is_err());
        let utc = |y, mo, d, h, mi| {
            chrono::Utc
                .with_ymd_and_hms(y, mo, d, h, mi, 0)
                .unwrap()
                .timestamp_micros()
        };
        let hour = 3_600_000_000i64;
        // A run that starts on 2026-03-28 (CET, +01:00) and crosses the spring change
        // on the 29th at 02:00: 10:00 local on the 28th, 10:00 local on the 29th.
        let anchor = utc(2026, 3, 28, 9, 30);
        assert_eq!(berlin.instant(anchor, 10 * hour), utc(2026, 3, 28, 9, 0));
        assert_eq!(berlin.instant(anchor, 34 * hour), utc(2026, 3, 29, 8, 0));
        // A fixed offset does not move.
        let plus1 = TraceTz::Offset(60);
        assert_eq!(plus1.instant(anchor, 34 * hour), utc(2026, 3, 29, 9, 0));
        // 02:30 on the 29th does not exist in Berlin: read with the offset before.
        assert_eq!(
            berlin.instant(anchor, 26 * hour + hour / 2),
            utc(2026, 3, 29, 1, 30)
        );
    }

    #[test]
    fn trace_tz_with_a_multibyte_character_is_an_error_not_a_panic() {
        for s in [
            "+1\u{e9}1",
            "+\u{e9}",
            "-1\u{e9}",
            "+12:\u{e9}5",
            "+\u{1F600}00",
        ] {
            let e = parse_offset(s).unwrap_err();
            assert!(e.to_string().contains("--trace-tz"), "{s}: {e}");
        }
    }
}
