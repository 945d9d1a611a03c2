//! The parallel engine: one reader thread cuts the inputs into line-aligned blocks,
//! N workers turn blocks into partial results, and the calling thread receives the
//! partials in input order (so ordered merges such as "first request wins" and row
//! outputs stay exact).
//!
//! A plain regular file is not copied by the reader: it hands out byte ranges, and
//! each worker reads its range with positioned reads (`pread`) and owns the lines that
//! start in it. Then no thread spends its time copying for the others, `-j 1` is one
//! busy thread, and the workers scale past what one reader could feed them. Pipes,
//! compressed inputs and jobs that need line numbers while they run go through the
//! reader.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use crate::input::{describe_read_error, Input};
use crate::Progress;

/// Target block size: large enough that per-block costs vanish, small enough that
/// memory stays flat (blocks in flight ≈ 2 per worker).
pub const BLOCK_SIZE: usize = 4 << 20;

/// A line-aligned piece of one input.
#[derive(Debug)]
pub struct Block {
    /// Position in the overall order.
    pub seq: u64,
    /// Index of the input in the list.
    pub input: usize,
    /// Whole lines (the last line of an input may lack its newline).
    pub data: Vec<u8>,
    /// Number of lines in the input before this block, when the job asked for it.
    pub line_base: Option<u64>,
    /// The input broke off (damaged compressed data) inside the block's last line,
    /// which is then a fragment, not a line.
    pub cut_tail: bool,
    /// Indexes (0-based, in the block) of lines cut at the line cap: `too_long`.
    pub too_long: Vec<u64>,
    /// Input bytes the block stands for beyond its data (skipped ends of too-long
    /// lines), so that byte offsets (`--state`) stay those of the input.
    pub skipped: u64,
    /// The line cap: a line longer than this is `too_long` wherever the block was cut
    /// (lines cut at the cap by the reader are listed in `too_long`).
    pub max_line: usize,
}

impl Block {
    /// The lines of the block, without their `\n`.
    pub fn lines(&self) -> Lines<'_> {
        let data = self.data.as_slice();
        Lines {
            rest: data.strip_suffix(b"\n").unwrap_or(data),
            done: data.is_empty(),
            nul: false,
        }
    }
}

/// What a worker is handed: lines the reader cut, or a range to read itself.
#[derive(Debug)]
enum Task {
    Data(Block),
    Range(Range),
}

/// A byte range of a plain file: its block is the lines that *start* in `from..to`
/// (the line running over `to` is read to its end; a line running into `from` is the
/// previous range's).
#[derive(Debug)]
struct Range {
    seq: u64,
    input: usize,
    file: Arc<File>,
    /// Where reading the input starts (a line start).
    start: u64,
    from: u64,
    to: u64,
    /// The end of the input: the file's size when the reader reached it.
    end: u64,
    /// Keep a final line without a newline out ([`Source::hold_tail`]).
    hold_tail: bool,
}

/// Iterator over the lines of a block (memchr, not byte by byte).
#[derive(Debug)]
pub struct Lines<'a> {
    rest: &'a [u8],
    done: bool,
    /// Whether the line last returned holds a NUL byte.
    nul: bool,
}

impl Lines<'_> {
    /// Whether the line last returned holds a NUL byte, which a server that escapes
    /// control bytes (Apache, nginx but with `escape=none`) never writes raw: what a
    /// crash leaves, blocks of zeros that may run over the ends of lines. Found by
    /// the search for the line's end, which looks for both bytes at once (a second
    /// scan of each line's free text for control bytes cost 14 % of `tls`'s
    /// instructions; this one, 1.3 %).
    pub fn had_nul(&self) -> bool {
        self.nul
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.done {
            return None;
        }
        let rest = self.rest;
        let end = match memchr::memchr2(b'\n', 0, rest) {
            Some(p) if rest.get(p) == Some(&0) => {
                self.nul = true;
                rest.get(p..)
                    .and_then(|tail| memchr::memchr(b'\n', tail))
                    .map(|q| p + q)
            }
            found => {
                self.nul = false;
                found
            }
        };
        match end {
            Some(p) => {
                let line = rest.get(..p).unwrap_or(&[]);
                self.rest = rest.get(p + 1..).unwrap_or(&[]);
                Some(line)
            }
            None => {
                self.done = true;
                Some(rest)
            }
        }
    }
}

