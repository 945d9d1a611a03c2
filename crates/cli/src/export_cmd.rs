//! `tlsgap export`: one row per parsed line as CSV, NDJSON or Parquet, or a
//! date-partitioned Parquet dataset (`--partition-by date`, see [`dataset`]).

use std::io::Write;
use std::process::ExitCode;

use anyhow::{bail, Result};
use polars::prelude::{BatchedWriter, DataFrame, ParquetWriter};
use tlsgap_agg::export::Source;
use tlsgap_agg::frame::FrameBuilder;
use tlsgap_agg::{ExportSchema, LineStats, Value};
use tlsgap_parser::{Format, Timestamp};

use crate::cli::{ExportArgs, ExportFormat, InputConfig, PartitionBy};
use crate::common::{self, parse_block, BadLineSink, LinePartial};
use crate::engine::{Block, Job};
use crate::escape;
use crate::output;

struct ExportJob<'f> {
    format: &'f Format,
    schema: ExportSchema,
    kind: ExportFormat,
    names: Vec<String>,
    keep_bad: bool,
    /// With `--partition-by date`: the index of the `time` column, whose day (in the
    /// log's own offset) routes each row.
    partition_time: Option<usize>,
}

/// Where rows go, in order.
enum RowSink<'o> {
    Text(&'o mut output::Output),
    Parquet(Box<BatchedWriter<&'o mut output::Output>>),
    Dataset(Box<dataset::DatasetWriter>),
}

enum Rows {
    Text(Vec<u8>),
    Frame(polars::prelude::PolarsResult<DataFrame>),
    /// One frame per day of the block, in order of first appearance.
    Dated(Vec<(dataset::Day, polars::prelude::PolarsResult<DataFrame>)>),
}

struct ExportPartial {
    lines: LinePartial,
    rows: Rows,
}

crate::has_lines!(ExportPartial);

impl Job for ExportJob<'_> {
    type Out = ExportPartial;

    fn needs_line_base(&self) -> bool {
        true
    }

    fn run(&self, block: &Block) -> ExportPartial {
        let file = self.names.get(block.input).map_or("-", String::as_str);
        let base = block.line_base.unwrap_or(0);
        let mut values: Vec<Value<'_>> = Vec::with_capacity(self.schema.columns.len());
        let mut text = Vec::new();
        let mut frame = match (self.kind, self.partition_time) {
            (ExportFormat::Parquet, None) => Some(FrameBuilder::new(&self.schema, 1 << 14)),
            _ => None,
        };
        // A block usually holds one or two days: a short list beats a map.
        let mut days: Vec<(dataset::Day, FrameBuilder)> = Vec::new();
        let lines = parse_block(self.format, block, self.keep_bad, |rel, rec| {
            self.schema.values(rec, file, base + rel + 1, &mut values);
            if let Some(t) = self.partition_time {
                let day = match values.get(t) {
                    Some(Value::Time(ts)) => Some(local_day(ts)),
                    _ => None,
                };
                let at = match days.iter().position(|(d, _)| *d == day) {
                    Some(i) => i,
                    None => {
                        days.push((day, FrameBuilder::new(&self.schema, 1 << 12)));
                        days.len() - 1
                    }
                };
                if let Some((_, f)) = days.get_mut(at) {
                    f.push(&values);
                }
                return;
            }
            match self.kind {
                ExportFormat::Csv => csv_row(&values, &mut text),
                ExportFormat::Ndjson => ndjson_row(&self.schema, &values, &mut text),
                ExportFormat::Parquet => {
                    if let Some(f) = frame.as_mut() {
                        f.push(&values);
                    }
                }
            }
        });
        let rows = if self.partition_time.is_some() {
            Rows::Dated(days.into_iter().map(|(d, f)| (d, f.finish())).collect())
        } else {
            match frame {
                Some(f) => Rows::Frame(f.finish()),
                None => Rows::Text(text),
            }
        };
        ExportPartial { lines, rows }
    }
}

