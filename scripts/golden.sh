#!/usr/bin/env bash
# Golden outputs: every command of a tlsgap binary, in every output format it offers,
# on the repository's test corpus, captured so that a refactor can be shown to leave
# the outputs byte-identical (and a deliberate change can be listed, case by case).
#
#   scripts/golden.sh capture BIN OUTDIR   # BIN over the corpus; OUTDIR/CASE.{out,err,rc}
#   scripts/golden.sh diff OLD NEW         # differing cases; exit 1 if any
#
# Typical use: build the commit before a change, `capture` with it; build after,
# `capture` again (into another, empty, OUTDIR); `diff`. Works from any directory.
# About 180 cases; about 22 s with a debug build on 2 cores (16 s release). Needs bash,
# python3 (pyarrow optional), coreutils, timeout; nothing is built or installed.
#
# ---------------------------------------------------------------------- golden-README
# What a case is. One run of BIN, in the repository root (or in the scratch directory,
# for the cases that write), always with paths relative to where it runs, so the paths
# the outputs name do not depend on where the repository is checked out:
#   CASE.out, CASE.err   standard output and standard error, bytes as written
#   CASE.rc              the exit code
#   CASE.file-NAME       a file the case wrote with -o/--html/--invalid-lines: as is,
#                        except Parquet, which is pyarrow's schema and rows (or the
#                        sha256 of the bytes when pyarrow cannot be imported)
#   CASE.tree            a directory the case wrote (export --partition-by): its file
#                        list, then each file rendered as above
# The repository is GOLDEN_ROOT when set, else the one this script is in (the corpus is
# testdata/; reading testdata/README.md tells where each file came from). BIN always
# runs as `tlsgap` (a symlink in the scratch directory), so usage lines and clap's
# errors, which name argv[0], do not depend on BIN's file name.
# `diff` names every file that differs (or exists on one side only) with the first 30
# lines of its unified diff, then how many cases differ.
#
# Deterministic by construction: each run gets a clean environment (env -i: PATH, TZ=UTC,
# LC_ALL=C, NO_COLOR=1, CI=1, TERM=dumb; no RUST_BACKTRACE, no POLARS_*), standard input
# from /dev/null unless the case feeds a file, standard output and error are files (no
# progress bar), -j1 wherever a command reads logs (plus three *-j2-* cases, which must
# give the -j1 answer), a 60 s timeout per run (exit 124 if it hangs). In every captured file
# the scratch directory becomes @TMP@, the repository's absolute path @ROOT@, a panic's
# thread id `(@TID@)` and its source location `@LOC@`.
#
# Masked, because it legitimately varies from run to run:
#   - tls-prom, tls-clients-prom, tls-prom-file, merge-prom: the sample
#     `tlsgap_run_timestamp_seconds` (the time of the run) becomes @NOW@.
#   - cases named *-pw-* (every case given --htpasswd: auth-pw-*, report-pw-*,
#     check-pw-*): tlsgap measures each htpasswd scheme's verification time on this
#     machine at each run (bcrypt 12 about 0.27 s here, +-1 %; more when the machine is
#     busy). Masked with N: the JSON keys / CSV columns / Parquet fields verify_seconds,
#     cost_per_request_seconds, total_cost_seconds, predicted_seconds,
#     predicted_cpu_seconds, suggested_cost, latency_matches_prediction and
#     gaps_match_prediction, server_seconds, server_time_ratio, verify_range_seconds,
#     ratio_range, auth_seconds_per_page_view, suggested_cost_per_page (all computed
#     from that time); the page advice's `bcrypt cost 9 would` and `8× cheaper`, the
#     calibration's `× 0.84` and `ratios 0.84-0.91`; and in
#     every pw file any
#     duration with a unit (`267.2ms`, `5.34s`, `0.268 s`, `268 ms`), the advice's
#     `Cost 9 would` / `-C 9`, and on a line where something was masked, runs of spaces
#     inside it become one (the table widths follow the measured figures). That masks the
#     observed durations (log latency, trace gaps) of the pw text outputs too: the same
#     figures are kept exactly in auth-log-*, auth-traces-*, auth-ff-traces-*,
#     report-traces-* (no --htpasswd, nothing measured). Kept unmasked: user order and
#     ranks, schemes, costs, counts, `flagged`/`!` (bcrypt 10 and 12 are over the 50 ms
#     default and bcrypt 5 is 20x under it; the check-pw cases set thresholds far from
#     every user's time, so their status and exit code do not depend on the machine).
#   - every case: an auth gap's `the duration fits bcrypt cost 12-13 at this machine's
#     speed` compares it with bcrypt measured at this run: the costs become N, and so
#     do auth's `bcrypt~12` and `gaps_fit_bcrypt_costs` (users without an entry).
#     GOLDEN_NOMASK=1 skips this masking (to see what it hides: capture twice, diff).
#     Checked: two unmasked captures differ only in these places; two masked captures
#     run at the same time (both cores busy) are identical to one run alone.
# -----------------------------------------------------------------------------------
set -euo pipefail

