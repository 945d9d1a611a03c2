//! `tlsgap report`: one self-contained HTML page, and a plain-text version for cron
//! mail, with everything the other commands answer about a set of logs.
//!
//! One pass over the logs collects, per block, the protocol/cipher distribution
//! ([`TlsAgg`]), the what-if evidence ([`WhatifAgg`]), requests per period and protocol
//! ([`Trend`]), line counts and, when `--htpasswd`/`--traces` are given, the auth
//! evidence. The page then shows: `#distribution`, `#trend`, `#verdicts`, `#whatif`
//! (the three Mozilla profiles), `#malformed` and `#auth`.
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

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};
use plotters::prelude::*;
use rustc_hash::FxHashMap;
use serde::Serialize;
use tlsgap_agg::authjoin::{AuthReport, Request};
use tlsgap_agg::whatif::{WhatifAgg, WhatifReport};
use tlsgap_agg::{CountMode, InputReport, LineStats, TlsAgg, TlsReport, Verdict};
use tlsgap_ciphers::policy::Policy;
use tlsgap_parser::{Format, Reason, Role};

use crate::auth_cmd::{self, LogEvidence, RequestFields};
use crate::cli::{AuthArgs, InputArgs, InputConfig, TlsFormat};
use crate::common::{self, parse_block, BadLineSink, LinePartial};
use crate::emit::{fit, percent, thousands};
use crate::engine::{Block, Job};
use crate::escape;
use crate::output;
use crate::trend::Trend;
use crate::uakind::Classifier;
use crate::window::{resolve_tz, Period, Zone};

/// The Mozilla profiles every report tests.
pub const PROFILES: [&str; 3] = ["mozilla-modern", "mozilla-intermediate", "mozilla-old"];

/// How many refused User-Agents each what-if lists.
const TOP_USER_AGENTS: usize = 10;
/// Protocols drawn as their own series in the trend chart; the rest are "other".
const TREND_SERIES: usize = 6;
/// Protocols drawn as their own bar in the distribution chart.
const CHART_BARS: usize = 12;
/// Longest label drawn in a chart (characters).
const LABEL_CHARS: usize = 28;

/// `tlsgap report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Write the HTML page to FILE (atomically).
    ///
    /// One self-contained file: inline CSS and SVG charts, no scripts, no fonts or
    /// anything else fetched from elsewhere.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,

    /// Print the plain-text report (to standard output, or to `-o PATH`).
    ///
    /// The text is written whenever --text or -o is given, and whenever --html is not:
    /// `tlsgap report access.log` in a crontab mails the text; `--html FILE` alone
    /// writes only the page.
    #[arg(long)]
    pub text: bool,

    /// The htpasswd file: add the per-user authentication cost (section `auth`).
    #[arg(long, value_name = "FILE")]
    pub htpasswd: Option<PathBuf>,

    /// strace output of the web server's workers: add the observed auth gaps.
    ///
    /// Takes one or more files (or a quoted `prefix.*`); put the access logs before
    /// it, or after `--`.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub traces: Vec<PathBuf>,

    /// Period of the protocol-share chart.
    ///
    /// Calendar days or wall-clock hours in --tz (default: the local zone), so a day
    /// lasts 23 or 25 hours across a daylight-saving change.
    #[arg(long, value_enum, value_name = "PERIOD", default_value_t = Period::Day)]
    pub by: Period,
}

struct ReportJob<'f> {
    format: &'f Format,
    keep_bad: bool,
    by: Period,
    zone: &'f Zone,
    client: Option<usize>,
    user_agent: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
    whatif: bool,
    auth: bool,
}

struct ReportPartial {
    lines: LinePartial,
    tls: TlsAgg,
    whatif: WhatifAgg,
    trend: Trend,
    requests: Vec<Request>,
}

crate::has_lines!(ReportPartial);

