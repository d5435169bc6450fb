//! `--scorer mcp:'CMD ARGS'`: the search tool of a live MCP server over stdio (gateways expose
//! one: `find_tool`, `search_tools`, `tool_search`, ...), called once per query through the
//! MCP client of `crate::mcp` (one session per catalog, killed and reaped when the scorer is
//! dropped, or by the interrupt handler).
//!
//! Rules, in the order they apply (also in `docs/external-scorers.md`):
//! - **The tool**: `--mcp-tool NAME`, else the one tool whose name contains `search` or `find`
//!   (case-insensitive); none or several is an error that lists them.
//! - **The query argument**: `--mcp-query-arg NAME`, else the first of [`QUERY_ARGS`] the tool's
//!   input schema has, else its only required string property, else its only string property.
//! - **The limit argument**: `--mcp-limit-arg NAME`, else the first of [`LIMIT_ARGS`] the
//!   schema has; without one no limit is sent and the answer is cut here.
//! - **The answer**: `structuredContent` when the server sent it, else the text content read
//!   as JSON when it is JSON, else read line by line. JSON: an array, or the first of
//!   [`LIST_KEYS`] that holds one (or the object's only array); each item a string (the tool)
//!   or an object with the tool in the first of [`NAME_KEYS`], optionally a server in the first
//!   of [`SERVER_KEYS`] and a score in the first of [`SCORE_KEYS`]. Text: each non-empty line,
//!   list markers (`-`, `*`, `1.`) and backticks dropped, its first word up to a space, `:` or
//!   `(`; lines whose word names no tool (headings, prose) are skipped.
//! - **Names to tools**: an exact tool id; else `server` + name; else `SERVER__NAME`,
//!   `SERVER/NAME`, `SERVER.NAME` or `SERVER:NAME`; else a bare name that exactly one tool of
//!   the catalog has. In JSON a name that fits no tool is an error (unless
//!   `--allow-unknown-tools`, which skips it), and a name that fits several is an error.
//! - **The ranking**: by score, descending, ties by tool id, when every item has a score; else
//!   in the server's order, scored 1/rank. A tool listed twice keeps its first place; tools
//!   outside the search's candidates (the deferred ones, in the simulator) are dropped, since
//!   the server cannot be told them.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

use super::ExternalConfig;
use super::McpOptions;
use crate::catalog::{Catalog, mcp_id};
use crate::mcp::ServerCommand;
use crate::mcp::client::Session;
use crate::output::{terminal_line, terminal_text};
use crate::search::{Explanation, Hit, Scorer, SearchError, SearchOutcome, SearchRequest};

/// Query argument names tried in order.
pub const QUERY_ARGS: [&str; 7] = [
    "query",
    "q",
    "search",
    "search_query",
    "text",
    "keywords",
    "prompt",
];
/// Limit argument names tried in order.
pub const LIMIT_ARGS: [&str; 9] = [
    "limit",
    "top_k",
    "topK",
    "k",
    "max_results",
    "maxResults",
    "top_n",
    "n",
    "count",
];
/// Keys of an answer object that may hold the list of results.
pub const LIST_KEYS: [&str; 7] = [
    "results", "tools", "matches", "items", "data", "hits", "content",
];
/// Keys of a result item naming the tool.
pub const NAME_KEYS: [&str; 7] = [
    "id",
    "tool_id",
    "toolId",
    "name",
    "tool",
    "tool_name",
    "toolName",
];
/// Keys of a result item naming its server.
pub const SERVER_KEYS: [&str; 5] = [
    "server",
    "server_name",
    "serverName",
    "namespace",
    "mcp_server",
];
/// Keys of a result item holding its score.
pub const SCORE_KEYS: [&str; 4] = ["score", "relevance", "similarity", "relevance_score"];

pub struct McpScorer {
    catalog: Arc<Catalog>,
    line: String,
    name: String,
    version: String,
    tool: String,
    query_arg: String,
    limit_arg: Option<String>,
    config: ExternalConfig,
    /// Bare tool names to their catalog indices (several when servers share a name).
    by_name: std::collections::HashMap<String, Vec<usize>>,
    inner: Mutex<Option<(tokio::runtime::Runtime, Session)>>,
}

