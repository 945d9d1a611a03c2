//! Client kind from a User-Agent: the uap-core dataset (vendored in
//! `crates/engine/data/uap-core`, see `scripts/vendor-uap-core.py`), read with the
//! `ua-parser` crate and answered as that crate answers it (each pattern compiled
//! alone, module `uapattern`; the tests hold the answers to the crate's own), then
//! a mapping of its answers to tlsgap's four kinds:
//!
//! - `bot`: uap-core's device family `Spider` (its crawler/bot verdict), unless the
//!   browser family is one of the HTTP libraries below (uap-core files some libraries,
//!   e.g. `Python-urllib` and `Java`, under `Spider` too);
//! - `library`: the user-agent family is an HTTP library or command-line tool uap-core
//!   names (curl, Wget, Python Requests, Go-http-client, okhttp, ...);
//! - `browser`: any other family uap-core recognises;
//! - `unknown`: uap-core's `Other`, or no User-Agent.

use tlsgap_agg::whatif::ClientKind;

use crate::uapattern::UapPattern;

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
/// its few `Spider` device patterns; of the other ~620 device patterns (phones,
/// tablets), needed only when a User-Agent matches a spider pattern that comes after
/// them, each is compiled only when a User-Agent contains what the pattern needs to
/// match (see [`Classifier::kind`]): compiling them all was most of the cost of
/// `whatif` and `report` on small logs (issue 12).
pub struct Classifier {
    /// uap-core's user-agent patterns, each compiled on first need.
    families: Families,
    /// The `Spider` device patterns that come first in the dataset, before any other.
    leading_spiders: Vec<UapPattern>,
    /// The other `Spider` device patterns (the generic "bot|crawl|spider|..." one),
    /// each alone, with its place in the dataset, in dataset order.
    later_spiders: Vec<(usize, UapPattern)>,
    /// The other device patterns before the last later spider pattern, prepared on
    /// first need.
    earlier: std::cell::OnceCell<Vec<Earlier>>,
}

/// A device pattern that is not a spider's, before a later spider pattern.
struct Earlier {
    /// Its place in the dataset.
    index: usize,
    parser: ua_parser::device::Parser<'static>,
    /// What a User-Agent must contain for the pattern to match.
    need: Need,
    /// The pattern alone, compiled on first need (`None`: it failed to build).
    compiled: std::cell::OnceCell<Option<UapPattern>>,
}

/// What a User-Agent must contain for a pattern to match: for every set here, one of
/// its literals. The sets come from `regex-syntax`'s literal extraction (the one the
/// `regex` crate's own prefilters rely on): the whole pattern's prefixes and suffixes,
/// and, when the pattern is a sequence of parts, the prefixes of each tail of that
/// sequence (any match contains a match of every tail, which starts with one of the
/// tail's prefixes). Empty: nothing known (the pattern is always tried).
#[derive(Debug, Clone)]
struct Need {
    sets: Vec<Vec<Vec<u8>>>,
    /// Per set, a searcher per literal, built when the set is first checked (a search
    /// built one per call, and each User-Agent checks many patterns' needs; sets never
    /// reached, most device patterns' after the first, get none: 288 bytes each).
    finders: Vec<std::cell::OnceCell<Vec<memchr::memmem::Finder<'static>>>>,
}

impl PartialEq for Need {
    fn eq(&self, other: &Need) -> bool {
        self.sets == other.sets
    }
}

impl Eq for Need {}

/// At most this many sets are kept per pattern (the ones with the longest literals).
const NEED_SETS: usize = 4;
/// Sets of more literals than this are left out.
const MAX_NEED_LITERALS: usize = 32;

impl Need {
    fn from_sets(sets: Vec<Vec<Vec<u8>>>) -> Need {
        let finders = sets.iter().map(|_| std::cell::OnceCell::new()).collect();
        Need { sets, finders }
    }

