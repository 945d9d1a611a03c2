//! Byte keys to numbers, for the dictionaries a Parquet row group's text columns are
//! built with ([`crate::frame::BlockBuilder`]): one lookup per value of every row, so
//! the lookup is cut to what a cache line holds.
//!
//! A key of at most [`crate::arena::INLINE`] bytes (an address, a method, a protocol, a status) is
//! held in its table slot with its hash and value: found by comparing two words of
//! the slot, with no second memory access and no `memcmp` call. Longer keys are
//! in one buffer, the slot holding where. And the key found last is tried first, with
//! no hashing: a column's value often repeats from one line to the next (the file's
//! name always, a protocol or a method most of the time).

use hashbrown::HashTable;

use crate::arena::{inline, key_hash};

#[derive(Debug, Clone, Copy)]
struct Slot {
    hash: u64,
    len: u32,
    value: u32,
    /// The key as [`inline`] packs it; for a longer key, its offset in `long` first.
    key: [u64; 2],
}

/// Keys to `u32` values, each key inserted once.
#[derive(Debug, Default)]
pub(crate) struct KeyMap {
    table: HashTable<Slot>,
    long: Vec<u8>,
    last: Option<Slot>,
}

impl KeyMap {
    /// An empty map with room for `n` keys, `long` bytes of them not inline.
    pub(crate) fn with_capacity(n: usize, long: usize) -> KeyMap {
        KeyMap {
            table: HashTable::with_capacity(n),
            long: Vec::with_capacity(long),
            last: None,
        }
    }

    /// Keys held, and their bytes not held inline.
    pub(crate) fn size(&self) -> (usize, usize) {
        (self.table.len(), self.long.len())
    }

    /// The bytes of a slot's key when it is not inline.
    fn long_key(&self, s: &Slot) -> &[u8] {
        let at = usize::try_from(s.key[0]).unwrap_or(usize::MAX);
        self.long
            .get(at..at.saturating_add(s.len as usize))
            .unwrap_or_default()
    }

    /// Whether slot `s` holds `key` (`short`: `key` inline, when it fits).
    fn holds(&self, s: &Slot, key: &[u8], short: Option<&[u64; 2]>) -> bool {
        s.len as usize == key.len()
            && match short {
                Some(k) => s.key == *k,
                None => self.long_key(s) == key,
            }
    }

    /// The value of `key`; when it is new, `value()` gives it and it is kept.
    #[cfg(test)]
    pub(crate) fn get_or_insert_with(&mut self, key: &[u8], value: impl FnOnce() -> u32) -> u32 {
        match self.find(key) {
            Ok(v) => v,
            Err(hash) => {
                let v = value();
                self.insert(key, hash, v);
                v
            }
        }
    }

    /// The value of `key`, or its hash ([`key_hash`]) when it is not held (for
    /// [`KeyMap::insert`]).
    #[inline]
    pub(crate) fn find(&mut self, key: &[u8]) -> Result<u32, u64> {
        let short = inline(key);
        if let Some(s) = &self.last {
            if self.holds(s, key, short.as_ref()) {
                return Ok(s.value);
            }
        }
        let hash = key_hash(key);
        match self.slot(hash, key, short.as_ref()) {
            Some(s) => {
                self.last = Some(s);
                Ok(s.value)
            }
            None => Err(hash),
        }
    }

    /// The value of `key`, whose [`key_hash`] is `hash`, if held (the key found
    /// last is not changed).
    pub(crate) fn get_hashed(&self, hash: u64, key: &[u8]) -> Option<u32> {
        self.slot(hash, key, inline(key).as_ref()).map(|s| s.value)
    }

    /// The slot of `key` (whose hash is `hash`; `short`: packed, when it fits).
    #[inline]
    fn slot(&self, hash: u64, key: &[u8], short: Option<&[u64; 2]>) -> Option<Slot> {
        self.table
            .find(hash, |s| s.hash == hash && self.holds(s, key, short))
            .copied()
    }

    /// Keep `key`, not held, whose [`key_hash`] is `hash`, with `value`.
    #[inline]
    pub(crate) fn insert(&mut self, key: &[u8], hash: u64, value: u32) {
        let held = match inline(key) {
            Some(k) => k,
            None => {
                let at = [self.long.len() as u64, 0];
                self.long.extend_from_slice(key);
                at
            }
        };
        let s = Slot {
            hash,
            len: u32::try_from(key.len()).unwrap_or(u32::MAX),
            value,
            key: held,
        };
        self.table.insert_unique(hash, s, |s| s.hash);
        self.last = Some(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of every length up to 20 (inline and not), each a base key and every
    /// variant of it with one byte changed (to a letter, a zero byte or 0xff): keys
    /// that differ in one place only, wherever that place is. Each keeps the value it
    /// first got, asked right after any other key of its length (the last key found
    /// is compared first, without its hash).
    #[test]
    fn keys_keep_their_values_and_never_share_one() {
        let mut by_len: Vec<Vec<Vec<u8>>> = Vec::new();
        for len in 0..=20usize {
            let base: Vec<u8> = (0..len).map(|j| b"ab\0"[j % 3]).collect();
            let mut keys = vec![base.clone()];
            for at in 0..len {
                for c in [b'a', b'b', 0, 0xff] {
                    let mut k = base.clone();
                    k[at] = c;
                    keys.push(k);
                }
            }
            keys.sort();
            keys.dedup();
            by_len.push(keys);
        }
        let mut m = KeyMap::default();
        let mut next = 0u32;
        let mut value = std::collections::HashMap::new();
        for k in by_len.iter().flatten() {
            let v = m.get_or_insert_with(k, || {
                next += 1;
                next
            });
            value.insert(k.clone(), v);
        }
        assert_eq!(next as usize, value.len(), "every distinct key is new once");
        for keys in &by_len {
            for a in keys {
                for b in keys {
                    assert_eq!(m.get_or_insert_with(a, || 0), value[a], "{a:?}");
                    assert_eq!(m.get_or_insert_with(b, || 0), value[b], "{b:?} after {a:?}");
                }
            }
        }
    }
}
