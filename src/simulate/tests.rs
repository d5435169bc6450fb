//! Unit tests of the simulator on tiny scenarios whose totals are computed by hand.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::catalog::{Catalog, Tool};
use crate::document::Document;
use crate::search::{Explanation, Hit, SearchOutcome, SearchRequest};
use crate::tokenize::{Render, Tokenizer, ToolTokens};

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
    _k: ScorerKind,
    c: Arc<Catalog>,
    _bm25: &crate::search::bm25::Bm25Params,
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

#[test]
fn worked_example_eager() {
    let (c, t) = worked_catalog();
    let r = run_yaml(WORKED, c, t);
    let e = rows(&r, "eager");
    let inputs: Vec<usize> = e.iter().map(|x| x.input_tokens).collect();
    assert_eq!(inputs, [1760, 1830, 1900]);
    let outputs: Vec<usize> = e.iter().map(|x| x.output_tokens).collect();
    assert_eq!(outputs, [50, 30, 50]);
    assert_eq!(r.eager.total_input_tokens, 5490);
    assert_eq!(r.eager.requests, 3);
    assert_eq!(r.eager.first_request_tokens, 1760);
    // Parts of T2 R2: history = (10 + 50) + 20 + 30, new = 40.
    assert_eq!(
        e[2].parts,
        Parts {
            system: 1000,
            tool_overhead: 300,
            tools: 450,
            deferred_list: 0,
            history: 110,
            new: 40
        }
    );
}

#[test]
fn worked_example_deferred() {
    let (c, t) = worked_catalog();
    let r = run_yaml(WORKED, c, t);
    let d = rows(&r, "deferred");
    let inputs: Vec<usize> = d.iter().map(|x| x.input_tokens).collect();
    assert_eq!(inputs, [1510, 1580, 1965, 2035]);
    let outputs: Vec<usize> = d.iter().map(|x| x.output_tokens).collect();
    assert_eq!(outputs, [50, 25, 30, 50]);
    let kinds: Vec<RequestKind> = d.iter().map(|x| x.kind).collect();
    assert_eq!(
        kinds,
        [
            RequestKind::User,
            RequestKind::User,
            RequestKind::Search,
            RequestKind::ToolResult
        ]
    );
    assert_eq!(r.deferred.total_input_tokens, 7090);
    assert_eq!(r.deferred.requests, 4);
    assert_eq!(
        (
            r.deferred.counts.searches,
            r.deferred.counts.misses,
            r.deferred.counts.retries
        ),
        (1, 0, 0)
    );
    // The search result: 10 framing + 200 + 150 definitions.
    assert_eq!(d[2].parts.new, 360);
    assert_eq!(d[2].parts.tools, 180);
    assert_eq!(d[2].parts.deferred_list, 20);
    assert_eq!((r.tool_count, r.deferred_count), (3, 2));
    // (1760 - 1510) / 1760 = 14.20%; (5490 - 7090) / 5490 = -29.14%.
    assert_eq!(r.savings.first_request_pct, Some(14.2));
    assert_eq!(r.savings.total_input_pct, Some(-29.14));
}

#[test]
fn totals_equal_the_sum_of_parts() {
    let (c, t) = worked_catalog();
    let r = run_yaml(WORKED, c, t);
    for m in [&r.eager, &r.deferred] {
        assert_eq!(m.parts.total(), m.total_input_tokens);
    }
    for row in &r.requests {
        assert_eq!(row.parts.total(), row.input_tokens);
    }
}

#[test]
fn appending_keeps_the_cache() {
    let (c, t) = worked_catalog();
    let r = run_yaml(WORKED, c, t);
    let cached: Vec<usize> = rows(&r, "deferred")
        .iter()
        .map(|x| x.cached_tokens)
        .collect();
    // Each request's cached prefix is the whole previous input.
    assert_eq!(cached, [0, 1510, 1580, 1965]);
    let cached: Vec<usize> = rows(&r, "eager").iter().map(|x| x.cached_tokens).collect();
    assert_eq!(cached, [0, 1760, 1830]);
    // Sonnet 4.5: eager without caching = 5490 × $3 + 130 × $15 (per MTok).
    let want = (5490.0 * 3.0 + 130.0 * 15.0) / 1e6;
    assert!((r.eager.cost_usd.without_caching - want).abs() < 1e-9);
    // With caching: 1760+1830 read at 0.30, the rest written at 3.75.
    let read = 1760.0 + 1830.0;
    let want = (read * 0.30 + (5490.0 - read) * 3.75 + 130.0 * 15.0) / 1e6;
    assert!((r.eager.cost_usd.with_caching - want).abs() < 1e-9);
}

#[test]
fn revealing_into_the_tools_list_rewrites_the_cache() {
    let (c, t) = worked_catalog();
    let yaml = WORKED.replace("  max_results: 5", "  max_results: 5\n  reveal: tools-list");
    let r = run_yaml(&yaml, c, t);
    let d = rows(&r, "deferred");
    // The search result carries only its framing; the definitions join the tools list.
    assert_eq!(d[2].parts.new, 10);
    assert_eq!(d[2].parts.tools, 180 + 350);
    // The prefix now differs from the tools part on: only system + overhead are cached.
    assert_eq!(d[2].cached_tokens, 1300);
    // The next request appends again: fully cached.
    assert_eq!(d[3].cached_tokens, d[2].input_tokens);
    // One invalidation, named and costed: what the previous request had cached beyond the
    // 1,300 still shared is written again (at $3.75 − $0.30 per million).
    assert_eq!(
        d[2].cache_break,
        Some(crate::simulate::cost::CacheBreak::Tools)
    );
    let i = &r.deferred.cache_invalidations;
    assert_eq!(
        (i.requests, i.tools, i.tokens),
        (1, 1, d[1].input_tokens - 1300)
    );
    assert_eq!((i.tokens, i.cost_usd), (280, 0.000966));
    // Appending the definitions to the history keeps the prefix: none.
    let (c, t) = worked_catalog();
    let appended = run_yaml(WORKED, c, t);
    assert_eq!(appended.deferred.cache_invalidations.requests, 0);
    assert_eq!(appended.eager.cache_invalidations.requests, 0);
}

