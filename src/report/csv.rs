//! CSV data files, one per table of `index.md`. Numbers are written with Rust's shortest
//! round-tripping form, so the same results give the same bytes.

use super::{PARTS, ReportData};
use crate::output::csv;

fn n(x: usize) -> String {
    x.to_string()
}

fn f(x: f64) -> String {
    x.to_string()
}

pub fn files(data: &ReportData) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if !data.scenarios.is_empty() {
        out.push(("data/scenarios.csv".to_string(), scenarios(data)));
        out.push(("data/requests.csv".to_string(), requests(data)));
    }
    if data.scenarios.iter().any(|s| !s.published.is_empty()) {
        let rows: Vec<Vec<String>> = data
            .scenarios
            .iter()
            .flat_map(|s| {
                s.published.iter().map(|p| {
                    let opt = |x: Option<f64>| x.map(f).unwrap_or_default();
                    vec![
                        s.name.clone(),
                        p.source.clone(),
                        p.claim.clone(),
                        p.metric.clone(),
                        opt(p.published_eager),
                        opt(p.published_deferred),
                        opt(p.published_saved_pct),
                        f(p.measured_eager),
                        f(p.measured_deferred),
                        f(p.measured_saved_pct),
                    ]
                })
            })
            .collect();
        out.push((
            "data/published.csv".to_string(),
            csv(
                &[
                    "scenario",
                    "source",
                    "claim",
                    "metric",
                    "published_eager",
                    "published_deferred",
                    "published_saved_pct",
                    "measured_eager",
                    "measured_deferred",
                    "measured_saved_pct",
                ],
                &rows,
            ),
        ));
    }
    if !data.evals.is_empty() {
        out.push(("data/eval.csv".to_string(), eval(data)));
        let rows: Vec<Vec<String>> = data
            .evals
            .iter()
            .flat_map(|set| {
                set.misses.iter().map(|m| {
                    vec![
                        set.name.clone(),
                        m.scorer.clone(),
                        m.query_id.clone(),
                        m.query.clone(),
                        m.expected.join(" "),
                        m.ranked.join(" "),
                    ]
                })
            })
            .collect();
        out.push((
            "data/misses.csv".to_string(),
            csv(
                &["set", "scorer", "query_id", "query", "expected", "ranked"],
                &rows,
            ),
        ));
    }
    if let Some(sweep) = &data.sweep {
        let rows: Vec<Vec<String>> = sweep
            .points
            .iter()
            .flat_map(|p| {
                p.deferred.iter().map(move |d| {
                    vec![
                        n(p.tools),
                        n(p.servers),
                        n(p.tool_tokens),
                        n(p.eager_first_request_tokens),
                        f(p.eager_window_pct),
                        d.mode.name().to_string(),
                        n(d.list_tokens),
                        f(d.list_tokens_per_tool),
                        n(d.first_request_tokens),
                        f(d.savings_pct),
                        f(d.window_pct),
                    ]
                })
            })
            .collect();
        out.push((
            "data/sweep.csv".to_string(),
            csv(
                &[
                    "tools",
                    "servers",
                    "tool_tokens",
                    "eager_first_request_tokens",
                    "eager_window_pct",
                    "listing",
                    "list_tokens",
                    "list_tokens_per_tool",
                    "deferred_first_request_tokens",
                    "savings_pct",
                    "deferred_window_pct",
                ],
                &rows,
            ),
        ));
    }
    if !data.catalogs.is_empty() {
        let rows: Vec<Vec<String>> = data
            .catalogs
            .iter()
            .map(|c| {
                vec![
                    c.name.clone(),
                    n(c.tools),
                    n(c.servers),
                    n(c.tokens),
                    f(c.mean_tokens),
                    n(c.max_tokens),
                ]
            })
            .collect();
        out.push((
            "data/catalogs.csv".to_string(),
            csv(
                &[
                    "catalog",
                    "tools",
                    "servers",
                    "tokens",
                    "mean_tokens",
                    "max_tokens",
                ],
                &rows,
            ),
        ));
    }
    let lat = &data.latency;
    if !lat.eval.is_empty() || !lat.sweep.is_empty() {
        let mut rows: Vec<Vec<String>> = lat
            .eval
            .iter()
            .map(|l| {
                vec![
                    "eval".into(),
                    l.set.clone(),
                    String::new(),
                    l.scorer.clone(),
                    String::new(),
                    f(l.p50_us),
                    f(l.p95_us),
                ]
            })
            .collect();
        rows.extend(lat.sweep.iter().map(|l| {
            vec![
                "sweep".into(),
                "generated".into(),
                n(l.tools),
                l.scorer.clone(),
                f(l.build_ms),
                f(l.p50_us),
                f(l.p95_us),
            ]
        }));
        out.push((
            "data/latency.csv".to_string(),
            csv(
                &[
                    "part", "set", "tools", "scorer", "build_ms", "p50_us", "p95_us",
                ],
                &rows,
            ),
        ));
    }
    out
}

