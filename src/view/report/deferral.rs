//! The report's views of where deferral pays: the break-even and `auto:N` threshold sections
//! (from `deferral::Deferral`) and the cache-invalidation section (from every scenario's
//! result and the reveal comparison), each with its table, chart and CSV file. Pure.

use crate::output::md_code;
use std::fmt::Write as _;

use serde::Serialize;

use crate::experiment::deferral::{self, Curve, Deferral};
use crate::experiment::report::ReportData;
use crate::number::{int, usd_exact as usd};
use crate::output::md_table;
use crate::simulate::cost::CacheBreak;
use crate::simulate::result::Invalidations;
use crate::view::chart::{
    Bar, BarPanel, ChartError, LegendAt, LineChart, Scale, Series, StackedBars, line_chart,
    stacked_bars,
};
use crate::view::report::figures::{Figure, Section};

fn turn(t: Option<usize>) -> String {
    match t {
        Some(1) => "turn 1".into(),
        Some(t) => format!("from turn {t}"),
        None => format!("not by turn {}", deferral::TURNS),
    }
}

fn curve(d: &Deferral, tools: usize, searches: usize) -> Option<&Curve> {
    d.curves
        .iter()
        .find(|c| c.tools == tools && c.searches == searches)
}

// ---- Break-even -------------------------------------------------------------------------

fn break_even(out: &mut String, d: &Deferral, charts: &[Figure]) {
    let st = &d.settings;
    let _ = writeln!(
        out,
        "## Where deferral pays: break-even\n\nThe turn from which deferred loading costs less \
         than eager through turn {} of one conversation, per generated catalog (seed {}) and \
         number of searches: every turn is a {}-token user message and one tool call with a \
         {}-token result; the first *s* turns each need a tool not used before (a search when \
         deferred, `{}` scorer, `{}` listing), later turns reuse them. System prompt {} tokens; \
         `{}` profile, `{}` counter. Prompt caching bills the common prefix with the previous \
         request at the cache-read price. Data: `data/break-even.csv` (break-even turns) and \
         `data/break-even-curves.csv` (the cost after every turn).\n",
        st.turns,
        st.seed,
        st.user_tokens,
        st.result_tokens,
        st.scorer,
        st.listing,
        int(st.system_prompt_tokens),
        st.profile,
        st.counter
    );
    let mut headers = vec![
        "tools".to_string(),
        "definitions".into(),
        "first request, eager → deferred".into(),
    ];
    for s in deferral::SEARCHES {
        headers.push(format!(
            "{s} search{}: no caching / caching",
            if s == 1 { "" } else { "es" }
        ));
    }
    let rows: Vec<Vec<String>> = deferral::SIZES
        .iter()
        .filter_map(|&n| {
            let first = curve(d, n, deferral::SEARCHES[0])?;
            let mut row = vec![
                int(n),
                int(first.tool_tokens),
                format!(
                    "{} → {}",
                    int(first.eager_first_request_tokens),
                    int(first.deferred_first_request_tokens)
                ),
            ];
            for s in deferral::SEARCHES {
                let c = curve(d, n, s)?;
                row.push(format!(
                    "{} / {}",
                    turn(c.break_even(false)),
                    turn(c.break_even(true))
                ));
            }
            Some(row)
        })
        .collect();
    let names: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut right = vec![true, true, true];
    right.extend(std::iter::repeat_n(false, deferral::SEARCHES.len()));
    out.push_str(&md_table(&names, &rows, &right));
    out.push_str(
        "\n*turn 1*: deferred costs less from the first turn on; *from turn k*: eager is \
         cheaper until turn k, deferred from then on; *not by turn 50*: eager stays cheaper. \
         Each search is a request more carrying the whole context, and the search tool and \
         the list are paid on every request, so on a small catalog they can outweigh the \
         definitions they replace; with caching the eager definitions are a cached prefix read \
         at a tenth of the input price.\n\n",
    );
    for f in charts.iter().filter(|f| f.section == Section::BreakEven) {
        let _ = writeln!(out, "![{}]({})\n\n*{}*\n", f.title, f.path, f.caption);
    }
}

fn ratio_series(d: &Deferral, searches: usize, cached: bool) -> Vec<Series> {
    deferral::SIZES
        .iter()
        .enumerate()
        .filter_map(|(i, &n)| {
            let c = curve(d, n, searches)?;
            let (e, f) = if cached {
                (&c.eager_cached_usd, &c.deferred_cached_usd)
            } else {
                (&c.eager_usd, &c.deferred_usd)
            };
            let points = e
                .iter()
                .zip(f)
                .enumerate()
                .filter(|(_, (a, _))| **a > 0.0)
                .map(|(t, (a, b))| ((t + 1) as f64, b / a * 100.0))
                .collect();
            Some(Series::new(format!("{} tools", int(n)), points).colored(i))
        })
        .collect()
}

