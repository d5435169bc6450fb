//! Near-duplicate tools across servers ("siblings"): two filesystem servers that both have
//! `write_file`, a GitHub server and its older reference twin that both have `create_issue`.
//! A search that returns the twin instead of the labeled tool fails in a way recall alone
//! does not explain; the *wrong-sibling rate* counts it.
//!
//! Two tools of different servers are siblings when
//! - their names have the same parts in the same order once the words of their own server's
//!   name are removed (`puppeteer_navigate` on server `puppeteer` → `navigate`), CamelCase
//!   split, lowercased, plurals folded; and the parts are at least two, or the two names are
//!   equal and have at least two parts (a bare `search` or `get` says nothing), and
//! - their descriptions share at least [`MIN_DESCRIPTION_JACCARD`] of their content words
//!   (Jaccard over words without stopwords, plurals folded), or neither description has two
//!   content words (the name is then all there is to compare).
//!
//! Siblings are grouped transitively into clusters (union–find). Built-ins count as one
//! server. Threshold chosen by reading the pairs of the 4,747 tools of the shared catalogs:
//! at 0.3 the GitHub, filesystem, memory, puppeteer and database twins are in and generic
//! `search` endpoints of unrelated APIs are out.

use std::collections::{HashMap, HashSet};

use crate::catalog::{Catalog, Tool};
use crate::search::text::{self, Camel, STOPWORDS, stem_plural};

/// Least description word overlap (Jaccard) of two siblings.
pub const MIN_DESCRIPTION_JACCARD: f64 = 0.3;

/// The clusters of a catalog.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Siblings {
    /// Cluster index per tool, `None` for a tool without siblings.
    cluster_of: Vec<Option<u32>>,
    /// Tools of each cluster, ascending.
    clusters: Vec<Vec<usize>>,
}

impl Siblings {
    /// Finds every cluster of `catalog`; `ranked` says which tools a search may return (the
    /// search tool is never anyone's sibling).
    pub fn find(catalog: &Catalog, ranked: impl Fn(usize) -> bool) -> Siblings {
        let tools = catalog.tools();
        let mut groups: HashMap<Vec<String>, Vec<usize>> = HashMap::new();
        for (i, t) in tools.iter().enumerate() {
            if ranked(i) {
                groups.entry(name_key(t)).or_default().push(i);
            }
        }
        let mut parent: Vec<usize> = (0..tools.len()).collect();
        let mut words: HashMap<usize, HashSet<String>> = HashMap::new();
        for (key, group) in &groups {
            if group.len() < 2 || key.is_empty() {
                continue;
            }
            for (n, &a) in group.iter().enumerate() {
                for &b in &group[n + 1..] {
                    let (ta, tb) = (&tools[a], &tools[b]);
                    if ta.server == tb.server || !names_comparable(key, ta, tb) {
                        continue;
                    }
                    for t in [a, b] {
                        words
                            .entry(t)
                            .or_insert_with(|| description_words(&tools[t]));
                    }
                    if descriptions_alike(&words[&a], &words[&b]) {
                        union(&mut parent, a, b);
                    }
                }
            }
        }
        Siblings::from_parents(&mut parent)
    }

    fn from_parents(parent: &mut [usize]) -> Siblings {
        let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
        for t in 0..parent.len() {
            let root = find(parent, t);
            members.entry(root).or_default().push(t);
        }
        let mut clusters: Vec<Vec<usize>> = members.into_values().filter(|m| m.len() > 1).collect();
        clusters.sort();
        let mut cluster_of = vec![None; parent.len()];
        for (c, m) in clusters.iter().enumerate() {
            for &t in m {
                cluster_of[t] = Some(c as u32);
            }
        }
        Siblings {
            cluster_of,
            clusters,
        }
    }

    pub fn clusters(&self) -> &[Vec<usize>] {
        &self.clusters
    }

    /// Tools that have at least one sibling.
    pub fn tools_in_clusters(&self) -> usize {
        self.clusters.iter().map(Vec::len).sum()
    }

    /// Whether `a` and `b` are distinct tools of one cluster.
    pub fn are_siblings(&self, a: usize, b: usize) -> bool {
        a != b
            && self
                .cluster_of
                .get(a)
                .copied()
                .flatten()
                .is_some_and(|c| self.cluster_of.get(b).copied().flatten() == Some(c))
    }

    pub fn has_siblings(&self, tool: usize) -> bool {
        self.cluster_of.get(tool).copied().flatten().is_some()
    }
}

/// The name's parts without the words of its server's name.
fn name_key(tool: &Tool) -> Vec<String> {
    let mut server = Vec::new();
    text::words(
        tool.server.as_deref().unwrap_or(""),
        Camel::Off,
        &mut server,
    );
    let server: HashSet<String> = server.iter().map(|w| stem_plural(w)).collect();
    name_words(tool)
        .into_iter()
        .filter(|p| !server.contains(p))
        .collect()
}

fn name_words(tool: &Tool) -> Vec<String> {
    let mut parts = Vec::new();
    text::words(&tool.name, Camel::Acronyms, &mut parts);
    parts.iter().map(|p| stem_plural(p)).collect()
}

