//! The monitoring check (`tlsgap check`): figures judged against thresholds, as the
//! Monitoring Plugins Development Guidelines want them. A figure is over a threshold
//! when it is strictly greater; the worst state wins; anything that keeps the figures
//! from being trusted (an unreadable input, nothing parsed, `--strict` stopping, an
//! unusable htpasswd file) is UNKNOWN.
//!
//! Texts may contain file and user names: [`CheckResult::status_line`] takes the
//! front end's cleaning for them.

use std::path::PathBuf;

use tlsgap_auth::{AuthFileReport, MeasureOptions};

use crate::lines::RunSummary;
use crate::tls::{self, TlsOptions};
use crate::RunOptions;

/// A plugin state; the discriminant is the exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum State {
    /// 0.
    Ok = 0,
    /// 1.
    Warning = 1,
    /// 2.
    Critical = 2,
    /// 3. Sorts last, so that it wins over the others.
    Unknown = 3,
}

impl State {
    /// `OK`, `WARNING`, `CRITICAL`, `UNKNOWN`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Ok => "OK",
            State::Warning => "WARNING",
            State::Critical => "CRITICAL",
            State::Unknown => "UNKNOWN",
        }
    }

    /// The exit code.
    pub fn exit_code(self) -> u8 {
        self as u8
    }

    /// The state of `value` against thresholds (strictly greater raises it).
    pub fn of(value: f64, warn: f64, crit: f64) -> State {
        if value > crit {
            State::Critical
        } else if value > warn {
            State::Warning
        } else {
            State::Ok
        }
    }
}

/// A perfdata number: plain decimal (C locale, never an exponent), at most 9 decimals.
pub fn num(v: f64) -> String {
    let s = format!("{v:.9}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// A share as a percentage for people: `4.20%` for figures, `1%` for thresholds.
fn pct(v: f64, exact: bool) -> String {
    if exact && v > 0.0 && v < 0.000_05 {
        // Not "0.00%" for a figure that is over a threshold of 0.
        "<0.01%".into()
    } else if exact {
        format!("{:.2}%", v * 100.0)
    } else {
        format!("{}%", num(v * 100.0))
    }
}

fn share_item(what: &str, label: &str, value: f64, l: Limits) -> Item {
    let shown = |r: &Range| match r.upper_only() {
        Some(end) => pct(end, false),
        None => r.text(),
    };
    Item {
        state: l.state(value),
        text: format!(
            "{what} {} (warn {}, crit {})",
            pct(value, true),
            shown(&l.warn),
            shown(&l.crit)
        ),
        perf: format!(
            "{label}={};{};{};0;1",
            num(value),
            l.warn.perf_text(),
            l.crit.perf_text()
        ),
    }
}

/// A threshold range as the Monitoring Plugins guidelines define it: `10` (alert
/// outside 0..10), `10:` (below 10), `~:10` (above 10), `10:20` (outside 10..20),
/// `@10:20` (inside 10..20, bounds included).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Lower bound (`f64::NEG_INFINITY` for `~`).
    pub start: f64,
    /// Upper bound (`f64::INFINITY` when open).
    pub end: f64,
    /// `@`: alert inside the range instead of outside.
    pub inside: bool,
}

impl Range {
    /// `0..end`: alert above `end` (the plain `--legacy-warn 0.01` thresholds).
    pub fn upto(end: f64) -> Range {
        Range {
            start: 0.0,
            end,
            inside: false,
        }
    }

    /// Parse the guidelines' syntax.
    pub fn parse(s: &str) -> std::result::Result<Range, String> {
        let bad = |why: &str| {
            format!("{s:?} is not a threshold range ({why}): 10, 10:, ~:10, 10:20 or @10:20")
        };
        let t = s.trim();
        let (inside, t) = match t.strip_prefix('@') {
            Some(rest) => (true, rest),
            None => (false, t),
        };
        let number = |x: &str| -> std::result::Result<f64, String> {
            x.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad("a bound is not a number"))
        };
        let (start, end) = match t.split_once(':') {
            None => (0.0, number(t)?),
            Some((a, b)) => {
                let start = if a == "~" {
                    f64::NEG_INFINITY
                } else if a.is_empty() {
                    0.0
                } else {
                    number(a)?
                };
                let end = if b.is_empty() {
                    f64::INFINITY
                } else {
                    number(b)?
                };
                (start, end)
            }
        };
        if start > end {
            return Err(bad("start above end"));
        }
        Ok(Range { start, end, inside })
    }

    /// Whether `v` raises the state.
    pub fn alerts(&self, v: f64) -> bool {
        let within = self.start <= v && v <= self.end;
        within == self.inside
    }

    /// `Some(end)` for a plain `0..end` range.
    pub fn upper_only(&self) -> Option<f64> {
        (!self.inside && self.start == 0.0 && self.end.is_finite()).then_some(self.end)
    }

    /// Whether the range never alerts (`~:`, a threshold not set).
    pub fn is_unset(&self) -> bool {
        !self.inside && self.start.is_infinite() && self.end.is_infinite()
    }

    /// As perfdata's warn/crit field takes it: empty for a threshold not set (the
    /// guidelines leave the field empty; some graphers draw `~:`).
    pub fn perf_text(&self) -> String {
        if self.is_unset() {
            String::new()
        } else {
            self.text()
        }
    }

    /// As the guidelines write it.
    pub fn text(&self) -> String {
        let body = match (self.start, self.end) {
            (s, e) if s == 0.0 && e.is_finite() => num(e),
            (s, e) if s.is_infinite() && e.is_infinite() => "~:".to_string(),
            (s, e) if s.is_infinite() => format!("~:{}", num(e)),
            (s, e) if e.is_infinite() => format!("{}:", num(s)),
            (s, e) => format!("{}:{}", num(s), num(e)),
        };
        if self.inside {
            format!("@{body}")
        } else {
            body
        }
    }
}

