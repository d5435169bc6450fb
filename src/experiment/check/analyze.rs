//! One version of a catalog analyzed: cost, description and name findings, near-duplicates, and per client its reachability, confusable pairs and labeled queries.

use super::*;

/// Tokens of each top-level parameter's schema as compact JSON.
pub(super) fn parameter_costs(catalog: &Catalog, counter: CounterKind) -> Vec<ParameterCost> {
    let tokenizer = counter.tokenizer();
    let mut out = Vec::new();
    for t in catalog.tools() {
        if let Some(props) = t.input_schema.get("properties").and_then(|p| p.as_object()) {
            for (name, schema) in props {
                let text = format!("{}:{}", serde_json::Value::String(name.clone()), schema);
                out.push(ParameterCost {
                    tool: t.id.clone(),
                    parameter: name.clone(),
                    tokens: tokenizer.count(&text),
                });
            }
        }
    }
    out.sort_by(|a, b| {
        b.tokens
            .cmp(&a.tokens)
            .then_with(|| a.tool.cmp(&b.tool))
            .then_with(|| a.parameter.cmp(&b.parameter))
    });
    out.truncate(COSTLIEST);
    out
}

/// One catalog version under analysis: what every section reads, and what it has found.
struct Analysis<'a> {
    catalog: &'a Arc<Catalog>,
    options: &'a CheckOptions,
    locator: &'a mut Locator,
    findings: Vec<Finding>,
    /// Every tool's tokens, per counter, counted once.
    counts: HashMap<CounterKind, Vec<usize>>,
}

impl Analysis<'_> {
    fn tools(&self) -> &[Tool] {
        self.catalog.tools()
    }

    fn counts_of(&mut self, k: CounterKind) -> Vec<usize> {
        let catalog = self.catalog;
        self.counts
            .entry(k)
            .or_insert_with(|| k.tools(catalog).counts().to_vec())
            .clone()
    }

    fn push(&mut self, f: FindingBuilder<'_>) {
        let built = f.build(self.locator);
        self.findings.push(built);
    }
}

pub(super) fn analyze(
    catalog: &Arc<Catalog>,
    queries: Option<&QuerySet>,
    options: &CheckOptions,
    locator: &mut Locator,
) -> Result<CatalogReport> {
    if let Some(c) = options.counter.filter(|c| !c.is_local()) {
        return Err(Error::usage(format!(
            "--counter {c} counts through Anthropic's API; check counts locally: use \
             anthropic-estimate"
        )));
    }
    let mut a = Analysis {
        catalog,
        options,
        locator,
        findings: Vec::new(),
        counts: HashMap::new(),
    };
    let primary = options.counter.unwrap_or_else(|| {
        options
            .clients
            .first()
            .map_or(CounterKind::O200kJson, |c| c.counter())
    });
    let cost = cost(&mut a, primary);
    description_findings(&mut a);
    name_collisions(&mut a);
    let near_duplicates = near_duplicates(&mut a);
    let mut scorers: HashMap<ScorerKind, Box<dyn Scorer>> = HashMap::new();
    let mut pairs: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    let mut clients = Vec::new();
    let mut query_reports = Vec::new();
    for &client in &options.clients {
        let kind = client.scorer();
        if let std::collections::hash_map::Entry::Vacant(e) = scorers.entry(kind) {
            e.insert(crate::search::build_spec(
                &ScorerSpec::Builtin(kind),
                catalog.clone(),
                &ScorerConfig::default(),
            )?);
        }
        let scorer = scorers[&kind].as_ref();
        let (report, deferred) = client_report(&mut a, client, scorer, &mut pairs)?;
        if let Some(set) = queries {
            query_reports.push(run_queries(
                set,
                catalog,
                scorer,
                &deferred,
                report.max_results,
                &report.client,
                &mut a.findings,
            )?);
        }
        clients.push(report);
    }
    let confusable = confusable_pairs(&mut a, pairs);
    let mut findings = a.findings;
    findings.sort();
    Ok(CatalogReport {
        tool_count: catalog.len(),
        clients,
        cost,
        confusable,
        near_duplicates,
        queries: queries.map(|_| query_reports),
        findings,
    })
}

