//! What every log command shares: opening inputs, choosing the format, the per-line
//! loop with malformed-line accounting, `--invalid-lines`, `--strict`, the summary
//! line and the exit code.

use std::fs::File;
use std::io::{BufWriter, Write};

use anyhow::{bail, Context, Result};
use tlsgap_agg::{InputReport, LineStats};
use tlsgap_parser::detect::detect;
use tlsgap_parser::{Format, LineParser, Reason, Record, Role};

use crate::cli::InputConfig;
use crate::engine::{self, Block, BlockMeta, InputOutcome, Job};
use crate::escape;
use crate::input::Input;

/// How many bytes of the first input auto-detection looks at.
const DETECT_BYTES: usize = 64 << 10;
/// How many lines it tries.
const DETECT_LINES: usize = 50;

/// A malformed line, numbered within its block.
#[derive(Debug, Clone)]
pub struct BadLine {
    /// 0-based line index within the block.
    pub rel_line: u64,
    /// Why it did not parse.
    pub reason: Reason,
    /// The line, verbatim.
    pub bytes: Vec<u8>,
}

/// Line counts and (when asked for) the malformed lines of one block.
#[derive(Debug, Default)]
pub struct LinePartial {
    /// Counts.
    pub stats: LineStats,
    /// Malformed lines, kept only with `--invalid-lines` or `--strict`.
    pub bad: Vec<BadLine>,
}

/// A job's per-block result that carries its line counts (and malformed lines).
pub trait HasLines {
    /// Take the line counts out, leaving empty ones.
    fn take_lines(&mut self) -> LinePartial;
}

/// Implement [`HasLines`] for partials with a `lines: LinePartial` field.
#[macro_export]
macro_rules! has_lines {
    ($($t:ty),*) => {$(
        impl $crate::common::HasLines for $t {
            fn take_lines(&mut self) -> $crate::common::LinePartial {
                std::mem::take(&mut self.lines)
            }
        }
    )*};
}

/// The time window of this run (`--since`/`--until`), set once by [`prepare`]: one
/// process runs one command, and every job's line loop consults it.
static WINDOW: std::sync::OnceLock<crate::window::Window> = std::sync::OnceLock::new();

/// Whether `rec` falls in the run's time window (no window: always). A line without a
/// time is outside any window.
#[inline]
fn in_window(rec: &Record<'_>) -> bool {
    match WINDOW.get() {
        None => true,
        Some(w) => rec.time().is_some_and(|t| w.contains(&t)),
    }
}

/// Parse every line of `block`, calling `on_ok(rel_line, record)` for good ones (in
/// the time window).
pub fn parse_block<'a>(
    format: &'a Format,
    block: &'a Block,
    keep_bad: bool,
    mut on_ok: impl FnMut(u64, &Record<'a>),
) -> LinePartial {
    let mut parser = LineParser::new(format);
    let mut rec = Record::new(format);
    let mut part = LinePartial::default();
    // Where a fragment cut off by damaged input ends: it is malformed, however it looks.
    let fragment_end = (block.cut_tail && !block.data.ends_with(b"\n"))
        .then(|| block.data.as_ptr() as usize + block.data.len());
    for (i, line) in block.lines().enumerate() {
        let result = if fragment_end == Some(line.as_ptr() as usize + line.len()) {
            Err(Reason::Truncated)
        } else {
            parser.parse(line, &mut rec)
        };
        match result {
            Ok(()) => {
                part.stats.ok();
                if in_window(&rec) {
                    on_ok(i as u64, &rec);
                } else {
                    part.stats.outside();
                }
            }
            Err(reason) => {
                part.stats.bad(reason);
                if keep_bad {
                    part.bad.push(BadLine {
                        rel_line: i as u64,
                        reason,
                        bytes: line.to_vec(),
                    });
                }
            }
        }
    }
    part
}

/// Inputs opened, with the format to read them.
#[derive(Debug)]
pub struct Prepared {
    /// Inputs in order (errors kept to be reported by name).
    pub inputs: Vec<Result<Input, String>>,
    /// Their names.
    pub names: Vec<String>,
    /// The format.
    pub format: Format,
    /// `--state`: the locked state and what to read of each input.
    pub state: Option<(crate::state::Session, Vec<crate::state::ReadPlan>)>,
}

