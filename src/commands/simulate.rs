//! `toolbudget simulate`: replays scenarios eagerly and deferred and prints what each mode
//! costs. The json is deterministic (modeled search latency); the table adds the real
//! scorer's latency measured here, on this machine, over the scenario's own queries.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use crate::catalog::Catalog;
use crate::cli::SimulateArgs;
use crate::error::Result;
use crate::output::{Format, csv, emit, md_table, text_table, to_json};
use crate::search::{self, ScorerConfig, ScorerKind, SearchRequest};
use crate::simulate::scenario::Item;
use crate::simulate::{self, Prepared, Scenario, ScenarioResult};

#[derive(Debug, Serialize)]
pub struct SimulateReport {
    pub scenarios: Vec<ScenarioResult>,
}

/// Real search latency of one scenario's queries (table only: wall-clock is not repeatable).
#[derive(Debug, Clone, Copy)]
pub struct MeasuredSearch {
    pub queries: usize,
    pub p50_us: f64,
    pub max_us: f64,
}

fn queries(items: &[Item], out: &mut Vec<String>) {
    for item in items {
        if let Item::Turn(t) = item {
            for c in &t.calls {
                out.push(c.query.clone().unwrap_or_else(|| t.user.clone()));
            }
            if let Some(s) = &t.subagent {
                queries(&s.conversation, out);
            }
        }
    }
}

/// Times the scenario's search queries on the real scorer over the deferred tools.
pub fn measure_search(scenario: &Scenario, prepared: &Prepared) -> Option<MeasuredSearch> {
    let mut qs = Vec::new();
    queries(&scenario.conversation, &mut qs);
    qs.sort();
    qs.dedup();
    if qs.is_empty() {
        return None;
    }
    let candidates: Vec<bool> = (0..prepared.catalog.len())
        .map(|i| simulate::is_deferrable(prepared, i))
        .collect();
    let mut times: Vec<f64> = Vec::with_capacity(qs.len());
    for q in &qs {
        let req = SearchRequest {
            query: q,
            limit: scenario.deferred.max_results,
            candidates: Some(&candidates),
        };
        let start = Instant::now();
        let ok = prepared.scorer.search(&req).is_ok();
        let us = start.elapsed().as_secs_f64() * 1e6;
        if ok {
            times.push(us);
        }
    }
    if times.is_empty() {
        return None;
    }
    times.sort_by(f64::total_cmp);
    Some(MeasuredSearch {
        queries: times.len(),
        p50_us: times[times.len() / 2],
        max_us: *times.last().expect("non-empty"),
    })
}

fn build_scorer(kind: ScorerKind, catalog: Arc<Catalog>) -> Result<Box<dyn search::Scorer>> {
    search::build(kind, catalog, &ScorerConfig::default())
}

pub fn run(args: &SimulateArgs) -> Result<()> {
    let mut results = Vec::new();
    let mut measured = Vec::new();
    let calibration = args
        .calibration
        .as_deref()
        .map(simulate::calibration::CalibrationFile::load)
        .transpose()?;
    for path in &args.scenarios {
        let scenario = simulate::load_scenario(path)?;
        let tokenizer = simulate::tokenizer_for(&scenario, args.tokenizer);
        let mut prepared = simulate::prepare(&scenario, tokenizer, &build_scorer)?;
        if let Some(c) = calibration
            .as_ref()
            .and_then(|f| f.for_scenario(&scenario, tokenizer.name()))
        {
            c.apply(&mut prepared);
        }
        let mut result = simulate::run(&scenario, &prepared)?;
        if !args.per_request {
            result.requests.clear();
        }
        measured.push(measure_search(&scenario, &prepared));
        results.push(result);
    }
    let report = SimulateReport { scenarios: results };
    emit(
        args.output.out.as_deref(),
        &render(&report, &measured, args.output.format, args.per_request),
    )
}

fn usd(x: f64) -> String {
    format!("${x:.4}")
}

fn pct(e: f64, d: f64) -> String {
    crate::simulate::result::savings_pct(e, d).to_string() + "%"
}

