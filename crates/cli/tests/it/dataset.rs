//! `export --partition-by date` datasets and `merge`: the layout, replacement on
//! re-export, `merge` against `tls` and against counts known from the generator, and
//! the DuckDB query of `README.md` run on the dataset.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{self, assert_code, json, pair_counts, stderr, stdout, tlsgap, write};

/// One generated line and what it must count as.
#[derive(Clone)]
pub(crate) struct Line {
    pub(crate) text: String,
    /// `date=YYYY-MM-DD` of the line in its own offset.
    pub(crate) date: String,
    client: String,
    /// `None`: plain HTTP.
    pair: Option<(String, String)>,
}

const PAIRS: &[(&str, &str)] = &[
    ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    ("TLSv1.3", "TLS_AES_256_GCM_SHA384"),
    ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
    ("TLSv1.2", "AES128-SHA"),
    ("TLSv1", "DES-CBC3-SHA"),
    ("-", "-"),
];

/// `n` combinedssl lines, one every 4 s of UTC from 2026-11-20T00:00Z (about 2.8
/// days), each written in one of four offsets, so that the local dates span four
/// days and a day's lines come from several offsets. Chronological in UTC, so that
/// "first TLS request" is the same in log order and in time order.
pub(crate) fn generate(n: usize) -> Vec<Line> {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    };
    let start = chrono::NaiveDate::from_ymd_opt(2026, 11, 20)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    let offsets = [
        (0i64, "+0000"),
        (60, "+0100"),
        (-210, "-0330"),
        (345, "+0545"),
    ];
    (0..n)
        .map(|i| {
            let r = next();
            let (off, off_text) = offsets[(r % 4) as usize];
            let local = start + chrono::Duration::seconds(i as i64 * 4 + off * 60);
            let client = format!("10.7.{}.{}", (r >> 8) % 30, (r >> 16) % 20);
            let (p, c) = PAIRS[((r >> 24) % PAIRS.len() as u64) as usize];
            let text = format!(
                "{client} - - [{} {off_text}] \"GET /p/{i} HTTP/1.1\" 200 {} \"-\" \
                 \"Mozilla/5.0 (dataset test)\" {p} {c}\n",
                local.format("%d/%b/%Y:%H:%M:%S"),
                r % 5000,
            );
            Line {
                text,
                date: format!("date={}", local.format("%Y-%m-%d")),
                client,
                pair: (p != "-").then(|| (p.to_string(), c.to_string())),
            }
        })
        .collect()
}

pub(crate) fn write_lines(dir: &Path, name: &str, lines: &[&Line]) -> PathBuf {
    let bytes: String = lines.iter().map(|l| l.text.as_str()).collect();
    write(dir, name, bytes.as_bytes())
}

/// Expected (pair counts, plain) of requests.
fn requests_of<'a>(
    lines: impl Iterator<Item = &'a Line>,
) -> (BTreeMap<(String, String), u64>, u64) {
    let mut pairs = BTreeMap::new();
    let mut plain = 0;
    for l in lines {
        match &l.pair {
            Some(p) => *pairs.entry(p.clone()).or_default() += 1,
            None => plain += 1,
        }
    }
    (pairs, plain)
}

