//! The views of a calibration (`calibrate`): the observations table with the fit, the json of
//! the [`CalibrationReport`], and the observations CSV.

use crate::experiment::calibrate::CalibrationReport;
use crate::output::{Format, csv, to_json};

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
