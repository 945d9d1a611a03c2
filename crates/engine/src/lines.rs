//! What every analysis of access logs shares: opening the inputs, settling the format,
//! the per-line loop with the time window and malformed-line accounting,
//! `--invalid-lines`, `--strict`, `--state` bookkeeping and the summary line.

use std::fs::File;
use std::io::{BufWriter, Write};

use tlsgap_agg::{InputReport, LineStats};
use tlsgap_parser::detect::detect;
use tlsgap_parser::{Format, LineParser, Reason, Record, Role};

use crate::input::{Compression, Input};
use crate::runner::{self, Block, BlockMeta, InputOutcome, Job};
use crate::state::{ReadPlan, Session};
use crate::window::Window;
use crate::{bail, err, Context, Notes, Result, RunOptions};

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
macro_rules! has_lines {
    ($($t:ty),*) => {$(
        impl $crate::lines::HasLines for $t {
            fn take_lines(&mut self) -> $crate::lines::LinePartial {
                std::mem::take(&mut self.lines)
            }
        }
    )*};
}
pub(crate) use has_lines;

/// The per-line loop of one run: the format, the time window and whether malformed
/// lines are kept. Jobs hold one and call [`LineLoop::parse_block`].
#[derive(Debug, Clone, Copy)]
pub struct LineLoop<'a> {
    /// The compiled format.
    pub format: &'a Format,
    /// Only lines inside it are handed on.
    pub window: Option<&'a Window>,
    /// Keep malformed lines (for `--invalid-lines` / `--strict`).
    pub keep_bad: bool,
}

impl<'a> LineLoop<'a> {
    /// The loop for `format` and `window`, keeping malformed lines when `bad` wants them.
    pub fn new(format: &'a Format, window: Option<&'a Window>, bad: &BadLineSink) -> Self {
        LineLoop {
            format,
            window,
            keep_bad: bad.wants_lines(),
        }
    }

    /// Whether `rec` falls in the window (no window: always). A line without a time is
    /// outside any window.
    #[inline]
    fn in_window(&self, rec: &Record<'_>) -> bool {
        match self.window {
            None => true,
            Some(w) => rec.time().is_some_and(|t| w.contains(&t)),
        }
    }

