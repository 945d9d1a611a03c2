//! Command-line definitions (clap derive) and their translation into plain configs.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use tlsgap_agg::CountMode;
use tlsgap_engine::state::StateConfig;
use tlsgap_engine::window::Period;

/// TLS protocol/cipher analytics, policy what-ifs and slow-auth diagnosis (strace) for
/// Apache and nginx.
///
/// Reads access logs and strace output (plain, gzip, zstd or bzip2, detected by
/// content) from files or standard input: which TLS protocols and ciphers clients
/// negotiate, what a stricter policy would refuse, and why some requests are slow.
#[derive(Debug, Parser)]
#[command(name = "tlsgap", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Protocol and cipher distribution, with verdicts.
    ///
    /// Counts requests (or distinct clients) per TLS protocol and per cipher within
    /// each protocol. Plain-HTTP traffic is counted separately and always shown.
    Tls(TlsArgs),
    /// One row per parsed line (csv, ndjson or parquet).
    ///
    /// Columns: file, line, then the canonical columns the format carries (time,
    /// client, ident, user, request, method, target, http_version, status, bytes,
    /// referer, user_agent, tls_protocol, tls_cipher, duration_us, pid, vhost), then
    /// the format's other fields by name.
    Export(ExportArgs),
    /// What a TLS policy would refuse, by request, client and client kind.
    ///
    /// --policy is a Mozilla profile (mozilla-modern, mozilla-intermediate,
    /// mozilla-old), a file holding server directives as pasted from the config
    /// (Apache SSLProtocol/SSLCipherSuite, nginx ssl_protocols/ssl_ciphers), or such
    /// directives inline. Logs record the negotiated suite, so the figures are an upper
    /// bound of what would break.
    Whatif(WhatifArgs),
    /// Slow gaps between system calls in strace output, with their causes.
    ///
    /// Reads any strace text output (-f, -ff per-PID files, -t/-tt/-ttt, -r, -T, -y,
    /// -yy; plain or compressed; a quoted `prefix.*` pattern is expanded). Reports
    /// every gap of at least --min-gap with the calls around it, the files and sockets
    /// touched just before, and a cause (auth, cpu, io, blocked, ...). Recommended
    /// capture: strace -ff -ttt -T -yy -s 4096 -o DIR/trace -p PID...
    Gaps(GapsArgs),
    /// Per-user authentication cost: htpasswd schemes, access logs and traces.
    ///
    /// Apache's mod_authn_file verifies the password on every request, so users whose
    /// htpasswd entries are bcrypt with a high cost pay it on every page, stylesheet and
    /// image. From the htpasswd file alone: each user's scheme and the measured time to
    /// verify it here. With --log: requests and predicted CPU per user and day, and the
    /// extra latency against unauthenticated requests. With --traces (strace -ff -ttt
    /// -T -yy of the workers): the observed auth gaps, tied to users. Never prints a
    /// hash, a salt or an Authorization value.
    Auth(AuthArgs),
    /// One report of everything: an HTML page (--html FILE) and/or plain text or JSON.
    ///
    /// Protocol and cipher distribution, protocol share over time, verdict summary,
    /// what the three Mozilla profiles (or the --policy policies) would refuse,
    /// malformed lines, and with --htpasswd/--traces the per-user authentication cost
    /// and extra latency. The page is one self-contained file: inline CSS and SVG
    /// charts, no scripts, nothing fetched. The text (80 columns), or with --format json
    /// one JSON document of the same figures, goes to standard output (or -o) unless
    /// only --html is given.
    Report(ReportArgs),
    /// What the cipher-suite catalogue knows about suites.
    ///
    /// With names (OpenSSL, old alias or IANA), every fact about each: code, names,
    /// minimum protocol, key exchange, authentication, cipher, bits, MAC, forward
    /// secrecy, AEAD, export, IANA's recommendation and the verdict. Without names, the
    /// whole table, filtered with --verdict and --protocol. Exit 1 if a name is unknown.
    Ciphers(CiphersArgs),
    /// Monitoring plugin: exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, with perfdata.
    ///
    /// Prints a first line under 80 characters (`TLSGAP WARNING - legacy protocols
    /// 4.20% (warn 1%, crit 5%)`), the other figures one per line, then the counts and
    /// the perfdata after `|`. Shares are 0-1; a figure over its threshold (or out of
    /// its --metric range) raises the state. Unreadable input (a missing file, a
    /// truncated .gz, nothing parsed), a --timeout and usage errors are UNKNOWN.
    // The status line always goes to standard output: -o is refused, so not offered.
    #[command(mut_arg("output", |a| a.hide(true)))]
    Check(CheckArgs),
    /// The `tls` report over exported Parquet datasets, across hosts and days.
    ///
    /// Reads every *.parquet under the given directories (or matching a quoted glob),
    /// as written by `export --format parquet [--partition-by date]`, and counts the
    /// columns client, tls_protocol and tls_cipher as `tls` counts log lines.
    Merge(MergeArgs),
    /// TLS client fingerprints from logged ClientHello offers, with their User-Agents.
    ///
    /// Needs the offer in the log: nginx $ssl_ciphers and $ssl_curves (the
    /// nginx-ssl-full preset), or httpd trunk's SSL_CLIENTHELLO_* variables
    /// (SSLClientHelloVars On). Each request's offer gives a fingerprint: JA3 when
    /// version, suites, extensions, groups and EC point formats are all logged, else
    /// tlsgap's tg1 (suites and groups; see the README). Fingerprints are ranked by
    /// requests, with their distinct clients, User-Agents and their kinds, what was
    /// negotiated, whether a post-quantum group was offered, and a MIXED flag when one
    /// fingerprint is seen under browser and library User-Agents alike. With --policy,
    /// each offer is negotiated under the policy as OpenSSL would.
    Clients(ClientsArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    ///
    /// For example: `tlsgap completions bash > /etc/bash_completion.d/tlsgap`.
    Completions {
        /// The shell.
        #[arg(value_enum, value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), or write one page per subcommand, generated from
    /// these same definitions.
    ///
    /// For example: `tlsgap man > /usr/local/share/man/man1/tlsgap.1`, or
    /// `tlsgap man --dir /usr/local/share/man/man1` for `tlsgap.1`, `tlsgap-tls.1`,
    /// `tlsgap-whatif.1`, ... (`man tlsgap-tls`).
    Man {
        /// Write `tlsgap.1` and a `tlsgap-COMMAND.1` for every subcommand into DIR
        /// (which must exist) instead of printing the main page.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// Flags shared by every command that reads access logs.
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Access logs to read; `-` or none reads standard input.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Log format: a preset name, an Apache LogFormat or an nginx log_format.
    ///
    /// Presets: combined, common, vhost_combined, combinedssl, ssl_request,
    /// nginx-combined, nginx-ssl, nginx-ssl-full. `auto` tries the presets on the first lines and
    /// says which one fits. A whole `LogFormat "..." nick` line as pasted from
    /// httpd.conf, or `log_format name [escape=...] '...';` from nginx.conf, works too.
    #[arg(long, value_name = "FMT", default_value = "auto")]
    pub log_format: String,

    /// Write the result here instead of standard output (`-` = stdout).
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Worker threads (default: all cores). Plain files are read by the workers
    /// themselves, so `-j 1` keeps to one core; a pipe or a compressed input adds one
    /// thread that reads (and decompresses) it.
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Stop at the first malformed line, naming file, line and reason (exit code 1).
    #[arg(long)]
    pub strict: bool,

    /// Write malformed lines, verbatim with file, line number and reason, to PATH.
    ///
    /// Each record is FILE, LINE and REASON separated by tabs, a tab, then the line's
    /// bytes as they were, and a newline.
    #[arg(long, value_name = "PATH")]
    pub invalid_lines: Option<PathBuf>,

    /// No notes on standard error (detected format, summary line).
    #[arg(short, long)]
    pub quiet: bool,

    /// The line cap: a longer line is malformed (`too_long`); its first BYTES are kept
    /// for --invalid-lines and the rest is skipped, so memory stays flat on any input.
    ///
    /// A number of bytes, or with K, M or G (powers of 1024). Default 1M.
    #[arg(long, value_name = "BYTES", default_value = "1M", value_parser = parse_bytes)]
    pub max_line_bytes: usize,

    /// Memory for counting distinct clients (`tls --count clients`, `whatif`,
    /// `report`): clients are counted exactly until they take about SIZE, clients
    /// first seen after that are estimated with HyperLogLog (±0.81% standard error)
    /// and the output says so.
    ///
    /// A number of bytes, or with K, M or G (powers of 1024), e.g. 512M or 2G. Default
    /// `auto`: a quarter of the physical memory, at least 256M.
    #[arg(long, value_name = "SIZE", default_value = "auto", value_parser = parse_memory_limit)]
    pub memory_limit: usize,

    #[command(flatten)]
    pub state: StateArgs,

    #[command(flatten)]
    pub window: WindowArgs,
}

/// `tlsgap tls`.
#[derive(Debug, Args)]
pub struct TlsArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = TlsFormat::Table)]
    pub format: TlsFormat,

    #[command(flatten)]
    pub csv: CsvArgs,

    /// Count every request, or every distinct client once (its earliest TLS request
    /// decides its protocol and cipher; see --client-key).
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = CountArg::Requests)]
    pub count: CountArg,

    #[command(flatten)]
    pub client_key: ClientKeyArgs,

    /// Also the requests per protocol per day or hour (local in --tz), for trend
    /// charts: a section under the table, `periods` in JSON; CSV and Parquet then hold
    /// the period rows (period, period_start, protocol, count, share).
    #[arg(long, value_enum, value_name = "PERIOD")]
    pub by: Option<PeriodArg>,

    #[command(flatten)]
    pub prom: PromArgs,
}

