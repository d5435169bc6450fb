//! A user's own search beside the built-in scorers: a process speaking toolbudget's protocol
//! (`exec`), or the search tool of a live MCP server (`mcp`). Both are `Scorer`s, so `eval`,
//! `search`, `simulate` and `report` use them as they use a built-in; both are named in every
//! output by what they reported (`exec:NAME`, `mcp:NAME`).
//!
//! What the two share lives here: timeouts, how a failure is told (the command, the query,
//! what the process wrote on stderr last), and how an answer becomes a ranking.

pub mod exec;
// An MCP server's search tool needs the MCP client (feature `mcp`, default).
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod process;
pub mod protocol;

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use crate::catalog::Catalog;
use crate::search::{Hit, SearchRequest};

/// Default wait for `ready` after the index: a service that embeds a large catalog on a CPU
/// needs minutes (toolbudget's own MiniLM embeds about 280 tools a second on 2 cores).
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(600);
/// Default wait for each answer: far above an embedding service's query time (milliseconds),
/// short enough that a hung process fails a run within a minute.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest timeout accepted, in seconds (a day).
pub const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// How external scorers are started and waited for.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalConfig {
    /// From start to `ready` (exec) or to the answer to `initialize` and `tools/list` (mcp).
    pub start_timeout: Duration,
    /// For each search.
    pub query_timeout: Duration,
    /// The folder the command runs in; `None`: the current one (a scenario's scorer runs in
    /// the scenario's folder).
    pub cwd: Option<PathBuf>,
    /// The MCP server's search tool and its arguments.
    pub mcp: McpOptions,
}

/// Which tool of an MCP server searches (`mcp:` scorers), and how it is called.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpOptions {
    pub tool: Option<String>,
    pub query_arg: Option<String>,
    pub limit_arg: Option<String>,
    /// Skip result names that fit no tool of the catalog instead of failing.
    pub allow_unknown_tools: bool,
}

impl Default for ExternalConfig {
    fn default() -> Self {
        ExternalConfig {
            start_timeout: DEFAULT_START_TIMEOUT,
            query_timeout: DEFAULT_QUERY_TIMEOUT,
            cwd: None,
            mcp: McpOptions::default(),
        }
    }
}

/// One line naming the scorer, the step, the failure, a hint, and the process's last stderr.
/// The explanation an external scorer can give of `tool`: its score in `outcome`, no reasons
/// (`what` says whose: "an external scorer", "an MCP search tool").
pub(crate) fn score_only(
    name: &str,
    what: &str,
    outcome: &crate::search::SearchOutcome,
    tool: usize,
) -> crate::search::Explanation {
    let score = outcome
        .hits
        .iter()
        .find(|h| h.tool == tool)
        .map_or(0.0, |h| h.score);
    crate::search::Explanation::leaf(
        format!("score from {name} ({what} gives no reasons)"),
        score,
    )
}

pub(crate) fn describe_failure(
    who: &str,
    what: &str,
    failure: &process::Failure,
    stderr_tail: Vec<String>,
    config: &ExternalConfig,
) -> String {
    let hint = match failure {
        process::Failure::Timeout(_) if what.starts_with("query") => format!(
            " (the timeout is {} s; raise it with --scorer-timeout)",
            config.query_timeout.as_secs_f64()
        ),
        process::Failure::Timeout(_) => format!(
            " (the start timeout is {} s; raise it with --scorer-start-timeout)",
            config.start_timeout.as_secs_f64()
        ),
        _ => String::new(),
    };
    let mut s = format!("{who}: {what}: {failure}{hint}");
    // The process's own words: each line escaped and bounded, the message one line.
    let lines: Vec<String> = stderr_tail
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| crate::output::terminal_line(l))
        .collect();
    if !lines.is_empty() {
        s.push_str("; its stderr ended with: ");
        s.push_str(&lines.join(" | "));
    }
    crate::output::terminal_text(&s).into_owned()
}

/// The ids a search may return, when that is not every tool but the search tool (the
/// simulator searches only the deferred ones); `None` otherwise, so an evaluation does not
/// send the whole catalog with every query.
pub(crate) fn candidate_ids<'a>(
    catalog: &'a Catalog,
    request: &SearchRequest<'_>,
) -> Option<Vec<&'a str>> {
    let mask = request.candidates?;
    let search_tool = catalog.search_tool();
    let all = (0..catalog.len()).all(|i| mask[i] || Some(i) == search_tool);
    if all {
        return None;
    }
    Some(
        (0..catalog.len())
            .filter(|&i| mask[i] && Some(i) != search_tool)
            .map(|i| catalog.get(i).id.as_str())
            .collect(),
    )
}

/// An answer's (id, score) pairs as ranked hits. Every id must be a searchable tool of the
/// catalog, listed once, with a finite score; the hits are ranked by score, descending, ties
/// by tool id (ascending), and cut to the request's limit.
pub(crate) fn rank_answer(
    catalog: &Catalog,
    request: &SearchRequest<'_>,
    results: &[(&str, f64)],
) -> Result<Vec<Hit>, String> {
    let search_tool = catalog.search_tool();
    let mut seen = HashSet::with_capacity(results.len());
    let mut hits = Vec::with_capacity(results.len());
    for &(id, score) in results {
        let Some(tool) = catalog.index_of(id) else {
            return Err(format!("tool {id:?} is not in the catalog"));
        };
        if Some(tool) == search_tool {
            return Err(format!(
                "tool {id:?} is the search tool, which is never a search result"
            ));
        }
        if !request.is_candidate(tool) {
            return Err(format!(
                "tool {id:?} is not among the {} candidates of this search",
                request.searchable(catalog.len())
            ));
        }
        if !seen.insert(tool) {
            return Err(format!("tool {id:?} is listed twice"));
        }
        if !score.is_finite() {
            return Err(format!("tool {id:?} has the score {score}"));
        }
        hits.push(Hit { tool, score });
    }
    Ok(crate::search::rank_hits(catalog, hits, request.limit))
}
