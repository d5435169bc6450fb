//! Imported sessions replayed again: as they ran (billed vs the calibrated model, request by
//! request) and under other settings (eager, and deferred with each listing mode and scorer
//! asked for), with the calibrated model, with and without caching. This is what
//! `report --sessions DIR` shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use super::compare::align;
use super::convert::RanAs;
use super::fit::{ErrorStats, error_stats};
use super::import::{
    CatalogContext, ModeTotals, UsageFile, calibration_for, counter_of, mode_name, replay,
};
use crate::catalog::{CatalogSource, load_catalogs};
use crate::error::{Error, Result};
use crate::input;
use crate::search::ScorerKind;
use crate::simulate::calibration::{Calibration, CalibrationFile};
use crate::simulate::scenario::{Item, Listing};
use crate::simulate::{Scenario, load_scenario};

/// Deferred settings a counterfactual replay uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    pub scorer: ScorerKind,
    pub listing: Listing,
}

impl Variant {
    /// What Claude Code does: keyword search over a list of names.
    pub const CLAUDE_CODE: Variant = Variant {
        scorer: ScorerKind::Keyword,
        listing: Listing::Names,
    };

    pub fn label(&self) -> String {
        format!(
            "{} / {}",
            self.scorer.name(),
            crate::names::variant::<Listing>(self.listing as usize)
        )
    }
}

/// A listing mode by name (`names`, `descriptions`, `servers`).
pub fn parse_listing(s: &str) -> std::result::Result<Listing, String> {
    let names = crate::names::of::<Listing>().unwrap_or(&[]);
    let i = names.iter().position(|n| *n == s).ok_or_else(|| {
        format!(
            "unknown listing {s:?}, expected one of: {}",
            names.join(", ")
        )
    })?;
    Ok([Listing::Names, Listing::Descriptions, Listing::Servers][i])
}

/// One imported session read back from an import folder.
pub struct Imported {
    pub usage: UsageFile,
    pub scenario: Scenario,
}

/// Reads every `NAME.usage.json` of an import folder and its scenario, in name order, and
/// the folder's `calibration.json` (absent: uncalibrated).
pub fn load_dir(dir: &Path) -> Result<(Vec<Imported>, CalibrationFile)> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::input(dir, None, format!("cannot list the sessions folder: {e}")))?;
    let mut usage_files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".usage.json"))
        .collect();
    usage_files.sort();
    if usage_files.is_empty() {
        return Err(Error::input(
            dir,
            None,
            "no imported sessions here (NAME.usage.json files written by `session import --out`)",
        ));
    }
    let mut out = Vec::with_capacity(usage_files.len());
    for p in usage_files {
        let bytes = input::read(&p)?;
        let usage: UsageFile =
            serde_json::from_slice(&bytes).map_err(|e| crate::document::json_error(&p, &e))?;
        let scenario = load_scenario(&dir.join(&usage.scenario))?;
        out.push(Imported { usage, scenario });
    }
    let cal_path = dir.join("calibration.json");
    let cal = if cal_path.is_file() {
        CalibrationFile::load(&cal_path)?
    } else {
        CalibrationFile::default()
    };
    Ok((out, cal))
}

/// The catalogs of each distinct catalog list, loaded once (and counted once per counter).
fn contexts(sessions: &[Imported]) -> Result<Vec<Arc<CatalogContext>>> {
    let mut by_list: BTreeMap<Vec<(PathBuf, Option<String>)>, Arc<CatalogContext>> =
        BTreeMap::new();
    let mut out = Vec::with_capacity(sessions.len());
    for s in sessions {
        let key: Vec<(PathBuf, Option<String>)> = s
            .scenario
            .catalogs
            .iter()
            .map(|c| (c.path.clone(), c.server.clone()))
            .collect();
        if !by_list.contains_key(&key) {
            let sources: Vec<CatalogSource> = key
                .iter()
                .map(|(path, server)| CatalogSource {
                    path: path.clone(),
                    server: server.clone(),
                })
                .collect();
            let ctx = CatalogContext::new(load_catalogs(&sources)?, Vec::new());
            by_list.insert(key.clone(), Arc::new(ctx));
        }
        out.push(by_list[&key].clone());
    }
    Ok(out)
}

/// The conversation without its recorded searches: the replay searches with its own scorer.
pub fn without_recorded_searches(items: &[Item]) -> Vec<Item> {
    items
        .iter()
        .map(|item| match item {
            Item::Turn(t) => {
                let mut t = (**t).clone();
                t.calls.retain(|c| c.loads.is_none());
                for c in &mut t.calls {
                    if let Some(sub) = &mut c.subagent {
                        sub.conversation = without_recorded_searches(&sub.conversation);
                    }
                }
                if let Some(sub) = &mut t.subagent {
                    sub.conversation = without_recorded_searches(&sub.conversation);
                }
                Item::Turn(Box::new(t))
            }
            Item::Event(e) => Item::Event(e.clone()),
        })
        .collect()
}

/// One deferred replay of a session under one variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantResult {
    pub variant: String,
    pub deferred: ModeTotals,
}

