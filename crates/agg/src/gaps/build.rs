//! From raw intervals to the report: days aligned, gaps built, labels and times.

#[allow(unused_imports)]
use super::*;

/// An input with at least this many calls with a result, none of them a success,
/// was traced with `strace -Z` ([`Shared::report`]).
const FAILED_ONLY_CALLS: u64 = 5;

impl Shared {
    // -------------------------------------------------------------- report

    pub(super) fn report(mut self) -> GapsReport {
        self.align_days();
        let mut notes = BTreeSet::new();
        let mut intervals = std::mem::take(&mut self.intervals);
        // An input whose stamps are whole seconds (`strace -t`, `precision:s`) cannot
        // measure a gap: a 0.25 s bcrypt check reads as 0 or 1 s, two of three vanish
        // and the third is fitted to the wrong cost (audit of 2026-11-28). Its
        // intervals are left out, and a note names it.
        //
        // Likewise an input in which every one of many calls failed: `strace -Z`
        // (`--failed-only`) hides the successful calls, and the time between two failed
        // ones is idle waits and work alike (audit F5: 4 s of "cpu" gaps in idle
        // workers).
        let unmeasurable: Vec<Option<String>> = self
            .inputs
            .iter()
            .map(|i| {
                if i.stamps >= 2 && !i.fractional {
                    Some(format!(
                        "{}: its stamps are whole seconds (strace -t, or --timestamps with \
                         precision:s): no gap can be measured from them (a 0.25 s wait \
                         reads as 0 or 1 s), so none is reported; run strace with -tt or \
                         -ttt",
                        i.name
                    ))
                } else if i.results >= FAILED_ONLY_CALLS && !i.succeeded {
                    Some(format!(
                        "{}: every one of its {} calls failed, as in a trace made with \
                         strace -Z (--failed-only), which leaves out the calls that \
                         succeeded: the time between two failed calls is not a gap, so \
                         none is reported; run strace without -Z",
                        i.name, i.results
                    ))
                } else {
                    None
                }
            })
            .collect();
        if unmeasurable.iter().any(Option::is_some) {
            intervals.retain(|iv| {
                unmeasurable
                    .get(iv.input as usize)
                    .is_none_or(Option::is_none)
            });
            notes.extend(unmeasurable.into_iter().flatten());
        }
        let mut unresolved = 0u64;
        let mut all: Vec<(Gap, bool)> = Vec::with_capacity(intervals.len());
        for iv in &intervals {
            let (gap, missing) = self.build(iv);
            unresolved += missing;
            all.push((gap, iv.exact));
        }
        // One gap per thread and moment, whichever inputs saw it (`-f` and `-ff`).
        sort_moving_once(&mut all, |(a, ax), (b, bx)| {
            dedupe_key(a)
                .cmp(&dedupe_key(b))
                .then(bx.cmp(ax))
                .then(a.seconds.total_cmp(&b.seconds))
                .then(a.file.cmp(&b.file))
                .then(a.line.cmp(&b.line))
        });
        let before = all.len();
        all.dedup_by(|b, a| dedupe_key(&a.0) == dedupe_key(&b.0));
        let dups = before - all.len();
        let (mut gaps, mut blocked): (Vec<Gap>, Vec<Gap>) = all
            .into_iter()
            .map(|(g, _)| g)
            .partition(|g| g.kind == GapKind::Gap);
        let order = |a: &Gap, b: &Gap| {
            (
                a.clock,
                a.start_day,
                a.start_nanos,
                a.pid,
                a.end_day,
                a.end_nanos,
            )
                .cmp(&(
                    b.clock,
                    b.start_day,
                    b.start_nanos,
                    b.pid,
                    b.end_day,
                    b.end_nanos,
                ))
        };
        sort_moving_once(&mut gaps, order);
        sort_moving_once(&mut blocked, order);

        // Notes.
        let calls: u64 = self.inputs.iter().map(|i| i.calls).sum();
        let with_dur: u64 = self.inputs.iter().map(|i| i.calls_with_duration).sum();
        if calls > 0 && with_dur == 0 {
            notes.insert(
                "no -T durations: gaps include time inside the previous call \
                 (run strace with -T)"
                    .to_string(),
            );
        } else if with_dur < calls {
            notes.insert(
                "some calls have no -T duration: gaps after them include time inside the call"
                    .to_string(),
            );
        }
        let trace: u64 = self.inputs.iter().map(|i| i.trace).sum();
        if trace > 0 && self.inputs.iter().all(|i| i.clock.is_none()) {
            notes.insert(
                "no timestamps: no gaps can be computed (run strace with -ttt -T)".to_string(),
            );
        }
        if self
            .inputs
            .iter()
            .any(|i| i.clock == Some(Clock::TimeOfDay))
        {
            notes.insert(
                "-t/-tt stamps carry no date: times are strace's local time of day, \
                 `+Nd` counts midnights since the run started"
                    .to_string(),
            );
        }
        if self.inputs.iter().any(|i| i.relative_under_ff) {
            notes.insert(
                "-r stamps in -ff files count from other files' lines: ignored (use -ttt)"
                    .to_string(),
            );
        }
        if self.inputs.iter().any(|i| i.mixed_clock) {
            notes.insert("an input mixes stamp kinds: lines of the second kind ignored".into());
        }
        let never: u64 = self.inputs.iter().map(|i| i.never_resumed).sum();
        if never > 0 {
            notes.insert(format!(
                "{never} unfinished call(s) never resumed (killed, or the trace ended)"
            ));
        }
        let without: u64 = self.inputs.iter().map(|i| i.resumed_without_start).sum();
        if without > 0 {
            notes.insert(format!(
                "{without} resumed call(s) without their start (attached mid-call)"
            ));
        }
        let timers: u64 = self.inputs.iter().map(|i| i.timer_signals).sum();
        if timers > 0 {
            notes.insert(format!(
                "{timers} timer signal(s) (SIGPROF/SIGALRM) merged into the gaps around them"
            ));
        }
        if dups > 0 {
            notes.insert(format!(
                "{dups} interval(s) seen in several inputs (-f and -ff of one run) counted once"
            ));
        }
        if unresolved > 0 {
            notes.insert(format!(
                "{unresolved} fd reference(s) could not be named (run strace with -y)"
            ));
        }
        for i in &self.inputs {
            if let (Some(p), true) = (i.pseudo_renamed, i.unprefixed > 0) {
                notes.insert(format!(
                    "{}: lines without a PID before the first fork attributed to {p}",
                    i.name
                ));
            }
        }
        if !gaps.is_empty() {
            notes.insert(
                "calls hidden by strace -e trace=... look like gaps (trace all calls)".into(),
            );
        }

        // Sort references, clone only the few kept (a stable sort either way).
        let mut top: Vec<&Gap> = gaps.iter().collect();
        top.sort_by(|a, b| b.seconds.total_cmp(&a.seconds).then_with(|| order(a, b)));
        top.truncate(self.opts.top);
        let top: Vec<Gap> = top.into_iter().cloned().collect();

        let by_cause = by_cause(&gaps, &blocked);
        let by_resource = by_resource(&gaps, &blocked);
        let by_pid = by_pid(&gaps, &blocked);

        let total: u64 = self.inputs.iter().map(|i| i.lines).sum();
        let skipped: u64 = self.skipped.values().sum();
        let mut inputs: Vec<GapInputReport> = self
            .inputs
            .iter()
            .map(|i| {
                let fmt = |t: Option<i64>| {
                    t.zip(i.clock)
                        .map(|(t, c)| format_time(c, shifted(c, t, i.day_shift)).0)
                };
                GapInputReport {
                    name: i.name.clone(),
                    pid_hint: i.pid_hint,
                    lines: i.lines,
                    trace_lines: i.trace,
                    threads: i.threads,
                    clock: i.clock,
                    first: fmt(i.first),
                    last: fmt(i.last),
                    rollovers: i.rollovers,
                    calls: i.calls,
                    calls_with_duration: i.calls_with_duration,
                    unfinished_never_resumed: i.never_resumed,
                    resumed_without_start: i.resumed_without_start,
                    timer_signals: i.timer_signals,
                }
            })
            .collect();
        inputs.sort_by(|a, b| a.name.cmp(&b.name));

        GapsReport {
            min_gap_seconds: self.opts.min_gap_ns as f64 / 1e9,
            lines: TraceLinesReport {
                total,
                trace,
                skipped,
                skipped_by_reason: self.skipped.clone(),
            },
            inputs,
            notes: notes.into_iter().collect(),
            gaps,
            blocked,
            by_cause,
            by_resource,
            by_pid,
            top,
        }
    }

