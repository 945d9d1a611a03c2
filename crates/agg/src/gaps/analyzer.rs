//! The analyzer: lines in, gaps and blocked intervals out.

#[allow(unused_imports)]
use super::*;

/// Finds gaps in strace output, input by input, line by line (see the module docs).
#[derive(Debug)]
pub struct GapAnalyzer {
    threads: FxHashMap<u32, Thread>,
    /// Threads that ended, cleared, for new ones to reuse: their context buffers are
    /// grown already (a capture of short-lived CGI children or workers starts thousands
    /// of threads, and growing each one's buffers again was 3 % of `gaps`' instructions).
    spare: Vec<Thread>,
    sh: Shared,
}

/// The most ended threads kept for reuse.
const SPARE_THREADS: usize = 64;

/// Everything but the threads, so that a thread and the rest borrow apart.
#[derive(Debug)]
pub(super) struct Shared {
    pub(super) opts: GapOptions,
    pub(super) inputs: Vec<InputState>,
    pub(super) tables: FdTables,
    pub(super) intervals: Vec<RawInterval>,
    pub(super) skipped: BTreeMap<&'static str, u64>,
    /// Per fd table, fd and direction (true: written): what its data so far leaves
    /// open for the next data (a secret cut by a call boundary). Absent: clean.
    pub(super) carries: FxHashMap<CarryKey, Carry>,
    pub(super) scratch: Vec<u8>,
    pub(super) args_buf: Vec<u8>,
    pub(super) label_buf: Vec<u8>,
    pub(super) active: bool,
}

/// A call as processed: complete, or an unfinished start joined with its end.
#[derive(Clone, Copy)]
pub(super) struct CallView<'a> {
    pub(super) name: &'a [u8],
    pub(super) args: &'a [u8],
    pub(super) ret: Ret<'a>,
    pub(super) duration_ns: Option<u64>,
}

impl GapAnalyzer {
    /// An analyzer with these options.
    pub fn new(opts: GapOptions) -> GapAnalyzer {
        let skipped = [
            Skip::Empty,
            Skip::StraceMessage,
            Skip::StackFrame,
            Skip::HexDump,
            Skip::Summary,
            Skip::NotTrace,
        ]
        .iter()
        .map(|s| (s.as_str(), 0))
        .collect();
        GapAnalyzer {
            threads: FxHashMap::default(),
            spare: Vec::new(),
            sh: Shared {
                opts,
                inputs: Vec::new(),
                tables: FdTables::default(),
                intervals: Vec::new(),
                skipped,
                carries: FxHashMap::default(),
                scratch: Vec::new(),
                args_buf: Vec::new(),
                label_buf: Vec::new(),
                active: false,
            },
        }
    }

    /// Start an input. `pid_hint` is the PID of a `-ff` file (from its name); lines
    /// without a PID prefix belong to it.
    pub fn begin_input(&mut self, name: &str, pid_hint: Option<u32>) {
        if self.sh.active {
            self.end_input();
        }
        let idx = self.sh.inputs.len();
        let scope = if pid_hint.is_some() {
            UNORDERED
        } else {
            u32::try_from(idx + 1).unwrap_or(u32::MAX)
        };
        self.sh.inputs.push(InputState {
            name: name.to_string(),
            pid_hint,
            scope,
            intervals_from: self.sh.intervals.len(),
            ..InputState::default()
        });
        self.sh.active = true;
    }

    /// One line of the current input, without its newline.
    pub fn line(&mut self, line_no: u64, line: &[u8]) {
        if !self.sh.active {
            self.begin_input("-", None);
        }
        let idx = self.sh.inputs.len() - 1;
        let glued = match self.sh.inputs.get_mut(idx) {
            Some(input) => {
                input.lines += 1;
                std::mem::take(&mut input.glued)
            }
            None => return,
        };
        let mut glued = glued;
        let alone = parse_line(line);
        let parsed = if glued.is_empty() || alone != Err(Skip::NotTrace) {
            alone
        } else {
            // The rest of a line an attach message cut: join it with the head.
            glued.extend_from_slice(line);
            match parse_line(&glued) {
                Ok(t) => Ok(t),
                Err(_) => alone,
            }
        };
        let mut keep = None;
        match parsed {
            Ok(t) => {
                self.trace_line(idx, line_no, &t);
            }
            Err(skip) => {
                *self.sh.skipped.entry(skip.as_str()).or_insert(0) += 1;
                if skip == Skip::StraceMessage {
                    let msg = match split_glued(line) {
                        Some((head, msg)) => {
                            keep = Some(head);
                            msg
                        }
                        None => line,
                    };
                    self.sh.strace_message(idx, msg);
                }
            }
        }
        // Keep the buffer's allocation for the next glued line.
        glued.clear();
        if let Some(head) = keep {
            glued.extend_from_slice(head);
        }
        if let Some(input) = self.sh.inputs.get_mut(idx) {
            input.glued = glued;
        }
    }

