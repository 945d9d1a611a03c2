//! One row per parsed line (`tlsgap export`): CSV, NDJSON or Parquet into a writer,
//! or a date-partitioned Parquet dataset ([`crate::dataset`]). Rows are encoded by
//! the workers, block by block, and written in input order.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use polars::prelude::{ArrayRef, BatchedWriter, DataFrame, ParquetWriter, PolarsResult};
use polars_parquet::parquet::compression::{Compression, CompressionOptions, ZstdLevel};
use polars_parquet::parquet::page::{CompressedDictPage, DataPageHeader};
use polars_parquet::parquet::CowBuffer;
use polars_parquet::write::{
    CompressedDataPage, CompressedPage, Encoding, Page, ParquetType, WriteOptions,
};
use tlsgap_agg::export::Source;
use tlsgap_agg::frame::{BlockBuilder, FrameBuilder, SpareTables};
use tlsgap_agg::rows::CsvStyle;
use tlsgap_agg::{ExportSchema, Value};
use tlsgap_parser::{Record, Timestamp};

use crate::dataset;
use crate::lines::{self, has_lines, BadLineSink, LineLoop, LinePartial, RunSummary};
use crate::runner::{Block, Job};
use crate::{bail, err, Result, RunOptions};

/// How rows are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFormat {
    /// A header row, then comma-separated values; text fields quoted, and with
    /// [`CsvStyle::Safe`] neutralised for spreadsheets and control bytes escaped.
    Csv(CsvStyle),
    /// One JSON object per line.
    Ndjson,
    /// Apache Parquet.
    Parquet,
}

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The row format (the dataset is always Parquet).
    pub format: RowFormat,
}

/// A date-partitioned dataset to write into.
#[derive(Debug, Clone)]
pub struct DatasetTarget {
    /// The dataset's directory.
    pub dir: PathBuf,
    /// The host name in the part names, already sanitized
    /// ([`dataset::sanitize_host`]).
    pub host: String,
}

/// What the run did.
#[derive(Debug)]
pub struct ExportOutcome {
    /// Line counts, inputs, `--strict` (when it stopped, the output is incomplete and
    /// must be thrown away; a dataset is left unchanged).
    pub run: RunSummary,
    /// With a dataset: what was written.
    pub written: Option<dataset::Written>,
}

struct ExportJob<'f> {
    lines: LineLoop<'f>,
    schema: ExportSchema,
    kind: RowFormat,
    names: Vec<String>,
    /// With `--partition-by date`: the index of the `time` column, whose day (in the
    /// log's own offset) routes each row.
    partition_time: Option<usize>,
    /// For one Parquet file: encodes and compresses each block's rows as a row group
    /// in the worker; the writer only appends the pages.
    encoder: Option<Encoder>,
    /// For NDJSON: what comes before each column's value ([`ndjson_keys`]).
    ndjson_keys: Vec<Vec<u8>>,
    /// CSV and NDJSON text already written out, for the workers to fill again
    /// ([`ExportJob::text_buffer`]).
    spare_text: Mutex<Vec<Vec<u8>>>,
}

/// The most written-out text buffers kept for reuse.
const SPARE_TEXT: usize = 4;

impl ExportJob<'_> {
    /// An empty buffer for a block's text: one written out before when there is one.
    /// A block's text (about twice the block) was a fresh allocation each time, and
    /// glibc, once such a buffer was freed, served the next ones from its heaps and
    /// kept what they freed: the peak memory of one run moved between 40 and 58 MiB
    /// with the threads' timing (36-37 MiB with a fixed mmap threshold).
    fn text_buffer(&self) -> Vec<u8> {
        let spare = self.spare_text.lock().ok().and_then(|mut s| s.pop());
        let mut text = spare.unwrap_or_default();
        text.clear();
        text
    }

    /// Keep `text`, written out, for another block.
    fn give_back(&self, text: Vec<u8>) {
        if let Ok(mut spare) = self.spare_text.lock() {
            if spare.len() < SPARE_TEXT {
                spare.push(text);
            }
        }
    }
}

