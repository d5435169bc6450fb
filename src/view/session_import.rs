//! The views of a session import (`session import`): billed vs modeled input per session,
//! the fit and the replay's totals, in table, Markdown, CSV and json of the [`ImportSummary`];
//! and the notes the command prints on stderr.

use std::path::Path;

use crate::adoption::Adoption;
use crate::experiment::session_import::ImportSummary;
use crate::number::plural;
use crate::output::{Format, code_for, csv, md_table, text_table, to_json};

pub fn notes(s: &ImportSummary) -> Vec<String> {
    let mut out = s.notes.clone();
    if s.searches_mined + s.searches_unlabeled > 0 {
        out.push(format!(
            "{} of the model's searches mined as labeled queries ({} with no call after them left out)",
            s.searches_mined, s.searches_unlabeled
        ));
    }
    for c in &s.calibrations {
        for n in &c.notes {
            out.push(format!("calibration {} ({}): {n}", c.model, c.counter));
        }
    }
    if s.filtered_out > 0 {
        out.push(format!(
            "{} left out by --since/--until/--project",
            plural(s.filtered_out, "session", "sessions")
        ));
    }
    for e in &s.sessions {
        let untyped: usize = e.untyped_records.values().sum();
        if untyped > 0 {
            let list: Vec<String> = e
                .untyped_records
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            out.push(format!(
                "{}: {untyped} records without a top-level type read by their message's role ({})",
                e.file,
                list.join(", ")
            ));
        }
        if e.copied_requests > 0 {
            out.push(format!(
                "{}: {} requests of copied history (a resumed or forked session) read once, billed where first written",
                e.file, e.copied_requests
            ));
        }
        if e.warmup_agents > 0 {
            out.push(format!(
                "{}: {} (Claude Code priming its agents) billed, not part of the conversation",
                e.file,
                plural(e.warmup_agents, "warm-up subagent", "warm-up subagents")
            ));
        }
        if e.bad_lines > 0 {
            out.push(format!(
                "{}: {} malformed lines skipped",
                e.file, e.bad_lines
            ));
        }
        if !e.ignored_records.is_empty() {
            let list: Vec<String> = e
                .ignored_records
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            out.push(format!(
                "{}: record types ignored: {}",
                e.file,
                list.join(", ")
            ));
        }
        if !e.unknown_tools.is_empty() {
            out.push(format!(
                "{}: tools in no catalog left out: {:.2}% of its calls, {:.2}% of their tokens",
                e.file, e.unknown_calls_pct, e.unknown_tokens_pct
            ));
        }
    }
    out
}

const COLUMNS: &[&str] = &[
    "session",
    "ran",
    "model",
    "counter",
    "requests",
    "tool_calls",
    "billed_input_tokens",
    "modeled_input_tokens",
    "median_error_pct",
    "p90_error_pct",
    "eager_input_tokens",
    "deferred_input_tokens",
    "deferred_list_tokens",
    "eager_cost_cached_usd",
    "deferred_cost_cached_usd",
    "searches",
    "select_searches",
    "empty_searches",
    "deferred_calls",
    "found_calls",
    "first_calls",
    "failed_first_calls",
];

/// The table and Markdown show these first columns; the adoption figures get a table of
/// their own ([`adoption_table`]).
const SHOWN: usize = 15;

/// One row a session; the session's file name and model are from the logs: code spans in
/// Markdown, escaped for a terminal, as they are in CSV.
fn rows(s: &ImportSummary, format: Format) -> Vec<Vec<String>> {
    s.sessions
        .iter()
        .map(|e| {
            let name = stem(&e.file);
            vec![
                code_for(format, &name),
                e.ran_as.name().to_string(),
                code_for(format, &e.model),
                e.counter.to_string(),
                e.requests.to_string(),
                e.tool_calls.to_string(),
                e.billed_input_tokens.to_string(),
                e.modeled_input_tokens.to_string(),
                e.error.median_abs_pct.to_string(),
                e.error.p90_abs_pct.to_string(),
                e.eager.input_tokens.to_string(),
                e.deferred.input_tokens.to_string(),
                e.deferred.deferred_list_tokens.to_string(),
                format!("{:.4}", e.eager.cost_cached_usd),
                format!("{:.4}", e.deferred.cost_cached_usd),
                e.adoption.searches.to_string(),
                e.adoption.select_searches.to_string(),
                e.adoption.empty_searches.to_string(),
                e.adoption.deferred_calls.to_string(),
                e.adoption.found_calls.to_string(),
                e.adoption.first_calls.to_string(),
                e.adoption.failed_first_calls.to_string(),
            ]
        })
        .collect()
}

