//! Interning (protocol, cipher) pairs as logged: each distinct pair gets a small index
//! once, so per-line counting is an index bump and per-pair work (verdicts, policy
//! decisions) runs once per distinct pair.

use rustc_hash::FxHashMap;

/// A (protocol, cipher) pair as logged.
pub type Pair = (Box<[u8]>, Box<[u8]>);

/// `a \0 b` into `scratch` (cleared first): the key of a pair of byte strings.
#[inline]
pub fn joined<'s>(scratch: &'s mut Vec<u8>, a: &[u8], b: &[u8]) -> &'s [u8] {
    scratch.clear();
    scratch.extend_from_slice(a);
    scratch.push(0);
    scratch.extend_from_slice(b);
    scratch.as_slice()
}

/// Distinct pairs in first-seen order.
#[derive(Debug, Clone, Default)]
pub struct PairIndex {
    index: FxHashMap<Box<[u8]>, u32>,
    pairs: Vec<Pair>,
    scratch: Vec<u8>,
}

impl PairIndex {
    /// The index of (`protocol`, `cipher`), adding the pair if new (the second value
    /// says so).
    pub fn intern(&mut self, protocol: &[u8], cipher: &[u8]) -> (u32, bool) {
        let key = joined(&mut self.scratch, protocol, cipher);
        if let Some(&i) = self.index.get(key) {
            return (i, false);
        }
        // u32::MAX stays free for callers' own markers.
        let i = u32::try_from(self.pairs.len()).unwrap_or(u32::MAX - 1);
        self.index.insert(key.into(), i);
        self.pairs.push((protocol.into(), cipher.into()));
        (i, true)
    }

    /// The pairs in index order.
    pub fn iter(&self) -> std::slice::Iter<'_, Pair> {
        self.pairs.iter()
    }

    /// How many distinct pairs.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no pair was seen.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}
