//! The strace line parser and its argument helpers on arbitrary bytes: never a
//! panic, records borrow the line, and a few invariants that hold for any input.
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use tlsgap_parser::strace::{
    args, decoration_path, escape_at, fd_arg, inner, parse_line, quoted, split_glued,
    unescape_into, Body,
};

fn inside(part: &[u8], whole: &[u8]) -> bool {
    let w = whole.as_ptr_range();
    let p = part.as_ptr_range();
    part.is_empty() || (p.start >= w.start && p.end <= w.end)
}

/// Every helper on one argument (and, one level down, on its items).
fn helpers(arg: &[u8], depth: u8) {
    if let Some((s, _)) = quoted(arg) {
        assert!(s.len() <= arg.len());
        if !arg.contains(&b'\\') {
            assert!(matches!(s, Cow::Borrowed(_)));
        }
    }
    if let Some((_, Some(d))) = fd_arg(arg) {
        assert!(inside(d, arg));
        assert!(decoration_path(d).len() <= d.len());
    }
    let _ = decoration_path(arg);
    if depth < 3 {
        if let Some(i) = inner(arg) {
            for item in args(i) {
                assert!(inside(item, arg));
                helpers(item, depth + 1);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // The one decoder of strace strings: never longer than its input, and each escape
    // spans 1 to 4 bytes.
    let mut out = Vec::new();
    unescape_into(data, &mut out);
    assert!(out.len() <= data.len());
    for (i, _) in data.iter().enumerate().filter(|(_, &b)| b == b'\\') {
        let (_, len) = escape_at(data, i);
        assert!((1..=4).contains(&len) && i + len <= data.len());
    }
    for line in std::iter::once(data).chain(data.split(|&b| b == b'\n')) {
        if let Some((head, msg)) = split_glued(line) {
            assert_eq!(head.len() + msg.len(), line.len());
        }
        match parse_line(line) {
            Ok(t) => {
                if let Some(c) = t.comm {
                    assert!(inside(c, line));
                }
                match t.body {
                    Body::Call(c) | Body::Resumed(c) => {
                        assert!(
                            inside(c.name, line) && inside(c.args, line) && inside(c.ret.raw, line)
                        );
                        if let Some(d) = c.ret.decoration {
                            assert!(inside(d, line));
                            let _ = decoration_path(d);
                        }
                        for a in args(c.args) {
                            assert!(inside(a, line));
                            helpers(a, 0);
                        }
                    }
                    Body::Unfinished { name, args: a } => {
                        assert!(inside(name, line) && inside(a, line));
                        for a in args(a) {
                            helpers(a, 0);
                        }
                    }
                    Body::Signal { name, info } => {
                        assert!(inside(name, line) && inside(info, line))
                    }
                    Body::Exit(_) => {}
                }
            }
            Err(skip) => {
                let _ = skip.as_str();
            }
        }
        // The helpers take any bytes, not only what the parser hands them.
        for a in args(line) {
            helpers(a, 0);
        }
    }
});
