//! Timeline and gap analysis of strace output (`tlsgap gaps`).
//!
//! Per thread, in time order, the time between the end of one call and the start of
//! the next is a *gap*: user-space time (or time inside the previous call when strace
//! ran without `-T`). Each gap of at least [`GapOptions::min_gap_ns`] is reported with
//! the calls around it, the files and sockets touched just before it and a [`Cause`].
//! Long waits inside the kernel (`accept`, `epoll_wait`, `read` on a socket…) are
//! reported apart, in [`GapsReport::blocked`]: they are idle time, not slowness.
//!
//! ```
//! use tlsgap_agg::gaps::{Cause, GapAnalyzer, GapOptions};
//!
//! let trace = "\
//! 1795296993.100000 openat(AT_FDCWD, \"/etc/apache2/htpasswd.users\", O_RDONLY|O_CLOEXEC) = 15 <0.000020>
//! 1795296993.100100 read(15, \"alice:$2y$12$abcdefghijklmnopqrstuv\"..., 4096) = 61 <0.000010>
//! 1795296993.100200 close(15) = 0 <0.000005>
//! 1795296993.500200 openat(AT_FDCWD, \"/var/www/index.html\", O_RDONLY|O_CLOEXEC) = 15 <0.000020>
//! ";
//! let mut gaps = GapAnalyzer::new(GapOptions::default());
//! gaps.begin_input("trace.4242", Some(4242));
//! for (i, line) in trace.lines().enumerate() {
//!     gaps.line(i as u64 + 1, line.as_bytes());
//! }
//! gaps.end_input();
//! let report = gaps.finish();
//! let gap = &report.gaps[0];
//! assert_eq!((gap.pid, gap.cause, gap.line), (4242, Cause::Auth, 4));
//! assert_eq!(gap.detail.as_deref(), Some("bcrypt cost 12"));
//! assert_eq!(gap.start, "2026-11-21T21:36:33.100205Z");
//! assert!(!serde_json::to_string(&report).unwrap().contains("$2y$12$abc"));
//! ```
//!
//! # Inputs
//!
//! Feed each input with [`GapAnalyzer::begin_input`], [`GapAnalyzer::line`] per line
//! and [`GapAnalyzer::end_input`]. `-ff` files carry no PID: pass the one from the
//! file name ([`pid_from_file_name`]) as the hint. Inputs with a hint are taken to be
//! the `-ff` files of one run and share fd tables; each input without a hint (`-f`
//! to a file or stderr) is a run of its own. A gap found in several inputs (the same
//! run traced with `-f` and `-ff`) is reported once. The report does not depend on the
//! order of the inputs.
//!
//! # Causes
//!
//! | cause | list | meaning |
//! |---|---|---|
//! | `auth` | gaps | the last file or socket touched before the gap is an authentication file (`htpasswd*`, `*.htpasswd`, `*.users`, `htdigest*`, `/etc/shadow`, `/etc/pam.d/*`, `pam_*.so`) or an sssd/LDAP/nslcd socket, or the bytes of the last calls carry a password-hash prefix; or the time was spent inside a call on such a file or socket. `detail` names the hash scheme and cost when visible (`bcrypt cost 12`). |
//! | `cpu` | gaps | user space with no known cause (or scheduling, page faults). |
//! | `io` | gaps | inside a call on a regular file (read, write, open, stat…) or a sync (`fsync`, `fdatasync`, `sync_file_range`…); without `-T`, only a gap right after a sync (a gap after another file call is `cpu`, flagged `includes_call_time`). |
//! | `kernel` | gaps | inside another call that is not a wait (`execve`, `mmap`, `clone`…). |
//! | `blocked` | blocked | inside a waiting call: `accept`, `poll`, `select`, `epoll_wait`, `nanosleep`, `wait4`, `futex`, `flock`, `connect`, `restart_syscall`…, or a read/write/recv/send on a socket, pipe or terminal (or an fd that could not be named). Without `-T`, a gap right after such a call. |
//! | `startup` | blocked | inside the first call of a thread that was attached to (not seen being created), whose start is meaningless. |
//!
//! `-T` durations make the split between `gaps` and `blocked` exact. Without them a
//! gap runs from the *start* of the previous call and `includes_call_time` is set.
//!
//! Timer signals (`SIGPROF`, `SIGALRM`, `SIGVTALRM`) and the `rt_sigreturn` after them
//! do not end a gap: a CPU stretch cut by a profiler's timer stays one gap, with the
//! number of signals merged into it in `timer_signals`.
//!
//! # Times
//!
//! `-ttt` stamps are reported as RFC 3339 UTC with microseconds. `-t`/`-tt` stamps
//! carry no date: they are reported as `HH:MM:SS.ffffff` in strace's time zone, with
//! ` +Nd` when the trace crossed N midnights since the run started (`start_day` and
//! `start_nanos` keep the raw values so that a date can be attached later). `-r` alone
//! is summed per input and reported as `+S.ffffff` seconds since the input's first line.
//!
//! # Secrets
//!
//! Any quoted string that contains a password-hash prefix (`$2y$`, `$2a$`, `$2b$`,
//! `$apr1$`, `{SHA}`, `$5$`, `$6$`, `$y$`, `$argon2`, `$1$`) or `Authorization:` is
//! replaced by a placeholder such as `"<redacted: bcrypt cost 12, 60 bytes>"` before it
//! is stored: no hash, salt or header value reaches a report.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::Write as _;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tlsgap_parser::lossless_text;
use tlsgap_parser::strace::{
    args, decoration_path, fd_arg, inner, parse_line, quoted, split_glued, Body, Exit, Ret, Skip,
    Stamp, TraceLine,
};
use tlsgap_parser::time::civil_from_days;

use crate::fdtable::{FdTables, Lookup, ResKind, Resolved, TableKey};
use crate::quantile::nearest_rank;
use crate::rows::{Cell, CellType, Rows};

const NS: i64 = 1_000_000_000;
const DAY_NS: i64 = 86_400 * NS;
/// Roughly how long the `before`/`after` call texts are.
const TEXT_LIMIT: usize = 120;
/// How much of an unfinished call's arguments is kept until it resumes.
const PENDING_ARGS_LIMIT: usize = 64 * 1024;

// ------------------------------------------------------------------ options

/// What [`GapAnalyzer`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapOptions {
    /// Shortest gap (or blocked interval) reported, in nanoseconds.
    pub min_gap_ns: u64,
    /// How many gaps `top` lists.
    pub top: usize,
    /// How many calls before a gap are kept for its context (`resources`, auth).
    pub context_calls: usize,
}

impl Default for GapOptions {
    /// 100 ms, top 20, 8 calls of context.
    fn default() -> GapOptions {
        GapOptions {
            min_gap_ns: 100_000_000,
            top: 20,
            context_calls: 8,
        }
    }
}

// ------------------------------------------------------------------ public enums

/// Which clock the times of a gap are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// `-ttt`: nanoseconds since the Unix epoch.
    Unix,
    /// `-t`/`-tt`: local time of day, with a day offset since the run started.
    TimeOfDay,
    /// `-r` only: nanoseconds since the input's first line.
    Relative,
}

impl Clock {
    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Clock::Unix => "unix",
            Clock::TimeOfDay => "time_of_day",
            Clock::Relative => "relative",
        }
    }
}

/// Why a thread spent the time (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Password checking: auth files or sockets, hashes in the data.
    Auth,
    /// User space, no known cause.
    Cpu,
    /// Inside file I/O or a sync.
    Io,
    /// Inside another non-waiting call.
    Kernel,
    /// Waiting inside the kernel (idle).
    Blocked,
    /// The first call of an attached thread.
    Startup,
}

impl Cause {
    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Auth => "auth",
            Cause::Cpu => "cpu",
            Cause::Io => "io",
            Cause::Kernel => "kernel",
            Cause::Blocked => "blocked",
            Cause::Startup => "startup",
        }
    }
}

/// Which list an interval is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapKind {
    /// Time the thread was busy or slow: [`GapsReport::gaps`].
    Gap,
    /// Time the thread waited: [`GapsReport::blocked`].
    Blocked,
}

impl GapKind {
    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            GapKind::Gap => "gap",
            GapKind::Blocked => "blocked",
        }
    }
}

/// A password-hash scheme recognised by its prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scheme {
    /// `$2y$`, `$2a$`, `$2b$`, `$2x$`.
    Bcrypt,
    /// `$apr1$` (Apache MD5).
    Apr1,
    /// `{SHA}` (unsalted SHA-1) or `{SSHA}`.
    Sha1,
    /// `$5$`.
    Sha256Crypt,
    /// `$6$`.
    Sha512Crypt,
    /// `$y$`, `$gy$`.
    Yescrypt,
    /// `$argon2i$`, `$argon2id$`, `$argon2d$`.
    Argon2,
    /// `$1$`.
    Md5Crypt,
}

/// A hash seen in a buffer: its scheme and cost (bcrypt) or rounds (SHA-crypt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HashInfo {
    /// The scheme.
    pub scheme: Scheme,
    /// bcrypt cost or SHA-crypt `rounds=`, when printed.
    pub param: Option<u32>,
}

impl fmt::Display for HashInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.scheme {
            Scheme::Bcrypt => "bcrypt",
            Scheme::Apr1 => "apr1 (MD5)",
            Scheme::Sha1 => "{SHA} (SHA-1)",
            Scheme::Sha256Crypt => "SHA-256 crypt",
            Scheme::Sha512Crypt => "SHA-512 crypt",
            Scheme::Yescrypt => "yescrypt",
            Scheme::Argon2 => "argon2",
            Scheme::Md5Crypt => "MD5 crypt",
        };
        f.write_str(name)?;
        match (self.scheme, self.param) {
            (Scheme::Bcrypt, Some(c)) => write!(f, " cost {c}"),
            (_, Some(r)) => write!(f, " rounds {r}"),
            _ => Ok(()),
        }
    }
}

// ------------------------------------------------------------------ report

/// `tlsgap gaps --format json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GapsReport {
    /// The threshold, in seconds.
    pub min_gap_seconds: f64,
    /// Line counts over all inputs.
    pub lines: TraceLinesReport,
    /// Per input, sorted by name.
    pub inputs: Vec<GapInputReport>,
    /// Caveats about what the traces allow (missing `-T`, `-t` without dates…).
    pub notes: Vec<String>,
    /// Busy or slow intervals, sorted by start, then PID.
    pub gaps: Vec<Gap>,
    /// Waits inside the kernel, sorted by start, then PID.
    pub blocked: Vec<Gap>,
    /// Per cause (gaps and blocked), by total seconds, descending.
    pub by_cause: Vec<CauseRow>,
    /// Per last file or socket (gaps and blocked), by total seconds, descending.
    pub by_resource: Vec<ResourceRow>,
    /// Per PID, by gap seconds, descending.
    pub by_pid: Vec<PidRow>,
    /// The longest gaps (not blocked), longest first.
    pub top: Vec<Gap>,
}

/// `lines` of a [`GapsReport`].
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TraceLinesReport {
    /// Lines read.
    pub total: u64,
    /// Trace lines (calls, signals, exits).
    pub trace: u64,
    /// Other lines.
    pub skipped: u64,
    /// Other lines by reason (every reason, zero included).
    pub skipped_by_reason: BTreeMap<&'static str, u64>,
}

/// One input of a [`GapsReport`].
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GapInputReport {
    /// The name given to [`GapAnalyzer::begin_input`].
    pub name: String,
    /// The PID hint (`-ff` file name suffix).
    pub pid_hint: Option<u32>,
    /// Lines read.
    pub lines: u64,
    /// Trace lines.
    pub trace_lines: u64,
    /// Threads seen.
    pub threads: u64,
    /// The clock of its stamps, if any.
    pub clock: Option<Clock>,
    /// First and last stamp, formatted like gap times.
    pub first: Option<String>,
    /// See `first`.
    pub last: Option<String>,
    /// Midnights crossed within this input (`-t`/`-tt`).
    pub rollovers: u32,
    /// Complete and resumed calls.
    pub calls: u64,
    /// Of which with a `-T` duration.
    pub calls_with_duration: u64,
    /// `<unfinished ...>` calls that never resumed (killed, or the input ended).
    pub unfinished_never_resumed: u64,
    /// `<... resumed>` lines without their start (attached mid-call).
    pub resumed_without_start: u64,
    /// `SIGPROF`/`SIGALRM`/`SIGVTALRM` deliveries merged into gaps.
    pub timer_signals: u64,
}

/// One gap or blocked interval.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Gap {
    /// `gap` or `blocked`.
    pub kind: GapKind,
    /// Why (see the module docs).
    pub cause: Cause,
    /// More on the cause: the hash scheme and cost for `auth` (`bcrypt cost 12`).
    pub detail: Option<String>,
    /// The input it was found in.
    pub file: String,
    /// The line that ends it: the call after a gap, the slow call itself otherwise.
    pub line: u64,
    /// The line of the call before.
    pub before_line: Option<u64>,
    /// The thread (the PID strace printed).
    pub pid: u32,
    /// The clock of `start`/`end`.
    pub clock: Clock,
    /// Start (RFC 3339 UTC, `HH:MM:SS.ffffff[ +Nd]`, or `+S.ffffff`).
    pub start: String,
    /// End, same form.
    pub end: String,
    /// `end - start`.
    pub seconds: f64,
    /// Days since the run started (`time_of_day`; 0 otherwise).
    pub start_day: i64,
    /// Nanoseconds since the epoch (`unix`), since local midnight (`time_of_day`), or
    /// since the input's first line (`relative`).
    pub start_nanos: i64,
    /// See `start_day`.
    pub end_day: i64,
    /// See `start_nanos`.
    pub end_nanos: i64,
    /// The time was inside one call (`-T` or a split call), not between two.
    pub inside_call: bool,
    /// No `-T`: the gap starts at the previous call's start, so it includes the time
    /// spent inside that call.
    pub includes_call_time: bool,
    /// Timer signals merged into this gap.
    pub timer_signals: u32,
    /// The syscall: the one the time was spent in, or the one before the gap.
    pub call: Option<String>,
    /// The file or socket the cause points at: the call's own for a time inside a
    /// call, the last one touched before a gap.
    pub resource: Option<String>,
    /// Its kind.
    pub resource_kind: ResKind,
    /// Files and sockets touched in the last calls, most recent first.
    pub resources: Vec<String>,
    /// The call (or signal) before, shortened, secrets redacted.
    pub before: Option<String>,
    /// The call (or signal, or exit) after, shortened, secrets redacted.
    pub after: Option<String>,
}

