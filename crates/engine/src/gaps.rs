//! Slow gaps between system calls in strace output (`tlsgap gaps`): reading traces
//! (files, `prefix.*` patterns, standard input, compressed) into the analyzer.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use tlsgap_agg::gaps::{
    duration_note, pid_from_file_name, Cause, GapAnalyzer, GapOptions, GapsReport, ENTRY_NOT_SHOWN,
};
use tlsgap_agg::InputReport;

use crate::input::{describe_read_error, Input};
use crate::{bail, Notes, Result};

/// What to read and report.
#[derive(Debug, Clone)]
pub struct GapsOptions {
    /// Trace files (`-`: standard input); a pattern with `*`, `?` or `[` that names no
    /// file is expanded, sorted.
    pub traces: Vec<PathBuf>,
    /// Report gaps of at least this many seconds.
    pub min_gap_seconds: f64,
    /// How many of the longest gaps the summary lists.
    pub top: usize,
    /// Seconds per bcrypt cost-8 verification to compare auth gaps with; `None`:
    /// measure it on this machine.
    pub bcrypt_speed: Option<f64>,
    /// `--since`/`--until`: only gaps that start inside (of `-ttt` traces; others have
    /// no date, and a note says the window was not applied to them).
    pub window: Option<crate::window::Window>,
    /// Threads: with more than one, several traces are read at once (consecutive
    /// traces in runs, each run by an analyzer of its own, absorbed in order: the same
    /// report as one after another). One trace is read by one thread.
    pub jobs: usize,
}

/// What the run found.
#[derive(Debug)]
pub struct GapsOutcome {
    /// The gaps and their summaries.
    pub report: GapsReport,
    /// Each input, with what went wrong reading it.
    pub inputs: Vec<InputReport>,
}

impl GapsOutcome {
    /// Whether a trace could not be read (completely).
    pub fn input_failed(&self) -> bool {
        self.inputs.iter().any(|i| i.error.is_some())
    }
}

/// The analyzer options for a minimum gap in seconds (which must be finite, `>= 0`) and
/// a time window.
pub fn analyzer_options(
    min_gap_seconds: f64,
    top: usize,
    window: Option<&crate::window::Window>,
) -> Result<GapOptions> {
    if !(min_gap_seconds.is_finite() && min_gap_seconds >= 0.0) {
        bail!("--min-gap {min_gap_seconds}: not a number of seconds");
    }
    Ok(GapOptions {
        min_gap_ns: (min_gap_seconds * 1e9).round() as u64,
        top,
        window_ns: window.map(|w| {
            (
                w.since.map(|s| s.saturating_mul(1000)),
                w.until.map(|u| u.saturating_mul(1000)),
            )
        }),
        ..GapOptions::default()
    })
}

/// Read every trace and analyze it. Errors: a bad minimum gap, no trace readable, or
/// no strace line in the inputs.
pub fn run(opts: &GapsOptions, notes: &Notes) -> Result<GapsOutcome> {
    let gap_opts = analyzer_options(opts.min_gap_seconds, opts.top, opts.window.as_ref())?;
    let names = expand_inputs(&opts.traces);
    let (analyzer, inputs) = read_traces(&names, gap_opts, opts.jobs, notes, |_, n, a, own| {
        feed(n, a, own, |_, _| {})
    });
    if inputs.iter().all(|i| i.error.is_some() && i.lines == 0) {
        return Err(crate::err!("no trace could be read").with_kind(crate::ErrorKind::NoInput));
    }
    check_bcrypt_speed(opts.bcrypt_speed)?;
    let mut report = analyzer.finish();
    note_unknown_schemes(&mut report, opts.bcrypt_speed);
    if opts.window.is_some() {
        note_undated_traces(&report, notes);
    }
    if report.lines.trace == 0 && inputs.iter().all(|i| i.error.is_none()) {
        let shown: Vec<String> = inputs
            .iter()
            .map(|i| {
                if i.name == "-" {
                    "stdin".into()
                } else {
                    i.name.clone()
                }
            })
            .collect();
        return Err(crate::err!(
            "nothing could be processed: no strace output in {} ({} lines read, none a \
             system call, signal or exit): \
             give the files strace -o wrote, or its standard error",
            shown.join(", "),
            report.lines.total
        )
        .with_kind(crate::ErrorKind::NoInput));
    }
    Ok(GapsOutcome { report, inputs })
}

