//! `toolbudget count` end to end: every catalog form, the json shape, and each bad-input path
//! (exit 2, one `error:` line naming file and line:column, never a panic).

use serde_json::Value;

use crate::support::toolbudget;

fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, bytes).unwrap();
    p.to_string_lossy().into_owned()
}

fn count_json(args: &[&str]) -> Value {
    let out = toolbudget()
        .arg("count")
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Runs `count` on one file and returns the first stderr line, asserting exit 2.
fn count_error(path: &str) -> String {
    let out = toolbudget()
        .args(["count", "--catalog", path])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn every_form_counts_the_same_tool_the_same() {
    // One tool in four forms renders to the same text, so counts must agree exactly.
    let dir = tempfile::tempdir().unwrap();
    let schema = r#"{"type":"object","properties":{"q":{"type":"string","description":"Café query — 検索"}},"required":["q"]}"#;
    let mcp = write(
        &dir,
        "srv.json",
        format!(
            r#"{{"tools":[{{"name":"find","description":"Find things.","inputSchema":{schema}}}]}}"#
        )
        .as_bytes(),
    );
    let native = write(
        &dir,
        "native.yaml",
        format!("servers:\n  - name: srv\n    tools:\n      - name: find\n        description: Find things.\n        input_schema: {schema}\n").as_bytes(),
    );
    let anthropic = write(
        &dir,
        "a.json",
        format!(r#"[{{"name":"find","description":"Find things.","input_schema":{schema}}}]"#)
            .as_bytes(),
    );
    let openai = write(
        &dir,
        "o.json",
        format!(r#"[{{"type":"function","function":{{"name":"find","description":"Find things.","parameters":{schema}}}}}]"#).as_bytes(),
    );
    let m = count_json(&["--catalog", &mcp]);
    let n = count_json(&["--catalog", &native]);
    let a = count_json(&["--catalog", &format!("srv={anthropic}")]);
    let o = count_json(&["--catalog", &format!("srv={openai}")]);
    assert_eq!(m["tools"][0]["id"], "mcp__srv__find");
    for other in [&n, &a, &o] {
        assert_eq!(other["tools"][0]["id"], "mcp__srv__find");
        assert_eq!(other["tools"][0]["tokens"], m["tools"][0]["tokens"]);
    }
    assert_eq!(m["tokenizer"], "o200k_base");
    assert_eq!(m["total_tokens"], m["tools"][0]["tokens"]);
    // Without SERVER=, tools arrays are built-ins: the id is the bare name.
    assert_eq!(
        count_json(&["--catalog", &anthropic])["tools"][0]["id"],
        "find"
    );
}

#[test]
fn totals_and_per_server_groups_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        &dir,
        "alpha.json",
        br#"{"tools":[{"name":"x","description":"one"},{"name":"y","description":"two words"}]}"#,
    );
    let b = write(
        &dir,
        "b.yaml",
        b"builtins:\n  - name: Read\n    description: Read a file.\n",
    );
    let v = count_json(&[
        "--catalog",
        &a,
        "--catalog",
        &b,
        "--tokenizer",
        "cl100k_base",
    ]);
    assert_eq!(v["tokenizer"], "cl100k_base");
    let tools = v["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 3);
    let sum: u64 = tools.iter().map(|t| t["tokens"].as_u64().unwrap()).sum();
    assert_eq!(v["total_tokens"].as_u64().unwrap(), sum);
    let servers = v["servers"].as_array().unwrap();
    assert_eq!(servers[0]["server"], "alpha");
    assert_eq!(servers[0]["tools"], 2);
    assert_eq!(servers[1]["server"], "(built-in)");
    let server_sum: u64 = servers.iter().map(|s| s["tokens"].as_u64().unwrap()).sum();
    assert_eq!(server_sum, sum);
    assert_eq!(
        v["per_tool"]["max"],
        tools
            .iter()
            .map(|t| t["tokens"].as_u64().unwrap())
            .max()
            .unwrap()
    );
}

#[test]
fn csv_and_table_formats() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        &dir,
        "s.json",
        br#"{"tools":[{"name":"x","description":"one, two"}]}"#,
    );
    let out = toolbudget()
        .args(["count", "--catalog", &a, "--format", "csv"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("id,tokens\nmcp__s__x,"), "{text}");
    let out = toolbudget()
        .args(["count", "--catalog", &a])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("1 tool,") && text.contains("o200k_base, json rendering"),
        "{text}"
    );
}

#[test]
fn output_is_byte_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(&dir, "s.json", br#"{"tools":[{"name":"x","description":"d","inputSchema":{"type":"object","b":1,"a":2.5e-7}}]}"#);
    let run = || {
        toolbudget()
            .args(["count", "--catalog", &a, "--format", "json"])
            .output()
            .unwrap()
            .stdout
    };
    assert_eq!(run(), run());
}

#[test]
fn bad_inputs_exit_2_with_located_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[u8], &str)] = &[
        (
            "truncated.json",
            br#"{"tools": [{"name": "a", "inputSchema": {"type": "obj"#,
            "truncated.json:1:",
        ),
        (
            "tabs.yaml",
            b"builtins:\n  - name: Read\n\tdescription: x\n",
            "tabs.yaml:2:11: invalid YAML",
        ),
        (
            "dup.json",
            b"{\"tools\": [\n  {\"name\": \"a\"},\n  {\"name\": \"a\"}\n]}",
            "dup.json:3:3: duplicate tool id \"mcp__dup__a\"",
        ),
        (
            "noname.json",
            b"{\"tools\": [{\"description\": \"x\"}]}",
            "noname.json:1:12: tools[0]: missing field `name`",
        ),
        (
            "schema.json",
            b"{\"tools\": [{\"name\": \"a\", \"inputSchema\": \"object\"}]}",
            "schema.json:1:41: tools[0].inputSchema: invalid type: string \"object\", expected a JSON Schema object",
        ),
        (
            "unknown.yaml",
            b"builtins:\n  - name: Read\n    colour: red\n",
            "unknown.yaml:3:13: builtins[0]: unknown field `colour`",
        ),
        (
            "latin1.json",
            b"{\"tools\": [{\"name\": \"caf\xe9\"}]}",
            "latin1.json:1:",
        ),
        ("empty.yaml", b"", "empty.yaml:1:1: file is empty"),
        (
            "notcat.json",
            b"{\"hello\": 1}",
            "notcat.json:1:1: not a catalog",
        ),
        ("alias.yaml", b"a: &a [*a]\n", "alias.yaml:1:"),
    ];
    for (name, bytes, want) in cases {
        let p = write(&dir, name, bytes);
        let line = count_error(&p);
        assert!(line.starts_with("error: "), "{line}");
        assert!(line.contains(want), "{name}: want {want:?} in {line:?}");
    }
}

