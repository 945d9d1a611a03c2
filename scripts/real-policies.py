#!/usr/bin/env python3
"""Ground truth for `tlsgap whatif`: which single-suite handshakes do real Apache/nginx refuse under given TLS directives?

Usage (run from anywhere; as root in CI, see scripts/real-policies.md):

  python3 scripts/real-policies.py --out DIR [--server apache|nginx|both] [--only NAME]

The script

  * makes a throw-away directory with a self-signed RSA-3072 and a self-signed
    ECDSA P-256 certificate (both configured on every server), ffdhe2048 DH
    parameters and an EMPTY OpenSSL config file (OPENSSL_CONF for servers and
    clients, so the host's openssl.cnf cannot change the outcome),
  * builds the probe set: every suite `openssl ciphers -V` lists for
    'ALL:COMPLEMENTOFALL:@SECLEVEL=0' (plus the five TLS 1.3 suites), PSK and
    SRP suites skipped, under each protocol it can be used with; one probe =
    one `openssl s_client` handshake offering exactly one protocol version and
    one suite, then `GET /p/<id>` with `User-Agent: probe/<id>`; plus a few
    curl probes,
  * starts each server once accepting everything ("permissive"), drops the
    probes that fail there, checks that the access log shows, for every
    successful probe, exactly the protocol and suite it aimed for, and keeps
    that log as DIR/<server>/permissive.log,
  * then starts the server once per entry of the directive table (below) with
    only those TLS directives and runs every kept probe: ok or refused,
  * writes DIR/truth.json (schema tlsgap-real-policies/1, see the .md).

Exit status: 0 = done; 1 = a step failed (the message names it); 2 = usage.
Only the Python standard library is used.  Servers listen on 127.0.0.1 only.
"""

import argparse
import concurrent.futures
import fnmatch
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import (  # noqa: E402  (needs the sys.path entry above)
    APACHE_MODULES, Fail, apache_docroot, apache_head, apache_logformat,
    apache_prefork, apache_ssl_vhost, fix_perms, free_port, log, make_cert,
    raise_on_termination, run, set_prog, stop_group, tail, tool_path,
    wait_pidfile, wait_port, write_conf)

PROG = "real-policies"
set_prog(PROG)
SCHEMA = "tlsgap-real-policies/1"

# ---------------------------------------------------------------------------
# constants
# ---------------------------------------------------------------------------

TLS13_SUITES = ["TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
                "TLS_AES_128_GCM_SHA256", "TLS_AES_128_CCM_SHA256",
                "TLS_AES_128_CCM_8_SHA256"]

# protocol name (as the servers log it) -> (probe id prefix, s_client flag,
# curl version option)
PROTOCOLS = {
    "TLSv1": ("tls1", "-tls1", "1.0"),
    "TLSv1.1": ("tls1_1", "-tls1_1", "1.1"),
    "TLSv1.2": ("tls1_2", "-tls1_2", "1.2"),
    "TLSv1.3": ("tls1_3", "-tls1_3", "1.3"),
}
PROTO_ORDER = ["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"]