/// `--label`, flattened into every command with `--format prom`.
#[derive(Debug, Clone, Default, Args)]
pub struct PromArgs {
    /// With --format prom: add the label NAME=VALUE to every sample (repeatable), e.g.
    /// --label host=web1 --label vhost=example.org.
    ///
    /// NAME as Prometheus wants it (`[a-zA-Z_][a-zA-Z0-9_]*`, not starting with __), given
    /// once, and none of tlsgap's own labels (protocol, cipher, verdict, reason); VALUE
    /// any non-empty text (escaped in the output). Avoid job and instance, which the
    /// scrape sets (Prometheus would rename yours exported_job, exported_instance).
    #[arg(long = "label", value_name = "NAME=VALUE", value_parser = tlsgap_output::prom::parse_label)]
    pub labels: Vec<(String, String)>,
}

impl PromArgs {
    /// The checked constant labels; an error when some are given without
    /// `--format prom`, or a name twice.
    pub fn labels(&self, format: TlsFormat) -> anyhow::Result<tlsgap_output::prom::ConstLabels> {
        if !self.labels.is_empty() && format != TlsFormat::Prom {
            anyhow::bail!("--label is for --format prom");
        }
        tlsgap_output::prom::ConstLabels::new(self.labels.clone()).map_err(anyhow::Error::msg)
    }
}

