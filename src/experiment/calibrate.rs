//! The anthropic-estimate counter refit from the observations of its calibration file: the
//! fit, whether the stored fit still matches, and each observation's estimate under the refit
//! ([`CalibrationReport`], `calibrate`).

use serde::Serialize;

use crate::counter::anthropic::{Calibration, Fit};

#[derive(Debug, Serialize)]
pub struct CalibrationReport {
    pub file: String,
    pub fit: Fit,
    pub stored_fit_matches: bool,
    pub observations: Vec<Row>,
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub label: String,
    pub tools: usize,
    pub billed: usize,
    pub estimate: f64,
    pub residual_pct: f64,
}

fn same(a: &Fit, b: &Fit) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(1.0);
    close(a.text_ratio, b.text_ratio)
        && close(a.tools_fixed, b.tools_fixed)
        && close(a.per_tool_ratio, b.per_tool_ratio)
        && a.error_pct == b.error_pct
}

/// The refit and the estimate of every observation under it.
pub fn report(file: &str, c: &Calibration, fit: Fit) -> CalibrationReport {
    let observations = c
        .observations
        .iter()
        .map(|o| {
            let tools: usize = c.tool_json_o200k[..o.tools].iter().sum();
            let mut estimate =
                fit.text_ratio * c.text_o200k as f64 + fit.per_tool_ratio * tools as f64;
            if o.tools > 0 {
                estimate +=
                    fit.tools_fixed + c.tool_use_system_prompt.tokens.tokens(o.tool_choice) as f64;
            }
            Row {
                label: o.label.clone(),
                tools: o.tools,
                billed: o.billed,
                estimate: (estimate * 10.0).round() / 10.0,
                residual_pct: ((estimate - o.billed as f64) / o.billed as f64 * 1e4).round()
                    / 100.0,
            }
        })
        .collect();
    CalibrationReport {
        file: file.to_string(),
        stored_fit_matches: same(&fit, &c.fit),
        fit,
        observations,
    }
}

/// The counter's calibration file refit: the report, and with `write` the file's new text
/// (the refit stored), which the command writes over the file it read.
pub fn run(
    path: &std::path::Path,
    write: bool,
) -> crate::error::Result<(CalibrationReport, Option<String>)> {
    use crate::error::Error;
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::input(path, None, format!("cannot read the calibration file: {e}")))?;
    let c = Calibration::parse(&text).map_err(|(at, e)| Error::input(path, at, e))?;
    let fit = c.refit().map_err(|why| Error::input(path, None, why))?;
    let mut report = report(&path.display().to_string(), &c, fit);
    let new_text = write.then(|| {
        report.stored_fit_matches = true;
        let mut json = serde_json::to_string_pretty(&c.with_fit(fit)).expect("serializable");
        json.push('\n');
        json
    });
    Ok((report, new_text))
}
