#!/usr/bin/env python3
"""Real TLS clients with distinct offers against a real nginx that logs what they offered.

Usage (run from anywhere; as root in CI, see scripts/tls-offers.md):

  python3 scripts/tls-offers.py --preset permissive --out DIR
  python3 scripts/tls-offers.py --policy-file F --out DIR
  python3 scripts/tls-offers.py --selftest [--out DIR]

The script

  * makes a throw-away directory with a self-signed RSA-2048 certificate,
    ffdhe2048 DH parameters and an EMPTY OpenSSL config (OPENSSL_CONF for
    nginx and every client, so the host's openssl.cnf cannot change the
    outcome),
  * starts nginx (master + 1 worker) on 127.0.0.1: a TLS port and a plain
    port, both free high ports, with the policy's directives put verbatim
    into the server block (the text `/path/to/dhparam` becomes the generated
    DH parameter file), and two access logs: access.log in the `offers`
    format (nginx-ssl-full plus $ssl_curve) and access-full.log in tlsgap's
    `nginx-ssl-full` preset,
  * runs the FIXED client plan below, in sequence: curl, openssl s_client,
    Python's ssl module and (when installed) headless Chromium; every request
    goes to its own path /c/<request-id>, so each log line names its client,
  * stops nginx by PID and writes DIR/access.log, DIR/access-full.log,
    DIR/error.log and DIR/plan.json (what each client offered, what it saw,
    what nginx logged for it).

Exit status: 0 = the plan ran and the logs agree with the clients (a failed
handshake is a result, not an error); 1 = a step failed (the message names
it); 2 = usage.  Only the Python standard library is used.  Nothing binds
outside 127.0.0.1.
"""

import argparse
import json
import os
import re
import shutil
import signal
import ssl
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import (  # noqa: E402  (needs the sys.path entry above)
    Fail, fix_perms, free_port, host_versions, log, make_cert,
    raise_on_termination, run, set_prog, stop_group, tail, tool_path,
    wait_pidfile, wait_port, write_conf)

PROG = "tls-offers"
set_prog(PROG)
SCHEMA = "tlsgap-tls-offers/1"
SCRIPT = os.path.abspath(__file__)

# The access log the tests read: tlsgap's nginx-ssl-full preset with the
# negotiated group ($ssl_curve) between the offered groups and the reuse flag.
LOG_NAME = "offers"
LOG_FORMAT = ('$remote_addr - $remote_user [$time_local] "$request" $status '
              '$body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol '
              '$ssl_cipher "$ssl_ciphers" "$ssl_curves" $ssl_curve '
              '$ssl_session_reused $ssl_server_name')
# Exactly tlsgap's preset of that name (crates/parser/src/format.rs).
FULL_NAME = "nginx-ssl-full"
FULL_FORMAT = ('$remote_addr - $remote_user [$time_local] "$request" $status '
               '$body_bytes_sent "$http_referer" "$http_user_agent" $ssl_protocol '
               '$ssl_cipher "$ssl_ciphers" "$ssl_curves" $ssl_session_reused '
               '$ssl_server_name')

DHPARAM = "/path/to/dhparam"

# Every group OpenSSL 3.0 can negotiate: the default list ("auto") plus the
# brainpool curves (TLS 1.2 only in 3.0), so that a client restricted to any
# one of them still connects and gets its offer logged.
ALL_GROUPS = ("X25519:prime256v1:X448:secp521r1:secp384r1:brainpoolP256r1:"
              "brainpoolP384r1:brainpoolP512r1:ffdhe2048:ffdhe3072:ffdhe4096:"
              "ffdhe6144:ffdhe8192")
ALL_TLS13 = ("TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
             "TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256")

PRESETS = {
    # Every client of the plan that can talk to an RSA certificate connects:
    # TLSv1..1.3, every suite at security level 0 (anonymous ones too), DHE
    # (nginx 1.22 needs ssl_dhparam for it), every group, the CCM TLS 1.3
    # suites that OpenSSL leaves out by default.
    "permissive": (
        "ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;\n"
        "ssl_ciphers ALL:@SECLEVEL=0;\n"
        "ssl_ecdh_curve %s;\n"
        "ssl_dhparam %s;\n"
        "ssl_conf_command Ciphersuites %s;\n" % (ALL_GROUPS, DHPARAM, ALL_TLS13)),
}

# Strict policies that --selftest runs besides the permissive preset.
SELFTEST_POLICIES = {
    "tls12-13-ecdhe-aesgcm-p384": (
        "ssl_protocols TLSv1.2 TLSv1.3;\n"
        "ssl_ciphers ECDHE+AESGCM;\n"
        "ssl_prefer_server_ciphers on;\n"
        "ssl_ecdh_curve secp384r1;\n"),
    "tls13-only": "ssl_protocols TLSv1.3;\n",
}

# Directives the script sets itself (or that would move the server).
RESERVED = {"listen", "server_name", "root", "location", "access_log", "error_log",
            "log_format", "ssl_certificate", "ssl_certificate_key", "return",
            "include", "server", "http", "events", "user", "pid", "ssl"}

SECLEVEL0 = ":@SECLEVEL=0"
CLIENT_TIMEOUT = 15          # seconds per client process
RUN_DEADLINE = 120           # seconds per server run
START_ATTEMPTS = 3

# Replaces /etc/ssl/openssl.cnf for nginx, curl, openssl(1) and Python.
OPENSSL_CNF = """\
# written by scripts/tls-offers.py; used instead of the system openssl.cnf
# (via OPENSSL_CONF).  Deliberately empty: no ssl_conf / system_default
# section, so no host-wide MinProtocol or CipherString applies; only the
# library's built-in defaults (Debian: security level 2), the policy and the
# clients' own options decide.
"""

# ---------------------------------------------------------------------------
# the client plan (FIXED: tests rely on the ids)
# ---------------------------------------------------------------------------


