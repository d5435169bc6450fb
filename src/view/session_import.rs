//! The views of a session import (`session import`): billed vs modeled input per session,
//! the fit and the replay's totals, in table, Markdown, CSV and json of the [`ImportSummary`];
//! and the notes the command prints on stderr.

use std::path::Path;

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
];

/// One row a session; the session's file name and model are from the logs: code spans in
/// Markdown, escaped for a terminal, as they are in CSV.
fn rows(s: &ImportSummary, format: Format) -> Vec<Vec<String>> {
    s.sessions
        .iter()
        .map(|e| {
            let name = Path::new(&e.file)
                .file_stem()
                .map_or_else(|| e.file.clone(), |x| x.to_string_lossy().into_owned());
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
            ]
        })
        .collect()
}

pub fn render(s: &ImportSummary, format: Format) -> String {
    match format {
        Format::Json => to_json(s),
        Format::Csv => csv(COLUMNS, &rows(s, format)),
        Format::Table | Format::Md => {
            let right: Vec<bool> = COLUMNS
                .iter()
                .map(|c| !matches!(*c, "session" | "ran" | "model" | "counter"))
                .collect();
            let mut out = if format == Format::Md {
                md_table(COLUMNS, &rows(s, format), &right)
            } else {
                text_table(COLUMNS, &rows(s, format), &right)
            };
            out.push_str(&footer(s));
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
