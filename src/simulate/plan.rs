//! Per-tool facts derived from a scenario's deferred settings, and the conversation checked against its catalog.

use super::*;

/// Per-tool facts derived from the scenario's deferred settings.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub deferrable: Vec<bool>,
    pub deps: Vec<Vec<usize>>,
    pub server_of: Vec<Option<usize>>,
    pub servers: Vec<String>,
    pub initially_connected: Vec<bool>,
    /// The catalog's own `ToolSearch`, when it has one.
    pub search_tool: Option<usize>,
}

/// The same file under the same server twice would only surface as "duplicate tool id" inside
/// the catalog; the mistake is the scenario's second entry, so point there.
pub(super) fn check_listed_once(scenario: &Scenario) -> Result<()> {
    let key = |c: &scenario::CatalogEntry| {
        (
            std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone()),
            c.server.clone(),
        )
    };
    let keys: Vec<_> = scenario.catalogs.iter().map(key).collect();
    for (i, k) in keys.iter().enumerate() {
        if let Some(first) = keys[..i].iter().position(|f| f == k) {
            let at = scenario.catalogs[first]
                .at
                .map_or(String::new(), |p| format!(" at line {}", p.line));
            return Err(Error::input(
                &scenario.path,
                scenario.catalogs[i].at,
                format!(
                    "catalogs[{i}]: {} is listed again (already catalogs[{first}]{at}); list each \
                     catalog once, or give the second a different `server:`",
                    scenario.catalogs[i].path.display()
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn unknown(scenario: &Scenario, r: &scenario::ToolRef, what: &str) -> Error {
    Error::input(
        &scenario.path,
        r.at,
        format!(
            "{what} {:?}: no catalog of this scenario defines that tool",
            r.id
        ),
    )
}

pub(super) fn lookup(
    scenario: &Scenario,
    catalog: &Catalog,
    r: &scenario::ToolRef,
    what: &str,
) -> Result<usize> {
    catalog
        .index_of(&r.id)
        .ok_or_else(|| unknown(scenario, r, what))
}

pub(super) fn plan(scenario: &Scenario, catalog: &Catalog) -> Result<Plan> {
    let servers: Vec<String> = catalog.servers().iter().map(|s| s.name.clone()).collect();
    for s in &scenario.deferred.always_load_servers {
        if !servers.contains(&s.id) {
            return Err(Error::input(
                &scenario.path,
                s.at,
                format!(
                    "always_load_servers names server {:?}, which no catalog has (servers: {})",
                    s.id,
                    servers.join(", ")
                ),
            ));
        }
    }
    let server_of: Vec<Option<usize>> = catalog
        .tools()
        .iter()
        .map(|t| {
            t.server
                .as_ref()
                .map(|s| servers.iter().position(|x| x == s).expect("listed"))
        })
        .collect();
    // Servers whose catalog entry says `connected: false` start disconnected.
    let mut initially_connected = vec![true; servers.len()];
    for entry in scenario.catalogs.iter().filter(|c| !c.connected) {
        for (i, t) in catalog.tools().iter().enumerate() {
            if t.origin.as_ref().is_some_and(|o| o.path == entry.path)
                && let Some(s) = server_of[i]
            {
                initially_connected[s] = false;
            }
        }
    }
    Ok(Plan {
        deferrable: deferrable(scenario, catalog, &server_of)?,
        deps: dependencies(scenario, catalog)?,
        server_of,
        servers,
        initially_connected,
        search_tool: catalog.search_tool(),
    })
}

/// Which tools the deferred mode may defer. The first level that decides wins:
/// 1. the search tool is never deferred;
/// 2. the tool: the scenario's `always_load` / `defer_builtins` naming it, then the catalog
///    tool's own `always_load` (MCP `_meta: {"anthropic/alwaysLoad": true}`) or
///    `should_defer` (`defer_loading` in a tools array);
/// 3. its server: the scenario's `always_load_servers`, then the catalog server's
///    `always_load` or `should_defer`;
/// 4. the client's default: MCP tools per `defer_mcp`, built-ins per `defer_builtins: ['*']`.
pub(super) fn deferrable(
    scenario: &Scenario,
    catalog: &Catalog,
    server_of: &[Option<usize>],
) -> Result<Vec<bool>> {
    let n = catalog.len();
    let d = &scenario.deferred;
    let mut tool_level: Vec<Option<bool>> = catalog.tools().iter().map(Tool::defer).collect();
    for r in &d.defer_builtins {
        let i = lookup(scenario, catalog, r, "defer_builtins names unknown tool")?;
        if catalog.get(i).is_mcp() {
            return Err(Error::input(
                &scenario.path,
                r.at,
                format!(
                    "defer_builtins names {:?}, an MCP tool (MCP tools follow defer_mcp)",
                    r.id
                ),
            ));
        }
        tool_level[i] = Some(true);
    }
    for r in &d.always_load {
        tool_level[lookup(scenario, catalog, r, "always_load names unknown tool")?] = Some(false);
    }
    let server_level: Vec<Option<bool>> = catalog
        .servers()
        .iter()
        .map(|s| {
            if d.always_load_servers.iter().any(|r| r.id == s.name) {
                Some(false)
            } else {
                s.flags.defer()
            }
        })
        .collect();
    let search_tool = catalog.search_tool();
    Ok((0..n)
        .map(|i| {
            if Some(i) == search_tool {
                return false;
            }
            let server = server_of[i].and_then(|s| server_level[s]);
            tool_level[i].or(server).unwrap_or_else(|| {
                if catalog.get(i).is_mcp() {
                    d.defer_mcp
                } else {
                    d.defer_all_builtins
                }
            })
        })
        .collect())
}

/// Tools loaded together with each tool: the catalog's `depends_on`, then the scenario's.
pub(super) fn dependencies(scenario: &Scenario, catalog: &Catalog) -> Result<Vec<Vec<usize>>> {
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); catalog.len()];
    for (i, t) in catalog.tools().iter().enumerate() {
        for dep in &t.depends_on {
            // The catalog loader keeps ids as written; a dangling one is a catalog mistake.
            let j = catalog.index_of(dep).ok_or_else(|| {
                let message = format!("{} depends_on {dep:?}, which no catalog defines", t.id);
                match &t.origin {
                    Some(o) => Error::input(&o.path, o.position(), message),
                    None => Error::usage(message),
                }
            })?;
            deps[i].push(j);
        }
    }
    let what = "depends_on names unknown tool";
    for (tool, ds) in &scenario.deferred.depends_on {
        let i = lookup(scenario, catalog, tool, what)?;
        for dep in ds {
            let j = lookup(scenario, catalog, dep, what)?;
            if !deps[i].contains(&j) {
                deps[i].push(j);
            }
        }
    }
    Ok(deps)
}

/// Every tool a conversation names exists, and every event names a known server.
pub(super) fn validate_conversation(
    scenario: &Scenario,
    catalog: &Catalog,
    plan: &Plan,
) -> Result<()> {
    fn walk(
        scenario: &Scenario,
        catalog: &Catalog,
        plan: &Plan,
        items: &[scenario::Item],
    ) -> Result<()> {
        for item in items {
            match item {
                scenario::Item::Turn(t) => {
                    for c in &t.calls {
                        validate_call(scenario, catalog, c)?;
                        if let Some(s) = &c.subagent {
                            validate_subagent(scenario, catalog, plan, s)?;
                        }
                    }
                    if let Some(s) = &t.subagent {
                        validate_subagent(scenario, catalog, plan, s)?;
                    }
                }
                scenario::Item::Event(
                    scenario::Event::Connect { server: s, at }
                    | scenario::Event::Disconnect { server: s, at },
                ) => {
                    if !plan.servers.contains(s) {
                        return Err(Error::input(
                            &scenario.path,
                            *at,
                            format!(
                                "event names server {s:?}, which no catalog has (servers: {})",
                                plan.servers.join(", ")
                            ),
                        ));
                    }
                }
                scenario::Item::Event(_) => {}
            }
        }
        Ok(())
    }
    fn validate_subagent(
        scenario: &Scenario,
        catalog: &Catalog,
        plan: &Plan,
        s: &scenario::Subagent,
    ) -> Result<()> {
        for r in s.tools.iter().flatten() {
            if catalog.index_of(&r.id).is_none() {
                return Err(unknown(scenario, r, "subagent tool"));
            }
        }
        walk(scenario, catalog, plan, &s.conversation)
    }
    walk(scenario, catalog, plan, &scenario.conversation)
}

/// A call names a known tool; the search tool only as a recorded search (`loads:`).
pub(super) fn validate_call(
    scenario: &Scenario,
    catalog: &Catalog,
    c: &scenario::Call,
) -> Result<()> {
    if c.tool.id == SEARCH_TOOL {
        let Some(loads) = &c.loads else {
            return Err(Error::input(
                &scenario.path,
                c.tool.at,
                format!(
                    "{SEARCH_TOOL} is the search tool: the simulator makes its calls; name the tool the turn needs (or record a real search with `loads:`)"
                ),
            ));
        };
        for r in loads {
            if catalog.index_of(&r.id).is_none() {
                return Err(unknown(scenario, r, "loads names unknown tool"));
            }
        }
        return Ok(());
    }
    if catalog.index_of(&c.tool.id).is_none() {
        return Err(unknown(scenario, &c.tool, "call to tool"));
    }
    if c.loads.is_some() {
        return Err(Error::input(
            &scenario.path,
            c.tool.at,
            format!("`loads:` records a search: it belongs on a call of {SEARCH_TOOL}"),
        ));
    }
    Ok(())
}