# a handful of probes made with curl (a second, real client): (protocol, suite)
CURL_PROBES = [
    ("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    ("TLSv1.3", "TLS_CHACHA20_POLY1305_SHA256"),
    ("TLSv1.2", "ECDHE-ECDSA-AES256-GCM-SHA384"),
    ("TLSv1.2", "ECDHE-RSA-CHACHA20-POLY1305"),
    ("TLSv1.2", "DHE-RSA-AES128-GCM-SHA256"),
    ("TLSv1.2", "AES128-SHA"),
    ("TLSv1.1", "ECDHE-RSA-AES128-SHA"),
    ("TLSv1", "AES256-SHA"),
]

APACHE_LOG_FORMAT = ('%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" '
                     "%{SSL_PROTOCOL}x %{SSL_CIPHER}x")
APACHE_LOG_NICK = "combinedssl"
NGINX_LOG_FORMAT = ("$remote_addr - $remote_user [$time_local] \"$request\" $status "
                    "$body_bytes_sent \"$http_referer\" \"$http_user_agent\" "
                    "$ssl_protocol $ssl_cipher")
NGINX_LOG_NICK = "ssl"

# In the directive table the DH parameter file is written the way the
# Mozilla generator writes it; the script puts the real file in its place.
DHPARAM = "/path/to/dhparam"
# 1024-bit DH parameters (`openssl dhparam -dsaparam`: a 160-bit subgroup), which
# OpenSSL refuses to load from security level 2 up ("dh key too small").
DH1024 = "/path/to/dh1024"
# RFC 3526's 1536-bit group as PKCS#3 parameters (Apache's `SSLOpenSSLConfCmd
# DHParameters` does not decode the X9.42 form): 80 bits of security, refused from
# level 2 up.
DH1536 = "/path/to/dh1536"

# Replaces /etc/ssl/openssl.cnf for the servers, openssl(1) and curl.
OPENSSL_CNF = """\
# written by scripts/real-policies.py; used instead of the system openssl.cnf
# (via OPENSSL_CONF).  Deliberately empty: no ssl_conf / system_default
# section, so no host-wide MinProtocol or CipherString applies; only the
# library's built-in defaults (Debian: security level 2) and the directives
# under test decide.
"""

PROBE_WORKERS = 4
PROBE_TIMEOUT = 10          # seconds per client process
START_ATTEMPTS = 3          # a free port can be taken by someone else

# ---------------------------------------------------------------------------
# the directive table
# ---------------------------------------------------------------------------

HIGH = "HIGH:!aNULL:!MD5"
MOZ_INTERMEDIATE = ("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305:"
                    "DHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:"
                    "DHE-RSA-CHACHA20-POLY1305")
MOZ_OLD = (MOZ_INTERMEDIATE + ":ECDHE-ECDSA-AES128-SHA256:ECDHE-RSA-AES128-SHA256:"
           "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA384:"
           "ECDHE-RSA-AES256-SHA384:ECDHE-ECDSA-AES256-SHA:ECDHE-RSA-AES256-SHA:"
           "DHE-RSA-AES128-SHA256:DHE-RSA-AES256-SHA256:AES128-GCM-SHA256:"
           "AES256-GCM-SHA384:AES128-SHA256:AES256-SHA256:AES128-SHA:AES256-SHA:"
           "DES-CBC3-SHA")
assert len(MOZ_OLD.split(":")) == 26
DHE_MIX = "DHE:ECDHE:AES128-SHA:@SECLEVEL=0"

NGX_ALL = "ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;"


def _moz_apache(protocol, ciphers, honor):
    # ssl-config.mozilla.org, guideline 5.7, Apache 2.4.60, OpenSSL 3.x
    L = ["SSLProtocol             %s" % protocol,
         "SSLOpenSSLConfCmd       Curves X25519:prime256v1:secp384r1"]
    if ciphers:
        L.append("SSLCipherSuite          %s" % ciphers)
    L += ["SSLHonorCipherOrder     %s" % honor, "SSLSessionTickets       off"]
    return L


def _moz_nginx(protocols, ciphers, prefer, dhparam):
    # ssl-config.mozilla.org, guideline 5.7, nginx 1.22, OpenSSL 3.x
    L = ["ssl_session_timeout 1d;",
         "ssl_session_cache shared:MozSSL:10m;",
         "ssl_session_tickets off;"]
    if dhparam:
        L.append('ssl_dhparam "%s";' % DHPARAM)
    L += ["ssl_protocols %s;" % protocols,
          "ssl_ecdh_curve X25519:prime256v1:secp384r1;"]
    if ciphers:
        L.append("ssl_ciphers %s;" % ciphers)
    L.append("ssl_prefer_server_ciphers %s;" % prefer)
    return L


# name -> directives, per server; the order is the order of truth.json
CONFIGS = {
    "apache": [
        ("high-default", ["SSLProtocol all -SSLv3", "SSLCipherSuite " + HIGH]),
        ("high-seclevel0", ["SSLProtocol all -SSLv3",
                            "SSLCipherSuite " + HIGH + ":@SECLEVEL=0"]),
        ("high-seclevel1", ["SSLProtocol all -SSLv3",
                            "SSLCipherSuite " + HIGH + ":@SECLEVEL=1"]),
        ("high-seclevel3", ["SSLProtocol all", "SSLCipherSuite HIGH:!aNULL:@SECLEVEL=3"]),
        ("tls12-13-ecdhe-aesgcm", ["SSLProtocol -all +TLSv1.2 +TLSv1.3",
                                   "SSLCipherSuite ECDHE+AESGCM"]),
        ("no-tls1-default-seclevel0", ["SSLProtocol all -TLSv1",
                                       "SSLCipherSuite DEFAULT:@SECLEVEL=0"]),
        ("aes128-sha-only", ["SSLProtocol all", "SSLCipherSuite AES128-SHA:@SECLEVEL=0"]),
        ("tls13-aes256-only", ["SSLCipherSuite TLSv1.3 TLS_AES_256_GCM_SHA384"]),
        ("tls13-aes256-only-permissive", ["SSLProtocol all",
                                          "SSLCipherSuite ALL:@SECLEVEL=0",
                                          "SSLCipherSuite TLSv1.3 TLS_AES_256_GCM_SHA384"]),
        ("tls13-ccm-only", ["SSLCipherSuite TLSv1.3 "
                            "TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256"]),
        ("default-protocols-seclevel0", ["SSLCipherSuite DEFAULT:@SECLEVEL=0"]),
        ("mozilla-intermediate-5.7", _moz_apache("-all +TLSv1.2 +TLSv1.3",
                                                 MOZ_INTERMEDIATE, "off")),
        ("mozilla-modern-5.7", _moz_apache("-all +TLSv1.3", None, "off")),
        ("mozilla-old-5.7", _moz_apache("-all +TLSv1 +TLSv1.1 +TLSv1.2 +TLSv1.3",
                                        MOZ_OLD, "on")),
        ("mozilla-old-5.7-seclevel0", _moz_apache(
            "-all +TLSv1 +TLSv1.1 +TLSv1.2 +TLSv1.3", MOZ_OLD + ":@SECLEVEL=0", "on")),
        ("all-no-rsa-strength-seclevel0", ["SSLProtocol all",
                                           "SSLCipherSuite ALL:!RSA:!aNULL:@STRENGTH:@SECLEVEL=0"]),
        ("rc4-sha", ["SSLProtocol all", "SSLCipherSuite RC4-SHA"]),
        ("3des-rsa", ["SSLProtocol all", "SSLCipherSuite 3DES:+RSA"]),
        ("dhe-builtin-params", ["SSLProtocol TLSv1.2",
                                "SSLCipherSuite DHE-RSA-AES128-GCM-SHA256:AES128-GCM-SHA256"]),
        ("dhparameters-1536", ["SSLProtocol all", "SSLCipherSuite HIGH:!aNULL",
                               "SSLOpenSSLConfCmd DHParameters %s" % DH1536]),
        ("dhparameters-1536-seclevel1", ["SSLProtocol all",
                                         "SSLCipherSuite HIGH:!aNULL:@SECLEVEL=1",
                                         "SSLOpenSSLConfCmd DHParameters %s" % DH1536]),
        ("dhparameters-x942-seclevel0", ["SSLProtocol all",
                                         "SSLCipherSuite HIGH:!aNULL:@SECLEVEL=0",
                                         "SSLOpenSSLConfCmd DHParameters %s" % DH1024]),
        ("dhparameters-ffdhe2048-seclevel3", ["SSLProtocol all",
                                              "SSLCipherSuite HIGH:!aNULL:@SECLEVEL=3",
                                              "SSLOpenSSLConfCmd DHParameters %s" % DHPARAM]),
    ],
    "nginx": [
        ("high-default", [NGX_ALL, "ssl_ciphers %s;" % HIGH]),
        ("high-seclevel0", [NGX_ALL, "ssl_ciphers %s:@SECLEVEL=0;" % HIGH]),
        ("high-seclevel1", [NGX_ALL, "ssl_ciphers %s:@SECLEVEL=1;" % HIGH]),
        ("high-seclevel3", [NGX_ALL, "ssl_ciphers HIGH:!aNULL:@SECLEVEL=3;"]),
        ("tls12-13-ecdhe-aesgcm", ["ssl_protocols TLSv1.2 TLSv1.3;",
                                   "ssl_ciphers ECDHE+AESGCM;"]),
        ("no-tls1-default-seclevel0", ["ssl_protocols TLSv1.1 TLSv1.2 TLSv1.3;",
                                       "ssl_ciphers DEFAULT:@SECLEVEL=0;"]),
        ("aes128-sha-only", [NGX_ALL, "ssl_ciphers AES128-SHA:@SECLEVEL=0;"]),
        ("tls13-aes256-only", ["ssl_conf_command Ciphersuites TLS_AES_256_GCM_SHA384;"]),
        ("tls13-aes256-only-permissive", [NGX_ALL, "ssl_ciphers ALL:@SECLEVEL=0;",
                                          "ssl_dhparam %s;" % DHPARAM,
                                          "ssl_conf_command Ciphersuites "
                                          "TLS_AES_256_GCM_SHA384;"]),
        ("tls13-ccm-only", ["ssl_protocols TLSv1.2 TLSv1.3;",
                            "ssl_conf_command Ciphersuites "
                            "TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256;"]),
        ("default-protocols-seclevel0", ["ssl_ciphers DEFAULT:@SECLEVEL=0;"]),
        ("mozilla-intermediate-5.7", _moz_nginx("TLSv1.2 TLSv1.3", MOZ_INTERMEDIATE,
                                                "off", True)),
        ("mozilla-modern-5.7", _moz_nginx("TLSv1.3", None, "off", False)),
        ("mozilla-old-5.7", _moz_nginx("TLSv1 TLSv1.1 TLSv1.2 TLSv1.3", MOZ_OLD,
                                       "on", True)),
        ("mozilla-old-5.7-seclevel0", _moz_nginx("TLSv1 TLSv1.1 TLSv1.2 TLSv1.3",
                                                 MOZ_OLD + ":@SECLEVEL=0", "on", True)),
        ("all-no-rsa-strength-seclevel0", [NGX_ALL,
                                           "ssl_ciphers ALL:!RSA:!aNULL:@STRENGTH:@SECLEVEL=0;"]),
        ("rc4-sha", [NGX_ALL, "ssl_ciphers RC4-SHA;"]),
        ("3des-rsa", [NGX_ALL, "ssl_ciphers 3DES:+RSA;"]),
        ("dhe-with-dhparam", [NGX_ALL, "ssl_ciphers %s;" % DHE_MIX,
                              "ssl_dhparam %s;" % DHPARAM]),
        ("dhe-without-dhparam", [NGX_ALL, "ssl_ciphers %s;" % DHE_MIX]),
        ("dhparam-1024", [NGX_ALL, "ssl_ciphers HIGH:!aNULL;", "ssl_dhparam %s;" % DH1024]),
        ("dhparam-1024-seclevel0", [NGX_ALL, "ssl_ciphers HIGH:!aNULL:@SECLEVEL=0;",
                                    "ssl_dhparam %s;" % DH1024]),
        ("dhparam-1536-seclevel1", [NGX_ALL, "ssl_ciphers HIGH:!aNULL:@SECLEVEL=1;",
                                    "ssl_dhparam %s;" % DH1536]),
        ("dhparam-ffdhe2048-seclevel3", ["ssl_protocols TLSv1.2 TLSv1.3;",
                                         "ssl_ciphers ECDHE+AESGCM:@SECLEVEL=3;",
                                         "ssl_dhparam %s;" % DHPARAM]),
    ],
}

PERMISSIVE = {
    "apache": ["SSLProtocol all", "SSLCipherSuite ALL:@SECLEVEL=0",
               "SSLCipherSuite TLSv1.3 " + ":".join(TLS13_SUITES)],
    "nginx": [NGX_ALL, "ssl_ciphers ALL:@SECLEVEL=0;",
              "ssl_conf_command Ciphersuites %s;" % ":".join(TLS13_SUITES),
              "ssl_dhparam %s;" % DHPARAM],
}

SERVERS = ("apache", "nginx")


class Usage(Exception):
    pass


class Terminated(Exception):
    pass


def die_with_parent():
    """In a server's child before exec: SIGTERM it if this script dies
    without cleaning up (SIGKILL).  Linux only; servers are only started
    while no probe thread runs (preexec_fn and threads do not mix)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)   # PR_SET_PDEATHSIG
    except Exception:
        pass


# ---------------------------------------------------------------------------
# setup: files shared by every server start
# ---------------------------------------------------------------------------

class Setup:
    def __init__(self, tmp):
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
                  "all_proxy", "CURL_HOME"):
            env.pop(k, None)
        env["LC_ALL"] = "C"
        self.env = env
        self.apache = tool_path("apache2")
        self.nginx = tool_path("nginx")
        self.openssl = tool_path("openssl")
        self.curl = tool_path("curl")

        # certificates: RSA-3072 (still fine at @SECLEVEL=3) and ECDSA P-256
        self.rsa = (os.path.join(tmp, "rsa-cert.pem"), os.path.join(tmp, "rsa-key.pem"))
        self.ec = (os.path.join(tmp, "ec-cert.pem"), os.path.join(tmp, "ec-key.pem"))
        r = run([self.openssl, "req", "-x509", "-newkey", "rsa:3072", "-nodes",
                 "-keyout", self.rsa[1], "-out", self.rsa[0], "-days", "2",
                 "-subj", "/CN=localhost",
                 "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                step="setup: RSA-3072 certificate", env=env, timeout=60)
        if r.returncode != 0:
            raise Fail("setup: openssl req (RSA-3072) failed:\n%s"
                       % r.stderr.decode(errors="replace"))
        make_cert(self.openssl, self.ec[0], self.ec[1], kind="ec",
                  what="setup: openssl req (ECDSA P-256)", env=env,
                  step="setup: ECDSA certificate")
        self.certs = [self.rsa, self.ec]
        # DH parameters: Mozilla's ffdhe2048, and two too weak for level 2.
        self.dhparam = self.openssl_file(
            tmp, "dhparam.pem", ["genpkey", "-genparam", "-algorithm", "DH",
                                 "-pkeyopt", "dh_param:ffdhe2048", "-out"], "DH ffdhe2048")
        self.dh1536 = self.openssl_file(
            tmp, "dh1536.pem", ["genpkey", "-genparam", "-algorithm", "DH",
                                "-pkeyopt", "dh_param:modp_1536", "-out"], "DH modp_1536")
        self.dh1024 = self.openssl_file(
            tmp, "dh1024.pem", ["dhparam", "-dsaparam", "-out"], "DH 1024-bit X9.42",
            after=["1024"])
        self.www = os.path.join(tmp, "www")
        os.makedirs(os.path.join(self.www, "p"))
        with open(os.path.join(self.www, "index.html"), "wb") as f:
            f.write(b"tlsgap real-policies\n")
        self.versions = {
            "apache": first_line_of([self.apache, "-v"], env).replace(
                "Server version: ", ""),
            "nginx": first_line_of([self.nginx, "-v"], env).replace(
                "nginx version: ", ""),
            "openssl": " ".join(first_line_of([self.openssl, "version"], env).split()[:2]),
            "curl": " ".join(first_line_of([self.curl, "--version"], env).split()[:2]),
        }

    def openssl_file(self, tmp, name, args, what, after=()):
        """Run `openssl ARGS PATH AFTER` (ARGS ending in the option that names the
        output file); the file's path."""
        path = os.path.join(tmp, name)
        r = run([self.openssl] + args + [path] + list(after), step="setup: " + what,
                env=self.env, timeout=120)
        if r.returncode != 0:
            raise Fail("setup: openssl (%s) failed:\n%s"
                       % (what, r.stderr.decode(errors="replace")))
        return path

    def files(self, directive, dhparam=None, dh1024=None, dh1536=None):
        """The directive with the DH file placeholders replaced by real files
        (these, or the set-up's)."""
        return (directive.replace(DHPARAM, dhparam or self.dhparam)
                .replace(DH1024, dh1024 or self.dh1024)
                .replace(DH1536, dh1536 or self.dh1536))

    def add_probe_files(self, probes):
        """One small file per probe: GET /p/<id> is a 200 on both servers."""
        for p in probes:
            with open(os.path.join(self.www, "p", p["id"]), "wb") as f:
                f.write(b"ok\n")
        fix_perms(self.tmp)


def first_line_of(cmd, env):
    r = run(cmd, step="setup: %s" % os.path.basename(cmd[0]), env=env)
    text = (r.stdout or r.stderr).decode(errors="replace").strip()
    return text.splitlines()[0] if text else "?"


# ---------------------------------------------------------------------------
# probes
# ---------------------------------------------------------------------------

CIPHER_LINE = re.compile(r"^\s*0x[0-9A-F]{2},0x[0-9A-F]{2} - (\S+)\s+(\S+)\s+Kx=(\S+)\s+"
                         r"Au=(\S+)\s+Enc=(\S+)\s+Mac=(\S+)")


def candidate_probes(setup):
    r = run([setup.openssl, "ciphers", "-V", "-ciphersuites", ":".join(TLS13_SUITES),
             "ALL:COMPLEMENTOFALL:@SECLEVEL=0"], step="probes: openssl ciphers",
            env=setup.env)
    if r.returncode != 0:
        raise Fail("probes: openssl ciphers -V failed:\n%s"
                   % r.stderr.decode(errors="replace"))
    probes = []
    skipped = []
    seen = set()
    for line in r.stdout.decode().splitlines():
        m = CIPHER_LINE.match(line)
        if not m:
            raise Fail("probes: cannot parse `openssl ciphers -V` line %r" % line)
        suite, minproto, kx, au = m.group(1), m.group(2), m.group(3), m.group(4)
        if suite in seen:
            continue
        seen.add(suite)
        if "PSK" in kx or "SRP" in kx or au in ("PSK", "SRP"):
            skipped.append(suite)
            continue
        if minproto == "TLSv1.3":
            protos = ["TLSv1.3"]
        elif minproto == "TLSv1.2":
            protos = ["TLSv1.2"]
        elif minproto in ("SSLv3", "TLSv1"):
            protos = ["TLSv1", "TLSv1.1", "TLSv1.2"]
        else:
            raise Fail("probes: unexpected minimum protocol %r for %s" % (minproto, suite))
        for proto in protos:
            probes.append(probe("s_client", proto, suite))
    missing = [s for s in TLS13_SUITES if s not in seen]
    if missing:
        raise Fail("probes: openssl does not list the TLS 1.3 suites %s" % missing)
    for proto, suite in CURL_PROBES:
        probes.append(probe("curl", proto, suite))
    probes.sort(key=lambda p: (p["tool"] != "s_client", PROTO_ORDER.index(p["protocol"]),
                               p["suite"]))
    return probes, skipped


def probe(tool, proto, suite):
    prefix = PROTOCOLS[proto][0]
    pid = ("curl-" if tool == "curl" else "") + "%s-%s" % (prefix, suite)
    if tool == "s_client":
        if proto == "TLSv1.3":
            args = [PROTOCOLS[proto][1], "-ciphersuites", suite, "-cipher",
                    "ALL:@SECLEVEL=0"]
        else:
            args = [PROTOCOLS[proto][1], "-cipher", suite + ":@SECLEVEL=0"]
    else:
        v = PROTOCOLS[proto][2]
        args = ["--tlsv" + v, "--tls-max", v]
        if proto == "TLSv1.3":
            args += ["--tls13-ciphers", suite, "--ciphers", "ALL:@SECLEVEL=0"]
        else:
            args += ["--ciphers", suite + ":@SECLEVEL=0"]
    return {"id": pid, "tool": tool, "protocol": proto, "suite": suite,
            "client_args": args}


# s_client's "New, X, Cipher is Y" shows the suite's minimum version, not the
# negotiated one; the SSL-Session block has both
SCLIENT_PROTO = re.compile(r"^\s+Protocol\s*: (\S+)", re.M)
SCLIENT_CIPHER = re.compile(r"^\s+Cipher\s*: (\S+)", re.M)
CURL_USING = re.compile(r"SSL connection using (\S+) / (\S+)")
HTTP_STATUS = re.compile(rb"^HTTP/1\.[01] (\d{3})", re.M)
ERR_PREFIX = re.compile(r"^[0-9A-F]{8,}:error:")


def clean_error(text):
    """The client's error, first relevant line, without the thread-id prefix
    OpenSSL puts in front (it changes from run to run)."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    for l in lines:
        if ":error:" in l or l.startswith("curl: ("):
            return ERR_PREFIX.sub("error:", l)
    for l in lines:
        if not l.startswith(("depth=", "verify ", "*", "CONNECTED")):
            return l
    return lines[0] if lines else "(no error text)"


def run_probe(setup, p, port):
    """-> {"ok": bool, "error": str|None, "protocol": .., "suite": ..}"""
    if p["tool"] == "s_client":
        cmd = [setup.openssl, "s_client", "-connect", "127.0.0.1:%d" % port,
               "-servername", "localhost", "-ign_eof",
               # no CA store: nothing is verified anyway, and loading the
               # system bundle costs ~45 ms per process
               "-no-CAfile", "-no-CApath", "-no-CAstore"] + p["client_args"]
        req = ("GET /p/%s HTTP/1.1\r\nHost: localhost\r\nUser-Agent: probe/%s\r\n"
               "Connection: close\r\n\r\n" % (p["id"], p["id"])).encode()
    else:
        cmd = [setup.curl, "-q", "-sS", "-v", "-k", "--noproxy", "*", "--http1.1",
               "--connect-timeout", "5", "--max-time", str(PROBE_TIMEOUT - 2),
               "--resolve", "localhost:%d:127.0.0.1" % port,
               "-A", "probe/" + p["id"], "-o", "/dev/null", "-w", "%{http_code}"]
        cmd += p["client_args"] + ["https://localhost:%d/p/%s" % (port, p["id"])]
        req = b""
    for attempt in range(2):
        try:
            r = subprocess.run(cmd, input=req, capture_output=True,
                               timeout=PROBE_TIMEOUT, env=setup.env)
            break
        except subprocess.TimeoutExpired:
            if attempt == 1:
                raise Fail("probe %s timed out twice after %ds (server hung?)"
                           % (p["id"], PROBE_TIMEOUT))
    out = r.stdout.decode("utf-8", "replace")
    err = r.stderr.decode("utf-8", "replace")
    res = {"ok": False, "error": None, "protocol": None, "suite": None}
    if p["tool"] == "s_client":
        mp, mc = SCLIENT_PROTO.search(out), SCLIENT_CIPHER.search(out)
        m = mp and mc and mc.group(1) not in ("(NONE)", "0000")
        st = HTTP_STATUS.search(r.stdout)
        if m:
            res["protocol"], res["suite"] = mp.group(1), mc.group(1)
        if m and st:
            res["ok"] = True
            res["status"] = st.group(1).decode()
        else:
            res["error"] = clean_error(err) if r.returncode != 0 or not m else \
                "handshake done but no HTTP response"
    else:
        m = CURL_USING.search(err)
        if m:
            res["protocol"], res["suite"] = m.group(1), m.group(2)
        if r.returncode == 0 and m and out.strip().isdigit() and out.strip() != "000":
            res["ok"] = True
            res["status"] = out.strip()
        else:
            res["error"] = clean_error(err) or "curl exit %d" % r.returncode
    if res["ok"] and (res["protocol"], res["suite"]) != (p["protocol"], p["suite"]):
        raise Fail("probe %s: the client reports %s %s, but offered only %s %s"
                   % (p["id"], res["protocol"], res["suite"], p["protocol"], p["suite"]))
    return res


def run_probes(setup, probes, port, proc, what):
    results = {}
    stop = threading.Event()

    def one(p):
        if stop.is_set():
            return p["id"], None
        return p["id"], run_probe(setup, p, port)

    with concurrent.futures.ThreadPoolExecutor(PROBE_WORKERS) as ex:
        futs = [ex.submit(one, p) for p in probes]
        try:
            for f in concurrent.futures.as_completed(futs):
                pid, res = f.result()
                results[pid] = res
        except BaseException:
            stop.set()
            for f in futs:
                f.cancel()
            raise
    if proc.poll() is not None:
        raise Fail("%s: the server died while the probes ran (exit %s)"
                   % (what, proc.returncode))
    return results


# ---------------------------------------------------------------------------
# access logs
# ---------------------------------------------------------------------------

Q = r'"((?:[^"\\]|\\.)*)"'
LOG_LINE = re.compile(r"^(\S+) (\S+) (\S+) \[([^\]]+)\] " + Q + r" (\d{3}) (\S+) " +
                      Q + " " + Q + r" (\S+) (\S+)$")


def check_log(path, probes, results, what):
    """Every successful probe has exactly one line, with the aimed protocol
    and suite; refused probes have none; nothing else is logged."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        data = b""
    byid = {p["id"]: p for p in probes}
    seen = {}
    for n, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        m = LOG_LINE.match(raw)
        if not m:
            raise Fail("%s: access log line %d does not match the log format: %r"
                       % (what, n, raw))
        req, status, ua, proto, suite = (m.group(5), m.group(6), m.group(9),
                                         m.group(10), m.group(11))
        if not ua.startswith("probe/") or ua[6:] not in byid:
            raise Fail("%s: access log line %d is from no probe: %r" % (what, n, raw))
        pid = ua[6:]
        p = byid[pid]
        if pid in seen:
            raise Fail("%s: probe %s logged twice (lines %d and %d)"
                       % (what, pid, seen[pid], n))
        seen[pid] = n
        if not results.get(pid, {}).get("ok"):
            raise Fail("%s: probe %s counted as refused (%s) but the server logged "
                       "it: %r" % (what, pid, results.get(pid, {}).get("error"), raw))
        if req != "GET /p/%s HTTP/1.1" % pid or status != "200":
            raise Fail("%s: probe %s: unexpected request/status in log line %d: %r"
                       % (what, pid, n, raw))
        if (proto, suite) != (p["protocol"], p["suite"]):
            raise Fail("%s: probe %s aimed at %s %s but the log shows %s %s (line %d)"
                       % (what, pid, p["protocol"], p["suite"], proto, suite, n))
    missing = [pid for pid, r in results.items() if r and r["ok"] and pid not in seen]
    if missing:
        raise Fail("%s: %d successful probe(s) have no access log line: %s"
                   % (what, len(missing), ", ".join(sorted(missing)[:10])))
    return len(seen)


# ---------------------------------------------------------------------------
# servers
# ---------------------------------------------------------------------------

APACHE_STAMP = re.compile(r"^\[[^\]]*\] (\[[^\]]*\]) \[pid [^\]]*\] ")


def apache_conf(setup, d, port, directives):
    L = apache_head("scripts/real-policies.py", d,
                    ["mpm_prefork", "authz_core", "dir", "socache_shmcb", "ssl"])
    if setup.root:
        L += ["User www-data", "Group www-data"]
    L += apache_prefork(4, 4, 8, 8)
    L += ["Listen 127.0.0.1:%d https" % port,
          "ErrorLog %s/error.log" % d, "LogLevel warn"]
    L += apache_docroot(setup.www)
    L += ["SSLSessionCache shmcb:%s/run/ssl_scache(512000)" % d,
          apache_logformat(APACHE_LOG_FORMAT, APACHE_LOG_NICK),
          "CustomLog %s/access.log %s" % (d, APACHE_LOG_NICK)]
    L += apache_ssl_vhost(port, setup.certs,
                          ["# --- directives under test ---"] +
                          [setup.files(x) for x in directives])
    return write_conf(os.path.join(d, "httpd.conf"), L)


def nginx_conf(setup, d, port, directives):
    L = ["# generated by scripts/real-policies.py"]
    if setup.root:
        L.append("user www-data www-data;")
    L += ["worker_processes 2;", "daemon off;", "pid %s/nginx.pid;" % d,
          "error_log %s/error.log notice;" % d,
          "events { worker_connections 256; }",
          "http {",
          "  default_type text/plain;",
          "  keepalive_timeout 0;"]
    for sub in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(d, "tmp", sub), exist_ok=True)
        L.append("  %s_temp_path %s/tmp/%s;" % (sub, d, sub))
    L += ["  log_format %s '%s';" % (NGINX_LOG_NICK, NGINX_LOG_FORMAT),
          "  server {",
          "    listen 127.0.0.1:%d ssl;" % port,
          "    server_name localhost;",
          "    root %s;" % setup.www,
          "    access_log %s/access.log %s;" % (d, NGINX_LOG_NICK)]
    for cert, key in setup.certs:
        L += ["    ssl_certificate %s;" % cert, "    ssl_certificate_key %s;" % key]
    L.append("    # --- directives under test ---")
    L += ["    " + setup.files(x) for x in directives]
    L += ["  }", "}"]
    return write_conf(os.path.join(d, "nginx.conf"), L)


