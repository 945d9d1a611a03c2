//! Per-input and per-thread state: the context ring, pending calls, raw intervals.

#[allow(unused_imports)]
use super::*;

/// A resource as seen by one call: named now, or inherited and named at report time.
#[derive(Clone, Debug, Default)]
pub(super) struct ResRef {
    pub(super) label: Vec<u8>,
    pub(super) kind: ResKind,
    pub(super) inherited: Option<(TableKey, u32, bool)>,
    pub(super) fd: i64,
}

impl ResRef {
    pub(super) fn to_raw(&self) -> RawRes {
        RawRes {
            label: if self.inherited.is_some() {
                None
            } else {
                Some(self.label.clone().into_boxed_slice())
            },
            kind: self.kind,
            inherited: self.inherited,
            fd: self.fd,
        }
    }
}

/// How a call spends its time, as far as its name tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum CallClass {
    /// Waits by nature (`accept`, `poll`, `nanosleep`…).
    Wait,
    /// Moves data: a wait on sockets/pipes/terminals, I/O on files.
    Data,
    /// File system work or a sync.
    Io,
    /// `execve`: a new program.
    Exec,
    /// Anything else.
    #[default]
    Other,
}

/// How a slot's text is made from its raw parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(super) enum Shape {
    /// `name(args) = ret <dur>`.
    Call,
    /// `name(args <unfinished ...>`.
    Unfinished,
    /// `--- SIG info ---` (the signal's name in `ret`, its info in `args`).
    Signal,
    /// Already in `text`.
    #[default]
    Text,
}

/// One call (or signal) of context, with buffers reused across lines.
///
/// Only the calls next to a reported interval are ever shown, so a call's raw parts
/// are kept and its (redacted) text is made when an interval is recorded
/// ([`CtxSlot::render`]); so is the hash it carries ([`CtxSlot::hash`]): looking
/// for one in every call was a quarter of the per-line cost of `gaps`.
#[derive(Debug, Default)]
pub(super) struct CtxSlot {
    pub(super) shape: Shape,
    pub(super) text: Vec<u8>,
    pub(super) args: Vec<u8>,
    pub(super) ret: Vec<u8>,
    pub(super) dur: Option<u64>,
    pub(super) name: Vec<u8>,
    pub(super) line: u64,
    pub(super) res: Vec<ResRef>,
    pub(super) nres: usize,
    /// Whether the call's hash is looked for (a described call; not the start of an
    /// unfinished call before it resumes, nor a signal or text).
    pub(super) scan_hash: bool,
    pub(super) class: CallClass,
    pub(super) first: bool,
    /// A data call: its fd's carry before it, to redact what continues earlier data.
    pub(super) feed: Option<Feed>,
    /// What [`CtxSlot::hash`] found, once it has looked: a slot stays in the ring for
    /// several calls and each gap after it asks again.
    pub(super) hash_memo: std::cell::Cell<Option<Option<HashInfo>>>,
}

impl CtxSlot {
    pub(super) fn reset(&mut self, line: u64) {
        self.shape = Shape::Text;
        self.text.clear();
        self.args.clear();
        self.ret.clear();
        self.dur = None;
        self.name.clear();
        self.line = line;
        self.nres = 0;
        self.scan_hash = false;
        self.class = CallClass::Other;
        self.first = false;
        self.feed = None;
        self.hash_memo.set(None);
    }

    pub(super) fn next_res(&mut self) -> Option<&mut ResRef> {
        if self.nres >= 3 {
            return None;
        }
        if self.res.len() <= self.nres {
            self.res.push(ResRef::default());
        }
        let r = self.res.get_mut(self.nres)?;
        r.label.clear();
        r.kind = ResKind::Unknown;
        r.inherited = None;
        r.fd = -1;
        Some(r)
    }

    pub(super) fn commit_res(&mut self) {
        self.nres += 1;
    }

    pub(super) fn resources(&self) -> &[ResRef] {
        self.res.get(..self.nres).unwrap_or_default()
    }

    /// The password hash the call's arguments carry (with whether it is a whole
    /// htpasswd entry alone), else its return value; only for described calls.
    pub(super) fn hash(&self, scratch: &mut Vec<u8>) -> Option<HashInfo> {
        if !self.scan_hash {
            return None;
        }
        if let Some(memo) = self.hash_memo.get() {
            return memo;
        }
        let hash = self.find_hash(scratch);
        self.hash_memo.set(Some(hash));
        hash
    }

    fn find_hash(&self, scratch: &mut Vec<u8>) -> Option<HashInfo> {
        let found = super::secrets::hash_in(&self.args, scratch).map(|mut h| {
            h.only_entry = super::secrets::only_entry(&self.args);
            h
        });
        match (found, self.shape) {
            (None, Shape::Call) => super::secrets::hash_in(&self.ret, scratch),
            (found, _) => found,
        }
    }

