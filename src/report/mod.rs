//! The report: `pipeline` runs the scenarios, evaluations and sweep (library calls, with an
//! injected clock and progress) into a [`ReportData`]; the renderers turn that into files
//! (Markdown, CSV, JSON, SVG) as pure functions. `commands::report` only gathers the input
//! files and writes what [`render`] returns.
//!
//! The report holds the one result types (`ScenarioResult`, `EvalResult`) as the simulator and
//! evaluator return them; its CSV files are written from the same row types as `simulate` and
//! `eval` write.
//!
//! Determinism: everything except measured latencies is a function of the inputs, so
//! `report.json` and every CSV except `latency.csv`/`latency.json` are byte-identical across
//! runs. Measured latencies live only in `data/latency.*`, the latency chart and the latency
//! section of `index.md`.

pub mod charts;
pub mod csv;
pub mod deferral;
pub mod deferral_view;
pub mod figures;
pub mod json;
pub mod live;
pub mod markdown;
pub mod pipeline;
pub mod published;
pub mod sessions;
pub mod sweep;

use serde::{Deserialize, Serialize};

pub use charts::ChartError;
pub use sweep::{Sweep, SweepLatency};

use crate::eval::EvalResult;
use crate::simulate::ScenarioResult;
use crate::timing::LatencyUs;

/// Everything a report shows, already computed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReportData {
    pub settings: ReportSettings,
    /// Token counts of the catalogs used (fixtures, and real data with `--data`).
    pub catalogs: Vec<CatalogRow>,
    /// The simulator's results, requests included (modeled search latency: deterministic).
    pub scenarios: Vec<ScenarioResult>,
    pub evals: Vec<EvalSet>,
    pub sweep: Option<Sweep>,
    /// Break-even, `auto:N` threshold and reveal views (`deferral`).
    pub deferral: Option<deferral::Deferral>,
    /// Imported sessions replayed (`--sessions DIR`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sessions: Option<crate::session::counterfactual::SessionsReport>,
    /// Measured: varies run to run.
    #[serde(skip)]
    pub latency: Latencies,
    /// Things the reader must know (a scorer skipped, a part not run).
    pub notes: Vec<String>,
}

/// Settings in force for the whole report.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReportSettings {
    /// The counter of the report's token figures (the default profile's).
    pub counter: String,
    pub tokenizer: String,
    pub render: String,
    /// The model profile (prices, context window), as `key = value` pairs.
    pub profile: Vec<(String, String)>,
    /// Any further settings worth printing (sweep seed, eval cutoffs, …).
    pub other: Vec<(String, String)>,
}

/// One catalog's size; also a row of `data/catalogs.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogRow {
    /// `fixtures`, or the real-data file.
    pub catalog: String,
    /// Every tool, the search tool included (as `count` counts).
    pub tool_count: usize,
    /// The catalog's search tool, when it has one (empty otherwise).
    pub search_tool: String,
    pub servers: usize,
    pub tokens: usize,
    pub mean_tokens: f64,
    pub max_tokens: usize,
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

/// One labeled query set evaluated against its catalog with every available scorer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalSet {
    /// What the queries were run against (`fixtures/catalogs`, `bfcl.json`).
    pub catalog: String,
    /// The evaluator's result; latency moved to `ReportData::latency`, per-query rows to
    /// `misses` (so `report.json` stays deterministic and small).
    pub result: EvalResult,
    /// Scorers not run, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Queries whose expected tools were not all in the top `miss_k`, per scorer.
    pub misses: Vec<Miss>,
    pub miss_k: usize,
}

impl EvalSet {
    pub fn name(&self) -> &str {
        &self.result.set
    }
}

/// A query a scorer missed; also a row of `data/misses.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Miss {
    pub set: String,
    pub scorer: String,
    pub query_id: String,
    pub query: String,
    /// Expected tool ids, space-separated.
    pub expected: String,
    /// What the scorer ranked instead, best first, space-separated.
    pub ranked: String,
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
    pub latency_us: LatencyUs,
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
