//! The result of `toolbudget live`: one serializable type, of which the table, the json, the
//! CSVs and the report's accuracy section are views. Nothing here depends on the clock or the
//! host: a replay from the cassette gives the same bytes.

use serde::{Deserialize, Serialize};

use super::provider::{Provider, SearchSide};
use super::stats;
use crate::adoption::Adoption;
use crate::counter::CounterKind;
use crate::number::round;

/// How one turn ended, eager or deferred, against the scenario's `calls` (the labels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Every expected tool was called with valid arguments (a turn expecting none: no tool
    /// was called).
    #[default]
    Correct,
    /// Tools were called, but not every expected one (or one was called where none was due).
    WrongTool,
    /// No tool was called where one was expected.
    NoTool,
    /// Every expected tool was called, but some only with malformed arguments (not JSON, or
    /// against the schema).
    Malformed,
    /// The turn used every step `--max-steps` allows without answering: never correct, whatever
    /// it called on the way (a loop must not pass a turn that expects no tool).
    StepLimit,
    /// Every expected tool was called, but a trajectory assertion of the turn broke
    /// (`must_not_call`, `order`, `max_calls`, `no_duplicate_calls`).
    Trajectory,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Correct => "correct",
            Outcome::WrongTool => "wrong-tool",
            Outcome::NoTool => "no-tool",
            Outcome::Malformed => "malformed",
            Outcome::StepLimit => "step-limit",
            Outcome::Trajectory => "trajectory",
        }
    }
}

/// One played turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnRow {
    pub scenario: String,
    pub mode: String,
    pub run: u32,
    /// 1-based, over the turns played.
    pub turn: usize,
    /// Expected tool ids, space-separated.
    pub expected: String,
    /// Tools called with valid arguments, in call order, space-separated.
    pub called: String,
    pub outcome: Outcome,
    pub steps: usize,
    pub hit_step_limit: bool,
    /// Calls of the search tool (adoption's `searches`, [`crate::adoption`]).
    pub searches: usize,
    /// A search of this turn returned (loaded) an expected tool.
    pub search_found_expected: bool,
    /// Calls of a deferred tool that no earlier search of the conversation returned
    /// (adoption's `first_calls`): before it was loaded, answered with an error, or loaded
    /// only as another tool's `depends_on`.
    pub premature_calls: usize,
    /// Calls whose arguments were not JSON or broke the tool's schema.
    pub malformed_calls: usize,
    /// Calls to a name no tool has.
    pub unknown_calls: usize,
    /// The turn's broken trajectory assertions, space-separated (see [`Broken`]).
    pub trajectory: String,
    /// Adoption ([`crate::adoption`]): of `searches`, the `select:` ones, and those whose
    /// answer named no tool (a refused or malformed search included).
    #[serde(default)]
    pub select_searches: usize,
    #[serde(default)]
    pub empty_searches: usize,
    /// Calls of deferred tools; of them, calls of a tool an earlier search returned; of
    /// `premature_calls` (which came first), those answered with an error.
    #[serde(default)]
    pub deferred_calls: usize,
    #[serde(default)]
    pub found_calls: usize,
    #[serde(default)]
    pub failed_first_calls: usize,
}

impl TurnRow {
    /// The turn's adoption counts.
    pub fn adoption(&self) -> Adoption {
        Adoption {
            searches: self.searches,
            select_searches: self.select_searches,
            empty_searches: self.empty_searches,
            deferred_calls: self.deferred_calls,
            found_calls: self.found_calls,
            first_calls: self.premature_calls,
            failed_first_calls: self.failed_first_calls,
        }
    }

    /// Keeps the turn's adoption counts in its fields.
    pub fn set_adoption(&mut self, a: &Adoption) {
        self.searches = a.searches;
        self.select_searches = a.select_searches;
        self.empty_searches = a.empty_searches;
        self.deferred_calls = a.deferred_calls;
        self.found_calls = a.found_calls;
        self.premature_calls = a.first_calls;
        self.failed_first_calls = a.failed_first_calls;
    }
}

/// A trajectory assertion a turn broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Broken {
    /// A `must_not_call` tool was called.
    ForbiddenCall,
    /// `order: strict` and the expected tools were first called in another order.
    OutOfOrder,
    /// More tool calls than `max_calls` (searches not counted).
    OverMaxCalls,
    /// `no_duplicate_calls` and a tool was called twice with the same arguments.
    DuplicateCall,
}

