//! #26's reproducers of unbounded work, each against the binary: refused with exit 2 and one
//! `error:` line naming the file, the place, the computed size and the budget
//! (`toolbudget::budget`), or answered within bounds.

use std::path::Path;

use crate::support::{repo, toolbudget};

fn builtins() -> String {
    repo("fixtures/catalogs/builtins.yaml")
        .display()
        .to_string()
}

/// Runs the binary in `dir`; asserts exit 2, a first line starting `error: `, containing
/// every needle, no panic.
fn refused(dir: &Path, args: &[&str], needles: &[&str]) {
    let out = toolbudget()
        .current_dir(dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or_default();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(first.starts_with("error: "), "{err}");
    for n in needles {
        assert!(first.contains(n), "{n:?} not in {first:?}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

fn scenario(dir: &Path, file: &str, body: &str) {
    let text = format!("catalogs:\n  - {}\n{body}", builtins());
    std::fs::write(dir.join(file), text).unwrap();
}

/// 41 texts, each twice the next: 16 TiB from one placeholder, measured, never built.
#[test]
fn doubling_placeholders_are_refused_by_size() {
    let tmp = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..41)
        .map(|i| {
            if i == 40 {
                "\"t40\": \"xxxxxxxxxxxxxxxx\"".to_string()
            } else {
                format!("\"t{i}\": \"{{{{t{}}}}}{{{{t{}}}}}\"", i + 1, i + 1)
            }
        })
        .collect();
    std::fs::write(
        tmp.path().join("texts.json"),
        format!("{{\n{}\n}}\n", texts.join(",\n")),
    )
    .unwrap();
    scenario(
        tmp.path(),
        "bomb.yaml",
        "texts: {path: texts.json}\nconversation:\n  - user: \"{{t0}}\"\n",
    );
    refused(
        tmp.path(),
        &["simulate", "bomb.yaml"],
        &[
            "bomb.yaml:5:11:",
            "user: expands to 16 TiB of text, over the 256 MiB budget of one run",
        ],
    );
    // The system prompt is charged too.
    scenario(
        tmp.path(),
        "system.yaml",
        "texts: {path: texts.json}\nsystem_prompt: \"{{t10}}\"\nconversation:\n  - user: hi\n",
    );
    refused(
        tmp.path(),
        &["simulate", "system.yaml"],
        &[
            "system.yaml:4:16:",
            "system_prompt: expands to 16 GiB of text",
        ],
    );
    // Under the budget, the text is filled: t30 is 16 KiB.
    scenario(
        tmp.path(),
        "fine.yaml",
        "texts: {path: texts.json}\nconversation:\n  - user: \"{{t30}} and {{nope}}\"\n",
    );
    toolbudget()
        .current_dir(tmp.path())
        .args(["simulate", "fine.yaml"])
        .assert()
        .success();
}

/// 10 MB of user text times `repeat: 1000`: 9.8 GiB, refused before any copy is made.
#[test]
fn repeated_text_is_charged_times_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    let big = "word ".repeat(2_000_000);
    scenario(
        tmp.path(),
        "rep.yaml",
        &format!("conversation:\n  - user: {big}\n    repeat: 1000\n"),
    );
    refused(
        tmp.path(),
        &["simulate", "rep.yaml"],
        &[
            "rep.yaml:4:5:",
            "expands to 9.3 GiB of text, over the 256 MiB budget of one run; lower `repeat`",
        ],
    );
}

/// Three scenarios of 200,000 requests each: under the budget one by one, over it together.
#[test]
fn the_request_budget_holds_for_the_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["a", "b", "c"] {
        scenario(
            tmp.path(),
            &format!("{name}.yaml"),
            &format!(
                "name: {name}\nconversation:\n  - user: go\n    repeat: 100000\n    calls: [{{tool: Read, result_tokens: 5}}]\n"
            ),
        );
    }
    refused(
        tmp.path(),
        &["simulate", "a.yaml", "b.yaml", "c.yaml", "--per-request"],
        &[
            "c.yaml:5:5:",
            "expands to at least 600,000 requests",
            "over the budget of 500,000 requests of one run",
        ],
    );
    toolbudget()
        .current_dir(tmp.path())
        .args(["simulate", "a.yaml", "--format", "json"])
        .assert()
        .success();
}

/// A `select:` query naming 10⁵ tools costs one linear pass (it was ~5 s a search); names
/// times the catalog over the budget are refused as a query.
#[test]
fn select_names_are_bounded() {
    let b = builtins();
    // 20,000 names (an argument holds at most 128 KiB; the unit test in keyword.rs takes 10⁵).
    let many = format!("select:{}", vec!["Read,Edit"; 10_000].join(","));
    let out = toolbudget()
        .args(["search", "-c", &b, &many, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"Read\"") && text.contains("\"Edit\""),
        "{text}"
    );
    let over = format!("select:{}", vec!["Read"; 10_000_000].join(","));
    let tmp = tempfile::tempdir().unwrap();
    let q = tmp.path().join("q.jsonl");
    std::fs::write(
        &q,
        format!("{{\"id\": \"q1\", \"query\": \"{over}\", \"expected\": [\"Read\"]}}\n"),
    )
    .unwrap();
    // eval counts a refused query as refused and scores it 0 (it does not stop the run).
    let out = toolbudget()
        .args(["eval", "-c", &b, "--queries"])
        .arg(&q)
        .args(["--scorer", "keyword", "--per-query", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &json["results"][0];
    assert_eq!(r["refused_queries"], 1, "{r}");
    let why = r["per_query"][0]["refused"].as_str().unwrap();
    assert!(
        why.starts_with("a select: query of 10000000 names over ")
            && why.contains("over the budget of 100,000,000 of one select: query"),
        "{why}"
    );
}

/// More labeled queries than one file may hold: refused at the first line over the count,
/// before the rest is read.
#[test]
fn query_files_are_bounded_by_count() {
    let tmp = tempfile::tempdir().unwrap();
    let lines: String = (0..100_001)
        .map(|i| {
            format!("{{\"id\": \"q{i}\", \"query\": \"read a file\", \"expected\": [\"Read\"]}}\n")
        })
        .collect();
    std::fs::write(tmp.path().join("q.jsonl"), lines).unwrap();
    refused(
        tmp.path(),
        &["eval", "-c", &builtins(), "--queries", "q.jsonl"],
        &[
            "q.jsonl:100001:1:",
            "the file holds more than 100,000 labeled queries, the most one query file may hold",
        ],
    );
}

/// One 50 MB description: refused at its place (it took 2.5 GB to count).
#[test]
fn a_huge_description_is_refused_where_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!(
        "{{\"tools\": [\n  {{\"name\": \"t\", \"description\": \"{}\", \"inputSchema\": {{\"type\": \"object\"}}}}]}}\n",
        "a ".repeat(25_000_000)
    );
    std::fs::write(tmp.path().join("big.json"), text).unwrap();
    refused(
        tmp.path(),
        &["count", "-c", "big.json"],
        &[
            "big.json:2:32:",
            "tools[0].description: is 47.7 MiB long, over the 16 MiB a tool description may hold",
        ],
    );
}

/// One 50 MB input schema (a long enum): refused at the schema, with the tool, its size and
/// the bound, measured without building its JSON text; a native catalog's too.
#[test]
fn a_huge_schema_is_refused_where_it_is() {
    let tmp = tempfile::tempdir().unwrap();
    let schema = |values: &str| {
        format!(
            "{{\"tools\": [\n  {{\"name\": \"ok\"}},\n  {{\"name\": \"t\", \"description\": \"d\", \"inputSchema\": {{\"type\": \"object\", \"enum\": [{values}]}}}}]}}\n"
        )
    };
    // A million values (under the JSON value bound) of 28 bytes each.
    let values = vec!["\"abcdefghijklmnopqrstuvwxyz\""; 1_000_000].join(",");
    std::fs::write(tmp.path().join("big.json"), schema(&values)).unwrap();
    refused(
        tmp.path(),
        &["count", "-c", "big.json"],
        &[
            "big.json:3:52:",
            "tools[1].inputSchema: the input schema of tool \"t\" is 27.7 MiB as compact JSON, \
             over the 16 MiB a tool's input schema may hold",
        ],
    );
    // Ten million short values are past the value bound: refused from the text, located at the
    // first value past it: ten values come before the list, so the 2,000,001st is its item
    // 1,999,990, each item 5 bytes from column 80.
    let values = vec!["\"ab\""; 10_000_000].join(",");
    std::fs::write(tmp.path().join("many.json"), schema(&values)).unwrap();
    refused(
        tmp.path(),
        &["count", "-c", "many.json"],
        &[
            &format!("many.json:3:{}:", 80 + 5 * 1_999_990),
            "tools[1].inputSchema.enum[1999990]: the file holds more than 2,000,000 JSON values",
        ],
    );
    let long = "ab".repeat(50_000);
    let values = vec![long.as_str(); 200].join(", ");
    let text = format!(
        "servers:\n  - name: s\n    tools:\n      - name: big\n        input_schema: {{type: object, enum: [{values}]}}\n"
    );
    std::fs::write(tmp.path().join("native.yaml"), text).unwrap();
    refused(
        tmp.path(),
        &["count", "-c", "native.yaml"],
        &[
            "native.yaml:5:23:",
            "servers[0].tools[0].input_schema: the input schema of tool \"big\" is 19.1 MiB",
        ],
    );
}