/// A one-part key only compares names that are equal as a whole and have two parts or more.
fn names_comparable(key: &[String], a: &Tool, b: &Tool) -> bool {
    key.len() >= 2 || (name_words(a).len() >= 2 && name_words(a) == name_words(b))
}

fn description_words(tool: &Tool) -> HashSet<String> {
    let mut words = Vec::new();
    text::words(&tool.description, Camel::Off, &mut words);
    words
        .into_iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .map(|w| stem_plural(&w))
        .collect()
}

fn descriptions_alike(a: &HashSet<String>, b: &HashSet<String>) -> bool {
    if a.len() < 2 && b.len() < 2 {
        return true;
    }
    let shared = a.intersection(b).count();
    let all = a.len() + b.len() - shared;
    shared as f64 >= MIN_DESCRIPTION_JACCARD * all as f64
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

fn union(parent: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        // The smaller index is the root, so clusters do not depend on pair order.
        parent[ra.max(rb)] = ra.min(rb);
    }
}

/// How often the top result is a sibling of an expected tool instead of the tool: over the
/// queries whose expected tools have siblings, those whose first result is not expected but
/// is a sibling of an expected tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WrongSibling {
    /// Queries with at least one expected tool that has a sibling.
    pub queries: usize,
    /// Of those, the queries whose first result is a sibling instead.
    pub wrong: usize,
    /// `wrong / queries` (0 without such queries), rounded to 6 decimals.
    pub rate: f64,
}

impl WrongSibling {
    /// Counts over `(expected tools, first result)` pairs.
    pub fn count<'a>(
        siblings: &Siblings,
        queries: impl IntoIterator<Item = (&'a [usize], Option<usize>)>,
    ) -> WrongSibling {
        let (mut with, mut wrong) = (0, 0);
        for (expected, top) in queries {
            if !expected.iter().any(|&e| siblings.has_siblings(e)) {
                continue;
            }
            with += 1;
            if let Some(top) = top
                && !expected.contains(&top)
                && expected.iter().any(|&e| siblings.are_siblings(e, top))
            {
                wrong += 1;
            }
        }
        let rate = if with == 0 {
            0.0
        } else {
            crate::eval::metrics::round_metric(wrong as f64 / with as f64)
        };
        WrongSibling {
            queries: with,
            wrong,
            rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::text::test_support::{builtin, mcp};

    fn catalog() -> Catalog {
        Catalog::from_tools(vec![
            mcp(
                "github",
                "create_issue",
                "Create a new issue in a GitHub repository",
            ),
            mcp(
                "server-github",
                "create_issue",
                "Create a new issue in a GitHub repository.",
            ),
            mcp(
                "tracker",
                "create_issue",
                "File a ticket about a bug for the team",
            ),
            mcp("puppeteer", "puppeteer_navigate", "Navigate to a URL"),
            mcp(
                "server-puppeteer",
                "puppeteer_navigate",
                "Navigate to a URL",
            ),
            mcp(
                "browser",
                "browser_navigate",
                "Navigate the browser to a URL",
            ),
            mcp("a", "search", ""),
            mcp("b", "search", ""),
            mcp("c", "Get Order", " "),
            mcp("d", "Get Order", ""),
            builtin("get_pods", "List the pods of a namespace"),
            mcp(
                "kubectl",
                "get_pods",
                "List pods in a namespace of the cluster",
            ),
            mcp("github", "list_issues", "List issues"),
        ])
        .unwrap()
    }

    #[test]
    fn twins_cluster_and_strangers_do_not() {
        let c = catalog();
        let s = Siblings::find(&c, |_| true);
        assert!(s.are_siblings(0, 1));
        // Same name, other description: not a twin.
        assert!(!s.are_siblings(0, 2) && !s.are_siblings(1, 2));
        // Server words removed: puppeteer_navigate ~ browser_navigate by name key `navigate`,
        // but a one-part key needs equal names.
        assert!(s.are_siblings(3, 4));
        assert!(!s.are_siblings(3, 5));
        // One-part names never pair on empty descriptions; two-part names do.
        assert!(!s.are_siblings(6, 7));
        assert!(s.are_siblings(8, 9));
        assert!(s.are_siblings(10, 11));
        assert!(!s.has_siblings(12));
        assert!(!s.are_siblings(0, 0));
        assert_eq!(s.clusters().len(), 4);
        assert_eq!(s.tools_in_clusters(), 8);
        // The search tool (or any unranked tool) is left out.
        let s = Siblings::find(&c, |t| t != 1);
        assert!(!s.has_siblings(0));
    }

    #[test]
    fn wrong_sibling_counts_top_results_that_are_twins() {
        let s = Siblings::find(&catalog(), |_| true);
        let rows: [(&[usize], Option<usize>); 5] = [
            (&[0], Some(1)),  // the twin first: wrong
            (&[0], Some(0)),  // right
            (&[0], Some(2)),  // another tool, not a twin: a miss, not a wrong sibling
            (&[12], Some(0)), // no siblings: not counted
            (&[3], None),     // nothing returned
        ];
        let w = WrongSibling::count(&s, rows);
        assert_eq!((w.queries, w.wrong), (4, 1));
        assert_eq!(w.rate, 0.25);
        assert_eq!(WrongSibling::count(&s, []).rate, 0.0);
    }
}
