//! Command-line checks of `eval` input errors and `compare` exit codes.

use std::path::Path;

use crate::support::toolbudget;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

/// An eval json with one scorer whose per-query recall@5 values are given (0, 0.5 or 1), each
/// row consistent with its ranks (expected tools `a` and, for 0.5, `b`), the aggregates their
/// means: a file `compare` accepts.
fn eval_json<S: AsRef<str>>(rows: &[(S, f64)]) -> String {
    let per_query: Vec<serde_json::Value> = rows
        .iter()
        .map(|(id, v)| {
            let (expected, ranks, top, mrr) = match *v {
                1.0 => (vec!["a"], vec![Some(1)], vec!["a"], 1.0),
                0.5 => (vec!["a", "b"], vec![Some(1), None], vec!["a"], 1.0),
                _ => (vec!["a"], vec![None], vec![], 0.0),
            };
            serde_json::json!({"id": id.as_ref(), "query": "q", "expected": expected,
                "ranks": ranks, "top": top, "metrics": {"recall@5": v, "mrr": mrr}})
        })
        .collect();
    let mean = |m: &str| {
        let xs: Vec<f64> = per_query
            .iter()
            .map(|r| r["metrics"][m].as_f64().unwrap())
            .collect();
        (xs.iter().sum::<f64>() / xs.len() as f64 * 1e6).round() / 1e6
    };
    serde_json::to_string_pretty(&serde_json::json!({
        "tool_count": 10,
        "query_count": rows.len(),
        "results": [{"scorer": "bm25", "metrics": {"recall@5": mean("recall@5"), "mrr": mean("mrr")}, "latency_us": {"p50": 1.0, "p95": 2.0}, "per_query": per_query}]
    }))
    .unwrap()
}

#[test]
fn compare_with_itself_passes_with_zero_differences() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        "a.json",
        &eval_json(&[("q1", 1.0), ("q2", 0.0), ("q3", 0.5)]),
    );
    let out = toolbudget()
        .args(["compare", &a, &a, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for m in v["results"][0]["metrics"].as_array().unwrap() {
        assert_eq!(m["difference"], 0.0);
    }
    assert_eq!(v["results"][0]["paired"], true);
    assert_eq!(v["regressions"], serde_json::json!([]));
}

#[test]
fn compare_exits_1_on_a_real_drop_and_0_within_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<(String, f64)> = (0..100).map(|i| (format!("q{i}"), 1.0)).collect();
    let base = write(dir.path(), "base.json", &eval_json(&rows));
    // one query of 100 lost: a drop of exactly 0.01, within the default tolerance
    let mut one = rows.clone();
    one[7].1 = 0.0;
    let one = write(dir.path(), "one.json", &eval_json(&one));
    // five lost: 0.05
    let mut five = rows.clone();
    for r in five.iter_mut().take(5) {
        r.1 = 0.0;
    }
    let five = write(dir.path(), "five.json", &eval_json(&five));

    toolbudget().args(["compare", &base, &one]).assert().code(0);
    toolbudget()
        .args(["compare", &base, &one, "--max-drop", "0"])
        .assert()
        .code(1);
    let out = toolbudget()
        .args(["compare", &base, &five])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("FAIL: bm25 dropped more than 0.01 on recall@5"),
        "{stdout}"
    );
    assert!(stdout.contains("worse: q0 1.0000 -> 0.0000"), "{stdout}");
    // the check follows --metric; an unknown metric is a usage error
    toolbudget()
        .args(["compare", &base, &five, "--metric", "ndcg@3"])
        .assert()
        .code(2);
    // improving is never a failure
    toolbudget()
        .args(["compare", &five, &base])
        .assert()
        .code(0);
}

#[test]
fn compare_rejects_a_file_that_is_not_an_eval_result() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "bad.json", "{\"tools\": []}");
    let out = toolbudget().args(["compare", &bad, &bad]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with(&format!("error: {bad}:1:")), "{err}");
    assert!(
        err.contains("expected the json output of `toolbudget eval`: missing field `tool_count`"),
        "{err}"
    );
}

