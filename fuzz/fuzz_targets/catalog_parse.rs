//! Any bytes as a catalog file (see `common::catalog_parse`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::catalog_parse(data));
