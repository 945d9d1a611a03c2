//! One row per parsed line (`tlsgap export`): the column schema a format implies and
//! the typed values of a record.

use std::borrow::Cow;

use tlsgap_parser::{lossless_text, Format, Kind, Record, RequestParts, Role, Timestamp};

/// Where a column's values come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The input's name.
    File,
    /// The line number within the input (1-based).
    Line,
    /// The request time.
    Time,
    /// The UTC offset the log wrote the time in, in minutes (Parquet only).
    TimeOffset,
    /// Method, from its field or split from the request line.
    Method,
    /// Target, from its field(s) or split from the request line.
    Target,
    /// Protocol version, from its field or split from the request line.
    HttpVersion,
    /// The duration in microseconds, whatever unit the log used.
    DurationUs,
    /// A field of the format.
    Field(usize),
    /// A field holding credentials (a logged `Authorization` or `Proxy-Authorization`
    /// header): only its scheme is written, then `<redacted>`.
    Credential(usize),
}

/// A column's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    /// UTF-8 text (bytes that are not valid UTF-8 as `\xHH`).
    Text,
    /// A signed 64-bit integer.
    Int,
    /// A 64-bit float.
    Float,
    /// An instant (UTC, microseconds in Parquet; RFC 3339 with the log's offset in text).
    Time,
    /// A list of text items: what the client offered (`$ssl_ciphers`, `$ssl_curves`,
    /// `SSL_CLIENTHELLO_*`). A list in Parquet and ndjson, the logged text in CSV.
    /// The number is the width of one item of httpd's hex encoding (4, or 2 for EC
    /// point formats); nginx's lists are split on `:`.
    TextList(u8),
}

/// One export column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column name (canonical or documented).
    pub name: String,
    /// Where the values come from.
    pub source: Source,
    /// The value type.
    pub ty: ColumnType,
}

/// The columns of an export for one format.
#[derive(Clone, Debug)]
pub struct ExportSchema {
    /// Columns in output order.
    pub columns: Vec<Column>,
    needs_request: bool,
}

