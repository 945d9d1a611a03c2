"""Helpers shared by the scripts that start real servers for the tests.

Used by scripts/real-vectors.py, scripts/tls-clients.py, scripts/real-traces.py
and scripts/real-auth.py (each inserts its own directory into sys.path before
`import serverlib`, so they run from any working directory).

What lives here is only what those scripts do the same way: running a
command, free ports, waiting for a port or a pid file, stopping a server
started as a session leader together with its whole process group, /proc
look-ups, tool lookup, self-signed certificates, the common pieces of an
Apache configuration, and turning SIGTERM/SIGHUP into an exception so that
`finally` blocks stop the servers.  Scenario-specific code stays in the
scripts.  Only the Python standard library is used.
"""

import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time

APACHE_MODULES = "/usr/lib/apache2/modules"

_prog = os.path.splitext(os.path.basename(sys.argv[0] or "serverlib"))[0]


class Fail(Exception):
    """A step failed; the message names the step.  The scripts exit 1."""


class AttachFailed(Fail):
    """strace could not attach to a running server (no CAP_SYS_PTRACE, Yama)."""


class PortTaken(Fail):
    """Another process bound the free port before the server did."""


def set_prog(name):
    """The prefix of every message `log` writes (the script's name)."""
    global _prog
    _prog = name


