//! OpenSSL cipher strings and pasted server directives on arbitrary input (what
//! `tlsgap whatif --policy` reads): never a panic; an evaluated order only names
//! suites of the catalogue, each once; a policy decides every logged pair.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_ciphers::catalogue;
use tlsgap_ciphers::cipherstring::evaluate_over;
use tlsgap_ciphers::policy::Policy;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let suites = catalogue::all();
    if let Ok(ev) = evaluate_over(text, suites, 2) {
        let mut seen = std::collections::HashSet::new();
        for &i in &ev.order {
            assert!(i < suites.len(), "index out of the catalogue");
            assert!(seen.insert(i), "suite {i} twice in the order");
        }
    }
    if let Ok(policy) = Policy::from_config(text) {
        for (p, c) in [
            ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
            ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
            ("SSLv2", "RC4-MD5"),
            ("TLSv1", "no-such-suite"),
        ] {
            let _ = policy.decide(p, c);
        }
    }
});
