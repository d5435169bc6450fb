//! Which charts a report has, and the data each one draws: turns a `ReportData` into chart
//! specs and renders them. Every figure has a caption that says how to read it.

use crate::output::{md_code, md_text};
use std::fmt::Write as _;

use crate::eval::metrics::Metric;
use crate::experiment::eval::EvalSet;
use crate::experiment::report::ReportData;
use crate::experiment::sweep::Sweep;
use crate::names::slug;
use crate::search::ScorerKind;
use crate::simulate::request::PARTS;
use crate::simulate::{RequestRow, ScenarioResult};
use crate::view::chart::{
    Bar, BarPanel, ChartError, LegendAt, LineChart, Scale, Series, StackedBars, line_chart,
    stacked_bars,
};

#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// Relative path of the SVG (`charts/…`).
    pub path: String,
    pub title: String,
    /// How to read it, one or two sentences.
    pub caption: String,
    pub svg: String,
    /// Where it belongs in `index.md`.
    pub section: Section,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Section {
    /// Per scenario, by name.
    Scenario(String),
    /// The context-window chart of the summary.
    Occupancy,
    /// Per query set, by name.
    Eval(String),
    Sweep,
    /// Measured; differs between runs.
    Latency,
    BreakEven,
    Threshold,
    Invalidations,
    /// The imported sessions (`report --sessions`).
    Sessions,
    /// The shipped scenarios under every client profile.
    Clients,
}

/// A figure in `index.md`: the image with its relative link, then its caption.
pub fn embed(out: &mut String, f: &Figure) {
    // A title names a scenario or query set (the user's text): escaped, it stays alt text.
    let _ = writeln!(out, "![{}]({})\n", md_text(&f.title), f.path);
    let _ = writeln!(out, "*{}*\n", f.caption);
}

/// The figures of one section, in order.
pub fn of<'a>(charts: &'a [Figure], section: &'a Section) -> impl Iterator<Item = &'a Figure> {
    charts.iter().filter(move |f| &f.section == section)
}

/// All figures, in the order `index.md` shows them.
pub fn all(data: &ReportData) -> Result<Vec<Figure>, ChartError> {
    let mut out = Vec::new();
    if let Some(f) = occupancy(data)? {
        out.push(f);
    }
    for s in &data.scenarios {
        if s.requests.is_empty() {
            continue;
        }
        out.push(requests(s)?);
        out.push(cumulative_tokens(s)?);
        out.push(cumulative_cost(s)?);
    }
    for set in &data.evals {
        if let Some(f) = recall(set)? {
            out.push(f);
        }
    }
    if let Some(sweep) = &data.sweep {
        out.push(sweep_first_request(sweep)?);
        out.push(sweep_savings(sweep)?);
    }
    out.extend(crate::view::report::deferral::figures(data)?);
    if let Some(c) = &data.clients {
        out.push(crate::view::clients::figure(c)?);
    }
    if !data.latency.sweep.is_empty() {
        out.push(sweep_latency(data)?);
    }
    // Every token chart's caption names the counter its tokens were counted with: a
    // scenario's own (a scenario may name another than the report's), else the report's.
    for f in out.iter_mut().filter(|f| {
        !matches!(
            f.section,
            Section::Eval(_) | Section::Latency | Section::Clients
        )
    }) {
        let counter = match &f.section {
            Section::Scenario(name) => scenario_counter(data, name),
            Section::Occupancy => data
                .scenarios
                .iter()
                .find(|s| f.title.ends_with(&format!(": {}", s.name)))
                .map_or(data.settings.counter, |s| s.counter.0),
            _ => data.settings.counter,
        };
        f.caption
            .push_str(&format!(" Tokens: the `{counter}` counter."));
    }
    // The sessions' charts name their own counter (the import's, scaled by its calibration).
    if let Some(s) = &data.sessions {
        out.extend(crate::view::sessions::figures(s)?);
    }
    Ok(out)
}

/// The counter a scenario's tokens were counted with.
fn scenario_counter(data: &ReportData, name: &str) -> crate::counter::CounterKind {
    data.scenarios
        .iter()
        .find(|s| s.name == name)
        .map_or(data.settings.counter, |s| s.counter.0)
}

/// The scorer that takes each query as a regular expression (the Anthropic API's regex search).
const REGEX: &str = "regex";

