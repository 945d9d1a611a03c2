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
//!   user (the `attribute` module: the methods, and the rule against guessing).
//!
//! Predictions measured here are scaled to the server's speed when the evidence holds
//! the server's own times (see [`Calibration`]). Per user the report also gives page
//! views (a page and its assets, see [`PAGE_VIEW_SECONDS`]) and the password-check time
//! each one costs.
//!
//! Users are ranked by cost per request: the predicted verification time when the
//! htpasswd file is given, else the median observed gap, else the median extra
//! latency. Nothing here ever holds a password hash.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::quantile::nearest_rank;

mod attribute;
mod calibrate;
mod model;
mod views;
mod writes;

use attribute::{Index, Method, Unattributed};
pub use calibrate::{Basis, Calibration, MIN_OBSERVED_SECONDS};
pub use model::{path_kind, AuthGap, LogWrite, PathKind, Request, Turn, HEAD_MAX};
pub use views::PAGE_VIEW_SECONDS;
pub use writes::{scan_log_writes, unprefixed_thread, DateFn, UserSlot, WriteScan};

/// What the htpasswd file says of one user (from `tlsgap-auth`; no hash).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Predicted {
    /// `bcrypt`, `apr1`, `sha1`, ...
    pub scheme: &'static str,
    /// The scheme with its work factor, to re-advise on the server's time.
    #[serde(skip)]
    pub kind: Option<tlsgap_auth::Scheme>,
    /// bcrypt cost.
    pub cost: Option<u32>,
    /// SHA-crypt rounds.
    pub rounds: Option<u32>,
    /// Seconds per verification measured on this machine (median of the samples).
    pub verify_seconds: Option<f64>,
    /// The fastest and slowest sample on this machine.
    pub verify_range_seconds: Option<[f64; 2]>,
    /// How that figure was obtained.
    pub how_measured: String,
    /// Seconds per verification on the report's basis (`calibration`): this
    /// machine's figure × the server's time ratio.
    pub server_seconds: Option<f64>,
    /// Over the threshold (on the report's basis).
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
    /// `requests × verify_seconds` (× `checks_per_request`).
    pub predicted_cpu_seconds: Option<f64>,
    /// Password checks per request, when the traces show the user's requests checked
    /// more than once (nginx checks again after an internal redirect): the cost per
    /// request and the predictions count that many checks.
    pub checks_per_request: Option<f64>,
    /// The user's request durations.
    pub latency: Option<Spread>,
    /// Median of (duration − median unauthenticated duration of the same path kind).
    pub extra_latency_seconds: Option<f64>,
    /// Whether the extra latency matches the predicted verification time (within
    /// half of it, or 20 ms).
    pub latency_matches_prediction: Option<bool>,
    /// `auth` gaps attributed to the user.
    pub observed_gaps: Option<Spread>,
    /// Of those, gaps of requests that ended 401 (a wrong password is verified too),
    /// when the evidence gave the status.
    pub observed_gaps_401: u64,
    /// Of those, gaps whose request's status the evidence did not give (not counted in
    /// `observed_gaps_401` whatever it was).
    pub observed_gaps_status_unknown: u64,
    /// Page views: a page and the assets the same client loaded with it.
    pub page_views: Option<u64>,
    /// Requests per page view.
    pub requests_per_page_view: Option<f64>,
    /// Password-check seconds per page view: requests per view × cost per request.
    pub auth_seconds_per_page_view: Option<f64>,
    /// Over the page budget: the largest bcrypt cost that brings a page view under
    /// it (`None` when even cost 4 would not, or the user is not bcrypt).
    pub suggested_cost_per_page: Option<u32>,
    /// A sentence on page views, when one is over the budget.
    pub page_advice: Option<String>,
    /// Users with gaps but no measured htpasswd entry: the bcrypt costs whose time
    /// fits their median gap (set by the caller, who can measure bcrypt).
    pub gaps_fit_bcrypt_costs: Option<[u32; 2]>,
    /// The same in words, with whose speed it was compared at.
    pub gap_note: Option<String>,
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
    /// By the worker's next log write, cut before the user ended, matched to its
    /// access-log line (client, start of the user, time).
    pub by_log_line: u64,
    /// Not attributed.
    pub unattributed: u64,
    /// Of the unattributed: the worker's next log write was cut by strace's `-s`
    /// before the user name (and the access log did not pin its line).
    pub user_cut_off: u64,
    /// Of the unattributed: the evidence named more than one user.
    pub ambiguous: u64,
    /// `auth` gaps with no read of the password file before them
    /// ([`AuthGap::after_read`]) in a request that has a check that has one: its
    /// worker waiting for the CPU, not a check; not counted above.
    pub not_checks: u64,
}

