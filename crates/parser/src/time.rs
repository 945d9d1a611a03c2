//! Timestamps as access logs write them.
//!
//! The common case (`%t`, `$time_local`) repeats the same second on thousands of
//! lines, so [`TimeCache`] remembers the last text it parsed and answers repeats with a
//! 26-byte comparison.

use std::fmt;

use nom::bytes::complete::{tag, take};
use nom::character::complete::{digit1, one_of};
use nom::combinator::{map_res, opt};
use nom::{IResult, Parser};

/// How a time field is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeSpec {
    /// `[21/Nov/2026:18:07:40 -0330]` (Apache `%t`, with brackets) or the same without
    /// brackets (nginx `$time_local`).
    Clf {
        /// Whether the brackets are part of the value.
        brackets: bool,
    },
    /// `2026-11-21T18:08:24-03:30` (nginx `$time_iso8601`).
    Iso8601,
    /// Seconds, milliseconds or microseconds since the epoch (`%{sec|msec|usec}t`).
    Epoch {
        /// Units per second: 1, 1000 or 1000000.
        per_second: u32,
    },
    /// Seconds since the epoch with a fraction, `1795297104.439` (nginx `$msec`).
    EpochDecimal,
    /// The fraction of the second of the request time (`%{msec_frac}t`, `%{usec_frac}t`).
    Frac {
        /// 3 or 6.
        digits: u8,
    },
    /// An strftime format (`%{%d/%b/%Y %T}t`): local time unless it has `%z`.
    Strftime(String),
}

impl TimeSpec {
    /// Interpret the argument of Apache's `%{...}t` (without a `begin:`/`end:` prefix).
    pub fn from_apache(arg: &str) -> TimeSpec {
        match arg {
            "sec" => TimeSpec::Epoch { per_second: 1 },
            "msec" => TimeSpec::Epoch { per_second: 1000 },
            "usec" => TimeSpec::Epoch {
                per_second: 1_000_000,
            },
            "msec_frac" => TimeSpec::Frac { digits: 3 },
            "usec_frac" => TimeSpec::Frac { digits: 6 },
            other => TimeSpec::Strftime(other.to_string()),
        }
    }

    /// A component is part of a time that other fields complete (a fraction, or an
    /// strftime format without a date such as `%z`).
    pub fn is_component(&self) -> bool {
        match self {
            TimeSpec::Frac { .. } => true,
            TimeSpec::Strftime(f) => !["%Y", "%y", "%F", "%D", "%s", "%c", "%x", "%G"]
                .iter()
                .any(|d| f.contains(d)),
            _ => false,
        }
    }
}

/// An instant with the UTC offset the log wrote it in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub unix: i64,
    /// Nanoseconds within the second.
    pub nanos: u32,
    /// The log's UTC offset in minutes, when the log wrote one.
    pub offset_minutes: Option<i16>,
}

impl Timestamp {
    /// Microseconds since the epoch (UTC).
    pub fn unix_micros(&self) -> i64 {
        self.unix
            .saturating_mul(1_000_000)
            .saturating_add(i64::from(self.nanos / 1000))
    }
}

