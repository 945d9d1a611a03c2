//! One uap-core pattern compiled and answered the way the `ua-parser` crate answers
//! it, without the prefilter `regex-filtered` builds around every set of patterns.
//!
//! The classifier ([`crate::uakind`]) compiles the patterns one at a time, each on
//! first need, and picks the ones to try with its own prefilter. Built as one-pattern
//! `ua-parser` extractors, each carried a `regex-filtered` prefilter of its own: a
//! model of the pattern's literals at compile time and an Aho-Corasick pass over the
//! User-Agent before every match. For one pattern that filter only repeats what the
//! regex does, and it was about half of the classifier's time (issue 12: callgrind,
//! 200 000 lines with 4 400 distinct User-Agents: 481 M instructions in the
//! classifier, 121 M of them in the extractors' prefilter, 108 M in their models and
//! automata).
//!
//! What is kept of `ua-parser`'s semantics, as its documentation and tests state it:
//! the pattern is rewritten first (`\d`, `\D`, `\w`, `\W` become ASCII classes;
//! `{0,N}`/`{1,N}` with N of three digits or more become `*`/`+`), compiled by `regex`
//! with the dataset's case flag (for an ASCII User-Agent with Unicode off, which finds
//! the same there: [`compile_ascii`]); the family is the replacement with `$1` put in, the
//! replacement alone, or the first group (an empty group counts as none); the device
//! is the replacement expanded with the groups and trimmed, or the first group. The
//! tests in [`crate::uakind`] check the answers against the crate's, pattern set
//! against pattern set.

use std::borrow::Cow;

/// `ua-parser`'s rewrite of a dataset pattern before it is compiled: escaped `d`, `D`,
/// `w`, `W` (also inside a class) become `[0-9]`, `[^0-9]`, `[A-Za-z0-9_]`,
/// `[^A-Za-z0-9_]`; outside a class, a `{0,N}` or `{1,N}` whose N has three digits or
/// more becomes `*` or `+`. The bytes read while looking at a `{` are not looked at
/// again (a `\` or `[` right after `{`, `{0` or `{0,` starts nothing), and a pattern
/// that starts with an unescaped `{` is left as it is, as the crate does.
pub(crate) fn rewrite(re: &str) -> Cow<'_, str> {
    let mut out = String::new();
    // Where the text not copied to `out` yet starts.
    let mut from = 0;
    let mut chars = re.char_indices();
    let mut escape = false;
    // Open classes; an unmatched `]` takes it below zero, as in the crate.
    let mut class: i64 = 0;
    'next: while let Some((at, c)) = chars.next() {
        if escape {
            escape = false;
            let class_text = match c {
                'd' => Some("[0-9]"),
                'D' => Some("[^0-9]"),
                'w' => Some("[A-Za-z0-9_]"),
                'W' => Some("[^A-Za-z0-9_]"),
                _ => None,
            };
            if let Some(text) = class_text {
                // `at - 1` is the backslash.
                out.push_str(re.get(from..at - 1).unwrap_or_default());
                out.push_str(text);
                from = at + 1;
            }
            continue;
        }
        match c {
            '\\' => escape = true,
            '[' => class += 1,
            ']' => class -= 1,
            '{' if class == 0 => {
                if at == 0 {
                    return Cow::Borrowed(re);
                }
                let Some((_, low)) = chars.next() else {
                    continue;
                };
                if low != '0' && low != '1' {
                    continue;
                }
                if !matches!(chars.next(), Some((_, ','))) {
                    continue;
                }
                let mut digits = 0;
                for (end, d) in chars.by_ref() {
                    match d {
                        '}' if digits > 2 => {
                            out.push_str(re.get(from..at).unwrap_or_default());
                            out.push(if low == '0' { '*' } else { '+' });
                            from = end + 1;
                            continue 'next;
                        }
                        d if d.is_ascii_digit() => digits += 1,
                        _ => continue 'next,
                    }
                }
            }
            _ => {}
        }
    }
    if from == 0 {
        return Cow::Borrowed(re);
    }
    out.push_str(re.get(from..).unwrap_or_default());
    Cow::Owned(out)
}

