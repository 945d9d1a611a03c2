//! `tlsgap auth`: per-user authentication cost from three kinds of evidence, joined.
//!
//! - **htpasswd**: the scheme and work factor of each user's entry and the measured
//!   time to verify one password of that kind on this machine (`tlsgap-auth`).
//! - **access log**: requests per user (401s included: a wrong password is verified
//!   too), the predicted verification CPU per user and per day, and — when the format
//!   has a duration — the user's latency against unauthenticated requests of the same
//!   path kind (page, style, script, image, other); the extra latency is what the
//!   password check costs when nothing else differs.
//! - **traces**: `auth` gaps from the strace analysis, attributed to a request and a
//!   user by, in this order: the worker PID and the request's time window (`%P` with
//!   `%t`/`%{begin:...}t` and `%D`); the access-log line the same worker writes after
//!   the gap (its bytes carry the user); the time window alone when only one user had
//!   a request in flight.
//!
//! Users are ranked by cost per request: the predicted verification time when the
//! htpasswd file is given, else the median observed gap, else the median extra
//! latency. Nothing here ever holds a password hash.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::quantile::nearest_rank;

/// What a request path serves, for like-for-like latency comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PathKind {
    /// HTML pages and directories.
    Page,
    /// CSS.
    Style,
    /// JavaScript.
    Script,
    /// Images and fonts.
    Image,
    /// Anything else.
    Other,
}

/// The kind of a request target, from its extension (query string ignored).
pub fn path_kind(target: &[u8]) -> PathKind {
    let path = target.split(|&b| b == b'?').next().unwrap_or(b"");
    let last = path.rsplit(|&b| b == b'/').next().unwrap_or(b"");
    let ext = match last.iter().rposition(|&b| b == b'.') {
        Some(i) => last.get(i + 1..).unwrap_or(b""),
        None => return PathKind::Page,
    };
    let ext = ext.to_ascii_lowercase();
    match ext.as_slice() {
        b"html" | b"htm" | b"php" | b"shtml" | b"asp" | b"aspx" | b"jsp" | b"cgi" => PathKind::Page,
        b"css" => PathKind::Style,
        b"js" | b"mjs" => PathKind::Script,
        b"png" | b"jpg" | b"jpeg" | b"gif" | b"svg" | b"webp" | b"ico" | b"avif" | b"woff"
        | b"woff2" | b"ttf" => PathKind::Image,
        _ => PathKind::Other,
    }
}

/// One access-log request, as much as the format tells.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// `%u` (none for `-`).
    pub user: Option<String>,
    /// Final status.
    pub status: Option<u16>,
    /// Start of the request, µs since the epoch.
    pub begin_us: Option<i64>,
    /// The log's UTC offset at that time, minutes.
    pub offset_minutes: Option<i16>,
    /// `%D`/`%T`/`$request_time`, µs.
    pub duration_us: Option<u64>,
    /// `%P`.
    pub pid: Option<u32>,
    /// Path kind.
    pub kind: PathKind,
}

/// An access-log line a worker wrote, seen in a trace (`write(fd, "127.0.0.1 - bob [..."`),
/// whole or as strace cut it (`-s 32` by default).
#[derive(Clone, Debug, PartialEq)]
pub struct LogWrite {
    /// The writing thread.
    pub pid: u32,
    /// When, on the trace's clock (see [`AuthGap::start`]).
    pub at: i64,
    /// The user field of the written line (`-` for none); `None` when strace cut the
    /// string before the user field ended.
    pub user: Option<String>,
    /// With `user` cut off: a `-s` that would show it.
    pub string_limit: Option<usize>,
}

/// An `auth` gap from the strace analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthGap {
    /// Thread.
    pub pid: u32,
    /// Start on the trace's clock: µs since the epoch (`-ttt`), or µs since the local
    /// midnight of the run's first day (`-t`/`-tt`, see [`AuthGap::epoch_start`]).
    pub start: i64,
    /// End, same clock.
    pub end: i64,
    /// The epoch start, when the clock is the epoch or a date could be attached.
    pub epoch_start: Option<i64>,
    /// The epoch end, likewise.
    pub epoch_end: Option<i64>,
    /// Seconds.
    pub seconds: f64,
    /// `bcrypt cost 12`, when the trace showed the hash prefix.
    pub detail: Option<String>,
    /// `file:line` in the trace.
    pub at: String,
}

