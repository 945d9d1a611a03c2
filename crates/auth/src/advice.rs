//! Which users are slow to authenticate, and what would make them fast.
//!
//! A user is flagged when one verification of their stored hash costs more than the
//! threshold ([`DEFAULT_THRESHOLD_SECONDS`], 50 ms) on this machine: mod_authn_file
//! verifies on **every** request, so that is added to each of that user's responses.
//!
//! For bcrypt the advice names the largest cost whose scaled time (`2^Δcost`) stays
//! under the threshold; for SHA-crypt the largest `rounds=` (linear). Both are security
//! trade-offs, and the text says so. It also says what mod_authn_socache does and does
//! not do here: `AuthnCacheProvideFor file` caches the *stored hash* that mod_authn_file
//! found (`AUTHN_CACHE_STORE(r, user, NULL, file_password)` in mod_authn_file.c), and
//! the socache provider checks the password against it with `apr_password_validate`
//! again, so it saves the file read but not the hashing.

use std::fmt::Write as _;

use serde::Serialize;

use crate::htpasswd::Scheme;

/// The default per-request verification budget, in seconds (50 ms).
pub const DEFAULT_THRESHOLD_SECONDS: f64 = 0.050;

const BCRYPT_MIN_COST: u32 = 4;
const SHA_CRYPT_MIN_ROUNDS: u32 = 1000;

/// The verdict for one user.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Advice {
    /// Verification costs more than the threshold.
    pub flagged: bool,
    /// For flagged bcrypt: the largest cost under the threshold (`None` if even cost 4
    /// is too slow here).
    pub suggested_cost: Option<u32>,
    /// For flagged SHA-crypt: the largest `rounds=` under the threshold.
    pub suggested_rounds: Option<u32>,
    /// A sentence or three for people; `None` when there is nothing to say.
    pub text: Option<String>,
}

/// The largest bcrypt cost in `4..=cost` whose time, scaled from `seconds_at_cost` by
/// `2^(c - cost)`, is below `threshold_seconds`.
pub fn largest_bcrypt_cost_under(
    cost: u32,
    seconds_at_cost: f64,
    threshold_seconds: f64,
) -> Option<u32> {
    (BCRYPT_MIN_COST..=cost)
        .rev()
        .find(|&c| bcrypt_scaled(seconds_at_cost, cost, c) < threshold_seconds)
}

fn bcrypt_scaled(seconds_at_cost: f64, cost: u32, to: u32) -> f64 {
    let steps = i32::try_from(cost.saturating_sub(to)).unwrap_or(i32::MAX);
    seconds_at_cost / 2f64.powi(steps)
}

/// The largest SHA-crypt rounds (at least 1000) whose linearly scaled time is below the
/// threshold, `None` if 1000 rounds are already too slow.
pub fn largest_rounds_under(
    rounds: u32,
    seconds_at_rounds: f64,
    threshold_seconds: f64,
) -> Option<u32> {
    if seconds_at_rounds <= 0.0 || rounds == 0 {
        return Some(rounds);
    }
    let per_round = seconds_at_rounds / f64::from(rounds);
    // Strictly below: step back one round if the division lands exactly on it.
    let mut fit = (threshold_seconds / per_round).floor();
    if fit * per_round >= threshold_seconds {
        fit -= 1.0;
    }
    let fit = fit.min(f64::from(rounds)) as u32;
    (fit >= SHA_CRYPT_MIN_ROUNDS).then_some(fit)
}

/// Advice for one user whose entry is `scheme` and costs `verify_seconds` per request
/// on this machine.
pub fn advise(scheme: Scheme, verify_seconds: Option<f64>, threshold_seconds: f64) -> Advice {
    advise_at(scheme, verify_seconds, threshold_seconds, "on this machine")
}