/// Bytes per block for a Parquet file: one block is one row group, encoded by a
/// worker (about 125,000 rows of a typical log line, near DuckDB's 122,880). The
/// writer keeps ~60 KiB per row group (page headers and column metadata, for the page
/// index and the footer) until the file ends: with 16 MiB blocks the peak memory of a
/// 10M-line export was 1.15-1.16 times a 1M-line one's, with 32 MiB 1.04 times, and
/// the file is 8 % smaller (fewer dictionary pages), for about 30 MiB more per worker
/// (issue 12, BENCHMARKS.md).
const PARQUET_BLOCK_SIZE: usize = 32 << 20;

/// A block's row group, encoded and compressed but for its `line` column: the worker
/// read its own range of the file and numbered the lines from the block's start (how
/// many lines came before is known once the blocks are merged in order).
struct EncodedBlock {
    /// Per column, per leaf, its pages (none yet for the `line` column).
    columns: Vec<Vec<Vec<CompressedPage>>>,
    /// The `line` column's place and its numbers within the block (from 1).
    lines: Option<(usize, ArrayRef)>,
}

/// What a worker needs to encode row groups exactly as the file's writer would: its
/// Parquet columns, encodings and options.
struct Encoder {
    fields: Vec<ParquetType>,
    encodings: Vec<Vec<Encoding>>,
    options: WriteOptions,
    /// The place of the `line` column, encoded when the block is merged.
    line: Option<usize>,
}

impl Encoder {
    /// The encoder of `writer`'s file, whose `line` column is at `line`.
    fn of<W: Write>(writer: &BatchedWriter<W>, line: Option<usize>) -> Result<Encoder> {
        let file = writer
            .get_writer()
            .lock()
            .map_err(|_| err!("internal error: the Parquet writer is poisoned"))?;
        let mut encodings: Vec<Vec<Encoding>> = file
            .schema()
            .iter_values()
            .map(|f| polars_parquet::write::get_dtype_encoding(&f.dtype))
            .collect();
        // The line numbers of a row group rise by one from row to row but where a line
        // was malformed: as deltas (DELTA_BINARY_PACKED) they take a few bytes a page,
        // where polars's choice (a dictionary, found too large, then plain) estimated
        // their cardinality and wrote 8 bytes a row for zstd to compress (issue 12:
        // on the bench log 18 % of the bytes zstd was given; BENCHMARKS.md).
        if let Some(e) = line.and_then(|i| encodings.get_mut(i)) {
            *e = vec![Encoding::DeltaBinaryPacked];
        }
        Ok(Encoder {
            fields: file.parquet_schema().fields().to_vec(),
            encodings,
            options: file.options(),
            line,
        })
    }

    /// Encode and compress column `i`, `array`: its pages, per leaf.
    fn column(
        &self,
        i: usize,
        array: &ArrayRef,
        z: &mut PageCompressor,
    ) -> PolarsResult<Vec<Vec<CompressedPage>>> {
        let (Some(field), Some(encoding)) = (self.fields.get(i), self.encodings.get(i)) else {
            polars::prelude::polars_bail!(ComputeError: "no Parquet column {i}");
        };
        let encoded =
            polars_parquet::write::array_to_columns(array, field.clone(), self.options, encoding)?;
        let mut leaves = Vec::with_capacity(encoded.len());
        for pages in encoded {
            let mut kept = Vec::new();
            for page in pages {
                kept.push(z.compress(page?, self.options.compression)?);
            }
            leaves.push(kept);
        }
        Ok(leaves)
    }

    /// Encode and compress a block's columns ([`BlockBuilder::finish`]) as one row
    /// group, but for the `line` column (none when the block has no row).
    fn encode(
        &self,
        rows: usize,
        arrays: Vec<ArrayRef>,
        z: &mut PageCompressor,
    ) -> PolarsResult<Option<EncodedBlock>> {
        if rows == 0 {
            return Ok(None);
        }
        let mut block = EncodedBlock {
            columns: Vec::with_capacity(arrays.len()),
            lines: None,
        };
        for (i, array) in arrays.into_iter().enumerate() {
            if Some(i) == self.line {
                block.columns.push(Vec::new());
                block.lines = Some((i, array));
            } else {
                block.columns.push(self.column(i, &array, z)?);
            }
        }
        Ok(Some(block))
    }

    /// The row group of `block`, whose first line is line `base + 1` of its input:
    /// the `line` column encoded, then every column's pages in order.
    fn finish(
        &self,
        block: EncodedBlock,
        base: u64,
        z: &mut PageCompressor,
    ) -> PolarsResult<Vec<Vec<CompressedPage>>> {
        let mut columns = block.columns;
        if let Some((i, lines)) = block.lines {
            let lines = tlsgap_agg::frame::lines_after(&lines, base)?;
            if let Some(c) = columns.get_mut(i) {
                *c = self.column(i, &lines, z)?;
            }
        }
        Ok(columns.into_iter().flatten().collect())
    }
}