impl Broken {
    pub const ALL: [Broken; 4] = [
        Broken::ForbiddenCall,
        Broken::OutOfOrder,
        Broken::OverMaxCalls,
        Broken::DuplicateCall,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Broken::ForbiddenCall => "forbidden-call",
            Broken::OutOfOrder => "out-of-order",
            Broken::OverMaxCalls => "over-max-calls",
            Broken::DuplicateCall => "duplicate-call",
        }
    }
}

/// One search of a turn and the tools it returned (client-side: toolbudget's scorer;
/// provider-side: what the provider loaded).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchRow {
    pub scenario: String,
    pub mode: String,
    pub run: u32,
    pub turn: usize,
    pub query: String,
    /// Tool ids returned, in rank order, space-separated.
    pub returned: String,
}

/// One request sent (or replayed).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestRow {
    pub scenario: String,
    pub mode: String,
    pub run: u32,
    pub turn: usize,
    /// 1-based step within the turn.
    pub step: usize,
    /// Function definitions sent in full (provider-side deferred ones not included).
    pub tools_sent: usize,
    /// The provider's `usage` for the request (billed input, cache included).
    pub billed_input_tokens: Option<u64>,
    /// toolbudget's count of the same request under the provider's counter.
    pub counted_input_tokens: u64,
    /// Of it, the deferred list in the system prompt, and that list at the model's input
    /// price (USD).
    #[serde(default)]
    pub deferred_list_tokens: u64,
    #[serde(default)]
    pub deferred_list_cost_usd: f64,
    pub billed_output_tokens: Option<u64>,
    /// Prompt tokens the provider read from its cache (`usage.prompt_tokens_details.
    /// cached_tokens`, Anthropic's cache reads; llama.cpp's `timings.cache_n`).
    pub cached_tokens: Option<u64>,
    /// llama.cpp's `timings` (absent elsewhere): prompt tokens evaluated (`prompt_n`) and
    /// their time (`prompt_ms`), tokens generated (`predicted_n`) and their time
    /// (`predicted_ms`).
    /// (Every row has every column: the CSV header comes from the default row.)
    #[serde(default)]
    pub prompt_evaluated_tokens: Option<u64>,
    #[serde(default)]
    pub prompt_ms: Option<f64>,
    #[serde(default)]
    pub generated_tokens: Option<u64>,
    #[serde(default)]
    pub generation_ms: Option<f64>,
    /// The simulator's model of a prefix cache (`simulate::cost::cached_prefix`) over this
    /// run's own requests: the prefix of `counted_input_tokens` it expects cached, and the part
    /// whose change cut it short (empty: none; a run's first request is cold).
    #[serde(default)]
    pub modeled_cached_tokens: u64,
    #[serde(default)]
    pub modeled_cache_break: String,
    pub latency_ms: f64,
    /// Names the model called, space-separated.
    pub calls: String,
    pub provider_searches: usize,
    pub stop: String,
}

/// One mode over every turn and run of a scenario (or of all of them).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeSummary {
    pub turns: usize,
    pub correct: usize,
    pub accuracy: f64,
    /// Wilson score 95% interval of `accuracy`.
    pub accuracy_low: f64,
    pub accuracy_high: f64,
    pub wrong_tool: usize,
    pub no_tool: usize,
    pub malformed: usize,
    /// Turns that used every step without answering (outcome `step-limit`).
    pub hit_step_limit: usize,
    /// Turns whose expected tools were all called but a trajectory assertion broke.
    pub trajectory: usize,
    /// Turns that broke each assertion (a turn can break several, and break one while also
    /// failing otherwise).
    pub forbidden_call: usize,
    pub out_of_order: usize,
    pub over_max_calls: usize,
    pub duplicate_call: usize,
    /// Calls of the search tool (`adoption.searches`).
    pub searches: usize,
    /// Turns in which the model searched at least once.
    pub turns_searched: usize,
    /// Turns in which a search returned an expected tool.
    pub turns_search_found_expected: usize,
    /// Calls of a deferred tool no earlier search returned (`adoption.first_calls`).
    pub premature_calls: usize,
    pub malformed_calls: usize,
    pub unknown_calls: usize,
    /// Adoption of the search tool by the one definition `session import` uses
    /// ([`crate::adoption`]), summed over the turns.
    #[serde(default)]
    pub adoption: Adoption,
    pub requests: usize,
    /// Requests whose answer reported no input usage.
    pub requests_without_usage: usize,
    pub billed_input_tokens: u64,
    /// toolbudget's count of the requests that reported usage.
    pub counted_input_tokens: u64,
    /// The deferred list over every request (counted), and its cost at the model's input price.
    #[serde(default)]
    pub deferred_list_tokens: u64,
    #[serde(default)]
    pub deferred_list_cost_usd: f64,
    pub billed_output_tokens: u64,
    /// billed / counted over the requests that reported usage.
    pub billed_over_counted: Option<f64>,
    pub latency_ms_p50: f64,
    pub latency_ms_p95: f64,
    pub latency_ms_total: f64,
    /// The provider's cache beside the simulator's model of it, when the provider reports
    /// cached tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheSummary>,
}

