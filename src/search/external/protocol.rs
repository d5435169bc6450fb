//! Protocol 1 of external scorers (`--scorer exec:'CMD ARGS'`): JSON lines over the process's
//! stdin and stdout, as `CONTRACT.md` ("Bring your own search") and `docs/external-scorers.md`
//! (with a JSON Schema per message) give it.
//!
//! ```text
//! → {"type":"index","protocol":1,"tools":[{"id","name","server","description","input_schema"}]}
//! ← {"type":"ready","name":"my-search","version":"1.2.0"}
//! → {"type":"search","id":"q1","query":"open an issue","limit":10,"candidates":[...]?}
//! ← {"type":"results","id":"q1","results":[{"id":"...","score":3.2}],"elapsed_us":120}
//! ← {"type":"error","id":"q1","message":"..."}
//! ```
//! Keys a message does not define are ignored, so later versions can add them; a message of a
//! type this version does not know is skipped.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::Tool;

/// The protocol version toolbudget speaks.
pub const PROTOCOL: u32 = 1;

/// The first message: every tool a search may return, once.
#[derive(Debug, Serialize)]
pub struct Index<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub protocol: u32,
    pub tools: Vec<IndexTool<'a>>,
}

/// One tool as the adapter sees it.
#[derive(Debug, Serialize)]
pub struct IndexTool<'a> {
    pub id: &'a str,
    pub name: &'a str,
    /// `null` for a built-in tool.
    pub server: Option<&'a str>,
    pub description: &'a str,
    pub input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_hint: Option<&'a str>,
}

impl<'a> IndexTool<'a> {
    pub fn of(tool: &'a Tool) -> Self {
        IndexTool {
            id: &tool.id,
            name: &tool.name,
            server: tool.server.as_deref(),
            description: &tool.description,
            input_schema: &tool.input_schema,
            search_hint: tool.search_hint.as_deref(),
        }
    }
}

/// One query.
#[derive(Debug, Serialize)]
pub struct Search<'a> {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub id: &'a str,
    pub query: &'a str,
    pub limit: usize,
    /// Only these tools may be returned (the simulator searching the deferred tools); absent
    /// when every indexed tool may.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<&'a str>>,
}

/// What the adapter sends back; `Other` is a type this version does not define (skipped).
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Answer {
    Ready {
        name: String,
        #[serde(default)]
        version: Option<String>,
        #[serde(default)]
        protocol: Option<u32>,
    },
    Results {
        id: String,
        results: Vec<ResultEntry>,
        #[serde(default)]
        elapsed_us: Option<f64>,
    },
    Error {
        #[serde(default)]
        id: Option<String>,
        message: String,
    },
    #[serde(other)]
    Other,
}

/// One ranked tool of an answer.
#[derive(Debug, Deserialize)]
pub struct ResultEntry {
    pub id: String,
    pub score: f64,
}
