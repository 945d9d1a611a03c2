//! How many timings the bcrypt reference speed of `gaps` and `auth` needs: the
//! cost-8 verification time estimated from cost 5 with 7, 3 and 1 timings (of at least
//! 2 ms: two verifications each here, or of one verification), against a direct cost-8
//! measurement, each setting `ROUNDS` times in turn, with what each estimate costs in
//! CPU time.
//!
//! `cargo run --release -p tlsgap-auth --example bcrypt_reference -- [ROUNDS]`

use tlsgap_auth::{measure, MeasureOptions, Scheme};

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(15);
    let scheme = Scheme::Bcrypt { cost: 8 };
    // (label, timings, highest cost measured directly, shortest timing in µs)
    let settings = [
        ("7 timings at cost 5, ≥ 2 ms each", 7, 5, 2000),
        ("3 timings at cost 5, ≥ 2 ms each", 3, 5, 2000),
        ("3 timings at cost 5, ≥ 1 ms each", 3, 5, 1000),
        ("1 timing at cost 5, ≥ 2 ms", 1, 5, 2000),
        ("3 timings at cost 8", 3, 8, 2000),
    ];
    let mut estimates = vec![Vec::new(); settings.len()];
    let mut spent = vec![Vec::new(); settings.len()];
    for _ in 0..rounds {
        for (i, &(_, samples, direct, batch_micros)) in settings.iter().enumerate() {
            let options = MeasureOptions {
                samples,
                max_direct_bcrypt_cost: direct,
                batch_micros,
                ..MeasureOptions::default()
            };
            let start = cpu_time::ThreadTime::now();
            let m = measure(scheme, &options);
            let cpu = start.elapsed().as_secs_f64();
            if let (Some(e), Some(s)) = (m.verify_seconds, spent.get_mut(i)) {
                s.push(cpu);
                if let Some(v) = estimates.get_mut(i) {
                    v.push(e);
                }
            }
        }
    }
    println!("| setting | median estimate s | lowest | highest | CPU per estimate ms |");
    println!("|---|---:|---:|---:|---:|");
    for ((label, _, _, _), (mut e, mut c)) in settings.iter().zip(estimates.into_iter().zip(spent))
    {
        e.sort_by(f64::total_cmp);
        c.sort_by(f64::total_cmp);
        let (Some(lo), Some(hi), Some(mid), Some(cost)) =
            (e.first(), e.last(), e.get(e.len() / 2), c.get(c.len() / 2))
        else {
            println!("| {label} | not measured | | | |");
            continue;
        };
        println!(
            "| {label} | {mid:.5} | {lo:.5} | {hi:.5} | {:.1} |",
            cost * 1000.0
        );
    }
}
