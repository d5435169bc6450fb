//! Any bytes as a scenario file: parsing and validation must return a scenario or an input
//! error, never panic. Catalogs named by the scenario are not read (that is catalog_parse).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use toolbudget::document::Document;
use toolbudget::simulate::scenario;

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let name = if first & 1 == 0 { "s.yaml" } else { "s.json" };
    if let Ok(doc) = Document::parse(Path::new(name), rest.to_vec()) {
        let _ = scenario::parse(&doc);
    }
});