ROOT="$(cd "${GOLDEN_ROOT:-$(dirname "${BASH_SOURCE[0]}")/..}" && pwd)"

usage() {
    sed -n '6,7p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2
    exit 2
}

# ------------------------------------------------------------------------------ diff

do_diff() {
    local old="$1" new="$2" f rel case_ prev="" bad=0 n=0
    [ -d "$old" ] || { echo "golden.sh: $old is not a directory" >&2; exit 2; }
    [ -d "$new" ] || { echo "golden.sh: $new is not a directory" >&2; exit 2; }
    # Every file name in either capture, once, in order; a case's files are adjacent.
    while IFS= read -r rel; do
        case_="${rel%%.*}"
        if [ ! -e "$old/$rel" ]; then
            echo "only in $new: $rel"
        elif [ ! -e "$new/$rel" ]; then
            echo "only in $old: $rel"
        elif cmp -s "$old/$rel" "$new/$rel"; then
            continue
        else
            echo "differs: $rel"
            diff -u --label "$old/$rel" --label "$new/$rel" "$old/$rel" "$new/$rel" | head -n 30 || true
        fi
        bad=1
        [ "$case_" = "$prev" ] || n=$((n + 1))
        prev="$case_"
    done < <({ (cd "$old" && find . -type f); (cd "$new" && find . -type f); } | sed 's|^\./||' | LC_ALL=C sort -u)
    if [ "$bad" = 0 ]; then
        echo "identical: $(find "$old" -name '*.rc' | wc -l) cases, $(find "$old" -type f | wc -l) files"
        return 0
    fi
    echo "$n case(s) differ"
    return 1
}

# --------------------------------------------------------------------------- capture

BIN=""
OUT=""
TMP=""
NCASES=0

# Stable text for a file a case wrote.
render_file() {
    local f="$1"
    case "$f" in
        *.parquet)
            if python3 -c 'import pyarrow' 2>/dev/null; then
                python3 - "$f" <<'EOF'
import sys
import pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
print(t.schema.to_string(show_schema_metadata=False))
print("rows:", t.num_rows)
for row in t.to_pylist():
    print(row)
EOF
            else
                echo "sha256 (pyarrow missing): $(sha256sum <"$f" | cut -d' ' -f1)"
            fi
            ;;
        *) cat "$f" ;;
    esac
}

# A directory a case wrote: its files, then each one.
render_tree() {
    local d="$1" f
    (cd "$d" && find . -type f | LC_ALL=C sort)
    while IFS= read -r f; do
        echo "=== $f"
        render_file "$d/$f"
    done < <(cd "$d" && find . -type f | LC_ALL=C sort)
}

