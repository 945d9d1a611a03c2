#!/usr/bin/env python3
"""Check a Parquet file written by tlsgap against the same data as NDJSON or CSV.

Usage:
    python3 scripts/check_parquet.py FILE.parquet EXPECTED.ndjson
    python3 scripts/check_parquet.py FILE.parquet EXPECTED.csv
    python3 scripts/check_parquet.py FILE.parquet EXPECTED.ndjson --columns a,b,c
    python3 scripts/check_parquet.py FILE.parquet EXPECTED.csv --quoted-text \
        --types section=text,requests=int,share=float,refused=bool

EXPECTED.ndjson is `tlsgap export --format ndjson` of the same input as the
Parquet file (`tlsgap export --format parquet`); EXPECTED.csv is
`tlsgap tls --format csv` of the same input as `tlsgap tls --format parquet`, or the
CSV of any other report written as a generic table (`whatif`, `gaps`: give the
column types with `--types` and pass `--quoted-text`).

FILE is read twice, with pyarrow and with DuckDB, and each reading must agree
with EXPECTED:

  * the row count;
  * the column names, in order (an export's Parquet has `time_offset_minutes`
    right after `time`, which NDJSON carries inside the RFC 3339 string);
    `--columns` gives them when EXPECTED has no rows to take them from;
  * the types: `time` a timestamp with time zone UTC, `time_offset_minutes`,
    `line`, `status`, `bytes`, `duration_us`, `pid`, `count` integers, text
    columns UTF-8 strings, `share` a float, `forward_secrecy`/`aead`/`post_quantum`
    booleans;
  * every value (times compared as instants, plus the offset).

Column types come from the column name (the lists below) unless `--types
NAME=KIND,...` says otherwise (KIND: int, float, bool, text); a CSV column that
neither names is text. In a CSV, an empty field is null. With `--quoted-text` (the
CSV of a generic table, which quotes every text field), a quoted field is text and
`""` is an empty string, an unquoted empty field is null, and every other field must
have its column's form: quoted for text, an integer for int, a number for float,
`true`/`false` for bool.

Exits 0 when everything matches, 1 listing the differences, 2 on a usage
error or when pyarrow/duckdb are missing.
"""

import argparse
import csv
import datetime
import json
import math
import re
import sys

MAX_SHOWN = 25

INT_COLUMNS = {"line", "status", "bytes", "duration_us", "pid", "time_offset_minutes", "count", "bits"}
TEXT_COLUMNS = {
    "file", "client", "ident", "user", "request", "method", "target", "http_version",
    "referer", "user_agent", "tls_protocol", "tls_cipher", "vhost",
    # tls
    "kind", "protocol", "cipher", "verdict", "protocol_verdict", "group",
}
FLOAT_COLUMNS = {"share"}
BOOL_COLUMNS = {"forward_secrecy", "aead", "post_quantum"}
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Problems:
    def __init__(self):
        self.items = []

    def add(self, msg):
        self.items.append(msg)

    def __bool__(self):
        return bool(self.items)


def die(msg, code=2):
    print("check_parquet: " + msg, file=sys.stderr)
    sys.exit(code)


def parse_time(s):
    """RFC 3339 text -> (microseconds since the epoch, offset in minutes)."""
    text = s[:-1] + "+00:00" if s.endswith(("Z", "z")) else s
    try:
        dt = datetime.datetime.fromisoformat(text)
    except ValueError as e:
        raise ValueError("not RFC 3339: %r (%s)" % (s, e))
    if dt.tzinfo is None:
        raise ValueError("time without offset: %r" % s)
    micros = (dt - EPOCH) // datetime.timedelta(microseconds=1)
    offset = dt.utcoffset() // datetime.timedelta(minutes=1)
    return micros, offset


def kind_of(name, values):
    """The expected type of a column: int, float, text, bool, time, or None (any)."""
    if name == "time":
        return "time"
    if name in INT_COLUMNS:
        return "int"
    if name in TEXT_COLUMNS:
        return "text"
    if name in FLOAT_COLUMNS:
        return "float"
    if name in BOOL_COLUMNS:
        return "bool"
    seen = {type(v) for v in values if v is not None}
    if not seen:
        return None
    if seen == {bool}:
        return "bool"
    if seen <= {int}:
        return "int"
    if seen <= {int, float}:
        return "float"
    if seen == {str}:
        return "text"
    die("column %s: mixed value types %s" % (name, sorted(t.__name__ for t in seen)))


