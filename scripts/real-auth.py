#!/usr/bin/env python3
"""Real HTTP Basic auth scenario for `tlsgap auth`, with ground truth.

Usage:  python3 scripts/real-auth.py [--small] [--selftest] [--check-only]
                                     [--apache-mode auto|attach|launch]
                                     [--classic [--ttt]] [--mpm prefork|event]
                                     [--keep-tmp] OUTDIR

The story: a MediaWiki-like site behind HTTP Basic auth is slow for some users
only.  Every page pulls CSS, JS and images, and every request re-verifies the
password (mod_authn_file re-reads the htpasswd file and re-hashes each time).

The script

  * makes an htpasswd file with the real `htpasswd` tool holding six users, one
    per scheme: shauser ({SHA}, -s), md5user ($apr1$, -m), cryptuser (DES
    crypt, -d), bc5user / bc10user / bc12user (bcrypt, -B -C 5/10/12);
  * times `htpasswd -vb` for every user outside Apache (the same
    apr_password_validate code mod_authn_file calls), median of 5 runs minus
    the {SHA} user's median (process start-up baseline);
  * starts a real Apache 2.4 (prefork, StartServers 2, mod_ssl, mod_auth_basic
    + mod_authn_file + mod_authz_user) on 127.0.0.1 on a free high port, with
    /wiki requiring a valid user and /public open, and the LogFormat of
    scripts/real-traces.py (ends in `%P %{begin:sec}t.%{begin:usec_frac}t %D`);
  * attaches `strace -ff -ttt -T -yy -s 4096 -o OUTDIR/traces/trace -p PARENT
    -p WORKER...` (falls back to starting Apache under strace when attaching
    is not allowed);
  * drives it with curl over HTTPS, one request per connection: every user
    loads /wiki/index.html and its five assets three times, the loads of all
    users interleaved request by request, an anonymous visitor loads the same
    files under /public, and every user sends two wrong passwords (401);
  * copies access.log, error.log, htpasswd, httpd.conf and traces/ into OUTDIR
    and writes OUTDIR/manifest.json (schema in README below, also written to
    OUTDIR/README.md).

--small traces with `-s 256` instead of `-s 4096` (TLS writes then take a
fraction of the space); that is how testdata/auth/real/ is made.

--classic makes the capture most operators have: `strace -ff -tt` with strace's
default 32-byte strings, and a plain combinedssl access.log (no %P, no %D); the
ground truth comes from a second log, truth.log (the LogFormat above), that tlsgap
is not given.  --mpm event uses the event MPM (one child, requests in threads).
--one-file (with --classic) traces with `strace -f -tt` into one file instead of
-ff's file per thread.
--classic also adds what a real site has on top of the six users above:
  * three more bcrypt users: bc13user (-B -C 13, ~0.5-1 s per verification; to
    keep the run short it loads the page with its assets in one round only and
    sends one wrong password), al (cost 10, a 2-character name) and
    alexandra.longname@example.org (cost 10; strace's 32-byte cut of the log
    write, `127.0.0.1 - alexandra.longname@e`, ends inside the name);
  * an unknown user, mallory (not in the htpasswd file), who sends two requests
    for the page: 401, `mallory` in %u (manifest `unknown_users`);
  * an IPv6 client: when the machine has an IPv6 loopback (::1 on lo in
    /proc/net/if_inet6 and a socket binds to ::1), Apache also listens on
    [::1]:PORT and bc12user's loads of one round go to https://[::1]:PORT/
    (manifest `ipv6`, and `client` on every request); without it everything
    goes to 127.0.0.1 and `ipv6` is false.
--ttt (with --classic only) traces with `strace -ff -ttt -T -y` (still the default
32-byte strings) and appends ` %D` to access.log's combinedssl format.

--selftest runs the scenario and then checks the manifest's own consistency;
--check-only checks an existing OUTDIR without running anything.

Only the Python standard library is used.  Needs root (Apache drops to
www-data and strace must attach to it) and the Debian packages strace apache2
apache2-utils curl openssl python3.  Takes about 20-30 s (--classic about
35-60 s).  Exit status 0 on success, 1 on any failure (with a message naming the
failing step), 2 on bad usage (also --ttt without --classic).  Apache and strace
are stopped by PID / process group, also on SIGTERM.
"""

import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import (  # noqa: E402  (needs the sys.path entry above)
    APACHE_MODULES, host_versions, AttachFailed, Fail, PortTaken, alive, apache_basic_auth,
    apache_docroot, apache_head, apache_logformat, apache_prefork, apache_ssl_vhost,
    children_cpu_seconds, children_of, first_line, fix_perms, free_port, log, make_cert,
    raise_on_termination, read_pidfile, rel, run, set_prog, stop_group, tail,
    tool_path, tracer_of, wait_port, write_conf)

PROG = "real-auth"
set_prog(PROG)
SCHEMA = 1

# name, password (test data), htpasswd flags, scheme, bcrypt cost, hash check
USERS = [
    ("shauser", "sha-secret-1", ["-s"], "sha1", None, r"\{SHA\}[A-Za-z0-9+/]{27}="),
    ("md5user", "md5-secret-1", ["-m"], "apr1", None, r"\$apr1\$[./0-9A-Za-z]{1,8}\$[./0-9A-Za-z]{22}"),
    # DES crypt uses only the first 8 characters of the password
    ("cryptuser", "crypt8pw", ["-d"], "crypt", None, r"[./0-9A-Za-z]{13}"),
    ("bc5user", "bc5-secret-1", ["-B", "-C", "5"], "bcrypt", 5, r"\$2y\$05\$[./0-9A-Za-z]{53}"),
    ("bc10user", "bc10-secret-1", ["-B", "-C", "10"], "bcrypt", 10, r"\$2y\$10\$[./0-9A-Za-z]{53}"),
    ("bc12user", "bc12-secret-1", ["-B", "-C", "12"], "bcrypt", 12, r"\$2y\$12\$[./0-9A-Za-z]{53}"),
]
# --classic only: more users, added to USERS by use_classic_users()
CLASSIC_USERS = [
    ("bc13user", "bc13-secret-1", ["-B", "-C", "13"], "bcrypt", 13, r"\$2y\$13\$[./0-9A-Za-z]{53}"),
    # a 2-character name
    ("al", "al-secret-1", ["-B", "-C", "10"], "bcrypt", 10, r"\$2y\$10\$[./0-9A-Za-z]{53}"),
    # strace's 32-byte cut of the log write `127.0.0.1 - alexandra.longname@e` ends
    # inside the name
    ("alexandra.longname@example.org", "alexandra-secret-1", ["-B", "-C", "10"], "bcrypt",
     10, r"\$2y\$10\$[./0-9A-Za-z]{53}"),
]
# --classic only: rounds (0-based) in which a user loads the page / sends a wrong
# password, where not every round / not the first WRONG_PER_USER rounds.  Cost 13 is
# ~0.5-1 s per request: one load and one wrong password keep the run short.
CLASSIC_LOAD_ROUNDS = {"bc13user": [0]}
CLASSIC_WRONG_ROUNDS = {"bc13user": [0]}
# --classic only: users that are not in the htpasswd file (401 without any hash
# verified, the name still in %u): name, password sent, rounds with one request each
UNKNOWN_USERS = [("mallory", "letmein-1", [0, 1])]
# --classic only, when the machine has an IPv6 loopback: this user's loads of this
# round go to https://[::1]:PORT/
IPV6_USER = "bc12user"
IPV6_ROUND = 1
IPV6 = False
USER_NAMES = [u[0] for u in USERS]
USER_BY_NAME = {u[0]: u for u in USERS}
BASELINE_USER = "shauser"
WRONG_PASSWORD = "not-the-password"
# how much work one verification is, for the manifest (not measured)
ITERATIONS = {
    "sha1": "1 SHA-1 of the password (no salt)",
    "apr1": "1000 MD5 rounds (APR's $apr1$ MD5-crypt)",
    "crypt": "25 DES encryptions (traditional crypt(3), 8 characters max)",
    "bcrypt": "2^cost Blowfish key expansions",
}

VERIFY_RUNS = 5
# bcrypt cost 5 is ~2 ms here and cost 10 ~50-100 ms; `htpasswd -vb` jitter is
# a few ms, so 20 ms separates "ranked" from "cheap" with margin on both sides
RANK_THRESHOLD_SECONDS = 0.020
LOADS_PER_USER = 3
WRONG_PER_USER = 2
PAGE = "index.html"
ASSETS = ["style.css", "app.js", "logo.png", "banner.png", "icon.png"]
KIND = {"html": "html", "css": "css", "js": "js", "png": "png"}
PROTECTED = "/wiki"
PUBLIC = "/public"
REQUEST_PAUSE = 0.02  # seconds between requests: keeps them apart in the traces

LOG_FORMAT = ('%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-agent}i" '
              "%{SSL_PROTOCOL}x %{SSL_CIPHER}x %P "
              "%{begin:sec}t.%{begin:usec_frac}t %D")
# --classic: what most operators have. The access log is plain combinedssl (no %P, no
# %D); the ground truth comes from a second log (truth.log, the format above) that
# tlsgap is not given.
CLASSIC = False
# --mpm event: one child process serving requests in threads (strace -ff writes one
# file per thread).
MPM = "prefork"
CLASSIC_LOG_FORMAT = ('%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" '
                      "%{SSL_PROTOCOL}x %{SSL_CIPHER}x")