    /// Keep a call's parts for [`CtxSlot::render`]; `ret: None` for a call cut short.
    pub(super) fn set_call(&mut self, args: &[u8], ret: Option<&[u8]>, dur: Option<u64>) {
        self.hash_memo.set(None);
        self.args.clear();
        self.args.extend_from_slice(args);
        self.ret.clear();
        match ret {
            Some(r) => {
                self.shape = Shape::Call;
                self.ret.extend_from_slice(r);
                self.dur = dur;
            }
            None => {
                self.shape = Shape::Unfinished;
                self.dur = None;
            }
        }
    }

    /// The text shown for this call: shortened, secrets redacted.
    pub(super) fn render(&self, scratch: &mut Vec<u8>) -> Box<[u8]> {
        let mut out = Vec::new();
        // A copy: rendering replays the carry, the slot keeps the state before the call.
        let mut feed = self.feed;
        match self.shape {
            Shape::Call => {
                render_call(
                    &mut out,
                    &self.name,
                    &self.args,
                    Some(&self.ret),
                    self.dur,
                    false,
                    scratch,
                    feed.as_mut(),
                );
            }
            Shape::Unfinished => {
                render_call(
                    &mut out,
                    &self.name,
                    &self.args,
                    None,
                    None,
                    true,
                    scratch,
                    feed.as_mut(),
                );
            }
            Shape::Signal => render_signal(&mut out, &self.ret, &self.args, scratch),
            Shape::Text => out.extend_from_slice(&self.text),
        }
        out.into_boxed_slice()
    }
}

/// The last calls of a thread, oldest overwritten first. Slots are boxed so that
/// putting a call in swaps two pointers, not two slots' worth of fields.
#[derive(Debug)]
pub(super) struct Ring {
    // Boxed on purpose: a push swaps the boxes with the thread's current slot.
    #[allow(clippy::vec_box)]
    pub(super) slots: Vec<Box<CtxSlot>>,
    pub(super) cap: usize,
    pub(super) head: usize,
    pub(super) len: usize,
}

impl Ring {
    pub(super) fn new(cap: usize) -> Ring {
        Ring {
            slots: Vec::new(),
            cap: cap.max(1),
            head: 0,
            len: 0,
        }
    }

    /// Put `cur` in as the newest; `cur` gets the evicted slot's buffers.
    pub(super) fn push(&mut self, cur: &mut Box<CtxSlot>) {
        if self.slots.len() < self.cap {
            self.slots.push(std::mem::take(cur));
            self.head = self.slots.len() % self.cap;
        } else if let Some(s) = self.slots.get_mut(self.head) {
            std::mem::swap(s, cur);
            self.head = (self.head + 1) % self.cap;
        }
        self.len = (self.len + 1).min(self.cap);
    }

    /// Newest first.
    pub(super) fn iter(&self) -> impl Iterator<Item = &CtxSlot> + '_ {
        let n = self.slots.len();
        (0..self.len).filter_map(move |k| {
            let i = (self.head + n * 2 - 1 - k) % n.max(1);
            self.slots.get(i).map(|s| &**s)
        })
    }

    pub(super) fn newest(&self) -> Option<&CtxSlot> {
        self.iter().next()
    }

    /// Empty, as [`Ring::new`] makes it, keeping the slots' buffers: the slots past
    /// `len` are never shown, and each is reset before it is filled again.
    pub(super) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }
}

#[derive(Debug, Default)]
pub(super) struct Pending {
    pub(super) active: bool,
    pub(super) name: Vec<u8>,
    pub(super) args: Vec<u8>,
    pub(super) start: Option<i64>,
    pub(super) line: u64,
    pub(super) first: bool,
}

#[derive(Debug)]
pub(super) struct Thread {
    pub(super) prev_end: Option<i64>,
    pub(super) prev_exact: bool,
    pub(super) timers: u32,
    pub(super) in_timer: bool,
    pub(super) events: u64,
    pub(super) ring: Ring,
    pub(super) cur: Box<CtxSlot>,
    pub(super) pending: Pending,
    /// The previous call's name (for `exit_group` before an exit).
    pub(super) prev_was_exit: bool,
}

impl Thread {
    pub(super) fn new(ring: usize) -> Thread {
        Thread {
            prev_end: None,
            prev_exact: false,
            timers: 0,
            in_timer: false,
            events: 0,
            ring: Ring::new(ring),
            cur: Box::default(),
            pending: Pending::default(),
            prev_was_exit: false,
        }
    }

    /// The state of [`Thread::new`] again, keeping the buffers (for reuse by a new
    /// thread).
    pub(super) fn clear(&mut self) {
        // Every field named, so that a new one cannot be left out.
        let Thread {
            prev_end,
            prev_exact,
            timers,
            in_timer,
            events,
            ring,
            cur,
            pending,
            prev_was_exit,
        } = self;
        *prev_end = None;
        *prev_exact = false;
        *timers = 0;
        *in_timer = false;
        *events = 0;
        ring.clear();
        cur.reset(0);
        let Pending {
            active,
            name,
            args,
            start,
            line,
            first,
        } = pending;
        *active = false;
        name.clear();
        args.clear();
        *start = None;
        *line = 0;
        *first = false;
        *prev_was_exit = false;
    }
}