impl fmt::Display for Timestamp {
    /// RFC 3339 in the log's own offset (`Z` when the log wrote none).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let off = i64::from(self.offset_minutes.unwrap_or(0));
        let local = self.unix + off * 60;
        let days = local.div_euclid(86_400);
        let secs = local.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        write!(
            f,
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            secs / 3600,
            secs / 60 % 60,
            secs % 60
        )?;
        if self.nanos != 0 {
            if self.nanos % 1_000_000 == 0 {
                write!(f, ".{:03}", self.nanos / 1_000_000)?;
            } else if self.nanos % 1000 == 0 {
                write!(f, ".{:06}", self.nanos / 1000)?;
            } else {
                write!(f, ".{:09}", self.nanos)?;
            }
        }
        match self.offset_minutes {
            None => f.write_str("Z"),
            Some(o) => {
                let sign = if o < 0 { '-' } else { '+' };
                let a = o.unsigned_abs();
                write!(f, "{sign}{:02}:{:02}", a / 60, a % 60)
            }
        }
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(m);
    let mp = if m > 2 { m - 3 } else { m + 9 };
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (inverse of [`days_from_civil`]).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

fn month(b: &[u8]) -> Option<u32> {
    Some(match b {
        b"Jan" => 1,
        b"Feb" => 2,
        b"Mar" => 3,
        b"Apr" => 4,
        b"May" => 5,
        b"Jun" => 6,
        b"Jul" => 7,
        b"Aug" => 8,
        b"Sep" => 9,
        b"Oct" => 10,
        b"Nov" => 11,
        b"Dec" => 12,
        _ => return None,
    })
}

fn num<const N: usize>(input: &[u8]) -> IResult<&[u8], u32> {
    map_res(take(N), |d: &[u8]| {
        if d.iter().all(u8::is_ascii_digit) {
            Ok(d.iter().fold(0u32, |a, b| a * 10 + u32::from(b - b'0')))
        } else {
            Err(())
        }
    })
    .parse(input)
}

fn offset(input: &[u8], colon: bool) -> IResult<&[u8], i16> {
    let (rest, sign) = one_of("+-").parse(input)?;
    let (rest, h) = num::<2>(rest)?;
    let (rest, _) = if colon {
        tag(&b":"[..]).parse(rest)?
    } else {
        (rest, &b""[..])
    };
    let (rest, m) = num::<2>(rest)?;
    let mins = i16::try_from(h * 60 + m).unwrap_or(0);
    Ok((rest, if sign == '-' { -mins } else { mins }))
}

#[allow(clippy::too_many_arguments)]
fn build(
    y: i64,
    mo: u32,
    d: u32,
    h: u32,
    mi: u32,
    s: u32,
    nanos: u32,
    off: Option<i16>,
) -> Option<Timestamp> {
    if !(1..=12).contains(&mo) || d == 0 || d > days_in_month(y, mo) || h > 23 || mi > 59 {
        return None;
    }
    // 60 is a leap second; some loggers write it.
    if s > 60 {
        return None;
    }
    let local = days_from_civil(y, mo, d) * 86_400
        + i64::from(h) * 3600
        + i64::from(mi) * 60
        + i64::from(s);
    Some(Timestamp {
        unix: local - i64::from(off.unwrap_or(0)) * 60,
        nanos,
        offset_minutes: off,
    })
}

/// `21/Nov/2026:18:07:40 -0330` (no brackets).
pub fn parse_clf(b: &[u8]) -> Option<Timestamp> {
    fn inner(i: &[u8]) -> IResult<&[u8], Option<Timestamp>> {
        let (i, d) = num::<2>(i)?;
        let (i, _) = tag(&b"/"[..]).parse(i)?;
        let (i, mon) = take(3usize).parse(i)?;
        let (i, _) = tag(&b"/"[..]).parse(i)?;
        let (i, y) = num::<4>(i)?;
        let (i, _) = tag(&b":"[..]).parse(i)?;
        let (i, h) = num::<2>(i)?;
        let (i, _) = tag(&b":"[..]).parse(i)?;
        let (i, mi) = num::<2>(i)?;
        let (i, _) = tag(&b":"[..]).parse(i)?;
        let (i, s) = num::<2>(i)?;
        let (i, _) = tag(&b" "[..]).parse(i)?;
        let (i, off) = offset(i, false)?;
        let ts = month(mon).and_then(|mo| build(i64::from(y), mo, d, h, mi, s, 0, Some(off)));
        Ok((i, ts))
    }
    match inner(b) {
        Ok(([], ts)) => ts,
        _ => None,
    }
}

/// `2026-11-21T18:08:24-03:30`, also with `Z` and a fraction.
pub fn parse_iso8601(b: &[u8]) -> Option<Timestamp> {
    fn frac(i: &[u8]) -> IResult<&[u8], u32> {
        let (i, _) = tag(&b"."[..]).parse(i)?;
        let (i, digits) = digit1(i)?;
        let mut nanos = 0u32;
        for (k, d) in digits.iter().take(9).enumerate() {
            nanos += u32::from(d - b'0') * 10u32.pow(8 - k as u32);
        }
        Ok((i, nanos))
    }
    fn inner(i: &[u8]) -> IResult<&[u8], Option<Timestamp>> {
        let (i, y) = num::<4>(i)?;
        let (i, _) = tag(&b"-"[..]).parse(i)?;
        let (i, mo) = num::<2>(i)?;
        let (i, _) = tag(&b"-"[..]).parse(i)?;
        let (i, d) = num::<2>(i)?;
        let (i, _) = one_of("T ").parse(i)?;
        let (i, h) = num::<2>(i)?;
        let (i, _) = tag(&b":"[..]).parse(i)?;
        let (i, mi) = num::<2>(i)?;
        let (i, _) = tag(&b":"[..]).parse(i)?;
        let (i, s) = num::<2>(i)?;
        let (i, nanos) = opt(frac).parse(i)?;
        let (i, off) = if let Some(rest) = i.strip_prefix(b"Z") {
            (rest, 0)
        } else {
            offset(i, true)?
        };
        let ts = build(i64::from(y), mo, d, h, mi, s, nanos.unwrap_or(0), Some(off));
        Ok((i, ts))
    }
    match inner(b) {
        Ok(([], ts)) => ts,
        _ => None,
    }
}

/// An integer count of `per_second` units since the epoch.
pub fn parse_epoch(b: &[u8], per_second: u32) -> Option<Timestamp> {
    if per_second == 0 || 1_000_000_000 % per_second != 0 {
        return None;
    }
    let v = parse_u64(b)?;
    let per = u64::from(per_second);
    let unix = i64::try_from(v / per).ok()?;
    let nanos = u32::try_from((v % per) * (1_000_000_000 / per)).ok()?;
    Some(Timestamp {
        unix,
        nanos,
        offset_minutes: None,
    })
}

/// `1795297104.439`.
pub fn parse_epoch_decimal(b: &[u8]) -> Option<Timestamp> {
    let (int, frac) = match memchr::memchr(b'.', b) {
        Some(p) => (b.get(..p)?, b.get(p + 1..)?),
        None => (b, &b""[..]),
    };
    let unix = i64::try_from(parse_u64(int)?).ok()?;
    Some(Timestamp {
        unix,
        nanos: parse_frac(frac)?,
        offset_minutes: None,
    })
}

/// What the value of `n` digits after a decimal point is multiplied by to give
/// nanoseconds, for `n` = 0 to 9.
pub(crate) const FRAC_SCALE: [u32; 10] = [
    1_000_000_000,
    100_000_000,
    10_000_000,
    1_000_000,
    100_000,
    10_000,
    1_000,
    100,
    10,
    1,
];

/// Digits after a decimal point, as nanoseconds (`439` → 439 000 000).
pub fn parse_frac(b: &[u8]) -> Option<u32> {
    let scale = *FRAC_SCALE.get(b.len())?;
    let mut v = 0u32;
    for &d in b {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(d - b'0');
    }
    Some(v * scale)
}

/// A non-empty run of ASCII digits as a number (no sign, no overflow).
pub fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 19 {
        return None;
    }
    let mut v = 0u64;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u64::from(c - b'0');
    }
    Some(v)
}