    /// Parse every line of `block`, calling `on_ok(rel_line, record)` for good ones
    /// inside the window.
    pub fn parse_block(
        &self,
        block: &'a Block,
        mut on_ok: impl FnMut(u64, &Record<'a>),
    ) -> LinePartial {
        let format = self.format;
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
                    if self.in_window(&rec) {
                        on_ok(i as u64, &rec);
                    } else {
                        part.stats.outside();
                    }
                }
                Err(reason) => {
                    part.stats.bad(reason);
                    if self.keep_bad {
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
    pub state: Option<(Session, Vec<ReadPlan>)>,
    /// The time window.
    pub window: Option<Window>,
}

impl Prepared {
    /// The line loop for this run's format and window.
    pub fn line_loop(&self, keep_bad: bool) -> LineLoop<'_> {
        LineLoop {
            format: &self.format,
            window: self.window.as_ref(),
            keep_bad,
        }
    }

    /// The total decompressed size when every input is a plain regular file.
    fn total_bytes(&self) -> Option<u64> {
        let mut total = 0;
        for (name, input) in self.names.iter().zip(&self.inputs) {
            match input {
                Ok(i) if i.compression == Compression::None && name != "-" => {
                    total += std::fs::metadata(name).ok()?.len();
                }
                Ok(_) => return None,
                Err(_) => {}
            }
        }
        Some(total)
    }
}

/// Open every input and settle the format (`auto` looks at the first lines).
pub fn prepare(opts: &RunOptions) -> Result<Prepared> {
    let notes = &opts.notes;
    let (names, mut inputs, state) = match &opts.state {
        None => (
            opts.inputs.clone(),
            opts.inputs
                .iter()
                .map(|name| Input::open(name).map_err(|e| format!("cannot open: {e}")))
                .collect::<Vec<_>>(),
            None,
        ),
        Some(sc) => {
            let session = Session::open(sc)?;
            let plans = session.plan(&opts.inputs);
            for p in &plans {
                let text = format!("{}: {} (from byte {})", p.path, p.reason, p.start);
                if p.lossy {
                    notes.warn(text);
                } else if p.start > 0 || p.is_rotated_sibling() {
                    notes.info(text);
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
    for (name, input) in names.iter().zip(&inputs) {
        if let Err(e) = input {
            notes.warn(format!("{name}: {e}"));
        }
    }
    if inputs.iter().all(Result::is_err) {
        return Err(err!("no input could be opened").with_kind(crate::ErrorKind::NoInput));
    }
    let format = if opts.log_format == "auto" {
        auto_format(&mut inputs, &names, notes)?
    } else {
        Format::compile(&opts.log_format).map_err(|e| err!("--log-format: {e}"))?
    };
    let opaque: Vec<&str> = format
        .fields
        .iter()
        .filter(|f| f.opaque)
        .map(|f| f.directive.as_str())
        .collect();
    if !opaque.is_empty() {
        opts.notes.info(format!(
            "log format: {} read as opaque text (directives of third-party modules)",
            opaque.join(", ")
        ));
    }
    let window = opts.window.filter(|w| !w.is_all());
    if window.is_some() && !format.has(Role::Time) {
        bail!("--since/--until need a time in the log format (%t, $time_local, $time_iso8601)");
    }
    Ok(Prepared {
        inputs,
        names,
        format,
        state,
        window,
    })
}

fn auto_format(
    inputs: &mut [Result<Input, String>],
    names: &[String],
    notes: &Notes,
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
                // A variant is not a name --log-format knows: show it ready to paste.
                let paste = match d.variant {
                    Some(text) if text.starts_with("log_format") => format!("; {text}"),
                    Some(text) => format!("; LogFormat \"{}\"", text.replace('"', "\\\"")),
                    None => String::new(),
                };
                notes.info(format!(
                    "log format: {} (auto-detected from {name}: {} of the first {} lines fit; \
                     use --log-format to choose){paste}",
                    d.preset, d.parsed, d.sampled
                ));
                return Ok(d.format);
            }
            None => {
                let first = lines.first().copied().unwrap_or(b"");
                let shown = tlsgap_parser::lossless_text(first);
                bail!(
                    "no preset log format fits {name}; its first line is:\n  {shown}\n{}",
                    inferred_advice(&lines)
                );
            }
        }
    }
    // Nothing to read at all: any format does.
    Format::compile("combinedssl").map_err(|e| err!("{e}"))
}

/// What to say when no preset fits: the format inferred from the first lines, ready to
/// paste, or an example.
fn inferred_advice(lines: &[&[u8]]) -> String {
    match tlsgap_parser::infer::infer(lines) {
        Some(i) if i.fits > 0 => {
            let directive = i.directive();
            let quoted = if directive.contains('\'') {
                let escaped: String = directive
                    .chars()
                    .flat_map(|c| match c {
                        '"' | '$' | '\\' | '`' => vec!['\\', c],
                        c => vec![c],
                    })
                    .collect();
                format!("\"{escaped}\"")
            } else {
                format!("'{directive}'")
            };
            let mut out = format!(
                "a format inferred from the first {} lines fits {} of them; check it against \
                 the server's configuration and pass it (or the real one):\n  --log-format {quoted}",
                i.sampled, i.fits
            );
            if let Some((p, c)) = i.tls_fields {
                out.push_str(&format!(
                    "\nthe TLS protocol and cipher are fields {p} and {c} of every such line: \
                     that pair is all `tls` counts, so its answer holds even where the other \
                     fields are guessed wrong"
                ));
            }
            out
        }
        _ => "pass your server's format with --log-format, e.g.\n  \
              --log-format 'LogFormat \"%h %l %u %t \\\"%r\\\" %>s %b %{SSL_PROTOCOL}x %{SSL_CIPHER}x\" name'"
            .to_string(),
    }
}

/// Where `--strict` stopped: the first malformed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictHit {
    /// The input's name.
    pub file: String,
    /// Its line number (1-based).
    pub line: u64,
    /// Why it did not parse.
    pub reason: Reason,
}

impl std::fmt::Display for StrictHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: malformed line ({}); stopping (--strict)",
            self.file, self.line, self.reason
        )
    }
}

/// Receives malformed lines in order: writes `--invalid-lines`, enforces `--strict`.
#[derive(Debug)]
pub struct BadLineSink {
    out: Option<BufWriter<File>>,
    strict: bool,
    /// The first malformed line under `--strict`.
    pub strict_hit: Option<StrictHit>,
}

