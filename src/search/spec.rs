//! A scorer as the user names it: a built-in (`bm25`), a process speaking toolbudget's
//! protocol (`exec:'CMD ARGS'`), or a live MCP server's search tool (`mcp:'CMD ARGS'`). One
//! parser for the CLI (`--scorer`) and scenarios (`deferred.scorer`), one builder.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::external::{ExternalConfig, exec::ExecScorer, mcp::McpScorer};
use super::{Scorer, ScorerConfig, ScorerKind};
use crate::catalog::Catalog;

/// What `--scorer` names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ScorerSpec {
    Builtin(ScorerKind),
    /// The command line after `exec:`.
    Exec(String),
    /// The command line after `mcp:`.
    Mcp(String),
}

impl ScorerSpec {
    /// The built-in scorer, if it is one.
    pub fn builtin(&self) -> Option<ScorerKind> {
        match self {
            ScorerSpec::Builtin(k) => Some(*k),
            _ => None,
        }
    }

    pub fn is_external(&self) -> bool {
        self.builtin().is_none()
    }
}

impl From<ScorerKind> for ScorerSpec {
    fn from(k: ScorerKind) -> Self {
        ScorerSpec::Builtin(k)
    }
}

impl fmt::Display for ScorerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScorerSpec::Builtin(k) => write!(f, "{k}"),
            ScorerSpec::Exec(line) => write!(f, "exec:{line}"),
            ScorerSpec::Mcp(line) => write!(f, "mcp:{line}"),
        }
    }
}

impl FromStr for ScorerSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let command = |prefix: &str, rest: &str| {
            if rest.trim().is_empty() {
                Err(format!(
                    "{prefix} needs a command line, e.g. {prefix}'python3 my_search.py'"
                ))
            } else if shlex::split(rest).is_none() {
                Err(format!(
                    "{prefix}{rest}: cannot split the command line (unbalanced quotes or a \
                     trailing backslash)"
                ))
            } else {
                Ok(rest.trim().to_string())
            }
        };
        if let Some(rest) = s.strip_prefix("exec:") {
            return command("exec:", rest).map(ScorerSpec::Exec);
        }
        if let Some(rest) = s.strip_prefix("mcp:") {
            return command("mcp:", rest).map(ScorerSpec::Mcp);
        }
        s.parse::<ScorerKind>()
            .map(ScorerSpec::Builtin)
            .map_err(|_| {
                format!(
                    "unknown scorer {s:?}: expected one of {}, exec:'CMD ARGS' (a process speaking \
                 toolbudget's protocol) or mcp:'CMD ARGS' (an MCP server's search tool)",
                    ScorerKind::all()
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
    }
}

/// Builds the scorer `spec` names over `catalog`: a built-in with its index precomputed, or an
/// external process started (and, for `exec`, sent the catalog).
pub fn build_spec(
    spec: &ScorerSpec,
    catalog: Arc<Catalog>,
    config: &ScorerConfig,
) -> crate::Result<Box<dyn Scorer>> {
    match spec {
        ScorerSpec::Builtin(kind) => super::build(*kind, catalog, config),
        ScorerSpec::Exec(line) => Ok(Box::new(ExecScorer::start(
            catalog,
            line,
            &config.external,
        )?)),
        ScorerSpec::Mcp(line) => Ok(Box::new(McpScorer::start(catalog, line, &config.external)?)),
    }
}

/// The external settings of `config`, for callers that build only external scorers.
pub fn external(config: &ScorerConfig) -> &ExternalConfig {
    &config.external
}
