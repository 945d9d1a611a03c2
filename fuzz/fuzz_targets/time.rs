//! Every time parser. The CLF cache must answer exactly what the uncached parser
//! answers, and a parsed instant must print.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tlsgap_parser::time::{
    civil_from_days, days_from_civil, finish_strftime, parse_clf, parse_epoch, parse_epoch_decimal,
    parse_frac, parse_iso8601, parse_simple, parse_strftime_into, parse_u64, TimeCache, TimeSpec,
    Timestamp,
};

fn show(t: Option<Timestamp>) {
    if let Some(t) = t {
        let _ = t.to_string();
        let _ = t.unix_micros();
    }
}

fuzz_target!(|data: &[u8]| {
    show(parse_clf(data));
    show(parse_iso8601(data));
    // The documented units; 0 is excluded because it divides (see the README).
    for per in [1, 1000, 1_000_000] {
        show(parse_epoch(data, per));
    }
    show(parse_epoch_decimal(data));
    let _ = parse_frac(data);
    let _ = parse_u64(data);

    let mut cache = TimeCache::default();
    for part in data.split(|&b| b == b'\n') {
        assert_eq!(cache.clf(part), parse_clf(part), "cache disagrees");
        let specs = [
            TimeSpec::Clf { brackets: true },
            TimeSpec::Clf { brackets: false },
            TimeSpec::Iso8601,
            TimeSpec::Epoch { per_second: 1 },
            TimeSpec::Epoch { per_second: 1000 },
            TimeSpec::Epoch {
                per_second: 1_000_000,
            },
            TimeSpec::EpochDecimal,
            TimeSpec::Frac { digits: 3 },
            TimeSpec::Strftime(String::new()),
        ];
        for spec in &specs {
            show(parse_simple(spec, part, &mut cache));
        }
    }

    // strftime: the input up to the first NUL is the format, the rest the value.
    if let Some(p) = data.iter().position(|&b| b == 0) {
        if let Ok(fmt) = std::str::from_utf8(&data[..p]) {
            let mut parsed = chrono::format::Parsed::new();
            let _ = parse_strftime_into(fmt, &data[p + 1..], &mut parsed);
            show(finish_strftime(&parsed));
            let _ = TimeSpec::from_apache(fmt).is_component();
        }
    }

    // Day numbers: the two conversions are inverse for any date the parsers build.
    if data.len() >= 4 {
        let z = i64::from(i32::from_le_bytes([data[0], data[1], data[2], data[3]])) / 4;
        let (y, m, d) = civil_from_days(z);
        assert_eq!(days_from_civil(y, m, d), z);
    }
});
