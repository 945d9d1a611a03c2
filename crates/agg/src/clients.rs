//! TLS client fingerprints with their User-Agents (`tlsgap clients`).
//!
//! Requests are grouped by the fingerprint of the ClientHello offer the server logged
//! ([`crate::fingerprint`]); under each fingerprint: the requests, the distinct clients,
//! the User-Agents and their kinds, what was negotiated, whether a post-quantum group
//! was offered, and (with a policy) what the offer would get under it. A fingerprint
//! seen under browser User-Agents and library ones alike is flagged: one TLS stack
//! cannot be both, so some of those clients claim to be what they are not.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
use tlsgap_ciphers::handshake::{self, Certs, Outcome};
use tlsgap_ciphers::offer::Offer;
use tlsgap_ciphers::policy::Policy;
use tlsgap_ciphers::{groups::Group, Protocol};
use tlsgap_parser::lossless_text;

use crate::fingerprint::{self, Hello, Method};
use crate::lines::{LineStats, LinesReport};
use crate::rows::{Cell, CellType, Rows};
use crate::tls::InputReport;
use crate::whatif::ClientKind;

/// The logged offer of one request, raw (`None`: not in the log format).
#[derive(Clone, Copy, Debug, Default)]
pub struct OfferFields<'a> {
    /// `$ssl_ciphers` / `SSL_CLIENTHELLO_CIPHERS`.
    pub ciphers: Option<&'a [u8]>,
    /// `$ssl_curves` / `SSL_CLIENTHELLO_GROUPS`.
    pub groups: Option<&'a [u8]>,
    /// `SSL_CLIENTHELLO_VERSION`.
    pub version: Option<&'a [u8]>,
    /// `SSL_CLIENTHELLO_VERSIONS`.
    pub versions: Option<&'a [u8]>,
    /// `SSL_CLIENTHELLO_EXTENSIONS`.
    pub extensions: Option<&'a [u8]>,
    /// `SSL_CLIENTHELLO_EC_FORMATS`.
    pub ec_formats: Option<&'a [u8]>,
}

impl OfferFields<'_> {
    /// Every field as one key (for the cache of fingerprints already computed).
    fn key(&self, out: &mut Vec<u8>) {
        out.clear();
        for f in [
            self.ciphers,
            self.groups,
            self.version,
            self.versions,
            self.extensions,
            self.ec_formats,
        ] {
            match f {
                Some(v) => {
                    out.push(1);
                    out.extend_from_slice(v);
                }
                None => out.push(0),
            }
            out.push(0xff);
        }
    }
}

fn text(v: Option<&[u8]>) -> Option<std::borrow::Cow<'_, str>> {
    v.map(lossless_text)
}

/// What the offer of a fingerprint was, as first seen (to replay under a policy).
#[derive(Clone, Debug, Default)]
struct Sample {
    ciphers: Option<String>,
    groups: Option<String>,
    versions: Option<String>,
    version: Option<String>,
}

impl Sample {
    fn offer(&self) -> Offer {
        Offer::parse(
            self.ciphers.as_deref(),
            self.groups.as_deref(),
            self.versions.as_deref(),
            self.version.as_deref(),
        )
    }
}

/// Everything counted under one fingerprint.
#[derive(Clone, Debug)]
struct Entry {
    method: Method,
    /// The JA3 string, for JA3 fingerprints.
    ja3_text: Option<String>,
    post_quantum: bool,
    requests: u64,
    clients: FxHashSet<Box<[u8]>>,
    user_agents: FxHashMap<String, u64>,
    negotiated: FxHashMap<(String, String), u64>,
    sample: Sample,
}

/// How many distinct offers a partial remembers the fingerprint of.
const CACHE_LIMIT: usize = 4096;

/// A mergeable set of fingerprints. Merging is ordered (`a.merge(b)`: `b` came after
/// `a`) only for which offer of a fingerprint is kept as its sample; every figure is
/// the same in any order.
#[derive(Clone, Debug, Default)]
pub struct ClientsAgg {
    ja3: bool,
    entries: FxHashMap<String, Entry>,
    no_offer: u64,
    /// Raw offer → fingerprint (`None`: no offer in it), so that a repeated offer is
    /// not read again.
    cache: FxHashMap<Box<[u8]>, Option<String>>,
    scratch: Vec<u8>,
}

impl ClientsAgg {
    /// An empty set; `ja3`: the format logs every JA3 input, so JA3 is computed where a
    /// line's values allow it (else tg1).
    pub fn new(ja3: bool) -> ClientsAgg {
        ClientsAgg {
            ja3,
            ..ClientsAgg::default()
        }
    }

