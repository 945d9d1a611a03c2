//! Helpers shared by the test modules: running the binary, temporary files, logs.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// The binary under test, without `COLUMNS` (tables are laid out for 80 columns
/// whatever the shell running the tests exports; `width.rs` sets it).
pub fn tlsgap() -> Command {
    let mut c = Command::cargo_bin("tlsgap").unwrap();
    c.env_remove("COLUMNS");
    c
}

/// Its path, for `std::process::Command` (pipes closed early).
pub fn tlsgap_path() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tlsgap"))
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../..")
    .canonicalize()
    .unwrap()
}

/// `testdata/real`.
pub fn real_dir() -> PathBuf {
    repo_root().join("testdata/real")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The exit code, failing on death by signal.
pub fn code(o: &Output) -> i32 {
    o.status
        .code()
        .unwrap_or_else(|| panic!("killed by a signal; stderr:\n{}", stderr(o)))
}

/// Two runs wrote the same bytes to stdout and stderr and exited alike.
#[track_caller]
pub fn assert_same_run(a: &Output, b: &Output, what: &str) {
    assert_eq!(stdout(a), stdout(b), "{what}: stdout");
    assert_eq!(stderr(a), stderr(b), "{what}: stderr");
    assert_eq!(code(a), code(b), "{what}: exit code");
}

/// Assert the exit code, showing stderr when it is not the expected one.
#[track_caller]
pub fn assert_code(o: &Output, want: i32) {
    assert_eq!(code(o), want, "exit code; stderr:\n{}", stderr(o));
}

/// Stdout parsed as one JSON document.
#[track_caller]
pub fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
            stdout(o),
            stderr(o)
        )
    })
}

/// Stdout parsed as NDJSON.
#[track_caller]
pub fn ndjson(o: &Output) -> Vec<Value> {
    std::str::from_utf8(&o.stdout)
        .expect("ndjson output is UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad ndjson line ({e}): {l}")))
        .collect()
}

/// A `tls --format json` result without `inputs` (which names the files), so that
/// results of differently named inputs can be compared.
pub fn without_inputs(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("inputs");
    }
    v
}

/// `tlsgap tls --format json -q ARGS...`: (result, output).
pub fn tls_json(args: &[&str]) -> (Value, Output) {
    let o = tlsgap()
        .args(["tls", "--format", "json", "-q"])
        .args(args)
        .output()
        .unwrap();
    let v = if o.stdout.is_empty() {
        Value::Null
    } else {
        json(&o)
    };
    (v, o)
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("tlsgap-it-")
        .tempdir()
        .unwrap()
}

/// Write `bytes` to `dir/name`.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Run an outside program (gzip, zstd, python3...), failing clearly when it is missing.
#[track_caller]
pub fn run_tool(program: &str, args: &[&str]) -> Output {
    let o = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run `{program}` ({e}): it is needed by this test; install it")
        });
    assert!(
        o.status.success(),
        "`{program} {}` failed: {}",
        args.join(" "),
        stderr(&o)
    );
    o
}

/// The small real Apache log used as the "plain" input.
pub fn sample_log() -> Vec<u8> {
    std::fs::read(real_dir().join("apache-combinedssl.log")).unwrap()
}

/// A combinedssl line; `-` as protocol/cipher means plain HTTP.
pub fn line(client: &str, protocol: &str, cipher: &str) -> String {
    format!(
        "{client} - - [21/Nov/2026:18:07:40 +0100] \"GET /x HTTP/1.1\" 200 512 \"-\" \
         \"Mozilla/5.0 (test)\" {protocol} {cipher}"
    )
}

/// A log generated in the test, with what it must count.
pub struct Generated {
    pub bytes: Vec<u8>,
    pub lines: u64,
    /// (protocol, cipher) -> requests.
    pub requests: BTreeMap<(String, String), u64>,
    pub plain_requests: u64,
    /// (protocol, cipher) -> clients whose first TLS request it was.
    pub clients: BTreeMap<(String, String), u64>,
    /// Clients never seen over TLS.
    pub plain_clients: u64,
}

