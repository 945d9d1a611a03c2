#!/usr/bin/env python3
"""Generate crates/ciphers/data/ciphers.csv, tlsgap's cipher-suite catalogue.

Sources (all under scripts/cipher-sources/, see its README.md for provenance):
  tls-parameters-4.csv   IANA TLS Cipher Suites registry: code, IANA name, Recommended
  openssl-ciphers-V.txt  `openssl ciphers -V -stdname 'ALL:COMPLEMENTOFALL:@SECLEVEL=0'`
                         captured from OpenSSL 3.0 (Debian 12)
  legacy.csv             hand-kept rows for suites that OpenSSL build no longer lists

Every IANA-registered suite gets a row; its algorithms come from OpenSSL's output when
OpenSSL knows it, else from legacy.csv, else from parsing the IANA name. The IANA-name
parser is checked against every OpenSSL and legacy row that has an IANA code, so rows
that only IANA knows are derived by a parser that agrees with OpenSSL on 150+ suites.

The verdict column uses the same rules as crates/ciphers/src/verdict.rs (a Rust test
checks that every row agrees).

Usage: python3 scripts/gen-ciphers.py          (rewrite the CSV)
       python3 scripts/gen-ciphers.py --check  (exit 1 if the checked-in CSV is stale)
Python 3 standard library only.
"""

import csv
import io
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ROOT / "scripts" / "cipher-sources"
OUT = ROOT / "crates" / "ciphers" / "data" / "ciphers.csv"

COLUMNS = [
    "code", "iana_name", "openssl_names", "min_protocol", "kx", "au", "enc", "mode",
    "key_bits", "strength_bits", "mac", "forward_secrecy", "aead", "export",
    "iana_recommended", "verdict", "strength_class", "in_openssl3",
]

PROTOCOLS = ["SSLv2", "SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"]

# IANA key-exchange part -> (kx, au) in `openssl ciphers -V` spelling.
KX = {
    "NULL": ("None", "None"),
    "RSA": ("RSA", "RSA"),
    "DH_DSS": ("DH/DSS", "DH"),
    "DH_RSA": ("DH/RSA", "DH"),
    "DHE_DSS": ("DH", "DSS"),
    "DHE_RSA": ("DH", "RSA"),
    "DH_anon": ("DH", "None"),
    "KRB5": ("KRB5", "KRB5"),
    "PSK": ("PSK", "PSK"),
    "DHE_PSK": ("DHEPSK", "PSK"),
    "PSK_DHE": ("DHEPSK", "PSK"),  # IANA's spelling for 0xC0,0xAA/0xAB
    "RSA_PSK": ("RSAPSK", "RSA"),
    "ECDH_ECDSA": ("ECDH/ECDSA", "ECDH"),
    "ECDHE_ECDSA": ("ECDH", "ECDSA"),
    "ECDH_RSA": ("ECDH/RSA", "ECDH"),
    "ECDHE_RSA": ("ECDH", "RSA"),
    "ECDH_anon": ("ECDH", "None"),
    "ECDHE_PSK": ("ECDHEPSK", "PSK"),
    "SRP_SHA": ("SRP", "SRP"),
    "SRP_SHA_RSA": ("SRP", "RSA"),
    "SRP_SHA_DSS": ("SRP", "DSS"),
    "ECCPWD": ("ECCPWD", "ECCPWD"),
    "GOSTR341112_256": ("GOST18", "GOST12"),
}

# IANA bulk-cipher part -> (enc, key_bits). Longest keys are tried first.
ENC = {
    "NULL": ("None", 0),
    "RC4_40": ("RC4", 40),
    "RC4_128": ("RC4", 128),
    "RC2_CBC_40": ("RC2", 40),
    "IDEA_CBC": ("IDEA", 128),
    "DES40_CBC": ("DES", 40),
    "DES_CBC_40": ("DES", 40),
    "DES_CBC": ("DES", 56),
    "3DES_EDE_CBC": ("3DES", 168),
    "SEED_CBC": ("SEED", 128),
    "AES_128_CBC": ("AES", 128),
    "AES_256_CBC": ("AES", 256),
    "AES_128_GCM": ("AESGCM", 128),
    "AES_256_GCM": ("AESGCM", 256),
    "AES_128_CCM": ("AESCCM", 128),
    "AES_256_CCM": ("AESCCM", 256),
    "AES_128_CCM_8": ("AESCCM8", 128),
    "AES_256_CCM_8": ("AESCCM8", 256),
    "CAMELLIA_128_CBC": ("Camellia", 128),
    "CAMELLIA_256_CBC": ("Camellia", 256),
    "CAMELLIA_128_GCM": ("CamelliaGCM", 128),
    "CAMELLIA_256_GCM": ("CamelliaGCM", 256),
    "ARIA_128_CBC": ("ARIA", 128),
    "ARIA_256_CBC": ("ARIA", 256),
    "ARIA_128_GCM": ("ARIAGCM", 128),
    "ARIA_256_GCM": ("ARIAGCM", 256),
    "CHACHA20_POLY1305": ("CHACHA20/POLY1305", 256),
    "28147_CNT": ("GOST89", 256),
    "KUZNYECHIK_CTR": ("KUZNYECHIK", 256),
    "MAGMA_CTR": ("MAGMA", 256),
    "KUZNYECHIK_MGM_L": ("KUZNYECHIKMGM", 256),
    "KUZNYECHIK_MGM_S": ("KUZNYECHIKMGM", 256),
    "MAGMA_MGM_L": ("MAGMAMGM", 256),
    "MAGMA_MGM_S": ("MAGMAMGM", 256),
}

