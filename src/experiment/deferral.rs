//! Where deferral pays, measured with the simulator on generated catalogs of 10 to 10,000
//! tools (the sweep's generator and seed) and one conversation shape: each turn is a short
//! user message and one tool call; the first `searches` turns each need a tool not used
//! before (a search when deferred), later turns reuse those tools. One 50-turn run per catalog
//! size and search count gives the cumulative cost after every turn.
//!
//! - **Break-even**: the first turn from which deferred costs less than eager up to turn 50,
//!   without and with prompt caching.
//! - **Auto threshold**: Claude Code's `auto:N` (default 10) defers only when the deferrable
//!   tools' definitions exceed N% of the context window; what the simulator's rule decides for
//!   a 200K and a 1M window, and what the chosen mode costs against the other.
//! - **Reveal**: the same conversation deferred with `reveal: append` and `tools-list`, with
//!   the cache invalidations each causes.
//!
//! The runs go through `simulate::prepare_with` and `simulate::run` like any scenario; nothing
//! here measures time, so the results are deterministic.

use std::path::Path;
use std::sync::Arc;

use serde::Serialize;

use super::sweep;
use crate::catalog::Catalog;
use crate::counter::CounterKind;
use crate::document::Document;
use crate::error::Result;
use crate::generate;
use crate::search::ScorerKind;
use crate::simulate::result::Invalidations;
use crate::simulate::scenario::{Listing, Reveal};
use crate::simulate::{self, Mode, Prepared, Profile, ScenarioResult, ScorerBuilder};

/// Catalog sizes of the deferral views (log-spaced, the sweep's generator).
pub const SIZES: [usize; 7] = [10, 30, 100, 300, 1_000, 3_000, 10_000];
/// Turns of every run.
pub const TURNS: usize = 50;
/// Distinct tools a conversation needs (one search each when deferred).
pub const SEARCHES: [usize; 3] = [1, 5, 10];
/// The conversation the threshold and reveal views cost: this many turns and searches.
pub const VIEW_TURNS: usize = 20;
pub const VIEW_SEARCHES: usize = 5;
/// Claude Code's default `auto:N` share of the context window, %.
pub const AUTO_PCT: f64 = 10.0;
/// The context windows the threshold view compares (Claude's standard and 1M windows).
pub const WINDOWS: [usize; 2] = [200_000, 1_000_000];
/// The catalog size of the reveal comparison.
pub const REVEAL_TOOLS: usize = 1_000;
const SYSTEM_PROMPT_TOKENS: usize = 3_000;
const USER_TOKENS: usize = 50;
const RESULT_TOKENS: usize = 300;

/// The fixed parts of every run, printed with the views.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeferralSettings {
    pub counter: CounterKind,
    pub profile: String,
    pub seed: u64,
    pub turns: usize,
    pub system_prompt_tokens: usize,
    pub user_tokens: usize,
    pub result_tokens: usize,
    pub scorer: ScorerKind,
    pub listing: Listing,
    pub auto_pct: f64,
    pub view_turns: usize,
    pub view_searches: usize,
}

/// One run: cumulative cost after each turn, both modes, without and with caching.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Curve {
    pub tools: usize,
    /// Definitions of every tool (the counter's tokens).
    pub tool_tokens: usize,
    pub searches: usize,
    pub eager_first_request_tokens: usize,
    pub deferred_first_request_tokens: usize,
    /// USD after turn 1, 2, … `TURNS` (index 0 is turn 1).
    pub eager_usd: Vec<f64>,
    pub deferred_usd: Vec<f64>,
    pub eager_cached_usd: Vec<f64>,
    pub deferred_cached_usd: Vec<f64>,
}

impl Curve {
    /// The first turn from which deferred costs less than eager through the last turn;
    /// `None` when it does not by the last turn.
    pub fn break_even(&self, cached: bool) -> Option<usize> {
        let (e, d) = if cached {
            (&self.eager_cached_usd, &self.deferred_cached_usd)
        } else {
            (&self.eager_usd, &self.deferred_usd)
        };
        let mut from = None;
        for (t, (a, b)) in e.iter().zip(d).enumerate() {
            if b < a {
                from.get_or_insert(t + 1);
            } else {
                from = None;
            }
        }
        from
    }

    /// Cumulative cost after `turn` turns (1-based), (eager, deferred).
    pub fn at(&self, turn: usize, cached: bool) -> (f64, f64) {
        let i = turn.clamp(1, self.eager_usd.len().max(1)) - 1;
        if cached {
            (self.eager_cached_usd[i], self.deferred_cached_usd[i])
        } else {
            (self.eager_usd[i], self.deferred_usd[i])
        }
    }
}

