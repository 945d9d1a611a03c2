//! TLS policies traffic is tested against: Mozilla's Server Side TLS profiles and the TLS
//! directives of an Apache or nginx configuration.
//!
//! ```
//! use tlsgap_ciphers::policy::{Decision, Policy, Reason};
//!
//! let p = Policy::from_config("ssl_protocols TLSv1.2 TLSv1.3;\nssl_ciphers 'ECDHE+AESGCM';").unwrap();
//! assert_eq!(p.decide("TLSv1", "ECDHE-RSA-AES128-SHA"), Decision::RefusedProtocol);
//! assert_eq!(p.decide("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), Decision::Allowed);
//! assert_eq!(p.explain("TLSv1.2", "AES128-SHA"), (Decision::RefusedCipher, Some(Reason::SuiteNotListed)));
//! ```
//!
//! Server configurations are read as the OpenSSL 3 behind a current Apache or nginx would
//! apply them (see [`ConfigOptions`]):
//!
//! - The security level is `@SECLEVEL=N` of the cipher string, else
//!   [`ConfigOptions::default_seclevel`]: the system default, which the caller reads from
//!   `openssl.cnf` (see [`crate::opensslcnf`]) or takes as [`DEBIAN_DEFAULT_SECLEVEL`] (2),
//!   what Debian and Ubuntu compile OpenSSL 3 with. The level filters the suites (see
//!   [`crate::cipherstring`]) and the protocols.
//! - OpenSSL 3 rates the MD5+SHA-1 and SHA-1 signatures of SSLv3, TLSv1 and TLSv1.1 below
//!   80 bits, so at security level 1 and above **every** handshake with those protocols
//!   fails, whatever the key exchange (verified against real Apache and nginx:
//!   `scripts/real-policies.py`). Without OpenSSL 3 ([`ConfigOptions::openssl3`] off) the
//!   older rule holds: SSLv3 needs level <= 1, TLSv1 level <= 2, TLSv1.1 level <= 3.
//! - Suites OpenSSL 3 no longer has (RC4, 3DES, DES, export, static DH, ...) are never
//!   negotiated; a cipher string that leaves no TLS <= 1.2 suite OpenSSL 3 has is an error,
//!   as it is for the server (Apache does not start, `nginx -t` fails).
//! - SSLv2 is never enabled (no OpenSSL that reads these directives has it).
//! - nginx negotiates DHE suites only with an `ssl_dhparam` file (Apache uses built-in
//!   parameters).
//!
//! Every refusal has a [`Reason`]; [`Policy::describe`] words it.

use std::fmt;

use serde::Deserialize;

use crate::catalogue;
use crate::cipherstring::{self, Step, DEBIAN_DEFAULT_SECLEVEL};
use crate::groups::{self, Group};
use crate::suite::{Protocol, Suite};

/// The version of Mozilla's guidelines the unversioned profile names follow.
pub const MOZILLA_GUIDELINES_VERSION: &str = "6.0";

/// Mozilla guideline versions tlsgap carries (`crates/ciphers/data/mozilla/*.json`), newest
/// first.
pub const MOZILLA_VERSIONS: [&str; 2] = ["6.0", "5.7"];

const MOZILLA_JSON: [(&str, &str); 2] = [
    ("6.0", include_str!("../data/mozilla/6.0.json")),
    ("5.7", include_str!("../data/mozilla/5.7.json")),
];

/// The smallest keys OpenSSL accepts at security level `level` (its
/// `SSL_CTX_set_security_level` documentation): (RSA and DH bits, ECC bits). A server
/// whose certificate key or DH parameters (`ssl_dhparam`, `SSLOpenSSLConfCmd
/// DHParameters`) are smaller refuses to start, whatever the suites: nginx and Apache
/// exit with `ee key too small` / `dh key too small` (a black-box audit: RSA-2048 at
/// `@SECLEVEL=3`). `None` at level 0.
pub fn min_key_bits(level: u8) -> Option<(u32, u32)> {
    Some(match level {
        0 => return None,
        1 => (1024, 160),
        2 => (2048, 224),
        3 => (3072, 256),
        4 => (7680, 384),
        _ => (15360, 512),
    })
}

/// Every profile name `--policy` takes, versioned and not.
pub fn mozilla_profile_names() -> Vec<String> {
    let mut out = Vec::new();
    for (version, json) in MOZILLA_JSON {
        if let Ok(doc) = serde_json::from_str::<MozillaDoc>(json) {
            for name in ["modern", "intermediate", "old"] {
                if doc.configurations.contains_key(name) {
                    if version == MOZILLA_GUIDELINES_VERSION {
                        out.push(format!("mozilla-{name}"));
                    }
                    out.push(format!("mozilla-{name}-{version}"));
                }
            }
        }
    }
    out
}

/// Apache 2.4 mod_ssl's default `SSLProtocol` (2.4.x documentation).
pub const APACHE_DEFAULT_PROTOCOLS: &str = "all -SSLv3";
/// Apache 2.4 mod_ssl's default `SSLCipherSuite`.
pub const APACHE_DEFAULT_CIPHERS: &str = "DEFAULT";
/// nginx's default `ssl_protocols` before 1.23.4 (1.22 on Debian 12, checked with the real
/// server: no TLSv1.3 unless listed). Debian's `nginx.conf` lists all four explicitly.
pub const NGINX_DEFAULT_PROTOCOLS: &str = "TLSv1 TLSv1.1 TLSv1.2";
/// What mod_ssl appends to every `SSLCipherSuite` (and to its default): anonymous, NULL
/// and export suites are never enabled on Apache.
pub const APACHE_CIPHER_SUFFIX: &str = ":!aNULL:!eNULL:!EXP";
/// nginx's default `ssl_ciphers`.
pub const NGINX_DEFAULT_CIPHERS: &str = "HIGH:!aNULL:!MD5";
/// OpenSSL's default TLS 1.3 `Ciphersuites`.
pub const OPENSSL_DEFAULT_CIPHERSUITES: &str =
    "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256";

/// Which kind of policy this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A Mozilla profile: plain lists.
    Mozilla,
    /// Apache mod_ssl directives.
    Apache,
    /// nginx directives.
    Nginx,
    /// A bare OpenSSL cipher string (`openssl ciphers` semantics, every protocol on).
    OpenSsl,
}

/// A DH parameters file the directives of a policy name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DhFile {
    /// As written (a relative path is the server's: nginx's prefix, Apache's
    /// `ServerRoot`).
    pub path: String,
    /// Its line in the directives.
    pub line: usize,
    /// `ssl_dhparam`, `SSLOpenSSLConfCmd DHParameters`, `ssl_conf_command DHParameters`.
    pub directive: String,
}

