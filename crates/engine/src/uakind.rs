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

/// A User-Agent classifier. Building it reads uap-core's user-agent patterns and its
/// few `Spider` device patterns, each compiled when first tried; of the other ~620
/// device patterns (phones, tablets), needed only when a User-Agent matches a spider
/// pattern that comes after them, each is compiled only when a User-Agent contains
/// what the pattern needs to match (see [`Classifier::kind`]): compiling them all was most of the cost of
/// `whatif` and `report` on small logs (issue 12). Every pattern, spiders included,
/// is tried only on a User-Agent that holds what it needs: on the ~12 700 real
/// User-Agents of uap-core's test resources, four patterns tried on nearly every one
/// (long bot lists, "spider"/"crawl" in any case) were most of the time.
pub struct Classifier {
    /// uap-core's user-agent patterns, each compiled on first need.
    families: Vec<Family>,
    /// The `Spider` device patterns, in dataset order: a few that come first in the
    /// dataset, before any other ("leading"), and the later ones (the generic
    /// "bot|crawl|spider|..." one).
    spiders: Vec<Spider>,
    /// The first needed literals of `families` (list 0) and `spiders` (list 1).
    first: FirstLiterals,
    /// The other device patterns before the last spider pattern (with their places in
    /// the dataset), as read with the rest: taken by `earlier` when first needed.
    earlier_parsers: std::cell::Cell<Vec<Placed>>,
    /// The other device patterns before the last later spider pattern, with their
    /// first needed literals, prepared on first need.
    earlier: std::cell::OnceCell<(Vec<Earlier>, FirstLiterals)>,
}

/// A `Spider` device pattern.
struct Spider {
    /// Its place in the dataset.
    index: usize,
    /// Whether it comes before any other device pattern.
    leading: bool,
    need: Need,
    parser: ua_parser::device::Parser<'static>,
    /// The pattern, compiled on first need (most User-Agents need no spider pattern
    /// tried, and compiling the seven was a third of a one-line `whatif`; `None`: it
    /// does not build, and matches nothing: not reached, the tests build them all).
    compiled: std::cell::OnceCell<Option<UapPattern>>,
}

impl Spider {
    fn matches(&self, user_agent: &str) -> bool {
        self.compiled
            .get_or_init(|| device_pattern(&self.parser))
            .as_ref()
            .is_some_and(|p| p.matches(user_agent))
    }
}

/// A pattern with what a User-Agent must hold for it to match.
trait Needing {
    fn need(&self) -> &Need;
}

/// What each of `patterns` needs.
fn needs<T: Needing>(patterns: &[T]) -> Vec<&Need> {
    patterns.iter().map(Needing::need).collect()
}

impl Needing for Spider {
    fn need(&self) -> &Need {
        &self.need
    }
}

impl Needing for Family {
    fn need(&self) -> &Need {
        &self.need
    }
}

impl Needing for Earlier {
    fn need(&self) -> &Need {
        &self.need
    }
}

/// One automaton over the first needed set of literals of every pattern of one or more
/// lists: the patterns of each list that a User-Agent may match are found in one pass
/// over it.
struct FirstLiterals {
    automaton: Option<aho_corasick::AhoCorasick>,
    /// For each literal of `automaton`, its pattern's list and place in that list.
    owner: Vec<(usize, usize)>,
    /// Per list, the places of the patterns that need nothing known: always tried.
    always: Vec<Vec<usize>>,
}

impl FirstLiterals {
    /// `kind`: the automaton's kind (`None`: the crate's choice).
    fn new(lists: &[&[&Need]], kind: Option<aho_corasick::AhoCorasickKind>) -> FirstLiterals {
        let mut literals: Vec<&[u8]> = Vec::new();
        let mut owner = Vec::new();
        let mut always = vec![Vec::new(); lists.len()];
        for ((list, needs), always) in lists.iter().enumerate().zip(&mut always) {
            for (i, need) in needs.iter().enumerate() {
                match need.sets.first() {
                    Some(set) => {
                        for l in set {
                            literals.push(l);
                            owner.push((list, i));
                        }
                    }
                    None => always.push(i),
                }
            }
        }
        let automaton = aho_corasick::AhoCorasick::builder()
            .kind(kind)
            .build(&literals)
            .ok();
        if automaton.is_none() {
            // Not reached (literals always build); then every pattern is tried.
            for (needs, always) in lists.iter().zip(&mut always) {
                *always = (0..needs.len()).collect();
            }
        }
        FirstLiterals {
            automaton,
            owner,
            always,
        }
    }