/// What the htpasswd file says of one user (from `tlsgap-auth`; no hash).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Predicted {
    /// `bcrypt`, `apr1`, `sha1`, ...
    pub scheme: &'static str,
    /// bcrypt cost.
    pub cost: Option<u32>,
    /// SHA-crypt rounds.
    pub rounds: Option<u32>,
    /// Seconds per verification here.
    pub verify_seconds: Option<f64>,
    /// How that figure was obtained.
    pub how_measured: String,
    /// Over the threshold.
    pub flagged: bool,
    /// The largest bcrypt cost under the threshold, for flagged bcrypt users.
    pub suggested_cost: Option<u32>,
    /// Advice text.
    pub advice: Option<String>,
}

/// Median and 95th percentile (nearest rank) of seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// Samples.
    pub count: u64,
    /// Median.
    pub p50_seconds: f64,
    /// 95th percentile.
    pub p95_seconds: f64,
}

impl Spread {
    fn of(mut v: Vec<f64>) -> Option<Spread> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        Some(Spread {
            count: v.len() as u64,
            p50_seconds: nearest_rank(&v, 0.5),
            p95_seconds: nearest_rank(&v, 0.95),
        })
    }
}

/// One user in the ranking.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UserCost {
    /// 1 = most expensive per request.
    pub rank: usize,
    /// The user name (escape it for where it goes).
    pub user: String,
    /// Seconds per request used for the ranking.
    pub cost_per_request_seconds: Option<f64>,
    /// Which evidence that figure came from: `htpasswd`, `trace`, `latency`.
    pub ranked_by: Option<&'static str>,
    /// `cost_per_request_seconds × requests`.
    pub total_cost_seconds: Option<f64>,
    /// From the htpasswd file.
    pub htpasswd: Option<Predicted>,
    /// Requests in the log (401s included).
    pub requests: u64,
    /// Of which 401.
    pub requests_401: u64,
    /// `requests × verify_seconds`.
    pub predicted_cpu_seconds: Option<f64>,
    /// The user's request durations.
    pub latency: Option<Spread>,
    /// Median of (duration − median unauthenticated duration of the same path kind).
    pub extra_latency_seconds: Option<f64>,
    /// Whether the extra latency matches the predicted verification time (within
    /// half of it, or 20 ms).
    pub latency_matches_prediction: Option<bool>,
    /// `auth` gaps attributed to the user.
    pub observed_gaps: Option<Spread>,
    /// Whether the median gap matches the predicted verification time (same
    /// tolerance).
    pub gaps_match_prediction: Option<bool>,
    /// Evidence kinds that mention the user.
    pub evidence: Vec<&'static str>,
}

/// Predicted verification CPU of one day.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DayCost {
    /// `YYYY-MM-DD` in the log's own offset.
    pub date: String,
    /// Authenticated requests.
    pub requests: u64,
    /// Predicted verification seconds (users with an htpasswd entry).
    pub predicted_cpu_seconds: f64,
}

/// How gaps were tied to users.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Attribution {
    /// By worker PID and request window.
    pub by_pid_and_time: u64,
    /// By the access-log line the worker wrote next.
    pub by_log_write: u64,
    /// By time window alone.
    pub by_time: u64,
    /// Not attributed.
    pub unattributed: u64,
    /// Of the unattributed: the worker's next log write was cut by strace's `-s`
    /// before the user name.
    pub user_cut_off: u64,
}

