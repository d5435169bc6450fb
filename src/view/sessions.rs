//! The report's "Your sessions" section (`report --sessions DIR`): pure renderers from a
//! finished [`SessionsReport`] to Markdown, CSV and SVG. Nothing here replays or fits.

use crate::experiment::session_import::ModeTotals;
use crate::experiment::sessions::SessionsReport;
use crate::number::thousands;
use crate::number::{percent, plural, usd};
use crate::output::{csv, md_table};
use crate::simulate::result::savings_pct;
use crate::view::chart::{
    Bar, BarPanel, ChartError, LegendAt, LineChart, Series, StackedBars, line_chart, stacked_bars,
};
use crate::view::report::figures::{Figure, Section};

/// The section's charts: billed vs modeled per request, input per session per mode (cache
/// reads apart), and cumulative cost per mode with and without caching.
pub fn figures(s: &SessionsReport) -> Result<Vec<Figure>, ChartError> {
    let mut out = Vec::new();
    if s.sessions.iter().any(|x| !x.pairs.is_empty()) {
        out.push(billed_vs_modeled(s)?);
    }
    if !s.sessions.is_empty() {
        out.push(input_per_session(s)?);
        out.push(cumulative_cost(s)?);
    }
    Ok(out)
}

/// The counters the sessions' modeled tokens come from, for an axis title: `anthropic-estimate,
/// calibrated`.
fn counters(s: &SessionsReport) -> String {
    let mut names: Vec<&str> = Vec::new();
    for x in &s.sessions {
        if !names.contains(&x.counter) {
            names.push(x.counter);
        }
    }
    if names.is_empty() {
        "calibrated".into()
    } else {
        format!("{}, calibrated", names.join(" and "))
    }
}

fn billed_vs_modeled(s: &SessionsReport) -> Result<Figure, ChartError> {
    let points: Vec<(f64, f64)> = s
        .sessions
        .iter()
        .flat_map(|x| x.pairs.iter().map(|&(b, m)| (b as f64, m as f64)))
        .collect();
    let max = points.iter().fold(0.0f64, |a, p| a.max(p.0).max(p.1));
    let mut spec = LineChart::new(
        "Billed vs modeled input, per request",
        "billed prompt (input + cache write + cache read), tokens",
        &format!("modeled input, tokens ({})", counters(s)),
        vec![
            Series::new("requests", points).scatter(),
            Series::new("modeled = billed", vec![(0.0, 0.0), (max, max)]).reference(),
        ],
    );
    spec.legend = LegendAt::UpperLeft;
    Ok(Figure {
        section: Section::Sessions,
        path: "charts/sessions-billed-vs-modeled.svg".into(),
        title: spec.title.clone(),
        caption: format!(
            "One point per billed request the replay could pair, the model calibrated from the \
             same bills. On the dashed line the model equals the bill; median error {}, 90th \
             percentile {} over {} requests.",
            percent(s.error.median_abs_pct, 2),
            percent(s.error.p90_abs_pct, 2),
            s.error.requests
        ),
        svg: line_chart(&spec)?,
    })
}

fn stack(m: &ModeTotals) -> Vec<f64> {
    let cached = m.cached_input_tokens.min(m.input_tokens);
    vec![cached as f64, (m.input_tokens - cached) as f64]
}

fn input_per_session(s: &SessionsReport) -> Result<Figure, ChartError> {
    let bars = |f: &dyn Fn(usize) -> ModeTotals| -> Vec<Bar> {
        (0..s.sessions.len())
            .map(|i| Bar {
                label: (i + 1).to_string(),
                values: stack(&f(i)),
            })
            .collect()
    };
    let mut panels = vec![BarPanel {
        title: format!(
            "eager: {} input tokens",
            thousands(s.eager.input_tokens as f64, 0)
        ),
        bars: bars(&|i| s.sessions[i].eager),
    }];
    for (k, v) in s.deferred.iter().enumerate() {
        panels.push(BarPanel {
            title: format!(
                "deferred, {}: {} input tokens, {}, {}",
                v.variant,
                thousands(v.deferred.input_tokens as f64, 0),
                plural(v.deferred.searches, "search", "searches"),
                plural(v.deferred.misses, "miss", "misses"),
            ),
            bars: bars(&|i| s.sessions[i].deferred[k].deferred),
        });
    }
    let spec = StackedBars {
        title: format!(
            "Input tokens per session, replayed eager and deferred ({})",
            counters(s)
        ),
        x_label: "session (numbered as in the table)".into(),
        y_label: "input tokens".into(),
        parts: vec!["read from the cache".into(), "not cached".into()],
        panels,
    };
    Ok(Figure {
        section: Section::Sessions,
        path: "charts/sessions-input.svg".into(),
        title: spec.title.clone(),
        caption: "One bar per imported session, its input summed over every request, split into \
                  what the prompt cache serves and what it does not; the panels share the y \
                  scale. Deferral shrinks the bars when the tools it leaves out outweigh the \
                  searches it adds."
            .into(),
        svg: stacked_bars(&spec)?,
    })
}