fn break_even_figure(d: &Deferral, cached: bool) -> Result<Figure, ChartError> {
    let searches = d.settings.view_searches;
    let mut series = ratio_series(d, searches, cached);
    series.push(
        Series::new(
            "break-even (100%)",
            vec![(1.0, 100.0), (deferral::TURNS as f64, 100.0)],
        )
        .reference(),
    );
    let caching = if cached {
        "prompt caching"
    } else {
        "no caching"
    };
    let mut chart = LineChart::new(
        &format!("Deferred cost as a share of eager ({searches} searches, {caching})"),
        "turns so far",
        "deferred / eager cumulative cost (%, log scale)",
        series,
    );
    chart.x_integer = true;
    chart.y_scale = Scale::Log;
    chart.legend = LegendAt::UpperRight;
    let slug = if cached { "cached" } else { "uncached" };
    Ok(Figure {
        path: format!("charts/break-even-{slug}.svg"),
        title: chart.title.clone(),
        caption: format!(
            "One line per generated catalog size (10 to 10,000 tools) over turns 1 to {}: the \
             deferred conversation's cost so far as a share of the eager one's. Below the \
             dashed 100% line deferral is cheaper; a line crossing it downwards is the \
             break-even turn. The first {searches} turns each search for a new tool.",
            deferral::TURNS
        ),
        svg: line_chart(&chart)?,
        section: Section::BreakEven,
    })
}

// ---- Threshold ----------------------------------------------------------------------------

fn threshold(out: &mut String, d: &Deferral, charts: &[Figure]) {
    let st = &d.settings;
    let _ = writeln!(
        out,
        "## Claude Code's `auto:{pct}` threshold\n\nClaude Code defers only when the deferrable \
         tools' definitions exceed {pct}% of the context window (`ENABLE_TOOL_SEARCH=auto:N`, \
         default {pct}). The simulator's rule (`deferred.when: auto:{pct}`) on the same \
         generated catalogs, for a 200K and a 1M window, and what the chosen mode costs for a \
         {}-turn conversation with {} searches (prompt caching) against the other mode: \
         *regret* is what the decision costs beyond the cheaper one. With 1M tokens, {pct}% is \
         100K: most catalogs never defer. Data: `data/threshold.csv`.\n",
        st.view_turns,
        st.view_searches,
        pct = st.auto_pct
    );
    let mut rows = Vec::new();
    for &n in &deferral::SIZES {
        let per: Vec<&deferral::ThresholdRow> =
            d.threshold.iter().filter(|r| r.tools == n).collect();
        let Some(first) = per.first() else { continue };
        let mut row = vec![
            int(n),
            int(first.tool_tokens),
            usd(first.eager_usd),
            usd(first.deferred_usd),
        ];
        for r in &per {
            row.push(format!(
                "{} ({} {} {}), {}{}",
                if r.defers { "defers" } else { "eager" },
                int(r.tool_tokens),
                if r.defers { ">" } else { "≤" },
                int(r.threshold_tokens),
                int(r.first_request_tokens),
                if r.fits_window {
                    ""
                } else {
                    " (over the window)"
                }
            ));
            row.push(format!("{} (+{})", usd(r.chosen_usd), usd(r.regret_usd)));
        }
        rows.push(row);
    }
    let mut headers = vec![
        "tools".to_string(),
        "definitions".into(),
        "eager costs".into(),
        "deferred costs".into(),
    ];
    for w in deferral::WINDOWS {
        let w = if w >= 1_000_000 {
            format!("{}M", w / 1_000_000)
        } else {
            format!("{}K", w / 1_000)
        };
        headers.push(format!("{w}: decides, first request"));
        headers.push(format!("{w}: costs (regret)"));
    }
    let names: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut right = vec![true; 4];
    for _ in deferral::WINDOWS {
        right.extend([false, true]);
    }
    out.push_str(&md_table(&names, &rows, &right));
    out.push('\n');
    for f in charts.iter().filter(|f| f.section == Section::Threshold) {
        let _ = writeln!(out, "![{}]({})\n\n*{}*\n", f.title, f.path, f.caption);
    }
}

