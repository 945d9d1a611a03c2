//! What a TLS policy would refuse (`tlsgap whatif`): requests and distinct clients
//! (address + User-Agent) by protocol, suite and client kind.
//!
//! Logs hold the suite each client *negotiated*, not everything it could do, so every
//! figure here is an upper bound of what the policy would break. A client counts as
//! refused when none of its logged TLS handshakes would pass the policy (one that
//! passed proves it can still connect); clients with some but not all handshakes
//! refused are counted apart as `partly`.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::Serialize;
use tlsgap_ciphers::handshake::{self, Certs, Failure, Outcome};
use tlsgap_ciphers::offer::Offer;
use tlsgap_ciphers::policy::{Decision, Policy, Reason};
use tlsgap_ciphers::{catalogue, Protocol};
use tlsgap_parser::lossless_text;

use crate::distinct::{self, hash64, Budget, Estimate, Hll, RELATIVE_STANDARD_ERROR};
use crate::lines::{LineStats, LinesReport};
use crate::numbering::{ClientIds, Mirror, Numbered, Standing};
use crate::pairs::{joined, ByNumber, PairIndex};
use crate::rows::{Cell, CellType, Rows};
use crate::tls::{ClientKey, InputReport};
use crate::verdict::cipher_facts;
use crate::Verdict;

/// What kind of software a client is, from its User-Agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientKind {
    /// A web browser.
    Browser,
    /// A search-engine crawler or other bot.
    Bot,
    /// An HTTP library or command-line tool (curl, python-requests, Go, Java...).
    Library,
    /// No User-Agent, or one the parser does not know.
    Unknown,
}

impl ClientKind {
    /// Every kind, in report order.
    pub const ALL: [ClientKind; 4] = [
        ClientKind::Browser,
        ClientKind::Bot,
        ClientKind::Library,
        ClientKind::Unknown,
    ];

    /// The lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Browser => "browser",
            ClientKind::Bot => "bot",
            ClientKind::Library => "library",
            ClientKind::Unknown => "unknown",
        }
    }
}

/// A line's User-Agent for a worker's numbering ([`WhatifAgg::add_numbered`]): the
/// bytes as logged (`None`: absent, counted as `-`) and what they stand for, asked for
/// only when the numbering meets those bytes for the first time (the unescaped text:
/// the search for an escape is then made once per distinct User-Agent, not per line).
pub struct LoggedAgent<'a, F> {
    /// The bytes as the line holds them.
    pub logged: Option<&'a [u8]>,
    /// What they stand for (`None`: absent).
    pub text: F,
}

impl<F> std::fmt::Debug for LoggedAgent<'_, F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoggedAgent")
            .field("logged", &self.logged.map(String::from_utf8_lossy))
            .finish_non_exhaustive()
    }
}

/// A [`LoggedAgent`] whose logged bytes are its text (nothing to unescape).
pub fn plain_agent<'a>(
    ua: Option<&'a [u8]>,
) -> LoggedAgent<'a, impl FnOnce() -> Option<Cow<'a, [u8]>>> {
    LoggedAgent {
        logged: ua,
        text: move || ua.map(Cow::Borrowed),
    }
}

impl<'a, F: FnOnce() -> Option<Cow<'a, [u8]>>> LoggedAgent<'a, F> {
    fn count(self, ids: &mut ClientIds, client: &[u8], case: u32) {
        match self.logged {
            Some(ua) => {
                let text = self.text;
                ids.count(client, ua, || text().unwrap_or(Cow::Borrowed(ua)), case);
            }
            None => ids.count(client, b"-", || Cow::Borrowed(b"-"), case),
        }
    }
}

/// Requests per (client, User-Agent, protocol, suite); mergeable in any order, and
/// in order once a memory limit is set.
///
/// With [`WhatifAgg::with_memory_limit`] the (address, User-Agent) entries are held
/// exactly until their estimated bytes (key length plus [`WHATIF_ENTRY_BYTES`] each)
/// reach the limit, in the order the input first shows them (see [`crate::distinct`]);
/// entries first seen after that keep only per-pair request counts (exact) and
/// per-pair HyperLogLog sketches of the clients (by address + User-Agent and by
/// address). The report then estimates clients, refused and partly refused clients
/// from unions of those sketches, and its kinds, top User-Agents and top addresses
/// cover the exact entries only ([`WhatifReport::estimate`]). With `--client-key addr`
/// an address with entries on both sides counts on both.
#[derive(Debug, Clone, Default)]
pub struct WhatifAgg {
    pairs: PairIndex,
    /// Distinct logged offers (the fields of [`OfferFields`] joined by `\0`); offer 0
    /// is "none logged".
    offers: Vec<Box<[u8]>>,
    offer_index: FxHashMap<Box<[u8]>, u32>,
    /// Distinct (pair, offer): what the tallies count.
    cases: Vec<(u32, u32)>,
    case_index: FxHashMap<(u32, u32), u32>,
    /// Whether the format logs the offer at all.
    offer_fields: bool,
    /// The distinct User-Agents of the exact entries, in the order first held.
    agents: crate::arena::ArenaMap<()>,
    /// (User-Agent, address) → (case, requests), and when it was first seen here. The
    /// key is the User-Agent's place in `agents` (four bytes, little-endian), then the
    /// address: a short key, where `address \0 user-agent` took ~115 bytes and made
    /// every lookup (one a line, and one per entry of each block merged) touch two or
    /// three cold cache lines (issue 12).
    clients: crate::arena::ArenaMap<Entry>,
    plain: u64,
    scratch: Vec<u8>,
    /// Order of the next new entry.
    next: u32,
    /// The bytes the exact entries may take (unlimited by default), and take.
    budget: Budget,
    /// Entries first seen after the budget was spent.
    sketch: Option<Box<WhatifSketch>>,
    /// A block's clients, counted by a worker's numbers ([`WhatifAgg::add_numbered`]).
    numbered: Option<Box<Numbered>>,
    /// The workers' numberings this aggregate has merged blocks of.
    mirrors: Vec<Mirror>,
    /// Requests merged blocks brought to exact entries, not added yet: (place, case,
    /// requests), in the order they came ([`WhatifAgg::settle`]).
    owed: Vec<(u32, u32, u64)>,
    /// Per pair, its case when no offer is logged, and per number of a caller's
    /// ([`WhatifAgg::add_numbered_as`]), the same: the case of a line without a hash
    /// lookup (or, with the caller's number, without interning the pair either).
    bare_cases: ByNumber,
    caller_cases: ByNumber,
}

/// How many owed additions are gathered before they are made ([`WhatifAgg::settle`]):
/// 512 KiB of them (a few in the tests, which then settle often).
const OWED: usize = if cfg!(test) { 7 } else { 1 << 15 };

/// The bytes one exact entry is taken to cost besides its key: its slot (boxed key,
/// tallies and order, 48 bytes) with the table's growth slack, and the heap blocks of
/// the key and of the tallies (room for 4 pairs, 64 bytes).
pub const WHATIF_ENTRY_BYTES: usize = 160;

#[derive(Debug, Clone, Default)]
struct Entry {
    order: u32,
    tallies: Tallies,
}

/// A client's requests per case; one case inline.
pub(crate) type Tallies = smallvec::SmallVec<[(u32, u64); 1]>;

/// Per pair: the requests of sketched entries, and sketches of their clients.
#[derive(Debug, Clone, Default)]
struct WhatifSketch {
    requests: Vec<u64>,
    by_key: Vec<Hll>,
    by_addr: Vec<Hll>,
}

impl WhatifSketch {
    fn add(&mut self, key: &[u8], tallies: &[(u32, u64)]) {
        let (addr, _) = split_key(key);
        let (hk, ha) = (hash64(key), hash64(addr));
        for &(pair, n) in tallies {
            let i = pair as usize;
            if self.requests.len() <= i {
                self.requests.resize(i + 1, 0);
                self.by_key.resize_with(i + 1, Hll::new);
                self.by_addr.resize_with(i + 1, Hll::new);
            }
            if let Some(r) = self.requests.get_mut(i) {
                *r += n;
            }
            if let Some(h) = self.by_key.get_mut(i) {
                h.insert_hash(hk);
            }
            if let Some(h) = self.by_addr.get_mut(i) {
                h.insert_hash(ha);
            }
        }
    }

    /// The client sketches of one client key.
    fn by(&self, client_key: ClientKey) -> &[Hll] {
        match client_key {
            ClientKey::AddrUa => &self.by_key,
            ClientKey::Addr => &self.by_addr,
        }
    }

    /// Add the sketched requests and (estimated) clients to `totals`: clients are the
    /// union of all pairs' sketches; refused outright, those not in the union of the
    /// pairs that pass (or are undecided); partly refused, the intersection of that
    /// union and the union of the refused pairs (`|R| + |P| - |R ∪ P|`, so its error
    /// is about ±0.81% of all sketched clients, not of itself). Returns the estimated
    /// clients.
    fn add_to(
        &self,
        client_key: ClientKey,
        refused: &dyn Fn(u32) -> bool,
        totals: &mut Totals,
    ) -> u64 {
        let (mut no, mut ok) = (Hll::new(), Hll::new());
        for (i, (h, &n)) in self.by(client_key).iter().zip(&self.requests).enumerate() {
            totals.requests += n;
            if refused(i as u32) {
                totals.refused_requests += n;
                no.merge(h);
            } else {
                ok.merge(h);
            }
        }
        let mut all = ok.clone();
        all.merge(&no);
        let clients = all.count();
        totals.clients += clients;
        totals.refused_clients += distinct::difference(&all, &ok);
        let partly = no.estimate() + ok.estimate() - all.estimate();
        totals.partly_clients += partly.max(0.0).round() as u64;
        clients
    }

    /// Merge `other`, whose pair `i` is ours `remap[i]`.
    fn merge(&mut self, other: &WhatifSketch, remap: &[u32]) {
        for (i, &n) in other.requests.iter().enumerate() {
            let Some(&j) = remap.get(i) else { continue };
            let j = j as usize;
            if self.requests.len() <= j {
                self.requests.resize(j + 1, 0);
                self.by_key.resize_with(j + 1, Hll::new);
                self.by_addr.resize_with(j + 1, Hll::new);
            }
            if let Some(r) = self.requests.get_mut(j) {
                *r += n;
            }
            if let (Some(a), Some(b)) = (self.by_key.get_mut(j), other.by_key.get(i)) {
                a.merge(b);
            }
            if let (Some(a), Some(b)) = (self.by_addr.get_mut(j), other.by_addr.get(i)) {
                a.merge(b);
            }
        }
    }
}

impl WhatifAgg {
    /// Empty, every entry exact.
    pub fn new() -> WhatifAgg {
        WhatifAgg::default()
    }

    /// Empty, with exact entries taking at most about `bytes`.
    pub fn with_memory_limit(bytes: usize) -> WhatifAgg {
        WhatifAgg {
            budget: Budget::new(bytes),
            ..WhatifAgg::default()
        }
    }

    fn intern(&mut self, protocol: &[u8], cipher: &[u8]) -> u32 {
        self.pairs.intern(protocol, cipher).0
    }

    /// The id of an offer key (`ciphers \0 groups \0 versions \0 version`), from 1.
    fn intern_offer(&mut self, key: &[u8]) -> u32 {
        if let Some(&i) = self.offer_index.get(key) {
            return i;
        }
        let i = u32::try_from(self.offers.len() + 1).unwrap_or(u32::MAX - 1);
        self.offer_index.insert(key.into(), i);
        self.offers.push(key.into());
        i
    }

    fn intern_case(&mut self, pair: u32, offer: u32) -> u32 {
        if let Some(&i) = self.case_index.get(&(pair, offer)) {
            return i;
        }
        let i = u32::try_from(self.cases.len()).unwrap_or(u32::MAX - 1);
        self.case_index.insert((pair, offer), i);
        self.cases.push((pair, offer));
        i
    }