    /// `-t`/`-tt` inputs start on day 0 each; a `-ff` file that starts after midnight
    /// belongs to day 1 of the run. The run started after the largest stretch of the
    /// day in which no input started.
    pub(super) fn align_days(&mut self) {
        let mut starts: Vec<(i64, usize)> = self
            .inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| i.clock == Some(Clock::TimeOfDay))
            .filter_map(|(k, i)| i.first.map(|f| (f.rem_euclid(DAY_NS), k)))
            .collect();
        if starts.len() < 2 {
            return;
        }
        starts.sort();
        let n = starts.len();
        let mut best = (0i64, 0usize);
        for k in 0..n {
            let (a, _) = starts[k];
            let (b, _) = starts[(k + 1) % n];
            let gap = if k + 1 == n { b + DAY_NS - a } else { b - a };
            if gap > best.0 {
                best = (gap, (k + 1) % n);
            }
        }
        let origin = starts[best.1].0;
        for (t, k) in starts {
            if let Some(i) = self.inputs.get_mut(k) {
                i.day_shift = i64::from(t < origin);
            }
        }
    }

    /// The report form of an interval; also how many of its fds stayed unnamed.
    pub(super) fn build(&self, iv: &RawInterval) -> (Gap, u64) {
        let input = self.inputs.get(iv.input as usize);
        let shift = input.map_or(0, |i| i.day_shift);
        let mut missing = 0;
        // `None`: the fd was not open (closed, or O_CLOEXEC across execve).
        let mut resolve = |r: &RawRes| -> Option<(String, ResKind)> {
            if let Some(l) = &r.label {
                return Some((label_text(l), r.kind));
            }
            if let Some((key, fd, after_exec)) = r.inherited {
                match self.tables.resolve_inherited(key, fd, after_exec) {
                    Resolved::Known(l, k) => return Some((label_text(l), k)),
                    Resolved::Closed => return None,
                    Resolved::Unknown => {}
                }
            }
            missing += 1;
            Some((format!("fd {}", r.fd), ResKind::Unknown))
        };
        let primary = iv.primary.as_ref().and_then(&mut resolve);
        let mut resources: Vec<(String, ResKind)> = Vec::new();
        for r in &iv.resources {
            if let Some(x) = resolve(r) {
                if !resources.iter().any(|(l, _)| *l == x.0) {
                    resources.push(x);
                }
            }
        }
        let call = iv.call.as_ref().map(|c| lossless_text(c).into_owned());
        let call_name = iv.call.as_deref().unwrap_or_default();
        let last = resources.first().cloned();
        let auth_ctx = last.as_ref().is_some_and(|(l, k)| is_auth(l, *k)) || iv.hash.is_some();
        let primary_auth = primary.as_ref().is_some_and(|(l, k)| is_auth(l, *k));
        let waits = match iv.class {
            CallClass::Wait => true,
            CallClass::Data => primary.as_ref().is_none_or(|(_, k)| {
                matches!(
                    k,
                    ResKind::Socket | ResKind::Pipe | ResKind::Tty | ResKind::Unknown
                )
            }),
            _ => false,
        };
        let attached =
            iv.first && call_name != b"execve" && !self.tables.has_parent(iv.scope, iv.pid);
        let (kind, cause) = if iv.inside_call || !iv.exact {
            // Time inside the call (or, without -T, a gap that includes it).
            if attached {
                (GapKind::Blocked, Cause::Startup)
            } else if primary_auth || (!iv.inside_call && auth_ctx && !waits) {
                (GapKind::Gap, Cause::Auth)
            } else if waits {
                (GapKind::Blocked, Cause::Blocked)
            } else if !iv.inside_call {
                // No -T: the gap also holds the previous call. File calls are short
                // unless they sync, so only a sync makes it `io`; else user space.
                let sync = matches!(
                    call_name,
                    b"fsync" | b"fdatasync" | b"sync" | b"syncfs" | b"sync_file_range" | b"msync"
                );
                if sync {
                    (GapKind::Gap, Cause::Io)
                } else {
                    (GapKind::Gap, Cause::Cpu)
                }
            } else {
                match iv.class {
                    CallClass::Io | CallClass::Data => (GapKind::Gap, Cause::Io),
                    _ => (GapKind::Gap, Cause::Kernel),
                }
            }
        } else if auth_ctx {
            (GapKind::Gap, Cause::Auth)
        } else {
            (GapKind::Gap, Cause::Cpu)
        };
        let detail = match cause {
            Cause::Auth => iv.hash.map(|h| h.gap_label()),
            _ => None,
        };
        let (res, res_kind) = if iv.inside_call {
            primary
                .clone()
                .map_or((None, ResKind::Unknown), |(l, k)| (Some(l), k))
        } else {
            last.clone()
                .map_or((None, ResKind::Unknown), |(l, k)| (Some(l), k))
        };
        let start = shifted(iv.clock, iv.start, shift);
        let end = shifted(iv.clock, iv.end, shift);
        let (start_text, start_day, start_nanos) = format_time(iv.clock, start);
        let (end_text, end_day, end_nanos) = format_time(iv.clock, end);
        let gap = Gap {
            kind,
            cause,
            detail,
            file: input.map_or_else(String::new, |i| i.name.clone()),
            line: iv.line,
            before_line: iv.before_line,
            pid: iv.pid,
            clock: iv.clock,
            start: start_text,
            end: end_text,
            seconds: (iv.end - iv.start) as f64 / 1e9,
            start_day,
            start_nanos,
            end_day,
            end_nanos,
            inside_call: iv.inside_call,
            includes_call_time: !iv.exact,
            timer_signals: iv.timers,
            call,
            resource: res,
            resource_kind: res_kind,
            resources: resources
                .into_iter()
                .filter(|(_, k)| !matches!(k, ResKind::Other))
                .map(|(l, _)| l)
                .collect(),
            before: iv.before.as_ref().map(|b| lossless_text(b).into_owned()),
            after: iv.after.as_ref().map(|b| lossless_text(b).into_owned()),
        };
        (gap, missing)
    }
}

