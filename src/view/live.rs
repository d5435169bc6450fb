//! The report's accuracy section (`report --live DIR`) and the views `toolbudget live` prints
//! and writes: pure functions from a finished [`LiveResult`] to text and (path, bytes).

use crate::adoption::Adoption;
use crate::live::repeats::Stability;
use crate::live::result::{
    CacheSummary, ModeSummary, Paired, Repeats, RequestRow, ScenarioLive, TurnRow,
};
use crate::live::{LiveResult, SearchSide};
use crate::number::percent;
use crate::output::{Format, csv_rows, serde_table, table_for, to_json};

use super::chart::{self as charts, ChartError, LineChart, Series};

/// Files of a view: (path relative to its folder, bytes).
pub type Files = Vec<(String, Vec<u8>)>;

/// Accuracy with its interval: `50.0% [23.7–76.3%]`.
pub fn accuracy(m: &ModeSummary) -> String {
    if m.turns == 0 {
        return "-".into();
    }
    format!(
        "{} [{}–{}]",
        percent(m.accuracy * 100.0, 1),
        percent(m.accuracy_low * 100.0, 1).trim_end_matches('%'),
        percent(m.accuracy_high * 100.0, 1)
    )
}

fn ratio(x: Option<f64>) -> String {
    x.map_or("-".into(), |r| format!("{r:.3}"))
}

/// The rows of the eager-vs-deferred table: (label, eager, deferred).
pub fn mode_rows(e: &ModeSummary, d: &ModeSummary) -> Vec<Vec<String>> {
    let row = |label: &str, f: &dyn Fn(&ModeSummary) -> String| vec![label.to_string(), f(e), f(d)];
    vec![
        row("turns (× runs)", &|m| m.turns.to_string()),
        row("correct", &|m| m.correct.to_string()),
        row("accuracy [95% Wilson]", &accuracy),
        row("wrong tool / no tool / malformed", &|m| {
            format!("{} / {} / {}", m.wrong_tool, m.no_tool, m.malformed)
        }),
        row("turns at the step limit (failed)", &|m| {
            m.hit_step_limit.to_string()
        }),
        row(
            "trajectory: forbidden / order / max calls / duplicate",
            &|m| {
                format!(
                    "{} / {} / {} / {}",
                    m.forbidden_call, m.out_of_order, m.over_max_calls, m.duplicate_call
                )
            },
        ),
        row("searches", &|m| m.searches.to_string()),
        row("turns searched / found an expected tool", &|m| {
            format!("{} / {}", m.turns_searched, m.turns_search_found_expected)
        }),
        row("calls: premature / malformed / unknown", &|m| {
            format!(
                "{} / {} / {}",
                m.premature_calls, m.malformed_calls, m.unknown_calls
            )
        }),
        row("searches: select / keyword / returned nothing", &|m| {
            let a = &m.adoption;
            format!(
                "{} / {} / {}",
                a.select_searches,
                a.keyword_searches(),
                a.empty_searches
            )
        }),
        row(
            "deferred calls: after a search / came first (failed)",
            &|m| adoption_calls(&m.adoption),
        ),
        row("requests (without usage)", &|m| {
            format!("{} ({})", m.requests, m.requests_without_usage)
        }),
        row("billed input tokens", &|m| {
            crate::number::thousands(m.billed_input_tokens as f64, 0)
        }),
        row("counted input tokens", &|m| {
            crate::number::thousands(m.counted_input_tokens as f64, 0)
        }),
        row("billed / counted", &|m| ratio(m.billed_over_counted)),
        row("of counted: the deferred list (at the input price)", &|m| {
            format!(
                "{} ({})",
                crate::number::thousands(m.deferred_list_tokens as f64, 0),
                crate::number::usd_exact(m.deferred_list_cost_usd)
            )
        }),
        row("billed output tokens", &|m| {
            crate::number::thousands(m.billed_output_tokens as f64, 0)
        }),
        row("latency p50 / p95 (ms)", &|m| {
            format!("{:.0} / {:.0}", m.latency_ms_p50, m.latency_ms_p95)
        }),
    ]
}

/// Deferred-tool calls by adoption's definition: after a search that returned the tool /
/// came first (of those, failed): `3 / 1 (1)`.
pub fn adoption_calls(a: &Adoption) -> String {
    format!(
        "{} / {} ({})",
        a.found_calls, a.first_calls, a.failed_first_calls
    )
}

/// A share with its interval: `33.3% [6.1–79.2%]`.
fn share(p: f64, low: f64, high: f64) -> String {
    format!(
        "{} [{}–{}]",
        percent(p * 100.0, 1),
        percent(low * 100.0, 1).trim_end_matches('%'),
        percent(high * 100.0, 1)
    )
}