impl McpScorer {
    /// Starts the server, lists its tools and picks the search tool and its arguments.
    pub fn start(
        catalog: Arc<Catalog>,
        line: &str,
        config: &ExternalConfig,
    ) -> Result<McpScorer, SearchError> {
        let who = format!("mcp:{line}");
        let failed = |why: String| SearchError::Failed(format!("{who}: {}", terminal_text(&why)));
        let mut command = ServerCommand::parse(line).map_err(&failed)?;
        command.cwd.clone_from(&config.cwd);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| failed(format!("cannot start the async runtime: {e}")))?;
        let session = runtime
            .block_on(Session::start(&command, config.start_timeout))
            .map_err(|e| failed(told(&e)))?;
        let listing = match runtime.block_on(session.list_tools(config.start_timeout)) {
            Ok(l) => l,
            Err(f) => {
                let e = runtime.block_on(session.fail(f));
                return Err(failed(told(&e)));
            }
        };
        let chosen = choose(&listing.tools, &config.mcp);
        let (tool, query_arg, limit_arg) = match chosen {
            Ok(c) => c,
            Err(why) => {
                runtime.block_on(session.close());
                return Err(failed(terminal_line(&why)));
            }
        };
        let mut by_name: std::collections::HashMap<String, Vec<usize>> =
            std::collections::HashMap::new();
        for (i, t) in catalog.tools().iter().enumerate() {
            by_name.entry(t.name.clone()).or_default().push(i);
        }
        // The server's words, shown in every message and table: one bounded line each.
        let name = session
            .server_name
            .as_deref()
            .filter(|n| !n.trim().is_empty())
            .map_or_else(|| command.program.clone(), terminal_line);
        let version = terminal_line(session.server_version.as_deref().unwrap_or_default());
        Ok(McpScorer {
            catalog,
            line: line.to_string(),
            name,
            version,
            tool,
            query_arg,
            limit_arg,
            config: config.clone(),
            by_name,
            inner: Mutex::new(Some((runtime, session))),
        })
    }

    fn failed(&self, query: &str, why: impl std::fmt::Display) -> SearchError {
        SearchError::Failed(format!(
            "mcp:{} ({} {}, tool {}): query {query:?}: {}",
            self.line,
            self.name,
            self.version,
            terminal_line(&self.tool),
            terminal_text(&why.to_string())
        ))
    }

    /// The catalog tool a result names, `Ok(None)` when it names none.
    fn resolve(&self, name: &str, server: Option<&str>) -> Result<Option<usize>, String> {
        let name = name.trim();
        if let Some(i) = self.catalog.index_of(name) {
            return Ok(Some(i));
        }
        if let Some(s) = server.filter(|s| !s.is_empty())
            && let Some(i) = self.catalog.index_of(&mcp_id(s, name))
        {
            return Ok(Some(i));
        }
        for sep in ["__", "/", ".", ":"] {
            if let Some((s, n)) = name.split_once(sep)
                && let Some(i) = self.catalog.index_of(&mcp_id(s, n))
            {
                return Ok(Some(i));
            }
        }
        match self.by_name.get(name).map(Vec::as_slice) {
            Some([one]) => Ok(Some(*one)),
            Some(many) if many.len() > 1 => Err(format!(
                "{name:?} names {} tools ({}); the result should carry the server",
                many.len(),
                many.iter()
                    .take(5)
                    .map(|&i| self.catalog.get(i).id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => Ok(None),
        }
    }

    fn hits(&self, request: &SearchRequest<'_>, answer: &Value) -> Result<Vec<Hit>, String> {
        if answer.get("isError").and_then(Value::as_bool) == Some(true) {
            return Err(format!(
                "the tool answered with an error: {}",
                text_of(answer)
            ));
        }
        let items = if let Some(v) = answer.get("structuredContent").filter(|v| !v.is_null()) {
            Items::Json(list_of(v)?)
        } else {
            let text = text_of(answer);
            match serde_json::from_str::<Value>(text.trim()) {
                Ok(v @ (Value::Array(_) | Value::Object(_))) => Items::Json(list_of(&v)?),
                _ => Items::Text(text),
            }
        };
        let mut found: Vec<(usize, Option<f64>)> = Vec::new();
        match items {
            Items::Json(list) => {
                for item in &list {
                    let (name, server, score) = item_fields(item)?;
                    match self.resolve(&name, server.as_deref())? {
                        Some(i) => found.push((i, score)),
                        None if self.config.mcp.allow_unknown_tools => {}
                        None => {
                            return Err(format!(
                                "the result {name:?} is not a tool of the catalog (pass the \
                                 catalog the server searches, or --allow-unknown-tools)"
                            ));
                        }
                    }
                }
            }
            Items::Text(text) => {
                for line in text.lines() {
                    if let Some(word) = first_word(line)
                        && let Ok(Some(i)) = self.resolve(word, None)
                    {
                        found.push((i, None));
                    }
                }
            }
        }
        let search_tool = self.catalog.search_tool();
        let scored = found.iter().all(|(_, s)| s.is_some());
        let mut seen = HashSet::new();
        let mut hits = Vec::new();
        for (rank, (tool, score)) in found.into_iter().enumerate() {
            if !seen.insert(tool) || Some(tool) == search_tool || !request.is_candidate(tool) {
                continue;
            }
            let score = if scored {
                score.unwrap_or_default()
            } else {
                1.0 / (rank + 1) as f64
            };
            if !score.is_finite() {
                return Err(format!("a result has the score {score}"));
            }
            hits.push(Hit { tool, score });
        }
        Ok(crate::search::rank_hits(&self.catalog, hits, request.limit))
    }
}

/// A failed exchange in one line: what failed, and the server's last stderr lines.
/// The client's failure, the server's words in it (JSON-RPC error text, stderr lines) each
/// escaped and bounded to one line.
fn told(e: &crate::mcp::ImportError) -> String {
    let mut s = terminal_line(&e.summary());
    let tail: Vec<String> = e
        .stderr_tail
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| terminal_line(l))
        .collect();
    if !tail.is_empty() {
        s.push_str("; its stderr ended with: ");
        s.push_str(&tail[tail.len().saturating_sub(5)..].join(" | "));
    }
    s
}

enum Items {
    Json(Vec<Value>),
    Text(String),
}

/// The text blocks of a tool result, joined by newlines.
fn text_of(answer: &Value) -> String {
    answer
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The list of results in a JSON answer.
fn list_of(v: &Value) -> Result<Vec<Value>, String> {
    match v {
        Value::Array(items) => Ok(items.clone()),
        Value::Object(map) => {
            if let Some(list) = LIST_KEYS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_array))
            {
                return Ok(list.clone());
            }
            let arrays: Vec<&Vec<Value>> = map.values().filter_map(Value::as_array).collect();
            match arrays.as_slice() {
                [one] => Ok((*one).clone()),
                _ => Err(format!(
                    "the answer is an object without a list of results (looked for {} or a \
                     single array); its keys: {}",
                    LIST_KEYS.join(", "),
                    map.keys().cloned().collect::<Vec<_>>().join(", ")
                )),
            }
        }
        other => Err(format!("the answer is {other}, not a list of results")),
    }
}

