//! Counters that only ever grow: requests by protocol and cipher, plain requests, and
//! lines by outcome, as Prometheus counters want them.
//!
//! One run's [`Totals`] are those of the lines it read; `--state` keeps a running sum
//! in the state file ([`Totals::add`] of each run's), so the exported counters grow
//! across runs and log rotation. Distinct clients are deliberately not here: the
//! clients of two runs cannot be added (a client seen in both would count twice).
//!
//! ```
//! use tlsgap_agg::{CountMode, LineStats, TlsAgg, Totals};
//!
//! let mut agg = TlsAgg::new(CountMode::Requests);
//! agg.add(None, Some(b"TLSv1.3"), Some(b"TLS_AES_128_GCM_SHA256"));
//! let mut lines = LineStats::default();
//! lines.ok();
//! let mut kept = Totals::of_run(&lines, Some(agg.request_totals()), None);
//! kept.add(&Totals::of_run(&lines, Some(agg.request_totals()), Some(1.7e9)));
//! assert_eq!(kept.lines, 2);
//! assert_eq!(kept.requests.unwrap().tls["TLSv1.3"]["TLS_AES_128_GCM_SHA256"], 2);
//! ```

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tlsgap_parser::{lossless_text, Reason};

use crate::lines::LineStats;
use crate::tls::{CountMode, TlsAgg, TlsReport};

/// Requests counted one by one (never distinct clients).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestTotals {
    /// TLS requests by protocol, then cipher, as logged (lossless text).
    pub tls: BTreeMap<String, BTreeMap<String, u64>>,
    /// Requests without TLS.
    pub plain: u64,
}

impl TlsAgg {
    /// The requests counted by [`TlsAgg::add`], one by one, in either mode (not the
    /// clients of [`TlsAgg::add_sketched`]), by protocol and cipher as lossless text.
    pub fn request_totals(&self) -> RequestTotals {
        let (pairs, plain) = self.request_counts();
        let mut out = RequestTotals {
            plain,
            ..RequestTotals::default()
        };
        for (p, c, n) in pairs {
            if n == 0 {
                continue;
            }
            *out.tls
                .entry(lossless_text(p).into_owned())
                .or_default()
                .entry(lossless_text(c).into_owned())
                .or_default() += n;
        }
        out
    }
}

impl RequestTotals {
    /// Add `other`'s counts.
    pub fn add(&mut self, other: &RequestTotals) {
        for (protocol, ciphers) in &other.tls {
            let mine = self.tls.entry(protocol.clone()).or_default();
            for (cipher, n) in ciphers {
                *mine.entry(cipher.clone()).or_default() += n;
            }
        }
        self.plain += other.plain;
    }

    /// Every (protocol, cipher, count), by protocol then cipher.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str, u64)> {
        self.tls.iter().flat_map(|(p, ciphers)| {
            ciphers
                .iter()
                .map(move |(c, n)| (p.as_str(), c.as_str(), *n))
        })
    }
}

/// Counters of the lines read: by one run, or summed over runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    /// Requests, when they were counted (`None`: a count of distinct clients only,
    /// as `merge --count clients` makes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<RequestTotals>,
    /// Lines read.
    pub lines: u64,
    /// Lines that fit the log format.
    pub parsed_lines: u64,
    /// Lines that did not, by reason ([`Reason::as_str`]); every reason is present.
    pub malformed_lines: BTreeMap<String, u64>,
    /// Unix time (seconds) of the newest line with a time, if any had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newest_line: Option<f64>,
}

impl Totals {
    /// The counters of one run: its line counts, its requests (if counted) and the
    /// time of its newest line.
    pub fn of_run(
        lines: &LineStats,
        requests: Option<RequestTotals>,
        newest_line: Option<f64>,
    ) -> Totals {
        let mut t = Totals {
            requests,
            lines: lines.total,
            parsed_lines: lines.parsed,
            malformed_lines: BTreeMap::new(),
            newest_line,
        };
        for r in Reason::ALL {
            *t.malformed_lines.entry(r.as_str().to_string()).or_default() +=
                lines.malformed[r.index()];
        }
        t
    }

