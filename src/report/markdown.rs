//! `index.md`: the report a design review reads on GitHub. A summary first, then one section
//! per part with its table, charts and the CSV behind it, then failures and settings.

use std::fmt::Write as _;

use super::charts::thousands;
use super::figures::{Figure, Section};
use super::{EvalSet, ReportData};
use crate::eval::ScorerResult;
use crate::output::md_table;
use crate::simulate::result::savings_pct;
use crate::simulate::{ModeResult, ScenarioResult};

/// Misses listed per scorer and query set in `index.md` (all of them are in `misses.csv`).
pub const MISSES_SHOWN: usize = 10;
/// Ranked tools shown for a missed query.
pub const RANKED_SHOWN: usize = 5;

fn int(x: usize) -> String {
    thousands(x as f64, 0)
}

/// One decimal always shown, thousands grouped: `2562.44` → `2,562.4`, `26.0` → `26.0`.
fn fixed1(x: f64) -> String {
    let tenths = (x * 10.0).round();
    let whole = (tenths / 10.0).trunc();
    let frac = (tenths - whole * 10.0).abs() as u64;
    format!("{}.{frac}", thousands(whole, 0))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", int(n), if n == 1 { one } else { many })
}

fn pct(x: f64) -> String {
    format!("{x:.1}%")
}

fn usd(x: f64) -> String {
    if x >= 100.0 {
        format!("${}", thousands(x, 0))
    } else {
        format!("${x:.2}")
    }
}

fn metric(x: f64) -> String {
    // `-0.0` (a sum of nothing, negated) prints as 0.
    let x = if x == 0.0 { 0.0 } else { x };
    format!("{x:.3}")
}

fn figure(out: &mut String, f: &Figure) {
    let _ = writeln!(out, "![{}]({})\n", f.title, f.path);
    let _ = writeln!(out, "*{}*\n", f.caption);
}

fn figures_in<'a>(charts: &'a [Figure], section: &'a Section) -> impl Iterator<Item = &'a Figure> {
    charts.iter().filter(move |f| &f.section == section)
}

/// The scorer with the highest recall@5 (else the first recall metric), ties broken by MRR,
/// then by name.
pub fn best_scorer(set: &EvalSet) -> Option<(&ScorerResult, String)> {
    let ks = &set.result.ks;
    let key = if ks.contains(&5) {
        "recall@5".to_string()
    } else {
        format!("recall@{}", ks.first()?)
    };
    set.result
        .results
        .iter()
        .filter(|s| s.metric(&key).is_some())
        .max_by(|a, b| {
            let m = |s: &ScorerResult, k: &str| s.metric(k).unwrap_or(0.0);
            m(a, &key)
                .total_cmp(&m(b, &key))
                .then_with(|| m(a, "mrr").total_cmp(&m(b, "mrr")))
                .then_with(|| b.scorer.cmp(&a.scorer))
        })
        .map(|s| (s, key))
}