/// A set of protocols and suites a server would accept.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// `mozilla-intermediate`, or `apache`/`nginx` for directives.
    pub name: String,
    /// Where the policy comes from.
    pub source: Source,
    /// The profile's version (`6.0`), if any.
    pub version: Option<String>,
    /// Protocols a handshake can use: [`Policy::configured_protocols`] less those the
    /// security level refuses.
    pub protocols: Vec<Protocol>,
    /// Protocols the directives (or the profile) enable.
    pub configured_protocols: Vec<Protocol>,
    /// TLS <= 1.2 suites a handshake can pick, in preference order: [`Policy::listed12`]
    /// less what the security level refuses and what OpenSSL 3 does not have.
    pub tls12: Vec<&'static Suite>,
    /// TLS <= 1.2 suites the cipher string (or profile) lists, in order.
    pub listed12: Vec<&'static Suite>,
    /// TLS 1.3 suites a handshake can pick.
    pub tls13: Vec<&'static Suite>,
    /// TLS 1.3 suites configured (`Ciphersuites`, or the profile's).
    pub listed13: Vec<&'static Suite>,
    /// Where [`Policy::listed13`] comes from, for people: the directive that set it
    /// (`ssl_conf_command Ciphersuites`, `SSLCipherSuite TLSv1.3`, ...), else
    /// `the system Ciphersuites (openssl.cnf)` or `OpenSSL's default Ciphersuites`, so
    /// that a refusal does not name a directive the configuration does not have.
    pub listed13_origin: String,
    /// The OpenSSL security level directives are applied at (`None` for profiles, which
    /// are plain lists).
    pub seclevel: Option<u8>,
    /// Where the level comes from (`@SECLEVEL=1 in the cipher string`, ...).
    pub seclevel_origin: Option<String>,
    /// Whether OpenSSL 3 behaviour applies (see the module docs).
    pub openssl3: bool,
    /// Key-exchange groups the profile names, in order (empty: not stated).
    pub groups: Vec<String>,
    /// The server's key-exchange groups, in its order: the profile's, `ssl_ecdh_curve`,
    /// `SSLOpenSSLConfCmd Groups|Curves`, `ssl_conf_command Groups|Curves`, else OpenSSL
    /// 3.0's default list. Groups tlsgap does not know are left out.
    pub key_groups: Vec<&'static Group>,
    /// The server picks the suite (and group) in its own order
    /// (`ssl_prefer_server_ciphers on`, `SSLHonorCipherOrder on`, a profile's
    /// `server_preferred_order`); off by default in both servers.
    pub prefer_server_ciphers: bool,
    /// nginx without `ssl_dhparam`: DHE suites cannot be negotiated.
    pub no_dh_parameters: bool,
    /// The DH parameters file the directives name (`ssl_dhparam`, `SSLOpenSSLConfCmd
    /// DHParameters`, `ssl_conf_command DHParameters`), which the server loads at
    /// start: [`Policy::check_dh_parameters`] holds it to the security level.
    pub dh_file: Option<DhFile>,
    /// What [`Policy::check_dh_parameters`] found, in words (`None`: not checked).
    pub dh_parameters: Option<String>,
    /// TLSv1.3 is the newest protocol on but no TLS 1.3 suite is configured
    /// (`Ciphersuites ""`, which OpenSSL accepts): before each handshake an OpenSSL
    /// server checks that some suite fits its newest protocol and fails the handshake
    /// otherwise ("no ciphers enabled for max supported SSL/TLS version"), so **every**
    /// handshake fails, TLS 1.2 ones included.
    pub no_suite_for_newest_protocol: bool,
    /// Words of the cipher string that named nothing and were skipped, then the
    /// `ssl_conf_command`/`SSLOpenSSLConfCmd` commands tlsgap does not model (as
    /// `ssl_conf_command Options`): the policy may be wrong about what they change, and
    /// the user has to see them.
    pub ignored_words: Vec<String>,
    /// The cipher string, as configured (or the server's default), for directives.
    pub cipher_string: Option<String>,
    /// The suite table the policy was built over.
    pub over: &'static [Suite],
    /// Per suite of [`Policy::over`]: the element of the cipher string that last changed
    /// it (empty for profiles).
    pub steps: Vec<Option<Step>>,
}

/// One suite of [`Policy::expand`]: in or out, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Expanded {
    /// The suite.
    pub suite: &'static Suite,
    /// `None`: a handshake may pick it; else why not (a suite reason).
    pub refused: Option<Reason>,
    /// The element of the cipher string that last added, removed or killed it.
    pub step: Option<Step>,
}

/// What a policy says of one logged (protocol, cipher).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Would still be negotiated.
    Allowed,
    /// The protocol is disabled (or refused by the security level).
    RefusedProtocol,
    /// The protocol is on, the suite is not.
    RefusedCipher,
    /// The protocol or suite is not in the catalogue.
    Unknown,
}

/// Why a policy refuses a handshake (the first reason OpenSSL would meet).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The protocol is not enabled (`SSLProtocol`, `ssl_protocols`, the profile).
    ProtocolNotEnabled,
    /// The protocol is enabled, but the security level refuses it.
    ProtocolSecurityLevel,
    /// The protocol is enabled, but OpenSSL 3 (as distributions build it) has no SSLv3.
    ProtocolNotInOpenssl3,
    /// The suite cannot be used with the protocol (a TLS 1.2 suite under TLSv1, a TLS 1.3
    /// suite under TLSv1.2, ...).
    SuiteNotForProtocol,
    /// The cipher string (or profile) does not list the suite.
    SuiteNotListed,
    /// Listed, but OpenSSL 3 does not have the suite (RC4, 3DES, ...).
    SuiteNotInOpenssl3,
    /// Listed, but the security level refuses it.
    SuiteSecurityLevel,
    /// A DHE suite on nginx without `ssl_dhparam`.
    NoDhParameters,
    /// TLSv1.3 is on but no TLS 1.3 suite is: OpenSSL fails every handshake (see
    /// [`Policy::no_suite_for_newest_protocol`]).
    NoSuiteForNewestProtocol,
}

impl Reason {
    /// The machine name (`protocol_not_enabled`, ...), as JSON, CSV and Parquet write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::ProtocolNotEnabled => "protocol_not_enabled",
            Reason::ProtocolSecurityLevel => "protocol_security_level",
            Reason::ProtocolNotInOpenssl3 => "protocol_not_in_openssl3",
            Reason::SuiteNotForProtocol => "suite_not_for_protocol",
            Reason::SuiteNotListed => "suite_not_listed",
            Reason::SuiteNotInOpenssl3 => "suite_not_in_openssl3",
            Reason::SuiteSecurityLevel => "suite_security_level",
            Reason::NoDhParameters => "no_dh_parameters",
            Reason::NoSuiteForNewestProtocol => "no_suite_for_newest_protocol",
        }
    }

    /// Every reason, in the order they are checked.
    pub const ALL: [Reason; 9] = [
        Reason::ProtocolNotEnabled,
        Reason::ProtocolNotInOpenssl3,
        Reason::ProtocolSecurityLevel,
        Reason::NoSuiteForNewestProtocol,
        Reason::SuiteNotForProtocol,
        Reason::SuiteNotListed,
        Reason::SuiteNotInOpenssl3,
        Reason::SuiteSecurityLevel,
        Reason::NoDhParameters,
    ];
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
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigOptions {
    /// The security level in force unless the cipher string sets `@SECLEVEL=N` (the
    /// system default of the server's OpenSSL).
    pub default_seclevel: u8,
    /// The TLS 1.3 suites in force unless the directives set them (`Ciphersuites` of the
    /// server's `openssl.cnf`, see [`crate::opensslcnf`]); `None`:
    /// [`OPENSSL_DEFAULT_CIPHERSUITES`].
    pub default_ciphersuites: Option<String>,
    /// Apply OpenSSL 3 behaviour: no SSLv3, no TLSv1/TLSv1.1 at security level >= 1, only
    /// the suites OpenSSL 3 has.
    pub openssl3: bool,
}

impl Default for ConfigOptions {
    fn default() -> Self {
        ConfigOptions {
            default_seclevel: DEBIAN_DEFAULT_SECLEVEL,
            default_ciphersuites: None,
            openssl3: true,
        }
    }
}

#[derive(Deserialize)]
struct MozillaDoc {
    configurations: std::collections::BTreeMap<String, MozillaConfig>,
}

#[derive(Deserialize)]
struct MozillaConfig {
    ciphers: MozillaCiphers,
    ciphersuites: Vec<String>,
    tls_versions: Vec<String>,
    #[serde(default)]
    tls_curves: Vec<String>,
    #[serde(default)]
    server_preferred_order: bool,
}

#[derive(Deserialize)]
struct MozillaCiphers {
    openssl: Vec<String>,
}