/// `tlsgap export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format (parquet needs `-o`).
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = ExportFormat::Ndjson)]
    pub format: ExportFormat,

    #[command(flatten)]
    pub csv: CsvArgs,

    /// Write a hive-style dataset into the directory `-o DIR` (parquet only).
    ///
    /// `date`: DIR/date=YYYY-MM-DD/part-HOST-N.parquet, the date of each line in the
    /// log's own UTC offset. Re-exporting a day replaces this host's parts of that day.
    #[arg(long, value_enum, value_name = "KEY", requires = "output")]
    pub partition_by: Option<PartitionBy>,

    /// Host name in the part file names (default: this machine's; sanitized to
    /// `[A-Za-z0-9._-]`). Only with --partition-by.
    #[arg(long, value_name = "NAME", requires = "partition_by")]
    pub host: Option<String>,
}

/// `--csv-raw`, flattened into every command with `--format csv`.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct CsvArgs {
    /// Write CSV fields as they are: no ' before values a spreadsheet would run as a
    /// formula (=, +, -, @, tab, CR), no escaping of control bytes.
    ///
    /// For --format csv. By default a text field that starts with one of those gets a '
    /// in front, and control characters (line breaks included) and bidi controls in
    /// text fields are written as \xHH / \u{..}, as in tables; numbers are never
    /// changed. Fields are quoted either way (RFC 4180).
    #[arg(long = "csv-raw", id = "csv_raw")]
    pub raw: bool,
}

impl CsvArgs {
    /// How text fields are written.
    pub fn style(self) -> tlsgap_agg::rows::CsvStyle {
        tlsgap_agg::rows::CsvStyle::raw_if(self.raw)
    }
}

/// `export --partition-by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PartitionBy {
    /// One directory per day (`date=YYYY-MM-DD`).
    Date,
}

/// `tlsgap whatif`.
#[derive(Debug, Args)]
pub struct WhatifArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// The policy: mozilla-modern, mozilla-intermediate (Mozilla's guideline 6.0),
    /// mozilla-intermediate-5.7, mozilla-old-5.7, a file of server directives, or
    /// directives inline ("SSLProtocol -all +TLSv1.2 ...").
    #[arg(long, value_name = "POLICY")]
    pub policy: String,

    /// Read an exported dataset instead of logs: a directory of `export --partition-by
    /// date` (every *.parquet below it), a Parquet file or a quoted glob, as `merge`
    /// reads them (repeatable). Its `client`, `user_agent`, `tls_protocol` and
    /// `tls_cipher` columns are judged as log lines are; --since/--until/--tz select
    /// rows by `time`.
    #[arg(long, value_name = "DIR|GLOB", conflicts_with_all = ["files", "strict", "invalid_lines", "state"])]
    pub dataset: Vec<String>,

    #[command(flatten)]
    pub system: SystemTlsArgs,

    #[command(flatten)]
    pub client_key: ClientKeyArgs,

    /// Also list every suite of the policy, in the server's order, with why each is in
    /// or out (table and json).
    #[arg(long)]
    pub explain: bool,

    /// How many User-Agents and addresses to list.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,

    /// Also write one CSV row per TLS request to PATH: file, line, client,
    /// user_agent, protocol, cipher, offer (yes/no), outcome (works/fails from the offer;
    /// allowed/refused/unknown from the negotiated pair), new_protocol, new_cipher,
    /// new_group, reason. Holds every TLS request in memory.
    #[arg(long, value_name = "PATH")]
    pub list_requests: Option<std::path::PathBuf>,

    /// The server's certificates, for the exact answer from logged offers
    /// ($ssl_ciphers, SSL_CLIENTHELLO_CIPHERS): rsa, ecdsa or rsa+ecdsa (default: what
    /// the negotiated suites show, RSA when they show none).
    #[arg(long, value_name = "KINDS", value_parser = parse_certs)]
    pub cert: Option<tlsgap_ciphers::handshake::Certs>,

    /// Output format; csv and parquet rows: the total, then one per protocol and per cipher
    /// with its decision.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = RowsFormat::Table)]
    pub format: RowsFormat,

    #[command(flatten)]
    pub csv: CsvArgs,
}

