//! The per-period rows of `tls --by` (period, period_start, protocol, count, share):
//! the section under the table and the `periods` array of the JSON.

use tlsgap_agg::{Cell, Rows};

use crate::emit::{percent, thousands};
use crate::escape;
use crate::layout::wrap_items;

fn text(c: Option<&Cell>) -> String {
    match c {
        Some(Cell::Text(s)) => s.clone(),
        Some(Cell::Int(n)) => n.to_string(),
        Some(Cell::Float(x)) => x.to_string(),
        _ => String::new(),
    }
}

/// The `periods` array of the JSON output: `{period, start, total, protocols[]}`.
pub fn periods_json(rows: &Rows) -> serde_json::Value {
    let mut out: Vec<serde_json::Value> = Vec::new();
    for r in &rows.rows {
        let (period, start) = (text(r.first()), text(r.get(1)));
        let count = match r.get(3) {
            Some(Cell::Int(n)) => *n,
            _ => 0,
        };
        let share = match r.get(4) {
            Some(Cell::Float(x)) => *x,
            _ => 0.0,
        };
        let entry = serde_json::json!({"protocol": text(r.get(2)), "count": count, "share": share});
        match out.last_mut() {
            Some(last) if last["period"] == period.as_str() => {
                if let Some(a) = last["protocols"].as_array_mut() {
                    a.push(entry);
                }
                last["total"] = (last["total"].as_i64().unwrap_or(0) + count).into();
            }
            _ => out.push(serde_json::json!({
                "period": period, "start": start, "total": count, "protocols": [entry]
            })),
        }
    }
    serde_json::Value::Array(out)
}

/// The `--by` section under the table: each period's requests and protocol shares,
/// every share shown: what does not fit `width` cells goes on continuation lines.
pub fn period_table(rows: &Rows, width: usize) -> String {
    let mut lines: Vec<(String, u64, Vec<String>)> = Vec::new();
    for r in &rows.rows {
        let period = text(r.first());
        let n = match r.get(3) {
            Some(Cell::Int(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        let share = match r.get(4) {
            Some(Cell::Float(x)) => *x,
            _ => 0.0,
        };
        let item = format!("{} {}", escape::terminal(&text(r.get(2))), percent(share));
        match lines.last_mut() {
            Some(l) if l.0 == period => {
                l.1 += n;
                l.2.push(item);
            }
            _ => lines.push((period, n, vec![item])),
        }
    }
    let mut out = String::from("\n");
    out.push_str(&crate::emit::wrap(
        "",
        "by period (requests; protocol shares within the period)",
        width,
        2,
    ));
    // Continuation lines start under the first share, or further left when narrow.
    let indent = 27.min(width / 3);
    for (period, n, items) in lines {
        let head = format!("{period:<14}{:>11}", thousands(n));
        out.push_str(&wrap_items(&head, &items, "  ", width, indent));
    }
    out
}