    /// The User-Agent's place in `agents`, the address and the User-Agent of an exact
    /// entry's key.
    fn client_parts<'s>(&'s self, key: &'s [u8]) -> (usize, &'s [u8], &'s [u8]) {
        let (agent, addr) = split_entry_key(key);
        (agent, addr, self.agents.key_at(agent))
    }

    /// Say that the format logs the client's offer (the report then has its exact
    /// section even when no line carried one).
    pub fn expect_offers(&mut self) {
        self.offer_fields = true;
    }

    fn count(&mut self, client: &[u8], ua: &[u8], case: u32, n: u64) {
        if !self.owed.is_empty() {
            self.settle();
        }
        let ua_hash = crate::arena::key_hash(ua);
        let agent = self.agents.find_hashed(ua_hash, ua);
        if let Some(agent) = agent {
            let mut scratch = std::mem::take(&mut self.scratch);
            let key = entry_key(&mut scratch, agent, client);
            let found = self
                .clients
                .get_mut_hashed(crate::arena::key_hash(key), key);
            let seen = found
                .map(|slot| tally(&mut slot.tallies, case, n))
                .is_some();
            self.scratch = scratch;
            if seen {
                return;
            }
        }
        let order = self.next;
        self.next = order.saturating_add(1);
        let entry = Entry {
            order,
            tallies: smallvec::smallvec![(case, n)],
        };
        self.first_seen(client, (ua, ua_hash, Some(agent)), entry);
    }

    /// Hold a new entry of (`addr`, User-Agent) exactly if it fits the budget, else
    /// sketch it. The User-Agent comes with its [`crate::arena::key_hash`] and, when it
    /// was looked up in `agents` already, what that found (`None`: not looked up yet);
    /// it is added there if the entry is held and it is not. The budget counts the
    /// entry as `address \0 user-agent` plus [`WHATIF_ENTRY_BYTES`], as documented.
    /// Returns the entry's place and its User-Agent's when it is held exactly.
    fn first_seen(
        &mut self,
        addr: &[u8],
        (ua, ua_hash, agent): (&[u8], u64, Option<Option<usize>>),
        entry: Entry,
    ) -> Option<(usize, usize)> {
        if !self
            .budget
            .admit(addr.len() + 1 + ua.len() + WHATIF_ENTRY_BYTES)
        {
            self.sketch_client(addr, ua, &entry.tallies);
            return None;
        }
        let agent = agent
            .unwrap_or_else(|| self.agents.find_hashed(ua_hash, ua))
            .unwrap_or_else(|| self.agents.insert_new_hashed(ua_hash, ua, ()));
        let mut scratch = std::mem::take(&mut self.scratch);
        let key = entry_key(&mut scratch, agent, addr);
        let place = self
            .clients
            .insert_new_hashed(crate::arena::key_hash(key), key, entry);
        self.scratch = scratch;
        Some((place, agent))
    }

    /// Count a client not held exactly (the budget was spent before it came) in the
    /// sketch.
    fn sketch_client(&mut self, addr: &[u8], ua: &[u8], tallies: &[(u32, u64)]) {
        let mut scratch = std::mem::take(&mut self.scratch);
        self.sketch
            .get_or_insert_with(Box::default)
            .add(joined(&mut scratch, addr, ua), tallies);
        self.scratch = scratch;
    }

    /// Count one request (raw logged values; no protocol and no cipher = plain HTTP).
    pub fn add(
        &mut self,
        client: Option<&[u8]>,
        user_agent: Option<&[u8]>,
        protocol: Option<&[u8]>,
        cipher: Option<&[u8]>,
    ) {
        self.add_offered(client, user_agent, protocol, cipher, None);
    }

    /// [`WhatifAgg::add`] with what the client offered, when the format logs it.
    pub fn add_offered(
        &mut self,
        client: Option<&[u8]>,
        user_agent: Option<&[u8]>,
        protocol: Option<&[u8]>,
        cipher: Option<&[u8]>,
        offer: Option<&OfferFields<'_>>,
    ) {
        if let Some(case) = self.case_of(protocol, cipher, offer) {
            self.count(client.unwrap_or(b"-"), user_agent.unwrap_or(b"-"), case, 1);
        }
    }

    /// [`WhatifAgg::add_offered`] into a block's partial whose clients a worker
    /// numbers: `ids` is the worker's, and [`WhatifAgg::seal_numbered`] ends the block.
    /// The partial is then merged (into an aggregate that holds no numbered clients of
    /// its own) as any other.
    ///
    /// The User-Agent comes as the line holds it ([`LoggedAgent`]).
    pub fn add_numbered<'t>(
        &mut self,
        ids: &mut ClientIds,
        client: Option<&[u8]>,
        user_agent: LoggedAgent<'t, impl FnOnce() -> Option<Cow<'t, [u8]>>>,
        (protocol, cipher): (Option<&[u8]>, Option<&[u8]>),
        offer: Option<&OfferFields<'_>>,
    ) {
        if let Some(case) = self.case_of(protocol, cipher, offer) {
            user_agent.count(ids, client.unwrap_or(b"-"), case);
        }
    }

    /// [`WhatifAgg::add_numbered`] for a caller that numbered the pair itself: `pair`
    /// is its number of (`protocol`, `cipher`), the same number for the same pair as
    /// long as this aggregate counts (`None`: plain HTTP, neither is logged), as
    /// [`crate::tls::TlsAgg::add_pair`] says it. A number met before gives the case at
    /// once when no offer is logged (`report` counts each line in both).
    pub fn add_numbered_as<'t>(
        &mut self,
        ids: &mut ClientIds,
        (client, user_agent): (
            Option<&[u8]>,
            LoggedAgent<'t, impl FnOnce() -> Option<Cow<'t, [u8]>>>,
        ),
        pair: Option<u32>,
        (protocol, cipher): (Option<&[u8]>, Option<&[u8]>),
        offer: Option<&OfferFields<'_>>,
    ) {
        let Some(number) = pair else {
            self.plain += 1;
            return;
        };
        let known = match offer.filter(|o| o.logged()) {
            Some(_) => None,
            None => self.caller_cases.get(number),
        };
        let case = match known {
            Some(case) => case,
            None => {
                let Some(case) = self.case_of(protocol, cipher, offer) else {
                    return;
                };
                if offer.is_none_or(|o| !o.logged()) {
                    self.caller_cases.set(number, case);
                }
                case
            }
        };
        user_agent.count(ids, client.unwrap_or(b"-"), case);
    }

    /// End a block counted by [`WhatifAgg::add_numbered`]: take what `ids` counted,
    /// with the names the merge may lack.
    pub fn seal_numbered(&mut self, ids: &mut ClientIds) {
        self.numbered = Some(Box::new(ids.seal()));
    }

    /// The case of a request (`None`: no protocol and no cipher, plain HTTP, counted).
    fn case_of(
        &mut self,
        protocol: Option<&[u8]>,
        cipher: Option<&[u8]>,
        offer: Option<&OfferFields<'_>>,
    ) -> Option<u32> {
        let protocol = protocol.filter(|p| !p.is_empty());
        let cipher = cipher.filter(|c| !c.is_empty());
        if protocol.is_none() && cipher.is_none() {
            self.plain += 1;
            return None;
        }
        let pair = self.intern(protocol.unwrap_or(b""), cipher.unwrap_or(b""));
        let offer = match offer.filter(|o| o.logged()) {
            Some(o) => {
                let mut key = std::mem::take(&mut self.scratch);
                o.key(&mut key);
                let id = self.intern_offer(&key);
                self.scratch = key;
                id
            }
            None => 0,
        };
        if offer != 0 {
            return Some(self.intern_case(pair, offer));
        }
        if let Some(case) = self.bare_cases.get(pair) {
            return Some(case);
        }
        let case = self.intern_case(pair, 0);
        self.bare_cases.set(pair, case);
        Some(case)
    }

    /// The workers are done: forget their numberings (the names they hold are copies).
    pub fn drop_numberings(&mut self) {
        self.settle_all();
        self.mirrors.clear();
    }

    /// Merge a block's numbered requests (their cases are ours `remap[i]`), in the order
    /// of its lines: each client found by its number once its name is known, new ones
    /// held or sketched as [`WhatifAgg::merge`] does, in the order the block first
    /// showed them.
    fn merge_numbered(&mut self, numbered: Numbered, remap: &[u32]) {
        let mut mirrors = std::mem::take(&mut self.mirrors);
        let at = match mirrors
            .iter()
            .position(|m| std::sync::Arc::ptr_eq(&m.tag, &numbered.tag))
        {
            Some(at) => at,
            None => {
                mirrors.push(Mirror::new(std::sync::Arc::clone(&numbered.tag)));
                mirrors.len() - 1
            }
        };
        if let Some(mirror) = mirrors.get_mut(at) {
            mirror.learn(&numbered);
            for &(id, case) in &numbered.counted {
                let Some(&case) = remap.get(case as usize).filter(|&&c| c != u32::MAX) else {
                    continue;
                };
                let standing = mirror.standing(id);
                if let Some(Standing::Exact(i)) = standing {
                    if !mirror.keep(id, case) {
                        self.owe(i, case, 1);
                    }
                } else {
                    self.merge_one(mirror, (id, standing), case);
                }
            }
            mirror.acknowledge();
        }
        drop(numbered.tag);
        // A numbering nobody holds any more (its worker started over or ended, and
        // every block of it is merged) is done with, once what it kept is added.
        for m in mirrors.iter_mut().filter(|m| !m.live()) {
            self.pay(m);
        }
        mirrors.retain(Mirror::live);
        self.mirrors = mirrors;
    }

    /// Add the requests `mirror` kept for its clients' first cases
    /// ([`Mirror::keep`]) to their entries. Each entry holds that case already (it
    /// came with it), so adding them late leaves its cases in the order first met.
    fn pay(&mut self, mirror: &mut Mirror) {
        mirror.pay(|place, case, n| {
            if let Some(entry) = self.clients.value_at_mut(place) {
                tally(&mut entry.tallies, case, n);
            }
        });
    }

    /// Everything merged added to the entries: what the mirrors kept, then what is
    /// owed.
    fn settle_all(&mut self) {
        let mut mirrors = std::mem::take(&mut self.mirrors);
        for m in &mut mirrors {
            self.pay(m);
        }
        self.mirrors = mirrors;
        self.settle();
    }

    /// A numbered client's request of `case`, its client not known to stand exactly.
    fn merge_one(
        &mut self,
        mirror: &mut Mirror,
        (id, standing): (u32, Option<Standing>),
        case: u32,
    ) {
        let held = match standing {
            Some(Standing::Exact(i)) => Some(i),
            Some(Standing::New) => self.find_named(mirror, id),
            Some(Standing::Sketched) => {
                let (addr, _, ua, _, _) = mirror.name(id);
                self.sketch_client(addr, ua, &[(case, 1)]);
                return;
            }
            None => {
                debug_assert!(false, "a numbered client without a name");
                return;
            }
        };
        if let Some(i) = held.filter(|&i| i < self.clients.len()) {
            self.owe(i, case, 1);
            return;
        }
        let (addr, agent_no, ua, ua_hash, place) = mirror.name(id);
        let order = self.next;
        self.next = order.saturating_add(1);
        let entry = Entry {
            order,
            tallies: smallvec::smallvec![(case, 1)],
        };
        match self.first_seen(addr, (ua, ua_hash, Some(place)), entry) {
            Some((i, agent)) => {
                mirror.place_agent(agent_no, agent);
                mirror.stand(id, Standing::Exact(i));
                // The entry starts with `case`: the mirror keeps its later requests.
                mirror.first_case(id, case);
            }
            None => mirror.stand(id, Standing::Sketched),
        }
    }

    /// Add `n` requests of `case` to the exact entry at `place`, later
    /// ([`WhatifAgg::settle`]; at once for a place past 32 bits).
    fn owe(&mut self, place: usize, case: u32, n: u64) {
        let Ok(at) = u32::try_from(place) else {
            if let Some(entry) = self.clients.value_at_mut(place) {
                tally(&mut entry.tallies, case, n);
            }
            return;
        };
        self.owed.push((at, case, n));
        if self.owed.len() >= OWED {
            self.settle();
        }
    }

    /// Make the owed additions. Each merged block adds to thousands of entries spread
    /// over the whole table, a cache miss each (issue 12: 5 % of `whatif`'s time, at
    /// the first load of each entry); gathered, put in the order of their places (a
    /// stable radix sort, a byte of the place a pass, so that each entry takes its
    /// additions in the order they came and its cases stay in the order first met),
    /// they walk the table from its start to its end.
    fn settle(&mut self) {
        if self.owed.is_empty() {
            return;
        }
        let mut owed = std::mem::take(&mut self.owed);
        let highest = owed.iter().map(|o| o.0).max().unwrap_or(0);
        let mut other = vec![(0u32, 0u32, 0u64); owed.len()];
        let mut shift = 0u32;
        while shift < 32 && (shift == 0 || highest >> shift != 0) {
            let digit = |o: &(u32, u32, u64)| ((o.0 >> shift) & 0xff) as usize;
            let mut start = [0usize; 257];
            for o in &owed {
                if let Some(s) = start.get_mut(digit(o) + 1) {
                    *s += 1;
                }
            }
            for i in 1..start.len() {
                let before = start.get(i - 1).copied().unwrap_or(0);
                if let Some(s) = start.get_mut(i) {
                    *s += before;
                }
            }
            for o in &owed {
                if let Some(s) = start.get_mut(digit(o)) {
                    if let Some(slot) = other.get_mut(*s) {
                        *slot = *o;
                    }
                    *s += 1;
                }
            }
            std::mem::swap(&mut owed, &mut other);
            shift += 8;
        }
        for &(place, case, n) in &owed {
            if let Some(entry) = self.clients.value_at_mut(place as usize) {
                tally(&mut entry.tallies, case, n);
            }
        }
        owed.clear();
        self.owed = owed;
    }

    /// The exact entry of a numbered client met for the first time, if another block
    /// (or another worker's numbering) brought it already; the mirror then keeps it.
    fn find_named(&mut self, mirror: &mut Mirror, id: u32) -> Option<usize> {
        let (addr, agent_no, ua, ua_hash, place) = mirror.name(id);
        let agent = place.or_else(|| self.agents.find_hashed(ua_hash, ua))?;
        let mut scratch = std::mem::take(&mut self.scratch);
        let key = entry_key(&mut scratch, agent, addr);
        let found = self.clients.find_hashed(crate::arena::key_hash(key), key);
        self.scratch = scratch;
        mirror.place_agent(agent_no, agent);
        let i = found?;
        mirror.stand(id, Standing::Exact(i));
        Some(i)
    }

    /// Add another aggregate. With a memory limit, `other` is what came after `self`:
    /// its new entries are admitted in the order it first saw them, then sketched.
    pub fn merge(&mut self, other: WhatifAgg) {
        let mut other = other;
        // What `other` merged and has not added to its entries yet, added first.
        other.settle_all();
        let pairs: Vec<u32> = other.pairs.iter().map(|(p, c)| self.intern(p, c)).collect();
        let offers: Vec<u32> = other.offers.iter().map(|k| self.intern_offer(k)).collect();
        let remap: Vec<u32> = other
            .cases
            .iter()
            .map(|&(p, o)| {
                let p = pairs.get(p as usize).copied().unwrap_or(u32::MAX);
                let o = match o {
                    0 => 0,
                    o => offers.get(o as usize - 1).copied().unwrap_or(0),
                };
                self.intern_case(p, o)
            })
            .collect();
        self.offer_fields |= other.offer_fields;
        self.plain += other.plain;
        let fits = self
            .budget
            .used()
            .checked_add(other.budget.used())
            .is_some_and(|n| n <= self.budget.limit());
        let base = self.next;
        self.next = base.saturating_add(other.next);
        let WhatifAgg {
            agents: their_agents,
            clients: their_clients,
            sketch: their_sketch,
            numbered: their_numbered,
            ..
        } = other;
        if let Some(numbered) = their_numbered {
            self.merge_numbered(*numbered, &remap);
        }
        // Their User-Agent places as ours, once found.
        let mut agent_of: Vec<Option<usize>> = vec![None; their_agents.len()];
        let mut fresh: Vec<(&[u8], usize, Entry)> = Vec::new();
        let mut scratch = Vec::new();
        // Their entries add to ours at once: ours must hold what is owed first.
        self.settle();
        let (bytes, entries) = their_clients.into_parts();
        for slot in entries {
            let mut entry = slot.value;
            let key = bytes
                .get(slot.offset..slot.offset + slot.len)
                .unwrap_or_default();
            let (theirs, addr) = split_entry_key(key);
            for (pair, _) in &mut entry.tallies {
                *pair = remap.get(*pair as usize).copied().unwrap_or(u32::MAX);
            }
            entry.tallies.retain(|(p, _)| *p != u32::MAX);
            entry.order = base.saturating_add(entry.order);
            let ua = their_agents.key_at(theirs);
            let ua_hash = their_agents.hash_at(theirs);
            let ours = match agent_of.get(theirs).copied().flatten() {
                Some(known) => Some(known),
                None => {
                    let found = self.agents.find_hashed(ua_hash, ua);
                    if let (Some(f), Some(cached)) = (found, agent_of.get_mut(theirs)) {
                        *cached = Some(f);
                    }
                    found
                }
            };
            if let Some(agent) = ours {
                let key = entry_key(&mut scratch, agent, addr);
                if let Some(slot) = self
                    .clients
                    .get_mut_hashed(crate::arena::key_hash(key), key)
                {
                    add_tallies(&mut slot.tallies, entry.tallies);
                    continue;
                }
            }
            if fits {
                self.first_seen(addr, (ua, ua_hash, Some(ours)), entry);
            } else {
                fresh.push((addr, theirs, entry));
            }
        }
        if !self.budget.is_full() {
            fresh.sort_unstable_by_key(|(_, _, e)| e.order);
        }
        for (addr, theirs, entry) in fresh {
            let ua = their_agents.key_at(theirs);
            self.first_seen(addr, (ua, their_agents.hash_at(theirs), None), entry);
        }
        if let Some(theirs) = their_sketch {
            self.sketch
                .get_or_insert_with(Box::default)
                .merge(&theirs, &remap);
        }
    }

    /// Judge everything against `policy`; `kind_of` classifies a User-Agent (called
    /// once per distinct User-Agent); `top` bounds the User-Agent and address lists;
    /// `client_key` says what one client is (with `addr`, a client's kind is that of
    /// its User-Agent with the most requests).
    #[allow(clippy::too_many_arguments)]
    pub fn report(
        &self,
        policy: &Policy,
        client_key: ClientKey,
        kind_of: &mut dyn FnMut(&str) -> ClientKind,
        top: usize,
        lines: &LineStats,
        inputs: Vec<InputReport>,
        certs: Option<Certs>,
    ) -> WhatifReport {
        if !self.owed.is_empty() || self.mirrors.iter().any(Mirror::keeps) {
            // Merged but not settled (`drop_numberings` settles): judge a settled copy.
            let mut settled = self.clone();
            settled.settle_all();
            return settled.report(policy, client_key, kind_of, top, lines, inputs, certs);
        }
        let judged: Vec<Judged> = self
            .pairs
            .iter()
            .map(|(p, c)| judge(policy, &lossless_text(p), &lossless_text(c)))
            .collect();
        let (certs, certs_origin) = match certs {
            Some(c) => (c, "given"),
            None => (self.certs_seen(), "inferred from the negotiated suites"),
        };
        let outcomes = self.outcomes(policy, certs);
        let pair_of = |case: u32| self.cases.get(case as usize).map_or(u32::MAX, |c| c.0);
        // A case is refused when its exact outcome fails, or (no offer logged) when the
        // policy refuses its negotiated pair.
        let refused = |case: u32| match outcomes.get(case as usize) {
            Some(Some(Outcome::Fails(_))) => true,
            Some(Some(Outcome::Works(_))) => false,
            _ => matches!(
                judged.get(pair_of(case) as usize).map(|j| j.decision),
                Some(Decision::RefusedProtocol | Decision::RefusedCipher)
            ),
        };
        let exact = |case: u32| matches!(outcomes.get(case as usize), Some(Some(_)));
        let mut exact_clients = (0u64, 0u64);
        let mut kinds: Vec<Option<ClientKind>> = vec![None; self.agents.len()];
        let mut pair_requests = vec![0u64; self.pairs.len()];
        let mut pair_clients = vec![0u64; self.pairs.len()];
        let mut totals = Totals::default();
        let mut by_kind = KindRows::default();
        let mut uas: FxHashMap<&[u8], UaRow> = FxHashMap::default();
        let mut addrs: FxHashMap<&[u8], AddressRow> = FxHashMap::default();
        // A client is one (address, User-Agent) entry, or with `--client-key addr` all
        // the entries of one address (gathered here; an entry is its own group
        // otherwise, and needs no map: issue 12, `report` judges three policies).
        let mut groups: FxHashMap<&[u8], Vec<Member<'_>>> = FxHashMap::default();
        if client_key == ClientKey::Addr {
            for (key, entry) in self.clients.iter() {
                let (agent, client, ua) = self.client_parts(key);
                groups
                    .entry(client)
                    .or_default()
                    .push((agent, ua, &entry.tallies[..]));
            }
        }
        // Each distinct User-Agent classified once, found by its place in `agents`
        // (hashing and comparing its text once per client and policy was ~2 % of
        // `report`: issue 12).
        let mut kind_of_ua = |agent: usize, ua: &[u8]| -> ClientKind {
            if let Some(Some(k)) = kinds.get(agent) {
                return *k;
            }
            let k = if ua == b"-" || ua.is_empty() {
                ClientKind::Unknown
            } else {
                kind_of(&lossless_text(ua))
            };
            if let Some(slot) = kinds.get_mut(agent) {
                *slot = Some(k);
            }
            k
        };
        // Per case, once: its pair, and whether it is refused and exactly known
        // (each client's tallies read them; through the closures above, per client
        // and policy, they were most of the per-client cost: issue 12).
        let facts: Vec<CaseFacts> = (0..self.cases.len())
            .map(|c| {
                let c = u32::try_from(c).unwrap_or(u32::MAX);
                CaseFacts {
                    pair: pair_of(c),
                    refused: refused(c),
                    exact: exact(c),
                }
            })
            .collect();
        let fact = |c: u32| facts.get(c as usize).copied().unwrap_or_default();
        let mut seen_pairs: Vec<u32> = Vec::new();
        let mut per_group = one_group(|client, members| {
            let (mut requests, mut refused_requests, mut all_exact) = (0u64, 0u64, true);
            for (_, _, tallies) in members {
                for &(c, n) in tallies.iter() {
                    let f = fact(c);
                    requests += n;
                    refused_requests += if f.refused { n } else { 0 };
                    all_exact &= f.exact;
                }
            }
            let all = refused_requests == requests;
            let some = refused_requests > 0;
            totals.add(requests, refused_requests, all, some && !all);
            if all_exact {
                exact_clients.0 += 1;
                exact_clients.1 += u64::from(all);
            }
            // The client's kind: that of its User-Agent with the most requests.
            let mut best: Option<(u64, ClientKind)> = None;
            seen_pairs.clear();
            for &(agent, ua, tallies) in members {
                let kind = kind_of_ua(agent, ua);
                let (mut member_requests, mut member_refused) = (0u64, 0u64);
                for &(c, n) in tallies.iter() {
                    let f = fact(c);
                    member_requests += n;
                    member_refused += if f.refused { n } else { 0 };
                    if let Some(slot) = pair_requests.get_mut(f.pair as usize) {
                        *slot += n;
                    }
                    if !seen_pairs.contains(&f.pair) {
                        seen_pairs.push(f.pair);
                        if let Some(slot) = pair_clients.get_mut(f.pair as usize) {
                            *slot += 1;
                        }
                    }
                }
                if best.is_none_or(|(n, _)| member_requests > n) {
                    best = Some((member_requests, kind));
                }
                let k = by_kind.row(kind);
                k.requests += member_requests;
                k.refused_requests += member_refused;
                if member_refused > 0 {
                    let u = uas.entry(ua).or_insert_with(|| UaRow {
                        user_agent: lossless_text(ua).into_owned(),
                        kind,
                        refused_requests: 0,
                        refused_clients: 0,
                    });
                    u.refused_requests += member_refused;
                    u.refused_clients += u64::from(all);
                    let a = addrs.entry(client).or_insert_with(|| AddressRow {
                        client: lossless_text(client).into_owned(),
                        refused_requests: 0,
                        user_agents: 0,
                    });
                    a.refused_requests += member_refused;
                    a.user_agents += 1;
                }
            }
            if let Some((_, kind)) = best {
                let k = by_kind.row(kind);
                k.clients += 1;
                k.refused_clients += u64::from(all);
            }
        });
        match client_key {
            ClientKey::AddrUa => {
                for (key, entry) in self.clients.iter() {
                    let (agent, client, ua) = self.client_parts(key);
                    per_group(client, &[(agent, ua, &entry.tallies[..])]);
                }
            }
            ClientKey::Addr => {
                for (group, members) in &groups {
                    per_group(group, members);
                }
            }
        }
        let estimate = self.sketch.as_ref().map(|sketch| {
            let exact_clients = totals.clients;
            let estimated = sketch.add_to(client_key, &refused, &mut totals);
            for (case, n) in sketch.requests.iter().enumerate() {
                if let Some(slot) = pair_requests.get_mut(pair_of(case as u32) as usize) {
                    *slot += n;
                }
            }
            // A pair's sketched clients: the union of its cases' sketches.
            let mut by_pair: Vec<Hll> = vec![Hll::new(); self.pairs.len()];
            for (case, h) in sketch.by(client_key).iter().enumerate() {
                if let Some(u) = by_pair.get_mut(pair_of(case as u32) as usize) {
                    u.merge(h);
                }
            }
            for (slot, h) in pair_clients.iter_mut().zip(&by_pair) {
                *slot += h.count();
            }
            Estimate {
                exact_clients,
                estimated_clients: estimated,
                relative_standard_error: RELATIVE_STANDARD_ERROR,
                memory_limit_bytes: self.budget.limit() as u64,
            }
        });
        let share = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };

        let mut ciphers: Vec<CipherRow> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(i, (p, c))| {
                let protocol = lossless_text(p).into_owned();
                let cipher = lossless_text(c).into_owned();
                let requests = pair_requests.get(i).copied().unwrap_or(0);
                let j = judged.get(i);
                CipherRow {
                    verdict: cipher_facts(&protocol, &cipher).verdict,
                    decision: decision_name(j.map(|j| j.decision)),
                    reason: j.and_then(|j| j.reason).map(Reason::as_str),
                    why: j.and_then(|j| j.why.clone()),
                    share: share(requests, totals.requests),
                    clients: pair_clients.get(i).copied().unwrap_or(0),
                    protocol,
                    cipher,
                    requests,
                }
            })
            .filter(|r| r.requests > 0)
            .collect();
        ciphers.sort_by(|a, b| {
            b.requests
                .cmp(&a.requests)
                .then_with(|| a.protocol.cmp(&b.protocol))
                .then_with(|| a.cipher.cmp(&b.cipher))
        });
        let mut protocols: Vec<ProtocolRow> = Vec::new();
        for c in &ciphers {
            let at = match protocols.iter().position(|p| p.protocol == c.protocol) {
                Some(at) => at,
                None => {
                    protocols.push(ProtocolRow {
                        protocol: c.protocol.clone(),
                        allowed: policy_allows_protocol(policy, &c.protocol),
                        reason: protocol_reason(policy, &c.protocol).map(Reason::as_str),
                        requests: 0,
                        refused_requests: 0,
                        share_refused: 0.0,
                    });
                    protocols.len() - 1
                }
            };
            let Some(row) = protocols.get_mut(at) else {
                continue;
            };
            row.requests += c.requests;
            if c.decision == "refused_protocol" || c.decision == "refused_cipher" {
                row.refused_requests += c.requests;
            }
        }
        for p in &mut protocols {
            p.share_refused = share(p.refused_requests, p.requests);
        }
        protocols.sort_by(|a, b| {
            b.requests
                .cmp(&a.requests)
                .then_with(|| a.protocol.cmp(&b.protocol))
        });
        let kinds_rows: Vec<KindRow> = by_kind.0.into_iter().flatten().collect();
        let mut top_uas: Vec<UaRow> = uas.into_values().collect();
        top_uas.sort_by(|a, b| {
            b.refused_requests
                .cmp(&a.refused_requests)
                .then_with(|| a.user_agent.cmp(&b.user_agent))
        });
        top_uas.truncate(top);
        let mut top_addrs: Vec<AddressRow> = addrs.into_values().collect();
        top_addrs.sort_by(|a, b| {
            b.refused_requests
                .cmp(&a.refused_requests)
                .then_with(|| a.client.cmp(&b.client))
        });
        top_addrs.truncate(top);
        let unknown_requests = ciphers
            .iter()
            .filter(|c| c.decision == "unknown")
            .map(|c| c.requests)
            .sum();
        let exact = (self.offer_fields || self.cases.iter().any(|c| c.1 != 0))
            .then(|| self.exact_report(&outcomes, &refused, exact_clients, certs, certs_origin));
        WhatifReport {
            policy: PolicyView::of(policy),
            caveat: if exact.is_some() {
                CAVEAT_OFFERS
            } else {
                CAVEAT
            },
            exact,
            client_key: client_key.as_str(),
            lines: lines.report(),
            plain: self.plain,
            requests: Share {
                total: totals.requests,
                refused: totals.refused_requests,
                share: share(totals.refused_requests, totals.requests),
            },
            clients: ClientShare {
                total: totals.clients,
                refused: totals.refused_clients,
                share: share(totals.refused_clients, totals.clients),
                partly: totals.partly_clients,
            },
            estimate,
            undecided_requests: unknown_requests,
            protocols,
            ciphers,
            kinds: kinds_rows,
            top_user_agents: top_uas,
            top_addresses: top_addrs,
            inputs,
        }
    }
}

