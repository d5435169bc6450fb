//! Client profiles: `client:` parsing and precedence, `with_client`, and each profile's policy
//! showing in a replay (the expected numbers computed from the same scenario under another
//! setting, never written down).

use super::client::{ClientName, profile};
use super::scenario::{DeferredSettings, Listing, When};
use super::*;

fn replay(sc: &Scenario) -> (Prepared, ScenarioResult) {
    let (c, t) = worked_catalog();
    let prep = prepare_with(sc, c, t, &word_builder).unwrap();
    let r = run(sc, &prep).unwrap();
    (prep, r)
}

/// The worked example without the fixed sizes of the search tool and list, so that the
/// listing and the search tool are counted.
fn counted() -> String {
    WORKED
        .replace("  search_tool: 80\n", "")
        .replace("  deferred_list: 20\n", "")
}

#[test]
fn client_fills_the_keys_the_scenario_does_not_write() {
    let sc = scenario(&counted().replace("name: worked", "name: worked\nclient: codex")).unwrap();
    assert_eq!(sc.client, Some(ClientName::Codex));
    assert_eq!(sc.deferred.listing, Listing::Servers);
    assert_eq!(
        sc.deferred.scorer,
        profile(ClientName::Codex).settings().scorer
    );
    // The scenario's own key wins over the profile's.
    let sc = scenario(
        &counted()
            .replace("name: worked", "name: worked\nclient: codex")
            .replace("  defer_mcp: true", "  defer_mcp: true\n  listing: names"),
    )
    .unwrap();
    assert_eq!(sc.deferred.listing, Listing::Names);
    // Without a client, toolbudget's defaults.
    let sc = scenario(&counted()).unwrap();
    assert_eq!(sc.client, None);
    assert_eq!(sc.deferred, DeferredSettings::default());
}

#[test]
fn with_client_keeps_the_tools_keys_and_takes_the_profiles_policy() {
    let yaml = counted().replace(
        "  defer_mcp: true",
        "  defer_mcp: true\n  listing: descriptions\n  always_load: [mcp__gh__list_issues]",
    );
    let sc = scenario(&yaml).unwrap();
    let qwen = sc.with_client(ClientName::QwenCode);
    assert_eq!(qwen.client, Some(ClientName::QwenCode));
    // The policy is the profile's (the scenario's listing is dropped) ...
    assert_eq!(
        qwen.deferred.listing,
        profile(ClientName::QwenCode).listing.value
    );
    assert!(qwen.deferred.call_bridge);
    // ... the user's own tools configuration is kept.
    assert_eq!(qwen.deferred.always_load, sc.deferred.always_load);
    assert_eq!(qwen.explicit, sc.explicit);
}

#[test]
fn client_none_sends_what_eager_sends() {
    let sc = scenario(&counted()).unwrap().with_client(ClientName::None);
    let (_, r) = replay(&sc);
    assert_eq!(r.deferred.total_input_tokens, r.eager.total_input_tokens);
    assert_eq!(r.deferred.counts.searches, 0);
    assert_eq!(r.deferred_count, 0);
    // The same scenario under a deferring client does defer.
    let (_, r) = replay(
        &scenario(&counted())
            .unwrap()
            .with_client(ClientName::ClaudeCode),
    );
    assert!(r.deferred.first_request_tokens < r.eager.first_request_tokens);
}

#[test]
fn copilot_defers_only_above_its_tool_count() {
    let base = scenario(&counted()).unwrap();
    let copilot = base.with_client(ClientName::CopilotCli);
    assert_eq!(copilot.deferred.when, When::Over(30));
    // Three tools, below 30: Copilot CLI loads everything.
    let (prep, r) = replay(&copilot);
    assert!(prep.catalog.len() <= 30);
    assert_eq!(
        r.deferred.first_request_tokens,
        r.eager.first_request_tokens
    );
    // The same policy with the threshold under the catalog's size defers.
    let mut low = copilot.clone();
    low.deferred.when = When::Over(prep.catalog.len() - 1);
    let (_, r) = replay(&low);
    assert!(r.deferred.first_request_tokens < r.eager.first_request_tokens);
    assert_eq!(r.deferred.counts.searches, 1);
}