fn threshold_figure(d: &Deferral) -> Result<Figure, ChartError> {
    let point = |f: &dyn Fn(&deferral::ThresholdRow) -> f64, window: usize| -> Vec<(f64, f64)> {
        d.threshold
            .iter()
            .filter(|r| r.window == window)
            .map(|r| (r.tools as f64, f(r)))
            .collect()
    };
    let w0 = deferral::WINDOWS[0];
    let mut series = vec![
        Series::new("eager", point(&|r| r.eager_usd, w0)).colored(0),
        Series::new("deferred", point(&|r| r.deferred_usd, w0)).colored(1),
    ];
    for (i, w) in deferral::WINDOWS.into_iter().enumerate() {
        series.push(
            Series::new(
                format!("auto:{} decides, {} window", d.settings.auto_pct, int(w)),
                point(&|r| r.chosen_usd, w),
            )
            .colored(2 + i)
            .dashed(),
        );
    }
    let mut chart = LineChart::new(
        &format!(
            "What auto:{} costs: {} turns, {} searches, prompt caching",
            d.settings.auto_pct, d.settings.view_turns, d.settings.view_searches
        ),
        "catalog size (tools, log scale)",
        "USD per conversation (log scale)",
        series,
    );
    chart.x_scale = Scale::Log;
    chart.y_scale = Scale::Log;
    Ok(Figure {
        path: "charts/auto-threshold.svg".into(),
        title: chart.title.clone(),
        caption: format!(
            "Solid lines: the conversation always eager and always deferred. Dashed: the mode \
             `auto:{}` picks, for a 200K and a 1M window; where a dashed line leaves the lower \
             solid one, the rule keeps the catalog eager although deferring would cost less. \
             Catalogs over the window are costed all the same (their requests would be refused).",
            d.settings.auto_pct
        ),
        svg: line_chart(&chart)?,
        section: Section::Threshold,
    })
}

// ---- Invalidations ------------------------------------------------------------------------

fn causes(i: &Invalidations) -> String {
    let parts: Vec<String> = CacheBreak::ALL
        .iter()
        .filter(|c| i.by(**c) > 0)
        .map(|c| format!("{} {}", c.name(), i.by(*c)))
        .collect();
    if parts.is_empty() {
        "–".into()
    } else {
        parts.join(", ")
    }
}

fn invalidations(out: &mut String, data: &ReportData, charts: &[Figure]) {
    if data.scenarios.is_empty() {
        return;
    }
    out.push_str(
        "## Cache invalidations\n\nRequests whose cached prefix was broken, per scenario and \
         mode: a part before the history changed (a definition revealed into the tools list, \
         a server connecting, the deferred list changing), the history was replaced (`/clear`, \
         compaction) or the cache expired (`resume`). *Re-written* is the previous prefix \
         that had to be written to the cache again instead of read; its cost is that at the \
         cache-write price minus the cache-read price. Data: `data/invalidations.csv`.\n\n",
    );
    let rows: Vec<Vec<String>> = data
        .scenarios
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let (e, d) = (
                &s.eager.cache_invalidations,
                &s.deferred.cache_invalidations,
            );
            let broken = |i: &Invalidations| {
                if i.requests == 0 {
                    "0".to_string()
                } else {
                    format!(
                        "{} ({}, {})",
                        int(i.requests),
                        int(i.tokens),
                        usd(i.cost_usd)
                    )
                }
            };
            vec![
                (n + 1).to_string(),
                md_code(&s.name),
                format!("`{}`", s.settings.reveal),
                broken(e),
                causes(e),
                broken(d),
                causes(d),
            ]
        })
        .collect();
    out.push_str(&md_table(
        &[
            "#",
            "scenario",
            "reveal",
            "eager broken (re-written, cost)",
            "eager causes",
            "deferred broken (re-written, cost)",
            "deferred causes",
        ],
        &rows,
        &[true, false, false, true, false, true, false],
    ));
    if let Some(d) = &data.deferral {
        reveal_table(out, d);
    }
    out.push('\n');
    for f in charts
        .iter()
        .filter(|f| f.section == Section::Invalidations)
    {
        super::figures::embed(out, f);
    }
}

