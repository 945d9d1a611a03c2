//! The `tls` distribution over exported Parquet datasets, across hosts and days
//! (`tlsgap merge`).
//!
//! Inputs are directories (every `*.parquet` below them, hidden files skipped), Parquet
//! files, or glob patterns (quoted, so that the shell leaves them alone). Files are
//! read in path order, which for a `--partition-by date` dataset is date, then host,
//! then part; `--since-date`/`--until-date`, `--host` and a time window prune files by
//! their `date=`/`host=` directories before anything is opened. Each file is read with
//! polars' eager [`ParquetReader`], projected to the columns `client`, `tls_protocol`,
//! `tls_cipher` and what the [`Visit`] asks for (`time`, `user_agent`), in slices of whole row groups of about [`BATCH_ROWS`] rows, so memory stays bounded
//! by one slice plus the aggregate. polars' lazy scans (`scan_parquet`, hive
//! partitioning, predicate pushdown) would need the `lazy` feature, which adds many
//! minutes to every clean build for little gain here: the partition filter is a
//! directory-name comparison and the work is a hash-map update per row.
//!
//! [`scan`] hands every row inside the window to a [`Visit`]: `merge` counts with
//! [`TlsAgg::add`] per row, as `tls` counts log lines (and its `--by` periods), and
//! `whatif --dataset` judges rows as `whatif` judges lines. With `--count
//! clients` "a client's first TLS request" is the one with the earliest `time` across
//! all files (ties and rows without a time: dataset order), so the answer does not
//! depend on which host's files happen to be read first.

use std::fs::File;
use std::path::{Path, PathBuf};

use polars::prelude::{DataFrame, ParallelStrategy, ParquetReader, SerReader};
use rustc_hash::FxHashMap;
use tlsgap_agg::distinct::{Budget, Hll};
use tlsgap_agg::trend::TrendCounter;
use tlsgap_agg::{ClientKey, CountMode, InputReport, LineStats, Rows, TlsAgg, TlsReport};

use crate::dataset::check_schema_version;
use crate::window::{period_key, Period, Window, Zone};
use crate::{bail, Context, Notes, Result};

/// Rows read at once (whole row groups, so a slice may be larger by one row group).
pub const BATCH_ROWS: usize = 1 << 20;

/// What to read and count.
#[derive(Debug, Clone)]
pub struct MergeOptions {
    /// Directories (every `*.parquet` below them), Parquet files, or glob patterns.
    pub paths: Vec<String>,
    /// Requests, or distinct clients (earliest TLS request by `time` decides).
    pub count: CountMode,
    /// What one client is, with `clients` (`addr+ua` reads the `user_agent` column; a
    /// file without it counts addresses, with a note).
    pub client_key: ClientKey,
    /// Only `date=YYYY-MM-DD` partitions on or after this day (`YYYY-MM-DD`).
    pub since_date: Option<String>,
    /// Only `date=YYYY-MM-DD` partitions on or before this day.
    pub until_date: Option<String>,
    /// `--memory-limit`: bytes the distinct clients (`--count clients`) may take before
    /// clients met later are estimated with HyperLogLog.
    pub memory_limit: usize,
    /// `--since`/`--until`: only rows whose `time` is inside (rows without a time are
    /// then outside, as log lines are). Partitions that cannot hold such rows are not
    /// read.
    pub window: Option<Window>,
    /// `--by`: also the requests per protocol per period, local in the zone, as `tls
    /// --by` gives them.
    pub by: Option<(Period, Zone)>,
    /// `--host` (repeatable): only these hosts' parts (`host=` directories, or the
    /// host in `part-HOST-N.parquet`); empty: every host.
    pub hosts: Vec<String>,
    /// Read `time` for [`MergeOutcome::newest_us`] even when nothing else needs it
    /// (Prometheus' `tlsgap_last_processed_timestamp_seconds`).
    pub newest: bool,
}

/// What the merge found.
#[derive(Debug)]
pub struct MergeOutcome {
    /// The distribution, as `tls` reports it (rows count as lines).
    pub report: TlsReport,
    /// Parquet files found.
    pub files: usize,
    /// Files that could not be read.
    pub failed: usize,
    /// Distinct `date=` partitions among the files.
    pub days: usize,
    /// Rows read.
    pub rows: u64,
    /// Rows read and left out by the window.
    pub outside_window: u64,
    /// With [`MergeOptions::by`]: one row per period and protocol
    /// ([`crate::tls::PERIOD_COLUMNS`]).
    pub periods: Option<Rows>,
    /// The newest row's time inside the window, µs since the epoch.
    pub newest_us: Option<i64>,
}

