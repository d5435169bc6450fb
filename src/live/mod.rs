//! `toolbudget live`: the model in the loop. Plays each scenario's user turns against a real
//! model endpoint, eager and deferred, and measures whether the expected tools were called,
//! how the model searched, what the provider billed beside toolbudget's count of the same
//! request, and how long each request took. Every exchange is kept in a cassette, so a
//! recorded run replays offline byte for byte.
//!
//! - [`conversation`]: the provider-neutral messages, functions and replies;
//! - [`openai_chat`], [`openai_responses`], [`anthropic`]: each provider's body and answer;
//! - [`provider`]: which shape, path, key and counter; where the search runs;
//! - [`endpoint`]: the cassette, then the network (injected transport, retries);
//! - [`cassette`]: the recorded exchanges, keyed by the canonical request;
//! - [`agent`]: the turn loop; [`arguments`]: the schema check of a call;
//! - [`result`], [`stats`]: the rows, summaries, Wilson intervals and the exact McNemar test;
//! - [`repeats`]: pass rate, pass^k, pass@k and flips over `--repeat` runs.

pub mod agent;
pub mod anthropic;
pub mod arguments;
pub mod cassette;
pub mod conversation;
pub mod endpoint;
pub mod openai_chat;
pub mod openai_responses;
pub mod provider;
pub mod repeats;
pub mod result;
pub mod stats;

pub use agent::Settings;
pub use endpoint::{Endpoint, LiveError};
pub use provider::{Provider, SearchSide};
pub use result::{LiveModels, LiveResult, ScenarioLive};

use crate::simulate::{Mode, Prepared, Scenario};

/// Plays one scenario eager and deferred, `repeat` times each (run by run, eager first).
pub fn run_scenario(
    sc: &Scenario,
    prep: &Prepared,
    st: &Settings,
    ep: &mut Endpoint,
) -> Result<ScenarioLive, LiveError> {
    let mut turns = Vec::new();
    let mut requests = Vec::new();
    let mut searches = Vec::new();
    let mut notes: Vec<String> = Vec::new();
    for run in 0..st.repeat.max(1) {
        for mode in [Mode::Eager, Mode::Deferred] {
            let played = agent::play(sc, prep, st, ep, mode, run)?;
            turns.extend(played.turns);
            requests.extend(played.requests);
            searches.extend(played.searches);
            for n in played.notes {
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
    }
    let deferring = agent::decides_to_defer(sc, prep);
    let deferred_tools = if deferring {
        (0..prep.catalog().len())
            .filter(|&i| prep.plan.deferrable[i] && Some(i) != prep.plan.search_tool)
            .count()
    } else {
        0
    };
    if !deferring {
        notes.push("nothing was deferred: the deferred mode played eagerly".into());
    }
    let (eager, deferred, paired) = result::modes(&turns, &requests);
    let repeats = repeats::repeats(st.repeat.max(1), &turns, &searches);
    let scorer = match (st.search, ep.provider.provider_search(&sc.deferred.scorer)) {
        (SearchSide::Provider, Some(s)) => format!("provider ({s:?})"),
        _ => prep.scorer().name(),
    };
    Ok(ScenarioLive {
        name: sc.name.clone(),
        scorer,
        tools: prep.catalog().len() - usize::from(prep.plan.search_tool.is_some()),
        deferred_tools,
        eager,
        deferred,
        paired,
        notes,
        repeats,
        turns,
        requests,
        searches,
    })
}

/// The whole run's result, totals over every scenario.
pub fn finish(
    provider: Provider,
    counter: crate::counter::CounterKind,
    st: &Settings,
    scenarios: Vec<ScenarioLive>,
) -> LiveResult {
    let turns: Vec<result::TurnRow> = scenarios.iter().flat_map(|s| s.turns.clone()).collect();
    let requests: Vec<result::RequestRow> =
        scenarios.iter().flat_map(|s| s.requests.clone()).collect();
    let searches: Vec<result::SearchRow> =
        scenarios.iter().flat_map(|s| s.searches.clone()).collect();
    let (eager, deferred, paired) = result::modes(&turns, &requests);
    let repeats = repeats::repeats(st.repeat.max(1), &turns, &searches);
    LiveResult {
        provider,
        model: st.model.clone(),
        search: st.search,
        counter,
        repeat: st.repeat.max(1),
        max_steps: st.max_steps,
        seed: st.seed,
        temperature: st.temperature,
        interval: result::INTERVAL.into(),
        paired_test: result::PAIRED_TEST.into(),
        scenarios,
        eager,
        deferred,
        paired,
        repeats,
    }
}
