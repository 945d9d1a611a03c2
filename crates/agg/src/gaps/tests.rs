//! Unit tests of the analyzer and its helpers.

use super::*;

fn run(inputs: &[(&str, Option<u32>, &str)], opts: GapOptions) -> GapsReport {
    let mut a = GapAnalyzer::new(opts);
    for (name, hint, text) in inputs {
        a.begin_input(name, *hint);
        for (i, l) in text.lines().enumerate() {
            a.line(i as u64 + 1, l.as_bytes());
        }
        a.end_input();
    }
    a.finish()
}

#[test]
fn pid_from_names() {
    assert_eq!(pid_from_file_name("trace.12085"), Some(12085));
    assert_eq!(pid_from_file_name("/tmp/x/trace.12085.gz"), Some(12085));
    assert_eq!(pid_from_file_name("trace.12085.zst"), Some(12085));
    assert_eq!(pid_from_file_name("trace.log"), None);
    assert_eq!(pid_from_file_name("12085"), None);
    assert_eq!(pid_from_file_name("trace."), None);
}

#[test]
fn hashes_and_details() {
    let h = |s: &[u8]| find_hash(s).map(|(h, plausible)| (h.to_string(), plausible));
    assert_eq!(
        h(b"alice:$2y$12$abcdefghij"),
        Some(("bcrypt cost 12".into(), true))
    );
    assert_eq!(h(b"bob:$apr1$xyz$abc"), Some(("apr1 (MD5)".into(), true)));
    assert_eq!(h(b"c:{SHA}abc="), Some(("{SHA} (SHA-1)".into(), true)));
    assert_eq!(
        h(b"d:$6$rounds=5000$salt$h"),
        Some(("SHA-512 crypt rounds 5000".into(), true))
    );
    assert_eq!(h(b"e:$y$j9T$x"), Some(("yescrypt".into(), true)));
    assert_eq!(h(b"$argon2id$v=19$m=65536"), Some(("argon2".into(), true)));
    assert_eq!(h(b"f:$1$salt$h"), Some(("MD5 crypt".into(), true)));
    assert_eq!(h(b"g:$5$saltsalt$h"), Some(("SHA-256 crypt".into(), true)));
    // Prefixes alone: redacted, but not evidence of password checking.
    assert_eq!(h(b"echo $1$2"), Some(("MD5 crypt".into(), false)));
    assert_eq!(h(b"{SHA}"), Some(("{SHA} (SHA-1)".into(), false)));
    assert_eq!(h(b"price: $5 or {x}"), None);
}

#[test]
fn redaction_replaces_whole_strings_and_scans_past_the_limit() {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let src = br#"15, "alice:$2y$12$abcdefghijklmnopqrstuv"..., 4096"#;
    let h = redact_into(src, &mut out, 200, &mut scratch);
    assert_eq!(h.unwrap().param, Some(12));
    let text = String::from_utf8(out.clone()).unwrap();
    assert_eq!(
        text,
        r#"15, "<redacted: bcrypt cost 12, 35 bytes>"..., 4096"#
    );
    // Hex-escaped (-xx) hashes are found too.
    out.clear();
    let src = br#""\x24\x32\x79\x24\x31\x30\x24\x61\x62""#;
    assert!(redact_into(src, &mut out, 200, &mut scratch).is_some());
    assert!(!String::from_utf8_lossy(&out).contains("x24"));
    // Authorization headers.
    out.clear();
    let src = br#"8, "GET / HTTP/1.1\r\nauthorization: Basic YWxpY2U6c2VjcmV0\r\n", 60"#;
    redact_into(src, &mut out, 200, &mut scratch);
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.contains("<redacted: Authorization header"), "{text}");
    assert!(!text.contains("YWxp"));
    // Past the limit: not shown, still scanned.
    out.clear();
    let mut long = b"\"".to_vec();
    long.extend(std::iter::repeat_n(b'a', 300));
    long.extend_from_slice(b"\", \"x:$2b$10$abc\"");
    let h = redact_into(&long, &mut out, 50, &mut scratch);
    assert_eq!(h.unwrap().param, Some(10));
    assert!(out.len() < 60);
    assert!(out.ends_with(b"..."));
}

/// `hash_in` (every call) must find what `redact_into` (calls shown) would.
#[test]
fn hash_in_agrees_with_redact_into() {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let fixed: [&[u8]; 12] = [
        br#"15, "alice:$2y$12$abcdefghijklmnopqrstuv"..., 4096"#,
        br#""\x24\x32\x79\x24\x31\x30\x24\x61\x62""#,
        br#""\44\62y$10$abc", "$1$2""#,
        br#""\0442y$10$abcd""#,
        br#""\4442y$10$abcd""#,
        br#""$\62y$10$abcd""#,
        br#""\$2y$10$abcd""#,
        br#""\\$2y$10$abcd""#,
        br#""x{SHA}abcd", "{\123SHA}abc""#,
        br#"[{iov_base="\27\3$\3\1{\32_", iov_len=5}], "$6$rounds=5000$abcd$""#,
        br#""\x7B\x53HA}abcd""#,
        br#""unterminated $5$abcdef"#,
    ];
    for src in fixed {
        out.clear();
        let want = redact_into(src, &mut out, 200, &mut scratch);
        assert_eq!(
            hash_in(src, &mut scratch),
            want,
            "{}",
            String::from_utf8_lossy(src)
        );
    }
    // Random mixes of the pieces hashes, escapes and strings are made of.
    let pieces: Vec<&[u8]> = br#""|\|$|{|}|2y$|12$|abcdefghij|apr1$|5$|6$|y$|gy$|argon2id$|1$|SHA}|SSHA}|\x24|\44|\173|\x7b|\0|\n|, |\x32|\62|\123|\x"#
        .split(|&b| b == b'|')
        .collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut found = 0;
    for _ in 0..20_000 {
        let mut src = Vec::new();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = (seed % 16) as usize;
        let mut r = seed;
        for _ in 0..n {
            r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            src.extend_from_slice(pieces[(r >> 33) as usize % pieces.len()]);
        }
        out.clear();
        let want = redact_into(&src, &mut out, 200, &mut scratch);
        found += usize::from(want.is_some());
        assert_eq!(
            hash_in(&src, &mut scratch),
            want,
            "{}",
            String::from_utf8_lossy(&src)
        );
    }
    assert!(found > 100, "{found}");
}

