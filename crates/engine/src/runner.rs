//! The parallel engine: one reader thread cuts the inputs into line-aligned blocks,
//! N workers turn blocks into partial results, and the calling thread receives the
//! partials in input order (so ordered merges such as "first request wins" and row
//! outputs stay exact).

use std::collections::BTreeMap;
use std::io::Read;
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
        }
    }
}

/// Iterator over the lines of a block (memchr, not byte by byte).
#[derive(Debug)]
pub struct Lines<'a> {
    rest: &'a [u8],
    done: bool,
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.done {
            return None;
        }
        match memchr::memchr(b'\n', self.rest) {
            Some(p) => {
                let line = self.rest.get(..p).unwrap_or(&[]);
                self.rest = self.rest.get(p + 1..).unwrap_or(&[]);
                Some(line)
            }
            None => {
                self.done = true;
                Some(self.rest)
            }
        }
    }
}

/// What a worker does with a block.
pub trait Job: Sync {
    /// The partial result of one block.
    type Out: Send;
    /// Whether blocks must carry their line base (rows that print line numbers).
    fn needs_line_base(&self) -> bool {
        false
    }
    /// Process one block.
    fn run(&self, block: &Block) -> Self::Out;
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
    /// Bytes of the blocks delivered (whole lines; for `--state`).
    pub bytes: u64,
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
    let (block_tx, block_rx) = mpsc::sync_channel::<Block>(workers * 2);
    let block_rx = Arc::new(Mutex::new(block_rx));
    // Bounded too, so that a slow writer (Parquet compression on this thread) holds the
    // workers back instead of letting finished blocks pile up in memory.
    let (out_tx, out_rx) = mpsc::sync_channel::<(u64, BlockMeta, J::Out)>(workers * 2);
    let (recycle_tx, recycle_rx) = mpsc::channel::<Vec<u8>>();
    let count = job.needs_line_base();
    std::thread::scope(|s| {
        {
            let stop = Arc::clone(&stop);
            let outcomes = Arc::clone(&outcomes);
            s.spawn(move || {
                read_blocks(
                    sources, block_tx, recycle_rx, &stop, &outcomes, count, progress, max_line,
                );
            });
        }
        for _ in 0..workers {
            let rx = Arc::clone(&block_rx);
            let tx = out_tx.clone();
            let recycle = recycle_tx.clone();
            s.spawn(move || work(job, &rx, &tx, &recycle));
        }
        drop(recycle_tx);
        drop(out_tx);
        let (lines, bytes) = deliver(&out_rx, &stop, &first_lines, &mut sink);
        if let Ok(mut o) = outcomes.lock() {
            for ((o, n), first) in o.iter_mut().zip(lines).zip(&first_lines) {
                o.lines = n.saturating_sub(*first);
            }
            for (o, b) in o.iter_mut().zip(bytes) {
                o.bytes = b;
            }
        }
    });
    outcomes.lock().map(|o| o.clone()).unwrap_or_default()
}

fn work<J: Job>(
    job: &J,
    rx: &Mutex<Receiver<Block>>,
    tx: &SyncSender<(u64, BlockMeta, J::Out)>,
    recycle: &mpsc::Sender<Vec<u8>>,
) {
    loop {
        let block = match rx.lock() {
            Ok(guard) => guard.recv(),
            Err(_) => return,
        };
        let Ok(block) = block else { return };
        let out = job.run(&block);
        let lines = match job.lines_of(&out) {
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
        // The reader may be gone already; then the buffer is simply dropped.
        let _ = recycle.send(block.data);
        if tx.send((block.seq, meta, out)).is_err() {
            return;
        }
    }
}

fn deliver<O>(
    rx: &Receiver<(u64, BlockMeta, O)>,
    stop: &AtomicBool,
    first_lines: &[u64],
    sink: &mut impl FnMut(BlockMeta, O) -> bool,
) -> (Vec<u64>, Vec<u64>) {
    let mut next = 0u64;
    let mut pending: BTreeMap<u64, (BlockMeta, O)> = BTreeMap::new();
    // Per input, the line number (0-based) its next block starts at.
    let mut bases: Vec<u64> = first_lines.to_vec();
    let mut bytes: Vec<u64> = Vec::new();
    for (seq, meta, out) in rx {
        if stop.load(Ordering::Relaxed) {
            continue;
        }
        pending.insert(seq, (meta, out));
        while let Some((mut meta, out)) = pending.remove(&next) {
            next += 1;
            if bases.len() <= meta.input {
                bases.resize(meta.input + 1, 0);
            }
            if let Some(base) = bases.get_mut(meta.input) {
                meta.line_base = *base;
                *base += meta.lines;
            }
            if bytes.len() <= meta.input {
                bytes.resize(meta.input + 1, 0);
            }
            if let Some(b) = bytes.get_mut(meta.input) {
                *b += meta.bytes;
            }
            if !sink(meta, out) {
                stop.store(true, Ordering::Relaxed);
                pending.clear();
                break;
            }
        }
    }
    (bases, bytes)
}

/// Cut an input into blocks and send them; a line longer than `max_line` keeps its
/// first `max_line` bytes (a `too_long` line) and the rest of it is skipped unread.
#[allow(clippy::too_many_arguments)]
fn read_blocks(
    sources: Vec<Source>,
    tx: SyncSender<Block>,
    recycled: Receiver<Vec<u8>>,
    stop: &AtomicBool,
    outcomes: &Mutex<Vec<InputOutcome>>,
    count: bool,
    progress: Option<&dyn Progress>,
    max_line: usize,
) {
    let mut seq = 0u64;
    let max_line = max_line.max(1);
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
        set(idx, &|o| o.opened = true);
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
            let mut target = BLOCK_SIZE.max(filled * 2);
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
                        SkipEnd::Error(msg) => {
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
                    .send(Block {
                        seq,
                        input: idx,
                        cut_tail: damaged && !buf.ends_with(b"\n"),
                        data: buf,
                        line_base,
                        too_long,
                        skipped,
                        max_line,
                    })
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

/// How skipping the rest of a too-long line ended.
enum SkipEnd {
    /// At its newline (consumed).
    Newline,
    /// At the end of the input.
    Eof,
    /// At a read error (the message).
    Error(String),
}

/// Drop `tail` and then input bytes up to and including the next newline, reading in
/// small pieces so that memory stays flat. Returns how many bytes were dropped (the
/// newline included), the bytes read after the newline, and how it ended. `read`
/// hears of every byte count read from the input.
fn skip_line(
    input: &mut Input,
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
            Err(e) => {
                let msg = describe_read_error(input, &e, dropped);
                return (dropped, Vec::new(), SkipEnd::Error(msg));
            }
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
}
