//! The hive-style dataset of `export --partition-by date`:
//! `DIR/date=YYYY-MM-DD/host=HOST/part-HOST-N.parquet`.
//!
//! * Two partition levels, `date` then `host`, so that Spark, DuckDB
//!   (`hive_partitioning`) and `merge` see both as columns and prune on them. Datasets
//!   written before the `host=` level (`date=.../part-HOST-N.parquet`) are still read,
//!   and a host's parts of that older layout are replaced by its next export of the
//!   day.
//! * Every part carries [`SCHEMA_VERSION`] and the tlsgap version in its key-value
//!   metadata ([`file_metadata`]); readers refuse a part from a newer schema instead
//!   of misreading it.
//!
//! * The date is the line's date in the offset the log wrote it in (what the
//!   administrator reads in the log), not UTC.
//! * Lines without a time go to `date=__HIVE_DEFAULT_PARTITION__`, the Hive/Spark
//!   name for a null partition value: DuckDB and Spark read `date` as NULL there and
//!   keep the column typed DATE (a `date=unknown` would turn it into text).
//! * Every run is authoritative for the (host, day) pairs it wrote: parts are
//!   written under hidden temporary names (`.part-HOST-N.parquet.tlsgap-PID.tmp`,
//!   which `*.parquet` globs, DuckDB and Spark skip) and, once every input was
//!   read, renamed over `part-HOST-N.parquet`; then this host's parts of that day
//!   with a higher N (from an earlier, bigger run) are removed. Other hosts' parts
//!   and days this run did not touch are left alone.
//! * Crash safety: a run that fails or is killed before the renames leaves the
//!   dataset as it was (only hidden temporary files, removed on error and by the
//!   host's next export of that day). `rename` replaces a file atomically, so a
//!   day that has one part per host (up to [`PART_ROWS`] rows) switches from old
//!   to new in one step.
//!   A crash during the renames of a day with several parts can leave a mix of new
//!   and old parts of that day for this host (duplicates, never a missing day);
//!   exporting that day again repairs it. Two runs with the same host and day at
//!   the same time are not supported.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::{bail, Context, Result};
use polars::prelude::{
    BatchedWriter, DataFrame, KeyValueMetadata, ParquetReader, ParquetWriter, Schema, SerReader,
};
use polars_parquet::parquet::metadata::FileMetadata;
use tlsgap_parser::time::civil_from_days;

/// A partition: days since 1970-01-01 in the log's offset, or `None` (no time).
pub type Day = Option<i64>;

/// Which of this host's earlier rows of a day a run keeps when it writes that day: a
/// run stands for the lines it read, and only those.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Keep {
    /// None: the run read every line of its inputs (no window, no `--state` continued),
    /// so its rows of a day are all the host has of it.
    #[default]
    Nothing,
    /// The rows whose time is outside `[since, until)` (µs since the epoch; `None`:
    /// unbounded), and those without a time: the run read only its window's lines.
    /// A window in another zone than the log's offset covers parts of two dated days
    /// (a nightly `--since yesterday --until today --tz Europe/Sofia` over a log in
    /// UTC: 2 hours of the day before), whose other rows must stay.
    Outside {
        since: Option<i64>,
        until: Option<i64>,
    },
    /// All of them: the run read only what came after the last run (`--state`).
    All,
}

impl Keep {
    /// Whether a row of `time` (µs since the epoch; `None`: no time) is kept.
    fn keeps(self, time: Option<i64>) -> bool {
        match self {
            Keep::Nothing => false,
            Keep::All => true,
            Keep::Outside { since, until } => {
                time.is_none_or(|t| since.is_some_and(|s| t < s) || until.is_some_and(|u| t >= u))
            }
        }
    }
}

/// Rows per part file before the next part is started.
pub const PART_ROWS: usize = 4 << 20;
/// Rows gathered before a row group is written, in a dataset (per day: blocks split by
/// day would otherwise make row groups of a few hundred rows) and in a single Parquet
/// file (one row group per 4 MB block, about 16 000 lines, made many small row groups,
/// and the writer keeps every row group's page metadata until the footer: memory grew
/// with the input; issue 12).
pub(crate) const ROW_GROUP_ROWS: usize = 1 << 16;