/// Read every trace into one analyzer, each with `read` (given the trace's place
/// among `names`, its path, the analyzer and where its notes go; it returns the
/// trace's report and whatever else it collected): one after another with one job
/// (or one trace); else in runs of consecutive traces, taken by `jobs` threads as they
/// come free, each run by an analyzer of its own, absorbed in order (the report of
/// reading them one after another: [`GapAnalyzer::absorb`]). What `read` returns
/// comes back in the traces' order; the notes come once all is read, in that order.
pub(crate) fn read_traces<T: Send>(
    names: &[PathBuf],
    gap_opts: GapOptions,
    jobs: usize,
    notes: &Notes,
    read: impl Fn(usize, &Path, &mut GapAnalyzer, &Notes) -> T + Sync,
) -> (GapAnalyzer, Vec<T>) {
    let runs = runs_of(names, jobs);
    if runs.len() <= 1 {
        let mut analyzer = GapAnalyzer::new(gap_opts);
        let got = names
            .iter()
            .enumerate()
            .map(|(i, n)| read(i, n, &mut analyzer, notes))
            .collect();
        return (analyzer, got);
    }
    type Done<T> = (GapAnalyzer, Vec<T>, Notes);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<Option<Done<T>>>> =
        std::sync::Mutex::new(runs.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.min(runs.len()) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(run) = runs.get(k) else { break };
                let own = Notes::collect();
                let mut analyzer = GapAnalyzer::new(gap_opts);
                let got = run
                    .clone()
                    .filter_map(|i| names.get(i).map(|n| read(i, n, &mut analyzer, &own)))
                    .collect();
                if let Some(slot) = done.lock().ok().as_mut().and_then(|d| d.get_mut(k)) {
                    *slot = Some((analyzer, got, own));
                }
            });
        }
    });
    let mut analyzer = GapAnalyzer::new(gap_opts);
    let mut all = Vec::with_capacity(names.len());
    for (later, got, own) in done.into_inner().unwrap_or_default().into_iter().flatten() {
        analyzer.absorb(later);
        all.extend(got);
        for note in own.take() {
            notes.push(note);
        }
    }
    (analyzer, all)
}

