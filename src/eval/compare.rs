//! Compares two `eval --format json` results: per scorer present in both and per metric, the
//! baseline, the candidate and their difference (candidate − baseline).
//!
//! When both files carry `per_query` rows for a scorer (`eval --per-query`), queries are paired
//! by id and each difference gets a 95% paired bootstrap interval of the mean per-query
//! difference and the p-value of a paired randomization (sign-flip) test (10,000 resamples
//! each, fixed seeds), and the queries that got worse or better on the checked metric are
//! listed. Queries without the metric (no-match queries have only `refusal`) are left out of
//! its interval and test. Without rows only the aggregates are compared, and the result
//! says so (`paired: false`).
//!
//! A regression is a difference below −max_drop on the checked metric (rounded to 6 decimals
//! first, so 0.51 → 0.50 with max_drop 0.01 is not a regression however floats round).
//!
//! The gate fails closed: a scorer of the baseline that the candidate lacks, or a checked metric
//! it lacks, is a failed check (unless allowed by name); files that evaluated different query
//! sets are refused (an input error) unless `paired_only`, and then every figure — means,
//! intervals, worse/better — is computed over the queries both files ranked; no query in common
//! is refused too.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::bootstrap::{self, mean_intervals, sign_flip_p_values};
use super::metrics::{Metric, round_metric};
use super::pool::PoolInfo;
use super::result::{EvalResult, QueryResult, ScorerResult, parse_eval_result};
use crate::document::{Document, Seg, with_path};
use crate::error::{Error, Result};
use crate::path;
use crate::search::ScorerName;

mod verify;
pub use verify::*;

/// The metric checked when `--metric` is not given.
pub const DEFAULT_METRIC: &str = "recall@5";
/// Tolerated drop when `--max-drop` is not given: one percentage point. Evaluations are
/// deterministic, so any drop is a real change; this tolerance lets a change that trades a
/// few queries pass while a real loss fails.
pub const DEFAULT_MAX_DROP: f64 = 0.01;

/// `--paired-only` fails when fewer than this share of the larger file's queries pair up.
pub const DEFAULT_MIN_PAIRED_SHARE: f64 = 0.5;

/// What to check and how strictly.
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOptions {
    pub metric: Metric,
    pub max_drop: f64,
    /// Scorers of the baseline the candidate may lack without failing the check.
    pub allow_missing: Vec<String>,
    /// Compare only the queries both files ranked, when their query sets differ.
    pub paired_only: bool,
    /// With `paired_only`: the least share of the larger file's queries that must be paired.
    pub min_paired_share: f64,
    /// Scorers compared under different names (`--pair BASE=CANDIDATE`): the baseline's
    /// scorer first, the candidate's second.
    pub pairs: Vec<(String, String)>,
}

