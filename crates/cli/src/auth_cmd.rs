//! `tlsgap auth`: per-user authentication cost from the htpasswd file, the access log
//! and strace traces, joined and ranked.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write as _};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use tlsgap_agg::authjoin::{
    auth_rows, join, path_kind, AuthGap, AuthReport, Evidence, LogWrite, Predicted, Request,
};
use tlsgap_agg::gaps::{pid_from_file_name, Cause, Clock, GapAnalyzer, GapOptions};
use tlsgap_agg::LineStats;
use tlsgap_auth::{AuthFileReport, MeasureOptions};
use tlsgap_parser::strace::{self, Body, Stamp};
use tlsgap_parser::{Format, Record, Role};

use crate::cli::{AuthArgs, InputConfig, TlsFormat};
use crate::common::{self, parse_block, BadLineSink, LinePartial};
use crate::emit::{self, fit, text_table, thousands, Csv, Emitter, Parquet};
use crate::engine::{Block, Job};
use crate::escape;
use crate::gaps_cmd::{expand_inputs, feed};
use crate::input::Input;
use crate::output;

struct AuthJob<'f> {
    format: &'f Format,
    keep_bad: bool,
}

struct AuthPartial {
    lines: LinePartial,
    requests: Vec<Request>,
}

crate::has_lines!(AuthPartial);

impl Job for AuthJob<'_> {
    type Out = AuthPartial;

    fn run(&self, block: &Block) -> AuthPartial {
        let mut requests = Vec::new();
        let fields = RequestFields::new(self.format);
        let lines = parse_block(self.format, block, self.keep_bad, |_, rec| {
            requests.push(fields.request(rec));
        });
        AuthPartial { lines, requests }
    }
}

/// Where the fields auth evidence needs are in a format; [`RequestFields::request`]
/// turns a parsed line into a [`Request`] (shared with `tlsgap report`).
pub(crate) struct RequestFields {
    user: Option<usize>,
    status: Option<usize>,
    pid: Option<usize>,
}

impl RequestFields {
    pub(crate) fn new(f: &Format) -> RequestFields {
        RequestFields {
            user: f.role(Role::User),
            status: f.role(Role::Status),
            pid: f.role(Role::Pid),
        }
    }

    pub(crate) fn request(&self, rec: &Record<'_>) -> Request {
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
pub(crate) struct LogEvidence {
    pub(crate) requests: Vec<Request>,
    pub(crate) stats: LineStats,
    pub(crate) failed: bool,
}

/// Read the access logs; `None` when none were given.
fn read_logs(args: &AuthArgs) -> Result<Option<LogEvidence>> {
    if args.log.is_empty() {
        return Ok(None);
    }
    let cfg = InputConfig {
        files: args
            .log
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect(),
        log_format: args.log_format.clone(),
        output: None,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        strict: false,
        invalid_lines: None,
        quiet: args.quiet,
        state: None,
        window: args.window.clone(),
    };
    let prepared = common::prepare(&cfg)?;
    let format = prepared.format.clone();
    if !format.has(Role::User) {
        bail!("the log format has no user field (%u / $remote_user): auth needs it");
    }
    let mut bad = BadLineSink::new(&cfg)?;
    let job = AuthJob {
        format: &format,
        keep_bad: false,
    };
    let mut requests = Vec::new();
    let mut stats = LineStats::default();
    let outcomes = common::run_job(&cfg, prepared, &job, &mut bad, &mut stats, |_, p| {
        requests.extend(p.requests);
        Ok(())
    })?;
    let inputs = common::input_reports(&outcomes);
    let failed = inputs.iter().any(|i| i.error.is_some());
    Ok(Some(LogEvidence {
        requests,
        stats,
        failed,
    }))
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

/// Access-log lines written by traced workers (`write`/`writev`/`pwrite64`).
fn trace_writes(names: &[String]) -> Vec<LogWrite> {
    let mut out = Vec::new();
    for name in names {
        let Ok(input) = Input::open(name) else {
            continue;
        };
        let hint = if name == "-" {
            None
        } else {
            pid_from_file_name(name)
        };
        let mut reader = BufReader::with_capacity(1 << 20, input);
        let mut buf = Vec::new();
        let (mut day, mut last_tod) = (0i64, 0u64);
        loop {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
            let Ok(t) = strace::parse_line(line) else {
                continue;
            };
            let Some(stamp) = t.stamp else { continue };
            if let Stamp::TimeOfDay { nanos } = stamp {
                if nanos + 12 * 3_600_000_000_000 < last_tod {
                    day += 1;
                }
                last_tod = nanos;
            }
            let call = match t.body {
                Body::Call(c) | Body::Resumed(c) => c,
                _ => continue,
            };
            if !matches!(call.name, b"write" | b"writev" | b"pwrite64") {
                continue;
            }
            let Some(pid) = t.pid.or(hint) else { continue };
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
                    at: clock_us(stamp, day).0,
                    user,
                });
            }
        }
    }
    out
}

/// Parse `+02:00`, `+0200`, `-5`, `UTC`/`Z` into minutes east of UTC.
fn parse_offset(s: &str) -> Result<i16> {
    if s.eq_ignore_ascii_case("utc") || s == "Z" {
        return Ok(0);
    }
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => bail!("--trace-tz {s:?}: use an offset such as +02:00, -0500 or UTC"),
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    let (h, m) = match digits.len() {
        1 | 2 => (digits.parse::<i16>()?, 0),
        4 => (digits[..2].parse::<i16>()?, digits[2..].parse::<i16>()?),
        _ => bail!("--trace-tz {s:?}: use an offset such as +02:00, -0500 or UTC"),
    };
    if h > 14 || m > 59 {
        bail!("--trace-tz {s:?}: out of range");
    }
    Ok(sign * (h * 60 + m))
}

