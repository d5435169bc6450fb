//! Adoption of the search tool measured by `session import` (#42): per session and overall,
//! in every format, and in the report's sessions section.

use super::session_import::{catalog, fixture, import, run};

const ADOPTION: &str = "a4d0b1e2-7c3f-4a5b-9d6e-0f1a2b3c4d5e";

#[test]
fn a_first_call_that_failed_a_select_search_a_keyword_search_and_an_empty_one_are_counted() {
    let (v, _dir, _) = import(&[fixture("claude/adoption")], &[]);
    let s = &v["sessions"][0];
    // The model called add_comment before any search (the call failed: no such tool), then
    // selected it and called it again; searched by keywords for create_issue and called it;
    // searched for a calendar tool and found none.
    let want = serde_json::json!({
        "searches": 3,
        "select_searches": 1,
        "empty_searches": 1,
        "deferred_calls": 3,
        "found_calls": 2,
        "first_calls": 1,
        "failed_first_calls": 1
    });
    assert_eq!(s["adoption"], want);
    assert_eq!(v["totals"]["adoption"], want);
    assert_eq!(v["totals"]["sessions_searched"], 1);
    assert_eq!(v["totals"]["sessions_found_and_used"], 1);
    let queries: Vec<(&str, &str)> = s["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["query"].as_str().unwrap(),
                q["expected"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        queries,
        [
            (
                "select:mcp__tracker__add_comment",
                "mcp__tracker__add_comment"
            ),
            ("create ticket issue", "mcp__tracker__create_issue")
        ]
    );
}

fn summary(format: &str, paths: &[String]) -> String {
    let mut args: Vec<String> = vec!["--quiet".into(), "session".into(), "import".into()];
    args.extend(paths.iter().cloned());
    args.extend([
        "--catalog".into(),
        catalog("builtins.yaml"),
        "--catalog".into(),
        format!("tracker={}", catalog("mcp/tracker.json")),
        "--format".into(),
        format.into(),
    ]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, stderr) = run(&a);
    assert_eq!(code, Some(0), "{stderr}");
    out
}

#[test]
fn the_table_markdown_and_csv_show_adoption_per_session_and_overall() {
    let paths = [fixture("claude/adoption"), fixture("claude/deferred")];
    let md = summary("md", &paths);
    assert!(
        md.contains(
            "Adoption of the search tool: 2 of 2 sessions searched, 2 called a deferred tool, 2 called one a search had returned."
        ),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "| `{ADOPTION}` | 3 | 1 | 2 | 1 | 3 | 2 (66.67%) | 1 (33.33%), 1 failed |"
        )),
        "{md}"
    );
    // The deferred fixture: one keyword search that loaded both tools it then called.
    assert!(
        md.contains("| all | 4 | 1 | 3 | 1 | 5 | 4 (80.00%) | 1 (20.00%), 1 failed |"),
        "{md}"
    );
    assert!(
        md.contains("- `create ticket issue` (partial-name) → `mcp__tracker__create_issue`"),
        "{md}"
    );
    let table = summary("table", &paths);
    let header = table
        .lines()
        .find(|l| l.starts_with("session") && l.contains("returned nothing"))
        .unwrap();
    assert_eq!(
        header.split("  ").filter(|c| !c.trim().is_empty()).count(),
        8
    );
    let csv = summary("csv", &paths);
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines
        .find(|l| l.starts_with(ADOPTION))
        .unwrap()
        .split(',')
        .collect();
    let at = |c: &str| row[head.iter().position(|h| *h == c).unwrap()];
    assert_eq!(
        [
            at("searches"),
            at("select_searches"),
            at("empty_searches"),
            at("deferred_calls"),
            at("found_calls"),
            at("first_calls"),
            at("failed_first_calls")
        ],
        ["3", "1", "1", "3", "2", "1", "1"]
    );
}

#[test]
fn the_report_sessions_section_says_whether_the_model_searched_first() {
    let (_, dir, _) = import(&[fixture("claude/adoption")], &[]);
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report");
    let (code, _, stderr) = run(&[
        "--quiet",
        "report",
        "--sessions",
        dir.path().to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
        "--scenarios",
        crate::support::repo("scenarios").to_str().unwrap(),
        "--fixtures",
        crate::support::repo("fixtures").to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let index = std::fs::read_to_string(report.join("index.md")).unwrap();
    let section = &index[index
        .find("### Did the model search first?")
        .expect("the section")..];
    assert!(
        section.contains(
            "Of 3 calls the model made to deferred tools (listed by name only until a search \
             loads them), 66.67% came after a search that had returned the tool and 33.33% came \
             first, before any search returned it (1 of those failed). Of its 3 searches, 1 were \
             `select:` and 1 returned nothing."
        ),
        "{section}"
    );
    assert!(
        section.contains(&format!(
            "| `{ADOPTION}` | 3 | 1 | 2 | 1 | 3 | 2 (66.67%) | 1 (33.33%), 1 failed |"
        )),
        "{section}"
    );
}
