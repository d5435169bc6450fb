//! A logged tool name → the catalog's tool. Agents rename their built-in tools between
//! versions; a log keeps the name of the version that wrote it, the shipped catalogs the
//! current one, so a call is looked up by its name, then by the names it was renamed to.
//!
//! Claude Code (the names its tools answer to as aliases):
//!
//! | logged name | current name | written by |
//! |---|---|---|
//! | `KillBash` | `KillShell` | 1.0.x (2.0 renamed it) |
//! | `KillShell` | `TaskStop` | 2.0 to 2.1 (later an alias of `TaskStop`) |
//! | `BashOutput`, `BashOutputTool`, `AgentOutputTool` | `TaskOutput` | 1.0 to 2.0 |
//! | `ListMcpResourcesTool`, `ReadMcpResourceTool` | `ListMcpResources`, `ReadMcpResource` | the names it logs |
//! | `Task` ↔ `Agent` | either | 1.0 to 2.0 `Task`, 2.1 `Agent` |
//!
//! A name the catalog has is never renamed: the shipped built-ins hold `BashOutput` and
//! `KillShell` themselves, so a 1.0 log pairs `BashOutput` as is and `KillBash` as `KillShell`.
//! Codex names MCP tools `mcp__server__tool` (or, older, `server__tool`, looked up as
//! `mcp__server__tool`); a call in a namespace that is not an MCP server's is also looked up
//! by its bare name (`multi_agent_v1` + `spawn_agent` → `spawn_agent`).

use crate::catalog::Catalog;

/// Logged name → the name it became (followed until the catalog has one).
pub const CLAUDE_ALIASES: &[(&str, &str)] = &[
    ("KillBash", "KillShell"),
    ("KillShell", "TaskStop"),
    ("BashOutputTool", "TaskOutput"),
    ("AgentOutputTool", "TaskOutput"),
    ("BashOutput", "TaskOutput"),
    ("ListMcpResourcesTool", "ListMcpResources"),
    ("ReadMcpResourceTool", "ReadMcpResource"),
    ("Task", "Agent"),
    ("Agent", "Task"),
];

/// The catalog id of a logged call: its name, its renamings, the `mcp__` form of a Codex
/// `server__tool`, then `alt` (a Codex call's bare name).
pub fn resolve(catalog: &Catalog, name: &str, alt: Option<&str>) -> Option<String> {
    let has = |n: &str| catalog.index_of(n).is_some();
    if has(name) {
        return Some(name.to_string());
    }
    let mut current = name;
    for _ in 0..CLAUDE_ALIASES.len() {
        let Some(&(_, next)) = CLAUDE_ALIASES.iter().find(|(from, _)| *from == current) else {
            break;
        };
        if next == name {
            break;
        }
        if has(next) {
            return Some(next.to_string());
        }
        current = next;
    }
    if !name.starts_with("mcp__") {
        let mcp = format!("mcp__{name}");
        if has(&mcp) {
            return Some(mcp);
        }
    }
    alt.filter(|a| has(a)).map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::text::test_support::{builtin, mcp};

    #[test]
    fn renamed_built_ins_are_found_under_their_current_names() {
        let c = Catalog::from_tools(vec![
            builtin("KillShell", "k"),
            builtin("TaskOutput", "o"),
            builtin("Task", "t"),
            mcp("github", "get_me", "m"),
        ])
        .unwrap();
        assert_eq!(resolve(&c, "KillBash", None).as_deref(), Some("KillShell"));
        assert_eq!(resolve(&c, "KillShell", None).as_deref(), Some("KillShell"));
        assert_eq!(
            resolve(&c, "BashOutput", None).as_deref(),
            Some("TaskOutput")
        );
        assert_eq!(resolve(&c, "Agent", None).as_deref(), Some("Task"));
        assert_eq!(
            resolve(&c, "github__get_me", None).as_deref(),
            Some("mcp__github__get_me")
        );
        assert_eq!(resolve(&c, "ns__x", Some("Task")).as_deref(), Some("Task"));
        assert_eq!(resolve(&c, "Nope", None), None);
        // Without KillShell, a 1.0 KillBash follows the chain to TaskStop.
        let newer = Catalog::from_tools(vec![builtin("TaskStop", "s")]).unwrap();
        assert_eq!(
            resolve(&newer, "KillBash", None).as_deref(),
            Some("TaskStop")
        );
        assert_eq!(
            resolve(&newer, "Task", None),
            None,
            "Task ↔ Agent stops, no loop"
        );
    }
}