/// Run `tlsgap auth`.
pub fn run(args: AuthArgs) -> Result<ExitCode> {
    if args.htpasswd.is_none() && args.log.is_empty() && args.traces.is_empty() {
        bail!("give at least one of --htpasswd FILE, --log FILE..., --traces FILE...");
    }
    let out_path = args.output.as_deref().filter(|p| p.as_os_str() != "-");
    if args.format == TlsFormat::Parquet && out_path.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let logs = read_logs(&args)?;
    let (report, failed) = build_report(&args, logs)?;
    let mut out = output::open(out_path)?;
    match args.format {
        TlsFormat::Table => out.write_all(table(&report).as_bytes())?,
        TlsFormat::Csv => Csv.emit(&auth_rows(&report), &mut out)?,
        TlsFormat::Json => emit::json(&report, &mut out)?,
        TlsFormat::Parquet => Parquet.emit(&auth_rows(&report), &mut out)?,
        TlsFormat::Prom => anyhow::bail!("--format prom is for `tls` and `merge`"),
    }
    out.finish()?;
    Ok(ExitCode::from(u8::from(failed)))
}

/// Join the evidence `args` names (htpasswd, traces) with access-log evidence the
/// caller read (`tlsgap auth --log`, or `tlsgap report`'s own pass over the logs).
/// Returns the report and whether an input could not be read.
pub(crate) fn build_report(
    args: &AuthArgs,
    logs: Option<LogEvidence>,
) -> Result<(AuthReport, bool)> {
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
        let mut analyzer = GapAnalyzer::new(GapOptions {
            min_gap_ns: (args.min_gap * 1e9).round() as u64,
            top: 0,
            ..GapOptions::default()
        });
        let inputs: Vec<_> = names.iter().map(|n| feed(n, &mut analyzer)).collect();
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
        (Some(gaps), trace_writes(&names))
    };

    let mut report = join(&Evidence {
        htpasswd,
        requests,
        gaps,
        writes,
        threshold_seconds: args.threshold,
    });
    report.notes.extend(notes);
    Ok((report, failed))
}

fn ms(x: Option<f64>) -> String {
    match x {
        Some(s) if s.abs() >= 1.0 => format!("{s:.2}s"),
        Some(s) => format!("{:.1}ms", s * 1000.0 + 0.0),
        None => "-".into(),
    }
}

fn table(r: &AuthReport) -> String {
    let mut out = format!(
        "authentication cost per user (evidence: {}; flagged above {})\n\n",
        r.evidence.join(", "),
        ms(Some(r.threshold_seconds))
    );
    let has_log = r.evidence.contains(&"log");
    let rows: Vec<Vec<String>> = r
        .users
        .iter()
        .map(|u| {
            let scheme =
                u.htpasswd
                    .as_ref()
                    .map_or("-".to_string(), |p| match (p.cost, p.rounds) {
                        (Some(c), _) => format!("{} {c}", p.scheme),
                        (None, Some(n)) => format!("{} r{n}", p.scheme),
                        _ => p.scheme.to_string(),
                    });
            let flag = u.htpasswd.as_ref().is_some_and(|p| p.flagged);
            vec![
                u.rank.to_string(),
                format!("{}{}", u.user, if flag { " !" } else { "" }),
                scheme,
                ms(u.htpasswd.as_ref().and_then(|p| p.verify_seconds)),
                if has_log {
                    thousands(u.requests)
                } else {
                    "-".into()
                },
                ms(u.predicted_cpu_seconds),
                ms(u.extra_latency_seconds),
                u.observed_gaps.map_or("-".into(), |g| {
                    format!("{} × {}", g.count, ms(Some(g.p50_seconds)))
                }),
            ]
        })
        .collect();
    out.push_str(&text_table(
        &[
            "#",
            "user",
            "scheme",
            "predicted",
            "requests",
            "cpu total",
            "extra",
            "auth gaps",
        ],
        &rows,
        24,
    ));
    if let Some(total) = r.predicted_cpu_seconds {
        out.push_str(&format!(
            "\npredicted password-verification CPU over the log: {}\n",
            ms(Some(total))
        ));
        for d in &r.per_day {
            out.push_str(&format!(
                "  {}  {:>9} requests  {}\n",
                d.date,
                thousands(d.requests),
                ms(Some(d.predicted_cpu_seconds))
            ));
        }
    }
    let advice: Vec<&String> = r
        .users
        .iter()
        .filter_map(|u| u.htpasswd.as_ref().and_then(|p| p.advice.as_ref()))
        .collect();
    if !advice.is_empty() {
        out.push('\n');
        for u in r.users.iter() {
            if let Some(a) = u.htpasswd.as_ref().and_then(|p| p.advice.as_ref()) {
                out.push_str(&format!(
                    "{}: {}\n",
                    escape::terminal(&u.user),
                    escape::terminal(a)
                ));
            }
        }
    }
    if !r.users_not_in_htpasswd.is_empty() {
        out.push_str(&format!(
            "\nnot in the htpasswd file: {}\n",
            fit(&escape::terminal(&r.users_not_in_htpasswd.join(", ")), 60)
        ));
    }
    if !r.htpasswd_users_without_gaps.is_empty() {
        out.push_str(&format!(
            "no auth gap observed for: {}\n",
            fit(
                &escape::terminal(&r.htpasswd_users_without_gaps.join(", ")),
                60
            )
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("note: {}\n", escape::terminal(n)));
    }
    out
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
}
