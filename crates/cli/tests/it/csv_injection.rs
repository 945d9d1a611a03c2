//! CSV formula injection: text from a log (User-Agents, paths, users, ciphers, file
//! names) that a spreadsheet would run as a formula gets a `'` in front in every
//! `--format csv`, control characters are escaped as in tables, numbers stay numbers,
//! and `--csv-raw` writes the values as they are. Every output is read back with an
//! RFC 4180 reader: same number of fields in every row.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use crate::util::{self, assert_code, path_str, stdout, tlsgap, write};

/// One line per hostile value: (user, request target, User-Agent, cipher) as Apache
/// writes them (escaped), always over TLSv1. The first five have a known cipher, so
/// that `whatif --policy mozilla-modern` refuses them and lists their User-Agents;
/// the last four carry the hostile ciphers (which whatif calls unknown).
const LINES: [(&str, &str, &str, &str); 9] = [
    (
        "=HYPERLINK(0)",
        r#"=HYPERLINK(\"http://evil.example/\",\"x\")"#,
        r#"=HYPERLINK(\"http://evil.example/\",\"click\")"#,
        "AES128-SHA",
    ),
    ("+1", "+1", "+1 (compatible)", "AES128-SHA"),
    ("-2+3", "-2+3", "-2+3 agent", "AES128-SHA"),
    ("@SUM(A1)", "@SUM(A1)", "@SUM(A1) bot", "AES128-SHA"),
    // Apache's escapes: a tab first, an ESC inside. (A raw control byte would make
    // the line `binary`, malformed.)
    (r"\tuser", "/ok", r"\tTab agent \x1b[31mred", "AES128-SHA"),
    ("ok", "/c1", "Mozilla/5.0 (X11)", "=HYPERLINK(1)"),
    ("ok", "/c2", "Mozilla/5.0 (X11)", "+1"),
    ("ok", "/c3", "Mozilla/5.0 (X11)", "-2+3"),
    ("ok", "/c4", "Mozilla/5.0 (X11)", "@SUM(A1)"),
];

/// The same values as the log's reader gives them (unescaped).
const USERS: [&str; 6] = ["=HYPERLINK(0)", "+1", "-2+3", "@SUM(A1)", "\tuser", "ok"];
const TARGETS: [&str; 5] = [
    "=HYPERLINK(\"http://evil.example/\",\"x\")",
    "+1",
    "-2+3",
    "@SUM(A1)",
    "/ok",
];
const AGENTS: [&str; 5] = [
    "=HYPERLINK(\"http://evil.example/\",\"click\")",
    "+1 (compatible)",
    "-2+3 agent",
    "@SUM(A1) bot",
    "\tTab agent \u{1b}[31mred",
];
const CIPHERS: [&str; 5] = ["=HYPERLINK(1)", "+1", "-2+3", "@SUM(A1)", "AES128-SHA"];

fn hostile_log(dir: &Path) -> std::path::PathBuf {
    let mut s = String::new();
    for (i, (user, target, ua, cipher)) in LINES.iter().enumerate() {
        s += &format!(
            "10.0.0.{} - {user} [21/Nov/2026:18:07:40 +0100] \"GET {target} HTTP/1.1\" 200 512 \
             \"-\" \"{ua}\" TLSv1 {cipher}\n",
            i + 1
        );
    }
    write(dir, "access.log", s.as_bytes())
}

/// What the default CSV makes of a value: `'` before a formula start, control
/// characters as `\xHH`.
fn safe(v: &str) -> String {
    let mut out = String::new();
    if v.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        out.push('\'');
    }
    for c in v.chars() {
        if c.is_control() {
            out += &format!("\\x{:02X}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    out
}

/// An RFC 4180 reader: the records, each with its fields unquoted (quotes
/// undoubled), and whether each field was quoted. Panics on anything malformed.
fn parse_csv(text: &str) -> Vec<Vec<(String, bool)>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let (mut quoted, mut in_quotes, mut at_start) = (false, false, true);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_quotes {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => in_quotes = false,
                c => field.push(c),
            }
            continue;
        }
        match c {
            '"' if at_start => {
                in_quotes = true;
                quoted = true;
                at_start = false;
            }
            '"' => panic!("quote inside an unquoted field:\n{text}"),
            ',' | '\n' => {
                row.push((std::mem::take(&mut field), quoted));
                quoted = false;
                at_start = true;
                if c == '\n' {
                    rows.push(std::mem::take(&mut row));
                }
            }
            c => {
                assert!(!quoted, "text after a closing quote:\n{text}");
                field.push(c);
                at_start = false;
            }
        }
    }
    assert!(!in_quotes, "unterminated quote:\n{text}");
    assert!(
        field.is_empty() && row.is_empty(),
        "no final newline:\n{text}"
    );
    rows
}

