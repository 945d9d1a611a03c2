//! What a TLS policy would refuse (`tlsgap whatif`, and the report's three profiles).

use tlsgap_agg::numbering::ClientIds;
use tlsgap_agg::whatif::{ListedRequest, LoggedAgent, OfferFields, WhatifAgg, WhatifReport};
use tlsgap_ciphers::handshake::Certs;
use tlsgap_ciphers::policy::{ConfigOptions, Policy, PolicyError};
use tlsgap_parser::{Format, Record, Role};

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
    /// What one client is.
    pub client_key: tlsgap_agg::ClientKey,
    /// The server's certificates, for the exact answer from logged offers (`None`:
    /// inferred from the negotiated suites).
    pub certs: Option<Certs>,
    /// Keep every TLS request for a per-request listing ([`WhatifOutcome::listed`]).
    pub list_requests: bool,
}

/// Where a format logs the client's offer (`$ssl_ciphers`, `SSL_CLIENTHELLO_*`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OfferColumns {
    ciphers: Option<usize>,
    groups: Option<usize>,
    versions: Option<usize>,
    version: Option<usize>,
}

impl OfferColumns {
    pub(crate) fn of(format: &Format) -> OfferColumns {
        OfferColumns {
            ciphers: format.role(Role::TlsOfferedCiphers),
            groups: format.role(Role::TlsOfferedGroups),
            versions: format.role(Role::TlsHelloVersions),
            version: format.role(Role::TlsHelloVersion),
        }
    }

    /// Whether the format logs the offered suites.
    pub(crate) fn logged(&self) -> bool {
        self.ciphers.is_some()
    }

    /// The offer of one line (`None` when the format logs none).
    pub(crate) fn read<'a>(&self, rec: &Record<'a>) -> Option<OfferFields<'a>> {
        let ciphers = self.ciphers?;
        Some(OfferFields {
            ciphers: rec.raw(ciphers),
            groups: self.groups.and_then(|i| rec.raw(i)),
            versions: self.versions.and_then(|i| rec.raw(i)),
            version: self.version.and_then(|i| rec.raw(i)),
        })
    }

    /// An aggregate that expects offers when the format logs them.
    pub(crate) fn agg(&self, agg: WhatifAgg) -> WhatifAgg {
        let mut agg = agg;
        if self.logged() {
            agg.expect_offers();
        }
        agg
    }
}

/// What the run found.
#[derive(Debug)]
pub struct WhatifOutcome {
    /// What the policy would refuse.
    pub report: WhatifReport,
    /// Line counts, inputs, `--strict`.
    pub run: RunSummary,
    /// Every TLS request in input order, with [`WhatifOptions::list_requests`].
    pub listed: Vec<ListedRequest>,
}

struct WhatifJob<'f> {
    lines: LineLoop<'f>,
    client: Option<usize>,
    user_agent: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
    offer: OfferColumns,
    list: bool,
    numbering: usize,
}

/// The bytes each worker's numbering of clients may take before it starts over
/// ([`ClientIds`]): an eighth of the memory limit, shared by the workers, at least
/// 1 MiB (the merging thread keeps a copy of each numbering's names: about as much
/// again).
pub(crate) fn numbering_limit(run: &RunOptions) -> usize {
    (run.memory_limit / 8 / run.jobs.max(1)).max(1 << 20)
}

struct WhatifPartial {
    lines: LinePartial,
    agg: WhatifAgg,
    /// With `list`: the TLS requests, line numbers relative to the block.
    listed: Vec<ListedRequest>,
}

has_lines!(WhatifPartial);