/// The suite of `suites` named `name` (OpenSSL name, alias or IANA name), not SSLv2.
fn find(suites: &'static [Suite], name: &str) -> Option<&'static Suite> {
    suites.iter().find(|s| {
        !s.sslv2_code && (s.openssl.iter().any(|n| n == name) || s.iana.as_deref() == Some(name))
    })
}

fn find_all(
    suites: &'static [Suite],
    names: &[String],
) -> Result<Vec<&'static Suite>, PolicyError> {
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

fn dhe(suite: &Suite) -> bool {
    let kx = suite.kx.split('(').next().unwrap_or("").trim();
    matches!(kx, "DH" | "DHE" | "EDH") && !suite.au.trim().eq_ignore_ascii_case("DH")
}

/// Whether `level` refuses `protocol` (see the module docs).
fn protocol_refused_at(protocol: Protocol, level: u8, openssl3: bool) -> bool {
    let legacy = matches!(
        protocol,
        Protocol::SslV3 | Protocol::TlsV1 | Protocol::TlsV1_1
    );
    if openssl3 && legacy && level >= 1 {
        return true;
    }
    match protocol {
        Protocol::SslV3 => level >= 2,
        Protocol::TlsV1 => level >= 3,
        Protocol::TlsV1_1 => level >= 4,
        _ => false,
    }
}

/// Parse `mozilla-intermediate`, `intermediate-5.7`, ... into (profile, version).
fn profile_and_version(name: &str) -> (&str, Option<&str>) {
    let short = name.strip_prefix("mozilla-").unwrap_or(name);
    match short.rsplit_once('-') {
        Some((p, v)) if v.starts_with(|c: char| c.is_ascii_digit()) => (p, Some(v)),
        _ => (short, None),
    }
}

impl Policy {
    /// A Mozilla Server Side TLS profile from the vendored guideline JSON
    /// (`crates/ciphers/data/mozilla/`): `mozilla-modern` and `mozilla-intermediate`
    /// follow [`MOZILLA_GUIDELINES_VERSION`]; a version suffix picks another one
    /// (`mozilla-intermediate-5.7`, `mozilla-old-5.7`). The `mozilla-` prefix may be left
    /// out. Guideline 6.0 has no `old` profile: `mozilla-old` is an error that names
    /// `mozilla-old-5.7`.
    pub fn mozilla(name: &str) -> Result<Policy, PolicyError> {
        Policy::mozilla_over(name, catalogue::all())
    }

    /// [`Policy::mozilla`] with the suites taken from `suites` instead of the catalogue.
    pub fn mozilla_over(name: &str, suites: &'static [Suite]) -> Result<Policy, PolicyError> {
        let (profile, version) = profile_and_version(name);
        let version = version.unwrap_or(MOZILLA_GUIDELINES_VERSION);
        let known = mozilla_profile_names().join(", ");
        let Some((_, json)) = MOZILLA_JSON.iter().find(|(v, _)| *v == version) else {
            return Err(err(
                format!("no Mozilla guideline version {version} (profiles: {known})"),
                None,
            ));
        };
        let doc: MozillaDoc = serde_json::from_str(json)
            .map_err(|e| err(format!("Mozilla guideline {version}: {e}"), None))?;
        let Some(config) = doc.configurations.get(profile) else {
            let hint = if profile == "old" {
                format!(
                    "; Mozilla's guideline {version} has no `old` profile (removed in 6.0): \
                     mozilla-old-5.7 is the last one"
                )
            } else {
                String::new()
            };
            return Err(err(
                format!("unknown profile `{name}`{hint} (profiles: {known})"),
                None,
            ));
        };
        let mut protocols = Vec::new();
        for v in &config.tls_versions {
            let p = Protocol::parse(v)
                .ok_or_else(|| err(format!("Mozilla guideline {version}: protocol {v}"), None))?;
            protocols.push(p);
        }
        let tls12 = find_all(suites, &config.ciphers.openssl)?;
        let tls13 = find_all(suites, &config.ciphersuites)?;
        let versioned = version != MOZILLA_GUIDELINES_VERSION || name.ends_with(version);
        Ok(Policy {
            name: if versioned {
                format!("mozilla-{profile}-{version}")
            } else {
                format!("mozilla-{profile}")
            },
            source: Source::Mozilla,
            version: Some(version.to_string()),
            configured_protocols: protocols.clone(),
            protocols,
            listed12: tls12.clone(),
            tls12,
            listed13: tls13.clone(),
            tls13,
            listed13_origin: "the profile".to_string(),
            seclevel: None,
            seclevel_origin: None,
            openssl3: false,
            groups: config.tls_curves.clone(),
            key_groups: config
                .tls_curves
                .iter()
                .filter_map(|n| groups::by_name(n))
                .collect(),
            prefer_server_ciphers: config.server_preferred_order,
            no_dh_parameters: false,
            dh_file: None,
            dh_parameters: None,
            no_suite_for_newest_protocol: false,
            ignored_words: Vec::new(),
            cipher_string: None,
            over: suites,
            steps: Vec::new(),
        })
    }

    /// The policy of pasted Apache (`SSLProtocol`, `SSLCipherSuite`, `SSLHonorCipherOrder`,
    /// `SSLOpenSSLConfCmd`) or nginx (`ssl_protocols`, `ssl_ciphers`, `ssl_conf_command`,
    /// `ssl_dhparam`, `ssl_ecdh_curve`, `ssl_prefer_server_ciphers`) directives, with
    /// [`ConfigOptions::default`]. Other lines, comments and `SSLProxy*` directives are
    /// ignored; a later directive overrides an earlier one, except that nginx ORs the
    /// `ssl_protocols` of one block and refuses two `ssl_ciphers` in one block; a missing
    /// directive takes the server's documented default (`APACHE_DEFAULT_*`,
    /// `NGINX_DEFAULT_*`, [`OPENSSL_DEFAULT_CIPHERSUITES`]).
    ///
    /// The conf commands `CipherString`, `Ciphersuites`, `Groups`/`Curves`, `MinProtocol`,
    /// `MaxProtocol` and `Protocol` are applied after the server's own directives, as
    /// both servers do, whatever their place in the text; other commands are listed in
    /// [`Policy::ignored_words`]. Apache lines ending in `\` continue on the next line,
    /// and a `#` after an Apache directive is an error (Apache takes it as an argument).
    pub fn from_config(text: &str) -> Result<Policy, PolicyError> {
        Policy::from_config_with(text, ConfigOptions::default(), catalogue::all())
    }

    /// A bare OpenSSL cipher string, as `openssl ciphers -s` reads it: every protocol
    /// OpenSSL has enabled, OpenSSL's default TLS 1.3 suites, no server additions.
    pub fn from_cipher_string(
        cipher_string: &str,
        options: ConfigOptions,
        suites: &'static [Suite],
    ) -> Result<Policy, PolicyError> {
        if cipher_string.contains(['"', '\'', ';', '\n']) {
            return Err(err(
                format!("`{cipher_string}` is not a cipher string (quotes, `;` or a newline)"),
                None,
            ));
        }
        let text = format!(
            "ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;\nssl_ciphers \"{cipher_string}\";\nssl_dhparam given;"
        );
        let mut p = Policy::from_config_with(&text, options, suites).map_err(|mut e| {
            e.line = None;
            e.message = e
                .message
                .replace("nginx would refuse the configuration (SSL_CTX_set_cipher_list ... no cipher match)", "OpenSSL refuses it (no cipher match)");
            e
        })?;
        p.name = "openssl".to_string();
        p.source = Source::OpenSsl;
        p.dh_file = None;
        Ok(p)
    }

    /// The groups of [`Policy::key_groups`] that an OpenSSL older than 3.5 does not
    /// have (ML-KEM, alone or in a hybrid such as `X25519MLKEM768`, Mozilla 6.0's first
    /// group): OpenSSL 3.0 (Debian 12, Ubuntu 22.04 and 24.04) refuses a group list that
    /// names one, and the server does not start (nginx 1.22.1 on OpenSSL 3.0.22:
    /// `SSL_CTX_set1_curves_list(...) failed ... group 'X25519MLKEM768' cannot be set`).
    /// The server's OpenSSL version is not known here: this is said, not decided.
    pub fn groups_needing_openssl_3_5(&self) -> Vec<&'static str> {
        self.key_groups
            .iter()
            .filter(|g| {
                matches!(
                    g.kind,
                    groups::GroupKind::HybridPostQuantum | groups::GroupKind::PostQuantum
                )
            })
            .map(|g| g.name)
            .collect()
    }

    /// Hold the DH parameters file ([`Policy::dh_file`]) to the security level, as the
    /// server does when it loads it at start. `text` is the file as read where tlsgap
    /// runs (`Err`: why it could not be read; the check is then left out, and
    /// [`Policy::dh_parameters`] says so). Parameters the server would not load are an
    /// error that says it would not start: weaker than the level allows (`dh key too
    /// small`, nginx and Apache alike), or X9.42 parameters given to Apache's
    /// `SSLOpenSSLConfCmd DHParameters`, which cannot decode them (both verified
    /// against the real servers, `scripts/real-policies.py`).
    pub fn check_dh_parameters(&mut self, text: Result<&str, String>) -> Result<(), PolicyError> {
        let Some(file) = &self.dh_file else {
            return Ok(());
        };
        let named = format!("{} {}", file.directive, file.path);
        let refuses = if self.name == "apache" {
            Server::Apache.refuses()
        } else {
            Server::Nginx.refuses()
        };
        let read = text.and_then(|t| {
            crate::dhparams::parse(t).map_err(|why| format!("not DH parameters: {why}"))
        });
        let params = match read {
            Ok(p) => p,
            Err(why) => {
                self.dh_parameters = Some(format!(
                    "{named}: not read here ({why}): its strength is not checked against \
                     the security level"
                ));
                return Ok(());
            }
        };
        let apache_conf_cmd =
            self.name == "apache" && file.directive.starts_with("SSLOpenSSLConfCmd");
        if apache_conf_cmd && params.form == crate::dhparams::Form::X942 {
            return Err(err(
                format!(
                    "{named}: X9.42 DH parameters (what `openssl dhparam -dsaparam` writes), \
                     which SSLOpenSSLConfCmd DHParameters cannot decode (AH02407): {refuses}"
                ),
                Some(file.line),
            ));
        }
        let bits = params.security_bits();
        let level = self.seclevel.unwrap_or(0);
        if let Some(need) = crate::dhparams::level_bits(level).filter(|&need| bits < need) {
            return Err(err(
                format!(
                    "{named}: {}-bit DH parameters have {bits} bits of security, security \
                     level {level} needs {need} (`dh key too small`): {refuses}",
                    params.prime_bits
                ),
                Some(file.line),
            ));
        }
        self.dh_parameters = Some(format!(
            "{}-bit, {bits} bits of security ({named})",
            params.prime_bits
        ));
        Ok(())
    }

    /// [`Policy::from_config`] with explicit options and suite table.
    pub fn from_config_with(
        text: &str,
        options: ConfigOptions,
        suites: &'static [Suite],
    ) -> Result<Policy, PolicyError> {
        let (kind, d) = Directives::read(text)?;
        let (server, source, protocols) = match kind {
            Server::Apache => (
                "apache",
                Source::Apache,
                apache_protocols(
                    d.protocols.as_deref().unwrap_or(APACHE_DEFAULT_PROTOCOLS),
                    d.protocols_line,
                    options.openssl3,
                )?,
            ),
            Server::Nginx => (
                "nginx",
                Source::Nginx,
                nginx_protocols(
                    d.protocols.as_deref().unwrap_or(NGINX_DEFAULT_PROTOCOLS),
                    d.protocols_line,
                )?,
            ),
        };
        let protocols = apply_protocol_commands(kind, &protocols, &d.conf_protocols);
        let default_ciphers = match kind {
            Server::Apache => APACHE_DEFAULT_CIPHERS,
            Server::Nginx => NGINX_DEFAULT_CIPHERS,
        };
        let directive_string = d.ciphers.as_deref().unwrap_or(default_ciphers);
        let effective_string = match kind {
            Server::Apache => format!("{directive_string}{APACHE_CIPHER_SUFFIX}"),
            Server::Nginx => directive_string.to_string(),
        };
        let mut evaluated = evaluate_directive_string(
            kind,
            directive_string,
            &effective_string,
            d.ciphers_line,
            options.default_seclevel,
            options.openssl3,
            suites,
        )?;
        let mut cipher_string = directive_string;
        let mut any_seclevel = directive_string.contains("@SECLEVEL=");
        if let Some((conf_string, line)) = &d.conf_cipher_string {
            // The server has set its own string first (and failed on it if it matched
            // nothing); the conf command's `CipherString` then replaces the list as
            // written (mod_ssl adds nothing to it) and keeps the level unless it sets one.
            evaluated = evaluate_directive_string(
                kind,
                conf_string,
                conf_string,
                Some(*line),
                evaluated.seclevel,
                options.openssl3,
                suites,
            )?;
            cipher_string = conf_string;
            any_seclevel |= conf_string.contains("@SECLEVEL=");
        }
        let level = evaluated.seclevel;
        let listed12: Vec<&'static Suite> = evaluated.listed.iter().map(|&i| &suites[i]).collect();
        let tls12 = evaluated
            .order
            .iter()
            .map(|&i| &suites[i])
            .filter(|s| !options.openssl3 || s.in_openssl3)
            .collect();

        let (configured13, configured13_line) = match (&d.conf_ciphersuites, &d.ciphersuites) {
            (Some((v, line)), _) => (Some(v.as_str()), Some(*line)),
            (None, Some(v)) => (Some(v.as_str()), d.ciphersuites_line),
            // A system `Ciphersuites` no suite of which OpenSSL knows fails as well.
            (None, None) => (options.default_ciphersuites.as_deref(), None),
        };
        let listed13_origin = match (&d.conf_ciphersuites, &d.ciphersuites) {
            (Some(_), _) => format!("{} Ciphersuites", kind.conf_directive()),
            (None, Some(_)) => "SSLCipherSuite TLSv1.3".to_string(),
            (None, None) if options.default_ciphersuites.is_some() => {
                "the system Ciphersuites (openssl.cnf)".to_string()
            }
            (None, None) => "OpenSSL's default Ciphersuites".to_string(),
        };
        let suites13 = configured13.unwrap_or(OPENSSL_DEFAULT_CIPHERSUITES);
        let mut listed13: Vec<&'static Suite> = Vec::new();
        for name in suites13.split(':').map(str::trim).filter(|n| !n.is_empty()) {
            // OpenSSL ignores TLS 1.3 names it does not know, and TLS <= 1.2 names here.
            if let Some(s) = find(suites, name).filter(|s| s.min_protocol == Protocol::TlsV1_3) {
                if !listed13.iter().any(|t| same(t, s)) {
                    listed13.push(s);
                }
            }
        }
        // OpenSSL takes an empty `Ciphersuites` (no TLS 1.3 suite), and refuses a
        // non-empty one that names no suite it knows.
        if listed13.is_empty() && configured13.is_some_and(|v| !v.is_empty()) {
            return Err(err(
                format!("no TLS 1.3 suite in `{suites13}`"),
                configured13_line,
            ));
        }
        let tls13 = listed13
            .iter()
            .copied()
            .filter(|s| cipherstring::allowed_at_seclevel(s, level))
            .collect();

        let (groups_list, groups_line) = match &d.conf_groups {
            Some((v, line)) => (Some(v), Some(*line)),
            None => (d.groups.as_ref(), d.groups_line),
        };
        let key_groups = match groups_list {
            None => groups::openssl30_default(),
            Some(list) => {
                let mut out = Vec::new();
                for name in list.split(':').map(str::trim).filter(|n| !n.is_empty()) {
                    match groups::by_name(name) {
                        Some(g) => out.push(g),
                        None => {
                            return Err(err(
                                format!(
                                "unknown group `{name}` in `{list}`: the server would refuse it"
                            ),
                                groups_line,
                            ))
                        }
                    }
                }
                out
            }
        };
        let configured: Vec<Protocol> = protocols
            .into_iter()
            .filter(|p| *p != Protocol::SslV2)
            .collect();
        // OpenSSL's newest protocol comes from the protocol options, not the level.
        let no_suite_for_newest_protocol =
            listed13.is_empty() && configured.iter().max() == Some(&Protocol::TlsV1_3);
        let effective = configured
            .iter()
            .copied()
            .filter(|p| !(options.openssl3 && *p == Protocol::SslV3))
            .filter(|p| !protocol_refused_at(*p, level, options.openssl3))
            .collect();
        let origin = if any_seclevel {
            format!("@SECLEVEL={level} in the cipher string")
        } else {
            "the system default".to_string()
        };
        Ok(Policy {
            name: server.to_string(),
            source,
            version: None,
            protocols: effective,
            configured_protocols: configured,
            tls12,
            listed12,
            tls13,
            listed13,
            listed13_origin,
            seclevel: Some(level),
            seclevel_origin: Some(origin),
            openssl3: options.openssl3,
            groups: Vec::new(),
            key_groups,
            prefer_server_ciphers: d.prefer_server,
            no_dh_parameters: kind == Server::Nginx && !d.dhparam,
            dh_file: d.dh_file.map(|(path, line, directive)| DhFile {
                path,
                line,
                directive,
            }),
            dh_parameters: None,
            no_suite_for_newest_protocol,
            ignored_words: evaluated
                .ignored
                .into_iter()
                .chain(d.ignored_commands)
                .collect(),
            cipher_string: Some(cipher_string.to_string()),
            over: suites,
            steps: evaluated.steps,
        })
    }

    /// Every suite the policy lists or its cipher string touched, as `openssl ciphers -v`
    /// would expand it, with why each is in or out: first the TLS 1.3 suites (configured,
    /// then the others OpenSSL 3 has), then the TLS <= 1.2 suites the string lists in its
    /// order, then those it named but left out (killed, removed) and, under OpenSSL 3,
    /// those it never named, in catalogue order.
    pub fn expand(&self) -> Vec<Expanded> {
        let mut out: Vec<Expanded> = Vec::new();
        let probe = |s: &'static Suite| -> Expanded {
            let p = if s.min_protocol == Protocol::TlsV1_3 {
                Protocol::TlsV1_3
            } else {
                Protocol::TlsV1_2
            };
            let step = self
                .over
                .iter()
                .position(|o| same(o, s))
                .and_then(|i| self.steps.get(i).cloned().flatten());
            let refused = match self.judge_suite(p, s) {
                Some(Reason::SuiteNotForProtocol) => None,
                r => r,
            };
            Expanded {
                suite: s,
                refused,
                step,
            }
        };
        let seen = |s: &Suite, out: &[Expanded]| out.iter().any(|e| same(e.suite, s));
        for s in &self.listed13 {
            out.push(probe(s));
        }
        for s in self.over.iter() {
            if s.min_protocol == Protocol::TlsV1_3 && s.iana.is_some() && !seen(s, &out) {
                // OpenSSL 3 knows the AES-CCM TLS 1.3 suites, though its default list
                // leaves them out.
                let in_openssl3 =
                    s.in_openssl3 || s.iana.as_deref().is_some_and(|n| n.starts_with("TLS_AES_"));
                if in_openssl3 {
                    out.push(probe(s));
                }
            }
        }
        for s in &self.listed12 {
            out.push(probe(s));
        }
        for (i, s) in self.over.iter().enumerate() {
            if s.sslv2_code || s.min_protocol == Protocol::TlsV1_3 || seen(s, &out) {
                continue;
            }
            // Under OpenSSL 3, suites it does not have matter only when listed (above),
            // and every suite it has is shown; otherwise what the string touched.
            let touched = self.steps.get(i).is_some_and(Option::is_some);
            let shown = if self.openssl3 {
                s.in_openssl3
            } else {
                touched
            };
            if shown {
                out.push(probe(s));
            }
        }
        out
    }

    /// [`Policy::judge`] without the protocol checks: whether the suite itself is usable.
    fn judge_suite(&self, protocol: Protocol, suite: &Suite) -> Option<Reason> {
        if self.no_suite_for_newest_protocol {
            return Some(Reason::NoSuiteForNewestProtocol);
        }
        let tls13_suite = suite.min_protocol == Protocol::TlsV1_3;
        let (listed, usable) = if tls13_suite {
            (&self.listed13, &self.tls13)
        } else {
            (&self.listed12, &self.tls12)
        };
        if (protocol == Protocol::TlsV1_3) != tls13_suite || suite.min_protocol > protocol {
            return Some(Reason::SuiteNotForProtocol);
        }
        if !listed.iter().any(|s| same(s, suite)) {
            return Some(Reason::SuiteNotListed);
        }
        if !usable.iter().any(|s| same(s, suite)) {
            if self.openssl3 && !tls13_suite && !suite.in_openssl3 {
                return Some(Reason::SuiteNotInOpenssl3);
            }
            return Some(Reason::SuiteSecurityLevel);
        }
        if self.no_dh_parameters && !tls13_suite && dhe(suite) {
            return Some(Reason::NoDhParameters);
        }
        None
    }

    /// The name with the guideline version when it is a profile
    /// (`mozilla-intermediate 6.0`).
    pub fn title(&self) -> String {
        match (&self.version, self.source) {
            (Some(v), Source::Mozilla) if !self.name.ends_with(v.as_str()) => {
                format!("{} {v}", self.name)
            }
            _ => self.name.clone(),
        }
    }

    /// What this policy says of a logged `protocol` (`TLSv1.2`, `TLS1.2`, ...) and
    /// `cipher` (OpenSSL or IANA name), looked up in the catalogue.
    pub fn decide(&self, protocol: &str, cipher: &str) -> Decision {
        self.explain(protocol, cipher).0
    }

    /// [`Policy::decide`] with the reason of a refusal.
    pub fn explain(&self, protocol: &str, cipher: &str) -> (Decision, Option<Reason>) {
        let Some(p) = Protocol::parse(protocol) else {
            return (Decision::Unknown, None);
        };
        match catalogue::lookup(protocol, cipher) {
            Some(suite) => {
                let reason = self.judge(p, suite);
                (decision_of(reason), reason)
            }
            // A suite the catalogue does not know, on a protocol this policy turns off:
            // refused whatever the suite (audit of 2026-11-28: `TLSv1 FOO` was
            // "undecided" under a TLS 1.2+ policy, not counted as refused).
            None => match self.judge_protocol(p) {
                Some(reason) => (decision_of(Some(reason)), Some(reason)),
                None => (Decision::Unknown, None),
            },
        }
    }

    /// What this policy says of `suite` negotiated under `protocol`.
    pub fn decide_suite(&self, protocol: Protocol, suite: &Suite) -> Decision {
        decision_of(self.judge(protocol, suite))
    }

    /// Why this policy refuses `suite` under `protocol` (the first reason OpenSSL meets),
    /// or `None` when the handshake would succeed.
    pub fn judge(&self, protocol: Protocol, suite: &Suite) -> Option<Reason> {
        self.judge_protocol(protocol)
            .or_else(|| self.judge_suite(protocol, suite))
    }

    /// Why this policy refuses every handshake of `protocol`, whatever the suite.
    fn judge_protocol(&self, protocol: Protocol) -> Option<Reason> {
        if !self.configured_protocols.contains(&protocol) {
            return Some(Reason::ProtocolNotEnabled);
        }
        if !self.protocols.contains(&protocol) {
            if self.openssl3 && protocol == Protocol::SslV3 {
                return Some(Reason::ProtocolNotInOpenssl3);
            }
            return Some(Reason::ProtocolSecurityLevel);
        }
        None
    }

    /// What sets the protocols and what the suites, as this policy's source names them.
    fn directives(&self) -> (&'static str, &'static str) {
        match self.source {
            Source::Apache => ("SSLProtocol", "SSLCipherSuite"),
            Source::Nginx => ("ssl_protocols", "ssl_ciphers"),
            Source::Mozilla => ("the profile", "the profile"),
            Source::OpenSsl => ("the protocols", "the cipher string"),
        }
    }

    /// A sentence for a `reason` that refuses all of `protocol` whatever the suite
    /// (`None` for a reason about the suite).
    pub fn describe_protocol(&self, reason: Reason, protocol: Protocol) -> Option<String> {
        let level = self.seclevel.unwrap_or(0);
        let (proto_directive, _) = self.directives();
        Some(match reason {
            Reason::ProtocolNotEnabled => {
                format!("{} is not enabled ({proto_directive})", protocol.as_str())
            }
            Reason::ProtocolNotInOpenssl3 => {
                format!("OpenSSL 3 has no {} (built without it)", protocol.as_str())
            }
            Reason::ProtocolSecurityLevel if self.openssl3 && protocol < Protocol::TlsV1_2 => {
                format!(
                    "security level {level}: OpenSSL 3 refuses TLSv1 and TLSv1.1 from level 1 up"
                )
            }
            Reason::ProtocolSecurityLevel => {
                format!("security level {level} refuses {}", protocol.as_str())
            }
            _ => return None,
        })
    }

    /// A sentence for `reason` about `suite` under `protocol` under this policy. It does
    /// not repeat the suite's name, so that rows refused for the same cause share it.
    pub fn describe(&self, reason: Reason, protocol: Protocol, suite: &Suite) -> String {
        if let Some(why) = self.describe_protocol(reason, protocol) {
            return why;
        }
        let level = self.seclevel.unwrap_or(0);
        let (_, cipher_directive) = self.directives();
        let cipher_directive = if suite.min_protocol == Protocol::TlsV1_3 {
            match self.source {
                Source::Apache | Source::Nginx | Source::OpenSsl => self.listed13_origin.as_str(),
                Source::Mozilla => "the profile",
            }
        } else {
            cipher_directive
        };
        match reason {
            Reason::SuiteNotForProtocol => {
                format!("suite cannot be negotiated under {}", protocol.as_str())
            }
            Reason::SuiteNotListed => format!("suite not in {cipher_directive}"),
            Reason::SuiteNotInOpenssl3 => {
                "suite listed, but OpenSSL 3 no longer has it".to_string()
            }
            Reason::SuiteSecurityLevel => format!(
                "security level {level} refuses the suite ({})",
                cipherstring::seclevel_refusal(suite, level).unwrap_or("below the level")
            ),
            Reason::NoDhParameters => {
                "DHE suite: nginx offers DHE only with ssl_dhparam".to_string()
            }
            Reason::NoSuiteForNewestProtocol => format!(
                "TLSv1.3 is on with no TLS 1.3 suite ({} empty): OpenSSL fails every \
                 handshake (no ciphers enabled for max supported SSL/TLS version)",
                self.listed13_origin
            ),
            // Said by `describe_protocol` above.
            Reason::ProtocolNotEnabled
            | Reason::ProtocolNotInOpenssl3
            | Reason::ProtocolSecurityLevel => format!("{} refused", protocol.as_str()),
        }
    }
}

