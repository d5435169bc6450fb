//! Values fitted from real bills (`toolbudget session import` writes them): the system prompt
//! a model really carried and how many provider tokens one counted token is, with the error
//! the fit makes on requests it was not fitted on. `simulate` and `report` apply them with
//! `--calibration FILE` to every scenario of the same model profile and counter; an entry the
//! import did not apply (`applied: false`: too few requests, or no better than none on the
//! held-out requests) is kept for the record and never applied.

use std::path::Path;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::Scenario;
use crate::counter::CounterKind;
use crate::document::{Document, json_error};
use crate::error::Result;

/// One model's fitted values and how well they fit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    /// Model profile the values belong to.
    pub model: String,
    /// Counter the fitted scale converts from (e.g. `o200k-json`).
    pub counter: CounterKind,
    /// Non-tool system prompt of the main agent, in the provider's tokens (0 to
    /// [`MAX_SYSTEM_PROMPT_TOKENS`]).
    #[serde(deserialize_with = "system_prompt")]
    pub system_prompt_tokens: f64,
    /// A subagent's system prompt, when subagent requests were billed.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "subagent_system_prompt"
    )]
    pub subagent_system_prompt_tokens: Option<f64>,
    /// Provider tokens per counted token (at most [`MAX_SCALE`] either way; positive in an
    /// applied entry).
    #[serde(deserialize_with = "scale")]
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

/// What `--calibration FILE` did to one scenario; every format of `simulate` says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationUse {
    pub file: String,
    /// The entry applied; `None`: the file has no applied entry for `looked_for`, and the
    /// scenario ran as counted.
    pub applied: Option<CalibrationApplied>,
    /// The scenario's model and counter, as `MODEL / COUNTER`.
    pub looked_for: String,
}

/// An applied entry and what it changed: the system prompt (as counted, then fitted) and the
/// scale every counted token is multiplied by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationApplied {
    pub model: String,
    pub counter: CounterKind,
    pub scale: f64,
    pub system_prompt_tokens: [usize; 2],
}

impl CalibrationUse {
    /// One sentence for a table or Markdown line.
    pub fn sentence(&self) -> String {
        match &self.applied {
            Some(a) => format!(
                "calibration {} applied (entry {} / {}): system prompt {} → {} tokens, every \
                 counted token × {}",
                self.file,
                a.model,
                a.counter,
                a.system_prompt_tokens[0],
                a.system_prompt_tokens[1],
                crate::number::round(a.scale, 4)
            ),
            None => format!(
                "calibration {}: no applied entry for {}; counts as counted",
                self.file, self.looked_for
            ),
        }
    }
}

/// A calibration file: one entry per (model, counter).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibrationFile {
    #[serde(deserialize_with = "entries")]
    pub calibrations: Vec<Calibration>,
    /// Where it was read from (empty when built in memory); outputs name it.
    #[serde(skip)]
    pub path: std::path::PathBuf,
}

/// Largest system prompt a calibration may set: ten million tokens, past any model's context.
pub const MAX_SYSTEM_PROMPT_TOKENS: f64 = 1e7;
/// Largest scale (provider tokens per counted token) a calibration may hold, either way: any
/// two tokenizers of text differ by a small factor.
pub const MAX_SCALE: f64 = 100.0;

/// A number as written in a message: plain up to 10¹⁵, else in exponent form (`1e300`, not
/// three hundred digits).
pub fn show(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// Why a system prompt size is refused, if it is.
pub fn system_prompt_problem(v: f64) -> Option<String> {
    (!(0.0..=MAX_SYSTEM_PROMPT_TOKENS).contains(&v)).then(|| {
        format!(
            "{} is not a system prompt size: expected 0 to {MAX_SYSTEM_PROMPT_TOKENS:.0} tokens",
            show(v)
        )
    })
}

/// Why a scale is refused, if it is (an applied one must also be positive).
pub fn scale_problem(v: f64) -> Option<String> {
    (!(v.is_finite() && v.abs() <= MAX_SCALE)).then(|| {
        format!(
            "{} is not a scale: expected at most {MAX_SCALE} provider tokens per counted token",
            show(v)
        )
    })
}

fn checked<'de, D: Deserializer<'de>>(
    d: D,
    field: &str,
    problem: fn(f64) -> Option<String>,
) -> Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    match problem(v) {
        Some(p) => Err(de::Error::custom(format!("{field}: {p}"))),
        None => Ok(v),
    }
}

fn system_prompt<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    checked(d, "system_prompt_tokens", system_prompt_problem)
}

fn subagent_system_prompt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    checked(d, "subagent_system_prompt_tokens", system_prompt_problem).map(Some)
}

fn scale<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    checked(d, "scale", scale_problem)
}

