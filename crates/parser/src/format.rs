//! Log format model and the compiler for Apache `LogFormat` and nginx `log_format`.
//!
//! A [`Format`] is compiled once from the text the operator pasted and then drives
//! [`crate::LineParser`] for every line. Compilation is where every question about the
//! format is answered (which field is the client, how values are escaped, where a field
//! ends), so that the per-line work is only scanning.

use std::fmt;

use nom::branch::alt;
use nom::bytes::complete::{take_till, take_while1};
use nom::character::complete::{char, one_of};
use nom::combinator::{map, recognize};
use nom::multi::many0;
use nom::sequence::{delimited, pair, preceded};
use nom::{IResult, Parser};

use crate::time::TimeSpec;

/// How the server escaped values when it wrote the log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escaping {
    /// Apache `ap_escape_logitem`: `\"`, `\\`, `\n`…, other bytes as lowercase `\xhh`.
    Apache,
    /// nginx `escape=default`: `"`, `\`, control bytes and bytes ≥ 0x80 as `\xHH`.
    NginxDefault,
    /// nginx `escape=json`: JSON string escapes, bytes ≥ 0x80 raw.
    NginxJson,
    /// nginx `escape=none`: raw bytes, best effort.
    None,
}

/// What a field holds, which decides how its end is found and how it is checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Escaped free text (request line, headers, user).
    Text,
    /// A short token without spaces: addresses, ports, protocol and cipher names.
    Token,
    /// A decimal integer, or `-`.
    Int,
    /// A decimal number with an optional fraction (`0.123`), or `-`.
    Decimal,
    /// A time value.
    Time(TimeSpec),
}

/// The meaning of a field, for the canonical export columns and the aggregations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Role {
    Client,
    Ident,
    User,
    Time,
    Request,
    Method,
    Target,
    Path,
    Query,
    HttpVersion,
    Status,
    Bytes,
    Referer,
    UserAgent,
    TlsProtocol,
    TlsCipher,
    Duration,
    Pid,
    Vhost,
    /// The cipher suites the client offered (nginx `$ssl_ciphers`, httpd trunk
    /// `SSL_CLIENTHELLO_CIPHERS`).
    TlsOfferedCiphers,
    /// The groups (curves) the client offered (nginx `$ssl_curves`, httpd trunk
    /// `SSL_CLIENTHELLO_GROUPS`).
    TlsOfferedGroups,
    /// The negotiated key-exchange group (nginx `$ssl_curve`).
    TlsGroup,
    /// Whether the session was resumed (nginx `$ssl_session_reused`, mod_ssl
    /// `SSL_SESSION_RESUMED`).
    TlsSessionReused,
    /// The ClientHello's legacy version field (httpd trunk `SSL_CLIENTHELLO_VERSION`).
    TlsHelloVersion,
    /// The `supported_versions` extension (httpd trunk `SSL_CLIENTHELLO_VERSIONS`).
    TlsHelloVersions,
    /// The ClientHello's extension ids (httpd trunk `SSL_CLIENTHELLO_EXTENSIONS`).
    TlsHelloExtensions,
    /// The EC point formats (httpd trunk `SSL_CLIENTHELLO_EC_FORMATS`).
    TlsHelloEcFormats,
    /// The signature algorithms (httpd trunk `SSL_CLIENTHELLO_SIG_ALGOS`).
    TlsHelloSigAlgs,
}

impl Role {
    /// Every role, in the order of the canonical export columns.
    pub const ALL: [Role; 28] = [
        Role::Time,
        Role::Client,
        Role::Ident,
        Role::User,
        Role::Request,
        Role::Method,
        Role::Target,
        Role::Path,
        Role::Query,
        Role::HttpVersion,
        Role::Status,
        Role::Bytes,
        Role::Referer,
        Role::UserAgent,
        Role::TlsProtocol,
        Role::TlsCipher,
        Role::Duration,
        Role::Pid,
        Role::Vhost,
        Role::TlsOfferedCiphers,
        Role::TlsOfferedGroups,
        Role::TlsGroup,
        Role::TlsSessionReused,
        Role::TlsHelloVersion,
        Role::TlsHelloVersions,
        Role::TlsHelloExtensions,
        Role::TlsHelloEcFormats,
        Role::TlsHelloSigAlgs,
    ];

    /// The canonical column name of the role.
    pub fn column(self) -> &'static str {
        match self {
            Role::Client => "client",
            Role::Ident => "ident",
            Role::User => "user",
            Role::Time => "time",
            Role::Request => "request",
            Role::Method => "method",
            Role::Target => "target",
            Role::Path => "path",
            Role::Query => "query",
            Role::HttpVersion => "http_version",
            Role::Status => "status",
            Role::Bytes => "bytes",
            Role::Referer => "referer",
            Role::UserAgent => "user_agent",
            Role::TlsProtocol => "tls_protocol",
            Role::TlsCipher => "tls_cipher",
            Role::Duration => "duration_us",
            Role::Pid => "pid",
            Role::Vhost => "vhost",
            Role::TlsOfferedCiphers => "tls_offered_ciphers",
            Role::TlsOfferedGroups => "tls_offered_groups",
            Role::TlsGroup => "tls_group",
            Role::TlsSessionReused => "tls_session_reused",
            Role::TlsHelloVersion => "tls_hello_version",
            Role::TlsHelloVersions => "tls_hello_versions",
            Role::TlsHelloExtensions => "tls_hello_extensions",
            Role::TlsHelloEcFormats => "tls_hello_ec_formats",
            Role::TlsHelloSigAlgs => "tls_hello_sig_algs",
        }
    }

    fn index(self) -> usize {
        // The discriminant, not the position in ALL: stable whatever the column order.
        self as usize
    }
}

