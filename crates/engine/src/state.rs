//! Incremental runs (`--state FILE`): remember how far each input was read and
//! continue from there next time, across logrotate.
//!
//! # What is remembered
//!
//! The state file is JSON, written atomically (a temporary file in the same
//! directory, fsync, rename) while the run holds an exclusive lock on the sibling file
//! `STATE.lock` (which holds the holder's pid, for the message the next run prints):
//!
//! ```json
//! {
//!   "format": "tlsgap-state",
//!   "version": 1,
//!   "inputs": {
//!     "/var/log/apache2/access.log": {
//!       "device": 2049,
//!       "inode": 1835021,
//!       "size": 1048576,
//!       "offset": 1048512,
//!       "fingerprint": "9c1f0e35a2d86b7e",
//!       "fingerprint_bytes": 4096,
//!       "compressed": false,
//!       "read_at": "2024-05-01T03:00:00+00:00",
//!       "lines": 8190
//!     }
//!   },
//!   "totals": {
//!     "created": 1714532400.125,
//!     "requests": {"tls": {"TLSv1.3": {"TLS_AES_128_GCM_SHA256": 8100}}, "plain": 42},
//!     "lines": 8190,
//!     "parsed_lines": 8142,
//!     "malformed_lines": {"truncated": 48, "...": 0},
//!     "newest_line": 1714532399.0
//!   }
//! }
//! ```
//!
//! Inputs are keyed by their absolute path (not resolving symlinks). `offset` counts
//! bytes of the *decompressed* content and always ends after a newline: a final line
//! without its newline is still being written and is left for the next run.
//! `fingerprint` is the 64-bit FNV-1a hash of the first `fingerprint_bytes` bytes of
//! the decompressed content (`min(4096, offset)`), `size` the file's size on disk when
//! it was read (compressed size for compressed files), `lines` the lines up to
//! `offset` (line numbers in messages, `--invalid-lines` and exports stay the file's
//! own when a run continues). A missing state file is a fresh start; an empty one, or
//! any other file that is not such JSON, is an error naming it (starting afresh
//! silently would count every line again).
//!
//! # How a file is recognised
//!
//! A file *holds* a remembered entry when its first `fingerprint_bytes` decompressed
//! bytes have the entry's fingerprint (and, when it is plain, it is at least `offset`
//! bytes long). Device and inode are only a tie-break: logrotate's `copytruncate`
//! keeps the inode but changes the content, and `compress` keeps the content but
//! changes the inode. Every file read starts at the largest offset of the entries it
//! holds, or at 0 — so the same content is never read twice, whatever name it has now.
//!
//! # Rotation, mode by mode
//!
//! For each input `access.log` given, with the entry remembered for that path:
//!
//! * **Appended to** (same file, fingerprint matches): continue at `offset`.
//! * **`create`** (renamed to `access.log.1`, a new `access.log` created): the old
//!   content is looked for among the rotated siblings — `access.log.N`, dateext
//!   `access.log-YYYYMMDD` (any `.`/`-`/`_` followed by digits), each optionally
//!   `.gz`, `.zst` or `.bz2` — preferring the same device and inode, then the newest.
//!   Its end is read from `offset`, then the new file from 0.
//! * **`create` + `compress`** (no `delaycompress`): the same, recognised by the
//!   fingerprint of the decompressed content (the inode changed); the end is read by
//!   decompressing and skipping `offset` bytes.
//! * **`copytruncate`** (copied to `access.log.1`, the original truncated in place):
//!   the original no longer holds the entry (shorter than `offset`, or different first
//!   bytes), the copy does: the copy's end is read from `offset`, then the original
//!   from 0. With `compress` the copy is recognised through its decompressed content.
//!   Lines written between logrotate's copy and its truncation are lost by logrotate
//!   itself; nothing can recover them.
//! * **Several rotations between runs**: the file holding the entry is found further
//!   down (`access.log.2.gz`); its end is read, then every rotated sibling newer than
//!   it (`access.log.1`, newer = smaller number, or later date) whole, then the live
//!   file. Nothing is lost while logrotate keeps enough rotated files.
//! * **Not recoverable**: when the file holding the entry is gone (deleted by
//!   `rotate N`, moved by `olddir`, renamed by `extension` or compressed with `xz`), its
//!   unread end and any sibling rotated after it are *not* read — without it there is
//!   no telling which siblings were read already, and losing is better than counting
//!   twice. The plan of the live file is then marked [`ReadPlan::lossy`].
//!
//! Inputs given on the command line that are themselves rotated files (a glob such
//! as `access.log*`) are not read twice: a listed file that holds an entry starts at
//! its offset, and a rotated sibling already listed is never added again. A file read
//! in part under one name is continued under its new name.
//!
//! Standard input (`-`) is read whole and not remembered. Entries of paths not given
//! in a run are kept unchanged.
//!
//! # Counters
//!
//! `totals` ([`KeptTotals`]) are the request and line counters of every line read
//! under this state since `created` (Unix seconds): each `tls` run (and `check`, which
//! counts the same way) adds its own ([`Session::add_totals`]), so they only grow,
//! across rotation as the offsets do, and `tls --format prom` exports them as
//! Prometheus counters. A state without them (written before they were kept) starts
//! them with the next counting run, created then. A run of a command that reads new
//! lines without counting them (`export`, `whatif`, `report`) drops them when it saves
//! the state rather than let them miss those lines; the next counting run starts them
//! again with a new `created`, which readers see as a counter reset.
//!
//! # Using it
//!
//! ```no_run
//! # fn main() -> tlsgap_engine::Result<()> {
//! use std::io::Read;
//! use tlsgap_engine::state::{complete_prefix_len, Session, StateConfig};
//!
//! let cfg = StateConfig { path: "/var/lib/tlsgap/state.json".into(), lock_wait: None };
//! let mut session = Session::open(&cfg)?; // lock, then load
//! for plan in session.plan(&["/var/log/apache2/access.log".into()]) {
//!     let mut input = plan.open()?;
//!     let mut data = Vec::new();
//!     input.read_to_end(&mut data)?;
//!     let used = if plan.include_unterminated_tail { data.len() } else { complete_prefix_len(&data) };
//!     // ... process data[..used] ...
//!     let lines = data[..used].iter().filter(|&&b| b == b'\n').count() as u64;
//!     session.record(&plan, used as u64, lines);
//! }
//! session.save()?; // write atomically, then unlock
//! # Ok(())
//! # }
//! ```

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use tlsgap_agg::Totals;

