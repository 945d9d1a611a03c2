//! `tlsgap export`: one row per parsed line as CSV, NDJSON or Parquet, or a
//! date-partitioned Parquet dataset (`--partition-by date`).

use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_engine::dataset;
use tlsgap_engine::export::{self, DatasetTarget, ExportOptions, RowFormat};

use crate::cli::{ExportArgs, ExportFormat};
use crate::run::{note, Exit, LogRun};

/// Run `tlsgap export`.
pub fn run(args: ExportArgs) -> Result<ExitCode> {
    let kind = args.format;
    let partition = args.partition_by;
    let host = args.host;
    let log = LogRun::new(args.input)?;
    if partition.is_some() && kind != ExportFormat::Parquet {
        bail!("--partition-by works with --format parquet only");
    }
    if kind == ExportFormat::Parquet && log.output.is_none() {
        match partition {
            Some(_) => bail!("--partition-by needs -o DIR (the dataset's directory)"),
            None => bail!("--format parquet needs -o PATH"),
        }
    }
    if let (Some(_), Some(dir)) = (partition, log.output.as_deref()) {
        let host = match host {
            Some(h) => dataset::sanitize_host(&h)?,
            None => dataset::sanitize_host(&dataset::this_host()?)?,
        };
        let target = DatasetTarget {
            dir: dir.to_path_buf(),
            host,
        };
        let mut outcome = export::run_dataset(&log.opts, &target)?;
        if outcome.run.strict_hit.is_some() {
            return Ok(Exit::Partial.into());
        }
        // The dataset's parts are in place (written, synced, renamed): now the state.
        outcome.run.commit_state()?;
        log.summary(&outcome.run);
        if let (Some(written), false) = (&outcome.written, log.quiet) {
            note(&written.to_string());
        }
        return Ok(Exit::partial_if(outcome.run.input_failed()).into());
    }
    let opts = ExportOptions {
        format: match kind {
            ExportFormat::Csv => RowFormat::Csv(args.csv.style()),
            ExportFormat::Ndjson => RowFormat::Ndjson,
            ExportFormat::Parquet => RowFormat::Parquet,
        },
    };
    let mut out = log.open_output()?;
    let mut outcome = export::run(&log.opts, &opts, &mut out)?;
    if outcome.run.strict_hit.is_some() {
        // An `-o` file stays unwritten (its temporary file is removed on drop), so a
        // stopped run never leaves a complete-looking export behind.
        return Ok(Exit::Partial.into());
    }
    crate::run::deliver(vec![out], &mut outcome.run)?;
    log.summary(&outcome.run);
    Ok(Exit::partial_if(outcome.run.input_failed()).into())
}
