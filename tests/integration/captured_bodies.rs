//! Captured request bodies as catalogs (CONTRACT.md "Catalog files" item 4): each of the three
//! API shapes loads and counts as its own tools array would, hosted entries are set apart,
//! and `count` says whether the client really deferred.

use serde_json::{Value, json};

use crate::support::{repo, toolbudget};

fn fixture(name: &str) -> String {
    repo(&format!("fixtures/captured/{name}"))
        .to_string_lossy()
        .into_owned()
}

/// `count` on the files: (stdout, stderr), asserting success.
fn count(files: &[&str], format: &str) -> (String, String) {
    let mut cmd = toolbudget();
    cmd.arg("count");
    for f in files {
        cmd.args(["--catalog", f]);
    }
    let out = cmd.args(["--format", format]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (String::from_utf8(out.stdout).unwrap(), stderr)
}

fn count_json(file: &str) -> (Value, String) {
    let (out, err) = count(&[file], "json");
    (serde_json::from_str(&out).unwrap(), err)
}

/// `[[id, tokens]...]` of a count's json.
fn per_tool(v: &Value) -> Vec<(String, u64)> {
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["tokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The body's function entries alone, as a tools array file of the same API's form.
fn functions_alone(dir: &tempfile::TempDir, body: &str) -> String {
    let v: Value = serde_json::from_slice(&std::fs::read(body).unwrap()).unwrap();
    let functions: Vec<Value> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| {
            matches!(
                t.get("type").and_then(Value::as_str),
                None | Some("function")
            )
        })
        .cloned()
        .collect();
    let p = dir.path().join("alone.json");
    std::fs::write(&p, serde_json::to_vec(&functions).unwrap()).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn each_shape_counts_as_its_tools_array_alone() {
    // The totals are the o200k-json counts of each body's functions loaded as a plain tools
    // array (the existing loader), checked here against that load as well.
    let cases = [
        (
            "anthropic-messages.json",
            "anthropic-messages",
            "claude-sonnet-4-6",
            149,
            vec!["max_tokens", "system", "messages"],
        ),
        (
            "openai-chat.json",
            "openai-chat-completions",
            "gpt-4o",
            104,
            vec!["messages", "tool_choice", "temperature"],
        ),
        (
            "openai-responses.json",
            "openai-responses",
            "gpt-5.4",
            139,
            vec!["instructions", "input", "max_output_tokens"],
        ),
    ];
    for (name, shape, model, total, ignored) in cases {
        let body = fixture(name);
        let (v, stderr) = count_json(&body);
        let dir = tempfile::tempdir().unwrap();
        let (alone, alone_err) = count_json(&functions_alone(&dir, &body));
        assert_eq!(v["total_tokens"], total, "{name}");
        assert_eq!(alone["total_tokens"], total, "{name}");
        assert_eq!(per_tool(&v), per_tool(&alone), "{name}");
        assert_eq!(v["tokenizer"], "o200k_base");
        let b = &v["captured"]["bodies"][0];
        assert_eq!(b["shape"], shape, "{name}");
        assert_eq!(b["model"], model, "{name}");
        assert_eq!(b["ignored"], json!(ignored), "{name}");
        // One note line naming the file and what was ignored; none for the plain array.
        let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note:")).collect();
        assert_eq!(notes.len(), 1, "{stderr}");
        assert!(notes[0].contains(&body), "{stderr}");
        assert!(
            notes[0].contains(&format!("ignored: {}", ignored.join(", "))),
            "{stderr}"
        );
        assert!(!alone_err.contains("note:"), "{alone_err}");
        assert!(alone.get("captured").is_none(), "{name}");
    }
}

#[test]
fn hosted_entries_are_set_apart_never_counted_as_functions() {
    let (v, _) = count_json(&fixture("anthropic-messages.json"));
    let ids: Vec<String> = per_tool(&v).into_iter().map(|(id, _)| id).collect();
    // The BM25 search entry used to be an ordinary 24-token tool.
    assert_eq!(ids, ["list_deploys", "get_incident", "page_oncall"]);
    assert_eq!(v["tool_count"], 3);
    let hosted = v["captured"]["hosted"].as_array().unwrap();
    assert_eq!(hosted.len(), 2);
    assert_eq!(hosted[0]["type"], "tool_search_tool_bm25_20251119");
    assert_eq!(hosted[0]["name"], "tool_search_tool_bm25");
    assert_eq!(hosted[0]["search"], true);
    assert_eq!(hosted[0]["tokens"], 685);
    assert_eq!(hosted[0]["basis"], "measured");
    assert_eq!(hosted[1]["type"], "web_search_20250305");
    assert_eq!(hosted[1]["tokens"], Value::Null);
    assert_eq!(v["captured"]["hosted_tokens"], 685);
    assert_eq!(v["captured"]["search_tool"], "tool_search_tool_bm25");

    // A plain tools array holding OpenAI's hosted entries loads too, with one note.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("hosted.json");
    let entries = json!([
        {"type": "web_search"},
        {"type": "file_search", "vector_store_ids": ["vs_1"]},
        {"type": "code_interpreter", "container": {"type": "auto"}},
        {"type": "image_generation"},
        {"type": "mcp", "server_label": "gh", "server_url": "https://example.com/mcp"},
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
        {"type": "bash_20250124", "name": "bash"},
        {"type": "function", "name": "f", "description": "x", "parameters": {"type": "object"}}
    ]);
    std::fs::write(&p, serde_json::to_vec(&entries).unwrap()).unwrap();
    let path = p.to_string_lossy().into_owned();
    let (v, stderr) = count_json(&path);
    assert_eq!(per_tool(&v).len(), 1);
    assert_eq!(per_tool(&v)[0].0, "f");
    let kinds: Vec<&str> = v["captured"]["hosted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "web_search",
            "file_search",
            "code_interpreter",
            "image_generation",
            "mcp",
            "text_editor_20250728",
            "bash_20250124"
        ]
    );
    // Documented: the text editor's 700 and bash's 245; none for the others.
    assert_eq!(v["captured"]["hosted_tokens"], 945);
    assert_eq!(v["captured"]["bodies"], json!([]));
    assert_eq!(v["captured"]["deferral"], "not-deferred");
    let notes: Vec<&str> = stderr.lines().filter(|l| l.starts_with("note:")).collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    assert!(notes[0].contains("hosted tools set apart"), "{stderr}");
}

#[test]
fn count_says_whether_the_client_really_deferred() {
    let cases = [
        ("anthropic-messages.json", "deferred", 1, 2),
        ("openai-responses.json", "deferred", 1, 2),
        ("openai-chat.json", "not-deferred", 2, 0),
        ("deferred-no-search.json", "deferred-without-search", 1, 1),
        ("search-no-deferral.json", "search-without-deferral", 2, 0),
    ];
    for (name, verdict, whole, deferred) in cases {
        let (v, _) = count_json(&fixture(name));
        let c = &v["captured"];
        assert_eq!(c["deferral"], verdict, "{name}");
        assert_eq!(c["sent_whole"], whole, "{name}");
        assert_eq!(c["deferred"], deferred, "{name}");
        let sum = c["sent_whole_tokens"].as_u64().unwrap() + c["deferred_tokens"].as_u64().unwrap();
        assert_eq!(v["total_tokens"].as_u64().unwrap(), sum, "{name}");
    }
    // Per-tool: the one whole tool of the Responses body is find_account (36 tokens).
    let (v, _) = count_json(&fixture("openai-responses.json"));
    assert_eq!(v["captured"]["sent_whole_tokens"], 36);
    assert_eq!(v["captured"]["deferred_tokens"], 103);

    let (table, _) = count(&[&fixture("deferred-no-search.json")], "table");
    assert!(
        table.contains(
            "note: 1 tool deferred (defer_loading: true) but no search tool was sent: the model \
             has no way to find or load them"
        ),
        "{table}"
    );
    assert!(table.contains("search tool: none"), "{table}");
    let (table, _) = count(&[&fixture("search-no-deferral.json")], "table");
    assert!(
        table.contains(
            "note: the client did not really defer: tool_search was sent, but no tool has \
             defer_loading: true, so all 2 tools go whole in every request"
        ),
        "{table}"
    );
}

#[test]
fn csv_and_md_carry_the_captured_counts() {
    let body = fixture("openai-responses.json");
    let (csv, _) = count(&[&body], "csv");
    for row in [
        "find_account,36\n",
        "(sent whole: 1 tools),36\n",
        "(deferred: 2 tools),103\n",
        "(hosted: tool_search),352\n",
        "(hosted: web_search),\n",
    ] {
        assert!(csv.contains(row), "{row:?} in {csv}");
    }
    let (md, _) = count(&[&body], "md");
    assert!(
        md.contains("| `tool_search` | openai | yes | 352 | fitted |"),
        "{md}"
    );
    assert!(
        md.contains(
            "sent whole: 1 tool, 36 tokens; deferred (defer_loading: true): 2 tools, 103 tokens"
        ),
        "{md}"
    );
    assert!(md.contains("search tool: tool_search"), "{md}");
}

#[test]
fn malformed_bodies_are_refused_where_written() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "{\"model\": \"gpt-4o\", \"messages\": [],\n \"tools\": [\n  {\"type\": \"function\", \"function\": {\"description\": \"no name\"}}]}",
            ":3:36: tools[0].function: missing field `name`",
        ),
        (
            "{\"model\": \"gpt-5.4\", \"tools\": [\n {\"type\": \"function\", \"name\": \"f\", \"parameters\": [1]}]}",
            ":2:50: tools[0].parameters: invalid type: a list, expected a JSON Schema object",
        ),
        (
            "{\"model\": \"claude-sonnet-4-6\", \"tools\": [\n {\"name\": \"a\"},\n {\"name\": \"a\"}]}",
            ":3:2: duplicate tool id \"a\"",
        ),
        (
            "{\"model\": \"m\", \"tools\": [\n {\"name\": \"a\",]}",
            ":2:",
        ),
    ];
    for (i, (text, want)) in cases.into_iter().enumerate() {
        let p = dir.path().join(format!("bad{i}.json"));
        std::fs::write(&p, text).unwrap();
        let out = toolbudget()
            .args(["count", "--catalog"])
            .arg(&p)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with(&format!("error: {}{want}", p.display())),
            "{want:?} in {stderr}"
        );
    }
}
