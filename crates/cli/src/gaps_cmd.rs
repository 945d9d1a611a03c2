//! `tlsgap gaps`: slow gaps between system calls in strace output.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::gaps::gap_table;
use tlsgap_engine::gaps::{self, GapsOptions, GapsOutcome};

use crate::cli::{GapsArgs, RowsFormat};
use crate::run::{stderr_notes, Exit};
use tlsgap_output::emit::{self, Csv, Emitter, Parquet};
use tlsgap_output::file as output;

/// Run `tlsgap gaps`.
pub fn run(args: GapsArgs) -> Result<ExitCode> {
    if args.format == RowsFormat::Parquet
        && args.output.as_deref().is_none_or(|p| p.as_os_str() == "-")
    {
        bail!("--format parquet needs -o PATH");
    }
    crate::run::refuse_clobber(&args.traces, &[("-o", args.output.as_deref())])?;
    let opts = GapsOptions {
        traces: args.traces.clone(),
        min_gap_seconds: args.min_gap,
        top: args.top,
        bcrypt_speed: args.bcrypt_speed,
        window: crate::run::window(&args.window, args.quiet)?,
        jobs: crate::run::jobs(args.jobs),
    };
    let GapsOutcome { report, inputs } = gaps::run(&opts, &stderr_notes(args.quiet))?;
    let out_path = args.output.as_deref().filter(|p| p.as_os_str() != "-");
    let mut out = output::open(out_path)?;
    match args.format {
        RowsFormat::Table => {
            let width = crate::run::table_width(out_path.is_none());
            out.write_all(tlsgap_output::gaps::render(&report, width).as_bytes())?
        }
        RowsFormat::Csv => Csv { raw: args.csv.raw }.emit(&gap_table(&report), &mut out)?,
        RowsFormat::Json => emit::json(&report, &mut out)?,
        RowsFormat::Parquet => Parquet.emit(&gap_table(&report), &mut out)?,
    }
    out.finish()?;
    let failed = inputs.iter().any(|i| i.error.is_some());
    // The process ends here: freeing the report's allocations one by one (every gap's
    // texts) would only cost time.
    std::mem::forget(report);
    Ok(Exit::partial_if(failed).into())
}