/// A dataset pattern compiled as `ua-parser` compiles it (`None`: it does not build).
fn compile(pattern: &str, ignore_case: bool) -> Option<regex::Regex> {
    regex::RegexBuilder::new(&rewrite(pattern))
        .case_insensitive(ignore_case)
        .build()
        .ok()
}

/// The same pattern for User-Agents of ASCII bytes only (most): Unicode off, so that
/// `.`, negated classes and case folding are single bytes, not UTF-8 automata. On an
/// ASCII text it finds what the Unicode pattern finds, at the same places: the two
/// differ only on other characters (`.` or `[^x]` taking a multi-byte character,
/// `(?i)k` the Kelvin sign, `\s` a no-break space, `\b` beside a non-ASCII letter).
/// Both compiling and matching cost less (issue 12: `whatif` on one line per distinct
/// User-Agent of the bench log, 4 318, 212.0 → 202.1 M instructions; `report`
/// 238.8 → 229.1 M, its patterns' compiling 49.4 → 40.1 M). `None`: it does not
/// build so (a `\p{..}` class); the Unicode pattern then serves all.
fn compile_ascii(pattern: &str, ignore_case: bool) -> Option<regex::bytes::Regex> {
    regex::bytes::RegexBuilder::new(&rewrite(pattern))
        .case_insensitive(ignore_case)
        .unicode(false)
        .build()
        .ok()
}

/// How a pattern that matched names what it found.
#[derive(Debug, Clone)]
enum Naming {
    /// The first group (empty when it is empty).
    Group,
    /// This text.
    Text(String),
    /// This text with `$1` replaced by the first group (a user-agent family).
    FirstGroup(String),
    /// This text expanded with the groups (`$1`...), then trimmed (a device).
    Expanded(String),
}

/// A uap-core pattern, compiled, with how it names the family or device it finds.
#[derive(Debug)]
pub(crate) struct UapPattern {
    /// For ASCII User-Agents ([`compile_ascii`]).
    ascii: Option<regex::bytes::Regex>,
    /// For the others: compiled when first needed (`None` inside: it does not build).
    unicode: std::cell::OnceCell<Option<regex::Regex>>,
    pattern: String,
    ignore_case: bool,
    naming: Naming,
}

/// A pattern's ASCII form and its Unicode one, either of which may be missing.
type Forms = (Option<regex::bytes::Regex>, Option<regex::Regex>);

/// A match of either compiled form: its groups, as text.
enum Found<'h> {
    Ascii(regex::bytes::Captures<'h>),
    Unicode(regex::Captures<'h>),
}

impl<'h> Found<'h> {
    /// Group `i`, unless it did not take part or is empty.
    fn group(&self, i: usize) -> Option<&'h str> {
        match self {
            // ASCII bytes are text.
            Found::Ascii(c) => c
                .get(i)
                .and_then(|m| std::str::from_utf8(m.as_bytes()).ok()),
            Found::Unicode(c) => c.get(i).map(|m| m.as_str()),
        }
        .filter(|s| !s.is_empty())
    }

    /// `template` with `$1`... replaced by the groups, as `regex` expands it.
    fn expand(&self, template: &str, out: &mut String) {
        match self {
            Found::Ascii(c) => {
                let mut bytes = Vec::new();
                c.expand(template.as_bytes(), &mut bytes);
                out.push_str(&String::from_utf8_lossy(&bytes));
            }
            Found::Unicode(c) => c.expand(template, out),
        }
    }
}

impl UapPattern {
    /// A user-agent pattern and its family replacement. `None` when the pattern does
    /// not build, or its replacement uses `$1` and it has no group (the crate refuses
    /// both).
    pub(crate) fn family(pattern: &str, replacement: Option<&str>) -> Option<UapPattern> {
        let (ascii, unicode) = UapPattern::build(pattern, false)?;
        let groups = UapPattern::groups(ascii.as_ref(), &unicode);
        let naming = match replacement {
            Some(t) if t.contains("$1") => {
                if groups == 0 {
                    return None;
                }
                Naming::FirstGroup(t.to_string())
            }
            Some(t) if !t.is_empty() => Naming::Text(t.to_string()),
            _ if groups >= 1 => Naming::Group,
            _ => Naming::Text(String::new()),
        };
        Some(UapPattern::with(pattern, false, (ascii, unicode), naming))
    }

