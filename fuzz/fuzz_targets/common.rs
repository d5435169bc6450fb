//! The bodies of the fuzz targets, shared with `tests/fuzz_corpus.rs`, which replays the
//! committed corpus through them under plain `cargo test` (no nightly, no libFuzzer).
//! Each takes any bytes and must return without panicking; the asserts are the properties.
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, OnceLock};

use toolbudget::catalog::{Catalog, load_catalog_bytes};
use toolbudget::document::Document;
use toolbudget::eval::parse_queries;
use toolbudget::search::{self, Scorer, ScorerConfig, ScorerKind, SearchRequest};
use toolbudget::simulate::scenario;

/// Any bytes as a catalog file: a catalog or an input error. The first byte picks the file
/// name (and so the syntax) and whether a `SERVER=` override applies; the rest is the file.
pub fn catalog_parse(data: &[u8]) {
    const NAMES: [&str; 4] = ["catalog.json", "catalog.yaml", "catalog", "server.jsonl"];
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
}

/// Any bytes as a scenario file: a scenario or an input error. Catalogs it names are not read
/// (that is `catalog_parse`).
pub fn scenario_parse(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let name = if first & 1 == 0 { "s.yaml" } else { "s.json" };
    if let Ok(doc) = Document::parse(Path::new(name), rest.to_vec()) {
        let _ = scenario::parse(&doc);
    }
}

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

/// Any text as a search query (keyword with `select:` and `+term`, regex, bm25) over a
/// small fixed catalog, or any bytes as a labeled-query file: results or input errors; a
/// ranking never holds a tool twice and respects the limit.
pub fn query_parse(data: &[u8]) {
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
            let request = SearchRequest::new(query, limit);
            if let Ok(out) = scorer.search(&request) {
                let mut seen = vec![false; f.catalog.len()];
                for h in &out.hits {
                    assert!(!seen[h.tool], "tool {} returned twice", h.tool);
                    seen[h.tool] = true;
                    let _ = scorer.explain_tool(&request, h.tool);
                }
                // Every scorer honours the limit, select: included.
                assert!(out.hits.len() <= limit);
                if let Ok(tree) = scorer.explain(&request) {
                    assert_eq!(tree.children.len(), out.hits.len());
                }
            }
        }
    } else {
        let name = if first & 2 == 0 { "q.jsonl" } else { "q.yaml" };
        let _ = parse_queries(Path::new(name), rest.to_vec(), &f.catalog);
    }
}

/// Any bytes as an `eval --format json` file, then compared — with itself, with a fixed
/// baseline, paired and not — and rendered in every format: an input error or a comparison,
/// never a panic. Comparing a file with itself is never a regression.
pub fn compare_parse(data: &[u8]) {
    use toolbudget::eval::compare::{CompareOptions, EvalFile, compare};
    use toolbudget::eval::result::parse_eval_result;
    use toolbudget::output::Format;
    let Ok(doc) = Document::parse(Path::new("candidate.json"), data.to_vec()) else {
        return;
    };
    let Ok(result) = parse_eval_result(&doc) else {
        return;
    };
    let candidate = EvalFile {
        path: "candidate.json".into(),
        result,
    };
    let baseline = EvalFile {
        path: "baseline.json".into(),
        result: Document::parse(Path::new("baseline.json"), BASELINE.as_bytes().to_vec())
            .and_then(|d| parse_eval_result(&d))
            .expect("the fixed baseline parses"),
    };
    for metric in ["recall@5", "mrr"] {
        for paired_only in [false, true] {
            let mut options = CompareOptions::new(metric, 0.01);
            options.paired_only = paired_only;
            if let Ok(c) = compare(&candidate, &candidate, &options) {
                assert!(c.regressions.is_empty(), "a file regressed against itself");
            }
            for (b, c) in [(&baseline, &candidate), (&candidate, &baseline)] {
                if let Ok(c) = compare(b, c, &options) {
                    for format in Format::all() {
                        let _ = toolbudget::view::compare::render(&c, *format);
                    }
                }
            }
        }
    }
}

const BASELINE: &str = r#"{"tool_count": 3, "query_count": 2, "results": [
  {"scorer": "bm25", "metrics": {"recall@5": 0.5, "mrr": 0.5},
   "per_query": [{"id": "q1", "metrics": {"recall@5": 1.0, "mrr": 1.0}},
                 {"id": "q2", "metrics": {"recall@5": 0.0, "mrr": 0.0}}]}]}"#;

/// Any bytes as a `texts:` file (a JSON object of named texts) and a text to fill: the
/// expanded length is computed without building, and wherever it is small enough to build,
/// the built text has exactly that length; a text naming nothing is left as it is.
pub fn texts_expand(data: &[u8]) {
    use toolbudget::simulate::scenario::texts::Texts;
    // The target text is after the last NUL; the texts file before it.
    let (file, target) = match data.iter().rposition(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"{{a}}{{b}}"[..]),
    };
    let Ok(target) = std::str::from_utf8(target) else {
        return;
    };
    let Ok(doc) = Document::parse(Path::new("texts.json"), file.to_vec()) else {
        return;
    };
    let serde_json::Value::Object(map) = &doc.value else {
        return;
    };
    let texts = Texts::new(map);
    let len = texts.expanded_len(target);
    if !texts.names_any(target) {
        assert_eq!(len, target.len() as u64);
    }
    if len <= 1 << 20 {
        assert_eq!(texts.fill(target).len() as u64, len);
    }
    for v in map.values() {
        if let serde_json::Value::String(s) = v
            && texts.expanded_len(s) <= 1 << 20
        {
            assert_eq!(texts.fill(s).len() as u64, texts.expanded_len(s));
        }
    }
}

/// Any bytes as a calibration file (`simulate --calibration`): an input error or entries
/// whose every value is in range, as `simulate` relies on.
pub fn calibration_parse(data: &[u8]) {
    use toolbudget::simulate::calibration::{CalibrationFile, MAX_SCALE, MAX_SYSTEM_PROMPT_TOKENS};
    let Ok(file) = CalibrationFile::parse(Path::new("calibration.json"), data.to_vec()) else {
        return;
    };
    for c in &file.calibrations {
        assert!((0.0..=MAX_SYSTEM_PROMPT_TOKENS).contains(&c.system_prompt_tokens));
        if let Some(s) = c.subagent_system_prompt_tokens {
            assert!((0.0..=MAX_SYSTEM_PROMPT_TOKENS).contains(&s));
        }
        assert!(c.scale.is_finite() && c.scale.abs() <= MAX_SCALE);
        assert!(!c.applied || c.scale > 0.0);
    }
    // What it writes, it reads back (`calibrate --write` then `--check`).
    let text = serde_json::to_string(&file).expect("serializes");
    let again = CalibrationFile::parse(Path::new("calibration.json"), text.into_bytes());
    assert!(again.is_ok(), "{again:?}");
}
