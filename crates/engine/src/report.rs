//! The nightly report's figures (`tlsgap report`), in one pass over the logs: the
//! protocol/cipher distribution, the what-if evidence for each policy (by default the
//! three Mozilla profiles of [`PROFILES`]), requests per period and protocol, line
//! counts and, with an htpasswd file or traces, the per-user authentication cost.
//! Rendering (HTML, text, JSON) is the front end's.

use tlsgap_agg::authjoin::{AuthReport, Request};
use tlsgap_agg::numbering::ClientIds;
use tlsgap_agg::whatif::{LoggedAgent, WhatifAgg, WhatifReport};
use tlsgap_agg::{CountMode, TlsAgg, TlsReport};
use tlsgap_ciphers::policy::Policy;
use tlsgap_parser::Role;

use crate::auth::{self, AuthOptions, LogEvidence, RequestFields};
use crate::lines::{self, has_lines, BadLineSink, LineLoop, LinePartial, RunSummary};
use crate::runner::{Block, Job};
use crate::uakind::Classifier;
use crate::window::{period_key, Period, Zone};
use crate::{err, Result, RunOptions};
use tlsgap_agg::trend::{Trend, TrendCounter};

/// The Mozilla profiles a report tests when it is given no policy: the current
/// guideline's two, and the last `old` profile (5.7; guideline 6.0 removed it).
pub const PROFILES: [&str; 3] = ["mozilla-modern", "mozilla-intermediate", "mozilla-old-5.7"];

/// A policy the report tests the traffic against, with how it was asked for.
#[derive(Debug, Clone)]
pub struct ReportPolicy {
    /// The `--policy` argument as given (a profile name, a file, inline directives).
    pub spec: String,
    /// The policy (see [`crate::whatif::load_policy`]).
    pub policy: Policy,
}

impl ReportPolicy {
    /// The policies of a report given none: the profiles of [`PROFILES`].
    pub fn defaults() -> Result<Vec<ReportPolicy>> {
        PROFILES
            .iter()
            .map(|name| {
                Ok(ReportPolicy {
                    spec: (*name).to_string(),
                    policy: Policy::mozilla(name).map_err(|e| err!("{name}: {e}"))?,
                })
            })
            .collect()
    }
}

/// One policy's what-if, as the report shows it.
#[derive(Debug, Clone)]
pub struct PolicyWhatif {
    /// The `--policy` argument as given.
    pub spec: String,
    /// What the policy would refuse (what `whatif --policy SPEC --top 10` reports).
    pub report: WhatifReport,
}

/// How many refused User-Agents each what-if lists (`whatif`'s default `--top`).
pub const TOP_USER_AGENTS: usize = 10;

/// What the report covers.
#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// Period of the protocol-share trend.
    pub by: Period,
    /// Zone of the periods.
    pub zone: Zone,
    /// What one client is, in the what-if sections.
    pub client_key: tlsgap_agg::ClientKey,
    /// The policies of the what-if section, in the order shown
    /// ([`ReportPolicy::defaults`] for the usual three Mozilla profiles).
    pub policies: Vec<ReportPolicy>,
    /// With an htpasswd file or traces: the auth section (the access-log evidence is
    /// this report's own pass over the logs).
    pub auth: Option<AuthOptions>,
}

/// Everything the report shows.
#[derive(Debug)]
pub struct ReportOutcome {
    /// The distribution by request.
    pub tls: TlsReport,
    /// One what-if per policy of [`ReportOptions::policies`], in order (none when the
    /// log lacks the cipher or the protocol).
    pub whatifs: Vec<PolicyWhatif>,
    /// Requests per period and protocol, and the time span.
    pub trend: Trend,
    /// The auth section.
    pub auth: Option<AuthReport>,
    /// Whether a trace or the htpasswd file could not be read.
    pub auth_failed: bool,
    /// Notes for the page (sections left out, and why).
    pub notes: Vec<String>,
    /// Line counts, inputs, `--strict`.
    pub run: RunSummary,
}

