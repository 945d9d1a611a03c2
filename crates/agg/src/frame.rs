//! Column builders that turn export rows and reports into polars DataFrames, and a
//! block's export rows into Arrow arrays (for Parquet). Kept apart so that nothing
//! else in the crate touches polars.

use polars::prelude::*;
use polars_arrow::array::{DictionaryArray, MutableBinaryViewArray, PrimitiveArray, Utf8ViewArray};
use polars_arrow::bitmap::MutableBitmap;
use polars_arrow::datatypes::{ArrowDataType, IntegerType};
use tlsgap_parser::Record;

use crate::arena::ArenaMap;
use crate::export::{ColumnType, ExportSchema, Value};
use crate::keymap::KeyMap;
use crate::rows::{Cell, CellType, Rows};
use crate::tls::TlsReport;

enum Builder {
    Text(StringChunkedBuilder),
    Int(PrimitiveChunkedBuilder<Int64Type>),
    Float(PrimitiveChunkedBuilder<Float64Type>),
    Time(PrimitiveChunkedBuilder<Int64Type>),
    List(ListStringChunkedBuilder),
}

/// Accumulates export rows into a DataFrame.
pub struct FrameBuilder {
    builders: Vec<Builder>,
    rows: usize,
}

impl std::fmt::Debug for FrameBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FrameBuilder {{ rows: {} }}", self.rows)
    }
}

impl FrameBuilder {
    /// Builders for the columns of `schema`, with room for `capacity` rows.
    pub fn new(schema: &ExportSchema, capacity: usize) -> FrameBuilder {
        let builders = schema
            .columns
            .iter()
            .map(|c| Builder::new(&c.name, c.ty, capacity))
            .collect();
        FrameBuilder { builders, rows: 0 }
    }

    /// Rows added so far.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Add one row (the values of [`ExportSchema::values`]).
    pub fn push(&mut self, values: &[Value<'_>]) {
        for (b, v) in self.builders.iter_mut().zip(values) {
            b.append(v);
        }
        self.rows += 1;
    }

    /// The DataFrame of the rows added; timestamps are `Datetime(us, UTC)`.
    pub fn finish(self) -> PolarsResult<DataFrame> {
        let height = self.rows;
        let columns = self.builders.into_iter().map(Builder::finish).collect();
        DataFrame::new(height, columns)
    }
}

impl Builder {
    /// A builder for a column of type `ty` named `name`, with room for `capacity` rows.
    fn new(name: &str, ty: ColumnType, capacity: usize) -> Builder {
        let name = PlSmallStr::from_str(name);
        match ty {
            ColumnType::Text => Builder::Text(StringChunkedBuilder::new(name, capacity)),
            ColumnType::Int => Builder::Int(PrimitiveChunkedBuilder::new(name, capacity)),
            ColumnType::Float => Builder::Float(PrimitiveChunkedBuilder::new(name, capacity)),
            ColumnType::Time => Builder::Time(PrimitiveChunkedBuilder::new(name, capacity)),
            ColumnType::TextList(_) => {
                Builder::List(ListStringChunkedBuilder::new(name, capacity, capacity * 8))
            }
        }
    }

    /// Add one value (of the wrong type: null).
    fn append(&mut self, v: &Value<'_>) {
        match (self, v) {
            (Builder::Text(b), Value::Text(s)) => b.append_value(s.as_ref()),
            (Builder::Text(b), _) => b.append_null(),
            (Builder::Int(b), Value::Int(n)) => b.append_value(*n),
            (Builder::Int(b), _) => b.append_null(),
            (Builder::Float(b), Value::Float(x)) => b.append_value(*x),
            (Builder::Float(b), Value::Int(n)) => b.append_value(*n as f64),
            (Builder::Float(b), _) => b.append_null(),
            (Builder::Time(b), Value::Time(t)) => b.append_value(t.unix_micros()),
            (Builder::Time(b), _) => b.append_null(),
            (Builder::List(b), Value::List(s, w)) => {
                b.append_values_iter(crate::export::list_items(s, *w).into_iter())
            }
            (Builder::List(b), _) => b.append_null(),
        }
    }

