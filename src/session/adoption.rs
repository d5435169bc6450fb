//! Adoption of the search tool in a real session, counted with the one definition
//! ([`crate::adoption`]) over every agent of the session, each agent its own conversation.
//!
//! From the log: a search is a `ToolSearch` (Claude Code) or `tool_search_call` (Codex) call;
//! what it returned is the tools its result names (`tool_reference` blocks,
//! `tool_search_output`), and a result naming none returned nothing. A deferred tool is one
//! the catalogs mark deferrable (an MCP server's, or `should_defer`), or, for a name in no
//! catalog, an MCP tool's name (`mcp__SERVER__TOOL`). A call that came first failed when its
//! result is marked `is_error` (Codex rollouts mark none). `/clear` forgets what was returned.

use std::collections::{HashMap, HashSet};

use super::tools::resolve;
use super::transcript::{Step, Transcript};
use super::{SEARCH_TOOL, Session};
use crate::adoption::{Adoption, Tracker, Use};
use crate::catalog::Catalog;

/// Whether a tool (by its name in the log) was deferred.
fn deferred(catalog: &Catalog, name: &str, alt: Option<&str>) -> bool {
    match resolve(catalog, name, alt) {
        Some(id) => catalog.index_of(&id).is_some_and(|i| {
            let t = catalog.get(i);
            t.id != SEARCH_TOOL && (t.is_mcp() || t.should_defer == Some(true))
        }),
        None => name.starts_with("mcp__"),
    }
}

/// The name a call or a reference is matched by: its catalog id, else the name logged.
fn key(catalog: &Catalog, name: &str, alt: Option<&str>) -> String {
    resolve(catalog, name, alt).unwrap_or_else(|| name.to_string())
}

/// A session's adoption, every agent summed.
pub fn measure(session: &Session, catalog: &Catalog) -> Adoption {
    let mut total = Adoption::default();
    for tx in session.transcripts() {
        total.add(&agent(tx, catalog));
    }
    total
}

fn agent(tx: &Transcript, catalog: &Catalog) -> Adoption {
    let mut t = Tracker::default();
    // Searches waiting for their result (call id → query), and calls that came first.
    let mut waiting: HashMap<&str, &str> = HashMap::new();
    let mut first: HashSet<&str> = HashSet::new();
    for step in &tx.steps {
        match step {
            Step::Clear => t.clear(),
            Step::Request(r) => {
                for call in &tx.requests[*r].calls {
                    if call.name == SEARCH_TOOL {
                        waiting.insert(&call.id, call.query.as_deref().unwrap_or(""));
                        continue;
                    }
                    let alt = call.alt_name.as_deref();
                    let u = t.call(
                        &key(catalog, &call.name, alt),
                        deferred(catalog, &call.name, alt),
                    );
                    if u == Use::First {
                        first.insert(&call.id);
                    }
                }
            }
            Step::Results(rs) => {
                for r in rs {
                    if let Some(q) = waiting.remove(r.call_id.as_str()) {
                        let names: Vec<String> =
                            r.references.iter().map(|n| key(catalog, n, None)).collect();
                        let names: Vec<&str> = names.iter().map(String::as_str).collect();
                        t.search(q, Some(&names));
                    } else if r.is_error && first.remove(r.call_id.as_str()) {
                        t.first_failed();
                    }
                }
            }
            Step::User { .. } | Step::Compact { .. } | Step::Interrupt | Step::Copied { .. } => {}
        }
    }
    // Searches whose result the log does not hold.
    for q in waiting.into_values() {
        t.search(q, None);
    }
    t.counts
}
