//! `tlsgap tls`: the protocol and cipher distribution.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::{Cell, CellType, Rows};
use tlsgap_agg::{CountMode, InputReport, LineStats, TlsAgg, TlsReport};
use tlsgap_parser::{Format, Role};

use crate::cli::{CountArg, InputConfig, TlsArgs, TlsFormat};
use crate::common::{self, parse_block, BadLineSink, LinePartial};
use crate::emit::{Csv, Emitter, Json, Parquet, Table};
use crate::engine::{Block, Job};
use crate::output;
use crate::trend::Trend;
use crate::window::{resolve_tz, Period, Zone};

struct TlsJob<'f> {
    format: &'f Format,
    mode: CountMode,
    keep_bad: bool,
    client: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
    by: Option<(Period, Zone)>,
}

struct TlsPartial {
    lines: LinePartial,
    agg: TlsAgg,
    newest_us: Option<i64>,
    periods: Trend,
}

crate::has_lines!(TlsPartial);

impl Job for TlsJob<'_> {
    type Out = TlsPartial;

    fn run(&self, block: &Block) -> TlsPartial {
        let mut agg = TlsAgg::new(self.mode);
        let mut newest_us: Option<i64> = None;
        let mut periods = Trend::default();
        let lines = parse_block(self.format, block, self.keep_bad, |_, rec| {
            let protocol = self.protocol.and_then(|i| rec.raw(i));
            agg.add(
                self.client.and_then(|i| rec.raw(i)),
                protocol,
                self.cipher.and_then(|i| rec.raw(i)),
            );
            let Some(t) = rec.time() else { return };
            let us = t.unix_micros();
            newest_us = Some(newest_us.map_or(us, |n| n.max(us)));
            if let Some((period, zone)) = &self.by {
                let name = protocol.filter(|p| !p.is_empty() && *p != b"-");
                periods.add(*period, zone, Some(us), name.unwrap_or(b"plain"));
            }
        });
        TlsPartial {
            lines,
            agg,
            newest_us,
            periods,
        }
    }
}

/// What a TLS job over the inputs found.
pub(crate) struct Collected {
    /// The distribution (with line counts and inputs).
    pub report: TlsReport,
    /// Line counts.
    pub stats: LineStats,
    /// The inputs, with what went wrong reading each (also reported on stderr).
    pub inputs: Vec<InputReport>,
    /// `--strict` stopped at a malformed line (already reported on stderr); the
    /// figures then cover only what came before it.
    pub strict_hit: bool,
    /// The newest line's time, µs since the epoch.
    pub newest_us: Option<i64>,
    /// `--by`: requests per protocol (`plain` for none) per period.
    pub periods: Trend,
}

/// Open the inputs, settle the format and run the TLS job over them. Errors: no input
/// could be opened, a bad `--log-format`, or a format without TLS fields.
pub(crate) fn collect(
    cfg: &InputConfig,
    mode: CountMode,
    by: Option<(Period, Zone)>,
) -> Result<Collected> {
    let prepared = common::prepare(cfg)?;
    let format = prepared.format.clone();
    if !format.has(Role::TlsProtocol) && !format.has(Role::TlsCipher) {
        bail!(
            "the log format has no TLS protocol or cipher field: add %{{SSL_PROTOCOL}}x \
             %{{SSL_CIPHER}}x (Apache) or $ssl_protocol $ssl_cipher (nginx) to the server's \
             format, or pass the right one with --log-format"
        );
    }
    let mut bad = BadLineSink::new(cfg)?;
    let job = TlsJob {
        format: &format,
        mode,
        keep_bad: bad.wants_lines(),
        client: format.role(Role::Client),
        protocol: format.role(Role::TlsProtocol),
        cipher: format.role(Role::TlsCipher),
        by,
    };
    let mut total = TlsAgg::new(mode);
    let mut newest_us: Option<i64> = None;
    let mut periods = Trend::default();
    let mut stats = LineStats::default();
    let outcomes = common::run_job(cfg, prepared, &job, &mut bad, &mut stats, |_, p| {
        total.merge(p.agg);
        newest_us = newest_us.max(p.newest_us);
        periods.merge(p.periods);
        Ok(())
    })?;
    let inputs = common::input_reports(&outcomes);
    let strict_hit = bad.report_strict_hit();
    let report = total.report(&stats, inputs.clone());
    Ok(Collected {
        report,
        stats,
        inputs,
        strict_hit,
        newest_us,
        periods,
    })
}

