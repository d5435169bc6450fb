//! The "Published figures reproduced" section of `index.md`: every `published:` figure of the
//! scenarios beside the same quantity measured (`simulate::published`), under the counter of
//! the provider it was measured on and under `o200k-json`, and the gap split into parts.

use std::fmt::Write as _;

use super::ReportData;
use super::charts::thousands;
use crate::output::md_table;
use crate::simulate::ScenarioResult;
use crate::simulate::result::{Gap, PublishedComparison};

/// A value in the figure's unit: `53,000`, `5.2 s`.
fn value(p: &PublishedComparison, x: f64) -> String {
    if p.unit == "seconds" {
        format!("{x:.1} s")
    } else {
        thousands(x, 0)
    }
}

fn opt(p: &PublishedComparison, x: Option<f64>) -> String {
    x.map_or("–".into(), |v| value(p, v))
}

fn signed(p: &PublishedComparison, x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    let sign = if x > 0.0 { "+" } else { "−" };
    format!("{sign}{}", value(p, x.abs()))
}

fn pct(x: Option<f64>) -> String {
    x.map_or("–".into(), |v| format!("{v:.0}%"))
}

fn figures_row(n: usize, s: &ScenarioResult, p: &PublishedComparison) -> Vec<String> {
    let saved = |a: f64, b: f64| {
        if a == 0.0 {
            "–".to_string()
        } else {
            format!("{:.0}%", (a - b) / a * 100.0)
        }
    };
    let mut counter = format!("`{}`", p.counter);
    if !p.variant.is_empty() {
        let _ = write!(counter, " ({})", p.variant);
    }
    vec![
        n.to_string(),
        p.source.clone(),
        p.claim.clone(),
        format!("`{}` in `{}`", p.metric, s.name),
        counter,
        format!(
            "{} → {} ({})",
            opt(p, p.eager_tokens),
            opt(p, p.deferred_tokens),
            pct(p.saved_pct)
        ),
        format!(
            "{} → {} ({})",
            value(p, p.measured_eager_tokens),
            value(p, p.measured_deferred_tokens),
            saved(p.measured_eager_tokens, p.measured_deferred_tokens)
        ),
        format!(
            "{} → {}",
            value(p, p.measured_eager_o200k_json),
            value(p, p.measured_deferred_o200k_json)
        ),
        format!(
            "{} → {}",
            value(p, p.measured_eager_cl100k_json),
            value(p, p.measured_deferred_cl100k_json)
        ),
    ]
}

fn gap_row(
    n: usize,
    side: &str,
    p: &PublishedComparison,
    published: Option<f64>,
    measured: f64,
    gap: Option<Gap>,
) -> Vec<String> {
    let mut row = vec![
        n.to_string(),
        side.to_string(),
        opt(p, published),
        value(p, measured),
    ];
    match gap {
        Some(g) => {
            row.push(signed(p, g.total()));
            for x in [g.counting, g.catalog, g.system, g.conversation, g.other] {
                row.push(signed(p, x));
            }
        }
        None => row.extend(std::iter::repeat_n("–".to_string(), 6)),
    }
    row
}

