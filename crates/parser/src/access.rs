//! The access-log line parser: a compiled [`Format`] applied to one line, giving a
//! [`Record`] that borrows the line.

use std::borrow::Cow;

use crate::format::{Escaping, Field, Format, Item, Kind, Role};
use crate::time::{self, TimeCache, TimeSpec, Timestamp};
use crate::unescape::unescape;

/// Why a line is malformed. The names ([`Reason::as_str`]) are part of the JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Reason {
    /// Nothing but white space.
    Empty,
    /// Raw control bytes (NUL runs, binary garbage) that the server never writes.
    Binary,
    /// The line ends before the format does.
    Truncated,
    /// A quoted field is not closed.
    UnbalancedQuotes,
    /// More (or fewer) fields than the format has.
    FieldCount,
    /// A time field is not a valid time.
    BadTime,
    /// A numeric field is not a number.
    BadNumber,
    /// Literal text of the format does not match the line.
    Mismatch,
    /// Two records glued into one line: a line cut short with the next one appended (a
    /// writer killed mid-line, two writers without `O_APPEND`, a rotated file
    /// concatenated with its successor). A lenient field (`%u`, raw `%x`) swallowed the
    /// start of another record.
    Glued,
    /// Longer than the line cap (`--max-line-bytes`): only its first bytes were kept,
    /// the rest skipped up to the next newline.
    TooLong,
}

impl Reason {
    /// Every reason, in a stable order.
    pub const ALL: [Reason; 10] = [
        Reason::Empty,
        Reason::Binary,
        Reason::Truncated,
        Reason::UnbalancedQuotes,
        Reason::FieldCount,
        Reason::BadTime,
        Reason::BadNumber,
        Reason::Mismatch,
        Reason::Glued,
        Reason::TooLong,
    ];

    /// The stable name used in JSON, CSV and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Empty => "empty",
            Reason::Binary => "binary",
            Reason::Truncated => "truncated",
            Reason::UnbalancedQuotes => "unbalanced_quotes",
            Reason::FieldCount => "field_count",
            Reason::BadTime => "bad_time",
            Reason::BadNumber => "bad_number",
            Reason::Mismatch => "mismatch",
            Reason::Glued => "glued",
            Reason::TooLong => "too_long",
        }
    }

    /// Position in [`Reason::ALL`], for counting in arrays.
    pub fn index(self) -> usize {
        Reason::ALL.iter().position(|r| *r == self).unwrap_or(0)
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One parsed line: the raw value of each field, borrowed from the line.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    format: &'a Format,
    line: &'a [u8],
    spans: Vec<&'a [u8]>,
    time: Option<Timestamp>,
}

impl<'a> Record<'a> {
    /// An empty record for `format`, to be filled by [`LineParser::parse`] again and
    /// again without allocating.
    pub fn new(format: &'a Format) -> Record<'a> {
        Record {
            format,
            line: &[],
            spans: Vec::with_capacity(format.fields.len()),
            time: None,
        }
    }

    /// The format the record was parsed with.
    pub fn format(&self) -> &'a Format {
        self.format
    }

    /// The whole line the record was parsed from (without `\r`); empty before the
    /// first parse.
    pub fn line(&self) -> &'a [u8] {
        self.line
    }

    /// The raw bytes of field `idx` as they are in the line, `None` when absent (`-`).
    pub fn raw(&self, idx: usize) -> Option<&'a [u8]> {
        let v = *self.spans.get(idx)?;
        // nginx `escape=json` and `escape=none` write a variable it cannot find as ""
        // (not `-`), and cannot tell it from a value sent empty: both are absent.
        if v == b"-" || (v.is_empty() && empty_is_absent(self.format.escaping)) {
            None
        } else {
            Some(v)
        }
    }

    /// The raw bytes of the field with `role`.
    pub fn raw_role(&self, role: Role) -> Option<&'a [u8]> {
        self.raw(self.format.role(role)?)
    }

    /// The unescaped value of field `idx`; `None` when absent.
    pub fn value(&self, idx: usize) -> Option<Cow<'a, [u8]>> {
        let raw = self.raw(idx)?;
        let field = self.format.fields.get(idx)?;
        if field.empty_as_quotes && raw == b"\"\"" {
            return Some(Cow::Borrowed(&[]));
        }
        Some(match field.kind {
            Kind::Text => unescape(raw, self.format.escaping),
            _ => Cow::Borrowed(raw),
        })
    }

    /// The unescaped value of the field with `role`.
    pub fn role(&self, role: Role) -> Option<Cow<'a, [u8]>> {
        self.value(self.format.role(role)?)
    }

    /// The request time (the first full time field, completed by fraction fields).
    pub fn time(&self) -> Option<Timestamp> {
        self.time
    }

    /// Field `idx` as an integer.
    pub fn int(&self, idx: usize) -> Option<u64> {
        if self.spans.get(idx).copied() == Some(&b"-"[..])
            && self.format.fields.get(idx).is_some_and(|f| f.dash_is_zero)
        {
            return Some(0);
        }
        time::parse_u64(self.raw(idx)?)
    }

    /// The duration in microseconds, from whichever duration field the format has.
    pub fn duration_us(&self) -> Option<u64> {
        let idx = self.format.role(Role::Duration)?;
        let field = self.format.fields.get(idx)?;
        let raw = self.raw(idx)?;
        let per = field.micros_per_unit.unwrap_or(1);
        match field.kind {
            Kind::Decimal => {
                let (int, frac) = match memchr::memchr(b'.', raw) {
                    Some(p) => (raw.get(..p)?, raw.get(p + 1..)?),
                    None => (raw, &b""[..]),
                };
                let whole = if int.is_empty() {
                    0
                } else {
                    time::parse_u64(int)?
                };
                let nanos = if frac.is_empty() {
                    0
                } else {
                    time::parse_frac(frac)?
                };
                Some(
                    whole
                        .saturating_mul(per)
                        .saturating_add(u64::from(nanos) * per / 1_000_000_000),
                )
            }
            _ => time::parse_u64(raw).map(|v| v.saturating_mul(per)),
        }
    }

    /// Method, target and protocol: from their own fields when the format has them,
    /// else split from the request line (`%r`, `$request`).
    pub fn request_parts(&self) -> RequestParts<'a> {
        let mut parts = RequestParts::default();
        if let Some(req) = self.role(Role::Request) {
            if let Some((m, t, v)) = split_request(&req) {
                parts.method = Some(cow_sub(&req, m));
                parts.target = Some(cow_sub(&req, t));
                parts.http_version = v.map(|v| cow_sub(&req, v));
            }
        }
        if let Some(m) = self.role(Role::Method) {
            parts.method = Some(m);
        }
        if let Some(v) = self.role(Role::HttpVersion) {
            parts.http_version = Some(v);
        }
        if let Some(t) = self.role(Role::Target) {
            parts.target = Some(t);
        } else if let Some(p) = self.role(Role::Path) {
            let mut t = p.into_owned();
            if let Some(q) = self.role(Role::Query) {
                if !q.is_empty() && q.first() != Some(&b'?') {
                    t.push(b'?');
                }
                t.extend_from_slice(&q);
            }
            parts.target = Some(Cow::Owned(t));
        }
        parts
    }
}

