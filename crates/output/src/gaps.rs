//! The terminal form of a gaps report: summaries first, then the top gaps with the
//! calls around them. Everything that came from a trace is escaped.

use tlsgap_agg::gaps::{Dist, Gap, GapKind, GapsReport};

use crate::emit::{fit, text_table, thousands};
use crate::escape;

fn secs(x: f64) -> String {
    // `+ 0.0` turns -0.0 into 0.0.
    format!("{:.3}", x + 0.0)
}

fn dist_cells(d: &Dist) -> Vec<String> {
    vec![
        thousands(d.count),
        secs(d.total_seconds),
        secs(d.p50_seconds),
        secs(d.p95_seconds),
        secs(d.max_seconds),
    ]
}

fn gap_block(out: &mut String, g: &Gap) {
    let what = match &g.detail {
        Some(d) => format!("{} ({})", g.cause.as_str(), d),
        None => g.cause.as_str().to_string(),
    };
    out.push_str(&format!(
        "{:>8}s  {}  pid {}\n",
        secs(g.seconds),
        escape::terminal(&what),
        g.pid,
    ));
    out.push_str(&format!("           {} -> {}\n", g.start, g.end));
    out.push_str(&format!(
        "           at {}:{}\n",
        fit(&escape::terminal(&g.file), 50),
        g.line
    ));
    if let (Some(c), true) = (&g.call, g.inside_call) {
        out.push_str(&format!(
            "           inside {}\n",
            fit(&escape::terminal(c), 66)
        ));
    }
    if let Some(b) = &g.before {
        out.push_str(&format!(
            "           before {}\n",
            fit(&escape::terminal(b), 66)
        ));
    }
    if let Some(a) = &g.after {
        out.push_str(&format!(
            "           after  {}\n",
            fit(&escape::terminal(a), 66)
        ));
    }
    if !g.resources.is_empty() {
        let list = g.resources.join(", ");
        out.push_str(&format!(
            "           touched {}\n",
            fit(&escape::terminal(&list), 65)
        ));
    }
}

/// Render `r` for a terminal.
pub fn render(r: &GapsReport) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{} gaps of at least {}s, {} blocked intervals, in {} trace lines ({} skipped)\n",
        thousands(r.gaps.len() as u64),
        r.min_gap_seconds,
        thousands(r.blocked.len() as u64),
        thousands(r.lines.trace),
        thousands(r.lines.skipped),
    ));
    for n in &r.notes {
        out.push_str(&format!("note: {}\n", escape::terminal(n)));
    }
    if !r.by_cause.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = r
            .by_cause
            .iter()
            .map(|c| {
                let mut row = vec![c.cause.as_str().to_string(), c.kind.as_str().to_string()];
                row.extend(dist_cells(&c.dist));
                row
            })
            .collect();
        out.push_str(&text_table(
            &[
                "cause", "list", "count", "total s", "p50 s", "p95 s", "max s",
            ],
            &rows,
            20,
        ));
    }
    let resources: Vec<Vec<String>> = r
        .by_resource
        .iter()
        .filter(|x| x.kind == GapKind::Gap)
        .take(10)
        .map(|x| {
            let mut row = vec![x.resource.clone()];
            row.extend(dist_cells(&x.dist));
            row
        })
        .collect();
    if !resources.is_empty() {
        out.push_str("\nlast file or socket touched before the gap\n");
        out.push_str(&text_table(
            &["resource", "count", "total s", "p50 s", "p95 s", "max s"],
            &resources,
            36,
        ));
    }
    if !r.by_pid.is_empty() {
        let rows: Vec<Vec<String>> = r
            .by_pid
            .iter()
            .take(10)
            .map(|p| {
                vec![
                    p.pid.to_string(),
                    thousands(p.gaps.count),
                    secs(p.gaps.total_seconds),
                    thousands(p.blocked.count),
                    secs(p.blocked.total_seconds),
                ]
            })
            .collect();
        out.push('\n');
        out.push_str(&text_table(
            &["pid", "gaps", "gap s", "blocked", "blocked s"],
            &rows,
            12,
        ));
    }
    if !r.top.is_empty() {
        out.push_str(&format!("\nlongest {} gaps\n", r.top.len()));
        for g in &r.top {
            gap_block(&mut out, g);
        }
    }
    let failed: Vec<String> = r
        .inputs
        .iter()
        .filter(|i| i.lines == 0)
        .map(|i| escape::terminal(&i.name).into_owned())
        .collect();
    if !failed.is_empty() {
        out.push_str(&format!("\nno lines read from: {}\n", failed.join(", ")));
    }
    out
}
