//! Any bytes as a `live` cassette file, or entries sealed into one (see `common::cassette_parse`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::cassette_parse(data));
