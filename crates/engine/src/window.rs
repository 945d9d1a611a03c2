//! Time windows for the log commands (`--since`, `--until`, `--tz`) and the periods of
//! `--by day|hour`.
//!
//! A [`Window`] is a half-open range of instants, `[since, until)`, in microseconds since
//! the epoch. Lines are compared by their instant, whatever UTC offset each one carries.
//! Bounds that name a wall-clock time (`2026-11-21`, `2026-11-21T05:00`, `today`,
//! `yesterday`) are read in a [`Zone`]: `--tz`, or the local zone. Days are calendar
//! days there, so across a daylight-saving change a day lasts 23 or 25 hours.
//!
//! A nightly report of yesterday is `--since yesterday --until today`: the two bounds
//! are independent, and `--until` is exclusive, so `--until 2026-11-21` stops at that
//! date's first instant and leaves the 21st out.
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use tlsgap_engine::window::window_from_args;
//!
//! // 10:00 in Sofia on the day after the spring change: yesterday had 23 hours.
//! let now = Utc.with_ymd_and_hms(2026, 3, 30, 7, 0, 0).unwrap();
//! let (w, _zone) =
//!     window_from_args(Some("yesterday"), Some("today"), Some("Europe/Sofia"), now).unwrap();
//! assert_eq!(w.until.unwrap() - w.since.unwrap(), 23 * 3600 * 1_000_000);
//! ```

use std::fmt::Write as _;
use std::path::Path;
use std::str::FromStr;

use crate::{bail, err, Result};
use chrono::{
    DateTime, Datelike, LocalResult, NaiveDate, NaiveDateTime, NaiveTime, Offset, TimeDelta,
    TimeZone, Timelike, Utc,
};
use chrono_tz::Tz;
use tlsgap_parser::Timestamp;

const MICROS_PER_SECOND: i64 = 1_000_000;

/// The forms `--since` and `--until` accept, for error messages.
const BOUND_FORMS: &str = "expected RFC 3339 (2026-11-21T05:00:00+02:00, ...Z), a date \
     (2026-11-21), a local time (2026-11-21T05:00[:SS]), a log time \
     (21/Nov/2026:05:00:00 +0200), now, today, yesterday, tomorrow, or a duration from now \
     (-24h, -90m, -7d, -1w, -1h30m)";

/// A half-open range of instants, `[since, until)`, in microseconds since the epoch.
/// A missing bound is open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    /// First instant inside (µs since the epoch).
    pub since: Option<i64>,
    /// First instant after (µs since the epoch), exclusive.
    pub until: Option<i64>,
}

impl Window {
    /// Whether the line's instant is inside, whatever offset the line was written in.
    pub fn contains(&self, ts: &Timestamp) -> bool {
        self.contains_micros(ts.unix_micros())
    }

    /// Whether `us` (µs since the epoch) is inside.
    pub fn contains_micros(&self, us: i64) -> bool {
        self.since.is_none_or(|s| us >= s) && self.until.is_none_or(|u| us < u)
    }

    /// Whether there is no bound at all (every line is inside, even lines without a time).
    pub fn is_all(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }

    /// The window for a note on stderr: `2026-03-29T00:00:00+02:00 .. 2026-03-30T00:00:00+03:00`
    /// (`..` at an open end), with instants shown in `zone`.
    pub fn describe(&self, zone: &Zone) -> String {
        let show = |b: Option<i64>| b.map(|us| zone.format_micros(us)).unwrap_or_default();
        format!("{} .. {}", show(self.since), show(self.until))
            .trim()
            .to_string()
    }
}

/// Where a [`Zone`] came from, for [`Zone::describe`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum ZoneSource {
    /// `--tz NAME`.
    Flag,
    /// The `TZ` environment variable.
    TzEnv,
    /// The `/etc/localtime` symlink.
    Localtime,
    /// `/etc/timezone` (Debian's name file), when `/etc/localtime` is not a symlink.
    EtcTimezone,
    /// Nothing said which: UTC.
    Fallback,
}

/// The time zone wall-clock bounds and periods are read in: an IANA zone, from `--tz`
/// or detected as the local one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    tz: Tz,
    source: ZoneSource,
}

impl From<Tz> for Zone {
    /// A zone given explicitly (as `--tz` does).
    fn from(tz: Tz) -> Zone {
        Zone {
            tz,
            source: ZoneSource::Flag,
        }
    }
}

impl Zone {
    /// The zone.
    pub fn tz(&self) -> Tz {
        self.tz
    }

    /// Whether `--tz` named it (rather than the local zone found by default).
    pub fn is_given(&self) -> bool {
        self.source == ZoneSource::Flag
    }

    /// Its UTC offset at `us` (µs since the epoch), in minutes.
    pub fn offset_minutes_at(&self, us: i64) -> i16 {
        use chrono::Offset as _;
        let secs = us.div_euclid(1_000_000);
        self.tz
            .timestamp_opt(secs, 0)
            .single()
            .map_or(0, |d| (d.offset().fix().local_minus_utc() / 60) as i16)
    }

    /// Its IANA name (`Europe/Sofia`, `UTC`).
    pub fn name(&self) -> &'static str {
        self.tz.name()
    }

    /// The zone and where it came from, for a note: `Europe/Sofia (local zone, from
    /// /etc/localtime)`.
    pub fn describe(&self) -> String {
        let name = self.name();
        match self.source {
            ZoneSource::Flag => format!("{name} (--tz)"),
            ZoneSource::TzEnv => format!("{name} (local zone, from $TZ)"),
            ZoneSource::Localtime => format!("{name} (local zone, from /etc/localtime)"),
            ZoneSource::EtcTimezone => format!("{name} (local zone, from /etc/timezone)"),
            ZoneSource::Fallback => format!(
                "{name} (neither $TZ nor /etc/localtime names a local zone; use --tz to choose)"
            ),
        }
    }

    /// `us` (µs since the epoch) as RFC 3339 with this zone's offset at that instant.
    pub fn format_micros(&self, us: i64) -> String {
        let t = utc_from_micros(us).with_timezone(&self.tz);
        let mut s = t.format("%Y-%m-%dT%H:%M:%S").to_string();
        if t.nanosecond() != 0 {
            let _ = write!(s, ".{:06}", t.nanosecond() / 1000);
        }
        let off = t.offset().fix().local_minus_utc();
        if off == 0 {
            s.push('Z');
        } else {
            let sign = if off < 0 { '-' } else { '+' };
            let a = off.unsigned_abs();
            let _ = write!(s, "{sign}{:02}:{:02}", a / 3600, a / 60 % 60);
        }
        s
    }
}

