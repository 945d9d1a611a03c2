//! TLS policies traffic is tested against: Mozilla's Server Side TLS profiles and the TLS
//! directives of an Apache or nginx configuration.
//!
//! ```
//! use tlsgap_ciphers::policy::{Decision, Policy};
//!
//! let p = Policy::from_config("ssl_protocols TLSv1.2 TLSv1.3;\nssl_ciphers 'ECDHE+AESGCM';").unwrap();
//! assert_eq!(p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"), Decision::RefusedProtocol);
//! assert_eq!(p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), Decision::Allowed);
//! ```
//!
//! Server configurations are read as the OpenSSL 3 behind a current Apache or nginx would
//! apply them (see [`ConfigOptions`]):
//!
//! - The security level is [`DEBIAN_DEFAULT_SECLEVEL`] (2), what Debian and Ubuntu compile
//!   OpenSSL 3 with (upstream compiles 1; for TLS <= 1.2 suites the two differ only on RC4,
//!   which OpenSSL 3 no longer has, and on SSLv3). `@SECLEVEL=N` in the cipher string
//!   overrides it. The level filters the suites (see [`crate::cipherstring`]) and the
//!   protocols: SSLv3 needs level <= 1, TLSv1 level <= 2, TLSv1.1 level <= 3.
//! - OpenSSL 3 rates MD5+SHA-1 and SHA-1 signatures below 80 bits, so at level >= 1 a
//!   TLSv1/TLSv1.1 (or SSLv3) handshake only succeeds with a suite whose key exchange is
//!   not signed (RSA, PSK, anonymous). [`Policy::decide`] reports the signed ones
//!   (ECDHE-RSA-..., DHE-RSA-...) as [`Decision::RefusedCipher`] for those protocols.
//! - SSLv2 is never enabled (no OpenSSL that reads these directives has it); OpenSSL 3 is
//!   built without SSLv3, so SSLv3 is dropped as well unless
//!   [`ConfigOptions::openssl3`] is off.

use std::fmt;

use crate::catalogue;
use crate::cipherstring::{self, DEBIAN_DEFAULT_SECLEVEL};
use crate::suite::{Protocol, Suite};

/// The Mozilla guideline version the profiles follow.
pub const MOZILLA_GUIDELINES_VERSION: &str = "5.7";

/// Apache 2.4 mod_ssl's default `SSLProtocol` (2.4.x documentation).
pub const APACHE_DEFAULT_PROTOCOLS: &str = "all -SSLv3";
/// Apache 2.4 mod_ssl's default `SSLCipherSuite`.
pub const APACHE_DEFAULT_CIPHERS: &str = "DEFAULT";
/// nginx's default `ssl_protocols` (1.22, Debian 12).
pub const NGINX_DEFAULT_PROTOCOLS: &str = "TLSv1 TLSv1.1 TLSv1.2 TLSv1.3";
/// nginx's default `ssl_ciphers`.
pub const NGINX_DEFAULT_CIPHERS: &str = "HIGH:!aNULL:!MD5";
/// OpenSSL's default TLS 1.3 `Ciphersuites`.
pub const OPENSSL_DEFAULT_CIPHERSUITES: &str =
    "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";

/// A set of protocols and suites a server would accept.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// `mozilla-intermediate`, or `apache`/`nginx` for directives.
    pub name: String,
    /// The profile's version (`5.7`), if any.
    pub version: Option<String>,
    /// Protocols enabled.
    pub protocols: Vec<Protocol>,
    /// TLS <= 1.2 suites enabled, in preference order.
    pub tls12: Vec<&'static Suite>,
    /// TLS 1.3 suites enabled.
    pub tls13: Vec<&'static Suite>,
    /// The OpenSSL security level directives are applied at (`None` for profiles, which
    /// are plain lists).
    pub seclevel: Option<u8>,
    /// Whether TLSv1/TLSv1.1/SSLv3 handshakes with a signed key exchange are refused
    /// (OpenSSL 3 at security level >= 1).
    pub legacy_signatures_refused: bool,
}

/// What a policy says of one logged (protocol, cipher).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Would still be negotiated.
    Allowed,
    /// The protocol is disabled.
    RefusedProtocol,
    /// The protocol is on, the suite is not.
    RefusedCipher,
    /// The protocol or suite is not in the catalogue.
    Unknown,
}

/// A policy that could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError {
    /// What was wrong.
    pub message: String,
    /// The 1-based line of the configuration, when there is one.
    pub line: Option<usize>,
}

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PolicyError {}

