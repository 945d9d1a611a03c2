//! `tlsgap tls`: the protocol and cipher distribution.

use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::{CountMode, LineStats, TlsAgg};
use tlsgap_parser::{Format, Role};

use crate::cli::{CountArg, InputConfig, TlsArgs, TlsFormat};
use crate::common::{self, parse_block, BadLineSink, LinePartial};
use crate::emit::{Csv, Emitter, Json, Parquet, Table};
use crate::engine::{Block, Job};
use crate::output;

struct TlsJob<'f> {
    format: &'f Format,
    mode: CountMode,
    keep_bad: bool,
    client: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
}

struct TlsPartial {
    lines: LinePartial,
    agg: TlsAgg,
}

impl Job for TlsJob<'_> {
    type Out = TlsPartial;

    fn run(&self, block: &Block) -> TlsPartial {
        let mut agg = TlsAgg::new(self.mode);
        let lines = parse_block(self.format, block, self.keep_bad, |_, rec| {
            agg.add(
                self.client.and_then(|i| rec.raw(i)),
                self.protocol.and_then(|i| rec.raw(i)),
                self.cipher.and_then(|i| rec.raw(i)),
            );
        });
        TlsPartial { lines, agg }
    }
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
    let prepared = common::prepare(&cfg)?;
    let format = prepared.format.clone();
    if !format.has(Role::TlsProtocol) && !format.has(Role::TlsCipher) {
        bail!(
            "the log format has no TLS protocol or cipher field: add %{{SSL_PROTOCOL}}x \
             %{{SSL_CIPHER}}x (Apache) or $ssl_protocol $ssl_cipher (nginx) to the server's \
             format, or pass the right one with --log-format"
        );
    }
    let mut bad = BadLineSink::new(&cfg)?;
    let job = TlsJob {
        format: &format,
        mode,
        keep_bad: bad.wants_lines(),
        client: format.role(Role::Client),
        protocol: format.role(Role::TlsProtocol),
        cipher: format.role(Role::TlsCipher),
    };
    let mut total = TlsAgg::new(mode);
    let mut stats = LineStats::default();
    let outcomes = common::run_job(
        &cfg,
        prepared,
        &job,
        &mut bad,
        &mut stats,
        |p| std::mem::take(&mut p.lines),
        |_, p| {
            total.merge(p.agg);
            Ok(())
        },
    )?;
    let inputs = common::input_reports(&outcomes);
    if bad.report_strict_hit() {
        return Ok(ExitCode::from(1));
    }
    let summary = common::summary_line(&stats, &inputs);
    let report = total.report(&stats, inputs.clone());
    let mut out = output::open(cfg.output.as_deref())?;
    match format_choice {
        TlsFormat::Table => Table {
            summary: summary.clone(),
        }
        .emit(&report, &mut out)?,
        TlsFormat::Csv => Csv.emit(&report, &mut out)?,
        TlsFormat::Json => Json.emit(&report, &mut out)?,
        TlsFormat::Parquet => Parquet.emit(&report, &mut out)?,
    }
    out.finish()?;
    if format_choice != TlsFormat::Table && !cfg.quiet {
        eprintln!("tlsgap: {summary}");
    }
    Ok(ExitCode::from(common::exit_code(&inputs, false)))
}