/// A valid calendar date written `YYYY-MM-DD` (ISO dates compare as text).
pub fn parse_date(s: &str) -> Result<String, String> {
    let bad = || format!("{s:?} is not a date written YYYY-MM-DD");
    let b = s.as_bytes();
    if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return Err(bad());
    }
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = s.get(r)?;
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    match (num(0..4), num(5..7), num(8..10)) {
        (Some(y), Some(m), Some(d))
            if chrono::NaiveDate::from_ymd_opt(y as i32, m, d).is_some() =>
        {
            Ok(s.to_string())
        }
        _ => Err(bad()),
    }
}

/// The `YYYY-MM-DD` of the nearest `date=...` directory above `path`, if any
/// (`Some(None)` for the null partition and other non-date values).
fn partition_date(path: &Path) -> Option<Option<String>> {
    path.parent()?.ancestors().find_map(|dir| {
        let name = dir.file_name()?.to_str()?;
        let value = name.strip_prefix("date=")?;
        Some(parse_date(value).ok())
    })
}

/// The host of a dataset part: the nearest `host=` directory above it, else the HOST
/// of a `part-HOST-N.parquet` name (the layout before `host=` directories).
fn partition_host(path: &Path) -> Option<String> {
    let from_dir = path.parent()?.ancestors().find_map(|dir| {
        let name = dir.file_name()?.to_str()?;
        Some(name.strip_prefix("host=")?.to_string())
    });
    from_dir.or_else(|| {
        let name = path.file_name()?.to_str()?;
        let rest = name.strip_prefix("part-")?.strip_suffix(".parquet")?;
        let (host, n) = rest.rsplit_once('-')?;
        (!host.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .then(|| host.to_string())
    })
}

/// Whether the rows of partition `date` (the logged, local date) can fall in `window`:
/// a local date is within 14 hours before and 12 hours after the UTC day of the same
/// name; a day's margin either side is taken.
fn date_may_overlap(date: &str, window: &Window) -> bool {
    let Ok(d) = chrono::NaiveDate::parse_from_str(date, "%Y-%m-%d") else {
        return true;
    };
    let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap_or_default();
    let day = d.signed_duration_since(epoch).num_days();
    let us = |days: i64| days.saturating_mul(86_400_000_000);
    window.since.is_none_or(|s| us(day + 2) > s) && window.until.is_none_or(|u| us(day - 1) < u)
}

fn is_hidden(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with('.') || n.starts_with('_'))
}

/// Every `*.parquet` below `dir`, hidden entries (temporary parts, `_SUCCESS`-style
/// markers) skipped.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        let path = entry.path();
        if is_hidden(&path) {
            continue;
        }
        let ty = entry
            .file_type()
            .with_context(|| format!("listing {}", dir.display()))?;
        if ty.is_dir() || (ty.is_symlink() && path.is_dir()) {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "parquet") {
            out.push(path);
        }
    }
    Ok(())
}

/// The Parquet files the arguments name, sorted by their canonical paths, each file
/// once however often and however it was named (`ds ./ds`, an absolute path, a
/// symlink, a hard link, a glob inside a directory also given: audit of 2026-11-28,
/// such a file was counted twice); with how many names were dropped so.
fn find_files(args: &[String]) -> Result<(Vec<PathBuf>, usize)> {
    let mut files = Vec::new();
    for arg in args {
        let path = Path::new(arg);
        if path.is_dir() {
            walk(path, &mut files)?;
        } else if path.is_file() {
            files.push(path.to_path_buf());
        } else if arg.contains(['*', '?', '[']) {
            let mut matched = false;
            let paths = glob::glob(arg).with_context(|| format!("bad pattern {arg:?}"))?;
            for p in paths {
                let p = p.with_context(|| format!("expanding {arg:?}"))?;
                matched = true;
                if p.is_dir() {
                    walk(&p, &mut files)?;
                } else if p.extension().is_some_and(|e| e == "parquet") && !is_hidden(&p) {
                    files.push(p);
                }
            }
            if !matched {
                bail!("{}: no file or directory matches", arg);
            }
        } else {
            bail!("{}: no such file or directory", arg);
        }
    }
    let mut named: Vec<(PathBuf, PathBuf)> =
        files.into_iter().map(|f| (fs_canonical(&f), f)).collect();
    named.sort();
    let given = named.len();
    named.dedup_by(|a, b| a.0 == b.0);
    let mut seen = std::collections::HashSet::new();
    named.retain(|(canonical, _)| match std::fs::metadata(canonical) {
        Ok(m) => {
            use std::os::unix::fs::MetadataExt;
            seen.insert((m.dev(), m.ino()))
        }
        Err(_) => true,
    });
    let dropped = given - named.len();
    Ok((named.into_iter().map(|(_, f)| f).collect(), dropped))
}