fn err(message: impl Into<String>, line: Option<usize>) -> PolicyError {
    PolicyError {
        message: message.into(),
        line,
    }
}

/// How server directives are turned into a policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigOptions {
    /// The security level in force unless the cipher string sets `@SECLEVEL=N`.
    pub default_seclevel: u8,
    /// Apply OpenSSL 3 behaviour: no SSLv3, no signed key exchange below TLS 1.2 at
    /// security level >= 1.
    pub openssl3: bool,
}

impl Default for ConfigOptions {
    fn default() -> Self {
        ConfigOptions {
            default_seclevel: DEBIAN_DEFAULT_SECLEVEL,
            openssl3: true,
        }
    }
}

const MOZILLA_TLS13: [&str; 3] = [
    "TLS_AES_128_GCM_SHA256",
    "TLS_AES_256_GCM_SHA384",
    "TLS_CHACHA20_POLY1305_SHA256",
];

const MOZILLA_INTERMEDIATE: [&str; 9] = [
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-CHACHA20-POLY1305",
    "DHE-RSA-AES128-GCM-SHA256",
    "DHE-RSA-AES256-GCM-SHA384",
    "DHE-RSA-CHACHA20-POLY1305",
];

const MOZILLA_OLD: [&str; 26] = [
    "ECDHE-ECDSA-AES128-GCM-SHA256",
    "ECDHE-RSA-AES128-GCM-SHA256",
    "ECDHE-ECDSA-AES256-GCM-SHA384",
    "ECDHE-RSA-AES256-GCM-SHA384",
    "ECDHE-ECDSA-CHACHA20-POLY1305",
    "ECDHE-RSA-CHACHA20-POLY1305",
    "DHE-RSA-AES128-GCM-SHA256",
    "DHE-RSA-AES256-GCM-SHA384",
    "DHE-RSA-CHACHA20-POLY1305",
    "ECDHE-ECDSA-AES128-SHA256",
    "ECDHE-RSA-AES128-SHA256",
    "ECDHE-ECDSA-AES128-SHA",
    "ECDHE-RSA-AES128-SHA",
    "ECDHE-ECDSA-AES256-SHA384",
    "ECDHE-RSA-AES256-SHA384",
    "ECDHE-ECDSA-AES256-SHA",
    "ECDHE-RSA-AES256-SHA",
    "DHE-RSA-AES128-SHA256",
    "DHE-RSA-AES256-SHA256",
    "AES128-GCM-SHA256",
    "AES256-GCM-SHA384",
    "AES128-SHA256",
    "AES256-SHA256",
    "AES128-SHA",
    "AES256-SHA",
    "DES-CBC3-SHA",
];

