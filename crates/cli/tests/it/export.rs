//! `tlsgap export`: NDJSON keys, types and values; CSV quoting and round trip.

use serde_json::{json, Value};

use crate::util::{self, assert_code, ndjson, path_str, stdout, tlsgap, write};

/// Hand-written lines with every kind of value the contract talks about.
const HAND: &str = concat!(
    // Empty user (`""`), `-` body bytes, escaped quote and 0xff in the target, empty UA.
    r#"192.0.2.7 - "" [21/Nov/2026:18:07:40 -0330] "GET /a\xffb?q=\"x\" HTTP/1.1" 200 - "-" "" TLSv1.3 TLS_AES_128_GCM_SHA256"#,
    "\n",
    // A raw non-UTF-8 byte (0xe9) and an Apache-escaped UTF-8 é; comma, quote and
    // newline in referer and User-Agent; plain HTTP.
    "192.0.2.8 - bob [01/Jan/2026:00:00:00 +0545] \"GET /\u{1}t\\xc3\\xa9 HTTP/1.1\" 404 12 ",
    r#""http://r/,\"q\"" "UA, with \"quote\"\nnewline" - -"#,
    "\n",
    // HTTP/0.9, UTC.
    r#"2001:db8::1 ident-x alice [31/Dec/2025:23:59:59 +0000] "GET /old" 200 0 "-" "-" TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256"#,
    "\n",
);

fn hand_file(dir: &std::path::Path) -> std::path::PathBuf {
    // HAND is a &str: \u{1} stands for the raw byte 0xe9.
    let bytes: Vec<u8> = HAND
        .bytes()
        .map(|b| if b == 1 { 0xe9 } else { b })
        .collect();
    write(dir, "hand.log", &bytes)
}

fn export(dir: &std::path::Path, format: &str) -> std::process::Output {
    let o = tlsgap()
        .current_dir(dir)
        .args([
            "export",
            "--format",
            format,
            "-q",
            "--log-format",
            "combinedssl",
            "hand.log",
        ])
        .output()
        .unwrap();
    assert_code(&o, 0);
    o
}

const COMBINEDSSL_KEYS: [&str; 16] = [
    "file",
    "line",
    "client",
    "ident",
    "user",
    "time",
    "request",
    "method",
    "target",
    "http_version",
    "status",
    "bytes",
    "referer",
    "user_agent",
    "tls_protocol",
    "tls_cipher",
];

#[test]
fn ndjson_rows_have_the_contract_keys_types_and_values() {
    let dir = util::tempdir();
    hand_file(dir.path());
    let rows = ndjson(&export(dir.path(), "ndjson"));
    assert_eq!(rows.len(), 3);
    for r in &rows {
        let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let mut want = COMBINEDSSL_KEYS.to_vec();
        want.sort_unstable();
        assert_eq!(keys, want);
    }
    assert_eq!(
        rows[0],
        json!({
            "file": "hand.log",
            "line": 1,
            "client": "192.0.2.7",
            "ident": null,
            "user": "",
            "time": "2026-11-21T18:07:40-03:30",
            "request": "GET /a\\xFFb?q=\"x\" HTTP/1.1",
            "method": "GET",
            "target": "/a\\xFFb?q=\"x\"",
            "http_version": "HTTP/1.1",
            "status": 200,
            "bytes": 0,
            "referer": null,
            "user_agent": "",
            "tls_protocol": "TLSv1.3",
            "tls_cipher": "TLS_AES_128_GCM_SHA256",
        })
    );
    assert_eq!(
        rows[1],
        json!({
            "file": "hand.log",
            "line": 2,
            "client": "192.0.2.8",
            "ident": null,
            "user": "bob",
            "time": "2026-01-01T00:00:00+05:45",
            "request": "GET /\\xE9té HTTP/1.1",
            "method": "GET",
            "target": "/\\xE9té",
            "http_version": "HTTP/1.1",
            "status": 404,
            "bytes": 12,
            "referer": "http://r/,\"q\"",
            "user_agent": "UA, with \"quote\"\nnewline",
            "tls_protocol": null,
            "tls_cipher": null,
        })
    );
    assert_eq!(
        rows[2],
        json!({
            "file": "hand.log",
            "line": 3,
            "client": "2001:db8::1",
            "ident": "ident-x",
            "user": "alice",
            "time": "2025-12-31T23:59:59+00:00",
            "request": "GET /old",
            "method": "GET",
            "target": "/old",
            "http_version": null,
            "status": 200,
            "bytes": 0,
            "referer": null,
            "user_agent": null,
            "tls_protocol": "TLSv1.2",
            "tls_cipher": "ECDHE-RSA-AES128-GCM-SHA256",
        })
    );
    // Integers are JSON numbers, not strings or floats.
    assert!(rows[1]["status"].is_u64() && rows[1]["bytes"].is_u64() && rows[1]["line"].is_u64());
}