/// Recall@k per scorer of one query set.
fn recall(set: &EvalSet) -> Result<Option<Figure>, ChartError> {
    if set.result.results.is_empty() {
        return Ok(None);
    }
    let series: Vec<Series> = set
        .result
        .results
        .iter()
        .map(|sc| {
            let name = sc.scorer.to_string();
            Series::new(
                // Plain-English queries seldom match as a pattern: say so where its line lies.
                if name == REGEX {
                    "regex (the query as a pattern)".to_string()
                } else {
                    name
                },
                set.result
                    .ks
                    .iter()
                    .filter_map(|&k| sc.metric(&Metric::Recall(k)).map(|v| (k as f64, v)))
                    .collect(),
            )
        })
        .collect();
    let mut chart = LineChart::new(
        &format!(
            "Recall@k per scorer: {} ({} queries)",
            set.name(),
            set.result.query_count
        ),
        "k (tools returned by one search)",
        "recall@k (share of expected tools found)",
        series,
    );
    chart.y_range = Some((0.0, 1.0));
    chart.x_integer = true;
    chart.legend = LegendAt::LowerRight;
    Ok(Some(Figure {
        path: format!("charts/recall-{}.svg", slug(set.name())),
        title: chart.title.clone(),
        caption: format!(
            "Each line is a scorer; a point is the mean share of a query's expected tools \
             found in the first k results over the {} queries of {}. Higher is better; \
             the gap between k = 1 and k = 5 is what returning more tools per search buys.{}",
            set.result.query_count,
            md_code(set.name()),
            if set.result.results.iter().any(|sc| sc.scorer == REGEX) {
                " `regex` compiles each query as a regular expression, as the Anthropic API's \
                 regex tool search does for a model that writes patterns: these queries are \
                 plain English, which seldom matches a tool as a pattern, so it scores near 0 \
                 here by design, not by a fault."
            } else {
                ""
            }
        ),
        svg: line_chart(&chart)?,
        section: Section::Eval(set.name().to_string()),
    }))
}

/// A line chart over the sweep's catalog sizes (x on a log scale).
fn by_catalog_size(title: &str, y_label: &str, y_scale: Scale, series: Vec<Series>) -> LineChart {
    let mut chart = LineChart::new(title, "catalog size (tools, log scale)", y_label, series);
    chart.x_scale = Scale::Log;
    chart.y_scale = y_scale;
    chart
}

fn sweep_first_request(sweep: &Sweep) -> Result<Figure, ChartError> {
    let mut series = vec![Series::new(
        "eager (every definition)",
        sweep
            .points
            .iter()
            .map(|p| (p.tools as f64, p.eager_first_request_tokens as f64))
            .collect(),
    )];
    for mode in crate::experiment::sweep::ListingMode::ALL {
        series.push(Series::new(
            format!("deferred, {} list", mode.name()),
            sweep
                .points
                .iter()
                .filter_map(|p| {
                    p.deferred
                        .iter()
                        .find(|d| d.mode == mode)
                        .map(|d| (p.tools as f64, d.first_request_tokens as f64))
                })
                .collect(),
        ));
    }
    let window = sweep.settings.context_window as f64;
    series.push(
        Series::new(
            format!("context window ({})", crate::number::thousands(window, 0)),
            sweep
                .points
                .iter()
                .map(|p| (p.tools as f64, window))
                .collect(),
        )
        .dashed(),
    );
    let chart = by_catalog_size(
        "First request vs catalog size (generated catalogs)",
        "first-request input tokens (log scale)",
        Scale::Log,
        series,
    );
    Ok(Figure {
        path: "charts/sweep-first-request.svg".into(),
        title: chart.title.clone(),
        caption: format!(
            "Both axes are logarithmic: a straight line of slope 1 grows linearly with the \
             catalog. Eager cost is every definition; deferred cost is the search tool plus \
             the list of deferred tools, which still grows with the catalog in the `names` \
             and `descriptions` modes. A line above the dashed context window does not fit \
             at all. System prompt {} tokens and tool preamble {} tokens are in every point.",
            crate::number::thousands(sweep.settings.system_prompt_tokens as f64, 0),
            crate::number::thousands(sweep.settings.tool_overhead_tokens as f64, 0)
        ),
        svg: line_chart(&chart)?,
        section: Section::Sweep,
    })
}

