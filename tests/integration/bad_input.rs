//! Bad input, end to end: every file and string the tool reads (catalogs in each form,
//! scenarios, labeled-query files, CLI queries) fed broken, hostile or huge, through the real
//! binary. Each case must exit 2 with one `error:` line that names the file and, where the
//! problem has a place, its `line:column` (snapshotted with insta), never panic and never hang.
//! Small cases live in `tests/bad_input/`; huge ones (10 MB descriptions, 10,000-deep nesting,
//! 100,000 tools, files over the size limit) are generated into a temporary folder.
//!
//! Paths are relative to the folder the binary runs in, so snapshots are the same everywhere.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;

/// Generous: the 100,000-tool cases take seconds in a debug build; a hang takes forever.
const TIMEOUT: Duration = Duration::from_secs(120);

fn cases() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bad_input")
}

/// The built-in fixture catalog, as seen from `tests/bad_input/`.
const BUILTINS: &str = "../../fixtures/catalogs/builtins.yaml";

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Run {
    let out = Command::cargo_bin("toolbudget")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .timeout(TIMEOUT)
        .output()
        .unwrap();
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Where the error must point.
#[derive(Clone, Copy)]
enum Loc<'a> {
    /// `error: FILE:LINE:COL: ...`
    At(&'a str),
    /// `error: FILE: ...` (the file as a whole: missing, too big, no queries).
    File(&'a str),
    /// A flag or a query typed on the command line.
    Usage,
}

/// Runs a case that must fail as bad input, checks the first stderr line and snapshots stderr.
fn bad(name: &str, dir: &Path, args: &[&str], loc: Loc) -> String {
    let r = run(dir, args);
    let context = format!("case {name}: toolbudget {args:?}\nstderr: {}", r.stderr);
    assert_eq!(r.code, Some(2), "{context}");
    assert!(!r.stderr.contains("panicked"), "{context}");
    assert!(r.stdout.is_empty(), "{context}\nstdout: {}", r.stdout);
    let first = r.stderr.lines().next().unwrap_or_default();
    let message = first
        .strip_prefix("error: ")
        .unwrap_or_else(|| panic!("{context}: the first line must start with `error: `"));
    match loc {
        Loc::At(file) => {
            let rest = message
                .strip_prefix(&format!("{file}:"))
                .unwrap_or_else(|| panic!("{context}: must name {file}"));
            let mut parts = rest.splitn(3, ':');
            let line = parts.next().unwrap_or_default();
            let column = parts.next().unwrap_or_default();
            assert!(
                line.parse::<usize>().is_ok_and(|n| n > 0)
                    && column.parse::<usize>().is_ok_and(|n| n > 0),
                "{context}: must give line:column after the file"
            );
        }
        Loc::File(file) => {
            assert!(
                message.starts_with(&format!("{file}: ")),
                "{context}: must name {file}"
            );
        }
        Loc::Usage => {}
    }
    // Our own errors are one line; clap's usage errors add a `--help` hint after a blank line.
    if !r.stderr.contains("For more information, try '--help'") {
        assert_eq!(r.stderr.lines().count(), 1, "{context}: one line");
    }
    let stderr = r.stderr.replace(&dir.display().to_string(), "[DIR]");
    insta::assert_snapshot!(name, stderr);
    first.to_string()
}

/// Runs a case that must succeed and returns stdout.
fn good(dir: &Path, args: &[&str]) -> String {
    let r = run(dir, args);
    assert_eq!(r.code, Some(0), "toolbudget {args:?} failed:\n{}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r.stdout
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

// --- catalogs --------------------------------------------------------------------------------

#[test]
fn bad_catalogs_exit_2_with_located_errors() {
    let dir = cases();
    for (name, file, loc) in [
        ("catalog_empty", "catalog/empty.json", true),
        ("catalog_blank_yaml", "catalog/blank.yaml", true),
        ("catalog_truncated_json", "catalog/truncated.json", true),
        ("catalog_yaml_tabs", "catalog/tabs.yaml", true),
        ("catalog_alias_bomb", "catalog/alias_bomb.yaml", true),
        (
            "catalog_duplicate_key_json",
            "catalog/duplicate_key.json",
            true,
        ),
        (
            "catalog_duplicate_key_yaml",
            "catalog/duplicate_key.yaml",
            true,
        ),
        ("catalog_duplicate_id", "catalog/duplicate_id.json", true),
        (
            "catalog_wrong_type_name",
            "catalog/wrong_type_name.json",
            true,
        ),
        (
            "catalog_wrong_type_schema",
            "catalog/wrong_type_schema.yaml",
            true,
        ),
        (
            "catalog_wrong_type_tools",
            "catalog/wrong_type_tools.json",
            true,
        ),
        (
            "catalog_wrong_type_bool",
            "catalog/wrong_type_bool.yaml",
            true,
        ),
        ("catalog_unknown_field", "catalog/unknown_field.yaml", true),
        ("catalog_non_utf8", "catalog/non_utf8.json", true),
        (
            "catalog_anthropic_not_object",
            "catalog/anthropic_not_object.json",
            true,
        ),
        (
            "catalog_openai_bad_function",
            "catalog/openai_bad_function.json",
            true,
        ),
        (
            "catalog_openai_missing_name",
            "catalog/openai_missing_name.json",
            true,
        ),
        ("catalog_not_a_catalog", "catalog/not_a_catalog.json", true),
        ("catalog_scalar_yaml", "catalog/scalar.yaml", true),
        ("catalog_nan_yaml", "catalog/nan.yaml", true),
        ("catalog_empty_name", "catalog/empty_name.yaml", true),
        (
            "catalog_lone_surrogate",
            "catalog/lone_surrogate.json",
            true,
        ),
        ("catalog_yaml_boolean", "catalog/yaml_boolean.yaml", true),
        ("catalog_missing_file", "catalog/no-such-file.json", false),
        // A folder is no longer refused: `count -c DIR` walks it (tests in cli_count).
    ] {
        let want = if loc { Loc::At(file) } else { Loc::File(file) };
        bad(name, &dir, &["count", "--catalog", file], want);
    }
    // The same tool id from two files names the second place and the first.
    let first = bad(
        "catalog_duplicate_id_across_files",
        &dir,
        &[
            "count",
            "-c",
            "catalog/duplicate_id_a.yaml",
            "-c",
            "catalog/duplicate_id_b.json",
        ],
        Loc::At("catalog/duplicate_id_b.json"),
    );
    assert!(first.contains("catalog/duplicate_id_a.yaml:2:5"), "{first}");
    // SERVER=PATH does not apply to a native catalog, which names its own servers.
    bad(
        "catalog_native_with_server_override",
        &dir,
        &["count", "-c", "gh=catalog/native_with_server.yaml"],
        Loc::At("catalog/native_with_server.yaml"),
    );
}

#[test]
fn bad_catalogs_fail_the_same_way_in_every_command() {
    let dir = cases();
    let file = "catalog/duplicate_key.json";
    let count = run(&dir, &["count", "-c", file]).stderr;
    let count = count.lines().next().unwrap().to_string();
    assert!(count.starts_with(&format!("error: {file}:2:")), "{count}");
    let search = run(&dir, &["search", "-c", file, "issue"]);
    let eval = run(
        &dir,
        &["eval", "-c", file, "--queries", "queries/bom.jsonl"],
    );
    for r in [search, eval] {
        assert_eq!(r.code, Some(2));
        assert_eq!(r.stderr.lines().next().unwrap(), count);
    }
}

#[test]
fn bom_and_ref_cycles_load() {
    let dir = cases();
    for (file, id) in [
        ("catalog/bom.json", "mcp__bom__ping"),
        ("catalog/bom.yaml", "Read"),
        ("catalog/ref_cycle.json", "mcp__ref_cycle__tree"),
    ] {
        let out = json(&good(&dir, &["count", "-c", file, "--format", "json"]));
        assert_eq!(out["tools"][0]["id"], id, "{file}");
    }
    // `$ref` is never resolved: a self-referencing schema counts as the text it is, once.
    let text = std::fs::read_to_string(dir.join("catalog/ref_cycle.json")).unwrap();
    let catalog = toolbudget::catalog::load_catalog_bytes(
        Path::new("ref_cycle.json"),
        text.into_bytes(),
        None,
    )
    .unwrap();
    let rendered = toolbudget::tokenize::render_json(catalog.get(0));
    assert!(
        rendered.contains(r##""$ref":"#/$defs/node""##),
        "{rendered}"
    );
    assert!(rendered.contains(r##""self":{"$ref":"#"}"##), "{rendered}");
    let want = toolbudget::tokenize::Tokenizer::O200kBase.count(&rendered);
    let out = json(&good(
        &dir,
        &["count", "-c", "catalog/ref_cycle.json", "--format", "json"],
    ));
    assert_eq!(out["total_tokens"], want);
}

// --- scenarios -------------------------------------------------------------------------------

/// Bad scenarios: (snapshot name, file, where the error must point).
const BAD_SCE25ARIOS: [(&str, &str, &str); 25] = [
    (
        "scenario_empty",
        "scenario/empty.yaml",
        "scenario/empty.yaml",
    ),
    (
        "scenario_truncated_json",
        "scenario/truncated.json",
        "scenario/truncated.json",
    ),
    (
        "scenario_yaml_tabs",
        "scenario/tabs.yaml",
        "scenario/tabs.yaml",
    ),
    (
        "scenario_alias_bomb",
        "scenario/alias_bomb.yaml",
        "scenario/alias_bomb.yaml",
    ),
    (
        "scenario_duplicate_key_yaml",
        "scenario/duplicate_key.yaml",
        "scenario/duplicate_key.yaml",
    ),
    (
        "scenario_duplicate_key_json",
        "scenario/duplicate_key.json",
        "scenario/duplicate_key.json",
    ),
    (
        "scenario_wrong_type",
        "scenario/wrong_type.yaml",
        "scenario/wrong_type.yaml",
    ),
    (
        "scenario_wrong_type_tokens",
        "scenario/wrong_type_tokens.yaml",
        "scenario/wrong_type_tokens.yaml",
    ),
    (
        "scenario_unknown_field",
        "scenario/unknown_field.yaml",
        "scenario/unknown_field.yaml",
    ),
    (
        "scenario_non_utf8",
        "scenario/non_utf8.yaml",
        "scenario/non_utf8.yaml",
    ),
    (
        "scenario_unknown_tokenizer",
        "scenario/unknown_tokenizer.yaml",
        "scenario/unknown_tokenizer.yaml",
    ),
    (
        "scenario_unknown_scorer",
        "scenario/unknown_scorer.yaml",
        "scenario/unknown_scorer.yaml",
    ),
    (
        "scenario_bad_catalog",
        "scenario/bad_catalog.yaml",
        "scenario/../catalog/truncated.json",
    ),
    (
        "scenario_unknown_tool",
        "scenario/unknown_tool.yaml",
        "scenario/unknown_tool.yaml",
    ),
    (
        "scenario_invalid_regex_query",
        "scenario/invalid_regex_query.yaml",
        "scenario/invalid_regex_query.yaml",
    ),
    (
        "scenario_invalid_regex_user_text",
        "scenario/invalid_regex_user.yaml",
        "scenario/invalid_regex_user.yaml",
    ),
    (
        "scenario_long_bm25_query",
        "scenario/long_bm25_query.yaml",
        "scenario/long_bm25_query.yaml",
    ),
    (
        "scenario_too_many_turns",
        "scenario/too_many_turns.yaml",
        "scenario/too_many_turns.yaml",
    ),
    (
        "scenario_no_turn",
        "scenario/no_turn.yaml",
        "scenario/no_turn.yaml",
    ),
    (
        "scenario_null_event",
        "scenario/null_event.yaml",
        "scenario/null_event.yaml",
    ),
    (
        "scenario_huge_tokens",
        "scenario/huge_tokens.yaml",
        "scenario/huge_tokens.yaml",
    ),
    (
        "scenario_two_documents",
        "scenario/two_documents.yaml",
        "scenario/two_documents.yaml",
    ),
    (
        "scenario_yaml_boolean",
        "scenario/yaml_boolean.yaml",
        "scenario/yaml_boolean.yaml",
    ),
    (
        "scenario_catalog_twice",
        "scenario/catalog_twice.yaml",
        "scenario/catalog_twice.yaml",
    ),
    (
        "scenario_huge_price",
        "scenario/huge_price.yaml",
        "scenario/huge_price.yaml",
    ),
];

#[test]
fn bad_scenarios_exit_2_with_located_errors() {
    let dir = cases();
    for (name, file, at) in BAD_SCE25ARIOS {
        bad(name, &dir, &["simulate", file], Loc::At(at));
    }
    bad(
        "scenario_missing_catalog",
        &dir,
        &["simulate", "scenario/missing_catalog.yaml"],
        Loc::At("scenario/missing_catalog.yaml"),
    );
    bad(
        "scenario_missing_file",
        &dir,
        &["simulate", "scenario/no-such-scenario.yaml"],
        Loc::File("scenario/no-such-scenario.yaml"),
    );
}

#[test]
fn scenario_with_bom_simulates() {
    let out = json(&good(
        &cases(),
        &["simulate", "scenario/bom.yaml", "--format", "json"],
    ));
    assert_eq!(out["scenarios"][0]["tool_count"], 2);
}

// --- labeled query files ---------------------------------------------------------------------

#[test]
fn bad_query_files_exit_2_with_located_errors() {
    let dir = cases();
    for (name, file, located) in [
        ("queries_truncated", "queries/truncated.jsonl", true),
        ("queries_yaml_tabs", "queries/tabs.yaml", true),
        ("queries_alias_bomb", "queries/alias_bomb.yaml", true),
        (
            "queries_duplicate_key_jsonl",
            "queries/duplicate_key.jsonl",
            true,
        ),
        (
            "queries_duplicate_key_yaml",
            "queries/duplicate_key.yaml",
            true,
        ),
        (
            "queries_duplicate_key_json",
            "queries/duplicate_key.json",
            true,
        ),
        ("queries_duplicate_id", "queries/duplicate_id.jsonl", true),
        ("queries_wrong_type_jsonl", "queries/wrong_type.jsonl", true),
        ("queries_wrong_type_yaml", "queries/wrong_type.yaml", true),
        ("queries_unknown_field", "queries/unknown_field.jsonl", true),
        (
            "queries_unknown_field_yaml",
            "queries/unknown_field.yaml",
            true,
        ),
        ("queries_non_utf8", "queries/non_utf8.jsonl", true),
        ("queries_list_line", "queries/list_line.jsonl", true),
        ("queries_unknown_tool", "queries/unknown_tool.jsonl", true),
        ("queries_not_a_list", "queries/not_a_list.yaml", true),
        ("queries_empty", "queries/empty.jsonl", false),
        ("queries_missing_file", "queries/no-such-file.jsonl", false),
    ] {
        let loc = if located {
            Loc::At(file)
        } else {
            Loc::File(file)
        };
        bad(
            name,
            &dir,
            &["eval", "-c", BUILTINS, "--queries", file],
            loc,
        );
    }
}

#[test]
fn query_file_with_bom_evaluates() {
    let out = json(&good(
        &cases(),
        &[
            "eval",
            "-c",
            BUILTINS,
            "--queries",
            "queries/bom.jsonl",
            "--format",
            "json",
        ],
    ));
    assert_eq!(out["query_count"], 1);
}

// --- queries and flags on the command line ---------------------------------------------------

#[test]
fn bad_cli_queries_and_flags_exit_2() {
    let dir = cases();
    let long_regex = "a".repeat(10_000);
    let long_bm25 = "read ".repeat(101);
    let search = |scorer: &str, q: &str| -> Vec<String> {
        ["search", "-c", BUILTINS, "--scorer", scorer, q]
            .map(String::from)
            .to_vec()
    };
    for (name, args) in [
        ("cli_invalid_regex", search("regex", "read(")),
        ("cli_invalid_regex_class", search("regex", "[z-a]")),
        ("cli_unknown_unicode_class", search("regex", r"\p{Nope}")),
        ("cli_regex_10000_chars", search("regex", &long_regex)),
        (
            "cli_regex_too_big_compiled",
            search("regex", r"\w{1000}{1000}"),
        ),
        ("cli_bm25_query_too_long", search("bm25", &long_bm25)),
        ("cli_unknown_scorer", search("magic", "read")),
        (
            "cli_unknown_tokenizer",
            ["count", "-c", BUILTINS, "--tokenizer", "gpt2"]
                .map(String::from)
                .to_vec(),
        ),
        (
            "cli_unknown_render",
            ["count", "-c", BUILTINS, "--render", "xml"]
                .map(String::from)
                .to_vec(),
        ),
        (
            "cli_unknown_format",
            ["count", "-c", BUILTINS, "--format", "yaml"]
                .map(String::from)
                .to_vec(),
        ),
        (
            "cli_limit_above_maximum",
            ["search", "-c", BUILTINS, "--limit", "25", "read"]
                .map(String::from)
                .to_vec(),
        ),
        (
            "cli_negative_limit",
            ["search", "-c", BUILTINS, "--limit", "-1", "read"]
                .map(String::from)
                .to_vec(),
        ),
        (
            "cli_eval_unknown_scorer",
            [
                "eval",
                "-c",
                BUILTINS,
                "--queries",
                "queries/bom.jsonl",
                "-s",
                "magic",
            ]
            .map(String::from)
            .to_vec(),
        ),
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        bad(name, &dir, &args, Loc::Usage);
    }
}

#[test]
fn odd_keyword_queries_are_not_errors() {
    let dir = cases();
    let search = |q: &str| -> Value {
        json(&good(
            &dir,
            &["search", "-c", BUILTINS, "--format", "json", "--", q],
        ))
    };
    // Unknown select: names are reported, not fatal; repeats are listed once.
    let out = search("select:Read,NoSuchTool,Read,,");
    let ids: Vec<&str> = out["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["Read"]);
    assert_eq!(out["not_found"], serde_json::json!(["NoSuchTool"]));
    for q in [
        "select:", "+", "+ + +", "", "   ", "mcp__", "-", "\u{200b}", "+read +",
    ] {
        let out = search(q);
        assert!(out["matches"].is_array(), "{q:?}");
    }
    // 10,000 required terms (as long as an argument may be): an answer, not a hang.
    let many: String = (0..10_000).map(|i| format!("+t{i} ")).collect();
    assert_eq!(search(&many)["matches"], serde_json::json!([]));
}

// --- huge inputs, generated ------------------------------------------------------------------

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

#[test]
fn deep_nesting_is_refused_at_the_depth_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let deep = 10_000;
    write(
        dir,
        "deep.json",
        format!(
            "{{\"tools\": [{{\"name\": \"a\", \"inputSchema\": {}1{}}}]}}",
            "{\"a\": ".repeat(deep),
            "}".repeat(deep)
        ),
    );
    write(
        dir,
        "deep_flow.yaml",
        format!(
            "builtins:\n  - name: a\n    input_schema: {}1{}\n",
            "{a: ".repeat(deep),
            "}".repeat(deep)
        ),
    );
    write(
        dir,
        "deep_block.yaml",
        format!(
            "builtins:\n  - name: a\n    input_schema:\n      {}1\n",
            "- ".repeat(deep)
        ),
    );
    write(
        dir,
        "deep_list.json",
        format!("{}{}", "[".repeat(deep), "]".repeat(deep)),
    );
    for (name, file) in [
        ("huge_deep_json", "deep.json"),
        ("huge_deep_flow_yaml", "deep_flow.yaml"),
        ("huge_deep_block_yaml", "deep_block.yaml"),
        ("huge_deep_list_json", "deep_list.json"),
    ] {
        let first = bad(name, dir, &["count", "-c", file], Loc::At(file));
        assert!(first.contains("nesting deeper than 12"), "{first}");
    }
    write(
        dir,
        "deep_queries.jsonl",
        format!(
            "{{\"id\": \"q1\", \"query\": {}\"x\"{}, \"expected\": [\"Read\"]}}\n",
            "[".repeat(deep),
            "]".repeat(deep)
        ),
    );
    let builtins =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogs/builtins.yaml");
    let r = run(
        dir,
        &[
            "eval",
            "-c",
            builtins.to_str().unwrap(),
            "--queries",
            "deep_queries.jsonl",
        ],
    );
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.starts_with("error: deep_queries.jsonl:1:"),
        "{}",
        r.stderr
    );
    write(
        dir,
        "deep_scenario.yaml",
        format!(
            "catalogs: [x.json]\nconversation:\n  - user: hi\n    calls:\n      - tool: Read\n        input: {}1{}\n",
            "{a: ".repeat(deep),
            "}".repeat(deep)
        ),
    );
    let first = bad(
        "huge_deep_scenario",
        dir,
        &["simulate", "deep_scenario.yaml"],
        Loc::At("deep_scenario.yaml"),
    );
    assert!(first.contains("nesting deeper than 128 levels"), "{first}");
}

#[test]
fn nesting_up_to_the_limit_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The schema sits at depth 3 (object, tools list, tool). JSON loads 127 nested
    // containers (serde_json refuses the 128th), YAML 128.
    let json_ok = toolbudget::document::MAX_JSON_DEPTH - 3;
    for (file, depth, ok) in [
        ("ok.json", json_ok, true),
        ("over.json", json_ok + 1, false),
    ] {
        write(
            dir,
            file,
            format!(
                "{{\"tools\": [{{\"name\": \"a\", \"inputSchema\": {}1{}}}]}}",
                "{\"a\": ".repeat(depth),
                "}".repeat(depth)
            ),
        );
        let r = run(dir, &["count", "-c", file]);
        assert_eq!(r.code, Some(if ok { 0 } else { 2 }), "{file}: {}", r.stderr);
    }
    let yaml_ok = toolbudget::document::MAX_YAML_DEPTH - 3;
    for (file, depth, ok) in [
        ("ok.yaml", yaml_ok, true),
        ("over.yaml", yaml_ok + 1, false),
    ] {
        write(
            dir,
            file,
            format!(
                "builtins:\n  - name: a\n    input_schema: {}1{}\n",
                "{a: ".repeat(depth),
                "}".repeat(depth)
            ),
        );
        let r = run(dir, &["count", "-c", file]);
        assert_eq!(r.code, Some(if ok { 0 } else { 2 }), "{file}: {}", r.stderr);
    }
}

#[test]
fn ten_megabyte_description_loads_and_counts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let description = "word ".repeat(2_000_000);
    let tools = serde_json::json!({"tools": [{"name": "big", "description": description, "inputSchema": {"type": "object"}}]});
    write(dir, "big.json", tools.to_string());
    let out = json(&good(
        dir,
        &[
            "search", "-c", "big.json", "--scorer", "bm25", "--format", "json", "word",
        ],
    ));
    assert_eq!(out["matches"][0]["id"], "mcp__big__big");
    let out = json(&good(dir, &["count", "-c", "big.json", "--format", "json"]));
    // "word " is one token; the rest of the rendering adds a handful.
    let total = out["total_tokens"].as_u64().unwrap();
    assert!((2_000_000..2_000_100).contains(&total), "{total}");
}

#[test]
fn hundred_thousand_tools_load_and_search() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let tools: Vec<Value> = (0..100_000)
        .map(|i| serde_json::json!({"name": format!("tool_{i}"), "description": format!("Does thing {} of kind {}.", i, i % 97)}))
        .collect();
    write(
        dir,
        "many.json",
        serde_json::json!({ "tools": tools }).to_string(),
    );
    for scorer in ["keyword", "bm25", "regex"] {
        let out = json(&good(
            dir,
            &[
                "search",
                "-c",
                "many=many.json",
                "--scorer",
                scorer,
                "--format",
                "json",
                "tool_99999",
            ],
        ));
        assert_eq!(out["total_tools"], 100_000, "{scorer}");
        assert_eq!(out["matches"][0]["id"], "mcp__many__tool_99999", "{scorer}");
    }
    // 100,000 servers of one tool each: the server list is built in linear time.
    let servers: Vec<Value> = (0..100_000)
        .map(|i| serde_json::json!({"name": format!("s{i}"), "description": "one", "tools": [{"name": "t"}]}))
        .collect();
    write(
        dir,
        "servers.json",
        serde_json::json!({ "servers": servers }).to_string(),
    );
    let out = json(&good(
        dir,
        &[
            "search",
            "-c",
            "servers.json",
            "--format",
            "json",
            "select:mcp__s99999__t",
        ],
    ));
    assert_eq!(out["matches"][0]["id"], "mcp__s99999__t");
}

#[test]
fn scenario_with_twenty_thousand_calls_in_json_finishes() {
    // Every call's tool id keeps its position: locating them one by one rescanned the JSON
    // text each time (quadratic: this file took minutes); now one pass builds all positions.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "gh.json",
        std::fs::read(cases().join("scenario/gh.json")).unwrap(),
    );
    let turns: Vec<Value> = (0..20_000)
        .map(|i| serde_json::json!({"user": format!("turn {i}"), "calls": [{"tool": "mcp__gh__create_issue", "result_tokens": 3}]}))
        .collect();
    let mut bad_turns = turns.clone();
    write(
        dir,
        "many.json",
        serde_json::json!({"catalogs": [{"path": "gh.json", "server": "gh"}], "conversation": turns}).to_string(),
    );
    let out = json(&good(dir, &["simulate", "many.json", "--format", "json"]));
    assert_eq!(out["scenarios"][0]["tool_count"], 2);
    // The last call names an unknown tool: located without rescanning either.
    bad_turns[19_999]["calls"][0]["tool"] = Value::from("mcp__gh__nope");
    write(
        dir,
        "bad.json",
        serde_json::json!({"catalogs": [{"path": "gh.json", "server": "gh"}], "conversation": bad_turns}).to_string(),
    );
    bad(
        "huge_scenario_unknown_tool_last",
        dir,
        &["simulate", "bad.json"],
        Loc::At("bad.json"),
    );
}

// --- resource limits -------------------------------------------------------------------------

#[test]
fn file_size_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let limit = toolbudget::document::MAX_FILE_BYTES as usize;
    // Valid JSON just past the limit: refused before it is read.
    let mut text = String::from("{\"tools\": [], \"pad\": \"");
    text.push_str(&" ".repeat(limit + 1 - text.len() - 2));
    text.push_str("\"}");
    assert_eq!(text.len(), limit + 1);
    write(dir, "huge.json", &text);
    bad(
        "limit_file_size_catalog",
        dir,
        &["count", "-c", "huge.json"],
        Loc::File("huge.json"),
    );
    std::fs::rename(dir.join("huge.json"), dir.join("huge.jsonl")).unwrap();
    let builtins =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogs/builtins.yaml");
    let r = run(
        dir,
        &[
            "eval",
            "-c",
            builtins.to_str().unwrap(),
            "--queries",
            "huge.jsonl",
        ],
    );
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.starts_with(
            "error: huge.jsonl: file is 67108865 bytes, larger than the limit of 67108864 bytes"
        ),
        "{}",
        r.stderr
    );
}

