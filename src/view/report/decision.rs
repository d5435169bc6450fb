//! The decision page that opens `index.md` (and so `index.html`): one screen that answers
//! "should we defer, with which scorer, what does it save, what does it risk?" from the
//! [`Summary`], one chart, and links to the sections behind each answer.

use std::fmt::Write as _;

use super::figures::{self, Figure, Section};
use super::summary::Summary;
use crate::experiment::report::ReportData;
use crate::number::{fixed1, int, metric, percent, plural, usd};
use crate::output::{md_code, md_table};

/// Names as code spans, at most `shown` of them, then how many more.
fn names(list: &[String], shown: usize) -> String {
    let mut parts: Vec<String> = list.iter().take(shown).map(|n| md_code(n)).collect();
    if list.len() > shown {
        parts.push(format!("{} more", list.len() - shown));
    }
    parts.join(", ")
}

fn link(text: &str, anchor: &str) -> String {
    format!("[{text}](#{anchor})")
}

/// Dollars saved, a negative saving written as a cost.
fn saved_usd(x: f64) -> String {
    if x < 0.0 {
        format!("-{} (costs more)", usd(-x))
    } else {
        usd(x)
    }
}

/// A latency in µs, in ms from 1 ms up.
fn micros(us: f64) -> String {
    if us >= 1000.0 {
        format!("{} ms", fixed1(us / 1000.0))
    } else {
        format!("{} µs", fixed1(us))
    }
}

fn tokens(x: f64) -> String {
    if x < 0.0 {
        format!("-{}", int((-x).round() as usize))
    } else {
        int(x.round() as usize)
    }
}

/// The decision page: one sentence, one table of questions and answers, one chart.
pub fn page(out: &mut String, sum: &Summary, data: &ReportData, charts: &[Figure]) {
    out.push_str("## Decision\n\n");
    let mut rows: Vec<Vec<String>> = Vec::new();
    saving_rows(out, &mut rows, sum);
    search_rows(&mut rows, sum);
    rows.extend(miss_row(sum));
    rows.extend(not_paying_row(sum));
    rows.extend(caveats_row(sum));
    if !rows.is_empty() {
        out.push_str(&md_table(
            &["question", "answer", "details"],
            &rows,
            &[false, false, false],
        ));
        out.push('\n');
    }
    for f in figures::of(charts, &Section::Occupancy) {
        figures::embed(out, f);
    }
    let _ = writeln!(
        out,
        "These numbers are in `data/summary.json` (the measured latency in `data/latency.json`); \
         the full columns in `data/*.csv`. \
         Sections: {}.\n",
        contents(data).join(" · ")
    );
}

/// The verdict sentence and the saving rows (per request, per conversation, in dollars).
fn saving_rows(out: &mut String, rows: &mut Vec<Vec<String>>, sum: &Summary) {
    let o = &sum.overall;
    let counter = md_code(&sum.run.counter);
    let scenarios_link = link("Summary", "summary");
    if o.compared == 0 {
        if !sum.scenarios.is_empty() {
            out.push_str(
                "No scenario compares like for like (a mode does not fit the window): no \
                 saving is claimed.\n\n",
            );
        }
        return;
    }
    let paying = sum
        .scenarios
        .iter()
        .filter(|s| s.pays == Some(true))
        .count();
    let _ = writeln!(
        out,
        "**Deferral pays in {} of {} compared like for like** (fewer input tokens over the \
         conversation and lower cost with prompt caching). Each figure is a median over them \
         taken on its own, so two figures may come from different scenarios (the dollars \
         saved with caching can exceed those without); tokens counted by {counter}.\n",
        int(paying),
        plural(o.compared, "scenario", "scenarios"),
    );
    let pair = |p: Option<f64>, t: Option<f64>| match (p, t) {
        (Some(p), Some(t)) => format!("**{}** ({} tokens)", percent(p, 1), tokens(t)),
        _ => "n/a".into(),
    };
    rows.push(vec![
        "saving per request (first request)".into(),
        pair(
            o.median_first_request_saved_pct,
            o.median_first_request_saved_tokens,
        ),
        scenarios_link.clone(),
    ]);
    rows.push(vec![
        "saving per conversation (input)".into(),
        pair(
            o.median_conversation_saved_pct,
            o.median_conversation_saved_tokens,
        ),
        scenarios_link.clone(),
    ]);
    if let (Some(a), Some(b)) = (
        o.median_saved_usd_per_1000,
        o.median_saved_usd_per_1000_cached,
    ) {
        rows.push(vec![
            "saved per 1,000 conversations".into(),
            format!(
                "**{}** without caching, **{}** with prompt caching",
                saved_usd(a),
                saved_usd(b)
            ),
            scenarios_link,
        ]);
    }
}

/// What a missed search costs, when the scenarios say.
fn miss_row(sum: &Summary) -> Option<Vec<String>> {
    let m = sum.overall.miss_cost.as_ref()?;
    let seen = if m.misses == 0 {
        "no search missed in these scenarios".to_string()
    } else {
        format!("{} here", plural(m.misses, "miss", "misses"))
    };
    let what = if m.from == "retry" {
        "a retry search"
    } else {
        "one more search request"
    };
    Some(vec![
        "what a miss costs".into(),
        format!(
            "{what}: {} tokens ({} per 1,000 conversations); {seen}; unrecovered, the call \
             fails",
            int(m.median_input_tokens.round() as usize),
            usd(m.median_usd_per_1000),
        ),
        link("Scenarios", "scenarios"),
    ])
}

