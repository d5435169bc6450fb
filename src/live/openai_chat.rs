//! OpenAI Chat Completions (`POST {base}/chat/completions`): also what vLLM, llama.cpp's
//! server, OpenRouter and most local servers speak.
//!
//! Quirks handled for local servers (llama-cpp-python's `chatml-function-calling`): the tools
//! reach the model only through a system message, so one is always sent; `tool_choice` is
//! always sent explicitly (without it that handler drops the tools), as `auto` unless the
//! scenario asks otherwise (`required` makes that server answer HTTP 500); the request never
//! streams (streaming with `auto` returns an empty body); an assistant message's `content` is a
//! string, also beside tool calls (that server refuses `null` with HTTP 500). llama.cpp's own
//! server (`scripts/live-server.sh`) takes all of these, and adds `timings` to its answers,
//! read beside `usage`. Chat Completions has no provider-side tool search.

use serde_json::{Map, Value, json};

use super::conversation::{
    Message, Reply, Request, Timings, ToolCall, Usage, check_usage, ms_at, str_of, tokens_at,
};

pub const PATH: &str = "/chat/completions";

/// The token counts an answer may hold: `usage` (OpenAI's fields; `cached_tokens` also from
/// llama.cpp's server), then llama.cpp's `timings` counts (`cache_n`, `prompt_n`,
/// `predicted_n`; its `tools/server/README.md`, POST `/v1/chat/completions`, "Timings and
/// context usage").
pub const USAGE_FIELDS: &[&[&str]] = &[
    &["usage", "prompt_tokens"],
    &["usage", "completion_tokens"],
    &["usage", "prompt_tokens_details", "cached_tokens"],
    &["timings", "cache_n"],
    &["timings", "prompt_n"],
    &["timings", "predicted_n"],
];

/// llama.cpp's `timings` times, in milliseconds.
pub const TIME_FIELDS: &[&[&str]] = &[&["timings", "prompt_ms"], &["timings", "predicted_ms"]];

/// The first time of [`TIME_FIELDS`] out of range: its path and why.
pub fn check_times(v: &Value) -> Result<(), (Vec<&'static str>, String)> {
    for f in TIME_FIELDS {
        ms_at(v, f).map_err(|why| (f.to_vec(), why))?;
    }
    Ok(())
}

/// llama.cpp's `timings`, when the answer has that object.
fn timings(v: &Value) -> Result<Option<Timings>, String> {
    if v.get("timings").is_none_or(Value::is_null) {
        return Ok(None);
    }
    Ok(Some(Timings {
        cache_n: tokens_at(v, USAGE_FIELDS[3])?,
        prompt_n: tokens_at(v, USAGE_FIELDS[4])?,
        prompt_ms: ms_at(v, TIME_FIELDS[0])?,
        predicted_n: tokens_at(v, USAGE_FIELDS[5])?,
        predicted_ms: ms_at(v, TIME_FIELDS[1])?,
    }))
}

/// The request body.
pub fn body(r: &Request<'_>) -> Value {
    let mut messages = vec![json!({"role": "system", "content": r.system})];
    for m in r.messages {
        messages.push(match m {
            Message::User(text) => json!({"role": "user", "content": text}),
            Message::Assistant { text, calls, .. } => {
                let mut o = Map::new();
                o.insert("role".into(), "assistant".into());
                // A string, also beside calls: llama-cpp-python refuses `null` (HTTP 500).
                o.insert("content".into(), text.as_str().into());
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": c.arguments}})
                        })
                        .collect();
                    o.insert("tool_calls".into(), calls.into());
                }
                Value::Object(o)
            }
            Message::ToolResult {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        });
    }
    let mut b = Map::new();
    b.insert("model".into(), r.model.into());
    b.insert("messages".into(), messages.into());
    if !r.tools.is_empty() {
        let tools: Vec<Value> = r
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        b.insert("tools".into(), tools.into());
        b.insert(
            "tool_choice".into(),
            super::conversation::openai_tool_choice(r.tool_choice).into(),
        );
    }
    b.insert("max_tokens".into(), r.max_tokens.into());
    b.insert("stream".into(), false.into());
    if let Some(t) = r.temperature {
        b.insert("temperature".into(), t.into());
    }
    if let Some(s) = r.seed {
        b.insert("seed".into(), s.into());
    }
    Value::Object(b)
}

