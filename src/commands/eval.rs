//! `toolbudget eval`: ranks every labeled query with each scorer and reports retrieval
//! metrics and search latency. Metric definitions: `eval::metrics`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use crate::catalog::{Catalog, CatalogSource, parse_catalog_arg};
use crate::cli::EvalArgs;
use crate::error::{Error, Result};
use crate::eval::pool::PoolInfo;
use crate::eval::run::{EvalOptions, check_labels, evaluate, evaluate_run};
use crate::eval::runfile::read_runs;
use crate::eval::siblings::Siblings;
use crate::eval::{EvalResult, ScorerResult, load_queries};
use crate::output::TableFn;
use crate::output::{Format, csv, csv_rows, emit, to_json};
use crate::search::{self, ScorerConfig, ScorerKind, ScorerSpec};

/// Scorers evaluated when no `--scorer` is given.
pub const DEFAULT_SCORERS: [ScorerKind; 2] = [ScorerKind::Keyword, ScorerKind::Bm25];

pub fn run(args: &EvalArgs, quiet: bool) -> Result<()> {
    let mut options = EvalOptions::new(&args.k, args.depth, args.per_query)?;
    options.thresholds = args.thresholds;
    options.keep_rankings = args.write_run.is_some();
    let own = super::load(&args.catalog)?;
    let set = load_queries(&args.queries, &own)?;
    check_labels(&set, &own)?;
    // Run files are read before any scorer starts: a bad run fails at once.
    let mut runs = Vec::new();
    for arg in &args.runs {
        let (name, path) = split_run_arg(arg);
        runs.extend(read_runs(&path, name)?);
    }
    let (catalog, pool) = pooled(own, args)?;
    if let Some(p) = &pool
        && p.duplicate_ids > 0
        && !quiet
    {
        eprintln!(
            "eval: {} pool tools left out: their ids are already taken (the first definition wins)",
            p.duplicate_ids
        );
    }
    let catalog = Arc::new(catalog);
    let search_tool = catalog.search_tool();
    let siblings = Siblings::find(&catalog, |t| Some(t) != search_tool);
    let mut config = ScorerConfig::default();
    args.embedding.apply(&mut config);
    args.external.apply(&mut config);
    config.external.mcp.allow_unknown_tools = args.allow_unknown_tools;
    let visible = !quiet && std::io::stderr().is_terminal();
    config.progress = super::embed_progress(visible);
    let origin = Instant::now();
    let clock = || origin.elapsed();
    let mut results = Vec::new();
    for spec in scorer_specs(args) {
        let scorer = search::build_spec(&spec, Arc::clone(&catalog), &config)?;
        let name = scorer.name();
        let bar = progress_bar(&name, set.queries.len(), visible);
        if !quiet && !visible {
            eprintln!(
                "eval: {name} over {} queries, {} tools",
                set.queries.len(),
                catalog.len()
            );
        }
        let tick = |done: usize| bar.set_position(done as u64);
        let r = evaluate(
            scorer.as_ref(),
            &catalog,
            &siblings,
            &set.queries,
            &options,
            &clock,
            &tick,
        );
        bar.finish();
        let r = r?;
        if r.refused_queries > 0 && !quiet {
            eprintln!(
                "warning: {name} refused {} queries; they score 0 (see `refused` in --per-query rows)",
                r.refused_queries
            );
        }
        results.push(r);
    }
    for run in &runs {
        let r = evaluate_run(
            run,
            &catalog,
            &siblings,
            &set,
            &options,
            args.run_ties,
            args.allow_unknown_tools,
        )?;
        if let Some(s) = r.run.as_ref().map(|s| s.stats)
            && s.missing_queries > 0
            && !quiet
        {
            eprintln!(
                "note: run {} has no ranking for {} of the {} queries; they score 0",
                r.scorer,
                s.missing_queries,
                set.queries.len()
            );
        }
        results.push(r);
    }
    check_unique_names(&results)?;
    let mut result = EvalResult::new(&catalog, &set, &options, &siblings, results);
    result.pool = pool;
    if let Some(path) = &args.write_run {
        crate::output::write_atomic(path, run_jsonl(&result).as_bytes())?;
    }
    emit(
        args.output.out.as_deref(),
        &render(&result, args.output.format),
    )
}

/// `NAME=FILE` or `FILE`. A path that itself holds `=` is read whole when it exists.
fn split_run_arg(arg: &str) -> (Option<&str>, PathBuf) {
    if !Path::new(arg).exists()
        && let Some((name, path)) = arg.split_once('=')
        && !name.is_empty()
    {
        return (Some(name), PathBuf::from(path));
    }
    (None, PathBuf::from(arg))
}

