//! Unescaping under every escaping, plus round trips: bytes escaped the way each
//! server escapes them must unescape to the same bytes; and the CSV writer of raw
//! bytes against the one of their lossless text.
#![no_main]

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use tlsgap_agg::rows::{csv_field, csv_field_bytes, CsvStyle};
use tlsgap_parser::{lossless_text, unescape, Escaping};

const ALL: [Escaping; 4] = [
    Escaping::Apache,
    Escaping::NginxDefault,
    Escaping::NginxJson,
    Escaping::None,
];

/// Apache `ap_escape_logitem`.
fn apache_escape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() * 2);
    for &b in raw {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            8 => out.extend_from_slice(b"\\b"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            11 => out.extend_from_slice(b"\\v"),
            0..=0x1f | 0x7f..=0xff => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out
}

/// nginx `escape=default`.
fn nginx_escape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() * 2);
    for &b in raw {
        match b {
            b'"' | b'\\' | 0..=0x1f | 0x7f..=0xff => {
                out.extend_from_slice(format!("\\x{b:02X}").as_bytes())
            }
            _ => out.push(b),
        }
    }
    out
}

/// nginx `escape=json`.
fn json_escape(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() * 2);
    for &b in raw {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            0..=0x1f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out
}

fuzz_target!(|data: &[u8]| {
    for e in ALL {
        let v = unescape(data, e);
        assert!(v.len() <= data.len(), "{e:?}: unescaping grew the value");
        if !data.contains(&b'\\') || e == Escaping::None {
            assert!(matches!(v, Cow::Borrowed(_)), "{e:?}: needless copy");
            assert_eq!(&*v, data);
        }
        let _ = lossless_text(&v);
    }
    assert_eq!(&*unescape(&apache_escape(data), Escaping::Apache), data);
    assert_eq!(
        &*unescape(&nginx_escape(data), Escaping::NginxDefault),
        data
    );
    assert_eq!(&*unescape(&json_escape(data), Escaping::NginxJson), data);

    let text = lossless_text(data);
    // The CSV writer that takes bytes writes what the one that takes text writes of
    // their lossless text, in both styles.
    for style in [CsvStyle::Safe, CsvStyle::Raw] {
        let (mut from_bytes, mut from_text) = (Vec::new(), Vec::new());
        csv_field_bytes(data, style, &mut from_bytes);
        csv_field(&text, style, &mut from_text);
        assert_eq!(from_bytes, from_text, "{style:?}");
    }
    if let Ok(s) = std::str::from_utf8(data) {
        assert_eq!(text, s);
    } else {
        // Every invalid byte became four ASCII characters.
        assert!(text.len() > data.len());
    }
});