/// The suite of `suites` named `name` (OpenSSL name, alias or IANA name), not SSLv2.
fn find(suites: &'static [Suite], name: &str) -> Option<&'static Suite> {
    suites.iter().find(|s| {
        !s.sslv2_code && (s.openssl.iter().any(|n| n == name) || s.iana.as_deref() == Some(name))
    })
}

fn find_all(suites: &'static [Suite], names: &[&str]) -> Result<Vec<&'static Suite>, PolicyError> {
    names
        .iter()
        .map(|n| {
            find(suites, n).ok_or_else(|| err(format!("suite {n} is not in the catalogue"), None))
        })
        .collect()
}

fn same(a: &Suite, b: &Suite) -> bool {
    a.code == b.code && a.sslv2_code == b.sslv2_code
}

/// Whether a TLS <= 1.1 handshake with `suite` needs a server signature (made with
/// MD5+SHA-1 or SHA-1 there).
fn signed_key_exchange(suite: &Suite) -> bool {
    let kx = suite.kx.split('(').next().unwrap_or("").trim();
    let au = suite.au.trim();
    let ephemeral = matches!(
        kx,
        "DH" | "ECDH" | "DHE" | "ECDHE" | "EDH" | "EECDH" | "SRP"
    );
    let signing = matches!(au, "RSA" | "DSS" | "ECDSA");
    ephemeral && signing && !kx.contains('/')
}

impl Policy {
    /// A Mozilla Server Side TLS profile, guideline version 5.7: `mozilla-modern` (TLS 1.3
    /// only), `mozilla-intermediate` (TLS 1.2 and 1.3; ECDHE-ECDSA/RSA with AES-GCM or
    /// ChaCha20-Poly1305 plus DHE-RSA with AES-GCM or ChaCha20-Poly1305), `mozilla-old`
    /// (TLSv1 to TLS 1.3, 26 TLS <= 1.2 suites down to `DES-CBC3-SHA`). The `mozilla-`
    /// prefix may be left out.
    pub fn mozilla(name: &str) -> Result<Policy, PolicyError> {
        Policy::mozilla_over(name, catalogue::all())
    }

    /// [`Policy::mozilla`] with the suites taken from `suites` instead of the catalogue.
    pub fn mozilla_over(name: &str, suites: &'static [Suite]) -> Result<Policy, PolicyError> {
        let short = name.strip_prefix("mozilla-").unwrap_or(name);
        let (protocols, tls12): (&[Protocol], &[&str]) = match short {
            "modern" => (&[Protocol::TlsV1_3], &[]),
            "intermediate" => (&[Protocol::TlsV1_2, Protocol::TlsV1_3], &MOZILLA_INTERMEDIATE),
            "old" => (
                &[
                    Protocol::TlsV1,
                    Protocol::TlsV1_1,
                    Protocol::TlsV1_2,
                    Protocol::TlsV1_3,
                ],
                &MOZILLA_OLD,
            ),
            _ => {
                return Err(err(
                    format!(
                        "unknown profile `{name}` (expected mozilla-modern, mozilla-intermediate or mozilla-old)"
                    ),
                    None,
                ))
            }
        };
        Ok(Policy {
            name: format!("mozilla-{short}"),
            version: Some(MOZILLA_GUIDELINES_VERSION.to_string()),
            protocols: protocols.to_vec(),
            tls12: find_all(suites, tls12)?,
            tls13: find_all(suites, &MOZILLA_TLS13)?,
            seclevel: None,
            legacy_signatures_refused: false,
        })
    }

    /// The policy of pasted Apache (`SSLProtocol`, `SSLCipherSuite`) or nginx
    /// (`ssl_protocols`, `ssl_ciphers`, `ssl_conf_command Ciphersuites`) directives, with
    /// [`ConfigOptions::default`]. Other lines, comments and `SSLProxy*` directives are
    /// ignored; a later directive overrides an earlier one; a missing directive takes the
    /// server's documented default (`APACHE_DEFAULT_*`, `NGINX_DEFAULT_*`,
    /// [`OPENSSL_DEFAULT_CIPHERSUITES`]).
    pub fn from_config(text: &str) -> Result<Policy, PolicyError> {
        Policy::from_config_with(text, ConfigOptions::default(), catalogue::all())
    }

    /// [`Policy::from_config`] with explicit options and suite table.
    pub fn from_config_with(
        text: &str,
        options: ConfigOptions,
        suites: &'static [Suite],
    ) -> Result<Policy, PolicyError> {
        let (kind, d) = Directives::read(text)?;
        let (server, protocols) = match kind {
            Server::Apache => (
                "apache",
                apache_protocols(
                    d.protocols.as_deref().unwrap_or(APACHE_DEFAULT_PROTOCOLS),
                    d.protocols_line,
                )?,
            ),
            Server::Nginx => (
                "nginx",
                nginx_protocols(
                    d.protocols.as_deref().unwrap_or(NGINX_DEFAULT_PROTOCOLS),
                    d.protocols_line,
                )?,
            ),
        };
        let default_ciphers = match kind {
            Server::Apache => APACHE_DEFAULT_CIPHERS,
            Server::Nginx => NGINX_DEFAULT_CIPHERS,
        };
        let cipher_string = d.ciphers.as_deref().unwrap_or(default_ciphers);
        let evaluated =
            cipherstring::evaluate_over(cipher_string, suites, options.default_seclevel).map_err(
                |e| {
                    err(
                        format!("cipher string `{cipher_string}`: {}", e.message),
                        d.ciphers_line,
                    )
                },
            )?;
        let level = evaluated.seclevel;
        let tls12 = evaluated.order.iter().map(|&i| &suites[i]).collect();

        let suites13 = d
            .ciphersuites
            .as_deref()
            .unwrap_or(OPENSSL_DEFAULT_CIPHERSUITES);
        let mut tls13: Vec<&'static Suite> = Vec::new();
        for name in suites13.split(':').map(str::trim).filter(|n| !n.is_empty()) {
            // OpenSSL ignores TLS 1.3 names it does not know, and TLS <= 1.2 names here.
            if let Some(s) = find(suites, name).filter(|s| s.min_protocol == Protocol::TlsV1_3) {
                if !tls13.iter().any(|t| same(t, s)) && cipherstring::allowed_at_seclevel(s, level)
                {
                    tls13.push(s);
                }
            }
        }
        if tls13.is_empty() && d.ciphersuites.is_some() {
            return Err(err(
                format!("no TLS 1.3 suite in `{suites13}`"),
                d.ciphersuites_line,
            ));
        }

        let protocols = protocols
            .into_iter()
            .filter(|p| match p {
                Protocol::SslV2 => false,
                Protocol::SslV3 => !options.openssl3 && level <= 1,
                Protocol::TlsV1 => level <= 2,
                Protocol::TlsV1_1 => level <= 3,
                _ => true,
            })
            .collect();
        Ok(Policy {
            name: server.to_string(),
            version: None,
            protocols,
            tls12,
            tls13,
            seclevel: Some(level),
            legacy_signatures_refused: options.openssl3 && level >= 1,
        })
    }

    /// What this policy says of a logged `protocol` (`TLSv1.2`, `TLS1.2`, ...) and
    /// `cipher` (OpenSSL or IANA name), looked up in the catalogue.
    pub fn decide(&self, protocol: &str, cipher: &str) -> Decision {
        let Some(p) = Protocol::parse(protocol) else {
            return Decision::Unknown;
        };
        match catalogue::lookup(protocol, cipher) {
            Some(suite) => self.decide_suite(p, suite),
            None => Decision::Unknown,
        }
    }

    /// What this policy says of `suite` negotiated under `protocol`.
    pub fn decide_suite(&self, protocol: Protocol, suite: &Suite) -> Decision {
        if !self.protocols.contains(&protocol) {
            return Decision::RefusedProtocol;
        }
        let tls13_suite = suite.min_protocol == Protocol::TlsV1_3;
        let allowed = if protocol == Protocol::TlsV1_3 {
            tls13_suite && self.tls13.iter().any(|s| same(s, suite))
        } else {
            !tls13_suite
                && suite.min_protocol <= protocol
                && self.tls12.iter().any(|s| same(s, suite))
                && !(self.legacy_signatures_refused
                    && protocol < Protocol::TlsV1_2
                    && signed_key_exchange(suite))
        };
        if allowed {
            Decision::Allowed
        } else {
            Decision::RefusedCipher
        }
    }
}

// ---------------------------------------------------------------------------------------
// Reading directives.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    Apache,
    Nginx,
}

#[derive(Debug, Default)]
struct Directives {
    server: Option<Server>,
    protocols: Option<String>,
    protocols_line: Option<usize>,
    ciphers: Option<String>,
    ciphers_line: Option<usize>,
    ciphersuites: Option<String>,
    ciphersuites_line: Option<usize>,
}

/// Split `s` into words, honouring single and double quotes.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in s.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

/// Drop a `#` comment that is not inside quotes.
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' => return &line[..i],
            None => {}
        }
    }
    line
}

