//! Any bytes as an `eval --format json` file, compared and rendered (see `common::compare_parse`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::compare_parse(data));
