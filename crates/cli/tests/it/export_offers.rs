//! `export` writes what the client offered as lists: Parquet `list<string>` (read back
//! by pyarrow and DuckDB), ndjson arrays, and the logged text in CSV. The Apache lines
//! follow the httpd trunk documentation's encoding of `SSL_CLIENTHELLO_*` (no Apache
//! here has those variables).

use serde_json::Value;

use crate::util::{self, assert_code, path_str, stdout};

const NGINX: &str = concat!(
    "192.0.2.1 - - [26/Nov/2026:08:00:01 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"Mozilla/5.0 Chrome/131.0\" TLSv1.3 TLS_AES_128_GCM_SHA256 \"0xcaca:TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:ECDHE-RSA-AES128-GCM-SHA256\" \"0x3a3a:0x11ec:X25519:prime256v1\" . localhost\n",
    "192.0.2.2 - - [26/Nov/2026:08:00:02 +0000] \"GET / HTTP/1.1\" 200 5 \"-\" \"old\" TLSv1 AES256-SHA \"AES256-SHA:TLS_EMPTY_RENEGOTIATION_INFO_SCSV\" \"-\" . -\n",
);

const APACHE_FORMAT: &str = r#"%h %t "%r" %>s %b %{SSL_PROTOCOL}x %{SSL_CIPHER}x %{SSL_CLIENTHELLO_CIPHERS}x %{SSL_CLIENTHELLO_GROUPS}x %{SSL_CLIENTHELLO_EC_FORMATS}x %{SSL_CLIENTHELLO_VERSION}x"#;
const APACHE: &str = "198.51.100.1 [26/Nov/2026:09:00:00 +0000] \"GET / HTTP/1.1\" 200 5 TLSv1.3 TLS_AES_128_GCM_SHA256 3a3a1301c02f 5a5a11ec001d 0001 0303\n";

fn export(
    format: &str,
    log: &std::path::Path,
    kind: &str,
    out: Option<&std::path::Path>,
) -> String {
    let mut cmd = util::tlsgap();
    cmd.args(["export", "-q", "--log-format", format, "--format", kind]);
    if let Some(o) = out {
        cmd.args(["-o", path_str(o)]);
    }
    let o = cmd.arg(path_str(log)).output().unwrap();
    assert_code(&o, 0);
    stdout(&o)
}

#[test]
fn offers_are_lists_in_ndjson_and_text_in_csv() {
    let dir = util::tempdir();
    let log = util::write(dir.path(), "access.log", NGINX.as_bytes());
    let rows: Vec<Value> = export("nginx-ssl-full", &log, "ndjson", None)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        rows[0]["tls_offered_ciphers"],
        serde_json::json!([
            "0xcaca",
            "TLS_AES_128_GCM_SHA256",
            "TLS_AES_256_GCM_SHA384",
            "ECDHE-RSA-AES128-GCM-SHA256"
        ])
    );
    assert_eq!(
        rows[0]["tls_offered_groups"],
        serde_json::json!(["0x3a3a", "0x11ec", "X25519", "prime256v1"])
    );
    // `-`: nothing offered.
    assert_eq!(rows[1]["tls_offered_groups"], Value::Null);
    let csv = export("nginx-ssl-full", &log, "csv", None);
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains(",tls_offered_ciphers,tls_offered_groups,"));
    assert!(csv.contains("\"0x3a3a:0x11ec:X25519:prime256v1\""), "{csv}");

    let apache = util::write(dir.path(), "ssl.log", APACHE.as_bytes());
    let rows: Vec<Value> = export(APACHE_FORMAT, &apache, "ndjson", None)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        rows[0]["tls_offered_ciphers"],
        serde_json::json!(["3a3a", "1301", "c02f"])
    );
    assert_eq!(
        rows[0]["tls_offered_groups"],
        serde_json::json!(["5a5a", "11ec", "001d"])
    );
    assert_eq!(
        rows[0]["tls_hello_ec_formats"],
        serde_json::json!(["00", "01"])
    );
    assert_eq!(rows[0]["tls_hello_version"], "0303");
}

#[test]
fn offers_are_parquet_lists_for_pyarrow_and_duckdb() {
    let test = "offers_are_parquet_lists_for_pyarrow_and_duckdb";
    if !util::python_ready(
        test,
        &["pyarrow", "duckdb"],
        "pyarrow duckdb",
        "list columns",
    ) {
        return;
    }
    let dir = util::tempdir();
    let log = util::write(dir.path(), "access.log", NGINX.as_bytes());
    let parquet = dir.path().join("rows.parquet");
    export("nginx-ssl-full", &log, "parquet", Some(&parquet));
    let script = r#"
import sys, json, pyarrow.parquet as pq, duckdb
t = pq.read_table(sys.argv[1])
f = t.schema.field("tls_offered_groups")
rows = duckdb.sql(
    "select list_contains(tls_offered_groups, '0x11ec') as pq, len(tls_offered_ciphers) as n "
    "from read_parquet('%s') order by line" % sys.argv[1]).fetchall()
print(json.dumps({"type": str(f.type), "groups": t.column("tls_offered_groups").to_pylist(), "duckdb": rows}))
"#;
    let o = std::process::Command::new("python3")
        .args(["-c", script, path_str(&parquet)])
        .output()
        .unwrap();
    assert_code(&o, 0);
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["type"].as_str().unwrap().contains("list"), "{v}");
    assert_eq!(
        v["groups"],
        serde_json::json!([["0x3a3a", "0x11ec", "X25519", "prime256v1"], null])
    );
    assert_eq!(v["duckdb"], serde_json::json!([[true, 4], [null, 2]]));
}
