//! The protocol and cipher distribution (`tlsgap tls`, and the figures `check` judges).

use tlsgap_agg::{Cell, CellType, ClientKey, CountMode, Rows, TlsAgg, TlsReport, Totals};
use tlsgap_parser::Role;

use crate::lines::{self, has_lines, BadLineSink, LineLoop, LinePartial, RunSummary};
use crate::runner::{Block, Job};
use crate::state::TotalsStart;
use crate::window::{period_key, Period, Zone};
use crate::{Result, RunOptions};
use tlsgap_agg::pq::GroupsAgg;
use tlsgap_agg::trend::{Trend, TrendCounter};

/// What to count.
#[derive(Debug, Clone)]
pub struct TlsOptions {
    /// Requests, or distinct clients (their earliest TLS request decides).
    pub count: CountMode,
    /// What one client is, with `clients`.
    pub client_key: ClientKey,
    /// Also the requests per protocol per period, local in the zone.
    pub by: Option<(Period, Zone)>,
}

impl Default for TlsOptions {
    fn default() -> TlsOptions {
        TlsOptions {
            count: CountMode::Requests,
            client_key: ClientKey::default(),
            by: None,
        }
    }
}

/// What the run found.
#[derive(Debug)]
pub struct TlsOutcome {
    /// The distribution (with line counts and inputs).
    pub report: TlsReport,
    /// Line counts, inputs, `--strict`.
    pub run: RunSummary,
    /// The newest line's time, µs since the epoch.
    pub newest_us: Option<i64>,
    /// With [`TlsOptions::by`]: one row per period and protocol ([`PERIOD_COLUMNS`]).
    pub periods: Option<Rows>,
    /// Requests (counted one by one, in either mode) and lines: of the lines this run
    /// read, or with `--state` of every line read under the state since
    /// [`TlsOutcome::counters_created`].
    pub counters: Totals,
    /// With `--state`: Unix time at which the state's counters started from zero.
    pub counters_created: Option<f64>,
}

struct TlsJob<'f> {
    lines: LineLoop<'f>,
    mode: CountMode,
    client_key: ClientKey,
    client: Option<usize>,
    user_agent: Option<usize>,
    protocol: Option<usize>,
    cipher: Option<usize>,
    by: Option<&'f (Period, Zone)>,
    /// The negotiated and offered groups.
    groups: crate::groups::GroupColumns,
}

struct TlsPartial {
    lines: LinePartial,
    agg: TlsAgg,
    newest_us: Option<i64>,
    periods: Trend,
    groups: GroupsAgg,
}

has_lines!(TlsPartial);

impl Job for TlsJob<'_> {
    type Out = TlsPartial;
    type Worker = ();

    fn lines_of(&self, out: &TlsPartial) -> Option<u64> {
        Some(out.lines.stats.total)
    }

    fn worker(&self) {}

    fn run(&self, block: &Block, (): &mut ()) -> TlsPartial {
        let mut agg = TlsAgg::new(self.mode);
        let mut newest_us: Option<i64> = None;
        let mut periods = TrendCounter::default();
        let mut scratch = Vec::new();
        let mut groups = GroupsAgg::default();
        let mut key = Vec::new();
        let lines = self.lines.parse_block(block, |_, rec| {
            self.groups.add(&mut groups, rec, &mut key);
            let protocol = self.protocol.and_then(|i| rec.raw(i));
            let client = self.client.and_then(|i| rec.raw(i));
            let client = match (self.mode, client) {
                (CountMode::Clients, Some(addr)) => Some(self.client_key.key(
                    &mut scratch,
                    addr,
                    self.user_agent.and_then(|i| rec.raw(i)),
                ) as &[u8]),
                _ => client,
            };
            let at = rec.time().map(|t| t.unix_micros());
            agg.add_at(client, protocol, self.cipher.and_then(|i| rec.raw(i)), at);
            let Some(us) = at else { return };
            newest_us = Some(newest_us.map_or(us, |n| n.max(us)));
            if let Some((period, zone)) = self.by {
                let name = protocol.filter(|p| !p.is_empty() && *p != b"-");
                periods.add(Some(us), name.unwrap_or(b"plain"), |s| {
                    period_key(s, *period, zone)
                });
            }
        });
        TlsPartial {
            lines,
            agg,
            newest_us,
            periods: periods.finish(),
            groups,
        }
    }
}

/// The client key a run can use: `addr+ua` needs a User-Agent field; without one it is
/// `addr`, with a note.
pub(crate) fn effective_client_key(
    wanted: ClientKey,
    format: &tlsgap_parser::Format,
    count: CountMode,
    run: &RunOptions,
) -> ClientKey {
    if wanted == ClientKey::AddrUa && !format.has(Role::UserAgent) {
        if count == CountMode::Clients {
            run.notes.info(
                "the log format has no User-Agent: clients are counted by address alone                  (--client-key addr)"
                    .to_string(),
            );
        }
        return ClientKey::Addr;
    }
    wanted
}

