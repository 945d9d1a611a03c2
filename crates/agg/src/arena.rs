//! A map from byte keys to values whose keys live in one growing buffer: no heap block
//! per key, so a partial of one block costs a few reallocations instead of one
//! allocation per distinct key, and nothing per key is freed on another thread when
//! the partial is merged (issue 12: that churn, and glibc's arena locks behind it, was
//! a large part of `whatif`'s and `report`'s time). Iteration is in insertion order.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Byte keys (copied into one buffer) to values, in insertion order.
#[derive(Debug, Clone)]
pub struct ArenaMap<V> {
    bytes: Vec<u8>,
    /// The entries, in insertion order.
    entries: Vec<Slot<V>>,
    /// Indexes into `entries`, by the hash of their key.
    table: HashTable<usize>,
}

impl<V> Default for ArenaMap<V> {
    fn default() -> Self {
        ArenaMap {
            bytes: Vec::new(),
            entries: Vec::new(),
            table: HashTable::new(),
        }
    }
}

/// One entry of an [`ArenaMap`].
#[derive(Debug, Clone)]
pub struct Slot<V> {
    /// Where the key starts in the key buffer.
    pub offset: usize,
    /// The key's length.
    pub len: usize,
    /// The key's [`key_hash`] (kept: growing the table and merging never hash again).
    pub hash: u64,
    /// The value.
    pub value: V,
}

/// The hash [`ArenaMap`] files a key under.
pub fn key_hash(key: &[u8]) -> u64 {
    FxBuildHasher.hash_one(key)
}

/// The longest key [`inline`] packs.
pub(crate) const INLINE: usize = 16;

/// A key of at most [`INLINE`] bytes packed in two words, which with its length tell
/// it apart from any other: its first and last 8 bytes (overlapping when shorter than
/// 16), first and last 4, or its first, middle and last byte. Each read is one load
/// of a fixed size (packing through a copy into a buffer made the first read of the
/// buffer wait for the copy's bytes: 14 % of the lookups' time).
pub(crate) fn inline(key: &[u8]) -> Option<[u64; 2]> {
    let n = key.len();
    let word = |at: usize| -> Option<u64> {
        Some(u64::from_le_bytes(key.get(at..at + 8)?.try_into().ok()?))
    };
    let half = |at: usize| -> Option<u64> {
        Some(u64::from(u32::from_le_bytes(
            key.get(at..at + 4)?.try_into().ok()?,
        )))
    };
    let byte = |at: usize| -> Option<u64> { key.get(at).copied().map(u64::from) };
    Some(match n {
        0 => [0, 0],
        1..=3 => [byte(0)? | byte(n / 2)? << 8 | byte(n - 1)? << 16, 0],
        4..=7 => [half(0)? | half(n - 4)? << 32, 0],
        8..=INLINE => [word(0)?, word(n - 8)?],
        _ => return None,
    })
}

fn key_of<'a, V>(bytes: &'a [u8], entries: &[Slot<V>], i: usize) -> &'a [u8] {
    match entries.get(i) {
        Some(e) => bytes.get(e.offset..e.offset + e.len).unwrap_or_default(),
        None => &[],
    }
}

fn hash_of<V>(entries: &[Slot<V>], i: usize) -> u64 {
    entries.get(i).map_or(0, |e| e.hash)
}

impl<V> ArenaMap<V> {
    /// An empty map with room for `n` entries of `bytes` key bytes in all.
    pub fn with_capacity(n: usize, bytes: usize) -> ArenaMap<V> {
        ArenaMap {
            bytes: Vec::with_capacity(bytes),
            entries: Vec::with_capacity(n),
            table: HashTable::with_capacity(n),
        }
    }

    /// The bytes of all keys held.
    pub fn key_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of `key`, whose [`key_hash`] is `hash`.
    pub fn get_mut_hashed(&mut self, hash: u64, key: &[u8]) -> Option<&mut V> {
        let (bytes, entries) = (&self.bytes, &self.entries);
        let i = *self.table.find(hash, |&i| {
            hash_of(entries, i) == hash && key_of(bytes, entries, i) == key
        })?;
        self.entries.get_mut(i).map(|e| &mut e.value)
    }