/// One field of a compiled format.
#[derive(Clone, Debug)]
pub struct Field {
    /// Column name: the canonical one when the field has a role, else a documented name
    /// derived from the directive (`req_x_forwarded_for`, `ssl_tls_sni`, …).
    pub name: String,
    /// The directive as written in the format (`%{User-Agent}i`, `$ssl_cipher`).
    pub directive: String,
    /// How the value is delimited and checked.
    pub kind: Kind,
    /// The role, when the field is the first of its meaning in the format.
    pub role: Option<Role>,
    /// For durations: how many microseconds one unit of the logged number is.
    pub micros_per_unit: Option<u64>,
    /// The value may hold raw, unescaped delimiters (mod_ssl `%x` before 2.4.64,
    /// nginx `escape=none`): the line parser then tries later delimiters too.
    pub raw_ok: bool,
    /// Apache `%u` writes an empty user as `""` outside any quotes.
    pub empty_as_quotes: bool,
    /// nginx's upstream lists (`$upstream_addr`, `$upstream_status`, …): one value per
    /// upstream server tried, `, ` between them and ` : ` between server groups, so a
    /// space after a comma or around a colon is the value's own.
    pub upstream_list: bool,
    /// CLF byte counts (`%b`) write zero as `-`: the value is 0, not absent.
    pub dash_is_zero: bool,
    /// A third-party module's directive (`%{TX.anomaly_score}M`): a letter httpd and
    /// its bundled modules do not define, read as opaque text.
    pub opaque: bool,
}

/// A piece of a compiled format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// Literal bytes that must appear in the line.
    Lit(Vec<u8>),
    /// The field with this index in [`Format::fields`].
    Field(usize),
}

/// Which server software a format came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Apache httpd `LogFormat`.
    Apache,
    /// nginx `log_format`.
    Nginx,
}

/// A compiled log format.
#[derive(Clone, Debug)]
pub struct Format {
    /// The format text after un-quoting (what the server interprets).
    pub source: String,
    /// Apache or nginx.
    pub dialect: Dialect,
    /// Escaping of values.
    pub escaping: Escaping,
    /// Literals and fields in line order.
    pub items: Vec<Item>,
    /// The fields.
    pub fields: Vec<Field>,
    roles: [Option<u16>; Role::ALL.len()],
    time_fields: Vec<usize>,
    has_raw: bool,
}

/// A format that could not be compiled, with the position of the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// What is wrong.
    pub message: String,
    /// The format text the position refers to.
    pub format: String,
    /// Byte offset of the problem in `format`.
    pub position: usize,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Show the format with a caret under the offending byte; the column is counted
        // in characters so that the caret lines up for non-ASCII formats too.
        let col = self
            .format
            .get(..self.position)
            .map_or(self.position, |s| s.chars().count());
        write!(
            f,
            "{} at position {}\n  {}\n  {}^",
            self.message,
            self.position + 1,
            self.format,
            " ".repeat(col)
        )
    }
}

impl std::error::Error for FormatError {}