/// A file or socket name for a report; a name that holds a secret (a hash written
/// into a file name) is not shown.
pub(super) fn label_text(label: &[u8]) -> String {
    if secret_in(label, false).is_some() {
        return format!("<redacted: name of {} bytes>", label.len());
    }
    lossless_text(label).into_owned()
}

/// Same thread, same moment: the same gap (the next call's start) or the same slow
/// call (its start).
/// `v.sort_by(cmp)` (stable) for large elements: the positions are sorted and each
/// element is moved once, not at every step of the sort (moving [`Gap`]s was most of
/// the cost of sorting thousands of them).
fn sort_moving_once<T>(v: &mut Vec<T>, mut cmp: impl FnMut(&T, &T) -> std::cmp::Ordering) {
    let mut at: Vec<usize> = (0..v.len()).collect();
    at.sort_by(|&a, &b| match (v.get(a), v.get(b)) {
        (Some(x), Some(y)) => cmp(x, y),
        _ => std::cmp::Ordering::Equal,
    });
    let mut slots: Vec<Option<T>> = std::mem::take(v).into_iter().map(Some).collect();
    *v = at
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect();
}

pub(super) fn dedupe_key(g: &Gap) -> (Clock, u32, bool, i64, i64) {
    if g.inside_call {
        (g.clock, g.pid, true, g.start_day, g.start_nanos)
    } else {
        (g.clock, g.pid, false, g.end_day, g.end_nanos)
    }
}