const PAIRS: &[(&str, &str)] = &[
    ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    ("TLSv1.3", "TLS_AES_256_GCM_SHA384"),
    ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
    ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"),
    ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"),
    ("TLSv1.2", "AES128-SHA"),
    ("TLSv1.1", "ECDHE-RSA-AES256-SHA"),
    ("TLSv1", "DES-CBC3-SHA"),
    ("-", "-"),
];

/// About `target_bytes` of combinedssl lines with pseudo-random clients, protocols,
/// ciphers and times (several offsets), and the counts they must give.
pub fn generated_log(target_bytes: usize) -> Generated {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        // xorshift64*
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let offsets = ["+0000", "+0100", "-0330", "+0545"];
    let mut g = Generated {
        bytes: Vec::with_capacity(target_bytes + 512),
        lines: 0,
        requests: BTreeMap::new(),
        plain_requests: 0,
        clients: BTreeMap::new(),
        plain_clients: 0,
    };
    // Per client, its earliest TLS request by the logged instant (seconds; a tie to
    // the one written first), as `tls --count clients` counts it.
    type Earliest = Option<(i64, (String, String))>;
    let mut first_tls: HashMap<String, Earliest> = HashMap::new();
    let offset_minutes = [0i64, 60, -210, 345];
    let mut i = 0u64;
    while g.bytes.len() < target_bytes {
        let r = next();
        // Later lines bring new clients too, so that "first TLS request" decisions
        // happen in every block.
        let client = format!(
            "10.{}.{}.{}",
            (i / 20_000) % 256,
            (r >> 8) % 40,
            (r >> 16) % 50
        );
        let (protocol, cipher) = PAIRS[((r >> 24) % PAIRS.len() as u64) as usize];
        let ua_pad = "x".repeat(((r >> 32) % 120) as usize);
        let instant = ((1 + (r >> 40) % 28) * 86_400
            + (r >> 45) % 24 * 3600
            + (r >> 50) % 60 * 60
            + (r >> 56) % 60) as i64
            - offset_minutes[(r % 4) as usize] * 60;
        let l = format!(
            "{client} - - [{:02}/Nov/2026:{:02}:{:02}:{:02} {}] \"GET /page/{i}?q={} HTTP/1.1\" {} {} \
             \"https://example.org/ref/{}\" \"Mozilla/5.0 (gen; {ua_pad})\" {protocol} {cipher}\n",
            1 + (r >> 40) % 28,
            (r >> 45) % 24,
            (r >> 50) % 60,
            (r >> 56) % 60,
            offsets[(r % 4) as usize],
            r % 1000,
            [200, 200, 304, 404, 500][((r >> 4) % 5) as usize],
            (r >> 20) % 100_000,
            r % 97,
        );
        g.bytes.extend_from_slice(l.as_bytes());
        g.lines += 1;
        i += 1;
        let slot = first_tls.entry(client).or_insert(None);
        if protocol == "-" {
            g.plain_requests += 1;
        } else {
            let pair = (protocol.to_string(), cipher.to_string());
            *g.requests.entry(pair.clone()).or_default() += 1;
            if slot.as_ref().is_none_or(|(at, _)| instant < *at) {
                *slot = Some((instant, pair));
            }
        }
    }
    for first in first_tls.into_values() {
        match first {
            Some((_, pair)) => *g.clients.entry(pair).or_default() += 1,
            None => g.plain_clients += 1,
        }
    }
    g
}

/// (protocol, cipher) -> count from a `tls --format json` result.
pub fn pair_counts(v: &Value) -> BTreeMap<(String, String), u64> {
    let mut m = BTreeMap::new();
    for p in v["protocols"].as_array().unwrap() {
        let protocol = p["protocol"].as_str().unwrap();
        let mut sum = 0;
        for c in p["ciphers"].as_array().unwrap() {
            let n = c["count"].as_u64().unwrap();
            sum += n;
            m.insert(
                (
                    protocol.to_string(),
                    c["cipher"].as_str().unwrap().to_string(),
                ),
                n,
            );
        }
        assert_eq!(
            p["count"].as_u64().unwrap(),
            sum,
            "protocol count = sum of its ciphers"
        );
    }
    m
}

