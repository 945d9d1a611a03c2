# tlsgap scripts/real-traces.py: a spinning thread under SIGPROF and a sleeping one.
# argv: SIDE_FILE DATA_FILE SPIN_SECONDS SLEEP_SECONDS PROF_INTERVAL
import _signal
import _thread
import os
import sys
import time


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
