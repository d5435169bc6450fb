//! `anthropic-estimate`: Claude's tokenizer is not public, so its counts are estimated from
//! o200k_base counts with a linear model fitted on public `count_tokens` observations
//! (`fixtures/calibration/anthropic-count-tokens.json`, embedded at build time):
//!
//! `billed = text_ratio·text + [tools]·(tool-use prompt + tools_fixed) + per_tool_ratio·Σ tool`
//!
//! where `text` is the o200k count of the system prompt and messages, and `tool` the o200k count
//! of a tool's json rendering (what the Messages API receives). The tool-use prompt is the size
//! Anthropic documents per `tool_choice`; the three coefficients are an ordinary least-squares
//! fit, and the largest relative residual over the observations is the error stated beside
//! every estimate.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::{Preamble, ToolChoice};
use crate::error::Position;

/// The calibration file as committed.
pub const CALIBRATION_JSON: &str =
    include_str!("../../fixtures/calibration/anthropic-count-tokens.json");

/// The documented size of Claude's tool-use system prompt per `tool_choice`, and where it is
/// documented.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolUsePrompt {
    pub models: Vec<String>,
    #[serde(flatten)]
    pub tokens: Preamble,
    pub source: String,
}

/// One billed count: the first `tools` tools of the calibration catalog, the text, a choice.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observation {
    pub label: String,
    pub tools: usize,
    pub tool_choice: ToolChoice,
    pub billed: usize,
    pub source: String,
}

/// The fitted coefficients and how well they fit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fit {
    pub text_ratio: f64,
    pub tools_fixed: f64,
    pub per_tool_ratio: f64,
    /// Largest |estimate − billed| / billed over the observations, in percent.
    pub max_abs_residual_pct: f64,
    pub rms_residual_pct: f64,
    /// The error printed beside estimates: the largest residual rounded up to 0.1%.
    pub error_pct: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    pub about: String,
    pub model: String,
    pub measured_model: String,
    pub tool_use_system_prompt: ToolUsePrompt,
    pub text_o200k: usize,
    pub text_source: String,
    pub tool_json_o200k: Vec<usize>,
    pub tool_source: String,
    pub observations: Vec<Observation>,
    pub fit: Fit,
}

impl Calibration {
    /// Parses a calibration file; an error carries its `line:column` when it has one.
    pub fn parse(text: &str) -> Result<Calibration, (Option<Position>, String)> {
        let c: Calibration = serde_json::from_str(text).map_err(|e| {
            let at = (e.line() > 0).then_some(Position {
                line: e.line(),
                column: e.column(),
            });
            (at, e.to_string())
        })?;
        if let Some(o) = c
            .observations
            .iter()
            .find(|o| o.tools > c.tool_json_o200k.len())
        {
            return Err((
                None,
                format!(
                    "observation {:?} sends {} tools; tool_json_o200k has {}",
                    o.label,
                    o.tools,
                    c.tool_json_o200k.len()
                ),
            ));
        }
        Ok(c)
    }