/// Run `tlsgap tls`.
pub fn run(args: TlsArgs) -> Result<ExitCode> {
    let format_choice = args.format;
    let mode = match args.count {
        CountArg::Requests => CountMode::Requests,
        CountArg::Clients => CountMode::Clients,
    };
    let cfg = InputConfig::from(args.input);
    if format_choice == TlsFormat::Parquet && cfg.output.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let by = match args.by {
        Some(p) => Some((p, resolve_tz(cfg.window.tz.as_deref())?)),
        None => None,
    };
    let zone = by.as_ref().map(|(_, z)| z.clone());
    let Collected {
        report,
        stats,
        inputs,
        strict_hit,
        newest_us,
        periods,
    } = collect(&cfg, mode, by)?;
    if strict_hit {
        return Ok(ExitCode::from(1));
    }
    let summary = common::summary_line(&stats, &inputs);
    let mut out = output::open(cfg.output.as_deref())?;
    let period_rows = zone.as_ref().map(|z| period_rows(&periods, z));
    match (format_choice, &period_rows) {
        (TlsFormat::Table, _) => {
            Table {
                summary: summary.clone(),
            }
            .emit(&report, &mut out)?;
            if let Some(rows) = &period_rows {
                out.write_all(period_table(rows).as_bytes())?;
            }
        }
        (TlsFormat::Csv, Some(rows)) => Csv.emit(rows, &mut out)?,
        (TlsFormat::Csv, None) => Csv.emit(&report, &mut out)?,
        (TlsFormat::Json, Some(rows)) => {
            let mut v = serde_json::to_value(&report)?;
            if let Some(obj) = v.as_object_mut() {
                obj.insert("periods".into(), periods_json(rows));
            }
            crate::emit::json(&v, &mut out)?;
        }
        (TlsFormat::Json, None) => Json.emit(&report, &mut out)?,
        (TlsFormat::Parquet, Some(rows)) => Parquet.emit(rows, &mut out)?,
        (TlsFormat::Parquet, None) => Parquet.emit(&report, &mut out)?,
        (TlsFormat::Prom, _) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            let newest = newest_us.map(|us| us as f64 / 1e6);
            out.write_all(crate::prom::render(&report, newest, now).as_bytes())?;
        }
    }
    out.finish()?;
    if format_choice != TlsFormat::Table && !cfg.quiet {
        eprintln!("tlsgap: {summary}");
    }
    Ok(ExitCode::from(common::exit_code(&inputs, false)))
}

/// Columns of the `--by` table.
const PERIOD_COLUMNS: [(&str, CellType); 5] = [
    ("period", CellType::Text),
    ("period_start", CellType::Text),
    ("protocol", CellType::Text),
    ("count", CellType::Int),
    ("share", CellType::Float),
];

/// One row per period and protocol (`plain` included), shares within the period.
fn period_rows(periods: &Trend, zone: &Zone) -> Rows {
    let mut rows = Rows::new(&PERIOD_COLUMNS);
    for (key, protocols) in &periods.periods {
        let total: u64 = protocols.values().sum();
        let mut sorted: Vec<(String, &u64)> = protocols
            .iter()
            .map(|(p, n)| (tlsgap_parser::lossless_text(p).into_owned(), n))
            .collect();
        sorted.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(&b.0)));
        for (name, n) in sorted {
            rows.push(vec![
                key.label.as_str().into(),
                zone.format_micros(key.start_us).into(),
                name.into(),
                (*n).into(),
                Cell::Float(if total == 0 {
                    0.0
                } else {
                    *n as f64 / total as f64
                }),
            ]);
        }
    }
    rows
}

fn text(c: Option<&Cell>) -> String {
    match c {
        Some(Cell::Text(s)) => s.clone(),
        Some(Cell::Int(n)) => n.to_string(),
        Some(Cell::Float(x)) => x.to_string(),
        _ => String::new(),
    }
}

/// The `periods` array of the JSON output: `{period, start, total, protocols[]}`.
fn periods_json(rows: &Rows) -> serde_json::Value {
    let mut out: Vec<serde_json::Value> = Vec::new();
    for r in &rows.rows {
        let (period, start) = (text(r.first()), text(r.get(1)));
        let count = match r.get(3) {
            Some(Cell::Int(n)) => *n,
            _ => 0,
        };
        let share = match r.get(4) {
            Some(Cell::Float(x)) => *x,
            _ => 0.0,
        };
        let entry = serde_json::json!({"protocol": text(r.get(2)), "count": count, "share": share});
        match out.last_mut() {
            Some(last) if last["period"] == period.as_str() => {
                if let Some(a) = last["protocols"].as_array_mut() {
                    a.push(entry);
                }
                last["total"] = (last["total"].as_i64().unwrap_or(0) + count).into();
            }
            _ => out.push(serde_json::json!({
                "period": period, "start": start, "total": count, "protocols": [entry]
            })),
        }
    }
    serde_json::Value::Array(out)
}

/// The `--by` section under the table: each period's requests and protocol shares.
fn period_table(rows: &Rows) -> String {
    let mut lines: Vec<(String, u64, Vec<String>)> = Vec::new();
    for r in &rows.rows {
        let period = text(r.first());
        let n = match r.get(3) {
            Some(Cell::Int(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        let share = match r.get(4) {
            Some(Cell::Float(x)) => *x,
            _ => 0.0,
        };
        let item = format!(
            "{} {}",
            crate::escape::terminal(&text(r.get(2))),
            crate::emit::percent(share)
        );
        match lines.last_mut() {
            Some(l) if l.0 == period => {
                l.1 += n;
                l.2.push(item);
            }
            _ => lines.push((period, n, vec![item])),
        }
    }
    let mut out = String::from("\nby period (requests; protocol shares within the period)\n");
    for (period, n, items) in lines {
        out.push_str(&format!(
            "{period:<14}{:>11}  {}\n",
            crate::emit::thousands(n),
            crate::emit::fit(&items.join("  "), 52)
        ));
    }
    out
}
