//! `index.md`: the report a design review reads on GitHub. A summary first, then one section
//! per part with its table, charts and the CSV behind it, then failures and settings.

use std::fmt::Write as _;

use super::charts::thousands;
use super::figures::{Figure, Section};
use super::{EvalSet, ReportData, ScenarioRow, ScorerMetrics};
use crate::output::md_table;

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
pub fn best_scorer(set: &EvalSet) -> Option<(&ScorerMetrics, String)> {
    let key = if set.ks.contains(&5) {
        "recall@5".to_string()
    } else {
        format!("recall@{}", set.ks.first()?)
    };
    set.scorers
        .iter()
        .filter(|s| s.metric(&key).is_some())
        .max_by(|a, b| {
            let m = |s: &ScorerMetrics, k: &str| s.metric(k).unwrap_or(0.0);
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
        let queries: usize = data.evals.iter().map(|e| e.query_count).sum();
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
    scenarios(&mut out, data, charts);
    published(&mut out, data);
    evals(&mut out, data, charts);
    sweep(&mut out, data, charts);
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
        out.push_str(
            "Each shipped scenario is replayed twice: **eager** sends every tool definition in \
             every request; **deferred** sends a search tool and a list of the deferred tools, \
             and loads definitions when a search returns them. *Saved* is `(eager − deferred) / \
             eager`; a negative value means deferral cost more. Cost is for 1,000 runs of the \
             conversation.\n\n",
        );
        let rows: Vec<Vec<String>> = data
            .scenarios
            .iter()
            .map(|s| {
                vec![
                    format!("`{}`", s.name),
                    format!("{} ({})", int(s.tool_count), int(s.deferred_count)),
                    format!(
                        "{} → {}",
                        int(s.eager.first_request_tokens),
                        int(s.deferred.first_request_tokens)
                    ),
                    pct(s.first_request_savings_pct),
                    format!(
                        "{} → {}",
                        int(s.eager.total_input_tokens),
                        int(s.deferred.total_input_tokens)
                    ),
                    pct(s.total_input_savings_pct),
                    format!("{} ({})", int(s.deferred.searches), int(s.deferred.misses)),
                    format!(
                        "{} → {}",
                        usd(s.eager.cost_usd * 1000.0),
                        usd(s.deferred.cost_usd * 1000.0)
                    ),
                    format!(
                        "{} → {}",
                        usd(s.eager.cost_cached_usd * 1000.0),
                        usd(s.deferred.cost_cached_usd * 1000.0)
                    ),
                ]
            })
            .collect();
        out.push_str(&md_table(
            &[
                "scenario",
                "tools (deferred)",
                "first request, tokens eager → deferred",
                "saved",
                "whole conversation, input tokens",
                "saved",
                "searches (misses)",
                "per 1,000 conversations, no caching",
                "with prompt caching",
            ],
            &rows,
            &[false, true, true, true, true, true, true, true, true],
        ));
        out.push('\n');
    }
    for set in &data.evals {
        if let Some((best, key)) = best_scorer(set) {
            let ci = best
                .ci95
                .iter()
                .find(|(m, _)| *m == key)
                .map(|(_, c)| format!(" (95% CI {}–{})", metric(c[0]), metric(c[1])))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- Search on `{}` ({} queries, {} tools): best scorer **{}**, {} = **{}**{}, \
                 MRR {}.",
                set.name,
                int(set.query_count),
                int(set.tool_count),
                best.scorer,
                key,
                metric(best.metric(&key).unwrap_or(0.0)),
                ci,
                metric(best.metric("mrr").unwrap_or(0.0)),
            );
        }
    }
    if let Some(sweep) = &data.sweep
        && let Some(last) = sweep.points.last()
    {
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
    out.push('\n');
    for f in figures_in(charts, &Section::Occupancy) {
        figure(out, f);
    }
}

fn mode_table(s: &ScenarioRow) -> String {
    let rows = vec![
        vec![
            "first request, input tokens".to_string(),
            int(s.eager.first_request_tokens),
            int(s.deferred.first_request_tokens),
            pct(s.first_request_savings_pct),
        ],
        vec![
            "whole conversation, input tokens".to_string(),
            int(s.eager.total_input_tokens),
            int(s.deferred.total_input_tokens),
            pct(s.total_input_savings_pct),
        ],
        vec![
            "requests".to_string(),
            int(s.eager.requests),
            int(s.deferred.requests),
            String::new(),
        ],
        vec![
            "searches (misses)".to_string(),
            "–".to_string(),
            format!("{} ({})", int(s.deferred.searches), int(s.deferred.misses)),
            String::new(),
        ],
        vec![
            "output tokens".to_string(),
            int(s.eager.output_tokens),
            int(s.deferred.output_tokens),
            String::new(),
        ],
        vec![
            "cost per conversation, no caching".to_string(),
            format!("${:.4}", s.eager.cost_usd),
            format!("${:.4}", s.deferred.cost_usd),
            pct(s.cost_savings_pct),
        ],
        vec![
            "cost per conversation, prompt caching".to_string(),
            format!("${:.4}", s.eager.cost_cached_usd),
            format!("${:.4}", s.deferred.cost_cached_usd),
            pct(s.cost_cached_savings_pct),
        ],
        vec![
            "peak context-window occupancy".to_string(),
            pct(s.eager.peak_occupancy_pct),
            pct(s.deferred.peak_occupancy_pct),
            String::new(),
        ],
    ];
    md_table(
        &["", "eager", "deferred", "saved"],
        &rows,
        &[false, true, true, true],
    )
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
            s.settings
                .iter()
                .map(|(k, v)| format!("{k} `{v}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        out.push_str(&mode_table(s));
        out.push('\n');
        for f in figures_in(charts, &Section::Scenario(s.name.clone())) {
            figure(out, f);
        }
    }
}

fn published(out: &mut String, data: &ReportData) {
    let rows: Vec<Vec<String>> = data
        .scenarios
        .iter()
        .flat_map(|s| {
            s.published.iter().map(|p| {
                let tokens = |x: Option<f64>| x.map(|v| thousands(v, 0)).unwrap_or("–".into());
                vec![
                    format!("`{}`", s.name),
                    p.claim.clone(),
                    source_link(&p.source),
                    format!("`{}`", p.metric),
                    format!(
                        "{} → {}",
                        tokens(p.published_eager),
                        tokens(p.published_deferred)
                    ),
                    p.published_saved_pct.map(pct).unwrap_or("–".into()),
                    format!(
                        "{} → {}",
                        thousands(p.measured_eager, 0),
                        thousands(p.measured_deferred, 0)
                    ),
                    pct(p.measured_saved_pct),
                ]
            })
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push_str(
        "## Published figures beside measured\n\nWhat vendors and papers report, next to what \
         this run measured for the scenario built to mirror the claim. They differ in \
         tokenizer and catalog, so agreement in direction and rough size is what to look for. \
         Data: `data/published.csv`.\n\n",
    );
    out.push_str(&md_table(
        &[
            "scenario",
            "claim",
            "source",
            "compared figure",
            "published, eager → deferred",
            "saved",
            "measured, eager → deferred",
            "saved",
        ],
        &rows,
        &[false, false, false, false, true, true, true, true],
    ));
    out.push('\n');
}

/// A URL becomes a short link (its host), anything else is shown as written.
fn source_link(source: &str) -> String {
    match source
        .strip_prefix("https://")
        .or_else(|| source.strip_prefix("http://"))
    {
        Some(rest) => {
            let host = rest.split('/').next().unwrap_or(rest);
            format!("[{host}]({source})")
        }
        None => source.to_string(),
    }
}

fn evals(out: &mut String, data: &ReportData, charts: &[Figure]) {
    if data.evals.is_empty() {
        return;
    }
    out.push_str(
        "## Search quality\n\nEach labeled query is searched over its whole catalog. \
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
            set.name,
            int(set.query_count),
            set.catalog,
            int(set.tool_count)
        );
        if let Some(first) = set.scorers.first() {
            // recall@k, MRR and nDCG@10 here; hit@k, complete@k and the rest in eval.csv.
            let names: Vec<&str> = first
                .metrics
                .iter()
                .map(|(n, _)| n.as_str())
                .filter(|n| n.starts_with("recall@") || *n == "mrr" || *n == "ndcg@10")
                .collect();
            let mut headers = vec!["scorer"];
            headers.extend(names.iter().copied());
            headers.push("recall@5 95% CI");
            headers.push("failed queries");
            let rows: Vec<Vec<String>> = set
                .scorers
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
                            .iter()
                            .find(|(m, _)| m == "recall@5")
                            .map(|(_, c)| format!("{}–{}", metric(c[0]), metric(c[1])))
                            .unwrap_or_default(),
                    );
                    row.push(int(sc.failed_queries));
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
        for f in figures_in(charts, &Section::Eval(set.name.clone())) {
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
    // Where each listing mode stops fitting: the first size whose deferred first request
    // takes more than 10% (or all) of the window.
    for mode in &modes {
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
    out.push('\n');
    for f in figures_in(charts, &Section::Sweep) {
        figure(out, f);
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
         `data/latency.json`).\n\n",
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
                    int(l.queries),
                    fixed1(l.p50_us),
                    fixed1(l.p95_us),
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
                    fixed1(l.p50_us),
                    fixed1(l.p95_us),
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
                format!("`{}`", c.name),
                int(c.tools),
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
            set.name, set.miss_k
        );
        for sc in &set.scorers {
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
                            .iter()
                            .map(|e| format!("`{e}`"))
                            .collect::<Vec<_>>()
                            .join(" "),
                        if m.ranked.is_empty() {
                            "(nothing)".to_string()
                        } else {
                            m.ranked
                                .iter()
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
        for sc in &set.scorers {
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
