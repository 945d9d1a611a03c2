#!/usr/bin/env bash
# Whole-process comparison of `tlsgap tls` with the tools people use today, on one
# generated combinedssl log kept in the page cache (shared/DESIGN.md, "Performance
# targets"). Prints a Markdown table and writes it to $WORKDIR/results.md.
#
# usage: bench/compare.sh [LINES] [WORKDIR]
#   LINES     lines of log to generate with loggen --seed 42 (default 10000000, ~2.6 GB)
#   WORKDIR   log file, raw hyperfine JSON, outputs, results.md (default /root/.cache/tlsgap-bench)
#
# environment (all optional):
#   TLSGAP=PATH      tlsgap binary; default $CARGO_TARGET_DIR/release/tlsgap, then
#                    /root/.cache/tlsgap-target/release/tlsgap, then target/release/tlsgap
#   LOGGEN=PATH      loggen binary; default /root/.cache/loggen-target/release/loggen (built if missing)
#   WARMUP=1 RUNS=3  hyperfine warm-up runs and timed runs per command
#   SKIP="goaccess duckdb"   peers to leave out: wc mawk perl goaccess duckdb agrind tlsgap-j1 tlsgap-j2
#   DUCKDB_INSTALL=0 don't try `pip install duckdb` into $WORKDIR/venv when duckdb is missing
#   REGEN=1          regenerate the log even if a matching one is there
#
# Each command runs under `hyperfine -N --output=pipe` (no shell in between, stdout read
# and discarded), then once more under `/usr/bin/time -v` for its peak RSS; that run's
# stdout is kept in $WORKDIR/out-NAME.txt so the peers' answers can be compared.
set -euo pipefail

LINES=${1:-${LINES:-10000000}}
WORKDIR=${2:-${WORKDIR:-/root/.cache/tlsgap-bench}}
WARMUP=${WARMUP:-1}
RUNS=${RUNS:-3}
SKIP=" ${SKIP:-} "
SEED=42

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$WORKDIR"
WORKDIR=$(cd "$WORKDIR" && pwd)
RESULTS=$WORKDIR/results.md

log() { printf '%s\n' "$*" >&2; }
die() { log "compare.sh: $*"; exit 1; }

case $LINES in '' | *[!0-9]*) die "LINES must be a number of lines, got '$LINES'" ;; esac

# --- tools ------------------------------------------------------------------