struct ReportJob<'f> {
    lines: LineLoop<'f>,
    by: Period,
    zone: &'f Zone,
    client: Option<usize>,
    user_agent: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
    offer: crate::whatif::OfferColumns,
    groups: crate::groups::GroupColumns,
    whatif: bool,
    auth: bool,
    numbering: usize,
}

struct ReportPartial {
    lines: LinePartial,
    tls: TlsAgg,
    groups: tlsgap_agg::pq::GroupsAgg,
    whatif: WhatifAgg,
    trend: Trend,
    requests: Vec<Request>,
}

has_lines!(ReportPartial);

impl Job for ReportJob<'_> {
    type Out = ReportPartial;
    type Worker = ClientIds;

    fn worker(&self) -> ClientIds {
        ClientIds::new(self.numbering)
    }

    fn lines_of(&self, out: &ReportPartial) -> Option<u64> {
        Some(out.lines.stats.total)
    }

    fn run(&self, block: &Block, ids: &mut ClientIds) -> ReportPartial {
        let mut tls = TlsAgg::new(CountMode::Requests);
        let mut groups = tlsgap_agg::pq::GroupsAgg::default();
        let mut key = Vec::new();
        let mut whatif = self.offer.agg(WhatifAgg::new());
        let mut trend = TrendCounter::default();
        let mut requests = Vec::new();
        let fields = self.auth.then(|| RequestFields::new(self.lines.format));
        let lines = self.lines.parse_block(block, |_, rec| {
            self.groups.add(&mut groups, rec, &mut key);
            let client = self.client.and_then(|i| rec.raw(i));
            let protocol = self.protocol.and_then(|i| rec.raw(i));
            let cipher = self.cipher.and_then(|i| rec.raw(i));
            let pair = tls.add_pair(client, protocol, cipher);
            if self.whatif {
                let ua = LoggedAgent {
                    logged: self.user_agent.and_then(|i| rec.raw(i)),
                    text: || self.user_agent.and_then(|i| rec.value(i)),
                };
                whatif.add_numbered_as(
                    ids,
                    (client, ua),
                    pair,
                    (protocol, cipher),
                    self.offer.read(rec).as_ref(),
                );
            }
            let at = rec.time().map(|t| t.unix_micros());
            if let Some(at) = at {
                trend.seen(at);
            }
            // Plain HTTP (no protocol and no cipher) has no pair and no place in the
            // trend; the pair's number stands for its protocol.
            if let Some(pair) = pair {
                let protocol = protocol.unwrap_or(b"");
                trend.add_as(at, pair, protocol, |s| period_key(s, self.by, self.zone));
            }
            if let Some(f) = &fields {
                requests.push(f.request(rec));
            }
        });
        whatif.seal_numbered(ids);
        ReportPartial {
            lines,
            tls,
            groups,
            whatif,
            trend: trend.finish(),
            requests,
        }
    }
}

