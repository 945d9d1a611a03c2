//! `tlsgap ciphers`: suites as a table, CSV rows and JSON views.

use serde::Serialize;
use tlsgap_agg::{Cell, CellType, Rows};
use tlsgap_ciphers::{Protocol, Suite, Verdict};

use crate::emit;
use crate::layout::Col;

/// A suite as `ciphers --format json` prints it.
#[derive(Debug, Serialize)]
pub struct SuiteView<'a> {
    /// The name asked for (absent when listing the table).
    #[serde(skip_serializing_if = "Option::is_none")]
    query: Option<&'a str>,
    code: Option<String>,
    iana: Option<&'a str>,
    openssl: Vec<&'a str>,
    min_protocol: Option<&'static str>,
    kx: Option<&'a str>,
    au: Option<&'a str>,
    enc: Option<&'a str>,
    mode: Option<tlsgap_ciphers::Mode>,
    key_bits: Option<u16>,
    strength_bits: Option<u16>,
    mac: Option<&'a str>,
    forward_secrecy: Option<bool>,
    aead: Option<bool>,
    export: Option<bool>,
    iana_recommended: Option<String>,
    verdict: Verdict,
}

/// `0xC0,0x2F` (three bytes for SSLv2 suites), as `openssl ciphers -V` writes codes.
pub fn code_text(s: &Suite) -> String {
    let bytes = s.code.to_be_bytes();
    let used = if s.sslv2_code {
        &bytes[1..]
    } else {
        &bytes[2..]
    };
    used.iter()
        .map(|b| format!("0x{b:02X}"))
        .collect::<Vec<_>>()
        .join(",")
}

pub fn view<'a>(query: Option<&'a str>, s: &'a Suite) -> SuiteView<'a> {
    SuiteView {
        query,
        code: Some(code_text(s)),
        iana: s.iana.as_deref(),
        openssl: s.openssl.iter().map(String::as_str).collect(),
        min_protocol: Some(s.min_protocol.as_str()),
        kx: Some(&s.kx),
        au: Some(&s.au),
        enc: Some(&s.enc),
        mode: Some(s.mode),
        key_bits: Some(s.key_bits),
        strength_bits: Some(s.strength_bits),
        mac: Some(&s.mac),
        forward_secrecy: Some(s.forward_secrecy),
        aead: Some(s.aead),
        export: Some(s.export),
        iana_recommended: s.iana_recommended.map(String::from),
        verdict: s.verdict,
    }
}

pub fn unknown(query: &str) -> SuiteView<'_> {
    SuiteView {
        query: Some(query),
        code: None,
        iana: None,
        openssl: Vec::new(),
        min_protocol: None,
        kx: None,
        au: None,
        enc: None,
        mode: None,
        key_bits: None,
        strength_bits: None,
        mac: None,
        forward_secrecy: None,
        aead: None,
        export: None,
        iana_recommended: None,
        verdict: Verdict::Unknown,
    }
}

/// Whether `s` can be negotiated under `p`.
pub fn usable_under(s: &Suite, p: Protocol) -> bool {
    match p {
        Protocol::SslV2 => s.sslv2_code,
        Protocol::TlsV1_3 => s.min_protocol == Protocol::TlsV1_3,
        _ => !s.sslv2_code && s.min_protocol != Protocol::TlsV1_3 && s.min_protocol <= p,
    }
}

const COLUMNS: [(&str, CellType); 17] = [
    ("query", CellType::Text),
    ("code", CellType::Text),
    ("iana", CellType::Text),
    ("openssl", CellType::Text),
    ("min_protocol", CellType::Text),
    ("kx", CellType::Text),
    ("au", CellType::Text),
    ("enc", CellType::Text),
    ("mode", CellType::Text),
    ("key_bits", CellType::Int),
    ("strength_bits", CellType::Int),
    ("mac", CellType::Text),
    ("forward_secrecy", CellType::Bool),
    ("aead", CellType::Bool),
    ("export", CellType::Bool),
    ("iana_recommended", CellType::Text),
    ("verdict", CellType::Text),
];

