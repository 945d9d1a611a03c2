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

pub mod export;
pub mod frame;
pub mod lines;
pub mod tls;
pub mod verdict;

pub use export::{ColumnType, ExportSchema, Value};
pub use lines::{LineStats, LinesReport};
pub use tls::{
    tls_rows, CipherRow, CountMode, InputReport, ProtocolRow, TlsAgg, TlsReport, TlsRow,
    TLS_ROW_COLUMNS,
};
pub use verdict::Verdict;