/// The rows of the repeats table: (label, eager, deferred).
pub fn repeat_rows(r: &Repeats) -> Vec<Vec<String>> {
    let k = r.eager.runs;
    let row =
        |label: String, f: &dyn Fn(&Stability) -> String| vec![label, f(&r.eager), f(&r.deferred)];
    vec![
        row("distinct turns".into(), &|s| s.turns.to_string()),
        row("pass rate (mean over turns)".into(), &|s| {
            percent(s.pass_rate * 100.0, 1)
        }),
        row(format!("pass^{k}: right in all {k} runs [95%]"), &|s| {
            share(s.pass_hat_k, s.pass_hat_k_low, s.pass_hat_k_high)
        }),
        row(format!("pass@{k}: right in at least one [95%]"), &|s| {
            share(s.pass_at_k, s.pass_at_k_low, s.pass_at_k_high)
        }),
        row("flip rate: right in some runs only [95%]".into(), &|s| {
            share(s.flip_rate, s.flip_rate_low, s.flip_rate_high)
        }),
        row("repeated queries: same tools every run".into(), &|s| {
            format!("{} of {}", s.stable_queries, s.repeated_queries)
        }),
    ]
}

fn repeats_text(r: &Repeats, format: Format) -> String {
    let mut out = table_for(format)(
        &[&format!("over {} runs", r.eager.runs), "eager", "deferred"],
        &repeat_rows(r),
        &[false, true, true],
    );
    if format == Format::Md {
        out.push('\n');
    }
    let rows: Vec<Vec<String>> = r
        .turns
        .iter()
        .map(|t| {
            vec![
                t.scenario.clone(),
                t.turn.to_string(),
                t.expected.clone(),
                format!("{} / {}", t.eager_correct, t.runs),
                format!("{} / {}", t.deferred_correct, t.runs),
            ]
        })
        .collect();
    out.push_str(&table_for(format)(
        &[
            "scenario",
            "turn",
            "expected",
            "eager right",
            "deferred right",
        ],
        &rows,
        &[false, true, false, true, true],
    ));
    out
}

/// The paired test in one line.
pub fn paired_line(p: &Paired) -> String {
    format!(
        "paired turns {}: both correct {}, eager only {}, deferred only {}, neither {}; exact \
         McNemar p = {:.3}",
        p.pairs, p.both_correct, p.eager_only, p.deferred_only, p.neither, p.p_value
    )
}

fn header(r: &LiveResult) -> String {
    format!(
        "provider {}, model {}, {} search, counted with {}; {} run{} a mode, at most {} \
         steps a turn, seed {}, temperature {}",
        r.provider,
        r.model,
        match r.search {
            SearchSide::Client => "client-side",
            SearchSide::Provider => "provider-side",
        },
        r.counter,
        r.repeat,
        if r.repeat == 1 { "" } else { "s" },
        r.max_steps,
        r.seed,
        r.temperature
            .map_or("(provider's default)".into(), |t| t.to_string()),
    )
}

fn mode_table(e: &ModeSummary, d: &ModeSummary, format: Format) -> String {
    let mut rows = mode_rows(e, d);
    rows.extend(cache_rows(e, d));
    table_for(format)(&["", "eager", "deferred"], &rows, &[false, true, true])
}

/// Tokens and their share: `1,234 / 2,000 (61.7%)`.
fn of(part: u64, whole: u64, share: f64) -> String {
    format!(
        "{} / {} ({})",
        crate::number::thousands(part as f64, 0),
        crate::number::thousands(whole as f64, 0),
        percent(share * 100.0, 1)
    )
}

/// The provider's cache beside the simulator's model of it: rows of the mode table, only
/// when a mode's provider reported cached tokens.
pub fn cache_rows(e: &ModeSummary, d: &ModeSummary) -> Vec<Vec<String>> {
    if e.cache.is_none() && d.cache.is_none() {
        return Vec::new();
    }
    let row = |label: &str, f: &dyn Fn(&CacheSummary) -> String| {
        let cell = |m: &ModeSummary| m.cache.as_ref().map_or("-".into(), f);
        vec![label.to_string(), cell(e), cell(d)]
    };
    let ms = |x: Option<f64>| x.map_or("-".into(), |v| format!("{v:.0}"));
    vec![
        row("cache: requests (each run's first apart)", &|c| {
            c.requests.to_string()
        }),
        row("cache: cached / prompt tokens, measured", &|c| {
            of(c.cached_tokens, c.prompt_tokens, c.cached_share)
        }),
        row("cache: cached / counted tokens, modeled", &|c| {
            of(
                c.modeled_cached_tokens,
                c.modeled_prompt_tokens,
                c.modeled_cached_share,
            )
        }),
        row("cache breaks: measured / modeled (agree)", &|c| {
            format!("{} / {} ({})", c.breaks, c.modeled_breaks, c.agree)
        }),
        row(
            "server: prompt tokens evaluated, prompt / generation ms",
            &|c| {
                format!(
                    "{}, {} / {}",
                    c.prompt_evaluated_tokens
                        .map_or("-".into(), |n| crate::number::thousands(n as f64, 0)),
                    ms(c.prompt_ms),
                    ms(c.generation_ms)
                )
            },
        ),
    ]
}

