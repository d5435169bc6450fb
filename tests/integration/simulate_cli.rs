//! `toolbudget simulate` end to end: exit codes, located errors, deterministic json.

use assert_cmd::Command;

fn write(dir: &std::path::Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const CATALOG: &str = r#"{"tools": [
  {"name": "create_issue", "description": "Create a new issue in a project.", "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}}},
  {"name": "list_issues", "description": "List issues of a project.", "inputSchema": {"type": "object"}}
]}"#;

#[test]
fn bad_scenarios_exit_2_with_file_line_column() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gh.json", CATALOG);
    for (text, want) in [
        (
            "catalogs: [{path: gh.json, server: gh}]\nconversation:\n  - user: hi\n    calls:\n      - tool: mcp__gh__nope\n",
            "s.yaml:5:15: call to tool \"mcp__gh__nope\"",
        ),
        (
            "catalogs: [gh.json]\nconversation:\n  - user: hi\n    tokens: -1\n",
            "s.yaml:4:13: conversation[0].tokens: invalid value: integer `-1`, expected a whole number of tokens ≥ 0",
        ),
        (
            "catalogs: [gh.json]\nextra: 1\nconversation: [{user: hi}]\n",
            "s.yaml:2:8: unknown field `extra`, expected one of `name`",
        ),
    ] {
        let s = write(dir.path(), "s.yaml", text);
        let out = Command::cargo_bin("toolbudget")
            .unwrap()
            .args(["simulate", s.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains(want), "{err}");
    }
}

#[test]
fn json_is_byte_identical_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gh.json", CATALOG);
    let s = write(
        dir.path(),
        "s.yaml",
        "name: tiny\nsystem_prompt_tokens: 100\ncatalogs: [{path: gh.json, server: gh}]\nconversation:\n  - user: hi\n  - user: open an issue\n    calls: [{tool: mcp__gh__create_issue, query: \"create issue\", result_tokens: 50}]\n",
    );
    let run = || {
        Command::cargo_bin("toolbudget")
            .unwrap()
            .args([
                "simulate",
                s.to_str().unwrap(),
                "--format",
                "json",
                "--per-request",
            ])
            .output()
            .unwrap()
    };
    let a = run();
    if a.status.code() == Some(2) && String::from_utf8_lossy(&a.stderr).contains("not built yet") {
        eprintln!("skipping: the keyword scorer is not in this build");
        return;
    }
    assert_eq!(
        a.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );
    let b = run();
    assert_eq!(a.stdout, b.stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let s = &v["scenarios"][0];
    assert_eq!(s["tool_count"], 2);
    assert_eq!(s["deferred_count"], 2);
    assert_eq!(s["deferred"]["searches"], 1);
    // Every request's parts add up to its input.
    for r in s["requests"].as_array().unwrap() {
        let p = &r["parts"];
        let sum: u64 = toolbudget::simulate::request::PARTS
            .iter()
            .map(|k| p[k].as_u64().unwrap())
            .sum();
        assert_eq!(sum, r["input_tokens"].as_u64().unwrap());
    }
}

