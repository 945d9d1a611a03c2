//! The nightly report (`tlsgap report`) rendered: one self-contained HTML page, and a
//! plain-text version for cron mail.
//!
//! `tlsgap_engine::report` collects, in one pass over the logs, the protocol/cipher
//! distribution, the what-if evidence, requests per period and protocol
//! ([`Trend`]), line counts and, when `--htpasswd`/`--traces` are given, the auth
//! evidence; this module renders them. The page shows: `#distribution`, `#trend`, `#verdicts`, `#whatif`
//! (the three Mozilla profiles, or the policies asked for), `#malformed` and `#auth`.
//! [`json`] writes the same figures as one JSON document.
//!
//! The text fits 80 columns: tables are laid out for it (a column of policy labels
//! widens up to what still fits; the trend shows at most five protocol columns, the
//! rest as `other`), and sentences (notes, advice, the list of inputs) are folded at
//! spaces with [`crate::emit::wrap`].
//!
//! # Escaping
//!
//! Everything that came from a log (protocol and cipher names, User-Agents, addresses,
//! user names, file names) reaches the page only through minijinja's `{{ ... }}` in
//! `report.html`, which this module renders with HTML auto-escaping forced on
//! ([`environment`]), after a formatter that first makes control characters visible
//! (`\x1B`, [`crate::escape::terminal`]). The only values marked `safe` are the SVG
//! charts: plotters builds them from labels that were passed through
//! [`crate::escape::terminal`] and cut to length, and plotters' SVG backend escapes
//! `<`, `>`, `&`, `"` and `'` in every text and attribute it writes (a unit test holds
//! it to that). The page has no scripts at all and a Content-Security-Policy of
//! `default-src 'none'`, so even a mistake could neither run code nor fetch anything.

use std::io::Result;

use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};
use plotters::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use tlsgap_agg::authjoin::AuthReport;
use tlsgap_agg::trend::{Period, Trend};
use tlsgap_agg::whatif::WhatifReport;
use tlsgap_agg::{InputReport, TlsReport, Verdict};
use tlsgap_parser::Reason;

use crate::emit::{fit, percent, thousands, wrap};
use crate::escape;

/// Protocols drawn as their own series in the trend chart; the rest are "other".
const TREND_SERIES: usize = 6;
/// Protocols drawn as their own bar in the distribution chart.
const CHART_BARS: usize = 12;
/// Longest label drawn in a chart (characters).
const LABEL_CHARS: usize = 28;
/// Width of the text report.
const TEXT_WIDTH: usize = 80;
/// Protocol columns of the text's trend table: 16 + 1 + 10 + 5 × 10 = 77 characters.
const TEXT_TREND_COLUMNS: usize = 5;
/// The what-if table's label column: at least this wide (as before policies could be
/// chosen) ...
const TEXT_LABEL_MIN: usize = 24;
/// ... and at most what leaves room for its four figures (38 characters).
const TEXT_LABEL_MAX: usize = TEXT_WIDTH - 38;