impl Limits {
    /// `warn X, crit Y` for the text, leaving out a threshold not set.
    fn shown(&self) -> String {
        let parts: Vec<String> = [("warn", &self.warn), ("crit", &self.crit)]
            .iter()
            .filter(|(_, r)| !r.is_unset())
            .map(|(n, r)| format!("{n} {}", r.text()))
            .collect();
        if parts.is_empty() {
            "no threshold".to_string()
        } else {
            parts.join(", ")
        }
    }
}

/// A warning and a critical threshold range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// WARNING when this range alerts.
    pub warn: Range,
    /// CRITICAL when this range alerts.
    pub crit: Range,
}

impl Limits {
    /// Alert above `warn` / `crit` (the plain thresholds).
    pub fn above(warn: f64, crit: f64) -> Limits {
        Limits {
            warn: Range::upto(warn),
            crit: Range::upto(crit),
        }
    }

    /// The state of `v`: CRITICAL if `crit` alerts, else WARNING if `warn` does.
    pub fn state(&self, v: f64) -> State {
        if self.crit.alerts(v) {
            State::Critical
        } else if self.warn.alerts(v) {
            State::Warning
        } else {
            State::Ok
        }
    }
}

/// What to judge.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckOptions {
    /// Share of TLS requests on SSLv2, SSLv3, TLS 1.0, TLS 1.1.
    pub legacy: Limits,
    /// Share of TLS requests with an insecure suite.
    pub insecure: Limits,
    /// Share of lines that did not parse.
    pub malformed: Limits,
    /// With `htpasswd`: the slowest user's verification (seconds, measured here).
    pub auth: Limits,
    /// TLS requests (`--metric requests`): judged only when given.
    pub requests: Option<Limits>,
    /// Fewer TLS requests than this: UNKNOWN (too few to judge).
    pub min_requests: u64,
    /// The htpasswd file to check.
    pub htpasswd: Option<PathBuf>,
    /// `--stale-after`: (age in µs, now in µs since the epoch). A newest line older than
    /// that, or no line inside the time window, is WARNING (without it, an empty window
    /// is UNKNOWN).
    pub stale_after: Option<(i64, i64)>,
}

/// One judged figure: its text and its perfdata.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Its state.
    pub state: State,
    /// For people (`legacy protocols 4.20% (warn 1%, crit 5%)`); empty for counts
    /// that only go to the perfdata.
    pub text: String,
    /// `label=value;warn;crit;min;max`.
    pub perf: String,
}