/// Count and distribution of seconds.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Default)]
pub struct Dist {
    /// Intervals.
    pub count: u64,
    /// Sum of seconds.
    pub total_seconds: f64,
    /// Median (nearest rank).
    pub p50_seconds: f64,
    /// 95th percentile (nearest rank).
    pub p95_seconds: f64,
    /// Longest.
    pub max_seconds: f64,
}

impl Dist {
    fn of(mut secs: Vec<f64>) -> Dist {
        secs.sort_by(f64::total_cmp);
        Dist {
            count: secs.len() as u64,
            total_seconds: secs.iter().sum(),
            p50_seconds: nearest_rank(&secs, 0.5),
            p95_seconds: nearest_rank(&secs, 0.95),
            max_seconds: secs.last().copied().unwrap_or(0.0),
        }
    }
}

/// One cause in `by_cause`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CauseRow {
    /// The cause.
    pub cause: Cause,
    /// The list its intervals are in.
    pub kind: GapKind,
    /// The distribution.
    #[serde(flatten)]
    pub dist: Dist,
}

/// One file or socket in `by_resource`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ResourceRow {
    /// The file or socket (ephemeral ports of TCP/UDP peers as `*`), or `(none)`.
    pub resource: String,
    /// Its kind.
    pub resource_kind: ResKind,
    /// `gap` or `blocked`.
    pub kind: GapKind,
    /// The distribution.
    #[serde(flatten)]
    pub dist: Dist,
}

/// One PID in `by_pid`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PidRow {
    /// The thread.
    pub pid: u32,
    /// Its gaps.
    pub gaps: Dist,
    /// Its blocked intervals.
    pub blocked: Dist,
    /// Gaps per cause.
    pub causes: BTreeMap<&'static str, u64>,
}

// ------------------------------------------------------------------ flat rows

/// One row of the flat (CSV/Parquet) form: a gap or a blocked interval.
#[derive(Clone, Debug, PartialEq)]
pub struct GapRow {
    /// `gap` or `blocked`.
    pub kind: &'static str,
    /// The cause.
    pub cause: &'static str,
    /// More on the cause.
    pub detail: Option<String>,
    /// The input.
    pub file: String,
    /// The line that ends it.
    pub line: u64,
    /// The thread.
    pub pid: u32,
    /// `unix`, `time_of_day` or `relative`.
    pub clock: &'static str,
    /// Start, formatted.
    pub start: String,
    /// End, formatted.
    pub end: String,
    /// Seconds.
    pub seconds: f64,
    /// Raw start day.
    pub start_day: i64,
    /// Raw start nanoseconds.
    pub start_nanos: i64,
    /// Raw end day.
    pub end_day: i64,
    /// Raw end nanoseconds.
    pub end_nanos: i64,
    /// Inside one call.
    pub inside_call: bool,
    /// Includes the previous call's time (no `-T`).
    pub includes_call_time: bool,
    /// Timer signals merged.
    pub timer_signals: u32,
    /// The syscall.
    pub call: Option<String>,
    /// The file or socket of the cause.
    pub resource: Option<String>,
    /// Its kind.
    pub resource_kind: &'static str,
    /// Files and sockets touched, most recent first, joined with ` | `.
    pub resources: String,
    /// The call before.
    pub before: Option<String>,
    /// The call after.
    pub after: Option<String>,
}

/// The column names of [`GapRow`] (CSV header and Parquet schema), with their types.
pub const GAP_COLUMNS: [(&str, CellType); 23] = [
    ("kind", CellType::Text),
    ("cause", CellType::Text),
    ("detail", CellType::Text),
    ("file", CellType::Text),
    ("line", CellType::Int),
    ("pid", CellType::Int),
    ("clock", CellType::Text),
    ("start", CellType::Text),
    ("end", CellType::Text),
    ("seconds", CellType::Float),
    ("start_day", CellType::Int),
    ("start_nanos", CellType::Int),
    ("end_day", CellType::Int),
    ("end_nanos", CellType::Int),
    ("inside_call", CellType::Bool),
    ("includes_call_time", CellType::Bool),
    ("timer_signals", CellType::Int),
    ("call", CellType::Text),
    ("resource", CellType::Text),
    ("resource_kind", CellType::Text),
    ("resources", CellType::Text),
    ("before", CellType::Text),
    ("after", CellType::Text),
];

/// Flatten a report: every gap, then every blocked interval, in report order.
pub fn gap_rows(report: &GapsReport) -> Vec<GapRow> {
    report
        .gaps
        .iter()
        .chain(report.blocked.iter())
        .map(|g| GapRow {
            kind: g.kind.as_str(),
            cause: g.cause.as_str(),
            detail: g.detail.clone(),
            file: g.file.clone(),
            line: g.line,
            pid: g.pid,
            clock: g.clock.as_str(),
            start: g.start.clone(),
            end: g.end.clone(),
            seconds: g.seconds,
            start_day: g.start_day,
            start_nanos: g.start_nanos,
            end_day: g.end_day,
            end_nanos: g.end_nanos,
            inside_call: g.inside_call,
            includes_call_time: g.includes_call_time,
            timer_signals: g.timer_signals,
            call: g.call.clone(),
            resource: g.resource.clone(),
            resource_kind: g.resource_kind.as_str(),
            resources: g.resources.join(" | "),
            before: g.before.clone(),
            after: g.after.clone(),
        })
        .collect()
}

/// The flat form as a typed table ([`GAP_COLUMNS`]).
pub fn gap_table(report: &GapsReport) -> Rows {
    let mut rows = Rows::new(&GAP_COLUMNS);
    for r in gap_rows(report) {
        rows.push(vec![
            r.kind.into(),
            r.cause.into(),
            r.detail.into(),
            r.file.into(),
            r.line.into(),
            r.pid.into(),
            r.clock.into(),
            r.start.into(),
            r.end.into(),
            r.seconds.into(),
            Cell::Int(r.start_day),
            Cell::Int(r.start_nanos),
            Cell::Int(r.end_day),
            Cell::Int(r.end_nanos),
            r.inside_call.into(),
            r.includes_call_time.into(),
            r.timer_signals.into(),
            r.call.into(),
            r.resource.into(),
            r.resource_kind.into(),
            r.resources.into(),
            r.before.into(),
            r.after.into(),
        ]);
    }
    rows
}

// ------------------------------------------------------------------ file names

/// The PID in a `-ff` file name: `trace.12085` → 12085, also `dir/trace.12085.gz`
/// (and `.zst`, `.bz2`, `.xz`).
pub fn pid_from_file_name(name: &str) -> Option<u32> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut base = base;
    for ext in [".gz", ".zst", ".zstd", ".bz2", ".xz", ".lz4"] {
        if let Some(b) = base.strip_suffix(ext) {
            base = b;
            break;
        }
    }
    let (stem, digits) = base.rsplit_once('.')?;
    if stem.is_empty() || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&p| p > 0)
}

// ------------------------------------------------------------------ internal state

/// A resource as seen by one call: named now, or inherited and named at report time.
#[derive(Clone, Debug, Default)]
struct ResRef {
    label: Vec<u8>,
    kind: ResKind,
    inherited: Option<(TableKey, u32, bool)>,
    fd: i64,
}

impl ResRef {
    fn to_raw(&self) -> RawRes {
        RawRes {
            label: if self.inherited.is_some() {
                None
            } else {
                Some(self.label.clone().into_boxed_slice())
            },
            kind: self.kind,
            inherited: self.inherited,
            fd: self.fd,
        }
    }
}

/// How a call spends its time, as far as its name tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum CallClass {
    /// Waits by nature (`accept`, `poll`, `nanosleep`…).
    Wait,
    /// Moves data: a wait on sockets/pipes/terminals, I/O on files.
    Data,
    /// File system work or a sync.
    Io,
    /// `execve`: a new program.
    Exec,
    /// Anything else.
    #[default]
    Other,
}

/// How a slot's text is made from its raw parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Shape {
    /// `name(args) = ret <dur>`.
    Call,
    /// `name(args <unfinished ...>`.
    Unfinished,
    /// `--- SIG info ---` (the signal's name in `ret`, its info in `args`).
    Signal,
    /// Already in `text`.
    #[default]
    Text,
}

/// One call (or signal) of context, with buffers reused across lines.
///
/// Only the calls next to a reported interval are ever shown, so a call's raw parts
/// are kept and its (redacted) text is made when an interval is recorded
/// ([`CtxSlot::render`]); the hash it carries is found at once, for the cause.
#[derive(Debug, Default)]
struct CtxSlot {
    shape: Shape,
    text: Vec<u8>,
    args: Vec<u8>,
    ret: Vec<u8>,
    dur: Option<u64>,
    name: Vec<u8>,
    line: u64,
    res: Vec<ResRef>,
    nres: usize,
    hash: Option<HashInfo>,
    class: CallClass,
    first: bool,
}

impl CtxSlot {
    fn reset(&mut self, line: u64) {
        self.shape = Shape::Text;
        self.text.clear();
        self.args.clear();
        self.ret.clear();
        self.dur = None;
        self.name.clear();
        self.line = line;
        self.nres = 0;
        self.hash = None;
        self.class = CallClass::Other;
        self.first = false;
    }

    fn next_res(&mut self) -> Option<&mut ResRef> {
        if self.nres >= 3 {
            return None;
        }
        if self.res.len() <= self.nres {
            self.res.push(ResRef::default());
        }
        let r = self.res.get_mut(self.nres)?;
        r.label.clear();
        r.kind = ResKind::Unknown;
        r.inherited = None;
        r.fd = -1;
        Some(r)
    }

    fn commit_res(&mut self) {
        self.nres += 1;
    }

    fn resources(&self) -> &[ResRef] {
        self.res.get(..self.nres).unwrap_or_default()
    }

    /// Keep a call's parts for [`CtxSlot::render`]; `ret: None` for a call cut short.
    fn set_call(&mut self, args: &[u8], ret: Option<&[u8]>, dur: Option<u64>) {
        self.args.clear();
        self.args.extend_from_slice(args);
        self.ret.clear();
        match ret {
            Some(r) => {
                self.shape = Shape::Call;
                self.ret.extend_from_slice(r);
                self.dur = dur;
            }
            None => {
                self.shape = Shape::Unfinished;
                self.dur = None;
            }
        }
    }

    /// The text shown for this call: shortened, secrets redacted.
    fn render(&self, scratch: &mut Vec<u8>) -> Box<[u8]> {
        let mut out = Vec::new();
        match self.shape {
            Shape::Call => {
                render_call(
                    &mut out,
                    &self.name,
                    &self.args,
                    Some(&self.ret),
                    self.dur,
                    false,
                    scratch,
                );
            }
            Shape::Unfinished => {
                render_call(&mut out, &self.name, &self.args, None, None, true, scratch);
            }
            Shape::Signal => render_signal(&mut out, &self.ret, &self.args, scratch),
            Shape::Text => out.extend_from_slice(&self.text),
        }
        out.into_boxed_slice()
    }
}

/// The last calls of a thread, oldest overwritten first.
#[derive(Debug)]
struct Ring {
    slots: Vec<CtxSlot>,
    cap: usize,
    head: usize,
    len: usize,
}

impl Ring {
    fn new(cap: usize) -> Ring {
        Ring {
            slots: Vec::new(),
            cap: cap.max(1),
            head: 0,
            len: 0,
        }
    }

    /// Put `cur` in as the newest; `cur` gets the evicted slot's buffers.
    fn push(&mut self, cur: &mut CtxSlot) {
        if self.slots.len() < self.cap {
            self.slots.push(std::mem::take(cur));
            self.head = self.slots.len() % self.cap;
        } else if let Some(s) = self.slots.get_mut(self.head) {
            std::mem::swap(s, cur);
            self.head = (self.head + 1) % self.cap;
        }
        self.len = (self.len + 1).min(self.cap);
    }

    /// Newest first.
    fn iter(&self) -> impl Iterator<Item = &CtxSlot> + '_ {
        let n = self.slots.len();
        (0..self.len).filter_map(move |k| {
            let i = (self.head + n * 2 - 1 - k) % n.max(1);
            self.slots.get(i)
        })
    }

    fn newest(&self) -> Option<&CtxSlot> {
        self.iter().next()
    }
}

#[derive(Debug, Default)]
struct Pending {
    active: bool,
    name: Vec<u8>,
    args: Vec<u8>,
    start: Option<i64>,
    line: u64,
    first: bool,
}

#[derive(Debug)]
struct Thread {
    prev_end: Option<i64>,
    prev_exact: bool,
    timers: u32,
    in_timer: bool,
    events: u64,
    ring: Ring,
    cur: CtxSlot,
    pending: Pending,
    /// The previous call's name (for `exit_group` before an exit).
    prev_was_exit: bool,
}

impl Thread {
    fn new(ring: usize) -> Thread {
        Thread {
            prev_end: None,
            prev_exact: false,
            timers: 0,
            in_timer: false,
            events: 0,
            ring: Ring::new(ring),
            cur: CtxSlot::default(),
            pending: Pending::default(),
            prev_was_exit: false,
        }
    }
}

/// Per input: counters that stay, and state dropped at its end.
#[derive(Debug, Default)]
struct InputState {
    name: String,
    pid_hint: Option<u32>,
    scope: u32,
    lines: u64,
    trace: u64,
    threads: u64,
    clock: Option<Clock>,
    mixed_clock: bool,
    relative_under_ff: bool,
    day: i64,
    rollovers: u32,
    last_tod: Option<u64>,
    rel_acc: i64,
    first: Option<i64>,
    last: Option<i64>,
    calls: u64,
    calls_with_duration: u64,
    never_resumed: u64,
    resumed_without_start: u64,
    timer_signals: u64,
    unprefixed: u64,
    pseudo_renamed: Option<u32>,
    /// Day shift for `-t`/`-tt` inputs, decided in `finish`.
    day_shift: i64,
    // Transient (cleared at end_input).
    live: FxHashSet<u32>,
    children: FxHashSet<u32>,
    attached: FxHashSet<u32>,
    unprefixed_pid: Option<u32>,
    pseudo_active: bool,
    seen_prefix: bool,
    glued: Vec<u8>,
    intervals_from: usize,
}