/// The template environment: `report.html` (HTML auto-escaping, forced rather than
/// left to the name-based default) and `report.txt` (no escaping), both with a
/// formatter that shows control characters as `\xHH` before any escaping.
pub fn environment() -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Both end with a newline, as text files and pages do.
    env.set_keep_trailing_newline(true);
    env.set_auto_escape_callback(|name| {
        if name.ends_with(".html") {
            AutoEscape::Html
        } else {
            AutoEscape::None
        }
    });
    env.set_formatter(|out, state, value| {
        // Safe strings (the SVG charts) are written as they are; every other string
        // loses its control characters, then gets the template's escaping.
        if !value.is_safe() {
            if let Some(s) = value.as_str() {
                if let std::borrow::Cow::Owned(shown) = escape::terminal(s) {
                    return minijinja::escape_formatter(out, state, &Value::from(shown));
                }
            }
        }
        minijinja::escape_formatter(out, state, value)
    });
    env.add_filter("thousands", thousands);
    env.add_filter("percent", percent);
    env.add_filter("seconds", seconds);
    // Control characters are shown before cutting, so a cut string keeps its width.
    env.add_filter("fit", |s: String, width: usize| {
        fit(&escape::terminal(&s), width)
    });
    // `{{ text|wrap("note:", 2) }}` (text only): folded at spaces to the text's width,
    // the first line starting with the prefix, the others indented; no final newline.
    // Control characters are shown first, so the result is marked safe to keep its
    // newlines from the formatter; in HTML that would skip escaping, so it is refused.
    env.add_filter(
        "wrap",
        |state: &minijinja::State<'_, '_>, s: String, first: String, indent: usize| {
            if !matches!(state.auto_escape(), AutoEscape::None) {
                return Err(minijinja::Error::new(
                    minijinja::ErrorKind::InvalidOperation,
                    "wrap is for the text template",
                ));
            }
            let first = escape::terminal(&first);
            let text = wrap(&first, &escape::terminal(&s), TEXT_WIDTH, indent);
            Ok(Value::from_safe_string(
                text.trim_end_matches('\n').to_string(),
            ))
        },
    );
    env.add_filter("lpad", |v: Value, width: usize| {
        let s = v.to_string();
        let pad = width.saturating_sub(s.chars().count());
        format!("{}{s}", " ".repeat(pad))
    });
    env.add_filter("rpad", |v: Value, width: usize| {
        let s = v.to_string();
        let pad = width.saturating_sub(s.chars().count());
        format!("{s}{}", " ".repeat(pad))
    });
    env.add_template("report.html", include_str!("../templates/report.html"))
        .map_err(std::io::Error::other)?;
    env.add_template("report.txt", include_str!("../templates/report.txt"))
        .map_err(std::io::Error::other)?;
    Ok(env)
}

/// Seconds for people: `1.23s`, `45.6ms`, `-` when unknown.
fn seconds(x: Option<f64>) -> String {
    match x {
        Some(s) if s.abs() >= 1.0 => format!("{s:.2}s"),
        Some(s) => format!("{:.1}ms", s * 1000.0 + 0.0),
        None => "-".into(),
    }
}

/// What the templates see.
#[derive(Debug, Serialize)]
struct Page<'a> {
    inputs: &'a [InputReport],
    /// First and last request time (in the zone of the periods), when any line had one.
    span: Option<(String, String)>,
    by: &'static str,
    /// The zone of the periods and times shown.
    zone: &'a str,
    tls: &'a TlsReport,
    distribution_svg: Option<String>,
    tallies: Vec<TallyView>,
    trend: TrendView,
    /// The trend as the text shows it (at most [`TEXT_TREND_COLUMNS`] protocols).
    trend_text: TrendView,
    whatif: Vec<WhatifView<'a>>,
    /// Whether every what-if policy is a Mozilla profile (the sections say "profiles").
    whatif_mozilla: bool,
    /// Width of the text's policy column.
    label_width: usize,
    /// The inputs as one line of text (names, and errors).
    inputs_text: String,
    malformed: Vec<ReasonView>,
    malformed_total: u64,
    auth: Option<&'a AuthReport>,
    notes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct TallyView {
    key: &'static str,
    label: &'static str,
    count: u64,
    share: f64,
}

#[derive(Debug, Serialize)]
struct TrendView {
    svg: Option<String>,
    series: Vec<String>,
    rows: Vec<TrendRow>,
    untimed: u64,
}

#[derive(Debug, Serialize)]
struct TrendRow {
    period: String,
    total: u64,
    counts: Vec<u64>,
    shares: Vec<f64>,
}

#[derive(Debug, Serialize)]
struct WhatifView<'a> {
    /// The `--policy` argument.
    spec: &'a str,
    /// How the report names the policy (see [`policy_labels`]).
    label: String,
    report: &'a WhatifReport,
    /// (protocol, cipher, decision, requests) refused, most requests first.
    refused: Vec<(&'a str, &'a str, &'a str, u64)>,
}

#[derive(Debug, Serialize)]
struct ReasonView {
    reason: &'static str,
    count: u64,
}

/// One policy's what-if, with the `--policy` argument that named the policy.
#[derive(Debug, Clone, Copy)]
pub struct PolicyWhatif<'a> {
    /// The argument as given (`mozilla-modern`, a file, inline directives).
    pub spec: &'a str,
    /// What the policy would refuse.
    pub report: &'a WhatifReport,
}

