//! `tlsgap whatif`: what a TLS policy would refuse.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::whatif::whatif_rows;
use tlsgap_engine::whatif::{self, WhatifOptions, WhatifOutcome};

use crate::cli::{RowsFormat, WhatifArgs};
use crate::run::{Exit, LogRun};
use tlsgap_output::emit::{self, Csv, Emitter, Parquet};
use tlsgap_output::whatif::table;
use tlsgap_output::{escape, file as output};

/// Run `tlsgap whatif`.
pub fn run(args: WhatifArgs) -> Result<ExitCode> {
    let format_choice = args.format;
    let policy = whatif::load_policy(&args.policy)?;
    let log = LogRun::new(args.input)?;
    if format_choice == RowsFormat::Parquet && log.output.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let opts = WhatifOptions {
        policy,
        top: args.top,
    };
    let WhatifOutcome { report, run } = whatif::run(&log.opts, &opts)?;
    if run.strict_hit.is_some() {
        return Ok(Exit::Partial.into());
    }
    let summary = escape::terminal(&run.line()).into_owned();
    let mut out = output::open(log.output.as_deref())?;
    match format_choice {
        RowsFormat::Table => out.write_all(table(&report, &summary).as_bytes())?,
        RowsFormat::Csv => Csv.emit(&whatif_rows(&report), &mut out)?,
        RowsFormat::Json => emit::json(&report, &mut out)?,
        RowsFormat::Parquet => Parquet.emit(&whatif_rows(&report), &mut out)?,
    }
    out.finish()?;
    if format_choice != RowsFormat::Table {
        log.summary(&run);
    }
    Ok(Exit::partial_if(run.input_failed()).into())
}
