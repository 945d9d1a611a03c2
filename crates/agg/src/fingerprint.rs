//! Client fingerprints from the ClientHello offer a server logged.
//!
//! Two kinds, told apart by their shape:
//!
//! - **JA3** (32 hex digits) when the log has every JA3 input, as httpd trunk's
//!   `SSLClientHelloVars` logs them (`SSL_CLIENTHELLO_VERSION`, `_CIPHERS`,
//!   `_EXTENSIONS`, `_GROUPS`, `_EC_FORMATS`: hex, four digits an item, two for EC
//!   point formats): the MD5 of `version,ciphers,extensions,groups,ec_formats`, each
//!   list's values in decimal joined by `-`, GREASE values (RFC 8701) removed — the
//!   definition of Salesforce's JA3. A list logged as `-` or empty is an empty field.
//! - **tg1** (`tg1_` and 12 hex digits) when only the suites and groups are logged (nginx
//!   `$ssl_ciphers` and `$ssl_curves`): the first 12 hex digits of the MD5 of
//!   `ciphers,groups`, each list in the client's order joined by `-`, every item written
//!   as its decimal code point — names mapped to code points through tlsgap's suite and
//!   group catalogues, hex items (`0x11ec`) read as code points — and an item the
//!   catalogues do not know written as the name logged; GREASE removed; groups not
//!   logged is an empty field. The same codes give the same tg1 whether logged as
//!   nginx names or httpd hex lists.
//!
//! ```
//! use tlsgap_agg::fingerprint::{ja3, tg1, Hello};
//!
//! let hello = Hello {
//!     version: Some("0303"),
//!     ciphers: Some("0a0a1301c02f"),
//!     extensions: Some("0000000a000b"),
//!     groups: Some("1a1a001d0017"),
//!     ec_formats: Some("00"),
//! };
//! let (text, _digest) = ja3(&hello).unwrap();
//! assert_eq!(text, "771,4865-49199,0-10-11,29-23,0");
//! let nginx = tg1(Some("TLS_AES_128_GCM_SHA256:ECDHE-RSA-AES128-GCM-SHA256"), Some("X25519:prime256v1"));
//! let apache = tg1(Some("1301c02f"), Some("001d0017"));
//! assert_eq!(nginx, apache);
//! assert!(nginx.unwrap().starts_with("tg1_"));
//! ```

use md5::{Digest, Md5};
use tlsgap_ciphers::groups::is_grease;
use tlsgap_ciphers::offer::Offer;

/// The JA3 inputs as httpd trunk logs them (`None`: not in the log format).
#[derive(Clone, Copy, Debug, Default)]
pub struct Hello<'a> {
    /// `SSL_CLIENTHELLO_VERSION`: the legacy version, four hex digits.
    pub version: Option<&'a str>,
    /// `SSL_CLIENTHELLO_CIPHERS`.
    pub ciphers: Option<&'a str>,
    /// `SSL_CLIENTHELLO_EXTENSIONS`.
    pub extensions: Option<&'a str>,
    /// `SSL_CLIENTHELLO_GROUPS`.
    pub groups: Option<&'a str>,
    /// `SSL_CLIENTHELLO_EC_FORMATS` (two hex digits an item).
    pub ec_formats: Option<&'a str>,
}

/// The fingerprint a line's offer gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// Salesforce's JA3 (every input logged).
    Ja3,
    /// tlsgap's `tg1_` (suites and groups only).
    Tg1,
}

impl Method {
    /// `ja3` or `tg1`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Ja3 => "ja3",
            Method::Tg1 => "tg1",
        }
    }
}

fn absent(v: Option<&str>) -> Option<&str> {
    v.map(str::trim).filter(|s| !s.is_empty() && *s != "-")
}

