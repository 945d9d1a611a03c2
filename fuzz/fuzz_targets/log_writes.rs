//! `tlsgap_agg::authjoin::scan_log_writes`, the scan that finds the access-log lines
//! in a worker's strace (the `write`s `tlsgap auth` joins with the gaps), on
//! input-chosen trace text, for the user slots of three real formats. Input-chosen
//! text around a planted `write` of a combined-format line whose user name (any bytes
//! but spaces and control bytes) comes from the input, escaped as strace escapes it:
//! the scan must find that write and its user, unescaped as the access log's is
//! (`\x0b` in the line is the byte 0x0b), whatever came before it. And every write
//! found keeps its head within `HEAD_MAX`, and names a user (non-empty) or, cut short
//! by `-s`, the limit that would show it — never both.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_agg::authjoin::{scan_log_writes, UserSlot, HEAD_MAX};
use tlsgap_parser::{Escaping, Format};

/// A string as strace shows it by default: printable ASCII as is, `"` and `\`
/// escaped, `\t\n\r` and the rest as escapes.
fn strace_quote(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:o}")),
        }
    }
    out.push('"');
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let format = [
        "combined",
        r#"%v %h %l %u %t "%r" %>s %b"#,
        r#"%h %l %u "%r" %>s %b"#,
    ][usize::from(flags % 3)];
    let Some(slot) = UserSlot::of(&Format::compile(format).expect("a preset compiles")) else {
        return;
    };
    // The user: input bytes up to the first `|` (kept to what a user field can be),
    // then the trace text around the planted write.
    let split = rest.iter().position(|&b| b == b'|').unwrap_or(0);
    let (user, text) = rest.split_at(split);
    let text = text.get(1..).unwrap_or_default();
    let plant = flags & 4 != 0
        && slot == UserSlot::COMBINED
        && !user.is_empty()
        && user.len() <= 64
        && user.iter().all(|&b| b > 0x20 && b != 0x7f);
    let mut trace = text.to_vec();
    if plant {
        let mut line = b"192.0.2.7 - ".to_vec();
        line.extend_from_slice(user);
        line.extend_from_slice(b" [27/Nov/2026:12:00:00 +0000] \"GET / HTTP/1.1\" 200 5\n");
        let n = line.len();
        trace.extend_from_slice(
            format!(
                "\n4242  1795296993.000100 write(8, {}, {n}) = {n}\n",
                strace_quote(&line)
            )
            .as_bytes(),
        );
    }
    let writes = scan_log_writes(&trace, slot);
    for w in &writes {
        assert!(w.head.len() <= HEAD_MAX, "head of {} bytes", w.head.len());
        assert!(
            w.user.is_some() != w.string_limit.is_some(),
            "a user or a limit: {:?} {:?}",
            w.user,
            w.string_limit
        );
        if let Some(u) = &w.user {
            assert!(!u.is_empty(), "an empty user");
        }
    }
    if plant {
        let unescaped = tlsgap_parser::unescape(user, Escaping::Apache);
        let want = tlsgap_parser::lossless_text(&unescaped);
        let last = writes.last().expect("the planted write is found");
        assert_eq!((last.pid, last.user.as_deref()), (4242, Some(&*want)));
    }
});