pub fn rows(views: &[SuiteView<'_>]) -> Rows {
    let mut rows = Rows::new(&COLUMNS);
    for v in views {
        let mode = v.mode.map(|m| {
            serde_json::to_value(m)
                .ok()
                .and_then(|j| j.as_str().map(String::from))
                .unwrap_or_default()
        });
        rows.push(vec![
            v.query.into(),
            v.code.clone().into(),
            v.iana.into(),
            (!v.openssl.is_empty()).then(|| v.openssl.join("|")).into(),
            v.min_protocol.into(),
            v.kx.into(),
            v.au.into(),
            v.enc.into(),
            mode.into(),
            v.key_bits.into(),
            v.strength_bits.into(),
            v.mac.into(),
            v.forward_secrecy.into(),
            v.aead.into(),
            v.export.into(),
            v.iana_recommended.clone().into(),
            Cell::from(v.verdict.as_str()),
        ]);
    }
    rows
}

fn yes_no(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "yes",
        Some(false) => "no",
        None => "",
    }
}

/// The suites in `width` cells: with names asked for, one block of facts per name
/// (long values folded); else one row per suite, names never cut, the less telling
/// columns left out when narrow (see [`crate::layout`]).
pub fn table(views: &[SuiteView<'_>], asked: bool, width: usize) -> String {
    if asked {
        // One block per name: every fact, one per line; a blank line between blocks.
        let mut blocks = Vec::with_capacity(views.len());
        for v in views {
            let q = crate::escape::terminal(v.query.unwrap_or(""));
            if v.verdict == Verdict::Unknown && v.code.is_none() {
                blocks.push(emit::wrap(
                    &format!("{q}:"),
                    "unknown (not in the catalogue)",
                    width,
                    2,
                ));
                continue;
            }
            let lines = [
                ("code", v.code.clone().unwrap_or_default()),
                (
                    "IANA name",
                    v.iana.unwrap_or("(not registered)").to_string(),
                ),
                ("OpenSSL names", v.openssl.join(", ")),
                ("min protocol", v.min_protocol.unwrap_or("").to_string()),
                (
                    "key exchange",
                    format!("{} (auth {})", v.kx.unwrap_or(""), v.au.unwrap_or("")),
                ),
                (
                    "cipher",
                    format!(
                        "{} ({} key bits, {} strength bits)",
                        v.enc.unwrap_or(""),
                        v.key_bits.unwrap_or(0),
                        v.strength_bits.unwrap_or(0)
                    ),
                ),
                ("MAC", v.mac.unwrap_or("").to_string()),
                ("forward secrecy", yes_no(v.forward_secrecy).to_string()),
                ("AEAD", yes_no(v.aead).to_string()),
                ("export grade", yes_no(v.export).to_string()),
                (
                    "IANA recommended",
                    v.iana_recommended.clone().unwrap_or_else(|| "-".into()),
                ),
                ("verdict", v.verdict.as_str().to_string()),
            ];
            let mut out = format!("{q}\n");
            for (k, val) in lines {
                let line = format!("  {k:<17} {val}");
                if crate::layout::cells(&line) <= width {
                    out.push_str(&line);
                    out.push('\n');
                } else {
                    out.push_str(&emit::wrap(&format!("  {k:<17}"), &val, width, 20));
                }
            }
            blocks.push(out);
        }
        blocks.join("\n")
    } else {
        let rows: Vec<Vec<String>> = views
            .iter()
            .map(|v| {
                vec![
                    v.code.clone().unwrap_or_default(),
                    v.openssl
                        .first()
                        .copied()
                        .or(v.iana)
                        .unwrap_or("")
                        .to_string(),
                    v.min_protocol.unwrap_or("").to_string(),
                    format!("{}/{}", v.kx.unwrap_or(""), v.au.unwrap_or("")),
                    format!("{}({})", v.enc.unwrap_or(""), v.strength_bits.unwrap_or(0)),
                    v.verdict.as_str().to_string(),
                ]
            })
            .collect();
        let mut out = crate::layout::table(
            &[
                Col::keep("code").drop(4),
                Col::keep("name"),
                Col::keep("since").drop(3),
                Col::cut("kx/au", 40, 9).drop(1),
                Col::cut("enc(bits)", 40, 11).drop(2),
                Col::keep("verdict"),
            ],
            &rows,
            width,
        );
        out.push_str(&format!("{} suites\n", views.len()));
        out
    }
}
