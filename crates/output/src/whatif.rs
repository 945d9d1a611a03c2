//! `tlsgap whatif` as a table.

use tlsgap_agg::whatif::WhatifReport;

use crate::emit::{self, percent, summary_lines, thousands, wrap};
use crate::escape;
use crate::layout::{self, fit, Col};

/// The `whatif` table, with the summary under it, in `width` cells (see
/// [`crate::layout`]): the suite table drops its verdict, then its clients, when
/// narrow; User-Agents and addresses are cut with `…`; sentences are folded.
pub fn table(r: &WhatifReport, summary: &str, width: usize) -> String {
    let mut out = String::new();
    let p = &r.policy;
    // One line of the policy's description, folded (continuations under its text).
    let fold = |line: String| layout::fold(&line, width, 2);
    out.push_str(&fold(format!(
        "policy: {}{}",
        p.name,
        p.version
            .as_deref()
            .map(|v| format!(" (Mozilla guideline {v})"))
            .unwrap_or_default(),
    )));
    if let Some(level) = p.seclevel {
        out.push_str(&fold(format!(
            "  OpenSSL 3 security level: {level}{}",
            p.seclevel_origin
                .as_deref()
                .map(|o| format!(" ({})", escape::terminal(o)))
                .unwrap_or_default()
        )));
        if let Some(keys) = key_warning(level) {
            out.push_str(&fold(format!("  {keys}")));
        }
    }
    if let Some(dh) = &p.dh_parameters {
        out.push_str(&fold(format!("  DH parameters: {}", escape::terminal(dh))));
    }
    let off: Vec<&str> = p
        .configured_protocols
        .iter()
        .filter(|c| !p.protocols.contains(c))
        .copied()
        .collect();
    out.push_str(&fold(format!(
        "  protocols: {}{}",
        p.protocols.join(" "),
        if off.is_empty() {
            String::new()
        } else {
            format!(
                " ({} enabled, refused at this security level)",
                off.join(" ")
            )
        },
    )));
    out.push_str(&format!(
        "  TLS 1.2 and older suites: {}\n  TLS 1.3 suites: {}\n",
        p.tls12_ciphers.len(),
        p.tls13_ciphers.len(),
    ));
    if !p.groups.is_empty() {
        out.push_str(&fold(format!("  groups: {}", p.groups.join(" "))));
    }
    if !p.groups_need_openssl_3_5.is_empty() {
        out.push_str(&fold(format!(
            "  {} {} OpenSSL 3.5 or newer: OpenSSL 3.0 (Debian 12, Ubuntu 22.04 and \
             24.04) refuses a group list naming it, and the server does not start",
            p.groups_need_openssl_3_5.join(", "),
            if p.groups_need_openssl_3_5.len() > 1 {
                "need"
            } else {
                "needs"
            }
        )));
    }
    let (words, commands) = crate::explain::ignored(&p.ignored_words);
    if !words.is_empty() {
        out.push_str(&fold(format!(
            "  skipped (name no suite; OpenSSL skips them too): {}",
            escape::terminal(&words.join(" "))
        )));
    }
    if !commands.is_empty() {
        out.push_str(&fold(format!(
            "  {} {}",
            crate::explain::NOT_MODELLED,
            escape::terminal(&commands.join(" "))
        )));
    }
    out.push('\n');
    out.push_str(&fold(format!(
        "would refuse {} of {} TLS requests ({})",
        thousands(r.requests.refused),
        thousands(r.requests.total),
        percent(r.requests.share)
    )));
    out.push_str(&fold(format!(
        "would refuse {} of {} clients ({}) ({}); {} more partly",
        thousands(r.clients.refused),
        thousands(r.clients.total),
        if r.client_key == "addr" {
            "address"
        } else {
            "address + User-Agent"
        },
        percent(r.clients.share),
        thousands(r.clients.partly)
    )));
    if r.undecided_requests > 0 {
        out.push_str(&fold(format!(
            "{} requests name a protocol or suite the catalogue does not know (not counted)",
            thousands(r.undecided_requests)
        )));
    }
    out.push_str(&wrap("note:", r.caveat, layout::measure(width), 6));
    if let Some(e) = &r.estimate {
        out.push_str(&emit::wrap(
            "note:",
            &format!(
                "{}; client kinds, User-Agents and addresses below cover the exact \
                 clients only (requests are exact)",
                e.note()
            ),
            layout::measure(width),
            6,
        ));
    }
    out.push('\n');
    if let Some(x) = &r.exact {
        exact_section(&mut out, x, width);
    }

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
    out.push_str(&layout::table(
        &[
            Col::keep("protocol"),
            Col::keep("cipher"),
            Col::keep("requests"),
            Col::keep("clients").drop(2),
            Col::keep("verdict").drop(1),
            Col::cut("policy", 34, 8),
        ],
        &rows,
        width,
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
            out.push_str(&wrap(" ", &escape::terminal(w), layout::measure(width), 4));
        }
        if whys.len() > WHY_LINES {
            out.push_str(&wrap(
                " ",
                &format!(
                    "... and {} more (--format json: `why` of each row)",
                    whys.len() - WHY_LINES
                ),
                width,
                4,
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
    out.push_str(&layout::table(
        &[
            Col::cut("client kind", 20, 8),
            Col::keep("requests"),
            Col::keep("refused"),
            Col::keep("clients"),
            Col::keep("refused"),
        ],
        &rows,
        width,
    ));
    if !r.top_user_agents.is_empty() {
        out.push_str("\ntop refused User-Agents\n");
        for u in &r.top_user_agents {
            out.push_str(&user_agent_line(
                u.refused_requests,
                u.kind.as_str(),
                &u.user_agent,
                width,
            ));
        }
    }
    if !r.top_addresses.is_empty() {
        out.push_str("\ntop refused addresses\n");
        for a in &r.top_addresses {
            out.push_str(&format!(
                "{:>11}  {}\n",
                thousands(a.refused_requests),
                fit(
                    &escape::terminal(&a.client),
                    60.min(width.saturating_sub(13)).max(8)
                )
            ));
        }
    }
    out.push('\n');
    out.push_str(&summary_lines(summary, width));
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
        Some("no_suite_for_newest_protocol") => "no 1.3 suite",
        _ => return decision.replace('_', " "),
    }
    .to_string()
}

/// The exact answer from the logged offers.
fn exact_section(out: &mut String, x: &tlsgap_agg::whatif::ExactReport, width: usize) {
    let fold = |line: String| layout::fold(&line, width, 2);
    out.push_str(&fold(format!(
        "from the clients' logged offers (exact, as OpenSSL would negotiate; server \
         certificate: {}, {}):",
        x.certs, x.certs_origin
    )));
    out.push_str(&fold(format!(
        "  {} of {} requests would still work, {} would fail ({}); {} with another \
         protocol or suite than logged",
        thousands(x.works),
        thousands(x.requests),
        thousands(x.fails),
        percent(x.share_fails),
        thousands(x.changed)
    )));
    out.push_str(&fold(format!(
        "  {} clients sent an offer with every request; {} of them would lose access",
        thousands(x.clients),
        thousands(x.clients_failing)
    )));
    if x.without_offer.total > 0 {
        out.push_str(&fold(format!(
            "  {} requests logged no offer: {} refused by the suite they negotiated \
             (upper bound)",
            thousands(x.without_offer.total),
            thousands(x.without_offer.refused)
        )));
    }
    if !x.by_reason.is_empty() {
        let rows: Vec<Vec<String>> = x
            .by_reason
            .iter()
            .map(|f| vec![thousands(f.requests), f.why.to_string()])
            .collect();
        out.push_str("would fail because\n");
        out.push_str(&layout::table(
            &[Col::keep("requests"), Col::cut("why", 60, 12)],
            &rows,
            width,
        ));
    }
    if !x.negotiated.is_empty() {
        let rows: Vec<Vec<String>> = x
            .negotiated
            .iter()
            .map(|n| {
                vec![
                    n.protocol.to_string(),
                    n.cipher.to_string(),
                    n.group.unwrap_or("-").to_string(),
                    thousands(n.requests),
                    percent(n.share),
                ]
            })
            .collect();
        out.push_str("would negotiate\n");
        out.push_str(&layout::table(
            &[
                Col::keep("protocol"),
                Col::keep("cipher"),
                Col::keep("group").drop(2),
                Col::keep("requests"),
                Col::keep("share").drop(1),
            ],
            &rows,
            width,
        ));
    }
    out.push('\n');
}

/// One listed User-Agent under a table: requests, kind, the User-Agent escaped for the
/// terminal and cut to fit `width` (what `whatif` and `clients` list).
pub(crate) fn user_agent_line(requests: u64, kind: &str, user_agent: &str, width: usize) -> String {
    format!(
        "{:>11}  {:<8} {}\n",
        thousands(requests),
        kind,
        fit(
            &escape::terminal(user_agent),
            58.min(width.saturating_sub(22)).max(8)
        )
    )
}

/// At security level 3 and above, what a server's keys must be or it does not start
/// (below, the usual 2048-bit RSA keys and DH parameters pass).
pub(crate) fn key_warning(level: u8) -> Option<String> {
    let (rsa, ecc) = tlsgap_ciphers::policy::min_key_bits(level).filter(|_| level >= 3)?;
    Some(format!(
        "at this level the server starts only with an RSA key and DH parameters of \
         {rsa} bits or more and an ECDSA key of {ecc}: smaller ones (RSA-2048) stop \
         nginx and Apache (`ee key too small`, `dh key too small`)"
    ))
}
