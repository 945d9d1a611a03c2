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

use std::io::Write as _;
use std::process::ExitCode;

use tlsgap_engine::check::{
    self, num, unknown, CheckOptions, CheckResult, Checked, Limits, Range, State,
};
use tlsgap_engine::lines::RunSummary;

use crate::cli::{CheckArgs, CheckMetric};
use crate::run::LogRun;
use tlsgap_output::escape;

/// Text that came from outside (file names, error messages, user names) made safe
/// for a status line: no control characters, and no `|`, which starts the perfdata.
fn clean(s: &str) -> String {
    escape::terminal(s).replace('|', "/")
}

/// Run `tlsgap check`: prints the status line and returns the state's exit code.
/// Never returns an error: whatever goes wrong is UNKNOWN (exit 3).
pub fn run(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let (mut result, pending) = match args.timeout {
        None => evaluate(args),
        Some(secs) => {
            // The check runs beside; past the timeout it is UNKNOWN and the process
            // ends without waiting for it (nothing of it is recorded in --state).
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(evaluate(args));
            });
            match rx.recv_timeout(std::time::Duration::from_secs_f64(secs)) {
                Ok(done) => done,
                Err(_) => (
                    unknown(format!("timed out after {} s (--timeout)", num(secs))),
                    None,
                ),
            }
        }
    };
    let line = format!("{}\n", result.status_line(clean));
    let mut out = std::io::stdout().lock();
    let shown = out.write_all(line.as_bytes()).and_then(|()| out.flush());
    // --state is saved only once the status line is out.
    if let (Ok(()), Some(mut run)) = (shown, pending) {
        if let Err(e) = run.commit_state() {
            result = unknown(format!("{e:#}"));
            #[allow(clippy::print_stderr)]
            {
                eprintln!("tlsgap: error: {}", clean(&format!("{e:#}")));
            }
            return Ok(ExitCode::from(result.state.exit_code()));
        }
    }
    Ok(ExitCode::from(result.state.exit_code()))
}

fn evaluate(args: CheckArgs) -> (CheckResult, Option<RunSummary>) {
    let checked = judge_args(args);
    (checked.result, checked.state)
}

/// The default WARNING and CRITICAL thresholds of a figure's `--NAME-warn` and
/// `--NAME-crit` (shares 0-1; seconds for `auth`), as `tlsgap check --help` gives them.
fn default_limits(name: &str) -> (f64, f64) {
    match name {
        "legacy" => (0.01, 0.05),
        "insecure" => (0.0, 0.01),
        "malformed" => (0.01, 0.10),
        _ => (0.05, 0.25),
    }
}