/// What a worker does with a block.
pub trait Job: Sync {
    /// The partial result of one block.
    type Out: Send;
    /// What one worker keeps from block to block (`()` for most jobs): made once per
    /// worker by [`Job::worker`], lent to each [`Job::run`] of that worker. A worker's
    /// results still reach the sink one block at a time and in order, and a block whose
    /// result is dropped (its input failed before it, or the run stopped) must not leave
    /// anything here that a later result depends on without carrying it itself.
    type Worker: Send;
    /// A new worker's state.
    fn worker(&self) -> Self::Worker;
    /// Whether blocks must carry their line base (rows that print line numbers).
    fn needs_line_base(&self) -> bool {
        false
    }
    /// The size of the blocks to cut.
    fn block_size(&self) -> usize {
        BLOCK_SIZE
    }
    /// Process one block.
    fn run(&self, block: &Block, worker: &mut Self::Worker) -> Self::Out;
    /// The lines of the block, when the result counted them (every line, as
    /// [`Block::lines`] gives them): the runner then does not count them again.
    fn lines_of(&self, _out: &Self::Out) -> Option<u64> {
        None
    }
}

/// What happened to one input.
#[derive(Debug, Clone, Default)]
pub struct InputOutcome {
    /// The input's name.
    pub name: String,
    /// Lines read.
    pub lines: u64,
    /// Why it could not be read (completely).
    pub error: Option<String>,
    /// Whether it could be opened at all.
    pub opened: bool,
    /// Bytes of the blocks delivered (whole lines; for `--state`), with the hole.
    pub bytes: u64,
    /// NUL bytes skipped where it starts ([`Input::skip_hole`]).
    pub hole: u64,
}

/// A block's metadata as the sink sees it.
#[derive(Debug, Clone, Copy)]
pub struct BlockMeta {
    /// Input index.
    pub input: usize,
    /// Lines in the block.
    pub lines: u64,
    /// Lines of the same input before this block.
    pub line_base: u64,
    /// Bytes in the block.
    pub bytes: u64,
}

fn count_lines(data: &[u8]) -> u64 {
    let n = memchr::memchr_iter(b'\n', data).count() as u64;
    n + u64::from(!data.is_empty() && !data.ends_with(b"\n"))
}

/// How an input is reached: opened already (auto-detection peeked at it), opened
/// when the reader gets to it (so that thousands of rotated files never hold more than
/// one descriptor at a time), or not at all.
#[derive(Debug)]
pub enum Opening {
    /// Opened (and maybe peeked at).
    Ready(Input),
    /// To open when reached, at this decompressed byte offset (`--state`).
    Later {
        /// The path (`-` is standard input).
        path: std::path::PathBuf,
        /// Where reading starts.
        start: u64,
    },
    /// Could not be opened: the message.
    Failed(String),
}

/// One input of a run.
#[derive(Debug)]
pub struct Source {
    /// The name reports give it.
    pub name: String,
    /// How it is opened.
    pub opening: Opening,
    /// Keep a final line without a newline out (a live log being written; `--state`
    /// reads it next time).
    pub hold_tail: bool,
    /// Lines of the file before where reading starts (`--state`): line numbers in
    /// messages, `--invalid-lines` and exported rows are the file's own.
    pub first_line: u64,
}

/// Run `job` over `sources` with `jobs` workers; `sink` receives every block's result
/// in order and returns `false` to stop early. Returns what happened to each input.
/// `progress` hears of every read.
pub fn run<J: Job>(
    sources: Vec<Source>,
    jobs: usize,
    progress: Option<&dyn Progress>,
    max_line: usize,
    job: &J,
    sink: impl FnMut(BlockMeta, J::Out) -> bool,
) -> Vec<InputOutcome> {
    let cut = Cutting {
        block_size: job.block_size(),
        max_line: max_line.max(1),
        ranges: !job.needs_line_base(),
    };
    run_cut(sources, jobs, progress, cut, job, sink)
}

/// How inputs are cut into blocks.
#[derive(Debug, Clone, Copy)]
struct Cutting {
    block_size: usize,
    max_line: usize,
    /// Let workers read plain files' ranges themselves.
    ranges: bool,
}

/// What a worker hands back: the block's place, metadata, the job's result (none for
/// a range that holds no line start) and a read error that ended the input in it.
type Done<O> = (u64, BlockMeta, Option<O>, Option<String>);

