#!/usr/bin/env python3
"""Vendor Mozilla's server-side TLS guideline JSON for `tlsgap whatif`.

    python3 scripts/vendor-mozilla.py [--version 6.0|latest]   # fetch and write
    python3 scripts/vendor-mozilla.py --check                  # offline: check the files

Fetches https://ssl-config.mozilla.org/guidelines/<version>.json (needs the network;
this project's CI machines only reach package registries, so the files are committed),
checks it has what crates/ciphers/src/policy.rs reads (`version`, and per profile
`ciphers.openssl`, `ciphersuites`, `tls_versions`, `tls_curves`), and writes it unchanged
to crates/ciphers/data/mozilla/<version>.json. A new version also needs a line in
MOZILLA_JSON (policy.rs) and, to become the default, MOZILLA_GUIDELINES_VERSION.
Standard library only.
"""

import argparse
import json
import os
import sys
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "crates", "ciphers", "data", "mozilla")
URL = "https://ssl-config.mozilla.org/guidelines/%s.json"


def problems(doc):
    out = []
    if "version" not in doc:
        out.append("no `version`")
    configs = doc.get("configurations")
    if not isinstance(configs, dict) or not configs:
        return out + ["no `configurations`"]
    for name, c in configs.items():
        for key in ("ciphersuites", "tls_versions"):
            if not isinstance(c.get(key), list):
                out.append("%s: `%s` is not a list" % (name, key))
        if not isinstance(c.get("ciphers", {}).get("openssl"), list):
            out.append("%s: no `ciphers.openssl` list" % name)
        for v in c.get("tls_versions", []):
            if v not in ("SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"):
                out.append("%s: unknown protocol %r" % (name, v))
    return out


def check():
    bad = 0
    for f in sorted(os.listdir(DATA)):
        if not f.endswith(".json"):
            continue
        with open(os.path.join(DATA, f)) as fh:
            doc = json.load(fh)
        p = problems(doc)
        if "%s.json" % doc.get("version") != f:
            p.append("file name does not match version %r" % doc.get("version"))
        for x in p:
            print("%s: %s" % (f, x), file=sys.stderr)
        bad += len(p)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--version", default="latest")
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check:
        return check()
    with urllib.request.urlopen(URL % a.version, timeout=30) as r:
        raw = r.read()
    doc = json.loads(raw)
    p = problems(doc)
    if p:
        print("\n".join(p), file=sys.stderr)
        return 1
    path = os.path.join(DATA, "%s.json" % doc["version"])
    with open(path, "wb") as fh:
        fh.write(raw)
    print("wrote %s (guideline %s)" % (os.path.relpath(path), doc["version"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