/// `path` made absolute with symlinks resolved (as given when that fails).
fn fs_canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// A logged (protocol, cipher) pair; `None` is an absent value.
type Pair = (Option<Box<str>>, Option<Box<str>>);

/// The bytes one exact client of [`FirstTls`] is taken to cost besides its key: more
/// than `TlsAgg`'s (its value is larger), so every client held here fits there too.
const FIRST_TLS_ENTRY_BYTES: usize = 96;

/// Clients mode: each client's earliest TLS request so far, exactly while the clients
/// fit the memory limit. Clients first met after that are sketched (HyperLogLog) under
/// the pair of the row they were met in, not their earliest one: those counts are
/// estimates and upper bounds (a sketched client met with several pairs counts under
/// each), and the report says so.
struct FirstTls {
    /// Client -> (time µs or `i64::MAX`, dataset row number, pair index) of its
    /// earliest TLS request; `None` while only plain requests were seen.
    clients: FxHashMap<Box<str>, Option<(i64, u64, u32)>>,
    pairs: Vec<Pair>,
    pair_index: FxHashMap<Pair, u32>,
    budget: Budget,
    /// Per pair index, the clients met beyond the budget.
    sketched: Vec<Hll>,
    /// Clients met beyond the budget over plain HTTP.
    sketched_plain: Hll,
}

impl FirstTls {
    fn new(memory_limit: usize) -> FirstTls {
        FirstTls {
            clients: FxHashMap::default(),
            pairs: Vec::new(),
            pair_index: FxHashMap::default(),
            budget: Budget::new(memory_limit),
            sketched: Vec::new(),
            sketched_plain: Hll::new(),
        }
    }

    fn add(&mut self, client: &str, at: (i64, u64), protocol: Option<&str>, cipher: Option<&str>) {
        // Empty values mean plain HTTP, as in TlsAgg::add.
        let protocol = protocol.filter(|p| !p.is_empty());
        let cipher = cipher.filter(|c| !c.is_empty());
        let known = self.clients.contains_key(client);
        if !known && !self.budget.admit(client.len() + FIRST_TLS_ENTRY_BYTES) {
            match self.pair(protocol, cipher) {
                None => self.sketched_plain.insert(client.as_bytes()),
                Some(i) => {
                    let i = i as usize;
                    if self.sketched.len() <= i {
                        self.sketched.resize_with(i + 1, Hll::new);
                    }
                    if let Some(h) = self.sketched.get_mut(i) {
                        h.insert(client.as_bytes());
                    }
                }
            }
            return;
        }
        if protocol.is_none() && cipher.is_none() {
            if !known {
                self.clients.insert(client.into(), None);
            }
            return;
        }
        let better = match self.clients.get(client) {
            Some(Some((t, n, _))) => at < (*t, *n),
            _ => true,
        };
        if !better {
            return;
        }
        let Some(pair) = self.pair(protocol, cipher) else {
            return;
        };
        self.clients.insert(client.into(), Some((at.0, at.1, pair)));
    }

    /// The index of a TLS pair (`None`: plain HTTP).
    fn pair(&mut self, protocol: Option<&str>, cipher: Option<&str>) -> Option<u32> {
        if protocol.is_none() && cipher.is_none() {
            return None;
        }
        let key: Pair = (protocol.map(Box::from), cipher.map(Box::from));
        Some(match self.pair_index.get(&key) {
            Some(&i) => i,
            None => {
                let i = u32::try_from(self.pairs.len()).unwrap_or(u32::MAX);
                self.pairs.push(key.clone());
                self.pair_index.insert(key, i);
                i
            }
        })
    }