pub(super) fn shifted(clock: Clock, t: i64, shift: i64) -> i64 {
    match clock {
        Clock::TimeOfDay => t + shift * DAY_NS,
        _ => t,
    }
}

/// Text, day and nanos of a time on `clock`.
pub(super) fn format_time(clock: Clock, t: i64) -> (String, i64, i64) {
    match clock {
        Clock::Unix => {
            let secs = t.div_euclid(NS);
            let micros = t.rem_euclid(NS) / 1000;
            let days = secs.div_euclid(86_400);
            let sod = secs.rem_euclid(86_400);
            let (y, m, d) = civil_from_days(days);
            // `{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}.{micros:06}Z`, digit by digit
            // (`format!` was a quarter of the report's cost on traces with many gaps).
            let mut text = String::with_capacity(27);
            if (0..=9999).contains(&y) {
                push_digits(&mut text, y, 4);
            } else {
                text.push_str(&format!("{y:04}"));
            }
            for (sep, v, width) in [
                ('-', i64::from(m), 2),
                ('-', i64::from(d), 2),
                ('T', sod / 3600, 2),
                (':', sod / 60 % 60, 2),
                (':', sod % 60, 2),
                ('.', micros, 6),
            ] {
                text.push(sep);
                push_digits(&mut text, v, width);
            }
            text.push('Z');
            (text, 0, t)
        }
        Clock::TimeOfDay => {
            let day = t.div_euclid(DAY_NS);
            let ns = t.rem_euclid(DAY_NS);
            let secs = ns / NS;
            let micros = ns % NS / 1000;
            let mut text = format!(
                "{:02}:{:02}:{:02}.{micros:06}",
                secs / 3600,
                secs / 60 % 60,
                secs % 60
            );
            if day != 0 {
                text.push_str(&format!(" +{day}d"));
            }
            (text, day, ns)
        }
        Clock::Relative => {
            let text = format!("+{}.{:06}", t.div_euclid(NS), t.rem_euclid(NS) / 1000);
            (text, 0, t)
        }
    }
}