/// Open every input and settle the format (`auto` looks at the first lines).
pub fn prepare(cfg: &InputConfig) -> Result<Prepared> {
    let (names, mut inputs, state) = match &cfg.state {
        None => (
            cfg.files.clone(),
            cfg.files
                .iter()
                .map(|name| Input::open(name).map_err(|e| format!("cannot open: {e}")))
                .collect::<Vec<_>>(),
            None,
        ),
        Some(sc) => {
            let session = crate::state::Session::open(sc)?;
            let plans = session.plan(&cfg.files);
            for p in &plans {
                if p.lossy || (!cfg.quiet && p.start > 0) || (!cfg.quiet && p.is_rotated_sibling())
                {
                    eprintln!(
                        "tlsgap: {}: {} (from byte {})",
                        escape::terminal(&p.path),
                        p.reason,
                        p.start
                    );
                }
            }
            let inputs = plans
                .iter()
                .map(|p| p.open().map_err(|e| format!("cannot open: {e}")))
                .collect();
            let names = plans.iter().map(|p| p.path.clone()).collect();
            (names, inputs, Some((session, plans)))
        }
    };
    let wa = &cfg.window;
    if wa.since.is_some() || wa.until.is_some() {
        let (w, zone) = wa.resolve()?;
        if !cfg.quiet {
            eprintln!("tlsgap: time window {}", w.describe(&zone));
        }
        let _ = WINDOW.set(w);
    }
    for (name, input) in names.iter().zip(&inputs) {
        if let Err(e) = input {
            eprintln!("tlsgap: {}: {e}", escape::terminal(name));
        }
    }
    if inputs.iter().all(Result::is_err) {
        bail!("no input could be opened");
    }
    let format = if cfg.log_format == "auto" {
        auto_format(&mut inputs, &names, cfg.quiet)?
    } else {
        Format::compile(&cfg.log_format).map_err(|e| anyhow::anyhow!("--log-format: {e}"))?
    };
    if WINDOW.get().is_some() && !format.has(Role::Time) {
        bail!("--since/--until need a time in the log format (%t, $time_local, $time_iso8601)");
    }
    Ok(Prepared {
        inputs,
        names,
        format,
        state,
    })
}

fn auto_format(
    inputs: &mut [Result<Input, String>],
    names: &[String],
    quiet: bool,
) -> Result<Format> {
    for (input, name) in inputs.iter_mut().zip(names) {
        let Ok(input) = input else { continue };
        let head = input.peek(DETECT_BYTES);
        if head.is_empty() {
            continue;
        }
        // Drop a final partial line unless it is all there is.
        let complete = match memchr::memrchr(b'\n', head) {
            Some(p) if head.len() == DETECT_BYTES => head.get(..p).unwrap_or(head),
            _ => head,
        };
        let lines: Vec<&[u8]> = complete
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .take(DETECT_LINES)
            .collect();
        if lines.is_empty() {
            continue;
        }
        match detect(&lines) {
            Some(d) => {
                if !quiet {
                    eprintln!(
                        "tlsgap: log format: {} (auto-detected from {}: {} of the first {} lines fit; \
                         use --log-format to choose)",
                        d.preset,
                        escape::terminal(name),
                        d.parsed,
                        d.sampled
                    );
                }
                return Ok(d.format);
            }
            None => {
                let first = lines.first().copied().unwrap_or(b"");
                let shown = tlsgap_parser::lossless_text(first);
                bail!(
                    "no preset log format fits {}; its first line is:\n  {}\n\
                     pass your server's format with --log-format, e.g.\n  \
                     --log-format 'LogFormat \"%h %l %u %t \\\"%r\\\" %>s %b %{{SSL_PROTOCOL}}x %{{SSL_CIPHER}}x\" name'",
                    escape::terminal(name),
                    escape::terminal(&shown)
                );
            }
        }
    }
    // Nothing to read at all: any format does.
    Format::compile("combinedssl").map_err(|e| anyhow::anyhow!("{e}"))
}

/// Receives malformed lines in order: writes `--invalid-lines`, enforces `--strict`.
#[derive(Debug)]
pub struct BadLineSink {
    out: Option<BufWriter<File>>,
    strict: bool,
    /// The first malformed line under `--strict`: (file, line, reason).
    pub strict_hit: Option<(String, u64, Reason)>,
}

impl BadLineSink {
    /// Open `--invalid-lines` if given.
    pub fn new(cfg: &InputConfig) -> Result<BadLineSink> {
        let out = match &cfg.invalid_lines {
            Some(p) => Some(BufWriter::new(File::create(p).with_context(|| {
                format!("creating --invalid-lines file {}", p.display())
            })?)),
            None => None,
        };
        Ok(BadLineSink {
            out,
            strict: cfg.strict,
            strict_hit: None,
        })
    }

    /// Whether malformed lines must be kept by the workers.
    pub fn wants_lines(&self) -> bool {
        self.out.is_some() || self.strict
    }