pub fn render(s: &ImportSummary, format: Format) -> String {
    match format {
        Format::Json => to_json(s),
        Format::Csv => csv(COLUMNS, &rows(s, format)),
        Format::Table | Format::Md => {
            let columns = &COLUMNS[..SHOWN];
            let right: Vec<bool> = columns
                .iter()
                .map(|c| !matches!(*c, "session" | "ran" | "model" | "counter"))
                .collect();
            let rows: Vec<Vec<String>> = rows(s, format)
                .into_iter()
                .map(|mut r| {
                    r.truncate(SHOWN);
                    r
                })
                .collect();
            let mut out = if format == Format::Md {
                md_table(columns, &rows, &right)
            } else {
                text_table(columns, &rows, &right)
            };
            out.push_str(&footer(s));
            out.push_str(&adoption_section(s, format));
            out
        }
    }
}

/// One fit as the summary prints it: n, R², the held-out error against none, and whether it
/// was applied.
pub fn fit_line(c: &crate::simulate::calibration::Calibration) -> String {
    let held = c.held_out.as_ref().map_or_else(
        || "no held-out error (too few requests)".to_string(),
        |h| {
            format!(
                "held-out error median {}%, p90 {}% (uncalibrated {}%, {}%; {} folds)",
                h.median_abs_pct,
                h.p90_abs_pct,
                h.uncalibrated_median_abs_pct,
                h.uncalibrated_p90_abs_pct,
                h.folds
            )
        },
    );
    let mut line = format!(
        "Fit {} ({}): n = {} requests, R² {}, {held}: system prompt {} tokens{}, scale {}{}; {}.\n",
        c.model,
        c.counter,
        c.requests,
        c.r2,
        c.system_prompt_tokens,
        if c.constrained {
            " (fixed at 0: the free fit wanted less)"
        } else {
            ""
        },
        c.scale,
        c.subagent_system_prompt_tokens
            .map(|p| format!(
                ", subagent system prompt {p} over {} requests",
                c.subagent_requests
            ))
            .unwrap_or_default(),
        if c.applied { "applied" } else { "NOT applied" }
    );
    for n in &c.notes {
        line.push_str(&format!("  {n}\n"));
    }
    line
}

fn footer(s: &ImportSummary) -> String {
    let t = &s.totals;
    let mut out = format!(
        "\n{}, {}, {}; billed input {}, modeled {} ({}).\n",
        plural(t.sessions, "session", "sessions"),
        plural(t.requests, "billed request", "billed requests"),
        plural(t.tool_calls, "tool call", "tool calls"),
        t.billed_input_tokens,
        t.modeled_input_tokens,
        s.counter
    );
    out.push_str(&format!(
        "Per-request error of the model as applied (calibrated where a fit is applied): median {}%, p90 {}% over {} requests (uncalibrated: median {}%, p90 {}%).\n",
        s.error.median_abs_pct,
        s.error.p90_abs_pct,
        s.error.requests,
        s.error_uncalibrated.median_abs_pct,
        s.error_uncalibrated.p90_abs_pct
    ));
    let measured = s
        .sessions
        .iter()
        .filter(|e| e.measured_system_prompt_tokens.is_some() || e.measured_subagent_prompts > 0)
        .count();
    if measured > 0 {
        let anchors: usize = s.sessions.iter().map(|e| e.anchor_requests).sum();
        let zero = s
            .sessions
            .iter()
            .filter(|e| e.measured_system_prompt_tokens == Some(0))
            .count();
        let at_zero = if zero > 0 {
            format!(
                "; at 0 in {} whose first bill is below the modeled tools and content",
                plural(zero, "session", "sessions")
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "System prompts measured from each agent's first billed request in {} (the logs \
             record none{at_zero}); those {} are not compared.\n",
            plural(measured, "session", "sessions"),
            plural(anchors, "request", "requests")
        ));
    }
    for c in &s.calibrations {
        out.push_str(&fit_line(c));
    }
    out.push_str(&format!(
        "Replayed eager vs deferred: {} vs {} input tokens (of which the deferred list {}), ${:.4} vs ${:.4} with caching, {}, {}.\n",
        t.eager.input_tokens,
        t.deferred.input_tokens,
        t.deferred.deferred_list_tokens,
        t.eager.cost_cached_usd,
        t.deferred.cost_cached_usd,
        plural(t.deferred.searches, "search", "searches"),
        plural(t.deferred.misses, "miss", "misses"),
    ));
    out.push_str(&format!(
        "Dollars: each request at its own model's list prices, {}.\n",
        s.prices
    ));
    out
}

