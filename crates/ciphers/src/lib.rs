//! What tlsgap knows about TLS cipher suites: a checked-in catalogue (IANA code points,
//! IANA and OpenSSL names, algorithms, bits, verdict), the verdict rules, an evaluator
//! of OpenSSL cipher strings (`HIGH:!aNULL:!MD5`, ...) and the TLS policies `whatif`
//! tests traffic against (Mozilla profiles, Apache and nginx directives).
//!
//! No I/O, no dependencies beyond serde: the catalogue is compiled in.
#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod catalogue;
pub mod cipherstring;
pub mod dhparams;
pub mod groups;
pub mod handshake;
pub mod offer;
pub mod opensslcnf;
pub mod policy;
pub mod suite;
pub mod verdict;

pub use suite::{Mode, Protocol, Suite};
pub use verdict::Verdict;
