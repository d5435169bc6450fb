//! JSON data files: `data/report.json` holds every deterministic result; `data/latency.json`
//! the measured latencies (they differ between runs, so they are kept apart).

use crate::experiment::report::ReportData;
use crate::output::to_json;

pub fn files(data: &ReportData) -> Vec<(String, String)> {
    let mut out = vec![("data/report.json".to_string(), to_json(data))];
    if !data.latency.eval.is_empty() || !data.latency.sweep.is_empty() {
        out.push(("data/latency.json".to_string(), to_json(&data.latency)));
    }
    out
}