    /// Feed every client once, with its earliest TLS pair (or as plain), then the
    /// sketched ones.
    fn into_agg(self) -> TlsAgg {
        let mut agg = TlsAgg::with_memory_limit(CountMode::Clients, self.budget.limit());
        for (client, first) in &self.clients {
            let pair = first.and_then(|(_, _, i)| self.pairs.get(i as usize));
            match pair {
                Some((p, c)) => agg.add(
                    Some(client.as_bytes()),
                    p.as_deref().map(str::as_bytes),
                    c.as_deref().map(str::as_bytes),
                ),
                None => agg.add(Some(client.as_bytes()), None, None),
            }
        }
        for (i, h) in self.sketched.iter().enumerate() {
            if let (Some((p, c)), false) = (self.pairs.get(i), h.is_empty()) {
                agg.add_sketched(
                    p.as_deref().map(str::as_bytes),
                    c.as_deref().map(str::as_bytes),
                    h,
                );
            }
        }
        if !self.sketched_plain.is_empty() {
            agg.add_sketched(None, None, &self.sketched_plain);
        }
        agg
    }
}

enum Counter {
    Requests(TlsAgg),
    Clients(FirstTls),
}

/// One row of a dataset, as far as the analyses read it (absent columns: `None`).
#[derive(Debug)]
pub struct Row<'a> {
    /// `time`, µs since the epoch.
    pub time: Option<i64>,
    /// `client`.
    pub client: Option<&'a str>,
    /// `tls_protocol`.
    pub protocol: Option<&'a str>,
    /// `tls_cipher`.
    pub cipher: Option<&'a str>,
    /// `user_agent`, when the visitor asked for it and the file has it.
    pub user_agent: Option<Option<&'a str>>,
    /// What the client offered (`tls_offered_ciphers`, `tls_offered_groups`,
    /// `tls_hello_versions` joined back into the logged text, `tls_hello_version`),
    /// when the visitor asked for it and the file has the offered suites.
    pub offer: Option<[Option<&'a str>; 4]>,
    /// The row's number across the whole scan (dataset order).
    pub seq: u64,
}

/// What one pass over a dataset does with the rows inside the window.
pub trait Visit {
    /// Whether rows need `time` (besides the window's own need).
    fn wants_time(&self) -> bool;
    /// Whether rows need `user_agent`.
    fn wants_user_agent(&self) -> bool;
    /// Whether rows need what the client offered ([`Row::offer`]).
    fn wants_offer(&self) -> bool {
        false
    }
    /// Take one row.
    fn row(&mut self, row: &Row<'_>);
}

/// `merge`'s counting: the distribution, and the periods with `--by`.
struct TlsVisit<'a> {
    counter: Counter,
    client_key: ClientKey,
    by: Option<&'a (Period, Zone)>,
    trend: TrendCounter,
    newest_us: Option<i64>,
    /// Whether `newest_us` is asked for ([`MergeOptions::newest`]).
    newest: bool,
    key: String,
}

impl Visit for TlsVisit<'_> {
    fn wants_time(&self) -> bool {
        self.newest || self.by.is_some() || matches!(self.counter, Counter::Clients(_))
    }

    fn wants_user_agent(&self) -> bool {
        matches!(self.counter, Counter::Clients(_)) && self.client_key == ClientKey::AddrUa
    }

    fn row(&mut self, r: &Row<'_>) {
        if let Some(t) = r.time {
            self.newest_us = Some(self.newest_us.map_or(t, |n| n.max(t)));
            if let Some((period, zone)) = self.by {
                let name = r.protocol.filter(|p| !p.is_empty() && *p != "-");
                self.trend
                    .add(Some(t), name.unwrap_or("plain").as_bytes(), |s| {
                        period_key(s, *period, zone)
                    });
            }
        }
        match &mut self.counter {
            Counter::Requests(agg) => agg.add(
                r.client.map(str::as_bytes),
                r.protocol.map(str::as_bytes),
                r.cipher.map(str::as_bytes),
            ),
            Counter::Clients(first) => {
                let c = r.client.unwrap_or("-");
                let c = match r.user_agent {
                    // The same key `tls --client-key addr+ua` builds from a log line.
                    Some(u) => {
                        self.key.clear();
                        self.key.push_str(c);
                        self.key.push('\0');
                        self.key.push_str(u.unwrap_or("-"));
                        self.key.as_str()
                    }
                    None => c,
                };
                first.add(c, (r.time.unwrap_or(i64::MAX), r.seq), r.protocol, r.cipher);
            }
        }
    }
}