/// Rows gathered, in order, until they make a row group.
#[derive(Default)]
pub(crate) struct RowGroupRows {
    pending: Option<DataFrame>,
}

impl RowGroupRows {
    /// Add rows after those gathered; whether a row group's worth is now gathered.
    /// (`vstack`, then one `rechunk` per row group: appending with `extend` instead
    /// measured slower and larger, 2026-11-26.)
    pub(crate) fn push(&mut self, df: DataFrame) -> Result<bool> {
        match self.pending.as_mut() {
            Some(p) => {
                p.vstack_mut(&df)?;
            }
            None => self.pending = Some(df),
        }
        Ok(self
            .pending
            .as_ref()
            .is_some_and(|p| p.height() >= ROW_GROUP_ROWS))
    }

    /// The rows gathered (several chunks per column until rechunked).
    pub(crate) fn take(&mut self) -> Option<DataFrame> {
        self.pending.take()
    }
}
/// The directory name of rows without a time.
pub const NO_DATE: &str = "__HIVE_DEFAULT_PARTITION__";

/// The version of the row schema and layout `export` writes in Parquet, kept in every
/// file's key-value metadata under [`SCHEMA_VERSION_KEY`]. Version 1: the columns of
/// `export` (README, "Export columns"), times as UTC microseconds with
/// `time_offset_minutes`. A file without the key was written before versions were
/// recorded and has the version 1 columns. Raise it when a column changes meaning or
/// type (adding a column does not need it: readers take columns by name).
pub const SCHEMA_VERSION: u32 = 1;
/// The metadata key of [`SCHEMA_VERSION`].
pub const SCHEMA_VERSION_KEY: &str = "tlsgap.schema_version";
/// The metadata key of the version of tlsgap that wrote the file.
pub const WRITER_VERSION_KEY: &str = "tlsgap.version";

