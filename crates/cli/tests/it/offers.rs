//! `tlsgap whatif` from what the clients offered, against real nginx runs.
//!
//! `scripts/tls-offers.py` runs 34 real clients with distinct offers (curl, openssl
//! s_client, Python's ssl, headless Chromium) against a real nginx that logs
//! `$ssl_ciphers`, `$ssl_curves` and `$ssl_curve`, every request to its own path. Once
//! with a permissive policy: that log is what `whatif --policy P` predicts from. Then
//! once per strict policy P: that run is the truth. For every TLS request of the
//! permissive log, `whatif` must say `fails` exactly when the strict nginx refused the
//! handshake, and for `works` the protocol, suite and group the strict nginx logged.
//!
//! `whatif` reports the exact answer as totals (`exact` in its JSON), so the answer
//! for one request is `whatif` over that request's line alone; the totals over the
//! whole log must then be the sums of those.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::Value;

use crate::util::{self, assert_code, json};

const TEST: &str = "whatif_exact_agrees_with_real_nginx";

/// The strict policies, as nginx directive text: the server block of the truth run
/// and `--policy` of `whatif`, byte for byte. `/path/to/dhparam` is replaced by a real
/// file in the server; `whatif` only needs to know that there is one.
const POLICIES: &[(&str, &str)] = &[
    // Server preference with a chosen order (TLS 1.2 and, through Ciphersuites, TLS
    // 1.3), DHE with parameters, a CCM suite for TLS 1.3, groups left at `auto`.
    (
        "order-dhe-ccm",
        "ssl_protocols TLSv1.2 TLSv1.3;\n\
         ssl_ciphers ECDHE-RSA-CHACHA20-POLY1305:DHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384;\n\
         ssl_prefer_server_ciphers on;\n\
         ssl_dhparam /path/to/dhparam;\n\
         ssl_conf_command Ciphersuites TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256:TLS_AES_128_GCM_SHA256;\n",
    ),
    // The issue's example: one curve, for TLS 1.2 and 1.3 alike.
    (
        "ecdhe-aesgcm-p384",
        "ssl_protocols TLSv1.2 TLSv1.3;\n\
         ssl_ciphers ECDHE+AESGCM;\n\
         ssl_prefer_server_ciphers on;\n\
         ssl_ecdh_curve secp384r1;\n",
    ),
    // TLS 1.3 only, three groups in the server's order, client preference: a key share
    // the server lacks gets a HelloRetryRequest for a group in the server's order.
    (
        "tls13-only-groups",
        "ssl_protocols TLSv1.3;\n\
         ssl_ecdh_curve prime256v1:secp521r1:X25519;\n",
    ),
    // TLS 1.0-1.2 enabled but security level 2 (no @SECLEVEL=0), no ssl_dhparam, a
    // brainpool curve, TLS 1.2 the highest version (TLS_FALLBACK_SCSV passes).
    (
        "legacy-seclevel2",
        "ssl_protocols TLSv1 TLSv1.1 TLSv1.2;\n\
         ssl_ciphers HIGH:!aNULL:!kRSA;\n\
         ssl_ecdh_curve X25519:brainpoolP256r1:secp521r1;\n",
    ),
];

/// One access-log line of the script's `offers` format.
#[derive(Debug, Clone)]
struct Logged {
    /// 1-based.
    line: usize,
    text: String,
    /// `/c/<request id>`.
    path: String,
    protocol: String,
    cipher: String,
    ciphers: String,
    curves: String,
    /// `$ssl_curve`; `-` when no named group was used.
    curve: String,
    reused: String,
}

