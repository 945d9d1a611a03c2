//! `tlsgap whatif`: what a TLS policy would refuse.

use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::whatif::{listed_rows, whatif_rows, WhatifReport};
use tlsgap_ciphers::handshake::Certs;
use tlsgap_engine::merge::MergeOptions;
use tlsgap_engine::whatif::{self, WhatifOptions, WhatifOutcome};

use crate::cli::{RowsFormat, WhatifArgs};
use crate::run::{Exit, LogRun};
use tlsgap_output::emit::{self, Csv, Emitter, Parquet};
use tlsgap_output::explain;
use tlsgap_output::whatif::table;
use tlsgap_output::{escape, file as output};

/// Run `tlsgap whatif`.
pub fn run(args: WhatifArgs) -> Result<ExitCode> {
    let format_choice = args.format;
    if args.explain && matches!(format_choice, RowsFormat::Csv | RowsFormat::Parquet) {
        bail!("--explain goes with --format table or json (for rows: tlsgap ciphers --explain STRING --format csv)");
    }
    let policy = whatif::load_policy(&args.policy, &args.system.resolve())?;
    let explained = args.explain.then(|| explain::rows(&policy));
    // Standard output unless `-o` names a file (`-o -` is standard output).
    let to_stdout = args
        .input
        .output
        .as_ref()
        .is_none_or(|p| p.as_os_str() == "-");
    let width = crate::run::table_width(to_stdout);
    let explain_table = args.explain.then(|| explain::table(&policy, width));
    let opts = WhatifOptions {
        policy,
        top: args.top,
        client_key: args.client_key.into(),
        certs: args.cert,
        list_requests: args.list_requests.is_some(),
    };
    let shown = Shown {
        format: format_choice,
        csv_raw: args.csv.raw,
        explained,
        explain_table,
        width,
    };
    if !args.dataset.is_empty() {
        if args.list_requests.is_some() {
            bail!("--list-requests lists log lines: not with --dataset");
        }
        return over_dataset(&args, &opts, &shown);
    }
    let list_path = args.list_requests.clone();
    if let Some(p) = &list_path {
        crate::run::refuse_clobber(&args.input.files, &[("--list-requests", Some(p.as_path()))])?;
    }
    let log = LogRun::new(args.input)?;
    if format_choice == RowsFormat::Parquet && log.output.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let WhatifOutcome {
        report,
        mut run,
        listed,
    } = whatif::run(&log.opts, &opts)?;
    if run.strict_hit.is_some() {
        return Ok(Exit::Partial.into());
    }
    if let Some(path) = &list_path {
        // The certificates the report assumed (given, or inferred from the log).
        let certs = report
            .exact
            .as_ref()
            .and_then(|x| Certs::parse(x.certs))
            .or(opts.certs)
            .unwrap_or(Certs::RSA);
        let names: Vec<String> = run.inputs.iter().map(|i| i.name.clone()).collect();
        let rows = listed_rows(&opts.policy, certs, &listed, &names);
        let mut f = output::open(Some(path))?;
        Csv { raw: shown.csv_raw }.emit(&rows, &mut f)?;
        f.finish()?;
    }
    let summary = escape::terminal(&run.line()).into_owned();
    let mut out = log.open_output()?;
    write_whatif(&shown, &report, &summary, &mut out)?;
    crate::run::deliver(vec![out], &mut run)?;
    if format_choice != RowsFormat::Table {
        log.summary(&run);
    }
    Ok(Exit::partial_if(run.input_failed()).into())
}

/// How the report is shown, whatever it was read from.
struct Shown {
    format: RowsFormat,
    csv_raw: bool,
    explained: Option<Vec<explain::ExplainRow>>,
    explain_table: Option<String>,
    /// The width the table is laid out for ([`crate::run::table_width`]).
    width: usize,
}

fn write_whatif(
    shown: &Shown,
    report: &WhatifReport,
    summary: &str,
    out: &mut dyn std::io::Write,
) -> Result<()> {
    match shown.format {
        RowsFormat::Table => {
            out.write_all(table(report, summary, shown.width).as_bytes())?;
            if let Some(t) = &shown.explain_table {
                out.write_all(format!("\nthe policy, expanded\n{t}").as_bytes())?;
            }
        }
        RowsFormat::Csv => Csv { raw: shown.csv_raw }.emit(&whatif_rows(report), out)?,
        RowsFormat::Json => match &shown.explained {
            Some(rows) => {
                let mut v = serde_json::to_value(report)?;
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("explain".into(), serde_json::to_value(rows)?);
                }
                emit::json(&v, out)?
            }
            None => emit::json(report, out)?,
        },
        RowsFormat::Parquet => Parquet.emit(&whatif_rows(report), out)?,
    }
    Ok(())
}

/// `whatif --dataset`: the rows of exported Parquet files instead of log lines.
fn over_dataset(args: &WhatifArgs, opts: &WhatifOptions, shown: &Shown) -> Result<ExitCode> {
    let input = &args.input;
    let output_path = input.output.clone().filter(|p| p.as_os_str() != "-");
    if shown.format == RowsFormat::Parquet && output_path.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let read: Vec<std::path::PathBuf> = args.dataset.iter().map(Into::into).collect();
    crate::run::refuse_clobber(&read, &[("-o", output_path.as_deref())])?;
    let (window, _) = crate::run::resolve_window(&input.window)?;
    let selection = MergeOptions {
        paths: args.dataset.clone(),
        count: tlsgap_agg::CountMode::Requests,
        client_key: opts.client_key,
        since_date: None,
        until_date: None,
        memory_limit: input.memory_limit,
        window: Some(window),
        by: None,
        hosts: Vec::new(),
        newest: false,
    };
    let (report, scanned) =
        whatif::run_dataset(&selection, opts, &crate::run::stderr_notes(input.quiet))?;
    let summary = format!(
        "rows: {} from {} Parquet file(s){}",
        emit::thousands(scanned.stats.total),
        scanned.files - scanned.failed,
        if scanned.failed > 0 {
            format!(", {} unreadable", scanned.failed)
        } else {
            String::new()
        }
    );
    let mut out = output::open(output_path.as_deref())?;
    write_whatif(shown, &report, &summary, &mut out)?;
    out.finish()?;
    if shown.format != RowsFormat::Table && !input.quiet {
        crate::run::note(&summary);
    }
    Ok(Exit::partial_if(scanned.failed > 0).into())
}

impl crate::cli::SystemTlsArgs {
    /// Where the security level of directives comes from: `--seclevel`, else
    /// `--openssl-conf`, `$OPENSSL_CONF` or `/etc/ssl/openssl.cnf` (the last two only if
    /// they exist).
    pub fn resolve(&self) -> whatif::SystemTls {
        let conf = match &self.openssl_conf {
            Some(p) => Some((p.clone(), true)),
            None => Some(match std::env::var_os("OPENSSL_CONF") {
                Some(p) if !p.is_empty() => (p.into(), false),
                _ => ("/etc/ssl/openssl.cnf".into(), false),
            }),
        };
        whatif::SystemTls {
            seclevel: self.seclevel,
            openssl_conf: conf,
        }
    }
}