impl Directives {
    fn read(text: &str) -> Result<(Server, Directives), PolicyError> {
        let mut d = Directives::default();
        // nginx statements end at `;` (or a block brace) and may span lines; Apache
        // directives are whole lines without terminator.
        let mut stmt = String::new();
        let mut stmt_line = 0;
        for (n, raw) in text.lines().enumerate() {
            let line_no = n + 1;
            let line = strip_comment(raw);
            let first = words(line).into_iter().next().unwrap_or_default();
            if matches!(
                first.to_ascii_lowercase().as_str(),
                "sslprotocol" | "sslciphersuite"
            ) {
                // Apache lines have no terminator: what is pending is other Apache lines.
                stmt.clear();
                d.statement(&words(line), line_no)?;
                continue;
            }
            let mut rest = line;
            loop {
                if stmt.trim().is_empty() {
                    stmt_line = line_no;
                }
                match rest.find([';', '{', '}']) {
                    Some(i) => {
                        stmt.push_str(&rest[..i]);
                        d.statement(&words(&stmt), stmt_line)?;
                        stmt.clear();
                        rest = &rest[i + 1..];
                    }
                    None => {
                        stmt.push_str(rest);
                        stmt.push('\n');
                        break;
                    }
                }
            }
        }
        if !stmt.trim().is_empty() {
            d.statement(&words(&stmt), stmt_line)?;
        }
        let Some(server) = d.server else {
            return Err(err(
                "no SSLProtocol/SSLCipherSuite (Apache) or ssl_protocols/ssl_ciphers (nginx) directive",
                None,
            ));
        };
        Ok((server, d))
    }