/// Named formats users have in their configurations.
pub const PRESETS: &[(&str, &str)] = &[
    (
        "combinedssl",
        r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x"#,
    ),
    (
        "nginx-ssl-full",
        r#"log_format nginx-ssl-full '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol $ssl_cipher "$ssl_ciphers" "$ssl_curves" $ssl_session_reused $ssl_server_name';"#,
    ),
    (
        "nginx-ssl",
        r#"log_format nginx-ssl '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol $ssl_cipher';"#,
    ),
    (
        "ssl_request",
        r#"%t %h %{SSL_PROTOCOL}x %{SSL_CIPHER}x "%r" %b"#,
    ),
    (
        "vhost_combined",
        r#"%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i""#,
    ),
    (
        "combined",
        r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i""#,
    ),
    (
        "nginx-combined",
        r#"log_format combined '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"';"#,
    ),
    ("common", r#"%h %l %u %t "%r" %>s %b"#),
];

/// The format text of a preset, by name.
pub fn preset(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

impl Format {
    /// Compile a preset name, an Apache `LogFormat` (bare or the whole config line) or
    /// an nginx `log_format` (the whole directive or a bare string with `$variables`).
    pub fn compile(spec: &str) -> Result<Format, FormatError> {
        if let Some(text) = preset(spec.trim()) {
            return Format::compile(text);
        }
        let trimmed = spec.trim();
        if trimmed.starts_with("log_format") {
            return compile_nginx_directive(trimmed);
        }
        if looks_like_nginx(trimmed) {
            return compile_nginx(trimmed, Escaping::NginxDefault);
        }
        compile_apache(&apache_config_text(trimmed))
    }

    /// The index of the field that has `role`, if the format carries it.
    pub fn role(&self, role: Role) -> Option<usize> {
        self.roles[role.index()].map(usize::from)
    }

    /// Whether the format carries `role`.
    pub fn has(&self, role: Role) -> bool {
        self.roles[role.index()].is_some()
    }

    /// Indices of the time fields, in line order.
    pub fn time_fields(&self) -> &[usize] {
        &self.time_fields
    }

    /// Whether any field may hold raw delimiters (the parser then backtracks).
    pub fn has_raw_fields(&self) -> bool {
        self.has_raw
    }

    fn finish(
        source: String,
        dialect: Dialect,
        escaping: Escaping,
        raw_items: Vec<(RawItem, usize)>,
    ) -> Result<Format, FormatError> {
        let mut items: Vec<Item> = Vec::new();
        let mut fields: Vec<Field> = Vec::new();
        let mut roles = [None; Role::ALL.len()];
        let mut positions = Vec::new();
        let mut taken = std::collections::HashMap::new();
        for (item, pos) in raw_items {
            match item {
                RawItem::Lit(bytes) => {
                    if bytes.is_empty() {
                        continue;
                    }
                    if let Some(Item::Lit(prev)) = items.last_mut() {
                        prev.extend_from_slice(&bytes);
                    } else {
                        items.push(Item::Lit(bytes));
                    }
                }
                RawItem::Field(mut spec) => {
                    let mut field_role = None;
                    for role in spec.roles.iter().copied() {
                        if roles[role.index()].is_none() {
                            field_role = Some(role);
                            break;
                        }
                    }
                    let base = match field_role {
                        Some(role) => role.column().to_string(),
                        None => std::mem::take(&mut spec.fallback),
                    };
                    let name = unique_name(&mut taken, base);
                    let idx = fields.len();
                    if let Some(role) = field_role {
                        roles[role.index()] = u16::try_from(idx).ok();
                    }
                    fields.push(Field {
                        name,
                        directive: spec.directive,
                        kind: spec.kind,
                        role: field_role,
                        micros_per_unit: spec.micros_per_unit,
                        raw_ok: spec.raw_ok || escaping == Escaping::None,
                        empty_as_quotes: spec.empty_as_quotes,
                        upstream_list: spec.upstream_list,
                        dash_is_zero: spec.dash_is_zero,
                        opaque: spec.opaque,
                    });
                    positions.push(pos);
                    items.push(Item::Field(idx));
                }
            }
        }
        // Two fields with nothing between them can only be told apart when the first
        // one ends by itself (a bracketed time) or is a number.
        for pair in items.windows(2) {
            if let [Item::Field(a), Item::Field(b)] = pair {
                let first = &fields[*a];
                let self_delimiting = matches!(
                    first.kind,
                    Kind::Int | Kind::Time(TimeSpec::Clf { brackets: true })
                );
                if !self_delimiting {
                    return Err(FormatError {
                        message: format!(
                            "{} and {} have nothing between them, so a line cannot be split",
                            first.directive, fields[*b].directive
                        ),
                        format: source,
                        position: positions.get(*b).copied().unwrap_or(0),
                    });
                }
            }
        }
        if fields.is_empty() {
            return Err(FormatError {
                message: "the format has no fields".into(),
                format: source,
                position: 0,
            });
        }
        let time_fields = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| matches!(f.kind, Kind::Time(_)))
            .map(|(i, _)| i)
            .collect();
        let has_raw = fields.iter().any(|f| f.raw_ok);
        Ok(Format {
            source,
            dialect,
            escaping,
            items,
            fields,
            roles,
            time_fields,
            has_raw,
        })
    }
}

/// A column name not taken yet: `base`, else `base_2`, `base_3`… Remembers the next
/// suffix per base so that many repeats stay linear.
fn unique_name(taken: &mut std::collections::HashMap<String, usize>, base: String) -> String {
    if !taken.contains_key(&base) {
        taken.insert(base.clone(), 2);
        return base;
    }
    loop {
        let n = taken.get(&base).copied().unwrap_or(2);
        taken.insert(base.clone(), n + 1);
        let cand = format!("{base}_{n}");
        if !taken.contains_key(&cand) {
            taken.insert(cand.clone(), 2);
            return cand;
        }
    }
}

/// A field before roles are assigned.
#[derive(Debug)]
struct FieldSpec {
    directive: String,
    kind: Kind,
    /// Roles this field can take, most specific first; the first free one wins.
    roles: Vec<Role>,
    fallback: String,
    micros_per_unit: Option<u64>,
    raw_ok: bool,
    empty_as_quotes: bool,
    upstream_list: bool,
    dash_is_zero: bool,
    opaque: bool,
}

impl FieldSpec {
    fn new(directive: &str, kind: Kind, roles: &[Role], fallback: &str) -> FieldSpec {
        FieldSpec {
            directive: directive.to_string(),
            kind,
            roles: roles.to_vec(),
            fallback: fallback.to_string(),
            micros_per_unit: None,
            raw_ok: false,
            empty_as_quotes: false,
            upstream_list: false,
            dash_is_zero: false,
            opaque: false,
        }
    }
}

#[derive(Debug)]
enum RawItem {
    Lit(Vec<u8>),
    Field(FieldSpec),
}

fn sanitize(prefix: &str, name: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + name.len());
    out.push_str(prefix);
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else {
            out.push('_');
        }
    }
    out
}