/// The key-value metadata of every Parquet file of rows `export` writes.
pub fn file_metadata() -> KeyValueMetadata {
    KeyValueMetadata::from_static(vec![
        (SCHEMA_VERSION_KEY.to_string(), SCHEMA_VERSION.to_string()),
        (
            WRITER_VERSION_KEY.to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
    ])
}

/// The schema version in a file's key-value metadata (none: written before versions
/// were recorded, which is version 1), refused when newer than this tlsgap reads.
pub(crate) fn check_schema_version(metadata: &FileMetadata) -> Result<()> {
    let kv: Vec<(&str, Option<&str>)> = metadata
        .key_value_metadata()
        .iter()
        .flatten()
        .map(|e| (e.key.as_str(), e.value.as_deref()))
        .collect();
    let value = |key: &str| kv.iter().find(|e| e.0 == key).and_then(|e| e.1);
    let Some(v) = value(SCHEMA_VERSION_KEY) else {
        return Ok(());
    };
    match v.trim().parse::<u32>() {
        Ok(n) if n <= SCHEMA_VERSION => Ok(()),
        _ => bail!(
            "written with dataset schema version {v:?} (by tlsgap {}); this tlsgap {} reads \
             versions up to {SCHEMA_VERSION}: read it with a newer tlsgap",
            value(WRITER_VERSION_KEY).unwrap_or("?"),
            env!("CARGO_PKG_VERSION")
        ),
    }
}

/// `host=HOST` (`host` already sanitized).
pub fn host_dir(host: &str) -> String {
    format!("host={host}")
}

/// `date=YYYY-MM-DD` (or the null partition).
pub fn day_dir(day: Day) -> String {
    match day {
        Some(d) => {
            let (y, m, dd) = civil_from_days(d);
            format!("date={y:04}-{m:02}-{dd:02}")
        }
        None => format!("date={NO_DATE}"),
    }
}

/// This machine's name: `/etc/hostname`, else `uname -n`.
pub fn this_host() -> Result<String> {
    if let Ok(s) = fs::read_to_string("/etc/hostname") {
        let s = s.trim();
        if !s.is_empty() {
            return Ok(s.to_string());
        }
    }
    let o = std::process::Command::new("uname")
        .arg("-n")
        .output()
        .context("finding the host name (uname -n); pass --host NAME")?;
    let s = String::from_utf8_lossy(&o.stdout).trim().to_string();
    if !o.status.success() || s.is_empty() {
        bail!("cannot tell this machine's name; pass --host NAME");
    }
    Ok(s)
}

/// `name` with every character outside `[A-Za-z0-9._-]` replaced by `_`.
pub fn sanitize_host(name: &str) -> Result<String> {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.chars().all(|c| c == '.') {
        bail!("--host {name:?} is not usable as a host name in file names");
    }
    Ok(s)
}

/// Whether `file_name` is a part of `host`: `part-HOST-N.parquet` with N digits
/// (so that host `a` never claims the parts of host `a-b`).
pub fn is_part_of(file_name: &str, host: &str) -> bool {
    file_name
        .strip_prefix("part-")
        .and_then(|r| r.strip_prefix(host))
        .and_then(|r| r.strip_prefix('-'))
        .and_then(|r| r.strip_suffix(".parquet"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn is_temp_of(file_name: &str, host: &str) -> bool {
    file_name
        .strip_prefix('.')
        .and_then(|r| r.split_once(".parquet.tlsgap-"))
        .is_some_and(|(part, rest)| {
            is_part_of(&format!("{part}.parquet"), host) && rest.ends_with(".tmp")
        })
}

/// The part's file, shared with the Parquet writer so that it can be flushed and
/// synced after the footer (polars does not hand its writer back).
#[derive(Clone)]
struct PartFile(Arc<Mutex<BufWriter<File>>>);

impl Write for PartFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.lock()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.lock()?.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.lock()?.flush()
    }
}

impl PartFile {
    fn lock(&self) -> std::io::Result<std::sync::MutexGuard<'_, BufWriter<File>>> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("part writer poisoned"))
    }
}

struct Part {
    writer: BatchedWriter<PartFile>,
    file: PartFile,
    tmp: PathBuf,
    dest: PathBuf,
    rows: usize,
}

#[derive(Default)]
struct DayParts {
    pending: RowGroupRows,
    current: Option<Part>,
    /// Finished parts: (temporary path, final path).
    done: Vec<(PathBuf, PathBuf)>,
    rows: u64,
}

/// What a committed run wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The dataset directory.
    pub dir: PathBuf,
    /// The host name in the part names.
    pub host: String,
    /// Days (directory names) with their row counts.
    pub days: Vec<(String, u64)>,
    /// Old parts of this host that were replaced or removed.
    pub replaced: usize,
    /// Rows of those parts written again into the new ones ([`Keep`]), and why.
    pub kept: u64,
    pub keep: Keep,
}

impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rows: u64 = self.days.iter().map(|(_, n)| n).sum();
        write!(
            f,
            "dataset {}: {rows} rows in {} day(s) for host {}",
            self.dir.display(),
            self.days.len(),
            self.host
        )?;
        if self.replaced > 0 {
            write!(f, " ({} earlier part(s) replaced", self.replaced)?;
            match self.keep {
                Keep::Nothing => {}
                Keep::Outside { .. } => write!(
                    f,
                    ", keeping {} of their rows, outside this run's time window",
                    self.kept
                )?,
                Keep::All => write!(
                    f,
                    ", keeping their {} rows: this run added the lines new since the last \
                     (--state)",
                    self.kept
                )?,
            }
            write!(f, ")")?;
        }
        Ok(())
    }
}

/// Writes one run's parts, then swaps them in with [`DatasetWriter::commit`].
/// Dropped without a commit, it removes its temporary files.
pub struct DatasetWriter {
    root: PathBuf,
    host: String,
    schema: Schema,
    part_rows: usize,
    days: BTreeMap<Day, DayParts>,
    committed: bool,
    keep: Keep,
    kept: u64,
}