#[test]
fn cuts_strings_between_escapes() {
    let s = br#""ab\305\256\ncd""#;
    assert_eq!(escape_boundary(s, 4), 3);
    assert_eq!(escape_boundary(s, 5), 3, "not inside \\305");
    assert_eq!(escape_boundary(s, 7), 7);
    assert_eq!(escape_boundary(s, 12), 11);
    assert_eq!(escape_boundary(br#""\x41\x42""#, 6), 5);
    assert_eq!(escape_boundary(b"\"", 0), 0);
}

#[test]
fn times_format() {
    assert_eq!(
        format_time(Clock::Unix, 1_795_296_993_226_906_123).0,
        "2026-11-21T21:36:33.226906Z"
    );
    let (t, d, n) = format_time(Clock::TimeOfDay, DAY_NS + 1_500_000_000);
    assert_eq!(
        (t.as_str(), d, n),
        ("00:00:01.500000 +1d", 1, 1_500_000_000)
    );
    assert_eq!(format_time(Clock::Relative, 2_000_001_000).0, "+2.000001");
}

#[test]
fn normalizes_ephemeral_ports() {
    assert_eq!(
        normalize_resource("TCP:[127.0.0.1:8081->127.0.0.1:52428]"),
        "TCP:[127.0.0.1:8081->127.0.0.1:*]"
    );
    assert_eq!(
        normalize_resource("TCPv6:[[::1]:38139->[::1]:443]"),
        "TCPv6:[[::1]:*->[::1]:443]"
    );
    assert_eq!(normalize_resource("/etc/x:40000]"), "/etc/x:40000]");
}

#[test]
fn auth_labels() {
    for l in [
        "/etc/apache2/htpasswd.users",
        "/srv/.htpasswd",
        "/etc/htdigest",
        "/etc/shadow",
        "/etc/pam.d/common-auth",
        "/lib/x86_64-linux-gnu/security/pam_unix.so",
        "UNIX:[/var/lib/sss/pipes/nss]",
    ] {
        assert!(is_auth(l, ResKind::of_label(l.as_bytes())), "{l}");
    }
    assert!(is_auth(
        "TCP:[10.0.0.1:40000->10.0.0.2:389]",
        ResKind::Socket
    ));
    assert!(!is_auth("/var/www/index.html", ResKind::File));
    assert!(!is_auth(
        "TCP:[10.0.0.1:443->10.0.0.2:50000]",
        ResKind::Socket
    ));
}

#[test]
fn ring_keeps_the_newest() {
    let mut r = Ring::new(3);
    for k in 0..5u64 {
        let mut s = CtxSlot {
            line: k,
            ..CtxSlot::default()
        };
        r.push(&mut s);
    }
    let lines: Vec<u64> = r.iter().map(|s| s.line).collect();
    assert_eq!(lines, [4, 3, 2]);
}

#[test]
fn sockaddr_labels() {
    assert_eq!(
        sockaddr_label(br#"{sa_family=AF_UNIX, sun_path="/var/lib/sss/pipes/nss"}"#).unwrap(),
        b"UNIX:[/var/lib/sss/pipes/nss]"
    );
    assert_eq!(
        sockaddr_label(
            br#"{sa_family=AF_INET, sin_port=htons(389), sin_addr=inet_addr("10.0.0.2")}"#
        )
        .unwrap(),
        b"TCP:[->10.0.0.2:389]"
    );
}

#[test]
fn simple_cpu_gap_with_timer_noise() {
    let t = "\
1795296993.000000 getpid() = 7 <0.000001>
1795296993.050000 --- SIGPROF {si_signo=SIGPROF, si_code=SI_KERNEL} ---
1795296993.050010 rt_sigreturn({mask=[]}) = 7 <0.000002>
1795296993.100000 --- SIGPROF {si_signo=SIGPROF, si_code=SI_KERNEL} ---
1795296993.100010 rt_sigreturn({mask=[]}) = 7 <0.000002>
1795296993.300001 getppid() = 1 <0.000001>
";
    let r = run(&[("trace.7", Some(7), t)], GapOptions::default());
    assert_eq!(r.gaps.len(), 1, "{:#?}", r.gaps);
    let g = &r.gaps[0];
    assert_eq!(g.cause, Cause::Cpu);
    assert_eq!(g.timer_signals, 2);
    assert!((g.seconds - 0.3).abs() < 1e-6);
    assert_eq!(g.line, 6);
    assert_eq!(g.before_line, Some(1));
}
