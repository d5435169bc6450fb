//! The `search` command end to end on the shared GitHub catalog (skips when it is absent).

use assert_cmd::Command;

use crate::support::shared_data;

fn search(args: &[&str]) -> Option<(i32, serde_json::Value, String)> {
    let Some(data) = shared_data() else {
        eprintln!("skipped: no shared data (set TOOLBUDGET_SHARED_DATA)");
        return None;
    };
    let github = format!("github={}", data.join("catalogs/github.json").display());
    let out = Command::cargo_bin("toolbudget")
        .unwrap()
        .args(["search", "--catalog", &github, "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    Some((
        out.status.code().unwrap(),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

#[test]
fn select_returns_both_named_tools_in_order() {
    let Some((code, v, _)) = search(&["select:mcp__github__create_issue,mcp__github__get_me"])
    else {
        return;
    };
    assert_eq!(code, 0);
    let ids: Vec<&str> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["mcp__github__create_issue", "mcp__github__get_me"]);
    assert_eq!(v["total_tools"], 117);
    assert_eq!(v["scorer"], "keyword");
}

#[test]
fn every_scorer_answers_and_bad_regex_exits_2() {
    for scorer in ["keyword", "regex", "bm25"] {
        let Some((code, v, _)) = search(&["--scorer", scorer, "--explain", "create.*issue"]) else {
            return;
        };
        assert_eq!(code, 0, "{scorer}");
        assert_eq!(v["scorer"], scorer);
        let n = v["matches"].as_array().unwrap().len();
        assert_eq!(v["explanations"].as_array().unwrap().len(), n);
    }
    let Some((code, _, stderr)) = search(&["--scorer", "regex", "issue("]) else {
        return;
    };
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: invalid regex pattern"),
        "{stderr}"
    );
}
