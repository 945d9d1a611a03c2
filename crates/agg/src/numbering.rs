//! A worker's numbering of the clients (address, User-Agent) it has seen, kept from
//! block to block, so that a block's [`crate::whatif::WhatifAgg`] partial names its
//! clients by number and the merge finds each one by that number instead of hashing
//! and comparing its key in the run's table (issue 12: that lookup, a cache miss per
//! distinct client of every block, was a quarter of `whatif`'s CPU time).
//!
//! The numbers are the worker's: a partial carries the names (address, User-Agent) of
//! the numbers the merging side may not know yet, from the last number that side
//! acknowledged ([`Tag`]). A partial that is never merged (its input failed before it,
//! or the run stopped) loses nothing: the next one carries its names again. A worker
//! whose names outgrow their bytes starts a new numbering under a new tag.

use std::borrow::Cow;
use std::hash::Hasher;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use hashbrown::HashTable;

use crate::arena::key_hash;

/// The identity of one numbering, shared by the worker, its partials and the merging
/// side, with how many names the merging side holds.
#[derive(Debug, Default)]
pub struct Tag {
    /// Client numbers below this have their names on the merging side.
    clients: AtomicU32,
    /// User-Agent numbers below this have theirs there.
    agents: AtomicU32,
}

/// One numbered client, on the worker's side: its table slot, which holds the
/// address itself when short (every IPv4 address, and short IPv6 ones), so that
/// finding it reads one cache line, and which is not written once made (a block's
/// counts are a list of numbers, [`Numbered`]). The names the merging side needs are
/// kept apart ([`ClientIds`]'s `names`), read only when a block is sealed.
#[derive(Debug, Clone, Copy)]
struct Slot {
    hash: u64,
    /// The address as [`crate::arena::inline`] packs it; longer: where it starts in
    /// `name_bytes`, in the first word.
    key: [u64; 2],
    agent: u32,
    len: u32,
    /// The client's number.
    id: u32,
}

/// One numbered User-Agent in the worker's table: its hash and where its text is,
/// so that finding it reads the slot and the text (a slot holding only the number
/// made each line's lookup read the number's record too: a third cache miss, 4 % of
/// `whatif`'s time).
#[derive(Debug, Clone, Copy)]
struct AgentSlot {
    hash: u64,
    at: (u32, u32),
    number: u32,
}

/// The bytes a numbered client is taken to cost besides its address: its table slot
/// with growth slack, and where its name is.
const CLIENT_BYTES: usize = 80;
/// The bytes a numbered User-Agent is taken to cost besides its text.
const AGENT_BYTES: usize = 64;

/// A worker's numbering (see the module's documentation).
#[derive(Debug)]
pub struct ClientIds {
    tag: Arc<Tag>,
    /// The User-Agents: a table of their slots (by the logged bytes), and per number
    /// where its unescaped text is in `agent_text` (the logged bytes' place, when they
    /// hold no escape) and that text's [`key_hash`].
    agent_table: HashTable<AgentSlot>,
    agents: Vec<((u32, u32), u64)>,
    agent_text: Vec<u8>,
    /// Per client number: its User-Agent's number and where its address is in
    /// `name_bytes` (read when a block is sealed, and to compare a long address).
    names: Vec<(u32, (u32, u32))>,
    name_bytes: Vec<u8>,
    table: HashTable<Slot>,
    /// Start over beyond this many bytes.
    limit: usize,
    /// What the block being counted counted: (client number, case) per request, in
    /// the order of its lines.
    counted: Vec<(u32, u32)>,
    /// Lines counted, not yet looked up, and the bytes they name.
    pending: Vec<Pending>,
    pending_bytes: Vec<u8>,
}

