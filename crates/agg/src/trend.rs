//! Requests per local period (day or hour in a zone) and protocol: the trend behind
//! `tls --by` and the report's chart. Mergeable by adding. Which period an instant
//! falls in depends on the zone's calendar, which the caller knows:
//! [`TrendCounter::add`] takes the function that says it.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

/// The periods of a trend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Period {
    /// Calendar days in the zone (23, 24 or 25 hours).
    Day,
    /// Wall-clock hours in the zone.
    Hour,
}

impl Period {
    /// `day` or `hour`.
    pub fn as_str(self) -> &'static str {
        match self {
            Period::Day => "day",
            Period::Hour => "hour",
        }
    }
}

/// The period a line falls in: its label and first instant. Ordered by instant first, so
/// a `BTreeMap<PeriodKey, _>` lists periods in time order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeriodKey {
    /// First instant of the period (µs since the epoch).
    pub start_us: i64,
    /// `2026-11-21` (day) or `2026-11-21T05` (hour), local in the zone.
    pub label: String,
}

/// TLS requests per period and protocol, and the time span seen; merged by adding.
#[derive(Debug, Default)]
pub struct Trend {
    /// Requests per period and protocol (as logged).
    pub periods: BTreeMap<PeriodKey, FxHashMap<Box<[u8]>, u64>>,
    /// TLS requests without a usable time.
    pub untimed: u64,
    /// The earliest line's time (µs).
    pub first_us: Option<i64>,
    /// The latest line's time (µs).
    pub last_us: Option<i64>,
}

impl Trend {
    /// Widen the time span to `at_us`.
    pub fn seen(&mut self, at_us: i64) {
        self.first_us = Some(self.first_us.map_or(at_us, |f| f.min(at_us)));
        self.last_us = Some(self.last_us.map_or(at_us, |l| l.max(at_us)));
    }

    /// Add what another block counted.
    pub fn merge(&mut self, other: Trend) {
        for (key, protocols) in other.periods {
            let period = self.periods.entry(key).or_default();
            for (p, n) in protocols {
                *period.entry(p).or_default() += n;
            }
        }
        self.untimed += other.untimed;
        if let Some(f) = other.first_us {
            self.seen(f);
        }
        if let Some(l) = other.last_us {
            self.seen(l);
        }
    }
}

/// A [`Trend`] as a block counts it, line by line ([`TrendCounter::finish`] gives the
/// trend). Lines come in time order, many in the same second, and periods start on
/// whole seconds: the period of the last second looked up is kept, and each period's
/// counts of the first eight protocols are a row indexed by protocol number, those
/// protocols told apart by their bytes packed in two words (looking a line's period up
/// in the map and its protocol in the period's table was ~4.6 % of `report`'s
/// instructions, issue 12). Other protocols (a hostile log can log thousands) are
/// counted per (period, protocol) met, so memory follows what the block holds.
#[derive(Debug, Default)]
pub struct TrendCounter {
    trend: Trend,
    /// The periods met, each with its number (its row in `counts`).
    periods: BTreeMap<PeriodKey, usize>,
    /// Per period number, the requests of each protocol numbered below [`DENSE`].
    counts: Vec<[u64; DENSE]>,
    /// The requests of the other protocols, per (period, protocol) number.
    sparse: FxHashMap<(usize, usize), u64>,
    /// The last second looked up and its period's number.
    last: Option<(i64, usize)>,
    /// Per protocol number, its bytes.
    protocols: Vec<Box<[u8]>>,
    /// The protocols numbered below [`DENSE`] that have at most 16 bytes: length,
    /// packed bytes ([`crate::arena::inline`]) and number.
    packed: Vec<(usize, [u64; 2], usize)>,
    /// Every protocol's number.
    numbers: FxHashMap<Box<[u8]>, usize>,
    /// Per number of the caller's ([`TrendCounter::add_as`]), the protocol's.
    by_caller: crate::pairs::ByNumber,
}

