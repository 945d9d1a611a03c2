//! TLS client fingerprints from logged ClientHello offers (`tlsgap clients`).

use tlsgap_agg::clients::{ClientsAgg, ClientsReport, OfferFields};
use tlsgap_agg::{ClientKey, CountMode};
use tlsgap_ciphers::handshake::Certs;
use tlsgap_ciphers::policy::Policy;
use tlsgap_parser::Role;

use crate::lines::{self, has_lines, BadLineSink, LineLoop, LinePartial, RunSummary};
use crate::runner::{Block, Job};
use crate::uakind::Classifier;
use crate::{bail, Result, RunOptions};

/// How much to list, and an optional policy to replay offers under.
#[derive(Debug, Clone)]
pub struct ClientsOptions {
    /// How many User-Agents to list per fingerprint.
    pub top: usize,
    /// What one client is.
    pub client_key: ClientKey,
    /// A policy each fingerprint's offer is negotiated under, and the server's
    /// certificates (`None`: those the negotiated suites show).
    pub policy: Option<(Policy, Option<Certs>)>,
}

/// What the run found.
#[derive(Debug)]
pub struct ClientsOutcome {
    /// The fingerprints.
    pub report: ClientsReport,
    /// Line counts, inputs, `--strict`.
    pub run: RunSummary,
}

struct ClientsJob<'f> {
    lines: LineLoop<'f>,
    ja3: bool,
    client_key: ClientKey,
    client: Option<usize>,
    user_agent: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
    ciphers: Option<usize>,
    groups: Option<usize>,
    version: Option<usize>,
    versions: Option<usize>,
    extensions: Option<usize>,
    ec_formats: Option<usize>,
}

struct ClientsPartial {
    lines: LinePartial,
    agg: ClientsAgg,
}

has_lines!(ClientsPartial);

impl Job for ClientsJob<'_> {
    type Out = ClientsPartial;
    type Worker = ();

    fn lines_of(&self, out: &ClientsPartial) -> Option<u64> {
        Some(out.lines.stats.total)
    }

    fn worker(&self) {}

    fn run(&self, block: &Block, (): &mut ()) -> ClientsPartial {
        let mut agg = ClientsAgg::new(self.ja3);
        let mut scratch = Vec::new();
        let lines = self.lines.parse_block(block, |_, rec| {
            let field = |i: Option<usize>| i.and_then(|i| rec.raw(i));
            let offer = OfferFields {
                ciphers: field(self.ciphers),
                groups: field(self.groups),
                version: field(self.version),
                versions: field(self.versions),
                extensions: field(self.extensions),
                ec_formats: field(self.ec_formats),
            };
            let ua = self.user_agent.and_then(|i| rec.value(i));
            let ua_text = ua.as_deref().map(tlsgap_parser::lossless_text);
            let key = self.client_key.key(
                &mut scratch,
                field(self.client).unwrap_or(b"-"),
                ua.as_deref(),
            );
            agg.add(
                &offer,
                key,
                ua_text.as_deref(),
                field(self.protocol),
                field(self.cipher),
            );
        });
        ClientsPartial { lines, agg }
    }
}

/// Read the logs and group their requests by client fingerprint. Errors: no input could
/// be opened, a bad format, or a format without the offered suites.
pub fn run(run: &RunOptions, opts: &ClientsOptions) -> Result<ClientsOutcome> {
    let prepared = lines::prepare(run)?;
    let format = prepared.format.clone();
    if !format.has(Role::TlsOfferedCiphers) {
        bail!(
            "clients needs the cipher suites the client offered in the log: add \
             $ssl_ciphers $ssl_curves (nginx, or use the nginx-ssl-full preset) or, with \
             httpd trunk's SSLClientHelloVars On, %{{SSL_CLIENTHELLO_VERSION}}x \
             %{{SSL_CLIENTHELLO_CIPHERS}}x %{{SSL_CLIENTHELLO_EXTENSIONS}}x \
             %{{SSL_CLIENTHELLO_GROUPS}}x %{{SSL_CLIENTHELLO_EC_FORMATS}}x to the \
             server's format, or pass the right one with --log-format"
        );
    }
    let ja3 = [
        Role::TlsHelloVersion,
        Role::TlsOfferedCiphers,
        Role::TlsHelloExtensions,
        Role::TlsOfferedGroups,
        Role::TlsHelloEcFormats,
    ]
    .iter()
    .all(|r| format.has(*r));
    let classifier = Classifier::new()?;
    let mut bad = BadLineSink::new(run)?;
    let window = prepared.window;
    let client_key =
        crate::tls::effective_client_key(opts.client_key, &format, CountMode::Clients, run);
    let job = ClientsJob {
        lines: LineLoop::new(&format, window.as_ref(), &bad),
        ja3,
        client_key,
        client: format.role(Role::Client),
        user_agent: format.role(Role::UserAgent),
        protocol: format.role(Role::TlsProtocol),
        cipher: format.role(Role::TlsCipher),
        ciphers: format.role(Role::TlsOfferedCiphers),
        groups: format.role(Role::TlsOfferedGroups),
        version: format.role(Role::TlsHelloVersion),
        versions: format.role(Role::TlsHelloVersions),
        extensions: format.role(Role::TlsHelloExtensions),
        ec_formats: format.role(Role::TlsHelloEcFormats),
    };
    let mut total = ClientsAgg::new(ja3);
    let summary = lines::run_job(run, prepared, &job, &mut bad, |_, p| {
        total.merge(p.agg);
        Ok(())
    })?;
    let policy = opts
        .policy
        .as_ref()
        .map(|(p, certs)| (p, certs.unwrap_or_else(|| total.certs_seen())));
    let report = total.report(
        &mut |ua| classifier.kind(ua),
        opts.top,
        policy,
        &summary.stats,
        summary.inputs.clone(),
    );
    Ok(ClientsOutcome {
        report,
        run: summary,
    })
}