need_apt() { # command package
    command -v "$1" >/dev/null 2>&1 && return 0
    log "installing $2 (for $1) with apt-get"
    if ! { apt-get install -y -qq "$2" >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$2" >/dev/null 2>&1; }; }; then
        return 1
    fi
    command -v "$1" >/dev/null 2>&1
}
need_apt hyperfine hyperfine || die "hyperfine is required"
[[ -x /usr/bin/time ]] || need_apt /usr/bin/time time || die "GNU time (/usr/bin/time) is required"
need_apt perl perl-base || die "perl is required"
need_apt mawk mawk || log "mawk unavailable: skipping it"
need_apt goaccess goaccess || log "goaccess unavailable: skipping it"

LOGGEN=${LOGGEN:-/root/.cache/loggen-target/release/loggen}
if [[ ! -x $LOGGEN ]]; then
    log "building loggen into /root/.cache/loggen-target"
    (cd "$REPO" && CARGO_TARGET_DIR=/root/.cache/loggen-target cargo build --release -q -p loggen) ||
        die "cannot build loggen"
    LOGGEN=/root/.cache/loggen-target/release/loggen
fi

TLSGAP_BIN=""
for candidate in "${TLSGAP:-}" "${CARGO_TARGET_DIR:+$CARGO_TARGET_DIR/release/tlsgap}" \
    /root/.cache/tlsgap-target/release/tlsgap "$REPO/target/release/tlsgap"; do
    if [[ -n $candidate && -x $candidate ]]; then
        TLSGAP_BIN=$candidate
        break
    fi
done

# --- the log file -------------------------------------------------------------

FILE=$WORKDIR/combinedssl-$LINES-seed$SEED.log
META=$FILE.meta
file_ok() {
    [[ -f $FILE && -f $META ]] || return 1
    local want have
    want=$(sed -n 's/^bytes=//p' "$META")
    have=$(stat -c %s "$FILE")
    [[ $want == "$have" ]] || return 1
    grep -qx "lines=$LINES" "$META" || return 1
    # The generator streams: the first lines of any run are the same lines, so this
    # checks that the file still matches the loggen we have now.
    cmp -s <("$LOGGEN" --lines 2000 --seed "$SEED") <(head -n 2000 "$FILE")
}
if [[ ${REGEN:-0} == 1 ]] || ! file_ok; then
    log "generating $FILE ($LINES lines, seed $SEED)"
    start=$(date +%s.%N)
    "$LOGGEN" --lines "$LINES" --seed "$SEED" >"$FILE.tmp"
    end=$(date +%s.%N)
    mv "$FILE.tmp" "$FILE"
    printf 'lines=%s\nbytes=%s\nseed=%s\ngenerated_in_s=%.2f\n' \
        "$LINES" "$(stat -c %s "$FILE")" "$SEED" "$(awk -v s="$start" -v e="$end" 'BEGIN{print e - s}')" >"$META"
else
    log "reusing $FILE"
fi
BYTES=$(stat -c %s "$FILE")
log "warming the page cache"
cat "$FILE" >/dev/null

# --- peers --------------------------------------------------------------------

DUCK_PY=""
if [[ $SKIP != *" duckdb "* ]]; then
    for py in "$WORKDIR/venv/bin/python" python3; do
        if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import duckdb' 2>/dev/null; then
            DUCK_PY=$(command -v "$py")
            break
        fi
    done
    if [[ -z $DUCK_PY && ${DUCKDB_INSTALL:-1} == 1 ]]; then
        log "installing duckdb into $WORKDIR/venv (pip)"
        if { [[ -x $WORKDIR/venv/bin/python ]] || python3 -m venv "$WORKDIR/venv"; } &&
            timeout 600 "$WORKDIR/venv/bin/pip" install -q duckdb >&2; then
            DUCK_PY=$WORKDIR/venv/bin/python
        else
            log "duckdb could not be installed: skipping it"
        fi
    fi
fi
# DuckDB reads the log as a one-column CSV (delimiter \x01, no quoting) and groups by a
# regexp of the last two fields. Rows that are not valid UTF-8 are dropped (ignore_errors).
cat >"$WORKDIR/duckdb_peer.py" <<'EOF'
import sys

import duckdb

rows = duckdb.connect().execute(
    r"""
    SELECT count(*) AS n, regexp_extract(line, '(\S+ \S+)\s*$', 1) AS proto_cipher
    FROM read_csv(?, columns = {'line': 'VARCHAR'}, header = false, delim = ?,
                  quote = '', escape = '', auto_detect = false,
                  ignore_errors = true, strict_mode = false)
    GROUP BY proto_cipher ORDER BY n DESC, proto_cipher
    """,
    [sys.argv[1], chr(1)],
).fetchall()
for n, key in rows:
    print(n, key)
EOF

NAMES=()
LABELS=()
CMDS=()
add() { # name label command
    [[ $SKIP == *" $1 "* ]] && return 0
    NAMES+=("$1")
    LABELS+=("$2")
    CMDS+=("$3")
}
add wc "wc -l" "wc -l $FILE"
command -v mawk >/dev/null &&
    add mawk "mawk: count last two fields" "mawk '{c[\$(NF-1)\" \"\$NF]++} END{for(k in c) print c[k], k}' $FILE"
add perl "perl classic-report.pl" "perl $REPO/bench/classic-report.pl $FILE"
command -v goaccess >/dev/null &&
    add goaccess "goaccess (JSON report)" "goaccess $FILE --no-global-config --no-progress --log-format='%h %^[%d:%t %^] \"%r\" %s %b \"%R\" \"%u\" %K %k' --date-format=%d/%b/%Y --time-format=%T -o $WORKDIR/goaccess.json"
[[ -n $DUCK_PY ]] &&
    add duckdb "duckdb: regexp_extract + group by" "$DUCK_PY $WORKDIR/duckdb_peer.py $FILE"
# angle-grinder only if it is already installed (not installed by this script).
command -v agrind >/dev/null &&
    add agrind "angle-grinder: parse regex + count" "agrind '* | parse regex \"(?P<proto>\\S+) (?P<cipher>\\S+)\$\" | count by proto, cipher' --file $FILE"
if [[ -n $TLSGAP_BIN ]]; then
    add tlsgap-j1 "tlsgap tls -j1" "$TLSGAP_BIN tls -j1 $FILE"
    add tlsgap-j2 "tlsgap tls -j2" "$TLSGAP_BIN tls -j2 $FILE"
else
    log "tlsgap binary not found (set TLSGAP=...): skipping tlsgap rows"
fi

# --- measure ------------------------------------------------------------------

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=()
for i in "${!NAMES[@]}"; do
    name=${NAMES[$i]} label=${LABELS[$i]} cmd=${CMDS[$i]}
    json=$WORKDIR/hyperfine-$name.json
    log ""
    log "== $label"
    if ! hyperfine -N --style basic --output=pipe --warmup "$WARMUP" --runs "$RUNS" \
        --command-name "$label" --export-json "$json" "$cmd" >&2; then
        ROWS+=("| $label | failed | | | | |")
        continue
    fi
    rss_kib=""
    if eval "/usr/bin/time -v -o '$WORKDIR/time-$name.txt' $cmd" >"$WORKDIR/out-$name.txt" 2>"$WORKDIR/err-$name.txt"; then
        rss_kib=$(sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): //p' "$WORKDIR/time-$name.txt")
    fi
    ROWS+=("$(perl -MJSON::PP -e '
        my ($json, $label, $bytes, $rss) = @ARGV;
        open my $fh, "<", $json or die "$json: $!";
        my $r = decode_json(do { local $/; <$fh> })->{results}[0];
        printf "| %s | %.3f | %.3f | %.2f | %.0f | %s |",
            $label, $r->{mean}, $r->{stddev} // 0, $r->{user} + $r->{system},
            $bytes / 1e6 / $r->{mean}, $rss eq "" ? "?" : sprintf("%.1f", $rss / 1024);
    ' "$json" "$label" "$BYTES" "$rss_kib")")
done

# --- report -------------------------------------------------------------------

version() { "$@" 2>&1 | head -n 1 | tr -d '\r' || true; }
{
    echo "## tlsgap tls vs peers, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(nproc) × $(sed -n 's/^model name[[:space:]]*: //p; T; q' /proc/cpuinfo)," \
        "$(awk '/MemTotal/ {printf "%.0f GiB RAM", $2 / 1048576}' /proc/meminfo)," \
        "Linux $(uname -r), load average at start: $LOAD_START"
    echo "- input: \`$FILE\`, $LINES lines, $BYTES bytes ($(awk -v b="$BYTES" 'BEGIN{printf "%.1f", b/1e6}') MB)," \
        "\`loggen --seed $SEED\`, read from the page cache"
    echo "- timing: \`hyperfine -N --output=pipe --warmup $WARMUP --runs $RUNS\`; MB/s = bytes / 10^6 / mean;" \
        "CPU = user + system (mean); peak RSS from a separate \`/usr/bin/time -v\` run"
    versions="$(version hyperfine --version), mawk $(version mawk -W version | awk '{print $2}')"
    versions+=", perl $(perl -e 'print $^V'), $(version goaccess --version | sed 's/ - / /; s/\.$//')"
    [[ -n $DUCK_PY ]] && versions+=", duckdb $("$DUCK_PY" -c 'import duckdb; print(duckdb.__version__)')"
    [[ -n $TLSGAP_BIN ]] && versions+=", tlsgap: $(version "$TLSGAP_BIN" --version)"
    echo "- versions: $versions"
    echo
    echo "| command | mean s | stddev s | CPU s | MB/s | peak RSS MiB |"
    echo "|---|---:|---:|---:|---:|---:|"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "Commands (FILE = the log above):"
    echo
    for i in "${!NAMES[@]}"; do
        echo "- ${LABELS[$i]}: \`${CMDS[$i]//$FILE/FILE}\`"
    done
} | tee "$RESULTS"
log ""
log "written to $RESULTS (raw: $WORKDIR/hyperfine-*.json, outputs: $WORKDIR/out-*.txt)"
