//! A stored eval result read and verified: figures no evaluation can produce (recall falling as k rises, intervals upside down, negative latency) refused at their line:column.

use super::*;

/// An eval result and the file it was read from.
#[derive(Debug, Clone)]
pub struct EvalFile {
    pub path: String,
    pub result: EvalResult,
}

impl EvalFile {
    /// Reads an `eval --format json` file through the one eval type; a stored figure no
    /// evaluation can produce is refused at its `line:column` ([`check_figures`]).
    pub fn read(path: &Path) -> Result<EvalFile> {
        let doc = Document::read(path)?;
        let result = parse_eval_result(&doc)?;
        check_figures(&result).map_err(|(at, why)| doc.error_at(&at, with_path(&at, &why)))?;
        Ok(EvalFile {
            path: path.display().to_string(),
            result,
        })
    }
}

/// The first stored figure of `r` that no evaluation can produce, with its path in the file:
/// no tool ranked, cutoffs not increasing, recall@k (hit@k, complete@k) falling as k rises or
/// out of order with each other (complete@k ≤ recall@k ≤ hit@k), an interval upside down or
/// outside 0..1, a negative or disordered latency, more refused queries than queries. Rows,
/// when present, are checked against these figures by `verify`; without rows these checks are
/// all that stands behind the figures.
pub fn check_figures(r: &EvalResult) -> Result<(), (Vec<Seg>, String)> {
    let err = |at: Vec<Seg>, why: String| Err((at, why));
    if r.tool_count == 0 {
        return err(
            path!["tool_count"].to_vec(),
            "tool_count is 0: an evaluation ranks at least one tool".into(),
        );
    }
    if r.ranked_tools > r.tool_count {
        return err(
            path!["ranked_tools"].to_vec(),
            format!(
                "ranked_tools is {}, more than the {} tools of the catalog (tool_count)",
                r.ranked_tools, r.tool_count
            ),
        );
    }
    for (i, &k) in r.ks.iter().enumerate() {
        if k == 0 || (i > 0 && k <= r.ks[i - 1]) {
            return err(
                path!["ks", i].to_vec(),
                format!(
                    "ks is {:?}: the cutoffs are whole numbers from 1, each larger than the last",
                    r.ks
                ),
            );
        }
        if r.depth > 0 && k > r.depth {
            return err(
                path!["ks", i].to_vec(),
                format!("k = {k} is deeper than the depth {}", r.depth),
            );
        }
    }
    for (i, s) in r.results.iter().enumerate() {
        let at = |rest: &[Seg]| {
            let mut v = path!["results", i].to_vec();
            v.extend_from_slice(rest);
            v
        };
        check_means(r, s).map_err(|(m, why)| (at(&path!["metrics", m.as_str()]), why))?;
        for (class, c) in &s.classes {
            check_ordered(&c.metrics).map_err(|(m, why)| {
                (
                    at(&path![
                        "classes",
                        class.to_string().as_str(),
                        "metrics",
                        m.as_str()
                    ]),
                    why,
                )
            })?;
        }
        for (m, &[lo, hi]) in &s.ci95 {
            let name = m.to_string();
            if !((0.0..=1.0).contains(&lo) && (0.0..=1.0).contains(&hi)) {
                return err(
                    at(&path!["ci95", name.as_str()]),
                    format!("the interval of {name} is [{lo}, {hi}], outside 0..1"),
                );
            }
            if lo > hi {
                return err(
                    at(&path!["ci95", name.as_str()]),
                    format!("the interval of {name} is [{lo}, {hi}]: upside down (low above high)"),
                );
            }
        }
        check_consistent(s)
            .map_err(|(m, why)| (at(&path!["metrics", m.to_string().as_str()]), why))?;
        for (field, l) in [
            ("latency_us", &s.latency_us),
            ("reported_latency_us", &s.reported_latency_us),
        ] {
            if let Some(l) = l {
                check_latency(l).map_err(|(part, why)| (at(&path![field, part]), why))?;
            }
        }
        if r.query_count > 0 && s.refused_queries > r.query_count {
            return err(
                at(&path!["refused_queries"]),
                format!(
                    "refused_queries is {}, more than the {} queries (query_count)",
                    s.refused_queries, r.query_count
                ),
            );
        }
    }
    Ok(())
}

/// A scorer's means: n/a (null) exactly when no query expects a tool (a null beside such
/// queries hides a figure, and no evaluation writes one), the others in order
/// ([`check_ordered`]).
fn check_means(r: &EvalResult, s: &ScorerResult) -> Result<(), (String, String)> {
    if let Some(m) = s.metrics.iter().find_map(|(m, v)| v.is_none().then_some(m))
        && let Some(n) = answerable(r, s).filter(|&n| n > 0)
    {
        return Err((
            m.to_string(),
            format!("{m} is null (n/a), but {n} queries expect a tool: their mean is a number"),
        ));
    }
    let present: indexmap::IndexMap<Metric, f64> = s
        .metrics
        .iter()
        .filter_map(|(m, v)| Some((m.clone(), (*v)?)))
        .collect();
    check_ordered(&present)
}