/// Tokens per tool under the primary counter, the costliest tools and parameters, and the
/// budgets' findings.
fn cost(a: &mut Analysis<'_>, primary: CounterKind) -> Cost {
    let primary_counts = a.counts_of(primary);
    let mut tool_costs: Vec<ToolCost> = a
        .tools()
        .iter()
        .zip(&primary_counts)
        .map(|(t, &n)| ToolCost {
            id: t.id.clone(),
            tokens: n,
        })
        .collect();
    let total_tokens: usize = primary_counts.iter().sum();
    let mut costliest = tool_costs.clone();
    costliest.sort_by(|a, b| b.tokens.cmp(&a.tokens).then_with(|| a.id.cmp(&b.id)));
    costliest.truncate(COSTLIEST);
    tool_costs.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(max) = a.options.max_tokens
        && total_tokens > max
    {
        let mut f = finding(
            "over-budget",
            Level::Error,
            None,
            format!(
                "the whole catalog costs {total_tokens} tokens ({primary}), over --max-tokens {max}"
            ),
        );
        f.subject = Some("catalog".into());
        a.push(f);
    }
    if let Some(max) = a.options.max_tool_tokens {
        let catalog = a.catalog;
        for (t, &n) in catalog.tools().iter().zip(&primary_counts) {
            if n > max {
                let mut f = finding(
                    "over-budget",
                    Level::Error,
                    Some(t),
                    format!(
                        "{} costs {n} tokens ({primary}), over --max-tool-tokens {max}",
                        t.id
                    ),
                );
                f.subject = Some("tool".into());
                a.push(f);
            }
        }
    }
    Cost {
        counter: primary.name().to_string(),
        total_tokens,
        tools: tool_costs,
        costliest,
        costliest_parameters: parameter_costs(a.catalog, primary),
    }
}

/// Missing, short or long descriptions, and parameters without one.
fn description_findings(a: &mut Analysis<'_>) {
    let catalog = a.catalog;
    for t in catalog.tools() {
        let d = t.description.trim();
        let words = d.split_whitespace().count();
        let desc = |id: &'static str, level: Level, message: String| {
            let mut f = finding(id, level, Some(t), message);
            f.subs = description_paths();
            f
        };
        if d.is_empty() {
            a.push(desc(
                "no-description",
                Level::Error,
                format!(
                    "{} has no description: no search can match its purpose",
                    t.id
                ),
            ));
        } else if words < SHORT_DESCRIPTION_WORDS {
            a.push(desc(
                "short-description",
                Level::Warning,
                format!(
                    "{}'s description has {words} words (fewer than {SHORT_DESCRIPTION_WORDS}): little for a search to match",
                    t.id
                ),
            ));
        } else if d.chars().count() > LONG_DESCRIPTION_CHARS {
            a.push(desc(
                "long-description",
                Level::Warning,
                format!(
                    "{}'s description has {} characters (over {LONG_DESCRIPTION_CHARS}; clients may cut it)",
                    t.id,
                    d.chars().count()
                ),
            ));
        }
        parameter_findings(a, t);
    }
}

/// Parameters without a description (a `$ref` parameter is described where it points).
fn parameter_findings(a: &mut Analysis<'_>, t: &Tool) {
    let Some(props) = t.input_schema.get("properties").and_then(|p| p.as_object()) else {
        return;
    };
    for (name, schema) in props {
        let has = schema.get("$ref").is_some()
            || schema
                .get("description")
                .and_then(|d| d.as_str())
                .is_some_and(|d| !d.trim().is_empty());
        if !has {
            let mut f = finding(
                "param-no-description",
                Level::Warning,
                Some(t),
                format!("{}: parameter {name:?} has no description", t.id),
            );
            f.subject = Some(name.clone());
            f.subs = parameter_paths(name);
            a.push(f);
        }
    }
}

/// Names that differ only in case or punctuation.
fn name_collisions(a: &mut Analysis<'_>) {
    let tools = a.catalog.tools();
    let mut by_folded: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, t) in tools.iter().enumerate() {
        by_folded.entry(folded_name(&t.id)).or_default().push(i);
    }
    for group in by_folded.values().filter(|g| g.len() > 1) {
        for &i in group {
            let others: Vec<&str> = group
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| tools[j].id.as_str())
                .collect();
            let mut f = finding(
                "name-collision",
                Level::Error,
                Some(&tools[i]),
                format!(
                    "{} differs from {} only in case or punctuation: select: and a model's \
                     spelling cannot tell them apart",
                    tools[i].id,
                    others.join(", ")
                ),
            );
            f.subject = Some(others.join(","));
            a.push(f);
        }
    }
}