impl Job for ReportJob<'_> {
    type Out = ReportPartial;

    fn run(&self, block: &Block) -> ReportPartial {
        let mut tls = TlsAgg::new(CountMode::Requests);
        let mut whatif = WhatifAgg::new();
        let mut trend = Trend::default();
        let mut requests = Vec::new();
        let fields = self.auth.then(|| RequestFields::new(self.format));
        let lines = parse_block(self.format, block, self.keep_bad, |_, rec| {
            let client = self.client.and_then(|i| rec.raw(i));
            let protocol = self.protocol.and_then(|i| rec.raw(i));
            let cipher = self.cipher.and_then(|i| rec.raw(i));
            tls.add(client, protocol, cipher);
            if self.whatif {
                let ua = self.user_agent.and_then(|i| rec.value(i));
                whatif.add(client, ua.as_deref(), protocol, cipher);
            }
            let at = rec.time().map(|t| t.unix_micros());
            if let Some(at) = at {
                trend.seen(at);
            }
            // The same rule as `TlsAgg::add`: no protocol and no cipher is plain HTTP.
            let protocol = protocol.filter(|p| !p.is_empty());
            if protocol.is_some() || cipher.is_some_and(|c| !c.is_empty()) {
                trend.add(self.by, self.zone, at, protocol.unwrap_or(b""));
            }
            if let Some(f) = &fields {
                requests.push(f.request(rec));
            }
        });
        ReportPartial {
            lines,
            tls,
            whatif,
            trend,
            requests,
        }
    }
}

/// Run `tlsgap report`.
pub fn run(args: ReportArgs) -> Result<ExitCode> {
    let ReportArgs {
        input,
        html,
        text,
        htpasswd,
        traces,
        by,
    } = args;
    // `-o -` counts as asking for the text (on stdout).
    let want_text = text || input.output.is_some() || html.is_none();
    let cfg = InputConfig::from(input);
    if let (Some(h), Some(o)) = (&html, &cfg.output) {
        if h == o {
            bail!("--html and -o name the same file: the text would overwrite the page");
        }
    }
    let prepared = common::prepare(&cfg)?;
    let format = prepared.format.clone();
    if !format.has(Role::TlsProtocol) && !format.has(Role::TlsCipher) {
        bail!(
            "the log format has no TLS protocol or cipher field: add %{{SSL_PROTOCOL}}x \
             %{{SSL_CIPHER}}x (Apache) or $ssl_protocol $ssl_cipher (nginx) to the server's \
             format, or pass the right one with --log-format"
        );
    }
    let mut notes = Vec::new();
    let whatif = format.has(Role::TlsProtocol) && format.has(Role::TlsCipher);
    if !whatif {
        notes.push(
            "the what-if needs both the TLS protocol and the cipher in the log; this format \
             has only one"
                .to_string(),
        );
    }
    let wants_auth = htpasswd.is_some() || !traces.is_empty();
    let auth_from_log = wants_auth && format.has(Role::User);
    if wants_auth && !auth_from_log {
        notes.push(
            "the log format has no user field (%u / $remote_user): the auth section uses \
             only the htpasswd file and the traces"
                .to_string(),
        );
    }
    // The zone of the periods: `--tz`, else the local one.
    let zone = resolve_tz(cfg.window.tz.as_deref())?;
    let mut bad = BadLineSink::new(&cfg)?;
    let job = ReportJob {
        format: &format,
        keep_bad: bad.wants_lines(),
        by,
        zone: &zone,
        client: format.role(Role::Client),
        user_agent: format.role(Role::UserAgent),
        protocol: format.role(Role::TlsProtocol),
        cipher: format.role(Role::TlsCipher),
        whatif,
        auth: auth_from_log,
    };
    let mut tls = TlsAgg::new(CountMode::Requests);
    let mut whatif_agg = WhatifAgg::new();
    let mut trend = Trend::default();
    let mut requests = Vec::new();
    let mut stats = LineStats::default();
    let outcomes = common::run_job(&cfg, prepared, &job, &mut bad, &mut stats, |_, p| {
        tls.merge(p.tls);
        whatif_agg.merge(p.whatif);
        trend.merge(p.trend);
        requests.extend(p.requests);
        Ok(())
    })?;
    let inputs = common::input_reports(&outcomes);
    if bad.report_strict_hit() {
        return Ok(ExitCode::from(1));
    }
    let summary = common::summary_line(&stats, &inputs);
    let tls_report = tls.report(&stats, inputs.clone());

    let whatifs = if whatif {
        let classifier = Classifier::new()?;
        PROFILES
            .iter()
            .map(|name| {
                let policy = Policy::mozilla(name).map_err(|e| anyhow!("{name}: {e}"))?;
                Ok(whatif_agg.report(
                    &policy,
                    &mut |ua| classifier.kind(ua),
                    TOP_USER_AGENTS,
                    &stats,
                    inputs.clone(),
                ))
            })
            .collect::<Result<Vec<_>>>()?
    } else {
        Vec::new()
    };

    let mut auth_failed = false;
    let auth = if wants_auth {
        let auth_args = AuthArgs {
            htpasswd,
            log: Vec::new(),
            log_format: cfg.log_format.clone(),
            traces,
            trace_tz: None,
            threshold: 0.05,
            min_gap: 0.01,
            format: TlsFormat::Table,
            output: None,
            quiet: cfg.quiet,
            // The report's own window already applied to the requests it collected.
            window: Default::default(),
        };
        let logs = auth_from_log.then(|| LogEvidence {
            requests,
            stats: stats.clone(),
            failed: false,
        });
        let (report, failed) = auth_cmd::build_report(&auth_args, logs)?;
        auth_failed = failed;
        Some(report)
    } else {
        None
    };

    let page = Page::build(
        &tls_report,
        &whatifs,
        &trend,
        by,
        &zone,
        auth.as_ref(),
        notes,
    )?;
    let env = environment()?;
    if let Some(path) = &html {
        let rendered = env.get_template("report.html")?.render(&page)?;
        let mut out = output::open(Some(path))?;
        out.write_all(rendered.as_bytes())?;
        out.finish()?;
    }
    if want_text {
        let rendered = env.get_template("report.txt")?.render(&page)?;
        let mut out = output::open(cfg.output.as_deref())?;
        out.write_all(rendered.as_bytes())?;
        out.finish()?;
    }
    if !cfg.quiet {
        eprintln!("tlsgap: {summary}");
    }
    Ok(ExitCode::from(
        common::exit_code(&inputs, false) | u8::from(auth_failed),
    ))
}

