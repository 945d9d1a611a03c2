#!/usr/bin/env python3
"""Produce REAL access-log lines from a real Apache httpd and a real nginx.

Usage:  python3 scripts/real-vectors.py [OUTDIR] [--keep-tmp]

OUTDIR defaults to <repo>/testdata/real.  The script

  * makes a throw-away directory with a self-signed RSA certificate,
  * starts Apache (prefork, mod_ssl) and nginx on 127.0.0.1, on free high
    ports (one TLS port and one plain-HTTP port each), logging with several
    formats,
  * drives both with curl (sequential, one request per connection) and with
    raw TCP sockets for request lines curl will not send,
  * stops both servers, copies the logs to OUTDIR and writes, next to each
    log, `<log>.expected.jsonl`: one JSON object per log line, in log order,
    describing what the CLIENT sent / negotiated for that request (taken from
    the request definitions and from curl's own report, never from the log).

Only the Python standard library is used.  Nothing binds outside 127.0.0.1.
"""

import argparse
import base64
import codecs
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverlib import (  # noqa: E402  (needs the sys.path entry above)
    APACHE_MODULES, Fail, apache_basic_auth, apache_docroot, apache_head,
    apache_logformat, apache_prefork, apache_ssl_vhost, children_of, fix_perms,
    free_port, log, make_cert, run, set_prog, stop_group, tail, tool_path,
    wait_pidfile, wait_port, write_conf)

set_prog("real-vectors")

# ---------------------------------------------------------------------------
# Log formats
# ---------------------------------------------------------------------------

# Apache: the LogFormat string exactly as Apache sees it after the config
# tokenizer (i.e. what a user would get after unquoting the httpd.conf line).
APACHE_FORMATS = {
    "combinedssl": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" '
                   "%{SSL_PROTOCOL}x %{SSL_CIPHER}x",
    "ssl_request": '%t %h %{SSL_PROTOCOL}x %{SSL_CIPHER}x "%r" %b',
    "combinedssl_dp": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" '
                      "%{SSL_PROTOCOL}x %{SSL_CIPHER}x %D %P",
    # combinedssl with the request time in seconds appended (a common edit)
    "combinedssl_t": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" '
                     "%{SSL_PROTOCOL}x %{SSL_CIPHER}x %T",
}

# nginx: name -> (escape, format string as nginx concatenates it)
NGINX_FORMATS = {
    "nginx_ssl": (None,
                  '$remote_addr - $remote_user [$time_local] "$request" $status '
                  '$body_bytes_sent "$http_referer" "$http_user_agent" '
                  "$ssl_protocol $ssl_cipher"),
    # nginx's default `main` with the TLS pair appended
    "nginx_main_ssl": (None,
                       '$remote_addr - $remote_user [$time_local] "$request" $status '
                       '$body_bytes_sent "$http_referer" "$http_user_agent" '
                       '"$http_x_forwarded_for" $ssl_protocol $ssl_cipher'),
    # nginx_ssl with $request_time appended
    "nginx_ssl_rt": (None,
                     '$remote_addr - $remote_user [$time_local] "$request" $status '
                     '$body_bytes_sent "$http_referer" "$http_user_agent" '
                     "$ssl_protocol $ssl_cipher $request_time"),
    "nginx_json": ("json",
                   '{"time":"$time_iso8601","remote_addr":"$remote_addr",'
                   '"remote_user":"$remote_user","request":"$request",'
                   '"status":$status,"body_bytes_sent":$body_bytes_sent,'
                   '"http_referer":"$http_referer",'
                   '"http_user_agent":"$http_user_agent",'
                   '"ssl_protocol":"$ssl_protocol","ssl_cipher":"$ssl_cipher",'
                   '"request_time":$request_time}'),
    # escape=none: raw bytes, and a variable nginx cannot find (the TLS pair of a
    # plain-HTTP request, a header not sent, no user) written as nothing, quoted or
    # not
    "nginx_none": ("none",
                   '$remote_addr - $remote_user [$time_local] "$request" $status '
                   '$body_bytes_sent "$http_referer" "$http_user_agent" '
                   '"$ssl_protocol" "$ssl_cipher"'),
    "nginx_none_bare": ("none",
                        '$remote_addr - $remote_user [$time_local] "$request" $status '
                        '$body_bytes_sent "$http_referer" "$http_user_agent" '
                        "$ssl_protocol $ssl_cipher"),
    # upstream lists ("a, b" per server tried, "-" when not proxied) before the TLS
    # pair: a list cut at its ", " would shift the pair
    "nginx_upstream": (None,
                       '$remote_addr - $remote_user [$time_local] "$request" $status '
                       '$body_bytes_sent "$http_referer" "$http_user_agent" '
                       "$upstream_addr $upstream_status $upstream_response_time "
                       "$ssl_protocol $ssl_cipher"),
}

# output log name -> (server, format nickname)
LOGS = [
    ("apache-combinedssl.log", "apache", "combinedssl"),
    ("apache-ssl_request.log", "apache", "ssl_request"),
    ("apache-combinedssl_dp.log", "apache", "combinedssl_dp"),
    ("nginx-ssl.log", "nginx", "nginx_ssl"),
    ("nginx-json.log", "nginx", "nginx_json"),
    ("apache-combinedssl_t.log", "apache", "combinedssl_t"),
    ("nginx-main_ssl.log", "nginx", "nginx_main_ssl"),
    ("nginx-ssl_rt.log", "nginx", "nginx_ssl_rt"),
    ("nginx-none.log", "nginx", "nginx_none"),
    ("nginx-none_bare.log", "nginx", "nginx_none_bare"),
    ("nginx-upstream.log", "nginx", "nginx_upstream"),
]

