//! The fleet path: `merge` over a dataset of several hosts and days answers what `tls`
//! answers over the logs with the same flags (`--by`, `--since/--until`, `--count
//! clients`, `--host`); datasets of older schema versions and layouts are read; and the
//! README's per-day SQL gives `merge`'s numbers in DuckDB and in a real local Spark
//! (pyspark from PyPI on Debian's OpenJDK).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::dataset::{comparable, export, generate, merge_json, write_lines, Line};
use crate::util::{self, assert_code, json, pair_counts, stderr, stdout, tlsgap};

/// Two hosts (a: two lines in three, b: the rest) of `n` generated lines over four
/// local days, clients told apart by address and by one of two User-Agents.
struct Fleet {
    _tmp: tempfile::TempDir,
    dataset: PathBuf,
    all_log: PathBuf,
    a_log: PathBuf,
    days: BTreeSet<String>,
}

fn fleet(n: usize) -> Fleet {
    let tmp = util::tempdir();
    let dir = tmp.path().to_path_buf();
    let mut all = generate(n);
    for (i, l) in all.iter_mut().enumerate() {
        if i % 7 < 3 {
            l.text = l.text.replace("(dataset test)", "(dataset test; other)");
        }
    }
    let pick = |keep: fn(usize) -> bool| -> Vec<&Line> {
        all.iter()
            .enumerate()
            .filter(|(i, _)| keep(*i))
            .map(|(_, l)| l)
            .collect()
    };
    let all_log = write_lines(&dir, "all.log", &pick(|_| true));
    let a_log = write_lines(&dir, "a.log", &pick(|i| i % 3 != 0));
    let b_log = write_lines(&dir, "b.log", &pick(|i| i % 3 == 0));
    let dataset = dir.join("dataset");
    export(&dataset, "a", &a_log);
    export(&dataset, "b", &b_log);
    let days = all
        .iter()
        .map(|l| l.date.trim_start_matches("date=").to_string())
        .collect();
    Fleet {
        _tmp: tmp,
        dataset,
        all_log,
        a_log,
        days,
    }
}

fn tls_json(log: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--log-format", "combinedssl"];
    args.extend_from_slice(extra);
    args.push(util::path_str(log));
    let (v, o) = util::tls_json(&args);
    assert_code(&o, 0);
    v
}

#[test]
fn merge_answers_what_tls_answers_with_the_same_flags() {
    let f = fleet(30_000);
    assert!(f.days.len() >= 3, "{:?}", f.days);
    let cases: &[&[&str]] = &[
        &[],
        &["--by", "day", "--tz", "UTC"],
        &[
            "--by",
            "hour",
            "--tz",
            "Asia/Kathmandu",
            "--count",
            "clients",
        ],
        &[
            "--since",
            "2026-11-20T12:00:00Z",
            "--until",
            "2026-11-21T06:00:00+01:00",
        ],
        &[
            "--since",
            "2026-11-21",
            "--tz",
            "America/St_Johns",
            "--by",
            "day",
            "--count",
            "clients",
        ],
        &[
            "--count",
            "clients",
            "--client-key",
            "addr",
            "--until",
            "2026-11-21T09:30",
            "--tz",
            "Europe/Sofia",
        ],
    ];
    for flags in cases {
        let merged = merge_json(&f.dataset, flags);
        let tls = tls_json(&f.all_log, flags);
        assert!(
            tls["total"].as_u64().unwrap() > 0,
            "{flags:?}: the case selects something"
        );
        if flags.contains(&"--by") {
            assert!(
                !merged["periods"].as_array().unwrap().is_empty(),
                "{flags:?}"
            );
        }
        assert_eq!(
            comparable(merged),
            comparable(tls),
            "merge vs tls {flags:?}"
        );
    }
    // One host: its directories only.
    let merged = merge_json(&f.dataset, &["--host", "a", "--by", "day", "--tz", "UTC"]);
    let tls = tls_json(&f.a_log, &["--by", "day", "--tz", "UTC"]);
    assert_eq!(comparable(merged), comparable(tls), "--host a");

    // A window no partition can hold: nothing read, said on stderr, exit 0.
    let o = tlsgap()
        .args(["merge", "--format", "json", "--since", "2030-01-01"])
        .arg(&f.dataset)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("no row inside the time window"),
        "{}",
        stderr(&o)
    );
    let v = json(&o);
    assert_eq!(
        (v["total"].as_u64(), v["plain"].as_u64()),
        (Some(0), Some(0))
    );
    // --host of no host in the dataset: nothing to read, exit 2.
    let o = tlsgap()
        .args(["merge", "--host", "nope"])
        .arg(&f.dataset)
        .output()
        .unwrap();
    assert_code(&o, 2);
}

