//! Codex rollouts as Codex CLI 0.125+ and Codex Desktop write them (fixtures written for this
//! project in `fixtures/sessions/codex/`): built-in tools found in the shipped Codex catalog,
//! namespaced MCP calls, the logged system prompt and context, prompts written only as events,
//! the session's own tools, Codex's tool search, compaction, and a calibration too small to
//! apply.

use serde_json::Value;
use toolbudget::counter::CounterKind;
use toolbudget::session::count_text;
use toolbudget::simulate::scenario::{Event, Item};

use super::session_import::{calls, entry, fixture, run, scenario, turns};

const CLI: &str = "019b2c3d-4e5f-7a6b-8c7d-9e0f1a2b3c4d";
const DESKTOP: &str = "019b3d4e-5f60-7b7c-8d9e-0f1a2b3c4d5e";
const C: CounterKind = CounterKind::OpenaiResponses;

fn import(paths: &[&str]) -> (Value, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec!["session".into(), "import".into()];
    args.extend(paths.iter().map(|p| fixture(p)));
    for c in [
        format!(
            "tracker={}",
            crate::support::repo("fixtures/catalogs/mcp/tracker.json").display()
        ),
        format!("node_repl={}", fixture("codex-node-repl.json")),
    ] {
        args.push("--catalog".into());
        args.push(c);
    }
    args.extend(["--out".into(), dir.path().display().to_string()]);
    args.extend(["--format".into(), "json".into()]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = run(&a);
    assert_eq!(code, Some(0), "{stderr}");
    (serde_json::from_str(&stdout).unwrap(), dir, stderr)
}

/// o200k counts of texts, summed (the import counts each and the counter maps the sum).
fn o200k(texts: &[&str]) -> usize {
    texts.iter().map(|t| count_text(t)).sum()
}

#[test]
fn a_current_codex_cli_rollout_imports_with_its_calls_paired_and_its_prompt_and_mcp_tools_named() {
    let (v, dir, stderr) = import(&["codex/2026"]);
    let e = entry(&v, CLI);
    assert_eq!(e["format"], "codex");
    assert_eq!(e["ran_as"], "deferred", "it used Codex's tool search");
    assert_eq!(e["requests"], 8);
    assert_eq!(e["billed_input_tokens"], 55550);
    // exec_command, the MCP js call, apply_patch + update_plan, tool search, create_issue; the
    // provider-run web search is part of the answer, not a call.
    assert_eq!(e["tool_calls"], 6);
    assert!(e["unknown_tools"].as_object().unwrap().is_empty(), "{e}");
    assert_eq!(e["unpaired_requests"], 0, "{e}");
    assert_eq!(e["turns"], 3);
    // The system prompt: base_instructions, then the developer, AGENTS.md and environment
    // messages before the first prompt.
    let system = o200k(&[
        "You are a coding agent working in the user's terminal. Read the code before changing it, keep edits small, run the tests you touch, and say plainly what you changed and what you did not check.",
        "<permissions instructions>\nCommands run in a sandbox that can write inside the workspace only. Ask before anything that needs the network.\n</permissions instructions>",
        "# AGENTS.md instructions for /home/dev/shop\n\n<INSTRUCTIONS>\nRun `make test` before committing. Money amounts are integers in cents.\n</INSTRUCTIONS>",
        "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n  <shell>bash</shell>\n</environment_context>",
    ]);
    assert_eq!(e["logged_system_prompt_tokens"], C.text_from_count(system));
    // A non-empty counterfactual: both modes replayed, and they differ.
    let (eager, deferred) = (
        e["eager"]["input_tokens"].as_u64().unwrap(),
        e["deferred"]["input_tokens"].as_u64().unwrap(),
    );
    assert!(eager > 0 && deferred > 0 && eager != deferred, "{e}");
    assert_eq!(e["deferred"]["searches"], 1);
    // Eight requests: a fit is made, but it cannot do better than none: not applied, said so.
    let cal = &v["calibrations"][0];
    assert_eq!(cal["applied"], false, "{cal}");
    assert!(
        stderr.contains("calibration gpt-5.2-codex (openai-responses): not applied"),
        "{stderr}"
    );
    assert!(
        stderr.contains("fewer than the 20 a fit is trusted on"),
        "{stderr}"
    );
    let sc = scenario(dir.path(), CLI);
    assert_eq!(sc.counter, Some(C));
    // Not calibrated: the scenario keeps the logged system prompt.
    assert_eq!(sc.system_prompt_tokens, Some(C.text_from_count(system)));
    assert_eq!(
        sc.deferred
            .always_load
            .iter()
            .map(|t| t.id.as_str())
            .collect::<Vec<_>>(),
        ["mcp__node_repl__js"],
        "called without a search: loaded from the start in that session"
    );
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 3);
    assert_eq!(
        ts[0].tokens,
        Some(count_text("The coupon total is wrong; find it and fix it."))
    );
    let tools: Vec<String> = calls(ts[0]).into_iter().map(|c| c.0).collect();
    assert_eq!(
        tools,
        [
            "exec_command",
            "mcp__node_repl__js",
            "apply_patch",
            "update_plan"
        ]
    );
    assert!(ts[0].calls[3].parallel);
    assert!(
        ts[1].calls.is_empty(),
        "the web search ran inside the answer"
    );
    assert!(matches!(
        sc.conversation[2],
        Item::Event(Event::Compact { summary_tokens, .. }) if summary_tokens == o200k(&[
            "Summary: the coupon order was fixed in src/cart.py (percentage first, then the fixed amount).",
            "The coupon total is wrong; find it and fix it."
        ])
    ));
    let search = &ts[2].calls[0];
    assert_eq!(search.tool.id, "ToolSearch");
    assert_eq!(search.query.as_deref(), Some("tracker create issue"));
    let loads: Vec<&str> = search
        .loads
        .as_ref()
        .unwrap()
        .iter()
        .map(|r| r.id.as_str())
        .collect();
    assert_eq!(
        loads,
        ["mcp__tracker__create_issue", "mcp__tracker__search_issues"]
    );
    assert_eq!(ts[2].calls[1].tool.id, "mcp__tracker__create_issue");
}

