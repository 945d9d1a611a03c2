//! What a TLS policy would refuse (`tlsgap whatif`, and the report's three profiles).

use tlsgap_agg::whatif::{WhatifAgg, WhatifReport};
use tlsgap_ciphers::policy::Policy;
use tlsgap_parser::Role;

use crate::lines::{self, has_lines, BadLineSink, LineLoop, LinePartial, RunSummary};
use crate::runner::{Block, Job};
use crate::uakind::Classifier;
use crate::{bail, err, Context, Result, RunOptions};

/// The policy and how much to list.
#[derive(Debug, Clone)]
pub struct WhatifOptions {
    /// The policy to test the traffic against.
    pub policy: Policy,
    /// How many refused User-Agents and addresses to list.
    pub top: usize,
}

/// What the run found.
#[derive(Debug)]
pub struct WhatifOutcome {
    /// What the policy would refuse.
    pub report: WhatifReport,
    /// Line counts, inputs, `--strict`.
    pub run: RunSummary,
}

struct WhatifJob<'f> {
    lines: LineLoop<'f>,
    client: Option<usize>,
    user_agent: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
}

struct WhatifPartial {
    lines: LinePartial,
    agg: WhatifAgg,
}

has_lines!(WhatifPartial);

impl Job for WhatifJob<'_> {
    type Out = WhatifPartial;

    fn run(&self, block: &Block) -> WhatifPartial {
        let mut agg = WhatifAgg::new();
        let lines = self.lines.parse_block(block, |_, rec| {
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

/// The policy `spec` names: a Mozilla profile, a file of server directives, or
/// directives given inline.
pub fn load_policy(spec: &str) -> Result<Policy> {
    if spec.starts_with("mozilla-") {
        return Policy::mozilla(spec).map_err(|e| err!("--policy {spec}: {e}"));
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
    Policy::from_config(&text).map_err(|e| err!("--policy {spec}: {e}"))
}

/// Read the logs and test every logged handshake against the policy.
pub fn run(run: &RunOptions, opts: &WhatifOptions) -> Result<WhatifOutcome> {
    let prepared = lines::prepare(run)?;
    let format = prepared.format.clone();
    if !format.has(Role::TlsProtocol) || !format.has(Role::TlsCipher) {
        bail!(
            "whatif needs both the TLS protocol and the cipher in the log: add \
             %{{SSL_PROTOCOL}}x %{{SSL_CIPHER}}x (Apache) or $ssl_protocol $ssl_cipher \
             (nginx) to the server's format, or pass the right one with --log-format"
        );
    }
    let classifier = Classifier::new()?;
    let mut bad = BadLineSink::new(run)?;
    let window = prepared.window;
    let job = WhatifJob {
        lines: LineLoop::new(&format, window.as_ref(), &bad),
        client: format.role(Role::Client),
        user_agent: format.role(Role::UserAgent),
        protocol: format.role(Role::TlsProtocol),
        cipher: format.role(Role::TlsCipher),
    };
    let mut total = WhatifAgg::new();
    let summary = lines::run_job(run, prepared, &job, &mut bad, |_, p| {
        total.merge(p.agg);
        Ok(())
    })?;
    let report = total.report(
        &opts.policy,
        &mut |ua| classifier.kind(ua),
        opts.top,
        &summary.stats,
        summary.inputs.clone(),
    );
    Ok(WhatifOutcome {
        report,
        run: summary,
    })
}
