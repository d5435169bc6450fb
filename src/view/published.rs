//! The views of the published figures (`simulate::published`): the "Published figures
//! reproduced" section of `index.md` (every `published:` figure of the scenarios beside the
//! same quantity measured, under the counter of the provider it was measured on and under
//! `o200k-json`, and the gap split into parts), `data/published.csv`, and `simulate`'s lines.

use crate::output::md_code;
use std::fmt::Write as _;

use serde::Serialize;

use crate::number::{percent, round, thousands};
use crate::output::md_table;
use crate::simulate::ScenarioResult;
use crate::simulate::published::Unit;
use crate::simulate::result::{Gap, PublishedComparison};

/// A value in the figure's unit: `53,000`, `5.2 s`.
fn value(p: &PublishedComparison, x: f64) -> String {
    if p.unit() == Unit::Seconds {
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

fn figures_row(n: usize, s: &ScenarioResult, p: &PublishedComparison) -> Vec<String> {
    let saved = |a: f64, b: f64| {
        if a == 0.0 {
            "–".to_string()
        } else {
            format!("{:.0}%", (a - b) / a * 100.0)
        }
    };
    let mut counter = format!("`{}`", p.counter_name());
    if !p.variant().is_empty() {
        let _ = write!(counter, " ({})", p.variant());
    }
    vec![
        n.to_string(),
        p.figure.source.clone(),
        p.figure.claim.clone(),
        format!(
            "{} in {}, {counter}",
            md_code(p.figure.metric.name()),
            md_code(&s.name)
        ),
        format!(
            "{} → {} ({})",
            opt(p, p.figure.eager_tokens),
            opt(p, p.figure.deferred_tokens),
            p.saved_pct().map_or("–".into(), |v| percent(v, 0))
        ),
        format!(
            "{} → {} ({})",
            value(p, p.measured_eager_tokens),
            value(p, p.measured_deferred_tokens),
            saved(p.measured_eager_tokens, p.measured_deferred_tokens)
        ),
        format!(
            "{} → {} / {} → {}",
            value(p, p.measured_eager_o200k_json),
            value(p, p.measured_deferred_o200k_json),
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
    let mut row = vec![n.to_string(), side.to_string()];
    if let Some(g) = gap {
        row.push(format!(
            "{} → {} ({})",
            opt(p, published),
            value(p, measured),
            signed(p, g.total())
        ));
        for x in [g.counting, g.catalog, g.system, g.conversation, g.other] {
            row.push(signed(p, x));
        }
    } else {
        row.push(format!("{} → {}", opt(p, published), value(p, measured)));
        row.extend(std::iter::repeat_n("–".to_string(), 5));
    }
    row
}

/// What a row's reader must know: ranges, dollars, what is not reproduced, the setup notes.
fn notes(n: usize, p: &PublishedComparison) -> Vec<String> {
    let mut out = Vec::new();
    for (side, range, within) in [
        ("eager", p.figure.eager_range, p.eager_within_range),
        ("deferred", p.figure.deferred_range, p.deferred_within_range),
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
        p.figure.eager_usd,
        p.figure.deferred_usd,
        p.measured_eager_usd,
        p.measured_deferred_usd,
    ) {
        out.push(format!(
            "in dollars: published ${a:.0} → ${b:.0}, measured ${c:.2} → ${d:.2} (input tokens at \
             the model's input price, no caching)"
        ));
    }
    if !p.reproduced() {
        out.push(format!("**not reproduced**: {}", p.not_reproduced().trim()));
    }
    for (side, stated, parts) in [
        ("eager", &p.figure.eager_parts, &p.eager_measured_parts),
        (
            "deferred",
            &p.figure.deferred_parts,
            &p.deferred_measured_parts,
        ),
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
    if !p.note().is_empty() {
        out.push(p.note().trim().to_string());
    }
    out.into_iter().map(|s| format!("{n}. {s}")).collect()
}

/// The report's section of every published figure of the scenarios.
pub fn section(out: &mut String, scenarios: &[ScenarioResult]) {
    let figures: Vec<(&ScenarioResult, &PublishedComparison)> = scenarios
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
         How to read a claim: `docs/methodology/published-figures.md`. Data: \
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
            "quantity, counter",
            "published, eager → deferred",
            "measured",
            "o200k-json / cl100k-json",
        ],
        &rows,
        &[true, false, false, false, true, true, true],
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
            p.figure.eager_tokens,
            p.measured_eager_tokens,
            p.eager_gap,
        ));
        gaps.push(gap_row(
            i + 1,
            "deferred",
            p,
            p.figure.deferred_tokens,
            p.measured_deferred_tokens,
            p.deferred_gap,
        ));
    }
    out.push_str(&md_table(
        &[
            "#",
            "side",
            "published → measured (gap)",
            "counting",
            "catalog",
            "system",
            "conversation",
            "other",
        ],
        &gaps,
        &[true, false, true, true, true, true, true, true],
    ));
    out.push('\n');
}

/// `simulate`'s lines for a scenario's published figures (table and Markdown).
pub fn text(s: &ScenarioResult, md: bool) -> String {
    let mut out = String::new();
    let br = if md { "\\\n" } else { "\n" };
    for p in &s.published {
        let side = |name: &str,
                    published: Option<f64>,
                    measured: f64,
                    [o200k, cl100k]: [f64; 2],
                    gap: Option<Gap>| {
            let published = published.map_or("-".to_string(), |v| format!("{v}"));
            let gap = gap.map_or(String::new(), |g| {
                format!(
                    "; gap {:+}: counting {:+}, catalog {:+}, system {:+}, conversation {:+}, other {:+}",
                    round(g.total(), 2),
                    g.counting,
                    g.catalog,
                    g.system,
                    g.conversation,
                    g.other
                )
            });
            format!(
                "  {name}: published {published}, measured {measured} (o200k-json {o200k}, cl100k-json {cl100k}{gap}){br}"
            )
        };
        out.push_str(&format!(
            "published: {} [{}]{br}  {} in {}, counter {}{}{br}",
            p.figure.claim,
            p.figure.source,
            p.figure.metric,
            p.unit().name(),
            p.counter_name(),
            if p.variant().is_empty() {
                String::new()
            } else {
                format!(", {}", p.variant())
            },
        ));
        out.push_str(&side(
            "eager",
            p.figure.eager_tokens,
            p.measured_eager_tokens,
            [p.measured_eager_o200k_json, p.measured_eager_cl100k_json],
            p.eager_gap,
        ));
        out.push_str(&side(
            "deferred",
            p.figure.deferred_tokens,
            p.measured_deferred_tokens,
            [
                p.measured_deferred_o200k_json,
                p.measured_deferred_cl100k_json,
            ],
            p.deferred_gap,
        ));
        if !p.not_reproduced().is_empty() {
            out.push_str(&format!("  not reproduced: {}{br}", p.not_reproduced()));
        }
        if md {
            out.push('\n');
        }
    }
    out
}

/// A published figure beside the same quantity measured: a row of `data/published.csv`.
/// `measured_*` are counted by `counter` (the provider's the figure was measured on), with
/// the `o200k-json` and `cl100k-json` counts beside; on each side the `*_gap_*` parts add up to measured −
/// published (`simulate::published`). For a figure in seconds (`unit`), the token columns
/// hold seconds and the gap is all `other`.
///
/// A view of the comparison (its columns flat, its text borrowed), not a copy of the figure;
/// the o200k/cl100k columns keep the names this file has always had.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PublishedCsvRow<'a> {
    pub scenario: &'a str,
    /// The article or repository, by name and location.
    pub source: &'a str,
    pub claim: &'a str,
    pub metric: &'static str,
    pub published_eager_tokens: Option<f64>,
    pub published_deferred_tokens: Option<f64>,
    pub published_saved_pct: Option<f64>,
    pub measured_eager_tokens: f64,
    pub measured_deferred_tokens: f64,
    pub measured_saved_pct: f64,
    pub counter: &'static str,
    pub unit: &'static str,
    pub variant: String,
    pub measured_eager_tokens_o200k_json: f64,
    pub measured_deferred_tokens_o200k_json: f64,
    pub measured_eager_tokens_cl100k_json: f64,
    pub measured_deferred_tokens_cl100k_json: f64,
    pub eager_gap_counting: Option<f64>,
    pub eager_gap_catalog: Option<f64>,
    pub eager_gap_system: Option<f64>,
    pub eager_gap_conversation: Option<f64>,
    pub eager_gap_other: Option<f64>,
    pub deferred_gap_counting: Option<f64>,
    pub deferred_gap_catalog: Option<f64>,
    pub deferred_gap_system: Option<f64>,
    pub deferred_gap_conversation: Option<f64>,
    pub deferred_gap_other: Option<f64>,
    pub published_eager_low: Option<f64>,
    pub published_eager_high: Option<f64>,
    pub published_deferred_low: Option<f64>,
    pub published_deferred_high: Option<f64>,
    pub published_eager_usd: Option<f64>,
    pub published_deferred_usd: Option<f64>,
    pub measured_eager_usd: Option<f64>,
    pub measured_deferred_usd: Option<f64>,
    /// False when the harness cannot measure what the source measured (`not_reproduced`
    /// says why and what was measured instead).
    pub reproduced: bool,
    pub not_reproduced: &'a str,
}