pub(crate) fn export(dir: &Path, host: &str, log: &Path) -> std::process::Output {
    let o = tlsgap()
        .args(["export", "--format", "parquet", "--partition-by", "date"])
        .args([
            "--host",
            host,
            "--log-format",
            "combinedssl",
            "-j",
            "2",
            "-o",
        ])
        .arg(dir)
        .arg(log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(o.stdout.is_empty(), "nothing on stdout: {}", stdout(&o));
    o
}

pub(crate) fn merge_json(dataset: &Path, extra: &[&str]) -> Value {
    let o = tlsgap()
        .args(["merge", "--format", "json", "-q"])
        .args(extra)
        .arg(dataset)
        .output()
        .unwrap();
    assert_code(&o, 0);
    json(&o)
}

/// A `tls`/`merge` JSON result without what names or counts the inputs.
pub(crate) fn comparable(mut v: Value) -> Value {
    v = util::without_inputs(v);
    if let Some(o) = v.as_object_mut() {
        o.remove("lines");
    }
    v
}

/// `date=.../host=...` directory -> file names in it (hidden ones included: none may
/// be left). Only directories at both levels.
fn layout(dataset: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let names = |dir: &Path| -> Vec<(String, PathBuf, bool)> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let is_dir = e.file_type().unwrap().is_dir();
                (e.file_name().into_string().unwrap(), e.path(), is_dir)
            })
            .collect()
    };
    let mut m = BTreeMap::new();
    for (date, path, is_dir) in names(dataset) {
        assert!(is_dir && date.starts_with("date="), "{path:?}");
        for (host, path, is_dir) in names(&path) {
            assert!(is_dir && host.starts_with("host="), "{path:?}");
            let files = names(&path).into_iter().map(|(n, _, _)| n).collect();
            m.insert(format!("{date}/{host}"), files);
        }
    }
    m
}

fn inode(p: &Path) -> u64 {
    std::fs::metadata(p).unwrap().ino()
}