impl WhatifAgg {
    /// The certificates the negotiated TLS <= 1.2 suites show the server had (an RSA
    /// certificate when they show none).
    fn certs_seen(&self) -> Certs {
        Certs::seen(
            self.pairs
                .iter()
                .filter_map(|(p, c)| catalogue::lookup(&lossless_text(p), &lossless_text(c))),
        )
    }

    /// Per case, the exact outcome under `policy` (`None`: no offer logged). Each
    /// distinct offer is read once.
    fn outcomes(&self, policy: &Policy, certs: Certs) -> Vec<Option<Outcome>> {
        let parsed: Vec<Offer> = self.offers.iter().map(|k| parse_offer_key(k)).collect();
        self.cases
            .iter()
            .map(|&(pair, offer)| {
                let o = parsed.get((offer as usize).checked_sub(1)?)?;
                if o.is_empty() {
                    return None;
                }
                let negotiated = self
                    .pairs
                    .iter()
                    .nth(pair as usize)
                    .and_then(|(p, _)| Protocol::parse(&lossless_text(p)));
                Some(handshake::negotiate(policy, certs, o, negotiated))
            })
            .collect()
    }

    /// Requests per case, exact entries and sketched ones.
    fn case_requests(&self) -> Vec<u64> {
        let mut out = vec![0u64; self.cases.len()];
        for entry in self.clients.values() {
            for &(c, n) in &entry.tallies {
                if let Some(slot) = out.get_mut(c as usize) {
                    *slot += n;
                }
            }
        }
        if let Some(sketch) = &self.sketch {
            for (slot, n) in out.iter_mut().zip(&sketch.requests) {
                *slot += n;
            }
        }
        out
    }

