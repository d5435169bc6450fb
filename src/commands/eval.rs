//! `toolbudget eval`: ranks every labeled query with each scorer and reports retrieval
//! metrics and search latency. Metric definitions: `eval::metrics`.

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use crate::cli::EvalArgs;
use crate::error::Result;
use crate::eval::run::{EvalOptions, check_labels, evaluate};
use crate::eval::{EvalResult, ScorerResult, load_queries};
use crate::output::{Format, csv, csv_rows, emit, md_table, text_table, to_json};
use crate::search::{self, ScorerConfig, ScorerKind};

/// Scorers evaluated when no `--scorer` is given.
pub const DEFAULT_SCORERS: [ScorerKind; 2] = [ScorerKind::Keyword, ScorerKind::Bm25];

pub fn run(args: &EvalArgs, quiet: bool) -> Result<()> {
    let options = EvalOptions::new(&args.k, args.depth, args.per_query)?;
    let catalog = Arc::new(super::load(&args.catalog)?);
    let set = load_queries(&args.queries, &catalog)?;
    check_labels(&set, &catalog)?;
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
    let origin = Instant::now();
    let clock = || origin.elapsed();
    let mut results = Vec::with_capacity(kinds.len());
    for kind in kinds {
        let scorer = search::build(kind, Arc::clone(&catalog), &config)?;
        if !quiet {
            eprintln!(
                "eval: {kind} over {} queries, {} tools",
                set.queries.len(),
                catalog.len()
            );
        }
        let r = evaluate(scorer.as_ref(), &catalog, &set.queries, &options, &clock);
        if r.refused_queries > 0 && !quiet {
            eprintln!(
                "warning: {kind} refused {} queries; they score 0 (see `refused` in --per-query rows)",
                r.refused_queries
            );
        }
        results.push(r);
    }
    let result = EvalResult::new(&catalog, &set, &options, results);
    emit(
        args.output.out.as_deref(),
        &render(&result, args.output.format),
    )
}

fn fixed(x: f64) -> String {
    format!("{x:.4}")
}

fn metric_headers(result: &EvalResult) -> Vec<String> {
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
        Format::Csv => csv_rows(&result.csv_rows()),
        Format::Table | Format::Md => {
            let table = if format == Format::Md {
                md_table
            } else {
                text_table
            };
            let mut out = metrics_table(result, table);
            out.push('\n');
            out.push_str(&frame_text(result));
            for r in &result.results {
                out.push_str(&scorer_line(r));
            }
            if per_query {
                out.push('\n');
                out.push_str(&per_query_table(result, table));
            }
            out
        }
    }
}

fn metrics_table(result: &EvalResult, table: TableFn) -> String {
    let names = metric_headers(result);
    let mut headers: Vec<&str> = vec!["scorer"];
    headers.extend(names.iter().map(String::as_str));
    headers.extend(["refused", "p50 µs", "p95 µs"]);
    let rows: Vec<Vec<String>> = result
        .results
        .iter()
        .map(|r| {
            let mut row = vec![r.scorer.clone()];
            row.extend(names.iter().map(|m| fixed(r.metric(m).unwrap_or(0.0))));
            row.push(r.refused_queries.to_string());
            row.extend(latency_cells(r));
            row
        })
        .collect();
    let right: Vec<bool> = headers.iter().map(|h| *h != "scorer").collect();
    table(&headers, &rows, &right)
}

/// What was evaluated: queries, tools ranked, the search tool left out, depth.
fn frame_text(result: &EvalResult) -> String {
    let tools = match &result.search_tool {
        Some(s) => format!(
            "{} tools ({} ranked: {s} is the search tool, never a result)",
            result.tool_count, result.ranked_tools
        ),
        None => format!("{} tools", result.tool_count),
    };
    format!(
        "{} queries ({}) over {tools}; {} results requested per query (MRR@{}); latency is per \
         search call, measured here.\n",
        result.query_count, result.queries, result.depth, result.depth
    )
}

fn scorer_line(r: &ScorerResult) -> String {
    let ci = ["recall@5", "mrr"]
        .iter()
        .filter_map(|m| {
            let [lo, hi] = r.ci95.get(*m)?;
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
    let mut out = format!("{}: {ci}", r.scorer);
    if !settings.is_empty() {
        out.push_str(&format!("; settings: {settings}"));
    }
    if r.refused_queries > 0 {
        out.push_str(&format!(
            "; {} queries refused (scored 0)",
            r.refused_queries
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

/// `text_table` or `md_table`.
type TableFn = fn(&[&str], &[Vec<String>], &[bool]) -> String;

fn per_query_table(result: &EvalResult, table: TableFn) -> String {
    let last_k = result.ks.last().copied().unwrap_or(10);
    let recall = format!("recall@{last_k}");
    let mut rows = Vec::new();
    for r in &result.results {
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

fn per_query_csv(result: &EvalResult) -> String {
    let metric_names = metric_headers(result);
    let mut headers = vec![
        "scorer", "id", "query", "expected", "ranks", "top", "refused",
    ];
    headers.extend(metric_names.iter().map(String::as_str));
    let mut rows = Vec::new();
    for r in &result.results {
        for q in r.per_query.iter().flatten() {
            let mut row = vec![
                r.scorer.clone(),
                q.id.clone(),
                q.query.clone(),
                q.expected.join(";"),
                ranks_text(&q.ranks).replace(',', ";"),
                q.top.join(";"),
                q.refused.clone().unwrap_or_default(),
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
    use crate::eval::run::tests::fixture_result;

    fn result(per_query: bool) -> EvalResult {
        fixture_result(&[1, 5], per_query)
    }

    #[test]
    fn table_has_a_row_per_scorer_and_names_what_was_measured() {
        let t = render(&result(false), Format::Table);
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
            t.contains("4 queries (q.jsonl) over 5 tools; 10 results requested per query (MRR@10)"),
            "{t}"
        );
        assert!(t.contains("keyword: recall@5 0.5000 (95% CI"), "{t}");
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
            "set,tool_count,ranked_tools,query_count,scorer,refused_queries,metric,value,ci95_low,ci95_high"
        );
        assert_eq!(c.lines().count(), 1 + 8);
        let c = render(&result(true), Format::Csv);
        let lines: Vec<&str> = c.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(
            lines[2].starts_with("keyword,q2,second,b;c,3;1,c;d;b,,0.5000,1.0000"),
            "{c}"
        );
        assert!(lines[4].contains(",bad(,a,-,,"), "{c}");
        let md = render(&result(true), Format::Md);
        assert!(
            md.contains("| keyword | q3 | - | 0.0000 | 0.0000 |  |"),
            "{md}"
        );
    }
}