fn sweep_savings(sweep: &Sweep) -> Result<Figure, ChartError> {
    let series = crate::experiment::sweep::ListingMode::ALL
        .into_iter()
        .enumerate()
        .map(|(i, mode)| {
            // Colours as in the first-request chart, where eager takes the first.
            Series::new(
                format!("{} list", mode.name()),
                sweep
                    .points
                    .iter()
                    .filter_map(|p| {
                        p.deferred
                            .iter()
                            .find(|d| d.mode == mode)
                            .map(|d| (p.tools as f64, d.savings_pct))
                    })
                    .collect(),
            )
            .colored(i + 1)
        })
        .collect();
    let mut chart = by_catalog_size(
        "First-request savings vs catalog size",
        "tokens saved vs eager (%)",
        Scale::Linear,
        series,
    );
    chart.y_range = Some((0.0, 100.0));
    chart.legend = LegendAt::LowerRight;
    Ok(Figure {
        path: "charts/sweep-savings.svg".into(),
        title: chart.title.clone(),
        caption: "Share of the eager first request that deferral saves, per listing mode. \
                  Small catalogs save little (the system prompt dominates and the search \
                  tool costs a few hundred tokens); the curves flatten where the list itself \
                  grows as fast as the definitions it replaces."
            .into(),
        svg: line_chart(&chart)?,
        section: Section::Sweep,
    })
}

/// Measured search latency over the sweep's catalogs.
fn sweep_latency(data: &ReportData) -> Result<Figure, ChartError> {
    // Scorers in first-seen order.
    let mut seen: Vec<ScorerKind> = Vec::new();
    for l in &data.latency.sweep {
        if !seen.contains(&l.scorer) {
            seen.push(l.scorer);
        }
    }
    let series = seen
        .iter()
        .map(|&s| {
            Series::new(
                format!("{s} (p50)"),
                data.latency
                    .sweep
                    .iter()
                    .filter(|l| l.scorer == s)
                    .map(|l| (l.tools as f64, l.latency_us.p50.max(0.01)))
                    .collect(),
            )
        })
        .collect();
    let chart = by_catalog_size(
        "Search latency vs catalog size (measured)",
        "median time per query (µs, log scale)",
        Scale::Log,
        series,
    );
    Ok(Figure {
        path: "charts/latency.svg".into(),
        title: chart.title.clone(),
        caption: "Median wall-clock time of one search on this machine, over the sweep's \
                  generated catalogs. A slope of 1 on these log axes means time grows \
                  linearly with the catalog. Measured, so it differs between runs."
            .into(),
        svg: line_chart(&chart)?,
        section: Section::Latency,
    })
}

fn requests(s: &ScenarioResult) -> Result<Figure, ChartError> {
    let panel = |mode: &str, title: String| BarPanel {
        title,
        bars: s
            .requests
            .iter()
            .filter(|r| r.mode.name() == mode)
            .map(|r| Bar {
                label: r.index.to_string(),
                values: r.parts.as_array().iter().map(|&v| v as f64).collect(),
            })
            .collect(),
    };
    let spec = StackedBars {
        title: format!("Input tokens per request: {} ({})", s.name, s.counter.0),
        x_label: "request number (in conversation order)".into(),
        y_label: "input tokens".into(),
        parts: PARTS.iter().map(std::string::ToString::to_string).collect(),
        panels: vec![
            panel(
                "eager",
                format!(
                    "eager: {} requests, every definition sent",
                    s.eager.requests
                ),
            ),
            panel(
                "deferred",
                format!(
                    "deferred: {} requests, {} searches",
                    s.deferred.requests, s.deferred.counts.searches
                ),
            ),
        ],
    };
    Ok(Figure {
        path: format!("charts/requests-{}.svg", slug(&s.name)),
        title: spec.title.clone(),
        caption: "One bar per request the agent sends, stacked by part in the order a provider \
                  caches them (system at the bottom). Both panels share the y scale: the green \
                  `tools` block is what deferral removes; the red `deferred_list` and the extra \
                  search requests are what it adds."
            .into(),
        svg: stacked_bars(&spec)?,
        section: Section::Scenario(s.name.clone()),
    })
}

fn cumulative(
    s: &ScenarioResult,
    mode: &str,
    value: impl Fn(&RequestRow) -> f64,
) -> Vec<(f64, f64)> {
    let mut total = 0.0;
    s.requests
        .iter()
        .filter(|r| r.mode.name() == mode)
        .map(|r| {
            total += value(r);
            (r.index as f64, total)
        })
        .collect()
}

