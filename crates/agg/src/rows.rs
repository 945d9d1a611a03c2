//! A flat, typed table: the CSV and Parquet form of every report but `tls` (which
//! keeps its own, older row type).

use serde::Serialize;

/// How [`csv_field`] writes text that may come from a log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CsvStyle {
    /// For spreadsheets (the default): a value starting with `=`, `+`, `-`, `@`, tab or
    /// CR gets a `'` in front, so that no spreadsheet runs it as a formula (OWASP's
    /// rule against CSV injection), and control characters anywhere in it (C0 with
    /// tab, CR and LF, DEL, C1, the bidi controls and the line/paragraph separators)
    /// are written as `\xHH` / `\u{..}`, as terminal tables write them.
    #[default]
    Safe,
    /// The value as it is, only quoted (`--csv-raw`).
    Raw,
}

impl CsvStyle {
    /// [`CsvStyle::Raw`] if `raw`, else [`CsvStyle::Safe`].
    pub fn raw_if(raw: bool) -> CsvStyle {
        if raw {
            CsvStyle::Raw
        } else {
            CsvStyle::Safe
        }
    }
}

/// Whether a spreadsheet may take a value starting with `c` for a formula: `=`, `+`,
/// `-`, `@`, tab and CR (OWASP).
fn formula_start(c: char) -> bool {
    matches!(c, '=' | '+' | '-' | '@' | '\t' | '\r')
}