/// The lines of an `offers` log: `... "GET /c/id HTTP/1.1" ... "UA" $ssl_protocol
/// $ssl_cipher "$ssl_ciphers" "$ssl_curves" $ssl_curve $ssl_session_reused
/// $ssl_server_name`; the last seven fields hold no space.
fn parse_offers_log(path: &Path) -> Vec<Logged> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .enumerate()
        .map(|(i, l)| {
            let req = l
                .split_once("\"GET ")
                .and_then(|(_, r)| r.split_once(" HTTP/1.1\""))
                .unwrap_or_else(|| panic!("{}:{}: no request: {l}", path.display(), i + 1))
                .0;
            let tail: Vec<&str> = l.rsplitn(8, ' ').collect();
            assert_eq!(tail.len(), 8, "{}:{}: {l}", path.display(), i + 1);
            let unq = |s: &str| s.trim_matches('"').to_string();
            Logged {
                line: i + 1,
                text: l.to_string(),
                path: req.to_string(),
                protocol: tail[6].to_string(),
                cipher: tail[5].to_string(),
                ciphers: unq(tail[4]),
                curves: unq(tail[3]),
                curve: tail[2].to_string(),
                reused: tail[1].to_string(),
            }
        })
        .collect()
}

/// `scripts/tls-offers.py ARGS --chromium yes --out OUT`; its plan.json.
fn run_offers(args: &[&OsStr], out: &Path) -> Value {
    let mut a: Vec<&OsStr> = args.to_vec();
    a.extend(["--chromium", "yes", "--out"].map(OsStr::new));
    a.push(out.as_os_str());
    util::run_script("tls-offers.py", &a);
    serde_json::from_slice(&std::fs::read(out.join("plan.json")).unwrap()).unwrap()
}

/// `whatif --cert rsa --format json` (the script's server has one RSA certificate).
fn whatif_json(policy: &str, format: &str, log: &Path) -> Value {
    let o = util::tlsgap()
        .args(["whatif", "-q", "--policy", policy, "--log-format", format])
        .args(["--cert", "rsa", "--format", "json"])
        .arg(log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    json(&o)
}

/// What `whatif` says about one request, or what nginx did with it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Answer {
    /// Protocol, suite, group (`None`: no named group, or none that whatif names).
    Works(String, String, Option<String>),
    /// whatif's reason; for nginx, the error.log lines of the client.
    Fails(String),
}

impl std::fmt::Display for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Answer::Works(p, c, g) => {
                write!(f, "works {p} {c} group {}", g.as_deref().unwrap_or("-"))
            }
            Answer::Fails(r) => write!(f, "fails {r}"),
        }
    }
}

/// Histograms of the exact answers: (protocol, suite, group) and reasons.
type Tallies = (
    BTreeMap<(String, String, Option<String>), u64>,
    BTreeMap<String, u64>,
);

fn tallies_of_exact(x: &Value) -> Tallies {
    let mut t = Tallies::default();
    for n in x["negotiated"].as_array().unwrap() {
        let key = (
            n["protocol"].as_str().unwrap().to_string(),
            n["cipher"].as_str().unwrap().to_string(),
            n["group"].as_str().map(str::to_string),
        );
        *t.0.entry(key).or_default() += n["requests"].as_u64().unwrap();
    }
    for r in x["by_reason"].as_array().unwrap() {
        *t.1.entry(r["reason"].as_str().unwrap().to_string())
            .or_default() += r["requests"].as_u64().unwrap();
    }
    t
}

fn tallies_of_answers<'a>(answers: impl Iterator<Item = &'a Answer>) -> Tallies {
    let mut t = Tallies::default();
    for a in answers {
        match a {
            Answer::Works(p, c, g) => {
                *t.0.entry((p.clone(), c.clone(), g.clone())).or_default() += 1
            }
            Answer::Fails(r) => *t.1.entry(r.clone()).or_default() += 1,
        }
    }
    t
}

