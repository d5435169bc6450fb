//! `toolbudget eval`: ranks every labeled query with each scorer and reports retrieval
//! metrics and search latency. Metric definitions: `eval::metrics`.

use std::sync::Arc;
use std::time::Instant;

use crate::cli::EvalArgs;
use crate::error::Result;
use crate::eval::load_queries;
use crate::eval::report::{EvalReport, ScorerResult};
use crate::eval::run::{EvalOptions, evaluate};
use crate::output::{Format, csv, emit, md_table, text_table, to_json};
use crate::search::{self, ScorerConfig, ScorerKind};

/// Scorers evaluated when no `--scorer` is given.
pub const DEFAULT_SCORERS: [ScorerKind; 2] = [ScorerKind::Keyword, ScorerKind::Bm25];

pub fn run(args: &EvalArgs, quiet: bool) -> Result<()> {
    let options = EvalOptions::new(&args.k, args.depth, args.per_query)?;
    let catalog = Arc::new(super::load(&args.catalog)?);
    let set = load_queries(&args.queries, &catalog)?;
    let mut kinds: Vec<ScorerKind> = Vec::new();
    for k in if args.scorers.is_empty() {
        &DEFAULT_SCORERS[..]
    } else {
        &args.scorers[..]
    } {
        if !kinds.contains(k) {
            kinds.push(*k);
        }
    }
    let config = ScorerConfig::default();
    let mut evals = Vec::with_capacity(kinds.len());
    for kind in kinds {
        let scorer = search::build(kind, Arc::clone(&catalog), &config)?;
        if !quiet {
            eprintln!(
                "eval: {kind} over {} queries, {} tools",
                set.queries.len(),
                catalog.len()
            );
        }
        let origin = Instant::now();
        let e = evaluate(scorer.as_ref(), &catalog, &set.queries, &options, || {
            origin.elapsed()
        });
        if e.failed > 0 && !quiet {
            eprintln!(
                "warning: {kind} rejected {} queries; they score 0 (see `error` in --per-query rows)",
                e.failed
            );
        }
        evals.push(e);
    }
    let report = EvalReport::new(catalog.len(), &set, &options, &evals);
    emit(
        args.output.out.as_deref(),
        &render(&report, args.output.format),
    )
}

fn fixed(x: f64) -> String {
    format!("{x:.4}")
}

fn metric_headers(report: &EvalReport) -> Vec<String> {
    report
        .results
        .first()
        .map(|r| r.metrics.keys().cloned().collect())
        .unwrap_or_default()
}

fn metric_row(r: &ScorerResult) -> Vec<String> {
    let mut row = vec![r.scorer.clone()];
    row.extend(r.metrics.values().map(|&v| fixed(v)));
    row.push(format!("{:.1}", r.latency_us.p50));
    row.push(format!("{:.1}", r.latency_us.p95));
    row
}

/// Renders the report; pure.
pub fn render(report: &EvalReport, format: Format) -> String {
    let metric_names = metric_headers(report);
    let mut headers: Vec<&str> = vec!["scorer"];
    headers.extend(metric_names.iter().map(String::as_str));
    let rows: Vec<Vec<String>> = report.results.iter().map(metric_row).collect();
    match format {
        Format::Json => to_json(report),
        Format::Csv => {
            let has_rows = report.results.iter().any(|r| r.per_query.is_some());
            if has_rows {
                per_query_csv(report, &metric_names)
            } else {
                headers.extend(["latency_p50_us", "latency_p95_us"]);
                csv(&headers, &rows)
            }
        }
        Format::Table | Format::Md => {
            let table = if format == Format::Md {
                md_table
            } else {
                text_table
            };
            headers.extend(["p50 µs", "p95 µs"]);
            let right: Vec<bool> = headers.iter().map(|h| *h != "scorer").collect();
            let mut out = table(&headers, &rows, &right);
            out.push('\n');
            out.push_str(&format!(
                "{} queries ({}) over {} tools; {} results requested per query (MRR@{}); \
                 latency is per search call.\n",
                report.query_count, report.queries, report.tool_count, report.depth, report.depth
            ));
            for r in &report.results {
                let ci = ["recall@5", "mrr"]
                    .iter()
                    .filter_map(|m| {
                        let [lo, hi] = r.ci95.get(*m)?;
                        Some(format!(
                            "{m} {} (95% CI {}–{})",
                            fixed(r.metrics[*m]),
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
                out.push_str(&format!("{}: {ci}", r.scorer));
                if !settings.is_empty() {
                    out.push_str(&format!("; settings: {settings}"));
                }
                if r.failed_queries > 0 {
                    out.push_str(&format!(
                        "; {} queries rejected (scored 0)",
                        r.failed_queries
                    ));
                }
                out.push('\n');
            }
            if report.results.iter().any(|r| r.per_query.is_some()) {
                out.push('\n');
                out.push_str(&per_query_table(report, table));
            }
            out
        }
    }
}

fn ranks_text(ranks: &[Option<usize>]) -> String {
    ranks
        .iter()
        .map(|r| r.map_or_else(|| "-".to_string(), |r| r.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

/// `text_table` or `md_table`.
type TableFn = fn(&[&str], &[Vec<String>], &[bool]) -> String;

fn per_query_table(report: &EvalReport, table: TableFn) -> String {
    let last_k = report.ks.last().copied().unwrap_or(10);
    let recall = format!("recall@{last_k}");
    let mut rows = Vec::new();
    for r in &report.results {
        for q in r.per_query.iter().flatten() {
            rows.push(vec![
                r.scorer.clone(),
                q.id.clone(),
                ranks_text(&q.ranks),
                fixed(q.metrics.get(&recall).copied().unwrap_or(0.0)),
                fixed(q.metrics.get("mrr").copied().unwrap_or(0.0)),
                q.top.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
            ]);
        }
    }
    table(
        &["scorer", "query", "expected ranks", &recall, "mrr", "top 3"],
        &rows,
        &[false, false, true, true, true, false],
    )
}

fn per_query_csv(report: &EvalReport, metric_names: &[String]) -> String {
    let mut headers = vec!["scorer", "id", "query", "expected", "ranks", "top"];
    headers.extend(metric_names.iter().map(String::as_str));
    let mut rows = Vec::new();
    for r in &report.results {
        for q in r.per_query.iter().flatten() {
            let mut row = vec![
                r.scorer.clone(),
                q.id.clone(),
                q.query.clone(),
                q.expected.join(";"),
                ranks_text(&q.ranks).replace(',', ";"),
                q.top.join(";"),
            ];
            row.extend(
                metric_names
                    .iter()
                    .map(|m| fixed(q.metrics.get(m).copied().unwrap_or(0.0))),
            );
            rows.push(row);
        }
    }
    csv(&headers, &rows)
}