use crate::input::{path_text, Compression, Input};

/// `name` made absolute (symlinks not resolved), as given when that fails.
fn absolute(name: &Path) -> PathBuf {
    std::path::absolute(name).unwrap_or_else(|_| name.to_path_buf())
}

/// The `format` field of a state file.
pub const FORMAT: &str = "tlsgap-state";
/// The state file version this build writes and reads.
pub const VERSION: u32 = 1;
/// How many first bytes (at most) the fingerprint covers.
pub const FINGERPRINT_BYTES: u64 = 4096;

/// How often a run waiting for the lock tries again.
const LOCK_POLL: Duration = Duration::from_millis(100);

/// Where the state lives and how long to wait for its lock.
#[derive(Debug, Clone)]
pub struct StateConfig {
    /// The state file.
    pub path: PathBuf,
    /// How long to wait for another run's lock (`None`: fail at once).
    pub lock_wait: Option<Duration>,
}

/// What is remembered about one input path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Device of the file read.
    pub device: u64,
    /// Inode of the file read.
    pub inode: u64,
    /// Its size on disk when read (compressed size for compressed files).
    pub size: u64,
    /// Decompressed bytes read, up to and including the last newline consumed.
    pub offset: u64,
    /// FNV-1a 64 of the first `fingerprint_bytes` decompressed bytes, 16 hex digits.
    pub fingerprint: String,
    /// How many bytes the fingerprint covers: `min(4096, offset)`.
    pub fingerprint_bytes: u64,
    /// Whether the file read was compressed.
    pub compressed: bool,
    /// When the run read it (RFC 3339, UTC).
    pub read_at: String,
    /// Lines up to `offset`, so that line numbers stay the file's own when a run
    /// continues (absent in states written before it was kept: counted once then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u64>,
}

/// The remembered state of all inputs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct State {
    format: String,
    version: u32,
    /// Per input path (absolute), what was read.
    pub inputs: BTreeMap<String, Entry>,
    /// The counters of every line read under this state since they started (absent in
    /// states written before they were kept, or dropped by a run that did not count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub totals: Option<KeptTotals>,
    /// Per key, the plan sequence number of the record kept (the latest plan wins).
    #[serde(skip)]
    recorded: HashMap<String, usize>,
}

/// The counters a state keeps, and since when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeptTotals {
    /// Unix time (seconds) at which the counters started from zero: it changes exactly
    /// when they start again, so that a reader can tell a reset from a decrease.
    pub created: f64,
    /// The counters.
    #[serde(flatten)]
    pub totals: Totals,
}

/// Why a run's counters start from zero ([`Session::add_totals`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TotalsStart {
    /// They go on from the state's.
    Continued,
    /// A new state (nothing remembered yet).
    NewState,
    /// The state remembers inputs but no counters: written by an older tlsgap, or by
    /// a run of a command that does not count requests (which drops them).
    Missing,
}

impl Default for State {
    fn default() -> State {
        State {
            format: FORMAT.to_string(),
            version: VERSION,
            inputs: BTreeMap::new(),
            totals: None,
            recorded: HashMap::new(),
        }
    }
}

impl State {
    /// Load `path`; a missing file is a fresh state, an empty one an error (tlsgap
    /// never writes one: it lost its content, and starting afresh would count
    /// everything again).
    pub fn load(path: &Path) -> Result<State> {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(State::default()),
            Err(e) => {
                return Err(e).with_context(|| format!("reading state file {}", path.display()))
            }
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            bail!(
                "state file {} is empty — refusing to re-read everything (a disk that \
                 filled up, or a crash of something else writing it?); delete it to start \
                 afresh",
                path.display()
            );
        }
        State::from_json(&bytes).with_context(|| {
            format!(
                "state file {} is unusable (move it away to start afresh)",
                path.display()
            )
        })
    }

    fn from_json(bytes: &[u8]) -> Result<State> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).context("it is not JSON (corrupt?)")?;
        if value.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
            bail!("it is not a tlsgap state file (no \"format\": \"{FORMAT}\")");
        }
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(VERSION) => {}
            Some(v) if v > u64::from(VERSION) => {
                bail!("it has version {v}, written by a newer tlsgap (this one reads {VERSION})")
            }
            other => bail!("unsupported version {other:?} (expected {VERSION})"),
        }
        serde_json::from_value(value).context("its entries are malformed")
    }

    /// Write the state to `path` atomically: a temporary file in the same directory,
    /// flushed to disk, renamed over `path`.
    pub fn save(&self, path: &Path) -> Result<()> {
        let json = serde_json::to_vec_pretty(self).context("serialising the state")?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "state".into());
        let tmp = dir.join(format!(".{name}.tlsgap-{}.tmp", std::process::id()));
        let written = (|| -> io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(&json)?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            fs::rename(&tmp, path)
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(e).with_context(|| format!("writing state file {}", path.display()));
        }
        // Make the rename itself durable; not every platform can open a directory.
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Remember that `plan` was read: `consumed` decompressed bytes from its start,
    /// ending after a newline (or at the end of the file when the plan includes the
    /// unterminated tail), holding `lines` lines. Plans without a key (stdin) are ignored; of several plans
    /// recorded under one key, the one latest in the plan wins, whatever the order of
    /// the calls.
    pub fn record(&mut self, plan: &ReadPlan, consumed: u64, lines: u64) {
        let Some(key) = &plan.key else { return };
        if self.recorded.get(key).is_some_and(|&seq| seq > plan.seq) {
            return;
        }
        // A file that could not be examined when planning but was read after all
        // (created in between) is examined now.
        let Some(probe) = plan.probe.clone().or_else(|| probe(&plan.path)) else {
            return;
        };
        let end = plan.start.saturating_add(consumed);
        let want = end.min(FINGERPRINT_BYTES) as usize;
        let mut head = probe.head.clone();
        if head.len() < want {
            // The file grew past what was seen when planning: take the first bytes
            // again, from the same file only.
            if let Some(now) = self::probe(&plan.path) {
                if now.device == probe.device && now.inode == probe.inode {
                    head = now.head;
                }
            }
        }
        head.truncate(want);
        let entry = Entry {
            device: probe.device,
            inode: probe.inode,
            size: if probe.compressed {
                probe.size
            } else {
                probe.size.max(end)
            },
            offset: end,
            fingerprint: fingerprint(&head),
            fingerprint_bytes: head.len() as u64,
            compressed: probe.compressed,
            read_at: now_rfc3339(),
            lines: Some(plan.first_line + lines),
        };
        self.inputs.insert(key.clone(), entry);
        self.recorded.insert(key.clone(), plan.seq);
    }
}