/// What a row's reader must know: ranges, dollars, what is not reproduced, the setup notes.
fn notes(n: usize, p: &PublishedComparison) -> Vec<String> {
    let mut out = Vec::new();
    for (side, range, within) in [
        ("eager", p.eager_range, p.eager_within_range),
        ("deferred", p.deferred_range, p.deferred_within_range),
    ] {
        if let (Some([lo, hi]), Some(inside)) = (range, within) {
            out.push(format!(
                "{side}: published runs range {} to {} (the gap is to the middle); measured {} \
                 is {} the range",
                value(p, lo),
                value(p, hi),
                value(
                    p,
                    if side == "eager" {
                        p.measured_eager_tokens
                    } else {
                        p.measured_deferred_tokens
                    }
                ),
                if inside { "inside" } else { "outside" }
            ));
        }
    }
    if let (Some(a), Some(b), Some(c), Some(d)) = (
        p.eager_usd,
        p.deferred_usd,
        p.measured_eager_usd,
        p.measured_deferred_usd,
    ) {
        out.push(format!(
            "in dollars: published ${a:.0} → ${b:.0}, measured ${c:.2} → ${d:.2} (input tokens at \
             the model's input price, no caching)"
        ));
    }
    if !p.reproduced {
        out.push(format!("**not reproduced**: {}", p.not_reproduced.trim()));
    }
    for (side, stated, parts) in [
        ("eager", &p.eager_stated, &p.eager_measured_parts),
        ("deferred", &p.deferred_stated, &p.deferred_measured_parts),
    ] {
        if let Some(tools) = stated.tools
            && let Some(catalog) = stated.catalog
            && tools > 0
        {
            out.push(format!(
                "{side} catalog: the source's {} tools at {} tokens each, ours {} tokens of \
                 definitions",
                tools,
                thousands(catalog / tools as f64, 0),
                thousands(parts.catalog, 0)
            ));
        }
    }
    if !p.note.is_empty() {
        out.push(p.note.trim().to_string());
    }
    out.into_iter().map(|s| format!("{n}. {s}")).collect()
}

pub fn section(out: &mut String, data: &ReportData) {
    let figures: Vec<(&ScenarioResult, &PublishedComparison)> = data
        .scenarios
        .iter()
        .flat_map(|s| s.published.iter().map(move |p| (s, p)))
        .collect();
    if figures.is_empty() {
        return;
    }
    out.push_str(
        "## Published figures reproduced\n\nEach row is a number an article or repository \
         published, beside the same quantity measured on a scenario built to match the \
         source's setup (`scenarios/published/`), counted by the counter of the provider the \
         figure was measured on, with the `o200k-json` and `cl100k-json` counts beside it \
         (what counting alone changes). The second table splits measured − published on each side into parts that \
         add up to it: **counting** (our counter against the source's count: the whole gap \
         where the inputs are the source's own, our count of the source's first request against \
         its published count where it gave one, else 0: the sources counted with the \
         provider's own count, as the figure's counter does), **catalog** (tool definitions against the size the source states), \
         **system** (system prompt), **conversation** (messages, and the whole gap where only \
         the conversation is modeled), **other** (tool-use preamble, search tool, deferred \
         list, and whatever the published number holds that the source does not attribute). \
         How to read a claim: README, \"Reading a published claim\". Data: \
         `data/published.csv`.\n\n",
    );
    let rows: Vec<Vec<String>> = figures
        .iter()
        .enumerate()
        .map(|(i, (s, p))| figures_row(i + 1, s, p))
        .collect();
    out.push_str(&md_table(
        &[
            "#",
            "source",
            "claim",
            "quantity",
            "counter",
            "published, eager → deferred",
            "measured",
            "o200k-json",
            "cl100k-json",
        ],
        &rows,
        &[true, false, false, false, false, true, true, true, true],
    ));
    gap_table(out, &figures);
    let notes: Vec<String> = figures
        .iter()
        .enumerate()
        .flat_map(|(i, (_, p))| notes(i + 1, p))
        .collect();
    if !notes.is_empty() {
        out.push_str("Notes, by row:\n\n");
        for n in notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
}

/// The second table: measured − published on each side, by part.
fn gap_table(out: &mut String, figures: &[(&ScenarioResult, &PublishedComparison)]) {
    out.push_str("\nThe gap, measured − published, by part:\n\n");
    let mut gaps = Vec::new();
    for (i, (_, p)) in figures.iter().enumerate() {
        gaps.push(gap_row(
            i + 1,
            "eager",
            p,
            p.eager_tokens,
            p.measured_eager_tokens,
            p.eager_gap,
        ));
        gaps.push(gap_row(
            i + 1,
            "deferred",
            p,
            p.deferred_tokens,
            p.measured_deferred_tokens,
            p.deferred_gap,
        ));
    }
    out.push_str(&md_table(
        &[
            "#",
            "side",
            "published",
            "measured",
            "gap",
            "counting",
            "catalog",
            "system",
            "conversation",
            "other",
        ],
        &gaps,
        &[true, false, true, true, true, true, true, true, true, true],
    ));
    out.push('\n');
}