/// The zone `--tz` names: an IANA name (`Europe/Sofia`, any case), `UTC`, or `local`;
/// `None` (no `--tz`) is the local zone.
///
/// The local zone is the `TZ` environment variable when set (an IANA name, optionally
/// `:`-prefixed or a path into a zoneinfo directory; empty means UTC, as in the C
/// library), else the zone `/etc/localtime` links to (the name after `zoneinfo/`), else
/// the name in `/etc/timezone`, else UTC. [`Zone::describe`] says which. A `TZ` that is
/// not an IANA name (a POSIX rule such as `CET-1CEST,M3.5.0,M10.5.0/3`) is an error
/// rather than a silent guess: `--tz` overrides it.
pub fn resolve_tz(name: Option<&str>) -> Result<Zone> {
    match name.map(str::trim) {
        None => detect_local_zone(),
        Some(n) if n.eq_ignore_ascii_case("local") => detect_local_zone(),
        Some(n) => lookup_zone(n)
            .map(Zone::from)
            .ok_or_else(|| unknown_zone(n)),
    }
}

fn detect_local_zone() -> Result<Zone> {
    let tz_env = std::env::var_os("TZ").map(|v| v.to_string_lossy().into_owned());
    let link = std::fs::read_link("/etc/localtime").ok().map(|target| {
        if target.to_string_lossy().contains("zoneinfo/") {
            target
        } else {
            // A chain of links (/etc/localtime -> /etc/alternatives/... -> zoneinfo).
            std::fs::canonicalize("/etc/localtime").unwrap_or(target)
        }
    });
    let etc_timezone = std::fs::read_to_string("/etc/timezone").ok();
    detect_local(tz_env.as_deref(), link.as_deref(), etc_timezone.as_deref())
}

/// The local zone from what the system says, kept pure for the tests: the value of `TZ`,
/// the target of the `/etc/localtime` symlink, the contents of `/etc/timezone`.
fn detect_local(
    tz_env: Option<&str>,
    localtime_link: Option<&Path>,
    etc_timezone: Option<&str>,
) -> Result<Zone> {
    if let Some(raw) = tz_env {
        let name = raw.strip_prefix(':').unwrap_or(raw).trim();
        if name.is_empty() {
            return Ok(Zone {
                tz: Tz::UTC,
                source: ZoneSource::TzEnv,
            });
        }
        let name = after_zoneinfo(name).unwrap_or(name);
        return match lookup_zone(name) {
            Some(tz) => Ok(Zone {
                tz,
                source: ZoneSource::TzEnv,
            }),
            None => Err(err!(
                "the TZ environment variable is {raw:?}, which is not an IANA time-zone name \
                 (such as Europe/Sofia); use --tz NAME, or unset TZ"
            )),
        };
    }
    let from_link = localtime_link
        .and_then(|p| p.to_str())
        .and_then(after_zoneinfo)
        .and_then(lookup_zone);
    if let Some(tz) = from_link {
        return Ok(Zone {
            tz,
            source: ZoneSource::Localtime,
        });
    }
    if let Some(tz) = etc_timezone.map(str::trim).and_then(lookup_zone) {
        return Ok(Zone {
            tz,
            source: ZoneSource::EtcTimezone,
        });
    }
    Ok(Zone {
        tz: Tz::UTC,
        source: ZoneSource::Fallback,
    })
}

/// `Europe/Sofia` from `/usr/share/zoneinfo/Europe/Sofia` (also `../usr/...`,
/// `zoneinfo/posix/...`, macOS's `/var/db/timezone/zoneinfo/...`).
fn after_zoneinfo(path: &str) -> Option<&str> {
    let (_, name) = path.rsplit_once("zoneinfo/")?;
    let name = name
        .strip_prefix("posix/")
        .or_else(|| name.strip_prefix("right/"))
        .unwrap_or(name);
    (!name.is_empty()).then_some(name)
}

/// A whole-hour UTC offset (`+02:00`, `+0200`, `+02`, `-5`) as the IANA `Etc/GMT∓N` zone
/// (whose sign is inverted by POSIX convention).
fn offset_zone(name: &str) -> Option<Tz> {
    let (sign, rest) = match name.as_bytes().first()? {
        b'+' => (1, &name[1..]),
        b'-' => (-1, &name[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 4 {
        return None;
    }
    let (hours, minutes) = match digits.len() {
        1 | 2 => (digits.parse::<i32>().ok()?, 0),
        _ => {
            let (h, m) = digits.split_at(digits.len() - 2);
            (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?)
        }
    };
    if minutes != 0 || hours > 14 {
        return None;
    }
    let etc = match sign * hours {
        0 => "Etc/UTC".to_string(),
        h => format!("Etc/GMT{:+}", -h),
    };
    Tz::from_str(&etc).ok()
}

/// An IANA zone by name, exactly or ignoring ASCII case, or a whole-hour offset.
fn lookup_zone(name: &str) -> Option<Tz> {
    if let Some(tz) = offset_zone(name) {
        return Some(tz);
    }
    Tz::from_str(name).ok().or_else(|| {
        chrono_tz::TZ_VARIANTS
            .iter()
            .copied()
            .find(|tz| tz.name().eq_ignore_ascii_case(name))
    })
}

fn unknown_zone(name: &str) -> crate::Error {
    // `Sofia` or `New_York` alone: suggest the zones whose last part it is.
    let suffix = format!("/{name}");
    let near: Vec<&str> = chrono_tz::TZ_VARIANTS
        .iter()
        .map(|tz| tz.name())
        .filter(|n| {
            n.len() >= suffix.len()
                && n.get(n.len() - suffix.len()..)
                    .is_some_and(|tail| tail.eq_ignore_ascii_case(&suffix))
        })
        .take(5)
        .collect();
    let hint = if near.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", near.join(", "))
    };
    err!(
        "--tz {name:?}: unknown time zone{hint}; use an IANA name such as Europe/Sofia, \
         America/New_York or UTC (`timedatectl list-timezones` lists them), a whole-hour \
         offset such as +02:00, or `local`"
    )
}

/// One `--since` or `--until` value as µs since the epoch. `is_until` only names the
/// flag in errors: both bounds mean the instant written, and the window is half-open, so
/// `--until 2026-11-21` ends just before that date's local midnight.
///
/// Forms:
/// - RFC 3339 with an offset or `Z` (`2026-11-21T05:00:00+02:00`, fractions allowed,
///   `T` or a space), and the access log's own `21/Nov/2026:05:00:00 +0200`: that instant.
/// - A date `2026-11-21`: its first instant in `zone` (local midnight).
/// - `2026-11-21T05:00` or `2026-11-21T05:00:00` without an offset: local time in `zone`.
/// - `now`; `today`, `yesterday`, `tomorrow`: that date's first instant in `zone`.
/// - A duration from `now`: a sign and one or more amounts with units `w`, `d`, `h`, `m`,
///   `s` (`-24h`, `-90m`, `-7d`, `-1w`, `-1h30m`, `+2h`). `d` and `w` are fixed
///   86 400 and 604 800 seconds of elapsed time, not calendar days: `-7d` is exactly
///   168 hours ago; use dates or `yesterday` for calendar days.
///
/// A local time the clock shows twice (the autumn change) is the earlier instant; one the
/// clock skips (the spring change; in some zones midnight itself) is the moment the clock
/// jumps, the earliest instant whose local time is at or after it.
pub fn parse_bound(s: &str, zone: &Zone, now: DateTime<Utc>, is_until: bool) -> Result<i64> {
    let flag = if is_until { "--until" } else { "--since" };
    let t = s.trim();
    let tz = zone.tz;
    let local_date = |days: i64| -> Result<i64> {
        let today = now.with_timezone(&tz).date_naive();
        let date = today
            .checked_add_signed(TimeDelta::days(days))
            .ok_or_else(|| err!("{flag} {s:?}: date out of range"))?;
        local_micros(tz, date.and_time(NaiveTime::MIN))
            .ok_or_else(|| err!("{flag} {s:?}: time out of range"))
    };
    match t.to_ascii_lowercase().as_str() {
        "now" => return Ok(now.timestamp_micros()),
        "today" => return local_date(0),
        "yesterday" => return local_date(-1),
        "tomorrow" => return local_date(1),
        _ => {}
    }
    if t.starts_with('-') || t.starts_with('+') {
        let delta = parse_duration_micros(t).ok_or_else(|| {
            err!(
                "{flag} {s:?}: not a duration; expected a sign, amounts and units w, d, h, m, s \
                 (-24h, -90m, -7d, -1w, -1h30m)"
            )
        })?;
        return now
            .timestamp_micros()
            .checked_add(delta)
            .ok_or_else(|| err!("{flag} {s:?}: out of range"));
    }
    if let Some(us) = parse_absolute(t) {
        return Ok(us);
    }
    if let Some(local) = parse_local(t) {
        return local_micros(tz, local).ok_or_else(|| err!("{flag} {s:?}: time out of range"));
    }
    if t.bytes().next().is_some_and(|b| b.is_ascii_digit()) && !t.contains(['-', '/', ':']) {
        bail!("{flag} {s:?}: a duration needs a sign: -{t} is {t} before now");
    }
    bail!("{flag} {s:?}: not a valid time; {BOUND_FORMS}")
}

/// An instant written with its offset: RFC 3339 or the access-log form.
fn parse_absolute(t: &str) -> Option<i64> {
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Some(dt.timestamp_micros());
    }
    let clf = t.strip_prefix('[').unwrap_or(t);
    let clf = clf.strip_suffix(']').unwrap_or(clf);
    DateTime::parse_from_str(clf, "%d/%b/%Y:%H:%M:%S %z")
        .ok()
        .map(|dt| dt.timestamp_micros())
}

/// A wall-clock time without an offset: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.frac]]`.
fn parse_local(t: &str) -> Option<NaiveDateTime> {
    if let Ok(d) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        return Some(d.and_time(NaiveTime::MIN));
    }
    let t = t.replacen(' ', "T", 1);
    ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(&t, f).ok())
}

