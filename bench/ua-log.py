#!/usr/bin/env python3
"""A combinedssl access log with one line per real User-Agent: the ~12 700 of
uap-core's test resources (`uap-core/test_resources/pgts_browser_list.txt`, as the
`ua-parser` crate, a dependency of tlsgap-engine, ships them; found with
`cargo metadata`). What it measures is the User-Agent classifier of `whatif` and
`report`: the generated bench log holds ~4 300 distinct User-Agents in a million
lines, a real log many more.

usage: bench/ua-log.py [--out FILE] [--seed N]   (default: stdout, seed 7)

The client addresses are drawn from the seed; the request, status, time and TLS
fields are the same on every line.
"""

import argparse
import json
import os
import random
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pgts_list():
    host = next(
        line.split(": ", 1)[1]
        for line in subprocess.run(
            ["rustc", "-vV"], check=True, capture_output=True, text=True
        ).stdout.splitlines()
        if line.startswith("host: ")
    )
    meta = json.loads(
        subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--offline", "--filter-platform", host],
            check=True,
            capture_output=True,
            cwd=REPO,
        ).stdout
    )
    manifest = next(p["manifest_path"] for p in meta["packages"] if p["name"] == "ua-parser")
    return os.path.join(
        os.path.dirname(manifest), "uap-core", "test_resources", "pgts_browser_list.txt"
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    with open(pgts_list(), encoding="utf-8", errors="replace") as f:
        rows = f.read().splitlines()[1:]
    uas = sorted({r.split("\t")[2] for r in rows if len(r.split("\t")) > 2 and r.split("\t")[2]})
    rng = random.Random(args.seed)
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout
    for i, ua in enumerate(uas):
        ua = ua.replace("\\", "\\\\").replace('"', '\\"')
        addr = f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        out.write(
            f'{addr} - - [21/Nov/2026:00:{(i // 60) % 60:02d}:{i % 60:02d} +0200] '
            f'"GET / HTTP/1.1" 200 512 "-" "{ua}" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256\n'
        )
    if args.out:
        out.close()


if __name__ == "__main__":
    main()
