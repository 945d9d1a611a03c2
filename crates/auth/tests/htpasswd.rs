//! An htpasswd file written by the real `htpasswd` (apache2-utils) at test time: every
//! scheme it can write is parsed with the right scheme and work factor, verified with
//! the right and a wrong password, and nothing derived from it (Debug, JSON report)
//! contains a hash, a salt or a checksum.
//!
//! Without `htpasswd` the test fails, naming the package, unless
//! `TLSGAP_SKIP_HTPASSWD_TESTS=1` says to skip it, and then the skip is printed (the
//! rule every test that needs an outside program follows).

use std::io::{ErrorKind, Write as _};
use std::path::Path;
use std::process::Command;

use tlsgap_auth::{parse, AuthFileReport, MeasureOptions, Scheme, Verification};

/// (user, htpasswd flags, password, expected scheme)
fn users() -> Vec<(&'static str, Vec<&'static str>, &'static str, Scheme)> {
    vec![
        (
            "bc5",
            vec!["-B", "-C", "5"],
            "pw-bc5",
            Scheme::Bcrypt { cost: 5 },
        ),
        (
            "bc10",
            vec!["-B", "-C", "10"],
            "pw-bc10",
            Scheme::Bcrypt { cost: 10 },
        ),
        (
            "bc12",
            vec!["-B", "-C", "12"],
            "pw-bc12",
            Scheme::Bcrypt { cost: 12 },
        ),
        ("apr", vec!["-m"], "pw-apr1 with spaces", Scheme::Apr1),
        ("sha", vec!["-s"], "pw-sha", Scheme::Sha1),
        // DES crypt uses 8 characters at most; htpasswd warns about longer ones.
        ("des", vec!["-d"], "crypt8ch", Scheme::DesCrypt),
        ("plain", vec!["-p"], "pw-plain", Scheme::Plain),
        (
            "sha256",
            vec!["-2"],
            "pw-sha256",
            Scheme::Sha256Crypt { rounds: 5000 },
        ),
        (
            "sha512",
            vec!["-5", "-r", "20000"],
            "pw-sha512",
            Scheme::Sha512Crypt { rounds: 20000 },
        ),
    ]
}

/// Runs `htpasswd -b [-c] FLAGS FILE USER PASSWORD`; `None` if it is not installed.
fn htpasswd(file: &Path, create: bool, flags: &[&str], user: &str, password: &str) -> Option<()> {
    let mut cmd = Command::new("htpasswd");
    cmd.arg(if create { "-cb" } else { "-b" })
        .args(flags)
        .arg(file)
        .arg(user)
        .arg(password);
    match cmd.output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "htpasswd {flags:?} {user} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Some(())
        }
        Err(e) if e.kind() == ErrorKind::NotFound => None,
        Err(e) => panic!("running htpasswd: {e}"),
    }
}

/// Writes the file with the real tool; `None` (after the SKIP notice) without it.
fn real_file(dir: &Path) -> Option<Vec<u8>> {
    let path = dir.join("htpasswd.users");
    for (i, (user, flags, password, _)) in users().into_iter().enumerate() {
        if htpasswd(&path, i == 0, &flags, user, password).is_none() {
            let skip = std::env::var_os("TLSGAP_SKIP_HTPASSWD_TESTS").is_some_and(|v| v == "1");
            assert!(
                skip,
                "`htpasswd` is not installed (apt-get install apache2-utils); \
                 set TLSGAP_SKIP_HTPASSWD_TESTS=1 to skip the real-htpasswd tests"
            );
            // Straight to stderr: the test harness captures eprintln! of passing tests.
            let _ = writeln!(
                std::io::stderr(),
                "\n*** SKIPPED: real_htpasswd_file: TLSGAP_SKIP_HTPASSWD_TESTS=1: the \
                 real-htpasswd tests did NOT run ***\n"
            );
            return None;
        }
    }
    let written = std::fs::read(&path).unwrap();
    // What people add by hand: comments, blank lines, CRLF, trailing fields, junk.
    let mut file = b"# made by htpasswd in tests/htpasswd.rs\r\n\r\n".to_vec();
    for (i, line) in written.split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        file.extend_from_slice(line);
        if i == 0 {
            file.extend_from_slice(b":trailing field");
        }
        file.extend_from_slice(if i % 2 == 0 { b"\r\n" } else { b"\n" });
    }
    file.extend_from_slice(b"   # indented comment\nline without a colon\n");
    Some(file)
}

