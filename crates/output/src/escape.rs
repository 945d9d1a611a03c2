//! Escaping text that came from a log for where it is shown.

use std::borrow::Cow;

/// Text safe for a terminal: control characters (C0, DEL, C1) become `\xHH` /
/// `\u{..}` so a log line can never move the cursor, change colours or set the title.
pub fn terminal(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if is_control(c) {
            let n = u32::from(c);
            if n < 0x100 {
                out.push_str(&format!("\\x{n:02X}"));
            } else {
                out.push_str(&format!("\\u{{{n:x}}}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

use tlsgap_agg::rows::is_escaped_control as is_control;

/// CSV fields (text cells): quoted, and with [`CsvStyle::Safe`] neutralised for
/// spreadsheets and escaped like [`terminal`] text.
pub use tlsgap_agg::rows::{csv_field, CsvStyle};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_escapes_controls_and_bidi() {
        assert_eq!(terminal("plain é"), "plain é");
        assert_eq!(terminal("a\u{1b}[31mb"), "a\\x1B[31mb");
        assert_eq!(terminal("x\u{7f}\u{9b}"), "x\\x7F\\x9B");
        assert_eq!(terminal("\u{202e}abc"), "\\u{202e}abc");
    }

    #[test]
    fn csv_quotes_everything() {
        let mut v = Vec::new();
        csv_field("a \"b\",c\nd", CsvStyle::Raw, &mut v);
        assert_eq!(v, b"\"a \"\"b\"\",c\nd\"");
        v.clear();
        csv_field("a \"b\",c\nd", CsvStyle::Safe, &mut v);
        assert_eq!(v, b"\"a \"\"b\"\",c\\x0Ad\"");
    }

    #[test]
    fn csv_escapes_as_terminal_does() {
        for s in ["a\u{1b}[31mb", "x\u{7f}\u{9b}", "\u{202e}abc", "plain é"] {
            let mut v = Vec::new();
            csv_field(s, CsvStyle::Safe, &mut v);
            assert_eq!(
                String::from_utf8(v).unwrap(),
                format!("\"{}\"", terminal(s))
            );
        }
    }
}