pub fn index(data: &ReportData, charts: &[Figure]) -> String {
    let mut out = String::new();
    out.push_str("# toolbudget report\n\n");
    let profile = data
        .settings
        .profile
        .iter()
        .find(|(k, _)| k == "name")
        .map(|(_, v)| v.as_str())
        .unwrap_or("(none)");
    let _ = writeln!(
        out,
        "What deferred tool loading buys an agent, measured by `toolbudget report`: tokens are \
         counted by the `{}` counter ({}, `{}` rendering of each definition); dollars use the \
         `{}` model profile's list prices. Every number below is computed from the files named \
         in each section; the data behind each table is in `data/` as CSV and JSON.\n",
        data.settings.counter, data.settings.tokenizer, data.settings.render, profile
    );
    let mut ran = Vec::new();
    if !data.scenarios.is_empty() {
        ran.push(plural(data.scenarios.len(), "scenario", "scenarios"));
    }
    if !data.evals.is_empty() {
        let queries: usize = data.evals.iter().map(|e| e.result.query_count).sum();
        ran.push(format!(
            "{} ({})",
            plural(data.evals.len(), "labeled query set", "labeled query sets"),
            plural(queries, "query", "queries")
        ));
    }
    if let Some(sweep) = &data.sweep {
        ran.push(format!(
            "a sweep over {}",
            plural(
                sweep.points.len(),
                "generated catalog",
                "generated catalogs"
            )
        ));
    }
    if !ran.is_empty() {
        let _ = writeln!(out, "This run: {}.\n", ran.join(", "));
    }
    summary(&mut out, data, charts);
    if let Some(s) = &data.sessions {
        out.push_str(&super::sessions::markdown(s, charts));
    }
    scenarios(&mut out, data, charts);
    super::published::section(&mut out, data);
    evals(&mut out, data, charts);
    sweep(&mut out, data, charts);
    super::deferral_view::sections(&mut out, data, charts);
    latency(&mut out, data, charts);
    catalogs(&mut out, data);
    failures(&mut out, data);
    settings(&mut out, data);
    if !data.notes.is_empty() {
        out.push_str("## Notes\n\n");
        for n in &data.notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
    out
}

fn summary(out: &mut String, data: &ReportData, charts: &[Figure]) {
    out.push_str("## Summary\n\n");
    if !data.scenarios.is_empty() {
        scenario_summary(out, data);
    }
    for set in &data.evals {
        if let Some((best, key)) = best_scorer(set) {
            let ci = best
                .ci95
                .get(&key)
                .map(|c| format!(" (95% CI {}–{})", metric(c[0]), metric(c[1])))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- Search on `{}` ({} queries, {} tools): best scorer **{}**, {} = **{}**{}, \
                 MRR {}.",
                set.name(),
                int(set.result.query_count),
                int(set.result.tool_count),
                best.scorer,
                key,
                metric(best.metric(&key).unwrap_or(0.0)),
                ci,
                metric(best.metric("mrr").unwrap_or(0.0)),
            );
        }
    }
    sweep_summary(out, data);
    for line in super::deferral_view::summary_lines(data) {
        let _ = writeln!(out, "- {line}");
    }
    out.push('\n');
    for f in figures_in(charts, &Section::Occupancy) {
        figure(out, f);
    }
}

/// A saving as the report prints it: `n/a` when the result has none, marked `*` when a
/// caveat goes with it (listed under the table).
pub fn saved(s: &ScenarioResult, x: Option<f64>) -> String {
    match x {
        None => "n/a*".to_string(),
        Some(v) if !s.savings.caveats.is_empty() => format!("{}*", pct(v)),
        Some(v) => pct(v),
    }
}

