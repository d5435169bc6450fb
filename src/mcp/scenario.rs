//! A starter scenario for imported catalogs (`catalog import --scenario FILE`), so comparing
//! eager and deferred loading of one's own servers takes a single `simulate` afterwards. It has
//! one user turn without tool calls: the comparison is of what every request carries before
//! any tool is used. Add turns with `calls` to replay a real session.

use std::path::{Component, Path, PathBuf};

/// The scenario YAML (CONTRACT.md's minimum form). `catalogs` pairs a server name with its
/// catalog file; paths are written relative to `scenario_path`'s folder when both are
/// relative to the same place, as scenario paths are read.
pub fn starter_scenario(
    name: &str,
    scenario_path: &Path,
    catalogs: &[(String, PathBuf)],
) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("strings serialize");
    let base = scenario_path.parent().unwrap_or(Path::new(""));
    let mut out = String::new();
    out.push_str(
        "# Written by `toolbudget catalog import --scenario`; run `toolbudget simulate` on it.\n",
    );
    out.push_str(&format!("name: {}\n", q(name)));
    out.push_str("tokenizer: o200k_base\n");
    out.push_str(
        "# The non-tool part of your agent's system prompt; 0 compares the tool definitions alone.\n",
    );
    out.push_str("system_prompt_tokens: 0\n");
    out.push_str("catalogs:\n");
    for (server, path) in catalogs {
        let rel = relative_to(path, base);
        out.push_str(&format!(
            "  - path: {}\n    server: {}\n",
            q(&rel.to_string_lossy()),
            q(server)
        ));
    }
    out.push_str(
        "deferred:\n  defer_mcp: true\n  always_load: []\n  scorer: keyword\n  max_results: 5\n",
    );
    out.push_str("conversation:\n");
    out.push_str("  - user: \"Hello! What can you do for me?\"\n");
    out
}

/// `path` relative to `base` when both are absolute or both relative (the scenario and its
/// catalogs are written by the same command, so they are); otherwise `path` unchanged.
pub fn relative_to(path: &Path, base: &Path) -> PathBuf {
    fn norm(p: &Path) -> Vec<Component<'_>> {
        p.components().filter(|c| *c != Component::CurDir).collect()
    }
    if path.is_absolute() != base.is_absolute() {
        return path.to_path_buf();
    }
    let (p, b) = (norm(path), norm(base));
    if b.contains(&Component::ParentDir) {
        return path.to_path_buf();
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut rel = PathBuf::new();
    for _ in common..b.len() {
        rel.push("..");
    }
    for c in &p[common..] {
        rel.push(c.as_os_str());
    }
    rel
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_paths_are_relative_to_the_scenario() {
        assert_eq!(
            relative_to(Path::new("snap/a.json"), Path::new("snap")),
            Path::new("a.json")
        );
        assert_eq!(
            relative_to(Path::new("snap/a.json"), Path::new("scenarios")),
            Path::new("../snap/a.json")
        );
        assert_eq!(
            relative_to(Path::new("./snap/a.json"), Path::new("")),
            Path::new("snap/a.json")
        );
        assert_eq!(
            relative_to(Path::new("/x/a.json"), Path::new("rel")),
            Path::new("/x/a.json")
        );
    }

    #[test]
    fn the_starter_scenario_lists_every_catalog() {
        let s = starter_scenario(
            "mine",
            Path::new("snap/scenario.yaml"),
            &[
                ("git".into(), "snap/git.json".into()),
                ("my \"srv\"".into(), "snap/x.json".into()),
            ],
        );
        assert!(s.contains("name: \"mine\"\n"));
        assert!(s.contains("  - path: \"git.json\"\n    server: \"git\"\n"));
        assert!(s.contains("    server: \"my \\\"srv\\\"\"\n"));
        assert!(s.contains("  defer_mcp: true\n"));
        assert!(s.ends_with("conversation:\n  - user: \"Hello! What can you do for me?\"\n"));
    }
}