/// Whether a file's clients were keyed by address alone though `addr+ua` was asked.
type ByAddressOnly = bool;

/// Visit the rows of one file; returns the rows read.
fn read_file(
    path: &Path,
    visit: &mut dyn Visit,
    window: Option<&Window>,
    stats: &mut LineStats,
    row_seq: &mut u64,
    client_key: ClientKey,
) -> Result<(u64, ByAddressOnly)> {
    let mut file = File::open(path).context("cannot open")?;
    let mut reader = ParquetReader::new(&mut file);
    let schema = reader.schema().context("not a Parquet file")?;
    let metadata = reader.get_metadata()?.clone();
    check_schema_version(&metadata)?;
    let has = |name: &str| schema.get(name).is_some();
    if !has("tls_protocol") && !has("tls_cipher") {
        bail!(
            "no tls_protocol or tls_cipher column (exported from a log format without TLS \
             fields?)"
        );
    }
    let mut columns: Vec<String> = ["client", "tls_protocol", "tls_cipher"]
        .into_iter()
        .filter(|c| has(c))
        .map(String::from)
        .collect();
    if (visit.wants_time() || window.is_some()) && has("time") {
        columns.push("time".into());
    }
    let with_ua = visit.wants_user_agent() && has("user_agent");
    if with_ua {
        columns.push("user_agent".into());
    }
    if visit.wants_offer() && has(OFFER_COLUMNS[0]) {
        columns.extend(
            OFFER_COLUMNS
                .iter()
                .filter(|c| has(c))
                .map(|c| c.to_string()),
        );
    }
    // The visitor keys clients by address and User-Agent, and this file has none.
    let by_address_only =
        visit.wants_user_agent() && client_key == ClientKey::AddrUa && !has("user_agent");
    // Slices of whole row groups: the reader decodes only the groups a slice touches.
    let mut slices: Vec<(usize, usize)> = Vec::new();
    let mut start = 0usize;
    let mut len = 0usize;
    for rg in &metadata.row_groups {
        len += rg.num_rows();
        if len >= BATCH_ROWS {
            slices.push((start, len));
            start += len;
            len = 0;
        }
    }
    if len > 0 {
        slices.push((start, len));
    }
    let mut rows = 0u64;
    for (offset, len) in slices {
        let mut reader = ParquetReader::new(&mut file)
            .with_columns(Some(columns.clone()))
            .with_slice(Some((offset, len)))
            .read_parallel(ParallelStrategy::RowGroups);
        reader.set_metadata(metadata.clone());
        let df = reader.finish()?;
        rows += visit_frame(&df, visit, window, stats, row_seq)?;
    }
    Ok((rows, by_address_only))
}

/// The columns of what the client offered, in [`Row::offer`] order.
const OFFER_COLUMNS: [&str; 4] = [
    "tls_offered_ciphers",
    "tls_offered_groups",
    "tls_hello_versions",
    "tls_hello_version",
];

/// A list cell back into the text the server logged: httpd's hex items run together,
/// nginx's names joined by `:`.
fn logged_text(items: &polars::prelude::Series) -> Option<String> {
    let ca = items.str().ok()?;
    let parts: Vec<&str> = ca.iter().flatten().collect();
    let hex = !parts.is_empty()
        && parts
            .iter()
            .all(|p| matches!(p.len(), 2 | 4) && p.bytes().all(|b| b.is_ascii_hexdigit()));
    Some(parts.join(if hex { "" } else { ":" }))
}

