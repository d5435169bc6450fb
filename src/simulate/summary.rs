//! Turns two finished replays into a `ScenarioResult` (sums, savings, settings).

use super::Prepared;
use super::replay::Run;
use super::request::Parts;
use super::result::{
    Cost, Latency, ModeResult, PublishedComparison, ScenarioResult, Settings, round, savings_pct,
};
use super::scenario::{Discovery, ListStyle, Listing, RetryStep, Reveal, Scenario, When};

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

pub(crate) fn mode_result(run: &Run<'_>) -> ModeResult {
    let rows = &run.rows;
    let c = &run.counters;
    let mut parts = Parts::default();
    let (mut output, mut cached, mut cost, mut cost_c, mut total_ms) = (0, 0, 0.0, 0.0, 0.0);
    let mut peak: f64 = 0.0;
    let mut headroom = i64::MAX;
    for r in rows {
        parts.add(&r.parts);
        output += r.output_tokens;
        cached += r.cached_tokens;
        cost += r.cost_usd;
        cost_c += r.cost_cached_usd;
        total_ms += r.duration_ms;
        peak = peak.max(r.occupancy_pct);
        headroom = headroom.min(r.headroom_tokens);
    }
    let total = parts.total();
    let first_row = rows.iter().find(|r| r.agent == 0);
    let first = first_row.map_or(0, |r| r.input_tokens);
    let first_tools = first_row.map_or(0, |r| r.parts.tools + r.parts.deferred_list);
    ModeResult {
        first_request_tokens: first,
        total_input_tokens: total,
        requests: rows.len(),
        searches: c.searches,
        misses: c.misses,
        retries: c.retries,
        retry_input_tokens: c.retry_input_tokens,
        premature_calls: c.premature_calls,
        failed_calls: c.failed_calls,
        unavailable_calls: c.unavailable_calls,
        tool_calls: c.tool_calls,
        turns: c.turns,
        subagent_requests: c.subagent_requests,
        output_tokens: output,
        cached_input_tokens: cached,
        mean_request_tokens: if rows.is_empty() {
            0.0
        } else {
            round(total as f64 / rows.len() as f64, 2)
        },
        first_request_tool_tokens: first_tools,
        parts,
        cost_usd: Cost {
            without_caching: round(cost, 6),
            with_caching: round(cost_c, 6),
        },
        latency_ms: Latency {
            total: round(total_ms, 1),
            first_ttft: round(rows.first().map_or(0.0, |r| r.ttft_ms), 1),
            mean_turn_ttft: round(mean(&c.turn_ttft_ms), 1),
            mean_turn: round(mean(&c.turn_ms), 1),
        },
        peak_occupancy_pct: round(peak, 2),
        min_headroom_tokens: if rows.is_empty() { 0 } else { headroom },
    }
}

fn settings(sc: &Scenario, prep: &Prepared, deferring: bool) -> Settings {
    let d = &sc.deferred;
    Settings {
        counter: prep.counter.name().into(),
        tokenizer: prep.counter.tokenizer_label().into(),
        render: prep.tokens.render.name().into(),
        profile: sc.profile.name.clone(),
        scorer: d.scorer.name().into(),
        when: match d.when {
            When::Always => "always".into(),
            When::Auto(n) => format!("auto:{n}"),
        },
        deferring,
        discovery: match d.discovery {
            Discovery::ModelSearch => "model-search",
            Discovery::Select => "select",
            Discovery::AutoRetrieve => "auto-retrieve",
        }
        .into(),
        listing: match d.listing {
            Listing::Names => "names",
            Listing::Descriptions => "descriptions",
            Listing::Servers => "servers",
        }
        .into(),
        list_style: match d.list_style {
            ListStyle::List => "list",
            ListStyle::Delta => "delta",
        }
        .into(),
        reveal: match d.reveal {
            Reveal::Append => "append",
            Reveal::ToolsList => "tools-list",
        }
        .into(),
        max_results: d.max_results,
        retry: d
            .retry
            .iter()
            .map(|s| match s {
                RetryStep::Rephrase => "rephrase".to_string(),
                RetryStep::Select => "select".to_string(),
            })
            .collect(),
        search_tool_tokens: prep.search_tool_tokens,
        search_tool_from_catalog: prep.plan.search_tool.is_some(),
        search_tool_source: prep.search_tool_source.clone(),
        counter_error_pct: prep.counter.error_pct(),
        tool_choice: sc.tool_choice.name().into(),
        search_latency_ms: sc.profile.search_latency_ms,
    }
}

pub(crate) fn summarize(
    sc: &Scenario,
    prep: &Prepared,
    eager: Run<'_>,
    deferred: Run<'_>,
) -> ScenarioResult {
    let e = mode_result(&eager);
    let d = mode_result(&deferred);
    let deferring = deferred.deferring;
    let deferred_count = if deferring {
        prep.plan.deferrable.iter().filter(|&&b| b).count()
    } else {
        0
    };
    let published = sc
        .published
        .iter()
        .map(|p| {
            let pick = |m: &ModeResult| match p.metric.as_str() {
                "mean_request_tokens" => m.mean_request_tokens,
                "first_request_tool_tokens" => m.first_request_tool_tokens as f64,
                _ => m.first_request_tokens as f64,
            };
            PublishedComparison {
                published: p.clone(),
                measured_eager_tokens: pick(&e),
                measured_deferred_tokens: pick(&d),
            }
        })
        .collect();
    let mut requests = eager.rows;
    requests.extend(deferred.rows);
    for r in &mut requests {
        r.cost_usd = round(r.cost_usd, 8);
        r.cost_cached_usd = round(r.cost_cached_usd, 8);
        r.ttft_ms = round(r.ttft_ms, 1);
        r.duration_ms = round(r.duration_ms, 1);
        r.occupancy_pct = round(r.occupancy_pct, 2);
    }
    ScenarioResult {
        name: sc.name.clone(),
        counter: prep.counter.name().into(),
        tokenizer: prep.counter.tokenizer_label().into(),
        tool_count: prep.catalog.len() - usize::from(prep.plan.search_tool.is_some()),
        deferred_count,
        savings: super::result::Savings {
            first_request_pct: savings_pct(
                e.first_request_tokens as f64,
                d.first_request_tokens as f64,
            ),
            total_input_pct: savings_pct(e.total_input_tokens as f64, d.total_input_tokens as f64),
            cost_without_caching_pct: savings_pct(
                e.cost_usd.without_caching,
                d.cost_usd.without_caching,
            ),
            cost_with_caching_pct: savings_pct(e.cost_usd.with_caching, d.cost_usd.with_caching),
        },
        eager: e,
        deferred: d,
        description: sc.description.clone(),
        settings: settings(sc, prep, deferring),
        model: sc.profile.clone(),
        published,
        requests,
    }
}
