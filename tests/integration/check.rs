//! `toolbudget check` end to end: reachability per client, confusable pairs, the baseline
//! difference of one edited description, exit codes of --fail-on and the budgets, the GitHub
//! form and the step summary, on tiny catalogs written here, the fixtures and the shared data.

use std::path::Path;

use serde_json::Value;

use crate::support::{repo, shared_data, skip, toolbudget};

/// One tool a line, so each tool's line is its index + 2.
const TINY: &str = r#"{"tools": [
 {"name": "list_items", "description": "List the items in a folder.", "inputSchema": {"type": "object", "properties": {"folder": {"type": "string", "description": "The folder."}}}},
 {"name": "list_all_items", "description": "List the items in a folder and in every folder below it.", "inputSchema": {"type": "object", "properties": {"folder": {"type": "string"}}}},
 {"name": "read", "description": "", "inputSchema": {"type": "object", "properties": {}}},
 {"name": "read_file", "description": "Read a file and return its text.", "inputSchema": {"type": "object", "properties": {}}},
 {"name": "read_dir", "description": "Read a directory listing.", "inputSchema": {"type": "object", "properties": {}}},
 {"name": "read_link", "description": "Read where a symbolic link points.", "inputSchema": {"type": "object", "properties": {}}},
 {"name": "read_many", "description": "Read several files at once.", "inputSchema": {"type": "object", "properties": {}}},
 {"name": "read_lines", "description": "Read a range of lines of a file.", "inputSchema": {"type": "object", "properties": {}}}
]}
"#;

/// Two tools nothing is wrong with.
const CLEAN: &str = r#"{"tools": [
 {"name": "create_invoice", "description": "Create an invoice for a customer with line items and a due date.", "inputSchema": {"type": "object", "properties": {"customer": {"type": "string", "description": "Customer id."}}}},
 {"name": "delete_user", "description": "Delete a user account and revoke every session it holds.", "inputSchema": {"type": "object", "properties": {"user": {"type": "string", "description": "User id."}}}}
]}
"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// Runs check with `args`; (exit code, stdout, stderr).
fn check(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = toolbudget();
    cmd.arg("check")
        .args(args)
        .env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json(args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let (code, out, err) = check(&all, &[]);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    serde_json::from_str(&out).unwrap()
}

fn findings<'a>(v: &'a Value, id: &str) -> Vec<&'a Value> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["id"] == id)
        .collect()
}

fn client<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client"] == name)
        .unwrap()
}

#[test]
fn a_tool_without_a_description_among_its_prefix_twins_is_unreachable_for_bm25_and_regex() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = format!("t={}", write(dir.path(), "tiny.json", TINY));
    let v = json(&["-c", &tiny]);
    let unreachable = findings(&v, "unreachable");
    let clients: Vec<&str> = unreachable
        .iter()
        .map(|f| f["client"].as_str().unwrap())
        .collect();
    // Claude Code's select: always reaches a listed id; bm25 and regex rank the five
    // read_* tools above `read` for "read".
    assert_eq!(clients, ["anthropic-api", "anthropic-api:regex", "openai"]);
    for f in &unreachable {
        assert_eq!(f["tool"], "mcp__t__read");
        assert_eq!(f["level"], "error");
        assert_eq!(f["line"], 4);
        assert_eq!(f["column"], 2);
        assert!(f["file"].as_str().unwrap().ends_with("tiny.json"));
    }
    let regex = client(&v, "anthropic-api:regex");
    assert_eq!(regex["unreachable"], 1);
    assert_eq!(regex["deferred"].as_array().unwrap().len(), 8);
    let read = regex["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "mcp__t__read")
        .unwrap();
    // No description: only the name and its words are tried.
    let forms: Vec<&str> = read["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["form"].as_str().unwrap())
        .collect();
    assert_eq!(forms, ["name", "words"]);
    assert_eq!(read["found"], 0);
    let keyword = client(&v, "claude-code");
    assert_eq!(keyword["unreachable"], 0);
    let no_description = findings(&v, "no-description");
    assert_eq!(no_description.len(), 1);
    assert_eq!(no_description[0]["line"], 4);
    assert_eq!(no_description[0]["column"], 34);
    let param = findings(&v, "param-no-description");
    assert_eq!(param.len(), 1);
    assert_eq!(param[0]["tool"], "mcp__t__list_all_items");
    assert_eq!(param[0]["subject"], "folder");
}

#[test]
fn a_confusable_pair_names_the_winner_and_both_sides_distinguishing_words() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = format!("t={}", write(dir.path(), "tiny.json", TINY));
    let v = json(&["-c", &tiny, "--client", "claude-code"]);
    let pair = v["confusable"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["intended"] == "mcp__t__list_items")
        .unwrap();
    assert_eq!(pair["winner"], "mcp__t__list_all_items");
    assert_eq!(
        pair["seen"],
        serde_json::json!(["claude-code/description", "claude-code/words"])
    );
    assert_eq!(pair["winner_words"], serde_json::json!(["every", "below"]));
    assert_eq!(pair["intended_words"], serde_json::json!([]));
    let f = findings(&v, "confusable");
    assert!(
        f.iter()
            .any(|f| f["tool"] == "mcp__t__list_items" && f["subject"] == "mcp__t__list_all_items")
    );
}