# TLS 1.3 style names (no _WITH_): TLS_<aead>_<hash>.
TLS13_ENC = {
    "AES_128_GCM": ("AESGCM", 128),
    "AES_256_GCM": ("AESGCM", 256),
    "CHACHA20_POLY1305": ("CHACHA20/POLY1305", 256),
    "AES_128_CCM": ("AESCCM", 128),
    "AES_128_CCM_8": ("AESCCM8", 128),
    "SM4_GCM": ("SM4GCM", 128),
    "SM4_CCM": ("SM4CCM", 128),
    "AEGIS_256": ("AEGIS256", 256),
    "AEGIS_128L": ("AEGIS128L", 128),
    # RFC 9150 integrity-only suites: no encryption at all.
    "SHA256": ("None", 0),
    "SHA384": ("None", 0),
}

AEAD_ENCS = {
    "AESGCM", "AESCCM", "AESCCM8", "CamelliaGCM", "ARIAGCM", "CHACHA20/POLY1305",
    "SM4GCM", "SM4CCM", "AEGIS256", "AEGIS128L", "KUZNYECHIKMGM", "MAGMAMGM",
}
STREAM_ENCS = {"RC4", "GOST89", "KUZNYECHIK", "MAGMA"}
PSK_KX = {"PSK", "DHEPSK", "RSAPSK", "ECDHEPSK"}
FS_KX = {"DH", "ECDH", "DHEPSK", "ECDHEPSK", "ECCPWD", "any"}
GOST_SM4_ENCS = {"GOST89", "KUZNYECHIK", "MAGMA", "KUZNYECHIKMGM", "MAGMAMGM", "SM4GCM", "SM4CCM"}


class GenError(Exception):
    pass


def parse_code(text):
    """'0xC0,0x2F' -> (0xC0, 0x2F); None for ranges and wildcards."""
    parts = text.strip().split(",")
    if not 2 <= len(parts) <= 3:
        return None
    out = []
    for p in parts:
        if not re.fullmatch(r"0x[0-9A-Fa-f]{2}", p):
            return None
        out.append(int(p, 16))
    return tuple(out)


def format_code(code):
    return ",".join("0x%02X" % b for b in code)


def mode_of(enc):
    if enc == "None":
        return "null"
    if enc in AEAD_ENCS:
        return "aead"
    if enc in STREAM_ENCS:
        return "stream"
    return "cbc"


def strength_class(enc, key_bits, export):
    """OpenSSL's class: the rule OpenSSL 1.1.x applies (3DES/RC4/IDEA/SEED MEDIUM)."""
    if export:
        return "EXPORT"
    if enc == "None":
        return "NONE"
    if enc == "DES" or (enc == "RC4" and key_bits < 128):
        return "LOW"
    if enc in ("RC4", "3DES", "IDEA", "SEED", "RC2"):
        return "MEDIUM"
    return "HIGH"


def strength_bits(enc, key_bits):
    return 112 if enc == "3DES" else key_bits


