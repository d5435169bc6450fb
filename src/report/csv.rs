//! CSV data files, one per table of `index.md`, each written from a serde row type. The scenario,
//! request and eval files use the very row types `simulate` and `eval` write, so a run shared by
//! a command and the report has the same columns and values in both.

use serde::{Deserialize, Serialize};

use super::ReportData;
use crate::output::csv_rows;
use crate::simulate::result::{Gap, PublishedComparison, request_rows, scenario_rows};

/// A published figure beside the same quantity measured: a row of `data/published.csv`.
/// `measured_*` are counted by `counter` (the provider's the figure was measured on), with
/// the `o200k-json` and `cl100k-json` counts beside; on each side the `*_gap_*` parts add up to measured −
/// published (`simulate::published`). For a figure in seconds (`unit`), the token columns
/// hold seconds and the gap is all `other`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PublishedCsvRow {
    pub scenario: String,
    /// The article or repository, by name and location.
    pub source: String,
    pub claim: String,
    pub metric: String,
    pub published_eager_tokens: Option<f64>,
    pub published_deferred_tokens: Option<f64>,
    pub published_saved_pct: Option<f64>,
    pub measured_eager_tokens: f64,
    pub measured_deferred_tokens: f64,
    pub measured_saved_pct: f64,
    pub counter: String,
    pub unit: String,
    pub variant: String,
    pub measured_eager_tokens_o200k_json: f64,
    pub measured_deferred_tokens_o200k_json: f64,
    pub measured_eager_tokens_cl100k_json: f64,
    pub measured_deferred_tokens_cl100k_json: f64,
    pub eager_gap_counting: Option<f64>,
    pub eager_gap_catalog: Option<f64>,
    pub eager_gap_system: Option<f64>,
    pub eager_gap_conversation: Option<f64>,
    pub eager_gap_other: Option<f64>,
    pub deferred_gap_counting: Option<f64>,
    pub deferred_gap_catalog: Option<f64>,
    pub deferred_gap_system: Option<f64>,
    pub deferred_gap_conversation: Option<f64>,
    pub deferred_gap_other: Option<f64>,
    pub published_eager_low: Option<f64>,
    pub published_eager_high: Option<f64>,
    pub published_deferred_low: Option<f64>,
    pub published_deferred_high: Option<f64>,
    pub published_eager_usd: Option<f64>,
    pub published_deferred_usd: Option<f64>,
    pub measured_eager_usd: Option<f64>,
    pub measured_deferred_usd: Option<f64>,
    /// False when the harness cannot measure what the source measured (`not_reproduced`
    /// says why and what was measured instead).
    pub reproduced: bool,
    pub not_reproduced: String,
}

impl PublishedCsvRow {
    pub fn of(scenario: &str, p: &PublishedComparison) -> PublishedCsvRow {
        let part = |g: Option<Gap>, f: fn(&Gap) -> f64| g.map(|g| f(&g));
        let (e, d) = (p.eager_gap, p.deferred_gap);
        PublishedCsvRow {
            scenario: scenario.to_string(),
            source: p.source.clone(),
            claim: p.claim.clone(),
            metric: p.metric.clone(),
            published_eager_tokens: p.eager_tokens,
            published_deferred_tokens: p.deferred_tokens,
            published_saved_pct: p.saved_pct,
            measured_eager_tokens: p.measured_eager_tokens,
            measured_deferred_tokens: p.measured_deferred_tokens,
            measured_saved_pct: p.measured_saved_pct,
            counter: p.counter.clone(),
            unit: p.unit.clone(),
            variant: p.variant.clone(),
            measured_eager_tokens_o200k_json: p.measured_eager_o200k_json,
            measured_deferred_tokens_o200k_json: p.measured_deferred_o200k_json,
            measured_eager_tokens_cl100k_json: p.measured_eager_cl100k_json,
            measured_deferred_tokens_cl100k_json: p.measured_deferred_cl100k_json,
            eager_gap_counting: part(e, |g| g.counting),
            eager_gap_catalog: part(e, |g| g.catalog),
            eager_gap_system: part(e, |g| g.system),
            eager_gap_conversation: part(e, |g| g.conversation),
            eager_gap_other: part(e, |g| g.other),
            deferred_gap_counting: part(d, |g| g.counting),
            deferred_gap_catalog: part(d, |g| g.catalog),
            deferred_gap_system: part(d, |g| g.system),
            deferred_gap_conversation: part(d, |g| g.conversation),
            deferred_gap_other: part(d, |g| g.other),
            published_eager_low: p.eager_range.map(|r| r[0]),
            published_eager_high: p.eager_range.map(|r| r[1]),
            published_deferred_low: p.deferred_range.map(|r| r[0]),
            published_deferred_high: p.deferred_range.map(|r| r[1]),
            published_eager_usd: p.eager_usd,
            published_deferred_usd: p.deferred_usd,
            measured_eager_usd: p.measured_eager_usd,
            measured_deferred_usd: p.measured_deferred_usd,
            reproduced: p.reproduced,
            not_reproduced: p.not_reproduced.clone(),
        }
    }
}

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
            super::sessions::csv_file(s),
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
        out.push(("data/published.csv".to_string(), csv_rows(&published(data))));
    }
    if !data.evals.is_empty() {
        let rows: Vec<_> = data
            .evals
            .iter()
            .flat_map(|e| e.result.csv_rows())
            .collect();
        out.push(("data/eval.csv".to_string(), csv_rows(&rows)));
        let misses: Vec<_> = data.evals.iter().flat_map(|e| e.misses.clone()).collect();
        out.push(("data/misses.csv".to_string(), csv_rows(&misses)));
    }
    if data.sweep.is_some() {
        out.push(("data/sweep.csv".to_string(), csv_rows(&sweep(data))));
    }
    out.extend(super::deferral_view::csv_files(data));
    if !data.catalogs.is_empty() {
        out.push(("data/catalogs.csv".to_string(), csv_rows(&data.catalogs)));
    }
    let lat = &data.latency;
    if !lat.eval.is_empty() || !lat.sweep.is_empty() {
        out.push(("data/latency.csv".to_string(), csv_rows(&latency(data))));
    }
    out
}

fn published(data: &ReportData) -> Vec<PublishedCsvRow> {
    data.scenarios
        .iter()
        .flat_map(|s| s.published.iter().map(|p| PublishedCsvRow::of(&s.name, p)))
        .collect()
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
        scorer: l.scorer.clone(),
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
        scorer: l.scorer.clone(),
        build_ms: Some(l.build_ms),
        searches: l.latency_us.searches,
        p50_us: l.latency_us.p50,
        p95_us: l.latency_us.p95,
        max_us: l.latency_us.max,
    });
    eval.chain(sweep).collect()
}
