//! Bad scenarios: every error located at its `line:column`, saying what is wrong, where, and
//! what is allowed.

use super::*;

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
        // An unknown client profile: located at the value, listing every known name.
        (
            "catalogs: [a.json]\nclient: cursor\nconversation: [{user: hi}]\n",
            "test.yaml:2:9: client: unknown value `cursor`, expected one of `claude-code`, `claude-agent-sdk`, `anthropic-api`, `openai`, `codex`, `qwen-code`, `copilot-cli`, `openrouter`, `none`",
        ),
        (
            "catalogs: [a.json]\ndeferred: {when: \"over:many\"}\nconversation: [{user: hi}]\n",
            "test.yaml:2:18: deferred.when: expected \"over:N\" with N a whole number of tools",
        ),
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
            "test.yaml:2:18: deferred.when: expected \"always\", \"never\", \"over:N\"",
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