/// Two results of one name could not be told apart in any output, nor by `compare`.
fn check_unique_names(results: &[ScorerResult]) -> Result<()> {
    for (i, r) in results.iter().enumerate() {
        if results[..i].iter().any(|o| o.scorer == r.scorer) {
            return Err(Error::usage(format!(
                "two results are named {:?}: name a run with --run NAME=FILE",
                r.scorer
            )));
        }
    }
    Ok(())
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
                scorer: &r.scorer,
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

/// The scorers asked for, each once, in order (the default pair when neither a scorer nor a
/// run is given).
fn scorer_specs(args: &EvalArgs) -> Vec<ScorerSpec> {
    let defaults: Vec<ScorerSpec> = DEFAULT_SCORERS.iter().map(|&k| k.into()).collect();
    let asked = if args.scorers.is_empty() && args.runs.is_empty() {
        &defaults[..]
    } else {
        &args.scorers[..]
    };
    let mut specs: Vec<ScorerSpec> = Vec::new();
    for s in asked {
        if !specs.contains(s) {
            specs.push(s.clone());
        }
    }
    specs
}

/// The own catalog, extended by the pool's tools when `--pool` is given.
fn pooled(own: Catalog, args: &EvalArgs) -> Result<(Catalog, Option<PoolInfo>)> {
    if args.pool.is_empty() {
        return Ok((own, None));
    }
    let own_files: Vec<PathBuf> = args
        .catalog
        .catalogs
        .iter()
        .map(|a| parse_catalog_arg(a).path)
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut files = Vec::new();
    for source in &args.pool {
        pool_files(source, &mut files)?;
    }
    let found = files.len();
    files.retain(|f| f.canonicalize().map_or(true, |c| !own_files.contains(&c)));
    let sources: Vec<CatalogSource> = files
        .into_iter()
        .map(|path| CatalogSource { path, server: None })
        .collect();
    let (catalog, mut info) = crate::eval::pool::extend(&own, &sources)?;
    info.sources = args.pool.iter().map(|p| p.display().to_string()).collect();
    info.skipped_files = found - sources.len();
    Ok((catalog, Some(info)))
}

/// A pool argument's catalog files: the file itself, or every `.json`, `.yaml` and `.yml`
/// file below a folder, in path order.
fn pool_files(source: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    if !source.is_dir() {
        if !source.exists() {
            return Err(Error::usage(format!(
                "--pool {}: no such file or folder",
                source.display()
            )));
        }
        out.push(source.to_path_buf());
        return Ok(());
    }
    let mut found = Vec::new();
    let mut stack = vec![source.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| Error::usage(format!("--pool {}: cannot read: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ["json", "yaml", "yml"].contains(&e.to_ascii_lowercase().as_str()))
            {
                found.push(path);
            }
        }
    }
    if found.is_empty() {
        return Err(Error::usage(format!(
            "--pool {}: no catalog files (.json, .yaml, .yml) in the folder",
            source.display()
        )));
    }
    found.sort();
    out.extend(found);
    Ok(())
}

/// One bar per scorer over its queries (hidden when stderr is not a terminal or `--quiet`).
fn progress_bar(name: &str, queries: usize, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(queries as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix:>9} [{bar:30}] {pos}/{len} queries {elapsed} (eta {eta})",
        )
        .expect("the template is valid")
        .progress_chars("=> "),
    );
    bar.set_prefix(name.to_string());
    bar
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
            let table = crate::output::table_for(format);
            let mut out = setting_text(result);
            out.push('\n');
            out.push_str(&metrics_table(result, table));
            out.push('\n');
            out.push_str(&frame_text(result));
            for r in &result.results {
                out.push_str(&scorer_line(r));
            }
            out.push('\n');
            out.push_str(&class_table(result, table));
            for r in &result.results {
                if let Some(points) = &r.thresholds {
                    out.push('\n');
                    out.push_str(&thresholds_table(result, &r.scorer, points, table));
                }
            }
            if per_query {
                out.push('\n');
                out.push_str(&per_query_table(result, table));
            }
            out
        }
    }
}

