#!/usr/bin/env python3
"""The speed ratios of issue 12, measured in one run on one machine.

The machine's absolute speed drifts between days, so what BENCHMARKS.md compares is a
ratio of two commands timed in the same run: each round runs every command once, in
order, and each figure is the median over the rounds (A/B alternated, not A×3 then B×3).
CPU is user + system time of the process (os.wait4's rusage: all its threads, none of
another process), wall is perf_counter around it, peak memory is ru_maxrss. Standard
output goes to /dev/null, standard input is /dev/null.

usage: bench/ratios.py [--runs 3] [--lines 1000000] [--strace-mb 100] [--work DIR]
                       [--tlsgap BIN] [--base BIN] [--loggen BIN] [--memory]
                       [--memory-runs 3]
                       [--only NAME,NAME]

  --tlsgap BIN   the binary measured (default: $CARGO_TARGET_DIR/release/tlsgap)
  --base BIN     a second binary: each tlsgap command runs with both, alternated, and
                 the table gets a new ÷ base column (a speed change's before/after)
  --memory       also peak memory of every tlsgap command on a 10× larger log: the
                 median of --memory-runs runs (default 3) against the median of the
                 rounds on the log, like with like (one run's peak moves with how full
                 the bounded queues between threads happen to be: the NDJSON export
                 peaked at 39-51 MiB over five runs of one log)
  --only         run only these commands (names in the first column)

Inputs (made once, kept in --work, default /root/.cache/tlsgap-bench):
  access-N.log  `loggen --lines N --seed 42` (combinedssl, generated)
  strace-MB.strace  `bench/gen-strace.py --mb MB --seed 42`
  strace-MB-ff/trace.PID  `bench/gen-strace.py --mb MB --seed 42 --ff`: the same run as
                one file per process (`strace -ff`), for `gaps -j` over many files
Peers: bench/peers.sh installs them (mawk, DuckDB and chDB).
"""

import argparse
import datetime
import os
import shutil
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHDB_VALIDATING = r"""
SELECT g[10] AS protocol, g[11] AS cipher, count() AS n
FROM (
  SELECT extractGroups(line,
    '^(\\S+) (\\S+) (\\S+) \\[(\\d{2}/\\w{3}/\\d{4}:\\d{2}:\\d{2}:\\d{2} [+-]\\d{4})\\] "([^"]*)" (\\d{3}) (\\d+|-) "([^"]*)" "([^"]*)" (\\S+) (\\S+)$'
  ) AS g
  FROM file('{path}', 'LineAsString')
)
WHERE length(g) = 11
GROUP BY protocol, cipher ORDER BY n DESC
"""

CHDB_SPLIT = r"""
SELECT parts[-2] AS protocol, parts[-1] AS cipher, count() AS n
FROM (SELECT splitByChar(' ', line) AS parts FROM file('{path}', 'LineAsString'))
GROUP BY protocol, cipher ORDER BY n DESC
"""

DUCKDB = r"""
SELECT count(*) AS n, regexp_extract(line, '(\S+ \S+)\s*$', 1) AS proto_cipher
FROM read_csv(?, columns = {'line': 'VARCHAR'}, header = false, delim = ?,
              quote = '', escape = '', auto_detect = false,
              ignore_errors = true, strict_mode = false)
GROUP BY proto_cipher ORDER BY n DESC
"""

WC_TIMES = 8

MAWK_LAST_TWO = '{c[$(NF-1)" "$NF]++} END{for(k in c) print c[k], k}'
MAWK_GAPS = '{pid=$1; t=$2+0; if (pid in last && t-last[pid] > 0.1) n++; last[pid]=t} END{print n}'


def die(msg):
    sys.exit(f"ratios.py: {msg}")


def default_tlsgap():
    for c in [
        os.path.join(os.environ.get("CARGO_TARGET_DIR", ""), "release/tlsgap"),
        "/root/.cache/tlsgap-target/release/tlsgap",
        os.path.join(REPO, "target/release/tlsgap"),
    ]:
        if c and os.access(c, os.X_OK):
            return c
    return None


