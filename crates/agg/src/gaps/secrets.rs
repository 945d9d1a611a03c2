//! Password hashes, `Authorization:` values and credentials in call text: found, never
//! stored.
//!
//! A secret can be cut by a call boundary: an `Authorization` header read by two
//! `read()` calls, the second holding the rest of its value, or its name cut in two
//! (`Authori` + `zation: Basic ...`). The data calls of each fd carry a [`Carry`] from
//! one call to the next (per direction, per fd table: see `Shared::carries`), which
//! says whether the line the last data left open holds a secret, and keeps its last
//! bytes to look at with the next data.

#[allow(unused_imports)]
use super::*;

pub(super) enum Secret {
    /// A hash prefix; whether it looks like a real hash.
    Hash(HashInfo, bool),
    Authorization,
    /// `Basic <base64>` or `Bearer <token>` on its own: what it is.
    Credential(&'static str),
    /// The rest of a line whose secret started in earlier data on the fd.
    Continued,
    /// Data right after data strace cut (`-s`) that may be the rest of such a line.
    MayContinue,
}

impl Secret {
    /// What the placeholder says it replaced.
    fn what(&self) -> String {
        match self {
            Secret::Hash(h, _) => h.to_string(),
            Secret::Authorization => "Authorization header".to_string(),
            Secret::Credential(c) => (*c).to_string(),
            Secret::Continued => "rest of a secret line".to_string(),
            Secret::MayContinue => "may continue a secret line".to_string(),
        }
    }
}

/// The first password-hash prefix in `s` (recognised by `tlsgap_auth`), and whether
/// what follows looks like a hash. Redaction goes by the prefix alone; the `auth`
/// cause needs the plausible kind.
pub(super) fn find_hash(s: &[u8]) -> Option<(HashInfo, bool)> {
    tlsgap_auth::find_hash(s).map(|f| {
        let info = HashInfo {
            scheme: f.scheme,
            param: f.work(),
            only_entry: false,
        };
        (info, f.plausible)
    })
}

/// Whether the first quoted string of `args` that holds a hash is shown whole (not cut
/// by strace's `-s`) and holds one entry (one non-blank, non-comment line).
pub(super) fn only_entry(args: &[u8]) -> bool {
    let Some((text, cut)) = tlsgap_parser::strace::args(args)
        .filter_map(tlsgap_parser::strace::quoted)
        .find(|(t, _)| find_hash(t).is_some_and(|(_, plausible)| plausible))
    else {
        return false;
    };
    let entries = text
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty() && !l.starts_with(b"#"))
        .count();
    !cut && entries == 1
}

/// Whether a string (contents, decoded) is a secret: it holds a hash prefix, an
/// `Authorization:` name (also `Proxy-Authorization:`) or a credential. `open_end`:
/// `s` may go on past its end (data read in pieces, a string cut by `-s`), so a
/// credential's token that runs to the end counts whatever its length.
pub(super) fn secret_in(s: &[u8], open_end: bool) -> Option<Secret> {
    if let Some((h, plausible)) = find_hash(s) {
        return Some(Secret::Hash(h, plausible));
    }
    if has_authorization(s) {
        return Some(Secret::Authorization);
    }
    credential_in(s, open_end).map(Secret::Credential)
}

/// `authorization:` in any case (`Proxy-Authorization:` too): found from the colons,
/// which are few.
pub(super) fn has_authorization(s: &[u8]) -> bool {
    const NAME: &[u8] = b"authorization";
    let mut from = NAME.len();
    while let Some(p) = s
        .get(from..)
        .and_then(|t| t.iter().position(|&b| b == b':'))
    {
        let at = from + p;
        if s.get(at - NAME.len()..at)
            .is_some_and(|w| w.eq_ignore_ascii_case(NAME))
        {
            return true;
        }
        from = at + 1;
    }
    false
}

/// A credential on its own: the scheme word `Basic` or `Bearer` (any case, not at the
/// end of a lower-case word), blanks, then a token of 8 or more characters (base64
/// for `Basic`, token68 for `Bearer`), or of any length that runs to the end of `s`
/// when `open_end`. What it is, for the placeholder.
pub(super) fn credential_in(s: &[u8], open_end: bool) -> Option<&'static str> {
    let base64 = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=');
    let token68 = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
    let mut from = 0;
    // `b | 0x20` folds `B` to `b`: one search for both cases.
    while let Some(p) = s
        .get(from..)
        .and_then(|t| t.iter().position(|&b| b | 0x20 == b'b'))
    {
        let at = from + p;
        from = at + 1;
        // `HTTP_AUTHORIZATIONBasic` (FastCGI) counts, `VisualBasic` does not.
        if at > 0 && s.get(at - 1).is_some_and(u8::is_ascii_lowercase) {
            continue;
        }
        let rest = s.get(at..).unwrap_or_default();
        let starts = |w: &[u8]| {
            rest.get(..w.len())
                .is_some_and(|r| r.eq_ignore_ascii_case(w))
        };
        let (what, after, is_tok): (&'static str, usize, &dyn Fn(u8) -> bool) = if starts(b"basic")
        {
            ("Basic credentials", 5, &base64)
        } else if starts(b"bearer") {
            ("Bearer token", 6, &token68)
        } else {
            continue;
        };
        let after = rest.get(after..).unwrap_or_default();
        let blanks = after
            .iter()
            .take_while(|&&b| b == b' ' || b == b'\t')
            .count();
        if blanks == 0 {
            continue;
        }
        let tok = after
            .get(blanks..)
            .unwrap_or_default()
            .iter()
            .take_while(|&&b| is_tok(b))
            .count();
        if tok >= 8 || (open_end && blanks + tok == after.len()) {
            return Some(what);
        }
    }
    None
}

// ------------------------------------------------------------------ split secrets

/// Bytes of the open line kept per fd between calls: enough for a header name, a
/// scheme word or a hash prefix cut by the call boundary (`authorizatio`, `beare`,
/// `$argon2`).
const TAIL: usize = 16;
/// How much of the next data is looked at with them.
const HEAD: usize = 48;
/// How much of the first line of data is decoded to tell whether it continues a line.
const FIRST_LINE: usize = 256;

/// Whether `b` ends a line for [`Carry`]: any control byte but a tab.
fn breaks_line(b: u8) -> bool {
    (b < 0x20 && b != b'\t') || b == 0x7f
}

/// Decode the first line of a raw string into `out` (up to its first break, as far as
/// `out` goes): its length, and whether it runs to the end of the string.
fn first_line(raw: &[u8], out: &mut [u8]) -> (usize, bool) {
    let mut n = 0;
    let mut i = 0;
    while let Some(&b) = raw.get(i) {
        let (v, len) = if b == b'\\' {
            escape_at(raw, i)
        } else {
            (b, 1)
        };
        if breaks_line(v) {
            return (n, false);
        }
        let Some(slot) = out.get_mut(n) else {
            return (n, false);
        };
        *slot = v;
        n += 1;
        i += len;
    }
    (n, true)
}

