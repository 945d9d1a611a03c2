//! Per-user authentication cost (`tlsgap auth`, and the report's auth section): the
//! htpasswd file, access-log requests and strace traces, joined and ranked.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tlsgap_agg::authjoin::{
    join, path_kind, AuthGap, AuthReport, Evidence, LogWrite, Predicted, Request,
};
use tlsgap_agg::gaps::{Cause, Clock, GapAnalyzer};
use tlsgap_agg::LineStats;
use tlsgap_auth::{AuthFileReport, MeasureOptions};
use tlsgap_parser::strace::{self, Body, Stamp};
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
    pub traces: Vec<String>,
    /// strace's UTC offset for `-t`/`-tt` traces (`+02:00`, `-0500`, `UTC`); default:
    /// the access log's.
    pub trace_tz: Option<String>,
    /// Flag users whose verification takes longer than this (seconds per request).
    pub threshold: f64,
    /// Shortest trace gap considered (seconds).
    pub min_gap_seconds: f64,
}

impl Default for AuthOptions {
    fn default() -> AuthOptions {
        AuthOptions {
            htpasswd: None,
            traces: Vec::new(),
            trace_tz: None,
            threshold: 0.05,
            min_gap_seconds: 0.01,
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

    fn run(&self, block: &Block) -> AuthPartial {
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
}

impl RequestFields {
    /// Where the fields are in `f`.
    pub fn new(f: &Format) -> RequestFields {
        RequestFields {
            user: f.role(Role::User),
            status: f.role(Role::Status),
            pid: f.role(Role::Pid),
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
            user,
            status: self
                .status
                .and_then(|i| rec.int(i))
                .and_then(|s| u16::try_from(s).ok()),
            begin_us: time.map(|t| t.unix_micros()),
            offset_minutes: time.and_then(|t| t.offset_minutes),
            duration_us: rec.duration_us(),
            pid: self
                .pid
                .and_then(|i| rec.int(i))
                .and_then(|p| u32::try_from(p).ok()),
            kind: path_kind(&target),
        }
    }
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
}

/// The user field of an access-log line a worker wrote (`host ident user [...`).
fn logged_user(line: &[u8]) -> Option<String> {
    if !line.contains(&b'[') || !line.contains(&b'"') {
        return None;
    }
    let mut it = line.split(|&b| b == b' ').filter(|t| !t.is_empty());
    let (_host, _ident, user) = (it.next()?, it.next()?, it.next()?);
    let next = it.next()?;
    if !next.starts_with(b"[") {
        return None;
    }
    Some(tlsgap_parser::lossless_text(user).into_owned())
}

fn clock_us(stamp: Stamp, day: i64) -> (i64, bool) {
    match stamp {
        Stamp::Unix { nanos } => (nanos / 1000, true),
        Stamp::TimeOfDay { nanos } => (day * 86_400_000_000 + (nanos / 1000) as i64, false),
    }
}

/// Finds the access-log lines traced workers wrote (`write`/`writev`/`pwrite64`),
/// one trace at a time (`-t`/`-tt` stamps roll over at midnight).
#[derive(Debug, Default)]
struct WriteScan {
    day: i64,
    last_tod: u64,
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
        let call = match t.body {
            Body::Call(c) | Body::Resumed(c) => c,
            _ => return,
        };
        if !matches!(call.name, b"write" | b"writev" | b"pwrite64") {
            return;
        }
        let Some(pid) = t.pid.or(hint) else { return };
        let user = strace::args(call.args)
            .filter_map(|a| {
                let inner = strace::inner(a).unwrap_or(a);
                strace::args(inner)
                    .chain(std::iter::once(a))
                    .filter_map(|x| {
                        let x = x.strip_prefix(b"iov_base=").unwrap_or(x);
                        strace::quoted(x).map(|(s, _)| s.into_owned())
                    })
                    .next()
            })
            .find_map(|s| logged_user(&s));
        if let Some(user) = user {
            out.push(LogWrite {
                pid,
                at: clock_us(stamp, self.day).0,
                user,
            });
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
    let trace_tz = args.trace_tz.as_deref().map(parse_offset).transpose()?;
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
            let map: BTreeMap<String, Predicted> = report
                .users
                .into_iter()
                .map(|u| {
                    (
                        u.user.clone(),
                        Predicted {
                            scheme: u.scheme,
                            cost: u.cost,
                            rounds: u.rounds,
                            verify_seconds: u.verify_seconds,
                            how_measured: u.how_measured,
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
        let names = expand_inputs(&args.traces);
        let mut analyzer = GapAnalyzer::new(analyzer_options(args.min_gap_seconds, 0)?);
        // One pass per trace feeds the analyzer and collects the workers' log writes
        // (standard input can be read only once).
        let mut writes = Vec::new();
        let inputs: Vec<_> = names
            .iter()
            .map(|n| {
                let mut scan = WriteScan::default();
                feed(n, &mut analyzer, notes_out, |hint, line| {
                    scan.line(hint, line, &mut writes)
                })
            })
            .collect();
        failed |= inputs.iter().any(|i| i.error.is_some());
        let report = analyzer.finish();
        // A date for -t/-tt traces: the first request's, in the trace's zone.
        let first = requests
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .filter_map(|r| r.begin_us.map(|b| (b, r.offset_minutes.unwrap_or(0))))
            .min();
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
                    Clock::TimeOfDay => match first {
                        Some((b, log_off)) => {
                            let off = i64::from(trace_tz.unwrap_or(log_off)) * 60_000_000;
                            let local_midnight =
                                (b + off).div_euclid(86_400_000_000) * 86_400_000_000;
                            (
                                Some(local_midnight - off + start),
                                Some(local_midnight - off + end),
                            )
                        }
                        None => {
                            no_date = true;
                            (None, None)
                        }
                    },
                    Clock::Relative => (None, None),
                };
                AuthGap {
                    pid: g.pid,
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
    });
    report.notes.extend(notes);
    Ok(AuthOutcome { report, failed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logged_user_from_clf_bytes() {
        assert_eq!(
            logged_user(
                b"127.0.0.1 - mallory [21/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5\n"
            )
            .as_deref(),
            Some("mallory")
        );
        assert_eq!(logged_user(b"GET / HTTP/1.1\r\nHost: x"), None);
    }

    #[test]
    fn offsets() {
        assert_eq!(parse_offset("+02:00").unwrap(), 120);
        assert_eq!(parse_offset("-0530").unwrap(), -330);
        assert_eq!(parse_offset("UTC").unwrap(), 0);
        assert!(parse_offset("Europe/Sofia").is_err());
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
