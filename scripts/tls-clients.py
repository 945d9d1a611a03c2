#!/usr/bin/env python3
"""Run a fixed plan of real TLS clients (curl) against a real Apache with a given SSL policy.

Usage (run from anywhere; as root in CI, see scripts/tls-clients.md):

  python3 scripts/tls-clients.py --preset permissive --out DIR
  python3 scripts/tls-clients.py --preset strict --out DIR
  python3 scripts/tls-clients.py --protocol 'SSLProtocol -all +TLSv1.2 +TLSv1.3' \\
      --ciphers 'SSLCipherSuite ECDHE+AESGCM' \\
      [--ciphers13 'SSLCipherSuite TLSv1.3 TLS_AES_128_GCM_SHA256'] --out DIR
  python3 scripts/tls-clients.py --config policy.conf --out DIR
  python3 scripts/tls-clients.py --selftest [--out DIR]

The script

  * makes a throw-away directory with a self-signed RSA-2048 and a self-signed
    ECDSA P-256 certificate (both configured, so ECDHE-ECDSA suites work),
  * starts Apache 2.4 (prefork, mod_ssl) on 127.0.0.1 on a free high port with
    exactly the SSL policy directives given (nothing else about protocols or
    ciphers is configured) and the `combinedssl` log format,
  * runs the FIXED client plan below: sequential curl processes, one request
    per connection, each client with its own User-Agent and TLS options,
  * stops Apache by PID and writes DIR/access.log (as Apache wrote it),
    DIR/clients.json (what every client did and what curl reported) and
    DIR/apache-error.log (mod_ssl's reasons for refused handshakes).

Both Apache and curl run with OPENSSL_CONF pointing to a minimal config written
by this script, so the host's /etc/ssl/openssl.cnf (which may carry
`CipherString = DEFAULT@SECLEVEL=2` / `MinProtocol = TLSv1.2`) cannot change the
outcome.  What remains is OpenSSL's built-in default security level (Debian
builds it with -DOPENSSL_TLS_SECURITY_LEVEL=2), which the policy's cipher
string (`@SECLEVEL=0`) and the old clients' `--ciphers ...@SECLEVEL=0` lower
explicitly, on each side.

Exit status: 0 = the plan ran and the log agrees with curl (refused clients
are results, not errors); 1 = something failed (message names what); 2 = usage.
Only the Python standard library is used.  Nothing binds outside 127.0.0.1.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import (  # noqa: E402  (needs the sys.path entry above)
    APACHE_MODULES, Fail, apache_docroot, apache_head, apache_logformat,
    apache_prefork, apache_ssl_vhost, fix_perms, free_port, log, make_cert,
    raise_on_termination, run, set_prog, stop_group, tail, tool_path, wait_pidfile,
    wait_port, write_conf)

PROG = "tls-clients"
set_prog(PROG)
SCHEMA = "tlsgap-tls-clients/1"

LOG_FORMAT = ('%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i" '
              "%{SSL_PROTOCOL}x %{SSL_CIPHER}x")
LOG_NICK = "combinedssl"

# ---------------------------------------------------------------------------
# policies
# ---------------------------------------------------------------------------

PRESETS = {
    # every client of the plan connects (TLSv1 .. TLSv1.3, any cipher the
    # local OpenSSL still has); "all" = TLSv1..TLSv1.3 here (no SSLv3 in
    # Debian's OpenSSL)
    "permissive": [
        "SSLProtocol all",
        "SSLCipherSuite ALL:@SECLEVEL=0",
    ],
    # Mozilla-intermediate-like without DHE: TLS 1.2 ECDHE + AEAD, TLS 1.3 default
    "strict": [
        "SSLProtocol -all +TLSv1.2 +TLSv1.3",
        "SSLCipherSuite ECDHE+AESGCM:ECDHE+CHACHA20",
    ],
}

# directives this script sets itself; a policy must not touch them
RESERVED = {"sslengine", "sslcertificatefile", "sslcertificatekeyfile",
            "sslcertificatechainfile", "sslsessioncache", "sslsessioncachetimeout",
            "sslcacertificatefile", "sslcacertificatepath", "sslverifyclient"}


def policy_from_args(args):
    """-> (name, [directive lines])"""
    if args.preset:
        return args.preset, list(PRESETS[args.preset])
    if args.config:
        try:
            with open(args.config, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise Usage("cannot read --config %s: %s" % (args.config, e))
        lines = []
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            lines.append(check_directive(line, "%s:%d" % (args.config, n)))
        if not lines:
            raise Usage("--config %s holds no directive" % args.config)
        return "custom", lines
    lines = [directive("SSLProtocol", args.protocol, "--protocol"),
             directive("SSLCipherSuite", args.ciphers, "--ciphers")]
    if args.ciphers13:
        v = args.ciphers13.strip()
        if v.lower().startswith("sslciphersuite"):
            v = v[len("sslciphersuite"):].strip()
        if not v.startswith("TLSv1.3"):
            v = "TLSv1.3 " + v
        lines.append(directive("SSLCipherSuite", v, "--ciphers13"))
    return "custom", lines


def directive(name, value, flag):
    """Accept 'SSLProtocol -all +TLSv1.2' or just '-all +TLSv1.2'."""
    v = value.strip()
    if v.lower().startswith(name.lower() + " ") or v.lower() == name.lower():
        v = v[len(name):].strip()
    if not v:
        raise Usage("%s: empty value" % flag)
    return check_directive("%s %s" % (name, v), flag)


def check_directive(line, where):
    if any(c in line for c in "\r\n\0"):
        raise Usage("%s: control character in directive" % where)
    word = line.split(None, 1)[0]
    if not re.fullmatch(r"SSL[A-Za-z0-9]+", word):
        raise Usage("%s: only mod_ssl directives (SSL...) are allowed, got %r"
                    % (where, word))
    if word.lower() in RESERVED:
        raise Usage("%s: %s is set by the script itself" % (where, word))
    return line


# ---------------------------------------------------------------------------
# the client plan (FIXED: tests rely on ids, user agents and outcomes)
# ---------------------------------------------------------------------------

UA = {
    "chrome": ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
               "(KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36"),
    "firefox": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "safari": ("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 "
               "(KHTML, like Gecko) Version/17.5 Safari/605.1.15"),
    "chrome_android": ("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 "
                       "(KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36"),
    "ie11": "Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko",
    "ie8": ("Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 5.1; Trident/4.0; "
            ".NET CLR 2.0.50727)"),
    "googlebot": ("Mozilla/5.0 (compatible; Googlebot/2.1; "
                  "+http://www.google.com/bot.html)"),
    "bingbot": ("Mozilla/5.0 (compatible; bingbot/2.0; "
                "+http://www.bing.com/bingbot.htm)"),
}

SECLEVEL0 = ":@SECLEVEL=0"

BROWSER_PATHS = ["/", "/static/app.css", "/static/app.js"]
BOT_PATHS = ["/robots.txt", "/", "/sitemap.xml"]
API_PATHS = ["/api/status.json", "/api/items.json"]


def C(cid, kind, ua, aimed, strict, tls=None, ciphers=None, tls13=None,
      paths=None, referer=False):
    """One client.  ua: str, "" = header sent empty, None = no header.
    aimed: (protocol, cipher) negotiated under the permissive preset.
    strict: "ok" or "refused" under the strict preset."""
    return {"id": cid, "kind": kind, "user_agent": ua,
            "tls_min": tls[0] if tls else None, "tls_max": tls[1] if tls else None,
            "ciphers": ciphers, "tls13_ciphers": tls13,
            "paths": paths or API_PATHS, "referer": referer,
            "aimed": {"protocol": aimed[0], "cipher": aimed[1]},
            "strict": strict}


PLAN = [
    # --- browsers ---------------------------------------------------------
    C("chrome-126", "browser", UA["chrome"],
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), "ok",
      paths=BROWSER_PATHS, referer=True),   # curl's own defaults
    C("firefox-128", "browser", UA["firefox"],
      ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"), "ok",
      tls=("1.3", "1.3"), tls13="TLS_CHACHA20_POLY1305_SHA256",
      paths=BROWSER_PATHS, referer=True),
    C("safari-17", "browser", UA["safari"],
      ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384"), "ok",
      tls=("1.2", "1.2"), ciphers="ECDHE-ECDSA-AES256-GCM-SHA384",
      paths=BROWSER_PATHS, referer=True),
    C("chrome-android-126", "browser", UA["chrome_android"],
      ("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305"), "ok",
      tls=("1.2", "1.2"), ciphers="ECDHE-RSA-CHACHA20-POLY1305",
      paths=BROWSER_PATHS[:2], referer=True),
    C("ie-11-win7", "browser", UA["ie11"],
      ("TLSv1.2", "ECDHE-RSA-AES256-SHA384"), "refused",
      tls=("1.2", "1.2"), ciphers="ECDHE-RSA-AES256-SHA384",
      paths=BROWSER_PATHS[:2], referer=True),
    C("ie-8-xp", "browser", UA["ie8"],
      ("TLSv1", "AES128-SHA"), "refused",
      tls=("1.0", "1.0"), ciphers="AES128-SHA" + SECLEVEL0,
      paths=BROWSER_PATHS[:2]),
    # --- bots / crawlers --------------------------------------------------
    C("googlebot", "bot", UA["googlebot"],
      ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), "ok",
      tls=("1.2", "1.2"), ciphers="ECDHE-RSA-AES128-GCM-SHA256", paths=BOT_PATHS),
    C("bingbot", "bot", UA["bingbot"],
      ("TLSv1.2", "ECDHE-RSA-AES128-SHA"), "refused",
      tls=("1.2", "1.2"), ciphers="ECDHE-RSA-AES128-SHA", paths=BOT_PATHS),
    # --- libraries / command-line tools -----------------------------------
    C("curl-8", "library", "curl/8.5.0",
      ("TLSv1.2", "AES256-GCM-SHA384"), "refused",
      tls=("1.2", "1.2"), ciphers="AES256-GCM-SHA384"),
    C("python-requests", "library", "python-requests/2.31.0",
      ("TLSv1.2", "AES256-SHA"), "refused",
      tls=("1.2", "1.2"), ciphers="AES256-SHA"),
    C("wget", "library", "Wget/1.21.3",
      ("TLSv1.1", "ECDHE-ECDSA-AES256-SHA"), "refused",
      tls=("1.1", "1.1"), ciphers="DEFAULT" + SECLEVEL0),
    C("go-http-client", "library", "Go-http-client/1.1",
      ("TLSv1.3", "TLS_AES_128_GCM_SHA256"), "ok",
      tls=("1.3", "1.3"), tls13="TLS_AES_128_GCM_SHA256"),
    C("okhttp", "library", "okhttp/4.12.0",
      ("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256"), "refused",
      tls=("1.2", "1.2"), ciphers="DHE-RSA-AES128-GCM-SHA256"),
    C("java-httpclient", "library", "Apache-HttpClient/4.5.14 (Java/1.8.0_402)",
      ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"), "ok",
      tls=("1.2", "1.2"), ciphers="ECDHE-RSA-AES256-GCM-SHA384"),
    # --- unknown ----------------------------------------------------------
    C("no-user-agent", "unknown", None,               # logged as "-"
      ("TLSv1", "ECDHE-RSA-AES256-SHA"), "refused",
      tls=("1.0", "1.0"), ciphers="ECDHE-RSA-AES256-SHA" + SECLEVEL0,
      paths=["/", "/wp-login.php"]),
    C("empty-user-agent", "unknown", "",              # logged as ""
      ("TLSv1.2", "ECDHE-ECDSA-AES128-SHA"), "refused",
      tls=("1.2", "1.2"), ciphers="ECDHE-ECDSA-AES128-SHA",
      paths=["/", "/.env"]),
    C("garbage-user-agent", "unknown", "xq7!zz 0x41414141 ;;; <>",
      ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384"), "ok",
      tls=("1.2", "1.2"),                             # curl's default TLS 1.2 list
      paths=["/", "/admin/"]),
]

DOCROOT_FILES = {
    "index.html": b"<html><body>tlsgap tls-clients</body></html>\n",
    "static/app.css": b"body { font-family: sans-serif; }\n",
    "static/app.js": b"console.log('tlsgap');\n",
    "robots.txt": b"User-agent: *\nDisallow: /admin/\n",
    "sitemap.xml": b'<?xml version="1.0"?><urlset></urlset>\n',
    "api/status.json": b'{"status":"ok"}\n',
    "api/items.json": b"[1,2,3]\n",
}

# curl exit codes that mean "the server refused the TLS handshake"
REFUSED_CODES = {35: "SSL connect error", 56: "failure receiving network data"}

# a configuration normally takes 1-3 s; give up well before a CI job would
CONFIG_DEADLINE_SECONDS = 60

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


class Usage(Exception):
    pass


def die_with_parent():
    """In the child before exec: SIGTERM the Apache master if this script
    dies without cleaning up (SIGKILL of the test process).  Linux only;
    without it the `finally` blocks still stop Apache on normal exits."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except Exception:
        pass


