//! Report rendering: pure functions from finished results to files (Markdown, CSV, JSON, SVG).
//! Nothing here reads files, measures time or computes results; `commands::report` runs the
//! scenarios, evaluations and sweep, fills a [`ReportData`] and writes what [`render`] returns.
//!
//! Determinism: everything except measured latencies is a function of the inputs, so
//! `report.json` and every CSV except `latency.csv`/`latency.json` are byte-identical across
//! runs. Measured latencies live only in `data/latency.*`, the latency chart and the latency
//! section of `index.md`.

pub mod charts;
pub mod csv;
pub mod figures;
pub mod json;
pub mod markdown;
pub mod sessions;
pub mod sweep;

use serde::Serialize;

pub use charts::ChartError;
pub use sweep::{Sweep, SweepLatency};

/// Everything a report shows, already computed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReportData {
    pub settings: ReportSettings,
    /// Token counts of the catalogs used (fixtures, and real data with `--data`).
    pub catalogs: Vec<CatalogRow>,
    pub scenarios: Vec<ScenarioRow>,
    pub evals: Vec<EvalSet>,
    pub sweep: Option<Sweep>,
    /// Measured: varies run to run.
    #[serde(skip)]
    pub latency: Latencies,
    /// Things the reader must know (a scorer skipped, a part not run).
    pub notes: Vec<String>,
}

/// Settings in force for the whole report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReportSettings {
    pub tokenizer: String,
    pub render: String,
    /// The model profile (prices, context window), as `key = value` pairs.
    pub profile: Vec<(String, String)>,
    /// Any further settings worth printing (sweep seed, eval cutoffs, …).
    pub other: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CatalogRow {
    /// `fixtures`, or the real-data file.
    pub name: String,
    pub tools: usize,
    pub servers: usize,
    pub tokens: usize,
    pub mean_tokens: f64,
    pub max_tokens: usize,
}

/// One mode of one scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ModeRow {
    pub first_request_tokens: usize,
    pub total_input_tokens: usize,
    pub requests: usize,
    pub searches: usize,
    pub misses: usize,
    pub output_tokens: usize,
    /// USD for one conversation.
    pub cost_usd: f64,
    pub cost_cached_usd: f64,
    pub peak_occupancy_pct: f64,
}

/// One simulated scenario, as the simulator reported it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ScenarioRow {
    pub name: String,
    pub description: Option<String>,
    pub tool_count: usize,
    pub deferred_count: usize,
    pub eager: ModeRow,
    pub deferred: ModeRow,
    pub first_request_savings_pct: f64,
    pub total_input_savings_pct: f64,
    pub cost_savings_pct: f64,
    pub cost_cached_savings_pct: f64,
    /// The deferred settings (scorer, listing, discovery, …) as printed by the simulator.
    pub settings: Vec<(String, String)>,
    pub published: Vec<PublishedRow>,
    /// Every request, eager then deferred.
    pub requests: Vec<RequestRow>,
}

/// A published figure beside the measured one (token counts of the same metric).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PublishedRow {
    pub source: String,
    pub claim: String,
    /// Which measured figure compares: `first_request_tokens`, `first_request_tool_tokens`, …
    pub metric: String,
    pub published_eager: Option<f64>,
    pub published_deferred: Option<f64>,
    pub published_saved_pct: Option<f64>,
    pub measured_eager: f64,
    pub measured_deferred: f64,
    pub measured_saved_pct: f64,
}

/// The parts of one request, in prefix order.
pub const PARTS: [&str; 6] = [
    "system",
    "tool_overhead",
    "tools",
    "deferred_list",
    "history",
    "new",
];

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestRow {
    /// `eager` or `deferred`.
    pub mode: String,
    /// 1-based within the mode.
    pub index: usize,
    pub turn: usize,
    /// `user`, `search`, `tool_result`, …
    pub kind: String,
    /// Input tokens by part, in [`PARTS`] order.
    pub parts: [usize; 6],
    pub input_tokens: usize,
    pub cached_tokens: usize,
    pub output_tokens: usize,
    pub cost_usd: f64,
    pub cost_cached_usd: f64,
    pub occupancy_pct: f64,
}

/// One labeled query set evaluated against its catalog with every available scorer.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EvalSet {
    pub name: String,
    /// What the queries were run against (`fixtures/catalogs`, `bfcl.json`).
    pub catalog: String,
    pub tool_count: usize,
    pub query_count: usize,
    pub ks: Vec<usize>,
    pub scorers: Vec<ScorerMetrics>,
    /// Scorers not run, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Queries whose expected tools were not all in the top `miss_k`, per scorer.
    pub misses: Vec<Miss>,
    pub miss_k: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScorerMetrics {
    pub scorer: String,
    pub settings: Vec<(String, String)>,
    /// `recall@1`, …, `mrr`, `ndcg@10`, in the evaluator's order.
    pub metrics: Vec<(String, f64)>,
    /// 95% bootstrap interval per metric, when computed.
    pub ci95: Vec<(String, [f64; 2])>,
    pub failed_queries: usize,
}

impl ScorerMetrics {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.iter().find(|(n, _)| n == name).map(|m| m.1)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Miss {
    pub scorer: String,
    pub query_id: String,
    pub query: String,
    pub expected: Vec<String>,
    /// What the scorer ranked instead, best first.
    pub ranked: Vec<String>,
}

/// Measured latencies (not deterministic).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Latencies {
    pub eval: Vec<EvalLatency>,
    pub sweep: Vec<SweepLatency>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalLatency {
    pub set: String,
    pub scorer: String,
    pub p50_us: f64,
    pub p95_us: f64,
}

/// One output file: a path relative to the report folder and its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// A file-name-safe slug of a scenario or set name (`ten-servers`, `bfcl`).
pub fn slug(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches('-');
    if trimmed.is_empty() {
        "unnamed".to_string()
    } else {
        trimmed.to_string()
    }
}

/// Every file of the report: `index.md`, `data/*.csv`, `data/*.json`, `charts/*.svg`.
pub fn render(data: &ReportData) -> Result<Vec<ReportFile>, ChartError> {
    let charts = figures::all(data)?;
    let mut files = Vec::new();
    files.push(ReportFile {
        path: "index.md".into(),
        bytes: markdown::index(data, &charts).into_bytes(),
    });
    for (path, text) in csv::files(data) {
        files.push(ReportFile {
            path,
            bytes: text.into_bytes(),
        });
    }
    for (path, text) in json::files(data) {
        files.push(ReportFile {
            path,
            bytes: text.into_bytes(),
        });
    }
    for c in charts {
        files.push(ReportFile {
            path: c.path,
            bytes: c.svg.into_bytes(),
        });
    }
    Ok(files)
}
