#!/usr/bin/env python3
"""Generate a large, realistic strace trace for benchmarking `tlsgap gaps`.

Usage:
    python3 bench/gen-strace.py [--mb 300] [--seed 42] [--workers 12] [--ff] -o FILE

The output looks like one long `strace -f -ttt -T -yy -s 4096 -o FILE -p ...`
capture of an Apache prefork pool (bare PIDs, `-ttt` stamps, `-T` durations):

  * a parent process that loops over the real parent's `pselect6`/`wait4`/`times`
    lines (testdata/strace/real/apache-ff/trace.7015);
  * WORKERS worker processes, each replaying, connection after connection, the real
    per-worker traces testdata/strace/real/apache-ff/trace.7016 and trace.7017
    (TLS handshakes, HTTP requests, htpasswd reads followed by the 0.2 s bcrypt gap,
    logging), with the gaps between calls scaled by a random factor in 0.8..1.25 per
    connection and the client ports and the worker's pid rewritten;
  * now and then a short-lived process replaying testdata/strace/forms/f-tt-T-yy.strace
    (a Python program with threads and children: execve, mmap, futex,
    unfinished/resumed pairs, signals, exits) under fresh pids.

Lines of all processes are merged in time order, as `strace -f` writes them. A call of
one process that is still running when another process's line is written is split
into `<unfinished ...>` and `<... NAME resumed>` lines, as strace does; a call that
nothing interrupts stays whole. Per-process time order is monotonic.

With --ff, OUTPUT is a prefix and each process gets its own file OUTPUT.PID, as
`strace -ff -o OUTPUT` writes them: no PID column, every call whole on one line (the
same events and times as without --ff; --mb counts the bytes of all files).

Only the standard library; the same --seed gives the same bytes.
"""

import argparse
import heapq
import os
import random
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
REAL = os.path.join(ROOT, "testdata", "strace", "real", "apache-ff")
FORMS = os.path.join(ROOT, "testdata", "strace", "forms", "f-tt-T-yy.strace")

# Calls whose first argument is an input and the rest outputs: strace prints
# `read(9<...>,  <unfinished ...>` and `<... read resumed>"data", 8000) = 80`.
OUTPUT_AFTER_FIRST = {
    "read", "pread64", "recvfrom", "recvmsg", "accept", "accept4", "epoll_wait",
    "epoll_pwait", "wait4", "readv",
}
# Calls of at least this long (µs) are split when another line comes first.
SPLIT_MIN_US = 50

DURATION = re.compile(r" <(\d+)\.(\d{6})>$")
# The call's own closing parenthesis: the last `) = ` (greedy), also `)     = `.
CALL = re.compile(r"^([A-Za-z_0-9]+)\((.*)\)(\s+= .*)$")
PORT = re.compile(r"(->127\.0\.0\.1:|htons\()(\d+)")
SELF_PID = re.compile(r"(get[pt]id\(\)\s+= )\d+")
LOG_PID = re.compile(r"\[pid \d+:tid \d+\]")
TT = re.compile(r"^(\d+) (\d\d):(\d\d):(\d\d)\.(\d{6}) (.*)$")
TTT = re.compile(r"^(\d+)\.(\d{6}) (.*)$")


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    # Keep any byte as it is (latin-1 round-trips).
    return data.decode("latin-1").split("\n")


def load_ttt(path):
    """A `-ff -ttt -T` file -> [(micros since its first line, body)], without the
    final `<detached ...>` line."""
    out = []
    first = None
    for line in read_lines(path):
        m = TTT.match(line)
        if not m:
            continue
        if line.endswith("<detached ...>"):
            continue
        t = int(m.group(1)) * 1_000_000 + int(m.group(2))
        if first is None:
            first = t
        out.append((t - first, m.group(3)))
    return out


def load_tt(path):
    """A `-f -tt -T` file -> [(micros since its first line, pid, body)]."""
    out = []
    first = None
    for line in read_lines(path):
        m = TT.match(line)
        if not m:
            continue
        pid, h, mi, s, us, body = m.groups()
        t = ((int(h) * 60 + int(mi)) * 60 + int(s)) * 1_000_000 + int(us)
        if first is None:
            first = t
        out.append((t - first, int(pid), body))
    return out


def duration_us(body):
    m = DURATION.search(body)
    if not m:
        return 0
    return int(m.group(1)) * 1_000_000 + int(m.group(2))


def split_call(body):
    """(unfinished body, resumed body) as strace -f prints an interrupted call, or
    None when the line is not a whole call."""
    m = CALL.match(body)
    if not m:
        return None
    name, args, ret = m.groups()
    if name in OUTPUT_AFTER_FIRST:
        cut = args.find(", ")
        if cut > 0:
            return ("%s(%s,  <unfinished ...>" % (name, args[:cut]),
                    "<... %s resumed>%s)%s" % (name, args[cut + 2:], ret))
    return ("%s(%s <unfinished ...>" % (name, args),
            "<... %s resumed>)%s" % (name, ret))