/// `tlsgap auth --format json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuthReport {
    /// Per-request budget (seconds) above which a user is flagged.
    pub threshold_seconds: f64,
    /// Password-check seconds per page view above which a user gets page advice.
    pub page_budget_seconds: f64,
    /// Whose speed the predictions are on.
    pub calibration: Calibration,
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
    /// Where the traced workers turned to a request (two checks with no turn between
    /// them are one request's).
    pub turns: Vec<Turn>,
    /// The log's UTC offset (minutes) the `-t`/`-tt` traces' times were read in, when
    /// no zone was given for them (`--trace-tz`): strace prints the local time of
    /// where it ran, which may be another zone (then said in a note).
    pub trace_zone_assumed: Option<i16>,
    /// Flag threshold, seconds.
    pub threshold_seconds: f64,
    /// Page budget, seconds of password checks per page view (0: none given, see
    /// [`DEFAULT_PAGE_BUDGET_SECONDS`]).
    pub page_budget_seconds: f64,
    /// Whether the log's request times have sub-second resolution (else `%t`'s
    /// second: a request logged at `10:00:07` began within that second).
    pub sub_second_times: bool,
}

/// The default page budget: half a second of password checks per page view.
pub const DEFAULT_PAGE_BUDGET_SECONDS: f64 = 0.5;

fn matches(observed: f64, predicted: f64) -> bool {
    (observed - predicted).abs() <= (0.5 * predicted).max(0.020)
}

