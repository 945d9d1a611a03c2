//! What one password verification costs **on this machine**, per scheme and work factor.
//!
//! Method, per distinct [`Scheme`]:
//!
//! 1. Make a random 16-character password and hash it with the scheme's real
//!    implementation at the entry's work factor (a fresh salt each time).
//! 2. Verify it once (warm-up and self-check: it must be a [`Verification::Match`],
//!    else the scheme is reported as not measured).
//! 3. Take [`MeasureOptions::samples`] timings and keep the median. A timing is one
//!    verification when one takes at least [`MeasureOptions::batch_micros`] (by default
//!    [`BATCH_SECONDS`]); cheaper schemes are verified in a batch that long and the
//!    batch time divided by its size. A timing
//!    is the measuring thread's **CPU time** (wall time only where the system has no
//!    per-thread clock): the speed of one core of this machine, whatever else it runs
//!    at that moment. Wall time made the figure depend on the load during the
//!    analysis: with two busy processes on this two-core machine the same capture's
//!    gaps were read as bcrypt cost 11 instead of 13, one run in five as 13.
//!
//! Expensive work factors are not run directly, to keep a whole file's measurement
//! well under two seconds:
//!
//! - bcrypt above [`MeasureOptions::max_direct_bcrypt_cost`] is measured at that cost
//!   and multiplied by `2^(cost - measured cost)`: bcrypt's key setup runs `2^cost`
//!   times and dominates everything else (at cost 10 the fixed part is about 1/1000).
//! - SHA-crypt above [`MeasureOptions::max_direct_rounds`] is measured at that many
//!   rounds and multiplied by `rounds / measured rounds`: its main loop is linear.
//!
//! [`Method`] says which way each figure was obtained. yescrypt and argon2 have no
//! implementation here: their figure is `None`, never a guess.

use std::collections::BTreeMap;
use std::fmt;
use std::hint::black_box;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::Serialize;

use crate::htpasswd::{Scheme, Verification};
use crate::verify;

/// A timing sample is at least this long (cheap schemes are verified in batches).
pub const BATCH_SECONDS: f64 = 0.002;

/// Knobs of the measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeasureOptions {
    /// Timings per scheme; the median is kept. At least 1.
    pub samples: usize,
    /// bcrypt costs above this are measured at this cost and scaled by `2^Δcost`.
    pub max_direct_bcrypt_cost: u32,
    /// SHA-crypt rounds above this are measured at this many rounds and scaled linearly.
    pub max_direct_rounds: u32,
    /// A timing is at least this many microseconds: verifications shorter than this
    /// are timed in batches.
    pub batch_micros: u32,
}

impl Default for MeasureOptions {
    /// 7 samples (a median that holds still between runs), bcrypt up to cost 10 and
    /// SHA-crypt up to 50 000 rounds measured directly, timings of at least
    /// [`BATCH_SECONDS`].
    fn default() -> Self {
        MeasureOptions {
            samples: 7,
            max_direct_bcrypt_cost: 10,
            max_direct_rounds: 50_000,
            batch_micros: (BATCH_SECONDS * 1e6) as u32,
        }
    }
}

/// How a figure was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Method {
    /// Timed at this exact scheme and work factor.
    Measured,
    /// bcrypt timed at this cost and scaled by `2^Δcost`.
    ScaledFromCost(u32),
    /// SHA-crypt timed at this many rounds and scaled linearly.
    ScaledFromRounds(u32),
    /// No implementation of the scheme here (yescrypt, argon2).
    NoImplementation,
    /// The implementation did not verify its own hash, so no figure is given.
    SelfCheckFailed,
}

/// `measured`, `scaled from cost 10`, `scaled from rounds 50000`,
/// `not measured: no implementation`, `not measured: self-check failed`.
impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Method::Measured => f.write_str("measured"),
            Method::ScaledFromCost(cost) => write!(f, "scaled from cost {cost}"),
            Method::ScaledFromRounds(rounds) => write!(f, "scaled from rounds {rounds}"),
            Method::NoImplementation => f.write_str("not measured: no implementation"),
            Method::SelfCheckFailed => f.write_str("not measured: self-check failed"),
        }
    }
}

