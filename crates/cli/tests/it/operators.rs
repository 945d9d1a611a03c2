//! Input as operators have it (issue: right answers on what real servers and real
//! operators feed it): glued lines, IPv6 hosts before ports, third-party module
//! directives, windows with nothing in them, files that are not traces.

use serde_json::Value;

use crate::util::{self, assert_code, json, path_str};

const FMT: &str = "%h %l %u %t \"%r\" %>s %b \"%{Referer}i\" \"%{User-Agent}i\" \
                   %{SSL_PROTOCOL}x %{SSL_CIPHER}x";

fn line(host: &str, user: &str, cipher: &str) -> String {
    format!(
        "{host} - {user} [23/Oct/2025:11:08:24 +0300] \"GET / HTTP/1.1\" 200 5 \"-\" \
         \"curl/8.5.0\" TLSv1.2 {cipher}\n"
    )
}

#[test]
fn glued_lines_are_counted_as_glued_and_their_pair_is_not() {
    let dir = util::tempdir();
    let whole = line("192.0.2.1", "-", "ECDHE-RSA-AES128-GCM-SHA256");
    // A writer killed mid-line: the next line appended to the first 16 bytes.
    let glued = format!("192.0.2.9 - - [23/{}", line("192.0.2.2", "-", "RC4-SHA"));
    let odd = line("192.0.2.3", "John [Admin] Smith", "AES128-SHA");
    let log = util::write(
        dir.path(),
        "access.log",
        format!("{whole}{glued}{odd}").as_bytes(),
    );
    let (v, _) = util::tls_json(&["--log-format", FMT, path_str(&log)]);
    assert_eq!(v["lines"]["malformed_by_reason"]["glued"], 1, "{v}");
    assert_eq!(v["total"], 2, "{v}");
    let text = v.to_string();
    assert!(
        !text.contains("RC4-SHA"),
        "the glued line's pair is not counted: {v}"
    );
}

#[test]
fn ipv6_vhost_and_port_parse() {
    let dir = util::tempdir();
    let fmt = format!("%v:%p {FMT}");
    let body = format!(
        "2001:db8::1:443 {}[2001:db8::2]:8443 {}www.example.org:443 {}",
        line("2001:db8::9", "-", "AES128-SHA"),
        line("192.0.2.1", "-", "AES128-SHA"),
        line("::1", "-", "AES128-SHA")
    );
    let log = util::write(dir.path(), "vhost.log", body.as_bytes());
    let (v, _) = util::tls_json(&["--log-format", &fmt, path_str(&log)]);
    assert_eq!(v["lines"]["parsed"], 3, "{v}");
    assert_eq!(v["total"], 3, "{v}");
}

#[test]
fn third_party_module_directives_are_opaque_text_with_a_note() {
    let dir = util::tempdir();
    let fmt = format!("{FMT} %{{TX.anomaly_score}}M");
    let body = format!(
        "{} 5\n{} -\n",
        line("192.0.2.1", "-", "AES128-SHA").trim_end(),
        line("192.0.2.2", "-", "AES128-SHA").trim_end()
    );
    let log = util::write(dir.path(), "access.log", body.as_bytes());
    let o = util::tlsgap()
        .args([
            "tls",
            "--format",
            "json",
            "--log-format",
            &fmt,
            path_str(&log),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", util::stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["total"], 2, "{v}");
    let err = util::stderr(&o);
    assert_eq!(err.matches("%{TX.anomaly_score}M").count(), 1, "{err}");
    // A typo in a directive is still an error.
    let o = util::tlsgap()
        .args(["tls", "--log-format", "%h %l %u %Z", path_str(&log)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(util::stderr(&o).contains("%Z"));
}

#[test]
fn an_empty_window_is_unknown_for_check_and_said_by_the_others() {
    let sample = util::repo_root().join("testdata/sample/combinedssl.log.gz");
    let window = ["--since", "2000-01-01", "--until", "2000-01-02"];
    let o = util::tlsgap()
        .args(["check"])
        .args(window)
        .arg(&sample)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", util::stdout(&o));
    assert!(util::stdout(&o).starts_with("TLSGAP UNKNOWN - no line inside the time window"));
    for cmd in [
        &["tls"][..],
        &["whatif", "--policy", "mozilla-modern"],
        &["report"],
    ] {
        let o = util::tlsgap()
            .args(cmd)
            .arg("-q")
            .args(window)
            .arg(&sample)
            .output()
            .unwrap();
        assert!(o.status.success(), "{cmd:?}: {}", util::stderr(&o));
        assert!(
            util::stderr(&o).contains("no line inside the time window"),
            "{cmd:?} with -q: {}",
            util::stderr(&o)
        );
    }
}

#[test]
fn gaps_on_a_file_without_strace_lines_says_so_and_exits_2() {
    let log = util::repo_root().join("testdata/real/apache-combinedssl.log");
    let o = util::tlsgap().args(["gaps"]).arg(&log).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        util::stderr(&o).contains("no strace output in"),
        "{}",
        util::stderr(&o)
    );
    let o = util::tlsgap()
        .args(["gaps"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", util::stderr(&o));
}

/// A layout no preset fits (time first, the TLS pair in the middle, a duration at the
/// end, an IPv6 client): `tls` stops with exit 2 and prints a format inferred from the
/// first lines, ready to paste, with how many of them it fits and where the TLS pair
/// is; passed back with `--log-format`, it gives the right counts.
#[test]
fn unknown_layout_gets_an_inferred_format_to_paste() {
    let dir = util::tempdir();
    let lines = [
        r#"[23/Oct/2025:11:08:24 +0300] 2001:db8::7 TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256 "GET /a HTTP/1.1" 200 5120 "-" "Mozilla/5.0 (X11)" 2585"#,
        r#"[23/Oct/2025:11:08:25 +0300] 192.0.2.8 TLSv1.3 TLS_AES_256_GCM_SHA384 "POST /login HTTP/1.1" 302 - "https://example.org/" "curl/8.5.0" 912"#,
        r#"[23/Oct/2025:11:08:26 +0300] 192.0.2.9 - - "GET / HTTP/1.1" 404 17 "-" "Go-http-client/1.1" 77"#,
        r#"[23/Oct/2025:11:08:27 +0300] 192.0.2.9 TLSv1 AES128-SHA "GET / HTTP/1.1" 200 17 "-" "Wget/1.21" 1204"#,
    ];
    let log = util::write(dir.path(), "odd.log", (lines.join("\n") + "\n").as_bytes());
    let o = util::tlsgap()
        .args(["tls", "--format", "json"])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 2);
    let err = util::stderr(&o);
    assert!(err.contains("no preset log format fits"), "{err}");
    assert!(err.contains("fits 4 of them"), "{err}");
    assert!(
        err.contains("TLS protocol and cipher are fields 3 and 4"),
        "{err}"
    );
    let suggested = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("--log-format '"))
        .and_then(|l| l.strip_suffix('\''))
        .unwrap_or_else(|| panic!("no --log-format to paste in: {err}"))
        .to_string();
    assert!(
        suggested.starts_with("LogFormat \"%t %h %{SSL_PROTOCOL}x"),
        "{suggested}"
    );
    let o = util::tlsgap()
        .args(["tls", "--format", "json", "--log-format", &suggested])
        .arg(&log)
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v = json(&o);
    assert_eq!(v["lines"]["parsed"], 4, "{v}");
    assert_eq!(v["total"], 3, "{v}");
    assert_eq!(v["plain"], 1, "{v}");
}
