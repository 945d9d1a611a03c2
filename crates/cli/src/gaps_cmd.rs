//! `tlsgap gaps`: slow gaps between system calls in strace output.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use anyhow::{bail, Result};
use tlsgap_agg::gaps::{gap_table, pid_from_file_name, GapAnalyzer, GapOptions, GapsReport};
use tlsgap_agg::InputReport;

use crate::cli::{GapsArgs, TlsFormat};
use crate::emit::{self, Csv, Emitter, Parquet};
use crate::escape;
use crate::input::{describe_read_error, Input};
use crate::output;

/// Expand the trace arguments: `-`/none is stdin; a pattern with `*`, `?` or `[` that
/// the shell left alone (quoted, or from cron) is expanded here, sorted.
pub fn expand_inputs(args: &[std::path::PathBuf]) -> Vec<String> {
    if args.is_empty() {
        return vec!["-".into()];
    }
    let mut out = Vec::new();
    for a in args {
        let s = a.to_string_lossy().into_owned();
        let wild = s.contains(['*', '?', '[']) && !a.exists();
        if wild {
            if let Ok(paths) = glob::glob(&s) {
                let mut found: Vec<String> = paths
                    .filter_map(|p| p.ok())
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                found.sort();
                if !found.is_empty() {
                    out.extend(found);
                    continue;
                }
            }
        }
        out.push(s);
    }
    out
}

/// Feed one input to the analyzer, line by line.
pub fn feed(name: &str, analyzer: &mut GapAnalyzer) -> InputReport {
    let mut report = InputReport {
        name: name.to_string(),
        lines: 0,
        error: None,
    };
    let input = match Input::open(name) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("tlsgap: {}: {e}", escape::terminal(name));
            report.error = Some(e.to_string());
            return report;
        }
    };
    let hint = if name == "-" {
        None
    } else {
        pid_from_file_name(name)
    };
    analyzer.begin_input(name, hint);
    let mut input = input;
    // Big blocks, lines split in place: no copy per line. `filled` bytes are in
    // `buf`, of which `start..` are not yet fed (the head of a line).
    let mut buf = vec![0u8; 1 << 20];
    let mut start = 0;
    let mut filled = 0;
    let mut bytes = 0u64;
    loop {
        if start > 0 && filled == buf.len() {
            // Move the unfinished line to the front; grow if it fills the buffer.
            buf.copy_within(start..filled, 0);
            filled -= start;
            start = 0;
        }
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = match input.read(buf.get_mut(filled..).unwrap_or_default()) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let msg = describe_read_error(&input, &e, bytes);
                eprintln!("tlsgap: {}: {msg}", escape::terminal(name));
                report.error = Some(msg);
                break;
            }
        };
        if n == 0 {
            // The last line, without a newline.
            if let Some(rest) = buf.get(start..filled).filter(|r| !r.is_empty()) {
                feed_line(analyzer, &mut report, rest);
            }
            break;
        }
        let from = filled;
        filled += n;
        let mut search = from;
        while let Some(p) = memchr::memchr(b'\n', buf.get(search..filled).unwrap_or_default()) {
            let end = search + p + 1;
            let raw = buf.get(start..end).unwrap_or_default();
            bytes += raw.len() as u64;
            feed_line(analyzer, &mut report, raw);
            start = end;
            search = end;
        }
        if start == filled {
            start = 0;
            filled = 0;
        }
    }
    analyzer.end_input();
    report
}

/// One line, with its `\n` (if any) and a `\r` before it removed.
fn feed_line(analyzer: &mut GapAnalyzer, report: &mut InputReport, raw: &[u8]) {
    report.lines += 1;
    let line = raw.strip_suffix(b"\n").unwrap_or(raw);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    analyzer.line(report.lines, line);
}

/// Run `tlsgap gaps`.
pub fn run(args: GapsArgs) -> Result<ExitCode> {
    if args.format == TlsFormat::Parquet
        && args.output.as_deref().is_none_or(|p| p.as_os_str() == "-")
    {
        bail!("--format parquet needs -o PATH");
    }
    let min_gap = args.min_gap;
    if !(min_gap.is_finite() && min_gap >= 0.0) {
        bail!("--min-gap {min_gap}: not a number of seconds");
    }
    let opts = GapOptions {
        min_gap_ns: (min_gap * 1e9).round() as u64,
        top: args.top,
        ..GapOptions::default()
    };
    let mut analyzer = GapAnalyzer::new(opts);
    let names = expand_inputs(&args.traces);
    let inputs: Vec<InputReport> = names.iter().map(|n| feed(n, &mut analyzer)).collect();
    if inputs.iter().all(|i| i.error.is_some() && i.lines == 0) {
        bail!("no trace could be read");
    }
    let report = analyzer.finish();
    let mut out = output::open(args.output.as_deref().filter(|p| p.as_os_str() != "-"))?;
    match args.format {
        TlsFormat::Table => out.write_all(table(&report).as_bytes())?,
        TlsFormat::Csv => Csv.emit(&gap_table(&report), &mut out)?,
        TlsFormat::Json => emit::json(&report, &mut out)?,
        TlsFormat::Parquet => Parquet.emit(&gap_table(&report), &mut out)?,
        TlsFormat::Prom => anyhow::bail!("--format prom is for `tls` and `merge`"),
    }
    out.finish()?;
    let failed = inputs.iter().any(|i| i.error.is_some());
    Ok(ExitCode::from(u8::from(failed)))
}

fn table(r: &GapsReport) -> String {
    crate::gaps_table::render(r)
}
