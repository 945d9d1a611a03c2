//! Distinct counting under a memory budget: the exact client maps of `tls --count
//! clients`, `whatif` and `report` hold every client until the budget is spent, then
//! clients first seen after that go into HyperLogLog sketches.
//!
//! # The sketch
//!
//! [`Hll`] is HyperLogLog (Flajolet, Fusy, Gandouet and Meunier, 2007) with precision
//! [`PRECISION`] = 14: 2^14 one-byte registers (16 KiB), standard error
//! 1.04 / sqrt(2^14) ≈ 0.81 % ([`RELATIVE_STANDARD_ERROR`]). Keys are hashed with
//! [`hash64`]: FNV-1a 64 over the bytes, then the 64-bit finalizer of MurmurHash3
//! (`fmix64`) so that every output bit depends on every input bit. The hash is fixed
//! (no random seed): the same input gives the same estimate on every run and machine.
//! The top 14 bits of the hash pick a register, which keeps the largest rank (position
//! of the first 1 bit, from 1) of the remaining 50 bits. The estimate is linear
//! counting `m ln(m / V)` (`V` empty registers of `m`) while that is at most 11,500
//! (the small-range correction; the threshold Heule, Nunkesser and Hall give for
//! precision 14), above that Ertl's improved raw estimator ("New cardinality estimation
//! algorithms for HyperLogLog sketches", 2017), which has no bias where the original
//! raw estimate is off by up to 2 % (near `5m/2`) and needs no empirical tables; with
//! a 64-bit hash no large-range correction is needed. Two sketches merge by taking the
//! larger register, which gives exactly the sketch of the union.
//!
//! # The budget
//!
//! [`Budget`] counts an estimate of the bytes the exact maps hold: per client its key
//! length plus a fixed per-entry overhead (the hash table slot, its growth slack and
//! the key's heap block). Clients are admitted in input order while the total stays
//! within the limit; the first one that does not fit switches the aggregate to the
//! sketches for good, so the exact clients are always the longest prefix (in first-seen
//! order) of the distinct clients that fits, whatever the block split or `-j`.

use serde::Serialize;

/// HyperLogLog precision: 2^14 registers.
pub const PRECISION: u32 = 14;

/// Registers per sketch (16 KiB of `u8`).
pub const REGISTERS: usize = 1 << PRECISION;

/// The relative standard error of one estimate: 1.04 / sqrt(2^14) ≈ 0.0081.
pub const RELATIVE_STANDARD_ERROR: f64 = 1.04 / 128.0;

/// Linear counting is used while its estimate is at most this (precision 14).
const LINEAR_COUNTING_THRESHOLD: f64 = 11_500.0;

/// `sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1)` (Ertl 2017), for `x` in `[0, 1)`.
fn sigma(mut x: f64) -> f64 {
    if x >= 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if z == before {
            return z;
        }
    }
}

/// `tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3` (Ertl 2017).
fn tau(mut x: f64) -> f64 {
    if x <= 0.0 || x >= 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if z == before {
            return z / 3.0;
        }
    }
}