/// The `YYYY-MM-DD` of `us` (epoch µs) at `offset` minutes.
fn date_of(us: i64, offset: i16) -> String {
    let secs = us.div_euclid(1_000_000) + i64::from(offset) * 60;
    let (y, m, d) = tlsgap_parser::time::civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
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
        gaps_401: u64,
        gaps_unknown_status: u64,
        in_log: bool,
        lines: Vec<usize>,
        /// The traced requests its gaps were checks of ([`requests_checked`]).
        checked: std::collections::BTreeSet<usize>,
    }
    let page_budget = if ev.page_budget_seconds > 0.0 {
        ev.page_budget_seconds
    } else {
        DEFAULT_PAGE_BUDGET_SECONDS
    };
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
    // Per day: requests and the verification seconds measured here (scaled to the
    // report's basis at the end: the scaling is linear).
    let mut per_day: BTreeMap<(String, String), (u64, f64)> = BTreeMap::new();
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
        for (i, r) in requests.iter().enumerate() {
            let Some(u) = &r.user else { continue };
            let acc = users.entry(u.clone()).or_default();
            acc.in_log = true;
            acc.requests += 1;
            acc.lines.push(i);
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
                let day_off = r.day_offset_minutes.unwrap_or(off);
                let slot = per_day.entry((date_of(b, day_off), u.clone())).or_default();
                slot.0 += 1;
                slot.1 += predicted;
            }
        }
    }
    let mut attribution = Attribution::default();
    if let Some(gaps) = &ev.gaps {
        evidence.push("traces");
        let threads = ThreadTimes::of(gaps, &ev.turns, &ev.writes);
        let thread = |pid: u32| threads.get(&pid).map(ThreadTimes::view).unwrap_or_default();
        let request_of = requests_checked(gaps, thread);
        let index = Index::new(requests, ev.sub_second_times, &ev.writes);
        let mut cut_limit: Option<usize> = None;
        // A gap with no password read before it, in a request with a check that has
        // one, is that request's worker waiting for the CPU, not a check.
        let read_in: std::collections::BTreeSet<usize> = gaps
            .iter()
            .zip(&request_of)
            .filter(|(g, _)| g.after_read)
            .map(|(_, &r)| r)
            .collect();
        for (k, g) in gaps.iter().enumerate() {
            let request = request_of.get(k).copied().unwrap_or(usize::MAX);
            if !g.after_read && read_in.contains(&request) {
                attribution.not_checks += 1;
                continue;
            }
            match attribute::attribute(g, thread(g.pid), &index, &ev.writes) {
                Ok(payer) => {
                    match payer.method {
                        Method::PidAndTime => attribution.by_pid_and_time += 1,
                        Method::LogWrite => attribution.by_log_write += 1,
                        Method::LogLine => attribution.by_log_line += 1,
                        Method::Time => attribution.by_time += 1,
                    }
                    let acc = users.entry(payer.user).or_default();
                    acc.gaps.push(g.seconds);
                    if let Some(&r) = request_of.get(k) {
                        acc.checked.insert(r);
                    }
                    match payer.status {
                        Some(401) => acc.gaps_401 += 1,
                        Some(_) => {}
                        None => acc.gaps_unknown_status += 1,
                    }
                }
                Err(why) => {
                    attribution.unattributed += 1;
                    match why {
                        Unattributed::Cut(limit) => {
                            attribution.user_cut_off += 1;
                            cut_limit = cut_limit.max(limit);
                        }
                        Unattributed::Ambiguous => attribution.ambiguous += 1,
                        Unattributed::NoEvidence => {}
                    }
                }
            }
        }
        if attribution.user_cut_off > 0 {
            notes.push(format!(
                "{} auth gaps: the worker's next access-log write was cut by strace's \
                 string limit before the user name, and no single access-log line fits \
                 it; trace with -s {} (or more) to see it",
                attribution.user_cut_off,
                cut_limit.unwrap_or(256)
            ));
        }
        if attribution.ambiguous > 0 {
            notes.push(format!(
                "{} auth gaps not tied to a user: the requests that could have paid for \
                 them belong to more than one user (requests of several users in flight, \
                 no log write of the worker to tell)",
                attribution.ambiguous
            ));
        }
        if attribution.not_checks > 0 {
            notes.push(format!(
                "{} auth gaps of requests checked in another gap had no read of the password \
                 file before them (their worker waiting for the CPU): not counted as checks",
                attribution.not_checks
            ));
        }
        let no_evidence =
            attribution.unattributed - attribution.user_cut_off - attribution.ambiguous;
        if no_evidence > 0 {
            notes.push(format!(
                "{no_evidence} auth gaps could not be tied to a user: no access-log write \
                 of the same worker followed them before it checked the next request's \
                 password, and no access-log line (with %P and %D) covers them"
            ));
        }
    }
    if let (Some(log_offset), Some(gaps)) = (ev.trace_zone_assumed, &ev.gaps) {
        let index = Index::new(requests, ev.sub_second_times, &ev.writes);
        notes.extend(trace_zone_note(&index, gaps, &ev.writes, log_offset));
    }
    // Observed times against this machine's predictions: the server's speed.
    let here = |user: &str| -> Option<f64> {
        ev.htpasswd
            .as_ref()
            .and_then(|h| h.get(user))
            .and_then(|p| p.verify_seconds)
    };
    let mut gap_pairs = Vec::new();
    let mut latency_pairs = Vec::new();
    for (user, acc) in &users {
        let Some(h) = here(user) else { continue };
        if let Some(g) = Spread::of(acc.gaps.clone()) {
            gap_pairs.push(calibrate::Pair {
                user: user.clone(),
                observed: g.p50_seconds,
                samples: g.count,
                here: h,
            });
        }
        if let Some(x) = Spread::of(acc.extra.clone()) {
            latency_pairs.push(calibrate::Pair {
                user: user.clone(),
                observed: x.p50_seconds,
                samples: x.count,
                here: h,
            });
        }
    }
    let calibration = calibrate::calibrate(&gap_pairs, &latency_pairs);
    let ratio = calibration.server_time_ratio;
    // Checks per request, where the traces show a request checked more than once.
    let mut checks: BTreeMap<String, f64> = BTreeMap::new();
    for (user, acc) in &users {
        let (n, r) = (acc.gaps.len(), acc.checked.len());
        if r > 0 && n > r {
            let per = n as f64 / r as f64;
            checks.insert(user.clone(), per);
            notes.push(format!(
                "{user}: the traces show {n} password checks in {r} requests (a request \
                 checked more than once: nginx checks again after an internal redirect, \
                 such as `index` for a directory URL); the cost per request counts \
                 {per:.2} checks"
            ));
        }
    }
    let factor = |user: &str| checks.get(user).copied().unwrap_or(1.0);
    let mut per_day_total: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for ((date, user), (n, secs)) in per_day {
        let slot = per_day_total.entry(date).or_default();
        slot.0 += n;
        slot.1 += secs * factor(&user);
    }
    let mut rows: Vec<UserCost> = users
        .into_iter()
        .map(|(user, acc)| {
            let per_request = checks.get(&user).copied();
            let times = per_request.unwrap_or(1.0);
            let predicted = ev
                .htpasswd
                .as_ref()
                .and_then(|h| h.get(&user))
                .cloned()
                .map(|p| on_basis(p, &calibration, ev.threshold_seconds, times));
            let verify = predicted.as_ref().and_then(|p| p.server_seconds);
            let latency = Spread::of(acc.durations);
            let extra = Spread::of(acc.extra).map(|s| s.p50_seconds);
            let gaps = Spread::of(acc.gaps);
            // A user the htpasswd file given does not hold has no hash to check
            // (mod_authn_file answers "not found" at once): its extra latency is the
            // requests' noise, not a password check's cost.
            let unknown = ev.htpasswd.as_ref().is_some_and(|h| !h.contains_key(&user));
            let (cost, by) = if let Some(v) = verify {
                (Some(v * times), Some("htpasswd"))
            } else if let Some(g) = gaps {
                (Some(g.p50_seconds * times), Some("trace"))
            } else if let Some(x) = extra.filter(|_| !unknown) {
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
            let views = ev
                .requests
                .is_some()
                .then(|| views::page_views(acc.lines.iter().filter_map(|&i| requests.get(i))));
            let per_view = views.and_then(views::Views::per_view);
            let per_page = per_view.zip(cost).map(|(n, c)| n * c);
            let (suggested_cost_per_page, page_advice) = match (per_view, per_page) {
                (Some(n), Some(secs)) if secs > page_budget => {
                    page_advice(n, secs, page_budget, predicted.as_ref())
                }
                _ => (None, None),
            };
            UserCost {
                rank: 0,
                cost_per_request_seconds: cost,
                ranked_by: by,
                total_cost_seconds: cost
                    .filter(|_| ev.requests.is_some())
                    .map(|c| c * acc.requests as f64),
                predicted_cpu_seconds: verify
                    .filter(|_| ev.requests.is_some())
                    .map(|v| v * times * acc.requests as f64),
                checks_per_request: per_request,
                latency_matches_prediction: verify.zip(extra).map(|(v, x)| matches(x, v)),
                gaps_match_prediction: verify.zip(gaps).map(|(v, g)| matches(g.p50_seconds, v)),
                htpasswd: predicted,
                requests: acc.requests,
                requests_401: acc.r401,
                latency,
                extra_latency_seconds: extra,
                observed_gaps: gaps,
                observed_gaps_401: acc.gaps_401,
                observed_gaps_status_unknown: acc.gaps_unknown_status,
                page_views: views.map(|v| v.views),
                requests_per_page_view: per_view,
                auth_seconds_per_page_view: per_page,
                suggested_cost_per_page,
                page_advice,
                gaps_fit_bcrypt_costs: None,
                gap_note: None,
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
        page_budget_seconds: page_budget,
        calibration,
        evidence,
        users: rows,
        per_day: per_day_total
            .into_iter()
            .map(|(date, (requests, secs))| DayCost {
                date,
                requests,
                predicted_cpu_seconds: secs * ratio,
            })
            .collect(),
        predicted_cpu_seconds,
        attribution,
        users_not_in_htpasswd,
        htpasswd_users_without_gaps,
        notes,
    }
}

/// How long a request without a logged duration is taken to last when the traces'
/// times are held against the log's ([`trace_zone_note`]), µs.
const ZONE_CHECK_REQUEST_US: i64 = 10_000_000;

/// When most of the traced password checks and log writes fall outside every logged
/// request, and a shift by whole quarter hours puts most of them inside one: a note
/// that the traces' `-t`/`-tt` times look like another zone's than the log's
/// (`log_offset` minutes east of UTC, what they were read in), naming the zone when
/// one shift fits best.
fn trace_zone_note(
    index: &Index<'_>,
    gaps: &[AuthGap],
    writes: &[LogWrite],
    log_offset: i16,
) -> Option<String> {
    const QUARTER_US: i64 = 15 * 60_000_000;
    let covered = index.coverage(ZONE_CHECK_REQUEST_US);
    let mut events: Vec<i64> = gaps
        .iter()
        .filter_map(|g| Some(g.epoch_start? + (g.epoch_end? - g.epoch_start?) / 2))
        .chain(writes.iter().filter_map(|w| w.epoch_at))
        .collect();
    if events.len() > 1000 {
        let step = events.len().div_ceil(1000);
        events = events.into_iter().step_by(step).collect();
    }
    let fits = |shift: i64| events.iter().filter(|&&e| covered.holds(e + shift)).count();
    let (all, here) = (events.len(), fits(0));
    if all < 2 || here * 2 >= all {
        return None;
    }
    // Zones lie within a day of each other; the day the times were dated on may be
    // off by one as well.
    let mut best = (0, 0, false);
    for k in (-96..=96).filter(|&k| k != 0) {
        let n = fits(k * QUARTER_US);
        if n > best.0 {
            best = (n, k, true);
        } else if n == best.0 {
            best.2 = false;
        }
    }
    let (n, k, unique) = best;
    if n < 2 || n * 2 < all {
        return None;
    }
    let mut text = format!(
        "{} of {all} traced password checks and log writes fall in no logged request as \
         the traces' -t/-tt times were read (in the log's zone, UTC{}), ",
        all - here,
        utc_offset(i64::from(log_offset))
    );
    if unique {
        let minutes = i64::from(log_offset) - k * 15;
        let zone = (minutes + 720).rem_euclid(1440) - 720;
        text.push_str(&format!(
            "and {n} do once shifted by {}: strace prints the local time of the zone it ran \
             in, which looks like UTC{z}; give --trace-tz {z} (or the zone's name)",
            shift_text(k * 15),
            z = utc_offset(zone),
        ));
    } else {
        text.push_str(&format!(
            "and {n} do once shifted by whole hours: strace prints the local time of the \
             zone it ran in; give that zone with --trace-tz"
        ));
    }
    Some(text)
}

/// `+09:00`, `-05:00`, `+00:00` for minutes east of UTC.
fn utc_offset(minutes: i64) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.abs();
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

/// `+5 h`, `-9 h 30 min`.
fn shift_text(minutes: i64) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.abs();
    match m % 60 {
        0 => format!("{sign}{} h", m / 60),
        r => format!("{sign}{} h {r} min", m / 60),
    }
}

/// Per thread, sorted: the starts of its auth gaps, its turns ([`Turn`]) and its
/// access-log writes ([`attribute::Thread`] borrows them).
#[derive(Debug, Default)]
struct ThreadTimes {
    gaps: Vec<i64>,
    turns: Vec<i64>,
    wrote: Vec<i64>,
}

impl ThreadTimes {
    fn of(gaps: &[AuthGap], turns: &[Turn], writes: &[LogWrite]) -> BTreeMap<u32, ThreadTimes> {
        let mut out: BTreeMap<u32, ThreadTimes> = BTreeMap::new();
        for g in gaps {
            out.entry(g.pid).or_default().gaps.push(g.start);
        }
        for t in turns {
            out.entry(t.pid).or_default().turns.push(t.at);
        }
        for w in writes {
            out.entry(w.pid).or_default().wrote.push(w.at);
        }
        for t in out.values_mut() {
            t.gaps.sort_unstable();
            t.turns.sort_unstable();
            t.wrote.sort_unstable();
        }
        out
    }

    fn view(&self) -> attribute::Thread<'_> {
        attribute::Thread {
            gaps: &self.gaps,
            turns: &self.turns,
            wrote: &self.wrote,
        }
    }
}