fn cow_sub<'a>(whole: &Cow<'a, [u8]>, range: std::ops::Range<usize>) -> Cow<'a, [u8]> {
    match whole {
        Cow::Borrowed(b) => Cow::Borrowed(b.get(range).unwrap_or(&[])),
        Cow::Owned(v) => Cow::Owned(v.get(range).unwrap_or(&[]).to_vec()),
    }
}

/// Parts of a request line.
#[derive(Debug, Default, Clone)]
pub struct RequestParts<'a> {
    /// `GET`.
    pub method: Option<Cow<'a, [u8]>>,
    /// `/index.html?x=1`.
    pub target: Option<Cow<'a, [u8]>>,
    /// `HTTP/1.1`; absent for HTTP/0.9 lines.
    pub http_version: Option<Cow<'a, [u8]>>,
}

type Span = std::ops::Range<usize>;

/// Split `GET /a b HTTP/1.1` into method, target (which may hold spaces) and version.
/// Lines whose first word is not a plausible method (garbage, TLS bytes sent to a
/// plain port) are not split.
pub fn split_request(req: &[u8]) -> Option<(Span, Span, Option<Span>)> {
    let sp = memchr::memchr(b' ', req)?;
    let method = req.get(..sp)?;
    // A method is an RFC 9110 token (`get` is legal, if odd); escaped bytes (`\x16`
    // of a TLS hello sent to a plain port) are not.
    let tchar = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
    if method.is_empty() || method.len() > 32 || !method.iter().all(tchar) {
        return None;
    }
    let rest = req.get(sp + 1..)?;
    if let Some(last) = memchr::memrchr(b' ', rest) {
        let version = rest.get(last + 1..)?;
        if version.starts_with(b"HTTP/") {
            let t0 = sp + 1;
            return Some((0..sp, t0..t0 + last, Some(t0 + last + 1..req.len())));
        }
    }
    Some((0..sp, sp + 1..req.len(), None))
}

/// A retry point for a field that may hold raw delimiters.
#[derive(Debug, Clone, Copy)]
struct Choice {
    item: usize,
    start: usize,
    resume: usize,
    spans: usize,
}

/// Applies a [`Format`] to lines. Holds the per-thread scratch state (time cache,
/// backtracking stack); make one per thread.
#[derive(Debug)]
pub struct LineParser<'f> {
    format: &'f Format,
    cache: TimeCache,
    choices: Vec<Choice>,
    /// For each item index, how a field there ends (see [`End`]); `None` for literals.
    ends: Vec<Option<End<'f>>>,
    has_strftime: bool,
    /// Lenient fields (free text, raw values) and the literal after each: where a
    /// glued line can hide (see [`LineParser::glued`]).
    lenient: Vec<(usize, &'f [u8])>,
    /// Whether the last match took a field past its first delimiter (backtracked):
    /// only then can a field hold its own delimiter, and a glued line hide.
    retried: bool,
}

/// At most this many places inside one lenient field are tried as the start of a
/// glued record ([`LineParser::glued`]), from its end back: the appended record's
/// first fields are a few dozen bytes; a field of hostile length (a user name is
/// whatever a client sends) costs no more than this many matches.
const GLUE_TRIES: usize = 512;

/// How many retries a line may take before it is called malformed.
const BACKTRACK_BUDGET: usize = 64;