    /// From a device pattern as the dataset writes it (`ua-parser` compiles it after
    /// turning `{0,N}`/`{1,N}` with N of three digits or more into `*`/`+`; literal
    /// extraction reads only a repetition's minimum, so it gives the same sets: the
    /// test `what_a_pattern_needs_survives_the_repetition_rewrite` checks it pattern
    /// by pattern).
    fn of(regex: &str, ignore_case: bool) -> Need {
        use regex_syntax::hir::literal::ExtractKind;
        use regex_syntax::hir::{Hir, HirKind};
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(ignore_case)
            .build()
            .parse(regex);
        let Ok(hir) = hir else {
            return Need::from_sets(Vec::new());
        };
        let mut sets: Vec<Vec<Vec<u8>>> = Vec::new();
        sets.extend(need_literals(&hir, ExtractKind::Prefix));
        sets.extend(need_literals(&hir, ExtractKind::Suffix));
        let mut top = &hir;
        while let HirKind::Capture(c) = top.kind() {
            top = &c.sub;
        }
        if let HirKind::Concat(parts) = top.kind() {
            // Tails that start where a run of literal parts starts (a tail that starts
            // inside a run needs less than the one at the run's start).
            let literal = |h: &Hir| matches!(h.kind(), HirKind::Literal(_) | HirKind::Class(_));
            let mut previous_literal = true;
            for i in 1..parts.len() {
                let Some(part) = parts.get(i) else { break };
                let inside_run = literal(part) && previous_literal;
                previous_literal = literal(part);
                if inside_run {
                    continue;
                }
                let tail = Hir::concat(parts.get(i..).unwrap_or_default().to_vec());
                sets.extend(need_literals(&tail, ExtractKind::Prefix));
            }
        }
        // Strongest first (longest shortest literal, then fewest literals): a User-Agent
        // without any of them is turned away after one set.
        let strength = |set: &Vec<Vec<u8>>| {
            let shortest = set.iter().map(Vec::len).min().unwrap_or(0);
            (std::cmp::Reverse(shortest), set.len())
        };
        sets.sort_by_key(strength);
        sets.dedup();
        sets.truncate(NEED_SETS);
        Need::from_sets(sets)
    }

    fn may_match(&self, ua: &[u8]) -> bool {
        self.sets.iter().zip(&self.finders).all(|(set, finders)| {
            finders
                .get_or_init(|| {
                    set.iter()
                        .map(|l| memchr::memmem::Finder::new(l).into_owned())
                        .collect()
                })
                .iter()
                .any(|f| f.find(ua).is_some())
        })
    }
}

/// The literals of which every match of `hir` contains one, when they are a finite
/// set without the empty string.
fn need_literals(
    hir: &regex_syntax::hir::Hir,
    kind: regex_syntax::hir::literal::ExtractKind,
) -> Option<Vec<Vec<u8>>> {
    let seq = regex_syntax::hir::literal::Extractor::new()
        .kind(kind)
        .extract(hir);
    let lits = seq.literals()?;
    // A set of many literals (the case variants of a case-insensitive word) is a weak
    // condition that costs many searches: left out.
    if lits.len() > MAX_NEED_LITERALS || lits.iter().any(|l| l.as_bytes().is_empty()) {
        return None;
    }
    // Literals are kept as text (they are stored in `device-needs.json`): a set with
    // a literal cut inside a character is left out (leaving a condition out is safe).
    if lits
        .iter()
        .any(|l| std::str::from_utf8(l.as_bytes()).is_err())
    {
        return None;
    }
    let mut out: Vec<Vec<u8>> = lits.iter().map(|l| l.as_bytes().to_vec()).collect();
    out.sort();
    out.dedup();
    Some(out)
}

fn is_spider(p: &ua_parser::device::Parser<'_>) -> bool {
    p.device_replacement.as_deref() == Some("Spider")
}

/// A device pattern compiled alone ([`UapPattern`]; `None`: it does not build).
fn device_pattern(p: &ua_parser::device::Parser<'_>) -> Option<UapPattern> {
    UapPattern::device(
        &p.regex,
        p.regex_flag.is_some(),
        p.device_replacement.as_deref(),
    )
}

/// One user-agent pattern, with what a User-Agent must hold for it to match.
struct Family {
    parser: ua_parser::user_agent::Parser<'static>,
    need: Need,
    /// The pattern alone, compiled on first need (`None`: it failed to build).
    compiled: std::cell::OnceCell<Option<UapPattern>>,
}

