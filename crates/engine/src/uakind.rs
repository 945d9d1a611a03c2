//! Client kind from a User-Agent: the uap-core dataset (vendored in
//! `crates/engine/data/uap-core`, see `scripts/vendor-uap-core.py`) run as the
//! `ua-parser` crate runs it (for an all-ASCII User-Agent, the same patterns compiled
//! without Unicode, see `ascii_regex`), then a mapping of its answers to tlsgap's
//! four kinds:
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
/// its few `Spider` device patterns; of the other ~620 device patterns (phones,
/// tablets), needed only when a User-Agent matches a spider pattern that comes after
/// them, each is compiled only when a User-Agent contains what the pattern needs to
/// match (see [`Classifier::kind`]): compiling them all was most of the cost of
/// `whatif` and `report` on small logs (issue 12).
pub struct Classifier {
    /// uap-core's user-agent patterns, each compiled on first need.
    families: Families,
    /// The `Spider` device patterns that come first in the dataset, before any other.
    leading_spiders: Vec<SpiderPattern>,
    /// The other `Spider` device patterns (the generic "bot|crawl|spider|..." one), in
    /// dataset order.
    later_spiders: Vec<SpiderPattern>,
    /// The other device patterns before the last later spider pattern, prepared on
    /// first need.
    earlier: std::cell::OnceCell<Vec<Earlier>>,
}

/// A uap-core pattern compiled for a User-Agent that is all ASCII: `regex::bytes`
/// without Unicode, so `\d`, `\w`, `\s`, `\b`, `.` and case folding are ASCII's. On
/// ASCII text that matches exactly what the Unicode form matches, and it compiles to a
/// far smaller automaton: building the Unicode forms (`ua-parser`'s) was ~2 M
/// instructions a pattern, most of the classifier's cost (issue 12). The pattern is
/// first rewritten as `ua-parser` rewrites it ([`unbound_long_repetitions`]; its other
/// rewrite, `\d` → `[0-9]` and `\w` → `[A-Za-z0-9_]`, is what ASCII classes are).
/// `None`: it does not build so (the caller then uses `ua-parser`'s form).
fn ascii_regex(pattern: &str, ignore_case: bool) -> Option<regex::bytes::Regex> {
    regex::bytes::RegexBuilder::new(&unbound_long_repetitions(pattern))
        .unicode(false)
        .case_insensitive(ignore_case)
        .build()
        .ok()
}

/// `X{0,N}` → `X*`, `X{1,N}` → `X+` for N of three digits or more (outside classes,
/// not escaped), as `ua-parser` rewrites a pattern before compiling it (the dataset's
/// patterns were written for engines that backtrack; `regex` would unroll such bounds
/// into huge automata).
fn unbound_long_repetitions(re: &str) -> String {
    let bytes = re.as_bytes();
    let mut out = String::with_capacity(re.len());
    let (mut i, mut escape, mut class) = (0, false, 0usize);
    let mut copied = 0;
    while let Some(&c) = bytes.get(i) {
        if escape {
            escape = false;
        } else if c == b'\\' {
            escape = true;
        } else if c == b'[' {
            class += 1;
        } else if c == b']' && class > 0 {
            class -= 1;
        } else if c == b'{' && class == 0 && i > 0 {
            let rest = re.get(i + 1..).unwrap_or_default();
            if let Some((lo, hi)) = rest
                .find('}')
                .and_then(|end| rest.get(..end))
                .and_then(|body| body.split_once(','))
            {
                if (lo == "0" || lo == "1")
                    && hi.len() > 2
                    && hi.bytes().all(|b| b.is_ascii_digit())
                {
                    out.push_str(re.get(copied..i).unwrap_or_default());
                    out.push(if lo == "0" { '*' } else { '+' });
                    i += lo.len() + hi.len() + 3;
                    copied = i;
                    continue;
                }
            }
        }
        i += 1;
    }
    out.push_str(re.get(copied..).unwrap_or_default());
    out
}

/// The text of group 1 of a match, empty when the group did not take part (as
/// `ua-parser` reads a group).
fn group_one<'h>(caps: &regex::bytes::Captures<'h>) -> &'h str {
    caps.get(1)
        .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
        .unwrap_or_default()
}