/// `reveal: append` against `tools-list` on the break-even conversation.
fn reveal_table(out: &mut String, d: &Deferral) {
    if d.reveal.is_empty() {
        return;
    }
    let r0 = &d.reveal[0];
    let _ = writeln!(
        out,
        "\n`reveal: append` against `tools-list` on the break-even conversation ({} \
         generated tools, {} searches, {} turns, deferred): revealing a tool by \
         adding it to the tools list rewrites the cache from the tools on; appending it to \
         the history keeps the prefix.\n",
        int(r0.tools),
        r0.searches,
        r0.turns
    );
    let rows: Vec<Vec<String>> = d
        .reveal
        .iter()
        .map(|r| {
            vec![
                format!("`{}`", r.reveal),
                int(r.invalidations.requests),
                int(r.invalidations.tokens),
                usd(r.invalidations.cost_usd),
                int(r.total_input_tokens),
                int(r.cached_input_tokens),
                usd(r.cost_usd),
                usd(r.cost_cached_usd),
            ]
        })
        .collect();
    out.push_str(&md_table(
        &[
            "reveal",
            "broken requests",
            "re-written",
            "invalidation cost",
            "input tokens",
            "of which cached",
            "cost, no caching",
            "cost, caching",
        ],
        &rows,
        &[false, true, true, true, true, true, true, true],
    ));
}

fn invalidations_figure(data: &ReportData) -> Result<Option<Figure>, ChartError> {
    if data.scenarios.is_empty() {
        return Ok(None);
    }
    let panel = |deferred: bool| BarPanel {
        title: if deferred { "deferred" } else { "eager" }.into(),
        bars: data
            .scenarios
            .iter()
            .enumerate()
            .map(|(n, s)| {
                let i = if deferred {
                    &s.deferred.cache_invalidations
                } else {
                    &s.eager.cache_invalidations
                };
                Bar {
                    label: (n + 1).to_string(),
                    values: CacheBreak::ALL.iter().map(|c| i.by(*c) as f64).collect(),
                }
            })
            .collect(),
    };
    let spec = StackedBars {
        title: "Cache invalidations per scenario".into(),
        x_label: "scenario (# in the table)".into(),
        y_label: "requests whose cached prefix broke".into(),
        parts: CacheBreak::ALL
            .iter()
            .map(|c| c.name().to_string())
            .collect(),
        panels: vec![panel(false), panel(true)],
    };
    Ok(Some(Figure {
        path: "charts/cache-invalidations.svg".into(),
        title: spec.title.clone(),
        caption: "One bar per scenario (numbered as in the table), stacked by what broke the \
                  cached prefix. Eager runs break it when tools appear (a server connects) or the \
                  history is replaced; deferred runs also when the deferred list changes, and on \
                  every reveal with `reveal: tools-list`."
            .into(),
        svg: stacked_bars(&spec)?,
        section: Section::Invalidations,
    }))
}

// ---- Entry points -------------------------------------------------------------------------

/// One-line findings for the report's summary: published figures, break-even, threshold and
/// the reveal comparison, each computed from the data.
pub fn summary_lines(data: &ReportData) -> Vec<String> {
    let mut out = Vec::new();
    let figures: Vec<_> = data.scenarios.iter().flat_map(|s| &s.published).collect();
    if !figures.is_empty() {
        let reproduced = figures.iter().filter(|p| p.reproduced()).count();
        out.push(format!(
            "{} published figures measured like for like ({} in tokens, {} compared with the \
             latency model only); each gap split into counting, catalog, system, conversation \
             and other: [Published figures reproduced](#published-figures-reproduced).",
            figures.len(),
            reproduced,
            figures.len() - reproduced
        ));
    }
    if let Some(d) = &data.deferral {
        let never: Vec<String> = d
            .curves
            .iter()
            .filter(|c| c.break_even(true).is_none())
            .map(|c| format!("{} tools with {} searches", int(c.tools), c.searches))
            .collect();
        if !never.is_empty() {
            out.push(format!(
                "With prompt caching, deferral does not pay within {} turns for: {} \
                 ([break-even](#where-deferral-pays-break-even)).",
                d.settings.turns,
                never.join("; ")
            ));
        }
        let regret: Vec<String> = d
            .threshold
            .iter()
            .filter(|r| r.regret_usd > 0.0)
            .map(|r| {
                format!(
                    "{} tools at a {} window (+{} per conversation)",
                    int(r.tools),
                    int(r.window),
                    usd(r.regret_usd)
                )
            })
            .collect();
        if !regret.is_empty() {
            out.push(format!(
                "`auto:{}` keeps eager catalogs that would be cheaper deferred: {}.",
                d.settings.auto_pct,
                regret.join("; ")
            ));
        }
        if let [a, b] = d.reveal.as_slice() {
            out.push(format!(
                "`reveal: {}` breaks the prompt cache {} times in the {}-tool, {}-search \
                 conversation ({} tokens re-written, {}), `reveal: {}` {} times.",
                b.reveal,
                b.invalidations.requests,
                int(b.tools),
                b.searches,
                int(b.invalidations.tokens),
                usd(b.invalidations.cost_usd),
                a.reveal,
                a.invalidations.requests
            ));
        }
    }
    out
}