impl CompareOptions {
    pub fn new(metric: &str, max_drop: f64) -> Self {
        CompareOptions {
            metric: Metric::new(metric),
            max_drop,
            allow_missing: Vec::new(),
            paired_only: false,
            min_paired_share: DEFAULT_MIN_PAIRED_SHARE,
            pairs: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub baseline: String,
    pub candidate: String,
    /// The metric checked for regressions.
    pub metric: Metric,
    pub max_drop: f64,
    /// Whether figures were restricted to the queries both files ranked.
    #[serde(default)]
    pub paired_only: bool,
    pub results: Vec<ScorerComparison>,
    /// Scorers that fail the check by dropping.
    pub regressions: Vec<ScorerName>,
    /// What the candidate lacks and the check needs (`bm25`, or `bm25: recall@5`): each fails
    /// the check unless its scorer was allowed to be missing.
    #[serde(default)]
    pub missing: Vec<String>,
    /// Scorers missing from the candidate that the caller allowed.
    #[serde(default)]
    pub allowed_missing: Vec<ScorerName>,
    pub only_in_baseline: Vec<ScorerName>,
    pub only_in_candidate: Vec<ScorerName>,
    /// Caveats a reader must know (aggregates only, different query sets).
    pub notes: Vec<String>,
    /// Checked metrics that are n/a (a file without a query that expects a tool): each fails
    /// the check, which has nothing to compare.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScorerComparison {
    pub scorer: ScorerName,
    /// The candidate's scorer when it has another name (`--pair`); absent when the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate_scorer: Option<ScorerName>,
    /// Whether per-query rows were paired (else the intervals are null).
    pub paired: bool,
    /// Queries present in both files' rows.
    pub paired_queries: usize,
    pub metrics: Vec<MetricDiff>,
    pub regression: bool,
    /// Queries whose checked metric fell, most first (ties by id).
    pub worse: Vec<QueryDiff>,
    /// Queries whose checked metric rose, most first (ties by id).
    pub better: Vec<QueryDiff>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDiff {
    pub metric: Metric,
    /// `None` (n/a): the file has no query that expects a tool, so only `refusal` means
    /// anything there.
    pub base: Option<f64>,
    pub candidate: Option<f64>,
    pub difference: Option<f64>,
    /// 95% paired bootstrap interval of the mean per-query difference.
    pub ci95: Option<[f64; 2]>,
    /// Two-sided p-value of the paired randomization test: how often randomly swapping each
    /// query's two results gives a mean difference at least this far from 0.
    #[serde(default)]
    pub p_value: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryDiff {
    pub id: String,
    pub base: f64,
    pub candidate: f64,
}

impl Comparison {
    /// The scorers that dropped too far, as `bm25, hybrid`.
    pub fn regression_names(&self) -> String {
        let names: Vec<&str> = self.regressions.iter().map(ScorerName::as_str).collect();
        names.join(", ")
    }

    /// Whether the check failed: a drop beyond the tolerance, or something missing.
    pub fn has_regression(&self) -> bool {
        !self.regressions.is_empty() || !self.missing.is_empty() || !self.unchecked.is_empty()
    }
}

/// Compares `candidate` against `base`, checking `metric` with tolerance `max_drop`.
pub fn compare(
    base: &EvalFile,
    candidate: &EvalFile,
    options: &CompareOptions,
) -> Result<Comparison> {
    let max_drop = options.max_drop;
    if !(max_drop.is_finite() && max_drop >= 0.0) {
        return Err(Error::usage(format!(
            "--max-drop must be a number ≥ 0, got {max_drop}"
        )));
    }
    // Nothing is trusted before it is checked: a vacuous, impossible or self-contradicting file
    // is refused, never compared.
    super::verify::verify(&base.path, &base.result).map_err(Error::usage)?;
    super::verify::verify(&candidate.path, &candidate.result).map_err(Error::usage)?;
    compare_verified(base, candidate, options)
}

/// [`compare`] of two files already verified.
fn compare_verified(
    base: &EvalFile,
    candidate: &EvalFile,
    options: &CompareOptions,
) -> Result<Comparison> {
    let max_drop = options.max_drop;
    let (b, c) = (&base.result, &candidate.result);
    let mut notes = frame_notes(b, c);
    let mut results = Vec::new();
    let (mut missing, mut allowed_missing, mut unchecked) = (Vec::new(), Vec::new(), Vec::new());
    check_pairs(b, c, options)?;
    for rb in &b.results {
        let wanted = candidate_name(&rb.scorer, options);
        match c.results.iter().find(|r| r.scorer == wanted) {
            Some(rc) => {
                origin_notes(rb, rc, &mut notes);
                let frame = Frame {
                    base_file: &base.path,
                    cand_file: &candidate.path,
                    base_queries: b.query_count,
                    cand_queries: c.query_count,
                    base_unanswerable: answerable(b, rb) == Some(0),
                    cand_unanswerable: answerable(c, rc) == Some(0),
                };
                let mut r = compare_scorer(rb, rc, &frame, options, &mut notes)?;
                if rc.scorer != rb.scorer {
                    r.candidate_scorer = Some(rc.scorer.clone());
                }
                if r.metrics.iter().all(|m| m.metric != options.metric) {
                    missing.push(format!("{}: {}", r.scorer, options.metric));
                }
                if r.metrics
                    .iter()
                    .any(|m| m.metric == options.metric && m.difference.is_none())
                {
                    let which = match (frame.base_unanswerable, frame.cand_unanswerable) {
                        (true, true) => "neither file has a",
                        (true, false) => "the baseline has no",
                        _ => "the candidate has no",
                    };
                    unchecked.push(format!(
                        "{}: {} is n/a: {which} query that expects a tool (every query is \
                         no-match), so there is nothing to check",
                        r.scorer, options.metric
                    ));
                }
                results.push(r);
            }
            None if options
                .allow_missing
                .iter()
                .any(|a| rb.scorer == a.as_str()) =>
            {
                allowed_missing.push(rb.scorer.clone());
            }
            None if wanted != rb.scorer.as_str() => {
                missing.push(format!(
                    "{wanted} (paired with the baseline's {})",
                    rb.scorer
                ));
            }
            None => missing.push(rb.scorer.to_string()),
        }
    }
    let paired_in = |name: &ScorerName, side: usize| {
        options
            .pairs
            .iter()
            .any(|p| if side == 0 { &p.0 } else { &p.1 } == name.as_str())
    };
    let only = |x: &EvalResult, y: &EvalResult, side: usize| -> Vec<ScorerName> {
        x.results
            .iter()
            .filter(|r| {
                !y.results.iter().any(|o| o.scorer == r.scorer) && !paired_in(&r.scorer, side)
            })
            .map(|r| r.scorer.clone())
            .collect()
    };
    Ok(Comparison {
        baseline: base.path.clone(),
        candidate: candidate.path.clone(),
        metric: options.metric.clone(),
        max_drop,
        paired_only: options.paired_only,
        regressions: results
            .iter()
            .filter(|r| r.regression)
            .map(|r| r.scorer.clone())
            .collect(),
        missing,
        allowed_missing,
        results,
        only_in_baseline: only(b, c, 0),
        only_in_candidate: only(c, b, 1),
        notes,
        unchecked,
    })
}

/// The candidate scorer compared with the baseline's `name`: its `--pair`, else the same name.
fn candidate_name<'a>(name: &'a ScorerName, options: &'a CompareOptions) -> &'a str {
    options
        .pairs
        .iter()
        .find(|p| p.0 == name.as_str())
        .map_or(name.as_str(), |p| p.1.as_str())
}

/// Every `--pair` names a scorer of each file, and each scorer is paired once.
fn check_pairs(b: &EvalResult, c: &EvalResult, options: &CompareOptions) -> Result<()> {
    let names = |r: &EvalResult| -> String {
        let n: Vec<&str> = r.results.iter().map(|x| x.scorer.as_str()).collect();
        n.join(", ")
    };
    for (i, (base, cand)) in options.pairs.iter().enumerate() {
        if !b.results.iter().any(|r| r.scorer == base.as_str()) {
            return Err(Error::usage(format!(
                "--pair {base}={cand}: the baseline has no scorer {base:?}; it has: {}",
                names(b)
            )));
        }
        if !c.results.iter().any(|r| r.scorer == cand.as_str()) {
            return Err(Error::usage(format!(
                "--pair {base}={cand}: the candidate has no scorer {cand:?}; it has: {}",
                names(c)
            )));
        }
        if options.pairs[..i]
            .iter()
            .any(|p| p.0 == *base || p.1 == *cand)
        {
            return Err(Error::usage(format!(
                "--pair {base}={cand}: a scorer is paired twice"
            )));
        }
    }
    Ok(())
}

/// Where two compared results came from and how they were set, when a reader would otherwise
/// take them for the same search: another name, a run file, an external scorer, other settings.
fn origin_notes(rb: &ScorerResult, rc: &ScorerResult, notes: &mut Vec<String>) {
    let pair = if rb.scorer == rc.scorer {
        rb.scorer.to_string()
    } else {
        notes.push(format!(
            "the baseline's {} is compared with the candidate's {} (--pair)",
            rb.scorer, rc.scorer
        ));
        format!("{} / {}", rb.scorer, rc.scorer)
    };
    for (side, r) in [("baseline", rb), ("candidate", rc)] {
        if let Some(run) = &r.run {
            notes.push(format!(
                "{pair}: the {side}'s rankings came from a run file ({})",
                run.file
            ));
        } else if r.scorer.as_str().starts_with("exec:") || r.scorer.as_str().starts_with("mcp:") {
            notes.push(format!(
                "{pair}: the {side}'s {} is an external scorer",
                r.scorer
            ));
        }
    }
    let mut differ = Vec::new();
    for (key, value) in &rb.settings {
        match rc.settings.get(key) {
            Some(v) if v == value => {}
            Some(v) => differ.push(format!("{key} {value} → {v}")),
            None => differ.push(format!("{key} {value} → (not set)")),
        }
    }
    for (key, value) in &rc.settings {
        if !rb.settings.contains_key(key) {
            differ.push(format!("{key} (not set) → {value}"));
        }
    }
    if !differ.is_empty() {
        notes.push(format!("{pair}: settings differ: {}", differ.join(", ")));
    }
    let ks =
        |r: &ScorerResult| -> Vec<String> { r.metrics.keys().map(ToString::to_string).collect() };
    if ks(rb) != ks(rc) {
        notes.push(format!(
            "{pair}: the files report different metrics ({} vs {})",
            ks(rb).join(", "),
            ks(rc).join(", ")
        ));
    }
}

/// How many of a file's queries expect a tool, for `r`: from its rows, else from the file's
/// classes (`None`: a file without classes does not say).
fn answerable(result: &EvalResult, r: &ScorerResult) -> Option<usize> {
    if let Some(rows) = &r.per_query {
        return Some(rows.iter().filter(|q| !q.expected.is_empty()).count());
    }
    if result.classes.is_empty() {
        return None;
    }
    let no_match = result
        .classes
        .get(&super::classes::NO_MATCH)
        .copied()
        .unwrap_or(0);
    Some(result.query_count.saturating_sub(no_match))
}

/// Caveats about what the two files evaluated.
fn frame_notes(b: &EvalResult, c: &EvalResult) -> Vec<String> {
    let mut notes = Vec::new();
    if b.tool_count != c.tool_count {
        // A bigger catalog alone lowers recall: say so beside any drop the gate reports.
        notes.push(format!(
            "the files rank different numbers of tools ({} vs {}): a change of catalog moves \
             the metrics by itself",
            b.tool_count, c.tool_count
        ));
    }
    let pool = |p: &Option<PoolInfo>| match p {
        None => "no pool".to_string(),
        Some(p) => format!(
            "pool {} ({} tools added)",
            p.sources.join(", "),
            p.added_tools
        ),
    };
    let same_pool = match (&b.pool, &c.pool) {
        (Some(x), Some(y)) => x.sources == y.sources && x.added_tools == y.added_tools,
        (x, y) => x.is_none() && y.is_none(),
    };
    if !same_pool {
        notes.push(format!(
            "the files rank different pools: baseline {}, candidate {}",
            pool(&b.pool),
            pool(&c.pool)
        ));
    }
    notes
}

/// The two files, for messages and the aggregate query-set check.
struct Frame<'a> {
    base_file: &'a str,
    cand_file: &'a str,
    base_queries: usize,
    cand_queries: usize,
    /// The file has no query that expects a tool: its metrics but `refusal` are n/a.
    base_unanswerable: bool,
    cand_unanswerable: bool,
}

fn compare_scorer(
    b: &ScorerResult,
    c: &ScorerResult,
    frame: &Frame<'_>,
    options: &CompareOptions,
    notes: &mut Vec<String>,
) -> Result<ScorerComparison> {
    let (name, metric) = (&b.scorer, &options.metric);
    // Absent is an error; present and n/a (null: no query expects a tool) compares as n/a.
    let Some(&b_checked) = b.metrics.get(metric) else {
        let known: Vec<String> = b.metrics.keys().map(ToString::to_string).collect();
        return Err(Error::usage(format!(
            "metric {:?} is not in the baseline's results for scorer {:?}; it has: {}",
            metric.to_string(),
            name.as_str(),
            known.join(", ")
        )));
    };
    let pairs = pairs_to_compare(b, c, frame, options)?;
    let mut diffs: Vec<MetricDiff> = b
        .metrics
        .iter()
        .filter_map(|(m, &x)| {
            // A metric the candidate lacks is left out; one that is n/a (null) in either file
            // stays, with no difference.
            let y = *c.metrics.get(m)?;
            Some(MetricDiff {
                metric: m.clone(),
                base: x,
                candidate: y,
                difference: x.zip(y).map(|(x, y)| round_metric(y - x)),
                ci95: None,
                p_value: None,
            })
        })
        .collect();
    let mut out = ScorerComparison {
        scorer: name.clone(),
        candidate_scorer: None,
        paired: false,
        paired_queries: 0,
        metrics: Vec::new(),
        regression: b_checked
            .zip(c.metric(metric))
            .is_some_and(|(b_checked, c_checked)| {
                round_metric(c_checked - b_checked) < -options.max_drop
            }),
        worse: Vec::new(),
        better: Vec::new(),
    };
    match pairs {
        Some(pairs) => {
            let (nb, nc) = (
                b.per_query.as_ref().map_or(0, Vec::len),
                c.per_query.as_ref().map_or(0, Vec::len),
            );
            if pairs.len() < nb.max(nc) {
                notes.push(format!(
                    "{name}: --paired-only kept the {} queries both files ranked and dropped {} of the baseline's {nb} and {} of the candidate's {nc}",
                    pairs.len(),
                    nb - pairs.len(),
                    nc - pairs.len()
                ));
            }
            pair(&mut out, &mut diffs, &pairs, metric);
            // Every figure over the same paired queries: the checked one too.
            out.regression = diffs
                .iter()
                .find(|d| &d.metric == metric)
                .is_some_and(|d| d.difference.is_some_and(|x| x < -options.max_drop));
        }
        None => notes.push(format!(
            "{name}: no per-query rows in {}: this compares the figures the files store, \
             recomputed from nothing and with no intervals (run `eval --per-query` for both)",
            match (&b.per_query, &c.per_query) {
                (None, None) => "either file",
                (None, _) => "the baseline",
                _ => "the candidate",
            }
        )),
    }
    // A file without a query that expects a tool has no recall, rank or hit to compare.
    for d in diffs.iter_mut().filter(|d| d.metric != super::run::REFUSAL) {
        if frame.base_unanswerable {
            d.base = None;
        }
        if frame.cand_unanswerable {
            d.candidate = None;
        }
        if d.base.is_none() || d.candidate.is_none() {
            (d.difference, d.ci95, d.p_value) = (None, None, None);
            if &d.metric == metric {
                out.regression = false;
            }
        }
    }
    out.metrics = diffs;
    Ok(out)
}

/// The queries to compare, paired by id, or `None` to compare aggregates (no rows). Different
/// query sets are refused unless `paired_only`; no query in common is refused always.
fn pairs_to_compare<'a>(
    b: &'a ScorerResult,
    c: &'a ScorerResult,
    frame: &Frame<'_>,
    options: &CompareOptions,
) -> Result<Option<Vec<(&'a QueryResult, &'a QueryResult)>>> {
    let name = &b.scorer;
    let (base_file, cand_file) = (frame.base_file, frame.cand_file);
    let (Some(bq), Some(cq)) = (&b.per_query, &c.per_query) else {
        if options.paired_only {
            return Err(Error::usage(format!(
                "--paired-only needs per-query rows for {name} in both files (run `eval \
                 --per-query`)"
            )));
        }
        if frame.base_queries != frame.cand_queries {
            return Err(Error::usage(format!(
                "{name}: the files evaluate different query sets ({} queries in {base_file}, {} \
                 in {cand_file}); averages over different queries cannot be compared: evaluate \
                 the same queries, or save both with `eval --per-query` and use --paired-only",
                frame.base_queries, frame.cand_queries
            )));
        }
        return Ok(None);
    };
    let b_ids = unique_ids(bq, name.as_str(), base_file)?;
    let c_ids = unique_ids(cq, name.as_str(), cand_file)?;
    let pairs: Vec<_> = bq
        .iter()
        .filter_map(|x| Some((x, *c_ids.get(x.id.as_str())?)))
        .collect();
    let same = pairs.len() == b_ids.len() && pairs.len() == c_ids.len();
    if pairs.is_empty() {
        return Err(Error::usage(format!(
            "{name}: no query id in common ({} in {base_file}, {} in {cand_file}); nothing to \
             compare",
            bq.len(),
            cq.len()
        )));
    }
    check_same_labels(&pairs, name.as_str(), base_file, cand_file)?;
    if !same && options.paired_only {
        let kept = pairs.len() as f64 / bq.len().max(cq.len()) as f64;
        if kept < options.min_paired_share {
            return Err(Error::usage(format!(
                "{name}: --paired-only would keep {} of {} queries in {base_file} and {} in {cand_file} ({:.0}%), below the {:.0}% --min-paired-share allows: the two files hardly evaluate the same set",
                pairs.len(),
                bq.len(),
                cq.len(),
                kept * 100.0,
                options.min_paired_share * 100.0
            )));
        }
    }
    if !same && !options.paired_only {
        return Err(Error::usage(format!(
            "{name}: the files evaluate different query sets ({} queries in {base_file}, {} in \
             {cand_file}, {} in common); compare like for like, or add --paired-only to compare \
             the {} in common",
            bq.len(),
            cq.len(),
            pairs.len(),
            pairs.len()
        )));
    }
    Ok(Some(pairs))
}

/// Paired queries must ask the same thing with the same labels: a query set relabeled between
/// two files would otherwise pass as a scoring change. Refused, naming the queries.
fn check_same_labels(
    pairs: &[(&QueryResult, &QueryResult)],
    scorer: &str,
    base_file: &str,
    cand_file: &str,
) -> Result<()> {
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    let differ: Vec<&str> = pairs
        .iter()
        .filter(|(x, y)| {
            sorted(&x.expected) != sorted(&y.expected)
                || (!x.query.is_empty() && !y.query.is_empty() && x.query != y.query)
        })
        .map(|(x, _)| x.id.as_str())
        .collect();
    if differ.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = differ.iter().take(5).copied().collect();
    Err(Error::usage(format!(
        "{scorer}: {} paired {} differ in their expected tools or text between {base_file} and {cand_file} ({}{}): they are not the same queries, so their scores cannot be compared",
        differ.len(),
        if differ.len() == 1 {
            "query"
        } else {
            "queries"
        },
        shown.join(", "),
        if differ.len() > shown.len() {
            ", ..."
        } else {
            ""
        }
    )))
}

fn unique_ids<'a>(
    rows: &'a [QueryResult],
    scorer: &str,
    file: &str,
) -> Result<HashMap<&'a str, &'a QueryResult>> {
    let mut by_id = HashMap::with_capacity(rows.len());
    for q in rows {
        if by_id.insert(q.id.as_str(), q).is_some() {
            return Err(Error::usage(format!(
                "{file}: scorer {scorer} has query id {:?} twice in per_query",
                q.id
            )));
        }
    }
    Ok(by_id)
}

/// Pairs per-query rows: each metric's means over the pairs, intervals of the mean difference,
/// and the queries that got worse or better on the checked metric.
fn pair(
    out: &mut ScorerComparison,
    diffs: &mut [MetricDiff],
    pairs: &[(&QueryResult, &QueryResult)],
    metric: &Metric,
) {
    out.paired = true;
    out.paired_queries = pairs.len();
    // Means over the pairs (equal to the files' averages when the query sets are the same).
    // Rows without the metric — no-match queries carry only `refusal` — stay out of its means,
    // interval and test.
    for d in diffs.iter_mut() {
        let (xs, ys): (Vec<f64>, Vec<f64>) = pairs
            .iter()
            .filter_map(|(x, y)| Some((*x.metrics.get(&d.metric)?, *y.metrics.get(&d.metric)?)))
            .unzip();
        if xs.is_empty() {
            continue;
        }
        let (base, candidate) = (round_metric(mean(&xs)), round_metric(mean(&ys)));
        (d.base, d.candidate) = (Some(base), Some(candidate));
        d.difference = Some(round_metric(candidate - base));
        let column: Vec<f64> = ys.iter().zip(&xs).map(|(y, x)| y - x).collect();
        (d.ci95, d.p_value) = paired_statistics(&column);
    }
    for (x, y) in pairs {
        let (Some(&a), Some(&b)) = (x.metrics.get(metric), y.metrics.get(metric)) else {
            continue;
        };
        let row = QueryDiff {
            id: x.id.clone(),
            base: a,
            candidate: b,
        };
        if b < a {
            out.worse.push(row);
        } else if b > a {
            out.better.push(row);
        }
    }
    let by_change = |a: &QueryDiff, b: &QueryDiff| {
        let (da, db) = ((a.candidate - a.base).abs(), (b.candidate - b.base).abs());
        db.total_cmp(&da).then_with(|| a.id.cmp(&b.id))
    };
    out.worse.sort_by(by_change);
    out.better.sort_by(by_change);
}

/// The bootstrap interval and the randomization p-value of one column of differences. Each
/// metric draws with the same seeds, so metrics over the same queries resample the same
/// queries.
fn paired_statistics(column: &[f64]) -> (Option<[f64; 2]>, Option<f64>) {
    let columns = [column.to_vec()];
    let ci = mean_intervals(&columns, bootstrap::RESAMPLES, bootstrap::SEED)[0]
        .map(|i| [round_metric(i.low), round_metric(i.high)]);
    let p =
        sign_flip_p_values(&columns, bootstrap::RESAMPLES, bootstrap::SEED)[0].map(round_metric);
    (ci, p)
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        0.0
    } else {
        xs.iter().sum::<f64>() / xs.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairing and the statistics, on hand-written rows (`verify` has its own tests).
    fn cmp(b: &EvalFile, c: &EvalFile, metric: &str, max_drop: f64) -> Result<Comparison> {
        compare_verified(b, c, &CompareOptions::new(metric, max_drop))
    }

    fn file(name: &str, json: &str) -> EvalFile {
        EvalFile {
            path: name.into(),
            result: serde_json::from_str(json).unwrap(),
        }
    }

    fn eval_json(recall: f64, rows: Option<&[(&str, f64)]>) -> String {
        let rows = rows.map_or(String::new(), |rows| {
            let r: Vec<String> = rows
                .iter()
                .map(|(id, v)| {
                    format!(r#"{{"id": "{id}", "expected": ["a"], "metrics": {{"recall@5": {v}, "mrr": {v}}}}}"#)
                })
                .collect();
            format!(r#", "per_query": [{}]"#, r.join(","))
        });
        format!(
            r#"{{"tool_count": 5, "query_count": 4, "results": [{{"scorer": "bm25", "metrics": {{"recall@5": {recall}, "mrr": 0.5}}{rows}}}]}}"#
        )
    }

    #[test]
    fn itself_gives_zero_differences() {
        let rows = [("q1", 1.0), ("q2", 0.0), ("q3", 0.5), ("q4", 1.0)];
        let f = file("a.json", &eval_json(0.625, Some(&rows)));
        let c = cmp(&f, &f, DEFAULT_METRIC, DEFAULT_MAX_DROP).unwrap();
        assert!(!c.has_regression());
        let r = &c.results[0];
        assert!(r.paired);
        assert!(r.metrics.iter().all(|m| m.difference == Some(0.0)));
        assert!(r.metrics.iter().all(|m| m.ci95 == Some([0.0, 0.0])));
        assert!(r.worse.is_empty() && r.better.is_empty());
        assert!(c.notes.is_empty(), "{:?}", c.notes);
    }

    #[test]
    fn a_different_catalog_or_pool_is_named_beside_the_figures() {
        let base = file("a.json", &eval_json(0.80, None));
        let mut bigger: EvalResult = serde_json::from_str(&eval_json(0.70, None)).unwrap();
        bigger.tool_count = 7;
        bigger.pool = Some(PoolInfo {
            sources: vec!["more".into()],
            own_tools: 5,
            added_tools: 2,
            ..PoolInfo::default()
        });
        let c = frame_notes(&base.result, &bigger);
        assert_eq!(c.len(), 2, "{c:?}");
        assert!(c[0].starts_with("the files rank different numbers of tools (5 vs 7)"));
        assert_eq!(
            c[1],
            "the files rank different pools: baseline no pool, candidate pool more (2 tools added)"
        );
        assert!(frame_notes(&bigger, &bigger).is_empty());
    }

    #[test]
    fn a_drop_beyond_tolerance_is_a_regression() {
        let base = file("a.json", &eval_json(0.80, None));
        let within = file("b.json", &eval_json(0.79, None));
        let beyond = file("c.json", &eval_json(0.7899, None));
        assert!(
            !cmp(&base, &within, "recall@5", 0.01)
                .unwrap()
                .has_regression()
        );
        let c = cmp(&base, &beyond, "recall@5", 0.01).unwrap();
        assert_eq!(c.regressions, vec!["bm25"]);
        assert_eq!(c.results[0].metrics[0].difference, Some(-0.0101));
        assert!(!c.results[0].paired);
        assert!(
            c.notes[0].contains("this compares the figures the files store"),
            "{:?}",
            c.notes
        );
        // A rise never fails, and the other metric is not checked unless asked.
        assert!(
            !cmp(&beyond, &base, "recall@5", 0.0)
                .unwrap()
                .has_regression()
        );
        assert!(cmp(&base, &beyond, "nope", 0.0).is_err());
    }

    #[test]
    fn paired_rows_list_worse_and_better_queries_with_an_interval() {
        let b = [("q1", 1.0), ("q2", 1.0), ("q3", 0.0), ("q4", 0.5)];
        let c = [("q1", 0.0), ("q2", 1.0), ("q3", 0.5), ("q4", 0.0)];
        let base = file("a.json", &eval_json(0.625, Some(&b)));
        let cand = file("b.json", &eval_json(0.375, Some(&c)));
        let result = cmp(&base, &cand, "recall@5", 0.01).unwrap();
        let r = &result.results[0];
        assert!(r.regression && r.paired);
        assert_eq!(r.paired_queries, 4);
        let ids = |v: &[QueryDiff]| v.iter().map(|q| q.id.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&r.worse), vec!["q1", "q4"]);
        assert_eq!(ids(&r.better), vec!["q3"]);
        let ci = r.metrics[0].ci95.unwrap();
        // per-query differences -1, 0, 0.5, -0.5: mean -0.25, bounded by -1 and 0.5
        assert!(
            ci[0] < -0.25 && -0.25 < ci[1] && ci[0] >= -1.0 && ci[1] <= 0.5,
            "{ci:?}"
        );
        assert_eq!(
            cmp(&base, &cand, "recall@5", 0.01).unwrap().results[0].metrics[0].ci95,
            Some(ci)
        );
    }

    fn two_scorers(rows_b: &[(&str, f64)], with_semantic: bool) -> String {
        let rows: Vec<String> = rows_b
            .iter()
            .map(|(id, v)| {
                format!(r#"{{"id": "{id}", "expected": ["a"], "metrics": {{"recall@5": {v}}}}}"#)
            })
            .collect();
        let rows = rows.join(",");
        let mean = rows_b.iter().map(|r| r.1).sum::<f64>() / rows_b.len() as f64;
        let semantic = if with_semantic {
            format!(
                r#", {{"scorer": "semantic", "metrics": {{"recall@5": {mean}}}, "per_query": [{rows}]}}"#
            )
        } else {
            String::new()
        };
        format!(
            r#"{{"tool_count": 5, "query_count": {}, "results": [{{"scorer": "bm25", "metrics": {{"recall@5": {mean}}}, "per_query": [{rows}]}}{semantic}]}}"#,
            rows_b.len()
        )
    }

    #[test]
    fn a_scorer_missing_from_the_candidate_fails_unless_allowed() {
        let rows = [("q1", 1.0), ("q2", 0.0)];
        let base = file("a.json", &two_scorers(&rows, true));
        let cand = file("b.json", &two_scorers(&rows, false));
        let c = cmp(&base, &cand, "recall@5", 0.01).unwrap();
        assert!(c.has_regression() && c.regressions.is_empty());
        assert_eq!(c.missing, vec!["semantic"]);
        let mut options = CompareOptions::new("recall@5", 0.01);
        options.allow_missing = vec!["semantic".into()];
        let c = compare_verified(&base, &cand, &options).unwrap();
        assert!(!c.has_regression());
        assert_eq!(c.allowed_missing, vec!["semantic"]);
        // A checked metric the candidate lacks fails too.
        let no_metric = file(
            "c.json",
            r#"{"tool_count": 5, "query_count": 2, "results": [{"scorer": "bm25", "metrics": {"mrr": 1.0}}, {"scorer": "semantic", "metrics": {"mrr": 1.0}}]}"#,
        );
        let c = cmp(&base, &no_metric, "recall@5", 0.01).unwrap();
        assert_eq!(c.missing, vec!["bm25: recall@5", "semantic: recall@5"]);
    }

    #[test]
    fn different_query_sets_are_refused_unless_paired_only() {
        let base_rows: Vec<(String, f64)> = (0..96)
            .map(|i| (format!("q{i}"), f64::from(i % 2)))
            .collect();
        let b: Vec<(&str, f64)> = base_rows.iter().map(|(i, v)| (i.as_str(), *v)).collect();
        // The candidate ranked only the first 50, where it does exactly as well.
        let base = file("a.json", &two_scorers(&b, false));
        let cand = file("b.json", &two_scorers(&b[..50], false));
        let e = cmp(&base, &cand, "recall@5", 0.01).unwrap_err().to_string();
        assert!(
            e.contains("96 queries in a.json, 50 in b.json, 50 in common"),
            "{e}"
        );
        let mut options = CompareOptions::new("recall@5", 0.01);
        options.paired_only = true;
        let c = compare_verified(&base, &cand, &options).unwrap();
        let r = &c.results[0];
        assert_eq!(r.paired_queries, 50);
        assert_eq!(r.metrics[0].base, r.metrics[0].candidate);
        assert_eq!(r.metrics[0].ci95, Some([0.0, 0.0]));
        assert!(!c.has_regression());
        // No id in common: refused even with --paired-only.
        let other: Vec<(String, f64)> = (0..5).map(|i| (format!("z{i}"), 1.0)).collect();
        let o: Vec<(&str, f64)> = other.iter().map(|(i, v)| (i.as_str(), *v)).collect();
        let e = compare_verified(&base, &file("z.json", &two_scorers(&o, false)), &options)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no query id in common"), "{e}");
        // Without rows, different counts are refused as well.
        let agg = |n: usize| {
            file(
                "n.json",
                &format!(
                    r#"{{"tool_count": 5, "query_count": {n}, "results": [{{"scorer": "bm25", "metrics": {{"recall@5": 0.5}}}}]}}"#
                ),
            )
        };
        let e = cmp(&agg(96), &agg(50), "recall@5", 0.01)
            .unwrap_err()
            .to_string();
        assert!(e.contains("96 queries in n.json, 50 in n.json"), "{e}");
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            /// With --paired-only, every figure is the mean over the ids both files hold,
            /// whatever else each file holds and in whatever order.
            #[test]
            fn paired_figures_are_over_the_common_queries(
                base in proptest::collection::btree_map(0u8..40, 0u8..=4, 1..30),
                cand in proptest::collection::btree_map(0u8..40, 0u8..=4, 1..30),
            ) {
                let rows = |m: &std::collections::BTreeMap<u8, u8>| -> Vec<(String, f64)> {
                    m.iter().rev().map(|(k, v)| (format!("q{k}"), f64::from(*v) / 4.0)).collect()
                };
                let (rb, rc) = (rows(&base), rows(&cand));
                let b_ref: Vec<(&str, f64)> = rb.iter().map(|(i, v)| (i.as_str(), *v)).collect();
                let c_ref: Vec<(&str, f64)> = rc.iter().map(|(i, v)| (i.as_str(), *v)).collect();
                let b = file("a.json", &two_scorers(&b_ref, false));
                let c = file("b.json", &two_scorers(&c_ref, false));
                let mut options = CompareOptions::new("recall@5", 0.01);
                options.paired_only = true;
                options.min_paired_share = 0.0;
                let common: Vec<u8> = base.keys().filter(|k| cand.contains_key(k)).copied().collect();
                match compare_verified(&b, &c, &options) {
                    Err(e) => prop_assert!(common.is_empty(), "{e}"),
                    Ok(result) => {
                        let r = &result.results[0];
                        prop_assert_eq!(r.paired_queries, common.len());
                        let mean = |m: &std::collections::BTreeMap<u8, u8>| -> f64 {
                            common.iter().map(|k| f64::from(m[k]) / 4.0).sum::<f64>() / common.len() as f64
                        };
                        prop_assert_eq!(r.metrics[0].base, Some(round_metric(mean(&base))));
                        prop_assert_eq!(r.metrics[0].candidate, Some(round_metric(mean(&cand))));
                        let moved = common.iter().filter(|k| base[k] != cand[k]).count();
                        prop_assert_eq!(r.worse.len() + r.better.len(), moved);
                        if let Some([lo, hi]) = r.metrics[0].ci95 {
                            let d = r.metrics[0].difference.unwrap();
                            prop_assert!(lo <= d + 1e-9 && d <= hi + 1e-9);
                        }
                    }
                }
            }
        }
    }
}