/// Per gap, the traced request it checked the password of: a number shared by a
/// thread's consecutive gaps with neither a turn to a request ([`Turn`]) nor an
/// access-log write of the thread between them. A thread without turns traced gives
/// each gap its own.
fn requests_checked<'t>(
    gaps: &[AuthGap],
    thread: impl Fn(u32) -> attribute::Thread<'t>,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..gaps.len()).collect();
    order.sort_by_key(|&k| gaps.get(k).map(|g| (g.pid, g.start)));
    let mut out = vec![0; gaps.len()];
    let mut request = 0;
    let mut last: Option<&AuthGap> = None;
    for k in order {
        let Some(g) = gaps.get(k) else { continue };
        let same = last.is_some_and(|p| {
            let t = thread(g.pid);
            p.pid == g.pid && !t.turns.is_empty() && !t.moved_on(p.end, g.start)
        });
        if !same {
            request += 1;
        }
        if let Some(slot) = out.get_mut(k) {
            *slot = request;
        }
        last = Some(g);
    }
    out
}

/// `p` with its server-time figure, and its verdict and advice on that basis, for
/// requests that each take `checks` password checks.
fn on_basis(mut p: Predicted, c: &Calibration, threshold: f64, checks: f64) -> Predicted {
    p.server_seconds = p.verify_seconds.map(|v| v * c.server_time_ratio);
    if c.basis != Basis::ThisMachine || checks > 1.0 {
        if let Some(kind) = p.kind {
            let place = match checks > 1.0 {
                true => format!("{}, {checks:.2} password checks a request", c.basis.place()),
                false => c.basis.place().to_string(),
            };
            let per_request = p.server_seconds.map(|s| s * checks);
            let a = tlsgap_auth::advice::advise_at(kind, per_request, threshold, &place);
            p.flagged = a.flagged;
            p.suggested_cost = a.suggested_cost;
            p.advice = a.text;
        }
    }
    p
}