/// The hash of a key: FNV-1a 64, then MurmurHash3's `fmix64` finalizer. Fixed, so
/// sketches are the same on every run.
pub fn hash64(key: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in key {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A HyperLogLog sketch (see the module documentation). The registers are allocated
/// on the first insert or merge: an empty sketch costs nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Hll {
    registers: Vec<u8>,
}

impl Hll {
    /// An empty sketch.
    pub fn new() -> Hll {
        Hll::default()
    }

    /// Whether nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.registers.is_empty()
    }

    /// Add a key.
    pub fn insert(&mut self, key: &[u8]) {
        self.insert_hash(hash64(key));
    }

    /// Add a key by its [`hash64`].
    pub fn insert_hash(&mut self, hash: u64) {
        if self.registers.is_empty() {
            self.registers = vec![0; REGISTERS];
        }
        let index = (hash >> (64 - PRECISION)) as usize;
        // The sentinel bit bounds the rank at 64 - PRECISION + 1.
        let rest = (hash << PRECISION) | (1 << (PRECISION - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        if let Some(r) = self.registers.get_mut(index) {
            if *r < rank {
                *r = rank;
            }
        }
    }

    /// Become the sketch of the union.
    pub fn merge(&mut self, other: &Hll) {
        if other.registers.is_empty() {
            return;
        }
        if self.registers.is_empty() {
            self.registers.clone_from(&other.registers);
            return;
        }
        for (a, &b) in self.registers.iter_mut().zip(&other.registers) {
            if *a < b {
                *a = b;
            }
        }
    }

    /// The estimated number of distinct keys inserted.
    pub fn estimate(&self) -> f64 {
        if self.registers.is_empty() {
            return 0.0;
        }
        let m = REGISTERS as f64;
        // C_k: registers holding k, for k = 0 ..= q + 1 (q = 64 - PRECISION).
        let q = (64 - PRECISION) as usize;
        let mut histogram = vec![0u32; q + 2];
        for &r in &self.registers {
            if let Some(c) = histogram.get_mut(usize::from(r)) {
                *c += 1;
            }
        }
        let zeros = f64::from(histogram.first().copied().unwrap_or(0));
        // Small range: linear counting, below the threshold where it beats the sketch
        // estimate (11,500 for precision 14, Heule, Nunkesser and Hall 2013).
        if zeros > 0.0 {
            let linear = m * (m / zeros).ln();
            if linear <= LINEAR_COUNTING_THRESHOLD {
                return linear;
            }
        }
        // Otherwise Ertl's improved raw estimator (2017), without the bias of the
        // original raw estimate between 2.5m and 5m:
        // alpha_inf m^2 / (m sigma(C_0/m) + sum_{k=1..q} C_k 2^-k + m tau(1 - C_{q+1}/m) 2^-q).
        let full = f64::from(histogram.last().copied().unwrap_or(0));
        let mut denominator = m * tau(1.0 - full / m);
        for k in (1..=q).rev() {
            let c = f64::from(histogram.get(k).copied().unwrap_or(0));
            denominator = 0.5 * (denominator + c);
        }
        denominator += m * sigma(zeros / m);
        let alpha_inf = 0.5 / std::f64::consts::LN_2;
        alpha_inf * m * m / denominator
    }

    /// [`Hll::estimate`] rounded to a count.
    pub fn count(&self) -> u64 {
        self.estimate().round() as u64
    }
}

/// The sketch of the union of `sketches`.
pub fn union<'a>(sketches: impl IntoIterator<Item = &'a Hll>) -> Hll {
    let mut all = Hll::new();
    for s in sketches {
        all.merge(s);
    }
    all
}

/// `|a ∪ b| - |b|`, estimated and at least 0: the keys of `a` not in `b`.
pub fn difference(a_or_b: &Hll, b: &Hll) -> u64 {
    (a_or_b.estimate() - b.estimate()).max(0.0).round() as u64
}

/// How many bytes of exact distinct-client entries a run may hold, and how many it
/// holds (estimated). Once a client did not fit, none is admitted any more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    limit: usize,
    used: usize,
    full: bool,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::unlimited()
    }
}

impl Budget {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Budget {
        Budget {
            limit,
            used: 0,
            full: false,
        }
    }

    /// No limit (every client exact).
    pub fn unlimited() -> Budget {
        Budget::new(usize::MAX)
    }

    /// The limit in bytes.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The bytes held so far (estimated).
    pub fn used(&self) -> usize {
        self.used
    }

    /// Whether a client did not fit (from then on every new client is sketched).
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// Whether `bytes` more still fit; if so they are counted, if not the budget is
    /// full for good.
    pub fn admit(&mut self, bytes: usize) -> bool {
        if self.full {
            return false;
        }
        match self.used.checked_add(bytes) {
            Some(n) if n <= self.limit => {
                self.used = n;
                true
            }
            _ => {
                self.full = true;
                false
            }
        }
    }

