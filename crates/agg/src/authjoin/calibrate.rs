//! Predictions on the server's time, not this machine's.
//!
//! The htpasswd measurement runs where tlsgap runs; the server may be faster or
//! slower (another CPU, another load). When the evidence holds the server's own
//! times for users whose entry was measured here — the median `auth` gap tied to
//! them, or else the median extra latency of their requests in the access log — the
//! ratio server ÷ here is the sum of those users' observed times over the sum of
//! their predictions (the slowest users, whose advice matters most, weigh most), and
//! every prediction is scaled by it. Only users whose check is slow enough to stand out of the noise
//! count (observed ≥ [`MIN_OBSERVED_SECONDS`], at least [`MIN_SAMPLES`] samples).
//!
//! For bcrypt the ratio does not depend on this machine's measurement noise: every
//! cost from 10 up is the one measurement at cost 10 × 2^Δcost, so a user's
//! prediction is that measurement × 2^Δcost × Σ observed ÷ (that measurement ×
//! Σ 2^Δcost'), in which the measurement cancels. Same input, same advice.

use serde::Serialize;

/// A user's observed time must be at least this long to calibrate on (seconds).
pub const MIN_OBSERVED_SECONDS: f64 = 0.010;
/// And have at least this many samples.
pub const MIN_SAMPLES: u64 = 2;

/// Which evidence the predictions are based on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Auth gaps in the traces tied to users with a measured htpasswd entry.
    TraceGaps,
    /// Extra latency of users' requests in the access log (`%D`).
    AccessLogLatency,
    /// No observed times: this machine's measurement as it is.
    ThisMachine,
}

impl Basis {
    /// How a prediction on this basis is described to people.
    pub fn place(self) -> &'static str {
        match self {
            Basis::TraceGaps => "on the server (calibrated on the traced password checks)",
            Basis::AccessLogLatency => {
                "on the server (calibrated on the access log's request durations)"
            }
            Basis::ThisMachine => "on this machine",
        }
    }
}

/// The server's speed relative to this machine.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Calibration {
    /// The evidence used.
    pub basis: Basis,
    /// Server seconds per second measured here (1 on [`Basis::ThisMachine`]).
    pub server_time_ratio: f64,
    /// The smallest and largest ratio of the users it was taken from.
    pub ratio_range: Option<[f64; 2]>,
    /// The users it was taken from.
    pub users: Vec<String>,
}

/// One user's observed time next to the prediction measured here.
#[derive(Clone, Debug)]
pub(crate) struct Pair {
    pub user: String,
    pub observed: f64,
    pub samples: u64,
    pub here: f64,
}

/// The calibration from gap pairs, else latency pairs, else none.
pub(crate) fn calibrate(gaps: &[Pair], latency: &[Pair]) -> Calibration {
    for (basis, pairs) in [(Basis::TraceGaps, gaps), (Basis::AccessLogLatency, latency)] {
        let fit: Vec<&Pair> = pairs
            .iter()
            .filter(|p| {
                p.observed >= MIN_OBSERVED_SECONDS && p.samples >= MIN_SAMPLES && p.here > 0.0
            })
            .collect();
        if fit.is_empty() {
            continue;
        }
        let observed: f64 = fit.iter().map(|p| p.observed).sum();
        let here: f64 = fit.iter().map(|p| p.here).sum();
        let ratio = observed / here;
        let mut used: Vec<(f64, &str)> = fit
            .iter()
            .map(|p| (p.observed / p.here, p.user.as_str()))
            .collect();
        used.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
        let range = match (used.first(), used.last()) {
            (Some(a), Some(b)) => Some([a.0, b.0]),
            _ => None,
        };
        let mut users: Vec<String> = used.iter().map(|(_, u)| (*u).to_string()).collect();
        users.sort();
        return Calibration {
            basis,
            server_time_ratio: ratio,
            ratio_range: range,
            users,
        };
    }
    Calibration {
        basis: Basis::ThisMachine,
        server_time_ratio: 1.0,
        ratio_range: None,
        users: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(user: &str, observed: f64, samples: u64, here: f64) -> Pair {
        Pair {
            user: user.into(),
            observed,
            samples,
            here,
        }
    }

    #[test]
    fn gaps_first_then_latency_then_this_machine() {
        let gaps = [
            pair("bc12", 0.20, 20, 0.40),
            pair("bc10", 0.05, 20, 0.10),
            pair("bc13", 0.42, 9, 0.80),
            // Too fast to say anything, or a single sample: left out.
            pair("bc5", 0.004, 20, 0.003),
            pair("once", 9.0, 1, 0.1),
        ];
        let c = calibrate(&gaps, &[pair("x", 1.0, 9, 0.1)]);
        assert_eq!(c.basis, Basis::TraceGaps);
        assert!((c.server_time_ratio - 0.67 / 1.3).abs() < 1e-12);
        assert_eq!(c.users, ["bc10", "bc12", "bc13"]);
        let [lo, hi] = c.ratio_range.unwrap();
        assert!(
            (lo - 0.5).abs() < 1e-12 && (hi - 0.525).abs() < 1e-12,
            "{lo} {hi}"
        );
        let c = calibrate(&[], &[pair("x", 0.3, 9, 0.1), pair("y", 0.1, 9, 0.1)]);
        assert_eq!(c.basis, Basis::AccessLogLatency);
        assert!((c.server_time_ratio - 2.0).abs() < 1e-12);
        let [lo, hi] = c.ratio_range.unwrap();
        assert!(
            (lo - 1.0).abs() < 1e-12 && (hi - 3.0).abs() < 1e-12,
            "{lo} {hi}"
        );
        let c = calibrate(&[], &[]);
        assert_eq!((c.basis, c.server_time_ratio), (Basis::ThisMachine, 1.0));
    }
}