/// Peak occupancy of the context window, marked when a request does not fit.
fn window_use(m: &ModeResult) -> String {
    if m.fits_window {
        pct(m.peak_occupancy_pct)
    } else {
        format!("{} (does not fit)", pct(m.peak_occupancy_pct))
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

/// Calls that failed, came too early or could not be made, deferred (eager's unavailable ones
/// in brackets when there are any).
fn call_failures(s: &ScenarioResult) -> String {
    let mut text = failed_premature_unavailable(&s.deferred);
    if s.eager.counts.unavailable_calls > 0 {
        let _ = write!(
            text,
            " (eager: {} unavailable)",
            int(s.eager.counts.unavailable_calls)
        );
    }
    text
}

fn scenario_summary(out: &mut String, data: &ReportData) {
    out.push_str(
        "Each shipped scenario is replayed twice: **eager** sends every tool definition in \
         every request; **deferred** sends a search tool and a list of the deferred tools, \
         and loads definitions when a search returns them. *Saved* is `(eager − deferred) / \
         eager`; a negative value means deferral cost more; `*` marks a saving to read with \
         the note under the table, `n/a` a conversation that cannot be sent. Cost is for \
         1,000 runs of the conversation. *Cache invalidations*: requests whose cached prefix \
         broke (see [Cache invalidations](#cache-invalidations)).\n\n",
    );
    let arrow = |a: String, b: String| format!("{a} → {b}");
    let rows: Vec<Vec<String>> = data
        .scenarios
        .iter()
        .map(|s| {
            let (e, d) = (&s.eager, &s.deferred);
            vec![
                format!("`{}`", s.name),
                format!("{} ({})", int(s.tool_count), int(s.deferred_count)),
                arrow(int(e.tools_sent), int(d.tools_sent)),
                arrow(int(e.first_request_tokens), int(d.first_request_tokens)),
                saved(s, s.savings.first_request_pct),
                arrow(int(e.total_input_tokens), int(d.total_input_tokens)),
                saved(s, s.savings.total_input_pct),
                searches(d),
                call_failures(s),
                arrow(
                    usd(e.cost_usd.without_caching * 1000.0),
                    usd(d.cost_usd.without_caching * 1000.0),
                ),
                arrow(
                    usd(e.cost_usd.with_caching * 1000.0),
                    usd(d.cost_usd.with_caching * 1000.0),
                ),
                arrow(window_use(e), window_use(d)),
                arrow(
                    int(e.cache_invalidations.requests),
                    int(d.cache_invalidations.requests),
                ),
            ]
        })
        .collect();
    out.push_str(&md_table(
        &[
            "scenario",
            "tools (deferred)",
            "tools sent",
            "first request, tokens eager → deferred",
            "saved",
            "whole conversation, input tokens",
            "saved",
            "searches (misses, retries)",
            "calls failed / premature / unavailable",
            "per 1,000 conversations, no caching",
            "with prompt caching",
            "peak window use",
            "cache invalidations",
        ],
        &rows,
        &[
            false, true, true, true, true, true, true, true, true, true, true, true, true,
        ],
    ));
    out.push('\n');
    for s in data
        .scenarios
        .iter()
        .filter(|s| !s.savings.caveats.is_empty())
    {
        let _ = writeln!(out, "\\* `{}`: {}.\n", s.name, s.savings.caveats.join("; "));
    }
}

fn sweep_summary(out: &mut String, data: &ReportData) {
    let Some(sweep) = &data.sweep else {
        return;
    };
    let Some(last) = sweep.points.last() else {
        return;
    };
    let modes: Vec<String> = last
        .deferred
        .iter()
        .map(|d| {
            format!(
                "{} with a `{}` list ({})",
                int(d.first_request_tokens),
                d.mode.name(),
                pct(d.window_pct)
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "- At {} generated tools the eager first request is {} tokens ({} of a {}-token \
         window); deferred it is {}.",
        int(last.tools),
        int(last.eager_first_request_tokens),
        pct(last.eager_window_pct),
        int(sweep.settings.context_window),
        modes.join(", ")
    );
}

/// The eager-vs-deferred table of one scenario, as rows of (figure, eager, deferred, saved):
/// the report's scenario tables and `simulate`'s table and Markdown are this one view.
/// `3 (12,400, $0.0419): tools 3`, or `0`.
pub fn invalidations(i: &crate::simulate::result::Invalidations) -> String {
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

pub fn mode_rows(s: &ScenarioResult) -> Vec<Vec<String>> {
    let (e, d, sv) = (&s.eager, &s.deferred, &s.savings);
    let row = |name: &str, a: String, b: String, c: String| vec![name.to_string(), a, b, c];
    let both = |name: &str, f: &dyn Fn(&ModeResult) -> String| row(name, f(e), f(d), String::new());
    let cost = |x: f64| format!("${x:.4}");
    let tool_pct = savings_pct(
        e.first_request_tool_tokens as f64,
        d.first_request_tool_tokens as f64,
    );
    vec![
        both("tools sent (first request)", &|m| int(m.tools_sent)),
        row(
            "first request, input tokens",
            int(e.first_request_tokens),
            int(d.first_request_tokens),
            saved(s, sv.first_request_pct),
        ),
        row(
            "  of which tools + deferred list",
            int(e.first_request_tool_tokens),
            int(d.first_request_tool_tokens),
            saved(s, sv.first_request_pct.map(|_| tool_pct)),
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
        ("scorer", st.scorer.clone()),
        ("discovery", st.discovery.clone()),
        ("listing", st.listing.clone()),
        ("list style", st.list_style.clone()),
        ("reveal", st.reveal.clone()),
        ("max results", st.max_results.to_string()),
        ("retry", format!("[{}]", st.retry.join(", "))),
        ("search tool", st.search_tool.clone()),
        ("search tool tokens", st.search_tool_tokens.to_string()),
    ];
    if st.when != "always" {
        settings.push(("when", st.when.clone()));
    }
    settings
        .iter()
        .map(|(k, v)| format!("{k} `{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn scenarios(out: &mut String, data: &ReportData, charts: &[Figure]) {
    if data.scenarios.is_empty() {
        return;
    }
    out.push_str(
        "## Scenarios\n\nPer-request numbers: `data/requests.csv`; totals: `data/scenarios.csv`.\n\n",
    );
    for s in &data.scenarios {
        let _ = writeln!(out, "### `{}`\n", s.name);
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
        for f in figures_in(charts, &Section::Scenario(s.name.clone())) {
            figure(out, f);
        }
    }
}

fn evals(out: &mut String, data: &ReportData, charts: &[Figure]) {
    if data.evals.is_empty() {
        return;
    }
    out.push_str(
        "## Search quality\n\nEach labeled query is searched over its whole catalog (the search \
         tool, never a search result, left out). \
         recall@k: share of a query's expected tools in the first k results; hit@k: at least \
         one found; MRR: 1 / rank of the first expected tool; nDCG@10 with binary gains. Means \
         over all queries (a query with no results scores 0); brackets give the 95% bootstrap \
         interval of recall@5. hit@k, complete@k (every expected tool in the first k) and \
         all intervals: `data/eval.csv`.\n\n",
    );
    for set in &data.evals {
        let _ = writeln!(
            out,
            "### `{}`: {} queries over {} ({} tools)\n",
            set.name(),
            int(set.result.query_count),
            set.catalog,
            int(set.result.tool_count)
        );
        if let Some(first) = set.result.results.first() {
            // recall@k, MRR and nDCG@10 here; hit@k, complete@k and the rest in eval.csv.
            let names: Vec<&str> = first
                .metrics
                .keys()
                .map(String::as_str)
                .filter(|n| n.starts_with("recall@") || *n == "mrr" || *n == "ndcg@10")
                .collect();
            let mut headers = vec!["scorer"];
            headers.extend(names.iter().copied());
            headers.push("recall@5 95% CI");
            headers.push("refused queries");
            let rows: Vec<Vec<String>> = set
                .result
                .results
                .iter()
                .map(|sc| {
                    let mut row = vec![sc.scorer.clone()];
                    row.extend(
                        names
                            .iter()
                            .map(|n| sc.metric(n).map(metric).unwrap_or_default()),
                    );
                    row.push(
                        sc.ci95
                            .get("recall@5")
                            .map(|c| format!("{}–{}", metric(c[0]), metric(c[1])))
                            .unwrap_or_default(),
                    );
                    row.push(int(sc.refused_queries));
                    row
                })
                .collect();
            let mut right = vec![false];
            right.extend(std::iter::repeat_n(true, headers.len() - 1));
            out.push_str(&md_table(&headers, &rows, &right));
            out.push('\n');
        }
        for (scorer, why) in &set.skipped {
            let _ = writeln!(out, "- `{scorer}` not run: {why}");
        }
        if !set.skipped.is_empty() {
            out.push('\n');
        }
        for f in figures_in(charts, &Section::Eval(set.name().to_string())) {
            figure(out, f);
        }
    }
}

fn sweep(out: &mut String, data: &ReportData, charts: &[Figure]) {
    let Some(sweep) = &data.sweep else {
        return;
    };
    let st = &sweep.settings;
    let _ = writeln!(
        out,
        "## Scale sweep\n\nCatalogs of 10 to 10,000 tools generated deterministically (seed {}, \
         {} tools per server) from the shapes of real MCP catalogs (`toolbudget catalog \
         generate`). First request = system prompt ({}) + tool preamble ({}) + either every \
         definition (eager) or the search tool ({}) and the deferred list (deferred). Window: \
         {} tokens ({}). Data: `data/sweep.csv`.\n",
        st.seed,
        st.tools_per_server,
        int(st.system_prompt_tokens),
        int(st.tool_overhead_tokens),
        int(st.search_tool_tokens),
        int(st.context_window),
        st.profile
    );
    let mut headers = vec!["tools", "servers", "eager first request", "eager % window"];
    let modes: Vec<&str> = sweep
        .points
        .first()
        .map(|p| p.deferred.iter().map(|d| d.mode.name()).collect())
        .unwrap_or_default();
    let labels: Vec<String> = modes
        .iter()
        .flat_map(|m| {
            [
                format!("`{m}` list"),
                format!("`{m}` first request"),
                format!("`{m}` saved"),
            ]
        })
        .collect();
    headers.extend(labels.iter().map(|s| s.as_str()));
    let rows: Vec<Vec<String>> = sweep
        .points
        .iter()
        .map(|p| {
            let mut row = vec![
                int(p.tools),
                int(p.servers),
                int(p.eager_first_request_tokens),
                pct(p.eager_window_pct),
            ];
            for d in &p.deferred {
                row.push(int(d.list_tokens));
                row.push(int(d.first_request_tokens));
                row.push(pct(d.savings_pct));
            }
            row
        })
        .collect();
    out.push_str(&md_table(&headers, &rows, &vec![true; headers.len()]));
    out.push('\n');
    window_limits(out, sweep, &modes);
    out.push('\n');
    for f in figures_in(charts, &Section::Sweep) {
        figure(out, f);
    }
}

/// Where each listing mode stops fitting: the first size whose deferred first request takes
/// more than 10% (or all) of the window; and where eager overflows.
fn window_limits(out: &mut String, sweep: &super::Sweep, modes: &[&str]) {
    for mode in modes {
        let over = |limit: f64| {
            sweep.points.iter().find(|p| {
                p.deferred
                    .iter()
                    .any(|d| d.mode.name() == *mode && d.window_pct > limit)
            })
        };
        let text = match (over(10.0), over(100.0)) {
            (None, _) => "stays under 10% of the window at every size".to_string(),
            (Some(p), None) => format!("passes 10% of the window at {} tools", int(p.tools)),
            (Some(p), Some(q)) => format!(
                "passes 10% of the window at {} tools and overflows it at {}",
                int(p.tools),
                int(q.tools)
            ),
        };
        let _ = writeln!(out, "- `{mode}` list: {text}.");
    }
    if let Some(p) = sweep.points.iter().find(|p| p.eager_window_pct > 100.0) {
        let _ = writeln!(
            out,
            "- Eager overflows the window at {} tools.",
            int(p.tools)
        );
    }
}

fn latency(out: &mut String, data: &ReportData, charts: &[Figure]) {
    let lat = &data.latency;
    if lat.eval.is_empty() && lat.sweep.is_empty() {
        return;
    }
    out.push_str(
        "## Search latency (measured)\n\nWall-clock time of the scorers on this machine: the \
         only numbers in this report that change between runs (`data/latency.csv`, \
         `data/latency.json`); the machine and build they come from are in the settings \
         table.\n\n",
    );
    if !lat.sweep.is_empty() {
        let rows: Vec<Vec<String>> = lat
            .sweep
            .iter()
            .map(|l| {
                vec![
                    int(l.tools),
                    l.scorer.clone(),
                    fixed1(l.build_ms),
                    int(l.latency_us.searches),
                    fixed1(l.latency_us.p50),
                    fixed1(l.latency_us.p95),
                ]
            })
            .collect();
        out.push_str(&md_table(
            &[
                "tools",
                "scorer",
                "index build (ms)",
                "queries",
                "p50 (µs)",
                "p95 (µs)",
            ],
            &rows,
            &[true, false, true, true, true, true],
        ));
        out.push('\n');
    }
    if !lat.eval.is_empty() {
        let rows: Vec<Vec<String>> = lat
            .eval
            .iter()
            .map(|l| {
                vec![
                    format!("`{}`", l.set),
                    l.scorer.clone(),
                    fixed1(l.latency_us.p50),
                    fixed1(l.latency_us.p95),
                ]
            })
            .collect();
        out.push_str(&md_table(
            &["query set", "scorer", "p50 (µs)", "p95 (µs)"],
            &rows,
            &[false, false, true, true],
        ));
        out.push('\n');
    }
    for f in figures_in(charts, &Section::Latency) {
        figure(out, f);
    }
}

fn catalogs(out: &mut String, data: &ReportData) {
    if data.catalogs.is_empty() {
        return;
    }
    out.push_str("## Catalogs\n\nWhat the tool definitions cost when all are sent. Data: `data/catalogs.csv`.\n\n");
    let rows: Vec<Vec<String>> = data
        .catalogs
        .iter()
        .map(|c| {
            vec![
                format!("`{}`", c.catalog),
                int(c.tool_count),
                int(c.servers),
                int(c.tokens),
                format!("{:.1}", c.mean_tokens),
                int(c.max_tokens),
            ]
        })
        .collect();
    out.push_str(&md_table(
        &[
            "catalog",
            "tools",
            "servers",
            "tokens",
            "mean per tool",
            "largest tool",
        ],
        &rows,
        &[false, true, true, true, true, true],
    ));
    out.push('\n');
}

fn failures(out: &mut String, data: &ReportData) {
    if data.evals.iter().all(|s| s.misses.is_empty()) {
        return;
    }
    out.push_str("## Failures\n\n");
    for set in &data.evals {
        if set.misses.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "### `{}`: queries whose expected tools were not all in the top {}\n",
            set.name(),
            set.miss_k
        );
        for sc in &set.result.results {
            let misses: Vec<_> = set
                .misses
                .iter()
                .filter(|m| m.scorer == sc.scorer)
                .collect();
            if misses.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "**{}**: {} missed{}.\n",
                sc.scorer,
                int(misses.len()),
                if misses.len() > MISSES_SHOWN {
                    format!(", first {MISSES_SHOWN} shown (all in `data/misses.csv`)")
                } else {
                    String::new()
                }
            );
            let rows: Vec<Vec<String>> = misses
                .iter()
                .take(MISSES_SHOWN)
                .map(|m| {
                    vec![
                        format!("`{}`", m.query_id),
                        m.query.clone(),
                        m.expected
                            .split_whitespace()
                            .map(|e| format!("`{e}`"))
                            .collect::<Vec<_>>()
                            .join(" "),
                        if m.ranked.is_empty() {
                            "(nothing)".to_string()
                        } else {
                            m.ranked
                                .split_whitespace()
                                .take(RANKED_SHOWN)
                                .map(|e| format!("`{e}`"))
                                .collect::<Vec<_>>()
                                .join(" ")
                        },
                    ]
                })
                .collect();
            out.push_str(&md_table(
                &["query", "text", "expected", "ranked instead (best first)"],
                &rows,
                &[false; 4],
            ));
            out.push('\n');
        }
    }
}

fn settings(out: &mut String, data: &ReportData) {
    out.push_str("## Settings\n\n");
    let mut rows = vec![
        vec!["counter".to_string(), data.settings.counter.clone()],
        vec!["tokenizer".to_string(), data.settings.tokenizer.clone()],
        vec!["rendering".to_string(), data.settings.render.clone()],
    ];
    rows.extend(
        data.settings
            .profile
            .iter()
            .map(|(k, v)| vec![format!("profile: {k}"), v.clone()]),
    );
    rows.extend(
        data.settings
            .other
            .iter()
            .map(|(k, v)| vec![k.clone(), v.clone()]),
    );
    for set in &data.evals {
        for sc in &set.result.results {
            if !sc.settings.is_empty()
                && !rows.iter().any(|r| r[0] == format!("scorer {}", sc.scorer))
            {
                rows.push(vec![
                    format!("scorer {}", sc.scorer),
                    sc.settings
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                ]);
            }
        }
    }
    out.push_str(&md_table(&["setting", "value"], &rows, &[false, false]));
    out.push('\n');
}

#[cfg(test)]
mod tests {
    #[test]
    fn fixed1_keeps_one_decimal() {
        assert_eq!(super::fixed1(2562.44), "2,562.4");
        assert_eq!(super::fixed1(26.0), "26.0");
        assert_eq!(super::fixed1(0.06), "0.1");
        assert_eq!(super::fixed1(1999.96), "2,000.0");
    }
}
