//! Call, signal and exit text for the report, shortened and redacted.

#[allow(unused_imports)]
use super::*;

/// `name(args) = ret <dur>` (or `name(args <unfinished ...>`), shortened and redacted;
/// a data call's data with the carry of its fd from before the call (`feed`).
#[allow(clippy::too_many_arguments)]
pub(super) fn render_call(
    out: &mut Vec<u8>,
    name: &[u8],
    call_args: &[u8],
    ret: Option<&[u8]>,
    dur: Option<u64>,
    unfinished: bool,
    scratch: &mut Vec<u8>,
    feed: Option<&mut Feed>,
) -> Option<HashInfo> {
    out.clear();
    out.extend_from_slice(name);
    out.push(b'(');
    let limit = TEXT_LIMIT.saturating_sub(24).max(out.len() + 16);
    let mut hash = redact_into(call_args, out, limit, scratch, feed);
    if unfinished {
        out.extend_from_slice(b" <unfinished ...>");
        return hash;
    }
    out.extend_from_slice(b") = ");
    if let Some(r) = ret {
        let limit = out.len() + 40;
        let h = redact_into(r, out, limit, scratch, None);
        hash = hash.or(h);
    }
    if let Some(d) = dur {
        // Into the reused buffer: no allocation per line.
        let _ = write!(
            out,
            " <{}.{:06}>",
            d / 1_000_000_000,
            d % 1_000_000_000 / 1000
        );
    }
    hash
}

pub(super) fn render_signal(out: &mut Vec<u8>, name: &[u8], info: &[u8], scratch: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(b"--- ");
    out.extend_from_slice(name);
    out.push(b' ');
    let limit = TEXT_LIMIT;
    redact_into(info, out, limit, scratch, None);
    out.extend_from_slice(b" ---");
}

pub(super) fn render_exit(out: &mut Vec<u8>, e: &Exit<'_>) {
    out.clear();
    let text = match *e {
        Exit::Exited(n) => format!("+++ exited with {n} +++"),
        Exit::Killed {
            signal,
            core_dumped,
        } => format!(
            "+++ killed by {}{} +++",
            lossless_text(signal),
            if core_dumped { " (core dumped)" } else { "" }
        ),
        Exit::Superseded(p) => format!("+++ superseded by execve in pid {p} +++"),
    };
    out.extend_from_slice(text.as_bytes());
}
