//! OpenSSL cipher strings (API fixed; implementation in progress).

use crate::suite::Suite;

/// A cipher string that could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CipherStringError {
    /// What was wrong, naming the offending element.
    pub message: String,
}

/// The result of evaluating a cipher string.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluated {
    /// The enabled TLS <= 1.2 suites, in OpenSSL's order; indices into the slice evaluated over.
    pub order: Vec<usize>,
    /// The security level in force (`@SECLEVEL=N`, else the default passed in).
    pub seclevel: u8,
}

/// Evaluate `s` with OpenSSL semantics over `suites` (TLS 1.3 suites are ignored: they are
/// governed by a separate list).
pub fn evaluate_over(
    s: &str,
    suites: &[Suite],
    default_seclevel: u8,
) -> Result<Evaluated, CipherStringError> {
    let _ = (s, suites);
    Ok(Evaluated {
        order: Vec::new(),
        seclevel: default_seclevel,
    })
}
