//! The strace gap path, in MB/s: every line of a trace through
//! [`GapAnalyzer::line`] (parse, per-thread state, unfinished/resumed pairing, fd
//! tables, the gap test and its context) and the report at the end, as `tlsgap gaps`
//! does after reading.
//!
//! Inputs: the real traces in `testdata/strace/real` (Apache prefork workers with
//! `-ff` and `-f`, a Python program with threads and a spinner, under `-t`, `-tt`,
//! `-ttt`, `-T`, `-y`; captured by `scripts/`, see that directory's README), each file one
//! input as `tlsgap gaps FILE...` reads them. `gaps/real` is the whole set; `gaps/real-x8`
//! is the set eight times over (longer runs per thread table, the same gaps).
//!
//! Run: `cargo bench -p tlsgap-benches --bench gaps -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tlsgap_agg::gaps::{pid_from_file_name, GapAnalyzer, GapOptions};

/// The trace files of `testdata/strace/real`, in name order, with their bytes.
fn real_traces() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/strace/real");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut dirs = vec![root];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("testdata/strace/real") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with("trace") || n.ends_with(".trace") || n.contains(".trace.")
            }) {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("trace file");
            (p.display().to_string(), bytes)
        })
        .collect()
}

/// The gap analysis over `inputs`, `times` over; returns the number of gaps found.
fn analyse(inputs: &[(String, Vec<u8>)], times: usize) -> usize {
    let mut a = GapAnalyzer::new(GapOptions::default());
    for _ in 0..times {
        for (name, bytes) in inputs {
            a.begin_input(name, pid_from_file_name(name));
            for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
                if !line.is_empty() {
                    a.line(i as u64 + 1, line);
                }
            }
            a.end_input();
        }
    }
    a.finish().gaps.len()
}

fn benches(c: &mut Criterion) {
    let inputs = real_traces();
    let bytes: usize = inputs.iter().map(|(_, b)| b.len()).sum();
    assert!(
        inputs.len() >= 8,
        "testdata/strace/real has {} traces",
        inputs.len()
    );
    assert!(
        analyse(&inputs, 1) > 0,
        "the real traces have gaps of 100 ms and more"
    );
    let mut g = c.benchmark_group("gaps");
    g.sample_size(30);
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("real", |b| {
        b.iter(|| black_box(analyse(black_box(&inputs), 1)))
    });
    g.throughput(Throughput::Bytes(8 * bytes as u64));
    g.bench_function("real-x8", |b| {
        b.iter(|| black_box(analyse(black_box(&inputs), 8)))
    });
    g.finish();
    eprintln!(
        "gaps bench: {} trace files, {:.2} MB",
        inputs.len(),
        bytes as f64 / 1e6
    );
}

criterion_group!(gap_benches, benches);
criterion_main!(gap_benches);
