//! The agents' built-in catalogs, embedded in the binary and named by a stable reference
//! (`builtin:claude-code`, `builtin:codex`) wherever a catalog path is read: a scenario's
//! `catalogs:` and `--catalog`. `session import` writes these references, so the scenarios it
//! writes load from any folder, with an installed binary or a moved clone.
//! `builtin:claude-code@VERSION` is the tools that version of Claude Code sends
//! ([`super::versions`]).

use std::borrow::Cow;
use std::path::Path;

use crate::document::Document;
use crate::error::{Error, Result};

/// What starts a reference to an embedded catalog.
pub const PREFIX: &str = "builtin:";

/// Claude Code's built-in tools (`fixtures/catalogs/builtins.yaml`).
pub const CLAUDE_CODE: &str = "builtin:claude-code";
/// Codex's built-in tools (`fixtures/catalogs/codex-builtins.yaml`).
pub const CODEX: &str = "builtin:codex";

/// Every embedded catalog: its reference, the fixture it was built from, its text.
const ALL: [(&str, &str, &str); 2] = [
    (
        CLAUDE_CODE,
        "fixtures/catalogs/builtins.yaml",
        include_str!("../../fixtures/catalogs/builtins.yaml"),
    ),
    (
        CODEX,
        "fixtures/catalogs/codex-builtins.yaml",
        include_str!("../../fixtures/catalogs/codex-builtins.yaml"),
    ),
];

/// Whether `path` is written as a reference to an embedded catalog (`builtin:NAME`), known or
/// not.
pub fn is_reference(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.starts_with(PREFIX))
}

/// The fixture an embedded catalog was built from (`fixtures/catalogs/…`), for notes.
pub fn fixture(reference: &str) -> Option<&'static str> {
    ALL.iter()
        .find(|(r, _, _)| *r == reference)
        .map(|(_, f, _)| *f)
}

/// The text of the embedded catalog `path` names, or why there is none: the message lists
/// the known references. `builtin:claude-code@VERSION` is built from the full catalog.
pub fn text(path: &Path) -> std::result::Result<Cow<'static, str>, String> {
    let p = path.to_str().unwrap_or_default();
    let (name, version) = match p.split_once('@') {
        Some((n, v)) => (n, Some(v)),
        None => (p, None),
    };
    let full = ALL
        .iter()
        .find(|(r, _, _)| *r == name)
        .map(|(_, _, t)| *t)
        .ok_or_else(|| {
            let known: Vec<&str> = ALL.iter().map(|(r, _, _)| *r).collect();
            format!(
                "unknown built-in catalog {p:?}: the built-in catalogs are {} (and \
                 {CLAUDE_CODE}@VERSION, the tools that Claude Code version sends)",
                known.join(", ")
            )
        })?;
    let Some(version) = version else {
        return Ok(Cow::Borrowed(full));
    };
    if name != CLAUDE_CODE {
        return Err(format!(
            "{p:?}: only {CLAUDE_CODE} is versioned ({CLAUDE_CODE}@2.0.58)"
        ));
    }
    // `@VERSION+NAME+NAME`: the version's tools, and built-ins its session called beyond them.
    let mut parts = version.split('+');
    let v = parts
        .next()
        .and_then(super::versions::parse)
        .ok_or_else(|| {
            format!("{p:?}: a Claude Code version is three numbers, like {CLAUDE_CODE}@2.0.58")
        })?;
    let extra: Vec<&str> = parts.collect();
    super::versions::subset_text(full, v, &extra)
        .map(Cow::Owned)
        .map_err(|m| format!("{p:?}: {m}"))
}

/// Reads a catalog file, or parses the embedded catalog a `builtin:` reference names (its
/// errors name the reference).
pub fn read(path: &Path) -> Result<Document> {
    if is_reference(path) {
        let text = text(path).map_err(|m| Error::input(path, None, m))?;
        return Document::parse(path, text.into_owned().into_bytes());
    }
    Document::read(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_catalog_loads() {
        for (r, _, _) in ALL {
            let c = crate::catalog::load_catalogs(&[crate::catalog::CatalogSource {
                path: r.into(),
                server: None,
            }])
            .unwrap();
            assert!(c.len() > 10, "{r}: {} tools", c.len());
        }
        let c = crate::catalog::load_catalogs(&[crate::catalog::CatalogSource {
            path: CLAUDE_CODE.into(),
            server: None,
        }])
        .unwrap();
        assert!(c.index_of("Read").is_some());
    }

    #[test]
    fn an_unknown_reference_names_the_known_ones() {
        let e = crate::catalog::load_catalogs(&[crate::catalog::CatalogSource {
            path: "builtin:cursor".into(),
            server: None,
        }])
        .err()
        .unwrap()
        .to_string();
        assert_eq!(
            e,
            "builtin:cursor: unknown built-in catalog \"builtin:cursor\": the built-in \
             catalogs are builtin:claude-code, builtin:codex (and builtin:claude-code@VERSION, \
             the tools that Claude Code version sends)"
        );
    }

    #[test]
    fn a_versioned_reference_holds_that_version_s_tools_under_its_names() {
        let load = |r: &str| {
            crate::catalog::load_catalogs(&[crate::catalog::CatalogSource {
                path: r.into(),
                server: None,
            }])
        };
        let c = load("builtin:claude-code@1.0.98").unwrap();
        let names: Vec<&str> = c.tools().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "Bash",
                "BashOutput",
                "Edit",
                "ExitPlanMode",
                "Glob",
                "Grep",
                "KillBash",
                "MultiEdit",
                "NotebookEdit",
                "Read",
                "Task",
                "TodoWrite",
                "WebFetch",
                "WebSearch",
                "Write"
            ]
        );
        let full = load(CLAUDE_CODE).unwrap();
        let kill = |c: &crate::catalog::Catalog, n: &str| {
            c.tools()
                .iter()
                .find(|t| t.name == n)
                .unwrap()
                .description
                .clone()
        };
        assert_eq!(kill(&c, "KillBash"), kill(&full, "KillShell"));
        // Every listed version loads, each tool it names found.
        for e in &crate::catalog::versions::table().versions {
            let c = load(&format!("{CLAUDE_CODE}@{}", e.version)).unwrap();
            assert_eq!(c.len(), e.tools.len(), "{}", e.version);
        }
        for (bad, msg) in [
            (
                "builtin:claude-code@2.0",
                "a Claude Code version is three numbers",
            ),
            (
                "builtin:codex@0.40.0",
                "only builtin:claude-code is versioned",
            ),
        ] {
            let e = load(bad).err().unwrap().to_string();
            assert!(e.contains(msg), "{e}");
        }
    }
}
