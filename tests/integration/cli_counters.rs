//! `count --counter`, `count --compare-counters`, `calibrate`, and the counter named by
//! `simulate`: the interface of the counters end to end, on the project's own fixtures.

use assert_cmd::Command;
use serde_json::Value;

fn toolbudget() -> Command {
    let mut c = Command::cargo_bin("toolbudget").unwrap();
    c.env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL");
    c
}

fn json(c: &mut Command) -> Value {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn fixture(rel: &str) -> String {
    crate::support::repo(rel).to_string_lossy().into_owned()
}

#[test]
fn count_names_its_counter_and_keeps_the_original_default() {
    let cat = fixture("fixtures/catalogs/mcp/tracker.json");
    let default = json(toolbudget().args(["count", "-c", &cat, "--format", "json"]));
    assert_eq!(default["counter"], "o200k-json");
    assert_eq!(default["tokenizer"], "o200k_base");
    let named = json(toolbudget().args([
        "count",
        "-c",
        &cat,
        "--counter",
        "o200k-json",
        "--format",
        "json",
    ]));
    assert_eq!(named["total_tokens"], default["total_tokens"]);
    let legacy = json(toolbudget().args([
        "count",
        "-c",
        &cat,
        "--tokenizer",
        "cl100k_base",
        "--format",
        "json",
    ]));
    assert_eq!(legacy["counter"], "cl100k-json");
    let oai = json(toolbudget().args([
        "count",
        "-c",
        &cat,
        "--counter",
        "openai-responses",
        "--format",
        "json",
    ]));
    assert_eq!(oai["counter"], "openai-responses");
    assert_eq!(oai["render"], "harmony");
    assert_eq!(oai["preamble"]["model"], "gpt-5.4");
    assert_eq!(oai["preamble"]["provider"], "OpenAI");
    // The TypeScript rendering is shorter than the json of the same schemas.
    assert!(oai["total_tokens"].as_u64() < default["total_tokens"].as_u64());
    let est = json(toolbudget().args([
        "count",
        "-c",
        &cat,
        "--counter",
        "anthropic-estimate",
        "--format",
        "json",
    ]));
    assert_eq!(est["error_pct"], 4.2);
    assert_eq!(est["fixed_tokens"], 346 + 139);
    // Per server sums equal the total under every counter.
    let servers: u64 = est["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["tokens"].as_u64().unwrap())
        .sum();
    assert_eq!(Some(servers), est["total_tokens"].as_u64());
}

#[test]
fn bad_counter_flags_exit_2() {
    let cat = fixture("fixtures/catalogs/mcp/tracker.json");
    let out = toolbudget()
        .args(["count", "-c", &cat, "--counter", "claude"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("openai-responses"));
    let out = toolbudget()
        .args([
            "count",
            "-c",
            &cat,
            "--counter",
            "openai-chat",
            "--tokenizer",
            "o200k_base",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = toolbudget()
        .args(["count", "-c", &cat, "--model", "gpt-9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("error: unknown model profile \"gpt-9\": unknown model id `gpt-9`")
    );
}

#[test]
fn compare_counters_puts_every_local_counter_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("none.json");
    let cat = fixture("fixtures/catalogs/mcp/db.json");
    let v = json(toolbudget().args([
        "count",
        "-c",
        &cat,
        "--compare-counters",
        "--api-cache",
        &cache.to_string_lossy(),
        "--format",
        "json",
    ]));
    let names: Vec<&str> = v["counters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["counter"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "openai-responses",
            "openai-chat",
            "anthropic-estimate",
            "o200k-json",
            "cl100k-json"
        ]
    );
    let o200k = &v["counters"][3];
    assert_eq!(o200k["vs_o200k_json_pct"], 0.0);
    for c in v["counters"].as_array().unwrap() {
        assert_eq!(
            c["request_tokens"].as_u64().unwrap(),
            c["tools_tokens"].as_u64().unwrap() + c["fixed_tokens"].as_u64().unwrap()
        );
    }
    // Each tool row holds one count per counter, in the counters' order.
    let first = &v["tools"][0]["tokens"];
    assert_eq!(first.as_array().unwrap().len(), 5);
    let single = json(toolbudget().args([
        "count",
        "-c",
        &cat,
        "--counter",
        "anthropic-estimate",
        "--format",
        "json",
    ]));
    assert_eq!(first[2], single["tools"][0]["tokens"]);
}

#[test]
fn calibrate_checks_and_rewrites_its_file() {
    let committed = fixture("fixtures/calibration/anthropic-count-tokens.json");
    let out = toolbudget()
        .args(["calibrate", "--check", "--data", &committed])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("c.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&committed).unwrap()).unwrap();
    v["fit"]["per_tool_ratio"] = 1.0.into();
    std::fs::write(&copy, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let copy_s = copy.to_string_lossy().into_owned();
    let out = toolbudget()
        .args(["calibrate", "--check", "--data", &copy_s])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a stale fit fails the check");
    let out = toolbudget()
        .args(["calibrate", "--write", "--data", &copy_s])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        std::fs::read_to_string(&copy).unwrap(),
        std::fs::read_to_string(&committed).unwrap(),
        "the refit file is the committed one"
    );
    std::fs::write(&copy, "{\n  \"about\": 1,\n").unwrap();
    let out = toolbudget()
        .args(["calibrate", "--data", &copy_s])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with(&format!("error: {copy_s}:2:")), "{err}");
}

#[test]
fn simulate_names_the_counter_of_each_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture("fixtures/catalogs/mcp/chat.json");
    let mut files = Vec::new();
    for (name, keys) in [
        ("legacy", "tokenizer: cl100k_base\n"),
        ("by-model", "model: gpt-4o\n"),
        ("by-key", "model: gpt-4o\ncounter: anthropic-estimate\n"),
        ("default", ""),
    ] {
        let p = dir.path().join(format!("{name}.yaml"));
        std::fs::write(
            &p,
            format!("name: {name}\n{keys}system_prompt: Be brief.\ncatalogs: [{{path: {cat:?}, server: chat}}]\nconversation:\n  - user: hello\n"),
        )
        .unwrap();
        files.push(p);
    }
    let v = json(
        toolbudget()
            .arg("simulate")
            .args(&files)
            .args(["--format", "json"]),
    );
    let counters: Vec<&str> = v["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["counter"].as_str().unwrap())
        .collect();
    assert_eq!(
        counters,
        [
            "cl100k-json",
            "openai-chat",
            "anthropic-estimate",
            "anthropic-estimate"
        ]
    );
    assert_eq!(v["scenarios"][1]["settings"]["counter"], "openai-chat");
    let flag = json(toolbudget().arg("simulate").args(&files).args([
        "--counter",
        "openai-responses",
        "--format",
        "json",
    ]));
    assert!(
        flag["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["counter"] == "openai-responses")
    );
}
