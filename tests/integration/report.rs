//! The report renderers on a tiny fixed `ReportData` (no latencies): Markdown and CSV are
//! snapshot-tested, every SVG must parse as XML and name each of its series, and the same data
//! must give the same bytes. Then the `report` command end to end.

use std::collections::BTreeMap;

use serde_json::json;
use toolbudget::counter::{CounterKind, CounterNames};
use toolbudget::eval::EvalResult;
use toolbudget::experiment::eval::{EvalSet, Miss};
use toolbudget::experiment::report::{CatalogRow, ReportData, ReportSettings};
use toolbudget::experiment::sweep::{ListingCost, ListingMode, Sweep, SweepPoint, SweepSettings};
use toolbudget::simulate::ScenarioResult;
use toolbudget::simulate::request::PARTS;
use toolbudget::simulate::result::{Categories, PublishedComparison};
use toolbudget::view::report::{Pages, pages, render};

fn request(
    mode: &str,
    index: usize,
    kind: &str,
    parts: [usize; 6],
    cost: f64,
) -> serde_json::Value {
    let input: usize = parts.iter().sum();
    json!({
        "mode": mode, "agent": 0, "turn": 1, "index": index, "kind": kind,
        "tools_sent": if mode == "eager" { 3 } else { 2 },
        "parts": {"system": parts[0], "tool_overhead": parts[1], "tools": parts[2],
                  "deferred_list": parts[3], "history": parts[4], "new": parts[5]},
        "input_tokens": input, "cached_tokens": 0, "output_tokens": 50,
        "cost_usd": cost, "cost_cached_usd": cost / 2.0, "ttft_ms": 500.0, "duration_ms": 1300.0,
        "occupancy_pct": input as f64 / 2000.0, "headroom_tokens": 200_000 - input as i64 - 50,
        "fits_window": true,
    })
}

/// One mode's totals; what the report does not show is zero.
fn mode(
    first: usize,
    total: usize,
    requests: usize,
    searches: usize,
    cost: f64,
    peak: f64,
) -> serde_json::Value {
    json!({
        "first_request_tokens": first, "total_input_tokens": total, "requests": requests,
        "searches": searches, "misses": 0, "retries": 0, "retry_input_tokens": 0,
        "premature_calls": 0, "failed_calls": 0, "unavailable_calls": 0, "tool_calls": 1,
        "turns": 2, "subagent_requests": 0, "tools_sent": if searches == 0 { 3 } else { 2 },
        "output_tokens": 130 + 25 * searches, "cached_input_tokens": 0,
        "mean_request_tokens": total as f64 / requests as f64,
        // System prompt 1,000, tool preamble 300 and the first user message 10, as in the example.
        "first_request_tool_tokens": first - 1310,
        "parts": {"system": 0, "tool_overhead": 0, "tools": 0, "deferred_list": 0, "history": 0, "new": 0},
        "cost_usd": {"without_caching": cost, "with_caching": cost / 2.0},
        // Every request of the fixture takes 500 ms to its first token and 1,300 ms in all.
        "latency_ms": {"total": 1300.0 * requests as f64, "first_ttft": 500.0,
                       "mean_turn_ttft": 500.0, "mean_turn": 1300.0 * requests as f64 / 2.0},
        "peak_occupancy_pct": peak, "min_headroom_tokens": 190_000, "fits_window": peak <= 100.0,
        "overflow_requests": i32::from(peak > 100.0),
    })
}

fn settings() -> serde_json::Value {
    json!({
        "counter": "o200k-json", "tokenizer": "o200k_base", "render": "json", "profile": "test-profile",
        "scorer": "keyword", "when": "always", "deferring": true, "discovery": "model-search",
        "listing": "names", "list_style": "list", "reveal": "append", "max_results": 5,
        "retry": ["rephrase", "select"], "search_tool": "ToolSearch", "search_tool_tokens": 80,
        "search_tool_from_catalog": false, "search_latency": "modeled", "search_latency_ms": 1.0,
    })
}