    /// Per list, the places of the patterns whose first needed set `lowered`
    /// ([`Lowered`]) holds and of those that need nothing, in order.
    fn found(&self, lowered: &Lowered) -> Vec<Vec<usize>> {
        let mut found = self.always.clone();
        if let Some(ac) = &self.automaton {
            for m in ac.find_overlapping_iter(&lowered.0) {
                if let Some(&(list, i)) = self.owner.get(m.pattern().as_usize()) {
                    if let Some(places) = found.get_mut(list) {
                        places.push(i);
                    }
                }
            }
        }
        for places in &mut found {
            places.sort_unstable();
            places.dedup();
        }
        found
    }
}

/// The patterns at `places` (as [`FirstLiterals::found`] gives them) whose needs
/// `lowered` holds, in order.
fn candidates<'a, T: Needing>(
    patterns: &'a [T],
    places: &'a [usize],
    lowered: &'a Lowered,
) -> impl Iterator<Item = &'a T> + 'a {
    places
        .iter()
        .filter_map(|&i| patterns.get(i))
        // The first set is the one the automaton found.
        .filter(|p| p.need().may_match_from(1, lowered))
}

/// What one pass over a User-Agent found: the User-Agent lowered, and the places of
/// the user-agent and spider patterns to try.
struct Found {
    lowered: Lowered,
    families: Vec<usize>,
    spiders: Vec<usize>,
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
/// its literals, compared without regard to ASCII case (the literals are kept in ASCII
/// lower case and looked for in the User-Agent lowered the same way, [`Lowered`]: a
/// case-insensitive word is then one literal, not its case variants). The sets come
/// from `regex-syntax`'s literal extraction (the one the `regex` crate's own
/// prefilters rely on), applied to the pattern and to its parts ([`need_sets`]).
/// Empty: nothing known (the pattern is always tried).
#[derive(Debug, Clone)]
struct Need {
    sets: Vec<Vec<Vec<u8>>>,
    /// Per set, its searcher, built when the set is first checked (each User-Agent
    /// checks many patterns' needs; sets never reached, most device patterns' after
    /// the first, get none).
    searchers: Vec<std::cell::OnceCell<SetSearch>>,
}

/// How one set of a [`Need`] is looked for.
#[derive(Debug, Clone)]
enum SetSearch {
    /// A searcher per literal (a few literals).
    Each(Vec<memchr::memmem::Finder<'static>>),
    /// One pass for many literals (`None`: the automaton did not build; the set is
    /// then taken as present).
    All(Option<aho_corasick::AhoCorasick>),
}

impl SetSearch {
    fn of(set: &[Vec<u8>]) -> SetSearch {
        if set.len() <= FINDER_LITERALS {
            return SetSearch::Each(
                set.iter()
                    .map(|l| memchr::memmem::Finder::new(l).into_owned())
                    .collect(),
            );
        }
        SetSearch::All(aho_corasick::AhoCorasick::new(set).ok())
    }

    fn found_in(&self, lowered: &[u8]) -> bool {
        match self {
            SetSearch::Each(finders) => finders.iter().any(|f| f.find(lowered).is_some()),
            SetSearch::All(Some(ac)) => ac.is_match(lowered),
            SetSearch::All(None) => true,
        }
    }
}

impl PartialEq for Need {
    fn eq(&self, other: &Need) -> bool {
        self.sets == other.sets
    }
}

impl Eq for Need {}

/// At most this many sets are kept per pattern (the strongest ones).
const NEED_SETS: usize = 4;
/// Sets of more literals than this, found by extraction, are left out.
const MAX_NEED_LITERALS: usize = 32;
/// A set made of one set per branch of an alternation may hold this many literals
/// (the bot patterns list a hundred names or more).
const MAX_UNION_LITERALS: usize = 512;
/// Sets of up to this many literals are looked for one literal at a time.
const FINDER_LITERALS: usize = 8;

/// A User-Agent with its ASCII letters in lower case, as [`Need`]s are checked
/// against it (made once per User-Agent).
struct Lowered(Vec<u8>);

impl Lowered {
    fn of(user_agent: &str) -> Lowered {
        Lowered(user_agent.as_bytes().to_ascii_lowercase())
    }
}

impl Need {
    fn from_sets(sets: Vec<Vec<Vec<u8>>>) -> Need {
        let searchers = sets.iter().map(|_| std::cell::OnceCell::new()).collect();
        Need { sets, searchers }
    }