    fn finish(self) -> Column {
        match self {
            Builder::Text(b) => b.finish().into_column(),
            Builder::Int(b) => b.finish().into_column(),
            Builder::Float(b) => b.finish().into_column(),
            Builder::List(mut b) => b.finish().into_column(),
            Builder::Time(b) => b
                .finish()
                .into_datetime(TimeUnit::Microseconds, Some(TimeZone::UTC))
                .into_column(),
        }
    }
}

/// A block's export rows built straight into Arrow arrays, for one Parquet row group.
///
/// Its text columns are dictionary-encoded as rows come, each keyed by the bytes its
/// value is a function of ([`ExportSchema::text_key`]: a field's raw bytes, a
/// request part, the file's name): a value seen before in the block costs one lookup,
/// with no unescaping, UTF-8 check or copy, and the Parquet writer gets the
/// dictionary it would otherwise find itself (through polars's `String` builder, a
/// cardinality estimate and a second hashing of every value: issue 12). A column
/// whose distinct values pass 3/4 of the rows (over 128 rows) is written plain, as
/// polars decides. The arrays read back as [`FrameBuilder`]'s DataFrame does; the
/// other columns are built by the same builders.
pub struct BlockBuilder {
    columns: Vec<BlockColumn>,
    rows: usize,
}

impl std::fmt::Debug for BlockBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockBuilder {{ rows: {} }}", self.rows)
    }
}

enum BlockColumn {
    /// A text column keyed as [`ExportSchema::text_key`] says.
    Keyed(TextColumn),
    Other(Builder),
}

/// A dictionary-encoded text column being built.
#[derive(Default)]
struct TextColumn {
    /// Key bytes seen → the value's place in `values` ([`NULL`]: null), with
    /// [`ITSELF`] when the key is its own text.
    seen: KeyMap,
    /// What an absent key stands for, once met.
    absent: Option<u32>,
    /// The texts of the keys that are not their own text (escaped, not UTF-8) → their
    /// place in `values`: two keys may give one text, and then one place. A key that
    /// is its own text (most) is not copied here again: another spelling of it finds
    /// it in `seen` ([`ITSELF`]).
    texts: ArenaMap<u32>,
    values: MutableBinaryViewArray<str>,
    /// Per row, its value's place (0 for a null row) and whether it is not null.
    keys: Vec<u32>,
    valid: MutableBitmap,
    nulls: usize,
}

/// A row's place in [`TextColumn::seen`] when its value is null.
const NULL: u32 = u32::MAX;

/// Marks a place in [`TextColumn::seen`] whose key is its own text (a block holds
/// fewer rows, and so places, than this).
const ITSELF: u32 = 1 << 31;

/// The place a value of [`TextColumn::seen`] holds.
fn place_of(held: u32) -> u32 {
    if held == NULL {
        NULL
    } else {
        held & !ITSELF
    }
}

/// How big the tables of a worker's last block's text columns grew, for the next
/// block's to start at that size instead of growing again from nothing (their growth,
/// a rehash of every key at each doubling, was 2.5 % of the Parquet export's time;
/// keeping the tables themselves from block to block cost as much but held ~11 MiB
/// more while a block is encoded).
#[derive(Debug, Default)]
pub struct SpareTables {
    /// Per text column, in order: keys and long-key bytes, texts and their bytes.
    sizes: Vec<[usize; 4]>,
}

impl TextColumn {
    /// A column with room for `capacity` rows and tables of `sizes`
    /// ([`SpareTables::sizes`]).
    fn with_capacity(capacity: usize, sizes: [usize; 4]) -> TextColumn {
        let [keys, long, texts, text_bytes] = sizes;
        TextColumn {
            seen: KeyMap::with_capacity(keys, long),
            texts: ArenaMap::with_capacity(texts, text_bytes),
            keys: Vec::with_capacity(capacity),
            valid: MutableBitmap::with_capacity(capacity),
            ..TextColumn::default()
        }
    }