fn profile() -> serde_json::Value {
    json!({
        "name": "test-profile", "input_per_mtok": 3.0, "output_per_mtok": 15.0,
        "cache_write_per_mtok": 3.75, "cache_read_per_mtok": 0.3, "tool_overhead_tokens": 300,
        "context_window": 200_000, "call_tokens": 30, "reply_tokens": 50,
        "request_overhead_ms": 400.0, "prefill_tokens_per_s": 4000.0,
        "cached_prefill_tokens_per_s": 40000.0, "decode_tokens_per_s": 60.0,
        "search_latency_ms": 1.0, "definition_fetch_ms": 0.0, "definition_ttl_s": 300.0,
        "turn_gap_s": 30.0, "source": "test",
    })
}

/// The worked example of ACCOUNTING.md as the simulator's result (hand-checkable numbers).
fn worked_example() -> ScenarioResult {
    let requests = vec![
        request("eager", 1, "user", [1000, 300, 450, 0, 0, 10], 0.006),
        request("eager", 2, "user", [1000, 300, 450, 0, 60, 20], 0.006),
        request(
            "eager",
            3,
            "tool_result",
            [1000, 300, 450, 0, 110, 40],
            0.007,
        ),
        request("deferred", 1, "user", [1000, 300, 180, 20, 0, 10], 0.005),
        request("deferred", 2, "user", [1000, 300, 180, 20, 60, 20], 0.005),
        request(
            "deferred",
            3,
            "search",
            [1000, 300, 180, 20, 105, 360],
            0.006,
        ),
        request(
            "deferred",
            4,
            "tool_result",
            [1000, 300, 180, 20, 495, 40],
            0.007,
        ),
    ];
    let mut result: ScenarioResult = serde_json::from_value(json!({
        "name": "worked-example", "counter": "o200k-json", "tokenizer": "o200k_base", "tool_count": 3, "deferred_count": 2,
        "eager": mode(1760, 5490, 3, 0, 0.019, 0.95),
        "deferred": mode(1510, 7090, 4, 1, 0.023, 1.02),
        "savings": {"first_request_pct": 14.2, "total_input_pct": -29.14,
                    "cost_without_caching_pct": -21.05, "cost_with_caching_pct": -21.05,
                    "caveats": []},
        "description": "ACCOUNTING.md's worked example.",
        "settings": settings(), "model": profile(),
        "requests": requests,
    }))
    .expect("the fixture is a ScenarioResult");
    // A published figure is held whole by its comparison (results are not read back with them).
    let figure = serde_json::from_value(json!({
        "claim": "first request smaller", "source": "https://example.com/posts/deferred-tools",
        "eager_tokens": 77_000.0, "deferred_tokens": 8_700.0,
        "metric": "first_request_tokens", "saved_pct": 88.7,
    }))
    .expect("the figure is a Published");
    result.published.push(PublishedComparison {
        figure,
        counter: CounterKind::O200kJson,
        measured_eager_tokens: 1760.0,
        measured_deferred_tokens: 1510.0,
        measured_saved_pct: 14.2,
        measured_eager_o200k_json: 1760.0,
        measured_deferred_o200k_json: 1510.0,
        measured_eager_cl100k_json: 0.0,
        measured_deferred_cl100k_json: 0.0,
        eager_gap: None,
        deferred_gap: None,
        eager_measured_parts: Categories::default(),
        deferred_measured_parts: Categories::default(),
        eager_within_range: None,
        deferred_within_range: None,
        measured_eager_usd: None,
        measured_deferred_usd: None,
    });
    result
}