/// A resource in a stored interval.
#[derive(Clone, Debug)]
struct RawRes {
    label: Option<Box<[u8]>>,
    kind: ResKind,
    inherited: Option<(TableKey, u32, bool)>,
    fd: i64,
}

#[derive(Clone, Debug)]
struct RawInterval {
    input: u32,
    line: u64,
    before_line: Option<u64>,
    pid: u32,
    scope: u32,
    clock: Clock,
    start: i64,
    end: i64,
    inside_call: bool,
    exact: bool,
    timers: u32,
    before: Option<Box<[u8]>>,
    after: Option<Box<[u8]>>,
    call: Option<Box<[u8]>>,
    class: CallClass,
    primary: Option<RawRes>,
    resources: Vec<RawRes>,
    hash: Option<HashInfo>,
    first: bool,
}

// ------------------------------------------------------------------ the analyzer

/// Finds gaps in strace output, input by input, line by line (see the module docs).
#[derive(Debug)]
pub struct GapAnalyzer {
    threads: FxHashMap<u32, Thread>,
    sh: Shared,
}

/// Everything but the threads, so that a thread and the rest borrow apart.
#[derive(Debug)]
struct Shared {
    opts: GapOptions,
    inputs: Vec<InputState>,
    tables: FdTables,
    intervals: Vec<RawInterval>,
    skipped: BTreeMap<&'static str, u64>,
    scratch: Vec<u8>,
    args_buf: Vec<u8>,
    label_buf: Vec<u8>,
    active: bool,
}

/// A call as processed: complete, or an unfinished start joined with its end.
#[derive(Clone, Copy)]
struct CallView<'a> {
    name: &'a [u8],
    args: &'a [u8],
    ret: Ret<'a>,
    duration_ns: Option<u64>,
}

impl GapAnalyzer {
    /// An analyzer with these options.
    pub fn new(opts: GapOptions) -> GapAnalyzer {
        let skipped = [
            Skip::Empty,
            Skip::StraceMessage,
            Skip::StackFrame,
            Skip::HexDump,
            Skip::Summary,
            Skip::NotTrace,
        ]
        .iter()
        .map(|s| (s.as_str(), 0))
        .collect();
        GapAnalyzer {
            threads: FxHashMap::default(),
            sh: Shared {
                opts,
                inputs: Vec::new(),
                tables: FdTables::default(),
                intervals: Vec::new(),
                skipped,
                scratch: Vec::new(),
                args_buf: Vec::new(),
                label_buf: Vec::new(),
                active: false,
            },
        }
    }

    /// Start an input. `pid_hint` is the PID of a `-ff` file (from its name); lines
    /// without a PID prefix belong to it.
    pub fn begin_input(&mut self, name: &str, pid_hint: Option<u32>) {
        if self.sh.active {
            self.end_input();
        }
        let idx = self.sh.inputs.len();
        let scope = if pid_hint.is_some() {
            0
        } else {
            u32::try_from(idx + 1).unwrap_or(u32::MAX)
        };
        self.sh.inputs.push(InputState {
            name: name.to_string(),
            pid_hint,
            scope,
            intervals_from: self.sh.intervals.len(),
            ..InputState::default()
        });
        self.sh.active = true;
    }

    /// One line of the current input, without its newline.
    pub fn line(&mut self, line_no: u64, line: &[u8]) {
        if !self.sh.active {
            self.begin_input("-", None);
        }
        let idx = self.sh.inputs.len() - 1;
        let glued = match self.sh.inputs.get_mut(idx) {
            Some(input) => {
                input.lines += 1;
                std::mem::take(&mut input.glued)
            }
            None => return,
        };
        let mut glued = glued;
        let alone = parse_line(line);
        let parsed = if glued.is_empty() || alone != Err(Skip::NotTrace) {
            alone
        } else {
            // The rest of a line an attach message cut: join it with the head.
            glued.extend_from_slice(line);
            match parse_line(&glued) {
                Ok(t) => Ok(t),
                Err(_) => alone,
            }
        };
        let mut keep = None;
        match parsed {
            Ok(t) => {
                self.trace_line(idx, line_no, &t);
            }
            Err(skip) => {
                *self.sh.skipped.entry(skip.as_str()).or_insert(0) += 1;
                if skip == Skip::StraceMessage {
                    let msg = match split_glued(line) {
                        Some((head, msg)) => {
                            keep = Some(head);
                            msg
                        }
                        None => line,
                    };
                    self.sh.strace_message(idx, msg);
                }
            }
        }
        // Keep the buffer's allocation for the next glued line.
        glued.clear();
        if let Some(head) = keep {
            glued.extend_from_slice(head);
        }
        if let Some(input) = self.sh.inputs.get_mut(idx) {
            input.glued = glued;
        }
    }

    /// End the current input: calls still unfinished are counted, per-thread state
    /// is dropped.
    pub fn end_input(&mut self) {
        if !self.sh.active {
            return;
        }
        self.sh.active = false;
        let never: u64 = self.threads.values().filter(|t| t.pending.active).count() as u64;
        self.threads.clear();
        if let Some(input) = self.sh.inputs.last_mut() {
            input.never_resumed += never;
            input.live = FxHashSet::default();
            input.children = FxHashSet::default();
            input.attached = FxHashSet::default();
            input.glued = Vec::new();
        }
    }

    /// The report.
    pub fn finish(mut self) -> GapsReport {
        self.end_input();
        self.sh.report()
    }

    fn trace_line(&mut self, idx: usize, line_no: u64, t: &TraceLine<'_>) {
        let Some(tid) = self.sh.resolve_tid(idx, t.pid, &mut self.threads) else {
            return;
        };
        let time = self.sh.time_of(idx, t);
        let ring = self.sh.opts.context_calls;
        let th = self.threads.entry(tid).or_insert_with(|| Thread::new(ring));
        if th.events == 0 {
            if let Some(input) = self.sh.inputs.get_mut(idx) {
                input.threads += 1;
            }
        }
        if let Some(input) = self.sh.inputs.get_mut(idx) {
            input.trace += 1;
        }
        let done = self.sh.event(idx, tid, th, line_no, time, &t.body);
        if done {
            self.threads.remove(&tid);
            let scope = self.sh.scope(idx);
            self.sh.tables.exit(scope, tid);
            if let Some(input) = self.sh.inputs.get_mut(idx) {
                input.live.remove(&tid);
            }
        }
    }
}

impl Shared {
    fn input(&mut self, idx: usize) -> Option<&mut InputState> {
        self.inputs.get_mut(idx)
    }