/// How a user-agent pattern names the family, as `ua-parser` reads uap-core's
/// `family_replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FamilyName {
    /// No replacement: group 1.
    Group,
    /// A replacement without `$1`: itself.
    Fixed(String),
    /// A replacement with `$1`: itself with group 1 in place of each `$1`.
    Template(String),
}

impl FamilyName {
    /// `None`: the replacement wants a group the pattern lacks (`ua-parser` refuses
    /// such a pattern).
    fn of(replacement: Option<&str>, groups: usize) -> Option<FamilyName> {
        Some(match replacement {
            Some(r) if r.contains("$1") => {
                if groups < 1 {
                    return None;
                }
                FamilyName::Template(r.to_string())
            }
            Some(r) if !r.is_empty() => FamilyName::Fixed(r.to_string()),
            _ if groups >= 1 => FamilyName::Group,
            _ => FamilyName::Fixed(String::new()),
        })
    }
}

/// A user-agent pattern compiled for ASCII User-Agents ([`ascii_regex`]).
struct AsciiFamily {
    regex: regex::bytes::Regex,
    name: FamilyName,
}

impl AsciiFamily {
    fn new(p: &ua_parser::user_agent::Parser<'_>) -> Option<AsciiFamily> {
        let regex = ascii_regex(&p.regex, false)?;
        let groups = regex.captures_len().saturating_sub(1);
        let name = FamilyName::of(p.family_replacement.as_deref(), groups)?;
        Some(AsciiFamily { regex, name })
    }

    /// The family, if the pattern matches.
    fn family(&self, user_agent: &[u8]) -> Option<String> {
        if let FamilyName::Fixed(f) = &self.name {
            return self.regex.is_match(user_agent).then(|| f.clone());
        }
        let caps = self.regex.captures(user_agent)?;
        let group = group_one(&caps);
        Some(match &self.name {
            FamilyName::Template(t) => t.replace("$1", group),
            _ => group.to_string(),
        })
    }
}

/// How a device pattern names the device, as `ua-parser` reads uap-core's
/// `device_replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DeviceName {
    /// No replacement (or a blank one): group 1, or nothing without groups.
    Group,
    /// A replacement without `$` and a digit: itself.
    Fixed(String),
    /// A replacement with `$1`..`$9`: expanded with the groups, then trimmed.
    Template(String),
}

impl DeviceName {
    fn of(replacement: Option<&str>, groups: usize) -> DeviceName {
        match replacement.filter(|r| !r.trim().is_empty()) {
            Some(r)
                if r.as_bytes()
                    .windows(2)
                    .any(|w| matches!(w, [b'$', d] if d.is_ascii_digit())) =>
            {
                DeviceName::Template(r.to_string())
            }
            Some(r) => DeviceName::Fixed(r.to_string()),
            None if groups >= 1 => DeviceName::Group,
            None => DeviceName::Fixed(String::new()),
        }
    }
}

/// A device pattern compiled for ASCII User-Agents ([`ascii_regex`]).
struct AsciiDevice {
    regex: regex::bytes::Regex,
    name: DeviceName,
}

impl AsciiDevice {
    fn new(p: &ua_parser::device::Parser<'_>) -> Option<AsciiDevice> {
        let regex = ascii_regex(&p.regex, p.regex_flag.is_some())?;
        let groups = regex.captures_len().saturating_sub(1);
        let name = DeviceName::of(p.device_replacement.as_deref(), groups);
        Some(AsciiDevice { regex, name })
    }

    /// Whether the device is `Spider`, if the pattern matches.
    fn spider(&self, user_agent: &[u8]) -> Option<bool> {
        if let DeviceName::Fixed(d) = &self.name {
            return self.regex.is_match(user_agent).then(|| d == "Spider");
        }
        let caps = self.regex.captures(user_agent)?;
        Some(match &self.name {
            DeviceName::Template(t) => {
                let mut out = Vec::new();
                caps.expand(t.as_bytes(), &mut out);
                String::from_utf8_lossy(&out).trim() == "Spider"
            }
            _ => group_one(&caps) == "Spider",
        })
    }
}