impl BadLineSink {
    /// Open `--invalid-lines` if given.
    pub fn new(opts: &RunOptions) -> Result<BadLineSink> {
        let out = match &opts.invalid_lines {
            Some(p) => Some(BufWriter::new(File::create(p).with_context(|| {
                format!("creating --invalid-lines file {}", p.display())
            })?)),
            None => None,
        };
        Ok(BadLineSink {
            out,
            strict: opts.strict,
            strict_hit: None,
        })
    }

    /// A sink that neither writes nor stops.
    pub fn none() -> BadLineSink {
        BadLineSink {
            out: None,
            strict: false,
            strict_hit: None,
        }
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
                self.strict_hit = Some(StrictHit {
                    file: name.to_string(),
                    line,
                    reason: b.reason,
                });
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Flush the file.
    pub fn finish(&mut self) -> Result<()> {
        if let Some(out) = self.out.as_mut() {
            out.flush().context("writing --invalid-lines")?;
        }
        Ok(())
    }
}

/// What a line job found about its inputs, beyond its own result.
#[derive(Debug, Default)]
pub struct RunSummary {
    /// Line counts.
    pub stats: LineStats,
    /// Each input, with what went wrong reading it.
    pub inputs: Vec<InputReport>,
    /// `--strict` stopped here; the figures then cover only the lines before it.
    pub strict_hit: Option<StrictHit>,
}

impl RunSummary {
    /// Whether an input could not be read (completely).
    pub fn input_failed(&self) -> bool {
        self.inputs.iter().any(|i| i.error.is_some())
    }

    /// One line: lines read, parsed, malformed by reason, from which inputs. Input
    /// names are as given: escape them for where the line is shown.
    pub fn line(&self) -> String {
        summary_line(&self.stats, &self.inputs)
    }
}

/// Run a line job over prepared inputs: the runner with bad-line handling, progress and
/// `--state` bookkeeping. `merge` receives each block's job-specific result in order.
pub fn run_job<J>(
    opts: &RunOptions,
    prepared: Prepared,
    job: &J,
    bad_sink: &mut BadLineSink,
    mut merge: impl FnMut(BlockMeta, J::Out) -> Result<()>,
) -> Result<RunSummary>
where
    J: Job,
    J::Out: HasLines,
{
    let mut failure: Option<crate::Error> = None;
    let names = prepared.names.clone();
    let mut stats = LineStats::default();
    if let Some(p) = &opts.progress {
        p.start(prepared.total_bytes());
    }
    let hold_tail: Vec<bool> = match &prepared.state {
        Some((_, plans)) => plans.iter().map(|p| !p.include_unterminated_tail).collect(),
        None => vec![false; names.len()],
    };
    let mut stopped = false;
    let outcomes = runner::run(
        prepared.inputs,
        &names,
        &hold_tail,
        opts.jobs,
        opts.progress.as_deref(),
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
    if let Some(p) = &opts.progress {
        p.finish();
    }
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
    let inputs = input_reports(&outcomes, &opts.notes);
    let strict_hit = bad_sink.strict_hit.clone();
    if let Some(hit) = &strict_hit {
        opts.notes.warn(hit.to_string());
    }
    if let Some(why) = empty_window(&stats) {
        opts.notes.warn(why);
    }
    Ok(RunSummary {
        stats,
        inputs,
        strict_hit,
    })
}

/// When a time window left out every parsed line: what to say (a warning even with
/// `--quiet`: "nothing happened" and "nothing was in the window" must not look alike).
pub fn empty_window(stats: &LineStats) -> Option<String> {
    (stats.parsed > 0 && stats.outside_window >= stats.parsed).then(|| {
        format!(
            "no line inside the time window: all {} parsed lines are outside it",
            stats.parsed
        )
    })
}

/// Turn outcomes into report rows, with a warning for each input that failed after it
/// was opened (failures to open were noted by [`prepare`]).
fn input_reports(outcomes: &[InputOutcome], notes: &Notes) -> Vec<InputReport> {
    outcomes
        .iter()
        .map(|o| {
            if o.opened {
                if let Some(e) = &o.error {
                    notes.warn(format!("{}: {e}", o.name));
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
            let n = if i.name == "-" {
                "stdin".to_string()
            } else {
                i.name.clone()
            };
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