/// Every request's cache, measured beside modeled (empty when no request reported cached
/// tokens): the comparison `live` exists to make for a local server.
pub fn cache_table(requests: &[RequestRow], format: Format) -> String {
    if requests.iter().all(|r| r.cached_tokens.is_none()) {
        return String::new();
    }
    let refs: Vec<&RequestRow> = requests.iter().collect();
    let measured = crate::live::result::measured_breaks(&refs);
    let opt = |x: Option<u64>| x.map_or("-".into(), |v| v.to_string());
    let pct = |a: u64, b: u64| {
        if b == 0 {
            "-".into()
        } else {
            percent(a as f64 / b as f64 * 100.0, 1)
        }
    };
    let rows: Vec<Vec<String>> = requests
        .iter()
        .zip(measured)
        .map(|(r, broke)| {
            vec![
                r.scenario.clone(),
                r.mode.clone(),
                r.run.to_string(),
                format!("{}.{}", r.turn, r.step),
                r.tools_sent.to_string(),
                opt(r.billed_input_tokens),
                opt(r.cached_tokens),
                match (r.cached_tokens, r.billed_input_tokens) {
                    (Some(c), Some(b)) => pct(c, b),
                    _ => "-".into(),
                },
                opt(r.prompt_evaluated_tokens),
                r.prompt_ms.map_or("-".into(), |v| format!("{v:.0}")),
                r.counted_input_tokens.to_string(),
                r.modeled_cached_tokens.to_string(),
                pct(r.modeled_cached_tokens, r.counted_input_tokens),
                match broke {
                    None => "first".into(),
                    Some(true) => "yes".into(),
                    Some(false) => String::new(),
                },
                r.modeled_cache_break.clone(),
            ]
        })
        .collect();
    table_for(format)(
        &[
            "scenario",
            "mode",
            "run",
            "turn.step",
            "tools sent",
            "prompt",
            "cached",
            "cached %",
            "evaluated",
            "prompt ms",
            "counted",
            "modeled cached",
            "modeled %",
            "break",
            "modeled break",
        ],
        &rows,
        &[
            false, false, true, true, true, true, true, true, true, true, true, true, true, false,
            false,
        ],
    )
}

/// What the cache table's columns are, and where the server's fields are documented.
pub const CACHE_NOTE: &str = "prompt and cached are the server's `usage.prompt_tokens` and \
`usage.prompt_tokens_details.cached_tokens`; evaluated and prompt ms are llama.cpp's \
`timings.prompt_n` and `timings.prompt_ms` (llama.cpp `tools/server/README.md`, POST \
`/v1/chat/completions`, \"Timings and context usage\"). counted is toolbudget's count of the same \
request, modeled cached the prefix of it the simulator's cache model \
(`simulate::cost::cached_prefix`) expects cached after this run's previous request. break: the \
request found less than the whole previous prompt cached (first: a run's first request, which \
the model starts cold and a server may still hold from the previous run); modeled break: the \
part whose change the model says cut the prefix short. The two count different tokens \
(the model's tokenizer, toolbudget's counter): compare the shares.";

/// What `toolbudget live` prints (table or md): each scenario, then the total.
pub fn text(r: &LiveResult, md: bool) -> String {
    let format = if md { Format::Md } else { Format::Table };
    let br = if md { "\n\n" } else { "\n" };
    let mut out = String::new();
    out.push_str(&header(r));
    out.push_str(br);
    for s in &r.scenarios {
        out.push_str(&if md {
            format!("### {}\n\n", crate::output::md_text(&s.name))
        } else {
            format!("== {} ==\n", s.name)
        });
        out.push_str(&format!(
            "{} tools, {} deferred; scorer {}{br}",
            s.tools, s.deferred_tools, s.scorer
        ));
        out.push_str(&mode_table(&s.eager, &s.deferred, format));
        if md {
            out.push('\n');
        }
        out.push_str(&paired_line(&s.paired));
        out.push_str(br);
        if let Some(rep) = &s.repeats {
            out.push_str(&repeats_text(rep, format));
            out.push_str(br);
        }
        for n in &s.notes {
            out.push_str(&format!("* {n}\n"));
        }
        out.push('\n');
    }
    if r.scenarios.len() > 1 {
        out.push_str(if md {
            "### All scenarios\n\n"
        } else {
            "== all scenarios ==\n"
        });
        out.push_str(&mode_table(&r.eager, &r.deferred, format));
        if md {
            out.push('\n');
        }
        out.push_str(&paired_line(&r.paired));
        out.push('\n');
        if let Some(rep) = &r.repeats {
            out.push_str(br);
            out.push_str(&repeats_text(rep, format));
        }
    }
    out
}

/// The per-request table: billed usage beside toolbudget's count, for every request.
pub fn requests_table(requests: &[RequestRow], format: Format) -> String {
    let (header, mut rows) = serde_table(requests);
    let names: Vec<&str> = header.iter().map(String::as_str).collect();
    let right: Vec<bool> = names
        .iter()
        .map(|c| !matches!(*c, "scenario" | "mode" | "calls" | "stop"))
        .collect();
    // Tool names the model invented and the scenario's name are text, never Markdown or HTML.
    if format == Format::Md {
        for row in &mut rows {
            for (cell, numeric) in row.iter_mut().zip(&right) {
                if !numeric {
                    *cell = crate::output::md_text(cell);
                }
            }
        }
    }
    table_for(format)(&names, &rows, &right)
}

/// `summary.md` of one model's run: its tables, the cache measured beside modeled (when
/// reported) and every request.
fn summary(r: &LiveResult, requests: &[RequestRow]) -> String {
    let mut summary = text(r, true);
    let cache = cache_table(requests, Format::Md);
    if !cache.is_empty() {
        summary.push_str("\n### The cache, measured beside modeled\n\n");
        summary.push_str(CACHE_NOTE);
        summary.push_str("\n\n");
        summary.push_str(&cache);
    }
    summary.push_str("\n### Every request\n\n");
    summary.push_str(&requests_table(requests, Format::Md));
    summary
}

