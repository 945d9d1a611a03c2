//! `tlsgap check`: a monitoring plugin (Nagios, Icinga, Naemon, Sensu, ...).
//!
//! Follows the Monitoring Plugins Development Guidelines: one status line on standard
//! output, `TLSGAP <STATE> - <text> | <perfdata>`, and the exit code says the state:
//!
//! | exit | state | when |
//! |---|---|---|
//! | 0 | OK | every figure at or under its warning threshold |
//! | 1 | WARNING | a figure over its warning threshold, none over its critical one |
//! | 2 | CRITICAL | a figure over its critical threshold |
//! | 3 | UNKNOWN | an input missing or unreadable (a truncated `.gz` too), no line parsed, `--strict` stopped at a malformed line, an unusable htpasswd file, or a usage error |
//!
//! A figure is over a threshold when it is strictly greater (the guidelines' plain
//! `N` range: alert outside `0..N`). Shares are 0–1 on the command line and in the
//! perfdata, percentages in the text.
//!
//! | figure | flags | defaults |
//! |---|---|---|
//! | share of TLS requests on SSLv2, SSLv3, TLS 1.0, TLS 1.1 | `--legacy-warn`, `--legacy-crit` | 0.01, 0.05 |
//! | share of TLS requests with an insecure suite (RC4, export, NULL, DES, ...) | `--insecure-warn`, `--insecure-crit` | 0 (any), 0.01 |
//! | share of lines that did not parse | `--malformed-warn`, `--malformed-crit` | 0.01, 0.10 |
//! | with `--htpasswd FILE`: the slowest user's password verification, measured here (seconds per request) | `--auth-warn`, `--auth-crit` | 0.05, 0.25 |
//!
//! Perfdata (`label=value[UOM];warn;crit;min;max`, C locale, no exponents):
//! `legacy_share`, `insecure_share`, `malformed_share` (0–1, with thresholds, min 0,
//! max 1), `tls_requests`, `plain_requests`, `lines` (counts, min 0), and with
//! `--htpasswd` `auth_seconds` (`s`, with thresholds, min 0). No perfdata in UNKNOWN
//! results: partial figures would make a dent in the graphs.
//!
//! With `--htpasswd` and no log FILE, only the htpasswd file is checked (a monitoring
//! plugin has no standard input to read); `-` still reads standard input.
//!
//! Usage errors exit 3 too, as the guidelines want, through [`clap_error_exit`] in
//! `run()`; `--help` and `--version` exit 0.

use std::path::PathBuf;
use std::process::ExitCode;

use tlsgap_agg::CountMode;
use tlsgap_auth::{AuthFileReport, MeasureOptions};

use crate::cli::{InputArgs, InputConfig};
use crate::escape;
use crate::tls_cmd;

/// `tlsgap check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// WARNING above this share (0-1) of TLS requests on SSLv2, SSLv3, TLS 1.0 or 1.1.
    #[arg(long, value_name = "SHARE", default_value_t = 0.01, value_parser = share)]
    pub legacy_warn: f64,

    /// CRITICAL above this share (0-1) of TLS requests on SSLv2, SSLv3, TLS 1.0 or 1.1.
    #[arg(long, value_name = "SHARE", default_value_t = 0.05, value_parser = share)]
    pub legacy_crit: f64,

    /// WARNING above this share (0-1) of TLS requests with an insecure suite (0: any).
    #[arg(long, value_name = "SHARE", default_value_t = 0.0, value_parser = share)]
    pub insecure_warn: f64,

    /// CRITICAL above this share (0-1) of TLS requests with an insecure suite.
    #[arg(long, value_name = "SHARE", default_value_t = 0.01, value_parser = share)]
    pub insecure_crit: f64,

    /// WARNING above this share (0-1) of lines that do not fit the log format.
    #[arg(long, value_name = "SHARE", default_value_t = 0.01, value_parser = share)]
    pub malformed_warn: f64,

    /// CRITICAL above this share (0-1) of lines that do not fit the log format.
    #[arg(long, value_name = "SHARE", default_value_t = 0.10, value_parser = share)]
    pub malformed_crit: f64,

    /// Also check this htpasswd file: the slowest user's verification time.
    ///
    /// Apache verifies the password on every request, so this is added to each of that
    /// user's responses. Measured on this machine (bcrypt above cost 10 is scaled).
    #[arg(long, value_name = "FILE")]
    pub htpasswd: Option<PathBuf>,

    /// WARNING when a user's verification takes longer than this (seconds).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.05, value_parser = seconds)]
    pub auth_warn: f64,

    /// CRITICAL when a user's verification takes longer than this (seconds).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.25, value_parser = seconds)]
    pub auth_crit: f64,
}

fn share(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        Ok(_) => Err("a share is between 0 and 1 (0.05 is 5%)".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err("seconds are a finite number, 0 or more".into()),
        Err(e) => Err(e.to_string()),
    }
}

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
    pub fn exit_code(self) -> ExitCode {
        ExitCode::from(self as u8)
    }

    fn of(value: f64, warn: f64, crit: f64) -> State {
        if value > crit {
            State::Critical
        } else if value > warn {
            State::Warning
        } else {
            State::Ok
        }
    }
}

/// Thresholds, free of clap types.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Limits {
    warn: f64,
    crit: f64,
}

