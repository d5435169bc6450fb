//! Replays of tiny scenarios whose totals are computed by hand: parts, cache, discovery,
//! retries, events, subagents, latency, the window; properties and the work budget.

use super::*;

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

/// Tool over server over client default: each level decides only where the one above is silent.
#[test]
fn deferral_precedence_is_tool_then_server_then_client_default() {
    let deferred_ids = |tools: Vec<Tool>, server: ServerFlags, yaml: &str| {
        let mut c = Catalog::from_tools(tools).unwrap();
        let info = crate::catalog::ServerInfo {
            name: "gh".into(),
            description: None,
            flags: server,
        };
        c.set_server_info(&std::collections::HashMap::from([("gh".to_string(), info)]));
        let t = ToolTokens::from_counts(Tokenizer::O200kBase, Render::Json, vec![100, 200, 150]);
        let sc = scenario(yaml).unwrap();
        let prep = prepare_with(&sc, c, t, &word_builder).unwrap();
        (0..prep.catalog.len())
            .filter(|&i| prep.plan.deferrable[i])
            .map(|i| prep.catalog.get(i).id.clone())
            .collect::<Vec<_>>()
    };
    let base = || worked_catalog().0.tools().to_vec();
    // Client default: MCP deferred, built-ins not.
    assert_eq!(
        deferred_ids(base(), ServerFlags::default(), WORKED),
        ["mcp__gh__create_issue", "mcp__gh__list_issues"]
    );
    // Server says keep loaded; one tool says defer (tool wins over server).
    let mut tools = base();
    tools[2].should_defer = Some(true);
    let keep = ServerFlags {
        always_load: true,
        ..ServerFlags::default()
    };
    assert_eq!(deferred_ids(tools, keep, WORKED), ["mcp__gh__list_issues"]);
    // Server says defer while the client default does not (server wins over client).
    let no_mcp = WORKED.replace("  defer_mcp: true", "  defer_mcp: false");
    let defer = ServerFlags {
        should_defer: Some(true),
        ..ServerFlags::default()
    };
    assert_eq!(
        deferred_ids(base(), defer.clone(), &no_mcp),
        ["mcp__gh__create_issue", "mcp__gh__list_issues"]
    );
    // An MCP `_meta` alwaysLoad tool stays loaded under a deferring server; a built-in with
    // its own `defer_loading: true` is deferred although built-ins default to loaded.
    let mut tools = base();
    tools[1].always_load = true;
    tools[0].should_defer = Some(true);
    assert_eq!(
        deferred_ids(tools, defer, WORKED),
        ["Read", "mcp__gh__list_issues"]
    );
    // The scenario's own per-tool list is the tool level too, above the server.
    let listed = WORKED.replace(
        "  defer_mcp: true",
        "  always_load: [mcp__gh__create_issue]",
    );
    assert_eq!(
        deferred_ids(base(), ServerFlags::default(), &listed),
        ["mcp__gh__list_issues"]
    );
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
    let row = &crate::view::simulate::scenario_rows(std::slice::from_ref(&r))[0];
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
                && e.contains("expands to at least 9,006,000 requests")
                && e.contains("over the budget of 500,000 requests of one run"),
            "{e}"
        );
    }

    /// A scenario whose every call misses and retries: the most searches a replay can do.
    const RETRYING: &str = "name: r\ncatalogs: [x.json]\ndeferred: {defer_mcp: true, retry: [rephrase, select]}\nconversation:\n  - user: go\n    repeat: 7\n    calls:\n      - {tool: mcp__gh__create_issue, query: zzz, result_tokens: 5}\n      - {tool: mcp__gh__list_issues, query: yyy, result_tokens: 5}\n";

    #[test]
    fn search_work_bounds_the_searches_a_replay_does() {
        let sc = scenario(RETRYING).unwrap();
        let (c, t) = worked_catalog();
        let tools = c.len();
        let prep = prepare_with(&sc, c, t, &word_builder).unwrap();
        let r = run(&sc, &prep).unwrap();
        let searched = (r.deferred.counts.searches + r.deferred.counts.retries) as u64;
        assert!(searched > 0);
        assert!(searched * tools as u64 <= sc.search_work(tools));
        // 7 turns of 1 request and 2 calls, each a search and 2 retries at most, 3 tools.
        assert_eq!(sc.search_work(tools), 7 * 3 * 3 * 3);
    }

    #[test]
    fn a_run_over_the_search_budget_is_refused_before_the_replay() {
        let sc = scenario(RETRYING).unwrap();
        let (c, t) = worked_catalog();
        let prep = prepare_with(&sc, c, t, &word_builder).unwrap();
        let work = sc.search_work(prep.catalog.len());
        let mut budget = crate::budget::Budget::with_search_limit(2 * work - 1);
        crate::simulate::charge_searches(&sc, &prep, &mut budget).unwrap();
        let e = crate::simulate::charge_searches(&sc, &prep, &mut budget)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("test.yaml: its replays may search 3 tools up to 63 times (189 query")
                && e.contains("bring the run's search work to 378 query × tool pairs")
                && e.contains("over the budget of 377 of one run"),
            "{e}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn refused_exactly_above_the_budget(outer in 1u64..2000, inner in 1u64..2000, calls in 0usize..3) {
            let work = outer * (2 + inner * (1 + calls as u64));
            let parsed = scenario(&nested(outer, inner, calls));
            prop_assert_eq!(parsed.is_ok(), work <= crate::budget::MAX_REQUESTS, "work {}", work);
            if work <= 20_000 {
                let (c, t) = worked_catalog();
                let r = run_yaml(&nested(outer, inner, calls), c, t);
                prop_assert_eq!(r.eager.requests as u64, work);
            }
        }
    }
}