/// A hex list of `width`-digit items as decimal values joined by `-`, GREASE removed;
/// `None` if it is not such a list.
fn hex_decimal(s: &str, width: usize) -> Option<String> {
    if s.len() % width != 0 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let mut out = String::new();
    for chunk in s.as_bytes().chunks(width) {
        let code = u16::from_str_radix(std::str::from_utf8(chunk).ok()?, 16).ok()?;
        // GREASE is defined for the two-byte lists; EC point formats are one byte.
        if width == 4 && is_grease(code) {
            continue;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&code.to_string());
    }
    Some(out)
}

fn md5_hex(text: &str) -> String {
    let digest = Md5::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// The JA3 string and its MD5 (32 lower-case hex digits), when the version and the
/// suites are logged in httpd trunk's hex encoding; the other lists may be absent
/// (`-`: an empty field), but each present one must be hex.
pub fn ja3(hello: &Hello<'_>) -> Option<(String, String)> {
    let version = absent(hello.version)?;
    if version.len() != 4 {
        return None;
    }
    let version = hex_decimal(version, 4)?;
    let ciphers = hex_decimal(absent(hello.ciphers)?, 4)?;
    let list = |v: Option<&str>, width: usize| match absent(v) {
        None => Some(String::new()),
        Some(s) => hex_decimal(s, width),
    };
    let text = format!(
        "{version},{ciphers},{},{},{}",
        list(hello.extensions, 4)?,
        list(hello.groups, 4)?,
        list(hello.ec_formats, 2)?
    );
    let digest = md5_hex(&text);
    Some((text, digest))
}

/// The tg1 input (`ciphers,groups`, see the module documentation) of an offer.
pub fn tg1_text(offer: &Offer) -> String {
    let mut out = String::new();
    for (i, c) in offer.ciphers.iter().enumerate() {
        if i > 0 {
            out.push('-');
        }
        match (c.code, &c.unknown_name) {
            (Some(code), _) => out.push_str(&code.to_string()),
            (None, Some(name)) => out.push_str(name),
            (None, None) => {}
        }
    }
    out.push(',');
    for (i, g) in offer.groups.iter().flatten().enumerate() {
        if i > 0 {
            out.push('-');
        }
        match (g.code, &g.unknown_name) {
            (Some(code), _) => out.push_str(&code.to_string()),
            (None, Some(name)) => out.push_str(name),
            (None, None) => {}
        }
    }
    out
}

/// The tg1 fingerprint of the logged suites and groups (nginx names or httpd hex
/// lists); `None` when no suite was logged.
pub fn tg1(ciphers: Option<&str>, groups: Option<&str>) -> Option<String> {
    let offer = Offer::parse(ciphers, groups, None, None);
    if offer.is_empty() {
        return None;
    }
    Some(tg1_of(&offer))
}

/// The tg1 fingerprint of an offer already read.
pub fn tg1_of(offer: &Offer) -> String {
    let digest = md5_hex(&tg1_text(offer));
    format!("tg1_{}", &digest[..12])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(values: &[u16]) -> String {
        values.iter().map(|v| format!("{v:04x}")).collect()
    }

    /// The example pyJA3's README prints (Salesforce's Python JA3, run on a capture):
    /// `769,255-49162-...,0-10-11-35,23-24-25,0` has the digest
    /// `2aef69b4ba1938c3a400de4188743185`. Written here as httpd trunk would log that
    /// ClientHello (no Apache here has SSLClientHelloVars), with GREASE added to every
    /// two-byte list, which JA3 ignores.
    #[test]
    fn ja3_of_the_pyja3_readme_example() {
        let ciphers = [
            0x3a3a, 255, 49162, 49172, 136, 135, 57, 56, 49167, 49157, 132, 53, 49159, 49161,
            49169, 49171, 69, 68, 51, 50, 49164, 49166, 49154, 49156, 150, 65, 4, 5, 47, 49160,
            49170, 22, 19, 49165, 49155, 65279, 10,
        ];
        let ciphers = hex(&ciphers);
        let extensions = hex(&[0x0a0a, 0, 10, 11, 35, 0xfafa]);
        let groups = hex(&[0xdada, 23, 24, 25]);
        let hello = Hello {
            version: Some("0301"),
            ciphers: Some(&ciphers),
            extensions: Some(&extensions),
            groups: Some(&groups),
            ec_formats: Some("00"),
        };
        let (text, digest) = ja3(&hello).unwrap();
        assert!(text.starts_with("769,255-49162-"), "{text}");
        assert!(text.ends_with(",0-10-11-35,23-24-25,0"), "{text}");
        assert_eq!(digest, "2aef69b4ba1938c3a400de4188743185");
    }

    /// A Chrome ClientHello as browserleaks.com published it (JA3 text and hash, with
    /// the post-quantum group X25519MLKEM768 = 4588 first).
    #[test]
    fn ja3_of_a_published_chrome_hello_with_mlkem() {
        let ciphers = hex(&[
            0x8a8a, 4865, 4866, 4867, 49195, 49199, 49196, 49200, 52393, 52392, 49171, 49172, 156,
            157, 47, 53,
        ]);
        let extensions = hex(&[
            0x2a2a, 45, 51, 16, 65037, 23, 17613, 0, 11, 10, 43, 65281, 35, 18, 5, 13, 27, 0x3a3a,
        ]);
        let groups = hex(&[0x4a4a, 4588, 29, 23, 24]);
        let hello = Hello {
            version: Some("0303"),
            ciphers: Some(&ciphers),
            extensions: Some(&extensions),
            groups: Some(&groups),
            ec_formats: Some("00"),
        };
        let (_, digest) = ja3(&hello).unwrap();
        assert_eq!(digest, "98487aa16281980e7d1120d399efb6a4");
    }

    #[test]
    fn ja3_needs_hex_version_and_suites() {
        let mut h = Hello {
            version: Some("0303"),
            ciphers: Some("c02f"),
            extensions: Some("-"),
            groups: None,
            ec_formats: Some(""),
        };
        assert_eq!(ja3(&h).unwrap().0, "771,49199,,,");
        h.ciphers = Some("ECDHE-RSA-AES128-GCM-SHA256");
        assert_eq!(ja3(&h), None);
        h.ciphers = Some("c02f");
        h.version = Some("-");
        assert_eq!(ja3(&h), None);
        h.version = Some("03030304");
        assert_eq!(ja3(&h), None);
        h.version = Some("0303");
        h.ec_formats = Some("0");
        assert_eq!(ja3(&h), None);
    }

    #[test]
    fn tg1_is_stable_and_tells_offers_apart() {
        let a = tg1(
            Some("0x0a0a:TLS_AES_128_GCM_SHA256:AES128-SHA"),
            Some("X25519:0x11ec"),
        );
        // GREASE elsewhere, hex for the same codes: the same client.
        let b = tg1(
            Some("TLS_AES_128_GCM_SHA256:0x2a2a:0x002f"),
            Some("0x5a5a:x25519:X25519MLKEM768"),
        );
        assert_eq!(a, b);
        assert_eq!(a.as_deref().map(str::len), Some(16));
        // Order matters (it is part of the client's identity), and so do the groups.
        assert_ne!(
            a,
            tg1(
                Some("AES128-SHA:TLS_AES_128_GCM_SHA256"),
                Some("X25519:0x11ec")
            )
        );
        assert_ne!(
            a,
            tg1(Some("TLS_AES_128_GCM_SHA256:AES128-SHA"), Some("X25519"))
        );
        assert_ne!(a, tg1(Some("TLS_AES_128_GCM_SHA256:AES128-SHA"), None));
        // Names the catalogue does not know are hashed by name.
        assert_ne!(tg1(Some("FOO-SUITE"), None), tg1(Some("BAR-SUITE"), None));
        assert_eq!(tg1(Some("-"), Some("X25519")), None);
        let offer = Offer::parse(
            Some("TLS_AES_128_GCM_SHA256:FOO"),
            Some("X25519:0x11ec"),
            None,
            None,
        );
        assert_eq!(tg1_text(&offer), "4865-FOO,29-4588");
    }
}
