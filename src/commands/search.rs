//! `toolbudget search`: ranks the tools of a catalog for one query with one scorer.

use std::io::IsTerminal;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;

use crate::catalog::Catalog;
use crate::cli::SearchArgs;
use crate::error::{Error, Result};
use crate::output::{Format, csv, emit, md_table, text_table, to_json};
use crate::search::{Explanation, ScorerConfig, ScorerKind, SearchRequest, build};

/// The contract's keys first (`query`, `scorer`, `matches`, `total_tools`), then ours.
#[derive(Debug, Serialize)]
pub struct SearchReport {
    pub query: String,
    pub scorer: String,
    pub matches: Vec<Match>,
    pub total_tools: usize,
    /// `select:` names that matched no tool.
    pub not_found: Vec<String>,
    pub settings: IndexMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub explanations: Option<Vec<ExplainedMatch>>,
}

#[derive(Debug, Serialize)]
pub struct Match {
    pub id: String,
    pub score: f64,
}

#[derive(Debug, Serialize)]
pub struct ExplainedMatch {
    pub id: String,
    pub score: f64,
    pub contributions: Vec<ContributionRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ContributionRow {
    pub term: String,
    pub field: String,
    pub points: f64,
    pub detail: String,
}

/// Builds the scorer, runs the query and (with `explain`) explains every match.
pub fn search(
    catalog: Arc<Catalog>,
    kind: ScorerKind,
    config: &ScorerConfig,
    query: &str,
    limit: usize,
    explain: bool,
) -> Result<SearchReport> {
    let scorer = build(kind, catalog.clone(), config)?;
    let outcome = scorer
        .search(&SearchRequest::new(query, limit))
        .map_err(Error::Input)?;
    let explanations = if explain {
        let rows = outcome
            .hits
            .iter()
            .map(|h| {
                scorer
                    .explain(query, h.tool)
                    .map(|e| explained(&catalog, e))
                    .map_err(Error::Input)
            })
            .collect::<Result<Vec<_>>>()?;
        Some(rows)
    } else {
        None
    };
    Ok(SearchReport {
        query: query.to_string(),
        scorer: kind.name().to_string(),
        matches: outcome
            .hits
            .iter()
            .map(|h| Match {
                id: catalog.get(h.tool).id.clone(),
                score: h.score,
            })
            .collect(),
        total_tools: outcome.total_tools,
        not_found: outcome.not_found,
        settings: scorer.settings().into_iter().collect(),
        explanations,
    })
}

fn explained(catalog: &Catalog, e: Explanation) -> ExplainedMatch {
    ExplainedMatch {
        id: catalog.get(e.tool).id.clone(),
        score: e.score,
        contributions: e
            .contributions
            .into_iter()
            .map(|c| ContributionRow {
                term: c.term,
                field: c.field,
                points: c.points,
                detail: c.detail,
            })
            .collect(),
        note: e.note,
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
            let table = if format == Format::Md {
                md_table
            } else {
                text_table
            };
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
                let mut why = Vec::new();
                for (i, e) in explanations.iter().enumerate() {
                    for c in &e.contributions {
                        why.push(vec![
                            (i + 1).to_string(),
                            e.id.clone(),
                            c.term.clone(),
                            c.field.clone(),
                            short(c.points),
                            c.detail.clone(),
                        ]);
                    }
                    if let Some(note) = &e.note {
                        let mut row = vec![(i + 1).to_string(), e.id.clone()];
                        row.extend(["".into(), "".into(), "".into(), note.clone()]);
                        why.push(row);
                    }
                }
                out.push('\n');
                out.push_str(&table(
                    &["rank", "id", "term", "field", "points", "detail"],
                    &why,
                    &[true, false, false, false, true, false],
                ));
            }
            out.push('\n');
            if !report.not_found.is_empty() {
                out.push_str(&format!("not found: {}\n", report.not_found.join(", ")));
            }
            let settings: Vec<String> = report
                .settings
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect();
            out.push_str(&format!(
                "{} of {} tools matched by {} ({})\n",
                report.matches.len(),
                report.total_tools,
                report.scorer,
                settings.join("; ")
            ));
            out
        }
    }
}

pub fn run(args: &SearchArgs) -> Result<()> {
    let catalog = Arc::new(super::load(&args.catalog)?);
    let mut config = ScorerConfig::default();
    args.embedding.apply(&mut config);
    config.progress = super::embed_progress(std::io::stderr().is_terminal());
    let report = search(
        catalog,
        args.scorer,
        &config,
        &args.query,
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
            ScorerKind::Keyword,
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
            v["explanations"][0]["contributions"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        let table = render(&r, Format::Table);
        assert!(table.contains("NotebookEdit"), "{table}");
        assert!(table.contains("a name part equals the term"), "{table}");
        assert_eq!(
            render(&r, Format::Csv),
            "rank,id,score\n1,NotebookEdit,14\n"
        );
    }

    #[test]
    fn a_bad_regex_is_an_input_error() {
        let e = search(
            catalog(),
            ScorerKind::Regex,
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
