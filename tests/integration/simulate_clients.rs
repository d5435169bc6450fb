//! `simulate --client A,B` end to end on the shipped scenarios, and `client:` in a scenario:
//! each format, determinism, the numbers' relations (no client sends what eager sends; a
//! listing client pays for its list), unknown names refused.

use crate::support::{repo, toolbudget};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = toolbudget().args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn scenario(name: &str) -> String {
    repo(&format!("scenarios/{name}"))
        .to_string_lossy()
        .into_owned()
}

#[test]
fn clients_side_by_side_in_every_format() {
    let (a, b) = (scenario("builtins-plus-mcp.yaml"), scenario("hi.yaml"));
    let clients = "claude-code,anthropic-api,codex,copilot-cli,none";
    let (code, json, err) = run(&["simulate", &a, &b, "--client", clients, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["clients"].as_array().unwrap().len(), 5);
    assert_eq!(v["profiles"].as_array().unwrap().len(), 5);
    for s in v["scenarios"].as_array().unwrap() {
        let rows = s["rows"].as_array().unwrap();
        let by = |c: &str| rows.iter().find(|r| r["client"] == c).unwrap().clone();
        let eager = &s["eager"];
        // No deferral sends exactly what eager sends.
        assert_eq!(
            by("none")["total_input_tokens"],
            eager["total_input_tokens"]
        );
        assert_eq!(by("none")["deferring"], false);
        // Claude Code lists names; Anthropic's API lists nothing, so its first request is
        // smaller by the list (the search tools differ too, so compare the list alone).
        let code = by("claude-code");
        assert!(code["first_request_deferred_list_tokens"].as_u64().unwrap() > 0);
        assert_eq!(by("anthropic-api")["first_request_deferred_list_tokens"], 0);
        assert!(
            code["first_request_tokens"].as_u64().unwrap()
                < eager["first_request_tokens"].as_u64().unwrap()
        );
        // Copilot CLI defers only above 30 tools: these catalogs have more.
        assert!(s["tool_count"].as_u64().unwrap() > 30);
        assert_eq!(by("copilot-cli")["deferring"], true);
    }
    // Every profile value names its source, documented or assumed.
    for p in v["profiles"].as_array().unwrap() {
        for value in p["values"].as_array().unwrap() {
            let kind = value["source"]["kind"].as_str().unwrap();
            assert!(["documented", "seed", "assumed"].contains(&kind), "{value}");
        }
    }
    // Deterministic.
    let (_, again, _) = run(&["simulate", &a, &b, "--client", clients, "--format", "json"]);
    assert_eq!(json, again);
    // CSV: a header and one row per scenario and client, eager included.
    let (code, csv, _) = run(&["simulate", &a, &b, "--client", clients, "--format", "csv"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("scenario,counter,client,deferring"));
    assert_eq!(lines.len(), 1 + 2 * 6);
    // Table and Markdown name the counter and every client.
    for format in ["table", "md"] {
        let (code, text, _) = run(&["simulate", &b, "--client", clients, "--format", format]);
        assert_eq!(code, 0);
        assert!(text.contains("counted by `anthropic-estimate`"), "{text}");
        for c in clients.split(',') {
            assert!(text.contains(c), "{format}: {c}: {text}");
        }
    }
}

#[test]
fn unknown_clients_are_refused_naming_the_known_ones() {
    let (code, _, err) = run(&["simulate", &scenario("hi.yaml"), "--client", "cursor"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("'cursor'") && err.contains("qwen-code"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let s = dir.path().join("s.yaml");
    let catalog = repo("fixtures/catalogs/builtins.yaml");
    std::fs::write(
        &s,
        format!(
            "catalogs: [{}]\nclient: cursor\nconversation: [{{user: hi}}]\n",
            catalog.display()
        ),
    )
    .unwrap();
    let (code, _, err) = run(&["simulate", s.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: ") && err.contains("s.yaml:2:9: client: unknown value `cursor`"),
        "{err}"
    );
}

#[test]
fn a_scenarios_client_key_sets_its_policy_and_its_own_keys_win() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = repo("fixtures/catalogs/builtins.yaml");
    let write = |extra: &str| {
        let s = dir.path().join("s.yaml");
        std::fs::write(
            &s,
            format!(
                "catalogs: [{}]\nclient: anthropic-api\n{extra}conversation: [{{user: hi}}]\n",
                catalog.display()
            ),
        )
        .unwrap();
        let (code, json, err) = run(&["simulate", s.to_str().unwrap(), "--format", "json"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<serde_json::Value>(&json).unwrap()["scenarios"][0].clone()
    };
    let api = write("");
    assert_eq!(api["settings"]["client"], "anthropic-api");
    assert_eq!(api["settings"]["listing"], "none");
    assert_eq!(api["deferred"]["first_request_deferred_list_tokens"], 0);
    let named = write("deferred: {listing: names}\n");
    assert_eq!(named["settings"]["listing"], "names");
    assert!(
        named["deferred"]["first_request_deferred_list_tokens"]
            .as_u64()
            .unwrap()
            > 0
    );
}