/// A mode's requests that reported cached tokens, each run's first request left out (the
/// model starts a run cold; a server may still hold the previous run's prompt).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheSummary {
    pub requests: usize,
    /// Billed prompt tokens, and those the provider read from its cache.
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub cached_share: f64,
    /// toolbudget's count of the same requests, and the prefix the model expects cached.
    pub modeled_prompt_tokens: u64,
    pub modeled_cached_tokens: u64,
    pub modeled_cached_share: f64,
    /// Requests that found less than the whole previous prompt in the cache: measured
    /// (`cached_tokens` below the previous request's billed prompt) and modeled (a
    /// `modeled_cache_break`), and requests where both agree (break or no break).
    pub breaks: usize,
    pub modeled_breaks: usize,
    pub agree: usize,
    /// llama.cpp's `timings` over every request of the mode (None: not reported).
    pub prompt_evaluated_tokens: Option<u64>,
    pub prompt_ms: Option<f64>,
    pub generation_ms: Option<f64>,
}

/// Whether each request found less than the whole previous prompt of its run (scenario, mode
/// and run) in the provider's cache; `None` for a run's first request or an unreported count.
pub fn measured_breaks(requests: &[&RequestRow]) -> Vec<Option<bool>> {
    let mut prev: Option<&RequestRow> = None;
    requests
        .iter()
        .map(|r| {
            let same_run = prev.is_some_and(|p| {
                (p.scenario.as_str(), p.mode.as_str(), p.run)
                    == (r.scenario.as_str(), r.mode.as_str(), r.run)
            });
            let before = prev
                .filter(|_| same_run)
                .and_then(|p| p.billed_input_tokens);
            prev = Some(r);
            Some(r.cached_tokens? < before?)
        })
        .collect()
}

fn cache_summary(requests: &[&RequestRow]) -> Option<CacheSummary> {
    let measured = measured_breaks(requests);
    let rows: Vec<(&RequestRow, bool)> = requests
        .iter()
        .zip(&measured)
        .filter_map(|(r, b)| Some((*r, (*b)?)))
        .filter(|(r, _)| r.billed_input_tokens.is_some())
        .collect();
    if rows.is_empty() {
        return None;
    }
    let sum = |f: &dyn Fn(&RequestRow) -> u64| saturating_sum(rows.iter().map(|(r, _)| f(r)));
    let share = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            round(a as f64 / b as f64, 4)
        }
    };
    let prompt = sum(&|r| r.billed_input_tokens.unwrap_or(0));
    let cached = sum(&|r| r.cached_tokens.unwrap_or(0));
    let modeled_prompt = sum(&|r| r.counted_input_tokens);
    let modeled = sum(&|r| r.modeled_cached_tokens);
    let opt_sum = |f: &dyn Fn(&RequestRow) -> Option<f64>| {
        let xs: Vec<f64> = requests.iter().filter_map(|r| f(r)).collect();
        (!xs.is_empty()).then(|| round(xs.iter().sum(), 1))
    };
    let evaluated: Vec<u64> = requests
        .iter()
        .filter_map(|r| r.prompt_evaluated_tokens)
        .collect();
    Some(CacheSummary {
        requests: rows.len(),
        prompt_tokens: prompt,
        cached_tokens: cached,
        cached_share: share(cached, prompt),
        modeled_prompt_tokens: modeled_prompt,
        modeled_cached_tokens: modeled,
        modeled_cached_share: share(modeled, modeled_prompt),
        breaks: rows.iter().filter(|(_, b)| *b).count(),
        modeled_breaks: rows
            .iter()
            .filter(|(r, _)| !r.modeled_cache_break.is_empty())
            .count(),
        agree: rows
            .iter()
            .filter(|(r, b)| *b != r.modeled_cache_break.is_empty())
            .count(),
        prompt_evaluated_tokens: (!evaluated.is_empty())
            .then(|| saturating_sum(evaluated.into_iter())),
        prompt_ms: opt_sum(&|r| r.prompt_ms),
        generation_ms: opt_sum(&|r| r.generation_ms),
    })
}