/// Compresses a worker's pages as polars-parquet's `compress` does, byte for byte,
/// but zstd through one context kept from page to page: a new context per page (what
/// `compress` makes) cleared its match tables each time, ~1 MiB at zstd's default
/// level (callgrind: 1.7 % of the Parquet export's instructions in `memset`, 0.9 %
/// of its time making contexts). Other codecs go through polars-parquet.
#[derive(Default)]
struct PageCompressor {
    /// The zstd context and the level it was made for.
    zstd: Option<(i32, zstd::bulk::Compressor<'static>)>,
}

impl PageCompressor {
    /// The zstd context for `level` (polars-parquet's: zstd's default when unset).
    fn zstd(
        &mut self,
        level: Option<ZstdLevel>,
    ) -> PolarsResult<&mut zstd::bulk::Compressor<'static>> {
        let level = level.map(|l| l.compression_level()).unwrap_or_default();
        if self.zstd.as_ref().is_none_or(|(l, _)| *l != level) {
            self.zstd = Some((level, zstd::bulk::Compressor::new(level)?));
        }
        match self.zstd.as_mut() {
            Some((_, z)) => Ok(z),
            None => polars::prelude::polars_bail!(ComputeError: "no zstd context"),
        }
    }

    /// `page`, compressed with `compression`.
    fn compress(
        &mut self,
        page: Page,
        compression: CompressionOptions,
    ) -> PolarsResult<CompressedPage> {
        let CompressionOptions::Zstd(level) = compression else {
            return Ok(polars_parquet::write::compress(
                page,
                Vec::new(),
                compression,
            )?);
        };
        let z = self.zstd(level)?;
        Ok(match page {
            Page::Data(page) => {
                let header = page.header().clone();
                let all = page.buffer();
                // A version 2 page keeps its levels uncompressed, before the values.
                let levels = match &header {
                    DataPageHeader::V1(_) => 0,
                    DataPageHeader::V2(h) => usize::try_from(
                        i64::from(h.repetition_levels_byte_length)
                            + i64::from(h.definition_levels_byte_length),
                    )
                    .unwrap_or(0),
                };
                let (head, values) = all.split_at(levels.min(all.len()));
                let compressed = z.compress(values)?;
                let buffer = if head.is_empty() {
                    compressed
                } else {
                    [head, &compressed].concat()
                };
                let Some(rows) = page.num_rows else {
                    polars::prelude::polars_bail!(ComputeError: "a page to write without its rows");
                };
                CompressedPage::Data(CompressedDataPage::new(
                    header,
                    CowBuffer::Owned(buffer),
                    Compression::Zstd,
                    all.len(),
                    page.descriptor.clone(),
                    rows,
                ))
            }
            Page::Dict(page) => CompressedPage::Dict(CompressedDictPage::new(
                CowBuffer::Owned(z.compress(&page.buffer)?),
                Compression::Zstd,
                page.buffer.len(),
                page.num_values,
                page.is_sorted,
            )),
        })
    }
}