REQ_KEYS = ["request", "method", "target", "http_version"]
# which expected keys each format can show
FORMAT_KEYS = {
    "combinedssl": ["client", "user"] + REQ_KEYS + ["status", "bytes", "referer",
                                                    "user_agent", "tls_protocol",
                                                    "tls_cipher"],
    "ssl_request": ["client", "tls_protocol", "tls_cipher"] + REQ_KEYS + ["bytes"],
    "combinedssl_dp": ["client", "user"] + REQ_KEYS + ["status", "bytes", "referer",
                                                       "user_agent", "tls_protocol",
                                                       "tls_cipher", "pid"],
    "nginx_ssl": ["client", "user"] + REQ_KEYS + ["status", "bytes", "referer",
                                                  "user_agent", "tls_protocol",
                                                  "tls_cipher"],
    "nginx_json": ["client", "user"] + REQ_KEYS + ["status", "bytes", "referer",
                                                   "user_agent", "tls_protocol",
                                                   "tls_cipher"],
}
# the variants show what their base format shows
FORMAT_KEYS["combinedssl_t"] = FORMAT_KEYS["combinedssl"]
FORMAT_KEYS["nginx_main_ssl"] = FORMAT_KEYS["nginx_ssl"]
FORMAT_KEYS["nginx_ssl_rt"] = FORMAT_KEYS["nginx_ssl"]
FORMAT_KEYS["nginx_none"] = FORMAT_KEYS["nginx_ssl"]
FORMAT_KEYS["nginx_none_bare"] = FORMAT_KEYS["nginx_ssl"]
FORMAT_KEYS["nginx_upstream"] = FORMAT_KEYS["nginx_ssl"]
KEY_ORDER = ["client", "user", "request", "method", "target", "http_version",
             "status", "bytes", "referer", "user_agent", "tls_protocol",
             "tls_cipher", "pid"]


def nginx_logformat_line(nick, escape, fmt):
    # single-quoted nginx string: escape backslash and single quote
    q = fmt.replace("\\", "\\\\").replace("'", "\\'")
    esc = (" escape=%s" % escape) if escape else ""
    return "log_format %s%s '%s';" % (nick, esc, q)


# ---------------------------------------------------------------------------
# byte-string -> JSON text: valid UTF-8 as text, every other byte as \xHH
# ---------------------------------------------------------------------------

def _xhh(err):
    bad = err.object[err.start:err.end]
    return ("".join("\\x%02X" % b for b in bad), err.end)


codecs.register_error("tlsgap_xhh", _xhh)


def bs(value):
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return value.decode("utf-8", "tlsgap_xhh")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def die(msg):
    log("error: " + msg)
    sys.exit(1)


# ---------------------------------------------------------------------------
# setup: cert, htpasswd, docroot
# ---------------------------------------------------------------------------

USERS = {  # user -> password (bytes)
    b"alice": b"wonderland",
    b"j\xc3\xb6rg": b"s3cr\xc3\xa9t",  # "jörg" / "s3crét" in UTF-8
}


def make_files(tmp):
    www = os.path.join(tmp, "www")
    os.makedirs(os.path.join(www, "private"))
    with open(os.path.join(www, "index.html"), "wb") as f:
        f.write(b"<html><body>tlsgap real-vectors index</body></html>\n")
    with open(os.path.join(www, "private", "index.html"), "wb") as f:
        f.write(b"<html><body>private area</body></html>\n")
    with open(os.path.join(www, "big.txt"), "wb") as f:
        f.write(b"0123456789abcdef" * 1024)  # 16384 bytes
    # htpasswd with {SHA} hashes: understood by both Apache and nginx
    with open(os.path.join(tmp, "htpasswd"), "wb") as f:
        for user, pw in USERS.items():
            f.write(user + b":{SHA}" +
                    base64.b64encode(hashlib.sha1(pw).digest()) + b"\n")
    cert = os.path.join(tmp, "cert.pem")
    key = os.path.join(tmp, "key.pem")
    make_cert("openssl", cert, key, kind="rsa")
    dh = os.path.join(tmp, "dhparam.pem")
    r = run(["openssl", "genpkey", "-genparam", "-algorithm", "DH",
             "-pkeyopt", "dh_param:ffdhe2048", "-out", dh])
    if r.returncode != 0:
        raise Fail("openssl genpkey (DH) failed:\n" + r.stderr.decode(errors="replace"))
    fix_perms(tmp)
    return www, cert, key, dh


TLS13_SUITES = ("TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256:"
                "TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256:"
                "TLS_AES_128_CCM_8_SHA256")


def apache_conf(tmp, www, cert, key, plain, tls):
    d = os.path.join(tmp, "apache")
    os.makedirs(os.path.join(d, "run"))
    os.chmod(d, 0o755)
    L = apache_head("scripts/real-vectors.py", d, [
        "mpm_prefork", "authn_core", "authn_file", "authz_core", "authz_user",
        "auth_basic", "dir", "socache_shmcb", "ssl"])
    L += ["User www-data", "Group www-data"]
    # exactly one worker process, never recycled: %P is then known
    L += apache_prefork(1, 1, 1, 1)
    L += ["Listen 127.0.0.1:%d" % plain, "Listen 127.0.0.1:%d" % tls,
          "ErrorLog %s/error.log" % d, "LogLevel info"]
    L += apache_docroot(www)
    L += apache_basic_auth("/private", "tlsgap private", "%s/htpasswd" % tmp)
    L.append("SSLSessionCache shmcb:%s/run/ssl_scache(512000)" % d)
    for nick, fmt in APACHE_FORMATS.items():
        L.append(apache_logformat(fmt, nick))
    for nick in APACHE_FORMATS:
        L.append("CustomLog %s/%s.log %s" % (d, nick, nick))
    L += apache_ssl_vhost(tls, [(cert, key)], [
        "SSLProtocol all",
        "SSLCipherSuite ALL:@SECLEVEL=0",
        "SSLCipherSuite TLSv1.3 %s" % TLS13_SUITES,
        "SSLHonorCipherOrder off",
    ])
    return d, write_conf(os.path.join(d, "httpd.conf"), L)


