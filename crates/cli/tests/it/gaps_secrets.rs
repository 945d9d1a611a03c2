//! `tlsgap gaps` on a trace whose secrets are cut by call boundaries (an
//! `Authorization` header over two reads, its name cut in two, a value past strace's
//! `-s` cut, a bcrypt hash over two reads of the htpasswd file, `-xx` hex): no piece
//! of them in the CSV, the JSON or the Parquet output.

use std::path::Path;

use crate::util::{self, assert_code, path_str, stderr, stdout, tlsgap, write};

/// `dave:hunter2`, a Digest response, a bcrypt hash's salt and checksum, and a Basic
/// credential written in `-xx` hex.
const SECRETS: [&str; 9] = [
    "ZGF2ZTpodW50ZXIy",
    "ZTpodW50ZXIy",
    "aHVudGVyMg",
    "6629fae49393a05397450978507c4ef1",
    "R9h/cIPz0gi",
    "PST9/PgBkqquzi",
    "Ss7KIUgO2t0jWMUW",
    "c2VjcmV0OnBsYW50ZWQ=",
    "c2VjcmV0",
];

/// `text` as `-xx` prints it: every byte `\xHH`.
fn xx(text: &str) -> String {
    text.bytes().map(|b| format!("\\x{b:02x}")).collect()
}