/// Where deferral costs more: in tokens, with caching, or never breaking even.
fn not_paying_row(sum: &Summary) -> Option<Vec<String>> {
    let o = &sum.overall;
    let mut not_paying = Vec::new();
    if !o.more_tokens_deferred.is_empty() {
        not_paying.push(format!(
            "more input tokens deferred: {}",
            names(&o.more_tokens_deferred, 4)
        ));
    }
    if !o.more_usd_cached_deferred.is_empty() {
        not_paying.push(format!(
            "costlier with caching: {}",
            names(&o.more_usd_cached_deferred, 4)
        ));
    }
    let mut details = link("Summary", "summary");
    if let (false, Some(turns)) = (o.never_breaks_even_cached.is_empty(), o.break_even_turns) {
        let cases: Vec<String> = o
            .never_breaks_even_cached
            .iter()
            .map(|c| format!("{}/{}", int(c.tools), c.searches))
            .collect();
        not_paying.push(format!(
            "with caching, never within {turns} turns at tools/searches {}",
            cases.join(", ")
        ));
        details = link("Break-even", "where-deferral-pays-break-even");
    }
    (!not_paying.is_empty()).then(|| {
        vec![
            "where deferral does not pay".into(),
            not_paying.join("; "),
            details,
        ]
    })
}

/// What changes the verdict: unequal work, an estimating counter, a window overflow.
fn caveats_row(sum: &Summary) -> Option<Vec<String>> {
    let o = &sum.overall;
    let mut caveats = Vec::new();
    if !o.unequal_work.is_empty() {
        caveats.push(format!(
            "unequal work (calls failed or unavailable): {}",
            names(&o.unequal_work, 4)
        ));
    }
    if let Some(e) = sum.run.counter_error_pct {
        caveats.push(format!(
            "{} is an estimate, ± {e}%",
            md_code(&sum.run.counter)
        ));
    }
    if !o.window_overflow.is_empty() {
        let list: Vec<String> = o
            .window_overflow
            .iter()
            .map(|w| format!("{} ({})", md_code(&w.scenario), w.mode))
            .collect();
        caveats.push(format!("does not fit the window: {}", list.join(", ")));
    }
    (!caveats.is_empty()).then(|| {
        vec![
            "caveats".into(),
            caveats.join("; "),
            link("Summary", "summary"),
        ]
    })
}

/// The best scorer per query set, and its measured latency on a row of its own.
fn search_rows(rows: &mut Vec<Vec<String>>, sum: &Summary) {
    let mut quality = Vec::new();
    let mut latency = Vec::new();
    for q in &sum.query_sets {
        let (Some(best), Some(key), Some(v)) = (&q.best_scorer, &q.metric, q.value) else {
            continue;
        };
        let ci = q
            .ci95
            .map(|c| format!(" (95% CI {}–{})", metric(c[0]), metric(c[1])))
            .unwrap_or_default();
        quality.push(format!(
            "**{best}** on {}: {key} **{}**{ci}",
            md_code(&q.set),
            metric(v)
        ));
        if let Some(l) = q.latency_us {
            latency.push(format!(
                "{best} on {}: {} a query (median)",
                md_code(&q.set),
                micros(l.p50)
            ));
        }
    }
    if !quality.is_empty() {
        rows.push(vec![
            "best search".into(),
            quality.join("; "),
            link("Search quality", "search-quality"),
        ]);
    }
    if !latency.is_empty() {
        rows.push(vec![
            "search latency (measured)".into(),
            latency.join("; "),
            link("Search latency", "search-latency-measured"),
        ]);
    }
}

/// Links to the sections this report has, in their order.
fn contents(data: &ReportData) -> Vec<String> {
    let mut out = vec![link("Summary", "summary")];
    if data.sessions.is_some() {
        out.push(link("Your sessions", "your-sessions"));
    }
    if !data.scenarios.is_empty() {
        out.push(link("Scenarios", "scenarios"));
    }
    if data.clients.is_some() {
        out.push(link("Client profiles", "client-profiles"));
    }
    if data.scenarios.iter().any(|s| !s.published.is_empty()) {
        out.push(link("Published figures", "published-figures-reproduced"));
    }
    if !data.evals.is_empty() {
        out.push(link("Search quality", "search-quality"));
    }
    if data.sweep.is_some() {
        out.push(link("Scale sweep", "scale-sweep"));
    }
    if data.deferral.is_some() {
        out.push(link("Break-even", "where-deferral-pays-break-even"));
    }
    if !data.latency.eval.is_empty() || !data.latency.sweep.is_empty() {
        out.push(link("Latency", "search-latency-measured"));
    }
    if data.evals.iter().any(|s| !s.misses.is_empty()) {
        out.push(link("Failures", "failures"));
    }
    out.push(link("Settings", "settings"));
    out
}
