//! Integration tests: the real `tlsgap` binary on real and generated files.
//!
//! One rule for tests that need outside programs, in every crate: a missing program
//! fails the test with a message naming the Debian or PyPI package, unless a
//! `TLSGAP_SKIP_*` variable set to `1` says to skip it; a skipped test says so on the
//! real standard error (`*** SKIPPED: test: why ***`), never silently. The variables:
//!
//! | variable | skips the tests that need |
//! |---|---|
//! | `TLSGAP_SKIP_SERVER_TESTS` | Apache, nginx, curl, strace, chromium (real servers, tracers, browsers) |
//! | `TLSGAP_SKIP_PY_TESTS` | python3 with pyarrow, duckdb or prometheus_client |
//! | `TLSGAP_SKIP_HTPASSWD_TESTS` | `htpasswd` (apache2-utils), here and in `crates/auth/tests` |
//! | `TLSGAP_SKIP_OPENSSL_TESTS` | `openssl` (in `crates/ciphers/tests`) |
//!
//! gzip, zstd, bzip2 and flock are part of the base system the tests assume; they
//! have no skip.

mod auth;
mod check;
mod ciphers;
mod clients;
mod csv_injection;
mod dataset;
mod export;
mod export_offers;
mod fleet;
mod gaps;
mod gaps_secrets;
mod inprocess;
mod inputs;
mod malformed;
mod memory_limit;
mod never_destroy;
mod nightly;
mod offers;
mod operators;
mod parquet;
mod prom_check;
mod prom_state;
mod real;
mod report;
mod report_parquet;
mod shapes;
mod tls;
mod util;
mod whatif;
mod whatif_offers;
mod width;
