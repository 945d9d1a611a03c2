//! Text that fits a terminal's width: widths in terminal cells, cuts marked with `…`,
//! text folded at spaces, and tables whose columns give way in a fixed order.
//!
//! The width is a value the caller passes (the CLI decides it from `COLUMNS`, the
//! terminal or [`DEFAULT_WIDTH`]); nothing here looks at the process or its terminal.
//!
//! ```
//! use tlsgap_output::layout::{table, Col};
//!
//! let rows = vec![vec!["TLSv1.2".to_string(), "ECDHE-RSA-AES128-GCM-SHA256".into(), "weak".into()]];
//! let cols = [Col::keep("protocol"), Col::keep("cipher"), Col::keep("verdict").drop(1)];
//! assert!(table(&cols, &rows, 80).contains("verdict"));
//! // Too narrow for all three: the verdict goes, and a line says so.
//! let narrow = table(&cols, &rows, 40);
//! assert!(narrow.lines().all(|l| l.chars().count() <= 40), "{narrow}");
//! assert!(narrow.contains("ECDHE-RSA-AES128-GCM-SHA256"));
//! assert!(narrow.contains("left out to fit 40 columns: verdict"));
//! ```

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::escape;

/// The width of tables written anywhere but a terminal, unless `COLUMNS` says
/// otherwise.
pub const DEFAULT_WIDTH: usize = 80;

/// The width sentences (notes, advice, explanations) are folded to: the terminal's,
/// but no more than [`DEFAULT_WIDTH`], since longer lines of prose read badly.
/// Tables and one-line statements use the whole width.
pub fn measure(width: usize) -> usize {
    width.min(DEFAULT_WIDTH)
}

