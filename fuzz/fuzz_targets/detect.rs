//! Format detection and, when no preset fits, format inference over the input split
//! into lines.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_parser::detect::{detect, detect_unpruned};
use tlsgap_parser::infer::infer;
use tlsgap_parser::{LineParser, Record};

fuzz_target!(|data: &[u8]| {
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    let found = detect(&lines);
    // Pruning hopeless candidates changes no outcome.
    let key = |d: &Option<tlsgap_parser::detect::Detection>| {
        d.as_ref()
            .map(|d| (d.preset, d.variant, d.parsed, d.sampled))
    };
    assert_eq!(
        key(&found),
        key(&detect_unpruned(&lines)),
        "pruned and unpruned detection differ"
    );
    if let Some(d) = found {
        assert!(d.parsed >= 1 && d.parsed <= d.sampled, "{d:?}");
        // The detected format parses as many lines as detection said it did.
        let mut parser = LineParser::new(&d.format);
        let mut rec = Record::new(&d.format);
        let ok = lines
            .iter()
            .filter(|l| parser.parse(l, &mut rec).is_ok())
            .count();
        assert_eq!(ok, d.parsed, "detection and a fresh parser disagree");
    }
    if let Some(i) = infer(&lines) {
        assert!(i.fits <= i.sampled, "{i:?}");
        // The line it prints compiles to the format it used.
        let again = tlsgap_parser::Format::compile(&i.directive()).expect("inferred directive");
        assert_eq!(again.fields.len(), i.format.fields.len());
    }
});