/// Eager against deferred on the same turns (same scenario, turn and run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Paired {
    pub pairs: usize,
    pub both_correct: usize,
    pub eager_only: usize,
    pub deferred_only: usize,
    pub neither: usize,
    /// Exact McNemar (two-sided binomial on `eager_only` vs `deferred_only`).
    pub p_value: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioLive {
    pub name: String,
    /// The client-side scorer (or the provider's search it stands for).
    pub scorer: String,
    pub tools: usize,
    /// Tools the deferred mode deferred (0: it behaved eagerly).
    pub deferred_tools: usize,
    pub eager: ModeSummary,
    pub deferred: ModeSummary,
    pub paired: Paired,
    /// What the live loop did not play (subagents, turns given only as token counts).
    pub notes: Vec<String>,
    /// Over repeated runs (`--repeat` ≥ 2), per mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
    pub turns: Vec<TurnRow>,
    pub requests: Vec<RequestRow>,
    #[serde(default)]
    pub searches: Vec<SearchRow>,
}

/// Both modes over repeated runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    pub eager: super::repeats::Stability,
    pub deferred: super::repeats::Stability,
    /// Per turn: how many runs each mode got right.
    pub turns: Vec<super::repeats::TurnPasses>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveResult {
    pub provider: Provider,
    pub model: String,
    pub search: SearchSide,
    /// The counter of the `counted` columns.
    pub counter: CounterKind,
    pub repeat: u32,
    pub max_steps: usize,
    pub seed: u64,
    pub temperature: Option<f64>,
    pub interval: String,
    pub paired_test: String,
    pub scenarios: Vec<ScenarioLive>,
    pub eager: ModeSummary,
    pub deferred: ModeSummary,
    pub paired: Paired,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Repeats>,
}

/// Several models of one run (`live --model A,B`), each its own result, in the order given:
/// what `live.json` and `--format json` hold then (one model: its [`LiveResult`] alone).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveModels {
    pub models: Vec<LiveResult>,
}

pub const INTERVAL: &str = "Wilson score interval, 95%, per turn and run";
pub const PAIRED_TEST: &str =
    "exact McNemar: two-sided binomial test on the turns only one mode got right";

/// Sums one mode's rows.
pub fn summarize(turns: &[&TurnRow], requests: &[&RequestRow]) -> ModeSummary {
    let count = |o: Outcome| turns.iter().filter(|t| t.outcome == o).count();
    let broke = |b: Broken| {
        turns
            .iter()
            .filter(|t| t.trajectory.split(' ').any(|k| k == b.name()))
            .count()
    };
    let correct = count(Outcome::Correct);
    let (low, high) = stats::wilson(correct, turns.len()).unwrap_or((0.0, 0.0));
    let with_usage: Vec<&&RequestRow> = requests
        .iter()
        .filter(|r| r.billed_input_tokens.is_some())
        .collect();
    let billed = saturating_sum(with_usage.iter().filter_map(|r| r.billed_input_tokens));
    let counted = saturating_sum(with_usage.iter().map(|r| r.counted_input_tokens));
    let latencies: Vec<f64> = requests.iter().map(|r| r.latency_ms).collect();
    let mut adoption = Adoption::default();
    for t in turns {
        adoption.add(&t.adoption());
    }
    ModeSummary {
        turns: turns.len(),
        correct,
        accuracy: if turns.is_empty() {
            0.0
        } else {
            round(correct as f64 / turns.len() as f64, 4)
        },
        accuracy_low: round(low, 4),
        accuracy_high: round(high, 4),
        wrong_tool: count(Outcome::WrongTool),
        no_tool: count(Outcome::NoTool),
        malformed: count(Outcome::Malformed),
        hit_step_limit: count(Outcome::StepLimit),
        trajectory: count(Outcome::Trajectory),
        forbidden_call: broke(Broken::ForbiddenCall),
        out_of_order: broke(Broken::OutOfOrder),
        over_max_calls: broke(Broken::OverMaxCalls),
        duplicate_call: broke(Broken::DuplicateCall),
        searches: adoption.searches,
        turns_searched: turns.iter().filter(|t| t.searches > 0).count(),
        turns_search_found_expected: turns.iter().filter(|t| t.search_found_expected).count(),
        premature_calls: adoption.first_calls,
        malformed_calls: turns.iter().map(|t| t.malformed_calls).sum(),
        unknown_calls: turns.iter().map(|t| t.unknown_calls).sum(),
        adoption,
        requests: requests.len(),
        requests_without_usage: requests.len() - with_usage.len(),
        billed_input_tokens: billed,
        counted_input_tokens: counted,
        deferred_list_tokens: saturating_sum(requests.iter().map(|r| r.deferred_list_tokens)),
        deferred_list_cost_usd: round(requests.iter().map(|r| r.deferred_list_cost_usd).sum(), 6),
        billed_output_tokens: saturating_sum(
            requests.iter().filter_map(|r| r.billed_output_tokens),
        ),
        billed_over_counted: (counted > 0).then(|| round(billed as f64 / counted as f64, 4)),
        latency_ms_p50: stats::percentile(&latencies, 50.0),
        latency_ms_p95: stats::percentile(&latencies, 95.0),
        latency_ms_total: round(latencies.iter().sum(), 1),
        cache: cache_summary(requests),
    }
}