/// How many terminal cells `s` takes: East Asian wide characters count two, combining
/// marks none. Meant for text already escaped for the terminal ([`escape::terminal`]),
/// which has no control characters left.
pub fn cells(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

fn char_cells(c: char) -> usize {
    UnicodeWidthChar::width(c).unwrap_or(0)
}

/// Cut `s` to at most `width` cells, marking the cut with `…`.
pub fn fit(s: &str, width: usize) -> String {
    if cells(s) <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = char_cells(c);
        if used + w > width - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `text` folded at spaces into lines of at most `width` cells, the first starting
/// with `first`, the others indented by `indent` spaces. A word longer than a line
/// stands alone on its line, whole.
pub fn wrap(first: &str, text: &str, width: usize, indent: usize) -> String {
    let words: Vec<&str> = text.split(' ').filter(|w| !w.is_empty()).collect();
    wrap_items(first, &words, " ", width, indent)
}

/// One line of text folded like [`wrap`], keeping its leading blanks: continuation
/// lines are indented by `indent` spaces more than the line.
pub fn fold(line: &str, width: usize, indent: usize) -> String {
    let text = line.trim_start();
    let lead = line.len() - text.len();
    let (first_word, rest) = text.split_once(' ').unwrap_or((text, ""));
    wrap(&line[..lead + first_word.len()], rest, width, lead + indent)
}

/// `items` joined by `sep` and folded between items into lines of at most `width`
/// cells, the first starting with `first` (then `sep`, unless `first` is empty), the
/// others indented by `indent` spaces. An item is never split.
pub fn wrap_items<S: AsRef<str>>(
    first: &str,
    items: &[S],
    sep: &str,
    width: usize,
    indent: usize,
) -> String {
    let mut out = String::new();
    let mut line = first.to_string();
    let mut len = cells(&line);
    let sep_w = cells(sep);
    // A prefix counts as an item: the text goes on after a separator.
    let mut empty = first.is_empty();
    // Only `first` on the line so far: an item that fits no better on a line of its
    // own (it would start no further left) stays after it.
    let mut only_first = !empty;
    for item in items {
        let item = item.as_ref();
        let n = cells(item);
        let no_gain = only_first && indent >= len + sep_w;
        if !empty && len + sep_w + n > width && !no_gain {
            out.push_str(line.trim_end());
            out.push('\n');
            line = " ".repeat(indent);
            len = indent;
            empty = true;
        }
        if !empty {
            line.push_str(sep);
            len += sep_w;
        }
        line.push_str(item);
        len += n;
        empty = false;
        only_first = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out
}

/// `s` broken into pieces of at most `width` cells, each piece ending after a `-`,
/// `_`, `/`, `,`, `:` or space where one falls in the last two thirds of the piece
/// (so `ECDHE-ECDSA-AES128-GCM-SHA256` breaks as `ECDHE-ECDSA-` / `AES128-GCM-SHA256`),
/// otherwise exactly at the width. Nothing is dropped: the pieces join back to `s`.
pub fn break_long(s: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut pieces = Vec::new();
    let mut rest: Vec<char> = s.chars().collect();
    while cells(&rest.iter().collect::<String>()) > width {
        let mut used = 0;
        let mut end = 0;
        let mut soft = None;
        for (i, &c) in rest.iter().enumerate() {
            let w = char_cells(c);
            if used + w > width {
                break;
            }
            used += w;
            end = i + 1;
            if matches!(c, '-' | '_' | '/' | ',' | ':' | ' ') && used * 3 > width {
                soft = Some(i + 1);
            }
        }
        // A character wider than the whole width still goes somewhere.
        let cut = soft.unwrap_or(end).max(1);
        pieces.push(
            rest[..cut]
                .iter()
                .collect::<String>()
                .trim_end()
                .to_string(),
        );
        rest.drain(..cut);
    }
    pieces.push(rest.into_iter().collect());
    pieces
}

/// A column of a [`table`], and how it gives way when the table is too wide.
#[derive(Clone, Copy, Debug)]
pub struct Col<'a> {
    /// The heading.
    pub header: &'a str,
    /// The widest a cell is shown at any width (longer ones are cut with `…`);
    /// `usize::MAX` for columns that are never cut.
    pub max: usize,
    /// The narrowest the column may be cut to when the table is too wide; `None`
    /// for columns whose text must not be cut (suite names: they wrap instead).
    pub min: Option<usize>,
    /// When cutting is not enough, columns with a rank above 0 are left out, the
    /// lowest rank first (and a line under the table names them).
    pub drop: u8,
}

impl<'a> Col<'a> {
    /// A column shown whole: never cut (wrapped inside its cell as a last resort).
    pub const fn keep(header: &'a str) -> Col<'a> {
        Col {
            header,
            max: usize::MAX,
            min: None,
            drop: 0,
        }
    }

    /// A column whose cells are cut with `…` to `max` cells, and down to `min` cells
    /// when the table is too wide.
    pub const fn cut(header: &'a str, max: usize, min: usize) -> Col<'a> {
        Col {
            header,
            max,
            min: Some(min),
            drop: 0,
        }
    }

    /// This column, left out (rank 1 first) when the table is still too wide.
    pub const fn drop(self, rank: u8) -> Col<'a> {
        Col { drop: rank, ..self }
    }
}

/// Where each column ended up.
struct Layout {
    /// The shown columns' indices and widths.
    shown: Vec<(usize, usize)>,
    /// Blanks between columns.
    gap: usize,
    /// Headers of the columns left out.
    dropped: Vec<usize>,
}

fn total(widths: &[(usize, usize)], gap: usize) -> usize {
    widths.iter().map(|(_, w)| w).sum::<usize>() + gap * widths.len().saturating_sub(1)
}

/// Narrowest a keep column is wrapped to.
const MIN_WRAPPED: usize = 8;

/// Fit the columns into `width`: two blanks between columns, else one; then cut the
/// columns that may be cut, widest first; then leave out droppable columns (lowest
/// rank first, and start over); then wrap the widest keep column.
fn layout(cols: &[Col<'_>], cells_: &[Vec<String>], width: usize) -> Layout {
    let head: Vec<usize> = cols.iter().map(|c| cells(c.header)).collect();
    let natural: Vec<usize> = cols
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let widest = cells_
                .iter()
                .filter_map(|r| r.get(i))
                .map(|s| cells(s))
                .max()
                .unwrap_or(0);
            head[i].max(widest.min(c.max))
        })
        .collect();
    let mut dropped: Vec<usize> = Vec::new();
    loop {
        let mut shown: Vec<(usize, usize)> = (0..cols.len())
            .filter(|i| !dropped.contains(i))
            .map(|i| (i, natural[i]))
            .collect();
        for gap in [2, 1] {
            if total(&shown, gap) <= width {
                return Layout {
                    shown,
                    gap,
                    dropped,
                };
            }
        }
        let gap = 1;
        let floor = |i: usize| cols[i].min.map(|m| m.max(head[i]).min(natural[i]));
        let mut excess = total(&shown, gap) - width;
        while excess > 0 {
            let widest = shown
                .iter_mut()
                .filter(|(i, w)| floor(*i).is_some_and(|f| *w > f))
                .max_by_key(|(_, w)| *w);
            match widest {
                Some((_, w)) => {
                    *w -= 1;
                    excess -= 1;
                }
                None => break,
            }
        }
        if excess == 0 {
            return Layout {
                shown,
                gap,
                dropped,
            };
        }
        let next = shown
            .iter()
            .map(|(i, _)| *i)
            .filter(|&i| cols[i].drop > 0)
            .min_by_key(|&i| (cols[i].drop, i));
        if let Some(i) = next {
            dropped.push(i);
            continue;
        }
        // Only what must be shown is left: the widest keep column wraps in its cell.
        if let Some((_, w)) = shown
            .iter_mut()
            .filter(|(i, _)| cols[*i].min.is_none())
            .max_by_key(|(_, w)| *w)
        {
            let floor = MIN_WRAPPED.min(*w);
            *w = w.saturating_sub(excess).max(floor);
        }
        return Layout {
            shown,
            gap,
            dropped,
        };
    }
}

/// A table for a terminal in at most `width` cells where it can be: a header, then
/// rows; text escaped for the terminal ([`escape::terminal`]); no trailing blanks.
/// What gives way when the table is too wide is said by each [`Col`]; columns left
/// out are named on a line under the table. Rows may have fewer cells than columns.
pub fn table(cols: &[Col<'_>], rows: &[Vec<String>], width: usize) -> String {
    let cells_: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| escape::terminal(c).into_owned()).collect())
        .collect();
    let l = layout(cols, &cells_, width);
    let header: Vec<String> = cols.iter().map(|c| c.header.to_string()).collect();
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&cells_) {
        // Each shown cell as one or more pieces (keep columns wrap; others are cut).
        let pieces: Vec<Vec<String>> = l
            .shown
            .iter()
            .map(|&(i, w)| {
                let text = row.get(i).map_or("", String::as_str);
                if cols[i].min.is_some() || cols[i].max < usize::MAX {
                    vec![fit(text, w)]
                } else if cells(text) > w {
                    break_long(text, w)
                } else {
                    vec![text.to_string()]
                }
            })
            .collect();
        let height = pieces.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut line = String::new();
            for (n, (p, &(_, w))) in pieces.iter().zip(&l.shown).enumerate() {
                if n > 0 {
                    line.push_str(&" ".repeat(l.gap));
                }
                let piece = p.get(k).map_or("", String::as_str);
                line.push_str(piece);
                line.push_str(&" ".repeat(w.saturating_sub(cells(piece))));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    if !l.dropped.is_empty() {
        let names: Vec<&str> = l.dropped.iter().map(|&i| cols[i].header).collect();
        out.push_str(&wrap(
            &format!("(left out to fit {width} columns:"),
            &format!("{}; set COLUMNS wider to show them)", names.join(", ")),
            width,
            2,
        ));
    }
    out
}

/// A label padded to `label_width` cells and what follows it, on one line; a longer
/// label goes alone on its line, whole, and the rest under it as if the label were
/// empty.
pub fn label_line(label: &str, label_width: usize, rest: &str) -> String {
    let lw = cells(label);
    if lw <= label_width {
        return format!("{label}{}{rest}", " ".repeat(label_width - lw));
    }
    format!("{label}\n{}{rest}", " ".repeat(label_width))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Vec<String>> {
        vec![
            vec![
                "TLSv1.2".into(),
                "ECDHE-ECDSA-AES128-GCM-SHA256".into(),
                "168".into(),
                "105".into(),
                "recommended".into(),
                "protocol off".into(),
            ],
            vec![
                "TLSv1.3".into(),
                "TLS_AES_128_GCM_SHA256".into(),
                "1,664".into(),
                "817".into(),
                "recommended".into(),
                "allowed".into(),
            ],
        ]
    }

    const COLS: [Col<'static>; 6] = [
        Col::keep("protocol"),
        Col::keep("cipher"),
        Col::keep("requests"),
        Col::keep("clients").drop(2),
        Col::keep("verdict").drop(1),
        Col::cut("policy", 34, 6),
    ];

    /// The whole text of the cell starting with `start`: its first piece, then the
    /// pieces at the same place on the row's continuation lines (blank before it).
    fn cell_text(t: &str, start: &str) -> String {
        let lines: Vec<&str> = t.lines().collect();
        let i = lines.iter().position(|l| l.contains(start)).unwrap();
        let col = lines[i].find(start).unwrap();
        let mut text = String::new();
        for (k, l) in lines[i..].iter().enumerate() {
            if k > 0 && (l.len() <= col || !l[..col].trim().is_empty()) {
                break;
            }
            match l[col..].split(' ').next() {
                Some(piece) if !piece.is_empty() => text.push_str(piece),
                _ => break,
            }
        }
        text
    }

    fn widest(s: &str) -> usize {
        s.lines().map(cells).max().unwrap_or(0)
    }

    #[test]
    fn wide_enough_is_two_blanks_between_columns() {
        let t = table(&COLS, &rows(), 200);
        assert!(t.starts_with("protocol  cipher  "), "{t}");
        assert!(t.contains("ECDHE-ECDSA-AES128-GCM-SHA256  168  "), "{t}");
        assert!(!t.contains("left out"));
    }

    #[test]
    fn every_width_fits_and_names_stay_whole() {
        for width in [80, 70, 60, 50, 40, 30] {
            let t = table(&COLS, &rows(), width);
            // At 30 the headers that are never cut (protocol, cipher wrapped to 8,
            // requests) and the policy cut to its floor need 33: "where it can be".
            assert!(widest(&t) <= width.max(33), "{width}:\n{t}");
            assert_eq!(
                cell_text(&t, "ECDHE-"),
                "ECDHE-ECDSA-AES128-GCM-SHA256",
                "{width}:\n{t}"
            );
        }
        let t = table(&COLS, &rows(), 60);
        assert!(t.contains("(left out to fit 60 columns: verdict"), "{t}");
        assert!(!t.contains("recommended"), "{t}");
    }

    #[test]
    fn too_narrow_for_anything_still_returns_a_table() {
        for width in [0, 1, 5, 12] {
            let t = table(&COLS, &rows(), width);
            assert!(t.contains("ECDHE-"), "{t}");
        }
    }

    #[test]
    fn wide_characters_count_two_cells() {
        assert_eq!(cells("日本"), 4);
        assert_eq!(fit("日本語のエージェント", 7), "日本語…");
        let rows = vec![vec!["ユーザー".to_string(), "1".to_string()]];
        let t = table(&[Col::keep("user"), Col::keep("n")], &rows, 80);
        // The second column starts at the same cell on both lines.
        let at: Vec<usize> = t
            .lines()
            .map(|l| cells(&l[..l.rfind(['n', '1']).unwrap()]))
            .collect();
        assert_eq!(at[0], at[1], "{t}");
    }

    #[test]
    fn break_long_prefers_dashes_and_keeps_everything() {
        let p = break_long("ECDHE-ECDSA-AES128-GCM-SHA256", 20);
        assert_eq!(p, ["ECDHE-ECDSA-AES128-", "GCM-SHA256"]);
        assert_eq!(break_long("abcdefgh", 3).concat(), "abcdefgh");
        assert_eq!(break_long("日本語", 1).concat(), "日本語");
    }

    #[test]
    fn fold_keeps_the_indent() {
        assert_eq!(fold("  groups: a b", 80, 2), "  groups: a b\n");
        assert_eq!(fold("  groups: aaa bbb", 14, 2), "  groups: aaa\n    bbb\n");
        assert_eq!(fold("", 80, 2), "\n");
    }

    #[test]
    fn wrap_items_never_splits_an_item() {
        let items = [
            "TLSv1.3 60.30%",
            "TLSv1.2 33.45%",
            "TLSv1 2.93%",
            "plain 2.13%",
        ];
        let w = wrap_items("2026-11-20T22       4,980", &items, "  ", 60, 27);
        assert_eq!(
            w,
            "2026-11-20T22       4,980  TLSv1.3 60.30%  TLSv1.2 33.45%\n\
             \x20                          TLSv1 2.93%  plain 2.13%\n"
        );
    }
}
