//! One query against a catalog with one scorer: the ranked matches, how many matched, the
//! limit in force and (with `explain`) each match's explanation tree ([`SearchReport`],
//! `search`).

use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;

use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::eval::ScorerName;
use crate::search::{Explanation, ScorerConfig, ScorerKind, ScorerSpec, SearchRequest, build_spec};

/// The contract's keys first (`query`, `scorer`, `matches`, `total_tools`), then ours.
#[derive(Debug, Serialize)]
pub struct SearchReport {
    pub query: String,
    pub scorer: ScorerName,
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
        scorer: ScorerName::new(&scorer.name()),
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::catalog::Tool;

    /// Two tools: `Read` and `NotebookEdit`.
    pub(crate) fn catalog() -> Arc<Catalog> {
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