def nginx_conf(tmp, www, cert, key, dh, plain, tls):
    d = os.path.join(tmp, "nginx")
    os.makedirs(os.path.join(d, "logs"))
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(d, "tmp", sub))
    L = [
        "# generated by scripts/real-vectors.py",
        "user www-data www-data;", "worker_processes 1;", "daemon off;",
        "pid %s/nginx.pid;" % d, "error_log %s/logs/error.log info;" % d,
        "events { worker_connections 64; }",
        "http {",
        "  types { text/html html; text/plain txt; }",
        "  default_type application/octet-stream;",
        "  client_body_temp_path %s/tmp/body;" % d,
        "  proxy_temp_path %s/tmp/proxy;" % d,
        "  fastcgi_temp_path %s/tmp/fastcgi;" % d,
        "  uwsgi_temp_path %s/tmp/uwsgi;" % d,
        "  scgi_temp_path %s/tmp/scgi;" % d,
        "  keepalive_timeout 0;",
    ]
    for nick, (esc, fmt) in NGINX_FORMATS.items():
        L.append("  " + nginx_logformat_line(nick, esc, fmt))
    L += [
        "  server {",
        "    listen 127.0.0.1:%d;" % plain,
        "    listen 127.0.0.1:%d ssl;" % tls,
        "    server_name localhost;",
        "    ssl_certificate %s;" % cert,
        "    ssl_certificate_key %s;" % key,
        "    ssl_dhparam %s;" % dh,
        "    ssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3;",
        "    ssl_ciphers ALL:@SECLEVEL=0;",
        "    ssl_conf_command Ciphersuites %s;" % TLS13_SUITES,
        "    ssl_prefer_server_ciphers off;",
        "    root %s;" % www,
        "    index index.html;",
    ]
    for nick in NGINX_FORMATS:
        L.append("    access_log %s/logs/%s.log %s;" % (d, nick, nick))
    # /up/ is proxied to two upstream servers, the first one not listening: a
    # request that tries it first is logged with lists ("a, b", "502, 200")
    back, dead = free_port(), free_port()
    L += [
        "    location /private {",
        '      auth_basic "tlsgap private";',
        "      auth_basic_user_file %s/htpasswd;" % tmp,
        "    }",
        "    location /up/ {",
        "      proxy_pass http://tlsgap_up/;",
        "    }",
        "  }",
        "  upstream tlsgap_up {",
        "    server 127.0.0.1:%d max_fails=0;" % dead,
        "    server 127.0.0.1:%d max_fails=0;" % back,
        "  }",
        "  server {",
        "    listen 127.0.0.1:%d;" % back,
        "    access_log off;",
        '    location / { return 200 "up\\n"; }',
        "  }",
        "}",
    ]
    return d, write_conf(os.path.join(d, "nginx.conf"), L)


# ---------------------------------------------------------------------------
# request definitions
# ---------------------------------------------------------------------------

UA_FIREFOX = b"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
UA_CHROME = (b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 "
             b"(KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36")
UA_HOSTILE = (b'Evil/1.0 "quoted" back\\slash \\" caf\xc3\xa9 '
              b"\xe6\x97\xa5\xe6\x9c\xac\ttab end")
UA_CTL = b"Ctl/1.0 a\x01b\x7fc\x1bd"
UA_BADUTF8 = b"BadUtf8/1.0 \xff\xfe \xc3( end"
REF_NORMAL = b"https://www.example.com/search?q=tls+1.3&lang=en"
REF_HOSTILE = b'https://ex.example/"quote"\\back caf\xc3\xa9'


class Req:
    """One request, sent once to Apache and once to nginx."""

    def __init__(self, label, **kw):
        self.label = label
        self.rid = kw.pop("rid", None)
        self.kind = kw.pop("kind", "curl")          # curl | raw
        self.port = kw.pop("port", "tls")           # tls | plain
        self.tls = kw.pop("tls", None)              # (min, max) e.g. ("1.2","1.2")
        self.ciphers = kw.pop("ciphers", None)
        self.tls13_ciphers = kw.pop("tls13_ciphers", None)
        self.expect_cipher = kw.pop("expect_cipher", None)
        self.method = kw.pop("method", b"GET")
        self.target = kw.pop("target", None)
        self.version = kw.pop("version", b"HTTP/1.1")
        self.ua = kw.pop("ua", UA_FIREFOX)          # bytes, b"" = empty, None = absent
        self.referer = kw.pop("referer", None)
        self.auth = kw.pop("auth", None)            # raw "user:pass" bytes
        self.raw = kw.pop("raw", None)              # bytes sent on raw socket
        self.raw_line = kw.pop("raw_line", None)    # request line within raw
        self.raw_wait = kw.pop("raw_wait", 5.0)
        self.raw_shutdown = kw.pop("raw_shutdown", False)
        self.signature = kw.pop("signature", None)  # regex (bytes) for id-less lines
        self.optional = kw.pop("optional", False)   # may fail the TLS handshake
        self.expect_fail = kw.pop("expect_fail", False)
        self.expect_no_line = kw.pop("expect_no_line", False)
        # per-server keys to omit: the server is known to log something other
        # than what was sent (see the comments at the request definitions)
        self.server_drop = kw.pop("server_drop", {})
        if kw:
            raise TypeError("unknown Req args: %r" % kw)