/// (tool name, server, score) of one result item.
fn item_fields(item: &Value) -> Result<(String, Option<String>, Option<f64>), String> {
    match item {
        Value::String(s) => Ok((s.clone(), None, None)),
        Value::Object(map) => {
            let name = NAME_KEYS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
                .ok_or_else(|| {
                    format!(
                        "a result names no tool (looked for {}): {}",
                        NAME_KEYS.join(", "),
                        clip(&item.to_string())
                    )
                })?;
            let server = SERVER_KEYS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_str))
                .map(str::to_string);
            let score = SCORE_KEYS
                .iter()
                .find_map(|k| map.get(*k).and_then(Value::as_f64));
            Ok((name.to_string(), server, score))
        }
        other => Err(format!(
            "a result is {}, not a tool",
            clip(&other.to_string())
        )),
    }
}

/// The word a text line starts with, list markers and backticks dropped.
fn first_word(line: &str) -> Option<&str> {
    let mut s = line.trim();
    s = s.trim_start_matches(['-', '*', '•']).trim_start();
    let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 && s[digits..].starts_with(['.', ')']) {
        s = s[digits + 1..].trim_start();
    }
    let word = s
        .split(|c: char| c.is_whitespace() || c == ':' || c == '(' || c == ',')
        .next()?
        .trim_matches(['`', '*', '"', '\'']);
    (!word.is_empty()).then_some(word)
}