impl Serialize for Method {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The cost of one verification of one scheme + work factor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// What was measured.
    pub scheme: Scheme,
    /// Seconds per verification on this machine; `None` when not measured.
    pub verify_seconds: Option<f64>,
    /// The fastest and slowest sample, scaled like the median (the spread).
    pub range_seconds: Option<[f64; 2]>,
    /// How [`Measurement::verify_seconds`] was obtained.
    pub method: Method,
}

/// Measures each distinct scheme once, in [`Scheme`] order. A base measurement used for
/// scaling (bcrypt at `max_direct_bcrypt_cost`, ...) is taken once and shared.
pub fn measure_all<I>(schemes: I, options: &MeasureOptions) -> Vec<Measurement>
where
    I: IntoIterator<Item = Scheme>,
{
    let mut direct: BTreeMap<Scheme, Option<Timing>> = BTreeMap::new();
    let mut time_directly = |scheme: Scheme| -> Option<Timing> {
        *direct
            .entry(scheme)
            .or_insert_with(|| time_verification(scheme, options))
    };
    let mut distinct: Vec<Scheme> = schemes.into_iter().collect();
    distinct.sort();
    distinct.dedup();
    distinct
        .into_iter()
        .map(|scheme| {
            let (base, method, factor) = plan(scheme, options);
            let timing = match method {
                Method::NoImplementation => None,
                _ => base.and_then(&mut time_directly),
            };
            let verify_seconds = timing.map(|t| t.median * factor);
            let range_seconds = timing.map(|t| [t.min * factor, t.max * factor]);
            let method = if verify_seconds.is_none() && method != Method::NoImplementation {
                Method::SelfCheckFailed
            } else {
                method
            };
            Measurement {
                scheme,
                verify_seconds,
                range_seconds,
                method,
            }
        })
        .collect()
}

/// Measures one scheme (see the module docs for the method).
pub fn measure(scheme: Scheme, options: &MeasureOptions) -> Measurement {
    measure_all([scheme], options).pop().unwrap_or(Measurement {
        scheme,
        verify_seconds: None,
        range_seconds: None,
        method: Method::NoImplementation,
    })
}

/// Which scheme to time, how the result is labelled and by what it is multiplied.
fn plan(scheme: Scheme, options: &MeasureOptions) -> (Option<Scheme>, Method, f64) {
    match scheme {
        Scheme::Yescrypt | Scheme::Argon2 | Scheme::Unsupported => {
            (None, Method::NoImplementation, 1.0)
        }
        Scheme::Bcrypt { cost } if cost > options.max_direct_bcrypt_cost => {
            let base = options.max_direct_bcrypt_cost.clamp(4, 31);
            let factor = 2f64.powi(i32::try_from(cost - base).unwrap_or(i32::MAX));
            (
                Some(Scheme::Bcrypt { cost: base }),
                Method::ScaledFromCost(base),
                factor,
            )
        }
        Scheme::Sha256Crypt { rounds } | Scheme::Sha512Crypt { rounds }
            if rounds > options.max_direct_rounds =>
        {
            let base_rounds = options.max_direct_rounds.max(1000);
            let base = match scheme {
                Scheme::Sha256Crypt { .. } => Scheme::Sha256Crypt {
                    rounds: base_rounds,
                },
                _ => Scheme::Sha512Crypt {
                    rounds: base_rounds,
                },
            };
            (
                Some(base),
                Method::ScaledFromRounds(base_rounds),
                f64::from(rounds) / f64::from(base_rounds),
            )
        }
        _ => (Some(scheme), Method::Measured, 1.0),
    }
}

/// Seconds per verification: the median sample and the spread.
#[derive(Clone, Copy, Debug)]
struct Timing {
    median: f64,
    min: f64,
    max: f64,
}

