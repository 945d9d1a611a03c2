#!/usr/bin/env python3
"""Which htpasswd hash schemes real Apache verifies, with ground truth.

Usage:  python3 scripts/real-htpasswd.py --out DIR [--keep-tmp]

The script

  * builds DIR/htpasswd with one user per scheme, each with a known password
    (the USERS table below), made with the real tools where there is one
    (`htpasswd -nbB -C 5 / -nbm / -nbs / -nbd`, `openssl passwd -1 / -5 / -6`)
    and in Python for the LDAP-style entries ({SSHA}, {SSHA256}, {SSHA512},
    {SMD5}, {MD5}, {CRYPT}<crypt hash>), plus a plaintext entry, bcrypt with
    the $2a$ and $2b$ markers, `{sha}` in lower case, a `user:hash:comment`
    line, a user name with a dot and a dash, and a {SHA} entry of another
    password;
  * starts a real Apache 2.4 (prefork, mod_auth_basic + mod_authn_file +
    mod_authz_user) on 127.0.0.1 on a free high port, /private/ protected by
    that file (plain HTTP);
  * sends every user's right password (and, where that was let in, a wrong
    one) and records the HTTP status: 200 = Apache verified the password,
    401 = refused;
  * also runs `htpasswd -vb` (apr_password_validate outside Apache) for every
    user, as a cross-check;
  * writes DIR/truth.json (no hashes, no passwords: DIR/htpasswd is the only
    file with hashes), and copies Apache's error.log and httpd.conf to DIR.

Needs apache2 (with mod_auth_basic, mod_authn_file, mod_authz_user,
mod_mpm_prefork), apache2-utils (htpasswd) and openssl.  As root (CI) Apache's
workers run as www-data; unprivileged the User/Group lines are left out.  Exit
status 0 = done (a refused scheme is a result), 1 = a step failed (the message
names it; also SIGTERM/SIGHUP), 2 = bad usage.  Apache is stopped by PID and
its process group reaped, also on errors and signals.  Only the Python standard
library is used.  See scripts/real-htpasswd.md.
"""

import argparse
import base64
import hashlib
import http.client
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
    APACHE_MODULES, host_versions, Fail, PortTaken, alive, apache_basic_auth, apache_docroot,
    apache_head, apache_prefork, fix_perms, first_line, free_port, log,
    raise_on_termination, read_pidfile, run, set_prog, stop_group, tail, tool_path,
    wait_port, write_conf)

PROG = "real-htpasswd"
set_prog(PROG)
SCHEMA = "tlsgap-real-htpasswd/1"
PROTECTED = "/private/"
PAGE = "/private/index.html"
WRONG_PASSWORD = "not-the-password-1"
MODULES = ["mpm_prefork", "authn_core", "authn_file", "authz_core", "authz_user",
           "auth_basic", "dir"]  # dir: DirectoryIndex in apache_docroot()

