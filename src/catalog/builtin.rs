//! The agents' built-in catalogs, embedded in the binary and named by a stable reference
//! (`builtin:claude-code`, `builtin:codex`) wherever a catalog path is read: a scenario's
//! `catalogs:` and `--catalog`. `session import` writes these references, so the scenarios it
//! writes load from any folder, with an installed binary or a moved clone.

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
/// the known references.
pub fn text(path: &Path) -> std::result::Result<&'static str, String> {
    let p = path.to_str().unwrap_or_default();
    ALL.iter()
        .find(|(r, _, _)| *r == p)
        .map(|(_, _, t)| *t)
        .ok_or_else(|| {
            let known: Vec<&str> = ALL.iter().map(|(r, _, _)| *r).collect();
            format!(
                "unknown built-in catalog {p:?}: the built-in catalogs are {}",
                known.join(", ")
            )
        })
}

/// Reads a catalog file, or parses the embedded catalog a `builtin:` reference names (its
/// errors name the reference).
pub fn read(path: &Path) -> Result<Document> {
    if is_reference(path) {
        let text = text(path).map_err(|m| Error::input(path, None, m))?;
        return Document::parse(path, text.as_bytes().to_vec());
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
             catalogs are builtin:claude-code, builtin:codex"
        );
    }
}