#[test]
fn ndjson_has_duration_and_pid_as_integers() {
    let f = util::real_dir().join("apache-combinedssl_dp.log");
    let fmt = &util::real_format("apache-combinedssl_dp.log");
    let o = tlsgap()
        .args(["export", "-q", "--log-format", fmt, path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let first_line = std::fs::read_to_string(&f).unwrap();
    let fields: Vec<&str> = first_line.lines().next().unwrap().split(' ').collect();
    let (d, p) = (fields[fields.len() - 2], fields[fields.len() - 1]);
    let rows = ndjson(&o);
    // %D is already microseconds.
    assert_eq!(rows[0]["duration_us"], d.parse::<u64>().unwrap());
    assert_eq!(rows[0]["pid"], p.parse::<u64>().unwrap());
}

#[test]
fn ndjson_durations_in_other_units_become_microseconds() {
    let dir = util::tempdir();
    let f = write(
        dir.path(),
        "t.log",
        b"192.0.2.1 [21/Nov/2026:18:07:40 +0100] \"GET / HTTP/1.1\" 200 1.234 TLSv1.3 TLS_AES_128_GCM_SHA256\n",
    );
    // nginx $request_time is seconds with millisecond resolution.
    let fmt = "log_format t '$remote_addr [$time_local] \"$request\" $status $request_time $ssl_protocol $ssl_cipher';";
    let o = tlsgap()
        .args(["export", "-q", "--log-format", fmt, path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let rows = ndjson(&o);
    assert_eq!(rows[0]["duration_us"], 1_234_000);
    assert_eq!(rows[0]["time"], "2026-11-21T18:07:40+01:00");
}

/// A CSV reader (RFC 4180) that tells an empty quoted field (`""` → `Some("")`) from
/// an empty unquoted one (`None`).
fn parse_csv(text: &str) -> Vec<Vec<Option<String>>> {
    let mut rows = Vec::new();
    let mut row: Vec<Option<String>> = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut in_quotes = false;
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if in_quotes {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    field.push('"');
                } else {
                    in_quotes = false;
                }
            } else {
                field.push(c);
            }
            continue;
        }
        match c {
            '"' if at_field_start => {
                in_quotes = true;
                quoted = true;
                at_field_start = false;
            }
            '"' => panic!("quote inside an unquoted field: {text}"),
            ',' | '\n' => {
                let v = std::mem::take(&mut field);
                row.push(if quoted || !v.is_empty() {
                    Some(v)
                } else {
                    None
                });
                quoted = false;
                at_field_start = true;
                if c == '\n' {
                    rows.push(std::mem::take(&mut row));
                }
            }
            c => {
                assert!(!quoted, "text after a closing quote: {text}");
                field.push(c);
                at_field_start = false;
            }
        }
    }
    assert!(!in_quotes, "unterminated quote");
    assert!(
        field.is_empty() && row.is_empty(),
        "last row lacks its newline"
    );
    rows
}

#[test]
fn csv_quotes_every_text_field_and_round_trips() {
    let dir = util::tempdir();
    hand_file(dir.path());
    // By default a line break in a value is escaped, as in tables (one row per line).
    let safe = stdout(&export(dir.path(), "csv"));
    assert!(
        safe.contains(",\"UA, with \"\"quote\"\"\\x0Anewline\","),
        "{safe}"
    );
    // `--csv-raw`: the values as they are, for the round trip.
    let o = tlsgap()
        .current_dir(dir.path())
        .args(["export", "--format", "csv", "--csv-raw", "-q"])
        .args(["--log-format", "combinedssl", "hand.log"])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let csv = stdout(&o);
    let rows = parse_csv(&csv);
    let header: Vec<&str> = rows[0].iter().map(|h| h.as_deref().unwrap()).collect();
    assert_eq!(header.len(), COMBINEDSSL_KEYS.len());
    let mut sorted = header.clone();
    sorted.sort_unstable();
    let mut want = COMBINEDSSL_KEYS.to_vec();
    want.sort_unstable();
    assert_eq!(sorted, want);
    // The header is bare names; every text value is quoted.
    assert!(csv.starts_with(&header.join(",")));
    assert!(
        csv.contains(",\"UA, with \"\"quote\"\"\nnewline\","),
        "{csv}"
    );

    let json_rows = ndjson(&export(dir.path(), "ndjson"));
    assert_eq!(rows.len() - 1, json_rows.len());
    for (i, (row, j)) in rows[1..].iter().zip(&json_rows).enumerate() {
        assert_eq!(row.len(), header.len(), "row {i}");
        for (name, cell) in header.iter().zip(row) {
            let want = match &j[*name] {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                v => Some(v.to_string()),
            };
            assert_eq!(cell, &want, "row {}, column {name}", i + 1);
        }
    }
}

#[test]
fn csv_text_fields_are_quoted_even_when_plain() {
    let dir = util::tempdir();
    hand_file(dir.path());
    let csv = stdout(&export(dir.path(), "csv"));
    let third = csv
        .lines()
        .find(|l| l.starts_with("\"hand.log\",3,"))
        .unwrap();
    assert!(
        third.contains(",\"2001:db8::1\",\"ident-x\",\"alice\","),
        "{third}"
    );
    assert!(
        third.ends_with(",\"TLSv1.2\",\"ECDHE-RSA-AES128-GCM-SHA256\""),
        "{third}"
    );
}

// Regression tests named after what broke (found with the real vectors).

/// Apache writes `%b` as `-` for a 0-byte body (CLF); nginx writes `0` for the same
/// response, and testdata/real expects `"bytes": 0`.
#[test]
fn clf_dash_body_bytes_export_as_zero() {
    let dir = util::tempdir();
    let f = write(
        dir.path(),
        "head.log",
        br#"127.0.0.1 - - [21/Nov/2026:22:13:07 +0000] "HEAD /index.html HTTP/1.1" 200 - "-" "curl/7.88.1" TLSv1.3 TLS_AES_256_GCM_SHA384
"#,
    );
    let o = tlsgap()
        .args(["export", "-q", "--log-format", "combinedssl", path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    assert_eq!(ndjson(&o)[0]["bytes"], 0);
}

/// `get /x HTTP/1.1` (a method in lower case, logged by Apache and nginx) has a
/// method, target and version like any other request line.
#[test]
fn lowercase_method_is_split_from_request_line() {
    let dir = util::tempdir();
    let f = write(
        dir.path(),
        "lower.log",
        br#"127.0.0.1 - - [21/Nov/2026:22:13:09 +0000] "get /?id=70 HTTP/1.1" 400 157 "-" "-" - -
"#,
    );
    let o = tlsgap()
        .args(["export", "-q", "--log-format", "combinedssl", path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let r = &ndjson(&o)[0];
    assert_eq!(r["method"], "get");
    assert_eq!(r["target"], "/?id=70");
    assert_eq!(r["http_version"], "HTTP/1.1");
}

/// nginx `escape=json` writes a variable that is not set (no Referer, no user, plain
/// HTTP's `$ssl_protocol`) as `""`: that is absent, like `-` elsewhere
/// (testdata/real/nginx-json.log expects null).
#[test]
fn nginx_escape_json_empty_value_exports_as_null() {
    let dir = util::tempdir();
    let f = write(
        dir.path(),
        "j.log",
        br#"{"time":"2026-11-21T22:13:08+00:00","remote_addr":"127.0.0.1","remote_user":"","request":"GET /?id=1 HTTP/1.1","status":200,"body_bytes_sent":52,"http_referer":"","http_user_agent":"curl/7.88.1","ssl_protocol":"","ssl_cipher":"","request_time":0.000}
"#,
    );
    let fmt = &util::real_format("nginx-json.log");
    let o = tlsgap()
        .args(["export", "-q", "--log-format", fmt, path_str(&f)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let r = &ndjson(&o)[0];
    for key in ["user", "referer", "tls_protocol", "tls_cipher"] {
        assert_eq!(r[key], Value::Null, "{key}");
    }
    assert_eq!(r["user_agent"], "curl/7.88.1");
}

/// `export --help` and DESIGN.md list the columns as file, line, time, client, ...
#[test]
fn export_columns_follow_the_documented_order() {
    let dir = util::tempdir();
    hand_file(dir.path());
    let csv = stdout(&export(dir.path(), "csv"));
    let header = csv.lines().next().unwrap();
    assert!(
        header.starts_with("file,line,time,client,ident,user,request,"),
        "{header}"
    );
}