fn visit_frame(
    df: &DataFrame,
    visit: &mut dyn Visit,
    window: Option<&Window>,
    stats: &mut LineStats,
    row_seq: &mut u64,
) -> Result<u64> {
    let text = |name: &str| -> Result<Option<&polars::prelude::StringChunked>> {
        match df.column(name) {
            Ok(c) => Ok(Some(c.str().with_context(|| format!("column {name}"))?)),
            Err(_) => Ok(None),
        }
    };
    let height = df.height();
    // Column iterators, not `get(i)`: no chunk search per row. A missing column
    // reads as null.
    let mut client = text("client")?.map(|c| c.iter());
    let mut protocol = text("tls_protocol")?.map(|c| c.iter());
    let mut cipher = text("tls_cipher")?.map(|c| c.iter());
    let mut ua = text("user_agent")?.map(|c| c.iter());
    // Offer lists, rebuilt per row (only `whatif --dataset` asks for them).
    let lists: Vec<Option<Vec<Option<String>>>> = OFFER_COLUMNS
        .iter()
        .map(|name| match df.column(name) {
            Ok(c) => match c.dtype() {
                polars::prelude::DataType::List(_) => c.list().ok().map(|l| {
                    l.series_iter()
                        .map(|s| s.and_then(|s| logged_text(&s)))
                        .collect()
                }),
                _ => c
                    .str()
                    .ok()
                    .map(|t| t.iter().map(|v| v.map(str::to_string)).collect()),
            },
            Err(_) => None,
        })
        .collect();
    let has_offer = lists.first().is_some_and(Option::is_some);
    let mut time = match df.column("time") {
        Ok(c) => Some(
            c.datetime()
                .context("column time is not a timestamp")?
                .physical()
                .iter(),
        ),
        Err(_) => None,
    };
    for i in 0..height {
        let row = Row {
            time: time.as_mut().and_then(|it| it.next().flatten()),
            client: client.as_mut().and_then(|it| it.next().flatten()),
            protocol: protocol.as_mut().and_then(|it| it.next().flatten()),
            cipher: cipher.as_mut().and_then(|it| it.next().flatten()),
            user_agent: ua.as_mut().map(|it| it.next().flatten()),
            offer: has_offer.then(|| {
                let cell =
                    |k: usize| -> Option<&str> { lists.get(k)?.as_ref()?.get(i)?.as_deref() };
                [cell(0), cell(1), cell(2), cell(3)]
            }),
            seq: *row_seq + i as u64,
        };
        stats.total += 1;
        stats.parsed += 1;
        // A row without a time is outside any window, as a log line is.
        if window.is_some_and(|w| !row.time.is_some_and(|t| w.contains_micros(t))) {
            stats.outside_window += 1;
            continue;
        }
        visit.row(&row);
    }
    *row_seq += height as u64;
    Ok(height as u64)
}

/// What a scan read.
#[derive(Debug)]
pub struct Scanned {
    /// Row counts (rows count as parsed lines; `outside_window` as for lines).
    pub stats: LineStats,
    /// One entry per Parquet file, with its error if it could not be read.
    pub inputs: Vec<InputReport>,
    /// Parquet files selected.
    pub files: usize,
    /// Files that could not be read.
    pub failed: usize,
    /// Distinct `date=` partitions among the files.
    pub days: usize,
}

/// Select the files of `opts` (paths, date partitions, hosts, window) and give every
/// row inside the window to `visit`, file by file in path order. Errors: nothing
/// found, nothing readable.
pub fn scan(opts: &MergeOptions, visit: &mut dyn Visit, notes: &Notes) -> Result<Scanned> {
    let (mut files, twice) = find_files(&opts.paths)?;
    if twice > 0 {
        notes.warn(format!(
            "{twice} Parquet file name(s) named a file already found (the same path spelt \
             twice, a symlink, overlapping arguments): each file is read once"
        ));
    }
    if opts.since_date.is_some() || opts.until_date.is_some() {
        files.retain(|f| match partition_date(f) {
            Some(Some(d)) => {
                opts.since_date.as_deref().is_none_or(|s| d.as_str() >= s)
                    && opts.until_date.as_deref().is_none_or(|u| d.as_str() <= u)
            }
            _ => false,
        });
    }
    if !opts.hosts.is_empty() {
        files.retain(|f| partition_host(f).is_some_and(|h| opts.hosts.contains(&h)));
    }
    if files.is_empty() {
        bail!("no Parquet files found in {}", opts.paths.join(", "));
    }
    // Partitions whose day cannot hold a row of the window are not read.
    let window = opts.window.filter(|w| !w.is_all());
    if let Some(w) = &window {
        let before = files.len();
        files.retain(|f| match partition_date(f) {
            Some(Some(d)) => date_may_overlap(&d, w),
            _ => true,
        });
        if files.is_empty() {
            notes.warn(format!(
                "no row inside the time window: none of the {before} Parquet file(s) is in \
                 a day partition that can hold one"
            ));
        }
    }
    let mut inputs = Vec::with_capacity(files.len());
    let mut row_seq = 0u64;
    let mut stats = LineStats::default();
    for f in &files {
        let name = f.to_string_lossy().into_owned();
        let read = read_file(
            f,
            visit,
            window.as_ref(),
            &mut stats,
            &mut row_seq,
            opts.client_key,
        );
        match read {
            Ok((rows, by_address_only)) => {
                if by_address_only {
                    notes.warn(format!(
                        "{name}: no user_agent column: its clients are counted by address \
                         (--client-key addr)"
                    ));
                }
                inputs.push(InputReport {
                    name,
                    lines: rows,
                    malformed: None,
                    error: None,
                });
            }
            Err(e) => {
                let e = format!("{e:#}");
                notes.warn(format!("{name}: {e}"));
                inputs.push(InputReport {
                    name,
                    lines: 0,
                    malformed: None,
                    error: Some(e),
                });
            }
        }
    }
    if !inputs.is_empty() && inputs.iter().all(|i| i.error.is_some()) {
        return Err(
            crate::err!("no Parquet file could be read").with_kind(crate::ErrorKind::NoInput)
        );
    }
    let days = {
        let mut d: Vec<Option<String>> = files.iter().filter_map(|f| partition_date(f)).collect();
        d.sort();
        d.dedup();
        d.len()
    };
    if let Some(e) = crate::lines::empty_window(&stats) {
        notes.warn(e.replace("line", "row"));
    }
    let failed = inputs.iter().filter(|i| i.error.is_some()).count();
    Ok(Scanned {
        stats,
        inputs,
        files: files.len(),
        failed,
        days,
    })
}

