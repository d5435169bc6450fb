//! `--scorer exec:'CMD ARGS'`: a user's own search as a process speaking protocol 1
//! (`protocol.rs`). Started once per catalog; each search is one request line and one answer
//! line; the answer is checked (its id, tools known and searchable, no tool twice) and ranked
//! by score, descending, ties by tool id, as every scorer ranks.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::process::{Failure, LineProcess};
use super::protocol::{Answer, Index, IndexTool, PROTOCOL, Search};
use super::{ExternalConfig, describe_failure};
use crate::catalog::Catalog;
use crate::mcp::ServerCommand;
use crate::output::{terminal_line, terminal_text};
use crate::search::{Explanation, Scorer, SearchError, SearchOutcome, SearchRequest};

/// Messages of an unknown type skipped while waiting for one answer, at most: a process that
/// floods them is broken, not chatty.
pub const MAX_SKIPPED: usize = 10_000;

pub struct ExecScorer {
    catalog: Arc<Catalog>,
    /// The command as the user wrote it, for messages.
    line: String,
    name: String,
    version: String,
    config: ExternalConfig,
    state: Mutex<State>,
}

struct State {
    process: LineProcess,
    /// Queries sent without an id of the caller's, numbered.
    sent: u64,
}

impl ExecScorer {
    /// Starts `line`, sends the catalog (all but its search tool, which is never a result) and
    /// waits for `ready`.
    pub fn start(
        catalog: Arc<Catalog>,
        line: &str,
        config: &ExternalConfig,
    ) -> Result<ExecScorer, SearchError> {
        let mut command = ServerCommand::parse(line)
            .map_err(|why| SearchError::Failed(format!("exec:{line}: {why}")))?;
        command.cwd.clone_from(&config.cwd);
        let fail = |what: &str, f: &Failure, p: Option<&LineProcess>| {
            SearchError::Failed(describe_failure(
                &format!("exec:{line}"),
                what,
                f,
                p.map(LineProcess::stderr_tail).unwrap_or_default(),
                config,
            ))
        };
        let mut process = LineProcess::spawn(&command).map_err(|f| fail("start", &f, None))?;
        let search_tool = catalog.search_tool();
        let index = Index {
            kind: "index",
            protocol: PROTOCOL,
            tools: catalog
                .tools()
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != search_tool)
                .map(|(_, t)| IndexTool::of(t))
                .collect(),
        };
        let bytes = serde_json::to_vec(&index).expect("the index serializes");
        let deadline = Instant::now() + config.start_timeout;
        if let Err(f) = process.send(bytes) {
            return Err(fail("the index", &f, Some(&process)));
        }
        let mut skipped = 0;
        let (name, version) = loop {
            let line_bytes = match process.receive(deadline) {
                Ok(l) => l,
                Err(f) => return Err(fail("`ready`", &f, Some(&process))),
            };
            match serde_json::from_slice::<Answer>(&line_bytes) {
                Ok(Answer::Ready {
                    name,
                    version,
                    protocol,
                }) => {
                    if let Some(p) = protocol.filter(|&p| p != PROTOCOL) {
                        return Err(SearchError::Failed(format!(
                            "exec:{line}: it speaks protocol {p}; toolbudget speaks {PROTOCOL}"
                        )));
                    }
                    if name.trim().is_empty() {
                        return Err(SearchError::Failed(format!(
                            "exec:{line}: its `ready` has an empty name"
                        )));
                    }
                    // Shown in every message and table: one bounded line, escapes visible.
                    break (
                        terminal_line(&name),
                        terminal_line(&version.unwrap_or_default()),
                    );
                }
                Ok(Answer::Error { message, .. }) => {
                    return Err(SearchError::Failed(format!(
                        "exec:{line}: it refused the index: {}",
                        terminal_line(&message)
                    )));
                }
                Ok(Answer::Other) if skipped < MAX_SKIPPED => skipped += 1,
                Ok(_) => {
                    return Err(SearchError::Failed(format!(
                        "exec:{line}: expected `ready` after the index, got {}",
                        clip_line(&line_bytes)
                    )));
                }
                Err(e) => {
                    return Err(SearchError::Failed(format!(
                        "exec:{line}: expected `ready` after the index, got {} ({e})",
                        clip_line(&line_bytes)
                    )));
                }
            }
        };
        Ok(ExecScorer {
            catalog,
            line: line.to_string(),
            name,
            version,
            config: config.clone(),
            state: Mutex::new(State { process, sent: 0 }),
        })
    }

    /// The name the process reported in `ready`.
    pub fn reported_name(&self) -> &str {
        &self.name
    }

    fn failed(&self, query: &str, what: impl std::fmt::Display) -> SearchError {
        SearchError::Failed(format!(
            "exec:{} ({} {}): query {query:?}: {}",
            self.line,
            self.name,
            self.version,
            terminal_text(&what.to_string())
        ))
    }
}