/// Every request of a run, scenario by scenario.
fn all_requests(r: &LiveResult) -> Vec<RequestRow> {
    r.scenarios
        .iter()
        .flat_map(|s| s.requests.clone())
        .collect()
}

/// The files `toolbudget live --out DIR` writes.
pub fn files(r: &LiveResult) -> Files {
    let turns: Vec<TurnRow> = r.scenarios.iter().flat_map(|s| s.turns.clone()).collect();
    let requests = all_requests(r);
    let searches: Vec<crate::live::result::SearchRow> = r
        .scenarios
        .iter()
        .flat_map(|s| s.searches.clone())
        .collect();
    let summary = summary(r, &requests);
    vec![
        ("live.json".into(), to_json(r).into_bytes()),
        ("turns.csv".into(), csv_rows(&turns).into_bytes()),
        ("requests.csv".into(), csv_rows(&requests).into_bytes()),
        ("searches.csv".into(), csv_rows(&searches).into_bytes()),
        ("summary.md".into(), summary.into_bytes()),
    ]
}

/// A row of one of several models' runs with its model first (the CSVs of `live --model
/// A,B`).
#[derive(Debug, Clone, Default, serde::Serialize)]
struct OfModel<T> {
    model: String,
    #[serde(flatten)]
    row: T,
}

/// The rows `rows` picks from every scenario of every run, a `model` column first.
pub fn models_csv<T: serde::Serialize + Default + Clone>(
    runs: &[LiveResult],
    rows: impl Fn(&ScenarioLive) -> &[T],
) -> String {
    let all: Vec<OfModel<T>> = runs
        .iter()
        .flat_map(|r| {
            r.scenarios.iter().flat_map(&rows).map(|row| OfModel {
                model: r.model.clone(),
                row: row.clone(),
            })
        })
        .collect();
    csv_rows(&all)
}

/// What `toolbudget live --model A,B` prints (table or md): each model's tables as one
/// model's run prints them, then the models side by side, a row per model and mode.
pub fn models_text(runs: &[LiveResult], md: bool) -> String {
    let format = if md { Format::Md } else { Format::Table };
    let mut out = String::new();
    for r in runs {
        if md {
            out.push_str(&format!(
                "## Model {}\n\n",
                crate::output::md_text(&r.model)
            ));
        }
        out.push_str(text(r, md).trim_end());
        out.push_str("\n\n");
    }
    out.push_str(if md {
        "## Models side by side\n\n"
    } else {
        "== models side by side ==\n"
    });
    out.push_str(&models_table(&model_rows(runs), format));
    out
}

/// The files `toolbudget live --model A,B --out DIR` writes: `live.json` holding every model's
/// result (`{"models": [...]}`), the CSVs with a `model` column first, `summary.md` (the models
/// side by side, as `report --live` shows them, then each model's summary), and the side by
/// side chart and CSV.
pub fn models_files(runs: &[LiveResult]) -> Result<Files, ChartError> {
    let (body, extra) = models_body(runs)?;
    let mut summary = String::from("## Models side by side\n\n");
    summary.push_str(MODELS_NOTE);
    summary.push_str("\n\n");
    summary.push_str(&body);
    for r in runs {
        summary.push_str(&format!(
            "\n## Model {}\n\n",
            crate::output::md_text(&r.model)
        ));
        summary.push_str(&self::summary(r, &all_requests(r)));
    }
    let json = to_json(&crate::live::LiveModels {
        models: runs.to_vec(),
    });
    let mut files: Files = vec![
        ("live.json".into(), json.into_bytes()),
        (
            "turns.csv".into(),
            models_csv(runs, |s| &s.turns).into_bytes(),
        ),
        (
            "requests.csv".into(),
            models_csv(runs, |s| &s.requests).into_bytes(),
        ),
        (
            "searches.csv".into(),
            models_csv(runs, |s| &s.searches).into_bytes(),
        ),
        ("summary.md".into(), summary.into_bytes()),
    ];
    files.extend(extra);
    Ok(files)
}

/// Mean input tokens per request of a mode: billed where reported, else counted.
fn tokens_per_request(m: &ModeSummary) -> f64 {
    if m.requests == 0 {
        return 0.0;
    }
    let with_usage = m.requests - m.requests_without_usage;
    if with_usage > 0 {
        m.billed_input_tokens as f64 / with_usage as f64
    } else {
        m.counted_input_tokens as f64 / m.requests as f64
    }
}

/// Accuracy against input tokens per request, one point per scenario and mode.
pub fn chart(r: &LiveResult) -> Result<String, ChartError> {
    let points = |f: &dyn Fn(&ScenarioLive) -> &ModeSummary| -> Vec<(f64, f64)> {
        r.scenarios
            .iter()
            .map(|s| (tokens_per_request(f(s)), f(s).accuracy))
            .collect()
    };
    let mut spec = LineChart::new(
        &format!(
            "Accuracy against input tokens ({}, {})",
            r.provider, r.model
        ),
        "input tokens per request (billed; counted where none reported)",
        "accuracy (share of turns)",
        vec![
            Series::new("eager", points(&|s| &s.eager))
                .scatter()
                .colored(0),
            Series::new("deferred", points(&|s| &s.deferred))
                .scatter()
                .colored(1),
        ],
    );
    spec.y_range = Some((0.0, 1.0));
    charts::line_chart(&spec)
}