/// Say on the real stderr (not the test harness's captured one) that a test was
/// skipped, so that a skip is never silent.
pub fn loud_skip(test: &str, why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "\n*** SKIPPED: {test}: {why} ***\n");
}

/// Whether an env var is set to `1`.
pub fn env_is_1(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| v == "1")
}

/// Find an executable on PATH or in the sbin directories (where apache2/nginx live).
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The format a checked-in real log was written with (`testdata/real/formats.json`).
pub fn real_format(log_name: &str) -> String {
    let formats: Value =
        serde_json::from_slice(&std::fs::read(real_dir().join("formats.json")).unwrap()).unwrap();
    formats[log_name].as_str().unwrap().to_string()
}

/// `tlsgap ARGS` in `dir` with `TZ=UTC`; exit code 0 required; its stdout.
pub fn stdout_in(dir: &Path, args: &[&str]) -> String {
    let o = tlsgap()
        .current_dir(dir)
        .env("TZ", "UTC")
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    stdout(&o)
}

/// Run `tlsgap ARGS` in `dir` and require exit code 0.
pub fn run_ok_in(dir: &Path, args: &[&str]) -> Output {
    let o = tlsgap().current_dir(dir).args(args).output().unwrap();
    assert_code(&o, 0);
    o
}

/// Whether a test that starts real servers or tracers should run: `false` (after a
/// loud skip) with `TLSGAP_SKIP_SERVER_TESTS=1`; otherwise it fails when one of
/// `programs` is missing, naming the Debian packages.
pub fn server_test_enabled(test: &str, programs: &[&str], packages: &str) -> bool {
    if env_is_1("TLSGAP_SKIP_SERVER_TESTS") {
        loud_skip(
            test,
            "TLSGAP_SKIP_SERVER_TESTS=1: the real-server part was NOT checked",
        );
        return false;
    }
    let missing: Vec<&&str> = programs
        .iter()
        .filter(|p| find_program(p).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "{test} needs {missing:?}, which are not installed (apt-get install {packages}); \
         set TLSGAP_SKIP_SERVER_TESTS=1 to skip it"
    );
    true
}

/// The path of `program`, which `test` needs. Missing, it fails the test naming the
/// Debian package, unless `skip_var=1` says to skip: then `None`, after a loud skip.
pub fn tool_ready(test: &str, program: &str, package: &str, skip_var: &str) -> Option<PathBuf> {
    if let Some(p) = find_program(program) {
        return Some(p);
    }
    assert!(
        env_is_1(skip_var),
        "{test} needs `{program}`, which is not installed (apt-get install {package}); \
         set {skip_var}=1 to skip it"
    );
    loud_skip(
        test,
        &format!("{skip_var}=1 and no `{program}`: NOT checked"),
    );
    None
}

/// Run a repository script with python3, failing with its output when it fails.
pub fn run_script(script: &str, args: &[&std::ffi::OsStr]) -> Output {
    let o = std::process::Command::new("python3")
        .arg(repo_root().join("scripts").join(script))
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "scripts/{script} failed ({:?}):\n{}\n{}",
        o.status,
        stdout(&o),
        stderr(&o)
    );
    o
}

/// Whether python3 can import `modules` (e.g. `["pyarrow.parquet", "duckdb"]`, what
/// the test needs them for in `purpose`). With `TLSGAP_SKIP_PY_TESTS=1`: a loud skip,
/// `false`. Otherwise a missing module fails the test, naming the pip packages.
pub fn python_ready(test: &str, modules: &[&str], pip: &str, purpose: &str) -> bool {
    if env_is_1("TLSGAP_SKIP_PY_TESTS") {
        loud_skip(
            test,
            &format!("TLSGAP_SKIP_PY_TESTS=1: {purpose} was NOT checked"),
        );
        return false;
    }
    let import = format!("import {}", modules.join(", "));
    let o = std::process::Command::new("python3")
        .args(["-c", &import])
        .output();
    match o {
        Ok(o) if o.status.success() => true,
        Ok(o) => panic!(
            "{test}: python3 cannot `{import}` ({purpose}): run `pip install {pip}` (or \
             set TLSGAP_SKIP_PY_TESTS=1 to skip, loudly)\n{}",
            stderr(&o)
        ),
        Err(e) => panic!(
            "{test}: cannot run python3 ({e}): install python3 and `pip install {pip}` (or \
             set TLSGAP_SKIP_PY_TESTS=1 to skip, loudly)"
        ),
    }
}

