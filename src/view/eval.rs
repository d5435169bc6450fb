//! The views of an evaluation: `eval`'s table, Markdown, CSV (metric rows or per-query rows)
//! and json of an [`EvalResult`], and the report's search-quality, summary and failure
//! sections of its query sets (`EvalSet`). The CSV rows ([`EvalCsvRow`]) are `eval --format
//! csv`'s and the report's `data/eval.csv`.

use crate::output::{md_code, md_text};
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::eval::metrics::Metric;
use crate::eval::{EvalResult, ScorerName, ScorerResult};
use crate::experiment::eval::EvalSet;
use crate::number::{int, metric, plural};
use crate::output::{
    Format, TableFn, code_for, csv, csv_rows as csv_text, md_table, to_json, words_for,
};
use crate::view::report::figures::{self, Figure, Section};

fn fixed(x: f64) -> String {
    format!("{x:.4}")
}

fn metric_headers(result: &EvalResult) -> Vec<Metric> {
    result
        .results
        .first()
        .map(|r| r.metrics.keys().cloned().collect())
        .unwrap_or_default()
}

fn latency_cells(r: &ScorerResult) -> [String; 2] {
    r.latency_us.map_or([String::new(), String::new()], |l| {
        [format!("{:.1}", l.p50), format!("{:.1}", l.p95)]
    })
}

/// Renders the result; pure.
pub fn render(result: &EvalResult, format: Format) -> String {
    let per_query = result.results.iter().any(|r| r.per_query.is_some());
    match format {
        Format::Json => to_json(result),
        Format::Csv if per_query => per_query_csv(result),
        Format::Csv => csv_text(&csv_rows(result)),
        Format::Table | Format::Md => {
            // Scorer names, query ids, tool ids and file names are the user's (or an external
            // scorer's): code spans and escaped text in Markdown.
            let table = crate::output::table_for(format);
            let mut out = setting_text(result, format);
            out.push('\n');
            out.push_str(&metrics_table(result, table, format));
            out.push('\n');
            out.push_str(&frame_text(result, format));
            for r in &result.results {
                out.push_str(&scorer_line(r, format));
            }
            out.push('\n');
            out.push_str(&class_table(result, table, format));
            for r in &result.results {
                if let Some(points) = &r.thresholds {
                    out.push('\n');
                    out.push_str(&thresholds_table(result, &r.scorer, points, table, format));
                }
            }
            if per_query {
                out.push('\n');
                out.push_str(&per_query_table(result, table, format));
            }
            out
        }
    }
}

/// The first line: where the expected tools were ranked.
fn setting_text(result: &EvalResult, format: Format) -> String {
    match &result.pool {
        Some(p) => {
            let mut s = format!(
                "setting: pooled — ranked among {} tools: the catalog's {} and {} distractors from \
                 {} pool files ({})",
                result.tool_count,
                p.own_tools,
                p.added_tools,
                p.files,
                words_for(format, &p.sources.join(", "))
            );
            if p.duplicate_ids > 0 {
                s.push_str(&format!(
                    "; {} pool tools left out (id already taken)",
                    p.duplicate_ids
                ));
            }
            if p.skipped_files > 0 {
                s.push_str(&format!(
                    "; {} pool files skipped (given as --catalog)",
                    p.skipped_files
                ));
            }
            s.push('\n');
            s
        }
        None => format!(
            "setting: own catalog — ranked among its {} tools, no distractors\n",
            result.tool_count
        ),
    }
}

/// Per scorer and class: the recall cutoffs and MRR, or for no-match queries the refusal.
fn class_table(result: &EvalResult, table: TableFn, format: Format) -> String {
    let recalls: Vec<Metric> = result.ks.iter().map(|&k| Metric::Recall(k)).collect();
    let recall_names: Vec<String> = recalls.iter().map(ToString::to_string).collect();
    let mut headers: Vec<&str> = vec!["scorer", "class", "queries"];
    headers.extend(recall_names.iter().map(String::as_str));
    headers.extend(["mrr", "refusal"]);
    let mut rows = Vec::new();
    for r in &result.results {
        for (class, c) in &r.classes {
            let cell = |m: &Metric| c.metrics.get(m).map(|v| fixed(*v)).unwrap_or_default();
            let mut row = vec![
                code_for(format, &r.scorer.to_string()),
                class.to_string(),
                c.queries.to_string(),
            ];
            row.extend(recalls.iter().map(cell));
            row.push(cell(&Metric::Mrr));
            row.push(cell(&Metric::Refusal));
            rows.push(row);
        }
    }
    let right: Vec<bool> = headers
        .iter()
        .map(|h| !["scorer", "class"].contains(h))
        .collect();
    table(&headers, &rows, &right)
}

