//! Eight bytes at a time: the word tests the text writers (CSV fields, NDJSON strings)
//! use to copy the plain runs of log text whole instead of byte by byte or character
//! by character. Each test is exact: it is true if and only if a byte of the word has
//! the property (the classic "has a zero byte" / "has a byte below n" tests: a borrow
//! only starts at a byte that has it, so none is invented, and the lowest one always
//! shows).

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The eight bytes of `bytes` from `at`, as a little-endian word (`None` past the end).
pub fn word(bytes: &[u8], at: usize) -> Option<u64> {
    let mut w = [0u8; 8];
    w.copy_from_slice(bytes.get(at..at.checked_add(8)?)?);
    Some(u64::from_le_bytes(w))
}

/// Whether a byte of `w` is below `n` (`n` at most 128).
pub fn has_below(w: u64, n: u8) -> bool {
    debug_assert!(n <= 128);
    w.wrapping_sub(ONES.wrapping_mul(u64::from(n))) & !w & HIGH != 0
}

/// Whether a byte of `w` is `b`.
pub fn has_byte(w: u64, b: u8) -> bool {
    has_below(w ^ ONES.wrapping_mul(u64::from(b)), 1)
}

/// Whether a byte of `w` is not ASCII.
pub fn has_high(w: u64) -> bool {
    w & HIGH != 0
}

/// Texts for the tests of the writers built on these words: `count` texts of 0 to 40
/// characters, three in four `q` (log text is mostly plain), the others drawn from
/// `alphabet`, the same every run (a fixed xorshift seed).
#[doc(hidden)]
pub fn sample_texts(alphabet: &str, count: usize) -> Vec<String> {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    (0..count)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 41) as usize;
            (0..len)
                .map(|k| {
                    let r = seed.rotate_left(k as u32 * 5);
                    match alphabet.get((r >> 8) as usize % alphabet.len().max(1)) {
                        Some(&c) if r % 4 == 0 => c,
                        _ => 'q',
                    }
                })
                .collect()
        })
        .collect()
}

/// [`sample_texts`] as bytes, every third with a sequence that is not UTF-8 put in at
/// a character boundary (a lone continuation byte, a truncated sequence, an overlong
/// encoding, a surrogate, `0xff`), and four short edge cases first.
#[doc(hidden)]
pub fn sample_bytes(alphabet: &str, count: usize) -> Vec<Vec<u8>> {
    let broken: [&[u8]; 6] = [
        b"\xff",
        b"\xc3",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xc0\xaf",
        b"\x80",
    ];
    let mut cases: Vec<Vec<u8>> = vec![b"-".to_vec(), b"--".to_vec(), b"=1".to_vec(), Vec::new()];
    for (k, s) in sample_texts(alphabet, count).into_iter().enumerate() {
        let mut b = s.into_bytes();
        if k % 3 == 0 {
            let at = (k / 3) % (b.len() + 1);
            let at = (0..=at)
                .rev()
                .find(|&i| b.get(i).is_none_or(|&c| c & 0xc0 != 0x80))
                .unwrap_or(0);
            let piece = broken.get(k % broken.len()).copied().unwrap_or_default();
            b.splice(at..at, piece.iter().copied());
        }
        cases.push(b);
    }
    cases
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each test against the byte-by-byte one, on words made of bytes at the edges of
    /// what they look for, in every arrangement a generator of 200 000 words gives.
    #[test]
    fn word_tests_are_the_byte_tests() {
        let edges = [
            0x00, 0x01, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0xa2,
            0xdc, 0xfe, 0xff,
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let bytes: [u8; 8] =
                std::array::from_fn(|k| edges[(seed >> (k * 5)) as usize % edges.len()]);
            let w = word(&bytes, 0).unwrap();
            for n in [1u8, 0x20, 0x7f, 0x80] {
                assert_eq!(
                    has_below(w, n),
                    bytes.iter().any(|&b| b < n),
                    "{bytes:02x?} < {n}"
                );
            }
            for b in [0u8, b'"', b'\\', 0x7f, 0xff] {
                assert_eq!(has_byte(w, b), bytes.contains(&b), "{bytes:02x?} has {b}");
            }
            assert_eq!(has_high(w), !bytes.is_ascii());
        }
        assert_eq!(word(b"1234567", 0), None);
        assert_eq!(word(b"12345678", 1), None);
        assert_eq!(word(b"12345678", usize::MAX), None);
    }
}