/// Near-duplicates across servers (same name parts, alike descriptions), each cluster sorted.
fn near_duplicates(a: &mut Analysis<'_>) -> Vec<Vec<String>> {
    let catalog = a.catalog;
    let tools = catalog.tools();
    let search_tool = catalog.search_tool();
    let siblings = Siblings::find(catalog, |i| Some(i) != search_tool);
    let mut near_duplicates: Vec<Vec<String>> = siblings
        .clusters()
        .iter()
        .map(|c| {
            let mut ids: Vec<String> = c.iter().map(|&i| tools[i].id.clone()).collect();
            ids.sort();
            ids
        })
        .collect();
    near_duplicates.sort();
    for cluster in &near_duplicates {
        let first = catalog.index_of(&cluster[0]).map(|i| &tools[i]);
        let mut f = finding(
            "near-duplicate",
            Level::Note,
            first,
            format!(
                "near-duplicates across servers (same name parts, alike descriptions): {}",
                cluster.join(", ")
            ),
        );
        f.subject = Some(cluster[1..].join(","));
        a.push(f);
    }
    near_duplicates
}

/// What the deferred list costs in each listing mode.
fn listing_tokens(
    catalog: &Catalog,
    deferred_ids: &[usize],
    counter: CounterKind,
) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for mode in [
        Listing::Names,
        Listing::Descriptions,
        Listing::Servers,
        Listing::Stubs,
        Listing::None,
    ] {
        let n = match mode {
            Listing::None => 0,
            Listing::Stubs => deferred_ids
                .iter()
                .map(|&i| {
                    let t = catalog.get(i);
                    counter.surface(&t.id, &t.description)
                })
                .sum(),
            _ => {
                let text = crate::simulate::listing::full_text(catalog, deferred_ids, mode);
                if text.is_empty() {
                    0
                } else {
                    counter.text(&text)
                }
            }
        };
        out.insert(mode.name().to_string(), n);
    }
    out
}

/// One client: what it loads and defers, what that costs, and whether its search reaches
/// each deferred tool; the tools it defers come back beside the report.
fn client_report(
    a: &mut Analysis<'_>,
    client: CheckClient,
    scorer: &dyn Scorer,
    pairs: &mut BTreeMap<(usize, usize), BTreeSet<String>>,
) -> Result<(ClientReport, Vec<bool>)> {
    let catalog = a.catalog;
    let tools = catalog.tools();
    let prof = profile(client.client);
    let counter = a.options.counter.unwrap_or_else(|| client.counter());
    let client_counts = a.counts_of(counter);
    let deferred = deferred_tools(catalog, client);
    let deferred_ids: Vec<usize> = (0..tools.len()).filter(|&i| deferred[i]).collect();
    let loaded_ids: Vec<usize> = (0..tools.len()).filter(|&i| !deferred[i]).collect();
    let search_tool_tokens = if deferred_ids.is_empty() || catalog.search_tool().is_some() {
        0
    } else {
        counter.tool(&crate::simulate::default_search_tool())
    };
    let loaded_tokens =
        loaded_ids.iter().map(|&i| client_counts[i]).sum::<usize>() + search_tool_tokens;
    let client_name = client.to_string();
    if let Some(max) = a.options.max_tokens
        && loaded_tokens > max
    {
        let mut f = finding(
            "over-budget",
            Level::Error,
            None,
            format!(
                "{client_name}'s always-loaded set costs {loaded_tokens} tokens ({counter}), \
                 over --max-tokens {max}"
            ),
        );
        f.subject = Some("always-loaded".into());
        f.client = Some(client_name.clone());
        a.push(f);
    }
    let limit = prof.max_results.value;
    let search = ClientSearch {
        name: &client_name,
        kind: client.scorer(),
        scorer,
        deferred: &deferred,
        limit,
    };
    let (reach, unreachable, hard) = reachability(a, &search, &deferred_ids, pairs)?;
    let ids = |v: &[usize]| {
        let mut s: Vec<String> = v.iter().map(|&i| tools[i].id.clone()).collect();
        s.sort();
        s
    };
    let report = ClientReport {
        client: client_name.clone(),
        title: prof.title.to_string(),
        scorer: client.scorer().name().to_string(),
        max_results: limit,
        counter: counter.name().to_string(),
        listing: prof.listing.value.name().to_string(),
        loaded: ids(&loaded_ids),
        deferred: ids(&deferred_ids),
        loaded_tokens,
        search_tool_tokens,
        deferred_tokens: deferred_ids.iter().map(|&i| client_counts[i]).sum(),
        listing_tokens: listing_tokens(catalog, &deferred_ids, counter),
        unreachable,
        hard_to_find: hard,
        tools: reach,
    };
    Ok((report, deferred))
}