/// whatif's answer for one log line, from a log of that line alone (`one-N.log`).
fn predict(dir: &Path, n: usize, policy: &str, format: &str, a: &Logged) -> Answer {
    let log = util::write(
        dir,
        &format!("one-{n}.log"),
        format!("{}\n", a.text).as_bytes(),
    );
    let v = whatif_json(policy, format, &log);
    let x = &v["exact"];
    assert_eq!(x["requests"], 1, "{}: {x}", a.path);
    let (mut works, reasons) = tallies_of_exact(x);
    match (works.pop_first(), reasons.into_iter().next()) {
        (Some(((p, c, g), 1)), None) => Answer::Works(p, c, g),
        (None, Some((r, 1))) => Answer::Fails(r),
        _ => panic!("{}: neither works nor fails once: {x}", a.path),
    }
}

/// whatif's answers, `[policy][line]`, for every policy and line. `whatif` reports
/// totals, so each line is asked alone: about 140 runs of a debug binary that takes a
/// third of a second each, hence lines with the same TLS fields are asked once and a
/// few runs go at a time.
fn predict_all(dir: &Path, format: &str, lines: &[&Logged]) -> Vec<Vec<Answer>> {
    let key = |l: &Logged| {
        format!(
            "{} {} {} {} {} {}",
            l.protocol, l.cipher, l.ciphers, l.curves, l.curve, l.reused
        )
    };
    let mut unique: Vec<&Logged> = Vec::new();
    let which: Vec<usize> = lines
        .iter()
        .map(|l| match unique.iter().position(|u| key(u) == key(l)) {
            Some(i) => i,
            None => {
                unique.push(l);
                unique.len() - 1
            }
        })
        .collect();
    let jobs: Vec<(usize, usize)> = (0..POLICIES.len())
        .flat_map(|p| (0..unique.len()).map(move |u| (p, u)))
        .collect();
    let next = AtomicUsize::new(0);
    let answers = Mutex::new(BTreeMap::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Ordering::Relaxed);
                let Some(&(p, u)) = jobs.get(j) else { break };
                let a = predict(dir, j, POLICIES[p].1, format, unique[u]);
                answers.lock().unwrap().insert((p, u), a);
            });
        }
    });
    let answers = answers.into_inner().unwrap();
    (0..POLICIES.len())
        .map(|p| which.iter().map(|&u| answers[&(p, u)].clone()).collect())
        .collect()
}

/// Under each policy: the truth run's plan.json and its log lines by request path.
type Truth = Vec<(Value, BTreeMap<String, Logged>)>;

/// The truth runs, one after the other (one nginx at a time).
fn truth_runs(dir: &Path) -> Truth {
    POLICIES
        .iter()
        .map(|(name, policy)| {
            let pfile = util::write(dir, &format!("{name}.conf"), policy.as_bytes());
            let out = dir.join(name);
            let plan = run_offers(
                &[
                    OsStr::new("--policy-file"),
                    pfile.as_os_str(),
                    OsStr::new("--name"),
                    OsStr::new(name),
                ],
                &out,
            );
            let truth = parse_offers_log(&out.join("access.log"))
                .into_iter()
                .map(|l| (l.path.clone(), l))
                .collect();
            (plan, truth)
        })
        .collect()
}

/// The client id of a request path (`/c/<id>` or `/c/<id>/resumed`).
fn client_of(path: &str) -> &str {
    let id = path.trim_start_matches("/c/");
    id.strip_suffix("/resumed").unwrap_or(id)
}

/// What the strict nginx did with a request.
fn truth_of(t: Option<&Logged>, plan: &Value, path: &str) -> Answer {
    match t {
        Some(t) => Answer::Works(
            t.protocol.clone(),
            t.cipher.clone(),
            (t.curve != "-").then(|| t.curve.clone()),
        ),
        None => Answer::Fails(
            plan["clients"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["id"] == client_of(path))
                .map(|c| c["nginx_errors"].to_string())
                .unwrap_or_default(),
        ),
    }
}

