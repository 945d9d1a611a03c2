#!/usr/bin/env bash
# When to move from `tlsgap merge` to DuckDB to Spark: the same per-day questions (the
# README's "fleet query" blocks, by request and by client) over one exported dataset,
# timed whole-process with /usr/bin/time, in one run.
#
#   bench/fleet.sh ROWS HOSTS DAYS [WORKDIR]
#
# Needs release builds of tlsgap and loggen (TLSGAP, LOGGEN, default
# $CARGO_TARGET_DIR/release/...), python3 with duckdb and pyspark, Java 17. The logs are
# generated host by host (loggen, a seed per host, spread over DAYS days), exported with
# `export --partition-by date --host hN`, and deleted; the dataset stays in WORKDIR
# (default: a temporary directory, removed at the end).
set -euo pipefail
rows=${1:?rows}
hosts=${2:?hosts}
days=${3:?days}
root="$(cd "$(dirname "$0")/.." && pwd)"
target=${CARGO_TARGET_DIR:-$root/target}
TLSGAP=${TLSGAP:-$target/release/tlsgap}
LOGGEN=${LOGGEN:-$target/release/loggen}
work=${4:-$(mktemp -d)}
keep=${4:+yes}
cleanup() { [ -n "$keep" ] || rm -rf "$work"; }
trap cleanup EXIT
ds="$work/dataset"
per_host=$((rows / hosts))
# Lines per second so that one host's lines span DAYS days.
rate=$(python3 -c "print(max(1, round($per_host / ($days * 86400))))")

for h in $(seq 1 "$hosts"); do
    "$LOGGEN" --lines "$per_host" --seed "$h" --rate "$rate" --malformed 0 > "$work/h$h.log"
    "$TLSGAP" export -q --format parquet --partition-by date --host "h$h" \
        --log-format combinedssl -o "$ds" "$work/h$h.log"
    rm -f "$work/h$h.log"
done
files=$(find "$ds" -name '*.parquet' | wc -l)
bytes=$(du -sb "$ds" | cut -f1)
echo "dataset: $rows rows, $hosts hosts, $(ls "$ds" | wc -l) day partitions, $files files, $((bytes / 1048576)) MiB"

query() { # NAME: the README block after <!-- fleet query: NAME -->
    awk -v m="<!-- fleet query: $1 -->" '
        $0 == m { on = 1; next }
        on && /^```sql/ { grab = 1; next }
        grab && /^```/ { exit }
        grab { print }' "$root/README.md"
}
q_requests=$(query "requests per day")
q_clients=$(query "clients per day")

engine_py='
import sys, time
engine, root, q = sys.argv[1:4]
if engine == "duckdb":
    import duckdb
    con = duckdb.connect()
    con.execute(f"CREATE VIEW requests AS SELECT * FROM read_parquet(\x27{root}/*/*/*.parquet\x27, hive_partitioning = true)")
    n = len(con.execute(q).fetchall())
else:
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.driver.memory", "4g").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.read.parquet(root).createOrReplaceTempView("requests")
    n = len(spark.sql(q).collect())
print(n, file=sys.stderr)
'

measure() { # LABEL COMMAND...: wall seconds and peak RSS
    local label=$1
    shift
    /usr/bin/time -f "%e %M" -o "$work/time" "$@" > /dev/null 2> "$work/err" || {
        cat "$work/err" >&2
        exit 1
    }
    read -r secs kb < "$work/time"
    printf '%-44s %8.2f s %8d MiB\n' "$label" "$secs" "$((kb / 1024))"
}

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
measure "tlsgap merge (by request, all days)" "$TLSGAP" merge -q --format json "$ds"
measure "tlsgap merge --by day" "$TLSGAP" merge -q --format json --by day --tz UTC "$ds"
measure "tlsgap merge --count clients" "$TLSGAP" merge -q --format json --count clients "$ds"
day=$(ls "$ds" | head -1 | sed 's/date=//')
measure "tlsgap merge --count clients, one day" "$TLSGAP" merge -q --format json \
    --count clients --since-date "$day" --until-date "$day" "$ds"
measure "DuckDB: requests per day" python3 -c "$engine_py" duckdb "$ds" "$q_requests"
measure "DuckDB: clients per day" python3 -c "$engine_py" duckdb "$ds" "$q_clients"
measure "Spark local[2]: requests per day" python3 -c "$engine_py" spark "$ds" "$q_requests"
measure "Spark local[2]: clients per day" python3 -c "$engine_py" spark "$ds" "$q_clients"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