/// Pairs eager and deferred turns by (scenario, run, turn).
pub fn pair(turns: &[&TurnRow]) -> Paired {
    let mut p = Paired::default();
    let deferred: std::collections::HashMap<(&str, u32, usize), &TurnRow> = turns
        .iter()
        .rev()
        .filter(|t| t.mode == "deferred")
        .map(|t| ((t.scenario.as_str(), t.run, t.turn), *t))
        .collect();
    for e in turns.iter().filter(|t| t.mode == "eager") {
        let Some(d) = deferred.get(&(e.scenario.as_str(), e.run, e.turn)) else {
            continue;
        };
        p.pairs += 1;
        match (e.outcome == Outcome::Correct, d.outcome == Outcome::Correct) {
            (true, true) => p.both_correct += 1,
            (true, false) => p.eager_only += 1,
            (false, true) => p.deferred_only += 1,
            (false, false) => p.neither += 1,
        }
    }
    p.p_value = round(stats::mcnemar_exact(p.eager_only, p.deferred_only), 6);
    p
}

/// Both modes' summaries and the paired test of a set of rows.
pub fn modes(turns: &[TurnRow], requests: &[RequestRow]) -> (ModeSummary, ModeSummary, Paired) {
    let of = |mode: &str| {
        let t: Vec<&TurnRow> = turns.iter().filter(|t| t.mode == mode).collect();
        let r: Vec<&RequestRow> = requests.iter().filter(|r| r.mode == mode).collect();
        summarize(&t, &r)
    };
    let all: Vec<&TurnRow> = turns.iter().collect();
    (of("eager"), of("deferred"), pair(&all))
}

/// A sum of token counts that stops at `u64::MAX` instead of overflowing (each count is at
/// most `MAX_USAGE_TOKENS`, so no real run comes near it).
fn saturating_sum(xs: impl Iterator<Item = u64>) -> u64 {
    xs.fold(0, u64::saturating_add)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(
        run: u32,
        billed: u64,
        cached: u64,
        counted: u64,
        modeled: u64,
        brk: &str,
    ) -> RequestRow {
        RequestRow {
            scenario: "s".into(),
            mode: "deferred".into(),
            run,
            billed_input_tokens: Some(billed),
            cached_tokens: Some(cached),
            counted_input_tokens: counted,
            modeled_cached_tokens: modeled,
            modeled_cache_break: brk.into(),
            prompt_ms: Some(10.0),
            ..RequestRow::default()
        }
    }

    #[test]
    fn the_measured_cache_stands_beside_the_modeled_one_each_runs_first_request_apart() {
        // Run 0: cold, appended to (both keep it), a reveal (both break); run 1 starts apart
        // although the server still held run 0's prompt.
        let rows = [
            req(0, 500, 21, 400, 0, ""),
            req(0, 647, 357, 520, 0, "tools"),
            req(0, 714, 650, 580, 520, ""),
            req(1, 500, 499, 400, 0, ""),
            req(1, 630, 500, 510, 400, ""),
        ];
        let refs: Vec<&RequestRow> = rows.iter().collect();
        assert_eq!(
            measured_breaks(&refs),
            [None, Some(true), Some(false), None, Some(false)]
        );
        let c = cache_summary(&refs).unwrap();
        assert_eq!(
            (c.requests, c.prompt_tokens, c.cached_tokens),
            (3, 1991, 1507)
        );
        assert_eq!(
            (c.modeled_prompt_tokens, c.modeled_cached_tokens),
            (1610, 920)
        );
        assert_eq!((c.breaks, c.modeled_breaks, c.agree), (1, 1, 3));
        assert_eq!(c.prompt_ms, Some(50.0));
        // A provider that reports no cache gets no cache summary.
        let mut silent = rows.clone();
        for r in &mut silent {
            r.cached_tokens = None;
        }
        let refs: Vec<&RequestRow> = silent.iter().collect();
        assert_eq!(cache_summary(&refs), None);
    }
}
