//! `tlsgap_agg::gaps` on strace text made from the input around planted secrets: an
//! HTTP request whose `Authorization` (or `Proxy-Authorization`) value is the fixed
//! credential `Basic c2VjcmV0OnBsYW50ZWQ=`, and an htpasswd entry with a bcrypt hash,
//! each cut at input-chosen points into reads on one fd (`read`, `recvfrom`, `readv`
//! over two iovecs, `recvmsg`, unfinished and resumed), some cut by strace's `-s`
//! (`"..."...`), written plain, `-xx` or with input-chosen escapes, with `-f`, `[pid N]`
//! or `-ff` prefixes, between input-chosen other lines (other fds, the other direction
//! of the same fd, another process's fd of the same number, signals). The whole
//! analysis runs with every gap reported, and no 6-byte piece of the credential's
//! value or of the hash may be in the report's JSON, in the cells of its flat table
//! (what CSV and Parquet are written from) or in the flat rows' `Debug`: as written,
//! nor once strace's escapes in them are decoded.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use tlsgap_agg::gaps::{gap_rows, gap_table, GapAnalyzer, GapOptions};
use tlsgap_agg::Cell;
use tlsgap_parser::strace::unescape_into;

/// The planted credential's value, and its hash-file counterpart.
const VALUE: &[u8] = b"c2VjcmV0OnBsYW50ZWQ=";
const HASH: &[u8] = b"$2y$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW";
/// The traced process, and another one (with its own fd table).
const PID: u32 = 1234;
const OTHER: u32 = 99;

/// The input, read a byte at a time (zeros once it runs out).
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }

    fn text(&mut self) -> Vec<u8> {
        let n = self.below(24);
        (0..n).map(|_| self.byte()).collect()
    }
}

/// How data strings are written.
#[derive(Clone, Copy)]
enum Enc {
    /// As strace writes them by default: printable ASCII as is, `\r\n\t`, octal.
    Plain,
    /// `-xx`: every byte as `\xHH`.
    Hex,
    /// Any byte escaped or not, as the input says (any mix strace could print).
    Mixed,
}