/// A typed value of one cell.
#[derive(Clone, Debug, PartialEq)]
pub enum Value<'a> {
    /// Absent (`-` in the log).
    Null,
    /// Text.
    Text(Cow<'a, str>),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// An instant with the log's offset.
    Time(Timestamp),
    /// A list, as logged (split by [`list_items`]).
    List(Cow<'a, str>, u8),
}

/// The items of a logged list: hex items of `width` digits when the whole value is hex
/// of a multiple of `width` digits (httpd trunk's `SSL_CLIENTHELLO_*`), else the parts
/// between `:` (nginx's `$ssl_ciphers`, `$ssl_curves`), empty parts left out.
pub fn list_items(raw: &str, width: u8) -> Vec<&str> {
    let w = usize::from(width.max(1));
    if !raw.is_empty() && raw.len() % w == 0 && raw.bytes().all(|b| b.is_ascii_hexdigit()) {
        // ASCII only: every `w` bytes are a char boundary.
        (0..raw.len() / w)
            .filter_map(|i| raw.get(i * w..(i + 1) * w))
            .collect()
    } else {
        raw.split(':').filter(|p| !p.is_empty()).collect()
    }
}

impl ExportSchema {
    /// The columns for `format`: `file`, `line`, the canonical columns the format
    /// carries in the order of the contract, then its other fields by their names.
    /// `with_offset` adds `time_offset_minutes` after `time` (for Parquet, whose
    /// timestamps are UTC).
    pub fn new(format: &Format, with_offset: bool) -> ExportSchema {
        let mut columns = vec![
            col("file", Source::File, ColumnType::Text),
            col("line", Source::Line, ColumnType::Int),
        ];
        let mut used = vec![false; format.fields.len()];
        let derived_request = format.has(Role::Request);
        for role in Role::ALL {
            if matches!(role, Role::Path | Role::Query) {
                continue;
            }
            let idx = format.role(role);
            if let Some(i) = idx {
                if let Some(u) = used.get_mut(i) {
                    *u = true;
                }
            }
            let source = match role {
                Role::Time if idx.is_some() => Source::Time,
                Role::Method if idx.is_some() || derived_request => Source::Method,
                Role::Target if idx.is_some() || derived_request || format.has(Role::Path) => {
                    Source::Target
                }
                Role::HttpVersion if idx.is_some() || derived_request => Source::HttpVersion,
                Role::Duration if idx.is_some() => Source::DurationUs,
                _ => match idx {
                    Some(i) => Source::Field(i),
                    None => continue,
                },
            };
            let ty = match source {
                Source::Time => ColumnType::Time,
                Source::DurationUs => ColumnType::Int,
                Source::Field(i) => field_type(format, i),
                _ => ColumnType::Text,
            };
            columns.push(col(role.column(), source, ty));
            if source == Source::Time && with_offset {
                columns.push(col(
                    "time_offset_minutes",
                    Source::TimeOffset,
                    ColumnType::Int,
                ));
            }
        }
        for (i, field) in format.fields.iter().enumerate() {
            if used.get(i) == Some(&false) && !columns.iter().any(|c| c.name == field.name) {
                if is_credential(&field.name) {
                    columns.push(col(&field.name, Source::Credential(i), ColumnType::Text));
                } else {
                    columns.push(col(&field.name, Source::Field(i), field_type(format, i)));
                }
            }
        }
        let needs_request = columns.iter().any(|c| {
            matches!(
                c.source,
                Source::Method | Source::Target | Source::HttpVersion
            )
        });
        ExportSchema {
            columns,
            needs_request,
        }
    }

    /// The values of `rec` (from input `file`, line `line`), one per column.
    pub fn values<'a>(&self, rec: &Record<'a>, file: &'a str, line: u64, out: &mut Vec<Value<'a>>) {
        out.clear();
        let parts = self.request_parts(rec);
        for c in &self.columns {
            out.push(self.value(c, rec, &parts, file, line));
        }
    }

    /// The method, target and version of `rec`, when a column needs them (else none).
    pub fn request_parts<'a>(&self, rec: &Record<'a>) -> RequestParts<'a> {
        if self.needs_request {
            rec.request_parts()
        } else {
            RequestParts::default()
        }
    }

    /// The value of column `c` of `rec`, whose request parts are `parts`
    /// ([`ExportSchema::request_parts`]).
    pub fn value<'a>(
        &self,
        c: &Column,
        rec: &Record<'a>,
        parts: &RequestParts<'a>,
        file: &'a str,
        line: u64,
    ) -> Value<'a> {
        match c.source {
            Source::File => Value::Text(Cow::Borrowed(file)),
            Source::Line => Value::Int(i64::try_from(line).unwrap_or(i64::MAX)),
            Source::Time => rec.time().map_or(Value::Null, Value::Time),
            Source::TimeOffset => rec
                .time()
                .and_then(|t| t.offset_minutes)
                .map_or(Value::Null, |o| Value::Int(i64::from(o))),
            Source::Method => text(parts.method.clone()),
            Source::Target => text(parts.target.clone()),
            Source::HttpVersion => text(parts.http_version.clone()),
            Source::DurationUs => rec.duration_us().map_or(Value::Null, |d| {
                Value::Int(i64::try_from(d).unwrap_or(i64::MAX))
            }),
            Source::Field(i) => match c.ty {
                ColumnType::Int => rec.int(i).map_or(Value::Null, |n| {
                    Value::Int(i64::try_from(n).unwrap_or(i64::MAX))
                }),
                ColumnType::Float => rec
                    .raw(i)
                    .and_then(|r| std::str::from_utf8(r).ok()?.parse::<f64>().ok())
                    .map_or(Value::Null, Value::Float),
                ColumnType::TextList(width) => match text(rec.value(i)) {
                    Value::Text(t) if !t.is_empty() && t != "-" => Value::List(t, width),
                    _ => Value::Null,
                },
                _ => text(rec.value(i)),
            },
            Source::Credential(i) => text(rec.value(i).map(|v| redacted(&v))),
        }
    }

    /// The bytes a text column's value is made of, before they are checked as UTF-8
    /// ([`lossless_text`], which [`ExportSchema::value`] applies): for the writers that
    /// can copy plain ASCII as it is and convert only the rest (inner `None`: absent).
    /// `None` for a column that is not plain text (numbers, times, lists).
    pub fn raw_text<'a>(
        &self,
        c: &Column,
        rec: &Record<'a>,
        parts: &RequestParts<'a>,
        file: &'a str,
    ) -> Option<Option<Cow<'a, [u8]>>> {
        if c.ty != ColumnType::Text {
            return None;
        }
        Some(match c.source {
            Source::File => Some(Cow::Borrowed(file.as_bytes())),
            Source::Method => parts.method.clone(),
            Source::Target => parts.target.clone(),
            Source::HttpVersion => parts.http_version.clone(),
            Source::Field(i) => rec.value(i),
            Source::Credential(i) => rec.value(i).map(|v| redacted(&v)),
            _ => return None,
        })
    }

    /// Whether column `c` has a [`ExportSchema::text_key`]: a text column from a
    /// field, a request part or the file's name.
    pub fn is_keyed(c: &Column) -> bool {
        c.ty == ColumnType::Text
            && matches!(
                c.source,
                Source::File
                    | Source::Method
                    | Source::Target
                    | Source::HttpVersion
                    | Source::Field(_)
                    | Source::Credential(_)
            )
    }

    /// What the value of a text column `c` of `rec` is a function of: the field's raw
    /// bytes, the request part's bytes or the file's name (inner `None`: absent). Two
    /// rows with the same key have the same [`ExportSchema::value`] in that column.
    /// `None` for a column whose value is not keyed so ([`ExportSchema::is_keyed`]).
    pub fn text_key<'k>(
        c: &Column,
        rec: &Record<'k>,
        parts: &'k RequestParts<'k>,
        file: &'k str,
    ) -> Option<Option<&'k [u8]>> {
        if !Self::is_keyed(c) {
            return None;
        }
        Some(match c.source {
            Source::File => Some(file.as_bytes()),
            Source::Method => parts.method.as_deref(),
            Source::Target => parts.target.as_deref(),
            Source::HttpVersion => parts.http_version.as_deref(),
            Source::Field(i) | Source::Credential(i) => rec.raw(i),
            _ => return None,
        })
    }
}

