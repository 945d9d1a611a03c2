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

/// A User-Agent classifier. Building it compiles uap-core's user-agent patterns and
/// its few `Spider` device patterns; the other ~620 device patterns (phones, tablets)
/// are compiled only when a User-Agent needs them (see [`Classifier::kind`]): they
/// were most of the cost of building.
pub struct Classifier {
    ua: ua_parser::user_agent::Extractor<'static>,
    /// The `Spider` device patterns that come first in the dataset, before any other.
    leading_spiders: ua_parser::device::Extractor<'static>,
    /// The other `Spider` device patterns (the generic "bot|crawl|spider|..." one).
    later_spiders: ua_parser::device::Extractor<'static>,
    /// Every device pattern, compiled on first need (`None`: it failed to build).
    devices: std::cell::OnceCell<Option<ua_parser::device::Extractor<'static>>>,
}

impl std::fmt::Debug for Classifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Classifier")
    }
}

const DATA: &str = include_str!("../data/uap-core/regexes.json");

fn dataset_error(e: &dyn std::fmt::Display) -> crate::Error {
    crate::err!("the User-Agent dataset: {e}")
}

fn devices<'a>(
    parsers: impl IntoIterator<Item = ua_parser::device::Parser<'a>>,
) -> crate::Result<ua_parser::device::Extractor<'a>> {
    ua_parser::device::Builder::new()
        .push_all(parsers)
        .map_err(|e| dataset_error(&e))?
        .build()
        .map_err(|e| dataset_error(&e))
}

impl Classifier {
    /// Load the vendored dataset.
    pub fn new() -> crate::Result<Classifier> {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA)?;
        let ua = ua_parser::user_agent::Builder::new()
            .push_all(regexes.user_agent_parsers)
            .map_err(|e| dataset_error(&e))?
            .build()
            .map_err(|e| dataset_error(&e))?;
        let spider =
            |p: &ua_parser::device::Parser<'_>| p.device_replacement.as_deref() == Some("Spider");
        let mut parsers = regexes.device_parsers.into_iter();
        let mut leading = Vec::new();
        let mut later = Vec::new();
        for p in parsers.by_ref() {
            if spider(&p) {
                leading.push(p);
            } else {
                break;
            }
        }
        later.extend(parsers.filter(spider));
        Ok(Classifier {
            ua,
            leading_spiders: devices(leading)?,
            later_spiders: devices(later)?,
            devices: std::cell::OnceCell::new(),
        })
    }

    /// Whether uap-core's device answer is `Spider`, i.e. the first device pattern
    /// that matches names it. A leading spider pattern matches: yes. No spider pattern
    /// matches: no. Only a later one does: an earlier pattern (a phone, a Kindle
    /// whose browser is "Silk") may match first, so the whole set answers.
    fn spider(&self, user_agent: &str) -> bool {
        if self.leading_spiders.extract(user_agent).is_some() {
            return true;
        }
        if self.later_spiders.extract(user_agent).is_none() {
            return false;
        }
        let all = self.devices.get_or_init(|| {
            let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).ok()?;
            devices(regexes.device_parsers).ok()
        });
        match all {
            Some(d) => d.extract(user_agent).is_some_and(|v| v.device == "Spider"),
            // Not reached (the dataset built in `new` and in the tests).
            None => true,
        }
    }

    /// The kind of client a User-Agent names.
    pub fn kind(&self, user_agent: &str) -> ClientKind {
        let family = self.ua.extract(user_agent).map(|v| v.family.to_string());
        if let Some(f) = &family {
            if LIBRARY_FAMILIES.iter().any(|l| l.eq_ignore_ascii_case(f)) {
                return ClientKind::Library;
            }
        }
        if self.spider(user_agent) {
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

    /// The spider check without the phone and tablet patterns gives uap-core's own
    /// answer (the first device pattern that matches) on every distinct User-Agent of
    /// the sample log and on User-Agents where the order matters.
    #[test]
    fn the_spider_check_agrees_with_the_whole_device_set() {
        use std::io::Read;
        let c = Classifier::new().unwrap();
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let all = devices(regexes.device_parsers).unwrap();
        let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/sample/combinedssl.log.gz");
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(sample).unwrap())
            .read_to_end(&mut bytes)
            .unwrap();
        // The sample has a few damaged lines on purpose.
        let text = String::from_utf8_lossy(&bytes);
        let mut uas: Vec<&str> = text
            .lines()
            .filter_map(|l| l.split('"').nth(5))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert!(uas.len() > 100, "{} User-Agents", uas.len());
        uas.extend([
            // Amazon Kindle: "Silk" is in the generic spider pattern, the Kindle one
            // comes first.
            "Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/112.3.1 like Chrome/112.0.5615.213 Safari/537.36",
            "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.199 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
            "Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 yahoo",
            "Python-urllib/3.11",
            "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
            "WhatsApp/2.23.20.0 A",
            "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1 Scrapy",
        ]);
        let mut lazy_needed = 0;
        for ua in &uas {
            let want = all.extract(ua).is_some_and(|v| v.device == "Spider");
            assert_eq!(c.spider(ua), want, "{ua}");
            if c.leading_spiders.extract(ua).is_none() && c.later_spiders.extract(ua).is_some() {
                lazy_needed += 1;
            }
        }
        // The order case is exercised (the Kindle at least).
        assert!(lazy_needed >= 1);
    }
}
