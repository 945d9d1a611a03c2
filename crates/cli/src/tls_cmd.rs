//! `tlsgap tls`: the protocol and cipher distribution.

use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::{Rows, TlsReport, Totals};
use tlsgap_engine::tls::{self, TlsOptions, TlsOutcome};
use tlsgap_output::emit::{self, Csv, Emitter, Json, Parquet, Table};
use tlsgap_output::periods::{period_table, periods_json};
use tlsgap_output::prom::ConstLabels;
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
    let shown = Shown {
        format: format_choice,
        csv_raw: args.csv.raw,
        summary: summary.clone(),
        counters: &counters,
        counters_created,
        labels: &labels,
        width: crate::run::table_width(log.output.is_none()),
    };
    write_tls(&shown, &report, periods.as_ref(), &mut out)?;
    crate::run::deliver(vec![out], &mut run)?;
    if format_choice != TlsFormat::Table {
        log.summary(&run);
    }
    Ok(Exit::partial_if(run.input_failed()).into())
}

/// How a distribution is shown (`tls` and `merge`).
#[derive(Debug)]
pub struct Shown<'a> {
    /// The output format.
    pub format: TlsFormat,
    /// `--csv-raw`.
    pub csv_raw: bool,
    /// The table's summary line.
    pub summary: String,
    /// Prometheus: the counters (this run's, or with `--state` the state's).
    pub counters: &'a Totals,
    /// Prometheus: when the counters started from zero (with `--state`).
    pub counters_created: Option<f64>,
    /// Prometheus: `--label` constant labels.
    pub labels: &'a ConstLabels,
    /// The width the table is laid out for ([`crate::run::table_width`]).
    pub width: usize,
}

/// Write the distribution, with its per-period rows when `--by` asked for them.
pub fn write_tls(
    shown: &Shown<'_>,
    report: &TlsReport,
    periods: Option<&Rows>,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    let csv = Csv { raw: shown.csv_raw };
    match (shown.format, periods) {
        (TlsFormat::Table, _) => {
            Table {
                summary: shown.summary.clone(),
                width: shown.width,
            }
            .emit(report, out)?;
            if let Some(rows) = periods {
                out.write_all(period_table(rows, shown.width).as_bytes())?;
            }
        }
        (TlsFormat::Csv, Some(rows)) => csv.emit(rows, out)?,
        (TlsFormat::Csv, None) => csv.emit(report, out)?,
        (TlsFormat::Json, Some(rows)) => {
            let mut v = serde_json::to_value(report)?;
            if let Some(obj) = v.as_object_mut() {
                obj.insert("periods".into(), periods_json(rows));
            }
            emit::json(&v, out)?;
        }
        (TlsFormat::Json, None) => Json.emit(report, out)?,
        (TlsFormat::Parquet, Some(rows)) => Parquet.emit(rows, out)?,
        (TlsFormat::Parquet, None) => Parquet.emit(report, out)?,
        (TlsFormat::Prom, _) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let text = prom::render(&prom::Exposition {
                report,
                counters: shown.counters,
                counters_created: shown.counters_created,
                labels: shown.labels,
                run_unix: now,
            });
            out.write_all(text.as_bytes())?;
        }
    }
    Ok(())
}