/// What a block counted, by number, with the names the merging side may lack.
///
/// Its requests are listed one by one, (client number, case) in the order of the
/// block's lines, not summed per client: the worker then only appends eight bytes a
/// line, where finding the client's sum in the block wrote to the client's table slot
/// and to a 32-byte record made for the block (issue 12: with the records' growth,
/// half of the cache misses the numbering added to a line; a client shows 1.25 times
/// in a block of the bench log, so the sums saved the merge little).
#[derive(Debug, Clone)]
pub(crate) struct Numbered {
    pub(crate) tag: Arc<Tag>,
    /// (client number, case) per request, in the order of the block's lines.
    pub(crate) counted: Vec<(u32, u32)>,
    /// The User-Agents from number `first_agent` on: where each is in `bytes`, and its
    /// [`key_hash`].
    first_agent: u32,
    agents: Vec<((u32, u32), u64)>,
    /// The clients from number `first_client` on: User-Agent number, and where the
    /// address is in `bytes`.
    first_client: u32,
    clients: Vec<(u32, (u32, u32))>,
    bytes: Vec<u8>,
}

/// The hash a client is filed under: its User-Agent's number and its address.
fn client_hash(agent: u32, addr: &[u8]) -> u64 {
    let mut h = rustc_hash::FxHasher::default();
    h.write_u32(agent);
    h.write(addr);
    h.finish()
}

/// How many counted lines are looked up together ([`ClientIds::count`]).
const BATCH: usize = 32;

/// A counted line whose client is not looked up yet: its User-Agent's number, its
/// client hash, its case, and where its address is in `pending_bytes`.
#[derive(Debug, Clone, Copy)]
struct Pending {
    agent: u32,
    hash: u64,
    case: u32,
    addr: (u32, u32),
}

impl ClientIds {
    /// An empty numbering that starts over when its names and records pass about
    /// `limit` bytes.
    pub fn new(limit: usize) -> ClientIds {
        ClientIds {
            tag: Arc::default(),
            agent_table: HashTable::new(),
            agents: Vec::new(),
            agent_text: Vec::new(),
            names: Vec::new(),
            name_bytes: Vec::new(),
            table: HashTable::new(),
            limit,
            counted: Vec::new(),
            pending: Vec::new(),
            pending_bytes: Vec::new(),
        }
    }

    /// The bytes held, as the limit counts them.
    fn used(&self) -> usize {
        self.name_bytes.len()
            + self.agent_text.len()
            + self.names.len() * CLIENT_BYTES
            + self.agents.len() * AGENT_BYTES
    }

    /// Count the next block (and start over, under a new tag, when the limit is passed
    /// or an offset or a number, here or in the names sent, might not fit in 32 bits),
    /// with room for `lines` requests (the last block's: no growing on the way).
    fn next_block(&mut self, lines: usize) {
        let used = self.used();
        let full = used > self.limit
            || used > (u32::MAX / 2) as usize
            || self.names.len() > (u32::MAX / 2) as usize;
        if full {
            *self = ClientIds::new(self.limit);
        }
        self.counted = Vec::with_capacity(lines);
    }

