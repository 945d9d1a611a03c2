//! OpenSSL cipher strings (`HIGH:!aNULL:!MD5`, `ECDHE+AESGCM:@STRENGTH`, ...) evaluated
//! over any table of suites, including the legacy ones OpenSSL 3 no longer knows (RC4,
//! 3DES, DES, EXP, IDEA, SEED, GOST...).
//!
//! The semantics are reimplemented from `openssl-ciphers(1)` and by differential testing
//! against a local `openssl ciphers` (see `tests/openssl_strings.rs`):
//!
//! - Words are separated by `:`, `,`, `;` or spaces. A word may be prefixed by `!` (kill:
//!   the suites can never come back), `-` (remove: a later word may add them again) or `+`
//!   (move the matching enabled suites to the end). A bare word appends the matching suites
//!   that are not yet enabled to the end; suites already enabled keep their place.
//! - `A+B` is the intersection of `A` and `B`. A word that names neither an alias nor a
//!   suite makes its whole term match nothing, and it is skipped (OpenSSL does the same);
//!   [`Evaluated::ignored`] lists such words.
//! - `@STRENGTH` sorts the enabled suites by strength bits (stable), `@SECLEVEL=N` (N in
//!   0..=5) sets the security level. Any other `@` command is an error.
//! - A string *beginning* with `DEFAULT` starts from `ALL:!COMPLEMENTOFDEFAULT:!eNULL` and
//!   continues with the rest of the string; elsewhere `DEFAULT` is an unknown word. A string
//!   beginning with `SUITEB128`, `SUITEB128ONLY`, `SUITEB128C2` or `SUITEB192` yields the
//!   Suite B list and the rest is ignored.
//! - Evaluation starts from OpenSSL's initial order (the order `ALL` lists): forward-secret
//!   AEAD suites first, then forward-secret TLS 1.2 suites, other forward-secret suites,
//!   other AEAD suites, other TLS 1.2 suites, the rest; inside each group by strength bits,
//!   then with MD5, anonymous, RSA key exchange, plain-PSK key exchange and RC4 suites
//!   last (in that order), then AES-GCM, ChaCha20, other AES, other ciphers, then
//!   ECDHE-ECDSA, other ECDHE, the rest, and finally by descending code point.
//! - OpenSSL errors when no TLS <= 1.2 suite is listed ("no cipher match"); so does
//!   [`evaluate_over`].
//!
//! TLS 1.3 suites (governed by a separate list) and three-byte SSLv2 suites (no OpenSSL
//! that reads these strings still speaks SSLv2) are never part of the result.
//!
//! The security level does not change the list OpenSSL stores (what `openssl ciphers`
//! prints, [`Evaluated::listed`]); it filters what a handshake may pick
//! ([`Evaluated::order`], what `openssl ciphers -s -psk -srp` prints). The rules, from
//! `SSL_CTX_set_security_level(3)`: level >= 1 needs 80 strength bits and refuses
//! anonymous suites and MD5 MACs; level 2 needs 112 bits and refuses RC4; level 3 needs
//! 128 bits and forward secrecy; level 4 needs 192 bits and refuses SHA-1 MACs; level 5
//! needs 256 bits.

use std::fmt;

use crate::suite::{Mode, Protocol, StrengthClass, Suite};

/// The security level OpenSSL is compiled with upstream (`OPENSSL_TLS_SECURITY_LEVEL`).
pub const OPENSSL_DEFAULT_SECLEVEL: u8 = 1;

/// The security level Debian and Ubuntu builds of OpenSSL 3 default to (they compile
/// with `-DOPENSSL_TLS_SECURITY_LEVEL=2`); most Apache and nginx servers run these.
pub const DEBIAN_DEFAULT_SECLEVEL: u8 = 2;

/// The rule string a leading `DEFAULT` stands for.
pub const DEFAULT_RULES: &str = "ALL:!COMPLEMENTOFDEFAULT:!eNULL";

/// A cipher string that could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CipherStringError {
    /// What was wrong, naming the offending element.
    pub message: String,
}

impl fmt::Display for CipherStringError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CipherStringError {}

fn error(message: impl Into<String>) -> CipherStringError {
    CipherStringError {
        message: message.into(),
    }
}

/// The result of evaluating a cipher string.
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluated {
    /// The enabled TLS <= 1.2 suites a handshake may pick, in OpenSSL's order: [`listed`]
    /// filtered by the security level. Indices into the slice evaluated over.
    ///
    /// [`listed`]: Evaluated::listed
    pub order: Vec<usize>,
    /// The list as OpenSSL stores it, before the security level is applied (what
    /// `openssl ciphers STRING` prints). Indices into the slice evaluated over.
    pub listed: Vec<usize>,
    /// The security level in force (`@SECLEVEL=N`, else the default passed in).
    pub seclevel: u8,
    /// Words that named no alias and no suite, and were skipped, in order of appearance.
    pub ignored: Vec<String>,
    /// For each suite evaluated over (same index), the last element of the string that
    /// changed its state, if any: what `--explain` shows.
    pub steps: Vec<Option<Step>>,
}

