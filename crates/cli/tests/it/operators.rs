//! Input as operators have it (issue: right answers on what real servers and real
//! operators feed it): glued lines, IPv6 hosts before ports, third-party module
//! directives, windows with nothing in them, files that are not traces.

use serde_json::Value;

use crate::util::{self, path_str};

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
