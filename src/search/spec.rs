//! A scorer as the user names it: a built-in (`bm25`), a process speaking toolbudget's
//! protocol (`exec:'CMD ARGS'`), or a live MCP server's search tool (`mcp:'CMD ARGS'`). One
//! parser for the CLI (`--scorer`) and scenarios (`deferred.scorer`), one builder.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[cfg(feature = "mcp")]
use super::external::mcp::McpScorer;
use super::external::{ExternalConfig, exec::ExecScorer};
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

/// Written as the CLI spells it (`bm25`, `exec:python3 s.py`).
impl Serialize for ScorerSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A scenario's `deferred.scorer`: a name or `"exec:CMD"` as on the command line, or a mapping
/// with one key, `{exec: CMD}` or `{mcp: CMD}` (no quoting of the prefix needed in YAML).
impl<'de> Deserialize<'de> for ScorerSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SpecVisitor;
        impl<'de> Visitor<'de> for SpecVisitor {
            type Value = ScorerSpec;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "a scorer: keyword, regex, bm25, semantic, hybrid, \"exec:CMD\", \
                     {exec: CMD} or {mcp: CMD}",
                )
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<ScorerSpec, E> {
                s.parse().map_err(E::custom)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ScorerSpec, A::Error> {
                let Some(key) = map.next_key::<String>()? else {
                    return Err(de::Error::custom(
                        "an empty mapping: expected {exec: CMD} or {mcp: CMD}",
                    ));
                };
                let prefix = match key.as_str() {
                    "exec" => "exec:",
                    "mcp" => "mcp:",
                    other => return Err(de::Error::unknown_field(other, &["exec", "mcp"])),
                };
                let line: String = map.next_value()?;
                if let Some(extra) = map.next_key::<String>()? {
                    return Err(de::Error::custom(format!(
                        "one key only ({key} or the other), found {extra} too"
                    )));
                }
                format!("{prefix}{line}").parse().map_err(de::Error::custom)
            }
        }
        d.deserialize_any(SpecVisitor)
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
        #[cfg(feature = "mcp")]
        ScorerSpec::Mcp(line) => Ok(Box::new(McpScorer::start(catalog, line, &config.external)?)),
        #[cfg(not(feature = "mcp"))]
        ScorerSpec::Mcp(line) => Err(crate::error::Error::usage(format!(
            "mcp:{line}: MCP scorers need toolbudget's `mcp` feature, which this build was compiled without"
        ))),
    }
}

/// The external settings of `config`, for callers that build only external scorers.
pub fn external(config: &ScorerConfig) -> &ExternalConfig {
    &config.external
}