    fn exact_report(
        &self,
        outcomes: &[Option<Outcome>],
        refused: &dyn Fn(u32) -> bool,
        (clients, clients_failing): (u64, u64),
        certs: Certs,
        certs_origin: &'static str,
    ) -> ExactReport {
        let requests = self.case_requests();
        let mut r = ExactReport {
            certs: certs.as_str(),
            certs_origin,
            requests: 0,
            works: 0,
            fails: 0,
            share_fails: 0.0,
            changed: 0,
            clients,
            clients_failing,
            by_reason: Vec::new(),
            negotiated: Vec::new(),
            without_offer: Share {
                total: 0,
                refused: 0,
                share: 0.0,
            },
        };
        let mut reasons: FxHashMap<Failure, u64> = FxHashMap::default();
        let mut negotiated: FxHashMap<(Protocol, &'static str, Option<&'static str>), u64> =
            FxHashMap::default();
        for (case, (outcome, &n)) in outcomes.iter().zip(&requests).enumerate() {
            let logged = self
                .cases
                .get(case)
                .and_then(|&(p, _)| self.pairs.iter().nth(p as usize));
            match outcome {
                None => {
                    r.without_offer.total += n;
                    if refused(case as u32) {
                        r.without_offer.refused += n;
                    }
                }
                Some(Outcome::Fails(f)) => {
                    r.requests += n;
                    r.fails += n;
                    *reasons.entry(*f).or_default() += n;
                }
                Some(Outcome::Works(w)) => {
                    r.requests += n;
                    r.works += n;
                    let name = suite_name(w.suite);
                    *negotiated
                        .entry((w.protocol, name, w.group.map(|g| g.name)))
                        .or_default() += n;
                    let same = logged.is_some_and(|(p, c)| {
                        Protocol::parse(&lossless_text(p)) == Some(w.protocol)
                            && catalogue::lookup(w.protocol.as_str(), &lossless_text(c))
                                .is_some_and(|s| s.code == w.suite.code)
                    });
                    r.changed += u64::from(!same) * n;
                }
            }
        }
        let share = |n: u64, of: u64| if of == 0 { 0.0 } else { n as f64 / of as f64 };
        r.share_fails = share(r.fails, r.requests);
        r.without_offer.share = share(r.without_offer.refused, r.without_offer.total);
        r.by_reason = Failure::ALL
            .iter()
            .filter_map(|f| {
                reasons.get(f).map(|&n| FailureRow {
                    reason: f.as_str(),
                    why: f.describe(),
                    requests: n,
                })
            })
            .collect();
        r.by_reason.sort_by_key(|f| std::cmp::Reverse(f.requests));
        let mut rows: Vec<NegotiatedRow> = negotiated
            .into_iter()
            .map(|((p, c, g), n)| NegotiatedRow {
                protocol: p.as_str(),
                cipher: c,
                group: g,
                requests: n,
                share: share(n, r.works),
            })
            .collect();
        rows.sort_by(|a, b| {
            b.requests
                .cmp(&a.requests)
                .then_with(|| a.protocol.cmp(b.protocol))
                .then_with(|| a.cipher.cmp(b.cipher))
                .then_with(|| a.group.cmp(&b.group))
        });
        r.negotiated = rows;
        r
    }
}

fn suite_name(s: &'static tlsgap_ciphers::Suite) -> &'static str {
    s.openssl
        .first()
        .or(s.iana.as_ref())
        .map_or("", String::as_str)
}

/// The logged fields of a client's offer (nginx `$ssl_ciphers`/`$ssl_curves`, httpd
/// trunk `SSL_CLIENTHELLO_CIPHERS/GROUPS/VERSIONS/VERSION`), raw.
#[derive(Clone, Copy, Debug, Default)]
pub struct OfferFields<'a> {
    /// The offered suites.
    pub ciphers: Option<&'a [u8]>,
    /// The offered groups.
    pub groups: Option<&'a [u8]>,
    /// `supported_versions`.
    pub versions: Option<&'a [u8]>,
    /// The legacy version.
    pub version: Option<&'a [u8]>,
}