/// Hashes a fresh random password at `scheme` and times its verification, or `None` if
/// the scheme has no implementation or fails its self-check.
fn time_verification(scheme: Scheme, options: &MeasureOptions) -> Option<Timing> {
    let password = random_password();
    let hash = make_hash(scheme, &password)?;
    let check = || verify::verify(scheme, black_box(hash.as_bytes()), black_box(&password));

    let start = Stopwatch::start();
    if check() != Verification::Match {
        return None;
    }
    let once = start.elapsed().as_secs_f64();
    let least = f64::from(options.batch_micros) / 1e6;
    let batch = if once >= least {
        1
    } else {
        // At most 100 000 per batch so that a mis-measured warm-up cannot run away.
        ((least / once.max(1e-7)).ceil() as usize).clamp(1, 100_000)
    };

    let mut per_verification: Vec<f64> = (0..options.samples.max(1))
        .map(|_| {
            let start = Stopwatch::start();
            for _ in 0..batch {
                black_box(check());
            }
            duration_per(start.elapsed(), batch)
        })
        .collect();
    per_verification.sort_by(f64::total_cmp);
    Some(Timing {
        median: *per_verification.get(per_verification.len() / 2)?,
        min: *per_verification.first()?,
        max: *per_verification.last()?,
    })
}

/// The calling thread's CPU time since it started, or wall time where the system
/// has no per-thread CPU clock.
#[derive(Debug)]
struct Stopwatch {
    cpu: Option<cpu_time::ThreadTime>,
    wall: Instant,
}

impl Stopwatch {
    fn start() -> Stopwatch {
        Stopwatch {
            cpu: cpu_time::ThreadTime::try_now().ok(),
            wall: Instant::now(),
        }
    }

    fn elapsed(&self) -> Duration {
        match self.cpu.as_ref().map(cpu_time::ThreadTime::try_elapsed) {
            Some(Ok(d)) => d,
            _ => self.wall.elapsed(),
        }
    }
}

fn duration_per(elapsed: Duration, count: usize) -> f64 {
    elapsed.as_secs_f64() / count as f64
}

/// A real hash of `password` at `scheme`'s work factor, with a random salt.
// pwhash marks DES, MD5 and SHA-crypt hashing as deprecated for new passwords; here they
// only make throw-away hashes to time, because old htpasswd files still use them.
#[allow(deprecated)]
fn make_hash(scheme: Scheme, password: &[u8]) -> Option<String> {
    let hash = match scheme {
        Scheme::Plain => String::from_utf8(password.to_vec()).ok()?,
        Scheme::Sha1 => verify::sha1_htpasswd(password),
        Scheme::Apr1 => crate::apr1::md5_crypt(
            password,
            &crate::apr1::random_salt(),
            crate::apr1::APR1_MAGIC,
        ),
        Scheme::Md5Crypt => pwhash::md5_crypt::hash(password).ok()?,
        Scheme::DesCrypt => {
            let salt = crate::apr1::random_salt();
            let salt = std::str::from_utf8(salt.get(..2)?).ok()?;
            pwhash::unix_crypt::hash_with(salt, password).ok()?
        }
        Scheme::Bcrypt { cost } => bcrypt::hash(password, cost).ok()?,
        Scheme::Sha256Crypt { rounds } => pwhash::sha256_crypt::hash_with(
            pwhash::HashSetup {
                salt: None,
                rounds: Some(rounds),
            },
            password,
        )
        .ok()?,
        Scheme::Sha512Crypt { rounds } => pwhash::sha512_crypt::hash_with(
            pwhash::HashSetup {
                salt: None,
                rounds: Some(rounds),
            },
            password,
        )
        .ok()?,
        Scheme::Yescrypt | Scheme::Argon2 | Scheme::Unsupported => return None,
    };
    Some(hash)
}

