//! What `catalog import` reports: one row per server of the config (imported, failed or
//! skipped), with tool and token counts ([`ImportReport`]).

use serde::Serialize;

use crate::tokenize::{Render, Tokenizer};

#[derive(Debug, Serialize)]
pub struct ImportReport {
    pub tokenizer: String,
    pub render: String,
    pub servers: Vec<ServerReport>,
    pub total_tools: usize,
    pub total_tokens: usize,
}

#[derive(Debug, Serialize)]
pub struct ServerReport {
    pub server: String,
    /// `ok`, `failed` or `skipped`.
    pub status: &'static str,
    pub tools: Option<usize>,
    pub tokens: Option<usize>,
    /// `tools/list` requests made.
    pub pages: Option<usize>,
    /// The catalog file written, when one was.
    pub path: Option<String>,
    /// What the server called itself in `initialize` (`serverInfo` name and version).
    pub server_info: Option<String>,
    /// Why the server failed or was skipped.
    pub note: Option<String>,
}

impl ServerReport {
    /// A server imported into `path`.
    pub fn ok(
        server: &str,
        tools: usize,
        tokens: usize,
        pages: usize,
        path: String,
        server_info: Option<String>,
    ) -> ServerReport {
        ServerReport {
            server: server.to_string(),
            status: "ok",
            tools: Some(tools),
            tokens: Some(tokens),
            pages: Some(pages),
            path: Some(path),
            server_info,
            note: None,
        }
    }

    /// A server that could not be imported, and why.
    pub fn failed(server: &str, reason: String) -> ServerReport {
        ServerReport {
            server: server.to_string(),
            status: "failed",
            tools: None,
            tokens: None,
            pages: None,
            path: None,
            server_info: None,
            note: Some(reason),
        }
    }

    /// A server that is not started (not a stdio server), and why.
    pub fn skipped(server: &str, note: String) -> ServerReport {
        ServerReport {
            server: server.to_string(),
            status: "skipped",
            tools: None,
            tokens: None,
            pages: None,
            path: None,
            server_info: None,
            note: Some(note),
        }
    }
}

impl ImportReport {
    /// Every server's row, with the totals, for counts made with `tokenizer`.
    pub fn new(tokenizer: Tokenizer, servers: Vec<ServerReport>) -> ImportReport {
        ImportReport {
            tokenizer: tokenizer.name().to_string(),
            render: Render::Json.name().to_string(),
            total_tools: servers.iter().filter_map(|s| s.tools).sum(),
            total_tokens: servers.iter().filter_map(|s| s.tokens).sum(),
            servers,
        }
    }
}
