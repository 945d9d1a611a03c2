//! `tlsgap whatif` as a table.

use tlsgap_agg::whatif::WhatifReport;

use crate::emit::{self, fit, percent, thousands};
use crate::escape;

/// The `whatif` table, with the summary line under it.
pub fn table(r: &WhatifReport, summary: &str) -> String {
    let mut out = String::new();
    let p = &r.policy;
    out.push_str(&format!(
        "policy: {}{}\n",
        p.name,
        p.version
            .as_deref()
            .map(|v| format!(" (Mozilla guideline {v})"))
            .unwrap_or_default(),
    ));
    if let Some(level) = p.seclevel {
        out.push_str(&format!(
            "  OpenSSL 3 security level: {level}{}\n",
            p.seclevel_origin
                .as_deref()
                .map(|o| format!(" ({})", escape::terminal(o)))
                .unwrap_or_default()
        ));
    }
    let off: Vec<&str> = p
        .configured_protocols
        .iter()
        .filter(|c| !p.protocols.contains(c))
        .copied()
        .collect();
    out.push_str(&format!(
        "  protocols: {}{}\n  TLS 1.2 and older suites: {}\n  TLS 1.3 suites: {}\n",
        p.protocols.join(" "),
        if off.is_empty() {
            String::new()
        } else {
            format!(
                " ({} enabled, refused at this security level)",
                off.join(" ")
            )
        },
        p.tls12_ciphers.len(),
        p.tls13_ciphers.len(),
    ));
    if !p.groups.is_empty() {
        out.push_str(&format!("  groups: {}\n", p.groups.join(" ")));
    }
    if !p.ignored_words.is_empty() {
        out.push_str(&format!(
            "  skipped (name no suite; OpenSSL skips them too): {}\n",
            escape::terminal(&p.ignored_words.join(" "))
        ));
    }
    out.push('\n');
    out.push_str(&format!(
        "would refuse {} of {} TLS requests ({})\n",
        thousands(r.requests.refused),
        thousands(r.requests.total),
        percent(r.requests.share)
    ));
    out.push_str(&format!(
        "would refuse {} of {} clients ({}) ({}); {} more partly\n",
        thousands(r.clients.refused),
        thousands(r.clients.total),
        if r.client_key == "addr" {
            "address"
        } else {
            "address + User-Agent"
        },
        percent(r.clients.share),
        thousands(r.clients.partly)
    ));
    if r.undecided_requests > 0 {
        out.push_str(&format!(
            "{} requests name a protocol or suite the catalogue does not know (not counted)\n",
            thousands(r.undecided_requests)
        ));
    }
    out.push_str(&format!("note: {}\n", r.caveat));
    if let Some(e) = &r.estimate {
        out.push_str(&emit::wrap(
            "note:",
            &format!(
                "{}; client kinds, User-Agents and addresses below cover the exact \
                 clients only (requests are exact)",
                e.note()
            ),
            80,
            6,
        ));
    }
    out.push('\n');

    let rows: Vec<Vec<String>> = r
        .ciphers
        .iter()
        .map(|c| {
            vec![
                c.protocol.clone(),
                c.cipher.clone(),
                thousands(c.requests),
                thousands(c.clients),
                c.verdict.as_str().to_string(),
                short_reason(c.decision, c.reason),
            ]
        })
        .collect();
    out.push_str(&emit::text_table(
        &[
            "protocol", "cipher", "requests", "clients", "verdict", "policy",
        ],
        &rows,
        34,
    ));
    let mut whys: Vec<&str> = Vec::new();
    for c in &r.ciphers {
        if let Some(w) = c.why.as_deref() {
            if !whys.contains(&w) {
                whys.push(w);
            }
        }
    }
    if !whys.is_empty() {
        out.push_str("why refused:\n");
        for w in whys.iter().take(WHY_LINES) {
            out.push_str(&emit::wrap(" ", &escape::terminal(w), 80, 4));
        }
        if whys.len() > WHY_LINES {
            out.push_str(&format!(
                "  ... and {} more (--format json: `why` of each row)\n",
                whys.len() - WHY_LINES
            ));
        }
    }
    out.push('\n');
    let rows: Vec<Vec<String>> = r
        .kinds
        .iter()
        .map(|k| {
            vec![
                k.kind.as_str().to_string(),
                thousands(k.requests),
                thousands(k.refused_requests),
                thousands(k.clients),
                thousands(k.refused_clients),
            ]
        })
        .collect();
    out.push_str(&emit::text_table(
        &["client kind", "requests", "refused", "clients", "refused"],
        &rows,
        20,
    ));
    if !r.top_user_agents.is_empty() {
        out.push_str("\ntop refused User-Agents\n");
        for u in &r.top_user_agents {
            out.push_str(&format!(
                "{:>11}  {:<8} {}\n",
                thousands(u.refused_requests),
                u.kind.as_str(),
                fit(&escape::terminal(&u.user_agent), 58)
            ));
        }
    }
    if !r.top_addresses.is_empty() {
        out.push_str("\ntop refused addresses\n");
        for a in &r.top_addresses {
            out.push_str(&format!(
                "{:>11}  {}\n",
                thousands(a.refused_requests),
                fit(&escape::terminal(&a.client), 60)
            ));
        }
    }
    out.push_str(&format!("\n{summary}\n"));
    out
}

/// How many distinct reasons the table spells out.
const WHY_LINES: usize = 12;

/// The table's `policy` column: the decision, or the refusal's reason in a few words.
fn short_reason(decision: &str, reason: Option<&str>) -> String {
    match reason {
        Some("protocol_not_enabled") => "protocol off",
        Some("protocol_security_level") => "sec. level",
        Some("protocol_not_in_openssl3") => "no OpenSSL3",
        Some("suite_not_for_protocol") => "wrong proto",
        Some("suite_not_listed") => "not listed",
        Some("suite_not_in_openssl3") => "no OpenSSL3",
        Some("suite_security_level") => "sec. level",
        Some("no_dh_parameters") => "no dhparam",
        _ => return decision.replace('_', " "),
    }
    .to_string()
}
