//! `tlsgap clients`: TLS client fingerprints with their User-Agents.

use std::process::ExitCode;

use std::io::Write;

use anyhow::{bail, Result};
use tlsgap_agg::clients::clients_rows;
use tlsgap_engine::clients::{self, ClientsOptions, ClientsOutcome};
use tlsgap_engine::whatif;
use tlsgap_output::emit::{self, Csv, Emitter, Parquet};
use tlsgap_output::{clients::table, escape};

use crate::cli::{ClientsArgs, RowsFormat};
use crate::run::{Exit, LogRun};

/// Run `tlsgap clients`.
pub fn run(args: ClientsArgs) -> Result<ExitCode> {
    let format_choice = args.format;
    let policy = match &args.policy {
        Some(spec) => Some((
            whatif::load_policy(spec, &args.system.resolve())?,
            args.cert,
        )),
        None => None,
    };
    let log = LogRun::new(args.input)?;
    if format_choice == RowsFormat::Parquet && log.output.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let opts = ClientsOptions {
        top: args.top,
        client_key: args.client_key.into(),
        policy,
    };
    let ClientsOutcome { report, mut run } = clients::run(&log.opts, &opts)?;
    if run.strict_hit.is_some() {
        return Ok(Exit::Partial.into());
    }
    let summary = escape::terminal(&run.line()).into_owned();
    let mut out = log.open_output()?;
    match format_choice {
        RowsFormat::Table => {
            let width = crate::run::table_width(log.output.is_none());
            out.write_all(table(&report, &summary, width).as_bytes())?;
        }
        RowsFormat::Csv => Csv { raw: args.csv.raw }.emit(&clients_rows(&report), &mut out)?,
        RowsFormat::Json => emit::json(&report, &mut out)?,
        RowsFormat::Parquet => Parquet.emit(&clients_rows(&report), &mut out)?,
    }
    crate::run::deliver(vec![out], &mut run)?;
    if format_choice != RowsFormat::Table {
        log.summary(&run);
    }
    Ok(Exit::partial_if(run.input_failed()).into())
}