def from_iana_name(name):
    """Derive algorithms from an IANA suite name (TLS_<kx>_WITH_<enc>_<mac> or TLS 1.3)."""
    if not name.startswith("TLS_"):
        raise GenError("not an IANA suite name: " + name)
    body = name[4:]
    if "_WITH_" not in body:
        for key in sorted(TLS13_ENC, key=len, reverse=True):
            if body.startswith(key + "_") or body == key:
                enc, bits = TLS13_ENC[key]
                rest = body[len(key):].lstrip("_")
                mac = "AEAD" if enc != "None" else rest
                return dict(kx="any", au="any", enc=enc, key_bits=bits, mac=mac,
                            export=False, min_protocol="TLSv1.3")
        raise GenError("unknown TLS 1.3 suite name: " + name)
    kx_part, enc_mac = body.split("_WITH_", 1)
    export = False
    for marker in ("_EXPORT1024", "_EXPORT"):
        if marker in kx_part:
            export = True
            kx_part = kx_part.replace(marker, "")
    if kx_part not in KX:
        raise GenError("unknown key exchange %r in %s" % (kx_part, name))
    kx, au = KX[kx_part]
    for key in sorted(ENC, key=len, reverse=True):
        if enc_mac == key or enc_mac.startswith(key + "_"):
            enc, bits = ENC[key]
            rest = enc_mac[len(key):].lstrip("_")
            break
    else:
        raise GenError("unknown cipher in " + name)
    if enc in AEAD_ENCS:
        mac = "AEAD"
    else:
        mac = {"SHA": "SHA1", "MD5": "MD5", "SHA256": "SHA256", "SHA384": "SHA384",
               "NULL": "None", "IMIT": "GOST89",
               "OMAC": enc + "OMAC"}.get(rest)
        if mac is None:
            raise GenError("unknown MAC %r in %s" % (rest, name))
    if enc in ("KUZNYECHIKMGM", "MAGMAMGM"):
        # draft-smyshlyaev-tls13-gost-suites: TLS 1.3 only, key exchange not in the suite.
        kx, au, min_protocol = "any", "any", "TLSv1.3"
    elif enc in AEAD_ENCS or kx == "GOST18":
        min_protocol = "TLSv1.2"
    elif mac in ("SHA256", "SHA384"):
        # OpenSSL allows the SHA-2 CBC PSK suites from TLS 1.0 (RFC 5487, 5489).
        min_protocol = "TLSv1" if kx in PSK_KX else "TLSv1.2"
    elif kx.startswith("ECDH") or kx == "ECDHEPSK":
        min_protocol = "TLSv1"
    else:
        min_protocol = "SSLv3"
    return dict(kx=kx, au=au, enc=enc, key_bits=bits, mac=mac, export=export,
                min_protocol=min_protocol)