    /// The value of `key`.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        self.get_mut_hashed(key_hash(key), key)
    }

    /// The place (in insertion order) of `key`, whose [`key_hash`] is `hash`.
    pub fn find_hashed(&self, hash: u64, key: &[u8]) -> Option<usize> {
        let (bytes, entries) = (&self.bytes, &self.entries);
        self.table
            .find(hash, |&i| {
                hash_of(entries, i) == hash && key_of(bytes, entries, i) == key
            })
            .copied()
    }

    /// The value at place `i`.
    pub fn value_at_mut(&mut self, i: usize) -> Option<&mut V> {
        self.entries.get_mut(i).map(|e| &mut e.value)
    }

    /// The key at place `i` (empty when there is none).
    pub fn key_at(&self, i: usize) -> &[u8] {
        key_of(&self.bytes, &self.entries, i)
    }

    /// The [`key_hash`] of the key at place `i` (0 when there is none).
    pub fn hash_at(&self, i: usize) -> u64 {
        hash_of(&self.entries, i)
    }

    /// Add `key`, whose [`key_hash`] is `hash`, which the map does not hold; returns
    /// its place.
    pub fn insert_new_hashed(&mut self, hash: u64, key: &[u8], value: V) -> usize {
        let i = self.entries.len();
        let off = self.bytes.len();
        self.bytes.extend_from_slice(key);
        self.entries.push(Slot {
            offset: off,
            len: key.len(),
            hash,
            value,
        });
        let entries = &self.entries;
        self.table.insert_unique(hash, i, |&j| hash_of(entries, j));
        i
    }

    /// Every (key, value), in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> {
        self.entries.iter().map(|e| {
            (
                self.bytes
                    .get(e.offset..e.offset + e.len)
                    .unwrap_or_default(),
                &e.value,
            )
        })
    }

    /// Every value, in insertion order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.entries.iter().map(|e| &e.value)
    }

    /// The key buffer and the entries, to consume them.
    pub fn into_parts(self) -> (Vec<u8>, Vec<Slot<V>>) {
        (self.bytes, self.entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_what_a_hash_map_holds() {
        let mut a: ArenaMap<u64> = ArenaMap::default();
        let mut b: std::collections::HashMap<Vec<u8>, u64> = Default::default();
        // Many keys (the table grows and rehashes), some repeated, the empty key too.
        for i in 0..20_000u64 {
            let key = format!("198.51.{}.{}\0agent {}", i % 251, i % 97, i % 13).into_bytes();
            let key = if i % 1000 == 0 { Vec::new() } else { key };
            match a.get_mut(&key) {
                Some(v) => *v += i,
                None => {
                    a.insert_new_hashed(key_hash(&key), &key, i);
                }
            }
            *b.entry(key).or_insert(0) += i;
        }
        assert_eq!(a.len(), b.len());
        for (k, v) in a.iter() {
            assert_eq!(b.get(k), Some(v));
        }
        let (bytes, entries) = a.clone().into_parts();
        assert_eq!(entries.len(), b.len());
        let firsts: Vec<&[u8]> = entries
            .iter()
            .map(|e| &bytes[e.offset..e.offset + e.len])
            .collect();
        assert!(entries
            .iter()
            .all(|e| e.hash == key_hash(&bytes[e.offset..e.offset + e.len])));
        let iterated: Vec<&[u8]> = a.iter().map(|(k, _)| k).collect();
        assert_eq!(firsts, iterated);
        // Places: found where inserted, with their keys and hashes.
        for (i, k) in iterated.iter().enumerate() {
            assert_eq!(a.find_hashed(key_hash(k), k), Some(i));
            assert_eq!(a.key_at(i), *k);
            assert_eq!(a.hash_at(i), key_hash(k));
        }
        assert_eq!(a.find_hashed(key_hash(b"absent"), b"absent"), None);
        assert_eq!(a.key_at(a.len()), b"");
        let mut c: ArenaMap<()> = ArenaMap::default();
        assert_eq!(c.insert_new_hashed(key_hash(b"x"), b"x", ()), 0);
        assert_eq!(c.insert_new_hashed(key_hash(b"y"), b"y", ()), 1);
    }
}