/// A `-ff -ttt -T` file of process 4242 (lines 1 ms apart): the secrets cut every way.
fn trace() -> String {
    let calls = [
        "accept4(3, NULL, NULL, SOCK_CLOEXEC) = 15".to_string(),
        // The value over two reads.
        r#"read(15, "GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ZGF2", 4096) = 45"#.into(),
        r#"read(15, "ZTpodW50ZXIy\r\n\r\n", 4096) = 16"#.into(),
        // The name cut in two, the value shaped like nothing.
        r#"read(15, "GET /b HTTP/1.1\r\nAuthori", 4096) = 23"#.into(),
        r#"read(15, "zation: Digest response=\"6629fae49393a05397450978507c4ef1\"\r\n\r\n", 4096) = 60"#.into(),
        // strace cut the first read (`-s`): the header is in what it did not show.
        r#"read(15, "GET /c HTTP/1.1\r\nHost: x\r\n"..., 4096) = 70"#.into(),
        r#"read(15, "ZTpodW50ZXIy\r\n\r\n", 4096) = 16"#.into(),
        "close(15) = 0".into(),
        // A bcrypt hash over two reads of the file.
        r#"openat(AT_FDCWD, "/etc/apache2/htpasswd", O_RDONLY|O_CLOEXEC) = 8"#.into(),
        r#"read(8, "dave:$2y$12$R9h/cIPz0gi.URNNX3kh2O", 34) = 34"#.into(),
        r#"read(8, "PST9/PgBkqquzi.Ss7KIUgO2t0jWMUW\n", 4096) = 32"#.into(),
        "close(8) = 0".into(),
        // `-xx`: the name cut in two, the value after it in a third read.
        "accept4(3, NULL, NULL, SOCK_CLOEXEC) = 16".into(),
        format!(r#"read(16, "{}", 4096) = 25"#, xx("GET / HTTP/1.1\r\nAuthoriz")),
        format!(r#"read(16, "{}", 4096) = 12"#, xx("ation: Basi")),
        format!(
            r#"recvfrom(16, "{}", 4096, 0, NULL, NULL) = 26"#,
            xx("c c2VjcmV0OnBsYW50ZWQ=\r\n\r\n")
        ),
        "getpid() = 4242".into(),
    ];
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| format!("1795296993.{:06} {c} <0.000005>\n", 1000 * (i + 1)))
        .collect()
}

/// `tlsgap gaps` on the trace with every gap of 0.5 ms or more reported.
fn gaps(dir: &Path, format: &[&str]) -> std::process::Output {
    let file = write(dir, "trace.4242", trace().as_bytes());
    let o = tlsgap()
        .current_dir(dir)
        .args(["gaps", "--min-gap", "0.0005", "--top", "1000"])
        .args(format)
        .arg(path_str(&file))
        .output()
        .unwrap();
    assert_code(&o, 0);
    o
}

/// No secret, as written or in `-xx` hex (`\` doubled or not), in `text`.
#[track_caller]
fn assert_hidden(what: &str, text: &str) {
    for s in SECRETS {
        let hex = xx(s);
        for form in [s.to_string(), hex.clone(), hex.replace('\\', "\\\\")] {
            assert!(!text.contains(&form), "{what}: {form} leaked:\n{text}");
        }
    }
}

#[test]
fn split_secrets_reach_neither_csv_nor_json() {
    let dir = util::tempdir();
    let csv = stdout(&gaps(dir.path(), &["--format", "csv"]));
    assert_hidden("csv", &csv);
    // The reads are in the output, redacted: one row per gap and call, and the
    // placeholders say what they replaced.
    assert!(csv.lines().count() > 10, "{csv}");
    for shown in [
        "rest of a secret line",
        "may continue a secret line",
        "Authorization header",
    ] {
        assert!(csv.contains(shown), "no {shown:?} in\n{csv}");
    }
    // The table too (its detail lines quote the calls).
    let o = gaps(dir.path(), &["--format", "table"]);
    let table = stdout(&o);
    assert_hidden("table", &table);
    assert!(table.contains("redacted"), "{table}");
    let o = gaps(dir.path(), &["--format", "json"]);
    let json = stdout(&o);
    assert_hidden("json", &json);
    assert_hidden("stderr", &stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let texts: Vec<&str> = ["gaps", "blocked"]
        .iter()
        .filter_map(|k| v[k].as_array())
        .flatten()
        .flat_map(|g| [g["before"].as_str(), g["after"].as_str()])
        .flatten()
        .collect();
    // Every read of fd 15 but the last request's first one is shown redacted.
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with(r#"read(15, "<redacted: rest of a secret line, 16 bytes>""#)),
        "{texts:#?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with(r#"read(15, "GET /c HTTP/1.1\r\nHost: x\r\n"..."#)),
        "{texts:#?}"
    );
}

#[test]
fn split_secrets_do_not_reach_parquet() {
    if !util::python_ready(
        "split_secrets_do_not_reach_parquet",
        &["pyarrow", "pyarrow.parquet"],
        "pyarrow",
        "reading the gaps Parquet back to look for secrets in its decoded cells",
    ) {
        return;
    }
    let dir = util::tempdir();
    let parquet = dir.path().join("gaps.parquet");
    gaps(
        dir.path(),
        &["--format", "parquet", "-o", path_str(&parquet)],
    );
    // The file as it is (pages may be compressed: this alone proves little)...
    let bytes = std::fs::read(&parquet).unwrap();
    assert_hidden("parquet bytes", &String::from_utf8_lossy(&bytes));
    // ...and every cell decoded by pyarrow.
    let o = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, pyarrow.parquet as pq\n\
             t = pq.read_table(sys.argv[1])\n\
             print(t.num_rows)\n\
             for row in t.to_pylist():\n    print(row)",
            path_str(&parquet),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "pyarrow: {}", stderr(&o));
    let cells = stdout(&o);
    let rows: usize = cells.lines().next().unwrap().trim().parse().unwrap();
    assert!(rows > 10, "{cells}");
    assert!(cells.contains("rest of a secret line"), "{cells}");
    assert_hidden("parquet cells", &cells);
}

/// Reality, not a written trace: a real nginx worker on 127.0.0.1, strace attached to
/// it the way operators do (`-p PID`, strace's default `-s 32`), and a client that
/// sends its `Authorization` header in two pieces 300 ms apart, so the worker reads it
/// in two calls: the first cut by `-s` before the credential, the second showing the
/// credential's second half whole. The trace holds it; no output of `gaps` may.
#[test]
fn real_nginx_traced_with_default_s_never_shows_a_split_credential() {
    use std::io::{Read, Write};
    if !util::server_test_enabled(
        "real_nginx_traced_with_default_s_never_shows_a_split_credential",
        &["nginx", "strace"],
        "nginx strace",
    ) {
        return;
    }
    let dir = util::tempdir();
    let d = dir.path();
    std::fs::create_dir(d.join("logs")).unwrap();
    let mut nginx = util::TracedNginx::start(d, |port| {
        format!(
            "daemon off; worker_processes 1; pid {pid}; error_log stderr;\n\
             events {{ worker_connections 16; }}\n\
             http {{ access_log off; client_body_temp_path {d}; \
             server {{ listen 127.0.0.1:{port}; location / {{ return 200 \"ok\\n\"; }} }} }}\n",
            pid = d.join("nginx.pid").display(),
            d = d.display(),
        )
    });
    let (port, trace) = (nginx.port, nginx.trace.clone());
    // "dave:hunter2" in Basic, split inside the credential.
    let mut c = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    c.set_nodelay(true).unwrap();
    c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ZGF2")
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    c.write_all(b"ZTpodW50ZXIy\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reply = String::new();
    c.read_to_string(&mut reply).unwrap();
    assert!(reply.contains("200"), "{reply}");
    std::thread::sleep(std::time::Duration::from_millis(200));
    nginx.stop();
    let traced = std::fs::read_to_string(&trace).unwrap();
    assert!(
        traced.contains("ZTpodW50ZXIy"),
        "the trace should show the credential's second half:\n{traced}"
    );
    for format in ["table", "csv", "json"] {
        let o = tlsgap()
            .args(["gaps", "--min-gap", "0.1", "--format", format])
            .arg(&trace)
            .output()
            .unwrap();
        assert_code(&o, 0);
        let out = stdout(&o);
        if format != "table" {
            // The read after the wait is in the rows, redacted.
            assert!(
                out.contains("<redacted: may continue a secret line"),
                "{format}: {out}"
            );
        }
        assert_hidden(format, &out);
        assert_hidden("stderr", &stderr(&o));
    }
}