/// `tlsgap gaps`.
#[derive(Debug, Args)]
pub struct GapsArgs {
    /// strace output files (`-` or none: standard input).
    #[arg(value_name = "TRACE")]
    pub traces: Vec<PathBuf>,

    /// Report gaps of at least this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.1)]
    pub min_gap: f64,

    /// How many of the longest gaps to list in the summary.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,

    /// Seconds one bcrypt cost-8 verification takes where the trace was made: the
    /// speed an auth gap's duration is compared with when the trace does not show the
    /// verified entry (default: measured on this machine at each run, as one core's
    /// CPU time, so that a busy machine does not read as a slow one).
    #[arg(long, value_name = "SECONDS")]
    pub bcrypt_speed: Option<f64>,

    /// Threads (default: all cores): several traces (`-ff` files) are read at once,
    /// with the same answer as one after another; one trace is read by one thread.
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Output format; csv and parquet rows: every gap, then every blocked interval.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = RowsFormat::Table)]
    pub format: RowsFormat,

    #[command(flatten)]
    pub csv: CsvArgs,

    /// Write the result here instead of standard output (`-` = stdout).
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// No notes on standard error (warnings and errors stay).
    #[arg(short, long)]
    pub quiet: bool,

    /// --since/--until/--tz: only gaps that start inside the window (strace -ttt
    /// times; -t/-tt traces have no date and are not filtered, with a note).
    #[command(flatten)]
    pub window: WindowArgs,
}

/// `tlsgap auth`.
#[derive(Debug, Args)]
pub struct AuthArgs {
    /// The htpasswd file.
    #[arg(long, value_name = "FILE")]
    pub htpasswd: Option<PathBuf>,

    /// Access logs (any format with %u; %D or another duration for latency, %P for
    /// PID matching).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub log: Vec<PathBuf>,

    /// Format of the access logs (as for `tls`).
    #[arg(long, value_name = "FMT", default_value = "auto")]
    pub log_format: String,

    /// strace output of the web server's workers (files or a quoted `prefix.*`).
    #[arg(long, value_name = "FILE", num_args = 1..)]
    pub traces: Vec<PathBuf>,

    /// strace's zone for -t/-tt traces: an IANA zone (Europe/Berlin, follows
    /// daylight-saving time) or an offset (+02:00, -0500, UTC); default: the log's offset.
    #[arg(long, value_name = "ZONE", allow_hyphen_values = true)]
    pub trace_tz: Option<String>,

    /// Flag users whose verification takes longer than this many seconds per request.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.05)]
    pub threshold: f64,

    /// Shortest trace gap considered (seconds).
    #[arg(long, value_name = "SECONDS", default_value_t = 0.01)]
    pub min_gap: f64,

    /// Seconds one bcrypt cost-8 verification takes on the server: the speed the gaps
    /// of users without a measured htpasswd entry are compared with (default: measured
    /// on this machine, as one core's CPU time).
    #[arg(long, value_name = "SECONDS")]
    pub bcrypt_speed: Option<f64>,

    /// Budget of password-check time per page view (a page and the assets the same
    /// client loads with it within 5 s); users over it get the bcrypt cost that fits.
    #[arg(long, value_name = "SECONDS", default_value_t = 0.5)]
    pub page_budget: f64,

    /// Threads (default: all cores) reading the logs and, several at once, the traces
    /// (the same answer as one after another).
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,

    /// Output format; csv and parquet rows: one per user.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = RowsFormat::Table)]
    pub format: RowsFormat,

    #[command(flatten)]
    pub csv: CsvArgs,

    /// Write the result here instead of standard output.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// No notes on standard error.
    #[arg(short, long)]
    pub quiet: bool,

    /// --since/--until/--tz on the access logs.
    #[command(flatten)]
    pub window: WindowArgs,
}

/// What one client is, wherever clients are counted (`tls`/`merge --count clients`,
/// `whatif`, `report`).
#[derive(Debug, Clone, Copy, Args)]
pub struct ClientKeyArgs {
    /// What one client is: `addr+ua` (the address and the User-Agent; the default of
    /// every command, so that many clients behind one proxy or NAT address are told
    /// apart) or `addr` (the address alone). Logs without a User-Agent count addresses.
    #[arg(long, value_enum, value_name = "KEY", default_value_t = ClientKeyArg::AddrUa)]
    pub client_key: ClientKeyArg,
}