/// Now, in Unix seconds (millisecond precision).
fn now_unix() -> f64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| (d.as_millis() as f64) / 1000.0)
}

fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    i64::try_from(secs)
        .ok()
        .and_then(|s| chrono::DateTime::<chrono::Utc>::from_timestamp(s, 0))
        .map_or_else(String::new, |t| t.to_rfc3339())
}

/// 64-bit FNV-1a: tiny, stable across versions and platforms (unlike std's hasher).
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn fingerprint(bytes: &[u8]) -> String {
    format!("{:016x}", fnv1a(bytes))
}

/// The length of the complete lines at the start of `bytes`: just after the last
/// newline, 0 without one.
pub fn complete_prefix_len(bytes: &[u8]) -> usize {
    memchr::memrchr(b'\n', bytes).map_or(0, |p| p + 1)
}

/// The state key of an input path: absolute, symlinks not resolved.
pub fn state_key(name: &Path) -> String {
    path_text(&absolute(name))
}

/// One file as seen when planning.
#[derive(Debug, Clone)]
struct Probe {
    device: u64,
    inode: u64,
    size: u64,
    compressed: bool,
    /// Up to [`FINGERPRINT_BYTES`] first decompressed bytes.
    head: Vec<u8>,
}

#[cfg(unix)]
fn dev_ino(meta: &fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn dev_ino(_meta: &fs::Metadata) -> (u64, u64) {
    (0, 0)
}

fn probe(path: &Path) -> Option<Probe> {
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let (device, inode) = dev_ino(&meta);
    let mut input = Input::open(path).ok()?;
    let mut head = Vec::with_capacity(FINGERPRINT_BYTES as usize);
    // A damaged compressed file still has the head read before the damage.
    let _ = (&mut input).take(FINGERPRINT_BYTES).read_to_end(&mut head);
    Some(Probe {
        device,
        inode,
        size: meta.len(),
        compressed: input.compression != Compression::None,
        head,
    })
}

/// Whether the file `p` holds the content remembered in `e`.
fn holds(e: &Entry, p: &Probe) -> bool {
    if e.offset == 0 || (!p.compressed && p.size < e.offset) {
        return false;
    }
    if e.fingerprint_bytes == 0 {
        // Nothing to compare (should not happen with offset > 0): identity only.
        return p.device == e.device && p.inode == e.inode;
    }
    usize::try_from(e.fingerprint_bytes)
        .ok()
        .and_then(|n| p.head.get(..n))
        .is_some_and(|prefix| fingerprint(prefix) == e.fingerprint)
}

/// The remembered entry `p` holds that got furthest: reading it starts there.
fn furthest<'s>(state: &'s State, p: &Probe) -> Option<&'s Entry> {
    state
        .inputs
        .values()
        .filter(|e| holds(e, p))
        .max_by_key(|e| e.offset)
}

/// Where reading the file at `path` (seen as `p`) starts, in bytes and in lines: the
/// line count remembered, or (a state written before line counts were kept) counted
/// by reading up to the offset once.
fn position(state: &State, path: &Path, p: Option<&Probe>) -> (u64, u64) {
    let Some(e) = p.and_then(|p| furthest(state, p)) else {
        return (0, 0);
    };
    let lines = e.lines.unwrap_or_else(|| count_lines_upto(path, e.offset));
    (e.offset, lines)
}

/// Newlines in the first `offset` decompressed bytes of `path` (0 when unreadable).
fn count_lines_upto(path: &Path, offset: u64) -> u64 {
    let Ok(input) = Input::open(path) else {
        return 0;
    };
    let mut reader = input.take(offset);
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        match reader.read(&mut buf) {
            Ok(0) | Err(_) => return n,
            Ok(got) => {
                n += memchr::memchr_iter(b'\n', buf.get(..got).unwrap_or(&[])).count() as u64
            }
        }
    }
}

/// One file to read, and from where.
#[derive(Debug, Clone)]
pub struct ReadPlan {
    /// The file to read: an input given, or a rotated sibling of one.
    pub path: PathBuf,
    /// Decompressed byte offset to start at (pass to [`Input::open_at`]).
    pub start: u64,
    /// Why it is read from there, for `--verbose`-style messages.
    pub reason: &'static str,
    /// The state key to record the read under (`None`: standard input, not recorded).
    pub key: Option<String>,
    /// Whether a final line without newline is data (a rotated file, which will not
    /// grow) rather than a line still being written (left for the next run).
    pub include_unterminated_tail: bool,
    /// Lines written since the last run may have been lost (rotated away unread).
    pub lossy: bool,
    /// Lines of the file before `start`: line numbers continue from there.
    pub first_line: u64,
    seq: usize,
    probe: Option<Probe>,
}

impl ReadPlan {
    /// Open the file at the planned offset.
    pub fn open(&self) -> io::Result<Input> {
        Input::open_at(&self.path, self.start)
    }

    /// Whether this file is a rotated sibling added by the plan, not an input given.
    pub fn is_rotated_sibling(&self) -> bool {
        // Only rotated siblings are both remembered and read to their very end.
        self.include_unterminated_tail && self.key.is_some()
    }
}

/// How a rotated sibling's name ranks by age.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Rank {
    /// `.N`: larger is older.
    Numeric(u64),
    /// dateext digits (separators removed): larger is newer.
    Date(String),
}