#[test]
fn partitioned_export_of_two_hosts_merges_like_tls_and_reexport_replaces() {
    let tmp = util::tempdir();
    let dir = tmp.path();
    let all = generate(60_000);
    // Two hosts share the clients; each gets about half the lines (>4 MiB each: more
    // than one engine block).
    let a: Vec<&Line> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 != 0)
        .map(|(_, l)| l)
        .collect();
    let b: Vec<&Line> = all
        .iter()
        .enumerate()
        .filter(|(i, _)| i % 3 == 0)
        .map(|(_, l)| l)
        .collect();
    let all_refs: Vec<&Line> = all.iter().collect();
    let all_log = write_lines(dir, "all.log", &all_refs);
    let a_log = write_lines(dir, "a.log", &a);
    let b_log = write_lines(dir, "b.log", &b);
    let dataset = dir.join("dataset");

    let o = export(&dataset, "a", &a_log);
    assert!(stderr(&o).contains("for host a"), "{}", stderr(&o));
    export(&dataset, "b", &b_log);

    // Layout: one directory per local date, in it one per host that has lines that
    // day, holding its part.
    let dates: BTreeSet<String> = all.iter().map(|l| l.date.clone()).collect();
    assert!(
        dates.len() >= 3,
        "the generator spans several days: {dates:?}"
    );
    let mut want: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (host, lines) in [("a", &a), ("b", &b)] {
        for l in lines.iter() {
            want.entry(format!("{}/host={host}", l.date))
                .or_default()
                .insert(format!("part-{host}-0.parquet"));
        }
    }
    assert_eq!(layout(&dataset), want);

    // merge = tls over the same lines, in both counting modes (the lines are in time
    // order, so "first TLS request" agrees), and = the generator's counts.
    for count in ["requests", "clients"] {
        let merged = merge_json(&dataset, &["--count", count]);
        let (tls_all, o) = util::tls_json(&[
            "--count",
            count,
            "--log-format",
            "combinedssl",
            util::path_str(&all_log),
        ]);
        assert_code(&o, 0);
        assert_eq!(
            comparable(merged.clone()),
            comparable(tls_all),
            "--count {count}"
        );
        if count == "requests" {
            let (tls_ab, _) = util::tls_json(&[
                "--log-format",
                "combinedssl",
                util::path_str(&a_log),
                util::path_str(&b_log),
            ]);
            assert_eq!(comparable(merged.clone()), comparable(tls_ab));
            let (pairs, plain) = requests_of(all.iter());
            assert_eq!(pair_counts(&merged), pairs);
            assert_eq!(merged["plain"].as_u64(), Some(plain));
            assert_eq!(merged["lines"]["total"].as_u64(), Some(all.len() as u64));
            assert_eq!(merged["inputs"].as_array().unwrap().len(), {
                want.values().map(BTreeSet::len).sum::<usize>()
            });
        }
    }

    // Re-exporting host a replaces its parts: same layout, same numbers, new files
    // for a, b's files untouched.
    let before = merge_json(&dataset, &[]);
    let a_inodes: Vec<(PathBuf, u64)> = parts_of(&dataset, "a")
        .into_iter()
        .map(|p| (p.clone(), inode(&p)))
        .collect();
    let b_inodes: Vec<(PathBuf, u64)> = parts_of(&dataset, "b")
        .into_iter()
        .map(|p| (p.clone(), inode(&p)))
        .collect();
    let o = export(&dataset, "a", &a_log);
    assert!(stderr(&o).contains("replaced"), "{}", stderr(&o));
    assert_eq!(
        layout(&dataset),
        want,
        "no duplicate parts, no temporary files left"
    );
    assert_eq!(
        merge_json(&dataset, &[]),
        before,
        "re-export must not duplicate rows"
    );
    for (p, ino) in &a_inodes {
        assert_ne!(inode(p), *ino, "{} was rewritten", p.display());
    }
    for (p, ino) in &b_inodes {
        assert_eq!(inode(p), *ino, "{} belongs to another host", p.display());
    }

    // Re-exporting one day of host a with fewer lines replaces only that day of a.
    let day = dates.iter().nth(1).unwrap().clone();
    let a_day_subset: Vec<&Line> = a
        .iter()
        .copied()
        .filter(|l| l.date == day)
        .step_by(2)
        .collect();
    assert!(!a_day_subset.is_empty());
    let subset_log = write_lines(dir, "a-day.log", &a_day_subset);
    export(&dataset, "a", &subset_log);
    assert_eq!(layout(&dataset), want);
    let now: Vec<&Line> = a
        .iter()
        .copied()
        .filter(|l| l.date != day)
        .chain(a_day_subset.iter().copied())
        .chain(b.iter().copied())
        .collect();
    let merged = merge_json(&dataset, &[]);
    let (pairs, plain) = requests_of(now.iter().copied());
    assert_eq!(pair_counts(&merged), pairs);
    assert_eq!(merged["plain"].as_u64(), Some(plain));
    assert_eq!(merged["lines"]["total"].as_u64(), Some(now.len() as u64));

    // --since-date/--until-date select partitions by name.
    let only = day.strip_prefix("date=").unwrap();
    let merged = merge_json(&dataset, &["--since-date", only, "--until-date", only]);
    let (pairs, plain) = requests_of(now.iter().copied().filter(|l| l.date == day));
    assert_eq!(pair_counts(&merged), pairs);
    assert_eq!(merged["plain"].as_u64(), Some(plain));

    // A glob naming some date directories reads just those.
    let first = dates.iter().next().unwrap();
    let pattern = format!("{}/{first}*", dataset.display());
    let merged = merge_json(Path::new(&pattern), &[]);
    let (pairs, _) = requests_of(now.iter().copied().filter(|l| &l.date == first));
    assert_eq!(pair_counts(&merged), pairs);

    // The clients of the final state, by earliest request.
    let merged = merge_json(&dataset, &["--count", "clients"]);
    let mut first_tls: BTreeMap<&str, Option<&(String, String)>> = BTreeMap::new();
    let mut chrono_order = now.clone();
    chrono_order.sort_by_key(|l| {
        l.text
            .split("/p/")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    });
    for l in &chrono_order {
        let slot = first_tls.entry(l.client.as_str()).or_insert(None);
        if slot.is_none() {
            *slot = l.pair.as_ref();
        }
    }
    let mut pairs: BTreeMap<(String, String), u64> = BTreeMap::new();
    for p in first_tls.values().flatten() {
        *pairs.entry((*p).clone()).or_default() += 1;
    }
    let plain_clients = first_tls.values().filter(|p| p.is_none()).count() as u64;
    assert_eq!(pair_counts(&merged), pairs, "--count clients");
    assert_eq!(merged["plain"].as_u64(), Some(plain_clients));

    duckdb_matches_merge(&dataset, &now);
}