    /// Count one request: its offer, its client key (address, or address and
    /// User-Agent), its User-Agent, and the negotiated protocol and suite.
    pub fn add(
        &mut self,
        offer: &OfferFields<'_>,
        client: &[u8],
        user_agent: Option<&str>,
        protocol: Option<&[u8]>,
        cipher: Option<&[u8]>,
    ) {
        let mut key = std::mem::take(&mut self.scratch);
        offer.key(&mut key);
        let fp = match self.cache.get(key.as_slice()) {
            Some(fp) => fp.clone(),
            None => {
                let fp = self.first_sight(offer);
                if self.cache.len() < CACHE_LIMIT {
                    self.cache.insert(key.as_slice().into(), fp.clone());
                }
                fp
            }
        };
        self.scratch = key;
        let Some(entry) = fp.and_then(|fp| self.entries.get_mut(&fp)) else {
            self.no_offer += 1;
            return;
        };
        entry.requests += 1;
        if !entry.clients.contains(client) {
            entry.clients.insert(client.into());
        }
        let ua = user_agent.unwrap_or("-");
        match entry.user_agents.get_mut(ua) {
            Some(n) => *n += 1,
            None => {
                entry.user_agents.insert(ua.to_string(), 1);
            }
        }
        let p = protocol
            .filter(|p| !p.is_empty())
            .map_or_else(String::new, |p| lossless_text(p).into_owned());
        let c = cipher
            .filter(|c| !c.is_empty())
            .map_or_else(String::new, |c| lossless_text(c).into_owned());
        *entry.negotiated.entry((p, c)).or_insert(0) += 1;
    }

    /// The fingerprint of an offer not in the cache, making its entry if it is new.
    fn first_sight(&mut self, offer: &OfferFields<'_>) -> Option<String> {
        let ciphers = text(offer.ciphers);
        let groups = text(offer.groups);
        let ja3 = if self.ja3 {
            let (version, extensions, ec_formats) = (
                text(offer.version),
                text(offer.extensions),
                text(offer.ec_formats),
            );
            fingerprint::ja3(&Hello {
                version: version.as_deref(),
                ciphers: ciphers.as_deref(),
                extensions: extensions.as_deref(),
                groups: groups.as_deref(),
                ec_formats: ec_formats.as_deref(),
            })
        } else {
            None
        };
        let versions = text(offer.versions);
        let version = text(offer.version);
        let parsed = Offer::parse(
            ciphers.as_deref(),
            groups.as_deref(),
            versions.as_deref(),
            version.as_deref(),
        );
        if parsed.is_empty() && ja3.is_none() {
            return None;
        }
        let (method, fp, ja3_text) = match ja3 {
            Some((text, digest)) => (Method::Ja3, digest, Some(text)),
            None => (Method::Tg1, fingerprint::tg1_of(&parsed), None),
        };
        if !self.entries.contains_key(&fp) {
            let own = |v: Option<std::borrow::Cow<'_, str>>| v.map(|s| s.into_owned());
            self.entries.insert(
                fp.clone(),
                Entry {
                    method,
                    ja3_text,
                    post_quantum: parsed.offers_group(Group::post_quantum),
                    requests: 0,
                    clients: FxHashSet::default(),
                    user_agents: FxHashMap::default(),
                    negotiated: FxHashMap::default(),
                    sample: Sample {
                        ciphers: own(ciphers),
                        groups: own(groups),
                        versions: own(versions),
                        version: own(version),
                    },
                },
            );
        }
        Some(fp)
    }

    /// Add what came after `self`.
    pub fn merge(&mut self, other: ClientsAgg) {
        self.no_offer += other.no_offer;
        for (fp, theirs) in other.entries {
            match self.entries.get_mut(&fp) {
                None => {
                    self.entries.insert(fp, theirs);
                }
                Some(mine) => {
                    mine.requests += theirs.requests;
                    mine.clients.extend(theirs.clients);
                    for (ua, n) in theirs.user_agents {
                        *mine.user_agents.entry(ua).or_insert(0) += n;
                    }
                    for (pair, n) in theirs.negotiated {
                        *mine.negotiated.entry(pair).or_insert(0) += n;
                    }
                }
            }
        }
    }