/// A pyarrow script that copies a part of host `a` under other layouts and metadata,
/// standing for files written by other tlsgap versions.
const REWRITE: &str = r#"
import os, sys, pyarrow as pa, pyarrow.parquet as pq
src, root, day = sys.argv[1], sys.argv[2], sys.argv[3]
t = pq.read_table(src)
def put(path, table, meta):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    pq.write_table(table.replace_schema_metadata(meta), path)
# Before versions and before host= directories, and without a user_agent column.
put(f"{root}/date={day}/part-old-0.parquet", t.drop(["user_agent"]), None)
# The current version with a column a later tlsgap added.
curve = pa.array(["X25519MLKEM768"] * t.num_rows)
put(f"{root}/date={day}/host=new/part-new-0.parquet", t.append_column("ssl_curve", curve),
    {"tlsgap.schema_version": "1", "tlsgap.version": "9.9.9"})
# A newer schema version: refused, not misread.
put(f"{root}/date={day}/host=future/part-future-0.parquet", t,
    {"tlsgap.schema_version": "2", "tlsgap.version": "9.9.9"})
print(t.num_rows)
"#;

#[test]
fn older_schema_versions_and_layouts_are_read_newer_ones_refused() {
    let test = "older_schema_versions_and_layouts_are_read_newer_ones_refused";
    if !util::python_ready(
        test,
        &["pyarrow"],
        "pyarrow",
        "files of other schema versions",
    ) {
        return;
    }
    let f = fleet(25_000);
    // util::line's date, so that host old's later export lands on the same day.
    let day = "2026-11-21";
    assert!(f.days.contains(day), "{:?}", f.days);
    let part = f
        .dataset
        .join(format!("date={day}/host=a/part-a-0.parquet"));
    let o = util::run_tool(
        "python3",
        &[
            "-c",
            REWRITE,
            util::path_str(&part),
            util::path_str(&f.dataset),
            day,
        ],
    );
    let copied: u64 = stdout(&o).trim().parse().unwrap();
    assert!(copied > 0);
    let rows = |v: &Value| v["lines"]["total"].as_u64().unwrap();
    let a = merge_json(&f.dataset, &["--host", "a"]);
    let b = merge_json(&f.dataset, &["--host", "b"]);
    let o = tlsgap()
        .args(["merge", "--format", "json", "-q"])
        .arg(&f.dataset)
        .output()
        .unwrap();
    assert_code(&o, 1);
    let e = stderr(&o);
    assert!(
        e.contains("part-future-0.parquet")
            && e.contains("schema version \"2\"")
            && e.contains("9.9.9"),
        "{e}"
    );
    assert_eq!(rows(&json(&o)), rows(&a) + rows(&b) + 2 * copied);
    // The older layout's host, and the host with the added column, count what the
    // copied part counts.
    let a_day = merge_json(
        &f.dataset,
        &["--host", "a", "--since-date", day, "--until-date", day],
    );
    for host in ["old", "new"] {
        let got = merge_json(&f.dataset, &["--host", host]);
        assert_eq!(pair_counts(&got), pair_counts(&a_day), "{host}");
        assert_eq!(got["plain"], a_day["plain"], "{host}");
    }
    // --count clients over a file without user_agent: by address, with a warning.
    let o = tlsgap()
        .args([
            "merge", "--format", "json", "--count", "clients", "--host", "old",
        ])
        .arg(&f.dataset)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(
        stderr(&o).contains("no user_agent column"),
        "{}",
        stderr(&o)
    );

    // Host old's next export of that day replaces its part of the older layout.
    let dir = f.dataset.parent().unwrap();
    let log = util::write(
        dir,
        "old.log",
        util::line("192.0.2.9", "TLSv1.3", "TLS_AES_128_GCM_SHA256").as_bytes(),
    );
    let legacy = f.dataset.join(format!("date={day}/part-old-0.parquet"));
    assert!(legacy.is_file());
    let o = export(&f.dataset, "old", &log);
    assert!(
        stderr(&o).contains("1 earlier part(s) replaced"),
        "{}",
        stderr(&o)
    );
    assert!(!legacy.exists());
    assert!(f
        .dataset
        .join(format!("date={day}/host=old/part-old-0.parquet"))
        .is_file());
    let got = merge_json(&f.dataset, &["--host", "old"]);
    assert_eq!(rows(&got), 1);
}