def build_requests(plain_port_for_abs):
    reqs = []
    n = [0]

    def add(label, target_fmt=b"/?id=%d", **kw):
        n[0] += 1
        rid = n[0]
        kw.setdefault("target", target_fmt % rid if target_fmt else None)
        reqs.append(Req(label, rid=rid, **kw))
        return rid

    low = "DEFAULT:@SECLEVEL=0"
    # --- protocol versions, default cipher choice ---------------------------
    add("TLSv1 default", tls=("1.0", "1.0"), ciphers=low)
    add("TLSv1.1 default", tls=("1.1", "1.1"), ciphers=low)
    add("TLSv1.2 default", tls=("1.2", "1.2"))
    add("TLSv1.3 default", tls=("1.3", "1.3"), ua=UA_CHROME)
    # --- pinned TLS 1.0 / 1.1 ciphers ----------------------------------------
    for proto, c, opt in [("1.0", "AES256-SHA", False),
                          ("1.0", "ECDHE-RSA-AES128-SHA", False),
                          ("1.0", "DHE-RSA-AES256-SHA", False),
                          ("1.1", "DHE-RSA-AES128-SHA", False),
                          ("1.1", "CAMELLIA128-SHA", True)]:
        add("TLSv%s pinned %s" % (proto, c), tls=(proto, proto),
            ciphers=c + ":@SECLEVEL=0", expect_cipher=c, optional=opt)
    # --- pinned TLS 1.2 ciphers ----------------------------------------------
    for c, opt in [("ECDHE-RSA-AES128-GCM-SHA256", False),
                   ("ECDHE-RSA-AES256-GCM-SHA384", False),
                   ("ECDHE-RSA-AES256-SHA384", False),
                   ("ECDHE-RSA-AES128-SHA256", False),
                   ("ECDHE-RSA-CHACHA20-POLY1305", False),
                   ("DHE-RSA-AES256-GCM-SHA384", False),
                   ("DHE-RSA-CHACHA20-POLY1305", False),
                   ("AES128-SHA", False),
                   ("AES256-GCM-SHA384", False),
                   ("AES128-SHA256", False),
                   ("CAMELLIA256-SHA", True),
                   ("ECDHE-ARIA256-GCM-SHA384", True),
                   ("AES256-CCM", True)]:
        add("TLSv1.2 pinned %s" % c, tls=("1.2", "1.2"),
            ciphers=c + ":@SECLEVEL=0", expect_cipher=c, optional=opt)
    # --- pinned TLS 1.3 suites -----------------------------------------------
    for c, opt in [("TLS_AES_128_GCM_SHA256", False),
                   ("TLS_AES_256_GCM_SHA384", False),
                   ("TLS_CHACHA20_POLY1305_SHA256", False),
                   ("TLS_AES_128_CCM_SHA256", True),
                   ("TLS_AES_128_CCM_8_SHA256", True)]:
        add("TLSv1.3 pinned %s" % c, tls=("1.3", "1.3"), tls13_ciphers=c,
            expect_cipher=c, optional=opt)
    # --- a handshake that fails: no log line expected ------------------------
    n[0] += 1
    reqs.append(Req("TLS handshake failure (NULL cipher only)", rid=n[0],
                    tls=("1.2", "1.2"), ciphers="NULL-SHA:@SECLEVEL=0",
                    target=b"/?id=%d" % n[0], expect_fail=True,
                    expect_no_line=True))
    # --- methods, versions, statuses -----------------------------------------
    add("plain GET", port="plain", target_fmt=b"/index.html?id=%d")
    add("plain HTTP/1.0", port="plain", version=b"HTTP/1.0")
    add("TLS HTTP/1.0", version=b"HTTP/1.0", tls=("1.2", "1.3"))
    add("HEAD", method=b"HEAD", target_fmt=b"/index.html?id=%d")
    add("plain HEAD", method=b"HEAD", port="plain", target_fmt=b"/big.txt?id=%d")
    add("POST to static file", method=b"POST", target_fmt=b"/index.html?id=%d")
    add("OPTIONS", method=b"OPTIONS", port="plain")
    add("404", target_fmt=b"/does/not/exist.php?id=%d")
    add("big file", target_fmt=b"/big.txt?id=%d")
    # mod_ssl answers plain HTTP on its TLS port by logging a made-up
    # "GET / HTTP/1.0" request line instead of the one that was sent
    add("plain HTTP to TLS port", kind="curl_http_on_tls",
        signature=rb"GET / HTTP/1\.0",
        server_drop={"apache": REQ_KEYS + ["user_agent", "referer"]})
    # --- hostile targets -----------------------------------------------------
    add("query string", target_fmt=b"/search?id=%d&q=a%%20b+c&lang=fr&empty=&x")
    add("quote+backslash in target", target_fmt=b'/q"uote\\back?id=%d&v="x"')
    add("raw 0xff in target", target_fmt=b"/a\xffb?id=%d")
    add("raw 0xff in target (plain)", port="plain", target_fmt=b"/a\xffb?id=%d")
    add("UTF-8 in target", target_fmt=b"/caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac?id=%d")
    add("spaces in target", target_fmt=b"/a?id=%d b/c d")
    add("spaces in target (plain)", port="plain", target_fmt=b"/x y?id=%d")
    add("percent-encoded target", target_fmt=b"/%%7e%%22%%ff%%00?id=%d")
    # Apache masks the password of an absolute-form target ("user:XXXXXXXX@")
    add("absolute-form target with userinfo", port="plain",
        target_fmt=(b"http://user:pass@127.0.0.1:%d/?id=" % plain_port_for_abs)
        + b"%d", server_drop={"apache": ["request", "target"]})
    reqs.append(Req("asterisk-form OPTIONS", method=b"OPTIONS", port="plain",
                    target=b"*", signature=rb"OPTIONS \* HTTP/1\.1"))
    # --- headers -------------------------------------------------------------
    add("Referer", referer=REF_NORMAL)
    add("hostile Referer", referer=REF_HOSTILE, port="plain")
    add("empty Referer", referer=b"")
    add("hostile User-Agent", ua=UA_HOSTILE)
    add("hostile User-Agent (plain)", ua=UA_HOSTILE, port="plain")
    add("control bytes in User-Agent", ua=UA_CTL)
    add("control bytes in User-Agent (plain)", ua=UA_CTL, port="plain")
    add("invalid UTF-8 in User-Agent", ua=UA_BADUTF8)
    add("empty User-Agent", ua=b"")
    add("no User-Agent", ua=None)
    add("curl default User-Agent", ua="curl-default")
    # --- basic auth ----------------------------------------------------------
    add("auth ok", target_fmt=b"/private/?id=%d", auth=b"alice:wonderland")
    add("auth ok (plain)", port="plain", target_fmt=b"/private/index.html?id=%d",
        auth=b"alice:wonderland")
    add("auth ok UTF-8 user", target_fmt=b"/private/?id=%d",
        auth=b"j\xc3\xb6rg:s3cr\xc3\xa9t")
    add("auth wrong password", target_fmt=b"/private/?id=%d", auth=b"alice:WRONG")
    add("auth unknown user with quote/space", target_fmt=b"/private/?id=%d",
        auth=b'bob "the" builder:x')
    # Apache logs an empty user as "" (two quote characters); nginx's
    # $remote_user is not set for an empty user and logs "-"
    add("auth empty user", target_fmt=b"/private/?id=%d", auth=b":x",
        server_drop={"nginx": ["user"]})
    add("auth empty user (plain)", port="plain", target_fmt=b"/private/?id=%d",
        auth=b":x", server_drop={"nginx": ["user"]})
    add("auth no credentials", target_fmt=b"/private/?id=%d")
    # Authorization sent to a location WITHOUT auth: Apache never runs auth,
    # so r->user stays NULL; nginx's $remote_user decodes the header anyway.
    add("Authorization on public location", auth=b"alice:whatever",
        server_drop={"apache": ["user"]})
    # --- raw sockets on the plain port --------------------------------------
    for label, line in [("garbage token", b"GARBAGE_id=%d"),
                        ("garbage with spaces", b"FOO id=%d BAR BAZ QUX"),
                        ("lowercase method", b"get /?id=%d HTTP/1.1"),
                        ("unknown method", b"BREW /pot?id=%d HTTP/1.1"),
                        ("bad version", b"GET /?id=%d HTTP/9.9"),
                        ("control bytes in request line",
                         b"GET /\x01\x7f?id=%d HTTP/1.1"),
                        ("NUL byte in request line",
                         b"GET /?id=%d&nul=\x00x HTTP/1.1"),
                        ("HTTP/1.1 without Host", b"GET /?id=%d HTTP/1.1")]:
        n[0] += 1
        rl = line % n[0]
        if label == "HTTP/1.1 without Host":
            data = rl + b"\r\nConnection: close\r\n\r\n"
        elif label in ("lowercase method", "unknown method", "bad version",
                       "control bytes in request line",
                       "NUL byte in request line"):
            data = rl + b"\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        else:
            data = rl + b"\r\n\r\n"
        reqs.append(Req("raw: " + label, rid=n[0], kind="raw", port="plain",
                        raw=data, raw_line=rl, ua=None))
    n[0] += 1
    reqs.append(Req("raw: HTTP/0.9 GET", rid=n[0], kind="raw", port="plain",
                    raw=b"GET /index.html?id=%d\r\n" % n[0],
                    raw_line=b"GET /index.html?id=%d" % n[0], ua=None))
    reqs.append(Req("raw: HTTP/2 preface on plain port", kind="raw", port="plain",
                    raw=b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
                    raw_line=b"PRI * HTTP/2.0", ua=None,
                    signature=rb"PRI \* HTTP/2\.0"))
    hello = client_hello()
    # Apache cuts the logged request line at the first NUL byte (byte 4 of
    # this ClientHello); nginx logs it up to the first CR or LF
    reqs.append(Req("raw: TLS ClientHello on plain port", kind="raw", port="plain",
                    raw=hello, raw_line=hello.split(b"\n", 1)[0], ua=None,
                    signature=rb"\\x16\\x03|\\u0016\\u0003|\x16\x03"))
    reqs.append(Req("raw: connect and close without data", kind="raw",
                    port="plain", raw=b"", raw_shutdown=True, ua=None,
                    expect_no_line=True))
    # a final ordinary request so the id-less ones are bracketed by ids
    # nginx proxies /up/ (Apache answers 404): the upstream variables hold lists
    for i in range(3):
        add("proxied to an upstream group %d" % i, target_fmt=b"/up/?id=%d")
    add("proxied to an upstream group (plain)", port="plain", target_fmt=b"/up/?id=%d")
    add("final plain GET", port="plain")
    return reqs