/// [`advise`] for a time taken somewhere else: `place` says where (`on the server
/// (calibrated on ...)`).
pub fn advise_at(
    scheme: Scheme,
    verify_seconds: Option<f64>,
    threshold_seconds: f64,
    place: &str,
) -> Advice {
    let mut advice = Advice {
        flagged: false,
        suggested_cost: None,
        suggested_rounds: None,
        text: None,
    };
    if scheme == Scheme::Unsupported {
        advice.text = Some(
            "a {NAME} prefix Apache does not know (such as LDAP's {SSHA}): httpd on Linux \
             hands the value to crypt(3), which rejects it, so this user cannot log in. \
             Rehash with htpasswd (-B for bcrypt)."
                .to_owned(),
        );
    }
    if scheme == Scheme::Plain {
        advice.text = Some(
            "stored in plain text: Apache's documentation lists plain text as Windows and \
             NetWare only; elsewhere httpd passes it to crypt() and the login fails. \
             Anyone who reads the file has the password."
                .to_owned(),
        );
    }
    let Some(seconds) = verify_seconds else {
        return advice;
    };
    if seconds <= threshold_seconds {
        return advice;
    }
    advice.flagged = true;
    let mut text = format!(
        "{scheme}: {} per request {place}, over the {} budget; \
         mod_authn_file re-verifies on every request.",
        human_seconds(seconds),
        human_seconds(threshold_seconds)
    );
    match scheme {
        Scheme::Bcrypt { cost } => {
            advice.suggested_cost = largest_bcrypt_cost_under(cost, seconds, threshold_seconds);
            match advice.suggested_cost {
                Some(lower) => {
                    let _ = write!(
                        text,
                        " Cost {lower} would take about {} (each step halves the time; \
                         rehash with `htpasswd -B -C {lower} FILE USER`).",
                        human_seconds(bcrypt_scaled(seconds, cost, lower))
                    );
                }
                None => text.push_str(" Even bcrypt cost 4 is over the budget here."),
            }
            text.push_str(
                " Trade-off: the cost is the security: each step down halves an \
                 attacker's work against a stolen htpasswd file.",
            );
        }
        Scheme::Sha256Crypt { rounds } | Scheme::Sha512Crypt { rounds } => {
            advice.suggested_rounds = largest_rounds_under(rounds, seconds, threshold_seconds);
            match advice.suggested_rounds {
                Some(lower) => {
                    let flag = if matches!(scheme, Scheme::Sha256Crypt { .. }) {
                        "-2"
                    } else {
                        "-5"
                    };
                    let _ = write!(
                        text,
                        " rounds={lower} would fit (time is linear in rounds; \
                         `htpasswd {flag} -r {lower} FILE USER`).",
                    );
                }
                None => text.push_str(" Even 1000 rounds are over the budget here."),
            }
            text.push_str(" Trade-off: fewer rounds make a stolen htpasswd file cheaper to crack.");
        }
        _ => {}
    }
    text.push_str(
        " Caching with mod_authn_socache (`AuthBasicProvider socache file`, \
         `AuthnCacheProvideFor file`, `AuthnCacheTimeout`) spares re-reading the file, \
         but it caches the stored hash and still verifies the password against it on \
         every request, so it does not remove this cost.",
    );
    advice.text = Some(text);
    advice
}

/// `0.12 ms`, `240 ms`, `1.92 s`.
pub fn human_seconds(seconds: f64) -> String {
    if seconds < 0.001 {
        format!("{:.3} ms", seconds * 1e3)
    } else if seconds < 1.0 {
        format!("{:.0} ms", seconds * 1e3)
    } else {
        format!("{seconds:.2} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_cost_under_threshold() {
        // cost 12 at 0.24 s: 11 → 0.12, 10 → 0.06, 9 → 0.03 < 0.05.
        assert_eq!(largest_bcrypt_cost_under(12, 0.24, 0.05), Some(9));
        // Exactly on the threshold is not under it: 10 → 0.05 is rejected.
        assert_eq!(largest_bcrypt_cost_under(12, 0.2, 0.05), Some(9));
        assert_eq!(largest_bcrypt_cost_under(5, 0.01, 0.05), Some(5));
        assert_eq!(largest_bcrypt_cost_under(12, 100.0, 0.05), None);
    }

    #[test]
    fn largest_rounds_under_threshold() {
        assert_eq!(largest_rounds_under(100_000, 0.3, 0.05), Some(16_666));
        assert_eq!(largest_rounds_under(5000, 0.5, 0.05), None);
    }

    #[test]
    fn slow_bcrypt_is_flagged_with_a_lower_cost() {
        let advice = advise(
            Scheme::Bcrypt { cost: 13 },
            Some(0.4),
            DEFAULT_THRESHOLD_SECONDS,
        );
        assert!(advice.flagged);
        assert_eq!(advice.suggested_cost, Some(9));
        let text = advice.text.unwrap();
        assert!(text.contains("bcrypt cost 13: 400 ms"), "{text}");
        assert!(text.contains("Cost 9 would take about 25 ms"), "{text}");
        assert!(text.contains("AuthnCacheProvideFor file"), "{text}");
        assert!(text.contains("security"), "{text}");
    }

    #[test]
    fn fast_or_unmeasured_users_are_not_flagged() {
        let fast = advise(Scheme::Apr1, Some(0.0002), DEFAULT_THRESHOLD_SECONDS);
        assert_eq!(
            fast,
            Advice {
                flagged: false,
                suggested_cost: None,
                suggested_rounds: None,
                text: None
            }
        );
        assert!(!advise(Scheme::Yescrypt, None, DEFAULT_THRESHOLD_SECONDS).flagged);
        let ldap = advise(Scheme::Unsupported, None, DEFAULT_THRESHOLD_SECONDS);
        assert!(!ldap.flagged);
        assert!(ldap.text.unwrap().contains("crypt(3), which rejects it"));
        let plain = advise(Scheme::Plain, Some(1e-8), DEFAULT_THRESHOLD_SECONDS);
        assert!(!plain.flagged);
        assert!(plain.text.unwrap().contains("Windows"));
    }

    #[test]
    fn slow_sha_crypt_gets_rounds() {
        let advice = advise(
            Scheme::Sha512Crypt { rounds: 1_000_000 },
            Some(0.6),
            DEFAULT_THRESHOLD_SECONDS,
        );
        assert!(advice.flagged);
        assert_eq!(advice.suggested_rounds, Some(83_333));
        assert!(advice.text.unwrap().contains("htpasswd -5 -r 83333"));
    }

    #[test]
    fn human_seconds_units() {
        assert_eq!(human_seconds(0.00012), "0.120 ms");
        assert_eq!(human_seconds(0.24), "240 ms");
        assert_eq!(human_seconds(1.916), "1.92 s");
    }
}
