//! `toolbudget search`: ranks the tools of a catalog for one query with one scorer.

use std::io::IsTerminal;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;

use crate::catalog::Catalog;
use crate::cli::SearchArgs;
use crate::error::{Error, Result};
use crate::output::{Format, csv, emit, to_json};
use crate::search::{Explanation, ScorerConfig, ScorerKind, ScorerSpec, SearchRequest, build_spec};

/// The contract's keys first (`query`, `scorer`, `matches`, `total_tools`), then ours.
#[derive(Debug, Serialize)]
pub struct SearchReport {
    pub query: String,
    pub scorer: String,
    pub matches: Vec<Match>,
    pub total_tools: usize,
    /// Tools the query matches before the limit; `matches` shows the first `limit` of them.
    pub matched: usize,
    pub shown: usize,
    /// The limit in force, and the scorer's maximum when it has one.
    pub limit: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_limit: Option<usize>,
    /// `select:` names that matched no tool.
    pub not_found: Vec<String>,
    /// `select:` names that fit several tools (none selected), with the candidates' ids.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ambiguous: Vec<crate::search::Ambiguous>,
    pub settings: IndexMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanations: Option<Vec<ExplainedMatch>>,
}

#[derive(Debug, Serialize)]
pub struct Match {
    pub id: String,
    pub score: f64,
}

/// One match and the scorer's explanation tree of its score (`label`, `value`, `children`).
#[derive(Debug, Serialize)]
pub struct ExplainedMatch {
    pub id: String,
    pub score: f64,
    pub explanation: Explanation,
}

/// Builds the scorer, runs the query and (with `explain`) explains every match.
pub fn search(
    catalog: Arc<Catalog>,
    spec: &ScorerSpec,
    config: &ScorerConfig,
    query: &str,
    limit: usize,
    explain: bool,
) -> Result<SearchReport> {
    check_limit(spec, limit)?;
    let scorer = build_spec(spec, catalog.clone(), config)?;
    // The search tool is never its own result (as in Claude Code, and as `eval` ranks).
    let candidates = catalog.search_candidates();
    let mut request = SearchRequest::new(query, limit);
    request.candidates = candidates.as_deref();
    let outcome = scorer.search(&request).map_err(Error::from)?;
    let matched = scorer.count_matches(&request).map_err(Error::from)?;
    let explanations = if explain {
        let tree = scorer.explain(&request).map_err(Error::from)?;
        // The tree's children are the same search's hits, in order.
        let rows = outcome
            .hits
            .iter()
            .zip(tree.children)
            .map(|(h, explanation)| ExplainedMatch {
                id: catalog.get(h.tool).id.clone(),
                score: h.score,
                explanation,
            })
            .collect();
        Some(rows)
    } else {
        None
    };
    Ok(SearchReport {
        query: query.to_string(),
        scorer: scorer.name(),
        matches: outcome
            .hits
            .iter()
            .map(|h| Match {
                id: catalog.get(h.tool).id.clone(),
                score: h.score,
            })
            .collect(),
        total_tools: outcome.total_tools,
        matched,
        shown: outcome.hits.len(),
        limit,
        max_limit: spec.builtin().and_then(ScorerKind::max_limit),
        not_found: outcome.not_found,
        ambiguous: outcome.ambiguous,
        settings: scorer.settings().into_iter().collect(),
        explanations,
    })
}

/// A limit the scorer cannot honour is an error, not a silent cap.
fn check_limit(spec: &ScorerSpec, limit: usize) -> Result<()> {
    if limit == 0 {
        return Err(Error::usage("--limit 0 shows nothing: give at least 1"));
    }
    match spec.builtin().and_then(ScorerKind::max_limit) {
        Some(max) if limit > max => Err(Error::usage(format!(
            "--limit {limit} is above the {spec} scorer's maximum of {max}"
        ))),
        _ => Ok(()),
    }
}

