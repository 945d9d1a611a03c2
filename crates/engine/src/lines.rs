//! What every analysis of access logs shares: opening the inputs, settling the format,
//! the per-line loop with the time window and malformed-line accounting,
//! `--invalid-lines`, `--strict`, `--state` bookkeeping and the summary line.

use std::fs::File;
use std::io::{BufWriter, Write};

use tlsgap_agg::{InputReport, LineStats};
use tlsgap_parser::detect::detect;
use tlsgap_parser::{Escaping, Format, LineParser, Reason, Record, Role};

use crate::input::{path_text, Compression, Input};
use crate::runner::{self, Block, BlockMeta, InputOutcome, Job, Opening, Source};
use crate::state::{ReadPlan, Session};
use crate::window::Window;
use crate::{bail, err, Context, Notes, Result, RunOptions};
use std::path::{Path, PathBuf};

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
        let mut too_long = block.too_long.iter().copied().peekable();
        let mut lines = block.lines();
        let mut i = 0usize;
        while let Some(line) = lines.next() {
            let result = if fragment_end == Some(line.as_ptr() as usize + line.len()) {
                Err(Reason::Truncated)
            } else if too_long.next_if_eq(&(i as u64)).is_some() || line.len() > block.max_line {
                // Cut by the reader or not (a long line read whole within a block): the
                // same line is too long however the input was cut.
                Err(Reason::TooLong)
            } else if lines.had_nul() && format.escaping != Escaping::None {
                // Damage, however well the rest of it reads: a NUL run inside a quoted
                // value, or one that swallowed the ends of lines and left the head of
                // one record before the tail of a later one (both parsed before).
                // nginx `escape=none` writes the NUL of a request it refused as it
                // came (a TLS ClientHello sent to the plain port): kept there.
                Err(Reason::Binary)
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
                            // A too-long line is kept to the cap, as the reader cuts it.
                            bytes: line.get(..block.max_line).unwrap_or(line).to_vec(),
                        });
                    }
                }
            }
            i += 1;
        }
        part
    }
}

/// Inputs to read (opened as the reader reaches them), with the format to read them.
#[derive(Debug)]
pub struct Prepared {
    /// Inputs in order.
    pub sources: Vec<Source>,
    /// Their names.
    pub names: Vec<String>,
    /// The format.
    pub format: Format,
    /// `--state`: the locked state and what to read of each input.
    pub state: Option<(Session, Vec<ReadPlan>)>,
    /// The time window.
    pub window: Option<Window>,
    /// The line cap.
    pub max_line: usize,
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
        for source in &self.sources {
            match &source.opening {
                Opening::Failed(_) => {}
                Opening::Ready(i) if i.compression != Compression::None => return None,
                Opening::Ready(_) => return None,
                Opening::Later { path, .. } if path.as_os_str() == "-" => return None,
                Opening::Later { path, .. } => {
                    let meta = std::fs::metadata(path).ok()?;
                    if !meta.is_file() || Compression::of_file(path) != Compression::None {
                        return None;
                    }
                    total += meta.len();
                }
            }
        }
        Some(total)
    }
}

/// The inputs as given, each file once: a second spelling of a file already listed
/// (`./access.log` and `access.log`, a glob overlapping a name, a hard link) is left
/// out with a note; standard input is read once too.
pub fn distinct_inputs(inputs: &[PathBuf], notes: &Notes) -> Vec<PathBuf> {
    let mut seen: Vec<((u64, u64), String)> = Vec::new();
    let mut stdin = false;
    let mut out = Vec::with_capacity(inputs.len());
    for path in inputs {
        let name = path_text(path);
        if name == "-" {
            if stdin {
                notes.warn("standard input (-) given twice: read once".to_string());
                continue;
            }
            stdin = true;
            out.push(path.clone());
            continue;
        }
        if let Some(id) = crate::clash::file_id(path) {
            if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
                notes.warn(format!(
                    "{name} is the same file as {first}: read once (given twice?)"
                ));
                continue;
            }
            seen.push((id, name));
        }
        out.push(path.clone());
    }
    out
}