/// One scorer's refusal curve.
fn thresholds_table(
    result: &EvalResult,
    scorer: &ScorerName,
    points: &[crate::eval::thresholds::ThresholdPoint],
    table: TableFn,
    format: Format,
) -> String {
    let recalls: Vec<Metric> = result.ks.iter().map(|&k| Metric::Recall(k)).collect();
    let recall_names: Vec<String> = recalls.iter().map(ToString::to_string).collect();
    let mut headers: Vec<&str> = vec!["threshold", "false positives", "answered"];
    headers.extend(recall_names.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            let mut row = vec![
                p.threshold
                    .map_or_else(|| "none".to_string(), |t| format!("{t:.6}")),
                p.false_positive_rate.map_or_else(|| "-".to_string(), fixed),
                fixed(p.answered),
            ];
            row.extend(
                recalls
                    .iter()
                    .map(|m| fixed(p.recall.get(m).copied().unwrap_or(0.0))),
            );
            row
        })
        .collect();
    let right = vec![true; headers.len()];
    format!(
        "{}: refusal curve (results scoring below the threshold dropped; false positives = \
         no-match queries still answered)\n{}",
        code_for(format, &scorer.to_string()),
        table(&headers, &rows, &right)
    )
}

/// Whether some query of the set expects a tool (the metrics average those queries).
fn answerable(result: &EvalResult) -> bool {
    let no_match = result
        .classes
        .get(&crate::eval::classes::NO_MATCH)
        .copied()
        .unwrap_or(0);
    result.query_count > no_match
}

fn metrics_table(result: &EvalResult, table: TableFn, format: Format) -> String {
    let names = metric_headers(result);
    let name_texts: Vec<String> = names.iter().map(ToString::to_string).collect();
    let mut headers: Vec<&str> = vec!["scorer"];
    headers.extend(name_texts.iter().map(String::as_str));
    headers.extend(["refused", "p50 µs", "p95 µs"]);
    let rows: Vec<Vec<String>> = result
        .results
        .iter()
        .map(|r| {
            let mut row = vec![code_for(format, &r.scorer.to_string())];
            // A set with no query that expects a tool has no mean to show: n/a, never 0.
            row.extend(names.iter().map(|m| match r.metric(m) {
                Some(v) if answerable(result) => fixed(v),
                _ => "n/a".to_string(),
            }));
            row.push(r.refused_queries.to_string());
            row.extend(latency_cells(r));
            row
        })
        .collect();
    let right: Vec<bool> = headers.iter().map(|h| *h != "scorer").collect();
    table(&headers, &rows, &right)
}