impl OfferFields<'_> {
    /// Whether an offer was logged: a cipher list that is not empty or `-`.
    pub fn logged(&self) -> bool {
        self.ciphers.is_some_and(|c| !c.is_empty() && c != b"-")
    }

    /// The offer as one key (the fields joined by `\0`), when one was logged.
    pub fn to_key(&self) -> Option<Box<[u8]>> {
        self.logged().then(|| {
            let mut k = Vec::new();
            self.key(&mut k);
            k.into()
        })
    }

    fn key(&self, out: &mut Vec<u8>) {
        out.clear();
        for (i, f) in [self.ciphers, self.groups, self.versions, self.version]
            .iter()
            .enumerate()
        {
            if i > 0 {
                out.push(0);
            }
            out.extend_from_slice(f.unwrap_or(b""));
        }
    }
}

fn parse_offer_key(key: &[u8]) -> Offer {
    let mut parts = key
        .split(|&b| b == 0)
        .map(|p| lossless_text(p).into_owned());
    let mut next = || parts.next().filter(|p| !p.is_empty());
    let (c, g, vs, v) = (next(), next(), next(), next());
    Offer::parse(c.as_deref(), g.as_deref(), vs.as_deref(), v.as_deref())
}

/// What the report says about its figures when the log carries the clients' offers.
pub const CAVEAT_OFFERS: &str = "Requests whose offer was logged are decided exactly, as \
OpenSSL would negotiate them under the policy (see `exact`); the others only by the suite \
they negotiated, an upper bound of what the policy would break.";

/// The exact answer for the requests whose offer was logged.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ExactReport {
    /// The server certificates assumed: `rsa`, `ecdsa`, `rsa+ecdsa`.
    pub certs: &'static str,
    /// `given` (`--cert`) or `inferred from the negotiated suites`.
    pub certs_origin: &'static str,
    /// TLS requests with an offer logged.
    pub requests: u64,
    /// Those that would still get a handshake.
    pub works: u64,
    /// Those that would fail.
    pub fails: u64,
    /// `fails / requests`.
    pub share_fails: f64,
    /// Requests that would work, but with another protocol or suite than logged.
    pub changed: u64,
    /// Clients all of whose requests carried an offer.
    pub clients: u64,
    /// Of those, clients all of whose requests would fail.
    pub clients_failing: u64,
    /// Failing requests by reason.
    pub by_reason: Vec<FailureRow>,
    /// What the working requests would negotiate under the policy.
    pub negotiated: Vec<NegotiatedRow>,
    /// TLS requests without an offer: decided from the negotiated suite (upper bound).
    pub without_offer: Share,
}

/// Failing requests of one reason.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FailureRow {
    /// `no_common_protocol`, `inappropriate_fallback`, `no_common_cipher`,
    /// `no_common_group`.
    pub reason: &'static str,
    /// In words.
    pub why: &'static str,
    /// Requests.
    pub requests: u64,
}

/// One protocol, suite and group the policy would negotiate.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NegotiatedRow {
    /// The protocol.
    pub protocol: &'static str,
    /// The suite (OpenSSL name, as servers log it).
    pub cipher: &'static str,
    /// The key-exchange group, when the offer logs groups and the suite uses one.
    pub group: Option<&'static str>,
    /// Requests.
    pub requests: u64,
    /// Share of the working requests.
    pub share: f64,
}

/// One TLS request kept for `whatif --list-requests`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListedRequest {
    /// The input's index.
    pub input: usize,
    /// The 1-based line number in the input.
    pub line: u64,
    /// The client address, raw.
    pub client: Box<[u8]>,
    /// The User-Agent, unescaped.
    pub user_agent: Box<[u8]>,
    /// The negotiated protocol, raw.
    pub protocol: Box<[u8]>,
    /// The negotiated suite, raw.
    pub cipher: Box<[u8]>,
    /// The offer ([`OfferFields::to_key`]), when logged.
    pub offer: Option<Box<[u8]>>,
}

/// Columns of [`listed_rows`].
pub const LISTED_COLUMNS: [(&str, CellType); 12] = [
    ("file", CellType::Text),
    ("line", CellType::Int),
    ("client", CellType::Text),
    ("user_agent", CellType::Text),
    ("protocol", CellType::Text),
    ("cipher", CellType::Text),
    ("offer", CellType::Text),
    ("outcome", CellType::Text),
    ("new_protocol", CellType::Text),
    ("new_cipher", CellType::Text),
    ("new_group", CellType::Text),
    ("reason", CellType::Text),
];

/// One row per listed request: `offer` `yes`/`no`; `outcome` `works`/`fails` (exact,
/// from the offer) or `allowed`/`refused`/`unknown` (from the negotiated pair only);
/// what the policy would negotiate (`works`: the new protocol, suite and group;
/// `allowed`: the logged pair); `reason` of a failure or refusal. Each distinct
/// (pair, offer) is decided once; `names` are the inputs' names by index.
pub fn listed_rows(
    policy: &Policy,
    certs: Certs,
    listed: &[ListedRequest],
    names: &[String],
) -> Rows {
    type Decided = [Cell; 6];
    type Key<'k> = (&'k [u8], &'k [u8], Option<&'k [u8]>);
    let mut cache: FxHashMap<Key<'_>, Decided> = FxHashMap::default();
    let mut rows = Rows::new(&LISTED_COLUMNS);
    for r in listed {
        let key = (&r.protocol[..], &r.cipher[..], r.offer.as_deref());
        let decided = cache
            .entry(key)
            .or_insert_with(|| decide_request(policy, certs, key.0, key.1, key.2));
        let mut row: Vec<Cell> = vec![
            names
                .get(r.input)
                .map_or(Cell::Null, |n| Cell::from(n.as_str())),
            r.line.into(),
            Cell::from(lossless_text(&r.client).as_ref()),
            Cell::from(lossless_text(&r.user_agent).as_ref()),
            Cell::from(lossless_text(&r.protocol).as_ref()),
            Cell::from(lossless_text(&r.cipher).as_ref()),
        ];
        row.extend(decided.iter().cloned());
        rows.push(row);
    }
    rows
}

fn decide_request(
    policy: &Policy,
    certs: Certs,
    protocol: &[u8],
    cipher: &[u8],
    offer: Option<&[u8]>,
) -> [Cell; 6] {
    let n = Cell::Null;
    let (protocol, cipher) = (lossless_text(protocol), lossless_text(cipher));
    let offer = offer.map(parse_offer_key).filter(|o| !o.is_empty());
    match offer {
        Some(o) => match handshake::negotiate(policy, certs, &o, Protocol::parse(&protocol)) {
            Outcome::Works(w) => [
                "yes".into(),
                "works".into(),
                w.protocol.as_str().into(),
                suite_name(w.suite).into(),
                w.group.map_or(Cell::Null, |g| g.name.into()),
                n,
            ],
            Outcome::Fails(f) => [
                "yes".into(),
                "fails".into(),
                n.clone(),
                n.clone(),
                n,
                f.as_str().into(),
            ],
        },
        None => {
            let j = judge(policy, &protocol, &cipher);
            let (outcome, kept) = match j.decision {
                Decision::Allowed => ("allowed", true),
                Decision::RefusedProtocol | Decision::RefusedCipher => ("refused", false),
                Decision::Unknown => ("unknown", false),
            };
            [
                "no".into(),
                outcome.into(),
                if kept {
                    Cell::from(protocol.as_ref())
                } else {
                    n.clone()
                },
                if kept {
                    Cell::from(cipher.as_ref())
                } else {
                    n.clone()
                },
                n,
                j.reason.map_or(Cell::Null, |r| r.as_str().into()),
            ]
        }
    }
}

/// Add `n` requests of `pair` to a client's tallies.
pub(crate) fn tally(tallies: &mut Tallies, pair: u32, n: u64) {
    match tallies.iter_mut().find(|(p, _)| *p == pair) {
        Some((_, k)) => *k += n,
        None => tallies.push((pair, n)),
    }
}

/// Add a client's tallies from elsewhere (another block) to its tallies here.
fn add_tallies(tallies: &mut Tallies, from: Tallies) {
    for (case, n) in from {
        tally(tallies, case, n);
    }
}

/// One (User-Agent's place in `agents`, User-Agent, tallies) entry of a client.
type Member<'a> = (usize, &'a [u8], &'a [(u32, u64)]);

/// Ties the lifetime of what a per-group closure is given to the aggregate's (so that
/// it may keep the address and User-Agent slices in its maps).
fn one_group<'s, F: FnMut(&'s [u8], &[Member<'s>])>(f: F) -> F {
    f
}

/// An exact entry's key: its User-Agent's place, then the address.
fn entry_key<'s>(scratch: &'s mut Vec<u8>, agent: usize, addr: &[u8]) -> &'s [u8] {
    scratch.clear();
    scratch.extend_from_slice(&u32::try_from(agent).unwrap_or(u32::MAX).to_le_bytes());
    scratch.extend_from_slice(addr);
    scratch.as_slice()
}

/// The User-Agent's place and the address of an [`entry_key`].
fn split_entry_key(key: &[u8]) -> (usize, &[u8]) {
    match key.split_first_chunk::<4>() {
        Some((agent, addr)) => (u32::from_le_bytes(*agent) as usize, addr),
        None => (usize::MAX, key),
    }
}

fn split_key(key: &[u8]) -> (&[u8], &[u8]) {
    match key.iter().position(|&b| b == 0) {
        Some(i) => (&key[..i], &key[i + 1..]),
        None => (key, b""),
    }
}

fn decision_name(d: Option<Decision>) -> &'static str {
    match d {
        Some(Decision::Allowed) => "allowed",
        Some(Decision::RefusedProtocol) => "refused_protocol",
        Some(Decision::RefusedCipher) => "refused_cipher",
        Some(Decision::Unknown) | None => "unknown",
    }
}

fn policy_allows_protocol(policy: &Policy, logged: &str) -> Option<bool> {
    Protocol::parse(logged).map(|p| policy.protocols.contains(&p))
}

/// Why the policy refuses a whole protocol, if it does.
fn protocol_reason(policy: &Policy, logged: &str) -> Option<Reason> {
    let p = Protocol::parse(logged)?;
    if !policy.configured_protocols.contains(&p) {
        Some(Reason::ProtocolNotEnabled)
    } else if !policy.protocols.contains(&p) {
        if policy.openssl3 && p == Protocol::SslV3 {
            Some(Reason::ProtocolNotInOpenssl3)
        } else {
            Some(Reason::ProtocolSecurityLevel)
        }
    } else {
        None
    }
}

/// A logged pair judged: the decision, its reason and the reason in words.
struct Judged {
    decision: Decision,
    reason: Option<Reason>,
    why: Option<String>,
}

fn judge(policy: &Policy, protocol: &str, cipher: &str) -> Judged {
    let (decision, reason) = policy.explain(protocol, cipher);
    let why = reason.and_then(|r| {
        let p = Protocol::parse(protocol)?;
        match catalogue::lookup(protocol, cipher) {
            Some(suite) => Some(policy.describe(r, p, suite)),
            // A suite the catalogue does not know, on a protocol the policy refuses.
            None => policy.describe_protocol(r, p),
        }
    });
    Judged {
        decision,
        reason,
        why,
    }
}

/// What the report says about its figures.
pub const CAVEAT: &str = "Logs record the suite each client negotiated, not everything it \
could negotiate: these figures are an upper bound of what the policy would break.";

#[derive(Default)]
struct Totals {
    requests: u64,
    refused_requests: u64,
    clients: u64,
    refused_clients: u64,
    partly_clients: u64,
}

impl Totals {
    fn add(&mut self, requests: u64, refused: u64, all: bool, partly: bool) {
        self.requests += requests;
        self.refused_requests += refused;
        self.clients += 1;
        self.refused_clients += u64::from(all);
        self.partly_clients += u64::from(partly);
    }
}

