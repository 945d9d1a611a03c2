//! Verdict rules (in progress: the catalogue helper documents the rule table here).

use serde::Serialize;

/// How a protocol or suite is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Broken: must not be used.
    Insecure,
    /// Deprecated or lacking a property (forward secrecy, AEAD).
    Weak,
    /// Acceptable.
    Secure,
    /// What current guidance recommends.
    Recommended,
    /// Not a name the rules know.
    Unknown,
}

impl Verdict {
    /// The lower-case name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Insecure => "insecure",
            Verdict::Weak => "weak",
            Verdict::Secure => "secure",
            Verdict::Recommended => "recommended",
            Verdict::Unknown => "unknown",
        }
    }
}