fn parts_of(dataset: &Path, host: &str) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for d in std::fs::read_dir(dataset).unwrap() {
        let p = d
            .unwrap()
            .path()
            .join(format!("host={host}"))
            .join(format!("part-{host}-0.parquet"));
        if p.exists() {
            v.push(p);
        }
    }
    v.sort();
    assert!(!v.is_empty());
    v
}

fn duckdb_ready(test: &str) -> bool {
    util::python_ready(test, &["duckdb"], "duckdb", "the DuckDB query of README.md")
}

/// The first ```sql block of README.md over the example dataset, on `dataset` instead
/// of the example path.
fn documented_query(dataset: &Path) -> String {
    let doc = std::fs::read_to_string(util::repo_root().join("README.md")).unwrap();
    let sql = doc
        .split("```sql\n")
        .skip(1)
        .map(|block| &block[..block.find("```").unwrap()])
        .find(|sql| sql.contains("/srv/tlsgap/dataset/"))
        .expect("README.md has a ```sql block over /srv/tlsgap/dataset/");
    sql.replace("/srv/tlsgap/dataset", &dataset.display().to_string())
}

fn duckdb_matches_merge(dataset: &Path, lines: &[&Line]) {
    let test = "partitioned_export_of_two_hosts_merges_like_tls_and_reexport_replaces (DuckDB)";
    if !duckdb_ready(test) {
        return;
    }
    let sql = documented_query(dataset);
    let script = r#"
import duckdb, json, sys
con = duckdb.connect()
rows = con.execute(sys.argv[1]).fetchall()
print(json.dumps([[p, c, n] for p, c, n in rows]))
"#;
    let o = util::run_tool("python3", &["-c", script, &sql]);
    let rows: Vec<(String, String, u64)> = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("DuckDB output ({e}): {}", stdout(&o)));
    let got: BTreeMap<(String, String), u64> =
        rows.into_iter().map(|(p, c, n)| ((p, c), n)).collect();
    let (want, _) = requests_of(lines.iter().copied());
    assert_eq!(
        got, want,
        "DuckDB over the dataset, query of README.md:\n{sql}"
    );
    let merged = merge_json(dataset, &[]);
    assert_eq!(pair_counts(&merged), got, "merge and DuckDB agree");
}

#[test]
fn partition_by_needs_parquet_a_directory_and_a_time() {
    let tmp = util::tempdir();
    let log = write(
        tmp.path(),
        "x.log",
        util::line("192.0.2.1", "TLSv1.3", "TLS_AES_128_GCM_SHA256").as_bytes(),
    );
    let out = tmp.path().join("ds");
    let o = tlsgap()
        .args([
            "export",
            "--format",
            "ndjson",
            "--partition-by",
            "date",
            "-o",
        ])
        .arg(&out)
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("--format parquet"), "{}", stderr(&o));
    let o = tlsgap()
        .args(["export", "--format", "parquet", "--partition-by", "date"])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("--output"), "{}", stderr(&o));
    // A format without a request time has no date to partition by.
    let o = tlsgap()
        .args(["export", "--format", "parquet", "--partition-by", "date"])
        .args(["--log-format", "%h %{SSL_PROTOCOL}x %{SSL_CIPHER}x", "-o"])
        .arg(&out)
        .arg(write(
            tmp.path(),
            "nt.log",
            b"192.0.2.1 TLSv1.3 TLS_AES_128_GCM_SHA256\n",
        ))
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("request time"), "{}", stderr(&o));
    assert!(!out.exists(), "nothing written on a usage error");
}

#[test]
fn host_names_are_sanitized_into_part_names() {
    let tmp = util::tempdir();
    let log = write(
        tmp.path(),
        "x.log",
        util::line("192.0.2.1", "TLSv1.3", "TLS_AES_128_GCM_SHA256").as_bytes(),
    );
    let out = tmp.path().join("ds");
    let o = tlsgap()
        .args([
            "export",
            "-q",
            "--format",
            "parquet",
            "--partition-by",
            "date",
        ])
        .args(["--host", "web 1/é", "-o"])
        .arg(&out)
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let l = layout(&out);
    assert_eq!(
        l,
        BTreeMap::from([(
            "date=2026-11-21/host=web_1__".to_string(),
            BTreeSet::from(["part-web_1__-0.parquet".to_string()])
        )])
    );
}

