//! `session import` over the project's own session fixtures (`fixtures/sessions/`): each
//! fixture's scenario checked turn by turn after a round trip through the scenario loader,
//! the summary's interface, and damaged or incomplete input.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use toolbudget::counter::CounterKind;
use toolbudget::session::claude::{
    render_call, render_call_block, render_reference, render_result_frame,
};
use toolbudget::simulate::scenario::{Event, Item, Turn};
use toolbudget::simulate::{Scenario, load_scenario};
use toolbudget::tokenize::Tokenizer;

/// Claude sessions run on claude-* profiles: their sizes are anthropic-estimate counts.
const CLAUDE: CounterKind = CounterKind::AnthropicEstimate;
/// Codex sessions run on gpt-5: openai-responses.
const CODEX: CounterKind = CounterKind::OpenaiResponses;

pub(crate) fn c(s: &str) -> usize {
    CLAUDE.text(s)
}

/// A logged call's size: its `tool_use` block, id included.
pub(crate) fn call(id: &str, name: &str, input: &str) -> usize {
    c(&render_call_block(id, name, input))
}

/// A logged result's size: its text and its `tool_result` frame, the call's id included.
pub(crate) fn result(id: &str, text: &str) -> usize {
    joined(CLAUDE, &[text, &render_result_frame(id)])
}

/// A size recorded for several texts together (a request's text with its first call, the
/// references of one search result): the counter's count of their o200k counts summed.
pub(crate) fn joined(counter: CounterKind, texts: &[&str]) -> usize {
    counter.text_from_count(texts.iter().map(|t| Tokenizer::O200kBase.count(t)).sum())
}

pub(crate) fn fixture(rel: &str) -> String {
    crate::support::repo("fixtures/sessions")
        .join(rel)
        .display()
        .to_string()
}

pub(crate) fn catalog(rel: &str) -> String {
    crate::support::repo("fixtures/catalogs")
        .join(rel)
        .display()
        .to_string()
}

/// Runs `session import` into a fresh folder; returns the parsed json summary, the folder
/// and stderr.
pub(crate) fn import(paths: &[String], extra: &[&str]) -> (Value, tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("toolbudget")
        .unwrap()
        .args(["session", "import"])
        .args(paths)
        .args(["--catalog", &catalog("builtins.yaml")])
        .args([
            "--catalog",
            &format!("tracker={}", catalog("mcp/tracker.json")),
        ])
        .args(["--out", dir.path().to_str().unwrap(), "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (v, dir, stderr)
}

pub(crate) fn scenario(dir: &Path, name: &str) -> Scenario {
    load_scenario(&dir.join(format!("{name}.yaml"))).unwrap_or_else(|e| panic!("{e}"))
}

pub(crate) fn turns(items: &[Item]) -> Vec<&Turn> {
    items
        .iter()
        .filter_map(|i| match i {
            Item::Turn(t) => Some(&**t),
            Item::Event(_) => None,
        })
        .collect()
}

/// (tool, call tokens, result tokens, parallel) of a turn's calls.
pub(crate) fn calls(t: &Turn) -> Vec<(String, usize, usize, bool)> {
    t.calls
        .iter()
        .map(|c| {
            (
                c.tool.id.clone(),
                c.call_tokens.unwrap(),
                c.result_tokens.unwrap(),
                c.parallel,
            )
        })
        .collect()
}

pub(crate) fn entry<'a>(v: &'a Value, stem: &str) -> &'a Value {
    v["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"].as_str().unwrap().contains(stem))
        .unwrap_or_else(|| panic!("no entry for {stem}"))
}

const PLAIN: &str = "7f3c1e2a-5b6d-4c8e-9f01-a1b2c3d4e5f6";

/// The Read result of the plain session's first turn.
fn read_result() -> &'static str {
    "    30\tdef total(items, coupon):\n    31\t    t = sum(i.price * i.qty for i in items)\n    42\t    total -= coupon.amount\n    57\t    if coupon.percent:\n    58\t        t *= 1 - coupon.percent / 100\n"
}