/// The report's cache subsection (empty when no request reported cached tokens): per scenario
/// and mode the measured and modeled totals, then every request.
fn cache_section(r: &LiveResult, requests: &[RequestRow]) -> String {
    let mut md = String::new();
    let cache = cache_table(requests, Format::Md);
    if !cache.is_empty() {
        md.push_str("### The cache, measured beside modeled\n\n");
        md.push_str(CACHE_NOTE);
        md.push_str("\n\n");
        md.push_str(&crate::output::md_table(
            &["scenario", "mode", ""],
            &r.scenarios
                .iter()
                .flat_map(|s| {
                    cache_rows(&s.eager, &s.deferred)
                        .into_iter()
                        .flat_map(|row| {
                            [("eager", 1), ("deferred", 2)].map(|(mode, i)| {
                                vec![
                                    s.name.clone(),
                                    mode.to_string(),
                                    format!("{}: {}", row[0], row[i]),
                                ]
                            })
                        })
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>(),
            &[false, false, false],
        ));
        md.push('\n');
        md.push_str(&cache);
        md.push('\n');
    }
    md
}

/// The report's section: Markdown to append to index.md, and the files it links.
pub fn section(r: &LiveResult) -> Result<(String, Files), ChartError> {
    let mut md = String::from("## Model in the loop\n\n");
    md.push_str(
        "Measured by `toolbudget live` against a real endpoint (each turn's `calls` are the \
         labels). Accuracy is the share of turns whose expected tools were all called with \
         valid arguments and that ended with an answer (a turn at the step limit fails; one \
         that expects no tool passes only without any call, searches included); the interval is Wilson's 95%; the paired test compares eager and \
         deferred on the same turns. Billed tokens are the provider's `usage`, counted tokens \
         toolbudget's count of the same request under the provider's counter.\n\n",
    );
    md.push_str(&header(r));
    md.push_str("\n\n");
    let rows: Vec<Vec<String>> = r
        .scenarios
        .iter()
        .flat_map(|s| {
            [("eager", &s.eager), ("deferred", &s.deferred)].map(|(mode, m)| {
                vec![
                    crate::output::md_text(&s.name),
                    mode.into(),
                    m.turns.to_string(),
                    accuracy(m),
                    format!(
                        "{} / {} / {} / {} / {}",
                        m.wrong_tool, m.no_tool, m.malformed, m.hit_step_limit, m.trajectory
                    ),
                    format!(
                        "{} ({} / {})",
                        m.searches, m.turns_searched, m.turns_search_found_expected
                    ),
                    format!(
                        "{} / {} ({})",
                        crate::number::thousands(m.billed_input_tokens as f64, 0),
                        crate::number::thousands(m.counted_input_tokens as f64, 0),
                        ratio(m.billed_over_counted)
                    ),
                    format!("{:.0}", m.latency_ms_p50),
                ]
            })
        })
        .collect();
    md.push_str(&crate::output::md_table(
        &[
            "scenario",
            "mode",
            "turns",
            "accuracy [95%]",
            "wrong / none / malformed / step limit / trajectory",
            "searches (turns / found)",
            "input billed / counted (ratio)",
            "p50 ms",
        ],
        &rows,
        &[false, false, true, true, true, true, true, true],
    ));
    md.push('\n');
    for s in &r.scenarios {
        md.push_str(&format!(
            "- {}: {}\n",
            crate::output::md_text(&s.name),
            paired_line(&s.paired)
        ));
    }
    if r.scenarios.len() > 1 {
        md.push_str(&format!("- all scenarios: {}\n", paired_line(&r.paired)));
    }
    md.push_str("\n![accuracy against tokens](charts/live-accuracy.svg)\n\n");
    let requests: Vec<RequestRow> = r
        .scenarios
        .iter()
        .flat_map(|s| s.requests.clone())
        .collect();
    md.push_str(&cache_section(r, &requests));
    md.push_str(
        "<details><summary>Every request: billed usage beside toolbudget's count</summary>\n\n",
    );
    md.push_str(&requests_table(&requests, Format::Md));
    md.push_str("\n</details>\n\nData: [data/live-turns.csv](data/live-turns.csv), [data/live-requests.csv](data/live-requests.csv).\n");
    let turns: Vec<TurnRow> = r.scenarios.iter().flat_map(|s| s.turns.clone()).collect();
    let files = vec![
        (
            "charts/live-accuracy.svg".to_string(),
            chart(r)?.into_bytes(),
        ),
        (
            "data/live-turns.csv".to_string(),
            csv_rows(&turns).into_bytes(),
        ),
        (
            "data/live-requests.csv".to_string(),
            csv_rows(&requests).into_bytes(),
        ),
    ];
    Ok((md, files))
}

/// One model and mode of several live runs (`live --model A,B`, or `report --live A --live
/// B`): a row of the side by side table and of `data/live-models.csv`.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ModelRow {
    pub model: String,
    pub provider: String,
    /// The run's scenarios, space-separated (rows compare fairly only over the same ones).
    pub scenarios: String,
    pub mode: String,
    pub turns: usize,
    pub correct: usize,
    pub accuracy: f64,
    pub accuracy_low: f64,
    pub accuracy_high: f64,
    /// Calls of the search tool (`adoption.searches`), beside the accuracy.
    pub searches: usize,
    pub requests: usize,
    /// Billed where reported, else counted.
    pub input_tokens_per_request: f64,
    pub billed_over_counted: Option<f64>,
    /// The cache, measured and modeled, when the provider reported cached tokens.
    pub cached_share: Option<f64>,
    pub modeled_cached_share: Option<f64>,
    pub latency_ms_p50: f64,
    /// Runs of each turn (`--repeat`); the repeat figures below only from 2 runs on.
    pub runs: u32,
    pub pass_rate: Option<f64>,
    pub pass_hat_k: Option<f64>,
    pub pass_at_k: Option<f64>,
    pub flip_rate: Option<f64>,
    /// Input tokens over every request: billed (of those that reported usage) and counted.
    pub billed_input_tokens: u64,
    pub counted_input_tokens: u64,
    /// Adoption of the search tool ([`crate::adoption`], as `session import` counts it): the
    /// last columns, every count but `searches` (its own column above).
    #[serde(serialize_with = "adoption_but_searches")]
    pub adoption: Adoption,
}

/// An [`Adoption`] as [`ModelRow`]'s last columns: every count in its order but `searches`.
fn adoption_but_searches<S: serde::Serializer>(a: &Adoption, s: S) -> Result<S::Ok, S::Error> {
    let mut v = serde_json::to_value(a).map_err(serde::ser::Error::custom)?;
    if let serde_json::Value::Object(counts) = &mut v {
        counts.shift_remove("searches");
    }
    serde::Serialize::serialize(&v, s)
}

/// A row per run and mode, over every scenario of the run.
pub fn model_rows(runs: &[LiveResult]) -> Vec<ModelRow> {
    runs.iter()
        .flat_map(|r| {
            let scenarios = r
                .scenarios
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(" ");
            let stability = |mode: &str| {
                r.repeats.as_ref().map(|x| {
                    if mode == "eager" {
                        x.eager.clone()
                    } else {
                        x.deferred.clone()
                    }
                })
            };
            [("eager", &r.eager), ("deferred", &r.deferred)].map(|(mode, m)| {
                let st = stability(mode);
                ModelRow {
                    model: r.model.clone(),
                    provider: r.provider.name().into(),
                    scenarios: scenarios.clone(),
                    mode: mode.into(),
                    turns: m.turns,
                    correct: m.correct,
                    accuracy: m.accuracy,
                    accuracy_low: m.accuracy_low,
                    accuracy_high: m.accuracy_high,
                    searches: m.searches,
                    requests: m.requests,
                    input_tokens_per_request: crate::number::round(tokens_per_request(m), 1),
                    billed_over_counted: m.billed_over_counted,
                    cached_share: m.cache.as_ref().map(|c| c.cached_share),
                    modeled_cached_share: m.cache.as_ref().map(|c| c.modeled_cached_share),
                    latency_ms_p50: m.latency_ms_p50,
                    runs: r.repeat,
                    pass_rate: st.as_ref().map(|s| crate::number::round(s.pass_rate, 4)),
                    pass_hat_k: st.as_ref().map(|s| s.pass_hat_k),
                    pass_at_k: st.as_ref().map(|s| s.pass_at_k),
                    flip_rate: st.as_ref().map(|s| s.flip_rate),
                    billed_input_tokens: m.billed_input_tokens,
                    counted_input_tokens: m.counted_input_tokens,
                    adoption: m.adoption,
                }
            })
        })
        .collect()
}

/// The side by side table, a row per model and mode; the repeats column only when a run was
/// repeated.
pub fn models_table(rows: &[ModelRow], format: Format) -> String {
    let repeated = rows.iter().any(|m| m.pass_rate.is_some());
    let pct = |x: Option<f64>| x.map_or("-".into(), |v| percent(v * 100.0, 1));
    let text = |s: &str| {
        if format == Format::Md {
            crate::output::md_text(s)
        } else {
            s.to_string()
        }
    };
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|m| {
            let mut row = vec![
                text(&m.model),
                m.provider.clone(),
                m.mode.clone(),
                m.turns.to_string(),
                share(m.accuracy, m.accuracy_low, m.accuracy_high),
            ];
            if repeated {
                row.push(match m.pass_rate {
                    Some(_) => format!(
                        "{}: {} / {} / {}",
                        m.runs,
                        pct(m.pass_rate),
                        pct(m.pass_hat_k),
                        pct(m.flip_rate)
                    ),
                    None => format!("{}: -", m.runs),
                });
            }
            row.extend([
                format!(
                    "{} ({} / {})",
                    m.searches, m.adoption.select_searches, m.adoption.empty_searches
                ),
                adoption_calls(&m.adoption),
                crate::number::thousands(m.input_tokens_per_request, 0),
                ratio(m.billed_over_counted),
                format!("{} / {}", pct(m.cached_share), pct(m.modeled_cached_share)),
                format!("{:.0}", m.latency_ms_p50),
            ]);
            row
        })
        .collect();
    let mut head = vec!["model", "provider", "mode", "turns", "accuracy [95%]"];
    if repeated {
        head.push("runs: pass rate / pass^k / flips");
    }
    head.extend([
        "searches (select / empty)",
        "deferred calls: found / first (failed)",
        "input tokens / request",
        "billed / counted",
        "cached: measured / modeled",
        "p50 ms",
    ]);
    let right: Vec<bool> = (0..head.len()).map(|i| i > 2).collect();
    table_for(format)(&head, &cells, &right)
}