/// An element of a cipher string that changed a suite's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// What it did.
    pub action: Action,
    /// The element as written (`!aNULL`, `ECDHE+AESGCM`; `DEFAULT (ALL)` for the parts of a
    /// leading `DEFAULT`).
    pub term: String,
}

/// What an element of a cipher string did to a suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Added it (a bare word).
    Added,
    /// Removed it; a later word may add it back (`-WORD`).
    Removed,
    /// Killed it for good (`!WORD`).
    Killed,
    /// Moved it to the end (`+WORD`).
    Moved,
    /// Selected by a Suite B string.
    SuiteB,
}

/// Evaluate `s` with OpenSSL semantics over `suites` (TLS 1.3 suites are ignored: they are
/// governed by a separate list). `default_seclevel` is the level in force unless the
/// string sets one with `@SECLEVEL=N`.
pub fn evaluate_over(
    s: &str,
    suites: &[Suite],
    default_seclevel: u8,
) -> Result<Evaluated, CipherStringError> {
    let traits: Vec<Option<Traits>> = suites.iter().map(Traits::of).collect();
    let mut state = State {
        list: initial_order(&traits)
            .into_iter()
            .map(|idx| Entry { idx, active: false })
            .collect(),
        seclevel: default_seclevel,
        ignored: Vec::new(),
        steps: vec![None; suites.len()],
        prefix: "",
    };

    let mut rest = s;
    if let Some(list) = suite_b(s, suites, &traits) {
        for &idx in &list {
            if let Some(slot) = state.steps.get_mut(idx) {
                *slot = Some(Step {
                    action: Action::SuiteB,
                    term: s.split(':').next().unwrap_or(s).to_string(),
                });
            }
        }
        state.list = list
            .into_iter()
            .map(|idx| Entry { idx, active: true })
            .collect();
        rest = "";
    } else if let Some(after) = s.strip_prefix("DEFAULT") {
        state.prefix = "DEFAULT ";
        state.apply_rules(DEFAULT_RULES, suites, &traits)?;
        state.prefix = "";
        rest = after;
    }
    state.apply_rules(rest, suites, &traits)?;

    let listed: Vec<usize> = state
        .list
        .iter()
        .filter(|e| e.active)
        .map(|e| e.idx)
        .collect();
    if listed.is_empty() {
        return Err(error(format!(
            "no cipher match: `{s}` enables no TLS <= 1.2 suite"
        )));
    }
    let seclevel = state.seclevel;
    let order = listed
        .iter()
        .copied()
        .filter(|&i| traits[i].as_ref().is_some_and(|t| t.allowed_at(seclevel)))
        .collect();
    Ok(Evaluated {
        order,
        listed,
        seclevel,
        ignored: state.ignored,
        steps: state.steps,
    })
}

/// Whether a handshake at security level `level` may pick `suite` (see the module docs for
/// the rules). TLS 1.3 and SSLv2 suites are judged on strength alone.
pub fn allowed_at_seclevel(suite: &Suite, level: u8) -> bool {
    match Traits::of(suite) {
        Some(t) => t.allowed_at(level),
        None => level == 0 || suite.strength_bits >= min_bits(level),
    }
}

/// Why security level `level` refuses `suite` (`below 112 bits`, `anonymous`, `MD5 MAC`,
/// `RC4`, `no forward secrecy`, `SHA-1 MAC`), or `None` when it allows it.
pub fn seclevel_refusal(suite: &Suite, level: u8) -> Option<&'static str> {
    if level == 0 {
        return None;
    }
    let bits = match min_bits(level) {
        80 => "below 80 bits",
        112 => "below 112 bits",
        128 => "below 128 bits",
        192 => "below 192 bits",
        _ => "below 256 bits",
    };
    let Some(t) = Traits::of(suite) else {
        return (suite.strength_bits < min_bits(level)).then_some(bits);
    };
    if t.strength < min_bits(level) {
        return Some(bits);
    }
    if t.au == Au::Null {
        return Some("anonymous key exchange");
    }
    if t.mac == Mac::Md5 {
        return Some("MD5 MAC");
    }
    if level >= 2 && t.enc == Enc::Rc4 {
        return Some("RC4");
    }
    if level >= 3 && !t.kx.forward_secret() {
        return Some("no forward secrecy");
    }
    if level >= 4 && t.mac == Mac::Sha1 {
        return Some("SHA-1 MAC");
    }
    None
}

/// OpenSSL's initial order (the order `ALL:COMPLEMENTOFALL` lists) of the TLS <= 1.2 suites
/// in `suites`, as indices.
pub fn openssl_initial_order(suites: &[Suite]) -> Vec<usize> {
    let traits: Vec<Option<Traits>> = suites.iter().map(Traits::of).collect();
    initial_order(&traits)
}