/// Where rows go, in order.
enum RowSink<'o> {
    Text(&'o mut dyn Write),
    Parquet(Box<BatchedWriter<&'o mut dyn Write>>),
    Dataset(Box<dataset::DatasetWriter>),
}

enum Rows {
    Text(Vec<u8>),
    /// The row group encoded by the worker (none: no row).
    Encoded(PolarsResult<Option<EncodedBlock>>),
    /// One frame per day of the block, in order of first appearance.
    Dated(Vec<(dataset::Day, polars::prelude::PolarsResult<DataFrame>)>),
}

struct ExportPartial {
    lines: LinePartial,
    rows: Rows,
}

has_lines!(ExportPartial);

impl Job for ExportJob<'_> {
    type Out = ExportPartial;
    /// The sizes of the Parquet text columns' tables in the worker's last block, and
    /// its page compressor.
    type Worker = (SpareTables, PageCompressor);

    /// Text rows and dated frames hold their line numbers; a Parquet row group's
    /// `line` column is encoded when its block is merged ([`Encoder::finish`]), so
    /// that workers read their own ranges of a file (no copy by the reader thread).
    fn needs_line_base(&self) -> bool {
        self.encoder.is_none()
    }

    fn block_size(&self) -> usize {
        match (self.kind, self.partition_time) {
            (RowFormat::Parquet, None) => PARQUET_BLOCK_SIZE,
            _ => crate::runner::BLOCK_SIZE,
        }
    }

    fn lines_of(&self, out: &ExportPartial) -> Option<u64> {
        Some(out.lines.stats.total)
    }

    fn worker(&self) -> (SpareTables, PageCompressor) {
        (SpareTables::default(), PageCompressor::default())
    }

    fn run(&self, block: &Block, (spare, z): &mut (SpareTables, PageCompressor)) -> ExportPartial {
        let file = self.names.get(block.input).map_or("-", String::as_str);
        let base = block.line_base.unwrap_or(0);
        let mut values: Vec<Value<'_>> = Vec::with_capacity(self.schema.columns.len());
        let mut text = self.text_buffer();
        let mut frame = match (self.kind, self.partition_time) {
            // About one row per 256 bytes of log.
            (RowFormat::Parquet, None) => Some(BlockBuilder::new(
                &self.schema,
                (block.data.len() / 256).clamp(1 << 10, 1 << 17),
                spare,
            )),
            _ => None,
        };
        // A block usually holds one or two days: a short list beats a map.
        let mut days: Vec<(dataset::Day, FrameBuilder)> = Vec::new();
        let mut times = TimeText::default();
        let lines = self.lines.parse_block(block, |rel, rec| {
            let line = base + rel + 1;
            if let Some(f) = frame.as_mut() {
                f.push(&self.schema, rec, file, line);
                return;
            }
            if let Some(t) = self.partition_time {
                self.schema.values(rec, file, line, &mut values);
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
            let row = (&self.schema, rec, file, line);
            match self.kind {
                RowFormat::Csv(style) => csv_row(row, style, &mut times, &mut text),
                RowFormat::Ndjson => ndjson_row(row, &self.ndjson_keys, &mut times, &mut text),
                // Built into `frame` above.
                RowFormat::Parquet => {}
            }
        });
        let rows = if self.partition_time.is_some() {
            Rows::Dated(days.into_iter().map(|(d, f)| (d, f.finish())).collect())
        } else {
            match (frame, &self.encoder) {
                (Some(f), Some(encoder)) => {
                    let rows = f.len();
                    Rows::Encoded(f.finish(spare).and_then(|a| encoder.encode(rows, a, z)))
                }
                _ => Rows::Text(text),
            }
        };
        ExportPartial { lines, rows }
    }
}

/// A row to write: the schema, the parsed line, its input's name and its line number.
type Row<'r, 'a> = (&'r ExportSchema, &'r Record<'a>, &'a str, u64);

/// One CSV line: text through [`tlsgap_agg::rows::csv_field_bytes`] in `style` (the
/// field's bytes, converted only where they are not plain ASCII); numbers and times
/// (never formulas) as they are.
fn csv_row(
    (schema, rec, file, line): Row<'_, '_>,
    style: CsvStyle,
    times: &mut TimeText,
    out: &mut Vec<u8>,
) {
    let parts = schema.request_parts(rec);
    for (i, c) in schema.columns.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let v = match schema.raw_text(c, rec, &parts, file) {
            Some(Some(bytes)) => {
                tlsgap_agg::rows::csv_field_bytes(&bytes, style, out);
                continue;
            }
            Some(None) => continue,
            None => schema.value(c, rec, &parts, file, line),
        };
        match v {
            Value::Null => {}
            Value::Text(s) => tlsgap_agg::rows::csv_field(&s, style, out),
            // Written in place (a `Vec` takes every byte: nothing to fail).
            Value::Int(n) => {
                let _ = write!(out, "{n}");
            }
            Value::Float(x) => {
                let _ = write!(out, "{x}");
            }
            Value::Time(t) => times.write(&t, out),
            Value::List(s, _) => tlsgap_agg::rows::csv_field(&s, style, out),
        }
    }
    out.push(b'\n');
}

/// Per column, what comes before its value in an NDJSON row: `{"name":` for the
/// first, `,"name":` for the others (the names through serde_json's escaping, once).
fn ndjson_keys(schema: &ExportSchema) -> Vec<Vec<u8>> {
    schema
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let mut key = vec![if i == 0 { b'{' } else { b',' }];
            let _ = serde_json::to_writer(&mut key, &c.name);
            key.push(b':');
            key
        })
        .collect()
}