fn run_cut<J: Job>(
    sources: Vec<Source>,
    jobs: usize,
    progress: Option<&dyn Progress>,
    cut: Cutting,
    job: &J,
    mut sink: impl FnMut(BlockMeta, J::Out) -> bool,
) -> Vec<InputOutcome> {
    let stop = Arc::new(AtomicBool::new(false));
    let outcomes: Arc<Mutex<Vec<InputOutcome>>> = Arc::new(Mutex::new(
        sources
            .iter()
            .map(|s| InputOutcome {
                name: s.name.clone(),
                ..InputOutcome::default()
            })
            .collect(),
    ));
    let first_lines: Vec<u64> = sources.iter().map(|s| s.first_line).collect();
    let workers = jobs.max(1);
    // Blocks waiting for a worker: two per worker, fewer when blocks are larger than
    // the default (the bytes in flight stay about the same).
    let depth = (workers * 2 * BLOCK_SIZE / cut.block_size.max(1)).clamp(workers, workers * 2);
    let (task_tx, task_rx) = mpsc::sync_channel::<Task>(depth);
    let task_rx = Arc::new(Mutex::new(task_rx));
    // Bounded too, so that a slow writer (Parquet compression on this thread) holds the
    // workers back instead of letting finished blocks pile up in memory.
    let (out_tx, out_rx) = mpsc::sync_channel::<Done<J::Out>>(workers * 2);
    let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
    let count = job.needs_line_base();
    std::thread::scope(|s| {
        {
            let stop = Arc::clone(&stop);
            let outcomes = Arc::clone(&outcomes);
            s.spawn(move || {
                read_blocks(
                    sources, task_tx, recycle_rx, &stop, &outcomes, count, progress, cut,
                );
            });
        }
        for _ in 0..workers {
            let rx = Arc::clone(&task_rx);
            let tx = out_tx.clone();
            let recycle = recycle_tx.clone();
            s.spawn(move || work(job, &rx, &tx, &recycle, progress, cut.max_line));
        }
        drop(recycle_tx);
        drop(out_tx);
        let delivered = deliver(&out_rx, &stop, &first_lines, &mut sink);
        if let Ok(mut o) = outcomes.lock() {
            for (i, o) in o.iter_mut().enumerate() {
                let first = first_lines.get(i).copied().unwrap_or(0);
                let lines = delivered.lines.get(i).copied().unwrap_or(first);
                o.lines = lines.saturating_sub(first);
                o.bytes = delivered.bytes.get(i).copied().unwrap_or(0) + o.hole;
                if o.error.is_none() {
                    o.error = delivered.errors.get(i).cloned().flatten();
                }
            }
        }
    });
    outcomes.lock().map(|o| o.clone()).unwrap_or_default()
}

fn work<J: Job>(
    job: &J,
    rx: &Mutex<Receiver<Task>>,
    tx: &SyncSender<Done<J::Out>>,
    recycle: &mpsc::Sender<Vec<u8>>,
    progress: Option<&dyn Progress>,
    max_line: usize,
) {
    // The buffer this worker reads its ranges into, reused from block to block.
    let mut own: Vec<u8> = Vec::new();
    let mut state = job.worker();
    loop {
        let task = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(_) => return,
        };
        let Ok(task) = task else { return };
        let (block, error, mine) = match task {
            Task::Data(block) => (block, None, false),
            Task::Range(range) => {
                let (block, error) = read_range(&range, std::mem::take(&mut own), max_line);
                if let Some(p) = progress {
                    p.advance(range.to - range.from);
                }
                (block, error, true)
            }
        };
        let empty = block.data.is_empty();
        let out = (!empty).then(|| job.run(&block, &mut state));
        let lines = match out.as_ref().and_then(|o| job.lines_of(o)) {
            Some(n) => {
                debug_assert_eq!(n, count_lines(&block.data), "a job miscounted its lines");
                n
            }
            None => count_lines(&block.data),
        };
        let meta = BlockMeta {
            input: block.input,
            lines,
            line_base: block.line_base.unwrap_or(0),
            bytes: block.data.len() as u64 + block.skipped,
        };
        if mine {
            own = block.data;
        } else {
            // The reader may be gone already; then the buffer is simply dropped.
            let _ = recycle.send(block.data);
        }
        if tx.send((block.seq, meta, out, error)).is_err() {
            return;
        }
    }
}

/// Per input, what was delivered: the line number after its last block, its bytes,
/// and the read error that ended it early.
struct Delivered {
    lines: Vec<u64>,
    bytes: Vec<u64>,
    errors: Vec<Option<String>>,
}