def read_iana():
    suites = {}
    with open(SOURCES / "tls-parameters-4.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            code = parse_code(row["Value"])
            name = row["Description"].strip()
            if code is None or not name.startswith("TLS_") or name.endswith("_SCSV"):
                continue
            suites[code] = (name, row["Recommended"].strip())
    return suites


OPENSSL_LINE = re.compile(
    r"^\s*(0x[0-9A-F]{2},0x[0-9A-F]{2}) - (\S+)\s+- (\S+)\s+(\S+)\s+"
    r"Kx=(\S+)\s+Au=(\S+)\s+Enc=(\S+)\s+Mac=(\S+)\s*$")


def split_enc(text):
    """'AESGCM(256)' -> ('AESGCM', 256); 'None' -> ('None', 0)."""
    if text == "None":
        return "None", 0
    m = re.fullmatch(r"(.+)\((\d+)\)", text)
    if not m:
        raise GenError("unparsable Enc=" + text)
    return m.group(1), int(m.group(2))


def read_openssl():
    rows = []
    with open(SOURCES / "openssl-ciphers-V.txt", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            m = OPENSSL_LINE.match(line)
            if not m:
                raise GenError("unparsable openssl line: " + line.rstrip())
            code, std, name, proto, kx, au, enc, mac = m.groups()
            enc, bits = split_enc(enc)
            rows.append(dict(code=parse_code(code), std=std, names=[name], min_protocol=proto,
                             kx=kx, au=au, enc=enc, key_bits=bits, mac=mac))
    return rows


def read_legacy():
    with open(SOURCES / "legacy.csv", newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    rows = []
    for row in csv.DictReader(io.StringIO("".join(lines))):
        code = parse_code(row["code"])
        if code is None:
            raise GenError("bad code in legacy.csv: " + row["code"])
        export = {"Y": True, "N": False}[row["export"]]
        rows.append(dict(code=code, names=row["openssl_names"].split("|"),
                         min_protocol=row["min_protocol"], kx=row["kx"], au=row["au"],
                         enc=row["enc"], key_bits=int(row["key_bits"]),
                         strength_bits=int(row["strength_bits"]), mac=row["mac"],
                         export=export, strength_class=row["strength_class"]))
    return rows


def verdict(s):
    """The rule table of crates/ciphers/src/verdict.rs; keep the two in step."""
    if (len(s["code"]) == 3 or s["min_protocol"] == "SSLv2" or s["enc"] == "None"
            or s["au"] == "None" or s["export"] or s["enc"] in ("DES", "RC2", "RC4")
            or s["mac"] == "MD5"):
        return "insecure"
    if (s["enc"] in ("3DES", "IDEA") or s["mode"] != "aead" or s["mac"] == "SHA1"
            or not s["forward_secrecy"] or s["enc"] in GOST_SM4_ENCS
            or s["kx"].startswith("GOST") or s["au"].startswith("GOST")):
        return "weak"
    if s["iana_name"] and s["enc"] in ("AESGCM", "CHACHA20/POLY1305") and (
            s["min_protocol"] == "TLSv1.3"
            or (s["kx"] == "ECDH" and s["au"] in ("RSA", "ECDSA"))):
        return "recommended"
    return "secure"


def compare(what, derived, row, fields):
    bad = ["%s: %s says %r, IANA name gives %r" % (f, what, row[f], derived[f])
           for f in fields if row[f] != derived[f]]
    if bad:
        raise GenError("%s %s disagrees with its IANA name:\n  %s"
                       % (format_code(row["code"]), "/".join(row["names"]), "\n  ".join(bad)))


def build():
    iana = read_iana()
    suites = {}
    fields = ["kx", "au", "enc", "key_bits", "mac", "min_protocol"]

    for row in read_openssl():
        code = row["code"]
        if code not in iana:
            raise GenError("OpenSSL suite %s is not in the IANA registry" % format_code(code))
        if row["std"] != iana[code][0]:
            raise GenError("OpenSSL's standard name %s differs from IANA's %s"
                           % (row["std"], iana[code][0]))
        compare("openssl", from_iana_name(iana[code][0]), row, fields)
        row.update(export=False, in_openssl3=True,
                   strength_bits=strength_bits(row["enc"], row["key_bits"]),
                   strength_class=strength_class(row["enc"], row["key_bits"], False))
        suites[code] = row

    for row in read_legacy():
        code = row["code"]
        if code in suites:
            raise GenError("legacy.csv repeats %s, which OpenSSL lists" % format_code(code))
        if code in iana:
            derived = from_iana_name(iana[code][0])
            # Legacy rows keep OpenSSL's min_protocol convention; compare the algorithms.
            compare("legacy.csv", derived, row, fields[:-1] + ["export"])
        want = strength_class(row["enc"], row["key_bits"], row["export"])
        if row["strength_class"] != want:
            raise GenError("%s: strength_class %s, rule gives %s"
                           % (row["names"][0], row["strength_class"], want))
        if row["strength_bits"] != strength_bits(row["enc"], row["key_bits"]) and not row["export"]:
            raise GenError("%s: unexpected strength_bits" % row["names"][0])
        row["in_openssl3"] = False
        suites[code] = row

    for code, (name, _) in iana.items():
        if code in suites:
            continue
        row = from_iana_name(name)
        row.update(code=code, names=[], in_openssl3=False,
                   strength_bits=strength_bits(row["enc"], row["key_bits"]),
                   strength_class=strength_class(row["enc"], row["key_bits"], row["export"]))
        suites[code] = row

    out = []
    seen = {}
    for code in sorted(suites, key=lambda c: (len(c), c)):
        s = suites[code]
        s["iana_name"], s["iana_recommended"] = iana.get(code, ("", ""))
        s["mode"] = mode_of(s["enc"])
        s["aead"] = s["mode"] == "aead"
        s["forward_secrecy"] = s["kx"] in FS_KX
        if s["min_protocol"] not in PROTOCOLS:
            raise GenError("bad min_protocol " + s["min_protocol"])
        s["verdict"] = verdict(s)
        # A name may be shared by one SSLv2 suite and one TLS suite, never more.
        space = "sslv2" if len(code) == 3 else "tls"
        for n in set(s["names"] + ([s["iana_name"]] if s["iana_name"] else [])):
            if (space, n) in seen:
                raise GenError("name %s used by %s and %s"
                               % (n, format_code(seen[(space, n)]), format_code(code)))
            seen[(space, n)] = code
        yn = lambda b: "Y" if b else "N"
        out.append([format_code(code), s["iana_name"], "|".join(s["names"]), s["min_protocol"],
                    s["kx"], s["au"], s["enc"], s["mode"], str(s["key_bits"]),
                    str(s["strength_bits"]), s["mac"], yn(s["forward_secrecy"]), yn(s["aead"]),
                    yn(s["export"]), s["iana_recommended"], s["verdict"], s["strength_class"],
                    yn(s["in_openssl3"])])
    buf = io.StringIO()
    buf.write("# Generated by scripts/gen-ciphers.py from scripts/cipher-sources/; do not edit.\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(out)
    return buf.getvalue(), len(out)


def main(argv):
    try:
        text, n = build()
    except GenError as e:
        print("gen-ciphers: " + str(e), file=sys.stderr)
        return 2
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print("gen-ciphers: %s is stale; run python3 scripts/gen-ciphers.py" % OUT,
                  file=sys.stderr)
            return 1
        print("gen-ciphers: %s is up to date (%d suites)" % (OUT.relative_to(ROOT), n))
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print("gen-ciphers: wrote %s (%d suites)" % (OUT.relative_to(ROOT), n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
