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
    assert!(utc.contains("\n2026-11-20T22         4,874"), "{utc}");
    let sofia = text(&["--tz", "Europe/Sofia"]);
    assert!(
        sofia.contains("PROTOCOL SHARE BY DAY (Europe/Sofia)\n"),
        "{sofia}"
    );
    assert!(sofia.contains("\n2026-11-21            4,874"), "{sofia}");
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
