//! Counters against literal renderings of whole requests (own fixtures; the public series are
//! reproduced in `tests/provider_counts.rs`, which reads `../shared/data`).

use serde_json::json;

use super::harmony::{NAMESPACE_CLOSE, NAMESPACE_OPEN, TOOLS_HEADER, function_block};
use super::*;

fn tool(id: &str, desc: &str, props: serde_json::Value) -> Tool {
    Tool {
        id: id.into(),
        name: id.into(),
        server: None,
        description: desc.into(),
        input_schema: json!({"type": "object", "properties": props, "required": ["q"]}),
        should_defer: None,
        always_load: false,
        search_hint: None,
        depends_on: Vec::new(),
        origin: None,
    }
}

fn fixture() -> Vec<Tool> {
    vec![
        tool(
            "notes_search",
            "Search the team's notes by keyword. Returns titles and links.",
            json!({"q": {"type": "string", "description": "Words to look for."}, "limit": {"type": "integer", "default": 10}}),
        ),
        tool(
            "notes_create",
            "Create a note in a folder.",
            json!({"q": {"type": "string"}, "folder": {"type": "string", "enum": ["inbox", "archive"]}, "tags": {"type": "array", "items": {"type": "string"}}}),
        ),
        tool(
            "calendar_free",
            "Find a free slot for the given people (emails).",
            json!({"q": {"type": "array", "items": {"type": "string"}}, "minutes": {"type": "number"}}),
        ),
    ]
}

const SYSTEM: &str = "You help a small team keep notes and meetings in order.";
const USER: &str = "Find my notes about the offsite and book an hour with Sam.";

fn o200k(s: &str) -> usize {
    Tokenizer::O200kBase.count(s)
}

fn namespace_text(tools: &[Tool]) -> String {
    let mut s = String::from(NAMESPACE_OPEN);
    for t in tools {
        s.push_str(&function_block(t));
    }
    s.push_str(NAMESPACE_CLOSE);
    s
}

#[test]
fn responses_request_equals_its_literal_rendering() {
    let tools = fixture();
    for n in 0..=tools.len() {
        let refs: Vec<&Tool> = tools[..n].iter().collect();
        let developer = if n == 0 {
            SYSTEM.to_string()
        } else {
            format!("{SYSTEM}\n\n{TOOLS_HEADER}{}", namespace_text(&tools[..n]))
        };
        // developer message, user message (4 framing tokens each), `<|start|>assistant`.
        let want = 4 + o200k(&developer) + 4 + o200k(USER) + 2;
        assert_eq!(
            CounterKind::OpenaiResponses.request(Some(SYSTEM), USER, &refs, 0),
            want,
            "{n} tools"
        );
    }
    // Without a system prompt the developer message exists only when tools do.
    let refs: Vec<&Tool> = tools.iter().collect();
    let want =
        4 + o200k(&format!("{TOOLS_HEADER}{}", namespace_text(&tools))) + 4 + o200k(USER) + 2;
    assert_eq!(
        CounterKind::OpenaiResponses.request(None, USER, &refs, 0),
        want
    );
    assert_eq!(
        CounterKind::OpenaiResponses.request(None, USER, &[], 0),
        4 + o200k(USER) + 2
    );
}

#[test]
fn chat_request_follows_the_cookbook_framing() {
    let tools = fixture();
    let refs: Vec<&Tool> = tools.iter().collect();
    let want = 3
        + (4 + o200k(&format!("{SYSTEM}\n")))
        + (4 + o200k(USER))
        + o200k(&namespace_text(&tools))
        + 9
        - 4;
    assert_eq!(
        CounterKind::OpenaiChat.request(Some(SYSTEM), USER, &refs, 0),
        want
    );
    assert_eq!(
        CounterKind::OpenaiChat.request(Some(SYSTEM), USER, &[], 0),
        3 + 4 + o200k(SYSTEM) + 4 + o200k(USER)
    );
    assert_eq!(
        CounterKind::OpenaiChat.request(None, USER, &refs, 7),
        3 + 4 + o200k(USER) + o200k(&namespace_text(&tools)) + 9 + 7
    );
}

