//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The public data folder (`../shared/data` beside the crate, or `TOOLBUDGET_SHARED_DATA`).
/// `None` on a user's fresh clone: tests that need it print why they skipped.
pub fn shared_data() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("TOOLBUDGET_SHARED_DATA") {
        let p = PathBuf::from(p);
        return p.is_dir().then_some(p);
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    p.is_dir().then_some(p)
}

pub fn skip(test: &str, why: &str) {
    eprintln!("skipped {test}: {why}");
}

pub fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
}
