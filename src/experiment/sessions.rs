//! Imported sessions replayed again: as they ran (billed vs the calibrated model, request by
//! request) and under other settings (eager, and deferred with each listing mode and scorer
//! asked for), with the calibrated model, with and without caching. This is what
//! `report --sessions DIR` shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde::Serialize;

use super::session_import::{ModeTotals, UsageFile, calibration_for, counter_of, replay};
use crate::adoption::Adoption;
use crate::catalog::{CatalogSource, load_catalogs};
use crate::error::{Error, Result};
use crate::input;
use crate::search::ScorerKind;
use crate::session::compare::align;
use crate::session::fit::{ErrorStats, error_stats};
use crate::session::import::{CatalogContext, QUERIES_FILE};
use crate::session::queries::MinedQuery;
use crate::simulate::Mode;
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
    let cal_path = dir.join(super::session_import::CALIBRATION_FILE);
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
    pub ran_as: Mode,
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
    /// Whether the model searched before it used deferred tools (absent from folders
    /// written before it was measured).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adoption: Option<Adoption>,
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
    /// Per scorer, how many of the model's real searches (the folder's `queries.jsonl`) it
    /// would have answered in the top k.
    pub searches: Vec<SearchScore>,
    /// Adoption summed over the sessions that have it.
    pub adoption: Adoption,
}

/// One scorer on the model's own searches: a search is answered when every tool the model
/// went on to call is among the scorer's first `k` results (`k`: the session's
/// `max_results`); `any` counts those with at least one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchScore {
    pub scorer: String,
    pub searches: usize,
    pub answered: usize,
    pub answered_any: usize,
    /// The same split by query class (`select` and the derived ones), in output order.
    pub by_class: Vec<(String, usize, usize)>,
}

/// Reads an import folder's mined queries (absent: none).
pub fn load_queries(dir: &Path) -> Result<Vec<MinedQuery>> {
    let path = dir.join(QUERIES_FILE);
    if !path.is_file() {
        return Ok(Vec::new());
    }
    let bytes = input::read(&path)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::input(&path, None, "file is not valid UTF-8"))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str::<MinedQuery>(l).map_err(|e| {
                Error::input(
                    &path,
                    Some(crate::error::Position {
                        line: i + 1,
                        column: e.column().max(1),
                    }),
                    format!("invalid mined query: {e}"),
                )
            })
        })
        .collect()
}

/// Scores each variant's scorer (each once) on the mined queries, each query searched in its
/// own session's catalogs.
fn score_searches(
    queries: &[MinedQuery],
    sessions: &[Imported],
    ctxs: &[Arc<CatalogContext>],
    variants: &[Variant],
) -> Result<Vec<SearchScore>> {
    let mut kinds: Vec<ScorerKind> = Vec::new();
    for v in variants {
        if !kinds.contains(&v.scorer) {
            kinds.push(v.scorer);
        }
    }
    let by_name: BTreeMap<&str, usize> = sessions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.scenario.name.as_str(), i))
        .collect();
    let mut out = Vec::new();
    for kind in kinds {
        let mut scorers: BTreeMap<usize, Box<dyn crate::search::Scorer>> = BTreeMap::new();
        let mut score = SearchScore {
            scorer: kind.name().to_string(),
            searches: 0,
            answered: 0,
            answered_any: 0,
            by_class: Vec::new(),
        };
        let mut classes: BTreeMap<String, (usize, usize)> = BTreeMap::new();
        for q in queries {
            let session = q.id.rsplit_once('/').map_or(q.id.as_str(), |(s, _)| s);
            let Some(&si) = by_name.get(session) else {
                continue;
            };
            let ctx = &ctxs[si];
            let sc = &sessions[si].scenario;
            let scorer = match scorers.entry(si) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(crate::simulate::build_scorer(
                        &crate::search::spec::ScorerSpec::Builtin(kind),
                        ctx.catalog.clone(),
                        &sc.deferred.bm25,
                        None,
                    )?)
                }
            };
            let candidates = ctx.catalog.search_candidates();
            let mut req = crate::search::SearchRequest::new(&q.query, sc.deferred.max_results);
            req.candidates = candidates.as_deref();
            req.id = Some(&q.id);
            let hits: Vec<String> = match scorer.search(&req) {
                Ok(o) => o
                    .hits
                    .iter()
                    .take(sc.deferred.max_results)
                    .map(|h| ctx.catalog.get(h.tool).id.clone())
                    .collect(),
                // A query the scorer refuses answers nothing.
                Err(crate::search::SearchError::Refused(_)) => Vec::new(),
                Err(e) => {
                    return Err(Error::usage(format!(
                        "scoring the mined query {}: {e}",
                        q.id
                    )));
                }
            };
            let all = q.expected.iter().all(|t| hits.contains(t));
            let any = q.expected.iter().any(|t| hits.contains(t));
            score.searches += 1;
            score.answered += usize::from(all);
            score.answered_any += usize::from(any);
            let c = classes.entry(q.class.clone()).or_insert((0, 0));
            c.0 += 1;
            c.1 += usize::from(all);
        }
        let named: Vec<crate::eval::classes::QueryClass> = classes
            .keys()
            .map(|c| crate::eval::classes::QueryClass::new(c))
            .collect();
        score.by_class = crate::eval::classes::ordered(&named)
            .into_iter()
            .map(|c| {
                let (n, a) = classes[c.as_str()];
                (c.as_str().to_string(), n, a)
            })
            .collect();
        out.push(score);
    }
    Ok(out)
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
    let queries = load_queries(dir)?;
    let searches = score_searches(&queries, &sessions, &ctxs, variants)?;
    let mut adoption = Adoption::default();
    for a in replays.iter().filter_map(|r| r.adoption.as_ref()) {
        adoption.add(a);
    }
    Ok(SessionsReport {
        searches,
        adoption,
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
    let mode = s.usage.ran_as.name();
    let alignment = if s.usage.redacted_placeholders > 0 {
        crate::session::compare::Alignment::redacted(&s.usage.billed)
    } else {
        align(&s.usage.billed, &actual.requests, mode)
    };
    let pairs: Vec<(u64, u64)> = alignment
        .pairs
        .iter()
        .map(|p| (p.billed, p.modeled as u64))
        .collect();
    let ran = match s.usage.ran_as {
        Mode::Eager => &actual.eager,
        Mode::Deferred => &actual.deferred,
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
        sc.deferred.scorer = v.scorer.into();
        sc.deferred.scorer_dir = None;
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
        adoption: s.usage.adoption,
    })
}