/// The entries, each refused just past its end (its model and counter named) when it is
/// applied with a scale that is not positive (one the import never applies).
fn entries<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Calibration>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<Calibration>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of calibrations")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(c) = seq.next_element::<Calibration>()? {
                if c.applied && c.scale <= 0.0 {
                    return Err(de::Error::custom(format!(
                        "calibration for {} ({}) is applied with scale {}: an applied scale must be positive",
                        c.model, c.counter, c.scale
                    )));
                }
                out.push(c);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(V)
}

impl CalibrationFile {
    /// Reads a calibration file; a value out of range is an error at its `line:column`.
    pub fn load(path: &Path) -> Result<CalibrationFile> {
        let doc = Document::read(path)?;
        let mut file: CalibrationFile =
            serde_json::from_str(doc.text()).map_err(|e| json_error(path, &e))?;
        file.path = path.to_path_buf();
        Ok(file)
    }

    /// What this file does to `scenario` run with `counter`, given the system prompt it would
    /// have without a calibration: the entry applied and what it replaced, or that none applies.
    pub fn use_for(
        &self,
        scenario: &Scenario,
        counter: CounterKind,
        counted_system_prompt_tokens: usize,
    ) -> CalibrationUse {
        CalibrationUse {
            file: self.path.display().to_string(),
            applied: self
                .for_scenario(scenario, counter)
                .map(|c| CalibrationApplied {
                    model: c.model.clone(),
                    counter: c.counter,
                    scale: c.scale,
                    system_prompt_tokens: [
                        counted_system_prompt_tokens,
                        c.system_prompt_tokens.round().max(0.0) as usize,
                    ],
                }),
            looked_for: format!("{} / {counter}", scenario.profile.name),
        }
    }

    /// Reads calibration-file bytes that came from `path` (fuzzing and tests: no file is
    /// touched); the same checks as [`Self::load`].
    pub fn parse(path: &Path, bytes: Vec<u8>) -> Result<CalibrationFile> {
        let doc = Document::parse(path, bytes)?;
        serde_json::from_str(doc.text()).map_err(|e| json_error(path, &e))
    }

    /// The applied entry for this scenario's model and counter (`session import` keys them
    /// by the counter the simulator selects for the scenario, `session::import::counter_of`): the
    /// same name first, else the same model of the price table (a fit on the logged
    /// `claude-sonnet-4-5-20250929` applies to a scenario of `claude-sonnet-4.5`).
    pub fn for_scenario(&self, scenario: &Scenario, counter: CounterKind) -> Option<&Calibration> {
        let name = &scenario.profile.name;
        let applied = || {
            self.calibrations
                .iter()
                .filter(|c| c.applied && c.counter == counter)
        };
        applied()
            .find(|c| &c.model == name)
            .or_else(|| applied().find(|c| super::profile::same_model(&c.model, name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(applied: bool, system: &str, scale: &str) -> String {
        format!(
            r#"{{"calibrations": [
  {{"model": "claude-sonnet-4.5", "counter": "anthropic-estimate",
   "system_prompt_tokens": {system},
   "scale": {scale},
   "tool_overhead_tokens": 346, "requests": 30, "r2": 0.9, "rms_residual_tokens": 12.0,
   "applied": {applied}}}
]}}
"#
        )
    }

    fn load(text: &str) -> std::result::Result<CalibrationFile, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("calibration.json");
        std::fs::write(&path, text).unwrap();
        CalibrationFile::load(&path).map_err(|e| {
            e.to_string()
                .replace(&format!("{}", path.display()), "calibration.json")
        })
    }

    #[test]
    fn values_out_of_range_are_refused_where_they_stand() {
        assert!(load(&entry(true, "9871.2", "1.137")).is_ok());
        // Not applied, a negative scale is kept (the import writes what it refused).
        assert!(load(&entry(false, "0", "-6.4")).is_ok());
        for (system, scale, applied, at, says) in [
            (
                "1e300",
                "1.1",
                true,
                "calibration.json:3:",
                "system_prompt_tokens: 1e300 is not a system prompt size",
            ),
            (
                "-5",
                "1.1",
                false,
                "calibration.json:3:",
                "system_prompt_tokens: -5 is not a system prompt size",
            ),
            (
                "10000001",
                "1.1",
                true,
                "calibration.json:3:",
                "expected 0 to 10000000 tokens",
            ),
            (
                "9871",
                "1e300",
                false,
                "calibration.json:4:",
                "scale: 1e300 is not a scale",
            ),
            (
                "9871",
                "-1",
                true,
                "calibration.json:7:",
                "is applied with scale -1: an applied scale must be positive",
            ),
            (
                "9871",
                "0",
                true,
                "calibration.json:7:",
                "is applied with scale 0",
            ),
            ("NaN", "1.1", true, "calibration.json:3:", "invalid JSON"),
            (
                "9871",
                "1e400",
                true,
                "calibration.json:4:",
                "invalid JSON: number out of range",
            ),
        ] {
            let e = load(&entry(applied, system, scale)).unwrap_err();
            assert!(e.starts_with(at), "{system} {scale}: {e}");
            assert!(e.contains(says), "{system} {scale}: {e}");
        }
    }
}
