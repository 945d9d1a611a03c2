#!/usr/bin/env python3
"""Vendor the uap-core User-Agent dataset for `tlsgap whatif`.

The ua-parser crate (the maintained Rust implementation of the uap standard) ships
no data; the uap-core project publishes it as `regexes.yaml` (Apache-2.0). The
crate's published package carries a copy of uap-core, so this script takes the
copy from the ua-parser crate that Cargo has downloaded (same version as in
Cargo.lock), keeps the two parts tlsgap uses (user_agent_parsers and
device_parsers) and writes them as compact JSON next to the uap-core licence:

    crates/engine/data/uap-core/regexes.json
    crates/engine/data/uap-core/LICENSE

Usage: python3 scripts/vendor-uap-core.py   (needs PyYAML: pip install pyyaml)

Then regenerate what each device, user-agent and spider pattern needs (the
classifier's prefilter, stored in crates/engine/data/uap-core/device-needs.json,
ua-needs.json and spider-needs.json; a test fails until it is done):

    TLSGAP_WRITE_DEVICE_NEEDS=1 cargo test -p tlsgap-engine --lib needs_are_those
"""

import glob
import json
import os
import shutil
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "engine", "data", "uap-core")


def main():
    home = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    found = sorted(glob.glob(os.path.join(home, "registry", "src", "*", "ua-parser-*", "uap-core")))
    if not found:
        sys.exit("vendor-uap-core: no ua-parser crate under %s (run cargo fetch)" % home)
    src = found[-1]
    with open(os.path.join(src, "regexes.yaml"), encoding="utf-8") as f:
        data = yaml.safe_load(f)
    with open(os.path.join(src, "package.json"), encoding="utf-8") as f:
        version = json.load(f).get("version", "?")
    keep = {
        "user_agent_parsers": data["user_agent_parsers"],
        "os_parsers": [],
        "device_parsers": data["device_parsers"],
    }
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "regexes.json"), "w", encoding="utf-8") as f:
        json.dump(keep, f, separators=(",", ":"), ensure_ascii=False)
        f.write("\n")
    shutil.copy(os.path.join(src, "LICENSE"), os.path.join(OUT, "LICENSE"))
    with open(os.path.join(OUT, "VERSION"), "w") as f:
        f.write("uap-core %s (from %s)\n" % (version, os.path.basename(os.path.dirname(src))))
    print("vendor-uap-core: uap-core %s -> %s" % (version, OUT))


if __name__ == "__main__":
    main()