    /// A device pattern, its case flag and its device replacement (a blank one counts
    /// as none). `None` when the pattern does not build.
    pub(crate) fn device(
        pattern: &str,
        ignore_case: bool,
        replacement: Option<&str>,
    ) -> Option<UapPattern> {
        let (ascii, unicode) = UapPattern::build(pattern, ignore_case)?;
        let groups = UapPattern::groups(ascii.as_ref(), &unicode);
        let naming = match replacement.filter(|t| !t.trim().is_empty()) {
            Some(t) if has_group_reference(t) => Naming::Expanded(t.to_string()),
            Some(t) => Naming::Text(t.to_string()),
            None if groups >= 1 => Naming::Group,
            None => Naming::Text(String::new()),
        };
        Some(UapPattern::with(
            pattern,
            ignore_case,
            (ascii, unicode),
            naming,
        ))
    }

    /// The ASCII form, and the Unicode one when the ASCII one does not build (it is
    /// then needed for every User-Agent). `None`: neither builds.
    fn build(pattern: &str, ignore_case: bool) -> Option<Forms> {
        match compile_ascii(pattern, ignore_case) {
            Some(a) => Some((Some(a), None)),
            None => Some((None, Some(compile(pattern, ignore_case)?))),
        }
    }

    /// The groups of the pattern (either form has the same).
    fn groups(ascii: Option<&regex::bytes::Regex>, unicode: &Option<regex::Regex>) -> usize {
        ascii
            .map(regex::bytes::Regex::captures_len)
            .or(unicode.as_ref().map(regex::Regex::captures_len))
            .unwrap_or(1)
            .saturating_sub(1)
    }

    fn with(
        pattern: &str,
        ignore_case: bool,
        (ascii, unicode): Forms,
        naming: Naming,
    ) -> UapPattern {
        let cell = std::cell::OnceCell::new();
        if let Some(u) = unicode {
            let _ = cell.set(Some(u));
        }
        UapPattern {
            ascii,
            unicode: cell,
            pattern: pattern.to_string(),
            ignore_case,
            naming,
        }
    }

    /// The form for `user_agent`: the ASCII one when it is ASCII and that form built.
    fn form(&self, user_agent: &str) -> Result<&regex::bytes::Regex, Option<&regex::Regex>> {
        match &self.ascii {
            Some(a) if user_agent.is_ascii() => Ok(a),
            _ => Err(self
                .unicode
                .get_or_init(|| compile(&self.pattern, self.ignore_case))
                .as_ref()),
        }
    }

    /// Whether the pattern matches.
    pub(crate) fn matches(&self, user_agent: &str) -> bool {
        match self.form(user_agent) {
            Ok(a) => a.is_match(user_agent.as_bytes()),
            Err(u) => u.is_some_and(|u| u.is_match(user_agent)),
        }
    }

    /// What the pattern names (family or device), when it matches.
    pub(crate) fn name(&self, user_agent: &str) -> Option<String> {
        if let Naming::Text(t) = &self.naming {
            return self.matches(user_agent).then(|| t.clone());
        }
        let c = match self.form(user_agent) {
            Ok(a) => Found::Ascii(a.captures(user_agent.as_bytes())?),
            Err(u) => Found::Unicode(u?.captures(user_agent)?),
        };
        let first = || c.group(1).unwrap_or_default();
        Some(match &self.naming {
            Naming::Text(t) => t.clone(),
            Naming::Group => first().to_string(),
            Naming::FirstGroup(t) => t.replace("$1", first()),
            Naming::Expanded(t) => {
                let mut out = String::new();
                c.expand(t, &mut out);
                out.trim().to_string()
            }
        })
    }
}