/// Runs of consecutive traces for `jobs` threads: about sixteen per thread, of about
/// equal bytes (a file's size on disk; standard input and what cannot be measured
/// count as the average), so that a thread that drew small files takes another and
/// the last run leaves the other threads little to wait for (sixteen against four:
/// wall 0.235 against 0.265 s, median of 20 alternated runs over 1 861 files).
/// None (one job, or one trace) or one: read them one after another.
fn runs_of(names: &[PathBuf], jobs: usize) -> Vec<std::ops::Range<usize>> {
    if jobs <= 1 || names.len() <= 1 {
        return Vec::new();
    }
    let sizes: Vec<Option<u64>> = names
        .iter()
        .map(|n| {
            (n.as_os_str() != "-")
                .then(|| std::fs::metadata(n).ok().map(|m| m.len()))
                .flatten()
        })
        .collect();
    let known: Vec<u64> = sizes.iter().flatten().copied().collect();
    let average = known.iter().sum::<u64>() / (known.len() as u64).max(1);
    let sizes: Vec<u64> = sizes.iter().map(|s| s.unwrap_or(average).max(1)).collect();
    let total: u64 = sizes.iter().sum();
    let wanted = (jobs * 16).min(names.len()) as u64;
    let mut runs = Vec::new();
    let (mut start, mut bytes) = (0, 0u64);
    for (i, size) in sizes.iter().enumerate() {
        bytes += size;
        // Cut where the bytes so far pass the next multiple of total / wanted.
        if bytes * wanted >= total * (runs.len() as u64 + 1) {
            runs.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < names.len() {
        runs.push(start..names.len());
    }
    runs
}

/// Says what each `auth` gap whose verified entry the trace does not show is
/// consistent with, from its duration against bcrypt measured on this machine (the
/// scheme of the first entry a cut `read()` shows is not the verified user's).
fn note_unknown_schemes(report: &mut GapsReport, given: Option<f64>) {
    let unknown = |g: &tlsgap_agg::gaps::Gap| {
        g.cause == Cause::Auth
            && g.detail
                .as_deref()
                .is_none_or(|d| d.starts_with(ENTRY_NOT_SHOWN))
    };
    if !report.gaps.iter().chain(&report.top).any(unknown) {
        return;
    }
    let Some(BcryptSpeed { seconds, place }) = bcrypt_speed(given) else {
        return;
    };
    for g in report
        .gaps
        .iter_mut()
        .chain(report.top.iter_mut())
        .filter(|g| unknown(g))
    {
        let note = duration_note(g.seconds, seconds, BCRYPT_REFERENCE_COST, place);
        g.detail = Some(match g.detail.take() {
            Some(d) => format!("{d}; {note}"),
            None => format!("scheme not shown; {note}"),
        });
    }
}

/// With a time window: say that traces without dates (`-t`, `-tt`, `-r`) were not
/// filtered by it.
pub(crate) fn note_undated_traces(report: &GapsReport, notes: &Notes) {
    let undated: Vec<&str> = report
        .inputs
        .iter()
        .filter(|i| i.clock.is_some_and(|c| c != tlsgap_agg::gaps::Clock::Unix))
        .map(|i| i.name.as_str())
        .collect();
    if !undated.is_empty() {
        notes.warn(format!(
            "--since/--until apply to strace -ttt times only: {} ha{} no dates, all of \
             {} gaps are reported",
            undated.join(", "),
            if undated.len() == 1 { "s" } else { "ve" },
            if undated.len() == 1 { "its" } else { "their" }
        ));
    }
}

/// The bcrypt cost whose verification time is the reference speed for gap labels.
pub(crate) const BCRYPT_REFERENCE_COST: u32 = 8;

/// `--bcrypt-speed` must be a positive number of seconds.
pub(crate) fn check_bcrypt_speed(given: Option<f64>) -> Result<()> {
    if given.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
        bail!("--bcrypt-speed: not a positive number of seconds");
    }
    Ok(())
}

/// Seconds per bcrypt verification at [`BCRYPT_REFERENCE_COST`], and whose speed that is.
pub(crate) struct BcryptSpeed {
    pub seconds: f64,
    pub place: &'static str,
}

/// The speed given (`--bcrypt-speed`), else bcrypt measured on this machine (3 timings,
/// the median); `None` if the measurement failed its self-check.
///
/// Measured at cost 5 and scaled by 2^3: bcrypt's work doubles with each cost step
/// (the key schedule runs 2^cost times), so the scaled figure is within about 1 % of a
/// direct cost-8 timing here. Each timing is the thread's CPU time, which a busy
/// machine's scheduler does not stretch: three give the same median and spread as seven
/// did (15 rounds each, idle and with both cores busy; BENCHMARKS.md), and a timing of
/// one verification (≥ 1 ms; cost 5 takes ~1.9 ms here) the same as one of two (the
/// default ≥ 2 ms; 25 rounds each): ~9 ms instead of ~30 ms of every `gaps` and `auth`
/// run that labels a gap by it — on a trace of a few MB, most of the run.
pub(crate) fn bcrypt_speed(given: Option<f64>) -> Option<BcryptSpeed> {
    if let Some(seconds) = given {
        return Some(BcryptSpeed {
            seconds,
            place: "the given speed",
        });
    }
    let options = tlsgap_auth::MeasureOptions {
        samples: 3,
        max_direct_bcrypt_cost: 5,
        batch_micros: 1000,
        ..tlsgap_auth::MeasureOptions::default()
    };
    let scheme = tlsgap_auth::Scheme::Bcrypt {
        cost: BCRYPT_REFERENCE_COST,
    };
    tlsgap_auth::measure(scheme, &options)
        .verify_seconds
        .map(|seconds| BcryptSpeed {
            seconds,
            place: "this machine's speed",
        })
}

/// Expand trace arguments: none is standard input; a pattern with `*`, `?` or `[`
/// that the shell left alone (quoted, or from cron) and that names no file is
/// expanded here, sorted.
pub fn expand_inputs(args: &[PathBuf]) -> Vec<PathBuf> {
    if args.is_empty() {
        return vec!["-".into()];
    }
    let mut out = Vec::new();
    for path in args {
        // A pattern is text; a name that is not UTF-8 is a file name, never a pattern.
        let pattern = path
            .to_str()
            .filter(|s| s.contains(['*', '?', '[']) && !path.exists());
        if let Some(s) = pattern {
            if let Ok(paths) = glob::glob(s) {
                let mut found: Vec<PathBuf> = paths.filter_map(|p| p.ok()).collect();
                found.sort();
                if !found.is_empty() {
                    out.extend(found);
                    continue;
                }
            }
        }
        out.push(path.clone());
    }
    out
}

/// Feed one input to the analyzer, line by line, and each line (with its 1-based
/// number and the PID the file name gives) to `also`, so that one pass serves both
/// (standard input can be read only once).
pub fn feed(
    path: &Path,
    analyzer: &mut GapAnalyzer,
    notes: &Notes,
    mut also: impl FnMut(Option<u32>, &[u8]),
) -> InputReport {
    let name = crate::input::path_text(path);
    let name = name.as_str();
    let mut report = InputReport {
        name: name.to_string(),
        lines: 0,
        malformed: None,
        error: None,
    };
    let mut input = match Input::open(path) {
        Ok(i) => i,
        Err(e) => {
            notes.warn(format!("{name}: {e}"));
            report.error = Some(e.to_string());
            return report;
        }
    };
    let hint = if name == "-" {
        None
    } else {
        pid_from_file_name(name)
    };
    analyzer.begin_input(name, hint);
    let mut line_of = |analyzer: &mut GapAnalyzer, report: &mut InputReport, raw: &[u8]| {
        report.lines += 1;
        let line = raw.strip_suffix(b"\n").unwrap_or(raw);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        analyzer.line(report.lines, line);
        also(hint, line);
    };
    // Big blocks, lines split in place: no copy per line. `filled` bytes are in
    // `buf`, of which `start..` are not yet fed (the head of a line). A line longer
    // than the cap is fed cut at the cap and the rest of it is skipped (`skipping`),
    // so memory stays flat on a newline-free input.
    let cap = crate::DEFAULT_MAX_LINE_BYTES;
    // 1 MiB, or less for a smaller plain file: a `-ff` capture can be thousands of
    // small files, and zeroing 1 MiB for each was 8 % of `gaps`' time on one.
    let first = input.len_hint().map_or(1 << 20, |n| {
        usize::try_from(n.saturating_add(1)).map_or(1 << 20, |n| n.clamp(1 << 12, 1 << 20))
    });
    let mut buf = vec![0u8; first];
    let mut start = 0;
    let mut filled = 0;
    let mut bytes = 0u64;
    let mut skipping = false;
    loop {
        if start > 0 && filled == buf.len() {
            // Move the unfinished line to the front.
            buf.copy_within(start..filled, 0);
            filled -= start;
            start = 0;
        }
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match input.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let msg = describe_read_error(&input, &e, bytes);
                notes.warn(format!("{name}: {msg}"));
                report.error = Some(msg);
                break;
            }
        };
        if n == 0 {
            // The last line, without a newline.
            if let Some(rest) = buf.get(start..filled).filter(|r| !r.is_empty()) {
                line_of(analyzer, &mut report, rest);
            }
            break;
        }
        let mut search = filled;
        filled += n;
        if skipping {
            match memchr::memchr(b'\n', buf.get(search..filled).unwrap_or_default()) {
                Some(p) => {
                    skipping = false;
                    start = search + p + 1;
                    search = start;
                }
                None => {
                    bytes += n as u64;
                    (start, filled) = (0, 0);
                    continue;
                }
            }
        }
        while let Some(p) = memchr::memchr(b'\n', buf.get(search..filled).unwrap_or_default()) {
            let end = search + p + 1;
            let raw = buf.get(start..end).unwrap_or_default();
            bytes += raw.len() as u64;
            line_of(analyzer, &mut report, raw);
            start = end;
            search = end;
        }
        if filled - start > cap {
            let head = buf.get(start..start + cap).unwrap_or_default();
            line_of(analyzer, &mut report, head);
            bytes += (filled - start) as u64;
            skipping = true;
            start = filled;
        }
        if start == filled {
            start = 0;
            filled = 0;
        }
    }
    analyzer.end_input();
    report
}
