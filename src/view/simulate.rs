//! The views of a simulation: `simulate`'s table, Markdown, CSV and json of a
//! [`SimulationResult`], and the report's scenario sections, all from the same
//! [`ScenarioResult`]s. The eager-vs-deferred table ([`mode_rows`]) is one view shared by both;
//! the CSV rows ([`ScenarioCsvRow`], [`RequestCsvRow`]) are `simulate --format csv`'s and the
//! report's `data/scenarios.csv` and `data/requests.csv`.

use crate::output::{md_code, md_text};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::number::{fixed1, int, percent, usd};
use crate::output::{Format, csv_rows, md_table, serde_table, table_for, to_json};
use crate::simulate::request::RequestRow;
use crate::simulate::result::{
    Invalidations, SearchLatencySource, Settings, SimulationResult, savings_pct,
};
use crate::simulate::scenario::When;
use crate::simulate::{ModeResult, ScenarioResult};
use crate::view::report::figures::{self, Figure, Section};

/// Renders the result; pure.
pub fn render(result: &SimulationResult, format: Format, per_request: bool) -> String {
    match format {
        Format::Json => to_json(result),
        Format::Csv if per_request => csv_rows(&request_rows(&result.scenarios)),
        Format::Csv => csv_rows(&scenario_rows(&result.scenarios)),
        Format::Table | Format::Md => {
            let md = format == Format::Md;
            let mut out = String::new();
            for s in &result.scenarios {
                out.push_str(&scenario_text(s, md));
                if per_request {
                    out.push('\n');
                    out.push_str(&requests_table(s, md));
                }
                out.push('\n');
            }
            out
        }
    }
}

/// The per-request table: the request CSV's columns after `scenario`.
fn requests_table(s: &ScenarioResult, md: bool) -> String {
    let (header, rows) = serde_table(&request_rows(std::slice::from_ref(s)));
    let rows: Vec<Vec<String>> = rows.into_iter().map(|r| r[1..].to_vec()).collect();
    let names: Vec<&str> = header[1..].iter().map(String::as_str).collect();
    let right: Vec<bool> = names
        .iter()
        .map(|c| !matches!(*c, "mode" | "kind" | "tool" | "fits_window"))
        .collect();
    table_for(if md { Format::Md } else { Format::Table })(&names, &rows, &right)
}

fn scenario_text(s: &ScenarioResult, md: bool) -> String {
    let mut out = if md {
        format!("### {}\n\n", md_text(&s.name))
    } else {
        format!("== {} ==\n", s.name)
    };
    if let Some(desc) = &s.description {
        out.push_str(desc.trim());
        out.push_str(if md { "\n\n" } else { "\n" });
    }
    out.push_str(&settings_line(s));
    if md {
        out.push('\n');
    }
    out.push_str(&table_for(if md { Format::Md } else { Format::Table })(
        &["", "eager", "deferred", "saved"],
        &mode_rows(s),
        &[false, true, true, true],
    ));
    if md {
        out.push('\n');
    }
    for caveat in &s.savings.caveats {
        out.push_str(&format!("* {caveat}\n"));
    }
    out.push_str(&crate::view::published::text(s, md));
    out.push_str(&latency_line(s));
    out
}

fn settings_line(s: &ScenarioResult) -> String {
    let st = &s.settings;
    let tools = if st.search_tool_from_catalog {
        format!(
            "{} tools ({} is the search tool)",
            s.tool_count, st.search_tool
        )
    } else {
        format!(
            "{} tools (+ the search tool {})",
            s.tool_count, st.search_tool
        )
    };
    let when = if st.deferring {
        format!("when {}", st.when)
    } else {
        format!("when {}: not deferring", st.when)
    };
    format!(
        "{tools}, {} deferred ({when}); counter {}{} ({}, {} rendering), profile {}{}, scorer {}, \
         discovery {}, listing {}/{}, reveal {}, max_results {}, retry [{}]\n",
        s.deferred_count,
        st.counter.0,
        crate::view::count::error_note(st.counter_error_pct),
        st.counter.0.tokenizer_label(),
        st.counter.0.render_name(),
        st.profile,
        if s.model.source.is_empty() {
            String::new()
        } else {
            format!(" (prices: {})", s.model.source)
        },
        st.scorer,
        st.discovery,
        st.listing,
        st.list_style,
        st.reveal,
        st.max_results,
        retry_names(st)
    )
}

