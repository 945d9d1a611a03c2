//! The serialisable result of `tlsgap auth`: one row per user, the rejected lines, and
//! one row per measured scheme + work factor. Built only from an entry's public fields,
//! so no hash or salt can reach it.
//!
//! Units are in the field names; `verify_seconds` is `null` when not measured and
//! `how_measured` says why (see [`crate::cost::Method`]).

use serde::Serialize;

use crate::advice::{advise, Advice};
use crate::cost::{measure_all, MeasureOptions, Measurement, Method};
use crate::htpasswd::{Htpasswd, Malformed, Scheme};

/// Per-user verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UserRow {
    /// User name as in the file (escape it for where it goes).
    pub user: String,
    /// 1-based line number.
    pub line: usize,
    /// Scheme name: `bcrypt`, `apr1`, `sha1`, `crypt`, ... (see [`Scheme::name`]).
    pub scheme: &'static str,
    /// bcrypt cost, if bcrypt.
    pub cost: Option<u32>,
    /// SHA-crypt rounds, if `$5$`/`$6$`.
    pub rounds: Option<u32>,
    /// Seconds per verification on this machine, `None` when not measured.
    pub verify_seconds: Option<f64>,
    /// The fastest and slowest timing sample (scaled like `verify_seconds`).
    pub verify_range_seconds: Option<[f64; 2]>,
    /// `measured`, `scaled from cost N`, `scaled from rounds N` or `not measured: ...`.
    pub how_measured: String,
    /// Over the threshold.
    pub flagged: bool,
    /// For flagged bcrypt users: the largest cost under the threshold.
    pub suggested_cost: Option<u32>,
    /// For flagged SHA-crypt users: the largest rounds under the threshold.
    pub suggested_rounds: Option<u32>,
    /// Advice for people, when there is some.
    pub advice: Option<String>,
}

/// One scheme + work factor as measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeasurementRow {
    /// Scheme name (see [`Scheme::name`]).
    pub scheme: &'static str,
    /// bcrypt cost, if bcrypt.
    pub cost: Option<u32>,
    /// SHA-crypt rounds, if `$5$`/`$6$`.
    pub rounds: Option<u32>,
    /// Seconds per verification, `None` when not measured.
    pub verify_seconds: Option<f64>,
    /// How the figure was obtained.
    pub how_measured: String,
    /// How many users use it.
    pub users: usize,
}

/// Everything `tlsgap auth` knows about one htpasswd file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuthFileReport {
    /// The per-request budget users were judged against, in seconds.
    pub threshold_seconds: f64,
    /// One row per usable entry, in file order.
    pub users: Vec<UserRow>,
    /// Lines that were not used, with line number and reason.
    pub malformed: Vec<Malformed>,
    /// One row per distinct scheme + work factor.
    pub measurements: Vec<MeasurementRow>,
}

impl AuthFileReport {
    /// Measures every scheme the file uses on this machine and judges each user.
    pub fn build(file: &Htpasswd, options: &MeasureOptions, threshold_seconds: f64) -> Self {
        let measurements = measure_all(file.entries.iter().map(|e| e.scheme), options);
        Self::from_measurements(file, &measurements, threshold_seconds)
    }

    /// Judges each user with measurements taken elsewhere (a scheme without one is
    /// reported as not measured).
    pub fn from_measurements(
        file: &Htpasswd,
        measurements: &[Measurement],
        threshold_seconds: f64,
    ) -> Self {
        let lookup = |scheme: Scheme| measurements.iter().find(|m| m.scheme == scheme);
        let users = file
            .entries
            .iter()
            .map(|entry| {
                let measurement = lookup(entry.scheme);
                let verify_seconds = measurement.and_then(|m| m.verify_seconds);
                let verify_range_seconds = measurement.and_then(|m| m.range_seconds);
                let how_measured = measurement
                    .map_or(Method::NoImplementation, |m| m.method)
                    .to_string();
                let Advice {
                    flagged,
                    suggested_cost,
                    suggested_rounds,
                    text,
                } = advise(entry.scheme, verify_seconds, threshold_seconds);
                UserRow {
                    user: entry.user.clone(),
                    line: entry.line,
                    scheme: entry.scheme.name(),
                    cost: entry.cost(),
                    rounds: entry.rounds(),
                    verify_seconds,
                    verify_range_seconds,
                    how_measured,
                    flagged,
                    suggested_cost,
                    suggested_rounds,
                    advice: text,
                }
            })
            .collect();
        let measurements = measurements
            .iter()
            .map(|m| MeasurementRow {
                scheme: m.scheme.name(),
                cost: m.scheme.cost(),
                rounds: m.scheme.rounds(),
                verify_seconds: m.verify_seconds,
                how_measured: m.method.to_string(),
                users: file.entries.iter().filter(|e| e.scheme == m.scheme).count(),
            })
            .collect();
        AuthFileReport {
            threshold_seconds,
            users,
            malformed: file.malformed.clone(),
            measurements,
        }
    }

    /// Users over the threshold.
    pub fn flagged(&self) -> impl Iterator<Item = &UserRow> {
        self.users.iter().filter(|u| u.flagged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::htpasswd::parse;

    #[test]
    fn rows_from_given_measurements() {
        let file = parse(b"slow:$2y$13$x\nfast:{SHA}x\nodd:$y$j9T$a$b\nbroken\n");
        let measurements = [
            Measurement {
                scheme: Scheme::Bcrypt { cost: 13 },
                verify_seconds: Some(0.4),
                range_seconds: None,
                method: Method::ScaledFromCost(10),
            },
            Measurement {
                scheme: Scheme::Sha1,
                verify_seconds: Some(1e-6),
                range_seconds: None,
                method: Method::Measured,
            },
        ];
        let report = AuthFileReport::from_measurements(&file, &measurements, 0.05);
        let slow = &report.users[0];
        assert_eq!(
            (slow.scheme, slow.cost, slow.flagged, slow.suggested_cost),
            ("bcrypt", Some(13), true, Some(9))
        );
        assert_eq!(slow.how_measured, "scaled from cost 10");
        assert!(!report.users[1].flagged);
        assert_eq!(report.users[2].verify_seconds, None);
        assert_eq!(
            report.users[2].how_measured,
            "not measured: no implementation"
        );
        assert_eq!(report.flagged().count(), 1);
        assert_eq!(report.malformed.len(), 1);
        assert_eq!(report.measurements[0].users, 1);

        let json = serde_json::to_value(&report).unwrap();
        assert_eq!(json["users"][0]["scheme"], "bcrypt");
        assert_eq!(json["users"][0]["verify_seconds"], 0.4);
        assert_eq!(json["malformed"][0]["reason"], "no_colon");
        assert_eq!(json["malformed"][0]["line"], 4);
        assert_eq!(
            json["measurements"][0]["how_measured"],
            "scaled from cost 10"
        );
    }
}
