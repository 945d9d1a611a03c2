//! Emitters: one trait, one implementation per output format; each takes a typed
//! result and a `Write` (tests write into a `Vec<u8>`).

use std::io::Write;

use std::io::Result;

use tlsgap_agg::{tls_rows, Cell, CountMode, Rows, TlsReport, TLS_ROW_COLUMNS};

use crate::{escape, layout};

/// Writes a result of type `R` in one output format.
pub trait Emitter<R: ?Sized> {
    /// Write `result` to `out`.
    fn emit(&self, result: &R, out: &mut dyn Write) -> Result<()>;
}

/// Aligned text for a terminal, in `width` columns.
#[derive(Debug)]
pub struct Table {
    /// The summary printed under the table (each of its lines folded to the width).
    pub summary: String,
    /// The terminal's width in cells: the table fits it (leaving out the FS and AEAD
    /// columns, then the verdict, when it is narrow; a long name goes on a line of
    /// its own, never cut).
    pub width: usize,
}

impl Default for Table {
    fn default() -> Table {
        Table {
            summary: String::new(),
            width: DEFAULT_WIDTH,
        }
    }
}

/// CSV with a header row. Text cells go through [`escape::csv_field`]: by default
/// neutralised for spreadsheets (a `'` before `=`, `+`, `-`, `@`, tab or CR at the
/// start) with control characters escaped; numbers, booleans and the fixed tokens
/// the program writes (kinds, verdicts) as they are.
#[derive(Clone, Copy, Debug, Default)]
pub struct Csv {
    /// `--csv-raw`: text cells only quoted ([`escape::CsvStyle::Raw`]).
    pub raw: bool,
}

/// The default emitter (`Csv { raw: false }`), so that `Csv.emit(..)` reads as before.
#[allow(non_upper_case_globals)]
pub const Csv: Csv = Csv { raw: false };

impl Csv {
    fn style(&self) -> escape::CsvStyle {
        escape::CsvStyle::raw_if(self.raw)
    }
}

/// Pretty JSON (the stable contract).
#[derive(Debug, Default)]
pub struct Json;

/// Parquet (polars; the `parquet` feature).
#[derive(Debug, Default)]
pub struct Parquet;

/// A polars error as an I/O error (an emitter's only error type).
#[cfg(feature = "parquet")]
fn polars_error(e: polars::prelude::PolarsError) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

pub use crate::layout::{wrap, DEFAULT_WIDTH};

/// Digits grouped by thousands (`1,234,567`).
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A share as a percentage with two decimals.
pub fn percent(share: f64) -> String {
    format!("{:.2}%", share * 100.0)
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

/// Cut `s` to `width` characters, marking the cut with `…` (characters, for the
/// report's templates and charts; terminal tables use [`crate::layout::fit`], which
/// counts terminal cells).
pub fn fit(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    let mut out: String = s.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

impl Emitter<TlsReport> for Table {
    fn emit(&self, r: &TlsReport, sink: &mut dyn Write) -> Result<()> {
        let out = self.text(r).map_err(std::io::Error::other)?;
        // No trailing blanks: they make copied tables and diffs noisy.
        for line in out.lines() {
            writeln!(sink, "{}", line.trim_end())?;
        }
        Ok(())
    }
}

/// Which columns of the `tls` table are shown, widest first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TlsColumns {
    All,
    NoFsAead,
    NoVerdict,
}

impl TlsColumns {
    /// Cells after the name: count 1+11, share 8, verdict 1+12, FS 4, AEAD 5.
    fn fixed(self) -> usize {
        match self {
            TlsColumns::All => 1 + 11 + 8 + 1 + 12 + 4 + 5,
            TlsColumns::NoFsAead => 1 + 11 + 8 + 1 + 12,
            TlsColumns::NoVerdict => 1 + 11 + 8,
        }
    }

    fn left_out(self) -> &'static str {
        match self {
            TlsColumns::All => "",
            TlsColumns::NoFsAead => "FS, AEAD",
            TlsColumns::NoVerdict => "verdict, FS, AEAD",
        }
    }
}