#[test]
fn delta_style_announces_once_then_it_is_history() {
    let (c, t) = worked_catalog();
    let yaml = WORKED.replace("  max_results: 5", "  max_results: 5\n  list_style: delta");
    let r = run_yaml(&yaml, c, t);
    let d = rows(&r, "deferred");
    assert_eq!(d[0].parts.deferred_list, 20);
    assert_eq!(d[1].parts.deferred_list, 0);
    // Same totals as list style on the first request; later the 20 sit in history.
    assert_eq!(d[0].input_tokens, 1510);
    assert_eq!(d[1].parts.history, 20 + 10 + 50);
}

#[test]
fn a_miss_retries_with_name_parts_then_select() {
    let (c, t) = worked_catalog();
    // "zzz" matches nothing; the rephrase "gh create issue" finds it.
    let yaml = WORKED.replace("query: \"gh issue\"", "query: \"zzz\"");
    let r = run_yaml(&yaml, c, t);
    assert_eq!(
        (
            r.deferred.counts.searches,
            r.deferred.counts.misses,
            r.deferred.counts.retries
        ),
        (1, 1, 1)
    );
    let d = rows(&r, "deferred");
    assert_eq!(d.len(), 5);
    assert_eq!(d[3].kind, RequestKind::Retry);
    assert_eq!(r.deferred.counts.retry_input_tokens, d[3].input_tokens);
    // The empty first result is framing only.
    assert_eq!(d[2].parts.new, 10);
    // The rephrased query returns both gh tools ("gh", "issue" match both ids).
    assert_eq!(d[3].parts.new, 10 + 200 + 150);
}

#[test]
fn select_discovery_loads_exactly_the_tool() {
    let (c, t) = worked_catalog();
    let yaml = WORKED.replace("  max_results: 5", "  max_results: 5\n  discovery: select");
    let r = run_yaml(&yaml, c, t);
    let d = rows(&r, "deferred");
    assert_eq!(d[2].parts.new, 10 + 200);
    assert_eq!(r.deferred.counts.misses, 0);
}

#[test]
fn auto_retrieve_adds_tools_for_the_turn_without_a_request() {
    let (c, t) = worked_catalog();
    let yaml = WORKED
        .replace(
            "  max_results: 5",
            "  max_results: 5\n  discovery: auto-retrieve",
        )
        .replace("user: \"open an issue\"", "user: \"create issue\"");
    let r = run_yaml(&yaml, c, t);
    let d = rows(&r, "deferred");
    assert_eq!(d.len(), 3, "c + 1 requests per turn");
    // Turn 2's requests carry both gh tools ("issue" matches both).
    assert_eq!(d[1].parts.tools, 180 + 350);
    assert_eq!(d[2].parts.tools, 180 + 350);
    assert_eq!(r.deferred.counts.searches, 2);
    assert_eq!(r.deferred.counts.misses, 0);
    // A retrieval that misses the tool costs a miss and a model search.
    let (c, t) = worked_catalog();
    let yaml = WORKED
        .replace(
            "  max_results: 5",
            "  max_results: 5\n  discovery: auto-retrieve",
        )
        .replace("user: \"open an issue\"", "user: \"zzz\"");
    let r = run_yaml(&yaml, c, t);
    assert_eq!(
        (r.deferred.counts.searches, r.deferred.counts.misses),
        (3, 1)
    );
    assert_eq!(r.deferred.requests, 4);
}

#[test]
fn always_load_and_auto_threshold_decide_what_is_deferred() {
    let (c, t) = worked_catalog();
    let yaml = WORKED.replace("  defer_mcp: true", "  always_load: [mcp__gh__list_issues]");
    let r = run_yaml(&yaml, c, t);
    assert_eq!(r.deferred_count, 1);
    assert_eq!(rows(&r, "deferred")[0].parts.tools, 100 + 150 + 80);
    // 350 deferrable tokens are 0.175% of 200K: auto:1 does not defer, auto:0.1 does.
    let (c, t) = worked_catalog();
    let r = run_yaml(
        &WORKED.replace("  defer_mcp: true", "  when: \"auto:1\""),
        c,
        t,
    );
    assert_eq!(r.deferred_count, 0);
    assert_eq!(r.deferred.total_input_tokens, r.eager.total_input_tokens);
    let (c, t) = worked_catalog();
    let r = run_yaml(
        &WORKED.replace("  defer_mcp: true", "  when: \"auto:0.1\""),
        c,
        t,
    );
    assert_eq!(r.deferred_count, 2);
}