/// The template environment: `report.html` (HTML auto-escaping, forced rather than
/// left to the name-based default) and `report.txt` (no escaping), both with a
/// formatter that shows control characters as `\xHH` before any escaping.
pub fn environment() -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
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
    env.add_filter("fit", |s: String, width: usize| fit(&s, width));
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
    env.add_template("report.html", include_str!("../templates/report.html"))?;
    env.add_template("report.txt", include_str!("../templates/report.txt"))?;
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
    zone: &'static str,
    tls: &'a TlsReport,
    distribution_svg: Option<String>,
    tallies: Vec<TallyView>,
    trend: TrendView,
    whatif: Vec<WhatifView<'a>>,
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
    report: &'a WhatifReport,
    /// (protocol, cipher, decision, requests) refused, most requests first.
    refused: Vec<(&'a str, &'a str, &'a str, u64)>,
}

#[derive(Debug, Serialize)]
struct ReasonView {
    reason: &'static str,
    count: u64,
}

impl<'a> Page<'a> {
    fn build(
        tls: &'a TlsReport,
        whatifs: &'a [WhatifReport],
        trend: &Trend,
        by: Period,
        zone: &Zone,
        auth: Option<&'a AuthReport>,
        notes: Vec<String>,
    ) -> Result<Page<'a>> {
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
        let whatif = whatifs
            .iter()
            .map(|report| {
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
                WhatifView { report, refused }
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
        let span = match (trend.first_us, trend.last_us) {
            (Some(f), Some(l)) => Some((zone.format_micros(f), zone.format_micros(l))),
            _ => None,
        };
        Ok(Page {
            inputs: &tls.inputs,
            span,
            by: period_name(by),
            zone: zone.name(),
            tls,
            distribution_svg: distribution_svg(tls)?,
            tallies,
            trend: trend_view(trend, by)?,
            whatif,
            malformed,
            malformed_total: tls.lines.malformed,
            auth,
            notes,
        })
    }
}

fn period_name(by: Period) -> &'static str {
    match by {
        Period::Day => "day",
        Period::Hour => "hour",
    }
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

fn chart_error(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow!("drawing a chart: {e}")
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

fn trend_view(trend: &Trend, by: Period) -> Result<TrendView> {
    let mut totals: FxHashMap<&[u8], u64> = FxHashMap::default();
    for protocols in trend.periods.values() {
        for (p, n) in protocols {
            *totals.entry(p).or_default() += n;
        }
    }
    let mut order: Vec<(&[u8], u64)> = totals.into_iter().collect();
    order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    let named: Vec<&[u8]> = order.iter().take(TREND_SERIES).map(|x| x.0).collect();
    let mut series: Vec<String> = named
        .iter()
        .map(|p| match tlsgap_parser::lossless_text(p) {
            s if s.is_empty() => "(none)".to_string(),
            s => s.into_owned(),
        })
        .collect();
    let other = order.len() > TREND_SERIES;
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
    let svg = if rows.is_empty() {
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
