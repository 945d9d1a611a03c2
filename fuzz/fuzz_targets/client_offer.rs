//! A client's logged offer on arbitrary input (what `whatif` reads from `$ssl_ciphers`,
//! `$ssl_curves` and httpd's `SSL_CLIENTHELLO_*`), negotiated under a few policies:
//! never a panic; a handshake that works picks a suite both sides have, for a protocol
//! both sides have, and a group both sides have; the export's list split never loses
//! a byte of an item.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_ciphers::handshake::{negotiate, Certs, Outcome};
use tlsgap_ciphers::offer::Offer;
use tlsgap_ciphers::policy::Policy;
use tlsgap_ciphers::Protocol;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut fields = text.split('\n');
    let mut next = || fields.next();
    let (c, g, vs, v) = (next(), next(), next(), next());
    let offer = Offer::parse(c, g, vs, v);
    for item in tlsgap_agg::export::list_items(text, 4) {
        assert!(text.contains(item));
    }
    static POLICIES: std::sync::OnceLock<[Option<Policy>; 3]> = std::sync::OnceLock::new();
    let policies = POLICIES.get_or_init(|| [
        Policy::mozilla("mozilla-intermediate").ok(),
        Policy::from_config(
            "ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3; ssl_ciphers ALL:@SECLEVEL=0;",
        )
        .ok(),
        Policy::from_config(
            "ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM; \
             ssl_prefer_server_ciphers on; ssl_ecdh_curve secp384r1:X25519;",
        )
        .ok(),
    ]);
    for policy in policies.iter().flatten() {
        for certs in [Certs::RSA, Certs::ECDSA, Certs::BOTH] {
            for negotiated in [None, Some(Protocol::TlsV1), Some(Protocol::TlsV1_3)] {
                let Outcome::Works(w) = negotiate(policy, certs, &offer, negotiated) else {
                    continue;
                };
                assert!(policy.protocols.contains(&w.protocol));
                assert!(offer.protocols(negotiated).contains(&w.protocol));
                let list = if w.protocol == Protocol::TlsV1_3 {
                    &policy.tls13
                } else {
                    &policy.tls12
                };
                assert!(list.iter().any(|s| s.code == w.suite.code));
                assert!(offer.ciphers.iter().any(|c| c.suite.is_some_and(|s| s.code == w.suite.code)));
                if let Some(group) = w.group {
                    assert!(policy.key_groups.iter().any(|k| k.code == group.code));
                    assert!(offer.group_codes().is_some_and(|gs| gs.contains(&group.code)));
                }
            }
        }
    }
});
