//! `tlsgap merge`: the `tls` report over exported Parquet datasets, across hosts and
//! days (see [`tlsgap_engine::merge`]).

use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_engine::merge::{self, MergeOptions, MergeOutcome};

use crate::cli::{MergeArgs, TlsFormat};
use crate::run::{note, stderr_notes, Exit};
use crate::tls_cmd::{write_tls, Shown};
use tlsgap_output::emit;
use tlsgap_output::file as output;

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
    let (window, zone) = crate::run::resolve_window(&args.window)?;
    let opts = MergeOptions {
        paths: args.paths.clone(),
        count: mode,
        client_key: args.client_key.into(),
        since_date: args.since_date.clone(),
        until_date: args.until_date.clone(),
        memory_limit: args.memory_limit,
        window: Some(window),
        by: args.by.map(|p| (p.into(), zone.clone())),
        hosts: args.hosts.clone(),
        newest: args.format == TlsFormat::Prom,
    };
    let MergeOutcome {
        report,
        files,
        failed,
        days,
        rows,
        outside_window,
        periods,
        newest_us,
    } = merge::run(&opts, &stderr_notes(false))?;
    let summary = format!(
        "rows: {} from {} Parquet file(s) in {} day partition(s){}{}",
        emit::thousands(rows),
        files - failed,
        days,
        if opts.window.is_some_and(|w| !w.is_all()) {
            format!(", {} outside the window", emit::thousands(outside_window))
        } else {
            String::new()
        },
        if failed > 0 {
            format!(", {failed} unreadable")
        } else {
            String::new()
        }
    );
    let mut out = output::open(output_path.as_deref())?;
    // No --state here: the counters are those of the rows read, and the newest row's
    // time is the newest log line's (`tlsgap_last_processed_timestamp_seconds`, as
    // `tls` writes it: staleness alerts on a merge-fed dashboard need it too).
    let newest = newest_us.map(|us| us as f64 / 1e6);
    let counters = tlsgap_agg::Totals::of_report(&report, newest);
    let shown = Shown {
        format: args.format,
        csv_raw: args.csv.raw,
        summary: summary.clone(),
        counters: &counters,
        counters_created: None,
        labels: &labels,
        width: crate::run::table_width(output_path.is_none()),
    };
    write_tls(&shown, &report, periods.as_ref(), &mut out)?;
    out.finish()?;
    if args.format != TlsFormat::Table && !args.quiet {
        note(&summary);
    }
    Ok(Exit::partial_if(failed > 0).into())
}
