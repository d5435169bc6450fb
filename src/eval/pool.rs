//! Pooled evaluation (`eval --pool`): a query set's expected tools ranked inside a large mixed
//! catalog — its own catalog plus every tool of the pool as a distractor — the way tool search
//! is used (one agent, many servers, near-duplicates among them).
//!
//! Ids stay unique by a fixed rule: the first definition of an id wins. The own catalog comes
//! first, so its tools (and the labels that name them) are never replaced; a pool tool whose id
//! is already taken is left out and counted (`duplicate_ids`), whatever its definition. The
//! command skips pool files that are the own catalog's files before they are read.
//!
//! The own catalog's tools keep their indices (they come first, in order), so queries resolved
//! against the own catalog are valid in the pooled one as they are.

use std::collections::HashSet;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, CatalogSource, MAX_TOOLS, load_catalogs};
use crate::error::{Error, Result};

/// What the pool added, printed with every pooled result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PoolInfo {
    /// `--pool` arguments, as given.
    pub sources: Vec<String>,
    /// Catalog files read from them.
    pub files: usize,
    /// Pool files left out because they are the own catalog's files.
    pub skipped_files: usize,
    /// Tools of the query set's own catalog.
    pub own_tools: usize,
    /// Distractors added from the pool.
    pub added_tools: usize,
    /// Pool tools left out because their id was already taken (own catalog first, then the
    /// pool in file order: the first definition wins).
    pub duplicate_ids: usize,
}

/// The own catalog followed by every pool tool whose id is new.
pub fn extend(own: &Catalog, pool: &[CatalogSource]) -> Result<(Catalog, PoolInfo)> {
    let loaded: Vec<Catalog> = pool
        .par_iter()
        .map(|s| load_catalogs(std::slice::from_ref(s)))
        .collect::<Result<_>>()?;
    let mut tools = own.tools().to_vec();
    let mut seen: HashSet<String> = tools.iter().map(|t| t.id.clone()).collect();
    let mut duplicate_ids = 0;
    for catalog in &loaded {
        for tool in catalog.tools() {
            if seen.insert(tool.id.clone()) {
                tools.push(tool.clone());
            } else {
                duplicate_ids += 1;
            }
        }
        if tools.len() > MAX_TOOLS {
            return Err(Error::usage(format!(
                "the catalog and the pool hold more than the limit of {MAX_TOOLS} tools"
            )));
        }
    }
    let info = PoolInfo {
        files: pool.len(),
        own_tools: own.len(),
        added_tools: tools.len() - own.len(),
        duplicate_ids,
        ..PoolInfo::default()
    };
    let pooled = Catalog::from_tools(tools).map_err(Error::usage)?;
    Ok((pooled, info))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &std::path::Path, name: &str, tools: &[(&str, &str)]) -> CatalogSource {
        let list: Vec<serde_json::Value> = tools
            .iter()
            .map(|(n, d)| serde_json::json!({"name": n, "description": d, "inputSchema": {"type": "object"}}))
            .collect();
        let path = dir.join(name);
        std::fs::write(&path, serde_json::json!({ "tools": list }).to_string()).unwrap();
        CatalogSource { path, server: None }
    }

    #[test]
    fn own_tools_come_first_and_the_first_definition_of_an_id_wins() {
        let dir = tempfile::tempdir().unwrap();
        let own_src = write(
            dir.path(),
            "gh.json",
            &[("create_issue", "mine"), ("list", "")],
        );
        let own = load_catalogs(&[own_src]).unwrap();
        let a = write(dir.path(), "gh2.json", &[("create_issue", "twin")]);
        // Same server name as the own catalog: same id, another definition. Left out.
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        let clash = write(
            &sub,
            "gh.json",
            &[("create_issue", "theirs"), ("close", "")],
        );
        let (pooled, info) = extend(&own, &[a, clash]).unwrap();
        let ids: Vec<&str> = pooled.tools().iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "mcp__gh__create_issue",
                "mcp__gh__list",
                "mcp__gh2__create_issue",
                "mcp__gh__close"
            ]
        );
        assert_eq!(pooled.get(0).description, "mine");
        assert_eq!(
            (
                info.files,
                info.own_tools,
                info.added_tools,
                info.duplicate_ids
            ),
            (2, 2, 2, 1)
        );
    }

    #[test]
    fn a_bad_pool_file_is_an_input_error() {
        let dir = tempfile::tempdir().unwrap();
        let own = load_catalogs(&[write(dir.path(), "a.json", &[("x", "")])]).unwrap();
        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "{\"tools\": [}").unwrap();
        let e = extend(
            &own,
            &[CatalogSource {
                path: bad,
                server: None,
            }],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("bad.json:1:"), "{e}");
    }
}