    /// Add a row whose key is `key`; `value` gives its value when the key is new.
    fn push<'v>(&mut self, key: Option<&[u8]>, value: impl FnOnce() -> Value<'v>) {
        let place = match key {
            Some(k) => match self.seen.find(k) {
                Ok(held) => place_of(held),
                Err(hash) => {
                    let held = self.new_key(k, hash, value());
                    self.seen.insert(k, hash, held);
                    place_of(held)
                }
            },
            None => match self.absent {
                Some(p) => p,
                None => {
                    let p = match value() {
                        Value::Text(text) => self.spelt(&text),
                        _ => NULL,
                    };
                    self.absent = Some(p);
                    p
                }
            },
        };
        let valid = place != NULL;
        self.keys.push(if valid { place } else { 0 });
        self.valid.push(valid);
        self.nulls += usize::from(!valid);
    }

    /// What [`TextColumn::seen`] is to hold for a new key `k` (whose hash is `hash`)
    /// of value `value`: its text's place, adding the text if it is new.
    fn new_key(&mut self, k: &[u8], hash: u64, value: Value<'_>) -> u32 {
        let Value::Text(text) = value else {
            return NULL;
        };
        if text.as_bytes() != k {
            return self.spelt(&text);
        }
        // The key is its own text (same bytes, so the same hash): met before only if
        // a key spelt otherwise gave it.
        let met = match self.texts.len() {
            0 => None,
            _ => self.texts.get_mut_hashed(hash, k).copied(),
        };
        met.unwrap_or_else(|| self.add(&text)) | ITSELF
    }

    /// The place of `text`, the value of a key spelt otherwise (or of an absent key),
    /// adding it if new: among the other spellings' texts, or a key that is its own
    /// text.
    fn spelt(&mut self, text: &str) -> u32 {
        let t = text.as_bytes();
        let hash = crate::arena::key_hash(t);
        if let Some(p) = self.texts.get_mut_hashed(hash, t) {
            return *p;
        }
        if let Some(held) = self.seen.get_hashed(hash, t) {
            if held != NULL && held & ITSELF != 0 {
                return place_of(held);
            }
        }
        let p = self.add(text);
        self.texts.insert_new_hashed(hash, t, p);
        p
    }

    /// Add a new text to the dictionary; its place.
    fn add(&mut self, text: &str) -> u32 {
        // Fewer than `ITSELF` distinct values: a block holds at most its lines.
        let p = u32::try_from(self.values.len()).map_or(ITSELF - 1, |p| p.min(ITSELF - 1));
        self.values.push_value(text);
        p
    }

    /// The sizes its tables grew to ([`SpareTables::sizes`]).
    fn sizes(&self) -> [usize; 4] {
        let (keys, long) = self.seen.size();
        [keys, long, self.texts.len(), self.texts.key_bytes()]
    }

    /// The column: dictionary-encoded, or plain when most values are distinct.
    fn finish(self) -> PolarsResult<ArrayRef> {
        let rows = self.keys.len();
        let values: Utf8ViewArray = self.values.freeze();
        let valid = (self.nulls > 0).then(|| self.valid.freeze());
        if rows <= 128 || values.len() * 4 <= rows * 3 {
            let keys = PrimitiveArray::<u32>::new(ArrowDataType::UInt32, self.keys.into(), valid);
            let dtype = ArrowDataType::Dictionary(
                IntegerType::UInt32,
                Box::new(ArrowDataType::Utf8View),
                false,
            );
            return Ok(DictionaryArray::try_new(dtype, keys, values.boxed())?.boxed());
        }
        let mut plain = MutableBinaryViewArray::<str>::with_capacity(rows);
        for (i, &k) in self.keys.iter().enumerate() {
            if valid.as_ref().is_some_and(|v| !v.get_bit(i)) {
                plain.push_null();
            } else {
                plain.push_value(values.value(k as usize));
            }
        }
        Ok(plain.freeze().boxed())
    }
}

impl BlockBuilder {
    /// Builders for the columns of `schema`, with room for `capacity` rows, whose text
    /// columns take their tables from `spare` ([`BlockBuilder::finish`] gives them
    /// back).
    pub fn new(schema: &ExportSchema, capacity: usize, spare: &SpareTables) -> BlockBuilder {
        let mut sizes = spare.sizes.iter();
        let columns = schema
            .columns
            .iter()
            .map(|c| {
                if ExportSchema::is_keyed(c) {
                    let sizes = sizes.next().copied().unwrap_or_default();
                    BlockColumn::Keyed(TextColumn::with_capacity(capacity, sizes))
                } else {
                    BlockColumn::Other(Builder::new(&c.name, c.ty, capacity))
                }
            })
            .collect();
        BlockBuilder { columns, rows: 0 }
    }

