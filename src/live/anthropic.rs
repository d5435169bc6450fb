//! Anthropic Messages (`POST {base}/v1/messages`).
//!
//! Provider-side search: the deferred tools carry `defer_loading: true` beside the tool
//! search tool (`tool_search_tool_bm25_20251119`, or the regex one when the scorer is regex),
//! sent with the `advanced-tool-use-2025-11-20` beta header. The answer's `server_tool_use`
//! blocks say what the model searched and the `tool_search_tool_result` blocks which tools
//! were loaded (`tool_references`). The assistant's content goes back as it came.

use serde_json::{Map, Value, json};

use super::conversation::{
    Message, ProviderSearch, ProviderSearchCall, Reply, Request, ToolCall, Usage, check_usage,
    str_of, tokens_at,
};
use crate::counter::ToolChoice;

pub const PATH: &str = "/v1/messages";
pub const VERSION: &str = "2023-06-01";
pub const TOOL_SEARCH_BETA: &str = "advanced-tool-use-2025-11-20";

/// The token counts an answer's `usage` may hold.
pub const USAGE_FIELDS: &[&[&str]] = &[
    &["usage", "input_tokens"],
    &["usage", "cache_creation_input_tokens"],
    &["usage", "cache_read_input_tokens"],
    &["usage", "output_tokens"],
];

/// The tool search tool's definition.
fn search_tool(kind: ProviderSearch) -> Option<Value> {
    match kind {
        ProviderSearch::AnthropicBm25 => {
            Some(json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}))
        }
        ProviderSearch::AnthropicRegex => Some(
            json!({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"}),
        ),
        ProviderSearch::OpenaiToolSearch => None,
    }
}

fn assistant_blocks(text: &str, calls: &[crate::live::conversation::ToolCall]) -> Vec<Value> {
    let mut out = Vec::new();
    if !text.is_empty() {
        out.push(json!({"type": "text", "text": text}));
    }
    for c in calls {
        let input: Value = serde_json::from_str(&c.arguments)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        out.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}));
    }
    out
}