fn looks_like_nginx(s: &str) -> bool {
    let b = s.as_bytes();
    let has_var = b
        .windows(2)
        .any(|w| w[0] == b'$' && (w[1].is_ascii_alphabetic() || w[1] == b'_' || w[1] == b'{'));
    let has_directive = b.windows(2).any(|w| {
        w[0] == b'%'
            && (w[1].is_ascii_alphabetic() || matches!(w[1], b'{' | b'>' | b'<' | b'!' | b'^'))
    });
    has_var && !has_directive
}

// ---------------------------------------------------------------- Apache

/// Turn what the user pasted into the format string Apache interprets: the whole
/// `LogFormat "..." nick` / `CustomLog file "..."` line, a quoted string, or the bare
/// string (where `\"` is still the config file's escape for a quote).
fn apache_config_text(s: &str) -> String {
    let words = ["LogFormat", "CustomLog", "TransferLog"];
    let mut rest = s;
    for w in words {
        if let Some(r) = rest.strip_prefix(w) {
            rest = r.trim_start();
            if w == "CustomLog" {
                // CustomLog takes the log target first; skip it (quoted or not).
                rest = skip_config_word(rest).trim_start();
            }
            break;
        }
    }
    if rest.starts_with('"') {
        return config_quoted(rest);
    }
    if rest.contains("\\\"") {
        return config_unescape(rest);
    }
    rest.to_string()
}

fn skip_config_word(s: &str) -> &str {
    if s.starts_with('"') {
        let mut escaped = false;
        for (i, c) in s.char_indices().skip(1) {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                return s.get(i + 1..).unwrap_or("");
            }
        }
        ""
    } else {
        s.split_once(char::is_whitespace).map_or("", |(_, r)| r)
    }
}

/// The first quoted word of a config line, with the tokenizer's `\"` and `\\` undone.
fn config_quoted(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().skip(1).peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.peek() {
                Some('"') | Some('\\') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                _ => out.push('\\'),
            },
            '"' => return out,
            c => out.push(c),
        }
    }
    out
}

fn config_unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'"') {
            continue;
        }
        out.push(c);
    }
    out
}

/// Parsed `%...X` directive: modifiers and the letter(s).
#[derive(Debug)]
struct Directive<'a> {
    arg: Option<&'a str>,
    letter: &'a str,
}

fn modifier(input: &str) -> IResult<&str, Option<&str>> {
    alt((
        map(
            delimited(char('{'), take_till(|c| c == '}'), char('}')),
            Some,
        ),
        map(one_of("<>!,0123456789"), |_| None),
    ))
    .parse(input)
}

fn directive(input: &str) -> IResult<&str, Directive<'_>> {
    let (rest, mods) = many0(modifier).parse(input)?;
    let (rest, letter) = alt((
        recognize(pair(
            char('^'),
            take_while1(|c: char| c.is_ascii_alphabetic()),
        )),
        recognize(one_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ%",
        )),
    ))
    .parse(rest)?;
    let arg = mods.into_iter().flatten().last();
    Ok((rest, Directive { arg, letter }))
}

fn compile_apache(text: &str) -> Result<Format, FormatError> {
    let err = |message: String, position: usize| FormatError {
        message,
        format: text.to_string(),
        position,
    };
    let mut items = Vec::new();
    let mut lit = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\\' {
            // mod_log_config unescapes \n \t \r \\ in literal text.
            match bytes.get(i + 1) {
                Some(b'n') => lit.push(b'\n'),
                Some(b't') => lit.push(b'\t'),
                Some(b'r') => lit.push(b'\r'),
                Some(b'\\') => lit.push(b'\\'),
                Some(b'"') => lit.push(b'"'),
                Some(other) => {
                    lit.push(b'\\');
                    lit.push(*other);
                }
                None => lit.push(b'\\'),
            }
            i += 2;
            continue;
        }
        if b != b'%' {
            lit.push(b);
            i += 1;
            continue;
        }
        let start = i;
        let rest = text.get(i + 1..).unwrap_or("");
        if rest.is_empty() {
            return Err(err("a lone % ends the format".into(), start));
        }
        if rest.starts_with('{') && !rest.contains('}') {
            return Err(err("unterminated {argument} in directive".into(), start));
        }
        let (after, d) = directive(rest).map_err(|_| {
            let bad = rest.chars().find(|c| !"<>!,0123456789".contains(*c));
            err(
                match bad {
                    Some(c) => format!("unknown directive %{c}"),
                    None => "incomplete directive".into(),
                },
                start,
            )
        })?;
        let consumed = rest.len() - after.len();
        let directive_text = &text[start..=start + consumed];
        let position_of_letter = start + consumed;
        if d.letter == "%" {
            lit.push(b'%');
        } else if directive_text == "%U"
            && text.get(start + 2..).is_some_and(|r| r.starts_with("%q"))
        {
            // `%U%q` (path, then `?query` or nothing) is one target: the two have
            // nothing between them, and the target is what the export contract wants.
            let spec = FieldSpec::new("%U%q", Kind::Text, &[Role::Target], "url_path_query");
            items.push((RawItem::Lit(std::mem::take(&mut lit)), start));
            items.push((RawItem::Field(spec), start));
            i = start + 4;
            continue;
        } else {
            let spec = apache_field(directive_text, d.letter, d.arg)
                .map_err(|m| err(m, position_of_letter))?;
            items.push((RawItem::Lit(std::mem::take(&mut lit)), start));
            items.push((RawItem::Field(spec), start));
        }
        i = start + 1 + consumed;
    }
    items.push((RawItem::Lit(lit), text.len()));
    Format::finish(text.to_string(), Dialect::Apache, Escaping::Apache, items)
}