fn csv_row(values: &[Value<'_>], out: &mut Vec<u8>) {
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match v {
            Value::Null => {}
            Value::Text(s) => escape::csv_field(s, out),
            Value::Int(n) => out.extend_from_slice(n.to_string().as_bytes()),
            Value::Float(x) => out.extend_from_slice(x.to_string().as_bytes()),
            Value::Time(t) => out.extend_from_slice(t.to_string().as_bytes()),
        }
    }
    out.push(b'\n');
}

fn ndjson_row(schema: &ExportSchema, values: &[Value<'_>], out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (c, v)) in schema.columns.iter().zip(values).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Column names are ASCII identifiers; values go through serde_json's escaping.
        let _ = serde_json::to_writer(&mut *out, &c.name);
        out.push(b':');
        let _ = match v {
            Value::Null => serde_json::to_writer(&mut *out, &()),
            Value::Text(s) => serde_json::to_writer(&mut *out, s.as_ref()),
            Value::Int(n) => serde_json::to_writer(&mut *out, n),
            Value::Float(x) => serde_json::to_writer(&mut *out, x),
            Value::Time(t) => serde_json::to_writer(&mut *out, &t.to_string()),
        };
    }
    out.extend_from_slice(b"}\n");
}

/// The day of `t` in the offset the log wrote it in (days since 1970-01-01).
fn local_day(t: &Timestamp) -> i64 {
    let local = t
        .unix
        .saturating_add(i64::from(t.offset_minutes.unwrap_or(0)) * 60);
    local.div_euclid(86_400)
}

/// Run `tlsgap export`.
pub fn run(args: ExportArgs) -> Result<ExitCode> {
    let kind = args.format;
    let partition = args.partition_by;
    let host = args.host;
    let cfg = InputConfig::from(args.input);
    if partition.is_some() && kind != ExportFormat::Parquet {
        bail!("--partition-by works with --format parquet only");
    }
    if kind == ExportFormat::Parquet && cfg.output.is_none() {
        match partition {
            Some(_) => bail!("--partition-by needs -o DIR (the dataset's directory)"),
            None => bail!("--format parquet needs -o PATH"),
        }
    }
    let host = match (partition, host) {
        (None, _) => None,
        (Some(_), Some(h)) => Some(dataset::sanitize_host(&h)?),
        (Some(_), None) => Some(dataset::sanitize_host(&dataset::this_host()?)?),
    };
    let prepared = common::prepare(&cfg)?;
    let format = prepared.format.clone();
    let schema = ExportSchema::new(&format, kind == ExportFormat::Parquet);
    let partition_time = match partition {
        None => None,
        Some(PartitionBy::Date) => Some(
            schema
                .columns
                .iter()
                .position(|c| c.source == Source::Time)
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "--partition-by date needs a request time in the log format \
                         (%t, %{{...}}t, $time_local, $time_iso8601, $msec)"
                    )
                })?,
        ),
    };
    let mut bad = BadLineSink::new(&cfg)?;
    let job = ExportJob {
        format: &format,
        schema: schema.clone(),
        kind,
        names: prepared.names.clone(),
        keep_bad: bad.wants_lines(),
        partition_time,
    };
    if let (Some(host), Some(dir)) = (host, cfg.output.as_deref()) {
        let empty = FrameBuilder::new(&schema, 0).finish()?;
        let writer = dataset::DatasetWriter::new(dir, &host, empty.schema().as_ref().clone())?;
        return run_dataset(&cfg, prepared, &job, &mut bad, writer);
    }
    let mut out = output::open(cfg.output.as_deref())?;
    if kind == ExportFormat::Csv {
        let header: Vec<&str> = schema.columns.iter().map(|c| c.name.as_str()).collect();
        writeln!(out, "{}", header.join(","))?;
    }
    let mut sink = match kind {
        ExportFormat::Parquet => {
            let empty = FrameBuilder::new(&schema, 0).finish()?;
            RowSink::Parquet(Box::new(
                ParquetWriter::new(&mut out).batched(empty.schema())?,
            ))
        }
        _ => RowSink::Text(&mut out),
    };
    let mut stats = LineStats::default();
    let outcomes = common::run_job(&cfg, prepared, &job, &mut bad, &mut stats, |_, p| {
        match (&mut sink, p.rows) {
            (RowSink::Text(w), Rows::Text(bytes)) => w.write_all(&bytes)?,
            (RowSink::Parquet(w), Rows::Frame(df)) => {
                let df = df?;
                if df.height() > 0 {
                    w.write_batch(&df)?;
                }
            }
            (RowSink::Dataset(w), Rows::Dated(days)) => {
                for (day, df) in days {
                    w.write(day, df?)?;
                }
            }
            _ => bail!("internal error: rows of the wrong kind"),
        }
        Ok(())
    })?;
    if let RowSink::Parquet(w) = &sink {
        w.finish()?;
    }
    drop(sink);
    let inputs = common::input_reports(&outcomes);
    if bad.report_strict_hit() {
        // An `-o` file stays unwritten (its temporary file is removed on drop), so a
        // stopped run never leaves a complete-looking export behind.
        return Ok(ExitCode::from(1));
    }
    out.finish()?;
    if !cfg.quiet {
        eprintln!("tlsgap: {}", common::summary_line(&stats, &inputs));
    }
    Ok(ExitCode::from(common::exit_code(&inputs, false)))
}