/// The result of a check.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    /// The overall state.
    pub state: State,
    /// The judged figures, in order.
    pub items: Vec<Item>,
    /// Counts after the figures (`; 4876 TLS requests, 106 plain, 5000 lines`).
    pub tail: String,
    /// Why the state is UNKNOWN, when it is for a reason rather than a figure.
    pub unknown: Option<String>,
}

impl CheckResult {
    /// The plugin output, as the Monitoring Plugins guidelines lay it out: a first
    /// line `TLSGAP <STATE> - <the figure that raised the state>` of at most
    /// [`FIRST_LINE_MAX`] characters, then the other figures one per line, then the
    /// counts and, after ` | `, the perfdata. `clean` makes outside text (names,
    /// messages) safe for it.
    pub fn status_line(&self, clean: impl Fn(&str) -> String) -> String {
        let head = format!("TLSGAP {} - ", self.state.as_str());
        if let Some(why) = &self.unknown {
            let why = clean(why);
            // A long reason (the escaped first line of a binary file given by
            // mistake) is cut: monitoring cores keep a few KiB of a plugin's output.
            let why = match why.char_indices().nth(LONG_TEXT_MAX) {
                Some((at, _)) => format!("{}...", why.get(..at).unwrap_or_default()),
                None => why,
            };
            return match fit_line(&format!("{head}{why}")) {
                (first, true) => format!("{first}\n{why}"),
                (first, false) => first,
            };
        }
        let mut shown: Vec<&Item> = self.items.iter().filter(|i| !i.text.is_empty()).collect();
        shown.sort_by_key(|i| std::cmp::Reverse(i.state));
        let text: Vec<String> = shown.iter().map(|i| clean(&i.text)).collect();
        let perf: Vec<&str> = self.items.iter().map(|i| i.perf.as_str()).collect();
        let mut lines: Vec<String> = Vec::new();
        let mut rest = text.iter();
        match rest.next() {
            Some(t) => {
                let (first, cut) = fit_line(&format!("{head}{t}"));
                lines.push(first);
                if cut {
                    lines.push(t.clone());
                }
            }
            None => lines.push(head.trim_end_matches(" - ").to_string()),
        }
        lines.extend(rest.cloned());
        let counts = self.tail.trim_start_matches("; ");
        let perf = perf.join(" ");
        let several = lines.len() > 1;
        match lines.last_mut() {
            // Nothing to count (an htpasswd-only check): the perfdata ends the last
            // line of text when that is not the first, else a line of its own.
            Some(last) if counts.is_empty() && several => {
                last.push_str(&format!(" | {perf}"));
            }
            _ if counts.is_empty() => lines.push(format!("perfdata | {perf}")),
            _ => lines.push(format!("{counts} | {perf}")),
        }
        lines.join("\n")
    }
}

/// The longest reason an UNKNOWN line gives (characters).
const LONG_TEXT_MAX: usize = 600;

/// The longest first line of the plugin output (characters): the guidelines' 80
/// columns, less one.
pub const FIRST_LINE_MAX: usize = 79;

/// `line` cut to [`FIRST_LINE_MAX`] characters, ending in `...` when cut, and
/// whether it was.
fn fit_line(line: &str) -> (String, bool) {
    if line.chars().count() <= FIRST_LINE_MAX {
        return (line.to_string(), false);
    }
    let kept: String = line.chars().take(FIRST_LINE_MAX - 3).collect();
    (format!("{kept}..."), true)
}

/// UNKNOWN, because of `why`.
pub fn unknown(why: impl std::fmt::Display) -> CheckResult {
    CheckResult {
        state: State::Unknown,
        items: Vec::new(),
        tail: String::new(),
        unknown: Some(why.to_string()),
    }
}

/// Judge the logs (if any) and the htpasswd file (if any).
pub fn run(logs: Option<&RunOptions>, opts: &CheckOptions) -> Checked {
    let mut pending = None;
    let result = judge(logs, opts, &mut pending);
    // An UNKNOWN state judged nothing: the lines are read again next time.
    let state = pending.filter(|_| result.unknown.is_none());
    Checked { result, state }
}