/// The retry steps as a scenario writes them: `rephrase, select`.
fn retry_names(st: &Settings) -> String {
    let names: Vec<&str> = st.retry.iter().map(|r| r.name()).collect();
    names.join(", ")
}

/// Which search latency the latency rows use, and the measurement when there is one.
fn latency_line(s: &ScenarioResult) -> String {
    let st = &s.settings;
    match (st.search_latency, s.deferred.measured_search_us) {
        (SearchLatencySource::Measured, Some(m)) if m.searches > 0 => format!(
            "search latency: measured here ({} scorer, the {} the deferred replay sent, \
             select: and retries included): p50 {:.1} µs, p95 {:.1} µs, max {:.1} µs; the \
             latency rows use it\n",
            st.scorer,
            if m.searches == 1 {
                "1 search".to_string()
            } else {
                format!("{} searches", m.searches)
            },
            m.p50,
            m.p95,
            m.max
        ),
        (SearchLatencySource::Measured, _) => {
            "search latency: measured, but the deferred replay sent no search\n".to_string()
        }
        (SearchLatencySource::Modeled, _) => format!(
            "search latency: modeled, {} ms per search (profile; --search-latency measured \
             times the real scorer)\n",
            st.search_latency_ms.unwrap_or(s.model.search_latency_ms)
        ),
    }
}

/// A saving as the report prints it: `n/a` when the result has none, marked `*` when a
/// caveat goes with it (listed under the table).
pub fn saved(s: &ScenarioResult, x: Option<f64>) -> String {
    match x {
        None => "n/a*".to_string(),
        Some(v) if !s.savings.caveats.is_empty() => format!("{}*", percent(v, 1)),
        Some(v) => percent(v, 1),
    }
}

/// Peak occupancy of the context window, marked when a request does not fit.
fn window_use(m: &ModeResult) -> String {
    if m.fits_window {
        percent(m.peak_occupancy_pct, 1)
    } else {
        format!("{} (does not fit)", percent(m.peak_occupancy_pct, 1))
    }
}

fn failed_premature_unavailable(m: &ModeResult) -> String {
    format!(
        "{} / {} / {}",
        int(m.counts.failed_calls),
        int(m.counts.premature_calls),
        int(m.counts.unavailable_calls)
    )
}

/// The answer to "do deferred tools that are never loaded cost anything?", from the
/// scenarios that defer: the list's range per first request, its share of the deferred
/// run's input, and its cost per 1,000 conversations. Empty when none defers.
pub fn never_loaded_sentence(scenarios: &[ScenarioResult]) -> String {
    let listing: Vec<&ScenarioResult> = scenarios
        .iter()
        .filter(|s| s.deferred_count > 0 && s.deferred.parts.deferred_list > 0)
        .collect();
    if listing.is_empty() {
        return String::new();
    }
    let range = |f: &dyn Fn(&ScenarioResult) -> f64| {
        let xs: Vec<f64> = listing.iter().map(|s| f(s)).collect();
        let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    };
    let (first_lo, first_hi) = range(&|s| s.deferred.first_request_deferred_list_tokens as f64);
    let (share_lo, share_hi) = range(&|s| {
        100.0 * s.deferred.parts.deferred_list as f64 / s.deferred.total_input_tokens.max(1) as f64
    });
    let (cost_lo, cost_hi) = range(&|s| s.deferred.deferred_list_cost_usd * 1000.0);
    format!(
        "**Do deferred tools that are never loaded cost anything?** Yes: their names (or \
         descriptions) stay in the deferred list, sent with every request (announced once, then part of the history, under `list_style: delta`). In the {} scenarios \
         that list tools it is {}–{} tokens in the first request, {}–{} of the deferred \
         run's input over the conversation, {}–{} per 1,000 conversations without caching \
         (column *deferred list*; with prompt caching it is mostly read back at the cache-read \
         price). Per scenario: `data/scenarios.csv`, columns `deferred_first_request_list_tokens`, \
         `deferred_list_tokens`, `deferred_list_cost_usd`.\n\n",
        listing.len(),
        int(first_lo as usize),
        int(first_hi as usize),
        percent(share_lo, 1),
        percent(share_hi, 1),
        usd(cost_lo),
        usd(cost_hi),
    )
}