impl<'f> LineParser<'f> {
    /// A parser for `format`.
    pub fn new(format: &'f Format) -> LineParser<'f> {
        let next_lit: Vec<Option<&'f [u8]>> = (0..format.items.len())
            .map(|i| match format.items.get(i + 1) {
                Some(Item::Lit(l)) => Some(l.as_slice()),
                _ => None,
            })
            .collect();
        let has_strftime = format
            .fields
            .iter()
            .any(|f| matches!(f.kind, Kind::Time(TimeSpec::Strftime(_))));
        // Free text and raw values; a host before its port only splits at a later
        // colon, it does not swallow records.
        let lenient = format
            .items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| {
                let Item::Field(f) = item else { return None };
                let field = format.fields.get(*f)?;
                let lit = next_lit.get(i).copied().flatten()?;
                let token_only = field.kind == Kind::Token && !field.raw_ok;
                (!token_only && !lit.is_empty() && retryable(field, Some(lit))).then_some((*f, lit))
            })
            .collect();
        let ends = format
            .items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let Item::Field(f) = item else { return None };
                let field = format.fields.get(*f)?;
                Some(End::of(
                    field,
                    format.escaping,
                    next_lit.get(i).copied().flatten(),
                ))
            })
            .collect();
        LineParser {
            format,
            cache: TimeCache::default(),
            choices: Vec::new(),
            ends,
            has_strftime,
            lenient,
            retried: false,
        }
    }

    /// The format this parser applies.
    pub fn format(&self) -> &'f Format {
        self.format
    }

    /// Parse `line` (without its `\n`; a trailing `\r` is ignored) into `rec`.
    pub fn parse<'a>(&mut self, line: &'a [u8], rec: &mut Record<'a>) -> Result<(), Reason>
    where
        'f: 'a,
    {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        rec.line = line;
        rec.spans.clear();
        rec.time = None;
        // Only a line that starts with white space can be blank: no scan otherwise.
        if line.first().is_none_or(u8::is_ascii_whitespace)
            && line.iter().all(u8::is_ascii_whitespace)
        {
            return Err(Reason::Empty);
        }
        self.retried = false;
        match self.match_line(line, rec) {
            Ok(frac) => {
                if self.retried && self.glued(line, rec) {
                    return Err(Reason::Glued);
                }
                self.finish_time(rec, frac)
            }
            Err(first) => Err(classify(line, first, self.format)),
        }
    }

    /// Whether a lenient field of a matched line (one that may hold its own delimiter:
    /// `%u`, raw `%x`) swallowed the start of another record: the line from some point
    /// inside that field on is a whole record by itself. A user name with a space or a
    /// raw quote in a cipher passes; `1.2.3.4 - - [23/1.2.3.4 - - [23/Oct/...] ...` (a
    /// line cut inside its time, the next one appended) does not.
    #[cold]
    #[inline(never)]
    fn glued<'a>(&mut self, line: &'a [u8], rec: &Record<'a>) -> bool
    where
        'f: 'a,
    {
        let format = self.format;
        let base = line.as_ptr() as usize;
        let need = start_need(rec);
        if matches!(need, StartNeed::Never) {
            return false;
        }
        for k in 0..self.lenient.len() {
            let Some(&(f, lit)) = self.lenient.get(k) else {
                break;
            };
            let Some(value) = rec.raw(f) else { continue };
            // Only a field that took in its own delimiter can hold another record.
            let Some(&first) = lit.first() else { continue };
            let holds = memchr::memchr_iter(first, value)
                .any(|p| value.get(p..).is_some_and(|t| has_prefix(t, lit)));
            if !holds {
                continue;
            }
            let start = (value.as_ptr() as usize).saturating_sub(base);
            // The next record may start anywhere: a line is cut at any byte, mid-word
            // as often as not (`...+htt50.244.111.173 - - [...`), so every byte that
            // can start a record is tried, up to GLUE_TRIES of them, from the field's
            // end back (the field ends with the appended record's first fields, after
            // the debris of the cut one, however long that is).
            let mut tries = 0;
            for s in (start + 1..start + value.len()).rev() {
                let starts = line
                    .get(s)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b"[:".contains(b));
                if !starts {
                    continue;
                }
                let Some(rest) = line.get(s..) else { continue };
                // A place whose first token is not of the line's first field's kind
                // starts no record that counts: skipped without a match.
                if let StartNeed::Class {
                    class,
                    end: Some(end),
                    ..
                } = need
                {
                    let token = rest.get(..memchr::memchr(end, rest).unwrap_or(rest.len()));
                    if start_class(token) != class {
                        continue;
                    }
                }
                tries += 1;
                if tries > GLUE_TRIES {
                    break;
                }
                let mut scratch = Record::new(format);
                if self.match_line(rest, &mut scratch).is_ok() && same_start(need, &scratch) {
                    return true;
                }
            }
        }
        false
    }

    /// Match the items against the line, backtracking over raw-capable fields.
    /// Returns the fraction-of-second nanos seen (for `%{msec_frac}t`).
    fn match_line<'a>(&mut self, line: &'a [u8], rec: &mut Record<'a>) -> Result<u32, Reason>
    where
        'f: 'a,
    {
        let format = self.format;
        let items = &format.items;
        self.choices.clear();
        let mut first_err: Option<Reason> = None;
        let mut budget = BACKTRACK_BUDGET;
        let mut pos = 0usize;
        let mut i = 0usize;
        let mut frac = 0u32;
        // `resume` is set when retrying a field from a later delimiter.
        let mut resume: Option<usize> = None;
        // Index (in `rec.spans`) of the field the record's time came from.
        let mut time_span = usize::MAX;
        loop {
            let step: Result<(), Reason> = match items.get(i) {
                None => {
                    if pos == line.len() {
                        return Ok(frac);
                    }
                    Err(Reason::FieldCount)
                }
                Some(Item::Lit(lit)) => {
                    let rest = line.get(pos..).unwrap_or(&[]);
                    if has_prefix(rest, lit) {
                        pos += lit.len();
                        i += 1;
                        Ok(())
                    } else if lit.starts_with(rest) {
                        Err(Reason::Truncated)
                    } else {
                        Err(Reason::Mismatch)
                    }
                }
                Some(Item::Field(f)) => {
                    let field = &format.fields[*f];
                    let Some(Some(how)) = self.ends.get(i) else {
                        return Err(first_err.unwrap_or(Reason::Mismatch));
                    };
                    let from = resume.take().unwrap_or(pos);
                    match how.find(line, pos, from) {
                        None => Err(if from > pos || !can_start(field, line, pos) {
                            Reason::Mismatch
                        } else {
                            Reason::Truncated
                        }),
                        Some(end) => {
                            if how.retry {
                                self.choices.push(Choice {
                                    item: i,
                                    start: pos,
                                    resume: end + 1,
                                    spans: rec.spans.len(),
                                });
                            }
                            let value = line.get(pos..end).unwrap_or(&[]);
                            let checked = if value.is_empty() && how.dash_token {
                                // Servers write `-` for a missing token, never nothing: an
                                // empty one at the end is a line cut short.
                                Err(if end == line.len() {
                                    Reason::Truncated
                                } else {
                                    Reason::Mismatch
                                })
                            } else {
                                Self::check(&mut self.cache, field, value, &mut frac)
                            };
                            match checked {
                                Ok(ts) => {
                                    if let (Some(ts), None) = (ts, rec.time) {
                                        rec.time = Some(ts);
                                        time_span = rec.spans.len();
                                    }
                                    rec.spans.push(value);
                                    pos = end;
                                    i += 1;
                                    Ok(())
                                }
                                Err(e) => Err(e),
                            }
                        }
                    }
                }
            };
            if let Err(e) = step {
                first_err.get_or_insert(e);
                let Some(c) = self.choices.pop() else {
                    return Err(first_err.unwrap_or(e));
                };
                if budget == 0 {
                    return Err(first_err.unwrap_or(e));
                }
                budget -= 1;
                rec.spans.truncate(c.spans);
                if time_span >= c.spans {
                    rec.time = None;
                    time_span = usize::MAX;
                }
                i = c.item;
                pos = c.start;
                resume = Some(c.resume);
                self.retried = true;
            }
        }
    }

    /// Check a field's value; a full time field also yields its instant.
    fn check(
        cache: &mut TimeCache,
        field: &Field,
        v: &[u8],
        frac: &mut u32,
    ) -> Result<Option<Timestamp>, Reason> {
        match &field.kind {
            Kind::Text => Ok(None),
            Kind::Token => {
                if token_bytes(v) {
                    Ok(None)
                } else if v.contains(&b' ') {
                    Err(Reason::FieldCount)
                } else {
                    Err(Reason::Binary)
                }
            }
            Kind::Int => {
                if v == b"-" || (!v.is_empty() && v.len() <= 20 && v.iter().all(u8::is_ascii_digit))
                {
                    Ok(None)
                } else if v.contains(&b' ') {
                    Err(Reason::FieldCount)
                } else {
                    Err(Reason::BadNumber)
                }
            }
            Kind::Decimal => {
                let dots = v.iter().filter(|&&b| b == b'.').count();
                if v == b"-"
                    || (!v.is_empty()
                        && dots <= 1
                        && v.iter().all(|b| b.is_ascii_digit() || *b == b'.'))
                {
                    Ok(None)
                } else if v.contains(&b' ') {
                    Err(Reason::FieldCount)
                } else {
                    Err(Reason::BadNumber)
                }
            }
            Kind::Time(spec) => match spec {
                TimeSpec::Frac { digits } => {
                    if v.len() == usize::from(*digits) {
                        *frac = time::parse_frac(v).ok_or(Reason::BadTime)?;
                        Ok(None)
                    } else {
                        Err(Reason::BadTime)
                    }
                }
                TimeSpec::Strftime(_) => Ok(None),
                simple => {
                    if v == b"-" {
                        return Ok(None);
                    }
                    let ts = time::parse_simple(simple, v, cache).ok_or(Reason::BadTime)?;
                    Ok((field.role == Some(Role::Time)).then_some(ts))
                }
            },
        }
    }

    fn finish_time(&self, rec: &mut Record<'_>, frac: u32) -> Result<(), Reason> {
        if self.has_strftime {
            let mut parsed = chrono::format::Parsed::new();
            for (idx, field) in self.format.fields.iter().enumerate() {
                if let Kind::Time(TimeSpec::Strftime(fmt)) = &field.kind {
                    let raw = rec.spans.get(idx).copied().unwrap_or(&[]);
                    if raw == b"-" {
                        continue;
                    }
                    time::parse_strftime_into(fmt, raw, &mut parsed).ok_or(Reason::BadTime)?;
                }
            }
            if rec.time.is_none() {
                rec.time = time::finish_strftime(&parsed);
                if rec.time.is_none() {
                    return Err(Reason::BadTime);
                }
            }
        }
        if frac != 0 {
            if let Some(t) = rec.time.as_mut() {
                if t.nanos == 0 {
                    t.nanos = frac;
                }
            }
        }
        Ok(())
    }
}