/// The error for a format without TLS fields.
pub(crate) fn no_tls_fields() -> crate::Error {
    crate::err!(
        "the log format has no TLS protocol or cipher field: add %{{SSL_PROTOCOL}}x \
         %{{SSL_CIPHER}}x (Apache) or $ssl_protocol $ssl_cipher (nginx) to the server's \
         format, or pass the right one with --log-format"
    )
}

/// Open the inputs, settle the format and count. Errors: no input could be opened, a
/// bad format, or a format without TLS fields.
pub fn run(run: &RunOptions, opts: &TlsOptions) -> Result<TlsOutcome> {
    let prepared = lines::prepare(run)?;
    let format = prepared.format.clone();
    if !format.has(Role::TlsProtocol) && !format.has(Role::TlsCipher) {
        return Err(no_tls_fields());
    }
    let mut bad = BadLineSink::new(run)?;
    let window = prepared.window;
    let client_key = effective_client_key(opts.client_key, &format, opts.count, run);
    let job = TlsJob {
        lines: LineLoop::new(&format, window.as_ref(), &bad),
        mode: opts.count,
        client_key,
        client: format.role(Role::Client),
        user_agent: format.role(Role::UserAgent),
        protocol: format.role(Role::TlsProtocol),
        cipher: format.role(Role::TlsCipher),
        by: opts.by.as_ref(),
        groups: crate::groups::GroupColumns::of(&format, client_key),
    };
    let mut total = TlsAgg::with_memory_limit(opts.count, run.memory_limit);
    let mut newest_us: Option<i64> = None;
    let mut periods = Trend::default();
    let mut groups = GroupsAgg::default();
    let mut summary = lines::run_job(run, prepared, &job, &mut bad, |_, p| {
        total.merge(p.agg);
        groups.merge(p.groups);
        newest_us = newest_us.max(p.newest_us);
        periods.merge(p.periods);
        Ok(())
    })?;
    let run_totals = Totals::of_run(
        &summary.stats,
        Some(total.request_totals()),
        newest_us.map(|us| us as f64 / 1e6),
    );
    let (counters, counters_created) = match summary.state.as_mut() {
        None => (run_totals, None),
        Some(session) => {
            let (kept, start) = session.add_totals(&run_totals);
            if start == TotalsStart::Missing {
                run.notes.warn(format!(
                    "state file {}: it keeps no request and line counters (written by an \
                     older tlsgap, or by a command that does not count them): the counters \
                     start from this run's lines",
                    run.state
                        .as_ref()
                        .map_or_else(String::new, |s| s.path.display().to_string())
                ));
            }
            (kept.totals, Some(kept.created))
        }
    };
    let mut report = total.report(&summary.stats, summary.inputs.clone());
    if opts.count == CountMode::Clients {
        report.client_key = Some(client_key.as_str());
    }
    report.post_quantum = job.groups.report(&groups);
    // On standard error too, so that CSV, Parquet and Prometheus readers (whose
    // formats have no room for it) are told as well.
    if let Some(e) = &report.estimate {
        run.notes.warn(e.note());
    }
    let periods = opts
        .by
        .as_ref()
        .map(|(_, zone)| period_rows(&periods, zone));
    Ok(TlsOutcome {
        report,
        run: summary,
        newest_us,
        periods,
        counters,
        counters_created,
    })
}

/// Columns of the per-period rows.
pub const PERIOD_COLUMNS: [(&str, CellType); 5] = [
    ("period", CellType::Text),
    ("period_start", CellType::Text),
    ("protocol", CellType::Text),
    ("count", CellType::Int),
    ("share", CellType::Float),
];

/// One row per period and protocol (`plain` included), shares within the period.
pub(crate) fn period_rows(periods: &Trend, zone: &Zone) -> Rows {
    let mut rows = Rows::new(&PERIOD_COLUMNS);
    for (key, protocols) in &periods.periods {
        let total: u64 = protocols.values().sum();
        let mut sorted: Vec<(String, &u64)> = protocols
            .iter()
            .map(|(p, n)| (tlsgap_parser::lossless_text(p).into_owned(), n))
            .collect();
        sorted.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(&b.0)));
        for (name, n) in sorted {
            rows.push(vec![
                key.label.as_str().into(),
                zone.format_micros(key.start_us).into(),
                name.into(),
                (*n).into(),
                Cell::Float(if total == 0 {
                    0.0
                } else {
                    *n as f64 / total as f64
                }),
            ]);
        }
    }
    rows
}
