//! `tlsgap whatif`: what a TLS policy would refuse.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::whatif::whatif_rows;
use tlsgap_engine::whatif::{self, WhatifOptions, WhatifOutcome};

use crate::cli::{RowsFormat, WhatifArgs};
use crate::run::{Exit, LogRun};
use tlsgap_output::emit::{self, Csv, Emitter, Parquet};
use tlsgap_output::escape;
use tlsgap_output::explain;
use tlsgap_output::whatif::table;

/// Run `tlsgap whatif`.
pub fn run(args: WhatifArgs) -> Result<ExitCode> {
    let format_choice = args.format;
    if args.explain && matches!(format_choice, RowsFormat::Csv | RowsFormat::Parquet) {
        bail!("--explain goes with --format table or json (for rows: tlsgap ciphers --explain STRING --format csv)");
    }
    let policy = whatif::load_policy(&args.policy, &args.system.resolve())?;
    let explained = args.explain.then(|| explain::rows(&policy));
    let explain_table = args.explain.then(|| explain::table(&policy));
    let log = LogRun::new(args.input)?;
    if format_choice == RowsFormat::Parquet && log.output.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let opts = WhatifOptions {
        policy,
        top: args.top,
        client_key: args.client_key.into(),
    };
    let WhatifOutcome { report, mut run } = whatif::run(&log.opts, &opts)?;
    if run.strict_hit.is_some() {
        return Ok(Exit::Partial.into());
    }
    let summary = escape::terminal(&run.line()).into_owned();
    let mut out = log.open_output()?;
    match format_choice {
        RowsFormat::Table => {
            out.write_all(table(&report, &summary).as_bytes())?;
            if let Some(t) = &explain_table {
                out.write_all(format!("\nthe policy, expanded\n{t}").as_bytes())?;
            }
        }
        RowsFormat::Csv => Csv { raw: args.csv.raw }.emit(&whatif_rows(&report), &mut out)?,
        RowsFormat::Json => match &explained {
            Some(rows) => {
                let mut v = serde_json::to_value(&report)?;
                if let Some(obj) = v.as_object_mut() {
                    obj.insert("explain".into(), serde_json::to_value(rows)?);
                }
                emit::json(&v, &mut out)?
            }
            None => emit::json(&report, &mut out)?,
        },
        RowsFormat::Parquet => Parquet.emit(&whatif_rows(&report), &mut out)?,
    }
    crate::run::deliver(vec![out], &mut run)?;
    if format_choice != RowsFormat::Table {
        log.summary(&run);
    }
    Ok(Exit::partial_if(run.input_failed()).into())
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