/// What a report shows, from the analysis: every figure is already computed.
#[derive(Debug, Clone)]
pub struct ReportData<'a> {
    /// The distribution by request.
    pub tls: &'a TlsReport,
    /// One what-if per policy, in the order shown.
    pub whatifs: Vec<PolicyWhatif<'a>>,
    /// Requests per period and protocol.
    pub trend: &'a Trend,
    /// The first instant of each period of `trend`, in order, as text in the zone of
    /// the periods (RFC 3339); for the JSON.
    pub period_starts: Vec<String>,
    /// The period of the trend.
    pub by: Period,
    /// First and last request time, shown in the zone of the periods.
    pub span: Option<(String, String)>,
    /// The zone of the periods and times shown.
    pub zone: &'a str,
    /// The auth section.
    pub auth: Option<&'a AuthReport>,
    /// Notes for the page.
    pub notes: Vec<String>,
}

/// The page's text in `format`: `report.html` (self-contained HTML) or `report.txt`.
pub fn render(data: ReportData<'_>, template: &str) -> Result<String> {
    let page = Page::build(data)?;
    let env = environment()?;
    env.get_template(template)
        .and_then(|t| t.render(&page))
        .map_err(std::io::Error::other)
}

/// The report's figures as one JSON document (`tlsgap report --format json`): the
/// numbers the text and the page show, with stable keys (see the README).
pub fn json(data: ReportData<'_>, out: &mut dyn std::io::Write) -> Result<()> {
    let labels = policy_labels(&data.whatifs);
    let doc = ReportJson {
        inputs: &data.tls.inputs,
        span: data
            .span
            .as_ref()
            .map(|(first, last)| SpanJson { first, last }),
        by: period_name(data.by),
        zone: data.zone,
        lines: &data.tls.lines,
        distribution: data.tls,
        trend: TrendJson::of(data.trend, &data.period_starts),
        whatif: data
            .whatifs
            .iter()
            .zip(labels)
            .map(|(w, label)| WhatifJson {
                spec: w.spec,
                label,
                report: w.report,
            })
            .collect(),
        auth: data.auth,
        notes: all_notes(&data),
    };
    crate::emit::json(&doc, out)
}

#[derive(Debug, Serialize)]
struct ReportJson<'a> {
    inputs: &'a [InputReport],
    span: Option<SpanJson<'a>>,
    by: &'static str,
    zone: &'a str,
    lines: &'a tlsgap_agg::LinesReport,
    distribution: &'a TlsReport,
    trend: TrendJson,
    whatif: Vec<WhatifJson<'a>>,
    auth: Option<&'a AuthReport>,
    notes: Vec<String>,
}

#[derive(Debug, Serialize)]
struct SpanJson<'a> {
    first: &'a str,
    last: &'a str,
}

#[derive(Debug, Serialize)]
struct WhatifJson<'a> {
    spec: &'a str,
    label: String,
    #[serde(flatten)]
    report: &'a WhatifReport,
}

#[derive(Debug, Serialize)]
struct TrendJson {
    periods: Vec<PeriodJson>,
    untimed: u64,
}

#[derive(Debug, Serialize)]
struct PeriodJson {
    period: String,
    start: String,
    total: u64,
    protocols: Vec<ProtocolCountJson>,
}

#[derive(Debug, Serialize)]
struct ProtocolCountJson {
    protocol: String,
    count: u64,
    share: f64,
}

impl TrendJson {
    /// Every protocol of every period (the text and the page fold the rarest into
    /// `other`), by count descending, then name.
    fn of(trend: &Trend, starts: &[String]) -> TrendJson {
        let periods = trend
            .periods
            .iter()
            .enumerate()
            .map(|(i, (key, protocols))| {
                let total: u64 = protocols.values().sum();
                let mut rows: Vec<ProtocolCountJson> = protocols
                    .iter()
                    .map(|(p, &count)| ProtocolCountJson {
                        protocol: tlsgap_parser::lossless_text(p).into_owned(),
                        count,
                        share: if total == 0 {
                            0.0
                        } else {
                            count as f64 / total as f64
                        },
                    })
                    .collect();
                rows.sort_by(|a, b| {
                    b.count
                        .cmp(&a.count)
                        .then_with(|| a.protocol.cmp(&b.protocol))
                });
                PeriodJson {
                    period: key.label.clone(),
                    start: starts.get(i).cloned().unwrap_or_default(),
                    total,
                    protocols: rows,
                }
            })
            .collect();
        TrendJson {
            periods,
            untimed: trend.untimed,
        }
    }
}