/// What each user-agent pattern needs ([`Need::of`]), stored like [`NEEDS`].
const UA_NEEDS: &str = include_str!("../data/uap-core/ua-needs.json");

/// The user-agent patterns, and an automaton over the first set of literals each needs.
struct Families {
    /// In dataset order.
    patterns: Vec<Family>,
    /// The first needed set of every pattern that has one, all literals together.
    first_literals: Option<aho_corasick::AhoCorasick>,
    /// For each literal of `first_literals`, its pattern.
    owner: Vec<usize>,
    /// The patterns that need nothing known: always tried.
    always: Vec<usize>,
}

/// The user-agent patterns in dataset order, with their stored needs (a pattern that
/// differs from the stored one is worked out afresh).
fn families(parsers: Vec<ua_parser::user_agent::Parser<'static>>) -> Families {
    let stored: Vec<StoredNeed> = serde_json::from_str(UA_NEEDS).unwrap_or_default();
    let patterns: Vec<Family> = parsers
        .into_iter()
        .enumerate()
        .map(|(index, parser)| Family {
            need: stored_or_fresh(&stored, index, &parser.regex, false),
            parser,
            compiled: std::cell::OnceCell::new(),
        })
        .collect();
    let mut literals: Vec<&[u8]> = Vec::new();
    let mut owner = Vec::new();
    let mut always = Vec::new();
    for (i, p) in patterns.iter().enumerate() {
        match p.need.sets.first() {
            Some(set) => {
                for l in set {
                    literals.push(l);
                    owner.push(i);
                }
            }
            None => always.push(i),
        }
    }
    let first_literals = aho_corasick::AhoCorasick::builder()
        .match_kind(aho_corasick::MatchKind::Standard)
        .build(&literals)
        .ok();
    if first_literals.is_none() {
        // Not reached (literals always build); then every pattern is tried.
        always = (0..patterns.len()).collect();
    }
    Families {
        patterns,
        first_literals,
        owner,
        always,
    }
}

/// The stored need of the pattern at `index` when its text is `regex`, else worked out.
fn stored_or_fresh(stored: &[StoredNeed], index: usize, regex: &str, ignore_case: bool) -> Need {
    match stored.iter().find(|n| n.index == index) {
        Some(n) if n.regex == regex => Need::from_sets(
            n.sets
                .iter()
                .map(|set| set.iter().map(|l| l.as_bytes().to_vec()).collect())
                .collect(),
        ),
        _ => Need::of(regex, ignore_case),
    }
}

/// Stored needs of the given patterns (index, text, case-insensitive).
#[cfg(test)]
fn needs_to_store<'a>(patterns: impl Iterator<Item = (usize, &'a str, bool)>) -> Vec<StoredNeed> {
    patterns
        .map(|(index, regex, ic)| StoredNeed {
            index,
            regex: regex.to_string(),
            sets: Need::of(regex, ic)
                .sets
                .into_iter()
                .map(|set| {
                    set.into_iter()
                        .map(|l| String::from_utf8_lossy(&l).into_owned())
                        .collect()
                })
                .collect(),
        })
        .collect()
}

/// What each non-spider device pattern needs, worked out once from the dataset by
/// [`Need::of`] and stored (`data/uap-core/device-needs.json`), so that a run does not
/// parse ~620 patterns again (that took as long as compiling the few that are needed).
/// The test `stored_needs_are_those_of_the_dataset` recomputes it and, with
/// `TLSGAP_WRITE_DEVICE_NEEDS=1`, writes it after a dataset update.
const NEEDS: &str = include_str!("../data/uap-core/device-needs.json");

/// One pattern's stored [`Need`]: its place in the dataset and its text (a pattern
/// that differs from the dataset's is worked out afresh).
#[derive(Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct StoredNeed {
    index: usize,
    regex: String,
    sets: Vec<Vec<String>>,
}