/// Evaluate a cipher string a server sets (`string` as configured, `effective` as the
/// server hands it to OpenSSL) at `default_seclevel`; a string that leaves no TLS <= 1.2
/// suite OpenSSL 3 has is the server's error.
fn evaluate_directive_string(
    kind: Server,
    string: &str,
    effective: &str,
    line: Option<usize>,
    default_seclevel: u8,
    openssl3: bool,
    suites: &'static [Suite],
) -> Result<cipherstring::Evaluated, PolicyError> {
    let evaluated = cipherstring::evaluate_over(effective, suites, default_seclevel)
        .map_err(|e| err(format!("cipher string `{string}`: {}", e.message), line))?;
    let listed: Vec<&'static Suite> = evaluated.listed.iter().map(|&i| &suites[i]).collect();
    if openssl3 && !listed.iter().any(|s| s.in_openssl3) {
        let names: Vec<&str> = listed
            .iter()
            .take(4)
            .filter_map(|s| s.openssl.first().map(String::as_str))
            .collect();
        let what = match kind {
            Server::Apache => {
                "Apache would not start (AH01898: Unable to configure permitted SSL ciphers)"
            }
            Server::Nginx => {
                "nginx would refuse the configuration (SSL_CTX_set_cipher_list ... no cipher match)"
            }
        };
        return Err(err(
            format!(
                "cipher string `{string}` matches no suite OpenSSL 3 has (it names {}{}): {what}",
                names.join(", "),
                if listed.len() > 4 { ", ..." } else { "" }
            ),
            line,
        ));
    }
    Ok(evaluated)
}

