//! The protocol and cipher distribution (`tlsgap tls`).

use rustc_hash::FxHashMap;
use serde::Serialize;
use tlsgap_parser::lossless_text;

use crate::distinct::{self, Budget, Estimate, Hll, RELATIVE_STANDARD_ERROR};
use crate::lines::{LineStats, LinesReport};
use crate::pairs::PairIndex;
use crate::verdict::{cipher_facts, protocol_verdict, Verdict};

/// What is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CountMode {
    /// Every request once.
    Requests,
    /// Every distinct client once, with its earliest TLS request (by the logged time).
    Clients,
}

/// What one client is when clients are counted: the address, or the address and the
/// User-Agent together (the default of every command: behind a proxy or NAT one address
/// is many clients, and counting addresses hides the legacy ones among them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ClientKey {
    /// The client address.
    Addr,
    /// The client address and the User-Agent.
    #[default]
    AddrUa,
}

impl ClientKey {
    /// `addr` or `addr+ua`, as `--client-key` and the JSON write it.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKey::Addr => "addr",
            ClientKey::AddrUa => "addr+ua",
        }
    }

    /// `address` or `address + User-Agent`, as tables say it.
    pub fn describe(self) -> &'static str {
        match self {
            ClientKey::Addr => "address",
            ClientKey::AddrUa => "address + User-Agent",
        }
    }

    /// The key of one request in `scratch`: the address, or the address, a NUL and the
    /// User-Agent (`-` when there is none).
    pub fn key<'a>(self, scratch: &'a mut Vec<u8>, addr: &[u8], ua: Option<&[u8]>) -> &'a [u8] {
        scratch.clear();
        scratch.extend_from_slice(addr);
        if self == ClientKey::AddrUa {
            scratch.push(0);
            scratch.extend_from_slice(ua.unwrap_or(b"-"));
        }
        scratch
    }
}

/// A mergeable protocol/cipher distribution.
///
/// Merging is ordered: `a.merge(b)` treats `b` as what came after `a`, which is what
/// "earliest TLS request wins" needs in `clients` mode: the earliest by the logged
/// time ([`TlsAgg::add_at`]), a tie (or no time) to the one that came first.
/// Splitting an input into ordered chunks and merging them in order gives the same
/// result as one pass.
///
/// In `clients` mode the distinct clients are held exactly up to a memory budget
/// ([`TlsAgg::with_memory_limit`], see [`crate::distinct`]); clients first seen after
/// it is spent go into one HyperLogLog per pair (and one for plain HTTP), and the
/// report says so ([`TlsReport::estimate`]). A client sketched in several pieces
/// merged later counts under the first TLS pair of each piece, so under every pair it
/// negotiated first in some piece: the per-pair estimates (and their sum, `total`) are
/// upper bounds by at most the sketched clients seen with more than one pair.
#[derive(Debug, Clone)]
pub struct TlsAgg {
    mode: CountMode,
    pairs: PairIndex,
    counts: Vec<u64>,
    plain: u64,
    /// Client → index of its earliest TLS pair (or `u32::MAX` if only seen over plain
    /// HTTP) and that request's time, and when it was first seen here.
    clients: FxHashMap<Box<[u8]>, Seen>,
    /// Order of the next new client.
    next: u32,
    /// The bytes the exact clients may take.
    budget: Budget,
    /// Clients first seen after the budget was spent.
    sketch: Option<Box<ClientSketch>>,
}

/// The bytes one exact client is taken to cost besides its key: its slot (a boxed key
/// and the value, 32 bytes) with the table's growth slack (at most 7/8 full, doubling:
/// up to 2.3 times), its control byte and the heap block of the key (header and
/// rounding).
pub const CLIENT_ENTRY_BYTES: usize = 80;

const PLAIN: u32 = u32::MAX;

/// A client's earliest TLS pair and that request's time (µs; [`NO_TIME`] when not
/// known, or for plain HTTP only), and its order among the clients first seen here.
#[derive(Debug, Clone, Copy)]
struct Seen {
    pair: u32,
    order: u32,
    at: i64,
}

/// The time of a request whose time is not known: later than any known one.
const NO_TIME: i64 = i64::MAX;

impl Seen {
    /// Take `pair` at `at` if it is earlier TLS than what is held: the first TLS
    /// request after plain ones, or one logged earlier (a tie keeps what came first).
    fn earlier(&mut self, pair: u32, at: i64) {
        if pair != PLAIN && (self.pair == PLAIN || at < self.at) {
            self.pair = pair;
            self.at = at;
        }
    }
}

/// Distinct clients beyond the budget: one sketch per pair, one for plain HTTP.
#[derive(Debug, Clone, Default)]
struct ClientSketch {
    pairs: Vec<Hll>,
    plain: Hll,
}

impl ClientSketch {
    /// The sketch of `pair` (`PLAIN`: plain HTTP), made when first needed.
    fn slot(&mut self, pair: u32) -> &mut Hll {
        if pair == PLAIN {
            return &mut self.plain;
        }
        let i = pair as usize;
        if self.pairs.len() <= i {
            self.pairs.resize_with(i + 1, Hll::new);
        }
        &mut self.pairs[i]
    }

    fn add(&mut self, key: &[u8], pair: u32) {
        self.slot(pair).insert(key);
    }

