//! Helpers shared by the fuzz targets: drive a parsed record through every accessor
//! so that a panic anywhere behind the public API shows up, and check the few
//! invariants that hold for any input.

use tlsgap_parser::{lossless_text, Format, LineParser, Record, Role};

/// Parse `line` with `parser` and, when it parses, read every field back through
/// every accessor.
pub fn parse_and_read_all<'f>(parser: &mut LineParser<'f>, format: &'f Format, line: &[u8]) {
    let mut rec = Record::new(format);
    if parser.parse(line, &mut rec).is_err() {
        return;
    }
    read_all(&rec, line);
}

/// Call every accessor of a successfully parsed record.
pub fn read_all(rec: &Record<'_>, line: &[u8]) {
    let format = rec.format();
    let line_range = line.as_ptr_range();
    for idx in 0..format.fields.len() + 1 {
        if let Some(raw) = rec.raw(idx) {
            // Records borrow the line: every raw value lies inside it.
            let r = raw.as_ptr_range();
            assert!(
                raw.is_empty() || (r.start >= line_range.start && r.end <= line_range.end),
                "raw value of field {idx} does not borrow the line"
            );
        }
        if let Some(v) = rec.value(idx) {
            let _ = lossless_text(&v);
            if let Some(raw) = rec.raw(idx) {
                // Unescaping never grows a value.
                assert!(v.len() <= raw.len(), "unescaped value grew");
            }
        }
        let _ = rec.int(idx);
    }
    for role in Role::ALL {
        let _ = rec.raw_role(role);
        if let Some(v) = rec.role(role) {
            let _ = lossless_text(&v);
        }
        let _ = role.column();
    }
    if let Some(t) = rec.time() {
        let _ = t.to_string();
        let _ = t.unix_micros();
    }
    let parts = rec.request_parts();
    for p in [&parts.method, &parts.target, &parts.http_version]
        .into_iter()
        .flatten()
    {
        let _ = lossless_text(p);
    }
    let _ = rec.duration_us();
}

/// The formats the `access_line` target picks from with its first byte: every preset
/// plus variants that reach the other field kinds (durations, pids, epoch and
/// strftime times, fractions, JSON escaping, `escape=none`).
pub const FORMATS: &[&str] = &[
    "combinedssl",
    "nginx-ssl",
    "ssl_request",
    "vhost_combined",
    "combined",
    "nginx-combined",
    "common",
    r#"%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x %D %P"#,
    r#"log_format j escape=json '{"time":"$time_iso8601","remote_addr":"$remote_addr","remote_user":"$remote_user","request":"$request","status":$status,"body_bytes_sent":$body_bytes_sent,"http_referer":"$http_referer","http_user_agent":"$http_user_agent","ssl_protocol":"$ssl_protocol","ssl_cipher":"$ssl_cipher","request_time":$request_time}';"#,
    r#"log_format raw escape=none '$remote_addr $msec "$request" $status $request_time "$http_user_agent" $ssl_protocol $ssl_cipher';"#,
    r#"%{%d/%b/%Y:%H:%M:%S}t %{%z}t %{msec_frac}t %a "%m %U %q %H" %>s %B %{ms}T %{c}x %{version}c %{cipher}c"#,
    r#"%{sec}t.%{usec_frac}t %h %{us}T %{tid}P "%{X-Forwarded-For}i" %O%I %^FB"#,
    r#"%{begin:msec}t %V %k %X "%r" %{end:usec}t %T"#,
];