/// Every non-spider device pattern before the last spider pattern, with its need.
#[cfg(test)]
fn stored_needs(regexes: &ua_parser::Regexes<'_>) -> Vec<StoredNeed> {
    let last = regexes
        .device_parsers
        .iter()
        .rposition(is_spider)
        .unwrap_or(0);
    needs_to_store(
        regexes
            .device_parsers
            .iter()
            .enumerate()
            .take(last)
            .filter(|(_, p)| !is_spider(p))
            .map(|(i, p)| (i, p.regex.as_ref(), p.regex_flag.is_some())),
    )
}

/// The non-spider device patterns before `last` (the place of the last later spider
/// pattern), with what each needs.
fn earlier_patterns(last: usize) -> Vec<Earlier> {
    let Ok(regexes) = serde_json::from_str::<ua_parser::Regexes<'static>>(DATA) else {
        return Vec::new();
    };
    let stored: Vec<StoredNeed> = serde_json::from_str(NEEDS).unwrap_or_default();
    regexes
        .device_parsers
        .into_iter()
        .enumerate()
        .take(last)
        .filter(|(_, p)| !is_spider(p))
        .map(|(index, parser)| Earlier {
            index,
            need: stored_or_fresh(&stored, index, &parser.regex, parser.regex_flag.is_some()),
            parser,
            compiled: std::cell::OnceCell::new(),
        })
        .collect()
}

impl std::fmt::Debug for Classifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Classifier")
    }
}

const DATA: &str = include_str!("../data/uap-core/regexes.json");

/// The spider pattern `p`, compiled, or the error that the dataset is broken.
fn spider_pattern(p: &ua_parser::device::Parser<'_>) -> crate::Result<UapPattern> {
    device_pattern(p).ok_or_else(|| {
        crate::err!(
            "the User-Agent dataset: the spider pattern {:?} does not build",
            p.regex
        )
    })
}

/// The whole device set as `ua-parser` builds it (the tests' reference).
#[cfg(test)]
fn devices<'a>(
    parsers: impl IntoIterator<Item = ua_parser::device::Parser<'a>>,
) -> crate::Result<ua_parser::device::Extractor<'a>> {
    let error = |e: &dyn std::fmt::Display| crate::err!("the User-Agent dataset: {e}");
    ua_parser::device::Builder::new()
        .push_all(parsers)
        .map_err(|e| error(&e))?
        .build()
        .map_err(|e| error(&e))
}

