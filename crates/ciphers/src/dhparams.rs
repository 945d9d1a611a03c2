//! DH parameters as a server loads them (`ssl_dhparam`, `SSLOpenSSLConfCmd
//! DHParameters`), and how OpenSSL rates their strength against its security level.
//!
//! OpenSSL checks the parameters when the server loads them: below the level's bits of
//! security the call fails (`dh key too small`) and nginx and Apache do not start,
//! whatever the cipher string (a black-box audit against nginx 1.22 and Apache 2.4 on
//! OpenSSL 3.0: a 1024-bit file at the default level 2, Mozilla's ffdhe2048 at
//! `@SECLEVEL=3`; `scripts/real-policies.py` keeps those cases).
//!
//! The strength is OpenSSL's `DH_security_bits`: from the prime's size L, 80 bits at
//! 1024, 112 at 2048, 128 at 3072, 192 at 7680, 256 at 15360 (0 below 1024), capped by
//! half the size N of the subgroup order `q` (X9.42 parameters) or of the private value
//! (`privateValueLength` of PKCS#3 ones), and 0 when that half is below 80.

/// How the parameters are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `-----BEGIN DH PARAMETERS-----` (PKCS#3: p, g, optional private value length),
    /// what `openssl dhparam` and `openssl genpkey -genparam` write.
    Pkcs3,
    /// `-----BEGIN X9.42 DH PARAMETERS-----` (p, g, q, ...), what `openssl dhparam
    /// -dsaparam` writes.
    X942,
}

/// The sizes that decide the parameters' strength.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DhParams {
    /// How they were written.
    pub form: Form,
    /// Bits of the prime p.
    pub prime_bits: u32,
    /// Bits of the subgroup order q (X9.42), or the private value length (PKCS#3),
    /// when stated.
    pub exponent_bits: Option<u32>,
}

impl DhParams {
    /// Bits of security as OpenSSL rates them (`DH_security_bits`).
    pub fn security_bits(&self) -> u32 {
        let l = self.prime_bits;
        let by_prime = match l {
            15360.. => 256,
            7680.. => 192,
            3072.. => 128,
            2048.. => 112,
            1024.. => 80,
            _ => return 0,
        };
        match self.exponent_bits {
            None => by_prime,
            Some(n) if n / 2 < 80 => 0,
            Some(n) => by_prime.min(n / 2),
        }
    }
}

/// The bits of security OpenSSL requires at security `level` (`None`: level 0, no
/// requirement).
pub fn level_bits(level: u8) -> Option<u32> {
    Some(match level {
        0 => return None,
        1 => 80,
        2 => 112,
        3 => 128,
        4 => 192,
        _ => 256,
    })
}

const PKCS3_LABEL: &str = "DH PARAMETERS";
const X942_LABEL: &str = "X9.42 DH PARAMETERS";

/// The first DH parameters block of PEM text (a file may hold certificates or keys
/// too), read as OpenSSL reads it.
pub fn parse(pem: &str) -> Result<DhParams, String> {
    let (form, body) = pem_block(pem).ok_or_else(|| {
        format!("no `-----BEGIN {PKCS3_LABEL}-----` or `-----BEGIN {X942_LABEL}-----` block")
    })?;
    let der = base64(body).ok_or("the block is not base64")?;
    let (seq, rest) = tlv(&der, 0x30).ok_or("not a DER sequence")?;
    if !rest.is_empty() {
        return Err("bytes after the DER sequence".into());
    }
    let (p, seq) = tlv(seq, 0x02).ok_or("no prime")?;
    let (g, seq) = tlv(seq, 0x02).ok_or("no generator")?;
    let prime_bits = integer_bits(p).ok_or("the prime is not a positive integer")?;
    integer_bits(g).ok_or("the generator is not a positive integer")?;
    let third = tlv(seq, 0x02).map(|(v, _)| v);
    let exponent_bits = match (form, third) {
        (Form::X942, Some(q)) => Some(integer_bits(q).ok_or("q is not a positive integer")?),
        (Form::X942, None) => return Err("X9.42 parameters without q".into()),
        (Form::Pkcs3, Some(len)) => Some(small_integer(len).ok_or("a bad private value length")?),
        (Form::Pkcs3, None) => None,
    };
    Ok(DhParams {
        form,
        prime_bits,
        exponent_bits: exponent_bits.filter(|&n| n > 0),
    })
}

/// The form and base64 body of the first DH parameters block.
fn pem_block(pem: &str) -> Option<(Form, &str)> {
    for line in pem.lines().map(str::trim) {
        let Some(label) = line
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        else {
            continue;
        };
        let form = match label {
            PKCS3_LABEL => Form::Pkcs3,
            X942_LABEL => Form::X942,
            _ => continue,
        };
        let start = pem.find(line)? + line.len();
        let end_marker = format!("-----END {label}-----");
        let end = start + pem.get(start..)?.find(&end_marker)?;
        return Some((form, pem.get(start..end)?));
    }
    None
}

/// Standard base64 (the `base64` crate's strict decoder), line breaks and other
/// whitespace ignored.
fn base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    let packed: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(packed)
        .ok()
}

/// One DER element of `tag` at the start of `der`: its contents and what follows.
fn tlv(der: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (&t, rest) = der.split_first()?;
    if t != tag {
        return None;
    }
    let (&first, mut rest) = rest.split_first()?;
    let len = if first < 0x80 {
        usize::from(first)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let (bytes, after) = rest.split_at_checked(n)?;
        rest = after;
        bytes.iter().fold(0usize, |a, &b| (a << 8) | usize::from(b))
    };
    rest.split_at_checked(len)
}

