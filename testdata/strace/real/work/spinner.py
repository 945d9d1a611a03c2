# tlsgap scripts/real-traces.py: read a file, burn CPU, measure it yourself.
# argv: SIDE_FILE PATH=SECONDS [PATH=SECONDS ...]
# Only the vDSO clocks (time.time, time.perf_counter) are read while spinning,
# so a CPU stretch makes no system call.
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
