//! Turns two finished replays into a `ScenarioResult` (sums, savings, settings).

use super::Prepared;
use super::replay::Run;
use super::request::Parts;
use super::result::{
    Cost, Latency, ModeResult, Savings, ScenarioResult, SearchLatencySource, Settings, savings_pct,
};
use super::scenario::Scenario;
use crate::counter::CounterNames;
use crate::number::{int, percent, round};
use crate::search::ScorerName;
use crate::timing::LatencyUs;

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

pub(crate) fn mode_result(run: &Run<'_>) -> ModeResult {
    let rows = &run.rows;
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
    // The prompt the first request was sent with: a hosted search its response ran is billed
    // with it (total_input_tokens) but is not part of what was sent.
    let first = first_row.map_or(0, |r| r.as_sent().input_tokens);
    let first_tools = first_row.map_or(0, |r| r.parts.tools + r.parts.deferred_list);
    let overflow_requests = rows.iter().filter(|r| !r.fits_window).count();
    ModeResult {
        first_request_tokens: first,
        total_input_tokens: total,
        requests: rows.len(),
        counts: run.counts.clone(),
        tools_sent: first_row.map_or(0, |r| r.tools_sent),
        output_tokens: output,
        cached_input_tokens: cached,
        mean_request_tokens: if rows.is_empty() {
            0.0
        } else {
            round(total as f64 / rows.len() as f64, 2)
        },
        first_request_tool_tokens: first_tools,
        first_request_deferred_list_tokens: first_row.map_or(0, |r| r.parts.deferred_list),
        deferred_list_cost_usd: 0.0,
        parts,
        cost_usd: Cost {
            without_caching: round(cost, 6),
            with_caching: round(cost_c, 6),
        },
        latency_ms: Latency {
            total: round(total_ms, 1),
            first_ttft: round(rows.first().map_or(0.0, |r| r.ttft_ms), 1),
            mean_turn_ttft: round(mean(&run.turn_ttft_ms), 1),
            mean_turn: round(mean(&run.turn_ms), 1),
        },
        peak_occupancy_pct: round(peak, 2),
        min_headroom_tokens: if rows.is_empty() { 0 } else { headroom },
        fits_window: overflow_requests == 0,
        overflow_requests,
        cache_invalidations: super::result::Invalidations {
            cost_usd: round(run.invalidations.cost_usd, 6),
            ..run.invalidations.clone()
        },
        // Only searches sent are measured: eager sends none.
        measured_search_us: (!run.search_times.is_empty())
            .then(|| LatencyUs::of(&run.search_times)),
    }
}

/// Savings of deferred over eager, or none when a mode cannot be sent (a request overflows
/// the window), with what must be read beside them.
pub(crate) fn savings(e: &ModeResult, d: &ModeResult, window: usize) -> Savings {
    let mut caveats = Vec::new();
    for (name, m) in [("eager", e), ("deferred", d)] {
        if !m.fits_window {
            let worst = window as i64 - m.min_headroom_tokens;
            caveats.push(format!(
                "{name} does not fit: {} of a {} window (largest request, input and output; {} of \
                 {} requests overflow), so no saving is claimed",
                percent(worst as f64 / window as f64 * 100.0, 0),
                int(window),
                m.overflow_requests,
                m.requests
            ));
        }
    }
    let fits = e.fits_window && d.fits_window;
    if e.counts.tool_calls != d.counts.tool_calls {
        caveats.push(format!(
            "unequal work: tool calls made, eager {} and deferred {} (deferred: {} failed, no \
             search found the tool; {} unavailable), so the totals are not the same conversation",
            e.counts.tool_calls,
            d.counts.tool_calls,
            d.counts.failed_calls,
            d.counts.unavailable_calls
        ));
    }
    let pct = |a: f64, b: f64| fits.then(|| savings_pct(a, b));
    Savings {
        first_request_pct: pct(e.first_request_tokens as f64, d.first_request_tokens as f64),
        total_input_pct: pct(e.total_input_tokens as f64, d.total_input_tokens as f64),
        cost_without_caching_pct: pct(e.cost_usd.without_caching, d.cost_usd.without_caching),
        cost_with_caching_pct: pct(e.cost_usd.with_caching, d.cost_usd.with_caching),
        caveats,
    }
}

fn settings(
    sc: &Scenario,
    prep: &Prepared,
    deferring: bool,
    search_latency: SearchLatencySource,
) -> Settings {
    let d = &sc.deferred;
    Settings {
        counter: CounterNames(prep.counter),
        profile: sc.profile.name.clone(),
        client: sc.client,
        call_bridge: d.call_bridge,
        scorer: ScorerName::new(&prep.scorer.name()),
        when: d.when,
        deferring,
        discovery: d.discovery,
        listing: d.listing,
        list_style: d.list_style,
        reveal: d.reveal,
        max_results: d.max_results,
        retry: d.retry.clone(),
        search_tool: prep.search_tool_name.clone(),
        search_tool_tokens: prep.search_tool_tokens,
        search_tool_from_catalog: prep.plan.search_tool.is_some(),
        search_tool_source: prep.search_tool_source.to_string(),
        counter_error_pct: prep.counter.error_pct(),
        tool_choice: sc.tool_choice,
        search_latency,
        search_latency_ms: (search_latency == SearchLatencySource::Modeled)
            .then_some(sc.profile.search_latency_ms),
        scorer_settings: prep.scorer.settings().into_iter().collect(),
    }
}

pub(crate) fn summarize(
    sc: &Scenario,
    prep: &Prepared,
    eager: Run<'_>,
    deferred: Run<'_>,
) -> ScenarioResult {
    let mut e = mode_result(&eager);
    let mut d = mode_result(&deferred);
    for m in [&mut e, &mut d] {
        m.deferred_list_cost_usd = round(
            m.parts.deferred_list as f64 * sc.profile.input_per_mtok / 1e6,
            6,
        );
    }
    let deferring = deferred.deferring;
    let deferred_count = if deferring {
        prep.plan.deferrable.iter().filter(|&&b| b).count()
    } else {
        0
    };
    let search_latency = if deferred.timing_is_measured() {
        SearchLatencySource::Measured
    } else {
        SearchLatencySource::Modeled
    };
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
        counter: CounterNames(prep.counter),
        tool_count: prep.catalog.len(),
        deferred_count,
        savings: savings(&e, &d, sc.profile.context_window),
        // Filled by `published::compare`, which needs to build scorers for its variants.
        published: Vec::new(),
        eager: e,
        deferred: d,
        description: sc.description.clone(),
        settings: settings(sc, prep, deferring, search_latency),
        model: sc.profile.clone(),
        // Filled by `experiment::simulate::scenario`, which holds the file.
        calibration: None,
        requests,
    }
}
