//! Session logs as the agents really write them, each shape a fixture written for this project
//! (`scripts/make-session-fixtures.py`): records without ids or without a top-level type, a
//! refused tool use, Claude Code 1.0 tool names, resumed and forked sessions, warm-up subagents
//! and subagents on another model. Each test failed before the importer handled its shape.

use serde_json::Value;
use toolbudget::simulate::scenario::{Event, Item};

use super::session_import::{c, calls, entry, fixture, import, run, scenario, turns};

fn import_default(paths: &[String], extra: &[&str]) -> (Value, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["session".to_string(), "import".to_string()];
    args.extend(paths.iter().cloned());
    args.extend(
        ["--out", dir.path().to_str().unwrap(), "--format", "json"]
            .iter()
            .map(ToString::to_string),
    );
    args.extend(extra.iter().map(ToString::to_string));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = run(&a);
    assert_eq!(code, Some(0), "{stderr}");
    (serde_json::from_str(&stdout).unwrap(), dir, stderr)
}

#[test]
fn responses_without_message_ids_or_uuids_stay_apart() {
    let name = "a1c2e3f4-0b1d-4e2f-8a3b-4c5d6e7f8091";
    let (v, dir, _) = import(&[fixture("claude/nokeys")], &[]);
    let e = entry(&v, name);
    // Three responses, none with an id to share: three requests, not one merged.
    assert_eq!(e["requests"], 3, "{e}");
    assert_eq!(e["billed_input_tokens"], 13903 + 13944 + 13974);
    assert_eq!(e["unpaired_requests"], 0);
    let sc = scenario(dir.path(), name);
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 2);
    assert_eq!(ts[0].calls.len(), 1);
    assert_eq!(
        ts[1].reply_tokens,
        Some(c("Yes: poetry.lock was regenerated with the same pins."))
    );
}

