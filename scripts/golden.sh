#!/usr/bin/env bash
# Golden outputs: every command of a tlsgap binary, in every output format it offers,
# on the repository's test corpus, captured so that a refactor can be shown to leave
# the outputs byte-identical (and a deliberate change can be listed, case by case).
#
#   scripts/golden.sh capture BIN OUTDIR   # BIN over the corpus; OUTDIR/CASE.{out,err,rc}
#   scripts/golden.sh diff OLD NEW         # differing cases; exit 1 if any
#
# Typical use: build the commit before a change, `capture` with it; build after,
# `capture` again; `diff`.
#
# Deterministic by construction: TZ=UTC, LC_ALL=C, -j1 where a command reads logs,
# stdout and stderr are files (no progress bar), and the scratch directory's path is
# replaced by @TMP@. Files written with -o are captured as their contents: Parquet as
# pyarrow's schema and rows (sha256 of the bytes when pyarrow is missing), HTML and
# Prometheus text as they are.
#
# Masked: the Prometheus sample `tlsgap_run_timestamp_seconds` (the time of the run)
# becomes @NOW@. Masked too, because they are measured on this machine at each run (not computed from
# the input): in cases named auth-*, report-auth-* and check-htpasswd-*, every number
# in the outputs (password-verification times, the costs, flags and advice that follow
# from them) becomes N; the JSON of those cases keeps its keys and non-numeric values.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() {
    sed -n '5,6p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2
    exit 2
}

do_diff() {
    local old="$1" new="$2" bad=0 f rel
    while IFS= read -r f; do
        rel="${f#"$old"/}"
        if [ ! -e "$new/$rel" ]; then
            echo "only in $old: $rel"
            bad=1
        elif ! cmp -s "$f" "$new/$rel"; then
            echo "differs: $rel"
            diff -u "$f" "$new/$rel" | head -n 20 || true
            bad=1
        fi
    done < <(find "$old" -type f | sort)
    while IFS= read -r f; do
        rel="${f#"$new"/}"
        [ -e "$old/$rel" ] || { echo "only in $new: $rel"; bad=1; }
    done < <(find "$new" -type f | sort)
    [ "$bad" = 0 ] && echo "identical: $(find "$old" -type f | wc -l) files"
    return "$bad"
}

# --------------------------------------------------------------------------- capture

BIN=""
OUT=""
TMP=""

# Stable text for a file written with -o.
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
                sha256sum < "$f"
            fi
            ;;
        *) cat "$f" ;;
    esac
}

mask_numbers() {
    if [ -s "$1" ]; then
        sed -E -i 's/[0-9]+(\.[0-9]+)?(e-?[0-9]+)?/N/g' "$1"
    fi
}

# case NAME [--in DIR] [--file REL] -- ARGS...: run BIN ARGS in DIR (default: the repo
# root); with --file, append the contents of the written file REL (under @TMP@).
case_() {
    local name="$1"
    shift
    local dir="$ROOT" file=""
    while [ "$1" != "--" ]; do
        case "$1" in
            --in) dir="$2"; shift 2 ;;
            --file) file="$2"; shift 2 ;;
            *) echo "golden.sh: bad case option $1" >&2; exit 2 ;;
        esac
    done
    shift
    local rc=0
    (cd "$dir" && TZ=UTC LC_ALL=C "$BIN" "$@" </dev/null >"$OUT/$name.out" 2>"$OUT/$name.err") || rc=$?
    echo "$rc" >"$OUT/$name.rc"
    if [ -n "$file" ]; then
        if [ -e "$TMP/$file" ]; then
            render_file "$TMP/$file" >"$OUT/$name.file"
            rm -rf "${TMP:?}/$file"
        else
            echo "(not written)" >"$OUT/$name.file"
        fi
    fi
    local f
    for f in "$OUT/$name".*; do
        sed -i -E "s|$TMP|@TMP@|g; s|$ROOT|@ROOT@|g; s/^(tlsgap_run_timestamp_seconds) [0-9.e+-]+$/\1 @NOW@/" "$f"
    done
    case "$name" in
        auth-* | report-auth-* | check-htpasswd-*)
            for f in "$OUT/$name".*; do
                [ "${f##*.}" = rc ] || mask_numbers "$f"
            done
            ;;
    esac
}

