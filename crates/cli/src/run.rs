//! From flags to a run: [`RunOptions`] from [`InputArgs`], notes printed on standard
//! error (escaped), the progress bar, the summary line and typed exit codes.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use tlsgap_engine::lines::RunSummary;
use tlsgap_engine::window::{window_from_args, Window, Zone};
use tlsgap_engine::{Level, Notes, RunOptions};

use crate::cli::{InputArgs, WindowArgs};
use tlsgap_output::{escape, file as output};

/// The exit codes of every command but `check` (which has the monitoring-plugin
/// states).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done.
    Success = 0,
    /// 1: done, but an input could not be read, or `--strict` met a malformed line.
    Partial = 1,
    /// 2: usage error, or nothing could be processed.
    Failure = 2,
}

impl Exit {
    /// [`Exit::Partial`] when `failed`, else [`Exit::Success`].
    pub fn partial_if(failed: bool) -> Exit {
        if failed {
            Exit::Partial
        } else {
            Exit::Success
        }
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> ExitCode {
        ExitCode::from(e as u8)
    }
}

/// `COLUMNS`, when it is set to a width (a whole number above 0).
fn columns() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()?
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
}

/// The width tables are laid out for (the output layer takes it as a value): `COLUMNS`
/// when set to a number; else the terminal's width when the table goes to standard
/// output (`to_stdout`) and that is a terminal; else 80. Output to a pipe or a file
/// is laid out for 80 columns whoever runs it: the same bytes from cron, a script or
/// a test, fit for a mail or a pager (scripts wanting every field use csv or json).
pub fn table_width(to_stdout: bool) -> usize {
    columns()
        .or_else(|| {
            to_stdout
                .then(|| terminal_size::terminal_size_of(std::io::stdout()))
                .flatten()
                .map(|(w, _)| usize::from(w.0))
        })
        .filter(|&w| w > 0)
        .unwrap_or(tlsgap_output::layout::DEFAULT_WIDTH)
}

/// The width notes on standard error are folded to: `COLUMNS` when set, else the
/// terminal's width when standard error is one; `None` (one line per note, as log
/// collectors and `grep` want them) otherwise.
fn stderr_width() -> Option<usize> {
    columns().or_else(|| {
        terminal_size::terminal_size_of(std::io::stderr())
            .map(|(w, _)| usize::from(w.0))
            .filter(|&w| w > 0)
    })
}

/// Print `text` as a note on standard error, escaped for the terminal, folded to its
/// width (see `stderr_width`).
pub fn note(text: &str) {
    let text = escape::terminal(text);
    let lines = match stderr_width() {
        Some(width) => tlsgap_output::layout::wrap("tlsgap:", &text, width, 8),
        None => format!("tlsgap: {text}\n"),
    };
    #[allow(clippy::print_stderr)]
    {
        eprint!("{lines}");
    }
}

/// Notes that go to standard error as they arise: warnings always, the rest unless
/// `quiet`.
pub fn stderr_notes(quiet: bool) -> Notes {
    Notes::callback(move |n| {
        if n.level == Level::Warning || !quiet {
            note(&n.text);
        }
    })
}

/// A command's run over access logs.
#[derive(Debug)]
pub struct LogRun {
    /// What the engine needs.
    pub opts: RunOptions,
    /// `-o` (`None`: standard output).
    pub output: Option<PathBuf>,
    /// `-q`.
    pub quiet: bool,
    /// `--tz` as given.
    pub tz: Option<String>,
}

/// Resolve `--since/--until/--tz` (as of now); say the window unless quiet.
pub fn window(w: &WindowArgs, quiet: bool) -> Result<Option<Window>> {
    if w.since.is_none() && w.until.is_none() {
        // A bad --tz is an error on every command, window or not.
        if let Some(tz) = w.tz.as_deref() {
            tlsgap_engine::window::resolve_tz(Some(tz))?;
        }
        return Ok(None);
    }
    let (window, zone) = resolve_window(w)?;
    if !quiet {
        note(&format!("time window {}", window.describe(&zone)));
    }
    Ok(Some(window))
}

pub fn resolve_window(w: &WindowArgs) -> Result<(Window, Zone)> {
    let now = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now());
    Ok(window_from_args(
        w.since.as_deref(),
        w.until.as_deref(),
        w.tz.as_deref(),
        now,
    )?)
}

/// The zone of `--tz` (default: the local one).
pub fn zone(tz: Option<&str>) -> Result<Zone> {
    Ok(tlsgap_engine::window::resolve_tz(tz)?)
}

/// `-j N`: N threads; none (or 0): one per core.
pub fn jobs(given: Option<usize>) -> usize {
    given
        .filter(|&n| n > 0)
        .unwrap_or_else(tlsgap_engine::default_jobs)
}

