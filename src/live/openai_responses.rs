//! OpenAI Responses (`POST {base}/responses`), stateless (`store: false`): the model's output
//! items are sent back as input items, so the conversation is in every request as sent.
//!
//! Provider-side search: the deferred functions carry `defer_loading: true` beside the hosted
//! `{"type": "tool_search"}` tool; the answer's `tool_search_call` items say what the model
//! searched, the `tool_search_output` items which functions the provider loaded.

use serde_json::{Map, Value, json};

use super::conversation::{
    Message, ProviderSearch, ProviderSearchCall, Reply, Request, ToolCall, Usage, check_usage,
    str_of, tokens_at,
};

pub const PATH: &str = "/responses";

/// The token counts an answer's `usage` may hold.
pub const USAGE_FIELDS: &[&[&str]] = &[
    &["usage", "input_tokens"],
    &["usage", "output_tokens"],
    &["usage", "input_tokens_details", "cached_tokens"],
];

fn assistant_items(text: &str, calls: &[ToolCall]) -> Vec<Value> {
    let mut out = Vec::new();
    if !text.is_empty() {
        out.push(json!({"role": "assistant", "content": text}));
    }
    for c in calls {
        out.push(
            json!({"type": "function_call", "call_id": c.id, "name": c.name,
                        "arguments": c.arguments}),
        );
    }
    out
}

/// The request body.
pub fn body(r: &Request<'_>) -> Value {
    let mut input = Vec::new();
    for m in r.messages {
        match m {
            Message::User(text) => input.push(json!({"role": "user", "content": text})),
            Message::Assistant {
                native: Some(Value::Array(items)),
                ..
            } => {
                // Reasoning items come back only with their encrypted content (store: false).
                input.extend(
                    items
                        .iter()
                        .filter(|i| {
                            str_of(i, "type") != "reasoning" || i.get("encrypted_content").is_some()
                        })
                        .cloned(),
                );
            }
            Message::Assistant { text, calls, .. } => input.extend(assistant_items(text, calls)),
            Message::ToolResult {
                call_id, content, ..
            } => input.push(json!({"type": "function_call_output", "call_id": call_id,
                                   "output": content})),
        }
    }
    let mut b = Map::new();
    b.insert("model".into(), r.model.into());
    b.insert("instructions".into(), r.system.into());
    b.insert("input".into(), input.into());
    let mut tools: Vec<Value> = r
        .tools
        .iter()
        .map(|t| {
            let mut f = json!({"type": "function", "name": t.name, "description": t.description,
                               "parameters": t.parameters});
            if t.defer_loading {
                f["defer_loading"] = true.into();
            }
            f
        })
        .collect();
    if r.provider_search == Some(ProviderSearch::OpenaiToolSearch) {
        tools.push(json!({"type": "tool_search"}));
    }
    if !tools.is_empty() {
        b.insert("tools".into(), tools.into());
        b.insert(
            "tool_choice".into(),
            super::conversation::openai_tool_choice(r.tool_choice).into(),
        );
    }
    b.insert("max_output_tokens".into(), r.max_tokens.into());
    b.insert("store".into(), false.into());
    if let Some(t) = r.temperature {
        b.insert("temperature".into(), t.into());
    }
    Value::Object(b)
}

/// Names of the functions in a `tool_search_output`'s `tools` (namespaces opened).
fn loaded_names(tools: &Value, out: &mut Vec<String>) {
    for t in tools.as_array().into_iter().flatten() {
        if str_of(t, "type") == "namespace" {
            loaded_names(t.get("tools").unwrap_or(&Value::Null), out);
        } else {
            let name = str_of(t, "name");
            if !name.is_empty() {
                out.push(name.to_string());
            }
        }
    }
}

/// The query of a `tool_search_call` (its `arguments`, an object or its JSON text).
fn search_query(item: &Value) -> String {
    let args = match item.get("arguments") {
        Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::String(s.clone())),
        Some(v) => v.clone(),
        None => Value::Null,
    };
    match &args {
        Value::String(s) => s.clone(),
        Value::Object(_) => match args.get("query").or_else(|| args.get("paths")) {
            Some(Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => args.to_string(),
        },
        _ => String::new(),
    }
}