/// The hash strings of the raw file plus their salt and checksum parts (8+ chars).
fn secrets(file: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for line in String::from_utf8_lossy(file).lines() {
        let Some(hash) = line.trim().split(':').nth(1) else {
            continue;
        };
        out.push(hash.to_owned());
        if let Some(sha) = hash.strip_prefix("{SHA}") {
            out.push(sha.to_owned());
        } else if let Some(bcrypt) = hash.get(7..).filter(|_| hash.starts_with("$2")) {
            // 22 characters of salt, then 31 of checksum.
            out.push(bcrypt.get(..22).unwrap().to_owned());
            out.push(bcrypt.get(22..).unwrap().to_owned());
        } else if hash.starts_with('$') {
            out.extend(
                hash.split('$')
                    .filter(|part| part.len() >= 8 && !part.starts_with("rounds="))
                    .map(str::to_owned),
            );
        } else if hash.len() == 13 {
            out.push(hash.get(2..).unwrap().to_owned());
        }
    }
    out
}

#[test]
fn real_htpasswd_file() {
    let dir = tempfile::tempdir().unwrap();
    let Some(bytes) = real_file(dir.path()) else {
        return;
    };
    let file = parse(&bytes);

    // Every user, with the right scheme and work factor, at the right line.
    assert_eq!(file.entries.len(), users().len());
    for (i, (user, _, password, scheme)) in users().into_iter().enumerate() {
        let entry = file.get(user).unwrap_or_else(|| panic!("{user} missing"));
        assert_eq!(entry.scheme, scheme, "{user}");
        assert_eq!(entry.line, i + 3, "{user}");
        assert_eq!(entry.cost(), scheme.cost(), "{user}");
        assert_eq!(entry.rounds(), scheme.rounds(), "{user}");
        // Real implementations: the right password matches, a wrong one does not.
        assert_eq!(
            entry.verify(password.as_bytes()),
            Verification::Match,
            "{user}"
        );
        assert_eq!(
            entry.verify(b"wrong password"),
            Verification::Mismatch,
            "{user}"
        );
    }

    // The junk line is reported, not dropped; comments and blank lines are not.
    assert_eq!(file.malformed.len(), 1, "{:?}", file.malformed);
    assert_eq!(file.malformed[0].line, users().len() + 4);
    assert_eq!(
        file.malformed[0].reason.to_string(),
        "no ':' between user and hash"
    );

    let report = AuthFileReport::build(&file, &MeasureOptions::default(), 0.050);
    for row in &report.measurements {
        println!(
            "{:<14} cost={:<4} rounds={:<6} {:>14} {}",
            row.scheme,
            row.cost.map_or("-".into(), |c| c.to_string()),
            row.rounds.map_or("-".into(), |r| r.to_string()),
            row.verify_seconds
                .map_or("-".into(), |s| format!("{:.6} s", s)),
            row.how_measured
        );
    }
    let seconds = |cost| {
        report
            .measurements
            .iter()
            .find(|m| m.scheme == "bcrypt" && m.cost == Some(cost))
            .and_then(|m| m.verify_seconds)
            .unwrap()
    };
    assert!(
        seconds(12) > seconds(5),
        "bcrypt cost 12 must cost more than cost 5"
    );
    assert!(report.users.iter().all(|u| u.verify_seconds.is_some()));

    // No hash, salt or checksum anywhere we print.
    let json = serde_json::to_string_pretty(&report).unwrap();
    let debug = format!("{file:?}\n{report:?}\n{:?}", file.entries);
    let secrets = secrets(&bytes);
    assert!(secrets.len() >= 20, "{} secrets", secrets.len());
    for secret in &secrets {
        assert!(!json.contains(secret.as_str()), "JSON leaks {secret}");
        assert!(!debug.contains(secret.as_str()), "Debug leaks {secret}");
    }
    // The plain-text password is the stored value itself.
    assert!(!json.contains("pw-plain") && !debug.contains("pw-plain"));
}
