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
    /// In front of `index`, a direct-mapped cache: slot [`cache_slot`] of a pair holds
    /// its index + 1 (0: empty) when it was the last pair looked up there. A hit is
    /// checked byte for byte against the pair it names, so it is never wrong; it
    /// spares joining and hashing the pair on almost every line (issue 12: interning
    /// was 4.5 % of `tls`).
    cache: Box<Cache>,
}

const CACHE_SLOTS: usize = 64;

#[derive(Debug, Clone)]
struct Cache([u32; CACHE_SLOTS]);

impl Default for Cache {
    fn default() -> Self {
        Cache([0; CACHE_SLOTS])
    }
}

/// The cache slot of a pair: from the lengths and two bytes of the cipher (logs hold a
/// few dozen distinct pairs; most differ in length or in these bytes).
#[inline]
fn cache_slot(protocol: &[u8], cipher: &[u8]) -> usize {
    let mid = cipher.get(cipher.len() / 2).copied().unwrap_or(0);
    let last = cipher.last().copied().unwrap_or(0);
    let p = protocol.last().copied().unwrap_or(0);
    let h = cipher.len() * 29
        + protocol.len() * 7
        + usize::from(mid) * 3
        + usize::from(last) * 11
        + usize::from(p);
    h % CACHE_SLOTS
}

impl PairIndex {
    /// The index of (`protocol`, `cipher`), adding the pair if new (the second value
    /// says so).
    #[inline]
    pub fn intern(&mut self, protocol: &[u8], cipher: &[u8]) -> (u32, bool) {
        let slot = cache_slot(protocol, cipher);
        if let Some(&c) = self.cache.0.get(slot) {
            if let Some((p, q)) = c.checked_sub(1).and_then(|i| self.pairs.get(i as usize)) {
                if **q == *cipher && **p == *protocol {
                    return (c - 1, false);
                }
            }
        }
        let (i, new) = self.intern_slow(protocol, cipher);
        if let Some(c) = self.cache.0.get_mut(slot) {
            *c = i.saturating_add(1);
        }
        (i, new)
    }

    fn intern_slow(&mut self, protocol: &[u8], cipher: &[u8]) -> (u32, bool) {
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

/// A value remembered per small number (a pair's, or a caller's number for one), each
/// filled the first time it is needed: a lookup is one index, no hashing. Holds as many
/// slots as the largest number met, which numbers given in first-seen order keep to
/// the count of distinct values.
#[derive(Debug, Clone, Default)]
pub(crate) struct ByNumber(Vec<u32>);

/// A slot of [`ByNumber`] not filled yet.
const UNSET: u32 = u32::MAX;

impl ByNumber {
    /// The value of `number`, if filled.
    #[inline]
    pub(crate) fn get(&self, number: u32) -> Option<u32> {
        self.0.get(number as usize).copied().filter(|&v| v != UNSET)
    }

    /// Fill `number` with `value` (below `u32::MAX`).
    pub(crate) fn set(&mut self, number: u32, value: u32) {
        let at = number as usize;
        if self.0.len() <= at {
            self.0.resize(at + 1, UNSET);
        }
        if let Some(v) = self.0.get_mut(at) {
            *v = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cache never answers for another pair: ids are those of a plain map, in
    /// first-seen order, whatever the slots pairs share (64 slots, 300 pairs here, many
    /// of the same lengths), also when pairs alternate and evict each other.
    #[test]
    fn interning_gives_first_seen_ids_whatever_the_cache_holds() {
        let mut ix = PairIndex::default();
        let mut reference: std::collections::HashMap<(Vec<u8>, Vec<u8>), u32> =
            std::collections::HashMap::new();
        let protocols: [&[u8]; 4] = [b"TLSv1.3", b"TLSv1.2", b"TLSv1", b""];
        let mut seq = Vec::new();
        for i in 0..300u32 {
            let p = protocols[(i % 4) as usize];
            let c = format!(
                "SUITE-{:03}-{}",
                i % 75,
                if i % 2 == 0 { "GCM" } else { "CBC" }
            );
            seq.push((p.to_vec(), c.into_bytes()));
        }
        for round in 0..3 {
            for (k, (p, c)) in seq.iter().enumerate() {
                // Alternate with a fixed pair so that slots are taken and retaken.
                let pairs = [(p.as_slice(), c.as_slice()), (&b"TLSv1.3"[..], &b"X"[..])];
                for (p, c) in pairs {
                    let next = u32::try_from(reference.len()).unwrap();
                    let want = *reference.entry((p.to_vec(), c.to_vec())).or_insert(next);
                    let (got, new) = ix.intern(p, c);
                    assert_eq!(got, want, "round {round}, pair {k}");
                    assert_eq!(new, want == next && round == 0 && got == next);
                }
            }
        }
        assert_eq!(ix.len(), reference.len());
        for (i, (p, c)) in ix.iter().enumerate() {
            assert_eq!(reference[&(p.to_vec(), c.to_vec())], i as u32);
        }
    }
}