fn judge_args(args: CheckArgs) -> Checked {
    let unknown = |why: String| Checked {
        result: unknown(why),
        state: None,
    };
    // The thresholds as given (`None`: not given), then with their defaults.
    let given = [
        ("legacy", args.legacy_warn, args.legacy_crit),
        ("insecure", args.insecure_warn, args.insecure_crit),
        ("malformed", args.malformed_warn, args.malformed_crit),
        ("auth", args.auth_warn, args.auth_crit),
    ];
    let pairs = given.map(|(name, warn, crit)| {
        let (w, c) = default_limits(name);
        (name, warn.unwrap_or(w), crit.unwrap_or(c))
    });
    for (name, warn, crit) in pairs {
        if warn > crit {
            return unknown(format!(
                "usage: --{name}-warn ({}) is above --{name}-crit ({})",
                num(warn),
                num(crit)
            ));
        }
    }
    let mut limits = pairs.map(|(_, warn, crit)| Limits::above(warn, crit));
    let mut requests = None;
    if let Some(metric) = args.metric {
        if args.warning.is_none() && args.critical.is_none() {
            return unknown("usage: --metric needs -w/--warning or -c/--critical".into());
        }
        // -w/-c replace the figure's own thresholds: both given is two answers to one
        // question (audit of 2026-11-28, F11: the --legacy-* ones were dropped unsaid).
        let own = given.iter().find(|(name, warn, crit)| {
            metric.name() == *name && (warn.is_some() || crit.is_some())
        });
        if let Some((name, _, _)) = own {
            return unknown(format!(
                "usage: --metric {name} with -w/-c sets the {name} thresholds, and so do \
                 --{name}-warn/--{name}-crit: give one of them"
            ));
        }
        // A range not given never alerts.
        let never = Range::parse("~:").unwrap_or(Range::upto(f64::INFINITY));
        let parse = |r: &Option<String>, flag: &str| match r {
            Some(text) => Range::parse(text).map_err(|e| format!("usage: {flag}: {e}")),
            None => Ok(never),
        };
        let warn = match parse(&args.warning, "--warning") {
            Ok(r) => r,
            Err(e) => return unknown(e),
        };
        let crit = match parse(&args.critical, "--critical") {
            Ok(r) => r,
            Err(e) => return unknown(e),
        };
        let l = Limits { warn, crit };
        match metric {
            CheckMetric::Legacy => limits[0] = l,
            CheckMetric::Insecure => limits[1] = l,
            CheckMetric::Malformed => limits[2] = l,
            CheckMetric::Auth => {
                if args.htpasswd.is_none() {
                    return unknown("usage: --metric auth needs --htpasswd FILE".into());
                }
                limits[3] = l;
            }
            CheckMetric::Requests => requests = Some(l),
        }
    }
    let [legacy, insecure, malformed, auth] = limits;
    if args
        .input
        .output
        .as_ref()
        .is_some_and(|p| p.as_os_str() != "-")
    {
        return unknown("usage: check writes its status line to standard output; drop -o".into());
    }
    // With --htpasswd and no log file, only the htpasswd file is checked (a monitoring
    // plugin has no standard input to read).
    let logs_given = !args.input.files.is_empty() || args.htpasswd.is_none();
    let opts = CheckOptions {
        legacy,
        insecure,
        malformed,
        auth,
        requests,
        min_requests: args.min_requests,
        htpasswd: args.htpasswd,
        stale_after: args
            .stale_after
            .map(|age| (age, chrono::Utc::now().timestamp_micros())),
    };
    let logs = if logs_given {
        match LogRun::new(args.input) {
            Ok(l) => Some(l.opts),
            Err(e) => return unknown(format!("{e:#}")),
        }
    } else {
        None
    };
    check::run(logs.as_ref(), &opts)
}

/// For `run()`: what to do with a command line clap rejected. `tlsgap check ...` usage
/// errors print clap's message and exit 3 (UNKNOWN), as monitoring plugins must; every
/// other command keeps clap's behaviour (exit 2, or 0 for `--help`/`--version`).
pub fn clap_error_exit(err: clap::Error) -> ExitCode {
    let is_check = std::env::args_os().nth(1).is_some_and(|a| a == "check");
    let _ = err.print();
    if is_check && err.use_stderr() {
        // Nagios and Icinga show the plugin's standard output: a status line there
        // too, not only clap's message on standard error (audit of 2026-11-28).
        println!("{}", usage_status_line(&err.to_string()));
        ExitCode::from(State::Unknown.exit_code())
    } else {
        ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2))
    }
}

/// The output of a usage error: a short status line, then (the plugin's long text)
/// clap's first line without its `error: ` head, cleaned for the status output.
fn usage_status_line(message: &str) -> String {
    let first = message.lines().next().unwrap_or_default();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    format!(
        "TLSGAP UNKNOWN - usage error (tlsgap check --help)\n{}",
        clean(first)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_usage_error_is_one_status_line() {
        assert_eq!(
            usage_status_line("error: unexpected argument '--bogus' found\n\nUsage: ..."),
            "TLSGAP UNKNOWN - usage error (tlsgap check --help)\n\
             unexpected argument '--bogus' found"
        );
    }

    #[test]
    fn outside_text_cannot_break_the_status_line() {
        assert_eq!(clean("a|b\nc"), "a/b\\x0Ac");
    }
}