/// `tlsgap auth --format json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuthReport {
    /// Per-request budget (seconds) above which a user is flagged.
    pub threshold_seconds: f64,
    /// Evidence given: `htpasswd`, `log`, `traces`.
    pub evidence: Vec<&'static str>,
    /// Users by cost per request, descending.
    pub users: Vec<UserCost>,
    /// Predicted verification CPU per day.
    pub per_day: Vec<DayCost>,
    /// Total predicted verification CPU over the log.
    pub predicted_cpu_seconds: Option<f64>,
    /// How trace gaps were attributed.
    pub attribution: Attribution,
    /// Users with auth gaps or requests but no htpasswd entry.
    pub users_not_in_htpasswd: Vec<String>,
    /// htpasswd users with no attributed gap (when traces were given).
    pub htpasswd_users_without_gaps: Vec<String>,
    /// Plain-language notes.
    pub notes: Vec<String>,
}

/// Everything `join` needs.
#[derive(Clone, Debug, Default)]
pub struct Evidence {
    /// Per-user predictions from the htpasswd file.
    pub htpasswd: Option<BTreeMap<String, Predicted>>,
    /// Access-log requests (`None`: no log given).
    pub requests: Option<Vec<Request>>,
    /// Auth gaps (`None`: no traces given).
    pub gaps: Option<Vec<AuthGap>>,
    /// Access-log lines written by workers, from the traces.
    pub writes: Vec<LogWrite>,
    /// Flag threshold, seconds.
    pub threshold_seconds: f64,
}

fn matches(observed: f64, predicted: f64) -> bool {
    (observed - predicted).abs() <= (0.5 * predicted).max(0.020)
}