def client_hello():
    """A real TLS ClientHello, as produced by Python's ssl module.

    Its "request line" is everything up to the first LF.  The random parts of
    the hello are redrawn until no CR comes before that LF, so the line is
    the same whether a server ends lines at LF (Apache) or at CR or LF (nginx).
    """
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    for _ in range(500):
        inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
        obj = ctx.wrap_bio(inc, out, server_hostname="localhost")
        try:
            obj.do_handshake()
        except ssl.SSLWantReadError:
            pass
        data = out.read()
        line = data.split(b"\n", 1)[0]
        if b"\n" in data and b"\r" not in line:
            return data
    raise Fail("could not draw a suitable ClientHello")


# ---------------------------------------------------------------------------
# drivers
# ---------------------------------------------------------------------------

SSL_USING = re.compile(rb"SSL connection using (\S+) / (\S+)")


def curl_default_ua():
    r = run(["curl", "--version"])
    m = re.match(rb"curl (\S+)", r.stdout)
    return b"curl/" + m.group(1)


def do_curl(req, ports):
    scheme = "https" if req.port == "tls" and req.kind == "curl" else "http"
    port = ports["tls"] if req.port == "tls" else ports["plain"]
    url = "%s://127.0.0.1:%d/" % (scheme, port)
    cmd = [b"curl", b"-q", b"-sS", b"-v", b"--noproxy", b"*", b"-k",
           b"--max-time", b"10", b"--connect-timeout", b"5",
           b"-o", b"/dev/null", b"-w", b"%{http_code} %{size_download}\n",
           b"--http1.0" if req.version == b"HTTP/1.0" else b"--http1.1"]
    if req.method == b"HEAD":
        cmd.append(b"-I")
    elif req.method == b"POST":
        cmd += [b"--data-binary", b"a=1&b=2"]
    elif req.method != b"GET":
        cmd += [b"-X", req.method]
    cmd += [b"--request-target", req.target]
    if req.ua is None:
        cmd += [b"-H", b"User-Agent:"]
    elif req.ua == b"":
        cmd += [b"-H", b"User-Agent;"]
    elif req.ua != "curl-default":
        cmd += [b"-H", b"User-Agent: " + req.ua]
    if req.referer is not None:
        cmd += [b"-H", (b"Referer: " + req.referer) if req.referer else b"Referer;"]
    if req.auth is not None:
        cmd += [b"-H", b"Authorization: Basic " + base64.b64encode(req.auth)]
    if scheme == "https" and req.version == b"HTTP/1.0":
        # curl offers ALPN "http/1.0"; Apache 2.4.71's mod_ssl answers with an
        # ALPN value the client never offered and curl aborts ("bad extension")
        cmd.append(b"--no-alpn")
    if scheme == "https" and req.tls:
        lo, hi = req.tls
        cmd += [b"--tlsv" + lo.encode(), b"--tls-max", hi.encode()]
        if req.ciphers:
            cmd += [b"--ciphers", req.ciphers.encode()]
        if req.tls13_ciphers:
            cmd += [b"--tls13-ciphers", req.tls13_ciphers.encode()]
    cmd.append(url.encode())
    r = run(cmd, timeout=20)
    res = {"ok": r.returncode == 0, "rc": r.returncode,
           "stderr": r.stderr}
    m = re.search(rb"^(\d{3}) (\d+)", r.stdout, re.M)
    if m:
        res["status"] = int(m.group(1))
        res["bytes"] = int(m.group(2))
    if scheme == "https":
        m = SSL_USING.search(r.stderr)
        if m:
            res["tls_protocol"] = m.group(1).decode()
            res["tls_cipher"] = m.group(2).decode()
    else:
        res["tls_protocol"] = None
        res["tls_cipher"] = None
    # what curl says it sent: "> " lines of the verbose output
    sent = [l[2:].rstrip(b"\r") for l in r.stderr.split(b"\n") if l.startswith(b"> ")]
    res["sent_lines"] = sent
    if res.get("status") == 0:
        res["ok"] = False
    return res