/// The policy as the report states it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PolicyView {
    /// `mozilla-intermediate`, `apache`, `nginx`.
    pub name: String,
    /// The guideline version, for Mozilla profiles.
    pub version: Option<String>,
    /// The name with the version (`mozilla-intermediate 6.0`), as tables print it.
    pub title: String,
    /// Protocols a handshake can use.
    pub protocols: Vec<&'static str>,
    /// Protocols the directives enable (before the security level).
    pub configured_protocols: Vec<&'static str>,
    /// The OpenSSL security level (directives only).
    pub seclevel: Option<u8>,
    /// Where the level comes from.
    pub seclevel_origin: Option<String>,
    /// The DH parameters file the directives name: its strength, or why it was not
    /// checked (absent without such a file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dh_parameters: Option<String>,
    /// Key-exchange groups the profile names.
    pub groups: Vec<String>,
    /// The server's groups that need OpenSSL 3.5 or newer (ML-KEM): with an older
    /// OpenSSL the server does not start (absent when there are none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups_need_openssl_3_5: Vec<&'static str>,
    /// Cipher-string words that named nothing (OpenSSL skips them too).
    pub ignored_words: Vec<String>,
    /// TLS <= 1.2 suites enabled, in order (OpenSSL names).
    pub tls12_ciphers: Vec<String>,
    /// TLS 1.3 suites enabled.
    pub tls13_ciphers: Vec<String>,
}

impl PolicyView {
    fn of(p: &Policy) -> PolicyView {
        let name = |s: &tlsgap_ciphers::Suite| {
            s.openssl
                .first()
                .cloned()
                .or_else(|| s.iana.clone())
                .unwrap_or_default()
        };
        PolicyView {
            name: p.name.clone(),
            version: p.version.clone(),
            title: p.title(),
            protocols: p.protocols.iter().map(|p| p.as_str()).collect(),
            configured_protocols: p.configured_protocols.iter().map(|p| p.as_str()).collect(),
            seclevel: p.seclevel,
            seclevel_origin: p.seclevel_origin.clone(),
            dh_parameters: p.dh_parameters.clone(),
            groups: p.groups.clone(),
            groups_need_openssl_3_5: p.groups_needing_openssl_3_5(),
            ignored_words: p.ignored_words.clone(),
            tls12_ciphers: p.tls12.iter().map(|s| name(s)).collect(),
            tls13_ciphers: p
                .tls13
                .iter()
                .map(|s| s.iana.clone().unwrap_or_else(|| name(s)))
                .collect(),
        }
    }
}

/// Requests: total TLS, refused, share refused.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Share {
    /// TLS requests.
    pub total: u64,
    /// Requests the policy would refuse.
    pub refused: u64,
    /// `refused / total`.
    pub share: f64,
}

/// Distinct clients (address + User-Agent).
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct ClientShare {
    /// Clients seen over TLS.
    pub total: u64,
    /// Clients none of whose handshakes would pass.
    pub refused: u64,
    /// `refused / total`.
    pub share: f64,
    /// Clients with some handshakes refused and some not.
    pub partly: u64,
}

/// One protocol.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProtocolRow {
    /// As logged.
    pub protocol: String,
    /// Whether the policy enables it (null: not a protocol name).
    pub allowed: Option<bool>,
    /// Why the whole protocol is refused: `protocol_not_enabled`,
    /// `protocol_not_in_openssl3`, `protocol_security_level` (null: not refused as a
    /// whole).
    pub reason: Option<&'static str>,
    /// Requests.
    pub requests: u64,
    /// Requests refused (by protocol or suite).
    pub refused_requests: u64,
    /// `refused_requests / requests`.
    pub share_refused: f64,
}

/// One (protocol, suite).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct CipherRow {
    /// As logged.
    pub protocol: String,
    /// As logged.
    pub cipher: String,
    /// `allowed`, `refused_protocol`, `refused_cipher`, `unknown`.
    pub decision: &'static str,
    /// Why it is refused (null when allowed or unknown): `protocol_not_enabled`,
    /// `protocol_not_in_openssl3`, `protocol_security_level`, `suite_not_for_protocol`, `suite_not_listed`,
    /// `suite_not_in_openssl3`, `suite_security_level`, `no_dh_parameters`.
    pub reason: Option<&'static str>,
    /// The reason in words (`security level 2: OpenSSL 3 refuses ...`).
    pub why: Option<String>,
    /// The suite's verdict.
    pub verdict: Verdict,
    /// Requests.
    pub requests: u64,
    /// Share of all TLS requests.
    pub share: f64,
    /// Distinct clients that negotiated it.
    pub clients: u64,
}

/// One client kind.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KindRow {
    /// The kind.
    pub kind: ClientKind,
    /// TLS requests.
    pub requests: u64,
    /// Refused requests.
    pub refused_requests: u64,
    /// Distinct clients.
    pub clients: u64,
    /// Clients refused outright.
    pub refused_clients: u64,
}

/// The rows of the kinds met, in [`ClientKind::ALL`]'s order.
#[derive(Default)]
struct KindRows([Option<KindRow>; 4]);

impl KindRows {
    /// The row of `kind`, made when first asked for.
    fn row(&mut self, kind: ClientKind) -> &mut KindRow {
        let [browser, bot, library, unknown] = &mut self.0;
        let slot = match kind {
            ClientKind::Browser => browser,
            ClientKind::Bot => bot,
            ClientKind::Library => library,
            ClientKind::Unknown => unknown,
        };
        slot.get_or_insert_with(|| KindRow::new(kind))
    }
}

/// What a report needs of a case, worked out once per policy.
#[derive(Debug, Clone, Copy)]
struct CaseFacts {
    pair: u32,
    refused: bool,
    exact: bool,
}

impl Default for CaseFacts {
    /// An unknown case: no pair.
    fn default() -> CaseFacts {
        CaseFacts {
            pair: u32::MAX,
            refused: false,
            exact: false,
        }
    }
}

impl KindRow {
    fn new(kind: ClientKind) -> KindRow {
        KindRow {
            kind,
            requests: 0,
            refused_requests: 0,
            clients: 0,
            refused_clients: 0,
        }
    }
}

/// A User-Agent with refused requests.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UaRow {
    /// As logged (invalid UTF-8 as `\xHH`).
    pub user_agent: String,
    /// Its kind.
    pub kind: ClientKind,
    /// Refused requests.
    pub refused_requests: u64,
    /// Clients (addresses) with this User-Agent refused outright.
    pub refused_clients: u64,
}

/// An address with refused requests.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AddressRow {
    /// The client address.
    pub client: String,
    /// Refused requests.
    pub refused_requests: u64,
    /// Distinct User-Agents from it with refused requests.
    pub user_agents: u64,
}

/// `tlsgap whatif --format json`.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WhatifReport {
    /// The policy tested.
    pub policy: PolicyView,
    /// Why the figures are an upper bound (or, with offers logged, which are exact).
    pub caveat: &'static str,
    /// The exact answer from the logged offers; absent when the format logs none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact: Option<ExactReport>,
    /// What one client is: `addr+ua` (the default) or `addr`.
    pub client_key: &'static str,
    /// Line counts.
    pub lines: LinesReport,
    /// Plain-HTTP requests (not affected by a TLS policy).
    pub plain: u64,
    /// TLS requests and those refused.
    pub requests: Share,
    /// Distinct clients and those refused.
    pub clients: ClientShare,
    /// When the distinct clients outgrew the memory limit: how many are exact and how
    /// many estimated. Then `clients`, the `clients` of `ciphers` are partly
    /// HyperLogLog estimates, and `kinds`, `top_user_agents` and `top_addresses`
    /// cover the exact clients only (requests stay exact). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimate: Option<Estimate>,
    /// Requests whose protocol or suite the catalogue does not know (not counted as
    /// refused).
    pub undecided_requests: u64,
    /// By protocol.
    pub protocols: Vec<ProtocolRow>,
    /// By (protocol, suite).
    pub ciphers: Vec<CipherRow>,
    /// By client kind.
    pub kinds: Vec<KindRow>,
    /// User-Agents with the most refused requests.
    pub top_user_agents: Vec<UaRow>,
    /// Addresses with the most refused requests.
    pub top_addresses: Vec<AddressRow>,
    /// The inputs read.
    pub inputs: Vec<InputReport>,
}

/// Columns of [`whatif_rows`].
pub const WHATIF_COLUMNS: [(&str, CellType); 13] = [
    ("section", CellType::Text),
    ("protocol", CellType::Text),
    ("cipher", CellType::Text),
    ("kind", CellType::Text),
    ("user_agent", CellType::Text),
    ("client", CellType::Text),
    ("decision", CellType::Text),
    ("requests", CellType::Int),
    ("refused_requests", CellType::Int),
    ("clients", CellType::Int),
    ("refused_clients", CellType::Int),
    ("reason", CellType::Text),
    ("group", CellType::Text),
];