    /// The certificates the server evidently has: RSA if a negotiated suite
    /// authenticates with RSA, ECDSA if one does with ECDSA; RSA when none says.
    pub fn certs_seen(&self) -> Certs {
        Certs::seen(
            self.entries
                .values()
                .flat_map(|e| e.negotiated.keys())
                .flat_map(|(_, cipher)| tlsgap_ciphers::catalogue::by_name(cipher)),
        )
    }

    /// The typed result: fingerprints by requests (descending), then by name; `kind`
    /// classifies a User-Agent; `top` User-Agents are listed per fingerprint; with a
    /// policy, each fingerprint's first offer is negotiated under it.
    pub fn report(
        &self,
        kind: &mut dyn FnMut(&str) -> ClientKind,
        top: usize,
        policy: Option<(&Policy, Certs)>,
        lines: &LineStats,
        inputs: Vec<InputReport>,
    ) -> ClientsReport {
        let requests: u64 = self.entries.values().map(|e| e.requests).sum();
        let share = |n: u64| {
            if requests == 0 {
                0.0
            } else {
                n as f64 / requests as f64
            }
        };
        let mut kinds: FxHashMap<&str, ClientKind> = FxHashMap::default();
        let mut all_clients: FxHashSet<&[u8]> = FxHashSet::default();
        let mut pq_clients: FxHashSet<&[u8]> = FxHashSet::default();
        let mut rows = Vec::with_capacity(self.entries.len());
        for (fp, e) in &self.entries {
            all_clients.extend(e.clients.iter().map(|c| &c[..]));
            if e.post_quantum {
                pq_clients.extend(e.clients.iter().map(|c| &c[..]));
            }
            let mut by_kind = KindCounts::default();
            let mut uas: Vec<UserAgentRow> = e
                .user_agents
                .iter()
                .map(|(ua, &n)| {
                    let k = *kinds.entry(ua.as_str()).or_insert_with(|| {
                        if ua == "-" {
                            ClientKind::Unknown
                        } else {
                            kind(ua)
                        }
                    });
                    by_kind.add(k, n);
                    UserAgentRow {
                        user_agent: ua.clone(),
                        requests: n,
                        kind: k,
                    }
                })
                .collect();
            uas.sort_by(|a, b| {
                b.requests
                    .cmp(&a.requests)
                    .then_with(|| a.user_agent.cmp(&b.user_agent))
            });
            let distinct_uas = uas.len() as u64;
            uas.truncate(top);
            let mut negotiated: Vec<NegotiatedRow> = e
                .negotiated
                .iter()
                .map(|((p, c), &n)| NegotiatedRow {
                    protocol: p.clone(),
                    cipher: c.clone(),
                    requests: n,
                    share: if e.requests == 0 {
                        0.0
                    } else {
                        n as f64 / e.requests as f64
                    },
                })
                .collect();
            negotiated.sort_by(|a, b| {
                b.requests
                    .cmp(&a.requests)
                    .then_with(|| a.protocol.cmp(&b.protocol))
                    .then_with(|| a.cipher.cmp(&b.cipher))
            });
            let under_policy = policy.map(|(p, certs)| {
                let newest = e
                    .negotiated
                    .keys()
                    .filter_map(|(p, _)| Protocol::parse(p))
                    .max();
                PolicyOutcome::of(handshake::negotiate(p, certs, &e.sample.offer(), newest))
            });
            rows.push(FingerprintRow {
                fingerprint: fp.clone(),
                method: e.method,
                ja3: e.ja3_text.clone(),
                requests: e.requests,
                share: share(e.requests),
                clients: e.clients.len() as u64,
                post_quantum: e.post_quantum,
                mixed: by_kind.browser > 0 && by_kind.library > 0,
                kinds: by_kind,
                distinct_user_agents: distinct_uas,
                user_agents: uas,
                negotiated,
                policy: under_policy,
            });
        }
        rows.sort_by(|a, b| {
            b.requests
                .cmp(&a.requests)
                .then_with(|| a.fingerprint.cmp(&b.fingerprint))
        });
        let pq_requests = rows
            .iter()
            .filter(|r| r.post_quantum)
            .map(|r| r.requests)
            .sum();
        ClientsReport {
            lines: lines.report(),
            requests,
            no_offer: self.no_offer,
            clients: all_clients.len() as u64,
            distinct_fingerprints: rows.len() as u64,
            mixed: rows.iter().filter(|r| r.mixed).count() as u64,
            post_quantum_offered: PqOffered {
                requests: pq_requests,
                share: share(pq_requests),
                clients: pq_clients.len() as u64,
                fingerprints: rows.iter().filter(|r| r.post_quantum).count() as u64,
            },
            policy: policy.map(|(p, certs)| PolicyName {
                name: p.name.clone(),
                certs: certs.as_str(),
            }),
            fingerprints: rows,
            inputs,
        }
    }
}