#[test]
fn dependencies_load_with_a_discovered_tool() {
    let (c, t) = worked_catalog();
    let yaml = WORKED
        .replace("  max_results: 5", "  max_results: 5\n  discovery: select\n  depends_on: {mcp__gh__create_issue: [mcp__gh__list_issues]}");
    let r = run_yaml(&yaml, c, t);
    assert_eq!(rows(&r, "deferred")[2].parts.new, 10 + 200 + 150);
}

#[test]
fn clear_and_compaction_reset_history_and_discovered_tools() {
    let (c, t) = worked_catalog();
    let yaml = format!(
        "{WORKED}  - event: compact\n    summary_tokens: 100\n    keep_discovered: false\n  - user: again\n    tokens: 5\n    calls: [{{tool: mcp__gh__create_issue, query: \"gh issue\", result_tokens: 40}}]\n  - event: clear\n  - user: x\n    tokens: 7\n"
    );
    let r = run_yaml(&yaml, c, t);
    let d = rows(&r, "deferred");
    // After compaction: history = summary only, and the tool must be searched again.
    assert_eq!(d[4].parts.history, 100);
    assert_eq!(d[4].cached_tokens, 1000 + 300 + 180 + 20);
    assert_eq!(r.deferred.counts.searches, 2);
    // After /clear: empty history.
    let last = d.last().unwrap();
    assert_eq!(last.parts.history, 0);
    assert_eq!(last.input_tokens, 1000 + 300 + 180 + 20 + 7);
    // Keeping discovered tools after compaction carries their definitions (append reveal)
    // and needs no second search.
    let (c, t) = worked_catalog();
    let r = run_yaml(
        &yaml.replace("keep_discovered: false", "keep_discovered: true"),
        c,
        t,
    );
    let d = rows(&r, "deferred");
    assert_eq!(d[4].parts.history, 100 + 200 + 150);
    assert_eq!(r.deferred.counts.searches, 1);
}

#[test]
fn a_server_connecting_mid_way_changes_tools_and_list() {
    let (c, t) = worked_catalog();
    let yaml = WORKED.replace(
            "  - user: \"open an issue\"",
            "  - event: disconnect\n    server: gh\n  - user: \"mid\"\n    tokens: 1\n  - event: connect\n    server: gh\n  - user: \"open an issue\"",
        );
    let r = run_yaml(&yaml, c, t);
    let e = rows(&r, "eager");
    assert_eq!(e[1].parts.tools, 100);
    assert_eq!(e[2].parts.tools, 450);
    // Changing the tools list rewrites the cache after system + overhead.
    assert_eq!(e[2].cached_tokens, 1300);
}

#[test]
fn resume_starts_with_a_cold_cache_and_keeps_discovered_tools() {
    let (c, t) = worked_catalog();
    let yaml = format!(
        "{WORKED}  - event: resume\n  - user: again\n    tokens: 5\n    calls: [{{tool: mcp__gh__create_issue, query: \"gh issue\", result_tokens: 40}}]\n"
    );
    let r = run_yaml(&yaml, c, t);
    let d = rows(&r, "deferred");
    // The first request after the resume reads nothing from the cache.
    assert_eq!(d[4].cached_tokens, 0);
    assert_eq!(d[5].cached_tokens, d[4].input_tokens);
    // The tool was re-discovered from the transcript: no second search.
    assert_eq!(r.deferred.counts.searches, 1);
    let (c, t) = worked_catalog();
    let r = run_yaml(
        &yaml.replace("event: resume", "event: resume\n    rediscover: false"),
        c,
        t,
    );
    assert_eq!(r.deferred.counts.searches, 2);
}

#[test]
fn definition_fetches_add_latency_once_per_ttl() {
    let (c, t) = worked_catalog();
    let yaml = format!(
        "{WORKED}model_overrides: {{definition_fetch_ms: 500, request_overhead_ms: 0, search_latency_ms: 0}}\n"
    );
    let r = run_yaml(&yaml, c, t);
    let d = rows(&r, "deferred");
    let e = rows(&r, "eager");
    // The search-result request pays the fetch; the same input without it would not.
    let p = &r.model;
    let prefill = |x: &RequestRow| {
        (x.input_tokens - x.cached_tokens) as f64 / p.prefill_tokens_per_s * 1000.0
            + x.cached_tokens as f64 / p.cached_prefill_tokens_per_s * 1000.0
    };
    assert!((d[2].ttft_ms - (prefill(d[2]) + 500.0)).abs() < 0.1);
    assert!((d[3].ttft_ms - prefill(d[3])).abs() < 0.1);
    assert!((e[0].ttft_ms - prefill(e[0])).abs() < 0.1);
}

#[test]
fn premature_calls_cost_an_error_round_trip() {
    let (c, t) = worked_catalog();
    let yaml =
        format!("{WORKED}failures:\n  premature_call_rate: 1.0\n  seed: 7\nsizes_unused: 1\n")
            .replace("sizes_unused: 1\n", "");
    let yaml = yaml.replace("  reply: 50", "  reply: 50\n  error_result: 15");
    let r = run_yaml(&yaml, c, t);
    let d = rows(&r, "deferred");
    assert_eq!(r.deferred.counts.premature_calls, 1);
    assert_eq!(d[2].kind, RequestKind::ErrorResult);
    assert_eq!(d[2].parts.new, 15);
    assert_eq!(r.deferred.requests, 5);
}