fn cumulative_tokens(s: &ScenarioResult) -> Result<Figure, ChartError> {
    let mut chart = LineChart::new(
        &format!("Cumulative input tokens: {}", s.name),
        "request number",
        &format!("input tokens sent so far ({})", s.counter.0),
        vec![
            Series::new("eager", cumulative(s, "eager", |r| r.input_tokens as f64)),
            Series::new(
                "deferred",
                cumulative(s, "deferred", |r| r.input_tokens as f64),
            ),
        ],
    );
    chart.x_integer = true;
    Ok(Figure {
        path: format!("charts/cumulative-{}.svg", slug(&s.name)),
        title: chart.title.clone(),
        caption: "Input tokens summed over the conversation so far. The deferred line can start \
                  lower and still end higher when searches add requests; where it ends is the \
                  total a provider bills without caching."
            .into(),
        svg: line_chart(&chart)?,
        section: Section::Scenario(s.name.clone()),
    })
}

fn cumulative_cost(s: &ScenarioResult) -> Result<Figure, ChartError> {
    let per_k = |f: fn(&RequestRow) -> f64| move |r: &RequestRow| f(r) * 1000.0;
    let mut chart = LineChart::new(
        &format!("Cumulative cost per 1,000 conversations: {}", s.name),
        "request number",
        "USD per 1,000 conversations",
        vec![
            // One colour per mode, as in the token charts; caching is the dash.
            Series::new(
                "eager, no caching",
                cumulative(s, "eager", per_k(|r| r.cost_usd)),
            )
            .colored(0),
            Series::new(
                "deferred, no caching",
                cumulative(s, "deferred", per_k(|r| r.cost_usd)),
            )
            .colored(1),
            Series::new(
                "eager, prompt caching",
                cumulative(s, "eager", per_k(|r| r.cost_cached_usd)),
            )
            .colored(0)
            .dashed(),
            Series::new(
                "deferred, prompt caching",
                cumulative(s, "deferred", per_k(|r| r.cost_cached_usd)),
            )
            .colored(1)
            .dashed(),
        ],
    );
    chart.x_integer = true;
    Ok(Figure {
        path: format!("charts/cost-{}.svg", slug(&s.name)),
        title: chart.title.clone(),
        caption: "Dollars billed so far (input and output at the profile's list prices), for \
                  1,000 runs of this conversation, eager in blue and deferred in orange. Dashed \
                  lines bill the cached prefix at the cache-read price: caching shrinks the eager penalty, because the definitions \
                  are the stable prefix."
            .into(),
        svg: line_chart(&chart)?,
        section: Section::Scenario(s.name.clone()),
    })
}

/// Context-window occupancy of the scenario whose eager run fills the window most.
fn occupancy(data: &ReportData) -> Result<Option<Figure>, ChartError> {
    let Some(s) = data
        .scenarios
        .iter()
        .filter(|s| !s.requests.is_empty())
        .max_by(|a, b| {
            a.eager
                .peak_occupancy_pct
                .total_cmp(&b.eager.peak_occupancy_pct)
                .then_with(|| b.name.cmp(&a.name))
        })
    else {
        return Ok(None);
    };
    let occ = |mode: &str| -> Vec<(f64, f64)> {
        s.requests
            .iter()
            .filter(|r| r.mode.name() == mode)
            .map(|r| (r.index as f64, r.occupancy_pct))
            .collect()
    };
    let mut chart = LineChart::new(
        &format!("Context-window occupancy: {}", s.name),
        "request number",
        &format!("input as % of the context window ({})", s.counter.0),
        vec![
            Series::new("eager", occ("eager")),
            Series::new("deferred", occ("deferred")),
        ],
    );
    chart.x_integer = true;
    chart.y_range = Some((
        0.0,
        (s.eager
            .peak_occupancy_pct
            .max(s.deferred.peak_occupancy_pct)
            * 1.15)
            .clamp(1.0, 120.0),
    ));
    Ok(Some(Figure {
        path: "charts/occupancy.svg".into(),
        title: chart.title.clone(),
        caption: format!(
            "How full the model's context window is at each request of {} (the scenario whose \
             eager run fills it most). What tool definitions occupy is not available for the \
             conversation itself.",
            md_code(&s.name)
        ),
        svg: line_chart(&chart)?,
        section: Section::Occupancy,
    }))
}
