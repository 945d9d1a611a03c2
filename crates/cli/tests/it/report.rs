//! `tlsgap report`: the HTML page and the text version. Log strings carrying markup
//! must arrive as text (checked in the HTML and in a real browser's DOM), and the
//! numbers on the page must be those of `tls --format json` and `whatif`.
//!
//! The browser tests run Debian's `chromium` headless (apt-get install chromium) and
//! leave a screenshot in `<target>/tlsgap-artifacts/report.png`; like the server tests
//! they fail when it is missing, or skip loudly with `TLSGAP_SKIP_SERVER_TESTS=1`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{self, assert_code, path_str, repo_root, stdout, tempdir, write};

/// Markup and script that must stay text, wherever a log string lands.
const SCRIPT: &str = "<script>document.title='pwned'</script>";
const IMG_UA: &str = "\"><img src=x onerror=document.title='pwned'>";

/// A combinedssl log whose paths, User-Agents, protocols and ciphers carry markup,
/// URLs and control characters. Every line parses.
fn hostile_log() -> Vec<u8> {
    let ua_img = IMG_UA.replace('"', "\\\"");
    let lines = [
        format!(
            "203.0.113.7 - - [21/Nov/2026:18:07:40 +0100] \"GET /{SCRIPT} HTTP/1.1\" 200 512 \
             \"-\" \"{SCRIPT}\" TLSv1 DES-CBC3-SHA"
        ),
        format!(
            "203.0.113.8 - - [21/Nov/2026:18:07:41 +0100] \"GET /x?<img/src=x/onerror=alert(1)> \
             HTTP/1.1\" 200 512 \"https://evil.example/\" \"{ua_img}\" TLSv1.1 AES128-SHA"
        ),
        "203.0.113.9 - - [21/Nov/2026:18:07:42 +0100] \"GET / HTTP/1.1\" 200 512 \"-\" \
         \"<link rel=stylesheet href=https://evil.example/x.css>\" <script>alert(1)</script> \
         <img/src=x/onerror=alert(1)>"
            .to_string(),
        // Apache writes control bytes as \xHH; unescaped, they are ESC and BEL.
        "203.0.113.10 - - [22/Nov/2026:01:00:00 +0100] \"GET / HTTP/1.1\" 200 512 \"-\" \
         \"evil\\x1b[2J\\x1b]0;title\\x07\" TLSv1 RC4-SHA"
            .to_string(),
        "203.0.113.11 - - [22/Nov/2026:02:00:00 +0100] \"GET / HTTP/1.1\" 200 512 \"-\" \
         \"Mozilla/5.0 (test)\" TLSv1.3 TLS_AES_128_GCM_SHA256"
            .to_string(),
    ];
    let mut out = lines.join("\n").into_bytes();
    out.push(b'\n');
    out
}

/// Elements the template and plotters' SVG write; nothing else may appear.
const ALLOWED_TAGS: &[&str] = &[
    "html", "head", "meta", "title", "style", "body", "header", "footer", "section", "h1", "h2",
    "h3", "p", "span", "strong", "code", "ul", "li", "table", "thead", "tbody", "tr", "th", "td",
    "figure", "details", "summary", "svg", "g", "rect", "text", "polyline", "polygon", "path",
    "line", "circle",
];

/// A start tag: its name and attribute names.
#[derive(Debug)]
struct Tag {
    name: String,
    attrs: Vec<(String, String)>,
}

/// Every start tag of an HTML serialization. In escaped output a `<` always opens
/// markup, so this sees exactly the elements a browser would build (comments and the
/// doctype aside; `<style>` holds CSS without `<`).
fn start_tags(html: &str) -> Vec<Tag> {
    let b = html.as_bytes();
    let mut tags = Vec::new();
    let mut i = 0;
    while let Some(off) = html[i..].find('<') {
        let start = i + off + 1;
        i = start;
        match b.get(start) {
            Some(b'/') | Some(b'!') | None => continue,
            _ => {}
        }
        let name_end = html[start..]
            .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
            .map_or(html.len(), |e| start + e);
        let name = html[start..name_end].to_ascii_lowercase();
        let mut attrs = Vec::new();
        let mut j = name_end;
        loop {
            while j < b.len() && (b[j].is_ascii_whitespace() || b[j] == b'/') {
                j += 1;
            }
            if j >= b.len() || b[j] == b'>' {
                break;
            }
            let a_start = j;
            while j < b.len() && !b[j].is_ascii_whitespace() && !b"=>/".contains(&b[j]) {
                j += 1;
            }
            let attr = html[a_start..j].to_ascii_lowercase();
            let mut value = String::new();
            if b.get(j) == Some(&b'=') {
                j += 1;
                let quote = b.get(j).copied();
                if quote == Some(b'"') || quote == Some(b'\'') {
                    let q = quote.unwrap_or(b'"') as char;
                    let v_start = j + 1;
                    let v_end = html[v_start..].find(q).map_or(html.len(), |e| v_start + e);
                    value = html[v_start..v_end].to_string();
                    j = v_end + 1;
                } else {
                    let v_start = j;
                    while j < b.len() && !b[j].is_ascii_whitespace() && b[j] != b'>' {
                        j += 1;
                    }
                    value = html[v_start..j].to_string();
                }
            }
            attrs.push((attr, value));
        }
        tags.push(Tag { name, attrs });
        i = j.min(html.len());
    }
    tags
}

/// What [`assert_only_report_markup`] looks at.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    /// The file tlsgap wrote: its escaping (`/` as `&#x2f;`) leaves no URL in it at all.
    Page,
    /// A browser's serialization of the DOM, where text is shown unescaped (a
    /// User-Agent's `+http://...` is text there).
    Dom,
}

/// Nothing in `html` is markup that did not come from the template: every element is
/// one the report writes, no attribute is an event handler or points anywhere (and in
/// the page itself no URL appears at all).
#[track_caller]
fn assert_only_report_markup(html: &str, source: Source) {
    let tags = start_tags(html);
    assert!(tags.len() > 50, "too few elements: {}", tags.len());
    for t in &tags {
        assert!(
            ALLOWED_TAGS.contains(&t.name.as_str()),
            "unexpected element <{}> {:?}",
            t.name,
            t.attrs
        );
        for (a, v) in &t.attrs {
            assert!(
                !a.starts_with("on"),
                "event handler on <{}>: {a}={v}",
                t.name
            );
            assert!(
                !matches!(
                    a.as_str(),
                    "src" | "href" | "xlink:href" | "action" | "srcset"
                ),
                "<{}> loads something: {a}={v}",
                t.name
            );
        }
    }
    let lower = html.to_ascii_lowercase();
    assert_eq!(lower.matches("<script").count(), 0, "a <script> element");
    if source == Source::Page {
        assert!(
            !lower.contains("http://") && !lower.contains("https://"),
            "a URL"
        );
    }
    assert!(!lower.contains("url("), "a CSS url()");
    let controls: Vec<char> = html
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        .collect();
    assert!(controls.is_empty(), "raw control characters: {controls:?}");
}

/// The `<section id=ID>` of a page or DOM, up to its end.
#[track_caller]
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let open = format!("<section id=\"{id}\">");
    let start = html
        .find(&open)
        .unwrap_or_else(|| panic!("no section #{id}"));
    let len = html[start..].find("</section>").expect("section end");
    &html[start..start + len]
}