/// The plain session's second turn: two calls of one response, and its reply.
fn second_turn_of_the_plain_session(t: &Turn) {
    // Two tool_use blocks of one response (two records sharing message.id): parallel calls.
    assert_eq!(
        calls(t),
        vec![
            (
                "Glob".into(),
                call("toolu_01C", "Glob", r#"{"pattern":"tests/test_cart*.py"}"#),
                result("toolu_01C", "tests/test_cart.py"),
                false
            ),
            (
                "Grep".into(),
                call(
                    "toolu_01D",
                    "Grep",
                    r#"{"pattern":"coupon","path":"CHANGELOG.md"}"#
                ),
                result("toolu_01D", "No matches found"),
                true
            ),
        ]
    );
    assert_eq!(
        t.reply_tokens,
        Some(c(
            "There is one test file and no changelog entry about coupons."
        ))
    );
}

#[test]
fn a_plain_session_becomes_its_turns_calls_and_sizes() {
    let (v, dir, stderr) = import(&[fixture("claude/plain")], &[]);
    let e = entry(&v, PLAIN);
    assert_eq!(e["requests"], 5);
    assert_eq!(e["tool_calls"], 4);
    assert_eq!(
        e["billed_input_tokens"],
        14213 + 14335 + 14495 + 14589 + 14671
    );
    assert_eq!(e["ran_as"], "eager");
    assert_eq!(e["model"], "claude-sonnet-4-5-20250929");
    assert_eq!(e["counter"], "anthropic-estimate");
    assert_eq!(e["unpaired_requests"], 0);
    assert_eq!(e["ignored_records"]["file-history-snapshot"], 1);
    assert!(
        stderr.contains("record types ignored: file-history-snapshot 1"),
        "{stderr}"
    );
    let sc = scenario(dir.path(), PLAIN);
    assert_eq!(
        sc.counter,
        Some(CLAUDE),
        "simulate counts it as it was imported"
    );
    // Counted with the Claude estimate, not raw o200k: the sizes differ.
    assert_ne!(
        CLAUDE.text(read_result()),
        Tokenizer::O200kBase.count(read_result())
    );
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 2);
    assert_eq!(ts[0].user, "", "no text without --keep-text");
    assert_eq!(
        ts[0].tokens,
        Some(c(
            "The cart total is wrong when a coupon is applied. Find where it is computed."
        ))
    );
    assert_eq!(
        calls(ts[0]),
        vec![
            (
                "Grep".into(),
                joined(
                    CLAUDE,
                    &[
                        "I'll look at the cart code.",
                        &render_call_block(
                            "toolu_01A",
                            "Grep",
                            r#"{"pattern":"coupon","path":"src"}"#
                        )
                    ]
                ),
                result(
                    "toolu_01A",
                    "src/cart.py:42: total -= coupon.amount\nsrc/cart.py:57: if coupon.percent:"
                ),
                false
            ),
            (
                "Read".into(),
                call(
                    "toolu_01B",
                    "Read",
                    r#"{"file_path":"/home/dev/shop/src/cart.py","offset":30,"limit":40}"#
                ),
                result("toolu_01B", read_result()),
                false
            ),
        ]
    );
    assert_eq!(
        ts[0].reply_tokens,
        Some(c(
            "The fixed coupon is subtracted before the percentage is applied, so both reduce the total twice on line 42."
        ))
    );
    assert_eq!(
        ts[1].tokens,
        Some(c("Check the tests too and the changelog."))
    );
    second_turn_of_the_plain_session(ts[1]);
    // Sessions are private: no message text in what was written.
    for f in std::fs::read_dir(dir.path()).unwrap() {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(!text.contains("cart total is wrong"));
        assert!(!text.contains("def total"));
    }
}

#[test]
fn keep_text_keeps_the_user_messages() {
    let (_, dir, _) = import(&[fixture("claude/plain")], &["--keep-text"]);
    let sc = scenario(dir.path(), PLAIN);
    assert_eq!(
        turns(&sc.conversation)[1].user,
        "Check the tests too and the changelog."
    );
}

#[test]
fn a_deferred_session_keeps_its_searches_and_what_they_loaded() {
    let name = "2b9d4f60-1a2b-4c3d-8e4f-5a6b7c8d9e0f";
    let (v, dir, _) = import(&[fixture("claude/deferred")], &[]);
    let e = entry(&v, name);
    assert_eq!(e["ran_as"], "deferred");
    assert_eq!(
        (e["requests"].as_u64(), e["tool_calls"].as_u64()),
        (Some(5), Some(3))
    );
    assert_eq!(e["unpaired_requests"], 0);
    assert_eq!(e["deferred"]["searches"], 1);
    // The deferred list is its own number (#27): part of the deferred input, none eager.
    let list = e["deferred"]["deferred_list_tokens"].as_u64().unwrap();
    assert!(
        list > 0 && list < e["deferred"]["input_tokens"].as_u64().unwrap(),
        "{e}"
    );
    assert_eq!(e["eager"]["deferred_list_tokens"], 0);
    let sc = scenario(dir.path(), name);
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 2);
    let search = &ts[0].calls[0];
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
    assert_eq!(
        search.result_tokens,
        Some(joined(
            CLAUDE,
            &[
                &render_reference("mcp__tracker__create_issue"),
                &render_reference("mcp__tracker__search_issues"),
                &render_result_frame("toolu_02A"),
            ]
        ))
    );
    assert_eq!(
        search.call_tokens,
        Some(call(
            "toolu_02A",
            "ToolSearch",
            r#"{"query":"tracker create issue","max_results":5}"#
        ))
    );
    assert_eq!(
        calls(ts[0])[1],
        (
            "mcp__tracker__create_issue".into(),
            call(
                "toolu_02B",
                "mcp__tracker__create_issue",
                r#"{"project":"SHOP","title":"Checkout fails with an empty coupon field","type":"bug"}"#
            ),
            result("toolu_02B", "Created SHOP-311"),
            false
        )
    );
    assert_eq!(ts[0].reply_tokens, Some(c("Filed SHOP-311.")));
    // The second turn calls a tool the first search loaded: no search, and the query that
    // found it is kept for replays that must search.
    assert_eq!(ts[1].calls.len(), 1);
    assert_eq!(ts[1].calls[0].tool.id, "mcp__tracker__search_issues");
    assert_eq!(
        ts[1].calls[0].query.as_deref(),
        Some("tracker create issue")
    );
    assert_eq!(
        ts[1].calls[0].result_tokens,
        Some(result(
            "toolu_02C",
            "SHOP-201 Coupon rounding error (closed)"
        ))
    );
}