fn clip(s: &str) -> String {
    match s.char_indices().nth(120) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The search tool and its query and limit arguments, per the rules above.
fn choose(
    tools: &[Value],
    options: &McpOptions,
) -> Result<(String, String, Option<String>), String> {
    let tool = search_tool(tools, options)?;
    let tool_name = name_of(tool);
    let schema = tool.get("inputSchema").cloned().unwrap_or(Value::Null);
    let props: Map<String, Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let query_arg = match &options.query_arg {
        Some(q) => q.clone(),
        None => query_argument(&tool_name, &schema, &props)?,
    };
    let limit_arg = match &options.limit_arg {
        Some(l) => Some(l.clone()),
        None => LIMIT_ARGS
            .iter()
            .find(|k| {
                props
                    .get(**k)
                    .is_some_and(|p| typed(p, &["integer", "number"]))
            })
            .map(|k| (*k).to_string()),
    };
    Ok((tool_name, query_arg, limit_arg))
}

fn name_of(t: &Value) -> String {
    t.get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// Whether a property's schema has one of the `want` types (or no type at all).
fn typed(p: &Value, want: &[&str]) -> bool {
    match p.get("type") {
        None => true,
        Some(Value::String(t)) => want.contains(&t.as_str()),
        Some(Value::Array(ts)) => ts
            .iter()
            .any(|t| t.as_str().is_some_and(|t| want.contains(&t))),
        Some(_) => false,
    }
}

/// The tool named by `--mcp-tool`, else the one tool whose name says search or find.
fn search_tool<'t>(tools: &'t [Value], options: &McpOptions) -> Result<&'t Value, String> {
    let names: Vec<String> = tools.iter().map(name_of).collect();
    if let Some(wanted) = &options.tool {
        return tools.iter().find(|t| name_of(t) == *wanted).ok_or_else(|| {
            format!(
                "it has no tool {wanted:?} (--mcp-tool); its tools: {}",
                names.join(", ")
            )
        });
    }
    let found: Vec<&Value> = tools
        .iter()
        .filter(|t| {
            let n = name_of(t).to_lowercase();
            n.contains("search") || n.contains("find")
        })
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(format!(
            "none of its tools has `search` or `find` in its name; name the search tool with \
             --mcp-tool (its tools: {})",
            names.join(", ")
        )),
        many => Err(format!(
            "several of its tools could be the search tool ({}); name one with --mcp-tool",
            many.iter()
                .map(|t| name_of(t))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The argument that takes the query: a known name, else the one required string, else the
/// one string.
fn query_argument(
    tool_name: &str,
    schema: &Value,
    props: &Map<String, Value>,
) -> Result<String, String> {
    let named = QUERY_ARGS
        .iter()
        .find(|k| props.get(**k).is_some_and(|p| typed(p, &["string"])))
        .map(|k| (*k).to_string());
    let strings: Vec<&String> = props
        .iter()
        .filter(|(_, p)| typed(p, &["string"]))
        .map(|(k, _)| k)
        .collect();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let required_strings: Vec<&String> = strings
        .iter()
        .copied()
        .filter(|k| required.contains(&k.as_str()))
        .collect();
    match (named, required_strings.as_slice(), strings.as_slice()) {
        (Some(n), _, _) => Ok(n),
        (None, [one], _) | (None, [], [one]) => Ok((*one).clone()),
        _ => Err(format!(
            "cannot tell which argument of {tool_name:?} takes the query (its properties: {}); \
             name it with --mcp-query-arg",
            props.keys().cloned().collect::<Vec<_>>().join(", ")
        )),
    }
}

impl Scorer for McpScorer {
    fn name(&self) -> String {
        format!("mcp:{}", self.name)
    }

    fn search(&self, request: &SearchRequest<'_>) -> Result<SearchOutcome, SearchError> {
        let id = request.id.unwrap_or(request.query);
        let mut arguments = Map::new();
        arguments.insert(self.query_arg.clone(), Value::from(request.query));
        if let Some(l) = &self.limit_arg {
            arguments.insert(
                l.clone(),
                Value::from(request.limit.min(self.catalog.len())),
            );
        }
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some((runtime, session)) = inner.as_ref() else {
            return Err(self.failed(id, "the server is gone after an earlier failure"));
        };
        let answer =
            runtime.block_on(session.call_tool(&self.tool, arguments, self.config.query_timeout));
        let answer = match answer {
            Ok(a) => a,
            Err(f) => {
                let (runtime, session) = inner.take().expect("checked above");
                let e = runtime.block_on(session.fail(f));
                return Err(self.failed(id, told(&e)));
            }
        };
        let hits = self
            .hits(request, &answer)
            .map_err(|why| self.failed(id, why))?;
        Ok(SearchOutcome {
            hits,
            total_tools: request.searchable(self.catalog.len()),
            ..SearchOutcome::default()
        })
    }

    fn explain_tool(
        &self,
        request: &SearchRequest<'_>,
        tool: usize,
    ) -> Result<Explanation, SearchError> {
        let outcome = self.search(request)?;
        Ok(super::score_only(
            &self.name(),
            "an MCP search tool",
            &outcome,
            tool,
        ))
    }

    fn settings(&self) -> Vec<(String, String)> {
        let mut s = vec![
            ("command".to_string(), self.line.clone()),
            ("server".to_string(), self.name.clone()),
            ("version".to_string(), self.version.clone()),
            ("tool".to_string(), self.tool.clone()),
            ("query_arg".to_string(), self.query_arg.clone()),
        ];
        if let Some(l) = &self.limit_arg {
            s.push(("limit_arg".to_string(), l.clone()));
        }
        s
    }
}

impl Drop for McpScorer {
    fn drop(&mut self) {
        let inner = self
            .inner
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some((runtime, session)) = inner {
            runtime.block_on(session.close());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_search_tool_and_its_arguments_are_found_by_the_stated_rules() {
        let tools = vec![
            json!({"name": "call_tool", "inputSchema": {"type": "object"}}),
            json!({"name": "find_tools", "inputSchema": {"type": "object", "properties": {
                "top_k": {"type": "integer"}, "intent": {"type": "string"}}, "required": ["intent"]}}),
        ];
        let (t, q, l) = choose(&tools, &McpOptions::default()).unwrap();
        assert_eq!(
            (t.as_str(), q.as_str(), l.as_deref()),
            ("find_tools", "intent", Some("top_k"))
        );
        let two = vec![
            json!({"name": "search_tools", "inputSchema": {}}),
            json!({"name": "find_tool", "inputSchema": {}}),
        ];
        let e = choose(&two, &McpOptions::default()).unwrap_err();
        assert!(e.contains("several") && e.contains("--mcp-tool"), "{e}");
        let opts = McpOptions {
            tool: Some("find_tool".into()),
            query_arg: Some("q".into()),
            ..McpOptions::default()
        };
        assert_eq!(
            choose(&two, &opts).unwrap(),
            ("find_tool".into(), "q".into(), None)
        );
        let none = vec![json!({"name": "echo", "inputSchema": {}})];
        assert!(
            choose(&none, &McpOptions::default())
                .unwrap_err()
                .contains("echo")
        );
    }

    #[test]
    fn answers_are_read_as_lists_or_lines() {
        let v = json!({"tools": [{"name": "a", "score": 1.0}, "b"]});
        assert_eq!(list_of(&v).unwrap().len(), 2);
        assert_eq!(list_of(&json!({"whatever": [1]})).unwrap().len(), 1);
        assert!(list_of(&json!({"a": 1})).is_err());
        assert_eq!(
            first_word("1. `mcp__gh__create_issue`: Create an issue"),
            Some("mcp__gh__create_issue")
        );
        assert_eq!(first_word("- read_file (filesystem)"), Some("read_file"));
        assert_eq!(first_word("   "), None);
        assert_eq!(
            item_fields(&json!({"tool_name": "x", "server": "s", "relevance": 0.5})).unwrap(),
            ("x".to_string(), Some("s".to_string()), Some(0.5))
        );
        assert!(item_fields(&json!({"foo": 1})).is_err());
    }
}
