//! Loads and counts every public catalog under `../shared/data/catalogs` when it exists.

use std::path::{Path, PathBuf};

use toolbudget::catalog::{CatalogSource, load_catalogs};
use toolbudget::counter::ToolTokens;
use toolbudget::tokenize::{Render, Tokenizer};

fn catalog_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json" || x == "yaml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_public_catalog_loads_and_counts() {
    let Some(data) = crate::support::shared_data() else {
        return crate::support::skip(
            "every_public_catalog_loads_and_counts",
            "../shared/data not found",
        );
    };
    let files = catalog_files(&data.join("catalogs"));
    assert!(
        files.len() > 100,
        "expected the public catalogs, found {}",
        files.len()
    );
    let sources: Vec<CatalogSource> = files
        .iter()
        .map(|p| CatalogSource {
            path: p.clone(),
            server: None,
        })
        .collect();
    // SOURCES.md: loaded all together, the 4,747 ids are unique.
    let all = load_catalogs(&sources).unwrap();
    assert_eq!(all.len(), 4747);
    let tokens = ToolTokens::compute(&all, Tokenizer::O200kBase, Render::Json);
    assert!(
        tokens.counts().iter().all(|&c| c > 10),
        "every tool renders to real text"
    );
    eprintln!(
        "{} public tools, {} tokens (o200k_base)",
        all.len(),
        tokens.total()
    );
}

#[test]
fn totals_match_the_reference_tiktoken() {
    let Some(data) = crate::support::shared_data() else {
        return crate::support::skip(
            "totals_match_the_reference_tiktoken",
            "../shared/data not found",
        );
    };
    // Totals under the json rendering counted by the reference Python tiktoken.
    let cases = [
        ("catalogs/github.json", Tokenizer::O200kBase, 25686),
        ("catalogs/github.json", Tokenizer::Cl100kBase, 24574),
        ("catalogs/bfcl.json", Tokenizer::O200kBase, 123142),
        ("catalogs/bfcl.json", Tokenizer::Cl100kBase, 122448),
        (
            "catalogs/livemcpbench/bing-cn-mcp.json",
            Tokenizer::O200kBase,
            186,
        ),
        (
            "catalogs/livemcpbench/bing-cn-mcp.json",
            Tokenizer::Cl100kBase,
            199,
        ),
        ("catalogs/kubernetes.json", Tokenizer::O200kBase, 9784),
        ("catalogs/kubernetes.json", Tokenizer::Cl100kBase, 9555),
    ];
    for (rel, tok, want) in cases {
        let c = load_catalogs(&[CatalogSource {
            path: data.join(rel),
            server: None,
        }])
        .unwrap();
        let got = ToolTokens::compute(&c, tok, Render::Json).total();
        assert_eq!(got, want, "{rel} {tok}");
    }
}