/// The value of attribute `name` in the first tag of `chunk` that has it.
fn attr(chunk: &str, name: &str) -> Option<String> {
    start_tags(chunk)
        .into_iter()
        .find_map(|t| t.attrs.into_iter().find(|(a, _)| a == name).map(|(_, v)| v))
}

fn num(chunk: &str, name: &str) -> u64 {
    attr(chunk, name)
        .unwrap_or_else(|| panic!("no {name} in {chunk}"))
        .parse()
        .unwrap()
}

/// Table rows of a section (the text from one `<tr` to the next).
fn rows(section: &str) -> Vec<&str> {
    section.split("<tr").skip(1).collect()
}

/// `tlsgap report -q --html FILE ARGS...`: the page.
fn report_html(dir: &Path, args: &[&str]) -> String {
    let page = dir.join("report.html");
    let o = util::tlsgap()
        .env("TZ", "UTC")
        .args(["report", "-q", "--html", path_str(&page)])
        .args(args)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(o.stdout.is_empty(), "--html alone writes no text");
    std::fs::read_to_string(&page).unwrap()
}

#[test]
fn hostile_log_strings_stay_text_in_the_html() {
    let dir = tempdir();
    let log = write(dir.path(), "hostile.log", &hostile_log());
    let html = report_html(dir.path(), &[path_str(&log)]);
    assert_only_report_markup(&html, Source::Page);
    // The strings were shown (as text), not dropped: in tables and in the charts.
    let dist = section(&html, "distribution");
    assert!(
        dist.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
        "{dist}"
    );
    assert!(
        dist.contains("&lt;img&#x2f;src=x&#x2f;onerror=alert(1)&gt;"),
        "{dist}"
    );
    assert!(section(&html, "trend").contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let whatif = section(&html, "whatif");
    assert!(whatif.contains("&lt;script&gt;document.title=&#x27;pwned&#x27;"));
    assert!(whatif.contains("&quot;&gt;&lt;img src=x onerror=document.title="));
    assert!(
        whatif.contains("evil\\x1B[2J\\x1B]0;title\\x07"),
        "{whatif}"
    );
    // The text version shows control characters, never sends them.
    let o = util::tlsgap()
        .env("TZ", "UTC")
        .args(["report", "-q", path_str(&log)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o);
    assert!(text.contains("<script>alert(1)</script>"), "{text}");
    assert!(!o.stdout.iter().any(|&b| b == 0x1b || b == 0x07));
}

#[test]
fn text_goes_to_stdout_or_output_and_names_every_section() {
    let dir = tempdir();
    let sample = repo_root().join("testdata/sample/combinedssl.log.gz");
    let o = util::tlsgap()
        .env("TZ", "UTC")
        .args(["report", "-q", path_str(&sample)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o);
    for heading in [
        "PROTOCOLS AND CIPHERS",
        "PROTOCOL SHARE BY DAY (UTC)",
        "VERDICTS",
        "WHAT THE MOZILLA PROFILES WOULD REFUSE",
        "MALFORMED LINES",
    ] {
        assert!(text.contains(heading), "no {heading} in\n{text}");
    }
    // The figures of `tls` and `whatif`, laid out for mail.
    let o = util::tlsgap()
        .current_dir(repo_root())
        .env("TZ", "UTC")
        .args(["report", "-q", "testdata/sample/combinedssl.log.gz"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    insta::assert_snapshot!("report_text", stdout(&o));
    // -o takes the text, --html the page; neither is on stdout.
    let txt = dir.path().join("r.txt");
    let page = dir.path().join("r.html");
    let o = util::tlsgap()
        .env("TZ", "UTC")
        .args([
            "report",
            "-q",
            "-o",
            path_str(&txt),
            "--html",
            path_str(&page),
        ])
        .arg(&sample)
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&txt).unwrap(), text);
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
}

#[test]
fn auth_section_with_htpasswd_and_traces_counts_each_users_requests() {
    let dir = tempdir();
    let real = repo_root().join("testdata/auth/real");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(real.join("manifest.json")).unwrap()).unwrap();
    let fmt = manifest["log_format"].as_str().unwrap();
    let mut log = std::fs::read(real.join("access.log")).unwrap();
    // A user name with markup (not in the htpasswd file), from an untraced process.
    log.extend_from_slice(
        b"127.0.0.1 - <b>mallory</b> [22/Nov/2026:01:09:50 +0000] \"GET / HTTP/1.1\" 401 421 \
          \"-\" \"curl/7.88.1\" TLSv1.3 TLS_AES_256_GCM_SHA384 1 1795309790.000000 2744\n",
    );
    let log = write(dir.path(), "access.log", &log);
    let without = report_html(dir.path(), &[path_str(&log), "--log-format", fmt]);
    assert!(!without.contains("id=\"auth\""));
    let htpasswd = real.join("htpasswd");
    let traces = real.join("traces/trace.*");
    let html = report_html(
        dir.path(),
        &[
            path_str(&log),
            "--log-format",
            fmt,
            "--htpasswd",
            path_str(&htpasswd),
            "--traces",
            path_str(&traces),
        ],
    );
    assert_only_report_markup(&html, Source::Page);
    let auth = section(&html, "auth");
    assert!(auth.contains("<h2>Authentication cost per user</h2>"));
    assert!(auth.contains("Evidence: htpasswd, log, traces"), "{auth}");
    let mut users = BTreeMap::new();
    for r in rows(auth) {
        let r = format!("<tr{r}");
        if let Some(u) = attr(&r, "data-user") {
            let gaps = attr(&r, "data-gaps").map(|g| g.parse::<u64>().unwrap());
            users.insert(u, (num(&r, "data-requests"), gaps));
        }
    }
    // Every request counted; one auth gap per request for the expensive users (the
    // others verify faster than --min-gap).
    let ranked: Vec<&str> = manifest["expected_ranking"]["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    assert!(!ranked.is_empty());
    for (u, want) in manifest["users"].as_object().unwrap() {
        let total = want["requests"]["total"].as_u64().unwrap();
        let (requests, gaps) = users.get(u).copied().unwrap_or_else(|| panic!("no {u}"));
        assert_eq!(requests, total, "{u}");
        if ranked.contains(&u.as_str()) {
            assert_eq!(gaps, Some(total), "{u}");
        }
    }
    // The page ranks them as `auth` does: the expensive ones first, in order.
    let order: Vec<&str> = rows(auth)
        .iter()
        .filter_map(|r| r.split("data-user=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(order[..ranked.len()], ranked[..], "{order:?}");
    assert_eq!(
        users.get("&lt;b&gt;mallory&lt;&#x2f;b&gt;"),
        Some(&(1, None)),
        "{users:?}"
    );
    // The hashes stay out, as in `auth`.
    for line in std::fs::read_to_string(&htpasswd).unwrap().lines() {
        let hash = line.split_once(':').map_or("", |(_, h)| h);
        assert!(!html.contains(hash), "a hash reached the page");
    }
}

// --- in a real browser --------------------------------------------------------------

/// Where CI keeps artifacts: `<target>/tlsgap-artifacts`.
fn artifacts_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_TARGET_TMPDIR"))
                .parent()
                .expect("target dir")
                .to_path_buf()
        });
    let dir = target.join("tlsgap-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Headless chromium on `page` with `args` (`--dump-dom`, `--screenshot=...`); its
/// stdout. Killed (and the test failed) if it hangs.
fn chromium(page: &Path, args: &[&str]) -> String {
    let profile = tempdir();
    let out_dir = tempdir();
    let out_path = out_dir.path().join("stdout");
    let err_path = out_dir.path().join("stderr");
    let url = format!("file://{}", page.canonicalize().unwrap().display());
    let mut child = Command::new(util::find_program("chromium").expect("chromium"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("start chromium");
    // A guard against a hung browser, not a timing assertion.
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!(
                "chromium did not finish in 300 s; stderr:\n{}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        status.success(),
        "chromium failed ({status}); stderr:\n{}",
        std::fs::read_to_string(&err_path).unwrap_or_default()
    );
    std::fs::read_to_string(&out_path).unwrap()
}

fn browser_enabled(test: &str) -> bool {
    util::server_test_enabled(test, &["chromium"], "chromium")
}

/// `(protocol, cipher or "")` → count, from the `#distribution` table of a DOM.
fn dom_distribution(dom: &str) -> (BTreeMap<(String, String), u64>, u64, u64) {
    let dist = section(dom, "distribution");
    let mut counts = BTreeMap::new();
    let (mut total, mut plain) = (None, None);
    for r in rows(dist) {
        let r = format!("<tr{r}");
        if let Some(p) = attr(&r, "data-protocol") {
            let c = attr(&r, "data-cipher").unwrap_or_default();
            let prev = counts.insert((p, c), num(&r, "data-count"));
            assert!(prev.is_none(), "a row twice: {r}");
        } else if attr(&r, "data-total").is_some() {
            total = Some(num(&r, "data-total"));
        } else if attr(&r, "data-plain").is_some() {
            plain = Some(num(&r, "data-plain"));
        }
    }
    (counts, total.expect("TLS total"), plain.expect("plain"))
}

fn json_distribution(v: &Value) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for p in v["protocols"].as_array().unwrap() {
        let name = p["protocol"].as_str().unwrap().to_string();
        m.insert((name.clone(), String::new()), p["count"].as_u64().unwrap());
        for c in p["ciphers"].as_array().unwrap() {
            m.insert(
                (name.clone(), c["cipher"].as_str().unwrap().to_string()),
                c["count"].as_u64().unwrap(),
            );
        }
    }
    m
}

#[test]
fn report_in_chromium_shows_the_numbers_of_tls_json() {
    if !browser_enabled("report_in_chromium_shows_the_numbers_of_tls_json") {
        return;
    }
    let dir = tempdir();
    let sample = repo_root().join("testdata/sample/combinedssl.log.gz");
    report_html(dir.path(), &[path_str(&sample)]);
    let page = dir.path().join("report.html");
    let dom = chromium(&page, &["--dump-dom"]);
    assert!(dom.contains("<title>tlsgap report</title>"), "{dom}");
    assert_only_report_markup(&dom, Source::Dom);
    for (id, heading) in [
        ("distribution", "Protocols and ciphers"),
        ("trend", "Protocol share by day"),
        ("verdicts", "Verdicts"),
        ("whatif", "What the Mozilla profiles would refuse"),
        ("malformed", "Malformed lines"),
    ] {
        assert!(
            section(&dom, id).contains(&format!("<h2>{heading}</h2>")),
            "#{id} has no heading {heading}"
        );
    }
    assert!(!dom.contains("id=\"auth\""));
    // Two charts, drawn.
    assert!(section(&dom, "distribution").contains("<svg"));
    assert!(section(&dom, "trend").contains("<svg"));

    let (v, o) = util::tls_json(&[path_str(&sample)]);
    assert_code(&o, 0);
    let (counts, total, plain) = dom_distribution(&dom);
    assert_eq!(counts, json_distribution(&v));
    assert_eq!(total, v["total"].as_u64().unwrap());
    assert_eq!(plain, v["plain"].as_u64().unwrap());

    let verdicts = section(&dom, "verdicts");
    let mut tallies = 0;
    for r in rows(verdicts) {
        let r = format!("<tr{r}");
        if let Some(key) = attr(&r, "data-tally") {
            assert_eq!(
                num(&r, "data-count"),
                v["summary"][&key]["count"].as_u64().unwrap(),
                "{key}"
            );
            tallies += 1;
        }
    }
    assert_eq!(tallies, 6);
    assert_eq!(
        attr(verdicts, "data-grade-cap").as_deref(),
        v["summary"]["grade_cap"].as_str()
    );

    let malformed = section(&dom, "malformed");
    assert_eq!(
        num(malformed, "data-malformed"),
        v["lines"]["malformed"].as_u64().unwrap()
    );
    let by_reason = v["lines"]["malformed_by_reason"].as_object().unwrap();
    let mut reasons = 0;
    for r in rows(malformed) {
        let r = format!("<tr{r}");
        if let Some(reason) = attr(&r, "data-reason") {
            assert_eq!(
                num(&r, "data-count"),
                by_reason[&reason].as_u64().unwrap(),
                "{reason}"
            );
            reasons += 1;
        }
    }
    assert_eq!(reasons, by_reason.len());

    // The trend's periods add up to the TLS total.
    let trend_total: u64 = rows(section(&dom, "trend"))
        .iter()
        .filter_map(|r| attr(&format!("<tr{r}"), "data-total"))
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(trend_total, v["total"].as_u64().unwrap());

    let whatif = section(&dom, "whatif");
    let mut profiles = Vec::new();
    for r in rows(whatif) {
        let r = format!("<tr{r}");
        let Some(profile) = attr(&r, "data-profile") else {
            continue;
        };
        let o = util::tlsgap()
            .args(["whatif", "-q", "--format", "json", "--policy", &profile])
            .arg(&sample)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let w = util::json(&o);
        assert_eq!(
            num(&r, "data-refused"),
            w["requests"]["refused"].as_u64().unwrap()
        );
        assert_eq!(
            num(&r, "data-total"),
            w["requests"]["total"].as_u64().unwrap()
        );
        assert_eq!(
            num(&r, "data-refused-clients"),
            w["clients"]["refused"].as_u64().unwrap()
        );
        profiles.push(profile);
    }
    assert_eq!(
        profiles,
        ["mozilla-modern", "mozilla-intermediate", "mozilla-old-5.7"]
    );

    // The screenshot CI keeps.
    let png = artifacts_dir().join("report.png");
    std::fs::remove_file(&png).ok();
    chromium(
        &page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,2000",
        ],
    );
    let bytes = std::fs::read(&png).expect("the screenshot was written");
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(
        bytes.len() > 10 * 1024,
        "screenshot of {} bytes",
        bytes.len()
    );
}

#[test]
fn hostile_report_in_chromium_builds_no_element_from_a_log() {
    if !browser_enabled("hostile_report_in_chromium_builds_no_element_from_a_log") {
        return;
    }
    let dir = tempdir();
    let log = write(dir.path(), "hostile.log", &hostile_log());
    report_html(dir.path(), &[path_str(&log)]);
    let page = dir.path().join("report.html");
    let dom = chromium(&page, &["--dump-dom"]);
    // Nothing ran (the payloads would rename the page) and nothing was injected.
    assert!(dom.contains("<title>tlsgap report</title>"), "{dom}");
    assert!(!dom.contains("pwned</title>"));
    assert_only_report_markup(&dom, Source::Dom);
    for t in start_tags(&dom) {
        assert!(t.name != "script" && t.name != "img" && t.name != "link");
        assert!(t.attrs.iter().all(|(a, _)| a != "onerror"));
    }
    // The payloads are there, as text the browser shows.
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
    assert!(dom.contains("\"&gt;&lt;img src=x onerror=document.title='pwned'&gt;"));
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}

#[test]
fn trend_periods_follow_tz_and_by() {
    // The sample's four minutes are 00:00-00:04 on the 21st at +02:00, 22:00 the 20th UTC.
    let sample = repo_root().join("testdata/sample/combinedssl.log.gz");
    let text = |args: &[&str]| {
        let o = util::tlsgap()
            .env("TZ", "UTC")
            .args(["report", "-q"])
            .args(args)
            .arg(&sample)
            .output()
            .unwrap();
        assert_code(&o, 0);
        stdout(&o)
    };
    let utc = text(&["--by", "hour"]);
    assert!(utc.contains("PROTOCOL SHARE BY HOUR (UTC)\n"), "{utc}");
    assert!(utc.contains("\n2026-11-20T22         4,873"), "{utc}");
    let sofia = text(&["--tz", "Europe/Sofia"]);
    assert!(
        sofia.contains("PROTOCOL SHARE BY DAY (Europe/Sofia)\n"),
        "{sofia}"
    );
    assert!(sofia.contains("\n2026-11-21            4,873"), "{sofia}");
    assert!(
        sofia.contains("requests from 2026-11-21T00:00:00+02:00"),
        "{sofia}"
    );
}

/// `--traces` takes several values: an access log after the traces (a shell glob, a
/// hurried command line) is recognised by its content and read as the log, with a
/// warning, instead of the report reading an empty standard input and saying nothing.
#[test]
fn an_access_log_after_traces_is_read_as_the_log() {
    let dir = util::repo_root().join("testdata/auth/real");
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let fmt = m["log_format"].as_str().unwrap();
    let traces = [
        "traces/trace.5693",
        "traces/trace.5694",
        "traces/trace.5695",
    ];
    let report = |args: &[&str]| {
        let o = util::tlsgap()
            .current_dir(&dir)
            .env("TZ", "UTC")
            .args([
                "report",
                "--text",
                "--log-format",
                fmt,
                "--htpasswd",
                "htpasswd",
            ])
            .args(args)
            .write_stdin("")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", util::stderr(&o));
        o
    };
    let mut after = vec!["--traces"];
    after.extend(traces);
    after.push("access.log");
    let mut before = vec!["access.log", "--traces"];
    before.extend(traces);
    let swallowed = report(&after);
    let plain = report(&before);
    assert!(
        util::stderr(&swallowed).contains("access.log: an access log, not strace output"),
        "{}",
        util::stderr(&swallowed)
    );
    assert!(!util::stderr(&plain).contains("not strace output"));
    let lines = |o: &std::process::Output| {
        util::stdout(o)
            .lines()
            .find(|l| l.starts_with("lines:"))
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        lines(&swallowed),
        "lines: 138 read, 138 parsed, 0 malformed"
    );
    assert_eq!(lines(&swallowed), lines(&plain));
}

/// The text and the page end with one newline, as text files do.
#[test]
fn report_text_and_page_end_with_one_newline() {
    let dir = tempdir();
    let page = dir.path().join("r.html");
    let sample = repo_root().join("testdata/sample/combinedssl.log.gz");
    let o = util::tlsgap()
        .args(["report", "-q", "--text", "--html", path_str(&page)])
        .arg(&sample)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let text = stdout(&o);
    assert!(
        text.ends_with('\n') && !text.ends_with("\n\n"),
        "{:?}",
        &text[text.len() - 20..]
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.ends_with("</html>\n"),
        "{:?}",
        &html[html.len() - 20..]
    );
}

// --- --policy, --format json, the 80 columns ----------------------------------------

/// `tlsgap report -q ARGS...` (TZ=UTC), exit 0: (stdout, output).
fn report_out(dir: &Path, args: &[&str]) -> String {
    let o = util::tlsgap()
        .current_dir(dir)
        .env("TZ", "UTC")
        .args(["report", "-q"])
        .args(args)
        .output()
        .unwrap();
    assert_code(&o, 0);
    stdout(&o)
}

/// The checked-in corpus as (directory, arguments naming the log and its format): the
/// generated sample, every real server log, and the real Apache auth run with its
/// htpasswd file and traces.
fn corpus() -> Vec<(PathBuf, Vec<String>)> {
    let root = repo_root();
    let mut out = vec![(
        root.clone(),
        vec!["testdata/sample/combinedssl.log.gz".to_string()],
    )];
    let formats: Value =
        serde_json::from_slice(&std::fs::read(root.join("testdata/real/formats.json")).unwrap())
            .unwrap();
    for (log, fmt) in formats.as_object().unwrap() {
        out.push((
            root.join("testdata/real"),
            vec![
                log.clone(),
                "--log-format".into(),
                fmt.as_str().unwrap().into(),
            ],
        ));
    }
    out.push((auth_dir(), auth_args()));
    out
}

fn auth_dir() -> PathBuf {
    repo_root().join("testdata/auth/real")
}

/// The auth run's log, format, htpasswd and traces, relative to [`auth_dir`].
fn auth_args() -> Vec<String> {
    let m: Value =
        serde_json::from_slice(&std::fs::read(auth_dir().join("manifest.json")).unwrap()).unwrap();
    let mut a: Vec<String> = [
        "access.log",
        "--log-format",
        m["log_format"].as_str().unwrap(),
        "--htpasswd",
        "htpasswd",
        "--traces",
    ]
    .map(String::from)
    .to_vec();
    let mut traces: Vec<String> = std::fs::read_dir(auth_dir().join("traces"))
        .unwrap()
        .map(|e| format!("traces/{}", e.unwrap().file_name().to_string_lossy()))
        .collect();
    traces.sort();
    assert!(!traces.is_empty());
    a.extend(traces);
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// `1,234` → 1234.
fn count(s: &str) -> u64 {
    s.replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("not a count: {s:?}"))
}

/// `61.61%` is `share` (0-1) shown with two decimals.
#[track_caller]
fn assert_percent(text: &str, share: f64, what: &str) {
    let shown: f64 = text
        .strip_suffix('%')
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{what}: not a percentage: {text:?}"));
    assert!(
        (shown - share * 100.0).abs() <= 0.005 + 1e-9,
        "{what}: text {text}, JSON {share}"
    );
}

/// `334.9ms` / `6.62s` / `-` is `seconds` as the report rounds it.
#[track_caller]
fn assert_seconds(text: &str, seconds: Option<f64>, what: &str) {
    match (text, seconds) {
        ("-", None) => {}
        (t, Some(s)) => {
            let (shown, step) = if let Some(ms) = t.strip_suffix("ms") {
                (ms.parse::<f64>().unwrap() / 1000.0, 0.000_05)
            } else {
                let s = t
                    .strip_suffix('s')
                    .unwrap_or_else(|| panic!("{what}: {t:?}"));
                (s.parse::<f64>().unwrap(), 0.005)
            };
            assert!(
                (shown - s).abs() <= step + 1e-9,
                "{what}: text {t}, JSON {s}"
            );
        }
        (t, s) => panic!("{what}: text {t:?}, JSON {s:?}"),
    }
}

/// The lines of the text's section under `heading` (up to the next blank line pair).
fn text_section<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let start = text
        .find(&format!("\n{heading}"))
        .unwrap_or_else(|| panic!("no {heading} in\n{text}"));
    text[start + 1..]
        .split("\n\n\n")
        .next()
        .unwrap()
        .lines()
        .skip(1)
        .collect()
}

/// The last `n` words of a line, and the rest of it (a name that may hold spaces).
fn split_right(line: &str, n: usize) -> (String, Vec<&str>) {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert!(words.len() > n, "{line:?}");
    let (name, figures) = words.split_at(words.len() - n);
    (name.join(" "), figures.to_vec())
}

/// Every figure of the text report is the JSON's (`v`, the same input).
fn assert_text_shows_json(text: &str, v: &Value, what: &str) {
    let lines = &v["lines"];
    assert!(
        text.contains(&format!(
            "\nlines: {} read, {} parsed, {} malformed\n",
            util_thousands(lines["total"].as_u64().unwrap()),
            util_thousands(lines["parsed"].as_u64().unwrap()),
            util_thousands(lines["malformed"].as_u64().unwrap())
        )),
        "{what}: lines\n{text}"
    );

    // Protocols and ciphers, row by row, in the JSON's order.
    let dist = &v["distribution"];
    let mut want = Vec::new();
    for p in dist["protocols"].as_array().unwrap() {
        want.push((p["protocol"].as_str().unwrap().to_string(), p));
        for c in p["ciphers"].as_array().unwrap() {
            want.push((format!("  {}", c["cipher"].as_str().unwrap()), c));
        }
    }
    let section = text_section(text, "PROTOCOLS AND CIPHERS");
    let rows: Vec<&str> = section[1..]
        .iter()
        .copied()
        .take_while(|l| !l.starts_with("TLS total"))
        .collect();
    assert_eq!(rows.len(), want.len(), "{what}: protocol rows");
    for (row, (name, j)) in rows.iter().zip(&want) {
        let (shown, f) = split_right(row, 3);
        let indent = if row.starts_with("  ") { "  " } else { "" };
        assert_eq!(format!("{indent}{shown}"), *name, "{what}");
        assert_eq!(count(f[0]), j["count"].as_u64().unwrap(), "{what}: {name}");
        assert_percent(f[1], j["share"].as_f64().unwrap(), name);
        assert_eq!(f[2], j["verdict"].as_str().unwrap(), "{what}: {name}");
    }
    let total = section.iter().find(|l| l.starts_with("TLS total")).unwrap();
    assert_eq!(
        count(split_right(total, 1).1[0]),
        dist["total"].as_u64().unwrap()
    );
    let plain = section
        .iter()
        .find(|l| l.starts_with("plain HTTP"))
        .unwrap();
    assert_eq!(
        count(split_right(plain, 1).1[0]),
        dist["plain"].as_u64().unwrap()
    );

    // The trend: each period's TLS requests and protocol shares; `other` is the sum of
    // the protocols without a column.
    let by = v["by"].as_str().unwrap();
    let trend = text_section(
        text,
        &format!(
            "PROTOCOL SHARE BY {} ({})",
            by.to_uppercase(),
            v["zone"].as_str().unwrap()
        ),
    );
    let periods = v["trend"]["periods"].as_array().unwrap();
    if periods.is_empty() {
        assert_eq!(trend[0], "no TLS request with a time", "{what}");
    } else {
        let header: Vec<&str> = trend[0].split_whitespace().collect();
        assert_eq!(&header[..2], &[by, "TLS"]);
        let columns = &header[2..];
        for (row, p) in trend[1..].iter().zip(periods) {
            let f: Vec<&str> = row.split_whitespace().collect();
            assert_eq!(f[0], p["period"].as_str().unwrap(), "{what}");
            let total = p["total"].as_u64().unwrap();
            assert_eq!(count(f[1]), total, "{what}");
            for (col, shown) in columns.iter().zip(&f[2..]) {
                let n: u64 = p["protocols"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|x| {
                        let name = x["protocol"].as_str().unwrap();
                        if *col == "other" {
                            !columns.contains(&name)
                        } else {
                            name == *col
                        }
                    })
                    .map(|x| x["count"].as_u64().unwrap())
                    .sum();
                assert_percent(shown, n as f64 / total as f64, col);
            }
        }
        assert_eq!(trend.len() - 1, periods.len(), "{what}: periods");
    }

    // The verdict tallies and the rating cap.
    let verdicts = text_section(text, "VERDICTS");
    for (label, key) in [
        (
            "legacy protocols (SSLv2/3, TLS 1.0/1.1)",
            "legacy_protocols",
        ),
        ("insecure ciphers", "insecure_ciphers"),
        ("weak ciphers", "weak_ciphers"),
        ("without forward secrecy", "no_forward_secrecy"),
        ("without AEAD", "no_aead"),
        ("unknown protocol or cipher", "unknown"),
    ] {
        let row = verdicts
            .iter()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("{what}: no {label}"));
        let (_, f) = split_right(row, 2);
        let t = &dist["summary"][key];
        assert_eq!(count(f[0]), t["count"].as_u64().unwrap(), "{what}: {key}");
        assert_percent(f[1], t["share"].as_f64().unwrap(), key);
    }
    match dist["summary"]["grade_cap"].as_str() {
        Some(g) => assert!(
            verdicts.contains(&format!("rating cap implied by this traffic: {g}").as_str()),
            "{what}"
        ),
        None => assert!(verdicts.contains(&"no rating cap"), "{what}"),
    }

    // One what-if row per policy, labelled as in the JSON.
    let whatifs = v["whatif"].as_array().unwrap();
    let heading = if text.contains("\nWHAT THE MOZILLA PROFILES WOULD REFUSE\n") {
        "WHAT THE MOZILLA PROFILES WOULD REFUSE"
    } else {
        "WHAT THE POLICIES WOULD REFUSE"
    };
    let section = text_section(text, heading);
    if whatifs.is_empty() {
        assert_eq!(section, ["not available for this log format"], "{what}");
    } else {
        assert_eq!(section.len(), whatifs.len() + 2, "{what}: {section:?}");
        for (row, w) in section[1..].iter().zip(whatifs) {
            let (label, f) = split_right(row, 4);
            assert_eq!(label, w["label"].as_str().unwrap(), "{what}");
            assert_eq!(count(f[0]), w["requests"]["refused"].as_u64().unwrap());
            assert_percent(f[1], w["requests"]["share"].as_f64().unwrap(), &label);
            assert_eq!(count(f[2]), w["clients"]["refused"].as_u64().unwrap());
            assert_percent(f[3], w["clients"]["share"].as_f64().unwrap(), &label);
        }
    }

    // Malformed lines: the total and every reason that occurred.
    let malformed = text_section(text, "MALFORMED LINES");
    assert!(
        malformed[0].starts_with(&format!(
            "{} of {} lines",
            util_thousands(lines["malformed"].as_u64().unwrap()),
            util_thousands(lines["total"].as_u64().unwrap())
        )),
        "{what}"
    );
    let shown: BTreeMap<String, u64> = malformed[1..]
        .iter()
        .map(|l| {
            let (reason, f) = split_right(l, 1);
            (reason, count(f[0]))
        })
        .collect();
    let nonzero: BTreeMap<String, u64> = lines["malformed_by_reason"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(r, n)| (r.clone(), n.as_u64().unwrap()))
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(shown, nonzero, "{what}");

    // Notes, folded.
    let folded = text.replace("\n  ", " ");
    for n in v["notes"].as_array().unwrap() {
        assert!(
            folded.contains(&format!("note: {}", n.as_str().unwrap())),
            "{what}: note {n}"
        );
    }
}

fn util_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The text's auth table: user → (requests, +latency as shown).
fn text_auth_rows(text: &str) -> BTreeMap<String, (u64, String)> {
    let section = text_section(text, "AUTHENTICATION COST PER USER");
    assert!(section[0].starts_with("user "), "{section:?}");
    section[1..]
        .iter()
        .take_while(|l| !l.starts_with("+latency:"))
        .map(|l| {
            // The user column is 24 characters wide, then the figures.
            let user: String = l.chars().take(24).collect();
            let user = user.trim_end().trim_end_matches(" !").to_string();
            let (_, f) = split_right(l, 4);
            (user, (count(f[1]), f[3].to_string()))
        })
        .collect()
}

#[test]
fn report_json_shows_the_numbers_of_the_text_on_the_corpus() {
    for (dir, args) in corpus() {
        let what = args.join(" ");
        let mut a = strs(&args);
        let text = report_out(&dir, &a);
        a.extend(["--format", "json"]);
        let v: Value = serde_json::from_str(&report_out(&dir, &a)).unwrap();
        assert_text_shows_json(&text, &v, &what);
        // The distribution is `tls --format json`'s, byte for byte.
        let mut t = vec!["tls", "-q", "--format", "json"];
        t.extend(strs(&args).iter().take_while(|a| **a != "--htpasswd"));
        let o = util::tlsgap()
            .current_dir(&dir)
            .env("TZ", "UTC")
            .args(&t)
            .output()
            .unwrap();
        assert_code(&o, 0);
        assert_eq!(v["distribution"], util::json(&o), "{what}");
        assert_eq!(v["lines"], v["distribution"]["lines"]);
        // Without --htpasswd/--traces there is no auth section, in both.
        if !args.iter().any(|a| a == "--htpasswd") {
            assert!(v["auth"].is_null(), "{what}");
            assert!(!text.contains("AUTHENTICATION"));
            continue;
        }
        // Requests and extra latency per user come from the log alone, so two runs
        // agree on them (verification times are measured anew each run).
        let users = text_auth_rows(&text);
        let json_users = v["auth"]["users"].as_array().unwrap();
        assert_eq!(users.len(), json_users.len(), "{what}");
        let mut latencies = 0;
        for u in json_users {
            let name = u["user"].as_str().unwrap();
            let (requests, latency) = &users[name];
            assert_eq!(*requests, u["requests"].as_u64().unwrap(), "{name}");
            let extra = u["extra_latency_seconds"].as_f64();
            assert_seconds(latency, extra, name);
            latencies += usize::from(extra.is_some());
        }
        assert_eq!(latencies, json_users.len(), "every user has a latency: %D");
    }
}

#[test]
fn report_text_fits_80_columns_on_the_corpus() {
    let dir = tempdir();
    let conf = write(
        dir.path(),
        "a-rather-long-name-for-the-servers-ssl.conf",
        b"SSLProtocol -all +TLSv1.2 +TLSv1.3\nSSLCipherSuite ECDHE+AESGCM\n",
    );
    let policies = [
        "--policy",
        "mozilla-intermediate-5.7",
        "--policy",
        "ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM:ECDHE+CHACHA20;",
        "--policy",
        path_str(&conf),
    ];
    let mut widest = (0, String::new());
    for (dir, args) in corpus() {
        for extra in [&[][..], &policies[..], &["--by", "hour"][..]] {
            let mut a = strs(&args);
            a.extend(extra);
            let text = report_out(&dir, &a);
            for line in text.lines() {
                let n = line.chars().count();
                if n > widest.0 {
                    widest = (n, line.to_string());
                }
            }
        }
    }
    assert!(widest.0 <= 80, "{} columns: {:?}", widest.0, widest.1);
    // The auth run's advice is a paragraph: it was 689 characters on one line.
    assert!(widest.0 >= 75, "{widest:?}");
}

/// More protocols than the text has columns for: the rarest are `other`, and the
/// shares still add up to the JSON's.
#[test]
fn a_trend_of_many_protocols_folds_the_rarest_into_other() {
    let dir = tempdir();
    let mut log = Vec::new();
    let protocols = [
        ("TLSv1.3", "TLS_AES_128_GCM_SHA256", 9),
        ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256", 8),
        ("TLSv1.1", "AES128-SHA", 7),
        ("TLSv1", "AES128-SHA", 6),
        ("SSLv3", "RC4-SHA", 5),
        ("SSLv2", "RC4-MD5", 4),
        ("TLSv1.4-draft", "X", 3),
        ("DTLSv1.2", "AES128-SHA", 2),
    ];
    for (i, (p, c, n)) in protocols.iter().enumerate() {
        for k in 0..*n {
            log.extend_from_slice(
                format!(
                    "203.0.113.{i} - - [21/Nov/2026:18:0{k}:40 +0000] \"GET / HTTP/1.1\" 200 5 \
                     \"-\" \"ua {k}\" {p} {c}\n"
                )
                .as_bytes(),
            );
        }
    }
    let log = write(dir.path(), "many.log", &log);
    let text = report_out(dir.path(), &[path_str(&log)]);
    let v: Value = serde_json::from_str(&report_out(
        dir.path(),
        &[path_str(&log), "--format", "json"],
    ))
    .unwrap();
    let trend = text_section(&text, "PROTOCOL SHARE BY DAY (UTC)");
    assert!(trend[0].ends_with(" other"), "{trend:?}");
    assert_eq!(trend[0].split_whitespace().count(), 2 + 5);
    assert_text_shows_json(&text, &v, "many protocols");
    assert_eq!(
        v["trend"]["periods"][0]["protocols"]
            .as_array()
            .unwrap()
            .len(),
        8
    );
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    // The page keeps six protocols of its own and `other`.
    let html = report_html(dir.path(), &[path_str(&log)]);
    let head = section(&html, "trend");
    assert_eq!(head.matches("<th class=\"n name\">").count(), 7, "{head}");
}

#[test]
fn policy_chooses_the_whatifs_as_whatif_reads_them() {
    let dir = tempdir();
    let real = repo_root().join("testdata/real");
    let fmt = util::real_format("apache-combinedssl.log");
    let conf = write(
        dir.path(),
        "ssl.conf",
        b"SSLProtocol all -SSLv3\nSSLCipherSuite HIGH:!aNULL:!MD5\n",
    );
    let inline = "ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers ECDHE+AESGCM;";
    let specs = ["mozilla-intermediate-5.7", inline, path_str(&conf)];
    let mut args = vec!["apache-combinedssl.log", "--log-format", &fmt];
    for s in specs {
        args.extend(["--policy", s]);
    }
    // The server's OpenSSL defaults count as for `whatif`.
    args.extend(["--seclevel", "0"]);
    let mut json_args = args.clone();
    json_args.extend(["--format", "json"]);
    let v: Value = serde_json::from_str(&report_out(&real, &json_args)).unwrap();
    let whatifs = v["whatif"].as_array().unwrap();
    assert_eq!(whatifs.len(), 3);
    let mut refused = Vec::new();
    for (w, spec) in whatifs.iter().zip(specs) {
        assert_eq!(w["spec"], spec);
        let o = util::tlsgap()
            .current_dir(&real)
            .args(["whatif", "-q", "--format", "json", "--seclevel", "0"])
            .args([
                "--log-format",
                &fmt,
                "--policy",
                spec,
                "apache-combinedssl.log",
            ])
            .output()
            .unwrap();
        assert_code(&o, 0);
        let mut mine = w.clone();
        let obj = mine.as_object_mut().unwrap();
        obj.remove("spec");
        obj.remove("label");
        assert_eq!(mine, util::json(&o), "{spec}");
        refused.push(w["requests"]["refused"].as_u64().unwrap());
    }
    assert_eq!(
        whatifs
            .iter()
            .map(|w| w["label"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "mozilla-intermediate-5.7",
            "nginx directives",
            path_str(&conf)
        ]
    );
    // The real log has TLS 1.0 and 1.1 handshakes: every policy refuses some, not
    // all the same.
    assert!(refused.iter().all(|&n| n > 0), "{refused:?}");

    // The text names them in that order, under the policies' heading; the page too.
    let text = report_out(&real, &args);
    assert!(
        text.contains("\nWHAT THE POLICIES WOULD REFUSE\npolicy "),
        "{text}"
    );
    assert_text_shows_json(&text, &v, "policies");
    let mut html_args = args.clone();
    let page = dir.path().join("p.html");
    html_args.extend(["--html", path_str(&page)]);
    report_out(&real, &html_args);
    let html = std::fs::read_to_string(&page).unwrap();
    let w = section(&html, "whatif");
    assert!(w.contains("<h2>What the policies would refuse</h2>"), "{w}");
    let rows: Vec<(String, u64)> = rows(w)
        .iter()
        .filter_map(|r| {
            let r = format!("<tr{r}");
            Some((attr(&r, "data-policy")?, num(&r, "data-refused")))
        })
        .collect();
    let want: Vec<(String, u64)> = specs
        .iter()
        .map(|s| s.replace('/', "&#x2f;"))
        .zip(refused.iter().copied())
        .collect();
    assert_eq!(rows, want);

    // Without --policy: the three Mozilla profiles, as before.
    let v: Value = serde_json::from_str(&report_out(
        &real,
        &[
            "apache-combinedssl.log",
            "--log-format",
            &fmt,
            "--format",
            "json",
        ],
    ))
    .unwrap();
    let specs: Vec<&str> = v["whatif"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["spec"].as_str().unwrap())
        .collect();
    assert_eq!(
        specs,
        ["mozilla-modern", "mozilla-intermediate", "mozilla-old-5.7"]
    );

    // What whatif refuses, report refuses, with the same message.
    for bad in ["mozilla-old", "no-such-file.conf"] {
        let run = |cmd: &str| {
            util::tlsgap()
                .current_dir(&real)
                .args([cmd, "-q", "--policy", bad, "apache-combinedssl.log"])
                .output()
                .unwrap()
        };
        let (r, w) = (run("report"), run("whatif"));
        assert_code(&r, 2);
        assert_code(&w, 2);
        assert_eq!(util::stderr(&r), util::stderr(&w), "{bad}");
    }
}

/// A log whose users have markup, quotes, control bytes and bytes that are not UTF-8,
/// appended to the real auth run's log (none of them in its htpasswd file).
fn hostile_users_log(dir: &Path) -> PathBuf {
    let mut log = std::fs::read(auth_dir().join("access.log")).unwrap();
    let users: [&[u8]; 4] = [
        b"<script>document.title='pwned'</script>",
        b"\\\"><img/src=x/onerror=alert(1)>'",
        b"caf\xc3\xa9\xff\xfe-raw",
        b"esc\\x1b[2J\\x07",
    ];
    for (i, u) in users.iter().enumerate() {
        log.extend_from_slice(b"127.0.0.1 - ");
        log.extend_from_slice(u);
        log.extend_from_slice(
            format!(
                " [22/Nov/2026:01:09:5{i} +0000] \"GET /private/ HTTP/1.1\" 401 421 \"-\" \
                 \"curl/7.88.1\" TLSv1.3 TLS_AES_256_GCM_SHA384 1 179530979{i}.000000 2744\n"
            )
            .as_bytes(),
        );
    }
    write(dir, "access.log", &log)
}

/// What the run's clients sent (`manifest.json` keeps each user's password): the
/// passwords and the `Authorization: Basic` values, which no output may show.
fn sent_credentials() -> Vec<String> {
    let m: Value =
        serde_json::from_slice(&std::fs::read(auth_dir().join("manifest.json")).unwrap()).unwrap();
    let mut out = Vec::new();
    for (user, u) in m["users"].as_object().unwrap() {
        let password = u["password"].as_str().unwrap();
        out.push(password.to_string());
        out.push(base64(format!("{user}:{password}").as_bytes()));
    }
    out
}

/// Standard base64 with padding (RFC 4648), as HTTP Basic auth uses it.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ABC[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The `#auth` rows of a page or DOM: user → (requests, extra latency attribute,
/// extra latency cell text).
fn html_auth_rows(html: &str) -> BTreeMap<String, (u64, Option<f64>, String)> {
    let auth = section(html, "auth");
    let mut out = BTreeMap::new();
    for r in rows(auth) {
        let r = format!("<tr{r}");
        let Some(user) = attr(&r, "data-user") else {
            continue;
        };
        let extra = attr(&r, "data-extra-latency").map(|x| x.parse::<f64>().unwrap());
        // The cell text of the eighth column.
        let cell = r
            .split("<td")
            .nth(8)
            .and_then(|c| c.split('>').nth(1))
            .and_then(|c| c.split('<').next())
            .unwrap()
            .to_string();
        out.insert(user, (num(&r, "data-requests"), extra, cell));
    }
    out
}

#[test]
fn auth_section_shows_extra_latency_and_hostile_users_as_text() {
    let dir = tempdir();
    let log = hostile_users_log(dir.path());
    let mut args = auth_args();
    args[0] = path_str(&log).to_string();
    let page = dir.path().join("auth.html");
    let mut a = strs(&args);
    a.extend(["--format", "json", "--html", path_str(&page)]);
    let json_text = report_out(&auth_dir(), &a);
    let v: Value = serde_json::from_str(&json_text).unwrap();
    let html = std::fs::read_to_string(&page).unwrap();
    assert_only_report_markup(&html, Source::Page);

    // One run: the page's users and extra latencies are the JSON's.
    let users = html_auth_rows(&html);
    let json_users = v["auth"]["users"].as_array().unwrap();
    assert_eq!(users.len(), json_users.len());
    assert_eq!(json_users.len(), 10);
    for u in json_users {
        let name = u["user"].as_str().unwrap();
        // The page shows the name escaped for HTML, control characters as \xHH.
        let shown = name
            .replace('\u{1b}', "\\x1B")
            .replace('\u{7}', "\\x07")
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#x27;")
            .replace('/', "&#x2f;");
        let (requests, extra, cell) = users
            .get(&shown)
            .unwrap_or_else(|| panic!("{shown} not in {:?}", users.keys()));
        assert_eq!(*requests, u["requests"].as_u64().unwrap());
        assert_eq!(*extra, u["extra_latency_seconds"].as_f64(), "{name}");
        assert_seconds(cell, *extra, name);
    }
    // The odd users arrived, each as one user, and reached no markup.
    let names: Vec<&str> = json_users
        .iter()
        .map(|u| u["user"].as_str().unwrap())
        .collect();
    for want in [
        "<script>document.title='pwned'</script>",
        "\"><img/src=x/onerror=alert(1)>'",
        "café\\xFF\\xFE-raw",
        "esc\u{1b}[2J\u{7}",
    ] {
        assert!(names.contains(&want), "{want:?} not in {names:?}");
    }
    assert!(!html.contains("<img"));

    // The text: the same extra latencies (from the log's %D), no raw control byte,
    // 80 columns.
    let o = util::tlsgap()
        .current_dir(auth_dir())
        .env("TZ", "UTC")
        .args(["report", "-q"])
        .args(strs(&args))
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert!(!o.stdout.iter().any(|&b| b == 0x1b || b == 0x07));
    let text = stdout(&o);
    assert!(text.contains("\nesc\\x1B[2J\\x07 "), "{text}");
    assert!(text.contains("\n<script>document.title=… "), "{text}");
    let rows = text_auth_rows(&text);
    for u in json_users {
        let name = u["user"]
            .as_str()
            .unwrap()
            .replace('\u{1b}', "\\x1B")
            .replace('\u{7}', "\\x07");
        let key = rows
            .keys()
            .find(|k| name.starts_with(k.trim_end_matches('…')))
            .unwrap_or_else(|| panic!("{name} not in {:?}", rows.keys()));
        let (requests, latency) = &rows[key];
        assert_eq!(*requests, u["requests"].as_u64().unwrap(), "{name}");
        assert_seconds(latency, u["extra_latency_seconds"].as_f64(), &name);
    }
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");

    // Never a hash or a credential, in any of the three.
    assert_eq!(
        base64(b"Aladdin:open sesame"),
        "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
    );
    let creds = sent_credentials();
    assert_eq!(creds.len(), 12);
    for line in std::fs::read_to_string(auth_dir().join("htpasswd"))
        .unwrap()
        .lines()
    {
        let hash = line.split_once(':').map_or("", |(_, h)| h);
        assert!(hash.len() > 8);
        for out in [&html, &text, &json_text] {
            assert!(!out.contains(hash), "a hash reached the output");
        }
    }
    for c in &creds {
        for out in [&html, &text, &json_text] {
            assert!(!out.contains(c.as_str()), "a credential reached the output");
        }
    }
    for out in [&html, &text, &json_text] {
        assert!(!out.contains("Authorization: Basic"));
    }
}

#[test]
fn report_flags_that_contradict_each_other_are_refused() {
    let sample = repo_root().join("testdata/sample/combinedssl.log.gz");
    let o = util::tlsgap()
        .args(["report", "-q", "--text", "--format", "json"])
        .arg(&sample)
        .output()
        .unwrap();
    assert_code(&o, 2);
    assert!(util::stderr(&o).contains("--text and --format json"));
    // --format json with --html writes both; --format text alone is the text.
    let dir = tempdir();
    let page = dir.path().join("r.html");
    let o = util::tlsgap()
        .env("TZ", "UTC")
        .args([
            "report",
            "-q",
            "--format",
            "json",
            "--html",
            path_str(&page),
        ])
        .arg(&sample)
        .output()
        .unwrap();
    assert_code(&o, 0);
    util::json(&o);
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    let plain = util::tlsgap()
        .env("TZ", "UTC")
        .args(["report", "-q"])
        .arg(&sample)
        .output()
        .unwrap();
    let text = util::tlsgap()
        .env("TZ", "UTC")
        .args(["report", "-q", "--format", "text"])
        .arg(&sample)
        .output()
        .unwrap();
    assert_eq!(plain.stdout, text.stdout);
}

#[test]
fn auth_report_in_chromium_shows_extra_latency_and_users_as_text() {
    if !browser_enabled("auth_report_in_chromium_shows_extra_latency_and_users_as_text") {
        return;
    }
    let dir = tempdir();
    let log = hostile_users_log(dir.path());
    let mut args = auth_args();
    args[0] = path_str(&log).to_string();
    let page = dir.path().join("auth.html");
    let mut a = strs(&args);
    a.extend(["--format", "json", "--html", path_str(&page)]);
    let v: Value = serde_json::from_str(&report_out(&auth_dir(), &a)).unwrap();
    let dom = chromium(&page, &["--dump-dom"]);
    assert!(dom.contains("<title>tlsgap report</title>"), "{dom}");
    assert!(!dom.contains("pwned</title>"));
    assert_only_report_markup(&dom, Source::Dom);
    for t in start_tags(&dom) {
        assert!(t.name != "script" && t.name != "img", "{t:?}");
    }
    let auth = section(&dom, "auth");
    assert!(auth.contains("<h2>Authentication cost per user</h2>"));
    assert!(
        auth.contains("<th class=\"n\">extra latency</th>"),
        "{auth}"
    );
    // The browser's DOM holds the users as text (its serialization escapes `&`, `<`,
    // `>` and, in attributes, `"`), with their extra latency.
    let users = html_auth_rows(&dom);
    let json_users = v["auth"]["users"].as_array().unwrap();
    assert_eq!(users.len(), json_users.len());
    for u in json_users {
        let name = u["user"]
            .as_str()
            .unwrap()
            .replace('\u{1b}', "\\x1B")
            .replace('\u{7}', "\\x07")
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;");
        let (requests, extra, cell) = users
            .get(&name)
            .unwrap_or_else(|| panic!("{name} not in {:?}", users.keys()));
        assert_eq!(*requests, u["requests"].as_u64().unwrap());
        assert_eq!(*extra, u["extra_latency_seconds"].as_f64(), "{name}");
        assert!(extra.is_some(), "{name}");
        assert_seconds(cell, *extra, &name);
    }
    assert!(auth.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"));
    assert!(auth.contains("café\\xFF\\xFE-raw"), "{auth}");
    let png = artifacts_dir().join("report-auth.png");
    std::fs::remove_file(&png).ok();
    chromium(
        &page,
        &[
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,2400",
        ],
    );
    assert!(std::fs::read(&png)
        .unwrap()
        .starts_with(b"\x89PNG\r\n\x1a\n"));
}