/// The report as one long table (CSV/Parquet): a `total` row, then `protocol`,
/// `cipher`, `kind`, `user_agent` and `address` rows; with logged offers, an `exact`
/// row (requests with an offer, failing, clients, clients failing; `reason` holds the
/// certificates assumed), `exact_failure` rows by reason, `exact_negotiated` rows
/// (protocol, cipher and `group` the policy would negotiate) and a `no_offer` row (the
/// upper bound for requests without an offer).
pub fn whatif_rows(r: &WhatifReport) -> Rows {
    let mut rows = Rows::new(&WHATIF_COLUMNS);
    let n = Cell::Null;
    rows.push(vec![
        "total".into(),
        n.clone(),
        n.clone(),
        n.clone(),
        n.clone(),
        n.clone(),
        n.clone(),
        r.requests.total.into(),
        r.requests.refused.into(),
        r.clients.total.into(),
        r.clients.refused.into(),
        n.clone(),
        n.clone(),
    ]);
    for p in &r.protocols {
        let decision = match p.allowed {
            Some(true) => "allowed",
            Some(false) => "refused_protocol",
            None => "unknown",
        };
        rows.push(vec![
            "protocol".into(),
            p.protocol.as_str().into(),
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
            decision.into(),
            p.requests.into(),
            p.refused_requests.into(),
            n.clone(),
            n.clone(),
            p.reason.map_or(Cell::Null, Cell::from),
            n.clone(),
        ]);
    }
    for c in &r.ciphers {
        let refused = if c.decision.starts_with("refused") {
            c.requests
        } else {
            0
        };
        rows.push(vec![
            "cipher".into(),
            c.protocol.as_str().into(),
            c.cipher.as_str().into(),
            n.clone(),
            n.clone(),
            n.clone(),
            c.decision.into(),
            c.requests.into(),
            refused.into(),
            c.clients.into(),
            n.clone(),
            c.reason.map_or(Cell::Null, Cell::from),
            n.clone(),
        ]);
    }
    for k in &r.kinds {
        rows.push(vec![
            "kind".into(),
            n.clone(),
            n.clone(),
            k.kind.as_str().into(),
            n.clone(),
            n.clone(),
            n.clone(),
            k.requests.into(),
            k.refused_requests.into(),
            k.clients.into(),
            k.refused_clients.into(),
            n.clone(),
            n.clone(),
        ]);
    }
    for u in &r.top_user_agents {
        rows.push(vec![
            "user_agent".into(),
            n.clone(),
            n.clone(),
            u.kind.as_str().into(),
            u.user_agent.as_str().into(),
            n.clone(),
            n.clone(),
            n.clone(),
            u.refused_requests.into(),
            n.clone(),
            u.refused_clients.into(),
            n.clone(),
            n.clone(),
        ]);
    }
    for a in &r.top_addresses {
        rows.push(vec![
            "address".into(),
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
            a.client.as_str().into(),
            n.clone(),
            n.clone(),
            a.refused_requests.into(),
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
        ]);
    }
    if let Some(x) = &r.exact {
        let row = |section: &str| -> Vec<Cell> {
            let mut v = vec![Cell::Null; WHATIF_COLUMNS.len()];
            if let Some(c) = v.first_mut() {
                *c = section.into();
            }
            v
        };
        // total: requests with an offer, those failing, clients, clients failing.
        let mut t = row("exact");
        t[6] = "exact".into();
        t[7] = x.requests.into();
        t[8] = x.fails.into();
        t[9] = x.clients.into();
        t[10] = x.clients_failing.into();
        t[11] = Cell::from(x.certs);
        rows.push(t);
        for f in &x.by_reason {
            let mut v = row("exact_failure");
            v[6] = "fails".into();
            v[7] = f.requests.into();
            v[8] = f.requests.into();
            v[11] = f.reason.into();
            rows.push(v);
        }
        for g in &x.negotiated {
            let mut v = row("exact_negotiated");
            v[1] = g.protocol.into();
            v[2] = g.cipher.into();
            v[6] = "works".into();
            v[7] = g.requests.into();
            v[8] = 0u64.into();
            v[12] = g.group.map_or(Cell::Null, Cell::from);
            rows.push(v);
        }
        let mut w = row("no_offer");
        w[6] = "upper_bound".into();
        w[7] = x.without_offer.total.into();
        w[8] = x.without_offer.refused.into();
        rows.push(w);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: (&str, &str) = ("TLSv1", "ECDHE-RSA-AES128-SHA");
    const NEW: (&str, &str) = ("TLSv1.3", "TLS_AES_128_GCM_SHA256");

    /// Client `i` (12-byte address): odd ones over TLS 1.0 (refused by intermediate),
    /// even ones over TLS 1.3, every fifth over both; a plain request every 7th.
    fn rows(n: u32) -> Vec<(String, Option<(&'static str, &'static str)>)> {
        let mut out = Vec::new();
        for i in 0..n {
            let a = format!("c{i:011}");
            out.push((a.clone(), Some(if i % 2 == 1 { OLD } else { NEW })));
            if i % 5 == 0 {
                out.push((a.clone(), Some(if i % 2 == 1 { NEW } else { OLD })));
            }
            if i % 7 == 0 {
                out.push((a, None));
            }
        }
        out
    }

    fn split(rows: &[(String, Option<(&str, &str)>)], chunks: usize, limit: usize) -> WhatifAgg {
        let mut total = WhatifAgg::with_memory_limit(limit);
        for piece in rows.chunks(rows.len().div_ceil(chunks)) {
            let mut part = WhatifAgg::new();
            for (a, pc) in piece {
                let (p, c) = pc.map_or((None, None), |(p, c)| {
                    (Some(p.as_bytes()), Some(c.as_bytes()))
                });
                part.add(Some(a.as_bytes()), Some(b"curl/8"), p, c);
            }
            total.merge(part);
        }
        total
    }

    fn report(agg: &WhatifAgg, key: ClientKey) -> WhatifReport {
        let policy = Policy::mozilla("mozilla-intermediate").unwrap();
        agg.report(
            &policy,
            key,
            &mut |_| ClientKind::Library,
            5,
            &LineStats::default(),
            vec![],
            None,
        )
    }

    /// Offered lines: (client, negotiated protocol, suite, offered suites, groups).
    const OFFERED: [(&str, &str, &str, &str, &str); 5] = [
        // Negotiated a CBC suite, offers GCM too: still works, with another suite.
        (
            "a",
            "TLSv1.2",
            "ECDHE-RSA-AES256-SHA",
            "ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256",
            "X25519",
        ),
        // TLS 1.0 only: fails under intermediate (no protocol in common).
        ("b", "TLSv1", "AES128-SHA", "AES128-SHA:DES-CBC3-SHA", "-"),
        (
            "c",
            "TLSv1.3",
            "TLS_AES_128_GCM_SHA256",
            "TLS_AES_128_GCM_SHA256",
            "0x11ec:X25519",
        ),
        // Offers nothing logged: upper bound.
        ("d", "TLSv1.2", "ECDHE-RSA-AES256-SHA", "-", "-"),
        // CBC only, TLS 1.2: fails (no suite in common).
        (
            "e",
            "TLSv1.2",
            "ECDHE-RSA-AES256-SHA",
            "ECDHE-RSA-AES256-SHA:AES256-SHA",
            "prime256v1",
        ),
    ];

    fn offered(agg: &mut WhatifAgg, i: usize) {
        let (c, p, s, o, g) = OFFERED[i % OFFERED.len()];
        agg.add_offered(
            Some(c.as_bytes()),
            Some(b"ua"),
            Some(p.as_bytes()),
            Some(s.as_bytes()),
            Some(&OfferFields {
                ciphers: Some(o.as_bytes()),
                groups: Some(g.as_bytes()),
                versions: None,
                version: None,
            }),
        );
    }

    #[test]
    fn offers_decide_exactly_and_merge_in_any_split() {
        let mut one = WhatifAgg::new();
        for i in 0..50 {
            offered(&mut one, i);
        }
        let r = report(&one, ClientKey::AddrUa);
        let x = r.exact.clone().expect("exact section");
        assert_eq!((x.requests, x.works, x.fails), (40, 20, 20));
        assert_eq!((x.without_offer.total, x.without_offer.refused), (10, 10));
        assert_eq!(x.changed, 10);
        assert_eq!((x.clients, x.clients_failing), (4, 2));
        assert_eq!(r.requests.refused, 30);
        assert_eq!(r.clients.refused, 3);
        let reasons: Vec<&str> = x.by_reason.iter().map(|f| f.reason).collect();
        assert_eq!(reasons.len(), 2);
        assert!(reasons.contains(&"no_common_protocol") && reasons.contains(&"no_common_cipher"));
        let groups: Vec<Option<&str>> = x.negotiated.iter().map(|n| n.group).collect();
        // Mozilla 6.0 lists X25519MLKEM768 first: the hybrid post-quantum group wins
        // for the client that offers it.
        assert_eq!(groups, vec![Some("X25519"), Some("X25519MLKEM768")]);
        for parts in [2, 3, 7] {
            let mut total = WhatifAgg::new();
            for part in 0..parts {
                let mut p = WhatifAgg::new();
                for i in (0..50).filter(|i| i % parts == part) {
                    offered(&mut p, i);
                }
                total.merge(p);
            }
            assert_eq!(
                report(&total, ClientKey::AddrUa).exact,
                Some(x.clone()),
                "{parts}"
            );
        }
        // Without the offer fields the same lines are judged by their negotiated pair.
        let mut plain = WhatifAgg::new();
        for i in 0..50 {
            let (c, p, s, _, _) = OFFERED[i % OFFERED.len()];
            plain.add(
                Some(c.as_bytes()),
                Some(b"ua"),
                Some(p.as_bytes()),
                Some(s.as_bytes()),
            );
        }
        let r = report(&plain, ClientKey::AddrUa);
        assert!(r.exact.is_none());
        assert_eq!(r.requests.refused, 40);
    }

    fn close(got: u64, want: u64, tolerance: f64) {
        let err = (got as f64 - want as f64).abs() / want as f64;
        assert!(err < tolerance, "{got} vs {want}");
    }

    #[test]
    fn beyond_the_budget_clients_are_estimated() {
        let rows = rows(40_000);
        let exact = report(&split(&rows, 1, usize::MAX), ClientKey::AddrUa);
        assert!(exact.estimate.is_none());
        // Room for 1,000 entries (12 + 1 + 6 bytes of key each).
        let limit = 1_000 * (19 + WHATIF_ENTRY_BYTES);
        let want = report(&split(&rows, 1, limit), ClientKey::AddrUa);
        let e = want.estimate.expect("an estimate");
        assert_eq!(e.exact_clients, 1_000);
        close(e.estimated_clients, 39_000, 3.0 * RELATIVE_STANDARD_ERROR);
        // Requests stay exact; clients are estimated.
        assert_eq!(want.requests, exact.requests);
        assert_eq!(want.plain, exact.plain);
        close(want.clients.total, exact.clients.total, 0.03);
        close(want.clients.refused, exact.clients.refused, 0.05);
        close(want.clients.partly, exact.clients.partly, 0.10);
        for (a, b) in want.ciphers.iter().zip(&exact.ciphers) {
            assert_eq!((&a.cipher, a.requests), (&b.cipher, b.requests));
            close(a.clients, b.clients, 0.03);
        }
        // The same whatever the split.
        for chunks in [2, 7, 100] {
            assert_eq!(
                report(&split(&rows, chunks, limit), ClientKey::AddrUa),
                want
            );
        }
        let by_addr = report(&split(&rows, 7, limit), ClientKey::Addr);
        close(by_addr.clients.total, exact.clients.total, 0.03);
    }

    /// Requests of many (address, User-Agent) clients: addresses and User-Agents each
    /// shared by several clients, IPv6 addresses, a User-Agent outside ASCII.
    fn mixed_rows() -> Vec<(String, String, (&'static str, &'static str))> {
        (0..4_000u32)
            .map(|i| {
                let addr = match i % 5 {
                    0 => format!("2001:db8::{:x}", i % 89),
                    _ => format!("198.51.100.{}", i % 61),
                };
                let ua = match i % 7 {
                    0 => "-".to_string(),
                    1 => format!("Mozilla/5.0 Größe {}", i % 3),
                    _ => format!("agent {}", (i * 31) % 17),
                };
                (addr, ua, if i % 3 == 0 { OLD } else { NEW })
            })
            .collect()
    }

    fn mixed_report(
        rows: &[(String, String, (&str, &str))],
        chunks: usize,
        key: ClientKey,
    ) -> WhatifReport {
        let mut total = WhatifAgg::new();
        for piece in rows.chunks(rows.len().div_ceil(chunks)) {
            let mut part = WhatifAgg::new();
            for (a, ua, (p, c)) in piece {
                part.add(
                    Some(a.as_bytes()),
                    Some(ua.as_bytes()),
                    Some(p.as_bytes()),
                    Some(c.as_bytes()),
                );
            }
            total.merge(part);
        }
        let policy = Policy::mozilla("mozilla-intermediate").unwrap();
        let mut kind_of = |ua: &str| match ua.len() % 3 {
            0 => ClientKind::Bot,
            1 => ClientKind::Browser,
            _ => ClientKind::Library,
        };
        total.report(
            &policy,
            key,
            &mut kind_of,
            50,
            &LineStats::default(),
            vec![],
            None,
        )
    }

    /// Clients are (address, User-Agent) pairs, whatever the split into blocks: the
    /// counts are those of a set of pairs, and every split gives the same report.
    #[test]
    fn clients_are_address_and_user_agent_pairs_in_any_split() {
        let rows = mixed_rows();
        let pairs: std::collections::BTreeSet<(&str, &str)> = rows
            .iter()
            .map(|(a, u, _)| (a.as_str(), u.as_str()))
            .collect();
        let addrs: std::collections::BTreeSet<&str> =
            rows.iter().map(|(a, _, _)| a.as_str()).collect();
        let refused_pairs: std::collections::BTreeSet<(&str, &str)> = rows
            .iter()
            .filter(|(_, _, pc)| *pc == OLD)
            .map(|(a, u, _)| (a.as_str(), u.as_str()))
            .collect();
        for key in [ClientKey::AddrUa, ClientKey::Addr] {
            let want = mixed_report(&rows, 1, key);
            let distinct = match key {
                ClientKey::AddrUa => pairs.len(),
                ClientKey::Addr => addrs.len(),
            };
            assert_eq!(want.clients.total, distinct as u64);
            assert_eq!(want.requests.total, rows.len() as u64);
            if key == ClientKey::AddrUa {
                let agents: u64 = want
                    .top_user_agents
                    .iter()
                    .map(|u| u.refused_requests)
                    .sum();
                assert_eq!(
                    agents,
                    rows.iter().filter(|(_, _, pc)| *pc == OLD).count() as u64
                );
                assert!(!refused_pairs.is_empty());
                // Refused outright: the pairs none of whose requests would pass.
                let passing: std::collections::BTreeSet<(&str, &str)> = rows
                    .iter()
                    .filter(|(_, _, pc)| *pc != OLD)
                    .map(|(a, u, _)| (a.as_str(), u.as_str()))
                    .collect();
                let refused = refused_pairs.difference(&passing).count();
                assert_eq!(want.clients.refused, refused as u64);
            }
            for chunks in [2, 7, 40] {
                assert_eq!(mixed_report(&rows, chunks, key), want, "{chunks} blocks");
            }
        }
    }

    #[test]
    fn below_the_budget_nothing_changes() {
        let rows = rows(3_000);
        let limit = 3_000 * (19 + WHATIF_ENTRY_BYTES);
        for key in [ClientKey::AddrUa, ClientKey::Addr] {
            let want = report(&split(&rows, 1, usize::MAX), key);
            for chunks in [1, 9] {
                assert_eq!(report(&split(&rows, chunks, limit), key), want);
            }
            let json = serde_json::to_string(&want).unwrap_or_default();
            assert!(!json.contains("estimate"));
        }
    }

    /// A line of the numbering test: address, User-Agent, (protocol, suite) or plain,
    /// and an offer or none.
    type Line = (u8, u8, Option<u8>, Option<u8>);

    /// Logged pairs; the last three with an empty side (the last, both empty, is plain
    /// HTTP as absent fields are).
    const PAIRS: [(&str, &str); 7] = [
        ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
        ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
        ("TLSv1", "ECDHE-RSA-AES256-SHA"),
        ("TLSv1.2", "AES128-SHA"),
        ("", "AES128-SHA"),
        ("TLSv1.2", ""),
        ("", ""),
    ];

    /// Additions owed and settled (a few at a time, and many at once; places of up to
    /// three bytes, so every pass of the radix sort runs) leave every entry's tallies
    /// as the same additions made at once do: the same counts, cases in the same order.
    #[test]
    fn owed_additions_land_as_additions_made_at_once() {
        let mut at_once = WhatifAgg::new();
        for i in 0..70_000u32 {
            let addr = format!("10.{}.{}.{}", i >> 16, (i >> 8) & 0xff, i & 0xff);
            at_once.count(addr.as_bytes(), b"agent", i % 3, 1);
        }
        let mut owed = at_once.clone();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for k in 0..60_000 {
            let r = next();
            // Half the additions to a few entries (many cases each, spilled to the
            // heap), half anywhere.
            let place = if k % 2 == 0 {
                (r % 40) as usize
            } else {
                (r % 70_000) as usize
            };
            let tallies: Tallies = smallvec::smallvec![((r >> 20) as u32 % 9, r >> 40)];
            if let Some(e) = at_once.clients.value_at_mut(place) {
                add_tallies(&mut e.tallies, tallies.clone());
            }
            if k < 30_000 {
                for (case, n) in tallies {
                    owed.owe(place, case, n);
                }
            } else {
                let place = u32::try_from(place).unwrap();
                owed.owed
                    .extend(tallies.into_iter().map(|(c, n)| (place, c, n)));
            }
        }
        assert!(owed.owed.len() > 20_000, "the second half is owed at once");
        owed.settle();
        assert!(owed.owed.is_empty());
        for (a, b) in at_once.clients.values().zip(owed.clients.values()) {
            assert_eq!(a.tallies, b.tallies);
        }
        assert_eq!(at_once.clients.len(), owed.clients.len());
    }

    /// Count a line by key (`ids` none), by a worker's numbers, or by its numbers with
    /// the pair numbered by a `TlsAgg` counting the same lines (as `report` does).
    fn add_line(
        agg: &mut WhatifAgg,
        ids: Option<(&mut ClientIds, Option<&mut crate::tls::TlsAgg>)>,
        &(a, u, pair, offer): &Line,
    ) {
        // Some addresses longer than a numbering holds inline (names from
        // `HostnameLookups On`), some of 16 or 17 bytes (just in, just out), IPv4
        // addresses as they are written and with a leading zero (another client).
        let addr = if a % 7 == 0 {
            format!("host-{a}.dynamic.customers.of-a-long-isp-name.example")
        } else if a % 5 == 2 {
            format!("10.{}.0.{a}", a % 3)
        } else if a % 5 == 4 {
            // The address of client `a - 2` with a leading zero: not that client.
            let b = a - 2;
            format!("10.{}.0.0{b}", b % 3)
        } else if a % 3 == 1 {
            format!("2001:db8:ffff::{a:x}")
        } else {
            format!("2001:db8::{a:x}")
        };
        let ua = format!("agent {} {}", u, "x".repeat(usize::from(u % 5) * 20));
        let (p, c) = match pair.map(|i| PAIRS[usize::from(i) % PAIRS.len()]) {
            Some((p, c)) => (Some(p.as_bytes()), Some(c.as_bytes())),
            None => (None, None),
        };
        let offer = offer.map(|o| OfferFields {
            ciphers: Some(if o % 2 == 0 {
                b"ECDHE-RSA-AES128-GCM-SHA256:AES128-SHA" as &[u8]
            } else {
                b"AES128-SHA"
            }),
            groups: Some(b"X25519"),
            versions: None,
            version: None,
        });
        let ua = (u != 0).then_some(ua.as_bytes());
        let addr = Some(addr.as_bytes());
        match ids {
            Some((ids, Some(tls))) => {
                let pair = tls.add_pair(addr, p, c);
                agg.add_numbered_as(ids, (addr, plain_agent(ua)), pair, (p, c), offer.as_ref());
            }
            Some((ids, None)) => {
                agg.add_numbered(ids, addr, plain_agent(ua), (p, c), offer.as_ref())
            }
            None => agg.add_offered(addr, ua, p, c, offer.as_ref()),
        }
    }

    /// A worker numbers User-Agents by their logged bytes: two spellings of one text
    /// (Apache's `\xc3\xa9` and the raw bytes, as two servers write them) are two
    /// numbers, one client once merged, with the report of the unescaped texts; the
    /// text is asked for once per spelling.
    #[test]
    fn two_spellings_of_one_user_agent_are_one_client() {
        let text: &[u8] = b"caf\xc3\xa9/1.0";
        let spellings: [&[u8]; 2] = [b"caf\\xc3\\xa9/1.0", text];
        let pair = (Some(b"TLSv1.2" as &[u8]), Some(b"AES128-SHA" as &[u8]));
        let mut keyed = WhatifAgg::new();
        let mut ids = ClientIds::new(1 << 20);
        let mut numbered = WhatifAgg::new();
        let mut asked = 0;
        for block in 0..3 {
            let mut part = WhatifAgg::new();
            for (i, logged) in spellings.iter().enumerate() {
                let addr: &[u8] = if (block + i) % 2 == 0 {
                    b"192.0.2.1"
                } else {
                    b"2001:db8::1"
                };
                keyed.add(Some(addr), Some(text), pair.0, pair.1);
                let ua = LoggedAgent {
                    logged: Some(*logged),
                    text: || {
                        asked += 1;
                        Some(Cow::Borrowed(text))
                    },
                };
                part.add_numbered(&mut ids, Some(addr), ua, pair, None);
            }
            part.seal_numbered(&mut ids);
            numbered.merge(part);
        }
        assert_eq!(asked, 2, "once per spelling");
        let (n, k) = (
            report(&numbered, ClientKey::AddrUa),
            report(&keyed, ClientKey::AddrUa),
        );
        assert_eq!(n, k);
        assert_eq!(n.clients.total, 2, "two addresses, one User-Agent");
    }

    /// A client's later requests of the case its entry started with are kept by the
    /// merge's mirror, not owed (then nothing may be owed at all): a report judged
    /// before the numberings are dropped counts them, as does one after, each kept
    /// request is added once when they are added halfway too, and a client's cases
    /// stay in the order first met when another case comes between.
    #[test]
    fn kept_requests_count_before_and_after_the_numberings_are_dropped() {
        // Clients 0..4 with one User-Agent; client 3 also uses a second pair, between
        // two requests of its first.
        let lines: Vec<Line> = (0..60u8)
            .map(|i| (i % 4, 1, Some(if i == 23 { 2 } else { i % 4 }), None))
            .collect();
        let mut keyed = WhatifAgg::new();
        let mut ids = ClientIds::new(1 << 20);
        let mut numbered = WhatifAgg::new();
        for (i, block) in lines.chunks(5).enumerate() {
            if i == 6 {
                // Halfway, everything added (what was kept is then forgotten).
                numbered.settle_all();
            }
            let mut part = WhatifAgg::new();
            block.iter().for_each(|l| add_line(&mut part, None, l));
            keyed.merge(part);
            let mut part = WhatifAgg::new();
            block
                .iter()
                .for_each(|l| add_line(&mut part, Some((&mut ids, None)), l));
            part.seal_numbered(&mut ids);
            numbered.merge(part);
        }
        numbered.settle();
        assert!(numbered.owed.is_empty());
        assert!(numbered.mirrors.iter().any(Mirror::keeps), "requests kept");
        for key in [ClientKey::AddrUa, ClientKey::Addr] {
            assert_eq!(report(&numbered, key), report(&keyed, key));
        }
        numbered.drop_numberings();
        for key in [ClientKey::AddrUa, ClientKey::Addr] {
            assert_eq!(report(&numbered, key), report(&keyed, key));
        }
        let tallies = |a: &WhatifAgg| -> Vec<Vec<u64>> {
            a.clients
                .values()
                .map(|e| e.tallies.iter().map(|&(_, n)| n).collect())
                .collect()
        };
        assert_eq!(tallies(&numbered), tallies(&keyed));
        assert_eq!(
            tallies(&numbered)[3],
            vec![14, 1],
            "{:?}",
            tallies(&numbered)
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

        /// Blocks counted by workers' numberings merge into what the same blocks
        /// counted by key give: any number of workers taking blocks in turn, blocks
        /// built ahead of the merge (so that names arrive before they are
        /// acknowledged), dropped blocks (their names come again with the next),
        /// numberings that start over, memory limits that sketch some clients, and
        /// pairs numbered by a `TlsAgg` counting the same lines (`report`).
        #[test]
        fn numbered_blocks_merge_as_keyed_blocks(
            lines in proptest::collection::vec(
                (0u8..40, 0u8..6, proptest::option::of(0u8..7), proptest::option::of(0u8..2)),
                1..400,
            ),
            via_tls in proptest::bool::ANY,
            block in 1usize..60,
            workers in 1usize..4,
            ahead in 0usize..4,
            dropped in proptest::collection::vec(proptest::bool::weighted(0.15), 60),
            numbering in proptest::sample::select(vec![0usize, 300, 1 << 20]),
            limit in proptest::sample::select(vec![2_000usize, 6_000, usize::MAX]),
        ) {
            let blocks: Vec<&[Line]> = lines.chunks(block).collect();
            let keep = |i: usize| !dropped.get(i % dropped.len()).copied().unwrap_or(false);
            let mut keyed = WhatifAgg::with_memory_limit(limit);
            for (i, b) in blocks.iter().enumerate() {
                let mut part = WhatifAgg::new();
                b.iter().for_each(|l| add_line(&mut part, None, l));
                if keep(i) {
                    keyed.merge(part);
                }
            }
            // Block i is worker i % workers's; a worker builds its blocks in order, up
            // to `ahead` blocks before the merge reaches them.
            let mut ids: Vec<ClientIds> = (0..workers).map(|_| ClientIds::new(numbering)).collect();
            let mut built: Vec<Option<WhatifAgg>> = (0..blocks.len()).map(|_| None).collect();
            let mut numbered = WhatifAgg::with_memory_limit(limit);
            let mut next_build = 0;
            for i in 0..blocks.len() {
                while next_build < blocks.len() && next_build <= i + ahead {
                    let mut part = WhatifAgg::new();
                    let mut tls = crate::tls::TlsAgg::new(crate::tls::CountMode::Requests);
                    let w = &mut ids[next_build % workers];
                    for l in blocks[next_build] {
                        add_line(&mut part, Some((&mut *w, via_tls.then_some(&mut tls))), l);
                    }
                    part.seal_numbered(w);
                    built[next_build] = Some(part);
                    next_build += 1;
                }
                if let Some(part) = built[i].take() {
                    if keep(i) {
                        numbered.merge(part);
                    }
                }
            }
            drop(ids);
            // Judged before the numberings are dropped (what is owed may not be
            // settled yet) and after.
            for key in [ClientKey::AddrUa, ClientKey::Addr] {
                proptest::prop_assert_eq!(report(&numbered, key), report(&keyed, key));
            }
            numbered.drop_numberings();
            for key in [ClientKey::AddrUa, ClientKey::Addr] {
                proptest::prop_assert_eq!(report(&numbered, key), report(&keyed, key));
            }
        }
    }
}