/// One NDJSON line: the keys of [`ndjson_keys`], text as serde_json escapes it
/// ([`json_bytes`]: the field's bytes, converted only where they are not ASCII),
/// numbers and lists through serde_json (a time's RFC 3339 text has nothing to escape:
/// written as it is, by `times`).
fn ndjson_row(
    (schema, rec, file, line): Row<'_, '_>,
    keys: &[Vec<u8>],
    times: &mut TimeText,
    out: &mut Vec<u8>,
) {
    if keys.is_empty() {
        out.push(b'{');
    }
    let parts = schema.request_parts(rec);
    for (key, c) in keys.iter().zip(&schema.columns) {
        out.extend_from_slice(key);
        let v = match schema.raw_text(c, rec, &parts, file) {
            Some(Some(bytes)) => {
                json_bytes(&bytes, out);
                continue;
            }
            Some(None) => Value::Null,
            None => schema.value(c, rec, &parts, file, line),
        };
        let _ = match v {
            Value::Null => {
                out.extend_from_slice(b"null");
                Ok(())
            }
            Value::Text(s) => {
                json_string(&s, out);
                Ok(())
            }
            Value::Int(n) => serde_json::to_writer(&mut *out, &n),
            Value::Float(x) => serde_json::to_writer(&mut *out, &x),
            Value::Time(t) => {
                out.push(b'"');
                times.write(&t, out);
                out.push(b'"');
                Ok(())
            }
            Value::List(s, w) => {
                serde_json::to_writer(&mut *out, &tlsgap_agg::export::list_items(&s, w))
            }
        };
    }
    out.extend_from_slice(b"}\n");
}

/// The RFC 3339 text of the last time written, kept: consecutive lines of a log mostly
/// share their second, and formatting a time was a tenth of an NDJSON export's CPU.
#[derive(Debug, Default)]
struct TimeText {
    last: Option<Timestamp>,
    text: Vec<u8>,
}

impl TimeText {
    /// Append `t`'s text (its `Display`) to `out`.
    fn write(&mut self, t: &Timestamp, out: &mut Vec<u8>) {
        if self.last != Some(*t) {
            self.text.clear();
            // A `Vec` takes every byte: nothing to fail.
            let _ = write!(self.text, "{t}");
            self.last = Some(*t);
        }
        out.extend_from_slice(&self.text);
    }
}

/// Append `s` as a JSON string, byte for byte as serde_json writes it: `"` and `\\`
/// escaped with a backslash, the C0 controls as `\b`, `\t`, `\n`, `\f`, `\r` or
/// `\u00xx` (lower-case hex), everything else as it is. Eight bytes are checked at a
/// time: log text rarely has anything to escape (serde_json's byte-by-byte loop was a
/// sixth of an NDJSON export's CPU).
fn json_string(s: &str, out: &mut Vec<u8>) {
    json_escaped::<false>(s.as_bytes(), out);
}

/// [`json_string`] of the text `bytes` stand for ([`tlsgap_parser::lossless_text`]),
/// without checking them as UTF-8 first when they are ASCII (most log text): only
/// bytes with one that is not are converted, and written again.
fn json_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    if !json_escaped::<true>(bytes, out) {
        out.truncate(start);
        json_string(&tlsgap_parser::lossless_text(bytes), out);
    }
}

/// The JSON string of `bytes` (UTF-8, or with `ASCII_ONLY` stopping, and returning
/// false, at the first byte that is not ASCII).
fn json_escaped<const ASCII_ONLY: bool>(bytes: &[u8], out: &mut Vec<u8>) -> bool {
    use tlsgap_agg::words::{has_below, has_byte, has_high};
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if let Some(w) = tlsgap_agg::words::word(bytes, i) {
            let escape = has_below(w, 0x20) || has_byte(w, b'"') || has_byte(w, b'\\');
            let stop = escape || (ASCII_ONLY && has_high(w));
            if !stop {
                i += 8;
                continue;
            }
        }
        // Byte by byte up to the end of this word (or of the text).
        let end = (i + 8).min(bytes.len());
        while i < end {
            let b = bytes[i];
            if ASCII_ONLY && !b.is_ascii() {
                return false;
            }
            if let Some(esc) = json_escape(b) {
                out.extend_from_slice(&bytes[from..i]);
                match esc {
                    Escape::Short(c) => out.extend_from_slice(&[b'\\', c]),
                    Escape::Unicode => {
                        const HEX: &[u8; 16] = b"0123456789abcdef";
                        out.extend_from_slice(b"\\u00");
                        out.push(HEX[usize::from(b >> 4)]);
                        out.push(HEX[usize::from(b & 0xf)]);
                    }
                }
                from = i + 1;
            }
            i += 1;
        }
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
    true
}