/// How many protocols (the first met) have a column in each period's row, and are
/// looked up by their packed bytes before the map.
const DENSE: usize = 8;

impl TrendCounter {
    /// Count one request of `protocol` at `at_us` (none: untimed); `key_of(µs)` names
    /// the period of a whole second.
    pub fn add(
        &mut self,
        at_us: Option<i64>,
        protocol: &[u8],
        key_of: impl FnOnce(i64) -> PeriodKey,
    ) {
        self.count(at_us, key_of, |c| c.number(protocol));
    }

    /// [`TrendCounter::add`] for a caller that numbered the line already: `caller` is
    /// its number for a value `protocol` is a function of (`report` passes the pair
    /// number [`crate::tls::TlsAgg::add_pair`] gave), so a number met before names
    /// the protocol without looking its bytes up.
    pub fn add_as(
        &mut self,
        at_us: Option<i64>,
        caller: u32,
        protocol: &[u8],
        key_of: impl FnOnce(i64) -> PeriodKey,
    ) {
        self.count(at_us, key_of, |c| {
            if let Some(n) = c.by_caller.get(caller) {
                return n as usize;
            }
            let n = c.number(protocol);
            // Protocol numbers stay far below `u32::MAX` (at most a block's lines).
            c.by_caller
                .set(caller, u32::try_from(n).unwrap_or(u32::MAX - 1));
            n
        });
    }

    /// Count one timed request in its period, of the protocol `number` names.
    fn count(
        &mut self,
        at_us: Option<i64>,
        key_of: impl FnOnce(i64) -> PeriodKey,
        number: impl FnOnce(&mut TrendCounter) -> usize,
    ) {
        let Some(at) = at_us else {
            self.trend.untimed += 1;
            return;
        };
        let second = at.div_euclid(1_000_000);
        let period = match self.last {
            Some((s, p)) if s == second => p,
            _ => {
                let key = key_of(second * 1_000_000);
                let next = self.periods.len();
                let p = *self.periods.entry(key).or_insert(next);
                if p == next {
                    self.counts.push([0; DENSE]);
                }
                self.last = Some((second, p));
                p
            }
        };
        let number = number(self);
        match self
            .counts
            .get_mut(period)
            .and_then(|row| row.get_mut(number))
        {
            Some(n) => *n += 1,
            None => *self.sparse.entry((period, number)).or_default() += 1,
        }
    }

    /// The number of `protocol`, numbering it if new.
    fn number(&mut self, protocol: &[u8]) -> usize {
        let packed = crate::arena::inline(protocol);
        if let Some(k) = packed {
            let len = protocol.len();
            if let Some(&(_, _, n)) = self.packed.iter().find(|e| e.0 == len && e.1 == k) {
                return n;
            }
        }
        if let Some(&n) = self.numbers.get(protocol) {
            return n;
        }
        let n = self.protocols.len();
        self.protocols.push(protocol.into());
        self.numbers.insert(protocol.into(), n);
        if let Some(k) = packed {
            if n < DENSE {
                self.packed.push((protocol.len(), k, n));
            }
        }
        n
    }

    /// Widen the time span to `at_us`.
    pub fn seen(&mut self, at_us: i64) {
        self.trend.seen(at_us);
    }