/// 16 random characters from a URL-safe alphabet (the measured password).
fn random_password() -> Vec<u8> {
    let mut bytes = [0u8; 12];
    // A failed RNG leaves zeros: still a valid password to time.
    let _ = getrandom::fill(&mut bytes);
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(bytes)
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timing counts the thread's time on a CPU: time spent off it (here asleep; on
    /// a loaded machine, waiting for a core) is not the scheme's cost.
    #[test]
    fn a_timing_leaves_out_time_off_the_cpu() {
        let s = Stopwatch::start();
        std::thread::sleep(Duration::from_millis(200));
        let off = s.elapsed();
        assert!(
            off < Duration::from_millis(100),
            "{off:?} counted while asleep"
        );
        // Work does count.
        let s = Stopwatch::start();
        let mut x = 0u64;
        while s.elapsed() < Duration::from_millis(5) {
            x = black_box(x.wrapping_add(1));
        }
        assert!(x > 0);
    }

    #[test]
    fn every_implemented_scheme_verifies_its_own_hash_and_rejects_another() {
        for scheme in [
            Scheme::Plain,
            Scheme::Sha1,
            Scheme::Apr1,
            Scheme::DesCrypt,
            Scheme::Bcrypt { cost: 4 },
            Scheme::Md5Crypt,
            Scheme::Sha256Crypt { rounds: 1000 },
            Scheme::Sha512Crypt { rounds: 1000 },
        ] {
            let hash = make_hash(scheme, b"correct horse").unwrap();
            assert_eq!(
                verify::verify(scheme, hash.as_bytes(), b"correct horse"),
                Verification::Match,
                "{scheme}"
            );
            assert_eq!(
                verify::verify(scheme, hash.as_bytes(), b"wrong horse"),
                Verification::Mismatch,
                "{scheme}"
            );
        }
    }

    #[test]
    fn rounds_are_in_the_sha_crypt_hash() {
        let hash = make_hash(Scheme::Sha512Crypt { rounds: 12345 }, b"pw").unwrap();
        assert!(hash.starts_with("$6$rounds=12345$"), "prefix");
        let parsed = crate::htpasswd::parse(format!("u:{hash}").as_bytes());
        assert_eq!(
            parsed.entries[0].scheme,
            Scheme::Sha512Crypt { rounds: 12345 }
        );
    }

    #[test]
    fn plan_scales_expensive_work_factors() {
        let options = MeasureOptions::default();
        let (base, method, factor) = plan(Scheme::Bcrypt { cost: 13 }, &options);
        assert_eq!(base, Some(Scheme::Bcrypt { cost: 10 }));
        assert_eq!(method, Method::ScaledFromCost(10));
        assert_eq!(factor, 8.0);
        let (base, method, factor) = plan(Scheme::Sha512Crypt { rounds: 500_000 }, &options);
        assert_eq!(base, Some(Scheme::Sha512Crypt { rounds: 50_000 }));
        assert_eq!(method, Method::ScaledFromRounds(50_000));
        assert_eq!(factor, 10.0);
        assert_eq!(
            plan(Scheme::Bcrypt { cost: 10 }, &options).1,
            Method::Measured
        );
        assert_eq!(plan(Scheme::Yescrypt, &options).1, Method::NoImplementation);
    }

    #[test]
    fn unimplemented_schemes_get_no_number() {
        let m = measure(Scheme::Argon2, &MeasureOptions::default());
        assert_eq!(m.verify_seconds, None);
        assert_eq!(m.method.to_string(), "not measured: no implementation");
    }

    #[test]
    fn bcrypt_cost_orders_the_figures() {
        // Structure, not timing: cost 12 does 128 times the work of cost 5.
        let options = MeasureOptions {
            samples: 1,
            ..MeasureOptions::default()
        };
        let m = measure_all(
            [
                Scheme::Bcrypt { cost: 12 },
                Scheme::Bcrypt { cost: 5 },
                Scheme::Bcrypt { cost: 12 },
            ],
            &options,
        );
        assert_eq!(m.len(), 2, "deduplicated");
        assert_eq!(m[0].scheme, Scheme::Bcrypt { cost: 5 });
        assert_eq!(m[0].method, Method::Measured);
        assert_eq!(m[1].method, Method::ScaledFromCost(10));
        let five = m[0].verify_seconds.unwrap();
        let twelve = m[1].verify_seconds.unwrap();
        assert!(five > 0.0);
        assert!(twelve > five, "cost 12 {twelve} s vs cost 5 {five} s");
    }
}
