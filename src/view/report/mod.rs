//! The report's files: `index.md`, `data/*.csv`, `data/*.json` and `charts/*.svg`, rendered
//! from a finished [`ReportData`] (`experiment::report` runs it) as pure functions; the
//! command writes what [`render`] returns.
//!
//! The report holds the one result types (`ScenarioResult`, `EvalResult`) as the simulator and
//! evaluator return them, and renders them with the same views the commands use (`view::*`);
//! its CSV files are written from the same row types as `simulate` and `eval` write.
//!
//! Determinism: everything except measured latencies is a function of the inputs, so
//! `report.json` and every CSV except `latency.csv`/`latency.json` are byte-identical across
//! runs. Measured latencies live only in `data/latency.*`, the latency chart and the latency
//! section of `index.md`.

pub mod csv;
pub mod deferral;
pub mod figures;
pub mod index;
pub mod json;

pub use crate::view::chart::ChartError;

use crate::experiment::report::ReportData;

/// One output file: a path relative to the report folder and its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// `report --live DIR`: the live run's accuracy section appended to `index.md`, its chart
/// and CSVs beside (`view::live::section`).
pub fn add_live(
    files: &mut Vec<ReportFile>,
    live: &crate::live::LiveResult,
) -> Result<(), ChartError> {
    let (md, extra) = crate::view::live::section(live)?;
    if let Some(index) = files.iter_mut().find(|f| f.path == "index.md") {
        index.bytes.extend_from_slice(b"\n");
        index.bytes.extend_from_slice(md.as_bytes());
    }
    files.extend(
        extra
            .into_iter()
            .map(|(path, bytes)| ReportFile { path, bytes }),
    );
    Ok(())
}

/// Every file of the report: `index.md`, `data/*.csv`, `data/*.json`, `charts/*.svg`.
pub fn render(data: &ReportData) -> Result<Vec<ReportFile>, ChartError> {
    let charts = figures::all(data)?;
    let mut files = Vec::new();
    files.push(ReportFile {
        path: "index.md".into(),
        bytes: index::index(data, &charts).into_bytes(),
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