def log(msg):
    print("%s: %s" % (_prog, msg), file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# commands and tools
# ---------------------------------------------------------------------------

def _arg_text(a):
    return a.decode(errors="replace") if isinstance(a, bytes) else str(a)


def run(cmd, step=None, timeout=30, **kw):
    """Run cmd with no stdin and captured output; a timeout or a program that
    cannot be started is a Fail naming `step`."""
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise Fail("%s: %s timed out after %ss" % (
            step or "command", " ".join(map(_arg_text, cmd)), timeout))
    except OSError as e:
        raise Fail("%s: cannot run %s: %s" % (step or "command", _arg_text(cmd[0]), e))


def children_cpu_seconds():
    """User + system CPU time of the children waited for so far: a program's cost
    that another build on the machine does not stretch (its wall time it does)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def tool_path(name):
    """Where `name` is, also looking in /usr/sbin and /sbin (apache2, nginx)."""
    return shutil.which(name, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")



def host_versions(v):
    """Add the Python version, the kernel and the OS name (from /etc/os-release) to the
dict v, as the scripts record them next to their results; returns v."""
    import platform
    v["python"] = platform.python_version()
    v["kernel"] = platform.release()
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    v["os"] = line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return v


def first_line(text):
    lines = text.strip().splitlines()
    return lines[0].strip() if lines else ""


def rel(path, outdir):
    return os.path.relpath(path, outdir)


def tail(path, n=40):
    """The last n lines of a log file, for error messages."""
    try:
        with open(path, "rb") as f:
            lines = f.read().splitlines()[-n:]
        return "\n".join(l.decode("utf-8", "replace") for l in lines)
    except OSError as e:
        return "(cannot read %s: %s)" % (path, e)


def make_cert(openssl, cert, key, kind="ec", what="openssl req", env=None, step=None):
    """A self-signed certificate for localhost / 127.0.0.1, valid two days.
    kind: "ec" (P-256: small handshakes) or "rsa" (RSA-2048).  A failure is
    Fail("<what> failed:\\n<openssl's stderr>")."""
    keyopts = {"rsa": ["-newkey", "rsa:2048"],
               "ec": ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]}[kind]
    r = run([openssl, "req", "-x509"] + keyopts +
            ["-nodes", "-keyout", key, "-out", cert, "-days", "2",
             "-subj", "/CN=localhost",
             "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
            step=step, env=env)
    if r.returncode != 0:
        raise Fail("%s failed:\n%s" % (what, r.stderr.decode(errors="replace")))


def fix_perms(tmp):
    """Let www-data (the workers' user) traverse tmp and read what is in it;
    private keys (*key.pem) stay readable by root only."""
    for root, dirs, files in os.walk(tmp):
        os.chmod(root, 0o755)
        for fn in files:
            os.chmod(os.path.join(root, fn), 0o600 if fn.endswith("key.pem") else 0o644)


# ---------------------------------------------------------------------------
# ports, pid files, processes
# ---------------------------------------------------------------------------

def free_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def wait_port(port, pid_alive, timeout=15.0):
    """True once 127.0.0.1:port accepts a connection; False when pid_alive()
    turns false or on timeout."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if not pid_alive():
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def read_pidfile(path, timeout=15.0, expect=None, pid_alive=None):
    """The pid in a server's pid file once there is one (and it is `expect`,
    when given); None on timeout or once pid_alive() turns false."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pid_alive is not None and not pid_alive():
            return None
        try:
            with open(path) as f:
                pid = int(f.read().strip() or 0)
            if pid and (expect is None or pid == expect):
                return pid
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    return None


def wait_pidfile(path, proc, timeout=10.0, settle=0.3):
    """A server run in the foreground wrote its pid file (it does so once
    start-up succeeded) and is still alive `settle` seconds later."""
    if read_pidfile(path, timeout, expect=proc.pid,
                    pid_alive=lambda: proc.poll() is None) is None:
        return False
    time.sleep(settle)
    return proc.poll() is None


def children_of(pid):
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d, "rb") as f:
                st = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...
        rest = st[st.rfind(b")") + 2:].split()
        if len(rest) > 1 and int(rest[1]) == pid:
            kids.append(int(d))
    return sorted(kids)


def tracer_of(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("TracerPid:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def stop_group(proc, sig, name, timeout=10):
    """Stop a process we started as a session leader (its group id is its
    pid) with sig, SIGKILL its group if it does not stop, and make sure no
    member of the group (workers, tracees) survives.  Only our own PID and
    process group are ever signalled."""
    if proc is None:
        return
    if proc.poll() is None:
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            log("%s (pid %d) did not stop on %s, killing its process group"
                % (name, proc.pid, signal.Signals(sig).name))
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                log("%s (pid %d) survived SIGKILL" % (name, proc.pid))
    reap_group(proc, name)


def reap_group(proc, name=None):
    """Wait up to 5 s for the rest of proc's process group to exit, then
    SIGKILL it.  Apache workers and tracees share the leader's group."""
    deadline = time.time() + 5
    while time.time() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    if name:
        log("%s workers of process group %d still alive, sending SIGKILL"
            % (name, proc.pid))
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def raise_on_termination(make_exc=None):
    """Turn the first SIGTERM or SIGHUP into an exception (later ones are
    ignored), so that the `finally` blocks stop the servers by PID.
    make_exc(signum) builds it; by default Fail("interrupted by SIGTERM")."""
    def handler(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        if make_exc is None:
            raise Fail("interrupted by %s" % signal.Signals(signum).name)
        raise make_exc(signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)


# ---------------------------------------------------------------------------
# Apache configuration pieces (each a list of httpd.conf lines)
# ---------------------------------------------------------------------------

def apache_head(generator, d, modules):
    """The top of an httpd.conf whose ServerRoot, pid file, runtime dir and
    mutexes are all under d; modules are short names (ssl -> mod_ssl.so)."""
    L = ["# generated by %s" % generator, "ServerRoot %s" % d,
         "ServerName localhost", "DefaultRuntimeDir %s/run" % d,
         "PidFile %s/run/httpd.pid" % d, "Mutex file:%s/run default" % d]
    for m in modules:
        L.append("LoadModule %s_module %s/mod_%s.so" % (m, APACHE_MODULES, m))
    return L


def apache_prefork(start, min_spare, max_spare, workers):
    """Prefork sizing; one request per connection, workers never recycled."""
    return ["StartServers %d" % start, "MinSpareServers %d" % min_spare,
            "MaxSpareServers %d" % max_spare, "ServerLimit %d" % workers,
            "MaxRequestWorkers %d" % workers, "MaxConnectionsPerChild 0",
            "Timeout 10", "KeepAlive Off"]


def apache_docroot(www):
    """Serve www and nothing else."""
    return ["DocumentRoot %s" % www, "DirectoryIndex index.html",
            "<Directory />", "  Require all denied", "  AllowOverride None",
            "</Directory>",
            "<Directory %s>" % www, "  Require all granted", "</Directory>"]


def apache_basic_auth(location, realm, userfile):
    """HTTP Basic auth (mod_authn_file) for everything under location."""
    return ["<Location %s>" % location, "  AuthType Basic", '  AuthName "%s"' % realm,
            "  AuthBasicProvider file", "  AuthUserFile %s" % userfile,
            "  Require valid-user", "</Location>"]


def apache_logformat(fmt, nick):
    """Quote a bare format string as an httpd.conf LogFormat directive."""
    return 'LogFormat "%s" %s' % (fmt.replace("\\", "\\\\").replace('"', '\\"'), nick)


def apache_ssl_vhost(port, certs, extra=()):
    """A TLS virtual host on 127.0.0.1:port; certs: [(cert, key)], extra:
    more directives inside it (indented here)."""
    L = ["<VirtualHost 127.0.0.1:%d>" % port, "  SSLEngine on"]
    for cert, key in certs:
        L += ["  SSLCertificateFile %s" % cert, "  SSLCertificateKeyFile %s" % key]
    L += ["  " + line for line in extra]
    L.append("</VirtualHost>")
    return L


def write_conf(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path