/// A row of the `tls` table: the name padded to `name_w` cells, then `rest`; a longer
/// name on a line (or lines) of its own, whole, and `rest` under it.
fn name_row(name: &str, name_w: usize, rest: &str, width: usize) -> String {
    if layout::cells(name) <= name_w {
        return format!("{}{rest}", layout::label_line(name, name_w, ""));
    }
    let indent = name.len() - name.trim_start().len();
    let pieces = layout::break_long(name.trim_start(), width.saturating_sub(indent));
    let mut out = String::new();
    for p in pieces {
        out.push_str(&" ".repeat(indent));
        out.push_str(&p);
        out.push('\n');
    }
    out.push_str(&" ".repeat(name_w));
    out.push_str(rest);
    out
}

impl Table {
    /// The table as text (lines may end in blanks).
    fn text(&self, r: &TlsReport) -> std::result::Result<String, std::fmt::Error> {
        use std::fmt::Write as _;
        let width = self.width;
        let mut out = String::new();
        let unit = match r.count {
            CountMode::Requests => "requests",
            CountMode::Clients => "clients",
        };
        let longest = r
            .protocols
            .iter()
            .flat_map(|p| {
                std::iter::once(layout::cells(&escape::terminal(&p.protocol))).chain(
                    p.ciphers
                        .iter()
                        .map(|c| layout::cells(&escape::terminal(&c.cipher)) + 2),
                )
            })
            .max()
            .unwrap_or(0);
        // Wide enough for the total lines' labels.
        let want = longest.max(20);
        // The most columns that leave the name 20 cells (or all it needs); at the
        // narrowest, the name gets what is left and longer names go on lines of
        // their own.
        let shown = [TlsColumns::All, TlsColumns::NoFsAead, TlsColumns::NoVerdict]
            .into_iter()
            .find(|c| want.min(20) + c.fixed() <= width)
            .unwrap_or(TlsColumns::NoVerdict);
        let name_w = want.min(width.saturating_sub(shown.fixed())).max(8);
        let tail = |verdict: &str, fs: &str, aead: &str| match shown {
            TlsColumns::All => format!(" {verdict:<12}{fs:<4}{aead:<5}"),
            TlsColumns::NoFsAead => format!(" {verdict:<12}"),
            TlsColumns::NoVerdict => String::new(),
        };
        writeln!(
            &mut out,
            "{}",
            name_row(
                "protocol / cipher",
                name_w,
                &format!("{unit:>12}{:>8}{}", "share", tail("verdict", "FS", "AEAD")),
                width
            )
        )?;
        for p in &r.protocols {
            let name = escape::terminal(&p.protocol);
            let rest = format!(
                " {:>11}{:>8}{}",
                thousands(p.count),
                percent(p.share),
                tail(p.verdict.as_str(), "", "")
            );
            writeln!(&mut out, "{}", name_row(&name, name_w, &rest, width))?;
            for c in &p.ciphers {
                let name = format!("  {}", escape::terminal(&c.cipher));
                let rest = format!(
                    " {:>11}{:>8}{}",
                    thousands(c.count),
                    percent(c.share),
                    tail(
                        c.verdict.as_str(),
                        yes_no(c.forward_secrecy),
                        yes_no(c.aead)
                    )
                );
                writeln!(&mut out, "{}", name_row(&name, name_w, &rest, width))?;
            }
        }
        for (label, n) in [
            (format!("TLS total ({unit})"), r.total),
            ("plain HTTP (no TLS)".to_string(), r.plain),
        ] {
            let rest = format!(" {:>11}", thousands(n));
            writeln!(&mut out, "{}", name_row(&label, name_w, &rest, width))?;
        }
        if shown != TlsColumns::All {
            out.push_str(&wrap(
                &format!("(left out to fit {width} columns:"),
                &format!("{}; set COLUMNS wider to show them)", shown.left_out()),
                width,
                2,
            ));
        }
        if let Some(key) = r.client_key {
            let what = if key == "addr" {
                "address"
            } else {
                "address + User-Agent"
            };
            out.push('\n');
            out.push_str(&wrap(
                "",
                &format!("(a client is one {what}, counted by its earliest TLS request)"),
                layout::measure(width),
                1,
            ));
        }
        if let Some(e) = &r.estimate {
            out.push_str(&estimate_note(e, layout::measure(width)));
        }
        let sm = &r.summary;
        // Labels take what the two figures (20 cells) leave, up to 42.
        let label_w = 42.min(width.saturating_sub(20));
        let figures = |a: &str, b: &str| format!("{a:>11}{b:>9}");
        writeln!(
            &mut out,
            "\n{}",
            layout::label_line("verdict summary", label_w, &figures(unit, "share"))
        )?;
        for (label, t) in [
            (
                "legacy protocols (SSLv2/3, TLS 1.0/1.1)",
                sm.legacy_protocols,
            ),
            ("insecure ciphers", sm.insecure_ciphers),
            ("weak ciphers", sm.weak_ciphers),
            ("without forward secrecy", sm.no_forward_secrecy),
            ("without AEAD", sm.no_aead),
            ("unknown protocol or cipher", sm.unknown),
        ] {
            writeln!(
                &mut out,
                "{}",
                layout::label_line(
                    &format!("  {label}"),
                    label_w,
                    &figures(&thousands(t.count), &percent(t.share))
                )
            )?;
        }
        match sm.grade_cap {
            Some(g) => {
                writeln!(&mut out, "rating cap implied by this traffic: {g}")?;
                for c in &sm.caps {
                    let reason = escape::terminal(&c.reason);
                    out.push_str(&wrap(&format!("  {}", c.grade), &reason, width, 4));
                }
            }
            None => writeln!(&mut out, "rating cap implied by this traffic: none")?,
        }
        if let Some(pq) = &r.post_quantum {
            out.push_str(&groups_section(pq, width));
        }
        if !self.summary.is_empty() {
            out.push('\n');
            out.push_str(&summary_lines(&self.summary, width));
        }
        Ok(out)
    }
}