/// The ```sql block after `<!-- fleet query: NAME -->` in README.md.
pub(crate) fn readme_query(name: &str) -> String {
    let doc = std::fs::read_to_string(util::repo_root().join("README.md")).unwrap();
    let marker = format!("<!-- fleet query: {name} -->\n```sql\n");
    let start = doc
        .find(&marker)
        .unwrap_or_else(|| panic!("README.md has no {marker}"))
        + marker.len();
    let len = doc[start..].find("```").unwrap();
    doc[start..start + len].to_string()
}

/// Runs both README queries in one engine over the view `requests` the README
/// defines; writes {"requests": [...], "clients": [...]}, rows [date, protocol,
/// cipher, n], to the file named last (not standard output, where the JVM may print).
const ENGINES: &str = r#"
import json, sys
engine, root, q_requests, q_clients, out = sys.argv[1:6]
def rows(result):
    return [[None if d is None else str(d), p, c, int(n)] for d, p, c, n in result]
if engine == "duckdb":
    import duckdb
    con = duckdb.connect()
    con.execute(f"CREATE VIEW requests AS SELECT * FROM read_parquet('{root}/*/*/*.parquet', hive_partitioning = true)")
    run = lambda q: rows(con.execute(q).fetchall())
else:
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("tlsgap-fleet-test")
             .config("spark.ui.enabled", "false")
             .config("spark.driver.host", "127.0.0.1")
             .config("spark.driver.bindAddress", "127.0.0.1")
             .config("spark.sql.shuffle.partitions", "4")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    spark.read.parquet(root).createOrReplaceTempView("requests")
    run = lambda q: rows(spark.sql(q).collect())
result = {"requests": run(q_requests), "clients": run(q_clients)}
with open(out, "w") as f:
    json.dump(result, f)
"#;

type Counts = BTreeMap<(String, String), u64>;

/// Per day: the pair counts and the plain count of one engine's rows.
fn per_day(rows: &Value) -> BTreeMap<String, (Counts, u64)> {
    let mut m: BTreeMap<String, (Counts, u64)> = BTreeMap::new();
    for r in rows.as_array().unwrap() {
        let day = r[0].as_str().unwrap().to_string();
        let slot = m.entry(day).or_default();
        let n = r[3].as_u64().unwrap();
        match (r[1].as_str(), r[2].as_str()) {
            (None, None) => slot.1 += n,
            (p, c) => {
                let key = (p.unwrap_or("").to_string(), c.unwrap_or("").to_string());
                *slot.0.entry(key).or_default() += n;
            }
        }
    }
    m
}

#[test]
fn readme_sql_per_day_in_duckdb_and_spark_gives_merges_numbers() {
    let test = "readme_sql_per_day_in_duckdb_and_spark_gives_merges_numbers";
    if !util::python_ready(
        test,
        &["duckdb", "pyspark"],
        "duckdb pyspark",
        "the README's fleet SQL",
    ) {
        return;
    }
    let f = fleet(12_000);
    let q_requests = readme_query("requests per day");
    let q_clients = readme_query("clients per day");
    // What merge prints for each day, by request and by client.
    let mut want: BTreeMap<&str, BTreeMap<String, (Counts, u64)>> = BTreeMap::new();
    for mode in ["requests", "clients"] {
        for day in &f.days {
            let v = merge_json(
                &f.dataset,
                &["--count", mode, "--since-date", day, "--until-date", day],
            );
            let plain = v["plain"].as_u64().unwrap();
            want.entry(mode)
                .or_default()
                .insert(day.clone(), (pair_counts(&v), plain));
        }
    }
    for engine in ["duckdb", "spark"] {
        let out = f.dataset.with_file_name(format!("{engine}.json"));
        let o = util::run_tool(
            "python3",
            &[
                "-c",
                ENGINES,
                engine,
                util::path_str(&f.dataset),
                &q_requests,
                &q_clients,
                util::path_str(&out),
            ],
        );
        let text = std::fs::read(&out).unwrap_or_default();
        let got: Value = serde_json::from_slice(&text)
            .unwrap_or_else(|e| panic!("{engine} ({e}): {}\n{}", stdout(&o), stderr(&o)));
        for mode in ["requests", "clients"] {
            assert_eq!(
                per_day(&got[mode]),
                want[mode],
                "{engine}, README query {mode} per day vs merge"
            );
        }
    }
}

/// `whatif` JSON, without what names or counts the inputs.
fn whatif_json(args: &[&str]) -> Value {
    let o = tlsgap()
        .args(["whatif", "--format", "json", "-q", "--seclevel", "2"])
        .args(args)
        .output()
        .unwrap();
    assert_code(&o, 0);
    comparable(json(&o))
}

