//! Values fitted from real bills (`toolbudget session import` writes them): the system prompt
//! a model really carried and how many provider tokens one counted token is, with the error
//! the fit makes on requests it was not fitted on. `simulate` and `report` apply them with
//! `--calibration FILE` to every scenario of the same model profile and counter; an entry the
//! import did not apply (`applied: false`: too few requests, or no better than none on the
//! held-out requests) is kept for the record and never applied.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Prepared, Scenario};
use crate::document::{Document, json_error};
use crate::error::{Error, Result};

/// One model's fitted values and how well they fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Model profile the values belong to.
    pub model: String,
    /// Counter the fitted scale converts from (e.g. `o200k-json`).
    pub counter: String,
    /// Non-tool system prompt of the main agent, in the provider's tokens.
    pub system_prompt_tokens: f64,
    /// A subagent's system prompt, when subagent requests were billed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent_system_prompt_tokens: Option<f64>,
    /// Provider tokens per counted token.
    pub scale: f64,
    /// The tool-use preamble the fit assumed (the profile's), part of the fitted intercept.
    pub tool_overhead_tokens: usize,
    /// Main-agent requests the line was fitted on, its R² and residual (billed tokens).
    pub requests: usize,
    pub r2: f64,
    pub rms_residual_tokens: f64,
    /// Subagent requests the subagent prompt was fitted on.
    #[serde(default)]
    pub subagent_requests: usize,
    /// The free fit put the system prompt below 0: it is fixed at 0 and the scale fitted alone
    /// (the bills carry less than the scenarios hold; read the fit as rough).
    #[serde(default)]
    pub constrained: bool,
    /// Whether the import applied it (files written before this field: every entry was).
    #[serde(default = "applied_by_default")]
    pub applied: bool,
    /// The error on requests held out of the fit, against the uncalibrated model on the same
    /// requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_out: Option<HeldOut>,
    /// Why it is not applied, or a warning (fitted on fewer requests than asked for).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn applied_by_default() -> bool {
    true
}

/// Held-out error of a fit: each request predicted by a fit on the other folds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeldOut {
    /// How requests were held out (e.g. `5-fold cross-validation`).
    pub method: String,
    pub folds: usize,
    pub requests: usize,
    /// Median and 90th percentile of |predicted − billed| / billed, percent: calibrated, and
    /// the uncalibrated model on the same requests.
    pub median_abs_pct: f64,
    pub p90_abs_pct: f64,
    pub uncalibrated_median_abs_pct: f64,
    pub uncalibrated_p90_abs_pct: f64,
}

/// A calibration file: one entry per (model, counter).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationFile {
    pub calibrations: Vec<Calibration>,
}

impl CalibrationFile {
    pub fn load(path: &Path) -> Result<CalibrationFile> {
        let doc = Document::read(path)?;
        let file: CalibrationFile =
            serde_json::from_str(doc.text()).map_err(|e| json_error(path, &e))?;
        for c in file.calibrations.iter().filter(|c| c.applied) {
            if !c.scale.is_finite() || c.scale <= 0.0 || !c.system_prompt_tokens.is_finite() {
                return Err(Error::input(
                    path,
                    None,
                    format!(
                        "calibration for {} has scale {} and system prompt {}: expected a positive scale and a finite size",
                        c.model, c.scale, c.system_prompt_tokens
                    ),
                ));
            }
        }
        Ok(file)
    }

    /// The applied entry for this scenario's profile and counter (`session import` keys them
    /// by the counter the simulator selects for the scenario, `session::import::counter_of`).
    pub fn for_scenario(&self, scenario: &Scenario, counter: &str) -> Option<&Calibration> {
        self.calibrations
            .iter()
            .find(|c| c.applied && c.model == scenario.profile.name && c.counter == counter)
    }
}

impl Calibration {
    /// Sets the fitted system prompts and scale on a prepared scenario.
    pub fn apply(&self, prepared: &mut Prepared) {
        prepared.system_tokens = self.system_prompt_tokens.round().max(0.0) as usize;
        prepared.subagent_system_tokens = self
            .subagent_system_prompt_tokens
            .map(|s| s.round().max(0.0) as usize);
        prepared.scale = self.scale;
    }
}