impl Job for WhatifJob<'_> {
    type Out = WhatifPartial;
    type Worker = ClientIds;

    fn worker(&self) -> ClientIds {
        ClientIds::new(self.numbering)
    }

    fn lines_of(&self, out: &WhatifPartial) -> Option<u64> {
        Some(out.lines.stats.total)
    }

    fn run(&self, block: &Block, ids: &mut ClientIds) -> WhatifPartial {
        let mut agg = self.offer.agg(WhatifAgg::new());
        let mut listed = Vec::new();
        let lines = self.lines.parse_block(block, |rel, rec| {
            let client = self.client.and_then(|i| rec.raw(i));
            let protocol = self.protocol.and_then(|i| rec.raw(i));
            let cipher = self.cipher.and_then(|i| rec.raw(i));
            let offer = self.offer.read(rec);
            if self.list
                && (protocol.is_some_and(|p| !p.is_empty())
                    || cipher.is_some_and(|c| !c.is_empty()))
            {
                listed.push(ListedRequest {
                    input: block.input,
                    line: rel,
                    client: client.unwrap_or(b"-").into(),
                    user_agent: self
                        .user_agent
                        .and_then(|i| rec.value(i))
                        .as_deref()
                        .unwrap_or(b"-")
                        .into(),
                    protocol: protocol.unwrap_or(b"").into(),
                    cipher: cipher.unwrap_or(b"").into(),
                    offer: offer.as_ref().and_then(OfferFields::to_key),
                });
            }
            let logged = LoggedAgent {
                logged: self.user_agent.and_then(|i| rec.raw(i)),
                text: || self.user_agent.and_then(|i| rec.value(i)),
            };
            agg.add_numbered(ids, client, logged, (protocol, cipher), offer.as_ref());
        });
        agg.seal_numbered(ids);
        WhatifPartial { lines, agg, listed }
    }
}

/// `whatif` over an exported dataset: the rows' `client`, `user_agent`, `tls_protocol`
/// and `tls_cipher`, judged as `run` judges log lines.
#[cfg(feature = "parquet")]
struct DatasetVisit {
    agg: WhatifAgg,
}

#[cfg(feature = "parquet")]
impl crate::merge::Visit for DatasetVisit {
    fn wants_time(&self) -> bool {
        false
    }

    fn wants_user_agent(&self) -> bool {
        true
    }

    fn wants_offer(&self) -> bool {
        true
    }

    fn row(&mut self, r: &crate::merge::Row<'_>) {
        let offer = r.offer.map(|[c, g, vs, v]| {
            self.agg.expect_offers();
            OfferFields {
                ciphers: c.map(str::as_bytes),
                groups: g.map(str::as_bytes),
                versions: vs.map(str::as_bytes),
                version: v.map(str::as_bytes),
            }
        });
        self.agg.add_offered(
            r.client.map(str::as_bytes),
            r.user_agent.flatten().map(str::as_bytes),
            r.protocol.map(str::as_bytes),
            r.cipher.map(str::as_bytes),
            offer.as_ref(),
        );
    }
}

/// What the policy would refuse in the rows of a dataset `export --partition-by date`
/// wrote (files, days, hosts and window as `merge` selects them; `selection.count`
/// is not used). Errors: nothing found, nothing readable.
#[cfg(feature = "parquet")]
pub fn run_dataset(
    selection: &crate::merge::MergeOptions,
    opts: &WhatifOptions,
    notes: &crate::Notes,
) -> Result<(WhatifReport, crate::merge::Scanned)> {
    let classifier = Classifier::new()?;
    let mut visit = DatasetVisit {
        agg: WhatifAgg::with_memory_limit(selection.memory_limit),
    };
    let scanned = crate::merge::scan(selection, &mut visit, notes)?;
    let report = visit.agg.report(
        &opts.policy,
        opts.client_key,
        &mut |ua| classifier.kind(ua),
        opts.top,
        &scanned.stats,
        scanned.inputs.clone(),
        opts.certs,
    );
    if let Some(e) = &report.estimate {
        notes.warn(e.note());
    }
    Ok((report, scanned))
}