# user, scheme_label, password (test data), how the hash is made, scheme marker (the
# fixed prefix of the scheme, not cut from the hash), optional note.
# `how` is a key of make_hash(); DES crypt uses only the first 8 characters.
USERS = [
    ("bcrypt-user", "bcrypt", "bcrypt-secret-1", "htpasswd-B", "$2y$05$", None),
    ("bcrypt-2a-user", "bcrypt-2a", "bcrypt2a-secret-1", "bcrypt-as-2a", "$2a$05$",
     "htpasswd -nbB -C 5 hash with $2y$ rewritten to $2a$ (same bytes for ASCII)"),
    ("bcrypt-2b-user", "bcrypt-2b", "bcrypt2b-secret-1", "bcrypt-as-2b", "$2b$05$",
     "htpasswd -nbB -C 5 hash with $2y$ rewritten to $2b$ (same bytes for ASCII)"),
    ("apr1-user", "apr1", "apr1-secret-1", "htpasswd-m", "$apr1$", None),
    ("sha-user", "sha", "sha-secret-1", "htpasswd-s", "{SHA}", None),
    ("crypt-des-user", "crypt-des", "despw123", "htpasswd-d", "", None),
    ("md5crypt-user", "md5-crypt", "md5crypt-secret-1", "openssl-1", "$1$", None),
    ("sha256crypt-user", "sha256-crypt", "sha256crypt-secret-1", "openssl-5", "$5$", None),
    ("sha512crypt-user", "sha512-crypt", "sha512crypt-secret-1", "openssl-6", "$6$", None),
    ("yescrypt-user", "yescrypt", "yescrypt-secret-1", "yescrypt", "$y$",
     "crypt(3) yescrypt (Debian's /etc/shadow default), made with libxcrypt via "
     "Python's crypt module or mkpasswd; left out when neither is there"),
    ("ssha-user", "ssha", "ssha-secret-1", "ldap-ssha", "{SSHA}", None),
    ("ssha256-user", "ssha256", "ssha256-secret-1", "ldap-ssha256", "{SSHA256}", None),
    ("ssha512-user", "ssha512", "ssha512-secret-1", "ldap-ssha512", "{SSHA512}", None),
    ("smd5-user", "smd5", "smd5-secret-1", "ldap-smd5", "{SMD5}", None),
    ("ldap-md5-user", "ldap-md5", "ldapmd5-secret-1", "ldap-md5", "{MD5}", None),
    ("ldap-crypt-des-user", "ldap-crypt-des", "ldapdes1", "ldap-crypt-des", "{CRYPT}",
     "{CRYPT} + an htpasswd -nbd DES crypt hash"),
    ("ldap-crypt-sha512-user", "ldap-crypt-sha512", "ldapcrypt-secret-1",
     "ldap-crypt-sha512", "{CRYPT}$6$", "{CRYPT} + an openssl passwd -6 hash"),
    ("plain-user", "plaintext", "plain-secret-1", "plaintext", "",
     "the password itself as the hash"),
    ("sha-lowercase-user", "sha-lowercase-prefix", "shalower-secret-1", "sha-lower",
     "{sha}", "{SHA} hash with the prefix written {sha}"),
    ("comment-user", "apr1-comment", "comment-secret-1", "htpasswd-m-comment", "$apr1$",
     "`user:hash:some comment`: htpasswd -nbm hash, then ':some comment'"),
    ("first.last-name", "apr1-dotted-name", "dotted-secret-1", "htpasswd-m", "$apr1$",
     "user name with a dot and a dash"),
    ("wrong-sha-user", "sha-wrong-hash", "wrongsha-secret-1", "sha-of-other", "{SHA}",
     "{SHA} of another password: the right password must be refused"),
]
COMMENT = "some comment"


class Skip(Exception):
    """A hash that cannot be made on this machine (the user is left out)."""


# ---------------------------------------------------------------------------
# the htpasswd file
# ---------------------------------------------------------------------------

def b64(b):
    return base64.b64encode(b).decode()


def ldap_salted(algo, pw, salt_len=8):
    salt = os.urandom(salt_len)
    return b64(hashlib.new(algo, pw.encode() + salt).digest() + salt)


def tool_hash(cmd, user, step):
    """The hash an `htpasswd -n...` (line `user:hash`) or `openssl passwd` (the
    hash alone) command prints."""
    r = run(cmd, step=step)
    if r.returncode != 0:
        raise Fail("%s: %s failed (exit %d): %s" % (
            step, " ".join(cmd[:3]), r.returncode, r.stderr.decode(errors="replace").strip()))
    out = first_line(r.stdout.decode())
    if cmd[0].endswith("htpasswd"):
        if not out.startswith(user + ":"):
            raise Fail("%s: unexpected output of %s" % (step, " ".join(cmd[:3])))
        out = out[len(user) + 1:]
    return out


def des_hash(htp, user, pw, step):
    """`htpasswd -nbd` (crypt(3) DES); Skip where htpasswd was built without it."""
    try:
        return tool_hash([htp, "-nbd", user, pw], user, step)
    except Fail as e:
        raise Skip("htpasswd -nbd not supported: %s" % e)


def yescrypt_hash(pw):
    """$y$ via libxcrypt: Python's crypt module (gone in 3.13), else mkpasswd."""
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import crypt
        salt = "$y$j9T$" + base64.b64encode(os.urandom(12)).decode().translate(
            str.maketrans("+", "."))[:16]
        h = crypt.crypt(pw, salt)
        if h and h.startswith("$y$"):
            return h, "crypt.crypt (libxcrypt) in Python, salt $y$j9T$..."
    except Exception:
        pass
    mk = tool_path("mkpasswd")
    if mk:
        r = run([mk, "-m", "yescrypt", pw], step="mkpasswd -m yescrypt")
        h = first_line(r.stdout.decode())
        if r.returncode == 0 and h.startswith("$y$"):
            return h, "mkpasswd -m yescrypt"
    raise Skip("no yescrypt generator (Python crypt module or mkpasswd)")