/// Remembers the last CLF time text so that repeated seconds cost a comparison.
#[derive(Debug, Default, Clone)]
pub struct TimeCache {
    key: [u8; 32],
    len: usize,
    value: Option<Timestamp>,
}

impl TimeCache {
    /// Parse `b` (CLF without brackets), answering repeats from the cache.
    pub fn clf(&mut self, b: &[u8]) -> Option<Timestamp> {
        if self.len == b.len() && self.key.get(..b.len()) == Some(b) {
            return self.value;
        }
        let value = parse_clf(b);
        if let Some(slot) = self.key.get_mut(..b.len()) {
            slot.copy_from_slice(b);
            self.len = b.len();
            self.value = value;
        }
        value
    }
}

/// Parse one time field by its spec. Components ([`TimeSpec::Frac`]) and strftime
/// forms are handled by the caller, which combines several fields.
pub fn parse_simple(spec: &TimeSpec, b: &[u8], cache: &mut TimeCache) -> Option<Timestamp> {
    match spec {
        TimeSpec::Clf { brackets: true } => {
            let inner = b.strip_prefix(b"[")?.strip_suffix(b"]")?;
            cache.clf(inner)
        }
        TimeSpec::Clf { brackets: false } => cache.clf(b),
        TimeSpec::Iso8601 => parse_iso8601(b),
        TimeSpec::Epoch { per_second } => parse_epoch(b, *per_second),
        TimeSpec::EpochDecimal => parse_epoch_decimal(b),
        TimeSpec::Frac { .. } | TimeSpec::Strftime(_) => None,
    }
}

/// Parse an strftime-formatted time (Apache `%{FMT}t`) into `parsed`, so that several
/// fields (`%{%d/%b/%Y %T}t` and `%{%z}t`) can build one instant.
pub fn parse_strftime_into(
    fmt_text: &str,
    b: &[u8],
    parsed: &mut chrono::format::Parsed,
) -> Option<()> {
    let s = std::str::from_utf8(b).ok()?;
    chrono::format::parse(parsed, s, chrono::format::StrftimeItems::new(fmt_text)).ok()
}

