#!/usr/bin/env python3
"""Write fuzz/seeds/gaps_absorb/: cuts of the real strace captures in testdata/strace,
each input under a `==> NAME` header (the form the `gaps_absorb` target reads), at
most 1 KiB each (the fuzz runs' -max_len). Lines are picked around the calls that tie
files together (clone/fork, open/close, reads of an htpasswd) so that a cut keeps
them. Run from anywhere: python3 fuzz/make-gaps-absorb-seeds.py
"""
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "fuzz", "seeds", "gaps_absorb")
LIMIT = 1024
TIES = re.compile(rb"clone|fork|openat|close\(|htpasswd|accept|dup|execve|exit")


def pick(path, budget):
    """The lines of `path` that tie files together, with the line after each, within
    `budget` bytes."""
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    out, used = [], 0
    for i, line in enumerate(lines):
        if not TIES.search(line):
            continue
        for l in lines[i:i + 2]:
            l = l[:200]
            if used + len(l) + 1 > budget:
                return out
            out.append(l)
            used += len(l) + 1
    return out


def seed(name, files, header_names=None):
    parts = []
    budget = LIMIT // max(1, len(files)) - 24
    for k, path in enumerate(files):
        shown = (header_names or [os.path.basename(p) for p in files])[k]
        parts.append(b"==> " + shown.encode() + b"\n" + b"\n".join(pick(path, budget)))
    data = b"\n".join(parts)[:LIMIT]
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    real = os.path.join(ROOT, "testdata", "strace", "real")
    forms = os.path.join(ROOT, "testdata", "strace", "forms")
    apache = [os.path.join(real, "apache-ff", "trace.%d" % n) for n in (7015, 7016, 7017)]
    threads = [os.path.join(real, "threads", "ff-ttt-T.trace.%d" % n) for n in (6964, 6965)]
    ff = sorted(os.path.join(forms, "ff", n) for n in os.listdir(os.path.join(forms, "ff")))
    seed("apache-ff", apache)
    seed("apache-ff-children-first", apache[::-1])
    seed("threads-ff", threads)
    seed("forms-ff", ff)
    seed("f-and-ff", [os.path.join(real, "threads", "f-tt-T-y-o.trace")] + threads,
         ["f-tt-T-y-o.trace", "trace.6964", "trace.6965"])
    seed("two-f", [os.path.join(forms, "f-tt-T-yy.strace"), os.path.join(forms, "f.strace")])
    seed("stdin-then-ff", [os.path.join(real, "apache-f-stderr", "trace")] + apache[1:],
         ["-", "trace.7016", "trace.7017"])


if __name__ == "__main__":
    main()
