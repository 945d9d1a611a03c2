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

use crate::arena::{key_hash, ArenaMap};
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

/// One numbered client, on the worker's side: its address inline when short (every
/// IP address is), so that finding it reads one cache line, not two.
#[derive(Debug, Clone, Copy)]
struct Named {
    hash: u64,
    agent: u32,
    /// The address's length; longer than [`INLINE`]: it is in `spill`, from the
    /// offset in the first four bytes of `inline`.
    len: u32,
    inline: [u8; INLINE],
}

/// The longest address held inline (an IPv6 address is at most 39 characters).
const INLINE: usize = 40;

impl Named {
    fn new(hash: u64, agent: u32, addr: &[u8], spill: &mut Vec<u8>) -> Named {
        let mut inline = [0u8; INLINE];
        match inline.get_mut(..addr.len()) {
            Some(slot) => slot.copy_from_slice(addr),
            None => {
                let at = u32::try_from(spill.len()).unwrap_or(u32::MAX);
                inline[..4].copy_from_slice(&at.to_le_bytes());
                spill.extend_from_slice(addr);
            }
        }
        Named {
            hash,
            agent,
            len: u32::try_from(addr.len()).unwrap_or(u32::MAX),
            inline,
        }
    }

    fn addr<'a>(&'a self, spill: &'a [u8]) -> &'a [u8] {
        let len = self.len as usize;
        if len <= INLINE {
            return self.inline.get(..len).unwrap_or_default();
        }
        let mut at = [0u8; 4];
        at.copy_from_slice(&self.inline[..4]);
        let at = u32::from_le_bytes(at) as usize;
        spill.get(at..at + len).unwrap_or_default()
    }
}

/// The bytes a numbered client is taken to cost besides a long address: its record,
/// its table slot with growth slack, and its two per-block marks.
const CLIENT_BYTES: usize = 80;
/// The bytes a numbered User-Agent is taken to cost besides its text.
const AGENT_BYTES: usize = 64;

/// A worker's numbering (see the module's documentation).
#[derive(Debug)]
pub struct ClientIds {
    tag: Arc<Tag>,
    agents: ArenaMap<()>,
    agent_bytes: usize,
    clients: Vec<Named>,
    /// The addresses too long to be held inline.
    spill: Vec<u8>,
    table: HashTable<u32>,
    /// Start over beyond this many bytes.
    limit: usize,
    /// The block being counted (from 1), and per client the block that last counted it
    /// and its place in that block's `entries`.
    block: u32,
    marks: Vec<(u32, u32)>,
    entries: Vec<(u32, Tallies)>,
    /// Lines counted, not yet looked up, and the bytes they name.
    pending: Vec<Pending>,
    pending_bytes: Vec<u8>,
    /// Per pending line, its client's number.
    ids: Vec<u32>,
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
            agents: ArenaMap::default(),
            agent_bytes: 0,
            clients: Vec::new(),
            spill: Vec::new(),
            table: HashTable::new(),
            limit,
            block: 1,
            marks: Vec::new(),
            entries: Vec::new(),
            pending: Vec::new(),
            pending_bytes: Vec::new(),
            ids: Vec::new(),
        }
    }

    /// The bytes held, as the limit counts them.
    fn used(&self) -> usize {
        self.spill.len()
            + self.agent_bytes
            + self.clients.len() * CLIENT_BYTES
            + self.agents.len() * AGENT_BYTES
    }

    /// Count the next block (and start over, under a new tag, when the limit is passed
    /// or an offset or a number, here or in the names sent, might not fit in 32 bits).
    fn next_block(&mut self) {
        let used = self.used();
        let full = used > self.limit
            || used > (u32::MAX / 2) as usize
            || self.clients.len() > (u32::MAX / 2) as usize;
        if full {
            *self = ClientIds::new(self.limit);
        }
        self.entries.clear();
        self.block = self.block.wrapping_add(1);
        if self.block == 0 {
            // The marks of 2^32 blocks ago would look current: clear them.
            self.marks.iter_mut().for_each(|m| *m = (0, 0));
            self.block = 1;
        }
    }

    /// The number of User-Agent `ua` (whose [`key_hash`] is `ua_hash`), numbering it
    /// if new.
    fn agent(&mut self, ua_hash: u64, ua: &[u8]) -> u32 {
        let a = match self.agents.find_hashed(ua_hash, ua) {
            Some(a) => a,
            None => {
                self.agent_bytes += ua.len();
                self.agents.insert_new_hashed(ua_hash, ua, ())
            }
        };
        u32::try_from(a).unwrap_or(u32::MAX)
    }

    /// The number of (`addr`, User-Agent number `agent`), whose [`client_hash`] is
    /// `hash`, numbering it if new.
    fn client(&mut self, agent: u32, hash: u64, addr: &[u8]) -> u32 {
        let (clients, spill) = (&self.clients, &self.spill);
        let found = self.table.find(hash, |&i| {
            clients
                .get(i as usize)
                .is_some_and(|c| c.hash == hash && c.agent == agent && c.addr(spill) == addr)
        });
        if let Some(&i) = found {
            return i;
        }
        let i = u32::try_from(self.clients.len()).unwrap_or(u32::MAX);
        let named = Named::new(hash, agent, addr, &mut self.spill);
        self.clients.push(named);
        self.marks.push((0, 0));
        let clients = &self.clients;
        self.table
            .insert_unique(hash, i, |&j| clients.get(j as usize).map_or(0, |c| c.hash));
        i
    }

    /// Count `n` requests of `case` for (`addr`, `ua`) in the current block.
    ///
    /// The User-Agent is numbered at once (there are few, their table stays in cache);
    /// the clients are looked up [`BATCH`] at a time, then their tallies. A client's
    /// lookup misses the cache (its table slot, its record); with a line's parsing
    /// between two lookups the misses came one at a time, in a tight loop they
    /// overlap.
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
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        for p in &pending {
            ids.push(self.client(p.agent, p.hash, slice(&bytes, p.addr)));
        }
        for (p, &i) in pending.iter().zip(ids.iter()) {
            self.tally(i, p.case, p.n);
        }
        self.ids = ids;
        self.pending = pending;
        self.pending.clear();
        self.pending_bytes = bytes;
        self.pending_bytes.clear();
    }

    /// Add `n` requests of `case` to client `i` in the current block.
    fn tally(&mut self, i: u32, case: u32, n: u64) {
        let block = self.block;
        let Some(mark) = self.marks.get_mut(i as usize) else {
            return;
        };
        if mark.0 == block {
            if let Some((_, tallies)) = self.entries.get_mut(mark.1 as usize) {
                crate::whatif::tally(tallies, case, n);
            }
        } else {
            *mark = (block, self.entries.len() as u32);
            self.entries.push((i, smallvec::smallvec![(case, n)]));
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
        for a in first_agent as usize..self.agents.len() {
            let at = push(&mut n.bytes, self.agents.key_at(a));
            n.agents.push((at, self.agents.hash_at(a)));
        }
        for c in self.clients.iter().skip(first_client as usize) {
            let at = push(&mut n.bytes, c.addr(&self.spill));
            n.clients.push((c.agent, at));
        }
        self.next_block();
        n
    }
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