impl Rank {
    fn newer_than(&self, other: &Rank) -> bool {
        match (self, other) {
            (Rank::Numeric(a), Rank::Numeric(b)) => a < b,
            (Rank::Date(a), Rank::Date(b)) => (a.len(), a) > (b.len(), b),
            _ => false,
        }
    }
}

/// The rank of a sibling named `base` + `rest`, if `rest` is a rotation suffix.
fn rotation_rank(rest: &str) -> Option<Rank> {
    let rest = [".gz", ".zst", ".bz2"]
        .iter()
        .find_map(|ext| rest.strip_suffix(ext))
        .unwrap_or(rest);
    let sep = rest.chars().next()?;
    if !matches!(sep, '.' | '-' | '_') {
        return None;
    }
    let body = rest.get(1..)?;
    if !body.starts_with(|c: char| c.is_ascii_digit())
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'-' || b == b'_')
    {
        return None;
    }
    if sep == '.' && body.len() <= 4 && body.bytes().all(|b| b.is_ascii_digit()) {
        return body.parse().ok().map(Rank::Numeric);
    }
    Some(Rank::Date(
        body.chars().filter(char::is_ascii_digit).collect(),
    ))
}

#[derive(Debug)]
struct Sibling {
    path: PathBuf,
    rank: Rank,
    probe: Probe,
}

/// The rotated siblings of `key` (an absolute path), newest first.
fn siblings(key: &Path) -> Vec<Sibling> {
    let (Some(dir), Some(base)) = (key.parent(), key.file_name().and_then(|b| b.to_str())) else {
        return Vec::new();
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Sibling> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let rank = rotation_rank(name.to_str()?.strip_prefix(base)?)?;
            let path = entry.path();
            let probe = probe(&path)?;
            Some(Sibling { path, rank, probe })
        })
        .collect();
    found.sort_by_key(|s| {
        let age = match &s.rank {
            Rank::Numeric(n) => (0u8, *n, Reverse((0, String::new()))),
            Rank::Date(d) => (1u8, 0, Reverse((d.len(), d.clone()))),
        };
        (age, s.path.clone())
    });
    found
}

/// Among `sibs` (newest first), the one holding `e` (the same inode preferred, then
/// the newest), and the ones rotated after it, oldest first.
fn find_holder(e: &Entry, mut sibs: Vec<Sibling>) -> Option<(Sibling, Vec<Sibling>)> {
    let same_inode = |s: &Sibling| s.probe.device == e.device && s.probe.inode == e.inode;
    let idx = sibs
        .iter()
        .position(|s| holds(e, &s.probe) && same_inode(s))
        .or_else(|| sibs.iter().position(|s| holds(e, &s.probe)))?;
    let holder = sibs.remove(idx);
    let mut newer: Vec<Sibling> = sibs
        .into_iter()
        .filter(|s| s.rank.newer_than(&holder.rank))
        .collect();
    newer.reverse();
    Some((holder, newer))
}

/// Decide what to read for `inputs` (as given; `-` is stdin): per input, first the
/// unread ends of its rotated siblings (oldest first), then the input itself. See
/// the module documentation for the rules.
pub fn plan(state: &State, inputs: &[PathBuf]) -> Vec<ReadPlan> {
    let probes: Vec<Option<Probe>> = inputs
        .iter()
        .map(|n| if n.as_os_str() == "-" { None } else { probe(n) })
        .collect();
    let listed: HashSet<(u64, u64)> = probes
        .iter()
        .flatten()
        .map(|p| (p.device, p.inode))
        .collect();
    let mut plans: Vec<ReadPlan> = Vec::new();
    for (name, probe) in inputs.iter().zip(&probes) {
        if name.as_os_str() == "-" {
            plans.push(ReadPlan {
                path: name.clone(),
                start: 0,
                reason: "standard input: read whole, not remembered",
                key: None,
                include_unterminated_tail: true,
                lossy: false,
                first_line: 0,
                seq: plans.len(),
                probe: None,
            });
            continue;
        }
        let key = state_key(name);
        let entry = state.inputs.get(&key);
        let (start, first_line) = position(state, name, probe.as_ref());
        let same_file = |e: &Entry| {
            probe
                .as_ref()
                .is_some_and(|p| p.device == e.device && p.inode == e.inode)
        };
        let mut lossy = false;
        let reason = match (entry, probe) {
            (None, None) => "cannot be examined; reading from the start",
            (None, Some(_)) if start > 0 => {
                "read in part before under another name (rotated): continuing"
            }
            (None, Some(_)) => "new input: reading from the start",
            (Some(e), Some(p)) if holds(e, p) => {
                if same_file(e) {
                    "continuing where the last run stopped"
                } else {
                    "same content as last time under another inode: continuing"
                }
            }
            (Some(e), _) if e.offset == 0 => "nothing read last time: reading from the start",
            (Some(e), _) => {
                // The file read last time is elsewhere now: listed too, or a sibling.
                let holder_listed = probes.iter().flatten().any(|p| holds(e, p));
                let rotated = if holder_listed {
                    None
                } else {
                    let sibs = siblings(&absolute(name))
                        .into_iter()
                        .filter(|s| !listed.contains(&(s.probe.device, s.probe.inode)))
                        .collect();
                    Some(find_holder(e, sibs))
                };
                match rotated {
                    Some(Some((holder, newer))) => {
                        let copytruncate = same_file(e);
                        let (start, first_line) =
                            position(state, &holder.path, Some(&holder.probe));
                        plans.push(ReadPlan {
                            start,
                            first_line,
                            reason: match (copytruncate, holder.probe.compressed) {
                                (true, false) => {
                                    "copy made by copytruncate: reading what the last run had not"
                                }
                                (true, true) => "compressed copy made by copytruncate: \
                                                 reading what the last run had not",
                                (false, false) => {
                                    "rotated since the last run: reading what it had not"
                                }
                                (false, true) => "rotated and compressed since the last run: \
                                                  reading what it had not",
                            },
                            path: holder.path,
                            key: Some(key.clone()),
                            include_unterminated_tail: true,
                            lossy: false,
                            seq: plans.len(),
                            probe: Some(holder.probe.clone()),
                        });
                        // Rotated after the holder: written entirely since the last run.
                        for s in newer {
                            let (start, first_line) = position(state, &s.path, Some(&s.probe));
                            plans.push(ReadPlan {
                                start,
                                first_line,
                                reason: "rotated since the last run and never read: reading it whole",
                                path: s.path,
                                key: Some(key.clone()),
                                include_unterminated_tail: true,
                                lossy: false,
                                seq: plans.len(),
                                probe: Some(s.probe),
                            });
                        }
                        if probe.is_none() {
                            "not there (rotated, not created again yet?)"
                        } else if copytruncate {
                            "truncated in place (copytruncate): reading from the start"
                        } else {
                            "replaced by a new file (rotated): reading from the start"
                        }
                    }
                    Some(None) if same_file(e) => {
                        lossy = true;
                        "shrank or was rewritten in place since the last run (same inode, \
                         and no copy of the old content beside it): reading from the start — \
                         lines written after the last run and before it shrank are lost, and \
                         lines the last run read are counted twice if they were written back"
                    }
                    Some(None) => {
                        lossy = true;
                        "rotated or truncated, and the file read last time is not beside it \
                         any more: lines written to it after the last run, if any, are lost; \
                         reading from the start (lines counted twice if its old content was \
                         copied into this file)"
                    }
                    None => "replaced (the file read last time is among the inputs): reading from the start",
                }
            }
        };
        plans.push(ReadPlan {
            path: name.clone(),
            start,
            first_line,
            reason,
            key: Some(key),
            include_unterminated_tail: false,
            lossy,
            seq: plans.len(),
            probe: probe.clone(),
        });
    }
    plans
}