fn cumulative_cost(s: &SessionsReport) -> Result<Figure, ChartError> {
    let running = |f: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
        let mut total = 0.0;
        (0..s.sessions.len())
            .map(|i| {
                total += f(i);
                ((i + 1) as f64, total)
            })
            .collect()
    };
    let mut series = vec![
        Series::new(
            "eager, cached",
            running(&|i| s.sessions[i].eager.cost_cached_usd),
        )
        .colored(0),
        Series::new(
            "eager, no caching",
            running(&|i| s.sessions[i].eager.cost_usd),
        )
        .colored(0)
        .dashed(),
    ];
    if let Some(v) = s.deferred.first() {
        series.push(
            Series::new(
                format!("deferred ({}), cached", v.variant),
                running(&|i| s.sessions[i].deferred[0].deferred.cost_cached_usd),
            )
            .colored(1),
        );
        series.push(
            Series::new(
                format!("deferred ({}), no caching", v.variant),
                running(&|i| s.sessions[i].deferred[0].deferred.cost_usd),
            )
            .colored(1)
            .dashed(),
        );
    }
    let mut spec = LineChart::new(
        "Cumulative cost over the imported sessions",
        "sessions (in table order)",
        "USD, list prices of each session's model",
        series,
    );
    spec.x_integer = true;
    Ok(Figure {
        section: Section::Sessions,
        path: "charts/sessions-cost.svg".into(),
        title: spec.title.clone(),
        caption: "Running total of what the sessions would have cost, eager and deferred, with \
                  prompt caching (solid) and without (dashed), from the calibrated model."
            .into(),
        svg: line_chart(&spec)?,
    })
}

const CSV_COLUMNS: &[&str] = &[
    "session",
    "ran",
    "model",
    "requests",
    "billed_input_tokens",
    "modeled_input_tokens",
    "median_error_pct",
    "p90_error_pct",
    "mode",
    "input_tokens",
    "cached_input_tokens",
    "cost_usd",
    "cost_cached_usd",
    "searches",
    "misses",
    "deferred_list_tokens",
];

/// `data/sessions.csv`: one row per session and mode (eager, then each deferred variant).
pub fn csv_file(s: &SessionsReport) -> String {
    let mut rows = Vec::new();
    for x in &s.sessions {
        let modes = std::iter::once(("eager".to_string(), &x.eager)).chain(
            x.deferred
                .iter()
                .map(|v| (format!("deferred {}", v.variant), &v.deferred)),
        );
        for (mode, m) in modes {
            rows.push(vec![
                x.name.clone(),
                x.ran_as.name().to_string(),
                x.model.clone(),
                x.requests.to_string(),
                x.billed_input_tokens.to_string(),
                x.modeled_input_tokens.to_string(),
                x.error.median_abs_pct.to_string(),
                x.error.p90_abs_pct.to_string(),
                mode,
                m.input_tokens.to_string(),
                m.cached_input_tokens.to_string(),
                m.cost_usd.to_string(),
                m.cost_cached_usd.to_string(),
                m.searches.to_string(),
                m.misses.to_string(),
                m.deferred_list_tokens.to_string(),
            ]);
        }
    }
    csv(CSV_COLUMNS, &rows)
}

fn int(x: u64) -> String {
    crate::number::int(x as usize)
}