/// How the value of one field of a format ends, worked out once per format from the
/// field and the literal after it (what [`find_end`] decides per line otherwise).
#[derive(Debug, Clone, Copy)]
struct End<'f> {
    rule: EndRule<'f>,
    /// Whether the field may end at a later delimiter ([`retryable`]).
    retry: bool,
    /// An empty value is a mismatch (a token, which servers write `-` when missing,
    /// but for nginx `escape=json` and `escape=none`, which write nothing).
    dash_token: bool,
}

#[derive(Debug, Clone, Copy)]
enum EndRule<'f> {
    /// Any other field: [`find_end`] decides.
    General {
        field: &'f Field,
        escaping: Escaping,
        next: Option<&'f [u8]>,
    },
    /// Followed by a literal whose first byte ends it (the common case: ` `, `"`).
    FirstByte(u8),
}

impl<'f> End<'f> {
    fn of(field: &'f Field, escaping: Escaping, next: Option<&'f [u8]>) -> End<'f> {
        let quoted_text =
            field.kind == Kind::Text && matches!(escaping, Escaping::Apache | Escaping::NginxJson);
        let bracketed = matches!(field.kind, Kind::Time(TimeSpec::Clf { brackets: true }));
        // What `find_end` does before its plain `memchr` of the literal's first byte.
        let special = |lit: &[u8]| {
            bracketed
                || field.upstream_list
                || (lit.first() == Some(&b'"') && quoted_text)
                || (lit.len() > 1 && (field.raw_ok || field.kind == Kind::Text))
        };
        let rule = match next {
            Some(lit) if !special(lit) => match lit.first() {
                Some(&b) => EndRule::FirstByte(b),
                None => EndRule::General {
                    field,
                    escaping,
                    next,
                },
            },
            _ => EndRule::General {
                field,
                escaping,
                next,
            },
        };
        End {
            rule,
            retry: retryable(field, next),
            dash_token: field.kind == Kind::Token && !empty_is_absent(escaping),
        }
    }

    /// [`find_end`] for this field.
    #[inline]
    fn find(&self, line: &[u8], start: usize, from: usize) -> Option<usize> {
        match self.rule {
            EndRule::FirstByte(b) => find_byte(b, line.get(from..)?).map(|p| from + p),
            EndRule::General {
                field,
                escaping,
                next,
            } => find_end(field, escaping, line, start, from, next),
        }
    }
}