    /// Every sketched client.
    fn all(&self) -> Hll {
        let mut all = distinct::union(&self.pairs);
        all.merge(&self.plain);
        all
    }

    /// Sketched clients never seen over TLS: those seen over plain HTTP, but at most
    /// all of them less those seen over TLS (a client sketched over plain HTTP and
    /// later over TLS is in both sketches).
    fn plain_only(&self) -> u64 {
        let tls = distinct::union(&self.pairs);
        self.plain
            .count()
            .min(distinct::difference(&self.all(), &tls))
    }
}

impl TlsAgg {
    /// An empty distribution, every client counted exactly.
    pub fn new(mode: CountMode) -> TlsAgg {
        TlsAgg::with_memory_limit(mode, usize::MAX)
    }

    /// An empty distribution whose exact clients take at most about `bytes` (key
    /// lengths plus [`CLIENT_ENTRY_BYTES`] each); later clients are estimated.
    pub fn with_memory_limit(mode: CountMode, bytes: usize) -> TlsAgg {
        TlsAgg {
            mode,
            pairs: PairIndex::default(),
            counts: Vec::new(),
            plain: 0,
            clients: FxHashMap::default(),
            next: 0,
            budget: Budget::new(bytes),
            sketch: None,
        }
    }

    /// Hold a new client exactly if it fits the budget, else sketch it.
    fn first_seen(&mut self, key: Box<[u8]>, seen: Seen) {
        if self.budget.admit(key.len() + CLIENT_ENTRY_BYTES) {
            self.clients.insert(key, seen);
        } else {
            self.sketch
                .get_or_insert_with(Box::default)
                .add(&key, seen.pair);
        }
    }

    /// The counting mode.
    pub fn mode(&self) -> CountMode {
        self.mode
    }

    fn intern(&mut self, protocol: &[u8], cipher: &[u8]) -> u32 {
        let (i, new) = self.pairs.intern(protocol, cipher);
        if new {
            self.counts.push(0);
        }
        i
    }

    /// Count one request. `protocol`/`cipher` are the raw logged values; absent or
    /// empty means plain HTTP (nginx `escape=json` logs a missing variable as `""`).
    #[inline]
    pub fn add(&mut self, client: Option<&[u8]>, protocol: Option<&[u8]>, cipher: Option<&[u8]>) {
        self.add_pair(client, protocol, cipher);
    }

    /// [`TlsAgg::add`], saying the pair's number here (`None`: plain HTTP): a number
    /// stands for one (protocol, cipher) for as long as this aggregate lives, so a
    /// caller that counts the line elsewhere too can key on it
    /// ([`crate::whatif::WhatifAgg::add_numbered_as`]).
    #[inline]
    pub fn add_pair(
        &mut self,
        client: Option<&[u8]>,
        protocol: Option<&[u8]>,
        cipher: Option<&[u8]>,
    ) -> Option<u32> {
        self.add_pair_at(client, protocol, cipher, None)
    }

    /// [`TlsAgg::add`] of a request logged at `at` (µs since the epoch; `None`: not
    /// known). In `clients` mode a client counts under its earliest TLS request by
    /// that time, not the first one read: rotated logs are given newest first
    /// (`access.log*`), and Apache writes a request when it ends, so a slow request
    /// may come after a later one (audit of 2026-11-28; `merge` always took the
    /// earliest).
    #[inline]
    pub fn add_at(
        &mut self,
        client: Option<&[u8]>,
        protocol: Option<&[u8]>,
        cipher: Option<&[u8]>,
        at: Option<i64>,
    ) {
        self.add_pair_at(client, protocol, cipher, at);
    }

    #[inline]
    fn add_pair_at(
        &mut self,
        client: Option<&[u8]>,
        protocol: Option<&[u8]>,
        cipher: Option<&[u8]>,
        at: Option<i64>,
    ) -> Option<u32> {
        let pair = self.pair_of(protocol, cipher);
        // Requests are counted in both modes: `--state` keeps them as counters.
        if pair == PLAIN {
            self.plain += 1;
        } else if let Some(c) = self.counts.get_mut(pair as usize) {
            *c += 1;
        }
        match self.mode {
            CountMode::Requests => {}
            CountMode::Clients => {
                let key = client.unwrap_or(b"-");
                let at = if pair == PLAIN {
                    NO_TIME
                } else {
                    at.unwrap_or(NO_TIME)
                };
                match self.clients.get_mut(key) {
                    Some(first) => first.earlier(pair, at),
                    None if self.budget.is_full() => {
                        self.sketch.get_or_insert_with(Box::default).add(key, pair);
                    }
                    None => {
                        let order = self.next;
                        self.next = order.saturating_add(1);
                        self.first_seen(key.into(), Seen { pair, order, at });
                    }
                }
            }
        }
        (pair != PLAIN).then_some(pair)
    }

    /// Count the clients a sketch holds (clients mode): each first used
    /// `protocol`/`cipher` (both absent: plain HTTP only), and was held nowhere
    /// exactly because a memory limit was spent (`merge` over a dataset). The report
    /// then says its client figures are estimates.
    pub fn add_sketched(&mut self, protocol: Option<&[u8]>, cipher: Option<&[u8]>, clients: &Hll) {
        let pair = self.pair_of(protocol, cipher);
        self.sketch
            .get_or_insert_with(Box::default)
            .slot(pair)
            .merge(clients);
    }