/// A check's result, and the run over the logs whose `--state` is still to be saved
/// ([`RunSummary::commit_state`], once the status line is out).
#[derive(Debug)]
pub struct Checked {
    /// The result.
    pub result: CheckResult,
    /// The run over the logs, when there was one.
    pub state: Option<RunSummary>,
}

fn judge(
    logs: Option<&RunOptions>,
    opts: &CheckOptions,
    pending: &mut Option<RunSummary>,
) -> CheckResult {
    let mut items: Vec<Item> = Vec::new();
    let mut tail = String::new();

    if let Some(run) = logs {
        let mut collected = match tls::run(run, &TlsOptions::default()) {
            Ok(c) => c,
            Err(e) => return unknown(format!("{e:#}")),
        };
        *pending = Some(RunSummary {
            state: collected.run.state.take(),
            ..RunSummary::default()
        });
        if collected.run.strict_hit.is_some() {
            return unknown("--strict: stopped at a malformed line (see standard error)");
        }
        let failed: Vec<String> = collected
            .run
            .inputs
            .iter()
            .filter_map(|i| {
                i.error
                    .as_ref()
                    .map(|e| format!("{}: {e}", if i.name == "-" { "stdin" } else { &i.name }))
            })
            .collect();
        if !failed.is_empty() {
            return unknown(format!("cannot read {}", failed.join("; ")));
        }
        let r = &collected.report;
        if r.lines.parsed == 0 {
            return unknown(format!(
                "no line parsed ({} read, {} malformed)",
                r.lines.total, r.lines.malformed
            ));
        }
        if r.lines.parsed > 0 && r.lines.outside_window >= r.lines.parsed {
            let why = format!(
                "no line inside the time window ({} parsed lines, all outside it)",
                r.lines.parsed
            );
            return match opts.stale_after {
                Some((age, _)) => CheckResult {
                    state: State::Warning,
                    items: vec![Item {
                        state: State::Warning,
                        text: format!("log stale: {why}"),
                        perf: format!("stale_after_seconds={};;;0;", age / 1_000_000),
                    }],
                    tail: String::new(),
                    unknown: None,
                },
                None => unknown(format!("{why}: the log is stale or the window is wrong")),
            };
        }
        if let Some((age, now)) = opts.stale_after {
            if let Some(newest) = collected.newest_us {
                let old = (now - newest).max(0);
                // Judged in the whole seconds the perfdata shows, so that the state and
                // the figure agree under the guidelines' "above the threshold" rule (a
                // line 1800.4 s old was a WARNING shown as 1800s;1800: outputs audit F6).
                let stale = old / 1_000_000 > age / 1_000_000;
                items.push(Item {
                    state: if stale { State::Warning } else { State::Ok },
                    text: if stale {
                        format!(
                            "log stale: newest line {} old (stale after {})",
                            human_age(old),
                            human_age(age)
                        )
                    } else {
                        String::new()
                    },
                    perf: format!(
                        "newest_line_age_seconds={}s;{};;0;",
                        old / 1_000_000,
                        age / 1_000_000
                    ),
                });
            }
        }
        if r.total < opts.min_requests {
            return unknown(format!(
                "only {} TLS requests, fewer than --min-requests {}: too few to judge",
                r.total, opts.min_requests
            ));
        }
        let s = &r.summary;
        items.push(share_item(
            "legacy protocols",
            "legacy_share",
            s.legacy_protocols.share,
            opts.legacy,
        ));
        items.push(share_item(
            "insecure ciphers",
            "insecure_share",
            s.insecure_ciphers.share,
            opts.insecure,
        ));
        let malformed_share = r.lines.malformed as f64 / r.lines.total.max(1) as f64;
        items.push(share_item(
            "malformed lines",
            "malformed_share",
            malformed_share,
            opts.malformed,
        ));
        tail = format!(
            "; {} TLS requests, {} plain, {} lines",
            r.total, r.plain, r.lines.total
        );
        let (state, text, limits) = match &opts.requests {
            Some(l) => (
                l.state(r.total as f64),
                format!("{} TLS requests ({})", r.total, l.shown()),
                format!("{};{}", l.warn.perf_text(), l.crit.perf_text()),
            ),
            None => (State::Ok, String::new(), ";".to_string()),
        };
        let counts = format!(
            "tls_requests={};{limits};0; plain_requests={};;;0; lines={};;;0;",
            r.total, r.plain, r.lines.total
        );
        items.push(Item {
            state,
            text,
            perf: counts,
        });
    }

    if let Some(path) = &opts.htpasswd {
        match auth_item(path, opts.auth) {
            Ok(item) => items.push(item),
            Err(why) => return unknown(why),
        }
    }

    let state = items.iter().map(|i| i.state).max().unwrap_or(State::Ok);
    CheckResult {
        state,
        items,
        tail,
        unknown: None,
    }
}