def C(cid, tool, note, aim, resume=False, **opts):
    """One client.  tool: curl | s_client | python | chromium.
    aim: (protocol, cipher) it negotiates under the permissive preset, or None
    when it fails there too.  resume: a second connection resumes the
    first one's session (request ids <id> and <id>/resumed).
    opts (all optional): tls_min, tls_max ("1.0".."1.3"), ciphers (TLS <= 1.2
    cipher string), tls13 (TLS 1.3 suites), groups, extra (more tool args)."""
    return {"id": cid, "tool": tool, "note": note,
            "aim": {"protocol": aim[0], "cipher": aim[1]} if aim else None,
            "resume": resume, "opts": opts}


PLAN = [
    # --- curl ---------------------------------------------------------------
    C("curl-default", "curl", "curl's own defaults (TLS 1.2-1.3, full lists)",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384")),
    C("curl-tls12-default", "curl", "TLS 1.2 only, curl's default TLS 1.2 list",
      ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"), tls_min="1.2", tls_max="1.2"),
    C("curl-cbc-sha1", "curl", "TLS 1.2 only, CBC suites with SHA-1 MACs",
      ("TLSv1.2", "ECDHE-RSA-AES128-SHA"), tls_min="1.2", tls_max="1.2",
      ciphers="ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:AES128-SHA:AES256-SHA"),
    C("curl-ecdhe-rsa-aes256-sha", "curl", "TLS 1.2 only, the one suite ECDHE-RSA-AES256-SHA",
      ("TLSv1.2", "ECDHE-RSA-AES256-SHA"), tls_min="1.2", tls_max="1.2",
      ciphers="ECDHE-RSA-AES256-SHA"),
    C("curl-rsa-kx", "curl", "TLS 1.2 only, plain RSA key exchange only",
      ("TLSv1.2", "AES128-GCM-SHA256"), tls_min="1.2", tls_max="1.2",
      ciphers="AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA256:AES128-SHA"),
    C("curl-dhe-only", "curl", "TLS 1.2 only, DHE suites only",
      ("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256"), tls_min="1.2", tls_max="1.2",
      ciphers="DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384"),
    C("curl-secp521r1-only", "curl", "default suites, groups: secp521r1 only",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), groups="secp521r1"),
    C("curl-x448-only", "curl", "default suites, groups: X448 only",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), groups="X448"),
    C("curl-ffdhe2048-only", "curl", "default suites, groups: ffdhe2048 only",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), groups="ffdhe2048"),
    C("curl-tls12-p521-x448", "curl",
      "TLS 1.2 only, ECDHE-RSA AES-GCM, groups secp521r1 then X448",
      ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), tls_min="1.2", tls_max="1.2",
      ciphers="ECDHE-RSA-AES128-GCM-SHA256", groups="secp521r1:X448"),
    C("curl-tls13-chacha", "curl", "TLS 1.3 only, TLS_CHACHA20_POLY1305_SHA256 only",
      ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"), tls_min="1.3",
      tls13="TLS_CHACHA20_POLY1305_SHA256"),
    C("curl-tls13-aes128", "curl", "TLS 1.3 only, TLS_AES_128_GCM_SHA256 only",
      ("TLSv1.3", "TLS_AES_128_GCM_SHA256"), tls_min="1.3",
      tls13="TLS_AES_128_GCM_SHA256"),
    C("curl-tls13-ccm", "curl",
      "TLS 1.3 only, TLS_AES_128_CCM_SHA256 only (not in OpenSSL's default list)",
      ("TLSv1.3", "TLS_AES_128_CCM_SHA256"), tls_min="1.3",
      tls13="TLS_AES_128_CCM_SHA256"),
    C("curl-tls11", "curl", "TLS 1.1 only, ECDHE-RSA and RSA CBC suites, client @SECLEVEL=0",
      ("TLSv1.1", "ECDHE-RSA-AES128-SHA"), tls_min="1.1", tls_max="1.1",
      ciphers="ECDHE-RSA-AES128-SHA:AES128-SHA" + SECLEVEL0),
    C("curl-sni", "curl", "defaults, with SNI localhost (--resolve)",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), sni="localhost"),
    C("curl-resume", "curl", "defaults, two URLs in one run: TLS 1.3 PSK resumption",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), resume=True),
    C("curl-resume-tls12", "curl",
      "TLS 1.2 max, two URLs in one run: session ticket resumption",
      ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"), resume=True, tls_max="1.2"),
    # --- openssl s_client ---------------------------------------------------
    C("s_client-tls1", "s_client", "TLS 1.0 only, ECDHE-RSA and RSA CBC, client @SECLEVEL=0",
      ("TLSv1", "ECDHE-RSA-AES128-SHA"), tls_min="1.0", tls_max="1.0",
      ciphers="ECDHE-RSA-AES128-SHA:AES128-SHA" + SECLEVEL0),
    C("s_client-tls1-rsa", "s_client",
      "TLS 1.0 only, AES256-SHA only (no supported_groups extension)",
      ("TLSv1", "AES256-SHA"), tls_min="1.0", tls_max="1.0",
      ciphers="AES256-SHA" + SECLEVEL0),
    C("s_client-client-order", "s_client",
      "TLS 1.2, prefers AES128-SHA over the ECDHE AES-GCM suites",
      ("TLSv1.2", "AES128-SHA"), tls_min="1.2", tls_max="1.2",
      ciphers="AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:"
              "ECDHE-RSA-CHACHA20-POLY1305"),
    C("s_client-tls12-group-order", "s_client",
      "TLS 1.2, one suite, groups secp521r1 then prime256v1 (server preference decides)",
      ("TLSv1.2", "ECDHE-RSA-AES128-GCM-SHA256"), tls_min="1.2", tls_max="1.2",
      ciphers="ECDHE-RSA-AES128-GCM-SHA256", groups="secp521r1:prime256v1"),
    C("s_client-tls13-p384-first", "s_client",
      "TLS 1.3, groups secp384r1 then X25519 (key share secp384r1)",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), tls_min="1.3", groups="secp384r1:X25519"),
    C("s_client-tls13-hrr", "s_client",
      "TLS 1.3, groups X448, secp521r1, prime256v1: a server without X448 asks "
      "for another key share (HelloRetryRequest)",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), tls_min="1.3",
      groups="X448:secp521r1:prime256v1"),
    C("s_client-ecdsa-only", "s_client",
      "TLS 1.2, ECDHE-ECDSA suites only: no RSA suite for an RSA certificate",
      None, tls_min="1.2", tls_max="1.2",
      ciphers="ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-SHA"),
    C("s_client-ecdsa-first", "s_client",
      "TLS 1.2, ECDHE-ECDSA suites first, then ECDHE-RSA CBC",
      ("TLSv1.2", "ECDHE-RSA-AES256-SHA384"), tls_min="1.2", tls_max="1.2",
      ciphers="ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:"
              "ECDHE-RSA-AES256-SHA384"),
    C("s_client-brainpool", "s_client", "TLS 1.2, groups: brainpoolP256r1 only",
      ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"), tls_min="1.2", tls_max="1.2",
      groups="brainpoolP256r1"),
    C("s_client-anon", "s_client",
      "TLS 1.2, anonymous suites only (aNULL), client @SECLEVEL=0",
      ("TLSv1.2", "AECDH-AES128-SHA"), tls_min="1.2", tls_max="1.2",
      ciphers="AECDH-AES128-SHA:ADH-AES128-GCM-SHA256" + SECLEVEL0),
    C("s_client-fallback-scsv", "s_client",
      "TLS 1.2 max with TLS_FALLBACK_SCSV: refused by any server that has TLS 1.3",
      None, tls_max="1.2", extra=["-fallback_scsv"]),
    C("s_client-resume-sid", "s_client",
      "TLS 1.2, no tickets: session id resumption (-sess_out, then -sess_in)",
      ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"), resume=True, tls_min="1.2",
      tls_max="1.2", extra=["-no_ticket"]),
    C("s_client-resume-psk", "s_client",
      "TLS 1.3: PSK resumption from the ticket (-sess_out, then -sess_in)",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384"), resume=True, tls_min="1.3"),
    # --- Python ssl -----------------------------------------------------------
    C("python-default", "python",
      "ssl.create_default_context() (Python's own cipher string), no verification",
      ("TLSv1.3", "TLS_AES_256_GCM_SHA384")),
    C("python-tls12-p384", "python",
      "TLS 1.2 only, two ECDHE-RSA AES-GCM suites, set_ecdh_curve('secp384r1')",
      ("TLSv1.2", "ECDHE-RSA-AES256-GCM-SHA384"), tls_min="1.2", tls_max="1.2",
      ciphers="ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256",
      groups="secp384r1"),
    C("python-tls12-sha256-cbc", "python",
      "TLS 1.2 only, SHA-256 CBC suites only",
      ("TLSv1.2", "ECDHE-RSA-AES128-SHA256"), tls_min="1.2", tls_max="1.2",
      ciphers="ECDHE-RSA-AES128-SHA256:AES256-SHA256"),
    # --- a real browser -------------------------------------------------------
    C("chromium", "chromium",
      "headless Chromium: GREASE values and X25519MLKEM768 appear in hex",
      ("TLSv1.3", "TLS_AES_128_GCM_SHA256")),
]

