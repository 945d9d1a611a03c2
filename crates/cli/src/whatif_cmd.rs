//! `tlsgap whatif`: what a TLS policy would refuse.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use tlsgap_agg::whatif::{whatif_rows, WhatifAgg, WhatifReport};
use tlsgap_agg::LineStats;
use tlsgap_ciphers::policy::Policy;
use tlsgap_parser::{Format, Role};

use crate::cli::{InputConfig, TlsFormat, WhatifArgs};
use crate::common::{self, parse_block, BadLineSink, LinePartial};
use crate::emit::{self, fit, percent, thousands, Csv, Emitter, Parquet};
use crate::engine::{Block, Job};
use crate::escape;
use crate::output;
use crate::uakind::Classifier;

struct WhatifJob<'f> {
    format: &'f Format,
    keep_bad: bool,
    client: Option<usize>,
    user_agent: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
}

struct WhatifPartial {
    lines: LinePartial,
    agg: WhatifAgg,
}

crate::has_lines!(WhatifPartial);

impl Job for WhatifJob<'_> {
    type Out = WhatifPartial;

    fn run(&self, block: &Block) -> WhatifPartial {
        let mut agg = WhatifAgg::new();
        let lines = parse_block(self.format, block, self.keep_bad, |_, rec| {
            let ua = self.user_agent.and_then(|i| rec.value(i));
            agg.add(
                self.client.and_then(|i| rec.raw(i)),
                ua.as_deref(),
                self.protocol.and_then(|i| rec.raw(i)),
                self.cipher.and_then(|i| rec.raw(i)),
            );
        });
        WhatifPartial { lines, agg }
    }
}

/// The policy `--policy` names: a Mozilla profile, a file of server directives, or
/// directives given inline.
pub fn load_policy(spec: &str) -> Result<Policy> {
    if spec.starts_with("mozilla-") {
        return Policy::mozilla(spec).map_err(|e| anyhow::anyhow!("--policy {spec}: {e}"));
    }
    let path = std::path::Path::new(spec);
    let text = if path.is_file() {
        std::fs::read_to_string(path).with_context(|| format!("reading {spec}"))?
    } else if spec.contains(char::is_whitespace) {
        spec.to_string()
    } else {
        bail!(
            "--policy {spec:?}: not a profile (mozilla-modern, mozilla-intermediate, \
             mozilla-old), not a file, and not server directives"
        );
    };
    Policy::from_config(&text).map_err(|e| anyhow::anyhow!("--policy {spec}: {e}"))
}

/// Run `tlsgap whatif`.
pub fn run(args: WhatifArgs) -> Result<ExitCode> {
    let format_choice = args.format;
    let policy = load_policy(&args.policy)?;
    let cfg = InputConfig::from(args.input);
    if format_choice == TlsFormat::Parquet && cfg.output.is_none() {
        bail!("--format parquet needs -o PATH");
    }
    let prepared = common::prepare(&cfg)?;
    let format = prepared.format.clone();
    if !format.has(Role::TlsProtocol) || !format.has(Role::TlsCipher) {
        bail!(
            "whatif needs both the TLS protocol and the cipher in the log: add \
             %{{SSL_PROTOCOL}}x %{{SSL_CIPHER}}x (Apache) or $ssl_protocol $ssl_cipher \
             (nginx) to the server's format, or pass the right one with --log-format"
        );
    }
    let classifier = Classifier::new()?;
    let mut bad = BadLineSink::new(&cfg)?;
    let job = WhatifJob {
        format: &format,
        keep_bad: bad.wants_lines(),
        client: format.role(Role::Client),
        user_agent: format.role(Role::UserAgent),
        protocol: format.role(Role::TlsProtocol),
        cipher: format.role(Role::TlsCipher),
    };
    let mut total = WhatifAgg::new();
    let mut stats = LineStats::default();
    let outcomes = common::run_job(&cfg, prepared, &job, &mut bad, &mut stats, |_, p| {
        total.merge(p.agg);
        Ok(())
    })?;
    let inputs = common::input_reports(&outcomes);
    if bad.report_strict_hit() {
        return Ok(ExitCode::from(1));
    }
    let summary = common::summary_line(&stats, &inputs);
    let report = total.report(
        &policy,
        &mut |ua| classifier.kind(ua),
        args.top,
        &stats,
        inputs.clone(),
    );
    let mut out = output::open(cfg.output.as_deref())?;
    match format_choice {
        TlsFormat::Table => out.write_all(table(&report, &summary).as_bytes())?,
        TlsFormat::Csv => Csv.emit(&whatif_rows(&report), &mut out)?,
        TlsFormat::Json => emit::json(&report, &mut out)?,
        TlsFormat::Parquet => Parquet.emit(&whatif_rows(&report), &mut out)?,
        TlsFormat::Prom => anyhow::bail!("--format prom is for `tls` and `merge`"),
    }
    out.finish()?;
    if format_choice != TlsFormat::Table && !cfg.quiet {
        eprintln!("tlsgap: {summary}");
    }
    Ok(ExitCode::from(common::exit_code(&inputs, false)))
}