/// A CSV output, read back: the header and the rows, every row as wide as the header.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<(String, bool)>>,
}

impl Table {
    #[track_caller]
    fn read(o: &Output, raw: bool) -> Table {
        let text = stdout(o);
        let mut rows = parse_csv(&text);
        assert!(!rows.is_empty(), "no header:\n{text}");
        let header: Vec<String> = rows.remove(0).into_iter().map(|(h, _)| h).collect();
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(r.len(), header.len(), "row {}:\n{text}", i + 1);
        }
        if !raw {
            // Escaped control characters: one record per line.
            assert_eq!(text.lines().count(), rows.len() + 1, "{text}");
            assert!(
                !text.contains(|c: char| c.is_control() && c != '\n'),
                "a control character in the CSV:\n{text:?}"
            );
        }
        // A text field is quoted; a number never is and never gets a `'`.
        for r in &rows {
            for (v, quoted) in r {
                assert!(*quoted || !v.starts_with('\''), "unquoted {v:?}:\n{text}");
            }
        }
        Table { header, rows }
    }

    /// The values of column `name`, row by row.
    #[track_caller]
    fn column(&self, name: &str) -> Vec<&str> {
        let i = self
            .header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header));
        self.rows.iter().map(|r| r[i].0.as_str()).collect()
    }
}

/// Each of `values`, as the mode writes it, is among `got`.
#[track_caller]
fn assert_all(what: &str, got: &[&str], values: &[&str], raw: bool) {
    let got: BTreeSet<&str> = got.iter().copied().collect();
    for v in values {
        let want = if raw { v.to_string() } else { safe(v) };
        assert!(
            got.contains(want.as_str()),
            "{what}: {want:?} not among {got:?}"
        );
        if !raw && want != *v {
            assert!(!got.contains(v), "{what}: {v:?} written as it is");
        }
    }
}

fn run(dir: &Path, args: &[&str], raw: bool) -> Output {
    let mut c = tlsgap();
    c.current_dir(dir).args(args);
    if raw {
        c.arg("--csv-raw");
    }
    c.output().unwrap()
}

#[test]
fn tls_csv_neutralises_ciphers_and_keeps_counts_numbers() {
    let dir = util::tempdir();
    let log = hostile_log(dir.path());
    for raw in [false, true] {
        let args = [
            "tls",
            "--format",
            "csv",
            "-q",
            "--log-format",
            "combinedssl",
        ];
        let o = run(dir.path(), &[&args[..], &[path_str(&log)]].concat(), raw);
        assert_code(&o, 0);
        let t = Table::read(&o, raw);
        assert_all("tls cipher", &t.column("cipher"), &CIPHERS, raw);
        // (The `plain` row has none.)
        assert!(t
            .column("protocol")
            .iter()
            .all(|p| ["TLSv1", ""].contains(p)));
        // The count after a neutralised cipher is a bare number.
        let text = stdout(&o);
        let cipher = if raw { "-2+3" } else { "'-2+3" };
        assert!(
            text.contains(&format!(",\"TLSv1\",\"{cipher}\",1,")),
            "{text}"
        );
    }
}

#[test]
fn whatif_csv_neutralises_user_agents_and_ciphers() {
    let dir = util::tempdir();
    let log = hostile_log(dir.path());
    for raw in [false, true] {
        let args = [
            "whatif",
            "--format",
            "csv",
            "-q",
            "--log-format",
            "combinedssl",
            "--policy",
            "mozilla-modern",
        ];
        let o = run(dir.path(), &[&args[..], &[path_str(&log)]].concat(), raw);
        assert_code(&o, 0);
        let t = Table::read(&o, raw);
        assert_all("whatif user_agent", &t.column("user_agent"), &AGENTS, raw);
        assert_all("whatif cipher", &t.column("cipher"), &CIPHERS, raw);
        let text = stdout(&o);
        assert!(
            text.lines()
                // Every request is TLSv1, which mozilla-modern turns off: refused
                // whatever its (hostile, unknown) cipher name.
                .any(|l| l.starts_with("\"total\",,,,,,,9,9,9,9,")),
            "{text}"
        );
    }
}