#[test]
fn each_mode_says_how_many_tools_it_sends() {
    let (c, t) = worked_catalog();
    let r = run_yaml(WORKED, c, t);
    // Eager: all three; deferred: Read and the search tool. The catalog has three tools.
    assert_eq!(
        (r.tool_count, r.eager.tools_sent, r.deferred.tools_sent),
        (3, 3, 2)
    );
    assert!(rows(&r, "eager").iter().all(|x| x.tools_sent == 3));
    assert_eq!(r.settings.search_tool, SEARCH_TOOL);
}

#[test]
fn a_conversation_beyond_the_window_is_marked_and_claims_no_saving() {
    let (c, t) = worked_catalog();
    let yaml = format!("{WORKED}model_overrides: {{context_window: 1900}}\n");
    let r = run_yaml(&yaml, c, t);
    // Eager R3: 1,900 in + 50 out; deferred R3 and R4 (1,965 + 30, 2,035 + 50) overflow too.
    assert!(!r.eager.fits_window && !r.deferred.fits_window);
    assert_eq!(
        (r.eager.overflow_requests, r.deferred.overflow_requests),
        (1, 2)
    );
    let e = rows(&r, "eager");
    assert_eq!(e[2].headroom_tokens, -50);
    let s = &r.savings;
    assert_eq!(s.first_request_pct, None);
    assert_eq!(s.total_input_pct, None);
    assert_eq!(s.cost_with_caching_pct, None);
    assert!(
        s.caveats[0].starts_with(
            "eager does not fit: 103% of a 1,900 window (largest request, input and output; 1 of 3 requests overflow)"
        ),
        "{:?}",
        s.caveats
    );
    assert!(s.caveats[1].starts_with("deferred does not fit: 110% of a 1,900 window"));
    let json = crate::output::to_json(&r);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(v["savings"]["first_request_pct"].is_null());
    // The one result type reads back what it wrote.
    let back: ScenarioResult = serde_json::from_str(&json).unwrap();
    assert_eq!(back, r);
}

#[test]
fn calls_no_search_finds_are_beside_the_saving() {
    let (c, t) = worked_catalog();
    let yaml = WORKED
        .replace("query: \"gh issue\"", "query: \"nothing matches\"")
        .replace("  max_results: 5", "  max_results: 5\n  retry: []");
    let r = run_yaml(&yaml, c, t);
    assert_eq!(
        (r.deferred.counts.failed_calls, r.deferred.counts.tool_calls),
        (1, 0)
    );
    assert_eq!(r.eager.counts.tool_calls, 1);
    assert!(r.savings.total_input_pct.is_some());
    assert_eq!(
        r.savings.caveats,
        vec![
            "unequal work: tool calls made, eager 1 and deferred 0 (deferred: 1 failed, no \
             search found the tool; 0 unavailable), so the totals are not the same conversation"
        ]
    );
    let row = &crate::simulate::result::scenario_rows(std::slice::from_ref(&r))[0];
    assert_eq!(row.deferred_failed_calls, 1);
    assert!(row.savings_caveats.starts_with("unequal work"));
}

#[test]
fn measured_search_latency_replaces_the_modeled_one() {
    let (c, t) = worked_catalog();
    let sc = scenario(WORKED).unwrap();
    let prep = prepare_with(&sc, c, t, &word_builder).unwrap();
    let modeled = run(&sc, &prep).unwrap();
    let clock = crate::timing::ticking_clock(std::time::Duration::from_millis(3));
    let measured = run_timed(&sc, &prep, SearchTiming::Measured(&clock)).unwrap();
    let m = measured.deferred.measured_search_us.unwrap();
    // The one search the replay sent, timed at 3 ms by the fake clock.
    assert_eq!((m.searches, m.p50, m.max), (1, 3000.0, 3000.0));
    assert_eq!(modeled.deferred.measured_search_us, None);
    assert_eq!(
        measured.settings.search_latency,
        result::SearchLatencySource::Measured
    );
    assert_eq!(
        modeled.settings.search_latency,
        result::SearchLatencySource::Modeled
    );
    // The request carrying the search result waits 3 ms instead of the profile's 1 ms.
    let (a, b) = (
        rows(&modeled, "deferred")[2],
        rows(&measured, "deferred")[2],
    );
    assert_eq!(a.kind, RequestKind::Search);
    assert!((b.ttft_ms - a.ttft_ms - (3.0 - sc.profile.search_latency_ms)).abs() < 0.11);
    // Tokens and cost do not depend on the clock.
    assert_eq!(a.input_tokens, b.input_tokens);
    assert_eq!(modeled.savings, measured.savings);
}

#[test]
fn subagent_requests_are_summed_separately() {
    let (c, t) = worked_catalog();
    let yaml = WORKED.replace(
        "        result_tokens: 40\n",
        "        result_tokens: 40\n    subagent:\n      tools: [Read]\n      system_prompt_tokens: 500\n      result_tokens: 70\n      conversation:\n        - user: sub\n          tokens: 3\n          calls: [{tool: Read, result_tokens: 9}]\n",
    );
    let r = run_yaml(&yaml, c, t);
    let e = rows(&r, "eager");
    let sub: Vec<_> = e.iter().filter(|x| x.agent == 1).collect();
    assert_eq!(sub.len(), 2);
    // Subagent: 500 system + 300 overhead + Read 100 + 3 user.
    assert_eq!(sub[0].input_tokens, 903);
    assert_eq!(r.eager.counts.subagent_requests, 2);
    assert_eq!(r.eager.requests, 3 + 1 + 2);
    // The parent's last request carries the subagent's 70-token result.
    assert_eq!(e.last().unwrap().parts.new, 70);
}