/// The request body. Consecutive user-side contents (tool results, then the next user text)
/// share one user message, as the API requires roles to alternate.
pub fn body(r: &Request<'_>) -> Value {
    let mut messages: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |role: &str, blocks: Vec<Value>| match messages.last_mut() {
        Some((last, content)) if last == role => content.extend(blocks),
        _ => messages.push((role.to_string(), blocks)),
    };
    for m in r.messages {
        match m {
            Message::User(text) => push("user", vec![json!({"type": "text", "text": text})]),
            Message::Assistant {
                native: Some(Value::Array(blocks)),
                ..
            } => push("assistant", blocks.clone()),
            Message::Assistant { text, calls, .. } => {
                push("assistant", assistant_blocks(text, calls));
            }
            Message::ToolResult {
                call_id,
                content,
                is_error,
                ..
            } => {
                let mut b =
                    json!({"type": "tool_result", "tool_use_id": call_id, "content": content});
                if *is_error {
                    b["is_error"] = true.into();
                }
                push("user", vec![b]);
            }
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut b = Map::new();
    b.insert("model".into(), r.model.into());
    b.insert("max_tokens".into(), r.max_tokens.into());
    b.insert("system".into(), r.system.into());
    b.insert("messages".into(), messages.into());
    let mut tools: Vec<Value> = r
        .tools
        .iter()
        .map(|t| {
            let mut d = json!({"name": t.name, "description": t.description,
                               "input_schema": t.parameters});
            if t.defer_loading {
                d["defer_loading"] = true.into();
            }
            d
        })
        .collect();
    if let Some(s) = r.provider_search.and_then(search_tool) {
        tools.push(s);
    }
    if !tools.is_empty() {
        b.insert("tools".into(), tools.into());
        b.insert(
            "tool_choice".into(),
            json!({"type": match r.tool_choice {
                ToolChoice::Auto => "auto",
                ToolChoice::None => "none",
                ToolChoice::Any | ToolChoice::Tool => "any",
            }}),
        );
    }
    if let Some(t) = r.temperature {
        b.insert("temperature".into(), t.into());
    }
    Value::Object(b)
}

/// Reads an answer: text, `tool_use` calls, tool searches and their references, `usage`
/// (billed input = `input_tokens` + cache writes + cache reads).
pub fn parse(v: &Value) -> Result<Reply, String> {
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or("no content array in the answer")?;
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut searches: Vec<(String, ProviderSearchCall)> = Vec::new();
    for block in content {
        match str_of(block, "type") {
            "text" => text.push_str(str_of(block, "text")),
            "tool_use" => calls.push(ToolCall {
                id: str_of(block, "id").to_string(),
                name: str_of(block, "name").to_string(),
                arguments: block
                    .get("input")
                    .map_or_else(String::new, Value::to_string),
            }),
            "server_tool_use" if str_of(block, "name").starts_with("tool_search_tool") => {
                let input = block.get("input").unwrap_or(&Value::Null);
                let query = match input.get("query").or_else(|| input.get("pattern")) {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => input.to_string(),
                };
                searches.push((
                    str_of(block, "id").to_string(),
                    ProviderSearchCall {
                        query,
                        loaded: Vec::new(),
                    },
                ));
            }
            "tool_search_tool_result" => {
                let refs = block
                    .get("content")
                    .and_then(|c| c.get("tool_references"))
                    .and_then(Value::as_array);
                let names: Vec<String> = refs
                    .into_iter()
                    .flatten()
                    .map(|r| str_of(r, "tool_name").to_string())
                    .filter(|n| !n.is_empty())
                    .collect();
                let id = str_of(block, "tool_use_id");
                match searches.iter_mut().find(|(sid, _)| sid == id) {
                    Some((_, s)) => s.loaded = names,
                    None => searches.push((
                        id.to_string(),
                        ProviderSearchCall {
                            query: String::new(),
                            loaded: names,
                        },
                    )),
                }
            }
            _ => {}
        }
    }
    check_usage(v, USAGE_FIELDS).map_err(|(_, why)| why)?;
    let writes = tokens_at(v, USAGE_FIELDS[1])?.unwrap_or(0);
    let reads = tokens_at(v, USAGE_FIELDS[2])?;
    // Each part is at most MAX_USAGE_TOKENS, so the sum cannot overflow.
    let input = tokens_at(v, USAGE_FIELDS[0])?.map(|n| n + writes + reads.unwrap_or(0));
    Ok(Reply {
        text,
        calls,
        native: Some(Value::Array(content.clone())),
        usage: Usage {
            input_tokens: input,
            output_tokens: tokens_at(v, USAGE_FIELDS[3])?,
            cached_tokens: reads,
        },
        provider_searches: searches.into_iter().map(|(_, s)| s).collect(),
        stop: v
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        timings: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::conversation::FunctionDef;

    #[test]
    fn tool_results_and_the_next_user_text_share_one_user_message() {
        let messages = [
            Message::User("a".into()),
            Message::Assistant {
                text: String::new(),
                calls: vec![ToolCall {
                    id: "t1".into(),
                    name: "f".into(),
                    arguments: "not json".into(),
                }],
                native: None,
            },
            Message::ToolResult {
                call_id: "t1".into(),
                name: "f".into(),
                content: "bad".into(),
                is_error: true,
            },
            Message::User("b".into()),
        ];
        let tools = [FunctionDef {
            name: "f".into(),
            description: "F.".into(),
            parameters: json!({"type": "object"}),
            defer_loading: true,
        }];
        let r = Request {
            model: "claude-x",
            system: "s",
            messages: &messages,
            tools: &tools,
            provider_search: Some(ProviderSearch::AnthropicBm25),
            tool_choice: ToolChoice::Auto,
            max_tokens: 10,
            temperature: None,
            seed: Some(1),
        };
        let b = body(&r);
        let msgs = b["messages"].as_array().unwrap();
        assert_eq!(msgs.len(), 3);
        assert_eq!(msgs[1]["content"][0]["input"], json!({}));
        assert_eq!(msgs[2]["content"][0]["is_error"], true);
        assert_eq!(msgs[2]["content"][1]["text"], "b");
        assert_eq!(b["tools"][0]["defer_loading"], true);
        assert_eq!(b["tools"][1]["name"], "tool_search_tool_bm25");
        assert_eq!(b["tool_choice"], json!({"type": "auto"}));
        assert!(b.get("seed").is_none());
    }

    #[test]
    fn searches_references_calls_and_billed_input_are_read() {
        let v = json!({"stop_reason": "tool_use", "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": "weather"}},
            {"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_1", "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": "get_weather"}]}},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}],
            "usage": {"input_tokens": 100, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 5, "output_tokens": 7}});
        let r = parse(&v).unwrap();
        assert_eq!(r.provider_searches[0].query, "weather");
        assert_eq!(r.provider_searches[0].loaded, ["get_weather"]);
        assert_eq!(r.calls[0].arguments, r#"{"city":"Oslo"}"#);
        assert_eq!(r.usage.input_tokens, Some(125));
        assert_eq!(r.usage.cached_tokens, Some(5));
    }

    #[test]
    fn usage_past_range_is_refused_not_added() {
        for (field, value) in [
            ("cache_creation_input_tokens", json!(u64::MAX)),
            ("input_tokens", json!(-1)),
            ("cache_read_input_tokens", json!(2.5)),
            ("output_tokens", json!("7")),
        ] {
            let mut v = json!({"content": [], "usage": {"input_tokens": 100,
                "cache_creation_input_tokens": 20, "cache_read_input_tokens": 5}});
            v["usage"][field] = value.clone();
            let e = parse(&v).unwrap_err();
            assert!(
                e.starts_with(&format!("usage.{field} is {value}, not a token count")),
                "{e}"
            );
        }
        // Null or absent is "not reported".
        let r = parse(&json!({"content": [], "usage": {"input_tokens": null}})).unwrap();
        assert_eq!(r.usage.input_tokens, None);
    }
}