def make_hash(how, user, pw, tools):
    """(hash as written after `user:`, generator description)."""
    htp, ossl = tools["htpasswd"], tools["openssl"]
    step = "making the hash of %s" % user
    if how == "htpasswd-B":
        return tool_hash([htp, "-nbB", "-C", "5", user, pw], user, step), "htpasswd -nbB -C 5"
    if how in ("bcrypt-as-2a", "bcrypt-as-2b"):
        h = tool_hash([htp, "-nbB", "-C", "5", user, pw], user, step)
        if not h.startswith("$2y$"):
            raise Fail("%s: htpasswd -nbB wrote no $2y$ hash" % step)
        marker = "$2a$" if how.endswith("2a") else "$2b$"
        return marker + h[4:], "htpasswd -nbB -C 5, $2y$ rewritten to %s" % marker
    if how == "htpasswd-m":
        return tool_hash([htp, "-nbm", user, pw], user, step), "htpasswd -nbm"
    if how == "htpasswd-m-comment":
        h = tool_hash([htp, "-nbm", user, pw], user, step)
        return h + ":" + COMMENT, "htpasswd -nbm + ':%s'" % COMMENT
    if how == "htpasswd-s":
        return tool_hash([htp, "-nbs", user, pw], user, step), "htpasswd -nbs"
    if how == "htpasswd-d":
        return des_hash(htp, user, pw, step), "htpasswd -nbd"
    if how in ("openssl-1", "openssl-5", "openssl-6"):
        flag = "-" + how[-1]
        return tool_hash([ossl, "passwd", flag, pw], user, step), "openssl passwd %s" % flag
    if how == "yescrypt":
        return yescrypt_hash(pw)
    if how == "ldap-ssha":
        return "{SSHA}" + ldap_salted("sha1", pw), "Python: base64(sha1(pw+salt)+salt), 8-byte salt"
    if how == "ldap-ssha256":
        return ("{SSHA256}" + ldap_salted("sha256", pw),
                "Python: base64(sha256(pw+salt)+salt), 8-byte salt")
    if how == "ldap-ssha512":
        return ("{SSHA512}" + ldap_salted("sha512", pw),
                "Python: base64(sha512(pw+salt)+salt), 8-byte salt")
    if how == "ldap-smd5":
        return "{SMD5}" + ldap_salted("md5", pw), "Python: base64(md5(pw+salt)+salt), 8-byte salt"
    if how == "ldap-md5":
        return "{MD5}" + b64(hashlib.md5(pw.encode()).digest()), "Python: base64(md5(pw))"
    if how == "ldap-crypt-des":
        return "{CRYPT}" + des_hash(htp, user, pw, step), "'{CRYPT}' + htpasswd -nbd"
    if how == "ldap-crypt-sha512":
        return "{CRYPT}" + tool_hash([ossl, "passwd", "-6", pw], user, step), \
            "'{CRYPT}' + openssl passwd -6"
    if how == "plaintext":
        return pw, "the password itself"
    if how == "sha-lower":
        return "{sha}" + b64(hashlib.sha1(pw.encode()).digest()), "Python: '{sha}' + base64(sha1(pw))"
    if how == "sha-of-other":
        return ("{SHA}" + b64(hashlib.sha1(b"some-other-password").digest()),
                "Python: '{SHA}' + base64(sha1('some-other-password'))")
    raise AssertionError(how)


def make_htpasswd(path, tools):
    """Write the file; returns [(user tuple, hash, generator, line number)] for
    the users that could be made, and the skipped ones as [(user, why)]."""
    made, skipped, lines = [], [], []
    for u in USERS:
        user, label, pw, how = u[:4]
        try:
            h, gen = make_hash(how, user, pw, tools)
        except Skip as e:
            skipped.append((user, str(e)))
            log("warning: %s (%s) left out: %s" % (user, label, e))
            continue
        if (":" in h and how != "htpasswd-m-comment") or "\n" in h:
            raise Fail("making the hash of %s: unexpected character in %r" % (user, how))
        lines.append("%s:%s" % (user, h))
        made.append((u, h, gen, len(lines)))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return made, skipped


# ---------------------------------------------------------------------------
# Apache
# ---------------------------------------------------------------------------