capture() {
    BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
    OUT="$2"
    [ -x "$BIN" ] || { echo "golden.sh: $1 is not executable" >&2; exit 2; }
    mkdir -p "$OUT"
    OUT="$(cd "$OUT" && pwd)"
    TMP="$(mktemp -d /tmp/tlsgap-golden.XXXXXX)"
    trap 'rm -rf "$TMP"' EXIT

    local sample=testdata/sample/combinedssl.log.gz
    local real=testdata/real
    local auth=testdata/auth/real
    local authfmt
    authfmt="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["log_format"])' "$ROOT/$auth/manifest.json")"

    # tls: every format, both counts, periods, windows, strictness, bad lines.
    local f
    for f in table csv json prom; do
        case_ "tls-$f" -- tls -j1 --format "$f" "$sample"
        case_ "tls-clients-$f" -- tls -j1 --count clients --format "$f" "$sample"
    done
    case_ tls-parquet --file tls.parquet -- tls -j1 --format parquet -o "$TMP/tls.parquet" "$sample"
    case_ tls-prom-file --file tlsgap.prom -- tls -j1 --format prom -o "$TMP/tlsgap.prom" "$sample"
    for f in table csv json; do
        case_ "tls-by-hour-$f" -- tls -j1 --by hour --format "$f" "$sample"
        case_ "tls-by-day-clients-$f" -- tls -j1 --by day --count clients --format "$f" "$sample"
    done
    case_ tls-window -- tls -j1 --format json --since 2026-11-21T05:00:00Z --until 2026-11-21T07:00:00Z "$sample"
    case_ tls-window-tz -- tls -j1 --tz Europe/Sofia --since 2026-11-21 --until 2026-11-22 "$sample"
    case_ tls-strict -- tls -j1 --strict "$sample"
    case_ tls-invalid-lines --file bad.txt -- tls -j1 --invalid-lines "$TMP/bad.txt" "$sample"
    case_ tls-stdin-missing -- tls -j1 /no/such/file.log "$sample"
    case_ tls-quiet -- tls -j1 -q --format csv "$sample"
    local log fmt
    for log in "$ROOT/$real"/*.log; do
        log="$(basename "$log")"
        fmt="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$ROOT/$real/formats.json" "$log")"
        case_ "tls-real-$log-json" -- tls -j1 --format json --log-format "$fmt" "$real/$log"
        case_ "tls-real-$log-auto" -- tls -j1 "$real/$log"
        case_ "tls-real-$log-clients" -- tls -j1 --count clients --log-format "$fmt" "$real/$log"
        case_ "whatif-real-$log" -- whatif -j1 --policy mozilla-intermediate --log-format "$fmt" "$real/$log"
        case_ "export-real-$log" -- export -j1 --log-format "$fmt" "$real/$log"
    done

    # export: every format, and a dataset.
    case_ export-ndjson -- export -j1 "$sample"
    case_ export-csv -- export -j1 --format csv "$sample"
    case_ export-parquet --file e.parquet -- export -j1 --format parquet -o "$TMP/e.parquet" "$sample"
    case_ export-dataset -- export -j1 --format parquet --partition-by date --host web1 -o "$TMP/ds" "$sample"
    (cd "$TMP" && find ds -type f | sort) >"$OUT/export-dataset.files"

    # merge over that dataset.
    for f in table csv json prom; do
        case_ "merge-$f" --in "$TMP" -- merge --format "$f" ds
    done
    case_ merge-clients --in "$TMP" -- merge --count clients --format json ds
    case_ merge-dates --in "$TMP" -- merge --since-date 2026-11-21 --until-date 2026-11-21 ds
    case_ merge-parquet --file m.parquet --in "$TMP" -- merge --format parquet -o "$TMP/m.parquet" ds
    case_ merge-nothing --in "$TMP" -- merge "$TMP/no-such-dir"
    rm -rf "${TMP:?}/ds"

    # whatif: every built-in policy, directives inline, every format.
    local p
    for p in mozilla-modern mozilla-intermediate mozilla-old; do
        case_ "whatif-$p" -- whatif -j1 --policy "$p" "$sample"
    done
    for f in csv json; do
        case_ "whatif-$f" -- whatif -j1 --policy mozilla-intermediate --format "$f" "$sample"
    done
    case_ whatif-parquet --file w.parquet -- whatif -j1 --policy mozilla-modern --format parquet -o "$TMP/w.parquet" "$sample"
    case_ whatif-apache -- whatif -j1 --policy 'SSLProtocol -all +TLSv1.2 +TLSv1.3
SSLCipherSuite HIGH:!aNULL:!MD5' "$sample"
    case_ whatif-nginx -- whatif -j1 --format json --policy 'ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM;' "$sample"
    case_ whatif-bad-policy -- whatif -j1 --policy 'no such policy' "$sample"

    # report: text and HTML, with and without auth evidence.
    case_ report-text -- report -j1 --text "$sample"
    case_ report-html --file r.html -- report -j1 --html "$TMP/r.html" "$sample"
    case_ report-by-hour --file r.html -- report -j1 --by hour --html "$TMP/r.html" --text "$sample"
    case_ report-auth-text --in "$ROOT/$auth" -- report -j1 --text --log-format "$authfmt" \
        --htpasswd htpasswd --traces traces/trace.5693 traces/trace.5694 traces/trace.5695 -- access.log

    # check: default, thresholds crossed, UNKNOWN, htpasswd.
    case_ check-ok -- check -j1 "$sample"
    case_ check-strict-thresholds -- check -j1 --legacy-warn 0.001 --legacy-crit 0.002 --insecure-crit 0.5 "$sample"
    case_ check-missing -- check /no/such/file.log
    case_ check-bad-usage -- check --legacy-warn 0.5 --legacy-crit 0.1 "$sample"
    case_ check-htpasswd-only -- check --htpasswd "$auth/htpasswd"

    # ciphers.
    case_ ciphers-all -- ciphers
    for f in csv json; do
        case_ "ciphers-$f" -- ciphers --format "$f"
    done
    case_ ciphers-names -- ciphers ECDHE-RSA-AES128-GCM-SHA256 EDH-RSA-DES-CBC3-SHA TLS_AES_256_GCM_SHA384 RC4-MD5 NO-SUCH
    case_ ciphers-verdict -- ciphers --verdict insecure --verdict weak --format csv
    case_ ciphers-protocol -- ciphers --protocol TLSv1.3 --format json
    case_ ciphers-sslv2 -- ciphers --protocol SSLv2 RC4-MD5

    # gaps: every real trace set and every strace form, every format.
    local t
    for t in spin/tt.trace spin/ttt-T-y.trace spin/r.trace threads/f-tt-T-y-o.trace; do
        case_ "gaps-${t//\//-}" -- gaps testdata/strace/real/"$t"
    done
    case_ gaps-apache-ff-json -- gaps --format json testdata/strace/real/apache-ff/trace.7015 \
        testdata/strace/real/apache-ff/trace.7016 testdata/strace/real/apache-ff/trace.7017
    case_ gaps-apache-ff-csv -- gaps --format csv testdata/strace/real/apache-ff/trace.7015 \
        testdata/strace/real/apache-ff/trace.7016 testdata/strace/real/apache-ff/trace.7017
    case_ gaps-apache-f-stderr -- gaps --min-gap 0.01 testdata/strace/real/apache-f-stderr/trace
    case_ gaps-threads-ff-json -- gaps --format json testdata/strace/real/threads/ff-ttt-T.trace.6964 \
        testdata/strace/real/threads/ff-ttt-T.trace.6965
    case_ gaps-parquet --file g.parquet -- gaps --format parquet -o "$TMP/g.parquet" testdata/strace/real/apache-f-stderr/trace
    for t in "$ROOT"/testdata/strace/forms/*.strace; do
        t="$(basename "$t" .strace)"
        case_ "gaps-form-$t" -- gaps --format json --min-gap 0.001 "testdata/strace/forms/$t.strace"
    done
    case_ gaps-auth-traces-table --in "$ROOT/$auth" -- gaps traces/trace.5693 traces/trace.5694 traces/trace.5695
    case_ gaps-missing -- gaps /no/such/trace

    # auth: htpasswd alone, with the log, with traces; every format.
    for f in table csv json; do
        case_ "auth-full-$f" --in "$ROOT/$auth" -- auth --format "$f" --htpasswd htpasswd \
            --log access.log --log-format "$authfmt" --traces traces/trace.5693 traces/trace.5694 traces/trace.5695
    done
    case_ auth-htpasswd-only --in "$ROOT/$auth" -- auth --htpasswd htpasswd
    case_ auth-log-only --in "$ROOT/$auth" -- auth --format json --log access.log --log-format "$authfmt"
    case_ auth-traces-only --in "$ROOT/$auth" -- auth --format json --traces traces/trace.5693 traces/trace.5694 traces/trace.5695
    case_ auth-window --in "$ROOT/$auth" -- auth --format json --htpasswd htpasswd --log access.log \
        --log-format "$authfmt" --since 2000-01-01 --until 2000-01-02
    case_ auth-parquet --file a.parquet --in "$ROOT/$auth" -- auth --format parquet -o "$TMP/a.parquet" --htpasswd htpasswd
    case_ auth-bad-tz --in "$ROOT/$auth" -- auth --traces traces/trace.5693 --trace-tz +1é1
    case_ auth-nothing -- auth

    # The command line itself.
    case_ help -- --help
    for c in tls export whatif gaps auth report ciphers check merge; do
        case_ "help-$c" -- "$c" --help
    done
    case_ completions-bash -- completions bash
    case_ man -- man

    echo "captured $(find "$OUT" -name '*.rc' | wc -l) cases into $OUT"
}

case "${1:-}" in
    capture) [ $# = 3 ] || usage; capture "$2" "$3" ;;
    diff) [ $# = 3 ] || usage; do_diff "$2" "$3" ;;
    *) usage ;;
esac
