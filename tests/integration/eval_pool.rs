//! `eval --pool`, query classes, no-match queries, the refusal curve and the wrong-sibling
//! rate, through the command line on small hand-made catalogs; then the held-out MCP query
//! sets against the real catalogs of the shared data (skipped without it).

use std::path::Path;

use serde_json::{Value, json};

use crate::support::toolbudget;

/// An MCP `tools/list` file of (name, description) tools.
fn catalog(dir: &Path, name: &str, tools: &[(&str, &str)]) -> String {
    let list: Vec<Value> = tools
        .iter()
        .map(|(n, d)| json!({"name": n, "description": d, "inputSchema": {"type": "object"}}))
        .collect();
    let p = dir.join(name);
    std::fs::write(&p, json!({ "tools": list }).to_string()).unwrap();
    p.display().to_string()
}

/// Our tracker, a twin of its create_issue on another server (in the pool), and unrelated
/// distractors.
fn setup(dir: &Path) -> (String, String, String) {
    let own = catalog(
        dir,
        "tracker.json",
        &[
            ("create_issue", "Open a new issue in the project tracker"),
            ("close_issue", "Close an issue that is resolved"),
            ("list_sprints", "List the sprints of a board"),
        ],
    );
    let pool = dir.join("pool");
    std::fs::create_dir_all(pool.join("more")).unwrap();
    catalog(
        &pool,
        "mirror.json",
        &[("create_issue", "Open a new issue in the project tracker")],
    );
    catalog(
        &pool.join("more"),
        "weather.json",
        &[
            ("get_forecast", "Weather forecast for a city"),
            ("get_alerts", "Severe weather alerts for a region"),
        ],
    );
    // The own catalog again, under the same server name: every id is taken, all left out.
    catalog(
        &pool,
        "tracker.json",
        &[("create_issue", "a different definition"), ("archive", "")],
    );
    std::fs::write(pool.join("notes.txt"), "not a catalog").unwrap();
    let queries = dir.join("q.jsonl");
    std::fs::write(
        &queries,
        [
            json!({"id": "q1", "query": "create_issue for the crash", "expected": ["mcp__tracker__create_issue"]}),
            json!({"id": "q2", "query": "close the resolved issue", "expected": ["mcp__tracker__close_issue"]}),
            json!({"id": "q3", "query": "what sprints are on the board", "expected": ["mcp__tracker__list_sprints"], "class": "paraphrase"}),
            json!({"id": "q4", "query": "bake a cake", "expected": []}),
            json!({"id": "q5", "query": "open a new issue in the tracker", "expected": [], "class": "no-match"}),
        ]
        .map(|q| q.to_string())
        .join("\n"),
    )
    .unwrap();
    (
        own,
        pool.display().to_string(),
        queries.display().to_string(),
    )
}