/// What `auto:N` decides for one catalog and window, and what the decision costs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ThresholdRow {
    pub tools: usize,
    pub tool_tokens: usize,
    pub window: usize,
    /// N% of the window: deferral starts above it.
    pub threshold_tokens: usize,
    pub defers: bool,
    /// The first request of the mode chosen, and whether it fits the window.
    pub first_request_tokens: usize,
    pub fits_window: bool,
    /// The conversation (`VIEW_TURNS` turns, `VIEW_SEARCHES` searches), with caching.
    pub chosen_usd: f64,
    pub eager_usd: f64,
    pub deferred_usd: f64,
    /// What the decision costs beyond the cheaper mode (0 when it chose the cheaper one).
    pub regret_usd: f64,
}

/// The reveal comparison: the deferred mode of the whole `TURNS`-turn conversation with one
/// reveal style.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RevealRow {
    pub reveal: Reveal,
    pub tools: usize,
    pub searches: usize,
    pub turns: usize,
    pub total_input_tokens: usize,
    pub cached_input_tokens: usize,
    pub cost_usd: f64,
    pub cost_cached_usd: f64,
    pub invalidations: Invalidations,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Deferral {
    pub settings: DeferralSettings,
    pub curves: Vec<Curve>,
    pub threshold: Vec<ThresholdRow>,
    pub reveal: Vec<RevealRow>,
}

/// The generated scenario: `TURNS` turns over `catalog`, each calling one of the first
/// `searches` tools picked across the catalog (a search the first time when deferred).
fn scenario(
    catalog: &Catalog,
    profile: &Profile,
    searches: usize,
    extra: &str,
) -> Result<simulate::Scenario> {
    let n = catalog.len();
    let picks: Vec<usize> = (0..searches.min(n))
        .map(|k| k * n / searches.min(n).max(1))
        .collect();
    let turns: Vec<serde_json::Value> = (0..TURNS)
        .map(|t| {
            let tool = catalog.get(picks[t % picks.len()]);
            let query = format!(
                "{} {}",
                tool.server.as_deref().unwrap_or(""),
                tool.name.replace('_', " ")
            );
            serde_json::json!({
                "user": format!("turn {}", t + 1),
                "tokens": USER_TOKENS,
                "calls": [{"tool": tool.id, "query": query.trim(), "result_tokens": RESULT_TOKENS}],
            })
        })
        .collect();
    let mut doc = serde_json::json!({
        "name": format!("deferral-{n}-tools-{searches}-searches"),
        "model": profile.name,
        "system_prompt_tokens": SYSTEM_PROMPT_TOKENS,
        "catalogs": ["generated.json"],
        "deferred": {"defer_mcp": true, "scorer": "keyword", "max_results": 5},
        "conversation": turns,
    });
    // `extra`: deferred settings of a variant (`when`, `reveal`), as `key=value`.
    if let Some((k, v)) = extra.split_once('=') {
        doc["deferred"][k] = serde_json::Value::String(v.to_string());
    }
    let text = serde_json::to_vec(&doc).expect("serializes");
    simulate::scenario::parse(&Document::parse(Path::new("deferral.json"), text)?)
}

/// Cumulative USD after each main-agent turn of one mode.
fn cumulative(r: &ScenarioResult, mode: Mode, cached: bool) -> Vec<f64> {
    let mut out = vec![0.0; TURNS];
    for q in r.requests.iter().filter(|q| q.mode == mode) {
        let cost = if cached {
            q.cost_cached_usd
        } else {
            q.cost_usd
        };
        if (1..=TURNS).contains(&q.turn) {
            out[q.turn - 1] += cost;
        }
    }
    let mut sum = 0.0;
    for v in &mut out {
        sum += *v;
        *v = crate::number::round(sum, 6);
    }
    out
}

fn curve(tools: usize, tool_tokens: usize, searches: usize, r: &ScenarioResult) -> Curve {
    Curve {
        tools,
        tool_tokens,
        searches,
        eager_first_request_tokens: r.eager.first_request_tokens,
        deferred_first_request_tokens: r.deferred.first_request_tokens,
        eager_usd: cumulative(r, Mode::Eager, false),
        deferred_usd: cumulative(r, Mode::Deferred, false),
        eager_cached_usd: cumulative(r, Mode::Eager, true),
        deferred_cached_usd: cumulative(r, Mode::Deferred, true),
    }
}

/// Cost of the first `VIEW_TURNS` turns of one mode, with caching.
fn view_cost(r: &ScenarioResult, mode: Mode) -> f64 {
    cumulative(r, mode, true)[VIEW_TURNS - 1]
}

fn threshold_row(
    tools: usize,
    tool_tokens: usize,
    window: usize,
    base: &ScenarioResult,
    auto: &ScenarioResult,
) -> ThresholdRow {
    let eager = view_cost(base, Mode::Eager);
    let deferred = view_cost(base, Mode::Deferred);
    let chosen = view_cost(auto, Mode::Deferred);
    ThresholdRow {
        tools,
        tool_tokens,
        window,
        threshold_tokens: (AUTO_PCT / 100.0 * window as f64) as usize,
        defers: auto.settings.deferring,
        first_request_tokens: auto.deferred.first_request_tokens,
        fits_window: auto.deferred.fits_window,
        chosen_usd: chosen,
        eager_usd: eager,
        deferred_usd: deferred,
        regret_usd: crate::number::round((chosen - eager.min(deferred)).max(0.0), 6),
    }
}