    /// Rows added so far.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Add the row of `rec`, line `line` of input `file` (the values of
    /// [`ExportSchema::values`]).
    pub fn push(&mut self, schema: &ExportSchema, rec: &Record<'_>, file: &str, line: u64) {
        let parts = schema.request_parts(rec);
        for (b, c) in self.columns.iter_mut().zip(&schema.columns) {
            let value = || schema.value(c, rec, &parts, file, line);
            match b {
                BlockColumn::Keyed(t) => {
                    let key = ExportSchema::text_key(c, rec, &parts, file).flatten();
                    t.push(key, value);
                }
                BlockColumn::Other(b) => b.append(&value()),
            }
        }
        self.rows += 1;
    }

    /// The columns' arrays, in the schema's order, typed as the file's columns
    /// (timestamps `Timestamp(us, UTC)`); `spare` learns the sizes of the text
    /// columns' tables.
    pub fn finish(self, spare: &mut SpareTables) -> PolarsResult<Vec<ArrayRef>> {
        spare.sizes.clear();
        spare
            .sizes
            .extend(self.columns.iter().filter_map(|b| match b {
                BlockColumn::Keyed(t) => Some(t.sizes()),
                BlockColumn::Other(_) => None,
            }));
        self.columns
            .into_iter()
            .map(|b| match b {
                BlockColumn::Keyed(t) => t.finish(),
                BlockColumn::Other(b) => {
                    let series = b.finish().as_materialized_series().rechunk();
                    Ok(series.to_arrow(0, CompatLevel::newest()))
                }
            })
            .collect()
    }
}

/// A block's `line` column ([`BlockBuilder::finish`], numbered from the block's
/// start) as the lines of its input: each number plus `base`, the lines before the
/// block.
pub fn lines_after(lines: &ArrayRef, base: u64) -> PolarsResult<ArrayRef> {
    let Some(a) = lines.as_any().downcast_ref::<PrimitiveArray<i64>>() else {
        polars_bail!(ComputeError: "the line column is not of 64-bit integers");
    };
    let base = i64::try_from(base).unwrap_or(i64::MAX);
    let values: Vec<i64> = a.values().iter().map(|&n| n.saturating_add(base)).collect();
    Ok(PrimitiveArray::<i64>::new(a.dtype().clone(), values.into(), a.validity().cloned()).boxed())
}

/// The `tls` report as a table: one row per protocol and cipher, then one `plain`
/// row (the CSV columns).
pub fn tls_frame(report: &TlsReport) -> PolarsResult<DataFrame> {
    let rows = crate::tls::tls_rows(report);
    let height = rows.len();
    let text = |f: &dyn Fn(&crate::tls::TlsRow) -> Option<String>| -> Vec<Option<String>> {
        rows.iter().map(f).collect()
    };
    DataFrame::new(
        height,
        vec![
            Column::new("kind".into(), text(&|r| Some(r.kind.to_string()))),
            Column::new("protocol".into(), text(&|r| r.protocol.clone())),
            Column::new("cipher".into(), text(&|r| r.cipher.clone())),
            Column::new(
                "count".into(),
                rows.iter()
                    .map(|r| i64::try_from(r.count).unwrap_or(i64::MAX))
                    .collect::<Vec<i64>>(),
            ),
            Column::new(
                "share".into(),
                rows.iter().map(|r| r.share).collect::<Vec<_>>(),
            ),
            Column::new(
                "verdict".into(),
                text(&|r| r.verdict.map(|v| v.as_str().to_string())),
            ),
            Column::new(
                "protocol_verdict".into(),
                text(&|r| r.protocol_verdict.map(|v| v.as_str().to_string())),
            ),
            Column::new(
                "forward_secrecy".into(),
                rows.iter().map(|r| r.forward_secrecy).collect::<Vec<_>>(),
            ),
            Column::new(
                "aead".into(),
                rows.iter().map(|r| r.aead).collect::<Vec<_>>(),
            ),
            Column::new(
                "bits".into(),
                rows.iter()
                    .map(|r| r.bits.map(i64::from))
                    .collect::<Vec<_>>(),
            ),
            Column::new("group".into(), text(&|r| r.group.clone())),
            Column::new(
                "post_quantum".into(),
                rows.iter().map(|r| r.post_quantum).collect::<Vec<_>>(),
            ),
        ],
    )
}