const SUMMARY_CSV: &[&str] = &[
    "scenario",
    "tokenizer",
    "tool_count",
    "deferred_count",
    "eager_first_request_tokens",
    "deferred_first_request_tokens",
    "eager_total_input_tokens",
    "deferred_total_input_tokens",
    "eager_requests",
    "deferred_requests",
    "searches",
    "misses",
    "retries",
    "first_request_savings_pct",
    "total_input_savings_pct",
    "eager_cost_usd",
    "deferred_cost_usd",
    "eager_cost_cached_usd",
    "deferred_cost_cached_usd",
];

const REQUEST_COLUMNS: &[&str] = &[
    "scenario",
    "mode",
    "agent",
    "turn",
    "index",
    "kind",
    "tool",
    "system",
    "tool_overhead",
    "tools",
    "deferred_list",
    "history",
    "new",
    "input_tokens",
    "cached_tokens",
    "output_tokens",
    "cost_usd",
    "cost_cached_usd",
    "ttft_ms",
    "duration_ms",
    "occupancy_pct",
    "headroom_tokens",
];

fn request_rows(report: &SimulateReport) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for s in &report.scenarios {
        for r in &s.requests {
            let p = &r.parts;
            rows.push(vec![
                s.name.clone(),
                r.mode.to_string(),
                r.agent.to_string(),
                r.turn.to_string(),
                r.index.to_string(),
                r.kind.name().to_string(),
                r.tool.clone().unwrap_or_default(),
                p.system.to_string(),
                p.tool_overhead.to_string(),
                p.tools.to_string(),
                p.deferred_list.to_string(),
                p.history.to_string(),
                p.new.to_string(),
                r.input_tokens.to_string(),
                r.cached_tokens.to_string(),
                r.output_tokens.to_string(),
                r.cost_usd.to_string(),
                r.cost_cached_usd.to_string(),
                r.ttft_ms.to_string(),
                r.duration_ms.to_string(),
                r.occupancy_pct.to_string(),
                r.headroom_tokens.to_string(),
            ]);
        }
    }
    rows
}

pub fn render(
    report: &SimulateReport,
    measured: &[Option<MeasuredSearch>],
    format: Format,
    per_request: bool,
) -> String {
    match format {
        Format::Json => to_json(report),
        Format::Csv if per_request => csv(REQUEST_COLUMNS, &request_rows(report)),
        Format::Csv => {
            let rows: Vec<Vec<String>> = report
                .scenarios
                .iter()
                .map(|s| {
                    vec![
                        s.name.clone(),
                        s.tokenizer.clone(),
                        s.tool_count.to_string(),
                        s.deferred_count.to_string(),
                        s.eager.first_request_tokens.to_string(),
                        s.deferred.first_request_tokens.to_string(),
                        s.eager.total_input_tokens.to_string(),
                        s.deferred.total_input_tokens.to_string(),
                        s.eager.requests.to_string(),
                        s.deferred.requests.to_string(),
                        s.deferred.searches.to_string(),
                        s.deferred.misses.to_string(),
                        s.deferred.retries.to_string(),
                        s.savings.first_request_pct.to_string(),
                        s.savings.total_input_pct.to_string(),
                        s.eager.cost_usd.without_caching.to_string(),
                        s.deferred.cost_usd.without_caching.to_string(),
                        s.eager.cost_usd.with_caching.to_string(),
                        s.deferred.cost_usd.with_caching.to_string(),
                    ]
                })
                .collect();
            csv(SUMMARY_CSV, &rows)
        }
        Format::Table | Format::Md => {
            let md = format == Format::Md;
            let table = if md { md_table } else { text_table };
            let mut out = String::new();
            for (i, s) in report.scenarios.iter().enumerate() {
                out.push_str(&summary_text(
                    s,
                    measured.get(i).copied().flatten(),
                    md,
                    table,
                ));
                if per_request {
                    let rows: Vec<Vec<String>> = request_rows(&SimulateReport {
                        scenarios: vec![s.clone()],
                    })
                    .into_iter()
                    .map(|r| r[1..].to_vec())
                    .collect();
                    let right: Vec<bool> = REQUEST_COLUMNS[1..]
                        .iter()
                        .map(|c| !matches!(*c, "mode" | "kind" | "tool"))
                        .collect();
                    out.push('\n');
                    out.push_str(&table(&REQUEST_COLUMNS[1..], &rows, &right));
                }
                out.push('\n');
            }
            out
        }
    }
}

type TableFn = fn(&[&str], &[Vec<String>], &[bool]) -> String;

