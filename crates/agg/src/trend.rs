//! Requests per local period (day or hour in a zone) and protocol: the trend behind
//! `tls --by` and the report's chart. Mergeable by adding. Which period an instant
//! falls in depends on the zone's calendar, which the caller knows: [`Trend::add`]
//! takes the function that says it.

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
    /// The period of the last second looked up: lines come in time order, many in
    /// the same second, and periods start on whole seconds.
    last_key: Option<(i64, PeriodKey)>,
}

impl Trend {
    /// Count one request of `protocol` at `at_us` (none: untimed); `key_of(µs)` names
    /// the period of a whole second.
    pub fn add(
        &mut self,
        at_us: Option<i64>,
        protocol: &[u8],
        key_of: impl FnOnce(i64) -> PeriodKey,
    ) {
        let Some(at) = at_us else {
            self.untimed += 1;
            return;
        };
        let second = at.div_euclid(1_000_000);
        let key = match &mut self.last_key {
            Some((s, k)) if *s == second => &*k,
            slot => {
                let k = key_of(second * 1_000_000);
                &slot.insert((second, k)).1
            }
        };
        let period = match self.periods.get_mut(key) {
            Some(p) => p,
            None => self.periods.entry(key.clone()).or_default(),
        };
        match period.get_mut(protocol) {
            Some(n) => *n += 1,
            None => {
                period.insert(protocol.into(), 1);
            }
        }
    }

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