fn fit_lines(s: &SessionsReport) -> String {
    let mut out = String::new();
    for c in &s.calibrations {
        let held = c.held_out.as_ref().map_or_else(
            || "no held-out error (too few requests)".to_string(),
            |h| {
                format!(
                    "held-out error median {}, p90 {} against {} and {} uncalibrated ({} folds)",
                    percent(h.median_abs_pct, 2),
                    percent(h.p90_abs_pct, 2),
                    percent(h.uncalibrated_median_abs_pct, 2),
                    percent(h.uncalibrated_p90_abs_pct, 2),
                    h.folds
                )
            },
        );
        out.push_str(&format!(
            "- **{}** ({}): n = {} requests, R² {}, {held}; system prompt {} tokens, {} provider tokens per counted token (residual {} tokens RMS){}. {}\n",
            c.model,
            c.counter,
            c.requests,
            c.r2,
            thousands(c.system_prompt_tokens, 0),
            c.scale,
            thousands(c.rms_residual_tokens, 0),
            c.subagent_system_prompt_tokens
                .map(|p| format!("; subagents' system prompt {} tokens over {} requests", thousands(p, 0), c.subagent_requests))
                .unwrap_or_default(),
            if c.applied {
                "Applied.".to_string()
            } else {
                format!("**Not applied** ({}): these sessions are replayed uncalibrated.", c.notes.join("; "))
            }
        ));
    }
    if out.is_empty() {
        out.push_str("- No calibration in the folder: the model is uncalibrated (system prompt 0, scale 1).\n");
    }
    let rough: Vec<String> = s
        .calibrations
        .iter()
        .filter(|c| c.applied && (c.constrained || c.r2 < 0.9))
        .map(|c| {
            let why = match (c.constrained, c.r2 < 0.9) {
                (true, true) => format!(
                    "the free fit wanted a negative system prompt, and R² is {}",
                    c.r2
                ),
                (true, false) => {
                    "the free fit wanted a negative system prompt (fixed at 0)".to_string()
                }
                _ => format!("R² is {}", c.r2),
            };
            format!("{} ({why})", c.model)
        })
        .collect();
    if !rough.is_empty() {
        out.push_str(&format!(
            "\nApplied, but the bills follow the model loosely for {}: the sessions send \
             something their scenarios do not hold (another client's prompt, tools outside the \
             catalogs, context the log does not record), so read their replays below as rough.\n",
            rough.join("; ")
        ));
    }
    out
}

/// Whether the model searched before it used deferred tools, per session and overall (as
/// `session import` measured them; sessions imported before it was measured are left out).
fn adoption_section(s: &SessionsReport) -> String {
    let rows: Vec<(String, crate::adoption::Adoption)> = s
        .sessions
        .iter()
        .filter_map(|r| Some((r.name.clone(), r.adoption?)))
        .collect();
    if s.adoption.searches + s.adoption.deferred_calls == 0 {
        return String::new();
    }
    let mut out = format!(
        "\n### Did the model search first?\n\nOf {} the model made to deferred tools (listed \
         by name only until a search loads them), {} came after a search that had returned the \
         tool and {} came first, before any search returned it ({} of those failed). Of its {}, \
         {} were `select:` and {} returned nothing.\n\n",
        plural(s.adoption.deferred_calls, "call", "calls"),
        percent(s.adoption.found_pct(), 2),
        percent(s.adoption.first_pct(), 2),
        s.adoption.failed_first_calls,
        plural(s.adoption.searches, "search", "searches"),
        s.adoption.select_searches,
        s.adoption.empty_searches,
    );
    out.push_str(&super::session_import::adoption_table(
        &rows,
        &s.adoption,
        crate::output::Format::Md,
    ));
    out
}

/// How each scorer does on the searches the model really made (the folder's mined queries).
fn searches_section(s: &SessionsReport) -> String {
    let Some(first) = s.searches.first().filter(|x| x.searches > 0) else {
        return String::new();
    };
    let mut out = format!(
        "\n### The model's own searches\n\n{} the model made with the search tool, each \
         labeled with the deferred tools it then called (`queries.jsonl`, written by `session \
         import`; `eval --queries` scores them too). A search is *answered* when every one of \
         those tools is in the scorer's top k (the session's `max_results`).\n\n",
        plural(first.searches, "search", "searches"),
    );
    let classes: Vec<String> = first.by_class.iter().map(|c| c.0.clone()).collect();
    let mut headers: Vec<String> = vec![
        "scorer".into(),
        "answered in top k".into(),
        "at least one in top k".into(),
    ];
    headers.extend(classes.iter().map(|c| format!("{c}: answered")));
    let rows: Vec<Vec<String>> = s
        .searches
        .iter()
        .map(|x| {
            let mut r = vec![
                x.scorer.clone(),
                format!("{} of {}", x.answered, x.searches),
                format!("{} of {}", x.answered_any, x.searches),
            ];
            for c in &classes {
                let (n, a) = x
                    .by_class
                    .iter()
                    .find(|b| &b.0 == c)
                    .map_or((0, 0), |b| (b.1, b.2));
                r.push(format!("{a} of {n}"));
            }
            r
        })
        .collect();
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let right: Vec<bool> = (0..h.len()).map(|i| i > 0).collect();
    out.push_str(&md_table(&h, &rows, &right));
    out
}

fn bill_table(s: &SessionsReport) -> String {
    let headers = [
        "#",
        "session",
        "ran",
        "model",
        "requests",
        "billed input",
        "modeled input",
        "median error",
        "p90 error",
    ];
    let rows: Vec<Vec<String>> = s
        .sessions
        .iter()
        .enumerate()
        .map(|(i, x)| {
            vec![
                (i + 1).to_string(),
                x.name.clone(),
                x.ran_as.name().to_string(),
                x.model.clone(),
                x.requests.to_string(),
                int(x.billed_input_tokens),
                int(x.modeled_input_tokens),
                percent(x.error.median_abs_pct, 2),
                percent(x.error.p90_abs_pct, 2),
            ]
        })
        .collect();
    let right = [true, false, false, false, true, true, true, true, true];
    md_table(&headers, &rows, &right)
}

