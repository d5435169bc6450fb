//! The report's scenario tables: the summary (one row per scenario, the columns a screen
//! shows; every column is in `data/scenarios.csv`) and one short section per scenario, its
//! charts folded. The rows come from `view::simulate`'s one eager-vs-deferred view.

use std::fmt::Write as _;

use super::figures::{self, Figure, Section};
use crate::number::{int, usd};
use crate::output::{md_code, md_table, md_text};
use crate::simulate::ScenarioResult;
use crate::view::simulate::{mode_rows, never_loaded_sentence, saved};

/// The rows of `view::simulate::mode_rows` a scenario section shows; the rest (requests,
/// output tokens, latencies, invalidations) are in `data/scenarios.csv` and `simulate`'s table.
const SECTION_ROWS: [&str; 9] = [
    "first request, input tokens",
    "  of which tool definitions",
    "  of which the deferred list",
    "whole conversation, input tokens",
    "searches (misses, retries)",
    "calls failed / premature / unavailable",
    "cost per conversation, no caching",
    "cost per conversation, prompt caching",
    "peak context-window occupancy",
];

/// The report's summary table: one row per scenario, and the caveats under it.
pub fn summary_table(out: &mut String, scenarios: &[ScenarioResult]) {
    out.push_str(
        "Each scenario is replayed twice: **eager** sends every tool definition in every \
         request; **deferred** sends a search tool and a list of the deferred tools, and loads \
         definitions when a search returns them. *Saved* is `(eager − deferred) / eager`; a \
         negative value means deferral cost more; `*` marks a saving to read with the note \
         under the table, `n/a` a conversation that cannot be sent. Dollars are for 1,000 \
         conversations. Searches, failed calls, window use and cache invalidations: \
         `data/scenarios.csv` and each scenario's section.\n\n",
    );
    let arrow = |a: String, b: String| format!("{a} → {b}");
    let rows: Vec<Vec<String>> = scenarios
        .iter()
        .map(|s| {
            let (e, d) = (&s.eager, &s.deferred);
            vec![
                md_code(&s.name),
                format!("{} ({})", int(s.tool_count), int(s.deferred_count)),
                arrow(int(e.first_request_tokens), int(d.first_request_tokens)),
                saved(s, s.savings.first_request_pct),
                arrow(int(e.total_input_tokens), int(d.total_input_tokens)),
                saved(s, s.savings.total_input_pct),
                arrow(
                    usd(e.cost_usd.without_caching * 1000.0),
                    usd(d.cost_usd.without_caching * 1000.0),
                ),
                arrow(
                    usd(e.cost_usd.with_caching * 1000.0),
                    usd(d.cost_usd.with_caching * 1000.0),
                ),
            ]
        })
        .collect();
    out.push_str(&md_table(
        &[
            "scenario",
            "tools (deferred)",
            "first request, tokens",
            "saved",
            "conversation input, tokens",
            "saved",
            "$ no caching",
            "$ prompt caching",
        ],
        &rows,
        &[false, true, true, true, true, true, true, true],
    ));
    out.push('\n');
    out.push_str(&never_loaded_sentence(scenarios));
    for s in scenarios.iter().filter(|s| !s.savings.caveats.is_empty()) {
        let _ = writeln!(
            out,
            "\\* {}: {}.\n",
            md_code(&s.name),
            md_text(&s.savings.caveats.join("; "))
        );
    }
}

/// A scenario's description as one escaped Markdown paragraph (it is the user's: it must not
/// become a link, an image, HTML, a heading or a table; a blank line in it let a forged table
/// and heading through).
fn description(text: &str) -> String {
    crate::output::md_paragraph(text)
}

fn settings(s: &ScenarioResult) -> String {
    let st = &s.settings;
    [
        ("profile", s.model.name.clone()),
        ("scorer", st.scorer.to_string()),
        ("discovery", st.discovery.to_string()),
        ("listing", st.listing.to_string()),
        ("list style", st.list_style.to_string()),
        ("reveal", st.reveal.to_string()),
        ("max results", st.max_results.to_string()),
    ]
    .iter()
    .map(|(k, v)| format!("{k} {}", md_code(v)))
    .collect::<Vec<_>>()
    .join(", ")
}

/// The opening line of a folded block, recognised by the HTML page as the report's own.
pub const FOLD_CLOSE: &str = "</details>";

pub fn fold_open(label: &str) -> String {
    format!("<details><summary>{label}</summary>")
}

/// The report's "Scenarios" section: per scenario its settings, short table, caveats and
/// (folded) charts.
pub fn sections(out: &mut String, scenarios: &[ScenarioResult], charts: &[Figure]) {
    if scenarios.is_empty() {
        return;
    }
    out.push_str(
        "## Scenarios\n\nPer-request numbers: `data/requests.csv`; totals, every column: \
         `data/scenarios.csv` (or `toolbudget simulate SCENARIO`).\n\n",
    );
    // Each scenario has the same charts: how to read them is said once, here.
    if let Some(first) = scenarios.iter().find(|s| {
        figures::of(charts, &Section::Scenario(s.name.clone()))
            .next()
            .is_some()
    }) {
        out.push_str("Each scenario's charts (folded under its table):\n\n");
        for f in figures::of(charts, &Section::Scenario(first.name.clone())) {
            let kind = f.title.split(": ").next().unwrap_or(&f.title);
            let _ = writeln!(out, "- *{}*: {}", md_text(kind), f.caption);
        }
        out.push('\n');
    }
    for s in scenarios {
        let _ = writeln!(out, "### {}\n", md_code(&s.name));
        if let Some(d) = &s.description {
            let _ = writeln!(out, "{}\n", description(d));
        }
        let _ = writeln!(
            out,
            "{} tools, {} deferred; {}.\n",
            int(s.tool_count),
            int(s.deferred_count),
            settings(s)
        );
        let rows: Vec<Vec<String>> = mode_rows(s)
            .into_iter()
            .filter(|r| SECTION_ROWS.contains(&r[0].as_str()))
            .collect();
        out.push_str(&md_table(
            &["", "eager", "deferred", "saved"],
            &rows,
            &[false, true, true, true],
        ));
        out.push('\n');
        for caveat in &s.savings.caveats {
            let _ = writeln!(out, "\\* {}.\n", md_text(caveat));
        }
        let section = Section::Scenario(s.name.clone());
        let figs: Vec<&Figure> = figures::of(charts, &section).collect();
        if !figs.is_empty() {
            let _ = writeln!(
                out,
                "{}\n",
                fold_open(&format!(
                    "Charts: tokens per request, cumulative tokens and cost ({})",
                    figs.len()
                ))
            );
            for f in figs {
                let _ = writeln!(out, "![{}]({})\n", md_text(&f.title), f.path);
            }
            let _ = writeln!(out, "{FOLD_CLOSE}\n");
        }
    }
}
