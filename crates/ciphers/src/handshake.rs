//! Would a client's logged offer still get a handshake under a policy, and with what?
//! Decided the way an OpenSSL 3 server decides it:
//!
//! 0. A server with TLSv1.3 on and no TLS 1.3 suite fails every handshake
//!    (`no_suite_for_newest_protocol`).
//! 1. **Version**: the newest protocol both sides have ([`Offer::protocols`]; the
//!    policy's [`Policy::protocols`], security level applied). None: `no_common_protocol`.
//!    A client that sent `TLS_FALLBACK_SCSV` below the server's newest protocol is
//!    refused (`inappropriate_fallback`). OpenSSL does not retry an older protocol when
//!    the chosen one has no suite in common.
//! 2. **Suite**: with [`Policy::prefer_server_ciphers`] (`ssl_prefer_server_ciphers on`,
//!    `SSLHonorCipherOrder on`) the first suite of the server's list the client offered,
//!    else the first suite of the client's list the server has. Under TLS <= 1.2 a suite
//!    must suit the protocol, the certificate ([`Certs`]: RSA and/or ECDSA; plain-RSA key
//!    exchange needs RSA; the ECDSA certificate, taken to be on P-256
//!    ([`ECDSA_CERT_CURVE`]), only for a client whose logged groups list P-256), need no
//!    PSK or SRP set-up, and for ECDHE a curve in common.
//!    None: `no_common_cipher` (or `no_common_group` when only the curve was missing).
//! 3. **Group** (ECDHE and TLS 1.3): groups both have, at or above the security level.
//!    TLS 1.3 takes the group of a key share the server accepts (clients send one for
//!    their first group, browsers a second one when the first is a post-quantum
//!    hybrid), else the first shared group in the server's order, whatever the
//!    preference (a HelloRetryRequest; observed with the real nginx); none:
//!    `no_common_group`. TLS <= 1.2 takes the first shared curve in the preferred
//!    side's order. Without a logged group list, any group is assumed to be in common
//!    and none is named.
//!
//! ```
//! use tlsgap_ciphers::handshake::{negotiate, Certs, Outcome};
//! use tlsgap_ciphers::offer::Offer;
//! use tlsgap_ciphers::policy::Policy;
//! use tlsgap_ciphers::Protocol;
//!
//! let policy = Policy::from_config("ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM;").unwrap();
//! // Negotiated ECDHE-RSA-AES256-SHA before, but offers a GCM suite too.
//! let offer = Offer::parse(Some("ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256"), Some("X25519"), None, None);
//! match negotiate(&policy, Certs::RSA, &offer, Some(Protocol::TlsV1_2)) {
//!     Outcome::Works(w) => {
//!         assert_eq!(w.suite.openssl[0], "ECDHE-RSA-AES128-GCM-SHA256");
//!         assert_eq!(w.group.map(|g| g.name), Some("X25519"));
//!     }
//!     Outcome::Fails(f) => panic!("{f:?}"),
//! }
//! ```

use crate::groups::Group;
use crate::offer::Offer;
use crate::policy::Policy;
use crate::suite::{Protocol, Suite};

/// Which certificates the server has (the policy does not say; whatif infers it from
/// the suites the log shows, or is told).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Certs {
    /// An RSA certificate.
    pub rsa: bool,
    /// An ECDSA certificate.
    pub ecdsa: bool,
}

impl Certs {
    /// RSA only (the common case).
    pub const RSA: Certs = Certs {
        rsa: true,
        ecdsa: false,
    };
    /// ECDSA only.
    pub const ECDSA: Certs = Certs {
        rsa: false,
        ecdsa: true,
    };
    /// Both (nginx and Apache can hold one of each).
    pub const BOTH: Certs = Certs {
        rsa: true,
        ecdsa: true,
    };

