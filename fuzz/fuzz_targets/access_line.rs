//! The line parser: the first byte picks a format, the rest is one line (and, split
//! at `\n`, several lines through the same parser, so the time cache sees repeats).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tlsgap_fuzz::{parse_and_read_all, FORMATS};
use tlsgap_parser::{Format, LineParser};

fn formats() -> &'static [Format] {
    static FORMATS_COMPILED: OnceLock<Vec<Format>> = OnceLock::new();
    FORMATS_COMPILED.get_or_init(|| {
        FORMATS
            .iter()
            .map(|f| Format::compile(f).unwrap_or_else(|e| panic!("{f}: {e}")))
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, line)) = data.split_first() else {
        return;
    };
    let formats = formats();
    let format = &formats[usize::from(pick) % formats.len()];
    let mut parser = LineParser::new(format);
    parse_and_read_all(&mut parser, format, line);
    for part in line.split(|&b| b == b'\n') {
        parse_and_read_all(&mut parser, format, part);
    }
});