/// `export --partition-by date`: the engine's ordered partials go to per-day writers;
/// the new parts replace this host's old ones only once every input was read.
fn run_dataset(
    cfg: &InputConfig,
    prepared: common::Prepared,
    job: &ExportJob<'_>,
    bad: &mut BadLineSink,
    writer: dataset::DatasetWriter,
) -> Result<ExitCode> {
    let mut sink = RowSink::Dataset(Box::new(writer));
    let mut stats = LineStats::default();
    let outcomes = common::run_job(cfg, prepared, job, bad, &mut stats, |_, p| {
        match (&mut sink, p.rows) {
            (RowSink::Dataset(w), Rows::Dated(days)) => {
                for (day, df) in days {
                    w.write(day, df?)?;
                }
            }
            _ => bail!("internal error: rows of the wrong kind"),
        }
        Ok(())
    })?;
    let RowSink::Dataset(writer) = sink else {
        bail!("internal error: dataset sink expected");
    };
    let inputs = common::input_reports(&outcomes);
    if bad.report_strict_hit() {
        // Dropping the writer removes its temporary parts: the dataset is unchanged.
        return Ok(ExitCode::from(1));
    }
    let written = writer.commit()?;
    if !cfg.quiet {
        eprintln!("tlsgap: {}", common::summary_line(&stats, &inputs));
        eprintln!("tlsgap: {written}");
    }
    Ok(ExitCode::from(common::exit_code(&inputs, false)))
}

pub mod dataset {
    //! The hive-style dataset of `export --partition-by date`:
    //! `DIR/date=YYYY-MM-DD/part-HOST-N.parquet`.
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

    use anyhow::{bail, Context, Result};
    use polars::prelude::{BatchedWriter, DataFrame, ParquetWriter, Schema};
    use tlsgap_parser::time::civil_from_days;

    /// A partition: days since 1970-01-01 in the log's offset, or `None` (no time).
    pub type Day = Option<i64>;