/// Where the value of `field` that starts at `start` ends, looking for delimiters from
/// `from` on (later than `start` when retrying).
fn find_end(
    field: &Field,
    escaping: Escaping,
    line: &[u8],
    start: usize,
    from: usize,
    next: Option<&[u8]>,
) -> Option<usize> {
    let Some(lit) = next else {
        // The last item of the format (or followed by another field, which only
        // self-delimiting fields and numbers may be).
        if let Kind::Time(TimeSpec::Clf { brackets: true }) = field.kind {
            return bracket_end(line, start, from);
        }
        if field.kind == Kind::Int {
            if from > start {
                return None;
            }
            let rest = line.get(start..)?;
            let n = rest.iter().take_while(|b| b.is_ascii_digit()).count();
            let n = if n == 0 && rest.first() == Some(&b'-') {
                1
            } else {
                n
            };
            return Some(start + n);
        }
        return if from > start { None } else { Some(line.len()) };
    };
    if let Kind::Time(TimeSpec::Clf { brackets: true }) = field.kind {
        return bracket_end(line, start, from);
    }
    let first = *lit.first()?;
    let hay = line.get(from..)?;
    if field.upstream_list {
        return upstream_list_end(line, start, from, lit);
    }
    if first == b'"'
        && field.kind == Kind::Text
        && matches!(escaping, Escaping::Apache | Escaping::NginxJson)
    {
        // Skip quotes escaped as \" (an odd run of backslashes before them).
        return crate::unescape::unescaped_quote(line, start, from);
    }
    if lit.len() > 1 && (field.raw_ok || field.kind == Kind::Text) {
        // Free text may hold the literal's first byte (a user name with a space before
        // ` [`): the value ends where the whole literal follows.
        let mut off = 0;
        while let Some(p) = memchr::memchr(first, hay.get(off..)?) {
            if has_prefix(hay.get(off + p..)?, lit) {
                return Some(from + off + p);
            }
            off += p + 1;
        }
        return None;
    }
    memchr::memchr(first, hay).map(|p| from + p)
}

/// Every byte 0x01 and every byte 0x80, for the byte tests of [`token_bytes`] and
/// [`find_byte`] on 64-bit words.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether every byte of `v` may stand in a token: above space and not DEL (bytes of
/// UTF-8 text above 0x7f may). Eight bytes at a time: a word has a byte below 0x21
/// when `(w - 0x21…21) & !w & 0x80…80` is not zero, and a DEL when `w ^ 0x7f…7f` has a
/// zero byte (both exact as yes/no answers for bytes below 0x80, and a byte at or
/// above 0x80 sets neither); the scalar rule is kept for the tail.
#[inline]
fn token_bytes(v: &[u8]) -> bool {
    let mut words = v.chunks_exact(8);
    for chunk in words.by_ref() {
        let mut b = [0u8; 8];
        b.copy_from_slice(chunk);
        let w = u64::from_le_bytes(b);
        let below = w.wrapping_sub(ONES * 0x21) & !w & HIGH;
        let d = w ^ (ONES * 0x7f);
        let del = d.wrapping_sub(ONES) & !d & HIGH;
        if below | del != 0 {
            return false;
        }
    }
    words.remainder().iter().all(|&b| b > b' ' && b != 0x7f)
}

/// Where `b` first is in `hay`. Most fields of a log line are short (an address, a
/// status, a size, a protocol): the first 16 bytes are looked at as two words (the
/// zero-byte test of [`token_bytes`] on `word ^ b…b`, whose lowest set bit is exact),
/// which costs less than a `memchr` call; longer fields go on with `memchr`.
#[inline]
fn find_byte(b: u8, hay: &[u8]) -> Option<usize> {
    if hay.len() < 16 {
        return hay.iter().position(|&c| c == b);
    }
    for (k, chunk) in hay.chunks_exact(8).take(2).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w) ^ (ONES * u64::from(b));
        let hit = x.wrapping_sub(ONES) & !x & HIGH;
        if hit != 0 {
            return Some(k * 8 + (hit.trailing_zeros() / 8) as usize);
        }
    }
    memchr::memchr(b, hay.get(16..)?).map(|p| 16 + p)
}

/// `hay.starts_with(lit)` for the short literals of log formats, without a call to
/// `memcmp` (literals are one to three bytes; the call costs more than the compare).
#[inline]
fn has_prefix(hay: &[u8], lit: &[u8]) -> bool {
    hay.len() >= lit.len() && hay.iter().zip(lit).all(|(a, b)| a == b)
}

/// Whether a record found inside a line starts like the line's own record: a literal
/// start (`{"time":` of a JSON format) or a time field is enough; otherwise the first
/// field (the client) must be of the same kind in both: an address (IPv4, IPv6,
/// bracketed IPv6) or a host name. `a "quoted" name` inside a raw value is not a record of a line that
/// starts with `192.0.2.7`.
/// `need` is the line's [`start_need`].
fn same_start(need: StartNeed, inner: &Record<'_>) -> bool {
    match need {
        StartNeed::Any => true,
        StartNeed::Never => false,
        StartNeed::Class { class, field, .. } => {
            class == start_class(inner.spans.get(field).copied())
        }
    }
}

/// What a record found inside a line must start with ([`same_start`]).
#[derive(Clone, Copy)]
enum StartNeed {
    /// Anything: the format starts with a literal or a time.
    Any,
    /// Its first field (`field`) of this [`start_class`]; `end`: the byte that ends
    /// that field (the first of the literal after it, if one follows).
    Class {
        class: u8,
        field: usize,
        end: Option<u8>,
    },
    /// Nothing: the line's own first field is of no known kind.
    Never,
}

fn start_need(line: &Record<'_>) -> StartNeed {
    let format = line.format;
    let Some(Item::Field(first)) = format.items.first() else {
        return StartNeed::Any;
    };
    if matches!(
        format.fields.get(*first).map(|f| &f.kind),
        Some(Kind::Time(_))
    ) {
        return StartNeed::Any;
    }
    match start_class(line.spans.get(*first).copied()) {
        0 => StartNeed::Never,
        class => StartNeed::Class {
            class,
            field: *first,
            end: match format.items.get(1) {
                Some(Item::Lit(l)) => l.first().copied(),
                _ => None,
            },
        },
    }
}

/// The kind of a record's first field: 1 an address (IPv4, IPv6, bracketed IPv6), 4 a
/// host name, 0 anything else.
fn start_class(v: Option<&[u8]>) -> u8 {
    let Some(text) = v.and_then(|v| std::str::from_utf8(v).ok()) else {
        return 0;
    };
    let bare = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    if bare.parse::<std::net::IpAddr>().is_ok() {
        1
    } else if text.bytes().any(|b| b.is_ascii_alphabetic())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && text.contains('.')
    {
        4
    } else {
        0
    }
}