/// Where the text after the last line break of a raw string starts (the index after
/// the escape that encodes the break), read from the end. Every break is an escape
/// (strace prints no control byte as it is), and a `\\` starts an escape when the run of
/// `\\` it ends is odd: the pairs before it are escaped backslashes.
fn last_break(raw: &[u8]) -> Option<usize> {
    let mut end = raw.len();
    while let Some(k) = raw
        .get(..end)
        .and_then(|t| t.iter().rposition(|&b| b == b'\\'))
    {
        let run = raw
            .get(..=k)
            .unwrap_or_default()
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if run % 2 == 1 {
            let (v, len) = escape_at(raw, k);
            if breaks_line(v) {
                return Some(k + len);
            }
        }
        end = k + 1 - run;
    }
    None
}

/// What the data seen so far on one fd (in one direction) leaves open for the next
/// data on it. The default is a clean start: a new or reused fd.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Carry {
    /// The line the data left open holds a secret (an `Authorization:` name, a
    /// credential or a hash): the next data up to the line's end is secret too.
    secret_line: bool,
    /// strace showed only the start of the last data (`-s`): its end is not known.
    unseen_end: bool,
    /// The fd is a regular file: after an unseen end, only what looks like the rest of
    /// a hash is taken for the rest of a secret (a socket's header values could be
    /// anything).
    pub(super) file: bool,
    tail_len: u8,
    /// The last bytes of the open line (since its last `\n`).
    tail: [u8; TAIL],
}

impl Carry {
    /// Nothing to carry: the state of a fresh fd.
    pub(super) fn is_clean(&self) -> bool {
        !self.secret_line && !self.unseen_end && self.tail_len == 0
    }

    fn tail(&self) -> &[u8] {
        self.tail
            .get(..usize::from(self.tail_len))
            .unwrap_or_default()
    }

    /// Keep the last [`TAIL`] bytes of `a` followed by `b`.
    fn set_tail(&mut self, keep_old: bool, b: &[u8]) {
        let mut buf = [0u8; 2 * TAIL];
        let old: &[u8] = if keep_old { self.tail() } else { &[] };
        let b = b.get(b.len().saturating_sub(TAIL)..).unwrap_or_default();
        let n = join_into(&mut buf, old, b);
        let from = n.saturating_sub(TAIL);
        let kept = buf.get(from..n).unwrap_or_default();
        if let Some(t) = self.tail.get_mut(..kept.len()) {
            t.copy_from_slice(kept);
        }
        self.tail_len = kept.len() as u8;
    }

    /// Take the next data on the fd (`raw`: the inside of its quoted string, escapes
    /// kept; `cut`: strace showed only its start) and say whether it continues a
    /// secret of earlier data. Its own secrets are for [`secret_in`] to find.
    ///
    /// A line ends at any control byte but a tab, not only at `\n`: no header value,
    /// token or hash holds one. So only the data's first line (when something is
    /// carried) and what follows its last break are decoded: binary data, where
    /// breaks are everywhere, costs a short look at each end.
    pub(super) fn feed(&mut self, raw: &[u8], cut: bool, scratch: &mut Vec<u8>) -> Option<Secret> {
        let cont = if self.is_clean() {
            None
        } else {
            let mut buf = [0u8; FIRST_LINE];
            let (n, to_end) = first_line(raw, &mut buf);
            let text = buf.get(..n).unwrap_or_default();
            if text.is_empty() {
                None
            } else if self.secret_line {
                Some(Secret::Continued)
            } else if self.unseen_end && self.may_continue(text) {
                Some(Secret::MayContinue)
            } else if self.tail_len > 0 && self.crosses(text, to_end) {
                Some(Secret::Continued)
            } else {
                None
            }
        };
        match last_break(raw) {
            Some(after) => {
                unescape_into(raw.get(after..).unwrap_or_default(), scratch);
                self.secret_line = secret_in(scratch, true).is_some();
                self.set_tail(false, scratch);
            }
            None => {
                unescape_into(raw, scratch);
                self.secret_line =
                    self.secret_line || cont.is_some() || secret_in(scratch, true).is_some();
                self.set_tail(true, scratch);
            }
        }
        // What strace did not show may end the line or not, and its last bytes are
        // not known; a secret line stays one (the safe guess).
        self.unseen_end = cut;
        if cut {
            self.tail_len = 0;
        }
        cont
    }

    /// Whether the kept tail and the head of the next data make a secret that the
    /// tail alone did not: a name or scheme word cut in two.
    fn crosses(&self, head: &[u8], to_end: bool) -> bool {
        let take = head.len().min(HEAD);
        let mut buf = [0u8; TAIL + HEAD];
        let n = join_into(&mut buf, self.tail(), head);
        secret_in(
            buf.get(..n).unwrap_or_default(),
            to_end && take == head.len(),
        )
        .is_some()
    }

    /// After an unseen end: whether the first line of the next data (`text`, up to
    /// its first break) may be the rest of a secret line. In a file, when it looks like
    /// the rest of a hash (8 characters or more); elsewhere, unless it starts a line of its own: an HTTP
    /// request or status line, or a header (`Host: x`) whose name is not the end of
    /// `Proxy-Authorization`.
    fn may_continue(&self, text: &[u8]) -> bool {
        if self.file {
            // Fewer than 8 characters of a hash tell nothing (and `TZif2` is not one).
            return text.len() >= 8
                && text
                    .iter()
                    .all(|&b| b.is_ascii_alphanumeric() || b"./$=+".contains(&b));
        }
        if text.starts_with(b"HTTP/") {
            return false;
        }
        // `GET /x HTTP/1.1`, `OPTIONS * HTTP/1.1`, `GET http://host/ HTTP/1.1`.
        let method = text.iter().take_while(|b| b.is_ascii_uppercase()).count();
        let target = text.get(method + 1..).unwrap_or_default();
        if method >= 3
            && text.get(method) == Some(&b' ')
            && (target.starts_with(b"/") || target.starts_with(b"*") || target.starts_with(b"http"))
        {
            return false;
        }
        let tchar = |b: &u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b);
        if let Some(c) = text.iter().position(|&b| b == b':') {
            let name = text.get(..c).unwrap_or_default();
            let proxy = b"proxy-authorization";
            let tail_of_name = proxy
                .get(proxy.len().saturating_sub(name.len())..)
                .is_some_and(|p| name.len() <= proxy.len() && p.eq_ignore_ascii_case(name));
            if !name.is_empty() && name.iter().all(tchar) && !tail_of_name {
                return false;
            }
        }
        true
    }
}