/// A conversation whose eager requests overflow the window and whose deferred calls failed:
/// no saving is claimed, and why is said.
fn overflow_example() -> ScenarioResult {
    let mut deferred = mode(3_000, 9_000, 3, 1, 0.03, 1.5);
    deferred["failed_calls"] = json!(1);
    deferred["tool_calls"] = json!(0);
    serde_json::from_value(json!({
        "name": "overflow", "counter": "o200k-json", "tokenizer": "o200k_base", "tool_count": 900, "deferred_count": 899,
        "eager": mode(273_714, 547_428, 2, 0, 1.6, 137.0),
        "deferred": deferred,
        "savings": {"first_request_pct": null, "total_input_pct": null,
                    "cost_without_caching_pct": null, "cost_with_caching_pct": null,
                    "caveats": ["eager does not fit: 137% of a 200,000 window (largest request, input and output; 1 of 2 requests overflow), so no saving is claimed",
                                "unequal work: tool calls made, eager 1 and deferred 0 (deferred: 1 failed, no search found the tool; 0 unavailable), so the totals are not the same conversation"]},
        "settings": settings(), "model": profile(),
    }))
    .expect("the fixture is a ScenarioResult")
}

/// Two scorers on one query set, as the evaluator returns them (latency kept apart).
fn eval_result() -> EvalResult {
    let scorer = |name: &str,
                  settings: serde_json::Value,
                  r1: f64,
                  r5: f64,
                  mrr: f64,
                  ci: [f64; 2]| {
        json!({"scorer": name, "settings": settings,
               "metrics": {"recall@1": r1, "recall@3": f64::midpoint(r1, r5), "recall@5": r5, "mrr": mrr},
               "ci95": {"recall@5": ci}, "refused_queries": 0})
    };
    serde_json::from_value(json!({
        "tool_count": 3, "query_count": 4, "set": "tiny", "queries": "tiny.jsonl",
        "ranked_tools": 3, "ks": [1, 3, 5], "depth": 10,
        "results": [
            scorer("keyword", json!({"max_results": "20"}), 0.5, 0.75, 0.625, [0.25, 1.0]),
            scorer("bm25", json!({"k1": "1.2", "b": "0.75"}), 0.75, 1.0, 0.875, [1.0, 1.0]),
        ],
    }))
    .expect("the fixture is an EvalResult")
}

fn tiny() -> ReportData {
    let eval = EvalSet {
        catalog: "fixtures/catalogs".into(),
        result: eval_result(),
        skipped: vec![("semantic".into(), "model not found".into())],
        misses: vec![Miss {
            set: "tiny".into(),
            scorer: "keyword".into(),
            query_id: "q3".into(),
            query: "file a bug | urgent".into(),
            expected: "mcp__gh__create_issue".into(),
            ranked: "mcp__gh__list_issues Read".into(),
        }],
        miss_k: 5,
    };
    let point = |tools: usize, servers: usize, eager: usize, lists: [usize; 3]| {
        let fixed = 3000 + 346 + 166;
        SweepPoint {
            tools,
            servers,
            tool_tokens: eager - 3346,
            eager_first_request_tokens: eager,
            eager_window_pct: eager as f64 / 2000.0,
            deferred: ListingMode::ALL
                .into_iter()
                .zip(lists)
                .map(|(mode, list)| ListingCost {
                    mode,
                    list_tokens: list,
                    list_tokens_per_tool: list as f64 / tools as f64,
                    first_request_tokens: fixed + list,
                    savings_pct: ((eager - fixed - list) as f64 / eager as f64 * 10_000.0).round()
                        / 100.0,
                    window_pct: (fixed + list) as f64 / 2000.0,
                })
                .collect(),
        }
    };
    ReportData {
        settings: ReportSettings {
            counter: CounterKind::O200kJson,
            profile: vec![
                ("name".into(), "test-profile".into()),
                ("input_per_mtok".into(), "3".into()),
            ],
            other: vec![("eval k".into(), "1,3,5".into())],
        },
        catalogs: vec![CatalogRow {
            catalog: "fixtures".into(),
            tool_count: 3,
            search_tool: String::new(),
            servers: 1,
            tokens: 450,
            mean_tokens: 150.0,
            max_tokens: 200,
        }],
        scenarios: vec![worked_example(), overflow_example()],
        evals: vec![eval],
        sessions: None,
        clients: None,
        live: Vec::new(),
        sweep: Some(Sweep {
            settings: SweepSettings {
                counter: CounterNames(CounterKind::O200kJson),
                seed: 1,
                tools_per_server: 12,
                system_prompt_tokens: 3000,
                tool_overhead_tokens: 346,
                search_tool_tokens: 166,
                profile: "test-profile".into(),
                context_window: 200_000,
            },
            points: vec![
                point(10, 1, 5_020, [119, 264, 36]),
                point(1_000, 84, 138_399, [11_757, 25_346, 1_829]),
            ],
        }),
        deferral: None,
        latency: Default::default(),
        notes: vec!["semantic skipped: model not found".into()],
    }
}