/// The bcrypt cost that brings a page view under `budget`, and a sentence saying so.
fn page_advice(
    per_view: f64,
    per_page: f64,
    budget: f64,
    p: Option<&Predicted>,
) -> (Option<u32>, Option<String>) {
    let human = tlsgap_auth::advice::human_seconds;
    let mut text = format!(
        "{per_view:.1} requests per page view, {} of password checks per page view \
         (page budget {})",
        human(per_page),
        human(budget)
    );
    let lower = match (p.and_then(|p| p.kind), p.and_then(|p| p.server_seconds)) {
        (Some(tlsgap_auth::Scheme::Bcrypt { cost }), Some(secs)) if secs > 0.0 => {
            let at = |c: u32| per_view * secs / 2f64.powi(i32::try_from(cost - c).unwrap_or(31));
            let lower = (4..=cost).rev().find(|&c| at(c) < budget);
            match lower {
                Some(c) => text.push_str(&format!(
                    "; bcrypt cost {c} would take {} per page view, at the price of a \
                     stored hash {}× cheaper to attack",
                    human(at(c)),
                    1u64 << (cost - c).min(63)
                )),
                None => text.push_str("; even bcrypt cost 4 would not fit"),
            }
            lower
        }
        _ => None,
    };
    (lower, Some(text))
}

