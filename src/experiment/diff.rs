//! `toolbudget diff BASE.json HEAD.json`: two `simulate --format json` results read back,
//! paired by scenario name, each figure base → head with its change; the gate on the deferred
//! mode's whole-conversation input tokens (`--max-increase`).

use std::path::Path;

use serde::Serialize;

use crate::document::{Document, with_path};
use crate::error::Result;
use crate::path;
use crate::progress::{Progress, Unit};
use crate::simulate::ScenarioResult;
use crate::simulate::result::SimulationResult;

/// What to check.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DiffOptions {
    /// Largest tolerated growth of a scenario's deferred whole-conversation input tokens, in
    /// percent; `None` checks nothing.
    pub max_increase_pct: Option<f64>,
}

/// The figure the gate checks.
pub const GATED: &str = "deferred whole-conversation input tokens";

/// How a figure is written: a count of tokens or events, or dollars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    Count,
    Usd,
}

/// One figure of one scenario in both files. Every figure is better lower.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FigureDiff {
    pub figure: String,
    pub unit: Measure,
    pub base: f64,
    pub head: f64,
    pub change: f64,
    /// The change as a percentage of base; `None` when base is 0.
    pub change_pct: Option<f64>,
}

impl FigureDiff {
    fn new(figure: &str, unit: Measure, base: f64, head: f64) -> FigureDiff {
        let change = match unit {
            Measure::Count => head - base,
            Measure::Usd => crate::number::round(head - base, 6),
        };
        FigureDiff {
            figure: figure.to_string(),
            unit,
            base,
            head,
            change,
            change_pct: (base != 0.0).then(|| crate::number::percent_of(change, base)),
        }
    }

    /// Grew by more than `pct` percent (any growth from 0 counts).
    pub fn grew_more_than(&self, pct: f64) -> bool {
        match self.change_pct {
            Some(p) => p > pct,
            None => self.change > 0.0,
        }
    }
}

/// One scenario found in both files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioDiff {
    pub name: String,
    pub figures: Vec<FigureDiff>,
    /// Its deferred whole-conversation input tokens grew past `--max-increase`.
    pub over_gate: bool,
}

impl ScenarioDiff {
    /// The figure the gate checks.
    pub fn gated(&self) -> &FigureDiff {
        self.figures
            .iter()
            .find(|f| f.figure == GATED)
            .expect("every scenario diff has the gated figure")
    }
}

/// The difference of two simulation results.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    pub base: String,
    pub head: String,
    pub max_increase_pct: Option<f64>,
    pub scenarios: Vec<ScenarioDiff>,
    pub only_in_base: Vec<String>,
    pub only_in_head: Vec<String>,
    /// Settings that differ between the two runs of a scenario (counter, tokenizer, profile,
    /// prices): its figures are not measured the same way.
    pub notes: Vec<String>,
}

impl Diff {
    /// The scenarios over the gate.
    pub fn failed(&self) -> Vec<&ScenarioDiff> {
        self.scenarios.iter().filter(|s| s.over_gate).collect()
    }
}

/// Reads a `simulate --format json` result: every error located in the file.
pub fn read(path: &Path) -> Result<SimulationResult> {
    let doc = Document::read(path)?;
    let result: SimulationResult = doc.decode(&[], &doc.value)?;
    for (i, s) in result.scenarios.iter().enumerate() {
        if result.scenarios[..i].iter().any(|o| o.name == s.name) {
            let at = path!["scenarios", i, "name"];
            return Err(doc.error_at(
                &at,
                with_path(&at, &format!("scenario {:?} appears twice", s.name)),
            ));
        }
    }
    Ok(result)
}

/// Reads both results and pairs them.
pub fn run(
    base: &Path,
    head: &Path,
    options: &DiffOptions,
    progress: &dyn Progress,
) -> Result<Diff> {
    progress.phase("diff", 0, Unit::Spinner);
    progress.step("reading the two results");
    let b = read(base)?;
    let h = read(head)?;
    progress.finish();
    Ok(diff(
        &base.display().to_string(),
        &head.display().to_string(),
        &b,
        &h,
        options,
    ))
}

/// Pairs two results by scenario name; pure.
pub fn diff(
    base_name: &str,
    head_name: &str,
    base: &SimulationResult,
    head: &SimulationResult,
    options: &DiffOptions,
) -> Diff {
    let mut scenarios = Vec::new();
    let mut notes = Vec::new();
    let mut only_in_base = Vec::new();
    for b in &base.scenarios {
        let Some(h) = head.scenarios.iter().find(|h| h.name == b.name) else {
            only_in_base.push(b.name.clone());
            continue;
        };
        notes.extend(setting_notes(b, h));
        let figures = figures(b, h);
        let mut s = ScenarioDiff {
            name: b.name.clone(),
            figures,
            over_gate: false,
        };
        s.over_gate = options
            .max_increase_pct
            .is_some_and(|pct| s.gated().grew_more_than(pct));
        scenarios.push(s);
    }
    let only_in_head = head
        .scenarios
        .iter()
        .filter(|h| !base.scenarios.iter().any(|b| b.name == h.name))
        .map(|h| h.name.clone())
        .collect();
    Diff {
        base: base_name.to_string(),
        head: head_name.to_string(),
        max_increase_pct: options.max_increase_pct,
        scenarios,
        only_in_base,
        only_in_head,
        notes,
    }
}

fn figures(b: &ScenarioResult, h: &ScenarioResult) -> Vec<FigureDiff> {
    let count = |name: &str, f: &dyn Fn(&ScenarioResult) -> usize| {
        FigureDiff::new(name, Measure::Count, f(b) as f64, f(h) as f64)
    };
    let usd = |name: &str, f: &dyn Fn(&ScenarioResult) -> f64| {
        FigureDiff::new(name, Measure::Usd, f(b), f(h))
    };
    vec![
        count("eager first-request input tokens", &|s| {
            s.eager.first_request_tokens
        }),
        count("deferred first-request input tokens", &|s| {
            s.deferred.first_request_tokens
        }),
        count("eager whole-conversation input tokens", &|s| {
            s.eager.total_input_tokens
        }),
        count(GATED, &|s| s.deferred.total_input_tokens),
        usd("eager cost without caching", &|s| {
            s.eager.cost_usd.without_caching
        }),
        usd("eager cost with caching", &|s| {
            s.eager.cost_usd.with_caching
        }),
        usd("deferred cost without caching", &|s| {
            s.deferred.cost_usd.without_caching
        }),
        usd("deferred cost with caching", &|s| {
            s.deferred.cost_usd.with_caching
        }),
        count("deferred searches", &|s| s.deferred.counts.searches),
        count("deferred search misses", &|s| s.deferred.counts.misses),
    ]
}

/// What was measured differently in the two runs of one scenario.
fn setting_notes(b: &ScenarioResult, h: &ScenarioResult) -> Vec<String> {
    let mut notes = Vec::new();
    let mut note = |what: &str, x: &str, y: &str| {
        if x != y {
            notes.push(format!(
                "{}: {what} differs: {} → {}",
                b.name,
                shown(x),
                shown(y)
            ));
        }
    };
    note("counter", b.counter.0.name(), h.counter.0.name());
    note(
        "tokenizer",
        b.counter.0.tokenizer_label(),
        h.counter.0.tokenizer_label(),
    );
    note("profile", &b.settings.profile, &h.settings.profile);
    note("prices", &b.model.source, &h.model.source);
    notes
}

fn shown(x: &str) -> &str {
    if x.is_empty() { "(none)" } else { x }
}
