//! Why HTTP Basic auth is slow: Apache's mod_authn_file re-reads the htpasswd file and
//! re-verifies the password on **every** request, so a user whose entry is bcrypt at a
//! high cost pays that cost (≈0.2 s at cost 12, seconds at cost 15) on each response.
//!
//! This crate reads htpasswd files ([`htpasswd`]), measures what one verification of
//! each scheme + work factor costs on this machine ([`cost`]), flags the users over a
//! per-request budget with advice ([`advice`]) and gathers it in a serialisable
//! [`AuthFileReport`]. Stored hashes and salts never leave [`htpasswd::Entry`].
//!
//! ```
//! use tlsgap_auth::{parse, AuthFileReport, MeasureOptions, Scheme, Verification};
//!
//! let file = parse(b"# users\nalice:{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\nbob\n");
//! let alice = &file.entries[0];
//! assert_eq!((alice.user.as_str(), alice.line, alice.scheme), ("alice", 2, Scheme::Sha1));
//! assert_eq!(alice.verify(b"password"), Verification::Match);
//! assert_eq!(file.malformed[0].line, 3);
//!
//! let report = AuthFileReport::build(&file, &MeasureOptions::default(), 0.050);
//! assert!(!report.users[0].flagged);
//! assert_eq!(report.users[0].how_measured, "measured");
//! assert!(!format!("{report:?}{file:?}").contains("W6ph5Mm5"));
//! ```
//!
//! Pure library: no I/O besides the clock and the OS random source, no printing.
#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

mod apr1;
mod verify;

pub mod advice;
pub mod cost;
pub mod found;
pub mod htpasswd;
pub mod report;

pub use advice::{advise, Advice, DEFAULT_THRESHOLD_SECONDS};
pub use cost::{measure, measure_all, MeasureOptions, Measurement, Method};
pub use found::{find_hash, FoundHash};
pub use htpasswd::{parse, Entry, Htpasswd, Malformed, MalformedReason, Scheme, Verification};
pub use report::{AuthFileReport, MeasurementRow, UserRow};
