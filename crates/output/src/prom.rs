//! `tlsgap tls --format prom`: a [`TlsReport`] in the Prometheus text exposition
//! format (version 0.0.4), for node_exporter's textfile collector.
//!
//! ```
//! use tlsgap_agg::{CountMode, LineStats, TlsAgg};
//!
//! let mut agg = TlsAgg::new(CountMode::Requests);
//! agg.add(None, Some(b"TLSv1.3"), Some(b"TLS_AES_128_GCM_SHA256"));
//! let text = tlsgap_output::prom::render(&agg.report(&LineStats::default(), vec![]), None, 1.7e9);
//! assert!(text.contains(
//!     "tlsgap_requests{protocol=\"TLSv1.3\",cipher=\"TLS_AES_128_GCM_SHA256\",verdict=\"recommended\"} 1\n"
//! ));
//! ```
//!
//! # Use with the textfile collector
//!
//! node_exporter reads only files whose names end in `.prom` in
//! `--collector.textfile.directory`, so write with `-o DIR/tlsgap.prom`. `-o` writes a
//! temporary file in the same directory (`.tlsgap.prom.tlsgap-PID.tmp`, which the
//! collector ignores) and renames it into place, so a scrape never sees half a file.
//! Do not redirect standard output into the directory: the shell truncates the file
//! first and the collector may read it empty or cut.
//!
//! # Metrics (all gauges)
//!
//! | metric | labels | value |
//! |---|---|---|
//! | `tlsgap_requests` (`tlsgap_clients` with `--count clients`) | `protocol`, `cipher`, `verdict` | TLS requests (clients) with that protocol and cipher; `verdict` is the cipher's |
//! | `tlsgap_plain_requests` (`tlsgap_plain_clients`) | | requests without TLS (clients never seen over TLS) |
//! | `tlsgap_legacy_protocol_ratio` | | share (0–1) of TLS requests on SSLv2, SSLv3, TLS 1.0, TLS 1.1 |
//! | `tlsgap_insecure_cipher_ratio` | | share of TLS requests with a suite judged insecure |
//! | `tlsgap_weak_cipher_ratio` | | share with a suite judged weak |
//! | `tlsgap_no_forward_secrecy_ratio` | | share with a suite without forward secrecy |
//! | `tlsgap_no_aead_ratio` | | share with a suite without authenticated encryption |
//! | `tlsgap_lines` | | lines read |
//! | `tlsgap_parsed_lines` | | lines that fit the log format |
//! | `tlsgap_malformed_lines` | `reason` | malformed lines, one series per reason (zeros included) |
//! | `tlsgap_unreadable_inputs` | | inputs that could not be read completely |
//! | `tlsgap_last_processed_timestamp_seconds` | | Unix time of the newest log line (omitted when no line had a time) |
//! | `tlsgap_run_timestamp_seconds` | | Unix time of the run |
//!
//! Ratios are 0 when there was no TLS traffic (check `tlsgap_requests`).
//!
//! # Why gauges, not counters
//!
//! A Prometheus counter only ever goes up during the life of its series, so that
//! `rate()` and `increase()` can treat a decrease as a reset. These numbers describe
//! one processed window: a whole file set, or with `--state` only what was new since
//! the last run. Each run replaces the file, and the next value can be smaller than the
//! last without any reset having happened; typed as counters they would make `rate()`
//! invent traffic. So they are gauges, and by the naming conventions gauges do not end
//! in `_total`. Per-run figures add up with `sum_over_time()` over the run interval;
//! shares over a longer period are best recomputed from `tlsgap_requests`.

use std::fmt::Write as _;

use tlsgap_agg::{CountMode, TlsReport};

