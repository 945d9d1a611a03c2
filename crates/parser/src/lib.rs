//! Parsers for the logs tlsgap reads: bytes in, borrowed records out.
//!
//! A log format (an Apache `LogFormat`, an nginx `log_format` or a preset name) is
//! compiled once into a [`Format`]; a [`LineParser`] then applies it to each line and
//! fills a [`Record`] whose values borrow the line and are unescaped only when asked.
//!
//! ```
//! use tlsgap_parser::{Format, LineParser, Record, Role};
//!
//! let format = Format::compile("combinedssl").unwrap();
//! let mut parser = LineParser::new(&format);
//! let line = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 -0330] "GET / HTTP/1.1" 200 512 "-" "curl/8.0 \"x\"" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
//! let mut rec = Record::new(&format);
//! parser.parse(line, &mut rec).unwrap();
//! assert_eq!(rec.raw_role(Role::TlsProtocol), Some(&b"TLSv1.3"[..]));
//! assert_eq!(rec.role(Role::UserAgent).as_deref(), Some(&b"curl/8.0 \"x\""[..]));
//! assert_eq!(rec.time().unwrap().to_string(), "2026-11-21T18:07:40-03:30");
//! ```
//!
//! This crate does no I/O, no printing and no allocation per line on the hot path.
#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod access;
pub mod detect;
pub mod format;
pub mod infer;
pub mod strace;
pub mod time;
pub mod unescape;

pub use access::{LineParser, Reason, Record, RequestParts};
pub use format::{Dialect, Escaping, Field, Format, FormatError, Kind, Role, PRESETS};
pub use time::{TimeSpec, Timestamp};
pub use unescape::{lossless_text, unescape};
