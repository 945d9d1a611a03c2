//! DH parameter files (what `ssl_dhparam` or `SSLOpenSSLConfCmd DHParameters` name,
//! read by `whatif --policy`) on arbitrary input: never a panic; parameters read have
//! a prime of at least one bit and a strength OpenSSL can give; a policy holding them
//! to its level either takes them (and says what they are) or says the server would
//! not start.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_ciphers::dhparams;
use tlsgap_ciphers::policy::Policy;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = dhparams::parse(text) {
        assert!(p.prime_bits > 0);
        let bits = p.security_bits();
        assert!(bits == 0 || (80..=256).contains(&bits), "{bits}");
        assert!(p.exponent_bits != Some(0));
    }
    // Built once (a policy takes longer to build than a file to check).
    static POLICIES: std::sync::OnceLock<Vec<Policy>> = std::sync::OnceLock::new();
    let policies = POLICIES.get_or_init(|| {
        [
            "ssl_dhparam dh.pem;",
            "ssl_ciphers HIGH:@SECLEVEL=0;\nssl_dhparam dh.pem;",
            "SSLCipherSuite HIGH:@SECLEVEL=3\nSSLOpenSSLConfCmd DHParameters dh.pem",
        ]
        .iter()
        .map(|d| Policy::from_config(d).expect("a policy"))
        .collect()
    });
    for policy in policies {
        let mut policy = policy.clone();
        match policy.check_dh_parameters(Ok(text)) {
            Ok(()) => assert!(policy.dh_parameters.is_some()),
            Err(e) => assert!(e.to_string().contains("would")),
        }
    }
});