#[cfg(test)]
impl UapPattern {
    /// The pattern with its Unicode form only (what serves a non-ASCII User-Agent).
    pub(crate) fn unicode_form(&self) -> UapPattern {
        UapPattern::with(
            &self.pattern,
            self.ignore_case,
            (None, compile(&self.pattern, self.ignore_case)),
            self.naming.clone(),
        )
    }
}

/// Whether a replacement refers to a group: a `$` followed by a digit.
fn has_group_reference(t: &str) -> bool {
    t.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'$' && w[1].is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rewrites `ua-parser` documents (its own tests' cases), and the corners of
    /// the scan.
    #[test]
    fn patterns_are_rewritten_as_ua_parser_rewrites_them() {
        for (re, want) in [
            (".{0,2}x", ".{0,2}x"),
            (".{0,}", ".{0,}"),
            (".{1,}", ".{1,}"),
            (".{0,20}x", ".{0,20}x"),
            ("(.{0,100})", "(.*)"),
            ("(.{1,50})", "(.{1,50})"),
            (".{1,300}x", ".+x"),
            (r"\{1,200}", r"\{1,200}"),
            ("[.{1,100}]", "[.{1,100}]"),
            (r"\dx", "[0-9]x"),
            (r"\Dx", "[^0-9]x"),
            (r"\wx", "[A-Za-z0-9_]x"),
            (r"\Wx", "[^A-Za-z0-9_]x"),
            (r"[\d]x", "[[0-9]]x"),
            (r"\\d", r"\\d"),
            (r"\\\d", r"\\[0-9]"),
            ("{0,100}x", "{0,100}x"),
            (r"a{0,100}\d", "a*[0-9]"),
            (r"a{1,1000}b{0,999}", "a+b*"),
            // What the scan of a `{` reads is not looked at again.
            (r"a{\d", r"a{\d"),
            (r"a{0\d", r"a{0\d"),
            (r"a{0,\d", r"a{0,\d"),
            (r"a{0,10}\d", "a{0,10}[0-9]"),
            ("é{0,123}ü", "é*ü"),
            ("plain", "plain"),
            ("", ""),
        ] {
            assert_eq!(rewrite(re), want, "{re}");
        }
    }

    #[test]
    fn families_and_devices_are_named_as_the_dataset_says() {
        let p = UapPattern::family(r"(curl)/(\d+)", None).unwrap();
        assert_eq!(p.name("curl/8.5.0").as_deref(), Some("curl"));
        assert_eq!(p.name("wget/1"), None);
        let p = UapPattern::family(r"(Mobile)?Safari/\d+", Some("$1 Safari")).unwrap();
        assert_eq!(p.name("Mobile Safari/604").as_deref(), Some(" Safari"));
        assert_eq!(p.name("MobileSafari/604").as_deref(), Some("Mobile Safari"));
        let p = UapPattern::family("Googlebot", Some("Googlebot")).unwrap();
        assert_eq!(p.name("x Googlebot/2.1").as_deref(), Some("Googlebot"));
        assert!(UapPattern::family("nogroup", Some("$1")).is_none());
        assert!(UapPattern::family("(", None).is_none());
        let p = UapPattern::family("nogroup", None).unwrap();
        assert_eq!(p.name("a nogroup b").as_deref(), Some(""));

        let d = UapPattern::device("(?:bot|crawl)", true, Some("Spider")).unwrap();
        assert!(d.matches("SomeBOT/1"));
        assert_eq!(d.name("SomeBOT/1").as_deref(), Some("Spider"));
        let d = UapPattern::device(r"; (KF\w+) Build", false, Some("Kindle $1 ")).unwrap();
        assert_eq!(
            d.name("Android 9; KFTRWI Build/x").as_deref(),
            Some("Kindle KFTRWI")
        );
        let d = UapPattern::device(r"; (\w+) Build", false, None).unwrap();
        assert_eq!(d.name("; SM Build").as_deref(), Some("SM"));
        let d = UapPattern::device("Phone", false, Some("  ")).unwrap();
        assert_eq!(d.name("Phone").as_deref(), Some(""));
    }
}