/// `tlsgap clients --format json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ClientsReport {
    /// Line counts.
    pub lines: LinesReport,
    /// Requests with an offer logged (what `share` is relative to).
    pub requests: u64,
    /// Parsed lines without an offer (plain HTTP, a resumed session logging none, `-`).
    pub no_offer: u64,
    /// Distinct clients with an offer logged.
    pub clients: u64,
    /// Distinct fingerprints.
    pub distinct_fingerprints: u64,
    /// Fingerprints seen under browser and library User-Agents alike.
    pub mixed: u64,
    /// Requests, clients and fingerprints whose offer holds a post-quantum group.
    pub post_quantum_offered: PqOffered,
    /// With `--policy`: its name and the certificates assumed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyName>,
    /// Fingerprints by requests, descending, then by name.
    pub fingerprints: Vec<FingerprintRow>,
    /// The inputs read.
    pub inputs: Vec<InputReport>,
}

/// The policy fingerprints were negotiated under.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PolicyName {
    /// Its name (profile, file, or `inline`).
    pub name: String,
    /// The certificates the server is taken to hold (`rsa`, `ecdsa`, `rsa+ecdsa`).
    pub certs: &'static str,
}

/// Offers with a post-quantum group.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct PqOffered {
    /// Requests.
    pub requests: u64,
    /// `requests / ` all requests with an offer.
    pub share: f64,
    /// Distinct clients.
    pub clients: u64,
    /// Fingerprints.
    pub fingerprints: u64,
}

/// Requests per User-Agent kind.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct KindCounts {
    /// Browsers.
    pub browser: u64,
    /// Bots and crawlers.
    pub bot: u64,
    /// HTTP libraries and tools.
    pub library: u64,
    /// No User-Agent, or one not recognised.
    pub unknown: u64,
}

impl KindCounts {
    fn add(&mut self, kind: ClientKind, n: u64) {
        match kind {
            ClientKind::Browser => self.browser += n,
            ClientKind::Bot => self.bot += n,
            ClientKind::Library => self.library += n,
            ClientKind::Unknown => self.unknown += n,
        }
    }

    /// The kinds seen, most requests first (`browser 10, library 2`).
    pub fn seen(&self) -> Vec<(ClientKind, u64)> {
        let mut v: Vec<(ClientKind, u64)> = [
            (ClientKind::Browser, self.browser),
            (ClientKind::Bot, self.bot),
            (ClientKind::Library, self.library),
            (ClientKind::Unknown, self.unknown),
        ]
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        v
    }
}

/// One fingerprint.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FingerprintRow {
    /// The JA3 digest, or `tg1_` and 12 hex digits.
    pub fingerprint: String,
    /// `ja3` or `tg1`.
    pub method: Method,
    /// The JA3 string, for JA3 fingerprints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ja3: Option<String>,
    /// Requests.
    pub requests: u64,
    /// `requests /` all requests with an offer.
    pub share: f64,
    /// Distinct clients.
    pub clients: u64,
    /// Whether the offer holds a post-quantum group (X25519MLKEM768, ...).
    pub post_quantum: bool,
    /// Seen under browser and library User-Agents alike.
    pub mixed: bool,
    /// Requests per User-Agent kind.
    pub kinds: KindCounts,
    /// Distinct User-Agents.
    pub distinct_user_agents: u64,
    /// The most frequent User-Agents (`--top`), by requests.
    pub user_agents: Vec<UserAgentRow>,
    /// Negotiated protocol and suite, by requests.
    pub negotiated: Vec<NegotiatedRow>,
    /// With `--policy`: what this offer would get.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyOutcome>,
}

/// A User-Agent under a fingerprint.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UserAgentRow {
    /// As logged (`-`: none).
    pub user_agent: String,
    /// Requests.
    pub requests: u64,
    /// Its kind.
    pub kind: ClientKind,
}

/// A negotiated protocol and suite under a fingerprint.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NegotiatedRow {
    /// As logged (empty: not logged).
    pub protocol: String,
    /// As logged (empty: not logged).
    pub cipher: String,
    /// Requests.
    pub requests: u64,
    /// Of the fingerprint's requests.
    pub share: f64,
}