def make_inputs(args):
    os.makedirs(args.work, exist_ok=True)
    access = os.path.join(args.work, f"access-{args.lines}.log")
    if not os.path.exists(access):
        loggen = args.loggen or "/root/.cache/loggen-target/release/loggen"
        if not os.access(loggen, os.X_OK):
            die(f"no loggen at {loggen}: `CARGO_TARGET_DIR=/root/.cache/loggen-target "
                "cargo build --release -p loggen`, or --loggen BIN")
        with open(access + ".tmp", "wb") as f:
            subprocess.run([loggen, "--lines", str(args.lines), "--seed", "42"], stdout=f,
                           check=True)
        os.rename(access + ".tmp", access)
    trace = os.path.join(args.work, f"strace-{args.strace_mb}.strace")
    if not os.path.exists(trace):
        subprocess.run([sys.executable, os.path.join(REPO, "bench/gen-strace.py"), "--mb",
                        str(args.strace_mb), "--seed", "42", "-o", trace + ".tmp"], check=True)
        os.rename(trace + ".tmp", trace)
    ff_dir = os.path.join(args.work, f"strace-{args.strace_mb}-ff")
    if not os.path.isdir(ff_dir):
        os.makedirs(ff_dir + ".tmp", exist_ok=True)
        subprocess.run([sys.executable, os.path.join(REPO, "bench/gen-strace.py"), "--mb",
                        str(args.strace_mb), "--seed", "42", "--ff", "-o",
                        os.path.join(ff_dir + ".tmp", "trace")], check=True)
        os.rename(ff_dir + ".tmp", ff_dir)
    ff = sorted((os.path.join(ff_dir, n) for n in os.listdir(ff_dir)),
                key=lambda p: int(p.rsplit(".", 1)[1]))
    big = None
    if args.memory:
        big = os.path.join(args.work, f"access-{args.lines * 10}.log")
        if not os.path.exists(big):
            # Ten copies of the log: the same distinct clients, ten times the lines.
            with open(big + ".tmp", "wb") as out:
                for _ in range(10):
                    with open(access, "rb") as f:
                        shutil.copyfileobj(f, out, 1 << 20)
            os.rename(big + ".tmp", big)
    return access, trace, ff, big


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


RSS_FILE = f"/tmp/tlsgap-ratios-rss-{os.getpid()}"