/// The sections, in order, after the sweep.
pub fn sections(out: &mut String, data: &ReportData, charts: &[Figure]) {
    if let Some(d) = &data.deferral {
        break_even(out, d, charts);
        threshold(out, d, charts);
    }
    invalidations(out, data, charts);
}

pub fn figures(data: &ReportData) -> Result<Vec<Figure>, ChartError> {
    let mut out = Vec::new();
    if let Some(d) = &data.deferral {
        out.push(break_even_figure(d, false)?);
        out.push(break_even_figure(d, true)?);
        out.push(threshold_figure(d)?);
    }
    if let Some(f) = invalidations_figure(data)? {
        out.push(f);
    }
    Ok(out)
}

/// A catalog size and search count: a row of `data/break-even.csv`.
#[derive(Debug, Clone, Default, Serialize)]
struct BreakEvenCsvRow {
    tools: usize,
    tool_tokens: usize,
    searches: usize,
    eager_first_request_tokens: usize,
    deferred_first_request_tokens: usize,
    break_even_turn: Option<usize>,
    break_even_turn_cached: Option<usize>,
}

/// The cost after one turn: a row of `data/break-even-curves.csv`.
#[derive(Debug, Clone, Default, Serialize)]
struct CurveCsvRow {
    tools: usize,
    searches: usize,
    turn: usize,
    eager_usd: f64,
    deferred_usd: f64,
    eager_cached_usd: f64,
    deferred_cached_usd: f64,
}

/// A scenario's mode: a row of `data/invalidations.csv`.
#[derive(Debug, Clone, Default, Serialize)]
struct InvalidationCsvRow {
    scenario: String,
    mode: String,
    reveal: crate::simulate::scenario::Reveal,
    #[serde(flatten)]
    invalidations: Invalidations,
}

pub fn csv_files(data: &ReportData) -> Vec<(String, String)> {
    use crate::output::csv_rows;
    let mut out = Vec::new();
    if let Some(d) = &data.deferral {
        let rows: Vec<BreakEvenCsvRow> = d
            .curves
            .iter()
            .map(|c| BreakEvenCsvRow {
                tools: c.tools,
                tool_tokens: c.tool_tokens,
                searches: c.searches,
                eager_first_request_tokens: c.eager_first_request_tokens,
                deferred_first_request_tokens: c.deferred_first_request_tokens,
                break_even_turn: c.break_even(false),
                break_even_turn_cached: c.break_even(true),
            })
            .collect();
        out.push(("data/break-even.csv".to_string(), csv_rows(&rows)));
        let rows: Vec<CurveCsvRow> = d
            .curves
            .iter()
            .flat_map(|c| {
                (0..c.eager_usd.len()).map(move |t| CurveCsvRow {
                    tools: c.tools,
                    searches: c.searches,
                    turn: t + 1,
                    eager_usd: c.eager_usd[t],
                    deferred_usd: c.deferred_usd[t],
                    eager_cached_usd: c.eager_cached_usd[t],
                    deferred_cached_usd: c.deferred_cached_usd[t],
                })
            })
            .collect();
        out.push(("data/break-even-curves.csv".to_string(), csv_rows(&rows)));
        out.push(("data/threshold.csv".to_string(), csv_rows(&d.threshold)));
    }
    if !data.scenarios.is_empty() {
        let mut rows: Vec<InvalidationCsvRow> = Vec::new();
        for s in &data.scenarios {
            for (mode, i) in [
                ("eager", &s.eager.cache_invalidations),
                ("deferred", &s.deferred.cache_invalidations),
            ] {
                rows.push(InvalidationCsvRow {
                    scenario: s.name.clone(),
                    mode: mode.into(),
                    reveal: s.settings.reveal,
                    invalidations: i.clone(),
                });
            }
        }
        if let Some(d) = &data.deferral {
            for r in &d.reveal {
                rows.push(InvalidationCsvRow {
                    scenario: format!(
                        "generated {} tools, {} searches, {} turns",
                        r.tools, r.searches, r.turns
                    ),
                    mode: "deferred".into(),
                    reveal: r.reveal,
                    invalidations: r.invalidations.clone(),
                });
            }
        }
        out.push(("data/invalidations.csv".to_string(), csv_rows(&rows)));
    }
    out
}