def load_ndjson(path, columns_arg, types):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except ValueError as e:
                die("%s:%d: not JSON: %s" % (path, n, e))
    if rows:
        names = list(rows[0].keys())
        for i, r in enumerate(rows):
            if list(r.keys()) != names:
                die("%s: row %d has keys %s, row 1 %s" % (path, i + 1, list(r.keys()), names))
    elif columns_arg is not None:
        names = columns_arg
    else:
        names = None
    kinds = {}
    if names is not None:
        for name in names:
            kinds[name] = types.get(name) or kind_of(name, [r[name] for r in rows])
    # The Parquet file carries the offset of `time` in a column of its own.
    expected_rows = []
    for i, r in enumerate(rows):
        e = {}
        for name in names:
            v = r[name]
            if kinds[name] == "time" and v is not None:
                try:
                    micros, offset = parse_time(v)
                except ValueError as err:
                    die("%s: row %d: %s" % (path, i + 1, err))
                e[name] = micros
                e["time_offset_minutes"] = offset
            elif kinds[name] == "time":
                e[name] = None
                e["time_offset_minutes"] = None
            else:
                e[name] = v
        expected_rows.append(e)
    if names is not None and "time" in names and "time_offset_minutes" not in names:
        at = names.index("time") + 1
        names = names[:at] + ["time_offset_minutes"] + names[at:]
        kinds["time_offset_minutes"] = "int"
    return names, kinds, expected_rows


def read_csv_quoted(path):
    """RFC 4180 records as lists of (text, was_quoted), which `csv` cannot tell."""
    with open(path, encoding="utf-8", newline="") as f:
        data = f.read()
    records = []
    record = []
    field = []
    quoted = False
    i, n = 0, len(data)
    at_start = True  # at the start of a field
    while i < n:
        c = data[i]
        if at_start and c == '"':
            quoted = True
            at_start = False
            i += 1
            while True:
                j = data.find('"', i)
                if j < 0:
                    die("%s: unterminated quoted field" % path)
                field.append(data[i:j])
                if data.startswith('""', j):
                    field.append('"')
                    i = j + 2
                else:
                    i = j + 1
                    break
            if i < n and data[i] not in ',\r\n':
                die("%s: text after a closing quote: %r" % (path, data[i:i + 20]))
            continue
        at_start = False
        if c == ",":
            record.append(("".join(field), quoted))
            field, quoted, at_start = [], False, True
        elif c in "\r\n":
            if c == "\r" and data.startswith("\r\n", i):
                i += 1
            record.append(("".join(field), quoted))
            records.append(record)
            record, field, quoted, at_start = [], [], False, True
        else:
            field.append(c)
        i += 1
    if record or field or quoted:
        record.append(("".join(field), quoted))
        records.append(record)
    return records


INT_TEXT = re.compile(r"-?[0-9]+\Z")
FLOAT_TEXT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z|-?inf\Z|NaN\Z")


def load_csv(path, types, quoted_text):
    if quoted_text:
        rows = read_csv_quoted(path)
    else:
        with open(path, encoding="utf-8", newline="") as f:
            rows = [[(cell, None) for cell in row] for row in csv.reader(f)]
    if not rows:
        die("%s: empty CSV (no header)" % path)
    names = [cell for cell, _ in rows[0]]
    kinds = {n: types.get(n) or kind_of(n, []) or "text" for n in names}
    expected = []
    for i, row in enumerate(rows[1:], 2):
        if len(row) != len(names):
            die("%s:%d: %d fields, header has %d" % (path, i, len(row), len(names)))
        e = {}
        for name, (cell, was_quoted) in zip(names, row):
            k = kinds[name]
            if quoted_text:
                if was_quoted != (k == "text") and not (cell == "" and not was_quoted):
                    die("%s:%d: %s (%s) is %s%r" % (
                        path, i, name, k, "quoted " if was_quoted else "unquoted ", cell), 1)
                if was_quoted:
                    e[name] = cell
                    continue
            if cell == "":
                e[name] = None
            elif k == "int":
                if not INT_TEXT.match(cell):
                    die("%s:%d: %s is %r, not an integer" % (path, i, name, cell), 1)
                e[name] = int(cell)
            elif k == "float":
                if not FLOAT_TEXT.match(cell):
                    die("%s:%d: %s is %r, not a number" % (path, i, name, cell), 1)
                e[name] = float(cell)
            elif k == "bool":
                if cell not in ("true", "false"):
                    die("%s:%d: %s is %r, not true/false" % (path, i, name, cell), 1)
                e[name] = cell == "true"
            else:
                e[name] = cell
        expected.append(e)
    return names, kinds, expected


