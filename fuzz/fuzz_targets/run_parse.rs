//! Any bytes as a run file (TREC, ranx JSON, JSONL), ranked and written back (see `common::run_parse`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::run_parse(data));