/// Scores in tables: at most four decimals, trailing zeros dropped (`12`, `0.3881`).
fn short(x: f64) -> String {
    let s = format!("{x:.4}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub fn render(report: &SearchReport, format: Format) -> String {
    let rows: Vec<Vec<String>> = report
        .matches
        .iter()
        .enumerate()
        .map(|(i, m)| vec![(i + 1).to_string(), m.id.clone(), m.score.to_string()])
        .collect();
    match format {
        Format::Json => to_json(report),
        Format::Csv => csv(&["rank", "id", "score"], &rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let rows: Vec<Vec<String>> = rows
                .into_iter()
                .zip(&report.matches)
                .map(|(mut r, m)| {
                    r[2] = short(m.score);
                    r
                })
                .collect();
            let mut out = table(&["rank", "id", "score"], &rows, &[true, false, true]);
            if let Some(explanations) = &report.explanations {
                // The tree depth first, each level indented under its parent.
                let mut why = Vec::new();
                for (i, e) in explanations.iter().enumerate() {
                    for (depth, node) in e.explanation.flatten() {
                        why.push(vec![
                            (i + 1).to_string(),
                            e.id.clone(),
                            short(node.value),
                            format!("{}{}", "  ".repeat(depth), node.label),
                        ]);
                    }
                }
                out.push('\n');
                out.push_str(&table(
                    &["rank", "id", "points", "why"],
                    &why,
                    &[true, false, true, false],
                ));
            }
            out.push('\n');
            if !report.not_found.is_empty() {
                out.push_str(&format!("not found: {}\n", report.not_found.join(", ")));
            }
            for a in &report.ambiguous {
                out.push_str(&format!(
                    "ambiguous: {} fits {}; select one by its id\n",
                    a.name,
                    a.candidates.join(", ")
                ));
            }
            let settings: Vec<String> = report
                .settings
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            let limit = match report.max_limit {
                Some(max) => format!("limit {} (max {max})", report.limit),
                None => format!("limit {}", report.limit),
            };
            out.push_str(&format!(
                "{} shown of {} matched among {} tools by {}; {limit}; {}\n",
                report.shown,
                report.matched,
                report.total_tools,
                report.scorer,
                settings.join("; ")
            ));
            out
        }
    }
}

pub fn run(args: &SearchArgs) -> Result<()> {
    // clap's own message for a non-UTF-8 argument does not say which one it was.
    let query = args.query.to_str().ok_or_else(|| {
        crate::error::Error::usage(format!(
            "QUERY \"{}\" is not valid UTF-8; queries are text",
            args.query.display()
        ))
    })?;
    let catalog = Arc::new(super::load(&args.catalog)?);
    let mut config = ScorerConfig::default();
    args.embedding.apply(&mut config);
    args.external.apply(&mut config);
    config.progress = super::embed_progress(std::io::stderr().is_terminal());
    let report = search(
        catalog,
        &args.scorer,
        &config,
        query,
        args.limit,
        args.explain,
    )?;
    emit(
        args.output.out.as_deref(),
        &render(&report, args.output.format),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Tool;

    fn catalog() -> Arc<Catalog> {
        let tool = |id: &str, desc: &str| Tool {
            id: id.into(),
            name: id.into(),
            server: None,
            description: desc.into(),
            input_schema: serde_json::json!({"type": "object"}),
            should_defer: None,
            always_load: false,
            search_hint: None,
            depends_on: Vec::new(),
            origin: None,
        };
        Arc::new(
            Catalog::from_tools(vec![
                tool("Read", "Read a file."),
                tool("NotebookEdit", "Edit a Jupyter notebook."),
            ])
            .unwrap(),
        )
    }

    #[test]
    fn json_has_the_contract_keys_in_order() {
        let r = search(
            catalog(),
            &ScorerSpec::Builtin(ScorerKind::Keyword),
            &ScorerConfig::default(),
            "notebook jupyter",
            5,
            true,
        )
        .unwrap();
        let json = render(&r, Format::Json);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys[..4], ["query", "scorer", "matches", "total_tools"]);
        assert_eq!(v["matches"][0]["id"], "NotebookEdit");
        assert_eq!(v["matches"][0]["score"], 14.0);
        assert_eq!(v["total_tools"], 2);
        assert_eq!(
            v["explanations"][0]["explanation"]["children"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        assert_eq!(v["explanations"][0]["explanation"]["value"], 14.0);
        let table = render(&r, Format::Table);
        assert!(table.contains("NotebookEdit"), "{table}");
        assert!(table.contains("a name part equals the term"), "{table}");
        assert_eq!(
            render(&r, Format::Csv),
            "rank,id,score\n1,NotebookEdit,14\n"
        );
    }

    #[test]
    fn counts_say_matched_shown_and_the_limit_in_force() {
        // Both tools mention "a" in their description; one is shown.
        let r = search(
            catalog(),
            &ScorerSpec::Builtin(ScorerKind::Keyword),
            &ScorerConfig::default(),
            "a",
            1,
            false,
        )
        .unwrap();
        assert_eq!((r.matched, r.shown, r.limit), (2, 1, 1));
        assert_eq!(r.max_limit, Some(20));
        assert_eq!(r.settings.get("max_limit").map(String::as_str), Some("20"));
        let table = render(&r, Format::Table);
        assert!(
            table.contains("1 shown of 2 matched among 2 tools by keyword; limit 1 (max 20);"),
            "{table}"
        );
        let v: serde_json::Value = serde_json::from_str(&render(&r, Format::Json)).unwrap();
        assert_eq!(
            (v["matched"].as_u64(), v["limit"].as_u64()),
            (Some(2), Some(1))
        );
    }

    #[test]
    fn a_limit_above_the_maximum_names_the_maximum() {
        let run = |kind: ScorerKind, limit| {
            search(
                catalog(),
                &ScorerSpec::Builtin(kind),
                &ScorerConfig::default(),
                "read",
                limit,
                false,
            )
        };
        let e = run(ScorerKind::Keyword, 25).unwrap_err();
        assert!(matches!(e, Error::Input(_)));
        assert_eq!(
            e.to_string(),
            "--limit 25 is above the keyword scorer's maximum of 20"
        );
        assert!(run(ScorerKind::Keyword, 20).is_ok());
        assert!(run(ScorerKind::Keyword, 0).is_err());
        // bm25 has no maximum: every match is shown.
        let r = run(ScorerKind::Bm25, 25).unwrap();
        assert_eq!((r.limit, r.max_limit, r.shown), (25, None, r.matched));
    }

    #[test]
    fn a_bad_regex_is_an_input_error() {
        let e = search(
            catalog(),
            &ScorerSpec::Builtin(ScorerKind::Regex),
            &ScorerConfig::default(),
            "(",
            5,
            false,
        )
        .unwrap_err();
        assert!(matches!(e, Error::Input(_)));
        assert!(e.to_string().contains("invalid regex pattern"), "{e}");
    }
}