/// `--client-key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientKeyArg {
    /// The client address.
    Addr,
    /// The client address and the User-Agent.
    #[value(name = "addr+ua")]
    AddrUa,
}

impl From<ClientKeyArgs> for tlsgap_agg::ClientKey {
    fn from(a: ClientKeyArgs) -> Self {
        match a.client_key {
            ClientKeyArg::Addr => tlsgap_agg::ClientKey::Addr,
            ClientKeyArg::AddrUa => tlsgap_agg::ClientKey::AddrUa,
        }
    }
}

/// The server's OpenSSL defaults, for directives without `@SECLEVEL=N`.
#[derive(Debug, Args)]
pub struct SystemTlsArgs {
    /// The OpenSSL security level the server starts from when its cipher string sets
    /// none (default: the level the server's openssl.cnf sets, else 2, Debian's
    /// built-in default). OpenSSL 3 refuses TLSv1 and TLSv1.1 from level 1 up.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=5))]
    pub seclevel: Option<u8>,

    /// The server's openssl.cnf, read for the system CipherString's @SECLEVEL (default:
    /// $OPENSSL_CONF, else /etc/ssl/openssl.cnf when it exists).
    #[arg(long, value_name = "FILE")]
    pub openssl_conf: Option<PathBuf>,
}

/// `tlsgap ciphers`.
#[derive(Debug, Args)]
pub struct CiphersArgs {
    /// Suite names (OpenSSL names, old aliases such as EDH-..., or IANA names).
    #[arg(value_name = "NAME")]
    pub names: Vec<String>,

    /// Only suites with this verdict (repeatable).
    #[arg(long, value_enum, value_name = "VERDICT")]
    pub verdict: Vec<VerdictArg>,

    /// Only suites usable under this protocol (SSLv2 ... TLSv1.3); with names, look
    /// them up as logged under it (SSLv2 and TLS share some names).
    #[arg(long, value_name = "PROTOCOL")]
    pub protocol: Option<String>,

    /// Expand an OpenSSL cipher string (or pasted SSLCipherSuite/ssl_ciphers
    /// directives) the way `openssl ciphers -v` does, with why each suite is in or out.
    #[arg(long, value_name = "STRING", conflicts_with_all = ["names", "verdict", "protocol"])]
    pub explain: Option<String>,

    #[command(flatten)]
    pub system: SystemTlsArgs,

    /// Output format.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = CiphersFormat::Table)]
    pub format: CiphersFormat,

    #[command(flatten)]
    pub csv: CsvArgs,

    /// Write the result here instead of standard output.
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// A verdict, as a flag value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum VerdictArg {
    /// Broken.
    Insecure,
    /// Deprecated or lacking forward secrecy / AEAD.
    Weak,
    /// Acceptable.
    Secure,
    /// What current guidance recommends.
    Recommended,
}

/// Output formats of `ciphers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CiphersFormat {
    /// Aligned text.
    Table,
    /// One row per suite.
    Csv,
    /// An array of suites.
    Json,
}

/// Output formats of `tls`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TlsFormat {
    /// Aligned text for a terminal.
    Table,
    /// A header row, then one row per protocol and cipher (and one for plain HTTP).
    Csv,
    /// The stable JSON document (see the README).
    Json,
    /// The CSV columns as a Parquet file (needs `-o`).
    Parquet,
    /// Prometheus text exposition format, for node_exporter's textfile collector
    /// (write it with `-o DIR/tlsgap.prom`): counters of requests and lines (`tls`
    /// with --state: of every run since the state's counters started), ratios and
    /// distinct clients as gauges of this run; see --label.
    Prom,
}

/// Output formats of the reports without a Prometheus form (`whatif`, `gaps`, `auth`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RowsFormat {
    /// Aligned text for a terminal.
    Table,
    /// A header row, then the rows named above.
    Csv,
    /// The stable JSON document (see the README).
    Json,
    /// The CSV columns as a Parquet file (needs `-o`).
    Parquet,
}

/// What `report` writes to standard output (or -o).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// The plain-text report (80 columns).
    Text,
    /// One JSON document with every section's figures.
    Json,
}

/// Output formats of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Comma-separated values with a header row; text fields quoted.
    Csv,
    /// One JSON object per line.
    Ndjson,
    /// Apache Parquet (needs `-o`).
    Parquet,
}

/// `--count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CountArg {
    /// Every request.
    Requests,
    /// Every distinct client address.
    Clients,
}

/// `tlsgap report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,

    #[command(flatten)]
    pub client_key: ClientKeyArgs,

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

    /// What goes to standard output (or -o): the plain text (default, 80 columns) or
    /// one JSON document of the same figures (see the README).
    ///
    /// `--format json` is written with or without --html; the page is the same.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ReportFormat>,

    /// A policy for the what-if section (repeatable; default: mozilla-modern,
    /// mozilla-intermediate and mozilla-old-5.7).
    ///
    /// Whatever `whatif --policy` takes: a Mozilla profile (mozilla-modern,
    /// mozilla-intermediate, mozilla-intermediate-5.7, mozilla-old-5.7, ...), a file
    /// holding server directives, or directives inline ("SSLProtocol -all +TLSv1.2
    /// ..."). Shown in the order given.
    #[arg(long, value_name = "POLICY")]
    pub policy: Vec<String>,

    #[command(flatten)]
    pub system: SystemTlsArgs,

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
    #[arg(long, value_enum, value_name = "PERIOD", default_value_t = PeriodArg::Day)]
    pub by: PeriodArg,
}

