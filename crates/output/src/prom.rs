//! `tlsgap tls --format prom` (and `merge --format prom`): a [`TlsReport`] and its
//! counters in the Prometheus text exposition format (version 0.0.4), for
//! node_exporter's textfile collector.
//!
//! ```
//! use tlsgap_agg::{CountMode, LineStats, TlsAgg, Totals};
//! use tlsgap_output::prom::{self, ConstLabels, Exposition};
//!
//! let mut agg = TlsAgg::new(CountMode::Requests);
//! agg.add(None, Some(b"TLSv1.3"), Some(b"TLS_AES_128_GCM_SHA256"));
//! let lines = LineStats::default();
//! let report = agg.report(&lines, vec![]);
//! let counters = Totals::of_run(&lines, Some(agg.request_totals()), None);
//! let labels = ConstLabels::new(vec![prom::parse_label("host=web1").unwrap()]).unwrap();
//! let text = prom::render(&Exposition {
//!     report: &report,
//!     counters: &counters,
//!     counters_created: None,
//!     labels: &labels,
//!     run_unix: 1.7e9,
//! });
//! assert!(text.contains(
//!     "tlsgap_requests_total{host=\"web1\",protocol=\"TLSv1.3\",\
//!      cipher=\"TLS_AES_128_GCM_SHA256\",verdict=\"recommended\"} 1\n"
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
//! # Metrics
//!
//! | metric | type | labels | value |
//! |---|---|---|---|
//! | `tlsgap_requests_total` | counter | `protocol`, `cipher`, `verdict` | TLS requests with that protocol and cipher; `verdict` is the cipher's |
//! | `tlsgap_plain_requests_total` | counter | | requests without TLS |
//! | `tlsgap_clients` (`--count clients`) | gauge | `protocol`, `cipher`, `verdict` | distinct clients of this run by their earliest TLS request |
//! | `tlsgap_plain_clients` (`--count clients`) | gauge | | clients of this run never seen over TLS |
//! | `tlsgap_legacy_protocol_ratio` | gauge | | share (0–1) of this run's TLS requests (clients) on SSLv2, SSLv3, TLS 1.0, TLS 1.1 |
//! | `tlsgap_insecure_cipher_ratio` | gauge | | share with a suite judged insecure |
//! | `tlsgap_weak_cipher_ratio` | gauge | | share with a suite judged weak |
//! | `tlsgap_no_forward_secrecy_ratio` | gauge | | share with a suite without forward secrecy |
//! | `tlsgap_no_aead_ratio` | gauge | | share with a suite without authenticated encryption |
//! | `tlsgap_lines_total` | counter | | lines read |
//! | `tlsgap_parsed_lines_total` | counter | | lines that fit the log format |
//! | `tlsgap_malformed_lines_total` | counter | `reason` | malformed lines, one series per reason (zeros included) |
//! | `tlsgap_unreadable_inputs` | gauge | | inputs this run could not read completely |
//! | `tlsgap_last_processed_timestamp_seconds` | gauge | | Unix time of the newest log line counted (omitted when no line had a time) |
//! | `tlsgap_state_created_timestamp_seconds` | gauge | | with `--state`: Unix time at which the counters started from zero |
//! | `tlsgap_run_timestamp_seconds` | gauge | | Unix time of the run |
//!
//! Constant labels ([`ConstLabels`], `--label host=web1`) come first on every sample.
//!
//! # What the counters count
//!
//! With `--state`, the counters are those the state file keeps: every line read under
//! it since `tlsgap_state_created_timestamp_seconds`, each run adding the lines it read
//! (across log rotation, as the state follows it). They only ever grow, and start again
//! from zero only when the state's counters do (the state file lost, or its counters
//! dropped), and then the creation timestamp changes: `rate()` and `increase()` see a
//! counter reset, as they do when a process restarts.
//!
//! Without `--state` a run has no memory: the counters are those of the input it read.
//! They are still counters (they are counts of requests, and `_total` by convention):
//! a cron job that reads the same growing log each time sees them grow, and drop to a
//! small value when the log is rotated, which `rate()` takes for the reset it is. A
//! run over a time window (`--since -5m`) is not monotone: use `--state` for that.
//!
//! Distinct clients cannot be added across runs (a client seen in two runs would count
//! twice), so `tlsgap_clients` stays a gauge of the run's own lines, as do the ratios
//! (0 when the run read no TLS traffic) and `tlsgap_unreadable_inputs`.