    /// The trend counted: each period with the protocols it counted.
    pub fn finish(self) -> Trend {
        let TrendCounter {
            mut trend,
            periods,
            counts,
            sparse,
            protocols,
            ..
        } = self;
        let mut keys: Vec<Option<PeriodKey>> = vec![None; periods.len()];
        for (key, p) in periods {
            if let Some(k) = keys.get_mut(p) {
                *k = Some(key);
            }
        }
        let dense = counts.iter().enumerate().flat_map(|(period, row)| {
            row.iter()
                .enumerate()
                .map(move |(number, &n)| ((period, number), n))
        });
        for ((period, number), n) in dense.chain(sparse) {
            let (Some(Some(key)), Some(name)) = (keys.get(period), protocols.get(number)) else {
                continue;
            };
            if n > 0 {
                *trend
                    .periods
                    .entry(key.clone())
                    .or_default()
                    .entry(name.clone())
                    .or_default() += n;
            }
        }
        trend
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A period of `len` seconds numbered by its start, labelled by it.
    fn key_of(len: i64) -> impl Fn(i64) -> PeriodKey {
        move |us: i64| {
            let start = us.div_euclid(len * 1_000_000) * len * 1_000_000;
            PeriodKey {
                start_us: start,
                label: format!("p{start}"),
            }
        }
    }

    proptest::proptest! {
        /// The counter counts what a map of (period, protocol) counts, whatever the
        /// order of the seconds and however many protocols (packed, long, empty) come,
        /// by their bytes or by a caller's numbers.
        #[test]
        fn counts_as_a_map_counts(
            lines in proptest::collection::vec(
                (proptest::option::of(-5i64..40), 0usize..14, 0i64..1_000_000),
                0..300,
            ),
            len in 1i64..7,
            numbered in proptest::bool::ANY,
        ) {
            let names: Vec<Vec<u8>> = (0..14usize)
                .map(|i| match i {
                    0 => Vec::new(),
                    1..=10 => format!("TLSv1.{i}").into_bytes(),
                    11 => b"SSLv3".to_vec(),
                    12 => b"a protocol of more than sixteen bytes".to_vec(),
                    _ => b"a protocol of more than sixteen bytez".to_vec(),
                })
                .collect();
            let key = key_of(len);
            let mut counter = TrendCounter::default();
            let mut want: BTreeMap<PeriodKey, BTreeMap<Vec<u8>, u64>> = BTreeMap::new();
            let mut untimed = 0;
            for (second, protocol, micros) in &lines {
                let name = &names[*protocol];
                let at = second.map(|s| s * 1_000_000 + micros);
                if numbered {
                    // The caller's numbers: sparse, one per protocol.
                    counter.add_as(at, *protocol as u32 * 3 + 1, name, &key);
                } else {
                    counter.add(at, name, &key);
                }
                match at {
                    Some(at) => {
                        let k = key(at.div_euclid(1_000_000) * 1_000_000);
                        *want.entry(k).or_default().entry(name.clone()).or_default() += 1;
                    }
                    None => untimed += 1,
                }
            }
            let got = counter.finish();
            let got_periods: BTreeMap<PeriodKey, BTreeMap<Vec<u8>, u64>> = got
                .periods
                .into_iter()
                .map(|(k, p)| (k, p.into_iter().map(|(n, c)| (n.into_vec(), c)).collect()))
                .collect();
            proptest::prop_assert_eq!(got_periods, want);
            proptest::prop_assert_eq!(got.untimed, untimed);
        }
    }

    /// A hostile block, a new protocol and a new period every line: what is held
    /// grows with the lines, not with periods times protocols.
    #[test]
    fn memory_follows_the_pairs_met() {
        let mut counter = TrendCounter::default();
        let lines = 5_000;
        for i in 0..lines {
            let protocol = format!("junk-{i}");
            counter.add(Some(i * 3_600_000_000), protocol.as_bytes(), key_of(3_600));
        }
        assert_eq!(counter.counts.len() as i64, lines);
        assert_eq!(counter.sparse.len() as i64, lines - DENSE as i64);
        let t = counter.finish();
        assert_eq!(t.periods.len() as i64, lines);
        assert!(t.periods.values().all(|p| p.len() == 1));
    }

    #[test]
    fn the_time_span_is_kept() {
        let mut counter = TrendCounter::default();
        counter.seen(5);
        counter.seen(-3);
        counter.add(Some(7), b"TLSv1.3", key_of(60));
        let t = counter.finish();
        assert_eq!((t.first_us, t.last_us), (Some(-3), Some(5)));
        assert_eq!(t.periods.len(), 1);
    }
}