/// The key-exchange groups under the `tls` table (only when the format logs them):
/// the negotiated groups and their post-quantum share, and the requests and clients
/// that offered a post-quantum group.
fn groups_section(pq: &tlsgap_agg::pq::PqReport, width: usize) -> String {
    let mut out = String::new();
    let label_w = 42.min(width.saturating_sub(20));
    let figures = |a: &str, b: &str| format!("{a:>11}{b:>9}");
    if let Some(n) = &pq.negotiated {
        out.push('\n');
        out.push_str(&layout::label_line(
            "negotiated key-exchange group",
            label_w,
            &figures("requests", "share"),
        ));
        out.push('\n');
        for g in &n.groups {
            let name = format!(
                "  {}{}",
                escape::terminal(&g.group),
                if g.post_quantum {
                    " (post-quantum)"
                } else {
                    ""
                }
            );
            out.push_str(&layout::label_line(
                &name,
                label_w,
                &figures(&thousands(g.count), &percent(g.share)),
            ));
            out.push('\n');
        }
        out.push_str(&layout::label_line(
            "  post-quantum, all groups",
            label_w,
            &figures(
                &thousands(n.post_quantum.count),
                &percent(n.post_quantum.share),
            ),
        ));
        out.push('\n');
    }
    if let Some(o) = &pq.offered {
        out.push('\n');
        out.push_str(&wrap(
            "",
            &format!(
                "offered a post-quantum group: {} of {} requests with offered groups \
                 logged ({}), {} of {} clients ({}) ({})",
                thousands(o.post_quantum.count),
                thousands(o.requests),
                percent(o.post_quantum.share),
                thousands(o.post_quantum_clients.count),
                thousands(o.clients),
                percent(o.post_quantum_clients.share),
                if o.client_key == "addr" {
                    "address"
                } else {
                    "address + User-Agent"
                },
            ),
            layout::measure(width),
            2,
        ));
    }
    out
}