impl std::fmt::Debug for DatasetWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DatasetWriter {{ root: {:?}, host: {:?} }}",
            self.root, self.host
        )
    }
}

impl DatasetWriter {
    /// A writer into `root` (created if missing) for `host` (already sanitized),
    /// whose frames have `schema`.
    pub fn new(root: &Path, host: &str, schema: Schema) -> Result<DatasetWriter> {
        Self::with_part_rows(root, host, schema, PART_ROWS)
    }

    /// As [`DatasetWriter::new`], starting a new part every `part_rows` rows.
    pub fn with_part_rows(
        root: &Path,
        host: &str,
        schema: Schema,
        part_rows: usize,
    ) -> Result<DatasetWriter> {
        fs::create_dir_all(root)
            .with_context(|| format!("creating the dataset directory {}", root.display()))?;
        Ok(DatasetWriter {
            root: root.to_path_buf(),
            host: host.to_string(),
            schema,
            part_rows: part_rows.max(1),
            days: BTreeMap::new(),
            committed: false,
            keep: Keep::Nothing,
            kept: 0,
        })
    }

    /// Keep `keep` of this host's earlier rows of each day the run writes (written
    /// into the new parts first, in their order, before the run's rows).
    pub fn keeping(mut self, keep: Keep) -> DatasetWriter {
        self.keep = keep;
        self
    }

    /// Add rows of one day (in input order).
    pub fn write(&mut self, day: Day, df: DataFrame) -> Result<()> {
        if df.height() == 0 {
            return Ok(());
        }
        if let std::collections::btree_map::Entry::Vacant(e) = self.days.entry(day) {
            e.insert(DayParts::default());
            self.carry_over(day)?;
        }
        self.add(day, df)
    }

    /// Add rows to a day's parts.
    fn add(&mut self, day: Day, df: DataFrame) -> Result<()> {
        let Some(parts) = self.days.get_mut(&day) else {
            return Ok(());
        };
        parts.rows += df.height() as u64;
        if parts.pending.push(df)? {
            self.flush(day)?;
        }
        Ok(())
    }

    /// This host's earlier parts of `day`, in order: the `host=` layout's by number,
    /// then the older layout's.
    fn old_parts(&self, day: Day) -> Result<Vec<PathBuf>> {
        let day_path = self.root.join(day_dir(day));
        let dir = day_path.join(host_dir(&self.host));
        let number = |name: &str| -> u64 {
            name.trim_end_matches(".parquet")
                .rsplit('-')
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(u64::MAX)
        };
        let mut paths = Vec::new();
        for d in [&dir, &day_path] {
            let mut names: Vec<String> = list_names(d)?
                .into_iter()
                .filter(|n| is_part_of(n, &self.host))
                .collect();
            names.sort_by_key(|n| (number(n), n.clone()));
            paths.extend(names.into_iter().map(|n| d.join(n)));
        }
        Ok(paths)
    }

    /// Write the rows of this host's earlier parts of `day` that the run does not
    /// stand for ([`Keep`]) into its new parts, before its own rows.
    fn carry_over(&mut self, day: Day) -> Result<()> {
        if self.keep == Keep::Nothing {
            return Ok(());
        }
        for path in self.old_parts(day)? {
            let shown = path.display().to_string();
            let why = match self.keep {
                Keep::All => "--state",
                _ => "--since/--until",
            };
            let context = || {
                format!(
                    "{shown}: reading this host's earlier rows of the day, which this run \
                     ({why}) does not replace"
                )
            };
            let mut file = File::open(&path).with_context(context)?;
            let mut reader = ParquetReader::new(&mut file);
            let metadata = reader.get_metadata().with_context(context)?.clone();
            check_schema_version(&metadata).with_context(context)?;
            let mut start = 0usize;
            for rg in metadata.row_groups.iter().map(|rg| rg.num_rows()) {
                if rg == 0 {
                    continue;
                }
                let mut reader = ParquetReader::new(&mut file)
                    .with_slice(Some((start, rg)))
                    .read_parallel(polars::prelude::ParallelStrategy::None);
                reader.set_metadata(metadata.clone());
                let df = reader.finish().with_context(context)?;
                start += rg;
                let same = df.width() == self.schema.len()
                    && df
                        .schema()
                        .iter()
                        .zip(self.schema.iter())
                        .all(|(a, b)| a == b);
                if !same {
                    bail!(
                        "{shown}: this host's earlier part of the day has other columns \
                         (another log format?); this run reads only part of the day ({why}), \
                         so it can neither replace that part nor add to it: export the whole \
                         day without {why}, or remove the part"
                    );
                }
                let df = self.kept_rows(df).with_context(context)?;
                self.kept += df.height() as u64;
                self.add(day, df)?;
            }
        }
        Ok(())
    }

