//! Live MCP servers: start one over stdio, ask for its tools, and turn the answer into a
//! catalog file (`catalog import`). `client` speaks the protocol, `config` reads the server
//! list of a Claude Code / Claude Desktop config, `snapshot` renders and counts the result,
//! `report` is what the import reports per server.

// The protocol (rmcp over the child's pipes, on tokio) is the `mcp` feature (default).
#[cfg(feature = "mcp")]
pub mod client;
pub mod config;
pub mod report;
pub mod scenario;
pub mod snapshot;

use std::path::PathBuf;

#[cfg(feature = "mcp")]
pub use client::{Failure, ImportError, Listing, Timeouts, list_tools};
pub use config::{ConfigEntry, EntryKind, read_config};
pub use report::{ImportReport, ServerReport};
pub use snapshot::{catalog_json, to_catalog};

/// How to start a stdio server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Added to (and overriding) the inherited environment, in this order.
    pub env: Vec<(String, String)>,
    /// Working folder; `None` keeps ours.
    pub cwd: Option<PathBuf>,
}

impl ServerCommand {
    /// Splits a command line with POSIX shell rules (quotes and backslashes; no variables,
    /// globs or pipes: nothing runs through a shell).
    pub fn parse(line: &str) -> Result<ServerCommand, String> {
        let words = shlex::split(line).ok_or_else(|| {
            format!("cannot split {line:?}: unbalanced quotes or a trailing backslash")
        })?;
        let mut words = words.into_iter();
        let program = words
            .next()
            .ok_or_else(|| "the command line is empty".to_string())?;
        Ok(ServerCommand {
            program,
            args: words.collect(),
            env: Vec::new(),
            cwd: None,
        })
    }

    /// The command line as a shell would need it typed, for messages.
    pub fn display(&self) -> String {
        let words =
            std::iter::once(self.program.as_str()).chain(self.args.iter().map(String::as_str));
        shlex::try_join(words).unwrap_or_else(|_| {
            // Only a NUL byte makes quoting fail; show the words plainly instead.
            std::iter::once(self.program.clone())
                .chain(self.args.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell() {
        let c = ServerCommand::parse(r#"uvx "mcp server" --dir 'a b' x\ y"#).unwrap();
        assert_eq!(c.program, "uvx");
        assert_eq!(c.args, ["mcp server", "--dir", "a b", "x y"]);
        assert_eq!(c.display(), "uvx 'mcp server' --dir 'a b' 'x y'");
    }

    #[test]
    fn bad_command_lines_are_rejected() {
        assert!(ServerCommand::parse("  ").unwrap_err().contains("empty"));
        assert!(
            ServerCommand::parse("npx 'open")
                .unwrap_err()
                .contains("unbalanced")
        );
    }
}
