//! `tlsgap clients` as a table.

use tlsgap_agg::clients::{ClientsReport, FingerprintRow};

use crate::emit::{percent, summary_lines, thousands};
use crate::escape;
use crate::layout::{self, Col};

/// `browser 10, library 2`.
fn kinds(f: &FingerprintRow) -> String {
    f.kinds
        .seen()
        .iter()
        .map(|(k, n)| format!("{} {}", k.as_str(), thousands(*n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The most frequent negotiated pair and its share of the fingerprint's requests.
fn negotiated(f: &FingerprintRow) -> String {
    let Some(top) = f.negotiated.first() else {
        return String::new();
    };
    let pair = match (top.protocol.as_str(), top.cipher.as_str()) {
        ("", "") => "not logged".to_string(),
        (p, c) => format!("{p} {c}").trim().to_string(),
    };
    if f.negotiated.len() == 1 {
        pair
    } else {
        format!(
            "{pair} {} (+{})",
            percent(top.share),
            f.negotiated.len() - 1
        )
    }
}

/// The `clients` table, with the summary under it, in `width` cells (see
/// [`crate::layout`]): the fingerprints, then the User-Agents of each. Everything that
/// came from the log is escaped for the terminal; User-Agents are cut with `…`.
pub fn table(r: &ClientsReport, summary: &str, width: usize) -> String {
    let mut out = String::new();
    let fold = |line: String| layout::fold(&line, width, 2);
    out.push_str(&fold(format!(
        "{} requests with an offer logged, from {} clients ({}); {} without",
        thousands(r.requests),
        thousands(r.clients),
        if r.fingerprints
            .iter()
            .any(|f| f.user_agents.iter().any(|u| u.user_agent != "-"))
        {
            "address + User-Agent"
        } else {
            "address"
        },
        thousands(r.no_offer)
    )));
    out.push_str(&fold(format!(
        "{} distinct fingerprints",
        thousands(r.distinct_fingerprints)
    )));
    let pq = &r.post_quantum_offered;
    out.push_str(&fold(format!(
        "post-quantum group offered: {} requests ({}), {} clients, {} fingerprints",
        thousands(pq.requests),
        percent(pq.share),
        thousands(pq.clients),
        thousands(pq.fingerprints)
    )));
    if r.mixed > 0 {
        out.push_str(&fold(format!(
            "FLAG: {} fingerprint(s) seen under browser and library User-Agents alike: one \
             TLS stack, so some of those clients pose as what they are not (marked MIXED)",
            thousands(r.mixed)
        )));
    }
    if let Some(p) = &r.policy {
        out.push_str(&fold(format!(
            "policy: {} (certificates: {}); each fingerprint's offer negotiated under it",
            escape::terminal(&p.name),
            p.certs
        )));
    }
    out.push('\n');
    let with_policy = r.policy.is_some();
    let rows: Vec<Vec<String>> = r
        .fingerprints
        .iter()
        .map(|f| {
            let mut row = vec![
                f.fingerprint.clone(),
                thousands(f.requests),
                percent(f.share),
                thousands(f.clients),
                if f.post_quantum { "yes" } else { "no" }.to_string(),
                if f.mixed { "MIXED" } else { "" }.to_string(),
                kinds(f),
                negotiated(f),
            ];
            if let Some(p) = &f.policy {
                row.push(p.summary());
            }
            row
        })
        .collect();
    let mut cols = vec![
        Col::keep("fingerprint"),
        Col::keep("requests"),
        Col::keep("share").drop(3),
        Col::keep("clients").drop(4),
        Col::keep("PQ"),
        Col::keep("flag"),
        Col::keep("user-agent kinds").drop(2),
        Col::cut("negotiated", 48, 24).drop(1),
    ];
    if with_policy {
        cols.push(Col::cut("policy", 48, 12));
    }
    out.push_str(&layout::table(&cols, &rows, width));
    let listed: Vec<&FingerprintRow> = r
        .fingerprints
        .iter()
        .filter(|f| !f.user_agents.is_empty())
        .collect();
    if !listed.is_empty() {
        out.push_str("\nUser-Agents per fingerprint\n");
        for f in listed {
            out.push_str(&fold(format!(
                "{}  {} distinct{}",
                f.fingerprint,
                thousands(f.distinct_user_agents),
                if f.mixed { "  MIXED" } else { "" }
            )));
            for u in &f.user_agents {
                out.push_str(&crate::whatif::user_agent_line(
                    u.requests,
                    u.kind.as_str(),
                    &u.user_agent,
                    width,
                ));
            }
            if let Some(p) = f.policy.as_ref().and_then(|p| p.reason) {
                out.push_str(&fold(format!("  under the policy: {p}")));
            }
        }
    }
    out.push('\n');
    out.push_str(&summary_lines(summary, width));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tlsgap_agg::clients::{ClientsAgg, OfferFields};
    use tlsgap_agg::whatif::ClientKind;
    use tlsgap_agg::LineStats;

    #[test]
    fn hostile_user_agents_are_escaped_and_lines_fit() {
        let mut a = ClientsAgg::new(false);
        let offer = OfferFields {
            ciphers: Some(b"TLS_AES_128_GCM_SHA256"),
            groups: Some(b"x25519"),
            ..OfferFields::default()
        };
        a.add(
            &offer,
            b"a",
            Some("evil\u{1b}]0;owned\u{7}\u{202e}txt"),
            None,
            None,
        );
        let r = a.report(
            &mut |_| ClientKind::Unknown,
            5,
            None,
            &LineStats::default(),
            vec![],
        );
        for width in [40, 80, 200] {
            let t = table(&r, "lines: 1", width);
            assert!(!t.contains('\u{1b}') && !t.contains('\u{202e}'), "{t}");
            // At 40 columns the User-Agent section is left out (said under the table).
            if width >= 80 {
                assert!(t.contains("evil\\x1B]0;owned\\x07"), "{t}");
            }
            assert!(t.lines().all(|l| layout::cells(l) <= width.max(40)), "{t}");
        }
    }
}