/// Rounding allowed between a stored mean and what its own interval and classes say (each is
/// rounded to 6 decimals).
const CONSISTENCY_SLACK: f64 = 1e-5;

/// A scorer's mean over all answerable queries is the mean of its bootstrap resamples' centre,
/// so it lies inside its own 95% interval; and the queries of its classes are those queries,
/// so it is their query-weighted mean. A stored figure that contradicts either (every metric
/// set to 1.0 beside an interval of [0.405, 0.605]) was not produced by an evaluation.
pub(super) fn check_consistent(s: &ScorerResult) -> Result<(), (Metric, String)> {
    for (m, v) in s.metrics.iter().filter_map(|(m, v)| Some((m, (*v)?))) {
        if let Some(&[lo, hi]) = s.ci95.get(m)
            && (v < lo - CONSISTENCY_SLACK || v > hi + CONSISTENCY_SLACK)
        {
            return Err((
                m.clone(),
                format!(
                    "{m} is {v}, outside its own 95% interval [{lo}, {hi}]: the mean of the \
                     queries lies inside the interval of its resamples"
                ),
            ));
        }
        let (mut sum, mut queries) = (0.0, 0usize);
        for c in s.classes.values() {
            if let Some(&cv) = c.metrics.get(m) {
                sum += cv * c.queries as f64;
                queries += c.queries;
            }
        }
        if queries > 0 {
            let weighted = sum / queries as f64;
            if (v - weighted).abs() > CONSISTENCY_SLACK {
                return Err((
                    m.clone(),
                    format!(
                        "{m} is {v}, but its classes average {} over their {queries} queries: \
                         the mean over all queries is their query-weighted mean",
                        crate::eval::metrics::round_metric(weighted)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Per query, complete@k ≤ recall@k ≤ hit@k and each grows with k, so their means do too
/// (within the files' rounding): the first pair out of that order, named by its metric.
pub(super) fn check_ordered(
    metrics: &indexmap::IndexMap<Metric, f64>,
) -> Result<(), (String, String)> {
    let tol = crate::eval::verify::TOLERANCE;
    let at_k = |m: &Metric| match m {
        Metric::Recall(k) => Some((1, *k)),
        Metric::Hit(k) => Some((2, *k)),
        Metric::Complete(k) => Some((0, *k)),
        _ => None,
    };
    let figures: Vec<(&Metric, u8, usize, f64)> = metrics
        .iter()
        .filter_map(|(m, &v)| at_k(m).map(|(kind, k)| (m, kind, k, v)))
        .collect();
    for &(m, kind, k, v) in &figures {
        for &(n, kind2, k2, w) in &figures {
            if kind == kind2 && k < k2 && v > w + tol {
                return Err((
                    m.to_string(),
                    format!(
                        "{m} is {v}, above {n} ({w}): it cannot fall as k rises; the stored \
                         figures are impossible"
                    ),
                ));
            }
            if k == k2 && kind < kind2 && v > w + tol {
                return Err((
                    m.to_string(),
                    format!(
                        "{m} is {v}, above {n} ({w}): per query complete@k ≤ recall@k ≤ hit@k; \
                         the stored figures are impossible"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Latencies are times: finite, ≥ 0, the median no slower than p95, p95 no slower than the
/// slowest (when the file records it).
pub(super) fn check_latency(l: &crate::timing::LatencyUs) -> Result<(), (&'static str, String)> {
    for (part, v) in [("p50", l.p50), ("p95", l.p95), ("max", l.max)] {
        if !(v.is_finite() && (0.0..=MAX_LATENCY_US).contains(&v)) {
            return Err((
                part,
                format!("{part} is {v} µs, not a latency (from 0 to {MAX_LATENCY_US:e} µs, a day)"),
            ));
        }
    }
    if l.p50 > l.p95 {
        return Err((
            "p50",
            format!("p50 ({} µs) is above p95 ({} µs)", l.p50, l.p95),
        ));
    }
    if l.max > 0.0 && l.p95 > l.max {
        return Err((
            "p95",
            format!(
                "p95 ({} µs) is above the slowest search ({} µs)",
                l.p95, l.max
            ),
        ));
    }
    Ok(())
}

/// The longest search latency a file may record, µs: a day.
pub const MAX_LATENCY_US: f64 = 86_400.0 * 1e6;
