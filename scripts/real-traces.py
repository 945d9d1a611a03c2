#!/usr/bin/env python3
"""Produce REAL strace traces whose slow gaps are known from outside the trace.

Usage:  python3 scripts/real-traces.py OUTDIR [--keep-tmp] [--no-apache]
                                              [--apache-mode auto|attach|launch]

The script writes into OUTDIR:

  * spin/     a small Python program (work/spinner.py) that reads work/data.txt,
              spins the CPU for 0.30 s, reads work/data2.txt, spins 0.15 s, and
              writes what it measured itself (perf_counter / time.time) to a
              side file; traced with eight different strace flag sets;
  * threads/  a two-thread program (work/threads.py): the main thread reads
              work/threads-data.txt and spins 0.40 s under a 10 ms ITIMER_PROF
              with a SIGPROF handler (--- SIGPROF --- / rt_sigreturn noise in
              the CPU stretch) while the other thread sleeps 0.80 s in
              clock_nanosleep; traced three ways;
  * apache-ff/  a real Apache 2.4 (prefork, mod_ssl, mod_auth_basic +
              mod_authn_file) on 127.0.0.1, /private protected by an htpasswd
              file made by the real htpasswd tool (slowuser: bcrypt cost 12,
              shauser: {SHA}); strace attached to the parent and the workers
              with the recommended `-ff -ttt -T -yy -s 4096`, curl over HTTPS;
  * apache-f-stderr/  the same kind of run traced with `-f -tt -T -y` to
              strace's stderr (`[pid N]` prefixes);
  * manifest.json  every trace, its files, the strace flags, and the ground
              truth measured outside the trace (keys: see README below, which
              is also written to OUTDIR/README.md).

Only the Python standard library is used.  Servers bind only to 127.0.0.1 on
free high ports and are stopped by PID.  Runs as root (Apache drops to
www-data); takes about 20-30 s.  Exit status 0 on success, 1 on any failure
(with a message naming what failed), 2 on bad usage.
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import (  # noqa: E402  (needs the sys.path entry above)
    APACHE_MODULES, AttachFailed, Fail, PortTaken, alive, apache_basic_auth,
    apache_docroot, apache_head, apache_logformat, apache_prefork, apache_ssl_vhost,
    children_cpu_seconds, children_of, first_line, fix_perms, free_port, log, make_cert,
    raise_on_termination, read_pidfile, reap_group, rel, run, set_prog, stop_group,
    tail, tool_path, tracer_of, wait_port, write_conf)

PROG = "real-traces"
set_prog(PROG)
SCHEMA = 1

# The traced programs run under this time zone so that -t/-tt stamps (which
# carry no date and no zone) can be related to the epoch times in the truth.
TRACE_TZ = "UTC"

SPIN_STEPS = [("data.txt", 0.30), ("data2.txt", 0.15)]
THREADS_SPIN = 0.40
THREADS_SLEEP = 0.80
PROF_INTERVAL = 0.01

BCRYPT_COST = 12
USERS = {
    # user -> (password, htpasswd flags, hash kind)
    "slowuser": ("slow-secret-12", ["-B", "-C", str(BCRYPT_COST)], "bcrypt"),
    "shauser": ("sha-secret", ["-s"], "sha1"),
}
WRONG_PASSWORD = "not-the-password"

LOG_FORMAT = ('%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i" '
              "%{SSL_PROTOCOL}x %{SSL_CIPHER}x %P "
              "%{begin:sec}t.%{begin:usec_frac}t %D")
LOG_RE = re.compile(
    r'^(?P<client>\S+) (?P<ident>\S+) (?P<user>\S+) \[(?P<time>[^\]]+)\] '
    r'"(?P<request>[^"]*)" (?P<status>\d{3}) (?P<bytes>\S+) "(?P<referer>[^"]*)" '
    r'"(?P<ua>[^"]*)" (?P<proto>\S+) (?P<cipher>\S+) (?P<pid>\d+) '
    r'(?P<begin>\d+\.\d{6}) (?P<dur>\d+)$')

# ---------------------------------------------------------------------------
# the traced programs (written to OUTDIR/work/, run with `python -I -S`)
# ---------------------------------------------------------------------------

# Both programs import only built-in modules (no json, threading, signal.py):
# an import reads many files, and the traces should stay small and to the point.
JS_WRITER = r'''

def js(v):
    # JSON without importing json
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        out = []
        for ch in v:
            if ch in '"\\':
                out.append("\\" + ch)
            elif ord(ch) < 0x20:
                out.append("\\u%04x" % ord(ch))
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(v, dict):
        return "{" + ", ".join(js(k) + ": " + js(x) for k, x in v.items()) + "}"
    return "[" + ", ".join(js(x) for x in v) + "]"


def write_side(path, obj):
    with open(path, "w", encoding="utf-8") as f:
        f.write(js(obj) + "\n")
'''

SPINNER = r'''# tlsgap scripts/real-traces.py: read a file, burn CPU, measure it yourself.
# argv: SIDE_FILE PATH=SECONDS [PATH=SECONDS ...]
# Only the vDSO clocks (time.time, time.perf_counter) are read while spinning,
# so a CPU stretch makes no system call.
import os
import sys
import time
''' + JS_WRITER + r'''

def spin(seconds):
    p0 = time.perf_counter()
    w0 = time.time()
    end = p0 + seconds
    while time.perf_counter() < end:
        for _ in range(2000):
            pass
    p1 = time.perf_counter()
    w1 = time.time()
    return w0, w1, p1 - p0


def main():
    side = sys.argv[1]
    pid = os.getpid()
    stretches = []
    for arg in sys.argv[2:]:
        path, target = arg.rsplit("=", 1)
        with open(path, "rb") as f:
            data = f.read()
        # the stretch starts once close() has returned
        w0, w1, took = spin(float(target))
        stretches.append({"after_file": path, "bytes_read": len(data),
                          "target_seconds": float(target),
                          "start_unix": w0, "end_unix": w1,
                          "wall_seconds": took})
    write_side(side, {"pid": pid, "tid": pid, "stretches": stretches})


main()
'''

THREADS = r'''# tlsgap scripts/real-traces.py: a spinning thread under SIGPROF and a sleeping one.
# argv: SIDE_FILE DATA_FILE SPIN_SECONDS SLEEP_SECONDS PROF_INTERVAL
import _signal
import _thread
import os
import sys
import time
''' + JS_WRITER + r'''
hits = [0]


def on_prof(signum, frame):
    hits[0] += 1


def main():
    side, data_path = sys.argv[1], sys.argv[2]
    spin_s, sleep_s, interval = (float(x) for x in sys.argv[3:6])
    _signal.signal(_signal.SIGPROF, on_prof)
    ready = _thread.allocate_lock()
    ready.acquire()
    done = _thread.allocate_lock()
    done.acquire()
    info = {}

    def sleeper():
        # SIGPROF must hit the spinning main thread, where Python runs handlers
        _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGPROF})
        info["tid"] = _thread.get_native_id()
        info["start"] = time.time()
        ready.release()
        time.sleep(sleep_s)
        info["end"] = time.time()
        done.release()

    _thread.start_new_thread(sleeper, ())
    ready.acquire(timeout=10)
    with open(data_path, "rb") as f:
        data = f.read()
    _signal.setitimer(_signal.ITIMER_PROF, interval, interval)
    p0 = time.perf_counter()
    w0 = time.time()
    end = p0 + spin_s
    while time.perf_counter() < end:
        for _ in range(2000):
            pass
    p1 = time.perf_counter()
    w1 = time.time()
    _signal.setitimer(_signal.ITIMER_PROF, 0, 0)
    done.acquire(timeout=30)
    write_side(side, {
        "pid": os.getpid(),
        "spinner": {"tid": _thread.get_native_id(), "after_file": data_path,
                    "bytes_read": len(data), "target_seconds": spin_s,
                    "start_unix": w0, "end_unix": w1, "wall_seconds": p1 - p0,
                    "sigprof_handled": hits[0],
                    "itimer_prof_interval_seconds": interval},
        "sleeper": {"tid": info.get("tid"), "sleep_seconds": sleep_s,
                    "start_unix": info.get("start"), "end_unix": info.get("end")}})


main()
'''

# ---------------------------------------------------------------------------
# scenarios 1 and 2: our own programs under strace
# ---------------------------------------------------------------------------

def trace_env():
    env = dict(os.environ)
    env["TZ"] = TRACE_TZ
    env["LC_ALL"] = "C"
    return env


def python_exe():
    # Debian's interpreter where there is one (what CI has), else the one
    # running this script -- resolved: a shim script (pyenv) would add a shell
    # and execve chains to every trace
    for cand in ("/usr/bin/python3", sys.executable):
        if cand and os.path.exists(cand):
            return os.path.realpath(cand)
    raise Fail("no Python interpreter found to trace")


def run_traced(strace, flags, output, out_file, argv, cwd, timeout=30):
    """Run argv under strace.  output: 'file' / 'per-pid' (flags already carry
    -o) or 'stderr' (strace's stderr is captured to out_file).  Returns
    (rc, tail of strace's stderr)."""
    cmd = [strace] + flags + ["--"] + argv
    err_path = out_file if output == "stderr" else out_file + ".strace-stderr"
    with open(err_path, "wb") as err:
        # argv[0] "strace" (not the full path): its messages then read
        # "strace: ..." as they do for a user
        proc = subprocess.Popen(["strace"] + cmd[1:], executable=strace,
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, cwd=cwd,
                                env=trace_env(), start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            stop_group(proc, signal.SIGKILL, "strace")
            raise Fail("traced run timed out after %ss: %s" % (timeout, " ".join(cmd)))
        finally:
            reap_group(proc)
    if output == "stderr":
        msg = tail(err_path, 10)
    else:
        msg = tail(err_path, 20)
        os.unlink(err_path)
    if rc != 0:
        raise Fail("strace run failed (exit %d): %s\n%s" % (rc, " ".join(cmd), msg))
    return rc, msg


SPIN_VARIANTS = [
    # id, flags (before -o), output kind: file | per-pid | stderr
    ("f-o", ["-f"], "file"),
    ("ff-o", ["-ff"], "per-pid"),
    ("tt", ["-tt"], "file"),
    ("ttt-T-y", ["-ttt", "-T", "-y"], "file"),
    ("r", ["-r"], "file"),
    ("t", ["-t"], "file"),
    ("tt-T-stderr", ["-tt", "-T"], "stderr"),
    ("abs-unix-ns-T", ["--absolute-timestamps=format:unix,precision:ns", "-T"], "file"),
]

THREADS_VARIANTS = [
    ("f-tt-T-y-stderr", ["-f", "-tt", "-T", "-y"], "stderr"),
    ("f-tt-T-y-o", ["-f", "-tt", "-T", "-y"], "file"),
    ("ff-ttt-T", ["-ff", "-ttt", "-T"], "per-pid"),
]


def describe_flags(flags, output):
    """Static facts a parser needs about a flag set."""
    f = set(flags)
    ts = "none"
    for flag, name in (("-t", "t"), ("-tt", "tt"), ("-ttt", "ttt"), ("-r", "r")):
        if flag in f:
            ts = name
    for x in flags:
        if x.startswith("--absolute-timestamps="):
            ts = "unix-ns" if "precision:ns" in x else x.split("=", 1)[1]
    follow = "-ff" if "-ff" in f else ("-f" if "-f" in f else None)
    if output == "per-pid":
        prefix = "none (pid from file name suffix)"
    elif follow == "-f":
        prefix = "[pid N] while more than one tracee" if output == "stderr" else "PID"
    else:
        prefix = "none"
    return {"timestamps": ts, "durations": "-T" in f,
            "fd_paths": "yy" if "-yy" in f else ("y" if "-y" in f else "none"),
            "follow": follow, "pid_prefix": prefix}


def trace_files(base, output):
    if output == "per-pid":
        d, p = os.path.split(base)
        return sorted(os.path.join(d, n) for n in os.listdir(d)
                      if re.fullmatch(re.escape(p) + r"\.\d+", n))
    return [base]


def check_no_clock_syscalls(files, notes):
    for path in files:
        with open(path, "rb") as f:
            if b"clock_gettime(" in f.read():
                notes.append("%s: clock_gettime appears as a system call (the vDSO "
                             "clock is not available here), the CPU stretch is not "
                             "syscall-free" % os.path.basename(path))


def scenario_spin(strace, outdir, work, self_notes):
    d = os.path.join(outdir, "spin")
    os.makedirs(d, exist_ok=True)
    entries = []
    for vid, flags, output in SPIN_VARIANTS:
        base = os.path.join(d, vid + ".trace")
        side = os.path.join(d, vid + ".truth.json")
        for old in trace_files(base, "per-pid") + [base, side]:
            if os.path.exists(old):
                os.unlink(old)
        full_flags = list(flags) + (["-o", base] if output != "stderr" else [])
        argv = [python_exe(), "-I", "-S", os.path.join(work, "spinner.py"), side]
        argv += ["%s=%s" % (os.path.join(work, name), secs) for name, secs in SPIN_STEPS]
        t0 = time.time()
        run_traced(strace, full_flags, output, base, argv, work)
        files = trace_files(base, output)
        if not files or not all(os.path.getsize(p) > 0 for p in files):
            raise Fail("spin/%s: strace wrote no trace (%s)" % (vid, base))
        try:
            with open(side) as f:
                truth = json.load(f)
        except (OSError, ValueError) as e:
            raise Fail("spin/%s: the traced program wrote no side file %s: %s"
                       % (vid, side, e))
        check_no_clock_syscalls(files, self_notes)
        gaps = []
        for i, st in enumerate(truth["stretches"]):
            if st["wall_seconds"] < st["target_seconds"]:
                raise Fail("spin/%s: stretch %d shorter than asked" % (vid, i))
            nxt = ("openat of " + truth["stretches"][i + 1]["after_file"]
                   if i + 1 < len(truth["stretches"]) else
                   "openat of the side file " + side)
            gaps.append({
                "file": rel(files[0], outdir), "pid": truth["pid"], "tid": truth["tid"],
                "after_file": st["after_file"],
                "last_call_before": "close(fd of %s)" % os.path.basename(st["after_file"]),
                "first_call_after": nxt,
                "seconds": st["wall_seconds"],
                "start_unix": st["start_unix"], "end_unix": st["end_unix"],
                "kind": "cpu",
                "cause": "user-space busy loop (Python) right after reading %s"
                         % os.path.basename(st["after_file"]),
                "measured_by": "the traced program (time.perf_counter around the loop)",
            })
        entries.append({
            "id": "spin/" + vid, "scenario": "spin",
            "strace_flags": flags + (["-o", rel(base, outdir)] if output != "stderr" else []),
            "output": output,
            "files": [rel(p, outdir) for p in files],
            "format": describe_flags(flags, output),
            "tz": TRACE_TZ, "run_start_unix": t0,
            "program": [python_exe(), "-I", "-S", "work/spinner.py"],
            "side_file": rel(side, outdir), "truth": truth,
            "pids": [truth["pid"]],
            "files_read_before_cpu": [s["after_file"] for s in truth["stretches"]],
            "expected_gaps": gaps, "expected_blocked": [],
        })
        log("spin/%-16s %s  stretches %s s" % (
            vid, ", ".join(rel(p, outdir) for p in files),
            " + ".join("%.3f" % s["wall_seconds"] for s in truth["stretches"])))
    return entries


def scenario_threads(strace, outdir, work, self_notes):
    d = os.path.join(outdir, "threads")
    os.makedirs(d, exist_ok=True)
    data = os.path.join(work, "threads-data.txt")
    entries = []
    for vid, flags, output in THREADS_VARIANTS:
        base = os.path.join(d, vid + ".trace")
        side = os.path.join(d, vid + ".truth.json")
        for old in trace_files(base, "per-pid") + [base, side]:
            if os.path.exists(old):
                os.unlink(old)
        full_flags = list(flags) + (["-o", base] if output != "stderr" else [])
        argv = [python_exe(), "-I", "-S", os.path.join(work, "threads.py"), side, data,
                str(THREADS_SPIN), str(THREADS_SLEEP), str(PROF_INTERVAL)]
        t0 = time.time()
        run_traced(strace, full_flags, output, base, argv, work)
        files = trace_files(base, output)
        try:
            with open(side) as f:
                truth = json.load(f)
        except (OSError, ValueError) as e:
            raise Fail("threads/%s: the traced program wrote no side file %s: %s"
                       % (vid, side, e))
        check_no_clock_syscalls(files, self_notes)
        sp, sl = truth["spinner"], truth["sleeper"]
        if sp["sigprof_handled"] < 3:
            self_notes.append("threads/%s: only %d SIGPROF handled during the spin"
                              % (vid, sp["sigprof_handled"]))
        if output == "per-pid":
            by_tid = {int(p.rsplit(".", 1)[1]): p for p in files}
            spin_file = by_tid.get(sp["tid"])
            sleep_file = by_tid.get(sl["tid"])
            if spin_file is None or sleep_file is None:
                raise Fail("threads/%s: no per-thread file for tid %s/%s among %s"
                           % (vid, sp["tid"], sl["tid"], files))
        else:
            spin_file = sleep_file = files[0]
        with open(spin_file, "rb") as f:
            body = f.read()
        sigprof_lines = body.count(b"--- SIGPROF ")
        if sigprof_lines == 0:
            self_notes.append("threads/%s: no SIGPROF line in %s"
                              % (vid, os.path.basename(spin_file)))
        entries.append({
            "id": "threads/" + vid, "scenario": "threads",
            "strace_flags": flags + (["-o", rel(base, outdir)] if output != "stderr" else []),
            "output": output,
            "files": [rel(p, outdir) for p in files],
            "format": describe_flags(flags, output),
            "tz": TRACE_TZ, "run_start_unix": t0,
            "program": [python_exe(), "-I", "-S", "work/threads.py"],
            "side_file": rel(side, outdir), "truth": truth,
            "pids": [truth["pid"]], "tids": [sp["tid"], sl["tid"]],
            "files_read_before_cpu": [sp["after_file"]],
            "expected_gaps": [{
                "file": rel(spin_file, outdir), "pid": truth["pid"], "tid": sp["tid"],
                "after_file": sp["after_file"],
                "last_call_before": "setitimer(ITIMER_PROF, ...) (after close of %s)"
                                    % os.path.basename(sp["after_file"]),
                "first_call_after": "setitimer(ITIMER_PROF, 0) to stop the timer",
                "seconds": sp["wall_seconds"],
                "start_unix": sp["start_unix"], "end_unix": sp["end_unix"],
                "kind": "cpu",
                "interruptions": "%d '--- SIGPROF' + rt_sigreturn pairs in the trace "
                                 "(%d handled by Python); merge across them"
                                 % (sigprof_lines, sp["sigprof_handled"]),
                "sigprof_lines_in_trace": sigprof_lines,
                "cause": "user-space busy loop (Python) right after reading %s"
                         % os.path.basename(sp["after_file"]),
                "measured_by": "the traced program (time.perf_counter around the loop)",
            }],
            "expected_blocked": [{
                "file": rel(sleep_file, outdir), "pid": truth["pid"], "tid": sl["tid"],
                "syscall": "clock_nanosleep", "seconds": sl["sleep_seconds"],
                "start_unix": sl["start_unix"], "end_unix": sl["end_unix"],
                "cause": "time.sleep in the other thread: blocked, not CPU",
            }],
        })
        log("threads/%-16s %s  spin %.3f s, %d SIGPROF" % (
            vid, ", ".join(rel(p, outdir) for p in files), sp["wall_seconds"],
            sp["sigprof_handled"]))
    return entries


# ---------------------------------------------------------------------------
# scenario 3/4: Apache
# ---------------------------------------------------------------------------

def make_apache_files(tmp, htpasswd_bin, openssl):
    www = os.path.join(tmp, "www")
    os.makedirs(os.path.join(www, "private"))
    with open(os.path.join(www, "index.html"), "w") as f:
        f.write("<html><body>tlsgap real-traces public</body></html>\n")
    with open(os.path.join(www, "private", "index.html"), "w") as f:
        f.write("<html><body>tlsgap real-traces private</body></html>\n")
    htp = os.path.join(tmp, "htpasswd")
    first = True
    for user, (pw, hflags, _kind) in USERS.items():
        r = run([htpasswd_bin] + (["-c"] if first else []) + ["-b"] + hflags
                + [htp, user, pw])
        if r.returncode != 0:
            raise Fail("htpasswd %s for %s failed (exit %d):\n%s" % (
                " ".join(hflags), user, r.returncode, r.stderr.decode(errors="replace")))
        first = False
    with open(htp) as f:
        text = f.read()
    if "slowuser:$2y$%02d$" % BCRYPT_COST not in text or "shauser:{SHA}" not in text:
        raise Fail("htpasswd wrote unexpected hashes:\n" + text)
    cert = os.path.join(tmp, "cert.pem")
    key = os.path.join(tmp, "key.pem")
    # an EC key keeps the certificate (and the handshake writev() in the
    # traces) small
    make_cert(openssl, cert, key, kind="ec", what="openssl req (self-signed cert)")
    # www-data must traverse the temp dir and read docroot and htpasswd
    fix_perms(tmp)
    return www, htp, cert, key


def apache_conf(d, www, htp, cert, key, port, as_root):
    os.makedirs(os.path.join(d, "run"))
    os.chmod(d, 0o755)
    L = apache_head("scripts/real-traces.py", d, [
        "mpm_prefork", "authn_core", "authn_file", "authz_core", "authz_user",
        "auth_basic", "dir", "socache_shmcb", "ssl"])
    if as_root:
        L += ["User www-data", "Group www-data"]
    L += apache_prefork(2, 1, 2, 4)
    L += ["Listen 127.0.0.1:%d" % port,
          "ErrorLog %s/error.log" % d, "LogLevel info"]
    L += apache_docroot(www)
    L += apache_basic_auth("/private", "tlsgap private", htp)
    L += ["SSLSessionCache shmcb:%s/run/ssl_scache(512000)" % d,
          apache_logformat(LOG_FORMAT, "tlsgap"),
          "CustomLog %s/access.log tlsgap" % d]
    L += apache_ssl_vhost(port, [(cert, key)])
    return write_conf(os.path.join(d, "httpd.conf"), L)


def measure_bcrypt(htpasswd_bin, htp, runs=5):
    """Time htpasswd -vb (the same APR password code Apache uses) for the
    bcrypt user and, as a baseline for process start-up, for the {SHA} user.
    CPU time, not wall time: a busy machine (another build on the other core)
    stretched the wall time of the reference to twice what the verification
    costs, and the gaps it is compared with then looked too short."""
    res = {}
    for user in ("slowuser", "shauser"):
        pw = USERS[user][0]
        times = []
        for _ in range(runs):
            t0 = children_cpu_seconds()
            r = run([htpasswd_bin, "-vb", htp, user, pw])
            times.append(children_cpu_seconds() - t0)
            if r.returncode != 0:
                raise Fail("htpasswd -vb %s %s failed (exit %d): %s" % (
                    htp, user, r.returncode, r.stderr.decode(errors="replace")))
        res[user] = times
    bc, sha = statistics.median(res["slowuser"]), statistics.median(res["shauser"])
    out = {
        "cost": BCRYPT_COST,
        "method": "CPU time (user + system) of `htpasswd -vb FILE USER PASSWORD` "
                  "(apr_password_validate, the code mod_authn_file calls), median of %d "
                  "runs, minus the median for the {SHA} user (process start-up baseline)"
                  % runs,
        "htpasswd_bcrypt_runs_seconds": res["slowuser"],
        "htpasswd_sha_runs_seconds": res["shauser"],
        "htpasswd_bcrypt_median_seconds": bc,
        "htpasswd_sha_median_seconds": sha,
        "verify_seconds": bc - sha,
        "python_crypt_seconds": None,
    }
    # cross-check with libxcrypt through Python's crypt module, where it exists
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import crypt  # removed in Python 3.13
        with open(htp) as f:
            h = [l.split(":", 1)[1].strip() for l in f if l.startswith("slowuser:")][0]
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            ok = crypt.crypt(USERS["slowuser"][0], h) == h
            ts.append(time.perf_counter() - t0)
            if not ok:
                ts = None
                break
        if ts:
            out["python_crypt_seconds"] = statistics.median(ts)
    except Exception:
        pass
    return out


class Session:
    """One Apache run with strace: attach to running workers or launch under strace."""

    def __init__(self, name, tmp, outdir, files, apache_bin, strace, flags, output,
                 mode, as_root, attempt=1):
        self.name, self.tmp, self.outdir = name, tmp, outdir
        self.www, self.htp, self.cert, self.key = files
        self.apache_bin, self.strace, self.flags, self.output = (
            apache_bin, strace, flags, output)
        self.mode, self.as_root, self.attempt = mode, as_root, attempt
        self.apache = self.tracer = None
        self.parent = None
        self.workers_at_attach = []

    def dir(self):
        return os.path.join(self.tmp, "%s-%s-%d" % (self.name, self.mode, self.attempt))

    def out(self):
        return os.path.join(self.outdir, self.name)

    def trace_base(self):
        return os.path.join(self.out(), "trace")

    def strace_cmd(self):
        cmd = [self.strace] + self.flags
        if self.output != "stderr":
            cmd += ["-o", self.trace_base()]
        return cmd

    def start(self):
        d = self.dir()
        self.port = free_port()
        self.conf = apache_conf(d, self.www, self.htp, self.cert, self.key, self.port,
                                self.as_root)
        r = run([self.apache_bin, "-f", self.conf, "-t"])
        if r.returncode != 0:
            raise Fail("apache config test failed:\n" + r.stderr.decode(errors="replace"))
        out = self.out()
        if os.path.isdir(out):
            shutil.rmtree(out)
        os.makedirs(out)
        self.strace_err = (os.path.join(out, "trace") if self.output == "stderr"
                           else os.path.join(d, "strace.stderr"))
        self.apache_out = open(os.path.join(d, "stdout.log"), "wb")
        pidfile = os.path.join(d, "run", "httpd.pid")
        if self.mode == "attach":
            self.apache = subprocess.Popen(
                [self.apache_bin, "-f", self.conf, "-DFOREGROUND"],
                stdin=subprocess.DEVNULL, stdout=self.apache_out,
                stderr=subprocess.STDOUT, cwd=d, start_new_session=True)
            self.parent = self.apache.pid
            if (read_pidfile(pidfile, expect=self.parent) is None
                    or not wait_port(self.port, lambda: self.apache.poll() is None)):
                raise self.start_failure()
            kids = self.wait_workers()
            pids = [self.parent] + kids
            cmd = self.strace_cmd()
            for p in pids:
                cmd += ["-p", str(p)]
            self.cmd = cmd
            self.err_file = open(self.strace_err, "wb")
            self.tracer = subprocess.Popen(["strace"] + cmd[1:], executable=cmd[0],
                                           stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL,
                                           stderr=self.err_file, env=trace_env(),
                                           cwd=d, start_new_session=True)
            self.wait_attached(pids)
            self.workers_at_attach = kids
        else:
            cmd = self.strace_cmd() + ["--", self.apache_bin, "-f", self.conf,
                                       "-DFOREGROUND"]
            self.cmd = cmd
            self.err_file = open(self.strace_err, "wb")
            # strace's own messages go to strace_err; Apache logs to files
            self.tracer = subprocess.Popen(["strace"] + cmd[1:], executable=cmd[0],
                                           stdin=subprocess.DEVNULL,
                                           stdout=self.apache_out,
                                           stderr=self.err_file, env=trace_env(),
                                           cwd=d, start_new_session=True)
            self.parent = read_pidfile(pidfile)
            if (self.parent is None
                    or not wait_port(self.port, lambda: self.tracer.poll() is None)):
                raise self.start_failure()
            self.workers_at_attach = self.wait_workers()
        time.sleep(0.5)  # let every tracee settle into its wait

    def start_failure(self):
        d = self.dir()
        for log_name in ("error.log", "stdout.log"):
            try:
                with open(os.path.join(d, log_name), "rb") as f:
                    if b"Address already in use" in f.read():
                        return PortTaken("apache (%s): port %d already in use"
                                         % (self.name, self.port))
            except OSError:
                pass
        return Fail("apache (%s, port %d) failed to start.\n--- error.log ---\n%s\n"
                "--- stdout/stderr ---\n%s%s" % (
                    self.name, self.port, tail(os.path.join(d, "error.log")),
                    tail(os.path.join(d, "stdout.log")),
                    ("\n--- strace stderr ---\n" + tail(self.strace_err))
                    if self.tracer is not None else ""))

    def wait_workers(self, n=2, timeout=10):
        deadline = time.time() + timeout
        kids = children_of(self.parent)
        while len(kids) < n and time.time() < deadline:
            time.sleep(0.1)
            kids = children_of(self.parent)
        if len(kids) < n:
            raise Fail("apache (%s): expected %d prefork workers under pid %d, found %s"
                       % (self.name, n, self.parent, kids))
        return kids

    def wait_attached(self, pids, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.tracer.poll() is not None:
                break
            if all(tracer_of(p) == self.tracer.pid for p in pids):
                return
            time.sleep(0.05)
        self.err_file.flush()
        msg = tail(self.strace_err)
        raise AttachFailed("strace could not attach to Apache pids %s (%s):\n%s" % (
            pids, "strace exited with %s" % self.tracer.returncode
            if self.tracer.poll() is not None else "timed out", msg))

    def stop(self):
        """Stop tracing first (attach mode), then Apache."""
        if self.mode == "attach":
            stop_group(self.tracer, signal.SIGINT, "strace")
            stop_group(self.apache, signal.SIGTERM, "apache")
        else:
            # Apache is strace's child: stop it and let strace finish on its own
            if self.parent and self.tracer is not None and self.tracer.poll() is None:
                try:
                    os.kill(self.parent, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    self.tracer.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
            stop_group(self.tracer, signal.SIGINT, "strace (launch mode)")
        for f in (getattr(self, "err_file", None), getattr(self, "apache_out", None)):
            if f is not None and not f.closed:
                f.close()
        if self.parent and alive(self.parent) and self.parent != os.getpid():
            try:
                os.kill(self.parent, signal.SIGKILL)
            except ProcessLookupError:
                pass


CURL_W = ("%{http_code} %{time_connect} %{time_appconnect} %{time_pretransfer} "
          "%{time_starttransfer} %{time_total} %{ssl_verify_result}\n")


def do_request(port, n, user, password):
    target = ("/private/index.html?n=%d" if user else "/index.html?n=%d") % n
    cmd = ["curl", "-q", "-sS", "-k", "--noproxy", "*", "--http1.1",
           "--max-time", "20", "--connect-timeout", "5",
           "-o", "/dev/null", "-w", CURL_W]
    if user:
        cmd += ["-u", "%s:%s" % (user, password)]
    cmd.append("https://127.0.0.1:%d%s" % (port, target))
    t0 = time.time()
    r = run(cmd, timeout=30)
    t1 = time.time()
    if r.returncode != 0:
        raise Fail("curl request n=%d (%s) failed (exit %d): %s" % (
            n, user or "anonymous", r.returncode, r.stderr.decode(errors="replace")))
    parts = r.stdout.decode().split()
    return target, {
        "status": int(parts[0]),
        "curl": {"start_unix": t0, "end_unix": t1,
                 "time_connect": float(parts[1]), "time_appconnect": float(parts[2]),
                 "time_pretransfer": float(parts[3]),
                 "time_starttransfer": float(parts[4]), "time_total": float(parts[5])},
    }


def plan_requests(kind):
    """(user, password_ok) in order; user None = public page."""
    if kind == "full":
        p = [(None, None)]
        for _ in range(4):
            p += [("slowuser", True), ("shauser", True)]
        p += [("slowuser", False), ("slowuser", False)]
        return p
    return [(None, None), ("slowuser", True), ("shauser", True), ("slowuser", False)]


def drive_apache(sess, plan):
    reqs = []
    for n, (user, ok) in enumerate(plan, 1):
        pw = None
        if user:
            pw = USERS[user][0] if ok else WRONG_PASSWORD
        target, res = do_request(sess.port, n, user, pw)
        kind = USERS[user][2] if user else None
        expected = 200 if (user is None or ok) else 401
        if res["status"] != expected:
            raise Fail("apache (%s): request n=%d user=%s got HTTP %d, expected %d" % (
                sess.name, n, user, res["status"], expected))
        reqs.append({"n": n, "target": target, "user": user, "password_ok": ok,
                     "hash": kind,
                     "bcrypt_cost": BCRYPT_COST if kind == "bcrypt" else None,
                     "expected_status": expected, "status": res["status"],
                     "curl": res["curl"]})
        time.sleep(0.25)  # idle time between requests keeps them apart in the trace
    return reqs


def join_access_log(sess, reqs, path):
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8", "replace").splitlines()
    by_n = {}
    for i, line in enumerate(lines, 1):
        m = LOG_RE.match(line)
        if not m:
            raise Fail("apache (%s): access log line %d does not match the LogFormat: %r"
                       % (sess.name, i, line))
        mn = re.search(r"[?&]n=(\d+)", m.group("request"))
        if mn:
            by_n[int(mn.group(1))] = (i, m)
    for r in reqs:
        if r["n"] not in by_n:
            raise Fail("apache (%s): no access-log line for request n=%d" % (sess.name, r["n"]))
        i, m = by_n[r["n"]]
        user = m.group("user")
        r["log"] = {"line": i, "pid": int(m.group("pid")),
                    "begin_unix": float(m.group("begin")),
                    "duration_us": int(m.group("dur")),
                    "user": None if user == "-" else user,
                    "status": int(m.group("status")),
                    "tls_protocol": m.group("proto"), "tls_cipher": m.group("cipher")}
        if r["log"]["status"] != r["status"]:
            raise Fail("apache (%s): n=%d logged status %d but curl saw %d" % (
                sess.name, r["n"], r["log"]["status"], r["status"]))
    return len(lines)


def scenario_apache(kind, name, flags, output, tmp, outdir, files, tools, mode, as_root,
                    bcrypt, self_notes):
    modes = [mode] if mode != "auto" else ["attach", "launch"]
    sess = None
    attempt = 0
    while modes:
        m = modes[0]
        attempt += 1
        sess = Session(name, tmp, outdir, files, tools["apache2"], tools["strace"],
                       flags, output, m, as_root, attempt)
        try:
            sess.start()
            break
        except PortTaken:
            sess.stop()
            if attempt >= 3:
                raise
            log("warning: port %d was taken before Apache bound it; retrying" % sess.port)
            continue
        except AttachFailed as e:
            modes.pop(0)
            sess.stop()
            if not modes:
                raise
            log("warning: %s; retrying with Apache started under strace "
                "(launch mode)" % str(e).splitlines()[0])
            self_notes.append("%s: attach failed, traced in launch mode: %s"
                              % (name, str(e).splitlines()[0]))
        except Exception:
            sess.stop()
            raise
    try:
        t0 = time.time()
        reqs = drive_apache(sess, plan_requests(kind))
        time.sleep(0.3)
        workers_end = children_of(sess.parent)
    finally:
        sess.stop()
    out = sess.out()
    d = sess.dir()
    for src, dst in (("access.log", "access.log"), ("error.log", "error.log"),
                     ("httpd.conf", "httpd.conf")):
        shutil.copyfile(os.path.join(d, src), os.path.join(out, dst))
    shutil.copyfile(sess.htp, os.path.join(out, "htpasswd"))
    nlines = join_access_log(sess, reqs, os.path.join(out, "access.log"))
    files_out = trace_files(sess.trace_base(), "per-pid" if output == "per-pid" else "file")
    if not files_out:
        raise Fail("apache (%s): strace wrote no trace files under %s" % (name, out))
    served = sorted({r["log"]["pid"] for r in reqs})
    gaps = []
    for r in reqs:
        tf = (sess.trace_base() + ".%d" % r["log"]["pid"]) if output == "per-pid" \
            else files_out[0]
        r["trace_file"] = rel(tf, outdir)
        if not os.path.exists(tf):
            raise Fail("apache (%s): no trace file %s for the worker (pid %d) that "
                       "served n=%d" % (name, tf, r["log"]["pid"], r["n"]))
        if r["user"]:
            with open(tf, "rb") as f:
                if sess.htp.encode() not in f.read():
                    self_notes.append("%s: %s never mentions %s"
                                      % (name, rel(tf, outdir), sess.htp))
        if r["hash"] == "bcrypt":
            r["expected_auth_gap_seconds"] = bcrypt["verify_seconds"]
            r["expected_cause"] = ("bcrypt cost %d verification in user space "
                                   "(mod_authn_file, apr_password_validate) after "
                                   "reading %s" % (BCRYPT_COST, sess.htp))
            begin = r["log"]["begin_unix"]
            gaps.append({
                "file": r["trace_file"], "pid": r["log"]["pid"], "tid": r["log"]["pid"],
                "request_n": r["n"], "user": r["user"], "status": r["status"],
                "after_file": sess.htp,
                "last_call_before": "close(fd of %s) after read() of it" % sess.htp,
                "first_call_after": ("openat of the requested file (200)"
                                     if r["status"] == 200 else
                                     "getpid() then write() of the error log "
                                     "(401: Password Mismatch)"),
                "seconds": bcrypt["verify_seconds"],
                "window_start_unix": begin,
                "window_end_unix": begin + r["log"]["duration_us"] / 1e6,
                "kind": "cpu",
                "cause": r["expected_cause"],
                "measured_by": "htpasswd -vb outside Apache (see bcrypt); window from "
                               "the access log (%{begin}t + %D)",
            })
        else:
            r["expected_auth_gap_seconds"] = 0.0 if r["user"] else None
            r["expected_cause"] = None
    version = run([tools["apache2"], "-v"]).stdout.decode()
    entry = {
        "id": name, "scenario": "apache",
        "strace_flags": [x if x != sess.trace_base() else rel(x, outdir)
                         for x in sess.strace_cmd()[1:]]
        + (["-p", "PARENT", "-p", "WORKER..."] if sess.mode == "attach"
           else ["--", "apache2", "-f", "httpd.conf", "-DFOREGROUND"]),
        "output": output,
        "files": [rel(p, outdir) for p in files_out],
        "format": describe_flags(flags, output),
        "tz": TRACE_TZ, "run_start_unix": t0,
        "attach_mode": sess.mode,
        "strace_argv": ["strace"] + [rel(x, outdir) if x == sess.trace_base() else x
                                     for x in sess.cmd[1:]],
        "apache": {
            "version": first_line(version).replace("Server version: ", ""),
            "mpm": "prefork", "port": sess.port,
            "parent_pid": sess.parent,
            "worker_pids_at_attach": sess.workers_at_attach,
            "worker_pids_at_end": workers_end,
            "pids_that_served": served,
            "htpasswd_path_in_trace": sess.htp,
            "htpasswd": rel(os.path.join(out, "htpasswd"), outdir),
            "access_log": rel(os.path.join(out, "access.log"), outdir),
            "access_log_lines": nlines,
            "error_log": rel(os.path.join(out, "error.log"), outdir),
            "config": rel(os.path.join(out, "httpd.conf"), outdir),
            "log_format": LOG_FORMAT,
            "docroot_in_trace": sess.www,
        },
        "pids": [sess.parent] + sorted(set(sess.workers_at_attach) | set(workers_end)
                                       | set(served)),
        "files_read_before_cpu": [sess.htp],
        "requests": reqs,
        "expected_gaps": gaps, "expected_blocked": [],
    }
    log("%-24s %d trace file(s), %d requests, served by %s (%s mode)" % (
        name, len(files_out), len(reqs), served, sess.mode))
    return entry


README = r"""# Real strace traces with known ground truth

Generated by `scripts/real-traces.py` — do not edit by hand. Regenerate with

    python3 scripts/real-traces.py testdata/strace/real

(from the repository root, as root; needs the Debian packages strace, apache2,
apache2-utils, curl, openssl and python3; binds only to 127.0.0.1 on a free high
port; takes about 20 s). `--no-apache` makes only `spin/` and `threads/` (no root).

Produced on {date} on {os}, kernel {kernel}, {cpus} CPUs, clocksource {clocksource}:

- {strace}
- {apache} (prefork MPM, mod_ssl, mod_auth_basic + mod_authn_file)
- Python {python} (the traced programs), {curl}, {openssl}

Measured here: bcrypt cost {cost} verification = {bcrypt:.3f} s (median `htpasswd -vb`
{bc_med:.3f} s minus {{SHA}} baseline {sha_med:.3f} s). All `-t`/`-tt` stamps are UTC
(the traces were taken with `TZ=UTC`).

## What is here

| dir | program | strace flags |
|---|---|---|
| `spin/` | `work/spinner.py`: reads `work/data.txt`, spins 0.30 s, reads `work/data2.txt`, spins 0.15 s | `-f -o`, `-ff -o`, `-tt`, `-ttt -T -y`, `-r`, `-t`, `-tt -T` to stderr, `--absolute-timestamps=format:unix,precision:ns -T` |
| `threads/` | `work/threads.py`: main thread reads `work/threads-data.txt`, spins 0.40 s under a 10 ms `ITIMER_PROF` (SIGPROF + rt_sigreturn inside the stretch); a second thread sleeps 0.80 s | `-f -tt -T -y` to stderr (`[pid N]`, `strace: Process N attached` mid-line, unfinished/resumed), the same with `-o`, `-ff -ttt -T` |
| `apache-ff/` | Apache, 11 HTTPS requests: 1 public, 4 × slowuser (bcrypt cost 12), 4 × shauser ({{SHA}}), 2 × slowuser wrong password (401) | `-ff -ttt -T -yy -s 4096 -o apache-ff/trace -p PARENT -p WORKER...` (the recommended capture) |
| `apache-f-stderr/` | a fresh Apache, 4 requests (public, slowuser, shauser, slowuser wrong) | `-f -tt -T -y -s 256 -p ...`, strace's stderr = `trace` |

Each Apache dir also holds the real `access.log` (LogFormat below, joined to the
requests by the `?n=N` in the target), `error.log`, `httpd.conf` and `htpasswd`
(test passwords only). The paths inside the traces are those at creation time
(`outdir_at_creation`, `htpasswd_path_in_trace`, a temporary ServerRoot).

    LogFormat "{log_format}"

## manifest.json

Top level:

- `schema` (1), `generator`, `created_unix`, `created_utc`, `finished_utc`
- `outdir_at_creation`, `work_dir_at_creation`: absolute paths as they appear in the traces
- `versions`: `strace`, `python`, `kernel`, `os`, `clocksource`, `cpus`, `apache`, `curl`, `openssl`
- `bcrypt`: `cost`, `method`, `htpasswd_bcrypt_runs_seconds`, `htpasswd_sha_runs_seconds`,
  `htpasswd_bcrypt_median_seconds`, `htpasswd_sha_median_seconds`, `verify_seconds`
  (the expected auth gap), `python_crypt_seconds` (libxcrypt via Python's `crypt`, a
  cross-check; null where unavailable). null with `--no-apache`.
- `traces`: list, below. `self_check`: `ok`, `notes` (what the script's own sanity
  checks found odd; empty when all is well).

Each trace:

- `id` (e.g. `spin/ttt-T-y`), `scenario` (`spin` | `threads` | `apache`)
- `strace_flags`: the flags, paths relative to this directory (Apache: `-p PARENT -p WORKER...`);
  Apache also `strace_argv` (the exact argv, real PIDs) and `attach_mode`
  (`attach`; `launch` = Apache was started under strace because attaching failed)
- `output`: `file` (one `-o` file), `per-pid` (`-ff`, files `PREFIX.<tid>`), `stderr`
  (strace's stderr captured: includes `strace: Process N attached` lines)
- `files`: trace files, relative to this directory
- `format`: `timestamps` (`none` `t` `tt` `ttt` `r` `unix-ns`), `durations` (`-T`),
  `fd_paths` (`none` `y` `yy`), `follow` (null `-f` `-ff`), `pid_prefix` (text)
- `tz` (`UTC`), `run_start_unix`
- `pids` (all processes involved), `tids` (threads), `files_read_before_cpu`
- spin/threads: `program` (interpreter argv), `side_file` (what the program wrote) and
  `truth` (its content: `pid`, `tid`, `stretches[]` / `spinner` + `sleeper` with
  `after_file`, `bytes_read`, `target_seconds`, `start_unix`, `end_unix`,
  `wall_seconds` (perf_counter), `sigprof_handled`, `itimer_prof_interval_seconds`,
  `sleep_seconds`)
- `expected_gaps[]`: the CPU stretches a tool should find. `file`, `pid`, `tid`,
  `after_file` (path of the file read just before), `last_call_before`,
  `first_call_after` (descriptions), `seconds`, `kind` (`cpu`), `cause`,
  `measured_by`; spin/threads: `start_unix`, `end_unix` (the stretch itself, from the
  program's clock); threads: `interruptions` (text) and `sigprof_lines_in_trace`
  (counted by the script: the SIGPROF noise to merge across);
  Apache: `request_n`, `user`, `status`, `window_start_unix`, `window_end_unix`
  (the request, from `%{{begin:sec}}t.%{{begin:usec_frac}}t` and `%D`; the gap lies inside)
- `expected_blocked[]` (threads): long calls that are waiting, not CPU: `file`, `pid`,
  `tid`, `syscall`, `seconds`, `start_unix`, `end_unix`, `cause`
- Apache: `apache` (`version`, `mpm`, `port`, `parent_pid`, `worker_pids_at_attach`,
  `worker_pids_at_end`, `pids_that_served`, `htpasswd_path_in_trace`, `htpasswd`,
  `access_log`, `access_log_lines`, `error_log`, `config`, `log_format`,
  `docroot_in_trace`) and `requests[]`: `n`, `target`, `user` (null = no auth),
  `password_ok`, `hash` (`bcrypt` | `sha1` | null), `bcrypt_cost`, `expected_status`,
  `status` (curl), `curl` (`start_unix`, `end_unix`, `time_connect`,
  `time_appconnect`, `time_pretransfer`, `time_starttransfer`, `time_total`, seconds),
  `log` (the access-log line: `line`, `pid` (%P = `-ff` suffix), `begin_unix`,
  `duration_us`, `user`, `status`, `tls_protocol`, `tls_cipher`), `trace_file`,
  `expected_auth_gap_seconds` (bcrypt: `bcrypt.verify_seconds`; {{SHA}}: 0; public: null),
  `expected_cause`

Figures are wall-clock seconds. The traced gap is slightly longer than the
program's own measure (interpreter work around the loop, strace overhead) and,
on a loaded machine, the bcrypt gap inside Apache can exceed `verify_seconds`
(it was 0.21–0.34 s here for 0.21–0.27 s measured outside): compare with a tolerance.
"""


def write_readme(outdir, manifest):
    v = manifest["versions"]
    b = manifest["bcrypt"] or {}
    text = README.format(
        date=manifest["created_utc"][:10], os=v.get("os", "?"), kernel=v.get("kernel", "?"),
        cpus=v.get("cpus", "?"), clocksource=v.get("clocksource", "?"),
        strace=v.get("strace", "?"), apache=v.get("apache", "(not run)"),
        python=v.get("python", "?"), curl=v.get("curl", "curl (not run)"),
        openssl=v.get("openssl", "openssl (not run)"),
        cost=b.get("cost", BCRYPT_COST), bcrypt=b.get("verify_seconds", float("nan")),
        bc_med=b.get("htpasswd_bcrypt_median_seconds", float("nan")),
        sha_med=b.get("htpasswd_sha_median_seconds", float("nan")),
        log_format=LOG_FORMAT.replace("\\", "\\\\").replace('"', '\\"'))
    with open(os.path.join(outdir, "README.md"), "w") as f:
        f.write(text)



# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def versions(tools):
    v = {}
    v["strace"] = first_line(run([tools["strace"], "-V"]).stdout.decode())
    # the interpreter that was traced, which need not be the one running us
    r = run([python_exe(), "-I", "-S", "-c",
             "import sys; print('%d.%d.%d' % sys.version_info[:3])"])
    v["python"] = r.stdout.decode().strip() or platform.python_version()
    v["kernel"] = platform.release()
    if "apache2" in tools:
        v["apache"] = first_line(run([tools["apache2"], "-v"]).stdout.decode()).replace(
            "Server version: ", "")
        v["curl"] = " ".join(run(["curl", "--version"]).stdout.decode().split()[:2])
        v["openssl"] = " ".join(run([tools["openssl"], "version"]).stdout.decode().split()[:2])
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    v["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    try:
        with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
            v["clocksource"] = f.read().strip()
    except OSError:
        pass
    v["cpus"] = os.cpu_count()
    return v


def write_work(work):
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "spinner.py"), "w") as f:
        f.write(SPINNER)
    with open(os.path.join(work, "threads.py"), "w") as f:
        f.write(THREADS)
    for name, label in (("data.txt", "first"), ("data2.txt", "second"),
                        ("threads-data.txt", "threads")):
        with open(os.path.join(work, name), "w") as f:
            for i in range(8):
                f.write("tlsgap real-traces %s data file, line %d\n" % (label, i))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--keep-tmp", action="store_true",
                    help="keep the temporary Apache directory")
    ap.add_argument("--no-apache", action="store_true",
                    help="only the spin and threads scenarios (no root needed)")
    ap.add_argument("--apache-mode", choices=["auto", "attach", "launch"], default="auto",
                    help="attach strace to running workers (needs CAP_SYS_PTRACE), "
                         "start Apache under strace, or try attach then launch")
    args = ap.parse_args()

    started = time.time()
    tools = {}
    need = ["strace"] + ([] if args.no_apache else ["apache2", "htpasswd", "curl",
                                                    "openssl"])
    missing = []
    for t in need:
        p = tool_path(t)
        if p is None:
            missing.append(t)
        tools[t] = p
    if missing:
        log("error: not found: %s (Debian packages: strace apache2 apache2-utils curl "
            "openssl)" % ", ".join(missing))
        return 1
    if not args.no_apache:
        for mod in ("mod_ssl.so", "mod_mpm_prefork.so", "mod_auth_basic.so",
                    "mod_authn_file.so", "mod_authz_user.so"):
            if not os.path.exists(os.path.join(APACHE_MODULES, mod)):
                log("error: Apache module %s/%s missing (package apache2)"
                    % (APACHE_MODULES, mod))
                return 1
    as_root = os.geteuid() == 0
    if not args.no_apache and not as_root:
        log("error: the Apache scenarios need root (Apache workers run as www-data and "
            "strace must attach to them); use --no-apache for the rest")
        return 1

    outdir = os.path.abspath(args.outdir)
    work = os.path.join(outdir, "work")
    tmp = None
    self_notes = []

    # run the finally blocks: they stop strace and Apache by PID
    raise_on_termination()
    try:
        os.makedirs(outdir, exist_ok=True)
        # a run that fails half-way must not leave an old manifest describing it
        if os.path.exists(os.path.join(outdir, "manifest.json")):
            os.unlink(os.path.join(outdir, "manifest.json"))
        write_work(work)
        traces = []
        traces += scenario_spin(tools["strace"], outdir, work, self_notes)
        traces += scenario_threads(tools["strace"], outdir, work, self_notes)
        bcrypt = None
        if not args.no_apache:
            tmp = tempfile.mkdtemp(prefix="tlsgap-traces-")
            os.chmod(tmp, 0o755)
            files = make_apache_files(tmp, tools["htpasswd"], tools["openssl"])
            bcrypt = measure_bcrypt(tools["htpasswd"], files[1])
            log("bcrypt cost %d verify: %.3f s (htpasswd -vb median %.3f s, {SHA} %.3f s)"
                % (BCRYPT_COST, bcrypt["verify_seconds"],
                   bcrypt["htpasswd_bcrypt_median_seconds"],
                   bcrypt["htpasswd_sha_median_seconds"]))
            traces.append(scenario_apache(
                "full", "apache-ff", ["-ff", "-ttt", "-T", "-yy", "-s", "4096"],
                "per-pid", tmp, outdir, files, tools, args.apache_mode, as_root,
                bcrypt, self_notes))
            traces.append(scenario_apache(
                "short", "apache-f-stderr", ["-f", "-tt", "-T", "-y", "-s", "256"],
                "stderr", tmp, outdir, files, tools, args.apache_mode, as_root,
                bcrypt, self_notes))
        manifest = {
            "schema": SCHEMA,
            "generator": "scripts/real-traces.py",
            "created_unix": started,
            "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "outdir_at_creation": outdir,
            "work_dir_at_creation": work,
            "versions": versions(tools),
            "bcrypt": bcrypt,
            "traces": traces,
            "self_check": {"ok": not self_notes, "notes": self_notes},
        }
        with open(os.path.join(outdir, "manifest.json"), "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=False)
            f.write("\n")
        write_readme(outdir, manifest)
        for n in self_notes:
            log("warning: " + n)
        log("done in %.1f s -> %s/manifest.json (%d traces)"
            % (time.time() - started, outdir, len(traces)))
        return 0
    except Fail as e:
        log("error: " + str(e))
        return 1
    except KeyboardInterrupt:
        log("error: interrupted")
        return 1
    finally:
        if tmp is not None:
            if args.keep_tmp:
                log("temporary directory kept: %s" % tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