fn scenarios(data: &ReportData) -> String {
    let rows: Vec<Vec<String>> = data
        .scenarios
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                n(s.tool_count),
                n(s.deferred_count),
                n(s.eager.first_request_tokens),
                n(s.deferred.first_request_tokens),
                f(s.first_request_savings_pct),
                n(s.eager.total_input_tokens),
                n(s.deferred.total_input_tokens),
                f(s.total_input_savings_pct),
                n(s.eager.requests),
                n(s.deferred.requests),
                n(s.deferred.searches),
                n(s.deferred.misses),
                f(s.eager.cost_usd),
                f(s.deferred.cost_usd),
                f(s.cost_savings_pct),
                f(s.eager.cost_cached_usd),
                f(s.deferred.cost_cached_usd),
                f(s.cost_cached_savings_pct),
                f(s.eager.peak_occupancy_pct),
                f(s.deferred.peak_occupancy_pct),
            ]
        })
        .collect();
    csv(
        &[
            "scenario",
            "tools",
            "deferred_tools",
            "eager_first_request_tokens",
            "deferred_first_request_tokens",
            "first_request_savings_pct",
            "eager_total_input_tokens",
            "deferred_total_input_tokens",
            "total_input_savings_pct",
            "eager_requests",
            "deferred_requests",
            "deferred_searches",
            "deferred_misses",
            "eager_cost_usd",
            "deferred_cost_usd",
            "cost_savings_pct",
            "eager_cost_cached_usd",
            "deferred_cost_cached_usd",
            "cost_cached_savings_pct",
            "eager_peak_occupancy_pct",
            "deferred_peak_occupancy_pct",
        ],
        &rows,
    )
}

fn requests(data: &ReportData) -> String {
    let mut headers = vec!["scenario", "mode", "request", "turn", "kind"];
    headers.extend(PARTS);
    headers.extend([
        "input_tokens",
        "cached_tokens",
        "output_tokens",
        "cost_usd",
        "cost_cached_usd",
        "occupancy_pct",
    ]);
    let rows: Vec<Vec<String>> = data
        .scenarios
        .iter()
        .flat_map(|s| {
            s.requests.iter().map(|r| {
                let mut row = vec![
                    s.name.clone(),
                    r.mode.clone(),
                    n(r.index),
                    n(r.turn),
                    r.kind.clone(),
                ];
                row.extend(r.parts.iter().map(|&p| n(p)));
                row.extend([
                    n(r.input_tokens),
                    n(r.cached_tokens),
                    n(r.output_tokens),
                    f(r.cost_usd),
                    f(r.cost_cached_usd),
                    f(r.occupancy_pct),
                ]);
                row
            })
        })
        .collect();
    csv(&headers, &rows)
}

fn eval(data: &ReportData) -> String {
    let mut rows = Vec::new();
    for set in &data.evals {
        for sc in &set.scorers {
            for (metric, value) in &sc.metrics {
                let ci = sc.ci95.iter().find(|(m, _)| m == metric).map(|c| c.1);
                rows.push(vec![
                    set.name.clone(),
                    set.catalog.clone(),
                    n(set.tool_count),
                    n(set.query_count),
                    sc.scorer.clone(),
                    metric.clone(),
                    f(*value),
                    ci.map(|c| f(c[0])).unwrap_or_default(),
                    ci.map(|c| f(c[1])).unwrap_or_default(),
                ]);
            }
        }
    }
    csv(
        &[
            "set",
            "catalog",
            "tools",
            "queries",
            "scorer",
            "metric",
            "value",
            "ci95_low",
            "ci95_high",
        ],
        &rows,
    )
}
