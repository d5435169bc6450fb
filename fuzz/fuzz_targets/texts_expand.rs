//! Any bytes as a texts file and a text to fill (see `common::texts_expand`).
#![no_main]

#[path = "common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| common::texts_expand(data));