/// `tlsgap check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// WARNING above this share (0-1) of TLS requests on SSLv2, SSLv3, TLS 1.0 or 1.1
    /// (default 0.01).
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub legacy_warn: Option<f64>,

    /// CRITICAL above this share (0-1) of TLS requests on SSLv2, SSLv3, TLS 1.0 or 1.1
    /// (default 0.05).
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub legacy_crit: Option<f64>,

    /// WARNING above this share (0-1) of TLS requests with an insecure suite (default 0:
    /// any).
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub insecure_warn: Option<f64>,

    /// CRITICAL above this share (0-1) of TLS requests with an insecure suite (default 0.01).
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub insecure_crit: Option<f64>,

    /// WARNING above this share (0-1) of lines that do not fit the log format (default 0.01).
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub malformed_warn: Option<f64>,

    /// CRITICAL above this share (0-1) of lines that do not fit the log format (default 0.10).
    #[arg(long, value_name = "SHARE", value_parser = share)]
    pub malformed_crit: Option<f64>,

    /// Also check this htpasswd file: the slowest user's verification time.
    ///
    /// Apache verifies the password on every request, so this is added to each of that
    /// user's responses. Measured on this machine (bcrypt above cost 10 is scaled).
    #[arg(long, value_name = "FILE")]
    pub htpasswd: Option<PathBuf>,

    /// WARNING when a user's verification takes longer than this (seconds) (default 0.05).
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    pub auth_warn: Option<f64>,

    /// CRITICAL when a user's verification takes longer than this (seconds) (default 0.25).
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    pub auth_crit: Option<f64>,

    /// WARNING when the newest line is older than AGE (`30m`, `2h`, `1d`), and when no
    /// line falls inside --since/--until (without this flag an empty window is UNKNOWN);
    /// adds `newest_line_age_seconds` to the perfdata.
    #[arg(long, value_name = "AGE", value_parser = stale_age)]
    pub stale_after: Option<i64>,

    /// The figure -w/--warning and -c/--critical judge: legacy, insecure, malformed
    /// (shares 0-1), auth (seconds), requests (TLS requests: e.g. -c 100: is CRITICAL
    /// below 100).
    #[arg(long, value_enum, value_name = "METRIC")]
    pub metric: Option<CheckMetric>,

    /// WARNING range for --metric, in the Monitoring Plugins syntax: 10 (alert
    /// outside 0..10), 10: (below 10), ~:10 (above 10), 10:20 (outside), @10:20
    /// (inside).
    #[arg(
        short = 'w',
        long,
        value_name = "RANGE",
        requires = "metric",
        allow_hyphen_values = true
    )]
    pub warning: Option<String>,

    /// CRITICAL range for --metric (same syntax as --warning).
    #[arg(
        short = 'c',
        long,
        value_name = "RANGE",
        requires = "metric",
        allow_hyphen_values = true
    )]
    pub critical: Option<String>,

    /// UNKNOWN when the check takes longer than SECONDS (nothing is recorded in
    /// --state then).
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    pub timeout: Option<f64>,

    /// UNKNOWN when fewer TLS requests than N were read: too few to judge shares on.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub min_requests: u64,
}

/// What `check -w/-c` judge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckMetric {
    /// Share of TLS requests on SSLv2, SSLv3, TLS 1.0 or 1.1.
    Legacy,
    /// Share of TLS requests with an insecure suite.
    Insecure,
    /// Share of lines that do not fit the log format.
    Malformed,
    /// The slowest htpasswd user's verification (seconds; needs --htpasswd).
    Auth,
    /// TLS requests read.
    Requests,
}

impl CheckMetric {
    /// The name `--metric` takes (and the `--NAME-warn`/`--NAME-crit` flags use).
    pub fn name(self) -> &'static str {
        match self {
            CheckMetric::Legacy => "legacy",
            CheckMetric::Insecure => "insecure",
            CheckMetric::Malformed => "malformed",
            CheckMetric::Auth => "auth",
            CheckMetric::Requests => "requests",
        }
    }
}

fn share(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        Ok(_) => Err("a share is between 0 and 1 (0.05 is 5%)".into()),
        Err(e) => Err(e.to_string()),
    }
}

fn stale_age(s: &str) -> Result<i64, String> {
    tlsgap_engine::window::parse_age(s).map_err(|e| e.to_string())
}

