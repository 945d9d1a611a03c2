//! The TLS system defaults an `openssl.cnf` sets, read the way OpenSSL 3 reads them: the
//! default section's `openssl_conf = X`, then `[X] ssl_conf = Y`, `[Y] system_default = Z`,
//! and in `[Z]` the `CipherString` (whose `@SECLEVEL=N` is the security level every server
//! starts from), `Ciphersuites` (the TLS 1.3 suites of a server that does not set its
//! own), `MinProtocol` and `MaxProtocol`.
//!
//! ```
//! use tlsgap_ciphers::opensslcnf::system_default;
//!
//! let cnf = "openssl_conf = init\n[init]\nssl_conf = ssl\n[ssl]\nsystem_default = sys\n\
//!            [sys]\nMinProtocol = TLSv1.2\nCipherString = DEFAULT@SECLEVEL=1\n";
//! let d = system_default(cnf).unwrap();
//! assert_eq!(d.seclevel, Some(1));
//! assert_eq!(d.min_protocol.as_deref(), Some("TLSv1.2"));
//! ```
//!
//! Apache and nginx set the protocol range themselves (`SSLProtocol`, `ssl_protocols`),
//! which overrides `MinProtocol`/`MaxProtocol`; the cipher string they set replaces the
//! list but keeps the level unless it has its own `@SECLEVEL`. Neither sets TLS 1.3
//! suites unless told to (`SSLCipherSuite TLSv1.3`, `ssl_conf_command Ciphersuites`), so
//! `Ciphersuites` holds (checked with real nginx 1.22 and Apache 2.4: the suites it
//! leaves out are refused). So the level and `Ciphersuites` are what matter to a what-if. `.include` directives are listed, not followed (this module does
//! no I/O).

use std::collections::HashMap;

use crate::catalogue;
use crate::cipherstring;

/// What the `system_default` section sets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SystemDefault {
    /// The section names followed (`openssl_init → ssl_sect → system_default_sect`); empty
    /// when the file has no `ssl_conf`.
    pub chain: Vec<String>,
    /// `CipherString`, as written.
    pub cipher_string: Option<String>,
    /// The security level `CipherString` sets with `@SECLEVEL=N`.
    pub seclevel: Option<u8>,
    /// `Ciphersuites` (TLS 1.3), as written.
    pub ciphersuites: Option<String>,
    /// `MinProtocol`, as written.
    pub min_protocol: Option<String>,
    /// `MaxProtocol`, as written.
    pub max_protocol: Option<String>,
    /// `.include` targets, not followed.
    pub includes: Vec<String>,
}

/// A configuration this module could not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CnfError {
    /// What was wrong.
    pub message: String,
    /// The 1-based line, when there is one.
    pub line: Option<usize>,
}

impl std::fmt::Display for CnfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "line {l}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for CnfError {}

/// Sections (`""` is the default section) → key → (value, line).
type Sections = HashMap<String, HashMap<String, (String, usize)>>;

fn strip_comment(line: &str) -> &str {
    // OpenSSL treats `#` as a comment start outside quotes; `\#` escapes it (rare).
    let mut quote = None;
    let mut prev = '\0';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '#' && prev != '\\' => return &line[..i],
            None => {}
        }
        prev = c;
    }
    line
}

fn unquote(v: &str) -> String {
    let v = v.trim();
    for q in ['"', '\''] {
        if let Some(inner) = v.strip_prefix(q).and_then(|r| r.strip_suffix(q)) {
            return inner.to_string();
        }
    }
    v.to_string()
}

fn sections(text: &str) -> Result<(Sections, Vec<String>), CnfError> {
    let mut out: Sections = HashMap::new();
    let mut includes = Vec::new();
    let mut current = String::new();
    for (n, raw) in text.lines().enumerate() {
        let line_no = n + 1;
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(CnfError {
                    message: format!("section header without `]`: {line}"),
                    line: Some(line_no),
                });
            };
            current = name.trim().to_string();
            continue;
        }
        if let Some(rest) = line.strip_prefix(".include") {
            let target = rest.trim_start().trim_start_matches('=').trim();
            includes.push(unquote(target));
            continue;
        }
        if line.starts_with('.') {
            // `.pragma` and friends change parsing details tlsgap does not need.
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            return Err(CnfError {
                message: format!("neither `[section]` nor `name = value`: {line}"),
                line: Some(line_no),
            });
        };
        out.entry(current.clone())
            .or_default()
            .insert(k.trim().to_string(), (unquote(v), line_no));
    }
    Ok((out, includes))
}