# Mask what tlsgap measures on this machine (see the golden-README above) in FILE.
mask_pw() {
    [ -s "$1" ] || return 0
    python3 - "$1" <<'EOF'
import re, sys
path = sys.argv[1]
KEYS = ("verify_seconds", "cost_per_request_seconds", "total_cost_seconds",
        "predicted_seconds", "predicted_cpu_seconds", "suggested_cost",
        "latency_matches_prediction", "gaps_match_prediction", "server_seconds",
        "server_time_ratio", "auth_seconds_per_page_view", "suggested_cost_per_page")
ARRAYS = re.compile(r"""(["'])(verify_range_seconds|ratio_range)\1: \[[^\]]*\]""")
key_value = re.compile(r"""(["'])(%s)\1: ([^,}\n]+)""" % "|".join(KEYS))
duration = re.compile(r"\b[0-9]+(?:\.[0-9]+)?(?:e-?[0-9]+)?( ?)(ms|s|µs|us|ns)\b")
cost = re.compile(r"(\bCost|-C|bcrypt cost(?= [0-9]+ would)) [0-9]+\b")
cheaper = re.compile(r"\b[0-9]+× cheaper")
ratio = re.compile(r"(×|\bx|ratios) [0-9]+\.[0-9]+(-[0-9]+\.[0-9]+)?")
with open(path, encoding="utf-8", errors="surrogateescape", newline="") as f:
    whole = f.read()
# Pretty JSON spreads an array over lines: mask it whole first.
whole = ARRAYS.sub(lambda m: m.group(1) + m.group(2) + m.group(1) + ": N", whole)
lines = whole.split("\n")

def csv_fields(line):
    out, i = [], 0
    field = re.compile(r'"(?:[^"]|"")*"|[^,]*')
    while True:
        m = field.match(line, i)
        out.append(m.group())
        i = m.end()
        if i >= len(line) or line[i] != ",":
            return out
        i += 1

masked_cols = []
header = csv_fields(lines[0])
if len(header) > 1 and any(h in KEYS for h in header):
    masked_cols = [i for i, h in enumerate(header) if h in KEYS]
# Table text (not JSON, not CSV): the column widths follow the measured figures.
text = lines[0][:1] not in ("{", "[") and not masked_cols
out = []
for n, line in enumerate(lines):
    new = key_value.sub(lambda m: m.group(1) + m.group(2) + m.group(1) + ": N", line)
    if masked_cols and n > 0 and new:
        fields = csv_fields(new)
        for i in masked_cols:
            if i < len(fields) and fields[i]:
                fields[i] = "N"
        new = ",".join(fields)
    before = new
    new = duration.sub(r"N\1\2", new)
    new = cost.sub(r"\1 N", new)
    new = cheaper.sub("N× cheaper", new)
    new = ratio.sub(lambda m: m.group(1) + " N", new)
    if text and new != before:
        indent = len(new) - len(new.lstrip(" "))
        new = new[:indent] + re.sub(r" {2,}", " ", new[indent:])
    out.append(new)
with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as f:
    f.write("\n".join(out))
EOF
}

