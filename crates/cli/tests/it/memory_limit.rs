//! `--memory-limit`: distinct clients are exact up to the limit, estimated with
//! HyperLogLog beyond it, and the output says which figures are estimates.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{self, assert_code, json, line, stderr, stdout, tempdir, tlsgap};

const PAIRS: [(&str, &str); 3] = [
    ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
    ("TLSv1", "ECDHE-RSA-AES128-SHA"),
];

/// `n` lines, each from a new address (so `n` distinct clients), the pairs in turn.
fn unique_clients(dir: &Path, n: u32) -> PathBuf {
    let path = dir.join(format!("unique-{n}.log"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in 0..n {
        let (p, c) = PAIRS[i as usize % PAIRS.len()];
        let addr = format!("10.{}.{}.{}", i >> 16, (i >> 8) & 0xff, i & 0xff);
        writeln!(out, "{}", line(&addr, p, c)).unwrap();
    }
    out.flush().unwrap();
    path
}

fn tls_clients(log: &Path, extra: &[&str]) -> serde_json::Value {
    let o = tlsgap()
        .args(["tls", "--count", "clients", "--format", "json", "-q"])
        .args(["--log-format", "combinedssl"])
        .args(extra)
        .arg(log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    json(&o)
}

#[test]
fn clients_beyond_the_limit_are_estimated_and_said_so() {
    let dir = tempdir();
    let n = 300_000u64;
    let log = unique_clients(dir.path(), n as u32);

    let exact = tls_clients(&log, &[]);
    assert_eq!(exact["total"], n, "{exact}");
    assert!(exact.get("estimate").is_none(), "{exact}");

    let limited = tls_clients(&log, &["--memory-limit", "4M"]);
    let e = &limited["estimate"];
    let exact_clients = e["exact_clients"].as_u64().unwrap();
    let estimated = e["estimated_clients"].as_u64().unwrap();
    assert_eq!(e["memory_limit_bytes"], 4 << 20, "{e}");
    assert!((0.008..0.0082).contains(&e["relative_standard_error"].as_f64().unwrap()));
    // 4 MiB of 110-byte entries (30 bytes of key, 80 of overhead): 38,130 exact.
    assert!((34_000..42_000).contains(&exact_clients), "{e}");
    let total = limited["total"].as_u64().unwrap();
    for got in [total, exact_clients + estimated] {
        let err = (got as f64 - n as f64).abs() / n as f64;
        assert!(err < 0.03, "{got} of {n}: {limited}");
    }
    // Every pair still shows, each near a third.
    for p in limited["protocols"].as_array().unwrap() {
        let share = p["share"].as_f64().unwrap();
        assert!((share - 1.0 / 3.0).abs() < 0.03, "{p}");
    }
    // The same run again, and with another -j: the same figures.
    assert_eq!(tls_clients(&log, &["--memory-limit", "4M", "-j1"]), limited);
    assert_eq!(tls_clients(&log, &["--memory-limit", "4M", "-j2"]), limited);

    // The table says it.
    let o = tlsgap()
        .args(["tls", "--count", "clients", "-q", "--memory-limit", "4M"])
        .args(["--log-format", "combinedssl"])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("note: clients: estimated beyond the memory limit (4 MiB):"),
        "{text}"
    );
    assert!(
        text.contains("(HyperLogLog, ±0.81% standard error)"),
        "{text}"
    );
    // CSV has no room for it: standard error says it (a warning: even with -q).
    let o = tlsgap()
        .args(["tls", "--count", "clients", "-q", "--memory-limit", "4M"])
        .args(["--format", "csv", "--log-format", "combinedssl"])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let err = crate::util::stderr(&o);
    assert!(
        err.contains("clients: estimated beyond the memory limit (4 MiB):"),
        "{err}"
    );

    // A bad size is refused.
    let o = tlsgap()
        .args(["tls", "--memory-limit", "lots"])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(stderr(&o).contains("not a size"), "{}", stderr(&o));
}

#[test]
fn report_and_whatif_say_their_clients_are_estimated() {
    let dir = tempdir();
    let log = unique_clients(dir.path(), 30_000);
    let o = tlsgap()
        .args(["report", "--text", "-q", "--memory-limit", "1M"])
        .args(["--log-format", "combinedssl"])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        text.contains("note: clients: estimated beyond the memory limit (1 MiB)"),
        "{text}"
    );

    let whatif = |extra: &[&str]| {
        let o = tlsgap()
            .args([
                "whatif",
                "--policy",
                "mozilla-intermediate",
                "--format",
                "json",
            ])
            .args(["-q", "--log-format", "combinedssl"])
            .args(extra)
            .arg(&log)
            .output()
            .unwrap();
        assert_code(&o, 0);
        json(&o)
    };
    let exact = whatif(&[]);
    assert!(exact.get("estimate").is_none());
    let limited = whatif(&["--memory-limit", "1M"]);
    assert!(limited["estimate"]["estimated_clients"].as_u64().unwrap() > 20_000);
    // Requests stay exact; clients and the refused third are close.
    assert_eq!(limited["requests"], exact["requests"]);
    for field in ["total", "refused"] {
        let (got, want) = (
            limited["clients"][field].as_u64().unwrap() as f64,
            exact["clients"][field].as_u64().unwrap() as f64,
        );
        assert!((got - want).abs() / want < 0.03, "{field}: {got} vs {want}");
    }
}

/// Peak RSS (kB) of `tlsgap args...` under `/usr/bin/time -v`.
fn peak_kb(time: &Path, args: &[&str], log: &Path) -> (u64, serde_json::Value) {
    let o = Command::new(time)
        .arg("-v")
        .arg(util::tlsgap_path())
        .args(args)
        .arg(log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let err = stderr(&o);
    let peak = err
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {err}"));
    (peak, serde_json::from_str(&stdout(&o)).unwrap())
}

/// A million distinct clients: the exact run needs about 150 MB (debug binary, -j2),
/// with `--memory-limit 16M` about 75 MB, and 2M clients the same within a few MB
/// (measured: exact 275 MB, 32M limit 89 MB). Both runs take ~10 s each of the debug
/// binary on 2 cores, so the test stays at a million.
#[test]
fn a_million_clients_stay_within_the_limit() {
    let Some(time) = util::tool_ready(
        "a_million_clients_stay_within_the_limit",
        "time",
        "time",
        "TLSGAP_SKIP_TIME_TESTS",
    ) else {
        return;
    };
    let dir = tempdir();
    let n = 1_000_000u64;
    let log = unique_clients(dir.path(), n as u32);
    let args = [
        "tls",
        "--count",
        "clients",
        "--format",
        "json",
        "-q",
        "-j2",
        "--log-format",
        "combinedssl",
    ];
    let (exact_kb, exact) = peak_kb(&time, &args, &log);
    let limited_args: Vec<&str> = args
        .iter()
        .copied()
        .chain(["--memory-limit", "16M"])
        .collect();
    let (limited_kb, limited) = peak_kb(&time, &limited_args, &log);
    assert_eq!(exact["total"], n);
    assert!(exact.get("estimate").is_none());
    let total = limited["total"].as_u64().unwrap() as f64;
    assert!((total - n as f64).abs() / (n as f64) < 0.03, "{limited}");
    // The bound: 16 MiB of accounted entries (key + 64 bytes each, the table's growth
    // slack included) are at most ~24 MiB while a resize holds both tables; the rest
    // does not grow with the clients: the process itself (~15 MB of a debug binary),
    // the 4 MiB blocks and per-block maps in flight (-j2: a handful of blocks and maps
    // of ~40,000 clients, ~4 MiB each) and the sketches (4 of 16 KiB), ~50 MB measured
    // with any limit. 120 MB leaves room for allocator slack and is below the exact
    // run's ~150 MB.
    assert!(
        limited_kb < 120 * 1024,
        "peak {limited_kb} kB with --memory-limit 16M (exact run: {exact_kb} kB)"
    );
    assert!(
        limited_kb < exact_kb,
        "peak {limited_kb} kB with the limit, {exact_kb} kB without"
    );
}

/// `merge --count clients` over an exported dataset is bounded the same way.
#[test]
fn merge_over_a_dataset_estimates_beyond_the_limit() {
    let dir = tempdir();
    let n = 200_000u64;
    let log = unique_clients(dir.path(), n as u32);
    let parquet = dir.path().join("rows.parquet");
    let o = tlsgap()
        .args([
            "export",
            "-q",
            "--format",
            "parquet",
            "--log-format",
            "combinedssl",
            "-o",
        ])
        .arg(&parquet)
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let merge = |extra: &[&str]| {
        let o = tlsgap()
            .args(["merge", "--count", "clients", "--format", "json"])
            .args(extra)
            .arg(&parquet)
            .output()
            .unwrap();
        assert_code(&o, 0);
        (json(&o), stderr(&o))
    };
    let (exact, _) = merge(&[]);
    assert_eq!(exact["total"], n, "{exact}");
    assert!(exact.get("estimate").is_none());
    let (limited, err) = merge(&["--memory-limit", "4M"]);
    let e = &limited["estimate"];
    let exact_clients = e["exact_clients"].as_u64().unwrap();
    assert!(exact_clients > 10_000 && exact_clients < n, "{e}");
    let total = limited["total"].as_u64().unwrap();
    let off = (total as f64 - n as f64).abs() / n as f64;
    assert!(off < 0.03, "{total} of {n}: {limited}");
    assert!(
        err.contains("clients: estimated beyond the memory limit (4 MiB)"),
        "{err}"
    );
}
