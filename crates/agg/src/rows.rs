//! A flat, typed table: the CSV and Parquet form of every report but `tls` (which
//! keeps its own, older row type).

use serde::Serialize;

/// Append `s` to `out` as a CSV field: always quoted, quotes doubled (RFC 4180), so
/// that commas, quotes and line breaks in log text never shift a column.
pub fn csv_field(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for b in s.bytes() {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

/// The type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    /// UTF-8 text.
    Text,
    /// A signed 64-bit integer.
    Int,
    /// A 64-bit float.
    Float,
    /// A boolean.
    Bool,
}

/// One value.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// Absent.
    Null,
    /// Text.
    Text(String),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::Text(s.to_string())
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::Text(s)
    }
}

impl From<u64> for Cell {
    fn from(n: u64) -> Cell {
        Cell::Int(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl From<u32> for Cell {
    fn from(n: u32) -> Cell {
        Cell::Int(i64::from(n))
    }
}

impl From<u16> for Cell {
    fn from(n: u16) -> Cell {
        Cell::Int(i64::from(n))
    }
}

impl From<f64> for Cell {
    fn from(x: f64) -> Cell {
        Cell::Float(x)
    }
}

impl From<bool> for Cell {
    fn from(b: bool) -> Cell {
        Cell::Bool(b)
    }
}

impl<T: Into<Cell>> From<Option<T>> for Cell {
    fn from(v: Option<T>) -> Cell {
        v.map_or(Cell::Null, Into::into)
    }
}

/// Named, typed columns and rows of cells (each row as long as `columns`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    /// Column names and types.
    pub columns: Vec<(&'static str, CellType)>,
    /// The rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Rows {
    /// An empty table with these columns.
    pub fn new(columns: &[(&'static str, CellType)]) -> Rows {
        Rows {
            columns: columns.to_vec(),
            rows: Vec::new(),
        }
    }

    /// Append a row; panics in debug builds if its length is wrong.
    pub fn push(&mut self, row: Vec<Cell>) {
        debug_assert_eq!(row.len(), self.columns.len(), "row length");
        self.rows.push(row);
    }
}
