//! `tlsgap auth` as a table (fits 80 columns).

use tlsgap_agg::authjoin::AuthReport;

use crate::emit::{fit, text_table, thousands};
use crate::escape;

fn ms(x: Option<f64>) -> String {
    match x {
        Some(s) if s.abs() >= 1.0 => format!("{s:.2}s"),
        Some(s) => format!("{:.1}ms", s * 1000.0 + 0.0),
        None => "-".into(),
    }
}

/// The `auth` table: users ranked by cost, advice and notes.
pub fn table(r: &AuthReport) -> String {
    let mut out = format!(
        "authentication cost per user (evidence: {}; flagged above {})\n\n",
        r.evidence.join(", "),
        ms(Some(r.threshold_seconds))
    );
    let has_log = r.evidence.contains(&"log");
    let rows: Vec<Vec<String>> = r
        .users
        .iter()
        .map(|u| {
            let scheme =
                u.htpasswd
                    .as_ref()
                    .map_or("-".to_string(), |p| match (p.cost, p.rounds) {
                        (Some(c), _) => format!("{} {c}", p.scheme),
                        (None, Some(n)) => format!("{} r{n}", p.scheme),
                        _ => p.scheme.to_string(),
                    });
            let flag = u.htpasswd.as_ref().is_some_and(|p| p.flagged);
            vec![
                u.rank.to_string(),
                format!("{}{}", u.user, if flag { " !" } else { "" }),
                scheme,
                ms(u.htpasswd.as_ref().and_then(|p| p.verify_seconds)),
                if has_log {
                    thousands(u.requests)
                } else {
                    "-".into()
                },
                ms(u.predicted_cpu_seconds),
                ms(u.extra_latency_seconds),
                u.observed_gaps.map_or("-".into(), |g| {
                    format!("{} × {}", g.count, ms(Some(g.p50_seconds)))
                }),
            ]
        })
        .collect();
    out.push_str(&text_table(
        &[
            "#",
            "user",
            "scheme",
            "predicted",
            "requests",
            "cpu total",
            "extra",
            "auth gaps",
        ],
        &rows,
        24,
    ));
    if let Some(total) = r.predicted_cpu_seconds {
        out.push_str(&format!(
            "\npredicted password-verification CPU over the log: {}\n",
            ms(Some(total))
        ));
        for d in &r.per_day {
            out.push_str(&format!(
                "  {}  {:>9} requests  {}\n",
                d.date,
                thousands(d.requests),
                ms(Some(d.predicted_cpu_seconds))
            ));
        }
    }
    let advice: Vec<&String> = r
        .users
        .iter()
        .filter_map(|u| u.htpasswd.as_ref().and_then(|p| p.advice.as_ref()))
        .collect();
    if !advice.is_empty() {
        out.push('\n');
        for u in r.users.iter() {
            if let Some(a) = u.htpasswd.as_ref().and_then(|p| p.advice.as_ref()) {
                out.push_str(&format!(
                    "{}: {}\n",
                    escape::terminal(&u.user),
                    escape::terminal(a)
                ));
            }
        }
    }
    if !r.users_not_in_htpasswd.is_empty() {
        out.push_str(&format!(
            "\nnot in the htpasswd file: {}\n",
            fit(&escape::terminal(&r.users_not_in_htpasswd.join(", ")), 60)
        ));
    }
    if !r.htpasswd_users_without_gaps.is_empty() {
        out.push_str(&format!(
            "no auth gap observed for: {}\n",
            fit(
                &escape::terminal(&r.htpasswd_users_without_gaps.join(", ")),
                60
            )
        ));
    }
    for n in &r.notes {
        out.push_str(&format!("note: {}\n", escape::terminal(n)));
    }
    out
}