    fn set_server(&mut self, s: Server, line: usize) -> Result<(), PolicyError> {
        match self.server {
            Some(prev) if prev != s => Err(err("both Apache and nginx directives", Some(line))),
            _ => {
                self.server = Some(s);
                Ok(())
            }
        }
    }

    fn statement(&mut self, w: &[String], line_no: usize) -> Result<(), PolicyError> {
        let Some(name) = w.first() else {
            return Ok(());
        };
        let args = &w[1..];
        match name.to_ascii_lowercase().as_str() {
            "sslprotocol" => {
                self.set_server(Server::Apache, line_no)?;
                self.protocols = Some(args.join(" "));
                self.protocols_line = Some(line_no);
            }
            "sslciphersuite" => {
                self.set_server(Server::Apache, line_no)?;
                match args {
                    [s] => self.set_ciphers(s, line_no),
                    [p, s] if p.eq_ignore_ascii_case("SSL") => self.set_ciphers(s, line_no),
                    [p, s] if p.eq_ignore_ascii_case("TLSv1.3") => {
                        self.ciphersuites = Some(s.clone());
                        self.ciphersuites_line = Some(line_no);
                    }
                    _ => {
                        return Err(err(
                            format!(
                                "SSLCipherSuite takes `[SSL|TLSv1.3] STRING`, got `{}`",
                                args.join(" ")
                            ),
                            Some(line_no),
                        ))
                    }
                }
            }
            "ssl_protocols" => {
                self.set_server(Server::Nginx, line_no)?;
                self.protocols = Some(args.join(" "));
                self.protocols_line = Some(line_no);
            }
            "ssl_ciphers" => {
                self.set_server(Server::Nginx, line_no)?;
                let [s] = args else {
                    return Err(err("ssl_ciphers takes one argument", Some(line_no)));
                };
                self.set_ciphers(s, line_no);
            }
            "ssl_conf_command" => {
                self.set_server(Server::Nginx, line_no)?;
                if let [k, v] = args {
                    if k.eq_ignore_ascii_case("Ciphersuites") {
                        self.ciphersuites = Some(v.clone());
                        self.ciphersuites_line = Some(line_no);
                    } else if k.eq_ignore_ascii_case("CipherString") {
                        self.set_ciphers(v, line_no);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn set_ciphers(&mut self, s: &str, line_no: usize) {
        self.ciphers = Some(s.to_string());
        self.ciphers_line = Some(line_no);
    }
}

fn protocol_word(w: &str) -> Option<Vec<Protocol>> {
    Some(match w.to_ascii_lowercase().as_str() {
        "all" => vec![
            Protocol::SslV3,
            Protocol::TlsV1,
            Protocol::TlsV1_1,
            Protocol::TlsV1_2,
            Protocol::TlsV1_3,
        ],
        "sslv2" => vec![Protocol::SslV2],
        "sslv3" => vec![Protocol::SslV3],
        "tlsv1" => vec![Protocol::TlsV1],
        "tlsv1.1" => vec![Protocol::TlsV1_1],
        "tlsv1.2" => vec![Protocol::TlsV1_2],
        "tlsv1.3" => vec![Protocol::TlsV1_3],
        _ => return None,
    })
}

/// mod_ssl's `SSLProtocol`: `+P` adds, `-P` removes, a bare `P` replaces the set.
fn apache_protocols(args: &str, line: Option<usize>) -> Result<Vec<Protocol>, PolicyError> {
    let mut set: Vec<Protocol> = Vec::new();
    for w in args.split_whitespace() {
        let (op, name) = match w.as_bytes().first() {
            Some(b'+') => ('+', &w[1..]),
            Some(b'-') => ('-', &w[1..]),
            _ => ('=', w),
        };
        let ps = protocol_word(name)
            .ok_or_else(|| err(format!("SSLProtocol: unknown protocol `{name}`"), line))?;
        match op {
            '+' => set.extend(ps),
            '-' => set.retain(|p| !ps.contains(p)),
            _ => set = ps,
        }
    }
    set.sort();
    set.dedup();
    Ok(set)
}

/// nginx's `ssl_protocols`: exactly the protocols listed.
fn nginx_protocols(args: &str, line: Option<usize>) -> Result<Vec<Protocol>, PolicyError> {
    let mut set = Vec::new();
    for w in args.split_whitespace() {
        let p = Protocol::parse(w)
            .filter(|_| w.starts_with("TLSv") || w.starts_with("SSLv"))
            .ok_or_else(|| err(format!("ssl_protocols: unknown protocol `{w}`"), line))?;
        set.push(p);
    }
    set.sort();
    set.dedup();
    Ok(set)
}
