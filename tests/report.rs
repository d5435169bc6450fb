//! The report renderers on a tiny fixed `ReportData` (no latencies): Markdown and CSV are
//! snapshot-tested, every SVG must parse as XML and name each of its series, and the same data
//! must give the same bytes. Then the `report` command end to end.

mod common;

use std::collections::BTreeMap;

use toolbudget::report::sweep::{ListingCost, ListingMode, Sweep, SweepPoint, SweepSettings};
use toolbudget::report::{
    CatalogRow, EvalSet, Miss, ModeRow, PublishedRow, ReportData, ReportSettings, RequestRow,
    ScenarioRow, ScorerMetrics, render,
};

fn request(mode: &str, index: usize, kind: &str, parts: [usize; 6], cost: f64) -> RequestRow {
    RequestRow {
        mode: mode.into(),
        index,
        turn: 1,
        kind: kind.into(),
        parts,
        input_tokens: parts.iter().sum(),
        cached_tokens: 0,
        output_tokens: 50,
        cost_usd: cost,
        cost_cached_usd: cost / 2.0,
        occupancy_pct: parts.iter().sum::<usize>() as f64 / 2000.0,
    }
}

/// The worked example of ACCOUNTING.md as a report row (hand-checkable numbers).
fn tiny() -> ReportData {
    let eager = [
        request("eager", 1, "user", [1000, 300, 450, 0, 0, 10], 0.006),
        request("eager", 2, "user", [1000, 300, 450, 0, 60, 20], 0.006),
        request(
            "eager",
            3,
            "tool_result",
            [1000, 300, 450, 0, 110, 40],
            0.007,
        ),
    ];
    let deferred = [
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
    let scenario = ScenarioRow {
        name: "worked-example".into(),
        description: Some("ACCOUNTING.md's worked example.".into()),
        tool_count: 3,
        deferred_count: 2,
        eager: ModeRow {
            first_request_tokens: 1760,
            total_input_tokens: 5490,
            requests: 3,
            searches: 0,
            misses: 0,
            output_tokens: 130,
            cost_usd: 0.019,
            cost_cached_usd: 0.0095,
            peak_occupancy_pct: 0.95,
        },
        deferred: ModeRow {
            first_request_tokens: 1510,
            total_input_tokens: 7090,
            requests: 4,
            searches: 1,
            misses: 0,
            output_tokens: 155,
            cost_usd: 0.023,
            cost_cached_usd: 0.0115,
            peak_occupancy_pct: 1.02,
        },
        first_request_savings_pct: 14.2,
        total_input_savings_pct: -29.14,
        cost_savings_pct: -21.05,
        cost_cached_savings_pct: -21.05,
        settings: vec![
            ("scorer".into(), "keyword".into()),
            ("listing".into(), "names".into()),
        ],
        published: vec![PublishedRow {
            source: "https://example.com/posts/deferred-tools".into(),
            claim: "first request smaller".into(),
            metric: "first_request_tokens".into(),
            published_eager: Some(77_000.0),
            published_deferred: Some(8_700.0),
            published_saved_pct: Some(88.7),
            measured_eager: 1760.0,
            measured_deferred: 1510.0,
            measured_saved_pct: 14.2,
        }],
        requests: eager.into_iter().chain(deferred).collect(),
    };
    let metrics = |r1: f64, r5: f64, mrr: f64| {
        vec![
            ("recall@1".to_string(), r1),
            ("recall@3".to_string(), (r1 + r5) / 2.0),
            ("recall@5".to_string(), r5),
            ("mrr".to_string(), mrr),
        ]
    };
    let eval = EvalSet {
        name: "tiny".into(),
        catalog: "fixtures/catalogs".into(),
        tool_count: 3,
        query_count: 4,
        ks: vec![1, 3, 5],
        scorers: vec![
            ScorerMetrics {
                scorer: "keyword".into(),
                settings: vec![("max_results".into(), "20".into())],
                metrics: metrics(0.5, 0.75, 0.625),
                ci95: vec![("recall@5".into(), [0.25, 1.0])],
                failed_queries: 0,
            },
            ScorerMetrics {
                scorer: "bm25".into(),
                settings: vec![("k1".into(), "1.2".into()), ("b".into(), "0.75".into())],
                metrics: metrics(0.75, 1.0, 0.875),
                ci95: vec![("recall@5".into(), [1.0, 1.0])],
                failed_queries: 0,
            },
        ],
        skipped: vec![("semantic".into(), "model not found".into())],
        misses: vec![Miss {
            scorer: "keyword".into(),
            query_id: "q3".into(),
            query: "file a bug | urgent".into(),
            expected: vec!["mcp__gh__create_issue".into()],
            ranked: vec!["mcp__gh__list_issues".into(), "Read".into()],
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
            counter: "o200k-json".into(),
            tokenizer: "o200k_base".into(),
            render: "json".into(),
            profile: vec![
                ("name".into(), "test-profile".into()),
                ("input_per_mtok".into(), "3".into()),
            ],
            other: vec![("eval k".into(), "1,3,5".into())],
        },
        catalogs: vec![CatalogRow {
            name: "fixtures".into(),
            tools: 3,
            servers: 1,
            tokens: 450,
            mean_tokens: 150.0,
            max_tokens: 200,
        }],
        scenarios: vec![scenario],
        evals: vec![eval],
        sweep: Some(Sweep {
            settings: SweepSettings {
                counter: "o200k-json".into(),
                tokenizer: "o200k_base".into(),
                render: "json".into(),
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
        latency: Default::default(),
        notes: vec!["semantic skipped: model not found".into()],
    }
}

fn files(data: &ReportData) -> BTreeMap<String, Vec<u8>> {
    render(data)
        .expect("the tiny report renders")
        .into_iter()
        .map(|f| (f.path, f.bytes))
        .collect()
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
        (
            "charts/requests-worked-example.svg",
            &[
                "system",
                "tool_overhead",
                "tools",
                "deferred_list",
                "history",
                "new",
            ],
        ),
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

/// The command end to end: twice into two folders, every file but the measured latencies
/// byte-identical.
#[test]
fn report_command_is_deterministic_except_latency() {
    let dir = tempfile::tempdir().unwrap();
    let run = |out: &std::path::Path| {
        assert_cmd::Command::cargo_bin("toolbudget")
            .unwrap()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["report", "--quiet", "--out"])
            .arg(out)
            .assert()
            .success();
    };
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    run(&a);
    run(&b);
    let list = |root: &std::path::Path| -> BTreeMap<String, Vec<u8>> {
        let mut out = BTreeMap::new();
        for sub in ["", "data", "charts"] {
            for e in std::fs::read_dir(root.join(sub)).unwrap() {
                let p = e.unwrap().path();
                if p.is_file() {
                    let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
        out
    };
    let (fa, fb) = (list(&a), list(&b));
    assert_eq!(fa.keys().collect::<Vec<_>>(), fb.keys().collect::<Vec<_>>());
    for (path, bytes) in &fa {
        let measured = path.contains("latency");
        if (path.ends_with(".csv") || path.ends_with(".json")) && !measured {
            assert!(bytes == &fb[path], "{path} differs between runs");
        }
    }
    assert!(fa.contains_key("index.md") && fa.contains_key("data/sweep.csv"));
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
