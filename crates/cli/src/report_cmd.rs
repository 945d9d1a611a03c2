//! `tlsgap report`: the report's figures from the engine, rendered by
//! `tlsgap_output::report` into HTML and/or text or JSON.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_engine::auth::AuthOptions;
use tlsgap_engine::report::{self, ReportOptions, ReportPolicy};
use tlsgap_engine::whatif::load_policy;
use tlsgap_engine::window::Period;
use tlsgap_output::file as output;
use tlsgap_output::report::{json, render, PolicyWhatif, ReportData};

use crate::cli::{ReportArgs, ReportFormat};
use crate::run::{note, Exit, LogRun};
use std::path::PathBuf;
use tlsgap_engine::input::{path_text, sniff, Content};

/// `--traces` takes several values, so the access logs a shell glob or a hurried
/// command line puts after it (`--traces trace.* access.log`) land there too. An
/// access log among the traces (by its content) is read as one, with a warning,
/// instead of leaving the report to read standard input.
fn split_off_logs(traces: Vec<PathBuf>, log: &mut LogRun) -> Vec<PathBuf> {
    let mut kept = Vec::new();
    for t in traces {
        if sniff(&t, &log.opts.log_format) != Content::AccessLog {
            kept.push(t);
            continue;
        }
        note(&format!(
            "warning: {}: an access log, not strace output: read as an access log \
             (name the logs before --traces, or after --)",
            path_text(&t)
        ));
        if log.opts.inputs.len() == 1 && log.opts.inputs[0].as_os_str() == "-" {
            log.opts.inputs.clear();
        }
        log.opts.inputs.push(t);
    }
    kept
}

/// Run `tlsgap report`.
pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let ReportArgs {
        input,
        html,
        text,
        format,
        policy,
        system,
        htpasswd,
        traces,
        by,
        client_key,
    } = args;
    if text && format == Some(ReportFormat::Json) {
        bail!("--text and --format json both name what goes to standard output (or -o): pick one");
    }
    // `-o -` counts as asking for the text (on stdout), and so does `--format json`.
    let want_text = text || format.is_some() || input.output.is_some() || html.is_none();
    let policies = if policy.is_empty() {
        ReportPolicy::defaults()?
    } else {
        let system = system.resolve();
        policy
            .iter()
            .map(|spec| {
                Ok(ReportPolicy {
                    spec: spec.clone(),
                    policy: load_policy(spec, &system)?,
                })
            })
            .collect::<Result<Vec<_>>>()?
    };
    let log = LogRun::new(input)?;
    let read: Vec<PathBuf> = log
        .opts
        .inputs
        .iter()
        .cloned()
        .chain(traces.iter().cloned())
        .chain(htpasswd.iter().cloned())
        .collect();
    let state = log.opts.state.as_ref().map(|s| s.path.as_path());
    crate::run::refuse_clobber(
        &read,
        &[
            ("--html", html.as_deref()),
            ("-o", log.output.as_deref()),
            ("--state", state),
            ("--invalid-lines", log.opts.invalid_lines.as_deref()),
        ],
    )?;
    if let (Some(h), Some(o)) = (&html, &log.output) {
        if h == o {
            bail!("--html and -o name the same file: the text would overwrite the page");
        }
    }
    let by: Period = by.into();
    // The zone of the periods: `--tz`, else the local one.
    let zone = crate::run::zone(log.tz.as_deref())?;
    let mut log = log;
    let traces = split_off_logs(traces, &mut log);
    let auth = (htpasswd.is_some() || !traces.is_empty()).then(|| AuthOptions {
        htpasswd,
        traces,
        ..AuthOptions::default()
    });
    let opts = ReportOptions {
        by,
        zone: zone.clone(),
        client_key: client_key.into(),
        policies,
        auth,
    };
    let mut outcome = report::run(&log.opts, &opts)?;
    if outcome.run.strict_hit.is_some() {
        return Ok(Exit::Partial.into());
    }
    let span = match (outcome.trend.first_us, outcome.trend.last_us) {
        (Some(f), Some(l)) => Some((zone.format_micros(f), zone.format_micros(l))),
        _ => None,
    };
    let period_starts: Vec<String> = outcome
        .trend
        .periods
        .keys()
        .map(|k| zone.format_micros(k.start_us))
        .collect();
    let data = || ReportData {
        tls: &outcome.tls,
        whatifs: outcome
            .whatifs
            .iter()
            .map(|w| PolicyWhatif {
                spec: &w.spec,
                report: &w.report,
            })
            .collect(),
        trend: &outcome.trend,
        period_starts: period_starts.clone(),
        by,
        span: span.clone(),
        zone: zone.name(),
        auth: outcome.auth.as_ref(),
        notes: outcome.notes.clone(),
    };
    // Both outputs are written before either is put in place, and --state is saved
    // only after both.
    let mut outs = Vec::new();
    if let Some(path) = &html {
        let rendered = render(data(), "report.html")?;
        let mut out = output::open(Some(path))?;
        out.write_all(rendered.as_bytes())?;
        outs.push(out);
    }
    if want_text {
        let mut out = log.open_output()?;
        if format == Some(ReportFormat::Json) {
            json(data(), &mut out)?;
        } else {
            let rendered = render(data(), "report.txt")?;
            out.write_all(rendered.as_bytes())?;
        }
        outs.push(out);
    }
    crate::run::deliver(outs, &mut outcome.run)?;
    log.summary(&outcome.run);
    Ok(Exit::partial_if(outcome.run.input_failed() || outcome.auth_failed).into())
}
