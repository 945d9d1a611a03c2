//! Which request paid for an `auth` gap: the evidence, in order of strength, and the
//! rule that ambiguity is never resolved by guessing.
//!
//! 1. **PID and time**: the access-log lines of the gap's thread (`%P`) whose time
//!    window (`%t` to `%t` + `%D`, widened by the time's resolution) holds the gap.
//! 2. **The worker's log write**: in a worker's timeline the next access-log `write()`
//!    after a password check, before the next check, logs the request that paid for
//!    it. Its first bytes (strace's default `-s 32`) usually hold the user; when they
//!    were cut before the user ended, the write is matched to its access-log line by
//!    those bytes (client, ident, start of the user name) and by time.
//! 3. **Time alone**: the requests of the whole log whose window holds the gap.
//!
//! A method ties the gap to a user only when every candidate it finds names the same
//! user; otherwise the gap stays unattributed, with the reason.

use super::model::{AuthGap, LogWrite, Request};

/// Slack around a request's window for clocks read at different moments (µs).
const SLACK_US: i64 = 50_000;
/// Without a duration in the log: how long after its `%t` a request's log line can
/// still be written (µs). Longer than any password check this tool looks for.
const NO_DURATION_WINDOW_US: i64 = 60_000_000;
/// A worker's log write more than this long after the gap is not that gap's (µs).
const WRITE_AFTER_GAP_US: i64 = 30_000_000;

/// When requests were being served ([`Index::coverage`]).
pub(crate) struct Coverage {
    /// The requests' window starts, sorted.
    starts: Vec<i64>,
    /// Per start, the latest end of the windows up to it.
    ends: Vec<i64>,
}

impl Coverage {
    /// Whether a request was being served at `at` (epoch µs).
    pub fn holds(&self, at: i64) -> bool {
        let i = self.starts.partition_point(|&s| s <= at);
        i > 0 && self.ends.get(i - 1).is_some_and(|&end| end >= at)
    }
}

/// How a gap was tied to a user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    /// The thread's own access-log line (`%P`) covers the gap.
    PidAndTime,
    /// The thread's next access-log write names the user.
    LogWrite,
    /// The thread's next access-log write, cut before the user ended, matched to its
    /// access-log line (client, start of the user, time).
    LogLine,
    /// The only user with a request in flight.
    Time,
}

/// Why a gap was not tied to a user.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unattributed {
    /// No evidence names the request.
    NoEvidence,
    /// The worker's log write was cut before the user; `-s` this large shows it.
    Cut(Option<usize>),
    /// The evidence names more than one user.
    Ambiguous,
}

/// The request that paid for a gap.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Payer {
    pub user: String,
    pub method: Method,
    /// The request's status, when the evidence pins one line (or lines that agree).
    pub status: Option<u16>,
}

/// What a set of candidate requests says.
enum Candidates {
    None,
    One { user: String, status: Option<u16> },
    Several,
}

impl Candidates {
    fn of<'r>(requests: impl Iterator<Item = &'r Request>) -> Candidates {
        let mut out = Candidates::None;
        for r in requests {
            let Some(u) = &r.user else { continue };
            out = match out {
                Candidates::None => Candidates::One {
                    user: u.clone(),
                    status: r.status,
                },
                Candidates::One { user, status } if &user == u => Candidates::One {
                    status: status.filter(|s| Some(*s) == r.status),
                    user,
                },
                _ => return Candidates::Several,
            };
        }
        out
    }
}

/// The access-log requests, indexed for attribution, and the workers' log writes
/// matched to their lines.
pub(crate) struct Index<'r> {
    requests: &'r [Request],
    /// `(begin µs, index)` of the requests with a head, by begin.
    heads: Vec<(i64, usize)>,
    /// The resolution of the log's request time (1 s for `%t`).
    resolution_us: i64,
    /// Per write: the lines it can be (indexes into `requests`), or the one line it
    /// is once the others are known to be other writes'.
    lines: Vec<Vec<usize>>,
    /// How long before a write its line can have begun: the longest request window
    /// (so that no candidate line is left out of a write's set).
    reach_us: i64,
    /// The descriptor the given log is written to, when the workers write to several
    /// and one of them is it by the evidence ([`Index::log_fd_of`]).
    log_fd: Option<Option<i64>>,
}