    /// The rows of `df` that [`DatasetWriter::keep`] keeps.
    fn kept_rows(&self, df: DataFrame) -> Result<DataFrame> {
        if self.keep == Keep::All {
            return Ok(df);
        }
        let time = df
            .column("time")
            .context("column time")?
            .datetime()
            .context("column time is not a timestamp")?
            .physical()
            .iter()
            .map(|t| self.keep.keeps(t))
            .collect::<polars::prelude::BooleanChunked>();
        Ok(df.filter(&time)?)
    }

    fn flush(&mut self, day: Day) -> Result<()> {
        let (root, host, schema, part_rows) =
            (&self.root, &self.host, &self.schema, self.part_rows);
        let Some(parts) = self.days.get_mut(&day) else {
            return Ok(());
        };
        let Some(df) = parts.pending.take() else {
            return Ok(());
        };
        let mut offset = 0usize;
        while offset < df.height() {
            if parts.current.is_none() {
                let n = parts.done.len();
                parts.current = Some(open_part(root, host, schema, day, n)?);
            }
            let Some(part) = parts.current.as_mut() else {
                break;
            };
            let room = part_rows - part.rows;
            let take = room.min(df.height() - offset);
            // One row group per flush: a single chunk per column.
            let mut slice = df.slice(offset as i64, take);
            slice.rechunk_mut_par();
            part.writer
                .write_batch(&slice)
                .with_context(|| format!("writing {}", part.tmp.display()))?;
            part.rows += take;
            offset += take;
            if part.rows >= part_rows {
                if let Some(full) = parts.current.take() {
                    parts.done.push(close_part(full)?);
                }
            }
        }
        Ok(())
    }

    /// Finish every part, then put them in place of this host's old parts of the
    /// same days (see the module documentation for what a crash leaves).
    pub fn commit(mut self) -> Result<Written> {
        let days: Vec<Day> = self.days.keys().copied().collect();
        for &day in &days {
            self.flush(day)?;
            if let Some(parts) = self.days.get_mut(&day) {
                if let Some(p) = parts.current.take() {
                    parts.done.push(close_part(p)?);
                }
            }
        }
        let mut written = Written {
            dir: self.root.clone(),
            host: self.host.clone(),
            days: Vec::new(),
            replaced: 0,
            kept: self.kept,
            keep: self.keep,
        };
        for (&day, parts) in &self.days {
            let day_path = self.root.join(day_dir(day));
            let dir = day_path.join(host_dir(&self.host));
            let old: Vec<String> = list_names(&dir)?
                .into_iter()
                .filter(|n| is_part_of(n, &self.host))
                .collect();
            // This host's parts of the layout without `host=` directories.
            let legacy: Vec<String> = list_names(&day_path)?
                .into_iter()
                .filter(|n| is_part_of(n, &self.host))
                .collect();
            let mut new_names = Vec::new();
            for (tmp, dest) in &parts.done {
                fs::rename(tmp, dest).with_context(|| {
                    format!("renaming {} into {}", tmp.display(), dest.display())
                })?;
                if let Some(n) = dest.file_name() {
                    new_names.push(n.to_string_lossy().into_owned());
                }
            }
            // Make the renames durable before old parts go.
            sync_dir(&dir);
            for name in &old {
                if !new_names.contains(name) {
                    fs::remove_file(dir.join(name))
                        .with_context(|| format!("removing {}", dir.join(name).display()))?;
                }
                written.replaced += 1;
            }
            for name in &legacy {
                fs::remove_file(day_path.join(name))
                    .with_context(|| format!("removing {}", day_path.join(name).display()))?;
                written.replaced += 1;
            }
            // Temporary parts of this host left by a run that was killed.
            for name in list_names(&dir)? {
                if is_temp_of(&name, &self.host) {
                    let _ = fs::remove_file(dir.join(name));
                }
            }
            sync_dir(&dir);
            if !legacy.is_empty() {
                sync_dir(&day_path);
            }
            written.days.push((day_dir(day), parts.rows));
        }
        self.committed = true;
        Ok(written)
    }
}