/// Copy `a` then `b` into `buf` as far as it goes; how many bytes were copied.
fn join_into(buf: &mut [u8], a: &[u8], b: &[u8]) -> usize {
    let mut n = 0;
    for (d, s) in buf.iter_mut().zip(a.iter().chain(b)) {
        *d = *s;
        n += 1;
    }
    n
}

/// Which quoted strings of a data call's arguments are its data: the one that starts
/// at a byte offset (`read`, `write`, `recvfrom`…), or every `iov_base=` string
/// (`readv`, `writev`, `recvmsg`, `sendmmsg`…).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DataSel {
    At(usize),
    IovBase,
}

impl DataSel {
    fn is_data(self, src: &[u8], quote: usize) -> bool {
        match self {
            DataSel::At(o) => o == quote,
            DataSel::IovBase => src.get(..quote).is_some_and(|t| t.ends_with(b"iov_base=")),
        }
    }
}

/// The carry a data call started from and where its data is: what its text is
/// redacted with when shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Feed {
    pub(super) carry: Carry,
    pub(super) sel: DataSel,
}

/// A data call: whether it writes (else reads), and whether its data is in `iov_base`
/// strings (else in the second argument).
pub(super) fn data_call(name: &[u8]) -> Option<(bool, bool)> {
    Some(match name {
        b"read" | b"pread64" | b"recv" | b"recvfrom" => (false, false),
        b"write" | b"pwrite64" | b"send" | b"sendto" => (true, false),
        b"readv" | b"preadv" | b"preadv2" | b"recvmsg" | b"recvmmsg" => (false, true),
        b"writev" | b"pwritev" | b"pwritev2" | b"sendmsg" | b"sendmmsg" => (true, true),
        _ => return None,
    })
}

/// Where a data call's data is in `call_args`, if it shows any; `fd_arg` is its first
/// argument (as [`args`] gives it), the data string follows it.
pub(super) fn data_sel(vector: bool, call_args: &[u8], fd_arg: &[u8]) -> Option<DataSel> {
    if vector {
        return contains(call_args, b"iov_base=\"").then_some(DataSel::IovBase);
    }
    let end = (fd_arg.as_ptr() as usize).checked_sub(call_args.as_ptr() as usize)? + fd_arg.len();
    let rest = call_args.get(end..)?;
    let at = end + rest.iter().position(|&b| b != b' ' && b != b',')?;
    (call_args.get(at) == Some(&b'"')).then_some(DataSel::At(at))
}

/// Which carry: the fd table, the fd, and whether the data is written (else read).
pub(super) type CarryKey = (TableKey, i64, bool);

/// Move the carries of thread `from` to thread `to` (see `FdTables::rename`).
pub(super) fn rename_carries(
    carries: &mut FxHashMap<CarryKey, Carry>,
    scope: u32,
    from: u32,
    to: u32,
) {
    let moved: Vec<CarryKey> = carries
        .keys()
        .filter(|(k, _, _)| *k == (scope, from))
        .copied()
        .collect();
    for k in moved {
        if let Some(c) = carries.remove(&k) {
            carries.entry(((scope, to), k.1, k.2)).or_insert(c);
        }
    }
}

impl Shared {
    /// A data call's feed (`None` for other calls): its fd's carry before the call and
    /// where its data is. With `update`, the carry then takes the call's data.
    pub(super) fn feed_data(
        &mut self,
        key: TableKey,
        name: &[u8],
        call_args: &[u8],
        update: bool,
    ) -> Option<Feed> {
        let (out, vector) = data_call(name)?;
        let first = args(call_args).next()?;
        let (fd, deco) = fd_arg(first)?;
        if fd < 0 {
            return None;
        }
        let sel = data_sel(vector, call_args, first)?;
        let file = match deco {
            Some(d) => ResKind::of_label(&decoration_path(d)) == ResKind::File,
            None => matches!(self.tables.lookup(key, fd), Lookup::Known(_, ResKind::File)),
        };
        let k = (key, fd, out);
        let mut carry = self.carries.get(&k).copied().unwrap_or_default();
        carry.file = file;
        let feed = Feed { carry, sel };
        if update {
            feed_call(&mut carry, call_args, sel, &mut self.scratch);
            if carry.is_clean() {
                self.carries.remove(&k);
            } else {
                self.carries.insert(k, carry);
            }
        }
        Some(feed)
    }

    /// `fd` was closed or is a new fd: nothing carries over to it.
    pub(super) fn reset_carry(&mut self, key: TableKey, fd: i64) {
        if !self.carries.is_empty() {
            self.carries.remove(&(key, fd, false));
            self.carries.remove(&(key, fd, true));
        }
    }

    /// `new` is now a dup of `old`: the same stream, so the same carries.
    pub(super) fn dup_carry(&mut self, key: TableKey, old: i64, new: i64) {
        if old == new || self.carries.is_empty() {
            return;
        }
        for out in [false, true] {
            match self.carries.get(&(key, old, out)).copied() {
                Some(c) => {
                    self.carries.insert((key, new, out), c);
                }
                None => {
                    self.carries.remove(&(key, new, out));
                }
            }
        }
    }
}

/// The end of the quoted string that starts at `src[i]` (a `"`): the index of its
/// closing quote (or `src.len()`), and whether it holds an escape.
fn string_end(src: &[u8], i: usize) -> (usize, bool) {
    let end = closing_quote(src, i).unwrap_or(src.len());
    let has_escape = src.get(i + 1..end).is_some_and(|b| b.contains(&b'\\'));
    (end, has_escape)
}

/// Feed a data call's data strings to `carry`, as [`redact_into`] does when it shows
/// the call.
pub(super) fn feed_call(carry: &mut Carry, src: &[u8], sel: DataSel, scratch: &mut Vec<u8>) {
    if let DataSel::At(i) = sel {
        let (j, _) = string_end(src, i);
        let body = src.get(i + 1..j).unwrap_or_default();
        let cut = src.get(j + 1..).is_some_and(|t| t.starts_with(b"..."));
        carry.feed(body, cut, scratch);
        return;
    }
    let mut i = 0;
    while let Some(p) = src.get(i..).and_then(|t| t.iter().position(|&c| c == b'"')) {
        i += p;
        let (j, _) = string_end(src, i);
        if sel.is_data(src, i) {
            let body = src.get(i + 1..j).unwrap_or_default();
            let cut = src.get(j + 1..).is_some_and(|t| t.starts_with(b"..."));
            carry.feed(body, cut, scratch);
        }
        i = j + 1;
    }
}

