//! What a client offered in its ClientHello, as servers log it: nginx `$ssl_ciphers` and
//! `$ssl_curves` (OpenSSL names, `0x....` hex for what OpenSSL has no name for), httpd
//! trunk `SSL_CLIENTHELLO_*` (hex lists, four digits an item, GREASE included).
//!
//! ```
//! use tlsgap_ciphers::offer::Offer;
//!
//! let nginx = Offer::parse(
//!     Some("TLS_AES_256_GCM_SHA384:ECDHE-RSA-AES128-GCM-SHA256:0x00ff"),
//!     Some("X25519:prime256v1:0x11ec"),
//!     None,
//!     None,
//! );
//! assert_eq!(nginx.cipher_codes(), vec![0x1302, 0xc02f, 0x00ff]);
//! assert_eq!(nginx.group_codes(), Some(vec![0x001d, 0x0017, 0x11ec]));
//! let apache = Offer::parse(Some("3a3a1302c02f00ff"), Some("5a5a001d0017"), Some("fafa03040303"), Some("0303"));
//! assert_eq!(apache.cipher_codes(), vec![0x1302, 0xc02f, 0x00ff]);
//! assert_eq!(apache.group_codes(), Some(vec![0x001d, 0x0017]));
//! ```

use crate::catalogue;
use crate::groups::{self, is_grease, Group};
use crate::suite::{Protocol, Suite};

/// `TLS_FALLBACK_SCSV`: the client retried with a lower version than it supports.
pub const FALLBACK_SCSV: u16 = 0x5600;
/// `TLS_EMPTY_RENEGOTIATION_INFO_SCSV`.
pub const RENEGOTIATION_SCSV: u16 = 0x00ff;

/// One offered cipher suite.
#[derive(Clone, Debug, PartialEq)]
pub struct OfferedSuite {
    /// The code point, when known (always for hex lists; for names, the catalogue's).
    pub code: Option<u16>,
    /// The catalogue's suite.
    pub suite: Option<&'static Suite>,
    /// The name as logged, for a name the catalogue does not know.
    pub unknown_name: Option<String>,
}

/// One offered group.
#[derive(Clone, Debug, PartialEq)]
pub struct OfferedGroup {
    /// The code point, when known.
    pub code: Option<u16>,
    /// The group, when tlsgap knows it.
    pub group: Option<&'static Group>,
    /// The name as logged, for a name tlsgap does not know.
    pub unknown_name: Option<String>,
}

/// A client's offer. GREASE values are dropped from every list (they carry nothing).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Offer {
    /// The cipher suites, in the client's order.
    pub ciphers: Vec<OfferedSuite>,
    /// The supported groups, in the client's order; `None` when not logged.
    pub groups: Option<Vec<OfferedGroup>>,
    /// The `supported_versions` extension (code points, `0x0304` = TLS 1.3); `None` when
    /// not logged.
    pub versions: Option<Vec<u16>>,
    /// The ClientHello's legacy version (`0x0303`), when logged.
    pub legacy_version: Option<u16>,
    /// Items of the logged values that were neither a name nor a code (kept out).
    pub unreadable: usize,
}

/// Whether a logged value says "nothing logged" (`-`, empty).
fn absent(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|s| !s.is_empty() && *s != "-")
}

/// A value in httpd trunk's encoding: only hex digits, a whole number of `width`-digit
/// items. (An OpenSSL name always has a letter beyond `f` or a `-`/`_`.)
fn hex_items(s: &str, width: usize) -> Option<Vec<u16>> {
    if s.is_empty() || s.len() % width != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    s.as_bytes()
        .chunks(width)
        .map(|c| {
            std::str::from_utf8(c)
                .ok()
                .and_then(|t| u16::from_str_radix(t, 16).ok())
        })
        .collect()
}