/// What an offer would get under a policy.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PolicyOutcome {
    /// Whether the handshake succeeds.
    pub works: bool,
    /// The protocol it would use.
    pub protocol: Option<&'static str>,
    /// The suite it would use (OpenSSL name).
    pub cipher: Option<String>,
    /// The key-exchange group, when the offer logs groups.
    pub group: Option<&'static str>,
    /// Why it fails (`no_common_cipher`, ...).
    pub failure: Option<&'static str>,
    /// Why it fails, for people.
    pub reason: Option<&'static str>,
}

impl PolicyOutcome {
    fn of(outcome: Outcome) -> PolicyOutcome {
        match outcome {
            Outcome::Works(w) => PolicyOutcome {
                works: true,
                protocol: Some(w.protocol.as_str()),
                cipher: Some(
                    w.suite
                        .openssl
                        .first()
                        .cloned()
                        .or_else(|| w.suite.iana.clone())
                        .unwrap_or_default(),
                ),
                group: w.group.map(|g| g.name),
                failure: None,
                reason: None,
            },
            Outcome::Fails(f) => PolicyOutcome {
                works: false,
                protocol: None,
                cipher: None,
                group: None,
                failure: Some(f.as_str()),
                reason: Some(f.describe()),
            },
        }
    }

    /// `works: TLSv1.3 TLS_AES_128_GCM_SHA256` or `fails: no_common_cipher`.
    pub fn summary(&self) -> String {
        if self.works {
            format!(
                "works: {} {}",
                self.protocol.unwrap_or("?"),
                self.cipher.as_deref().unwrap_or("?")
            )
        } else {
            format!("fails: {}", self.failure.unwrap_or("?"))
        }
    }
}

/// Columns of [`clients_rows`].
pub const CLIENTS_COLUMNS: [(&str, CellType); 18] = [
    ("fingerprint", CellType::Text),
    ("method", CellType::Text),
    ("requests", CellType::Int),
    ("share", CellType::Float),
    ("clients", CellType::Int),
    ("post_quantum", CellType::Bool),
    ("mixed", CellType::Bool),
    ("browser_requests", CellType::Int),
    ("bot_requests", CellType::Int),
    ("library_requests", CellType::Int),
    ("unknown_requests", CellType::Int),
    ("user_agents", CellType::Int),
    ("top_user_agent", CellType::Text),
    ("top_user_agent_requests", CellType::Int),
    ("top_protocol", CellType::Text),
    ("top_cipher", CellType::Text),
    ("policy_outcome", CellType::Text),
    ("policy_detail", CellType::Text),
];

