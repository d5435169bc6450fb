//! `toolbudget compare BASELINE.json CANDIDATE.json`: the regression check over two `eval`
//! json results. Exits 1 (`Outcome::CheckFailed`) when any scorer's `--metric` drops by more
//! than `--max-drop`, after writing the comparison.

use crate::cli::CompareArgs;
use crate::error::Result;
use crate::eval::compare::{CompareOptions, Comparison, EvalFile, compare};
use crate::output::{Format, csv, emit, to_json};

use super::Outcome;

/// Most worse/better queries listed per scorer in table form (json lists all).
const LISTED_QUERIES: usize = 10;

pub fn run(args: &CompareArgs) -> Result<Outcome> {
    let base = EvalFile::read(&args.baseline)?;
    let candidate = EvalFile::read(&args.candidate)?;
    let options = CompareOptions {
        metric: args.metric.clone(),
        max_drop: args.max_drop,
        allow_missing: args.allow_missing.clone(),
        paired_only: args.paired_only,
        min_paired_share: args.min_paired_share,
    };
    let comparison = compare(&base, &candidate, &options)?;
    emit(
        args.output.out.as_deref(),
        &render(&comparison, args.output.format),
    )?;
    if comparison.has_regression() {
        if !comparison.regressions.is_empty() {
            eprintln!(
                "regression: {} dropped by more than {} on {}",
                comparison.regressions.join(", "),
                comparison.max_drop,
                comparison.metric
            );
        }
        if !comparison.missing.is_empty() {
            eprintln!(
                "regression: the candidate lacks {} (a scorer or metric the baseline checks; \
                 --allow-missing SCORER accepts a missing scorer)",
                comparison.missing.join(", ")
            );
        }
        Ok(Outcome::CheckFailed)
    } else {
        Ok(Outcome::Success)
    }
}

fn signed(x: f64) -> String {
    format!("{x:+.4}")
}

/// Renders the comparison; pure.
pub fn render(c: &Comparison, format: Format) -> String {
    let headers = [
        "scorer",
        "metric",
        "base",
        "candidate",
        "difference",
        "95% CI",
        "p",
        "check",
    ];
    let rows = rows(c, format);
    match format {
        Format::Json => to_json(c),
        Format::Csv => csv(&headers, &rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let mut out = table(
                &headers,
                &rows,
                &[false, false, true, true, true, true, true, false],
            );
            out.push('\n');
            out.push_str(&query_lists(c));
            out.push_str(&verdict(c));
            out
        }
    }
}

/// One row per scorer and metric; the checked metric says ok or FAIL.
fn rows(c: &Comparison, format: Format) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for r in &c.results {
        for m in &r.metrics {
            let check = if m.metric != c.metric {
                String::new()
            } else if r.regression {
                "FAIL".to_string()
            } else {
                "ok".to_string()
            };
            let ci = m.ci95.map_or_else(String::new, |[lo, hi]| {
                if format == Format::Csv {
                    format!("{lo};{hi}")
                } else {
                    format!("{}..{}", signed(lo), signed(hi))
                }
            });
            rows.push(vec![
                r.scorer.clone(),
                m.metric.clone(),
                format!("{:.4}", m.base),
                format!("{:.4}", m.candidate),
                signed(m.difference),
                ci,
                m.p_value.map_or_else(String::new, |p| format!("{p:.4}")),
                check,
            ]);
        }
    }
    rows
}

/// Per paired scorer: how many queries got worse or better, the first of each listed.
fn query_lists(c: &Comparison) -> String {
    let mut out = String::new();
    for r in c.results.iter().filter(|r| r.paired) {
        out.push_str(&format!(
            "{}: {} queries paired; {} worse, {} better on {}\n",
            r.scorer,
            r.paired_queries,
            r.worse.len(),
            r.better.len(),
            c.metric
        ));
        for (label, list) in [("worse", &r.worse), ("better", &r.better)] {
            for q in list.iter().take(LISTED_QUERIES) {
                out.push_str(&format!(
                    "  {label}: {} {:.4} -> {:.4}\n",
                    q.id, q.base, q.candidate
                ));
            }
            if list.len() > LISTED_QUERIES {
                out.push_str(&format!(
                    "  ... and {} more {label} (see --format json)\n",
                    list.len() - LISTED_QUERIES
                ));
            }
        }
    }
    out
}

/// Notes, then the check's outcome.
fn verdict(c: &Comparison) -> String {
    let mut out = String::new();
    for s in &c.only_in_baseline {
        out.push_str(&format!("note: scorer {s} is only in the baseline\n"));
    }
    for s in &c.only_in_candidate {
        out.push_str(&format!("note: scorer {s} is only in the candidate\n"));
    }
    for s in &c.allowed_missing {
        out.push_str(&format!(
            "note: scorer {s} is missing from the candidate (allowed by --allow-missing)\n"
        ));
    }
    if c.paired_only {
        out.push_str("note: every figure is over the queries both files ranked (--paired-only)\n");
    }
    for n in &c.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    for m in &c.missing {
        out.push_str(&format!("FAIL: the candidate lacks {m}\n"));
    }
    out.push_str(&if !c.regressions.is_empty() {
        format!(
            "FAIL: {} dropped more than {} on {}\n",
            c.regressions.join(", "),
            c.max_drop,
            c.metric
        )
    } else if c.has_regression() {
        String::new()
    } else {
        format!(
            "ok: no scorer dropped more than {} on {}\n",
            c.max_drop, c.metric
        )
    });
    out
}
