//! The report's files: `index.md`, `index.html`, `data/*.csv`, `data/*.json` and
//! `charts/*.svg`, rendered from a finished [`ReportData`] (`experiment::report` runs it) as
//! pure functions; the command writes what [`render`] and then [`pages`] return.
//! `index.html` is `index.md` converted, its charts inlined: never a second computation.
//!
//! The report holds the one result types (`ScenarioResult`, `EvalResult`) as the simulator and
//! evaluator return them, and renders them with the same views the commands use (`view::*`);
//! its CSV files are written from the same row types as `simulate` and `eval` write.
//!
//! Determinism: everything except measured latencies is a function of the inputs, so
//! `report.json` and every CSV except `latency.csv`/`latency.json` are byte-identical across
//! runs. Measured latencies live only in `data/latency.*`, the latency chart, the latency
//! section and the decision page's latency row of `index.md` (so also `index.html`).

pub mod csv;
pub mod decision;
pub mod deferral;
pub mod figures;
pub mod html;
pub mod index;
pub mod json;
pub mod scenarios;
pub mod summary;

pub use crate::view::chart::ChartError;

use crate::experiment::report::ReportData;

/// One output file: a path relative to the report folder and its bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// `report --live DIR`: the live run's accuracy section appended to `index.md`, its chart
/// and CSVs beside (`view::live::section`); several runs (`--live` repeated): the runs side
/// by side (`view::live::models_section`).
pub fn add_live(
    files: &mut Vec<ReportFile>,
    live: &[crate::live::LiveResult],
) -> Result<(), ChartError> {
    let (md, extra) = match live {
        [one] => crate::view::live::section(one)?,
        runs => crate::view::live::models_section(runs)?,
    };
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

/// Which pages `report --format` writes beside `data/` and `charts/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Pages {
    /// `index.md` only.
    Md,
    /// `index.html` only.
    Html,
    /// Both.
    #[default]
    Both,
}

/// The last step: `index.html` from the finished `index.md` (live section included) and the
/// charts among `files`; `index.md` dropped when only HTML is asked for.
pub fn pages(files: &mut Vec<ReportFile>, pages: Pages) {
    if pages != Pages::Md
        && let Some(md) = files.iter().find(|f| f.path == "index.md")
    {
        let html = html::page(&String::from_utf8_lossy(&md.bytes), files);
        files.push(ReportFile {
            path: "index.html".into(),
            bytes: html.into_bytes(),
        });
    }
    if pages == Pages::Html {
        files.retain(|f| f.path != "index.md");
    }
}

/// Every file of the report but `index.html` ([`pages`]): `index.md`, `data/summary.json`, `data/*.csv`, `data/*.json`, `charts/*.svg`.
pub fn render(data: &ReportData) -> Result<Vec<ReportFile>, ChartError> {
    let charts = figures::all(data)?;
    let sum = summary::summarize(data);
    let mut files = Vec::new();
    files.push(ReportFile {
        path: "index.md".into(),
        bytes: index::index(data, &charts, &sum).into_bytes(),
    });
    files.push(ReportFile {
        path: "data/summary.json".into(),
        bytes: crate::output::to_json(&sum).into_bytes(),
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
