//! `diff`: two `simulate --format json` runs of scenarios/hi.yaml, the second with one MCP
//! server fewer, compared: the figures, the gate's exit codes, the step summary, bad input.

use std::path::Path;

use crate::support::{repo, toolbudget};

/// `simulate --format json` of `scenario`, written to `dir/name`.
fn simulate(dir: &Path, scenario: &Path, name: &str) -> String {
    let out = toolbudget()
        .arg("simulate")
        .arg(scenario)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let p = dir.join(name);
    std::fs::write(&p, &out.stdout).unwrap();
    p.display().to_string()
}

/// hi.yaml, and a copy of it without the `db` server.
fn runs(dir: &Path) -> (String, String) {
    let hi = repo("scenarios/hi.yaml");
    let base = simulate(dir, &hi, "base.json");
    let fixtures = repo("fixtures").display().to_string();
    let fewer: String = std::fs::read_to_string(&hi)
        .unwrap()
        .lines()
        .filter(|l| !l.contains("db.json"))
        .map(|l| l.replace("../fixtures", &fixtures) + "\n")
        .collect();
    let copy = dir.join("hi.yaml");
    std::fs::write(&copy, fewer).unwrap();
    let head = simulate(dir, &copy, "head.json");
    (base, head)
}

fn json(args: &[&str]) -> serde_json::Value {
    let out = toolbudget()
        .arg("diff")
        .args(args)
        .args(["--format", "json"])
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn diff_pairs_scenarios_and_gates_the_deferred_total() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = runs(dir.path());
    let d = json(&[&base, &head]);
    let s = &d["scenarios"][0];
    assert_eq!(s["name"], "hi");
    let figure = |name: &str| {
        s["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["figure"] == name)
            .unwrap()
            .clone()
    };
    // The db server's tools leave the eager request; deferred, only their names leave the list.
    let eager = figure("eager first-request input tokens");
    assert_eq!(eager["base"], 42940.0);
    assert_eq!(eager["head"], 40099.0);
    assert_eq!(eager["change"], -2841.0);
    assert_eq!(eager["change_pct"], -6.62);
    let gated = figure("deferred whole-conversation input tokens");
    assert_eq!(gated["base"], 20162.0);
    assert_eq!(gated["head"], 20027.0);
    assert_eq!(figure("deferred searches")["change"], 0.0);
    assert!(
        figure("eager cost without caching")["change"]
            .as_f64()
            .unwrap()
            < 0.0
    );
    assert_eq!(d["only_in_base"], serde_json::json!([]));
    assert_eq!(d["notes"], serde_json::json!([]));

    // The other way round the deferred total grows 0.67%: over a 0.5% gate, under 1%.
    let diff = |args: &[&str]| {
        let out = toolbudget()
            .arg("diff")
            .args(args)
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap();
        (out.status.code(), String::from_utf8(out.stderr).unwrap())
    };
    let (code, stderr) = diff(&[&head, &base, "--max-increase", "0.5"]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("regression: diff: FAILED"), "{stderr}");
    assert_eq!(diff(&[&head, &base, "--max-increase", "1"]).0, Some(0));
    assert_eq!(diff(&[&base, &head, "--max-increase", "0"]).0, Some(0));
    assert_eq!(diff(&[&head, &base]).0, Some(0));
    assert_eq!(diff(&[&head, &base, "--max-increase", "-1"]).0, Some(2));
}

#[test]
fn diff_appends_the_summary_to_the_step_summary() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = runs(dir.path());
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step").unwrap();
    let out = toolbudget()
        .args(["diff", &head, &base, "--max-increase", "0.5"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n## diff: FAILED: "),
        "{text}"
    );
    let worse = text.find("### What got worse").unwrap();
    let better = text.find("### What got better").unwrap();
    let details = text.find("<details>").unwrap();
    assert!(worse < better && better < details, "{text}");
    assert!(text.contains(
        "- `hi` deferred whole-conversation input tokens: 20,027 → 20,162 (+135, +0.7%), \
         over the allowed increase"
    ));
    // --format md prints the same summary.
    let md = toolbudget()
        .args([
            "diff",
            &head,
            &base,
            "--max-increase",
            "0.5",
            "--format",
            "md",
        ])
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap();
    assert!(text.ends_with(std::str::from_utf8(&md.stdout).unwrap()));
}

#[test]
fn diff_notes_scenarios_in_one_file_and_other_settings() {
    let dir = tempfile::tempdir().unwrap();
    let (base, _) = runs(dir.path());
    let other = toolbudget()
        .arg("simulate")
        .arg(repo("scenarios/hi.yaml"))
        .arg(repo("scenarios/builtins-plus-mcp.yaml"))
        .args(["--counter", "o200k-json", "--format", "json"])
        .output()
        .unwrap();
    let head = dir.path().join("other.json");
    std::fs::write(&head, &other.stdout).unwrap();
    let d = json(&[&base, head.to_str().unwrap()]);
    assert_eq!(d["only_in_head"], serde_json::json!(["builtins-plus-mcp"]));
    let notes = d["notes"].to_string();
    assert!(notes.contains("hi: counter differs"), "{notes}");
}

#[test]
fn diff_refuses_bad_input_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"scenarios\": [{\"name\": 3}]}").unwrap();
    let (base, _) = runs(dir.path());
    let out = toolbudget()
        .args(["diff", bad.to_str().unwrap(), &base])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let want = format!(
        "error: {}:1:25: scenarios[0].name: invalid type",
        bad.display()
    );
    assert!(stderr.contains(&want), "{stderr}");
}