use std::fmt::Write as _;

use tlsgap_agg::verdict::cipher_facts;
use tlsgap_agg::{CountMode, TlsReport, Totals};

/// The labels of tlsgap's own metrics, which a constant label may not take.
pub const OWN_LABELS: [&str; 4] = ["protocol", "cipher", "verdict", "reason"];

/// Constant labels added to every sample (`--label k=v`), checked: valid, distinct
/// names that are not tlsgap's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConstLabels(Vec<(String, String)>);

impl ConstLabels {
    /// No constant labels.
    pub fn none() -> ConstLabels {
        ConstLabels::default()
    }

    /// Check `labels` (each from [`parse_label`]) as a set: a name given twice is an
    /// error. The order is kept.
    pub fn new(labels: Vec<(String, String)>) -> Result<ConstLabels, String> {
        for (i, (name, _)) in labels.iter().enumerate() {
            if labels[..i].iter().any(|(n, _)| n == name) {
                return Err(format!("--label {name} given twice"));
            }
        }
        Ok(ConstLabels(labels))
    }

    /// The labels, in order.
    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }
}

/// `NAME=VALUE` as a constant label: the name as Prometheus wants it
/// (`[a-zA-Z_][a-zA-Z0-9_]*`, not starting with `__`, which is reserved) and not one of
/// [`OWN_LABELS`]; the value any non-empty text (it is escaped when written).
pub fn parse_label(spec: &str) -> Result<(String, String), String> {
    let Some((name, value)) = spec.split_once('=') else {
        return Err(format!(
            "`{spec}` is not NAME=VALUE (for example host=web1)"
        ));
    };
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "label name `{name}` is not valid in Prometheus: a letter or _, then letters, \
             digits or _ ([a-zA-Z_][a-zA-Z0-9_]*)"
        ));
    }
    if name.starts_with("__") {
        return Err(format!(
            "label name `{name}` starts with __, which Prometheus reserves for itself"
        ));
    }
    if OWN_LABELS.contains(&name) {
        return Err(format!(
            "label name `{name}` is one of tlsgap's own ({})",
            OWN_LABELS.join(", ")
        ));
    }
    if value.is_empty() {
        return Err(format!(
            "label {name} has an empty value (Prometheus treats it as no label at all)"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

/// Everything one exposition holds.
#[derive(Debug, Clone, Copy)]
pub struct Exposition<'a> {
    /// This run's report: the gauges (clients, ratios, unreadable inputs).
    pub report: &'a TlsReport,
    /// The counters: of this run's input, or with `--state` the state's.
    pub counters: &'a Totals,
    /// With `--state`: when the counters started from zero (Unix seconds).
    pub counters_created: Option<f64>,
    /// Constant labels for every sample.
    pub labels: &'a ConstLabels,
    /// Now (Unix seconds).
    pub run_unix: f64,
}

/// Metric types used here.
#[derive(Clone, Copy)]
enum Type {
    Counter,
    Gauge,
}

/// Writes families and samples, with the constant labels on every sample.
struct Writer<'a> {
    out: String,
    labels: &'a ConstLabels,
}

impl Writer<'_> {
    /// `# HELP` and `# TYPE` lines.
    fn family(&mut self, name: &str, kind: Type, help: &str) {
        let kind = match kind {
            Type::Counter => "counter",
            Type::Gauge => "gauge",
        };
        let _ = writeln!(self.out, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
    }

    /// One sample line. Label names are ours or checked ([`parse_label`]); values are
    /// escaped.
    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        let out = &mut self.out;
        out.push_str(name);
        let all = self
            .labels
            .0
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(labels.iter().copied());
        for (i, (k, v)) in all.enumerate() {
            out.push(if i == 0 { '{' } else { ',' });
            out.push_str(k);
            out.push_str("=\"");
            out.push_str(&escape_label_value(v));
            out.push('"');
        }
        if !self.labels.0.is_empty() || !labels.is_empty() {
            out.push('}');
        }
        out.push(' ');
        out.push_str(&format_value(value));
        out.push('\n');
    }

    /// A family of one sample without labels of its own.
    fn single(&mut self, name: &str, kind: Type, help: &str, value: f64) {
        self.family(name, kind, help);
        self.sample(name, &[], value);
    }
}

