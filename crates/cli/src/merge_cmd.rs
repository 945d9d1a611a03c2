//! `tlsgap merge`: the `tls` report over exported Parquet datasets, across hosts and
//! days (see [`tlsgap_engine::merge`]).

use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_engine::merge::{self, MergeOptions, MergeOutcome};

use crate::cli::{MergeArgs, TlsFormat};
use crate::run::{note, stderr_notes, Exit};
use tlsgap_output::emit::{self, Csv, Emitter, Json, Parquet, Table};
use tlsgap_output::{file as output, prom};

/// Run `tlsgap merge`.
pub fn run(args: MergeArgs) -> Result<ExitCode> {
    let mode = args.count.into();
    let labels = args.prom.labels(args.format)?;
    let output_path = args.output.filter(|p| p.as_os_str() != "-");
    if args.format == TlsFormat::Parquet && output_path.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let read: Vec<std::path::PathBuf> = args.paths.iter().map(Into::into).collect();
    crate::run::refuse_clobber(&read, &[("-o", output_path.as_deref())])?;
    let opts = MergeOptions {
        paths: args.paths.clone(),
        count: mode,
        client_key: args.client_key.into(),
        since_date: args.since_date.clone(),
        until_date: args.until_date.clone(),
        memory_limit: args.memory_limit,
    };
    let MergeOutcome {
        report,
        files,
        failed,
        days,
        rows,
    } = merge::run(&opts, &stderr_notes(false))?;
    let summary = format!(
        "rows: {} from {} Parquet file(s) in {} day partition(s){}",
        emit::thousands(rows),
        files - failed,
        days,
        if failed > 0 {
            format!(", {failed} unreadable")
        } else {
            String::new()
        }
    );
    let mut out = output::open(output_path.as_deref())?;
    match args.format {
        TlsFormat::Table => Table {
            summary: summary.clone(),
        }
        .emit(&report, &mut out)?,
        TlsFormat::Csv => Csv { raw: args.csv.raw }.emit(&report, &mut out)?,
        TlsFormat::Json => Json.emit(&report, &mut out)?,
        TlsFormat::Parquet => Parquet.emit(&report, &mut out)?,
        TlsFormat::Prom => {
            use std::io::Write as _;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            // No --state here: the counters are those of the rows read.
            let counters = tlsgap_agg::Totals::of_report(&report, None);
            let text = prom::render(&prom::Exposition {
                report: &report,
                counters: &counters,
                counters_created: None,
                labels: &labels,
                run_unix: now,
            });
            out.write_all(text.as_bytes())?;
        }
    }
    out.finish()?;
    if args.format != TlsFormat::Table && !args.quiet {
        note(&summary);
    }
    Ok(Exit::partial_if(failed > 0).into())
}