fn escape(data: &[u8], enc: Enc, inp: &mut Input) -> String {
    let mut out = String::new();
    for &b in data {
        let form = match enc {
            Enc::Plain => 0,
            Enc::Hex => 1,
            Enc::Mixed => inp.below(3),
        };
        match (form, b) {
            (1, _) => out.push_str(&format!("\\x{b:02x}")),
            (2, _) => out.push_str(&format!("\\{b:03o}")),
            (_, b'\r') => out.push_str("\\r"),
            (_, b'\n') => out.push_str("\\n"),
            (_, b'\t') => out.push_str("\\t"),
            (_, b'"') => out.push_str("\\\""),
            (_, b'\\') => out.push_str("\\\\"),
            (_, 0x20..=0x7e) => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

/// A data string as strace shows it: the escaped start of `data` (all of it, or a cut
/// `"..."...` one when `shown` is shorter).
fn quoted(data: &[u8], shown: usize, enc: Enc, inp: &mut Input) -> String {
    let shown = shown.min(data.len());
    let body = escape(data.get(..shown).unwrap_or_default(), enc, inp);
    if shown < data.len() {
        format!("\"{body}\"...")
    } else {
        format!("\"{body}\"")
    }
}

/// Whether `hay` holds any 6-byte piece of the secrets: one pass over `hay`, each
/// 6 bytes looked up among the pieces.
fn leaks(hay: &[u8]) -> Option<Vec<u8>> {
    thread_local! {
        static PIECES: HashSet<&'static [u8]> =
            [VALUE, HASH].iter().flat_map(|s| s.windows(6)).collect();
    }
    PIECES.with(|p| hay.windows(6).find(|w| p.contains(w)).map(<[u8]>::to_vec))
}

/// One trace line: the call and which process makes it.
struct Line {
    pid: u32,
    text: String,
}

/// An input-chosen line that is not planted data on fd 15 or 8 of `PID`, and never
/// closes, reuses or seeks them (that would end the streams the secrets are cut in).
fn other_line(inp: &mut Input, enc: Enc) -> Option<Line> {
    let mut text = inp.text();
    // Input-chosen text holding a piece of a secret is not a leak of the planted one.
    if leaks(&text).is_some() {
        text.clear();
    }
    let line = |pid, text| Some(Line { pid, text });
    match inp.below(8) {
        0 => line(PID, format!("getpid() = {PID}")),
        1 => {
            let q = quoted(&text, text.len(), enc, inp);
            line(PID, format!("read(16, {q}, 4096) = {}", text.len()))
        }
        2 => line(
            PID,
            r#"write(15, "HTTP/1.1 100 Continue\r\n\r\n", 25) = 25"#.to_string(),
        ),
        3 => line(
            PID,
            "--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=7, si_uid=0} ---"
                .to_string(),
        ),
        4 => {
            let q = quoted(&text, text.len(), enc, inp);
            line(OTHER, format!("read(15, {q}, 4096) = {}", text.len()))
        }
        5 => line(PID, "close(17) = 0".to_string()),
        6 => line(
            PID,
            "epoll_wait(4, [{events=EPOLLIN, data={u32=15, u64=15}}], 10, 1000) = 1".to_string(),
        ),
        _ => {
            let q = quoted(&text, text.len(), enc, inp);
            line(OTHER, format!("write(16, {q}, {n}) = {n}", n = text.len()))
        }
    }
}

/// `data` cut at input-chosen points into reads on `fd`, with other lines between.
/// `cuts`: whether strace's `-s` may cut what a read shows.
fn plant(out: &mut Vec<Line>, data: &[u8], fd: u32, cuts: bool, enc: Enc, inp: &mut Input) {
    let pieces = 1 + inp.below(6);
    let mut at: Vec<usize> = (1..pieces).map(|_| inp.below(data.len())).collect();
    at.push(0);
    at.push(data.len());
    at.sort_unstable();
    at.dedup();
    for w in at.windows(2) {
        let piece = data.get(w[0]..w[1]).unwrap_or_default();
        let n = piece.len();
        let shown = if cuts && inp.below(4) == 0 {
            inp.below(n + 1)
        } else {
            n
        };
        let text = match inp.below(5) {
            0 => format!("read({fd}, {}, 4096) = {n}", quoted(piece, shown, enc, inp)),
            1 => format!(
                "recvfrom({fd}, {}, 4096, 0, NULL, NULL) = {n}",
                quoted(piece, shown, enc, inp)
            ),
            2 => {
                // Two iovecs: the piece is cut once more inside the call.
                let k = inp.below(n + 1);
                let (a, b) = piece.split_at(k);
                let qa = quoted(a, a.len(), enc, inp);
                let qb = quoted(b, shown.saturating_sub(k), enc, inp);
                format!(
                    "readv({fd}, [{{iov_base={qa}, iov_len={}}}, {{iov_base={qb}, iov_len=4096}}], 2) = {n}",
                    a.len()
                )
            }
            3 => format!(
                "recvmsg({fd}, {{msg_name=NULL, msg_namelen=0, msg_iov=[{{iov_base={}, iov_len=4096}}], msg_iovlen=1, msg_controllen=0, msg_flags=0}}, 0) = {n}",
                quoted(piece, shown, enc, inp)
            ),
            _ => {
                out.push(Line {
                    pid: PID,
                    text: format!("read({fd}, <unfinished ...>"),
                });
                // Only another process runs while this one waits.
                for _ in 0..inp.below(3) {
                    if let Some(l) = other_line(inp, enc).filter(|l| l.pid == OTHER) {
                        out.push(l);
                    }
                }
                format!(
                    "<... read resumed>{}, 4096) = {n}",
                    quoted(piece, shown, enc, inp)
                )
            }
        };
        out.push(Line { pid: PID, text });
        for _ in 0..inp.below(4) {
            if let Some(l) = other_line(inp, enc) {
                out.push(l);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut inp = Input(data);
    let flags = inp.byte();
    let enc = match flags & 3 {
        1 => Enc::Hex,
        2 => Enc::Mixed,
        _ => Enc::Plain,
    };
    // 0: `PID  stamp call` (-f to a file), 1: `[pid PID] stamp call` (-f to stderr),
    // 2: one `-ff` file per process, lines unprefixed.
    let form = (flags >> 2) % 3;
    let name = [
        &b"Authorization"[..],
        b"authorization",
        b"AUTHORIZATION",
        b"Proxy-Authorization",
    ][inp.below(4)];
    let scheme = [&b"Basic"[..], b"basic", b"BASIC"][inp.below(3)];
    let mut request = b"GET / HTTP/1.1\r\nHost: x\r\n".to_vec();
    request.extend_from_slice(name);
    request.extend_from_slice(b": ");
    request.extend_from_slice(scheme);
    request.extend_from_slice(b" ");
    request.extend_from_slice(VALUE);
    request.extend_from_slice(b"\r\nAccept: */*\r\n\r\n");
    let mut entry = b"alice:".to_vec();
    entry.extend_from_slice(HASH);
    entry.extend_from_slice(b"\n");

    let mut lines = vec![
        Line {
            pid: PID,
            text: "accept4(3, NULL, NULL, SOCK_CLOEXEC) = 15".to_string(),
        },
        Line {
            pid: PID,
            text: r#"openat(AT_FDCWD, "/etc/apache2/htpasswd", O_RDONLY|O_CLOEXEC) = 8"#
                .to_string(),
        },
    ];
    // The request and the file, one after the other in either order. The file is
    // never cut by `-s`: what a cut hides of a hash is gone, and a piece of fewer
    // than 8 characters after it is not taken for the rest of one.
    if flags & 0x40 == 0 {
        plant(&mut lines, &request, 15, true, enc, &mut inp);
        plant(&mut lines, &entry, 8, false, enc, &mut inp);
    } else {
        plant(&mut lines, &entry, 8, false, enc, &mut inp);
        plant(&mut lines, &request, 15, true, enc, &mut inp);
    }
    lines.push(Line {
        pid: PID,
        text: format!("getpid() = {PID}"),
    });

    let mut gaps = GapAnalyzer::new(GapOptions {
        min_gap_ns: 1,
        ..GapOptions::default()
    });
    let stamp = |i: usize| format!("1795296993.{:06}", 100 * (i + 1));
    if form == 2 {
        for pid in [PID, OTHER] {
            gaps.begin_input(&format!("trace.{pid}"), Some(pid));
            for (i, l) in lines.iter().enumerate().filter(|(_, l)| l.pid == pid) {
                gaps.line(i as u64 + 1, format!("{} {}", stamp(i), l.text).as_bytes());
            }
            gaps.end_input();
        }
    } else {
        gaps.begin_input("trace", None);
        for (i, l) in lines.iter().enumerate() {
            let line = if form == 1 {
                format!("[pid {:>5}] {} {}", l.pid, stamp(i), l.text)
            } else {
                format!("{}  {} {}", l.pid, stamp(i), l.text)
            };
            gaps.line(i as u64 + 1, line.as_bytes());
        }
        gaps.end_input();
    }
    let report = gaps.finish();

    // Every text the outputs are made of, as written and decoded.
    let mut outputs: Vec<Vec<u8>> = vec![
        serde_json::to_vec(&report).expect("a report serializes"),
        format!("{:?}", gap_rows(&report)).into_bytes(),
    ];
    for row in &gap_table(&report).rows {
        for cell in row {
            if let Cell::Text(t) = cell {
                outputs.push(t.clone().into_bytes());
            }
        }
    }
    let mut decoded = Vec::new();
    for out in outputs {
        unescape_into(&out, &mut decoded);
        for form in [&out, &decoded] {
            if let Some(w) = leaks(form) {
                let trace: Vec<&str> = lines.iter().map(|l| l.text.as_str()).collect();
                panic!(
                    "{:?} leaked in\n{}\nfrom the trace\n{}",
                    String::from_utf8_lossy(&w),
                    String::from_utf8_lossy(form),
                    trace.join("\n")
                );
            }
        }
    }
});