/// The exposition text of `report`: `# HELP` and `# TYPE` for every family, then its
/// samples; ends with a line feed. `newest_line_unix` is the time of the newest log
/// line processed (Unix seconds, `None` to leave that metric out); `run_unix` is now.
pub fn render(report: &TlsReport, newest_line_unix: Option<f64>, run_unix: f64) -> String {
    let mut out = String::with_capacity(256 + 160 * report.protocols.len().max(1) * 4);
    let (pairs, plain, unit) = match report.count {
        CountMode::Requests => ("tlsgap_requests", "tlsgap_plain_requests", "requests"),
        CountMode::Clients => ("tlsgap_clients", "tlsgap_plain_clients", "clients"),
    };

    family(
        &mut out,
        pairs,
        &format!(
            "TLS {unit} in the processed window by negotiated protocol and cipher, with the \
             cipher's verdict."
        ),
    );
    for p in &report.protocols {
        for c in &p.ciphers {
            sample(
                &mut out,
                pairs,
                &[
                    ("protocol", &p.protocol),
                    ("cipher", &c.cipher),
                    ("verdict", c.verdict.as_str()),
                ],
                c.count as f64,
            );
        }
    }

    family(
        &mut out,
        plain,
        &format!("{unit} without TLS in the processed window."),
    );
    sample(&mut out, plain, &[], report.plain as f64);

    let s = &report.summary;
    for (name, help, value) in [
        (
            "tlsgap_legacy_protocol_ratio",
            "Share (0-1) of TLS traffic on SSLv2, SSLv3, TLS 1.0 or TLS 1.1.",
            s.legacy_protocols.share,
        ),
        (
            "tlsgap_insecure_cipher_ratio",
            "Share (0-1) of TLS traffic with a cipher suite judged insecure.",
            s.insecure_ciphers.share,
        ),
        (
            "tlsgap_weak_cipher_ratio",
            "Share (0-1) of TLS traffic with a cipher suite judged weak.",
            s.weak_ciphers.share,
        ),
        (
            "tlsgap_no_forward_secrecy_ratio",
            "Share (0-1) of TLS traffic with a cipher suite without forward secrecy.",
            s.no_forward_secrecy.share,
        ),
        (
            "tlsgap_no_aead_ratio",
            "Share (0-1) of TLS traffic with a cipher suite without authenticated encryption.",
            s.no_aead.share,
        ),
    ] {
        family(&mut out, name, help);
        sample(&mut out, name, &[], value);
    }

    family(&mut out, "tlsgap_lines", "Log lines read.");
    sample(&mut out, "tlsgap_lines", &[], report.lines.total as f64);
    family(
        &mut out,
        "tlsgap_parsed_lines",
        "Log lines that fit the log format.",
    );
    sample(
        &mut out,
        "tlsgap_parsed_lines",
        &[],
        report.lines.parsed as f64,
    );
    family(
        &mut out,
        "tlsgap_malformed_lines",
        "Log lines that did not fit the log format, by reason.",
    );
    for (reason, n) in &report.lines.malformed_by_reason {
        sample(
            &mut out,
            "tlsgap_malformed_lines",
            &[("reason", reason)],
            *n as f64,
        );
    }
    family(
        &mut out,
        "tlsgap_unreadable_inputs",
        "Inputs that could not be read completely (missing, unreadable, truncated).",
    );
    let unreadable = report.inputs.iter().filter(|i| i.error.is_some()).count();
    sample(&mut out, "tlsgap_unreadable_inputs", &[], unreadable as f64);

    if let Some(t) = newest_line_unix {
        family(
            &mut out,
            "tlsgap_last_processed_timestamp_seconds",
            "Unix time of the newest log line processed.",
        );
        sample(&mut out, "tlsgap_last_processed_timestamp_seconds", &[], t);
    }
    family(
        &mut out,
        "tlsgap_run_timestamp_seconds",
        "Unix time at which tlsgap produced these figures.",
    );
    sample(&mut out, "tlsgap_run_timestamp_seconds", &[], run_unix);
    out
}

/// `# HELP` and `# TYPE ... gauge` lines.
fn family(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {}", escape_help(help));
    let _ = writeln!(out, "# TYPE {name} gauge");
}

/// One sample line. Label names are ours (valid by construction); values are escaped.
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: f64) {
    out.push_str(name);
    if !labels.is_empty() {
        out.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(k);
            out.push_str("=\"");
            out.push_str(&escape_label_value(v));
            out.push('"');
        }
        out.push('}');
    }
    out.push(' ');
    out.push_str(&format_value(value));
    out.push('\n');
}

/// A label value as the text format wants it: `\` → `\\`, `"` → `\"`, line feed →
/// `\n`. Anything else is allowed verbatim (UTF-8), so nothing a log holds can end the
/// value, the line or the file early.
pub fn escape_label_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    for ch in v.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            _ => out.push(ch),
        }
    }
    out
}

