//! Any text as a search query, any bytes as a labeled-query file (see `common::query_parse`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::query_parse(data));