# case_ NAME [--in DIR] [--file REL]... [--tree REL] [--stdin FILE] -- ARGS...
# Runs BIN ARGS in DIR (default: the repository root); --file: also capture the file REL
# (relative to the scratch directory) the run wrote, --tree: the directory REL;
# --stdin: standard input from FILE (relative to the repository root).
case_() {
    local name="$1"
    shift
    local dir="$ROOT" stdin=/dev/null tree="" files=()
    while [ "$1" != "--" ]; do
        case "$1" in
            --in) dir="$2"; shift 2 ;;
            --file) files+=("$2"); shift 2 ;;
            --tree) tree="$2"; shift 2 ;;
            --stdin) stdin="$ROOT/$2"; shift 2 ;;
            *) echo "golden.sh: bad case option $1" >&2; exit 2 ;;
        esac
    done
    shift
    [ ! -e "$OUT/$name.rc" ] || { echo "golden.sh: case $name twice" >&2; exit 2; }
    local rc=0
    (cd "$dir" && env -i PATH="$PATH" TZ=UTC LC_ALL=C NO_COLOR=1 CI=1 TERM=dumb \
        timeout 60 "$TMP/bin/tlsgap" "$@" <"$stdin" >"$OUT/$name.out" 2>"$OUT/$name.err") || rc=$?
    echo "$rc" >"$OUT/$name.rc"
    local f
    for f in ${files[@]+"${files[@]}"}; do
        if [ -e "$TMP/$f" ]; then
            render_file "$TMP/$f" >"$OUT/$name.file-$f"
            rm -f "${TMP:?}/$f"
        else
            echo "(not written)" >"$OUT/$name.file-$f"
        fi
    done
    if [ -n "$tree" ]; then
        if [ -d "$TMP/$tree" ]; then render_tree "$TMP/$tree"; else echo "(not written)"; fi >"$OUT/$name.tree"
    fi
    for f in "$OUT/$name".*; do
        sed -i -E "s|$TMP|@TMP@|g; s|$ROOT|@ROOT@|g
            s/^(tlsgap_run_timestamp_seconds) [0-9.e+-]+$/\1 @NOW@/
            s/^(thread '[^']*') \([0-9]+\) panicked/\1 (@TID@) panicked/
            s/fits bcrypt cost [0-9]+(-[0-9]+)? at this machine/fits bcrypt cost N at this machine/g
            s/bcrypt~[0-9]+(-[0-9]+)?( *)/bcrypt~N /g
            s/ panicked at [^ ]+:[0-9]+:[0-9]+:$/ panicked at @LOC@:/" "$f"
        # The same measured costs as a JSON array over several lines.
        perl -0pi -e 's/("gaps_fit_bcrypt_costs": )\[[^\]]*\]/$1N/g' "$f"
        # ... and the note of a table that wraps between "bcrypt" and "cost N".
        perl -0pi -e 's/fits bcrypt(\n\s+)cost [0-9]+(-[0-9]+)? at this machine/fits bcrypt$1cost N at this machine/g' "$f"
    done
    if [[ "$name" == *-pw-* ]] && [ -z "${GOLDEN_NOMASK:-}" ]; then
        for f in "$OUT/$name".*; do
            [ "${f##*.}" = rc ] || mask_pw "$f"
        done
    fi
    NCASES=$((NCASES + 1))
}

