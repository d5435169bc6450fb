//! `toolbudget calibrate`: refits the anthropic-estimate counter from the observations in its
//! calibration file, prints the fit and each observation's estimate, and optionally stores it.

use serde::Serialize;

use super::Outcome;
use crate::cli::CalibrateArgs;
use crate::counter::anthropic::{Calibration, Fit};
use crate::error::{Error, Result};
use crate::output::{Format, csv, emit, to_json, write_atomic};

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
                estimate += fit.tools_fixed + c.tool_use_system_prompt.tokens(o.tool_choice) as f64;
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

pub fn render(r: &CalibrationReport, format: Format) -> String {
    let rows: Vec<Vec<String>> = r
        .observations
        .iter()
        .map(|o| {
            vec![
                o.label.clone(),
                o.tools.to_string(),
                o.billed.to_string(),
                format!("{:.1}", o.estimate),
                format!("{:+.2}", o.residual_pct),
            ]
        })
        .collect();
    let headers = ["observation", "tools", "billed", "estimate", "residual %"];
    match format {
        Format::Json => to_json(r),
        Format::Csv => csv(&headers, &rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let f = &r.fit;
            format!(
                "{}\ntext_ratio {:.6}, tools_fixed {:.3}, per_tool_ratio {:.6}; residuals: max {:.2}%, rms {:.2}%; stated error ± {}%\nstored fit in {} {}\n",
                table(&headers, &rows, &[false, true, true, true, true]),
                f.text_ratio,
                f.tools_fixed,
                f.per_tool_ratio,
                f.max_abs_residual_pct,
                f.rms_residual_pct,
                f.error_pct,
                r.file,
                if r.stored_fit_matches {
                    "matches"
                } else {
                    "differs"
                }
            )
        }
    }
}

pub fn run(args: &CalibrateArgs) -> Result<Outcome> {
    let path = &args.data;
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::input(path, None, format!("cannot read the calibration file: {e}")))?;
    let c = Calibration::parse(&text).map_err(|(at, e)| Error::input(path, at, e))?;
    let fit = c.refit().map_err(|why| Error::input(path, None, why))?;
    let mut r = report(&path.display().to_string(), &c, fit);
    if args.write {
        r.stored_fit_matches = true;
        let mut json = serde_json::to_string_pretty(&c.with_fit(fit)).expect("serializable");
        json.push('\n');
        write_atomic(path, json.as_bytes())?;
    }
    emit(None, &render(&r, args.format))?;
    Ok(if args.check && !r.stored_fit_matches {
        Outcome::CheckFailed
    } else {
        Outcome::Success
    })
}