#[test]
fn bad_scenarios_give_located_errors() {
    let cases: &[(&str, &str)] = &[
        (
            "name: x\ncatalogs: [a.json]\nbogus: 1\nconversation: [{user: hi}]\n",
            "3:8",
        ),
        (
            "name: x\ncatalogs: [a.json]\nconversation:\n  - user: hi\n    calls:\n      - tool: Read\n        result_tokens: -5\n",
            "7:24",
        ),
        (
            "name: x\ncatalogs: [a.json]\nsystem_prompt_tokens: many\nconversation: [{user: hi}]\n",
            "3:23",
        ),
        (
            "name: x\ncatalogs: [a.json]\nconversation:\n  - user: hi\n    calls: [{tool: Read, wat: 1}]\n",
            "5:31",
        ),
    ];
    for (yaml, pos) in cases {
        let e = scenario(yaml).unwrap_err().to_string();
        assert!(e.contains(&format!("test.yaml:{pos}:")), "{e}");
    }
    // A call to a tool no catalog has is located at the id.
    let (c, t) = worked_catalog();
    let sc = scenario("name: x\ncatalogs: [a.json]\nconversation:\n  - user: hi\n    calls:\n      - tool: mcp__gh__nope\n").unwrap();
    let e = prepare_with(&sc, c, t, &word_builder)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("test.yaml:6:15:") && e.contains("mcp__gh__nope"),
        "{e}"
    );
    let (c, t) = worked_catalog();
    let sc = scenario(
        "catalogs: [a.json]\ndeferred: {always_load: [Nope]}\nconversation: [{user: hi}]\n",
    )
    .unwrap();
    let e = prepare_with(&sc, c, t, &word_builder)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("test.yaml:2:26:"), "{e}");
    let (c, t) = worked_catalog();
    let sc = scenario(
        "catalogs: [a.json]\nconversation:\n  - user: hi\n  - event: connect\n    server: nope\n",
    )
    .unwrap();
    let e = prepare_with(&sc, c, t, &word_builder)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("test.yaml:5:13:") && e.contains("\"nope\""),
        "{e}"
    );
}

/// Each kind of mistake: the place (line:column of the key or value), the path, what is
/// allowed.
#[test]
fn scenario_errors_say_what_where_and_what_is_allowed() {
    let cases: &[(&str, &str)] = &[
        // An unknown key, nested: located at the key, listing the accepted keys.
        (
            "catalogs: [a.json]\ndeferred:\n  scorer: bm25\n  max_result: 3\nconversation: [{user: hi}]\n",
            "test.yaml:4:15: deferred: unknown field `max_result`, expected one of `when`, `defer_mcp`",
        ),
        (
            "catalogs: [a.json]\nmodel_overrides: {context_windw: 5}\nconversation: [{user: hi}]\n",
            "test.yaml:2:34: model_overrides.context_windw: unknown value `context_windw`, expected one of `input_per_mtok`",
        ),
        (
            "catalogs: [a.json]\nmodel_overrides: {context_window: 0}\nconversation: [{user: hi}]\n",
            "test.yaml:2:35: model_overrides.context_window: must be > 0",
        ),
        (
            "catalogs: [a.json]\nconversation:\n  - user: hi\n    calls:\n      - tool: Read\n        result_tokens: 2.5\n",
            "test.yaml:6:24: conversation[0].calls[0].result_tokens: invalid value: floating point `2.5`, expected a whole number of tokens ≥ 0",
        ),
        (
            "catalogs: [a.json]\ndeferred: {when: sometimes}\nconversation: [{user: hi}]\n",
            "test.yaml:2:18: deferred.when: expected \"always\" or \"auto:N\"",
        ),
        (
            "catalogs: [a.json]\ndeferred: {discovery: guess}\nconversation: [{user: hi}]\n",
            "test.yaml:2:23: deferred.discovery: unknown value `guess`, expected one of `model-search`, `select`, `auto-retrieve`",
        ),
        (
            "catalogs: [a.json]\nconversation:\n  - user: hi\n  - event: clear\n    server: gh\n",
            "test.yaml:5:13: conversation[1].server: `server` does not apply to a clear event",
        ),
        (
            "catalogs: [a.json]\nconversation:\n  - user: hi\n  - event: compact\n",
            "test.yaml:4:5: conversation[1]: a compact event needs `summary_tokens:`",
        ),
        (
            "catalogs: [a.json]\nconversation:\n  - tokens: 5\n",
            "test.yaml:3:5: conversation[0]: missing field `user`",
        ),
        (
            "catalogs: [a.json]\nconversation: [hello]\n",
            "test.yaml:2:16: conversation[0]: expected a turn (a mapping with user:) or an event (event:), found a string",
        ),
        (
            "catalogs: [a.json]\nfailures: {premature_call_rate: 1.5}\nconversation: [{user: hi}]\n",
            "test.yaml:2:33: failures.premature_call_rate: invalid value: floating point `1.5`, expected a probability between 0 and 1",
        ),
        (
            "catalogs: [a.json]\npublished: [{claim: c, source: s, metric: total}]\nconversation: [{user: hi}]\n",
            "test.yaml:2:43: published[0].metric: unknown value `total`, expected one of `first_request_tokens`",
        ),
        (
            "catalogs: [a.json]\npublished: [{claim: c, source: s, metric: turn_seconds}]\nconversation: [{user: hi}]\n",
            "test.yaml:2:13: published[0].turn: metric turn_seconds needs `turn:` (1 or more)",
        ),
        (
            "catalogs: [a.json]\npublished: [{claim: c, source: s, deferred_range: [9, 1]}]\nconversation: [{user: hi}]\n",
            "test.yaml:2:51: published[0].deferred_range: [9, 1] is not a range [low, high]",
        ),
        (
            "catalogs: [a.json]\npublished: [{claim: c, source: s, eager_parts: {catalog: -5}}]\nconversation: [{user: hi}]\n",
            "test.yaml:2:58: published[0].eager_parts.catalog: invalid value: floating point `-5.0`, expected a number ≥ 0",
        ),
        (
            "catalogs: {a: 1}\nconversation: [{user: hi}]\n",
            "test.yaml:1:11: catalogs: invalid type: a mapping, expected a list",
        ),
    ];
    for (yaml, expected) in cases {
        let e = scenario(yaml).unwrap_err().to_string();
        assert!(e.contains(expected), "got: {e}\nwant: {expected}");
    }
}

