//! `tlsgap_agg::gaps::GapAnalyzer::absorb`, what lets `tlsgap gaps -j N` read several
//! traces at once: inputs read in runs, one analyzer per run, then absorbed in order,
//! must give the report (as JSON) of one analyzer reading them one after another, at
//! every cut. The input is text: a line `==> NAME` starts an input named NAME (`-ff`
//! style `trace.PID` names carry a PID hint, others none, as `tlsgap gaps` sees them);
//! lines before the first header form an input of their own. Every gap is reported
//! (minimum 0) so that every interval takes part. Seeded from `seeds/gaps_absorb/`:
//! cuts of the real `-f` and `-ff` captures in `testdata/strace` under such headers.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_agg::gaps::{pid_from_file_name, GapAnalyzer, GapOptions};

/// (name, lines) per input, as the headers split the text.
fn inputs(data: &[u8]) -> Vec<(String, Vec<&[u8]>)> {
    let mut out: Vec<(String, Vec<&[u8]>)> = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        if let Some(name) = line.strip_prefix(b"==> ") {
            out.push((String::from_utf8_lossy(name).into_owned(), Vec::new()));
            continue;
        }
        if out.is_empty() {
            out.push(("-".to_string(), Vec::new()));
        }
        if let Some((_, lines)) = out.last_mut() {
            lines.push(line);
        }
    }
    out
}

fn analyzer(inputs: &[(String, Vec<&[u8]>)]) -> GapAnalyzer {
    let opts = GapOptions {
        min_gap_ns: 0,
        ..GapOptions::default()
    };
    let mut a = GapAnalyzer::new(opts);
    for (name, lines) in inputs {
        let hint = if name == "-" {
            None
        } else {
            pid_from_file_name(name)
        };
        a.begin_input(name, hint);
        for (i, line) in lines.iter().enumerate() {
            a.line(i as u64 + 1, line);
        }
        a.end_input();
    }
    a
}

fuzz_target!(|data: &[u8]| {
    let all = inputs(data);
    let whole = serde_json::to_string(&analyzer(&all).finish()).unwrap();
    for cut in 1..all.len() {
        let (head, tail) = all.split_at(cut);
        let mut a = analyzer(head);
        a.absorb(analyzer(tail));
        let split = serde_json::to_string(&a.finish()).unwrap();
        assert_eq!(split, whole, "cut before input {cut}");
    }
    if all.len() >= 3 {
        // One input per analyzer.
        let mut a = analyzer(&all[..1]);
        for k in 1..all.len() {
            a.absorb(analyzer(&all[k..k + 1]));
        }
        let split = serde_json::to_string(&a.finish()).unwrap();
        assert_eq!(split, whole, "one input per analyzer");
    }
});