#[test]
fn merge_reports_a_file_without_tls_columns_and_goes_on() {
    let tmp = util::tempdir();
    let ds = tmp.path().join("ds");
    let good = write(
        tmp.path(),
        "g.log",
        util::line("192.0.2.1", "TLSv1.3", "TLS_AES_128_GCM_SHA256").as_bytes(),
    );
    export(&ds, "a", &good);
    // `combined` has no TLS fields: its parts cannot be counted.
    let plain = write(
        tmp.path(),
        "p.log",
        util::line("192.0.2.2", "-", "-")
            .trim_end_matches(" - -")
            .as_bytes(),
    );
    let o = tlsgap()
        .args([
            "export",
            "-q",
            "--format",
            "parquet",
            "--partition-by",
            "date",
        ])
        .args(["--host", "nossl", "--log-format", "combined", "-o"])
        .arg(&ds)
        .arg(&plain)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(ds
        .join("date=2026-11-21/host=nossl/part-nossl-0.parquet")
        .is_file());
    let o = tlsgap()
        .args(["merge", "--format", "json", "-q"])
        .arg(&ds)
        .output()
        .unwrap();
    assert_code(&o, 1);
    assert!(
        stderr(&o).contains("part-nossl-0.parquet") && stderr(&o).contains("no tls_protocol"),
        "{}",
        stderr(&o)
    );
    let v = json(&o);
    assert_eq!(v["total"].as_u64(), Some(1));
    let o = tlsgap()
        .args(["merge"])
        .arg(tmp.path().join("missing"))
        .output()
        .unwrap();
    assert_code(&o, 2);
}

/// One meaning of "client" everywhere: with each `--client-key`, `tls --count clients`,
/// `whatif` and `merge --count clients` over the exported dataset count the same
/// clients; the default is `addr+ua` on all three and says so; `addr` counts fewer
/// (several User-Agents behind one address).
#[test]
fn client_key_means_the_same_on_every_command() {
    let dir = util::tempdir();
    let sample = util::repo_root().join("testdata/sample/combinedssl.log.gz");
    let ds = dir.path().join("ds");
    let o = export(&ds, "web1", &sample);
    assert_code(&o, 0);
    let mut totals = Vec::new();
    for key in [None, Some("addr+ua"), Some("addr")] {
        let extra: Vec<&str> = key.map(|k| vec!["--client-key", k]).unwrap_or_default();
        let o = tlsgap()
            .args(["tls", "-q", "--format", "json", "--count", "clients"])
            .args(&extra)
            .arg(&sample)
            .output()
            .unwrap();
        let tls = json(&o);
        let o = tlsgap()
            .args([
                "whatif",
                "-q",
                "--format",
                "json",
                "--policy",
                "mozilla-intermediate",
            ])
            .args(&extra)
            .arg(&sample)
            .output()
            .unwrap();
        let whatif = json(&o);
        let o = tlsgap()
            .args(["merge", "--format", "json", "--count", "clients"])
            .args(&extra)
            .arg(&ds)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let merge = json(&o);
        let want = key.unwrap_or("addr+ua");
        assert_eq!(tls["client_key"], want);
        assert_eq!(whatif["client_key"], want);
        assert_eq!(merge["client_key"], want);
        assert_eq!(tls["total"], whatif["clients"]["total"], "{key:?}");
        assert_eq!(tls["total"], merge["total"], "{key:?}");
        assert_eq!(tls["plain"], merge["plain"], "{key:?}");
        totals.push(tls["total"].as_u64().unwrap());
    }
    assert_eq!(totals[0], totals[1]);
    assert!(totals[2] < totals[1], "{totals:?}");
}

/// `tls --format json` of `log` with `extra`, comparable with `merge`'s.
fn tls_of(log: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--log-format", "combinedssl"];
    args.extend_from_slice(extra);
    args.push(util::path_str(log));
    let (v, o) = util::tls_json(&args);
    assert_code(&o, 0);
    comparable(v)
}

