//! Requests per local period (day or hour in a zone) and protocol: the trend behind
//! `tls --by` and the report's chart. Mergeable by adding.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::window::{period_key, Period, PeriodKey, Zone};

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
    /// Count one request of `protocol` at `at_us` (none: untimed).
    pub fn add(&mut self, by: Period, zone: &Zone, at_us: Option<i64>, protocol: &[u8]) {
        let Some(at) = at_us else {
            self.untimed += 1;
            return;
        };
        let second = at.div_euclid(1_000_000);
        let key = match &mut self.last_key {
            Some((s, k)) if *s == second => &*k,
            slot => {
                let k = period_key(second * 1_000_000, by, zone);
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