    /// The number of User-Agent `ua` as the line holds it (escaped as the log
    /// escapes; its [`key_hash`] is `ua_hash`), numbering it if new. `text` is what it
    /// stands for, asked for only then: the names sent to the merging side are the
    /// unescaped texts. Numbering by the logged bytes spares every line the search
    /// for an escape (issue 12: 3 % of `whatif`'s instructions); two spellings of one
    /// text get two numbers, which the merging side finds to be one client, as it
    /// does with another worker's numbers.
    fn agent<'t>(&mut self, ua_hash: u64, ua: &[u8], text: impl FnOnce() -> Cow<'t, [u8]>) -> u32 {
        let logged = &self.agent_text;
        let found = self
            .agent_table
            .find(ua_hash, |a| a.hash == ua_hash && slice(logged, a.at) == ua);
        if let Some(a) = found {
            return a.number;
        }
        let number = u32::try_from(self.agents.len()).unwrap_or(u32::MAX);
        let at = push(&mut self.agent_text, ua);
        let text = text();
        let name = if *text == *ua {
            (at, ua_hash)
        } else {
            (push(&mut self.agent_text, &text), key_hash(&text))
        };
        self.agents.push(name);
        let slot = AgentSlot {
            hash: ua_hash,
            at,
            number,
        };
        self.agent_table.insert_unique(ua_hash, slot, |a| a.hash);
        number
    }

    /// Count a request of `case` for (`addr`, `ua`) in the current block; `ua` as the
    /// line holds it, `text` what it stands for ([`ClientIds::agent`]).
    ///
    /// The User-Agent is numbered at once (there are few: its slot and text are the
    /// only lines read); the clients are looked up [`BATCH`] at a time. A client's
    /// lookup misses the cache (its table slot); with a line's parsing between two
    /// lookups the misses came one at a time, in a tight loop they overlap.
    pub(crate) fn count<'t>(
        &mut self,
        addr: &[u8],
        ua: &[u8],
        text: impl FnOnce() -> Cow<'t, [u8]>,
        case: u32,
    ) {
        let agent = self.agent(key_hash(ua), ua, text);
        let hash = client_hash(agent, addr);
        let addr = push(&mut self.pending_bytes, addr);
        self.pending.push(Pending {
            agent,
            hash,
            case,
            addr,
        });
        if self.pending.len() >= BATCH {
            self.flush();
        }
    }

    /// Look up the pending lines' clients and list their requests, in order.
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        let bytes = std::mem::take(&mut self.pending_bytes);
        for p in &pending {
            self.tally(p, slice(&bytes, p.addr));
        }
        self.pending = pending;
        self.pending.clear();
        self.pending_bytes = bytes;
        self.pending_bytes.clear();
    }

    /// List a pending line's request under its client (`addr`, numbered if new).
    fn tally(&mut self, p: &Pending, addr: &[u8]) {
        let (hash, agent) = (p.hash, p.agent);
        let short = crate::arena::inline(addr);
        let len = u32::try_from(addr.len()).unwrap_or(u32::MAX);
        let name_bytes = &self.name_bytes;
        let found = self.table.find(hash, |s| {
            s.hash == hash
                && s.agent == agent
                && s.len == len
                && match short {
                    Some(k) => s.key == k,
                    None => long_addr(name_bytes, s) == addr,
                }
        });
        let id = match found {
            Some(slot) => slot.id,
            None => {
                let id = u32::try_from(self.names.len()).unwrap_or(u32::MAX);
                let at = push(&mut self.name_bytes, addr);
                self.names.push((agent, at));
                let slot = Slot {
                    hash,
                    key: short.unwrap_or([u64::from(at.0), 0]),
                    agent,
                    len,
                    id,
                };
                self.table.insert_unique(hash, slot, |s| s.hash);
                id
            }
        };
        self.counted.push((id, p.case));
    }

    /// What the block counted, with the names the merging side has not acknowledged;
    /// the next count is the next block's.
    pub(crate) fn seal(&mut self) -> Numbered {
        self.flush();
        let first_client = self.tag.clients.load(Ordering::Acquire);
        let first_agent = self.tag.agents.load(Ordering::Acquire);
        let lines = self.counted.len();
        let mut n = Numbered {
            tag: Arc::clone(&self.tag),
            counted: std::mem::take(&mut self.counted),
            first_agent,
            agents: Vec::new(),
            first_client,
            clients: Vec::new(),
            bytes: Vec::new(),
        };
        for &(at, hash) in self.agents.iter().skip(first_agent as usize) {
            let at = push(&mut n.bytes, slice(&self.agent_text, at));
            n.agents.push((at, hash));
        }
        for &(agent, at) in self.names.iter().skip(first_client as usize) {
            let at = push(&mut n.bytes, slice(&self.name_bytes, at));
            n.clients.push((agent, at));
        }
        self.next_block(lines);
        n
    }
}

