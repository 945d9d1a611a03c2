//! TLS policies traffic is tested against (API fixed; implementation in progress).

use crate::suite::{Protocol, Suite};

/// A set of protocols and suites a server would accept.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// `mozilla-intermediate`, or `apache`/`nginx` for directives.
    pub name: String,
    /// The profile's version (`5.7`), if any.
    pub version: Option<String>,
    /// Protocols enabled.
    pub protocols: Vec<Protocol>,
    /// TLS <= 1.2 suites enabled, in preference order.
    pub tls12: Vec<&'static Suite>,
    /// TLS 1.3 suites enabled.
    pub tls13: Vec<&'static Suite>,
}

/// What a policy says of one logged (protocol, cipher).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decision {
    /// Would still be negotiated.
    Allowed,
    /// The protocol is disabled.
    RefusedProtocol,
    /// The protocol is on, the suite is not.
    RefusedCipher,
    /// The protocol or suite is not in the catalogue.
    Unknown,
}
