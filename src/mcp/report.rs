//! What `catalog import` reports: one row per server of the config (imported, failed or
//! skipped), with tool and token counts ([`ImportReport`]).

use serde::Serialize;

use crate::tokenize::{Render, Tokenizer};

#[derive(Debug, Serialize)]
pub struct ImportReport {
    pub tokenizer: Tokenizer,
    pub render: Render,
    pub servers: Vec<ServerReport>,
    pub total_tools: usize,
    pub total_tokens: usize,
}

#[derive(Debug, Serialize)]
pub struct ServerReport {
    pub server: String,
    pub status: ServerStatus,
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

/// What became of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerStatus {
    /// Imported into its catalog file.
    Ok,
    Failed,
    /// Not started (not a stdio server).
    Skipped,
}

impl ServerStatus {
    pub fn name(self) -> &'static str {
        match self {
            ServerStatus::Ok => "ok",
            ServerStatus::Failed => "failed",
            ServerStatus::Skipped => "skipped",
        }
    }
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
            status: ServerStatus::Ok,
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
            status: ServerStatus::Failed,
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
            status: ServerStatus::Skipped,
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
            tokenizer,
            render: Render::Json,
            total_tools: servers.iter().filter_map(|s| s.tools).sum(),
            total_tokens: servers.iter().filter_map(|s| s.tokens).sum(),
            servers,
        }
    }
}