/// A run's summary under a table: each line folded at spaces to `width` cells, its
/// continuation lines indented by two.
pub fn summary_lines(summary: &str, width: usize) -> String {
    summary.lines().map(|l| wrap("", l, width, 2)).collect()
}

impl Emitter<TlsReport> for Csv {
    fn emit(&self, r: &TlsReport, out: &mut dyn Write) -> Result<()> {
        writeln!(out, "{}", TLS_ROW_COLUMNS.join(","))?;
        let mut line = Vec::new();
        for row in tls_rows(r) {
            line.clear();
            line.extend_from_slice(row.kind.as_bytes());
            line.push(b',');
            if let Some(p) = &row.protocol {
                escape::csv_field(p, self.style(), &mut line);
            }
            line.push(b',');
            if let Some(c) = &row.cipher {
                escape::csv_field(c, self.style(), &mut line);
            }
            line.push(b',');
            line.extend_from_slice(row.count.to_string().as_bytes());
            line.push(b',');
            if let Some(s) = row.share {
                line.extend_from_slice(s.to_string().as_bytes());
            }
            for v in [row.verdict, row.protocol_verdict] {
                line.push(b',');
                if let Some(v) = v {
                    line.extend_from_slice(v.as_str().as_bytes());
                }
            }
            for v in [row.forward_secrecy, row.aead] {
                line.push(b',');
                if let Some(v) = v {
                    line.extend_from_slice(if v { b"true" } else { b"false" });
                }
            }
            line.push(b',');
            if let Some(b) = row.bits {
                line.extend_from_slice(b.to_string().as_bytes());
            }
            line.push(b',');
            if let Some(g) = &row.group {
                escape::csv_field(g, self.style(), &mut line);
            }
            line.push(b',');
            if let Some(v) = row.post_quantum {
                line.extend_from_slice(if v { b"true" } else { b"false" });
            }
            line.push(b'\n');
            out.write_all(&line)?;
        }
        Ok(())
    }
}

impl Emitter<Rows> for Csv {
    fn emit(&self, r: &Rows, out: &mut dyn Write) -> Result<()> {
        let header: Vec<&str> = r.columns.iter().map(|(n, _)| *n).collect();
        writeln!(out, "{}", header.join(","))?;
        let mut line = Vec::new();
        for row in &r.rows {
            line.clear();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                match cell {
                    Cell::Null => {}
                    Cell::Text(s) => escape::csv_field(s, self.style(), &mut line),
                    Cell::Int(n) => line.extend_from_slice(n.to_string().as_bytes()),
                    Cell::Float(x) => line.extend_from_slice(x.to_string().as_bytes()),
                    Cell::Bool(b) => line.extend_from_slice(if *b { b"true" } else { b"false" }),
                }
            }
            line.push(b'\n');
            out.write_all(&line)?;
        }
        Ok(())
    }
}

#[cfg(feature = "parquet")]
impl Emitter<Rows> for Parquet {
    fn emit(&self, r: &Rows, out: &mut dyn Write) -> Result<()> {
        let mut df = tlsgap_agg::frame::rows_frame(r).map_err(polars_error)?;
        polars::prelude::ParquetWriter::new(out)
            .finish(&mut df)
            .map_err(polars_error)?;
        Ok(())
    }
}

/// Pretty JSON of any serializable result, with a final newline.
pub fn json<T: serde::Serialize + ?Sized>(value: &T, out: &mut dyn Write) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}