/// The notes the report shows: the analysis's, and one for the what-ifs' estimate.
fn all_notes(data: &ReportData<'_>) -> Vec<String> {
    let mut notes = data.notes.clone();
    // The what-ifs share one set of clients: one note for them all.
    if let Some(e) = data.whatifs.iter().find_map(|w| w.report.estimate) {
        notes.push(format!(
            "{} (what-if clients; requests are exact)",
            e.note()
        ));
    }
    notes
}

/// How the report names each policy: a Mozilla profile by its title with the
/// guideline version (`mozilla-intermediate 6.0`), a file of directives by its path,
/// inline directives as `apache directives` / `nginx directives`; a label two policies
/// would share gets the policy's position (`apache directives #2`).
fn policy_labels(whatifs: &[PolicyWhatif<'_>]) -> Vec<String> {
    let base: Vec<String> = whatifs
        .iter()
        .map(|w| {
            let p = &w.report.policy;
            if p.version.is_some() {
                p.title.clone()
            } else if w.spec.contains(char::is_whitespace) {
                format!("{} directives", p.name)
            } else {
                w.spec.to_string()
            }
        })
        .collect();
    base.iter()
        .enumerate()
        .map(|(i, label)| {
            if base.iter().filter(|b| *b == label).count() > 1 {
                format!("{label} #{}", i + 1)
            } else {
                label.clone()
            }
        })
        .collect()
}

impl<'a> Page<'a> {
    fn build(data: ReportData<'a>) -> Result<Page<'a>> {
        let notes = all_notes(&data);
        let labels = policy_labels(&data.whatifs);
        let ReportData {
            tls,
            whatifs,
            trend,
            by,
            span,
            zone,
            auth,
            ..
        } = data;
        let s = &tls.summary;
        let tally = |key, label, t: &tlsgap_agg::Tally| TallyView {
            key,
            label,
            count: t.count,
            share: t.share,
        };
        let tallies = vec![
            tally(
                "legacy_protocols",
                "legacy protocols (SSLv2/3, TLS 1.0/1.1)",
                &s.legacy_protocols,
            ),
            tally("insecure_ciphers", "insecure ciphers", &s.insecure_ciphers),
            tally("weak_ciphers", "weak ciphers", &s.weak_ciphers),
            tally(
                "no_forward_secrecy",
                "without forward secrecy",
                &s.no_forward_secrecy,
            ),
            tally("no_aead", "without AEAD", &s.no_aead),
            tally("unknown", "unknown protocol or cipher", &s.unknown),
        ];
        let whatif_mozilla = whatifs.iter().all(|w| w.report.policy.version.is_some());
        let label_width = labels
            .iter()
            .map(|l| escape::terminal(l).chars().count())
            .max()
            .unwrap_or(0)
            .clamp(TEXT_LABEL_MIN, TEXT_LABEL_MAX);
        let whatif = whatifs
            .iter()
            .zip(labels)
            .map(|(w, label)| {
                let report = w.report;
                let mut refused: Vec<_> = report
                    .ciphers
                    .iter()
                    .filter(|c| c.decision.starts_with("refused"))
                    .map(|c| {
                        (
                            c.protocol.as_str(),
                            c.cipher.as_str(),
                            c.decision,
                            c.requests,
                        )
                    })
                    .collect();
                refused.sort_by(|a, b| b.3.cmp(&a.3).then_with(|| (a.0, a.1).cmp(&(b.0, b.1))));
                WhatifView {
                    spec: w.spec,
                    label,
                    report,
                    refused,
                }
            })
            .collect();
        let malformed = Reason::ALL
            .iter()
            .map(|r| ReasonView {
                reason: r.as_str(),
                count: tls
                    .lines
                    .malformed_by_reason
                    .get(r.as_str())
                    .copied()
                    .unwrap_or(0),
            })
            .collect();
        Ok(Page {
            inputs: &tls.inputs,
            span,
            by: period_name(by),
            zone,
            tls,
            distribution_svg: distribution_svg(tls)?,
            tallies,
            trend: trend_view(trend, by, None)?,
            trend_text: trend_view(trend, by, Some(TEXT_TREND_COLUMNS))?,
            whatif,
            whatif_mozilla,
            label_width,
            inputs_text: inputs_text(&tls.inputs),
            malformed,
            malformed_total: tls.lines.malformed,
            auth,
            notes,
        })
    }
}

fn period_name(by: Period) -> &'static str {
    by.as_str()
}

/// `a.log, b.log [error: ...]`: the inputs as the text's first line lists them.
fn inputs_text(inputs: &[InputReport]) -> String {
    let names: Vec<String> = inputs
        .iter()
        .map(|i| {
            let mut name = if i.name == "-" { "stdin" } else { &i.name }.to_string();
            if let Some(m) = i.malformed_to_name(inputs.len()) {
                name.push_str(&format!(" [{m} malformed]"));
            }
            if let Some(e) = &i.error {
                name.push_str(&format!(" [error: {e}]"));
            }
            name
        })
        .collect();
    names.join(", ")
}

/// A label from a log, fit for a chart: control characters made visible, length
/// bounded. Markup needs nothing here: plotters' SVG backend escapes `<`, `>`, `&`,
/// `"` and `'` in every text it writes (see `chart_labels_are_escaped`).
fn chart_label(s: &str) -> String {
    if s.is_empty() {
        return "(none)".into();
    }
    fit(&escape::terminal(s), LABEL_CHARS)
}

const GREY: RGBColor = RGBColor(0x99, 0x99, 0x99);
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x76, 0x2a, 0x83),
    RGBColor(0x35, 0x97, 0x8f),
    RGBColor(0xbf, 0x81, 0x2d),
    RGBColor(0x54, 0x27, 0x88),
    RGBColor(0x8c, 0x51, 0x0a),
    RGBColor(0x01, 0x66, 0x5e),
];