// ---------------------------------------------------------------------------------------
// What the cipher-string language needs to know about a suite.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kx {
    Rsa,
    Dhe,
    Ecdhe,
    DhStatic,
    EcdhStatic,
    Psk,
    RsaPsk,
    DhePsk,
    EcdhePsk,
    Srp,
    Gost,
    Gost18,
    Krb5,
    Fortezza,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Au {
    Rsa,
    Dss,
    Ecdsa,
    Null,
    Psk,
    Srp,
    Gost01,
    Gost12,
    Krb5,
    Dh,
    Ecdh,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Enc {
    Aes,
    AesGcm,
    AesCcm,
    AesCcm8,
    Chacha20,
    Camellia,
    Aria,
    TripleDes,
    Des,
    Rc4,
    Rc2,
    Idea,
    Seed,
    Gost,
    Null,
    Other,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mac {
    Md5,
    Sha1,
    Sha256,
    Sha384,
    Aead,
    Gost94,
    Gost89,
    Gost12,
    Other,
}

#[derive(Clone, Debug)]
struct Traits {
    kx: Kx,
    au: Au,
    enc: Enc,
    mac: Mac,
    bits: u16,
    strength: u16,
    min: Protocol,
    class: StrengthClass,
    not_default: bool,
    code: u32,
}

/// Strip a parenthesised part (`RSA(512)`, `AES(256)`) and surrounding blanks.
fn base(s: &str) -> &str {
    s.split('(').next().unwrap_or(s).trim()
}

impl Kx {
    fn parse(kx: &str, au: &str, name: &str) -> Kx {
        // Static (EC)DH suites are named `DH-RSA-...`, `ECDH-ECDSA-...`; older OpenSSL
        // prints them `Kx=DH/RSA Au=DH`, `Kx=ECDH/ECDSA Au=ECDH`.
        if name.starts_with("DH-") || name.starts_with("EXP-DH-") {
            return Kx::DhStatic;
        }
        if name.starts_with("ECDH-") {
            return Kx::EcdhStatic;
        }
        let kx = base(kx);
        let au = base(au);
        if let Some((k, _)) = kx.split_once('/') {
            return match k.to_ascii_uppercase().as_str() {
                "DH" => Kx::DhStatic,
                "ECDH" => Kx::EcdhStatic,
                _ => Kx::Other,
            };
        }
        match kx.to_ascii_uppercase().as_str() {
            "RSA" => Kx::Rsa,
            "DH" | "DHE" | "EDH" => {
                if au.eq_ignore_ascii_case("DH") {
                    Kx::DhStatic
                } else {
                    Kx::Dhe
                }
            }
            "ECDH" | "ECDHE" | "EECDH" => {
                if au.eq_ignore_ascii_case("ECDH") {
                    Kx::EcdhStatic
                } else {
                    Kx::Ecdhe
                }
            }
            "PSK" => Kx::Psk,
            "RSAPSK" | "RSA_PSK" | "RSA-PSK" => Kx::RsaPsk,
            "DHEPSK" | "DHE_PSK" | "DHE-PSK" => Kx::DhePsk,
            "ECDHEPSK" | "ECDHE_PSK" | "ECDHE-PSK" => Kx::EcdhePsk,
            "SRP" => Kx::Srp,
            "GOST" | "GOST01" | "GOST94" | "GOST2001" | "VKO" => Kx::Gost,
            "GOST18" => Kx::Gost18,
            "KRB5" => Kx::Krb5,
            "FZA" | "FORTEZZA" => Kx::Fortezza,
            _ => Kx::Other,
        }
    }

    fn forward_secret(self) -> bool {
        matches!(self, Kx::Dhe | Kx::Ecdhe | Kx::DhePsk | Kx::EcdhePsk)
    }
}

impl Au {
    fn parse(au: &str) -> Au {
        match base(au).to_ascii_uppercase().as_str() {
            "RSA" => Au::Rsa,
            "DSS" | "DSA" => Au::Dss,
            "ECDSA" => Au::Ecdsa,
            "NONE" | "NULL" | "ANON" => Au::Null,
            "PSK" => Au::Psk,
            "SRP" => Au::Srp,
            "GOST01" | "GOST94" | "GOST2001" => Au::Gost01,
            "GOST12" | "GOST2012" => Au::Gost12,
            "KRB5" => Au::Krb5,
            "DH" => Au::Dh,
            "ECDH" => Au::Ecdh,
            _ => Au::Other,
        }
    }
}

impl Enc {
    fn parse(enc: &str) -> Enc {
        match base(enc).to_ascii_uppercase().as_str() {
            "AES" => Enc::Aes,
            "AESGCM" => Enc::AesGcm,
            "AESCCM" => Enc::AesCcm,
            "AESCCM8" => Enc::AesCcm8,
            "CHACHA20/POLY1305" | "CHACHA20" | "CHACHA20-POLY1305" => Enc::Chacha20,
            "CAMELLIA" | "CAMELLIAGCM" => Enc::Camellia,
            "ARIA" | "ARIAGCM" => Enc::Aria,
            "3DES" | "DES-EDE3" | "DES3" => Enc::TripleDes,
            "DES" => Enc::Des,
            "RC4" => Enc::Rc4,
            "RC2" => Enc::Rc2,
            "IDEA" => Enc::Idea,
            "SEED" => Enc::Seed,
            "GOST89" | "GOST" | "MAGMA" | "KUZNYECHIK" | "GOST2015" | "MAGMAMGM"
            | "KUZNYECHIKMGM" => Enc::Gost,
            "NONE" | "NULL" | "ENULL" => Enc::Null,
            _ => Enc::Other,
        }
    }

    /// OpenSSL's `CBC` alias.
    fn cbc(self) -> bool {
        matches!(
            self,
            Enc::Aes | Enc::Camellia | Enc::TripleDes | Enc::Des | Enc::Rc2 | Enc::Idea | Enc::Seed
        )
    }

    fn aes(self) -> bool {
        matches!(self, Enc::Aes | Enc::AesGcm | Enc::AesCcm | Enc::AesCcm8)
    }
}

impl Mac {
    fn parse(mac: &str) -> Mac {
        match base(mac).to_ascii_uppercase().as_str() {
            "MD5" => Mac::Md5,
            "SHA1" | "SHA" => Mac::Sha1,
            "SHA256" => Mac::Sha256,
            "SHA384" => Mac::Sha384,
            "AEAD" => Mac::Aead,
            "GOST94" => Mac::Gost94,
            "GOST89" | "GOST89MAC" | "GOST89IMIT" => Mac::Gost89,
            "GOST12" | "GOST2012" | "GOSTR3411" | "STREEBOG" => Mac::Gost12,
            _ => Mac::Other,
        }
    }
}

impl Traits {
    /// `None` for suites a cipher string never governs (TLS 1.3, SSLv2 three-byte codes).
    fn of(suite: &Suite) -> Option<Traits> {
        // Suites OpenSSL never had a name for cannot be named by a cipher string either.
        let name = suite.openssl.first()?.as_str();
        if suite.sslv2_code || suite.min_protocol >= Protocol::TlsV1_3 || name.is_empty() {
            return None;
        }
        let kx = Kx::parse(&suite.kx, &suite.au, name);
        let au = Au::parse(&suite.au);
        let mut enc = Enc::parse(&suite.enc);
        if enc == Enc::Other && suite.mode == Mode::Null {
            enc = Enc::Null;
        }
        let mac = Mac::parse(&suite.mac);
        let class = suite.strength_class;
        // OpenSSL 3 leaves these out of DEFAULT (`COMPLEMENTOFDEFAULT`): anonymous, DSS,
        // CCM, ARIA, Camellia (all observed with 3.0); RC4 (1.1.0 and later); and, by our
        // decision, the other legacy ciphers OpenSSL 1.1+ no longer builds by default.
        let not_default = au == Au::Null
            || au == Au::Dss
            || matches!(
                enc,
                Enc::AesCcm
                    | Enc::AesCcm8
                    | Enc::Aria
                    | Enc::Camellia
                    | Enc::Rc4
                    | Enc::Rc2
                    | Enc::Idea
                    | Enc::Seed
                    | Enc::Des
                    | Enc::Gost
            )
            || matches!(class, StrengthClass::Low | StrengthClass::Export)
            || matches!(
                kx,
                Kx::DhStatic | Kx::EcdhStatic | Kx::Krb5 | Kx::Gost | Kx::Gost18 | Kx::Fortezza
            );
        Some(Traits {
            kx,
            au,
            enc,
            mac,
            bits: suite.key_bits,
            strength: suite.strength_bits,
            min: suite.min_protocol,
            class,
            not_default,
            code: suite.code,
        })
    }

    fn allowed_at(&self, level: u8) -> bool {
        if level == 0 {
            return true;
        }
        if self.strength < min_bits(level) || self.au == Au::Null || self.mac == Mac::Md5 {
            return false;
        }
        if level >= 2 && self.enc == Enc::Rc4 {
            return false;
        }
        if level >= 3 && !self.kx.forward_secret() {
            return false;
        }
        if level >= 4 && self.mac == Mac::Sha1 {
            return false;
        }
        true
    }

    fn aead(&self) -> bool {
        self.mac == Mac::Aead
    }
}

/// The minimum security bits of OpenSSL security level `level` (0: none).
pub(crate) fn min_bits(level: u8) -> u16 {
    match level {
        0 => 0,
        1 => 80,
        2 => 112,
        3 => 128,
        4 => 192,
        _ => 256,
    }
}

/// The sort key of OpenSSL's initial order (smaller first).
fn initial_key(
    t: &Traits,
) -> (
    u8,
    std::cmp::Reverse<u16>,
    u8,
    u8,
    u8,
    std::cmp::Reverse<u32>,
) {
    let fs = matches!(t.kx, Kx::Dhe | Kx::Ecdhe);
    let tls12 = t.min == Protocol::TlsV1_2;
    let tier = match (fs, t.aead(), tls12) {
        (true, true, _) => 0,
        (true, false, true) => 1,
        (true, false, false) => 2,
        (false, true, _) => 3,
        (false, false, true) => 4,
        (false, false, false) => 5,
    };
    // Each later rule pushes its suites behind the earlier ones.
    let mut demoted = 0;
    if t.mac == Mac::Md5 {
        demoted = 1;
    }
    if t.au == Au::Null {
        demoted = 2;
    }
    if t.kx == Kx::Rsa {
        demoted = 3;
    }
    if t.kx == Kx::Psk {
        demoted = 4;
    }
    if t.enc == Enc::Rc4 {
        demoted = 5;
    }
    let enc = match t.enc {
        Enc::AesGcm => 0,
        Enc::Chacha20 => 1,
        e if e.aes() => 2,
        _ => 3,
    };
    let ecdhe = match (t.kx, t.au) {
        (Kx::Ecdhe, Au::Ecdsa) => 0,
        (Kx::Ecdhe, _) => 1,
        _ => 2,
    };
    (
        tier,
        std::cmp::Reverse(t.strength),
        demoted,
        enc,
        ecdhe,
        std::cmp::Reverse(t.code),
    )
}

fn initial_order(traits: &[Option<Traits>]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..traits.len()).filter(|&i| traits[i].is_some()).collect();
    idx.sort_by_key(|&i| traits[i].as_ref().map(initial_key));
    idx
}

fn suite_b(s: &str, suites: &[Suite], traits: &[Option<Traits>]) -> Option<Vec<usize>> {
    const AES128: &str = "ECDHE-ECDSA-AES128-GCM-SHA256";
    const AES256: &str = "ECDHE-ECDSA-AES256-GCM-SHA384";
    let names: &[&str] = if s.starts_with("SUITEB128ONLY") {
        &[AES128]
    } else if s.starts_with("SUITEB128C2") || s.starts_with("SUITEB192") {
        &[AES256]
    } else if s.starts_with("SUITEB128") {
        &[AES128, AES256]
    } else {
        return None;
    };
    Some(
        names
            .iter()
            .filter_map(|n| {
                (0..suites.len()).find(|&i| traits[i].is_some() && has_name(&suites[i], n))
            })
            .collect(),
    )
}

fn has_name(suite: &Suite, name: &str) -> bool {
    suite.openssl.iter().any(|n| n == name)
}

// ---------------------------------------------------------------------------------------
// The list OpenSSL keeps while it reads the string.

#[derive(Clone, Copy, Debug)]
struct Entry {
    idx: usize,
    active: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Remove,
    Kill,
    MoveToEnd,
}

struct State {
    list: Vec<Entry>,
    seclevel: u8,
    ignored: Vec<String>,
    steps: Vec<Option<Step>>,
    /// `DEFAULT ` while the rules a leading `DEFAULT` stands for are applied.
    prefix: &'static str,
}

fn is_separator(c: u8) -> bool {
    matches!(c, b':' | b',' | b';' | b' ')
}

fn is_word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'=')
}