/// The address of a slot that does not hold it inline, from `name_bytes`.
fn long_addr<'a>(name_bytes: &'a [u8], s: &Slot) -> &'a [u8] {
    let at = usize::try_from(s.key[0]).unwrap_or(usize::MAX);
    name_bytes
        .get(at..at.saturating_add(s.len as usize))
        .unwrap_or_default()
}

/// The bytes of `buf` at `at` (empty when out of range).
fn slice(buf: &[u8], at: (u32, u32)) -> &[u8] {
    buf.get(at.0 as usize..at.1 as usize).unwrap_or_default()
}

/// Append `bytes` to `buf`; where they are.
fn push(buf: &mut Vec<u8>, bytes: &[u8]) -> (u32, u32) {
    let at = buf.len() as u32;
    buf.extend_from_slice(bytes);
    (at, buf.len() as u32)
}

/// Where a numbered client stands in the run's aggregate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Standing {
    /// Not met yet in a merged block.
    New,
    /// The exact entry at this place.
    Exact(usize),
    /// Counted in the sketch (the memory limit was reached before it came).
    Sketched,
}

/// The merging side's copy of one numbering's names, and where each client stands.
#[derive(Debug, Clone)]
pub(crate) struct Mirror {
    pub(crate) tag: Arc<Tag>,
    /// Per User-Agent: where it is in `bytes`, its hash, and its place in the
    /// aggregate's User-Agents once found.
    agents: Vec<((u32, u32), u64, Option<usize>)>,
    /// Per client: its User-Agent and where its address is in `bytes`.
    clients: Vec<(u32, (u32, u32))>,
    /// Per client, what every request merged reads: kept apart from the names and
    /// small (12 bytes; 600 KB for the bench log's 50 000 clients), one cache line.
    states: Vec<ClientState>,
    /// Whether any request is kept.
    keeping: bool,
    bytes: Vec<u8>,
}

/// A numbered client on the merging side.
#[derive(Debug, Clone, Copy)]
struct ClientState {
    /// Where it stands, in four bytes ([`Mirror::standing`]).
    standing: u32,
    /// Standing exactly: the case its entry started with ([`NO_CASE`]: none kept) and
    /// its requests of that case merged here, not added to the entry yet
    /// ([`Mirror::keep`]).
    first: u32,
    kept: u32,
}

/// No case kept for a client ([`Mirror::keep`]).
const NO_CASE: u32 = u32::MAX;

/// [`Standing`] in four bytes: `New`, `Sketched`, or `Exact(i)` as `i + 2` (an exact
/// place that does not fit is kept as `New`: found again by its name each time).
const STANDS_NEW: u32 = 0;
const STANDS_SKETCHED: u32 = 1;

fn encode(s: Standing) -> u32 {
    match s {
        Standing::New => STANDS_NEW,
        Standing::Sketched => STANDS_SKETCHED,
        Standing::Exact(i) => u32::try_from(i)
            .ok()
            .and_then(|i| i.checked_add(2))
            .unwrap_or(STANDS_NEW),
    }
}

fn decode(s: u32) -> Standing {
    match s {
        STANDS_NEW => Standing::New,
        STANDS_SKETCHED => Standing::Sketched,
        i => Standing::Exact((i - 2) as usize),
    }
}

impl Mirror {
    pub(crate) fn new(tag: Arc<Tag>) -> Mirror {
        Mirror {
            tag,
            agents: Vec::new(),
            clients: Vec::new(),
            states: Vec::new(),
            keeping: false,
            bytes: Vec::new(),
        }
    }

    /// Take the names of `n` this side does not hold yet.
    pub(crate) fn learn(&mut self, n: &Numbered) {
        let skip = self.agents.len().saturating_sub(n.first_agent as usize);
        for &(at, hash) in n.agents.iter().skip(skip) {
            let at = push(&mut self.bytes, slice(&n.bytes, at));
            self.agents.push((at, hash, None));
        }
        let skip = self.clients.len().saturating_sub(n.first_client as usize);
        for &(agent, at) in n.clients.iter().skip(skip) {
            let at = push(&mut self.bytes, slice(&n.bytes, at));
            self.clients.push((agent, at));
            self.states.push(ClientState {
                standing: STANDS_NEW,
                first: NO_CASE,
                kept: 0,
            });
        }
        debug_assert!(n.first_client as usize <= self.clients.len());
    }