impl Drop for DatasetWriter {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        for (&day, parts) in &mut self.days {
            if let Some(p) = parts.current.take() {
                let tmp = p.tmp.clone();
                drop(p);
                let _ = fs::remove_file(tmp);
            }
            for (tmp, _) in parts.done.drain(..) {
                let _ = fs::remove_file(tmp);
            }
            // Only removes the directories if this run created them empty.
            let day_path = self.root.join(day_dir(day));
            let _ = fs::remove_dir(day_path.join(host_dir(&self.host)));
            let _ = fs::remove_dir(day_path);
        }
    }
}

/// Best effort: a directory whose sync fails still holds the renames, only perhaps
/// not yet on disk.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// The names in `dir`; none when it does not exist.
fn list_names(dir: &Path) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let entries = match fs::read_dir(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(names),
        r => r.with_context(|| format!("listing {}", dir.display()))?,
    };
    for entry in entries {
        let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
        if let Some(n) = entry.file_name().to_str() {
            names.push(n.to_string());
        }
    }
    Ok(names)
}

fn open_part(root: &Path, host: &str, schema: &Schema, day: Day, n: usize) -> Result<Part> {
    let dir = root.join(day_dir(day)).join(host_dir(host));
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = format!("part-{host}-{n}.parquet");
    let tmp = dir.join(format!(".{name}.tlsgap-{}.tmp", std::process::id()));
    let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let file = PartFile(Arc::new(Mutex::new(BufWriter::with_capacity(
        1 << 16,
        file,
    ))));
    let writer = ParquetWriter::new(file.clone())
        .with_key_value_metadata(Some(file_metadata()))
        .batched(schema)
        .with_context(|| format!("starting {}", tmp.display()))?;
    Ok(Part {
        writer,
        file,
        tmp,
        dest: dir.join(name),
        rows: 0,
    })
}