/// One judged figure: its text and its perfdata.
#[derive(Debug)]
struct Item {
    state: State,
    text: String,
    perf: String,
}

/// Text that came from outside (file names, error messages, user names) made safe
/// for a status line: no control characters, and no `|`, which starts the perfdata.
fn clean(s: &str) -> String {
    escape::terminal(s).replace('|', "/")
}

/// A perfdata number: plain decimal (C locale, never an exponent), at most 9 decimals.
fn num(v: f64) -> String {
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

/// The whole result: state, status line.
#[derive(Debug)]
struct Outcome {
    state: State,
    line: String,
}

fn unknown(why: impl std::fmt::Display) -> Outcome {
    Outcome {
        state: State::Unknown,
        line: format!("TLSGAP UNKNOWN - {}", clean(&why.to_string())),
    }
}

/// Run `tlsgap check`: prints the status line and returns the state's exit code.
/// Never returns an error: whatever goes wrong is UNKNOWN (exit 3).
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let outcome = evaluate(args);
    println!("{}", outcome.line);
    Ok(outcome.state.exit_code())
}

fn evaluate(args: CheckArgs) -> Outcome {
    let pairs = [
        ("legacy", args.legacy_warn, args.legacy_crit),
        ("insecure", args.insecure_warn, args.insecure_crit),
        ("malformed", args.malformed_warn, args.malformed_crit),
        ("auth", args.auth_warn, args.auth_crit),
    ];
    for (name, warn, crit) in pairs {
        if warn > crit {
            return unknown(format!(
                "usage: --{name}-warn ({}) is above --{name}-crit ({})",
                num(warn),
                num(crit)
            ));
        }
    }
    if args
        .input
        .output
        .as_ref()
        .is_some_and(|p| p.as_os_str() != "-")
    {
        return unknown("usage: check writes its status line to standard output; drop -o");
    }
    let logs_given = !args.input.files.is_empty() || args.htpasswd.is_none();
    let mut items: Vec<Item> = Vec::new();
    let mut tail = String::new();

    if logs_given {
        let cfg = InputConfig::from(args.input);
        let collected = match tls_cmd::collect(&cfg, CountMode::Requests, None) {
            Ok(c) => c,
            Err(e) => return unknown(format!("{e:#}")),
        };
        if collected.strict_hit {
            return unknown("--strict: stopped at a malformed line (see standard error)");
        }
        let failed: Vec<String> = collected
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
        let s = &r.summary;
        items.push(share_item(
            "legacy protocols",
            "legacy_share",
            s.legacy_protocols.share,
            Limits {
                warn: args.legacy_warn,
                crit: args.legacy_crit,
            },
        ));
        items.push(share_item(
            "insecure ciphers",
            "insecure_share",
            s.insecure_ciphers.share,
            Limits {
                warn: args.insecure_warn,
                crit: args.insecure_crit,
            },
        ));
        let malformed_share = r.lines.malformed as f64 / r.lines.total.max(1) as f64;
        items.push(share_item(
            "malformed lines",
            "malformed_share",
            malformed_share,
            Limits {
                warn: args.malformed_warn,
                crit: args.malformed_crit,
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

    if let Some(path) = &args.htpasswd {
        match auth_item(
            path,
            Limits {
                warn: args.auth_warn,
                crit: args.auth_crit,
            },
        ) {
            Ok(item) => items.push(item),
            Err(why) => return unknown(why),
        }
    }

    let state = items.iter().map(|i| i.state).max().unwrap_or(State::Ok);
    // The figures that raised the state first, as the guidelines want the cause up front.
    let mut shown: Vec<&Item> = items.iter().filter(|i| !i.text.is_empty()).collect();
    shown.sort_by_key(|i| std::cmp::Reverse(i.state));
    let text: Vec<&str> = shown.iter().map(|i| i.text.as_str()).collect();
    let perf: Vec<&str> = items.iter().map(|i| i.perf.as_str()).collect();
    Outcome {
        state,
        line: format!(
            "TLSGAP {} - {}{} | {}",
            state.as_str(),
            text.join(", "),
            tail,
            perf.join(" ")
        ),
    }
}

/// The slowest user of an htpasswd file, measured here.
fn auth_item(path: &std::path::Path, l: Limits) -> Result<Item, String> {
    let shown = clean(&path.to_string_lossy());
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
        clean(&user.user),
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

/// For `run()`: what to do with a command line clap rejected. `tlsgap check ...` usage
/// errors print clap's message and exit 3 (UNKNOWN), as monitoring plugins must; every
/// other command keeps clap's behaviour (exit 2, or 0 for `--help`/`--version`).
pub fn clap_error_exit(err: clap::Error) -> ExitCode {
    let is_check = std::env::args_os().nth(1).is_some_and(|a| a == "check");
    let _ = err.print();
    if is_check && err.use_stderr() {
        ExitCode::from(State::Unknown as u8)
    } else {
        ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2))
    }
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

    #[test]
    fn outside_text_cannot_break_the_status_line() {
        assert_eq!(clean("a|b\nc"), "a/b\\x0Ac");
    }

    #[test]
    fn share_flags_are_checked() {
        assert_eq!(share("0.05"), Ok(0.05));
        assert!(share("5").is_err());
        assert!(share("-0.1").is_err());
        assert!(share("NaN").is_err());
        assert!(seconds("inf").is_err());
        assert_eq!(seconds("0.01"), Ok(0.01));
    }
}
