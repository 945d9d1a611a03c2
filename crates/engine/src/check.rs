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
    Item {
        state: State::of(value, l.warn, l.crit),
        text: format!(
            "{what} {} (warn {}, crit {})",
            pct(value, true),
            pct(l.warn, false),
            pct(l.crit, false)
        ),
        perf: format!("{label}={};{};{};0;1", num(value), num(l.warn), num(l.crit)),
    }
}

/// A warning and a critical threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// WARNING above this.
    pub warn: f64,
    /// CRITICAL above this.
    pub crit: f64,
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
    /// The one status line: `TLSGAP <STATE> - <text> | <perfdata>`, the figures that
    /// raised the state first. `clean` makes outside text (names, messages) safe for
    /// the line.
    pub fn status_line(&self, clean: impl Fn(&str) -> String) -> String {
        if let Some(why) = &self.unknown {
            return format!("TLSGAP UNKNOWN - {}", clean(why));
        }
        let mut shown: Vec<&Item> = self.items.iter().filter(|i| !i.text.is_empty()).collect();
        shown.sort_by_key(|i| std::cmp::Reverse(i.state));
        let text: Vec<String> = shown.iter().map(|i| clean(&i.text)).collect();
        let perf: Vec<&str> = self.items.iter().map(|i| i.perf.as_str()).collect();
        format!(
            "TLSGAP {} - {}{} | {}",
            self.state.as_str(),
            text.join(", "),
            self.tail,
            perf.join(" ")
        )
    }
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
                let stale = old > age;
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
        let s = &r.summary;
        items.push(share_item(
            "legacy protocols",
            "legacy_share",
            s.legacy_protocols.share,
            Limits {
                warn: opts.legacy.warn,
                crit: opts.legacy.crit,
            },
        ));
        items.push(share_item(
            "insecure ciphers",
            "insecure_share",
            s.insecure_ciphers.share,
            Limits {
                warn: opts.insecure.warn,
                crit: opts.insecure.crit,
            },
        ));
        let malformed_share = r.lines.malformed as f64 / r.lines.total.max(1) as f64;
        items.push(share_item(
            "malformed lines",
            "malformed_share",
            malformed_share,
            Limits {
                warn: opts.malformed.warn,
                crit: opts.malformed.crit,
            },
        ));
        tail = format!(
            "; {} TLS requests, {} plain, {} lines",
            r.total, r.plain, r.lines.total
        );
        let counts = format!(
            "tls_requests={};;;0; plain_requests={};;;0; lines={};;;0;",
            r.total, r.plain, r.lines.total
        );
        items.push(Item {
            state: State::Ok,
            text: String::new(),
            perf: counts,
        });
    }

    if let Some(path) = &opts.htpasswd {
        match auth_item(
            path,
            Limits {
                warn: opts.auth.warn,
                crit: opts.auth.crit,
            },
        ) {
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
    let report = AuthFileReport::build(&file, &MeasureOptions::default(), l.warn);
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
        num(l.warn),
        num(l.crit)
    );
    if unmeasured > 0 {
        text.push_str(&format!(", {unmeasured} users not measured"));
    }
    Ok(Item {
        state: State::of(secs, l.warn, l.crit),
        text,
        perf: format!(
            "auth_seconds={}s;{};{};0;",
            num(secs),
            num(l.warn),
            num(l.crit)
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
            Limits {
                warn: 0.01,
                crit: 0.05,
            },
        );
        assert_eq!(i.state, State::Warning);
        assert_eq!(i.text, "legacy protocols 4.20% (warn 1%, crit 5%)");
        assert_eq!(i.perf, "legacy_share=0.042;0.01;0.05;0;1");
    }
}