/// What the side by side table's columns are.
pub const MODELS_NOTE: &str = "One row per model and mode, over every scenario of its run; \
accuracy and its Wilson 95% interval as in a single run's tables; with `--repeat` N ≥ 2, each \
turn's pass rate (mean of runs right / N), pass^N (right in all N runs) and the flip rate (right \
in some runs only), over the distinct turns; searches (of them `select:` ones, and empty ones \
that returned no tool) and deferred-tool calls by adoption's definitions, as `session import` \
counts them (found: after a search that returned the tool; first: before any search returned \
it; failed: of those, answered with an error); input tokens per request are billed \
where reported, else counted; the cache shares are the provider's cached tokens over its prompt \
tokens beside the simulator's model of the same requests (each run's first request apart). Rows \
compare fairly only over the same scenarios and settings.";

/// The side by side part of several runs: each run's settings, the table, the chart and the
/// CSV (`charts/live-models.svg`, `data/live-models.csv`).
fn models_body(runs: &[LiveResult]) -> Result<(String, Files), ChartError> {
    let rows = model_rows(runs);
    let mut md = String::new();
    for r in runs {
        md.push_str(&format!("- {}\n", header(r)));
    }
    md.push('\n');
    md.push_str(&models_table(&rows, Format::Md));
    md.push_str("\n![accuracy against tokens, per model](charts/live-models.svg)\n\nData: [data/live-models.csv](data/live-models.csv).\n");
    let series: Vec<Series> = rows
        .iter()
        .enumerate()
        .map(|(i, m)| {
            Series::new(
                format!("{} {}", m.model, m.mode),
                vec![(m.input_tokens_per_request, m.accuracy)],
            )
            .scatter()
            .colored(i)
        })
        .collect();
    let mut spec = LineChart::new(
        "Accuracy against input tokens, per model and mode",
        "input tokens per request (billed; counted where none reported)",
        "accuracy (share of turns)",
        series,
    );
    spec.y_range = Some((0.0, 1.0));
    let files = vec![
        (
            "charts/live-models.svg".to_string(),
            charts::line_chart(&spec)?.into_bytes(),
        ),
        (
            "data/live-models.csv".to_string(),
            csv_rows(&rows).into_bytes(),
        ),
    ];
    Ok((md, files))
}

