//! `tlsgap_auth::parse` and `find_hash` on arbitrary bytes: never a panic, every line
//! accounted for, no entry's `Debug` shows its stored hash, and a found hash's work
//! factor is reported only when the text showed it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_auth::{find_hash, parse, Entry};

/// The stored hash of the entry from `line` (1-based), as `parse` cuts it: the
/// trimmed line's field after the first `:`, up to a second `:`.
fn hash_field(data: &[u8], line: usize) -> &[u8] {
    let text = data
        .split(|&b| b == b'\n')
        .nth(line - 1)
        .expect("entry line number is a line of the input")
        .trim_ascii();
    let mut fields = text.splitn(3, |&b| b == b':');
    let _user = fields.next();
    fields.next().expect("an entry's line has a ':'")
}

/// What `Debug` of an entry may legitimately show: its public fields and the
/// redaction marker, in the same layout as `Entry`'s `Debug`. A hash that happens to
/// equal part of these (`x:redacted!`, a hash inside the user name) is not a leak.
fn public_debug(e: &Entry) -> String {
    format!(
        "Entry {{ user: {:?}, line: {:?}, scheme: {:?}, hash: <redacted> }}",
        e.user, e.line, e.scheme
    )
}

fn occurrences(haystack: &str, needle: &str) -> usize {
    haystack.match_indices(needle).count()
}

fuzz_target!(|data: &[u8]| {
    if let Some(found) = find_hash(data) {
        assert_eq!(found.work().is_some(), found.work_shown);
        let _ = found.scheme.to_string();
    }
    let file = parse(data);

    // Every non-blank, non-comment line ends up in exactly one of the two lists,
    // in file order.
    let mut lines: Vec<usize> = file
        .entries
        .iter()
        .map(|e| e.line)
        .chain(file.malformed.iter().map(|m| m.line))
        .collect();
    let n = lines.len();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(
        lines.len(),
        n,
        "a line is both an entry and malformed, or twice"
    );
    let used = data
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|t| !t.is_empty() && t.first() != Some(&b'#'))
        .count();
    assert_eq!(
        n, used,
        "every non-blank, non-comment line is accounted for"
    );

    for e in &file.entries {
        assert!(!e.user.is_empty());
        assert!(file.get(&e.user).is_some_and(|first| first.line == e.line));
        let hash = hash_field(data, e.line);
        assert!(!hash.is_empty());
        let _ = e.scheme.to_string();
        let _ = (e.cost(), e.rounds());
        if hash.len() < 8 {
            continue;
        }
        let shown = format!("{e:?}");
        let public = public_debug(e);
        let text = String::from_utf8_lossy(hash);
        // As written, and as `{:?}` of a string or of the bytes would show it.
        let escaped = format!("{text:?}");
        let escaped = &escaped[1..escaped.len() - 1];
        let bytes = format!("{hash:?}");
        for needle in [&*text, escaped, &bytes[1..bytes.len() - 1]] {
            if needle.len() < 8 {
                continue;
            }
            assert!(
                occurrences(&shown, needle) <= occurrences(&public, needle),
                "Debug of line {} shows its hash {needle:?}: {shown}",
                e.line
            );
        }
    }
    for m in &file.malformed {
        let _ = (format!("{m:?}"), m.reason.to_string());
    }
});