# --classic --ttt: strace -ttt -T -y, and the operator has %D after combinedssl
TTT = False
# --one-file: `strace -f -tt -o trace -p ...`, every traced thread in one file, each
# line led by its PID; a call another thread's line interrupts is printed in two
# (`<unfinished ...>`, `<... resumed>`).
ONE_FILE = False
TTT_LOG_FORMAT = CLASSIC_LOG_FORMAT + " %D"
# one line of access.log in --classic mode (either format), to check it against truth.log
CLASSIC_LOG_RE = re.compile(
    r'^(?P<client>\S+) (?P<ident>\S+) (?P<user>\S+) \[(?P<time>[^\]]+)\] '
    r'"(?P<request>[^"]*)" (?P<status>\d{3}) (?P<bytes>\S+) "(?P<referer>[^"]*)" '
    r'"(?P<ua>[^"]*)" (?P<proto>\S+) (?P<cipher>\S+)(?: (?P<dur>\d+))?$')
LOG_RE = re.compile(
    r'^(?P<client>\S+) (?P<ident>\S+) (?P<user>\S+) \[(?P<time>[^\]]+)\] '
    r'"(?P<request>[^"]*)" (?P<status>\d{3}) (?P<bytes>\S+) "(?P<referer>[^"]*)" '
    r'"(?P<ua>[^"]*)" (?P<proto>\S+) (?P<cipher>\S+) (?P<pid>\d+) '
    r'(?P<begin>\d+\.\d{6}) (?P<dur>\d+)$')

CURL_W = ("%{http_code} %{time_connect} %{time_appconnect} %{time_pretransfer} "
          "%{time_starttransfer} %{time_total} %{size_download}\n")

# ---------------------------------------------------------------------------
# helpers (the shared ones are in scripts/serverlib.py)
# ---------------------------------------------------------------------------

def utc_offset(seconds):
    sign = "+" if seconds >= 0 else "-"
    seconds = abs(int(seconds))
    return "%s%02d%02d" % (sign, seconds // 3600, seconds % 3600 // 60)


def use_classic_users():
    """--classic: the users of CLASSIC_USERS join USERS, USER_NAMES and
    USER_BY_NAME (extended in place, after the six of the checked-in sample)."""
    for u in CLASSIC_USERS:
        if u[0] not in USER_BY_NAME:
            USERS.append(u)
            USER_NAMES.append(u[0])
            USER_BY_NAME[u[0]] = u


def ipv6_loopback():
    """(True, None) when ::1 is up on lo (/proc/net/if_inet6) and a socket binds to
    it; else (False, why)."""
    try:
        with open("/proc/net/if_inet6") as f:
            rows = [l.split() for l in f]
    except OSError as e:
        return False, "cannot read /proc/net/if_inet6: %s" % e
    if not any(len(r) >= 6 and r[0] == "0" * 31 + "1" and r[-1] == "lo" for r in rows):
        return False, "no ::1 on lo in /proc/net/if_inet6"
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    except OSError as e:
        return False, "no IPv6 sockets: %s" % e
    try:
        s.bind(("::1", 0))
    except OSError as e:
        return False, "cannot bind a socket to ::1: %s" % e
    finally:
        s.close()
    return True, None


def free_port_for_apache():
    """A port free on 127.0.0.1 and, when Apache listens there too, on ::1."""
    port = free_port()
    for _ in range(20):
        if not IPV6:
            return port
        s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        try:
            s.bind(("::1", port))
            return port
        except OSError:
            port = free_port()
        finally:
            s.close()
    return port  # Apache then fails to bind and start() reports PortTaken


def url_host(client):
    return "[::1]" if client == "::1" else client


# ---------------------------------------------------------------------------
# the site
# ---------------------------------------------------------------------------

def png(width, height, seed):
    """A valid RGB PNG (gradient), made with zlib only."""
    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        for x in range(width):
            raw += bytes(((x * 4 + seed) & 255, (y * 4 + seed * 3) & 255,
                          ((x ^ y) * 8 + seed * 7) & 255))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b""))