/// How a byte is escaped in a JSON string.
enum Escape {
    /// A backslash and this byte.
    Short(u8),
    /// `\u00` and two hex digits.
    Unicode,
}

/// How JSON escapes byte `b` (`None`: written as it is).
fn json_escape(b: u8) -> Option<Escape> {
    Some(match b {
        b'"' => Escape::Short(b'"'),
        b'\\' => Escape::Short(b'\\'),
        0x08 => Escape::Short(b'b'),
        0x09 => Escape::Short(b't'),
        0x0a => Escape::Short(b'n'),
        0x0c => Escape::Short(b'f'),
        0x0d => Escape::Short(b'r'),
        0..=0x1f => Escape::Unicode,
        _ => return None,
    })
}

/// The day of `t` in the offset the log wrote it in (days since 1970-01-01).
fn local_day(t: &Timestamp) -> i64 {
    let local = t
        .unix
        .saturating_add(i64::from(t.offset_minutes.unwrap_or(0)) * 60);
    local.div_euclid(86_400)
}

/// Export every parsed line of the inputs into `out`, in input order.
pub fn run(run: &RunOptions, opts: &ExportOptions, out: &mut dyn Write) -> Result<ExportOutcome> {
    let kind = opts.format;
    let prepared = lines::prepare(run)?;
    let format = prepared.format.clone();
    let schema = ExportSchema::new(&format, kind == RowFormat::Parquet);
    let mut bad = BadLineSink::new(run)?;
    let window = prepared.window;
    if matches!(kind, RowFormat::Csv(_)) {
        let header: Vec<&str> = schema.columns.iter().map(|c| c.name.as_str()).collect();
        writeln!(out, "{}", header.join(","))?;
    }
    let mut encoder = None;
    let mut sink = match kind {
        RowFormat::Parquet => {
            let empty = FrameBuilder::new(&schema, 0).finish()?;
            let writer = ParquetWriter::new(out)
                .with_key_value_metadata(Some(dataset::file_metadata()))
                .batched(empty.schema())?;
            let line = schema.columns.iter().position(|c| c.source == Source::Line);
            encoder = Some(Encoder::of(&writer, line)?);
            RowSink::Parquet(Box::new(writer))
        }
        _ => RowSink::Text(out),
    };
    let job = ExportJob {
        lines: LineLoop::new(&format, window.as_ref(), &bad),
        schema: schema.clone(),
        kind,
        names: prepared.names.clone(),
        partition_time: None,
        encoder,
        ndjson_keys: ndjson_keys(&schema),
        spare_text: Mutex::default(),
    };
    // Compresses the `line` columns, on this thread.
    let mut lines_z = PageCompressor::default();
    let summary = lines::run_job(run, prepared, &job, &mut bad, |meta, p| {
        match (&mut sink, p.rows) {
            (RowSink::Text(w), Rows::Text(bytes)) => {
                w.write_all(&bytes)?;
                job.give_back(bytes);
            }
            (RowSink::Parquet(w), Rows::Encoded(block)) => {
                if let (Some(block), Some(encoder)) = (block?, &job.encoder) {
                    let group = encoder.finish(block, meta.line_base, &mut lines_z)?;
                    // The number of rows is read from the pages.
                    w.write_row_group(u64::MAX, &group)?;
                }
            }
            _ => bail!("internal error: rows of the wrong kind"),
        }
        Ok(())
    })?;
    if let (RowSink::Parquet(w), None) = (&mut sink, &summary.strict_hit) {
        w.finish()?;
    }
    Ok(ExportOutcome {
        run: summary,
        written: None,
    })
}

