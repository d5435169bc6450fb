//! The model's own search queries, mined from a session that used deferred loading: every
//! search-tool call (Claude Code `ToolSearch`, Codex `tool_search_call`) with its query, labeled
//! with the deferred tools the model went on to call. `session import --queries-out FILE`
//! writes them in the format `eval --queries` reads, so every scorer — and a user's own — can
//! be scored on the searches an agent really makes.
//!
//! Labels: a later call of a tool the search's result loaded (`tool_reference` blocks, Codex
//! `tool_search_output`) goes to the latest search that loaded it; a search whose result named
//! no tool takes the deferrable tools (MCP, or marked deferred) called after it until the next
//! search or user turn. A search no call followed is left out (counted): nothing says what it
//! was for. `select:` queries are their own class, `select`; the others get the class
//! `eval::classes::derive` finds for them.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::tools::resolve;
use super::transcript::{Step, Transcript};
use super::{SEARCH_TOOL, Session};
use crate::catalog::Catalog;
use crate::eval::classes;

/// The class of a mined `select:` query.
pub const SELECT: &str = "select";

/// One mined search: a line of the query file (`{"id","query","expected","class"}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MinedQuery {
    pub id: String,
    pub query: String,
    pub expected: Vec<String>,
    pub class: String,
}

/// What mining a session found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Mined {
    pub queries: Vec<MinedQuery>,
    /// Searches with no call after them of a tool in the catalogs, left out.
    pub unlabeled: usize,
}

/// A search being labeled.
struct Open {
    query: String,
    loaded: Vec<String>,
    used: BTreeSet<String>,
    /// No tool named in its result: the next calls label it.
    by_next_calls: bool,
    closed: bool,
}

/// Mines every agent of a session; ids are `NAME/1`, `NAME/2`, … in the session's order.
pub fn mine(session: &Session, name: &str, catalog: &Catalog) -> Mined {
    let mut searches: Vec<Open> = Vec::new();
    for tx in session.transcripts() {
        agent(tx, catalog, &mut searches);
    }
    let mut out = Mined::default();
    for s in searches {
        if s.used.is_empty() {
            out.unlabeled += 1;
            continue;
        }
        // Expected in the order the result listed them, then the rest in name order.
        let mut expected: Vec<String> = s
            .loaded
            .iter()
            .filter(|t| s.used.contains(*t))
            .cloned()
            .collect();
        let rest: Vec<String> = s
            .used
            .iter()
            .filter(|t| !expected.contains(t))
            .cloned()
            .collect();
        expected.extend(rest);
        let class = if s.query.trim_start().starts_with("select:") {
            SELECT.to_string()
        } else {
            let idx: Vec<usize> = expected
                .iter()
                .filter_map(|t| catalog.index_of(t))
                .collect();
            classes::derive(&s.query, &idx, catalog).to_string()
        };
        out.queries.push(MinedQuery {
            id: format!("{name}/{}", out.queries.len() + 1),
            query: s.query,
            expected,
            class,
        });
    }
    out
}

/// Whether a tool is one a search could have been needed for.
fn deferrable(catalog: &Catalog, id: &str) -> bool {
    catalog.index_of(id).is_some_and(|i| {
        let t = catalog.get(i);
        t.id != SEARCH_TOOL && (t.is_mcp() || t.should_defer == Some(true))
    })
}

fn agent(tx: &Transcript, catalog: &Catalog, all: &mut Vec<Open>) {
    // Index (into `all`) of this agent's searches, and the search that loaded each tool last.
    let mut mine: Vec<usize> = Vec::new();
    let mut loaded_by: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    // Searches by call id, waiting for their result.
    let mut waiting: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for step in &tx.steps {
        match step {
            Step::User { .. } | Step::Clear | Step::Compact { .. } | Step::Interrupt => {
                for &i in &mine {
                    all[i].closed = true;
                }
                if matches!(step, Step::Clear) {
                    loaded_by.clear();
                }
            }
            Step::Copied { .. } => {}
            Step::Request(r) => {
                let req = &tx.requests[*r];
                for call in &req.calls {
                    if call.name == SEARCH_TOOL {
                        let Some(q) = call.query.as_deref().filter(|q| !q.trim().is_empty()) else {
                            continue;
                        };
                        for &i in &mine {
                            all[i].closed = true;
                        }
                        all.push(Open {
                            query: q.to_string(),
                            loaded: Vec::new(),
                            used: BTreeSet::new(),
                            by_next_calls: true,
                            closed: false,
                        });
                        mine.push(all.len() - 1);
                        waiting.insert(call.id.as_str(), all.len() - 1);
                        continue;
                    }
                    let Some(id) = resolve(catalog, &call.name, call.alt_name.as_deref()) else {
                        continue;
                    };
                    if let Some(&i) = loaded_by.get(&id) {
                        all[i].used.insert(id);
                    } else if let Some(&i) = mine.last()
                        && all[i].by_next_calls
                        && !all[i].closed
                        && deferrable(catalog, &id)
                    {
                        all[i].used.insert(id);
                    }
                }
            }
            Step::Results(rs) => {
                for r in rs {
                    let Some(&i) = waiting.get(r.call_id.as_str()) else {
                        continue;
                    };
                    let ids: Vec<String> = r
                        .references
                        .iter()
                        .filter_map(|t| resolve(catalog, t, None))
                        .collect();
                    if !ids.is_empty() {
                        all[i].by_next_calls = false;
                    }
                    for id in ids {
                        loaded_by.insert(id.clone(), i);
                        if !all[i].loaded.contains(&id) {
                            all[i].loaded.push(id);
                        }
                    }
                }
            }
        }
    }
}

/// The query file: one JSON object a line.
pub fn to_jsonl(queries: &[MinedQuery]) -> String {
    let mut out = String::new();
    for q in queries {
        out.push_str(&serde_json::to_string(q).expect("a query serializes"));
        out.push('\n');
    }
    out
}