#[test]
fn export_csv_neutralises_users_paths_agents_and_ciphers() {
    let dir = util::tempdir();
    let log = hostile_log(dir.path());
    for raw in [false, true] {
        let args = [
            "export",
            "--format",
            "csv",
            "-q",
            "--log-format",
            "combinedssl",
        ];
        let o = run(dir.path(), &[&args[..], &[path_str(&log)]].concat(), raw);
        assert_code(&o, 0);
        let t = Table::read(&o, raw);
        assert_eq!(t.rows.len(), LINES.len());
        assert_all("export user", &t.column("user"), &USERS, raw);
        assert_all("export target", &t.column("target"), &TARGETS, raw);
        assert_all("export user_agent", &t.column("user_agent"), &AGENTS, raw);
        assert_all("export tls_cipher", &t.column("tls_cipher"), &CIPHERS, raw);
        // The request starts with its method: nothing to neutralise.
        assert!(t.column("request").iter().all(|r| r.starts_with("GET ")));
        // Numbers as numbers.
        assert!(t.column("status").iter().all(|s| *s == "200"));
        let text = stdout(&o);
        assert!(text.contains(",200,512,"), "{text}");
    }
}

#[test]
fn auth_csv_neutralises_users() {
    let dir = util::tempdir();
    let log = hostile_log(dir.path());
    for raw in [false, true] {
        let args = [
            "auth",
            "--format",
            "csv",
            "-q",
            "--log-format",
            "combinedssl",
        ];
        let o = run(
            dir.path(),
            &[&args[..], &["--log", path_str(&log)]].concat(),
            raw,
        );
        assert_code(&o, 0);
        let t = Table::read(&o, raw);
        assert_all("auth user", &t.column("user"), &USERS, raw);
        // The four hostile-cipher lines are user `ok`'s.
        let mut requests = t.column("requests");
        requests.sort_unstable();
        assert_eq!(requests, ["1", "1", "1", "1", "1", "4"]);
    }
}

#[test]
fn merge_csv_neutralises_ciphers_from_parquet() {
    let dir = util::tempdir();
    let log = hostile_log(dir.path());
    let parquet = dir.path().join("rows.parquet");
    let o = tlsgap()
        .args(["export", "--format", "parquet", "-q", "--log-format"])
        .args(["combinedssl", "-o", path_str(&parquet), path_str(&log)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    for raw in [false, true] {
        let args = ["merge", "--format", "csv", "-q", path_str(&parquet)];
        let o = run(dir.path(), &args, raw);
        assert_code(&o, 0);
        let t = Table::read(&o, raw);
        assert_all("merge cipher", &t.column("cipher"), &CIPHERS, raw);
    }
}

#[test]
fn ciphers_csv_neutralises_the_names_asked_for() {
    let dir = util::tempdir();
    let names = ["=HYPERLINK(1)", "+1", "-2+3", "@SUM(A1)"];
    for raw in [false, true] {
        let args = [&["ciphers", "--format", "csv", "--"][..], &names[..]].concat();
        // --csv-raw before `--`.
        let mut c = tlsgap();
        c.current_dir(dir.path()).args(&args[..3]);
        if raw {
            c.arg("--csv-raw");
        }
        let o = c.args(&args[3..]).output().unwrap();
        assert_code(&o, 1);
        let t = Table::read(&o, raw);
        assert_all("ciphers query", &t.column("query"), &names, raw);
    }
}

#[test]
fn gaps_csv_neutralises_file_names() {
    let dir = util::tempdir();
    write(
        dir.path(),
        "@SUM(A1).trace",
        b"1795307607.000000 getpid() = 7016 <0.000011>\n\
          1795307607.500000 getpid() = 7016 <0.000011>\n",
    );
    for raw in [false, true] {
        let o = run(
            dir.path(),
            &["gaps", "--format", "csv", "-q", "@SUM(A1).trace"],
            raw,
        );
        assert_code(&o, 0);
        let t = Table::read(&o, raw);
        assert!(!t.rows.is_empty(), "{}", stdout(&o));
        assert_all("gaps file", &t.column("file"), &["@SUM(A1).trace"], raw);
        assert!(
            t.column("seconds")
                .iter()
                .all(|s| s.parse::<f64>().is_ok_and(|x| x > 0.4)),
            "{}",
            stdout(&o)
        );
    }
}

#[test]
fn the_flag_is_on_every_csv_command() {
    for cmd in [
        "tls", "export", "whatif", "gaps", "auth", "ciphers", "merge",
    ] {
        let o = tlsgap().args([cmd, "--help"]).output().unwrap();
        assert_code(&o, 0);
        assert!(stdout(&o).contains("--csv-raw"), "{cmd} --help");
    }
}
