//! `--explain` (`ciphers`, `whatif`): a policy's cipher string expanded the way
//! `openssl ciphers -v` expands it, with why each suite is in or out.

use serde::Serialize;
use tlsgap_agg::{CellType, Rows};
use tlsgap_ciphers::cipherstring::Action;
use tlsgap_ciphers::policy::{Expanded, Policy, Reason, Source};
use tlsgap_ciphers::Protocol;

use crate::emit;
use crate::layout::{self, Col};

/// One suite of the expansion, as JSON and CSV write it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ExplainRow {
    /// 1-based place in the server's preference order (TLS 1.3 and older counted
    /// apart), absent when out.
    pub position: Option<usize>,
    /// OpenSSL name (IANA name for TLS 1.3 suites).
    pub suite: String,
    /// The first protocol it works with.
    pub min_protocol: &'static str,
    /// The catalogue's verdict.
    pub verdict: &'static str,
    /// Whether a handshake may pick it.
    pub usable: bool,
    /// Why not (`suite_not_listed`, `suite_security_level`, ...).
    pub reason: Option<&'static str>,
    /// What put it in or took it out: `added by HIGH`, `killed by !aNULL`, ...
    pub by: Option<String>,
    /// The whole explanation in words.
    pub why: String,
}

fn by_text(e: &Expanded, policy: &Policy) -> Option<String> {
    if let Some(step) = &e.step {
        let verb = match step.action {
            Action::Added => "added by",
            Action::Removed => "removed by",
            Action::Killed => "killed by",
            Action::Moved => "moved to the end by",
            Action::SuiteB => "selected by",
        };
        return Some(format!("{verb} {}", step.term));
    }
    let tls13 = e.suite.min_protocol == Protocol::TlsV1_3;
    let listed = if tls13 {
        &policy.listed13
    } else {
        &policy.listed12
    };
    let in_list = listed.iter().any(|s| s.code == e.suite.code);
    match (policy.source, tls13, in_list) {
        (Source::Mozilla, _, true) => Some("in the profile".to_string()),
        (Source::Mozilla, _, false) => None,
        (_, true, true) => Some("TLS 1.3 Ciphersuites".to_string()),
        (_, true, false) => None,
        (_, false, _) => Some("never named".to_string()),
    }
}

/// The expansion of `policy` ([`Policy::expand`]) as rows.
pub fn rows(policy: &Policy) -> Vec<ExplainRow> {
    let mut pos12 = 0;
    let mut pos13 = 0;
    policy
        .expand()
        .into_iter()
        .map(|e| {
            let tls13 = e.suite.min_protocol == Protocol::TlsV1_3;
            let position = e.refused.is_none().then(|| {
                let n = if tls13 { &mut pos13 } else { &mut pos12 };
                *n += 1;
                *n
            });
            let suite = if tls13 {
                e.suite.iana.clone()
            } else {
                e.suite.openssl.first().cloned()
            }
            .unwrap_or_default();
            let by = by_text(&e, policy);
            let probe = if tls13 {
                Protocol::TlsV1_3
            } else {
                Protocol::TlsV1_2
            };
            let why = match e.refused {
                None => format!(
                    "in{}",
                    by.as_deref().map(|b| format!(" ({b})")).unwrap_or_default()
                ),
                Some(r) => {
                    let mut w = format!("out: {}", policy.describe(r, probe, e.suite));
                    if r != Reason::SuiteNotListed || e.step.is_some() {
                        if let Some(b) = &by {
                            w.push_str(&format!(" ({b})"));
                        }
                    }
                    w
                }
            };
            ExplainRow {
                position,
                suite,
                min_protocol: e.suite.min_protocol.as_str(),
                verdict: e.suite.verdict.as_str(),
                usable: e.refused.is_none(),
                reason: e.refused.map(Reason::as_str),
                by,
                why,
            }
        })
        .collect()
}

/// The heading: what is expanded, at which level, folded to `width` cells (the
/// cipher string after its `:`, the rest at spaces).
pub fn heading(policy: &Policy, width: usize) -> String {
    let mut out = String::new();
    match &policy.cipher_string {
        Some(cs) => {
            let cs = crate::escape::terminal(cs);
            // Each element keeps its `:`, so the folded lines join back to the string.
            let items: Vec<&str> = cs.split_inclusive(':').collect();
            out.push_str(&layout::wrap_items("cipher string: ", &items, "", width, 2));
            if policy.source == Source::Apache {
                out.push_str(&layout::wrap(
                    " ",
                    &format!(
                        "(mod_ssl appends {}: no anonymous, NULL or export suites)",
                        tlsgap_ciphers::policy::APACHE_CIPHER_SUFFIX
                    ),
                    width,
                    3,
                ));
            }
        }
        None => out.push_str(&layout::wrap("profile:", &policy.title(), width, 2)),
    }
    if let Some(level) = policy.seclevel {
        out.push_str(&layout::wrap(
            "security level:",
            &format!(
                "{level}{}",
                policy
                    .seclevel_origin
                    .as_deref()
                    .map(|o| format!(" ({})", crate::escape::terminal(o)))
                    .unwrap_or_default()
            ),
            width,
            2,
        ));
        if let Some(keys) = crate::whatif::key_warning(level) {
            out.push_str(&layout::wrap("keys:", &keys, width, 2));
        }
    }
    let (words, commands) = ignored(&policy.ignored_words);
    for (label, list) in [
        ("skipped (name no suite; OpenSSL skips them too):", words),
        (NOT_MODELLED, commands),
    ] {
        if !list.is_empty() {
            out.push_str(&layout::wrap(
                label,
                &crate::escape::terminal(&list.join(" ")),
                width,
                2,
            ));
        }
    }
    out
}