/// Settle the inputs and the format (`auto` looks at the first lines). Inputs are
/// checked here (one at a time, closed again) so that a run where none can be read
/// fails at once; they are opened for reading when the reader reaches them.
pub fn prepare(opts: &RunOptions) -> Result<Prepared> {
    let notes = &opts.notes;
    let inputs = distinct_inputs(&opts.inputs, notes);
    let (names, mut sources, state) = match &opts.state {
        None => {
            let sources = inputs
                .iter()
                .map(|path| Source {
                    name: path_text(path),
                    opening: Opening::Later {
                        path: path.clone(),
                        start: 0,
                    },
                    hold_tail: false,
                    first_line: 0,
                })
                .collect::<Vec<_>>();
            let names: Vec<String> = sources.iter().map(|s| s.name.clone()).collect();
            (names, sources, None)
        }
        Some(sc) => {
            let session = Session::open(sc)?;
            let plans = session.plan(&inputs);
            for p in &plans {
                let text = format!(
                    "{}: {} (from byte {})",
                    path_text(&p.path),
                    p.reason,
                    p.start
                );
                if p.lossy {
                    notes.warn(text);
                } else if p.start > 0 || p.is_rotated_sibling() {
                    notes.info(text);
                }
            }
            let sources = plans
                .iter()
                .map(|p| Source {
                    name: path_text(&p.path),
                    opening: Opening::Later {
                        path: p.path.clone(),
                        start: p.start,
                    },
                    hold_tail: !p.include_unterminated_tail,
                    first_line: p.first_line,
                })
                .collect();
            let names: Vec<String> = plans.iter().map(|p| path_text(&p.path)).collect();
            (names, sources, Some((session, plans)))
        }
    };
    // Which inputs cannot be opened, one at a time (no descriptor kept).
    for s in &mut sources {
        if let Opening::Later { path, .. } = &s.opening {
            if path.as_os_str() != "-" {
                if let Err(e) = crate::input::check_readable(path) {
                    s.opening = Opening::Failed(format!("cannot open: {e}"));
                }
            }
        }
    }
    if sources
        .iter()
        .all(|s| matches!(s.opening, Opening::Failed(_)))
    {
        let mut why = Vec::new();
        for s in &sources {
            if let Opening::Failed(e) = &s.opening {
                notes.warn(format!("{}: {e}", s.name));
                why.push(format!("{}: {e}", s.name));
            }
        }
        // The reasons in the error too: a monitoring check shows only its own line,
        // not the warnings before it (`check missing.log` said nothing of the file).
        let shown = why.len().min(3);
        let mut text = why[..shown].join("; ");
        if why.len() > shown {
            text.push_str(&format!("; {} more", why.len() - shown));
        }
        return Err(err!("no input could be opened ({text})").with_kind(crate::ErrorKind::NoInput));
    }
    let format = if opts.log_format == "auto" {
        auto_format(&mut sources, &names, opts.max_line_bytes, notes)?
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
        sources,
        names,
        format,
        state,
        window,
        max_line: opts.max_line_bytes,
    })
}

/// The first lines of `input` for detection: at least [`DETECT_LINES`] complete lines
/// when the input has them, looking further than [`DETECT_BYTES`] when the first
/// lines are long (a huge cookie or User-Agent), up to a few lines' worth of the line
/// cap. Lines longer than the cap are left out, as the run will leave them.
fn detection_lines(input: &mut Input, max_line: usize) -> Vec<Vec<u8>> {
    let limit = max_line.saturating_mul(4).max(DETECT_BYTES);
    let mut window = DETECT_BYTES;
    loop {
        let head = input.peek(window);
        let full = head.len() == window;
        // Drop a final partial line unless it is all there is.
        let complete = match memchr::memrchr(b'\n', head) {
            Some(p) if full => head.get(..p).unwrap_or(head),
            None if full => &[][..],
            _ => head,
        };
        let lines: Vec<Vec<u8>> = complete
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty() && l.len() <= max_line)
            .take(DETECT_LINES)
            .map(<[u8]>::to_vec)
            .collect();
        if !full || lines.len() >= DETECT_LINES || window >= limit {
            return lines;
        }
        window = window.saturating_mul(4).min(limit);
    }
}