#[test]
fn records_without_a_type_are_read_by_their_message_role_and_named() {
    let name = "b2d3f4a5-1c2e-4f3a-9b4c-5d6e7f809102";
    let (v, _, stderr) = import(&[fixture("claude/untyped")], &[]);
    let e = entry(&v, name);
    assert_eq!(
        (e["requests"].as_u64(), e["tool_calls"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(e["untyped_records"]["assistant"], 2, "{e}");
    assert_eq!(e["untyped_records"]["user"], 1, "{e}");
    // A record with neither a type nor a message is ignored, and counted.
    assert_eq!(e["ignored_records"]["(no type)"], 1, "{e}");
    assert!(
        stderr.contains(
            "3 records without a top-level type read by their message's role (assistant 2, user 1)"
        ),
        "{stderr}"
    );
}

#[test]
fn the_prompt_after_a_refused_tool_use_opens_its_own_turn() {
    let name = "c3e4a5b6-2d3f-4a4b-8c5d-6e7f80910213";
    let (v, dir, _) = import(&[fixture("claude/interrupted")], &[]);
    let e = entry(&v, name);
    assert_eq!(e["requests"], 4);
    assert_eq!(e["turns"], 3, "{e}");
    // The interrupted turn's one request pairs with the replay's first (the replay also
    // sends the reply the user cut off).
    assert_eq!(e["unpaired_requests"], 0, "{e}");
    let sc = scenario(dir.path(), name);
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 3);
    assert_eq!(ts[0].tokens, Some(c("Run the test suite.")));
    assert_eq!(ts[0].calls.len(), 1);
    // The marker and the new prompt open the second turn (the model reads both).
    assert_eq!(
        ts[1].tokens,
        Some(super::session_import::joined(
            toolbudget::counter::CounterKind::AnthropicEstimate,
            &[
                "[Request interrupted by user for tool use]",
                "Use the make target instead, it sets the database URL."
            ]
        ))
    );
    assert_eq!(calls(ts[1])[0].0, "Bash");
    assert_eq!(ts[2].tokens, Some(c("Thanks. Which one is slowest?")));
}

#[test]
fn a_claude_code_1_0_log_pairs_its_built_in_calls_with_the_tools_its_version_sent() {
    let name = "d4f5b6c7-3e4a-4b5c-9d6e-7f8091021324";
    // No --catalog: the shipped built-ins of the version the log names (1.0.98), which sent
    // the tool as KillBash (2.0 renamed it KillShell).
    let (v, dir, stderr) = import_default(&[fixture("claude/v1")], &[]);
    let e = entry(&v, name);
    assert_eq!(e["tool_calls"], 3);
    assert!(e["unknown_tools"].as_object().unwrap().is_empty(), "{e}");
    assert_eq!(e["unpaired_requests"], 0, "{stderr}");
    let sc = scenario(dir.path(), name);
    let tools: Vec<String> = turns(&sc.conversation)[0]
        .calls
        .iter()
        .map(|c| c.tool.id.clone())
        .collect();
    assert_eq!(tools, ["Bash", "BashOutput", "KillBash"]);
    let text = std::fs::read_to_string(dir.path().join(format!("{name}.yaml"))).unwrap();
    assert!(
        text.contains("- path: builtin:claude-code@1.0.98\n"),
        "{text}"
    );
    // The summary says which built-ins each session was given, and from where.
    assert!(
        stderr.contains(
            "note: Claude Code built-ins: the tools of the version each log names (1.0.14 to \
             2.1.4, from https://github.com/marckrenn/cc-mvp-prompts, 2026-01-11), every tool \
             any version had for a later version or none: builtin:claude-code@1.0.98 (1 session)"
        ),
        "{stderr}"
    );
}

/// A built-in the session called that its version's listed set lacks (the lists come from
/// one machine's dumps) was sent too: the reference names it after the version.
#[test]
fn a_built_in_called_beyond_the_version_s_listed_set_is_added_to_it() {
    let name = "d4f5b6c7-3e4a-4b5c-9d6e-7f8091021324";
    let src = std::fs::read_dir(fixture("claude/v1"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let logs = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(&src)
            .unwrap()
            .replacen("\"name\":\"Bash\"", "\"name\":\"LS\"", 1);
    std::fs::write(logs.path().join(src.file_name().unwrap()), text).unwrap();
    let (v, dir, _) = import_default(&[logs.path().to_str().unwrap().to_string()], &[]);
    let e = entry(&v, name);
    assert!(e["unknown_tools"].as_object().unwrap().is_empty(), "{e}");
    let text = std::fs::read_to_string(dir.path().join(format!("{name}.yaml"))).unwrap();
    assert!(
        text.contains("- path: builtin:claude-code@1.0.98+LS\n"),
        "{text}"
    );
}

const FIRST: &str = "e5a6c7d8-4f5b-4c6d-8e7f-809102132435";
const SECOND: &str = "f6b7d8e9-5a6c-4d7e-9f80-910213243546";

#[test]
fn a_resumed_session_bills_and_counts_only_its_own_requests_and_links_its_own_subagent() {
    let (v, dir, _) = import(&[fixture("claude/resumed")], &[]);
    assert_eq!(v["sessions"].as_array().unwrap().len(), 2, "{v}");
    let a = entry(&v, FIRST);
    assert_eq!(
        (a["requests"].as_u64(), a["tool_calls"].as_u64()),
        (Some(3), Some(2)),
        "{a}"
    );
    assert_eq!(a["subagents"], 0, "{a}");
    let b = entry(&v, SECOND);
    // Its own two requests and its subagent's two; the copied history's three requests and two
    // calls belong to the first session.
    assert_eq!(
        (b["requests"].as_u64(), b["tool_calls"].as_u64()),
        (Some(4), Some(2)),
        "{b}"
    );
    assert_eq!(
        (b["files"].as_u64(), b["subagents"].as_u64()),
        (Some(2), Some(1)),
        "{b}"
    );
    assert_eq!(b["unlinked_subagents"], 0, "{b}");
    assert_eq!(b["unpaired_requests"], 0, "{b}");
    assert_eq!(b["copied_requests"], 3, "{b}");
    assert_eq!(
        v["totals"]["requests"].as_u64(),
        Some(7),
        "each billed request once over both files"
    );
    // The second scenario starts from the copied history as context, on a cold cache.
    let sc = scenario(dir.path(), SECOND);
    assert!(
        matches!(sc.conversation[0], Item::Event(Event::Compact { summary_tokens, .. }) if summary_tokens > 0),
        "{:?}",
        sc.conversation[0]
    );
    assert!(matches!(
        sc.conversation[1],
        Item::Event(Event::Resume { .. })
    ));
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].calls[0].tool.id, "Task");
    assert!(ts[0].calls[0].subagent.is_some(), "linked by its folder");
}

#[test]
fn a_forked_session_skips_the_history_it_copied() {
    let orig = "a7c8e9f0-6b7d-4e8f-8091-021324354657";
    let fork = "b8d9f0a1-7c8e-4f90-9102-132435465768";
    let (v, _, _) = import(&[fixture("claude/forked")], &[]);
    let a = entry(&v, orig);
    assert_eq!(
        (a["requests"].as_u64(), a["tool_calls"].as_u64()),
        (Some(4), Some(2)),
        "{a}"
    );
    let f = entry(&v, fork);
    assert_eq!(
        (f["requests"].as_u64(), f["tool_calls"].as_u64()),
        (Some(2), Some(1)),
        "{f}"
    );
    assert_eq!(f["copied_requests"], 2, "{f}");
    assert_eq!(f["unpaired_requests"], 0, "{f}");
}

#[test]
fn warm_up_subagents_are_named_and_every_subagent_is_priced_at_its_own_model() {
    let name = "c9e0a1b2-8d9f-4a01-a213-243546576879";
    let (v, dir, stderr) = import(&[fixture("claude/warmup")], &[]);
    let e = entry(&v, name);
    assert_eq!(
        (e["subagents"].as_u64(), e["warmup_agents"].as_u64()),
        (Some(2), Some(1)),
        "{e}"
    );
    assert_eq!(e["unlinked_subagents"], 0, "{e}");
    assert_eq!(e["unpaired_requests"], 0, "{e}");
    assert_eq!(e["requests"], 5);
    assert_eq!(
        e["models"]["us.anthropic.claude-haiku-4-5-20251001-v1:0"],
        "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    );
    assert!(stderr.contains("1 warm-up subagent"), "{stderr}");
    // The bill priced request by request at each request's own model.
    let p = |n: &str| toolbudget::simulate::profile::find(n).unwrap();
    // Each at its logged id's prices: the Bedrock regional id is not Haiku's first-party price.
    let (sonnet, haiku) = (
        p("claude-sonnet-4-5-20250929"),
        p("us.anthropic.claude-haiku-4-5-20251001-v1:0"),
    );
    assert!(haiku.input_per_mtok > p("claude-haiku-4.5").input_per_mtok);
    let cost = |pr: &toolbudget::simulate::profile::Profile, u: [u64; 4]| {
        (u[0] as f64 * pr.input_per_mtok
            + u[1] as f64 * pr.cache_write_per_mtok
            + u[2] as f64 * pr.cache_read_per_mtok
            + u[3] as f64 * pr.output_per_mtok)
            / 1e6
    };
    let want = cost(&sonnet, [3, 15100, 0, 40])
        + cost(&sonnet, [4, 70, 15100, 14])
        + cost(&haiku, [6, 5200, 0, 3])
        + cost(&haiku, [3, 6300, 0, 22])
        + cost(&haiku, [4, 40, 6300, 11]);
    let got = e["billed_cost_usd"].as_f64().unwrap();
    assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    // The replayed subagent is priced as Haiku too: below the same replay at Sonnet's prices,
    // which is what `simulate` alone gives (one profile per scenario).
    let (code, out, err) = run(&[
        "simulate",
        dir.path().join(format!("{name}.yaml")).to_str().unwrap(),
        "--calibration",
        dir.path().join("calibration.json").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    let sim: Value = serde_json::from_str(&out).unwrap();
    let all_sonnet = sim["scenarios"][0]["eager"]["cost_usd"]["without_caching"]
        .as_f64()
        .unwrap();
    let priced = e["eager"]["cost_usd"].as_f64().unwrap();
    assert!(
        priced > 0.0 && priced < all_sonnet,
        "{priced} vs {all_sonnet}"
    );
    assert_eq!(
        e["eager"]["input_tokens"],
        sim["scenarios"][0]["eager"]["total_input_tokens"]
    );
}

fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[test]
fn with_no_path_the_agents_own_folders_are_read_and_narrowed_by_date_and_project() {
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join("cfg");
    let project = claude.join("projects/-home-dev-shop");
    copy_tree(
        &crate::support::repo("fixtures/sessions/claude/plain"),
        &project,
    );
    copy_tree(
        &crate::support::repo("fixtures/sessions/claude/forked"),
        &project,
    );
    let codex = home.path().join("codex");
    copy_tree(
        &crate::support::repo("fixtures/sessions/codex/2025"),
        &codex.join("sessions/2025"),
    );
    let go = |extra: &[&str]| {
        let out = crate::support::toolbudget()
            .args([
                "session",
                "import",
                "--format",
                "json",
                "--allow-unknown-tools",
            ])
            .args(extra)
            .env("CLAUDE_CONFIG_DIR", &claude)
            .env("CODEX_HOME", &codex)
            .env("HOME", home.path().join("nobody"))
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let names = |stdout: &str| -> Vec<String> {
        let v: Value = serde_json::from_str(stdout).unwrap();
        v["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let f = e["file"].as_str().unwrap();
                f.rsplit('/').next().unwrap()[..8].to_string()
            })
            .collect()
    };
    let (code, out, err) = go(&[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("reading sessions from"), "{err}");
    assert_eq!(
        names(&out),
        ["7f3c1e2a", "a7c8e9f0", "b8d9f0a1", "rollout-"]
    );
    // Dates: the plain session ran on 2025-11-02, the Codex one on 11-03, the fork pair 11-05.
    let (code, out, err) = go(&["--since", "2025-11-03", "--until", "20251104"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(names(&out), ["rollout-"]);
    assert!(
        err.contains("3 sessions left out by --since/--until/--project"),
        "{err}"
    );
    // The Claude Code project folder's name, or the working directory's last component.
    let (_, out, _) = go(&["--project=-home-dev-shop"]);
    assert_eq!(names(&out).len(), 3);
    let (_, out, _) = go(&["--project", "shop"]);
    assert_eq!(names(&out).len(), 4);
    let (code, _, err) = go(&["--project", "elsewhere"]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("no session matches the filters (4 left out"),
        "{err}"
    );
    let (code, _, err) = go(&["--since", "last week"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("invalid date \"last week\""), "{err}");
}