    /// End the current input: calls still unfinished are counted, per-thread state
    /// is dropped.
    pub fn end_input(&mut self) {
        if !self.sh.active {
            return;
        }
        self.sh.active = false;
        let never: u64 = self.threads.values().filter(|t| t.pending.active).count() as u64;
        self.threads.clear();
        if let Some(input) = self.sh.inputs.last() {
            // The input's fds are done with: a `-f` input's scope is its own, and the
            // threads of a `-ff` file (its PID) use tables of their own, which no other
            // file's threads use. Only the snapshots children inherited stay, so that
            // no input's reading depends on another's (see `fdtable::UNORDERED`).
            self.sh.carries.clear();
            self.sh.tables.end_scope(input.scope);
        }
        if let Some(input) = self.sh.inputs.last_mut() {
            input.never_resumed += never;
            input.live = FxHashSet::default();
            input.children = FxHashSet::default();
            input.attached = FxHashSet::default();
            input.glued = Vec::new();
        }
    }

    /// Take in what `later` found in inputs that come after this one's: the report is
    /// the one a single analyzer fed this one's inputs, then `later`'s, gives. Reading an
    /// input depends on no other (fd tables hold one input's calls, the snapshots
    /// children inherit are resolved at report time), so inputs split into runs can be
    /// read in parallel, one analyzer per run, then absorbed in order.
    pub fn absorb(&mut self, mut later: GapAnalyzer) {
        self.end_input();
        later.end_input();
        let sh = later.sh;
        // A `-f` input's scope is its place among this analyzer's inputs plus one:
        // `later`'s move past this one's.
        let scope_offset = u32::try_from(self.sh.inputs.len()).unwrap_or(u32::MAX);
        let up = |s: u32| {
            if s == UNORDERED {
                s
            } else {
                s.saturating_add(scope_offset)
            }
        };
        let first_input = scope_offset;
        let first_interval = self.sh.intervals.len();
        for mut input in sh.inputs {
            input.scope = up(input.scope);
            input.intervals_from += first_interval;
            self.sh.inputs.push(input);
        }
        for mut iv in sh.intervals {
            iv.input = iv.input.saturating_add(first_input);
            iv.scope = up(iv.scope);
            for r in iv.resources.iter_mut().chain(iv.primary.iter_mut()) {
                if let Some((key, _, _)) = r.inherited.as_mut() {
                    key.0 = up(key.0);
                }
            }
            self.sh.intervals.push(iv);
        }
        for (reason, n) in sh.skipped {
            *self.sh.skipped.entry(reason).or_insert(0) += n;
        }
        self.sh.tables.absorb(sh.tables, scope_offset);
    }

    /// The report.
    pub fn finish(mut self) -> GapsReport {
        self.end_input();
        self.sh.report()
    }

    pub(super) fn trace_line(&mut self, idx: usize, line_no: u64, t: &TraceLine<'_>) {
        let Some(tid) = self.sh.resolve_tid(idx, t.pid, &mut self.threads) else {
            return;
        };
        let time = self.sh.time_of(idx, t);
        let ring = self.sh.opts.context_calls;
        let spare = &mut self.spare;
        let th = self
            .threads
            .entry(tid)
            .or_insert_with(|| spare.pop().unwrap_or_else(|| Thread::new(ring)));
        if th.events == 0 {
            if let Some(input) = self.sh.inputs.get_mut(idx) {
                input.threads += 1;
            }
        }
        if let Some(input) = self.sh.inputs.get_mut(idx) {
            input.trace += 1;
        }
        let done = self.sh.event(idx, tid, th, line_no, time, &t.body);
        if done {
            if let Some(mut th) = self.threads.remove(&tid) {
                if self.spare.len() < SPARE_THREADS {
                    th.clear();
                    self.spare.push(th);
                }
            }
            let scope = self.sh.scope(idx);
            self.sh.tables.exit(scope, tid);
            if let Some(input) = self.sh.inputs.get_mut(idx) {
                input.live.remove(&tid);
            }
        }
    }
}

