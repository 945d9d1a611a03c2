//! The one decoder of strace's quoted strings (`tlsgap_parser::strace::unescape_into`,
//! used by `quoted` and by the gap analyzer's hash search): every escape form strace's
//! `string_quote` writes, and the edge cases of cut strings.

use tlsgap_parser::strace::{escape_at, unescape_into};

fn dec(s: &[u8]) -> Vec<u8> {
    let mut out = b"stale".to_vec();
    unescape_into(s, &mut out);
    out
}

#[test]
fn every_escape_form() {
    assert_eq!(dec(br"a\nb\tc\rd\ve\ff"), b"a\nb\tc\rd\x0be\x0cf");
    assert_eq!(dec(br#"\"q\" \\ "#), b"\"q\" \\ ");
    assert_eq!(dec(br"\x41\x7a\xFF\x00"), b"Az\xff\x00");
    assert_eq!(dec(br"\0\12\123\1234"), b"\x00\x0aSS4");
    assert_eq!(dec(br"\377\400"), b"\xff\x00"); // octal wraps at a byte, as in C
    assert_eq!(dec(br"\a\b"), b"\x07\x08");
    assert_eq!(dec(br"\$2y\$"), b"$2y$");
}

#[test]
fn cut_and_invalid_escapes() {
    assert_eq!(dec(br"end\"), b"end\\");
    assert_eq!(dec(br"\x"), b"x");
    assert_eq!(dec(br"\x4"), b"x4");
    assert_eq!(dec(br"\xg1"), b"xg1");
    assert_eq!(dec(br"\8"), b"8");
    assert_eq!(dec(b""), b"");
    assert_eq!(escape_at(br"\x41rest", 0), (b'A', 4));
    assert_eq!(escape_at(br"\12x", 0), (b'\n', 3));
    assert_eq!(escape_at(br"\", 0), (b'\\', 1));
}

#[test]
fn quoted_uses_the_same_decoder() {
    let arg = br#""\x24\062y\$12\n""#;
    let (text, cut) = tlsgap_parser::strace::quoted(arg).unwrap();
    assert!(!cut);
    assert_eq!(text.as_ref(), dec(&arg[1..arg.len() - 1]).as_slice());
    assert_eq!(text.as_ref(), b"$2y$12\n");
}