/// One pass over the logs for every section.
pub fn run(run: &RunOptions, opts: &ReportOptions) -> Result<ReportOutcome> {
    let prepared = lines::prepare(run)?;
    let format = prepared.format.clone();
    if !format.has(Role::TlsProtocol) && !format.has(Role::TlsCipher) {
        return Err(crate::tls::no_tls_fields());
    }
    let mut notes = Vec::new();
    let whatif = format.has(Role::TlsProtocol) && format.has(Role::TlsCipher);
    if !whatif {
        notes.push(
            "the what-if needs both the TLS protocol and the cipher in the log; this format \
             has only one"
                .to_string(),
        );
    }
    let wants_auth = opts.auth.is_some();
    let auth_from_log = wants_auth && format.has(Role::User);
    if wants_auth && !auth_from_log {
        notes.push(
            "the log format has no user field (%u / $remote_user): the auth section uses \
             only the htpasswd file and the traces"
                .to_string(),
        );
    }
    let mut bad = BadLineSink::new(run)?;
    let window = prepared.window;
    let job = ReportJob {
        lines: LineLoop::new(&format, window.as_ref(), &bad),
        by: opts.by,
        zone: &opts.zone,
        client: format.role(Role::Client),
        user_agent: format.role(Role::UserAgent),
        protocol: format.role(Role::TlsProtocol),
        cipher: format.role(Role::TlsCipher),
        offer: crate::whatif::OfferColumns::of(&format),
        groups: crate::groups::GroupColumns::of(
            &format,
            crate::tls::effective_client_key(opts.client_key, &format, CountMode::Requests, run),
        ),
        whatif,
        auth: auth_from_log,
        numbering: crate::whatif::numbering_limit(run),
    };
    let mut tls = TlsAgg::new(CountMode::Requests);
    let mut groups = tlsgap_agg::pq::GroupsAgg::default();
    let mut whatif_agg = job
        .offer
        .agg(WhatifAgg::with_memory_limit(run.memory_limit));
    let mut trend = Trend::default();
    let mut requests = Vec::new();
    let summary = lines::run_job(run, prepared, &job, &mut bad, |_, p| {
        tls.merge(p.tls);
        groups.merge(p.groups);
        whatif_agg.merge(p.whatif);
        trend.merge(p.trend);
        requests.extend(p.requests);
        Ok(())
    })?;
    whatif_agg.drop_numberings();
    let mut tls_report = tls.report(&summary.stats, summary.inputs.clone());
    tls_report.post_quantum = job.groups.report(&groups);
    if summary.strict_hit.is_some() {
        return Ok(ReportOutcome {
            tls: tls_report,
            whatifs: Vec::new(),
            trend,
            auth: None,
            auth_failed: false,
            notes,
            run: summary,
        });
    }

    let whatifs = if whatif {
        let classifier = Classifier::new()?;
        // Each distinct User-Agent is classified once, not once per policy.
        let mut kinds: rustc_hash::FxHashMap<String, tlsgap_agg::whatif::ClientKind> =
            rustc_hash::FxHashMap::default();
        // As `whatif` says it: a log without User-Agents counts addresses.
        let client_key =
            crate::tls::effective_client_key(opts.client_key, &format, CountMode::Requests, run);
        opts.policies
            .iter()
            .map(|p| PolicyWhatif {
                spec: p.spec.clone(),
                report: whatif_agg.report(
                    &p.policy,
                    client_key,
                    &mut |ua| match kinds.get(ua) {
                        Some(k) => *k,
                        None => {
                            let k = classifier.kind(ua);
                            kinds.insert(ua.to_string(), k);
                            k
                        }
                    },
                    TOP_USER_AGENTS,
                    &summary.stats,
                    summary.inputs.clone(),
                    None,
                ),
            })
            .collect::<Vec<_>>()
    } else {
        Vec::new()
    };
    if let Some(e) = whatifs.iter().find_map(|w| w.report.estimate) {
        run.notes.warn(e.note());
    }

    let mut auth_failed = false;
    let auth = match &opts.auth {
        Some(auth_opts) => {
            let logs = auth_from_log.then(|| LogEvidence {
                requests,
                stats: summary.stats.clone(),
                failed: false,
                user_slot: auth::UserSlot::of(&format),
                sub_second_times: auth::sub_second_times(&format),
                names: run
                    .inputs
                    .iter()
                    .map(|p| crate::input::path_text(p))
                    .collect(),
            });
            let auth_opts = AuthOptions {
                window: run.window,
                day_zone: opts.zone.is_given().then(|| opts.zone.clone()),
                ..auth_opts.clone()
            };
            let outcome = auth::build_report(&auth_opts, logs, &run.notes)?;
            auth_failed = outcome.failed;
            Some(outcome.report)
        }
        None => None,
    };
    Ok(ReportOutcome {
        tls: tls_report,
        whatifs,
        trend,
        auth,
        auth_failed,
        notes,
        run: summary,
    })
}