    /// `strace: Process N attached`: the first names the thread of unprefixed lines
    /// under `-p`, later ones name new children.
    fn strace_message(&mut self, idx: usize, msg: &[u8]) {
        let Some(rest) = msg.strip_prefix(b"strace: Process ") else {
            return;
        };
        let end = rest
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        if !rest.get(end..).is_some_and(|w| w.starts_with(b" attached")) {
            return;
        }
        let Some(pid) = std::str::from_utf8(rest.get(..end).unwrap_or_default())
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            return;
        };
        if let Some(input) = self.input(idx) {
            if input.trace == 0 && input.unprefixed_pid.is_none() {
                input.unprefixed_pid = Some(pid);
            } else {
                input.attached.insert(pid);
            }
        }
    }

    /// The thread a line belongs to. Lines without a prefix in a `-f` stream belong to
    /// the only tracee: the hint, the one left alive, the one `-p` attached, or a
    /// placeholder (0) renamed when the first prefixed line names it.
    fn resolve_tid(
        &mut self,
        idx: usize,
        pid: Option<u32>,
        threads: &mut FxHashMap<u32, Thread>,
    ) -> Option<u32> {
        let input = self.inputs.get_mut(idx)?;
        if let Some(p) = pid {
            input.seen_prefix = true;
            if input.pseudo_active
                && p != 0
                && !input.children.contains(&p)
                && !input.attached.contains(&p)
            {
                input.pseudo_active = false;
                input.unprefixed_pid = Some(p);
                input.pseudo_renamed = Some(p);
                let scope = input.scope;
                let from = input.intervals_from;
                if let Some(th) = threads.remove(&0) {
                    threads.entry(p).or_insert(th);
                }
                self.tables.rename(scope, 0, p);
                for iv in self.intervals.iter_mut().skip(from) {
                    if iv.pid == 0 {
                        iv.pid = p;
                    }
                    for r in iv.resources.iter_mut().chain(iv.primary.iter_mut()) {
                        if let Some((key, _, _)) = r.inherited.as_mut() {
                            if *key == (scope, 0) {
                                *key = (scope, p);
                            }
                        }
                    }
                }
            }
            input.live.insert(p);
            return Some(p);
        }
        if let Some(h) = input.pid_hint {
            return Some(h);
        }
        input.unprefixed += 1;
        if input.seen_prefix && input.live.len() == 1 {
            return input.live.iter().next().copied();
        }
        if let Some(u) = input.unprefixed_pid {
            input.live.insert(u);
            return Some(u);
        }
        input.pseudo_active = true;
        Some(0)
    }

    /// The line's time on the input's clock, in nanoseconds.
    fn time_of(&mut self, idx: usize, t: &TraceLine<'_>) -> Option<i64> {
        let input = self.inputs.get_mut(idx)?;
        let (clock, ns) = match (t.stamp, t.relative_ns) {
            (Some(Stamp::Unix { nanos }), _) => (Clock::Unix, nanos),
            (Some(Stamp::TimeOfDay { nanos }), _) => {
                if let Some(last) = input.last_tod {
                    // Lines of several threads can be a little out of order; only a
                    // jump back of more than 12 hours is midnight.
                    if last > nanos && last - nanos > 12 * 3600 * 1_000_000_000 {
                        input.day += 1;
                        input.rollovers += 1;
                    }
                }
                input.last_tod = Some(nanos);
                let n = i64::try_from(nanos).ok()?;
                (Clock::TimeOfDay, input.day * DAY_NS + n)
            }
            (None, Some(rel)) => {
                if input.pid_hint.is_some() {
                    // `-r` counts from the previous line of any tracee: per `-ff` file
                    // the sum means nothing.
                    input.relative_under_ff = true;
                    return None;
                }
                input.rel_acc = input
                    .rel_acc
                    .saturating_add(i64::try_from(rel).unwrap_or(i64::MAX));
                (Clock::Relative, input.rel_acc)
            }
            (None, None) => return None,
        };
        match input.clock {
            None => input.clock = Some(clock),
            Some(c) if c != clock => {
                input.mixed_clock = true;
                return None;
            }
            Some(_) => {}
        }
        if input.first.is_none() {
            input.first = Some(ns);
        }
        input.last = Some(ns);
        Some(ns)
    }

    /// One event of thread `tid`. Returns true when the thread is gone.
    fn event(
        &mut self,
        idx: usize,
        tid: u32,
        th: &mut Thread,
        line_no: u64,
        time: Option<i64>,
        body: &Body<'_>,
    ) -> bool {
        let first = th.events == 0;
        th.events += 1;
        match *body {
            Body::Call(c) => {
                if th.pending.active {
                    // Its end never came (lost line): count it and move on.
                    th.pending.active = false;
                    if let Some(i) = self.input(idx) {
                        i.never_resumed += 1;
                    }
                    th.prev_end = None;
                }
                if th.in_timer && c.name == b"rt_sigreturn" {
                    th.in_timer = false;
                    return false;
                }
                th.in_timer = false;
                let view = CallView {
                    name: c.name,
                    args: c.args,
                    ret: c.ret,
                    duration_ns: c.duration_ns,
                };
                let start = time;
                let end = match (time, c.duration_ns) {
                    (Some(t), Some(d)) => Some(t.saturating_add(i64::try_from(d).unwrap_or(0))),
                    (t, _) => t,
                };
                self.call(
                    idx,
                    tid,
                    th,
                    line_no,
                    view,
                    start,
                    end,
                    c.duration_ns.is_some(),
                    first,
                    true,
                );
            }
            Body::Unfinished { name, args: a } => {
                th.in_timer = false;
                if th.pending.active {
                    if let Some(i) = self.input(idx) {
                        i.never_resumed += 1;
                    }
                }
                // The gap ends where the call starts.
                th.cur.reset(line_no);
                th.cur.name.extend_from_slice(name);
                th.cur.first = first;
                th.cur.set_call(a, None, None);
                self.close_gap(idx, tid, th, time, line_no);
                th.pending.active = true;
                th.pending.name.clear();
                th.pending.name.extend_from_slice(name);
                th.pending.args.clear();
                let keep = a.get(..a.len().min(PENDING_ARGS_LIMIT)).unwrap_or_default();
                th.pending.args.extend_from_slice(keep);
                th.pending.start = time;
                th.pending.line = line_no;
                th.pending.first = first;
                th.prev_end = None;
            }
            Body::Resumed(c) => {
                th.in_timer = false;
                let matched = th.pending.active && th.pending.name == c.name;
                if th.pending.active && !matched {
                    if let Some(i) = self.input(idx) {
                        i.never_resumed += 1;
                    }
                }
                th.pending.active = false;
                let end = time;
                if matched {
                    let mut joined = std::mem::take(&mut self.args_buf);
                    joined.clear();
                    joined.extend_from_slice(&th.pending.args);
                    // The parser trims the `, ` before `<unfinished ...>`.
                    let rest = c.args.trim_ascii_start();
                    if !joined.is_empty() && !rest.is_empty() && !rest.starts_with(b",") {
                        joined.extend_from_slice(b", ");
                    }
                    joined.extend_from_slice(rest);
                    let pending_args = std::mem::take(&mut th.pending.args);
                    let view = CallView {
                        name: c.name,
                        args: &joined,
                        ret: c.ret,
                        duration_ns: c.duration_ns,
                    };
                    let start = th.pending.start;
                    let pfirst = th.pending.first;
                    self.call(idx, tid, th, line_no, view, start, end, true, pfirst, false);
                    th.pending.args = pending_args;
                    self.args_buf = joined;
                } else {
                    if let Some(i) = self.input(idx) {
                        i.resumed_without_start += 1;
                    }
                    let start = match (time, c.duration_ns) {
                        (Some(t), Some(d)) => Some(t.saturating_sub(i64::try_from(d).unwrap_or(0))),
                        (t, _) => t,
                    };
                    let view = CallView {
                        name: c.name,
                        args: c.args,
                        ret: c.ret,
                        duration_ns: c.duration_ns,
                    };
                    self.call(
                        idx,
                        tid,
                        th,
                        line_no,
                        view,
                        start,
                        end,
                        c.duration_ns.is_some(),
                        first,
                        true,
                    );
                }
            }
            Body::Signal { name, info } => {
                if matches!(name, b"SIGPROF" | b"SIGALRM" | b"SIGVTALRM") {
                    th.timers += 1;
                    th.in_timer = true;
                    if let Some(i) = self.input(idx) {
                        i.timer_signals += 1;
                    }
                    return false;
                }
                th.in_timer = false;
                if th.pending.active {
                    return false;
                }
                th.cur.reset(line_no);
                th.cur.first = first;
                th.cur.shape = Shape::Signal;
                th.cur.ret.extend_from_slice(name);
                th.cur.args.extend_from_slice(info);
                self.close_gap(idx, tid, th, time, line_no);
                th.ring.push(&mut th.cur);
                th.prev_end = time;
                th.prev_exact = true;
                th.prev_was_exit = false;
            }
            Body::Exit(e) => {
                if th.pending.active {
                    th.pending.active = false;
                    if let Some(i) = self.input(idx) {
                        i.never_resumed += 1;
                    }
                    // Killed inside a call: that call took until now.
                    if let (Some(s), Some(t)) = (th.pending.start, time) {
                        let name = std::mem::take(&mut th.pending.name);
                        let pargs = std::mem::take(&mut th.pending.args);
                        let view = CallView {
                            name: &name,
                            args: &pargs,
                            ret: Ret {
                                raw: b"?",
                                value: None,
                                decoration: None,
                                errno: None,
                            },
                            duration_ns: None,
                        };
                        let key = self.tables.view(self.scope(idx), tid);
                        let mut cur = std::mem::take(&mut th.cur);
                        cur.reset(th.pending.line);
                        cur.first = th.pending.first;
                        self.describe_call(&mut cur, key, view, true);
                        self.in_call(idx, tid, th, &cur, s, t);
                        th.cur = cur;
                        th.pending.name = name;
                        th.pending.args = pargs;
                    }
                } else if let Exit::Killed { .. } = e {
                    if !th.prev_was_exit {
                        th.cur.reset(line_no);
                        render_exit(&mut th.cur.text, &e);
                        self.close_gap(idx, tid, th, time, line_no);
                    }
                }
                return true;
            }
        }
        false
    }

    fn scope(&self, idx: usize) -> u32 {
        self.inputs.get(idx).map_or(0, |i| i.scope)
    }

    /// A call that started at `start` and ended at `end` (`exact`: the end is known,
    /// not the start again).
    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        idx: usize,
        tid: u32,
        th: &mut Thread,
        line_no: u64,
        c: CallView<'_>,
        start: Option<i64>,
        end: Option<i64>,
        exact: bool,
        first: bool,
        gap_before: bool,
    ) {
        if let Some(i) = self.input(idx) {
            i.calls += 1;
            if c.duration_ns.is_some() {
                i.calls_with_duration += 1;
            }
        }
        let scope = self.scope(idx);
        let key = self.tables.view(scope, tid);
        let mut cur = std::mem::take(&mut th.cur);
        cur.reset(line_no);
        cur.first = first;
        self.describe_call(&mut cur, key, c, false);
        th.cur = cur;
        if gap_before {
            self.close_gap(idx, tid, th, start, line_no);
        }
        if let (Some(s), Some(e), true) = (start, end, exact) {
            if e - s >= i64::try_from(self.opts.min_gap_ns).unwrap_or(i64::MAX) {
                let cur = std::mem::take(&mut th.cur);
                self.in_call(idx, tid, th, &cur, s, e);
                th.cur = cur;
            }
        }
        self.apply(scope, tid, key, c);
        th.ring.push(&mut th.cur);
        th.prev_end = end;
        th.prev_exact = exact;
        th.prev_was_exit = matches!(c.name, b"exit_group" | b"exit");
    }

    /// Fill `slot` with the call's parts (for its text), class, resources and any
    /// hash it carries.
    fn describe_call(&mut self, slot: &mut CtxSlot, key: TableKey, c: CallView<'_>, cut: bool) {
        slot.name.extend_from_slice(c.name);
        slot.class = call_class(c.name, c.args);
        let ret = if cut { None } else { Some(c.ret.raw) };
        slot.set_call(c.args, ret, c.duration_ns);
        let mut hash = hash_in(c.args, &mut self.scratch);
        if let (None, Some(r)) = (hash, ret) {
            hash = hash_in(r, &mut self.scratch);
        }
        slot.hash = hash;
        self.call_resources(slot, key, c);
    }

    /// Record a gap between the previous event and one starting at `start`.
    fn close_gap(
        &mut self,
        idx: usize,
        tid: u32,
        th: &mut Thread,
        start: Option<i64>,
        line_no: u64,
    ) {
        let timers = std::mem::take(&mut th.timers);
        let (Some(prev), Some(start)) = (th.prev_end, start) else {
            return;
        };
        let min = i64::try_from(self.opts.min_gap_ns).unwrap_or(i64::MAX);
        if start - prev < min {
            return;
        }
        let Some(input) = self.inputs.get(idx) else {
            return;
        };
        let newest = th.ring.newest();
        let resources = collect_resources(th.ring.iter(), self.opts.context_calls);
        let iv = RawInterval {
            input: idx as u32,
            line: line_no,
            before_line: newest.map(|s| s.line),
            pid: tid,
            scope: input.scope,
            clock: input.clock.unwrap_or(Clock::Unix),
            start: prev,
            end: start,
            inside_call: false,
            exact: th.prev_exact,
            timers,
            before: newest.map(|s| s.render(&mut self.scratch)),
            after: Some(th.cur.render(&mut self.scratch)),
            call: newest.map(|s| s.name.clone().into_boxed_slice()),
            class: newest.map_or(CallClass::Other, |s| s.class),
            primary: newest
                .and_then(|s| s.resources().first())
                .map(ResRef::to_raw),
            resources,
            hash: th.ring.iter().find_map(|s| s.hash),
            first: newest.is_some_and(|s| s.first),
        };
        self.intervals.push(iv);
    }

    /// Record time spent inside the call in `slot`.
    fn in_call(&mut self, idx: usize, tid: u32, th: &Thread, slot: &CtxSlot, s: i64, e: i64) {
        let Some(input) = self.inputs.get(idx) else {
            return;
        };
        let newest = th.ring.newest();
        let mut resources = collect_resources(std::iter::once(slot), 3);
        for r in collect_resources(th.ring.iter(), self.opts.context_calls) {
            if !resources.iter().any(|x| same_res(x, &r)) {
                resources.push(r);
            }
        }
        self.intervals.push(RawInterval {
            input: idx as u32,
            line: slot.line,
            before_line: newest.map(|s| s.line),
            pid: tid,
            scope: input.scope,
            clock: input.clock.unwrap_or(Clock::Unix),
            start: s,
            end: e,
            inside_call: true,
            exact: true,
            timers: 0,
            before: newest.map(|s| s.render(&mut self.scratch)),
            after: Some(slot.render(&mut self.scratch)),
            call: Some(slot.name.clone().into_boxed_slice()),
            class: slot.class,
            primary: slot.resources().first().map(ResRef::to_raw),
            resources,
            hash: slot.hash.or_else(|| th.ring.iter().find_map(|s| s.hash)),
            first: slot.first,
        });
    }

    // -------------------------------------------------------------- resources

    /// The files and sockets a call names.
    fn call_resources(&mut self, slot: &mut CtxSlot, key: TableKey, c: CallView<'_>) {
        let name = c.name;
        let nth = |n: usize| args(c.args).nth(n);
        match role(name) {
            Role::Path(p) => {
                if let Some(a) = nth(p) {
                    self.path_res(slot, key, None, a);
                }
            }
            Role::DirPath(d, p) => {
                if let Some(a) = nth(p) {
                    self.path_res(slot, key, nth(d), a);
                }
            }
            Role::Fds(list) => {
                for &i in list {
                    if let Some(a) = nth(i) {
                        self.fd_res(slot, key, a);
                    }
                }
            }
            Role::None => {
                if let Some(a) = nth(0) {
                    if fd_arg(a).is_some_and(|(fd, d)| fd >= 0 && d.is_some()) {
                        self.fd_res(slot, key, a);
                    }
                }
            }
        }
        // A new fd: the accepted connection, the socket; opens are named by their path.
        if c.ret.value.is_some_and(|v| v >= 0) && matches!(name, b"accept" | b"accept4" | b"socket")
        {
            let fd = c.ret.value.unwrap_or(-1);
            let label = self.new_fd_label(key, c);
            if let Some(r) = slot.next_res() {
                r.fd = fd;
                r.label.extend_from_slice(&label);
                r.kind = ResKind::Socket;
                slot.commit_res();
            }
            self.label_buf = label;
        }
    }

    fn fd_res(&mut self, slot: &mut CtxSlot, key: TableKey, arg: &[u8]) {
        let Some((fd, deco)) = fd_arg(arg) else {
            return;
        };
        if fd < 0 {
            return;
        }
        let Some(r) = slot.next_res() else {
            return;
        };
        r.fd = fd;
        if let Some(d) = deco {
            r.label.extend_from_slice(&decoration_path(d));
            r.kind = ResKind::of_label(&r.label);
        } else {
            match self.tables.lookup(key, fd) {
                Lookup::Known(label, kind) => {
                    r.label.extend_from_slice(label);
                    r.kind = kind;
                }
                Lookup::Closed => return,
                Lookup::Inherited { fd: n, after_exec } => {
                    r.inherited = Some((key, n, after_exec));
                }
            }
        }
        slot.commit_res();
    }

    fn path_res(&mut self, slot: &mut CtxSlot, key: TableKey, dir: Option<&[u8]>, arg: &[u8]) {
        let mut label = std::mem::take(&mut self.label_buf);
        if self.path_label(key, dir, arg, &mut label) {
            if let Some(r) = slot.next_res() {
                r.label.extend_from_slice(&label);
                r.kind = match ResKind::of_label(&label) {
                    ResKind::Unknown => ResKind::File,
                    k => k,
                };
                slot.commit_res();
            }
        }
        self.label_buf = label;
    }

    /// The path a path argument names, joined to its dirfd's directory when relative
    /// and known. False when the argument is not a non-empty string.
    fn path_label(&self, key: TableKey, dir: Option<&[u8]>, arg: &[u8], out: &mut Vec<u8>) -> bool {
        out.clear();
        let Some((path, _)) = quoted(arg) else {
            return false;
        };
        if path.is_empty() {
            return false;
        }
        if !path.starts_with(b"/") {
            if let Some(dir) = dir.and_then(|d| self.dir_label(key, d)) {
                out.extend_from_slice(&dir);
                if !out.ends_with(b"/") {
                    out.push(b'/');
                }
            }
        }
        out.extend_from_slice(&path);
        true
    }

    /// The directory an `*at` call's dirfd names, if known.
    fn dir_label(&self, key: TableKey, arg: &[u8]) -> Option<Vec<u8>> {
        let (fd, deco) = fd_arg(arg)?;
        if let Some(d) = deco {
            return Some(decoration_path(d).into_owned());
        }
        match self.tables.lookup(key, fd) {
            Lookup::Known(l, ResKind::File) => Some(l.to_vec()),
            _ => None,
        }
    }

    /// A label for an fd a call creates, when `-y` does not give one.
    fn new_fd_label(&self, key: TableKey, c: CallView<'_>) -> Vec<u8> {
        if let Some(d) = c.ret.decoration {
            return decoration_path(d).into_owned();
        }
        let mut out = Vec::new();
        match c.name {
            b"accept" | b"accept4" => {
                out.extend_from_slice(b"socket:[accepted on ");
                let listen = args(c.args).next().and_then(fd_arg);
                match listen {
                    Some((_, Some(d))) => out.extend_from_slice(&decoration_path(d)),
                    Some((fd, None)) => match self.tables.lookup(key, fd) {
                        Lookup::Known(l, _) => out.extend_from_slice(l),
                        _ => out.extend_from_slice(format!("fd {fd}").as_bytes()),
                    },
                    None => out.extend_from_slice(b"?"),
                }
                out.push(b']');
            }
            b"socket" => {
                let mut a = args(c.args);
                let domain = a.next().unwrap_or(b"?");
                let ty = a.next().unwrap_or(b"?");
                let ty = ty.split(|&b| b == b'|').next().unwrap_or(ty);
                out.extend_from_slice(b"socket:[");
                out.extend_from_slice(domain);
                out.push(b' ');
                out.extend_from_slice(ty);
                out.push(b']');
            }
            b"socketpair" => out.extend_from_slice(b"socketpair:[AF_UNIX]"),
            b"pipe" | b"pipe2" => out.extend_from_slice(b"pipe"),
            b"epoll_create" | b"epoll_create1" => out.extend_from_slice(b"anon_inode:[eventpoll]"),
            b"eventfd" | b"eventfd2" => out.extend_from_slice(b"anon_inode:[eventfd]"),
            b"timerfd_create" => out.extend_from_slice(b"anon_inode:[timerfd]"),
            b"signalfd" | b"signalfd4" => out.extend_from_slice(b"anon_inode:[signalfd]"),
            b"inotify_init" | b"inotify_init1" => out.extend_from_slice(b"anon_inode:inotify"),
            b"pidfd_open" => out.extend_from_slice(b"anon_inode:[pidfd]"),
            b"memfd_create" => {
                out.extend_from_slice(b"memfd:");
                if let Some((n, _)) = args(c.args).next().and_then(quoted) {
                    out.extend_from_slice(&n);
                }
            }
            _ => out.extend_from_slice(b"?"),
        }
        out
    }

    /// Update the fd table for a call.
    fn apply(&mut self, scope: u32, tid: u32, key: TableKey, c: CallView<'_>) {
        let ok = c.ret.value.is_some_and(|v| v >= 0);
        let ret = c.ret.value.unwrap_or(-1);
        let nth = |n: usize| args(c.args).nth(n);
        let has = |s: &[u8]| contains(c.args, s);
        match c.name {
            b"open" | b"openat" | b"openat2" | b"creat" if ok => {
                let cloexec = c.name != b"creat" && has(b"O_CLOEXEC");
                if let Some(d) = c.ret.decoration {
                    let l = decoration_path(d);
                    self.tables
                        .open(key, ret, &l, ResKind::of_label(&l), cloexec);
                } else {
                    let (dir, path) = match c.name {
                        b"open" | b"creat" => (None, nth(0)),
                        _ => (nth(0), nth(1)),
                    };
                    let mut label = std::mem::take(&mut self.label_buf);
                    if !path.is_some_and(|p| self.path_label(key, dir, p, &mut label)) {
                        label.clear();
                        label.push(b'?');
                    }
                    self.tables.open(key, ret, &label, ResKind::File, cloexec);
                    self.label_buf = label;
                }
            }
            b"socket" | b"accept" | b"accept4" | b"epoll_create" | b"epoll_create1"
            | b"eventfd" | b"eventfd2" | b"timerfd_create" | b"signalfd" | b"signalfd4"
            | b"inotify_init" | b"inotify_init1" | b"memfd_create" | b"pidfd_open"
                if ok =>
            {
                let label = self.new_fd_label(key, c);
                let kind = match ResKind::of_label(&label) {
                    ResKind::Unknown => ResKind::Other,
                    k => k,
                };
                let cloexec = has(b"CLOEXEC");
                self.tables.open(key, ret, &label, kind, cloexec);
            }
            b"pipe" | b"pipe2" | b"socketpair" if ok => {
                let (arr, flags) = if c.name == b"socketpair" {
                    (nth(3), nth(1))
                } else {
                    (nth(0), nth(1))
                };
                let cloexec = flags.is_some_and(|f| contains(f, b"CLOEXEC"));
                let fallback = self.new_fd_label(key, c);
                if let Some(list) = arr.and_then(inner) {
                    for (fd, deco) in args(list).filter_map(fd_arg) {
                        let label = match deco {
                            Some(d) => decoration_path(d).into_owned(),
                            None => fallback.clone(),
                        };
                        let kind = match ResKind::of_label(&label) {
                            ResKind::Unknown => ResKind::Pipe,
                            k => k,
                        };
                        self.tables.open(key, fd, &label, kind, cloexec);
                    }
                }
            }
            b"dup" if ok => {
                if let Some((old, _)) = nth(0).and_then(fd_arg) {
                    self.tables.dup(key, old, ret, false);
                }
            }
            b"dup2" | b"dup3" if ok => {
                if let Some((old, _)) = nth(0).and_then(fd_arg) {
                    let cloexec = c.name == b"dup3" && has(b"O_CLOEXEC");
                    self.tables.dup(key, old, ret, cloexec);
                }
            }
            b"fcntl" | b"fcntl64" => {
                let cmd = nth(1).unwrap_or_default();
                let fd = nth(0).and_then(fd_arg).map(|(f, _)| f);
                match (cmd, fd) {
                    (b"F_DUPFD" | b"F_DUPFD_CLOEXEC", Some(old)) if ok => {
                        self.tables.dup(key, old, ret, cmd == b"F_DUPFD_CLOEXEC");
                    }
                    (b"F_SETFD", Some(fd)) if ok => {
                        let on = nth(2).is_some_and(|f| contains(f, b"FD_CLOEXEC"));
                        self.tables.set_cloexec(key, fd, on);
                    }
                    _ => {}
                }
            }
            b"close" => {
                // Linux closes the fd even when close fails with EINTR.
                if ok || c.ret.errno == Some(b"EINTR") {
                    if let Some((fd, _)) = nth(0).and_then(fd_arg) {
                        self.tables.close(key, fd);
                    }
                }
            }
            b"close_range" if ok => {
                let num = |a: Option<&[u8]>| -> Option<i64> {
                    let a = a?;
                    if a.starts_with(b"~0") {
                        return Some(i64::MAX);
                    }
                    std::str::from_utf8(a).ok()?.trim().parse::<i64>().ok()
                };
                if let (Some(first), Some(last)) = (num(nth(0)), num(nth(1))) {
                    let cloexec_only = has(b"CLOSE_RANGE_CLOEXEC");
                    self.tables.close_range(key, first, last, cloexec_only);
                }
            }
            b"execve" | b"execveat" if c.ret.value == Some(0) => self.tables.exec(key),
            b"clone" | b"clone3" | b"fork" | b"vfork" if ret > 0 => {
                let child = u32::try_from(ret).unwrap_or(0);
                // `-ff` files are not read in time order: a shared table would mix
                // times, so each thread keeps its own there and inherits a snapshot.
                let share = scope != 0 && has(b"CLONE_FILES");
                self.tables.clone_child(scope, tid, child, share);
                if let Some(i) = self.inputs.iter_mut().rev().find(|i| i.scope == scope) {
                    i.children.insert(child);
                }
            }
            b"connect" if ok || c.ret.errno == Some(b"EINPROGRESS") => {
                if let Some((fd, None)) = nth(0).and_then(fd_arg) {
                    if let Some(label) = nth(1).and_then(sockaddr_label) {
                        self.tables.relabel(key, fd, &label, ResKind::Socket);
                    }
                }
            }
            _ => {
                // Any other call that returns a decorated fd opened it.
                if let (true, Some(d)) = (ok, c.ret.decoration) {
                    let l = decoration_path(d).into_owned();
                    let k = ResKind::of_label(&l);
                    self.tables.open(key, ret, &l, k, has(b"CLOEXEC"));
                }
            }
        }
    }

    // -------------------------------------------------------------- report

    fn report(mut self) -> GapsReport {
        self.align_days();
        let mut notes = BTreeSet::new();
        let intervals = std::mem::take(&mut self.intervals);
        let mut unresolved = 0u64;
        let mut all: Vec<(Gap, bool)> = Vec::with_capacity(intervals.len());
        for iv in &intervals {
            let (gap, missing) = self.build(iv);
            unresolved += missing;
            all.push((gap, iv.exact));
        }
        // One gap per thread and moment, whichever inputs saw it (`-f` and `-ff`).
        all.sort_by(|(a, ax), (b, bx)| {
            dedupe_key(a)
                .cmp(&dedupe_key(b))
                .then(bx.cmp(ax))
                .then(a.seconds.total_cmp(&b.seconds))
                .then(a.file.cmp(&b.file))
                .then(a.line.cmp(&b.line))
        });
        let before = all.len();
        all.dedup_by(|b, a| dedupe_key(&a.0) == dedupe_key(&b.0));
        let dups = before - all.len();
        let (mut gaps, mut blocked): (Vec<Gap>, Vec<Gap>) = all
            .into_iter()
            .map(|(g, _)| g)
            .partition(|g| g.kind == GapKind::Gap);
        let order = |a: &Gap, b: &Gap| {
            (
                a.clock,
                a.start_day,
                a.start_nanos,
                a.pid,
                a.end_day,
                a.end_nanos,
            )
                .cmp(&(
                    b.clock,
                    b.start_day,
                    b.start_nanos,
                    b.pid,
                    b.end_day,
                    b.end_nanos,
                ))
        };
        gaps.sort_by(order);
        blocked.sort_by(order);

        // Notes.
        let calls: u64 = self.inputs.iter().map(|i| i.calls).sum();
        let with_dur: u64 = self.inputs.iter().map(|i| i.calls_with_duration).sum();
        if calls > 0 && with_dur == 0 {
            notes.insert(
                "no -T durations: gaps include time inside the previous call \
                 (run strace with -T)"
                    .to_string(),
            );
        } else if with_dur < calls {
            notes.insert(
                "some calls have no -T duration: gaps after them include time inside the call"
                    .to_string(),
            );
        }
        let trace: u64 = self.inputs.iter().map(|i| i.trace).sum();
        if trace > 0 && self.inputs.iter().all(|i| i.clock.is_none()) {
            notes.insert(
                "no timestamps: no gaps can be computed (run strace with -ttt -T)".to_string(),
            );
        }
        if self
            .inputs
            .iter()
            .any(|i| i.clock == Some(Clock::TimeOfDay))
        {
            notes.insert(
                "-t/-tt stamps carry no date: times are strace's local time of day, \
                 `+Nd` counts midnights since the run started"
                    .to_string(),
            );
        }
        if self.inputs.iter().any(|i| i.relative_under_ff) {
            notes.insert(
                "-r stamps in -ff files count from other files' lines: ignored (use -ttt)"
                    .to_string(),
            );
        }
        if self.inputs.iter().any(|i| i.mixed_clock) {
            notes.insert("an input mixes stamp kinds: lines of the second kind ignored".into());
        }
        let never: u64 = self.inputs.iter().map(|i| i.never_resumed).sum();
        if never > 0 {
            notes.insert(format!(
                "{never} unfinished call(s) never resumed (killed, or the trace ended)"
            ));
        }
        let without: u64 = self.inputs.iter().map(|i| i.resumed_without_start).sum();
        if without > 0 {
            notes.insert(format!(
                "{without} resumed call(s) without their start (attached mid-call)"
            ));
        }
        let timers: u64 = self.inputs.iter().map(|i| i.timer_signals).sum();
        if timers > 0 {
            notes.insert(format!(
                "{timers} timer signal(s) (SIGPROF/SIGALRM) merged into the gaps around them"
            ));
        }
        if dups > 0 {
            notes.insert(format!(
                "{dups} interval(s) seen in several inputs (-f and -ff of one run) counted once"
            ));
        }
        if unresolved > 0 {
            notes.insert(format!(
                "{unresolved} fd reference(s) could not be named (run strace with -y)"
            ));
        }
        for i in &self.inputs {
            if let (Some(p), true) = (i.pseudo_renamed, i.unprefixed > 0) {
                notes.insert(format!(
                    "{}: lines without a PID before the first fork attributed to {p}",
                    i.name
                ));
            }
        }
        if !gaps.is_empty() {
            notes.insert(
                "calls hidden by strace -e trace=... look like gaps (trace all calls)".into(),
            );
        }

        // Sort references, clone only the few kept (a stable sort either way).
        let mut top: Vec<&Gap> = gaps.iter().collect();
        top.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then_with(|| order(a, b)));
        top.truncate(self.opts.top);
        let top: Vec<Gap> = top.into_iter().cloned().collect();

        let by_cause = by_cause(&gaps, &blocked);
        let by_resource = by_resource(&gaps, &blocked);
        let by_pid = by_pid(&gaps, &blocked);

        let total: u64 = self.inputs.iter().map(|i| i.lines).sum();
        let skipped: u64 = self.skipped.values().sum();
        let mut inputs: Vec<GapInputReport> = self
            .inputs
            .iter()
            .map(|i| {
                let fmt = |t: Option<i64>| {
                    t.zip(i.clock)
                        .map(|(t, c)| format_time(c, shifted(c, t, i.day_shift)).0)
                };
                GapInputReport {
                    name: i.name.clone(),
                    pid_hint: i.pid_hint,
                    lines: i.lines,
                    trace_lines: i.trace,
                    threads: i.threads,
                    clock: i.clock,
                    first: fmt(i.first),
                    last: fmt(i.last),
                    rollovers: i.rollovers,
                    calls: i.calls,
                    calls_with_duration: i.calls_with_duration,
                    unfinished_never_resumed: i.never_resumed,
                    resumed_without_start: i.resumed_without_start,
                    timer_signals: i.timer_signals,
                }
            })
            .collect();
        inputs.sort_by(|a, b| a.name.cmp(&b.name));

        GapsReport {
            min_gap_seconds: self.opts.min_gap_ns as f64 / 1e9,
            lines: TraceLinesReport {
                total,
                trace,
                skipped,
                skipped_by_reason: self.skipped.clone(),
            },
            inputs,
            notes: notes.into_iter().collect(),
            gaps,
            blocked,
            by_cause,
            by_resource,
            by_pid,
            top,
        }
    }

    /// `-t`/`-tt` inputs start on day 0 each; a `-ff` file that starts after midnight
    /// belongs to day 1 of the run. The run started after the largest stretch of the
    /// day in which no input started.
    fn align_days(&mut self) {
        let mut starts: Vec<(i64, usize)> = self
            .inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| i.clock == Some(Clock::TimeOfDay))
            .filter_map(|(k, i)| i.first.map(|f| (f.rem_euclid(DAY_NS), k)))
            .collect();
        if starts.len() < 2 {
            return;
        }
        starts.sort();
        let n = starts.len();
        let mut best = (0i64, 0usize);
        for k in 0..n {
            let (a, _) = starts[k];
            let (b, _) = starts[(k + 1) % n];
            let gap = if k + 1 == n { b + DAY_NS - a } else { b - a };
            if gap > best.0 {
                best = (gap, (k + 1) % n);
            }
        }
        let origin = starts[best.1].0;
        for (t, k) in starts {
            if let Some(i) = self.inputs.get_mut(k) {
                i.day_shift = i64::from(t < origin);
            }
        }
    }

    /// The report form of an interval; also how many of its fds stayed unnamed.
    fn build(&self, iv: &RawInterval) -> (Gap, u64) {
        let input = self.inputs.get(iv.input as usize);
        let shift = input.map_or(0, |i| i.day_shift);
        let mut missing = 0;
        // `None`: the fd was not open (closed, or O_CLOEXEC across execve).
        let mut resolve = |r: &RawRes| -> Option<(String, ResKind)> {
            if let Some(l) = &r.label {
                return Some((label_text(l), r.kind));
            }
            if let Some((key, fd, after_exec)) = r.inherited {
                match self.tables.resolve_inherited(key, fd, after_exec) {
                    Resolved::Known(l, k) => return Some((label_text(l), k)),
                    Resolved::Closed => return None,
                    Resolved::Unknown => {}
                }
            }
            missing += 1;
            Some((format!("fd {}", r.fd), ResKind::Unknown))
        };
        let primary = iv.primary.as_ref().and_then(&mut resolve);
        let mut resources: Vec<(String, ResKind)> = Vec::new();
        for r in &iv.resources {
            if let Some(x) = resolve(r) {
                if !resources.iter().any(|(l, _)| *l == x.0) {
                    resources.push(x);
                }
            }
        }
        let call = iv.call.as_ref().map(|c| lossless_text(c).into_owned());
        let call_name = iv.call.as_deref().unwrap_or_default();
        let last = resources.first().cloned();
        let auth_ctx = last.as_ref().is_some_and(|(l, k)| is_auth(l, *k)) || iv.hash.is_some();
        let primary_auth = primary.as_ref().is_some_and(|(l, k)| is_auth(l, *k));
        let waits = match iv.class {
            CallClass::Wait => true,
            CallClass::Data => primary.as_ref().is_none_or(|(_, k)| {
                matches!(
                    k,
                    ResKind::Socket | ResKind::Pipe | ResKind::Tty | ResKind::Unknown
                )
            }),
            _ => false,
        };
        let attached =
            iv.first && call_name != b"execve" && !self.tables.has_parent(iv.scope, iv.pid);
        let (kind, cause) = if iv.inside_call || !iv.exact {
            // Time inside the call (or, without -T, a gap that includes it).
            if attached {
                (GapKind::Blocked, Cause::Startup)
            } else if primary_auth || (!iv.inside_call && auth_ctx && !waits) {
                (GapKind::Gap, Cause::Auth)
            } else if waits {
                (GapKind::Blocked, Cause::Blocked)
            } else if !iv.inside_call {
                // No -T: the gap also holds the previous call. File calls are short
                // unless they sync, so only a sync makes it `io`; else user space.
                let sync = matches!(
                    call_name,
                    b"fsync" | b"fdatasync" | b"sync" | b"syncfs" | b"sync_file_range" | b"msync"
                );
                if sync {
                    (GapKind::Gap, Cause::Io)
                } else {
                    (GapKind::Gap, Cause::Cpu)
                }
            } else {
                match iv.class {
                    CallClass::Io | CallClass::Data => (GapKind::Gap, Cause::Io),
                    _ => (GapKind::Gap, Cause::Kernel),
                }
            }
        } else if auth_ctx {
            (GapKind::Gap, Cause::Auth)
        } else {
            (GapKind::Gap, Cause::Cpu)
        };
        let detail = match cause {
            Cause::Auth => iv.hash.map(|h| h.to_string()),
            _ => None,
        };
        let (res, res_kind) = if iv.inside_call {
            primary
                .clone()
                .map_or((None, ResKind::Unknown), |(l, k)| (Some(l), k))
        } else {
            last.clone()
                .map_or((None, ResKind::Unknown), |(l, k)| (Some(l), k))
        };
        let start = shifted(iv.clock, iv.start, shift);
        let end = shifted(iv.clock, iv.end, shift);
        let (start_text, start_day, start_nanos) = format_time(iv.clock, start);
        let (end_text, end_day, end_nanos) = format_time(iv.clock, end);
        let gap = Gap {
            kind,
            cause,
            detail,
            file: input.map_or_else(String::new, |i| i.name.clone()),
            line: iv.line,
            before_line: iv.before_line,
            pid: iv.pid,
            clock: iv.clock,
            start: start_text,
            end: end_text,
            seconds: (iv.end - iv.start) as f64 / 1e9,
            start_day,
            start_nanos,
            end_day,
            end_nanos,
            inside_call: iv.inside_call,
            includes_call_time: !iv.exact,
            timer_signals: iv.timers,
            call,
            resource: res,
            resource_kind: res_kind,
            resources: resources
                .into_iter()
                .filter(|(_, k)| !matches!(k, ResKind::Other))
                .map(|(l, _)| l)
                .collect(),
            before: iv.before.as_ref().map(|b| lossless_text(b).into_owned()),
            after: iv.after.as_ref().map(|b| lossless_text(b).into_owned()),
        };
        (gap, missing)
    }
}