fn decision_of(reason: Option<Reason>) -> Decision {
    match reason {
        None => Decision::Allowed,
        Some(
            Reason::ProtocolNotEnabled
            | Reason::ProtocolSecurityLevel
            | Reason::ProtocolNotInOpenssl3,
        ) => Decision::RefusedProtocol,
        Some(_) => Decision::RefusedCipher,
    }
}

// ---------------------------------------------------------------------------------------
// Reading directives.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    Apache,
    Nginx,
}

impl Server {
    /// The directive that passes commands to OpenSSL's `SSL_CONF_cmd`.
    fn conf_directive(self) -> &'static str {
        match self {
            Server::Apache => "SSLOpenSSLConfCmd",
            Server::Nginx => "ssl_conf_command",
        }
    }

    /// What the server does with a configuration it cannot apply.
    fn refuses(self) -> &'static str {
        match self {
            Server::Apache => "Apache would not start",
            Server::Nginx => "nginx would refuse the configuration",
        }
    }
}

/// A protocol command of `SSL_CONF_cmd` (`MinProtocol`, `MaxProtocol`, `Protocol`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum ProtocolCommand {
    /// `MinProtocol`: `None` lifts the bound.
    Min(Option<Protocol>),
    /// `MaxProtocol`: `None` lifts the bound.
    Max(Option<Protocol>),
    /// `Protocol`: each protocol switched on (`+P`, `P`) or off (`-P`), in order.
    Switch(Vec<(bool, Vec<Protocol>)>),
}