#[test]
fn a_codex_desktop_rollout_keeps_its_event_prompts_and_its_own_tools() {
    let (v, dir, _) = import(&["codex/desktop"]);
    let e = entry(&v, DESKTOP);
    assert_eq!(e["requests"], 5);
    assert_eq!(e["tool_calls"], 3);
    // Three prompts, each written only as an event_msg; the second turn was stopped.
    assert_eq!(e["turns"], 3, "{e}");
    assert_eq!(e["unpaired_requests"], 0, "{e}");
    assert!(e["unknown_tools"].as_object().unwrap().is_empty(), "{e}");
    let sc = scenario(dir.path(), DESKTOP);
    let ts = turns(&sc.conversation);
    assert_eq!(
        ts[0].tokens,
        Some(count_text("Show me where refunds are computed."))
    );
    assert_eq!(ts[1].tokens, Some(count_text("Now run the refund tests.")));
    assert_eq!(
        ts[2].tokens,
        Some(count_text("Only the fast ones, please."))
    );
    assert_eq!(ts[0].calls[1].tool.id, "codex_app__open_in_editor");
    // The session's own tool is a catalog beside the scenario, which `simulate` loads.
    let own = dir.path().join(format!("{DESKTOP}.tools.json"));
    assert!(own.is_file());
    assert!(
        sc.catalogs.iter().any(|c| c.path == own),
        "{:?}",
        sc.catalogs
    );
    let (code, _, stderr) = run(&[
        "simulate",
        dir.path().join(format!("{DESKTOP}.yaml")).to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        e["logged_system_prompt_tokens"],
        o200k(&[
            "You are a coding agent inside a desktop app. Prefer showing the user files in the editor over pasting them.",
            "<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>",
        ])
    );
}