/// Read and count every file the paths name. Errors: nothing found, nothing readable.
pub fn run(opts: &MergeOptions, notes: &Notes) -> Result<MergeOutcome> {
    let mode = opts.count;
    let mut visit = TlsVisit {
        counter: match mode {
            CountMode::Requests => Counter::Requests(TlsAgg::new(mode)),
            CountMode::Clients => Counter::Clients(FirstTls::new(opts.memory_limit)),
        },
        client_key: opts.client_key,
        by: opts.by.as_ref(),
        trend: TrendCounter::default(),
        newest_us: None,
        newest: opts.newest,
        key: String::new(),
    };
    let scanned = scan(opts, &mut visit, notes)?;
    let agg = match visit.counter {
        Counter::Requests(agg) => agg,
        Counter::Clients(first) => first.into_agg(),
    };
    let mut report = agg.report(&scanned.stats, scanned.inputs);
    if mode == CountMode::Clients {
        report.client_key = Some(opts.client_key.as_str());
    }
    if let Some(e) = &report.estimate {
        notes.warn(e.note());
    }
    let trend = visit.trend.finish();
    let periods = opts
        .by
        .as_ref()
        .map(|(_, zone)| crate::tls::period_rows(&trend, zone));
    Ok(MergeOutcome {
        report,
        files: scanned.files,
        failed: scanned.failed,
        days: scanned.days,
        rows: scanned.stats.total,
        outside_window: scanned.stats.outside_window,
        periods,
        newest_us: visit.newest_us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_checked() {
        assert!(parse_date("2026-11-01").is_ok());
        for bad in [
            "2026-02-30",
            "2026-1-01",
            "26-11-01",
            "2026/11/01",
            "+026-11-01",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn partition_dates_come_from_the_nearest_date_directory() {
        let p = Path::new("/d/date=2026-11-01/part-a-0.parquet");
        assert_eq!(partition_date(p), Some(Some("2026-11-01".into())));
        let p = Path::new("/d/date=__HIVE_DEFAULT_PARTITION__/part-a-0.parquet");
        assert_eq!(partition_date(p), Some(None));
        assert_eq!(partition_date(Path::new("/d/x.parquet")), None);
    }

    #[test]
    fn earliest_tls_request_wins_whatever_the_order() {
        let mut f = FirstTls::new(usize::MAX);
        f.add("a", (30, 0), Some("TLSv1.3"), Some("X"));
        f.add("a", (10, 1), Some("TLSv1.2"), Some("Y"));
        f.add("a", (5, 2), None, None);
        f.add("b", (i64::MAX, 3), Some(""), Some(""));
        let rep = f.into_agg().report(&LineStats::default(), vec![]);
        assert_eq!((rep.total, rep.plain), (1, 1));
        assert_eq!(rep.protocols[0].protocol, "TLSv1.2");
    }
}
