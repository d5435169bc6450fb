//! Any text as a search query (keyword with `select:` and `+term`, regex, bm25) over a small
//! fixed catalog, and any bytes as a labeled-query file: results or input errors, never a
//! panic; a ranking never holds a tool twice and respects the limit.
#![no_main]

use std::path::Path;
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use toolbudget::catalog::{Catalog, load_catalog_bytes};
use toolbudget::eval::parse_queries;
use toolbudget::search::{self, Scorer, ScorerConfig, ScorerKind, SearchRequest};

const CATALOG: &str = r#"
builtins:
  - name: Read
    description: Read a file from the local filesystem.
    input_schema: {type: object, properties: {file_path: {type: string, description: absolute path}}}
    search_hint: open view file contents
  - name: Bash
    description: Run a shell command (ls, git, cargo test).
  - name: WebFetch
    description: Fetch a URL and return its text.
servers:
  - name: github
    tools:
      - name: create_issue
        description: Create a new issue in a repository.
        input_schema: {type: object, properties: {title: {type: string}, body: {type: string}}}
      - name: list_pull_requests
        description: List pull requests; filter by state.
  - name: my-server.v2
    tools:
      - name: ask_codex
        description: "Ask Codex a question about code: \\b word-boundary test, ünïcödé."
"#;

struct Fixture {
    catalog: Arc<Catalog>,
    scorers: Vec<Box<dyn Scorer>>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let catalog = Arc::new(
            load_catalog_bytes(Path::new("fixed.yaml"), CATALOG.as_bytes().to_vec(), None)
                .expect("the fixed catalog loads"),
        );
        let scorers = [ScorerKind::Keyword, ScorerKind::Regex, ScorerKind::Bm25]
            .into_iter()
            .map(|k| search::build(k, catalog.clone(), &ScorerConfig::default()).unwrap())
            .collect();
        Fixture { catalog, scorers }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let f = fixture();
    if first & 1 == 0 {
        let Ok(query) = std::str::from_utf8(rest) else {
            return;
        };
        let limit = usize::from(first >> 1) % 25;
        for scorer in &f.scorers {
            if let Ok(out) = scorer.search(&SearchRequest::new(query, limit)) {
                let mut seen = vec![false; f.catalog.len()];
                for h in &out.hits {
                    assert!(!seen[h.tool], "tool {} returned twice", h.tool);
                    seen[h.tool] = true;
                    let _ = scorer.explain(query, h.tool);
                }
                if !query.trim_start().starts_with("select:") {
                    assert!(out.hits.len() <= limit);
                }
            }
        }
    } else {
        let name = if first & 2 == 0 { "q.jsonl" } else { "q.yaml" };
        let _ = parse_queries(Path::new(name), rest.to_vec(), &f.catalog);
    }
});