/// `export --partition-by date` of `log` into `dataset` as host `web1`, with `extra`;
/// its standard error.
fn export_with(dataset: &Path, log: &Path, extra: &[&str]) -> String {
    let o = tlsgap()
        .args(["export", "--format", "parquet", "--partition-by", "date"])
        .args(["--host", "web1", "--log-format", "combinedssl", "-j", "2"])
        .args(extra)
        .arg("-o")
        .arg(dataset)
        .arg(log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    stderr(&o)
}

/// A run stands for the lines it read, and only those (audit of 2026-11-28: the
/// README's nightly recipe, `--since yesterday --until today --tz ZONE`, over a log
/// written in other offsets than ZONE's, covers parts of two dated days, and each
/// night replaced the day before's part with the two hours of it in its window: 120
/// rows lost a day; an export continuing a `--state` replaced a day's part with the
/// lines new since the last run). Both now keep the rest of the host's rows of those
/// days, so that after every night `merge` says what `tls` says of the whole log.
#[test]
fn windowed_and_state_exports_keep_the_rows_of_their_days_they_did_not_read() {
    let tmp = util::tempdir();
    let dir = tmp.path();
    // 30 000 lines, 4 s apart from 2026-11-20T00:00Z, in four offsets: dated
    // 2026-11-19 to 2026-11-21 in the log's own offsets.
    let all = generate(30_000);
    let refs: Vec<&Line> = all.iter().collect();
    let log = write_lines(dir, "access.log", &refs);
    let whole = tls_of(&log, &[]);

    // Nightly, Sofia time (UTC+2 in November): each window takes parts of two or
    // three dated days.
    let dataset = dir.join("nightly");
    let nights = [("2026-11-20", "2026-11-21"), ("2026-11-21", "2026-11-22")];
    for (i, (since, until)) in nights.iter().enumerate() {
        let err = export_with(
            &dataset,
            &log,
            &["--since", since, "--until", until, "--tz", "Europe/Sofia"],
        );
        // What a night's window covers: merge with the same window = tls with it.
        let window = ["--since", since, "--until", until, "--tz", "Europe/Sofia"];
        assert_eq!(
            comparable(merge_json(&dataset, &window)),
            tls_of(&log, &window),
            "night {since}"
        );
        if i > 0 {
            assert!(
                err.contains("outside this run's time window"),
                "the note says rows were kept: {err}"
            );
        }
    }
    assert_eq!(comparable(merge_json(&dataset, &[])), whole);
    // Running a night again changes nothing.
    let window = [
        "--since",
        "2026-11-20",
        "--until",
        "2026-11-21",
        "--tz",
        "Europe/Sofia",
    ];
    export_with(&dataset, &log, &window);
    assert_eq!(comparable(merge_json(&dataset, &[])), whole);
    let rows = |d: &Path| -> u64 {
        merge_json(d, &[])["lines"]["total"]
            .as_u64()
            .unwrap_or_default()
    };
    assert_eq!(rows(&dataset), all.len() as u64, "no row twice, none lost");
    // The dataset named four ways at once (a symlink, a path through `..`, a day
    // directory inside it): each file is read once, and `merge` says so (audit of
    // 2026-11-28: such files were counted twice).
    let link = dir.join("link");
    std::os::unix::fs::symlink(&dataset, &link).unwrap();
    let o = tlsgap()
        .args(["merge", "--format", "json"])
        .arg(&dataset)
        .arg(&link)
        .arg(dir.join("nightly/../nightly"))
        .arg(dataset.join("date=2026-11-20"))
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(comparable(json(&o)), whole);
    assert!(
        stderr(&o).contains("each file is read once"),
        "{}",
        stderr(&o)
    );

    // The same log growing in thirds, exported under a state after each.
    let growing = dir.join("growing.log");
    let state = dir.join("export.state");
    let dataset = dir.join("incremental");
    let third = all.len() / 3;
    for (n, chunk) in all.chunks(third).enumerate() {
        let text: String = chunk.iter().map(|l| l.text.as_str()).collect();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&growing)
            .unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
        drop(f);
        let err = export_with(&dataset, &growing, &["--state", util::path_str(&state)]);
        if n > 0 {
            assert!(
                err.contains("(--state)"),
                "the note says rows were kept: {err}"
            );
        }
        let upto: Vec<&Line> = all.iter().take((n + 1) * third).collect();
        assert_eq!(rows(&dataset), upto.len() as u64, "after part {n}");
    }
    assert_eq!(comparable(merge_json(&dataset, &[])), whole);
    // Nothing new: nothing changes.
    export_with(&dataset, &growing, &["--state", util::path_str(&state)]);
    assert_eq!(comparable(merge_json(&dataset, &[])), whole);
}