impl Scorer for ExecScorer {
    fn name(&self) -> String {
        format!("exec:{}", self.name)
    }

    fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        state.sent += 1;
        let numbered = format!("q{}", state.sent);
        let id = request.id.unwrap_or(&numbered);
        let candidates = super::candidate_ids(&self.catalog, request);
        let message = Search {
            kind: "search",
            id,
            query: request.query,
            limit: request.limit,
            candidates,
        };
        let bytes = serde_json::to_vec(&message).expect("a search serializes");
        let deadline = Instant::now() + self.config.query_timeout;
        let process = &mut state.process;
        let fail = |f: &Failure, p: &LineProcess| {
            SearchError::Failed(describe_failure(
                &format!("exec:{} ({} {})", self.line, self.name, self.version),
                &format!("query {id:?}"),
                f,
                p.stderr_tail(),
                &self.config,
            ))
        };
        if let Err(f) = process.send(bytes) {
            return Err(fail(&f, process));
        }
        let mut skipped = 0;
        loop {
            let line = match process.receive(deadline) {
                Ok(l) => l,
                Err(f) => return Err(fail(&f, process)),
            };
            match serde_json::from_slice::<Answer>(&line) {
                Ok(Answer::Results {
                    id: answered,
                    results,
                    elapsed_us,
                }) => {
                    if answered != id {
                        return Err(
                            self.failed(id, format!("the answer is for query {answered:?}"))
                        );
                    }
                    let pairs: Vec<(&str, f64)> =
                        results.iter().map(|r| (r.id.as_str(), r.score)).collect();
                    let hits = super::rank_answer(&self.catalog, request, &pairs)
                        .map_err(|why| self.failed(id, why))?;
                    let reported_us = match elapsed_us {
                        Some(us) if !(us.is_finite() && us >= 0.0) => {
                            return Err(self.failed(
                                id,
                                format!("elapsed_us is {us}, not a number of microseconds"),
                            ));
                        }
                        other => other,
                    };
                    return Ok(SearchOutcome {
                        hits,
                        total_tools: request.searchable(self.catalog.len()),
                        reported_us,
                        ..SearchOutcome::default()
                    });
                }
                Ok(Answer::Error { message, .. }) => {
                    return Err(self.failed(
                        id,
                        format!("it answered with an error: {}", terminal_line(&message)),
                    ));
                }
                Ok(Answer::Other) if skipped < MAX_SKIPPED => skipped += 1,
                Ok(_) => {
                    return Err(
                        self.failed(id, format!("expected `results`, got {}", clip_line(&line)))
                    );
                }
                Err(e) => {
                    let why = if e.is_syntax() || e.is_eof() {
                        "not JSON".to_string()
                    } else {
                        e.to_string()
                    };
                    return Err(self.failed(
                        id,
                        format!("expected `results`, got {} ({why})", clip_line(&line)),
                    ));
                }
            }
        }
    }

    fn explain_tool(
        &self,
        request: &SearchRequest<'_>,
        tool: usize,
    ) -> Result<Explanation, SearchError> {
        let all = SearchRequest {
            limit: usize::MAX,
            ..*request
        };
        let outcome = self.search(&all)?;
        Ok(super::score_only(
            &self.name(),
            "an external scorer",
            &outcome,
            tool,
        ))
    }

    fn count_matches(&self, request: &SearchRequest<'_>) -> Result<usize, SearchError> {
        // Asking the process for everything it would return: its own limit, if any, applies.
        let all = SearchRequest {
            limit: self.catalog.len(),
            ..*request
        };
        Ok(self.search(&all)?.hits.len())
    }

    fn settings(&self) -> Vec<(String, String)> {
        vec![
            ("command".to_string(), self.line.clone()),
            ("name".to_string(), self.name.clone()),
            ("version".to_string(), self.version.clone()),
            ("protocol".to_string(), PROTOCOL.to_string()),
            (
                "timeout_s".to_string(),
                self.config.query_timeout.as_secs_f64().to_string(),
            ),
        ]
    }
}

/// The first characters of a line, for a message.
fn clip_line(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    match text.char_indices().nth(120) {
        Some((i, _)) => format!("{:?}…", &text[..i]),
        None => format!("{text:?}"),
    }
}
