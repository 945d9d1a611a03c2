//! `tlsgap export`: one row per parsed line as CSV, NDJSON or Parquet.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{bail, Result};
use polars::prelude::{BatchedWriter, DataFrame, ParquetWriter};
use tlsgap_agg::frame::FrameBuilder;
use tlsgap_agg::{ExportSchema, LineStats, Value};
use tlsgap_parser::Format;

use crate::cli::{ExportArgs, ExportFormat, InputConfig};
use crate::common::{self, parse_block, BadLineSink, LinePartial};
use crate::engine::{Block, Job};
use crate::escape;
use crate::output;

struct ExportJob<'f> {
    format: &'f Format,
    schema: ExportSchema,
    kind: ExportFormat,
    names: Vec<String>,
    keep_bad: bool,
}

/// Where rows go, in order.
enum RowSink<'o> {
    Text(&'o mut output::Output),
    Parquet(Box<BatchedWriter<&'o mut output::Output>>),
}

enum Rows {
    Text(Vec<u8>),
    Frame(polars::prelude::PolarsResult<DataFrame>),
}

struct ExportPartial {
    lines: LinePartial,
    rows: Rows,
}

impl Job for ExportJob<'_> {
    type Out = ExportPartial;

    fn needs_line_base(&self) -> bool {
        true
    }

    fn run(&self, block: &Block) -> ExportPartial {
        let file = self.names.get(block.input).map_or("-", String::as_str);
        let base = block.line_base.unwrap_or(0);
        let mut values: Vec<Value<'_>> = Vec::with_capacity(self.schema.columns.len());
        let mut text = Vec::new();
        let mut frame = match self.kind {
            ExportFormat::Parquet => Some(FrameBuilder::new(&self.schema, 1 << 14)),
            _ => None,
        };
        let lines = parse_block(self.format, block, self.keep_bad, |rel, rec| {
            self.schema.values(rec, file, base + rel + 1, &mut values);
            match self.kind {
                ExportFormat::Csv => csv_row(&values, &mut text),
                ExportFormat::Ndjson => ndjson_row(&self.schema, &values, &mut text),
                ExportFormat::Parquet => {
                    if let Some(f) = frame.as_mut() {
                        f.push(&values);
                    }
                }
            }
        });
        let rows = match frame {
            Some(f) => Rows::Frame(f.finish()),
            None => Rows::Text(text),
        };
        ExportPartial { lines, rows }
    }
}

fn csv_row(values: &[Value<'_>], out: &mut Vec<u8>) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match v {
            Value::Null => {}
            Value::Text(s) => escape::csv_field(s, out),
            Value::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Value::Float(x) => out.extend_from_slice(x.to_string().as_bytes()),
            Value::Time(t) => out.extend_from_slice(t.to_string().as_bytes()),
        }
    }
    out.push(b'\n');
}

fn ndjson_row(schema: &ExportSchema, values: &[Value<'_>], out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (c, v)) in schema.columns.iter().zip(values).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Column names are ASCII identifiers; values go through serde_json's escaping.
        let _ = serde_json::to_writer(&mut *out, &c.name);
        out.push(b':');
        let _ = match v {
            Value::Null => serde_json::to_writer(&mut *out, &()),
            Value::Text(s) => serde_json::to_writer(&mut *out, s.as_ref()),
            Value::Int(n) => serde_json::to_writer(&mut *out, n),
            Value::Float(x) => serde_json::to_writer(&mut *out, x),
            Value::Time(t) => serde_json::to_writer(&mut *out, &t.to_string()),
        };
    }
    out.extend_from_slice(b"}\n");
}

/// Run `tlsgap export`.
pub fn run(args: ExportArgs) -> Result<ExitCode> {
    let kind = args.format;
    let cfg = InputConfig::from(args.input);
    if kind == ExportFormat::Parquet && cfg.output.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let prepared = common::prepare(&cfg)?;
    let format = prepared.format.clone();
    let schema = ExportSchema::new(&format, kind == ExportFormat::Parquet);
    let mut bad = BadLineSink::new(&cfg)?;
    let job = ExportJob {
        format: &format,
        schema: schema.clone(),
        kind,
        names: prepared.names.clone(),
        keep_bad: bad.wants_lines(),
    };
    let mut out = output::open(cfg.output.as_deref())?;
    if kind == ExportFormat::Csv {
        let header: Vec<&str> = schema.columns.iter().map(|c| c.name.as_str()).collect();
        writeln!(out, "{}", header.join(","))?;
    }
    let mut sink = match kind {
        ExportFormat::Parquet => {
            let empty = FrameBuilder::new(&schema, 0).finish()?;
            RowSink::Parquet(Box::new(
                ParquetWriter::new(&mut out).batched(empty.schema())?,
            ))
        }
        _ => RowSink::Text(&mut out),
    };
    let mut stats = LineStats::default();
    let outcomes = common::run_job(
        &cfg,
        prepared,
        &job,
        &mut bad,
        &mut stats,
        |p| std::mem::take(&mut p.lines),
        |_, p| {
            match (&mut sink, p.rows) {
                (RowSink::Text(w), Rows::Text(bytes)) => w.write_all(&bytes)?,
                (RowSink::Parquet(w), Rows::Frame(df)) => {
                    let df = df?;
                    if df.height() > 0 {
                        w.write_batch(&df)?;
                    }
                }
                _ => bail!("internal error: rows of the wrong kind"),
            }
            Ok(())
        },
    )?;
    if let RowSink::Parquet(w) = &sink {
        w.finish()?;
    }
    drop(sink);
    let inputs = common::input_reports(&outcomes);
    if bad.report_strict_hit() {
        // An `-o` file stays unwritten (its temporary file is removed on drop), so a
        // stopped run never leaves a complete-looking export behind.
        return Ok(ExitCode::from(1));
    }
    out.finish()?;
    if !cfg.quiet {
        eprintln!("tlsgap: {}", common::summary_line(&stats, &inputs));
    }
    Ok(ExitCode::from(common::exit_code(&inputs, false)))
}
