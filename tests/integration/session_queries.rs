//! The model's own search queries mined by `session import --queries-out`: labeled with the
//! deferred tools it went on to call, `select:` queries in their own class, written as a query
//! file `eval` accepts, and scored per scorer in the report's sessions section.

use serde_json::Value;

use super::session_import::{catalog, fixture, run};

fn catalogs() -> Vec<String> {
    vec![
        "--catalog".into(),
        catalog("builtins.yaml"),
        "--catalog".into(),
        format!("tracker={}", catalog("mcp/tracker.json")),
    ]
}

fn mine(paths: &[&str], out: &std::path::Path, extra: &[&str]) -> (Vec<Value>, String) {
    let q = out.join("q.jsonl");
    let mut args: Vec<String> = vec!["session".into(), "import".into()];
    args.extend(paths.iter().map(|p| fixture(p)));
    args.extend(catalogs());
    args.extend(["--queries-out".into(), q.display().to_string()]);
    args.extend(extra.iter().map(ToString::to_string));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, _, stderr) = run(&a);
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&q).unwrap();
    (
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        stderr,
    )
}

#[test]
fn queries_out_on_the_deferred_fixtures_is_a_labeled_set_eval_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let (qs, stderr) = mine(&["claude/deferred", "claude/searches"], dir.path(), &[]);
    let line = |id: &str| {
        qs.iter()
            .find(|q| q["id"] == id)
            .unwrap_or_else(|| panic!("{id}: {qs:?}"))
    };
    // The first search loaded two tools; the model called both, one a turn later.
    let a = line("2b9d4f60-1a2b-4c3d-8e4f-5a6b7c8d9e0f/1");
    assert_eq!(a["query"], "tracker create issue");
    assert_eq!(
        a["expected"],
        serde_json::json!(["mcp__tracker__create_issue", "mcp__tracker__search_issues"])
    );
    let s = line("d0f1b2c3-9e0a-4b12-b324-354657687980/1");
    assert_eq!(s["query"], "select:mcp__tracker__get_issue");
    assert_eq!(s["class"], "select");
    assert_eq!(
        s["expected"],
        serde_json::json!(["mcp__tracker__get_issue"])
    );
    // A result that named no tool: the next call labels it.
    let n = line("d0f1b2c3-9e0a-4b12-b324-354657687980/2");
    assert_eq!(
        n["expected"],
        serde_json::json!(["mcp__tracker__add_comment"])
    );
    assert_ne!(n["class"], "select");
    // The on-call search was followed by no call: left out, and said so.
    assert_eq!(qs.len(), 3, "{qs:?}");
    assert!(stderr.contains("3 of the model's searches mined as labeled queries (1 with no call after them left out)"), "{stderr}");
    // eval reads it against the same catalogs and scores every scorer on it.
    let q = dir.path().join("q.jsonl");
    let mut args = vec!["eval".to_string()];
    args.extend(catalogs());
    args.extend([
        "--queries".into(),
        q.display().to_string(),
        "-s".into(),
        "keyword".into(),
        "-s".into(),
        "bm25".into(),
        "--format".into(),
        "json".into(),
    ]);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, stdout, stderr) = run(&a);
    assert_eq!(code, Some(0), "{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["query_count"], 3, "{v}");
    assert_eq!(v["classes"]["select"], 1, "{v}");
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
}

#[test]
fn codex_tool_searches_are_mined_too() {
    let dir = tempfile::tempdir().unwrap();
    let q = dir.path().join("q.jsonl");
    let (code, _, stderr) = run(&[
        "session",
        "import",
        &fixture("codex/2026"),
        "--catalog",
        &format!("tracker={}", catalog("mcp/tracker.json")),
        "--catalog",
        &format!("node_repl={}", fixture("codex-node-repl.json")),
        "--queries-out",
        q.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    let text = std::fs::read_to_string(&q).unwrap();
    let v: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["query"], "tracker create issue");
    assert_eq!(
        v["expected"],
        serde_json::json!(["mcp__tracker__create_issue"])
    );
    assert_eq!(text.lines().count(), 1);
}

#[test]
fn the_report_shows_per_scorer_how_many_real_searches_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let import = dir.path().join("import");
    let (_qs, _) = mine(
        &["claude/deferred", "claude/searches"],
        dir.path(),
        &["--out", import.to_str().unwrap()],
    );
    assert!(import.join("queries.jsonl").is_file());
    use toolbudget::experiment::sessions::{Variant, replay_dir};
    use toolbudget::search::ScorerKind;
    use toolbudget::simulate::scenario::Listing;
    let variants = [
        Variant::CLAUDE_CODE,
        Variant {
            scorer: ScorerKind::Bm25,
            listing: Listing::Names,
        },
        Variant {
            scorer: ScorerKind::Bm25,
            listing: Listing::Descriptions,
        },
    ];
    let r = replay_dir(&import, &variants, None).unwrap();
    // Each scorer once, whatever the listings.
    let scorers: Vec<&str> = r.searches.iter().map(|s| s.scorer.as_str()).collect();
    assert_eq!(scorers, ["keyword", "bm25"]);
    let kw = &r.searches[0];
    assert_eq!(kw.searches, 3);
    // The keyword scorer resolves select: exactly; bm25 reads it as words.
    let select = |s: &toolbudget::experiment::sessions::SearchScore| {
        s.by_class
            .iter()
            .find(|c| c.0 == "select")
            .map(|c| (c.1, c.2))
            .unwrap()
    };
    assert_eq!(select(kw), (1, 1));
    assert!(kw.answered >= 1 && kw.answered <= kw.answered_any, "{kw:?}");
    let md = toolbudget::view::sessions::markdown(&r, &[]);
    assert!(md.contains("### The model's own searches"), "{md}");
    assert!(
        md.contains(&format!("| keyword | {} of 3 |", kw.answered)),
        "{md}"
    );
}