#[test]
fn tool_count_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let limit = toolbudget::catalog::MAX_TOOLS;
    // Two files of minimal tools; the limit applies to all catalogs together.
    let half = limit / 2 + 1;
    for (file, prefix) in [("a.json", "a"), ("b.json", "b")] {
        let mut text = String::from("[");
        for i in 0..half {
            if i > 0 {
                text.push(',');
            }
            text.push_str(&format!("{{\"name\":\"{prefix}{i}\"}}"));
        }
        text.push(']');
        write(dir, file, text);
    }
    let r = run(dir, &["search", "-c", "a.json", "-c", "b.json", "a1"]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert_eq!(
        r.stderr.trim_end(),
        format!(
            "error: {} tools loaded, more than the limit of {limit}",
            2 * half
        )
    );
    // One file alone is within the limit.
    let out = json(&good(
        dir,
        &["search", "-c", "a.json", "--format", "json", "a1"],
    ));
    assert_eq!(out["total_tools"], half);
}

#[test]
fn yaml_node_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // 90,000 tools of a mapping, a key and a value each: 270,000 nodes, past 250,000.
    let mut text = String::from("builtins:\n");
    for i in 0..90_000 {
        text.push_str(&format!("  - name: t{i}\n"));
    }
    write(dir, "many.yaml", text);
    let first = bad(
        "limit_yaml_nodes",
        dir,
        &["count", "-c", "many.yaml"],
        Loc::At("many.yaml"),
    );
    assert!(first.contains("more than 250000 nodes"), "{first}");
    // The same tools as JSON load.
    let tools: Vec<Value> = (0..90_000)
        .map(|i| serde_json::json!({"name": format!("t{i}")}))
        .collect();
    write(dir, "many.json", Value::Array(tools).to_string());
    let out = json(&good(
        dir,
        &["search", "-c", "many.json", "--format", "json", "t1"],
    ));
    assert_eq!(out["total_tools"], 90_000);
}