fn seconds(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(_) => Err("seconds are a finite number, 0 or more".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// `tlsgap merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Datasets: directories (every *.parquet below them), Parquet files, or quoted
    /// glob patterns ('/data/tls/date=2026-11-*').
    #[arg(value_name = "DIR|GLOB", required = true)]
    pub paths: Vec<String>,

    /// Output format.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = TlsFormat::Table)]
    pub format: TlsFormat,

    #[command(flatten)]
    pub csv: CsvArgs,

    /// Count every request, or every distinct client once (its earliest TLS request
    /// decides its protocol and cipher; see --client-key).
    #[arg(long, value_enum, value_name = "WHAT", default_value_t = CountArg::Requests)]
    pub count: CountArg,

    #[command(flatten)]
    pub client_key: ClientKeyArgs,

    /// Only `date=YYYY-MM-DD` partitions on or after this day (files outside such
    /// directories, and rows without a time, are then left out).
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = tlsgap_engine::merge::parse_date)]
    pub since_date: Option<String>,

    /// Only `date=YYYY-MM-DD` partitions on or before this day.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = tlsgap_engine::merge::parse_date)]
    pub until_date: Option<String>,

    /// --since/--until/--tz as `tls` takes them, on each row's `time`: rows outside (and
    /// rows without a time) are left out, and day partitions that cannot hold a row of
    /// the window are not read.
    #[command(flatten)]
    pub window: WindowArgs,

    /// Also the requests per protocol per day or hour (local in --tz), as `tls --by`
    /// gives them: a section under the table, `periods` in JSON; CSV and Parquet then
    /// hold the period rows (period, period_start, protocol, count, share).
    #[arg(long, value_enum, value_name = "PERIOD")]
    pub by: Option<PeriodArg>,

    /// Only this host's parts (its `host=HOST` directories, or `part-HOST-N.parquet`
    /// files of the older layout). Repeatable.
    #[arg(long = "host", value_name = "HOST")]
    pub hosts: Vec<String>,

    /// Write the result here instead of standard output (`-` = stdout; parquet needs a
    /// path).
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Memory for distinct clients with `--count clients` (as for `tls`): clients met
    /// after the limit is reached are estimated with HyperLogLog, and the output says
    /// so. A size (K, M, G) or `auto` (a quarter of the physical memory, at least 256M).
    #[arg(long, value_name = "SIZE", default_value = "auto", value_parser = parse_memory_limit)]
    pub memory_limit: usize,

    /// No notes on standard error.
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub prom: PromArgs,
}

/// The `--state` and `--lock-wait` flags, to flatten into a command's arguments.
#[derive(Debug, Clone, Default, Args)]
pub struct StateArgs {
    /// Read only what is new since the last run recorded in FILE.
    ///
    /// Remembers, per input, which file was read (device, inode, a fingerprint of its
    /// first bytes) and up to which complete line, and continues from there next time.
    /// Follows logrotate (create, copytruncate, compress, dateext): the unread end of a
    /// rotated file is read before the new one, no line twice. FILE is written
    /// atomically and locked (FILE.lock) for the whole run. `tls` (and `check`) also
    /// keep request and line counters in it, which `tls --format prom` exports as
    /// counters that grow across runs; a run of another command that reads new lines
    /// drops them (they start again, with a new tlsgap_state_created_timestamp_seconds).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,

    /// With --state: wait up to SECONDS for another run's lock instead of failing.
    ///
    /// Without it, a run that finds the state locked by another tlsgap run exits at
    /// once with an error naming that run's pid.
    #[arg(long, value_name = "SECONDS", requires = "state", value_parser = parse_seconds)]
    pub lock_wait: Option<Duration>,
}

impl StateArgs {
    /// The plain configuration, `None` without `--state`.
    pub fn config(&self) -> Option<StateConfig> {
        self.state.as_ref().map(|path| StateConfig {
            path: path.clone(),
            lock_wait: self.lock_wait,
        })
    }
}

/// `4096`, `64K`, `1M`, `1G` (powers of 1024), at least 1.
fn parse_bytes(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => (t.get(..i).unwrap_or(""), t.get(i..).unwrap_or("")),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("{s:?} is not a size (a number, or with K, M or G)")),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1usize << shift))
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{s:?} is not a usable size (at least 1 byte)"))
}

/// `auto` (see [`tlsgap_engine::default_memory_limit`]) or a size as [`parse_bytes`].
fn parse_memory_limit(s: &str) -> Result<usize, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        return Ok(tlsgap_engine::default_memory_limit());
    }
    parse_bytes(s)
}

fn parse_seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    Duration::try_from_secs_f64(secs)
        .map_err(|_| format!("{s:?} is not a usable number of seconds"))
}