/// An age such as `2h`, `90m`, `1d12h` (or `+2h`) in µs, for `check --stale-after`.
pub fn parse_age(s: &str) -> Result<i64> {
    let t = s.trim();
    let signed = if t.starts_with('+') {
        t.to_string()
    } else {
        format!("+{t}")
    };
    match parse_duration_micros(&signed) {
        Some(us) if us > 0 => Ok(us),
        _ => bail!("{s:?}: not an age (examples: 30m, 2h, 1d12h)"),
    }
}

/// `-1h30m` as signed µs; `None` when it is not a duration or overflows.
fn parse_duration_micros(t: &str) -> Option<i64> {
    let (negative, mut rest) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => return None,
    };
    if rest.is_empty() {
        return None;
    }
    let mut total: i64 = 0;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let amount: i64 = rest[..digits].parse().ok()?;
        let unit_seconds: i64 = match rest.as_bytes().get(digits)? {
            b's' => 1,
            b'm' => 60,
            b'h' => 3600,
            b'd' => 86_400,
            b'w' => 604_800,
            _ => return None,
        };
        let part = amount
            .checked_mul(unit_seconds)?
            .checked_mul(MICROS_PER_SECOND)?;
        total = total.checked_add(part)?;
        rest = &rest[digits + 1..];
    }
    Some(if negative { -total } else { total })
}