/// A real nginx on 127.0.0.1 (one worker, started in a directory of the test's) with
/// strace attached to its worker the way operators do it: `strace -tt -p PID -o
/// trace`, strace's default `-s 32`. Both are stopped when it is dropped.
pub struct TracedNginx {
    master: std::process::Child,
    strace: Option<std::process::Child>,
    /// The port nginx listens on.
    pub port: u16,
    /// strace's output file.
    pub trace: PathBuf,
}

impl TracedNginx {
    /// Start nginx in `dir` with the configuration `conf(port)` returns (`daemon off`,
    /// one worker), wait until its worker accepts connections, and attach strace to it.
    pub fn start(dir: &Path, conf: impl FnOnce(u16) -> String) -> TracedNginx {
        TracedNginx::start_in_zones(dir, conf, None)
    }

    /// [`TracedNginx::start`], nginx logging in UTC and strace run with `TZ` set to
    /// `strace_tz` (an operator's shell in another zone than the server's clock).
    pub fn start_in_zones(
        dir: &Path,
        conf: impl FnOnce(u16) -> String,
        strace_tz: Option<&str>,
    ) -> TracedNginx {
        use std::io::Read;
        use std::process::{Command, Stdio};
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let conf_path = dir.join("nginx.conf");
        std::fs::write(&conf_path, conf(port)).unwrap();
        let master = Command::new(find_program("nginx").unwrap())
            .env("TZ", "UTC")
            .args(["-p", path_str(dir), "-c", path_str(&conf_path)])
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let trace = dir.join("trace");
        let mut nginx = TracedNginx {
            master,
            strace: None,
            port,
            trace,
        };
        // The worker: the master's child, once nginx listens.
        let mut worker = None;
        for _ in 0..100 {
            let o = Command::new("pgrep")
                .args(["-P", &nginx.master.id().to_string()])
                .output()
                .unwrap();
            let pids = stdout(&o);
            if let Some(p) = pids.lines().next() {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    worker = Some(p.trim().to_string());
                    break;
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let worker = worker.expect("nginx worker");
        let mut strace = Command::new(find_program("strace").unwrap());
        if let Some(tz) = strace_tz {
            strace.env("TZ", tz);
        }
        let mut strace = strace
            .args(["-tt", "-p", &worker, "-o", path_str(&nginx.trace)])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // strace says "Process N attached" once it is.
        let mut err = strace.stderr.take().unwrap();
        nginx.strace = Some(strace);
        let mut seen = Vec::new();
        let mut buf = [0u8; 256];
        while !String::from_utf8_lossy(&seen).contains("attached") {
            let n = err.read(&mut buf).unwrap();
            assert!(n > 0, "strace: {}", String::from_utf8_lossy(&seen));
            seen.extend_from_slice(buf.get(..n).unwrap_or_default());
        }
        nginx
    }

    /// Detach strace (the trace is then complete) and stop nginx.
    pub fn stop(&mut self) {
        use std::process::Command;
        if let Some(mut s) = self.strace.take() {
            let _ = Command::new("kill")
                .args(["-INT", &s.id().to_string()])
                .status();
            let _ = s.wait();
        }
        let _ = Command::new("kill")
            .arg(self.master.id().to_string())
            .status();
        let _ = self.master.wait();
    }
}

impl Drop for TracedNginx {
    fn drop(&mut self) {
        self.stop();
    }
}
