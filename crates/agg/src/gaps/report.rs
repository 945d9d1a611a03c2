//! The report: what `tlsgap gaps` finds, as typed values (the JSON contract).

#[allow(unused_imports)]
use super::*;

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
    pub(super) fn of(mut secs: Vec<f64>) -> Dist {
        secs.sort_by(f64::total_cmp);
        Dist {
            count: secs.len() as u64,
            // An empty f64 sum is -0.0: `+ 0.0` makes it the 0 a reader expects.
            total_seconds: secs.iter().sum::<f64>() + 0.0,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_distribution_sums_to_plus_zero() {
        let d = Dist::of(Vec::new());
        assert!(d.total_seconds == 0.0 && d.total_seconds.is_sign_positive());
        assert_eq!(serde_json::to_string(&d.total_seconds).unwrap(), "0.0");
    }
}