/// Whether a field may end at a later delimiter than the first one: raw-capable
/// fields, unquoted free text (an Apache/nginx user name may hold spaces and ` [`,
/// which neither server escapes), and a token before a `:` (a host before its port:
/// `%v:%p` or `$host:$server_port` with an IPv6 host, `2001:db8::1:443`, ends at the
/// colon after which the rest of the line fits, which is the last one of the pair).
fn retryable(field: &Field, next: Option<&[u8]>) -> bool {
    match next {
        None => false,
        Some(lit) => {
            field.raw_ok
                || (field.kind == Kind::Text && lit.first() != Some(&b'"'))
                || (field.kind == Kind::Token && lit.first() == Some(&b':'))
        }
    }
}

/// Whether nginx writes a variable it cannot find as nothing (`escape=json`,
/// `escape=none`) rather than `-`.
fn empty_is_absent(escaping: Escaping) -> bool {
    matches!(escaping, Escaping::NginxJson | Escaping::None)
}

/// Where an nginx upstream list that starts at `start` ends: at the first `lit`
/// (looked for from `from` on) that does not begin with one of the list's own spaces,
/// the one after a comma (`0.001, 0.002`) and those around a colon (`502 : 200`).
fn upstream_list_end(line: &[u8], start: usize, from: usize, lit: &[u8]) -> Option<usize> {
    let first = *lit.first()?;
    let mut at = from;
    while let Some(p) = memchr::memchr(first, line.get(at..)?) {
        let q = at + p;
        let rest = line.get(q..)?;
        if first == b' ' && q > start {
            if line.get(q - 1) == Some(&b',') {
                at = q + 1;
                continue;
            }
            if rest.starts_with(b" : ") {
                at = q + 3;
                continue;
            }
        }
        if has_prefix(rest, lit) {
            return Some(q);
        }
        at = q + 1;
    }
    None
}

/// Whether a field can start at `pos` (a bracketed time needs its `[`).
fn can_start(field: &Field, line: &[u8], pos: usize) -> bool {
    match field.kind {
        Kind::Time(TimeSpec::Clf { brackets: true }) => {
            pos >= line.len() || line.get(pos) == Some(&b'[')
        }
        _ => true,
    }
}

fn bracket_end(line: &[u8], start: usize, from: usize) -> Option<usize> {
    if from > start || line.get(start) != Some(&b'[') {
        return None;
    }
    memchr::memchr(b']', line.get(start..)?).map(|p| start + p + 1)
}

fn classify(line: &[u8], first: Reason, format: &Format) -> Reason {
    if format.escaping != Escaping::None && line.iter().any(|&b| b < 0x20 && b != b'\t') {
        return Reason::Binary;
    }
    if matches!(
        first,
        Reason::Truncated | Reason::Mismatch | Reason::FieldCount
    ) {
        let quotes_in_format: usize = format
            .items
            .iter()
            .map(|it| match it {
                Item::Lit(l) => l.iter().filter(|&&b| b == b'"').count(),
                Item::Field(_) => 0,
            })
            .sum();
        if quotes_in_format > 0 && unescaped_quotes(line, format.escaping) % 2 == 1 {
            return Reason::UnbalancedQuotes;
        }
    }
    first
}