impl State {
    fn apply_rules(
        &mut self,
        rules: &str,
        suites: &[Suite],
        traits: &[Option<Traits>],
    ) -> Result<(), CipherStringError> {
        let b = rules.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if is_separator(b[i]) {
                i += 1;
                continue;
            }
            let term_start = i;
            let op = match b[i] {
                b'-' => Op::Remove,
                b'!' => Op::Kill,
                b'+' => Op::MoveToEnd,
                _ => Op::Add,
            };
            if op != Op::Add {
                i += 1;
            }
            let command = b.get(i) == Some(&b'@');
            if command {
                i += 1;
            }
            // One term: words joined by `+`.
            let mut words = Vec::new();
            loop {
                let start = i;
                while i < b.len() && is_word_char(b[i]) {
                    i += 1;
                }
                if start == i {
                    return Err(error(format!(
                        "invalid command at byte {start} of `{rules}`"
                    )));
                }
                words.push(&rules[start..i]);
                if b.get(i) == Some(&b'+') {
                    i += 1;
                } else {
                    break;
                }
            }
            if command {
                if op != Op::Add {
                    return Err(error(format!("`@` command after an operator in `{rules}`")));
                }
                self.command(words[0], traits)?;
                continue;
            }
            let term = format!("{}{}", self.prefix, &rules[term_start..i]);
            let mut selected: Option<Vec<bool>> = None;
            let mut unknown = false;
            for word in &words {
                match matching(word, suites, traits) {
                    Some(set) => {
                        selected = Some(match selected {
                            None => set,
                            Some(prev) => prev.iter().zip(&set).map(|(a, b)| *a && *b).collect(),
                        });
                    }
                    None => {
                        self.ignored.push((*word).to_string());
                        unknown = true;
                    }
                }
            }
            if unknown {
                // OpenSSL skips the rest of an element it could not read.
                while i < b.len() && !is_separator(b[i]) {
                    i += 1;
                }
                continue;
            }
            if let Some(set) = selected {
                self.apply(op, &set, &term);
            }
        }
        Ok(())
    }

    fn command(&mut self, word: &str, traits: &[Option<Traits>]) -> Result<(), CipherStringError> {
        if word == "STRENGTH" {
            self.sort_by_strength(traits);
            return Ok(());
        }
        if let Some(n) = word.strip_prefix("SECLEVEL=") {
            if let [d @ b'0'..=b'5'] = n.as_bytes() {
                self.seclevel = d - b'0';
                return Ok(());
            }
        }
        Err(error(format!("invalid command `@{word}`")))
    }

    fn apply(&mut self, op: Op, set: &[bool], term: &str) {
        let hit = |e: &Entry| set.get(e.idx).copied().unwrap_or(false);
        let action = match op {
            Op::Add => Action::Added,
            Op::Remove => Action::Removed,
            Op::Kill => Action::Killed,
            Op::MoveToEnd => Action::Moved,
        };
        for e in &self.list {
            let changes = hit(e)
                && match op {
                    Op::Add => !e.active,
                    Op::Remove | Op::MoveToEnd => e.active,
                    Op::Kill => true,
                };
            if let (true, Some(slot)) = (changes, self.steps.get_mut(e.idx)) {
                *slot = Some(Step {
                    action,
                    term: term.to_string(),
                });
            }
        }
        let list = std::mem::take(&mut self.list);
        self.list = match op {
            Op::Add => {
                let (mut moved, rest): (Vec<Entry>, Vec<Entry>) =
                    list.into_iter().partition(|e| !e.active && hit(e));
                moved.iter_mut().for_each(|e| e.active = true);
                rest.into_iter().chain(moved).collect()
            }
            Op::MoveToEnd => {
                let (moved, rest): (Vec<Entry>, Vec<Entry>) =
                    list.into_iter().partition(|e| e.active && hit(e));
                rest.into_iter().chain(moved).collect()
            }
            Op::Remove => {
                let (mut moved, rest): (Vec<Entry>, Vec<Entry>) =
                    list.into_iter().partition(|e| e.active && hit(e));
                moved.iter_mut().for_each(|e| e.active = false);
                moved.into_iter().chain(rest).collect()
            }
            Op::Kill => list.into_iter().filter(|e| !hit(e)).collect(),
        };
    }

    fn sort_by_strength(&mut self, traits: &[Option<Traits>]) {
        // Enabled suites are moved to the end, strongest first (stable); disabled ones
        // stay where they are.
        let (mut active, rest): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut self.list)
            .into_iter()
            .partition(|e| e.active);
        active.sort_by_key(|e| std::cmp::Reverse(traits[e.idx].as_ref().map_or(0, |t| t.strength)));
        self.list = rest.into_iter().chain(active).collect();
    }
}