    /// Tell the worker which names this side now holds.
    pub(crate) fn acknowledge(&self) {
        let clients = u32::try_from(self.clients.len()).unwrap_or(u32::MAX);
        let agents = u32::try_from(self.agents.len()).unwrap_or(u32::MAX);
        self.tag.clients.fetch_max(clients, Ordering::Release);
        self.tag.agents.fetch_max(agents, Ordering::Release);
    }

    /// Where client `i` stands (`None`: a number this side has no name for).
    pub(crate) fn standing(&self, i: u32) -> Option<Standing> {
        self.states.get(i as usize).map(|s| decode(s.standing))
    }

    pub(crate) fn stand(&mut self, i: u32, s: Standing) {
        if let Some(c) = self.states.get_mut(i as usize) {
            c.standing = encode(s);
        }
    }

    /// Client `i`'s entry started with `case`: its later requests of that case may be
    /// kept here ([`Mirror::keep`]).
    pub(crate) fn first_case(&mut self, i: u32, case: u32) {
        if let Some(c) = self.states.get_mut(i as usize) {
            c.first = case;
        }
    }

    /// Keep a request of `case` of client `i` (standing exactly), to be added to its
    /// entry later ([`Mirror::pay`]), when it is of the case the entry started with:
    /// most of a client's requests are, and then one merged request is an increment in
    /// the client's [`ClientState`] instead of an addition owed to the aggregate's
    /// table (issue 12). `false`: not kept, owe it.
    pub(crate) fn keep(&mut self, i: u32, case: u32) -> bool {
        let Some(c) = self.states.get_mut(i as usize) else {
            return false;
        };
        if c.first != case || c.kept == u32::MAX {
            return false;
        }
        c.kept += 1;
        self.keeping = true;
        true
    }

    /// Whether requests are kept ([`Mirror::keep`]).
    pub(crate) fn keeps(&self) -> bool {
        self.keeping
    }

    /// Hand over the kept requests, as (entry's place, case, requests), and forget
    /// them.
    pub(crate) fn pay(&mut self, mut add: impl FnMut(usize, u32, u64)) {
        if !self.keeping {
            return;
        }
        for c in &mut self.states {
            if c.kept == 0 {
                continue;
            }
            if let Standing::Exact(place) = decode(c.standing) {
                add(place, c.first, u64::from(c.kept));
            }
            c.kept = 0;
        }
        self.keeping = false;
    }

    /// Client `i`'s address, User-Agent number, User-Agent, its hash and its place in
    /// the aggregate when found before.
    pub(crate) fn name(&self, i: u32) -> (&[u8], u32, &[u8], u64, Option<usize>) {
        let Some(&(agent, addr)) = self.clients.get(i as usize) else {
            return (b"", u32::MAX, b"", 0, None);
        };
        let (ua, hash, place) = self
            .agents
            .get(agent as usize)
            .map_or((b"" as &[u8], 0, None), |&(at, h, p)| {
                (slice(&self.bytes, at), h, p)
            });
        (slice(&self.bytes, addr), agent, ua, hash, place)
    }

    /// Remember where User-Agent `agent` is in the aggregate.
    pub(crate) fn place_agent(&mut self, agent: u32, place: usize) {
        if let Some(a) = self.agents.get_mut(agent as usize) {
            a.2 = Some(place);
        }
    }

    /// Whether anyone else still holds the tag (a worker, or a partial on its way).
    pub(crate) fn live(&self) -> bool {
        Arc::strong_count(&self.tag) > 1
    }
}
