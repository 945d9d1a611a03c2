#!/usr/bin/env bash
# Installs the peers bench/ratios.py measures tlsgap against, and its timing tools:
# mawk, hyperfine and GNU time from Debian; DuckDB and chDB (ClickHouse's engine in
# process) from PyPI. Needs root for apt-get; pip installs for the current python3.
#
# usage: bench/peers.sh
set -euo pipefail

apt_need() { # command package
    command -v "$1" >/dev/null 2>&1 && return 0
    if [ "$(id -u)" != 0 ]; then
        echo "peers.sh: $1 missing and not root: install the Debian package $2" >&2
        return 1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null 2>&1 || {
        apt-get update -q >/dev/null 2>&1
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$2" >/dev/null
    }
}

apt_need mawk mawk
apt_need hyperfine hyperfine
[ -x /usr/bin/time ] || apt_need /usr/bin/time time

if ! python3 -c 'import duckdb, chdb' 2>/dev/null; then
    python3 -m pip install -q --disable-pip-version-check duckdb chdb 2>&1 | tail -n 3 ||
        python3 -m pip install -q --break-system-packages duckdb chdb
fi

printf 'mawk %s\n' "$(mawk -W version 2>&1 | head -n 1 | awk '{print $2}')"
hyperfine --version
python3 -c 'import duckdb, chdb; print("duckdb", duckdb.__version__); print("chdb", chdb.__version__)'