#[test]
fn bm25_settings_reach_the_deferred_scorer() {
    let sc = scenario(
        "catalogs: [a.json]\ndeferred:\n  scorer: bm25\n  bm25: {k1: 0.5, weights: {name: 3, argument_descriptions: 0}}\nconversation: [{user: hi}]\n",
    )
    .unwrap();
    let p = sc.deferred.bm25;
    assert_eq!((p.k1, p.b), (0.5, crate::search::bm25::DEFAULT_B));
    assert_eq!(p.weights, [3.0, 1.0, 1.0, 0.0]);
    let (c, t) = worked_catalog();
    let prep = prepare_with(&sc, c, t, &super::build_scorer).unwrap();
    let settings = prep.scorer.settings();
    assert!(
        settings.contains(&("k1".to_string(), "0.5".to_string())),
        "{settings:?}"
    );
    assert!(
        settings.contains(&(
            "weights".to_string(),
            "name=3 description=1 argument_names=1 argument_descriptions=0".to_string()
        )),
        "{settings:?}"
    );
    let cases: &[(&str, &str)] = &[
        (
            "catalogs: [a.json]\ndeferred: {bm25: {b: 1.5}}\nconversation: [{user: hi}]\n",
            "test.yaml:2:22: deferred.bm25.b: invalid value: floating point `1.5`, expected a probability between 0 and 1",
        ),
        (
            "catalogs: [a.json]\ndeferred: {bm25: {k: 1}}\nconversation: [{user: hi}]\n",
            "test.yaml:2:22: deferred.bm25: unknown field `k`, expected one of `k1`, `b`, `weights`",
        ),
        (
            "catalogs: [a.json]\ndeferred:\n  bm25:\n    weights: {name: 0, description: 0, argument_names: 0, argument_descriptions: 0}\nconversation: [{user: hi}]\n",
            "test.yaml:4:5: deferred.bm25: bm25 field weights are all 0",
        ),
    ];
    for (yaml, expected) in cases {
        let e = scenario(yaml).unwrap_err().to_string();
        assert!(e.contains(expected), "got: {e}\nwant: {expected}");
    }
}