fn verdict_color(v: Verdict) -> RGBColor {
    match v {
        Verdict::Recommended => RGBColor(0x1b, 0x78, 0x37),
        Verdict::Secure => RGBColor(0x45, 0x75, 0xb4),
        Verdict::Weak => RGBColor(0xf4, 0x8c, 0x2e),
        Verdict::Insecure => RGBColor(0xc6, 0x28, 0x28),
        Verdict::Unknown => GREY,
    }
}

fn protocol_color(name: &str, i: usize) -> RGBColor {
    match name {
        "TLSv1.3" => RGBColor(0x1b, 0x78, 0x37),
        "TLSv1.2" => RGBColor(0x45, 0x75, 0xb4),
        "TLSv1.1" => RGBColor(0xfd, 0xae, 0x61),
        "TLSv1" => RGBColor(0xf4, 0x6d, 0x43),
        "SSLv3" => RGBColor(0xd7, 0x30, 0x27),
        "SSLv2" => RGBColor(0xa5, 0x00, 0x26),
        "other" => GREY,
        _ => PALETTE[i % PALETTE.len()],
    }
}

fn chart_error(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(format!("drawing a chart: {e}"))
}

/// SVG for inlining in HTML, where the namespace is implied: dropping the attribute
/// keeps the page free of URLs, so a test can tell that it fetches nothing.
fn inline(svg: String) -> String {
    svg.replacen(" xmlns=\"http://www.w3.org/2000/svg\"", "", 1)
}

/// Horizontal bars: TLS requests per protocol, coloured by the protocol's verdict.
fn distribution_svg(tls: &TlsReport) -> Result<Option<String>> {
    if tls.total == 0 {
        return Ok(None);
    }
    let mut bars: Vec<(String, u64, RGBColor)> = tls
        .protocols
        .iter()
        .take(CHART_BARS)
        .map(|p| (chart_label(&p.protocol), p.count, verdict_color(p.verdict)))
        .collect();
    let rest: u64 = tls.protocols.iter().skip(CHART_BARS).map(|p| p.count).sum();
    if rest > 0 {
        bars.push(("other".into(), rest, GREY));
    }
    let n = bars.len();
    let max = bars.iter().map(|b| b.1).max().unwrap_or(1).max(1);
    let height = 70 + 34 * u32::try_from(n).unwrap_or(1);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, height)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(210)
            .build_cartesian_2d(0u64..max + max / 10 + 1, (0..n).into_segmented())
            .map_err(chart_error)?;
        // Row 0 is at the bottom: the most frequent protocol goes on top.
        let label = |v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(row) => n
                .checked_sub(row + 1)
                .and_then(|i| bars.get(i))
                .map(|b| b.0.clone())
                .unwrap_or_default(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(WHITE)
            .y_labels(n)
            .y_label_formatter(&label)
            .x_label_formatter(&|x| thousands(*x))
            .x_desc("TLS requests")
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(chart_error)?;
        chart
            .draw_series(bars.iter().enumerate().map(|(i, (_, count, color))| {
                let row = n - 1 - i;
                let mut bar = Rectangle::new(
                    [
                        (0, SegmentValue::Exact(row)),
                        (*count, SegmentValue::Exact(row + 1)),
                    ],
                    color.filled(),
                );
                bar.set_margin(5, 5, 0, 0);
                bar
            }))
            .map_err(chart_error)?;
        root.present().map_err(chart_error)?;
    }
    Ok(Some(inline(svg)))
}