/// `compare` reads `eval --format json` through the one eval type: a real eval file reads back
/// into `EvalResult` and writes the same bytes, and compared with itself it pairs every query.
#[test]
fn eval_json_round_trips_through_the_eval_type_into_compare() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("eval.json");
    let mut catalogs = vec![
        "--catalog".to_string(),
        "fixtures/catalogs/builtins.yaml".into(),
    ];
    for server in ["browser", "chat", "db", "monitor", "tracker"] {
        catalogs.push("--catalog".into());
        catalogs.push(format!("fixtures/catalogs/mcp/{server}.json"));
    }
    toolbudget()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("eval")
        .args(&catalogs)
        .args([
            "--queries",
            "fixtures/queries/fixtures.jsonl",
            "--scorer",
            "keyword",
            "--scorer",
            "bm25",
            "--per-query",
            "--format",
            "json",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(0);
    let text = std::fs::read_to_string(&out).unwrap();
    let result = toolbudget::eval::read_eval_result(&out).unwrap();
    assert_eq!(toolbudget::output::to_json(&result), text);
    assert_eq!(result.results.len(), 2);
    assert_eq!(
        result.query_count,
        result.results[0].per_query.as_ref().unwrap().len()
    );
    let path = out.to_str().unwrap();
    let cmp = toolbudget()
        .args(["compare", path, path, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(cmp.status.code(), Some(0));
    let c: toolbudget::eval::compare::Comparison = serde_json::from_slice(&cmp.stdout).unwrap();
    assert_eq!(c.results.len(), 2);
    for r in &c.results {
        assert!(r.paired);
        assert_eq!(r.paired_queries, result.query_count);
        assert!(r.metrics.iter().all(|m| m.difference == Some(0.0)));
    }
}

#[test]
fn eval_reports_unknown_expected_tool_with_position() {
    let dir = tempfile::tempdir().unwrap();
    let cat = write(
        dir.path(),
        "cat.yaml",
        "builtins:\n  - name: Read\n    description: Read a file.\n    input_schema: {type: object}\n",
    );
    let q = write(
        dir.path(),
        "q.jsonl",
        "{\"id\": \"q1\", \"query\": \"read\", \"expected\": [\"Read\"]}\n{\"id\": \"q2\", \"query\": \"write\", \"expected\": [\"Write\"]}\n",
    );
    let out = toolbudget()
        .args(["eval", "--catalog", &cat, "--queries", &q])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.trim_end(),
        format!(
            "error: {q}:2:45: query \"q2\" expects tool \"Write\", which is not in the catalog"
        )
    );
    let out = toolbudget()
        .args(["eval", "--catalog", &cat, "--queries", &q, "--k", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `eval --no-latency` reports no latency and ranks exactly as a run that measures it, its one
/// embedding per query kept in the cache for the next run.
#[test]
fn no_latency_ranks_the_same_and_caches_the_queries() {
    let model = crate::support::repo("models/all-MiniLM-L6-v2/model.safetensors");
    if !model.is_file() {
        assert!(
            !crate::support::env_flag("TOOLBUDGET_REQUIRE_MODEL"),
            "TOOLBUDGET_REQUIRE_MODEL is set but {} is missing",
            model.display()
        );
        crate::support::skip(
            "no_latency_ranks_the_same_and_caches_the_queries",
            "no embedding model (scripts/fetch-model.sh)",
        );
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    let mut catalogs = vec![
        "-c".to_string(),
        "fixtures/catalogs/builtins.yaml".to_string(),
    ];
    let mut mcp: Vec<_> = std::fs::read_dir(crate::support::repo("fixtures/catalogs/mcp"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    mcp.sort();
    for p in mcp {
        catalogs.extend(["-c".to_string(), p.display().to_string()]);
    }
    let run = |extra: &[&str]| -> serde_json::Value {
        let out = toolbudget()
            .current_dir(crate::support::repo(""))
            .env("TOOLBUDGET_CACHE_DIR", cache.path())
            .args(["--quiet", "eval"])
            .args(&catalogs)
            .args(["--queries", "fixtures/queries/fixtures.jsonl"])
            .args([
                "-s",
                "semantic",
                "-s",
                "hybrid",
                "--per-query",
                "--format",
                "json",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let query_files =
        || std::fs::read_dir(cache.path().join("embeddings")).map_or(0, Iterator::count);
    let measured = run(&[]);
    let files_before = query_files();
    let shared = run(&["--no-latency"]);
    assert_eq!(query_files(), files_before + 1, "one file of query vectors");
    let again = run(&["--no-latency"]);
    assert_eq!(
        query_files(),
        files_before + 1,
        "read back, not written again"
    );
    for (i, r) in measured["results"].as_array().unwrap().iter().enumerate() {
        assert!(r["latency_us"]["p50"].is_number(), "{r}");
        for other in [&shared, &again] {
            let o = &other["results"][i];
            assert!(o.get("latency_us").is_none(), "{o}");
            assert_eq!(o["metrics"], r["metrics"]);
            assert_eq!(o["per_query"], r["per_query"]);
        }
    }
}

/// An eval file without per-query rows, pretty-printed (one field a line), with `edit`
/// applied: sound until edited.
fn stored_figures(edit: impl Fn(&mut serde_json::Value)) -> String {
    let mut v = serde_json::json!({
        "tool_count": 10, "query_count": 4, "ranked_tools": 9, "ks": [1, 5, 10], "depth": 10,
        "results": [{"scorer": "bm25",
            "metrics": {"recall@1": 0.5, "recall@5": 0.684, "recall@10": 0.75,
                        "hit@5": 0.75, "complete@5": 0.5, "mrr": 0.6},
            "ci95": {"recall@5": [0.4, 0.9]},
            "latency_us": {"searches": 4, "p50": 3.0, "p95": 9.0, "max": 9.0}}]
    });
    edit(&mut v);
    serde_json::to_string_pretty(&v).unwrap()
}

/// The 1-based line and column of the first `needle` in `text` after the line holding `after`.
fn place(text: &str, after: &str, needle: &str) -> (usize, usize) {
    let start = text.find(after).unwrap();
    let at = start + text[start..].find(needle).unwrap();
    let line = text[..at].matches('\n').count() + 1;
    let column = at - text[..at].rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// Without rows, `compare` says it compares stored figures, and refuses the impossible ones at
/// their line:column, naming the field.
#[test]
fn compare_refuses_impossible_stored_figures_at_their_field() {
    let dir = tempfile::tempdir().unwrap();
    let sound = write(dir.path(), "sound.json", &stored_figures(|_| {}));
    let out = toolbudget()
        .args(["compare", &sound, &sound])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "note: bm25: no per-query rows in either file: this compares the figures the files \
             store, recomputed from nothing and with no intervals"
        ),
        "{stdout}"
    );
    type Edit = Box<dyn Fn(&mut serde_json::Value)>;
    let cases: Vec<(&str, Edit, (&str, &str), &str)> = vec![
        (
            "recall.json",
            Box::new(|v| v["results"][0]["metrics"]["recall@5"] = 0.99.into()),
            ("\"metrics\"", "0.99"),
            "results[0].metrics.recall@5: recall@5 is 0.99, above recall@10 (0.75): it cannot \
             fall as k rises",
        ),
        (
            "hit.json",
            Box::new(|v| v["results"][0]["metrics"]["complete@5"] = 0.7.into()),
            ("\"complete@5\"", "0.7"),
            "results[0].metrics.complete@5: complete@5 is 0.7, above recall@5 (0.684): per \
             query complete@k ≤ recall@k ≤ hit@k",
        ),
        (
            "ci.json",
            Box::new(|v| v["results"][0]["ci95"]["recall@5"] = serde_json::json!([1.0, 0.0])),
            ("\"ci95\"", "["),
            "results[0].ci95.recall@5: the interval of recall@5 is [1, 0]: upside down",
        ),
        (
            "latency.json",
            Box::new(|v| v["results"][0]["latency_us"]["p50"] = (-1.0).into()),
            ("\"latency_us\"", "-1.0"),
            "results[0].latency_us.p50: p50 is -1 µs, not a latency",
        ),
        (
            "tools.json",
            Box::new(|v| v["tool_count"] = 0.into()),
            ("\"tool_count\"", "0"),
            "tool_count: tool_count is 0: an evaluation ranks at least one tool",
        ),
        (
            "ks.json",
            Box::new(|v| v["ks"] = serde_json::json!([5, 1, 10])),
            ("\"ks\"", "1"),
            "ks[1]: ks is [5, 1, 10]: the cutoffs are whole numbers from 1, each larger than \
             the last",
        ),
    ];
    for (name, edit, (after, needle), message) in cases {
        let text = stored_figures(edit);
        let file = write(dir.path(), name, &text);
        let (line, column) = place(&text, after, needle);
        for args in [[&file, &sound], [&sound, &file]] {
            let out = toolbudget().arg("compare").args(args).output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            assert!(
                stderr.starts_with(&format!("error: {file}:{line}:{column}: {message}")),
                "{name} ({line}:{column}): {stderr}"
            );
        }
    }
}

/// A query set of only no-match queries has no recall to compare: n/a, and the check fails
/// instead of saying ok; with rows or without.
#[test]
fn a_set_without_an_answerable_query_reports_n_a_never_ok() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = serde_json::json!({"recall@5": 0.0, "mrr": 0.0});
    let rows = serde_json::json!([
        {"id": "n1", "query": "book a flight", "class": "no-match", "expected": [], "ranks": [],
         "top": [], "metrics": {"refusal": 1.0}},
        {"id": "n2", "query": "order a pizza", "class": "no-match", "expected": [], "ranks": [],
         "top": [], "metrics": {"refusal": 1.0}}]);
    let classes = serde_json::json!({"no-match": {"queries": 2, "metrics": {"refusal": 1.0}}});
    let with_rows = write(
        dir.path(),
        "rows.json",
        &serde_json::json!({"tool_count": 10, "query_count": 2, "classes": {"no-match": 2},
            "results": [{"scorer": "bm25", "metrics": metrics, "classes": classes,
                         "per_query": rows}]})
        .to_string(),
    );
    let without = write(
        dir.path(),
        "agg.json",
        &serde_json::json!({"tool_count": 10, "query_count": 2, "classes": {"no-match": 2},
            "results": [{"scorer": "bm25", "metrics": metrics, "classes": classes}]})
        .to_string(),
    );
    for file in [&with_rows, &without] {
        let out = toolbudget().args(["compare", file, file]).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        let recall = stdout
            .lines()
            .find(|l| l.contains("recall@5"))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>();
        assert_eq!(
            recall,
            ["bm25", "recall@5", "n/a", "n/a", "n/a", "n/a"],
            "{stdout}"
        );
        assert!(!stdout.contains("0.0000"), "{stdout}");
        assert!(!stdout.contains("ok:"), "{stdout}");
        assert!(
            stdout.ends_with(
                "FAIL: bm25: recall@5 is n/a: neither file has a query that expects a tool \
                 (every query is no-match), so there is nothing to check\n"
            ),
            "{stdout}"
        );
        let json = toolbudget()
            .args(["compare", file, file, "--format", "json"])
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        let m = &v["results"][0]["metrics"][0];
        assert_eq!(m["metric"], "recall@5");
        assert!(m["base"].is_null() && m["candidate"].is_null() && m["difference"].is_null());
        assert_eq!(v["unchecked"].as_array().unwrap().len(), 1);
    }
}

/// A JSONL run of per-query rows' top results, scored down from 100.
fn jsonl_run(rows: &[serde_json::Value]) -> String {
    let mut run = String::new();
    for q in rows {
        let top: Vec<String> = q["top"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, id)| format!(r#"{{"id": {id}, "score": {}}}"#, 100 - i))
            .collect();
        run.push_str(&format!(
            r#"{{"id": {}, "results": [{}]}}"#,
            q["id"],
            top.join(", ")
        ));
        run.push('\n');
    }
    run
}

/// `--pair mine=bm25`: a run file's ranking compared with the built-in bm25 under another name,
/// with notes on where each came from and how they were set; the step summary appended.
#[test]
fn pair_compares_a_run_file_with_a_built_in_scorer() {
    let dir = tempfile::tempdir().unwrap();
    let queries = crate::support::repo("fixtures/queries/fixtures.jsonl");
    let catalogs = crate::support::repo("fixtures/catalogs");
    let eval = |extra: &[&str]| {
        let mut cmd = toolbudget();
        cmd.args(["eval", "-c"])
            .arg(&catalogs)
            .arg("--queries")
            .arg(&queries);
        cmd.args(extra)
            .args(["--per-query", "--format", "json", "--quiet"]);
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let base = eval(&["-s", "bm25"]);
    let parsed: serde_json::Value = serde_json::from_str(&base).unwrap();
    // The run file holds bm25's own top results with the last query left out: one query worse.
    let rows = parsed["results"][0]["per_query"].as_array().unwrap();
    let run_path = write(dir.path(), "run.jsonl", &jsonl_run(&rows[..rows.len() - 1]));
    let base_path = write(dir.path(), "base.json", &base);
    let cand_path = write(
        dir.path(),
        "cand.json",
        &eval(&["--run", &format!("mine={run_path}")]),
    );
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = toolbudget()
        .args([
            "compare",
            &base_path,
            &cand_path,
            "--pair",
            "bm25=mine",
            "--format",
            "json",
        ])
        .args(["--max-drop", "1"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &c["results"][0];
    assert_eq!(
        (r["scorer"].as_str(), r["candidate_scorer"].as_str()),
        (Some("bm25"), Some("mine"))
    );
    assert_eq!(r["paired_queries"], rows.len());
    let notes: Vec<&str> = c["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("compared with the candidate's mine (--pair)")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.contains("came from a run file")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("settings differ: k1 1.2 → (not set)")),
        "{notes:?}"
    );
    assert!(c["only_in_baseline"].as_array().unwrap().is_empty());
    let appended = std::fs::read_to_string(&summary).unwrap();
    assert!(
        appended.starts_with("earlier step\n## compare: passed")
            && appended.contains("`bm25` → `mine`"),
        "{appended}"
    );
    // A pair naming a scorer the file lacks is bad input, naming what it has.
    let bad = toolbudget()
        .args(["compare", &base_path, &cand_path, "--pair", "bm25=nope"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr)
            .contains("the candidate has no scorer \"nope\"; it has: mine")
    );
}

/// Without per-query rows, `compare` trusts only figures an evaluation can produce: a mean
/// outside its own 95% interval (every metric set to 1.0) or away from its classes'
/// query-weighted mean is refused at its line:column; the file as `eval` wrote it passes.
#[test]
fn stored_figures_that_contradict_their_intervals_or_classes_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = crate::support::repo("fixtures");
    let o = toolbudget()
        .current_dir(dir.path())
        .args(["-q", "eval", "-c"])
        .arg(f.join("catalogs/builtins.yaml"))
        .arg("-c")
        .arg(f.join("catalogs/mcp"))
        .arg("--queries")
        .arg(f.join("queries/fixtures.jsonl"))
        .args(["-s", "keyword", "--format", "json", "--out", "base.json"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let base: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("base.json")).unwrap())
            .unwrap();
    let r = &base["results"][0];
    let paraphrase = r["classes"]["paraphrase"]["metrics"]["recall@5"].clone();
    let compare = |name: &str, edit: &dyn Fn(&mut serde_json::Value)| {
        let mut d = base.clone();
        edit(&mut d["results"][0]);
        std::fs::write(dir.path().join(name), serde_json::to_string(&d).unwrap()).unwrap();
        let o = toolbudget()
            .current_dir(dir.path())
            .args(["compare", "base.json", name])
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, _) = compare("same.json", &|_| {});
    assert_eq!(code, Some(0));
    let (code, err) = compare("ones.json", &|r| {
        for v in r["metrics"].as_object_mut().unwrap().values_mut() {
            *v = 1.0.into();
        }
    });
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.starts_with("error: ones.json:1:")
            && err.contains(
                "results[0].metrics.recall@1: recall@1 is 1, outside its own 95% interval"
            ),
        "{err}"
    );
    // Inside its interval, yet not what its classes average.
    let shifted = round6(r["metrics"]["recall@5"].as_f64().unwrap() + 0.005);
    let (code, err) = compare("classes.json", &|r| {
        r["metrics"]["recall@5"] = shifted.into();
    });
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "results[0].metrics.recall@5: recall@5 is {shifted}, but its classes average"
        )),
        "{err} (paraphrase {paraphrase})"
    );
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// A set of only no-match queries has no mean to show: `eval` prints n/a for every metric, not
/// 0.0000 (the refusal rate of its class is still shown).
#[test]
fn eval_of_only_no_match_queries_prints_n_a() {
    let dir = tempfile::tempdir().unwrap();
    let queries = write(
        dir.path(),
        "nomatch.jsonl",
        "{\"id\":\"n1\",\"query\":\"bake a cake\",\"expected\":[]}\n{\"id\":\"n2\",\"query\":\"fly to the moon\",\"expected\":[]}\n",
    );
    for format in ["table", "md"] {
        let o = toolbudget()
            .args(["-q", "eval", "-c"])
            .arg(crate::support::repo("fixtures/catalogs/mcp/db.json"))
            .args(["--queries", &queries, "-s", "keyword", "--format", format])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8_lossy(&o.stdout);
        let row = out
            .lines()
            .find(|l| l.contains("keyword") && l.contains("n/a"))
            .unwrap_or_else(|| panic!("{format}: no row of n/a: {out}"));
        assert!(!row.contains("0.0000"), "{format}: {row}");
    }
}

/// The same set in the stored formats: no mean is written as 0.0 (which reads as a scorer that
/// finds nothing). JSON holds null, CSV an empty cell; `compare` reads the file back as n/a
/// ("nothing to check", exit 1), and a null beside queries that expect a tool is refused at its
/// line:column (#40 probe 48).
#[test]
fn eval_of_only_no_match_queries_stores_null_and_empty_cells() {
    let dir = tempfile::tempdir().unwrap();
    let queries = write(
        dir.path(),
        "nomatch.jsonl",
        "{\"id\":\"n1\",\"query\":\"bake a cake\",\"expected\":[]}\n{\"id\":\"n2\",\"query\":\"fly to the moon\",\"expected\":[]}\n",
    );
    let eval = |format: &str, extra: &[&str]| {
        let o = toolbudget()
            .args(["-q", "eval", "-c"])
            .arg(crate::support::repo("fixtures/catalogs/mcp/db.json"))
            .args(["--queries", &queries, "-s", "keyword", "--format", format])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(o.status.code(), Some(0), "{err}");
        String::from_utf8(o.stdout).unwrap()
    };
    for extra in [&[][..], &["--per-query"][..]] {
        let v: serde_json::Value = serde_json::from_str(&eval("json", extra)).unwrap();
        let metrics = v["results"][0]["metrics"].as_object().unwrap();
        assert!(metrics.contains_key("recall@5"), "{metrics:?}");
        assert!(
            metrics.values().all(serde_json::Value::is_null),
            "{metrics:?}"
        );
        // The class's refusal rate is a real figure.
        assert!(v["results"][0]["classes"]["no-match"]["metrics"]["refusal"].is_number());
    }
    let csv = eval("csv", &[]);
    let mut rows = csv
        .lines()
        .filter(|l| l.contains(",all,recall@") || l.contains(",all,mrr"));
    let first = rows
        .next()
        .unwrap_or_else(|| panic!("no metric rows: {csv}"));
    assert!(first.ends_with(",all,recall@1,,,"), "{first}");
    assert!(rows.all(|r| r.ends_with(",,,")), "{csv}");
    assert!(!csv.contains(",all,recall@5,0.0"), "{csv}");
    // Per query: a no-match query has no recall or rank, an empty cell (n/a in the table).
    let rows = eval("csv", &["--per-query"]);
    assert!(
        rows.lines().skip(1).all(|l| l.ends_with(",,,")) && !rows.contains("0.0000"),
        "{rows}"
    );
    let table = eval("table", &["--per-query"]);
    let per_query: Vec<&str> = table.lines().filter(|l| l.contains(" n1 ")).collect();
    assert!(
        per_query.len() == 1 && per_query[0].contains("n/a") && !per_query[0].contains("0.0000"),
        "{table}"
    );

    // Read back by compare: n/a, nothing to check.
    let stored = write(dir.path(), "nm.json", &eval("json", &[]));
    let o = toolbudget()
        .args(["compare", &stored, &stored])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("recall@5 is n/a"), "{out}");
    assert!(out.contains("nothing to check"), "{out}");

    // A null where queries expect a tool hides a figure: refused where it stands.
    let mut v: serde_json::Value =
        serde_json::from_str(&eval_json(&[("q1", 1.0), ("q2", 0.0)])).unwrap();
    v["results"][0]["metrics"]["mrr"] = serde_json::Value::Null;
    let edited = write(
        dir.path(),
        "edited.json",
        &serde_json::to_string_pretty(&v).unwrap(),
    );
    let base = write(
        dir.path(),
        "base.json",
        &eval_json(&[("q1", 1.0), ("q2", 0.0)]),
    );
    let o = toolbudget()
        .args(["compare", &base, &edited])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("edited.json:") && err.contains("mrr is null (n/a), but"),
        "{err}"
    );
}