#[test]
fn whatif_over_a_dataset_judges_what_it_judges_over_the_logs() {
    let f = fleet(12_000);
    let dataset = util::path_str(&f.dataset);
    let log = util::path_str(&f.all_log);
    for policy in [
        "mozilla-intermediate",
        "mozilla-modern",
        "SSLProtocol -all +TLSv1.2 +TLSv1.3\nSSLCipherSuite HIGH:!aNULL:!SHA1",
    ] {
        for extra in [
            &[][..],
            &[
                "--since",
                "2026-11-20T06:00:00Z",
                "--until",
                "2026-11-20T20:00:00Z",
            ][..],
            &["--client-key", "addr", "--top", "3"][..],
        ] {
            let mut with_dataset = vec!["--policy", policy, "--dataset", dataset];
            with_dataset.extend_from_slice(extra);
            let mut with_log = vec!["--policy", policy, "--log-format", "combinedssl", log];
            with_log.extend_from_slice(extra);
            let got = whatif_json(&with_dataset);
            assert!(got["requests"]["total"].as_u64().unwrap_or(0) > 0, "{got}");
            assert_eq!(got, whatif_json(&with_log), "{policy:?} {extra:?}");
        }
    }
    // A real Apache log, exported and judged both ways.
    let real = util::real_dir().join("apache-combinedssl.log");
    let ds = f.dataset.parent().unwrap().join("real-ds");
    export(&ds, "real", &real);
    assert_eq!(
        whatif_json(&[
            "--policy",
            "mozilla-intermediate",
            "--dataset",
            util::path_str(&ds)
        ]),
        whatif_json(&[
            "--policy",
            "mozilla-intermediate",
            "--log-format",
            "combinedssl",
            util::path_str(&real)
        ]),
    );
    // Logs and a dataset at once: refused.
    let o = tlsgap()
        .args([
            "whatif",
            "--policy",
            "mozilla-modern",
            "--dataset",
            dataset,
            log,
        ])
        .output()
        .unwrap();
    assert_code(&o, 2);
}

/// Real Apache lines (curl and openssl s_client against a real server), half of them
/// rewritten to IPv6 clients, exported as two hosts (and as one): `merge` with `--by`
/// and `--count clients` prints what `tls` prints over the same lines.
#[test]
fn real_lines_with_ipv6_clients_merge_like_tls() {
    let tmp = util::tempdir();
    let real = std::fs::read_to_string(util::real_dir().join("apache-combinedssl.log")).unwrap();
    let lines: Vec<String> = real
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let (client, rest) = l.split_once(' ').unwrap();
            if i % 2 == 0 {
                format!("2001:db8::{:x} {rest}\n", i % 5)
            } else {
                format!("{client} {rest}\n")
            }
        })
        .collect();
    assert!(lines.iter().any(|l| l.starts_with("2001:db8::")));
    let (a, b): (Vec<_>, Vec<_>) = lines.iter().enumerate().partition(|(i, _)| i % 3 != 0);
    let text = |v: &[(usize, &String)]| v.iter().map(|(_, l)| l.as_str()).collect::<String>();
    let all = util::write(tmp.path(), "all.log", lines.concat().as_bytes());
    let a_log = util::write(tmp.path(), "a.log", text(&a).as_bytes());
    let b_log = util::write(tmp.path(), "b.log", text(&b).as_bytes());
    let ds = tmp.path().join("ds");
    export(&ds, "a", &a_log);
    export(&ds, "b", &b_log);
    let by_request = ["--by", "hour", "--tz", "Europe/Sofia"];
    let merged = merge_json(&ds, &by_request);
    let tls = tls_json(&all, &by_request);
    assert!(tls["total"].as_u64().unwrap() > 0);
    assert_eq!(comparable(merged), comparable(tls), "{by_request:?}");
    // By client: the log's times are whole seconds and one client's requests share a
    // second, so across two hosts "earliest" is a tie that merge breaks by dataset
    // order (documented), not the log's order. One host keeps the log's order.
    let one = tmp.path().join("one");
    export(&one, "all", &all);
    let by_client = ["--count", "clients", "--by", "hour", "--tz", "UTC"];
    let merged = merge_json(&one, &by_client);
    let tls = tls_json(&all, &by_client);
    assert!(tls["total"].as_u64().unwrap() > 0);
    assert_eq!(comparable(merged), comparable(tls), "{by_client:?}");
}
