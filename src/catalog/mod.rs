//! Tools and catalogs. A `Catalog` is the validated union of every catalog file given on
//! the command line or in a scenario: ids are unique, names present, schemas are objects.
//! Later stages (tokenizing, search, simulation) index tools by their position here.

pub mod builtin;
mod hosted;
mod load;
mod native_writer;
pub mod versions;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde_json::Value;

pub use hosted::{BodyShape, Captured, HostedCost, HostedTool, RequestBody};
pub use load::{CatalogSource, MAX_TOOLS, load_catalog_bytes, load_catalogs, parse_catalog_arg};
pub use native_writer::to_native_json;

/// Where a tool was declared: the file and the path to the tool inside it. The `line:column`
/// is only worked out when an error needs it (`Origin::position`), because locating every tool
/// up front would rescan the file once per tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub path: PathBuf,
    pub at: Vec<crate::document::Seg>,
}

impl Origin {
    /// Re-reads the file to find the tool's `line:column` (error paths only).
    pub fn position(&self) -> Option<crate::error::Position> {
        builtin::read(&self.path)
            .ok()
            .and_then(|d| d.locate(&self.at))
    }
}

/// One tool definition, as the agent would send it.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    /// `Read` for a built-in, `mcp__<server>__<tool>` for an MCP tool.
    pub id: String,
    /// The tool's own name (for MCP tools, without the server prefix).
    pub name: String,
    /// The MCP server, `None` for a built-in.
    pub server: Option<String>,
    pub description: String,
    /// The JSON Schema of the input, an object, keys in source order.
    pub input_schema: Value,
    /// The tool's own choice to be deferred or not: the native `should_defer`, or an
    /// Anthropic/OpenAI tools array's `defer_loading`. Wins over its server's and the client's.
    pub should_defer: Option<bool>,
    /// The tool's own `always_load` (native) or MCP `_meta: {"anthropic/alwaysLoad": true}`:
    /// never deferred. A server-wide `always_load` is the server's (`ServerInfo`).
    pub always_load: bool,
    /// Extra words the keyword scorer matches (Claude Code's `searchHint`); a tool without
    /// one takes its server's.
    pub search_hint: Option<String>,
    /// Tools that must be loaded together with this one (ids).
    pub depends_on: Vec<String>,
    pub origin: Option<Origin>,
}

impl Tool {
    pub fn is_mcp(&self) -> bool {
        self.server.is_some()
    }
}

/// A server's own description, used when the deferred list shows servers rather than tools.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServerInfo {
    pub name: String,
    pub description: Option<String>,
    /// The server's own deferral flags (native form), below a tool's own and above the
    /// client's default.
    pub flags: ServerFlags,
}

/// A server's deferral settings as the native catalog writes them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ServerFlags {
    pub should_defer: Option<bool>,
    pub always_load: bool,
    pub search_hint: Option<String>,
}

impl ServerFlags {
    /// The server's decision: `Some(false)` to keep its tools loaded, `Some(true)` to defer
    /// them, `None` to leave it to the client's default.
    pub fn defer(&self) -> Option<bool> {
        if self.always_load {
            Some(false)
        } else {
            self.should_defer
        }
    }
}

impl Tool {
    /// The tool's own decision, `None` when it has none (its server's then applies).
    pub fn defer(&self) -> Option<bool> {
        if self.always_load {
            Some(false)
        } else {
            self.should_defer
        }
    }
}

/// A validated set of tools with unique ids, in load order.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    tools: Vec<Tool>,
    by_id: HashMap<String, usize>,
    servers: Vec<ServerInfo>,
    /// Files that were request bodies or held hosted tools, in load order.
    captured: Vec<Captured>,
}