def die_with_parent():
    """In Apache's parent before exec: SIGTERM it if this script is SIGKILLed
    (PR_SET_PDEATHSIG; Linux only, best effort)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)
    except Exception:
        pass


class Apache:
    def __init__(self, apache_bin, tmp, www, htp, as_root, attempt):
        self.bin, self.www, self.htp, self.as_root = apache_bin, www, htp, as_root
        self.d = os.path.join(tmp, "apache-%d" % attempt)
        self.proc = None
        self.out = None
        self.port = None
        self.conf = None

    def write_conf(self):
        os.makedirs(os.path.join(self.d, "run"))
        os.chmod(self.d, 0o755)
        self.port = free_port()
        L = apache_head("scripts/real-htpasswd.py", self.d, MODULES)
        if self.as_root:
            L += ["User www-data", "Group www-data"]
        L += apache_prefork(1, 1, 2, 2)
        L += ["Listen 127.0.0.1:%d" % self.port,
              "ErrorLog %s/error.log" % self.d,
              # Debian's default level, plus what mod_auth_basic / mod_authn_file say
              # at debug about a refused user
              "LogLevel warn auth_basic:debug authn_file:debug authn_core:debug"]
        L += apache_docroot(self.www)
        L += apache_basic_auth(PROTECTED, "tlsgap htpasswd schemes", self.htp)
        self.conf = write_conf(os.path.join(self.d, "httpd.conf"), L)

    def start(self):
        self.write_conf()
        r = run([self.bin, "-f", self.conf, "-t"], step="apache config test")
        if r.returncode != 0:
            raise Fail("apache config test failed:\n" + r.stderr.decode(errors="replace"))
        self.out = open(os.path.join(self.d, "stdout.log"), "wb")
        self.proc = subprocess.Popen([self.bin, "-f", self.conf, "-DFOREGROUND"],
                                     stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=subprocess.STDOUT, cwd=self.d,
                                     start_new_session=True, preexec_fn=die_with_parent)
        ok = (read_pidfile(os.path.join(self.d, "run", "httpd.pid"), expect=self.proc.pid,
                           pid_alive=lambda: self.proc.poll() is None) is not None
              and wait_port(self.port, lambda: self.proc.poll() is None))
        if not ok:
            for name in ("error.log", "stdout.log"):
                try:
                    with open(os.path.join(self.d, name), "rb") as f:
                        if b"Address already in use" in f.read():
                            raise PortTaken("starting apache: port %d already in use"
                                            % self.port)
                except OSError:
                    pass
            raise Fail("starting apache (port %d) failed.\n--- error.log ---\n%s\n"
                       "--- stdout/stderr ---\n%s" % (
                           self.port, tail(os.path.join(self.d, "error.log")),
                           tail(os.path.join(self.d, "stdout.log"))))

    def stop(self):
        """SIGTERM the parent (graceful-stop of its workers), SIGKILL the group
        if needed, reap the group.  Idempotent."""
        if self.proc is not None:
            stop_group(self.proc, signal.SIGTERM, "apache")
            if alive(self.proc.pid) and self.proc.poll() is None:
                log("warning: apache pid %d still alive after stop" % self.proc.pid)
        if self.out is not None and not self.out.closed:
            self.out.close()

    def error_log(self):
        return os.path.join(self.d, "error.log")


def start_apache(apache_bin, tmp, www, htp, as_root, active):
    for attempt in range(1, 4):
        a = Apache(apache_bin, tmp, www, htp, as_root, attempt)
        active.append(a)
        try:
            a.start()
            return a
        except PortTaken:
            a.stop()
            if attempt == 3:
                raise
            log("warning: port %d was taken before Apache bound it; retrying" % a.port)


def request(port, user, pw):
    """(HTTP status, client port) of GET PAGE with Basic credentials user:pw, one
    connection; the client port finds the request's lines in the error log."""
    step = "request as %s" % user
    last = None
    for _ in range(2):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
        try:
            cred = b64(("%s:%s" % (user, pw)).encode())
            conn.connect()
            cport = conn.sock.getsockname()[1]
            conn.request("GET", PAGE, headers={"Authorization": "Basic " + cred,
                                               "Connection": "close",
                                               "User-Agent": "real-htpasswd/1"})
            resp = conn.getresponse()
            resp.read()
            return resp.status, cport
        except (OSError, http.client.HTTPException) as e:
            last = e
            time.sleep(0.2)
        finally:
            conn.close()
    raise Fail("%s: %s" % (step, last))