/// `3 (12,400, $0.0419): tools 3`, or `0`.
pub fn invalidations(i: &Invalidations) -> String {
    use crate::simulate::cost::CacheBreak;
    if i.requests == 0 {
        return "0".into();
    }
    let causes: Vec<String> = CacheBreak::ALL
        .iter()
        .filter(|c| i.by(**c) > 0)
        .map(|c| format!("{} {}", c.name(), int(i.by(*c))))
        .collect();
    format!(
        "{} ({}, ${:.4}): {}",
        int(i.requests),
        int(i.tokens),
        i.cost_usd,
        causes.join(", ")
    )
}

/// The eager-vs-deferred table of one scenario, as rows of (figure, eager, deferred, saved):
/// the report's scenario tables and `simulate`'s table and Markdown are this one view.
pub fn mode_rows(s: &ScenarioResult) -> Vec<Vec<String>> {
    let (e, d, sv) = (&s.eager, &s.deferred, &s.savings);
    let row = |name: &str, a: String, b: String, c: String| vec![name.to_string(), a, b, c];
    let both = |name: &str, f: &dyn Fn(&ModeResult) -> String| row(name, f(e), f(d), String::new());
    let cost = crate::number::usd_exact;
    let definitions = |m: &ModeResult| {
        (m.first_request_tool_tokens - m.first_request_deferred_list_tokens) as f64
    };
    let tool_pct = savings_pct(definitions(e), definitions(d));
    vec![
        both("tools sent (first request)", &|m| int(m.tools_sent)),
        row(
            "first request, input tokens",
            int(e.first_request_tokens),
            int(d.first_request_tokens),
            saved(s, sv.first_request_pct),
        ),
        row(
            "  of which tool definitions",
            int(e.first_request_tool_tokens - e.first_request_deferred_list_tokens),
            int(d.first_request_tool_tokens - d.first_request_deferred_list_tokens),
            saved(s, sv.first_request_pct.map(|_| tool_pct)),
        ),
        row(
            "  of which the deferred list",
            "–".into(),
            int(d.first_request_deferred_list_tokens),
            String::new(),
        ),
        row(
            "whole conversation, input tokens",
            int(e.total_input_tokens),
            int(d.total_input_tokens),
            saved(s, sv.total_input_pct),
        ),
        both("mean request, input tokens", &|m| {
            fixed1(m.mean_request_tokens)
        }),
        both("requests", &|m| int(m.requests)),
        row(
            "searches (misses, retries)",
            "–".into(),
            searches(d),
            String::new(),
        ),
        both("tool calls made", &|m| int(m.counts.tool_calls)),
        row(
            "calls failed / premature / unavailable",
            format!("– / – / {}", int(e.counts.unavailable_calls)),
            failed_premature_unavailable(d),
            String::new(),
        ),
        row(
            "deferred list, whole conversation (cost, no caching)",
            "–".into(),
            format!(
                "{} (${:.4})",
                int(d.parts.deferred_list),
                d.deferred_list_cost_usd
            ),
            String::new(),
        ),
        both("output tokens", &|m| int(m.output_tokens)),
        row(
            "cost per conversation, no caching",
            cost(e.cost_usd.without_caching),
            cost(d.cost_usd.without_caching),
            saved(s, sv.cost_without_caching_pct),
        ),
        row(
            "cost per conversation, prompt caching",
            cost(e.cost_usd.with_caching),
            cost(d.cost_usd.with_caching),
            saved(s, sv.cost_with_caching_pct),
        ),
        both("cache invalidations (tokens re-written, cost)", &|m| {
            invalidations(&m.cache_invalidations)
        }),
        both("first time to first token, ms", &|m| {
            fixed1(m.latency_ms.first_ttft)
        }),
        both("mean turn, ms", &|m| fixed1(m.latency_ms.mean_turn)),
        both("peak context-window occupancy", &window_use),
    ]
}