/// A count and its share of a whole: `3 (75.00%)`.
fn share(n: usize, pct: f64) -> String {
    format!("{n} ({pct:.2}%)")
}

/// Each session's adoption figures, and the totals, as a table of its own (8 columns).
pub fn adoption_table(rows: &[(String, Adoption)], total: &Adoption, format: Format) -> String {
    const HEAD: [&str; 8] = [
        "session",
        "searches",
        "select",
        "keyword",
        "returned nothing",
        "deferred calls",
        "after a search that returned it",
        "came first",
    ];
    let line = |name: String, a: &Adoption| {
        vec![
            name,
            a.searches.to_string(),
            a.select_searches.to_string(),
            a.keyword_searches().to_string(),
            a.empty_searches.to_string(),
            a.deferred_calls.to_string(),
            share(a.found_calls, a.found_pct()),
            format!(
                "{}, {} failed",
                share(a.first_calls, a.first_pct()),
                a.failed_first_calls
            ),
        ]
    };
    let mut body: Vec<Vec<String>> = rows
        .iter()
        .map(|(name, a)| line(code_for(format, name), a))
        .collect();
    body.push(line("all".to_string(), total));
    let right: Vec<bool> = (0..HEAD.len()).map(|i| i > 0).collect();
    if format == Format::Md {
        md_table(&HEAD, &body, &right)
    } else {
        text_table(&HEAD, &body, &right)
    }
}

/// The model's own searches, each with the deferred tools it then called, at most this many.
const QUERIES_SHOWN: usize = 20;

/// Adoption per session and overall, and the model's searches with what it then called;
/// nothing when no session searched or called a deferred tool.
fn adoption_section(s: &ImportSummary, format: Format) -> String {
    let t = &s.totals;
    if t.adoption.searches + t.adoption.deferred_calls == 0 {
        return String::new();
    }
    let rows: Vec<(String, Adoption)> = s
        .sessions
        .iter()
        .map(|e| (stem(&e.file), e.adoption))
        .collect();
    let mut out = format!(
        "\nAdoption of the search tool: {} of {} searched, {} called a deferred tool, {} called one a search had returned.\n\n",
        t.sessions_searched,
        plural(t.sessions, "session", "sessions"),
        t.sessions_with_deferred_calls,
        t.sessions_found_and_used
    );
    out.push_str(&adoption_table(&rows, &t.adoption, format));
    let queries: Vec<&crate::session::queries::MinedQuery> =
        s.sessions.iter().flat_map(|e| &e.queries).collect();
    if !queries.is_empty() {
        out.push_str(&format!(
            "\nThe model's own searches and the deferred tools it then called ({} of {}):\n",
            queries.len().min(QUERIES_SHOWN),
            queries.len()
        ));
        for q in queries.iter().take(QUERIES_SHOWN) {
            let called: Vec<String> = q.expected.iter().map(|t| code_for(format, t)).collect();
            out.push_str(&format!(
                "- {} ({}) → {}\n",
                code_for(format, &q.query),
                q.class,
                called.join(", ")
            ));
        }
    }
    out
}

/// A session's name as its rows show it: its file name without the extension.
fn stem(file: &str) -> String {
    Path::new(file)
        .file_stem()
        .map_or_else(|| file.to_string(), |x| x.to_string_lossy().into_owned())
}