    /// The certificates a server must hold to have negotiated `suites` (their
    /// authentication); RSA when none of them tells (TLS 1.3 suites, unknown names).
    pub fn seen<'a>(suites: impl IntoIterator<Item = &'a crate::suite::Suite>) -> Certs {
        let mut certs = Certs {
            rsa: false,
            ecdsa: false,
        };
        for s in suites {
            match s.au.trim() {
                "RSA" => certs.rsa = true,
                "ECDSA" => certs.ecdsa = true,
                _ => {}
            }
        }
        if !certs.rsa && !certs.ecdsa {
            certs.rsa = true;
        }
        certs
    }

    /// `rsa`, `ecdsa` or `rsa+ecdsa`.
    pub fn as_str(self) -> &'static str {
        match (self.rsa, self.ecdsa) {
            (true, true) => "rsa+ecdsa",
            (false, true) => "ecdsa",
            _ => "rsa",
        }
    }

    /// Read `rsa`, `ecdsa`, `rsa+ecdsa` (or `both`).
    pub fn parse(s: &str) -> Option<Certs> {
        match s.to_ascii_lowercase().as_str() {
            "rsa" => Some(Certs::RSA),
            "ecdsa" => Some(Certs::ECDSA),
            "rsa+ecdsa" | "ecdsa+rsa" | "both" => Some(Certs::BOTH),
            _ => None,
        }
    }
}

/// A handshake that would succeed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Works {
    /// The protocol.
    pub protocol: Protocol,
    /// The suite.
    pub suite: &'static Suite,
    /// The key-exchange group, for ECDHE and TLS 1.3 when the offer logs groups.
    pub group: Option<&'static Group>,
}

/// Why a handshake would fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Failure {
    /// TLSv1.3 is on with no TLS 1.3 suite: the server fails every handshake
    /// ([`Policy::no_suite_for_newest_protocol`]).
    NoSuiteForNewestProtocol,
    /// No protocol both sides have.
    NoCommonProtocol,
    /// The client fell back below the server's newest protocol (`TLS_FALLBACK_SCSV`).
    InappropriateFallback,
    /// No suite both sides have for the chosen protocol (and certificate).
    NoCommonCipher,
    /// Suites in common, but no group for their key exchange.
    NoCommonGroup,
}

impl Failure {
    /// Every failure, in the order they are checked.
    pub const ALL: [Failure; 5] = [
        Failure::NoSuiteForNewestProtocol,
        Failure::NoCommonProtocol,
        Failure::InappropriateFallback,
        Failure::NoCommonCipher,
        Failure::NoCommonGroup,
    ];

    /// The machine name (`no_common_cipher`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Failure::NoSuiteForNewestProtocol => "no_suite_for_newest_protocol",
            Failure::NoCommonProtocol => "no_common_protocol",
            Failure::InappropriateFallback => "inappropriate_fallback",
            Failure::NoCommonCipher => "no_common_cipher",
            Failure::NoCommonGroup => "no_common_group",
        }
    }

    /// A sentence for people.
    pub fn describe(self) -> &'static str {
        match self {
            Failure::NoSuiteForNewestProtocol => {
                "TLSv1.3 is on with no TLS 1.3 suite: the server fails every handshake"
            }
            Failure::NoCommonProtocol => "no protocol version the client offers is enabled",
            Failure::InappropriateFallback => {
                "the client fell back to an older protocol (TLS_FALLBACK_SCSV)"
            }
            Failure::NoCommonCipher => "no cipher suite in common for the protocol",
            Failure::NoCommonGroup => "no key-exchange group in common",
        }
    }
}

/// The outcome of one offer under one policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// The handshake succeeds.
    Works(Works),
    /// It fails.
    Fails(Failure),
}

/// The curve an ECDSA certificate is assumed to be on: P-256 (`prime256v1`, `secp256r1`),
/// what nearly every ECDSA certificate uses.
pub const ECDSA_CERT_CURVE: u16 = 0x0017;

fn kx(suite: &Suite) -> &str {
    suite.kx.split('(').next().unwrap_or("").trim()
}

/// Whether the server can use `suite` at all with `certs` (no PSK/SRP set-up, no static
/// DH/ECDH certificates, no DSA certificate).
fn servable(suite: &Suite, certs: Certs) -> bool {
    let au_ok = match suite.au.trim() {
        "RSA" => certs.rsa,
        "ECDSA" => certs.ecdsa,
        "any" | "None" => true,
        _ => false,
    };
    let kx_ok = match kx(suite) {
        "RSA" => certs.rsa,
        "DH" | "ECDH" | "any" => true,
        _ => false,
    };
    au_ok && kx_ok
}

