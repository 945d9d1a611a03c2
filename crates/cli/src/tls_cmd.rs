//! `tlsgap tls`: the protocol and cipher distribution.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_engine::tls::{self, TlsOptions, TlsOutcome};
use tlsgap_output::emit::{self, Csv, Emitter, Json, Parquet, Table};
use tlsgap_output::periods::{period_table, periods_json};
use tlsgap_output::{escape, prom};

use crate::cli::{TlsArgs, TlsFormat};
use crate::run::{Exit, LogRun};

/// Run `tlsgap tls`.
pub fn run(args: TlsArgs) -> Result<ExitCode> {
    let format_choice = args.format;
    let labels = args.prom.labels(format_choice)?;
    let log = LogRun::new(args.input)?;
    if format_choice == TlsFormat::Parquet && log.output.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let by = match args.by {
        Some(p) => Some((p.into(), crate::run::zone(log.tz.as_deref())?)),
        None => None,
    };
    let opts = TlsOptions {
        count: args.count.into(),
        client_key: args.client_key.into(),
        by,
    };
    let TlsOutcome {
        report,
        mut run,
        newest_us: _,
        periods,
        counters,
        counters_created,
    } = tls::run(&log.opts, &opts)?;
    if run.strict_hit.is_some() {
        return Ok(Exit::Partial.into());
    }
    let summary = escape::terminal(&run.line()).into_owned();
    let mut out = log.open_output()?;
    match (format_choice, &periods) {
        (TlsFormat::Table, _) => {
            Table {
                summary: summary.clone(),
            }
            .emit(&report, &mut out)?;
            if let Some(rows) = &periods {
                out.write_all(period_table(rows).as_bytes())?;
            }
        }
        (TlsFormat::Csv, Some(rows)) => Csv { raw: args.csv.raw }.emit(rows, &mut out)?,
        (TlsFormat::Csv, None) => Csv { raw: args.csv.raw }.emit(&report, &mut out)?,
        (TlsFormat::Json, Some(rows)) => {
            let mut v = serde_json::to_value(&report)?;
            if let Some(obj) = v.as_object_mut() {
                obj.insert("periods".into(), periods_json(rows));
            }
            emit::json(&v, &mut out)?;
        }
        (TlsFormat::Json, None) => Json.emit(&report, &mut out)?,
        (TlsFormat::Parquet, Some(rows)) => Parquet.emit(rows, &mut out)?,
        (TlsFormat::Parquet, None) => Parquet.emit(&report, &mut out)?,
        (TlsFormat::Prom, _) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let text = prom::render(&prom::Exposition {
                report: &report,
                counters: &counters,
                counters_created,
                labels: &labels,
                run_unix: now,
            });
            out.write_all(text.as_bytes())?;
        }
    }
    crate::run::deliver(vec![out], &mut run)?;
    if format_choice != TlsFormat::Table {
        log.summary(&run);
    }
    Ok(Exit::partial_if(run.input_failed()).into())
}