    /// The index of a logged pair; absent or empty values mean plain HTTP (`PLAIN`).
    fn pair_of(&mut self, protocol: Option<&[u8]>, cipher: Option<&[u8]>) -> u32 {
        let protocol = protocol.filter(|p| !p.is_empty());
        let cipher = cipher.filter(|c| !c.is_empty());
        if protocol.is_none() && cipher.is_none() {
            PLAIN
        } else {
            self.intern(protocol.unwrap_or(b""), cipher.unwrap_or(b""))
        }
    }

    /// Add what came after `self`.
    ///
    /// With a memory limit, the clients of `other` not seen before are admitted in the
    /// order `other` first saw them until the budget is spent, and sketched after: the
    /// exact clients are the same however the input was split. (`other`'s own sketch,
    /// if it has one, is merged as is: its clients are assumed new.)
    pub fn merge(&mut self, other: TlsAgg) {
        let remap: Vec<u32> = other.pairs.iter().map(|(p, c)| self.intern(p, c)).collect();
        let map = |pair: u32| {
            if pair == PLAIN {
                PLAIN
            } else {
                remap.get(pair as usize).copied().unwrap_or(PLAIN)
            }
        };
        for (i, n) in other.counts.iter().enumerate() {
            if let Some(c) = remap.get(i).and_then(|&j| self.counts.get_mut(j as usize)) {
                *c += n;
            }
        }
        self.plain += other.plain;
        let fits = self
            .budget
            .used()
            .checked_add(other.budget.used())
            .is_some_and(|n| n <= self.budget.limit());
        // Orders continue ours, so that `self` stays in first-seen order.
        let base = self.next;
        self.next = base.saturating_add(other.next);
        let mut fresh: Vec<(Box<[u8]>, Seen)> = Vec::new();
        for (client, seen) in other.clients {
            let seen = Seen {
                pair: map(seen.pair),
                order: base.saturating_add(seen.order),
                at: seen.at,
            };
            if let Some(slot) = self.clients.get_mut(&client) {
                slot.earlier(seen.pair, seen.at);
            } else if fits {
                // Everything `other` holds fits: no need to sort.
                self.first_seen(client, seen);
            } else {
                fresh.push((client, seen));
            }
        }
        if !self.budget.is_full() {
            fresh.sort_unstable_by_key(|(_, seen)| seen.order);
        }
        for (client, seen) in fresh {
            self.first_seen(client, seen);
        }
        if let Some(theirs) = other.sketch {
            let mine = self.sketch.get_or_insert_with(Box::default);
            mine.plain.merge(&theirs.plain);
            for (i, h) in theirs.pairs.iter().enumerate() {
                let j = map(i as u32);
                if j != PLAIN && !h.is_empty() {
                    mine.slot(j).merge(h);
                }
            }
        }
    }

    /// Counts per pair and the plain count, in the current mode.
    fn tallies(&self) -> (Vec<u64>, u64) {
        match self.mode {
            CountMode::Requests => (self.counts.clone(), self.plain),
            CountMode::Clients => {
                let mut counts = vec![0u64; self.pairs.len()];
                let mut plain = 0;
                for seen in self.clients.values() {
                    match counts.get_mut(seen.pair as usize) {
                        Some(c) => *c += 1,
                        None => plain += 1,
                    }
                }
                if let Some(sketch) = &self.sketch {
                    for (c, h) in counts.iter_mut().zip(&sketch.pairs) {
                        *c += h.count();
                    }
                    plain += sketch.plain_only();
                }
                (counts, plain)
            }
        }
    }

    /// The requests counted by [`TlsAgg::add`], one by one, in either mode (not the
    /// clients of [`TlsAgg::add_sketched`]): (protocol, cipher, requests) of every
    /// pair seen, as logged, and the plain requests.
    pub fn request_counts(&self) -> (impl Iterator<Item = (&[u8], &[u8], u64)>, u64) {
        let pairs = self
            .pairs
            .iter()
            .zip(self.counts.iter())
            .map(|((p, c), &n)| (&p[..], &c[..], n));
        (pairs, self.plain)
    }

    /// The distinct clients seen (clients mode only; estimated beyond the budget).
    pub fn distinct_clients(&self) -> usize {
        let sketched = self.sketch.as_ref().map_or(0, |s| s.all().count());
        self.clients.len() + sketched as usize
    }

    /// Which figures are estimates, if the budget was spent.
    pub fn estimate(&self) -> Option<Estimate> {
        let sketch = self.sketch.as_ref()?;
        Some(Estimate {
            exact_clients: self.clients.len() as u64,
            estimated_clients: sketch.all().count(),
            relative_standard_error: RELATIVE_STANDARD_ERROR,
            memory_limit_bytes: self.budget.limit() as u64,
        })
    }