/// `3h05m`, `42m`, `17s`, `2d04h`.
fn human_age(us: i64) -> String {
    let s = us / 1_000_000;
    match s {
        s if s >= 86_400 => format!("{}d{:02}h", s / 86_400, (s % 86_400) / 3600),
        s if s >= 3600 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        s if s >= 60 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// The slowest user of an htpasswd file, measured here.
fn auth_item(path: &std::path::Path, l: Limits) -> Result<Item, String> {
    let shown = path.to_string_lossy();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read htpasswd {shown}: {e}"))?;
    let file = tlsgap_auth::parse(&bytes);
    if file.entries.is_empty() {
        return Err(format!("htpasswd {shown} has no usable entries"));
    }
    // The verification time users are flagged over: the warning's upper bound.
    let flag = l.warn.upper_only().unwrap_or(l.warn.end);
    let report = AuthFileReport::build(&file, &MeasureOptions::default(), flag);
    let unmeasured = report
        .users
        .iter()
        .filter(|u| u.verify_seconds.is_none())
        .count();
    let Some((secs, user)) = report
        .users
        .iter()
        .filter_map(|u| u.verify_seconds.map(|s| (s, u)))
        .max_by(|a, b| a.0.total_cmp(&b.0))
    else {
        return Err(format!(
            "htpasswd {shown}: no user's scheme could be measured ({})",
            report.users.first().map_or("", |u| u.how_measured.as_str())
        ));
    };
    let factor = match (user.cost, user.rounds) {
        (Some(c), _) => format!(" cost {c}"),
        (_, Some(r)) => format!(" rounds {r}"),
        _ => String::new(),
    };
    let mut text = format!(
        "slowest auth {secs:.3} s for {} ({}{factor}; warn {} s, crit {} s)",
        user.user,
        user.scheme,
        l.warn.text(),
        l.crit.text()
    );
    if unmeasured > 0 {
        text.push_str(&format!(", {unmeasured} users not measured"));
    }
    Ok(Item {
        state: l.state(secs),
        text,
        perf: format!(
            "auth_seconds={}s;{};{};0;",
            num(secs),
            l.warn.perf_text(),
            l.crit.perf_text()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_are_strictly_exceeded() {
        assert_eq!(State::of(0.01, 0.01, 0.05), State::Ok);
        assert_eq!(State::of(0.0101, 0.01, 0.05), State::Warning);
        assert_eq!(State::of(0.05, 0.01, 0.05), State::Warning);
        assert_eq!(State::of(0.06, 0.01, 0.05), State::Critical);
        assert_eq!(State::of(0.0, 0.0, 0.01), State::Ok);
        assert_eq!(State::of(1e-9, 0.0, 0.01), State::Warning);
    }

    #[test]
    fn numbers_are_plain_decimals() {
        assert_eq!(num(0.042), "0.042");
        assert_eq!(num(0.0), "0");
        assert_eq!(num(1.0), "1");
        assert_eq!(num(1e-9), "0.000000001");
        assert_eq!(num(1e-12), "0");
        assert_eq!(pct(1e-7, true), "<0.01%");
        assert_eq!(num(0.1 + 0.2), "0.3");
        assert_eq!(pct(0.042, true), "4.20%");
        assert_eq!(pct(0.01, false), "1%");
        assert_eq!(pct(0.001, false), "0.1%");
    }

    #[test]
    fn share_item_text_and_perfdata() {
        let i = share_item(
            "legacy protocols",
            "legacy_share",
            0.042,
            Limits::above(0.01, 0.05),
        );
        assert_eq!(i.state, State::Warning);
        assert_eq!(i.text, "legacy protocols 4.20% (warn 1%, crit 5%)");
        assert_eq!(i.perf, "legacy_share=0.042;0.01;0.05;0;1");
    }

    #[test]
    fn ranges_as_the_guidelines_define_them() {
        let r = |s: &str| Range::parse(s).unwrap();
        // 10: alert outside 0..10.
        assert!(!r("10").alerts(0.0) && !r("10").alerts(10.0));
        assert!(r("10").alerts(10.5) && r("10").alerts(-1.0));
        // 10: alert below 10.
        assert!(r("10:").alerts(9.9) && !r("10:").alerts(10.0) && !r("10:").alerts(1e12));
        // ~:10: alert above 10 only.
        assert!(!r("~:10").alerts(-1e12) && r("~:10").alerts(10.1));
        // 10:20: alert outside.
        assert!(r("10:20").alerts(9.0) && !r("10:20").alerts(15.0) && r("10:20").alerts(21.0));
        // @10:20: alert inside, bounds included.
        assert!(r("@10:20").alerts(10.0) && r("@10:20").alerts(20.0) && !r("@10:20").alerts(21.0));
        for t in ["10", "10:", "~:10", "10:20", "@10:20", "0.05", "@~:0.5"] {
            assert_eq!(r(t).text(), t, "round trip");
        }
        for bad in ["", "x", "20:10", "@", "1:2:3", "nan"] {
            assert!(Range::parse(bad).is_err(), "{bad}");
        }
        let l = Limits {
            warn: r("1000:"),
            crit: r("100:"),
        };
        assert_eq!(l.state(5000.0), State::Ok);
        assert_eq!(l.state(500.0), State::Warning);
        assert_eq!(l.state(50.0), State::Critical);
    }

    /// A threshold not set is an empty perfdata field and is left out of the text
    /// (it showed `~:` in both: `tls_requests=4874;~:;4873;0;`), and a long UNKNOWN
    /// reason (a binary file's escaped first line, 8 KB) is cut.
    #[test]
    fn unset_thresholds_are_empty_and_long_reasons_cut() {
        let unset = Range::parse("~:").unwrap();
        assert!(unset.is_unset() && unset.perf_text().is_empty());
        let l = Limits {
            warn: unset,
            crit: Range::parse("4873").unwrap(),
        };
        assert_eq!(l.shown(), "crit 4873");
        assert_eq!(
            format!("{};{}", l.warn.perf_text(), l.crit.perf_text()),
            ";4873"
        );
        let i = share_item("legacy", "legacy_share", 0.5, l);
        assert_eq!(i.perf, "legacy_share=0.5;;4873;0;1");
        let out = unknown("x".repeat(8000)).status_line(|s| s.to_string());
        assert!(out.len() < 800, "{}", out.len());
        assert!(out.ends_with("..."));
    }

    #[test]
    fn the_first_line_fits_80_columns() {
        let long = CheckResult {
            state: State::Warning,
            items: vec![
                share_item(
                    "legacy protocols",
                    "legacy_share",
                    0.042,
                    Limits::above(0.01, 0.05),
                ),
                share_item(
                    "insecure ciphers",
                    "insecure_share",
                    0.0,
                    Limits::above(0.0, 0.01),
                ),
            ],
            tail: "; 1000 TLS requests, 0 plain, 1000 lines".into(),
            unknown: None,
        };
        let out = long.status_line(|s| s.to_string());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "TLSGAP WARNING - legacy protocols 4.20% (warn 1%, crit 5%)"
        );
        assert_eq!(lines[1], "insecure ciphers 0.00% (warn 0%, crit 1%)");
        assert!(lines[2].starts_with("1000 TLS requests, 0 plain, 1000 lines | legacy_share="));
        let why = format!(
            "cannot read {}",
            "/var/log/a-very-long-directory-name/".repeat(3)
        );
        let out = unknown(&why).status_line(|s| s.to_string());
        let first = out.lines().next().unwrap();
        assert!(
            first.chars().count() <= FIRST_LINE_MAX && first.ends_with("..."),
            "{first}"
        );
        assert_eq!(out.lines().nth(1), Some(why.as_str()));
    }
}