/// Tokens of one tool under a counter, from `count`.
fn tokens_of(catalog: &str, counter: &str, id: &str) -> u64 {
    let out = toolbudget()
        .args([
            "count",
            "-c",
            catalog,
            "--counter",
            counter,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == id)
        .unwrap()["tokens"]
        .as_u64()
        .unwrap()
}

#[test]
fn the_baseline_shows_the_token_and_findability_effect_of_one_edited_description() {
    let dir = tempfile::tempdir().unwrap();
    let base = format!("t={}", write(dir.path(), "base.json", TINY));
    let edited = TINY.replace(
        "\"List the items in a folder.\"",
        "\"Show what one directory holds, without its subfolders.\"",
    );
    let head = format!("t={}", write(dir.path(), "head.json", &edited));
    let id = "mcp__t__list_items";
    let (before, after) = (
        tokens_of(&base, "anthropic-estimate", id),
        tokens_of(&head, "anthropic-estimate", id),
    );
    assert_ne!(before, after);

    // The edit: its own description now finds it first under Claude Code's search.
    let v = json(&["-c", &head, "--baseline", &base, "--client", "claude-code"]);
    let d = &v["baseline"];
    let row = d["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["what"] == id)
        .unwrap();
    assert_eq!(row["before"], before);
    assert_eq!(row["after"], after);
    assert_eq!(row["delta"], after as i64 - before as i64);
    let catalog = &d["tokens"][0];
    assert_eq!(catalog["what"], "catalog");
    assert_eq!(catalog["delta"], after as i64 - before as i64);
    let find = d["findability"].as_array().unwrap();
    assert_eq!(find.len(), 1);
    assert_eq!(find[0]["tool"], id);
    assert_eq!(find[0]["change"], "easier");
    assert_eq!(
        find[0]["before"],
        "name #1, words #2, description #2, select #1"
    );
    assert_eq!(
        find[0]["after"],
        "name #1, words #2, description #1, select #1"
    );

    // The other way round it got harder: a warning a --fail-on warning gate fails on, while
    // the findings both versions have do not fail it.
    let (code, out, _) = check(
        &[
            "-c",
            &base,
            "--baseline",
            &head,
            "--client",
            "claude-code",
            "--fail-on",
            "warning",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["baseline"]["findability"][0]["change"], "harder");
    let new: Vec<&str> = v["baseline"]["new_findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(new, ["harder-to-find"]);
    assert_eq!(v["verdict"]["failing"], 1);
    let (code, _, _) = check(
        &[
            "-c",
            &base,
            "--baseline",
            &head,
            "--client",
            "claude-code",
            "--fail-on",
            "error",
        ],
        &[],
    );
    assert_eq!(code, 0, "no new error");
}

#[test]
fn fail_on_and_budgets_decide_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = format!("t={}", write(dir.path(), "tiny.json", TINY));
    let clean = format!("c={}", write(dir.path(), "clean.json", CLEAN));
    assert_eq!(check(&["-c", &tiny], &[]).0, 0, "no gate, no budget");
    assert_eq!(check(&["-c", &tiny, "--fail-on", "error"], &[]).0, 1);
    let v = json(&["-c", &clean]);
    assert_eq!(v["findings"], serde_json::json!([]), "{v:#}");
    assert_eq!(check(&["-c", &clean, "--fail-on", "warning"], &[]).0, 0);

    let total = v["cost"]["total_tokens"].as_u64().unwrap();
    let loaded = client(&v, "claude-code")["loaded_tokens"].as_u64().unwrap();
    let biggest = v["cost"]["costliest"][0]["tokens"].as_u64().unwrap();
    let over = |args: &[&str]| {
        let mut all = vec!["-c", clean.as_str()];
        all.extend(args);
        let (code, out, err) = check(&all, &[]);
        (code, out, err)
    };
    let n = (total.max(loaded)).to_string();
    assert_eq!(over(&["--max-tokens", &n]).0, 0);
    let (code, out, _) = over(&["--max-tokens", &(total - 1).to_string(), "--format", "csv"]);
    assert_eq!(code, 1);
    assert!(out.contains("error,over-budget,,catalog,"), "{out}");
    assert_eq!(over(&["--max-tool-tokens", &biggest.to_string()]).0, 0);
    let (code, out, _) = over(&[
        "--max-tool-tokens",
        &(biggest - 1).to_string(),
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"]["budget_exceeded"], true);
    assert_eq!(v["verdict"]["passed"], false);
    assert_eq!(findings(&v, "over-budget")[0]["subject"], "tool");

    // Bad input: exit 2 with one error line.
    let (code, _, err) = check(&["-c", &clean, "--client", "nobody"], &[]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = check(&["-c", "no/such/file.json"], &[]);
    assert_eq!(code, 2);
    assert!(err.starts_with("error: "), "{err}");
}

#[test]
fn the_github_form_annotates_located_findings_and_appends_the_step_summary() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = format!("t={}", write(dir.path(), "tiny.json", TINY));
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let s = summary.display().to_string();
    let (code, out, err) = check(
        &[
            "-c",
            &tiny,
            "--client",
            "openai",
            "--format",
            "github",
            "--fail-on",
            "error",
        ],
        &[("GITHUB_STEP_SUMMARY", &s)],
    );
    assert_eq!(code, 1, "{err}");
    let first = out.lines().next().unwrap();
    assert!(
        first.starts_with("::error file=")
            && first.contains(",line=4,col=34,title=toolbudget no-description::"),
        "{first}"
    );
    assert!(out.contains(",line=4,col=2,title=toolbudget unreachable::openai defers mcp__t__read"));
    let written = std::fs::read_to_string(&summary).unwrap();
    let (before, rest) = written.split_once('\n').unwrap();
    assert_eq!(before, "earlier step");
    assert!(
        rest.starts_with("## toolbudget check FAILED: 2 errors,"),
        "{rest}"
    );
    let worse = rest.find("### What got worse").unwrap();
    let better = rest.find("### What got better").unwrap();
    let details = rest.find("<details><summary>Details</summary>").unwrap();
    assert!(worse < better && better < details);
    // Markdown escaped: `__` would start emphasis.
    assert!(rest.contains("mcp\\_\\_t\\_\\_read has no description"));
    // The same summary is the tail of stdout.
    assert!(out.ends_with(rest));
    // Appended again by a second run: the earlier text stays.
    check(
        &["-c", &tiny, "--client", "openai"],
        &[("GITHUB_STEP_SUMMARY", &s)],
    );
    let again = std::fs::read_to_string(&summary).unwrap();
    assert!(again.starts_with(&written));
    assert_eq!(again.matches("## toolbudget check").count(), 2);
}

#[test]
fn labeled_queries_give_recall_per_tool_and_false_positives() {
    let dir = tempfile::tempdir().unwrap();
    let tiny = format!("t={}", write(dir.path(), "tiny.json", TINY));
    let queries = write(
        dir.path(),
        "q.jsonl",
        "{\"id\": \"q1\", \"query\": \"symbolic link\", \"expected\": [\"mcp__t__read_link\"]}\n\
         {\"id\": \"q2\", \"query\": \"read\", \"expected\": [\"mcp__t__read\"]}\n\
         {\"id\": \"q3\", \"query\": \"book a flight to lisbon\", \"expected\": []}\n\
         {\"id\": \"q4\", \"query\": \"read several files\", \"expected\": []}\n",
    );
    let v = json(&[
        "-c",
        &tiny,
        "--client",
        "anthropic-api",
        "--queries",
        &queries,
    ]);
    let q = &v["queries"][0];
    assert_eq!(q["client"], "anthropic-api");
    assert_eq!(q["k"], 5);
    assert_eq!(q["queries"], 4);
    assert_eq!(q["no_match"], 2);
    assert_eq!(q["false_positives"], 1);
    assert_eq!(q["true_negatives"], 1);
    assert_eq!(q["recall"], 0.5);
    let per: Vec<(String, u64)> = q["per_tool"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["found"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        per,
        [
            ("mcp__t__read".to_string(), 0),
            ("mcp__t__read_link".to_string(), 1)
        ]
    );
    let fp = findings(&v, "false-positive");
    assert_eq!(fp.len(), 1);
    assert_eq!(fp[0]["subject"], "q4");
    assert_eq!(fp[0]["line"], 4);
    let miss = findings(&v, "query-miss");
    assert_eq!(miss[0]["tool"], "mcp__t__read");
    assert_eq!(miss[0]["line"], 2);
}

#[test]
fn on_the_fixtures_claude_code_defers_the_mcp_tools_and_misses_one_by_its_description() {
    let builtins = repo("fixtures/catalogs/builtins.yaml")
        .display()
        .to_string();
    let mcp = repo("fixtures/catalogs/mcp").display().to_string();
    let v = json(&[
        "-c",
        &builtins,
        "-c",
        &mcp,
        "--client",
        "claude-code,openai",
    ]);
    assert_eq!(v["tool_count"], 116);
    let cc = client(&v, "claude-code");
    assert_eq!(cc["loaded"].as_array().unwrap().len(), 25);
    assert_eq!(cc["deferred"].as_array().unwrap().len(), 91);
    assert_eq!(cc["unreachable"], 0);
    let hard: Vec<(&str, &str)> = findings(&v, "hard-to-find")
        .iter()
        .map(|f| (f["tool"].as_str().unwrap(), f["client"].as_str().unwrap()))
        .collect();
    assert!(
        hard.contains(&("mcp__tracker__log_work", "claude-code")),
        "{hard:?}"
    );
    let openai = client(&v, "openai");
    assert_eq!(openai["listing"], "stubs");
    assert_eq!(openai["deferred"].as_array().unwrap().len(), 115);
    // Every deferred tool is reported, and the costliest tool leads the cost list.
    assert_eq!(openai["tools"].as_array().unwrap().len(), 115);
    assert_eq!(v["cost"]["costliest"][0]["id"], "Bash");
}

#[test]
fn on_the_shared_github_catalog_bm25_misses_get_me_by_its_name() {
    let Some(data) = shared_data() else {
        skip(
            "on_the_shared_github_catalog_bm25_misses_get_me_by_its_name",
            "no ../shared/data (set TOOLBUDGET_SHARED_DATA)",
        );
        return;
    };
    let github = format!("github={}", data.join("catalogs/github.json").display());
    let v = json(&["-c", &github]);
    assert_eq!(v["tool_count"], 117);
    for c in v["clients"].as_array().unwrap() {
        assert_eq!(
            c["deferred"].as_array().unwrap().len(),
            117,
            "{}",
            c["client"]
        );
        assert_eq!(c["unreachable"], 0);
        // Every deferred tool is reported with what each form gave.
        assert_eq!(c["tools"].as_array().unwrap().len(), 117);
    }
    let hard: Vec<(&str, &str)> = findings(&v, "hard-to-find")
        .iter()
        .map(|f| (f["client"].as_str().unwrap(), f["tool"].as_str().unwrap()))
        .collect();
    // "get_me" and "get me": every tool's name says get, and `me` is a stopword to bm25.
    assert!(
        hard.contains(&("anthropic-api", "mcp__github__get_me")),
        "{hard:?}"
    );
    assert!(
        hard.contains(&("openai", "mcp__github__get_me")),
        "{hard:?}"
    );
    let get_me = client(&v, "anthropic-api")["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "mcp__github__get_me")
        .unwrap();
    let found: Vec<(&str, bool)> = get_me["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["form"].as_str().unwrap(), r["rank"].is_u64()))
        .collect();
    assert_eq!(
        found,
        [("name", false), ("words", false), ("description", true)]
    );
    for f in findings(&v, "hard-to-find") {
        assert!(f["line"].as_u64().unwrap() > 0);
    }
}