/// The trend's table (and chart): with `columns: None` the [`TREND_SERIES`] most
/// frequent protocols and `other` (the page); with `Some(n)` at most `n` columns, the
/// last of them `other` when there are more protocols (the text; no chart).
fn trend_view(trend: &Trend, by: Period, columns: Option<usize>) -> Result<TrendView> {
    let mut totals: FxHashMap<&[u8], u64> = FxHashMap::default();
    for protocols in trend.periods.values() {
        for (p, n) in protocols {
            *totals.entry(p).or_default() += n;
        }
    }
    let mut order: Vec<(&[u8], u64)> = totals.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let keep = match columns {
        None => TREND_SERIES,
        Some(n) if order.len() <= n => n,
        Some(n) => n.saturating_sub(1),
    };
    let named: Vec<&[u8]> = order.iter().take(keep).map(|x| x.0).collect();
    let mut series: Vec<String> = named
        .iter()
        .map(|p| match tlsgap_parser::lossless_text(p) {
            s if s.is_empty() => "(none)".to_string(),
            s => s.into_owned(),
        })
        .collect();
    let other = order.len() > keep;
    if other {
        series.push("other".into());
    }
    let rows: Vec<TrendRow> = trend
        .periods
        .iter()
        .map(|(key, protocols)| {
            let mut counts = vec![0u64; series.len()];
            for (p, &n) in protocols {
                let slot = named
                    .iter()
                    .position(|q| *q == p.as_ref())
                    .unwrap_or(series.len().saturating_sub(1));
                if let Some(c) = counts.get_mut(slot) {
                    *c += n;
                }
            }
            let total: u64 = counts.iter().sum();
            let shares = counts
                .iter()
                .map(|&c| {
                    if total == 0 {
                        0.0
                    } else {
                        c as f64 / total as f64
                    }
                })
                .collect();
            TrendRow {
                period: key.label.clone(),
                total,
                counts,
                shares,
            }
        })
        .collect();
    let svg = if rows.is_empty() || columns.is_some() {
        None
    } else {
        Some(trend_svg(&series, &rows, by)?)
    };
    Ok(TrendView {
        svg,
        series,
        rows,
        untimed: trend.untimed,
    })
}