/// What was evaluated: queries, tools ranked, the search tool left out, depth.
fn frame_text(result: &EvalResult, format: Format) -> String {
    let tools = match &result.search_tool {
        Some(s) => format!(
            "{} tools ({} ranked: {} is the search tool, never a result)",
            result.tool_count,
            result.ranked_tools,
            code_for(format, s)
        ),
        None => plural(result.tool_count, "tool", "tools"),
    };
    let classes = result
        .classes
        .iter()
        .map(|(c, n)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let latency = if result.results.iter().any(|r| r.latency_us.is_some()) {
        "latency is per search call, measured here"
    } else {
        "no latency was measured"
    };
    format!(
        "{} queries ({}; {classes}) over {tools}; {} results requested per query (MRR@{}); \
         metrics average the queries that expect a tool; {latency}. Near-duplicates: {} tools \
         in {} clusters across servers.\n",
        result.query_count,
        result.queries,
        result.depth,
        result.depth,
        result.near_duplicates.tools,
        result.near_duplicates.clusters
    )
}

fn scorer_line(r: &ScorerResult, format: Format) -> String {
    let ci = [Metric::Recall(5), Metric::Mrr]
        .iter()
        .filter_map(|m| {
            let [lo, hi] = r.ci95.get(m)?;
            Some(format!(
                "{m} {} (95% CI {}–{})",
                fixed(r.metric(m).unwrap_or(0.0)),
                fixed(*lo),
                fixed(*hi)
            ))
        })
        .collect::<Vec<_>>()
        .join(", ");
    let settings = r
        .settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = format!("{}: {ci}", code_for(format, &r.scorer.to_string()));
    if !settings.is_empty() {
        out.push_str(&format!("; settings: {}", words_for(format, &settings)));
    }
    if let (Some(own), Some(trip)) = (r.reported_latency_us, r.latency_us) {
        out.push_str(&format!(
            "; the process reported p50 {:.1} µs, p95 {:.1} µs of its own (round trip measured here: p50 {:.1} µs, p95 {:.1} µs)",
            own.p50, own.p95, trip.p50, trip.p95
        ));
    }
    if let Some(run) = &r.run {
        let s = run.stats;
        out.push_str(&format!(
            "; run {} ({}, ties by tool id {}): {} without a ranking (scored 0)",
            words_for(format, &run.file),
            run.format,
            match run.ties {
                crate::eval::runfile::TieBreak::Id => "ascending",
                crate::eval::runfile::TieBreak::Trec => "descending, as trec_eval",
            },
            plural(s.missing_queries, "query", "queries"),
        ));
        if s.unknown_tools > 0 {
            out.push_str(&format!(
                ", {} (never relevant)",
                plural(
                    s.unknown_tools,
                    "unknown tool entry",
                    "unknown tool entries"
                )
            ));
        }
        if s.cut_entries > 0 {
            out.push_str(&format!(
                ", {} past depth {} cut",
                plural(s.cut_entries, "entry", "entries"),
                "the evaluation's"
            ));
        }
    }
    if r.refused_queries > 0 {
        out.push_str(&format!(
            "; {} queries refused (scored 0)",
            r.refused_queries
        ));
    }
    let w = &r.wrong_sibling;
    if w.queries > 0 {
        out.push_str(&format!(
            "; wrong sibling first in {} of {} queries whose tool has near-duplicates ({})",
            w.wrong,
            w.queries,
            fixed(w.rate)
        ));
    }
    out.push('\n');
    out
}

fn ranks_text(ranks: &[Option<usize>]) -> String {
    ranks
        .iter()
        .map(|r| r.map_or_else(|| "-".to_string(), |r| r.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

fn per_query_table(result: &EvalResult, table: TableFn, format: Format) -> String {
    let last_k = result.ks.last().copied().unwrap_or(10);
    let recall = Metric::Recall(last_k);
    let recall_name = recall.to_string();
    let mut rows = Vec::new();
    for r in &result.results {
        for q in r.per_query.iter().flatten() {
            rows.push(vec![
                code_for(format, &r.scorer.to_string()),
                code_for(format, &q.id),
                q.class.to_string(),
                ranks_text(&q.ranks),
                // A no-match query has no recall or rank: n/a, never 0.
                q.metrics
                    .get(&recall)
                    .map_or_else(|| "n/a".to_string(), |v| fixed(*v)),
                q.metrics
                    .get(&Metric::Mrr)
                    .map_or_else(|| "n/a".to_string(), |v| fixed(*v)),
                q.top
                    .iter()
                    .take(3)
                    .map(|t| code_for(format, t))
                    .collect::<Vec<_>>()
                    .join(", "),
            ]);
        }
    }
    table(
        &[
            "scorer",
            "query",
            "class",
            "expected ranks",
            &recall_name,
            "mrr",
            "top 3",
        ],
        &rows,
        &[false, false, false, true, true, true, false],
    )
}

fn per_query_csv(result: &EvalResult) -> String {
    let metric_names = metric_headers(result);
    let metric_texts: Vec<String> = metric_names.iter().map(ToString::to_string).collect();
    let mut headers = vec![
        "scorer", "id", "query", "class", "expected", "ranks", "top", "refused",
    ];
    headers.extend(metric_texts.iter().map(String::as_str));
    let mut rows = Vec::new();
    for r in &result.results {
        for q in r.per_query.iter().flatten() {
            let mut row = vec![
                r.scorer.to_string(),
                q.id.clone(),
                q.query.clone(),
                q.class.to_string(),
                q.expected.join(";"),
                ranks_text(&q.ranks).replace(',', ";"),
                q.top.join(";"),
                q.refused.clone().unwrap_or_default(),
            ];
            // A metric the query has not (a no-match query's recall): an empty cell, never 0.
            row.extend(
                metric_names
                    .iter()
                    .map(|m| q.metrics.get(m).map(|v| fixed(*v)).unwrap_or_default()),
            );
            rows.push(row);
        }
    }
    csv(&headers, &rows)
}

/// The `class` of CSV rows over every answerable query.
pub const ALL_CLASSES: &str = "all";
/// The CSV metric name of [`WrongSibling::rate`].
pub const WRONG_SIBLING_RATE: &str = "wrong_sibling_rate";

/// The rows of the eval CSV (`eval --format csv`, the report's `data/eval.csv`): per
/// scorer, the metrics over all answerable queries (class `all`, with intervals), the
/// wrong-sibling rate, then each class's metrics.
pub fn csv_rows(result: &EvalResult) -> Vec<EvalCsvRow> {
    let mut rows = Vec::new();
    for r in &result.results {
        let row = |class: &str, metric: &str, value: Option<f64>| EvalCsvRow {
            set: result.set.clone(),
            setting: result.setting().to_string(),
            tool_count: result.tool_count,
            ranked_tools: result.ranked_tools,
            query_count: result.query_count,
            scorer: r.scorer.to_string(),
            refused_queries: r.refused_queries,
            class: class.to_string(),
            metric: metric.to_string(),
            value,
            ci95_low: None,
            ci95_high: None,
        };
        for (metric, &value) in &r.metrics {
            let ci = r.ci95.get(metric);
            rows.push(EvalCsvRow {
                ci95_low: ci.map(|c| c[0]),
                ci95_high: ci.map(|c| c[1]),
                ..row(ALL_CLASSES, &metric.to_string(), value)
            });
        }
        rows.push(row(
            ALL_CLASSES,
            WRONG_SIBLING_RATE,
            Some(r.wrong_sibling.rate),
        ));
        for (class, c) in &r.classes {
            for (metric, &value) in &c.metrics {
                rows.push(row(class.as_str(), &metric.to_string(), Some(value)));
            }
        }
    }
    rows
}

/// One row of the eval CSV: one metric of one scorer on one query set. Measured latency is not
/// a column, so the file is the same bytes on every run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalCsvRow {
    pub set: String,
    /// `own` (the query set's catalog alone) or `pooled` (among the pool's distractors).
    pub setting: String,
    pub tool_count: usize,
    pub ranked_tools: usize,
    pub query_count: usize,
    pub scorer: String,
    pub refused_queries: usize,
    /// `all`, or the query class the metric is averaged over.
    pub class: String,
    pub metric: String,
    /// Empty (n/a) when no query of the set expects a tool: there is no mean.
    pub value: Option<f64>,
    /// Empty when no interval is computed for the metric.
    pub ci95_low: Option<f64>,
    pub ci95_high: Option<f64>,
}

/// The report's summary line per query set: its best scorer.
pub fn summary(out: &mut String, evals: &[EvalSet]) {
    for set in evals {
        if let Some((best, key)) = best_scorer(set) {
            let ci = best
                .ci95
                .get(&key)
                .map(|c| format!(" (95% CI {}–{})", metric(c[0]), metric(c[1])))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- Search on {} ({} queries, {} tools): best scorer **{}**, {} = **{}**{}, \
                 MRR {}.",
                md_code(set.name()),
                int(set.result.query_count),
                int(set.result.tool_count),
                best.scorer,
                key,
                metric(best.metric(&key).unwrap_or(0.0)),
                ci,
                metric(best.metric(&Metric::Mrr).unwrap_or(0.0)),
            );
        }
    }
}

/// Misses listed per scorer and query set in `index.md` (all of them are in `misses.csv`).
pub const MISSES_SHOWN: usize = 10;
/// Ranked tools shown for a missed query.
pub const RANKED_SHOWN: usize = 5;

/// The scorer with the highest recall@5 (else the first recall metric), ties broken by MRR,
/// then by name.
pub fn best_scorer(set: &EvalSet) -> Option<(&ScorerResult, Metric)> {
    let ks = &set.result.ks;
    let key = if ks.contains(&5) {
        Metric::Recall(5)
    } else {
        Metric::Recall(*ks.first()?)
    };
    set.result
        .results
        .iter()
        .filter(|s| s.metric(&key).is_some())
        .max_by(|a, b| {
            let m = |s: &ScorerResult, k: &Metric| s.metric(k).unwrap_or(0.0);
            m(a, &key)
                .total_cmp(&m(b, &key))
                .then_with(|| m(a, &Metric::Mrr).total_cmp(&m(b, &Metric::Mrr)))
                .then_with(|| b.scorer.cmp(&a.scorer))
        })
        .map(|s| (s, key))
}

/// The report's "Search quality" section: per query set its table, skipped scorers and chart.
pub fn sections(out: &mut String, evals: &[EvalSet], charts: &[Figure]) {
    if evals.is_empty() {
        return;
    }
    out.push_str(
        "## Search quality\n\nEach labeled query is searched over its whole catalog (the search \
         tool, never a search result, left out). \
         recall@k: share of a query's expected tools in the first k results; hit@k: at least \
         one found; MRR: 1 / rank of the first expected tool; nDCG@10 with binary gains. Means \
         over all queries (a query with no results scores 0); brackets give the 95% bootstrap \
         interval of recall@5; a column of refused queries appears when a scorer refused any \
         (they score 0). hit@k, complete@k (every expected tool in the first k) and \
         all intervals: `data/eval.csv`.\n\n",
    );
    for set in evals {
        let _ = writeln!(
            out,
            "### {}: {} queries over {} ({} tools)\n",
            md_code(set.name()),
            int(set.result.query_count),
            md_text(&set.catalog),
            int(set.result.tool_count)
        );
        if let Some(first) = set.result.results.first() {
            // recall@k, MRR and nDCG@10 here; hit@k, complete@k and the rest in eval.csv.
            let names: Vec<&Metric> = first
                .metrics
                .keys()
                .filter(|n| n.in_report_table())
                .collect();
            // recall@5's interval in its own cell; refused queries only when a scorer refused.
            let name_texts: Vec<String> = names
                .iter()
                .map(|n| {
                    if **n == Metric::Recall(5) {
                        format!("{n} (95% CI)")
                    } else {
                        n.to_string()
                    }
                })
                .collect();
            let refusals = set.result.results.iter().any(|sc| sc.refused_queries > 0);
            let mut headers = vec!["scorer"];
            headers.extend(name_texts.iter().map(String::as_str));
            if refusals {
                headers.push("refused queries");
            }
            let rows: Vec<Vec<String>> = set
                .result
                .results
                .iter()
                .map(|sc| {
                    let mut row = vec![sc.scorer.to_string()];
                    row.extend(names.iter().map(|n| {
                        let value = sc.metric(n).map_or_else(|| "n/a".to_string(), metric);
                        match sc.ci95.get(*n).filter(|_| **n == Metric::Recall(5)) {
                            Some(c) => format!("{value} ({}–{})", metric(c[0]), metric(c[1])),
                            None => value,
                        }
                    }));
                    if refusals {
                        row.push(int(sc.refused_queries));
                    }
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
        for f in figures::of(charts, &Section::Eval(set.name().to_string())) {
            figures::embed(out, f);
        }
    }
}

/// The report's "Failures" section: the queries each scorer missed.
pub fn failures(out: &mut String, evals: &[EvalSet]) {
    if evals.iter().all(|s| s.misses.is_empty()) {
        return;
    }
    out.push_str("## Failures\n\n");
    for set in evals {
        if set.misses.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "### {}: queries whose expected tools were not all in the top {}\n",
            md_code(set.name()),
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
                        md_code(&m.query_id),
                        md_text(&m.query),
                        m.expected
                            .split_whitespace()
                            .map(md_code)
                            .collect::<Vec<_>>()
                            .join(" "),
                        if m.ranked.is_empty() {
                            "(nothing)".to_string()
                        } else {
                            m.ranked
                                .split_whitespace()
                                .take(RANKED_SHOWN)
                                .map(md_code)
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

/// Every scorer's rankings as a JSONL run: one line per (scorer, query), results to the
/// depth with unrounded scores, so `--run` reads them back to the same rankings and metrics.
pub fn run_jsonl(result: &EvalResult) -> String {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        id: &'a str,
        scorer: &'a str,
        query: &'a str,
        results: Vec<Entry<'a>>,
    }
    #[derive(serde::Serialize)]
    struct Entry<'a> {
        id: &'a str,
        score: f64,
    }
    let mut out = String::new();
    for r in &result.results {
        for q in &r.rankings {
            let line = Line {
                id: &q.id,
                scorer: r.scorer.as_str(),
                query: &q.query,
                results: q
                    .results
                    .iter()
                    .map(|(id, score)| Entry { id, score: *score })
                    .collect(),
            };
            out.push_str(&serde_json::to_string(&line).expect("a run line serializes"));
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::run::tests::fixture_result;
    use crate::output::Format;

    fn result(per_query: bool) -> EvalResult {
        fixture_result(&[1, 5], per_query)
    }

    #[test]
    fn table_has_a_row_per_scorer_and_names_what_was_measured() {
        let t = render(&result(false), Format::Table);
        assert!(
            t.starts_with("setting: own catalog — ranked among its 5 tools, no distractors\n"),
            "{t}"
        );
        let lines: Vec<&str> = t.lines().skip(2).collect();
        let cells = |l: &str| l.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            cells(lines[0]),
            [
                "scorer",
                "recall@1",
                "recall@5",
                "hit@1",
                "hit@5",
                "complete@1",
                "complete@5",
                "mrr",
                "ndcg@10",
                "refused",
                "p50",
                "µs",
                "p95",
                "µs"
            ]
        );
        assert_eq!(
            cells(lines[2]),
            [
                "keyword", "0.3750", "0.5000", "0.5000", "0.5000", "0.2500", "0.5000", "0.5000",
                "0.4799", "1", "2.0", "4.0"
            ]
        );
        assert!(
            t.contains(
                "4 queries (q.jsonl; paraphrase 4) over 5 tools; 10 results requested per query (MRR@10)"
            ),
            "{t}"
        );
        assert!(t.contains("keyword: recall@5 0.5000 (95% CI"), "{t}");
        assert!(t.contains("Near-duplicates: 0 tools in 0 clusters"), "{t}");
        let class_row = t
            .lines()
            .find(|l| l.starts_with("keyword  paraphrase"))
            .unwrap();
        assert_eq!(
            cells(class_row),
            ["keyword", "paraphrase", "4", "0.3750", "0.5000", "0.5000"]
        );
        assert!(
            t.contains("settings: fixed=yes; 1 queries refused (scored 0)"),
            "{t}"
        );
    }

    #[test]
    fn csv_is_the_metric_rows_or_the_per_query_rows() {
        let c = render(&result(false), Format::Csv);
        assert_eq!(
            c.lines().next().unwrap(),
            "set,setting,tool_count,ranked_tools,query_count,scorer,refused_queries,class,metric,value,ci95_low,ci95_high"
        );
        // 8 metrics over all queries, the wrong-sibling rate, 8 for the one class.
        assert_eq!(c.lines().count(), 1 + 8 + 1 + 8);
        let c = render(&result(true), Format::Csv);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(
            lines[2].starts_with("keyword,q2,second,paraphrase,b;c,3;1,c;d;b,,0.5000,1.0000"),
            "{c}"
        );
        assert!(lines[4].contains(",bad(,paraphrase,a,-,,"), "{c}");
        let md = render(&result(true), Format::Md);
        assert!(
            md.contains("| `keyword` | `q3` | paraphrase | - | 0.0000 | 0.0000 |  |"),
            "{md}"
        );
    }

    #[test]
    fn csv_rows_are_one_per_scorer_and_metric() {
        let r = fixture_result(&[1, 3, 5, 10], false);
        let rows = csv_rows(&r);
        // 14 metrics over all queries, the wrong-sibling rate, 14 for the one class.
        assert_eq!(rows.len(), 14 + 1 + 14);
        let recall5 = rows.iter().find(|r| r.metric == "recall@5").unwrap();
        assert_eq!(recall5.set, "q");
        assert_eq!(recall5.refused_queries, 1);
        assert!(recall5.ci95_low.is_some());
        assert!(
            rows.iter()
                .find(|r| r.metric == "hit@1")
                .unwrap()
                .ci95_low
                .is_none()
        );
        let text = crate::output::csv_rows(&rows);
        assert!(text.starts_with(
            "set,setting,tool_count,ranked_tools,query_count,scorer,refused_queries,class,metric,value,ci95_low,ci95_high\n"
        ));
        assert!(
            text.contains("\nq,own,5,5,4,keyword,1,all,hit@1,0.5,,\n"),
            "{text}"
        );
        assert!(
            text.contains("\nq,own,5,5,4,keyword,1,paraphrase,hit@1,0.5,,\n"),
            "{text}"
        );
        assert!(
            text.contains("\nq,own,5,5,4,keyword,1,all,wrong_sibling_rate,0.0,,\n"),
            "{text}"
        );
    }
}