/// A client's search over the tools it defers.
struct ClientSearch<'a> {
    name: &'a str,
    kind: ScorerKind,
    scorer: &'a dyn Scorer,
    deferred: &'a [bool],
    limit: usize,
}

/// Each deferred tool searched by every form; the tools no form finds, and those some form
/// misses, are findings; a form's first hit that is another tool makes a confusable pair.
fn reachability(
    a: &mut Analysis<'_>,
    search: &ClientSearch<'_>,
    deferred_ids: &[usize],
    pairs: &mut BTreeMap<(usize, usize), BTreeSet<String>>,
) -> Result<(Vec<Reachability>, usize, usize)> {
    let catalog = a.catalog;
    let tools = catalog.tools();
    let (client_name, kind, limit) = (search.name, search.kind, search.limit);
    let mut reach = Vec::new();
    let (mut unreachable, mut hard) = (0, 0);
    for &i in deferred_ids {
        let t = &tools[i];
        let results = form_results(search, tools, i, pairs)?;
        let found = results.iter().filter(|r| r.rank.is_some()).count();
        let missed: Vec<&str> = results
            .iter()
            .filter(|r| r.rank.is_none())
            .map(|r| r.form.as_str())
            .collect();
        if found == 0 {
            unreachable += 1;
            let mut f = finding(
                "unreachable",
                Level::Error,
                Some(t),
                format!(
                    "{client_name} defers {} and its {kind} search finds it by none of: {} \
                     (top {limit})",
                    t.id,
                    missed.join(", ")
                ),
            );
            f.client = Some(client_name.to_string());
            a.push(f);
        } else if found < results.len() {
            hard += 1;
            let mut f = finding(
                "hard-to-find",
                Level::Warning,
                Some(t),
                format!(
                    "{client_name} defers {} and its {kind} search misses it by: {} (top {limit})",
                    t.id,
                    missed.join(", ")
                ),
            );
            f.client = Some(client_name.to_string());
            a.push(f);
        }
        reach.push(Reachability {
            id: t.id.clone(),
            found,
            forms: results.len(),
            results,
        });
    }
    reach.sort_by(|a, b| a.id.cmp(&b.id));
    Ok((reach, unreachable, hard))
}

/// Every form of tool `i` searched; a words or description form whose first hit is another
/// tool adds that pair.
fn form_results(
    search: &ClientSearch<'_>,
    tools: &[Tool],
    i: usize,
    pairs: &mut BTreeMap<(usize, usize), BTreeSet<String>>,
) -> Result<Vec<FormResult>> {
    let mut results = Vec::new();
    for (form, query) in forms(&tools[i], search.kind) {
        let hits = if query.trim().is_empty() {
            Vec::new()
        } else {
            super::forms::search(search.scorer, &query, search.deferred, search.limit)?
        };
        let rank = hits.iter().position(|h| h.tool == i).map(|r| r + 1);
        let first = hits.first().filter(|h| h.tool != i).map(|h| h.tool);
        if let Some(w) = first
            && matches!(form, "words" | "description")
        {
            pairs
                .entry((i, w))
                .or_default()
                .insert(format!("{}/{form}", search.name));
        }
        results.push(FormResult {
            form: form.to_string(),
            query,
            rank,
            first: first.map(|w| tools[w].id.clone()),
        });
    }
    Ok(results)
}

/// The pairs where a tool wins another's own query, with each side's distinguishing words.
fn confusable_pairs(
    a: &mut Analysis<'_>,
    pairs: BTreeMap<(usize, usize), BTreeSet<String>>,
) -> Vec<ConfusablePair> {
    let tools = a.catalog.tools();
    let mut confusable = Vec::new();
    for ((i, w), seen) in pairs {
        let (x, y) = (&tools[i], &tools[w]);
        let pair = ConfusablePair {
            intended: x.id.clone(),
            winner: y.id.clone(),
            seen: seen.into_iter().collect(),
            intended_words: distinguishing(&x.description, &y.description),
            winner_words: distinguishing(&y.description, &x.description),
        };
        let mut f = finding(
            "confusable",
            Level::Warning,
            Some(x),
            format!(
                "{} ranks first for {}'s own query ({}); words only {} has: {}; only {} has: {}",
                y.id,
                x.id,
                pair.seen.join(", "),
                x.id,
                words_or_none(&pair.intended_words),
                y.id,
                words_or_none(&pair.winner_words),
            ),
        );
        f.subject = Some(y.id.clone());
        a.push(f);
        confusable.push(pair);
    }
    confusable.sort_by(|a, b| (&a.intended, &a.winner).cmp(&(&b.intended, &b.winner)));
    confusable
}