impl Shared {
    pub(super) fn input(&mut self, idx: usize) -> Option<&mut InputState> {
        self.inputs.get_mut(idx)
    }

    /// `strace: Process N attached`: the first names the thread of unprefixed lines
    /// under `-p`, later ones name new children.
    pub(super) fn strace_message(&mut self, idx: usize, msg: &[u8]) {
        let Some(rest) = msg.strip_prefix(b"strace: Process ") else {
            return;
        };
        let end = rest
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        if !rest.get(end..).is_some_and(|w| w.starts_with(b" attached")) {
            return;
        }
        let Some(pid) = std::str::from_utf8(rest.get(..end).unwrap_or_default())
            .ok()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            return;
        };
        if let Some(input) = self.input(idx) {
            if input.trace == 0 && input.unprefixed_pid.is_none() {
                input.unprefixed_pid = Some(pid);
            } else {
                input.attached.insert(pid);
            }
        }
    }

    /// The thread a line belongs to. Lines without a prefix in a `-f` stream belong to
    /// the only tracee: the hint, the one left alive, the one `-p` attached, or a
    /// placeholder (0) renamed when the first prefixed line names it.
    pub(super) fn resolve_tid(
        &mut self,
        idx: usize,
        pid: Option<u32>,
        threads: &mut FxHashMap<u32, Thread>,
    ) -> Option<u32> {
        let input = self.inputs.get_mut(idx)?;
        if let Some(p) = pid {
            input.seen_prefix = true;
            if input.pseudo_active
                && p != 0
                && !input.children.contains(&p)
                && !input.attached.contains(&p)
            {
                input.pseudo_active = false;
                input.unprefixed_pid = Some(p);
                input.pseudo_renamed = Some(p);
                let scope = input.scope;
                let from = input.intervals_from;
                if let Some(th) = threads.remove(&0) {
                    threads.entry(p).or_insert(th);
                }
                self.tables.rename(scope, 0, p);
                rename_carries(&mut self.carries, scope, 0, p);
                for iv in self.intervals.iter_mut().skip(from) {
                    if iv.pid == 0 {
                        iv.pid = p;
                    }
                    for r in iv.resources.iter_mut().chain(iv.primary.iter_mut()) {
                        if let Some((key, _, _)) = r.inherited.as_mut() {
                            if *key == (scope, 0) {
                                *key = (scope, p);
                            }
                        }
                    }
                }
            }
            input.live.insert(p);
            return Some(p);
        }
        if let Some(h) = input.pid_hint {
            return Some(h);
        }
        input.unprefixed += 1;
        if input.seen_prefix && input.live.len() == 1 {
            return input.live.iter().next().copied();
        }
        if let Some(u) = input.unprefixed_pid {
            input.live.insert(u);
            return Some(u);
        }
        input.pseudo_active = true;
        Some(0)
    }

    /// The line's time on the input's clock, in nanoseconds.
    pub(super) fn time_of(&mut self, idx: usize, t: &TraceLine<'_>) -> Option<i64> {
        let input = self.inputs.get_mut(idx)?;
        let (clock, ns) = match (t.stamp, t.relative_ns) {
            (Some(Stamp::Unix { nanos }), _) => (Clock::Unix, nanos),
            (Some(Stamp::TimeOfDay { nanos }), _) => {
                if let Some(last) = input.last_tod {
                    // Lines of several threads can be a little out of order; only a
                    // jump back of more than 12 hours is midnight.
                    if last > nanos && last - nanos > 12 * 3600 * 1_000_000_000 {
                        input.day += 1;
                        input.rollovers += 1;
                    }
                }
                input.last_tod = Some(nanos);
                let n = i64::try_from(nanos).ok()?;
                (Clock::TimeOfDay, input.day * DAY_NS + n)
            }
            (None, Some(rel)) => {
                if input.pid_hint.is_some() {
                    // `-r` counts from the previous line of any tracee: per `-ff` file
                    // the sum means nothing.
                    input.relative_under_ff = true;
                    return None;
                }
                input.rel_acc = input
                    .rel_acc
                    .saturating_add(i64::try_from(rel).unwrap_or(i64::MAX));
                (Clock::Relative, input.rel_acc)
            }
            (None, None) => return None,
        };
        if clock != Clock::Relative {
            input.stamps += 1;
            input.fractional |= ns.rem_euclid(1_000_000_000) != 0;
        }
        match input.clock {
            None => input.clock = Some(clock),
            Some(c) if c != clock => {
                input.mixed_clock = true;
                return None;
            }
            Some(_) => {}
        }
        if input.first.is_none() {
            input.first = Some(ns);
        }
        input.last = Some(ns);
        Some(ns)
    }

    /// One event of thread `tid`. Returns true when the thread is gone.
    pub(super) fn event(
        &mut self,
        idx: usize,
        tid: u32,
        th: &mut Thread,
        line_no: u64,
        time: Option<i64>,
        body: &Body<'_>,
    ) -> bool {
        let first = th.events == 0;
        th.events += 1;
        match *body {
            Body::Call(c) => {
                if th.pending.active {
                    // Its end never came (lost line): count it and move on.
                    th.pending.active = false;
                    if let Some(i) = self.input(idx) {
                        i.never_resumed += 1;
                    }
                    th.prev_end = None;
                }
                if th.in_timer && c.name == b"rt_sigreturn" {
                    th.in_timer = false;
                    return false;
                }
                th.in_timer = false;
                let view = CallView {
                    name: c.name,
                    args: c.args,
                    ret: c.ret,
                    duration_ns: c.duration_ns,
                };
                let start = time;
                let end = match (time, c.duration_ns) {
                    (Some(t), Some(d)) => Some(t.saturating_add(i64::try_from(d).unwrap_or(0))),
                    (t, _) => t,
                };
                self.call(
                    idx,
                    tid,
                    th,
                    line_no,
                    view,
                    start,
                    end,
                    c.duration_ns.is_some(),
                    first,
                    true,
                );
            }
            Body::Unfinished { name, args: a } => {
                th.in_timer = false;
                if th.pending.active {
                    if let Some(i) = self.input(idx) {
                        i.never_resumed += 1;
                    }
                }
                // The gap ends where the call starts.
                th.cur.reset(line_no);
                th.cur.name.extend_from_slice(name);
                th.cur.first = first;
                th.cur.set_call(a, None, None);
                // A write shows its data now: shown with the fd's carry as it stands
                // (the carry takes the data when the call resumes).
                if data_call(name).is_some() {
                    let key = self.tables.view(self.scope(idx), tid);
                    th.cur.feed = self.feed_data(key, name, a, false);
                }
                self.close_gap(idx, tid, th, time, line_no);
                th.pending.active = true;
                th.pending.name.clear();
                th.pending.name.extend_from_slice(name);
                th.pending.args.clear();
                let keep = a.get(..a.len().min(PENDING_ARGS_LIMIT)).unwrap_or_default();
                th.pending.args.extend_from_slice(keep);
                th.pending.start = time;
                th.pending.line = line_no;
                th.pending.first = first;
                th.prev_end = None;
            }
            Body::Resumed(c) => {
                th.in_timer = false;
                let matched = th.pending.active && th.pending.name == c.name;
                if th.pending.active && !matched {
                    if let Some(i) = self.input(idx) {
                        i.never_resumed += 1;
                    }
                }
                th.pending.active = false;
                let end = time;
                if matched {
                    let mut joined = std::mem::take(&mut self.args_buf);
                    joined.clear();
                    joined.extend_from_slice(&th.pending.args);
                    // The parser trims the `, ` before `<unfinished ...>`.
                    let rest = c.args.trim_ascii_start();
                    if !joined.is_empty() && !rest.is_empty() && !rest.starts_with(b",") {
                        joined.extend_from_slice(b", ");
                    }
                    joined.extend_from_slice(rest);
                    let pending_args = std::mem::take(&mut th.pending.args);
                    let view = CallView {
                        name: c.name,
                        args: &joined,
                        ret: c.ret,
                        duration_ns: c.duration_ns,
                    };
                    let start = th.pending.start;
                    let pfirst = th.pending.first;
                    self.call(idx, tid, th, line_no, view, start, end, true, pfirst, false);
                    th.pending.args = pending_args;
                    self.args_buf = joined;
                } else {
                    if let Some(i) = self.input(idx) {
                        i.resumed_without_start += 1;
                    }
                    let start = match (time, c.duration_ns) {
                        (Some(t), Some(d)) => Some(t.saturating_sub(i64::try_from(d).unwrap_or(0))),
                        (t, _) => t,
                    };
                    let view = CallView {
                        name: c.name,
                        args: c.args,
                        ret: c.ret,
                        duration_ns: c.duration_ns,
                    };
                    self.call(
                        idx,
                        tid,
                        th,
                        line_no,
                        view,
                        start,
                        end,
                        c.duration_ns.is_some(),
                        first,
                        true,
                    );
                }
            }
            Body::Signal { name, info } => {
                if matches!(name, b"SIGPROF" | b"SIGALRM" | b"SIGVTALRM") {
                    th.timers += 1;
                    th.in_timer = true;
                    if let Some(i) = self.input(idx) {
                        i.timer_signals += 1;
                    }
                    return false;
                }
                th.in_timer = false;
                if th.pending.active {
                    return false;
                }
                th.cur.reset(line_no);
                th.cur.first = first;
                th.cur.shape = Shape::Signal;
                th.cur.ret.extend_from_slice(name);
                th.cur.args.extend_from_slice(info);
                self.close_gap(idx, tid, th, time, line_no);
                th.ring.push(&mut th.cur);
                th.prev_end = time;
                th.prev_exact = true;
                th.prev_was_exit = false;
            }
            Body::Exit(e) => {
                if th.pending.active {
                    th.pending.active = false;
                    if let Some(i) = self.input(idx) {
                        i.never_resumed += 1;
                    }
                    // Killed inside a call: that call took until now.
                    if let (Some(s), Some(t)) = (th.pending.start, time) {
                        let name = std::mem::take(&mut th.pending.name);
                        let pargs = std::mem::take(&mut th.pending.args);
                        let view = CallView {
                            name: &name,
                            args: &pargs,
                            ret: Ret {
                                raw: b"?",
                                value: None,
                                decoration: None,
                                errno: None,
                            },
                            duration_ns: None,
                        };
                        let key = self.tables.view(self.scope(idx), tid);
                        let mut cur = std::mem::take(&mut th.cur);
                        cur.reset(th.pending.line);
                        cur.first = th.pending.first;
                        self.describe_call(&mut cur, key, view, true);
                        self.in_call(idx, tid, th, &cur, s, t);
                        th.cur = cur;
                        th.pending.name = name;
                        th.pending.args = pargs;
                    }
                } else if let Exit::Killed { .. } = e {
                    if !th.prev_was_exit {
                        th.cur.reset(line_no);
                        render_exit(&mut th.cur.text, &e);
                        self.close_gap(idx, tid, th, time, line_no);
                    }
                }
                return true;
            }
        }
        false
    }

    pub(super) fn scope(&self, idx: usize) -> u32 {
        self.inputs.get(idx).map_or(0, |i| i.scope)
    }

    /// A call that started at `start` and ended at `end` (`exact`: the end is known,
    /// not the start again).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call(
        &mut self,
        idx: usize,
        tid: u32,
        th: &mut Thread,
        line_no: u64,
        c: CallView<'_>,
        start: Option<i64>,
        end: Option<i64>,
        exact: bool,
        first: bool,
        gap_before: bool,
    ) {
        if let Some(i) = self.input(idx) {
            i.calls += 1;
            if let Some(v) = c.ret.value {
                i.results += 1;
                i.succeeded |= v >= 0;
            }
            if c.duration_ns.is_some() {
                i.calls_with_duration += 1;
            }
        }
        let scope = self.scope(idx);
        let key = self.tables.view(scope, tid);
        th.cur.reset(line_no);
        th.cur.first = first;
        self.describe_call(&mut th.cur, key, c, false);
        if gap_before {
            self.close_gap(idx, tid, th, start, line_no);
        }
        if let (Some(s), Some(e), true) = (start, end, exact) {
            if e - s >= i64::try_from(self.opts.min_gap_ns).unwrap_or(i64::MAX) {
                self.in_call(idx, tid, th, &th.cur, s, e);
            }
        }
        self.apply(scope, tid, key, c);
        th.ring.push(&mut th.cur);
        th.prev_end = end;
        th.prev_exact = exact;
        th.prev_was_exit = matches!(c.name, b"exit_group" | b"exit");
    }

    /// Fill `slot` with the call's parts (for its text and the hash it may carry),
    /// class and resources.
    pub(super) fn describe_call(
        &mut self,
        slot: &mut CtxSlot,
        key: TableKey,
        c: CallView<'_>,
        cut: bool,
    ) {
        slot.name.extend_from_slice(c.name);
        slot.class = call_class(c.name, c.args);
        let ret = if cut { None } else { Some(c.ret.raw) };
        slot.set_call(c.args, ret, c.duration_ns);
        slot.scan_hash = true;
        // A call cut short (its thread killed) changes no carry.
        slot.feed = self.feed_data(key, c.name, c.args, !cut);
        self.call_resources(slot, key, c);
    }

    /// Whether an interval starting at `start` (on `clock`) is inside the time window:
    /// always without a window, and for clocks without a date.
    fn in_window(&self, clock: Option<Clock>, start: i64) -> bool {
        match (self.opts.window_ns, clock.unwrap_or(Clock::Unix)) {
            (Some((since, until)), Clock::Unix) => {
                since.is_none_or(|s| start >= s) && until.is_none_or(|u| start < u)
            }
            _ => true,
        }
    }

    /// Record a gap between the previous event and one starting at `start`.
    pub(super) fn close_gap(
        &mut self,
        idx: usize,
        tid: u32,
        th: &mut Thread,
        start: Option<i64>,
        line_no: u64,
    ) {
        let timers = std::mem::take(&mut th.timers);
        let (Some(prev), Some(start)) = (th.prev_end, start) else {
            return;
        };
        let min = i64::try_from(self.opts.min_gap_ns).unwrap_or(i64::MAX);
        if start - prev < min {
            return;
        }
        let Some(input) = self.inputs.get(idx) else {
            return;
        };
        if !self.in_window(input.clock, prev) {
            return;
        }
        let newest = th.ring.newest();
        let resources = collect_resources(th.ring.iter(), self.opts.context_calls);
        let iv = RawInterval {
            input: idx as u32,
            line: line_no,
            before_line: newest.map(|s| s.line),
            pid: tid,
            scope: input.scope,
            clock: input.clock.unwrap_or(Clock::Unix),
            start: prev,
            end: start,
            inside_call: false,
            exact: th.prev_exact,
            timers,
            before: newest.map(|s| s.render(&mut self.scratch)),
            after: Some(th.cur.render(&mut self.scratch)),
            call: newest.map(|s| s.name.clone().into_boxed_slice()),
            class: newest.map_or(CallClass::Other, |s| s.class),
            primary: newest
                .and_then(|s| s.resources().first())
                .map(ResRef::to_raw),
            resources,
            hash: th.ring.iter().find_map(|s| s.hash(&mut self.scratch)),
            first: newest.is_some_and(|s| s.first),
        };
        self.intervals.push(iv);
    }

    /// Record time spent inside the call in `slot`.
    pub(super) fn in_call(
        &mut self,
        idx: usize,
        tid: u32,
        th: &Thread,
        slot: &CtxSlot,
        s: i64,
        e: i64,
    ) {
        let Some(input) = self.inputs.get(idx) else {
            return;
        };
        if !self.in_window(input.clock, s) {
            return;
        }
        let newest = th.ring.newest();
        let mut resources = collect_resources(std::iter::once(slot), 3);
        for r in collect_resources(th.ring.iter(), self.opts.context_calls) {
            if !resources.iter().any(|x| same_res(x, &r)) {
                resources.push(r);
            }
        }
        self.intervals.push(RawInterval {
            input: idx as u32,
            line: slot.line,
            before_line: newest.map(|s| s.line),
            pid: tid,
            scope: input.scope,
            clock: input.clock.unwrap_or(Clock::Unix),
            start: s,
            end: e,
            inside_call: true,
            exact: true,
            timers: 0,
            before: newest.map(|s| s.render(&mut self.scratch)),
            after: Some(slot.render(&mut self.scratch)),
            call: Some(slot.name.clone().into_boxed_slice()),
            class: slot.class,
            primary: slot.resources().first().map(ResRef::to_raw),
            resources,
            hash: if hash_decides(slot) {
                match slot.hash(&mut self.scratch) {
                    Some(h) => Some(h),
                    None => th.ring.iter().find_map(|s| s.hash(&mut self.scratch)),
                }
            } else {
                None
            },
            first: slot.first,
        });
    }
}