/// Columns of [`auth_rows`].
pub const AUTH_COLUMNS: [(&str, crate::CellType); 26] = {
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
        ("server_seconds", Float),
        ("page_views", Int),
        ("requests_per_page_view", Float),
        ("auth_seconds_per_page_view", Float),
        ("suggested_cost_per_page", Int),
        ("observed_gaps_401", Int),
        ("observed_gaps_status_unknown", Int),
        ("checks_per_request", Float),
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
            h.and_then(|p| p.server_seconds).into(),
            u.page_views.into(),
            u.requests_per_page_view.into(),
            u.auth_seconds_per_page_view.into(),
            u.suggested_cost_per_page.into(),
            u.observed_gaps_401.into(),
            u.observed_gaps_status_unknown.into(),
            u.checks_per_request.into(),
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
            kind: Some(tlsgap_auth::Scheme::Bcrypt { cost: 12 }),
            cost: Some(12),
            rounds: None,
            verify_seconds: Some(secs),
            verify_range_seconds: None,
            how_measured: "measured".into(),
            server_seconds: None,
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
            day_offset_minutes: None,
            duration_us: Some(dur),
            pid: Some(pid),
            kind,
            client: Some("192.0.2.1".into()),
            head: None,
            line_len: None,
        }
    }

    #[test]
    fn a_gap_without_a_password_read_beside_a_check_is_no_check() {
        const S: i64 = 1_000_000;
        // Event MPM, 18 requests on 2 cores: close(htpasswd), 0.6 s of bcrypt, a stat,
        // 13 ms waiting for the CPU, then the log write; the worker read the request
        // (a turn) before.
        let gap = |s: i64, e: i64, after_read: bool| AuthGap {
            pid: 9,
            start: s,
            end: e,
            epoch_start: None,
            epoch_end: None,
            seconds: (e - s) as f64 / 1e6,
            detail: None,
            after_read,
            at: "t:1".into(),
        };
        let write = |at: i64, user: &str| LogWrite {
            pid: 9,
            at,
            user: Some(user.into()),
            string_limit: None,
            epoch_at: None,
            head: Vec::new(),
            cut: true,
            fd: Some(6),
            len: None,
        };
        let ev = |gaps: Vec<AuthGap>| Evidence {
            gaps: Some(gaps),
            writes: vec![write(2 * S, "bob"), write(5 * S, "carol")],
            turns: vec![Turn { pid: 9, at: S / 2 }, Turn { pid: 9, at: 3 * S }],
            threshold_seconds: 0.05,
            ..Evidence::default()
        };
        let r = join(&ev(vec![
            gap(S, S + 600_000, true),
            gap(S + 700_000, S + 713_000, false),
            gap(3 * S + 100_000, 3 * S + 700_000, true),
        ]));
        assert_eq!(r.attribution.not_checks, 1);
        assert_eq!(r.attribution.by_log_write, 2);
        let bob = r.users.iter().find(|u| u.user == "bob").unwrap();
        assert_eq!(bob.observed_gaps.map(|g| g.count), Some(1));
        assert_eq!(bob.checks_per_request, None);
        // Without any read seen before a gap (`-e trace=` leaving reads out), each gap
        // of the request stays a check.
        let r = join(&ev(vec![
            gap(S, S + 600_000, false),
            gap(S + 700_000, S + 713_000, false),
        ]));
        assert_eq!(r.attribution.not_checks, 0);
        let bob = r.users.iter().find(|u| u.user == "bob").unwrap();
        assert_eq!(bob.checks_per_request, Some(2.0));
    }

    #[test]
    fn traces_read_in_another_zone_are_said_to_be() {
        // Requests logged in UTC+01:00 with their %P and %D; strace ran under
        // TZ=America/New_York: a check at 17:45 in the log's zone is stamped 11:45,
        // read in the log's zone 6 h early.
        const S: i64 = 1_000_000;
        let t0 = 1_795_000_000 * S;
        let requests: Vec<Request> = (0..4)
            .map(|i| req(Some("bob"), 7, t0 + i * 2 * S, 400_000, PathKind::Page))
            .collect();
        let gap = |at: i64| AuthGap {
            pid: 7,
            start: at,
            end: at + 300_000,
            epoch_start: Some(at),
            epoch_end: Some(at + 300_000),
            seconds: 0.3,
            detail: None,
            after_read: true,
            at: "trace.7:3".into(),
        };
        let ev = |shift: i64, assumed: Option<i16>| Evidence {
            requests: Some(requests.clone()),
            gaps: Some(
                (0..4)
                    .map(|i| gap(t0 + i * 2 * S + 50_000 - shift))
                    .collect(),
            ),
            trace_zone_assumed: assumed,
            sub_second_times: true,
            ..Evidence::default()
        };
        let said = |r: &AuthReport| r.notes.iter().find(|n| n.contains("--trace-tz")).cloned();
        assert_eq!(said(&join(&ev(0, Some(60)))), None);
        let r = join(&ev(6 * 3600 * S, Some(60)));
        let note = said(&r).expect("a note on the zone");
        assert!(note.starts_with("4 of 4 traced password checks"), "{note}");
        assert!(note.contains("shifted by +6 h"), "{note}");
        assert!(note.contains("UTC-05:00; give --trace-tz -05:00"), "{note}");
        // A zone given (or -ttt stamps): nothing to say.
        assert_eq!(said(&join(&ev(6 * 3600 * S, None))), None);
        // India against a log in UTC, past midnight in India: 01:30 on the next day
        // there, read as 01:30 on the log's day, 18 h 30 min early.
        let r = join(&ev((24 * 60 - 5 * 60 - 30) * 60 * S, Some(0)));
        let note = said(&r).expect("a note on the zone");
        assert!(note.contains("UTC+05:30"), "{note}");
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
            after_read: true,
            at: "t:1".into(),
        };
        let write = |at: i64, user: Option<&str>| LogWrite {
            pid: 5,
            at,
            user: user.map(str::to_string),
            string_limit: user.is_none().then_some(64),
            epoch_at: None,
            head: Vec::new(),
            cut: true,
            fd: Some(8),
            len: None,
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
        // No access log: the write names bob, not his request's status.
        assert_eq!(
            (
                r.users[0].observed_gaps_401,
                r.users[0].observed_gaps_status_unknown
            ),
            (0, 1)
        );
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
            after_read: true,
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
                epoch_at: None,
                head: b"127.0.0.1 - ghost [".to_vec(),
                cut: true,
                fd: Some(8),
                len: None,
            }],
            turns: Vec::new(),
            trace_zone_assumed: None,
            threshold_seconds: 0.05,
            page_budget_seconds: 0.5,
            sub_second_times: true,
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
        // Its PID and time window name its line, and so its status (200).
        assert_eq!(
            (slow.observed_gaps_401, slow.observed_gaps_status_unknown),
            (0, 0)
        );
        assert_eq!(slow.gaps_match_prediction, Some(true));
        // Extra latency: 0.4 s against the 1 ms page baseline.
        assert!((slow.extra_latency_seconds.unwrap() - 0.399).abs() < 1e-9);
        assert_eq!(slow.latency_matches_prediction, Some(true));
        // No user has two gaps: the server's speed comes from slow's extra latency.
        assert_eq!(r.calibration.basis, Basis::AccessLogLatency);
        assert_eq!(r.calibration.users, ["slow"]);
        let ratio = 0.399 / 0.38;
        assert!((r.calibration.server_time_ratio - ratio).abs() < 1e-9);
        assert!((r.predicted_cpu_seconds.unwrap() - (0.76 + 0.001) * ratio).abs() < 1e-9);
        let advice = slow.htpasswd.as_ref().unwrap().advice.as_deref().unwrap();
        assert!(
            advice.contains("399 ms per request on the server"),
            "{advice}"
        );
        assert_eq!(r.users_not_in_htpasswd, ["ghost"]);
        assert!(r
            .htpasswd_users_without_gaps
            .contains(&"nobody".to_string()));
        assert_eq!(r.per_day.len(), 1);
        assert_eq!(r.per_day[0].date, "1970-01-01");
    }

    #[test]
    fn log_only_ranks_by_extra_latency() {
        let requests = || {
            vec![
                req(None, 1, 0, 1_000, PathKind::Image),
                req(Some("a"), 1, 0, 201_000, PathKind::Image),
                req(Some("b"), 1, 0, 61_000, PathKind::Image),
                req(Some("c"), 1, 0, 1_500, PathKind::Image),
            ]
        };
        let r = join(&Evidence {
            requests: Some(requests()),
            threshold_seconds: 0.05,
            ..Evidence::default()
        });
        let names: Vec<&str> = r.users.iter().map(|u| u.user.as_str()).collect();
        assert_eq!(names, ["a", "b", "c"]);
        assert_eq!(r.users[0].ranked_by, Some("latency"));
        // With an htpasswd file that does not hold them, the same latencies are no
        // password check's: no cost (a real Apache capture showed an unknown user at
        // 4.1 ms, request noise).
        let mut h = BTreeMap::new();
        h.insert("b".to_string(), pred(0.06));
        let r = join(&Evidence {
            htpasswd: Some(h),
            requests: Some(requests()),
            threshold_seconds: 0.05,
            ..Evidence::default()
        });
        let a = r.users.iter().find(|u| u.user == "a").unwrap();
        assert_eq!((a.cost_per_request_seconds, a.ranked_by), (None, None));
        let b = r.users.iter().find(|u| u.user == "b").unwrap();
        assert_eq!(b.ranked_by, Some("htpasswd"));
    }
}