/// The exposition text: `# HELP` and `# TYPE` for every family, then its samples;
/// ends with a line feed.
pub fn render(e: &Exposition<'_>) -> String {
    let report = e.report;
    let c = e.counters;
    let mut w = Writer {
        out: String::with_capacity(2048 + 200 * report.protocols.len().max(1) * 4),
        labels: e.labels,
    };
    // Where the counters come from, said in every counter's HELP, the same words with
    // and without `--state` (and the ratios' the same with `--count clients`): a
    // family's HELP must be one text across everything an exporter gathers, and
    // node_exporter drops the series of a second textfile whose HELP differs (audit of
    // 2026-11-28: one file per virtual host, one of them under a state).
    let since = "in the input this run read (with --state: read under the state file since \
                 tlsgap_state_created_timestamp_seconds)";
    let unit = "requests (with --count clients: distinct clients)";

    if let Some(requests) = &c.requests {
        w.family(
            "tlsgap_requests_total",
            Type::Counter,
            &format!(
                "TLS requests by negotiated protocol and cipher, with the cipher's verdict, \
                 {since}."
            ),
        );
        for (protocol, cipher, n) in requests.pairs() {
            let verdict = cipher_facts(protocol, cipher).verdict;
            w.sample(
                "tlsgap_requests_total",
                &[
                    ("protocol", protocol),
                    ("cipher", cipher),
                    ("verdict", verdict.as_str()),
                ],
                n as f64,
            );
        }
        w.single(
            "tlsgap_plain_requests_total",
            Type::Counter,
            &format!("Requests without TLS {since}."),
            requests.plain as f64,
        );
    }

    if report.count == CountMode::Clients {
        w.family(
            "tlsgap_clients",
            Type::Gauge,
            "Distinct clients among the lines this run read, by the protocol and cipher \
             of their earliest TLS request, with the cipher's verdict (a gauge: the clients \
             of two runs cannot be added).",
        );
        for p in &report.protocols {
            for ci in &p.ciphers {
                w.sample(
                    "tlsgap_clients",
                    &[
                        ("protocol", &p.protocol),
                        ("cipher", &ci.cipher),
                        ("verdict", ci.verdict.as_str()),
                    ],
                    ci.count as f64,
                );
            }
        }
        w.single(
            "tlsgap_plain_clients",
            Type::Gauge,
            "Distinct clients among the lines this run read never seen over TLS.",
            report.plain as f64,
        );
    }

    let s = &report.summary;
    for (name, what, value) in [
        (
            "tlsgap_legacy_protocol_ratio",
            "on SSLv2, SSLv3, TLS 1.0 or TLS 1.1",
            s.legacy_protocols.share,
        ),
        (
            "tlsgap_insecure_cipher_ratio",
            "with a cipher suite judged insecure",
            s.insecure_ciphers.share,
        ),
        (
            "tlsgap_weak_cipher_ratio",
            "with a cipher suite judged weak",
            s.weak_ciphers.share,
        ),
        (
            "tlsgap_no_forward_secrecy_ratio",
            "with a cipher suite without forward secrecy",
            s.no_forward_secrecy.share,
        ),
        (
            "tlsgap_no_aead_ratio",
            "with a cipher suite without authenticated encryption",
            s.no_aead.share,
        ),
    ] {
        w.single(
            name,
            Type::Gauge,
            &format!("Share (0-1) of the TLS {unit} this run read {what} (0 when it read none)."),
            value,
        );
    }

    w.single(
        "tlsgap_lines_total",
        Type::Counter,
        &format!("Log lines {since}."),
        c.lines as f64,
    );
    w.single(
        "tlsgap_parsed_lines_total",
        Type::Counter,
        &format!("Log lines that fit the log format, {since}."),
        c.parsed_lines as f64,
    );
    w.family(
        "tlsgap_malformed_lines_total",
        Type::Counter,
        &format!("Log lines that did not fit the log format, by reason, {since}."),
    );
    for (reason, n) in &c.malformed_lines {
        w.sample(
            "tlsgap_malformed_lines_total",
            &[("reason", reason)],
            *n as f64,
        );
    }
    let unreadable = report.inputs.iter().filter(|i| i.error.is_some()).count();
    w.single(
        "tlsgap_unreadable_inputs",
        Type::Gauge,
        "Inputs this run could not read completely (missing, unreadable, truncated).",
        unreadable as f64,
    );
    if let Some(t) = c.newest_line {
        w.single(
            "tlsgap_last_processed_timestamp_seconds",
            Type::Gauge,
            &format!("Unix time of the newest log line {since}."),
            t,
        );
    }
    if let Some(t) = e.counters_created {
        w.single(
            "tlsgap_state_created_timestamp_seconds",
            Type::Gauge,
            "Unix time at which the counters kept in the --state file started from zero; \
             it changes exactly when they start again (the state file lost, or its \
             counters dropped).",
            t,
        );
    }
    w.single(
        "tlsgap_run_timestamp_seconds",
        Type::Gauge,
        "Unix time at which tlsgap produced these figures.",
        e.run_unix,
    );
    w.out
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

    fn small_run() -> (TlsReport, Totals) {
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
                malformed: Some(0),
                error: None,
            },
            InputReport {
                name: "b.log.gz".into(),
                lines: 0,
                malformed: Some(0),
                error: Some("truncated".into()),
            },
        ];
        let totals = Totals::of_run(&lines, Some(agg.request_totals()), Some(1_795_000_060.5));
        (agg.report(&lines, inputs), totals)
    }

    fn text(report: &TlsReport, counters: &Totals, created: Option<f64>, run: f64) -> String {
        render(&Exposition {
            report,
            counters,
            counters_created: created,
            labels: &ConstLabels::none(),
            run_unix: run,
        })
    }

    #[test]
    fn exact_text_of_a_small_report() {
        let (report, totals) = small_run();
        let got = text(&report, &totals, None, 1_795_000_123.0);
        let mut malformed = String::new();
        for r in Reason::ALL
            .iter()
            .map(|r| r.as_str())
            .collect::<std::collections::BTreeSet<_>>()
        {
            let n = u8::from(r == "truncated");
            malformed.push_str(&format!(
                "tlsgap_malformed_lines_total{{reason=\"{r}\"}} {n}\n"
            ));
        }
        let want = format!(
            "\
# HELP tlsgap_requests_total TLS requests by negotiated protocol and cipher, with the cipher's verdict, in the input this run read (with --state: read under the state file since tlsgap_state_created_timestamp_seconds).
# TYPE tlsgap_requests_total counter
tlsgap_requests_total{{protocol=\"TLSv1\",cipher=\"RC4-SHA\",verdict=\"insecure\"}} 1
tlsgap_requests_total{{protocol=\"TLSv1.3\",cipher=\"TLS_AES_128_GCM_SHA256\",verdict=\"recommended\"}} 3
# HELP tlsgap_plain_requests_total Requests without TLS in the input this run read (with --state: read under the state file since tlsgap_state_created_timestamp_seconds).
# TYPE tlsgap_plain_requests_total counter
tlsgap_plain_requests_total 1
# HELP tlsgap_legacy_protocol_ratio Share (0-1) of the TLS requests (with --count clients: distinct clients) this run read on SSLv2, SSLv3, TLS 1.0 or TLS 1.1 (0 when it read none).
# TYPE tlsgap_legacy_protocol_ratio gauge
tlsgap_legacy_protocol_ratio 0.25
# HELP tlsgap_insecure_cipher_ratio Share (0-1) of the TLS requests (with --count clients: distinct clients) this run read with a cipher suite judged insecure (0 when it read none).
# TYPE tlsgap_insecure_cipher_ratio gauge
tlsgap_insecure_cipher_ratio 0.25
# HELP tlsgap_weak_cipher_ratio Share (0-1) of the TLS requests (with --count clients: distinct clients) this run read with a cipher suite judged weak (0 when it read none).
# TYPE tlsgap_weak_cipher_ratio gauge
tlsgap_weak_cipher_ratio 0
# HELP tlsgap_no_forward_secrecy_ratio Share (0-1) of the TLS requests (with --count clients: distinct clients) this run read with a cipher suite without forward secrecy (0 when it read none).
# TYPE tlsgap_no_forward_secrecy_ratio gauge
tlsgap_no_forward_secrecy_ratio 0.25
# HELP tlsgap_no_aead_ratio Share (0-1) of the TLS requests (with --count clients: distinct clients) this run read with a cipher suite without authenticated encryption (0 when it read none).
# TYPE tlsgap_no_aead_ratio gauge
tlsgap_no_aead_ratio 0.25
# HELP tlsgap_lines_total Log lines in the input this run read (with --state: read under the state file since tlsgap_state_created_timestamp_seconds).
# TYPE tlsgap_lines_total counter
tlsgap_lines_total 6
# HELP tlsgap_parsed_lines_total Log lines that fit the log format, in the input this run read (with --state: read under the state file since tlsgap_state_created_timestamp_seconds).
# TYPE tlsgap_parsed_lines_total counter
tlsgap_parsed_lines_total 5
# HELP tlsgap_malformed_lines_total Log lines that did not fit the log format, by reason, in the input this run read (with --state: read under the state file since tlsgap_state_created_timestamp_seconds).
# TYPE tlsgap_malformed_lines_total counter
{malformed}\
# HELP tlsgap_unreadable_inputs Inputs this run could not read completely (missing, unreadable, truncated).
# TYPE tlsgap_unreadable_inputs gauge
tlsgap_unreadable_inputs 1
# HELP tlsgap_last_processed_timestamp_seconds Unix time of the newest log line in the input this run read (with --state: read under the state file since tlsgap_state_created_timestamp_seconds).
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
    fn help_texts_are_the_same_with_and_without_state_and_in_both_counting_modes() {
        // One exporter gathers the files of several runs (one per virtual host, some
        // under a state, some counting clients): a family's HELP must be one text, or
        // node_exporter drops the series of the file that differs (audit of
        // 2026-11-28).
        let (report, totals) = small_run();
        let helps = |t: &str| -> Vec<String> {
            t.lines()
                .filter(|l| l.starts_with("# HELP "))
                .map(str::to_string)
                .collect()
        };
        let with_state = text(&report, &totals, Some(1_700_000_000.25), 1.0);
        let without = text(&report, &totals, None, 1.0);
        assert!(with_state.contains(
            "# TYPE tlsgap_state_created_timestamp_seconds gauge\n\
             tlsgap_state_created_timestamp_seconds 1700000000.25\n"
        ));
        assert!(!without.contains("\ntlsgap_state_created_timestamp_seconds "));
        let mut clients = TlsAgg::new(CountMode::Clients);
        clients.add(Some(b"10.0.0.1"), Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        let lines = LineStats::default();
        let clients_report = clients.report(&lines, vec![]);
        let clients_totals = Totals::of_run(&lines, Some(clients.request_totals()), None);
        let counting_clients = text(&clients_report, &clients_totals, None, 1.0);
        let all: Vec<String> = [&with_state, &without, &counting_clients]
            .iter()
            .flat_map(|t| helps(t))
            .collect();
        let mut by_family: std::collections::BTreeMap<&str, std::collections::BTreeSet<&str>> =
            std::collections::BTreeMap::new();
        for h in &all {
            let family = h.split(' ').nth(2).unwrap_or_default();
            by_family.entry(family).or_default().insert(h.as_str());
        }
        assert!(by_family.len() >= 12, "{by_family:?}");
        for (family, texts) in &by_family {
            assert_eq!(texts.len(), 1, "{family}: {texts:?}");
        }
    }

    #[test]
    fn newest_line_time_is_left_out_when_unknown() {
        let (report, mut totals) = small_run();
        totals.newest_line = None;
        let got = text(&report, &totals, None, 1.0);
        assert!(!got.contains("tlsgap_last_processed_timestamp_seconds"));
        assert!(got.ends_with("tlsgap_run_timestamp_seconds 1\n"));
    }

    #[test]
    fn clients_mode_adds_client_gauges_to_the_request_counters() {
        let mut agg = TlsAgg::new(CountMode::Clients);
        agg.add(Some(b"10.0.0.1"), Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        agg.add(Some(b"10.0.0.1"), Some(b"TLSv1.2"), Some(b"AES128-SHA"));
        agg.add(Some(b"10.0.0.2"), None, None);
        let lines = LineStats::default();
        let report = agg.report(&lines, vec![]);
        let totals = Totals::of_run(&lines, Some(agg.request_totals()), None);
        let got = text(&report, &totals, None, 0.0);
        assert!(got.contains("# TYPE tlsgap_clients gauge\n"));
        assert!(got.contains(
            "tlsgap_clients{protocol=\"TLSv1.2\",cipher=\"AES128-SHA\",verdict=\"weak\"} 1\n"
        ));
        assert!(got.contains("\ntlsgap_plain_clients 1\n"));
        assert!(got.contains(
            "tlsgap_requests_total{protocol=\"TLSv1.2\",cipher=\"AES128-SHA\",verdict=\"weak\"} 2\n"
        ));
        assert!(got.contains("\ntlsgap_weak_cipher_ratio 1\n"), "{got}");
        // A report of clients alone (merge --count clients) has no request counters.
        let got = text(&report, &Totals::of_report(&report, None), None, 0.0);
        assert!(!got.contains("tlsgap_requests_total"), "{got}");
        assert!(got.contains("tlsgap_clients{"));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape_label_value(r#"a\b"c"#), r#"a\\b\"c"#);
        assert_eq!(escape_label_value("x\ny"), "x\\ny");
        assert_eq!(escape_label_value("é\r\t}"), "é\r\t}");
        // A hostile cipher name cannot end the label value, the line or add a sample.
        let mut agg = TlsAgg::new(CountMode::Requests);
        agg.add(None, Some(b"TLSv1.2"), Some(b"X\"} 1\nevil_metric{a=\"\\"));
        let lines = LineStats::default();
        let totals = Totals::of_run(&lines, Some(agg.request_totals()), None);
        let got = text(&agg.report(&lines, vec![]), &totals, None, 0.0);
        assert!(got.contains(
            "tlsgap_requests_total{protocol=\"TLSv1.2\",cipher=\"X\\\"} 1\\nevil_metric{a=\\\"\\\\\",verdict=\"unknown\"} 1\n"
        ), "{got}");
        assert!(!got.lines().any(|l| l.starts_with("evil_metric")));
    }

    #[test]
    fn constant_labels_come_first_on_every_sample_and_are_escaped() {
        let (report, totals) = small_run();
        let labels = ConstLabels::new(vec![
            parse_label("host=web1").unwrap(),
            parse_label("vhost=a\"b\\c\nd=e").unwrap(),
        ])
        .unwrap();
        let got = render(&Exposition {
            report: &report,
            counters: &totals,
            counters_created: Some(5.0),
            labels: &labels,
            run_unix: 1.0,
        });
        let prefix = "{host=\"web1\",vhost=\"a\\\"b\\\\c\\nd=e\"";
        let samples: Vec<&str> = got.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(samples.len() > 20);
        for s in samples {
            let (name, rest) = s.split_at(s.find('{').unwrap_or(s.len()));
            assert!(name.starts_with("tlsgap_"), "{s}");
            assert!(rest.starts_with(prefix), "{s}");
        }
        assert!(got.contains("tlsgap_lines_total{host=\"web1\",vhost=\"a\\\"b\\\\c\\nd=e\"} 6\n"));
        assert!(got.contains(
            "tlsgap_malformed_lines_total{host=\"web1\",vhost=\"a\\\"b\\\\c\\nd=e\",reason=\"truncated\"} 1\n"
        ));
    }

    #[test]
    fn label_specs_are_checked() {
        assert_eq!(
            parse_label("host=web1.example.org"),
            Ok(("host".into(), "web1.example.org".into()))
        );
        assert_eq!(parse_label("_x9=a=b"), Ok(("_x9".into(), "a=b".into())));
        for (spec, says) in [
            ("host", "not NAME=VALUE"),
            ("=web1", "not valid"),
            ("9host=a", "not valid"),
            ("ho-st=a", "not valid"),
            ("hôst=a", "not valid"),
            ("__name__=a", "reserves"),
            ("__x=a", "reserves"),
            ("cipher=a", "tlsgap's own"),
            ("reason=a", "tlsgap's own"),
            ("host=", "empty value"),
        ] {
            let err = parse_label(spec).unwrap_err();
            assert!(err.contains(says), "{spec}: {err}");
        }
        let twice = ConstLabels::new(vec![
            parse_label("host=a").unwrap(),
            parse_label("host=b").unwrap(),
        ]);
        assert_eq!(twice.unwrap_err(), "--label host given twice");
    }

    #[test]
    fn values_never_use_exponents() {
        assert_eq!(format_value(1e-7), "0.0000001");
        assert_eq!(format_value(1.5e12), "1500000000000");
        assert_eq!(format_value(f64::NAN), "NaN");
        assert_eq!(format_value(f64::NEG_INFINITY), "-Inf");
    }
}
