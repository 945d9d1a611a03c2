//! The format compiler: arbitrary UTF-8 as a format spec. When it compiles, the
//! input is also parsed as a line with it. A 0xFF byte (never part of UTF-8) splits
//! the input into a spec and a separate line, so both can be chosen freely.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_fuzz::parse_and_read_all;
use tlsgap_parser::{Format, LineParser};

fuzz_target!(|data: &[u8]| {
    let (spec_bytes, line) = match data.iter().position(|&b| b == 0xff) {
        Some(p) => (&data[..p], &data[p + 1..]),
        None => (data, data),
    };
    let Ok(spec) = std::str::from_utf8(spec_bytes) else {
        return;
    };
    match Format::compile(spec) {
        Err(e) => {
            // The error message draws a caret under the position: it must render.
            let _ = e.to_string();
        }
        Ok(format) => {
            let _ = format.time_fields();
            let _ = format.has_raw_fields();
            let mut parser = LineParser::new(&format);
            parse_and_read_all(&mut parser, &format, line);
            if line.as_ptr() != data.as_ptr() {
                parse_and_read_all(&mut parser, &format, data);
            }
        }
    }
});