fn toolbudget(args: &[&str]) -> std::process::Output {
    Command::cargo_bin("toolbudget")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout_ok(args: &[&str]) -> String {
    let out = toolbudget(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// One catalog, one tool count: `count`, `simulate` and `eval` agree on the built-ins (39,
/// ToolSearch included), name the search tool, and never rank it.
#[test]
fn every_command_counts_the_same_tools_and_names_the_search_tool() {
    let catalog = "fixtures/catalogs/builtins.yaml";
    let count: serde_json::Value = serde_json::from_str(&stdout_ok(&[
        "count",
        "--catalog",
        catalog,
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(count["tool_count"], 39);
    assert_eq!(count["search_tool"], "ToolSearch");
    assert!(
        stdout_ok(&["count", "--catalog", catalog])
            .contains("ToolSearch is the search tool: counted and sent in deferred mode")
    );
    let sim: serde_json::Value = serde_json::from_str(&stdout_ok(&[
        "simulate",
        "scenarios/builtins-core-deferred.yaml",
        "--format",
        "json",
    ]))
    .unwrap();
    let s = &sim["scenarios"][0];
    assert_eq!(s["tool_count"], count["tool_count"]);
    // Eager sends every tool but the search tool; deferred the ten core tools and ToolSearch.
    assert_eq!(s["eager"]["tools_sent"], 38);
    assert_eq!(s["deferred"]["tools_sent"], 11);
    assert_eq!(s["deferred_count"], 28);
    assert_eq!(s["settings"]["search_tool"], "ToolSearch");
    let dir = tempfile::tempdir().unwrap();
    let q = write(
        dir.path(),
        "q.jsonl",
        "{\"id\": \"q1\", \"query\": \"search the deferred tools and load them\", \"expected\": [\"Read\"]}\n",
    );
    let eval: serde_json::Value = serde_json::from_str(&stdout_ok(&[
        "eval",
        "--catalog",
        catalog,
        "--queries",
        q.to_str().unwrap(),
        "--scorer",
        "bm25",
        "--scorer",
        "keyword",
        "--per-query",
        "--format",
        "json",
    ]))
    .unwrap();
    assert_eq!(eval["tool_count"], count["tool_count"]);
    assert_eq!(
        (eval["ranked_tools"].as_u64(), eval["search_tool"].as_str()),
        (Some(38), Some("ToolSearch"))
    );
    for r in eval["results"].as_array().unwrap() {
        let top = r["per_query"][0]["top"].as_array().unwrap();
        assert!(!top.is_empty(), "{r}");
        assert!(top.iter().all(|t| t != "ToolSearch"), "{r}");
    }
    // A label naming the search tool is an input error at the query.
    let bad = write(
        dir.path(),
        "bad.jsonl",
        "{\"id\": \"q1\", \"query\": \"load tools\", \"expected\": [\"ToolSearch\"]}\n",
    );
    let out = toolbudget(&[
        "eval",
        "--catalog",
        catalog,
        "--queries",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: ")
            && err.contains("bad.jsonl:1:1: query \"q1\" expects ToolSearch"),
        "{err}"
    );
}

const FAILING: &str = "name: all-fail\nsystem_prompt_tokens: 100\ncatalogs: [{path: gh.json, server: gh}]\ndeferred: {retry: []}\nconversation:\n  - user: open an issue\n    calls: [{tool: mcp__gh__create_issue, query: \"zzz qqq\", result_tokens: 500}]\n  - user: list them\n    calls: [{tool: mcp__gh__list_issues, query: \"www vvv\", result_tokens: 500}]\n";

/// With `retry: []` and every call failing, no format shows a saving without the failures
/// beside it.
#[test]
fn failed_calls_are_in_every_format_beside_the_saving() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gh.json", CATALOG);
    let s = write(dir.path(), "s.yaml", FAILING);
    let s = s.to_str().unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&stdout_ok(&["simulate", s, "--format", "json"])).unwrap();
    let r = &json["scenarios"][0];
    assert_eq!(r["deferred"]["failed_calls"], 2);
    assert_eq!(r["deferred"]["tool_calls"], 0);
    let caveat = r["savings"]["caveats"][0].as_str().unwrap();
    assert!(
        caveat.starts_with(
            "unequal work: tool calls made, eager 2 and deferred 0 (deferred: 2 failed"
        ),
        "{caveat}"
    );
    let table = stdout_ok(&["simulate", s]);
    assert!(
        table.contains("calls failed / premature / unavailable"),
        "{table}"
    );
    assert!(table.contains("2 / 0 / 0"), "{table}");
    assert!(
        table.contains("%*") && table.contains("* unequal work"),
        "{table}"
    );
    let md = stdout_ok(&["simulate", s, "--format", "md"]);
    assert!(
        md.contains("| 2 / 0 / 0 |") && md.contains("* unequal work"),
        "{md}"
    );
    let csv = stdout_ok(&["simulate", s, "--format", "csv"]);
    let mut rd = csv::Reader::from_reader(csv.as_bytes());
    let header: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
    let row: Vec<String> = rd
        .records()
        .next()
        .unwrap()
        .unwrap()
        .iter()
        .map(String::from)
        .collect();
    let col = |name: &str| row[header.iter().position(|h| h == name).unwrap()].clone();
    assert_eq!(col("deferred_failed_calls"), "2");
    assert_eq!(col("deferred_tool_calls"), "0");
    assert!(col("savings_caveats").starts_with("unequal work"));
    let err = String::from_utf8(toolbudget(&["simulate", s, "--format", "csv"]).stderr).unwrap();
    assert!(err.contains("warning: all-fail: unequal work"), "{err}");
}

/// A conversation that does not fit the model's window is marked in every format and claims
/// no saving.
#[test]
fn a_request_beyond_the_window_is_marked_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gh.json", CATALOG);
    let s = write(
        dir.path(),
        "s.yaml",
        "name: too-big\nsystem_prompt_tokens: 1500\nmodel_overrides: {context_window: 2000}\ncatalogs: [{path: gh.json, server: gh}]\nconversation:\n  - user: hi\n  - user: open an issue\n    calls: [{tool: mcp__gh__create_issue, query: \"create issue\", result_tokens: 400}]\n",
    );
    let s = s.to_str().unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&stdout_ok(&["simulate", s, "--format", "json"])).unwrap();
    let r = &json["scenarios"][0];
    assert_eq!(r["eager"]["fits_window"], false);
    assert!(r["savings"]["total_input_pct"].is_null());
    assert!(r["savings"]["first_request_pct"].is_null());
    let caveats = r["savings"]["caveats"].to_string();
    assert!(
        caveats.contains("does not fit: ") && caveats.contains("% of a 2,000 window"),
        "{caveats}"
    );
    let table = stdout_ok(&["simulate", s]);
    assert!(
        table.contains("(does not fit)") && table.contains("n/a*"),
        "{table}"
    );
    let md = stdout_ok(&["simulate", s, "--format", "md"]);
    assert!(
        md.contains("(does not fit)") && md.contains("does not fit: "),
        "{md}"
    );
    let csv = stdout_ok(&["simulate", s, "--format", "csv"]);
    assert!(
        csv.contains(",false,") && csv.contains("does not fit: "),
        "{csv}"
    );
    let per_request = stdout_ok(&["simulate", s, "--format", "csv", "--per-request"]);
    assert!(
        per_request.lines().any(|l| l.ends_with(",false")),
        "{per_request}"
    );
}

/// `--search-latency`: json is deterministic unless asked to measure, and says which it used.
#[test]
fn the_output_says_which_search_latency_it_used() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "gh.json", CATALOG);
    let s = write(
        dir.path(),
        "s.yaml",
        "name: tiny\ncatalogs: [{path: gh.json, server: gh}]\ndeferred: {retry: [select]}\nconversation:\n  - user: open an issue\n    calls: [{tool: mcp__gh__create_issue, query: \"zzz\"}]\n",
    );
    let s = s.to_str().unwrap();
    let modeled: serde_json::Value =
        serde_json::from_str(&stdout_ok(&["simulate", s, "--format", "json"])).unwrap();
    let m = &modeled["scenarios"][0];
    assert_eq!(m["settings"]["search_latency"], "modeled");
    assert!(m["deferred"].get("measured_search_us").is_none());
    assert_eq!(m["settings"]["search_latency_ms"], 1.0);
    let measured: serde_json::Value = serde_json::from_str(&stdout_ok(&[
        "simulate",
        s,
        "--format",
        "json",
        "--search-latency",
        "measured",
    ]))
    .unwrap();
    let m = &measured["scenarios"][0];
    assert_eq!(m["settings"]["search_latency"], "measured");
    // The modeled 1 ms is not what a measured run used: it is absent, not 1.0.
    assert!(m["settings"].get("search_latency_ms").is_none(), "{m}");
    // The miss and its select: retry: both searches the replay sent are timed.
    assert_eq!(m["deferred"]["searches"], 1);
    assert_eq!(m["deferred"]["retries"], 1);
    assert_eq!(m["deferred"]["measured_search_us"]["searches"], 2);
    let table = stdout_ok(&["simulate", s]);
    assert!(
        table.contains("search latency: measured here (keyword scorer, the 2 searches"),
        "{table}"
    );
}

/// The deferred list as its own number (#27's audit: it had a column only in `--per-request`):
/// the json, the CSV row and the table carry it, and it adds up from the requests that sent
/// it; eager sends none; its cost is those tokens at the input price, no caching.
#[test]
fn the_deferred_list_is_its_own_number_in_every_format() {
    let s = "scenarios/builtins-plus-mcp.yaml";
    let v: serde_json::Value = serde_json::from_str(&stdout_ok(&[
        "simulate",
        s,
        "--format",
        "json",
        "--per-request",
    ]))
    .unwrap();
    let sc = &v["scenarios"][0];
    let list = sc["deferred"]["parts"]["deferred_list"].as_u64().unwrap();
    let per_request: u64 = sc["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["mode"] == "deferred")
        .map(|r| r["parts"]["deferred_list"].as_u64().unwrap())
        .sum();
    assert_eq!(list, per_request);
    assert_eq!(list, 7280);
    assert_eq!(sc["deferred"]["first_request_deferred_list_tokens"], 910);
    assert_eq!(sc["eager"]["parts"]["deferred_list"], 0);
    // claude-sonnet-4.5: $3 per million input tokens.
    let cost = sc["deferred"]["deferred_list_cost_usd"].as_f64().unwrap();
    assert!((cost - 7280.0 * 3.0 / 1e6).abs() < 1e-9, "{cost}");
    let csv_text = stdout_ok(&["simulate", s, "--format", "csv"]);
    let mut rows = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = rows.headers().unwrap().clone();
    let row = rows.records().next().unwrap().unwrap();
    let cell = |name: &str| row[headers.iter().position(|h| h == name).unwrap()].to_string();
    assert_eq!(cell("deferred_first_request_list_tokens"), "910");
    assert_eq!(cell("deferred_list_tokens"), "7280");
    assert_eq!(cell("deferred_list_cost_usd"), "0.02184");
    let md = stdout_ok(&[
        "simulate",
        s,
        "--format",
        "md",
        "--search-latency",
        "modeled",
    ]);
    assert!(
        md.contains("|   of which the deferred list | – | 910 |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| deferred list, whole conversation (cost, no caching) | – | 7,280 ($0.0218) |"
        ),
        "{md}"
    );
    assert!(!md.contains("tools + deferred list"), "{md}");
}

/// `--prices FILE` bills with that table: sonnet 4.6's input price doubled in a copy of the
/// bundled table doubles the input part of the dollars, and the settings name the table.
#[test]
fn prices_flag_bills_with_the_given_table() {
    let dir = tempfile::tempdir().unwrap();
    let bundled =
        std::fs::read_to_string(crate::support::repo("data/prices/genai-prices.json")).unwrap();
    let mut table: serde_json::Value = serde_json::from_str(&bundled).unwrap();
    for provider in table["providers"].as_array_mut().unwrap() {
        for model in provider["models"].as_array_mut().unwrap() {
            if model["id"] != "claude-sonnet-4-6" {
                continue;
            }
            // One price set, or dated sets each under `prices`.
            match model["prices"].as_array_mut() {
                Some(dated) => {
                    for entry in dated {
                        entry["prices"]["input_mtok"] = serde_json::json!(6);
                    }
                }
                None => model["prices"]["input_mtok"] = serde_json::json!(6),
            }
        }
    }
    table["source"]["snapshot_date"] = serde_json::json!("2027-01-31");
    let prices = write(dir.path(), "prices.json", &table.to_string());
    write(dir.path(), "gh.json", CATALOG);
    let s = write(
        dir.path(),
        "s.yaml",
        "model: claude-sonnet-4-6\nsystem_prompt_tokens: 1000\ncatalogs: [{path: gh.json, server: gh}]\nconversation:\n  - user: hi\n    reply_tokens: 100\n",
    );
    let run = |extra: &[&str]| {
        let out = crate::support::toolbudget()
            .args(extra)
            .args(["simulate", s.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let eager = &v["scenarios"][0]["eager"];
        (
            eager["total_input_tokens"].as_u64().unwrap() as f64,
            eager["cost_usd"]["without_caching"].as_f64().unwrap(),
        )
    };
    let (tokens, bundled_cost) = run(&[]);
    let (same_tokens, given_cost) = run(&["--prices", prices.to_str().unwrap()]);
    assert_eq!(tokens, same_tokens);
    let output_cost = 100.0 * 15.0 / 1e6;
    assert!((bundled_cost - (tokens * 3.0 / 1e6 + output_cost)).abs() < 1e-9);
    assert!((given_cost - (tokens * 6.0 / 1e6 + output_cost)).abs() < 1e-9);

    let text = crate::support::toolbudget()
        .args([
            "--prices",
            prices.to_str().unwrap(),
            "simulate",
            s.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("2027-01-31"), "{text}");

    // A table that is not one: exit 2 at its line:column, nothing run.
    let bad = write(dir.path(), "bad.json", "{\"source\": 3}");
    let out = crate::support::toolbudget()
        .args([
            "--prices",
            bad.to_str().unwrap(),
            "simulate",
            s.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).starts_with(&format!("error: {}:1:", bad.display())),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `simulate --calibration FILE` says in every format what the file changed: the entry applied
/// (a fit on the logged `claude-sonnet-4-5-20250929` applies to a scenario of
/// `claude-sonnet-4.5`, the same model of the price table), the system prompt it replaced and
/// the scale; or that no entry applies.
#[test]
fn calibration_is_named_with_what_it_changed_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let cal = |model: &str| {
        format!(
            r#"{{"calibrations": [{{"model": "{model}", "counter": "anthropic-estimate",
            "system_prompt_tokens": 9871.2, "scale": 1.137, "tool_overhead_tokens": 485,
            "requests": 40, "r2": 0.99, "rms_residual_tokens": 3.0}}]}}"#
        )
    };
    let logged = write(
        dir.path(),
        "logged.json",
        &cal("claude-sonnet-4-5-20250929"),
    );
    let other = write(dir.path(), "other.json", &cal("claude-opus-4-5"));
    let scenario = crate::support::repo("scenarios/hi.yaml");
    let run = |cal: &std::path::Path, format: &str| {
        let out = crate::support::toolbudget()
            .args(["simulate", scenario.to_str().unwrap(), "--format", format])
            .arg("--calibration")
            .arg(cal)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let v: serde_json::Value = serde_json::from_str(&run(&logged, "json")).unwrap();
    let c = &v["scenarios"][0]["calibration"];
    assert_eq!(c["file"], logged.display().to_string());
    assert_eq!(c["applied"]["model"], "claude-sonnet-4-5-20250929");
    // hi.yaml's own 3,000-token system prompt, replaced by the fitted 9,871.
    assert_eq!(
        c["applied"]["system_prompt_tokens"],
        serde_json::json!([3000, 9871])
    );
    assert_eq!(c["applied"]["scale"], 1.137);
    let sentence = "applied (entry claude-sonnet-4-5-20250929 / anthropic-estimate): system \
                    prompt 3000 → 9871 tokens, every counted token × 1.137";
    for format in ["table", "csv", "md"] {
        let text = run(&logged, format);
        assert!(text.contains(sentence), "{format}: {text}");
    }
    // An entry of another model: said, and nothing changed.
    let v: serde_json::Value = serde_json::from_str(&run(&other, "json")).unwrap();
    let s = &v["scenarios"][0];
    assert_eq!(s["calibration"]["applied"], serde_json::Value::Null);
    assert_eq!(
        s["calibration"]["looked_for"],
        "claude-sonnet-4.5 / anthropic-estimate"
    );
    assert_eq!(s["eager"]["first_request_tokens"], 42940);
    assert!(run(&other, "table").contains(
        "no applied entry for claude-sonnet-4.5 / anthropic-estimate; counts as counted"
    ));
}

/// An output never replaces a file an input names: `simulate --out` onto a catalog the
/// scenario reads, `live --cassette` onto the scenario or its catalog, `session import --out`
/// into a folder whose `queries.jsonl` is a session log it reads. Each exits 2, the file kept.
#[test]
fn outputs_never_replace_files_the_inputs_name() {
    let dir = tempfile::tempdir().unwrap();
    let cat = write(dir.path(), "gh.json", CATALOG);
    let s = write(
        dir.path(),
        "s.yaml",
        "catalogs: [{path: gh.json, server: gh}]\nconversation: [{user: hi}]\n",
    );
    let refused = |args: &[&str]| {
        let out = crate::support::toolbudget()
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            err.contains("is one of this command's inputs") || err.contains("inputs"),
            "{args:?}: {err}"
        );
        err
    };
    refused(&["simulate", "s.yaml", "--out", "gh.json"]);
    for cassette in ["s.yaml", "gh.json"] {
        let err = refused(&[
            "live",
            "--provider",
            "openai-chat",
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--cassette",
            cassette,
            "s.yaml",
        ]);
        // The refusal names the flag that would have written it.
        assert!(
            err.contains(&format!(
                "error: --cassette {cassette}: is one of this command's"
            )),
            "{err}"
        );
    }
    assert_eq!(std::fs::read_to_string(&cat).unwrap(), CATALOG);
    assert!(
        std::fs::read_to_string(&s)
            .unwrap()
            .starts_with("catalogs:")
    );

    // A Claude Code log named queries.jsonl in the folder imported into itself.
    let logs = dir.path().join("logs");
    std::fs::create_dir(&logs).unwrap();
    // A log with searches, so that the import writes queries.jsonl.
    let log = std::fs::read(crate::support::repo(
        "fixtures/sessions/claude/searches/d0f1b2c3-9e0a-4b12-b324-354657687980.jsonl",
    ))
    .unwrap();
    std::fs::write(logs.join("queries.jsonl"), &log).unwrap();
    let tracker = crate::support::repo("fixtures/catalogs/mcp/tracker.json");
    let tracker = format!("tracker={}", tracker.display());
    let err = refused(&[
        "-q",
        "session",
        "import",
        "logs",
        "--catalog",
        &tracker,
        "--out",
        "logs",
    ]);
    assert!(
        err.contains("queries.jsonl is one of this command's inputs"),
        "{err}"
    );
    assert_eq!(std::fs::read(logs.join("queries.jsonl")).unwrap(), log);
}
