//! Any bytes as a `live` endpoint's answer, in every shape (see `common::live_answer_parse`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::live_answer_parse(data));