/// The label of the `ssl_conf_command`/`SSLOpenSSLConfCmd` commands a policy does not
/// model.
pub(crate) const NOT_MODELLED: &str =
    "not modelled (the server applies them; what they change is not counted):";

/// A policy's `ignored_words` apart: the cipher-string words that named nothing, and
/// the configuration commands not modelled (`ssl_conf_command Options`: a cipher
/// string's words hold no space).
pub(crate) fn ignored(all: &[String]) -> (Vec<&str>, Vec<&str>) {
    all.iter()
        .map(String::as_str)
        .partition(|w| !w.contains(' '))
}

/// The expansion as a table in `width` cells: usable suites in order, then the rest
/// with the reason (suite names never cut; see [`crate::layout`]).
pub fn table(policy: &Policy, width: usize) -> String {
    let rows = rows(policy);
    let usable = rows.iter().filter(|r| r.usable).count();
    let mut out = heading(policy, width);
    out.push_str(&format!(
        "{usable} suites usable, {} out\n\n",
        rows.len() - usable
    ));
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.position
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "-".into()),
                r.suite.clone(),
                r.min_protocol.to_string(),
                r.verdict.to_string(),
            ]
        })
        .collect();
    let table = layout::table(
        &[
            Col::keep("#"),
            Col::keep("suite"),
            Col::keep("from").drop(2),
            Col::keep("verdict").drop(1),
        ],
        &cells,
        width,
    );
    // The table's lines: its header, then one (or, wrapped, more) per suite, then
    // maybe a line naming columns left out. Each suite's `why` goes under its row.
    let mut lines = table.lines().peekable();
    if let Some(h) = lines.next() {
        out.push_str(h);
        out.push('\n');
    }
    let mut rows_left = rows.iter().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        // A row's continuation lines start with a blank (the `#` column is empty).
        let row_ends = lines.peek().is_none_or(|next| !next.starts_with(' '));
        if row_ends {
            if let Some(r) = rows_left.next() {
                out.push_str(&emit::wrap(
                    "    ",
                    &crate::escape::terminal(&r.why),
                    layout::measure(width),
                    6,
                ));
            }
        }
    }
    out
}

/// Columns of [`explain_rows`].
pub const EXPLAIN_COLUMNS: [(&str, CellType); 8] = [
    ("position", CellType::Int),
    ("suite", CellType::Text),
    ("min_protocol", CellType::Text),
    ("verdict", CellType::Text),
    ("usable", CellType::Bool),
    ("reason", CellType::Text),
    ("by", CellType::Text),
    ("why", CellType::Text),
];

/// The expansion as CSV rows.
pub fn explain_rows(rows: &[ExplainRow]) -> Rows {
    let mut out = Rows::new(&EXPLAIN_COLUMNS);
    for r in rows {
        out.push(vec![
            r.position.map(|p| p as u64).into(),
            r.suite.as_str().into(),
            r.min_protocol.into(),
            r.verdict.into(),
            r.usable.into(),
            r.reason.into(),
            r.by.clone().into(),
            r.why.as_str().into(),
        ]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_say_what_put_each_suite_in_or_out() {
        let p = Policy::from_config("SSLCipherSuite HIGH:!aNULL:!MD5:!RSA:@SECLEVEL=3").unwrap();
        let rows = rows(&p);
        let get = |n: &str| rows.iter().find(|r| r.suite == n).unwrap();
        let r = get("ECDHE-RSA-AES128-GCM-SHA256");
        assert!(r.usable);
        assert_eq!(r.by.as_deref(), Some("added by HIGH"));
        let r = get("AES128-SHA");
        assert!(!r.usable);
        assert_eq!(r.by.as_deref(), Some("killed by !RSA"));
        assert_eq!(r.reason, Some("suite_not_listed"));
        let r = get("DHE-RSA-AES128-SHA");
        assert_eq!(r.reason, None, "{r:?}");
        let t = table(&p, 80);
        assert!(t.contains("security level: 3"), "{t}");
        // What level 3 asks of the server's keys, or it does not start.
        assert!(t.contains("3072 bits"), "{t}");
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        for width in [60, 40, 20] {
            let t = table(&p, width);
            let widest = t.lines().map(|l| l.chars().count()).max().unwrap();
            assert!(widest <= width.max(30), "{width}: {widest}\n{t}");
        }
    }
}