fn eval_json(args: &[&str]) -> Value {
    let out = toolbudget()
        .args(["--quiet", "eval"])
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn pooled_eval_names_its_setting_classes_refusals_and_twins() {
    let dir = tempfile::tempdir().unwrap();
    let (own, pool, queries) = setup(dir.path());
    let base = [
        "-c",
        &own,
        "--queries",
        &queries,
        "-s",
        "keyword",
        "-s",
        "bm25",
    ];
    let alone = eval_json(&base);
    assert!(alone.get("pool").is_none());
    assert_eq!(alone["tool_count"], 3);
    let mut pooled_args = base.to_vec();
    pooled_args.extend(["--pool", &pool, "--per-query", "--thresholds"]);
    let v = eval_json(&pooled_args);
    // 3 own tools + mirror's twin + 2 weather tools; the pool's tracker.json clashes on
    // create_issue (left out, counted) and adds archive.
    assert_eq!(v["tool_count"], 7);
    let p = &v["pool"];
    assert_eq!(
        (
            &p["files"],
            &p["own_tools"],
            &p["added_tools"],
            &p["duplicate_ids"]
        ),
        (&json!(3), &json!(3), &json!(4), &json!(1))
    );
    assert_eq!(
        v["classes"],
        json!({"exact-name": 1, "partial-name": 1, "paraphrase": 1, "no-match": 2})
    );
    assert_eq!(v["near_duplicates"], json!({"clusters": 1, "tools": 2}));
    let bm25 = &v["results"][1];
    assert_eq!(bm25["scorer"], "bm25");
    // "bake a cake" matches nothing; the other no-match query matches create_issue's words.
    assert_eq!(
        bm25["classes"]["no-match"],
        json!({"queries": 2, "metrics": {"refusal": 0.5}})
    );
    assert_eq!(bm25["classes"]["exact-name"]["metrics"]["recall@5"], 1.0);
    // Metrics average the three answerable queries only.
    let rows = bm25["per_query"].as_array().unwrap();
    let mean: f64 = rows[..3]
        .iter()
        .map(|r| r["metrics"]["recall@5"].as_f64().unwrap())
        .sum::<f64>()
        / 3.0;
    assert!((bm25["metrics"]["recall@5"].as_f64().unwrap() - mean).abs() < 1e-6);
    assert_eq!(rows[4]["metrics"], json!({"refusal": 0.0}));
    assert_eq!(rows[3]["class"], "no-match");
    // q1's tool has a twin on `mirror` with the same text: the tie goes to the smaller id,
    // the twin, so the first result is the wrong sibling.
    assert_eq!(
        bm25["wrong_sibling"],
        json!({"queries": 1, "wrong": 1, "rate": 1.0})
    );
    assert_eq!(rows[0]["top"][0], "mcp__mirror__create_issue");
    assert_eq!(alone["results"][1]["wrong_sibling"]["queries"], 0);
    let curve = bm25["thresholds"].as_array().unwrap();
    assert_eq!(curve[0]["threshold"], Value::Null);
    assert_eq!(curve[0]["false_positive_rate"], 0.5);
    assert_eq!(curve.last().unwrap()["false_positive_rate"], 0.0);

    let table = toolbudget()
        .args(["--quiet", "eval"])
        .args(&pooled_args)
        .output()
        .unwrap();
    let text = String::from_utf8(table.stdout).unwrap();
    assert!(
        text.starts_with("setting: pooled — ranked among 7 tools: the catalog's 3 and 4 distractors from 3 pool files"),
        "{text}"
    );
    assert!(
        text.contains("1 pool tools left out (id already taken)"),
        "{text}"
    );
    assert!(text.contains("bm25: refusal curve"), "{text}");
    assert!(text.contains("no-match"), "{text}");
    let csv = toolbudget()
        .args(["--quiet", "eval"])
        .args(base)
        .args(["--pool", &pool, "--format", "csv"])
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(
        csv.contains(",pooled,7,7,5,bm25,0,no-match,refusal,0.5,,"),
        "{csv}"
    );
}

#[test]
fn pool_files_given_as_catalogs_are_skipped_and_bad_pools_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (own, _, queries) = setup(dir.path());
    let v = eval_json(&[
        "-c",
        &own,
        "--queries",
        &queries,
        "-s",
        "bm25",
        "--pool",
        &own,
    ]);
    assert_eq!(v["pool"]["skipped_files"], 1);
    assert_eq!(v["pool"]["added_tools"], 0);
    let missing = dir.path().join("nope").display().to_string();
    let out = toolbudget()
        .args([
            "eval",
            "-c",
            &own,
            "--queries",
            &queries,
            "--pool",
            &missing,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("error: --pool ") && err.contains("no such file or folder"),
        "{err}"
    );
    let bad = catalog(dir.path(), "bad.json", &[]);
    std::fs::write(&bad, "{\"tools\": [").unwrap();
    let out = toolbudget()
        .args(["eval", "-c", &own, "--queries", &queries, "--pool", &bad])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.json:1:"));
}

#[test]
fn compare_prints_a_randomization_p_value() {
    let dir = tempfile::tempdir().unwrap();
    let (own, pool, queries) = setup(dir.path());
    let run = |extra: &[&str], name: &str| {
        let out = dir.path().join(name).display().to_string();
        let mut args = vec!["--quiet", "eval", "-c", &own, "--queries", &queries];
        args.extend([
            "-s",
            "keyword",
            "--per-query",
            "--format",
            "json",
            "--out",
            &out,
        ]);
        args.extend(extra);
        toolbudget().args(&args).assert().code(0);
        out
    };
    let a = run(&[], "a.json");
    let b = run(&["--pool", &pool], "b.json");
    let out = toolbudget()
        .args(["compare", &a, &b, "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let m = &v["results"][0]["metrics"][0];
    let p = m["p_value"].as_f64().unwrap();
    assert!(p > 0.0 && p <= 1.0, "{m}");
}

#[test]
fn select_resolves_a_shortened_name_and_reports_an_ambiguous_one() {
    let dir = tempfile::tempdir().unwrap();
    let (own, pool, _) = setup(dir.path());
    let mirror = format!("{pool}/mirror.json");
    let search = |q: &str| -> Value {
        let out = toolbudget()
            .args([
                "--quiet", "search", "-c", &own, "-c", &mirror, "--format", "json", q,
            ])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let v = search("select:tracker__create_issue,sprints");
    let ids: Vec<&str> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["mcp__tracker__create_issue", "mcp__tracker__list_sprints"]
    );
    let v = search("select:create_issue");
    assert_eq!(v["matches"], json!([]));
    assert_eq!(
        v["ambiguous"],
        json!([{"name": "create_issue", "candidates": ["mcp__mirror__create_issue", "mcp__tracker__create_issue"]}])
    );
    let text = toolbudget()
        .args([
            "--quiet",
            "search",
            "-c",
            &own,
            "-c",
            &mirror,
            "select:create_issue",
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains(
        "ambiguous: create_issue fits mcp__mirror__create_issue, mcp__tracker__create_issue"
    ));
}

/// The held-out MCP sets resolve against the real catalogs, in both settings, with the
/// classes they declare.
#[test]
fn held_out_mcp_sets_load_in_both_settings() {
    let Some(data) = crate::support::shared_data() else {
        crate::support::skip("held_out_mcp_sets_load_in_both_settings", "no shared data");
        return;
    };
    let c = data.join("catalogs");
    let mut devops: Vec<String> = vec![
        c.join("github.json").display().to_string(),
        c.join("kubernetes.json").display().to_string(),
    ];
    let mut docker: Vec<String> = std::fs::read_dir(c.join("docker"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    docker.sort();
    devops.extend(docker);
    let mut args: Vec<String> = Vec::new();
    for f in &devops {
        args.extend(["-c".into(), f.clone()]);
    }
    let queries = crate::support::repo("fixtures/queries/mcp/mcp-devops.jsonl");
    args.extend(["--queries".into(), queries.display().to_string()]);
    args.extend(["-s".into(), "bm25".into()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let own = eval_json(&refs);
    assert_eq!(own["query_count"], 92);
    assert_eq!(
        own["classes"],
        json!({"exact-name": 20, "partial-name": 31, "paraphrase": 31, "no-match": 10})
    );
    let mut pooled = refs.clone();
    let pool = c.display().to_string();
    pooled.extend(["--pool", &pool]);
    let v = eval_json(&pooled);
    assert_eq!(v["tool_count"], 4747);
    assert_eq!(v["pool"]["skipped_files"], devops.len());
    assert_eq!(v["pool"]["duplicate_ids"], 0);
    // bm25 finds every exact-name query's tool in its top 5 in both settings.
    for r in [&own, &v] {
        assert_eq!(
            r["results"][0]["classes"]["exact-name"]["metrics"]["recall@5"],
            1.0
        );
    }
}
