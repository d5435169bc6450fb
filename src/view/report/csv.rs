//! CSV data files, one per table of `index.md`, each written from a serde row type. The scenario,
//! request, published and eval files use the very row types `simulate` and `eval` write
//! (`view::simulate`, `view::published`, `view::eval`), so a run shared by a command and the
//! report has the same columns and values in both.

use serde::{Deserialize, Serialize};

use crate::experiment::report::ReportData;
use crate::output::csv_rows;
use crate::view::simulate::{request_rows, scenario_rows};

/// One catalog size and listing mode of the sweep: a row of `data/sweep.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepCsvRow {
    pub tools: usize,
    pub servers: usize,
    pub tool_tokens: usize,
    pub eager_first_request_tokens: usize,
    pub eager_window_pct: f64,
    pub listing: String,
    pub list_tokens: usize,
    pub list_tokens_per_tool: f64,
    pub deferred_first_request_tokens: usize,
    pub savings_pct: f64,
    pub deferred_window_pct: f64,
}

/// A measured latency: a row of `data/latency.csv` (the one file that varies between runs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LatencyCsvRow {
    /// `eval` (a labeled query set) or `sweep` (a generated catalog).
    pub part: String,
    pub set: String,
    /// Catalog size (sweep only).
    pub tools: Option<usize>,
    pub scorer: String,
    /// Index build time (sweep only).
    pub build_ms: Option<f64>,
    pub searches: usize,
    pub p50_us: f64,
    pub p95_us: f64,
    pub max_us: f64,
}

pub fn files(data: &ReportData) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(s) = &data.sessions {
        out.push((
            "data/sessions.csv".to_string(),
            crate::view::sessions::csv_file(s),
        ));
    }
    if let Some(c) = &data.clients {
        out.push((
            "data/clients.csv".to_string(),
            csv_rows(&crate::view::clients::csv(c)),
        ));
    }
    if !data.scenarios.is_empty() {
        out.push((
            "data/scenarios.csv".to_string(),
            csv_rows(&scenario_rows(&data.scenarios)),
        ));
        out.push((
            "data/requests.csv".to_string(),
            csv_rows(&request_rows(&data.scenarios)),
        ));
    }
    if data.scenarios.iter().any(|s| !s.published.is_empty()) {
        out.push((
            "data/published.csv".to_string(),
            csv_rows(&crate::view::published::csv_rows(&data.scenarios)),
        ));
    }
    if !data.evals.is_empty() {
        let rows: Vec<_> = data
            .evals
            .iter()
            .flat_map(|e| crate::view::eval::csv_rows(&e.result))
            .collect();
        out.push(("data/eval.csv".to_string(), csv_rows(&rows)));
        let misses: Vec<_> = data.evals.iter().flat_map(|e| e.misses.clone()).collect();
        out.push(("data/misses.csv".to_string(), csv_rows(&misses)));
    }
    if data.sweep.is_some() {
        out.push(("data/sweep.csv".to_string(), csv_rows(&sweep(data))));
    }
    out.extend(crate::view::report::deferral::csv_files(data));
    if !data.catalogs.is_empty() {
        out.push(("data/catalogs.csv".to_string(), csv_rows(&data.catalogs)));
    }
    let lat = &data.latency;
    if !lat.eval.is_empty() || !lat.sweep.is_empty() {
        out.push(("data/latency.csv".to_string(), csv_rows(&latency(data))));
    }
    out
}

fn sweep(data: &ReportData) -> Vec<SweepCsvRow> {
    let Some(sweep) = &data.sweep else {
        return Vec::new();
    };
    sweep
        .points
        .iter()
        .flat_map(|p| {
            p.deferred.iter().map(move |d| SweepCsvRow {
                tools: p.tools,
                servers: p.servers,
                tool_tokens: p.tool_tokens,
                eager_first_request_tokens: p.eager_first_request_tokens,
                eager_window_pct: p.eager_window_pct,
                listing: d.mode.name().to_string(),
                list_tokens: d.list_tokens,
                list_tokens_per_tool: d.list_tokens_per_tool,
                deferred_first_request_tokens: d.first_request_tokens,
                savings_pct: d.savings_pct,
                deferred_window_pct: d.window_pct,
            })
        })
        .collect()
}

fn latency(data: &ReportData) -> Vec<LatencyCsvRow> {
    let lat = &data.latency;
    let eval = lat.eval.iter().map(|l| LatencyCsvRow {
        part: "eval".into(),
        set: l.set.clone(),
        tools: None,
        scorer: l.scorer.to_string(),
        build_ms: None,
        searches: l.latency_us.searches,
        p50_us: l.latency_us.p50,
        p95_us: l.latency_us.p95,
        max_us: l.latency_us.max,
    });
    let sweep = lat.sweep.iter().map(|l| LatencyCsvRow {
        part: "sweep".into(),
        set: "generated".into(),
        tools: Some(l.tools),
        scorer: l.scorer.to_string(),
        build_ms: Some(l.build_ms),
        searches: l.latency_us.searches,
        p50_us: l.latency_us.p50,
        p95_us: l.latency_us.p95,
        max_us: l.latency_us.max,
    });
    eval.chain(sweep).collect()
}
