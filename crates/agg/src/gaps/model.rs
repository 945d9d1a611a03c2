//! Options and the public enums: clocks, causes, gap kinds, hash schemes.

#[allow(unused_imports)]
use super::*;

/// What [`GapAnalyzer`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GapOptions {
    /// Shortest gap (or blocked interval) reported, in nanoseconds.
    pub min_gap_ns: u64,
    /// How many gaps `top` lists.
    pub top: usize,
    /// How many calls before a gap are kept for its context (`resources`, auth).
    pub context_calls: usize,
    /// `--since`/`--until` in ns since the Unix epoch: only gaps that start inside are
    /// reported. Applies to `-ttt` traces only (the others have no date); `None`: all.
    pub window_ns: Option<(Option<i64>, Option<i64>)>,
}

impl Default for GapOptions {
    /// 100 ms, top 20, 8 calls of context.
    fn default() -> GapOptions {
        GapOptions {
            min_gap_ns: 100_000_000,
            top: 20,
            context_calls: 8,
            window_ns: None,
        }
    }
}

// ------------------------------------------------------------------ public enums

/// Which clock the times of a gap are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// `-ttt`: nanoseconds since the Unix epoch.
    Unix,
    /// `-t`/`-tt`: local time of day, with a day offset since the run started.
    TimeOfDay,
    /// `-r` only: nanoseconds since the input's first line.
    Relative,
}

impl Clock {
    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Clock::Unix => "unix",
            Clock::TimeOfDay => "time_of_day",
            Clock::Relative => "relative",
        }
    }
}

/// Why a thread spent the time (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// Password checking: auth files or sockets, hashes in the data.
    Auth,
    /// User space, no known cause.
    Cpu,
    /// Inside file I/O or a sync.
    Io,
    /// Inside another non-waiting call.
    Kernel,
    /// Waiting inside the kernel (idle).
    Blocked,
    /// The first call of an attached thread.
    Startup,
}

impl Cause {
    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::Auth => "auth",
            Cause::Cpu => "cpu",
            Cause::Io => "io",
            Cause::Kernel => "kernel",
            Cause::Blocked => "blocked",
            Cause::Startup => "startup",
        }
    }
}

/// Which list an interval is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapKind {
    /// Time the thread was busy or slow: [`GapsReport::gaps`].
    Gap,
    /// Time the thread waited: [`GapsReport::blocked`].
    Blocked,
}

impl GapKind {
    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            GapKind::Gap => "gap",
            GapKind::Blocked => "blocked",
        }
    }
}

/// How an `auth` gap's detail starts when the trace does not show whose entry was
/// verified (see [`HashInfo::gap_label`]).
pub const ENTRY_NOT_SHOWN: &str = "verified entry not shown";

/// A hash seen in a buffer: its scheme (as `tlsgap_auth` recognises it, see
/// [`tlsgap_auth::find_hash`]) and cost (bcrypt) or rounds (SHA-crypt) when printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HashInfo {
    /// The scheme; its work factor counts only as far as `param` says.
    pub scheme: Scheme,
    /// bcrypt cost or SHA-crypt `rounds=`, when printed.
    pub param: Option<u32>,
    /// Whether it is the only entry of a read shown whole: then it is the entry that
    /// was verified. A read cut by strace's `-s`, or one that shows several entries,
    /// shows what comes first in the file, not whose password was checked.
    pub only_entry: bool,
}

impl HashInfo {
    /// The label of an `auth` gap: the scheme only when the trace shows it is the
    /// verified entry's.
    pub fn gap_label(&self) -> String {
        if self.only_entry {
            self.to_string()
        } else {
            format!("{ENTRY_NOT_SHOWN}; the read starts with {self}")
        }
    }
}

/// The bcrypt costs whose verification time — `seconds_at` at cost `at`, doubling with
/// each step — fits a gap of `gap_seconds`: a gap also holds the rest of the request's
/// work between the calls, so a cost fits when its time is between 60 % and 125 % of
/// the gap. `None` when none from 4 to 31 does.
pub fn bcrypt_costs_fitting(gap_seconds: f64, seconds_at: f64, at: u32) -> Option<(u32, u32)> {
    if !(gap_seconds > 0.0 && seconds_at > 0.0) {
        return None;
    }
    let time = |c: u32| seconds_at * 2f64.powi(c as i32 - at as i32);
    let fits: Vec<u32> = (4..=31)
        .filter(|&c| (0.6 * gap_seconds..=1.25 * gap_seconds).contains(&time(c)))
        .collect();
    Some((*fits.first()?, *fits.last()?))
}

/// What an `auth` gap's duration is consistent with, when the verified entry is not
/// shown: `"the duration fits bcrypt cost 12 at this machine's speed"` (`place`: whose
/// speed `bcrypt_seconds_at` is).
pub fn duration_note(gap_seconds: f64, bcrypt_seconds_at: f64, at: u32, place: &str) -> String {
    match bcrypt_costs_fitting(gap_seconds, bcrypt_seconds_at, at) {
        Some((a, b)) if a == b => format!("the duration fits bcrypt cost {a} at {place}"),
        Some((a, b)) => format!("the duration fits bcrypt cost {a}-{b} at {place}"),
        None if bcrypt_seconds_at * 2f64.powi(4 - at as i32) > gap_seconds => {
            format!("shorter than bcrypt cost 4 at {place}: a fast scheme")
        }
        None => "longer than any bcrypt cost explains".to_string(),
    }
}

impl fmt::Display for HashInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.scheme {
            Scheme::Bcrypt { .. } => "bcrypt",
            Scheme::Apr1 => "apr1 (MD5)",
            Scheme::Sha1 => "{SHA} (SHA-1)",
            Scheme::Sha256Crypt { .. } => "SHA-256 crypt",
            Scheme::Sha512Crypt { .. } => "SHA-512 crypt",
            Scheme::Yescrypt => "yescrypt",
            Scheme::Argon2 => "argon2",
            Scheme::Md5Crypt => "MD5 crypt",
            Scheme::DesCrypt => "crypt",
            Scheme::Unsupported => "unsupported prefix",
            _ => "plain",
        };
        f.write_str(name)?;
        match (self.scheme, self.param) {
            (Scheme::Bcrypt { .. }, Some(c)) => write!(f, " cost {c}"),
            (_, Some(r)) => write!(f, " rounds {r}"),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bcrypt_costs_that_fit_a_gap() {
        // Cost 8 takes 20 ms here: cost 12 320 ms, 13 640 ms.
        assert_eq!(bcrypt_costs_fitting(0.38, 0.02, 8), Some((12, 12)));
        assert_eq!(bcrypt_costs_fitting(0.52, 0.02, 8), Some((12, 13)));
        assert_eq!(
            duration_note(0.38, 0.02, 8, "this machine's speed"),
            "the duration fits bcrypt cost 12 at this machine's speed"
        );
        assert!(duration_note(0.0002, 0.02, 8, "x").contains("fast scheme"));
        assert!(duration_note(1e9, 0.02, 8, "x").starts_with("longer"));
        assert_eq!(bcrypt_costs_fitting(0.38, 0.0, 8), None);
    }
}