    /// The typed result, sorted by count (descending) then name.
    pub fn report(&self, lines: &LineStats, inputs: Vec<InputReport>) -> TlsReport {
        let (counts, plain) = self.tallies();
        let total: u64 = counts.iter().sum();
        let share = |n: u64| {
            if total == 0 {
                0.0
            } else {
                n as f64 / total as f64
            }
        };
        let mut by_protocol: Vec<(String, Vec<(String, u64)>)> = Vec::new();
        for ((p, c), &n) in self.pairs.iter().zip(counts.iter()) {
            if n == 0 {
                continue;
            }
            let p = lossless_text(p).into_owned();
            let c = lossless_text(c).into_owned();
            match by_protocol.iter_mut().find(|(name, _)| *name == p) {
                Some((_, ciphers)) => match ciphers.iter_mut().find(|(name, _)| *name == c) {
                    Some((_, k)) => *k += n,
                    None => ciphers.push((c, n)),
                },
                None => by_protocol.push((p, vec![(c, n)])),
            }
        }
        let mut protocols: Vec<ProtocolRow> = by_protocol
            .into_iter()
            .map(|(protocol, ciphers)| {
                let count = ciphers.iter().map(|(_, n)| n).sum();
                let mut ciphers: Vec<CipherRow> = ciphers
                    .into_iter()
                    .map(|(cipher, count)| {
                        let facts = cipher_facts(&protocol, &cipher);
                        CipherRow {
                            share: share(count),
                            verdict: facts.verdict,
                            forward_secrecy: facts.forward_secrecy,
                            aead: facts.aead,
                            bits: facts.bits,
                            cipher,
                            count,
                        }
                    })
                    .collect();
                ciphers.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.cipher.cmp(&b.cipher)));
                ProtocolRow {
                    share: share(count),
                    verdict: protocol_verdict(&protocol),
                    protocol,
                    count,
                    ciphers,
                }
            })
            .collect();
        protocols.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then_with(|| a.protocol.cmp(&b.protocol))
        });
        let summary = TlsSummary::of(&protocols, total);
        TlsReport {
            count: self.mode,
            client_key: None,
            lines: lines.report(),
            plain,
            total,
            estimate: self.estimate(),
            protocols,
            summary,
            post_quantum: None,
            inputs,
        }
    }
}

/// One input in a report: its name, lines, how many did not fit the log format and
/// what went wrong reading it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct InputReport {
    /// The path, or `-` for stdin.
    pub name: String,
    /// Lines read from it.
    pub lines: u64,
    /// Of those, lines that did not fit the log format (the run's `lines.malformed`
    /// is their sum): which of several inputs, a rotated file cut or damaged, holds
    /// them. Access-log commands only (`None`: `gaps`, `merge`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub malformed: Option<u64>,
    /// Why it could not be read (completely), if so.
    pub error: Option<String>,
}

impl InputReport {
    /// Its malformed lines when a list of `inputs` inputs should name them: among
    /// several, those of an input that has any (with one input, the run's count says
    /// it all).
    pub fn malformed_to_name(&self, inputs: usize) -> Option<u64> {
        self.malformed.filter(|m| inputs > 1 && *m > 0)
    }
}

/// `tlsgap tls --format json` (the stable contract in DESIGN.md).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TlsReport {
    /// `requests` or `clients`.
    pub count: CountMode,
    /// With `clients`: what one client is (`addr`, `addr+ua`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_key: Option<&'static str>,
    /// Line counts.
    pub lines: LinesReport,
    /// Requests (or clients) without TLS.
    pub plain: u64,
    /// TLS requests (or clients): what `share` is relative to.
    pub total: u64,
    /// With `clients`, when the distinct clients outgrew the memory limit: how many
    /// are exact and how many estimated. The counts of clients first seen after the
    /// limit (in `protocols`, `total`, `plain`, `summary`) are HyperLogLog estimates;
    /// one seen with several pairs may count under each of them. Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Estimate>,
    /// Protocols by count, descending.
    pub protocols: Vec<ProtocolRow>,
    /// Shares of legacy, insecure, non-forward-secret and non-AEAD traffic, and the
    /// rating caps the observed traffic implies.
    pub summary: TlsSummary,
    /// Key-exchange groups, when the format logs the negotiated (`$ssl_curve`) or the
    /// offered groups (`$ssl_curves`, `SSL_CLIENTHELLO_GROUPS`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_quantum: Option<crate::pq::PqReport>,
    /// The inputs read.
    pub inputs: Vec<InputReport>,
}

/// A protocol and its ciphers.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProtocolRow {
    /// `TLSv1.3`.
    pub protocol: String,
    /// Requests (or clients).
    pub count: u64,
    /// `count / total`.
    pub share: f64,
    /// The protocol's verdict.
    pub verdict: Verdict,
    /// Ciphers by count, descending.
    pub ciphers: Vec<CipherRow>,
}

/// A cipher within a protocol.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CipherRow {
    /// The logged name.
    pub cipher: String,
    /// Requests (or clients).
    pub count: u64,
    /// `count / total` (of all TLS, not of the protocol).
    pub share: f64,
    /// The suite's verdict.
    pub verdict: Verdict,
    /// Ephemeral key exchange, when known.
    pub forward_secrecy: Option<bool>,
    /// Authenticated encryption, when known.
    pub aead: Option<bool>,
    /// Effective strength in bits, when known.
    pub bits: Option<u16>,
}

pub use crate::tally::Tally;

/// A rating cap in the manner of SSL Labs, implied by what clients negotiated.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Cap {
    /// The best grade still reachable (`B`, `C`, `F`).
    pub grade: &'static str,
    /// Why.
    pub reason: String,
}