fn apache_field(dir: &str, letter: &str, arg: Option<&str>) -> Result<FieldSpec, String> {
    use Kind::*;
    use Role as R;
    let f = |kind, roles: &[Role], fallback: &str| FieldSpec::new(dir, kind, roles, fallback);
    let spec = match (letter, arg) {
        ("h", _) => f(Token, &[R::Client], "remote_host"),
        ("a", Some("c")) => f(Token, &[R::Client], "peer_ip"),
        ("a", _) => f(Token, &[R::Client], "remote_ip"),
        ("A", _) => f(Token, &[], "local_ip"),
        ("l", _) => f(Text, &[R::Ident], "ident"),
        ("u", _) => {
            let mut s = f(Text, &[R::User], "user");
            s.empty_as_quotes = true;
            s
        }
        ("t", None) => f(Time(TimeSpec::Clf { brackets: true }), &[R::Time], "time_2"),
        ("t", Some(a)) => {
            let (prefix, spec) = match a.split_once(':') {
                Some((p @ ("begin" | "end"), s)) => (p, s),
                _ => ("", a),
            };
            let ts = TimeSpec::from_apache(spec);
            let name = match prefix {
                "end" => "time_end",
                _ => "time_begin",
            };
            let roles: &[Role] = if ts.is_component() { &[] } else { &[R::Time] };
            let fallback = match &ts {
                TimeSpec::Frac { .. } => format!("{name}_frac"),
                _ => name.to_string(),
            };
            f(Time(ts), roles, &fallback)
        }
        ("r", _) => f(Text, &[R::Request], "request_line"),
        ("m", _) => f(Token, &[R::Method], "request_method"),
        ("U", _) => f(Text, &[R::Path], "url_path"),
        ("q", _) => f(Text, &[R::Query], "query_string"),
        ("H", _) => f(Token, &[R::HttpVersion], "request_protocol"),
        ("s", _) => f(Int, &[R::Status], "status_original"),
        ("b", _) => {
            let mut s = f(Int, &[R::Bytes], "bytes_clf");
            s.dash_is_zero = true;
            s
        }
        ("B", _) => f(Int, &[R::Bytes], "bytes_body"),
        ("O", _) => f(Int, &[R::Bytes], "bytes_out"),
        ("I", _) => f(Int, &[], "bytes_in"),
        ("S", _) => f(Int, &[], "bytes_transferred"),
        ("D", _) => {
            let mut s = f(Int, &[R::Duration], "duration_us_2");
            s.micros_per_unit = Some(1);
            s
        }
        ("T", unit) => {
            let (per, name) = match unit {
                None | Some("s") => (1_000_000, "duration_s"),
                Some("ms") => (1_000, "duration_ms"),
                Some("us") => (1, "duration_us_t"),
                Some(other) => return Err(format!("unknown %T unit {{{other}}}")),
            };
            let mut s = f(Int, &[R::Duration], name);
            s.micros_per_unit = Some(per);
            s
        }
        ("P", None | Some("pid")) => f(Int, &[R::Pid], "pid_2"),
        ("P", Some("tid")) => f(Int, &[], "tid"),
        ("P", Some("hextid")) => f(Token, &[], "tid_hex"),
        ("P", Some(other)) => return Err(format!("unknown %P format {{{other}}}")),
        ("v", _) => f(Token, &[R::Vhost], "vhost_canonical"),
        ("V", _) => f(Token, &[R::Vhost], "server_name"),
        ("p", None | Some("canonical")) => f(Int, &[], "port"),
        ("p", Some("local")) => f(Int, &[], "local_port"),
        ("p", Some("remote")) => f(Int, &[], "remote_port"),
        ("p", Some(other)) => return Err(format!("unknown %p format {{{other}}}")),
        ("k", _) => f(Int, &[], "keepalive_requests"),
        ("X", _) => f(Token, &[], "connection_status"),
        ("L", _) => f(Token, &[], "log_id"),
        ("R", _) => f(Text, &[], "handler"),
        ("f", _) => f(Text, &[], "filename"),
        ("e", Some(v)) => f(Text, &[], &sanitize("env_", v)),
        ("n", Some(v)) => f(Text, &[], &sanitize("note_", v)),
        ("C", Some(v)) => f(Text, &[], &sanitize("cookie_", v)),
        ("o", Some(v)) => f(Text, &[], &sanitize("resp_", v)),
        ("i", Some(h)) => {
            let lower = h.to_ascii_lowercase();
            match lower.as_str() {
                "referer" => f(Text, &[R::Referer], "req_referer"),
                "user-agent" => f(Text, &[R::UserAgent], "req_user_agent"),
                _ => f(Text, &[], &sanitize("req_", h)),
            }
        }
        ("x", Some(var)) => ssl_var(dir, var),
        ("c", Some(var)) => match var {
            "version" => ssl_var(dir, "SSL_PROTOCOL"),
            "cipher" => ssl_var(dir, "SSL_CIPHER"),
            other => {
                let mut s = f(Text, &[], &sanitize("ssl_", other));
                s.raw_ok = true;
                s
            }
        },
        ("^ti", Some(h)) => f(Text, &[], &sanitize("trailer_in_", h)),
        ("^to", Some(h)) => f(Text, &[], &sanitize("trailer_out_", h)),
        ("^FB", _) => f(Int, &[], "ttfb_us"),
        (l @ ("e" | "n" | "C" | "o" | "i" | "x" | "c" | "^ti" | "^to"), None) => {
            return Err(format!("%{l} needs a {{NAME}} argument"))
        }
        // A letter with an argument that httpd does not define: a third-party module's
        // (ModSecurity's `%{TX.var}M`, ...). Its value is text we cannot check.
        (l, Some(a)) if l.len() == 1 && l.bytes().all(|b| b.is_ascii_alphabetic()) => {
            let mut s = f(Text, &[], &sanitize(&format!("module_{l}_"), a));
            s.raw_ok = true;
            s.opaque = true;
            s
        }
        (l, _) => return Err(format!("unknown directive %{l}")),
    };
    Ok(spec)
}

