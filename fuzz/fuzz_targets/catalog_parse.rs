//! Any bytes as a catalog file: parsing (JSON or YAML) and loading in every form must return
//! a catalog or an input error, never panic. The first byte picks the file name (and so the
//! syntax and the server override), the rest is the file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use toolbudget::catalog::load_catalog_bytes;

const NAMES: [&str; 4] = ["catalog.json", "catalog.yaml", "catalog", "server.jsonl"];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let name = NAMES[usize::from(first) % NAMES.len()];
    let server = (first & 0x80 != 0).then_some("srv");
    if let Ok(catalog) = load_catalog_bytes(Path::new(name), rest.to_vec(), server) {
        // A loaded catalog has unique ids: every id finds its own tool.
        for (i, t) in catalog.tools().iter().enumerate() {
            assert_eq!(catalog.index_of(&t.id), Some(i));
        }
    }
});
