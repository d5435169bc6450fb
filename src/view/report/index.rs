//! `index.md`: the report a design review reads on GitHub. The decision page first, then a
//! summary, then one section per part with its table, charts and the CSV behind it, then
//! failures and settings. `index.html` is this Markdown converted (`html`).

use crate::output::md_code;
use std::fmt::Write as _;

use super::figures::{self, Figure, Section};
use super::summary::Summary;
use crate::experiment::report::ReportData;
use crate::number::{fixed1, int, percent, plural};
use crate::output::md_table;

pub fn index(data: &ReportData, charts: &[Figure], sum: &Summary) -> String {
    let mut out = String::new();
    out.push_str("# toolbudget report\n\n");
    let profile = data
        .settings
        .profile
        .iter()
        .find(|(k, _)| k == "name")
        .map_or("(none)", |(_, v)| v.as_str());
    let prices = data
        .settings
        .profile
        .iter()
        .find(|(k, _)| k == "source")
        .filter(|(_, v)| !v.is_empty())
        .map_or(String::new(), |(_, v)| format!(" ({v})"));
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
    let ran = if ran.is_empty() {
        String::new()
    } else {
        format!(" This run: {}.", ran.join(", "))
    };
    let _ = writeln!(
        out,
        "Tokens: the `{}` counter ({}, `{}` rendering); dollars: the `{}` profile's list \
         prices{}; every setting: [Settings](#settings).{ran}\n",
        data.settings.counter,
        data.settings.tokenizer(),
        data.settings.counter.render_name(),
        profile,
        prices
    );
    super::decision::page(&mut out, sum, data, charts);
    summary(&mut out, data);
    if let Some(s) = &data.sessions {
        out.push_str(&crate::view::sessions::markdown(s, charts));
    }
    super::scenarios::sections(&mut out, &data.scenarios, charts);
    if let Some(c) = &data.clients {
        crate::view::clients::section(&mut out, c, charts);
    }
    crate::view::published::section(&mut out, &data.scenarios);
    crate::view::eval::sections(&mut out, &data.evals, charts);
    sweep(&mut out, data, charts);
    crate::view::report::deferral::sections(&mut out, data, charts);
    latency(&mut out, data, charts);
    catalogs(&mut out, data);
    crate::view::eval::failures(&mut out, &data.evals);
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

fn summary(out: &mut String, data: &ReportData) {
    out.push_str("## Summary\n\n");
    if !data.scenarios.is_empty() {
        super::scenarios::summary_table(out, &data.scenarios);
    }
    crate::view::eval::summary(out, &data.evals);
    sweep_summary(out, data);
    for line in crate::view::report::deferral::summary_lines(data) {
        let _ = writeln!(out, "- {line}");
    }
    out.push('\n');
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
                percent(d.window_pct, 1)
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "- At {} generated tools the eager first request is {} tokens ({} of a {}-token \
         window); deferred it is {}.",
        int(last.tools),
        int(last.eager_first_request_tokens),
        percent(last.eager_window_pct, 1),
        int(sweep.settings.context_window),
        modes.join(", ")
    );
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
    let modes: Vec<&str> = sweep
        .points
        .first()
        .map(|p| p.deferred.iter().map(|d| d.mode.name()).collect())
        .unwrap_or_default();
    // The list's own tokens and the window shares of each mode are in data/sweep.csv.
    let labels: Vec<String> = modes
        .iter()
        .map(|m| format!("`{m}` list: first request (saved)"))
        .collect();
    let mut headers = vec!["tools", "servers", "eager first request (% window)"];
    headers.extend(labels.iter().map(std::string::String::as_str));
    let rows: Vec<Vec<String>> = sweep
        .points
        .iter()
        .map(|p| {
            let mut row = vec![
                int(p.tools),
                int(p.servers),
                format!(
                    "{} ({})",
                    int(p.eager_first_request_tokens),
                    percent(p.eager_window_pct, 1)
                ),
            ];
            for d in &p.deferred {
                row.push(format!(
                    "{} ({})",
                    int(d.first_request_tokens),
                    percent(d.savings_pct, 1)
                ));
            }
            row
        })
        .collect();
    out.push_str(&md_table(&headers, &rows, &vec![true; headers.len()]));
    out.push('\n');
    window_limits(out, sweep, &modes);
    out.push('\n');
    for f in figures::of(charts, &Section::Sweep) {
        figures::embed(out, f);
    }
}

/// Where each listing mode stops fitting: the first size whose deferred first request takes
/// more than 10% (or all) of the window; and where eager overflows.
fn window_limits(out: &mut String, sweep: &crate::experiment::sweep::Sweep, modes: &[&str]) {
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
                    l.scorer.to_string(),
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
                    md_code(&l.set),
                    l.scorer.to_string(),
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
    for f in figures::of(charts, &Section::Latency) {
        figures::embed(out, f);
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
                md_code(&c.catalog),
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

fn settings(out: &mut String, data: &ReportData) {
    out.push_str("## Settings\n\n");
    let mut rows = vec![
        vec!["counter".to_string(), data.settings.counter.to_string()],
        vec!["tokenizer".to_string(), data.settings.tokenizer()],
        vec![
            "rendering".to_string(),
            data.settings.counter.render_name().to_string(),
        ],
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
