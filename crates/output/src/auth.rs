//! `tlsgap auth` as a table: every line fits the width (advice is wrapped; the
//! table leaves out its less telling columns when narrow).

use tlsgap_agg::authjoin::{AuthReport, Basis};

use crate::emit::{thousands, wrap};
use crate::escape;
use crate::layout::{self, fit, Col};

/// Seconds, compact: `0.12ms`, `4.1ms`, `380ms`, `1.92s`.
fn secs(x: Option<f64>) -> String {
    match x {
        Some(s) if s.abs() >= 1.0 => format!("{s:.2}s"),
        Some(s) if s.abs() >= 0.010 => format!("{:.0}ms", s * 1000.0 + 0.0),
        Some(s) if s.abs() >= 0.001 => format!("{:.1}ms", s * 1000.0 + 0.0),
        Some(s) => format!("{:.2}ms", s * 1000.0 + 0.0),
        None => "-".into(),
    }
}

/// The `auth` table in `width` cells: users ranked by cost, page views, advice and
/// notes.
pub fn table(r: &AuthReport, width: usize) -> String {
    // Sentences fold at 80 at most; the table takes the whole width.
    let (table_width, width) = (width, layout::measure(width));
    let mut out = wrap(
        "",
        &format!(
            "authentication cost per user (evidence: {}; flagged above {} per request, \
             page advice above {} per page view)",
            r.evidence.join(", "),
            secs(Some(r.threshold_seconds)),
            secs(Some(r.page_budget_seconds)),
        ),
        width,
        2,
    );
    let c = &r.calibration;
    let basis = match c.basis {
        Basis::ThisMachine => "times measured on this machine (no observed times to \
                               calibrate on)"
            .to_string(),
        _ => format!(
            "times {} = this machine's × {:.2}{}, from {}",
            c.basis.place(),
            c.server_time_ratio,
            c.ratio_range
                .map(|[a, b]| format!(" (users' ratios {a:.2}-{b:.2})"))
                .unwrap_or_default(),
            c.users.join(", ")
        ),
    };
    // Without an htpasswd file nothing is predicted, so there is no basis to name.
    if r.evidence.contains(&"htpasswd") {
        out.push_str(&wrap("", &escape::terminal(&basis), width, 2));
    }
    out.push('\n');
    let has_log = r.evidence.contains(&"log");
    let rows: Vec<Vec<String>> = r
        .users
        .iter()
        .map(|u| {
            let fits = match u.gaps_fit_bcrypt_costs {
                Some([a, b]) if a == b => format!("bcrypt~{a}"),
                Some([a, b]) => format!("bcrypt~{a}-{b}"),
                None => "-".to_string(),
            };
            let scheme = u
                .htpasswd
                .as_ref()
                .map_or(fits, |p| match (p.cost, p.rounds) {
                    (Some(c), _) => format!("{} {c}", p.scheme),
                    (None, Some(n)) => format!("{} r{n}", p.scheme),
                    _ => p.scheme.to_string(),
                });
            let flag = u.htpasswd.as_ref().is_some_and(|p| p.flagged);
            let name = fit(&escape::terminal(&u.user), if flag { 16 } else { 18 });
            vec![
                u.rank.to_string(),
                format!("{name}{}", if flag { " !" } else { "" }),
                scheme,
                secs(u.cost_per_request_seconds),
                if has_log {
                    thousands(u.requests)
                } else {
                    "-".into()
                },
                u.requests_per_page_view
                    .map_or("-".into(), |n| format!("{n:.1}")),
                secs(u.auth_seconds_per_page_view),
                u.observed_gaps.map_or("-".into(), |g| {
                    format!("{} × {}", g.count, secs(Some(g.p50_seconds)))
                }),
            ]
        })
        .collect();
    out.push_str(&layout::table(
        &[
            Col::keep("#"),
            // Already cut to 18 cells, with room for the ` !` flag: never cut again.
            Col::keep("user"),
            Col::cut("scheme", 18, 8),
            Col::keep("per req"),
            Col::keep("reqs").drop(3),
            Col::keep("/view").drop(1),
            Col::keep("per view").drop(2),
            Col::cut("auth gaps", 18, 9),
        ],
        &rows,
        table_width,
    ));
    out.push('\n');
    if width >= 80 {
        // Folded by hand, as it always was in 80 columns.
        out.push_str(
            "per req: password check per request; /view: requests per page view (a page and\n\
             its assets); per view: password checks per page view; auth gaps: traced gaps\n\
             tied to the user (count × median); ! over the per-request budget; bcrypt~12:\n\
             no measured entry, the gaps fit that cost\n",
        );
    } else {
        out.push_str(&wrap(
            "",
            "per req: password check per request; /view: requests per page view (a page \
             and its assets); per view: password checks per page view; auth gaps: traced \
             gaps tied to the user (count × median); ! over the per-request budget; \
             bcrypt~12: no measured entry, the gaps fit that cost",
            width,
            0,
        ));
    }
    let a = &r.attribution;
    if r.evidence.contains(&"traces") {
        out.push_str(&wrap(
            "",
            &format!(
                "auth gaps tied to users: {} by the worker's log write, {} by its access-log \
                 line, {} by PID and time, {} by time alone; {} not tied ({} cut off, {} \
                 ambiguous)",
                a.by_log_write,
                a.by_log_line,
                a.by_pid_and_time,
                a.by_time,
                a.unattributed,
                a.user_cut_off,
                a.ambiguous
            ),
            width,
            2,
        ));
    }
    if let Some(total) = r.predicted_cpu_seconds {
        out.push('\n');
        out.push_str(&wrap(
            "",
            &format!(
                "predicted password-verification CPU over the log: {}",
                secs(Some(total))
            ),
            width,
            2,
        ));
        for d in &r.per_day {
            out.push_str(&format!(
                "  {}  {:>9} requests  {}\n",
                d.date,
                thousands(d.requests),
                secs(Some(d.predicted_cpu_seconds))
            ));
        }
    }
    let mut advice = String::new();
    for u in &r.users {
        let name = escape::terminal(&u.user);
        if let Some(text) = &u.gap_note {
            advice.push_str(&wrap(
                &format!("{name}:"),
                &escape::terminal(text),
                width,
                2,
            ));
        }
        if let Some(text) = &u.page_advice {
            advice.push_str(&wrap(
                &format!("{name}:"),
                &escape::terminal(text),
                width,
                2,
            ));
        }
        if let Some(text) = u.htpasswd.as_ref().and_then(|p| p.advice.as_ref()) {
            advice.push_str(&wrap(
                &format!("{name}:"),
                &escape::terminal(text),
                width,
                2,
            ));
        }
    }
    if !advice.is_empty() {
        out.push('\n');
        out.push_str(&advice);
    }
    if !r.users_not_in_htpasswd.is_empty() {
        out.push('\n');
        out.push_str(&wrap(
            "not in the htpasswd file:",
            &escape::terminal(&r.users_not_in_htpasswd.join(", ")),
            width,
            2,
        ));
    }
    if !r.htpasswd_users_without_gaps.is_empty() {
        out.push_str(&wrap(
            "no auth gap observed for:",
            &escape::terminal(&r.htpasswd_users_without_gaps.join(", ")),
            width,
            2,
        ));
    }
    for n in &r.notes {
        out.push_str(&wrap("note:", &escape::terminal(n), width, 2));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapping_keeps_every_line_within_the_width() {
        let text = "a ".repeat(100) + &"x".repeat(90);
        let w = wrap("note:", &text, 80, 2);
        for line in w.lines() {
            // A single word longer than the width stands alone on its line.
            assert!(
                line.chars().count() <= 80 || !line.trim().contains(' '),
                "{line}"
            );
        }
        assert!(w.starts_with("note: a a"));
        assert!(w.lines().nth(1).unwrap().starts_with("  a"));
        assert_eq!(secs(Some(0.38)), "380ms");
        assert_eq!(secs(Some(0.0041)), "4.1ms");
        assert_eq!(secs(Some(0.00012)), "0.12ms");
        assert_eq!(secs(Some(1.916)), "1.92s");
    }
}