/// The instant that an accumulated strftime parse describes.
pub fn finish_strftime(parsed: &chrono::format::Parsed) -> Option<Timestamp> {
    let off = parsed.offset();
    let naive = parsed.to_naive_datetime_with_offset(0).ok()?;
    let utc = naive.and_utc();
    let off_secs = off.unwrap_or(0);
    Some(Timestamp {
        unix: utc.timestamp() - i64::from(off_secs),
        nanos: utc.timestamp_subsec_nanos(),
        offset_minutes: off.and_then(|o| i16::try_from(o / 60).ok()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_of_every_length() {
        assert_eq!(parse_frac(b""), Some(0));
        assert_eq!(parse_frac(b"5"), Some(500_000_000));
        assert_eq!(parse_frac(b"000439"), Some(439_000));
        assert_eq!(parse_frac(b"123456789"), Some(123_456_789));
        assert_eq!(parse_frac(b"999999999"), Some(999_999_999));
        assert_eq!(parse_frac(b"1234567890"), None);
        assert_eq!(parse_frac(b"12a"), None);
        assert_eq!(parse_frac(b"1 "), None);
        for n in 1..=9 {
            let digits = "7".repeat(n);
            let want = format!("{digits:0<9}").parse::<u32>().unwrap();
            assert_eq!(parse_frac(digits.as_bytes()), Some(want), "{digits}");
        }
    }

    #[test]
    fn clf_with_negative_half_hour_offset() {
        let t = parse_clf(b"21/Nov/2026:18:07:40 -0330").unwrap();
        assert_eq!(t.offset_minutes, Some(-210));
        assert_eq!(t.to_string(), "2026-11-21T18:07:40-03:30");
        // 18:07:40 at -03:30 is 21:37:40Z.
        let z = parse_iso8601(b"2026-11-21T21:37:40Z").unwrap();
        assert_eq!(t.unix, z.unix);
    }

    #[test]
    fn bad_dates_are_rejected() {
        assert!(parse_clf(b"31/Feb/2026:18:07:40 +0000").is_none());
        assert!(parse_clf(b"29/Feb/2023:18:07:40 +0000").is_none());
        assert!(parse_clf(b"29/Feb/2024:18:07:40 +0000").is_some());
        assert!(parse_clf(b"21/Foo/2026:18:07:40 +0000").is_none());
        assert!(parse_clf(b"21/Nov/2026:24:07:40 +0000").is_none());
        assert!(parse_clf(b"21/Nov/2026:18:07:40 +0000x").is_none());
        assert!(parse_clf(b"21/Nov/2026:18:07").is_none());
    }

    #[test]
    fn iso_and_epochs() {
        let t = parse_iso8601(b"2026-11-21T18:08:24-03:30").unwrap();
        assert_eq!(t.to_string(), "2026-11-21T18:08:24-03:30");
        let m = parse_epoch_decimal(b"1795297104.439").unwrap();
        assert_eq!(m.nanos, 439_000_000);
        assert_eq!(m.to_string(), "2026-11-21T21:38:24.439Z");
        assert_eq!(parse_epoch(b"1795297104439", 1000), Some(m));
        assert!(parse_epoch(b"17x", 1).is_none());
    }

    #[test]
    fn civil_round_trip() {
        for days in [-800_000i64, -1, 0, 1, 19_000, 20_413, 2_000_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn cache_answers_repeats_and_changes() {
        let mut c = TimeCache::default();
        let a = c.clf(b"21/Nov/2026:18:07:40 +0000");
        assert_eq!(a, c.clf(b"21/Nov/2026:18:07:40 +0000"));
        let b = c.clf(b"21/Nov/2026:18:07:41 +0000").unwrap();
        assert_eq!(b.unix, a.unwrap().unix + 1);
        assert!(c.clf(b"garbage").is_none());
    }

    #[test]
    fn strftime_fields_combine() {
        let mut p = chrono::format::Parsed::new();
        parse_strftime_into("%d/%b/%Y:%H:%M:%S", b"21/Nov/2026:18:07:40", &mut p).unwrap();
        parse_strftime_into("%z", b"-0330", &mut p).unwrap();
        let t = finish_strftime(&p).unwrap();
        assert_eq!(t.to_string(), "2026-11-21T18:07:40-03:30");
    }
}
