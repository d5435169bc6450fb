//! The text that tells the model which deferred tools exist, in each listing mode. The texts
//! are counted with the scenario's tokenizer (or replaced by `sizes.deferred_list`).
//!
//! - `names` (Claude Code): `<available-deferred-tools>` then one id a line.
//! - `descriptions` ("metadata layer"): `id: first line of the description` cut at 100 chars.
//! - `servers` (namespaces): one line per server, its description or a generated summary
//!   `N tools: a, b, c…`; deferred built-ins keep one line each.
//! - `none`: no text (the provider's search tool stands for the deferred tools).
//! - `stubs`: OpenAI's flat `defer_loading`, a stub per function counted as a definition
//!   (`CounterKind::stub`), not as text.

use std::fmt::Write as _;

use crate::catalog::Catalog;

use super::scenario::Listing;

/// Longest description shown in `descriptions` mode, in characters.
pub const DESCRIPTION_CHARS: usize = 100;
/// Tool names shown in a generated server summary.
pub const SUMMARY_NAMES: usize = 3;

pub const OPEN: &str = "<available-deferred-tools>";
pub const CLOSE: &str = "</available-deferred-tools>";

/// The first line of `description`, at most `DESCRIPTION_CHARS` characters (ending in `…`
/// when cut).
pub fn one_line(description: &str) -> String {
    let line = description
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    if line.chars().count() <= DESCRIPTION_CHARS {
        line.to_string()
    } else {
        let mut s: String = line.chars().take(DESCRIPTION_CHARS - 1).collect();
        s.push('…');
        s
    }
}

/// The lines for `tools` (catalog indices, in catalog order) in `mode`.
pub fn lines(catalog: &Catalog, tools: &[usize], mode: Listing) -> Vec<String> {
    match mode {
        Listing::None => Vec::new(),
        // Stubs are counted as tool definitions (`CounterKind::stub`); as text, their names.
        Listing::Names | Listing::Stubs => {
            tools.iter().map(|&t| catalog.get(t).id.clone()).collect()
        }
        Listing::Descriptions => tools
            .iter()
            .map(|&t| {
                let tool = catalog.get(t);
                format!("{}: {}", tool.id, one_line(&tool.description))
            })
            .collect(),
        Listing::Servers => {
            let mut out = Vec::new();
            // Servers in the order they first appear among `tools`.
            let mut servers: Vec<(&str, Vec<&str>)> = Vec::new();
            for &t in tools {
                let tool = catalog.get(t);
                match &tool.server {
                    None => out.push(tool.id.clone()),
                    Some(s) => match servers.iter_mut().find(|(n, _)| n == s) {
                        Some((_, names)) => names.push(&tool.name),
                        None => servers.push((s, vec![&tool.name])),
                    },
                }
            }
            for (server, names) in servers {
                let desc = catalog
                    .servers()
                    .iter()
                    .find(|i| i.name == server)
                    .and_then(|i| i.description.as_deref())
                    .map(one_line);
                let line = match desc {
                    Some(d) if !d.is_empty() => format!("{server}: {d} ({} tools)", names.len()),
                    _ => {
                        let mut s = format!("{server}: {} tools: ", names.len());
                        s.push_str(&names[..names.len().min(SUMMARY_NAMES)].join(", "));
                        if names.len() > SUMMARY_NAMES {
                            s.push('…');
                        }
                        s
                    }
                };
                out.push(line);
            }
            out
        }
    }
}

/// The full block sent in `list` style, or as the first announcement in `delta` style.
/// Empty when nothing is deferred.
pub fn full_text(catalog: &Catalog, tools: &[usize], mode: Listing) -> String {
    if tools.is_empty() || mode == Listing::None {
        return String::new();
    }
    let mut s = String::from(OPEN);
    for l in lines(catalog, tools, mode) {
        s.push('\n');
        s.push_str(&l);
    }
    s.push('\n');
    s.push_str(CLOSE);
    s
}

/// A `delta` style announcement of tools that appeared or went away.
pub fn delta_text(catalog: &Catalog, added: &[usize], removed: &[usize], mode: Listing) -> String {
    if (added.is_empty() && removed.is_empty()) || mode == Listing::None {
        return String::new();
    }
    let mut s = String::from("<deferred-tools-delta>");
    for l in lines(catalog, added, mode) {
        let _ = write!(s, "\nadded: {l}");
    }
    for l in lines(catalog, removed, mode) {
        let _ = write!(s, "\nremoved: {l}");
    }
    s.push_str("\n</deferred-tools-delta>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::tests::tool;

    fn catalog() -> Catalog {
        let mut a = tool("mcp__gh__create_issue", Some("gh"));
        a.description = format!("Create an issue.\nSecond line. {}", "x".repeat(200));
        let mut b = tool("mcp__gh__list_issues", Some("gh"));
        b.description = "y".repeat(150);
        Catalog::from_tools(vec![
            tool("WebFetch", None),
            a,
            b,
            tool("mcp__gh__get_issue", Some("gh")),
            tool("mcp__gh__close_issue", Some("gh")),
        ])
        .unwrap()
    }

    #[test]
    fn names_mode_lists_one_id_a_line() {
        let c = catalog();
        assert_eq!(
            full_text(&c, &[0, 1], Listing::Names),
            "<available-deferred-tools>\nWebFetch\nmcp__gh__create_issue\n</available-deferred-tools>"
        );
        assert_eq!(full_text(&c, &[], Listing::Names), "");
    }

    #[test]
    fn descriptions_are_one_line_of_at_most_100_chars() {
        let c = catalog();
        let l = lines(&c, &[1, 2], Listing::Descriptions);
        assert_eq!(l[0], "mcp__gh__create_issue: Create an issue.");
        let d = l[1].strip_prefix("mcp__gh__list_issues: ").unwrap();
        assert_eq!(d.chars().count(), DESCRIPTION_CHARS);
        assert!(d.ends_with('…'));
    }

    #[test]
    fn servers_mode_summarizes_each_server() {
        let c = catalog();
        assert_eq!(
            lines(&c, &[0, 1, 2, 3, 4], Listing::Servers),
            [
                "WebFetch",
                "gh: 4 tools: create_issue, list_issues, get_issue…"
            ]
        );
        assert_eq!(
            delta_text(&c, &[3], &[0], Listing::Names),
            "<deferred-tools-delta>\nadded: mcp__gh__get_issue\nremoved: WebFetch\n</deferred-tools-delta>"
        );
    }
}
