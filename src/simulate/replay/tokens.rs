//! What each part a replay adds to a request costs: user turns, calls, search calls, errors, search framing.

use super::*;

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
}