    /// The committed calibration (parsed once; a broken file is a build defect the tests catch).
    pub fn committed() -> &'static Calibration {
        static C: OnceLock<Calibration> = OnceLock::new();
        C.get_or_init(|| {
            Calibration::parse(CALIBRATION_JSON).expect("the committed calibration parses")
        })
    }

    /// The regressors of one observation: (text, tools sent at all, Σ tool counts).
    fn features(&self, o: &Observation) -> [f64; 3] {
        let tools: usize = self.tool_json_o200k[..o.tools].iter().sum();
        [
            self.text_o200k as f64,
            if o.tools > 0 { 1.0 } else { 0.0 },
            tools as f64,
        ]
    }

    fn prompt(&self, o: &Observation) -> f64 {
        if o.tools > 0 {
            self.tool_use_system_prompt.tokens.tokens(o.tool_choice) as f64
        } else {
            0.0
        }
    }

    #[allow(clippy::needless_range_loop)]
    /// Least squares over the observations (the documented tool-use prompt is subtracted, not
    /// fitted). An error, saying why, when the observations cannot determine the three
    /// coefficients or determine a fit no estimate can use: a ratio that is not positive, a
    /// value that is not finite (never written, so `--check` can always read the file back).
    pub fn refit(&self) -> Result<Fit, String> {
        const CANNOT: &str = "the observations cannot determine the fit (they need texts, tool \
            counts and requests with and without tools that vary)";
        if let Some(o) = self.observations.iter().find(|o| o.billed == 0) {
            return Err(format!(
                "observation {:?} billed 0 tokens: a count_tokens answer is never 0",
                o.label
            ));
        }
        let mut xtx = [[0.0f64; 3]; 3];
        let mut xty = [0.0f64; 3];
        for o in &self.observations {
            let x = self.features(o);
            let y = o.billed as f64 - self.prompt(o);
            for i in 0..3 {
                xty[i] += x[i] * y;
                for j in 0..3 {
                    xtx[i][j] += x[i] * x[j];
                }
            }
        }
        let c = solve3(xtx, xty).ok_or_else(|| CANNOT.to_string())?;
        for (name, v) in [("text_ratio", c[0]), ("per_tool_ratio", c[2])] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!(
                    "the observations fit {name} = {v}, not a positive ratio: they do not \
                     determine a usable fit ({CANNOT})"
                ));
            }
        }
        if !c[1].is_finite() {
            return Err(CANNOT.to_string());
        }
        let residuals: Vec<f64> = self
            .observations
            .iter()
            .map(|o| {
                let x = self.features(o);
                let est = c[0] * x[0] + c[1] * x[1] + c[2] * x[2] + self.prompt(o);
                (est - o.billed as f64) / o.billed as f64 * 100.0
            })
            .collect();
        let max = residuals.iter().fold(0.0f64, |m, r| m.max(r.abs()));
        let rms = (residuals.iter().map(|r| r * r).sum::<f64>() / residuals.len() as f64).sqrt();
        if !(max.is_finite() && rms.is_finite()) {
            return Err(CANNOT.to_string());
        }
        Ok(Fit {
            text_ratio: c[0],
            tools_fixed: c[1],
            per_tool_ratio: c[2],
            max_abs_residual_pct: max,
            rms_residual_pct: rms,
            error_pct: (max * 10.0).ceil() / 10.0,
        })
    }

    /// The file with `fit` replaced (what `toolbudget calibrate --write` stores).
    pub fn with_fit(&self, fit: Fit) -> Calibration {
        Calibration {
            fit,
            ..self.clone()
        }
    }
}

