//! Benches live in the `[[bench]]` targets; this library is empty.