fn unescaped_quotes(line: &[u8], escaping: Escaping) -> usize {
    let mut n = 0;
    let mut escaped = false;
    for &b in line {
        if escaped {
            escaped = false;
        } else if b == b'\\' && matches!(escaping, Escaping::Apache | Escaping::NginxJson) {
            escaped = true;
        } else if b == b'"' {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod token_tests {
    use super::{find_byte, token_bytes};
    use proptest::prelude::*;

    proptest! {
        /// The word-at-a-time check says what the byte-by-byte rule says, for any
        /// bytes (all 256 values, every length and alignment of the tail).
        #[test]
        fn token_bytes_is_the_byte_rule(v in proptest::collection::vec(any::<u8>(), 0..40)) {
            prop_assert_eq!(token_bytes(&v), v.iter().all(|&b| b > b' ' && b != 0x7f));
        }

        /// The two-word search finds what a byte-by-byte search finds, at every place
        /// of the first 16 bytes and beyond (bytes above 0x80 next to the one looked for).
        #[test]
        fn find_byte_is_position(
            v in proptest::collection::vec(proptest::sample::select(vec![b' ', b'"', b'a', 0x80, 0xa0]), 0..40),
            b in proptest::sample::select(vec![b' ', b'"', 0xa0]),
        ) {
            prop_assert_eq!(find_byte(b, &v), v.iter().position(|&c| c == b));
        }
    }

    #[test]
    fn token_bytes_catches_each_bad_byte_at_each_place() {
        for len in 1..20 {
            for at in 0..len {
                for bad in (0u8..=0x20).chain([0x7f]) {
                    let mut v = vec![b'a'; len];
                    v[at] = bad;
                    assert!(!token_bytes(&v), "{bad:#x} at {at} of {len}");
                }
                for good in (0x21u8..=0xff).filter(|&b| b != 0x7f) {
                    let mut v = vec![b'a'; len];
                    v[at] = good;
                    assert!(token_bytes(&v), "{good:#x} at {at} of {len}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(format: &str, line: &[u8]) -> Result<Vec<Option<Vec<u8>>>, Reason> {
        let f = Format::compile(format).unwrap();
        let mut p = LineParser::new(&f);
        let mut rec = Record::new(&f);
        p.parse(line, &mut rec)?;
        Ok((0..f.fields.len())
            .map(|i| rec.value(i).map(|v| v.into_owned()))
            .collect())
    }

    const OK: &[u8] = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 200 5 "-" "ua" TLSv1.3 TLS_AES_128_GCM_SHA256"#;

    #[test]
    fn line_cut_after_the_protocol_is_truncated_not_an_empty_cipher() {
        let cut = br#"192.0.2.7 - - [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 200 5 "-" "ua" TLSv1.3 "#;
        assert_eq!(parse("combinedssl", cut), Err(Reason::Truncated));
    }

    #[test]
    fn crlf_is_not_malformed_and_blank_is_empty() {
        let mut crlf = OK.to_vec();
        crlf.extend_from_slice(b"\r");
        assert!(parse("combinedssl", &crlf).is_ok());
        assert_eq!(parse("combinedssl", b"  "), Err(Reason::Empty));
    }

    #[test]
    fn prose_is_a_mismatch_not_a_truncation() {
        assert_eq!(
            parse("combinedssl", b"not a log line at all"),
            Err(Reason::Mismatch)
        );
    }

    /// nginx `escape=none` writes a variable it cannot find (the TLS pair of a
    /// plain-HTTP request, a missing header, no user) as nothing, quoted or not: those
    /// are absent, not malformed (lines as nginx 1.22.1 wrote them).
    #[test]
    fn escape_none_writes_missing_variables_as_nothing() {
        let quoted = r#"log_format rawnone escape=none '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$ssl_protocol" "$ssl_cipher"';"#;
        let bare = r#"log_format rawnone2 escape=none '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol $ssl_cipher';"#;
        // (user, referer, User-Agent, protocol, cipher)
        let tls = |v: &[Option<Vec<u8>>]| {
            (
                v[1].clone(),
                v[6].clone(),
                v[7].clone(),
                v[8].clone(),
                v[9].clone(),
            )
        };
        for (fmt, line, want) in [
            (
                quoted,
                &br#"127.0.0.1 -  [28/Nov/2026:03:21:06 +0000] "GET / HTTP/1.1" 200 6 "" "plain-ua" "" """#[..],
                (None, None, Some(b"plain-ua".to_vec()), None, None),
            ),
            (
                bare,
                br#"127.0.0.1 -  [28/Nov/2026:03:21:06 +0000] "GET / HTTP/1.1" 200 6 "" "plain-ua"  "#,
                (None, None, Some(b"plain-ua".to_vec()), None, None),
            ),
            (
                bare,
                br#"127.0.0.1 -  [28/Nov/2026:03:21:06 +0000] "GET / HTTP/1.1" 200 6 "" "curl-a" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256"#,
                (
                    None,
                    None,
                    Some(b"curl-a".to_vec()),
                    Some(b"TLSv1.2".to_vec()),
                    Some(b"ECDHE-RSA-AES128-GCM-SHA256".to_vec()),
                ),
            ),
        ] {
            let v = parse(fmt, line).unwrap_or_else(|e| panic!("{e:?}: {}", line.escape_ascii()));
            assert_eq!(tls(&v), want, "{}", line.escape_ascii());
        }
        // With the default escaping nginx writes `-`: nothing there is malformed.
        let default =
            r#"log_format d '$remote_addr "$http_user_agent" $ssl_protocol $ssl_cipher';"#;
        assert_eq!(
            parse(default, br#"127.0.0.1 "ua"  "#),
            Err(Reason::Mismatch)
        );
        // The last token, after an upstream list nginx did not fill.
        let none_rt = r#"log_format n escape=none '$remote_addr $upstream_status $request_time $ssl_cipher';"#;
        let v = parse(none_rt, b"127.0.0.1 - 0.001 ").unwrap();
        assert_eq!(v[3], None);
    }

    /// nginx's upstream lists hold `, ` and ` : `: a field after one is not cut
    /// into it (lines as nginx 1.22.1 wrote them, the first upstream down).
    #[test]
    fn upstream_lists_keep_their_spaces() {
        let timing = r#"log_format timing2 '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol $ssl_cipher $request_time $upstream_response_time $pipe';"#;
        let v = parse(
            timing,
            br#"127.0.0.1 - - [28/Nov/2026:03:21:31 +0000] "GET /fo/a HTTP/1.1" 200 9 "-" "fo-tls" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 0.000 0.000, 0.000 ."#,
        )
        .unwrap();
        let n = v.len();
        assert_eq!(v[n - 2].as_deref(), Some(&b"0.000, 0.000"[..]));
        assert_eq!(v[n - 1].as_deref(), Some(&b"."[..]));
        let ups = r#"log_format ups3 '$remote_addr "$http_user_agent" $ssl_protocol $ssl_cipher $upstream_addr $upstream_status $upstream_response_time $request_time';"#;
        for (line, want) in [
            (
                &br#"127.0.0.1 "fo-tls" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 127.0.0.1:18099, 127.0.0.1:18081 502, 200 0.000, 0.000 0.000"#[..],
                ["127.0.0.1:18099, 127.0.0.1:18081", "502, 200", "0.000, 0.000", "0.000"],
            ),
            (
                br#"127.0.0.1 "fo-tls" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 127.0.0.1:18081 200 0.000 0.000"#,
                ["127.0.0.1:18081", "200", "0.000", "0.000"],
            ),
            // Two server groups (an internal redirect): ` : ` between them.
            (
                br#"127.0.0.1 "fo-tls" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 10.0.0.1:80, 10.0.0.2:80 : unix:/tmp/s 502, 504 : 200 0.001, 0.002 : 0.003 0.010"#,
                ["10.0.0.1:80, 10.0.0.2:80 : unix:/tmp/s", "502, 504 : 200", "0.001, 0.002 : 0.003", "0.010"],
            ),
            (
                br#"127.0.0.1 "fo-tls" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 - - - 0.000"#,
                ["-", "-", "-", "0.000"],
            ),
        ] {
            let v = parse(ups, line).unwrap_or_else(|e| panic!("{e:?}: {}", line.escape_ascii()));
            let got: Vec<&[u8]> = v[4..8].iter().map(|x| x.as_deref().unwrap_or(b"-")).collect();
            let want: Vec<&[u8]> = want.iter().map(|w| w.as_bytes()).collect();
            assert_eq!(got, want, "{}", line.escape_ascii());
            assert_eq!(v[3].as_deref(), Some(&b"ECDHE-RSA-AES128-GCM-SHA256"[..]));
        }
    }

    #[test]
    fn raw_quote_in_ssl_variable_before_2_4_64() {
        // mod_ssl values were written unescaped: a quoted %x with a raw quote inside.
        let fmt = r#"%h "%{SSL_CLIENT_S_DN}x" %>s"#;
        let v = parse(fmt, br#"192.0.2.7 "CN=a "quoted" name,O=x" 200"#).unwrap();
        assert_eq!(v[1].as_deref(), Some(&br#"CN=a "quoted" name,O=x"#[..]));
    }

    #[test]
    fn ipv6_host_before_its_port_splits_at_the_last_colon() {
        let tail = b" 192.0.2.1 - - [23/Oct/2025:11:08:24 +0300] \"GET / HTTP/1.1\" 200 5";
        let fmt = "%v:%p %h %l %u %t \"%r\" %>s %b";
        for (host, port) in [
            ("2001:db8::1", "443"),
            ("[2001:db8::1]", "8443"),
            ("::1", "443"),
            ("www.example.org", "443"),
        ] {
            let mut line = format!("{host}:{port}").into_bytes();
            line.extend_from_slice(tail);
            let got = parse(fmt, &line).unwrap_or_else(|e| panic!("{host}: {e:?}"));
            assert_eq!(got[0].as_deref(), Some(host.as_bytes()));
            assert_eq!(got[1].as_deref(), Some(port.as_bytes()));
        }
        let nginx = "log_format x '$host:$server_port $remote_addr';";
        let got = parse(nginx, b"2001:db8::7:80 2001:db8::9").unwrap();
        assert_eq!(got[0].as_deref(), Some(&b"2001:db8::7"[..]));
        assert_eq!(got[1].as_deref(), Some(&b"80"[..]));
        // A port that is not a number is still an error.
        assert!(parse(fmt, b"2001:db8::1:http 192.0.2.1 - - [x] \"GET\" 200 5").is_err());
    }

    #[test]
    fn glued_lines_are_malformed_but_odd_users_are_not() {
        let fmt = "%h %l %u %t \"%r\" %>s %b %{SSL_PROTOCOL}x %{SSL_CIPHER}x";
        let whole = br#"1.2.3.4 - - [23/Oct/2025:11:08:24 +0300] "GET / HTTP/1.1" 200 5 TLSv1.2 AES128-SHA"#;
        assert!(parse(fmt, whole).is_ok());
        // Cut inside the time, the next line appended.
        let mut glued = b"1.2.3.4 - - [23/".to_vec();
        glued.extend_from_slice(whole);
        assert_eq!(parse(fmt, &glued), Err(Reason::Glued));
        // Cut right after the user, an IPv6 line appended.
        let v6 = br#"2001:db8::7 - bob [23/Oct/2025:11:08:25 +0300] "GET /x HTTP/1.1" 200 5 TLSv1.3 TLS_AES_128_GCM_SHA256"#;
        let mut glued = b"1.2.3.4 - alice ".to_vec();
        glued.extend_from_slice(v6);
        assert_eq!(parse(fmt, &glued), Err(Reason::Glued));
        // A user name with spaces and brackets is a user name.
        let odd = br#"1.2.3.4 - John [Admin] Smith [23/Oct/2025:11:08:24 +0300] "GET / HTTP/1.1" 200 5 TLSv1.2 AES128-SHA"#;
        let got = parse(fmt, odd).unwrap();
        assert_eq!(got[2].as_deref(), Some(&b"John [Admin] Smith"[..]));
        // So are names with digits, dots, colons and an address in them.
        for user in [
            &b"Dr. J. Smith 3rd"[..],
            b"ops team: 10.0.0.1 [vpn]",
            b"2001:db8::1 admin",
        ] {
            let mut odd = b"1.2.3.4 - ".to_vec();
            odd.extend_from_slice(user);
            odd.extend_from_slice(
                br#" [23/Oct/2025:11:08:24 +0300] "GET / HTTP/1.1" 200 5 TLSv1.2 AES128-SHA"#,
            );
            let got = parse(fmt, &odd).unwrap();
            assert_eq!(got[2].as_deref(), Some(user));
        }
    }

    /// A line cut at any byte, mid-word as most cuts are, with the next line appended
    /// (a rotated file written to after the cut, `cat` with its successor): the
    /// appended record starts inside a word of the cut one.
    #[test]
    fn glued_lines_cut_inside_a_word_are_malformed() {
        let fmt = "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" %{SSL_PROTOCOL}x %{SSL_CIPHER}x";
        let first = br#"17.241.125.51 - - [21/Nov/2026:00:03:13 +0200] "GET /favicon.ico HTTP/1.1" 206 5338 "-" "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15" TLSv1.2 AES128-GCM-SHA256"#;
        let next = br#"109.171.123.193 - - [21/Nov/2026:00:03:13 +0200] "GET /images/red-387.webp HTTP/2.0" 200 714854 "https://www.example.com/" "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0" TLSv1.3 TLS_AES_256_GCM_SHA384"#;
        let v6 = br#"2001:db8::7 - bob [21/Nov/2026:00:03:14 +0200] "GET / HTTP/1.1" 200 5 "-" "curl/8.5.0" TLSv1.3 TLS_AES_128_GCM_SHA256"#;
        assert!(parse(fmt, first).is_ok());
        for appended in [&next[..], &v6[..]] {
            assert!(parse(fmt, appended).is_ok());
            // Every cut after the first record's time: in the request, the
            // User-Agent, the cipher, inside words and between them.
            for cut in 48..first.len() {
                let mut glued = first[..cut].to_vec();
                glued.extend_from_slice(appended);
                assert!(
                    parse(fmt, &glued).is_err(),
                    "cut at {cut}: {}",
                    String::from_utf8_lossy(&glued)
                );
            }
        }
    }

    #[test]
    fn apache_user_with_spaces_and_brackets() {
        let line = br#"192.0.2.7 - bob [x] y [21/Nov/2026:18:07:40 +0000] "GET / HTTP/1.1" 401 5 "-" "ua" - -"#;
        let v = parse("combinedssl", line).unwrap();
        assert_eq!(v[2].as_deref(), Some(&b"bob [x] y"[..]));
    }
}