#[test]
fn agent_sdk_drops_loaded_tools_at_compaction_where_claude_code_keeps_them() {
    let yaml = format!(
        "{}  - event: compact\n    summary_tokens: 100\n  - user: again\n    tokens: 5\n    calls: [{{tool: mcp__gh__create_issue, query: \"gh issue\", result_tokens: 40}}]\n",
        counted()
    );
    let sc = scenario(&yaml).unwrap();
    let (_, code) = replay(&sc.with_client(ClientName::ClaudeCode));
    let (_, sdk) = replay(&sc.with_client(ClientName::ClaudeAgentSdk));
    assert_eq!(code.deferred.counts.searches, 1);
    assert_eq!(sdk.deferred.counts.searches, 2);
    // An explicit keep_discovered on the event still decides.
    let (_, kept) = replay(
        &scenario(&yaml.replace(
            "summary_tokens: 100\n",
            "summary_tokens: 100\n    keep_discovered: true\n",
        ))
        .unwrap()
        .with_client(ClientName::ClaudeAgentSdk),
    );
    assert_eq!(kept.deferred.counts.searches, 1);
}

#[test]
fn qwen_codes_bridge_costs_a_tool_call_definition_and_never_rewrites_the_tools_list() {
    let sc = scenario(&counted()).unwrap();
    let (code, _) = replay(&sc.with_client(ClientName::ClaudeCode));
    let qwen_sc = sc.with_client(ClientName::QwenCode);
    let (qwen, r) = replay(&qwen_sc);
    assert_eq!(
        qwen.search_tool_tokens,
        code.search_tool_tokens + code.counter.tool(&call_bridge_tool())
    );
    assert_eq!(qwen.search_tool_name, "tool_search");
    assert!(qwen.search_tool_source.to_string().ends_with("+ tool_call"));
    assert_eq!(r.deferred.cache_invalidations.requests, 0);
    // reveal: tools-list alone rewrites the tools list; the bridge overrides it.
    let mut listed = qwen_sc.clone();
    listed.deferred.reveal = super::scenario::Reveal::ToolsList;
    listed.deferred.call_bridge = false;
    let (_, r) = replay(&listed);
    assert!(r.deferred.cache_invalidations.requests > 0);
    listed.deferred.call_bridge = true;
    let (_, r) = replay(&listed);
    assert_eq!(r.deferred.cache_invalidations.requests, 0);
}

#[test]
fn listings_follow_the_profile() {
    let sc = scenario(&counted()).unwrap();
    let first_list = |c: ClientName| {
        let (prep, r) = replay(&sc.with_client(c));
        (prep, r.deferred.first_request_deferred_list_tokens)
    };
    // Anthropic's API and OpenRouter list nothing: the search tool stands for the tools.
    assert_eq!(first_list(ClientName::AnthropicApi).1, 0);
    assert_eq!(first_list(ClientName::Openrouter).1, 0);
    // Codex lists one line per server, Claude Code one name a line, OpenAI a stub a function.
    let deferred = [1, 2];
    let (prep, codex) = first_list(ClientName::Codex);
    assert_eq!(
        codex,
        prep.count_text(&listing::full_text(
            &prep.catalog,
            &deferred,
            Listing::Servers
        ))
    );
    let (prep, names) = first_list(ClientName::ClaudeCode);
    assert_eq!(
        names,
        prep.count_text(&listing::full_text(
            &prep.catalog,
            &deferred,
            Listing::Names
        ))
    );
    let (prep, stubs) = first_list(ClientName::Openai);
    // OpenAI defers every tool its caller marks: Read too.
    let all: usize = (0..prep.catalog.len())
        .map(|i| {
            let t = prep.catalog.get(i);
            prep.counter.surface(&t.id, &t.description)
        })
        .sum();
    assert_eq!(stubs, all);
}