/// Gaussian elimination with partial pivoting on a 3×3 system.
#[allow(clippy::needless_range_loop)] // the textbook index form reads best here
fn solve3(mut a: [[f64; 3]; 3], mut b: [f64; 3]) -> Option<[f64; 3]> {
    for col in 0..3 {
        let pivot = (col..3).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..3 {
            let f = a[row][col] / a[col][col];
            for k in col..3 {
                a[row][k] -= f * a[col][k];
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 3];
    for row in (0..3).rev() {
        let s: f64 = (row + 1..3).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    Some(x)
}

/// The committed coefficients.
pub fn fit() -> &'static Fit {
    &Calibration::committed().fit
}

/// Estimated Claude tokens of raw text (a system prompt, a message's content).
pub fn text_tokens(o200k: usize) -> usize {
    (fit().text_ratio * o200k as f64).round() as usize
}

/// Estimated Claude tokens of one tool definition, from its json rendering's o200k count.
pub fn tool_tokens(json_o200k: usize) -> usize {
    (fit().per_tool_ratio * json_o200k as f64).round() as usize
}

/// Estimated fixed cost of sending any tools, beyond the documented tool-use prompt.
pub fn tools_fixed() -> usize {
    fit().tools_fixed.round() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_prompt_reads_its_four_sizes_and_refuses_unknown_keys() {
        let p = &Calibration::committed().tool_use_system_prompt;
        assert_eq!(p.tokens.tokens(ToolChoice::Auto), p.tokens.auto);
        assert!(p.tokens.auto > 0 && !p.source.is_empty());
        let mut v = serde_json::to_value(p).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["models", "auto", "none", "any", "tool", "source"]);
        v["extra"] = 1.into();
        assert!(serde_json::from_value::<ToolUsePrompt>(v).is_err());
    }

    #[test]
    fn refitting_the_committed_observations_gives_the_committed_fit() {
        let c = Calibration::committed();
        let f = c.refit().expect("the observations determine the fit");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
        assert!(
            close(f.text_ratio, c.fit.text_ratio),
            "{f:?} vs {:?}",
            c.fit
        );
        assert!(close(f.tools_fixed, c.fit.tools_fixed), "{f:?}");
        assert!(close(f.per_tool_ratio, c.fit.per_tool_ratio), "{f:?}");
        assert!(close(f.max_abs_residual_pct, c.fit.max_abs_residual_pct));
        assert!(close(f.rms_residual_pct, c.fit.rms_residual_pct));
        assert_eq!(f.error_pct, c.fit.error_pct);
    }

    #[test]
    fn every_observation_is_within_the_stated_error() {
        let c = Calibration::committed();
        let f = fit();
        for o in &c.observations {
            let tools: usize = c.tool_json_o200k[..o.tools]
                .iter()
                .map(|&t| tool_tokens(t))
                .sum();
            let est = text_tokens(c.text_o200k)
                + if o.tools > 0 {
                    c.tool_use_system_prompt.tokens.tokens(o.tool_choice) + tools_fixed() + tools
                } else {
                    0
                };
            let err = (est as f64 - o.billed as f64).abs() / o.billed as f64 * 100.0;
            assert!(
                err <= f.error_pct,
                "{}: estimate {est}, billed {}, {err:.2}% > ±{}%",
                o.label,
                o.billed,
                f.error_pct
            );
        }
    }

    #[test]
    fn solves_a_known_system_and_refuses_a_singular_one() {
        let x = solve3(
            [[2.0, 1.0, -1.0], [-3.0, -1.0, 2.0], [-2.0, 1.0, 2.0]],
            [8.0, -11.0, -3.0],
        )
        .unwrap();
        for (got, want) in x.iter().zip([2.0, 3.0, -1.0]) {
            assert!((got - want).abs() < 1e-12);
        }
        assert!(
            solve3(
                [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]],
                [1.0; 3]
            )
            .is_none()
        );
    }

    #[test]
    fn a_malformed_file_is_refused_with_its_position() {
        let (at, _) = Calibration::parse("{\n \"about\": 3}").unwrap_err();
        assert_eq!(at.map(|p| p.line), Some(2));
        let mut bad: serde_json::Value = serde_json::from_str(CALIBRATION_JSON).unwrap();
        bad["observations"][0]["tools"] = 99.into();
        assert!(
            Calibration::parse(&bad.to_string())
                .unwrap_err()
                .1
                .contains("sends 99 tools")
        );
    }

    #[test]
    fn degenerate_observations_are_refused_never_fitted_to_nan() {
        let c = Calibration::committed();
        // One count of 0: every residual divides by it.
        let mut zero = c.clone();
        zero.observations[0].billed = 0;
        let e = zero.refit().unwrap_err();
        assert!(e.contains("billed 0 tokens"), "{e}");
        // Bills that do not grow with the tools sent: the per-tool ratio is not positive.
        let mut flat = c.clone();
        for o in &mut flat.observations {
            o.billed = 5_000;
        }
        let e = flat.refit().unwrap_err();
        assert!(e.contains("not a positive ratio"), "{e}");
        // Every observation alike: nothing determines the three coefficients.
        let mut same = c.clone();
        let first = same.observations[0].clone();
        for o in &mut same.observations {
            *o = first.clone();
        }
        let e = same.refit().unwrap_err();
        assert!(e.contains("cannot determine the fit"), "{e}");
    }
}