PAGE_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} - TlsgapWiki</title>
<link rel="stylesheet" href="style.css">
<script src="app.js" defer></script>
</head>
<body>
<div id="banner"><img src="banner.png" alt="TlsgapWiki" width="200" height="24"></div>
<div id="logo"><img src="logo.png" alt="" width="48" height="48"></div>
<div id="content">
<h1><img src="icon.png" alt="" width="16" height="16"> {title}</h1>
<p>This page is served by scripts/real-auth.py to test <code>tlsgap auth</code>.
Every page pulls a style sheet, a script and three images, and every one of
those requests carries the Basic credentials again, so the server verifies the
password six times per page view.</p>
{filler}
</div>
</body>
</html>
"""

STYLE_CSS = """/* TlsgapWiki skin (scripts/real-auth.py) */
body { font-family: sans-serif; margin: 0; color: #202122; background: #f8f9fa; }
#banner { background: #eaecf0; padding: 4px 12px; border-bottom: 1px solid #a2a9b1; }
#logo { position: absolute; top: 40px; left: 12px; }
#content { margin-left: 176px; padding: 16px 24px; background: #fff;
           border: 1px solid #a7d7f9; border-right: 0; line-height: 1.6; }
h1 { font-family: serif; font-weight: normal; border-bottom: 1px solid #a2a9b1; }
""" + "".join(".toc-level-%d { margin-left: %dem; font-size: %d%%; }\n"
              % (i, i, 100 - i * 3) for i in range(1, 9))

APP_JS = """/* TlsgapWiki client (scripts/real-auth.py) */
(function () {
  'use strict';
  function toc() {
    var heads = document.querySelectorAll('#content h2, #content h3');
    var list = document.createElement('ol');
    for (var i = 0; i < heads.length; i++) {
      var li = document.createElement('li');
      li.className = 'toc-level-' + (heads[i].tagName === 'H2' ? 1 : 2);
      li.textContent = heads[i].textContent;
      list.appendChild(li);
    }
    return list;
  }
  document.addEventListener('DOMContentLoaded', function () {
    var c = document.getElementById('content');
    if (c) { c.insertBefore(toc(), c.firstChild); }
  });
})();
"""


def make_site(tmp):
    www = os.path.join(tmp, "www")
    filler = "\n".join("<h2>Section %d</h2>\n<p>Lorem ipsum dolor sit amet, section %d "
                       "of the test page.</p>" % (i, i) for i in range(1, 9))
    files = {
        PAGE: None, "style.css": STYLE_CSS.encode(), "app.js": APP_JS.encode(),
        "logo.png": png(48, 48, 11), "banner.png": png(200, 24, 42),
        "icon.png": png(16, 16, 99),
    }
    sizes = {}
    for sub, title in ((PROTECTED, "Main Page"), (PUBLIC, "Public Page")):
        d = os.path.join(www, sub.strip("/"))
        os.makedirs(d)
        for name, data in files.items():
            if data is None:
                data = PAGE_HTML.format(title=title, filler=filler).encode()
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
            sizes["%s/%s" % (sub, name)] = len(data)
    return www, sizes


def make_htpasswd(tmp, htpasswd_bin):
    d = os.path.join(tmp, "auth")
    os.makedirs(d)
    htp = os.path.join(d, "htpasswd")
    for i, (user, pw, hflags, _scheme, _cost, _re) in enumerate(USERS):
        r = run([htpasswd_bin] + (["-c"] if i == 0 else []) + ["-b"] + hflags
                + [htp, user, pw], step="creating htpasswd (%s)" % user)
        if r.returncode != 0:
            raise Fail("creating htpasswd: htpasswd %s for %s failed (exit %d): %s" % (
                " ".join(hflags), user, r.returncode, r.stderr.decode(errors="replace")))
    with open(htp) as f:
        text = f.read()
    got = dict(l.split(":", 1) for l in text.splitlines() if ":" in l)
    for user, _pw, hflags, scheme, _cost, pat in USERS:
        if user not in got or not re.fullmatch(pat, got[user]):
            raise Fail("creating htpasswd: `htpasswd %s` wrote an unexpected %s hash "
                       "for %s (check the htpasswd version)" % (" ".join(hflags), scheme, user))
    return htp, got


def make_site_cert(tmp, openssl):
    cert = os.path.join(tmp, "cert.pem")
    key = os.path.join(tmp, "key.pem")
    # an EC key keeps the certificate (and the handshake writes in the traces) small
    step = "making the self-signed certificate"
    make_cert(openssl, cert, key, kind="ec", what=step + ": openssl req", step=step)
    return cert, key


def apache_conf(d, www, htp, cert, key, port, as_root):
    os.makedirs(os.path.join(d, "run"))
    os.chmod(d, 0o755)
    L = apache_head("scripts/real-auth.py", d, [
        "mpm_" + MPM, "authn_core", "authn_file", "authz_core", "authz_user",
        "auth_basic", "dir", "mime", "socache_shmcb", "ssl"])
    if as_root:
        L += ["User www-data", "Group www-data"]
    if os.path.exists("/etc/mime.types"):
        L.append("TypesConfig /etc/mime.types")
    else:
        L += ["TypesConfig /dev/null", "AddType text/html .html", "AddType text/css .css",
              "AddType text/javascript .js", "AddType image/png .png"]
    if MPM == "event":
        L += ["StartServers 1", "ServerLimit 1", "ThreadLimit 4", "ThreadsPerChild 4",
              "MaxRequestWorkers 4", "MinSpareThreads 1", "MaxSpareThreads 4",
              "MaxConnectionsPerChild 0", "Timeout 10", "KeepAlive Off"]
    else:
        L += apache_prefork(2, 1, 2, 4)
    L += ["Listen 127.0.0.1:%d" % port]
    if IPV6:
        L += ["Listen [::1]:%d" % port]
    # Debian's default level: 401s still log AH01617 (auth_basic:error)
    L += ["ErrorLog %s/error.log" % d, "LogLevel warn"]
    L += apache_docroot(www)
    L += apache_basic_auth(PROTECTED, "TlsgapWiki", htp)
    L += ["SSLSessionCache shmcb:%s/run/ssl_scache(512000)" % d,
          apache_logformat(LOG_FORMAT, "tlsgap")]
    if CLASSIC:
        L += [apache_logformat(TTT_LOG_FORMAT if TTT else CLASSIC_LOG_FORMAT,
                               "combinedssl_classic"),
              "CustomLog %s/access.log combinedssl_classic" % d,
              "CustomLog %s/truth.log tlsgap" % d]
    else:
        L += ["CustomLog %s/access.log tlsgap" % d]
    vhost = apache_ssl_vhost(port, [(cert, key)])
    if IPV6:
        # the same virtual host answers on [::1]:PORT
        assert vhost[0] == "<VirtualHost 127.0.0.1:%d>" % port, vhost[0]
        vhost[0] = "<VirtualHost 127.0.0.1:%d [::1]:%d>" % (port, port)
    L += vhost
    return write_conf(os.path.join(d, "httpd.conf"), L)


# ---------------------------------------------------------------------------
# verification cost outside Apache
# ---------------------------------------------------------------------------

def in_process_verify(user, pw, h):
    """A cross-check at microsecond resolution: the same hash verified inside
    this process (libxcrypt via Python's crypt for bcrypt and DES crypt,
    hashlib for {SHA}).  None where not available (APR's $apr1$)."""
    scheme = USER_BY_NAME[user][3]
    fn = None
    if scheme == "sha1":
        method = "hashlib.sha1 + base64 in Python"

        def fn():
            return "{SHA}" + base64.b64encode(hashlib.sha1(pw.encode()).digest()).decode() == h
    elif scheme in ("bcrypt", "crypt"):
        method = "crypt.crypt (libxcrypt) in Python"
        try:
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import crypt  # removed in Python 3.13
        except Exception:
            return None, None

        def fn():
            return crypt.crypt(pw, h) == h
    else:
        return None, None
    times = []
    for _ in range(3):
        t0 = time.perf_counter()
        ok = fn()
        times.append(time.perf_counter() - t0)
        if not ok:
            return None, method + " (did not verify)"
    return statistics.median(times), method


def measure_verification(htpasswd_bin, htp, hashes):
    """CPU time (user + system) of `htpasswd -vb` per user: apr_password_validate,
    the code mod_authn_file calls.  The {SHA} user's median is the process start-up
    baseline that is subtracted.  CPU time, not wall time: another build on the
    machine stretches wall time, not the work done."""
    runs = {u: [] for u in USER_NAMES}
    # users take turns, so a burst of load on the machine hits all of them alike
    for _ in range(VERIFY_RUNS):
        for user, pw, *_ in USERS:
            t0 = children_cpu_seconds()
            r = run([htpasswd_bin, "-vb", htp, user, pw],
                    step="measuring verification (htpasswd -vb %s)" % user)
            runs[user].append(children_cpu_seconds() - t0)
            if r.returncode != 0:
                raise Fail("measuring verification: htpasswd -vb %s %s failed (exit %d): %s"
                           % (htp, user, r.returncode, r.stderr.decode(errors="replace")))
    base = statistics.median(runs[BASELINE_USER])
    out = {}
    for user, pw, *_ in USERS:
        med = statistics.median(runs[user])
        ip, ip_method = in_process_verify(user, pw, hashes[user])
        out[user] = {"htpasswd_vb_runs_seconds": runs[user],
                     "htpasswd_vb_median_seconds": med,
                     "verify_seconds_raw": med - base,
                     "verify_seconds": max(0.0, med - base),
                     "in_process_seconds": ip, "in_process_method": ip_method}
    return base, out


# ---------------------------------------------------------------------------
# Apache under strace
# ---------------------------------------------------------------------------

def trace_env():
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    return env


class Session:
    """One Apache run with strace: attach to running workers or launch under strace."""

    def __init__(self, tmp, outdir, site, apache_bin, strace, flags, mode, as_root,
                 attempt):
        self.tmp, self.outdir = tmp, outdir
        self.www, self.htp, self.cert, self.key = site
        self.apache_bin, self.strace, self.flags = apache_bin, strace, flags
        self.mode, self.as_root, self.attempt = mode, as_root, attempt
        self.apache = self.tracer = None
        self.err_file = self.apache_out = None
        self.parent = None
        self.port = None
        self.workers_at_attach = []
        self.cmd = []

    def dir(self):
        return os.path.join(self.tmp, "apache-%s-%d" % (self.mode, self.attempt))

    def traces_dir(self):
        return os.path.join(self.outdir, "traces")

    def trace_base(self):
        return os.path.join(self.traces_dir(), "trace")

    def strace_cmd(self):
        return [self.strace] + self.flags + ["-o", self.trace_base()]

    def start(self):
        d = self.dir()
        self.port = free_port_for_apache()
        self.conf = apache_conf(d, self.www, self.htp, self.cert, self.key, self.port,
                                self.as_root)
        r = run([self.apache_bin, "-f", self.conf, "-t"], step="apache config test")
        if r.returncode != 0:
            raise Fail("apache config test failed:\n" + r.stderr.decode(errors="replace"))
        if os.path.isdir(self.traces_dir()):
            shutil.rmtree(self.traces_dir())
        os.makedirs(self.traces_dir())
        self.strace_err = os.path.join(d, "strace.stderr")
        self.apache_out = open(os.path.join(d, "stdout.log"), "wb")
        self.err_file = open(self.strace_err, "wb")
        pidfile = os.path.join(d, "run", "httpd.pid")
        if self.mode == "attach":
            self.apache = subprocess.Popen(
                [self.apache_bin, "-f", self.conf, "-DFOREGROUND"],
                stdin=subprocess.DEVNULL, stdout=self.apache_out,
                stderr=subprocess.STDOUT, cwd=d, start_new_session=True)
            self.parent = self.apache.pid
            if (read_pidfile(pidfile, expect=self.parent) is None
                    or not wait_port(self.port, lambda: self.apache.poll() is None)):
                raise self.start_failure()
            kids = self.wait_workers()
            pids = [self.parent] + kids
            cmd = self.strace_cmd()
            for p in pids:
                cmd += ["-p", str(p)]
            self.cmd = cmd
            # argv[0] "strace": its messages then read "strace: ..."
            self.tracer = subprocess.Popen(["strace"] + cmd[1:], executable=cmd[0],
                                           stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL,
                                           stderr=self.err_file, env=trace_env(),
                                           cwd=d, start_new_session=True)
            self.wait_attached(pids)
            self.workers_at_attach = kids
        else:
            cmd = self.strace_cmd() + ["--", self.apache_bin, "-f", self.conf,
                                       "-DFOREGROUND"]
            self.cmd = cmd
            self.tracer = subprocess.Popen(["strace"] + cmd[1:], executable=cmd[0],
                                           stdin=subprocess.DEVNULL,
                                           stdout=self.apache_out,
                                           stderr=self.err_file, env=trace_env(),
                                           cwd=d, start_new_session=True)
            self.parent = read_pidfile(pidfile)
            if (self.parent is None
                    or not wait_port(self.port, lambda: self.tracer.poll() is None)):
                raise self.start_failure()
            self.workers_at_attach = self.wait_workers()
        time.sleep(0.5)  # let every tracee settle into its wait

    def start_failure(self):
        d = self.dir()
        for log_name in ("error.log", "stdout.log"):
            try:
                with open(os.path.join(d, log_name), "rb") as f:
                    if b"Address already in use" in f.read():
                        return PortTaken("starting apache: port %d already in use" % self.port)
            except OSError:
                pass
        return Fail("starting apache (%s mode, port %d) failed.\n--- error.log ---\n%s\n"
                    "--- stdout/stderr ---\n%s%s" % (
                        self.mode, self.port, tail(os.path.join(d, "error.log")),
                        tail(os.path.join(d, "stdout.log")),
                        ("\n--- strace stderr ---\n" + tail(self.strace_err))
                        if self.tracer is not None else ""))

    def wait_workers(self, n=None, timeout=10):
        n = n if n is not None else (1 if MPM == "event" else 2)
        deadline = time.time() + timeout
        kids = children_of(self.parent)
        while len(kids) < n and time.time() < deadline:
            time.sleep(0.1)
            kids = children_of(self.parent)
        if len(kids) < n:
            raise Fail("starting apache: expected %d %s workers under pid %d, found %s"
                       % (n, MPM, self.parent, kids))
        return kids

    def wait_attached(self, pids, timeout=15):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.tracer.poll() is not None:
                break
            if all(tracer_of(p) == self.tracer.pid for p in pids):
                return
            time.sleep(0.05)
        self.err_file.flush()
        raise AttachFailed("attaching strace: could not attach to Apache pids %s (%s):\n%s" % (
            pids, "strace exited with %s" % self.tracer.returncode
            if self.tracer.poll() is not None else "timed out", tail(self.strace_err)))

    def stop(self):
        """Stop tracing first (attach mode), then Apache.  Idempotent."""
        if self.mode == "attach":
            stop_group(self.tracer, signal.SIGINT, "strace")
            stop_group(self.apache, signal.SIGTERM, "apache")
        else:
            # Apache is strace's child: stop it and let strace finish on its own
            if self.parent and self.tracer is not None and self.tracer.poll() is None:
                try:
                    os.kill(self.parent, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    self.tracer.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    pass
            stop_group(self.tracer, signal.SIGINT, "strace (launch mode)")
        for f in (self.err_file, self.apache_out):
            if f is not None and not f.closed:
                f.close()
        if self.parent and self.parent != os.getpid() and alive(self.parent):
            try:
                os.kill(self.parent, signal.SIGKILL)
            except ProcessLookupError:
                pass


# ---------------------------------------------------------------------------
# the request plan
# ---------------------------------------------------------------------------

def kind_of(path):
    return KIND.get(path.rsplit(".", 1)[-1], "other")


def plan_requests():
    """List of dicts (user None = anonymous /public visitor), in sending order.

    Round r (r = 0..LOADS_PER_USER-1): in rounds 0 and 1 every user first sends
    one wrong password for the page (a stale saved password); then every user
    and the anonymous visitor load the page and its assets, interleaved
    request by request (u1 page, u2 page, ..., u1 style.css, u2 style.css, ...),
    the user order rotated by one each round.

    --classic: users in CLASSIC_LOAD_ROUNDS / CLASSIC_WRONG_ROUNDS load the page /
    send a wrong password only in the rounds listed there; the UNKNOWN_USERS send
    one request each in their rounds, after the wrong passwords; every request has
    a `client` (IPV6_USER's loads of IPV6_ROUND go to ::1 when IPV6)."""
    plan = []
    names = list(USER_NAMES)
    all_rounds = range(LOADS_PER_USER)
    wrong_default = set(range(WRONG_PER_USER))
    load_rounds = CLASSIC_LOAD_ROUNDS if CLASSIC else {}
    wrong_rounds = CLASSIC_WRONG_ROUNDS if CLASSIC else {}
    unknown = UNKNOWN_USERS if CLASSIC else []
    for rnd in all_rounds:
        order = names[rnd % len(names):] + names[:rnd % len(names)]
        wrong = [u for u in order if rnd in wrong_rounds.get(u, wrong_default)]
        wrong += [name for name, _pw, rounds in unknown if rnd in rounds]
        for u in wrong:
            plan.append({"user": u, "password_ok": False, "round": rnd,
                         "path": "%s/%s" % (PROTECTED, PAGE), "referer": None,
                         "load": None})
        loaders = [u for u in order if rnd in load_rounds.get(u, all_rounds)]
        visitors = loaders[:3] + [None] + loaders[3:]
        for i, name in enumerate([PAGE] + ASSETS):
            for u in visitors:
                base = PROTECTED if u else PUBLIC
                plan.append({
                    "user": u, "password_ok": True if u else None, "round": rnd,
                    "path": "%s/%s" % (base, name),
                    "referer": None if i == 0 else "%s/%s" % (base, PAGE),
                    "load": "%s#%d" % (u or "anonymous", rnd + 1)})
    for n, p in enumerate(plan, 1):
        p["n"] = n
        p["kind"] = kind_of(p["path"])
        p["auth"] = p["user"] is not None
        p["expected_status"] = 200 if (p["user"] is None or p["password_ok"]) else 401
        if CLASSIC:
            p["client"] = ("::1" if IPV6 and p["user"] == IPV6_USER
                           and p["round"] == IPV6_ROUND and p["load"] else "127.0.0.1")
    return plan


def password_of(user):
    if user in USER_BY_NAME:
        return USER_BY_NAME[user][1]
    return {name: pw for name, pw, _rounds in UNKNOWN_USERS}[user]


def do_request(port, p):
    cmd = ["curl", "-q", "-sS", "-k", "--noproxy", "*", "--http1.1",
           "--max-time", "20", "--connect-timeout", "5",
           "-o", "/dev/null", "-w", CURL_W]
    if p["user"]:
        known = p["user"] in USER_BY_NAME
        pw = password_of(p["user"]) if p["password_ok"] or not known else WRONG_PASSWORD
        cmd += ["-u", "%s:%s" % (p["user"], pw)]
    host = url_host(p.get("client", "127.0.0.1"))
    if ":" in host:
        cmd.append("-g")  # [::1] is an address, not a curl glob
    if p["referer"]:
        cmd += ["-e", "https://%s:%d%s" % (host, port, p["referer"])]
    cmd.append("https://%s:%d%s" % (host, port, p["path"]))
    step = "request n=%d (%s %s%s)" % (p["n"], p["user"] or "anonymous", p["path"],
                                       " from ::1" if ":" in host else "")
    t0 = time.time()
    r = run(cmd, step=step, timeout=30)
    t1 = time.time()
    if r.returncode != 0:
        raise Fail("%s: curl failed (exit %d): %s" % (
            step, r.returncode, r.stderr.decode(errors="replace").strip()))
    parts = r.stdout.decode().split()
    if len(parts) < 7:
        raise Fail("%s: unexpected curl -w output %r" % (step, r.stdout))
    return {
        "status": int(parts[0]),
        "curl": {"start_unix": round(t0, 6), "end_unix": round(t1, 6),
                 "time_connect": float(parts[1]), "time_appconnect": float(parts[2]),
                 "time_pretransfer": float(parts[3]),
                 "time_starttransfer": float(parts[4]), "time_total": float(parts[5]),
                 "size_download": int(float(parts[6]))},
    }


def drive(sess, plan):
    reqs = []
    for p in plan:
        res = do_request(sess.port, p)
        if res["status"] != p["expected_status"]:
            raise Fail("request n=%d (%s %s): got HTTP %d, expected %d" % (
                p["n"], p["user"] or "anonymous", p["path"], res["status"],
                p["expected_status"]))
        r = {k: p[k] for k in ("n", "user", "auth", "password_ok", "path", "kind",
                               "round", "load", "referer", "expected_status")}
        if CLASSIC:
            r["client"] = p["client"]
        r["status"] = res["status"]
        r["curl"] = res["curl"]
        reqs.append(r)
        time.sleep(REQUEST_PAUSE)
    return reqs


def parse_log_line(line):
    m = LOG_RE.match(line)
    if not m:
        return None
    req = m.group("request").split(" ")
    user = m.group("user")
    return {"client": m.group("client"),
            "pid": int(m.group("pid")), "begin_unix": float(m.group("begin")),
            "duration_us": int(m.group("dur")),
            "user": None if user == "-" else user,
            "status": int(m.group("status")),
            "method": req[0] if req else None,
            "path": req[1] if len(req) > 1 else None,
            "bytes": None if m.group("bytes") == "-" else int(m.group("bytes")),
            "time": m.group("time"),
            "tls_protocol": m.group("proto"), "tls_cipher": m.group("cipher")}


def read_lines(path):
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace").splitlines()


def join_access_log(reqs, path):
    """Requests are sent one at a time, so access-log line i is request n=i;
    path, user and status are checked on every line, and the client (%h) where
    the request has one (--classic)."""
    lines = read_lines(path)
    if len(lines) != len(reqs):
        raise Fail("joining the access log: %d lines for %d requests" % (len(lines), len(reqs)))
    tz = None
    for i, (line, r) in enumerate(zip(lines, reqs), 1):
        rec = parse_log_line(line)
        if rec is None:
            raise Fail("joining the access log: line %d does not match the LogFormat: %r"
                       % (i, line))
        if (rec["path"], rec["user"], rec["status"]) != (r["path"], r["user"], r["status"]):
            raise Fail("joining the access log: line %d is %s %s %s, request n=%d was %s %s %s"
                       % (i, rec["path"], rec["user"], rec["status"], r["n"], r["path"],
                          r["user"], r["status"]))
        client = rec.pop("client")
        if "client" in r and client != r["client"]:
            raise Fail("joining the access log: line %d has client %s, request n=%d was "
                       "sent from %s" % (i, client, r["n"], r["client"]))
        tz = rec.pop("time").rsplit(" ", 1)[-1]
        r["log"] = dict(line=i, **rec)
    return len(lines), tz


def check_classic_log(reqs, path):
    """--classic: access.log (what tlsgap is given) has one line per request too, in
    the same order as truth.log; client, user, path and status agree, and with
    --ttt its %D is truth.log's.  Returns a list of notes."""
    lines = read_lines(path)
    if len(lines) != len(reqs):
        raise Fail("checking access.log: %d lines for %d requests" % (len(lines), len(reqs)))
    notes = []
    for i, (line, r) in enumerate(zip(lines, reqs), 1):
        m = CLASSIC_LOG_RE.match(line)
        if m is None or (m.group("dur") is not None) != TTT:
            raise Fail("checking access.log: line %d does not match the LogFormat: %r"
                       % (i, line))
        req = m.group("request").split(" ")
        got = (m.group("client"), None if m.group("user") == "-" else m.group("user"),
               req[1] if len(req) > 1 else None, int(m.group("status")))
        want = (r["client"], r["user"], r["path"], r["status"])
        if got != want:
            raise Fail("checking access.log: line %d is %s %s %s %s, request n=%d was "
                       "%s %s %s %s" % ((i,) + got + (r["n"],) + want))
        if TTT and int(m.group("dur")) != r["log"]["duration_us"]:
            notes.append("access.log line %d: %%D %s, truth.log %d"
                         % (i, m.group("dur"), r["log"]["duration_us"]))
    return notes


# ---------------------------------------------------------------------------
# manifest
# ---------------------------------------------------------------------------

def summarize(values):
    if not values:
        return None
    return {"count": len(values), "median": statistics.median(values),
            "min": min(values), "max": max(values)}


def observed(reqs):
    """%D per user / per public path kind, as seen in this run's access log."""
    users = {}
    for u in USER_NAMES:
        ok = [r["log"]["duration_us"] for r in reqs if r["user"] == u and r["status"] == 200]
        bad = [r["log"]["duration_us"] for r in reqs if r["user"] == u and r["status"] == 401]
        by_kind = {}
        for k in ("html", "css", "js", "png"):
            v = [r["log"]["duration_us"] for r in reqs
                 if r["user"] == u and r["status"] == 200 and r["kind"] == k]
            by_kind[k] = summarize(v)
        users[u] = {"duration_us_ok": summarize(ok), "duration_us_401": summarize(bad),
                    "duration_us_ok_by_kind": by_kind}
    public = {}
    for k in ("html", "css", "js", "png"):
        public[k] = summarize([r["log"]["duration_us"] for r in reqs
                               if r["user"] is None and r["kind"] == k])
    return users, public


def versions(tools):
    v = {}
    v["strace"] = first_line(run([tools["strace"], "-V"], step="strace -V").stdout.decode())
    v["apache"] = first_line(run([tools["apache2"], "-v"], step="apache2 -v")
                             .stdout.decode()).replace("Server version: ", "")
    v["curl"] = " ".join(run(["curl", "--version"], step="curl --version")
                         .stdout.decode().split()[:2])
    v["openssl"] = " ".join(run([tools["openssl"], "version"], step="openssl version")
                            .stdout.decode().split()[:2])
    v["htpasswd"] = "apache2-utils (htpasswd has no version flag; same APR as %s)" % v["apache"]
    try:
        out = run(["dpkg-query", "-W", "-f", "${Version}", "apache2-utils"],
                  step="dpkg-query").stdout.decode().strip()
        if out:
            v["htpasswd"] = "apache2-utils " + out
    except Fail:
        pass
    host_versions(v)
    try:
        with open("/sys/devices/system/clocksource/clocksource0/current_clocksource") as f:
            v["clocksource"] = f.read().strip()
    except OSError:
        pass
    v["cpus"] = os.cpu_count()
    return v


def expected_ranking(users):
    by_cost = sorted(USER_NAMES, key=lambda u: -users[u]["verify_seconds"])
    ranked = [u for u in by_cost if users[u]["verify_seconds"] >= RANK_THRESHOLD_SECONDS]
    cheap = sorted(u for u in USER_NAMES if u not in ranked)
    return {
        "rule": "users whose verification costs at least threshold_seconds (measured "
                "outside Apache) are ranked, most expensive first; the others are "
                "'cheap', a tie group compared as a set (listed alphabetically): their "
                "sub-millisecond costs are below the noise of a TLS request",
        "threshold_seconds": RANK_THRESHOLD_SECONDS,
        "ranked": ranked,
        "cheap": cheap,
        "by_verify_seconds": by_cost,
    }


README = r"""# Real HTTP Basic auth scenario with ground truth (`tlsgap auth`)

Generated by `scripts/real-auth.py` — do not edit by hand. Regenerate with

    python3 scripts/real-auth.py {regen_flags}{outdir}

(from the repository root, as root; needs the Debian packages strace, apache2,
apache2-utils, curl, openssl and python3; binds only to 127.0.0.1 on a free high
port; takes about 30 s). `--selftest` also checks the result;
`--check-only` checks an existing directory.

Produced on {date} on {os}, kernel {kernel}, {cpus} CPUs, clocksource {clocksource},
in {run_seconds:.0f} s:

- {apache} (prefork MPM, StartServers 2, MaxRequestWorkers 4, KeepAlive Off,
  mod_ssl, mod_auth_basic + mod_authn_file + mod_authz_user)
- {strace}, {curl}, {openssl}, htpasswd from {htpasswd}, Python {python}

The story: a MediaWiki-like site behind HTTP Basic auth (`{protected}/`, AuthUserFile
`htpasswd`) is slow for some users only. A page view is `{protected}/index.html` plus
`style.css`, `app.js`, `logo.png`, `banner.png`, `icon.png`, and every one of those
requests re-verifies the password. `{public}/` serves the same files without auth.

Requests: {n_requests} over HTTPS, one per connection (curl `-k --http1.1`), sent one at
a time: each user loads the page with its assets {loads} times, the loads of all users and
of the anonymous `{public}` visitor interleaved request by request; each user also sends
{wrong} wrong passwords (401, user in `%u`).

Strace: `{strace_flags} -o traces/trace -p PARENT -p WORKER...` ({attach_mode} mode){small_note}.
`-ttt` stamps are epoch seconds (no time zone needed: `trace_tz` is null). The access
log's `%t` zone is `{log_tz}`.

    LogFormat "{log_format}"

## Users (verification measured outside Apache)

`verify_seconds` = median CPU time of {runs} `htpasswd -vb` runs minus the `{{SHA}}` user's median
(process start-up, {base:.4f} s here); `in_process` = the same hash verified in Python
(libxcrypt / hashlib), a sub-millisecond cross-check. `%D` = median request duration in
the access log for this user's 200s (microseconds).

| user | scheme | cost | verify_seconds | in_process | requests ok/401 | median %D ok | median %D 401 |
|---|---|---|---|---|---|---|---|
{user_rows}

Public (no auth) median %D: {public_row}.

Expected ranking (cost per request, descending): {ranked}; cheap (tie group, below
{threshold_ms:.0f} ms): {cheap}.

## Files

- `access.log` (line i = request n=i), `error.log` (LogLevel warn: 401s log
  `AH01617 ... Password Mismatch`), `httpd.conf`, `htpasswd` (test passwords only;
  `tlsgap` must never print its hashes), `traces/trace.<pid>` (one per process:
  the Apache parent and the prefork workers; `%P` in the log = the suffix).
- The paths inside the traces are those at creation time (`paths_at_creation`).

## manifest.json

- `schema` (1), `generator`, `mode` (`full` = `-s 4096` | `small` = `-s 256`),
  `created_unix`, `created_utc`, `finished_utc`, `run_seconds`
- `utc_offset` (`+HHMM`), `utc_offset_seconds`: the run's local zone;
  `access_log_tz` (the zone in `%t`); `trace_tz` (null: `-ttt` is epoch);
  `trace_timestamps` (`ttt`)
- `versions`: `strace`, `apache`, `curl`, `openssl`, `htpasswd`, `python`,
  `kernel`, `os`, `clocksource`, `cpus`
- `paths` (relative to this directory): `access_log`, `error_log`, `htpasswd`,
  `traces_dir`, `config`, `readme`; `paths_at_creation`: `outdir`, `server_root`,
  `docroot`, `htpasswd`, `traces_dir` (absolute, as in the traces)
- `log_format` (the LogFormat string), `log_regex` (a Python regex for one line)
- `apache`: `version`, `mpm`, `port`, `parent_pid`, `worker_pids_at_attach`,
  `worker_pids_at_end`, `pids_that_served`, `start_servers`, `max_request_workers`,
  `keepalive`, `protected_prefix`, `public_prefix`, `file_sizes` (path -> bytes)
- `strace`: `flags`, `argv` (exact, real PIDs), `attach_mode` (`attach` | `launch`
  = Apache started under strace because attaching failed), `string_limit`,
  `files` (relative), `output` (`per-pid`)
- `verification`: `method`, `runs`, `baseline_user`, `baseline_median_seconds`
- `users`: name -> `scheme` (`sha1` `apr1` `crypt` `bcrypt`), `hash_prefix`,
  `htpasswd_flags`, `cost` (bcrypt cost, else null), `work` (text), `password`
  (test data), `requests` (`total`, `ok`, `unauthorized`),
  `htpasswd_vb_runs_seconds`, `htpasswd_vb_median_seconds`, `verify_seconds_raw`
  (median minus baseline, may be slightly negative), `verify_seconds` (clamped at
  0: the expected extra cost per request), `in_process_seconds`,
  `in_process_method` (null for `$apr1$`), `ranked` (bool), `observed`
  (`duration_us_ok`, `duration_us_401`, `duration_us_ok_by_kind` {{html,css,js,png}};
  each `count`, `median`, `min`, `max` or null — this run's access log, not truth)
- `public`: `prefix`, `requests`, `observed` (kind -> `count` `median` `min` `max`)
- `expected_ranking`: `rule`, `threshold_seconds`, `ranked` (descending),
  `cheap` (alphabetical tie group), `by_verify_seconds` (all, descending)
- `plan`: `loads_per_user`, `wrong_password_per_user`, `page`, `assets`,
  `interleaving` (text), `request_pause_seconds`
- `requests[]`: `n`, `user` (null = anonymous), `auth`, `password_ok` (null when
  anonymous), `path`, `kind` (`html` `css` `js` `png`), `round` (0-based), `load`
  (`user#k`, null for a wrong password), `referer` (path or null),
  `expected_status`, `status` (curl), `curl` (`start_unix`, `end_unix`,
  `time_connect`, `time_appconnect`, `time_pretransfer`, `time_starttransfer`,
  `time_total` in seconds, `size_download`), `log` (`line`, `pid`, `begin_unix`,
  `duration_us`, `user`, `status`, `method`, `path`, `bytes`, `tls_protocol`,
  `tls_cipher`), `trace_file`, `expected_auth_seconds` (the user's
  `verify_seconds`; null when anonymous)
- `self_check`: `ok`, `notes` (what the script's own checks found odd)
"""


def write_manifest(path, manifest):
    """Indented JSON, but one line per request: the sample stays small and
    diffs between runs stay readable."""
    head = dict(manifest)
    reqs = head.pop("requests")
    tail_ = {"self_check": head.pop("self_check")}
    text = json.dumps(head, indent=1)[:-2]
    text += ',\n "requests": [\n'
    text += ",\n".join("  " + json.dumps(r) for r in reqs)
    text += "\n ],\n" + json.dumps(tail_, indent=1)[2:] + "\n"
    json.loads(text)  # it must still be one valid document
    with open(path, "w") as f:
        f.write(text)


def write_readme(outdir, m, small):
    users = m["users"]

    def fmt_med(s):
        return "%d µs" % s["median"] if s else "–"

    rows = []
    for u in USER_NAMES:
        x = users[u]
        rows.append("| %s | %s | %s | %.4f s | %s | %d/%d | %s | %s |" % (
            u, x["scheme"], x["cost"] if x["cost"] is not None else "–",
            x["verify_seconds"],
            "%.6f s" % x["in_process_seconds"] if x["in_process_seconds"] is not None
            else "–",
            x["requests"]["ok"], x["requests"]["unauthorized"],
            fmt_med(x["observed"]["duration_us_ok"]),
            fmt_med(x["observed"]["duration_us_401"])))
    pub = ", ".join("%s %s" % (k, fmt_med(v)) for k, v in m["public"]["observed"].items())
    v = m["versions"]
    outdir_arg = os.path.relpath(outdir) if not os.path.relpath(outdir).startswith("..") \
        else outdir
    text = README.format(
        regen_flags="--small " if small else "", outdir=outdir_arg,
        date=m["created_utc"][:10], os=v.get("os", "?"), kernel=v.get("kernel", "?"),
        cpus=v.get("cpus", "?"), clocksource=v.get("clocksource", "?"),
        run_seconds=m["run_seconds"], apache=v["apache"], strace=v["strace"],
        curl=v["curl"], openssl=v["openssl"], htpasswd=v["htpasswd"], python=v["python"],
        protected=PROTECTED, public=PUBLIC, n_requests=len(m["requests"]),
        loads=LOADS_PER_USER, wrong=WRONG_PER_USER,
        strace_flags="strace " + " ".join(m["strace"]["flags"]),
        attach_mode=m["strace"]["attach_mode"],
        small_note=(" — `--small`: `-s 256` instead of the recommended `-s 4096` keeps "
                    "this sample small; TLS writes and the htpasswd read() are cut at 256 "
                    "bytes (`\"...\"...`)" if small else ""),
        log_tz=m["access_log_tz"],
        log_format=LOG_FORMAT.replace("\\", "\\\\").replace('"', '\\"'),
        runs=VERIFY_RUNS, base=m["verification"]["baseline_median_seconds"],
        user_rows="\n".join(rows), public_row=pub,
        ranked=" > ".join(m["expected_ranking"]["ranked"]) or "(none)",
        cheap=", ".join(m["expected_ranking"]["cheap"]),
        threshold_ms=RANK_THRESHOLD_SECONDS * 1000)
    with open(os.path.join(outdir, "README.md"), "w") as f:
        f.write(text)


# ---------------------------------------------------------------------------
# self-check
# ---------------------------------------------------------------------------

def check_manifest(outdir):
    """The manifest's own consistency.  Returns a list of problems (empty = ok).
    A --classic manifest is checked against truth.log (the log with %P and %D)."""
    bad = []
    try:
        with open(os.path.join(outdir, "manifest.json")) as f:
            m = json.load(f)
    except (OSError, ValueError) as e:
        return ["cannot read %s/manifest.json: %s" % (outdir, e)]
    for key in ("schema", "versions", "paths", "log_format", "users", "expected_ranking",
                "requests", "strace", "apache", "utc_offset", "trace_tz"):
        if key not in m:
            bad.append("manifest has no %r" % key)
    if bad:
        return bad
    p = m["paths"]
    for key in ("access_log", "error_log", "htpasswd", "config"):
        if not os.path.isfile(os.path.join(outdir, p[key])):
            bad.append("paths.%s: %s is missing" % (key, p[key]))
    if not os.path.isdir(os.path.join(outdir, p["traces_dir"])):
        bad.append("paths.traces_dir: %s is missing" % p["traces_dir"])
    classic = m.get("mode") == "classic"
    names = list(m["users"]) if classic else USER_NAMES
    log_path = m["truth_log"]["path"] if classic else p["access_log"]
    try:
        with open(os.path.join(outdir, log_path), "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        lines = []
    reqs = m["requests"]
    if len(lines) != len(reqs):
        bad.append("access log has %d lines for %d requests" % (len(lines), len(reqs)))
    counts = {u: [0, 0] for u in names}
    for r in reqs:
        tag = "request n=%d (%s %s)" % (r["n"], r["user"] or "anonymous", r["path"])
        if r["status"] != r["expected_status"]:
            bad.append("%s: status %d, expected %d" % (tag, r["status"], r["expected_status"]))
        lg = r.get("log") or {}
        i = lg.get("line")
        if not isinstance(i, int) or not 1 <= i <= len(lines):
            bad.append("%s: no valid log line number" % tag)
            continue
        rec = parse_log_line(lines[i - 1])
        if rec is None:
            bad.append("%s: access log line %d does not parse" % (tag, i))
            continue
        for k in ("pid", "duration_us", "user", "status", "path"):
            if rec[k] != lg.get(k):
                bad.append("%s: log line %d has %s=%r, manifest says %r"
                           % (tag, i, k, rec[k], lg.get(k)))
        if (rec["path"], rec["user"], rec["status"]) != (r["path"], r["user"], r["status"]):
            bad.append("%s: log line %d is %s %s %d" % (tag, i, rec["path"], rec["user"],
                                                         rec["status"]))
        if "client" in r and rec["client"] != r["client"]:
            bad.append("%s: log line %d has client %s, request sent from %s"
                       % (tag, i, rec["client"], r["client"]))
        if not os.path.isfile(os.path.join(outdir, r.get("trace_file") or "-")):
            bad.append("%s: trace file %s missing" % (tag, r.get("trace_file")))
        if r["user"] in counts:
            counts[r["user"]][0 if r["status"] == 200 else 1] += 1
    if len({r["log"]["line"] for r in reqs if r.get("log")}) != len(reqs):
        bad.append("two requests share an access-log line")
    users = m["users"]
    for u in names:
        x = users.get(u)
        if x is None:
            bad.append("user %s missing" % u)
            continue
        if not isinstance(x.get("verify_seconds"), (int, float)) \
                or len(x.get("htpasswd_vb_runs_seconds") or []) < 3:
            bad.append("user %s: verification time not measured" % u)
        rq = x.get("requests", {})
        if [rq.get("ok"), rq.get("unauthorized")] != counts[u]:
            bad.append("user %s: requests %s, but the request list has ok/401 %s"
                       % (u, rq, counts[u]))
        loads = len(m["plan"]["load_rounds"][u]) if classic else LOADS_PER_USER
        if counts[u][0] != loads * (1 + len(ASSETS)) or counts[u][1] < 1:
            bad.append("user %s: %d ok / %d 401 requests" % (u, counts[u][0], counts[u][1]))
    if classic:
        bad += check_classic_manifest(m, reqs)
    if bad:
        return bad
    if classic:
        return check_classic_ranking(m)
    v = {u: users[u]["verify_seconds"] for u in USER_NAMES}
    if not v["bc12user"] > v["bc10user"] > v["bc5user"]:
        bad.append("verification times not bc12 > bc10 > bc5: %.4f, %.4f, %.4f"
                   % (v["bc12user"], v["bc10user"], v["bc5user"]))
    er = m["expected_ranking"]
    if er["ranked"][:2] != ["bc12user", "bc10user"]:
        bad.append("expected ranking does not start bc12user, bc10user: %s" % er["ranked"])
    if sorted(er["ranked"] + er["cheap"]) != sorted(USER_NAMES):
        bad.append("expected ranking does not cover every user once")
    # the premise of the scenario, seen from the access log
    med = {u: users[u]["observed"]["duration_us_ok"]["median"] for u in USER_NAMES}
    cheap_max = max(med[u] for u in er["cheap"]) if er["cheap"] else 0
    if not med["bc12user"] > med["bc10user"] > cheap_max:
        bad.append("observed median %%D not bc12 > bc10 > cheap: %s" % med)
    return bad


def check_classic_manifest(m, reqs):
    """--classic: unknown users, clients, the IPv6 flag."""
    bad = []
    unknown = m.get("unknown_users")
    if not isinstance(unknown, dict) or not unknown:
        return ["manifest has no unknown_users"]
    for name, x in unknown.items():
        mine = [r for r in reqs if r["user"] == name]
        if name in m["users"]:
            bad.append("unknown user %s is also in users" % name)
        if x.get("requests") != len(mine) or not mine:
            bad.append("unknown user %s: manifest says %s requests, the list has %d"
                       % (name, x.get("requests"), len(mine)))
        if any(r["status"] != 401 or r["expected_status"] != 401 for r in mine):
            bad.append("unknown user %s: a request was not a 401" % name)
    known = set(m["users"]) | set(unknown)
    for r in reqs:
        if r["user"] is not None and r["user"] not in known:
            bad.append("request n=%d: user %s is neither in users nor unknown_users"
                       % (r["n"], r["user"]))
        if r.get("client") not in ("127.0.0.1", "::1"):
            bad.append("request n=%d: client %r" % (r["n"], r.get("client")))
    v6 = sum(1 for r in reqs if r.get("client") == "::1")
    if m.get("ipv6") not in (True, False):
        bad.append("manifest has no ipv6 flag")
    elif m["ipv6"] != (v6 > 0):
        bad.append("ipv6 is %s but %d requests came from ::1" % (m["ipv6"], v6))
    return bad


def check_classic_ranking(m):
    """--classic: the bcrypt users of cost >= 10 are the ranked ones, the dearer
    first (equal costs in any order), in verification time and in the observed
    median %D (truth.log) alike."""
    bad = []
    users, er = m["users"], m["expected_ranking"]
    cost = {u: users[u]["cost"] or 0 for u in users}
    dear = {u for u in users if cost[u] >= 10}
    if set(er["ranked"]) != dear:
        bad.append("expected ranking %s is not the users of bcrypt cost >= 10 %s"
                   % (er["ranked"], sorted(dear)))
    if [cost[u] for u in er["ranked"]] != sorted((cost[u] for u in er["ranked"]),
                                                 reverse=True):
        bad.append("expected ranking not by bcrypt cost: %s" % er["ranked"])
    if sorted(er["ranked"] + er["cheap"]) != sorted(users):
        bad.append("expected ranking does not cover every user once")
    med = {u: users[u]["observed"]["duration_us_ok"]["median"] for u in users}
    cheap_max = max(med[u] for u in er["cheap"]) if er["cheap"] else 0
    for a in dear:
        if med[a] <= cheap_max:
            bad.append("observed median %%D of %s (%d us) not above the cheap users' "
                       "(%d us)" % (a, med[a], cheap_max))
        for b in dear:
            if cost[a] > cost[b]:
                if not users[a]["verify_seconds"] > users[b]["verify_seconds"]:
                    bad.append("verification time of %s not above %s's" % (a, b))
                if not med[a] > med[b]:
                    bad.append("observed median %%D of %s (%d us) not above %s's (%d us)"
                               % (a, med[a], b, med[b]))
    return bad


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

ACTIVE = []


def generate(args, outdir, tools, as_root):
    started = time.time()
    notes = []
    tmp = None
    if CLASSIC and TTT:
        # epoch stamps, syscall durations and fd paths; still strace's default -s 32
        flags = ["-ff", "-ttt", "-T", "-y"]
    elif CLASSIC and ONE_FILE:
        # `strace -f -tt -o trace -p ...`: one file for all the threads.
        flags = ["-f", "-tt"]
    elif CLASSIC:
        # `strace -tt -ff -o trace -p ...`: local time of day, strace's default -s 32.
        flags = ["-ff", "-tt"]
    else:
        flags = ["-ff", "-ttt", "-T", "-yy", "-s", "256" if args.small else "4096"]
    try:
        os.makedirs(outdir, exist_ok=True)
        # a run that fails half-way must not leave an old manifest describing it
        for old in ("manifest.json", "README.md", "access.log", "error.log", "htpasswd",
                    "httpd.conf"):
            if os.path.exists(os.path.join(outdir, old)):
                os.unlink(os.path.join(outdir, old))
        if os.path.isdir(os.path.join(outdir, "traces")):
            shutil.rmtree(os.path.join(outdir, "traces"))
        tmp = tempfile.mkdtemp(prefix="tlsgap-auth-")
        os.chmod(tmp, 0o755)
        www, sizes = make_site(tmp)
        log("making htpasswd (bcrypt cost %s)" % (
            "13 takes ~0.5-1 s" if CLASSIC else "12 takes ~0.2 s"))
        htp, hashes = make_htpasswd(tmp, tools["htpasswd"])
        cert, key = make_site_cert(tmp, tools["openssl"])
        fix_perms(tmp)
        log("measuring verification with htpasswd -vb (%d runs per user)" % VERIFY_RUNS)
        base, verify = measure_verification(tools["htpasswd"], htp, hashes)
        for u in USER_NAMES:
            log("  %-9s %-6s verify %.4f s (in process %s)" % (
                u, USER_BY_NAME[u][3], verify[u]["verify_seconds"],
                "%.6f s" % verify[u]["in_process_seconds"]
                if verify[u]["in_process_seconds"] is not None else "n/a"))

        modes = [args.apache_mode] if args.apache_mode != "auto" else ["attach", "launch"]
        sess = None
        attempt = 0
        while True:
            attempt += 1
            sess = Session(tmp, outdir, (www, htp, cert, key), tools["apache2"],
                           tools["strace"], flags, modes[0], as_root, attempt)
            ACTIVE.append(sess)
            try:
                sess.start()
                break
            except PortTaken:
                sess.stop()
                if attempt >= 3:
                    raise
                log("warning: port %d was taken before Apache bound it; retrying" % sess.port)
            except AttachFailed as e:
                sess.stop()
                modes.pop(0)
                if not modes:
                    raise
                log("warning: %s; retrying with Apache started under strace (launch mode)"
                    % str(e).splitlines()[0])
                notes.append("attach failed, traced in launch mode: %s"
                             % str(e).splitlines()[0])
        log("apache pid %d on 127.0.0.1:%d%s, workers %s, strace %s mode" % (
            sess.parent, sess.port, " and [::1]:%d" % sess.port if IPV6 else "",
            sess.workers_at_attach, sess.mode))
        plan = plan_requests()
        log("sending %d requests" % len(plan))
        try:
            t_drive = time.time()
            reqs = drive(sess, plan)
            drive_seconds = time.time() - t_drive
            time.sleep(0.3)
            workers_end = children_of(sess.parent)
        finally:
            sess.stop()
        d = sess.dir()
        for name in ("access.log", "error.log", "httpd.conf") + (
                ("truth.log",) if CLASSIC else ()):
            try:
                shutil.copyfile(os.path.join(d, name), os.path.join(outdir, name))
            except OSError as e:
                raise Fail("copying %s: %s" % (name, e))
        shutil.copyfile(htp, os.path.join(outdir, "htpasswd"))
        nlines, log_tz = join_access_log(
            reqs, os.path.join(outdir, "truth.log" if CLASSIC else "access.log"))
        if CLASSIC:
            notes += check_classic_log(reqs, os.path.join(outdir, "access.log"))
        tdir = sess.traces_dir()
        files = sorted(os.path.join(tdir, n) for n in os.listdir(tdir)
                       if re.fullmatch(r"trace" if ONE_FILE else r"trace\.\d+", n))
        if not files:
            raise Fail("collecting traces: strace wrote no trace files under %s\n%s"
                       % (tdir, tail(sess.strace_err)))
        served = sorted({r["log"]["pid"] for r in reqs})
        seen_htp = {}
        def trace_of(pid):
            return sess.trace_base() if ONE_FILE else sess.trace_base() + ".%d" % pid

        for r in reqs:
            tf = trace_of(r["log"]["pid"])
            if not os.path.exists(tf):
                raise Fail("collecting traces: no trace file %s for the worker (pid %d) "
                           "that served n=%d" % (tf, r["log"]["pid"], r["n"]))
            r["trace_file"] = rel(tf, outdir)
            # an unknown user (--classic) costs no verification: no hash to check
            r["expected_auth_seconds"] = (verify[r["user"]]["verify_seconds"]
                                          if r["user"] in verify else
                                          0.0 if r["user"] else None)
        for pid in served:
            with open(trace_of(pid), "rb") as f:
                body = f.read()
            # (one file holds every thread's lines: the count is the whole run's)
            seen_htp[pid] = body.count(htp.encode())
            if not seen_htp[pid]:
                notes.append("trace.%d never mentions %s" % (pid, htp))
        for u in USER_NAMES + ([n for n, _pw, _r in UNKNOWN_USERS] if CLASSIC else []):
            if not any(r["user"] == u for r in reqs):
                notes.append("no request for %s" % u)
        if CLASSIC and IPV6 and not any(r["client"] == "::1" for r in reqs):
            notes.append("no request from ::1")

        obs_users, obs_public = observed(reqs)
        users = {}
        for user, pw, hflags, scheme, cost, _pat in USERS:
            h = hashes[user]
            prefix = {"sha1": "{SHA}", "apr1": "$apr1$", "crypt": "",
                      "bcrypt": h[:7]}[scheme]
            ok = sum(1 for r in reqs if r["user"] == user and r["status"] == 200)
            bad = sum(1 for r in reqs if r["user"] == user and r["status"] == 401)
            users[user] = dict({
                "scheme": scheme, "hash_prefix": prefix, "htpasswd_flags": hflags,
                "cost": cost,
                "work": ITERATIONS[scheme].replace("2^cost", "2^%d" % cost)
                if cost else ITERATIONS[scheme],
                "password": pw,
                "requests": {"total": ok + bad, "ok": ok, "unauthorized": bad},
            }, **verify[user])
            users[user]["observed"] = obs_users[user]
        ranking = expected_ranking(users)
        for u in USER_NAMES:
            users[u]["ranked"] = u in ranking["ranked"]
        gmtoff = time.localtime(started).tm_gmtoff
        finished = time.time()
        manifest = {
            "schema": SCHEMA,
            "generator": "scripts/real-auth.py",
            "mode": "classic" if CLASSIC else "small" if args.small else "full",
            "created_unix": started,
            "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(finished)),
            "run_seconds": round(finished - started, 2),
            "utc_offset": utc_offset(gmtoff),
            "utc_offset_seconds": gmtoff,
            "access_log_tz": log_tz,
            "trace_tz": utc_offset(gmtoff) if CLASSIC and not TTT else None,
            "trace_timestamps": "tt" if CLASSIC and not TTT else "ttt",
            "versions": versions(tools),
            "paths": {"access_log": "access.log", "error_log": "error.log",
                      "htpasswd": "htpasswd", "traces_dir": "traces",
                      "config": "httpd.conf", "readme": "README.md"},
            "paths_at_creation": {"outdir": outdir, "server_root": sess.dir(),
                                  "docroot": www, "htpasswd": htp, "traces_dir": tdir},
            "log_format": ((TTT_LOG_FORMAT if TTT else CLASSIC_LOG_FORMAT) if CLASSIC
                           else LOG_FORMAT),
            "log_regex": None if CLASSIC else LOG_RE.pattern,
            "truth_log": {"path": "truth.log", "log_format": LOG_FORMAT,
                          "log_regex": LOG_RE.pattern} if CLASSIC else None,
            "apache": {
                "version": first_line(run([tools["apache2"], "-v"], step="apache2 -v")
                                      .stdout.decode()).replace("Server version: ", ""),
                "mpm": MPM, "port": sess.port, "parent_pid": sess.parent,
                "worker_pids_at_attach": sess.workers_at_attach,
                "worker_pids_at_end": workers_end, "pids_that_served": served,
                "start_servers": 2, "max_request_workers": 4, "keepalive": False,
                "protected_prefix": PROTECTED, "public_prefix": PUBLIC,
                "file_sizes": sizes,
            },
            "strace": {
                "flags": flags,
                "argv": ["strace"] + [rel(x, outdir) if x == sess.trace_base() else x
                                      for x in sess.cmd[1:]],
                "attach_mode": sess.mode,
                "string_limit": int(flags[flags.index("-s") + 1]) if "-s" in flags else 32,
                "files": [rel(f, outdir) for f in files],
                "output": "one-file" if ONE_FILE else "per-pid",
            },
            "verification": {
                "method": "CPU time (user + system) of `htpasswd -vb FILE USER PASSWORD` "
                          "(apr_password_validate, the code mod_authn_file calls), "
                          "median of %d runs, minus the median for %s (process start-up "
                          "baseline; so shauser is 0 by definition)"
                          % (VERIFY_RUNS, BASELINE_USER),
                "runs": VERIFY_RUNS, "baseline_user": BASELINE_USER,
                "baseline_median_seconds": base,
            },
            "users": users,
            "public": {"prefix": PUBLIC,
                       "requests": sum(1 for r in reqs if r["user"] is None),
                       "observed": obs_public},
            "expected_ranking": ranking,
            "plan": {"loads_per_user": LOADS_PER_USER, "wrong_password_per_user":
                     WRONG_PER_USER, "page": "%s/%s" % (PROTECTED, PAGE),
                     "assets": ["%s/%s" % (PROTECTED, a) for a in ASSETS],
                     "interleaving": (
                         "rounds 1..%d; in the first %d rounds every user first sends one "
                         "wrong password for the page; then all users and the anonymous "
                         "%s visitor load the page and its assets interleaved request by "
                         "request (u1 page, u2 page, ..., u1 style.css, u2 style.css, ...), "
                         "the user order rotated by one each round; one request at a time"
                         % (LOADS_PER_USER, WRONG_PER_USER, PUBLIC)),
                     "request_pause_seconds": REQUEST_PAUSE},
            "requests": reqs,
            "self_check": {"ok": not notes, "notes": notes},
        }
        if CLASSIC:
            manifest["ipv6"] = IPV6
            manifest["unknown_users"] = {
                name: {"requests": sum(1 for r in reqs if r["user"] == name)}
                for name, _pw, _rounds in UNKNOWN_USERS}
            pl = manifest["plan"]
            pl["interleaving"] += (
                "; --classic: users listed in load_rounds / wrong_password_rounds only in "
                "those rounds (0-based), the unknown users one request each after the "
                "wrong passwords of their rounds, and ipv6_loads (when ipv6) from ::1")
            pl["load_rounds"] = {u: list(CLASSIC_LOAD_ROUNDS.get(u, range(LOADS_PER_USER)))
                                 for u in USER_NAMES}
            pl["wrong_password_rounds"] = {
                u: list(CLASSIC_WRONG_ROUNDS.get(u, range(WRONG_PER_USER)))
                for u in USER_NAMES}
            pl["unknown_user_rounds"] = {name: rounds for name, _pw, rounds in UNKNOWN_USERS}
            pl["ipv6_loads"] = ({"user": IPV6_USER, "round": IPV6_ROUND,
                                 "url": "https://[::1]:%d/" % sess.port} if IPV6 else None)
        write_manifest(os.path.join(outdir, "manifest.json"), manifest)
        if not CLASSIC:
            write_readme(outdir, manifest, args.small)
        for n in notes:
            log("warning: " + n)
        size = sum(os.path.getsize(os.path.join(r, fn))
                   for r, _, fs in os.walk(outdir) for fn in fs)
        log("%d requests in %.1f s; %d trace files; %.0f KB in %s" % (
            len(reqs), drive_seconds, len(files), size / 1024, outdir))
        for u in USER_NAMES:
            o = users[u]["observed"]
            log("  %-9s verify %.4f s  median %%D ok %7d us  401 %s" % (
                u, users[u]["verify_seconds"], o["duration_us_ok"]["median"],
                "%d us" % o["duration_us_401"]["median"] if o["duration_us_401"] else "-"))
        if CLASSIC:
            for name, _pw, _rounds in UNKNOWN_USERS:
                d401 = [r["log"]["duration_us"] for r in reqs if r["user"] == name]
                log("  %-9s unknown user, %d requests, median %%D 401 %d us"
                    % (name, len(d401), statistics.median(d401)))
            log("  ipv6      %s" % ("%d requests from ::1" % sum(
                1 for r in reqs if r["client"] == "::1") if IPV6 else "not available"))
        log("  public    " + ", ".join("%s %d us" % (k, v["median"])
                                       for k, v in obs_public.items() if v))
        log("done in %.1f s -> %s/manifest.json" % (time.time() - started, outdir))
    finally:
        while ACTIVE:
            ACTIVE.pop().stop()
        if tmp is not None:
            if args.keep_tmp:
                log("temporary directory kept: %s" % tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", metavar="OUTDIR")
    ap.add_argument("--small", action="store_true",
                    help="trace with -s 256 instead of -s 4096 (the checked-in sample)")
    ap.add_argument("--selftest", action="store_true",
                    help="run, then check the manifest's own consistency")
    ap.add_argument("--check-only", action="store_true",
                    help="only check an existing OUTDIR (nothing is run)")
    ap.add_argument("--keep-tmp", action="store_true",
                    help="keep the temporary Apache directory")
    ap.add_argument("--apache-mode", choices=["auto", "attach", "launch"], default="auto",
                    help="attach strace to running workers (needs CAP_SYS_PTRACE), "
                         "start Apache under strace, or try attach then launch")
    ap.add_argument("--classic", action="store_true",
                    help="the capture most operators make: strace -tt -ff (default -s 32) "
                         "attached to the workers, and a plain combinedssl access log "
                         "(ground truth in truth.log, which tlsgap is not given)")
    ap.add_argument("--ttt", action="store_true",
                    help="with --classic: strace -ff -ttt -T -y (epoch stamps, durations, "
                         "fd paths; still -s 32) and ' %%D' after access.log's combinedssl")
    ap.add_argument("--one-file", action="store_true",
                    help="with --classic: strace -f -tt into one file (every thread's "
                         "lines led by its PID) instead of -ff's file per thread")
    ap.add_argument("--mpm", choices=["prefork", "event"], default="prefork",
                    help="Apache's MPM: prefork (a process per request) or event (threads)")
    args = ap.parse_args()
    if args.ttt and not args.classic:
        ap.error("--ttt is only valid with --classic")
    if args.one_file and (args.ttt or not args.classic):
        ap.error("--one-file is only valid with --classic, without --ttt")
    outdir = os.path.abspath(args.outdir)
    global CLASSIC, MPM, TTT, IPV6, ONE_FILE
    CLASSIC = args.classic
    TTT = args.ttt
    ONE_FILE = args.one_file
    MPM = args.mpm
    if CLASSIC:
        use_classic_users()

    if args.check_only:
        bad = check_manifest(outdir)
        for b in bad:
            log("check failed: " + b)
        log("check %s: %s" % ("ok" if not bad else "FAILED (%d problems)" % len(bad), outdir))
        return 1 if bad else 0

    tools = {}
    missing = []
    for t in ("strace", "apache2", "htpasswd", "curl", "openssl"):
        tools[t] = tool_path(t)
        if tools[t] is None:
            missing.append(t)
    if missing:
        log("error: checking tools: not found: %s (Debian packages: strace apache2 "
            "apache2-utils curl openssl)" % ", ".join(missing))
        return 1
    for mod in ("mod_ssl.so", "mod_mpm_%s.so" % args.mpm, "mod_auth_basic.so",
                "mod_authn_file.so", "mod_authz_user.so", "mod_mime.so"):
        if not os.path.exists(os.path.join(APACHE_MODULES, mod)):
            log("error: checking tools: Apache module %s/%s missing (package apache2)"
                % (APACHE_MODULES, mod))
            return 1
    as_root = os.geteuid() == 0
    if not as_root:
        log("error: checking privileges: needs root (Apache workers run as www-data and "
            "strace must attach to them)")
        return 1
    if CLASSIC:
        IPV6, why = ipv6_loopback()
        if not IPV6:
            log("warning: no IPv6 loopback (%s): every request goes to 127.0.0.1, "
                "manifest ipv6 false" % why)

    # once: the finally blocks then stop strace and Apache by PID
    raise_on_termination()
    try:
        generate(args, outdir, tools, as_root)
    except Fail as e:
        log("error: " + str(e))
        return 1
    except KeyboardInterrupt:
        log("error: interrupted")
        return 1
    if args.selftest:
        bad = check_manifest(outdir)
        for b in bad:
            log("selftest failed: " + b)
        if bad:
            return 1
        log("selftest ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