fn files(data: &ReportData) -> BTreeMap<String, Vec<u8>> {
    let mut files = render(data).expect("the tiny report renders");
    pages(&mut files, Pages::Both);
    files.into_iter().map(|f| (f.path, f.bytes)).collect()
}

fn text(files: &BTreeMap<String, Vec<u8>>, path: &str) -> String {
    String::from_utf8(files[path].clone()).unwrap()
}

#[test]
fn markdown_and_csv_snapshots() {
    let f = files(&tiny());
    insta::assert_snapshot!("index_md", text(&f, "index.md"));
    for csv in f.keys().filter(|p| p.ends_with(".csv")) {
        let name = csv.trim_start_matches("data/").replace('.', "_");
        insta::assert_snapshot!(name, text(&f, csv));
    }
    // No latencies in, no latency files out.
    assert!(!f.contains_key("data/latency.csv") && !f.contains_key("data/latency.json"));
}

#[test]
fn every_svg_parses_and_names_its_series() {
    let f = files(&tiny());
    let expect: &[(&str, &[&str])] = &[
        ("charts/requests-worked-example.svg", &PARTS),
        (
            "charts/cumulative-worked-example.svg",
            &["eager", "deferred"],
        ),
        (
            "charts/cost-worked-example.svg",
            &[
                "eager, no caching",
                "deferred, no caching",
                "eager, prompt caching",
                "deferred, prompt caching",
            ],
        ),
        ("charts/occupancy.svg", &["eager", "deferred"]),
        ("charts/recall-tiny.svg", &["keyword", "bm25"]),
        (
            "charts/cache-invalidations.svg",
            &["system", "tools", "deferred_list", "history", "resume"],
        ),
        (
            "charts/sweep-first-request.svg",
            &[
                "eager (every definition)",
                "deferred, names list",
                "deferred, descriptions list",
                "deferred, servers list",
                "context window (200,000)",
            ],
        ),
        (
            "charts/sweep-savings.svg",
            &["names list", "descriptions list", "servers list"],
        ),
    ];
    let svgs: Vec<&String> = f.keys().filter(|p| p.ends_with(".svg")).collect();
    assert_eq!(svgs.len(), expect.len(), "charts: {svgs:?}");
    for (path, series) in expect {
        let svg = text(&f, path);
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(|t| t.trim().to_string()))
            .collect();
        for s in *series {
            assert!(texts.iter().any(|t| t == s), "{path} lacks series {s:?}");
        }
        // Every chart is embedded in index.md with a relative link.
        assert!(
            text(&f, "index.md").contains(&format!("]({path})")),
            "{path}"
        );
    }
}