def run(argv):
    """(wall s, cpu s, peak RSS MiB) of one run; fails loudly on a non-zero exit.

    The command runs under GNU time, which only reports its peak RSS: Linux keeps
    ru_maxrss across execve, so a process forked from this Python would count Python's
    memory too, while one forked from `time` starts small. CPU is from wait4 on `time`
    (its own and its reaped child's, to the microsecond; `time` itself is ~1 ms)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", RSS_FILE] + argv,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        die(f"{argv[0]} exited {p.returncode}: {err.decode(errors='replace')[-2000:]}")
    with open(RSS_FILE) as f:
        rss_kb = int(f.read().split()[-1])
    return wall, ru.ru_utime + ru.ru_stime, rss_kb / 1024


def tlsgap_commands(bin_, access, trace, ff, out):
    pq = os.path.join(out, f"x-{os.getpid()}.parquet")
    return [
        ("tls-j1", [bin_, "tls", "-q", "-j1", access]),
        ("tls-j2", [bin_, "tls", "-q", "-j2", access]),
        ("report-j1", [bin_, "report", "-q", "-j1", "--format", "text", access]),
        ("whatif-j1", [bin_, "whatif", "-q", "-j1", "--policy", "mozilla-intermediate",
                       access]),
        ("export-parquet-j1", [bin_, "export", "-q", "-j1", "--format", "parquet", "-o",
                               pq, access]),
        ("export-ndjson-j1", [bin_, "export", "-q", "-j1", access]),
        ("export-csv-j1", [bin_, "export", "-q", "-j1", "--format", "csv", access]),
        ("gaps", [bin_, "gaps", "-q", trace]),
        ("gaps-ff-j1", [bin_, "gaps", "-q", "-j1", "--bcrypt-speed", "0.015"] + ff),
        ("gaps-ff-j2", [bin_, "gaps", "-q", "-j2", "--bcrypt-speed", "0.015"] + ff),
    ]


def peer_commands(access, trace):
    py = sys.executable
    # `wc -l` takes 0.04-0.07 s over the log, too short to time well: it reads the
    # log WC_TIMES times in one run, and its figures are divided by WC_TIMES.
    cmds = [("wc-l", ["wc", "-l"] + [access] * WC_TIMES)]
    if shutil.which("mawk"):
        cmds.append(("mawk-last-two", ["mawk", MAWK_LAST_TWO, access]))
        cmds.append(("mawk-gaps", ["mawk", MAWK_GAPS, trace]))
    have = lambda m: subprocess.run([py, "-c", f"import {m}"], capture_output=True).returncode == 0
    if have("duckdb"):
        cmds.append(("duckdb-regexp", [py, "-c",
                     "import sys, duckdb; duckdb.connect().execute(sys.argv[1], "
                     "[sys.argv[2], chr(1)]).fetchall()", DUCKDB, access]))
    if have("chdb"):
        for name, q in [("chdb-validating", CHDB_VALIDATING), ("chdb-split", CHDB_SPLIT)]:
            cmds.append((name, [py, "-c", "import sys, chdb; chdb.query(sys.argv[1], 'CSV')",
                                q.replace("{path}", access)]))
    return cmds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--strace-mb", type=int, default=100)
    ap.add_argument("--work", default="/root/.cache/tlsgap-bench")
    ap.add_argument("--tlsgap", default=default_tlsgap())
    ap.add_argument("--base")
    ap.add_argument("--loggen")
    ap.add_argument("--memory", action="store_true")
    ap.add_argument("--memory-runs", type=int, default=3)
    ap.add_argument("--only")
    args = ap.parse_args()
    if not args.tlsgap:
        die("no tlsgap binary: `cargo build --release -p tlsgap` or --tlsgap BIN")
    access, trace, ff, big = make_inputs(args)
    out = os.path.join(args.work, "out")
    os.makedirs(out, exist_ok=True)

    cmds = peer_commands(access, trace)
    # A base older than `gaps -j` runs those without it (one thread).
    base_gaps_j = args.base and b"--jobs" in subprocess.run(
        [args.base, "gaps", "--help"], capture_output=True).stdout
    for name, argv in tlsgap_commands(args.tlsgap, access, trace, ff, out):
        cmds.append((name, argv))
        if args.base:
            rest = argv[1:]
            if name.startswith("gaps-ff") and not base_gaps_j:
                rest = [a for a in rest if a not in ("-j1", "-j2")]
            cmds.append(("base:" + name, [args.base] + rest))
    if args.only:
        keep = set(args.only.split(","))
        cmds = [c for c in cmds if c[0].removeprefix("base:") in keep]

    for p in [access, trace] + ff:
        warm(p)
    load0 = os.getloadavg()
    start = datetime.datetime.now(datetime.timezone.utc)
    got = {name: [] for name, _ in cmds}
    for r in range(args.runs):
        for name, argv in cmds:
            got[name].append(run(argv))
            print(f"round {r + 1} {name}: wall {got[name][-1][0]:.3f} s cpu "
                  f"{got[name][-1][1]:.3f} s rss {got[name][-1][2]:.1f} MiB", file=sys.stderr)
    end = datetime.datetime.now(datetime.timezone.utc)
    load1 = os.getloadavg()
    med = {n: tuple(statistics.median(x[i] for x in v) for i in range(3)) for n, v in got.items()}
    if "wc-l" in med:
        wall, c, rss = med["wc-l"]
        med["wc-l"] = (wall / WC_TIMES, c / WC_TIMES, rss)

    memory = {}
    if big:
        warm(big)
        for name, argv in tlsgap_commands(args.tlsgap, big, trace, ff, out):
            if name.startswith("gaps") or (args.only and name not in args.only.split(",")):
                continue
            memory[name] = statistics.median(
                run(argv)[2] for _ in range(max(1, args.memory_runs)))

    def cpu(n):
        return med[n][1] if n in med else None

    def ratio(a, b, i=1):
        if a in med and b in med and med[b][i] > 0:
            return f"{med[a][i] / med[b][i]:.2f}×"
        return "–"

    def per_round(a, b, i=1):
        # The two commands of each round ran minutes apart at most: the ratio of each
        # round, its median and range, shows how much the machine's drift moved it.
        if a not in got or b not in got:
            return "–"
        scale = lambda n: WC_TIMES if n == "wc-l" else 1
        rs = sorted((x[i] / scale(a)) / (y[i] / scale(b))
                    for x, y in zip(got[a], got[b]) if y[i] > 0)
        if not rs:
            return "–"
        return f"{statistics.median(rs):.2f}× ({rs[0]:.2f}–{rs[-1]:.2f}×)"

    lines = []
    w = lines.append
    size = os.path.getsize(access)
    w(f"Run {start:%Y-%m-%d %H:%M}–{end:%H:%M} UTC, {args.runs} rounds, median; load "
      f"average {load0[0]:.2f} before, {load1[0]:.2f} after. tlsgap: `{args.tlsgap}`"
      + (f", base: `{args.base}`" if args.base else "") + ".")
    ff_bytes = sum(os.path.getsize(p) for p in ff)
    w(f"Inputs: `{os.path.basename(access)}` ({size:,} bytes), "
      f"`{os.path.basename(trace)}` ({os.path.getsize(trace):,} bytes), "
      f"`{os.path.basename(os.path.dirname(ff[0]))}/` ({len(ff):,} files, {ff_bytes:,} bytes).")
    w("")
    w("| ratio (issue 12) | value (of the medians) | per round: median (range) |")
    w("|---|---:|---:|")
    both = lambda a, b, i=1: f"{ratio(a, b, i)} | {per_round(a, b, i)}"
    w(f"| `tls -j1` CPU ÷ `wc -l` CPU (`wc -l` reads the log {WC_TIMES} times, ÷ {WC_TIMES}) | "
      f"{both('tls-j1', 'wc-l')} |")
    w(f"| `tls` wall, 1 thread ÷ 2 threads | {both('tls-j1', 'tls-j2', 0)} |")
    w(f"| `report` CPU ÷ `tls` CPU (both -j1) | {both('report-j1', 'tls-j1')} |")
    w(f"| `whatif --policy mozilla-intermediate` CPU ÷ `tls` CPU (both -j1) | "
      f"{both('whatif-j1', 'tls-j1')} |")
    w(f"| `export --format parquet -j1` CPU ÷ `tls -j1` CPU | "
      f"{both('export-parquet-j1', 'tls-j1')} |")
    w(f"| `gaps` CPU ÷ mawk naive per-pid gap scan CPU | {both('gaps', 'mawk-gaps')} |")
    w(f"| `gaps` over the `-ff` files, wall, 1 thread ÷ 2 threads | "
      f"{both('gaps-ff-j1', 'gaps-ff-j2', 0)} |")
    for peer in ["mawk-last-two", "duckdb-regexp", "chdb-validating", "chdb-split"]:
        w(f"| {peer} CPU ÷ `tls -j1` CPU | {both(peer, 'tls-j1')} |")
    if memory:
        for name, rss in memory.items():
            w(f"| peak memory `{name}`, {args.lines * 10:,} ÷ {args.lines:,} lines "
              f"(medians of {args.runs} and {max(1, args.memory_runs)} runs) | "
              f"{rss / med[name][2]:.2f}× ({med[name][2]:.0f} → {rss:.0f} MiB) | – |")
    w("")
    w("| command | wall s | CPU s | MB/s (wall) | peak RSS MiB |" +
      (" new ÷ base CPU |" if args.base else ""))
    w("|---|---:|---:|---:|---:|" + ("---:|" if args.base else ""))
    for name, _ in cmds:
        if name.startswith("base:"):
            continue
        wall, c, rss = med[name]
        src = trace if name.startswith(("gaps", "mawk-gaps")) else access
        src_bytes = ff_bytes if name.startswith("gaps-ff") else os.path.getsize(src)
        mbs = src_bytes / 1e6 / wall
        row = f"| {name} | {wall:.3f} | {c:.3f} | {mbs:.0f} | {rss:.1f} |"
        if args.base:
            row += f" {ratio(name, 'base:' + name)} |"
        w(row)
        if args.base and "base:" + name in med:
            bw, bc, br = med["base:" + name]
            w(f"| base:{name} | {bw:.3f} | {bc:.3f} | {src_bytes / 1e6 / bw:.0f} | "
              f"{br:.1f} | |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(os.path.join(args.work, f"ratios-{start:%Y%m%dT%H%M}.md"), "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
