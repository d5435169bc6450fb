//! `toolbudget eval`: ranks every labeled query with each scorer and reports retrieval
//! metrics and search latency. Metric definitions: `eval::metrics`.

use std::io::IsTerminal;
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
    let mut config = ScorerConfig::default();
    args.embedding.apply(&mut config);
    config.progress = super::embed_progress(!quiet && std::io::stderr().is_terminal());
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::QuerySet;
    use crate::eval::run::tests::{fake_clock, fixture};

    fn report(per_query: bool) -> EvalReport {
        let (scorer, queries) = fixture();
        let set = QuerySet {
            path: "q.jsonl".into(),
            queries,
        };
        let options = EvalOptions::new(&[1, 5], None, per_query).unwrap();
        let e = evaluate(
            &scorer,
            &scorer.catalog,
            &set.queries,
            &options,
            fake_clock(),
        );
        EvalReport::new(scorer.catalog.len(), &set, &options, &[e])
    }

    #[test]
    fn table_has_a_row_per_scorer_and_names_what_was_measured() {
        let t = render(&report(false), Format::Table);
        let lines: Vec<&str> = t.lines().collect();
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
                "0.4799", "2.0", "4.0"
            ]
        );
        assert!(
            t.contains("4 queries (q.jsonl) over 5 tools; 10 results requested per query (MRR@10)"),
            "{t}"
        );
        assert!(t.contains("keyword: recall@5 0.5000 (95% CI"), "{t}");
        assert!(
            t.contains("settings: fixed=yes; 1 queries rejected (scored 0)"),
            "{t}"
        );
    }

    #[test]
    fn csv_is_the_metrics_table_or_the_per_query_rows() {
        let c = render(&report(false), Format::Csv);
        assert_eq!(
            c.lines().next().unwrap(),
            "scorer,recall@1,recall@5,hit@1,hit@5,complete@1,complete@5,mrr,ndcg@10,latency_p50_us,latency_p95_us"
        );
        let c = render(&report(true), Format::Csv);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(
            lines[2].starts_with("keyword,q2,second,b;c,3;1,c;d;b,0.5000,1.0000"),
            "{c}"
        );
        let md = render(&report(true), Format::Md);
        assert!(
            md.contains("| keyword | q3 | - | 0.0000 | 0.0000 |  |"),
            "{md}"
        );
    }
}