    /// The counters of a finished report: its requests when it counted requests
    /// (`None` for a count of distinct clients), its lines.
    pub fn of_report(report: &TlsReport, newest_line: Option<f64>) -> Totals {
        let requests = (report.count == CountMode::Requests).then(|| {
            let mut r = RequestTotals {
                plain: report.plain,
                ..RequestTotals::default()
            };
            for p in &report.protocols {
                let ciphers = r.tls.entry(p.protocol.clone()).or_default();
                for c in &p.ciphers {
                    *ciphers.entry(c.cipher.clone()).or_default() += c.count;
                }
            }
            r
        });
        Totals {
            requests,
            lines: report.lines.total,
            parsed_lines: report.lines.parsed,
            malformed_lines: report
                .lines
                .malformed_by_reason
                .iter()
                .map(|(k, v)| ((*k).to_string(), *v))
                .collect(),
            newest_line,
        }
    }

    /// Empty counters, with every malformed-line reason at zero.
    pub fn zero() -> Totals {
        Totals::of_run(&LineStats::default(), Some(RequestTotals::default()), None)
    }

    /// Add the counters of the run that came after. Requests stay known only if both
    /// sides counted them; the newest line is the later of the two.
    pub fn add(&mut self, other: &Totals) {
        self.requests = match (self.requests.take(), &other.requests) {
            (Some(mut mine), Some(theirs)) => {
                mine.add(theirs);
                Some(mine)
            }
            _ => None,
        };
        self.lines += other.lines;
        self.parsed_lines += other.parsed_lines;
        for (reason, n) in &other.malformed_lines {
            *self.malformed_lines.entry(reason.clone()).or_default() += n;
        }
        self.newest_line = match (self.newest_line, other.newest_line) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TlsAgg;

    #[test]
    fn adding_runs_equals_one_run_over_everything() {
        let lines_of = |n: u64, bad: u64| {
            let mut s = LineStats::default();
            for _ in 0..n {
                s.ok();
            }
            for _ in 0..bad {
                s.bad(Reason::Truncated);
            }
            s
        };
        let mut a = TlsAgg::new(CountMode::Requests);
        a.add(None, Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        a.add(None, None, None);
        let mut b = TlsAgg::new(CountMode::Requests);
        b.add(None, Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        b.add(None, Some(b"TLSv1.3"), Some(b"TLS_AES_256_GCM_SHA384"));
        let mut sum = Totals::of_run(&lines_of(2, 1), Some(a.request_totals()), Some(10.0));
        sum.add(&Totals::of_run(
            &lines_of(2, 0),
            Some(b.request_totals()),
            Some(5.0),
        ));
        let mut all = a.clone();
        all.merge(b);
        let mut stats = lines_of(4, 1);
        stats.merge(&LineStats::default());
        assert_eq!(
            sum,
            Totals::of_run(&stats, Some(all.request_totals()), Some(10.0))
        );
        assert_eq!(sum.malformed_lines.len(), Reason::ALL.len());
        // A side that did not count requests makes them unknown.
        sum.add(&Totals::of_run(&lines_of(1, 0), None, None));
        assert_eq!(sum.requests, None);
        assert_eq!(sum.lines, 6);
    }

    #[test]
    fn clients_mode_still_counts_requests() {
        let mut agg = TlsAgg::new(CountMode::Clients);
        agg.add(Some(b"a"), Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        agg.add(Some(b"a"), Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        agg.add(Some(b"b"), Some(b""), Some(b""));
        let r = agg.request_totals();
        assert_eq!(r.tls["TLSv1.2"]["AES128-SHA"], 2);
        assert_eq!(r.plain, 1);
        assert_eq!(agg.report(&LineStats::default(), vec![]).total, 1);
        // A report of clients has no requests to give.
        let t = Totals::of_report(&agg.report(&LineStats::default(), vec![]), None);
        assert_eq!(t.requests, None);
    }

    #[test]
    fn a_report_of_requests_gives_the_same_counters_as_its_aggregate() {
        let mut agg = TlsAgg::new(CountMode::Requests);
        agg.add(None, Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        agg.add(None, Some(b"TLSv1"), Some(b"x\"y"));
        agg.add(None, None, None);
        let mut lines = LineStats::default();
        lines.ok();
        lines.bad(Reason::Truncated);
        let report = agg.report(&lines, vec![]);
        assert_eq!(
            Totals::of_report(&report, Some(3.0)),
            Totals::of_run(&lines, Some(agg.request_totals()), Some(3.0))
        );
    }
}