/// Reads an answer: output text, function calls, searches and what they loaded, `usage`.
pub fn parse(v: &Value) -> Result<Reply, String> {
    let output = v
        .get("output")
        .and_then(Value::as_array)
        .ok_or("no output array in the answer")?;
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut searches: Vec<ProviderSearchCall> = Vec::new();
    for item in output {
        match str_of(item, "type") {
            "message" => {
                for c in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if str_of(c, "type") == "output_text" {
                        text.push_str(str_of(c, "text"));
                    }
                }
            }
            "function_call" => calls.push(ToolCall {
                id: str_of(item, "call_id").to_string(),
                name: str_of(item, "name").to_string(),
                arguments: match item.get("arguments") {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                },
            }),
            "tool_search_call" => searches.push(ProviderSearchCall {
                query: search_query(item),
                loaded: Vec::new(),
            }),
            "tool_search_output" => {
                let mut names = Vec::new();
                loaded_names(item.get("tools").unwrap_or(&Value::Null), &mut names);
                match searches.iter_mut().rev().find(|s| s.loaded.is_empty()) {
                    Some(s) => s.loaded = names,
                    None => searches.push(ProviderSearchCall {
                        query: String::new(),
                        loaded: names,
                    }),
                }
            }
            _ => {}
        }
    }
    check_usage(v, USAGE_FIELDS).map_err(|(_, why)| why)?;
    Ok(Reply {
        text,
        calls,
        native: Some(Value::Array(output.clone())),
        usage: Usage {
            input_tokens: tokens_at(v, USAGE_FIELDS[0])?,
            output_tokens: tokens_at(v, USAGE_FIELDS[1])?,
            cached_tokens: tokens_at(v, USAGE_FIELDS[2])?,
        },
        provider_searches: searches,
        stop: v.get("status").and_then(Value::as_str).map(str::to_string),
        timings: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::ToolChoice;
    use crate::live::conversation::FunctionDef;

    #[test]
    fn provider_search_sends_deferred_functions_and_the_hosted_tool() {
        let tools = [
            FunctionDef {
                name: "a".into(),
                description: "A.".into(),
                parameters: json!({"type": "object"}),
                defer_loading: false,
            },
            FunctionDef {
                name: "b".into(),
                description: "B.".into(),
                parameters: json!({"type": "object"}),
                defer_loading: true,
            },
        ];
        let messages = [Message::User("hi".into())];
        let r = Request {
            model: "gpt-x",
            system: "sys",
            messages: &messages,
            tools: &tools,
            provider_search: Some(ProviderSearch::OpenaiToolSearch),
            tool_choice: ToolChoice::Auto,
            max_tokens: 100,
            temperature: None,
            seed: Some(1),
        };
        let b = body(&r);
        assert_eq!(b["tools"][1]["defer_loading"], true);
        assert!(b["tools"][0].get("defer_loading").is_none());
        assert_eq!(b["tools"][2], json!({"type": "tool_search"}));
        assert_eq!(b["store"], false);
        assert!(b.get("seed").is_none(), "Responses takes no seed");
    }

    #[test]
    fn searches_calls_and_usage_are_read() {
        let v = json!({"status": "completed", "output": [
            {"type": "tool_search_call", "id": "ts", "execution": "server", "arguments": {"query": "weather"}},
            {"type": "tool_search_output", "id": "tso", "tools": [
                {"type": "function", "name": "get_weather"},
                {"type": "namespace", "name": "ns", "tools": [{"type": "function", "name": "get_rain"}]}]},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"},
            {"type": "message", "content": [{"type": "output_text", "text": "ok"}]}],
            "usage": {"input_tokens": 500, "output_tokens": 20, "input_tokens_details": {"cached_tokens": 128}}});
        let r = parse(&v).unwrap();
        assert_eq!(r.provider_searches.len(), 1);
        assert_eq!(r.provider_searches[0].query, "weather");
        assert_eq!(r.provider_searches[0].loaded, ["get_weather", "get_rain"]);
        assert_eq!(r.calls[0].name, "get_weather");
        assert_eq!(r.text, "ok");
        assert_eq!(r.usage.cached_tokens, Some(128));
        assert_eq!(r.stop.as_deref(), Some("completed"));
    }
}