#[test]
fn deeply_nested_schema_is_an_error_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let depth = 10_000;
    let mut s = String::from("{\"tools\": [{\"name\": \"a\", \"inputSchema\": ");
    s.push_str(&"{\"a\":".repeat(depth));
    s.push('1');
    s.push_str(&"}".repeat(depth));
    s.push_str("}]}");
    let p = write(&dir, "deep.json", s.as_bytes());
    let line = count_error(&p);
    assert!(
        line.contains("deep.json:1:") && line.contains("nesting deeper than 127 levels"),
        "{line}"
    );
}

#[test]
fn missing_file_and_unknown_tokenizer() {
    let line = count_error("/no/such/catalog.json");
    assert!(
        line.starts_with("error: /no/such/catalog.json: cannot read file"),
        "{line}"
    );
    let out = toolbudget()
        .args(["count", "--catalog", "x.json", "--tokenizer", "gpt2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("invalid value 'gpt2' for '--tokenizer"),
        "{err}"
    );
    assert!(
        err.contains("[possible values: o200k_base, cl100k_base]"),
        "{err}"
    );
}

#[test]
fn ten_thousand_tools_load_and_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = String::from("{\"tools\": [");
    for i in 0..10_000 {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            "{{\"name\": \"tool_{i}\", \"description\": \"Does task number {i} for the user.\", \"inputSchema\": {{\"type\": \"object\", \"properties\": {{\"id\": {{\"type\": \"integer\"}}}}}}}}"
        ));
    }
    s.push_str("]}");
    let p = write(&dir, "big.json", s.as_bytes());
    let v = count_json(&["--catalog", &p]);
    assert_eq!(v["tool_count"], 10_000);
    assert_eq!(v["tools"][9999]["id"], "mcp__big__tool_9999");
}