def htpasswd_vb(htpasswd_bin, path, user, pw):
    """apr_password_validate outside Apache: True/False, None if htpasswd cannot
    tell (exit codes other than 0 and 3)."""
    r = run([htpasswd_bin, "-vb", path, user, pw], step="htpasswd -vb %s" % user)
    if r.returncode == 0:
        return True
    if r.returncode == 3:  # "password verification failed"
        return False
    return None


def versions(tools):
    v = {"apache": first_line(run([tools["apache2"], "-v"], step="apache2 -v")
                              .stdout.decode()).replace("Server version: ", ""),
         "openssl": " ".join(run([tools["openssl"], "version"], step="openssl version")
                             .stdout.decode().split()[:2])}
    for pkg, key in (("apache2-utils", "htpasswd"), ("libapr1", "libapr1"),
                     ("libaprutil1", "libaprutil1"), ("libcrypt1", "libcrypt1")):
        try:
            r = run(["dpkg-query", "-W", "-f", "${Version}", pkg], step="dpkg-query")
            out = r.stdout.decode().strip()
            if r.returncode == 0 and out:
                v[key] = out
        except Fail:
            pass
    host_versions(v)
    return v


def error_log_lines(path, users, secrets):
    """Lines of Apache's error log naming one of the users (no line that holds
    a hash or a password is returned; none is expected), and the messages of
    the lines with a `[client 127.0.0.1:PORT]`, by client port."""
    try:
        with open(path, "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return [], {}
    keep, by_port = [], {}
    pats = [re.compile(r"(?<![\w.-])%s(?![\w.-])" % re.escape(u)) for u in users]
    for line in lines:
        if any(s and s in line for s in secrets):
            line = "(line withheld: it contains a hash or a password)"
        if any(p.search(line) for p in pats):
            keep.append(line)
        m = re.search(r"\[client 127\.0\.0\.1:(\d+)\]", line)
        if m:
            # the message without the `[time] [module:level] [pid N] [client ...] ` head
            by_port.setdefault(int(m.group(1)), []).append(
                re.sub(r"^(\[[^\]]*\]\s*)+", "", line))
    return keep, by_port


# ---------------------------------------------------------------------------

def generate(outdir, tools, as_root, keep_tmp):
    started = time.time()
    active = []
    tmp = None
    try:
        os.makedirs(outdir, exist_ok=True)
        for old in ("truth.json", "htpasswd", "error.log", "httpd.conf"):
            if os.path.exists(os.path.join(outdir, old)):
                os.unlink(os.path.join(outdir, old))
        tmp = tempfile.mkdtemp(prefix="tlsgap-htpasswd-")
        www = os.path.join(tmp, "www")
        os.makedirs(os.path.join(www, "private"))
        with open(os.path.join(www, "private", "index.html"), "w") as f:
            f.write("<!DOCTYPE html><title>private</title><p>verified</p>\n")
        # Apache reads its own copy (www-data must be able to read it wherever DIR
        # is); DIR/htpasswd is a byte-identical copy
        htp = os.path.join(tmp, "auth", "htpasswd")
        os.makedirs(os.path.dirname(htp))
        log("making %s" % htp)
        made, skipped = make_htpasswd(htp, tools)
        fix_perms(tmp)
        shutil.copyfile(htp, os.path.join(outdir, "htpasswd"))

        log("htpasswd -vb for %d users" % len(made))
        vb = {u[0]: htpasswd_vb(tools["htpasswd"], htp, u[0], u[2]) for u, *_ in made}

        apache = start_apache(tools["apache2"], tmp, www, htp, as_root, active)
        log("apache pid %d on 127.0.0.1:%d" % (apache.proc.pid, apache.port))
        results = {}
        for u, _h, _gen, _ln in made:
            user, pw = u[0], u[2]
            right, rport = request(apache.port, user, pw)
            wrong, wport = (request(apache.port, user, WRONG_PASSWORD) if right == 200
                            else (None, None))
            if right not in (200, 401) or wrong not in (None, 401):
                raise Fail("request as %s: unexpected HTTP status %s / %s"
                           % (user, right, wrong))
            results[user] = (right, wrong, rport, wport)
            log("  %-24s %-22s right %d  wrong %s  htpasswd -vb %s" % (
                user, u[1], right, wrong if wrong is not None else "-",
                {True: "ok", False: "refused", None: "?"}[vb[user]]))
        time.sleep(0.3)  # let the last worker write its log lines
        if apache.proc.poll() is not None:
            raise Fail("apache (pid %d) died during the requests:\n%s"
                       % (apache.proc.pid, tail(apache.error_log())))
        apache.stop()
        active.remove(apache)
        shutil.copyfile(apache.error_log(), os.path.join(outdir, "error.log"))
        shutil.copyfile(apache.conf, os.path.join(outdir, "httpd.conf"))

        secrets = [h for _u, h, _g, _l in made] + [u[2] for u, *_ in made] + [WRONG_PASSWORD]
        # a hash also shows up cut at the comment's colon
        secrets += [h.split(":")[0] for _u, h, _g, _l in made]
        excerpt, by_port = error_log_lines(apache.error_log(), [u[0] for u, *_ in made],
                                            secrets)
        users = []
        for u, _h, gen, ln in made:
            user, label, _pw, _how, marker, note = u
            right, wrong, rport, wport = results[user]
            users.append({
                "user": user, "scheme_label": label, "hash_prefix": marker,
                "generator": gen, "htpasswd_line": ln, "note": note,
                "right_password_status": right, "wrong_password_status": wrong,
                "apache_verified": right == 200,
                "htpasswd_vb_ok": vb[user],
                "error_log_right_password": by_port.get(rport, []),
                "error_log_wrong_password": by_port.get(wport, []) if wport else None,
            })
        finished = time.time()
        truth = {
            "schema": SCHEMA,
            "generator": "scripts/real-htpasswd.py",
            "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
            "run_seconds": round(finished - started, 2),
            "versions": versions(tools),
            "htpasswd": "htpasswd",
            "error_log": "error.log",
            "httpd_conf": "httpd.conf",
            "apache": {"mpm": "prefork", "modules": MODULES, "port": apache.port,
                       "user": "www-data" if as_root else None,
                       "protected": PROTECTED, "request": "GET %s over plain HTTP, "
                       "one connection per request, Authorization: Basic" % PAGE},
            "wrong_password": "a fixed wrong password, sent only for users whose right "
                              "password got 200",
            "users": users,
            "skipped": [{"user": s, "why": why} for s, why in skipped],
            "error_log_excerpt": excerpt,
        }
        with open(os.path.join(outdir, "truth.json"), "w") as f:
            json.dump(truth, f, indent=2)
            f.write("\n")
        text = open(os.path.join(outdir, "truth.json")).read()
        leaked = [s for s in secrets if len(s) >= 6 and s in text]
        if leaked:
            os.unlink(os.path.join(outdir, "truth.json"))
            raise Fail("writing truth.json: it would contain %d hash(es)/password(s)"
                       % len(leaked))
        ok = sum(1 for x in users if x["apache_verified"])
        log("done in %.1f s: %d of %d users verified by Apache -> %s/truth.json"
            % (finished - started, ok, len(users), outdir))
    finally:
        while active:
            active.pop().stop()
        if tmp is not None:
            if keep_tmp:
                log("temporary directory kept: %s" % tmp)
            else:
                shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, metavar="DIR",
                    help="where htpasswd, truth.json, error.log and httpd.conf go")
    ap.add_argument("--keep-tmp", action="store_true",
                    help="keep the temporary Apache directory")
    args = ap.parse_args()
    tools, missing = {}, []
    for t in ("apache2", "htpasswd", "openssl"):
        tools[t] = tool_path(t)
        if tools[t] is None:
            missing.append(t)
    if missing:
        log("error: checking tools: not found: %s (Debian packages: apache2 "
            "apache2-utils openssl)" % ", ".join(missing))
        return 1
    for m in MODULES:
        if not os.path.exists(os.path.join(APACHE_MODULES, "mod_%s.so" % m)):
            log("error: checking tools: Apache module %s/mod_%s.so missing"
                % (APACHE_MODULES, m))
            return 1
    as_root = os.geteuid() == 0
    # once: the finally blocks then stop Apache by PID
    raise_on_termination()
    try:
        generate(os.path.abspath(args.out), tools, as_root, args.keep_tmp)
    except Fail as e:
        log("error: " + str(e))
        return 1
    except KeyboardInterrupt:
        log("error: interrupted")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