fn deliver<O>(
    rx: &Receiver<Done<O>>,
    stop: &AtomicBool,
    first_lines: &[u64],
    sink: &mut impl FnMut(BlockMeta, O) -> bool,
) -> Delivered {
    let mut next = 0u64;
    let mut pending: BTreeMap<u64, (BlockMeta, Option<O>, Option<String>)> = BTreeMap::new();
    // Per input, the line number (0-based) its next block starts at.
    let mut bases: Vec<u64> = first_lines.to_vec();
    let mut bytes: Vec<u64> = vec![0; first_lines.len()];
    let mut errors: Vec<Option<String>> = vec![None; first_lines.len()];
    for (seq, meta, out, error) in rx {
        if stop.load(Ordering::Relaxed) {
            continue;
        }
        pending.insert(seq, (meta, out, error));
        while let Some((mut meta, out, error)) = pending.remove(&next) {
            next += 1;
            let i = meta.input;
            if bases.len() <= i {
                bases.resize(i + 1, 0);
                bytes.resize(i + 1, 0);
                errors.resize(i + 1, None);
            }
            // An input ends at its first read error: ranges after it are not its lines.
            if errors.get(i).is_some_and(Option::is_some) {
                continue;
            }
            if let Some(e) = errors.get_mut(i) {
                *e = error;
            }
            if let Some(base) = bases.get_mut(i) {
                meta.line_base = *base;
                *base += meta.lines;
            }
            if let Some(b) = bytes.get_mut(i) {
                *b += meta.bytes;
            }
            let Some(out) = out else { continue };
            if !sink(meta, out) {
                stop.store(true, Ordering::Relaxed);
                pending.clear();
                break;
            }
        }
    }
    Delivered {
        lines: bases,
        bytes,
        errors,
    }
}

/// Cut an input into blocks and send them; a line longer than `max_line` keeps its
/// first `max_line` bytes (a `too_long` line) and the rest of it is skipped unread.
#[allow(clippy::too_many_arguments)]
fn read_blocks(
    sources: Vec<Source>,
    tx: SyncSender<Task>,
    recycled: Receiver<Vec<u8>>,
    stop: &AtomicBool,
    outcomes: &Mutex<Vec<InputOutcome>>,
    count: bool,
    progress: Option<&dyn Progress>,
    cut: Cutting,
) {
    let mut seq = 0u64;
    let max_line = cut.max_line;
    let set = |i: usize, f: &dyn Fn(&mut InputOutcome)| {
        if let Ok(mut o) = outcomes.lock() {
            if let Some(o) = o.get_mut(i) {
                f(o);
            }
        }
    };
    for (idx, source) in sources.into_iter().enumerate() {
        let opened = match source.opening {
            Opening::Ready(i) => Ok(i),
            Opening::Later { path, start } => {
                Input::open_at(&path, start).map_err(|e| format!("cannot open: {e}"))
            }
            Opening::Failed(e) => Err(e),
        };
        let mut input = match opened {
            Ok(i) => i,
            Err(e) => {
                set(idx, &|o| o.error = Some(e.clone()));
                continue;
            }
        };
        let hole = input.skip_hole();
        set(idx, &|o| {
            o.opened = true;
            o.hole = hole;
        });
        // A regular file that says it is empty may not be (procfs and sysfs files
        // report a size of 0): the reader reads it to its end.
        let plain = input
            .take_plain()
            .filter(|_| cut.ranges)
            .and_then(|(file, start)| Some((file.metadata().ok()?.len(), file, start)))
            .filter(|(end, _, _)| *end > 0);
        if let Some((end, file, start)) = plain {
            let file = Arc::new(file);
            let mut from = start;
            while from < end {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let to = from.saturating_add(cut.block_size as u64).min(end);
                let range = Range {
                    seq,
                    input: idx,
                    file: Arc::clone(&file),
                    start,
                    from,
                    to,
                    end,
                    hold_tail: source.hold_tail,
                };
                if tx.send(Task::Range(range)).is_err() {
                    return;
                }
                seq += 1;
                from = to;
            }
            continue;
        }
        let mut carry: Vec<u8> = Vec::new();
        let mut base = source.first_line;
        let mut bytes = 0u64;
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            // Reuse a buffer a worker is done with: its bytes are initialised, so
            // growing it to the block size zeroes only the tail.
            let mut buf = recycled.try_recv().unwrap_or_default();
            if buf.len() < carry.len() {
                buf.resize(carry.len(), 0);
            }
            if let Some(head) = buf.get_mut(..carry.len()) {
                head.copy_from_slice(&carry);
            }
            let mut filled = carry.len();
            carry.clear();
            let mut eof = false;
            let mut damaged = false;
            let mut too_long: Vec<u64> = Vec::new();
            // Input bytes left out of the block (the skipped ends of too-long lines).
            let mut skipped = 0u64;
            let mut target = cut.block_size.max(filled * 2);
            // Where the line being read starts in `buf`.
            let mut line_start = buf
                .get(..filled)
                .and_then(|b| memchr::memrchr(b'\n', b))
                .map_or(0, |p| p + 1);
            loop {
                if filled - line_start > max_line {
                    // Keep the line's head, then drop input up to its newline.
                    let rel = count_lines(buf.get(..line_start).unwrap_or(&[]));
                    too_long.push(rel);
                    let keep = line_start + max_line;
                    let tail = buf.get(keep..filled).unwrap_or(&[]).to_vec();
                    let (dropped, after, ended) = skip_line(&mut input, &tail, &mut |n| {
                        bytes += n as u64;
                        if let Some(p) = progress {
                            p.advance(n as u64);
                        }
                    });
                    buf.truncate(keep);
                    buf.push(b'\n');
                    filled = buf.len();
                    // The block has the head and a newline; the input had the head and
                    // `dropped` bytes (a newline last, unless the input ended first).
                    skipped += dropped.saturating_sub(1);
                    match ended {
                        SkipEnd::Newline => {
                            buf.extend_from_slice(&after);
                            filled = buf.len();
                            line_start = buf
                                .get(..filled)
                                .and_then(|b| memchr::memrchr(b'\n', b))
                                .map_or(0, |p| p + 1);
                            continue;
                        }
                        SkipEnd::Eof => {
                            eof = true;
                            break;
                        }
                        SkipEnd::Error(e) => {
                            let msg = describe_read_error(&input, &e, dropped);
                            let msg = format!("{msg} (after {bytes} bytes)");
                            set(idx, &|o| o.error = Some(msg.clone()));
                            eof = true;
                            damaged = true;
                            break;
                        }
                    }
                }
                if filled >= target {
                    // A block must end at a line end: keep reading through a line
                    // longer than the block.
                    if memchr::memchr(b'\n', buf.get(..filled).unwrap_or(&[])).is_some() {
                        break;
                    }
                    target *= 2;
                }
                if buf.len() < target {
                    buf.resize(target, 0);
                }
                match input.read(buf.get_mut(filled..target).unwrap_or(&mut [])) {
                    Ok(0) => {
                        eof = true;
                        break;
                    }
                    Ok(n) => {
                        if let Some(p) = buf
                            .get(filled..filled + n)
                            .and_then(|b| memchr::memrchr(b'\n', b))
                        {
                            line_start = filled + p + 1;
                        }
                        filled += n;
                        bytes += n as u64;
                        if let Some(p) = progress {
                            p.advance(n as u64);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let msg = describe_read_error(&input, &e, bytes);
                        set(idx, &|o| o.error = Some(msg.clone()));
                        eof = true;
                        damaged = true;
                        break;
                    }
                }
            }
            buf.truncate(filled);
            let hold = eof && !damaged && source.hold_tail;
            let cut = if eof && !hold {
                buf.len()
            } else {
                memchr::memrchr(b'\n', &buf).map_or(if eof { 0 } else { buf.len() }, |p| p + 1)
            };
            if !hold {
                carry.extend_from_slice(buf.get(cut..).unwrap_or(&[]));
            }
            buf.truncate(cut);
            if !buf.is_empty() {
                let line_base = count.then_some(base);
                if count {
                    base += count_lines(&buf);
                }
                if tx
                    .send(Task::Data(Block {
                        seq,
                        input: idx,
                        cut_tail: damaged && !buf.ends_with(b"\n"),
                        data: buf,
                        line_base,
                        too_long,
                        skipped,
                        max_line,
                    }))
                    .is_err()
                {
                    return;
                }
                seq += 1;
            }
            if eof && carry.is_empty() {
                break;
            }
        }
    }
}

