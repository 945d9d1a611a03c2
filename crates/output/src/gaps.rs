//! The terminal form of a gaps report: summaries first, then the top gaps with the
//! calls around them. Everything that came from a trace is escaped.

use tlsgap_agg::gaps::{Dist, Gap, GapKind, GapsReport};

use crate::emit::{thousands, wrap};
use crate::escape;
use crate::layout::{self, fit, Col};

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

/// Where a gap's detail lines start.
const DETAIL: usize = 11;

/// A thread's number as the table shows it: `?` for 0, the lines of a trace that
/// carry no PID (one process traced without `-f`), where 0 would read as the kernel's
/// idle task (strace audit F7; JSON and CSV keep 0).
fn pid_text(pid: u32) -> String {
    match pid {
        0 => "?".to_string(),
        p => p.to_string(),
    }
}

fn gap_block(out: &mut String, g: &Gap, width: usize) {
    let head = format!("{:>8}s  {}", secs(g.seconds), g.cause.as_str());
    let pid = format!("pid {}", pid_text(g.pid));
    match &g.detail {
        // The cause's detail in parentheses on the first line when it fits there,
        // else folded on lines of its own under it.
        Some(d) => {
            let d = escape::terminal(d);
            let one = format!("{head} ({d})  {pid}");
            if layout::cells(&one) <= width {
                out.push_str(&one);
                out.push('\n');
            } else {
                out.push_str(&format!("{head}  {pid}\n"));
                // (`wrap` puts a blank after its first argument.)
                out.push_str(&wrap(&" ".repeat(DETAIL - 1), &d, width, DETAIL));
            }
        }
        None => out.push_str(&format!("{head}  {pid}\n")),
    }
    let pad = " ".repeat(DETAIL);
    let span = format!("{pad}{} -> {}", g.start, g.end);
    if layout::cells(&span) <= width {
        out.push_str(&span);
        out.push('\n');
    } else {
        out.push_str(&format!("{pad}{}\n{pad}-> {}\n", g.start, g.end));
    }
    // Trace text is cut (with `…`) to today's lengths, or to what the width leaves.
    let room = |label: usize, most: usize| most.min(width.saturating_sub(DETAIL + label)).max(8);
    let line_no = g.line.to_string();
    out.push_str(&format!(
        "{pad}at {}:{line_no}\n",
        fit(&escape::terminal(&g.file), room(4 + line_no.len(), 50)),
    ));
    if let (Some(c), true) = (&g.call, g.inside_call) {
        out.push_str(&format!(
            "{pad}inside {}\n",
            fit(&escape::terminal(c), room(7, 66))
        ));
    }
    if let Some(b) = &g.before {
        out.push_str(&format!(
            "{pad}before {}\n",
            fit(&escape::terminal(b), room(7, 66))
        ));
    }
    if let Some(a) = &g.after {
        out.push_str(&format!(
            "{pad}after  {}\n",
            fit(&escape::terminal(a), room(7, 66))
        ));
    }
    if !g.resources.is_empty() {
        let list = g.resources.join(", ");
        out.push_str(&format!(
            "{pad}touched {}\n",
            fit(&escape::terminal(&list), room(8, 65))
        ));
    }
}

/// Render `r` for a terminal of `width` cells: sentences folded, the tables' less
/// telling columns left out when narrow (see [`crate::layout`]), trace text cut.
pub fn render(r: &GapsReport, width: usize) -> String {
    let mut out = String::new();
    out.push_str(&wrap(
        "",
        &format!(
            "{} gaps of at least {}s, {} blocked intervals, in {} trace lines ({} skipped)",
            thousands(r.gaps.len() as u64),
            r.min_gap_seconds,
            thousands(r.blocked.len() as u64),
            thousands(r.lines.trace),
            thousands(r.lines.skipped),
        ),
        width,
        2,
    ));
    for n in &r.notes {
        out.push_str(&wrap(
            "note:",
            &escape::terminal(n),
            layout::measure(width),
            6,
        ));
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
        out.push_str(&layout::table(
            &[
                Col::cut("cause", 20, 8),
                Col::cut("list", 20, 5).drop(3),
                Col::keep("count"),
                Col::keep("total s"),
                Col::keep("p50 s").drop(1),
                Col::keep("p95 s").drop(2),
                Col::keep("max s"),
            ],
            &rows,
            width,
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
        out.push('\n');
        out.push_str(&crate::layout::wrap(
            "",
            "last file or socket touched before the gap",
            width,
            2,
        ));
        out.push_str(&layout::table(
            &[
                Col::cut("resource", 36, 16),
                Col::keep("count"),
                Col::keep("total s"),
                Col::keep("p50 s").drop(1),
                Col::keep("p95 s").drop(2),
                Col::keep("max s"),
            ],
            &resources,
            width,
        ));
    }
    if !r.by_pid.is_empty() {
        let rows: Vec<Vec<String>> = r
            .by_pid
            .iter()
            .take(10)
            .map(|p| {
                vec![
                    pid_text(p.pid),
                    thousands(p.gaps.count),
                    secs(p.gaps.total_seconds),
                    thousands(p.blocked.count),
                    secs(p.blocked.total_seconds),
                ]
            })
            .collect();
        out.push('\n');
        out.push_str(&layout::table(
            &[
                Col::cut("pid", 12, 6),
                Col::keep("gaps"),
                Col::keep("gap s"),
                Col::keep("blocked").drop(1),
                Col::keep("blocked s"),
            ],
            &rows,
            width,
        ));
    }
    if !r.top.is_empty() {
        out.push_str(&format!("\nlongest {} gaps\n", r.top.len()));
        for g in &r.top {
            gap_block(&mut out, g, width);
        }
    }
    let failed: Vec<String> = r
        .inputs
        .iter()
        .filter(|i| i.lines == 0)
        .map(|i| escape::terminal(&i.name).into_owned())
        .collect();
    if !failed.is_empty() {
        out.push('\n');
        out.push_str(&wrap("no lines read from:", &failed.join(", "), width, 2));
    }
    out
}
