//! The cipher-suite catalogue (API fixed; data and implementation in progress).

use crate::suite::Suite;

/// Every suite the catalogue knows, in catalogue order.
pub fn all() -> &'static [Suite] {
    &[]
}

/// The suite a server logged as `name` (OpenSSL or IANA name) under `protocol` (as
/// logged: `TLSv1.2`, `SSLv2`, `TLS1.2`, ...). SSLv2 names that collide with TLS names
/// resolve to the SSLv2 suite only when `protocol` is `SSLv2`.
pub fn lookup(protocol: &str, name: &str) -> Option<&'static Suite> {
    let _ = (protocol, name);
    None
}

/// Every suite known under `name` (OpenSSL name, alias or IANA name), any protocol.
pub fn by_name(name: &str) -> Vec<&'static Suite> {
    let _ = name;
    Vec::new()
}