def worker(rng, pid, start, sources):
    """Endless connections of one worker, as (time, body, duration)."""
    t = start
    while True:
        lines = rng.choice(sources)
        scale = rng.uniform(0.8, 1.25)
        ports = {}

        def port(m):
            p = ports.setdefault(m.group(2), str(rng.randrange(32768, 61000)))
            return m.group(1) + p

        prev_rel = 0
        prev_end = t
        for rel, body in lines:
            gap = int((rel - prev_rel) * scale)
            prev_rel = rel
            t = max(t + gap, prev_end)
            body = PORT.sub(port, body)
            body = SELF_PID.sub(lambda m: m.group(1) + str(pid), body)
            body = LOG_PID.sub("[pid %d:tid %d]" % (pid, pid), body)
            d = duration_us(body)
            yield t, body, d
            prev_end = t + d + 1


def parent(rng, start, lines):
    t = start
    while True:
        prev_rel = 0
        prev_end = t
        for rel, body in lines:
            t = max(t + (rel - prev_rel), prev_end)
            prev_rel = rel
            d = duration_us(body)
            yield t, body, d
            prev_end = t + d + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=300, help="size in 10^6 bytes (default 300)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--workers", type=int, default=12)
    ap.add_argument("--forms-every", type=int, default=40,
                    help="one short-lived Python process per this many worker connections")
    ap.add_argument("--ff", action="store_true",
                    help="one file per process, OUTPUT.PID, as strace -ff writes them")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    sources = [load_ttt(os.path.join(REAL, "trace.%d" % n)) for n in (7016, 7017)]
    parent_lines = load_ttt(os.path.join(REAL, "trace.7015"))
    forms = load_tt(FORMS)
    target = int(args.mb * 1_000_000)
    start = 1_795_307_606_000_000  # 2026-11-22 00:33:26 UTC, when the real traces ran

    # The heap holds each process's next event: (time, seq, pid, body, duration, stream).
    heap = []
    seq = 0
    next_pid = 20000

    def push(pid, stream):
        nonlocal seq
        try:
            t, body, d = next(stream)
        except StopIteration:
            return
        seq += 1
        heapq.heappush(heap, (t, seq, pid, body, d, stream))

    push(next_pid, parent(rng, start, parent_lines))
    parent_pid = next_pid
    next_pid += 1
    for _ in range(args.workers):
        pid = next_pid
        next_pid += 1
        push(pid, worker(rng, pid, start + rng.randrange(0, 500_000), sources))

    form_pids = sorted({pid for _, pid, _ in forms})
    # A form pid as a whole number (clone's return, si_pid=, wait4's argument), not
    # digits inside an octal escape, a hex number or a longer number.
    form_pid_re = re.compile(r"(?<![\\\w.])(%s)(?!\w)" % "|".join(map(str, form_pids)))

    def form_stream(t0, pid_of, pid):
        """One stream per pid of the form, so that the merge orders them all."""
        def new_pid(m):
            return str(pid_of[int(m.group(1))])
        for rel, p, body in forms:
            if p == pid:
                yield t0 + rel, form_pid_re.sub(new_pid, body), duration_us(body)

    written = 0
    events = 0
    connections = 0
    out = None if args.ff else open(args.output, "wb", buffering=1 << 20)
    per_pid = {}

    def emit(t, pid, body):
        nonlocal written, events
        if args.ff:
            line = ("%d.%06d %s\n" % (t // 1_000_000, t % 1_000_000, body)).encode("latin-1")
            per_pid.setdefault(pid, []).append(line)
        else:
            line = ("%d %d.%06d %s\n" % (pid, t // 1_000_000, t % 1_000_000, body)).encode(
                "latin-1")
            out.write(line)
        written += len(line)
        events += 1

    while heap and written < target:
        t, _, pid, body, d, stream = heapq.heappop(heap)
        if stream is None:
            # The resumed half of a split call.
            emit(t, pid, body)
            continue
        if pid != parent_pid and body.startswith("accept4(3<TCP"):
            connections += 1
            if args.forms_every and connections % args.forms_every == 0:
                pid_of = {}
                for fpid in form_pids:
                    pid_of[fpid] = next_pid
                    next_pid += 1
                for fpid in pid_of:
                    push(pid_of[fpid], form_stream(t, pid_of, fpid))
        if not args.ff and d >= SPLIT_MIN_US and heap and heap[0][0] < t + d:
            parts = split_call(body)
            if parts is not None:
                unfinished, resumed = parts
                emit(t, pid, unfinished)
                seq += 1
                heapq.heappush(heap, (t + d, seq, pid, resumed, 0, None))
                push(pid, stream)
                continue
        emit(t, pid, body)
        push(pid, stream)
    if args.ff:
        for pid, lines in per_pid.items():
            with open("%s.%d" % (args.output, pid), "wb") as f:
                f.write(b"".join(lines))
    else:
        out.close()
    print("gen-strace: %s%s: %d lines, %d bytes, %d worker connections, seed %d" % (
        args.output, ".PID (%d files)" % len(per_pid) if args.ff else "", events, written,
        connections, args.seed), file=sys.stderr)


if __name__ == "__main__":
    main()
