//! Any bytes as a scenario file (see `common::scenario_parse`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::scenario_parse(data));