/// Export into a date-partitioned dataset: the new parts replace this host's old ones
/// of the same days only once every input was read (and not at all when `--strict`
/// stopped).
pub fn run_dataset(run: &RunOptions, target: &DatasetTarget) -> Result<ExportOutcome> {
    let prepared = lines::prepare(run)?;
    let format = prepared.format.clone();
    let schema = ExportSchema::new(&format, true);
    let partition_time = schema
        .columns
        .iter()
        .position(|c| c.source == Source::Time)
        .ok_or_else(|| {
            err!(
                "--partition-by date needs a request time in the log format \
                 (%t, %{{...}}t, $time_local, $time_iso8601, $msec)"
            )
        })?;
    let mut bad = BadLineSink::new(run)?;
    let window = prepared.window;
    // What of this host's earlier rows of a day the run does not stand for: a run
    // that continues a `--state` read only the new lines, a window only its lines
    // (audit: each stood for whole days, and replaced them with part of them).
    let continued = prepared
        .state
        .as_ref()
        .is_some_and(|(session, _)| !session.state().inputs.is_empty());
    let keep = match window.filter(|w| !w.is_all()) {
        _ if continued => dataset::Keep::All,
        Some(w) => dataset::Keep::Outside {
            since: w.since,
            until: w.until,
        },
        None => dataset::Keep::Nothing,
    };
    let job = ExportJob {
        lines: LineLoop::new(&format, window.as_ref(), &bad),
        schema: schema.clone(),
        kind: RowFormat::Parquet,
        names: prepared.names.clone(),
        partition_time: Some(partition_time),
        encoder: None,
        ndjson_keys: Vec::new(),
        spare_text: Mutex::default(),
    };
    let empty = FrameBuilder::new(&schema, 0).finish()?;
    let writer =
        dataset::DatasetWriter::new(&target.dir, &target.host, empty.schema().as_ref().clone())?
            .keeping(keep);
    let mut sink = RowSink::Dataset(Box::new(writer));
    let summary = lines::run_job(run, prepared, &job, &mut bad, |_, p| {
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
    if summary.strict_hit.is_some() {
        // Dropping the writer removes its temporary parts: the dataset is unchanged.
        return Ok(ExportOutcome {
            run: summary,
            written: None,
        });
    }
    let written = writer.commit()?;
    Ok(ExportOutcome {
        run: summary,
        written: Some(written),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages compressed by [`PageCompressor`] are those polars-parquet's `compress`
    /// makes, byte for byte (header, sizes, bytes): every column of a block of log
    /// lines with nulls, escapes and a list column, data pages of both versions (a
    /// version 2 page keeps its levels uncompressed), zstd at its default and at two
    /// levels through one compressor (its context remade when the level changes, kept
    /// when it does not), and uncompressed pages.
    #[test]
    fn pages_compress_as_polars_parquet_compresses_them() {
        use polars_parquet::write::Version;
        let format = tlsgap_parser::Format::compile(
            r#"%h %l %u %t "%r" %>s %b "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %{SSL_CLIENTHELLO_CIPHERS}x"#,
        )
        .unwrap();
        let schema = ExportSchema::new(&format, true);
        let mut parser = tlsgap_parser::LineParser::new(&format);
        let mut rec = Record::new(&format);
        let mut block = BlockBuilder::new(&schema, 4, &SpareTables::default());
        let lines: Vec<String> = (0..3000u64)
            .map(|i| {
            let user = if i % 3 == 0 { "-".to_string() } else { format!("u{}", i % 17) };
            let tls = if i % 5 == 0 {
                "- - -".to_string()
            } else {
                format!("TLSv1.3 TLS_AES_128_GCM_SHA256 13011302c0{:02x}", i % 40)
            };
                format!(
                "2001:db8::{:x} - {user} [21/Nov/2026:18:07:{:02} +0100] \"GET /p/{}?q=\\xc3 HTTP/1.1\" 200 {} \"agent {}\" {tls}",
                i % 300,
                i % 60,
                i * 7919 % 1000,
                if i % 2 == 0 { "-".to_string() } else { i.to_string() },
                i % 23,
            )
            })
            .collect();
        for (i, line) in lines.iter().enumerate() {
            parser.parse(line.as_bytes(), &mut rec).unwrap();
            block.push(&schema, &rec, "x.log", i as u64 + 1);
        }
        let arrays = block.finish(&mut SpareTables::default()).unwrap();
        let empty = FrameBuilder::new(&schema, 0).finish().unwrap();
        let mut file = Vec::new();
        let writer = ParquetWriter::new(&mut file)
            .batched(empty.schema())
            .unwrap();
        let encoder = Encoder::of(&writer, None).unwrap();
        let mut ours = PageCompressor::default();
        let zstd = |l: i32| CompressionOptions::Zstd(Some(ZstdLevel::try_new(l).unwrap()));
        let mut pages = 0;
        for version in [Version::V1, Version::V2] {
            for compression in [
                CompressionOptions::Zstd(None),
                zstd(1),
                zstd(1),
                zstd(9),
                CompressionOptions::Uncompressed,
            ] {
                let options = WriteOptions {
                    version,
                    compression,
                    ..encoder.options
                };
                for ((array, field), encoding) in
                    arrays.iter().zip(&encoder.fields).zip(&encoder.encodings)
                {
                    let leaves = polars_parquet::write::array_to_columns(
                        array,
                        field.clone(),
                        options,
                        encoding,
                    )
                    .unwrap();
                    for page in leaves.into_iter().flatten() {
                        let (a, b) = match page.unwrap() {
                            Page::Data(p) => (Page::Data(p.clone()), Page::Data(p)),
                            Page::Dict(p) => (Page::Dict(p.clone()), Page::Dict(p)),
                        };
                        let want =
                            polars_parquet::write::compress(a, Vec::new(), compression).unwrap();
                        let got = ours.compress(b, compression).unwrap();
                        assert_eq!(
                            format!("{got:?}"),
                            format!("{want:?}"),
                            "{} {version:?} {compression:?}",
                            field.name()
                        );
                        pages += 1;
                    }
                }
            }
        }
        assert!(pages > 100, "{pages} pages");
    }

    /// serde_json's text for `s`.
    fn serde(s: &str) -> Vec<u8> {
        serde_json::to_vec(s).unwrap()
    }

    fn ours(s: &str) -> Vec<u8> {
        let mut out = b"x".to_vec();
        json_string(s, &mut out);
        out.remove(0);
        out
    }

    /// Every ASCII byte, alone and at every place of a word and across two words, and
    /// random texts (ASCII-heavy with every kind of escape, non-ASCII, every length up
    /// to 40): written exactly as serde_json writes them.
    #[test]
    fn json_strings_are_serde_jsons() {
        for b in 0u8..0x80 {
            let c = char::from(b);
            for len in 0..20 {
                for at in 0..=len {
                    let mut s: String = "a".repeat(len);
                    s.insert(at, c);
                    assert_eq!(ours(&s), serde(&s), "{s:?}");
                }
            }
        }
        let alphabet = "ab/ \"\\\u{0}\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1f}\u{7f}\u{80}é€😀\u{2028}~ 0";
        for s in tlsgap_agg::words::sample_texts(alphabet, 20_000) {
            assert_eq!(ours(&s), serde(&s), "{s:?}");
        }
    }

    /// The bytes writer is the text writer on their lossless text: random byte strings,
    /// valid and broken UTF-8, with every kind of escape.
    #[test]
    fn json_bytes_write_as_their_lossless_text() {
        let alphabet = "ab/ \"\\\u{0}\u{1f}\t\n\u{7f}\u{80}é€😀\u{2028}~";
        for b in tlsgap_agg::words::sample_bytes(alphabet, 20_000) {
            let mut want = b"x".to_vec();
            json_string(&tlsgap_parser::lossless_text(&b), &mut want);
            let mut got = b"x".to_vec();
            json_bytes(&b, &mut got);
            assert_eq!(got, want, "{b:?}");
        }
    }

    /// A time is written as its `Display`, whether it repeats or not.
    #[test]
    fn kept_time_text_is_the_times() {
        let mut times = TimeText::default();
        let t = |unix, nanos, offset_minutes| Timestamp {
            unix,
            nanos,
            offset_minutes,
        };
        for ts in [
            t(1_700_000_000, 0, Some(120)),
            t(1_700_000_000, 0, Some(120)),
            t(1_700_000_000, 0, Some(-300)),
            t(1_700_000_000, 0, None),
            t(1_700_000_000, 5_000_000, None),
            t(1_700_000_001, 5_000_000, None),
            t(1_700_000_001, 5_000_000, None),
        ] {
            let mut out = Vec::new();
            times.write(&ts, &mut out);
            assert_eq!(out, ts.to_string().into_bytes());
        }
    }
}