class Terminated(Exception):
    pass


# ---------------------------------------------------------------------------
# setup
# ---------------------------------------------------------------------------

# Replaces /etc/ssl/openssl.cnf for Apache, curl and openssl(1).  No ssl_conf
# section: OpenSSL's built-in defaults apply (no MinProtocol, no CipherString;
# security level = the compiled-in default, 2 on Debian), and every deviation
# comes from the policy directives or the curl options of the plan.
OPENSSL_CNF = """\
# written by scripts/tls-clients.py; used instead of the system openssl.cnf
# (via OPENSSL_CONF) so that host-wide settings such as
# CipherString = DEFAULT@SECLEVEL=2 or MinProtocol = TLSv1.2 do not apply.
# Deliberately no ssl_conf / system_default section.
"""


class Setup:
    """Files shared by every configuration of one invocation."""

    def __init__(self, tmp):
        self.tmp = tmp
        os.chmod(tmp, 0o755)  # www-data must traverse it
        self.openssl_cnf = os.path.join(tmp, "openssl.cnf")
        with open(self.openssl_cnf, "w") as f:
            f.write(OPENSSL_CNF)
        self.env = dict(os.environ)
        self.env["OPENSSL_CONF"] = self.openssl_cnf
        for k in ("SSLKEYLOGFILE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
                  "http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
            self.env.pop(k, None)
        self.env["LC_ALL"] = "C"
        self.www = os.path.join(tmp, "www")
        for rel, data in DOCROOT_FILES.items():
            p = os.path.join(self.www, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(data)
        os.makedirs(os.path.join(self.www, "admin"), exist_ok=True)
        with open(os.path.join(self.www, "admin", "index.html"), "wb") as f:
            f.write(b"<html><body>admin</body></html>\n")
        self.certs = []
        for kind, key_kind in [("rsa", "rsa"), ("ecdsa", "ec")]:
            cert = os.path.join(tmp, "%s-cert.pem" % kind)
            key = os.path.join(tmp, "%s-key.pem" % kind)
            make_cert("openssl", cert, key, kind=key_kind,
                      what="openssl req (%s certificate)" % kind, env=self.env)
            self.certs.append((kind, cert, key))
        fix_perms(tmp)
        self.apache = tool_path("apache2")
        self.versions = {
            "apache": run([self.apache, "-v"], env=self.env).stdout.decode()
            .splitlines()[0].replace("Server version: ", ""),
            "curl": " ".join(run(["curl", "--version"], env=self.env).stdout.decode()
                             .split()[:2]),
            "openssl": " ".join(run(["openssl", "version"], env=self.env).stdout.decode()
                                .split()[:2]),
        }


def apache_conf(setup, d, port, policy):
    L = apache_head("scripts/tls-clients.py", d, [
        "mpm_prefork", "authz_core", "dir", "mime", "socache_shmcb", "ssl"])
    if os.geteuid() == 0:
        L += ["User www-data", "Group www-data"]
    L += apache_prefork(1, 1, 2, 2)
    L += [
        "Listen 127.0.0.1:%d https" % port,
        "ErrorLog %s/error.log" % d, "LogLevel info ssl:info",
        "TypesConfig /dev/null",
        "AddType text/html .html", "AddType text/css .css",
        "AddType text/javascript .js", "AddType application/json .json",
        "AddType text/plain .txt", "AddType application/xml .xml",
    ]
    L += apache_docroot(setup.www)
    L += [
        "SSLSessionCache shmcb:%s/run/ssl_scache(512000)" % d,
        apache_logformat(LOG_FORMAT, LOG_NICK),
        "CustomLog %s/access.log %s" % (d, LOG_NICK),
    ]
    L += apache_ssl_vhost(port, [(cert, key) for _kind, cert, key in setup.certs],
                          ["# --- policy under test ---"] + list(policy))
    return write_conf(os.path.join(d, "httpd.conf"), L)


# ---------------------------------------------------------------------------
# clients
# ---------------------------------------------------------------------------

SSL_USING = re.compile(r"SSL connection using (\S+) / (\S+)")


def curl_tls_args(c):
    a = []
    if c["tls_min"]:
        a += ["--tlsv" + c["tls_min"], "--tls-max", c["tls_max"]]
    if c["ciphers"]:
        a += ["--ciphers", c["ciphers"]]
    if c["tls13_ciphers"]:
        a += ["--tls13-ciphers", c["tls13_ciphers"]]
    return a


def curl_ua_args(ua):
    if ua is None:
        return ["-H", "User-Agent:"]      # curl: remove the header
    if ua == "":
        return ["-H", "User-Agent;"]      # curl: send it empty
    return ["-H", "User-Agent: " + ua]


def do_request(setup, c, port, path, referer):
    cmd = ["curl", "-q", "-sS", "-v", "--noproxy", "*", "-k", "--http1.1",
           "--connect-timeout", "5", "--max-time", "10",
           "-o", "/dev/null", "-w", "%{json}"]
    cmd += curl_ua_args(c["user_agent"])
    if referer:
        cmd += ["-H", "Referer: " + referer]
    cmd += curl_tls_args(c)
    cmd.append("https://127.0.0.1:%d%s" % (port, path))
    t0 = time.time()
    r = run(cmd, env=setup.env, timeout=20)
    err = r.stderr.decode("utf-8", "replace")
    res = {"path": path, "referer": referer, "exit_code": r.returncode,
           "http_status": None, "protocol": None, "cipher": None, "error": None,
           "seconds": round(time.time() - t0, 3)}
    try:
        w = json.loads(r.stdout.decode("utf-8", "replace") or "{}")
    except ValueError:
        w = {}
    if w.get("http_code"):
        res["http_status"] = w["http_code"]
    if r.returncode != 0:
        res["error"] = w.get("errormsg") or (err.strip().splitlines() or ["?"])[-1]
    m = SSL_USING.search(err)
    if m:
        res["protocol"], res["cipher"] = m.group(1), m.group(2)
    if r.returncode == 0 and (not m or not res["http_status"]):
        raise Fail("client %s %s: curl exited 0 but reported no TLS session / "
                   "status:\n%s" % (c["id"], path, err[-2000:]))
    if r.returncode not in (0,) and r.returncode not in REFUSED_CODES:
        raise Fail("client %s %s: curl exit %d (%s) is not a handshake refusal; "
                   "server down or plan broken?\n%s" % (
                       c["id"], path, r.returncode, res["error"], err[-2000:]))
    return res


def run_client(setup, c, port, deadline):
    reqs = []
    for i, path in enumerate(c["paths"]):
        if time.time() > deadline:
            raise Fail("configuration took longer than %ds (at client %s); "
                       "giving up" % (CONFIG_DEADLINE_SECONDS, c["id"]))
        referer = None
        if c["referer"] and i > 0:
            referer = "https://localhost/"
        reqs.append(do_request(setup, c, port, path, referer))
    codes = sorted({r["exit_code"] for r in reqs})
    first = reqs[0]
    out = {
        "id": c["id"], "kind": c["kind"], "user_agent": c["user_agent"],
        "user_agent_logged": ("-" if c["user_agent"] is None else c["user_agent"]),
        "curl": {"tls_min": c["tls_min"], "tls_max": c["tls_max"],
                 "ciphers": c["ciphers"], "tls13_ciphers": c["tls13_ciphers"],
                 "tls_args": curl_tls_args(c)},
        "aimed": dict(c["aimed"]),
        "expected_strict": c["strict"],
        "exit_code": codes[-1] if len(codes) > 1 else codes[0],
        "consistent": len(codes) == 1 and
        len({(r["protocol"], r["cipher"]) for r in reqs}) == 1,
        "connected": all(r["exit_code"] == 0 for r in reqs),
        "protocol": first["protocol"] if first["exit_code"] == 0 else None,
        "cipher": first["cipher"] if first["exit_code"] == 0 else None,
        "error": next((r["error"] for r in reqs if r["error"]), None),
        "requests": reqs,
    }
    return out


# ---------------------------------------------------------------------------
# access log
# ---------------------------------------------------------------------------

Q = r'"((?:[^"\\]|\\.)*)"'
LINE_RE = re.compile(r"^(\S+) (\S+) (\S+) \[([^\]]+)\] " + Q + r" (\d{3}) (\S+) " +
                     Q + " " + Q + r" (\S+) (\S+)$")


def check_log(path, clients):
    """Attribute every log line to a successful request (the plan is run
    sequentially, one request per connection, so the order is the same) and
    compare the logged protocol/cipher with curl's report."""
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        raise Fail("%s does not end with a newline" % path)
    lines = data.decode("utf-8", "replace").splitlines()
    ok = [(c, r) for c in clients for r in c["requests"] if r["exit_code"] == 0]
    if len(lines) != len(ok):
        raise Fail("access.log has %d lines but %d requests succeeded "
                   "(a refused handshake must not be logged)\n%s" % (
                       len(lines), len(ok), "\n".join(lines[-20:])))
    for n, (line, (c, r)) in enumerate(zip(lines, ok), 1):
        m = LINE_RE.match(line)
        if not m:
            raise Fail("access.log line %d does not match the combinedssl format: %r"
                       % (n, line))
        host, _, _, _, req, status, _, _, ua, proto, cipher = m.groups()
        want = {"host": "127.0.0.1", "request": "GET %s HTTP/1.1" % r["path"],
                "status": str(r["http_status"]), "ua": c["user_agent_logged"],
                "proto": r["protocol"], "cipher": r["cipher"]}
        got = {"host": host, "request": req, "status": status, "ua": ua,
               "proto": proto, "cipher": cipher}
        if want != got:
            raise Fail("access.log line %d (%s %s) disagrees with curl: "
                       "log %r, curl %r" % (n, c["id"], r["path"], got, want))
        r["log_line"] = n
    for c in clients:
        for r in c["requests"]:
            r.setdefault("log_line", None)
    return len(lines)


# ---------------------------------------------------------------------------
# one configuration
# ---------------------------------------------------------------------------

def run_config(setup, name, policy, outdir):
    t0 = time.time()
    deadline = t0 + CONFIG_DEADLINE_SECONDS
    d = tempfile.mkdtemp(prefix="apache-%s-" % name, dir=setup.tmp)
    os.chmod(d, 0o755)
    os.makedirs(os.path.join(d, "run"))
    proc = out = None
    try:
        for attempt in range(3):   # a free port can be taken by someone else
            port = free_port()
            conf = apache_conf(setup, d, port, policy)
            r = run([setup.apache, "-f", conf, "-t"], env=setup.env)
            if r.returncode != 0:
                raise Fail("apache config test failed for policy %r:\n%s" % (
                    policy, r.stderr.decode(errors="replace")))
            out = open(os.path.join(d, "stdout.log"), "ab")
            proc = subprocess.Popen([setup.apache, "-f", conf, "-DFOREGROUND"],
                                    stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=setup.env,
                                    start_new_session=True,
                                    preexec_fn=die_with_parent)
            if (wait_port(port, lambda: proc.poll() is None)
                    and wait_pidfile(os.path.join(d, "run", "httpd.pid"), proc,
                                     settle=0.2)):
                break
            stop_group(proc, signal.SIGTERM, "apache")
            out.close()
            errs = tail(os.path.join(d, "error.log")) + tail(
                os.path.join(d, "stdout.log"))
            if "Address already in use" in errs and attempt < 2:
                log("port %d taken, retrying" % port)
                proc = None
                continue
            raise Fail("apache failed to start (127.0.0.1:%d, policy %r).\n"
                       "--- error.log ---\n%s\n--- stdout/stderr ---\n%s" % (
                           port, policy, tail(os.path.join(d, "error.log")),
                           tail(os.path.join(d, "stdout.log"))))
        clients = []
        for c in PLAN:
            if proc.poll() is not None:
                raise Fail("apache died while running the plan (before client %s)"
                           ":\n%s" % (c["id"], tail(os.path.join(d, "error.log"))))
            clients.append(run_client(setup, c, port, deadline))
        stop_group(proc, signal.SIGTERM, "apache")
        proc = None
        os.makedirs(outdir, exist_ok=True)
        access = os.path.join(d, "access.log")
        if not os.path.exists(access):
            open(access, "wb").close()
        nlines = check_log(access, clients)
        shutil.copyfile(access, os.path.join(outdir, "access.log"))
        shutil.copyfile(os.path.join(d, "error.log"),
                        os.path.join(outdir, "apache-error.log"))
        nreq = sum(len(c["requests"]) for c in clients)
        doc = {
            "schema": SCHEMA,
            "generated_by": "scripts/tls-clients.py",
            "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "config": {"name": name, "directives": policy},
            "log_format": LOG_FORMAT,
            "log_format_nickname": LOG_NICK,
            "server": {"address": "127.0.0.1", "port": port,
                       "certificates": ["rsa2048", "ecdsa-p256"],
                       "openssl_conf": "minimal (no ssl_conf section)"},
            "versions": setup.versions,
            "summary": {
                "clients": len(clients),
                "connected": sum(1 for c in clients if c["connected"]),
                "refused": sum(1 for c in clients if not c["connected"]),
                "requests": nreq, "log_lines": nlines,
                "seconds": round(time.time() - t0, 2)},
            "clients": clients,
        }
        with open(os.path.join(outdir, "clients.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")
        return doc
    finally:
        stop_group(proc, signal.SIGTERM, "apache")
        if out is not None:
            out.close()


# ---------------------------------------------------------------------------
# self-test
# ---------------------------------------------------------------------------

def outcome(c):
    if c["connected"]:
        return "%s %s" % (c["protocol"], c["cipher"])
    return "refused (curl %d)" % c["exit_code"]


def preset_problems(name, doc):
    """What a preset run did differently from the plan (empty = as planned).
    permissive: every client connects with exactly its aimed protocol/cipher.
    strict: the "ok" clients connect with the aimed protocol/cipher, the
    "refused" ones fail the handshake with curl exit 35."""
    problems = []
    got = {c["id"]: c for c in doc["clients"]}
    for c in PLAN:
        x = got[c["id"]]
        aimed = (c["aimed"]["protocol"], c["aimed"]["cipher"])
        if not x["consistent"]:
            problems.append("%s/%s: the requests of one client behaved differently"
                            % (name, c["id"]))
        want_ok = name == "permissive" or c["strict"] == "ok"
        if want_ok:
            if not x["connected"]:
                problems.append("%s/%s: refused (curl %d: %s), expected %s %s" % (
                    name, c["id"], x["exit_code"], x["error"], *aimed))
            elif (x["protocol"], x["cipher"]) != aimed:
                problems.append("%s/%s: negotiated %s %s, aimed at %s %s" % (
                    name, c["id"], x["protocol"], x["cipher"], *aimed))
        elif x["connected"] or x["exit_code"] != 35:
            problems.append("%s/%s: expected a refusal with curl exit 35, got %s"
                            % (name, c["id"], outcome(x)))
    return problems


def selftest(setup, outdir):
    docs = {}
    for name in ("permissive", "strict"):
        docs[name] = run_config(setup, name, PRESETS[name], os.path.join(outdir, name))
    problems = preset_problems("permissive", docs["permissive"]) + \
        preset_problems("strict", docs["strict"])
    perm = {c["id"]: c for c in docs["permissive"]["clients"]}
    strict = {c["id"]: c for c in docs["strict"]["clients"]}
    w = [max(len(c["id"]) for c in PLAN), 7,
         max(len(outcome(perm[c["id"]])) for c in PLAN)]
    print("%-*s  %-*s  %-*s  %s" % (w[0], "client", w[1], "kind", w[2], "permissive",
                                    "strict"))
    for c in PLAN:
        print("%-*s  %-*s  %-*s  %s" % (w[0], c["id"], w[1], c["kind"], w[2],
                                        outcome(perm[c["id"]]),
                                        outcome(strict[c["id"]])))
    for name in ("permissive", "strict"):
        print("%-11s %s | %.1fs" % (name + ":", "; ".join(
            docs[name]["config"]["directives"]), docs[name]["summary"]["seconds"]))
    if problems:
        raise Fail("selftest failed:\n  " + "\n  ".join(problems))
    print("selftest OK: %d clients; %d refused under strict" % (
        len(PLAN), docs["strict"]["summary"]["refused"]))


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def preflight():
    missing = [t for t in ("apache2", "curl", "openssl") if not tool_path(t)]
    if missing:
        raise Fail("not found: %s (Debian packages: apache2 curl openssl)"
                   % ", ".join(missing))
    for mod in ("mod_ssl.so", "mod_mpm_prefork.so", "mod_socache_shmcb.so",
                "mod_authz_core.so", "mod_dir.so", "mod_mime.so"):
        if not os.path.exists(os.path.join(APACHE_MODULES, mod)):
            raise Fail("Apache module %s/%s missing (Debian package apache2-bin)"
                       % (APACHE_MODULES, mod))


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="tls-clients.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="See scripts/tls-clients.md for the client plan and clients.json.")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--preset", choices=sorted(PRESETS),
                   help="a built-in policy: " + " | ".join(
                       "%s = %s" % (k, "; ".join(v)) for k, v in PRESETS.items()))
    g.add_argument("--config", metavar="FILE",
                   help="file with mod_ssl policy directives, one per line "
                        "(# comments allowed), e.g. SSLProtocol / SSLCipherSuite / "
                        "SSLHonorCipherOrder / SSLOpenSSLConfCmd")
    g.add_argument("--selftest", action="store_true",
                   help="run the permissive and the strict preset, print a table, "
                        "fail unless every client behaves as planned")
    ap.add_argument("--protocol", metavar="'SSLProtocol ...'",
                    help="SSLProtocol directive (or just its value)")
    ap.add_argument("--ciphers", metavar="'SSLCipherSuite ...'",
                    help="SSLCipherSuite directive for TLS <= 1.2 (or its value)")
    ap.add_argument("--ciphers13", metavar="'SSLCipherSuite TLSv1.3 ...'",
                    help="TLS 1.3 suites (SSLCipherSuite TLSv1.3 ...; or the list)")
    ap.add_argument("--out", metavar="DIR",
                    help="output directory (required, except for --selftest "
                         "which then uses a temporary one; with --selftest "
                         "DIR/permissive and DIR/strict are written)")
    ap.add_argument("--keep-tmp", action="store_true",
                    help="keep the temporary server directory (for debugging)")
    args = ap.parse_args(argv)

    try:
        if args.selftest:
            if args.protocol or args.ciphers or args.ciphers13:
                raise Usage("--selftest takes no policy options")
        elif args.preset or args.config:
            if args.protocol or args.ciphers or args.ciphers13:
                raise Usage("--protocol/--ciphers/--ciphers13 cannot be combined "
                            "with --preset/--config")
        elif not (args.protocol and args.ciphers):
            raise Usage("give --protocol and --ciphers (and optionally --ciphers13), "
                        "or --config FILE, --preset NAME, or --selftest")
        if not args.selftest and not args.out:
            raise Usage("--out DIR is required")
        name, policy = (None, None) if args.selftest else policy_from_args(args)
    except Usage as e:
        ap.print_usage(sys.stderr)
        log("usage error: %s" % e)
        return 2

    t0 = time.time()
    tmp = None
    sel_out = None
    # turn SIGTERM/SIGHUP into an exception so `finally` stops Apache
    raise_on_termination(lambda signum: Terminated("received signal %d" % signum))
    try:
        preflight()
        tmp = tempfile.mkdtemp(prefix="tlsgap-tls-clients-")
        setup = Setup(tmp)
        if args.selftest:
            sel_out = args.out or os.path.join(tmp, "out")
            selftest(setup, sel_out)
        else:
            doc = run_config(setup, name, policy, args.out)
            if name in PRESETS:
                problems = preset_problems(name, doc)
                if problems:
                    raise Fail("preset %s did not behave as planned (files are in "
                               "%s):\n  %s" % (name, args.out, "\n  ".join(problems)))
            s = doc["summary"]
            print("%s: %d clients, %d connected, %d refused, %d log lines -> %s"
                  % (name, s["clients"], s["connected"], s["refused"],
                     s["log_lines"], args.out))
        print("done in %.1fs" % (time.time() - t0))
        return 0
    except Fail as e:
        log("error: %s" % e)
        return 1
    except (KeyboardInterrupt, Terminated) as e:
        log("interrupted (%s); Apache stopped, temporary files removed"
            % (e or "SIGINT"))
        return 1
    finally:
        if tmp:
            if args.keep_tmp:
                log("temporary directory kept: %s" % tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
