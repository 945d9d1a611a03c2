#!/usr/bin/env python3
"""Print the distinct User-Agents of uap-core's test files, one per line.

For the classifier's agreement tests, which compare tlsgap's answers with the
`ua-parser` crate's whole pattern sets on every User-Agent of the file that
TLSGAP_TEST_USER_AGENTS names:

    python3 scripts/uap-test-user-agents.py ~/.cargo/registry/src/*/ua-parser-0.2.2/uap-core \\
        > /tmp/uap-test-uas.txt
    TLSGAP_TEST_USER_AGENTS=/tmp/uap-test-uas.txt \\
        cargo test --release -p tlsgap-engine --lib -- uakind

DIR is a uap-core checkout (the `ua-parser` crate ships one): its `tests/*.yaml`
and `test_resources/*.yaml` are read for `user_agent_string:` entries. Quoted
values are unquoted ('' in single quotes is one quote); multi-line values are
left out.
"""

import glob
import os
import re
import sys

ENTRY = re.compile(r"^\s*-?\s*user_agent_string:\s*(.*)$")


def value(text):
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return text


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: uap-test-user-agents.py UAP_CORE_DIR")
    root = sys.argv[1]
    files = sorted(glob.glob(os.path.join(root, "tests", "*.yaml"))
                   + glob.glob(os.path.join(root, "test_resources", "*.yaml")))
    if not files:
        sys.exit(f"no tests/*.yaml or test_resources/*.yaml under {root}")
    seen = set()
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = ENTRY.match(line)
                if m:
                    ua = value(m.group(1))
                    if ua and "\n" not in ua:
                        seen.add(ua)
    for ua in sorted(seen):
        print(ua)


if __name__ == "__main__":
    main()