#[test]
fn whatif_exact_agrees_with_real_nginx() {
    if !util::server_test_enabled(
        TEST,
        &["nginx", "curl", "openssl", "python3", "chromium"],
        "nginx curl openssl python3 chromium",
    ) {
        return;
    }
    let t0 = std::time::Instant::now();
    let dir = util::tempdir();
    let perm = dir.path().join("permissive");
    let perm_plan = run_offers(&["--preset".as_ref(), "permissive".as_ref()], &perm);
    let format = perm_plan["log_format"].as_str().unwrap().to_string();
    let log_a = perm.join("access.log");
    let lines_a = parse_offers_log(&log_a);
    let tls_a: Vec<&Logged> = lines_a.iter().filter(|l| l.protocol != "-").collect();
    assert_eq!(lines_a.len(), tls_a.len() + 1, "one plain request");
    assert!(tls_a.len() >= 30, "permissive log: {lines_a:?}");
    assert!(
        tls_a
            .iter()
            .any(|l| l.ciphers.starts_with("0x") && l.curves.contains("0x11ec")),
        "Chromium's GREASE and X25519MLKEM768 should be in the log, in hex"
    );

    // The truth runs (light on the CPU: clients waiting for nginx) go on beside the
    // predictions (CPU-bound).
    let truth_dir = dir.path().to_path_buf();
    let truths = std::thread::spawn(move || truth_runs(&truth_dir));
    let predicted = predict_all(dir.path(), &format, &tls_a);
    let truths = truths
        .join()
        .unwrap_or_else(|e| std::panic::resume_unwind(e));

    let mut problems = Vec::new();
    let mut notes = Vec::new();
    let mut checked = 0;
    for (((name, policy), (plan, truth)), answers) in POLICIES.iter().zip(&truths).zip(&predicted) {
        for (a, said) in tls_a.iter().zip(answers) {
            let did = truth_of(truth.get(&a.path), plan, &a.path);
            checked += 1;
            let agree = match (said, &did) {
                (Answer::Fails(_), Answer::Fails(_)) => true,
                (Answer::Works(p, c, g), Answer::Works(tp, tc, tg)) => {
                    if (p, c) != (tp, tc) {
                        false
                    } else if g.is_none() && tg.is_some() && a.curves == "-" && a.reused == "r" {
                        // A resumed TLS 1.2 session logs no offered groups: whatif
                        // cannot name one, and says so by naming none.
                        notes.push(format!("{name}: {}: group unnamed, nginx: {did}", a.path));
                        true
                    } else {
                        g == tg
                    }
                }
                _ => false,
            };
            if !agree {
                problems.push(format!(
                    "{name}: {}\n    offer (permissive log line {}): ciphers={} curves={} reused={} (negotiated {} {} {})\n    whatif: {said}\n    nginx:  {did}",
                    &a.path[3..],
                    a.line,
                    a.ciphers,
                    a.curves,
                    a.reused,
                    a.protocol,
                    a.cipher,
                    a.curve,
                ));
            }
        }

        // The totals over the whole log are the sums of the answers one by one.
        let v = whatif_json(policy, &format, &log_a);
        let x = &v["exact"];
        let fails = answers
            .iter()
            .filter(|a| matches!(a, Answer::Fails(_)))
            .count();
        assert_eq!(x["requests"], tls_a.len(), "{name}: {x}");
        assert_eq!(x["fails"], fails, "{name}: {x}");
        assert_eq!(x["works"], tls_a.len() - fails, "{name}: {x}");
        assert_eq!(x["without_offer"]["total"], 0, "{name}: {x}");
        assert_eq!(
            tallies_of_exact(x),
            tallies_of_answers(answers.iter()),
            "{name}: whole log vs line by line"
        );
        if *name == POLICIES[0].0 {
            same_answer_from_the_preset_log(&perm, policy, x);
            mixed_log(dir.path(), &format, policy, &lines_a, answers);
        }
    }

    fingerprints_hold_across_runs(dir.path(), &format, &log_a);

    assert!(
        problems.is_empty(),
        "whatif disagrees with real nginx in {} of {checked} cases:\n\n{}\n",
        problems.len(),
        problems.join("\n\n")
    );
    eprintln!(
        "{TEST}: {checked} answers agree with nginx ({} with the group unnamed) in {:.1?}",
        notes.len(),
        t0.elapsed()
    );
}