/// Where the security level of server directives comes from, unless their cipher string
/// sets `@SECLEVEL=N`.
#[derive(Debug, Clone, Default)]
pub struct SystemTls {
    /// `--seclevel N`: wins over the configuration file.
    pub seclevel: Option<u8>,
    /// The server's `openssl.cnf` (`--openssl-conf`, else `$OPENSSL_CONF`, else the
    /// system's), and whether it was named explicitly (then it must be readable).
    pub openssl_conf: Option<(std::path::PathBuf, bool)>,
}

/// The security level a server reading `system` starts from, and where it comes from
/// (`CipherString in /etc/ssl/openssl.cnf`, ...).
pub fn system_seclevel(system: &SystemTls) -> Result<(u8, String)> {
    Ok(system_defaults(system)?.0)
}

/// [`system_seclevel`], and the TLS 1.3 suites the `openssl.cnf` sets (`Ciphersuites`),
/// which hold for a server whose directives set none.
fn system_defaults(system: &SystemTls) -> Result<((u8, String), Option<String>)> {
    use tlsgap_ciphers::cipherstring::DEBIAN_DEFAULT_SECLEVEL;
    let builtin = format!("Debian's built-in default {DEBIAN_DEFAULT_SECLEVEL}");
    let file = match read_system_default(system) {
        Ok(file) => file,
        // With `--seclevel` the level does not come from a file the user did not name,
        // so that file failing to read is no reason to stop.
        Err(_)
            if system.seclevel.is_some() && !system.openssl_conf.as_ref().is_some_and(|c| c.1) =>
        {
            None
        }
        Err(e) => return Err(e),
    };
    let ciphersuites = file.as_ref().and_then(|(d, _)| d.ciphersuites.clone());
    if let Some(level) = system.seclevel {
        if level > 5 {
            bail!("--seclevel {level}: OpenSSL's security levels are 0 to 5");
        }
        return Ok(((level, format!("--seclevel {level}")), ciphersuites));
    }
    let Some((d, path)) = file else {
        return Ok(((DEBIAN_DEFAULT_SECLEVEL, builtin), None));
    };
    let level = match d.seclevel {
        Some(level) => (level, format!("CipherString in {}", path.display())),
        None => (
            DEBIAN_DEFAULT_SECLEVEL,
            format!("{builtin}; {} sets none", path.display()),
        ),
    };
    Ok((level, ciphersuites))
}

/// The `system_default` section of the server's `openssl.cnf`; `None` when there is no
/// file to read (none named, or the system's is missing).
fn read_system_default(
    system: &SystemTls,
) -> Result<
    Option<(
        tlsgap_ciphers::opensslcnf::SystemDefault,
        std::path::PathBuf,
    )>,
> {
    let Some((path, explicit)) = &system.openssl_conf else {
        return Ok(None);
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if !explicit && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => bail!("reading {}: {e}", path.display()),
    };
    let d = tlsgap_ciphers::opensslcnf::system_default(&text)
        .map_err(|e| err!("{}: {e}", path.display()))?;
    Ok(Some((d, path.clone())))
}

/// The policy `spec` names: a Mozilla profile, a file of server directives, or
/// directives given inline; directives are read at the level [`system_seclevel`] gives.
pub fn load_policy(spec: &str, system: &SystemTls) -> Result<Policy> {
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
            "--policy {spec:?}: not a profile ({}), not a file, and not server directives",
            tlsgap_ciphers::policy::mozilla_profile_names().join(", ")
        );
    };
    let mut policy = directives_policy(&text, system)?.map_err(|e| err!("--policy {spec}: {e}"))?;
    if let Some(file) = &policy.dh_file {
        // A relative name is read from the policy file's directory (the server's own
        // prefix is not known here).
        let at = std::path::Path::new(&file.path);
        let at = match path.parent().filter(|_| path.is_file() && at.is_relative()) {
            Some(dir) => dir.join(at),
            None => at.to_path_buf(),
        };
        let text = read_small(&at).map_err(|e| format!("{}: {e}", at.display()));
        policy
            .check_dh_parameters(text.as_deref().map_err(Clone::clone))
            .map_err(|e| err!("--policy {spec}: {e}"))?;
    }
    Ok(policy)
}