/// `count -c DIR` walks the folder like `eval --pool`: every catalog file below it, in path
/// order, each file's tools under its stem; the totals equal one `-c` per file.
#[test]
fn a_folder_counts_every_catalog_file_below_it() {
    let dir = crate::support::repo("fixtures/catalogs/mcp");
    let folder = count_json(&["--catalog", dir.to_str().unwrap()]);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path().to_string_lossy().into_owned())
        .filter(|p| p.ends_with(".json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 5);
    let mut args = Vec::new();
    for f in &files {
        args.push("--catalog");
        args.push(f.as_str());
    }
    let each = count_json(&args);
    assert_eq!(folder["tool_count"], 77);
    assert_eq!(folder["total_tokens"], each["total_tokens"]);
    assert_eq!(folder["tools"], each["tools"]);
    // A server name cannot be given to a whole folder.
    let out = toolbudget()
        .args(["count", "--catalog", &format!("srv={}", dir.display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SERVER=FOLDER is ambiguous"));
    let empty = tempfile::tempdir().unwrap();
    let out = toolbudget()
        .args(["count", "--catalog", empty.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no catalog files"));
}

/// `count` names the tool-use preamble it adds and whose it is, in every format; a
/// provider-neutral counter (o200k-json, the default) adds none unless `--model` asks: an
/// OpenAI tokenizer's count no longer carries Claude's tool-use preamble silently.
#[test]
fn count_names_its_preamble_or_adds_none_under_a_neutral_counter() {
    let cat = crate::support::repo("fixtures/catalogs/mcp/tracker.json");
    let cat = cat.to_str().unwrap();
    let neutral = count_json(&["--catalog", cat]);
    assert_eq!(neutral["counter"], "o200k-json");
    assert!(neutral["preamble"].is_null(), "{neutral}");
    assert_eq!(neutral["framing_tokens"], 0);
    assert_eq!(neutral["fixed_tokens"], 0);
    // Asked for, a model's preamble is added and named.
    let asked = count_json(&["--catalog", cat, "--model", "claude-sonnet-4.5"]);
    assert_eq!(asked["preamble"]["model"], "claude-sonnet-4.5");
    assert_eq!(asked["preamble"]["provider"], "Anthropic");
    assert_eq!(asked["preamble"]["tokens"], 346);
    assert!(
        asked["preamble"]["source"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{asked}"
    );
    assert_eq!(asked["fixed_tokens"], 346);
    assert_eq!(asked["total_tokens"], neutral["total_tokens"]);
    // A provider's counter adds its own model's preamble and framing, named.
    let claude = count_json(&["--catalog", cat, "--counter", "anthropic-estimate"]);
    assert_eq!(claude["preamble"]["model"], "claude-sonnet-4-6");
    assert_eq!(claude["preamble"]["tokens"], 346);
    assert_eq!(claude["framing_tokens"], 139);
    assert_eq!(claude["fixed_tokens"], 346 + 139);
    let text = |args: &[&str]| {
        let out = toolbudget().arg("count").args(args).output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let t = text(&["--catalog", cat]);
    assert!(
        t.contains("no tool-use preamble added: o200k-json is provider-neutral"),
        "{t}"
    );
    let t = text(&["--catalog", cat, "--counter", "anthropic-estimate"]);
    assert!(
        t.contains("485 more: 346 of Anthropic's tool-use preamble for claude-sonnet-4-6"),
        "{t}"
    );
    let csv = text(&["--catalog", cat, "--format", "csv"]);
    assert!(
        csv.ends_with("(tool-use preamble: none),0\n(tools block framing: o200k-json),0\n"),
        "{csv}"
    );
    let csv = text(&[
        "--catalog",
        cat,
        "--format",
        "csv",
        "--counter",
        "openai-chat",
    ]);
    assert!(
        csv.contains("\"(tool-use preamble: gpt-4o (OpenAI), tool_choice auto)\",0\n"),
        "{csv}"
    );
}