fn reveal_row(reveal: Reveal, tools: usize, r: &ScenarioResult) -> RevealRow {
    let d = &r.deferred;
    let rows = r.requests.iter().filter(|q| q.mode == Mode::Deferred);
    let (mut input, mut cached, mut usd, mut usd_cached) = (0, 0, 0.0, 0.0);
    for q in rows {
        input += q.input_tokens;
        cached += q.cached_tokens;
        usd += q.cost_usd;
        usd_cached += q.cost_cached_usd;
    }
    RevealRow {
        reveal,
        tools,
        searches: VIEW_SEARCHES,
        turns: TURNS,
        total_input_tokens: input,
        cached_input_tokens: cached,
        cost_usd: crate::number::round(usd, 6),
        cost_cached_usd: crate::number::round(usd_cached, 6),
        invalidations: d.cache_invalidations.clone(),
    }
}

/// Every deferral view, for `profile` counted by `counter`; a progress phase over the sizes.
pub fn compute(
    counter: CounterKind,
    profile: &Profile,
    build: &ScorerBuilder<'_>,
    progress: &dyn crate::progress::Progress,
) -> Result<Deferral> {
    progress.phase(
        "deferral",
        SIZES.len() as u64,
        crate::progress::Unit::Items(""),
    );
    let mut curves = Vec::new();
    let mut threshold = Vec::new();
    let mut reveal = Vec::new();
    for size in SIZES {
        progress.step(&format!("{size} tools"));
        progress.advance(1);
        let catalog = generate::generate(size, sweep::servers_for(size), sweep::SEED);
        let tokens = counter.tools(&catalog);
        let tool_tokens = tokens.total();
        let base = scenario(&catalog, profile, VIEW_SEARCHES, "")?;
        let prep = Prepared::builder(&base, counter, build)
            .catalog(Arc::new(catalog.clone()))
            .tokens(tokens)
            .build()?;
        let mut view_base = None;
        for searches in SEARCHES {
            let sc = scenario(&catalog, profile, searches, "")?;
            let r = simulate::run(&sc, &prep)?;
            curves.push(curve(size, tool_tokens, searches, &r));
            if searches == VIEW_SEARCHES {
                view_base = Some(r);
            }
        }
        let view_base = view_base.expect("SEARCHES holds VIEW_SEARCHES");
        for window in WINDOWS {
            let mut sc = scenario(
                &catalog,
                profile,
                VIEW_SEARCHES,
                &format!("when=auto:{AUTO_PCT}"),
            )?;
            sc.profile.context_window = window;
            let r = simulate::run(&sc, &prep)?;
            threshold.push(threshold_row(size, tool_tokens, window, &view_base, &r));
        }
        if size == REVEAL_TOOLS {
            reveal.push(reveal_row(Reveal::Append, size, &view_base));
            let sc = scenario(&catalog, profile, VIEW_SEARCHES, "reveal=tools-list")?;
            let r = simulate::run(&sc, &prep)?;
            reveal.push(reveal_row(Reveal::ToolsList, size, &r));
        }
    }
    Ok(Deferral {
        settings: DeferralSettings {
            counter,
            profile: profile.name.clone(),
            seed: sweep::SEED,
            turns: TURNS,
            system_prompt_tokens: SYSTEM_PROMPT_TOKENS,
            user_tokens: USER_TOKENS,
            result_tokens: RESULT_TOKENS,
            scorer: ScorerKind::Keyword,
            listing: Listing::Names,
            auto_pct: AUTO_PCT,
            view_turns: VIEW_TURNS,
            view_searches: VIEW_SEARCHES,
        },
        curves,
        threshold,
        reveal,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(e: &[f64], d: &[f64]) -> Curve {
        Curve {
            tools: 1,
            tool_tokens: 1,
            searches: 1,
            eager_first_request_tokens: 0,
            deferred_first_request_tokens: 0,
            eager_usd: e.to_vec(),
            deferred_usd: d.to_vec(),
            eager_cached_usd: e.to_vec(),
            deferred_cached_usd: e.to_vec(),
        }
    }

    #[test]
    fn break_even_is_the_first_turn_deferred_stays_cheaper() {
        assert_eq!(
            flat(&[1.0, 2.0, 3.0], &[2.0, 1.9, 2.5]).break_even(false),
            Some(2)
        );
        assert_eq!(
            flat(&[1.0, 2.0, 3.0], &[0.5, 2.5, 2.0]).break_even(false),
            Some(3)
        );
        assert_eq!(
            flat(&[1.0, 2.0, 3.0], &[0.5, 1.5, 2.5]).break_even(false),
            Some(1)
        );
        assert_eq!(
            flat(&[1.0, 2.0, 3.0], &[0.5, 1.5, 3.0]).break_even(false),
            None
        );
        // Cached curves are equal here: never cheaper.
        assert_eq!(flat(&[1.0, 2.0], &[0.5, 1.0]).break_even(true), None);
    }
}