/// A value and the line it was read from.
type AtLine = (String, usize);

#[derive(Debug, Default)]
struct Directives {
    server: Option<Server>,
    protocols: Option<String>,
    protocols_line: Option<usize>,
    /// The nginx block the last `ssl_protocols` was in.
    protocols_block: Option<usize>,
    ciphers: Option<String>,
    ciphers_line: Option<usize>,
    /// The nginx block the last `ssl_ciphers` was in.
    ciphers_block: Option<usize>,
    ciphersuites: Option<String>,
    ciphersuites_line: Option<usize>,
    dhparam: bool,
    /// The DH parameters file named last: path, line, directive.
    dh_file: Option<(String, usize, String)>,
    prefer_server: bool,
    groups: Option<String>,
    groups_line: Option<usize>,
    /// `ssl_conf_command`/`SSLOpenSSLConfCmd` values: both servers hand them to OpenSSL
    /// after their own directives, so they override those whatever the order in the file.
    conf_cipher_string: Option<AtLine>,
    conf_ciphersuites: Option<AtLine>,
    conf_groups: Option<AtLine>,
    conf_protocols: Vec<ProtocolCommand>,
    /// Conf commands tlsgap does not model (`ssl_conf_command Options`), as
    /// `directive command`, so that the user sees them.
    ignored_commands: Vec<String>,
    /// The nginx block being read (0: the top level), and those around it.
    block: usize,
    outer_blocks: Vec<usize>,
    blocks_seen: usize,
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

/// Whether `text` is server directives (to read with [`Policy::from_config`]) rather
/// than a bare OpenSSL cipher string ([`Policy::from_cipher_string`]). OpenSSL takes
/// spaces, like `:` and `,`, as separators (`openssl ciphers 'HIGH !aNULL'`), so a space
/// alone does not make directives: they need a statement end or block (`;`, `{`, `}`,
/// a newline), quotes, or a first word naming a directive (`SSLProtocol`, `ssl_ciphers`,
/// any `ssl_*` or `SSL*` word, which no cipher-string word is but `SSLv2`/`SSLv3`).
pub fn is_directives(text: &str) -> bool {
    if text.contains([';', '{', '}', '\n', '"', '\'', '#', '<']) {
        return true;
    }
    let Some(first) = text.split_whitespace().next() else {
        return false;
    };
    let first = first.to_ascii_lowercase();
    first.starts_with("ssl") && first != "sslv2" && first != "sslv3"
}

/// Whether `first` (a line's first word) is one of the Apache directives read.
fn is_apache_directive(first: &str) -> bool {
    matches!(
        first.to_ascii_lowercase().as_str(),
        "sslprotocol" | "sslciphersuite" | "sslhonorcipherorder" | "sslopensslconfcmd"
    )
}

impl Directives {
    fn read(text: &str) -> Result<(Server, Directives), PolicyError> {
        let mut d = Directives::default();
        // nginx statements end at `;` (or a block brace) and may span lines; Apache
        // directives are whole lines without terminator.
        let mut stmt = String::new();
        let mut stmt_line = 0;
        let lines: Vec<&str> = text.lines().collect();
        let mut next = 0;
        while let Some(&raw) = lines.get(next) {
            next += 1;
            let line_no = next;
            let first = words(strip_comment(raw)).into_iter().next();
            if first.as_deref().is_some_and(is_apache_directive) {
                // Apache lines have no terminator: what is pending is other Apache lines.
                stmt.clear();
                d.apache_line(raw, &lines, &mut next, line_no)?;
                continue;
            }
            let line = strip_comment(raw);
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
                        d.brace(rest[i..].chars().next());
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

    /// An Apache directive starting at `raw` (line `line_no`); `next` is the index of the
    /// line after it, moved past the lines a `\` continuation takes.
    fn apache_line(
        &mut self,
        raw: &str,
        lines: &[&str],
        next: &mut usize,
        line_no: usize,
    ) -> Result<(), PolicyError> {
        // httpd joins a line that ends in `\` with the next one, as they are (its
        // documentation: nothing may follow the backslash).
        let mut joined = raw.to_string();
        while joined.ends_with('\\') {
            let Some(more) = lines.get(*next) else {
                break;
            };
            joined.pop();
            joined.push_str(more);
            *next += 1;
        }
        // httpd reads `#` as a comment only at the start of a line: after a directive it
        // is an argument, which these directives refuse (`SSLProtocol: Illegal protocol
        // '#'`, `SSLCipherSuite takes 1-2 arguments`), so Apache does not start.
        let kept = strip_comment(&joined);
        if kept.len() < joined.len() && kept.ends_with(char::is_whitespace) {
            let name = words(kept).into_iter().next().unwrap_or_default();
            return Err(err(
                format!(
                    "{name}: `{}` is an argument, not a comment (Apache comments take a line of \
                     their own): Apache would not start",
                    joined[kept.len()..].trim()
                ),
                Some(line_no),
            ));
        }
        self.statement(&words(&joined), line_no)
    }

    /// Enter or leave an nginx block at `{` or `}`.
    fn brace(&mut self, c: Option<char>) {
        match c {
            Some('{') => {
                self.blocks_seen += 1;
                self.outer_blocks.push(self.block);
                self.block = self.blocks_seen;
            }
            Some('}') => self.block = self.outer_blocks.pop().unwrap_or(0),
            _ => {}
        }
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
                // mod_ssl compares the protocol argument case-sensitively
                // (`SSLCipherSuite tlsv1.3 ...`: "protocol 'tlsv1.3' not supported").
                match args {
                    [s] => self.set_ciphers(s, line_no),
                    [p, s] if p == "SSL" => self.set_ciphers(s, line_no),
                    [p, s] if p == "TLSv1.3" => {
                        self.ciphersuites = Some(s.clone());
                        self.ciphersuites_line = Some(line_no);
                    }
                    [p, _] => {
                        return Err(err(
                            format!(
                                "SSLCipherSuite: protocol `{p}` not supported (mod_ssl takes \
                                 `SSL` or `TLSv1.3`, spelt so): Apache would not start"
                            ),
                            Some(line_no),
                        ))
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
                // nginx ORs the values of the lines of one block (a bitmask), and an
                // inner block's value replaces the outer one.
                let joined = args.join(" ");
                self.protocols = match (self.protocols.take(), self.protocols_block) {
                    (Some(prev), Some(b)) if b == self.block => Some(format!("{prev} {joined}")),
                    _ => Some(joined),
                };
                self.protocols_line = Some(line_no);
                self.protocols_block = Some(self.block);
            }
            "ssl_ciphers" => {
                self.set_server(Server::Nginx, line_no)?;
                let [s] = args else {
                    return Err(err("ssl_ciphers takes one argument", Some(line_no)));
                };
                if self.ciphers_block == Some(self.block) {
                    return Err(err(
                        format!(
                            "\"ssl_ciphers\" directive is duplicate (line {} set it in this block): \
                             nginx would refuse the configuration",
                            self.ciphers_line.unwrap_or(0)
                        ),
                        Some(line_no),
                    ));
                }
                self.set_ciphers(s, line_no);
                self.ciphers_block = Some(self.block);
            }
            "sslhonorcipherorder" => {
                self.set_server(Server::Apache, line_no)?;
                self.prefer_server = on_off(args, "SSLHonorCipherOrder", line_no)?;
            }
            "ssl_prefer_server_ciphers" => {
                self.set_server(Server::Nginx, line_no)?;
                self.prefer_server = on_off(args, "ssl_prefer_server_ciphers", line_no)?;
            }
            "ssl_ecdh_curve" => {
                self.set_server(Server::Nginx, line_no)?;
                let [v] = args else {
                    return Err(err("ssl_ecdh_curve takes one argument", Some(line_no)));
                };
                // `auto` keeps OpenSSL's default list.
                self.groups = (!v.eq_ignore_ascii_case("auto")).then(|| v.clone());
                self.groups_line = Some(line_no);
            }
            "sslopensslconfcmd" => {
                self.set_server(Server::Apache, line_no)?;
                self.conf_command(Server::Apache, args, line_no)?;
            }
            "ssl_dhparam" => {
                self.set_server(Server::Nginx, line_no)?;
                self.dhparam = !args.is_empty();
                if let [path] = args {
                    self.dh_file = Some((path.clone(), line_no, "ssl_dhparam".to_string()));
                }
            }
            "ssl_conf_command" => {
                self.set_server(Server::Nginx, line_no)?;
                self.conf_command(Server::Nginx, args, line_no)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// A command for OpenSSL's `SSL_CONF_cmd` (`ssl_conf_command`, `SSLOpenSSLConfCmd`),
    /// whose names it matches case-insensitively in configuration files.
    fn conf_command(
        &mut self,
        server: Server,
        args: &[String],
        line_no: usize,
    ) -> Result<(), PolicyError> {
        let directive = server.conf_directive();
        let [k, v] = args else {
            return Err(err(
                format!(
                    "{directive} takes a command and a value, got `{}`: {}",
                    args.join(" "),
                    server.refuses()
                ),
                Some(line_no),
            ));
        };
        let failed = || {
            err(
                format!(
                    "{directive} {k} `{v}`: OpenSSL refuses the value (SSL_CONF_cmd fails): {}",
                    server.refuses()
                ),
                Some(line_no),
            )
        };
        match k.to_ascii_lowercase().as_str() {
            "cipherstring" => self.conf_cipher_string = Some((v.clone(), line_no)),
            "ciphersuites" => self.conf_ciphersuites = Some((v.clone(), line_no)),
            "groups" | "curves" => self.conf_groups = Some((v.clone(), line_no)),
            "dhparameters" => {
                self.dhparam = true;
                self.dh_file = Some((v.clone(), line_no, format!("{directive} {k}")));
            }
            "minprotocol" => {
                let p = conf_protocol_bound(v).ok_or_else(failed)?;
                self.conf_protocols.push(ProtocolCommand::Min(p));
            }
            "maxprotocol" => {
                let p = conf_protocol_bound(v).ok_or_else(failed)?;
                self.conf_protocols.push(ProtocolCommand::Max(p));
            }
            "protocol" => {
                let switches = conf_protocol_list(v).ok_or_else(failed)?;
                self.conf_protocols.push(ProtocolCommand::Switch(switches));
            }
            _ => {
                let entry = format!("{directive} {k}");
                if !self.ignored_commands.contains(&entry) {
                    self.ignored_commands.push(entry);
                }
            }
        }
        Ok(())
    }

    fn set_ciphers(&mut self, s: &str, line_no: usize) {
        self.ciphers = Some(s.to_string());
        self.ciphers_line = Some(line_no);
    }
}

fn on_off(args: &[String], directive: &str, line_no: usize) -> Result<bool, PolicyError> {
    match args {
        [v] if v.eq_ignore_ascii_case("on") => Ok(true),
        [v] if v.eq_ignore_ascii_case("off") => Ok(false),
        _ => Err(err(
            format!("{directive} takes on or off, got `{}`", args.join(" ")),
            Some(line_no),
        )),
    }
}

/// A `MinProtocol`/`MaxProtocol` value: `Some(None)` for `None` (no bound), `None` when
/// OpenSSL refuses it. OpenSSL compares these names case-sensitively; the DTLS ones do
/// not fit a TLS server.
fn conf_protocol_bound(v: &str) -> Option<Option<Protocol>> {
    Some(match v {
        "None" => None,
        "SSLv3" => Some(Protocol::SslV3),
        "TLSv1" => Some(Protocol::TlsV1),
        "TLSv1.1" => Some(Protocol::TlsV1_1),
        "TLSv1.2" => Some(Protocol::TlsV1_2),
        "TLSv1.3" => Some(Protocol::TlsV1_3),
        _ => return None,
    })
}

/// What `all` names among protocols (SSLv3 to TLS 1.3: SSLv2 only by its name).
const ALL_PROTOCOLS: [Protocol; 5] = [
    Protocol::SslV3,
    Protocol::TlsV1,
    Protocol::TlsV1_1,
    Protocol::TlsV1_2,
    Protocol::TlsV1_3,
];

/// A `Protocol` value: a comma-separated list (spaces around an item are dropped) of
/// protocol names, each switched on (`+P`, `P`) or off (`-P`), names case-insensitive;
/// `None` when OpenSSL refuses it (an unknown or empty item).
fn conf_protocol_list(v: &str) -> Option<Vec<(bool, Vec<Protocol>)>> {
    let mut out = Vec::new();
    for item in v.split(',').map(str::trim) {
        let (on, name) = match item.as_bytes().first() {
            Some(b'+') => (true, &item[1..]),
            Some(b'-') => (false, &item[1..]),
            _ => (true, item),
        };
        let ps = match name.to_ascii_lowercase().as_str() {
            // Known to OpenSSL, nothing to a TLS server built without SSLv2.
            "sslv2" | "dtlsv1" | "dtlsv1.2" => Vec::new(),
            _ => protocol_word(name)?,
        };
        out.push((on, ps));
    }
    Some(out)
}

/// The protocols OpenSSL enables once the conf commands `cmds` are applied to what the
/// server's directive set up (`base`). OpenSSL enables a protocol when no
/// `SSL_OP_NO_*` option disables it and it lies within the min-max range. nginx
/// disables what `ssl_protocols` leaves out by option and opens the range; mod_ssl
/// (OpenSSL >= 1.1) sets only the range, from the lowest to the highest protocol of
/// `SSLProtocol` (a protocol left out inside it is kept out here, as it was before
/// any command). `Protocol` switches options, `MinProtocol`/`MaxProtocol` move the range.
fn apply_protocol_commands(
    server: Server,
    base: &[Protocol],
    cmds: &[ProtocolCommand],
) -> Vec<Protocol> {
    if cmds.is_empty() {
        return base.to_vec();
    }
    const ALL: [Protocol; 5] = [
        Protocol::SslV3,
        Protocol::TlsV1,
        Protocol::TlsV1_1,
        Protocol::TlsV1_2,
        Protocol::TlsV1_3,
    ];
    let low = base.iter().copied().filter(|p| *p != Protocol::SslV2).min();
    let high = base.iter().copied().filter(|p| *p != Protocol::SslV2).max();
    let (mut options_on, mut min, mut max): (Vec<Protocol>, _, _) = match (server, low, high) {
        (Server::Apache, Some(lo), Some(hi)) => (
            ALL.into_iter()
                .filter(|p| *p < lo || *p > hi || base.contains(p))
                .collect(),
            Some(lo),
            Some(hi),
        ),
        (Server::Apache, _, _) => (Vec::new(), None, None),
        (Server::Nginx, _, _) => (
            base.iter()
                .copied()
                .filter(|p| *p != Protocol::SslV2)
                .collect(),
            None,
            None,
        ),
    };
    for cmd in cmds {
        match cmd {
            ProtocolCommand::Min(p) => min = *p,
            ProtocolCommand::Max(p) => max = *p,
            ProtocolCommand::Switch(switches) => {
                for (on, ps) in switches {
                    options_on.retain(|p| !ps.contains(p));
                    if *on {
                        options_on.extend(ps.iter().copied());
                    }
                }
            }
        }
    }
    let mut out: Vec<Protocol> = options_on
        .into_iter()
        .filter(|p| min.is_none_or(|m| *p >= m) && max.is_none_or(|m| *p <= m))
        .collect();
    out.sort();
    out.dedup();
    out
}

fn protocol_word(w: &str) -> Option<Vec<Protocol>> {
    Some(match w.to_ascii_lowercase().as_str() {
        "all" => ALL_PROTOCOLS.to_vec(),
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
///
/// mod_ssl refuses to enable SSLv2 (it dropped it), and SSLv3 when the OpenSSL it was
/// built against has none (`OPENSSL_NO_SSL3`, as distributions build OpenSSL 3): `SSLv3`
/// or `+SSLv3` is a configuration error and Apache does not start, while `-SSLv3` is
/// accepted. (`all` never holds them there; it is read with SSLv3 here, which the
/// policy then refuses as not in OpenSSL 3.)
fn apache_protocols(
    args: &str,
    line: Option<usize>,
    openssl3: bool,
) -> Result<Vec<Protocol>, PolicyError> {
    let mut set: Vec<Protocol> = Vec::new();
    for w in args.split_whitespace() {
        let (op, name) = match w.as_bytes().first() {
            Some(b'+') => ('+', &w[1..]),
            Some(b'-') => ('-', &w[1..]),
            _ => ('=', w),
        };
        if op != '-' {
            if name.eq_ignore_ascii_case("sslv2") {
                return Err(err(
                    "SSLProtocol: SSLv2 is no longer supported: Apache would not start",
                    line,
                ));
            }
            if openssl3 && name.eq_ignore_ascii_case("sslv3") {
                return Err(err(
                    "SSLProtocol: SSLv3 not supported by this version of OpenSSL (OpenSSL 3 \
                     as distributions build it has no SSLv3): Apache would not start",
                    line,
                ));
            }
        }
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

/// nginx's `ssl_protocols`: exactly the protocols listed, names case-insensitive (nginx
/// reads a bitmask value with `ngx_strcasecmp`); nginx has no `all`.
fn nginx_protocols(args: &str, line: Option<usize>) -> Result<Vec<Protocol>, PolicyError> {
    let mut set = Vec::new();
    for w in args.split_whitespace() {
        let ps = protocol_word(w)
            .filter(|_| !w.eq_ignore_ascii_case("all"))
            .ok_or_else(|| err(format!("ssl_protocols: unknown protocol `{w}`"), line))?;
        set.extend(ps);
    }
    set.sort();
    set.dedup();
    Ok(set)
}