def relevant_lines(text, setup, server, config_test=False):
    """A server's start-up complaint: the lines at level error or worse
    (every line of a failed `apache2 -t`: "AH00526: Syntax error on line N"
    is followed by the reason), without time stamp, pid and the temporary
    directory ($TMP)."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if server == "apache" and config_test:
        pick = lines
    elif server == "apache":
        pick = [l for l in lines
                if re.search(r"\[[a-z_]*:(emerg|alert|crit|error)\]", l)
                or re.match(r"AH\d{5}:", l)]
    else:
        pick = [l for l in lines if re.search(r"\[(emerg|alert|crit|error)\]", l)]
    out = []
    for l in pick or lines[:3] or ["(no output)"]:
        l = APACHE_STAMP.sub(r"\1 ", l)
        l = re.sub(r"^nginx: ", "", l)
        l = re.sub(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d ", "", l)
        l = re.sub(r"^(\[\w+\]) \d+#\d+: ", r"\1 ", l)
        out.append(l.replace(setup.tmp, "$TMP"))
    return out


class Started:
    def __init__(self, proc, port, d, out):
        self.proc, self.port, self.d, self.out = proc, port, d, out


def start_server(setup, server, name, directives, started_list):
    """-> (Started, None, config test passed) or (None, [error lines], config
    test passed) when the server rejects the directives (the config test
    fails, or the server exits during start-up)."""
    d = tempfile.mkdtemp(prefix="%s-%s-" % (server, name.replace("/", "_")), dir=setup.tmp)
    os.chmod(d, 0o755)
    os.makedirs(os.path.join(d, "run"))
    for attempt in range(START_ATTEMPTS):
        port = free_port()
        if server == "apache":
            conf = apache_conf(setup, d, port, directives)
            test = [setup.apache, "-f", conf, "-t"]
            cmd = [setup.apache, "-f", conf, "-DFOREGROUND"]
            pidfile = os.path.join(d, "run", "httpd.pid")
        else:
            conf = nginx_conf(setup, d, port, directives)
            base = [setup.nginx, "-c", conf, "-p", d + "/", "-e", d + "/error.log"]
            test = base + ["-t", "-q"]
            cmd = base
            pidfile = os.path.join(d, "nginx.pid")
        r = run(test, step="%s: config test" % name, env=setup.env)
        if r.returncode != 0:
            text = r.stderr.decode(errors="replace") + r.stdout.decode(errors="replace")
            return None, relevant_lines(text, setup, server, config_test=True), False
        errlog = os.path.join(d, "error.log")
        if os.path.exists(errlog):
            os.unlink(errlog)
        out = open(os.path.join(d, "stdout.log"), "wb")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, env=setup.env,
                                start_new_session=True, preexec_fn=die_with_parent)
        started_list.append(proc)
        if (wait_port(port, lambda: proc.poll() is None)
                and wait_pidfile(pidfile, proc, settle=0.2)):
            return Started(proc, port, d, out), None, True
        stop_group(proc, signal.SIGTERM, server)
        out.close()
        text = tail(errlog) + "\n" + tail(os.path.join(d, "stdout.log"))
        if "Address already in use" in text and attempt < START_ATTEMPTS - 1:
            log("%s: port %d taken, retrying" % (name, port))
            continue
        return None, relevant_lines(text, setup, server), True
    raise AssertionError("not reached")


def wait_log_lines(path, n, timeout=5.0):
    """Servers write the access-log line after the response has gone out, so
    a client can be done before its line is written; stopping the server then
    can lose it (Apache's SIGTERM kills busy workers).  Wait until the log
    has n lines (check_log complains if it never gets there)."""
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


def stop_server(s, server):
    stop_group(s.proc, signal.SIGQUIT if server == "nginx" else signal.SIGTERM, server)
    s.out.close()


def run_config(setup, server, name, directives, probes, started_list, timing):
    """Start the server with the directives, run the probes, stop it.
    -> (server, error lines, config test passed, results, access log path)"""
    t0 = time.time()
    s, err, test_ok = start_server(setup, server, name, directives, started_list)
    if s is None:
        timing.append((name, time.time() - t0, 0))
        return None, err, test_ok, None, None
    access = os.path.join(s.d, "access.log")
    try:
        results = run_probes(setup, probes, s.port, s.proc, name)
        wait_log_lines(access, sum(1 for r in results.values() if r and r["ok"]))
    finally:
        stop_server(s, server)
    check_log(access, probes, results, name)
    timing.append((name, time.time() - t0, len(probes)))
    return s, None, test_ok, results, access


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def preflight(servers):
    need = ["openssl", "curl"] + [{"apache": "apache2", "nginx": "nginx"}[s]
                                  for s in servers]
    missing = [t for t in need if not tool_path(t)]
    if missing:
        raise Fail("preflight: not found: %s (Debian packages: apache2 nginx curl "
                   "openssl)" % ", ".join(missing))
    if "apache" in servers:
        for mod in ("mod_ssl.so", "mod_mpm_prefork.so", "mod_socache_shmcb.so",
                    "mod_authz_core.so", "mod_dir.so"):
            if not os.path.exists(os.path.join(APACHE_MODULES, mod)):
                raise Fail("preflight: Apache module %s/%s missing" % (APACHE_MODULES, mod))


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="real-policies.py", description=__doc__.split("\n\n")[0],
        epilog="See scripts/real-policies.md for the directive table and truth.json.")
    ap.add_argument("--out", metavar="DIR", required=True, help="output directory")
    ap.add_argument("--server", choices=["apache", "nginx", "both"], default="both")
    ap.add_argument("--only", metavar="NAME", action="append",
                    help="run only the table entries with this name (e.g. "
                         "apache/high-default, or a glob such as '*/mozilla-*'; "
                         "repeatable).  The permissive run always happens.")
    ap.add_argument("--keep-tmp", action="store_true",
                    help="keep the temporary directory (configs, server logs)")
    args = ap.parse_args(argv)
    servers = list(SERVERS) if args.server == "both" else [args.server]
    table = [(s, "%s/%s" % (s, n), d) for s in servers for n, d in CONFIGS[s]]
    if args.only:
        table = [t for t in table if any(t[1] == o or fnmatch.fnmatchcase(t[1], o)
                                         for o in args.only)]
        if not table:
            ap.print_usage(sys.stderr)
            log("usage error: --only %s matches no entry of the table (names: %s)"
                % (" ".join(args.only), ", ".join(
                    "%s/%s" % (s, n) for s in servers for n, _ in CONFIGS[s])))
            return 2

    t_start = time.time()
    tmp = None
    started = []          # every server process we started (stopped in finally)
    timing = []
    raise_on_termination(lambda signum: Terminated("received signal %d" % signum))
    try:
        preflight(servers)
        tmp = tempfile.mkdtemp(prefix="tlsgap-real-policies-")
        setup = Setup(tmp)
        probes, skipped = candidate_probes(setup)
        setup.add_probe_files(probes)
        t_setup = time.time() - t_start
        os.makedirs(args.out, exist_ok=True)

        doc = {"schema": SCHEMA, "generated_by": "scripts/real-policies.py",
               "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
               "versions": setup.versions,
               "environment": {
                   "address": "127.0.0.1",
                   "openssl_conf": "empty file (no ssl_conf section) for the servers, "
                                   "openssl s_client and curl",
                   "certificates": ["rsa3072", "ecdsa-p256"],
                   "dhparam_placeholder": DHPARAM,
                   "dhparam": "ffdhe2048 (openssl genpkey -genparam -algorithm DH "
                              "-pkeyopt dh_param:ffdhe2048)",
                   "dh1536": "modp_1536 (openssl genpkey -genparam -algorithm DH "
                             "-pkeyopt dh_param:modp_1536)",
                   "dh1024": "X9.42, 1024 bits (openssl dhparam -dsaparam 1024)",
                   "dh_files": "copied into DIR; the directives in this file name "
                               "the copies",
                   "suites_skipped": skipped},
               "servers": {}, "probes": [
                   {k: p[k] for k in ("id", "tool", "protocol", "suite", "client_args")}
                   for p in probes],
               "configs": []}

        # The DH files go with truth.json, which names them in the directives: whatif
        # reads them as the servers did.
        out_dh = {}
        for key, src in (("dhparam", setup.dhparam), ("dh1024", setup.dh1024),
                         ("dh1536", setup.dh1536)):
            out_dh[key] = os.path.abspath(os.path.join(args.out, os.path.basename(src)))
            shutil.copyfile(src, out_dh[key])

        def as_written(directives):
            return [setup.files(x, **out_dh) for x in directives]

        kept = {}
        for server in servers:
            what = "%s/permissive" % server
            s, err, _t, results, access = run_config(
                setup, server, what, PERMISSIVE[server], probes, started, timing)
            if s is None:
                raise Fail("%s: the permissive server did not start:\n  %s"
                           % (what, "\n  ".join(err)))
            kept[server] = [p for p in probes if results[p["id"]]["ok"]]
            dropped = [{"id": p["id"], "error": results[p["id"]]["error"]}
                       for p in probes if not results[p["id"]]["ok"]]
            curl_dropped = [x["id"] for x in dropped if x["id"].startswith("curl-")]
            if curl_dropped:
                raise Fail("%s: curl probes failed under the permissive server: %s"
                           % (what, "; ".join("%s: %s" % (x["id"], x["error"])
                                              for x in dropped
                                              if x["id"] in curl_dropped)))
            os.makedirs(os.path.join(args.out, server), exist_ok=True)
            shutil.copyfile(access, os.path.join(args.out, server, "permissive.log"))
            doc["servers"][server] = {
                "log": "%s/permissive.log" % server,
                "log_format": APACHE_LOG_FORMAT if server == "apache" else NGINX_LOG_FORMAT,
                "log_format_directive": (
                    apache_logformat(APACHE_LOG_FORMAT, APACHE_LOG_NICK)
                    if server == "apache" else
                    "log_format %s '%s';" % (NGINX_LOG_NICK, NGINX_LOG_FORMAT)),
                "permissive_directives": as_written(PERMISSIVE[server]),
                "probes": [p["id"] for p in kept[server]],
                "probes_dropped": dropped,
            }
            log("%s: %d of %d probes ok, %d dropped" % (
                what, len(kept[server]), len(probes), len(dropped)))

        for server, name, directives in table:
            s, err, test_ok, results, _a = run_config(
                setup, server, name, directives, kept[server], started, timing)
            entry = {"name": name, "server": server, "directives": as_written(directives),
                     "config_test_passed": test_ok, "started": s is not None,
                     "start_error": err[0] if err else None,
                     "start_error_lines": err, "ok": None, "refused": None}
            if s is not None:
                entry["ok"] = [p["id"] for p in kept[server] if results[p["id"]]["ok"]]
                entry["refused"] = [{"id": p["id"], "error": results[p["id"]]["error"]}
                                    for p in kept[server] if not results[p["id"]]["ok"]]
                log("%s: %d ok, %d refused" % (name, len(entry["ok"]),
                                               len(entry["refused"])))
            else:
                log("%s: did not start (config test %s): %s" % (
                    name, "passed" if test_ok else "failed", err[0]))
            doc["configs"].append(entry)

        with open(os.path.join(args.out, "truth.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, ensure_ascii=False)
            f.write("\n")
        total = time.time() - t_start
        nstart = sum(1 for c in doc["configs"] if c["started"])
        log("timing: setup %.1fs; %s" % (t_setup, "; ".join(
            "%s %.1fs" % (n, s) for n, s, _ in timing)))
        log("done in %.1fs: %d candidate probes (%s), %d configs (%d started, "
            "%d not) -> %s" % (
                total, len(probes), ", ".join("%s %d kept" % (s, len(kept[s]))
                                              for s in servers),
                len(doc["configs"]), nstart, len(doc["configs"]) - nstart,
                os.path.join(args.out, "truth.json")))
        return 0
    except Fail as e:
        log("error: %s" % e)
        return 1
    except (KeyboardInterrupt, Terminated) as e:
        log("interrupted (%s); servers stopped" % (e or "SIGINT"))
        return 1
    finally:
        for proc in started:
            try:
                stop_group(proc, signal.SIGTERM, "server")
            except Exception as e:   # keep stopping the others
                log("warning: stopping pid %d: %s" % (proc.pid, e))
        if tmp:
            if args.keep_tmp:
                log("temporary directory kept: %s" % tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