impl Catalog {
    /// Builds a catalog from tools already known to have unique ids (the loaders check and
    /// report duplicates with positions; this asserts the invariant for programmatic use).
    pub fn from_tools(tools: Vec<Tool>) -> Result<Catalog, String> {
        let mut by_id = HashMap::with_capacity(tools.len());
        let mut servers: Vec<ServerInfo> = Vec::new();
        // A set beside the ordered list keeps this linear when every tool has its own server.
        let mut seen_servers: HashSet<&str> = HashSet::new();
        for (i, t) in tools.iter().enumerate() {
            if by_id.insert(t.id.clone(), i).is_some() {
                return Err(format!("duplicate tool id {:?}", t.id));
            }
            if let Some(s) = &t.server
                && seen_servers.insert(s.as_str())
            {
                servers.push(ServerInfo {
                    name: s.clone(),
                    ..ServerInfo::default()
                });
            }
        }
        Ok(Catalog {
            tools,
            by_id,
            servers,
            captured: Vec::new(),
        })
    }

    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn get(&self, index: usize) -> &Tool {
        &self.tools[index]
    }

    /// Index of the tool with exactly this id.
    pub fn index_of(&self, id: &str) -> Option<usize> {
        self.by_id.get(id).copied()
    }

    /// The catalog's own search tool, when it defines one: a tool the deferred agent sends,
    /// never a search result (as in Claude Code).
    pub fn search_tool(&self) -> Option<usize> {
        self.index_of(SEARCH_TOOL)
    }

    /// Which tools a search may return: every tool but the search tool. `None` when that is
    /// every tool, so a search over the whole catalog needs no mask.
    pub fn search_candidates(&self) -> Option<Vec<bool>> {
        let search_tool = self.search_tool()?;
        Some((0..self.len()).map(|i| i != search_tool).collect())
    }

    /// MCP servers in the order they first appear.
    pub fn servers(&self) -> &[ServerInfo] {
        &self.servers
    }

    /// The files that were captured request bodies or held hosted tools (empty for every
    /// other catalog form).
    pub fn captured(&self) -> &[Captured] {
        &self.captured
    }

    /// Every hosted tool of every file, in load order.
    pub fn hosted(&self) -> impl Iterator<Item = &HostedTool> {
        self.captured.iter().flat_map(|c| c.hosted.iter())
    }

    /// One stderr line per captured file: what was ignored, what was set apart.
    pub fn notes(&self) -> Vec<String> {
        self.captured.iter().filter_map(Captured::note).collect()
    }

    /// Sets the description and flags of every listed server that the catalog has.
    pub(crate) fn set_server_info(&mut self, info: &HashMap<String, ServerInfo>) {
        for s in &mut self.servers {
            if let Some(i) = info.get(&s.name) {
                s.description.clone_from(&i.description);
                s.flags = i.flags.clone();
            }
        }
    }
}

/// The id of the search tool. One definition for every command: `count` lists it and names
/// it, `eval` and `simulate` never rank it, `simulate` sends it only in deferred mode.
pub const SEARCH_TOOL: &str = "ToolSearch";

/// Why `server` cannot name an MCP server, if it cannot. Ids are `mcp__<server>__<tool>`
/// and are read back at the first `__` after `mcp__` (search words, session logs), so a
/// server name holding `__` makes them ambiguous: `mcp__a__b__run` would be both server
/// `a__b`'s tool `run` and server `a`'s tool `b__run`. (A tool name may hold `__`: the
/// server's part ends at the first one.)
pub fn server_name_problem(server: &str) -> Option<String> {
    let (first, rest) = server.split_once("__")?;
    Some(format!(
        "server name {server:?} contains \"__\": tool ids are mcp__<server>__<tool>, so \
         mcp__{server}__<tool> would also read as server {first:?}'s tool \"{rest}__<tool>\"; \
         name the server without \"__\""
    ))
}

/// Builds an MCP tool id. Server and tool names keep their spelling.
pub fn mcp_id(server: &str, tool: &str) -> String {
    format!("mcp__{server}__{tool}")
}
