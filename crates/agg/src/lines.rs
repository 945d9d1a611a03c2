//! Counting lines: read, parsed, malformed by reason.

use std::collections::BTreeMap;

use serde::Serialize;
use tlsgap_parser::Reason;

/// Line counts of one or more inputs; merge by adding.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineStats {
    /// Lines read.
    pub total: u64,
    /// Lines the format parsed.
    pub parsed: u64,
    /// Malformed lines, indexed by [`Reason::index`].
    pub malformed: [u64; Reason::ALL.len()],
    /// Parsed lines left out by a time window (`--since`/`--until`).
    pub outside_window: u64,
}

impl LineStats {
    /// Count a parsed line.
    #[inline]
    pub fn ok(&mut self) {
        self.total += 1;
        self.parsed += 1;
    }

    /// Count a malformed line.
    #[inline]
    pub fn bad(&mut self, reason: Reason) {
        self.total += 1;
        if let Some(slot) = self.malformed.get_mut(reason.index()) {
            *slot += 1;
        }
    }

    /// Count a parsed line outside the time window (it is also a parsed line).
    #[inline]
    pub fn outside(&mut self) {
        self.outside_window += 1;
    }

    /// All malformed lines.
    pub fn malformed_total(&self) -> u64 {
        self.malformed.iter().sum()
    }

    /// Add `other`'s counts.
    pub fn merge(&mut self, other: &LineStats) {
        self.total += other.total;
        self.parsed += other.parsed;
        self.outside_window += other.outside_window;
        for (a, b) in self.malformed.iter_mut().zip(other.malformed.iter()) {
            *a += b;
        }
    }

    /// The JSON `lines` object.
    pub fn report(&self) -> LinesReport {
        LinesReport {
            total: self.total,
            parsed: self.parsed,
            malformed: self.malformed_total(),
            malformed_by_reason: Reason::ALL
                .iter()
                .map(|r| (r.as_str(), self.malformed[r.index()]))
                .collect(),
            outside_window: self.outside_window,
        }
    }
}

/// `lines` in the JSON outputs.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LinesReport {
    /// Lines read.
    pub total: u64,
    /// Lines parsed.
    pub parsed: u64,
    /// Lines that did not fit the format.
    pub malformed: u64,
    /// Malformed lines by reason (every reason, zero included).
    pub malformed_by_reason: BTreeMap<&'static str, u64>,
    /// Parsed lines outside `--since`/`--until` (not counted anywhere else; only
    /// written when a window was given and left lines out).
    #[serde(skip_serializing_if = "is_zero")]
    pub outside_window: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_and_report_lists_every_reason() {
        let mut a = LineStats::default();
        a.ok();
        a.bad(Reason::Truncated);
        let mut b = LineStats::default();
        b.bad(Reason::Binary);
        b.bad(Reason::Truncated);
        a.merge(&b);
        let r = a.report();
        assert_eq!((r.total, r.parsed, r.malformed), (4, 1, 3));
        assert_eq!(r.malformed_by_reason["truncated"], 2);
        assert_eq!(r.malformed_by_reason["binary"], 1);
        assert_eq!(r.malformed_by_reason.len(), Reason::ALL.len());
    }
}