/// The first plausible hash in the quoted strings of `src`: what [`redact_into`]
/// returns, without copying or decoding the strings that cannot hold one.
pub(super) fn hash_in(src: &[u8], scratch: &mut Vec<u8>) -> Option<HashInfo> {
    // `may_hold_hash` looks at the `$`, `{` and `\\` bytes only (one SIMD search for
    // the three): most calls have none and stop there.
    if !may_hold_hash(src) {
        return None;
    }
    let mut i = 0;
    // Strings as `redact_into` splits them: from a quote to the next unescaped one.
    while let Some(p) = src.get(i..).and_then(|t| t.iter().position(|&c| c == b'"')) {
        i += p;
        let mut j = i + 1;
        let mut has_escape = false;
        // Whether the decoded string may hold a `$` or `{` (a hash prefix needs one).
        let mut maybe = false;
        while let Some(&c) = src.get(j) {
            match c {
                b'\\' => {
                    has_escape = true;
                    if matches!(src.get(j + 1), Some(b'x' | b'0'..=b'7' | b'$' | b'{')) {
                        maybe = true;
                    }
                    j += 2;
                }
                b'"' => break,
                b'$' | b'{' => {
                    maybe = true;
                    j += 1;
                }
                _ => j += 1,
            }
        }
        if maybe {
            let body = src.get(i + 1..j.min(src.len())).unwrap_or_default();
            let decoded: &[u8] = if has_escape {
                unescape_into(body, scratch);
                scratch
            } else {
                body
            };
            if let Some((h, true)) = find_hash(decoded) {
                return Some(h);
            }
        }
        i = j + 1;
    }
    None
}

/// Whether decoding the strings of `src` could give a hash prefix: a `$` before one
/// of `2a56yg1` (`$2y$`, `$apr1$`, `$5$`, `$6$`, `$y$`, `$gy$`, `$argon2`, `$1$`) or a
/// `{` before `S` (`{SHA}`, `{SSHA}`), where the byte after may come from an escape;
/// or an escape that decodes to `$` or `{`. Every `\` is looked at, paired or not, so
/// this never misses one that [`unescape_into`](tlsgap_parser::strace::unescape_into) would decode: binary data, dense with
/// escapes and stray `$`, mostly passes without being decoded.
pub(super) fn may_hold_hash(src: &[u8]) -> bool {
    // The byte after a `$` or `{` at `k - 1`, as decoded (a `\` there starts an escape).
    let next = |k: usize| match src.get(k) {
        Some(b'\\') => Some(escape_at(src, k).0),
        b => b.copied(),
    };
    for at in memchr::memchr3_iter(b'$', b'{', b'\\', src) {
        let Some(&b) = src.get(at) else { break };
        let k = at + 1;
        let found = match b {
            b'$' => matches!(
                next(k),
                Some(b'2' | b'a' | b'5' | b'6' | b'y' | b'g' | b'1')
            ),
            b'{' => next(k) == Some(b'S'),
            // Only these can start an escape of `$` (`\44`, `\044`, `\444`, `\x24`) or
            // `{` (`\173`, `\573`, `\x7b`); most escapes of binary data stop here.
            _ => {
                matches!(
                    src.get(k),
                    Some(b'$' | b'{' | b'x' | b'0' | b'1' | b'4' | b'5')
                ) && matches!(escape_at(src, k - 1).0, b'$' | b'{')
            }
        };
        if found {
            return true;
        }
    }
    false
}

/// Copy `src` into `out` up to about `limit` bytes of `out`, with every quoted string
/// that holds a secret replaced by a placeholder. Scans every string of `src` (also
/// past the limit) and returns the first hash seen. With `feed` (a data call's
/// arguments), its data strings also go through the fd's carry, from the state before
/// the call: the rest of a secret that started in earlier data is replaced too.
pub(super) fn redact_into(
    src: &[u8],
    out: &mut Vec<u8>,
    limit: usize,
    scratch: &mut Vec<u8>,
    mut feed: Option<&mut Feed>,
) -> Option<HashInfo> {
    let mut hash = None;
    let mut i = 0;
    let mut cut = false;
    while i < src.len() {
        let Some(&b) = src.get(i) else { break };
        if b != b'"' {
            if out.len() < limit {
                out.push(b);
                i += 1;
            } else {
                cut = true;
                // Nothing more is shown: jump to the next string to scan it.
                match src.get(i..).and_then(|t| t.iter().position(|&c| c == b'"')) {
                    Some(p) => i += p,
                    None => break,
                }
            }
            continue;
        }
        // A quoted string: find its end, skipping escapes.
        let (j, has_escape) = string_end(src, i);
        let body = src.get(i + 1..j).unwrap_or_default();
        // strace showed only its start (`"..."...`): it goes on.
        let more = src.get(j + 1..).is_some_and(|t| t.starts_with(b"..."));
        let data = feed.as_deref().is_some_and(|f| f.sel.is_data(src, i));
        let carried = match feed.as_deref_mut() {
            Some(f) if data => f.carry.feed(body, more, scratch),
            _ => None,
        };
        let decoded: &[u8] = if has_escape {
            unescape_into(body, scratch);
            scratch
        } else {
            body
        };
        let own = if decoded.contains(&b'$') || decoded.contains(&b'{') || decoded.len() >= 7 {
            secret_in(decoded, more || data)
        } else {
            None
        };
        if let (None, Some(Secret::Hash(h, true))) = (hash, &own) {
            hash = Some(*h);
        }
        if out.len() < limit {
            match own.or(carried) {
                Some(s) => {
                    out.extend_from_slice(
                        format!("\"<redacted: {}, {} bytes>\"", s.what(), decoded.len()).as_bytes(),
                    );
                }
                None => {
                    let whole = src.get(i..(j + 1).min(src.len())).unwrap_or_default();
                    let room = limit.saturating_sub(out.len());
                    if whole.len() <= room {
                        out.extend_from_slice(whole);
                    } else {
                        // Cut on a character, not inside an escape.
                        let k = escape_boundary(whole, room);
                        out.extend_from_slice(whole.get(..k).unwrap_or_default());
                        out.extend_from_slice(b"\"");
                        cut = true;
                    }
                }
            }
        } else {
            cut = true;
        }
        i = j + 1;
    }
    if cut {
        out.extend_from_slice(b"...");
    }
    hash
}

