//! A count and its share, as the reports print them (a leaf: `tls`, `pq` and the
//! others use it without using each other).

use serde::Serialize;

/// A count and its share of all TLS requests (or clients).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct Tally {
    /// Requests (or clients).
    pub count: u64,
    /// `count / total`.
    pub share: f64,
}

impl Tally {
    /// `count` of `total` (share 0 when `total` is 0).
    pub fn of(count: u64, total: u64) -> Tally {
        Tally {
            count,
            share: if total == 0 {
                0.0
            } else {
                count as f64 / total as f64
            },
        }
    }
}