/// Pieces read while looking for a line's end outside a range.
const PIECE: usize = 1 << 16;

/// Positioned read filling `buf` from `at`: stops early at the file's end (a file
/// truncated meanwhile reads short, which is its end) or at an error.
fn pread(file: &File, buf: &mut [u8], at: u64) -> (usize, Option<std::io::Error>) {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(buf.get_mut(got..).unwrap_or(&mut []), at + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return (got, Some(e)),
        }
    }
    (got, None)
}

/// Where the first line starting in `r.from..r.to` starts (a line starts after a
/// newline), `Ok(None)` when none does (or the input ends first), or the offset and
/// error where reading failed.
fn first_line_start(r: &Range) -> Result<Option<u64>, (u64, std::io::Error)> {
    if r.from == r.start {
        return Ok(Some(r.from));
    }
    // A newline at `q` in `from - 1 .. to - 1` starts a line at `q + 1` in the range.
    let mut at = r.from - 1;
    let mut piece = vec![0u8; 4096];
    while at < r.to - 1 {
        let want = ((r.to - 1 - at) as usize).min(piece.len());
        let (n, err) = pread(&r.file, piece.get_mut(..want).unwrap_or(&mut []), at);
        if let Some(k) = piece.get(..n).and_then(|p| memchr::memchr(b'\n', p)) {
            return Ok(Some(at + k as u64 + 1));
        }
        at += n as u64;
        if let Some(e) = err {
            return Err((at, e));
        }
        if n < want {
            return Ok(None);
        }
        if piece.len() < PIECE {
            piece.resize(PIECE, 0);
        }
    }
    Ok(None)
}