/// The decision page's numbers: computed once, written to `data/summary.json` (pinned) and
/// shown on the page; `index.html` is there beside `index.md`.
#[test]
fn summary_json_is_the_decision_page() {
    let f = files(&tiny());
    insta::assert_snapshot!("summary_json", text(&f, "data/summary.json"));
    let v: serde_json::Value = serde_json::from_slice(&f["data/summary.json"]).unwrap();
    let o = &v["overall"];
    assert_eq!(o["scenarios"], 2);
    // `overflow` claims no saving: the medians are the worked example's.
    assert_eq!(o["compared"], 1);
    assert_eq!(o["median_first_request_saved_pct"], 14.2);
    assert_eq!(o["median_first_request_saved_tokens"], 250.0);
    assert_eq!(o["median_conversation_saved_tokens"], -1600.0);
    assert_eq!(o["median_saved_usd_per_1000"], -4.0);
    assert_eq!(o["more_tokens_deferred"], json!(["worked-example"]));
    assert_eq!(o["unequal_work"], json!(["overflow"]));
    assert_eq!(
        o["window_overflow"],
        json!([{"scenario": "overflow", "mode": "eager"}])
    );
    // No search missed: a miss is priced as one more search request (the worked example's
    // third deferred request: 1,000 + 300 + 180 + 20 + 105 + 360 tokens).
    assert_eq!(o["miss_cost"]["from"], "search");
    assert_eq!(o["miss_cost"]["median_input_tokens"], 1965.0);
    assert_eq!(v["scenarios"][0]["pays"], false);
    assert_eq!(v["scenarios"][1]["pays"], serde_json::Value::Null);
    assert_eq!(v["query_sets"][0]["best_scorer"], "bm25");
    assert_eq!(v["query_sets"][0]["value"], 1.0);
    let md = text(&f, "index.md");
    assert!(md.contains("| saving per request (first request) | **14.2%** (250 tokens) |"));
    assert!(md.contains("**bm25** on `tiny`: recall@5 **1.000** (95% CI 1.000–1.000)"));
    let html = text(&f, "index.html");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("<h2 id=\"decision\">"));
}

#[test]
fn same_data_same_bytes() {
    assert_eq!(files(&tiny()), files(&tiny()));
}

#[test]
fn report_json_round_trips_the_numbers() {
    let f = files(&tiny());
    let v: serde_json::Value = serde_json::from_slice(&f["data/report.json"]).unwrap();
    assert_eq!(v["scenarios"][0]["eager"]["total_input_tokens"], 5490);
    assert_eq!(
        v["sweep"]["points"][1]["deferred"][0]["list_tokens"],
        11_757
    );
    assert!(
        v.get("latency").is_none(),
        "latencies stay out of report.json"
    );
}

/// The command end to end, on the one shared run: every part is there. That every file but the
/// measured latencies is the same from run to run is pinned byte for byte by
/// `output_bytes::report_bytes`.
#[test]
fn report_command_writes_every_part() {
    let files = crate::support::files_under(crate::support::report_once());
    for part in [
        "index.md",
        "data/report.json",
        "data/scenarios.csv",
        "data/requests.csv",
        "data/eval.csv",
        "data/sweep.csv",
        "data/latency.csv",
        "data/latency.json",
        "charts/latency.svg",
    ] {
        assert!(
            files.contains_key(part),
            "{part} missing: {:?}",
            files.keys()
        );
    }
}

#[test]
fn report_rejects_a_data_folder_without_catalogs() {
    let dir = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("toolbudget")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["report", "--quiet", "--out"])
        .arg(dir.path().join("r"))
        .arg("--data")
        .arg(dir.path())
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(
        err.starts_with("error: ") && err.contains("catalogs/"),
        "{err}"
    );
    assert!(
        !dir.path().join("r").exists(),
        "nothing written on bad input"
    );
}

#[test]
fn catalog_generate_is_byte_stable_and_checks_its_flags() {
    let run = |args: &[&str]| {
        assert_cmd::Command::cargo_bin("toolbudget")
            .unwrap()
            .args(["catalog", "generate"])
            .args(args)
            .output()
            .unwrap()
    };
    let a = run(&["--tools", "120", "--servers", "7", "--seed", "9"]);
    let b = run(&["--tools", "120", "--servers", "7", "--seed", "9"]);
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    let servers = v["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 7);
    let tools: usize = servers
        .iter()
        .map(|s| s["tools"].as_array().unwrap().len())
        .sum();
    assert_eq!(tools, 120);
    for bad in [
        &["--tools", "0"][..],
        &["--tools", "5", "--servers", "6"][..],
        &["--tools", "ten"][..],
    ] {
        let o = run(bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("error"));
    }
}

/// CSV text as a header and rows keyed by the `key` columns.
fn csv_table(text: &str, key: &[usize]) -> (Vec<String>, BTreeMap<Vec<String>, Vec<String>>) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let mut rows = BTreeMap::new();
    for rec in r.records() {
        let row: Vec<String> = rec.unwrap().iter().map(String::from).collect();
        let k = key.iter().map(|&i| row[i].clone()).collect();
        assert!(rows.insert(k, row).is_none(), "duplicate key");
    }
    (header, rows)
}