/// Several runs side by side (`report --live` repeated, or one `live --model A,B` folder):
/// one table, one chart (accuracy against input tokens per request, a point per model and
/// mode), and the table's CSV.
pub fn models_section(runs: &[LiveResult]) -> Result<(String, Files), ChartError> {
    let mut md = String::from("## Model in the loop: runs side by side\n\n");
    md.push_str(
        "Each run is a `toolbudget live --out DIR` given to `report --live` (a `live --model \
         A,B` folder holds a run per model). ",
    );
    md.push_str(MODELS_NOTE);
    md.push_str("\n\n");
    let (body, files) = models_body(runs)?;
    md.push_str(&body);
    Ok((md, files))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::result::{self, Outcome};
    use crate::live::{Provider, Settings};

    /// A tool name the model invented reaches the Markdown request table as text: no HTML,
    /// no cell or row of its own; CSV keeps it as it is.
    #[test]
    fn model_invented_names_are_escaped_in_the_markdown_request_table() {
        let name = "<script>alert(1)</script>|x`y\u{1b}[31mRED\r\nforged | row |";
        let rows = vec![RequestRow {
            scenario: "s<b>".into(),
            calls: name.into(),
            stop: "tool_calls".into(),
            ..RequestRow::default()
        }];
        let md = requests_table(&rows, Format::Md);
        let line = md.lines().nth(2).unwrap();
        assert!(
            line.contains(
                r"\<script\>alert(1)\</script\>\|x\`y\\u{1b}\[31mRED\\r\\nforged \| row \|"
            ),
            "{line}"
        );
        assert!(line.starts_with("| s\\<b\\> |"), "{line}");
        assert_eq!(md.lines().count(), 3, "{md}");
        assert!(!md.contains("<script>") && !md.contains('\u{1b}'));
        assert!(csv_rows(&rows).contains("<script>alert(1)</script>"));
    }

    fn turn(mode: &str, turn: usize, outcome: Outcome) -> TurnRow {
        TurnRow {
            scenario: "s".into(),
            mode: mode.into(),
            turn,
            outcome,
            ..TurnRow::default()
        }
    }

    fn request(mode: &str, billed: Option<u64>, counted: u64) -> RequestRow {
        RequestRow {
            scenario: "s".into(),
            mode: mode.into(),
            billed_input_tokens: billed,
            counted_input_tokens: counted,
            latency_ms: 10.0,
            ..RequestRow::default()
        }
    }

    #[test]
    fn the_section_shows_intervals_the_paired_test_and_every_request() {
        let turns = vec![
            turn("eager", 1, Outcome::Correct),
            turn("eager", 2, Outcome::WrongTool),
            turn("deferred", 1, Outcome::Correct),
            turn("deferred", 2, Outcome::Correct),
        ];
        let requests = vec![
            request("eager", Some(1200), 1000),
            request("eager", None, 900),
            request("deferred", Some(300), 250),
        ];
        let (eager, deferred, paired) = result::modes(&turns, &requests);
        assert_eq!(eager.billed_input_tokens, 1200);
        assert_eq!(
            eager.counted_input_tokens, 1000,
            "only requests that reported usage"
        );
        assert_eq!(eager.requests_without_usage, 1);
        assert_eq!(eager.billed_over_counted, Some(1.2));
        assert_eq!((paired.both_correct, paired.deferred_only), (1, 1));
        let s = ScenarioLive {
            name: "s".into(),
            scorer: "bm25".into(),
            tools: 10,
            deferred_tools: 10,
            eager,
            deferred,
            paired,
            notes: vec![],
            repeats: None,
            turns,
            requests,
            searches: vec![],
        };
        let st = Settings {
            model: "m".into(),
            search: SearchSide::Client,
            max_steps: 4,
            max_tokens: 64,
            temperature: None,
            seed: 1,
            repeat: 1,
            tool_choice: None,
        };
        let r = crate::live::finish(
            Provider::OpenaiChat,
            crate::counter::CounterKind::OpenaiChat,
            &st,
            vec![s],
        );
        let (md, files) = section(&r).unwrap();
        assert!(md.starts_with("## Model in the loop\n"));
        // 1 of 2: Wilson 9.45% to 90.5%; 2 of 2: 34.2% to 100%.
        assert!(md.contains("| s | eager | 2 | 50.0% [9.4–90.5%] |"), "{md}");
        assert!(
            md.contains("| s | deferred | 2 | 100.0% [34.2–100.0%] |"),
            "{md}"
        );
        assert!(md.contains("exact McNemar p = 1.000"));
        assert_eq!(md.matches("| s | eager | 0 | 0 | 0 |").count(), 2, "{md}");
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            paths,
            [
                "charts/live-accuracy.svg",
                "data/live-turns.csv",
                "data/live-requests.csv"
            ]
        );
        assert!(String::from_utf8_lossy(&files[0].1).starts_with("<svg"));
    }

    #[test]
    fn several_runs_are_one_table_and_chart_a_row_per_model_and_mode() {
        let run = |model: &str, correct: usize| {
            let mut r = crate::live::finish(
                crate::live::Provider::OpenaiChat,
                crate::counter::CounterKind::OpenaiChat,
                &crate::live::Settings {
                    model: model.into(),
                    search: SearchSide::Client,
                    max_steps: 3,
                    max_tokens: 64,
                    temperature: None,
                    seed: 1,
                    repeat: 1,
                    tool_choice: None,
                },
                Vec::new(),
            );
            r.eager.turns = 4;
            r.eager.correct = correct;
            r.eager.accuracy = correct as f64 / 4.0;
            r
        };
        let mut large = run("large", 3);
        large.deferred.searches = 7;
        large.deferred.adoption = Adoption {
            searches: 7,
            select_searches: 1,
            empty_searches: 2,
            deferred_calls: 6,
            found_calls: 4,
            first_calls: 2,
            failed_first_calls: 1,
        };
        let (md, files) = models_section(&[run("small", 1), large]).unwrap();
        let rows: Vec<&str> = md
            .lines()
            .filter(|l| l.starts_with("| small") || l.starts_with("| large"))
            .collect();
        assert_eq!(rows.len(), 4, "{md}");
        assert!(
            rows[2].starts_with("| large | openai-chat | eager | 4 | 75.0%"),
            "{md}"
        );
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["charts/live-models.svg", "data/live-models.csv"]);
        assert_eq!(String::from_utf8_lossy(&files[1].1).lines().count(), 5);
        // Single runs: no repeats column; the adoption columns always.
        assert!(!md.contains("pass^k"), "{md}");
        assert!(
            md.contains("| deferred calls: found / first (failed) |"),
            "{md}"
        );
        assert!(rows[3].contains("| 7 (1 / 2) | 4 / 2 (1) |"), "{md}");
        let csv = String::from_utf8_lossy(&files[1].1);
        // The columns: searches beside the accuracy, adoption's other counts last.
        assert_eq!(
            csv.lines().next().unwrap(),
            "model,provider,scenarios,mode,turns,correct,accuracy,accuracy_low,accuracy_high,\
             searches,requests,input_tokens_per_request,billed_over_counted,cached_share,\
             modeled_cached_share,latency_ms_p50,runs,pass_rate,pass_hat_k,pass_at_k,flip_rate,\
             billed_input_tokens,counted_input_tokens,select_searches,empty_searches,\
             deferred_calls,found_calls,first_calls,failed_first_calls"
        );
        assert!(csv.lines().nth(1).unwrap().contains(",1,,,,,"), "{csv}");
        let large_deferred = csv.lines().nth(4).unwrap();
        assert!(
            large_deferred.starts_with("large,openai-chat,,deferred,0,0,"),
            "{csv}"
        );
        assert!(large_deferred.ends_with(",1,2,6,4,2,1"), "{csv}");
        assert_eq!(large_deferred.matches(",7,").count(), 1, "{csv}");
    }
}