    /// From a pattern as the dataset writes it (`ua-parser` compiles it after turning
    /// `{0,N}`/`{1,N}` with N of three digits or more into `*`/`+`; literal extraction
    /// reads only a repetition's minimum, so it gives the same sets: the test
    /// `what_a_pattern_needs_survives_the_repetition_rewrite` checks it pattern by
    /// pattern).
    fn of(regex: &str, ignore_case: bool) -> Need {
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(ignore_case)
            .build()
            .parse(regex);
        let Ok(hir) = hir else {
            return Need::from_sets(Vec::new());
        };
        let mut sets = need_sets(&hir, 0);
        // Strongest first: a User-Agent without any of them is turned away after one
        // set.
        sets.sort_by(|a, b| strength(a).cmp(&strength(b)).then_with(|| a.cmp(b)));
        sets.dedup();
        sets.truncate(NEED_SETS);
        Need::from_sets(sets)
    }

    /// Whether the User-Agent holds one literal of every set from the `skip`-th on.
    fn may_match_from(&self, skip: usize, ua: &Lowered) -> bool {
        self.sets
            .iter()
            .zip(&self.searchers)
            .skip(skip)
            .all(|(set, search)| search.get_or_init(|| SetSearch::of(set)).found_in(&ua.0))
    }

    /// Whether the User-Agent holds one literal of every set.
    #[cfg(test)]
    fn may_match(&self, ua: &Lowered) -> bool {
        self.may_match_from(0, ua)
    }
}

/// Browsers' User-Agents as most requests send them (lower case): a set with a
/// literal found in one of them lets most User-Agents through.
const EVERYDAY_USER_AGENTS: &[&str] = &[
    "mozilla/5.0 (windows nt 10.0; win64; x64) applewebkit/537.36 (khtml, like gecko) chrome/120.0.0.0 safari/537.36 edg/120.0.0.0",
    "mozilla/5.0 (iphone; cpu iphone os 17_1 like mac os x) applewebkit/605.1.15 (khtml, like gecko) version/17.1 mobile/15e148 safari/604.1",
    "mozilla/5.0 (linux; android 14; sm-s918b) applewebkit/537.36 (khtml, like gecko) chrome/120.0.0.0 mobile safari/537.36",
    "mozilla/5.0 (x11; linux x86_64; rv:121.0) gecko/20100101 firefox/121.0",
    "mozilla/5.0 (macintosh; intel mac os x 10_15_7) applewebkit/605.1.15 (khtml, like gecko) version/17.1 safari/605.1.15",
];

/// How strong a set is, the strongest least: one whose literals are in no everyday
/// browser's User-Agent first, then the longer its shortest literal (a literal of
/// one or two bytes is in most User-Agents), then the fewer its literals.
fn strength(set: &[Vec<u8>]) -> (bool, std::cmp::Reverse<usize>, usize) {
    let everyday = set.iter().any(|l| {
        EVERYDAY_USER_AGENTS
            .iter()
            .any(|ua| memchr::memmem::find(ua.as_bytes(), l).is_some())
    });
    let shortest = set.iter().map(Vec::len).min().unwrap_or(0);
    (everyday, std::cmp::Reverse(shortest), set.len())
}

/// Nesting deeper than this is not looked into (the dataset's patterns nest a few
/// levels; a pattern written to nest deeper is tried whatever it needs).
const MAX_NEED_DEPTH: usize = 16;

/// Sets of literals of which every match of `hir` contains one, each set a condition
/// on its own: the prefixes and suffixes of `hir` itself; what any part of a sequence
/// needs, and the prefixes of each tail of the sequence (any match contains a match
/// of every tail, which starts with one of the tail's prefixes); what a group or a
/// repetition of at least one needs; for an alternation, the strongest set of every
/// branch together (any match is a match of one branch).
fn need_sets(hir: &regex_syntax::hir::Hir, depth: usize) -> Vec<Vec<Vec<u8>>> {
    use regex_syntax::hir::literal::ExtractKind;
    use regex_syntax::hir::{Hir, HirKind};
    let mut sets: Vec<Vec<Vec<u8>>> = Vec::new();
    if depth > MAX_NEED_DEPTH {
        return sets;
    }
    sets.extend(need_literals(hir, ExtractKind::Prefix));
    sets.extend(need_literals(hir, ExtractKind::Suffix));
    match hir.kind() {
        HirKind::Capture(c) => sets.extend(need_sets(&c.sub, depth + 1)),
        HirKind::Repetition(r) if r.min >= 1 => sets.extend(need_sets(&r.sub, depth + 1)),
        HirKind::Concat(parts) => {
            // Tails that start where a run of literal parts starts (a tail that starts
            // inside a run needs less than the one at the run's start).
            let literal = |h: &Hir| matches!(h.kind(), HirKind::Literal(_) | HirKind::Class(_));
            let mut previous_literal = parts.first().is_some_and(literal);
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
            for part in parts.iter().filter(|p| !literal(p)) {
                sets.extend(need_sets(part, depth + 1));
            }
        }
        HirKind::Alternation(branches) => {
            let mut union: Vec<Vec<u8>> = Vec::new();
            for b in branches {
                let Some(best) = need_sets(b, depth + 1)
                    .into_iter()
                    .min_by_key(|s| strength(s))
                else {
                    return sets;
                };
                union.extend(best);
            }
            let union = shortest_cover(union);
            if union.len() <= MAX_UNION_LITERALS {
                sets.push(union);
            }
        }
        _ => {}
    }
    sets
}

/// The literals of `set` that contain no other literal of it, sorted: a User-Agent
/// holds one of them exactly when it holds one of `set`.
fn shortest_cover(mut set: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    set.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    set.dedup();
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for l in set {
        if !kept.iter().any(|k| memchr::memmem::find(&l, k).is_some()) {
            kept.push(l);
        }
    }
    kept.sort();
    kept
}

/// The literals of which every match of `hir` contains one (in ASCII lower case),
/// when they are a finite set without the empty string.
fn need_literals(
    hir: &regex_syntax::hir::Hir,
    kind: regex_syntax::hir::literal::ExtractKind,
) -> Option<Vec<Vec<u8>>> {
    let seq = regex_syntax::hir::literal::Extractor::new()
        .kind(kind)
        .extract(hir);
    let lits = seq.literals()?;
    if lits.iter().any(|l| l.as_bytes().is_empty()) {
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
    let out = shortest_cover(
        lits.iter()
            .map(|l| l.as_bytes().to_ascii_lowercase())
            .collect(),
    );
    // A set of many literals is a weak condition that costs many searches: left out.
    (out.len() <= MAX_NEED_LITERALS).then_some(out)
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

/// The user-agent patterns in dataset order, with their stored needs (a pattern that
/// differs from the stored one is worked out afresh).
fn families(parsers: Vec<ua_parser::user_agent::Parser<'static>>) -> Vec<Family> {
    let stored: Vec<StoredNeed> = serde_json::from_str(UA_NEEDS).unwrap_or_default();
    parsers
        .into_iter()
        .enumerate()
        .map(|(index, parser)| Family {
            need: stored_or_fresh(&stored, index, &parser.regex, false),
            parser,
            compiled: std::cell::OnceCell::new(),
        })
        .collect()
}

/// The stored need of the pattern at `index` when its text is `regex`, else worked out.
fn stored_or_fresh(stored: &[StoredNeed], index: usize, regex: &str, ignore_case: bool) -> Need {
    // `stored` is in dataset order.
    let found = stored
        .binary_search_by_key(&index, |n| n.index)
        .ok()
        .and_then(|at| stored.get(at));
    match found {
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

/// A device pattern with its place in the dataset.
type Placed = (usize, ua_parser::device::Parser<'static>);

/// The dataset's device patterns split into the spider ones (place, whether it comes
/// before any other, pattern) and the others before the last spider one. The others
/// are kept from the one reading of the dataset: reading it a second time for them,
/// when a User-Agent first needs them, was a tenth of the classifier's cost (issue 12).
fn split_devices(
    parsers: Vec<ua_parser::device::Parser<'static>>,
) -> (
    Vec<(usize, bool, ua_parser::device::Parser<'static>)>,
    Vec<Placed>,
) {
    let mut spiders = Vec::new();
    let mut others: Vec<Placed> = Vec::new();
    for (i, p) in parsers.into_iter().enumerate() {
        if is_spider(&p) {
            spiders.push((i, others.is_empty(), p));
        } else {
            others.push((i, p));
        }
    }
    let last = spiders.last().map_or(0, |s| s.0);
    others.retain(|(i, _)| *i < last);
    (spiders, others)
}

/// The non-spider device patterns before the last spider pattern (`parsers`, with
/// their places in the dataset), with what each needs.
fn earlier_patterns(parsers: Vec<Placed>) -> Vec<Earlier> {
    let stored: Vec<StoredNeed> = serde_json::from_str(NEEDS).unwrap_or_default();
    parsers
        .into_iter()
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

/// What each spider device pattern needs, stored like [`NEEDS`] (working it out took
/// longer than the rest of building the classifier).
const SPIDER_NEEDS: &str = include_str!("../data/uap-core/spider-needs.json");

/// The spider pattern `p`, the `index`-th device pattern, with what it needs (as
/// `stored` says).
fn spider_pattern(
    index: usize,
    leading: bool,
    p: ua_parser::device::Parser<'static>,
    stored: &[StoredNeed],
) -> Spider {
    Spider {
        index,
        leading,
        need: stored_or_fresh(stored, index, &p.regex, p.regex_flag.is_some()),
        parser: p,
        compiled: std::cell::OnceCell::new(),
    }
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
        let stored: Vec<StoredNeed> = serde_json::from_str(SPIDER_NEEDS).unwrap_or_default();
        let (spiders, others) = split_devices(regexes.device_parsers);
        let spiders: Vec<Spider> = spiders
            .into_iter()
            .map(|(i, leading, p)| spider_pattern(i, leading, p, &stored))
            .collect();
        let first = FirstLiterals::new(&[&needs(&families), &needs(&spiders)], None);
        Ok(Classifier {
            families,
            spiders,
            first,
            earlier_parsers: std::cell::Cell::new(others),
            earlier: std::cell::OnceCell::new(),
        })
    }

    /// Whether uap-core's device answer is `Spider`, i.e. the first device pattern
    /// that matches names it. A leading spider pattern matches: yes. No spider pattern
    /// matches: no. Only a later one does (the first of them at place `k`): an earlier
    /// pattern (a phone, a Kindle whose browser is "Silk") may match first, so those
    /// before `k` are tried in order. Each pattern is tried only if the User-Agent
    /// (`lowered`: the same, [`Lowered`]) holds what it needs.
    fn spider(&self, user_agent: &str, found: &Found) -> bool {
        let lowered = &found.lowered;
        // The first spider pattern that matches, in dataset order (a leading one, if
        // any matches, comes before every later one).
        let first =
            candidates(&self.spiders, &found.spiders, lowered).find(|s| s.matches(user_agent));
        let k = match first {
            None => return false,
            Some(s) if s.leading => return true,
            Some(s) => s.index,
        };
        let (earlier, first) = self.earlier.get_or_init(|| {
            let patterns = earlier_patterns(self.earlier_parsers.take());
            // Searched only for the User-Agents a later spider pattern matches: the
            // automaton quickest to build (the crate's choice, a contiguous one, took
            // a quarter longer to build; issue 12).
            let first = FirstLiterals::new(
                &[&needs(&patterns)],
                Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA),
            );
            (patterns, first)
        });
        let places = first.found(lowered).into_iter().next().unwrap_or_default();
        for e in candidates(earlier, &places, lowered).take_while(|e| e.index < k) {
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
    /// Aho-Corasick pass over `lowered` finds them) and those that need nothing, in
    /// dataset order, each compiled on first need.
    fn family(&self, user_agent: &str, found: &Found) -> Option<String> {
        for p in candidates(&self.families, &found.families, &found.lowered) {
            let compiled = p.compiled.get_or_init(|| {
                UapPattern::family(&p.parser.regex, p.parser.family_replacement.as_deref())
            });
            if let Some(family) = compiled.as_ref().and_then(|e| e.name(user_agent)) {
                return Some(family);
            }
        }
        None
    }

    /// One pass over `user_agent` for the user-agent and spider patterns it may match.
    fn look(&self, user_agent: &str) -> Found {
        let lowered = Lowered::of(user_agent);
        let mut found = self.first.found(&lowered).into_iter();
        let families = found.next().unwrap_or_default();
        let spiders = found.next().unwrap_or_default();
        Found {
            lowered,
            families,
            spiders,
        }
    }

    /// The kind of client a User-Agent names.
    pub fn kind(&self, user_agent: &str) -> ClientKind {
        let found = self.look(user_agent);
        let family = self.family(user_agent, &found);
        if let Some(f) = &family {
            if LIBRARY_FAMILIES.iter().any(|l| l.eq_ignore_ascii_case(f)) {
                return ClientKind::Library;
            }
        }
        if self.spider(user_agent, &found) {
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

    /// More User-Agents: the ~12 700 real ones of uap-core's test resources (the
    /// browser list that `ua-parser`'s crate ships, read from cargo's copy of its
    /// sources: User-Agents nobody here wrote, as old and odd as logs hold), and
    /// optionally those of the file `TLSGAP_TEST_USER_AGENTS` names, one per line (an
    /// ad-hoc check on a big log).
    fn extra_user_agents() -> Vec<String> {
        let mut uas = uap_core_test_user_agents();
        assert!(uas.len() > 10_000, "{} User-Agents", uas.len());
        if let Some(p) = std::env::var_os("TLSGAP_TEST_USER_AGENTS") {
            let text = std::fs::read_to_string(p).unwrap();
            uas.extend(text.lines().map(str::to_string));
        }
        uas
    }

    /// The User-Agents of `uap-core/test_resources/pgts_browser_list.txt` in the
    /// `ua-parser` crate's sources (found by `cargo metadata`): tab-separated name,
    /// version and User-Agent after a comment line.
    fn uap_core_test_user_agents() -> Vec<String> {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
        let version = std::process::Command::new(rustc)
            .arg("-vV")
            .output()
            .unwrap();
        let version = String::from_utf8(version.stdout).unwrap();
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .unwrap();
        // One platform's packages: all of them would need some never downloaded.
        let out = std::process::Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--offline"])
            .args(["--filter-platform", host])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let manifest = meta["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == "ua-parser")
            .and_then(|p| p["manifest_path"].as_str())
            .unwrap()
            .to_string();
        let list = std::path::Path::new(&manifest)
            .with_file_name("uap-core/test_resources/pgts_browser_list.txt");
        let bytes = std::fs::read(&list).unwrap_or_else(|e| panic!("{}: {e}", list.display()));
        String::from_utf8_lossy(&bytes)
            .lines()
            .skip(1)
            .filter_map(|l| l.split('\t').nth(2))
            .filter(|ua| !ua.is_empty())
            .map(str::to_string)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// What a pattern needs never turns away a User-Agent the pattern matches: random
    /// patterns (literals, case-insensitive ones, classes, groups, alternations with
    /// empty branches, optional and repeated parts, anchors, word boundaries) against
    /// random User-Agents made of the same words in any case.
    mod needs_are_sound {
        use super::*;
        use proptest::prelude::*;

        fn pattern() -> impl Strategy<Value = String> {
            let leaf = prop_oneof![
                Just("bot".to_string()),
                Just("Bot".to_string()),
                Just("spider".to_string()),
                Just("a".to_string()),
                Just("x-y".to_string()),
                Just("[Bb]".to_string()),
                Just("[a-z]".to_string()),
                Just(r"\d".to_string()),
                Just(r"\w{0,3}".to_string()),
                Just(".".to_string()),
                Just(" ".to_string()),
            ];
            leaf.prop_recursive(4, 24, 4, |inner| {
                prop_oneof![
                    proptest::collection::vec(inner.clone(), 2..4).prop_map(|v| v.concat()),
                    proptest::collection::vec(inner.clone(), 2..4)
                        .prop_map(|v| format!("(?:{})", v.join("|"))),
                    inner.clone().prop_map(|p| format!("(?:{p}|)")),
                    inner.clone().prop_map(|p| format!("({p})")),
                    inner.clone().prop_map(|p| format!("(?:{p})?")),
                    inner.clone().prop_map(|p| format!("(?:{p})+")),
                    inner.clone().prop_map(|p| format!("(?:{p}){{1,3}}")),
                    inner.clone().prop_map(|p| format!(r"\b{p}\b")),
                    inner.clone().prop_map(|p| format!("^.{{0,5}}?{p}")),
                    inner.prop_map(|p| format!("{p}$")),
                ]
            })
        }

        fn user_agent() -> impl Strategy<Value = String> {
            let word = prop_oneof![
                Just("bot"),
                Just("BOT"),
                Just("Bot"),
                Just("Spider"),
                Just("spider"),
                Just("a"),
                Just("x-y"),
                Just("X-Y"),
                Just("7"),
                Just(" "),
                Just("ſ"),
                Just("é"),
            ];
            proptest::collection::vec(word, 0..10).prop_map(|w| w.concat())
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(400))]
            #[test]
            fn a_matching_user_agent_is_never_turned_away(
                re in pattern(),
                ignore_case in any::<bool>(),
                uas in proptest::collection::vec(user_agent(), 1..16),
            ) {
                let need = Need::of(&re, ignore_case);
                prop_assert!(need.sets.iter().flatten().all(|l| !l.iter().any(u8::is_ascii_uppercase)));
                let Some(compiled) = UapPattern::device(&re, ignore_case, None) else {
                    return Ok(());
                };
                for ua in &uas {
                    if compiled.matches(ua) {
                        prop_assert!(need.may_match(&Lowered::of(ua)), "{re:?} {ignore_case} {ua:?} {:?}", need.sets);
                    }
                }
            }
        }
    }

    /// Literals found inside parts, through an optional prefix, across the branches of
    /// an alternation, without regard to case.
    #[test]
    fn needs_look_inside_the_pattern() {
        let sets = |re: &str, ic: bool| -> Vec<Vec<String>> {
            Need::of(re, ic)
                .sets
                .iter()
                .map(|s| {
                    s.iter()
                        .map(|l| String::from_utf8_lossy(l).into_owned())
                        .collect()
                })
                .collect()
        };
        let has = |re: &str, ic: bool, want: &[&str]| {
            let got = sets(re, ic);
            assert!(got.iter().any(|s| s == want), "{re}: {got:?}");
        };
        // A literal after an optional part (the whole pattern's prefixes are not
        // finite).
        has(
            "(?:[a-zA-Z]{1,30}-|)Googlebot(?:-[a-zA-Z]{1,30}|)",
            false,
            &["googlebot"],
        );
        // One set per branch of an alternation, the strongest of each.
        // (The alternation's own prefixes are not finite.)
        has(
            r"(FooBot|[a-z]{1,3}Crawler|^Baz)/(\d+)",
            false,
            &["baz", "crawler", "foobot"],
        );
        // A literal inside a group inside the sequence.
        has(r"^.{0,200}?(x[^C][^U][Bb]ot)\b", false, &["bot"]);
        // Case-insensitive: one literal, not its case variants.
        has("spider", true, &["spider", "\u{17f}pider"]);
        // A set with a word in everyday browsers' User-Agents comes after one without.
        let got = sets("(?:Android|iPhone).{0,30}(?:YRSpider|Yeti-Mobile)", false);
        assert_eq!(
            got.first().map(Vec::as_slice),
            Some(&["yeti-mobile".to_string(), "yrspider".to_string()][..]),
            "{got:?}"
        );
        // Nothing needed: always tried.
        assert!(sets("(?:a|)[0-9]*", false).is_empty());
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
            assert_eq!(c.spider(ua, &c.look(ua)), want, "{ua}");
            let spiders = &c.spiders;
            if !spiders.iter().any(|s| s.leading && s.matches(ua))
                && spiders.iter().any(|s| !s.leading && s.matches(ua))
            {
                lazy_needed += 1;
            }
        }
        // The order case is exercised (the Kindle at least).
        assert!(lazy_needed >= 1);
        // The prefilter spared compiling most earlier patterns.
        let earlier = &c.earlier.get().unwrap().0;
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

    /// The needs stored in `data/uap-core/<file>` (read into the binary as `stored`)
    /// are `want`; `TLSGAP_WRITE_DEVICE_NEEDS=1` rewrites the file first (after a
    /// dataset update, or a change to [`Need::of`]).
    fn check_stored(file: &str, stored: &str, want: &[StoredNeed]) {
        let path = std::path::PathBuf::from(
            std::env::var_os("CARGO_MANIFEST_DIR")
                .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
        )
        .join("data/uap-core")
        .join(file);
        if std::env::var_os("TLSGAP_WRITE_DEVICE_NEEDS").is_some() {
            write_needs(&path, want);
        }
        let stored: Vec<StoredNeed> = serde_json::from_str(stored).unwrap();
        let again = "rerun with TLSGAP_WRITE_DEVICE_NEEDS=1";
        assert_eq!(stored.len(), want.len(), "{}: {again}", path.display());
        for (s, w) in stored.iter().zip(want) {
            assert_eq!(s, w, "{}: {again}", path.display());
        }
    }

    /// The stored needs of the spider patterns are those of the vendored dataset, and
    /// the classifier reads them.
    #[test]
    fn stored_spider_needs_are_those_of_the_dataset() {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let spiders = || regexes.device_parsers.iter().filter(|p| is_spider(p));
        let want = needs_to_store(
            regexes
                .device_parsers
                .iter()
                .enumerate()
                .filter(|(_, p)| is_spider(p))
                .map(|(i, p)| (i, p.regex.as_ref(), p.regex_flag.is_some())),
        );
        check_stored("spider-needs.json", SPIDER_NEEDS, &want);
        let c = Classifier::new().unwrap();
        let got = &c.spiders;
        assert_eq!(got.len(), spiders().count());
        for (s, p) in got.iter().zip(spiders()) {
            assert_eq!(
                s.need,
                Need::of(&p.regex, p.regex_flag.is_some()),
                "{}",
                p.regex
            );
        }
        // The leading ones are those before any other device pattern.
        let leading = regexes
            .device_parsers
            .iter()
            .take_while(|p| is_spider(p))
            .count();
        assert!(leading > 0 && leading < got.len());
        assert!(got
            .iter()
            .enumerate()
            .all(|(i, s)| s.leading == (i < leading)));
        // Each builds (compiled on first need, one that did not would match nothing).
        assert!(got.iter().all(|s| device_pattern(&s.parser).is_some()));
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
        check_stored("ua-needs.json", UA_NEEDS, &want);
        for (f, p) in families(
            serde_json::from_str::<ua_parser::Regexes<'static>>(DATA)
                .unwrap()
                .user_agent_parsers,
        )
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
                assert_eq!(c.family(ua, &c.look(ua)), want, "{ua}");
            }
        };
        agree(&uas);
        // On the sample, most patterns are never compiled (tens of thousands of unlike
        // User-Agents from `TLSGAP_TEST_USER_AGENTS` need most of them: checked first).
        let pats = &c.families;
        let compiled = pats.iter().filter(|f| f.compiled.get().is_some()).count();
        assert!(
            compiled * 2 < pats.len(),
            "{compiled} of {} compiled",
            pats.len()
        );
        agree(&extra_user_agents());
    }

    /// Every dataset pattern, compiled for ASCII User-Agents (Unicode off), names what
    /// its Unicode form names on every ASCII User-Agent of the sample, the odd ones and
    /// uap-core's test list (a third of it, for time).
    #[test]
    fn the_ascii_form_of_every_pattern_answers_as_the_unicode_form() {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let mut patterns: Vec<UapPattern> = regexes
            .user_agent_parsers
            .iter()
            .filter_map(|p| UapPattern::family(&p.regex, p.family_replacement.as_deref()))
            .collect();
        patterns.extend(regexes.device_parsers.iter().filter_map(device_pattern));
        assert!(patterns.len() > 900, "{} patterns", patterns.len());
        let mut uas = sample_user_agents();
        uas.extend(odd_user_agents());
        uas.extend(extra_user_agents().into_iter().step_by(3));
        uas.retain(|ua| ua.is_ascii());
        assert!(uas.len() > 3000, "{} User-Agents", uas.len());
        let mut named = 0;
        for p in &patterns {
            let unicode = p.unicode_form();
            for ua in &uas {
                let got = p.name(ua);
                assert_eq!(got, unicode.name(ua), "{p:?} on {ua:?}");
                named += usize::from(got.is_some());
            }
        }
        assert!(named > 3000, "{named} names");
    }

    /// The stored needs are those of the vendored dataset (set
    /// `TLSGAP_WRITE_DEVICE_NEEDS=1` to rewrite the file after updating the dataset).
    #[test]
    fn stored_needs_are_those_of_the_dataset() {
        let regexes: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        check_stored("device-needs.json", NEEDS, &stored_needs(&regexes));
        // Every pattern decoded from the file needs what it needs.
        let fresh: ua_parser::Regexes<'static> = serde_json::from_str(DATA).unwrap();
        let (_, others) = split_devices(fresh.device_parsers);
        for e in earlier_patterns(others) {
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