fn run_ok(args: &[&str]) -> String {
    let out = assert_cmd::Command::cargo_bin("toolbudget")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn sorted_paths(dir: &str, ext: &str) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut v: Vec<String> = std::fs::read_dir(root.join(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .map(|p| p.strip_prefix(root).unwrap().display().to_string())
        .collect();
    v.sort();
    v
}

/// `simulate --format csv` and the report's `scenarios.csv` (and the per-request and eval CSVs)
/// are one table: same columns, same values for every run both make.
#[test]
fn commands_and_report_write_the_same_csv() {
    let out = crate::support::report_once();
    let read = |name: &str| std::fs::read_to_string(out.join("data").join(name)).unwrap();
    let mut scenarios = sorted_paths("scenarios", "yaml");
    // The report also runs the published figures' scenarios; one of them reads third-party
    // data the report leaves out (and `simulate` refuses) when it is absent.
    let shared = crate::support::shared_beside_repo(&[
        "provider-counts/acme-series.json",
        "provider-counts/acme-21-tools.anthropic.json",
    ]);
    scenarios.extend(
        sorted_paths("scenarios/published", "yaml")
            .into_iter()
            .filter(|p| shared || !p.ends_with("tool-search-testing.yaml")),
    );
    let mut args: Vec<&str> = vec!["simulate", "--format", "csv"];
    args.extend(scenarios.iter().map(String::as_str));
    // scenarios: by name; requests: by scenario, mode and index.
    let keys: [(bool, &str, &[usize]); 2] = [
        (false, "scenarios.csv", &[0]),
        (true, "requests.csv", &[0, 1, 4]),
    ];
    for (per_request, file, key) in keys {
        let mut a = args.clone();
        if per_request {
            a.push("--per-request");
        }
        let (h1, r1) = csv_table(&run_ok(&a), key);
        let (h2, r2) = csv_table(&read(file), key);
        assert_eq!(h1, h2, "{file}: columns");
        assert!(!r1.is_empty());
        assert_eq!(r1, r2, "{file}: rows");
    }
    let mut eval: Vec<String> = vec!["eval".into(), "--catalog".into()];
    eval.push("fixtures/catalogs/builtins.yaml".into());
    for c in sorted_paths("fixtures/catalogs/mcp", "json") {
        eval.push("--catalog".into());
        eval.push(c);
    }
    for s in [
        "--queries",
        "fixtures/queries/fixtures.jsonl",
        "--scorer",
        "keyword",
        "--scorer",
        "regex",
        "--scorer",
        "bm25",
        "--format",
        "csv",
        "--quiet",
    ] {
        eval.push(s.into());
    }
    let eval: Vec<&str> = eval.iter().map(String::as_str).collect();
    // key: set, setting, tool_count, ranked_tools, query_count, scorer, refused_queries,
    // class, metric
    let key = [0, 1, 2, 3, 4, 5, 6, 7, 8];
    let (h1, r1) = csv_table(&run_ok(&eval), &key);
    let (h2, r2) = csv_table(&read("eval.csv"), &key);
    assert_eq!(h1, h2, "eval.csv: columns");
    // Per scorer: 14 metrics over all queries, the wrong-sibling rate, 14 per class (the
    // shipped set's queries are partial-name or paraphrase).
    assert_eq!(r1.len(), 3 * (14 + 1 + 2 * 14));
    for (k, row) in &r1 {
        assert_eq!(Some(row), r2.get(k), "eval.csv: {k:?}");
    }
}
