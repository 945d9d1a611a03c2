//! The evidence `join` reads: access-log requests, the workers' log writes and the
//! auth gaps of the traces.

use serde::Serialize;

/// What a request path serves, for like-for-like latency comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PathKind {
    /// HTML pages and directories.
    Page,
    /// CSS.
    Style,
    /// JavaScript.
    Script,
    /// Images and fonts.
    Image,
    /// Anything else.
    Other,
}

/// The kind of a request target, from its extension (query string ignored).
pub fn path_kind(target: &[u8]) -> PathKind {
    let path = target.split(|&b| b == b'?').next().unwrap_or(b"");
    let last = path.rsplit(|&b| b == b'/').next().unwrap_or(b"");
    let ext = match last.iter().rposition(|&b| b == b'.') {
        Some(i) => last.get(i + 1..).unwrap_or(b""),
        None => return PathKind::Page,
    };
    let ext = ext.to_ascii_lowercase();
    match ext.as_slice() {
        b"html" | b"htm" | b"php" | b"shtml" | b"asp" | b"aspx" | b"jsp" | b"cgi" => PathKind::Page,
        b"css" => PathKind::Style,
        b"js" | b"mjs" => PathKind::Script,
        b"png" | b"jpg" | b"jpeg" | b"gif" | b"svg" | b"webp" | b"ico" | b"avif" | b"woff"
        | b"woff2" | b"ttf" => PathKind::Image,
        _ => PathKind::Other,
    }
}

/// One access-log request, as much as the format tells.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// `%u` (none for `-`).
    pub user: Option<String>,
    /// Final status.
    pub status: Option<u16>,
    /// Start of the request, µs since the epoch.
    pub begin_us: Option<i64>,
    /// The log's UTC offset at that time, minutes.
    pub offset_minutes: Option<i16>,
    /// The offset `per_day` groups by (`--tz` at that time); `None`: `offset_minutes`.
    pub day_offset_minutes: Option<i16>,
    /// `%D`/`%T`/`$request_time`, µs.
    pub duration_us: Option<u64>,
    /// `%P`.
    pub pid: Option<u32>,
    /// Path kind.
    pub kind: PathKind,
    /// The client (`%h`, `$remote_addr`) of a request with a user, for page views.
    pub client: Option<String>,
    /// For requests with a user: the start of the line as written, through the user
    /// field and some bytes more (at most [`HEAD_MAX`]), to match a worker's log
    /// write in a trace to its line.
    pub head: Option<Box<[u8]>>,
    /// The line's length in bytes with its newline: the count of the `write()` that
    /// logged it, when the server writes each line on its own.
    pub line_len: Option<u32>,
}

/// The longest line start kept in [`Request::head`] and [`LogWrite::head`].
pub const HEAD_MAX: usize = 512;

/// An access-log line a worker wrote, seen in a trace (`write(fd, "127.0.0.1 - bob [..."`),
/// whole or as strace cut it (`-s 32` by default).
#[derive(Clone, Debug, PartialEq)]
pub struct LogWrite {
    /// The writing thread.
    pub pid: u32,
    /// When, on the trace's clock (see [`AuthGap::start`]).
    pub at: i64,
    /// The user field of the written line (`-` for none); `None` when strace cut the
    /// string before the user field ended.
    pub user: Option<String>,
    /// With `user` cut off: a `-s` that would show it.
    pub string_limit: Option<usize>,
    /// When, µs since the epoch, when the trace's clock gives a date (`-ttt`, or
    /// `-t`/`-tt` dated by the access log).
    pub epoch_at: Option<i64>,
    /// The written bytes as strace showed them (at most [`HEAD_MAX`]).
    pub head: Vec<u8>,
    /// Whether strace cut the string (`"..."...`).
    pub cut: bool,
    /// The file descriptor written to: a server with two logs that start alike
    /// (`CustomLog` twice) writes each request twice, once per descriptor.
    pub fd: Option<i64>,
    /// The bytes the call wrote (`write`'s count, `writev`'s result): the length of
    /// the one line it logged, newline included, unless the server buffers its log.
    pub len: Option<u64>,
}

/// A moment a traced worker turned to a request: it waited for a connection or an
/// event (`accept4`, `epoll_wait`, `poll`, ...) or read a request line
/// (`recvfrom(7, "GET /wiki/ HTTP/1.1\r\n"...`). Two password checks with no turn of
/// their worker between them are checks of one request (nginx checks again after an
/// internal redirect, `index` for a directory URL).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The thread.
    pub pid: u32,
    /// When, on the trace's clock (see [`AuthGap::start`]).
    pub at: i64,
}

/// An `auth` gap from the strace analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct AuthGap {
    /// Thread.
    pub pid: u32,
    /// Start on the trace's clock: µs since the epoch (`-ttt`), or µs since the local
    /// midnight of the run's first day (`-t`/`-tt`, see [`AuthGap::epoch_start`]).
    pub start: i64,
    /// End, same clock.
    pub end: i64,
    /// The epoch start, when the clock is the epoch or a date could be attached.
    pub epoch_start: Option<i64>,
    /// The epoch end, likewise.
    pub epoch_end: Option<i64>,
    /// Seconds.
    pub seconds: f64,
    /// `bcrypt cost 12`, when the trace showed the hash prefix.
    pub detail: Option<String>,
    /// Whether the call before the gap read (or closed) the password file: a check
    /// starts there. An `auth` gap after another call of the same request (a worker
    /// waiting for the CPU after its check, many requests on few cores) is not a
    /// check of its own.
    pub after_read: bool,
    /// `file:line` in the trace.
    pub at: String,
}