#[test]
fn name_queries_split_ids_into_words() {
    assert_eq!(split_words("create_issue"), ["create", "issue"]);
    assert_eq!(split_words("WebFetch"), ["web", "fetch"]);
    assert_eq!(
        split_words("take-screenshot.v2"),
        ["take", "screenshot", "v2"]
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn catalog(n_builtin: usize, n_mcp: usize) -> (Catalog, ToolTokens) {
        let mut tools = Vec::new();
        let mut counts = Vec::new();
        for i in 0..n_builtin {
            tools.push(tool(&format!("B{i}"), None));
            counts.push(50 + i * 7);
        }
        for i in 0..n_mcp {
            let s = format!("s{}", i % 3);
            tools.push(tool(&format!("mcp__{s}__t{i}"), Some(&s)));
            counts.push(80 + i * 13);
        }
        let c = Catalog::from_tools(tools).unwrap();
        (
            c,
            ToolTokens::from_counts(Tokenizer::O200kBase, Render::Json, counts),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// When every search hits (select discovery), both modes call the same tools in the
        /// same turns, and every total is the sum of its parts.
        #[test]
        fn same_tools_same_turns_when_searches_hit(
            turns in proptest::collection::vec(
                proptest::collection::vec((0usize..10, 1usize..500), 0..4), 1..8),
            listing in 0usize..3,
            reveal in 0usize..2,
        ) {
            let (c, t) = catalog(4, 6);
            let ids: Vec<String> = c.tools().iter().map(|t| t.id.clone()).collect();
            let mut yaml = String::from("name: p\nsystem_prompt_tokens: 500\ncatalogs: [x.json]\ndeferred:\n  discovery: select\n  defer_builtins: [B3]\n");
            yaml.push_str(&format!("  listing: {}\n", ["names", "descriptions", "servers"][listing]));
            yaml.push_str(&format!("  reveal: {}\n", ["append", "tools-list"][reveal]));
            yaml.push_str("conversation:\n");
            for calls in &turns {
                yaml.push_str("  - user: do things\n    calls:\n");
                for (tool, res) in calls {
                    yaml.push_str(&format!("      - {{tool: {}, result_tokens: {res}}}\n", ids[*tool]));
                }
                if calls.is_empty() {
                    yaml.push_str("      []\n");
                }
            }
            let r = run_yaml(&yaml, c, t);
            let used = |mode: &str| -> Vec<(usize, String)> {
                r.requests.iter()
                    .filter(|x| x.mode.name() == mode && x.kind == RequestKind::ToolResult)
                    .map(|x| (x.turn, x.tool.clone().unwrap()))
                    .collect()
            };
            prop_assert_eq!(used("eager"), used("deferred"));
            prop_assert_eq!(r.deferred.counts.misses, 0);
            prop_assert_eq!(r.eager.parts.total(), r.eager.total_input_tokens);
            prop_assert_eq!(r.deferred.parts.total(), r.deferred.total_input_tokens);
            for row in &r.requests {
                prop_assert_eq!(row.parts.total(), row.input_tokens);
                prop_assert!(row.cached_tokens <= row.input_tokens);
            }
            let n_calls: usize = turns.iter().map(Vec::len).sum();
            prop_assert_eq!(r.eager.requests, n_calls + turns.len());
            prop_assert_eq!(r.deferred.requests, n_calls + turns.len() + r.deferred.counts.searches);
        }
    }
}

/// The work budget: a repeated turn holding a repeated subagent multiplies; the budget is
/// checked before anything is expanded, and under it the eager requests equal the work counted.
mod work_budget {
    use super::*;
    use proptest::prelude::*;

    fn nested(outer: u64, inner: u64, calls: usize) -> String {
        let call_list: Vec<String> = (0..calls)
            .map(|_| "{tool: Read, result_tokens: 5}".to_string())
            .collect();
        format!(
            "catalogs: [x.json]\nconversation:\n  - user: go\n    repeat: {outer}\n    subagent:\n      conversation:\n        - user: sub\n          repeat: {inner}\n          calls: [{}]\n",
            call_list.join(", ")
        )
    }

    #[test]
    fn the_issue_reproduction_is_refused_before_expanding() {
        let e = scenario(&nested(3000, 3000, 0)).unwrap_err().to_string();
        assert!(
            e.contains("test.yaml:3:5:")
                && e.contains("expands to at least 9006000 requests")
                && e.contains("limit of 500000"),
            "{e}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn refused_exactly_above_the_budget(outer in 1u64..2000, inner in 1u64..2000, calls in 0usize..3) {
            let work = outer * (2 + inner * (1 + calls as u64));
            let parsed = scenario(&nested(outer, inner, calls));
            prop_assert_eq!(parsed.is_ok(), work <= scenario::MAX_WORK_REQUESTS, "work {}", work);
            if work <= 20_000 {
                let (c, t) = worked_catalog();
                let r = run_yaml(&nested(outer, inner, calls), c, t);
                prop_assert_eq!(r.eager.requests as u64, work);
            }
        }
    }
}

fn shipped_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

fn shipped_scenarios() -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(shipped_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    v.sort();
    v
}

/// Every object of `scenarios/schema.json` against the struct that reads it, and every `enum`
/// against the enum that parses it: adding a key or a value to one and not the other fails
/// here, naming both lists.
#[test]
fn schema_lists_exactly_the_keys_the_loader_accepts() {
    use super::profile::Override;
    use super::scenario::{
        Discovery, EventKind, Failures, ListStyle, Listing, Published, RawCall, RawCatalogEntry,
        RawDeferred, RawEvent, RawScenario, RawSubagent, RawTurn, RetryStep, Reveal, Sizes,
    };
    use crate::names::{of, sorted};
    use crate::search::ScorerKind;
    use serde_json::Value;

    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(shipped_dir().join("schema.json")).unwrap())
            .unwrap();
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("no properties in {v}"))
            .keys()
            .cloned()
            .collect();
        k.sort();
        k
    };
    let values = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v["enum"]
            .as_array()
            .unwrap_or_else(|| panic!("no enum in {v}"))
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect();
        k.sort();
        k
    };
    let p = &schema["properties"];
    let d = &schema["$defs"];
    let dp = &p["deferred"]["properties"];
    let objects: [(&str, &Value, Option<&[&str]>); 12] = [
        ("texts", &p["texts"], of::<super::scenario::RawTexts>()),
        ("scenario", &schema, of::<RawScenario>()),
        ("deferred", &p["deferred"], of::<RawDeferred>()),
        ("sizes", &p["sizes"], of::<Sizes>()),
        ("failures", &p["failures"], of::<Failures>()),
        ("model_overrides", &p["model_overrides"], of::<Override>()),
        ("published", &p["published"]["items"], of::<Published>()),
        (
            "catalog entry",
            &p["catalogs"]["items"]["oneOf"][1],
            of::<RawCatalogEntry>(),
        ),
        ("turn", &d["turn"], of::<RawTurn>()),
        ("call", &d["call"], of::<RawCall>()),
        ("event", &d["event"], of::<RawEvent>()),
        (
            "subagent",
            &d["turn"]["properties"]["subagent"],
            of::<RawSubagent>(),
        ),
    ];
    for (what, object, names) in objects {
        let names = names.unwrap_or_else(|| panic!("{what}: not a derived type"));
        assert_eq!(
            keys(object),
            sorted(names),
            "{what}: schema.json vs the reader"
        );
    }
    let enums: [(&str, &Value, Option<&[&str]>); 11] = [
        ("scorer", &dp["scorer"], of::<ScorerKind>()),
        ("discovery", &dp["discovery"], of::<Discovery>()),
        ("listing", &dp["listing"], of::<Listing>()),
        ("list_style", &dp["list_style"], of::<ListStyle>()),
        ("reveal", &dp["reveal"], of::<Reveal>()),
        ("retry", &dp["retry"]["items"], of::<RetryStep>()),
        (
            "event",
            &d["event"]["properties"]["event"],
            of::<EventKind>(),
        ),
        ("tokenizer", &p["tokenizer"], of::<Tokenizer>()),
        ("render", &p["render"], of::<Render>()),
        (
            "counter",
            &p["counter"],
            of::<crate::counter::CounterKind>(),
        ),
        (
            "tool_choice",
            &p["tool_choice"],
            of::<crate::counter::ToolChoice>(),
        ),
    ];
    for (what, e, names) in enums {
        let names = names.unwrap_or_else(|| panic!("{what}: not a derived enum"));
        assert_eq!(
            values(e),
            sorted(names),
            "{what}: schema.json vs the reader"
        );
    }
    let pp = &p["published"]["items"]["properties"];
    assert_eq!(
        values(&pp["metric"]),
        sorted(of::<super::published::Quantity>().unwrap())
    );
    assert_eq!(
        keys(&pp["variant"]),
        sorted(of::<super::published::Variant>().unwrap())
    );
    for side in ["eager_parts", "deferred_parts"] {
        assert_eq!(
            keys(&d[side.split('_').next_back().unwrap()]),
            sorted(of::<super::published::Stated>().unwrap()),
            "{side}"
        );
    }
    let models: Vec<String> = p["model"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, profile::names());
}