/// Reads an answer: the first choice's text and tool calls, and `usage`.
pub fn parse(v: &Value) -> Result<Reply, String> {
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or("no choices[0] in the answer")?;
    let message = choice.get("message").ok_or("no choices[0].message")?;
    let mut calls = Vec::new();
    for (i, c) in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let f = c.get("function").unwrap_or(&Value::Null);
        // Arguments are a JSON string; a server that sends an object is read as its text.
        let arguments = match f.get("arguments") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let id = match str_of(c, "id") {
            "" => format!("call_{i}"),
            id => id.to_string(),
        };
        calls.push(ToolCall {
            id,
            name: str_of(f, "name").to_string(),
            arguments,
        });
    }
    check_usage(v, USAGE_FIELDS).map_err(|(_, why)| why)?;
    let timings = timings(v)?;
    Ok(Reply {
        text: str_of(message, "content").to_string(),
        calls,
        native: None,
        usage: Usage {
            input_tokens: tokens_at(v, USAGE_FIELDS[0])?,
            output_tokens: tokens_at(v, USAGE_FIELDS[1])?,
            // llama.cpp sends both; a server with only `timings` still says what it reused.
            cached_tokens: tokens_at(v, USAGE_FIELDS[2])?.or(timings.and_then(|t| t.cache_n)),
        },
        provider_searches: Vec::new(),
        stop: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
        timings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counter::ToolChoice;
    use crate::live::conversation::FunctionDef;

    #[test]
    fn bodies_always_carry_a_system_message_and_an_explicit_tool_choice_and_never_stream() {
        let tools = [FunctionDef {
            name: "get_time".into(),
            description: "Current time.".into(),
            parameters: json!({"type": "object", "properties": {}}),
            defer_loading: false,
        }];
        let messages = [
            Message::User("time?".into()),
            Message::Assistant {
                text: String::new(),
                calls: vec![ToolCall {
                    id: "c1".into(),
                    name: "get_time".into(),
                    arguments: "{}".into(),
                }],
                native: None,
            },
            Message::ToolResult {
                call_id: "c1".into(),
                name: "get_time".into(),
                content: "noon".into(),
                is_error: false,
            },
        ];
        let r = Request {
            model: "m",
            system: "Be brief.",
            messages: &messages,
            tools: &tools,
            provider_search: None,
            tool_choice: ToolChoice::Auto,
            max_tokens: 64,
            temperature: None,
            seed: Some(3),
        };
        assert_eq!(
            body(&r).to_string(),
            r#"{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"time?"},{"role":"assistant","content":"","tool_calls":[{"id":"c1","type":"function","function":{"name":"get_time","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"noon"}],"tools":[{"type":"function","function":{"name":"get_time","description":"Current time.","parameters":{"type":"object","properties":{}}}}],"tool_choice":"auto","max_tokens":64,"stream":false,"seed":3}"#
        );
    }

    #[test]
    fn answers_are_read_with_calls_and_usage() {
        let v: Value = serde_json::from_str(
            r#"{"choices":[{"message":{"role":"assistant","content":"","tool_calls":[{"id":"x","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"UTC\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":120,"completion_tokens":9,"total_tokens":129}}"#,
        )
        .unwrap();
        let r = parse(&v).unwrap();
        assert_eq!(r.calls.len(), 1);
        assert_eq!(r.calls[0].arguments, r#"{"tz":"UTC"}"#);
        assert_eq!(r.usage.input_tokens, Some(120));
        assert_eq!(r.usage.output_tokens, Some(9));
        assert_eq!(r.stop.as_deref(), Some("tool_calls"));
        assert!(parse(&json!({"choices": []})).is_err());
    }

    #[test]
    fn llama_cpp_timings_are_read_and_bounded_and_absent_elsewhere() {
        let answer = |timings: Value| {
            json!({"choices": [{"message": {"role": "assistant", "content": "hi"},
                "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 500, "completion_tokens": 8,
                    "prompt_tokens_details": {"cached_tokens": 357}},
                "timings": timings})
        };
        let r = parse(&answer(
            json!({"cache_n": 357, "prompt_n": 143, "prompt_ms": 465.5,
            "predicted_n": 8, "predicted_ms": 62.25, "prompt_per_second": 307.2}),
        ))
        .unwrap();
        let t = r.timings.unwrap();
        assert_eq!(
            (t.cache_n, t.prompt_n, t.predicted_n),
            (Some(357), Some(143), Some(8))
        );
        assert_eq!((t.prompt_ms, t.predicted_ms), (Some(465.5), Some(62.25)));
        assert_eq!(r.usage.cached_tokens, Some(357));
        // Only `timings`: the cache read still comes from it.
        let mut only = answer(json!({"cache_n": 12}));
        only["usage"]
            .as_object_mut()
            .unwrap()
            .remove("prompt_tokens_details");
        assert_eq!(parse(&only).unwrap().usage.cached_tokens, Some(12));
        // Other servers send none: nothing is made up.
        let mut none = answer(Value::Null);
        none.as_object_mut().unwrap().remove("timings");
        assert_eq!(parse(&none).unwrap().timings, None);
        // A count or a time no reader can use is refused, naming its field.
        for (bad, field) in [
            (json!({"cache_n": u64::MAX}), "timings.cache_n"),
            (json!({"prompt_n": -1}), "timings.prompt_n"),
            (json!({"prompt_ms": -0.5}), "timings.prompt_ms"),
            (json!({"predicted_ms": 1e300}), "timings.predicted_ms"),
            (json!({"predicted_ms": "fast"}), "timings.predicted_ms"),
        ] {
            let v = answer(bad);
            let why = parse(&v).unwrap_err();
            assert!(why.starts_with(field), "{why}");
            let (at, _) = crate::live::Provider::OpenaiChat
                .check_usage(&v)
                .unwrap_err();
            assert_eq!(at.join("."), field);
        }
    }
}