def same(kind, want, got):
    if want is None or got is None:
        return want is None and got is None
    if kind == "float" or isinstance(want, float):
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return False
        return float(want) == float(got) or (math.isnan(want) and math.isnan(got))
    if kind in ("int", "time"):
        return isinstance(got, int) and not isinstance(got, bool) and got == want
    if kind == "bool":
        return isinstance(got, bool) and got == want
    return type(got) is type(want) and got == want


def compare_values(reader, names, kinds, expected, columns, problems):
    """columns: name -> list of values as read."""
    shown = 0
    hidden = 0
    for name in names:
        got_col = columns[name]
        if len(got_col) != len(expected):
            problems.add("%s: column %s has %d values, expected %d" % (
                reader, name, len(got_col), len(expected)))
            continue
        for i, (e, g) in enumerate(zip(expected, got_col)):
            want = e.get(name)
            if not same(kinds.get(name), want, g):
                if shown < MAX_SHOWN:
                    problems.add("%s: row %d, column %s: expected %r, read %r" % (
                        reader, i + 1, name, want, g))
                    shown += 1
                else:
                    hidden += 1
    if hidden:
        problems.add("%s: ... and %d more value differences" % (reader, hidden))


def check_pyarrow(path, names, kinds, expected, problems):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(path)
    table = pf.read()
    got_names = table.schema.names
    if names is not None and got_names != names:
        problems.add("pyarrow: columns %s, expected %s" % (got_names, names))
        return
    if table.num_rows != len(expected):
        problems.add("pyarrow: %d rows, expected %d" % (table.num_rows, len(expected)))
    is_string_view = getattr(pa.types, "is_string_view", lambda t: False)
    columns = {}
    for i, field in enumerate(table.schema):
        name, t = field.name, field.type
        kind = kinds.get(name)
        col = table.column(name)
        if kind == "time":
            if not pa.types.is_timestamp(t) or t.tz not in ("UTC", "+00:00", "Etc/UTC"):
                problems.add("pyarrow: %s is %s, expected a timestamp with tz UTC" % (name, t))
                continue
            col = col.cast(pa.timestamp("us", tz=t.tz)).cast(pa.int64())
        elif kind == "int":
            if not pa.types.is_integer(t):
                problems.add("pyarrow: %s is %s, expected an integer" % (name, t))
                continue
        elif kind == "float":
            if not pa.types.is_floating(t):
                problems.add("pyarrow: %s is %s, expected a float" % (name, t))
                continue
        elif kind == "bool":
            if not pa.types.is_boolean(t):
                problems.add("pyarrow: %s is %s, expected a boolean" % (name, t))
                continue
        elif kind == "text":
            if not (pa.types.is_string(t) or pa.types.is_large_string(t) or is_string_view(t)):
                problems.add("pyarrow: %s is %s, expected a UTF-8 string" % (name, t))
                continue
            # The file itself must say UTF-8 (logical type String), not just bytes.
            logical = str(pf.schema.column(i).logical_type)
            if not logical.startswith("String"):
                problems.add("pyarrow: %s has Parquet logical type %s, expected String" % (
                    name, logical))
        columns[name] = col.to_pylist()
    if names is not None and all(n in columns for n in names):
        compare_values("pyarrow", names, kinds, expected, columns, problems)