/// Read the TLS system defaults of an `openssl.cnf` (see the module docs).
pub fn system_default(text: &str) -> Result<SystemDefault, CnfError> {
    let (secs, includes) = sections(text)?;
    let mut d = SystemDefault {
        includes,
        ..SystemDefault::default()
    };
    let get = |sec: &str, key: &str| -> Option<(String, usize)> {
        secs.get(sec).and_then(|m| m.get(key)).cloned()
    };
    let Some((init, _)) = get("", "openssl_conf") else {
        return Ok(d);
    };
    let Some((ssl, _)) = get(&init, "ssl_conf") else {
        return Ok(d);
    };
    let Some((sys, _)) = get(&ssl, "system_default") else {
        return Ok(d);
    };
    d.chain = vec![init, ssl, sys.clone()];
    d.min_protocol = get(&sys, "MinProtocol").map(|(v, _)| v);
    d.max_protocol = get(&sys, "MaxProtocol").map(|(v, _)| v);
    d.ciphersuites = get(&sys, "Ciphersuites").map(|(v, _)| v);
    if let Some((cs, line)) = get(&sys, "CipherString") {
        let level = cipherstring::evaluate_over(&cs, catalogue::all(), u8::MAX)
            .map_err(|e| CnfError {
                message: format!("CipherString `{cs}`: {}", e.message),
                line: Some(line),
            })?
            .seclevel;
        d.seclevel = (level != u8::MAX).then_some(level);
        d.cipher_string = Some(cs);
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEBIAN_11: &str = "\
# OpenSSL example configuration file.
HOME\t\t\t= .
openssl_conf = default_conf

[ new_oids ]
tsa_policy1 = 1.2.3.4.1

[default_conf]
ssl_conf = ssl_sect

[ssl_sect]
system_default = system_default_sect

[system_default_sect]
MinProtocol = TLSv1.2
CipherString = DEFAULT@SECLEVEL=2
";

    #[test]
    fn debian_11_style() {
        let d = system_default(DEBIAN_11).unwrap();
        assert_eq!(d.seclevel, Some(2));
        assert_eq!(d.min_protocol.as_deref(), Some("TLSv1.2"));
        assert_eq!(d.chain, ["default_conf", "ssl_sect", "system_default_sect"]);
    }

    #[test]
    fn ciphersuites_are_read() {
        let cnf = "openssl_conf = a\n[a]\nssl_conf = b\n[b]\nsystem_default = c\n[c]\n\
                   Ciphersuites = TLS_AES_256_GCM_SHA384\n";
        let d = system_default(cnf).unwrap();
        assert_eq!(d.ciphersuites.as_deref(), Some("TLS_AES_256_GCM_SHA384"));
        assert_eq!(d.seclevel, None);
    }

    #[test]
    fn no_ssl_conf_sets_nothing() {
        let cnf = "openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n\
                   [provider_sect]\ndefault = default_sect\n[default_sect]\n# activate = 1\n";
        let d = system_default(cnf).unwrap();
        assert_eq!(d, SystemDefault::default());
    }

    #[test]
    fn quoted_level_zero_and_includes() {
        let cnf = ".include /etc/ssl/extra.cnf\nopenssl_conf = a\n[a]\nssl_conf = b\n[ b ]\n\
                   system_default = c\n[c]\nCipherString = \"ALL:@SECLEVEL=0\" # comment\n";
        let d = system_default(cnf).unwrap();
        assert_eq!(d.seclevel, Some(0));
        assert_eq!(d.includes, ["/etc/ssl/extra.cnf"]);
        // A CipherString without a level sets none.
        let d = system_default(&cnf.replace(":@SECLEVEL=0", "")).unwrap();
        assert_eq!(d.seclevel, None);
        assert_eq!(d.cipher_string.as_deref(), Some("ALL"));
    }

    #[test]
    fn broken_lines_name_their_line() {
        let e = system_default("openssl_conf = a\n[a\n").unwrap_err();
        assert_eq!(e.line, Some(2));
        let e = system_default("openssl_conf = a\njunk\n").unwrap_err();
        assert_eq!(e.line, Some(2));
    }
}