/// The `YYYY-MM-DD` of `us` (epoch µs) at `offset` minutes.
fn date_of(us: i64, offset: i16) -> String {
    let secs = us.div_euclid(1_000_000) + i64::from(offset) * 60;
    let (y, m, d) = tlsgap_parser::time::civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Why a gap was not tied to a user.
enum Unattributed {
    /// No evidence names the request.
    NoEvidence,
    /// The worker's log write was cut before the user; `-s` this large shows it.
    Cut(Option<usize>),
}

/// Attribute `gap` to a user; the second value names the method. `same_pid` holds the
/// starts of every auth gap of the gap's thread, sorted.
fn attribute(
    gap: &AuthGap,
    same_pid: &[i64],
    requests: &[Request],
    writes: &[LogWrite],
) -> Result<(String, &'static str), Unattributed> {
    const SLACK_US: i64 = 50_000;
    let window = |r: &Request| -> Option<(i64, i64)> {
        let b = r.begin_us?;
        let d = i64::try_from(r.duration_us?).ok()?;
        Some((b - SLACK_US, b + d + SLACK_US))
    };
    if let (Some(s), Some(e)) = (gap.epoch_start, gap.epoch_end) {
        let mid = s + (e - s) / 2;
        let by_pid = requests.iter().find(|r| {
            r.pid == Some(gap.pid) && window(r).is_some_and(|(a, b)| a <= mid && mid <= b)
        });
        if let Some(u) = by_pid.and_then(|r| r.user.clone()) {
            return Ok((u, "pid_and_time"));
        }
    }
    // The thread's next log write is the request that paid for the gap, unless the
    // thread verified another password (a later gap) before writing it.
    let next_gap = same_pid
        .iter()
        .copied()
        .find(|&start| start > gap.start)
        .unwrap_or(i64::MAX);
    let next_write = writes
        .iter()
        .filter(|w| w.pid == gap.pid && w.at >= gap.end && w.at - gap.end <= 30_000_000)
        .filter(|w| w.at < next_gap)
        .min_by_key(|w| w.at);
    let mut cut = None;
    if let Some(w) = next_write {
        match &w.user {
            Some(u) if u != "-" => return Ok((u.clone(), "log_write")),
            Some(_) => {}
            None => cut = Some(w.string_limit),
        }
    }
    if let (Some(s), Some(e)) = (gap.epoch_start, gap.epoch_end) {
        let mid = s + (e - s) / 2;
        let mut users: Vec<&String> = requests
            .iter()
            .filter(|r| window(r).is_some_and(|(a, b)| a <= mid && mid <= b))
            .filter_map(|r| r.user.as_ref())
            .collect();
        users.sort();
        users.dedup();
        if let [only] = users.as_slice() {
            return Ok(((*only).clone(), "time"));
        }
    }
    Err(match cut {
        Some(limit) => Unattributed::Cut(limit),
        None => Unattributed::NoEvidence,
    })
}

/// Join the evidence into the ranked report.
pub fn join(ev: &Evidence) -> AuthReport {
    #[derive(Default)]
    struct Acc {
        requests: u64,
        r401: u64,
        durations: Vec<f64>,
        extra: Vec<f64>,
        gaps: Vec<f64>,
        in_log: bool,
    }
    let mut users: BTreeMap<String, Acc> = BTreeMap::new();
    let mut notes = Vec::new();
    let mut evidence = Vec::new();
    if let Some(h) = &ev.htpasswd {
        evidence.push("htpasswd");
        for u in h.keys() {
            users.entry(u.clone()).or_default();
        }
    }
    let requests: &[Request] = ev.requests.as_deref().unwrap_or(&[]);
    let mut per_day: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    if ev.requests.is_some() {
        evidence.push("log");
        // Baseline: unauthenticated successful requests by path kind.
        let mut base: BTreeMap<PathKind, Vec<f64>> = BTreeMap::new();
        for r in requests.iter().filter(|r| r.user.is_none()) {
            if let (Some(d), Some(s)) = (r.duration_us, r.status) {
                if (200..400).contains(&s) {
                    base.entry(r.kind).or_default().push(d as f64 / 1e6);
                }
            }
        }
        let base: BTreeMap<PathKind, f64> = base
            .into_iter()
            .filter_map(|(k, v)| Spread::of(v).map(|s| (k, s.p50_seconds)))
            .collect();
        let any_base = {
            let mut all: Vec<f64> = base.values().copied().collect();
            all.sort_by(f64::total_cmp);
            all.get(all.len() / 2).copied()
        };
        let has_duration = requests.iter().any(|r| r.duration_us.is_some());
        if !has_duration {
            notes.push(
                "the log format has no duration (%D, %T, %{ms}T, $request_time): no latency \
                 comparison"
                    .to_string(),
            );
        } else if base.is_empty() {
            notes.push(
                "no unauthenticated requests with a duration: no baseline for the extra \
                 latency"
                    .to_string(),
            );
        }
        for r in requests {
            let Some(u) = &r.user else { continue };
            let acc = users.entry(u.clone()).or_default();
            acc.in_log = true;
            acc.requests += 1;
            if r.status == Some(401) {
                acc.r401 += 1;
            }
            if let Some(d) = r.duration_us {
                let secs = d as f64 / 1e6;
                acc.durations.push(secs);
                if let Some(b) = base.get(&r.kind).copied().or(any_base) {
                    acc.extra.push(secs - b);
                }
            }
            if let (Some(b), Some(off)) = (r.begin_us, r.offset_minutes) {
                let predicted = ev
                    .htpasswd
                    .as_ref()
                    .and_then(|h| h.get(u))
                    .and_then(|p| p.verify_seconds)
                    .unwrap_or(0.0);
                let slot = per_day.entry(date_of(b, off)).or_default();
                slot.0 += 1;
                slot.1 += predicted;
            }
        }
    }
    let mut attribution = Attribution::default();
    if let Some(gaps) = &ev.gaps {
        evidence.push("traces");
        let mut starts: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
        for g in gaps {
            starts.entry(g.pid).or_default().push(g.start);
        }
        starts.values_mut().for_each(|v| v.sort_unstable());
        let mut cut_limit: Option<usize> = None;
        for g in gaps {
            let same_pid = starts.get(&g.pid).map_or(&[][..], Vec::as_slice);
            match attribute(g, same_pid, requests, &ev.writes) {
                Ok((u, how)) => {
                    match how {
                        "pid_and_time" => attribution.by_pid_and_time += 1,
                        "log_write" => attribution.by_log_write += 1,
                        _ => attribution.by_time += 1,
                    }
                    users.entry(u).or_default().gaps.push(g.seconds);
                }
                Err(why) => {
                    attribution.unattributed += 1;
                    if let Unattributed::Cut(limit) = why {
                        attribution.user_cut_off += 1;
                        cut_limit = cut_limit.max(limit);
                    }
                }
            }
        }
        if attribution.user_cut_off > 0 {
            notes.push(format!(
                "{} auth gaps: the worker's next access-log write was cut by strace's \
                 string limit before the user name; trace with -s {} (or more) to see it",
                attribution.user_cut_off,
                cut_limit.unwrap_or(256)
            ));
        }
        let no_evidence = attribution.unattributed - attribution.user_cut_off;
        if no_evidence > 0 {
            notes.push(format!(
                "{no_evidence} auth gaps could not be tied to a user: no access-log write \
                 of the same worker followed them before its next password check, and no \
                 access-log line (with %P and %D) covers them"
            ));
        }
    }
    let mut rows: Vec<UserCost> = users
        .into_iter()
        .map(|(user, acc)| {
            let predicted = ev.htpasswd.as_ref().and_then(|h| h.get(&user)).cloned();
            let verify = predicted.as_ref().and_then(|p| p.verify_seconds);
            let latency = Spread::of(acc.durations);
            let extra = Spread::of(acc.extra).map(|s| s.p50_seconds);
            let gaps = Spread::of(acc.gaps);
            let (cost, by) = if let Some(v) = verify {
                (Some(v), Some("htpasswd"))
            } else if let Some(g) = gaps {
                (Some(g.p50_seconds), Some("trace"))
            } else if let Some(x) = extra {
                (Some(x.max(0.0)), Some("latency"))
            } else {
                (None, None)
            };
            let mut evidence = Vec::new();
            if predicted.is_some() {
                evidence.push("htpasswd");
            }
            if acc.in_log {
                evidence.push("log");
            }
            if gaps.is_some() {
                evidence.push("traces");
            }
            UserCost {
                rank: 0,
                cost_per_request_seconds: cost,
                ranked_by: by,
                total_cost_seconds: cost
                    .filter(|_| ev.requests.is_some())
                    .map(|c| c * acc.requests as f64),
                predicted_cpu_seconds: verify
                    .filter(|_| ev.requests.is_some())
                    .map(|v| v * acc.requests as f64),
                latency_matches_prediction: verify.zip(extra).map(|(v, x)| matches(x, v)),
                gaps_match_prediction: verify.zip(gaps).map(|(v, g)| matches(g.p50_seconds, v)),
                htpasswd: predicted,
                requests: acc.requests,
                requests_401: acc.r401,
                latency,
                extra_latency_seconds: extra,
                observed_gaps: gaps,
                evidence,
                user,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.cost_per_request_seconds
            .unwrap_or(-1.0)
            .total_cmp(&a.cost_per_request_seconds.unwrap_or(-1.0))
            .then_with(|| a.user.cmp(&b.user))
    });
    for (i, r) in rows.iter_mut().enumerate() {
        r.rank = i + 1;
    }
    let users_not_in_htpasswd = match &ev.htpasswd {
        Some(h) => rows
            .iter()
            .filter(|r| !h.contains_key(&r.user))
            .map(|r| r.user.clone())
            .collect(),
        None => Vec::new(),
    };
    let htpasswd_users_without_gaps = match (&ev.htpasswd, &ev.gaps) {
        (Some(h), Some(_)) => rows
            .iter()
            .filter(|r| h.contains_key(&r.user) && r.observed_gaps.is_none())
            .map(|r| r.user.clone())
            .collect(),
        _ => Vec::new(),
    };
    let predicted_cpu_seconds = ev
        .htpasswd
        .as_ref()
        .filter(|_| ev.requests.is_some())
        .map(|_| rows.iter().filter_map(|r| r.predicted_cpu_seconds).sum());
    AuthReport {
        threshold_seconds: ev.threshold_seconds,
        evidence,
        users: rows,
        per_day: per_day
            .into_iter()
            .map(|(date, (requests, secs))| DayCost {
                date,
                requests,
                predicted_cpu_seconds: secs,
            })
            .collect(),
        predicted_cpu_seconds,
        attribution,
        users_not_in_htpasswd,
        htpasswd_users_without_gaps,
        notes,
    }
}

/// Columns of [`auth_rows`].
pub const AUTH_COLUMNS: [(&str, crate::CellType); 18] = {
    use crate::CellType::{Bool, Float, Int, Text};
    [
        ("rank", Int),
        ("user", Text),
        ("cost_per_request_seconds", Float),
        ("ranked_by", Text),
        ("total_cost_seconds", Float),
        ("scheme", Text),
        ("cost", Int),
        ("predicted_seconds", Float),
        ("flagged", Bool),
        ("suggested_cost", Int),
        ("requests", Int),
        ("requests_401", Int),
        ("predicted_cpu_seconds", Float),
        ("latency_p50_seconds", Float),
        ("extra_latency_seconds", Float),
        ("observed_gaps", Int),
        ("gap_p50_seconds", Float),
        ("gap_p95_seconds", Float),
    ]
};

/// The ranking as a flat table (CSV/Parquet).
pub fn auth_rows(r: &AuthReport) -> crate::Rows {
    let mut rows = crate::Rows::new(&AUTH_COLUMNS);
    for u in &r.users {
        let h = u.htpasswd.as_ref();
        rows.push(vec![
            (u.rank as u64).into(),
            u.user.as_str().into(),
            u.cost_per_request_seconds.into(),
            u.ranked_by.into(),
            u.total_cost_seconds.into(),
            h.map(|p| p.scheme).into(),
            h.and_then(|p| p.cost).into(),
            h.and_then(|p| p.verify_seconds).into(),
            h.map(|p| p.flagged).into(),
            h.and_then(|p| p.suggested_cost).into(),
            u.requests.into(),
            u.requests_401.into(),
            u.predicted_cpu_seconds.into(),
            u.latency.map(|l| l.p50_seconds).into(),
            u.extra_latency_seconds.into(),
            u.observed_gaps.map(|g| g.count).into(),
            u.observed_gaps.map(|g| g.p50_seconds).into(),
            u.observed_gaps.map(|g| g.p95_seconds).into(),
        ]);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pred(secs: f64) -> Predicted {
        Predicted {
            scheme: "bcrypt",
            cost: Some(12),
            rounds: None,
            verify_seconds: Some(secs),
            how_measured: "measured".into(),
            flagged: secs > 0.05,
            suggested_cost: None,
            advice: None,
        }
    }

    fn req(user: Option<&str>, pid: u32, begin: i64, dur: u64, kind: PathKind) -> Request {
        Request {
            user: user.map(String::from),
            status: Some(200),
            begin_us: Some(begin),
            offset_minutes: Some(60),
            duration_us: Some(dur),
            pid: Some(pid),
            kind,
        }
    }

    #[test]
    fn path_kinds() {
        assert_eq!(path_kind(b"/wiki/index.html?x=1"), PathKind::Page);
        assert_eq!(path_kind(b"/wiki/"), PathKind::Page);
        assert_eq!(path_kind(b"/s/app.CSS"), PathKind::Style);
        assert_eq!(path_kind(b"/a.js"), PathKind::Script);
        assert_eq!(path_kind(b"/logo.png"), PathKind::Image);
        assert_eq!(path_kind(b"/x.tar.gz"), PathKind::Other);
    }

    #[test]
    fn a_log_write_pays_only_for_the_gap_just_before_it() {
        let gap = |s: i64, e: i64| AuthGap {
            pid: 5,
            start: s,
            end: e,
            epoch_start: None,
            epoch_end: None,
            seconds: (e - s) as f64 / 1e6,
            detail: None,
            at: "t:1".into(),
        };
        let write = |at: i64, user: Option<&str>| LogWrite {
            pid: 5,
            at,
            user: user.map(str::to_string),
            string_limit: user.is_none().then_some(64),
        };
        let ev = Evidence {
            // Two checks before one write: only the second is that request's; then a
            // gap whose write was cut before the user name.
            gaps: Some(vec![
                gap(1_000_000, 1_300_000),
                gap(2_000_000, 2_300_000),
                gap(5_000_000, 5_300_000),
            ]),
            writes: vec![write(2_400_000, Some("bob")), write(5_400_000, None)],
            threshold_seconds: 0.05,
            ..Evidence::default()
        };
        let r = join(&ev);
        assert_eq!(r.attribution.by_log_write, 1);
        assert_eq!(r.attribution.unattributed, 2);
        assert_eq!(r.attribution.user_cut_off, 1);
        assert_eq!(r.users.len(), 1);
        assert_eq!(r.users[0].observed_gaps.map(|g| g.count), Some(1));
        assert!(r.notes.iter().any(|n| n.contains("-s 64")), "{:?}", r.notes);
    }

    #[test]
    fn attribution_order_and_ranking() {
        let requests = vec![
            req(None, 7, 1_000_000, 1_000, PathKind::Page),
            req(Some("slow"), 7, 2_000_000, 400_000, PathKind::Page),
            req(Some("fast"), 8, 2_000_000, 2_000, PathKind::Page),
            req(Some("slow"), 9, 5_000_000, 400_000, PathKind::Page),
        ];
        let gap = |pid, s: i64, e: i64| AuthGap {
            pid,
            start: s,
            end: e,
            epoch_start: Some(s),
            epoch_end: Some(e),
            seconds: (e - s) as f64 / 1e6,
            detail: None,
            at: "t:1".into(),
        };
        let mut h = BTreeMap::new();
        h.insert("slow".to_string(), pred(0.38));
        h.insert("fast".to_string(), pred(0.001));
        h.insert("nobody".to_string(), pred(0.001));
        let ev = Evidence {
            htpasswd: Some(h),
            requests: Some(requests),
            // PID+time; a write by pid 3 after the gap; nothing matches.
            gaps: Some(vec![
                gap(7, 2_010_000, 2_390_000),
                gap(3, 9_000_000, 9_300_000),
                gap(4, 90_000_000, 90_380_000),
            ]),
            writes: vec![LogWrite {
                pid: 3,
                at: 9_400_000,
                user: Some("ghost".into()),
                string_limit: None,
            }],
            threshold_seconds: 0.05,
        };
        let r = join(&ev);
        assert_eq!(r.attribution.by_pid_and_time, 1);
        assert_eq!(r.attribution.by_log_write, 1);
        assert_eq!(r.attribution.unattributed, 1);
        let names: Vec<&str> = r.users.iter().map(|u| u.user.as_str()).collect();
        assert_eq!(names[0], "slow");
        let slow = &r.users[0];
        assert_eq!(slow.requests, 2);
        assert_eq!(slow.observed_gaps.unwrap().count, 1);
        assert_eq!(slow.gaps_match_prediction, Some(true));
        // Extra latency: 0.4 s against the 1 ms page baseline.
        assert!((slow.extra_latency_seconds.unwrap() - 0.399).abs() < 1e-9);
        assert_eq!(slow.latency_matches_prediction, Some(true));
        assert!((r.predicted_cpu_seconds.unwrap() - (0.76 + 0.001)).abs() < 1e-9);
        assert_eq!(r.users_not_in_htpasswd, ["ghost"]);
        assert!(r
            .htpasswd_users_without_gaps
            .contains(&"nobody".to_string()));
        assert_eq!(r.per_day.len(), 1);
        assert_eq!(r.per_day[0].date, "1970-01-01");
    }

    #[test]
    fn log_only_ranks_by_extra_latency() {
        let requests = vec![
            req(None, 1, 0, 1_000, PathKind::Image),
            req(Some("a"), 1, 0, 201_000, PathKind::Image),
            req(Some("b"), 1, 0, 61_000, PathKind::Image),
            req(Some("c"), 1, 0, 1_500, PathKind::Image),
        ];
        let r = join(&Evidence {
            requests: Some(requests),
            threshold_seconds: 0.05,
            ..Evidence::default()
        });
        let names: Vec<&str> = r.users.iter().map(|u| u.user.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(r.users[0].ranked_by, Some("latency"));
    }
}