fn table(r: &WhatifReport, summary: &str) -> String {
    let mut out = String::new();
    let p = &r.policy;
    out.push_str(&format!(
        "policy: {}{}\n  protocols: {}\n  TLS 1.2 and older suites: {}\n  TLS 1.3 suites: {}\n\n",
        p.name,
        p.version
            .as_deref()
            .map(|v| format!(" (version {v})"))
            .unwrap_or_default(),
        p.protocols.join(" "),
        p.tls12_ciphers.len(),
        p.tls13_ciphers.len(),
    ));
    out.push_str(&format!(
        "would refuse {} of {} TLS requests ({})\n",
        thousands(r.requests.refused),
        thousands(r.requests.total),
        percent(r.requests.share)
    ));
    out.push_str(&format!(
        "would refuse {} of {} clients (address + User-Agent) ({}); {} more partly\n",
        thousands(r.clients.refused),
        thousands(r.clients.total),
        percent(r.clients.share),
        thousands(r.clients.partly)
    ));
    if r.undecided_requests > 0 {
        out.push_str(&format!(
            "{} requests name a protocol or suite the catalogue does not know (not counted)\n",
            thousands(r.undecided_requests)
        ));
    }
    out.push_str(&format!("note: {}\n\n", r.caveat));

    let rows: Vec<Vec<String>> = r
        .ciphers
        .iter()
        .map(|c| {
            vec![
                c.protocol.clone(),
                c.cipher.clone(),
                thousands(c.requests),
                thousands(c.clients),
                c.verdict.as_str().to_string(),
                c.decision.replace('_', " "),
            ]
        })
        .collect();
    out.push_str(&emit::text_table(
        &[
            "protocol", "cipher", "requests", "clients", "verdict", "policy",
        ],
        &rows,
        34,
    ));
    out.push('\n');
    let rows: Vec<Vec<String>> = r
        .kinds
        .iter()
        .map(|k| {
            vec![
                k.kind.as_str().to_string(),
                thousands(k.requests),
                thousands(k.refused_requests),
                thousands(k.clients),
                thousands(k.refused_clients),
            ]
        })
        .collect();
    out.push_str(&emit::text_table(
        &["client kind", "requests", "refused", "clients", "refused"],
        &rows,
        20,
    ));
    if !r.top_user_agents.is_empty() {
        out.push_str("\ntop refused User-Agents\n");
        for u in &r.top_user_agents {
            out.push_str(&format!(
                "{:>11}  {:<8} {}\n",
                thousands(u.refused_requests),
                u.kind.as_str(),
                fit(&escape::terminal(&u.user_agent), 58)
            ));
        }
    }
    if !r.top_addresses.is_empty() {
        out.push_str("\ntop refused addresses\n");
        for a in &r.top_addresses {
            out.push_str(&format!(
                "{:>11}  {}\n",
                thousands(a.refused_requests),
                fit(&escape::terminal(&a.client), 60)
            ));
        }
    }
    out.push_str(&format!("\n{summary}\n"));
    out
}