/// The suites `word` selects, or `None` for a word that is neither an alias nor a suite.
fn matching(word: &str, suites: &[Suite], traits: &[Option<Traits>]) -> Option<Vec<bool>> {
    if let Some(pred) = alias(word) {
        return Some(
            traits
                .iter()
                .map(|t| t.as_ref().is_some_and(pred))
                .collect(),
        );
    }
    let set: Vec<bool> = suites
        .iter()
        .zip(traits)
        .map(|(s, t)| t.is_some() && has_name(s, word))
        .collect();
    set.iter().any(|&b| b).then_some(set)
}

type Pred = fn(&Traits) -> bool;

fn alias(word: &str) -> Option<Pred> {
    Some(match word {
        "ALL" => |t| t.enc != Enc::Null,
        "COMPLEMENTOFALL" => |t| t.enc == Enc::Null,
        "COMPLEMENTOFDEFAULT" => |t| t.not_default && t.enc != Enc::Null,
        "HIGH" => |t| t.class == StrengthClass::High,
        "MEDIUM" => |t| t.class == StrengthClass::Medium,
        "LOW" => |t| t.class == StrengthClass::Low,
        "EXP" | "EXPORT" => |t| t.class == StrengthClass::Export,
        "EXPORT40" => |t| t.class == StrengthClass::Export && t.strength <= 40,
        "EXPORT56" => |t| t.class == StrengthClass::Export && t.strength == 56,
        "aNULL" => |t| t.au == Au::Null,
        "eNULL" | "NULL" => |t| t.enc == Enc::Null,
        "kRSA" | "RSA" => |t| t.kx == Kx::Rsa,
        "aRSA" => |t| t.au == Au::Rsa,
        "kEDH" | "kDHE" | "DH" => |t| t.kx == Kx::Dhe,
        "EDH" | "DHE" => |t| t.kx == Kx::Dhe && t.au != Au::Null,
        "ADH" => |t| t.kx == Kx::Dhe && t.au == Au::Null,
        "kEECDH" | "kECDHE" | "ECDH" => |t| t.kx == Kx::Ecdhe,
        "EECDH" | "ECDHE" => |t| t.kx == Kx::Ecdhe && t.au != Au::Null,
        "AECDH" => |t| t.kx == Kx::Ecdhe && t.au == Au::Null,
        "kDH" | "kDHr" | "kDHd" => |t| t.kx == Kx::DhStatic,
        "kECDHr" | "kECDHe" | "kECDH" => |t| t.kx == Kx::EcdhStatic,
        "aDH" => |t| t.au == Au::Dh,
        "aECDH" => |t| t.au == Au::Ecdh,
        "aECDSA" | "ECDSA" => |t| t.au == Au::Ecdsa,
        "aDSS" | "DSS" => |t| t.au == Au::Dss,
        "PSK" => |t| matches!(t.kx, Kx::Psk | Kx::RsaPsk | Kx::DhePsk | Kx::EcdhePsk),
        "kPSK" => |t| t.kx == Kx::Psk,
        "kRSAPSK" => |t| t.kx == Kx::RsaPsk,
        "kDHEPSK" => |t| t.kx == Kx::DhePsk,
        "kECDHEPSK" => |t| t.kx == Kx::EcdhePsk,
        "aPSK" => |t| t.au == Au::Psk,
        "SRP" | "kSRP" => |t| t.kx == Kx::Srp,
        "aSRP" => |t| t.au == Au::Srp,
        "kGOST" => |t| t.kx == Kx::Gost,
        "kGOST18" => |t| t.kx == Kx::Gost18,
        "aGOST" => |t| matches!(t.au, Au::Gost01 | Au::Gost12),
        "aGOST01" => |t| t.au == Au::Gost01,
        "aGOST12" => |t| t.au == Au::Gost12,
        "GOST89" => |t| t.enc == Enc::Gost,
        "GOST94" => |t| t.mac == Mac::Gost94,
        "GOST89MAC" => |t| t.mac == Mac::Gost89,
        "GOST12" => |t| t.mac == Mac::Gost12,
        "kKRB5" | "KRB5" => |t| t.kx == Kx::Krb5,
        "aKRB5" => |t| t.au == Au::Krb5,
        "AES" => |t| t.enc.aes(),
        "AES128" => |t| t.enc.aes() && t.bits == 128,
        "AES256" => |t| t.enc.aes() && t.bits == 256,
        "AESGCM" => |t| t.enc == Enc::AesGcm,
        "AESCCM" => |t| matches!(t.enc, Enc::AesCcm | Enc::AesCcm8),
        "AESCCM8" => |t| t.enc == Enc::AesCcm8,
        "CHACHA20" => |t| t.enc == Enc::Chacha20,
        "CAMELLIA" => |t| t.enc == Enc::Camellia,
        "CAMELLIA128" => |t| t.enc == Enc::Camellia && t.bits == 128,
        "CAMELLIA256" => |t| t.enc == Enc::Camellia && t.bits == 256,
        "ARIA" | "ARIAGCM" => |t| t.enc == Enc::Aria,
        "ARIA128" => |t| t.enc == Enc::Aria && t.bits == 128,
        "ARIA256" => |t| t.enc == Enc::Aria && t.bits == 256,
        "3DES" => |t| t.enc == Enc::TripleDes,
        "DES" => |t| t.enc == Enc::Des,
        "RC4" => |t| t.enc == Enc::Rc4,
        "RC2" => |t| t.enc == Enc::Rc2,
        "IDEA" => |t| t.enc == Enc::Idea,
        "SEED" => |t| t.enc == Enc::Seed,
        "CBC" => |t| t.enc.cbc(),
        // As OpenSSL 3.0 marks them: AES-CBC and AES-GCM (not CCM) without SRP; 3DES
        // was FIPS-approved in the releases that had it.
        "FIPS" => |t| {
            matches!(t.enc, Enc::Aes | Enc::AesGcm | Enc::TripleDes)
                && matches!(
                    t.kx,
                    Kx::Rsa
                        | Kx::Dhe
                        | Kx::Ecdhe
                        | Kx::Psk
                        | Kx::RsaPsk
                        | Kx::DhePsk
                        | Kx::EcdhePsk
                        | Kx::DhStatic
                        | Kx::EcdhStatic
                )
        },
        "MD5" => |t| t.mac == Mac::Md5,
        "SHA1" | "SHA" => |t| t.mac == Mac::Sha1,
        "SHA256" => |t| t.mac == Mac::Sha256,
        "SHA384" => |t| t.mac == Mac::Sha384,
        "TLSv1.2" => |t| t.min == Protocol::TlsV1_2,
        "TLSv1.0" | "TLSv1" => |t| t.min == Protocol::TlsV1,
        "SSLv3" => |t| t.min == Protocol::SslV3,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;

    fn names(s: &str, level: u8) -> (Vec<String>, Vec<String>) {
        let suites = catalogue::all();
        let e = evaluate_over(s, suites, level).unwrap();
        let n = |v: &[usize]| v.iter().map(|&i| suites[i].openssl[0].clone()).collect();
        (n(&e.listed), n(&e.order))
    }

    fn pos(list: &[String], name: &str) -> usize {
        list.iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("{name} not in {list:?}"))
    }

    #[test]
    fn legacy_strength_classes() {
        let (medium, _) = names("MEDIUM", 0);
        for n in [
            "RC4-SHA",
            "RC4-MD5",
            "DES-CBC3-SHA",
            "SEED-SHA",
            "IDEA-CBC-SHA",
        ] {
            assert!(medium.contains(&n.to_string()), "{n}");
        }
        let (low, _) = names("LOW", 0);
        assert!(low.contains(&"DES-CBC-SHA".to_string()));
        assert!(!low.contains(&"EXP-DES-CBC-SHA".to_string()));
        let (exp, _) = names("EXP", 0);
        assert!(exp.contains(&"EXP-RC4-MD5".to_string()));
        assert!(exp.contains(&"EXP1024-RC4-SHA".to_string()));
        let (high, _) = names("HIGH", 0);
        assert!(!high.contains(&"DES-CBC3-SHA".to_string()));
    }

    #[test]
    fn default_keeps_3des_and_drops_rc4() {
        let (default, _) = names("DEFAULT", 0);
        assert!(default.contains(&"DES-CBC3-SHA".to_string()));
        assert!(!default.iter().any(|n| n.contains("RC4")));
        assert!(!default
            .iter()
            .any(|n| n.starts_with("ADH-") || n.starts_with("EXP")));
    }

    #[test]
    fn security_level_filters_but_does_not_unlist() {
        let (listed, order) = names("RC4:3DES", 2);
        assert!(listed.contains(&"RC4-SHA".to_string()));
        assert!(!order.contains(&"RC4-SHA".to_string()));
        assert!(order.contains(&"DES-CBC3-SHA".to_string()));
        let (_, order) = names("RC4:3DES:@SECLEVEL=1", 2);
        assert!(order.contains(&"RC4-SHA".to_string()));
        assert!(
            !order.contains(&"RC4-MD5".to_string()),
            "MD5 MACs need level 0"
        );
        let (_, order) = names("RC4:3DES:@SECLEVEL=3", 0);
        assert!(order.is_empty());
    }

    #[test]
    fn legacy_initial_order() {
        let (all, _) = names("ALL", 0);
        // Forward secrecy first, RC4 last within a strength, weaker strengths later.
        assert!(pos(&all, "ECDHE-RSA-DES-CBC3-SHA") < pos(&all, "DES-CBC3-SHA"));
        assert!(pos(&all, "AES128-SHA") < pos(&all, "RC4-SHA"));
        assert!(pos(&all, "SEED-SHA") < pos(&all, "RC4-SHA"));
        assert!(pos(&all, "DES-CBC3-SHA") < pos(&all, "DES-CBC-SHA"));
        assert!(pos(&all, "DES-CBC-SHA") < pos(&all, "EXP-DES-CBC-SHA"));
        // SSLv2 suites and TLS 1.3 suites are never part of a cipher string's result.
        assert!(!all.iter().any(|n| n.starts_with("TLS_")));
        let suites = catalogue::all();
        let e = evaluate_over("ALL:COMPLEMENTOFALL", suites, 0).unwrap();
        assert!(e.listed.iter().all(|&i| !suites[i].sslv2_code));
    }

    #[test]
    fn ignored_words_and_errors() {
        let e = evaluate_over("FOO:AES128-SHA:kRSA+BAR", catalogue::all(), 2).unwrap();
        assert_eq!(e.ignored, ["FOO", "BAR"]);
        assert_eq!(e.listed.len(), 1);
        assert!(evaluate_over("FOO", catalogue::all(), 2).is_err());
        assert!(evaluate_over("ALL:@SECLEVEL=6", catalogue::all(), 2).is_err());
        assert!(evaluate_over("ALL:!", catalogue::all(), 2).is_err());
        let e = evaluate_over("ALL:@SECLEVEL=0", catalogue::all(), 2).unwrap();
        assert_eq!(e.seclevel, 0);
    }

    #[test]
    fn aliases_are_names_too() {
        let (l, _) = names("EDH-RSA-DES-CBC3-SHA", 0);
        assert_eq!(l, ["DHE-RSA-DES-CBC3-SHA"]);
    }
}