    /// Count `bytes` more without a check (a client already admitted grew).
    pub fn grow(&mut self, bytes: usize) {
        self.used = self.used.saturating_add(bytes);
    }
}

/// Which figures are estimates, in a report whose distinct-client structures
/// outgrew the memory limit (absent otherwise).
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Estimate {
    /// Clients counted exactly (those first seen before the limit was reached).
    pub exact_clients: u64,
    /// Clients first seen after it, estimated with HyperLogLog.
    pub estimated_clients: u64,
    /// The relative standard error of the estimated part (≈ 0.0081).
    pub relative_standard_error: f64,
    /// The limit (`--memory-limit`), in bytes.
    pub memory_limit_bytes: u64,
}

impl Estimate {
    /// One line for tables and the report:
    /// `clients: estimated beyond the memory limit (512 MiB): 1,234 exact + ~5,678
    /// (HyperLogLog, ±0.81% standard error)`.
    pub fn note(&self) -> String {
        format!(
            "clients: estimated beyond the memory limit ({}): {} exact + ~{} \
             (HyperLogLog, ±{:.2}% standard error)",
            size_text(self.memory_limit_bytes),
            group_thousands(self.exact_clients),
            group_thousands(self.estimated_clients),
            self.relative_standard_error * 100.0
        )
    }
}

/// `512 MiB`, `2 GiB`, `1536 KiB`, `100 bytes`: the largest unit that divides evenly.
fn size_text(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(range: std::ops::Range<u64>) -> Hll {
        let mut h = Hll::new();
        for i in range {
            h.insert(format!("198.51.{}.{}\0curl/{i}", i % 256, i / 256).as_bytes());
        }
        h
    }

    #[test]
    fn estimates_within_three_standard_errors() {
        for n in [1_000u64, 10_000, 30_000, 41_000, 60_000, 100_000, 1_000_000] {
            let e = sketch(0..n).estimate();
            let rel = (e - n as f64).abs() / n as f64;
            assert!(rel < 3.0 * RELATIVE_STANDARD_ERROR, "{n}: {e} ({rel})");
        }
        assert_eq!(Hll::new().estimate(), 0.0);
        assert_eq!(sketch(0..1).count(), 1);
    }

    #[test]
    fn merge_is_the_union_and_deterministic() {
        let mut a = sketch(0..60_000);
        let b = sketch(40_000..150_000);
        a.merge(&b);
        assert_eq!(a, sketch(0..150_000));
        assert_eq!(a, union([&sketch(0..60_000), &b]));
        // Inserting again changes nothing; the hash is fixed.
        let mut c = sketch(0..150_000);
        c.merge(&sketch(10..20));
        assert_eq!(c, a);
        assert_eq!(hash64(b"192.0.2.1"), hash64(b"192.0.2.1"));
        assert_ne!(hash64(b"192.0.2.1"), hash64(b"192.0.2.2"));
        let mut empty = Hll::new();
        empty.merge(&Hll::new());
        assert!(empty.is_empty());
    }

    #[test]
    fn budget_is_a_prefix() {
        let mut b = Budget::new(100);
        assert!(b.admit(60));
        assert!(!b.admit(60));
        // Smaller ones no longer fit either: the exact part stays a prefix.
        assert!(!b.admit(1));
        assert!(b.is_full());
        assert_eq!(b.used(), 60);
        assert!(Budget::unlimited().admit(usize::MAX));
    }

    #[test]
    fn note_text() {
        let e = Estimate {
            exact_clients: 1_234_567,
            estimated_clients: 3_456_789,
            relative_standard_error: RELATIVE_STANDARD_ERROR,
            memory_limit_bytes: 512 << 20,
        };
        assert_eq!(
            e.note(),
            "clients: estimated beyond the memory limit (512 MiB): 1,234,567 exact + \
             ~3,456,789 (HyperLogLog, ±0.81% standard error)"
        );
        assert_eq!(size_text(1000), "1000 bytes");
        assert_eq!(group_thousands(12), "12");
    }
}