/// Stacked areas: each protocol's share of the period's TLS requests, as steps (a
/// period is an interval, and one period alone still draws).
fn trend_svg(series: &[String], rows: &[TrendRow], by: Period) -> Result<String> {
    let n = i64::try_from(rows.len()).unwrap_or(i64::MAX);
    let colors: Vec<RGBColor> = series
        .iter()
        .enumerate()
        .map(|(i, s)| protocol_color(s, i))
        .collect();
    let max_labels = match by {
        Period::Day => 8,
        Period::Hour => 5,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (960, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(chart_error)?;
        let (plot, legend) = root.split_horizontally(760);
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(36)
            .y_label_area_size(64)
            .build_cartesian_2d(0i64..n, 0f64..100f64)
            .map_err(chart_error)?;
        chart
            .configure_mesh()
            .x_labels(rows.len().min(max_labels))
            .x_label_formatter(&|x| {
                usize::try_from(*x)
                    .ok()
                    .and_then(|i| rows.get(i))
                    .map(|r| r.period.clone())
                    .unwrap_or_default()
            })
            .y_label_formatter(&|y| format!("{y:.0}%"))
            .y_desc("share of TLS requests")
            .label_style(("sans-serif", 15))
            .draw()
            .map_err(chart_error)?;
        // Each series is filled from 0 up to the sum of the shares below and its own;
        // drawing the tallest first leaves each band its own colour.
        for k in (0..series.len()).rev() {
            let color = colors.get(k).copied().unwrap_or(GREY);
            let points: Vec<(i64, f64)> = rows
                .iter()
                .zip(0i64..)
                .flat_map(|(r, i)| {
                    let top = r.shares.iter().take(k + 1).sum::<f64>() * 100.0;
                    [(i, top), (i + 1, top)]
                })
                .collect();
            chart
                .draw_series(AreaSeries::new(points, 0.0, color.mix(0.9)).border_style(color))
                .map_err(chart_error)?;
        }
        // The legend, top band first.
        for (slot, k) in (0..series.len()).rev().enumerate() {
            let y = 20 + 28 * i32::try_from(slot).unwrap_or(0);
            let color = colors.get(k).copied().unwrap_or(GREY);
            let name = series.get(k).map_or("", String::as_str);
            legend
                .draw(&Rectangle::new([(12, y), (30, y + 18)], color.filled()))
                .map_err(chart_error)?;
            legend
                .draw(&Text::new(
                    chart_label(name),
                    (38, y + 2),
                    ("sans-serif", 15).into_font(),
                ))
                .map_err(chart_error)?;
        }
        root.present().map_err(chart_error)?;
    }
    Ok(inline(svg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsgap_agg::trend::PeriodKey;
    use tlsgap_agg::whatif::WhatifAgg;
    use tlsgap_agg::{ClientKey, LineStats};
    use tlsgap_ciphers::policy::{ConfigOptions, Policy};

    fn whatif(policy: &Policy) -> WhatifReport {
        let mut agg = WhatifAgg::new();
        agg.add(
            Some(b"203.0.113.7"),
            Some(b"curl/8"),
            Some(b"TLSv1"),
            Some(b"AES128-SHA"),
        );
        agg.add(
            Some(b"203.0.113.8"),
            Some(b"curl/8"),
            Some(b"TLSv1.3"),
            Some(b"TLS_AES_128_GCM_SHA256"),
        );
        agg.report(
            policy,
            ClientKey::AddrUa,
            &mut |_| tlsgap_agg::whatif::ClientKind::Library,
            10,
            &LineStats::default(),
            Vec::new(),
            None,
        )
    }

    /// The inputs line names, among several inputs, those that hold malformed lines
    /// (one input: the malformed summary says it all) and those that failed.
    #[test]
    fn the_inputs_line_names_the_ones_holding_malformed_lines() {
        let input = |name: &str, malformed, error: Option<&str>| InputReport {
            name: name.into(),
            lines: 10,
            malformed: Some(malformed),
            error: error.map(str::to_string),
        };
        assert_eq!(inputs_text(&[input("a.log", 3, None)]), "a.log");
        assert_eq!(
            inputs_text(&[
                input("a.log", 0, None),
                input("-", 2, None),
                input("c.log.gz", 1, Some("truncated")),
            ]),
            "a.log, stdin [2 malformed], c.log.gz [1 malformed] [error: truncated]"
        );
    }

    #[test]
    fn policies_are_labelled_apart() {
        let directives = |text: &str| {
            Policy::from_config_with(
                text,
                ConfigOptions::default(),
                tlsgap_ciphers::catalogue::all(),
            )
            .unwrap()
        };
        let inline = "SSLProtocol -all +TLSv1.2";
        let reports = [
            whatif(&Policy::mozilla("mozilla-intermediate").unwrap()),
            whatif(&directives(inline)),
            whatif(&directives("SSLProtocol -all +TLSv1.3")),
            whatif(&directives(inline)),
            whatif(&Policy::mozilla("mozilla-old-5.7").unwrap()),
        ];
        let specs = [
            "mozilla-intermediate",
            inline,
            "/etc/apache2/mods-enabled/ssl.conf",
            "SSLProtocol  -all +TLSv1.2",
            "mozilla-old-5.7",
        ];
        let whatifs: Vec<PolicyWhatif<'_>> = specs
            .iter()
            .zip(&reports)
            .map(|(spec, report)| PolicyWhatif { spec, report })
            .collect();
        assert_eq!(
            policy_labels(&whatifs),
            [
                "mozilla-intermediate 6.0",
                "apache directives #2",
                "/etc/apache2/mods-enabled/ssl.conf",
                "apache directives #4",
                "mozilla-old-5.7",
            ]
        );
        // The intermediate profile refuses the TLSv1 request; TLS 1.2 alone refuses
        // both.
        assert_eq!(reports[0].requests.refused, 1);
        assert_eq!(reports[1].requests.refused, 2);
    }

    #[test]
    fn the_text_trend_folds_protocols_beyond_five_columns() {
        let mut trend = tlsgap_agg::trend::TrendCounter::default();
        let key = |s: i64| PeriodKey {
            start_us: s - s % 86_400_000_000,
            label: "2026-11-21".into(),
        };
        let protocols = [
            "TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1", "SSLv3", "SSLv2", "x",
        ];
        for (i, p) in protocols.iter().enumerate() {
            for _ in 0..(10 - i) {
                trend.add(Some(1_795_300_000_000_000), p.as_bytes(), key);
            }
        }
        let trend = trend.finish();
        let text = trend_view(&trend, Period::Day, Some(TEXT_TREND_COLUMNS)).unwrap();
        assert_eq!(
            text.series,
            ["TLSv1.3", "TLSv1.2", "TLSv1.1", "TLSv1", "other"]
        );
        assert_eq!(text.rows[0].counts, [10, 9, 8, 7, 6 + 5 + 4]);
        assert!(text.svg.is_none());
        let page = trend_view(&trend, Period::Day, None).unwrap();
        assert_eq!(page.series.len(), TREND_SERIES + 1);
        assert_eq!(page.rows[0].counts.iter().sum::<u64>(), 49);
        assert!(page.svg.is_some());
        // Five protocols fit as they are.
        let mut five = tlsgap_agg::trend::TrendCounter::default();
        for (i, p) in protocols[..5].iter().enumerate() {
            for _ in 0..(5 - i) {
                five.add(Some(1_795_300_000_000_000), p.as_bytes(), key);
            }
        }
        let five = five.finish();
        let text = trend_view(&five, Period::Day, Some(TEXT_TREND_COLUMNS)).unwrap();
        assert_eq!(text.series, protocols[..5]);
    }

    #[test]
    fn wrap_folds_text_and_is_refused_in_html() {
        let env = environment().unwrap();
        let v = minijinja::context! {
            n => "a b\u{1b}c ".repeat(30),
            user => "<u>\u{7}",
        };
        let text = env
            .render_named_str("t.txt", "{{ n|wrap(user ~ \":\", 2) }}", v.clone())
            .unwrap();
        assert!(text.starts_with("<u>\\x07: a b\\x1Bc a"), "{text}");
        assert!(text.lines().count() > 2);
        assert!(text.lines().all(|l| l.chars().count() <= TEXT_WIDTH));
        assert!(
            text.lines()
                .skip(1)
                .all(|l| l.starts_with("  ") && !l.starts_with("   ")),
            "{text}"
        );
        assert!(!text.chars().any(|c| c.is_control() && c != '\n'));
        assert!(env
            .render_named_str("t.html", "{{ n|wrap(\"x\", 2) }}", v)
            .is_err());
    }

    #[test]
    fn chart_labels_are_escaped() {
        let hostile = "<script>alert(1)</script>&\"'\u{1b}";
        let series = vec![hostile.to_string()];
        let rows = vec![TrendRow {
            period: "2026-11-21".into(),
            total: 1,
            counts: vec![1],
            shares: vec![1.0],
        }];
        let svg = trend_svg(&series, &rows, Period::Day).unwrap();
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        assert!(!svg.contains("<script"), "{svg}");
        assert!(!svg.contains('\u{1b}'));
        assert!(svg.starts_with("<svg"));
        assert!(!svg.contains("http"));
    }

    #[test]
    fn html_templates_escape_and_text_templates_show_controls() {
        let env = environment().unwrap();
        let v = minijinja::context! { x => "<b onclick=\"x\">&\u{1b}[2J" };
        let html = env
            .render_named_str("t.html", "{{ x }}", v.clone())
            .unwrap();
        assert_eq!(html, "&lt;b onclick=&quot;x&quot;&gt;&amp;\\x1B[2J");
        let text = env.render_named_str("t.txt", "{{ x }}", v).unwrap();
        assert_eq!(text, "<b onclick=\"x\">&\\x1B[2J");
    }
}