/// Whether a field named so holds credentials: a logged `Authorization` or
/// `Proxy-Authorization` header (Apache `%{Authorization}i`, nginx
/// `$http_authorization`), which the export must not print.
fn is_credential(name: &str) -> bool {
    matches!(
        name,
        "req_authorization"
            | "req_proxy_authorization"
            | "http_authorization"
            | "http_proxy_authorization"
    )
}

/// What is written of a credentials header: its scheme (`Basic`, `Bearer`, `Digest`:
/// which kind of authentication a request used), then `<redacted>`; a value that is
/// not a scheme name and a space then more (a bare token) is `<redacted>` whole. The credentials themselves
/// (a Basic password is base64, not a secret kept) never leave the log.
fn redacted(value: &[u8]) -> Cow<'static, [u8]> {
    let scheme_len = value
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        .count();
    let after = value.get(scheme_len).copied();
    match value.get(..scheme_len) {
        Some(scheme) if (1..=32).contains(&scheme_len) && after == Some(b' ') => {
            let mut out = scheme.to_vec();
            out.extend_from_slice(b" <redacted>");
            Cow::Owned(out)
        }
        _ => Cow::Borrowed(b"<redacted>"),
    }
}

fn col(name: &str, source: Source, ty: ColumnType) -> Column {
    Column {
        name: name.to_string(),
        source,
        ty,
    }
}