pub(super) fn words_or_none(w: &[String]) -> String {
    if w.is_empty() {
        "(none)".into()
    } else {
        w.join(" ")
    }
}

pub(super) fn run_queries(
    set: &QuerySet,
    catalog: &Catalog,
    scorer: &dyn Scorer,
    deferred: &[bool],
    limit: usize,
    client: &str,
    findings: &mut Vec<Finding>,
) -> Result<QueryReport> {
    let path = set.path.display().to_string();
    let place = |q: &crate::eval::queries::LabeledQuery| (Some(path.clone()), Some(q.position));
    let mut per_tool: BTreeMap<usize, (usize, usize, Vec<&str>)> = BTreeMap::new();
    let mut first_miss: BTreeMap<usize, Option<crate::error::Position>> = BTreeMap::new();
    let (mut no_match, mut fp, mut tn) = (0, 0, 0);
    let mut recalls = Vec::new();
    for q in &set.queries {
        let hits = if deferred.iter().any(|&d| d) {
            search(scorer, &q.query, deferred, limit)?
        } else {
            Vec::new()
        };
        if q.expected_tools.is_empty() {
            no_match += 1;
            if let Some(h) = hits.first() {
                fp += 1;
                let (file, at) = place(q);
                findings.push(Finding {
                    level: Level::Warning,
                    id: "false-positive".into(),
                    tool: Some(catalog.get(h.tool).id.clone()),
                    subject: Some(q.id.clone()),
                    client: Some(client.to_string()),
                    file,
                    line: at.map(|p| p.line),
                    column: at.map(|p| p.column),
                    message: format!(
                        "query {} expects no tool, and {client}'s search returns {} first (score {})",
                        q.id,
                        catalog.get(h.tool).id,
                        crate::number::round(h.score, 3)
                    ),
                });
            } else {
                tn += 1;
            }
            continue;
        }
        let mut found = 0;
        for &e in &q.expected_tools {
            let entry = per_tool.entry(e).or_insert((0, 0, Vec::new()));
            entry.0 += 1;
            if !deferred[e] || hits.iter().any(|h| h.tool == e) {
                entry.1 += 1;
                found += 1;
            } else {
                entry.2.push(&q.id);
                first_miss.entry(e).or_insert(Some(q.position));
            }
        }
        recalls.push(found as f64 / q.expected_tools.len() as f64);
    }
    for (&e, (_, _, missed)) in &per_tool {
        if missed.is_empty() {
            continue;
        }
        let at = first_miss.get(&e).copied().flatten();
        findings.push(Finding {
            level: Level::Warning,
            id: "query-miss".into(),
            tool: Some(catalog.get(e).id.clone()),
            subject: Some(missed.join(",")),
            client: Some(client.to_string()),
            file: Some(path.clone()),
            line: at.map(|p| p.line),
            column: at.map(|p| p.column),
            message: format!(
                "{client}'s search misses {} within {limit} for {}",
                catalog.get(e).id,
                missed.join(", ")
            ),
        });
    }
    let rows = per_tool
        .into_iter()
        .map(|(e, (n, found, _))| ToolRecall {
            id: catalog.get(e).id.clone(),
            queries: n,
            found,
            recall: crate::number::round(found as f64 / n as f64, 3),
        })
        .collect();
    let mut rows: Vec<ToolRecall> = rows;
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(QueryReport {
        client: client.to_string(),
        k: limit,
        queries: set.queries.len(),
        recall: (!recalls.is_empty())
            .then(|| crate::number::round(recalls.iter().sum::<f64>() / recalls.len() as f64, 3)),
        per_tool: rows,
        no_match,
        false_positives: fp,
        true_negatives: tn,
    })
}

/// The queries whose expected tools all exist in `catalog`, indexed into it.
pub(super) fn remap_queries(set: &QuerySet, catalog: &Catalog) -> QuerySet {
    let queries = set
        .queries
        .iter()
        .filter_map(|q| {
            let tools: Option<Vec<usize>> =
                q.expected.iter().map(|id| catalog.index_of(id)).collect();
            tools.map(|expected_tools| crate::eval::queries::LabeledQuery {
                expected_tools,
                ..q.clone()
            })
        })
        .collect();
    QuerySet {
        path: set.path.clone(),
        queries,
    }
}