/// Whether the hash near time spent inside the call in `slot` can matter to the report:
/// such an interval is an auth one only when the call's own resource is an auth file or
/// socket ([`Shared::build`]), and only then is its hash shown. A resource inherited
/// across a fork is named at report time, so it may be one. Looking for a hash in every
/// call of the context for every slow call (mostly `accept`, `poll` and reads of sockets
/// after binary data) was 7 % of the instructions of `gaps` on the bench capture.
fn hash_decides(slot: &CtxSlot) -> bool {
    slot.resources().first().is_some_and(|r| {
        r.inherited.is_some()
            || super::summary::is_auth(&super::build::label_text(&r.label), r.kind)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(inputs: &[(&str, Option<u32>, &str)], opts: GapOptions) -> GapsReport {
        let mut a = GapAnalyzer::new(opts);
        for (name, hint, text) in inputs {
            a.begin_input(name, *hint);
            for (i, l) in text.lines().enumerate() {
                a.line(i as u64 + 1, l.as_bytes());
            }
            a.end_input();
        }
        a.finish()
    }

    /// Time inside a call: its hash is the auth detail when the call's own resource is
    /// an auth file, and is not looked for (nor shown) when it is not, even with a hash
    /// in the calls just before.
    #[test]
    fn hash_of_time_inside_a_call_only_for_auth_resources() {
        let t = "\
1795296993.000000 openat(AT_FDCWD</srv>, \"/etc/apache2/.htpasswd\", O_RDONLY|O_CLOEXEC) = 9</etc/apache2/.htpasswd> <0.000010>
1795296993.000100 read(9</etc/apache2/.htpasswd>, \"bob:$2y$12$abcdefghijklmnopqrstuuLd0rOkSqXcHBbMDmTHd0Lz1S0bUPG2\\n\", 4096) = 61 <0.400000>
1795296993.400200 close(9</etc/apache2/.htpasswd>) = 0 <0.000005>
1795296993.400300 accept4(3<TCP:[0.0.0.0:443]>, NULL, NULL, SOCK_CLOEXEC) = 10<TCP:[127.0.0.1:443->127.0.0.1:50000]> <1.000000>
1795296994.400400 getpid() = 7 <0.000001>
";
        let r = run(&[("trace.7", Some(7), t)], GapOptions::default());
        let inside: Vec<_> = r
            .gaps
            .iter()
            .chain(r.blocked.iter())
            .filter(|g| g.line == 2 || g.line == 4)
            .collect();
        assert_eq!(inside.len(), 2, "{:#?}", r);
        let read = inside.iter().find(|g| g.line == 2).expect("the slow read");
        assert_eq!(read.cause, Cause::Auth, "{read:#?}");
        let detail = read.detail.as_deref().unwrap_or_default();
        assert!(detail.contains("bcrypt cost 12"), "{read:#?}");
        let accept = inside
            .iter()
            .find(|g| g.line == 4)
            .expect("the slow accept");
        assert_eq!(accept.cause, Cause::Blocked, "{accept:#?}");
        assert_eq!(accept.detail, None, "{accept:#?}");
    }

    #[test]
    fn simple_cpu_gap_with_timer_noise() {
        let t = "\
1795296993.000000 getpid() = 7 <0.000001>
1795296993.050000 --- SIGPROF {si_signo=SIGPROF, si_code=SI_KERNEL} ---
1795296993.050010 rt_sigreturn({mask=[]}) = 7 <0.000002>
1795296993.100000 --- SIGPROF {si_signo=SIGPROF, si_code=SI_KERNEL} ---
1795296993.100010 rt_sigreturn({mask=[]}) = 7 <0.000002>
1795296993.300001 getppid() = 1 <0.000001>
";
        let r = run(&[("trace.7", Some(7), t)], GapOptions::default());
        assert_eq!(r.gaps.len(), 1, "{:#?}", r.gaps);
        let g = &r.gaps[0];
        assert_eq!(g.cause, Cause::Cpu);
        assert_eq!(g.timer_signals, 2);
        assert!((g.seconds - 0.3).abs() < 1e-6);
        assert_eq!(g.line, 6);
        assert_eq!(g.before_line, Some(1));
    }
}
