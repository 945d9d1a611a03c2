//! Integration tests: the real `tlsgap` binary on real and generated files.
//!
//! Tests that need outside programs (Apache, nginx, curl, gzip/zstd/bzip2, python3
//! with pyarrow and duckdb) fail with a message saying what is missing; the
//! server and Python tests can be skipped, loudly, with `TLSGAP_SKIP_SERVER_TESTS=1`
//! and `TLSGAP_SKIP_PY_TESTS=1`.

mod auth;
mod check;
mod ciphers;
mod dataset;
mod export;
mod gaps;
mod inprocess;
mod inputs;
mod malformed;
mod nightly;
mod parquet;
mod prom_check;
mod real;
mod report;
mod report_parquet;
mod tls;
mod util;
mod whatif;