impl Offer {
    /// Read the logged offer: `ciphers` (`$ssl_ciphers` or `SSL_CLIENTHELLO_CIPHERS`),
    /// `groups` (`$ssl_curves` or `SSL_CLIENTHELLO_GROUPS`), `versions`
    /// (`SSL_CLIENTHELLO_VERSIONS`) and `legacy_version` (`SSL_CLIENTHELLO_VERSION`).
    /// `-` and empty values are "not logged". Never fails: items that are neither a name
    /// nor a code are counted in [`Offer::unreadable`].
    pub fn parse(
        ciphers: Option<&str>,
        groups: Option<&str>,
        versions: Option<&str>,
        legacy_version: Option<&str>,
    ) -> Offer {
        let mut offer = Offer::default();
        if let Some(c) = absent(ciphers) {
            match hex_items(c, 4) {
                Some(codes) => {
                    for code in codes.into_iter().filter(|c| !is_grease(*c)) {
                        offer.ciphers.push(OfferedSuite {
                            code: Some(code),
                            suite: catalogue::by_code(u32::from(code)),
                            unknown_name: None,
                        });
                    }
                }
                None => {
                    for item in c.split(':').map(str::trim).filter(|i| !i.is_empty()) {
                        match groups::hex_code(item) {
                            Some(code) if is_grease(code) => {}
                            Some(code) => offer.ciphers.push(OfferedSuite {
                                code: Some(code),
                                suite: catalogue::by_code(u32::from(code)),
                                unknown_name: None,
                            }),
                            None if item.bytes().all(|b| b.is_ascii_graphic()) => {
                                let suite =
                                    catalogue::by_name(item).into_iter().find(|s| !s.sslv2_code);
                                let scsv = match item {
                                    "TLS_FALLBACK_SCSV" => Some(FALLBACK_SCSV),
                                    "TLS_EMPTY_RENEGOTIATION_INFO_SCSV" => Some(RENEGOTIATION_SCSV),
                                    _ => None,
                                };
                                offer.ciphers.push(OfferedSuite {
                                    code: suite.and_then(|s| u16::try_from(s.code).ok()).or(scsv),
                                    suite,
                                    unknown_name: (suite.is_none() && scsv.is_none())
                                        .then(|| item.to_string()),
                                });
                            }
                            None => offer.unreadable += 1,
                        }
                    }
                }
            }
        }
        if let Some(gs) = absent(groups) {
            let mut list = Vec::new();
            match hex_items(gs, 4) {
                Some(codes) => {
                    for code in codes.into_iter().filter(|c| !is_grease(*c)) {
                        list.push(OfferedGroup {
                            code: Some(code),
                            group: groups::by_code(code),
                            unknown_name: None,
                        });
                    }
                }
                None => {
                    for item in gs.split(':').map(str::trim).filter(|i| !i.is_empty()) {
                        if groups::hex_code(item).is_some_and(is_grease) {
                            continue;
                        }
                        match (groups::hex_code(item), groups::by_name(item)) {
                            (_, Some(g)) => list.push(OfferedGroup {
                                code: Some(g.code),
                                group: Some(g),
                                unknown_name: None,
                            }),
                            (Some(code), None) => list.push(OfferedGroup {
                                code: Some(code),
                                group: None,
                                unknown_name: None,
                            }),
                            (None, None) if item.bytes().all(|b| b.is_ascii_graphic()) => list
                                .push(OfferedGroup {
                                    code: None,
                                    group: None,
                                    unknown_name: Some(item.to_string()),
                                }),
                            (None, None) => offer.unreadable += 1,
                        }
                    }
                }
            }
            offer.groups = Some(list);
        }
        if let Some(v) = absent(versions) {
            match hex_items(v, 4) {
                Some(codes) => {
                    offer.versions = Some(codes.into_iter().filter(|c| !is_grease(*c)).collect())
                }
                None => offer.unreadable += 1,
            }
        }
        if let Some(v) = absent(legacy_version) {
            match hex_items(v, 4).as_deref() {
                Some([code]) => offer.legacy_version = Some(*code),
                _ => offer.unreadable += 1,
            }
        }
        offer
    }

    /// Whether anything was offered: at least one cipher suite.
    pub fn is_empty(&self) -> bool {
        self.ciphers.is_empty()
    }

    /// The known code points of the suites, in order (GREASE removed).
    pub fn cipher_codes(&self) -> Vec<u16> {
        self.ciphers.iter().filter_map(|c| c.code).collect()
    }

    /// The known code points of the groups, in order; `None` when not logged.
    pub fn group_codes(&self) -> Option<Vec<u16>> {
        self.groups
            .as_ref()
            .map(|gs| gs.iter().filter_map(|g| g.code).collect())
    }

    /// Whether the client offered a group of `pred`.
    pub fn offers_group(&self, pred: impl Fn(&Group) -> bool) -> bool {
        self.groups
            .iter()
            .flatten()
            .any(|g| g.group.is_some_and(&pred))
    }

    /// Whether the client sent `TLS_FALLBACK_SCSV`.
    pub fn fallback_scsv(&self) -> bool {
        self.ciphers.iter().any(|c| c.code == Some(FALLBACK_SCSV))
    }