/// An exclusive lock on a state file, held until dropped.
#[derive(Debug)]
pub struct StateLock {
    file: File,
    path: PathBuf,
}

impl StateLock {
    /// The lock file (`STATE.lock`).
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for StateLock {
    fn drop(&mut self) {
        // Forget the pid; closing the file releases the lock.
        let _ = self.file.set_len(0);
    }
}

/// The lock file of a state file: `STATE.lock` beside it.
pub fn lock_path(state_path: &Path) -> PathBuf {
    let mut name = state_path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "state".into());
    name.push(".lock");
    state_path.with_file_name(name)
}

fn holder(lock_file: &Path) -> String {
    fs::read_to_string(lock_file)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .map_or_else(|| "pid unknown".to_string(), |pid| format!("pid {pid}"))
}

/// Take the exclusive lock on `state_path` (through `STATE.lock`). Without `wait`,
/// fail at once if another run holds it; with it, try again until the time is up.
pub fn lock(state_path: &Path, wait: Option<Duration>) -> Result<StateLock> {
    let path = lock_path(state_path);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("opening lock file {}", path.display()))?;
    let deadline = wait.map(|w| Instant::now() + w);
    loop {
        // Fully qualified: std's own `File::try_lock` is newer than our MSRV.
        match fs4::FileExt::try_lock(&file) {
            Ok(()) => {
                file.set_len(0)
                    .and_then(|()| {
                        (&file).write_all(format!("{}\n", std::process::id()).as_bytes())
                    })
                    .with_context(|| format!("writing lock file {}", path.display()))?;
                return Ok(StateLock { file, path });
            }
            Err(fs4::TryLockError::WouldBlock) => {}
            Err(fs4::TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()))
            }
        }
        let now = Instant::now();
        match (deadline, wait) {
            (Some(d), _) if now < d => std::thread::sleep(LOCK_POLL.min(d - now)),
            (Some(_), Some(w)) => bail!(
                "another tlsgap run still holds the lock on {} ({}) after waiting {} s",
                state_path.display(),
                holder(&path),
                w.as_secs_f64()
            ),
            _ => bail!(
                "another tlsgap run holds the lock on {} ({}); use --lock-wait SECONDS to wait",
                state_path.display(),
                holder(&path)
            ),
        }
    }
}

/// One incremental run: the lock, the state, and what was read.
#[derive(Debug)]
pub struct Session {
    path: PathBuf,
    state: State,
    lock: StateLock,
    /// Some input was read past where the state stood.
    advanced: bool,
    /// This run's counters were added to the state's.
    counted: bool,
    /// The state remembered no input when loaded.
    was_empty: bool,
}

impl Session {
    /// Lock the state (waiting as configured), then load it.
    pub fn open(cfg: &StateConfig) -> Result<Session> {
        let lock = lock(&cfg.path, cfg.lock_wait)?;
        let state = State::load(&cfg.path)?;
        Ok(Session {
            path: cfg.path.clone(),
            was_empty: state.inputs.is_empty(),
            state,
            lock,
            advanced: false,
            counted: false,
        })
    }

    /// What to read for `inputs`: see [`plan`].
    pub fn plan(&self, inputs: &[PathBuf]) -> Vec<ReadPlan> {
        plan(&self.state, inputs)
    }

    /// Remember a read: see [`State::record`].
    pub fn record(&mut self, plan: &ReadPlan, consumed: u64, lines: u64) {
        self.advanced |= consumed > 0;
        self.state.record(plan, consumed, lines);
    }

    /// Add this run's counters to the state's (call once, with every line the run
    /// read): the counters kept from now on, and whether they started from zero. A
    /// state without counters starts them with this run, created now.
    pub fn add_totals(&mut self, run: &Totals) -> (KeptTotals, TotalsStart) {
        self.counted = true;
        let (kept, start) = match self.state.totals.take() {
            Some(mut kept) => {
                kept.totals.add(run);
                (kept, TotalsStart::Continued)
            }
            None => {
                let start = if self.was_empty {
                    TotalsStart::NewState
                } else {
                    TotalsStart::Missing
                };
                let mut totals = Totals::zero();
                totals.add(run);
                let kept = KeptTotals {
                    created: now_unix(),
                    totals,
                };
                (kept, start)
            }
        };
        self.state.totals = Some(kept.clone());
        (kept, start)
    }