fn close_part(part: Part) -> Result<(PathBuf, PathBuf)> {
    part.writer
        .finish()
        .with_context(|| format!("finishing {}", part.tmp.display()))?;
    let Part {
        writer,
        file,
        tmp,
        dest,
        ..
    } = part;
    drop(writer);
    let mut w = file.lock()?;
    w.flush()
        .and_then(|()| w.get_ref().sync_all())
        .with_context(|| format!("writing {}", tmp.display()))?;
    drop(w);
    Ok((tmp, dest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use polars::prelude::{Column, DataFrame, SerReader};

    #[test]
    fn host_names_and_part_names() {
        assert_eq!(
            sanitize_host("web-1.example.org").unwrap(),
            "web-1.example.org"
        );
        assert_eq!(sanitize_host("a b/c\u{e9}").unwrap(), "a_b_c_");
        assert!(sanitize_host("").is_err() && sanitize_host("..").is_err());
        assert!(is_part_of("part-a-0.parquet", "a"));
        assert!(is_part_of("part-a-12.parquet", "a"));
        // Host `a` must not claim host `a-b`'s parts, nor temporary or other files.
        assert!(!is_part_of("part-a-b-0.parquet", "a"));
        assert!(!is_part_of("part-a-.parquet", "a"));
        assert!(!is_part_of(".part-a-0.parquet.tlsgap-1.tmp", "a"));
        assert!(is_part_of("part-a-b-0.parquet", "a-b"));
    }

    #[test]
    fn day_directories_are_hive_dates() {
        assert_eq!(day_dir(Some(0)), "date=1970-01-01");
        assert_eq!(day_dir(Some(20_778)), "date=2026-11-21");
        assert_eq!(day_dir(None), "date=__HIVE_DEFAULT_PARTITION__");
    }

    fn frame(range: std::ops::Range<i64>) -> DataFrame {
        let v: Vec<i64> = range.collect();
        DataFrame::new(v.len(), vec![Column::new("x".into(), v)]).unwrap()
    }

    fn names(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_smaller_rerun_removes_the_hosts_extra_parts_only() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let schema = frame(0..1).schema().as_ref().clone();
        let day = root.join("date=2026-11-21");
        let mine = day.join("host=h");
        std::fs::create_dir_all(&mine).unwrap();
        // Other hosts' parts of the layout without host directories, and h's own
        // (replaced by this export of the day).
        for other in [
            "part-h-x-0.parquet",
            "part-g-0.parquet",
            "notes.txt",
            "part-h-0.parquet",
        ] {
            std::fs::write(day.join(other), b"other").unwrap();
        }
        // A stale temporary part of a killed run of host h.
        std::fs::write(mine.join(".part-h-0.parquet.tlsgap-1.tmp"), b"stale").unwrap();

        let mut w = DatasetWriter::with_part_rows(root, "h", schema.clone(), 3).unwrap();
        w.write(Some(20_778), frame(0..5)).unwrap();
        w.write(Some(20_778), frame(5..10)).unwrap();
        w.write(Some(20_779), frame(0..1)).unwrap();
        let written = w.commit().unwrap();
        assert_eq!(
            written.days,
            [
                ("date=2026-11-21".to_string(), 10),
                ("date=2026-11-22".to_string(), 1)
            ]
        );
        assert_eq!(written.replaced, 1);
        assert_eq!(
            names(&day),
            [
                "host=h",
                "notes.txt",
                "part-g-0.parquet",
                "part-h-x-0.parquet"
            ]
        );
        assert_eq!(
            names(&mine),
            [
                "part-h-0.parquet",
                "part-h-1.parquet",
                "part-h-2.parquet",
                "part-h-3.parquet",
            ]
        );
        // Every part says which schema and which tlsgap wrote it.
        let mut f = File::open(mine.join("part-h-0.parquet")).unwrap();
        let meta = polars::prelude::ParquetReader::new(&mut f)
            .get_metadata()
            .unwrap()
            .clone();
        let kv: Vec<(String, Option<String>)> = meta
            .key_value_metadata()
            .iter()
            .flatten()
            .map(|kv| (kv.key.clone(), kv.value.clone()))
            .collect();
        assert!(
            kv.contains(&(SCHEMA_VERSION_KEY.into(), Some("1".into()))),
            "{kv:?}"
        );
        assert!(kv.contains(&(
            WRITER_VERSION_KEY.into(),
            Some(env!("CARGO_PKG_VERSION").into())
        )));

        let mut w = DatasetWriter::with_part_rows(root, "h", schema.clone(), 3).unwrap();
        w.write(Some(20_778), frame(0..4)).unwrap();
        let written = w.commit().unwrap();
        assert_eq!(written.replaced, 4);
        assert_eq!(names(&mine), ["part-h-0.parquet", "part-h-1.parquet"]);
        assert_eq!(
            std::fs::read(day.join("part-g-0.parquet")).unwrap(),
            b"other"
        );
        // The day this run did not write keeps its part.
        assert_eq!(
            names(&root.join("date=2026-11-22").join("host=h")),
            ["part-h-0.parquet"]
        );

        // Dropped without a commit: no temporary file, no new directory.
        // 70,000 rows: past one row group, so that a temporary part exists.
        let mut w = DatasetWriter::new(root, "h", schema).unwrap();
        w.write(None, frame(0..70_000)).unwrap();
        assert_eq!(names(&root.join(day_dir(None)).join("host=h")).len(), 1);
        drop(w);
        assert!(!root.join(day_dir(None)).exists());
        assert_eq!(names(&mine).len(), 2);
    }
}