/// `tls --count clients` counts a client under its earliest TLS request by the logged
/// time, as `merge` does, whatever order the files and lines come in (audit of
/// 2026-11-28: `access.log*` lists the newest file first, and a client that moved
/// from TLSv1 to TLSv1.3 was counted under TLSv1.3; Apache writes a slow request
/// after a later fast one).
#[test]
fn clients_count_under_their_earliest_request_in_any_file_and_line_order() {
    let tmp = util::tempdir();
    let dir = tmp.path();
    let line = |ip: &str, when: &str, ua: &str, p: &str, c: &str| {
        format!("{ip} - - [{when} +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"{ua}\" {p} {c}\n")
    };
    let old = [
        line(
            "192.0.2.7",
            "20/Nov/2026:10:00:00",
            "OldClient/1.0",
            "TLSv1",
            "DES-CBC3-SHA",
        ),
        line(
            "192.0.2.8",
            "20/Nov/2026:10:00:09",
            "Other/2",
            "TLSv1.3",
            "TLS_AES_128_GCM_SHA256",
        ),
    ]
    .concat();
    // The current log: the same client upgraded; a slow TLSv1.2 request of another
    // client, begun at 10:00:01, written after its fast TLSv1.3 one of 10:00:05.
    let new = [
        line(
            "192.0.2.7",
            "21/Nov/2026:09:00:00",
            "OldClient/1.0",
            "TLSv1.3",
            "TLS_AES_256_GCM_SHA384",
        ),
        line(
            "2001:db8::9",
            "21/Nov/2026:10:00:05",
            "Slow/1",
            "TLSv1.3",
            "TLS_AES_128_GCM_SHA256",
        ),
        line(
            "2001:db8::9",
            "21/Nov/2026:10:00:01",
            "Slow/1",
            "TLSv1.2",
            "ECDHE-RSA-AES128-GCM-SHA256",
        ),
    ]
    .concat();
    let old_log = write(dir, "access.log.1", old.as_bytes());
    let new_log = write(dir, "access.log", new.as_bytes());
    let clients = |files: [&Path; 2]| -> Value {
        let mut args = vec!["--count", "clients", "--log-format", "combinedssl"];
        args.extend(files.iter().map(|f| util::path_str(f)));
        let (v, o) = util::tls_json(&args);
        assert_code(&o, 0);
        comparable(v)
    };
    let newest_first = clients([&new_log, &old_log]);
    assert_eq!(newest_first, clients([&old_log, &new_log]));
    let mut counts = pair_counts(&newest_first);
    counts.retain(|_, n| *n > 0);
    let want: BTreeMap<(String, String), u64> = [
        (("TLSv1", "DES-CBC3-SHA"), 1),
        (("TLSv1.3", "TLS_AES_128_GCM_SHA256"), 1),
        (("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), 1),
    ]
    .into_iter()
    .map(|((p, c), n)| ((p.to_string(), c.to_string()), n))
    .collect();
    assert_eq!(counts, want);
    // And `merge` over the export of both says the same.
    let dataset = dir.join("ds");
    export(&dataset, "web1", &new_log);
    export(&dataset, "web2", &old_log);
    assert_eq!(
        comparable(merge_json(&dataset, &["--count", "clients"])),
        newest_first
    );
}