    /// The state as it stands.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// Write the state atomically, then release the lock. A run that read new lines
    /// without adding its counters ([`Session::add_totals`]: a command that does not
    /// count requests) drops the state's counters rather than let them silently miss
    /// those lines: the next counting run starts them again, with a new creation time.
    pub fn save(mut self) -> Result<()> {
        if self.advanced && !self.counted {
            self.state.totals = None;
        }
        self.state.save(&self.path)?;
        drop(self.lock);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A log directory with a writer that numbers its lines, and the lines read by
    /// the runs so far.
    struct Sim {
        dir: tempfile::TempDir,
        next: u64,
        written: Vec<String>,
        read: Vec<String>,
    }

    impl Sim {
        fn new() -> Sim {
            Sim {
                dir: tempfile::tempdir().unwrap(),
                next: 0,
                written: Vec::new(),
                read: Vec::new(),
            }
        }

        fn path(&self, name: &str) -> PathBuf {
            self.dir.path().join(name)
        }

        fn log(&self) -> String {
            self.path("access.log").to_string_lossy().into_owned()
        }

        fn state_cfg(&self) -> StateConfig {
            StateConfig {
                path: self.path("state.json"),
                lock_wait: None,
            }
        }

        /// Append `n` lines to access.log (created if missing), as a server would.
        fn append(&mut self, n: u64) {
            let mut f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(self.log())
                .unwrap();
            for _ in 0..n {
                let line = format!(
                    "10.0.{}.{} - - [01/May/2024:03:00:00 +0000] \"GET /page/{} HTTP/1.1\" 200 512 TLSv1.3 TLS_AES_128_GCM_SHA256",
                    self.next / 256,
                    self.next % 256,
                    self.next
                );
                writeln!(f, "{line}").unwrap();
                self.written.push(line);
                self.next += 1;
            }
        }

        /// Write half a line (the server is in the middle of it); `finish_line` ends it.
        fn append_partial(&mut self) {
            let mut f = OpenOptions::new().append(true).open(self.log()).unwrap();
            write!(
                f,
                "10.9.9.9 - - [01/May/2024:03:00:00 +0000] \"GET /partial-{}",
                self.next
            )
            .unwrap();
        }

        fn finish_line(&mut self) {
            let mut f = OpenOptions::new().append(true).open(self.log()).unwrap();
            writeln!(f, " HTTP/1.1\" 200 1 TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256").unwrap();
            self.written.push(format!(
                "10.9.9.9 - - [01/May/2024:03:00:00 +0000] \"GET /partial-{} HTTP/1.1\" 200 1 TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256",
                self.next
            ));
            self.next += 1;
        }

        /// One tlsgap run over `inputs` (names relative to the directory), reading the
        /// way the engine does: complete lines only for live files.
        fn run(&mut self, inputs: &[&str]) -> Vec<ReadPlan> {
            let inputs: Vec<PathBuf> = inputs.iter().map(|n| self.path(n)).collect();
            let mut session = Session::open(&self.state_cfg()).unwrap();
            let plans = session.plan(&inputs);
            for plan in &plans {
                let Ok(mut input) = plan.open() else { continue };
                let mut data = Vec::new();
                input.read_to_end(&mut data).unwrap();
                let used = if plan.include_unterminated_tail {
                    data.len()
                } else {
                    complete_prefix_len(&data)
                };
                let text = std::str::from_utf8(&data[..used]).unwrap();
                self.read.extend(text.lines().map(str::to_string));
                let lines = memchr::memchr_iter(b'\n', &data[..used]).count() as u64
                    + u64::from(used > 0 && data[used - 1] != b'\n');
                session.record(plan, used as u64, lines);
            }
            session.save().unwrap();
            plans
        }

        /// Every line written was read exactly once.
        fn assert_exactly_once(&self) {
            let mut seen = BTreeSet::new();
            for line in &self.read {
                assert!(seen.insert(line), "read twice: {line}");
            }
            let missing: Vec<&String> = self.written.iter().filter(|l| !seen.contains(l)).collect();
            assert!(missing.is_empty(), "never read: {missing:?}");
            assert_eq!(self.read.len(), self.written.len());
        }

        fn rename(&self, from: &str, to: &str) {
            fs::rename(self.path(from), self.path(to)).unwrap();
        }

        /// logrotate `create`: shift, rename, create an empty file.
        fn rotate_create(&self) {
            self.rename("access.log", "access.log.1");
            File::create(self.log()).unwrap();
        }

        /// logrotate `copytruncate`: copy, then truncate the original in place.
        fn rotate_copytruncate(&self) {
            fs::copy(self.log(), self.path("access.log.1")).unwrap();
            OpenOptions::new()
                .write(true)
                .open(self.log())
                .unwrap()
                .set_len(0)
                .unwrap();
        }

        /// logrotate `compress`: gzip `name` into `name.gz`, remove `name`.
        fn gzip(&self, name: &str) {
            let data = fs::read(self.path(name)).unwrap();
            let out = File::create(self.path(&format!("{name}.gz"))).unwrap();
            let mut enc = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            enc.write_all(&data).unwrap();
            enc.finish().unwrap();
            fs::remove_file(self.path(name)).unwrap();
        }
    }

    #[test]
    fn append_between_runs_reads_each_line_once() {
        let mut sim = Sim::new();
        sim.append(5); // short: the fingerprint covers less than 4096 bytes
        sim.run(&["access.log"]);
        sim.append(100);
        sim.append_partial();
        let plans = sim.run(&["access.log"]);
        assert!(plans[0].start > 0, "{plans:?}");
        assert_eq!(plans[0].reason, "continuing where the last run stopped");
        sim.finish_line();
        sim.append(3);
        sim.run(&["access.log"]);
        let plans = sim.run(&["access.log"]); // nothing new
        assert_eq!(plans.len(), 1);
        sim.assert_exactly_once();
    }

    #[test]
    fn rename_and_create_reads_the_rest_of_the_rotated_file_first() {
        let mut sim = Sim::new();
        sim.append(100);
        sim.run(&["access.log"]);
        sim.append(20);
        sim.rotate_create();
        sim.append(30);
        let plans = sim.run(&["access.log"]);
        assert_eq!(plans.len(), 2, "{plans:?}");
        assert!(plans[0].path.ends_with("access.log.1"));
        assert!(plans[0].start > 0);
        assert_eq!(plans[1].start, 0);
        sim.append(7);
        sim.run(&["access.log"]);
        sim.assert_exactly_once();
    }

    #[test]
    fn rename_create_and_compress_reads_the_rest_of_the_gzip() {
        let mut sim = Sim::new();
        sim.append(150);
        sim.run(&["access.log"]);
        sim.append(20);
        sim.rotate_create();
        sim.gzip("access.log.1");
        sim.append(30);
        let plans = sim.run(&["access.log"]);
        assert!(plans[0].path.ends_with("access.log.1.gz"), "{plans:?}");
        assert!(plans[0].start > 0);
        sim.append(2);
        sim.run(&["access.log"]);
        sim.assert_exactly_once();
    }

    #[test]
    fn copytruncate_reads_the_rest_of_the_copy_then_the_truncated_file() {
        let mut sim = Sim::new();
        sim.append(100);
        sim.run(&["access.log"]);
        sim.append(20);
        sim.rotate_copytruncate();
        sim.append(200); // grows past the old offset again
        let plans = sim.run(&["access.log"]);
        assert_eq!(plans.len(), 2, "{plans:?}");
        assert!(plans[0].reason.contains("copytruncate"));
        assert!(plans[1].reason.contains("copytruncate"));
        sim.append(5);
        sim.run(&["access.log"]);
        sim.assert_exactly_once();
    }

    #[test]
    fn copytruncate_to_a_shorter_file_with_compression() {
        let mut sim = Sim::new();
        sim.append(100);
        sim.run(&["access.log"]);
        sim.append(20);
        sim.rotate_copytruncate();
        sim.gzip("access.log.1");
        sim.append(3); // shorter than the old offset
        let plans = sim.run(&["access.log"]);
        assert!(plans[0].path.ends_with("access.log.1.gz"), "{plans:?}");
        sim.append(5);
        sim.run(&["access.log"]);
        sim.assert_exactly_once();
    }

    #[test]
    fn two_rotations_between_runs_read_the_old_end_and_the_whole_middle_file() {
        let mut sim = Sim::new();
        sim.append(100);
        sim.run(&["access.log"]);
        sim.append(20);
        sim.rotate_create(); // access.log.1 = the file read last time
        sim.append(40);
        // compress + delaycompress: .1 -> .2.gz, access.log -> .1
        sim.rename("access.log.1", "access.log.2");
        sim.gzip("access.log.2");
        sim.rotate_create();
        sim.append(10);
        let plans = sim.run(&["access.log"]);
        let names: Vec<&str> = plans
            .iter()
            .map(|p| p.path.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(names, ["access.log.2.gz", "access.log.1", "access.log"]);
        assert!(plans[0].start > 0);
        assert_eq!(plans[1].start, 0);
        sim.assert_exactly_once();
    }

    #[test]
    fn two_copytruncates_between_runs_with_dateext() {
        let mut sim = Sim::new();
        sim.append(100);
        sim.run(&["access.log"]);
        sim.append(20);
        sim.rotate_copytruncate();
        sim.rename("access.log.1", "access.log-20240501");
        sim.gzip("access.log-20240501");
        sim.append(40);
        sim.rotate_copytruncate();
        sim.rename("access.log.1", "access.log-20240502");
        sim.append(10);
        let plans = sim.run(&["access.log"]);
        let names: Vec<&str> = plans
            .iter()
            .map(|p| p.path.file_name().unwrap().to_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "access.log-20240501.gz",
                "access.log-20240502",
                "access.log"
            ]
        );
        sim.assert_exactly_once();
    }

    #[test]
    fn a_rotated_file_deleted_unread_is_reported_lost_and_nothing_is_read_twice() {
        let mut sim = Sim::new();
        sim.append(100);
        sim.run(&["access.log"]);
        sim.append(20); // these are lost with the deleted file
        sim.rotate_create();
        fs::remove_file(sim.path("access.log.1")).unwrap();
        sim.append(30);
        let plans = sim.run(&["access.log"]);
        assert_eq!(plans.len(), 1);
        assert!(plans[0].lossy);
        let lost: Vec<String> = sim.written.drain(100..120).collect();
        assert!(lost.iter().all(|l| !sim.read.contains(l)));
        sim.assert_exactly_once();
    }

    #[test]
    fn rotated_files_given_as_inputs_are_not_read_twice() {
        let mut sim = Sim::new();
        sim.append(100);
        sim.run(&["access.log"]);
        sim.append(20);
        sim.rotate_create();
        sim.append(30);
        // A glob such as access.log* lists the rotated file as well.
        let plans = sim.run(&["access.log", "access.log.1"]);
        assert_eq!(plans.len(), 2, "no sibling added: {plans:?}");
        assert!(plans[1].start > 0, "{plans:?}");
        sim.append(10);
        sim.rotate_create(); // access.log.1 is replaced, the old one dropped
        sim.gzip("access.log.1");
        sim.run(&["access.log", "access.log.1.gz"]);
        sim.run(&["access.log", "access.log.1.gz"]);
        sim.assert_exactly_once();
    }

    #[test]
    fn a_missing_live_file_records_the_rotated_one() {
        let mut sim = Sim::new();
        sim.append(100);
        sim.run(&["access.log"]);
        sim.append(20);
        sim.rename("access.log", "access.log.1"); // `nocreate`: the server creates it later
        let plans = sim.run(&["access.log"]);
        assert!(plans[0].path.ends_with("access.log.1"), "{plans:?}");
        sim.append(10);
        sim.run(&["access.log"]);
        sim.assert_exactly_once();
    }

    /// Counters of `n` parsed lines.
    fn totals_of(n: u64) -> Totals {
        let mut lines = tlsgap_agg::LineStats::default();
        for _ in 0..n {
            lines.ok();
        }
        Totals::of_run(&lines, Some(tlsgap_agg::RequestTotals::default()), None)
    }

    #[test]
    fn counters_add_up_start_once_and_are_dropped_by_a_run_that_does_not_count() {
        let mut sim = Sim::new();
        let cfg = sim.state_cfg();
        sim.append(5);
        // A new state: the counters start with this run.
        let mut session = Session::open(&cfg).unwrap();
        for plan in session.plan(&[sim.log().into()]) {
            session.record(&plan, 10, 1);
        }
        let (kept, start) = session.add_totals(&totals_of(5));
        assert_eq!((kept.totals.lines, start), (5, TotalsStart::NewState));
        let created = kept.created;
        session.save().unwrap();
        // The next run adds to them; the creation time stays.
        let mut session = Session::open(&cfg).unwrap();
        let (kept, start) = session.add_totals(&totals_of(3));
        assert_eq!((kept.totals.lines, start), (8, TotalsStart::Continued));
        assert_eq!(kept.created, created);
        session.save().unwrap();
        assert_eq!(
            State::load(&cfg.path).unwrap().totals.unwrap().totals.lines,
            8
        );
        // A run that reads nothing and counts nothing keeps them.
        Session::open(&cfg).unwrap().save().unwrap();
        assert!(State::load(&cfg.path).unwrap().totals.is_some());
        // A run that reads new lines without counting them drops them...
        sim.append(2);
        let mut session = Session::open(&cfg).unwrap();
        for plan in session.plan(&[sim.log().into()]) {
            session.record(&plan, 20, 2);
        }
        session.save().unwrap();
        assert!(State::load(&cfg.path).unwrap().totals.is_none());
        // ...and the next counting run starts them again, as for an older state file.
        let mut session = Session::open(&cfg).unwrap();
        let (kept, start) = session.add_totals(&totals_of(1));
        assert_eq!((kept.totals.lines, start), (1, TotalsStart::Missing));
        assert!(kept.created >= created);
    }

    #[test]
    fn lock_is_exclusive_and_waiting_succeeds_once_released() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let first = lock(&state, None).unwrap();
        let err = format!("{:#}", lock(&state, None).unwrap_err());
        assert!(
            err.contains("another tlsgap run holds the lock on"),
            "{err}"
        );
        assert!(err.contains(&state.display().to_string()), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert!(err.contains("--lock-wait"), "{err}");
        let err = format!("{:#}", lock(&state, Some(Duration::ZERO)).unwrap_err());
        assert!(err.contains("after waiting"), "{err}");

        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = {
            let state = state.clone();
            std::thread::spawn(move || {
                let got = lock(&state, Some(Duration::from_secs(600)));
                tx.send(()).unwrap();
                got.map(|_| ())
            })
        };
        // While the first lock is held the waiter cannot have it.
        assert!(rx.try_recv().is_err());
        drop(first);
        waiter.join().unwrap().unwrap();
        assert!(rx.recv().is_ok());
    }

    #[test]
    fn corrupt_or_foreign_state_files_are_errors_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        for (content, says) in [
            (&b"{\"format\": \"tlsgap-state\", \"vers"[..], "not JSON"),
            (b"{\"last_run\": 17}", "not a tlsgap state file"),
            (b"[1, 2]", "not a tlsgap state file"),
            (
                b"{\"format\": \"tlsgap-state\", \"version\": 99, \"inputs\": {}}",
                "newer tlsgap",
            ),
            (
                b"{\"format\": \"tlsgap-state\", \"version\": 1, \"inputs\": {\"a\": 3}}",
                "malformed",
            ),
        ] {
            fs::write(&path, content).unwrap();
            let err = format!("{:#}", State::load(&path).unwrap_err());
            assert!(err.contains(&path.display().to_string()), "{err}");
            assert!(err.contains(says), "{err}");
        }
        fs::remove_file(&path).unwrap();
        assert!(State::load(&path).unwrap().inputs.is_empty());
    }