/// `--since`, `--until` and `--tz`, for `#[command(flatten)]` into the log commands.
#[derive(Debug, Clone, Default, Args)]
pub struct WindowArgs {
    /// Only lines at or after this time.
    ///
    /// RFC 3339 (2026-11-21T05:00:00+02:00, 2026-11-21T03:00:00Z), a date (2026-11-21:
    /// its local midnight), a local time (2026-11-21T05:00), now, today, yesterday, or a
    /// duration before now (-24h, -90m, -7d, -1w, -1h30m; d and w are 24 and 168 hours).
    /// Local times and dates are read in --tz. Lines are compared by instant, whatever
    /// offset each carries.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub since: Option<String>,

    /// Only lines before this time (exclusive).
    ///
    /// The same forms as --since. `--until 2026-11-21` stops at that date's local
    /// midnight, so the 21st is left out; `--since yesterday --until today` is yesterday's
    /// calendar day in --tz (23, 24 or 25 hours).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub until: Option<String>,

    /// Time zone for dates, local times and today/yesterday (and --by periods where
    /// the command has --by).
    ///
    /// An IANA name (Europe/Sofia, America/New_York), UTC, a whole-hour offset
    /// (+02:00), or local (the default: $TZ, else /etc/localtime, else UTC). Checked on
    /// every command, window or not.
    #[arg(long, value_name = "ZONE", allow_hyphen_values = true)]
    pub tz: Option<String>,
}

/// The periods of `--by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PeriodArg {
    /// Calendar days in the zone (23, 24 or 25 hours).
    Day,
    /// Wall-clock hours in the zone.
    Hour,
}

impl From<PeriodArg> for Period {
    fn from(p: PeriodArg) -> Period {
        match p {
            PeriodArg::Day => Period::Day,
            PeriodArg::Hour => Period::Hour,
        }
    }
}

impl From<CountArg> for CountMode {
    fn from(c: CountArg) -> CountMode {
        match c {
            CountArg::Requests => CountMode::Requests,
            CountArg::Clients => CountMode::Clients,
        }
    }
}

/// `tlsgap clients`.
#[derive(Debug, Args)]
pub struct ClientsArgs {
    #[command(flatten)]
    pub input: InputArgs,

    /// How many User-Agents to list per fingerprint.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,

    /// Negotiate each fingerprint's offer under this policy (as `whatif --policy`:
    /// a Mozilla profile, a file of server directives, or directives inline).
    #[arg(long, value_name = "POLICY")]
    pub policy: Option<String>,

    /// With --policy: the server's certificates, `rsa`, `ecdsa` or `rsa+ecdsa`
    /// (default: those the negotiated suites in the log show, else rsa).
    #[arg(long, value_name = "KINDS", requires = "policy", value_parser = parse_certs)]
    pub cert: Option<tlsgap_ciphers::handshake::Certs>,

    #[command(flatten)]
    pub system: SystemTlsArgs,

    #[command(flatten)]
    pub client_key: ClientKeyArgs,

    /// Output format; csv and parquet rows: one per fingerprint.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = RowsFormat::Table)]
    pub format: RowsFormat,

    #[command(flatten)]
    pub csv: CsvArgs,
}

fn parse_certs(s: &str) -> Result<tlsgap_ciphers::handshake::Certs, String> {
    tlsgap_ciphers::handshake::Certs::parse(s)
        .ok_or_else(|| format!("`{s}`: rsa, ecdsa or rsa+ecdsa"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn share_flags_are_checked() {
        assert_eq!(share("0.05"), Ok(0.05));
        assert!(share("5").is_err());
        assert!(share("-0.1").is_err());
        assert!(share("NaN").is_err());
        assert!(seconds("inf").is_err());
        assert_eq!(seconds("0.01"), Ok(0.01));
    }

    #[test]
    fn state_args_parse_lock_wait() {
        #[derive(Debug, clap::Parser)]
        struct T {
            #[command(flatten)]
            state: StateArgs,
        }
        let t = T::try_parse_from(["t", "--state", "s.json", "--lock-wait", "2.5"]).unwrap();
        let cfg = t.state.config().unwrap();
        assert_eq!(cfg.lock_wait, Some(Duration::from_millis(2500)));
        assert!(T::try_parse_from(["t", "--lock-wait", "3"]).is_err());
        assert!(T::try_parse_from(["t", "--state", "s", "--lock-wait", "-1"]).is_err());
        assert!(T::try_parse_from(["t"]).unwrap().state.config().is_none());
    }

    #[test]
    fn window_flags_take_negative_durations_as_values() {
        #[derive(Debug, clap::Parser)]
        struct Cmd {
            #[command(flatten)]
            window: WindowArgs,
            #[arg(long, value_enum)]
            by: Option<PeriodArg>,
        }
        Cmd::command().debug_assert();
        let c = Cmd::try_parse_from([
            "t",
            "--since",
            "-24h",
            "--until",
            "today",
            "--tz",
            "Europe/Sofia",
            "--by",
            "hour",
        ])
        .unwrap();
        assert_eq!(c.window.since.as_deref(), Some("-24h"));
        assert_eq!(c.window.until.as_deref(), Some("today"));
        assert_eq!(c.by, Some(PeriodArg::Hour));
    }
}
