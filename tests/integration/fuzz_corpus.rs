//! Replays the committed fuzz corpus (`fuzz/corpus/<target>/`) through the fuzz targets'
//! own bodies under plain `cargo test`, so every input fuzzing found interesting stays a
//! regression test on stable Rust, in CI, without libFuzzer.

#[path = "../../fuzz/fuzz_targets/common.rs"]
mod common;

use std::path::PathBuf;

fn replay(target: &str, body: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    for f in &files {
        let data = std::fs::read(f).unwrap();
        if std::env::var_os("FUZZ_CORPUS_TRACE").is_some() {
            eprintln!("{}", f.display());
        }
        let outcome = std::panic::catch_unwind(|| body(&data));
        assert!(outcome.is_ok(), "{target} panicked on {}", f.display());
    }
    eprintln!("{target}: {} corpus inputs replayed", files.len());
}

#[test]
fn catalog_parse_corpus() {
    replay("catalog_parse", common::catalog_parse);
}

#[test]
fn scenario_parse_corpus() {
    replay("scenario_parse", common::scenario_parse);
}

#[test]
fn query_parse_corpus() {
    replay("query_parse", common::query_parse);
}

#[test]
fn compare_parse_corpus() {
    replay("compare_parse", common::compare_parse);
}

#[test]
fn texts_expand_corpus() {
    replay("texts_expand", common::texts_expand);
}

#[test]
fn calibration_parse_corpus() {
    replay("calibration_parse", common::calibration_parse);
}

#[test]
fn run_parse_corpus() {
    replay("run_parse", common::run_parse);
}

#[test]
fn live_answer_parse_corpus() {
    replay("live_answer_parse", common::live_answer_parse);
}

#[test]
fn cassette_parse_corpus() {
    replay("cassette_parse", common::cassette_parse);
}