fn auto_format(
    sources: &mut [Source],
    names: &[String],
    max_line: usize,
    notes: &Notes,
) -> Result<Format> {
    for (source, name) in sources.iter_mut().zip(names) {
        let opening = std::mem::replace(&mut source.opening, Opening::Failed(String::new()));
        // How to reach the input again without holding it open.
        let (mut input, again) = match opening {
            Opening::Later { path, start } => match Input::open_at(&path, start) {
                Ok(i) => (i, Opening::Later { path, start }),
                Err(_) => {
                    // Reported by name when the reader gets to it.
                    source.opening = Opening::Later { path, start };
                    continue;
                }
            },
            Opening::Ready(i) => {
                source.opening = Opening::Ready(i);
                continue;
            }
            failed @ Opening::Failed(_) => {
                source.opening = failed;
                continue;
            }
        };
        input.skip_hole();
        let lines = detection_lines(&mut input, max_line);
        if input.peek(1).is_empty() {
            // Nothing to tell from: reopened when the reader reaches it (standard
            // input cannot be, and is at its end anyway).
            source.opening = if input.name == "-" {
                Opening::Ready(input)
            } else {
                again
            };
            continue;
        }
        if lines.is_empty() {
            bail!(
                "no preset log format fits {name}: its first line is longer than the line cap \
                 ({max_line} bytes, --max-line-bytes)"
            );
        }
        source.opening = Opening::Ready(input);
        let refs: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
        match detect(&refs) {
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
                let first = refs.first().copied().unwrap_or(b"");
                let shown = tlsgap_parser::lossless_text(first);
                bail!(
                    "no preset log format fits {name}; its first line is:\n  {shown}\n{}",
                    inferred_advice(&refs)
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
    /// `--invalid-lines` as shown in messages.
    shown: String,
    strict: bool,
    /// The first malformed line under `--strict`.
    pub strict_hit: Option<StrictHit>,
}

impl BadLineSink {
    /// Open `--invalid-lines` if given.
    pub fn new(opts: &RunOptions) -> Result<BadLineSink> {
        let out = match &opts.invalid_lines {
            Some(p) => Some(BufWriter::new(open_lines_file(p).with_context(|| {
                format!("creating --invalid-lines file {}", p.display())
            })?)),
            None => None,
        };
        Ok(BadLineSink {
            out,
            shown: opts
                .invalid_lines
                .as_deref()
                .map(crate::input::path_text)
                .unwrap_or_default(),
            strict: opts.strict,
            strict_hit: None,
        })
    }

    /// A sink that neither writes nor stops.
    pub fn none() -> BadLineSink {
        BadLineSink {
            out: None,
            shown: String::new(),
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
                write!(out, "{name}\t{line}\t{}\t", b.reason)
                    .and_then(|()| out.write_all(&b.bytes))
                    .and_then(|()| out.write_all(b"\n"))
                    .with_context(|| format!("writing --invalid-lines file {}", self.shown))?;
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

    /// Flush the file, and to disk when it is a regular file: `--state` is saved
    /// only after it.
    pub fn finish(&mut self) -> Result<()> {
        if let Some(out) = self.out.as_mut() {
            let shown = &self.shown;
            let what = || format!("writing --invalid-lines file {shown}");
            out.flush().with_context(what)?;
            let file = out.get_ref();
            if file.metadata().is_ok_and(|m| m.is_file()) {
                file.sync_all().with_context(what)?;
            }
        }
        Ok(())
    }
}

/// Open the `--invalid-lines` file. A standard stream's name (`/dev/stderr`,
/// `/dev/fd/1`, ...) is the process's own descriptor, duplicated: opening the name anew
/// would truncate the file the stream was redirected to (`2>> cron.log` lost the
/// log's earlier lines) or write over it from its start.
fn open_lines_file(p: &Path) -> std::io::Result<File> {
    use std::os::fd::AsFd;
    let inherited = match p.to_str() {
        Some("/dev/stdout" | "/dev/fd/1" | "/proc/self/fd/1") => {
            Some(std::io::stdout().as_fd().try_clone_to_owned())
        }
        Some("/dev/stderr" | "/dev/fd/2" | "/proc/self/fd/2") => {
            Some(std::io::stderr().as_fd().try_clone_to_owned())
        }
        _ => None,
    };
    match inherited {
        Some(fd) => Ok(File::from(fd?)),
        None => File::create(p),
    }
}

/// What a line job found about its inputs, beyond its own result.
#[derive(Debug, Default)]
pub struct RunSummary {
    /// Line counts.
    pub stats: LineStats,
    /// Each input, with what went wrong reading it.
    pub inputs: Vec<InputReport>,
    /// `--strict` stopped here; the figures then cover only the lines of the blocks
    /// before the one holding it (none after it; an export to standard output has
    /// written those blocks' rows).
    pub strict_hit: Option<StrictHit>,
    /// `--state`: what this run read, recorded only by [`RunSummary::commit_state`]
    /// once every output is durably written.
    pub state: Option<Session>,
}

impl RunSummary {
    /// Save the `--state` of this run (no-op without one): call it after every output
    /// of the run has been written, so that a result that could not be written is
    /// never recorded as delivered.
    pub fn commit_state(&mut self) -> Result<()> {
        match self.state.take() {
            Some(session) => session.save(),
            None => Ok(()),
        }
    }

    /// Whether a `--state` is waiting for [`RunSummary::commit_state`].
    pub fn state_pending(&self) -> bool {
        self.state.is_some()
    }

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
    // Lines of each input that fit the format and that did not (a file of another
    // format among the inputs is named: its lines are otherwise only in the run's
    // malformed count).
    let mut fitting = vec![(0u64, 0u64); names.len()];
    if let Some(p) = &opts.progress {
        p.start(prepared.total_bytes());
    }
    let mut stopped = false;
    let outcomes = runner::run(
        prepared.sources,
        opts.jobs,
        opts.progress.as_deref(),
        prepared.max_line,
        job,
        |meta, mut out| {
            let lines = out.take_lines();
            stats.merge(&lines.stats);
            if let Some((parsed, malformed)) = fitting.get_mut(meta.input) {
                *parsed += lines.stats.parsed;
                *malformed += lines.stats.malformed_total();
            }
            let go_on = bad_sink.take(&names, meta, &lines.bad);
            // The block holding the line `--strict` stops at is not merged: nothing at
            // or after that line reaches a result (an export to standard output wrote
            // the whole block, the rows after the line included).
            let merged = match go_on {
                Ok(true) => merge(meta, out),
                _ => Ok(()),
            };
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
    // What was read of each input, to be saved once the outputs are written; not when
    // the run stopped early (the reader may then be ahead of what was counted).
    let state = match (prepared.state, stopped) {
        (Some((mut session, plans)), false) => {
            for (plan, outcome) in plans.iter().zip(&outcomes) {
                if outcome.opened {
                    session.record(plan, outcome.bytes, outcome.lines);
                }
            }
            Some(session)
        }
        _ => None,
    };
    let inputs = input_reports(&outcomes, &fitting, &opts.notes);
    let strict_hit = bad_sink.strict_hit.clone();
    if let Some(hit) = &strict_hit {
        opts.notes.warn(hit.to_string());
    }
    if let Some(why) = empty_window(&stats) {
        opts.notes.warn(why);
    }
    for why in outcomes.iter().filter_map(hole_note) {
        opts.notes.warn(why);
    }
    if stats.parsed > 0 && !stopped {
        for (o, (fit, _)) in outcomes.iter().zip(&fitting) {
            if let Some(why) = few_fit(o, *fit) {
                opts.notes.warn(why);
            }
        }
    }
    if stats.total > 0 && stats.parsed == 0 && strict_hit.is_none() {
        return Err(err!(
            "nothing could be processed: {}",
            summary_line(&stats, &inputs)
        )
        .with_kind(crate::ErrorKind::NoInput));
    }
    Ok(RunSummary {
        stats,
        inputs,
        strict_hit,
        state,
    })
}

/// When fewer than half the lines of one input fit the format (while others' do):
/// what to say. A log of another format among the inputs (another virtual host's
/// `LogFormat`, an nginx JSON log next to Apache's) is then named, not only counted
/// in the run's malformed lines.
fn few_fit(outcome: &InputOutcome, fit: u64) -> Option<String> {
    (outcome.opened && outcome.lines > 0 && fit.saturating_mul(2) < outcome.lines).then(|| {
        format!(
            "{}: only {fit} of its {} lines fit the log format; a log written in \
             another format needs a run of its own (or --log-format)",
            outcome.name, outcome.lines
        )
    })
}

/// When an input started with NUL bytes ([`crate::input::Input::skip_hole`]): what to
/// say. The lines after them were read; the hole says the log was truncated in place
/// under a writer that does not append, and how much of the file is that hole.
fn hole_note(outcome: &InputOutcome) -> Option<String> {
    (outcome.hole > 0).then(|| {
        format!(
            "{}: skipped {} NUL bytes where it starts (a log truncated in place, as \
             logrotate's copytruncate does, while its writer kept its old offset: it does \
             not append); the lines after them were read",
            outcome.name, outcome.hole
        )
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

/// Turn outcomes (and each input's lines that fit and did not, in `fitting`) into
/// report rows, with a warning for each input that failed after it was opened
/// (failures to open were noted by [`prepare`]).
fn input_reports(
    outcomes: &[InputOutcome],
    fitting: &[(u64, u64)],
    notes: &Notes,
) -> Vec<InputReport> {
    outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| {
            if let Some(e) = &o.error {
                notes.warn(format!("{}: {e}", o.name));
            }
            InputReport {
                name: o.name.clone(),
                lines: o.lines,
                malformed: Some(fitting.get(i).map_or(0, |f| f.1)),
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
            let mut n = if i.name == "-" {
                "stdin".to_string()
            } else {
                i.name.clone()
            };
            if let Some(m) = i.malformed_to_name(inputs.len()) {
                n.push_str(&format!(" [{m} malformed]"));
            }
            if i.error.is_some() {
                n.push_str(" [error]");
            }
            n
        })
        .collect();
    s.push_str(&format!(" from {}", names.join(", ")));
    s
}