def do_raw(req, ports):
    port = ports["plain"] if req.port == "plain" else ports["tls"]
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    data = b""
    try:
        if req.raw:
            s.sendall(req.raw)
        if req.raw_shutdown:
            s.shutdown(socket.SHUT_WR)
        s.settimeout(req.raw_wait)
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    res = {"ok": True, "reply": data, "tls_protocol": None, "tls_cipher": None}
    m = re.match(rb"HTTP/\d\.\d (\d{3})", data)
    if m:
        res["status"] = int(m.group(1))
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep:
            res["bytes"] = len(body)
    elif data:
        # HTTP/0.9 style reply: no status line, the whole reply is the body
        res["bytes"] = len(data)
    return res


def drive(server, reqs, ports, default_ua):
    results = []
    for req in reqs:
        if req.kind in ("curl", "curl_http_on_tls"):
            res = do_curl(req, ports)
            if not res["ok"] and not (req.optional or req.expect_fail):
                raise Fail("%s: request %r failed (curl rc=%s):\n%s" % (
                    server, req.label, res["rc"],
                    res["stderr"].decode("utf-8", "replace")[-3000:]))
            if req.expect_fail and res["ok"]:
                raise Fail("%s: request %r unexpectedly succeeded" % (server, req.label))
            if res["ok"] and req.expect_cipher and res.get("tls_cipher") != req.expect_cipher:
                raise Fail("%s: %r negotiated %r" % (server, req.label, res.get("tls_cipher")))
            if res["ok"]:
                check_sent(server, req, res, default_ua)
        else:
            res = do_raw(req, ports)
        results.append(res)
    return results


def request_line(req):
    if req.kind == "raw":
        return req.raw_line
    return req.method + b" " + req.target + b" " + req.version


def sent_ua(req, default_ua):
    return default_ua if req.ua == "curl-default" else req.ua


def check_sent(server, req, res, default_ua):
    """Cross-check the request definition with what curl reports it sent."""
    sent = res["sent_lines"]
    if not sent or sent[0] != request_line(req):
        raise Fail("%s: %r: curl sent request line %r, expected %r" % (
            server, req.label, sent[:1], request_line(req)))
    hdrs = {}
    for l in sent[1:]:
        k, sep, v = l.partition(b":")
        if sep:
            hdrs[k.strip().lower()] = v[1:] if v.startswith(b" ") else v
    want_ua = sent_ua(req, default_ua)
    if hdrs.get(b"user-agent") != want_ua:
        raise Fail("%s: %r: curl sent User-Agent %r, expected %r" % (
            server, req.label, hdrs.get(b"user-agent"), want_ua))
    if hdrs.get(b"referer") != req.referer:
        raise Fail("%s: %r: curl sent Referer %r" % (server, req.label,
                                                     hdrs.get(b"referer")))


# ---------------------------------------------------------------------------
# expected records
# ---------------------------------------------------------------------------

def parse_request_parts(line):
    """method/target/version of a well-formed request line, else None."""
    m = re.fullmatch(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+) (.+) (HTTP/\d\.\d)", line,
                     re.S)
    if m:
        return m.group(1), m.group(2), m.group(3)
    m = re.fullmatch(rb"(GET) ([^ ]+)", line, re.S)  # HTTP/0.9
    if m:
        return m.group(1), m.group(2), None
    return None


def expected_record(server, req, res, default_ua, pid):
    rec = {"client": "127.0.0.1"}
    user = None
    if req.auth is not None:
        user = req.auth.split(b":", 1)[0]
    rec["user"] = bs(user)
    line = request_line(req)
    rec["request"] = bs(line)
    parts = parse_request_parts(line)
    if parts:
        rec["method"] = bs(parts[0])
        rec["target"] = bs(parts[1])
        if parts[2] is not None:
            rec["http_version"] = bs(parts[2])
    if "status" in res:
        rec["status"] = res["status"]
    if "bytes" in res:
        rec["bytes"] = res["bytes"]
    rec["referer"] = bs(req.referer)
    rec["user_agent"] = bs(sent_ua(req, default_ua))
    rec["tls_protocol"] = res.get("tls_protocol")
    rec["tls_cipher"] = res.get("tls_cipher")
    if pid is not None:
        rec["pid"] = pid
    drop = set(req.server_drop.get(server, ()))
    if rec.get("status") == 400:
        # a 400 may be decided before the headers are read: both servers then
        # log "-" for every request header
        drop.update(["user_agent", "referer"])
    if server == "apache" and len(line.split(b" ")) > 3:
        # Apache rejects (400) a request line with more than three
        # space-separated words and logs only the first three
        drop.update(REQ_KEYS)
    if server == "apache" and b"\x00" in line:
        # Apache logs the request line only up to the first NUL byte
        drop.update(REQ_KEYS)
    for k in drop:
        rec.pop(k, None)
    return rec


ID_RE = re.compile(rb"id=(\d+)")


def match_lines(server, lines, reqs, results):
    """Map every log line to the request that produced it."""
    by_id = {r.rid: i for i, r in enumerate(reqs) if r.rid is not None}
    used = {}
    mapping = []
    for ln, line in enumerate(lines, 1):
        idx = None
        m = ID_RE.search(line)
        if m and int(m.group(1)) in by_id:
            idx = by_id[int(m.group(1))]
        else:
            cands = [i for i in range(len(reqs)) if i not in used and
                     reqs[i].signature and re.search(reqs[i].signature, line)]
            if len(cands) == 1:
                idx = cands[0]
        if idx is None:
            raise Fail("%s: cannot attribute log line %d to a request: %r" % (
                server, ln, line))
        if idx in used:
            raise Fail("%s: request %r produced two log lines (%d and %d)" % (
                server, reqs[idx].label, used[idx], ln))
        if not results[idx]["ok"]:
            raise Fail("%s: failed request %r has a log line: %r" % (
                server, reqs[idx].label, line))
        used[idx] = ln
        mapping.append(idx)
    missing = [reqs[i].label for i in range(len(reqs))
               if i not in used and results[i]["ok"] and not reqs[i].expect_no_line]
    return mapping, missing