impl<'r> Index<'r> {
    pub fn new(requests: &'r [Request], sub_second_times: bool, writes: &[LogWrite]) -> Index<'r> {
        let mut heads: Vec<(i64, usize)> = requests
            .iter()
            .enumerate()
            .filter(|(_, r)| r.head.is_some())
            .filter_map(|(i, r)| Some((r.begin_us?, i)))
            .collect();
        heads.sort_unstable();
        let resolution_us = if sub_second_times { 1 } else { 1_000_000 };
        let longest = requests
            .iter()
            .filter_map(|r| r.duration_us.and_then(|d| i64::try_from(d).ok()))
            .max()
            .unwrap_or(0);
        let mut index = Index {
            requests,
            heads,
            resolution_us,
            lines: Vec::new(),
            reach_us: resolution_us + longest.max(NO_DURATION_WINDOW_US) + 2 * SLACK_US,
            log_fd: None,
        };
        // The lines each write can be by its bytes and time, worked out once.
        let candidates: Vec<Vec<usize>> = writes
            .iter()
            .map(|w| match w.epoch_at {
                Some(at) => index.lines_of_write(w, at).collect(),
                None => Vec::new(),
            })
            .collect();
        index.log_fd = index.log_fd_of(writes, &candidates);
        index.lines = index.pin(writes, candidates);
        index
    }

    /// Match writes to lines one to one: every line was written by one write, so a
    /// write with a single possible line has it, and that line is no other write's.
    /// Repeated in time order until nothing changes: the first write of a client's
    /// run of requests pins its line, the next one then has one line left, and so on.
    /// And when k writes can only be the same k lines (two requests of one client in
    /// the same second of `%t`), those lines are theirs, and a log is appended in the
    /// order it is written: the earliest write is the line that comes first.
    /// `candidates`: per write, the lines its bytes and time allow.
    fn pin(&self, writes: &[LogWrite], candidates: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
        let mut lines: Vec<Vec<usize>> = writes
            .iter()
            .zip(candidates)
            .map(|(w, c)| self.by_length(w, c))
            .collect();
        // One log per descriptor: a request is written once to each.
        let mut by_fd: std::collections::BTreeMap<Option<i64>, Vec<usize>> =
            std::collections::BTreeMap::new();
        for (i, w) in writes.iter().enumerate() {
            by_fd.entry(w.fd).or_default().push(i);
        }
        for mut order in by_fd.into_values() {
            order.sort_by_key(|&i| (writes.get(i).and_then(|w| w.epoch_at), i));
            self.pin_one_log(&order, &mut lines);
        }
        lines
    }

    /// [`Index::pin`] for the writes `order` (in time order) to one descriptor.
    fn pin_one_log(&self, order: &[usize], lines: &mut [Vec<usize>]) {
        const PASSES: usize = 8;
        // The write that has each line.
        let mut owner: Vec<Option<usize>> = vec![None; self.requests.len()];
        let taken = |owner: &[Option<usize>], l: usize| owner.get(l).copied().flatten().is_some();
        for _ in 0..PASSES {
            let mut changed = false;
            for &i in order {
                let Some(c) = lines.get(i) else { continue };
                if let [only] = c.as_slice() {
                    let only = *only;
                    match owner.get(only).copied().flatten() {
                        Some(o) if o == i => {}
                        // Two writes that can only be the same line: one of them is
                        // another line's (not in the log given); neither is known.
                        Some(o) => {
                            for w in [o, i] {
                                if let Some(c) = lines.get_mut(w) {
                                    c.clear();
                                }
                            }
                            changed = true;
                        }
                        None => {
                            if let Some(slot) = owner.get_mut(only) {
                                *slot = Some(i);
                            }
                            changed = true;
                        }
                    }
                    continue;
                }
                let Some(c) = lines.get_mut(i) else { continue };
                let before = c.len();
                c.retain(|&l| !taken(&owner, l));
                changed |= c.len() != before;
            }
            // Closed groups: k unpinned writes whose possible lines are the same k.
            let mut groups: std::collections::BTreeMap<&[usize], Vec<usize>> =
                std::collections::BTreeMap::new();
            for &i in order {
                if let Some(c) = lines.get(i).filter(|c| c.len() > 1) {
                    groups.entry(c.as_slice()).or_default().push(i);
                }
            }
            let closed: Vec<(Vec<usize>, Vec<usize>)> = groups
                .into_iter()
                .filter(|(set, ws)| set.len() == ws.len())
                .map(|(set, ws)| (set.to_vec(), ws))
                .collect();
            for (mut set, ws) in closed {
                // Lines in file order, writes in time order (`order` is).
                set.sort_unstable();
                for (w, l) in ws.into_iter().zip(set) {
                    if let Some(c) = lines.get_mut(w) {
                        *c = vec![l];
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Of the lines `w` can be by its bytes and time, those of its length, when any
    /// is: a server that logs each request in one `write()` writes the line's bytes
    /// and its newline, so a write of 139 bytes is not the 140-byte line that began
    /// in the next second of `%t`. When none has it (a buffered log writes several
    /// lines at once, a log rewritten with CRLF ends) the length says nothing.
    fn by_length(&self, w: &LogWrite, mut lines: Vec<usize>) -> Vec<usize> {
        let Some(len) = w.len else { return lines };
        let fits = |l: &usize| self.has_length(*l, len);
        if lines.iter().any(fits) {
            lines.retain(fits);
        }
        lines
    }

    /// The descriptor of the given log among several the workers write lines that
    /// start alike to (a server with several `CustomLog`s, traced without `-y`): the
    /// one whose writes have the byte count of a line they can be (a line and its
    /// newline), nearly all of them (4 in 5 or more), twice as often as any other
    /// descriptor's. `None` with one descriptor, or when none stands out.
    /// `candidates`: per write, the lines its bytes and time allow.
    fn log_fd_of(&self, writes: &[LogWrite], candidates: &[Vec<usize>]) -> Option<Option<i64>> {
        let mut fit: std::collections::BTreeMap<Option<i64>, (u64, u64)> =
            std::collections::BTreeMap::new();
        for (w, c) in writes.iter().zip(candidates) {
            let (Some(_), Some(len)) = (w.epoch_at, w.len) else {
                continue;
            };
            let has = c.iter().any(|&l| self.has_length(l, len));
            let e = fit.entry(w.fd).or_default();
            e.0 += u64::from(has);
            e.1 += 1;
        }
        if fit.len() < 2 {
            return None;
        }
        let share = |(n, of): (u64, u64)| n as f64 / of.max(1) as f64;
        let mut ranked: Vec<(f64, Option<i64>)> =
            fit.iter().map(|(fd, c)| (share(*c), *fd)).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        match ranked.as_slice() {
            [(best, fd), (second, _), ..] if *best >= 0.8 && *second * 2.0 <= *best => Some(*fd),
            _ => None,
        }
    }

    /// Whether write `w` goes to the given log, as far as the descriptors tell.
    fn to_log(&self, w: &LogWrite) -> bool {
        self.log_fd.is_none_or(|fd| fd == w.fd)
    }

    /// Whether write `i` (`w`) can be one line only, of its byte count.
    fn is_its_line_by_length(&self, i: usize, w: &LogWrite) -> bool {
        match (self.lines.get(i).map(Vec::as_slice), w.len) {
            (Some([only]), Some(len)) => self.has_length(*only, len),
            _ => false,
        }
    }

    /// Whether line `l` is `len` bytes long with its newline (as one `write()` of it is).
    fn has_length(&self, l: usize, len: u64) -> bool {
        self.requests
            .get(l)
            .and_then(|r| r.line_len)
            .is_some_and(|n| u64::from(n) == len)
    }

    /// The lines write `i` can be.
    fn write_lines(&self, i: usize) -> impl Iterator<Item = &'r Request> + '_ {
        let requests = self.requests;
        self.lines
            .get(i)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter_map(move |&l| requests.get(l))
    }

    /// The window in which `r` was being served: from its logged start (truncated to
    /// the log's resolution) to its end, with slack; `None` without a duration.
    fn window(&self, r: &Request) -> Option<(i64, i64)> {
        self.span(r, None)
    }

    /// [`Index::window`], taking a request without a duration to last `no_duration`
    /// µs when that is given.
    fn span(&self, r: &Request, no_duration: Option<i64>) -> Option<(i64, i64)> {
        let b = r.begin_us?;
        let d = match r.duration_us {
            Some(d) => i64::try_from(d).ok()?,
            None => no_duration?,
        };
        Some((b - SLACK_US, b + self.resolution_us + d + SLACK_US))
    }

    /// The instants some request was being served ([`Index::span`], a request without
    /// a duration taken to last `no_duration` µs), to ask of many instants.
    pub fn coverage(&self, no_duration: i64) -> Coverage {
        let mut spans: Vec<(i64, i64)> = self
            .requests
            .iter()
            .filter_map(|r| self.span(r, Some(no_duration)))
            .collect();
        spans.sort_unstable();
        let mut reach = i64::MIN;
        let ends = spans
            .iter()
            .map(|&(_, end)| {
                reach = reach.max(end);
                reach
            })
            .collect();
        Coverage {
            starts: spans.into_iter().map(|(start, _)| start).collect(),
            ends,
        }
    }

    /// The requests whose window holds the instant `at` (epoch µs).
    fn in_flight(&self, at: i64) -> impl Iterator<Item = &'r Request> + '_ {
        self.requests
            .iter()
            .filter(move |r| self.window(r).is_some_and(|(a, b)| a <= at && at <= b))
    }

    /// The access-log lines a worker's write at `at` (epoch µs) can be: lines that
    /// begin with the written bytes (or that the written bytes begin with) and whose
    /// request was being served then.
    fn lines_of_write<'s>(&'s self, w: &'s LogWrite, at: i64) -> impl Iterator<Item = usize> + 's {
        let reach = self.reach_us;
        let from = self.heads.partition_point(|&(b, _)| b < at - reach);
        let to = self.heads.partition_point(|&(b, _)| b <= at + SLACK_US);
        let requests = self.requests;
        self.heads
            .get(from..to)
            .unwrap_or(&[])
            .iter()
            .map(|&(_, i)| i)
            .filter(move |&i| {
                let Some(r) = requests.get(i) else {
                    return false;
                };
                let Some(head) = r.head.as_deref() else {
                    return false;
                };
                let n = head.len().min(w.head.len());
                // A write shorter than the line's head must be one strace cut.
                let same = head.get(..n) == w.head.get(..n) && (w.cut || n == head.len());
                same && self
                    .span(r, Some(NO_DURATION_WINDOW_US))
                    .is_some_and(|(a, b)| a <= at && at <= b)
            })
    }
}

/// What attribution knows of a gap's thread, each sorted: the starts of its auth gaps,
/// the moments it turned to a request ([`super::model::Turn`]; empty: none traced),
/// and the moments it wrote an access-log line.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Thread<'a> {
    pub gaps: &'a [i64],
    pub turns: &'a [i64],
    pub wrote: &'a [i64],
}

impl Thread<'_> {
    /// Whether the thread went on to another request between `from` and `to`: it
    /// turned to one, or logged one.
    pub fn moved_on(&self, from: i64, to: i64) -> bool {
        any_in(self.turns, from, to) || any_in(self.wrote, from, to)
    }
}

/// Whether sorted `at` holds a moment in `from..to`.
fn any_in(at: &[i64], from: i64, to: i64) -> bool {
    let i = at.partition_point(|&t| t < from);
    at.get(i).is_some_and(|&t| t < to)
}

/// Attribute `gap` to the request that paid for it; `thread` is what is known of its
/// thread, `writes` the access-log writes of the traces.
pub(crate) fn attribute(
    gap: &AuthGap,
    thread: Thread<'_>,
    index: &Index<'_>,
    writes: &[LogWrite],
) -> Result<Payer, Unattributed> {
    let Thread {
        gaps: same_pid,
        turns,
        ..
    } = thread;
    let mut ambiguous = false;
    let mid = match (gap.epoch_start, gap.epoch_end) {
        (Some(s), Some(e)) => Some(s + (e - s) / 2),
        _ => None,
    };
    if let Some(mid) = mid {
        let same_thread = index.in_flight(mid).filter(|r| r.pid == Some(gap.pid));
        match Candidates::of(same_thread) {
            Candidates::One { user, status } => {
                return Ok(Payer {
                    user,
                    method: Method::PidAndTime,
                    status,
                })
            }
            Candidates::Several => ambiguous = true,
            Candidates::None => {}
        }
    }
    // The thread's next log write is the request that paid for the gap, unless the
    // thread verified another request's password (a later gap) before writing it.
    // With the thread's turns traced, a later check with neither a turn nor a log
    // write of the thread before it is the same request's (a check again after an
    // internal redirect): the write after it is still this gap's.
    let later = || same_pid.iter().copied().filter(|&start| start > gap.start);
    let next_gap = later()
        .find(|&start| turns.is_empty() || thread.moved_on(gap.end, start))
        .unwrap_or(i64::MAX);
    let checked_again = later().any(|start| start < next_gap);
    let mut after: Vec<(usize, &LogWrite)> = writes
        .iter()
        .enumerate()
        .filter(|(_, w)| {
            w.pid == gap.pid && w.at >= gap.end && w.at - gap.end <= WRITE_AFTER_GAP_US
        })
        .filter(|(_, w)| w.at < next_gap)
        .collect();
    after.sort_by_key(|(i, w)| (w.at, *i));
    // Several writes after checks of one request, before its worker turns to the
    // next, that name several users (an HTTP/2 connection's streams, say) tell nothing.
    let next_turn = turns
        .get(turns.partition_point(|&t| t < gap.end))
        .copied()
        .unwrap_or(i64::MAX);
    let users = || {
        after
            .iter()
            .filter(|(_, w)| w.at < next_turn && index.to_log(w))
            .filter_map(|(_, w)| w.user.as_deref())
            .filter(|u| *u != "-")
    };
    let named_several = users().next().is_some_and(|u| users().any(|v| v != u));
    if checked_again && named_several {
        ambiguous = true;
        after.clear();
    }
    let mut cut = None;
    if let Some(&(first, w)) = after.first() {
        // The request's line: that of the first write whose byte count is its one
        // possible line's. A server with several `CustomLog`s writes each request to
        // each, the first not always to the log given (whose lines start alike, so
        // the bytes cannot tell); only a write to the given log has the line's
        // length. Else the first write's line, when its bytes and time name one.
        let to_log = || after.iter().filter(|(_, w)| index.to_log(w));
        let i = to_log()
            .find(|(i, w)| index.is_its_line_by_length(*i, w))
            .or_else(|| to_log().next())
            .map_or(first, |(i, _)| *i);
        let line = w.epoch_at.map(|_| Candidates::of(index.write_lines(i)));
        match &w.user {
            Some(u) if u != "-" => {
                let status = match line {
                    Some(Candidates::One { user, status }) if &user == u => status,
                    _ => None,
                };
                return Ok(Payer {
                    user: u.clone(),
                    method: Method::LogWrite,
                    status,
                });
            }
            Some(_) => {}
            None => match line {
                Some(Candidates::One { user, status }) => {
                    return Ok(Payer {
                        user,
                        method: Method::LogLine,
                        status,
                    })
                }
                // Several lines fit the cut bytes, or none: a longer -s tells.
                _ => cut = Some(w.string_limit),
            },
        }
    }
    if let Some(mid) = mid {
        match Candidates::of(index.in_flight(mid)) {
            Candidates::One { user, status } => {
                return Ok(Payer {
                    user,
                    method: Method::Time,
                    status,
                })
            }
            Candidates::Several => ambiguous = true,
            Candidates::None => {}
        }
    }
    Err(if let Some(limit) = cut {
        Unattributed::Cut(limit)
    } else if ambiguous {
        Unattributed::Ambiguous
    } else {
        Unattributed::NoEvidence
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::authjoin::model::PathKind;

    const S: i64 = 1_000_000;

    fn request(user: &str, line: &str, begin_s: i64, status: u16, dur: Option<u64>) -> Request {
        Request {
            user: Some(user.into()),
            status: Some(status),
            begin_us: Some(begin_s * S),
            offset_minutes: Some(0),
            day_offset_minutes: None,
            duration_us: dur,
            pid: None,
            kind: PathKind::Page,
            client: line.split(' ').next().map(str::to_string),
            head: Some(line.as_bytes().into()),
            line_len: None,
        }
    }

    fn gap(pid: u32, start_us: i64, end_us: i64) -> AuthGap {
        AuthGap {
            pid,
            start: start_us,
            end: end_us,
            epoch_start: Some(start_us),
            epoch_end: Some(end_us),
            seconds: (end_us - start_us) as f64 / 1e6,
            detail: None,
            after_read: true,
            at: "trace.1:1".into(),
        }
    }

    fn cut_write(pid: u32, at: i64, bytes: &str) -> LogWrite {
        LogWrite {
            pid,
            at,
            user: None,
            string_limit: Some(64),
            epoch_at: Some(at),
            head: bytes.as_bytes().to_vec(),
            cut: true,
            fd: Some(8),
            len: None,
        }
    }

    /// A thread with these gap starts, turns and the times of these writes.
    fn thread<'a>(gaps: &'a [i64], turns: &'a [i64], writes: &[LogWrite]) -> Thread<'a> {
        let wrote: Vec<i64> = writes.iter().map(|w| w.at).collect();
        Thread {
            gaps,
            turns,
            wrote: Vec::leak(wrote),
        }
    }

    fn named_write(pid: u32, at: i64, user: &str) -> LogWrite {
        LogWrite {
            user: Some(user.into()),
            string_limit: None,
            ..cut_write(pid, at, &format!("127.0.0.1 - {user} [25/Nov/2026:2"))
        }
    }

    #[test]
    fn a_check_again_with_no_turn_between_is_the_same_requests() {
        // nginx: recvfrom the request (a turn), check, check again after the `index`
        // redirect, write the line; then epoll_wait (a turn) and the next request.
        let gaps = [gap(7, S, S + 300_000), gap(7, S + 400_000, S + 700_000)];
        let starts = [gaps[0].start, gaps[1].start];
        let turns = [S / 2, 2 * S];
        let w = [named_write(7, S + 800_000, "bob")];
        let index = Index::new(&[], true, &w);
        for g in &gaps {
            let payer = attribute(g, thread(&starts, &turns, &w), &index, &w).unwrap();
            assert_eq!(
                (payer.user.as_str(), payer.method),
                ("bob", Method::LogWrite)
            );
        }
        // A turn between the checks: two requests, the first logged nothing of its own.
        let turned = [S / 2, S + 350_000, 2 * S];
        assert_eq!(
            attribute(&gaps[0], thread(&starts, &turned, &w), &index, &w),
            Err(Unattributed::NoEvidence)
        );
        // No turns traced at all: nothing says the checks are one request's.
        assert_eq!(
            attribute(&gaps[0], thread(&starts, &[], &w), &index, &w),
            Err(Unattributed::NoEvidence)
        );
        // Two writes naming two users after checks of one request (an HTTP/2
        // connection's streams): no guess for the first check.
        let two = [
            named_write(7, S + 800_000, "bob"),
            named_write(7, S + 850_000, "carol"),
        ];
        let index = Index::new(&[], true, &two);
        assert_eq!(
            attribute(&gaps[0], thread(&starts, &turns, &two), &index, &two),
            Err(Unattributed::Ambiguous)
        );
        let last = attribute(&gaps[1], thread(&starts, &turns, &two), &index, &two).unwrap();
        assert_eq!(last.user, "bob");
        // A log write between the checks ends a request, turn or not (Apache's event
        // MPM hands a kept-alive TLS connection to a thread that reads it at once).
        let each = [
            named_write(7, S + 350_000, "carol"),
            named_write(7, S + 800_000, "bob"),
        ];
        let index = Index::new(&[], true, &each);
        let first = attribute(&gaps[0], thread(&starts, &[S / 2], &each), &index, &each).unwrap();
        assert_eq!(first.user, "carol");
    }

    /// The status each of the first `n` writes is pinned to.
    fn pinned_statuses(index: &Index<'_>, n: usize) -> Vec<Option<u16>> {
        (0..n)
            .map(|i| match Candidates::of(index.write_lines(i)) {
                Candidates::One { status, .. } => status,
                _ => None,
            })
            .collect()
    }

    const LONG: &str = "127.0.0.1 - alexandra.longname@example.org [25/Nov/2026:20:04:50 +0000]";
    const OTHER: &str = "127.0.0.1 - alexandra.longname@example.net [25/Nov/2026:20:04:50 +0000]";

    #[test]
    fn a_cut_write_is_matched_to_its_access_log_line() {
        let requests = [
            request("alexandra.longname@example.org", LONG, 100, 401, None),
            request(
                "bob",
                "127.0.0.1 - bob [25/Nov/2026:20:04:50 +0000]",
                100,
                200,
                None,
            ),
        ];
        let g = gap(7, 100 * S + 100_000, 100 * S + 400_000);
        let w = [cut_write(
            7,
            100 * S + 450_000,
            "127.0.0.1 - alexandra.longname@e",
        )];
        let index = Index::new(&requests, false, &w);
        let payer = attribute(&g, thread(&[g.start], &[], &[]), &index, &w).unwrap();
        assert_eq!(payer.user, "alexandra.longname@example.org");
        assert_eq!(payer.method, Method::LogLine);
        assert_eq!(payer.status, Some(401));
        // The same bytes written minutes later fit no line of that time.
        let late = [cut_write(7, 300 * S, "127.0.0.1 - alexandra.longname@e")];
        let g2 = gap(7, 300 * S - 300_000, 300 * S - 50_000);
        let index = Index::new(&requests, false, &late);
        assert_eq!(
            attribute(&g2, thread(&[g2.start], &[], &[]), &index, &late),
            Err(Unattributed::Cut(Some(64)))
        );
    }

    #[test]
    fn writes_pin_their_lines_one_to_one_in_time_order() {
        // Three requests of one client and user within seconds, the second a wrong
        // password; the writes show only `192.0.2.9 - sam [25/Nov/2026:2`.
        let line = "192.0.2.9 - sam [25/Nov/2026:20:04:50 +0000]";
        let requests = [
            request("sam", line, 100, 200, None),
            request("sam", line, 101, 401, None),
            request("sam", line, 103, 200, None),
        ];
        let bytes = "192.0.2.9 - sam [25/Nov/2026:2";
        let w = [
            cut_write(7, 103 * S + 500_000, bytes),
            cut_write(8, 101 * S + 600_000, bytes),
            cut_write(7, 100 * S + 400_000, bytes),
        ];
        let index = Index::new(&requests, false, &w);
        let statuses = pinned_statuses(&index, 3);
        assert_eq!(statuses, [Some(200), Some(401), Some(200)]);
    }

    #[test]
    fn two_lines_in_one_second_go_to_the_writes_in_file_order() {
        // A wrong password and then the page, in the same second of %t.
        let line = "192.0.2.9 - sam [25/Nov/2026:20:04:50 +0000]";
        let requests = [
            request("sam", line, 100, 401, None),
            request("sam", line, 100, 200, None),
        ];
        let bytes = "192.0.2.9 - sam [25/Nov/2026:2";
        let w = [
            cut_write(8, 100 * S + 900_000, bytes),
            cut_write(7, 100 * S + 400_000, bytes),
        ];
        let index = Index::new(&requests, false, &w);
        let statuses = pinned_statuses(&index, 2);
        assert_eq!(statuses, [Some(200), Some(401)]);
        // The same two requests also written to a second log (CustomLog twice): each
        // log's writes are matched on their own.
        let mut twice = w.to_vec();
        twice.extend(w.iter().map(|w| LogWrite {
            fd: Some(9),
            at: w.at + 10,
            epoch_at: w.epoch_at.map(|t| t + 10),
            ..w.clone()
        }));
        let index = Index::new(&requests, false, &twice);
        let statuses = pinned_statuses(&index, 4);
        assert_eq!(statuses, [Some(200), Some(401), Some(200), Some(401)]);
        // A third write that could be either line (an untraced worker wrote one of
        // them, say) leaves them open: three writes, two lines, no closed group.
        let w3 = [
            w[0].clone(),
            w[1].clone(),
            cut_write(9, 100 * S + 950_000, bytes),
        ];
        let index = Index::new(&requests, false, &w3);
        assert!(matches!(
            Candidates::of(index.write_lines(1)),
            Candidates::One { status: None, .. }
        ));
    }

    #[test]
    fn the_write_length_tells_a_line_from_the_next_seconds_line() {
        // From a real capture (prefork, -s 32, plain %t): bc13user's wrong password
        // began at 01:11:01.56 and was logged at 01:11:01.986; the retry's line says
        // 01:11:02, which is within the slack of that write. Only the write's 139
        // bytes tell that it is the 401's line (139 bytes) and not the 200's (140).
        let lines = [
            "127.0.0.1 - bc13user [27/Nov/2026:01:11:01 +0000] \"GET /wiki/index.html \
             HTTP/1.1\" 401 421 \"-\" \"curl/7.88.1\" TLSv1.3 TLS_AES_256_GCM_SHA384",
            "127.0.0.1 - bc13user [27/Nov/2026:01:11:02 +0000] \"GET /wiki/index.html \
             HTTP/1.1\" 200 1395 \"-\" \"curl/7.88.1\" TLSv1.3 TLS_AES_256_GCM_SHA384",
            "127.0.0.1 - bc13user [27/Nov/2026:01:11:03 +0000] \"GET /wiki/style.css \
             HTTP/1.1\" 200 900 \"https://127.0.0.1:36355/wiki/index.html\" \
             \"curl/7.88.1\" TLSv1.3 TLS_AES_256_GCM_SHA384",
        ];
        let requests: Vec<Request> = [(lines[0], 1, 401), (lines[1], 2, 200), (lines[2], 3, 200)]
            .into_iter()
            .map(|(l, at, status)| Request {
                line_len: u32::try_from(l.len() + 1).ok(),
                ..request("bc13user", l, at, status, None)
            })
            .collect();
        let g = gap(12582, S + 564_724, S + 985_492);
        let bytes = "127.0.0.1 - bc13user [27/Nov/202";
        let write = |at: i64, len: u64| LogWrite {
            len: Some(len),
            user: Some("bc13user".into()),
            ..cut_write(12582, at, bytes)
        };
        let w = [
            write(S + 986_023, 139),
            write(3 * S + 211_667, 140),
            write(4 * S + 427_882, 176),
        ];
        let index = Index::new(&requests, false, &w);
        let payer = attribute(&g, thread(&[g.start], &[], &[]), &index, &w).unwrap();
        assert_eq!(
            (payer.user.as_str(), payer.method, payer.status),
            ("bc13user", Method::LogWrite, Some(401))
        );
        assert_eq!(
            pinned_statuses(&index, 3),
            [Some(401), Some(200), Some(200)]
        );
        // Without the lengths each write could be any line that had begun by then:
        // the first either of two, the others any of three. Nothing is pinned, and the
        // wrong password's gap has no status.
        let blind: Vec<LogWrite> = w
            .iter()
            .map(|w| LogWrite {
                len: None,
                ..w.clone()
            })
            .collect();
        let index = Index::new(&requests, false, &blind);
        assert_eq!(pinned_statuses(&index, 1), [None]);
        assert_eq!(
            attribute(&g, thread(&[g.start], &[], &[]), &index, &blind)
                .unwrap()
                .status,
            None
        );
        // A length no line has (a buffered log's write of several lines) leaves the
        // bytes and the time to decide, as before.
        let buffered = [write(S + 986_023, 279)];
        let index = Index::new(&requests, false, &buffered);
        assert!(matches!(
            Candidates::of(index.write_lines(0)),
            Candidates::One { status: None, .. }
        ));
    }

    /// Two `CustomLog`s whose lines start alike, traced without `-y` (as in a real
    /// capture of Apache 2.4.71): each request is written to fd 7 (the first log, not
    /// given) and then to fd 8 (the given one, with `%T` after it). The first log's
    /// line of the wrong password has the byte count of the given log's line of the
    /// retry (`401 381` is two bytes longer than `200 7`, `%T` adds two): only fd 8's
    /// writes are the given log's, and they name each gap's status.
    #[test]
    fn a_second_custom_log_is_not_taken_for_the_given_one() {
        let head = "127.0.0.1 - first.last [28/Nov/2026:03:19:15 +0000] \"GET /private/ HTTP/1.1\"";
        let tail = "\"-\" \"curl/7.88.1\" TLSv1.3 TLS_AES_256_GCM_SHA384";
        let given = [
            format!("{head} 401 381 {tail} 0"),
            format!("{head} 200 7 {tail} 0"),
        ];
        let requests: Vec<Request> = [(&given[0], 401), (&given[1], 200)]
            .into_iter()
            .map(|(l, status)| Request {
                line_len: u32::try_from(l.len() + 1).ok(),
                ..request("first.last", l, 15, status, None)
            })
            .collect();
        let write = |fd: i64, at: i64, line: &str| LogWrite {
            len: Some(line.len() as u64 + 1),
            user: Some("first.last".into()),
            fd: Some(fd),
            ..cut_write(4242, at, "127.0.0.1 - first.last [28/Nov/2")
        };
        let other = |l: &str| l.strip_suffix(" 0").unwrap().to_string();
        let w = [
            write(7, 15 * S + 196_000, &other(&given[0])),
            write(8, 15 * S + 196_100, &given[0]),
            write(7, 15 * S + 386_000, &other(&given[1])),
            write(8, 15 * S + 386_100, &given[1]),
        ];
        let g = [
            gap(4242, 15 * S + 10_000, 15 * S + 195_000),
            gap(4242, 15 * S + 200_000, 15 * S + 385_000),
        ];
        let starts = [g[0].start, g[1].start];
        let index = Index::new(&requests, false, &w);
        let statuses: Vec<Option<u16>> = g
            .iter()
            .map(|g| {
                attribute(g, thread(&starts, &[], &[]), &index, &w)
                    .unwrap()
                    .status
            })
            .collect();
        assert_eq!(statuses, [Some(401), Some(200)]);
        // With one descriptor (one log, or `-y` keeping the given log's writes) the
        // first write after the gap is the line, as before.
        let mine = [w[1].clone(), w[3].clone()];
        let index = Index::new(&requests, false, &mine);
        assert_eq!(
            attribute(&g[0], thread(&starts, &[], &[]), &index, &mine)
                .unwrap()
                .status,
            Some(401)
        );
    }

    #[test]
    fn cut_bytes_that_fit_two_users_name_neither() {
        let requests = [
            request("alexandra.longname@example.org", LONG, 100, 200, None),
            request("alexandra.longname@example.net", OTHER, 100, 200, None),
        ];
        let g = gap(7, 100 * S + 100_000, 100 * S + 400_000);
        let w = [cut_write(
            7,
            100 * S + 450_000,
            "127.0.0.1 - alexandra.longname@e",
        )];
        let index = Index::new(&requests, false, &w);
        assert_eq!(
            attribute(&g, thread(&[g.start], &[], &[]), &index, &w),
            Err(Unattributed::Cut(Some(64)))
        );
    }

    #[test]
    fn second_resolution_times_widen_the_window_instead_of_naming_the_wrong_user() {
        // ann's request really began at 10.9 s (logged 10), took 0.4 s; bob's began at
        // 11.0 s. A gap at 10.95-11.25 s is ann's, but by its logged second her
        // request "ended" at 10.4 s: only bob's window would hold it.
        let requests = [
            request("ann", "192.0.2.1 - ann [x", 10, 200, Some(400_000)),
            request("bob", "192.0.2.2 - bob [x", 11, 200, Some(400_000)),
        ];
        let g = gap(7, 10 * S + 950_000, 11 * S + 250_000);
        let index = Index::new(&requests, false, &[]);
        assert_eq!(
            attribute(&g, thread(&[g.start], &[], &[]), &index, &[]),
            Err(Unattributed::Ambiguous)
        );
        // With sub-second times the windows are exact and only bob's holds it.
        let index = Index::new(&requests, true, &[]);
        let payer = attribute(&g, thread(&[g.start], &[], &[]), &index, &[]).unwrap();
        assert_eq!((payer.user.as_str(), payer.method), ("bob", Method::Time));
    }

    #[test]
    fn the_same_thread_serving_two_users_in_one_second_is_ambiguous_by_pid() {
        let mut a = request("ann", "192.0.2.1 - ann [x", 10, 200, Some(300_000));
        let mut b = request("bob", "192.0.2.2 - bob [x", 10, 401, Some(300_000));
        a.pid = Some(7);
        b.pid = Some(7);
        let requests = [a, b];
        let index = Index::new(&requests, false, &[]);
        let g = gap(7, 10 * S + 500_000, 10 * S + 800_000);
        assert_eq!(
            attribute(&g, thread(&[g.start], &[], &[]), &index, &[]),
            Err(Unattributed::Ambiguous)
        );
        // The worker's own write settles it, and its line gives the status.
        let w = [LogWrite {
            pid: 7,
            at: 10 * S + 850_000,
            user: Some("bob".into()),
            string_limit: None,
            epoch_at: Some(10 * S + 850_000),
            head: b"192.0.2.2 - bob [x".to_vec(),
            cut: true,
            fd: Some(8),
            len: None,
        }];
        let index = Index::new(&requests, false, &w);
        let payer = attribute(&g, thread(&[g.start], &[], &[]), &index, &w).unwrap();
        assert_eq!(
            (payer.user.as_str(), payer.method, payer.status),
            ("bob", Method::LogWrite, Some(401))
        );
    }
}