/// The verdict summary of a [`TlsReport`].
///
/// Caps follow the SSL Labs rating guide as summarised in the project's reference:
/// SSLv2 caps at F, SSLv3 at C; TLS 1.0/1.1 at B; RC4 at B (C with TLS 1.1 or newer);
/// 3DES with TLS 1.1 or newer at C; export-grade or < 112-bit suites at F; anonymous
/// key exchange (ADH, AECDH) at F; no forward
/// secrecy at all, or no AEAD at all, at B. A log shows what was negotiated, so a cap
/// here means the server accepted it.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TlsSummary {
    /// SSLv2, SSLv3, TLS 1.0 and TLS 1.1.
    pub legacy_protocols: Tally,
    /// Suites judged insecure.
    pub insecure_ciphers: Tally,
    /// Suites judged weak.
    pub weak_ciphers: Tally,
    /// Suites without forward secrecy.
    pub no_forward_secrecy: Tally,
    /// Suites without authenticated encryption.
    pub no_aead: Tally,
    /// Protocols or suites the catalogue does not know.
    pub unknown: Tally,
    /// Every cap that applies, worst first.
    pub caps: Vec<Cap>,
    /// The worst cap's grade, if any applies.
    pub grade_cap: Option<&'static str>,
}

impl TlsSummary {
    fn of(protocols: &[ProtocolRow], total: u64) -> TlsSummary {
        let tally = |count: u64| Tally {
            count,
            share: if total == 0 {
                0.0
            } else {
                count as f64 / total as f64
            },
        };
        let mut legacy = 0;
        let (mut insecure, mut weak, mut no_fs, mut no_aead, mut unknown) = (0, 0, 0, 0, 0);
        let (mut fs_seen, mut aead_seen) = (false, false);
        let mut caps: Vec<Cap> = Vec::new();
        let mut cap = |grade: &'static str, reason: String| {
            if !caps.iter().any(|c| c.reason == reason) {
                caps.push(Cap { grade, reason });
            }
        };
        for p in protocols {
            let proto = tlsgap_ciphers::Protocol::parse(&p.protocol);
            match proto {
                Some(tlsgap_ciphers::Protocol::SslV2) => {
                    cap("F", "SSLv2 negotiated".into());
                    legacy += p.count;
                }
                Some(tlsgap_ciphers::Protocol::SslV3) => {
                    cap("C", "SSLv3 negotiated".into());
                    legacy += p.count;
                }
                Some(tlsgap_ciphers::Protocol::TlsV1 | tlsgap_ciphers::Protocol::TlsV1_1) => {
                    cap("B", format!("{} negotiated", p.protocol));
                    legacy += p.count;
                }
                Some(_) => {}
                None => unknown += p.count,
            }
            let modern = proto.is_some_and(|v| v >= tlsgap_ciphers::Protocol::TlsV1_1);
            for c in &p.ciphers {
                let facts = cipher_facts(&p.protocol, &c.cipher);
                match facts.verdict {
                    Verdict::Insecure => insecure += c.count,
                    Verdict::Weak => weak += c.count,
                    Verdict::Unknown if proto.is_some() => unknown += c.count,
                    _ => {}
                }
                match facts.forward_secrecy {
                    Some(true) => fs_seen = true,
                    Some(false) => no_fs += c.count,
                    None => {}
                }
                match facts.aead {
                    Some(true) => aead_seen = true,
                    Some(false) => no_aead += c.count,
                    None => {}
                }
                let Some(suite) = facts.suite else { continue };
                if suite.export || suite.strength_bits < 112 {
                    cap(
                        "F",
                        format!("{} ({} bits) negotiated", c.cipher, suite.strength_bits),
                    );
                }
                // Anonymous key exchange (ADH, AECDH: `au = None`) scores 0 in the
                // rating guide's key-exchange category, and a 0 in any category is an
                // F: the server proves nothing, so anyone on the path can be it.
                if suite.au == "None" {
                    cap(
                        "F",
                        format!("anonymous key exchange ({}) negotiated", c.cipher),
                    );
                }
                if suite.enc.starts_with("RC4") {
                    if modern {
                        cap("C", format!("RC4 with {}", p.protocol));
                    } else {
                        cap("B", "RC4 negotiated".into());
                    }
                }
                if suite.enc.starts_with("3DES") && modern {
                    cap("C", format!("3DES with {}", p.protocol));
                }
            }
        }
        if total > 0 && !fs_seen {
            cap("B", "no request used forward secrecy".into());
        }
        if total > 0 && !aead_seen {
            cap("B", "no request used AEAD".into());
        }
        caps.sort_by(|a, b| b.grade.cmp(a.grade).then_with(|| a.reason.cmp(&b.reason)));
        let grade_cap = caps.first().map(|c| c.grade);
        TlsSummary {
            legacy_protocols: tally(legacy),
            insecure_ciphers: tally(insecure),
            weak_ciphers: tally(weak),
            no_forward_secrecy: tally(no_fs),
            no_aead: tally(no_aead),
            unknown: tally(unknown),
            caps,
            grade_cap,
        }
    }
}