fn searches(m: &ModeResult) -> String {
    format!(
        "{} ({}, {})",
        int(m.counts.searches),
        int(m.counts.misses),
        int(m.counts.retries)
    )
}

fn mode_table(s: &ScenarioResult) -> String {
    md_table(
        &["", "eager", "deferred", "saved"],
        &mode_rows(s),
        &[false, true, true, true],
    )
}

/// The deferred settings a reader needs beside a scenario's numbers.
fn scenario_settings(s: &ScenarioResult) -> String {
    let st = &s.settings;
    let mut settings = vec![
        ("profile", s.model.name.clone()),
        ("scorer", st.scorer.to_string()),
        ("discovery", st.discovery.to_string()),
        ("listing", st.listing.to_string()),
        ("list style", st.list_style.to_string()),
        ("reveal", st.reveal.to_string()),
        ("max results", st.max_results.to_string()),
        ("retry", format!("[{}]", retry_names(st))),
        ("search tool", st.search_tool.clone()),
        ("search tool tokens", st.search_tool_tokens.to_string()),
    ];
    if st.when != When::Always {
        settings.push(("when", st.when.to_string()));
    }
    if let Some(c) = st.client {
        settings.insert(0, ("client", c.to_string()));
    }
    if st.call_bridge {
        settings.push(("call bridge", "tool_call".to_string()));
    }
    settings
        .iter()
        .map(|(k, v)| format!("{k} `{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The report's "Scenarios" section: per scenario its settings, table, caveats and charts.
pub fn sections(out: &mut String, scenarios: &[ScenarioResult], charts: &[Figure]) {
    if scenarios.is_empty() {
        return;
    }
    out.push_str(
        "## Scenarios\n\nPer-request numbers: `data/requests.csv`; totals: `data/scenarios.csv`.\n\n",
    );
    for s in scenarios {
        let _ = writeln!(out, "### {}\n", md_code(&s.name));
        if let Some(d) = &s.description {
            let _ = writeln!(out, "{}\n", d.trim());
        }
        let _ = writeln!(
            out,
            "{} tools, {} deferred. Settings: {}.\n",
            int(s.tool_count),
            int(s.deferred_count),
            scenario_settings(s)
        );
        out.push_str(&mode_table(s));
        out.push('\n');
        for caveat in &s.savings.caveats {
            let _ = writeln!(out, "\\* {caveat}.\n");
        }
        for f in figures::of(charts, &Section::Scenario(s.name.clone())) {
            figures::embed(out, f);
        }
    }
}

/// One row of `simulate --format csv` and of the report's `data/scenarios.csv`. Savings are
/// empty where the result has none (a mode does not fit the window); `savings_caveats` says why
/// or what to read beside them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioCsvRow {
    pub scenario: String,
    #[serde(default)]
    pub counter: String,
    pub tokenizer: String,
    pub tool_count: usize,
    pub deferred_count: usize,
    pub eager_tools_sent: usize,
    pub deferred_tools_sent: usize,
    pub eager_first_request_tokens: usize,
    pub deferred_first_request_tokens: usize,
    /// The deferred list alone in the deferred run's first request.
    #[serde(default)]
    pub deferred_first_request_list_tokens: usize,
    pub first_request_savings_pct: Option<f64>,
    pub eager_total_input_tokens: usize,
    pub deferred_total_input_tokens: usize,
    pub total_input_savings_pct: Option<f64>,
    /// The deferred list over the whole deferred conversation, and its cost without caching.
    #[serde(default)]
    pub deferred_list_tokens: usize,
    #[serde(default)]
    pub deferred_list_cost_usd: f64,
    pub eager_requests: usize,
    pub deferred_requests: usize,
    pub deferred_searches: usize,
    pub deferred_misses: usize,
    pub deferred_retries: usize,
    pub eager_tool_calls: usize,
    pub deferred_tool_calls: usize,
    pub deferred_premature_calls: usize,
    pub deferred_failed_calls: usize,
    pub eager_unavailable_calls: usize,
    pub deferred_unavailable_calls: usize,
    pub eager_cost_usd: f64,
    pub deferred_cost_usd: f64,
    pub cost_savings_pct: Option<f64>,
    pub eager_cost_cached_usd: f64,
    pub deferred_cost_cached_usd: f64,
    pub cost_cached_savings_pct: Option<f64>,
    #[serde(default)]
    pub eager_cache_invalidations: usize,
    #[serde(default)]
    pub deferred_cache_invalidations: usize,
    #[serde(default)]
    pub eager_invalidation_cost_usd: f64,
    #[serde(default)]
    pub deferred_invalidation_cost_usd: f64,
    pub eager_peak_occupancy_pct: f64,
    pub deferred_peak_occupancy_pct: f64,
    pub eager_fits_window: bool,
    pub deferred_fits_window: bool,
    pub savings_caveats: String,
}

impl ScenarioCsvRow {
    pub fn of(s: &ScenarioResult) -> ScenarioCsvRow {
        let (e, d) = (&s.eager, &s.deferred);
        ScenarioCsvRow {
            scenario: s.name.clone(),
            counter: s.counter.0.name().to_string(),
            tokenizer: s.counter.0.tokenizer_label().to_string(),
            tool_count: s.tool_count,
            deferred_count: s.deferred_count,
            eager_tools_sent: e.tools_sent,
            deferred_tools_sent: d.tools_sent,
            eager_first_request_tokens: e.first_request_tokens,
            deferred_first_request_tokens: d.first_request_tokens,
            deferred_first_request_list_tokens: d.first_request_deferred_list_tokens,
            first_request_savings_pct: s.savings.first_request_pct,
            eager_total_input_tokens: e.total_input_tokens,
            deferred_total_input_tokens: d.total_input_tokens,
            total_input_savings_pct: s.savings.total_input_pct,
            deferred_list_tokens: d.parts.deferred_list,
            deferred_list_cost_usd: d.deferred_list_cost_usd,
            eager_requests: e.requests,
            deferred_requests: d.requests,
            deferred_searches: d.counts.searches,
            deferred_misses: d.counts.misses,
            deferred_retries: d.counts.retries,
            eager_tool_calls: e.counts.tool_calls,
            deferred_tool_calls: d.counts.tool_calls,
            deferred_premature_calls: d.counts.premature_calls,
            deferred_failed_calls: d.counts.failed_calls,
            eager_unavailable_calls: e.counts.unavailable_calls,
            deferred_unavailable_calls: d.counts.unavailable_calls,
            eager_cost_usd: e.cost_usd.without_caching,
            deferred_cost_usd: d.cost_usd.without_caching,
            cost_savings_pct: s.savings.cost_without_caching_pct,
            eager_cost_cached_usd: e.cost_usd.with_caching,
            deferred_cost_cached_usd: d.cost_usd.with_caching,
            cost_cached_savings_pct: s.savings.cost_with_caching_pct,
            eager_cache_invalidations: e.cache_invalidations.requests,
            deferred_cache_invalidations: d.cache_invalidations.requests,
            eager_invalidation_cost_usd: e.cache_invalidations.cost_usd,
            deferred_invalidation_cost_usd: d.cache_invalidations.cost_usd,
            eager_peak_occupancy_pct: e.peak_occupancy_pct,
            deferred_peak_occupancy_pct: d.peak_occupancy_pct,
            eager_fits_window: e.fits_window,
            deferred_fits_window: d.fits_window,
            savings_caveats: s.savings.caveats.join("; "),
        }
    }
}

/// One row of `simulate --per-request --format csv` and of the report's `data/requests.csv`:
/// the scenario's name, then the request as the result holds it (its parts as columns).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RequestCsvRow {
    pub scenario: String,
    #[serde(flatten)]
    pub request: RequestRow,
}

/// The scenario rows of a set of results.
pub fn scenario_rows(results: &[ScenarioResult]) -> Vec<ScenarioCsvRow> {
    results.iter().map(ScenarioCsvRow::of).collect()
}

/// The request rows of a set of results (empty for results without requests).
pub fn request_rows(results: &[ScenarioResult]) -> Vec<RequestCsvRow> {
    results
        .iter()
        .flat_map(|s| {
            s.requests.iter().map(|r| RequestCsvRow {
                scenario: s.name.clone(),
                request: r.clone(),
            })
        })
        .collect()
}