/// Help text: `\` → `\\`, line feed → `\n` (quotes stay as they are there).
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value: integers without a fraction, others as Rust prints them (shortest
/// round-trip form, never an exponent), and the text format's spellings of the
/// non-finite values.
fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        // `{}` prints 3.0 as "3" and 0.25 as "0.25".
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsgap_agg::{InputReport, LineStats, TlsAgg};
    use tlsgap_parser::Reason;

    fn small_report() -> TlsReport {
        let mut agg = TlsAgg::new(CountMode::Requests);
        for _ in 0..3 {
            agg.add(None, Some(b"TLSv1.3"), Some(b"TLS_AES_128_GCM_SHA256"));
        }
        agg.add(None, Some(b"TLSv1"), Some(b"RC4-SHA"));
        agg.add(None, None, None);
        let mut lines = LineStats::default();
        for _ in 0..5 {
            lines.ok();
        }
        lines.bad(Reason::Truncated);
        let inputs = vec![
            InputReport {
                name: "a.log".into(),
                lines: 6,
                error: None,
            },
            InputReport {
                name: "b.log.gz".into(),
                lines: 0,
                error: Some("truncated".into()),
            },
        ];
        agg.report(&lines, inputs)
    }

    #[test]
    fn exact_text_of_a_small_report() {
        let got = render(&small_report(), Some(1_795_000_060.5), 1_795_000_123.0);
        let mut malformed = String::new();
        for r in Reason::ALL
            .iter()
            .map(|r| r.as_str())
            .collect::<std::collections::BTreeSet<_>>()
        {
            let n = u8::from(r == "truncated");
            malformed.push_str(&format!("tlsgap_malformed_lines{{reason=\"{r}\"}} {n}\n"));
        }
        let want = format!(
            "\
# HELP tlsgap_requests TLS requests in the processed window by negotiated protocol and cipher, with the cipher's verdict.
# TYPE tlsgap_requests gauge
tlsgap_requests{{protocol=\"TLSv1.3\",cipher=\"TLS_AES_128_GCM_SHA256\",verdict=\"recommended\"}} 3
tlsgap_requests{{protocol=\"TLSv1\",cipher=\"RC4-SHA\",verdict=\"insecure\"}} 1
# HELP tlsgap_plain_requests requests without TLS in the processed window.
# TYPE tlsgap_plain_requests gauge
tlsgap_plain_requests 1
# HELP tlsgap_legacy_protocol_ratio Share (0-1) of TLS traffic on SSLv2, SSLv3, TLS 1.0 or TLS 1.1.
# TYPE tlsgap_legacy_protocol_ratio gauge
tlsgap_legacy_protocol_ratio 0.25
# HELP tlsgap_insecure_cipher_ratio Share (0-1) of TLS traffic with a cipher suite judged insecure.
# TYPE tlsgap_insecure_cipher_ratio gauge
tlsgap_insecure_cipher_ratio 0.25
# HELP tlsgap_weak_cipher_ratio Share (0-1) of TLS traffic with a cipher suite judged weak.
# TYPE tlsgap_weak_cipher_ratio gauge
tlsgap_weak_cipher_ratio 0
# HELP tlsgap_no_forward_secrecy_ratio Share (0-1) of TLS traffic with a cipher suite without forward secrecy.
# TYPE tlsgap_no_forward_secrecy_ratio gauge
tlsgap_no_forward_secrecy_ratio 0.25
# HELP tlsgap_no_aead_ratio Share (0-1) of TLS traffic with a cipher suite without authenticated encryption.
# TYPE tlsgap_no_aead_ratio gauge
tlsgap_no_aead_ratio 0.25
# HELP tlsgap_lines Log lines read.
# TYPE tlsgap_lines gauge
tlsgap_lines 6
# HELP tlsgap_parsed_lines Log lines that fit the log format.
# TYPE tlsgap_parsed_lines gauge
tlsgap_parsed_lines 5
# HELP tlsgap_malformed_lines Log lines that did not fit the log format, by reason.
# TYPE tlsgap_malformed_lines gauge
{malformed}\
# HELP tlsgap_unreadable_inputs Inputs that could not be read completely (missing, unreadable, truncated).
# TYPE tlsgap_unreadable_inputs gauge
tlsgap_unreadable_inputs 1
# HELP tlsgap_last_processed_timestamp_seconds Unix time of the newest log line processed.
# TYPE tlsgap_last_processed_timestamp_seconds gauge
tlsgap_last_processed_timestamp_seconds 1795000060.5
# HELP tlsgap_run_timestamp_seconds Unix time at which tlsgap produced these figures.
# TYPE tlsgap_run_timestamp_seconds gauge
tlsgap_run_timestamp_seconds 1795000123
"
        );
        assert_eq!(got, want);
    }

    #[test]
    fn newest_line_time_is_left_out_when_unknown() {
        let got = render(&small_report(), None, 1.0);
        assert!(!got.contains("tlsgap_last_processed_timestamp_seconds"));
        assert!(got.ends_with("tlsgap_run_timestamp_seconds 1\n"));
    }

    #[test]
    fn clients_mode_names_clients() {
        let mut agg = TlsAgg::new(CountMode::Clients);
        agg.add(Some(b"10.0.0.1"), Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        agg.add(Some(b"10.0.0.2"), None, None);
        let got = render(&agg.report(&LineStats::default(), vec![]), None, 0.0);
        assert!(got.contains(
            "tlsgap_clients{protocol=\"TLSv1.2\",cipher=\"AES128-SHA\",verdict=\"weak\"} 1\n"
        ));
        assert!(got.contains("\ntlsgap_plain_clients 1\n"));
        assert!(!got.contains("tlsgap_requests"));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label_value(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label_value("x\ny"), "x\\ny");
        assert_eq!(escape_label_value("é\r\t}"), "é\r\t}");
        // A hostile cipher name cannot end the label value, the line or add a sample.
        let mut agg = TlsAgg::new(CountMode::Requests);
        agg.add(None, Some(b"TLSv1.2"), Some(b"X\"} 1\nevil_metric{a=\"\\"));
        let got = render(&agg.report(&LineStats::default(), vec![]), None, 0.0);
        assert!(got.contains(
            "tlsgap_requests{protocol=\"TLSv1.2\",cipher=\"X\\\"} 1\\nevil_metric{a=\\\"\\\\\",verdict=\"unknown\"} 1\n"
        ), "{got}");
        assert!(!got.lines().any(|l| l.starts_with("evil_metric")));
    }

    #[test]
    fn values_never_use_exponents() {
        assert_eq!(format_value(1e-7), "0.0000001");
        assert_eq!(format_value(1.5e12), "1500000000000");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
    }
}