fn field_type(format: &Format, i: usize) -> ColumnType {
    match format.fields.get(i).and_then(|f| f.role) {
        Some(
            Role::TlsOfferedCiphers
            | Role::TlsOfferedGroups
            | Role::TlsHelloVersions
            | Role::TlsHelloExtensions
            | Role::TlsHelloSigAlgs,
        ) => return ColumnType::TextList(4),
        Some(Role::TlsHelloEcFormats) => return ColumnType::TextList(2),
        _ => {}
    }
    match format.fields.get(i).map(|f| &f.kind) {
        Some(Kind::Int) => ColumnType::Int,
        Some(Kind::Decimal) => ColumnType::Float,
        _ => ColumnType::Text,
    }
}

fn text(v: Option<Cow<'_, [u8]>>) -> Value<'_> {
    match v {
        None => Value::Null,
        Some(Cow::Borrowed(b)) => Value::Text(lossless_text(b)),
        Some(Cow::Owned(v)) => Value::Text(Cow::Owned(lossless_text(&v).into_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsgap_parser::LineParser;

    #[test]
    fn combinedssl_columns_and_values() {
        let f = Format::compile("combinedssl").unwrap();
        let s = ExportSchema::new(&f, false);
        let names: Vec<&str> = s.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "file",
                "line",
                "time",
                "client",
                "ident",
                "user",
                "request",
                "method",
                "target",
                "http_version",
                "status",
                "bytes",
                "referer",
                "user_agent",
                "tls_protocol",
                "tls_cipher"
            ]
        );
        let mut p = LineParser::new(&f);
        let mut rec = Record::new(&f);
        let line = br#"::1 - "" [21/Nov/2026:18:07:40 +0100] "GET /a\xffb c HTTP/1.1" 200 - "-" "x \"y\"" TLSv1.2 AES128-SHA"#;
        p.parse(line, &mut rec).unwrap();
        let mut out = Vec::new();
        s.values(&rec, "f.log", 7, &mut out);
        let at = |name: &str| &out[names.iter().position(|n| *n == name).unwrap()];
        assert_eq!(at("line"), &Value::Int(7));
        assert_eq!(at("client"), &Value::Text("::1".into()));
        assert_eq!(at("ident"), &Value::Null);
        assert_eq!(
            at("user"),
            &Value::Text("".into()),
            "empty user is not absent"
        );
        assert_eq!(at("target"), &Value::Text("/a\\xFFb c".into()));
        assert_eq!(at("http_version"), &Value::Text("HTTP/1.1".into()));
        assert_eq!(at("status"), &Value::Int(200));
        assert_eq!(at("bytes"), &Value::Int(0), "CLF `-` bytes are zero");
        assert_eq!(at("user_agent"), &Value::Text("x \"y\"".into()));
    }

    /// A logged `Authorization` (Apache `%{Authorization}i`, nginx
    /// `$http_authorization`, and `Proxy-Authorization`) is exported as its scheme and
    /// `<redacted>`, in the row values and in the texts the Parquet writer copies; the
    /// credentials are nowhere (a black-box audit found them exported as logged).
    #[test]
    fn credentials_are_exported_redacted() {
        let apache =
            r#"LogFormat "%h %t \"%r\" %>s \"%{Authorization}i\" \"%{Proxy-Authorization}i\"" a"#;
        let nginx = r#"log_format n '$remote_addr [$time_local] "$request" $status "$http_authorization" "$http_proxy_authorization"';"#;
        for fmt in [apache, nginx] {
            let f = Format::compile(fmt).unwrap();
            let s = ExportSchema::new(&f, false);
            let mut p = LineParser::new(&f);
            let mut rec = Record::new(&f);
            let line = br#"192.0.2.1 [21/Nov/2026:18:07:40 +0100] "GET / HTTP/1.1" 200 "Basic YWxpY2U6c2VjcmV0" "x9f-token""#;
            p.parse(line, &mut rec).unwrap();
            let mut out = Vec::new();
            s.values(&rec, "f.log", 1, &mut out);
            let parts = s.request_parts(&rec);
            let mut seen = Vec::new();
            for (c, v) in s.columns.iter().zip(&out) {
                if c.name.ends_with("_authorization") {
                    let copied = s.raw_text(c, &rec, &parts, "f.log").unwrap().unwrap();
                    assert_eq!(Value::Text(lossless_text(&copied)), *v);
                    seen.push(v.clone());
                }
                assert!(!format!("{v:?}").contains("YWxp") && !format!("{v:?}").contains("x9f"));
            }
            assert_eq!(
                seen,
                [
                    Value::Text("Basic <redacted>".into()),
                    Value::Text("<redacted>".into())
                ],
                "{fmt}"
            );
        }
    }

    /// Every plain text column's value is [`lossless_text`] of its raw text, and only
    /// those columns have one: lines with escapes, bytes that are not UTF-8, absent and
    /// empty fields, a request without a version, a format with fields of its own.
    #[test]
    fn raw_text_is_what_the_value_is_made_of() {
        let lines: [&[u8]; 4] = [
            br#"::1 - "" [21/Nov/2026:18:07:40 +0100] "GET /a\xffb c HTTP/1.1" 200 - "-" "x \"y\"" TLSv1.2 AES128-SHA"#,
            b"10.0.0.1 - b\xc3\xa9 [21/Nov/2026:18:07:40 +0100] \"PUT /\xe2\x82 HTTP/2.0\" 404 12 \"http://\xff/\" \"\xf0\x9f\x98\x80\" - -",
            br#"10.0.0.2 - - [21/Nov/2026:18:07:40 +0100] "\x16\x03\x01" 400 0 "-" "-" - -"#,
            br#"10.0.0.3 - - [21/Nov/2026:18:07:40 +0100] "GET /only-target" 200 1 "-" "curl/8" TLSv1.3 TLS_AES_128_GCM_SHA256"#,
        ];
        for format in [
            "combinedssl",
            r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x"#,
        ] {
            let f = Format::compile(format).unwrap();
            let s = ExportSchema::new(&f, false);
            let mut p = LineParser::new(&f);
            let mut rec = Record::new(&f);
            let mut texts = 0;
            for line in lines {
                p.parse(line, &mut rec).unwrap();
                let parts = s.request_parts(&rec);
                for c in &s.columns {
                    let value = s.value(c, &rec, &parts, "d\u{e9}j\u{e0}.log", 3);
                    match s.raw_text(c, &rec, &parts, "d\u{e9}j\u{e0}.log") {
                        Some(raw) => {
                            texts += 1;
                            assert_eq!(text(raw), value, "{}", c.name);
                        }
                        None => assert!(
                            !matches!(value, Value::Text(_)),
                            "{} is text without raw text",
                            c.name
                        ),
                    }
                }
            }
            assert!(texts >= 4 * 10, "{format}: {texts}");
        }
    }

    #[test]
    fn parquet_schema_has_offset_and_durations_are_microseconds() {
        let f = Format::compile(r#"%h %t "%r" %>s %{ms}T %P %{X-Id}i"#).unwrap();
        let s = ExportSchema::new(&f, true);
        let names: Vec<&str> = s.columns.iter().map(|c| c.name.as_str()).collect();
        assert!(names.contains(&"time_offset_minutes"));
        assert!(names.contains(&"duration_us") && names.contains(&"pid"));
        assert!(names.contains(&"req_x_id"));
        let mut p = LineParser::new(&f);
        let mut rec = Record::new(&f);
        p.parse(
            b"1.2.3.4 [21/Nov/2026:18:07:40 +0100] \"GET / HTTP/1.1\" 200 15 42 abc",
            &mut rec,
        )
        .unwrap();
        let mut out = Vec::new();
        s.values(&rec, "-", 1, &mut out);
        let i = names.iter().position(|n| *n == "duration_us").unwrap();
        assert_eq!(out[i], Value::Int(15_000));
    }
}
