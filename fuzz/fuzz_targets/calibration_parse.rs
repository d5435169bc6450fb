//! Any bytes as a calibration file (see `common::calibration_parse`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::calibration_parse(data));
