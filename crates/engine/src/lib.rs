//! The tlsgap engine: sources (files, stdin, gzip/zstd/bzip2, `--state` plans across
//! logrotate, the lock), line-aligned blocks, the parallel runner with its ordered
//! merge, format preparation and auto-detection, the per-line loop with the time
//! window and bad-line accounting, and one function per analysis
//! (`options -> typed result`): [`tls`], [`whatif`], [`export`], [`gaps`], [`auth`],
//! [`report`], [`check`] and (with the `parquet` feature) [`merge`].
//!
//! Run settings are values ([`RunOptions`]); notes and warnings come back through
//! [`Notes`]; nothing here prints, exits or keeps process-wide state, so two analyses
//! with different settings can run in one process:
//!
//! ```
//! use tlsgap_engine::{tls, Notes, RunOptions};
//!
//! let dir = std::env::temp_dir().join(format!("tlsgap-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir).unwrap();
//! let log = dir.join("access.log");
//! std::fs::write(&log, "192.0.2.1 - - [21/Nov/2026:10:00:00 +0000] \"GET / HTTP/1.1\" 200 5 \
//!     \"-\" \"curl/8.5.0\" TLSv1.3 TLS_AES_128_GCM_SHA256\n").unwrap();
//! let notes = Notes::collect();
//! let run = RunOptions {
//!     inputs: vec![log.clone()],
//!     notes: notes.clone(),
//!     ..RunOptions::default()
//! };
//! let result = tls::run(&run, &tls::TlsOptions::default()).unwrap();
//! assert_eq!(result.report.total, 1);
//! assert!(notes.take().iter().any(|n| n.text.contains("auto-detected")));
//! # std::fs::remove_dir_all(&dir).unwrap();
//! ```

#![forbid(unsafe_code)]
#![deny(clippy::print_stdout, clippy::print_stderr, clippy::exit)]
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

pub mod clash;
pub mod error;
pub mod input;
pub mod lines;
pub mod runner;
pub mod state;
pub mod uakind;
mod uapattern;
pub mod window;

pub mod auth;
pub mod check;
pub mod clients;
#[cfg(feature = "parquet")]
pub mod dataset;
#[cfg(feature = "parquet")]
pub mod export;
pub mod gaps;
mod groups;
#[cfg(feature = "parquet")]
pub mod merge;
pub mod report;
pub mod tls;
pub mod whatif;

pub use error::{Context, Error, ErrorKind, Result};
pub use window::{Period, PeriodKey, Window, Zone};

/// How loud a note is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Worth knowing (the detected format, the time window, where a `--state` run
    /// continues); a front end may hide it (`--quiet`).
    Info,
    /// Something the user must see even when asking for quiet (an input that could not
    /// be opened or read, lines lost to rotation, `--strict` stopping).
    Warning,
}

/// A note from the engine. `text` may contain text from the inputs (file names, lines):
/// escape it for where it is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// How loud.
    pub level: Level,
    /// One line, without a prefix.
    pub text: String,
}

impl Note {
    /// An [`Level::Info`] note.
    pub fn info(text: impl Into<String>) -> Note {
        Note {
            level: Level::Info,
            text: text.into(),
        }
    }

    /// A [`Level::Warning`] note.
    pub fn warning(text: impl Into<String>) -> Note {
        Note {
            level: Level::Warning,
            text: text.into(),
        }
    }
}

/// Where notes go: a callback the front end gives (called in the order the notes
/// arise, from the calling thread), or a list to read afterwards. Cloning shares it.
#[derive(Clone)]
pub struct Notes(NotesInner);

#[derive(Clone)]
enum NotesInner {
    Callback(Arc<dyn Fn(Note) + Send + Sync>),
    Collect(Arc<Mutex<Vec<Note>>>),
}

impl std::fmt::Debug for Notes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notes")
    }
}

impl Default for Notes {
    /// Collect into a list (see [`Notes::take`]).
    fn default() -> Notes {
        Notes::collect()
    }
}

impl Notes {
    /// Call `f` with every note as it arises.
    pub fn callback(f: impl Fn(Note) + Send + Sync + 'static) -> Notes {
        Notes(NotesInner::Callback(Arc::new(f)))
    }

    /// Keep every note, to be taken with [`Notes::take`].
    pub fn collect() -> Notes {
        Notes(NotesInner::Collect(Arc::new(Mutex::new(Vec::new()))))
    }

    /// Pass on a note.
    pub fn push(&self, note: Note) {
        match &self.0 {
            NotesInner::Callback(f) => f(note),
            NotesInner::Collect(list) => {
                if let Ok(mut l) = list.lock() {
                    l.push(note);
                }
            }
        }
    }

    /// An info note.
    pub fn info(&self, text: impl Into<String>) {
        self.push(Note::info(text));
    }