/// What `--since` / `--until` / `--tz` mean at `now`: the window and the zone it was read
/// in (also the zone for `--by`). The bounds are independent; a nightly report of
/// yesterday is `--since yesterday --until today`. An empty window (`since >= until`) is
/// an error.
pub fn window_from_args(
    since: Option<&str>,
    until: Option<&str>,
    tz: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(Window, Zone)> {
    let zone = resolve_tz(tz)?;
    let window = Window {
        since: since
            .map(|s| parse_bound(s, &zone, now, false))
            .transpose()?,
        until: until
            .map(|s| parse_bound(s, &zone, now, true))
            .transpose()?,
    };
    if let (Some(s), Some(u)) = (window.since, window.until) {
        if s >= u {
            bail!(
                "empty window: --since {:?} ({}) is not before --until {:?} ({}), in {}",
                since.unwrap_or_default(),
                zone.format_micros(s),
                until.unwrap_or_default(),
                zone.format_micros(u),
                zone.describe()
            );
        }
    }
    Ok((window, zone))
}

pub use tlsgap_agg::trend::{Period, PeriodKey};

/// The period of `ts_us` (µs since the epoch) in `zone`.
///
/// A period is the run of instants whose local time carries the label, and lasts as the
/// clock says: a day 23, 24 or 25 hours; the repeated autumn hour (Sofia's 03:00 on
/// 2026-10-25) is one two-hour period; a skipped hour has none. It starts at the first
/// instant with the label: local `00:00` or `HH:00`, or the jump when the clock skipped
/// that. Only when the clock turns back further than a period (Antarctica/Troll's
/// 03:00 -> 01:00) is a label shown in two periods, told apart by `start_us`: group by
/// the key rather than the label.
pub fn period_key(ts_us: i64, period: Period, zone: &Zone) -> PeriodKey {
    let tz = zone.tz;
    let instant = utc_from_micros(ts_us);
    let local = instant.with_timezone(&tz).naive_local();
    let date = local.date();
    let (label, label_start, next_start) = match period {
        Period::Day => (
            period_label(date.year(), date.month(), date.day(), None),
            date.and_time(NaiveTime::MIN),
            date.succ_opt().map(|d| d.and_time(NaiveTime::MIN)),
        ),
        Period::Hour => {
            let start = date.and_time(NaiveTime::MIN) + TimeDelta::hours(i64::from(local.hour()));
            (
                period_label(date.year(), date.month(), date.day(), Some(local.hour())),
                start,
                start.checked_add_signed(TimeDelta::hours(1)),
            )
        }
    };
    let start = match tz.from_local_datetime(&label_start) {
        LocalResult::Single(t) => Some(t.with_timezone(&Utc)),
        LocalResult::Ambiguous(early, late) => {
            let (early, late) = (early.with_timezone(&Utc), late.with_timezone(&Utc));
            // The clock showed the label's start twice. One period if it turned back to
            // exactly that start without having reached the next label (Havana's
            // repeated midnight, Sofia's repeated 03:00); else the second showing starts
            // a new one (Antarctica/Troll's 03:00 -> 01:00 repeats hours 01 and 02).
            let continuous = || {
                let (last_before, turn) = fold_turn(tz, early, late);
                turn == late && next_start.is_some_and(|next| last_before < next)
            };
            Some(if late <= instant && !continuous() {
                late
            } else {
                early
            })
        }
        LocalResult::None => gap_end(tz, label_start),
    };
    let start_us = start
        .map(|t| t.timestamp_micros())
        .filter(|&s| s <= ts_us)
        .unwrap_or(ts_us);
    PeriodKey { start_us, label }
}

/// A period's label: `2026-11-21`, or `2026-11-21T05` with an hour, as
/// `format!("{:04}-{:02}-{:02}T{:02}")` writes it, without the formatting machinery
/// for the years of four digits (a new second's period is named at every second
/// change: the formatting was ~2/3 of it, issue 12).
fn period_label(year: i32, month: u32, day: u32, hour: Option<u32>) -> String {
    if !(0..=9999).contains(&year) || month > 99 || day > 99 || hour.is_some_and(|h| h > 99) {
        return match hour {
            Some(h) => format!("{year:04}-{month:02}-{day:02}T{h:02}"),
            None => format!("{year:04}-{month:02}-{day:02}"),
        };
    }
    // Two digits of `n` (below 100).
    fn two(out: &mut String, n: u32) {
        out.push(char::from(b'0' + (n / 10 % 10) as u8));
        out.push(char::from(b'0' + (n % 10) as u8));
    }
    let mut out = String::with_capacity(13);
    let y = year.unsigned_abs();
    two(&mut out, y / 100);
    two(&mut out, y % 100);
    out.push('-');
    two(&mut out, month);
    out.push('-');
    two(&mut out, day);
    if let Some(h) = hour {
        out.push('T');
        two(&mut out, h);
    }
    out
}

/// Where the clock turned back between `early` and `late` (two instants with the same
/// local time): the last local time shown before (to the second), and the instant of
/// the turn.
fn fold_turn(tz: Tz, early: DateTime<Utc>, late: DateTime<Utc>) -> (NaiveDateTime, DateTime<Utc>) {
    let offset = |t: DateTime<Utc>| t.with_timezone(&tz).offset().fix();
    let before = offset(early);
    // The offset changes once between the two (transitions are whole seconds).
    let (mut lo, mut hi) = (early, late);
    while hi - lo > TimeDelta::seconds(1) {
        let mid = lo + (hi - lo) / 2;
        if offset(mid) == before {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo.with_timezone(&tz).naive_local(), hi)
}

/// The instant `us` means, clamped to chrono's range less two days, so that local time
/// in any zone stays representable (a log can claim any year).
fn utc_from_micros(us: i64) -> DateTime<Utc> {
    let margin = TimeDelta::days(2);
    let lo = DateTime::<Utc>::MIN_UTC + margin;
    let hi = DateTime::<Utc>::MAX_UTC - margin;
    DateTime::from_timestamp_micros(us).map_or(if us < 0 { lo } else { hi }, |t| t.clamp(lo, hi))
}

/// The instant of local time `local` in `tz`, as µs: the earlier one in a fold, the
/// jump in a gap.
fn local_micros(tz: Tz, local: NaiveDateTime) -> Option<i64> {
    let t = match tz.from_local_datetime(&local) {
        LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => t.with_timezone(&Utc),
        LocalResult::None => gap_end(tz, local)?,
    };
    Some(t.timestamp_micros())
}

/// For a local time the clock skips, the transition: the earliest instant whose local
/// time is at or after it.
fn gap_end(tz: Tz, local: NaiveDateTime) -> Option<DateTime<Utc>> {
    // Every instant of a gap maps to the same transition; whole seconds keep the search
    // on the transition itself.
    let local = local.with_nanosecond(0)?;
    // The first valid local time a minute at a time (the longest gap on record is a
    // day: Pacific/Apia skipped 2011-12-30), then the exact second in the minute before.
    let after = (1..=48 * 60).find_map(|k| {
        let probe = local.checked_add_signed(TimeDelta::minutes(k))?;
        tz.from_local_datetime(&probe).earliest()
    })?;
    let after = after.with_timezone(&Utc);
    // Within that minute the offset changes once, so local time rises with the instant.
    (0..60)
        .rev()
        .filter_map(|back| after.checked_sub_signed(TimeDelta::seconds(back)))
        .find(|t| t.with_timezone(&tz).naive_local() >= local)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR_US: i64 = 3600 * MICROS_PER_SECOND;

    fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, mo, d, h, mi, s).unwrap()
    }

    fn us(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> i64 {
        utc(y, mo, d, h, mi, s).timestamp_micros()
    }

    fn zone(name: &str) -> Zone {
        resolve_tz(Some(name)).unwrap()
    }

    fn bound(s: &str, z: &str, now: DateTime<Utc>) -> Result<i64> {
        parse_bound(s, &zone(z), now, false)
    }

    fn err(r: Result<impl std::fmt::Debug>) -> String {
        format!("{:#}", r.unwrap_err())
    }

    /// The length of a calendar day in `z`, via `--since DATE --until NEXT`.
    fn day_hours(z: &str, date: &str, next: &str) -> f64 {
        let (w, _) =
            window_from_args(Some(date), Some(next), Some(z), utc(2030, 1, 1, 0, 0, 0)).unwrap();
        (w.until.unwrap() - w.since.unwrap()) as f64 / HOUR_US as f64
    }

    // --- Window ---

    #[test]
    fn window_is_half_open() {
        let w = Window {
            since: Some(100),
            until: Some(200),
        };
        assert!(!w.contains_micros(99));
        assert!(w.contains_micros(100));
        assert!(w.contains_micros(199));
        assert!(!w.contains_micros(200));
        assert!(!w.is_all());
        assert!(Window::default().is_all());
        assert!(Window::default().contains_micros(i64::MIN));
        let open_start = Window {
            since: None,
            until: Some(0),
        };
        assert!(open_start.contains_micros(-1) && !open_start.contains_micros(0));
        assert!(!open_start.is_all());
    }

    #[test]
    fn window_compares_lines_by_instant_whatever_their_offset() {
        // 2026-11-21T03:00:00Z written as +02:00 and as -03:30.
        let since = us(2026, 11, 21, 3, 0, 0);
        let w = Window {
            since: Some(since),
            until: Some(since + 1),
        };
        let unix = since / MICROS_PER_SECOND;
        for off in [Some(120), Some(-210), None] {
            let ts = Timestamp {
                unix,
                nanos: 0,
                offset_minutes: off,
            };
            assert!(w.contains(&ts), "{off:?}");
            let later = Timestamp { nanos: 1000, ..ts };
            assert!(!w.contains(&later), "{off:?}");
        }
    }

    #[test]
    fn window_describe_shows_bounds_in_zone() {
        let z = zone("Europe/Sofia");
        let w = Window {
            since: Some(us(2026, 3, 28, 22, 0, 0)),
            until: Some(us(2026, 3, 29, 21, 0, 0)),
        };
        assert_eq!(
            w.describe(&z),
            "2026-03-29T00:00:00+02:00 .. 2026-03-30T00:00:00+03:00"
        );
        let open = Window {
            since: None,
            until: Some(us(2026, 1, 1, 0, 0, 0)),
        };
        assert_eq!(open.describe(&zone("UTC")), ".. 2026-01-01T00:00:00Z");
    }

    // --- Zones ---

    #[test]
    fn resolve_tz_accepts_iana_names_utc_and_any_case() {
        assert_eq!(zone("Europe/Sofia").name(), "Europe/Sofia");
        assert_eq!(zone("europe/sofia").name(), "Europe/Sofia");
        assert_eq!(zone("UTC").tz(), Tz::UTC);
        assert_eq!(zone("utc").tz(), Tz::UTC);
        assert_eq!(zone(" America/New_York ").name(), "America/New_York");
        assert_eq!(zone("Europe/Sofia").describe(), "Europe/Sofia (--tz)");
    }

    #[test]
    fn resolve_tz_rejects_unknown_names_and_suggests() {
        let e = err(resolve_tz(Some("Europe/Sofa")));
        assert!(e.contains("unknown time zone"), "{e}");
        assert!(e.contains("Europe/Sofa"), "{e}");
        let e = err(resolve_tz(Some("Sofia")));
        assert!(e.contains("did you mean Europe/Sofia?"), "{e}");
        assert!(resolve_tz(Some("")).is_err());
        assert!(resolve_tz(Some("+05:30")).is_err());
    }

    #[test]
    fn local_zone_from_tz_env() {
        let z = detect_local(Some("Europe/Sofia"), None, None).unwrap();
        assert_eq!(z.name(), "Europe/Sofia");
        assert_eq!(z.describe(), "Europe/Sofia (local zone, from $TZ)");
        // TZ wins over /etc/localtime.
        let link = Path::new("/usr/share/zoneinfo/Asia/Tokyo");
        let z = detect_local(Some(":America/Havana"), Some(link), None).unwrap();
        assert_eq!(z.name(), "America/Havana");
        let z = detect_local(Some(":/usr/share/zoneinfo/Europe/Berlin"), None, None).unwrap();
        assert_eq!(z.name(), "Europe/Berlin");
        // Empty TZ is UTC, as in the C library.
        assert_eq!(
            detect_local(Some(""), Some(link), None).unwrap().tz(),
            Tz::UTC
        );
    }

    #[test]
    fn local_zone_rejects_posix_tz_rules() {
        let e = err(detect_local(Some("CET-1CEST,M3.5.0,M10.5.0/3"), None, None));
        assert!(e.contains("TZ environment variable"), "{e}");
        assert!(e.contains("--tz"), "{e}");
    }

    #[test]
    fn local_zone_from_etc_localtime_link() {
        for (target, want) in [
            ("/usr/share/zoneinfo/Europe/Sofia", "Europe/Sofia"),
            (
                "../usr/share/zoneinfo/America/Argentina/Buenos_Aires",
                "America/Argentina/Buenos_Aires",
            ),
            ("/usr/share/zoneinfo/posix/Asia/Kolkata", "Asia/Kolkata"),
            (
                "/var/db/timezone/zoneinfo/America/Santiago",
                "America/Santiago",
            ),
            ("/usr/share/zoneinfo/Etc/UTC", "Etc/UTC"),
        ] {
            let z = detect_local(None, Some(Path::new(target)), Some("Asia/Tokyo\n")).unwrap();
            assert_eq!(z.name(), want, "{target}");
            assert!(z.describe().ends_with("(local zone, from /etc/localtime)"));
        }
    }

    #[test]
    fn local_zone_from_etc_timezone_then_utc() {
        let weird_link = Path::new("/opt/tz/current");
        let z = detect_local(None, Some(weird_link), Some("Asia/Tokyo\n")).unwrap();
        assert_eq!(z.name(), "Asia/Tokyo");
        assert!(z.describe().contains("/etc/timezone"));
        let z = detect_local(None, None, Some("Not/AZone\n")).unwrap();
        assert_eq!(z.tz(), Tz::UTC);
        assert!(z.describe().contains("use --tz"), "{}", z.describe());
        assert_eq!(detect_local(None, None, None).unwrap().tz(), Tz::UTC);
    }

    // --- Bounds ---

    #[test]
    fn rfc3339_bounds_are_instants_whatever_the_zone() {
        let now = utc(2026, 11, 21, 12, 0, 0);
        let want = us(2026, 11, 21, 3, 0, 0);
        for z in ["UTC", "Europe/Sofia", "Pacific/Kiritimati"] {
            assert_eq!(bound("2026-11-21T05:00:00+02:00", z, now).unwrap(), want);
            assert_eq!(bound("2026-11-21T03:00:00Z", z, now).unwrap(), want);
            assert_eq!(bound("2026-11-21 03:00:00z", z, now).unwrap(), want);
            assert_eq!(bound("[21/Nov/2026:05:00:00 +0200]", z, now).unwrap(), want);
            assert_eq!(bound("20/Nov/2026:23:30:00 -0330", z, now).unwrap(), want);
        }
        assert_eq!(
            bound("2026-11-21T03:00:00.25Z", "UTC", now).unwrap(),
            want + 250_000
        );
    }

    #[test]
    fn dates_and_local_times_are_read_in_the_zone() {
        let now = utc(2026, 11, 21, 12, 0, 0);
        // Sofia is +02:00 in winter, +03:00 in summer.
        assert_eq!(
            bound("2026-11-21", "Europe/Sofia", now).unwrap(),
            us(2026, 11, 20, 22, 0, 0)
        );
        assert_eq!(
            bound("2026-07-01", "Europe/Sofia", now).unwrap(),
            us(2026, 6, 30, 21, 0, 0)
        );
        assert_eq!(
            bound("2026-11-21", "UTC", now).unwrap(),
            us(2026, 11, 21, 0, 0, 0)
        );
        assert_eq!(
            bound("2026-11-21T05:00", "Europe/Sofia", now).unwrap(),
            us(2026, 11, 21, 3, 0, 0)
        );
        assert_eq!(
            bound("2026-11-21T05:00:30", "Europe/Sofia", now).unwrap(),
            us(2026, 11, 21, 3, 0, 30)
        );
        assert_eq!(
            bound("2026-11-21 05:00:30.5", "Europe/Sofia", now).unwrap(),
            us(2026, 11, 21, 3, 0, 30) + 500_000
        );
        // A half-hour zone.
        assert_eq!(
            bound("2026-11-21T05:30", "Asia/Kolkata", now).unwrap(),
            us(2026, 11, 21, 0, 0, 0)
        );
    }

    #[test]
    fn until_a_date_is_that_dates_midnight() {
        let now = utc(2026, 11, 30, 0, 0, 0);
        let (w, _) = window_from_args(
            Some("2026-11-20"),
            Some("2026-11-21"),
            Some("Europe/Sofia"),
            now,
        )
        .unwrap();
        assert_eq!(w.until, Some(us(2026, 11, 20, 22, 0, 0)));
        assert!(w.contains_micros(us(2026, 11, 20, 21, 59, 59)));
        assert!(!w.contains_micros(us(2026, 11, 20, 22, 0, 0)));
    }

    #[test]
    fn today_yesterday_tomorrow_follow_the_zones_calendar() {
        // 22:30Z on the 20th is already 00:30 on the 21st in Sofia.
        let now = utc(2026, 11, 20, 22, 30, 0);
        assert_eq!(
            bound("today", "Europe/Sofia", now).unwrap(),
            us(2026, 11, 20, 22, 0, 0)
        );
        assert_eq!(
            bound("Yesterday", "Europe/Sofia", now).unwrap(),
            us(2026, 11, 19, 22, 0, 0)
        );
        assert_eq!(
            bound("tomorrow", "Europe/Sofia", now).unwrap(),
            us(2026, 11, 21, 22, 0, 0)
        );
        assert_eq!(
            bound("today", "UTC", now).unwrap(),
            us(2026, 11, 20, 0, 0, 0)
        );
        assert_eq!(
            bound("today", "America/New_York", now).unwrap(),
            us(2026, 11, 20, 5, 0, 0)
        );
        assert_eq!(
            bound("now", "Europe/Sofia", now).unwrap(),
            now.timestamp_micros()
        );
    }

    #[test]
    fn durations_are_relative_to_now() {
        let now = utc(2026, 11, 21, 12, 0, 0);
        let n = now.timestamp_micros();
        let s = MICROS_PER_SECOND;
        for (text, delta) in [
            ("-24h", -24 * 3600 * s),
            ("-90m", -90 * 60 * s),
            ("-7d", -7 * 86_400 * s),
            ("-30s", -30 * s),
            ("-1w", -604_800 * s),
            ("-1h30m", -5400 * s),
            ("+2h", 7200 * s),
            ("-0s", 0),
        ] {
            assert_eq!(
                bound(text, "Europe/Sofia", now).unwrap(),
                n + delta,
                "{text}"
            );
        }
    }

    #[test]
    fn day_durations_are_fixed_hours_not_calendar_days() {
        // The day after the spring change in Sofia: -1d is 24 h ago, which is 01:00
        // local yesterday, while `yesterday` is local midnight (23 h span to today).
        let now = utc(2026, 3, 29, 22, 0, 0); // 2026-03-30T01:00+03:00
        let minus_day = bound("-1d", "Europe/Sofia", now).unwrap();
        assert_eq!(minus_day, us(2026, 3, 28, 22, 0, 0));
        assert_eq!(bound("-24h", "Europe/Sofia", now).unwrap(), minus_day);
        assert_eq!(
            zone("Europe/Sofia").format_micros(minus_day),
            "2026-03-29T00:00:00+02:00"
        );
    }

    #[test]
    fn bad_bounds_are_errors_naming_flag_and_value() {
        let now = utc(2026, 11, 21, 12, 0, 0);
        let z = zone("UTC");
        for bad in [
            "2026-02-30",
            "2026-13-01",
            "2026-11-21T25:00",
            "21/Foo/2026:05:00:00 +0200",
            "last tuesday",
            "",
        ] {
            let e = err(parse_bound(bad, &z, now, false));
            assert!(e.starts_with("--since"), "{bad}: {e}");
            assert!(e.contains("not a valid time"), "{bad}: {e}");
        }
        let e = err(parse_bound("2026-02-30", &z, now, true));
        assert!(e.starts_with("--until \"2026-02-30\""), "{e}");
        for bad in [
            "-",
            "-h",
            "-5x",
            "-5",
            "-1h30",
            "--24h",
            "-1.5h",
            "-99999999999999999w",
        ] {
            let e = err(parse_bound(bad, &z, now, false));
            assert!(e.contains("not a duration"), "{bad}: {e}");
        }
        let e = err(parse_bound("24h", &z, now, false));
        assert!(e.contains("needs a sign"), "{e}");
    }

    // --- Windows and daylight saving ---

    #[test]
    fn yesterday_in_sofia_after_spring_change_is_23_hours() {
        // EU summer time 2026 starts on the last Sunday of March, 29th, 03:00 -> 04:00.
        let now = utc(2026, 3, 30, 7, 0, 0);
        let (w, z) =
            window_from_args(Some("yesterday"), Some("today"), Some("Europe/Sofia"), now).unwrap();
        assert_eq!(w.since, Some(us(2026, 3, 28, 22, 0, 0)));
        assert_eq!(w.until, Some(us(2026, 3, 29, 21, 0, 0)));
        assert_eq!(w.until.unwrap() - w.since.unwrap(), 23 * HOUR_US);
        assert_eq!(z.name(), "Europe/Sofia");
    }

    #[test]
    fn yesterday_in_sofia_after_autumn_change_is_25_hours() {
        // EU summer time 2026 ends on the last Sunday of October, 25th, 04:00 -> 03:00.
        let now = utc(2026, 10, 26, 7, 0, 0);
        let (w, _) =
            window_from_args(Some("yesterday"), Some("today"), Some("Europe/Sofia"), now).unwrap();
        assert_eq!(w.since, Some(us(2026, 10, 24, 21, 0, 0)));
        assert_eq!(w.until, Some(us(2026, 10, 25, 22, 0, 0)));
        assert_eq!(w.until.unwrap() - w.since.unwrap(), 25 * HOUR_US);
    }

    #[test]
    fn yesterday_in_sofia_on_a_normal_day_is_24_hours() {
        let now = utc(2026, 6, 16, 7, 0, 0);
        let (w, _) =
            window_from_args(Some("yesterday"), Some("today"), Some("Europe/Sofia"), now).unwrap();
        assert_eq!(w.since, Some(us(2026, 6, 14, 21, 0, 0)));
        assert_eq!(w.until.unwrap() - w.since.unwrap(), 24 * HOUR_US);
    }

    #[test]
    fn local_time_in_a_spring_gap_is_the_jump() {
        // 03:30 does not exist in Sofia on 2026-03-29: the clock goes from 03:00 to 04:00
        // at 01:00Z.
        let now = utc(2026, 4, 1, 0, 0, 0);
        let jump = us(2026, 3, 29, 1, 0, 0);
        assert_eq!(
            bound("2026-03-29T03:30", "Europe/Sofia", now).unwrap(),
            jump
        );
        assert_eq!(
            bound("2026-03-29T03:00", "Europe/Sofia", now).unwrap(),
            jump
        );
        assert_eq!(
            bound("2026-03-29T03:59:59.9", "Europe/Sofia", now).unwrap(),
            jump
        );
        assert_eq!(
            bound("2026-03-29T04:00", "Europe/Sofia", now).unwrap(),
            jump
        );
        // Just before the gap is an ordinary time.
        assert_eq!(
            bound("2026-03-29T02:59:59", "Europe/Sofia", now).unwrap(),
            jump - MICROS_PER_SECOND
        );
    }

    #[test]
    fn local_time_in_an_autumn_fold_is_the_earlier_instant() {
        // 03:30 happens twice in Sofia on 2026-10-25: at 00:30Z (+03) and 01:30Z (+02).
        let now = utc(2026, 11, 1, 0, 0, 0);
        assert_eq!(
            bound("2026-10-25T03:30", "Europe/Sofia", now).unwrap(),
            us(2026, 10, 25, 0, 30, 0)
        );
    }

    #[test]
    fn santiago_midnight_that_does_not_exist() {
        // Chile starts summer time on the first Sunday of September at 24:00: on
        // 2026-09-06 the clock goes from 00:00 (-04) to 01:00 (-03) at 04:00Z.
        let now = utc(2026, 9, 7, 15, 0, 0);
        assert_eq!(
            bound("2026-09-06", "America/Santiago", now).unwrap(),
            us(2026, 9, 6, 4, 0, 0)
        );
        let (w, _) = window_from_args(
            Some("yesterday"),
            Some("today"),
            Some("America/Santiago"),
            now,
        )
        .unwrap();
        assert_eq!(w.since, Some(us(2026, 9, 6, 4, 0, 0)));
        assert_eq!(w.until, Some(us(2026, 9, 7, 3, 0, 0)));
        assert_eq!(
            day_hours("America/Santiago", "2026-09-05", "2026-09-06"),
            24.0
        );
        assert_eq!(
            day_hours("America/Santiago", "2026-09-06", "2026-09-07"),
            23.0
        );
    }

    #[test]
    fn havana_midnight_that_happens_twice() {
        // Cuba ends summer time on the first Sunday of November at 01:00 -> 00:00:
        // midnight of 2026-11-01 is at 04:00Z (-04) and again at 05:00Z (-05).
        let now = utc(2026, 11, 10, 0, 0, 0);
        assert_eq!(
            bound("2026-11-01", "America/Havana", now).unwrap(),
            us(2026, 11, 1, 4, 0, 0)
        );
        assert_eq!(
            day_hours("America/Havana", "2026-11-01", "2026-11-02"),
            25.0
        );
        // And starts it on the second Sunday of March at 00:00 -> 01:00.
        assert_eq!(
            bound("2026-03-08", "America/Havana", now).unwrap(),
            us(2026, 3, 8, 5, 0, 0)
        );
        assert_eq!(
            day_hours("America/Havana", "2026-03-08", "2026-03-09"),
            23.0
        );
    }

    #[test]
    fn a_day_that_was_skipped_is_an_empty_window() {
        // Samoa skipped 2011-12-30 entirely: 29th 23:59:59 (-10) -> 31st 00:00 (+14).
        let now = utc(2012, 1, 5, 0, 0, 0);
        let skipped = bound("2011-12-30", "Pacific/Apia", now).unwrap();
        assert_eq!(skipped, us(2011, 12, 30, 10, 0, 0));
        assert_eq!(bound("2011-12-31", "Pacific/Apia", now).unwrap(), skipped);
        let e = err(window_from_args(
            Some("2011-12-30"),
            Some("2011-12-31"),
            Some("Pacific/Apia"),
            now,
        ));
        assert!(e.starts_with("empty window"), "{e}");
    }

    #[test]
    fn since_not_before_until_is_an_empty_window() {
        let now = utc(2026, 11, 21, 12, 0, 0);
        for (s, u) in [
            ("today", "yesterday"),
            ("2026-11-21T05:00:00Z", "2026-11-21T05:00:00Z"),
            ("-1h", "-2h"),
        ] {
            let e = err(window_from_args(
                Some(s),
                Some(u),
                Some("Europe/Sofia"),
                now,
            ));
            assert!(e.starts_with("empty window"), "{s} {u}: {e}");
            assert!(e.contains("Europe/Sofia"), "{e}");
        }
        // One microsecond is not empty.
        assert!(window_from_args(
            Some("2026-11-21T05:00:00Z"),
            Some("2026-11-21T05:00:00.000001Z"),
            Some("UTC"),
            now
        )
        .is_ok());
    }

    #[test]
    fn window_from_args_keeps_bounds_independent_and_reports_errors() {
        let now = utc(2026, 11, 21, 12, 0, 0);
        let (w, _) = window_from_args(Some("yesterday"), None, Some("UTC"), now).unwrap();
        assert_eq!(w.since, Some(us(2026, 11, 20, 0, 0, 0)));
        assert_eq!(w.until, None);
        let (w, _) = window_from_args(None, None, Some("UTC"), now).unwrap();
        assert!(w.is_all());
        assert!(err(window_from_args(Some("x"), None, Some("UTC"), now)).starts_with("--since"));
        assert!(err(window_from_args(None, Some("x"), Some("UTC"), now)).starts_with("--until"));
        assert!(err(window_from_args(None, None, Some("Mars/Olympus"), now))
            .contains("unknown time zone"));
    }

    // --- Periods ---

    #[test]
    fn period_labels_are_local() {
        let z = zone("Europe/Sofia");
        // 2026-11-20T22:30Z is 00:30 on the 21st in Sofia.
        let t = us(2026, 11, 20, 22, 30, 0);
        let day = period_key(t, Period::Day, &z);
        assert_eq!(day.label, "2026-11-21");
        assert_eq!(day.start_us, us(2026, 11, 20, 22, 0, 0));
        let hour = period_key(t, Period::Hour, &z);
        assert_eq!(hour.label, "2026-11-21T00");
        assert_eq!(hour.start_us, us(2026, 11, 20, 22, 0, 0));
        let utc_day = period_key(t, Period::Day, &zone("UTC"));
        assert_eq!(utc_day.label, "2026-11-20");
        // A half-hour zone: 00:00Z is 05:30 in Kolkata, in the hour that began at 23:30Z.
        let k = period_key(
            us(2026, 11, 21, 0, 0, 0),
            Period::Hour,
            &zone("Asia/Kolkata"),
        );
        assert_eq!(k.label, "2026-11-21T05");
        assert_eq!(k.start_us, us(2026, 11, 20, 23, 30, 0));
    }

    #[test]
    fn period_days_follow_daylight_saving() {
        let z = zone("Europe/Sofia");
        let spring = period_key(us(2026, 3, 29, 12, 0, 0), Period::Day, &z);
        let next = period_key(us(2026, 3, 30, 12, 0, 0), Period::Day, &z);
        assert_eq!(spring.label, "2026-03-29");
        assert_eq!(next.start_us - spring.start_us, 23 * HOUR_US);
        let autumn = period_key(us(2026, 10, 25, 12, 0, 0), Period::Day, &z);
        let next = period_key(us(2026, 10, 26, 12, 0, 0), Period::Day, &z);
        assert_eq!(next.start_us - autumn.start_us, 25 * HOUR_US);
        // A day whose midnight does not exist starts when the clock jumps.
        let santiago = period_key(
            us(2026, 9, 6, 12, 0, 0),
            Period::Day,
            &zone("America/Santiago"),
        );
        assert_eq!(santiago.label, "2026-09-06");
        assert_eq!(santiago.start_us, us(2026, 9, 6, 4, 0, 0));
        // A day whose midnight happens twice starts at the first.
        let havana = period_key(
            us(2026, 11, 1, 12, 0, 0),
            Period::Day,
            &zone("America/Havana"),
        );
        assert_eq!(havana.start_us, us(2026, 11, 1, 4, 0, 0));
        let havana_early = period_key(
            us(2026, 11, 1, 5, 30, 0),
            Period::Day,
            &zone("America/Havana"),
        );
        assert_eq!(havana_early, havana);
    }

    #[test]
    fn repeated_autumn_hour_is_one_two_hour_period() {
        // Sofia, 2026-10-25: 03:00-04:00 EEST (00:00Z-01:00Z), then 03:00-04:00 EET again.
        let z = zone("Europe/Sofia");
        let first = period_key(us(2026, 10, 25, 0, 30, 0), Period::Hour, &z);
        let second = period_key(us(2026, 10, 25, 1, 30, 0), Period::Hour, &z);
        assert_eq!(first.label, "2026-10-25T03");
        assert_eq!(first.start_us, us(2026, 10, 25, 0, 0, 0));
        assert_eq!(second, first);
        let next = period_key(us(2026, 10, 25, 2, 0, 0), Period::Hour, &z);
        assert_eq!(next.label, "2026-10-25T04");
        assert_eq!(next.start_us - first.start_us, 2 * HOUR_US);
        // The hour after the spring gap: 03:xx never happens, 04:00 starts at 01:00Z.
        let spring = period_key(us(2026, 3, 29, 1, 15, 0), Period::Hour, &z);
        assert_eq!(spring.label, "2026-03-29T04");
        assert_eq!(spring.start_us, us(2026, 3, 29, 1, 0, 0));
        let before = period_key(us(2026, 3, 29, 0, 59, 59), Period::Hour, &z);
        assert_eq!(before.label, "2026-03-29T02");
        assert_eq!(before.start_us, us(2026, 3, 29, 0, 0, 0));
    }

    #[test]
    fn hours_shown_again_after_a_two_hour_turn_back_are_new_periods() {
        // Antarctica/Troll ends summer time (+02 -> +00) at 01:00Z on the EU date,
        // 2026-10-25: the clock goes 01, 02, then from 03:00 back to 01:00.
        let z = zone("Antarctica/Troll");
        let key = |h: u32, m: u32, d: u32| period_key(us(2026, 10, d, h, m, 0), Period::Hour, &z);
        let one_a = key(23, 30, 24);
        let two_a = key(0, 30, 25);
        let one_b = key(1, 30, 25);
        let two_b = key(2, 30, 25);
        assert_eq!(one_a.label, "2026-10-25T01");
        assert_eq!(one_b.label, "2026-10-25T01");
        assert_eq!(two_a.label, "2026-10-25T02");
        assert_eq!(two_b.label, "2026-10-25T02");
        assert_eq!(one_a.start_us, us(2026, 10, 24, 23, 0, 0));
        assert_eq!(two_a.start_us, us(2026, 10, 25, 0, 0, 0));
        assert_eq!(one_b.start_us, us(2026, 10, 25, 1, 0, 0));
        assert_eq!(two_b.start_us, us(2026, 10, 25, 2, 0, 0));
        // The day is still one period of 26 hours.
        let day = period_key(us(2026, 10, 25, 12, 0, 0), Period::Day, &z);
        let next = period_key(us(2026, 10, 26, 12, 0, 0), Period::Day, &z);
        assert_eq!(next.start_us - day.start_us, 26 * HOUR_US);
    }

    proptest::proptest! {
        /// A period's label is what `format!` writes, for any year, month, day, hour.
        #[test]
        fn period_labels_are_formatted_ones(
            year in proptest::prop_oneof![-20_000i32..20_000, 0i32..10_000],
            month in 0u32..120,
            day in 0u32..120,
            hour in proptest::option::of(0u32..120),
        ) {
            let want = match hour {
                Some(h) => format!("{year:04}-{month:02}-{day:02}T{h:02}"),
                None => format!("{year:04}-{month:02}-{day:02}"),
            };
            proptest::prop_assert_eq!(period_label(year, month, day, hour), want);
        }
    }

    #[test]
    fn period_key_survives_any_timestamp() {
        let z = zone("Pacific/Kiritimati");
        for t in [i64::MIN, i64::MAX, 0, -1] {
            for p in [Period::Day, Period::Hour] {
                let k = period_key(t, p, &z);
                assert!(k.start_us <= t, "{t} {p:?}: {k:?}");
                assert!(!k.label.is_empty());
            }
        }
        assert_eq!(
            period_key(-1, Period::Day, &zone("UTC")).label,
            "1969-12-31"
        );
    }

    proptest::proptest! {
        /// Whatever a user types as a bound or a zone, parsing answers (Ok or a
        /// message); it never panics, and an accepted bound round-trips through
        /// `period_key` without panicking either.
        #[test]
        fn bounds_and_zones_never_panic(s in "\\PC{0,40}", z in "\\PC{0,20}") {
            let now = utc(2026, 11, 21, 3, 0, 0);
            let sofia = zone("Europe/Sofia");
            if let Ok(us) = parse_bound(&s, &sofia, now, false) {
                let _ = period_key(us, Period::Hour, &sofia);
            }
            let _ = parse_bound(&s, &sofia, now, true);
            let _ = resolve_tz(Some(&z));
            let _ = window_from_args(Some(&s), Some(&s), Some(&z), now);
        }

        /// Forms that look like the documented ones but with random numbers.
        #[test]
        fn numeric_forms_never_panic(
            y in 0i64..100_000, mo in 0u32..20, d in 0u32..40, h in 0u32..30,
            n in -1_000_000_000i64..1_000_000_000,
        ) {
            let now = utc(2026, 11, 21, 3, 0, 0);
            let sofia = zone("Europe/Sofia");
            for s in [
                format!("{y:04}-{mo:02}-{d:02}"),
                format!("{y:04}-{mo:02}-{d:02}T{h:02}:00"),
                format!("{y:04}-{mo:02}-{d:02}T{h:02}:00:00+02:00"),
                format!("{n}h"),
                format!("-{}d", n.unsigned_abs()),
                format!("+{}w", n.unsigned_abs()),
            ] {
                if let Ok(us) = parse_bound(&s, &sofia, now, false) {
                    let _ = period_key(us, Period::Day, &sofia);
                }
            }
        }
    }
}

#[cfg(test)]
mod offset_tests {
    use super::*;

    #[test]
    fn whole_hour_offsets_are_etc_zones() {
        let at = |z: &str| {
            let zone = resolve_tz(Some(z)).unwrap_or_else(|e| panic!("{z}: {e}"));
            parse_bound(
                "2026-11-21T12:00",
                &zone,
                DateTime::<Utc>::from(std::time::UNIX_EPOCH),
                false,
            )
            .unwrap()
        };
        let utc = at("UTC");
        for z in ["+02:00", "+0200", "+02", "+2"] {
            assert_eq!(at(z), utc - 2 * 3600 * MICROS_PER_SECOND, "{z}");
        }
        assert_eq!(at("-05:00"), utc + 5 * 3600 * MICROS_PER_SECOND);
        assert_eq!(at("+00:00"), utc);
        for bad in ["+05:30", "+15", "+2x", "+", "+12345"] {
            assert!(resolve_tz(Some(bad)).is_err(), "{bad}");
        }
        assert!(resolve_tz(Some("+05:30"))
            .unwrap_err()
            .to_string()
            .contains("whole-hour offset"));
    }
}