/// A generic [`Rows`] table as a DataFrame (cells of the wrong type become null).
pub fn rows_frame(rows: &Rows) -> PolarsResult<DataFrame> {
    let height = rows.rows.len();
    let columns = rows
        .columns
        .iter()
        .enumerate()
        .map(|(i, (name, ty))| {
            let cells = rows.rows.iter().map(|r| r.get(i).unwrap_or(&Cell::Null));
            let name = PlSmallStr::from_str(name);
            match ty {
                CellType::Text => Column::new(
                    name,
                    cells
                        .map(|c| match c {
                            Cell::Text(s) => Some(s.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                ),
                CellType::Int => Column::new(
                    name,
                    cells
                        .map(|c| match c {
                            Cell::Int(n) => Some(*n),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                ),
                CellType::Float => Column::new(
                    name,
                    cells
                        .map(|c| match c {
                            Cell::Float(x) => Some(*x),
                            Cell::Int(n) => Some(*n as f64),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                ),
                CellType::Bool => Column::new(
                    name,
                    cells
                        .map(|c| match c {
                            Cell::Bool(b) => Some(*b),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                ),
            }
        })
        .collect();
    DataFrame::new(height, columns)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsgap_parser::{Format, LineParser};

    /// Lines with what a real log holds: escapes and bytes that are not UTF-8, two
    /// spellings of one text, absent and empty fields, IPv6, and `n` distinct targets.
    fn lines(n: usize) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        for i in 0..n {
            let ua: &[u8] = match i % 9 {
                0 => b"curl/8.5.0",
                1 => br"A \x41 \xff\xfe bytes",
                2 => b"A A \xff\xfe bytes",
                3 => br#"quote \" inside"#,
                // One text spelt escaped first, then as itself; and the other way.
                5 => br"\x41gent",
                6 => b"Agent",
                7 => b"Cat",
                8 => br"\x43at",
                _ => b"-",
            };
            let client = if i % 3 == 0 {
                "2001:db8::1".to_string()
            } else {
                format!("192.0.2.{}", i % 7)
            };
            let user = if i % 4 == 0 { r#""""# } else { "-" };
            let tls = if i % 6 == 0 {
                "- -"
            } else {
                "TLSv1.3 TLS_AES_128_GCM_SHA256"
            };
            let request = match i % 9 {
                // Absent, and bytes that are not a request (no method to split off).
                0 => "-".to_string(),
                1 => "\\x16\\x03\\x01".to_string(),
                // Requests met again, and ones met once.
                2..=5 => format!("GET /p/{}?q=\\xc3 HTTP/1.1", i % 4),
                _ => format!("POST /u/{i} HTTP/2.0"),
            };
            let mut line = format!(
                "{client} - {user} [21/Nov/2026:18:07:{:02} +0100] \"{request}\" {} {} \"http://r/{i}\" \"",
                i % 60,
                200 + i % 3,
                if i % 2 == 0 { "-".to_string() } else { i.to_string() }
            )
            .into_bytes();
            line.extend_from_slice(ua);
            line.extend_from_slice(format!("\" {tls}").as_bytes());
            out.push(line);
        }
        out
    }

    /// A dictionary-encoded text array as the plain one it stands for.
    fn plain(a: &ArrayRef) -> ArrayRef {
        let Some(d) = a.as_any().downcast_ref::<DictionaryArray<u32>>() else {
            return a.clone();
        };
        let values = d.values().as_any().downcast_ref::<Utf8ViewArray>().unwrap();
        let mut out = MutableBinaryViewArray::<str>::new();
        for k in d.keys().iter() {
            out.push(k.map(|&k| values.value(k as usize)));
        }
        out.freeze().boxed()
    }

    /// A block's line numbers become its input's: each plus the lines before it, nulls
    /// kept; a column of another type is an error.
    #[test]
    fn lines_after_adds_the_lines_before_the_block() {
        let a = PrimitiveArray::<i64>::from(vec![Some(1), None, Some(5)]).boxed();
        let got = lines_after(&a, 10).unwrap();
        let got = got.as_any().downcast_ref::<PrimitiveArray<i64>>().unwrap();
        assert_eq!(
            got.iter().map(|v| v.copied()).collect::<Vec<_>>(),
            [Some(11), None, Some(15)]
        );
        let same = lines_after(&a, 0).unwrap();
        assert_eq!(
            same.as_any().downcast_ref::<PrimitiveArray<i64>>(),
            a.as_any().downcast_ref()
        );
        let far = lines_after(&a, u64::MAX).unwrap();
        let far = far.as_any().downcast_ref::<PrimitiveArray<i64>>().unwrap();
        assert_eq!(far.value(0), i64::MAX);
        let text = Utf8ViewArray::from_slice_values(["1"]).boxed();
        assert!(lines_after(&text, 1).is_err());
    }

    /// The block's arrays hold what the DataFrame of the same rows holds, column by
    /// column, dictionary-encoded or not, with method, target and version split from
    /// the request line or logged in fields of their own.
    #[test]
    fn block_arrays_read_as_the_frame() {
        for format in [
            "combinedssl",
            r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %m %H"#,
        ] {
            block_reads_as_frame(format);
        }
    }

    fn block_reads_as_frame(format: &str) {
        let f = Format::compile(format).unwrap();
        let schema = ExportSchema::new(&f, true);
        // One worker's sizes for every block (of a bigger block first).
        let mut spare = SpareTables::default();
        for n in [600, 0, 1, 5, 128, 129, 600] {
            let mut p = LineParser::new(&f);
            let mut rec = Record::new(&f);
            let mut frame = FrameBuilder::new(&schema, 4);
            let mut block = BlockBuilder::new(&schema, 4, &spare);
            let mut values = Vec::new();
            for (i, line) in lines(n).iter().enumerate() {
                p.parse(line, &mut rec).unwrap();
                let file = if i % 2 == 0 { "a.log" } else { "b.log" };
                schema.values(&rec, file, i as u64 + 1, &mut values);
                frame.push(&values);
                block.push(&schema, &rec, file, i as u64 + 1);
            }
            assert_eq!(block.len(), n);
            let arrays = block.finish(&mut spare).unwrap();
            let df = frame.finish().unwrap();
            let want: Vec<ArrayRef> = df
                .columns()
                .iter()
                .map(|c| {
                    c.as_materialized_series()
                        .rechunk()
                        .to_arrow(0, CompatLevel::newest())
                })
                .collect();
            assert_eq!(arrays.len(), want.len());
            for ((got, want), c) in arrays.iter().zip(&want).zip(&schema.columns) {
                assert_eq!(&plain(got), want, "{format}: {n} rows, column {}", c.name);
                // A dictionary holds each text once, however many keys spell it.
                if let Some(d) = got.as_any().downcast_ref::<DictionaryArray<u32>>() {
                    let values = d.values().as_any().downcast_ref::<Utf8ViewArray>().unwrap();
                    let texts: Vec<&str> = values.values_iter().collect();
                    let distinct: std::collections::HashSet<&str> = texts.iter().copied().collect();
                    assert_eq!(
                        distinct.len(),
                        texts.len(),
                        "{format}: column {} {texts:?}",
                        c.name
                    );
                }
            }
            if n > 128 {
                let kind = |name: &str| {
                    let i = schema.columns.iter().position(|c| c.name == name).unwrap();
                    matches!(arrays[i].dtype(), ArrowDataType::Dictionary(..))
                };
                assert!(
                    kind("user_agent") && kind("client"),
                    "few distinct: dictionary"
                );
                assert!(!kind("referer"), "every referer distinct: plain");
            }
        }
    }
}