/// A file or socket name for a report; a name that holds a secret (a hash written
/// into a file name) is not shown.
fn label_text(label: &[u8]) -> String {
    if secret_in(label).is_some() {
        return format!("<redacted: name of {} bytes>", label.len());
    }
    lossless_text(label).into_owned()
}

/// Same thread, same moment: the same gap (the next call's start) or the same slow
/// call (its start).
fn dedupe_key(g: &Gap) -> (Clock, u32, bool, i64, i64) {
    if g.inside_call {
        (g.clock, g.pid, true, g.start_day, g.start_nanos)
    } else {
        (g.clock, g.pid, false, g.end_day, g.end_nanos)
    }
}

fn shifted(clock: Clock, t: i64, shift: i64) -> i64 {
    match clock {
        Clock::TimeOfDay => t + shift * DAY_NS,
        _ => t,
    }
}

/// Text, day and nanos of a time on `clock`.
fn format_time(clock: Clock, t: i64) -> (String, i64, i64) {
    match clock {
        Clock::Unix => {
            let secs = t.div_euclid(NS);
            let micros = t.rem_euclid(NS) / 1000;
            let days = secs.div_euclid(86_400);
            let sod = secs.rem_euclid(86_400);
            let (y, m, d) = civil_from_days(days);
            let text = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
                sod / 3600,
                sod / 60 % 60,
                sod % 60
            );
            (text, 0, t)
        }
        Clock::TimeOfDay => {
            let day = t.div_euclid(DAY_NS);
            let ns = t.rem_euclid(DAY_NS);
            let secs = ns / NS;
            let micros = ns % NS / 1000;
            let mut text = format!(
                "{:02}:{:02}:{:02}.{micros:06}",
                secs / 3600,
                secs / 60 % 60,
                secs % 60
            );
            if day != 0 {
                text.push_str(&format!(" +{day}d"));
            }
            (text, day, ns)
        }
        Clock::Relative => {
            let text = format!("+{}.{:06}", t.div_euclid(NS), t.rem_euclid(NS) / 1000);
            (text, 0, t)
        }
    }
}