    /// Take a block's malformed lines; `false` means stop (strict).
    pub fn take(&mut self, names: &[String], meta: BlockMeta, bad: &[BadLine]) -> Result<bool> {
        let name = names.get(meta.input).map_or("-", String::as_str);
        for b in bad {
            let line = meta.line_base + b.rel_line + 1;
            if let Some(out) = self.out.as_mut() {
                // FILE<TAB>LINE<TAB>REASON<TAB>the line verbatim
                write!(out, "{name}\t{line}\t{}\t", b.reason)?;
                out.write_all(&b.bytes)?;
                out.write_all(b"\n")?;
            }
            if self.strict {
                self.strict_hit = Some((name.to_string(), line, b.reason));
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Under `--strict`, say where the first malformed line is; true if there was one.
    pub fn report_strict_hit(&self) -> bool {
        match &self.strict_hit {
            Some((file, line, reason)) => {
                eprintln!(
                    "tlsgap: {}:{line}: malformed line ({reason}); stopping (--strict)",
                    escape::terminal(file)
                );
                true
            }
            None => false,
        }
    }

    /// Flush the file.
    pub fn finish(&mut self) -> Result<()> {
        if let Some(out) = self.out.as_mut() {
            out.flush().context("writing --invalid-lines")?;
        }
        Ok(())
    }
}

/// Run a line job: the engine with bad-line handling. `merge` receives each block's
/// job-specific result in order.
pub fn run_job<J>(
    cfg: &InputConfig,
    prepared: Prepared,
    job: &J,
    bad_sink: &mut BadLineSink,
    stats: &mut LineStats,
    mut merge: impl FnMut(BlockMeta, J::Out) -> Result<()>,
) -> Result<Vec<InputOutcome>>
where
    J: Job,
    J::Out: HasLines,
{
    let mut failure: Option<anyhow::Error> = None;
    let names = prepared.names.clone();
    let progress = crate::progress::Progress::start(cfg.quiet, &prepared);
    let hold_tail: Vec<bool> = match &prepared.state {
        Some((_, plans)) => plans.iter().map(|p| !p.include_unterminated_tail).collect(),
        None => vec![false; names.len()],
    };
    let mut stopped = false;
    let outcomes = engine::run(
        prepared.inputs,
        &names,
        &hold_tail,
        cfg.jobs,
        job,
        |meta, mut out| {
            let lines = out.take_lines();
            stats.merge(&lines.stats);
            let go_on = bad_sink.take(&names, meta, &lines.bad);
            let merged = merge(meta, out);
            let go = match (go_on, merged) {
                (Ok(go), Ok(())) => go,
                (Err(e), _) | (_, Err(e)) => {
                    failure = Some(e);
                    false
                }
            };
            stopped |= !go;
            go
        },
    );
    drop(progress);
    if let Some(e) = failure {
        return Err(e);
    }
    bad_sink.finish()?;
    // Remember how far each input was read, unless the run stopped early (the reader
    // may then be ahead of what was counted).
    if let (Some((mut session, plans)), false) = (prepared.state, stopped) {
        for (plan, outcome) in plans.iter().zip(&outcomes) {
            if outcome.opened {
                session.record(plan, outcome.bytes);
            }
        }
        session.save()?;
    }
    Ok(outcomes)
}

/// Report input errors on stderr and turn outcomes into report rows.
pub fn input_reports(outcomes: &[InputOutcome]) -> Vec<InputReport> {
    outcomes
        .iter()
        .map(|o| {
            if o.opened {
                if let Some(e) = &o.error {
                    eprintln!("tlsgap: {}: {e}", escape::terminal(&o.name));
                }
            }
            InputReport {
                name: o.name.clone(),
                lines: o.lines,
                error: o.error.clone(),
            }
        })
        .collect()
}

/// One line: lines read, parsed, malformed by reason, from which inputs.
pub fn summary_line(stats: &LineStats, inputs: &[InputReport]) -> String {
    let mut s = format!(
        "lines: {} read, {} parsed, {} malformed",
        stats.total,
        stats.parsed,
        stats.malformed_total()
    );
    let reasons: Vec<String> = Reason::ALL
        .iter()
        .filter(|r| stats.malformed[r.index()] > 0)
        .map(|r| format!("{} {}", r.as_str(), stats.malformed[r.index()]))
        .collect();
    if !reasons.is_empty() {
        s.push_str(&format!(" ({})", reasons.join(", ")));
    }
    let names: Vec<String> = inputs
        .iter()
        .map(|i| {
            let n = escape::terminal(&i.name).into_owned();
            let n = if n == "-" { "stdin".to_string() } else { n };
            if i.error.is_some() {
                format!("{n} [error]")
            } else {
                n
            }
        })
        .collect();
    s.push_str(&format!(" from {}", names.join(", ")));
    s
}

/// The exit code: 1 when an input could not be read or `--strict` hit a malformed
/// line, else 0 (2 is decided earlier: usage errors, nothing to process).
pub fn exit_code(inputs: &[InputReport], strict_hit: bool) -> u8 {
    u8::from(strict_hit || inputs.iter().any(|i| i.error.is_some()))
}