fn ssl_var(dir: &str, var: &str) -> FieldSpec {
    let fb = sanitize("", var);
    let mut spec = match var {
        "SSL_PROTOCOL" => FieldSpec::new(dir, Kind::Token, &[Role::TlsProtocol], "ssl_protocol"),
        "SSL_CIPHER" => FieldSpec::new(dir, Kind::Token, &[Role::TlsCipher], "ssl_cipher"),
        "SSL_SESSION_RESUMED" => FieldSpec::new(dir, Kind::Token, &[Role::TlsSessionReused], &fb),
        // httpd trunk's `SSLClientHelloVars On`: hex lists, four digits an item (two
        // for the EC point formats).
        "SSL_CLIENTHELLO_CIPHERS" => {
            FieldSpec::new(dir, Kind::Token, &[Role::TlsOfferedCiphers], &fb)
        }
        "SSL_CLIENTHELLO_GROUPS" => {
            FieldSpec::new(dir, Kind::Token, &[Role::TlsOfferedGroups], &fb)
        }
        "SSL_CLIENTHELLO_VERSION" => {
            FieldSpec::new(dir, Kind::Token, &[Role::TlsHelloVersion], &fb)
        }
        "SSL_CLIENTHELLO_VERSIONS" => {
            FieldSpec::new(dir, Kind::Token, &[Role::TlsHelloVersions], &fb)
        }
        "SSL_CLIENTHELLO_EXTENSIONS" => {
            FieldSpec::new(dir, Kind::Token, &[Role::TlsHelloExtensions], &fb)
        }
        "SSL_CLIENTHELLO_EC_FORMATS" => {
            FieldSpec::new(dir, Kind::Token, &[Role::TlsHelloEcFormats], &fb)
        }
        "SSL_CLIENTHELLO_SIG_ALGOS" => {
            FieldSpec::new(dir, Kind::Token, &[Role::TlsHelloSigAlgs], &fb)
        }
        other => FieldSpec::new(dir, Kind::Text, &[], &sanitize("", other)),
    };
    // Before 2.4.64 mod_ssl values were not escaped (CVE-2024-47252).
    spec.raw_ok = true;
    spec
}

// ---------------------------------------------------------------- nginx

fn compile_nginx_directive(text: &str) -> Result<Format, FormatError> {
    let err = |message: &str, position: usize| FormatError {
        message: message.to_string(),
        format: text.to_string(),
        position,
    };
    let body = text.trim_end().trim_end_matches(';');
    let rest = body.strip_prefix("log_format").unwrap_or(body).trim_start();
    // The format's name.
    let name_len = rest.find(char::is_whitespace).unwrap_or(rest.len());
    let mut rest = rest.get(name_len..).unwrap_or("").trim_start();
    let mut escaping = Escaping::NginxDefault;
    if let Some(r) = rest.strip_prefix("escape=") {
        let word_len = r.find(char::is_whitespace).unwrap_or(r.len());
        escaping = match r.get(..word_len).unwrap_or("") {
            "default" => Escaping::NginxDefault,
            "json" => Escaping::NginxJson,
            "none" => Escaping::None,
            _ => {
                return Err(err(
                    "escape= takes default, json or none",
                    text.len() - rest.len(),
                ))
            }
        };
        rest = r.get(word_len..).unwrap_or("").trim_start();
    }
    // The strings are concatenated with nothing between them.
    let mut joined = String::new();
    let mut chars = rest.char_indices().peekable();
    while let Some((pos, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                let quote = c;
                let mut closed = false;
                while let Some((_, d)) = chars.next() {
                    if d == '\\' {
                        if let Some((_, e)) = chars.next() {
                            if e != quote && e != '\\' {
                                joined.push('\\');
                            }
                            joined.push(e);
                        }
                    } else if d == quote {
                        closed = true;
                        break;
                    } else {
                        joined.push(d);
                    }
                }
                if !closed {
                    return Err(err(
                        "unterminated quoted string",
                        text.len() - rest.len() + pos,
                    ));
                }
            }
            c if c.is_whitespace() => {}
            _ => {
                // An unquoted word.
                joined.push(c);
                while let Some((_, d)) = chars.peek() {
                    if d.is_whitespace() {
                        break;
                    }
                    joined.push(*d);
                    chars.next();
                }
            }
        }
    }
    compile_nginx(&joined, escaping)
}