/// The bit length of a positive DER integer (`None`: zero or negative).
fn integer_bits(v: &[u8]) -> Option<u32> {
    if v.first().is_some_and(|&b| b & 0x80 != 0) {
        return None;
    }
    let at = v.iter().position(|&b| b != 0)?;
    let first = v.get(at)?;
    let rest = u32::try_from(v.len() - at - 1).ok()?;
    rest.checked_mul(8)?.checked_add(8 - first.leading_zeros())
}

/// A small non-negative DER integer's value.
fn small_integer(v: &[u8]) -> Option<u32> {
    if v.is_empty() || v.len() > 5 || v.first().is_some_and(|&b| b & 0x80 != 0) {
        return None;
    }
    let n = v.iter().fold(0u64, |a, &b| (a << 8) | u64::from(b));
    u32::try_from(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn der_len(n: usize) -> Vec<u8> {
        match n {
            0..=0x7f => vec![n as u8],
            0x80..=0xff => vec![0x81, n as u8],
            _ => vec![0x82, (n >> 8) as u8, n as u8],
        }
    }

    fn element(tag: u8, contents: &[u8]) -> Vec<u8> {
        let mut out = vec![tag];
        out.extend(der_len(contents.len()));
        out.extend_from_slice(contents);
        out
    }

    /// A positive integer of exactly `bits` bits (top bit set), DER-encoded.
    fn int_of_bits(bits: usize) -> Vec<u8> {
        let bytes = bits.div_ceil(8);
        let mut v = vec![0xa5u8; bytes];
        v[0] = 1 << ((bits - 1) % 8);
        if v[0] & 0x80 != 0 {
            v.insert(0, 0);
        }
        element(0x02, &v)
    }

    fn b64(bytes: &[u8]) -> String {
        const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut s = String::new();
        for chunk in bytes.chunks(3) {
            let n =
                chunk.iter().fold(0u32, |a, &b| (a << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
            for i in 0..=chunk.len() {
                s.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
            for _ in chunk.len()..3 {
                s.push('=');
            }
        }
        s
    }

    fn pem(label: &str, parts: &[Vec<u8>]) -> String {
        let der = element(0x30, &parts.concat());
        let body = b64(&der);
        let wrapped: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            wrapped.join("\n")
        )
    }

    #[test]
    fn sizes_and_strength_as_openssl_rates_them() {
        let g = element(0x02, &[2]);
        for (bits, sec) in [
            (1023, 0),
            (1024, 80),
            (1536, 80),
            (2048, 112),
            (3072, 128),
            (4096, 128),
            (8192, 192),
            (15360, 256),
        ] {
            let p = parse(&pem("DH PARAMETERS", &[int_of_bits(bits), g.clone()])).unwrap();
            assert_eq!(
                (p.form, p.prime_bits, p.exponent_bits),
                (Form::Pkcs3, bits as u32, None)
            );
            assert_eq!(p.security_bits(), sec, "{bits}");
        }
        // X9.42 with a 160-bit q: capped at 80; a 224-bit q on 2048: 112.
        let x = |p_bits, q_bits| {
            parse(&pem(
                "X9.42 DH PARAMETERS",
                &[int_of_bits(p_bits), g.clone(), int_of_bits(q_bits)],
            ))
            .unwrap()
        };
        assert_eq!(x(1024, 160).security_bits(), 80);
        assert_eq!(x(2048, 224).security_bits(), 112);
        assert_eq!(x(3072, 224).security_bits(), 112);
        assert_eq!(x(2048, 150).security_bits(), 0);
        assert_eq!(x(2048, 224).form, Form::X942);
        // PKCS#3 with a private value length of 225 bits (ffdhe2048's).
        let p = parse(&pem(
            "DH PARAMETERS",
            &[int_of_bits(2048), g.clone(), element(0x02, &[0, 225])],
        ))
        .unwrap();
        assert_eq!((p.exponent_bits, p.security_bits()), (Some(225), 112));
        // The block after a certificate, with CRLF line ends.
        let text = format!(
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n{}",
            pem("DH PARAMETERS", &[int_of_bits(2048), g.clone()])
        )
        .replace('\n', "\r\n");
        assert_eq!(parse(&text).unwrap().prime_bits, 2048);
        assert_eq!(level_bits(0), None);
        assert_eq!(level_bits(2), Some(112));
        assert_eq!(level_bits(9), Some(256));
    }

    #[test]
    fn what_is_not_dh_parameters_is_an_error() {
        let g = element(0x02, &[2]);
        for bad in [
            String::new(),
            "-----BEGIN DH PARAMETERS-----\n".to_string(),
            "-----BEGIN DH PARAMETERS-----\n!!!!\n-----END DH PARAMETERS-----\n".to_string(),
            "-----BEGIN DH PARAMETERS-----\nAAA=A\n-----END DH PARAMETERS-----\n".to_string(),
            pem("DH PARAMETERS", &[int_of_bits(2048)]),
            pem("DH PARAMETERS", &[element(0x02, &[0x80, 1]), g.clone()]),
            pem("DH PARAMETERS", &[element(0x02, &[0, 0]), g.clone()]),
            pem("X9.42 DH PARAMETERS", &[int_of_bits(2048), g.clone()]),
            pem("DH PARAMETERS", &[element(0x04, &[1]), g.clone()]),
            pem("EC PARAMETERS", &[int_of_bits(256), g.clone()]),
        ] {
            assert!(parse(&bad).is_err(), "{bad:?}");
        }
    }
}