capture() {
    if [[ "$1" == */* ]]; then
        BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
    else
        BIN="$(command -v "$1" || true)"
    fi
    if [ -z "$BIN" ] || [ ! -x "$BIN" ]; then
        echo "golden.sh: $1 is not an executable" >&2
        exit 2
    fi
    OUT="$2"
    mkdir -p "$OUT"
    OUT="$(cd "$OUT" && pwd)"
    [ -z "$(ls -A "$OUT")" ] || { echo "golden.sh: $OUT is not empty" >&2; exit 2; }
    [ -d "$ROOT/testdata" ] || { echo "golden.sh: no testdata/ in $ROOT" >&2; exit 2; }
    TMP="$(mktemp -d /tmp/tlsgap-golden.XXXXXX)"
    trap 'rm -rf "$TMP"' EXIT
    # Run as `tlsgap` whatever BIN is called: usage lines and errors name argv[0].
    mkdir "$TMP/bin"
    ln -s "$BIN" "$TMP/bin/tlsgap"
    local start=$SECONDS
    cd "$ROOT"

    local S=testdata/sample/combinedssl.log.gz
    local real=testdata/real
    local A=testdata/auth/real
    local FF=testdata/strace/real/apache-ff
    local FS=testdata/strace/real/apache-f-stderr
    local authfmt fffmt f p t log fmt
    # auth/real: the bare LogFormat string from its manifest; the strace/real Apache
    # runs: the whole `LogFormat "..." nick` line pasted from their httpd.conf.
    authfmt="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["log_format"])' "$A/manifest.json")"
    fffmt="$(grep -m1 '^LogFormat' "$FF/httpd.conf")"
    local atraces=(traces/trace.5693 traces/trace.5694 traces/trace.5695)

    # --- tls on the generated sample: every format, both counts, periods, windows,
    # strictness, bad lines, inputs, output to a file, incremental state, usage errors.
    for f in table csv json prom; do
        case_ "tls-$f" -- tls -j1 --format "$f" "$S"
    done
    case_ tls-parquet --file t.parquet -- tls -j1 --format parquet -o "$TMP/t.parquet" "$S"
    for f in csv json prom; do
        case_ "tls-clients-$f" -- tls -j1 --count clients --format "$f" "$S"
    done
    case_ tls-prom-file --file tlsgap.prom -- tls -j1 -q --format prom -o "$TMP/tlsgap.prom" "$S"
    case_ tls-json-file --file t.json -- tls -j1 --format json -o "$TMP/t.json" "$S"
    case_ tls-parquet-no-o -- tls -j1 --format parquet "$S"
    for f in table json; do
        case_ "tls-by-hour-$f" -- tls -j1 --by hour --format "$f" "$S"
    done
    case_ tls-by-hour-parquet --file t.parquet -- tls -j1 --by hour --format parquet -o "$TMP/t.parquet" "$S"
    case_ tls-by-day-clients-csv -- tls -j1 --by day --count clients --format csv "$S"
    case_ tls-by-day-sofia-json -- tls -j1 --by day --tz Europe/Sofia --format json "$S"
    case_ tls-window-utc -- tls -j1 --format json --since 2026-11-20T22:01:00Z --until 2026-11-20T22:02:30Z "$S"
    case_ tls-window-date-sofia -- tls -j1 --tz Europe/Sofia --since 2026-11-21 --until 2026-11-22 "$S"
    case_ tls-window-local-ny -- tls -j1 --format csv --tz America/New_York --since 2026-11-20T17:03 --until 2026-11-20T18:00 "$S"
    case_ tls-window-empty -- tls -j1 --since 2000-01-01 --until 2000-01-02 "$S"
    case_ tls-window-bad -- tls -j1 --since 'next tuesday' "$S"
    case_ tls-strict -- tls -j1 --strict "$S"
    case_ tls-invalid-lines --file bad.txt -- tls -j1 -q --invalid-lines "$TMP/bad.txt" "$S"
    case_ tls-missing-file -- tls -j1 /no/such/file.log "$S"
    case_ tls-quiet -- tls -j1 -q --format csv "$S"
    case_ tls-stdin-gz --stdin "$S" -- tls -j1 --format json -
    case_ tls-j2-json -- tls -j2 --format json "$S"
    case_ tls-j2-clients-csv -- tls -j2 --count clients --format csv "$S"
    case_ tls-wrong-preset -- tls -j1 --log-format ssl_request "$S"
    case_ tls-bad-format -- tls --format xml "$S"
    cp "$real/apache-combinedssl.log" "$TMP/access.log"
    case_ tls-state-first --in "$TMP" -- tls -j1 --state state.json --format csv access.log
    case_ tls-state-nothing-new --in "$TMP" -- tls -j1 --state state.json --format csv access.log
    cat "$real/apache-combinedssl.log" >>"$TMP/access.log"
    case_ tls-state-appended --in "$TMP" -- tls -j1 --state state.json --format csv access.log
    rm -f "$TMP/access.log" "$TMP/state.json" "$TMP/state.json.lock"

    # --- the real Apache and nginx logs: each with its format, and auto-detected.
    for log in "$real"/*.log; do
        log="$(basename "$log" .log)"
        fmt="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$real/formats.json" "$log.log")"
        case_ "tls-real-$log-json" -- tls -j1 --format json --log-format "$fmt" "$real/$log.log"
        case_ "tls-real-$log-auto" -- tls -j1 "$real/$log.log"
        case_ "export-real-$log-ndjson" -- export -j1 -q --log-format "$fmt" "$real/$log.log"
    done
    for log in apache-ssl_request nginx-json; do
        fmt="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$real/formats.json" "$log.log")"
        case_ "whatif-real-$log" -- whatif -j1 --policy mozilla-intermediate --log-format "$fmt" "$real/$log.log"
    done
    fmt="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nginx-json.log"])' "$real/formats.json")"
    case_ export-real-nginx-json-csv -- export -j1 --format csv --log-format "$fmt" "$real/nginx-json.log"
    case_ export-real-nginx-json-parquet --file e.parquet -- export -j1 --format parquet -o "$TMP/e.parquet" \
        --log-format "$fmt" "$real/nginx-json.log"
    case_ tls-real-strict-clean -- tls -j1 --strict --log-format combinedssl --format csv "$real/apache-combinedssl.log"

    # --- export: every format, a window, -j2, and a dataset (two hosts) for merge.
    case_ export-ndjson -- export -j1 "$S"
    case_ export-csv -- export -j1 --format csv "$S"
    case_ export-parquet --file e.parquet -- export -j1 --format parquet -o "$TMP/e.parquet" "$S"
    case_ export-j2-csv -- export -j2 -q --format csv "$S"
    case_ export-window-ndjson -- export -j1 --since 2026-11-21T00:01:00+02:00 --until 2026-11-21T00:01:05+02:00 "$S"
    case_ export-parquet-no-o -- export -j1 --format parquet "$S"
    case_ export-dataset-web1 --tree ds -- export -j1 --format parquet --partition-by date --host web1 -o "$TMP/ds" "$S"
    case_ export-dataset-web2 -- export -j1 --format parquet --partition-by date --host 'web 2/é' \
        --log-format combinedssl -o "$TMP/ds" "$real/apache-combinedssl.log"
    (cd "$TMP" && find ds -type f | LC_ALL=C sort) >"$OUT/export-dataset-web2.files"

    # --- merge over that dataset: every format, counts, date partitions, a glob.
    for f in table csv json prom; do
        case_ "merge-$f" --in "$TMP" -- merge --format "$f" ds
    done
    case_ merge-parquet --in "$TMP" --file m.parquet -- merge --format parquet -o m.parquet ds
    case_ merge-clients-json --in "$TMP" -- merge --count clients --format json ds
    case_ merge-one-day --in "$TMP" -- merge -q --since-date 2026-11-21 --until-date 2026-11-21 ds
    case_ merge-glob --in "$TMP" -- merge --format csv 'ds/date=2026-11-2*'
    case_ merge-nothing --in "$TMP" -- merge no-such-dir
    rm -rf "${TMP:?}/ds"

    # --- whatif: every built-in policy, directives inline and in a file, every format.
    for p in mozilla-modern mozilla-intermediate mozilla-old; do
        case_ "whatif-$p" -- whatif -j1 --policy "$p" "$S"
    done
    for f in csv json prom; do
        case_ "whatif-$f" -- whatif -j1 --policy mozilla-intermediate --format "$f" "$S"
    done
    case_ whatif-parquet --file w.parquet -- whatif -j1 --policy mozilla-modern --format parquet -o "$TMP/w.parquet" "$S"
    case_ whatif-apache-inline -- whatif -j1 --policy 'SSLProtocol -all +TLSv1.2 +TLSv1.3
SSLCipherSuite HIGH:!aNULL:!MD5' "$S"
    case_ whatif-nginx-inline-json -- whatif -j1 --format json --top 3 \
        --policy 'ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM;' "$S"
    printf 'SSLProtocol all -SSLv3 -TLSv1\nSSLCipherSuite ECDHE+AESGCM:ECDHE+CHACHA20:AES128-SHA\n' >"$TMP/policy.conf"
    case_ whatif-policy-file-csv -- whatif -j1 --format csv --policy "$TMP/policy.conf" "$S"
    case_ whatif-bad-policy -- whatif -j1 --policy 'no such policy' "$S"
    case_ whatif-no-policy -- whatif -j1 "$S"

    # --- report: text, HTML, both, periods, zones, bad lines, auth evidence.
    case_ report-text -- report -j1 "$S"
    case_ report-html --file r.html -- report -j1 --html "$TMP/r.html" "$S"
    case_ report-html-text-by-hour --file r.html -- report -j1 --by hour --html "$TMP/r.html" --text "$S"
    case_ report-o-sofia --file r.txt -- report -j1 -q --tz Europe/Sofia -o "$TMP/r.txt" "$S"
    case_ report-invalid-lines --file bad.txt -- report -j1 --invalid-lines "$TMP/bad.txt" "$S"
    case_ report-real-nginx-json-html --file r.html -- report -j1 --log-format "$fmt" --html "$TMP/r.html" "$real/nginx-json.log"
    case_ report-window-empty -- report -j1 --since 2000-01-01 --until 2000-01-02 "$S"
    case_ report-traces-text --in "$A" -- report -j1 --log-format "$authfmt" --traces "${atraces[@]}" -- access.log
    case_ report-pw-text --in "$A" -- report -j1 --text --log-format "$authfmt" \
        --htpasswd htpasswd --traces "${atraces[@]}" -- access.log
    case_ report-pw-html --in "$A" --file r.html -- report -j1 -q --html "$TMP/r.html" --log-format "$authfmt" \
        --htpasswd htpasswd --traces "${atraces[@]}" -- access.log

    # --- check: each state and exit code, thresholds, bad input, usage errors, htpasswd.
    case_ check-default -- check -j1 "$S"
    case_ check-critical -- check -j1 --legacy-warn 0.001 --legacy-crit 0.002 --insecure-crit 0.5 "$S"
    case_ check-ok -- check -j1 -q --legacy-warn 0.5 --legacy-crit 0.9 --insecure-warn 0.5 --insecure-crit 0.9 "$S"
    case_ check-malformed-crit -- check -j1 -q --malformed-warn 0.001 --malformed-crit 0.002 \
        --legacy-warn 0.5 --legacy-crit 0.9 --insecure-warn 0.5 --insecure-crit 0.9 "$S"
    case_ check-real-clean -- check -j1 --log-format combinedssl "$real/apache-combinedssl.log"
    case_ check-o-refused --file c.txt -- check -j1 --log-format combinedssl -o "$TMP/c.txt" "$real/apache-combinedssl.log"
    case_ check-missing -- check -j1 /no/such/file.log
    case_ check-nothing-parsed -- check -j1 --log-format ssl_request "$S"
    case_ check-window-empty -- check -j1 --since 2000-01-01 --until 2000-01-02 "$S"
    case_ check-warn-above-crit -- check -j1 --legacy-warn 0.5 --legacy-crit 0.1 "$S"
    case_ check-bad-value -- check -j1 --legacy-warn 5 "$S"
    case_ check-pw-only-crit -- check --htpasswd "$A/htpasswd" --auth-warn 0.00001 --auth-crit 0.00002
    case_ check-pw-log-ok -- check -j1 --htpasswd "$A/htpasswd" --auth-warn 10 --auth-crit 20 \
        --legacy-warn 0.5 --legacy-crit 0.9 --insecure-warn 0.5 --insecure-crit 0.9 "$S"

    # --- ciphers.
    for f in table csv json; do
        case_ "ciphers-$f" -- ciphers --format "$f"
    done
    case_ ciphers-names -- ciphers ECDHE-RSA-AES128-GCM-SHA256 EDH-RSA-DES-CBC3-SHA TLS_AES_256_GCM_SHA384 RC4-MD5 NO-SUCH
    case_ ciphers-escape -- ciphers $'NO-SUCH-\e[31mSUITE'
    case_ ciphers-verdict-csv -- ciphers --verdict insecure --verdict weak --format csv
    case_ ciphers-protocol-json -- ciphers --protocol TLSv1.3 --format json
    case_ ciphers-sslv2 -- ciphers --protocol SSLv2 RC4-MD5
    case_ ciphers-o --file c.csv -- ciphers --verdict recommended --format csv -o "$TMP/c.csv"

    # --- gaps: every real trace, every strace form, every format.
    for t in spin/abs-unix-ns-T spin/r spin/t spin/tt spin/ttt-T-y threads/f-tt-T-y-o; do
        case_ "gaps-${t//\//-}" -- gaps "testdata/strace/real/$t.trace"
    done
    case_ gaps-threads-ff-json -- gaps --format json testdata/strace/real/threads/ff-ttt-T.trace.6964 \
        testdata/strace/real/threads/ff-ttt-T.trace.6965
    for f in table csv json; do
        case_ "gaps-apache-ff-$f" -- gaps --format "$f" "$FF/trace.7015" "$FF/trace.7016" "$FF/trace.7017"
    done
    case_ gaps-apache-ff-parquet --file g.parquet -- gaps --format parquet -o "$TMP/g.parquet" "$FF/trace.7015" "$FF/trace.7016" "$FF/trace.7017"
    case_ gaps-apache-ff-glob-top2 -- gaps --top 2 --min-gap 0.05 "$FF/trace.*"
    case_ gaps-apache-ff-prom -- gaps --format prom "$FF/trace.7016"
    case_ gaps-apache-f-stderr -- gaps --min-gap 0.01 "$FS/trace"
    case_ gaps-stdin --stdin "$FS/trace" -- gaps --format csv -
    case_ gaps-auth-traces --in "$A" -- gaps "${atraces[@]}"
    # Forms without sub-second timestamps find no gap: one case reads them all (their
    # line counts, skip reasons and notes add up); every other form is a case of its own.
    local untimed=(f f-C f-c f-k f-read-write-dump f-x f-xx)
    local untimed_files=()
    for t in "${untimed[@]}"; do untimed_files+=("testdata/strace/forms/$t.strace"); done
    case_ gaps-forms-untimed -- gaps --format json --min-gap 0.001 "${untimed_files[@]}"
    for t in testdata/strace/forms/*.strace; do
        t="$(basename "$t" .strace)"
        [[ " ${untimed[*]} " == *" $t "* ]] && continue
        case_ "gaps-form-$t" -- gaps --format json --min-gap 0.001 "testdata/strace/forms/$t.strace"
    done
    case_ gaps-form-ff -- gaps --format json --min-gap 0.001 testdata/strace/forms/ff/trace.1 \
        testdata/strace/forms/ff/trace.2 testdata/strace/forms/ff/trace.3
    case_ gaps-missing -- gaps /no/such/trace
    case_ gaps-not-strace -- gaps "$real/nginx-ssl.log"

    # --- auth: each kind of evidence alone and together, every format, three real runs.
    for f in table csv json; do
        case_ "auth-pw-full-$f" --in "$A" -- auth --format "$f" --htpasswd htpasswd \
            --log access.log --log-format "$authfmt" --traces "${atraces[@]}"
    done
    case_ auth-pw-full-parquet --in "$A" --file a.parquet -- auth --format parquet -o "$TMP/a.parquet" \
        --htpasswd htpasswd --log access.log --log-format "$authfmt" --traces "${atraces[@]}"
    case_ auth-pw-only --in "$A" -- auth --htpasswd htpasswd
    case_ auth-pw-threshold-window --in "$A" -- auth --format json --threshold 0.01 --htpasswd htpasswd \
        --log access.log --log-format "$authfmt" --since 2000-01-01 --until 2000-01-02
    case_ auth-log-json --in "$A" -- auth --format json --log access.log --log-format "$authfmt"
    for f in table json; do
        case_ "auth-traces-$f" --in "$A" -- auth --format "$f" --traces "${atraces[@]}"
    done
    case_ auth-log-traces-csv --in "$A" -- auth --format csv --log access.log --log-format "$authfmt" --traces "${atraces[@]}"
    case_ auth-ff-traces-glob --in "$FF" -- auth --format json --log access.log --log-format "$fffmt" --traces 'trace.*'
    case_ auth-ff-pw-full --in "$FF" -- auth --htpasswd htpasswd --log access.log --log-format "$fffmt" --traces 'trace.*'
    case_ auth-fstderr-trace-tz --in "$FS" -- auth --format json --log access.log --log-format "$fffmt" \
        --trace-tz +05:00 --traces trace
    case_ auth-fstderr-stdin --in "$FS" --stdin "$FS/trace" -- auth --format json --traces -
    case_ auth-bad-trace-tz --in "$A" -- auth --traces traces/trace.5693 --trace-tz +1é1
    case_ auth-nothing -- auth

    # --- the command line itself.
    case_ help -- --help
    case_ version -- --version
    case_ no-command --
    case_ unknown-command -- frobnicate
    for p in tls export whatif gaps auth report ciphers check merge; do
        case_ "help-$p" -- "$p" --help
    done
    for p in bash fish; do
        case_ "completions-$p" -- completions "$p"
    done
    case_ man -- man

    echo "captured $NCASES cases ($(find "$OUT" -type f | wc -l) files) into $OUT in $((SECONDS - start))s"
}

case "${1:-}" in
    capture) [ $# = 3 ] || usage; capture "$2" "$3" ;;
    diff) [ $# = 3 ] || usage; do_diff "$2" "$3" ;;
    *) usage ;;
esac
