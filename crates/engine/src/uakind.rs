//! Client kind from a User-Agent: the uap-core dataset (vendored in
//! `crates/engine/data/uap-core`, see `scripts/vendor-uap-core.py`) run by the
//! `ua-parser` crate, then a mapping of its answers to tlsgap's four kinds:
//!
//! - `bot`: uap-core's device family `Spider` (its crawler/bot verdict), unless the
//!   browser family is one of the HTTP libraries below (uap-core files some libraries,
//!   e.g. `Python-urllib` and `Java`, under `Spider` too);
//! - `library`: the user-agent family is an HTTP library or command-line tool uap-core
//!   names (curl, Wget, Python Requests, Go-http-client, okhttp, ...);
//! - `browser`: any other family uap-core recognises;
//! - `unknown`: uap-core's `Other`, or no User-Agent.

use tlsgap_agg::whatif::ClientKind;

/// uap-core user-agent families that are HTTP libraries or command-line clients.
const LIBRARY_FAMILIES: &[&str] = &[
    "curl",
    "Wget",
    "Python Requests",
    "Python-urllib",
    "Python aiohttp",
    "python-httpx",
    "Go-http-client",
    "okhttp",
    "Java",
    "Apache-HttpClient",
    "libwww-perl",
    "axios",
    "HTTPie",
    "PycURL",
    "Guzzle",
    "Ruby",
    "PHP",
    "node-fetch",
    "undici",
    "aiohttp",
    "Dart",
    "reqwest",
    "Wget2",
];

/// A User-Agent classifier (building it compiles the dataset: ~0.1 s).
pub struct Classifier {
    ua: ua_parser::user_agent::Extractor<'static>,
    device: ua_parser::device::Extractor<'static>,
}

impl std::fmt::Debug for Classifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Classifier")
    }
}

const DATA: &str = include_str!("../data/uap-core/regexes.json");

impl Classifier {
    /// Load the vendored dataset.
    pub fn new() -> crate::Result<Classifier> {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA)?;
        let bad = |e: &dyn std::fmt::Display| crate::err!("the User-Agent dataset: {e}");
        let ua = ua_parser::user_agent::Builder::new()
            .push_all(regexes.user_agent_parsers)
            .map_err(|e| bad(&e))?
            .build()
            .map_err(|e| bad(&e))?;
        let device = ua_parser::device::Builder::new()
            .push_all(regexes.device_parsers)
            .map_err(|e| bad(&e))?
            .build()
            .map_err(|e| bad(&e))?;
        Ok(Classifier { ua, device })
    }

    /// The kind of client a User-Agent names.
    pub fn kind(&self, user_agent: &str) -> ClientKind {
        let family = self.ua.extract(user_agent).map(|v| v.family.to_string());
        if let Some(f) = &family {
            if LIBRARY_FAMILIES.iter().any(|l| l.eq_ignore_ascii_case(f)) {
                return ClientKind::Library;
            }
        }
        let spider = self
            .device
            .extract(user_agent)
            .is_some_and(|d| d.device == "Spider");
        if spider {
            return ClientKind::Bot;
        }
        match family {
            Some(f) if f != "Other" => ClientKind::Browser,
            _ => ClientKind::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_common_clients() {
        let c = Classifier::new().unwrap();
        for (ua, kind) in [
            ("curl/8.5.0", ClientKind::Library),
            ("python-requests/2.31.0", ClientKind::Library),
            ("Go-http-client/1.1", ClientKind::Library),
            ("okhttp/4.12.0", ClientKind::Library),
            ("Wget/1.21.3", ClientKind::Library),
            ("Python-urllib/3.11", ClientKind::Library),
            ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", ClientKind::Bot),
            ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", ClientKind::Bot),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", ClientKind::Browser),
            ("Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0", ClientKind::Browser),
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1", ClientKind::Browser),
            ("xyzzy", ClientKind::Unknown),
            ("", ClientKind::Unknown),
        ] {
            assert_eq!(c.kind(ua), kind, "{ua}");
        }
    }
}