# A request over plain HTTP (second listen port), to show what nginx logs then.
PLAIN_ID = "curl-plain"

VERSION_FLAG = {"1.0": "-tls1", "1.1": "-tls1_1", "1.2": "-tls1_2", "1.3": "-tls1_3"}
PY_VERSION = {"1.0": "TLSv1", "1.1": "TLSv1_1", "1.2": "TLSv1_2", "1.3": "TLSv1_3"}


def user_agent(cid):
    return "tls-offers/%s" % cid


def request_ids(c):
    return [c["id"], c["id"] + "/resumed"] if c["resume"] else [c["id"]]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


class Usage(Exception):
    pass


class Terminated(Exception):
    pass


def die_with_parent():
    """In the child before exec: SIGTERM nginx if this script dies without
    cleaning up (SIGKILL).  Linux only; the `finally` blocks cover the rest."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)   # PR_SET_PDEATHSIG
    except Exception:
        pass


def first_line_of(cmd, env):
    r = run(cmd, step="versions", env=env)
    return (r.stdout + r.stderr).decode(errors="replace").strip().splitlines()[0]


# ---------------------------------------------------------------------------
# policy
# ---------------------------------------------------------------------------


def check_policy(text, where):
    """The policy is nginx directive text for the server block: statements
    ending in `;`, `#` comments; no blocks, no directive the script sets."""
    if "\0" in text:
        raise Usage("%s: NUL byte in the policy" % where)
    body = "\n".join(l.split("#", 1)[0] for l in text.splitlines())
    if "{" in body or "}" in body:
        raise Usage("%s: blocks ({...}) are not allowed in a policy" % where)
    stmts = [s.strip() for s in body.split(";")]
    if stmts and stmts[-1]:
        raise Usage("%s: the last directive does not end with ';': %r"
                    % (where, stmts[-1]))
    stmts = [s for s in stmts if s]
    if not stmts:
        raise Usage("%s: the policy holds no directive" % where)
    for s in stmts:
        word = s.split(None, 1)[0]
        if word.lower() in RESERVED:
            raise Usage("%s: %s is set by the script itself" % (where, word))
    return text


# ---------------------------------------------------------------------------
# setup
# ---------------------------------------------------------------------------


class Setup:
    """Files and tools shared by every server run of one invocation."""

    def __init__(self, tmp, chromium):
        self.tmp = tmp
        os.chmod(tmp, 0o755)
        self.root = os.geteuid() == 0
        self.openssl_cnf = os.path.join(tmp, "openssl.cnf")
        with open(self.openssl_cnf, "w") as f:
            f.write(OPENSSL_CNF)
        env = dict(os.environ)
        env["OPENSSL_CONF"] = self.openssl_cnf
        for k in ("SSLKEYLOGFILE", "CURL_CA_BUNDLE", "SSL_CERT_FILE", "SSL_CERT_DIR",
                  "http_proxy", "https_proxy", "HTTPS_PROXY", "ALL_PROXY",
                  "all_proxy", "no_proxy", "NO_PROXY", "CURL_HOME"):
            env.pop(k, None)
        env["LC_ALL"] = "C"
        self.env = env
        self.nginx = tool_path("nginx")
        self.openssl = tool_path("openssl")
        self.curl = tool_path("curl")
        self.chromium = chromium
        self.cert = os.path.join(tmp, "rsa-cert.pem")
        self.key = os.path.join(tmp, "rsa-key.pem")
        make_cert(self.openssl, self.cert, self.key, kind="rsa",
                  what="openssl req (RSA-2048 certificate)", env=env)
        self.dhparam = os.path.join(tmp, "dhparam.pem")
        r = run([self.openssl, "genpkey", "-genparam", "-algorithm", "DH",
                 "-pkeyopt", "dh_param:ffdhe2048", "-out", self.dhparam],
                step="DH parameters", env=env)
        if r.returncode != 0:
            raise Fail("openssl genpkey (DH ffdhe2048) failed:\n%s"
                       % r.stderr.decode(errors="replace"))
        fix_perms(tmp)
        self.versions = host_versions({
            "nginx": first_line_of([self.nginx, "-v"], env).replace(
                "nginx version: ", ""),
            "openssl": " ".join(first_line_of([self.openssl, "version"], env).split()[:2]),
            "curl": " ".join(first_line_of([self.curl, "--version"], env).split()[:2]),
            "python_ssl": ssl.OPENSSL_VERSION,
        })
        if chromium:
            self.versions["chromium"] = first_line_of([chromium, "--version"], env)


def nginx_conf(setup, d, port, plain_port, policy):
    L = ["# generated by scripts/tls-offers.py"]
    if setup.root:
        L.append("user www-data www-data;")
    L += ["worker_processes 1;", "daemon off;", "master_process on;",
          "pid %s/nginx.pid;" % d,
          "error_log %s/error.log info;" % d,
          "events { worker_connections 64; }",
          "http {",
          "  default_type text/plain;",
          "  keepalive_timeout 0;",
          # session id resumption needs a cache; a policy may override it
          "  ssl_session_cache shared:tlsoffers:1m;"]
    for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(d, "tmp", sub), exist_ok=True)
        L.append("  %s_temp_path %s/tmp/%s;" % (sub, d, sub))
    L += ["  log_format %s '%s';" % (LOG_NAME, LOG_FORMAT),
          "  log_format %s '%s';" % (FULL_NAME, FULL_FORMAT),
          "  server {",
          "    listen 127.0.0.1:%d ssl;" % port,
          "    listen 127.0.0.1:%d;" % plain_port,
          "    server_name localhost;",
          "    root %s/www;" % d,
          "    access_log %s/access.log %s;" % (d, LOG_NAME),
          "    access_log %s/access-full.log %s;" % (d, FULL_NAME),
          "    ssl_certificate %s;" % setup.cert,
          "    ssl_certificate_key %s;" % setup.key,
          "    location /c/ { return 200 \"ok $uri\\n\"; }",
          # Chromium asks for it; keep it out of the logs
          "    location = /favicon.ico { access_log off; return 204; }",
          "    # --- policy under test (verbatim) ---"]
    for line in policy.replace(DHPARAM, setup.dhparam).splitlines():
        L.append("    " + line)
    L += ["    # --- end of policy ---", "  }", "}"]
    return write_conf(os.path.join(d, "nginx.conf"), L)


class Server:
    def __init__(self, proc, port, plain_port, d, out):
        self.proc, self.port, self.plain_port, self.d, self.out = (
            proc, port, plain_port, d, out)


def start_nginx(setup, name, policy):
    d = tempfile.mkdtemp(prefix="nginx-%s-" % name, dir=setup.tmp)
    os.chmod(d, 0o755)
    for attempt in range(START_ATTEMPTS):
        port, plain_port = free_port(), free_port()
        if port == plain_port:
            continue
        conf = nginx_conf(setup, d, port, plain_port, policy)
        base = [setup.nginx, "-c", conf, "-p", d + "/", "-e", d + "/error.log"]
        r = run(base + ["-t", "-q"], step="nginx -t", env=setup.env)
        if r.returncode != 0:
            raise Fail("nginx rejects the configuration (policy %s):\n%s\n%s" % (
                name, (r.stderr + r.stdout).decode(errors="replace").strip(),
                policy.strip()))
        errlog = os.path.join(d, "error.log")
        if os.path.exists(errlog):
            os.unlink(errlog)
        out = open(os.path.join(d, "stdout.log"), "wb")
        proc = subprocess.Popen(base, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=setup.env,
                                start_new_session=True, preexec_fn=die_with_parent)
        if (wait_port(port, lambda: proc.poll() is None)
                and wait_pidfile(os.path.join(d, "nginx.pid"), proc, settle=0.2)):
            return Server(proc, port, plain_port, d, out)
        stop_group(proc, signal.SIGQUIT, "nginx")
        out.close()
        text = tail(errlog) + "\n" + tail(os.path.join(d, "stdout.log"))
        if "Address already in use" in text and attempt < START_ATTEMPTS - 1:
            log("port %d or %d taken, retrying" % (port, plain_port))
            continue
        raise Fail("nginx failed to start (policy %s):\n%s" % (name, text))
    raise Fail("nginx: no free port pair after %d attempts" % START_ATTEMPTS)


def stop_nginx(s):
    if s is not None:
        stop_group(s.proc, signal.SIGQUIT, "nginx")   # graceful: finishes requests
        s.out.close()


# ---------------------------------------------------------------------------
# clients
# ---------------------------------------------------------------------------

CURL_USING = re.compile(r"SSL connection using (\S+) / (\S+)")
CURL_REUSE = re.compile(r"SSL re-using session ID")
S_PROTOCOL = re.compile(r"^\s*Protocol\s*:\s*(\S+)", re.M)
S_CIPHER = re.compile(r"^\s*Cipher\s*:\s*(\S+)", re.M)
S_NEW = re.compile(r"^(New|Reused), ", re.M)
S_TEMPKEY = re.compile(r"^Server Temp Key: (.+)$", re.M)
HTTP_STATUS = re.compile(r"^HTTP/1\.[01] (\d{3})", re.M)


def result(rid, cmd, **kw):
    r = {"id": rid, "path": "/c/" + rid, "command": cmd, "ok": False,
         "http_status": None, "exit_code": None, "error": None,
         "protocol": None, "cipher": None, "group": None, "reused": None}
    r.update(kw)
    return r


def curl_tls_args(o):
    a = []
    if o.get("tls_min"):
        a += ["--tlsv" + o["tls_min"]]
    if o.get("tls_max"):
        a += ["--tls-max", o["tls_max"]]
    if o.get("ciphers"):
        a += ["--ciphers", o["ciphers"]]
    if o.get("tls13"):
        a += ["--tls13-ciphers", o["tls13"]]
    if o.get("groups"):
        a += ["--curves", o["groups"]]
    return a


def run_curl(setup, c, srv):
    o = c["opts"]
    host = o.get("sni") or "127.0.0.1"
    cmd = [setup.curl, "-q", "-sS", "-v", "--noproxy", "*", "-k", "--http1.1",
           "--connect-timeout", "5", "--max-time", "10",
           "-H", "User-Agent: " + user_agent(c["id"]), "-H", "Connection: close",
           "-w", "%{json}\\n"]
    if o.get("sni"):
        cmd += ["--resolve", "%s:%d:127.0.0.1" % (host, srv.port)]
    cmd += curl_tls_args(o)
    rids = request_ids(c)
    for rid in rids:
        cmd += ["-o", "/dev/null", "https://%s:%d/c/%s" % (host, srv.port, rid)]
    r = run(cmd, step="curl (%s)" % c["id"], env=setup.env, timeout=CLIENT_TIMEOUT)
    err = r.stderr.decode("utf-8", "replace")
    ws = []
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        try:
            ws.append(json.loads(line))
        except ValueError:
            pass
    using = CURL_USING.findall(err)
    # curl prints one "SSL connection using" per handshake and one
    # "re-using session ID" before a resumed one
    chunks = re.split(r"(?=\* +Trying 127\.0\.0\.1)", err)
    chunks = [ch for ch in chunks if "Trying 127.0.0.1" in ch]
    out = []
    for i, rid in enumerate(rids):
        w = ws[i] if i < len(ws) else {}
        status = w.get("http_code") or None
        ok = status == 200
        res = result(rid, cmd, ok=ok, http_status=status,
                     exit_code=w.get("exitcode", r.returncode),
                     error=(w.get("errormsg") or None) if not ok else None)
        ch = chunks[i] if i < len(chunks) else ""
        m = CURL_USING.search(ch)
        if ok and m:
            res["protocol"], res["cipher"] = m.group(1), m.group(2)
            res["reused"] = bool(CURL_REUSE.search(ch))
        elif ok:
            raise Fail("curl (%s) got HTTP 200 but printed no TLS session:\n%s"
                       % (rid, err[-2000:]))
        if not ok and res["error"] is None:
            res["error"] = (err.strip().splitlines() or ["?"])[-1]
        out.append(res)
    if len(using) > len(rids):
        raise Fail("curl (%s) made more handshakes than requests:\n%s"
                   % (c["id"], err[-2000:]))
    return out


def s_client_args(o):
    a = []
    if o.get("tls_min") and o.get("tls_min") == o.get("tls_max"):
        a += [VERSION_FLAG[o["tls_min"]]]
    else:
        if o.get("tls_min"):
            a += ["-min_protocol", "TLSv" + o["tls_min"].replace("1.0", "1")]
        if o.get("tls_max"):
            a += ["-max_protocol", "TLSv" + o["tls_max"].replace("1.0", "1")]
    if o.get("ciphers"):
        a += ["-cipher", o["ciphers"]]
    if o.get("tls13"):
        a += ["-ciphersuites", o["tls13"]]
    if o.get("groups"):
        a += ["-groups", o["groups"]]
    return a + list(o.get("extra", []))


def run_s_client(setup, c, srv):
    o = c["opts"]
    sess = os.path.join(srv.d, "%s.sess" % c["id"])
    out = []
    for i, rid in enumerate(request_ids(c)):
        cmd = [setup.openssl, "s_client", "-connect", "127.0.0.1:%d" % srv.port,
               "-ign_eof"]
        cmd += s_client_args(o)
        if o.get("sni"):
            cmd += ["-servername", o["sni"]]
        else:
            cmd += ["-noservername"]
        resumed_from = None
        if c["resume"] and i == 0:
            cmd += ["-sess_out", sess]
        elif c["resume"] and os.path.exists(sess):
            cmd += ["-sess_in", sess]
            resumed_from = c["id"]
        req = ("GET /c/%s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: %s\r\n"
               "Connection: close\r\n\r\n" % (rid, user_agent(c["id"])))
        try:
            p = subprocess.run(cmd, input=req.encode(), capture_output=True,
                               timeout=CLIENT_TIMEOUT, env=setup.env)
        except subprocess.TimeoutExpired:
            raise Fail("openssl s_client (%s) timed out" % rid)
        text = p.stdout.decode("utf-8", "replace")
        err = p.stderr.decode("utf-8", "replace")
        m = HTTP_STATUS.search(text)
        status = int(m.group(1)) if m else None
        ok = status == 200
        res = result(rid, cmd, ok=ok, http_status=status, exit_code=p.returncode,
                     stdin=req)
        if c["resume"] and i > 0:
            res["resumption_attempted"] = resumed_from is not None
        if ok:
            # "New, TLSv1.2, Cipher is X" names the suite's minimum version,
            # not the protocol: the SSL-Session block has the protocol.
            mp, mc, mn = S_PROTOCOL.search(text), S_CIPHER.search(text), S_NEW.search(text)
            if not (mp and mc and mn):
                raise Fail("openssl s_client (%s) got HTTP 200 but printed no "
                           "session:\n%s" % (rid, text[-2000:]))
            res["protocol"], res["cipher"] = mp.group(1), mc.group(1)
            res["reused"] = mn.group(1) == "Reused"
            mk = S_TEMPKEY.search(text)
            res["group"] = mk.group(1) if mk else None
        else:
            lines = [l for l in err.splitlines() if ":error:" in l]
            res["error"] = (lines or err.strip().splitlines() or ["?"])[-1][:300]
        out.append(res)
    return out


def run_python(setup, c, srv):
    spec = dict(c["opts"], port=srv.port, path="/c/" + c["id"],
                user_agent=user_agent(c["id"]))
    cmd = [sys.executable, SCRIPT, "--python-client", json.dumps(spec, sort_keys=True)]
    r = run(cmd, step="python client (%s)" % c["id"], env=setup.env,
            timeout=CLIENT_TIMEOUT)
    try:
        got = json.loads(r.stdout.decode("utf-8", "replace"))
    except ValueError:
        raise Fail("python client (%s) printed no JSON (exit %d):\n%s" % (
            c["id"], r.returncode, r.stderr.decode(errors="replace")[-2000:]))
    return [result(c["id"], cmd, ok=got["http_status"] == 200,
                   http_status=got["http_status"], exit_code=r.returncode,
                   error=got["error"], protocol=got["protocol"],
                   cipher=got["cipher"], reused=got["reused"])]


def python_client(spec):
    """The Python client itself (run in a child by --python-client): one
    request over a restricted SSLContext; prints a JSON result."""
    res = {"http_status": None, "protocol": None, "cipher": None, "reused": None,
           "error": None}
    try:
        if spec.get("tls_min") or spec.get("ciphers") or spec.get("groups"):
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        else:
            ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        if spec.get("tls_min"):
            ctx.minimum_version = getattr(ssl.TLSVersion, PY_VERSION[spec["tls_min"]])
        if spec.get("tls_max"):
            ctx.maximum_version = getattr(ssl.TLSVersion, PY_VERSION[spec["tls_max"]])
        if spec.get("ciphers"):
            ctx.set_ciphers(spec["ciphers"])
        if spec.get("groups"):
            ctx.set_ecdh_curve(spec["groups"])
        with socket.create_connection(("127.0.0.1", spec["port"]), timeout=10) as raw:
            with ctx.wrap_socket(raw, server_hostname=spec.get("sni")) as s:
                res["protocol"] = s.version()
                res["cipher"] = s.cipher()[0]
                res["reused"] = s.session_reused
                s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: %s\r\n"
                           "Connection: close\r\n\r\n" % (
                               spec["path"], spec["user_agent"])).encode())
                data = b""
                while True:
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    data += chunk
        m = HTTP_STATUS.search(data.decode("latin-1"))
        res["http_status"] = int(m.group(1)) if m else None
    except (ssl.SSLError, OSError) as e:
        res["error"] = "%s: %s" % (type(e).__name__, e)
    if res["http_status"] != 200:
        res["protocol"] = res["cipher"] = res["reused"] = None
    # Python names TLS 1.0 "TLSv1", like nginx
    print(json.dumps(res))
    return 0


def run_chromium(setup, c, srv):
    prof = tempfile.mkdtemp(prefix="chromium-", dir=srv.d)
    url = "https://127.0.0.1:%d/c/%s" % (srv.port, c["id"])
    cmd = [setup.chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
           "--ignore-certificate-errors", "--no-first-run",
           "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-default-apps", "--disable-extensions",
           "--user-data-dir=" + prof, "--dump-dom", url]
    try:
        r = run(cmd, step="chromium", env=setup.env, timeout=40)
    finally:
        shutil.rmtree(prof, ignore_errors=True)
    body = r.stdout.decode("utf-8", "replace")
    ok = ("ok /c/%s" % c["id"]) in body
    # Chromium does not say what it negotiated; the log does (check_log)
    return [result(c["id"], [x if not x.startswith("--user-data-dir=")
                             else "--user-data-dir=TMP" for x in cmd],
                   ok=ok, http_status=200 if ok else None, exit_code=r.returncode,
                   error=None if ok else (r.stderr.decode(errors="replace")
                                          .strip().splitlines() or ["?"])[-1][:300])]


def run_plain(setup, srv):
    cmd = [setup.curl, "-q", "-sS", "--noproxy", "*", "--http1.1", "--max-time", "10",
           "-H", "User-Agent: " + user_agent(PLAIN_ID), "-o", "/dev/null",
           "-w", "%{http_code}", "http://127.0.0.1:%d/c/%s" % (srv.plain_port, PLAIN_ID)]
    r = run(cmd, step="curl (plain)", env=setup.env, timeout=CLIENT_TIMEOUT)
    status = int(r.stdout or b"0") or None
    if status != 200:
        raise Fail("plain HTTP request failed (curl exit %d): %s"
                   % (r.returncode, r.stderr.decode(errors="replace")))
    return result(PLAIN_ID, cmd, ok=True, http_status=200, exit_code=r.returncode)


RUNNERS = {"curl": run_curl, "s_client": run_s_client, "python": run_python,
           "chromium": run_chromium}


# ---------------------------------------------------------------------------
# access logs
# ---------------------------------------------------------------------------

Q = r'"((?:[^"\\]|\\.)*)"'
OFFERS_LINE = re.compile(
    r"^(\S+) - (\S+) \[([^\]]+)\] " + Q + r" (\d{3}) (\S+) " + Q + " " + Q +
    r" (\S+) (\S+) " + Q + " " + Q + r" (\S+) (\S+) (\S+)$")
FIELDS = ["protocol", "cipher", "ciphers", "curves", "curve", "session_reused",
          "server_name"]


def parse_offers_log(path):
    """-> [(line number, request path, {field: logged value})]"""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        raise Fail("%s does not end with a newline" % path)
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        m = OFFERS_LINE.match(raw)
        if not m:
            raise Fail("%s line %d does not match the %s format: %r"
                       % (os.path.basename(path), n, LOG_NAME, raw))
        req = m.group(4).split(" ")
        if len(req) != 3 or not req[1].startswith("/c/"):
            raise Fail("%s line %d is from no client of the plan: %r"
                       % (os.path.basename(path), n, raw))
        out.append((n, req[1], dict(zip(FIELDS, m.groups()[8:15]))))
    return out


ERR_PREFIX = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(\w+)\] \d+#\d+: (\*\d+ )?")


def new_error_lines(path, offset, wait):
    """nginx's error.log lines written since `offset` (its size before a
    client ran), without time stamp, pid and connection number, and without
    the `client closed keepalive connection` chatter.  nginx writes the
    reason for a failed handshake right after the alert; when the client
    failed, wait up to 0.5 s for it so that it is not put on the next client."""
    deadline = time.time() + (0.5 if wait else 0)
    while True:
        with open(path, "rb") as f:
            f.seek(offset)
            text = f.read().decode("utf-8", "replace")
        lines = []
        for l in text.splitlines():
            m = ERR_PREFIX.match(l)
            msg = l[m.end():] if m else l
            if "closed keepalive connection" in msg:
                continue
            msg = re.sub(r", client: 127\.0\.0\.1, server: [\d.:]+$", "", msg)
            lines.append(("[%s] " % m.group(1) if m else "") + msg)
        if lines or time.time() >= deadline:
            return lines
        time.sleep(0.05)


def wait_log_lines(path, n, timeout=5.0):
    """nginx writes the line after the response has gone out: wait for it."""
    deadline = time.time() + timeout
    while True:
        try:
            with open(path, "rb") as f:
                have = f.read().count(b"\n")
        except FileNotFoundError:
            have = 0
        if have >= n or time.time() > deadline:
            return
        time.sleep(0.05)


def check_log(path, requests):
    """Every successful request has exactly one line with its path; a failed
    one has none; protocol and cipher agree with what the client saw (when it
    says); the line's values go into the request's `logged`."""
    byid = {r["path"]: r for r in requests}
    seen = {}
    for n, path_, fields in parse_offers_log(path):
        r = byid.get(path_)
        if r is None:
            raise Fail("access.log line %d: %s is no request of the plan" % (n, path_))
        if path_ in seen:
            raise Fail("access.log: %s logged twice (lines %d and %d)"
                       % (path_, seen[path_], n))
        seen[path_] = n
        if not r["ok"]:
            raise Fail("access.log line %d: request %s failed on the client side "
                       "(%s) but nginx logged it" % (n, r["id"], r["error"]))
        r["log_line"] = n
        r["logged"] = fields
        if r["id"] == PLAIN_ID:
            continue
        for k in ("protocol", "cipher"):
            if r[k] is None:
                r[k] = fields[k]
            elif r[k] != fields[k]:
                raise Fail("request %s: the client saw %s %s, nginx logged %s %s"
                           % (r["id"], r["protocol"], r["cipher"], fields["protocol"],
                              fields["cipher"]))
    for r in requests:
        if r["ok"] and r["path"] not in seen:
            raise Fail("request %s succeeded but has no access.log line" % r["id"])
        r.setdefault("log_line", None)
        r.setdefault("logged", None)
    return len(seen)


# ---------------------------------------------------------------------------
# one server run
# ---------------------------------------------------------------------------


def run_policy(setup, name, policy, outdir):
    t0 = time.time()
    srv = start_nginx(setup, name, policy)
    clients = []
    try:
        for c in PLAN:
            if c["tool"] == "chromium" and not setup.chromium:
                continue
            if time.time() - t0 > RUN_DEADLINE:
                raise Fail("policy %s took longer than %ds (at client %s)"
                           % (name, RUN_DEADLINE, c["id"]))
            if srv.proc.poll() is not None:
                raise Fail("nginx died (before client %s):\n%s"
                           % (c["id"], tail(os.path.join(srv.d, "error.log"))))
            errlog = os.path.join(srv.d, "error.log")
            before = os.path.getsize(errlog)
            reqs = RUNNERS[c["tool"]](setup, c, srv)
            errors = new_error_lines(errlog, before, wait=not all(r["ok"] for r in reqs))
            clients.append(dict(
                {k: c[k] for k in ("id", "tool", "note", "aim")},
                user_agent=user_agent(c["id"]) if c["tool"] != "chromium" else None,
                offer={k: c["opts"].get(k) for k in
                       ("tls_min", "tls_max", "ciphers", "tls13", "groups", "sni",
                        "extra")},
                nginx_errors=errors, requests=reqs))
        plain = run_plain(setup, srv)
        allreq = [r for c in clients for r in c["requests"]] + [plain]
        wait_log_lines(os.path.join(srv.d, "access.log"),
                       sum(1 for r in allreq if r["ok"]))
    finally:
        stop_nginx(srv)
    access = os.path.join(srv.d, "access.log")
    if not os.path.exists(access):
        open(access, "wb").close()
    nlines = check_log(access, allreq)
    os.makedirs(outdir, exist_ok=True)
    for fn in ("access.log", "access-full.log", "error.log", "nginx.conf"):
        src = os.path.join(srv.d, fn)
        if os.path.exists(src):
            shutil.copyfile(src, os.path.join(outdir, fn))
    reqs = [r for c in clients for r in c["requests"]]
    doc = {
        "schema": SCHEMA,
        "generated_by": "scripts/tls-offers.py",
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "policy": {"name": name, "text": policy},
        "log_format": "log_format %s '%s';" % (LOG_NAME, LOG_FORMAT),
        "log_file": "access.log",
        "log_format_full": FULL_NAME,
        "log_file_full": "access-full.log",
        "server": {"address": "127.0.0.1", "port": srv.port,
                   "plain_port": srv.plain_port, "certificate": "rsa2048",
                   "dhparam": "ffdhe2048 (replaces %s)" % DHPARAM,
                   "openssl_conf": "empty (no ssl_conf section)"},
        "versions": setup.versions,
        "summary": {"clients": len(clients), "requests": len(reqs),
                    "ok": sum(1 for r in reqs if r["ok"]),
                    "failed": sum(1 for r in reqs if not r["ok"]),
                    "log_lines": nlines, "seconds": round(time.time() - t0, 2)},
        "clients": clients,
        "plain": plain,
    }
    with open(os.path.join(outdir, "plan.json"), "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return doc


# ---------------------------------------------------------------------------
# self-test
# ---------------------------------------------------------------------------


def permissive_problems(doc):
    """Under the permissive preset every client does what its `aim` says."""
    problems = []
    for c in doc["clients"]:
        for r in c["requests"]:
            if c["aim"] is None:
                if r["ok"]:
                    problems.append("%s: expected to fail, got %s %s"
                                    % (r["id"], r["protocol"], r["cipher"]))
            elif not r["ok"]:
                problems.append("%s: failed (%s), expected %s %s" % (
                    r["id"], r["error"], c["aim"]["protocol"], c["aim"]["cipher"]))
            elif (r["protocol"], r["cipher"]) != (c["aim"]["protocol"],
                                                  c["aim"]["cipher"]):
                problems.append("%s: negotiated %s %s, expected %s %s" % (
                    r["id"], r["protocol"], r["cipher"], c["aim"]["protocol"],
                    c["aim"]["cipher"]))
            if r["id"].endswith("/resumed") and r["ok"] and not r["reused"]:
                problems.append("%s: the session was not resumed" % r["id"])
    return problems


def outcome(r):
    if not r["ok"]:
        return "FAIL"
    g = (r["logged"] or {}).get("curve") or "-"
    return "%s %s %s%s" % (r["protocol"], r["cipher"], g,
                           " (r)" if (r["logged"] or {}).get("session_reused") == "r"
                           else "")


def selftest(setup, outdir):
    docs = [("permissive", run_policy(setup, "permissive", PRESETS["permissive"],
                                      os.path.join(outdir, "permissive")))]
    for name, text in SELFTEST_POLICIES.items():
        docs.append((name, run_policy(setup, name, text, os.path.join(outdir, name))))
    rows = {}
    for name, doc in docs:
        for c in doc["clients"]:
            for r in c["requests"]:
                rows.setdefault(r["id"], []).append(outcome(r))
    w = max(len(k) for k in rows)
    for i, (name, doc) in enumerate(docs):
        print("[%d] %s (%.1fs): %s" % (i, name, doc["summary"]["seconds"],
                                       " ".join(doc["policy"]["text"].split())))
    for rid, outs in rows.items():
        print("%-*s  %s" % (w, rid, "  |  ".join(
            "[%d] %s" % (i, o) for i, o in enumerate(outs))))
    problems = permissive_problems(docs[0][1])
    if problems:
        raise Fail("selftest: the permissive run did not go as planned:\n  "
                   + "\n  ".join(problems))
    print("selftest OK: %d clients, %d policies" % (len(docs[0][1]["clients"]),
                                                   len(docs)))


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------


def preflight(want_chromium):
    missing = [t for t in ("nginx", "curl", "openssl") if not tool_path(t)]
    if missing:
        raise Fail("not found: %s (Debian packages: nginx curl openssl)"
                   % ", ".join(missing))
    chromium = tool_path("chromium") or tool_path("chromium-browser")
    if want_chromium == "yes" and not chromium:
        raise Fail("--chromium yes, but no chromium (Debian package: chromium)")
    return chromium if want_chromium != "no" else None


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="tls-offers.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="See scripts/tls-offers.md for the client plan and plan.json.")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--preset", choices=sorted(PRESETS),
                   help="a built-in policy (permissive: every client that can "
                        "connect to an RSA certificate does)")
    g.add_argument("--policy-file", metavar="FILE",
                   help="nginx directives put verbatim into the server block, "
                        "e.g. 'ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers "
                        "ECDHE+AESGCM;' (# comments allowed; %s stands for a "
                        "generated ffdhe2048 DH parameter file)" % DHPARAM)
    g.add_argument("--selftest", action="store_true",
                   help="run the permissive preset and two strict policies, print "
                        "a table, fail unless the permissive run goes as planned")
    g.add_argument("--python-client", metavar="JSON", help=argparse.SUPPRESS)
    ap.add_argument("--name", metavar="NAME",
                    help="the policy's name in plan.json (default: the file's "
                         "base name)")
    ap.add_argument("--chromium", choices=["auto", "yes", "no"], default="auto",
                    help="run the headless Chromium client: auto = when installed")
    ap.add_argument("--out", metavar="DIR",
                    help="output directory (required, except for --selftest, "
                         "which then uses a temporary one)")
    ap.add_argument("--keep-tmp", action="store_true",
                    help="keep the temporary server directory (for debugging)")
    args = ap.parse_args(argv)
    if args.python_client:
        return python_client(json.loads(args.python_client))

    try:
        if not (args.preset or args.policy_file or args.selftest):
            raise Usage("give --preset NAME, --policy-file FILE or --selftest")
        if not args.selftest and not args.out:
            raise Usage("--out DIR is required")
        if args.policy_file:
            try:
                with open(args.policy_file, encoding="utf-8") as f:
                    policy = check_policy(f.read(), args.policy_file)
            except OSError as e:
                raise Usage("cannot read --policy-file %s: %s" % (args.policy_file, e))
            name = args.name or os.path.splitext(os.path.basename(args.policy_file))[0]
        elif args.preset:
            policy, name = PRESETS[args.preset], args.name or args.preset
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,60}", args.name or "x"):
            raise Usage("--name: letters, digits, . _ - only")
    except Usage as e:
        ap.print_usage(sys.stderr)
        log("usage error: %s" % e)
        return 2

    t0 = time.time()
    tmp = None
    raise_on_termination(lambda signum: Terminated("received signal %d" % signum))
    try:
        chromium = preflight(args.chromium)
        tmp = tempfile.mkdtemp(prefix="tlsgap-tls-offers-")
        setup = Setup(tmp, chromium)
        if args.selftest:
            selftest(setup, args.out or os.path.join(tmp, "out"))
        else:
            doc = run_policy(setup, name, policy, args.out)
            if args.preset == "permissive":
                problems = permissive_problems(doc)
                if problems:
                    raise Fail("the permissive preset did not go as planned (files "
                               "are in %s):\n  %s" % (args.out, "\n  ".join(problems)))
            s = doc["summary"]
            print("%s: %d clients, %d requests, %d ok, %d failed, %d log lines -> %s"
                  % (name, s["clients"], s["requests"], s["ok"], s["failed"],
                     s["log_lines"], args.out))
        print("done in %.1fs" % (time.time() - t0))
        return 0
    except Fail as e:
        log("error: %s" % e)
        return 1
    except (KeyboardInterrupt, Terminated) as e:
        log("interrupted (%s); nginx stopped" % (e or "SIGINT"))
        return 1
    finally:
        if tmp:
            if args.keep_tmp:
                log("temporary directory kept: %s" % tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