#[test]
fn json_counters_keep_the_original_counts() {
    let tools = fixture();
    let catalog = Catalog::from_tools(tools.clone()).unwrap();
    for (kind, bpe) in [
        (CounterKind::O200kJson, Tokenizer::O200kBase),
        (CounterKind::Cl100kJson, Tokenizer::Cl100kBase),
    ] {
        let t = kind.tools(&catalog);
        let want: Vec<usize> = tools.iter().map(|x| bpe.count(&render_json(x))).collect();
        assert_eq!(t.counts(), want.as_slice());
        assert_eq!(kind.system(Some(SYSTEM)), bpe.count(SYSTEM));
        assert_eq!(kind.message(USER), bpe.count(USER));
        assert_eq!(kind.tools_fixed(Some(SYSTEM)), 0);
        assert_eq!(kind.system_from_count(1000), 1000);
    }
    let legacy = ToolTokens::compute(&catalog, Tokenizer::Cl100kBase, Render::Json);
    assert_eq!(legacy.counter, CounterKind::Cl100kJson);
}

#[test]
fn the_anthropic_estimate_scales_o200k_counts_by_the_fit() {
    let t = &fixture()[0];
    let json = o200k(&render_json(t));
    let fit = anthropic::fit();
    assert_eq!(
        CounterKind::AnthropicEstimate.tool(t),
        (fit.per_tool_ratio * json as f64).round() as usize
    );
    // Claude's tokenizer spends more tokens than o200k on the same text.
    assert!(CounterKind::AnthropicEstimate.tool(t) > json);
    assert_eq!(
        CounterKind::AnthropicEstimate.system(Some(SYSTEM)),
        (fit.text_ratio * o200k(SYSTEM) as f64).round() as usize
    );
    assert_eq!(
        CounterKind::AnthropicEstimate.error_pct(),
        Some(fit.error_pct)
    );
    assert_eq!(CounterKind::OpenaiChat.error_pct(), None);
}

#[test]
fn names_round_trip_through_clap_serde_and_from_str() {
    use clap::ValueEnum;
    for k in CounterKind::ALL {
        assert_eq!(k.name().parse::<CounterKind>(), Ok(k));
        assert_eq!(CounterKind::from_str(k.name(), false), Ok(k));
        assert_eq!(
            serde_json::to_string(&k).unwrap(),
            format!("\"{}\"", k.name())
        );
    }
    assert!(
        "o200k"
            .parse::<CounterKind>()
            .unwrap_err()
            .contains("openai-responses")
    );
    let c: ToolChoice = serde_json::from_str("\"required\"").unwrap();
    assert_eq!(c, ToolChoice::Any);
}

#[test]
fn per_tool_counts_are_reused_not_recounted_per_request() {
    let catalog = Catalog::from_tools(fixture()).unwrap();
    let t = CounterKind::OpenaiResponses.tools(&catalog);
    let refs: Vec<&Tool> = catalog.tools().iter().collect();
    let whole = CounterKind::OpenaiResponses.request(Some(SYSTEM), USER, &refs, 0);
    let parts = CounterKind::OpenaiResponses.system(Some(SYSTEM))
        + CounterKind::OpenaiResponses.message(USER)
        + CounterKind::OpenaiResponses.tools_fixed(Some(SYSTEM))
        + t.total();
    assert_eq!(whole, parts);
}

#[test]
fn counting_all_at_once_equals_counting_each() {
    let catalog = Catalog::from_tools(fixture()).unwrap();
    let all = count_all(&CounterKind::LOCAL, &catalog);
    for (k, t) in CounterKind::LOCAL.iter().zip(&all) {
        assert_eq!(t.counter, *k);
        assert_eq!(t.counts(), k.tools(&catalog).counts(), "{k}");
    }
}
