//! One cipher suite as the catalogue describes it.
//!
//! Algorithm columns (`kx`, `au`, `enc`, `mac`) use the spelling of
//! `openssl ciphers -V` (`Kx=ECDH` there means ECDHE; see the catalogue's README for the
//! legacy spellings OpenSSL 3 no longer prints).

use serde::Serialize;

use crate::verdict::Verdict;

/// A protocol version as OpenSSL logs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Protocol {
    /// SSL 2.0.
    #[serde(rename = "SSLv2")]
    SslV2,
    /// SSL 3.0.
    #[serde(rename = "SSLv3")]
    SslV3,
    /// TLS 1.0.
    #[serde(rename = "TLSv1")]
    TlsV1,
    /// TLS 1.1.
    #[serde(rename = "TLSv1.1")]
    TlsV1_1,
    /// TLS 1.2.
    #[serde(rename = "TLSv1.2")]
    TlsV1_2,
    /// TLS 1.3.
    #[serde(rename = "TLSv1.3")]
    TlsV1_3,
}

impl Protocol {
    /// Every protocol, oldest first.
    pub const ALL: [Protocol; 6] = [
        Protocol::SslV2,
        Protocol::SslV3,
        Protocol::TlsV1,
        Protocol::TlsV1_1,
        Protocol::TlsV1_2,
        Protocol::TlsV1_3,
    ];

    /// OpenSSL's spelling (`TLSv1.2`).
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::SslV2 => "SSLv2",
            Protocol::SslV3 => "SSLv3",
            Protocol::TlsV1 => "TLSv1",
            Protocol::TlsV1_1 => "TLSv1.1",
            Protocol::TlsV1_2 => "TLSv1.2",
            Protocol::TlsV1_3 => "TLSv1.3",
        }
    }

    /// Read a protocol as OpenSSL, GnuTLS or a person writes it (`TLSv1.2`, `TLS1.2`,
    /// `TLSv1.0`, `SSLv3`, `SSL3.0`).
    pub fn parse(s: &str) -> Option<Protocol> {
        Some(match s {
            "SSLv2" | "SSL2.0" | "SSLv2.0" => Protocol::SslV2,
            "SSLv3" | "SSL3.0" | "SSLv3.0" => Protocol::SslV3,
            "TLSv1" | "TLSv1.0" | "TLS1.0" | "TLS1" => Protocol::TlsV1,
            "TLSv1.1" | "TLS1.1" => Protocol::TlsV1_1,
            "TLSv1.2" | "TLS1.2" => Protocol::TlsV1_2,
            "TLSv1.3" | "TLS1.3" => Protocol::TlsV1_3,
            _ => return None,
        })
    }
}

/// How the bulk cipher protects records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Authenticated encryption (GCM, CCM, CCM8, ChaCha20-Poly1305, all TLS 1.3).
    Aead,
    /// A block cipher in CBC mode with a separate MAC.
    Cbc,
    /// A stream cipher (RC4) or GOST counter mode.
    Stream,
    /// No encryption.
    Null,
}

/// One row of the catalogue.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Suite {
    /// Code point: two bytes for SSLv3/TLS (`0xC02F`), three bytes for SSLv2 (`0x010080`).
    pub code: u32,
    /// Whether `code` is a three-byte SSLv2 code.
    pub sslv2_code: bool,
    /// The IANA name (`TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`), if IANA registered it.
    pub iana: Option<String>,
    /// OpenSSL names, the current one first, then old aliases (`EDH-...`).
    pub openssl: Vec<String>,
    /// The first protocol the suite can be used with.
    pub min_protocol: Protocol,
    /// Key exchange, as `openssl ciphers -V` writes it (`ECDH` = ECDHE, `DH` = DHE).
    pub kx: String,
    /// Authentication (`RSA`, `ECDSA`, `DSS`, `None`, `PSK`, `any`, ...).
    pub au: String,
    /// Bulk cipher without bits (`AESGCM`, `AES`, `CHACHA20/POLY1305`, `3DES`, `RC4`, ...).
    pub enc: String,
    /// Mode of the bulk cipher.
    pub mode: Mode,
    /// Nominal key bits (3DES: 168).
    pub key_bits: u16,
    /// Effective strength bits (3DES: 112; export suites: 40 or 56).
    pub strength_bits: u16,
    /// MAC (`AEAD`, `SHA1`, `SHA256`, `SHA384`, `MD5`, ...).
    pub mac: String,
    /// Ephemeral key exchange (or TLS 1.3).
    pub forward_secrecy: bool,
    /// Authenticated encryption.
    pub aead: bool,
    /// An export-grade suite.
    pub export: bool,
    /// IANA's "Recommended" column (`Y`, `N`, `D`), if registered.
    pub iana_recommended: Option<char>,
    /// The verdict under the rules in [`crate::verdict`].
    pub verdict: Verdict,
    /// OpenSSL's strength class (`HIGH`, `MEDIUM`, `LOW`, `EXPORT`, or `NONE` for eNULL),
    /// as of the last OpenSSL release that had the suite: what the cipher-string aliases
    /// `HIGH`, `MEDIUM`, `LOW` and `EXP`/`EXPORT` select.
    pub strength_class: StrengthClass,
    /// Whether the OpenSSL 3.0 build the catalogue was generated against
    /// (`openssl ciphers -V 'ALL:COMPLEMENTOFALL:@SECLEVEL=0'`, Debian 12) lists the suite.
    /// TLS 1.3 CCM suites are known to OpenSSL 3 but not in that list, so they are `false`.
    pub in_openssl3: bool,
}

/// OpenSSL's classification of a suite's strength (its `algo_strength`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum StrengthClass {
    /// No encryption (OpenSSL's `STRONG_NONE`; in no class alias).
    None,
    /// Export grade (40- or 56-bit).
    Export,
    /// `LOW`: single DES, 64-bit RC4.
    Low,
    /// `MEDIUM`: RC4, 3DES, IDEA, SEED, RC2 (OpenSSL 1.1 classes).
    Medium,
    /// `HIGH`: everything else.
    High,
}

impl StrengthClass {
    /// The catalogue's spelling (`HIGH`, `MEDIUM`, `LOW`, `EXPORT`, `NONE`).
    pub fn as_str(self) -> &'static str {
        match self {
            StrengthClass::None => "NONE",
            StrengthClass::Export => "EXPORT",
            StrengthClass::Low => "LOW",
            StrengthClass::Medium => "MEDIUM",
            StrengthClass::High => "HIGH",
        }
    }
}