#[test]
fn query_length_limits_sit_exactly_at_the_limit() {
    let dir = cases();
    let at = |scorer: &str, q: &str| {
        run(
            &dir,
            &[
                "search", "-c", BUILTINS, "--scorer", scorer, "--format", "json", q,
            ],
        )
    };
    let regex_max = toolbudget::search::regex_scorer::MAX_PATTERN_CHARS;
    assert_eq!(at("regex", &"a".repeat(regex_max)).code, Some(0));
    let r = at("regex", &"a".repeat(regex_max + 1));
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stderr.trim_end(),
        "error: regex pattern is 201 characters long; at most 200 are allowed"
    );
    let bm25_max = toolbudget::search::bm25::MAX_QUERY_CHARS;
    assert_eq!(at("bm25", &"r".repeat(bm25_max)).code, Some(0));
    let r = at("bm25", &"r".repeat(bm25_max + 1));
    assert_eq!(r.code, Some(2));
    assert_eq!(
        r.stderr.trim_end(),
        "error: bm25 query is 501 characters long; at most 500 are allowed"
    );
    // The keyword scorer returns at most 20: --limit 20 is the most it takes, and says how
    // many more matched (a larger --limit is an error, cli_limit_above_maximum).
    let max = toolbudget::search::keyword::MAX_LIMIT.to_string();
    let out = json(&good(
        &dir,
        &[
            "search", "-c", BUILTINS, "--limit", &max, "--format", "json", "e",
        ],
    ));
    let n = out["matches"].as_array().unwrap().len();
    assert_eq!(n, toolbudget::search::keyword::MAX_LIMIT, "{out}");
    assert_eq!(out["shown"].as_u64(), Some(n as u64), "{out}");
    assert!(out["matched"].as_u64().unwrap() > n as u64, "{out}");
}