/// One row of the flat (CSV/Parquet) form of a [`TlsReport`].
#[derive(Clone, Debug, PartialEq)]
pub struct TlsRow {
    /// `tls` or `plain`.
    pub kind: &'static str,
    /// Protocol (none for plain).
    pub protocol: Option<String>,
    /// Cipher (none for plain).
    pub cipher: Option<String>,
    /// Requests (or clients).
    pub count: u64,
    /// Share of all TLS (none for plain).
    pub share: Option<f64>,
    /// The cipher's verdict.
    pub verdict: Option<Verdict>,
    /// The protocol's verdict.
    pub protocol_verdict: Option<Verdict>,
    /// Forward secrecy.
    pub forward_secrecy: Option<bool>,
    /// AEAD.
    pub aead: Option<bool>,
    /// Effective strength in bits.
    pub bits: Option<u16>,
    /// The key-exchange group (`group` rows).
    pub group: Option<String>,
    /// Whether the group is post-quantum (`group` and `offered_post_quantum*` rows).
    pub post_quantum: Option<bool>,
}

/// The column names of [`TlsRow`] (CSV header and Parquet schema).
pub const TLS_ROW_COLUMNS: [&str; 12] = [
    "kind",
    "protocol",
    "cipher",
    "count",
    "share",
    "verdict",
    "protocol_verdict",
    "forward_secrecy",
    "aead",
    "bits",
    "group",
    "post_quantum",
];