impl Classifier {
    /// Load the vendored dataset.
    pub fn new() -> crate::Result<Classifier> {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA)?;
        let families = families(regexes.user_agent_parsers);
        let mut parsers = regexes.device_parsers.into_iter().enumerate();
        let mut leading = Vec::new();
        let mut later = Vec::new();
        for (_, p) in parsers.by_ref() {
            if is_spider(&p) {
                leading.push(spider_pattern(&p)?);
            } else {
                break;
            }
        }
        for (i, p) in parsers.filter(|(_, p)| is_spider(p)) {
            later.push((i, spider_pattern(&p)?));
        }
        Ok(Classifier {
            families,
            leading_spiders: leading,
            later_spiders: later,
            earlier: std::cell::OnceCell::new(),
        })
    }

    /// Whether uap-core's device answer is `Spider`, i.e. the first device pattern
    /// that matches names it. A leading spider pattern matches: yes. No spider pattern
    /// matches: no. Only a later one does (the first of them at place `k`): an earlier
    /// pattern (a phone, a Kindle whose browser is "Silk") may match first, so those
    /// before `k` are tried in order, each only if the User-Agent holds what it needs.
    fn spider(&self, user_agent: &str) -> bool {
        if self.leading_spiders.iter().any(|p| p.matches(user_agent)) {
            return true;
        }
        let Some(k) = self
            .later_spiders
            .iter()
            .find(|(_, e)| e.matches(user_agent))
            .map(|(i, _)| *i)
        else {
            return false;
        };
        let last = self.later_spiders.last().map_or(0, |(i, _)| *i);
        let earlier = self.earlier.get_or_init(|| earlier_patterns(last));
        for e in earlier.iter().take_while(|e| e.index < k) {
            if !e.need.may_match(user_agent.as_bytes()) {
                continue;
            }
            let compiled = e.compiled.get_or_init(|| device_pattern(&e.parser));
            match compiled {
                Some(d) => {
                    if let Some(device) = d.name(user_agent) {
                        return device == "Spider";
                    }
                }
                // Not reached (the whole dataset builds in the tests).
                None => return true,
            }
        }
        true
    }

    /// uap-core's user-agent family: that of the first pattern that matches. The
    /// patterns tried are those whose first needed literals the User-Agent holds (one
    /// Aho-Corasick pass finds them) and those that need nothing, in dataset order, each
    /// compiled on first need.
    fn family(&self, user_agent: &str) -> Option<String> {
        let f = &self.families;
        let mut candidates: Vec<usize> = f.always.clone();
        if let Some(ac) = &f.first_literals {
            for m in ac.find_overlapping_iter(user_agent) {
                if let Some(&i) = f.owner.get(m.pattern().as_usize()) {
                    candidates.push(i);
                }
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        for i in candidates {
            let Some(p) = f.patterns.get(i) else { continue };
            if !p.need.may_match(user_agent.as_bytes()) {
                continue;
            }
            let compiled = p.compiled.get_or_init(|| {
                UapPattern::family(&p.parser.regex, p.parser.family_replacement.as_deref())
            });
            if let Some(family) = compiled.as_ref().and_then(|e| e.name(user_agent)) {
                return Some(family);
            }
        }
        None
    }

    /// The kind of client a User-Agent names.
    pub fn kind(&self, user_agent: &str) -> ClientKind {
        let family = self.family(user_agent);
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

    /// The distinct User-Agents of the sample log (which has a few damaged lines on
    /// purpose).
    fn sample_user_agents() -> Vec<String> {
        use std::io::Read;
        let sample = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
        )
        .join("../../testdata/sample/combinedssl.log.gz");
        let mut bytes = Vec::new();
        flate2::read::GzDecoder::new(std::fs::File::open(sample).unwrap())
            .read_to_end(&mut bytes)
            .unwrap();
        let uas: Vec<String> = String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|l| l.split('"').nth(5))
            .map(str::to_string)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert!(uas.len() > 100, "{} User-Agents", uas.len());
        uas
    }

    /// User-Agents as hostile logs hold them: terminal escapes, non-ASCII and
    /// replacement characters, regex and replacement syntax, a very long one.
    fn odd_user_agents() -> Vec<String> {
        vec![
            "Mozilla/5.0 \u{1b}[31m(Windows NT 10.0; Win64; x64) Chrome/120.0 Safari/537.36".into(),
            "Mozilla/5.0 (Linux; Android 14; Pixel 8 — ü) Gecko/20100101 Firefox/121.0".into(),
            "\u{fffd}\u{fffd} Googlebot/2.1 \u{fffd}".into(),
            "$1 ${1} \\d {0,100} (?i) [a-z]+ curl/8.5.0".into(),
            "\t\r Wget/1.21 \u{0}".into(),
            format!(
                "Mozilla/5.0 ({}) AppleWebKit/537.36 bot",
                "A; ".repeat(4000)
            ),
        ]
    }

    /// Optionally, more User-Agents, one per line, from the file
    /// `TLSGAP_TEST_USER_AGENTS` names (an ad-hoc check on a big log).
    fn extra_user_agents() -> Vec<String> {
        std::env::var_os("TLSGAP_TEST_USER_AGENTS")
            .map(|p| std::fs::read_to_string(p).unwrap())
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The spider check without the phone and tablet patterns gives uap-core's own
    /// answer (the first device pattern that matches) on every distinct User-Agent of
    /// the sample log and on User-Agents where the order matters.
    #[test]
    fn the_spider_check_agrees_with_the_whole_device_set() {
        let c = Classifier::new().unwrap();
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let all = devices(regexes.device_parsers).unwrap();
        let sample = sample_user_agents();
        let mut uas: Vec<&str> = sample.iter().map(String::as_str).collect();
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
        // Every phone, tablet and browser of the sample with a crawler word added: the
        // generic spider pattern then matches, and the earlier patterns decide.
        let with_bot: Vec<String> = uas
            .iter()
            .flat_map(|ua| {
                [
                    format!("{ua} bot"),
                    format!("crawler {ua}"),
                    format!("{ua} Silk/1"),
                ]
            })
            .collect();
        uas.extend(with_bot.iter().map(String::as_str));
        let odd = odd_user_agents();
        uas.extend(odd.iter().map(String::as_str));
        let extra = extra_user_agents();
        uas.extend(extra.iter().map(String::as_str));
        let mut lazy_needed = 0;
        for ua in &uas {
            let want = all.extract(ua).is_some_and(|v| v.device == "Spider");
            assert_eq!(c.spider(ua), want, "{ua}");
            if !c.leading_spiders.iter().any(|p| p.matches(ua))
                && c.later_spiders.iter().any(|(_, e)| e.matches(ua))
            {
                lazy_needed += 1;
            }
        }
        // The order case is exercised (the Kindle at least).
        assert!(lazy_needed >= 1);
        // The prefilter spared compiling most earlier patterns.
        let earlier = c.earlier.get().unwrap();
        let compiled = earlier
            .iter()
            .filter(|e| e.compiled.get().is_some())
            .count();
        assert!(earlier.len() > 500, "{} earlier patterns", earlier.len());
        assert!(
            compiled * 4 < earlier.len(),
            "{compiled} of {} compiled",
            earlier.len()
        );
    }

    fn write_needs(path: &std::path::Path, needs: &[StoredNeed]) {
        let mut text = String::from("[\n");
        for (i, n) in needs.iter().enumerate() {
            text.push_str(&serde_json::to_string(n).unwrap());
            text.push_str(if i + 1 < needs.len() { ",\n" } else { "\n" });
        }
        text.push_str("]\n");
        std::fs::write(path, text).unwrap();
    }

    /// The stored needs of the user-agent patterns are those of the vendored dataset
    /// (`TLSGAP_WRITE_DEVICE_NEEDS=1` rewrites the file too).
    #[test]
    fn stored_user_agent_needs_are_those_of_the_dataset() {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let want = needs_to_store(
            regexes
                .user_agent_parsers
                .iter()
                .enumerate()
                .map(|(i, p)| (i, p.regex.as_ref(), false)),
        );
        let path = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
        )
        .join("data/uap-core/ua-needs.json");
        if std::env::var_os("TLSGAP_WRITE_DEVICE_NEEDS").is_some() {
            write_needs(&path, &want);
        }
        let stored: Vec<StoredNeed> = serde_json::from_str(UA_NEEDS).unwrap();
        assert_eq!(
            stored,
            want,
            "{}: rerun with TLSGAP_WRITE_DEVICE_NEEDS=1",
            path.display()
        );
        for (f, p) in families(
            serde_json::from_str::<ua_parser::Regexes<'static>>(DATA)
                .unwrap()
                .user_agent_parsers,
        )
        .patterns
        .iter()
        .zip(&regexes.user_agent_parsers)
        {
            assert_eq!(f.need, Need::of(&p.regex, false), "{}", p.regex);
        }
    }

    /// The family of every sample User-Agent (and of the extra ones of
    /// `TLSGAP_TEST_USER_AGENTS`) is the one the whole set of patterns gives, and most
    /// patterns are never compiled.
    #[test]
    fn the_family_agrees_with_the_whole_user_agent_set() {
        let c = Classifier::new().unwrap();
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let all = ua_parser::user_agent::Builder::new()
            .push_all(regexes.user_agent_parsers)
            .unwrap()
            .build()
            .unwrap();
        let mut uas = sample_user_agents();
        for ua in [
            "curl/8.5.0",
            "Wget/1.21.3",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
            "Mozilla/5.0 (Linux; Android 9; KFTRWI) AppleWebKit/537.36 (KHTML, like Gecko) Silk/112.3.1 like Chrome/112.0.5615.213 Safari/537.36",
            "Mozilla/5.0 (X11; Linux x86_64; rv:121.0) Gecko/20100101 Firefox/121.0",
            "",
            "-",
            "xyzzy",
        ] {
            uas.push(ua.to_string());
        }
        uas.extend(odd_user_agents());
        let agree = |uas: &[String]| {
            for ua in uas {
                let want = all.extract(ua).map(|v| v.family.to_string());
                assert_eq!(c.family(ua), want, "{ua}");
            }
        };
        agree(&uas);
        // On the sample, most patterns are never compiled (tens of thousands of unlike
        // User-Agents from `TLSGAP_TEST_USER_AGENTS` need most of them: checked first).
        let pats = &c.families.patterns;
        let compiled = pats.iter().filter(|f| f.compiled.get().is_some()).count();
        assert!(
            compiled * 2 < pats.len(),
            "{compiled} of {} compiled",
            pats.len()
        );
        agree(&extra_user_agents());
    }

    /// The stored needs are those of the vendored dataset (set
    /// `TLSGAP_WRITE_DEVICE_NEEDS=1` to rewrite the file after updating the dataset).
    #[test]
    fn stored_needs_are_those_of_the_dataset() {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let want = stored_needs(&regexes);
        let path = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
        )
        .join("data/uap-core/device-needs.json");
        if std::env::var_os("TLSGAP_WRITE_DEVICE_NEEDS").is_some() {
            write_needs(&path, &want);
        }
        let stored: Vec<StoredNeed> = serde_json::from_str(NEEDS).unwrap();
        assert_eq!(stored.len(), want.len());
        for (s, w) in stored.iter().zip(&want) {
            assert_eq!(
                s,
                w,
                "{}: rerun with TLSGAP_WRITE_DEVICE_NEEDS=1",
                path.display()
            );
        }
        // Every pattern decoded from the file needs what it needs.
        let last = regexes.device_parsers.iter().rposition(is_spider).unwrap();
        for e in earlier_patterns(last) {
            assert_eq!(
                e.need,
                Need::of(&e.parser.regex, e.parser.regex_flag.is_some()),
                "{}",
                e.parser.regex
            );
        }
    }

    /// `ua-parser` compiles each pattern after turning `{0,N}` and `{1,N}` with N of
    /// three or more digits into `*` and `+`; what a pattern needs (read from the
    /// dataset's form) must be what the compiled form needs, for every pattern.
    #[test]
    fn what_a_pattern_needs_survives_the_repetition_rewrite() {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let mut filtered = 0;
        for p in &regexes.device_parsers {
            let rewritten = unbound_long_repetitions(&p.regex);
            let ic = p.regex_flag.is_some();
            let need = Need::of(&p.regex, ic);
            assert_eq!(need, Need::of(&rewritten, ic), "{}", p.regex);
            filtered += usize::from(!need.sets.is_empty());
        }
        // Most patterns do need literals (else the prefilter would spare nothing).
        assert!(
            filtered * 10 > regexes.device_parsers.len() * 8,
            "{filtered}"
        );
        assert_ne!(
            unbound_long_repetitions("a{0,100}b{1,300}c{1,20}"),
            "a{0,100}b{1,300}c{1,20}"
        );
        assert_eq!(
            unbound_long_repetitions("a{0,100}b{1,300}c{1,20}"),
            "a*b+c{1,20}"
        );
    }

    /// `X{0,N}` → `X*`, `X{1,N}` → `X+` for N of three digits or more (outside
    /// classes and escapes), as `ua-parser` documents its rewrite.
    fn unbound_long_repetitions(re: &str) -> String {
        let bytes = re.as_bytes();
        let mut out = String::new();
        let (mut i, mut escape, mut class) = (0, false, 0usize);
        while i < bytes.len() {
            let c = bytes[i];
            if escape {
                escape = false;
            } else if c == b'\\' {
                escape = true;
            } else if c == b'[' {
                class += 1;
            } else if c == b']' && class > 0 {
                class -= 1;
            } else if c == b'{' && class == 0 && i > 0 {
                let rest = &re[i + 1..];
                if let Some(end) = rest.find('}') {
                    let body = &rest[..end];
                    if let Some((lo, hi)) = body.split_once(',') {
                        if (lo == "0" || lo == "1")
                            && hi.len() > 2
                            && hi.bytes().all(|b| b.is_ascii_digit())
                        {
                            out.push(if lo == "0" { '*' } else { '+' });
                            i += end + 2;
                            continue;
                        }
                    }
                }
            }
            out.push(c as char);
            i += 1;
        }
        out
    }
}