/// The same requests logged in tlsgap's `nginx-ssl-full` preset (no `$ssl_curve`):
/// the same exact answer.
fn same_answer_from_the_preset_log(perm: &Path, policy: &str, x: &Value) {
    let full = whatif_json(policy, "nginx-ssl-full", &perm.join("access-full.log"));
    assert_eq!(&full["exact"], x, "nginx-ssl-full log vs offers log");
}

/// Every other TLS line without its offer (`"-" "-"`, as nginx writes empty values):
/// those are decided by the upper bound and counted apart; the others keep their
/// exact answers.
fn mixed_log(dir: &Path, format: &str, policy: &str, lines_a: &[Logged], answers: &[Answer]) {
    let mut out = String::new();
    let mut kept = Vec::new();
    let mut stripped = 0;
    let tls = lines_a.iter().filter(|l| l.protocol != "-");
    for (i, (a, answer)) in tls.zip(answers).enumerate() {
        if i % 2 == 0 {
            let from = format!("\"{}\" \"{}\"", a.ciphers, a.curves);
            assert!(a.text.contains(&from), "{}", a.text);
            out += &a.text.replacen(&from, "\"-\" \"-\"", 1);
            stripped += 1;
        } else {
            out += &a.text;
            kept.push(answer);
        }
        out.push('\n');
    }
    let mixed = util::write(dir, "mixed.log", out.as_bytes());
    let v = whatif_json(policy, format, &mixed);
    let x = &v["exact"];
    assert_eq!(x["requests"], kept.len(), "mixed: {x}");
    assert_eq!(x["without_offer"]["total"], stripped, "mixed: {x}");
    assert_eq!(
        tallies_of_exact(x),
        tallies_of_answers(kept.into_iter()),
        "mixed log: the lines with an offer keep their answers"
    );
    assert_eq!(
        v["requests"]["total"],
        stripped + x["requests"].as_u64().unwrap()
    );
}

/// `tlsgap clients` over the permissive run and the first strict run together: one
/// fingerprint per distinct offer (suites and groups, GREASE left out), so the same
/// client's requests share one across runs and different offers never do.
fn fingerprints_hold_across_runs(dir: &Path, format: &str, log_a: &Path) {
    let log_b = dir.join(POLICIES[0].0).join("access.log");
    let mut both = std::fs::read(log_a).unwrap();
    both.extend(std::fs::read(&log_b).unwrap());
    let combined = util::write(dir, "two-runs.log", &both);
    let grease = |item: &str| {
        let b = item.as_bytes();
        b.len() == 6 && item.starts_with("0x") && b[2] == b[4] && b[3] == b'a' && b[5] == b'a'
    };
    let strip = |list: &str| -> String {
        list.split(':')
            .filter(|i| !grease(i))
            .collect::<Vec<_>>()
            .join(":")
    };
    let mut offers = std::collections::BTreeSet::new();
    let mut requests = 0u64;
    for l in parse_offers_log(log_a)
        .into_iter()
        .chain(parse_offers_log(&log_b))
    {
        if l.ciphers != "-" {
            offers.insert((strip(&l.ciphers), strip(&l.curves)));
            requests += 1;
        }
    }
    let o = util::tlsgap()
        .args([
            "clients",
            "-q",
            "--format",
            "json",
            "--top",
            "100",
            "--log-format",
            format,
        ])
        .arg(&combined)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v["requests"], requests, "{v}");
    let fps = v["fingerprints"].as_array().unwrap();
    assert_eq!(
        fps.len(),
        offers.len(),
        "one fingerprint per distinct offer over two runs: {offers:#?}"
    );
    assert!(offers.len() >= 25, "{}", offers.len());
    // Requests of one client in both runs fall under one fingerprint: at least one
    // fingerprint carries requests from both runs for every client that connected in both.
    assert!(fps.iter().any(|f| f["requests"].as_u64().unwrap() >= 2));
}
