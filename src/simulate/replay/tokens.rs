//! What each part a replay adds to a request costs: user turns, calls, search calls, errors, search framing, and what OpenAI shows of deferred tools (surfaces) and carries for a hosted search.

use super::*;
use crate::counter::harmony;

/// A searchable surface OpenAI shows: a name and its description.
pub(super) type Surface = (String, String);

impl Run<'_> {
    /// A user message with the counter's framing (`tokens:` gives its content).
    pub(super) fn user_tokens(&self, t: &Turn) -> usize {
        match t.tokens {
            Some(n) => self.prep.counter.message_from_count(n),
            None => self.prep.message_tokens(&t.user),
        }
    }

    pub(super) fn call_tokens(&self, tool: usize, call: Option<&Call>) -> usize {
        if let Some(c) = call {
            if let Some(n) = c.call_tokens {
                return n;
            }
            if let Some(input) = &c.input {
                let mut s = String::from("{\"name\":");
                // A JSON string literal, as serde_json writes it (Display cannot fail).
                s.push_str(
                    &serde_json::Value::from(self.prep.catalog.get(tool).id.as_str()).to_string(),
                );
                s.push_str(",\"input\":");
                crate::tokenize::write_compact(&mut s, input);
                s.push('}');
                return self.count(&s);
            }
        }
        self.sc.sizes.call.unwrap_or(self.profile().call_tokens)
    }

    pub(super) fn search_call_tokens(&self, query: &str) -> usize {
        if let Some(n) = self.sc.sizes.search_call {
            return n;
        }
        let text = format!(
            "{{\"name\":\"{}\",\"input\":{{\"query\":{},\"max_results\":{}}}}}",
            self.prep.search_tool_name,
            serde_json::Value::from(query),
            self.sc.deferred.max_results
        );
        self.count(&text)
    }

    pub(super) fn error_tokens(&self, tool: usize) -> usize {
        self.sc.sizes.error_result.unwrap_or_else(|| {
            self.count(&format!(
                "<tool_use_error>Error: No such tool available: {}</tool_use_error>",
                self.prep.catalog.get(tool).id
            ))
        })
    }

    /// Framing of a search result: a base plus a `tool_reference` per returned tool.
    pub(super) fn search_framing(&self, hits: &[usize]) -> usize {
        let base = self.sc.sizes.search_result_base.unwrap_or_else(|| {
            self.count("{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_01\",\"content\":[]}")
        });
        let per: usize = match self.sc.sizes.search_result_per_tool {
            Some(n) => n * hits.len(),
            None => hits
                .iter()
                .map(|&i| {
                    self.count(&format!(
                        "{{\"type\":\"tool_reference\",\"tool_name\":\"{}\"}},",
                        self.prep.catalog.get(i).id
                    ))
                })
                .sum(),
        };
        base + per
    }

    /// Whether the deferred tools are shown by their surfaces (name and description): flat
    /// `stubs` under any counter; under OpenAI's `tool_search` also the namespaces (`none`,
    /// `servers`).
    pub(super) fn shows_surfaces(&self) -> bool {
        match self.sc.deferred.listing {
            Listing::Stubs => true,
            Listing::None | Listing::Servers => self.prep.openai_search,
            Listing::Names | Listing::Descriptions => false,
        }
    }

    /// The namespace a deferred tool sits in behind OpenAI's `tool_search`, as (name,
    /// description): its MCP server, else the scenario's `namespace`; `None` for a flat
    /// function (flat `stubs`, or no namespace), which is addressed by its own name.
    fn namespace_of(&self, tool: usize) -> Option<Surface> {
        if self.sc.deferred.listing == Listing::Stubs {
            return None;
        }
        let t = self.prep.catalog.get(tool);
        match &t.server {
            Some(server) => {
                let description = self
                    .prep
                    .catalog
                    .servers()
                    .iter()
                    .find(|i| &i.name == server)
                    .and_then(|i| i.description.clone())
                    .unwrap_or_default();
                Some((server.clone(), description))
            }
            None => self
                .sc
                .deferred
                .namespace
                .as_ref()
                .map(|n| (n.name.clone(), n.description.clone())),
        }
    }

    /// The surfaces (name, description) shown for `tools`, each once, in order of appearance.
    pub(super) fn surfaces(&self, tools: &[usize]) -> Vec<Surface> {
        let mut out: Vec<Surface> = Vec::new();
        for &i in tools {
            let s = self.namespace_of(i).unwrap_or_else(|| {
                let t = self.prep.catalog.get(i);
                (t.id.clone(), t.description.clone())
            });
            if !out.contains(&s) {
                out.push(s);
            }
        }
        out
    }

    pub(super) fn surface_tokens(&self, surfaces: &[Surface]) -> usize {
        surfaces
            .iter()
            .map(|(name, description)| self.prep.counter.surface(name, description))
            .sum()
    }

    /// OpenAI's hosted `tool_search` round as the response that makes it carries it (OpenAI
    /// API docs, Tool search, "Hosted tool search response"): the model's call, whose argument
    /// is `{"paths": [...]}` (`namespace/function`, or a flat function's name), and the
    /// output loading the definitions, each namespace's section with its functions in full
    /// (flat functions under `functions`); nothing of them when they join the tools list.
    pub(super) fn hosted_round(&self, hits: &[usize], loaded: &[usize]) -> usize {
        let catalog = &self.prep.catalog;
        let paths: Vec<String> = hits
            .iter()
            .map(|&i| {
                let t = catalog.get(i);
                match self.namespace_of(i) {
                    Some((ns, _)) if t.server.is_some() => format!("{ns}/{}", t.name),
                    Some((ns, _)) => format!("{ns}/{}", t.id),
                    None => t.id.clone(),
                }
            })
            .collect();
        let args = serde_json::json!({ "paths": paths }).to_string();
        let mut groups: Vec<(Option<Surface>, Vec<usize>)> = Vec::new();
        for &i in loaded {
            let ns = self.namespace_of(i);
            match groups.iter_mut().find(|(g, _)| *g == ns) {
                Some((_, members)) => members.push(i),
                None => groups.push((ns, vec![i])),
            }
        }
        let in_output = self.reveal() == Reveal::Append;
        let body: Vec<String> = groups
            .iter()
            .map(|(ns, members)| {
                let tools = members
                    .iter()
                    .filter(|_| in_output)
                    .map(|&i| catalog.get(i));
                match ns {
                    Some((name, d)) => harmony::loaded_block(
                        name,
                        Some(d.as_str()).filter(|d| !d.is_empty()),
                        tools,
                    ),
                    None => harmony::loaded_block("functions", None, tools),
                }
            })
            .collect();
        let counter = self.prep.counter;
        counter.tool_call("tool_search", &args)
            + counter.tool_output("tool_search", &body.join("\n\n"))
    }
}