/// A `Spider` device pattern (its replacement is `Spider`, so a match is the answer).
struct SpiderPattern {
    /// Its place in the dataset.
    index: usize,
    /// For an all-ASCII User-Agent (`None`: it does not build so).
    ascii: Option<regex::bytes::Regex>,
    parser: ua_parser::device::Parser<'static>,
    /// `ua-parser`'s form, for the other User-Agents, built on first need (`None`: it
    /// failed to build).
    compiled: std::cell::OnceCell<Option<ua_parser::device::Extractor<'static>>>,
}

impl SpiderPattern {
    fn new(index: usize, parser: ua_parser::device::Parser<'static>) -> SpiderPattern {
        SpiderPattern {
            index,
            ascii: ascii_regex(&parser.regex, parser.regex_flag.is_some()),
            parser,
            compiled: std::cell::OnceCell::new(),
        }
    }

    fn matches(&self, user_agent: &str) -> bool {
        if let (true, Some(r)) = (user_agent.is_ascii(), &self.ascii) {
            return r.is_match(user_agent.as_bytes());
        }
        self.compiled
            .get_or_init(|| devices([copy_parser(&self.parser)]).ok())
            .as_ref()
            .is_some_and(|e| e.extract(user_agent).is_some())
    }
}

/// A device pattern that is not a spider's, before a later spider pattern.
struct Earlier {
    /// Its place in the dataset.
    index: usize,
    parser: ua_parser::device::Parser<'static>,
    /// What a User-Agent must contain for the pattern to match.
    need: Need,
    /// The pattern for ASCII User-Agents, compiled on first need.
    ascii: std::cell::OnceCell<Option<AsciiDevice>>,
    /// `ua-parser`'s form, compiled on first need (`None`: it failed to build).
    compiled: std::cell::OnceCell<Option<ua_parser::device::Extractor<'static>>>,
}

impl Earlier {
    /// Whether the device the pattern names is `Spider`, if it matches.
    fn spider(&self, user_agent: &str) -> Option<bool> {
        if user_agent.is_ascii() {
            if let Some(d) = self.ascii.get_or_init(|| AsciiDevice::new(&self.parser)) {
                return d.spider(user_agent.as_bytes());
            }
        }
        let compiled = self
            .compiled
            .get_or_init(|| devices([copy_parser(&self.parser)]).ok());
        // Not built: not reached (the whole dataset builds in the tests).
        compiled
            .as_ref()?
            .extract(user_agent)
            .map(|v| v.device == "Spider")
    }
}

/// What a User-Agent must contain for a pattern to match: for every set here, one of
/// its literals. The sets come from `regex-syntax`'s literal extraction (the one the
/// `regex` crate's own prefilters rely on): the whole pattern's prefixes and suffixes,
/// and, when the pattern is a sequence of parts, the prefixes of each tail of that
/// sequence (any match contains a match of every tail, which starts with one of the
/// tail's prefixes). Empty: nothing known (the pattern is always tried).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Need {
    sets: Vec<Vec<Vec<u8>>>,
}

/// At most this many sets are kept per pattern (the ones with the longest literals).
const NEED_SETS: usize = 4;
/// Sets of more literals than this are left out.
const MAX_NEED_LITERALS: usize = 32;