    /// Rows per part file before the next part is started.
    pub const PART_ROWS: usize = 4 << 20;
    /// Rows gathered per day before a row group is written (blocks split by day
    /// would otherwise make row groups of a few hundred rows).
    const ROW_GROUP_ROWS: usize = 1 << 16;
    /// The directory name of rows without a time.
    pub const NO_DATE: &str = "__HIVE_DEFAULT_PARTITION__";

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
        pending: Option<DataFrame>,
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
    }

    impl std::fmt::Display for Written {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            let rows: u64 = self.days.iter().map(|(_, n)| n).sum();
            write!(
                f,
                "dataset {}: {rows} rows in {} day(s) for host {}",
                crate::escape::terminal(&self.dir.to_string_lossy()),
                self.days.len(),
                self.host
            )?;
            if self.replaced > 0 {
                write!(f, " ({} earlier part(s) replaced)", self.replaced)?;
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
            })
        }

        /// Add rows of one day (in input order).
        pub fn write(&mut self, day: Day, df: DataFrame) -> Result<()> {
            if df.height() == 0 {
                return Ok(());
            }
            let parts = self.days.entry(day).or_default();
            parts.rows += df.height() as u64;
            match parts.pending.as_mut() {
                Some(p) => {
                    p.vstack_mut(&df)?;
                }
                None => parts.pending = Some(df),
            }
            if parts
                .pending
                .as_ref()
                .is_some_and(|p| p.height() >= ROW_GROUP_ROWS)
            {
                self.flush(day)?;
            }
            Ok(())
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
            };
            for (&day, parts) in &self.days {
                let dir = self.root.join(day_dir(day));
                let old: Vec<String> = list_names(&dir)?
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
                for name in &old {
                    if new_names.contains(name) {
                        written.replaced += 1;
                    } else {
                        fs::remove_file(dir.join(name))
                            .with_context(|| format!("removing {}", dir.join(name).display()))?;
                        written.replaced += 1;
                    }
                }
                // Temporary parts of this host left by a run that was killed.
                for name in list_names(&dir)? {
                    if is_temp_of(&name, &self.host) {
                        let _ = fs::remove_file(dir.join(name));
                    }
                }
                // Make the renames durable before reporting success.
                if let Ok(d) = File::open(&dir) {
                    let _ = d.sync_all();
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
                // Only removes the day's directory if this run created it empty.
                let _ = fs::remove_dir(self.root.join(day_dir(day)));
            }
        }
    }

    fn list_names(dir: &Path) -> Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
            let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
            if let Some(n) = entry.file_name().to_str() {
                names.push(n.to_string());
            }
        }
        Ok(names)
    }

    fn open_part(root: &Path, host: &str, schema: &Schema, day: Day, n: usize) -> Result<Part> {
        let dir = root.join(day_dir(day));
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let name = format!("part-{host}-{n}.parquet");
        let tmp = dir.join(format!(".{name}.tlsgap-{}.tmp", std::process::id()));
        let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let file = PartFile(Arc::new(Mutex::new(BufWriter::with_capacity(
            1 << 16,
            file,
        ))));
        let writer = ParquetWriter::new(file.clone())
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
}

#[cfg(test)]
mod tests {
    use super::dataset::*;
    use polars::prelude::{Column, DataFrame};

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
        std::fs::create_dir_all(&day).unwrap();
        for other in ["part-h-x-0.parquet", "part-g-0.parquet", "notes.txt"] {
            std::fs::write(day.join(other), b"other").unwrap();
        }
        // A stale temporary part of a killed run of host h.
        std::fs::write(day.join(".part-h-0.parquet.tlsgap-1.tmp"), b"stale").unwrap();

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
        assert_eq!(
            names(&day),
            [
                "notes.txt",
                "part-g-0.parquet",
                "part-h-0.parquet",
                "part-h-1.parquet",
                "part-h-2.parquet",
                "part-h-3.parquet",
                "part-h-x-0.parquet"
            ]
        );

        let mut w = DatasetWriter::with_part_rows(root, "h", schema.clone(), 3).unwrap();
        w.write(Some(20_778), frame(0..4)).unwrap();
        let written = w.commit().unwrap();
        assert_eq!(written.replaced, 4);
        assert_eq!(
            names(&day),
            [
                "notes.txt",
                "part-g-0.parquet",
                "part-h-0.parquet",
                "part-h-1.parquet",
                "part-h-x-0.parquet"
            ]
        );
        assert_eq!(
            std::fs::read(day.join("part-g-0.parquet")).unwrap(),
            b"other"
        );
        // The day this run did not write keeps its part.
        assert_eq!(names(&root.join("date=2026-11-22")), ["part-h-0.parquet"]);

        // Dropped without a commit: no temporary file, no new directory.
        // 70,000 rows: past one row group, so that a temporary part exists.
        let mut w = DatasetWriter::new(root, "h", schema).unwrap();
        w.write(None, frame(0..70_000)).unwrap();
        assert_eq!(names(&root.join(day_dir(None))).len(), 1);
        drop(w);
        assert!(!root.join(day_dir(None)).exists());
        assert_eq!(names(&day).len(), 5);
    }
}