/// Whether `c` is shown escaped: control characters (C0, DEL, C1), the line and
/// paragraph separators and the bidi embedding, override and isolate controls. The
/// one definition for terminal text (`tlsgap_output::escape::terminal`) and CSV.
pub fn is_escaped_control(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The log's "no value" dash alone: it starts with `-` but cannot run, and every
/// consumer of these files looks for it as it is.
fn inert(s: &str) -> bool {
    s == "-"
}

/// Append `s` to `out` as a CSV field: always quoted, quotes doubled (RFC 4180), so
/// that commas, quotes and line breaks in log text never shift a column. With
/// [`CsvStyle::Safe`], a value starting with `=`, `+`, `-`, `@`, tab or CR is written
/// with a `'` first (except the lone `-` of a missing value, which cannot run), and
/// control characters as `\xHH` / `\u{..}` (a line break too, so that every row is
/// one line); for text cells only: numbers are written by their callers, never
/// through here.
pub fn csv_field(s: &str, style: CsvStyle, out: &mut Vec<u8>) {
    out.push(b'"');
    if style == CsvStyle::Raw {
        let mut rest = s.as_bytes();
        while let Some(q) = memchr::memchr(b'"', rest) {
            out.extend_from_slice(rest.get(..=q).unwrap_or_default());
            out.push(b'"');
            rest = rest.get(q + 1..).unwrap_or_default();
        }
        out.extend_from_slice(rest);
        out.push(b'"');
        return;
    }
    if s.starts_with(formula_start) && !inert(s) {
        out.push(b'\'');
    }
    // The plain ASCII run at the start is copied whole (usually the whole value); the
    // rest, from a character boundary since all before it is ASCII, character by
    // character.
    let plain = plain_prefix(s.as_bytes());
    out.extend_from_slice(s.as_bytes().get(..plain).unwrap_or_default());
    safe_chars(s.get(plain..).unwrap_or_default(), out);
    out.push(b'"');
}

/// [`csv_field`] of the text `bytes` stand for ([`tlsgap_parser::lossless_text`]: bytes
/// that are not UTF-8 as `\xHH`), without checking the plain ASCII run at the start
/// as UTF-8 first: that run is copied as it is, only the rest is converted.
pub fn csv_field_bytes(bytes: &[u8], style: CsvStyle, out: &mut Vec<u8>) {
    let plain = plain_prefix(bytes);
    if plain == bytes.len() {
        // All printable ASCII without a quote: the text itself, nothing to escape
        // but a formula's start.
        out.push(b'"');
        if style == CsvStyle::Safe
            && bytes.first().is_some_and(|&b| formula_start(char::from(b)))
            && bytes != b"-"
        {
            out.push(b'\'');
        }
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    if style == CsvStyle::Raw || plain == 0 {
        csv_field(&tlsgap_parser::lossless_text(bytes), style, out);
        return;
    }
    // A plain run, then the rest: the run is whole characters, so the rest converts
    // to what it would as part of the whole, and a formula is judged by the run's
    // first byte.
    out.push(b'"');
    if bytes.first().is_some_and(|&b| formula_start(char::from(b))) {
        out.push(b'\'');
    }
    out.extend_from_slice(bytes.get(..plain).unwrap_or_default());
    let rest = bytes.get(plain..).unwrap_or_default();
    safe_chars(&tlsgap_parser::lossless_text(rest), out);
    out.push(b'"');
}

/// How many bytes at the start of `bytes` [`safe_chars`] writes as they are and one
/// at a time: printable ASCII but `"`.
fn plain_prefix(bytes: &[u8]) -> usize {
    use crate::words::{has_below, has_byte, has_high, word};
    let mut i = 0;
    while let Some(w) = word(bytes, i) {
        if has_below(w, 0x20) || has_high(w) || has_byte(w, 0x7f) || has_byte(w, b'"') {
            break;
        }
        i += 8;
    }
    i + bytes
        .get(i..)
        .unwrap_or_default()
        .iter()
        .take_while(|&&b| (0x20..0x7f).contains(&b) && b != b'"')
        .count()
}

/// The body of a [`CsvStyle::Safe`] field, character by character: controls escaped,
/// quotes doubled.
fn safe_chars(s: &str, out: &mut Vec<u8>) {
    let mut buf = [0u8; 4];
    for c in s.chars() {
        if is_escaped_control(c) {
            let n = u32::from(c);
            let esc = if n < 0x100 {
                format!("\\x{n:02X}")
            } else {
                format!("\\u{{{n:x}}}")
            };
            out.extend_from_slice(esc.as_bytes());
        } else if c == '"' {
            out.extend_from_slice(b"\"\"");
        } else {
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn field(s: &str, style: CsvStyle) -> String {
        let mut v = Vec::new();
        csv_field(s, style, &mut v);
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn formula_starts_get_a_quote_mark() {
        let safe = |s| field(s, CsvStyle::Safe);
        assert_eq!(safe("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
        assert_eq!(safe("+1"), "\"'+1\"");
        assert_eq!(safe("-2+3"), "\"'-2+3\"");
        assert_eq!(safe("-"), "\"-\"");
        assert_eq!(safe("--"), "\"'--\"");
        assert_eq!(safe("@SUM(A1)"), "\"'@SUM(A1)\"");
        // Tab and CR are judged as they stand in the log, then escaped.
        assert_eq!(safe("\tx"), "\"'\\x09x\"");
        assert_eq!(safe("\rx"), "\"'\\x0Dx\"");
        // Only the first character counts.
        assert_eq!(safe("a=1"), "\"a=1\"");
        assert_eq!(safe(" =1"), "\" =1\"");
        assert_eq!(safe("'=1"), "\"'=1\"");
    }

    #[test]
    fn quotes_commas_and_plain_values() {
        let safe = |s| field(s, CsvStyle::Safe);
        assert_eq!(safe("a \"b\",c"), "\"a \"\"b\"\",c\"");
        assert_eq!(
            safe("Mozilla/5.0 (X11; Linux) é"),
            "\"Mozilla/5.0 (X11; Linux) é\""
        );
        assert_eq!(safe("TLS_AES_128_GCM_SHA256"), "\"TLS_AES_128_GCM_SHA256\"");
        assert_eq!(safe(""), "\"\"");
    }

    #[test]
    fn controls_and_bidi_are_escaped() {
        let safe = |s| field(s, CsvStyle::Safe);
        assert_eq!(safe("ECDHE-\u{1b}[31mEVIL"), "\"ECDHE-\\x1B[31mEVIL\"");
        assert_eq!(
            safe("a\nb\r\nc\u{7f}\u{9b}"),
            "\"a\\x0Ab\\x0D\\x0Ac\\x7F\\x9B\""
        );
        assert_eq!(safe("gpj.\u{202e}exe"), "\"gpj.\\u{202e}exe\"");
        assert_eq!(safe("x\u{2066}y\u{2028}"), "\"x\\u{2066}y\\u{2028}\"");
    }

    /// The plain run copied whole changes nothing: every field of random text (every
    /// kind of character the escaping knows, at every length up to 40) is what the
    /// character-by-character writer makes of it; raw fields only double quotes.
    #[test]
    fn copied_runs_write_what_characters_would() {
        let alphabet =
            "ab \"'=,\u{0}\t\n\r\u{1b}\u{1f}\u{7f}\u{80}\u{9b}é€😀\u{2028}\u{202e}\u{2066}~";
        for s in crate::words::sample_texts(alphabet, 20_000) {
            let mut chars = b"\"".to_vec();
            if s.starts_with(formula_start) && !inert(&s) {
                chars.push(b'\'');
            }
            safe_chars(&s, &mut chars);
            chars.push(b'"');
            assert_eq!(field(&s, CsvStyle::Safe).into_bytes(), chars, "{s:?}");
            let raw = format!("\"{}\"", s.replace('"', "\"\""));
            assert_eq!(field(&s, CsvStyle::Raw), raw, "{s:?}");
        }
    }

    /// The bytes writer is the text writer on their lossless text: random byte strings
    /// (valid and broken UTF-8, escapes, quotes, formula starts, the lone dash) in both
    /// styles.
    #[test]
    fn bytes_write_as_their_lossless_text() {
        let alphabet = "ab \"'=+-@,\u{0}\t\n\r\u{1b}\u{7f}\u{80}\u{9b}é€😀\u{2028}\u{202e}~";
        let cases = crate::words::sample_bytes(alphabet, 20_000);
        for b in &cases {
            for style in [CsvStyle::Safe, CsvStyle::Raw] {
                let mut want = Vec::new();
                csv_field(&tlsgap_parser::lossless_text(b), style, &mut want);
                let mut got = Vec::new();
                csv_field_bytes(b, style, &mut got);
                assert_eq!(got, want, "{style:?} {b:?}");
            }
        }
    }

    #[test]
    fn raw_only_quotes() {
        let raw = |s| field(s, CsvStyle::Raw);
        assert_eq!(raw("=HYPERLINK(\"x\")"), "\"=HYPERLINK(\"\"x\"\")\"");
        for s in ["+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain"] {
            assert_eq!(raw(s), format!("\"{s}\""));
        }
        assert_eq!(raw("a \"b\",c\nd"), "\"a \"\"b\"\",c\nd\"");
        assert_eq!(raw("\u{1b}[31m\u{202e}"), "\"\u{1b}[31m\u{202e}\"");
        assert_eq!(CsvStyle::raw_if(true), CsvStyle::Raw);
        assert_eq!(CsvStyle::raw_if(false), CsvStyle::Safe);
        assert_eq!(CsvStyle::default(), CsvStyle::Safe);
    }
}