fn counterfactual_table(s: &SessionsReport) -> String {
    let mut headers: Vec<String> = vec![
        "#".into(),
        "eager input".into(),
        "eager $ (cached / not)".into(),
    ];
    for v in &s.variants {
        headers.push(format!("deferred {v}: input"));
        headers.push("of which the deferred list".into());
        headers.push("saved".into());
        headers.push("$ (cached / not)".into());
        headers.push("searches / misses".into());
    }
    let row = |label: String, e: &ModeTotals, ds: Vec<&ModeTotals>| -> Vec<String> {
        let mut r = vec![
            label,
            int(e.input_tokens as u64),
            format!("{} / {}", usd(e.cost_cached_usd), usd(e.cost_usd)),
        ];
        for d in ds {
            r.push(int(d.input_tokens as u64));
            r.push(int(d.deferred_list_tokens as u64));
            r.push(percent(
                savings_pct(e.input_tokens as f64, d.input_tokens as f64),
                2,
            ));
            r.push(format!("{} / {}", usd(d.cost_cached_usd), usd(d.cost_usd)));
            r.push(format!("{} / {}", d.searches, d.misses));
        }
        r
    };
    let mut rows: Vec<Vec<String>> = s
        .sessions
        .iter()
        .enumerate()
        .map(|(i, x)| {
            row(
                (i + 1).to_string(),
                &x.eager,
                x.deferred.iter().map(|v| &v.deferred).collect(),
            )
        })
        .collect();
    rows.push(row(
        "**all**".into(),
        &s.eager,
        s.deferred.iter().map(|v| &v.deferred).collect(),
    ));
    let h: Vec<&str> = headers.iter().map(String::as_str).collect();
    let right: Vec<bool> = h.iter().map(|_| true).collect();
    md_table(&h, &rows, &right)
}

/// The Markdown section; `figures` are the ones [`figures`] returned.
pub fn markdown(s: &SessionsReport, figures: &[Figure]) -> String {
    let mut out = format!(
        "## Your sessions\n\n{} imported by `toolbudget session import` into {}, replayed by the \
         simulator with the system prompt and counter scale fitted from their own bills \
         (`calibration.json`) where that fit does better than none on requests held out of it.\n\n### Billed vs modeled\n\nEach billed request is set against the \
         simulator's request for the same turn, in the mode the session really ran (deferred when it \
         used the search tool, its searches replayed as they happened). Fit, by least squares over \
         the main agent's requests (billed = system prompt + preamble + scale × counted), checked \
         by cross-validation (folds of whole sessions when there are three or more, else of \
         requests) and applied only when its held-out error is no worse than the uncalibrated \
         model's at the median and the 90th percentile:\n\n",
        crate::number::plural(s.sessions.len(), "session", "sessions"),
        crate::output::md_code(&s.folder)
    );
    out.push_str(&fit_lines(s));
    out.push_str(&format!(
        "\nPer-request error |modeled − billed| / billed over {} paired requests: median {}, 90th \
         percentile {}, mean signed {}.\n\n",
        s.error.requests,
        percent(s.error.median_abs_pct, 2),
        percent(s.error.p90_abs_pct, 2),
        percent(s.error.mean_pct, 2)
    ));
    out.push_str(&bill_table(s));
    let fig = |path: &str, out: &mut String| {
        if let Some(f) = figures.iter().find(|f| f.path == path) {
            out.push_str(&format!("\n![{}]({})\n\n{}\n", f.title, f.path, f.caption));
        }
    };
    fig("charts/sessions-billed-vs-modeled.svg", &mut out);
    out.push_str(
        "\n### What each mode would have cost on these sessions\n\nEvery session replayed eager and \
         deferred (its recorded searches dropped: the replay searches with the named scorer, \
         querying what the model typed when it searched for that tool, else the tool's name), \
         with the calibrated model. Cost at each session's model's list prices, with prompt \
         caching and without; *saved* is the input the deferred replay saves against eager.\n\n",
    );
    out.push_str(&counterfactual_table(s));
    fig("charts/sessions-input.svg", &mut out);
    fig("charts/sessions-cost.svg", &mut out);
    out.push_str(&adoption_section(s));
    out.push_str(&searches_section(s));
    out.push_str("\nData: `data/sessions.csv` (one row per session and mode).\n\n");
    out
}