fn same_res(a: &RawRes, b: &RawRes) -> bool {
    match (&a.label, &b.label) {
        (Some(x), Some(y)) => x == y,
        (None, None) => a.inherited == b.inherited,
        _ => false,
    }
}

/// Distinct resources of `slots` (newest first), at most `max`.
fn collect_resources<'a>(slots: impl Iterator<Item = &'a CtxSlot>, max: usize) -> Vec<RawRes> {
    let mut out: Vec<RawRes> = Vec::new();
    for s in slots {
        for r in s.resources() {
            let raw = r.to_raw();
            if !out.iter().any(|x| same_res(x, &raw)) {
                out.push(raw);
            }
            if out.len() >= max.max(1) {
                return out;
            }
        }
    }
    out
}

// ------------------------------------------------------------------ summaries

fn by_cause(gaps: &[Gap], blocked: &[Gap]) -> Vec<CauseRow> {
    let mut m: BTreeMap<(GapKind, Cause), Vec<f64>> = BTreeMap::new();
    for g in gaps.iter().chain(blocked) {
        m.entry((g.kind, g.cause)).or_default().push(g.seconds);
    }
    let mut rows: Vec<CauseRow> = m
        .into_iter()
        .map(|((kind, cause), s)| CauseRow {
            cause,
            kind,
            dist: Dist::of(s),
        })
        .collect();
    rows.sort_by(|a, b| {
        (a.kind, b.dist.total_seconds)
            .partial_cmp(&(b.kind, a.dist.total_seconds))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cause.cmp(&b.cause))
    });
    rows
}

fn by_resource(gaps: &[Gap], blocked: &[Gap]) -> Vec<ResourceRow> {
    let mut m: BTreeMap<(GapKind, String), (ResKind, Vec<f64>)> = BTreeMap::new();
    for g in gaps.iter().chain(blocked) {
        let key = g
            .resource
            .as_deref()
            .map_or_else(|| "(none)".to_string(), normalize_resource);
        let e = m
            .entry((g.kind, key))
            .or_insert_with(|| (g.resource_kind, Vec::new()));
        e.1.push(g.seconds);
    }
    let mut rows: Vec<ResourceRow> = m
        .into_iter()
        .map(|((kind, resource), (rk, s))| ResourceRow {
            resource,
            resource_kind: rk,
            kind,
            dist: Dist::of(s),
        })
        .collect();
    rows.sort_by(|a, b| {
        a.kind
            .cmp(&b.kind)
            .then(b.dist.total_seconds.total_cmp(&a.dist.total_seconds))
            .then(a.resource.cmp(&b.resource))
    });
    rows
}