// --- regressions found by fuzzing ------------------------------------------------------------

#[test]
fn fuzz_found_yaml_that_overflowed_a_two_megabyte_stack() {
    // Nested flow mappings in flow sequences (`[B: [B: ...`), 739 bytes: within the depth
    // limit, but parsing them used more than the 2 MiB of a test thread or rayon worker in a
    // debug build. YAML is now parsed on a thread with a stack of known size. This test runs
    // on a test thread (2 MiB), as the overflow did.
    let file = cases().join("catalog/fuzz_stack_overflow.yaml");
    let bytes = std::fs::read(&file).unwrap();
    let err = toolbudget::catalog::load_catalog_bytes(Path::new("f.yaml"), bytes, None)
        .expect_err("not a catalog");
    assert!(
        err.to_string().starts_with("f.yaml:1:719: invalid YAML:"),
        "{err}"
    );
    // The deepest YAML accepted loads on a 2 MiB thread too.
    let depth = toolbudget::document::MAX_YAML_DEPTH - 3;
    let text = format!(
        "builtins:\n  - name: a\n    input_schema: {{x: {}1{}}}\n",
        "[{a: ".repeat((depth - 1) / 2),
        "}]".repeat((depth - 1) / 2)
    );
    let catalog =
        toolbudget::catalog::load_catalog_bytes(Path::new("d.yaml"), text.into_bytes(), None)
            .unwrap();
    assert_eq!(catalog.get(0).id, "a");
}