/// Read the block of a range into `buf` (a worker's own buffer): the lines that start
/// in the range, the last one read to its newline past the range's end, a line longer
/// than `max_line` kept to its first `max_line` bytes. Returns the block and the read
/// error that ended the input in it.
fn read_range(r: &Range, mut buf: Vec<u8>, max_line: usize) -> (Block, Option<String>) {
    let fail = |at: u64, e: &std::io::Error| {
        format!("read error after {} bytes: {e}", at.saturating_sub(r.start))
    };
    let mut block = Block {
        seq: r.seq,
        input: r.input,
        data: Vec::new(),
        line_base: None,
        cut_tail: false,
        too_long: Vec::new(),
        skipped: 0,
        max_line,
    };
    let first = match first_line_start(r) {
        Ok(Some(first)) => first,
        Ok(None) => return (block, None),
        Err((at, e)) => return (block, Some(fail(at, &e))),
    };
    let len = usize::try_from(r.to - first).unwrap_or(usize::MAX);
    if buf.len() < len {
        buf.resize(len, 0);
    }
    let (got, err) = pread(&r.file, buf.get_mut(..len).unwrap_or(&mut []), first);
    let mut filled = got;
    let mut pos = first + got as u64;
    let mut error = err.map(|e| fail(pos, &e));
    // The input ended inside the block (its end, or a file truncated meanwhile).
    let mut at_end = got < len;
    if error.is_none() && !at_end && !buf.get(..filled).unwrap_or(&[]).ends_with(b"\n") {
        // The last line runs over the range's end: read on to its newline. The input's
        // last line is read on past the size it had when reached (a live log's line
        // being written), unless a held tail waits for the next run anyway.
        let limit = if r.hold_tail { r.end } else { u64::MAX };
        let line_start = buf
            .get(..filled)
            .and_then(|b| memchr::memrchr(b'\n', b))
            .map_or(0, |p| p + 1);
        loop {
            if filled - line_start > max_line {
                block
                    .too_long
                    .push(count_lines(buf.get(..line_start).unwrap_or(&[])));
                let tail = buf
                    .get(line_start + max_line..filled)
                    .unwrap_or(&[])
                    .to_vec();
                let mut rest = ReadAt {
                    file: &r.file,
                    pos,
                    limit,
                };
                let (dropped, _, ended) = skip_line(&mut rest, &tail, &mut |_| {});
                if let SkipEnd::Error(e) = ended {
                    error = Some(fail(rest.pos, &e));
                }
                filled = line_start + max_line;
                if let Some(b) = buf.get_mut(filled) {
                    *b = b'\n';
                }
                filled += 1;
                // The block has the head and a newline; the input had the head and
                // `dropped` bytes (a newline last, unless the input ended first).
                block.skipped = dropped.saturating_sub(1);
                break;
            }
            if pos >= limit {
                at_end = true;
                break;
            }
            let want = usize::try_from(limit - pos).unwrap_or(PIECE).min(PIECE);
            if buf.len() < filled + want {
                buf.resize(filled + want, 0);
            }
            let (n, err) = pread(
                &r.file,
                buf.get_mut(filled..filled + want).unwrap_or(&mut []),
                pos,
            );
            if let Some(k) = buf
                .get(filled..filled + n)
                .and_then(|p| memchr::memchr(b'\n', p))
            {
                filled += k + 1;
                break;
            }
            filled += n;
            pos += n as u64;
            if let Some(e) = err {
                error = Some(fail(pos, &e));
                break;
            }
            if n < want {
                at_end = true;
                break;
            }
        }
    }
    buf.truncate(filled);
    if at_end && error.is_none() && r.hold_tail && !buf.ends_with(b"\n") {
        // A live log's last line, still being written: the next run reads it.
        buf.truncate(memchr::memrchr(b'\n', &buf).map_or(0, |p| p + 1));
    }
    block.cut_tail = error.is_some() && !buf.ends_with(b"\n");
    block.data = buf;
    (block, error)
}

/// How skipping the rest of a too-long line ended.
enum SkipEnd {
    /// At its newline (consumed).
    Newline,
    /// At the end of the input.
    Eof,
    /// At a read error.
    Error(std::io::Error),
}

/// A file read from `pos` with positioned reads, up to `limit`: the rest of a range's
/// too-long line, skipped as the reader skips one.
struct ReadAt<'a> {
    file: &'a File,
    pos: u64,
    limit: u64,
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.limit.saturating_sub(self.pos)).unwrap_or(usize::MAX);
        let n = buf.len().min(room);
        let got = self
            .file
            .read_at(buf.get_mut(..n).unwrap_or(&mut []), self.pos)?;
        self.pos += got as u64;
        Ok(got)
    }
}