impl<'a> PublishedCsvRow<'a> {
    pub fn of(scenario: &'a str, p: &'a PublishedComparison) -> PublishedCsvRow<'a> {
        let part = |g: Option<Gap>, f: fn(&Gap) -> f64| g.map(|g| f(&g));
        let (e, d) = (p.eager_gap, p.deferred_gap);
        PublishedCsvRow {
            scenario,
            source: &p.figure.source,
            claim: &p.figure.claim,
            metric: p.figure.metric.name(),
            published_eager_tokens: p.figure.eager_tokens,
            published_deferred_tokens: p.figure.deferred_tokens,
            published_saved_pct: p.saved_pct(),
            measured_eager_tokens: p.measured_eager_tokens,
            measured_deferred_tokens: p.measured_deferred_tokens,
            measured_saved_pct: p.measured_saved_pct,
            counter: p.counter_name(),
            unit: p.unit().name(),
            variant: p.variant().clone(),
            measured_eager_tokens_o200k_json: p.measured_eager_o200k_json,
            measured_deferred_tokens_o200k_json: p.measured_deferred_o200k_json,
            measured_eager_tokens_cl100k_json: p.measured_eager_cl100k_json,
            measured_deferred_tokens_cl100k_json: p.measured_deferred_cl100k_json,
            eager_gap_counting: part(e, |g| g.counting),
            eager_gap_catalog: part(e, |g| g.catalog),
            eager_gap_system: part(e, |g| g.system),
            eager_gap_conversation: part(e, |g| g.conversation),
            eager_gap_other: part(e, |g| g.other),
            deferred_gap_counting: part(d, |g| g.counting),
            deferred_gap_catalog: part(d, |g| g.catalog),
            deferred_gap_system: part(d, |g| g.system),
            deferred_gap_conversation: part(d, |g| g.conversation),
            deferred_gap_other: part(d, |g| g.other),
            published_eager_low: p.figure.eager_range.map(|r| r[0]),
            published_eager_high: p.figure.eager_range.map(|r| r[1]),
            published_deferred_low: p.figure.deferred_range.map(|r| r[0]),
            published_deferred_high: p.figure.deferred_range.map(|r| r[1]),
            published_eager_usd: p.figure.eager_usd,
            published_deferred_usd: p.figure.deferred_usd,
            measured_eager_usd: p.measured_eager_usd,
            measured_deferred_usd: p.measured_deferred_usd,
            reproduced: p.reproduced(),
            not_reproduced: p.not_reproduced(),
        }
    }
}

/// The rows of `data/published.csv`: every published figure of every scenario.
pub fn csv_rows(scenarios: &[ScenarioResult]) -> Vec<PublishedCsvRow<'_>> {
    scenarios
        .iter()
        .flat_map(|s| s.published.iter().map(|p| PublishedCsvRow::of(&s.name, p)))
        .collect()
}