fn nginx_var(input: &str) -> IResult<&str, &str> {
    preceded(
        char('$'),
        alt((
            delimited(char('{'), take_while1(is_var_char), char('}')),
            take_while1(is_var_char),
        )),
    )
    .parse(input)
}

fn is_var_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn compile_nginx(text: &str, escaping: Escaping) -> Result<Format, FormatError> {
    let mut items = Vec::new();
    let mut lit = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let pos = text.len() - rest.len();
        if rest.starts_with('$') {
            if let Ok((after, name)) = nginx_var(rest) {
                let dir = &rest[..rest.len() - after.len()];
                items.push((RawItem::Lit(std::mem::take(&mut lit)), pos));
                items.push((RawItem::Field(nginx_field(dir, name)), pos));
                rest = after;
                continue;
            }
            if rest.starts_with("${") {
                return Err(FormatError {
                    message: "unterminated ${variable}".into(),
                    format: text.to_string(),
                    position: pos,
                });
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            let mut buf = [0u8; 4];
            lit.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
        rest = chars.as_str();
    }
    items.push((RawItem::Lit(lit), text.len()));
    Format::finish(text.to_string(), Dialect::Nginx, escaping, items)
}

fn nginx_field(dir: &str, name: &str) -> FieldSpec {
    use Kind::*;
    use Role as R;
    let f = |kind, roles: &[Role], fallback: &str| FieldSpec::new(dir, kind, roles, fallback);
    let mut spec = match name {
        "remote_addr" | "binary_remote_addr" => f(Token, &[R::Client], "remote_addr"),
        "realip_remote_addr" => f(Token, &[R::Client], "realip_remote_addr"),
        "remote_user" => f(Text, &[R::User], "remote_user"),
        "time_local" => f(
            Time(TimeSpec::Clf { brackets: false }),
            &[R::Time],
            "time_local",
        ),
        "time_iso8601" => f(Time(TimeSpec::Iso8601), &[R::Time], "time_iso8601"),
        "msec" => f(Time(TimeSpec::EpochDecimal), &[R::Time], "msec"),
        "request" => f(Text, &[R::Request], "request_line"),
        "request_method" => f(Token, &[R::Method], "request_method"),
        "request_uri" => f(Text, &[R::Target], "request_uri"),
        "uri" | "document_uri" => f(Text, &[R::Path], name),
        "args" | "query_string" => f(Text, &[R::Query], name),
        "server_protocol" => f(Token, &[R::HttpVersion], "server_protocol"),
        "status" => f(Int, &[R::Status], "status_2"),
        "body_bytes_sent" => f(Int, &[R::Bytes], "body_bytes_sent"),
        "bytes_sent" => f(Int, &[R::Bytes], "bytes_sent"),
        "request_length"
        | "connection"
        | "connection_requests"
        | "server_port"
        | "remote_port"
        | "pid" => {
            if name == "pid" {
                f(Int, &[R::Pid], "pid_2")
            } else {
                f(Int, &[], name)
            }
        }
        "http_referer" => f(Text, &[R::Referer], "http_referer"),
        "http_user_agent" => f(Text, &[R::UserAgent], "http_user_agent"),
        "ssl_protocol" => f(Token, &[R::TlsProtocol], "ssl_protocol"),
        "ssl_cipher" => f(Token, &[R::TlsCipher], "ssl_cipher"),
        "ssl_ciphers" => f(Token, &[R::TlsOfferedCiphers], name),
        "ssl_curves" => f(Token, &[R::TlsOfferedGroups], name),
        "ssl_curve" => f(Token, &[R::TlsGroup], name),
        "ssl_session_reused" => f(Token, &[R::TlsSessionReused], name),
        "request_time" => {
            let mut s = f(Decimal, &[R::Duration], "request_time");
            s.micros_per_unit = Some(1_000_000);
            s
        }
        "host" | "server_name" | "hostname" => f(Token, &[R::Vhost], name),
        _ => f(Text, &[], &sanitize("", name)),
    };
    if name.starts_with("upstream_") {
        // "0.012, 0.034 : 0.001" lists: keep them as text, ended by a space that is
        // not the list's own.
        spec.kind = Text;
        spec.upstream_list = true;
    }
    spec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offer_fields_have_roles_in_both_dialects() {
        let n = Format::compile("nginx-ssl-full").unwrap();
        for (role, column) in [
            (Role::TlsOfferedCiphers, "tls_offered_ciphers"),
            (Role::TlsOfferedGroups, "tls_offered_groups"),
            (Role::TlsSessionReused, "tls_session_reused"),
        ] {
            let i = n.role(role).unwrap_or_else(|| panic!("{role:?}"));
            assert_eq!(n.fields[i].name, column);
        }
        assert!(n.fields.iter().any(|f| f.name == "ssl_server_name"));
        let n = Format::compile("$remote_addr $ssl_curve $ssl_curves").unwrap();
        assert!(n.has(Role::TlsGroup) && n.has(Role::TlsOfferedGroups));
        let a = Format::compile(
            "%h %{SSL_CLIENTHELLO_VERSION}x %{SSL_CLIENTHELLO_CIPHERS}x %{SSL_CLIENTHELLO_EXTENSIONS}x \
             %{SSL_CLIENTHELLO_GROUPS}x %{SSL_CLIENTHELLO_EC_FORMATS}x %{SSL_CLIENTHELLO_SIG_ALGOS}x \
             %{SSL_CLIENTHELLO_VERSIONS}x %{SSL_SESSION_RESUMED}x %{SSL_CLIENTHELLO_CIPHERS}x",
        )
        .unwrap();
        for role in [
            Role::TlsHelloVersion,
            Role::TlsOfferedCiphers,
            Role::TlsHelloExtensions,
            Role::TlsOfferedGroups,
            Role::TlsHelloEcFormats,
            Role::TlsHelloSigAlgs,
            Role::TlsHelloVersions,
            Role::TlsSessionReused,
        ] {
            assert!(a.has(role), "{role:?}");
        }
        // A second field of a role keeps a name of its own.
        assert_eq!(
            a.fields.last().map(|f| f.name.as_str()),
            Some("ssl_clienthello_ciphers")
        );
    }

    #[test]
    fn presets_compile_and_have_roles() {
        for (name, _) in PRESETS {
            let f = Format::compile(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(f.has(Role::Client), "{name}");
            assert!(f.has(Role::Time), "{name}");
        }
        let f = Format::compile("combinedssl").unwrap();
        assert!(f.has(Role::TlsProtocol) && f.has(Role::TlsCipher));
        assert_eq!(f.dialect, Dialect::Apache);
        let n = Format::compile("nginx-ssl").unwrap();
        assert_eq!(n.dialect, Dialect::Nginx);
        assert!(n.has(Role::TlsCipher) && n.has(Role::UserAgent));
    }

    #[test]
    fn whole_logformat_line_equals_bare_string() {
        let line = r#"LogFormat "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %{SSL_PROTOCOL}x %{SSL_CIPHER}x" combinedssl"#;
        let a = Format::compile(line).unwrap();
        let b = Format::compile("combinedssl").unwrap();
        assert_eq!(a.items, b.items);
        let bare_escaped = r#"%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %{SSL_PROTOCOL}x %{SSL_CIPHER}x"#;
        assert_eq!(Format::compile(bare_escaped).unwrap().items, b.items);
    }

    #[test]
    fn every_reference_directive_compiles() {
        let all = r#"%h %a %{c}a %A %l %u %t %{%d/%b/%Y:%H:%M:%S}t %{sec}t %{msec}t %{usec}t %{msec_frac}t %{usec_frac}t %{begin:sec}t %{end:msec}t "%r" %m %U %q %H %s %>s %<s %b %B %O %I %S %D %T %{ms}T %{us}T %P %{tid}P %{hextid}P %v %V %p %{remote}p %{local}p %k %X %L %R %f "%{X-Forwarded-For}i" "%{Content-Type}o" "%{sid}C" "%{HOME}e" "%{note}n" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %{version}c %{cipher}c %400,501{User-Agent}i %!200,304{Referer}i %{Foo}^ti %{Foo}^to %^FB %%"#;
        let f = Format::compile(all).unwrap_or_else(|e| panic!("{e}"));
        assert!(f.fields.len() > 50);
        assert!(f.fields.iter().any(|x| x.name == "req_x_forwarded_for"));
    }

    #[test]
    fn unknown_directive_points_at_it() {
        let e = Format::compile("%h %l %Z %t").unwrap_err();
        assert!(e.message.contains("%Z"), "{e}");
        assert_eq!(e.position, 7, "points at the letter");
        let shown = e.to_string();
        assert!(shown.contains("      ^"), "{shown}");
        assert!(Format::compile("%h %{Referer").is_err());
        assert!(Format::compile("%h %").is_err());
        assert!(Format::compile("%h %{x}i").is_ok());
        assert!(Format::compile("%h%u").is_err(), "adjacent text fields");
    }

    #[test]
    fn third_party_directives_are_opaque_text_and_typos_stay_errors() {
        let f = Format::compile(r#"%h %l %u %t "%r" %>s %b "%{TX.anomaly_score}M" %{id}J"#)
            .unwrap_or_else(|e| panic!("{e}"));
        let opaque: Vec<&str> = f
            .fields
            .iter()
            .filter(|x| x.opaque)
            .map(|x| x.directive.as_str())
            .collect();
        assert_eq!(opaque, ["%{TX.anomaly_score}M", "%{id}J"]);
        assert!(f.fields.iter().all(|x| !x.opaque || x.kind == Kind::Text));
        // A known letter without its argument, or an unknown bare letter: errors.
        assert!(Format::compile("%h %{Referer}").is_err());
        assert!(Format::compile("%h %Z").is_err());
        assert!(Format::compile("%h %i").is_err());
    }

    #[test]
    fn nginx_directive_with_escape_and_several_strings() {
        let f = Format::compile(
            r#"log_format j escape=json '{"t":"$time_iso8601",' '"ua":"$http_user_agent","c":"${ssl_cipher}"}';"#,
        )
        .unwrap();
        assert_eq!(f.escaping, Escaping::NginxJson);
        assert_eq!(f.dialect, Dialect::Nginx);
        assert!(f.has(Role::TlsCipher));
        assert!(Format::compile("log_format x escape=bogus '$a';").is_err());
        let bare = Format::compile(r#"$remote_addr [$time_local] "$request""#).unwrap();
        assert_eq!(bare.dialect, Dialect::Nginx);
    }
}
