//! `tlsgap whatif` as a table.

use tlsgap_agg::whatif::WhatifReport;

use crate::emit::{self, fit, percent, thousands};
use crate::escape;

/// The `whatif` table, with the summary line under it.
pub fn table(r: &WhatifReport, summary: &str) -> String {
    let mut out = String::new();
    let p = &r.policy;
    out.push_str(&format!(
        "policy: {}{}\n  protocols: {}\n  TLS 1.2 and older suites: {}\n  TLS 1.3 suites: {}\n\n",
        p.name,
        p.version
            .as_deref()
            .map(|v| format!(" (version {v})"))
            .unwrap_or_default(),
        p.protocols.join(" "),
        p.tls12_ciphers.len(),
        p.tls13_ciphers.len(),
    ));
    out.push_str(&format!(
        "would refuse {} of {} TLS requests ({})\n",
        thousands(r.requests.refused),
        thousands(r.requests.total),
        percent(r.requests.share)
    ));
    out.push_str(&format!(
        "would refuse {} of {} clients (address + User-Agent) ({}); {} more partly\n",
        thousands(r.clients.refused),
        thousands(r.clients.total),
        percent(r.clients.share),
        thousands(r.clients.partly)
    ));
    if r.undecided_requests > 0 {
        out.push_str(&format!(
            "{} requests name a protocol or suite the catalogue does not know (not counted)\n",
            thousands(r.undecided_requests)
        ));
    }
    out.push_str(&format!("note: {}\n\n", r.caveat));

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
                c.decision.replace('_', " "),
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
