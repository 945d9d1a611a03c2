//! `tlsgap ciphers`: what the catalogue knows about suites.

use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_ciphers::{catalogue, Protocol, Suite, Verdict};
use tlsgap_output::ciphers::{rows, table, unknown, usable_under, view};
use tlsgap_output::emit::{self, Csv, Emitter};
use tlsgap_output::explain;
use tlsgap_output::file as output;

use crate::cli::{CiphersArgs, CiphersFormat, VerdictArg};
use crate::run::{note, Exit};

/// Run `tlsgap ciphers`.
pub fn run(args: CiphersArgs) -> Result<ExitCode> {
    if let Some(string) = &args.explain {
        return explain_string(string, &args);
    }
    let protocol = match &args.protocol {
        Some(p) => match Protocol::parse(p) {
            Some(p) => Some(p),
            None => bail!(
                "--protocol {p:?}: not a protocol (SSLv2, SSLv3, TLSv1, TLSv1.1, TLSv1.2, TLSv1.3)"
            ),
        },
        None => None,
    };
    let keep = |s: &Suite| {
        (args.verdict.is_empty() || args.verdict.iter().any(|v| v.verdict() == s.verdict))
            && protocol.is_none_or(|p| usable_under(s, p))
    };
    let asked = !args.names.is_empty();
    let mut views = Vec::new();
    let mut missing = 0usize;
    if asked {
        for name in &args.names {
            let found: Vec<&Suite> = match protocol {
                Some(p) => catalogue::lookup(p.as_str(), name).into_iter().collect(),
                None => catalogue::by_name(name),
            };
            if found.is_empty() {
                missing += 1;
                views.push(unknown(name));
            }
            views.extend(
                found
                    .into_iter()
                    .filter(|s| keep(s))
                    .map(|s| view(Some(name), s)),
            );
        }
    } else {
        views.extend(
            catalogue::all()
                .iter()
                .filter(|s| keep(s))
                .map(|s| view(None, s)),
        );
    }
    let out_path = args.output.as_deref().filter(|p| p.as_os_str() != "-");
    let mut out = output::open(out_path)?;
    match args.format {
        CiphersFormat::Table => {
            use std::io::Write;
            let width = crate::run::table_width(out_path.is_none());
            out.write_all(table(&views, asked, width).as_bytes())?;
        }
        CiphersFormat::Json => emit::json(&views, &mut out)?,
        CiphersFormat::Csv => Csv { raw: args.csv.raw }.emit(&rows(&views), &mut out)?,
    }
    out.finish()?;
    if missing > 0 {
        note(&format!("{missing} name(s) not in the catalogue"));
        return Ok(Exit::Partial.into());
    }
    Ok(Exit::Success.into())
}

impl VerdictArg {
    /// The verdict this flag value names.
    pub fn verdict(self) -> Verdict {
        match self {
            VerdictArg::Insecure => Verdict::Insecure,
            VerdictArg::Weak => Verdict::Weak,
            VerdictArg::Secure => Verdict::Secure,
            VerdictArg::Recommended => Verdict::Recommended,
        }
    }
}

/// `ciphers --explain STRING`: the string (or pasted directives) expanded.
fn explain_string(string: &str, args: &CiphersArgs) -> Result<ExitCode> {
    let system = args.system.resolve();
    let directives = tlsgap_ciphers::policy::is_directives(string);
    let policy = if directives {
        tlsgap_engine::whatif::directives_policy(string, &system)?
    } else {
        tlsgap_engine::whatif::cipher_string_policy(string, &system)?
    };
    let policy = match policy {
        Ok(p) => p,
        Err(e) if directives => bail!("--explain: {e}"),
        Err(e) => bail!("--explain {string}: {}", e.message),
    };
    let rows = explain::rows(&policy);
    let out_path = args.output.as_deref().filter(|p| p.as_os_str() != "-");
    let mut out = output::open(out_path)?;
    match args.format {
        CiphersFormat::Table => {
            use std::io::Write;
            let width = crate::run::table_width(out_path.is_none());
            out.write_all(explain::table(&policy, width).as_bytes())?;
        }
        CiphersFormat::Json => emit::json(&rows, &mut out)?,
        CiphersFormat::Csv => {
            Csv { raw: args.csv.raw }.emit(&explain::explain_rows(&rows), &mut out)?
        }
    }
    out.finish()?;
    Ok(Exit::Success.into())
}