    /// The protocols the client supports: from `supported_versions` when logged, else
    /// every protocol up to the highest of: the negotiated one, the legacy version, and
    /// the newest protocol an offered suite needs (a TLS 1.3 suite means TLS 1.3, a
    /// SHA-256 or GCM suite TLS 1.2). Which old protocols the client still accepts is
    /// not in the offer: all of them are assumed (SSLv3 up).
    pub fn protocols(&self, negotiated: Option<Protocol>) -> Vec<Protocol> {
        if let Some(vs) = &self.versions {
            let mut out: Vec<Protocol> = vs.iter().filter_map(|&v| protocol_of(v)).collect();
            // Only unknown versions: the rule below.
            if !out.is_empty() {
                out.sort();
                out.dedup();
                return out;
            }
        }
        let mut max = negotiated;
        let mut raise = |p: Protocol| {
            if max.is_none_or(|m| p > m) {
                max = Some(p);
            }
        };
        if let Some(p) = self.legacy_version.and_then(protocol_of) {
            raise(p);
        }
        for c in &self.ciphers {
            if let Some(s) = c.suite {
                raise(s.min_protocol.max(Protocol::SslV3));
            }
        }
        match max {
            Some(max) => Protocol::ALL
                .iter()
                .copied()
                .filter(|p| *p >= Protocol::SslV3 && *p <= max)
                .collect(),
            None => Vec::new(),
        }
    }
}

/// The protocol of a version code point (`0x0303` = TLS 1.2).
pub fn protocol_of(code: u16) -> Option<Protocol> {
    Some(match code {
        0x0300 => Protocol::SslV3,
        0x0301 => Protocol::TlsV1,
        0x0302 => Protocol::TlsV1_1,
        0x0303 => Protocol::TlsV1_2,
        0x0304 => Protocol::TlsV1_3,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_names_hex_and_grease() {
        let o = Offer::parse(
            Some("0x0a0a:TLS_AES_128_GCM_SHA256:ECDHE-ECDSA-AES128-SHA:NOT-A-SUITE:0x5600"),
            Some("0x2a2a:x25519:secp384r1:0x11ec:weird"),
            None,
            None,
        );
        assert_eq!(o.ciphers.len(), 4);
        assert_eq!(o.cipher_codes(), vec![0x1301, 0xc009, 0x5600]);
        assert_eq!(o.ciphers[2].unknown_name.as_deref(), Some("NOT-A-SUITE"));
        assert!(o.fallback_scsv());
        let groups = o.groups.as_ref().unwrap();
        assert_eq!(groups.len(), 4);
        assert_eq!(o.group_codes(), Some(vec![0x001d, 0x0018, 0x11ec]));
        assert!(o.offers_group(Group::post_quantum));
        assert_eq!(o.protocols(None).last(), Some(&Protocol::TlsV1_3));
    }

    #[test]
    fn absent_and_empty_values() {
        let o = Offer::parse(Some("-"), Some(""), None, None);
        assert!(o.is_empty());
        assert_eq!(o.groups, None);
        assert!(o.protocols(None).is_empty());
        assert_eq!(
            o.protocols(Some(Protocol::TlsV1)).last(),
            Some(&Protocol::TlsV1)
        );
    }

    #[test]
    fn apache_hex_lists() {
        let o = Offer::parse(
            Some("1a1a130113021303c02bc02fcca9c013009c002f0035"),
            Some("3a3a11ec001d00170018"),
            Some("dada03040303"),
            Some("0303"),
        );
        assert_eq!(o.ciphers.len(), 10);
        assert!(o.ciphers.iter().all(|c| c.suite.is_some()));
        assert_eq!(o.group_codes(), Some(vec![0x11ec, 0x001d, 0x0017, 0x0018]));
        assert_eq!(
            o.protocols(None),
            vec![Protocol::TlsV1_2, Protocol::TlsV1_3]
        );
        assert_eq!(o.legacy_version, Some(0x0303));
        // Upper-case hex too; an odd length is not hex-list encoding.
        let o = Offer::parse(Some("C02F"), Some("001D"), Some("0303"), None);
        assert_eq!(o.cipher_codes(), vec![0xc02f]);
        assert_eq!(
            o.protocols(Some(Protocol::TlsV1_3)),
            vec![Protocol::TlsV1_2]
        );
        let o = Offer::parse(None, None, Some("03040"), Some("zz"));
        assert_eq!(o.unreadable, 2);
    }

    #[test]
    fn protocols_from_suites() {
        let old = Offer::parse(Some("AES128-SHA:DES-CBC3-SHA"), None, None, None);
        assert_eq!(
            old.protocols(Some(Protocol::TlsV1)).last(),
            Some(&Protocol::TlsV1)
        );
        assert_eq!(
            old.protocols(Some(Protocol::TlsV1_1)).last(),
            Some(&Protocol::TlsV1_1)
        );
        let tls12 = Offer::parse(Some("AES128-SHA:AES128-GCM-SHA256"), None, None, None);
        assert_eq!(tls12.protocols(None).last(), Some(&Protocol::TlsV1_2));
    }
}