/// Drop `tail` and then input bytes up to and including the next newline, reading in
/// small pieces so that memory stays flat. Returns how many bytes were dropped (the
/// newline included), the bytes read after the newline, and how it ended. `read`
/// hears of every byte count read from the input.
fn skip_line(
    input: &mut dyn Read,
    tail: &[u8],
    read: &mut dyn FnMut(usize),
) -> (u64, Vec<u8>, SkipEnd) {
    if let Some(p) = memchr::memchr(b'\n', tail) {
        let after = tail.get(p + 1..).unwrap_or(&[]).to_vec();
        return (p as u64 + 1, after, SkipEnd::Newline);
    }
    let mut dropped = tail.len() as u64;
    let mut piece = vec![0u8; 1 << 16];
    loop {
        match input.read(&mut piece) {
            Ok(0) => return (dropped, Vec::new(), SkipEnd::Eof),
            Ok(n) => {
                read(n);
                let got = piece.get(..n).unwrap_or(&[]);
                if let Some(p) = memchr::memchr(b'\n', got) {
                    let after = got.get(p + 1..).unwrap_or(&[]).to_vec();
                    return (dropped + p as u64 + 1, after, SkipEnd::Newline);
                }
                dropped += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return (dropped, Vec::new(), SkipEnd::Error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_lines_handle_missing_final_newline() {
        let b = |d: &[u8]| Block {
            seq: 0,
            input: 0,
            data: d.to_vec(),
            line_base: None,
            cut_tail: false,
            too_long: Vec::new(),
            skipped: 0,
            max_line: 8,
        };
        assert_eq!(b(b"a\nb\n").lines().count(), 2);
        assert_eq!(b(b"a\nb").lines().count(), 2);
        assert_eq!(b(b"").lines().count(), 0);
        assert_eq!(b(b"\n").lines().collect::<Vec<_>>(), vec![&b""[..]]);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"a\n\n"), 2);
    }

    /// The lines are the same with NUL bytes in them, each said to hold one or not,
    /// the last line (no final newline) included.
    #[test]
    fn block_lines_say_which_hold_a_nul() {
        let data = b"ab\n\0\0\na\0b\0\n\nx\n\0".to_vec();
        let block = Block {
            seq: 0,
            input: 0,
            data: data.clone(),
            line_base: None,
            cut_tail: false,
            too_long: Vec::new(),
            skipped: 0,
            max_line: 64,
        };
        let mut lines = block.lines();
        let mut seen = Vec::new();
        while let Some(l) = lines.next() {
            seen.push((l.to_vec(), lines.had_nul()));
        }
        let want: Vec<(Vec<u8>, bool)> = data
            .split(|&b| b == b'\n')
            .map(|l| (l.to_vec(), l.contains(&0)))
            .collect();
        assert_eq!(seen, want);
    }

    /// Collects every line of a block as the line loop sees it: its bytes (to the cap)
    /// and whether it is too long.
    struct Collect;

    impl Job for Collect {
        type Out = Vec<(Vec<u8>, bool)>;
        type Worker = ();
        fn worker(&self) {}
        fn run(&self, b: &Block, (): &mut ()) -> Self::Out {
            let mut listed = b.too_long.iter().copied().peekable();
            b.lines()
                .enumerate()
                .map(|(i, l)| {
                    let long = listed.next_if_eq(&(i as u64)).is_some() || l.len() > b.max_line;
                    (l.get(..b.max_line).unwrap_or(l).to_vec(), long)
                })
                .collect()
        }
    }

    /// The lines of `data` read from `start` as they must come out whatever the cut.
    fn expected(data: &[u8], max_line: usize, hold: bool) -> (Vec<(Vec<u8>, bool)>, u64) {
        let mut pieces: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        let open = pieces.pop().unwrap_or(&[]);
        let mut bytes = data.len() as u64;
        if !open.is_empty() {
            if hold && open.len() <= max_line {
                bytes -= open.len() as u64;
            } else {
                pieces.push(open);
            }
        }
        let lines = pieces
            .into_iter()
            .map(|l| (l.get(..max_line).unwrap_or(l).to_vec(), l.len() > max_line))
            .collect();
        (lines, bytes)
    }

    fn run_file(
        path: &std::path::Path,
        start: u64,
        hold: bool,
        cut: Cutting,
        jobs: usize,
    ) -> (Vec<(Vec<u8>, bool)>, InputOutcome) {
        let source = Source {
            name: "t".into(),
            opening: Opening::Later {
                path: path.to_path_buf(),
                start,
            },
            hold_tail: hold,
            first_line: 0,
        };
        let mut got = Vec::new();
        let outcomes = run_cut(vec![source], jobs, None, cut, &Collect, |_, lines| {
            got.extend(lines);
            true
        });
        (got, outcomes.into_iter().next().unwrap_or_default())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Workers reading their own ranges give the reader's lines, too-long flags,
        /// line and byte counts, for any block size, line cap, start and tail.
        #[test]
        fn ranges_give_the_lines_the_reader_gives(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    3 => proptest::collection::vec(b'a'..=b'e', 0..12),
                    1 => proptest::collection::vec(b'a'..=b'e', 12..90),
                ],
                0..40,
            ),
            last_newline in proptest::bool::ANY,
            skip in 0usize..5,
            block_size in proptest::sample::select(vec![1usize, 2, 3, 7, 16, 64, 1000]),
            max_line in proptest::sample::select(vec![1usize, 4, 17, 50, 1000]),
            hold in proptest::bool::ANY,
            jobs in 1usize..4,
        ) {
            let mut data = lines.join(&b'\n');
            if last_newline && !lines.is_empty() {
                data.push(b'\n');
            }
            // `--state` starts at a line start: after the first `skip` lines.
            let start = data
                .iter()
                .enumerate()
                .filter(|(_, &b)| b == b'\n')
                .map(|(i, _)| i as u64 + 1)
                .take(skip)
                .last()
                .unwrap_or(0);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("log");
            std::fs::write(&path, &data).unwrap();
            let (want, bytes) = expected(data.get(start as usize..).unwrap_or(&[]), max_line, hold);
            for ranges in [false, true] {
                let cut = Cutting { block_size, max_line, ranges };
                let (got, outcome) = run_file(&path, start, hold, cut, jobs);
                proptest::prop_assert_eq!(&got, &want, "ranges {}", ranges);
                proptest::prop_assert_eq!(outcome.lines, want.len() as u64, "ranges {}", ranges);
                proptest::prop_assert_eq!(outcome.bytes, bytes, "ranges {}", ranges);
                proptest::prop_assert!(outcome.error.is_none());
            }
        }
    }

    /// The range `0..size` of the file at `path`, taken to be `size` bytes long.
    fn first_range(path: &std::path::Path, size: u64, hold_tail: bool) -> Range {
        Range {
            seq: 0,
            input: 0,
            file: Arc::new(File::open(path).unwrap()),
            start: 0,
            from: 0,
            to: size,
            end: size,
            hold_tail,
        }
    }

    #[test]
    fn a_file_shorter_than_when_it_was_reached_ends_where_it_ends() {
        // Truncated (logrotate's copytruncate) after the reader took its size.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, b"one\ntwo\nthr").unwrap();
        let range = |hold_tail| first_range(&path, 64, hold_tail);
        let (b, e) = read_range(&range(false), Vec::new(), 100);
        assert!(e.is_none());
        assert_eq!(b.data, b"one\ntwo\nthr");
        let (b, _) = read_range(&range(true), Vec::new(), 100);
        assert_eq!(b.data, b"one\ntwo\n");
        // A range past the end holds nothing.
        let (b, e) = read_range(
            &Range {
                from: 20,
                to: 40,
                ..range(false)
            },
            Vec::new(),
            100,
        );
        assert!(e.is_none() && b.data.is_empty());
    }

    #[test]
    fn a_file_that_says_it_is_empty_is_read_to_its_end() {
        // procfs gives a size of 0 for files with content: read them, not ranges of 0.
        let path = std::path::Path::new("/proc/self/status");
        let cut = Cutting {
            block_size: 64,
            max_line: 1 << 20,
            ranges: true,
        };
        let (got, outcome) = run_file(path, 0, false, cut, 2);
        assert!(got.len() > 10, "{got:?}");
        assert!(got.iter().any(|(l, _)| l.starts_with(b"Pid:")));
        assert_eq!(outcome.lines, got.len() as u64);
        assert!(outcome.error.is_none());
    }

    #[test]
    fn a_live_logs_last_line_is_read_to_its_newline_past_the_size_it_had() {
        // The reader took the size while `three` was being written.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        std::fs::write(&path, b"one\ntwo\nthree\nfour\n").unwrap();
        let range = |hold_tail| first_range(&path, 10, hold_tail);
        let (b, _) = read_range(&range(false), Vec::new(), 100);
        assert_eq!(b.data, b"one\ntwo\nthree\n");
        // `--state` holds it for the next run instead.
        let (b, _) = read_range(&range(true), Vec::new(), 100);
        assert_eq!(b.data, b"one\ntwo\n");
    }
}
