//! strace text output, one line at a time, on bytes, zero-copy.
//!
//! API skeleton (types are fixed; the implementation is in progress). See
//! `../shared/reference/strace-output.md` for every form a line can take.

/// An absolute timestamp as strace printed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stamp {
    /// `-t`, `-tt`, `precision:ms|us|ns`: wall-clock time of day in strace's local time
    /// zone, with no date, as nanoseconds since midnight.
    TimeOfDay {
        /// Nanoseconds since local midnight.
        nanos: u64,
    },
    /// `-ttt`, `format:unix`: nanoseconds since the Unix epoch.
    Unix {
        /// Nanoseconds since 1970-01-01T00:00:00Z.
        nanos: i64,
    },
}

/// The return part of a call: `= RET [errno (text)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ret<'a> {
    /// Everything after `= ` up to the ` <duration>` (or the end), trailing spaces cut.
    pub raw: &'a [u8],
    /// The numeric value (decimal or `0x` hex); `None` for `?`.
    pub value: Option<i64>,
    /// A `-y` decoration on the value (`3</etc/passwd>` gives `/etc/passwd`), escapes kept.
    pub decoration: Option<&'a [u8]>,
    /// The errno name (`ENOENT`, `ERESTARTSYS`), if any.
    pub errno: Option<&'a [u8]>,
}

/// A system call with its arguments and result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    /// Syscall name (`openat`, `restart_syscall`).
    pub name: &'a [u8],
    /// The text between the parentheses, as printed (for a resumed call: after
    /// `resumed>`), unparsed; split it with [`args`].
    pub args: &'a [u8],
    /// The result.
    pub ret: Ret<'a>,
    /// `-T`: time spent inside the call, in nanoseconds.
    pub duration_ns: Option<u64>,
}

/// How a traced process ended (`+++ ... +++`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit<'a> {
    /// `+++ exited with N +++`.
    Exited(i32),
    /// `+++ killed by SIGX [(core dumped)] +++`.
    Killed {
        /// The signal name.
        signal: &'a [u8],
        /// `(core dumped)` was printed.
        core_dumped: bool,
    },
    /// `+++ superseded by execve in pid N +++`.
    Superseded(u32),
}

/// What a trace line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body<'a> {
    /// `name(args) = ret [<dur>]`.
    Call(Call<'a>),
    /// `name(args <unfinished ...>`: the call started, its end comes later.
    Unfinished {
        /// Syscall name.
        name: &'a [u8],
        /// The arguments printed so far.
        args: &'a [u8],
    },
    /// `<... name resumed>args) = ret [<dur>]`: the end of an unfinished call; the
    /// line's stamp is the exit time.
    Resumed(Call<'a>),
    /// `--- SIGNAME {siginfo} ---`.
    Signal {
        /// Signal name (`SIGPROF`).
        name: &'a [u8],
        /// The `{...}` text, unparsed.
        info: &'a [u8],
    },
    /// `+++ ... +++`.
    Exit(Exit<'a>),
}

/// One parsed trace line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceLine<'a> {
    /// The PID (thread id) from the prefix, if there was one.
    pub pid: Option<u32>,
    /// `-Y`: the command name printed with the PID.
    pub comm: Option<&'a [u8]>,
    /// Absolute timestamp, if printed.
    pub stamp: Option<Stamp>,
    /// `-r`: time since the previous printed line, in nanoseconds.
    pub relative_ns: Option<u64>,
    /// The body.
    pub body: Body<'a>,
}

/// Why a line is not a trace line (skipped and counted by the caller).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Skip {
    /// Empty or blank.
    Empty,
    /// `strace: ...` messages (`Process N attached`, ...).
    StraceMessage,
    /// `-k` stack frames (` > /lib/...`).
    StackFrame,
    /// `-e read=`/`write=` hex dumps (` | 00000  47 45 ...`).
    HexDump,
    /// `-c`/`-C` summary tables.
    Summary,
    /// Anything else (program output mixed in, a cut line).
    NotTrace,
}

impl Skip {
    /// Snake-case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Skip::Empty => "empty",
            Skip::StraceMessage => "strace_message",
            Skip::StackFrame => "stack_frame",
            Skip::HexDump => "hex_dump",
            Skip::Summary => "summary",
            Skip::NotTrace => "not_trace",
        }
    }
}

/// Parse one line (without its newline).
pub fn parse_line(line: &[u8]) -> Result<TraceLine<'_>, Skip> {
    let _ = line;
    Err(Skip::NotTrace)
}

/// Split call arguments at top-level commas (quotes, escapes, `<...>` decorations,
/// brackets and comments respected); each item is trimmed.
pub fn args(args: &[u8]) -> impl Iterator<Item = &[u8]> + '_ {
    // in progress
    args.split(|&b| b == b',')
}
