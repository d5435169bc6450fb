//! Two versions of a catalog compared: tokens per request, tools harder or easier to find, confusable pairs and findings new or fixed.

use super::*;

/// How well a form set found a tool: forms found (more is better), then the sum of ranks with
/// a miss counted `max_results + 1` (less is better).
pub(super) fn standing(r: &Reachability, limit: usize) -> (usize, usize) {
    (
        r.found,
        r.results.iter().map(|f| f.rank.unwrap_or(limit + 1)).sum(),
    )
}

pub(super) fn describe(r: &Reachability) -> String {
    r.results
        .iter()
        .map(|f| match f.rank {
            Some(n) => format!("{} #{n}", f.form),
            None => format!("{} -", f.form),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn diff(
    before: &CatalogReport,
    after: &CatalogReport,
    catalog: &Catalog,
    locator: &mut Locator,
) -> (CheckDiff, Vec<Finding>) {
    let per_tool = |r: &CatalogReport| -> BTreeMap<String, usize> {
        r.cost
            .tools
            .iter()
            .map(|t| (t.id.clone(), t.tokens))
            .collect()
    };
    let (old, new) = (per_tool(before), per_tool(after));
    let tools_added: Vec<String> = new
        .keys()
        .filter(|k| !old.contains_key(*k))
        .cloned()
        .collect();
    let tools_removed: Vec<String> = old
        .keys()
        .filter(|k| !new.contains_key(*k))
        .cloned()
        .collect();
    let tokens = token_deltas(before, after, &old, &new);
    let (findability, extra) = findability(before, after, catalog, locator);
    let pair_key = |p: &ConfusablePair| (p.intended.clone(), p.winner.clone());
    let old_pairs: BTreeSet<_> = before.confusable.iter().map(pair_key).collect();
    let new_pairs: BTreeSet<_> = after.confusable.iter().map(pair_key).collect();
    let old_keys: BTreeSet<_> = before.findings.iter().map(Finding::key).collect();
    let new_keys: BTreeSet<_> = after.findings.iter().map(Finding::key).collect();
    (
        CheckDiff {
            tool_count: before.tool_count,
            tools_added,
            tools_removed,
            tokens,
            findability,
            new_confusable: after
                .confusable
                .iter()
                .filter(|p| !old_pairs.contains(&pair_key(p)))
                .cloned()
                .collect(),
            resolved_confusable: before
                .confusable
                .iter()
                .filter(|p| !new_pairs.contains(&pair_key(p)))
                .cloned()
                .collect(),
            new_findings: after
                .findings
                .iter()
                .filter(|f| !old_keys.contains(&f.key()))
                .cloned()
                .collect(),
            fixed_findings: before
                .findings
                .iter()
                .filter(|f| !new_keys.contains(&f.key()))
                .cloned()
                .collect(),
        },
        extra,
    )
}

/// Tokens before and after: the catalog, each client's always-loaded set and deferred list,
/// and every tool whose count changed.
fn token_deltas(
    before: &CatalogReport,
    after: &CatalogReport,
    old: &BTreeMap<String, usize>,
    new: &BTreeMap<String, usize>,
) -> Vec<TokenDelta> {
    let delta = |a: Option<usize>, b: Option<usize>| b.unwrap_or(0) as i64 - a.unwrap_or(0) as i64;
    let mut tokens = vec![TokenDelta {
        what: "catalog".into(),
        counter: after.cost.counter.clone(),
        before: Some(before.cost.total_tokens),
        after: Some(after.cost.total_tokens),
        delta: delta(
            Some(before.cost.total_tokens),
            Some(after.cost.total_tokens),
        ),
    }];
    for c in &after.clients {
        let Some(b) = before.clients.iter().find(|b| b.client == c.client) else {
            continue;
        };
        tokens.push(TokenDelta {
            what: format!("{} always-loaded", c.client),
            counter: c.counter.clone(),
            before: Some(b.loaded_tokens),
            after: Some(c.loaded_tokens),
            delta: delta(Some(b.loaded_tokens), Some(c.loaded_tokens)),
        });
        let (lb, la) = (
            b.listing_tokens.get(&c.listing),
            c.listing_tokens.get(&c.listing),
        );
        tokens.push(TokenDelta {
            what: format!("{} deferred list ({})", c.client, c.listing),
            counter: c.counter.clone(),
            before: lb.copied(),
            after: la.copied(),
            delta: delta(lb.copied(), la.copied()),
        });
    }
    let ids: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for id in ids {
        let (b, a) = (old.get(id).copied(), new.get(id).copied());
        if b != a {
            tokens.push(TokenDelta {
                what: id.clone(),
                counter: after.cost.counter.clone(),
                before: b,
                after: a,
                delta: delta(b, a),
            });
        }
    }
    tokens
}

/// Tools harder or easier to find under each client than in the baseline; a harder one is
/// also a finding.
fn findability(
    before: &CatalogReport,
    after: &CatalogReport,
    catalog: &Catalog,
    locator: &mut Locator,
) -> (Vec<FindDelta>, Vec<Finding>) {
    let mut findability = Vec::new();
    let mut extra = Vec::new();
    for c in &after.clients {
        let Some(b) = before.clients.iter().find(|b| b.client == c.client) else {
            continue;
        };
        for r in &c.tools {
            let Some(old) = b.tools.iter().find(|o| o.id == r.id) else {
                continue;
            };
            let (sa, sb) = (standing(r, c.max_results), standing(old, b.max_results));
            let harder = sa.0 < sb.0 || (sa.0 == sb.0 && sa.1 > sb.1);
            let easier = sa.0 > sb.0 || (sa.0 == sb.0 && sa.1 < sb.1);
            if !harder && !easier {
                continue;
            }
            let row = FindDelta {
                client: c.client.clone(),
                tool: r.id.clone(),
                change: if harder { "harder" } else { "easier" }.into(),
                before: describe(old),
                after: describe(r),
            };
            if harder && let Some(i) = catalog.index_of(&r.id) {
                let mut f = finding(
                    "harder-to-find",
                    Level::Warning,
                    Some(catalog.get(i)),
                    format!(
                        "{} is harder to find under {} than in the baseline: {} (was {})",
                        r.id, c.client, row.after, row.before
                    ),
                );
                f.client = Some(c.client.clone());
                f.subs = description_paths();
                extra.push(f.build(locator));
            }
            findability.push(row);
        }
    }
    (findability, extra)
}
