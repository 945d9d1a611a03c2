//! Per-user authentication cost (`tlsgap auth`, and the report's auth section): the
//! htpasswd file, access-log requests and strace traces, joined and ranked.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tlsgap_agg::authjoin::{
    join, path_kind, unprefixed_thread, AuthGap, AuthReport, DateFn, Evidence, LogWrite, Predicted,
    Request, WriteScan, DEFAULT_PAGE_BUDGET_SECONDS, HEAD_MAX,
};
pub use tlsgap_agg::authjoin::{scan_log_writes, UserSlot};
use tlsgap_agg::gaps::{Cause, Clock};
use tlsgap_agg::LineStats;
use tlsgap_auth::{AuthFileReport, MeasureOptions};
use tlsgap_parser::format::Kind;
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
    /// Threads reading the traces (several at once: the same answer, see
    /// [`crate::gaps::GapsOptions::jobs`]); by default one per core, as
    /// [`crate::RunOptions`].
    pub jobs: usize,
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
            jobs: crate::default_jobs(),
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

    let mut turns = Vec::new();
    let mut trace_zone_assumed = None;
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
        let gap_opts = analyzer_options(args.min_gap_seconds, 0, args.window.as_ref())?;
        // One pass per trace feeds the analyzer and collects the workers' log writes
        // (standard input can be read only once); several traces at once with `jobs`.
        let (analyzer, read) =
            crate::gaps::read_traces(&names, gap_opts, args.jobs, notes_out, |i, n, a, own| {
                let date =
                    anchor.map(|(b, tz)| -> DateFn { Box::new(move |at| tz.instant(b, at)) });
                let mut scan = slot.map(|s| WriteScan::new(s, date, i));
                let mut writes = Vec::new();
                let read = feed(n, a, own, |hint, line| {
                    if let Some(scan) = scan.as_mut() {
                        scan.line(hint, line, &mut writes);
                    }
                });
                let (paths, turns) = scan.map(WriteScan::into_parts).unwrap_or_default();
                (read, writes, paths, turns)
            });
        let mut writes = Vec::new();
        let mut paths = Vec::new();
        let mut inputs = Vec::with_capacity(read.len());
        for (input, w, p, t) in read {
            inputs.push(input);
            writes.extend(w);
            paths.extend(p);
            turns.extend(t);
        }
        let writes = keep_given_log(writes, paths, &log_names);
        failed |= inputs.iter().any(|i| i.error.is_some());
        let report = analyzer.finish();
        if args.window.is_some() {
            crate::gaps::note_undated_traces(&report, notes_out);
        }
        let mut no_date = false;
        let time_of_day = report
            .gaps
            .iter()
            .any(|g| g.cause == Cause::Auth && g.clock == Clock::TimeOfDay);
        if trace_tz.is_none() && time_of_day {
            trace_zone_assumed = first.map(|(_, log_offset)| log_offset);
        }
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
                let after_read = matches!(
                    g.call.as_deref(),
                    Some("read" | "pread64" | "readv" | "preadv" | "preadv2" | "close" | "mmap")
                );
                AuthGap {
                    pid,
                    start,
                    end,
                    epoch_start,
                    epoch_end,
                    seconds: g.seconds,
                    detail: g.detail.clone(),
                    after_read,
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
        turns,
        trace_zone_assumed,
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