fn same(a: &Suite, b: &Suite) -> bool {
    a.code == b.code && a.sslv2_code == b.sslv2_code
}

/// The groups both sides have at the policy's level, in the preferred side's order.
fn shared_groups(policy: &Policy, offered: &[&'static Group], tls13: bool) -> Vec<&'static Group> {
    let floor = crate::cipherstring::min_bits(policy.seclevel.unwrap_or(0));
    let usable = |g: &Group| g.bits >= floor && (tls13 || g.tls12);
    let server = &policy.key_groups;
    if policy.prefer_server_ciphers {
        server
            .iter()
            .copied()
            .filter(|g| usable(g) && offered.iter().any(|o| o.code == g.code))
            .collect()
    } else {
        offered
            .iter()
            .copied()
            .filter(|g| usable(g) && server.iter().any(|s| s.code == g.code))
            .collect()
    }
}

/// Decide `offer` under `policy` for a server holding `certs`; `negotiated` is the
/// protocol the log shows for the request (a lower bound of what the client supports).
pub fn negotiate(
    policy: &Policy,
    certs: Certs,
    offer: &Offer,
    negotiated: Option<Protocol>,
) -> Outcome {
    if policy.no_suite_for_newest_protocol {
        return Outcome::Fails(Failure::NoSuiteForNewestProtocol);
    }
    let client = offer.protocols(negotiated);
    let Some(&version) = policy.protocols.iter().filter(|p| client.contains(p)).max() else {
        return Outcome::Fails(Failure::NoCommonProtocol);
    };
    let server_max = policy.protocols.iter().max().copied();
    if offer.fallback_scsv() && server_max.is_some_and(|m| m > version) {
        return Outcome::Fails(Failure::InappropriateFallback);
    }
    let offered_groups: Option<Vec<&'static Group>> = offer
        .groups
        .as_ref()
        .map(|gs| gs.iter().filter_map(|g| g.group).collect());
    let tls13 = version == Protocol::TlsV1_3;
    // Under TLS <= 1.2 OpenSSL uses the ECDSA certificate only if its curve is among the
    // client's supported groups (RFC 8422 §5.1; OpenSSL's `tls1_check_cert_param`), and
    // with an RSA certificate too falls back to that one. The curve is taken to be P-256
    // (the policy does not say); a client that sent no groups may get any curve.
    let ecdsa_curve_offered = offer
        .groups
        .as_ref()
        .is_none_or(|gs| gs.is_empty() || gs.iter().any(|g| g.code == Some(ECDSA_CERT_CURVE)));
    let certs = if tls13 || ecdsa_curve_offered {
        certs
    } else {
        Certs {
            ecdsa: false,
            ..certs
        }
    };
    let shared = offered_groups
        .as_deref()
        .map(|gs| shared_groups(policy, gs, tls13));
    let group_ok = |s: &Suite| -> bool {
        tls13 || kx(s) != "ECDH" || shared.as_ref().is_none_or(|sh| !sh.is_empty())
    };
    let server_list: &[&'static Suite] = if tls13 { &policy.tls13 } else { &policy.tls12 };
    let fits = |s: &Suite| -> bool {
        if tls13 {
            s.min_protocol == Protocol::TlsV1_3
        } else {
            s.min_protocol != Protocol::TlsV1_3
                && s.min_protocol <= version
                && servable(s, certs)
                && !(policy.no_dh_parameters && kx(s) == "DH")
        }
    };
    let offered: Vec<&'static Suite> = offer
        .ciphers
        .iter()
        .filter_map(|c| c.suite)
        .filter(|s| fits(s))
        .collect();
    let in_server = |s: &Suite| server_list.iter().any(|t| same(t, s));
    let in_client = |s: &Suite| offered.iter().any(|t| same(t, s));
    let candidates: Vec<&'static Suite> = if policy.prefer_server_ciphers {
        server_list
            .iter()
            .copied()
            .filter(|s| fits(s) && in_client(s))
            .collect()
    } else {
        offered.iter().copied().filter(|s| in_server(s)).collect()
    };
    let Some(&suite) = candidates.iter().find(|s| group_ok(s)) else {
        return Outcome::Fails(if candidates.is_empty() {
            Failure::NoCommonCipher
        } else {
            Failure::NoCommonGroup
        });
    };
    let group = if tls13 {
        match (&offered_groups, &shared) {
            (Some(gs), Some(sh)) => {
                let in_shared = |g: &Group| sh.iter().any(|s| s.code == g.code);
                // The key shares: the client's first group, and its second when the
                // first is a post-quantum hybrid (browsers send both).
                let shares = if gs.first().is_some_and(|g| g.post_quantum()) {
                    2
                } else {
                    1
                };
                let by_share = gs.iter().take(shares).find(|g| in_shared(g));
                // Else a HelloRetryRequest for the first shared group in the server's
                // order, whatever the preference (observed with nginx 1.22 and
                // OpenSSL 3.0, scripts/tls-offers.md).
                let by_retry = || policy.key_groups.iter().find(|g| in_shared(g));
                match by_share.or_else(by_retry) {
                    Some(g) => Some(*g),
                    None => return Outcome::Fails(Failure::NoCommonGroup),
                }
            }
            _ => None,
        }
    } else if kx(suite) == "ECDH" {
        shared.as_ref().and_then(|sh| sh.first().copied())
    } else {
        None
    };
    Outcome::Works(Works {
        protocol: version,
        suite,
        group,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nginx(directives: &str) -> Policy {
        Policy::from_config(directives).unwrap()
    }

    fn works(o: Outcome) -> (Protocol, String, Option<&'static str>) {
        match o {
            Outcome::Works(w) => (
                w.protocol,
                w.suite.openssl[0].clone(),
                w.group.map(|g| g.name),
            ),
            Outcome::Fails(f) => panic!("fails: {f:?}"),
        }
    }

    fn fails(o: Outcome) -> Failure {
        match o {
            Outcome::Fails(f) => f,
            Outcome::Works(w) => panic!("works: {w:?}"),
        }
    }

    #[test]
    fn client_or_server_preference() {
        let offer = Offer::parse(
            Some("ECDHE-RSA-AES256-SHA:ECDHE-RSA-CHACHA20-POLY1305:ECDHE-RSA-AES128-GCM-SHA256"),
            Some("prime256v1:X25519"),
            None,
            None,
        );
        let p = nginx("ssl_protocols TLSv1.2; ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305;");
        let (proto, suite, group) =
            works(negotiate(&p, Certs::RSA, &offer, Some(Protocol::TlsV1_2)));
        assert_eq!(proto, Protocol::TlsV1_2);
        assert_eq!(suite, "ECDHE-RSA-CHACHA20-POLY1305");
        assert_eq!(group, Some("prime256v1"));
        let p = nginx("ssl_protocols TLSv1.2; ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-CHACHA20-POLY1305; ssl_prefer_server_ciphers on;");
        let (_, suite, group) = works(negotiate(&p, Certs::RSA, &offer, Some(Protocol::TlsV1_2)));
        assert_eq!(suite, "ECDHE-RSA-AES128-GCM-SHA256");
        // Server order for the curve too: OpenSSL's default list starts with X25519.
        assert_eq!(group, Some("X25519"));
    }

    /// Real nginx 1.22.1 (OpenSSL 3.0) with TLSv1.2 and TLSv1.3 on and
    /// `ssl_conf_command Ciphersuites ""` failed every handshake, TLS 1.2 ones included.
    #[test]
    fn empty_ciphersuites_fail_every_handshake() {
        let p = nginx(
            "ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers HIGH; ssl_conf_command Ciphersuites \"\";",
        );
        let offer = Offer::parse(
            Some("ECDHE-RSA-AES128-GCM-SHA256:TLS_AES_128_GCM_SHA256"),
            Some("X25519"),
            None,
            None,
        );
        for v in [Protocol::TlsV1_2, Protocol::TlsV1_3] {
            assert_eq!(
                fails(negotiate(&p, Certs::RSA, &offer, Some(v))),
                Failure::NoSuiteForNewestProtocol
            );
        }
        let p =
            nginx("ssl_protocols TLSv1.2; ssl_ciphers HIGH; ssl_conf_command Ciphersuites \"\";");
        let (proto, _, _) = works(negotiate(&p, Certs::RSA, &offer, Some(Protocol::TlsV1_2)));
        assert_eq!(proto, Protocol::TlsV1_2);
    }

    /// Real nginx 1.22.1 (OpenSSL 3.0) with a P-256 ECDSA certificate refused a TLS 1.2
    /// client offering only secp384r1 (`handshake failure`; X25519 alone too), and with
    /// RSA and ECDSA certificates gave it `ECDHE-RSA-AES256-GCM-SHA384`: the ECDSA
    /// certificate needs P-256 among the client's groups.
    #[test]
    fn ecdsa_certificate_needs_its_curve_offered() {
        let p = nginx(
            "ssl_protocols TLSv1.2 TLSv1.3; ssl_ecdh_curve X25519:prime256v1:secp384r1; \
             ssl_ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:\
             ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:\
             ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305;",
        );
        let suites = "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:\
                      ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256";
        let tls12 = Some(Protocol::TlsV1_2);
        for groups in ["secp384r1", "X25519"] {
            let offer = Offer::parse(Some(suites), Some(groups), None, None);
            assert_eq!(
                fails(negotiate(&p, Certs::ECDSA, &offer, tls12)),
                Failure::NoCommonCipher,
                "{groups}"
            );
            let (_, suite, _) = works(negotiate(&p, Certs::BOTH, &offer, tls12));
            assert_eq!(suite, "ECDHE-RSA-AES256-GCM-SHA384", "{groups}");
        }
        let offer = Offer::parse(Some(suites), Some("prime256v1:secp384r1"), None, None);
        let (_, suite, _) = works(negotiate(&p, Certs::ECDSA, &offer, tls12));
        assert_eq!(suite, "ECDHE-ECDSA-AES256-GCM-SHA384");
        // Groups not logged: assumed to meet.
        let offer = Offer::parse(Some(suites), None, None, None);
        let (_, suite, _) = works(negotiate(&p, Certs::BOTH, &offer, tls12));
        assert_eq!(suite, "ECDHE-ECDSA-AES256-GCM-SHA384");
        // TLS 1.3 does not depend on it.
        let offer = Offer::parse(
            Some("TLS_AES_128_GCM_SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"),
            Some("secp384r1"),
            None,
            None,
        );
        let (proto, _, _) = works(negotiate(&p, Certs::ECDSA, &offer, None));
        assert_eq!(proto, Protocol::TlsV1_3);
    }

    #[test]
    fn failures() {
        let p = nginx("ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM;");
        let old = Offer::parse(Some("AES128-SHA:DES-CBC3-SHA"), None, None, None);
        assert_eq!(
            fails(negotiate(&p, Certs::RSA, &old, Some(Protocol::TlsV1))),
            Failure::NoCommonProtocol
        );
        let cbc = Offer::parse(Some("ECDHE-RSA-AES256-SHA:AES128-SHA256"), None, None, None);
        assert_eq!(
            fails(negotiate(&p, Certs::RSA, &cbc, Some(Protocol::TlsV1_2))),
            Failure::NoCommonCipher
        );
        // ECDSA suites against an RSA certificate.
        let ecdsa = Offer::parse(Some("ECDHE-ECDSA-AES128-GCM-SHA256"), None, None, None);
        assert_eq!(
            fails(negotiate(&p, Certs::RSA, &ecdsa, Some(Protocol::TlsV1_2))),
            Failure::NoCommonCipher
        );
        assert!(matches!(
            negotiate(&p, Certs::BOTH, &ecdsa, Some(Protocol::TlsV1_2)),
            Outcome::Works(_)
        ));
        // A curve the server does not have.
        let curve = Offer::parse(
            Some("ECDHE-RSA-AES128-GCM-SHA256"),
            Some("brainpoolP256r1"),
            None,
            None,
        );
        assert_eq!(
            fails(negotiate(&p, Certs::RSA, &curve, Some(Protocol::TlsV1_2))),
            Failure::NoCommonGroup
        );
        // TLS 1.3 does not fall back to TLS 1.2 when the groups do not meet.
        let t13 = Offer::parse(
            Some("TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256"),
            Some("ffdhe2048"),
            None,
            None,
        );
        let p384 = nginx(
            "ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM; ssl_ecdh_curve secp384r1;",
        );
        assert_eq!(
            fails(negotiate(&p384, Certs::RSA, &t13, Some(Protocol::TlsV1_3))),
            Failure::NoCommonGroup
        );
        let fallback = Offer::parse(Some("ECDHE-RSA-AES128-GCM-SHA256:0x5600"), None, None, None);
        let p13 = nginx("ssl_protocols TLSv1.2 TLSv1.3;");
        let fb = Offer::parse(
            Some("ECDHE-RSA-AES128-GCM-SHA256:TLS_FALLBACK_SCSV"),
            None,
            None,
            None,
        );
        assert_eq!(
            fails(negotiate(&p13, Certs::RSA, &fb, Some(Protocol::TlsV1_2))),
            Failure::InappropriateFallback
        );
        assert_eq!(
            fails(negotiate(
                &p13,
                Certs::RSA,
                &fallback,
                Some(Protocol::TlsV1_2)
            )),
            Failure::InappropriateFallback
        );
    }

    #[test]
    fn tls13_group_choice_and_seclevel() {
        let p = nginx("ssl_protocols TLSv1.2 TLSv1.3;");
        let o = Offer::parse(
            Some("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256"),
            Some("X448:secp521r1"),
            None,
            None,
        );
        let (proto, suite, group) = works(negotiate(&p, Certs::RSA, &o, Some(Protocol::TlsV1_3)));
        assert_eq!(
            (proto, suite.as_str(), group),
            (
                Protocol::TlsV1_3,
                "TLS_CHACHA20_POLY1305_SHA256",
                Some("X448")
            )
        );
        // The first group not in the server's list: a HelloRetryRequest for a shared one.
        let hrr = Offer::parse(
            Some("TLS_AES_128_GCM_SHA256"),
            Some("brainpoolP256r1:secp384r1"),
            None,
            None,
        );
        assert_eq!(
            works(negotiate(&p, Certs::RSA, &hrr, None)).2,
            Some("secp384r1")
        );
        // A HelloRetryRequest follows the server's order even without server
        // preference (as nginx 1.22 did with `ssl_ecdh_curve prime256v1:secp521r1:X25519`).
        let p = nginx("ssl_protocols TLSv1.2 TLSv1.3; ssl_ecdh_curve prime256v1:secp521r1:X25519;");
        let o = Offer::parse(
            Some("TLS_AES_128_GCM_SHA256"),
            Some("X448:secp521r1:prime256v1"),
            None,
            None,
        );
        assert_eq!(
            works(negotiate(&p, Certs::RSA, &o, None)).2,
            Some("prime256v1")
        );
        // A browser's second key share (X25519 after X25519MLKEM768) is used when the
        // server lacks the hybrid.
        let browser = Offer::parse(
            Some("TLS_AES_128_GCM_SHA256"),
            Some("0x11ec:X25519:prime256v1"),
            None,
            None,
        );
        assert_eq!(
            works(negotiate(&p, Certs::RSA, &browser, None)).2,
            Some("X25519")
        );
        let p = nginx("ssl_protocols TLSv1.2 TLSv1.3;");
        // Security level 3 (128 bits) refuses ffdhe2048 (112).
        let dh = Offer::parse(
            Some("TLS_AES_128_GCM_SHA256"),
            Some("ffdhe2048"),
            None,
            None,
        );
        assert!(matches!(
            negotiate(&p, Certs::RSA, &dh, None),
            Outcome::Works(_)
        ));
        let p3 = nginx("ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers HIGH:@SECLEVEL=3;");
        assert_eq!(
            fails(negotiate(&p3, Certs::RSA, &dh, None)),
            Failure::NoCommonGroup
        );
    }

    #[test]
    fn certs_parse() {
        for c in [Certs::RSA, Certs::ECDSA, Certs::BOTH] {
            assert_eq!(Certs::parse(c.as_str()), Some(c));
        }
        assert_eq!(Certs::parse("dsa"), None);
    }
}
