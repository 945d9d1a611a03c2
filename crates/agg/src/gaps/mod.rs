//! Timeline and gap analysis of strace output (`tlsgap gaps`).
//!
//! Per thread, in time order, the time between the end of one call and the start of
//! the next is a *gap*: user-space time (or time inside the previous call when strace
//! ran without `-T`). Each gap of at least [`GapOptions::min_gap_ns`] is reported with
//! the calls around it, the files and sockets touched just before it and a [`Cause`].
//! Long waits inside the kernel (`accept`, `epoll_wait`, `read` on a socket…) are
//! reported apart, in [`GapsReport::blocked`]: they are idle time, not slowness.
//!
//! ```
//! use tlsgap_agg::gaps::{Cause, GapAnalyzer, GapOptions};
//!
//! let trace = "\
//! 1795296993.100000 openat(AT_FDCWD, \"/etc/apache2/htpasswd.users\", O_RDONLY|O_CLOEXEC) = 15 <0.000020>
//! 1795296993.100100 read(15, \"alice:$2y$12$abcdefghijklmnopqrstuv\"..., 4096) = 61 <0.000010>
//! 1795296993.100200 close(15) = 0 <0.000005>
//! 1795296993.500200 openat(AT_FDCWD, \"/var/www/index.html\", O_RDONLY|O_CLOEXEC) = 15 <0.000020>
//! ";
//! let mut gaps = GapAnalyzer::new(GapOptions::default());
//! gaps.begin_input("trace.4242", Some(4242));
//! for (i, line) in trace.lines().enumerate() {
//!     gaps.line(i as u64 + 1, line.as_bytes());
//! }
//! gaps.end_input();
//! let report = gaps.finish();
//! let gap = &report.gaps[0];
//! assert_eq!((gap.pid, gap.cause, gap.line), (4242, Cause::Auth, 4));
//! // strace cut the read (`"..."`): the first entry is not necessarily the one verified.
//! assert_eq!(
//!     gap.detail.as_deref(),
//!     Some("verified entry not shown; the read starts with bcrypt cost 12")
//! );
//! assert_eq!(gap.start, "2026-11-21T21:36:33.100205Z");
//! assert!(!serde_json::to_string(&report).unwrap().contains("$2y$12$abc"));
//! ```
//!
//! # Inputs
//!
//! Feed each input with [`GapAnalyzer::begin_input`], [`GapAnalyzer::line`] per line
//! and [`GapAnalyzer::end_input`]. `-ff` files carry no PID: pass the one from the
//! file name ([`pid_from_file_name`]) as the hint. Inputs with a hint are taken to be
//! the `-ff` files of one run and share fd tables; each input without a hint (`-f`
//! to a file or stderr) is a run of its own. A gap found in several inputs (the same
//! run traced with `-f` and `-ff`) is reported once. The report does not depend on the
//! order of the inputs.
//!
//! # Causes
//!
//! | cause | list | meaning |
//! |---|---|---|
//! | `auth` | gaps | the last file or socket touched before the gap is an authentication file (`htpasswd*`, `*.htpasswd`, `*.users`, `htdigest*`, `/etc/shadow`, `/etc/pam.d/*`, `pam_*.so`) or an sssd/LDAP/nslcd socket, or the bytes of the last calls carry a password-hash prefix; or the time was spent inside a call on such a file or socket. `detail` names the hash scheme and cost when visible (`bcrypt cost 12`). |
//! | `cpu` | gaps | user space with no known cause (or scheduling, page faults). |
//! | `io` | gaps | inside a call on a regular file (read, write, open, stat…) or a sync (`fsync`, `fdatasync`, `sync_file_range`…); without `-T`, only a gap right after a sync (a gap after another file call is `cpu`, flagged `includes_call_time`). |
//! | `kernel` | gaps | inside another call that is not a wait (`execve`, `mmap`, `clone`…). |
//! | `blocked` | blocked | inside a waiting call: `accept`, `poll`, `select`, `epoll_wait`, `nanosleep`, `wait4`, `futex`, `flock`, `connect`, `restart_syscall`…, or a read/write/recv/send on a socket, pipe or terminal (or an fd that could not be named). Without `-T`, a gap right after such a call. |
//! | `startup` | blocked | inside the first call of a thread that was attached to (not seen being created), whose start is meaningless. |
//!
//! `-T` durations make the split between `gaps` and `blocked` exact. Without them a
//! gap runs from the *start* of the previous call and `includes_call_time` is set.
//!
//! Timer signals (`SIGPROF`, `SIGALRM`, `SIGVTALRM`) and the `rt_sigreturn` after them
//! do not end a gap: a CPU stretch cut by a profiler's timer stays one gap, with the
//! number of signals merged into it in `timer_signals`.
//!
//! # Times
//!
//! `-ttt` stamps are reported as RFC 3339 UTC with microseconds. `-t`/`-tt` stamps
//! carry no date: they are reported as `HH:MM:SS.ffffff` in strace's time zone, with
//! ` +Nd` when the trace crossed N midnights since the run started (`start_day` and
//! `start_nanos` keep the raw values so that a date can be attached later). `-r` alone
//! is summed per input and reported as `+S.ffffff` seconds since the input's first line.
//!
//! # Secrets
//!
//! Any quoted string that contains a password-hash prefix (`$2y$`, `$2a$`, `$2b$`,
//! `$apr1$`, `{SHA}`, `$5$`, `$6$`, `$y$`, `$argon2`, `$1$`), `Authorization:` (also
//! `Proxy-Authorization:`) or a credential on its own (`Basic` and 8 or more base64
//! characters, `Bearer` and a token) is replaced by a placeholder such as
//! `"<redacted: bcrypt cost 12, 60 bytes>"` before it is shown: no hash, salt or
//! header value reaches a report.
//!
//! A secret cut by a call boundary is followed from call to call, per fd table, fd
//! and direction: once data on an fd opened a line that holds a secret, the next data
//! on that fd up to the line's end is replaced too (`"<redacted: rest of a secret
//! line, 16 bytes>"`), and the last bytes of each line are kept so that a name or
//! scheme word cut in two (`Authori` + `zation:`) is found. A line ends at any
//! control byte but a tab. After data strace cut (`-s`), the next data on a socket
//! or pipe is replaced up to its first break unless it starts a line of its own (an
//! HTTP request or status line, a header other than the end of `Authorization`) or
//! is binary (`"<redacted: may continue a secret line, 16 bytes>"`); on a file, when
//! it looks like the rest of a hash. `close`, `dup2` onto the fd, a new fd of that
//! number and `lseek` start it afresh; a `dup` carries its source's state.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io::Write as _;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;
/// The hash scheme a [`HashInfo`] names: `tlsgap_auth`'s, kept at its old path here.
pub use tlsgap_auth::Scheme;
use tlsgap_parser::lossless_text;
use tlsgap_parser::strace::{
    args, closing_quote, decoration_path, escape_at, fd_arg, inner, parse_line, quoted,
    split_glued, unescape_into, Body, Exit, Ret, Skip, Stamp, TraceLine,
};
use tlsgap_parser::time::civil_from_days;

use crate::fdtable::{FdTables, Lookup, ResKind, Resolved, TableKey, UNORDERED};
use crate::quantile::nearest_rank;
use crate::rows::{Cell, CellType, Rows};

const NS: i64 = 1_000_000_000;
const DAY_NS: i64 = 86_400 * NS;
/// Roughly how long the `before`/`after` call texts are.
const TEXT_LIMIT: usize = 120;
/// How much of an unfinished call's arguments is kept until it resumes.
const PENDING_ARGS_LIMIT: usize = 64 * 1024;

mod analyzer;
mod build;
mod model;
mod render;
mod report;
mod resources;
mod rows;
mod secrets;
mod state;
mod summary;
mod syscalls;

pub use analyzer::*;
use build::*;
pub use model::*;
use render::*;
pub use report::*;
pub use rows::*;
use secrets::*;
use state::*;
use summary::*;
use syscalls::*;