/// The largest prefix length of a quoted string (opening quote included) not
/// longer than `max` that does not end inside an escape (`\n`, `\312`, `\x41`).
pub(super) fn escape_boundary(s: &[u8], max: usize) -> usize {
    let mut i = 1;
    let mut last = 1.min(max);
    while i < s.len() {
        let len = match (s.get(i), s.get(i + 1)) {
            (Some(b'\\'), Some(b'0'..=b'7')) => {
                2 + s
                    .get(i + 2..)
                    .unwrap_or_default()
                    .iter()
                    .take(2)
                    .take_while(|c| (b'0'..=b'7').contains(*c))
                    .count()
            }
            (Some(b'\\'), Some(b'x')) => 4,
            (Some(b'\\'), _) => 2,
            _ => 1,
        };
        if i + len > max {
            break;
        }
        i += len;
        last = i;
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_details() {
        let h = |s: &[u8]| find_hash(s).map(|(h, plausible)| (h.to_string(), plausible));
        assert_eq!(
            h(b"alice:$2y$12$abcdefghij"),
            Some(("bcrypt cost 12".into(), true))
        );
        assert_eq!(h(b"bob:$apr1$xyz$abc"), Some(("apr1 (MD5)".into(), true)));
        assert_eq!(h(b"c:{SHA}abc="), Some(("{SHA} (SHA-1)".into(), true)));
        assert_eq!(
            h(b"d:$6$rounds=5000$salt$h"),
            Some(("SHA-512 crypt rounds 5000".into(), true))
        );
        assert_eq!(h(b"e:$y$j9T$x"), Some(("yescrypt".into(), true)));
        assert_eq!(h(b"$argon2id$v=19$m=65536"), Some(("argon2".into(), true)));
        assert_eq!(h(b"f:$1$salt$h"), Some(("MD5 crypt".into(), true)));
        assert_eq!(h(b"g:$5$saltsalt$h"), Some(("SHA-256 crypt".into(), true)));
        // Prefixes alone: redacted, but not evidence of password checking.
        assert_eq!(h(b"echo $1$2"), Some(("MD5 crypt".into(), false)));
        assert_eq!(h(b"{SHA}"), Some(("{SHA} (SHA-1)".into(), false)));
        assert_eq!(h(b"price: $5 or {x}"), None);
    }

    #[test]
    fn redaction_replaces_whole_strings_and_scans_past_the_limit() {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let src = br#"15, "alice:$2y$12$abcdefghijklmnopqrstuv"..., 4096"#;
        let h = redact_into(src, &mut out, 200, &mut scratch, None);
        assert_eq!(h.unwrap().param, Some(12));
        let text = String::from_utf8(out.clone()).unwrap();
        assert_eq!(
            text,
            r#"15, "<redacted: bcrypt cost 12, 35 bytes>"..., 4096"#
        );
        // Hex-escaped (-xx) hashes are found too.
        out.clear();
        let src = br#""\x24\x32\x79\x24\x31\x30\x24\x61\x62""#;
        assert!(redact_into(src, &mut out, 200, &mut scratch, None).is_some());
        assert!(!String::from_utf8_lossy(&out).contains("x24"));
        // Authorization headers.
        out.clear();
        let src = br#"8, "GET / HTTP/1.1\r\nauthorization: Basic YWxpY2U6c2VjcmV0\r\n", 60"#;
        redact_into(src, &mut out, 200, &mut scratch, None);
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.contains("<redacted: Authorization header"), "{text}");
        assert!(!text.contains("YWxp"));
        // Past the limit: not shown, still scanned.
        out.clear();
        let mut long = b"\"".to_vec();
        long.extend(std::iter::repeat_n(b'a', 300));
        long.extend_from_slice(b"\", \"x:$2b$10$abc\"");
        let h = redact_into(&long, &mut out, 50, &mut scratch, None);
        assert_eq!(h.unwrap().param, Some(10));
        assert!(out.len() < 60);
        assert!(out.ends_with(b"..."));
    }

    #[test]
    fn escapes_of_dollar_and_brace_are_never_skipped() {
        // Every escape of up to three characters after the `\`: the quick look at its
        // first byte lets through each one that decodes to `$` or `{`.
        let first = b"0145x7${a";
        let rest = b"01234567bB2a";
        for &a in first {
            for &b in rest {
                for &c in rest {
                    let src = [b'\\', a, b, c];
                    assert_eq!(
                        may_hold_hash(&src),
                        matches!(escape_at(&src, 0).0, b'$' | b'{'),
                        "{}",
                        String::from_utf8_lossy(&src)
                    );
                }
            }
        }
    }

    /// `hash_in` (every call) must find what `redact_into` (calls shown) would.
    #[test]
    fn hash_in_agrees_with_redact_into() {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let fixed: [&[u8]; 12] = [
            br#"15, "alice:$2y$12$abcdefghijklmnopqrstuv"..., 4096"#,
            br#""\x24\x32\x79\x24\x31\x30\x24\x61\x62""#,
            br#""\44\62y$10$abc", "$1$2""#,
            br#""\0442y$10$abcd""#,
            br#""\4442y$10$abcd""#,
            br#""$\62y$10$abcd""#,
            br#""\$2y$10$abcd""#,
            br#""\\$2y$10$abcd""#,
            br#""x{SHA}abcd", "{\123SHA}abc""#,
            br#"[{iov_base="\27\3$\3\1{\32_", iov_len=5}], "$6$rounds=5000$abcd$""#,
            br#""\x7B\x53HA}abcd""#,
            br#""unterminated $5$abcdef"#,
        ];
        for src in fixed {
            out.clear();
            let want = redact_into(src, &mut out, 200, &mut scratch, None);
            assert_eq!(
                hash_in(src, &mut scratch),
                want,
                "{}",
                String::from_utf8_lossy(src)
            );
        }
        // Random mixes of the pieces hashes, escapes and strings are made of.
        let pieces: Vec<&[u8]> = br#""|\|$|{|}|2y$|12$|abcdefghij|apr1$|5$|6$|y$|gy$|argon2id$|1$|SHA}|SSHA}|\x24|\44|\173|\x7b|\0|\n|, |\x32|\62|\123|\x"#
            .split(|&b| b == b'|')
            .collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut found = 0;
        for _ in 0..20_000 {
            let mut src = Vec::new();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = (seed % 16) as usize;
            let mut r = seed;
            for _ in 0..n {
                r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                src.extend_from_slice(pieces[(r >> 33) as usize % pieces.len()]);
            }
            out.clear();
            let want = redact_into(&src, &mut out, 200, &mut scratch, None);
            found += usize::from(want.is_some());
            assert_eq!(
                hash_in(&src, &mut scratch),
                want,
                "{}",
                String::from_utf8_lossy(&src)
            );
        }
        assert!(found > 100, "{found}");
    }

    #[test]
    fn cuts_strings_between_escapes() {
        let s = br#""ab\305\256\ncd""#;
        assert_eq!(escape_boundary(s, 4), 3);
        assert_eq!(escape_boundary(s, 5), 3, "not inside \\305");
        assert_eq!(escape_boundary(s, 7), 7);
        assert_eq!(escape_boundary(s, 12), 11);
        assert_eq!(escape_boundary(br#""\x41\x42""#, 6), 5);
        assert_eq!(escape_boundary(b"\"", 0), 0);
    }
}

/// Secrets cut by call boundaries, through the whole analysis: no piece reaches the
/// report (JSON), its flat rows (CSV cells) or their `Debug`.
#[cfg(test)]
mod split {
    use super::*;

    /// The value of `dave:hunter2`: its two halves go into two reads.
    const HEAD: &str = "ZGF2";
    const REST: &str = "ZTpodW50ZXIy";

    /// Lines of one `-f` trace (`PID  -ttt-stamp call`), 1 ms apart, every gap shown.
    fn run(lines: &[&str]) -> GapsReport {
        run_inputs(&[(None, lines)])
    }

    /// Several inputs (`Some(pid)`: a `-ff` file of that PID, lines unprefixed).
    fn run_inputs(inputs: &[(Option<u32>, &[&str])]) -> GapsReport {
        let opts = GapOptions {
            min_gap_ns: 1,
            ..GapOptions::default()
        };
        let mut a = GapAnalyzer::new(opts);
        for (k, (hint, lines)) in inputs.iter().enumerate() {
            let name = match hint {
                Some(p) => format!("trace.{p}"),
                None => format!("trace-{k}"),
            };
            a.begin_input(&name, *hint);
            for (i, l) in lines.iter().enumerate() {
                let stamp = format!("1795296993.{:06}", 1000 * (i + 1));
                let line = match hint {
                    Some(_) => format!("{stamp} {l}"),
                    None if l.starts_with('[') => {
                        // `[pid N] call`: the stamp goes after the prefix.
                        let (p, call) = l.split_once("] ").unwrap();
                        format!("{p}] {stamp} {call}")
                    }
                    None => format!("1234  {stamp} {l}"),
                };
                a.line(i as u64 + 1, line.as_bytes());
            }
            a.end_input();
        }
        a.finish()
    }

    /// Every `before`/`after` text.
    fn texts(r: &GapsReport) -> Vec<String> {
        r.gaps
            .iter()
            .chain(&r.blocked)
            .flat_map(|g| [g.before.clone(), g.after.clone()])
            .flatten()
            .collect()
    }

    /// The report's JSON, the cells of its flat table (what CSV and Parquet are
    /// written from) as raw text and as JSON, and the flat rows' `Debug`.
    fn outputs(r: &GapsReport) -> [String; 4] {
        let json = serde_json::to_string(r).unwrap();
        let table = gap_table(r);
        assert_eq!(table.rows.len(), r.gaps.len() + r.blocked.len());
        let mut cells = String::new();
        for row in &table.rows {
            for cell in row {
                match cell {
                    Cell::Text(t) => cells.push_str(t),
                    other => cells.push_str(&format!("{other:?}")),
                }
                cells.push('\t');
            }
            cells.push('\n');
        }
        let cells_json = serde_json::to_string(&table.rows).unwrap();
        let debug = format!("{:?}", gap_rows(r));
        [json, cells, cells_json, debug]
    }

    /// None of `secrets` (nor their `-x` escaped form) anywhere in the outputs.
    #[track_caller]
    fn assert_hidden(r: &GapsReport, secrets: &[&str]) {
        let outs = outputs(r);
        for s in secrets {
            let hex: String = s.bytes().map(|b| format!("\\x{b:02x}")).collect();
            for form in [s.to_string(), hex.clone(), hex.replace('\\', "\\\\")] {
                for out in &outs {
                    assert!(!out.contains(&form), "{form} leaked:\n{out}");
                }
            }
        }
    }

    /// `text` in strace's `-xx` form: every byte as `\xHH`.
    fn xx(text: &[u8]) -> String {
        text.iter().map(|b| format!("\\x{b:02x}")).collect()
    }

    #[test]
    fn value_split_across_two_reads() {
        let r = run(&[
            &format!(
                r#"read(15, "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {HEAD}", 4096) = 45"#
            ),
            &format!(r#"read(15, "{REST}\r\n\r\n", 4096) = 16"#),
            r#"read(15, "GET /next HTTP/1.1\r\n\r\n", 4096) = 22"#,
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST, "ZGF2ZTpodW50ZXIy", "ZTpod", "aHVudGVyMg=="]);
        let t = texts(&r);
        assert!(
            t.iter()
                .any(|s| s
                    == r#"read(15, "<redacted: rest of a secret line, 16 bytes>", 4096) = 16"#),
            "{t:#?}"
        );
        // The line ended: the next request on the connection is shown.
        assert!(
            t.iter()
                .any(|s| s.contains(r#""GET /next HTTP/1.1\r\n\r\n""#)),
            "{t:#?}"
        );
    }

    #[test]
    fn header_name_split_across_reads() {
        // The value alone is shaped like nothing: only the name, cut in two, says so.
        let digest = "6629fae49393a05397450978507c4ef1";
        for (a, b) in [
            ("Authori", "zation"),
            ("Authorization", ""),
            ("A", "uthorization"),
            ("authorizatio", "n"),
            ("AUTHORIZ", "ATION"),
        ] {
            let r = run(&[
                &format!(r#"read(15, "GET / HTTP/1.1\r\n{a}", 4096) = 20"#),
                &format!(r#"read(15, "{b}: Digest response=\"{digest}\"\r\n", 4096) = 60"#),
                "getpid() = 1234",
            ]);
            assert_hidden(&r, &[digest, "6629fae4"]);
        }
        // Over three reads, and with the value's start in the second one.
        let r = run(&[
            r#"read(15, "GET / HTTP/1.1\r\nAuth", 4096) = 20"#,
            r#"read(15, "oriz", 4096) = 4"#,
            r#"read(15, "ation: Digest resp", 4096) = 18"#,
            &format!(r#"read(15, "onse={digest}\r\n\r\n", 4096) = 40"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[digest, "Digest resp", "onse=6629"]);
    }

    #[test]
    fn scheme_word_split_across_reads() {
        // After the header name: the rest of the line is secret whatever it is.
        let r = run(&[
            r#"read(15, "GET / HTTP/1.1\r\nAuthorization: Ba", 4096) = 35"#,
            &format!(r#"read(15, "sic {HEAD}{REST}\r\n\r\n", 4096) = 24"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST, HEAD]);
        // No header name (a token in a header of its own): the scheme word is found
        // across the reads, and the token after it is hidden.
        let token = "eyJhbGciOiJIUzI1NiJ9.e30.c2ln";
        let r = run(&[
            r#"read(15, "GET / HTTP/1.1\r\nX-Token: Bea", 4096) = 30"#,
            &format!(r#"read(15, "rer {token}\r\n\r\n", 4096) = 40"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[token, "eyJhbGci"]);
    }

    #[test]
    fn proxy_authorization_split() {
        let rest = "oQYJKoZIhvcSAQICAQ";
        let r = run(&[
            r#"write(9, "GET http://x/ HTTP/1.1\r\nProxy-Authorization: Negotiate YIIG", 80) = 60"#,
            &format!(r#"write(9, "{rest}\r\n\r\n", 22) = 22"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[rest, "YIIG"]);
        // Its name cut in the middle.
        let r = run(&[
            r#"read(15, "GET http://x/ HTTP/1.1\r\nProxy-Author", 4096) = 36"#,
            &format!(r#"read(15, "ization: Negotiate YIIG{rest}\r\n\r\n", 4096) = 50"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[rest, "YIIG"]);
    }

    #[test]
    fn a_closed_or_reused_fd_starts_clean() {
        let public = r#""GET /public HTTP/1.1\r\n\r\n""#;
        let head =
            format!(r#"read(15, "GET / HTTP/1.1\r\nAuthorization: Basic {HEAD}", 4096) = 40"#);
        let next = format!("read(15, {public}, 4096) = 24");
        // Without a reset the next data on fd 15 would continue the secret line.
        let r = run(&[&head, &next, "getpid() = 1234"]);
        assert!(!texts(&r).iter().any(|s| s.contains(public)));
        for reset in [
            "close(15) = 0",
            "dup2(7, 15) = 15",
            "dup3(7, 15, O_CLOEXEC) = 15",
            r#"openat(AT_FDCWD, "/var/www/index.html", O_RDONLY) = 15"#,
            "accept4(3, NULL, NULL, SOCK_CLOEXEC) = 15",
            "socket(AF_INET, SOCK_STREAM, IPPROTO_TCP) = 15",
            "close_range(3, ~0U, 0) = 0",
        ] {
            let r = run(&[&head, reset, &next, "getpid() = 1234"]);
            let t = texts(&r);
            assert!(t.iter().any(|s| s.contains(public)), "{reset}: {t:#?}");
            assert_hidden(&r, &[HEAD]);
        }
        // After close, a new connection on the same number that does split a secret
        // is still caught.
        let r = run(&[
            &head,
            "close(15) = 0",
            "accept4(3, NULL, NULL, SOCK_CLOEXEC) = 15",
            r#"read(15, "GET / HTTP/1.1\r\nAuthorization: Basic ZGF2", 4096) = 40"#,
            &format!(r#"read(15, "{REST}\r\n", 4096) = 14"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST]);
        // A dup of the fd continues its stream.
        let r = run(&[
            &head,
            "dup2(15, 0) = 0",
            &format!(r#"read(0, "{REST}\r\n", 4096) = 14"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST]);
    }

    #[test]
    fn two_fds_interleaved() {
        let r = run(&[
            r#"read(15, "GET / HTTP/1.1\r\nAuthorization: Basic ZGF2", 4096) = 40"#,
            r#"read(16, "GET / HTTP/1.1\r\nHost: y\r\n\r\n", 4096) = 27"#,
            r#"write(15, "HTTP/1.1 100 Continue\r\n\r\n", 25) = 25"#,
            &format!(r#"read(15, "{REST}\r\n\r\n", 4096) = 16"#),
            r#"read(16, "GET /b HTTP/1.1\r\n\r\n", 4096) = 19"#,
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST]);
        let t = texts(&r);
        for shown in [
            r#""GET / HTTP/1.1\r\nHost: y\r\n\r\n""#,
            r#""GET /b HTTP/1.1\r\n\r\n""#,
            r#""HTTP/1.1 100 Continue\r\n\r\n""#,
        ] {
            assert!(t.iter().any(|s| s.contains(shown)), "{shown}: {t:#?}");
        }
        // Threads of one process with their own fd tables (`-ff` files) do not mix.
        let a: [&str; 2] = [
            r#"read(15, "GET / HTTP/1.1\r\nAuthorization: Basic ZGF2", 4096) = 40"#,
            "getpid() = 10",
        ];
        let b: [&str; 2] = [
            r#"read(15, "GET /other HTTP/1.1\r\n\r\n", 4096) = 23"#,
            "getpid() = 11",
        ];
        let r = run_inputs(&[(Some(10), &a), (Some(11), &b)]);
        assert!(texts(&r).iter().any(|s| s.contains("GET /other")));
    }

    #[test]
    fn hex_strings() {
        // `-xx`: every byte escaped; `-x`: non-ASCII strings in hex.
        let first = xx(b"GET / HTTP/1.1\r\nAuthori");
        let second = xx(format!("zation: Basic {HEAD}").as_bytes());
        let third = xx(format!("{REST}\r\n\r\n").as_bytes());
        let r = run(&[
            &format!(r#"read(15, "{first}", 4096) = 23"#),
            &format!(r#"read(15, "{second}", 4096) = 19"#),
            &format!(r#"recvfrom(15, "{third}", 4096, 0, NULL, NULL) = 16"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST, HEAD, "zation: Basic"]);
        // Octal and `\x` escapes inside an otherwise plain string.
        let r = run(&[
            r#"read(15, "GET / HTTP/1.1\r\n\101uthori\x7aation: Basic ZG", 4096) = 40"#,
            &format!(r#"read(15, "F2{REST}\15\12", 4096) = 16"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST, "F2ZTpo"]);
    }

    #[test]
    fn strace_cut_strings() {
        // `-s`: the name is shown, the value goes on past what is shown.
        let r = run(&[
            r#"read(15, "GET / HTTP/1.1\r\nAuthorization: Bas"..., 4096) = 60"#,
            &format!(r#"read(15, "{REST}\r\n\r\n", 4096) = 16"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST]);
        // The header is in what strace did not show: the next data may be its rest.
        let r = run(&[
            r#"read(15, "GET / HTTP/1.1\r\nHost: x\r\n"..., 4096) = 60"#,
            &format!(r#"read(15, "{REST}\r\n\r\n", 4096) = 16"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST]);
        assert!(texts(&r)
            .iter()
            .any(|s| s.contains("<redacted: may continue a secret line, 16 bytes>")));
        // ... unless it starts a line of its own (the next request, a header) or is
        // binary.
        for next in [
            r#""GET /next HTTP/1.1\r\n\r\n""#,
            r#""Host: y\r\n\r\n""#,
            r#""\27\3\3\0\32abc""#,
        ] {
            let r = run(&[
                r#"read(15, "GET / HTTP/1.1\r\nHost: x\r\n"..., 4096) = 60"#,
                &format!("read(15, {next}, 4096) = 20"),
                "getpid() = 1234",
            ]);
            assert!(texts(&r).iter().any(|s| s.contains(next)), "{next}");
        }
        // `Authorization` cut by a read in what strace did not show.
        let r = run(&[
            r#"read(15, "GET / HTTP/1.1\r\n"..., 4096) = 60"#,
            r#"read(15, "zation: Basic ZG", 4096) = 16"#,
            &format!(r#"read(15, "F2{REST}\r\n", 4096) = 16"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &["F2ZTpo", REST]);
    }

    #[test]
    fn pid_prefixes_unfinished_and_vectors() {
        // `-f` to stderr: `[pid N]`, a read split by another thread's line.
        let r = run(&[
            r#"[pid  4242] read(15, "GET / HTTP/1.1\r\nAuthorization: Basic ZGF2", 4096) = 40"#,
            r#"[pid  4243] getpid() = 4242"#,
            r#"[pid  4242] read(15,  <unfinished ...>"#,
            r#"[pid  4243] getppid() = 1"#,
            &format!(r#"[pid  4242] <... read resumed>"{REST}\r\n", 4096) = 14"#),
            r#"[pid  4242] getpid() = 4242"#,
        ]);
        assert_hidden(&r, &[REST]);
        // A write shows its data when it starts.
        let r = run(&[
            r#"write(9, "GET / HTTP/1.1\r\nAuthorization: Basic ZGF2", 40) = 40"#,
            &format!(r#"write(9, "{REST}\r\n", 14 <unfinished ...>"#),
            r#"--- SIGCHLD {si_signo=SIGCHLD} ---"#,
            "<... write resumed>) = 14",
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST]);
        // `writev`/`readv`/`recvmsg`: the name in one iovec, the value in the next.
        let r = run(&[
            &format!(
                r#"writev(9, [{{iov_base="GET / HTTP/1.1\r\nAuthorization: ", iov_len=31}}, {{iov_base="Digest {REST}", iov_len=19}}, {{iov_base="\r\n\r\n", iov_len=4}}], 3) = 54"#
            ),
            &format!(
                r#"recvmsg(15, {{msg_name=NULL, msg_namelen=0, msg_iov=[{{iov_base="X: 1\r\nAuthoriz", iov_len=15}}, {{iov_base="ation: Digest {REST}", iov_len=30}}], msg_iovlen=2, msg_controllen=0, msg_flags=0}}, 0) = 45"#
            ),
            r#"readv(16, [{iov_base="Authorization: Digest x", iov_len=23}], 1) = 23"#,
            &format!(r#"readv(16, [{{iov_base="{REST}\r\n", iov_len=14}}], 1) = 14"#),
            "getpid() = 1234",
        ]);
        assert_hidden(&r, &[REST]);
    }

    #[test]
    fn credentials_and_hashes_on_their_own() {
        let bcrypt = "$2y$12$R9h/cIPz0gi.URNNX3kh2OPST9/PgBkqquzi.Ss7KIUgO2t0jWMUW";
        let r = run(&[
            // FastCGI parameters: no `Authorization:`, the credential alone.
            r#"write(5, "\1\4\0\1\0\0\0\0\22\32HTTP_AUTHORIZATIONBasic c2VjcmV0OnBsYW50ZWQ=", 60) = 60"#,
            r#"sendto(6, "token bearer abcdefghijklmnop", 29, 0, NULL, 0) = 29"#,
            // Every string of a call, every scheme.
            &format!(
                r#"writev(7, [{{iov_base="a:{bcrypt}\n", iov_len=62}}, {{iov_base="b:$apr1$xyzxyzxy$abcdefghijklmnopqrstuv\n", iov_len=40}}, {{iov_base="c:{{SHA}}W6ph5Mm5Pz8GgiULbPgzG37mj9g=\n", iov_len=38}}], 3) = 140"#
            ),
            // A bcrypt hash cut by the end of a read of the file.
            r#"openat(AT_FDCWD, "/etc/apache2/htpasswd", O_RDONLY) = 8"#,
            r#"read(8, "alice:$2y$12$R9h/cIPz0gi.URNNX3kh2O", 35) = 35"#,
            r#"read(8, "PST9/PgBkqquzi.Ss7KIUgO2t0jWMUW\nbob:x\n", 4096) = 38"#,
            "getpid() = 1234",
        ]);
        assert_hidden(
            &r,
            &[
                "c2VjcmV0OnBsYW50ZWQ=",
                "c2VjcmV0",
                "abcdefghijklmnop",
                "R9h/cIPz0gi",
                "PST9/PgBkqquzi",
                "xyzxyzxy$abc",
                "W6ph5Mm5Pz8",
            ],
        );
        // Not everything with the word is a credential.
        assert!(credential_in(b"basic usage", false).is_none());
        assert!(credential_in(b"VisualBasic abcdefghijk", false).is_none());
        assert_eq!(
            credential_in(b"Authorization: BASIC  ZGF2ZTpodW50ZXIy", false),
            Some("Basic credentials")
        );
        assert_eq!(credential_in(b"x bearer abc", true), Some("Bearer token"));
        assert!(credential_in(b"x bearer abc def", true).is_none());
    }

    #[test]
    fn carry_states() {
        let mut scratch = Vec::new();
        let mut c = Carry::default();
        assert!(c
            .feed(br"GET / HTTP/1.1\r\nAuthori", false, &mut scratch)
            .is_none());
        assert!(!c.secret_line && c.tail() == b"Authori");
        assert!(matches!(
            c.feed(br"zation: x", false, &mut scratch),
            Some(Secret::Continued)
        ));
        assert!(c.secret_line);
        assert!(matches!(
            c.feed(br"yz\r\nHost: a\r\n", false, &mut scratch),
            Some(Secret::Continued)
        ));
        assert!(c.is_clean(), "{c:?}");
        // A break is any control byte but a tab; `\\n` is an escaped backslash.
        assert_eq!(last_break(br"ab\ncd"), Some(4));
        assert_eq!(last_break(br"ab\\ncd"), None);
        assert_eq!(last_break(br"ab\\\ncd"), Some(6));
        assert_eq!(last_break(br"ab\0cd\tef"), Some(4));
        assert_eq!(last_break(br"ab\x0dcd"), Some(6));
        assert_eq!(last_break(br"ab\177"), Some(6));
        let mut buf = [0u8; 8];
        assert_eq!(first_line(br"a\tb\rc", &mut buf), (3, false));
        assert_eq!(first_line(br"abcdefghij", &mut buf), (8, false));
        assert_eq!(first_line(br"abc", &mut buf), (3, true));
        // String ends as the forward walk finds them.
        for (s, end) in [
            (&br#""ab\"c" x"#[..], 6),
            (br#""ab\\" x"#, 5),
            (br#""ab\\\"c" x"#, 8),
            (br#""abc\"#, 5),
        ] {
            assert_eq!(string_end(s, 0).0, end, "{}", String::from_utf8_lossy(s));
        }
    }
}