DUCKDB_INT = {"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT",
              "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"}


def check_duckdb(path, names, kinds, expected, problems):
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    desc = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [path]).fetchall()
    got_names = [d[0] for d in desc]
    types = {d[0]: d[1] for d in desc}
    if names is not None and got_names != names:
        problems.add("duckdb: columns %s, expected %s" % (got_names, names))
        return
    select = []
    ok = True
    for name in got_names:
        kind, t = kinds.get(name), types[name]
        q = '"%s"' % name.replace('"', '""')
        if kind == "time":
            if t != "TIMESTAMP WITH TIME ZONE":
                problems.add("duckdb: %s is %s, expected TIMESTAMP WITH TIME ZONE" % (name, t))
                ok = False
            select.append("epoch_us(%s) AS %s" % (q, q))
            continue
        if kind == "int" and t not in DUCKDB_INT:
            problems.add("duckdb: %s is %s, expected an integer" % (name, t))
            ok = False
        elif kind == "float" and t not in ("DOUBLE", "FLOAT"):
            problems.add("duckdb: %s is %s, expected DOUBLE" % (name, t))
            ok = False
        elif kind == "bool" and t != "BOOLEAN":
            problems.add("duckdb: %s is %s, expected BOOLEAN" % (name, t))
            ok = False
        elif kind == "text" and t != "VARCHAR":
            problems.add("duckdb: %s is %s, expected VARCHAR" % (name, t))
            ok = False
        select.append(q)
    if not ok or names is None:
        return
    # Row order as in the file: file_row_number, not whatever the scan yields.
    sql = "SELECT %s FROM read_parquet(?, file_row_number = true) ORDER BY file_row_number" % (
        ", ".join(select))
    rows = con.execute(sql, [path]).fetchall()
    if len(rows) != len(expected):
        problems.add("duckdb: %d rows, expected %d" % (len(rows), len(expected)))
    columns = {name: [r[i] for r in rows] for i, name in enumerate(got_names)}
    compare_values("duckdb", names, kinds, expected, columns, problems)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parquet")
    ap.add_argument("expected", help="NDJSON (.ndjson/.jsonl/.json) or CSV (.csv)")
    ap.add_argument("--columns", help="comma-separated column names (for an empty NDJSON)")
    ap.add_argument("--types", metavar="NAME=KIND,...",
                    help="column types (KIND: int, float, bool, text), over the built-in ones")
    ap.add_argument("--quoted-text", action="store_true",
                    help="CSV quotes every text field: quoted = text, unquoted empty = null")
    args = ap.parse_args()

    types = {}
    for item in (args.types or "").split(","):
        if not item:
            continue
        name, sep, kind = item.partition("=")
        if not sep or kind not in ("int", "float", "bool", "text"):
            die("--types: %r is not NAME=int|float|bool|text" % item)
        types[name] = kind
    if args.quoted_text and not args.expected.endswith(".csv"):
        die("--quoted-text is for a CSV")

    try:
        import pyarrow  # noqa: F401
        import pyarrow.parquet  # noqa: F401
        import duckdb  # noqa: F401
    except ImportError as e:
        die("%s: this check needs pyarrow and duckdb: pip install pyarrow duckdb" % e)

    columns_arg = args.columns.split(",") if args.columns else None
    if args.expected.endswith(".csv"):
        names, kinds, expected = load_csv(args.expected, types, args.quoted_text)
    else:
        names, kinds, expected = load_ndjson(args.expected, columns_arg, types)
    unknown = sorted(set(types) - set(names or []))
    if unknown:
        die("--types names columns that %s does not have: %s" % (args.expected, unknown), 1)

    problems = Problems()
    check_pyarrow(args.parquet, names, kinds, expected, problems)
    check_duckdb(args.parquet, names, kinds, expected, problems)
    if problems:
        print("check_parquet: %s differs from %s:" % (args.parquet, args.expected),
              file=sys.stderr)
        for p in problems.items:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    print("check_parquet: %s: %d rows, %d columns match %s (pyarrow and duckdb)" % (
        args.parquet, len(expected), len(names or []), args.expected))


if __name__ == "__main__":
    main()