    /// A warning.
    pub fn warn(&self, text: impl Into<String>) {
        self.push(Note::warning(text));
    }

    /// The notes collected so far (none for a callback), emptying the list.
    pub fn take(&self) -> Vec<Note> {
        match &self.0 {
            NotesInner::Callback(_) => Vec::new(),
            NotesInner::Collect(list) => list
                .lock()
                .map(|mut l| std::mem::take(&mut *l))
                .unwrap_or_default(),
        }
    }
}

/// Progress of a run, for a front end's progress bar. Called from the reader thread and,
/// for plain files, from the workers that read their own ranges.
pub trait Progress: Send + Sync {
    /// The run starts; `total_bytes` when every input is a plain file of known size.
    fn start(&self, total_bytes: Option<u64>);
    /// `bytes` more (decompressed) bytes were read.
    fn advance(&self, bytes: u64);
    /// The run is over (called once, also on errors).
    fn finish(&self);
}

/// The default line cap (`--max-line-bytes`): 1 MiB, far beyond any real access-log
/// line (Apache cuts request lines at 8 KiB by default).
pub const DEFAULT_MAX_LINE_BYTES: usize = 1 << 20;

/// The smallest default `--memory-limit`: 256 MiB.
pub const MIN_DEFAULT_MEMORY_LIMIT: usize = 256 << 20;

/// The default number of threads (`-j`): one per core (1 when that is unknown).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The default `--memory-limit`: a quarter of the physical memory (`MemTotal` in
/// `/proc/meminfo`), at least [`MIN_DEFAULT_MEMORY_LIMIT`] (also when the size is
/// unknown).
pub fn default_memory_limit() -> usize {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_total(&text));
    total
        .map_or(0, |bytes| bytes / 4)
        .max(MIN_DEFAULT_MEMORY_LIMIT)
}

/// `MemTotal:  16318476 kB` → bytes.
fn mem_total(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line.split_whitespace().skip(1);
    let n: usize = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    n.checked_mul(unit)
}

/// The settings of one run over access logs: what to read, how, and where notes,
/// malformed lines and progress go. Analyses take it by reference; nothing is kept
/// between runs.
#[derive(Clone)]
pub struct RunOptions {
    /// Inputs in order; `-` is standard input. Paths, not text: a file name that is
    /// not UTF-8 is opened as it is.
    pub inputs: Vec<PathBuf>,
    /// `auto`, a preset name, an Apache `LogFormat` or an nginx `log_format`.
    pub log_format: String,
    /// Worker threads (at least 1).
    pub jobs: usize,
    /// Only lines inside this window (a line without a time is outside any bounded
    /// window).
    pub window: Option<Window>,
    /// Stop at the first malformed line ([`lines::StrictHit`]).
    pub strict: bool,
    /// Write malformed lines here (`FILE<TAB>LINE<TAB>REASON<TAB>line`).
    pub invalid_lines: Option<PathBuf>,
    /// `--state`: read only what is new since the last run, and record it.
    pub state: Option<state::StateConfig>,
    /// The line cap: a longer line keeps its first this many bytes and is malformed
    /// (`too_long`); memory stays flat whatever the input.
    pub max_line_bytes: usize,
    /// `--memory-limit`: the bytes the distinct-client structures of `tls --count
    /// clients`, `whatif` and `report` may take before clients first seen later are
    /// estimated with HyperLogLog ([`tlsgap_agg::distinct`]). Default
    /// [`default_memory_limit`].
    pub memory_limit: usize,
    /// Where notes go.
    pub notes: Notes,
    /// Progress reports, if wanted.
    pub progress: Option<Arc<dyn Progress>>,
}

impl std::fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOptions")
            .field("inputs", &self.inputs)
            .field("log_format", &self.log_format)
            .field("jobs", &self.jobs)
            .field("window", &self.window)
            .field("strict", &self.strict)
            .field("invalid_lines", &self.invalid_lines)
            .field("state", &self.state)
            .field("max_line_bytes", &self.max_line_bytes)
            .field("memory_limit", &self.memory_limit)
            .finish_non_exhaustive()
    }
}

impl Default for RunOptions {
    /// Standard input, `auto` format, every core, no window, notes collected.
    fn default() -> RunOptions {
        RunOptions {
            inputs: vec!["-".into()],
            log_format: "auto".into(),
            jobs: default_jobs(),
            window: None,
            strict: false,
            invalid_lines: None,
            state: None,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            memory_limit: default_memory_limit(),
            notes: Notes::collect(),
            progress: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_limit_default() {
        assert_eq!(
            mem_total("MemFree: 1 kB\nMemTotal:  16318476 kB\n"),
            Some(16_710_119_424)
        );
        assert_eq!(mem_total("MemTotal: x kB\n"), None);
        assert!(default_memory_limit() >= MIN_DEFAULT_MEMORY_LIMIT);
    }
}