impl LogRun {
    /// From the shared flags of the log commands.
    pub fn new(a: InputArgs) -> Result<LogRun> {
        let inputs = if a.files.is_empty() {
            vec![PathBuf::from("-")]
        } else {
            a.files.clone()
        };
        let jobs = jobs(a.jobs);
        let quiet = a.quiet;
        let output = a.output.filter(|p| p.as_os_str() != "-");
        // Nothing is read before it is clear that no output destroys an input.
        let input_paths: Vec<&Path> = if a.files.is_empty() {
            vec![Path::new("-")]
        } else {
            a.files.iter().map(PathBuf::as_path).collect()
        };
        let mut outputs: Vec<(&str, &Path)> = Vec::new();
        if let Some(o) = &output {
            outputs.push(("-o", o));
        }
        if let Some(p) = &a.invalid_lines {
            outputs.push(("--invalid-lines", p));
        }
        if let Some(p) = &a.state.state {
            outputs.push(("--state", p));
        }
        tlsgap_engine::clash::check(&input_paths, &outputs)?;
        let window = window(&a.window, quiet)?;
        let progress: Option<Arc<dyn tlsgap_engine::Progress>> = if bar_wanted(quiet) {
            Some(Arc::new(Bar::default()))
        } else {
            None
        };
        Ok(LogRun {
            opts: RunOptions {
                inputs,
                log_format: a.log_format,
                jobs,
                window,
                strict: a.strict,
                invalid_lines: a.invalid_lines,
                state: a.state.config(),
                max_line_bytes: a.max_line_bytes,
                memory_limit: a.memory_limit,
                notes: stderr_notes(quiet),
                progress,
            },
            output,
            quiet,
            tz: a.window.tz,
        })
    }

    /// Open `-o` (or standard output) for this run: with `--state`, a reader that
    /// goes away is no error and the run goes on to record its state (see
    /// [`deliver`]).
    pub fn open_output(&self) -> Result<output::Output> {
        Ok(output::open(self.output.as_deref())?.drain_closed_pipe(self.opts.state.is_some()))
    }

    /// The summary line on standard error, unless quiet.
    pub fn summary(&self, run: &RunSummary) {
        if !self.quiet {
            note(&run.line());
        }
    }
}

/// Refuse (before anything is read) outputs that are one of the `inputs` or each
/// other: `(flag, path)`, `None` paths and `-` skipped. No inputs means standard input.
pub fn refuse_clobber(inputs: &[PathBuf], outputs: &[(&str, Option<&Path>)]) -> Result<()> {
    let stdin = [PathBuf::from("-")];
    let inputs: Vec<&Path> = if inputs.is_empty() {
        &stdin[..]
    } else {
        inputs
    }
    .iter()
    .map(PathBuf::as_path)
    .collect();
    let outputs: Vec<(&str, &Path)> = outputs
        .iter()
        .filter_map(|(flag, p)| p.map(|p| (*flag, p)))
        .collect();
    tlsgap_engine::clash::check(&inputs, &outputs)?;
    Ok(())
}

/// Finish the run's outputs (written, flushed to disk, renamed into place), then save
/// its `--state`: a result that could not be written is never recorded as delivered,
/// and the next run reads the same lines again. A pipe whose reader went away counts
/// as written (see [`output::Output::drain_closed_pipe`]).
pub fn deliver(outputs: Vec<output::Output>, run: &mut RunSummary) -> Result<()> {
    for out in outputs {
        if let Err(e) = out.finish() {
            if run.state_pending() {
                note("--state not advanced: the result was not written (the next run reads these lines again)");
            }
            return Err(e.into());
        }
    }
    run.commit_state()?;
    Ok(())
}

/// Whether a bar should be shown: stderr is a terminal, not quiet, not CI.
fn bar_wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
}

/// A progress bar on standard error (bytes, rate, ETA), drawn by a thread of its own
/// from a byte counter the engine advances.
#[derive(Default)]
struct Bar {
    bytes: Arc<AtomicU64>,
    done: Arc<AtomicBool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl tlsgap_engine::Progress for Bar {
    fn start(&self, total_bytes: Option<u64>) {
        let style = |t: &str| ProgressStyle::with_template(t).ok();
        let bar = match total_bytes {
            Some(total) => {
                match style("{bytes}/{total_bytes} {wide_bar} {binary_bytes_per_sec} ETA {eta}") {
                    Some(s) => ProgressBar::new(total).with_style(s),
                    None => return,
                }
            }
            None => match style("{spinner} {bytes} read, {binary_bytes_per_sec}") {
                Some(s) => ProgressBar::new_spinner().with_style(s),
                None => return,
            },
        };
        let (bytes, stop) = (Arc::clone(&self.bytes), Arc::clone(&self.done));
        let thread = std::thread::spawn(move || {
            // Short runs finish before the bar would show at all.
            for _ in 0..5 {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            while !stop.load(Ordering::Relaxed) {
                bar.set_position(bytes.load(Ordering::Relaxed));
                bar.tick();
                std::thread::sleep(Duration::from_millis(200));
            }
            bar.finish_and_clear();
        });
        if let Ok(mut t) = self.thread.lock() {
            *t = Some(thread);
        }
    }

    fn advance(&self, bytes: u64) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    fn finish(&self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = t.join();
        }
    }
}