fn by_pid(gaps: &[Gap], blocked: &[Gap]) -> Vec<PidRow> {
    type PerPid = (Vec<f64>, Vec<f64>, BTreeMap<&'static str, u64>);
    let mut m: BTreeMap<u32, PerPid> = BTreeMap::new();
    for g in gaps {
        let e = m.entry(g.pid).or_default();
        e.0.push(g.seconds);
        *e.2.entry(g.cause.as_str()).or_insert(0) += 1;
    }
    for g in blocked {
        m.entry(g.pid).or_default().1.push(g.seconds);
    }
    let mut rows: Vec<PidRow> = m
        .into_iter()
        .map(|(pid, (g, b, causes))| PidRow {
            pid,
            gaps: Dist::of(g),
            blocked: Dist::of(b),
            causes,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.gaps
            .total_seconds
            .total_cmp(&a.gaps.total_seconds)
            .then(a.pid.cmp(&b.pid))
    });
    rows
}

/// Group TCP/UDP peers regardless of their ephemeral port (≥ 32768 becomes `*`).
fn normalize_resource(label: &str) -> String {
    let is_inet = ["TCP", "UDP"].iter().any(|p| label.starts_with(p));
    if !is_inet {
        return label.to_string();
    }
    let mut out = String::with_capacity(label.len());
    let mut rest = label;
    while let Some(i) = rest.find(':') {
        let (head, tail) = rest.split_at(i + 1);
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let after = tail.get(digits..).unwrap_or_default();
        let port: Option<u32> = tail.get(..digits).and_then(|d| d.parse().ok());
        let ends_port = after.starts_with(']') || after.starts_with('-') || after.starts_with(',');
        match port {
            Some(p) if ends_port && p >= 32768 => out.push('*'),
            _ => out.push_str(tail.get(..digits).unwrap_or_default()),
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// An authentication file or socket.
fn is_auth(label: &str, kind: ResKind) -> bool {
    let base = label.rsplit('/').next().unwrap_or(label);
    let file = base.starts_with("htpasswd")
        || base.ends_with(".htpasswd")
        || base.ends_with(".users")
        || base.starts_with("htdigest")
        || base.ends_with(".htdigest")
        || label == "/etc/shadow"
        || label == "/etc/gshadow"
        || label.starts_with("/etc/pam.d/")
        || (base.starts_with("pam_") && base.ends_with(".so"));
    let socket = label.contains("/sss/pipes")
        || label.contains("ldapi")
        || label.contains("nslcd")
        || label.contains("slapd")
        || (kind == ResKind::Socket
            && [":389]", ":636]", ":389-", ":636-", ":389,", ":636,"]
                .iter()
                .any(|p| label.contains(p)));
    file || socket
}

// ------------------------------------------------------------------ syscalls

#[derive(Clone, Copy)]
enum Role {
    Path(usize),
    DirPath(usize, usize),
    Fds(&'static [usize]),
    None,
}

fn role(name: &[u8]) -> Role {
    match name {
        b"open" | b"creat" | b"stat" | b"lstat" | b"stat64" | b"lstat64" | b"access"
        | b"readlink" | b"truncate" | b"unlink" | b"mkdir" | b"rmdir" | b"chdir" | b"chmod"
        | b"chown" | b"lchown" | b"statfs" | b"execve" | b"utime" | b"utimes" | b"mknod"
        | b"getxattr" | b"lgetxattr" | b"setxattr" | b"listxattr" | b"rename" | b"link"
        | b"chroot" | b"uselib" => Role::Path(0),
        b"symlink" => Role::Path(1),
        b"openat" | b"openat2" | b"newfstatat" | b"fstatat64" | b"statx" | b"faccessat"
        | b"faccessat2" | b"readlinkat" | b"unlinkat" | b"mkdirat" | b"fchmodat" | b"fchownat"
        | b"utimensat" | b"execveat" | b"mknodat" | b"renameat" | b"renameat2" | b"linkat"
        | b"inotify_add_watch" | b"name_to_handle_at" => Role::DirPath(0, 1),
        b"mmap" | b"mmap2" => Role::Fds(&[4]),
        b"sendfile" | b"sendfile64" | b"tee" => Role::Fds(&[0, 1]),
        b"splice" | b"copy_file_range" => Role::Fds(&[0, 2]),
        b"epoll_ctl" => Role::Fds(&[2]),
        b"read" | b"write" | b"pread64" | b"pwrite64" | b"readv" | b"writev" | b"preadv"
        | b"pwritev" | b"preadv2" | b"pwritev2" | b"recvfrom" | b"recvmsg" | b"recvmmsg"
        | b"recv" | b"sendto" | b"sendmsg" | b"sendmmsg" | b"send" | b"close" | b"fstat"
        | b"fstat64" | b"fsync" | b"fdatasync" | b"lseek" | b"_llseek" | b"ioctl" | b"fcntl"
        | b"fcntl64" | b"getdents" | b"getdents64" | b"accept" | b"accept4" | b"connect"
        | b"bind" | b"listen" | b"shutdown" | b"setsockopt" | b"getsockopt" | b"getsockname"
        | b"getpeername" | b"flock" | b"ftruncate" | b"fchmod" | b"fchown" | b"fadvise64"
        | b"fallocate" | b"sync_file_range" | b"fstatfs" | b"fchdir" | b"fgetxattr"
        | b"fsetxattr" | b"flistxattr" | b"dup" | b"dup2" | b"dup3" | b"syncfs" | b"readahead"
        | b"epoll_wait" | b"epoll_pwait" | b"epoll_pwait2" => Role::Fds(&[0]),
        _ => Role::None,
    }
}

fn call_class(name: &[u8], call_args: &[u8]) -> CallClass {
    match name {
        b"accept" | b"accept4" | b"poll" | b"ppoll" | b"select" | b"_newselect" | b"pselect6"
        | b"epoll_wait" | b"epoll_pwait" | b"epoll_pwait2" | b"nanosleep" | b"clock_nanosleep"
        | b"wait4" | b"waitid" | b"waitpid" | b"futex" | b"futex_waitv" | b"pause"
        | b"rt_sigsuspend" | b"sigsuspend" | b"rt_sigtimedwait" | b"restart_syscall"
        | b"msgrcv" | b"semop" | b"semtimedop" | b"io_getevents" | b"io_pgetevents"
        | b"io_uring_enter" | b"flock" | b"connect" | b"mq_timedreceive" | b"sleep" => {
            CallClass::Wait
        }
        b"fcntl" | b"fcntl64" if contains(call_args, b"SETLKW") => CallClass::Wait,
        b"read" | b"write" | b"pread64" | b"pwrite64" | b"readv" | b"writev" | b"preadv"
        | b"pwritev" | b"preadv2" | b"pwritev2" | b"recvfrom" | b"recvmsg" | b"recvmmsg"
        | b"recv" | b"sendto" | b"sendmsg" | b"sendmmsg" | b"send" | b"sendfile"
        | b"sendfile64" | b"splice" | b"tee" => CallClass::Data,
        b"fsync" | b"fdatasync" | b"sync" | b"syncfs" | b"msync" | b"sync_file_range" | b"open"
        | b"openat" | b"openat2" | b"creat" | b"stat" | b"lstat" | b"fstat" | b"newfstatat"
        | b"statx" | b"access" | b"faccessat" | b"faccessat2" | b"readlink" | b"readlinkat"
        | b"unlink" | b"unlinkat" | b"rename" | b"renameat" | b"renameat2" | b"mkdir"
        | b"mkdirat" | b"rmdir" | b"close" | b"ftruncate" | b"truncate" | b"fallocate"
        | b"getdents" | b"getdents64" | b"statfs" | b"fstatfs" | b"chdir" | b"utimensat"
        | b"link" | b"linkat" | b"symlink" | b"chmod" | b"fchmod" | b"fchmodat" | b"chown"
        | b"fchown" | b"fchownat" | b"copy_file_range" | b"readahead" | b"fadvise64" | b"lseek" => {
            CallClass::Io
        }
        b"execve" | b"execveat" => CallClass::Exec,
        _ => CallClass::Other,
    }
}

/// A label for a `connect` address without `-y`: `UNIX:[/path]`, `TCP:[->1.2.3.4:389]`.
fn sockaddr_label(arg: &[u8]) -> Option<Vec<u8>> {
    let body = inner(arg)?;
    let mut path = None;
    let mut port = None;
    let mut addr = None;
    let mut v6 = false;
    for item in args(body) {
        if let Some(v) = item.strip_prefix(b"sun_path=") {
            let v = v.strip_prefix(b"@").unwrap_or(v);
            path = quoted(v).map(|(p, _)| p.into_owned());
        } else if let Some(v) = item
            .strip_prefix(b"sin_port=htons(")
            .or_else(|| item.strip_prefix(b"sin6_port=htons("))
        {
            port = v.strip_suffix(b")").map(<[u8]>::to_vec);
        } else if let Some(v) = item.strip_prefix(b"sin_addr=inet_addr(") {
            addr = v
                .strip_suffix(b")")
                .and_then(quoted)
                .map(|(a, _)| a.into_owned());
        } else if let Some(v) = item.strip_prefix(b"inet_pton(AF_INET6, ") {
            v6 = true;
            addr = quoted(v).map(|(a, _)| a.into_owned());
        } else if item.starts_with(b"sa_family=AF_INET6") {
            v6 = true;
        }
    }
    if let Some(p) = path {
        let mut out = b"UNIX:[".to_vec();
        out.extend_from_slice(&p);
        out.push(b']');
        return Some(out);
    }
    let port = port?;
    let mut out = if v6 {
        b"TCPv6:[->[".to_vec()
    } else {
        b"TCP:[->".to_vec()
    };
    out.extend_from_slice(addr.as_deref().unwrap_or(b"?"));
    if v6 {
        out.push(b']');
    }
    out.push(b':');
    out.extend_from_slice(&port);
    out.push(b']');
    Some(out)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    find(hay, needle).is_some()
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    let mut from = 0;
    while let Some(p) = hay.get(from..)?.iter().position(|&b| b == first) {
        let at = from + p;
        if hay.get(at + 1..at + needle.len()) == Some(rest) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

fn find_ci(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len().max(1))
        .any(|w| w.eq_ignore_ascii_case(needle))
}

// ------------------------------------------------------------------ text and secrets

enum Secret {
    /// A hash prefix; whether it looks like a real hash.
    Hash(HashInfo, bool),
    Authorization,
}

/// The first password-hash prefix in `s`, and whether what follows looks like a hash
/// (salt characters after it) rather than, say, `$1$2` in a shell script. Redaction
/// goes by the prefix alone; the `auth` cause needs the plausible kind.
fn find_hash(s: &[u8]) -> Option<(HashInfo, bool)> {
    let crypt = |t: &[u8]| {
        t.iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'.' || b == b'/')
            .count()
            >= 3
    };
    let base64 = |t: &[u8]| {
        t.iter()
            .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
            .count()
            >= 3
    };
    let num = |t: &[u8]| -> Option<u32> {
        let d = t.iter().take_while(|b| b.is_ascii_digit()).count();
        std::str::from_utf8(t.get(..d)?).ok()?.parse().ok()
    };
    let hash = |scheme, param| HashInfo { scheme, param };
    let mut i = 0;
    while let Some(p) = s
        .get(i..)
        .and_then(|t| t.iter().position(|&b| b == b'$' || b == b'{'))
    {
        let at = i + p;
        let rest = s.get(at + 1..).unwrap_or_default();
        let after = |n: usize| rest.get(n..).unwrap_or_default();
        // SHA-crypt: `$5$[rounds=N$]salt$hash`.
        let sha_crypt = |scheme| {
            let t = after(2);
            match t.strip_prefix(b"rounds=") {
                Some(r) => {
                    let d = r.iter().take_while(|b| b.is_ascii_digit()).count();
                    let tail = r.get(d + 1..).unwrap_or_default();
                    (hash(scheme, num(r)), r.get(d) == Some(&b'$') && crypt(tail))
                }
                None => (hash(scheme, None), crypt(t)),
            }
        };
        let found = if s.get(at) == Some(&b'{') {
            if rest.starts_with(b"SHA}") {
                Some((hash(Scheme::Sha1, None), base64(after(4))))
            } else if rest.starts_with(b"SSHA}") {
                Some((hash(Scheme::Sha1, None), base64(after(5))))
            } else {
                None
            }
        } else if [&b"2y$"[..], b"2a$", b"2b$", b"2x$"]
            .iter()
            .any(|p| rest.starts_with(p))
        {
            let cost = rest
                .get(3..)
                .filter(|t| t.get(2) == Some(&b'$'))
                .and_then(num);
            Some((hash(Scheme::Bcrypt, cost), cost.is_some()))
        } else if rest.starts_with(b"apr1$") {
            Some((hash(Scheme::Apr1, None), crypt(after(5))))
        } else if rest.starts_with(b"5$") {
            Some(sha_crypt(Scheme::Sha256Crypt))
        } else if rest.starts_with(b"6$") {
            Some(sha_crypt(Scheme::Sha512Crypt))
        } else if rest.starts_with(b"y$") {
            Some((hash(Scheme::Yescrypt, None), crypt(after(2))))
        } else if rest.starts_with(b"gy$") {
            Some((hash(Scheme::Yescrypt, None), crypt(after(3))))
        } else if rest.starts_with(b"argon2") {
            let variant = [&b"argon2id$"[..], b"argon2i$", b"argon2d$"]
                .iter()
                .any(|v| rest.starts_with(v));
            Some((hash(Scheme::Argon2, None), variant))
        } else if rest.starts_with(b"1$") {
            Some((hash(Scheme::Md5Crypt, None), crypt(after(2))))
        } else {
            None
        };
        if found.is_some() {
            return found;
        }
        i = at + 1;
    }
    None
}

/// Whether a string (contents, decoded) is a secret.
fn secret_in(s: &[u8]) -> Option<Secret> {
    if let Some((h, plausible)) = find_hash(s) {
        return Some(Secret::Hash(h, plausible));
    }
    if find_ci(s, b"authorization:") {
        return Some(Secret::Authorization);
    }
    None
}

/// Decode strace's C escapes into `out` (cleared first).
fn unescape_into(raw: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(&e) = raw.get(i) else {
            out.push(b'\\');
            break;
        };
        i += 1;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'v' => out.push(0x0b),
            b'f' => out.push(0x0c),
            b'x' => {
                let hex = |k: usize| raw.get(k).and_then(|&h| (h as char).to_digit(16));
                match (hex(i), hex(i + 1)) {
                    (Some(a), Some(b)) => {
                        out.push((a * 16 + b) as u8);
                        i += 2;
                    }
                    _ => out.push(b'x'),
                }
            }
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match raw.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            other => out.push(other),
        }
    }
}

/// The first plausible hash in the quoted strings of `src`: what [`redact_into`]
/// returns, without copying or decoding the strings that cannot hold one.
fn hash_in(src: &[u8], scratch: &mut Vec<u8>) -> Option<HashInfo> {
    // `contains` on bytes is a word-at-a-time search: most calls stop here.
    if !(src.contains(&b'$') || src.contains(&b'{') || src.contains(&b'\\')) {
        return None;
    }
    if !may_hold_hash(src) {
        return None;
    }
    let mut i = 0;
    // Strings as `redact_into` splits them: from a quote to the next unescaped one.
    while let Some(p) = src.get(i..).and_then(|t| t.iter().position(|&c| c == b'"')) {
        i += p;
        let mut j = i + 1;
        let mut has_escape = false;
        // Whether the decoded string may hold a `$` or `{` (a hash prefix needs one).
        let mut maybe = false;
        while let Some(&c) = src.get(j) {
            match c {
                b'\\' => {
                    has_escape = true;
                    if matches!(src.get(j + 1), Some(b'x' | b'0'..=b'7' | b'$' | b'{')) {
                        maybe = true;
                    }
                    j += 2;
                }
                b'"' => break,
                b'$' | b'{' => {
                    maybe = true;
                    j += 1;
                }
                _ => j += 1,
            }
        }
        if maybe {
            let body = src.get(i + 1..j.min(src.len())).unwrap_or_default();
            let decoded: &[u8] = if has_escape {
                unescape_into(body, scratch);
                scratch
            } else {
                body
            };
            if let Some((h, true)) = find_hash(decoded) {
                return Some(h);
            }
        }
        i = j + 1;
    }
    None
}

/// Whether decoding the strings of `src` could give a hash prefix: a `$` before one
/// of `2a56yg1` (`$2y$`, `$apr1$`, `$5$`, `$6$`, `$y$`, `$gy$`, `$argon2`, `$1$`) or a
/// `{` before `S` (`{SHA}`, `{SSHA}`), where the byte after may come from an escape;
/// or an escape that decodes to `$` or `{`. Every `\` is looked at, paired or not, so
/// this never misses one that [`unescape_into`] would decode: binary data, dense with
/// escapes and stray `$`, mostly passes without being decoded.
fn may_hold_hash(src: &[u8]) -> bool {
    // The byte after a `$` or `{` at `k - 1`, as decoded (a `\` there starts an escape).
    let next = |k: usize| match src.get(k) {
        Some(b'\\') => Some(escape_value(src, k)),
        b => b.copied(),
    };
    let mut k = 0;
    while let Some(p) = src
        .get(k..)
        .and_then(|t| t.iter().position(|&b| matches!(b, b'$' | b'{' | b'\\')))
    {
        let Some(&b) = src.get(k + p) else { break };
        k += p + 1;
        let found = match b {
            b'$' => matches!(
                next(k),
                Some(b'2' | b'a' | b'5' | b'6' | b'y' | b'g' | b'1')
            ),
            b'{' => next(k) == Some(b'S'),
            // Only these can start an escape of `$` (`\44`, `\044`, `\444`, `\x24`) or
            // `{` (`\173`, `\573`, `\x7b`); most escapes of binary data stop here.
            _ => {
                matches!(
                    src.get(k),
                    Some(b'$' | b'{' | b'x' | b'0' | b'1' | b'4' | b'5')
                ) && matches!(escape_value(src, k - 1), b'$' | b'{')
            }
        };
        if found {
            return true;
        }
    }
    false
}

/// The byte the escape at `src[at]` (a `\`) decodes to, as in [`unescape_into`].
fn escape_value(src: &[u8], at: usize) -> u8 {
    let Some(&e) = src.get(at + 1) else {
        return b'\\';
    };
    match e {
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'v' => 0x0b,
        b'f' => 0x0c,
        b'x' => {
            let hex = |k: usize| src.get(k).and_then(|&h| (h as char).to_digit(16));
            match (hex(at + 2), hex(at + 3)) {
                (Some(a), Some(b)) => (a * 16 + b) as u8,
                _ => b'x',
            }
        }
        b'0'..=b'7' => {
            let mut v = u32::from(e - b'0');
            for off in 2..4 {
                match src.get(at + off) {
                    Some(&d @ b'0'..=b'7') => v = v * 8 + u32::from(d - b'0'),
                    _ => break,
                }
            }
            (v & 0xff) as u8
        }
        other => other,
    }
}

/// Copy `src` into `out` up to about `limit` bytes of `out`, with every quoted string
/// that holds a secret replaced by a placeholder. Scans every string of `src` (also
/// past the limit) and returns the first hash seen.
fn redact_into(
    src: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    scratch: &mut Vec<u8>,
) -> Option<HashInfo> {
    let mut hash = None;
    let mut i = 0;
    let mut cut = false;
    while i < src.len() {
        let Some(&b) = src.get(i) else { break };
        if b != b'"' {
            if out.len() < limit {
                out.push(b);
                i += 1;
            } else {
                cut = true;
                // Nothing more is shown: jump to the next string to scan it.
                match src.get(i..).and_then(|t| t.iter().position(|&c| c == b'"')) {
                    Some(p) => i += p,
                    None => break,
                }
            }
            continue;
        }
        // A quoted string: find its end, skipping escapes.
        let mut j = i + 1;
        let mut has_escape = false;
        while let Some(&c) = src.get(j) {
            if c == b'\\' {
                has_escape = true;
                j += 2;
                continue;
            }
            if c == b'"' {
                break;
            }
            j += 1;
        }
        let body = src.get(i + 1..j.min(src.len())).unwrap_or_default();
        let decoded: &[u8] = if has_escape {
            unescape_into(body, scratch);
            scratch
        } else {
            body
        };
        let secret = if decoded.contains(&b'$') || decoded.contains(&b'{') || decoded.len() >= 14 {
            secret_in(decoded)
        } else {
            None
        };
        if let (None, Some(Secret::Hash(h, true))) = (hash, &secret) {
            hash = Some(*h);
        }
        if out.len() < limit {
            match secret {
                Some(s) => {
                    let what = match s {
                        Secret::Hash(h, _) => h.to_string(),
                        Secret::Authorization => "Authorization header".to_string(),
                    };
                    out.extend_from_slice(
                        format!("\"<redacted: {what}, {} bytes>\"", decoded.len()).as_bytes(),
                    );
                }
                None => {
                    let whole = src.get(i..(j + 1).min(src.len())).unwrap_or_default();
                    let room = limit.saturating_sub(out.len());
                    if whole.len() <= room {
                        out.extend_from_slice(whole);
                    } else {
                        // Cut on a character, not inside an escape.
                        let k = escape_boundary(whole, room);
                        out.extend_from_slice(whole.get(..k).unwrap_or_default());
                        out.extend_from_slice(b"\"");
                        cut = true;
                    }
                }
            }
        } else {
            cut = true;
        }
        i = j + 1;
    }
    if cut {
        out.extend_from_slice(b"...");
    }
    hash
}

/// The largest prefix length of a quoted string (opening quote included) not
/// longer than `max` that does not end inside an escape (`\n`, `\312`, `\x41`).
fn escape_boundary(s: &[u8], max: usize) -> usize {
    let mut i = 1;
    let mut last = 1.min(max);
    while i < s.len() {
        let len = match (s.get(i), s.get(i + 1)) {
            (Some(b'\\'), Some(b'0'..=b'7')) => {
                2 + s
                    .get(i + 2..)
                    .unwrap_or_default()
                    .iter()
                    .take(2)
                    .take_while(|c| (b'0'..=b'7').contains(*c))
                    .count()
            }
            (Some(b'\\'), Some(b'x')) => 4,
            (Some(b'\\'), _) => 2,
            _ => 1,
        };
        if i + len > max {
            break;
        }
        i += len;
        last = i;
    }
    last
}

/// `name(args) = ret <dur>` (or `name(args <unfinished ...>`), shortened and redacted.
fn render_call(
    out: &mut Vec<u8>,
    name: &[u8],
    call_args: &[u8],
    ret: Option<&[u8]>,
    dur: Option<u64>,
    unfinished: bool,
    scratch: &mut Vec<u8>,
) -> Option<HashInfo> {
    out.clear();
    out.extend_from_slice(name);
    out.push(b'(');
    let limit = TEXT_LIMIT.saturating_sub(24).max(out.len() + 16);
    let mut hash = redact_into(call_args, out, limit, scratch);
    if unfinished {
        out.extend_from_slice(b" <unfinished ...>");
        return hash;
    }
    out.extend_from_slice(b") = ");
    if let Some(r) = ret {
        let limit = out.len() + 40;
        let h = redact_into(r, out, limit, scratch);
        hash = hash.or(h);
    }
    if let Some(d) = dur {
        // Into the reused buffer: no allocation per line.
        let _ = write!(
            out,
            " <{}.{:06}>",
            d / 1_000_000_000,
            d % 1_000_000_000 / 1000
        );
    }
    hash
}

fn render_signal(out: &mut Vec<u8>, name: &[u8], info: &[u8], scratch: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(b"--- ");
    out.extend_from_slice(name);
    out.push(b' ');
    let limit = TEXT_LIMIT;
    redact_into(info, out, limit, scratch);
    out.extend_from_slice(b" ---");
}

fn render_exit(out: &mut Vec<u8>, e: &Exit<'_>) {
    out.clear();
    let text = match *e {
        Exit::Exited(n) => format!("+++ exited with {n} +++"),
        Exit::Killed {
            signal,
            core_dumped,
        } => format!(
            "+++ killed by {}{} +++",
            lossless_text(signal),
            if core_dumped { " (core dumped)" } else { "" }
        ),
        Exit::Superseded(p) => format!("+++ superseded by execve in pid {p} +++"),
    };
    out.extend_from_slice(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(inputs: &[(&str, Option<u32>, &str)], opts: GapOptions) -> GapsReport {
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

    #[test]
    fn pid_from_names() {
        assert_eq!(pid_from_file_name("trace.12085"), Some(12085));
        assert_eq!(pid_from_file_name("/tmp/x/trace.12085.gz"), Some(12085));
        assert_eq!(pid_from_file_name("trace.12085.zst"), Some(12085));
        assert_eq!(pid_from_file_name("trace.log"), None);
        assert_eq!(pid_from_file_name("12085"), None);
        assert_eq!(pid_from_file_name("trace."), None);
    }

    #[test]
    fn hashes_and_details() {
        let h = |s: &[u8]| find_hash(s).map(|(h, plausible)| (h.to_string(), plausible));
        assert_eq!(
            h(b"alice:$2y$12$abcdefghij"),
            Some(("bcrypt cost 12".into(), true))
        );
        assert_eq!(h(b"bob:$apr1$xyz$abc"), Some(("apr1 (MD5)".into(), true)));
        assert_eq!(h(b"c:{SHA}abc="), Some(("{SHA} (SHA-1)".into(), true)));
        assert_eq!(
            h(b"d:$6$rounds=5000$salt$h"),
            Some(("SHA-512 crypt rounds 5000".into(), true))
        );
        assert_eq!(h(b"e:$y$j9T$x"), Some(("yescrypt".into(), true)));
        assert_eq!(h(b"$argon2id$v=19$m=65536"), Some(("argon2".into(), true)));
        assert_eq!(h(b"f:$1$salt$h"), Some(("MD5 crypt".into(), true)));
        assert_eq!(h(b"g:$5$saltsalt$h"), Some(("SHA-256 crypt".into(), true)));
        // Prefixes alone: redacted, but not evidence of password checking.
        assert_eq!(h(b"echo $1$2"), Some(("MD5 crypt".into(), false)));
        assert_eq!(h(b"{SHA}"), Some(("{SHA} (SHA-1)".into(), false)));
        assert_eq!(h(b"price: $5 or {x}"), None);
    }

    #[test]
    fn redaction_replaces_whole_strings_and_scans_past_the_limit() {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let src = br#"15, "alice:$2y$12$abcdefghijklmnopqrstuv"..., 4096"#;
        let h = redact_into(src, &mut out, 200, &mut scratch);
        assert_eq!(h.unwrap().param, Some(12));
        let text = String::from_utf8(out.clone()).unwrap();
        assert_eq!(
            text,
            r#"15, "<redacted: bcrypt cost 12, 35 bytes>"..., 4096"#
        );
        // Hex-escaped (-xx) hashes are found too.
        out.clear();
        let src = br#""\x24\x32\x79\x24\x31\x30\x24\x61\x62""#;
        assert!(redact_into(src, &mut out, 200, &mut scratch).is_some());
        assert!(!String::from_utf8_lossy(&out).contains("x24"));
        // Authorization headers.
        out.clear();
        let src = br#"8, "GET / HTTP/1.1\r\nauthorization: Basic YWxpY2U6c2VjcmV0\r\n", 60"#;
        redact_into(src, &mut out, 200, &mut scratch);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("<redacted: Authorization header"), "{text}");
        assert!(!text.contains("YWxp"));
        // Past the limit: not shown, still scanned.
        out.clear();
        let mut long = b"\"".to_vec();
        long.extend(std::iter::repeat_n(b'a', 300));
        long.extend_from_slice(b"\", \"x:$2b$10$abc\"");
        let h = redact_into(&long, &mut out, 50, &mut scratch);
        assert_eq!(h.unwrap().param, Some(10));
        assert!(out.len() < 60);
        assert!(out.ends_with(b"..."));
    }

    /// `hash_in` (every call) must find what `redact_into` (calls shown) would.
    #[test]
    fn hash_in_agrees_with_redact_into() {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let fixed: [&[u8]; 12] = [
            br#"15, "alice:$2y$12$abcdefghijklmnopqrstuv"..., 4096"#,
            br#""\x24\x32\x79\x24\x31\x30\x24\x61\x62""#,
            br#""\44\62y$10$abc", "$1$2""#,
            br#""\0442y$10$abcd""#,
            br#""\4442y$10$abcd""#,
            br#""$\62y$10$abcd""#,
            br#""\$2y$10$abcd""#,
            br#""\\$2y$10$abcd""#,
            br#""x{SHA}abcd", "{\123SHA}abc""#,
            br#"[{iov_base="\27\3$\3\1{\32_", iov_len=5}], "$6$rounds=5000$abcd$""#,
            br#""\x7B\x53HA}abcd""#,
            br#""unterminated $5$abcdef"#,
        ];
        for src in fixed {
            out.clear();
            let want = redact_into(src, &mut out, 200, &mut scratch);
            assert_eq!(
                hash_in(src, &mut scratch),
                want,
                "{}",
                String::from_utf8_lossy(src)
            );
        }
        // Random mixes of the pieces hashes, escapes and strings are made of.
        let pieces: Vec<&[u8]> = br#""|\|$|{|}|2y$|12$|abcdefghij|apr1$|5$|6$|y$|gy$|argon2id$|1$|SHA}|SSHA}|\x24|\44|\173|\x7b|\0|\n|, |\x32|\62|\123|\x"#
            .split(|&b| b == b'|')
            .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut found = 0;
        for _ in 0..20_000 {
            let mut src = Vec::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = (seed % 16) as usize;
            let mut r = seed;
            for _ in 0..n {
                r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                src.extend_from_slice(pieces[(r >> 33) as usize % pieces.len()]);
            }
            out.clear();
            let want = redact_into(&src, &mut out, 200, &mut scratch);
            found += usize::from(want.is_some());
            assert_eq!(
                hash_in(&src, &mut scratch),
                want,
                "{}",
                String::from_utf8_lossy(&src)
            );
        }
        assert!(found > 100, "{found}");
    }

    #[test]
    fn cuts_strings_between_escapes() {
        let s = br#""ab\305\256\ncd""#;
        assert_eq!(escape_boundary(s, 4), 3);
        assert_eq!(escape_boundary(s, 5), 3, "not inside \\305");
        assert_eq!(escape_boundary(s, 7), 7);
        assert_eq!(escape_boundary(s, 12), 11);
        assert_eq!(escape_boundary(br#""\x41\x42""#, 6), 5);
        assert_eq!(escape_boundary(b"\"", 0), 0);
    }

    #[test]
    fn times_format() {
        assert_eq!(
            format_time(Clock::Unix, 1_795_296_993_226_906_123).0,
            "2026-11-21T21:36:33.226906Z"
        );
        let (t, d, n) = format_time(Clock::TimeOfDay, DAY_NS + 1_500_000_000);
        assert_eq!(
            (t.as_str(), d, n),
            ("00:00:01.500000 +1d", 1, 1_500_000_000)
        );
        assert_eq!(format_time(Clock::Relative, 2_000_001_000).0, "+2.000001");
    }

    #[test]
    fn normalizes_ephemeral_ports() {
        assert_eq!(
            normalize_resource("TCP:[127.0.0.1:8081->127.0.0.1:52428]"),
            "TCP:[127.0.0.1:8081->127.0.0.1:*]"
        );
        assert_eq!(
            normalize_resource("TCPv6:[[::1]:38139->[::1]:443]"),
            "TCPv6:[[::1]:*->[::1]:443]"
        );
        assert_eq!(normalize_resource("/etc/x:40000]"), "/etc/x:40000]");
    }

    #[test]
    fn auth_labels() {
        for l in [
            "/etc/apache2/htpasswd.users",
            "/srv/.htpasswd",
            "/etc/htdigest",
            "/etc/shadow",
            "/etc/pam.d/common-auth",
            "/lib/x86_64-linux-gnu/security/pam_unix.so",
            "UNIX:[/var/lib/sss/pipes/nss]",
        ] {
            assert!(is_auth(l, ResKind::of_label(l.as_bytes())), "{l}");
        }
        assert!(is_auth(
            "TCP:[10.0.0.1:40000->10.0.0.2:389]",
            ResKind::Socket
        ));
        assert!(!is_auth("/var/www/index.html", ResKind::File));
        assert!(!is_auth(
            "TCP:[10.0.0.1:443->10.0.0.2:50000]",
            ResKind::Socket
        ));
    }

    #[test]
    fn ring_keeps_the_newest() {
        let mut r = Ring::new(3);
        for k in 0..5u64 {
            let mut s = CtxSlot {
                line: k,
                ..CtxSlot::default()
            };
            r.push(&mut s);
        }
        let lines: Vec<u64> = r.iter().map(|s| s.line).collect();
        assert_eq!(lines, [4, 3, 2]);
    }

    #[test]
    fn sockaddr_labels() {
        assert_eq!(
            sockaddr_label(br#"{sa_family=AF_UNIX, sun_path="/var/lib/sss/pipes/nss"}"#).unwrap(),
            b"UNIX:[/var/lib/sss/pipes/nss]"
        );
        assert_eq!(
            sockaddr_label(
                br#"{sa_family=AF_INET, sin_port=htons(389), sin_addr=inet_addr("10.0.0.2")}"#
            )
            .unwrap(),
            b"TCP:[->10.0.0.2:389]"
        );
    }

    #[test]
    fn simple_cpu_gap_with_timer_noise() {
        let t = "\
1795296993.000000 getpid() = 7 <0.000001>
1795296993.050000 --- SIGPROF {si_signo=SIGPROF, si_code=SI_KERNEL} ---
1795296993.050010 rt_sigreturn({mask=[]}) = 7 <0.000002>
1795296993.100000 --- SIGPROF {si_signo=SIGPROF, si_code=SI_KERNEL} ---
1795296993.100010 rt_sigreturn({mask=[]}) = 7 <0.000002>
1795296993.300001 getppid() = 1 <0.000001>
";
        let r = run(&[("trace.7", Some(7), t)], GapOptions::default());
        assert_eq!(r.gaps.len(), 1, "{:#?}", r.gaps);
        let g = &r.gaps[0];
        assert_eq!(g.cause, Cause::Cpu);
        assert_eq!(g.timer_signals, 2);
        assert!((g.seconds - 0.3).abs() < 1e-6);
        assert_eq!(g.line, 6);
        assert_eq!(g.before_line, Some(1));
    }
}
