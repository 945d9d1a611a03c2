//! Column builders that turn export rows and reports into polars DataFrames (for
//! Parquet). Kept apart so that nothing else in the crate touches polars.

use polars::prelude::*;

use crate::export::{ColumnType, ExportSchema, Value};
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
            .map(|c| {
                let name = PlSmallStr::from_str(&c.name);
                match c.ty {
                    ColumnType::Text => Builder::Text(StringChunkedBuilder::new(name, capacity)),
                    ColumnType::Int => Builder::Int(PrimitiveChunkedBuilder::new(name, capacity)),
                    ColumnType::Float => {
                        Builder::Float(PrimitiveChunkedBuilder::new(name, capacity))
                    }
                    ColumnType::Time => Builder::Time(PrimitiveChunkedBuilder::new(name, capacity)),
                    ColumnType::TextList(_) => {
                        Builder::List(ListStringChunkedBuilder::new(name, capacity, capacity * 8))
                    }
                }
            })
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
            match (b, v) {
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
        self.rows += 1;
    }

    /// The DataFrame of the rows added; timestamps are `Datetime(us, UTC)`.
    pub fn finish(self) -> PolarsResult<DataFrame> {
        let height = self.rows;
        let columns = self
            .builders
            .into_iter()
            .map(|b| match b {
                Builder::Text(b) => b.finish().into_column(),
                Builder::Int(b) => b.finish().into_column(),
                Builder::Float(b) => b.finish().into_column(),
                Builder::List(mut b) => b.finish().into_column(),
                Builder::Time(b) => b
                    .finish()
                    .into_datetime(TimeUnit::Microseconds, Some(TimeZone::UTC))
                    .into_column(),
            })
            .collect();
        DataFrame::new(height, columns)
    }
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