#[test]
fn subagents_in_their_own_files_fold_into_the_parent_session() {
    let name = "c4e8a1d2-3f4b-4a5c-8d6e-7f8091a2b3c4";
    let (v, dir, _) = import(&[fixture("claude/subagents")], &[]);
    assert_eq!(
        v["sessions"].as_array().unwrap().len(),
        1,
        "one entry for both files"
    );
    let e = entry(&v, name);
    assert_eq!(
        (e["requests"].as_u64(), e["tool_calls"].as_u64()),
        (Some(4), Some(3))
    );
    assert_eq!(
        (e["files"].as_u64(), e["subagents"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(e["unlinked_subagents"], 0);
    assert_eq!(e["unpaired_requests"], 0);
    // A logged id the price table knows is the profile itself.
    assert_eq!(
        e["models"]["claude-haiku-4-5-20251001"],
        "claude-haiku-4-5-20251001"
    );
    let sc = scenario(dir.path(), name);
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 1);
    let task = &ts[0].calls[0];
    assert_eq!(task.tool.id, "Task");
    assert_eq!(
        task.result_tokens,
        Some(result(
            "toolu_03A",
            "Two providers: stripe (env STRIPE_KEY) and invoice (config/invoice.toml)."
        ))
    );
    assert!(
        ts[0].calls[1].parallel,
        "Read was written in the same response"
    );
    assert_eq!(
        ts[0].calls[1].result_tokens,
        Some(result("toolu_03B", "# Shop\nA small web shop.\n"))
    );
    let sub = task
        .subagent
        .as_ref()
        .expect("the Task call carries its subagent");
    let st = turns(&sub.conversation);
    assert_eq!(st.len(), 1);
    assert_eq!(
        st[0].tokens,
        Some(c(
            "List the payment providers in src/payments and how each is configured."
        ))
    );
    assert_eq!(
        calls(st[0]),
        vec![(
            "Glob".into(),
            call("toolu_03C", "Glob", r#"{"pattern":"src/payments/*.py"}"#),
            result(
                "toolu_03C",
                "src/payments/stripe.py\nsrc/payments/invoice.py"
            ),
            false
        )]
    );
    assert_eq!(
        st[0].reply_tokens,
        Some(c(
            "Two providers: stripe (env STRIPE_KEY) and invoice (config/invoice.toml)."
        ))
    );
}

#[test]
fn an_inline_sidechain_is_linked_to_its_task_call() {
    let name = "d5f9b2e3-4a5c-4b6d-9e7f-8091a2b3c4d5";
    let (v, dir, _) = import(&[fixture("claude/sidechain")], &[]);
    let e = entry(&v, name);
    assert_eq!(
        (e["requests"].as_u64(), e["tool_calls"].as_u64()),
        (Some(4), Some(2))
    );
    assert_eq!(e["unlinked_subagents"], 0);
    assert_eq!(e["unpaired_requests"], 0);
    let sc = scenario(dir.path(), name);
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 1);
    let sub = ts[0].calls[0].subagent.as_ref().unwrap();
    let st = turns(&sub.conversation);
    assert_eq!(st[0].tokens, Some(c("Which files import cart.py?")));
    assert_eq!(calls(st[0])[0].0, "Grep");
    assert_eq!(
        st[0].reply_tokens,
        Some(c("src/api.py and src/checkout.py import it."))
    );
    assert_eq!(
        ts[0].reply_tokens,
        Some(c("api.py and checkout.py import cart.py."))
    );
}

#[test]
fn compaction_and_clear_become_events_between_turns() {
    let name = "e6a0c3f4-5b6d-4c7e-8f90-a1b2c3d4e5f7";
    let (v, dir, _) = import(&[fixture("claude/compaction")], &[]);
    let e = entry(&v, name);
    assert_eq!(e["requests"], 6);
    assert_eq!(e["unpaired_requests"], 0);
    let sc = scenario(dir.path(), name);
    let kinds: Vec<String> = sc
        .conversation
        .iter()
        .map(|i| match i {
            Item::Turn(t) => format!("turn {}", t.tokens.unwrap()),
            Item::Event(Event::Compact { summary_tokens, .. }) => {
                format!("compact {summary_tokens}")
            }
            Item::Event(Event::Clear) => "clear".into(),
            Item::Event(other) => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            format!(
                "turn {}",
                c("Rename the Coupon class to Discount everywhere.")
            ),
            format!(
                "compact {}",
                c(
                    "This session is being continued from a previous conversation. Summary: the user wants Coupon renamed to Discount; it is defined in src/coupon.py."
                )
            ),
            format!("turn {}", c("Go ahead with the rename.")),
            "clear".into(),
            format!(
                "turn {}",
                c("What does the checkout page show after payment?")
            ),
        ]
    );
}

#[test]
fn a_truncated_last_line_is_skipped_with_a_note() {
    let name = "f7b1d4a5-6c7e-4d8f-9a01-b2c3d4e5f6a7";
    let (v, dir, stderr) = import(&[fixture("claude/truncated")], &[]);
    let e = entry(&v, name);
    assert_eq!(e["truncated_last_line"], true);
    assert_eq!(e["requests"], 2);
    assert!(stderr.contains("last line truncated"), "{stderr}");
    let sc = scenario(dir.path(), name);
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 1, "the unanswered last message makes no turn");
    assert_eq!(
        calls(ts[0])[0].1,
        call(
            "toolu_06A",
            "Bash",
            r#"{"command":"wc -l seed/products.csv","description":"Count seed rows"}"#
        )
    );
}

#[test]
fn a_codex_rollout_gives_turns_from_its_items_and_requests_from_token_counts() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::cargo_bin("toolbudget")
        .unwrap()
        .args(["session", "import", &fixture("codex/2025")])
        .args(["--catalog", &fixture("codex-tools.json")])
        .args(["--out", dir.path().to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = &v["sessions"][0];
    assert_eq!(e["format"], "codex");
    assert_eq!(e["model"], "gpt-5-codex");
    assert_eq!(e["counter"], "openai-responses");
    assert_eq!(v["counter"], "openai-responses");
    // Two token_count events with usage (a repeated one is the same request): input includes
    // the cached part.
    assert_eq!(
        (e["requests"].as_u64(), e["tool_calls"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(e["billed_input_tokens"], 5210 + 5380);
    let sc = scenario(dir.path(), "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
    assert_eq!(sc.counter, Some(CODEX));
    let ts = turns(&sc.conversation);
    assert_eq!(ts.len(), 1);
    // The environment context Codex injects is system context, not the user's first message.
    assert_eq!(ts[0].tokens, Some(CODEX.text("How many tests are there?")));
    assert_eq!(
        e["logged_system_prompt_tokens"],
        CODEX.text("<environment_context>\n  <cwd>/home/dev/shop</cwd>\n</environment_context>")
    );

    assert_eq!(
        calls(ts[0]),
        vec![(
            "shell".into(),
            joined(
                CODEX,
                &[
                    "**Counting tests**",
                    &render_call(
                        "shell",
                        r#"{"command":["bash","-lc","grep -c 'def test_' tests/*.py"]}"#
                    )
                ]
            ),
            CODEX.text(
                r#"{"output":"tests/test_cart.py:7\ntests/test_api.py:4\n","metadata":{"exit_code":0,"duration_seconds":0.1}}"#
            ),
            false
        )]
    );
    assert_eq!(
        ts[0].reply_tokens,
        Some(CODEX.text("11 tests: 7 in test_cart.py and 4 in test_api.py."))
    );
}

#[test]
fn the_json_summary_has_the_contract_fields_and_is_byte_identical_across_runs() {
    let all = [fixture("claude")];
    let (v, d1, _) = import(&all, &[]);
    let (v2, d2, _) = import(&all, &[]);
    for e in v["sessions"].as_array().unwrap() {
        for k in [
            "file",
            "scenario",
            "requests",
            "tool_calls",
            "billed_input_tokens",
            "modeled_input_tokens",
        ] {
            assert!(!e[k].is_null(), "{k} missing in {e}");
        }
        assert!(e["modeled_input_tokens"].as_u64().unwrap() > 0);
    }
    // 18 sessions from 22 files: subagent files fold into their parents.
    assert_eq!(v["sessions"].as_array().unwrap().len(), 18);
    let strip = |v: &Value| {
        let mut v = v.clone();
        for e in v["sessions"].as_array_mut().unwrap() {
            e["scenario"] = Value::Null;
        }
        v
    };
    assert_eq!(strip(&v), strip(&v2));
    let files = |d: &Path| -> Vec<(PathBuf, Vec<u8>)> {
        let mut f: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                (
                    PathBuf::from(p.file_name().unwrap()),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        f.sort();
        f
    };
    assert_eq!(files(d1.path()), files(d2.path()));
}

pub(crate) fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("toolbudget")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn tools_in_no_catalog_fail_the_import_unless_allowed() {
    let builtins = catalog("builtins.yaml");
    let deferred = fixture("claude/deferred");
    let (code, _, stderr) = run(&["session", "import", &deferred, "--catalog", &builtins]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(
        stderr.contains("mcp__tracker__create_issue (1 call)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("mcp__tracker__search_issues (1 call)"),
        "{stderr}"
    );
    let (code, stdout, stderr) = run(&[
        "session",
        "import",
        &deferred,
        "--catalog",
        &builtins,
        "--allow-unknown-tools",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let e = &v["sessions"][0];
    assert_eq!(e["unknown_tools"]["mcp__tracker__create_issue"], 1);
    // Two of three calls left out; their share of the call tokens is reported too.
    assert_eq!(e["unknown_calls_pct"], 66.67);
    assert!(e["unknown_tokens_pct"].as_f64().unwrap() > 0.0);
    assert!(stderr.contains("tools in no catalog left out"), "{stderr}");
    // Without --catalog the shipped built-ins are the catalog: only the MCP tools are unknown.
    let (code, _, stderr) = run(&["session", "import", &deferred]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("2 tools named in the sessions are in no catalog"),
        "{stderr}"
    );
    assert!(!stderr.contains("ToolSearch ("), "{stderr}");
}

#[test]
fn a_malformed_line_is_an_error_at_its_line_unless_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture(&format!("claude/plain/{PLAIN}.jsonl"))).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(4, "{\"type\": \"user\", \"message\": {\"content\": [1, }");
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let p = path.to_str().unwrap();
    let builtins = catalog("builtins.yaml");
    let (code, _, stderr) = run(&["session", "import", p, "--catalog", &builtins]);
    assert_eq!(code, Some(2));
    assert!(stderr.starts_with(&format!("error: {p}:5:")), "{stderr}");
    assert!(stderr.contains("--skip-bad-lines"), "{stderr}");
    let (code, stdout, stderr) = run(&[
        "session",
        "import",
        p,
        "--catalog",
        &builtins,
        "--skip-bad-lines",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["sessions"][0]["bad_lines"], 1);
    assert_eq!(v["sessions"][0]["requests"], 5);
    assert!(stderr.contains("1 malformed lines skipped"), "{stderr}");
    // A record whose message has the wrong shape is malformed too, located inside the line.
    std::fs::write(
        &path,
        "{\"type\":\"assistant\",\"message\":{\"content\":7}}\n",
    )
    .unwrap();
    let (code, _, stderr) = run(&["session", "import", p, "--catalog", &builtins]);
    assert_eq!(code, Some(2));
    assert!(stderr.starts_with(&format!("error: {p}:1:")), "{stderr}");
    // Not UTF-8.
    std::fs::write(&path, b"{\"type\":\"user\"}\n\xff\xfe\n").unwrap();
    let (code, _, stderr) = run(&["session", "import", p, "--catalog", &builtins]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains(&format!("{p}:2:1: line is not UTF-8")),
        "{stderr}"
    );
}

#[test]
fn simulate_applies_the_fitted_calibration() {
    // No --catalog: the built-ins of the version the fixture's records name, which its bills
    // were generated with.
    let dir = tempfile::tempdir().unwrap();
    let known = crate::support::repo("fixtures/sessions/known");
    let (code, stdout, stderr) = run(&[
        "session",
        "import",
        known.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let name = "5a1e7c3b-2d4f-4e6a-8b9c-0d1e2f3a4b5c";
    let usage: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join(format!("{name}.usage.json"))).unwrap(),
    )
    .unwrap();
    let u = &usage["billed"][0]["usage"];
    let first_billed = u["input"].as_u64().unwrap()
        + u["cache_creation"].as_u64().unwrap()
        + u["cache_read"].as_u64().unwrap();
    let scenario_path = dir.path().join(format!("{name}.yaml"));
    let cal = dir.path().join("calibration.json");
    let (code, stdout, stderr) = run(&[
        "simulate",
        scenario_path.to_str().unwrap(),
        "--calibration",
        cal.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let s: Value = serde_json::from_str(&stdout).unwrap();
    let first = s["scenarios"][0]["eager"]["first_request_tokens"]
        .as_u64()
        .unwrap();
    assert!(
        first.abs_diff(first_billed) <= 1,
        "{first} vs {first_billed}"
    );
    assert_eq!(
        s["scenarios"][0]["eager"]["total_input_tokens"],
        entry(&v, name)["modeled_input_tokens"]
    );
}

#[test]
fn an_import_folder_replays_as_it_ran_and_under_other_settings() {
    use toolbudget::experiment::sessions::{Variant, replay_dir};
    use toolbudget::search::ScorerKind;
    use toolbudget::simulate::scenario::Listing;
    let (v, dir, _) = import(
        &[
            fixture("claude"),
            crate::support::repo("fixtures/sessions/known")
                .display()
                .to_string(),
        ],
        &[],
    );
    let variants = [
        Variant::CLAUDE_CODE,
        Variant {
            scorer: ScorerKind::Bm25,
            listing: Listing::Descriptions,
        },
    ];
    let r = replay_dir(dir.path(), &variants, None).unwrap();
    assert_eq!(r.sessions.len(), 20);
    assert_eq!(r.variants, ["keyword / names", "bm25 / descriptions"]);
    for s in &r.sessions {
        let e = entry(&v, &s.name);
        // Read back from the folder, the sessions replay to what the import printed.
        assert_eq!(
            s.billed_input_tokens,
            e["billed_input_tokens"].as_u64().unwrap(),
            "{}",
            s.name
        );
        assert_eq!(
            s.modeled_input_tokens,
            e["modeled_input_tokens"].as_u64().unwrap(),
            "{}",
            s.name
        );
        assert_eq!(
            s.eager.input_tokens as u64,
            e["eager"]["input_tokens"].as_u64().unwrap()
        );
        assert_eq!(s.deferred.len(), 2);
    }
    // The deferred session without its recorded search: the replay searches on its own.
    let d = r
        .sessions
        .iter()
        .find(|s| s.name.starts_with("2b9d4f60"))
        .unwrap();
    assert!(d.deferred[0].deferred.searches >= 1, "{d:?}");
    // Descriptions in the list cost more per request than names alone.
    assert!(r.deferred[1].deferred.input_tokens > r.deferred[0].deferred.input_tokens);
    let total: usize = r.sessions.iter().map(|s| s.eager.input_tokens).sum();
    assert_eq!(r.eager.input_tokens, total);
}

#[test]
fn report_sessions_renders_the_section_with_its_charts() {
    let (_, dir, _) = import(
        &[
            fixture("claude"),
            crate::support::repo("fixtures/sessions/known")
                .display()
                .to_string(),
        ],
        &[],
    );
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report");
    let (code, _, stderr) = run(&[
        "--quiet",
        "report",
        "--sessions",
        dir.path().to_str().unwrap(),
        "--session-scorer",
        "keyword",
        "--session-scorer",
        "bm25",
        "--out",
        report.to_str().unwrap(),
        "--scenarios",
        crate::support::repo("scenarios").to_str().unwrap(),
        "--fixtures",
        crate::support::repo("fixtures").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let index = std::fs::read_to_string(report.join("index.md")).unwrap();
    let section = &index[index.find("## Your sessions").expect("the section")..];
    assert!(section.contains("20 sessions imported"), "{section}");
    assert!(
        section.contains("| deferred keyword / names: input |"),
        "{section}"
    );
    assert!(
        section.contains("| deferred bm25 / names: input | of which the deferred list | saved |"),
        "{section}"
    );
    for chart in [
        "sessions-billed-vs-modeled",
        "sessions-input",
        "sessions-cost",
    ] {
        assert!(
            section.contains(&format!("(charts/{chart}.svg)")),
            "{chart}"
        );
        let svg = std::fs::read_to_string(report.join(format!("charts/{chart}.svg"))).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert_eq!(doc.root_element().tag_name().name(), "svg");
    }
    let csv = std::fs::read_to_string(report.join("data/sessions.csv")).unwrap();
    // One row per session and mode: eager and two deferred variants, plus the header.
    assert_eq!(csv.lines().count(), 1 + 20 * 3, "{csv}");
    assert!(csv.lines().any(|l| l.contains("deferred bm25 / names")));
    // The deferred list's own column: 0 for every eager row, above 0 for a deferred one.
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let col = headers
        .iter()
        .position(|h| h == "deferred_list_tokens")
        .expect("a deferred_list_tokens column");
    let mode = headers.iter().position(|h| h == "mode").unwrap();
    let mut deferred_listed = 0;
    for r in rows.records() {
        let r = r.unwrap();
        let n: u64 = r[col].parse().unwrap();
        if &r[mode] == "eager" {
            assert_eq!(n, 0, "{r:?}");
        } else if n > 0 {
            deferred_listed += 1;
        }
    }
    assert!(deferred_listed > 0, "{csv}");
}

#[test]
fn an_agent_file_beside_its_session_folds_in_even_without_sidechain_marks() {
    let name = "c4e8a1d2-3f4b-4a5c-8d6e-7f8091a2b3c4";
    let src = crate::support::repo("fixtures/sessions/claude/subagents");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        src.join(format!("{name}.jsonl")),
        dir.path().join(format!("{name}.jsonl")),
    )
    .unwrap();
    let agent =
        std::fs::read_to_string(src.join(name).join("subagents/agent-a91f0c2.jsonl")).unwrap();
    std::fs::write(
        dir.path().join("agent-a91f0c2.jsonl"),
        agent.replace("\"isSidechain\":true", "\"isSidechain\":false"),
    )
    .unwrap();
    let (v, _, _) = import(&[dir.path().display().to_string()], &[]);
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1, "{v}");
    let e = &v["sessions"][0];
    assert_eq!(
        (e["requests"].as_u64(), e["files"].as_u64()),
        (Some(4), Some(2))
    );
    assert_eq!(e["unlinked_subagents"], 0);
    assert_eq!(e["unpaired_requests"], 0);
}

mod damaged {
    use proptest::prelude::*;
    use toolbudget::catalog::CatalogSource;
    use toolbudget::experiment::session_import::import_paths;
    use toolbudget::session::import::{Catalogs, ImportOptions, catalogs};
    use toolbudget::session::{Copies, ReadOptions, read_file};

    fn fixture_bytes() -> Vec<u8> {
        let mut all = Vec::new();
        for rel in [
            "claude/plain/7f3c1e2a-5b6d-4c8e-9f01-a1b2c3d4e5f6.jsonl",
            "claude/deferred/2b9d4f60-1a2b-4c3d-8e4f-5a6b7c8d9e0f.jsonl",
            "claude/compaction/e6a0c3f4-5b6d-4c7e-8f90-a1b2c3d4e5f7.jsonl",
            "codex/2025/11/03/rollout-2025-11-03T09-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
        ] {
            all.extend(std::fs::read(crate::support::repo("fixtures/sessions").join(rel)).unwrap());
        }
        all
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Bytes cut, overwritten or lines dropped anywhere: reading and importing end in a
        /// result or a located error, never a panic.
        #[test]
        fn damaged_logs_never_panic(
            edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..12),
            cut in any::<prop::sample::Index>(),
            skip in any::<bool>(),
        ) {
            let mut bytes = fixture_bytes();
            for (at, b) in &edits {
                let i = at.index(bytes.len());
                bytes[i] = *b;
            }
            bytes.truncate(cut.index(bytes.len() + 1));
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("s.jsonl");
            std::fs::write(&path, &bytes).unwrap();
            let opts = ReadOptions { keep_text: false, skip_bad_lines: skip };
            if read_file(&path, opts, &Copies::default()).is_ok() {
                let sources = [CatalogSource {
                    path: crate::support::repo("fixtures/catalogs/builtins.yaml"),
                    server: None,
                }];
                let cats = Catalogs::only(catalogs(&sources, dir.path()).unwrap());
                let opts = ImportOptions {
                    keep_text: false,
                    skip_bad_lines: skip,
                    allow_unknown_tools: true,
                };
                let _ = import_paths(std::slice::from_ref(&path), &cats, &opts, dir.path(), false);
            }
        }
    }
}

/// The scenarios `session import` writes name the agents' built-ins by their embedded
/// references, not by a path into this checkout: moved to another folder and simulated from
/// another working directory, they load (as with an installed binary).
#[test]
fn imported_scenarios_name_the_embedded_builtins_and_load_anywhere() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().join("a/b/imported");
    let run = Command::cargo_bin("toolbudget")
        .unwrap()
        .args(["session", "import"])
        .args([
            fixture("claude/plain"),
            fixture("codex/2026/01/15/rollout-2026-01-15T10-00-00-019b2c3d-4e5f-7a6b-8c7d-9e0f1a2b3c4d.jsonl"),
        ])
        // The Codex rollout's MCP tools are in no built-in catalog.
        .args(["--allow-unknown-tools"])
        .args(["--out", out.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    for (format, reference) in [
        ("claude-code", "builtin:claude-code"),
        ("codex", "builtin:codex"),
    ] {
        assert!(
            stderr.contains(&format!(
                "note: no --catalog given: {format} tools looked up in {reference} (embedded)"
            )),
            "{stderr}"
        );
    }
    // Moved elsewhere, at another depth: a relative path into the checkout would break.
    let moved = root.path().join("elsewhere");
    std::fs::rename(&out, &moved).unwrap();
    let mut checked = Vec::new();
    for (stem, reference) in [
        (PLAIN, "builtin:claude-code"),
        ("019b2c3d-4e5f-7a6b-8c7d-9e0f1a2b3c4d", "builtin:codex"),
    ] {
        let file = std::fs::read_dir(&moved)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy().into_owned();
                n.contains(stem) && n.ends_with(".yaml")
            })
            .unwrap_or_else(|| panic!("no scenario for {stem}"));
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains(&format!("path: {reference}")), "{text}");
        assert!(!text.contains("fixtures/catalogs"), "{text}");
        let sim = Command::cargo_bin("toolbudget")
            .unwrap()
            .current_dir(root.path())
            .args(["simulate", file.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(
            sim.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&sim.stderr)
        );
        let v: Value = serde_json::from_slice(&sim.stdout).unwrap();
        assert!(v.to_string().contains("\"requests\""), "{v}");
        checked.push(reference);
    }
    assert_eq!(checked, ["builtin:claude-code", "builtin:codex"]);
}

/// A scenario naming a built-in catalog that is not embedded is refused at the line naming
/// it, with the known references; `--catalog` takes the references too.
#[test]
fn an_unknown_builtin_catalog_is_refused_at_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.yaml");
    std::fs::write(
        &s,
        "name: s\ncatalogs:\n  - builtin:codex\n  - path: builtin:cursor\nconversation:\n  - user: hi\n",
    )
    .unwrap();
    let sim = Command::cargo_bin("toolbudget")
        .unwrap()
        .args(["simulate", s.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(sim.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&sim.stderr),
        format!(
            "error: {}:4:11: catalogs[1].path: unknown built-in catalog \"builtin:cursor\": the \
             built-in catalogs are builtin:claude-code, builtin:codex (and \
             builtin:claude-code@VERSION, the tools that Claude Code version sends)\n",
            s.display()
        )
    );
    let count = Command::cargo_bin("toolbudget")
        .unwrap()
        .args(["count", "-c", "builtin:claude-code", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(count.status.code(), Some(0));
    let bad = Command::cargo_bin("toolbudget")
        .unwrap()
        .args(["count", "-c", "builtin:nope"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "error: builtin:nope: unknown built-in catalog \"builtin:nope\": the built-in catalogs \
         are builtin:claude-code, builtin:codex (and builtin:claude-code@VERSION, the tools \
         that Claude Code version sends)\n"
    );
}

/// A session Claude Code resumed by rewriting its history into the same file (new uuids, the
/// same message, request and tool_use ids, a response split differently): billed once, each
/// tool call once, the copy not replayed (the scenario is the one of the file without the
/// copy), and `copied_requests` counts its requests (3), not its records (4 assistant records).
#[test]
fn a_session_resumed_inside_its_own_file_is_read_once() {
    let name = "d1e2f3a4-9b0c-4d1e-a324-354657687981";
    let (v, dir, stderr) = import(&[fixture("claude/resumed-in-file")], &[]);
    let e = entry(&v, name);
    assert_eq!(
        (
            e["requests"].as_u64(),
            e["tool_calls"].as_u64(),
            e["copied_requests"].as_u64(),
            e["unpaired_requests"].as_u64()
        ),
        (Some(6), Some(5), Some(3), Some(0))
    );
    // Billed once: each of the six requests' prompt once.
    let billed: u64 = [
        3 + 14400,
        4 + 160 + 14400,
        4 + 120 + 14560,
        5 + 40 + 14680,
        3 + 200 + 14720,
        4 + 60 + 14920,
    ]
    .iter()
    .sum();
    assert_eq!(e["billed_input_tokens"].as_u64(), Some(billed));
    assert!(
        stderr.contains(&format!(
            "{name}.jsonl: 3 requests of copied history (a resumed or forked session) read once, \
             billed where first written"
        )),
        "{stderr}"
    );
    let sc = scenario(dir.path(), name);
    let ts = turns(&sc.conversation);
    // Turns only: the copy is neither replayed nor read as context (no compact or resume).
    assert_eq!(sc.conversation.len(), ts.len());
    let ids: Vec<Vec<String>> = ts
        .iter()
        .map(|t| calls(t).into_iter().map(|c| c.0).collect())
        .collect();
    assert_eq!(ids, [vec!["Grep", "Glob", "Edit", "Bash"], vec!["Edit"]]);
    assert_eq!(
        ts[0].tokens,
        Some(c("Rename the `total` helper to `cart_total` everywhere."))
    );
    assert_eq!(ts[0].reply_tokens, Some(c("Renamed; the tests pass.")));
    assert_eq!(ts[1].tokens, Some(c("Also rename it in the docs.")));
    assert_eq!(ts[1].reply_tokens, Some(c("The docs say cart_total now.")));
    assert_eq!(
        calls(ts[1]),
        vec![(
            "Edit".into(),
            call(
                "toolu_15E",
                "Edit",
                r#"{"file_path":"/home/dev/shop/docs/cart.md","old_string":"total(","new_string":"cart_total("}"#
            ),
            result(
                "toolu_15E",
                "The file /home/dev/shop/docs/cart.md has been updated."
            ),
            false
        )]
    );
    // The same file without the copy (its lines 14-20) imports to the same scenario.
    let text =
        std::fs::read_to_string(fixture(&format!("claude/resumed-in-file/{name}.jsonl"))).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 24);
    let copy = &lines[13..20];
    assert!(copy.iter().all(|l| !l.contains("stop_hook_summary")));
    let trimmed_dir = tempfile::tempdir().unwrap();
    let trimmed = trimmed_dir.path().join(format!("{name}.jsonl"));
    let kept: Vec<&str> = lines[..13].iter().chain(&lines[20..]).copied().collect();
    std::fs::write(&trimmed, kept.join("\n") + "\n").unwrap();
    let (v2, dir2, _) = import(&[trimmed.display().to_string()], &[]);
    let e2 = entry(&v2, name);
    assert_eq!(e2["copied_requests"].as_u64(), Some(0));
    for k in [
        "requests",
        "tool_calls",
        "billed_input_tokens",
        "modeled_input_tokens",
    ] {
        assert_eq!(e[k], e2[k], "{k}");
    }
    let yaml = |d: &Path| std::fs::read_to_string(d.join(format!("{name}.yaml"))).unwrap();
    assert_eq!(yaml(dir.path()), yaml(dir2.path()));
}