/// `v` (0 ≤ v < 10^width) in `width` digits, zeros in front.
fn push_digits(out: &mut String, v: i64, width: u32) {
    let mut div = 10i64.pow(width.saturating_sub(1));
    while div > 0 {
        out.push(char::from(b'0' + (v / div % 10) as u8));
        div /= 10;
    }
}

pub(super) fn same_res(a: &RawRes, b: &RawRes) -> bool {
    match (&a.label, &b.label) {
        (Some(x), Some(y)) => x == y,
        (None, None) => a.inherited == b.inherited,
        _ => false,
    }
}

/// Distinct resources of `slots` (newest first), at most `max`.
pub(super) fn collect_resources<'a>(
    slots: impl Iterator<Item = &'a CtxSlot>,
    max: usize,
) -> Vec<RawRes> {
    let mut out: Vec<RawRes> = Vec::new();
    for s in slots {
        for r in s.resources() {
            let raw = r.to_raw();
            if !out.iter().any(|x| same_res(x, &raw)) {
                out.push(raw);
            }
            if out.len() >= max.max(1) {
                return out;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_positions_is_a_stable_sort() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for n in [0usize, 1, 2, 7, 100, 1000] {
            let v: Vec<(u8, usize)> = (0..n)
                .map(|i| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    ((seed % 5) as u8, i)
                })
                .collect();
            let mut want = v.clone();
            want.sort_by_key(|a| a.0);
            let mut got = v;
            sort_moving_once(&mut got, |a, b| a.0.cmp(&b.0));
            assert_eq!(got, want, "{n}");
        }
    }

    #[test]
    fn times_format() {
        assert_eq!(
            format_time(Clock::Unix, 1_795_296_993_226_906_123).0,
            "2026-11-21T21:36:33.226906Z"
        );
        let (t, d, n) = format_time(Clock::TimeOfDay, DAY_NS + 1_500_000_000);
        assert_eq!(
            (t.as_str(), d, n),
            ("00:00:01.500000 +1d", 1, 1_500_000_000)
        );
        assert_eq!(format_time(Clock::Relative, 2_000_001_000).0, "+2.000001");
        // Digit by digit as `format!` pads, before 1970 and across years too.
        for t in [
            0,
            -1,
            1_795_296_993_000_000_999,
            951_782_400_123_456_789,
            -9_000_000_000_000_000_001,
            9_000_000_000_000_000_000,
            i64::MAX,
            i64::MIN,
        ] {
            let secs = t.div_euclid(NS);
            let sod = secs.rem_euclid(86_400);
            let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
            let want = format!(
                "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}Z",
                sod / 3600,
                sod / 60 % 60,
                sod % 60,
                t.rem_euclid(NS) / 1000
            );
            assert_eq!(format_time(Clock::Unix, t).0, want, "{t}");
        }
    }
}