    #[test]
    fn save_is_atomic_and_round_trips() {
        let mut sim = Sim::new();
        sim.append(3);
        sim.run(&["access.log"]);
        let state = State::load(&sim.path("state.json")).unwrap();
        let entry = state.inputs.get(&state_key(Path::new(&sim.log()))).unwrap();
        let content = fs::read(sim.log()).unwrap();
        assert_eq!(entry.offset, content.len() as u64);
        assert_eq!(entry.fingerprint_bytes, content.len() as u64);
        assert_eq!(entry.fingerprint, fingerprint(&content));
        let leftovers: Vec<_> = fs::read_dir(sim.dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let again: serde_json::Value =
            serde_json::from_slice(&fs::read(sim.path("state.json")).unwrap()).unwrap();
        assert_eq!(again["format"], FORMAT);
        assert_eq!(again["version"], VERSION);
    }

    #[test]
    fn open_at_skips_into_plain_and_compressed_files() {
        let mut sim = Sim::new();
        sim.append(50);
        let all = fs::read(sim.log()).unwrap();
        let mut rest = Vec::new();
        Input::open_at(Path::new(&sim.log()), 1000)
            .unwrap()
            .read_to_end(&mut rest)
            .unwrap();
        assert_eq!(rest, all[1000..]);
        sim.gzip("access.log");
        let gz = sim.path("access.log.gz");
        let mut rest = Vec::new();
        let mut input = Input::open_at(&gz, 1000).unwrap();
        assert_eq!(input.compression, Compression::Gzip);
        input.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, all[1000..]);
        let mut past = Vec::new();
        Input::open_at(&gz, 1 << 30)
            .unwrap()
            .read_to_end(&mut past)
            .unwrap();
        assert!(past.is_empty());
    }

    #[test]
    fn rotation_suffixes_rank_by_age() {
        assert_eq!(rotation_rank(".1"), Some(Rank::Numeric(1)));
        assert_eq!(rotation_rank(".12.gz"), Some(Rank::Numeric(12)));
        assert_eq!(
            rotation_rank("-20240501.zst"),
            Some(Rank::Date("20240501".into()))
        );
        assert_eq!(
            rotation_rank("-2024-05-01"),
            Some(Rank::Date("20240501".into()))
        );
        assert_eq!(rotation_rank(".gz"), None);
        assert_eq!(rotation_rank(".old"), None);
        assert_eq!(rotation_rank(".lock"), None);
        assert_eq!(rotation_rank(""), None);
        assert!(Rank::Numeric(1).newer_than(&Rank::Numeric(2)));
        assert!(Rank::Date("20240502".into()).newer_than(&Rank::Date("20240501".into())));
        assert!(!Rank::Numeric(1).newer_than(&Rank::Date("1".into())));
        assert_eq!(complete_prefix_len(b"a\nb"), 2);
        assert_eq!(complete_prefix_len(b"ab"), 0);
        assert_eq!(complete_prefix_len(b"a\n"), 2);
    }
}