/// The first line: where the expected tools were ranked.
fn setting_text(result: &EvalResult) -> String {
    match &result.pool {
        Some(p) => {
            let mut s = format!(
                "setting: pooled — ranked among {} tools: the catalog's {} and {} distractors from \
                 {} pool files ({})",
                result.tool_count,
                p.own_tools,
                p.added_tools,
                p.files,
                p.sources.join(", ")
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
fn class_table(result: &EvalResult, table: TableFn) -> String {
    let recalls: Vec<String> = result.ks.iter().map(|k| format!("recall@{k}")).collect();
    let mut headers: Vec<&str> = vec!["scorer", "class", "queries"];
    headers.extend(recalls.iter().map(String::as_str));
    headers.extend(["mrr", "refusal"]);
    let mut rows = Vec::new();
    for r in &result.results {
        for (class, c) in &r.classes {
            let cell = |m: &str| c.metrics.get(m).map(|v| fixed(*v)).unwrap_or_default();
            let mut row = vec![r.scorer.clone(), class.clone(), c.queries.to_string()];
            row.extend(recalls.iter().map(|m| cell(m)));
            row.push(cell("mrr"));
            row.push(cell(crate::eval::run::REFUSAL));
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
    scorer: &str,
    points: &[crate::eval::thresholds::ThresholdPoint],
    table: TableFn,
) -> String {
    let recalls: Vec<String> = result.ks.iter().map(|k| format!("recall@{k}")).collect();
    let mut headers: Vec<&str> = vec!["threshold", "false positives", "answered"];
    headers.extend(recalls.iter().map(String::as_str));
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
        "{scorer}: refusal curve (results scoring below the threshold dropped; false positives \
         = no-match queries still answered)\n{}",
        table(&headers, &rows, &right)
    )
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
    let classes = result
        .classes
        .iter()
        .map(|(c, n)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{} queries ({}; {classes}) over {tools}; {} results requested per query (MRR@{}); \
         metrics average the queries that expect a tool; latency is per search call, measured \
         here. Near-duplicates: {} tools in {} clusters across servers.\n",
        result.query_count,
        result.queries,
        result.depth,
        result.depth,
        result.near_duplicates.tools,
        result.near_duplicates.clusters
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
    if let (Some(own), Some(trip)) = (r.reported_latency_us, r.latency_us) {
        out.push_str(&format!(
            "; the process reported p50 {:.1} µs, p95 {:.1} µs of its own (round trip measured here: p50 {:.1} µs, p95 {:.1} µs)",
            own.p50, own.p95, trip.p50, trip.p95
        ));
    }
    if let Some(run) = &r.run {
        let s = run.stats;
        out.push_str(&format!(
            "; run {} ({}, ties by tool id {}): {} {} without a ranking (scored 0)",
            run.file,
            run.format,
            match run.ties {
                crate::eval::runfile::TieBreak::Id => "ascending",
                crate::eval::runfile::TieBreak::Trec => "descending, as trec_eval",
            },
            s.missing_queries,
            crate::output::noun(s.missing_queries as u64, "query", "queries"),
        ));
        if s.unknown_tools > 0 {
            out.push_str(&format!(
                ", {} unknown tool {} (never relevant)",
                s.unknown_tools,
                crate::output::noun(s.unknown_tools as u64, "entry", "entries")
            ));
        }
        if s.cut_entries > 0 {
            out.push_str(&format!(
                ", {} {} past depth {} cut",
                s.cut_entries,
                crate::output::noun(s.cut_entries as u64, "entry", "entries"),
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

fn per_query_table(result: &EvalResult, table: TableFn) -> String {
    let last_k = result.ks.last().copied().unwrap_or(10);
    let recall = format!("recall@{last_k}");
    let mut rows = Vec::new();
    for r in &result.results {
        for q in r.per_query.iter().flatten() {
            rows.push(vec![
                r.scorer.clone(),
                q.id.clone(),
                q.class.clone(),
                ranks_text(&q.ranks),
                fixed(q.metrics.get(&recall).copied().unwrap_or(0.0)),
                fixed(q.metrics.get("mrr").copied().unwrap_or(0.0)),
                q.top.iter().take(3).cloned().collect::<Vec<_>>().join(", "),
            ]);
        }
    }
    table(
        &[
            "scorer",
            "query",
            "class",
            "expected ranks",
            &recall,
            "mrr",
            "top 3",
        ],
        &rows,
        &[false, false, false, true, true, true, false],
    )
}

fn per_query_csv(result: &EvalResult) -> String {
    let metric_names = metric_headers(result);
    let mut headers = vec![
        "scorer", "id", "query", "class", "expected", "ranks", "top", "refused",
    ];
    headers.extend(metric_names.iter().map(String::as_str));
    let mut rows = Vec::new();
    for r in &result.results {
        for q in r.per_query.iter().flatten() {
            let mut row = vec![
                r.scorer.clone(),
                q.id.clone(),
                q.query.clone(),
                q.class.clone(),
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
            md.contains("| keyword | q3 | paraphrase | - | 0.0000 | 0.0000 |  |"),
            "{md}"
        );
    }
}