/// One session: its bill against the model, and what each mode would have cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionReplay {
    pub name: String,
    pub file: String,
    pub ran_as: RanAs,
    pub model: String,
    /// What the scenario's sizes and its catalogs are counted with.
    pub counter: &'static str,
    pub requests: usize,
    pub billed_input_tokens: u64,
    /// The calibrated model in the mode the session ran (recorded searches replayed).
    pub modeled_input_tokens: u64,
    pub error: ErrorStats,
    /// (billed, modeled) per paired request, for the calibration chart (not in the json:
    /// thousands of rows per session).
    #[serde(skip)]
    pub pairs: Vec<(u64, u64)>,
    pub eager: ModeTotals,
    /// Deferred under each variant, in the order asked.
    pub deferred: Vec<VariantResult>,
}

/// Every session of an import folder, replayed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionsReport {
    pub folder: String,
    pub variants: Vec<String>,
    pub calibrations: Vec<Calibration>,
    pub sessions: Vec<SessionReplay>,
    pub error: ErrorStats,
    pub eager: ModeTotals,
    /// Per variant, summed over sessions.
    pub deferred: Vec<VariantResult>,
}

/// Replays every imported session of `dir` as it ran and under each variant, with the
/// folder's `calibration.json` or, when given, another calibration.
pub fn replay_dir(
    dir: &Path,
    variants: &[Variant],
    calibration: Option<&CalibrationFile>,
) -> Result<SessionsReport> {
    let (sessions, own) = load_dir(dir)?;
    let cal = calibration.cloned().unwrap_or(own);
    let ctxs = contexts(&sessions)?;
    let replays: Vec<SessionReplay> = sessions
        .par_iter()
        .zip(&ctxs)
        .map(|(s, ctx)| replay_session(s, ctx, &cal, variants))
        .collect::<Result<_>>()?;
    let mut eager = ModeTotals::default();
    let mut deferred: Vec<VariantResult> = variants
        .iter()
        .map(|v| VariantResult {
            variant: v.label(),
            deferred: ModeTotals::default(),
        })
        .collect();
    let mut pairs = Vec::new();
    for r in &replays {
        eager.add(&r.eager);
        for (acc, v) in deferred.iter_mut().zip(&r.deferred) {
            acc.deferred.add(&v.deferred);
        }
        pairs.extend(r.pairs.iter().copied());
    }
    for d in &mut deferred {
        d.deferred = d.deferred.rounded();
    }
    Ok(SessionsReport {
        folder: dir.display().to_string(),
        variants: variants.iter().map(Variant::label).collect(),
        calibrations: cal.calibrations.clone(),
        sessions: replays,
        error: error_stats(&pairs),
        eager: eager.rounded(),
        deferred,
    })
}

fn replay_session(
    s: &Imported,
    ctx: &CatalogContext,
    cal: &CalibrationFile,
    variants: &[Variant],
) -> Result<SessionReplay> {
    let k = calibration_for(cal, &s.scenario);
    let actual = replay(&s.scenario, ctx, k)?;
    let mode = mode_name(s.usage.ran_as);
    let alignment = align(&s.usage.billed, &actual.requests, mode);
    let pairs: Vec<(u64, u64)> = alignment
        .pairs
        .iter()
        .map(|p| (p.billed, p.modeled as u64))
        .collect();
    let ran = match s.usage.ran_as {
        RanAs::Eager => &actual.eager,
        RanAs::Deferred => &actual.deferred,
    };
    let mut stripped = s.scenario.clone();
    stripped.conversation = without_recorded_searches(&s.scenario.conversation);
    let main = s.scenario.profile.name.as_str();
    let priced = |r: &crate::simulate::ScenarioResult, mode: &str| {
        let m = if mode == "eager" {
            &r.eager
        } else {
            &r.deferred
        };
        ModeTotals::priced(m, &r.requests, mode, main, &s.usage.agent_profiles).rounded()
    };
    let mut eager = None;
    let mut deferred = Vec::with_capacity(variants.len());
    for v in variants {
        let mut sc = stripped.clone();
        sc.deferred.scorer = v.scorer;
        sc.deferred.listing = v.listing;
        let r = replay(&sc, ctx, k)?;
        eager.get_or_insert_with(|| priced(&r, "eager"));
        deferred.push(VariantResult {
            variant: v.label(),
            deferred: priced(&r, "deferred"),
        });
    }
    Ok(SessionReplay {
        name: s.scenario.name.clone(),
        file: s.usage.session.clone(),
        ran_as: s.usage.ran_as,
        model: s.scenario.profile.name.clone(),
        counter: counter_of(&s.scenario).name(),
        requests: s.usage.billed.len(),
        billed_input_tokens: s.usage.billed.iter().map(|b| b.usage.prompt()).sum(),
        modeled_input_tokens: ran.total_input_tokens as u64,
        error: error_stats(&pairs),
        pairs,
        eager: eager.unwrap_or_else(|| priced(&actual, "eager")),
        deferred,
    })
}
