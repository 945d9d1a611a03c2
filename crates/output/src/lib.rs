//! tlsgap's output layer: one emitter per format over the typed results of
//! `tlsgap-agg` — aligned tables for a terminal, CSV, JSON, Parquet (the `parquet`
//! feature, through polars), Prometheus text exposition and the self-contained HTML
//! report — plus the escaping that log-derived text needs wherever it is shown, and
//! an output file that replaces its destination atomically.
//!
//! Emitters write into any [`std::io::Write`] and fail only with I/O errors:
//!
//! ```
//! use tlsgap_agg::{CountMode, LineStats, TlsAgg};
//! use tlsgap_output::emit::{Csv, Emitter};
//!
//! let mut agg = TlsAgg::new(CountMode::Requests);
//! agg.add(Some(b"192.0.2.1"), Some(b"TLSv1.3"), Some(b"TLS_AES_128_GCM_SHA256"));
//! let report = agg.report(&LineStats::default(), vec![]);
//! let mut out = Vec::new();
//! Csv.emit(&report, &mut out).unwrap();
//! assert!(String::from_utf8(out).unwrap().starts_with("kind,protocol,cipher,count"));
//! ```
//!
//! It must not read inputs, run analyses, print or exit.

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod auth;
pub mod ciphers;
pub mod clients;
pub mod emit;
pub mod escape;
pub mod explain;
pub mod file;
pub mod gaps;
pub mod layout;
pub mod periods;
pub mod prom;
pub mod report;
pub mod whatif;
