//! Flat rows (CSV, Parquet) and PIDs from `-ff` file names.

#[allow(unused_imports)]
use super::*;

/// One row of the flat (CSV/Parquet) form: a gap or a blocked interval.
#[derive(Clone, Debug, PartialEq)]
pub struct GapRow {
    /// `gap` or `blocked`.
    pub kind: &'static str,
    /// The cause.
    pub cause: &'static str,
    /// More on the cause.
    pub detail: Option<String>,
    /// The input.
    pub file: String,
    /// The line that ends it.
    pub line: u64,
    /// The thread.
    pub pid: u32,
    /// `unix`, `time_of_day` or `relative`.
    pub clock: &'static str,
    /// Start, formatted.
    pub start: String,
    /// End, formatted.
    pub end: String,
    /// Seconds.
    pub seconds: f64,
    /// Raw start day.
    pub start_day: i64,
    /// Raw start nanoseconds.
    pub start_nanos: i64,
    /// Raw end day.
    pub end_day: i64,
    /// Raw end nanoseconds.
    pub end_nanos: i64,
    /// Inside one call.
    pub inside_call: bool,
    /// Includes the previous call's time (no `-T`).
    pub includes_call_time: bool,
    /// Timer signals merged.
    pub timer_signals: u32,
    /// The syscall.
    pub call: Option<String>,
    /// The file or socket of the cause.
    pub resource: Option<String>,
    /// Its kind.
    pub resource_kind: &'static str,
    /// Files and sockets touched, most recent first, joined with ` | `.
    pub resources: String,
    /// The call before.
    pub before: Option<String>,
    /// The call after.
    pub after: Option<String>,
}

/// The column names of [`GapRow`] (CSV header and Parquet schema), with their types.
pub const GAP_COLUMNS: [(&str, CellType); 23] = [
    ("kind", CellType::Text),
    ("cause", CellType::Text),
    ("detail", CellType::Text),
    ("file", CellType::Text),
    ("line", CellType::Int),
    ("pid", CellType::Int),
    ("clock", CellType::Text),
    ("start", CellType::Text),
    ("end", CellType::Text),
    ("seconds", CellType::Float),
    ("start_day", CellType::Int),
    ("start_nanos", CellType::Int),
    ("end_day", CellType::Int),
    ("end_nanos", CellType::Int),
    ("inside_call", CellType::Bool),
    ("includes_call_time", CellType::Bool),
    ("timer_signals", CellType::Int),
    ("call", CellType::Text),
    ("resource", CellType::Text),
    ("resource_kind", CellType::Text),
    ("resources", CellType::Text),
    ("before", CellType::Text),
    ("after", CellType::Text),
];

/// Flatten a report: every gap, then every blocked interval, in report order.
pub fn gap_rows(report: &GapsReport) -> Vec<GapRow> {
    report
        .gaps
        .iter()
        .chain(report.blocked.iter())
        .map(|g| GapRow {
            kind: g.kind.as_str(),
            cause: g.cause.as_str(),
            detail: g.detail.clone(),
            file: g.file.clone(),
            line: g.line,
            pid: g.pid,
            clock: g.clock.as_str(),
            start: g.start.clone(),
            end: g.end.clone(),
            seconds: g.seconds,
            start_day: g.start_day,
            start_nanos: g.start_nanos,
            end_day: g.end_day,
            end_nanos: g.end_nanos,
            inside_call: g.inside_call,
            includes_call_time: g.includes_call_time,
            timer_signals: g.timer_signals,
            call: g.call.clone(),
            resource: g.resource.clone(),
            resource_kind: g.resource_kind.as_str(),
            resources: g.resources.join(" | "),
            before: g.before.clone(),
            after: g.after.clone(),
        })
        .collect()
}

/// The flat form as a typed table ([`GAP_COLUMNS`]).
pub fn gap_table(report: &GapsReport) -> Rows {
    let mut rows = Rows::new(&GAP_COLUMNS);
    for r in gap_rows(report) {
        rows.push(vec![
            r.kind.into(),
            r.cause.into(),
            r.detail.into(),
            r.file.into(),
            r.line.into(),
            r.pid.into(),
            r.clock.into(),
            r.start.into(),
            r.end.into(),
            r.seconds.into(),
            Cell::Int(r.start_day),
            Cell::Int(r.start_nanos),
            Cell::Int(r.end_day),
            Cell::Int(r.end_nanos),
            r.inside_call.into(),
            r.includes_call_time.into(),
            r.timer_signals.into(),
            r.call.into(),
            r.resource.into(),
            r.resource_kind.into(),
            r.resources.into(),
            r.before.into(),
            r.after.into(),
        ]);
    }
    rows
}

// ------------------------------------------------------------------ file names

/// The PID in a `-ff` file name: `trace.12085` → 12085, also `dir/trace.12085.gz`
/// (and `.zst`, `.bz2`, `.xz`).
pub fn pid_from_file_name(name: &str) -> Option<u32> {
    let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut base = base;
    for ext in [".gz", ".zst", ".zstd", ".bz2", ".xz", ".lz4"] {
        if let Some(b) = base.strip_suffix(ext) {
            base = b;
            break;
        }
    }
    let (stem, digits) = base.rsplit_once('.')?;
    if stem.is_empty() || digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&p| p > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pid_from_names() {
        assert_eq!(pid_from_file_name("trace.12085"), Some(12085));
        assert_eq!(pid_from_file_name("/tmp/x/trace.12085.gz"), Some(12085));
        assert_eq!(pid_from_file_name("trace.12085.zst"), Some(12085));
        assert_eq!(pid_from_file_name("trace.log"), None);
        assert_eq!(pid_from_file_name("12085"), None);
        assert_eq!(pid_from_file_name("trace."), None);
    }
}
