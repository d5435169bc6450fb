//! Unit tests of the simulator: `replays` (tiny scenarios whose totals are computed by hand),
//! `errors` (bad scenarios), `schema` (the schema and the shipped scenarios). This file holds
//! what they share: the test scorer, the worked example and its helpers.

mod clients;
mod errors;
mod replays;
mod schema;

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::catalog::{Catalog, ServerFlags, Tool};
use crate::counter::ToolTokens;
use crate::document::Document;
use crate::search::{Explanation, Hit, SearchOutcome, SearchRequest};
use crate::tokenize::{Render, Tokenizer};

/// A scenario prepared over a catalog and counts at hand (tests give fixed counts).
fn prepare_with(
    scenario: &Scenario,
    catalog: Catalog,
    tokens: ToolTokens,
    build: &ScorerBuilder<'_>,
) -> Result<Prepared> {
    Prepared::builder(scenario, tokens.counter, build)
        .catalog(Arc::new(catalog))
        .tokens(tokens)
        .build()
}

/// Test scorer: `select:A,B` returns exactly those ids; otherwise every candidate whose id
/// contains a query word (lowercased), scored by the number of words matched, ties by id.
pub(crate) struct WordScorer {
    catalog: Arc<Catalog>,
    lower: Vec<String>,
}

impl Scorer for WordScorer {
    fn name(&self) -> String {
        ScorerKind::Keyword.name().to_string()
    }

    fn search(
        &self,
        r: &SearchRequest<'_>,
    ) -> std::result::Result<SearchOutcome, crate::search::SearchError> {
        let mut hits = Vec::new();
        if let Some(names) = r.query.strip_prefix("select:") {
            for n in names.split(',') {
                if let Some(i) = self.catalog.index_of(n)
                    && r.is_candidate(i)
                {
                    hits.push(Hit {
                        tool: i,
                        score: 1.0,
                    });
                }
            }
        } else {
            let words: Vec<String> = r.query.split_whitespace().map(str::to_lowercase).collect();
            for (i, id) in self.lower.iter().enumerate() {
                if !r.is_candidate(i) {
                    continue;
                }
                let n = words.iter().filter(|w| id.contains(w.as_str())).count();
                if n > 0 {
                    hits.push(Hit {
                        tool: i,
                        score: n as f64,
                    });
                }
            }
            hits = crate::search::rank_hits(&self.catalog, hits, r.limit);
        }
        Ok(SearchOutcome {
            hits,
            not_found: Vec::new(),
            ambiguous: Vec::new(),
            total_tools: r.searchable(self.catalog.len()),
            reported_us: None,
        })
    }

    fn explain_tool(
        &self,
        _: &SearchRequest<'_>,
        tool: usize,
    ) -> std::result::Result<Explanation, crate::search::SearchError> {
        Ok(Explanation::leaf(format!("tool {tool}"), 0.0))
    }

    fn settings(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

pub(crate) fn word_builder(
    _spec: &crate::search::ScorerSpec,
    c: Arc<Catalog>,
    _bm25: &crate::search::bm25::Bm25Params,
    _dir: Option<&std::path::Path>,
) -> Result<Box<dyn Scorer>> {
    let lower = c.tools().iter().map(|t| t.id.to_lowercase()).collect();
    Ok(Box::new(WordScorer { catalog: c, lower }))
}

pub(crate) fn tool(id: &str, server: Option<&str>) -> Tool {
    Tool {
        id: id.into(),
        name: id.rsplit("__").next().unwrap().into(),
        server: server.map(Into::into),
        description: format!("Does {id}."),
        input_schema: json!({"type": "object"}),
        should_defer: None,
        always_load: false,
        search_hint: None,
        depends_on: Vec::new(),
        origin: None,
    }
}

pub(crate) fn scenario(yaml: &str) -> Result<Scenario> {
    let doc = Document::parse(
        Path::new("/nonexistent/test.yaml"),
        yaml.as_bytes().to_vec(),
    )?;
    scenario::parse(&doc)
}

fn worked_catalog() -> (Catalog, ToolTokens) {
    let c = Catalog::from_tools(vec![
        tool("Read", None),
        tool("mcp__gh__create_issue", Some("gh")),
        tool("mcp__gh__list_issues", Some("gh")),
    ])
    .unwrap();
    let t = ToolTokens::from_counts(Tokenizer::O200kBase, Render::Json, vec![100, 200, 150]);
    (c, t)
}

/// ACCOUNTING.md's worked example, with every size fixed.
const WORKED: &str = r#"
name: worked
system_prompt_tokens: 1000
catalogs: [unused.json]
deferred:
  defer_mcp: true
  max_results: 5
sizes:
  tool_overhead: 300
  search_tool: 80
  deferred_list: 20
  call: 30
  search_call: 25
  search_result_base: 10
  search_result_per_tool: 0
  reply: 50
conversation:
  - user: "hello"
    tokens: 10
  - user: "open an issue"
    tokens: 20
    calls:
      - tool: mcp__gh__create_issue
        query: "gh issue"
        result_tokens: 40
"#;

fn run_yaml(yaml: &str, catalog: Catalog, tokens: ToolTokens) -> ScenarioResult {
    let sc = scenario(yaml).unwrap();
    let prep = prepare_with(&sc, catalog, tokens, &word_builder).unwrap();
    run(&sc, &prep).unwrap()
}

fn rows<'a>(r: &'a ScenarioResult, mode: &str) -> Vec<&'a RequestRow> {
    r.requests
        .iter()
        .filter(|x| x.mode.name() == mode)
        .collect()
}
