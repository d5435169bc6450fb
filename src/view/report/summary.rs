//! The decision page's numbers, computed once from a finished [`ReportData`]: per scenario
//! what deferral saves and whether it pays, per query set the best scorer, across the run the
//! medians, what a miss costs, where deferral does not pay and the caveats. `index.md`'s
//! decision page (and so `index.html`) and `data/summary.json` are both written from this one
//! value. Field order is the JSON's key order.

use serde::Serialize;

use crate::eval::metrics::Metric;
use crate::experiment::report::ReportData;
use crate::number::round;
use crate::simulate::{Mode, RequestKind, ScenarioResult};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub run: Run,
    pub overall: Overall,
    pub scenarios: Vec<ScenarioSummary>,
    pub query_sets: Vec<QuerySetSummary>,
}

/// What every number of the page is counted and priced with.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    pub counter: String,
    pub tokenizer: String,
    /// The counter's stated error when it estimates (± percent), else null.
    pub counter_error_pct: Option<f64>,
    pub profile: String,
    pub settings: Vec<(String, String)>,
}

/// Across the scenarios: medians of the savings, the cost of a miss, where deferral does not
/// pay and the caveats that change the verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overall {
    pub scenarios: usize,
    /// Scenarios with a saving to compare (both modes fit the window).
    pub compared: usize,
    pub median_first_request_saved_tokens: Option<f64>,
    pub median_first_request_saved_pct: Option<f64>,
    pub median_conversation_saved_tokens: Option<f64>,
    pub median_conversation_saved_pct: Option<f64>,
    /// Dollars saved per 1,000 conversations, median over the scenarios.
    pub median_saved_usd_per_1000: Option<f64>,
    pub median_saved_usd_per_1000_cached: Option<f64>,
    pub miss_cost: Option<MissCost>,
    /// Scenarios whose deferred conversation takes more input tokens than eager.
    pub more_tokens_deferred: Vec<String>,
    /// Scenarios whose deferred conversation costs more with prompt caching.
    pub more_usd_cached_deferred: Vec<String>,
    /// The break-even grid's (tools, searches) pairs where deferral never pays with caching
    /// within the grid's turns.
    pub never_breaks_even_cached: Vec<BreakEvenCase>,
    pub break_even_turns: Option<usize>,
    /// Scenarios whose modes did unequal work (calls failed or were unavailable).
    pub unequal_work: Vec<String>,
    /// Scenarios with a request that does not fit the context window, with the mode.
    pub window_overflow: Vec<Overflow>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakEvenCase {
    pub tools: usize,
    pub searches: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Overflow {
    pub scenario: String,
    pub mode: String,
}

/// A miss is a search that did not return the tool: the agent searches again. Priced from the
/// retry requests of the deferred runs, or from the first searches when no search missed
/// (a retry is one more such request).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MissCost {
    /// `retry` or `search`: which requests the median is over.
    pub from: String,
    pub requests: usize,
    pub median_input_tokens: f64,
    pub median_usd_per_1000: f64,
    /// Misses and retries counted over the scenarios.
    pub misses: usize,
    pub retries: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioSummary {
    pub name: String,
    pub tool_count: usize,
    pub deferred_count: usize,
    pub first_request_tokens: Pair<usize>,
    pub first_request_saved_pct: Option<f64>,
    pub conversation_input_tokens: Pair<usize>,
    pub conversation_saved_pct: Option<f64>,
    pub usd_per_1000: Pair<f64>,
    pub usd_per_1000_cached: Pair<f64>,
    pub searches: usize,
    pub misses: usize,
    pub retries: usize,
    pub fits_window: Pair<bool>,
    /// Deferral takes fewer input tokens over the conversation and costs less with caching;
    /// null when no saving is claimed.
    pub pays: Option<bool>,
    pub caveats: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Pair<T> {
    pub eager: T,
    pub deferred: T,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuerySetSummary {
    pub set: String,
    pub catalog: String,
    pub queries: usize,
    pub tools: usize,
    pub best_scorer: Option<String>,
    pub metric: Option<String>,
    pub value: Option<f64>,
    pub ci95: Option<[f64; 2]>,
    pub mrr: Option<f64>,
    /// Measured on this machine, so shown on the page but kept out of `summary.json` (which
    /// stays the same bytes from run to run; the latencies are in `data/latency.json`).
    #[serde(skip)]
    pub latency_us: Option<LatencySummary>,
    pub scorers_skipped: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    pub p50: f64,
    pub p95: f64,
}

/// The median of `xs`, rounded to 2 decimals; `None` when empty.
fn median(mut xs: Vec<f64>) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let m = if n % 2 == 1 {
        xs[n / 2]
    } else {
        f64::midpoint(xs[n / 2 - 1], xs[n / 2])
    };
    Some(round(m, 2))
}

fn scenario(s: &ScenarioResult) -> ScenarioSummary {
    let (e, d, sv) = (&s.eager, &s.deferred, &s.savings);
    let pays = match (sv.total_input_pct, sv.cost_with_caching_pct) {
        (Some(t), Some(c)) => Some(t >= 0.0 && c >= 0.0),
        _ => None,
    };
    ScenarioSummary {
        name: s.name.clone(),
        tool_count: s.tool_count,
        deferred_count: s.deferred_count,
        first_request_tokens: Pair {
            eager: e.first_request_tokens,
            deferred: d.first_request_tokens,
        },
        first_request_saved_pct: sv.first_request_pct,
        conversation_input_tokens: Pair {
            eager: e.total_input_tokens,
            deferred: d.total_input_tokens,
        },
        conversation_saved_pct: sv.total_input_pct,
        usd_per_1000: Pair {
            eager: round(e.cost_usd.without_caching * 1000.0, 4),
            deferred: round(d.cost_usd.without_caching * 1000.0, 4),
        },
        usd_per_1000_cached: Pair {
            eager: round(e.cost_usd.with_caching * 1000.0, 4),
            deferred: round(d.cost_usd.with_caching * 1000.0, 4),
        },
        searches: d.counts.searches,
        misses: d.counts.misses,
        retries: d.counts.retries,
        fits_window: Pair {
            eager: e.fits_window,
            deferred: d.fits_window,
        },
        pays,
        caveats: sv.caveats.clone(),
    }
}

fn miss_cost(scenarios: &[ScenarioResult]) -> Option<MissCost> {
    let of = |kind: RequestKind| -> Vec<(f64, f64)> {
        scenarios
            .iter()
            .flat_map(|s| &s.requests)
            .filter(|r| r.mode == Mode::Deferred && r.kind == kind)
            .map(|r| (r.input_tokens as f64, r.cost_usd * 1000.0))
            .collect()
    };
    let (from, rows) = match of(RequestKind::Retry) {
        r if !r.is_empty() => ("retry", r),
        _ => ("search", of(RequestKind::Search)),
    };
    Some(MissCost {
        from: from.into(),
        requests: rows.len(),
        median_input_tokens: median(rows.iter().map(|r| r.0).collect())?,
        median_usd_per_1000: median(rows.iter().map(|r| r.1).collect())?,
        misses: scenarios.iter().map(|s| s.deferred.counts.misses).sum(),
        retries: scenarios.iter().map(|s| s.deferred.counts.retries).sum(),
    })
}

fn overall(data: &ReportData) -> Overall {
    let sc = &data.scenarios;
    let compared: Vec<&ScenarioResult> = sc
        .iter()
        .filter(|s| s.savings.total_input_pct.is_some())
        .collect();
    let med = |f: &dyn Fn(&ScenarioResult) -> Option<f64>| {
        median(compared.iter().filter_map(|s| f(s)).collect())
    };
    let saved_tokens = |e: usize, d: usize| e as f64 - d as f64;
    let names = |f: &dyn Fn(&ScenarioResult) -> bool| -> Vec<String> {
        sc.iter().filter(|s| f(s)).map(|s| s.name.clone()).collect()
    };
    let mut window_overflow = Vec::new();
    for s in sc {
        for (mode, m) in [("eager", &s.eager), ("deferred", &s.deferred)] {
            if !m.fits_window {
                window_overflow.push(Overflow {
                    scenario: s.name.clone(),
                    mode: mode.into(),
                });
            }
        }
    }
    let (never, turns) = match &data.deferral {
        Some(d) => (
            d.curves
                .iter()
                .filter(|c| c.break_even(true).is_none())
                .map(|c| BreakEvenCase {
                    tools: c.tools,
                    searches: c.searches,
                })
                .collect(),
            Some(d.settings.turns),
        ),
        None => (Vec::new(), None),
    };
    Overall {
        scenarios: sc.len(),
        compared: compared.len(),
        median_first_request_saved_tokens: med(&|s| {
            Some(saved_tokens(
                s.eager.first_request_tokens,
                s.deferred.first_request_tokens,
            ))
        }),
        median_first_request_saved_pct: med(&|s| s.savings.first_request_pct),
        median_conversation_saved_tokens: med(&|s| {
            Some(saved_tokens(
                s.eager.total_input_tokens,
                s.deferred.total_input_tokens,
            ))
        }),
        median_conversation_saved_pct: med(&|s| s.savings.total_input_pct),
        median_saved_usd_per_1000: med(&|s| {
            Some((s.eager.cost_usd.without_caching - s.deferred.cost_usd.without_caching) * 1000.0)
        }),
        median_saved_usd_per_1000_cached: med(&|s| {
            Some((s.eager.cost_usd.with_caching - s.deferred.cost_usd.with_caching) * 1000.0)
        }),
        miss_cost: miss_cost(sc),
        more_tokens_deferred: names(&|s| s.savings.total_input_pct.is_some_and(|p| p < 0.0)),
        more_usd_cached_deferred: names(&|s| {
            s.savings.cost_with_caching_pct.is_some_and(|p| p < 0.0)
        }),
        never_breaks_even_cached: never,
        break_even_turns: turns,
        unequal_work: names(&|s| {
            s.savings
                .caveats
                .iter()
                .any(|c| c.starts_with("unequal work"))
        }),
        window_overflow,
    }
}

fn query_set(data: &ReportData, set: &crate::experiment::eval::EvalSet) -> QuerySetSummary {
    let best = crate::view::eval::best_scorer(set);
    let best = best.as_ref().map(|(b, k)| (*b, k));
    let latency_us = best.and_then(|(b, _)| {
        data.latency
            .eval
            .iter()
            .find(|l| l.set == set.name() && l.scorer == b.scorer)
            .map(|l| LatencySummary {
                p50: l.latency_us.p50,
                p95: l.latency_us.p95,
            })
    });
    QuerySetSummary {
        set: set.name().to_string(),
        catalog: set.catalog.clone(),
        queries: set.result.query_count,
        tools: set.result.tool_count,
        best_scorer: best.map(|(b, _)| b.scorer.to_string()),
        metric: best.map(|(_, k)| k.to_string()),
        value: best.and_then(|(b, k)| b.metric(k)),
        ci95: best.and_then(|(b, k)| b.ci95.get(k).copied()),
        mrr: best.and_then(|(b, _)| b.metric(&Metric::Mrr)),
        latency_us,
        scorers_skipped: set.skipped.iter().map(|(s, _)| s.to_string()).collect(),
    }
}

/// The page's numbers from the report's result values.
pub fn summarize(data: &ReportData) -> Summary {
    let st = &data.settings;
    let profile = st
        .profile
        .iter()
        .find(|(k, _)| k == "name")
        .map_or_else(String::new, |(_, v)| v.clone());
    let mut settings = st.profile.clone();
    settings.extend(st.other.iter().cloned());
    Summary {
        run: Run {
            counter: st.counter.to_string(),
            tokenizer: st.tokenizer(),
            counter_error_pct: st.counter.error_pct(),
            profile,
            settings,
        },
        overall: overall(data),
        scenarios: data.scenarios.iter().map(scenario).collect(),
        query_sets: data.evals.iter().map(|s| query_set(data, s)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(vec![]), None);
    }
}