/// Plain aligned columns for a terminal: a header, then rows; text escaped for the
/// terminal, each column as wide as its widest cell (capped at `max_width`), no
/// trailing blanks.
pub fn text_table(header: &[&str], rows: &[Vec<String>], max_width: usize) -> String {
    let cells: Vec<Vec<String>> = std::iter::once(header.iter().map(|h| h.to_string()).collect())
        .chain(rows.iter().map(|r| {
            r.iter()
                .map(|c| fit(&escape::terminal(c), max_width))
                .collect()
        }))
        .collect();
    let mut widths = vec![0usize; header.len()];
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    for row in &cells {
        let mut line = String::new();
        for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(c);
            line.extend(std::iter::repeat_n(
                ' ',
                w.saturating_sub(c.chars().count()),
            ));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

impl Emitter<TlsReport> for Json {
    fn emit(&self, r: &TlsReport, out: &mut dyn Write) -> Result<()> {
        serde_json::to_writer_pretty(&mut *out, r)?;
        writeln!(out)?;
        Ok(())
    }
}

#[cfg(feature = "parquet")]
impl Emitter<TlsReport> for Parquet {
    fn emit(&self, r: &TlsReport, out: &mut dyn Write) -> Result<()> {
        let mut df = tlsgap_agg::frame::tls_frame(r).map_err(polars_error)?;
        polars::prelude::ParquetWriter::new(out)
            .finish(&mut df)
            .map_err(polars_error)?;
        Ok(())
    }
}

/// The note that client figures are partly estimates, folded to `width` cells: `note:
/// clients: estimated beyond the memory limit (512 MiB): 1,234 exact + ~5,678
/// (HyperLogLog, ±0.81% standard error)`, and what that means for per-pair counts.
pub fn estimate_note(e: &tlsgap_agg::distinct::Estimate, width: usize) -> String {
    let text = format!(
        "{}; clients first seen after the limit are estimated per row too (one seen \
         with several protocols or ciphers may count under each)",
        e.note()
    );
    wrap("note:", &text, width, 6)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsgap_agg::{CellType, LineStats, TlsAgg};

    fn report() -> TlsReport {
        let mut a = TlsAgg::new(CountMode::Requests);
        for _ in 0..3 {
            a.add(
                Some(b"1"),
                Some(b"TLSv1.3"),
                Some(b"TLS_AES_128_GCM_SHA256"),
            );
        }
        a.add(
            Some(b"1"),
            Some(b"TLSv1.2"),
            Some(b"ECDHE-RSA-\x1b[31mEVIL"),
        );
        a.add(
            Some(b"1"),
            Some(b"TLSv1.2"),
            Some(b"A-VERY-LONG-CIPHER-NAME-THAT-NOBODY-WOULD-EVER-USE-BUT-MIGHT-APPEAR"),
        );
        a.add(Some(b"2"), None, None);
        a.report(&LineStats::default(), vec![])
    }

    #[test]
    fn table_fits_80_columns_and_escapes() {
        let mut v = Vec::new();
        Table::default().emit(&report(), &mut v).unwrap();
        let s = String::from_utf8(v).unwrap();
        for line in s.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line:?}");
        }
        assert!(!s.contains('\u{1b}'), "raw escape reached the terminal");
        assert!(s.contains("\\x1B[31mEVIL"));
        assert!(s.contains("plain HTTP (no TLS)"));
    }

    #[test]
    fn estimated_clients_are_noted() {
        let mut r = report();
        let plain = table(&r);
        r.estimate = Some(tlsgap_agg::distinct::Estimate {
            exact_clients: 1_234_567,
            estimated_clients: 3_456_789,
            relative_standard_error: tlsgap_agg::distinct::RELATIVE_STANDARD_ERROR,
            memory_limit_bytes: 512 << 20,
        });
        let s = table(&r);
        for line in s.lines() {
            assert!(line.chars().count() <= 80, "too wide: {line:?}");
        }
        assert!(s.contains("note: clients: estimated beyond the memory limit (512 MiB):"));
        let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("1,234,567 exact + ~3,456,789 (HyperLogLog, ±0.81% standard error)"));
        assert!(!plain.contains("estimated"));
        let mut v = Vec::new();
        Json.emit(&r, &mut v).unwrap();
        let json: serde_json::Value = serde_json::from_slice(&v).unwrap();
        assert_eq!(json["estimate"]["exact_clients"], 1_234_567);
        assert_eq!(json["estimate"]["memory_limit_bytes"], 512 << 20);
    }

    fn table(r: &TlsReport) -> String {
        let mut v = Vec::new();
        Table::default().emit(r, &mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn csv_has_header_rows_and_plain() {
        let mut v = Vec::new();
        Csv.emit(&report(), &mut v).unwrap();
        let s = String::from_utf8(v).unwrap();
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "kind,protocol,cipher,count,share,verdict,protocol_verdict,forward_secrecy,aead,bits,group,post_quantum"
        );
        assert!(lines[1].starts_with(
            "tls,\"TLSv1.3\",\"TLS_AES_128_GCM_SHA256\",3,0.6,recommended,recommended,true,true,128"
        ));
        assert_eq!(*lines.last().unwrap(), "plain,,,1,,,,,,,,");
        assert!(s.contains(",\"ECDHE-RSA-\\x1B[31mEVIL\","), "{s}");
        assert!(!s.contains('\u{1b}'), "raw escape in CSV");
        let mut v = Vec::new();
        Csv { raw: true }.emit(&report(), &mut v).unwrap();
        let s = String::from_utf8(v).unwrap();
        assert!(s.contains(",\"ECDHE-RSA-\u{1b}[31mEVIL\","), "{s}");
    }

    fn mixed() -> Rows {
        let mut r = Rows::new(&[
            ("user", CellType::Text),
            ("delta", CellType::Int),
            ("seconds", CellType::Float),
            ("path", CellType::Text),
            ("ok", CellType::Bool),
            ("none", CellType::Text),
        ]);
        r.push(vec![
            "=HYPERLINK(\"http://x\",\"y\")".into(),
            Cell::Int(-5),
            Cell::Float(-0.25),
            "-2+3".into(),
            false.into(),
            Cell::Null,
        ]);
        r.push(vec![
            "@SUM(A1)".into(),
            Cell::Int(7),
            Cell::Float(1.5),
            "\t+1\n".into(),
            true.into(),
            "plain".into(),
        ]);
        r
    }

    #[test]
    fn csv_neutralises_text_cells_only() {
        let mut v = Vec::new();
        Csv::default().emit(&mixed(), &mut v).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "user,delta,seconds,path,ok,none\n\
             \"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-5,-0.25,\"'-2+3\",false,\n\
             \"'@SUM(A1)\",7,1.5,\"'\\x09+1\\x0A\",true,\"plain\"\n"
        );
    }

    #[test]
    fn csv_raw_only_quotes() {
        let mut v = Vec::new();
        Csv { raw: true }.emit(&mixed(), &mut v).unwrap();
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "user,delta,seconds,path,ok,none\n\
             \"=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",-5,-0.25,\"-2+3\",false,\n\
             \"@SUM(A1)\",7,1.5,\"\t+1\n\",true,\"plain\"\n"
        );
    }

    #[test]
    fn csv_tls_rows_neutralise_protocol_and_cipher() {
        let mut a = TlsAgg::new(CountMode::Requests);
        a.add(Some(b"1"), Some(b"-TLSv1"), Some(b"=CMD|' /C calc'!A0"));
        let r = a.report(&LineStats::default(), vec![]);
        let mut v = Vec::new();
        Csv.emit(&r, &mut v).unwrap();
        let s = String::from_utf8(v).unwrap();
        assert!(s.contains("\"'-TLSv1\",\"'=CMD|' /C calc'!A0\",1,"), "{s}");
    }
}