/// Per input: counters that stay, and state dropped at its end.
#[derive(Debug, Default)]
pub(super) struct InputState {
    pub(super) name: String,
    pub(super) pid_hint: Option<u32>,
    pub(super) scope: u32,
    pub(super) lines: u64,
    pub(super) trace: u64,
    pub(super) threads: u64,
    pub(super) clock: Option<Clock>,
    pub(super) mixed_clock: bool,
    pub(super) relative_under_ff: bool,
    /// Absolute stamps read, and whether any had a fraction of a second: none in
    /// many means whole seconds (`-t`, `precision:s`), too coarse to measure a gap.
    pub(super) stamps: u64,
    pub(super) fractional: bool,
    pub(super) day: i64,
    pub(super) rollovers: u32,
    pub(super) last_tod: Option<u64>,
    pub(super) rel_acc: i64,
    pub(super) first: Option<i64>,
    pub(super) last: Option<i64>,
    pub(super) calls: u64,
    /// Calls with a numeric result, and whether any of them succeeded: none in many
    /// means only failed calls were traced (`strace -Z`), the rest hidden.
    pub(super) results: u64,
    pub(super) succeeded: bool,
    pub(super) calls_with_duration: u64,
    pub(super) never_resumed: u64,
    pub(super) resumed_without_start: u64,
    pub(super) timer_signals: u64,
    pub(super) unprefixed: u64,
    pub(super) pseudo_renamed: Option<u32>,
    /// Day shift for `-t`/`-tt` inputs, decided in `finish`.
    pub(super) day_shift: i64,
    // Transient (cleared at end_input).
    pub(super) live: FxHashSet<u32>,
    pub(super) children: FxHashSet<u32>,
    pub(super) attached: FxHashSet<u32>,
    pub(super) unprefixed_pid: Option<u32>,
    pub(super) pseudo_active: bool,
    pub(super) seen_prefix: bool,
    pub(super) glued: Vec<u8>,
    pub(super) intervals_from: usize,
}

/// A resource in a stored interval.
#[derive(Clone, Debug)]
pub(super) struct RawRes {
    pub(super) label: Option<Box<[u8]>>,
    pub(super) kind: ResKind,
    pub(super) inherited: Option<(TableKey, u32, bool)>,
    pub(super) fd: i64,
}

#[derive(Clone, Debug)]
pub(super) struct RawInterval {
    pub(super) input: u32,
    pub(super) line: u64,
    pub(super) before_line: Option<u64>,
    pub(super) pid: u32,
    pub(super) scope: u32,
    pub(super) clock: Clock,
    pub(super) start: i64,
    pub(super) end: i64,
    pub(super) inside_call: bool,
    pub(super) exact: bool,
    pub(super) timers: u32,
    pub(super) before: Option<Box<[u8]>>,
    pub(super) after: Option<Box<[u8]>>,
    pub(super) call: Option<Box<[u8]>>,
    pub(super) class: CallClass,
    pub(super) primary: Option<RawRes>,
    pub(super) resources: Vec<RawRes>,
    pub(super) hash: Option<HashInfo>,
    pub(super) first: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_newest() {
        let mut r = Ring::new(3);
        for k in 0..5u64 {
            let mut s = Box::new(CtxSlot {
                line: k,
                ..CtxSlot::default()
            });
            r.push(&mut s);
        }
        let lines: Vec<u64> = r.iter().map(|s| s.line).collect();
        assert_eq!(lines, [4, 3, 2]);
    }

    /// A cleared ring (or thread) behaves as a new one: the stale slots it keeps for
    /// their buffers are never shown.
    #[test]
    fn cleared_ring_and_thread_are_as_new() {
        let push = |r: &mut Ring, k: u64| {
            let mut s = Box::<CtxSlot>::default();
            s.reset(k);
            s.name.extend_from_slice(b"read");
            r.push(&mut s);
        };
        for before in 0..5u64 {
            for after in 0..5u64 {
                let (mut fresh, mut used) = (Ring::new(3), Ring::new(3));
                for k in 0..before {
                    push(&mut used, 100 + k);
                }
                used.clear();
                assert!(used.newest().is_none());
                for k in 0..after {
                    push(&mut fresh, k);
                    push(&mut used, k);
                }
                let lines = |r: &Ring| r.iter().map(|s| s.line).collect::<Vec<u64>>();
                assert_eq!(lines(&used), lines(&fresh), "{before} then {after}");
            }
        }
        let mut th = Thread::new(3);
        th.prev_end = Some(5);
        th.prev_exact = true;
        th.timers = 2;
        th.in_timer = true;
        th.events = 9;
        th.cur.reset(7);
        th.cur.args.extend_from_slice(b"3, \"x\"");
        th.ring.push(&mut th.cur);
        th.pending.active = true;
        th.pending.name.extend_from_slice(b"read");
        th.pending.start = Some(1);
        th.pending.line = 3;
        th.pending.first = true;
        th.prev_was_exit = true;
        th.clear();
        // As new, but for the ring's kept slots.
        th.ring.slots.clear();
        assert_eq!(format!("{th:?}"), format!("{:?}", Thread::new(3)));
    }
}