/// Flatten a report: one row per protocol and cipher in report order, then `plain`,
/// then, when the format logs key-exchange groups, one `group` row per negotiated group
/// (requests, share of the requests with a group logged) and the offered-group rows:
/// `offered_groups` and `offered_post_quantum` (requests), `offered_clients` and
/// `offered_post_quantum_clients` (distinct clients). Group rows count requests and
/// clients as named, whatever `--count` says of the `tls` rows.
pub fn tls_rows(report: &TlsReport) -> Vec<TlsRow> {
    let blank = |kind: &'static str, count: u64| TlsRow {
        kind,
        protocol: None,
        cipher: None,
        count,
        share: None,
        verdict: None,
        protocol_verdict: None,
        forward_secrecy: None,
        aead: None,
        bits: None,
        group: None,
        post_quantum: None,
    };
    let mut rows: Vec<TlsRow> = report
        .protocols
        .iter()
        .flat_map(|p| {
            p.ciphers.iter().map(move |c| TlsRow {
                protocol: Some(p.protocol.clone()),
                cipher: Some(c.cipher.clone()),
                share: Some(c.share),
                verdict: Some(c.verdict),
                protocol_verdict: Some(p.verdict),
                forward_secrecy: c.forward_secrecy,
                aead: c.aead,
                bits: c.bits,
                ..blank("tls", c.count)
            })
        })
        .collect();
    rows.push(blank("plain", report.plain));
    let Some(pq) = &report.post_quantum else {
        return rows;
    };
    if let Some(n) = &pq.negotiated {
        rows.extend(n.groups.iter().map(|g| TlsRow {
            share: Some(g.share),
            group: Some(g.group.clone()),
            post_quantum: Some(g.post_quantum),
            ..blank("group", g.count)
        }));
    }
    if let Some(o) = &pq.offered {
        rows.push(blank("offered_groups", o.requests));
        rows.push(TlsRow {
            share: Some(o.post_quantum.share),
            post_quantum: Some(true),
            ..blank("offered_post_quantum", o.post_quantum.count)
        });
        rows.push(blank("offered_clients", o.clients));
        rows.push(TlsRow {
            share: Some(o.post_quantum_clients.share),
            post_quantum: Some(true),
            ..blank("offered_post_quantum_clients", o.post_quantum_clients.count)
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(agg: &mut TlsAgg, rows: &[(&str, &str, &str)]) {
        for (c, p, x) in rows {
            let p = if *p == "-" { None } else { Some(p.as_bytes()) };
            let x = if *x == "-" { None } else { Some(x.as_bytes()) };
            agg.add(Some(c.as_bytes()), p, x);
        }
    }

    const ROWS: &[(&str, &str, &str)] = &[
        ("a", "-", "-"),
        ("a", "TLSv1.2", "AES128-SHA"),
        ("b", "TLSv1.3", "TLS_AES_128_GCM_SHA256"),
        ("a", "TLSv1.3", "TLS_AES_128_GCM_SHA256"),
        ("c", "-", "-"),
        ("b", "TLSv1.2", "AES128-SHA"),
        ("d", "TLSv1.3", "TLS_AES_256_GCM_SHA384"),
    ];

    #[test]
    fn requests_and_clients() {
        let mut r = TlsAgg::new(CountMode::Requests);
        feed(&mut r, ROWS);
        let rep = r.report(&LineStats::default(), vec![]);
        assert_eq!((rep.total, rep.plain), (5, 2));
        assert_eq!(rep.protocols[0].protocol, "TLSv1.3");
        assert_eq!(rep.protocols[0].count, 3);
        assert_eq!(rep.protocols[0].ciphers[0].cipher, "TLS_AES_128_GCM_SHA256");
        assert!((rep.protocols[0].share - 0.6).abs() < 1e-9);

        let mut c = TlsAgg::new(CountMode::Clients);
        feed(&mut c, ROWS);
        let rep = c.report(&LineStats::default(), vec![]);
        // a: first TLS is TLSv1.2/AES128-SHA; b: TLSv1.3; c: plain only; d: TLSv1.3.
        assert_eq!((rep.total, rep.plain), (3, 1));
        let v12 = rep
            .protocols
            .iter()
            .find(|p| p.protocol == "TLSv1.2")
            .unwrap();
        assert_eq!(v12.count, 1);
    }

    #[test]
    fn ordered_merge_equals_one_pass() {
        for mode in [CountMode::Requests, CountMode::Clients] {
            let mut whole = TlsAgg::new(mode);
            feed(&mut whole, ROWS);
            for split in 0..=ROWS.len() {
                let mut a = TlsAgg::new(mode);
                let mut b = TlsAgg::new(mode);
                feed(&mut a, &ROWS[..split]);
                feed(&mut b, &ROWS[split..]);
                a.merge(b);
                let l = LineStats::default();
                assert_eq!(
                    a.report(&l, vec![]),
                    whole.report(&l, vec![]),
                    "{mode:?} {split}"
                );
            }
        }
    }

    /// A client counts under its earliest TLS request by the logged time, whatever
    /// order the lines come in and however they are split and merged; a tie, or no
    /// time, goes to the one that came first (audit of 2026-11-28: rotated logs given
    /// newest first put a legacy client under its later, modern protocol).
    #[test]
    fn clients_count_under_their_earliest_tls_request() {
        // (client, protocol, cipher, time): `a` upgraded from TLSv1 to TLSv1.3 and
        // its TLSv1 line comes last (the older file read second); `b` has two
        // requests in one second (the first read wins); `c` has no time on its
        // first line (unknown is latest); `d` is plain first.
        let rows: &[(&str, &str, &str, Option<i64>)] = &[
            ("a", "TLSv1.3", "TLS_AES_128_GCM_SHA256", Some(200)),
            ("b", "TLSv1.2", "AES128-SHA", Some(50)),
            ("c", "TLSv1.3", "TLS_AES_128_GCM_SHA256", None),
            ("d", "-", "-", Some(1)),
            ("b", "TLSv1.3", "TLS_AES_128_GCM_SHA256", Some(50)),
            ("c", "TLSv1", "DES-CBC3-SHA", Some(300)),
            ("d", "TLSv1.3", "TLS_AES_256_GCM_SHA384", Some(400)),
            ("a", "TLSv1", "DES-CBC3-SHA", Some(100)),
        ];
        let feed_at = |agg: &mut TlsAgg, rows: &[(&str, &str, &str, Option<i64>)]| {
            for &(c, p, x, at) in rows {
                let (p, x) = match p {
                    "-" => (None, None),
                    _ => (Some(p.as_bytes()), Some(x.as_bytes())),
                };
                agg.add_at(Some(c.as_bytes()), p, x, at);
            }
        };
        let first_of = |rep: &TlsReport| -> Vec<(String, String, u64)> {
            let mut v: Vec<(String, String, u64)> = rep
                .protocols
                .iter()
                .flat_map(|p| {
                    p.ciphers
                        .iter()
                        .map(|c| (p.protocol.clone(), c.cipher.clone(), c.count))
                })
                .collect();
            v.sort();
            v
        };
        let mut whole = TlsAgg::new(CountMode::Clients);
        feed_at(&mut whole, rows);
        let l = LineStats::default();
        let rep = whole.report(&l, vec![]);
        assert_eq!(
            first_of(&rep),
            [
                ("TLSv1".into(), "DES-CBC3-SHA".into(), 2),
                ("TLSv1.2".into(), "AES128-SHA".into(), 1),
                ("TLSv1.3".into(), "TLS_AES_256_GCM_SHA384".into(), 1),
            ]
        );
        for split in 0..=rows.len() {
            let mut a = TlsAgg::new(CountMode::Clients);
            let mut b = TlsAgg::new(CountMode::Clients);
            feed_at(&mut a, &rows[..split]);
            feed_at(&mut b, &rows[split..]);
            a.merge(b);
            assert_eq!(a.report(&l, vec![]), rep, "split at {split}");
        }
    }

    /// Client `i`: 12-byte keys, a third plain, the rest over two pairs.
    fn many(from: u32, to: u32) -> Vec<(String, &'static str, &'static str)> {
        (from..to)
            .map(|i| {
                let (p, c) = match i % 3 {
                    0 => ("-", "-"),
                    1 => ("TLSv1.2", "AES128-SHA"),
                    _ => ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
                };
                (format!("c{i:011}"), p, c)
            })
            .collect()
    }

    fn feed_owned(agg: &mut TlsAgg, rows: &[(String, &str, &str)]) {
        for (c, p, x) in rows {
            let p = (*p != "-").then_some(p.as_bytes());
            let x = (*x != "-").then_some(x.as_bytes());
            agg.add(Some(c.as_bytes()), p, x);
        }
    }

    /// The rows in `chunks` pieces counted apart (no limit) and merged in order into an
    /// aggregate limited to `limit`, as the engine does.
    fn split(rows: &[(String, &str, &str)], chunks: usize, limit: usize) -> TlsAgg {
        let mut total = TlsAgg::with_memory_limit(CountMode::Clients, limit);
        for piece in rows.chunks(rows.len().div_ceil(chunks)) {
            let mut part = TlsAgg::new(CountMode::Clients);
            feed_owned(&mut part, piece);
            total.merge(part);
        }
        total
    }

    #[test]
    fn beyond_the_budget_clients_are_estimated() {
        let rows = many(0, 60_000);
        // Room for exactly 1,000 clients.
        let limit = 1_000 * (12 + CLIENT_ENTRY_BYTES);
        let l = LineStats::default();
        let mut one = TlsAgg::with_memory_limit(CountMode::Clients, limit);
        feed_owned(&mut one, &rows);
        let want = one.report(&l, vec![]);
        let e = want.estimate.expect("an estimate");
        assert_eq!(e.exact_clients, 1_000);
        assert_eq!(e.memory_limit_bytes, limit as u64);
        let sketched = 59_000.0;
        let err = (e.estimated_clients as f64 - sketched).abs() / sketched;
        assert!(err < 3.0 * RELATIVE_STANDARD_ERROR, "{e:?}");
        let all = (want.total + want.plain) as f64;
        assert!((all - 60_000.0).abs() / 60_000.0 < 0.03, "{want:?}");
        assert!(
            (want.plain as f64 - 20_000.0).abs() / 20_000.0 < 0.05,
            "{want:?}"
        );
        // The same whatever the split: the exact part is the first 1,000 clients.
        for chunks in [1, 2, 7, 100, 1_000] {
            let got = split(&rows, chunks, limit).report(&l, vec![]);
            assert_eq!(got, want, "{chunks} chunks");
        }
        assert_eq!(one.distinct_clients(), 1_000 + e.estimated_clients as usize);
    }

    #[test]
    fn exact_clients_keep_their_first_tls_pair_after_the_switch() {
        let mut agg = TlsAgg::with_memory_limit(CountMode::Clients, 2 * (1 + CLIENT_ENTRY_BYTES));
        feed(&mut agg, &[("a", "-", "-"), ("b", "TLSv1.2", "AES128-SHA")]);
        feed(&mut agg, &[("c", "-", "-")]);
        let mut later = TlsAgg::new(CountMode::Clients);
        feed(
            &mut later,
            &[("a", "TLSv1.3", "TLS_AES_128_GCM_SHA256"), ("d", "-", "-")],
        );
        agg.merge(later);
        let rep = agg.report(&LineStats::default(), vec![]);
        let e = rep.estimate.expect("an estimate");
        assert_eq!((e.exact_clients, e.estimated_clients), (2, 2));
        assert_eq!((rep.total, rep.plain), (2, 2));
        assert_eq!(rep.protocols[0].count, 1);
    }

    #[test]
    fn below_the_budget_nothing_changes() {
        let rows = many(0, 5_000);
        let l = LineStats::default();
        let mut exact = TlsAgg::new(CountMode::Clients);
        feed_owned(&mut exact, &rows);
        let want = exact.report(&l, vec![]);
        assert!(want.estimate.is_none());
        // Just enough room, in one pass and split.
        let limit = 5_000 * (12 + CLIENT_ENTRY_BYTES);
        let mut one = TlsAgg::with_memory_limit(CountMode::Clients, limit);
        feed_owned(&mut one, &rows);
        assert_eq!(one.report(&l, vec![]), want);
        for chunks in [3, 50] {
            assert_eq!(split(&rows, chunks, limit).report(&l, vec![]), want);
        }
        // A requests count ignores the limit.
        let mut r = TlsAgg::with_memory_limit(CountMode::Requests, 1);
        feed_owned(&mut r, &rows);
        assert!(r.report(&l, vec![]).estimate.is_none());
        let json = serde_json::to_string(&want).unwrap_or_default();
        assert!(!json.contains("estimate"));
    }

    /// Real nginx 1.22.1 (OpenSSL 3.0, `ALL:@SECLEVEL=0`) negotiated these two anonymous
    /// suites and logged them; the rating guide gives anonymous key exchange 0 points,
    /// which is an F, where the TLS 1.1 and no-AEAD caps alone would say B.
    #[test]
    fn anonymous_key_exchange_caps_at_f() {
        let mut r = TlsAgg::new(CountMode::Requests);
        feed(
            &mut r,
            &[
                ("a", "TLSv1.2", "ADH-AES128-SHA256"),
                ("b", "TLSv1.1", "AECDH-AES128-SHA"),
            ],
        );
        let rep = r.report(&LineStats::default(), vec![]);
        assert_eq!(rep.summary.grade_cap, Some("F"));
        let reasons: Vec<&str> = rep.summary.caps.iter().map(|c| c.reason.as_str()).collect();
        assert!(
            reasons.contains(&"anonymous key exchange (ADH-AES128-SHA256) negotiated"),
            "{reasons:?}"
        );
        assert!(
            reasons.contains(&"anonymous key exchange (AECDH-AES128-SHA) negotiated"),
            "{reasons:?}"
        );
        // An authenticated suite with the same cipher is not capped at F.
        let mut r = TlsAgg::new(CountMode::Requests);
        feed(&mut r, &[("a", "TLSv1.2", "DHE-RSA-AES128-SHA256")]);
        let rep = r.report(&LineStats::default(), vec![]);
        assert_eq!(rep.summary.grade_cap, Some("B"));
    }

    #[test]
    fn empty_values_are_plain() {
        let mut r = TlsAgg::new(CountMode::Requests);
        r.add(Some(b"x"), Some(b""), Some(b""));
        let rep = r.report(&LineStats::default(), vec![]);
        assert_eq!((rep.total, rep.plain), (0, 1));
        assert!(rep.protocols.is_empty());
    }
}