/// The schema test above would pass with both sides empty; this one proves it reads keys.
#[test]
fn the_schema_test_sees_a_key_missing_from_the_schema() {
    use super::scenario::RawTurn;
    let names = crate::names::of::<RawTurn>().unwrap();
    assert!(
        names.contains(&"repeat") && names.contains(&"subagent"),
        "{names:?}"
    );
}

#[test]
fn shipped_scenarios_load() {
    let all = shipped_scenarios();
    assert!(all.len() >= 8, "{all:?}");
    for path in all {
        let sc = load_scenario(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(!sc.catalogs.is_empty());
    }
}

/// Runs every shipped scenario over the project's fixtures (skipped when they are absent,
/// as in a branch without them). The test scorer stands in for the keyword scorer.
#[test]
fn shipped_scenarios_run_over_the_fixtures() {
    for path in shipped_scenarios() {
        let sc = load_scenario(&path).unwrap();
        if let Some(missing) = sc.catalogs.iter().find(|c| !c.path.exists()) {
            eprintln!(
                "skipping {}: fixture {} is absent",
                path.display(),
                missing.path.display()
            );
            continue;
        }
        let prep = prepare(&sc, counter_for(&sc, None), &word_builder).unwrap();
        let r = run(&sc, &prep).unwrap();
        assert!(
            r.eager.first_request_tokens > r.deferred.first_request_tokens,
            "{}",
            sc.name
        );
        assert_eq!(r.deferred.parts.total(), r.deferred.total_input_tokens);
    }
}

/// 1,000 conversations × 20 turns over a 500-tool catalog. Run with
/// `cargo test --release --lib simulate::tests::thousand -- --ignored --nocapture`.
#[test]
#[ignore = "a scale run of minutes; run it in release by hand"]
fn thousand_conversations_over_500_tools() {
    let v = crate::generate::ten_servers::ten_servers();
    let mut tools = Vec::new();
    for s in v["servers"].as_array().unwrap() {
        let server = s["name"].as_str().unwrap();
        for t in s["tools"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            let mut tool = tool(&crate::catalog::mcp_id(server, name), Some(server));
            tool.name = name.into();
            tool.description = t["description"].as_str().unwrap().into();
            tool.input_schema = t["input_schema"].clone();
            tools.push(tool);
        }
    }
    let catalog = Catalog::from_tools(tools).unwrap();
    let tokens = ToolTokens::compute(&catalog, Tokenizer::O200kBase, Render::Json);
    let ids: Vec<String> = catalog.tools().iter().map(|t| t.id.clone()).collect();
    let mut rng = replay::Rng::new(1);
    let mut scenarios = Vec::new();
    for c in 0..1000 {
        let mut y =
            format!("name: c{c}\nsystem_prompt_tokens: 2000\ncatalogs: [x.json]\nconversation:\n");
        for _ in 0..20 {
            y.push_str("  - user: please do the next step of the task\n");
            let n = rng.next_u64() % 3;
            if n > 0 {
                y.push_str("    calls:\n");
            }
            for _ in 0..n {
                let id = &ids[(rng.next_u64() % ids.len() as u64) as usize];
                let words = split_words(id.rsplit("__").next().unwrap()).join(" ");
                y.push_str(&format!(
                    "      - {{tool: {id}, query: \"{words}\", result_tokens: 200}}\n"
                ));
            }
        }
        scenarios.push(scenario(&y).unwrap());
    }
    let prep = prepare_with(&scenarios[0], catalog, tokens, &word_builder).unwrap();
    let start = std::time::Instant::now();
    let mut requests = 0;
    for sc in &scenarios {
        let r = run(sc, &prep).unwrap();
        requests += r.eager.requests + r.deferred.requests;
    }
    eprintln!(
        "1000 conversations x 20 turns over 500 tools: {:?}, {requests} requests",
        start.elapsed()
    );
}