impl Need {
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
            return Need { sets: Vec::new() };
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
        Need { sets }
    }

    fn may_match(&self, ua: &[u8]) -> bool {
        self.sets
            .iter()
            .all(|set| set.iter().any(|l| memchr::memmem::find(ua, l).is_some()))
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

/// A copy of a device pattern (the crate's type is not `Clone`).
fn copy_parser(p: &ua_parser::device::Parser<'static>) -> ua_parser::device::Parser<'static> {
    ua_parser::device::Parser {
        regex: p.regex.clone(),
        regex_flag: p
            .regex_flag
            .as_ref()
            .map(|_| ua_parser::device::Flag::IgnoreCase),
        device_replacement: p.device_replacement.clone(),
        brand_replacement: p.brand_replacement.clone(),
        model_replacement: p.model_replacement.clone(),
    }
}

/// One user-agent pattern, with what a User-Agent must hold for it to match.
struct Family {
    parser: ua_parser::user_agent::Parser<'static>,
    need: Need,
    /// The pattern for ASCII User-Agents, compiled on first need.
    ascii: std::cell::OnceCell<Option<AsciiFamily>>,
    /// `ua-parser`'s form of the pattern alone, for the other User-Agents, compiled on
    /// first need (`None`: it failed to build).
    compiled: std::cell::OnceCell<Option<ua_parser::user_agent::Extractor<'static>>>,
}

impl Family {
    /// The family, if the pattern matches.
    fn family(&self, user_agent: &str) -> Option<String> {
        if user_agent.is_ascii() {
            if let Some(a) = self.ascii.get_or_init(|| AsciiFamily::new(&self.parser)) {
                return a.family(user_agent.as_bytes());
            }
        }
        let compiled = self.compiled.get_or_init(|| {
            ua_parser::user_agent::Builder::new()
                .push(copy_ua_parser(&self.parser))
                .ok()?
                .build()
                .ok()
        });
        compiled
            .as_ref()?
            .extract(user_agent)
            .map(|v| v.family.to_string())
    }
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
            ascii: std::cell::OnceCell::new(),
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

/// A copy of a user-agent pattern (the crate's type is not `Clone`).
fn copy_ua_parser(
    p: &ua_parser::user_agent::Parser<'static>,
) -> ua_parser::user_agent::Parser<'static> {
    ua_parser::user_agent::Parser {
        regex: p.regex.clone(),
        family_replacement: p.family_replacement.clone(),
        v1_replacement: p.v1_replacement.clone(),
        v2_replacement: p.v2_replacement.clone(),
        v3_replacement: p.v3_replacement.clone(),
        v4_replacement: p.v4_replacement.clone(),
    }
}

/// The stored need of the pattern at `index` when its text is `regex`, else worked out.
fn stored_or_fresh(stored: &[StoredNeed], index: usize, regex: &str, ignore_case: bool) -> Need {
    match stored.iter().find(|n| n.index == index) {
        Some(n) if n.regex == regex => Need {
            sets: n
                .sets
                .iter()
                .map(|set| set.iter().map(|l| l.as_bytes().to_vec()).collect())
                .collect(),
        },
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
            ascii: std::cell::OnceCell::new(),
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
        let families = families(regexes.user_agent_parsers);
        let mut parsers = regexes.device_parsers.into_iter().enumerate().peekable();
        let mut leading = Vec::new();
        while let Some((i, p)) = parsers.next_if(|(_, p)| is_spider(p)) {
            leading.push(SpiderPattern::new(i, p));
        }
        let later = parsers
            .filter(|(_, p)| is_spider(p))
            .map(|(i, p)| SpiderPattern::new(i, p))
            .collect();
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
        if self.leading_spiders.iter().any(|s| s.matches(user_agent)) {
            return true;
        }
        let Some(k) = self
            .later_spiders
            .iter()
            .find(|s| s.matches(user_agent))
            .map(|s| s.index)
        else {
            return false;
        };
        let last = self.later_spiders.last().map_or(0, |s| s.index);
        let earlier = self.earlier.get_or_init(|| earlier_patterns(last));
        for e in earlier.iter().take_while(|e| e.index < k) {
            if !e.need.may_match(user_agent.as_bytes()) {
                continue;
            }
            if let Some(spider) = e.spider(user_agent) {
                return spider;
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
            if let Some(family) = p.family(user_agent) {
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
        let sample = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
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
                    // Not ASCII: `ua-parser`'s Unicode forms answer.
                    format!("{ua} Größe"),
                    format!("{ua} ä bot"),
                ]
            })
            .collect();
        uas.extend(with_bot.iter().map(String::as_str));
        let extra = extra_user_agents();
        uas.extend(extra.iter().map(String::as_str));
        let mut lazy_needed = 0;
        for ua in &uas {
            let want = all.extract(ua).is_some_and(|v| v.device == "Spider");
            assert_eq!(c.spider(ua), want, "{ua}");
            if !c.leading_spiders.iter().any(|s| s.matches(ua))
                && c.later_spiders.iter().any(|s| s.matches(ua))
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
            .filter(|e| e.compiled.get().is_some() || e.ascii.get().is_some())
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

    /// How a family and a device are named from a pattern's replacement, against
    /// `ua-parser` on patterns made for each rule (blank, fixed, `$1` templates, a
    /// template without a group, optional groups that do not take part).
    #[test]
    fn replacement_rules_are_those_of_ua_parser() {
        let uas = [
            "Foo/1.2 Spider",
            "Foo/ Spider",
            "Bar 7",
            "Baz Spider x",
            "nothing",
        ];
        let families: [(&str, Option<&str>); 7] = [
            (r"(Foo)/(\d+)", None),
            (r"(Foo)/(\d+)?", Some("$1 Mobile")),
            (r"Foo/(\d+)?", Some("Fixed")),
            (r"Bar (\d)", Some("")),
            (r"Bar \d", None),
            (r"Baz", Some("$1 x")),
            (r"(Foo|Baz)?.*Spider", None),
        ];
        for (regex, family_replacement) in families {
            let parser = || ua_parser::user_agent::Parser {
                regex: regex.to_string().into(),
                family_replacement: family_replacement.map(|r| r.to_string().into()),
                ..Default::default()
            };
            let theirs = ua_parser::user_agent::Builder::new()
                .push(parser())
                .ok()
                .and_then(|b| b.build().ok());
            let ours = AsciiFamily::new(&parser());
            assert_eq!(ours.is_some(), theirs.is_some(), "{regex}");
            let (Some(ours), Some(theirs)) = (ours, theirs) else {
                continue;
            };
            for ua in uas {
                let want = theirs.extract(ua).map(|v| v.family.to_string());
                assert_eq!(ours.family(ua.as_bytes()), want, "{regex} on {ua}");
            }
        }
        let devices_: [(&str, Option<&str>); 7] = [
            (r"(Spider)", None),
            (r"Foo/(\d+)? (Spider)", Some("$2")),
            (r"(Baz) (Spider)", Some(" $2 ")),
            (r"Foo", Some("Spider")),
            (r"Bar \d", Some("   ")),
            (r"Bar (\d)", Some("$1$1")),
            (r"Baz (Spider)", Some("$1x")),
        ];
        for (regex, device_replacement) in devices_ {
            let parser = ua_parser::device::Parser {
                regex: regex.to_string().into(),
                device_replacement: device_replacement.map(|r| r.to_string().into()),
                ..Default::default()
            };
            let ours = AsciiDevice::new(&parser).unwrap();
            let theirs = devices([parser]).unwrap();
            for ua in uas {
                let want = theirs.extract(ua).map(|v| v.device == "Spider");
                assert_eq!(ours.spider(ua.as_bytes()), want, "{regex} on {ua}");
            }
        }
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
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/uap-core/ua-needs.json");
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
            // Not ASCII: `ua-parser`'s Unicode forms answer these.
            "Mozilla/5.0 (Linux; Android 12; Redmi Note 11) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 YaBrowser/23.11 Mobile Safari/537.36 Größe",
            "Opera/9.80 (Windows NT 6.1; U; ru) Presto/2.10.289 Version/12.02 Прокси",
            "curl/8.5.0 é",
            "Ünïcödé/1.0",
        ] {
            uas.push(ua.to_string());
        }
        // Every sample User-Agent once more with a letter outside ASCII.
        let wide: Vec<String> = uas.iter().map(|ua| format!("{ua} ä")).collect();
        uas.extend(wide);
        uas.extend(extra_user_agents());
        for ua in &uas {
            let want = all.extract(ua).map(|v| v.family.to_string());
            assert_eq!(c.family(ua), want, "{ua}");
        }
        let pats = &c.families.patterns;
        let compiled = pats
            .iter()
            .filter(|f| f.compiled.get().is_some() || f.ascii.get().is_some())
            .count();
        assert!(
            compiled * 2 < pats.len(),
            "{compiled} of {} compiled",
            pats.len()
        );
    }

    /// The stored needs are those of the vendored dataset (set
    /// `TLSGAP_WRITE_DEVICE_NEEDS=1` to rewrite the file after updating the dataset).
    #[test]
    fn stored_needs_are_those_of_the_dataset() {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let want = stored_needs(&regexes);
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
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
}
