//! `tlsgap auth`: per-user authentication cost from the htpasswd file, the access log
//! and strace traces, joined and ranked.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::authjoin::auth_rows;
use tlsgap_engine::auth::{self, AuthOptions, AuthOutcome};
use tlsgap_engine::RunOptions;

use crate::cli::{AuthArgs, RowsFormat};
use crate::run::{note, stderr_notes, Exit};
use tlsgap_engine::input::{path_text, sniff, Content};
use tlsgap_output::auth::table;
use tlsgap_output::emit::{self, Csv, Emitter, Parquet};
use tlsgap_output::file as output;

/// `--log` and `--traces` take several values, so a shell glob after one of them can
/// carry files of the other kind (`--log access.log trace.*`). Each file is read as
/// what its content is, with a warning when it was given as the other.
fn sort_inputs(args: &AuthArgs) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut logs, mut traces) = (Vec::new(), Vec::new());
    for l in args.log.iter().cloned() {
        if sniff(&l, &args.log_format) == Content::Strace {
            note(&format!(
                "warning: {}: strace output given after --log: read as a trace",
                path_text(&l)
            ));
            traces.push(l);
        } else {
            logs.push(l);
        }
    }
    for t in args.traces.iter().cloned() {
        if sniff(&t, &args.log_format) == Content::AccessLog {
            note(&format!(
                "warning: {}: an access log given after --traces: read as a log",
                path_text(&t)
            ));
            logs.push(t);
        } else {
            traces.push(t);
        }
    }
    (logs, traces)
}

/// Run `tlsgap auth`.
pub fn run(args: AuthArgs) -> Result<ExitCode> {
    let out_path = args.output.as_deref().filter(|p| p.as_os_str() != "-");
    let read: Vec<PathBuf> = args
        .log
        .iter()
        .chain(&args.traces)
        .chain(&args.htpasswd)
        .cloned()
        .collect();
    crate::run::refuse_clobber(&read, &[("-o", out_path)])?;
    if args.format == RowsFormat::Parquet && out_path.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let notes = stderr_notes(args.quiet);
    let (log, traces) = sort_inputs(&args);
    let window = crate::run::window(&args.window, args.quiet)?;
    let logs = if log.is_empty() {
        None
    } else {
        Some(RunOptions {
            inputs: log,
            log_format: args.log_format.clone(),
            window,
            notes: notes.clone(),
            jobs: crate::run::jobs(args.jobs),
            ..RunOptions::default()
        })
    };
    let opts = AuthOptions {
        htpasswd: args.htpasswd.clone(),
        traces,
        trace_tz: args.trace_tz.clone(),
        threshold: args.threshold,
        min_gap_seconds: args.min_gap,
        page_budget: args.page_budget,
        bcrypt_speed: args.bcrypt_speed,
        window,
        day_zone: match args.window.tz.as_deref() {
            Some(tz) => Some(crate::run::zone(Some(tz))?),
            None => None,
        },
        jobs: crate::run::jobs(args.jobs),
    };
    let AuthOutcome { report, failed } = auth::run(logs.as_ref(), &opts, &notes)?;
    let mut out = output::open(out_path)?;
    match args.format {
        RowsFormat::Table => {
            let width = crate::run::table_width(out_path.is_none());
            out.write_all(table(&report, width).as_bytes())?
        }
        RowsFormat::Csv => Csv { raw: args.csv.raw }.emit(&auth_rows(&report), &mut out)?,
        RowsFormat::Json => emit::json(&report, &mut out)?,
        RowsFormat::Parquet => Parquet.emit(&auth_rows(&report), &mut out)?,
    }
    out.finish()?;
    Ok(Exit::partial_if(failed).into())
}
