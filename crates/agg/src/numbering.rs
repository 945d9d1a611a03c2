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

use std::hash::Hasher;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use hashbrown::HashTable;

use crate::arena::key_hash;
use crate::whatif::Tallies;

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
/// address itself when short (every IPv4 address, and short IPv6 ones) and the
/// client's mark for the block being counted, so that finding and counting it reads
/// one cache line. The names the merging side needs are kept apart ([`ClientIds`]'s
/// `names`), read only when a block is sealed.
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
    /// The block that last counted it, and its place in that block's `entries`.
    block: u32,
    entry: u32,
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
    /// The User-Agents: a table of their slots, and per number where its text is in
    /// `agent_text` and its [`key_hash`].
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
    /// The block being counted (from 1; each slot holds the block that last counted
    /// its client), and what it counted.
    block: u32,
    entries: Vec<(u32, Tallies)>,
    /// Lines counted, not yet looked up, and the bytes they name.
    pending: Vec<Pending>,
    pending_bytes: Vec<u8>,
}

/// What a block counted, by number, with the names the merging side may lack.
#[derive(Debug, Clone)]
pub(crate) struct Numbered {
    pub(crate) tag: Arc<Tag>,
    /// (client number, tallies), in the order the block first showed each client.
    pub(crate) entries: Vec<(u32, Tallies)>,
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
/// client hash, and where its address is in `pending_bytes`.
#[derive(Debug, Clone, Copy)]
struct Pending {
    agent: u32,
    hash: u64,
    case: u32,
    n: u64,
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
            block: 1,
            entries: Vec::new(),
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
    /// or an offset or a number, here or in the names sent, might not fit in 32 bits).
    fn next_block(&mut self) {
        let used = self.used();
        let full = used > self.limit
            || used > (u32::MAX / 2) as usize
            || self.names.len() > (u32::MAX / 2) as usize;
        if full {
            *self = ClientIds::new(self.limit);
        }
        self.entries.clear();
        self.block = self.block.wrapping_add(1);
        if self.block == 0 {
            // The marks of 2^32 blocks ago would look current: clear them.
            self.table.iter_mut().for_each(|s| s.block = 0);
            self.block = 1;
        }
    }

    /// The number of User-Agent `ua` (whose [`key_hash`] is `ua_hash`), numbering it
    /// if new.
    fn agent(&mut self, ua_hash: u64, ua: &[u8]) -> u32 {
        let text = &self.agent_text;
        let found = self
            .agent_table
            .find(ua_hash, |a| a.hash == ua_hash && slice(text, a.at) == ua);
        if let Some(a) = found {
            return a.number;
        }
        let number = u32::try_from(self.agents.len()).unwrap_or(u32::MAX);
        let at = push(&mut self.agent_text, ua);
        self.agents.push((at, ua_hash));
        let slot = AgentSlot {
            hash: ua_hash,
            at,
            number,
        };
        self.agent_table.insert_unique(ua_hash, slot, |a| a.hash);
        number
    }

    /// Count `n` requests of `case` for (`addr`, `ua`) in the current block.
    ///
    /// The User-Agent is numbered at once (there are few: its slot and text are the
    /// only lines read); the clients are looked up and tallied [`BATCH`] at a time. A client's lookup
    /// misses the cache (its table slot); with a line's parsing between two lookups
    /// the misses came one at a time, in a tight loop they overlap.
    pub(crate) fn count(&mut self, addr: &[u8], ua: &[u8], case: u32, n: u64) {
        let agent = self.agent(key_hash(ua), ua);
        let hash = client_hash(agent, addr);
        let addr = push(&mut self.pending_bytes, addr);
        self.pending.push(Pending {
            agent,
            hash,
            case,
            n,
            addr,
        });
        if self.pending.len() >= BATCH {
            self.flush();
        }
    }

    /// Look up and tally the pending lines, in order.
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

    /// Add a pending line's requests to its client (`addr`, numbered if new) in the
    /// current block.
    fn tally(&mut self, p: &Pending, addr: &[u8]) {
        let (hash, agent, block) = (p.hash, p.agent, self.block);
        let short = crate::arena::inline(addr);
        let len = u32::try_from(addr.len()).unwrap_or(u32::MAX);
        let name_bytes = &self.name_bytes;
        let found = self.table.find_mut(hash, |s| {
            s.hash == hash
                && s.agent == agent
                && s.len == len
                && match short {
                    Some(k) => s.key == k,
                    None => long_addr(name_bytes, s) == addr,
                }
        });
        let slot = match found {
            Some(slot) => slot,
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
                    block: 0,
                    entry: 0,
                };
                self.table.insert_unique(hash, slot, |s| s.hash).into_mut()
            }
        };
        if slot.block == block {
            if let Some((_, tallies)) = self.entries.get_mut(slot.entry as usize) {
                crate::whatif::tally(tallies, p.case, p.n);
            }
        } else {
            slot.block = block;
            slot.entry = self.entries.len() as u32;
            self.entries
                .push((slot.id, smallvec::smallvec![(p.case, p.n)]));
        }
    }

    /// What the block counted, with the names the merging side has not acknowledged;
    /// the next count is the next block's.
    pub(crate) fn seal(&mut self) -> Numbered {
        self.flush();
        let first_client = self.tag.clients.load(Ordering::Acquire);
        let first_agent = self.tag.agents.load(Ordering::Acquire);
        let mut n = Numbered {
            tag: Arc::clone(&self.tag),
            entries: std::mem::take(&mut self.entries),
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
        self.next_block();
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
    /// Per client: its User-Agent, where its address is in `bytes`, where it stands.
    clients: Vec<(u32, (u32, u32), Standing)>,
    bytes: Vec<u8>,
}

impl Mirror {
    pub(crate) fn new(tag: Arc<Tag>) -> Mirror {
        Mirror {
            tag,
            agents: Vec::new(),
            clients: Vec::new(),
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
            self.clients.push((agent, at, Standing::New));
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
        self.clients.get(i as usize).map(|c| c.2)
    }

    pub(crate) fn stand(&mut self, i: u32, s: Standing) {
        if let Some(c) = self.clients.get_mut(i as usize) {
            c.2 = s;
        }
    }

    /// Client `i`'s address, User-Agent number, User-Agent, its hash and its place in
    /// the aggregate when found before.
    pub(crate) fn name(&self, i: u32) -> (&[u8], u32, &[u8], u64, Option<usize>) {
        let Some(&(agent, addr, _)) = self.clients.get(i as usize) else {
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