/// A small text file (a DH parameters file: a few KiB; more than 1 MiB is not one).
fn read_small(path: &std::path::Path) -> std::io::Result<String> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(1 << 20)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// A bare OpenSSL cipher string as a policy ([`Policy::from_cipher_string`]), read at the
/// level [`system_seclevel`] gives. The outer error is the system configuration's; the
/// inner one the string's.
pub fn cipher_string_policy(
    string: &str,
    system: &SystemTls,
) -> Result<std::result::Result<Policy, PolicyError>> {
    at_system_level(system, &|options, suites| {
        Policy::from_cipher_string(string, options, suites)
    })
}

/// The policy of server directives `text`, read at the level [`system_seclevel`] gives.
/// The outer error is the system configuration's; the inner one the directives'.
pub fn directives_policy(
    text: &str,
    system: &SystemTls,
) -> Result<std::result::Result<Policy, PolicyError>> {
    at_system_level(system, &|options, suites| {
        Policy::from_config_with(text, options, suites)
    })
}

type Build<'a> = &'a dyn Fn(
    ConfigOptions,
    &'static [tlsgap_ciphers::Suite],
) -> std::result::Result<Policy, PolicyError>;

fn at_system_level(
    system: &SystemTls,
    build: Build<'_>,
) -> Result<std::result::Result<Policy, PolicyError>> {
    let ((level, origin), default_ciphersuites) = system_defaults(system)?;
    let options = ConfigOptions {
        default_seclevel: level,
        default_ciphersuites,
        ..ConfigOptions::default()
    };
    Ok(
        build(options, tlsgap_ciphers::catalogue::all()).map(|mut policy| {
            if policy.seclevel_origin.as_deref() == Some("the system default") {
                policy.seclevel_origin = Some(origin);
            }
            policy
        }),
    )
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
        offer: OfferColumns::of(&format),
        list: opts.list_requests,
        numbering: numbering_limit(run),
    };
    let client_key = crate::tls::effective_client_key(
        opts.client_key,
        &format,
        tlsgap_agg::CountMode::Clients,
        run,
    );
    let mut total = job
        .offer
        .agg(WhatifAgg::with_memory_limit(run.memory_limit));
    let mut listed = Vec::new();
    let summary = lines::run_job(run, prepared, &job, &mut bad, |meta, p| {
        total.merge(p.agg);
        listed.extend(p.listed.into_iter().map(|mut r| {
            r.line += meta.line_base + 1;
            r
        }));
        Ok(())
    })?;
    total.drop_numberings();
    let report = total.report(
        &opts.policy,
        client_key,
        &mut |ua| classifier.kind(ua),
        opts.top,
        &summary.stats,
        summary.inputs.clone(),
        opts.certs,
    );
    if let Some(e) = &report.estimate {
        run.notes.warn(e.note());
    }
    Ok(WhatifOutcome {
        report,
        run: summary,
        listed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `Ciphersuites` of the server's openssl.cnf is the TLS 1.3 list of directives
    /// that set none, with `--seclevel` too (cipher audit, F2).
    #[test]
    fn system_ciphersuites_reach_the_directives() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("openssl.cnf");
        std::fs::write(
            &path,
            "openssl_conf = a\n[a]\nssl_conf = b\n[b]\nsystem_default = c\n[c]\n\
             Ciphersuites = TLS_AES_256_GCM_SHA384\n",
        )
        .unwrap();
        for seclevel in [None, Some(1)] {
            let system = SystemTls {
                seclevel,
                openssl_conf: Some((path.clone(), true)),
            };
            let p = directives_policy("ssl_protocols TLSv1.2 TLSv1.3;", &system)
                .unwrap()
                .unwrap();
            let tls13: Vec<&str> = p.tls13.iter().map(|s| s.openssl[0].as_str()).collect();
            assert_eq!(tls13, ["TLS_AES_256_GCM_SHA384"], "{seclevel:?}");
        }
    }
}