/// One row per fingerprint (CSV and Parquet): its figures, its most frequent
/// User-Agent and negotiated pair, and with a policy `works`/`fails` and the protocol
/// and suite, or the failure.
pub fn clients_rows(r: &ClientsReport) -> Rows {
    let mut rows = Rows::new(&CLIENTS_COLUMNS);
    for f in &r.fingerprints {
        let ua = f.user_agents.first();
        let pair = f.negotiated.first();
        let (outcome, detail) = match &f.policy {
            None => (Cell::Null, Cell::Null),
            Some(p) if p.works => (
                "works".into(),
                format!(
                    "{} {}",
                    p.protocol.unwrap_or(""),
                    p.cipher.as_deref().unwrap_or("")
                )
                .into(),
            ),
            Some(p) => ("fails".into(), p.failure.unwrap_or("").into()),
        };
        rows.push(vec![
            f.fingerprint.as_str().into(),
            f.method.as_str().into(),
            f.requests.into(),
            f.share.into(),
            f.clients.into(),
            f.post_quantum.into(),
            f.mixed.into(),
            f.kinds.browser.into(),
            f.kinds.bot.into(),
            f.kinds.library.into(),
            f.kinds.unknown.into(),
            f.distinct_user_agents.into(),
            ua.map_or(Cell::Null, |u| u.user_agent.as_str().into()),
            ua.map_or(Cell::Null, |u| u.requests.into()),
            pair.map_or(Cell::Null, |p| p.protocol.as_str().into()),
            pair.map_or(Cell::Null, |p| p.cipher.as_str().into()),
            outcome,
            detail,
        ]);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nginx(ciphers: &'static str, groups: &'static str) -> OfferFields<'static> {
        OfferFields {
            ciphers: Some(ciphers.as_bytes()),
            groups: Some(groups.as_bytes()),
            ..OfferFields::default()
        }
    }

    fn kind(ua: &str) -> ClientKind {
        if ua.starts_with("Mozilla") {
            ClientKind::Browser
        } else if ua.starts_with("curl") {
            ClientKind::Library
        } else {
            ClientKind::Unknown
        }
    }

    const CHROME: &str =
        "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:ECDHE-RSA-AES128-GCM-SHA256";
    const CURL: &str = "TLS_AES_256_GCM_SHA384:ECDHE-RSA-AES256-GCM-SHA384";

    fn lines() -> Vec<(OfferFields<'static>, &'static [u8], &'static str)> {
        vec![
            (
                nginx(CHROME, "X25519MLKEM768:x25519"),
                b"a",
                "Mozilla/5.0 A",
            ),
            (
                nginx(CHROME, "X25519MLKEM768:x25519"),
                b"b",
                "Mozilla/5.0 B",
            ),
            (nginx(CURL, "x25519:prime256v1"), b"c", "curl/8.5.0"),
            // A script with curl's stack claiming to be a browser.
            (nginx(CURL, "x25519:prime256v1"), b"d", "Mozilla/5.0 fake"),
            (
                nginx(CHROME, "X25519MLKEM768:x25519"),
                b"a",
                "Mozilla/5.0 A",
            ),
            (nginx("-", "-"), b"e", "Mozilla/5.0 A"),
        ]
    }

    fn agg(rows: &[(OfferFields<'static>, &'static [u8], &'static str)]) -> ClientsAgg {
        let mut a = ClientsAgg::new(false);
        for (offer, client, ua) in rows {
            a.add(
                offer,
                client,
                Some(ua),
                Some(b"TLSv1.3"),
                Some(b"TLS_AES_128_GCM_SHA256"),
            );
        }
        a
    }

    #[test]
    fn fingerprints_kinds_and_the_mixed_flag() {
        let r = agg(&lines()).report(&mut kind, 10, None, &LineStats::default(), vec![]);
        assert_eq!((r.requests, r.no_offer, r.distinct_fingerprints), (5, 1, 2));
        let chrome = &r.fingerprints[0];
        assert_eq!((chrome.requests, chrome.clients), (3, 2));
        assert!(chrome.post_quantum && !chrome.mixed);
        assert_eq!(chrome.user_agents[0].user_agent, "Mozilla/5.0 A");
        assert_eq!(chrome.user_agents[0].requests, 2);
        let curl = &r.fingerprints[1];
        assert!(curl.mixed && !curl.post_quantum);
        assert_eq!((curl.kinds.browser, curl.kinds.library), (1, 1));
        assert_eq!(r.mixed, 1);
        assert_eq!(
            (
                r.post_quantum_offered.requests,
                r.post_quantum_offered.clients
            ),
            (3, 2)
        );
    }

    #[test]
    fn merged_halves_give_the_same_report() {
        let all = lines();
        let whole = agg(&all).report(&mut kind, 10, None, &LineStats::default(), vec![]);
        for cut in 0..=all.len() {
            let mut first = agg(&all[..cut]);
            first.merge(agg(&all[cut..]));
            let merged = first.report(&mut kind, 10, None, &LineStats::default(), vec![]);
            assert_eq!(merged, whole, "cut at {cut}");
        }
    }

    #[test]
    fn offers_replayed_under_a_policy() {
        let modern = Policy::mozilla("mozilla-modern").unwrap();
        let mut a = ClientsAgg::new(false);
        a.add(
            &nginx(CHROME, "x25519"),
            b"a",
            None,
            Some(b"TLSv1.3"),
            Some(b"TLS_AES_128_GCM_SHA256"),
        );
        a.add(
            &nginx("ECDHE-RSA-AES128-SHA:AES128-SHA", "prime256v1"),
            b"b",
            None,
            Some(b"TLSv1"),
            Some(b"ECDHE-RSA-AES128-SHA"),
        );
        let r = a.report(
            &mut kind,
            10,
            Some((&modern, Certs::RSA)),
            &LineStats::default(),
            vec![],
        );
        let outcomes: Vec<String> = r
            .fingerprints
            .iter()
            .map(|f| f.policy.as_ref().unwrap().summary())
            .collect();
        assert!(
            outcomes.contains(&"works: TLSv1.3 TLS_AES_128_GCM_SHA256".to_string()),
            "{outcomes:?}"
        );
        assert!(
            outcomes.contains(&"fails: no_common_protocol".to_string()),
            "{outcomes:?}"
        );
        assert_eq!(a.certs_seen(), Certs::RSA);
        let rows = clients_rows(&r);
        assert_eq!(rows.rows.len(), 2);
    }
}