fn summary_text(s: &ScenarioResult, m: Option<MeasuredSearch>, md: bool, table: TableFn) -> String {
    let (e, d) = (&s.eager, &s.deferred);
    let st = &s.settings;
    let mut out = String::new();
    out.push_str(&if md {
        format!("### {}\n\n", s.name)
    } else {
        format!("== {} ==\n", s.name)
    });
    if let Some(desc) = &s.description {
        out.push_str(desc.trim());
        out.push_str(if md { "\n\n" } else { "\n" });
    }
    out.push_str(&format!(
        "{} tools, {} deferred ({}); tokenizer {}, render {}, profile {}, scorer {}, discovery {}, listing {}/{}, reveal {}, max_results {}\n",
        s.tool_count,
        s.deferred_count,
        if st.deferring { format!("when {}", st.when) } else { format!("when {}: not deferring", st.when) },
        st.tokenizer,
        st.render,
        st.profile,
        st.scorer,
        st.discovery,
        st.listing,
        st.list_style,
        st.reveal,
        st.max_results
    ));
    if md {
        out.push('\n');
    }
    let row = |name: &str, a: String, b: String, sv: String| vec![name.to_string(), a, b, sv];
    let rows = vec![
        row(
            "first request tokens",
            e.first_request_tokens.to_string(),
            d.first_request_tokens.to_string(),
            format!("{}%", s.savings.first_request_pct),
        ),
        row(
            "  of which tools + list",
            e.first_request_tool_tokens.to_string(),
            d.first_request_tool_tokens.to_string(),
            pct(
                e.first_request_tool_tokens as f64,
                d.first_request_tool_tokens as f64,
            ),
        ),
        row(
            "mean request tokens",
            e.mean_request_tokens.to_string(),
            d.mean_request_tokens.to_string(),
            pct(e.mean_request_tokens, d.mean_request_tokens),
        ),
        row(
            "total input tokens",
            e.total_input_tokens.to_string(),
            d.total_input_tokens.to_string(),
            format!("{}%", s.savings.total_input_pct),
        ),
        row(
            "requests",
            e.requests.to_string(),
            d.requests.to_string(),
            String::new(),
        ),
        row(
            "searches / misses / retries",
            "-".into(),
            format!("{} / {} / {}", d.searches, d.misses, d.retries),
            String::new(),
        ),
        row(
            "output tokens",
            e.output_tokens.to_string(),
            d.output_tokens.to_string(),
            String::new(),
        ),
        row(
            "cost, no caching",
            usd(e.cost_usd.without_caching),
            usd(d.cost_usd.without_caching),
            format!("{}%", s.savings.cost_without_caching_pct),
        ),
        row(
            "cost, with caching",
            usd(e.cost_usd.with_caching),
            usd(d.cost_usd.with_caching),
            format!("{}%", s.savings.cost_with_caching_pct),
        ),
        row(
            "first ttft (modeled ms)",
            e.latency_ms.first_ttft.to_string(),
            d.latency_ms.first_ttft.to_string(),
            String::new(),
        ),
        row(
            "mean turn (modeled ms)",
            e.latency_ms.mean_turn.to_string(),
            d.latency_ms.mean_turn.to_string(),
            String::new(),
        ),
        row(
            "peak window use",
            format!("{}%", e.peak_occupancy_pct),
            format!("{}%", d.peak_occupancy_pct),
            String::new(),
        ),
    ];
    out.push_str(&table(
        &["", "eager", "deferred", "saved"],
        &rows,
        &[false, true, true, true],
    ));
    if md {
        out.push('\n');
    }
    for p in &s.published {
        let f = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v}"));
        out.push_str(&format!(
            "published: {} [{}]{}  {}: eager {} (measured {}), deferred {} (measured {})\n{}",
            p.published.claim,
            p.published.source,
            if md { "\\\n" } else { "\n" },
            p.published.metric,
            f(p.published.eager_tokens),
            p.measured_eager_tokens,
            f(p.published.deferred_tokens),
            p.measured_deferred_tokens,
            if md { "\n" } else { "" },
        ));
    }
    if let Some(m) = m {
        out.push_str(&format!(
            "search latency measured here ({} scorer, {} queries): p50 {:.0} µs, max {:.0} µs (json uses the modeled {} ms)\n",
            st.scorer, m.queries, m.p50_us, m.max_us, st.search_latency_ms
        ));
    }
    out
}