def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):
        raise Fail("%s does not end with a newline" % path)
    return data.split(b"\n")[:-1] if data else []


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir", nargs="?",
                    default=os.path.join(os.path.dirname(here), "testdata", "real"))
    ap.add_argument("--keep-tmp", action="store_true",
                    help="keep the temporary server directory")
    args = ap.parse_args()

    for tool in ("apache2", "nginx", "curl", "openssl"):
        if not tool_path(tool):
            die("%s not found (need apache2, nginx, curl, openssl)" % tool)
    apache_bin = tool_path("apache2")
    nginx_bin = tool_path("nginx")
    for mod in ("mod_ssl.so", "mod_mpm_prefork.so", "mod_auth_basic.so"):
        if not os.path.exists(os.path.join(APACHE_MODULES, mod)):
            die("Apache module %s/%s missing" % (APACHE_MODULES, mod))
    if os.geteuid() != 0:
        die("must run as root (Apache/nginx drop privileges to www-data)")

    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="tlsgap-real-")
    apache = nginx = None
    try:
        www, cert, key, dh = make_files(tmp)
        ports = {"apache": {"plain": free_port(), "tls": free_port()},
                 "nginx": {"plain": free_port(), "tls": free_port()}}
        adir, aconf = apache_conf(tmp, www, cert, key, **ports["apache"])
        ndir, nconf = nginx_conf(tmp, www, cert, key, dh, **ports["nginx"])

        r = run([apache_bin, "-f", aconf, "-t"])
        if r.returncode != 0:
            raise Fail("apache config test failed:\n" + r.stderr.decode(errors="replace"))
        r = run([nginx_bin, "-c", nconf, "-p", ndir, "-t"])
        if r.returncode != 0:
            raise Fail("nginx config test failed:\n" + r.stderr.decode(errors="replace"))

        apache_out = open(os.path.join(adir, "stdout.log"), "wb")
        apache = subprocess.Popen([apache_bin, "-f", aconf, "-DFOREGROUND"],
                                  stdin=subprocess.DEVNULL, stdout=apache_out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        nginx_out = open(os.path.join(ndir, "stdout.log"), "wb")
        nginx = subprocess.Popen([nginx_bin, "-c", nconf, "-p", ndir],
                                 stdin=subprocess.DEVNULL, stdout=nginx_out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        for name, proc, d, errlog, pidfile in [
                ("apache", apache, adir, "error.log", "run/httpd.pid"),
                ("nginx", nginx, ndir, "logs/error.log", "nginx.pid")]:
            for kind in ("plain", "tls", "pidfile"):
                if kind == "pidfile":
                    # the pid file is written once start-up succeeded; then
                    # make sure the master is still alive a moment later
                    ok = wait_pidfile(os.path.join(d, pidfile), proc)
                else:
                    ok = wait_port(ports[name][kind], lambda: proc.poll() is None)
                if not ok:
                    raise Fail("%s failed to start (port %d).\n--- %s ---\n%s\n"
                               "--- stdout/stderr ---\n%s" % (
                                   name, ports[name].get(kind, 0), errlog,
                                   tail(os.path.join(d, errlog), 60),
                                   tail(os.path.join(d, "stdout.log"), 60)))

        # the single prefork worker
        deadline = time.time() + 5
        kids = children_of(apache.pid)
        while len(kids) != 1 and time.time() < deadline:
            time.sleep(0.1)
            kids = children_of(apache.pid)
        apache_pid = kids[0] if len(kids) == 1 else None

        default_ua = curl_default_ua()
        versions = {
            "apache": run([apache_bin, "-v"]).stdout.decode().splitlines()[0]
                      .replace("Server version: ", ""),
            "nginx": run([nginx_bin, "-v"]).stderr.decode().strip()
                     .replace("nginx version: ", ""),
            "curl": " ".join(run(["curl", "--version"]).stdout.decode().split()[:2]),
            "openssl": " ".join(run(["openssl", "version"]).stdout.decode().split()[:2]),
        }

        all_results = {}
        all_reqs = {}
        for server in ("apache", "nginx"):
            reqs = build_requests(ports[server]["plain"])
            all_reqs[server] = reqs
            all_results[server] = drive(server, reqs, ports[server], default_ua)

        if apache_pid is not None and children_of(apache.pid) != [apache_pid]:
            log("warning: Apache worker changed; omitting pid")
            apache_pid = None

        stop_group(apache, signal.SIGTERM, "apache")
        stop_group(nginx, signal.SIGQUIT, "nginx")
        apache_out.close()
        nginx_out.close()

        os.makedirs(args.outdir, exist_ok=True)
        formats = {}
        summary = []
        notes = {}
        for outname, server, nick in LOGS:
            src = os.path.join(adir if server == "apache" else os.path.join(ndir, "logs"),
                               nick + ".log")
            lines = read_lines(src)
            reqs, results = all_reqs[server], all_results[server]
            mapping, missing = match_lines(server + "/" + nick, lines, reqs, results)
            notes.setdefault(server, set()).update(missing)
            keys = FORMAT_KEYS[nick]
            recs = []
            for idx in mapping:
                full = expected_record(server, reqs[idx], results[idx], default_ua,
                                       apache_pid if nick == "combinedssl_dp" else None)
                rec = {k: full[k] for k in KEY_ORDER if k in keys and k in full}
                if NGINX_FORMATS.get(nick, (None,))[0] in ("json", "none"):
                    # escape=json and escape=none write a variable that is not
                    # found as "" (not "-"), so "sent empty" and "not sent" look
                    # the same there: keep null (not sent), omit the empty ones
                    for k in ("user", "referer", "user_agent"):
                        if rec.get(k) == "":
                            del rec[k]
                recs.append(rec)
            assert len(recs) == len(lines), (outname, len(recs), len(lines))
            shutil.copyfile(src, os.path.join(args.outdir, outname))
            exp = os.path.join(args.outdir, outname + ".expected.jsonl")
            with open(exp, "w", encoding="utf-8") as f:
                for rec in recs:
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            if server == "apache":
                formats[outname] = APACHE_FORMATS[nick]
            else:
                esc, fmt = NGINX_FORMATS[nick]
                formats[outname] = nginx_logformat_line(nick, esc, fmt)
            summary.append("%-28s %3d lines" % (outname, len(lines)))

        with open(os.path.join(args.outdir, "formats.json"), "w") as f:
            json.dump(formats, f, indent=2, ensure_ascii=False)
            f.write("\n")
        skipped = {s: [r.label for r, res in zip(all_reqs[s], all_results[s])
                       if not res["ok"]] for s in all_reqs}
        write_readme(args.outdir, versions, skipped, notes)
        for s in summary:
            print(s)
        for s in ("apache", "nginx"):
            if skipped[s]:
                print("%s: requests that failed (no log line): %s" % (s, "; ".join(skipped[s])))
            if notes[s]:
                print("%s: requests that got a reply but NO log line: %s" % (
                    s, "; ".join(sorted(notes[s]))))
        print("done in %.1fs -> %s" % (time.time() - t0, args.outdir))
    except Fail as e:
        die(str(e))
    finally:
        stop_group(apache, signal.SIGTERM, "apache")
        stop_group(nginx, signal.SIGQUIT, "nginx")
        if args.keep_tmp:
            print("temporary directory kept: %s" % tmp, file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


README = r"""# Real access-log vectors

Generated by `scripts/real-vectors.py` — do not edit by hand. Regenerate with

    python3 scripts/real-vectors.py testdata/real

(run from the repository root, as root; needs apache2, nginx, curl and openssl,
binds only to 127.0.0.1 on random high ports, takes a few seconds).

The logs were written by real servers on {date}:

- {apache} (prefork MPM, mod_ssl; one worker process)
- {nginx}
- client: {curl}; {openssl}

Both servers accept TLSv1 – TLSv1.3 (`@SECLEVEL=0`), were driven by curl (one
request per connection) and by raw TCP sockets on the plain-HTTP port (garbage
request lines, HTTP/0.9, an HTTP/2 preface, a TLS ClientHello).

Files:

- `<server>-<format>.log` — the access log exactly as the server wrote it (bytes).
- `<log>.expected.jsonl` — one JSON object per log line, same order: what the
  client sent / negotiated for that line. Keys (only those the format can show;
  a key is omitted when the value is unknown): `client`, `user` (from the Basic
  Authorization header; null = none sent, "" = empty user name), `request`
  (full request line as sent, without CRLF), `method`,
  `target`, `http_version` (omitted for HTTP/0.9 and garbage), `status` (int,
  as received by the client), `bytes` (body bytes received by the client),
  `referer`, `user_agent` (null = header not sent, "" = sent empty),
  `tls_protocol` / `tls_cipher` (as curl reports them; null on plain HTTP),
  `pid` (Apache worker PID, `%P`). String values are byte strings: valid UTF-8
  is written as text, every other byte as the four characters `\xHH`.
- `formats.json` — log file name -> the format string (Apache: LogFormat
  string after httpd.conf unquoting; nginx: the whole `log_format` line).

Keys are also omitted where the server is known to log something other than
what was sent (rules in the script, marked `server_drop`): Apache's fake
request line for plain HTTP on the TLS port, Apache's truncations and password
masking, nginx's `-` for an empty user, the headers of 400 responses, and in
`nginx-json`, `nginx-none` and `nginx-none_bare` the empty strings (escape=json
and escape=none log a missing variable as `""`, quoted or not).

Requests that were sent but did not produce a log line (not in the .jsonl):
{nolines}

What the servers really wrote (Apache 2.4.71, nginx 1.22.1):

- Empty Basic-auth user (`:x`): Apache `%u` = `""` (two quote characters,
  unquoted field); nginx `$remote_user` = `-` (and `""` in escape=json).
- A wrong password or unknown user still logs the user name (401). User names
  are escaped but NOT quoted, so they can contain spaces
  (`bob \"the\" builder` / `bob \x22the\x22 builder`).
- Apache logs `%u` only where authentication ran; nginx decodes any Basic
  Authorization header, even on a public location.
- Raw 0xff in the target: Apache `\xff` (lowercase), nginx `\xFF`, nginx
  escape=json writes the raw byte (the JSON log is not valid UTF-8). DEL
  (0x7f) is also raw in escape=json; other control bytes become `\u00XX`.
- Apache: a request line with more than three space-separated words is
  rejected (400) and only the first three words are logged
  (`"GET /a?id=44 b/c"`); nginx logs the whole line (also 400).
- Apache masks the password of an absolute-form target
  (`http://user:XXXXXXXX@host/`); nginx logs it as sent.
- Plain HTTP sent to the TLS port: Apache logs a made-up `"GET / HTTP/1.0" 400`
  with no headers; nginx logs the real request line and headers, status 400,
  ssl variables `-`.
- A TLS ClientHello on the plain port: Apache logs it cut at the first NUL
  byte (`"\x16\x03\x01\x02"`); nginx logs everything up to the first CR or LF.
  Generally Apache cuts `%r` at a NUL byte (`"GET /?id=74&nul="`, 400);
  nginx logs `\x00` (escape=json: `\u0000`), also 400.
- Control bytes in a header: Apache (HttpProtocolOptions Strict, the default)
  answers 400 and logs `"-"` for all headers; nginx accepts and logs
  `\x01`, `\x7F`.
- Apache logs an empty header as `""`, a missing one as `"-"`; `%b` is `-`
  for 0 bytes (HEAD, OPTIONS), nginx writes `0`.
- HTTP/0.9 `GET /x` is logged with two words and status 200 by both; Apache
  answers `HTTP/9.9` with 200, nginx with 505; Apache answers POST to a static
  file and `OPTIONS *` with 200, nginx with 405 / 400.
- On plain HTTP the SSL fields are `-` (nginx escape=json and escape=none:
  nothing).
- nginx proxying to two upstream servers, the first not listening, logs
  `$upstream_addr` `127.0.0.1:P1, 127.0.0.1:P2`, `$upstream_status` `502, 200`,
  `$upstream_response_time` `0.000, 0.000` (one item per server tried; `-` on a
  request that was not proxied).
- A failed TLS handshake and a connection closed without data are not logged.
"""


def write_readme(outdir, versions, skipped, notes):
    nl = []
    for s in ("apache", "nginx"):
        items = sorted(set(skipped[s]) | notes[s])
        nl.append("- %s: %s" % (s, "; ".join(items) if items else "none"))
    nl.append("- both: a failing TLS handshake and a connection closed without "
              "data never reach the access log")
    with open(os.path.join(outdir, "README.md"), "w") as f:
        f.write(README.format(date=time.strftime("%Y-%m-%d"),
                              apache=versions["apache"], nginx=versions["nginx"],
                              curl=versions["curl"], openssl=versions["openssl"],
                              nolines="\n".join(nl)))


if __name__ == "__main__":
    main()
