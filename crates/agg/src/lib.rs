//! Records in, summaries out: mergeable aggregates and typed results for tlsgap.
//!
//! Every aggregate here can be built on pieces of the input and merged in order,
//! which is how `-j N` splits work and how results from several hosts combine.
//!
//! ```
//! use tlsgap_agg::{CountMode, LineStats, TlsAgg};
//!
//! let mut first = TlsAgg::new(CountMode::Requests);
//! first.add(Some(b"192.0.2.1"), Some(b"TLSv1.3"), Some(b"TLS_AES_128_GCM_SHA256"));
//! let mut second = TlsAgg::new(CountMode::Requests);
//! second.add(Some(b"192.0.2.2"), None, None);
//! first.merge(second);
//! let report = first.report(&LineStats::default(), vec![]);
//! assert_eq!((report.total, report.plain), (1, 1));
//! ```
#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod arena;
pub mod authjoin;
pub mod clients;
pub mod distinct;
pub mod export;
pub mod fdtable;
pub mod fingerprint;
#[cfg(feature = "parquet")]
pub mod frame;
pub mod gaps;
#[cfg(feature = "parquet")]
mod keymap;
pub mod lines;
pub mod numbering;
pub mod pairs;
pub mod pq;
pub mod quantile;
pub mod rows;
pub mod tally;
pub mod tls;
pub mod totals;
pub mod trend;
pub mod verdict;
pub mod whatif;
pub mod words;

pub use export::{ColumnType, ExportSchema, Value};
pub use gaps::{
    gap_rows, gap_table, pid_from_file_name, Cause, Clock, Gap, GapAnalyzer, GapKind, GapOptions,
    GapRow, GapsReport, GAP_COLUMNS,
};
pub use lines::{LineStats, LinesReport};
pub use rows::{Cell, CellType, Rows};
pub use tls::{
    tls_rows, Cap, CipherRow, ClientKey, CountMode, InputReport, ProtocolRow, Tally, TlsAgg,
    TlsReport, TlsRow, TlsSummary, TLS_ROW_COLUMNS,
};
pub use totals::{RequestTotals, Totals};
pub use verdict::Verdict;
