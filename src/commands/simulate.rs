//! `toolbudget simulate`: replays scenarios eagerly and deferred and prints what each mode
//! costs. Every format is a view of one `SimulationResult`. The search latency in the latency
//! model is measured on the real scorer over exactly the searches the replay sends (table and
//! md by default) or modeled from the profile (json and csv by default, so they stay
//! byte-identical); the output says which.

use std::time::Instant;

use crate::cli::{ApiArgs, SimulateArgs};
use crate::counter::{CounterKind, ToolTokens};
use crate::error::{Error, Result};
use crate::output::table_for;
use crate::output::{Format, csv_rows, emit, serde_table, to_json};
use crate::report::markdown::mode_rows;

use crate::simulate::result::{
    Gap, ScenarioResult, SearchLatencySource, SimulationResult, request_rows, round, scenario_rows,
};
use crate::simulate::{self, Scenario, SearchTiming};

/// Measured for the human formats, modeled for the byte-identical ones, unless asked.
fn latency_source(args: &SimulateArgs) -> SearchLatencySource {
    args.search_latency.unwrap_or(match args.output.format {
        Format::Table | Format::Md => SearchLatencySource::Measured,
        Format::Json | Format::Csv => SearchLatencySource::Modeled,
    })
}

/// `anthropic-api`: the system prompt, user messages, tools and search tool measured by
/// count_tokens (cached); the cache is saved even when a request fails.
fn prepare_api(
    scenario: &Scenario,
    api: &ApiArgs,
    build: &simulate::ScorerBuilder<'_>,
) -> Result<simulate::Prepared> {
    let catalog = simulate::load_scenario_catalogs(scenario)?;
    let mut client = super::count::api_client(api, &scenario.profile.api_model)?;
    let users = simulate::user_texts(scenario);
    let user_refs: Vec<&str> = users.iter().map(String::as_str).collect();
    let parts = crate::counter::api::request_parts(
        &mut client,
        scenario.system_prompt.as_deref(),
        &user_refs,
        &catalog,
        &simulate::default_search_tool(),
        scenario.tool_choice,
    );
    super::count::save_api_cache(&client)?;
    let parts = parts.map_err(|e| Error::Missing(e.to_string()))?;
    let exact = simulate::ExactCounts {
        system: parts.system,
        messages: users.into_iter().zip(parts.messages).collect(),
        tools_fixed: parts.tools.fixed,
        search_tool: parts.search_tool,
    };
    let tokens = ToolTokens::of(CounterKind::AnthropicApi, parts.tools.counts);
    simulate::prepare_exact(scenario, catalog, tokens, Some(exact), build)
}

pub fn run(args: &SimulateArgs, quiet: bool) -> Result<()> {
    let origin = Instant::now();
    let clock = || origin.elapsed();
    let timing = match latency_source(args) {
        SearchLatencySource::Measured => SearchTiming::Measured(&clock),
        SearchLatencySource::Modeled => SearchTiming::Modeled,
    };
    let calibration = args
        .calibration
        .as_deref()
        .map(simulate::calibration::CalibrationFile::load)
        .transpose()?;
    let external = args.external.config();
    let build = |spec: &_, catalog, bm25: &_, dir: Option<&std::path::Path>| {
        simulate::build_scorer_with(spec, catalog, bm25, dir, &external)
    };
    let mut scenarios = Vec::new();
    for mut scenario in simulate::load_scenarios(&args.scenarios)? {
        if let Some(s) = &args.scorer {
            scenario.deferred.scorer = s.clone();
            scenario.deferred.scorer_dir = None;
        }
        let flag = args.counter.or(args
            .tokenizer
            .map(|t| CounterKind::from_legacy(t, scenario.render)));
        let counter = simulate::counter_for(&scenario, flag);
        let mut prepared = if counter.is_local() {
            simulate::prepare(&scenario, counter, &build)?
        } else {
            prepare_api(&scenario, &args.api, &build)?
        };
        if let Some(c) = calibration
            .as_ref()
            .and_then(|f| f.for_scenario(&scenario, counter.name()))
        {
            c.apply(&mut prepared);
        }
        let mut result = simulate::run_timed(&scenario, &prepared, timing)?;
        result.published = simulate::published::compare(&scenario, &prepared, &build)?;
        if !args.per_request {
            result.requests.clear();
        }
        if !quiet {
            for caveat in &result.savings.caveats {
                eprintln!("warning: {}: {caveat}", result.name);
            }
        }
        scenarios.push(result);
    }
    let result = SimulationResult { scenarios };
    emit(
        args.output.out.as_deref(),
        &render(&result, args.output.format, args.per_request),
    )
}

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
        format!("### {}\n\n", s.name)
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
    out.push_str(&published_text(s, md));
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
        "{tools}, {} deferred ({when}); counter {}{} ({}, {} rendering), profile {}, scorer {}, \
         discovery {}, listing {}/{}, reveal {}, max_results {}, retry [{}]\n",
        s.deferred_count,
        st.counter,
        super::count::error_note(st.counter_error_pct),
        st.tokenizer,
        st.render,
        st.profile,
        st.scorer,
        st.discovery,
        st.listing,
        st.list_style,
        st.reveal,
        st.max_results,
        st.retry.join(", ")
    )
}

fn published_text(s: &ScenarioResult, md: bool) -> String {
    let mut out = String::new();
    let br = if md { "\\\n" } else { "\n" };
    for p in &s.published {
        let side = |name: &str,
                    published: Option<f64>,
                    measured: f64,
                    [o200k, cl100k]: [f64; 2],
                    gap: Option<Gap>| {
            let published = published.map_or("-".to_string(), |v| format!("{v}"));
            let gap = gap.map_or(String::new(), |g| {
                format!(
                    "; gap {:+}: counting {:+}, catalog {:+}, system {:+}, conversation {:+}, other {:+}",
                    round(g.total(), 2),
                    g.counting,
                    g.catalog,
                    g.system,
                    g.conversation,
                    g.other
                )
            });
            format!(
                "  {name}: published {published}, measured {measured} (o200k-json {o200k}, cl100k-json {cl100k}{gap}){br}"
            )
        };
        out.push_str(&format!(
            "published: {} [{}]{br}  {} in {}, counter {}{}{br}",
            p.claim,
            p.source,
            p.metric,
            p.unit,
            p.counter,
            if p.variant.is_empty() {
                String::new()
            } else {
                format!(", {}", p.variant)
            },
        ));
        out.push_str(&side(
            "eager",
            p.eager_tokens,
            p.measured_eager_tokens,
            [p.measured_eager_o200k_json, p.measured_eager_cl100k_json],
            p.eager_gap,
        ));
        out.push_str(&side(
            "deferred",
            p.deferred_tokens,
            p.measured_deferred_tokens,
            [
                p.measured_deferred_o200k_json,
                p.measured_deferred_cl100k_json,
            ],
            p.deferred_gap,
        ));
        if !p.not_reproduced.is_empty() {
            out.push_str(&format!("  not reproduced: {}{br}", p.not_reproduced));
        }
        if md {
            out.push('\n');
        }
    }
    out
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
            st.search_latency_ms
        ),
    }
}
