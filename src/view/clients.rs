//! The views of a [`ClientComparison`] (`simulate --client A,B`, the report's "Client
//! profiles" section): one table per scenario (eager, then a row per client), the CSV rows
//! (`ClientCsvRow`, also the report's `data/clients.csv`), the json, and the chart.

use std::fmt::Write as _;

use serde::Serialize;

use crate::experiment::clients::{ClientComparison, ClientRow, ClientScenario};
use crate::number::{int, usd};
use crate::output::{Format, csv_rows, md_text, table_for, to_json};
use crate::view::chart::{ChartError, HeatRow, HeatTable, heat_table};
use crate::view::report::figures::{self, Figure, Section};

/// Renders the result; pure.
pub fn render(result: &ClientComparison, format: Format) -> String {
    match format {
        Format::Json => to_json(result),
        Format::Csv => csv_rows(&csv(result)),
        Format::Table | Format::Md => {
            let md = format == Format::Md;
            let mut out = String::new();
            for s in &result.scenarios {
                out.push_str(&scenario_text(s, md));
                out.push('\n');
            }
            out.push_str(&sources_line(result, md));
            out
        }
    }
}

const HEADERS: [&str; 12] = [
    "client",
    "deferred tools",
    "requests",
    "first request",
    "total input",
    "deferred list (1st)",
    "deferred list (all)",
    "searches",
    "misses",
    "cache breaks",
    "cost",
    "cost cached",
];

fn cells(r: &ClientRow) -> Vec<String> {
    vec![
        r.client.clone(),
        if r.deferring {
            int(r.deferred_count)
        } else {
            "none".into()
        },
        int(r.requests),
        int(r.first_request_tokens),
        int(r.total_input_tokens),
        int(r.first_request_deferred_list_tokens),
        format!(
            "{} ({})",
            int(r.deferred_list_tokens),
            usd(r.deferred_list_cost_usd)
        ),
        int(r.searches),
        int(r.misses),
        int(r.cache_invalidations.requests),
        usd(r.cost_usd),
        usd(r.cost_cached_usd),
    ]
}

/// The report's narrower table (8 columns): requests and cache breaks stay in
/// `data/clients.csv`, misses beside the searches.
const REPORT_HEADERS: [&str; 8] = [
    "client",
    "deferred tools",
    "first request",
    "total input",
    "deferred list (1st / all)",
    "searches (misses)",
    "cost",
    "cost cached",
];

fn report_cells(r: &ClientRow) -> Vec<String> {
    let all = cells(r);
    vec![
        all[0].clone(),
        all[1].clone(),
        all[3].clone(),
        all[4].clone(),
        format!("{} / {}", all[5], all[6]),
        format!("{} ({})", all[7], all[8]),
        all[10].clone(),
        all[11].clone(),
    ]
}

/// One scenario's table: the eager baseline, then each client.
pub fn scenario_text(s: &ClientScenario, md: bool) -> String {
    scenario_table(s, md, false)
}

fn scenario_table(s: &ClientScenario, md: bool, report: bool) -> String {
    let mut out = if md {
        format!("### {} by client\n\n", md_text(&s.name))
    } else {
        format!("== {} ==\n", s.name)
    };
    let _ = writeln!(
        out,
        "{} tools, counted by `{}` (tokens per request and in total; cost at the model's list \
         price, without and with prompt caching; prices: {})",
        int(s.tool_count),
        s.counter.0,
        s.prices
    );
    if md {
        out.push('\n');
    }
    let cells_of = if report { report_cells } else { cells };
    let rows: Vec<Vec<String>> = std::iter::once(&s.eager)
        .chain(&s.rows)
        .map(cells_of)
        .collect();
    let headers: &[&str] = if report { &REPORT_HEADERS } else { &HEADERS };
    let mut right = vec![true; headers.len()];
    right[0] = false;
    out.push_str(&table_for(if md { Format::Md } else { Format::Table })(
        headers, &rows, &right,
    ));
    out
}

/// Which values are documented and which assumed, per client, and where to read each source.
fn sources_line(result: &ClientComparison, md: bool) -> String {
    let mut out = String::new();
    let parts: Vec<String> = result
        .profiles
        .iter()
        .map(|p| {
            let assumed = p
                .values
                .iter()
                .filter(|v| v.source.kind() == "assumed")
                .count();
            format!(
                "{} {} sourced, {} assumed",
                p.client,
                p.values.len() - assumed,
                assumed
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "{}Profiles: {}. Every value and its source: `--format json` (`profiles`) and \
         `docs/reference/client-profiles.md`.",
        if md { "\n" } else { "" },
        parts.join("; ")
    );
    out
}

/// One CSV row: a scenario under one client (or `eager`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ClientCsvRow {
    pub scenario: String,
    pub counter: String,
    pub client: String,
    pub deferring: bool,
    pub deferred_count: usize,
    pub requests: usize,
    pub first_request_tokens: usize,
    pub total_input_tokens: usize,
    pub first_request_deferred_list_tokens: usize,
    pub deferred_list_tokens: usize,
    pub deferred_list_cost_usd: f64,
    pub search_tool_tokens: usize,
    pub searches: usize,
    pub misses: usize,
    pub failed_calls: usize,
    pub cost_usd: f64,
    pub cost_cached_usd: f64,
    pub cache_invalidations: usize,
    pub invalidated_tokens: usize,
    pub invalidation_cost_usd: f64,
    /// Where the prices come from (the price table, its date, the model).
    pub prices: String,
}

/// The CSV rows of every scenario, eager first.
pub fn csv(result: &ClientComparison) -> Vec<ClientCsvRow> {
    let mut out = Vec::new();
    for s in &result.scenarios {
        for r in std::iter::once(&s.eager).chain(&s.rows) {
            out.push(ClientCsvRow {
                scenario: s.name.clone(),
                counter: s.counter.0.name().to_string(),
                client: r.client.clone(),
                deferring: r.deferring,
                deferred_count: r.deferred_count,
                requests: r.requests,
                first_request_tokens: r.first_request_tokens,
                total_input_tokens: r.total_input_tokens,
                first_request_deferred_list_tokens: r.first_request_deferred_list_tokens,
                deferred_list_tokens: r.deferred_list_tokens,
                deferred_list_cost_usd: r.deferred_list_cost_usd,
                search_tool_tokens: r.search_tool_tokens,
                searches: r.searches,
                misses: r.misses,
                failed_calls: r.failed_calls,
                cost_usd: r.cost_usd,
                cost_cached_usd: r.cost_cached_usd,
                cache_invalidations: r.cache_invalidations.requests,
                invalidated_tokens: r.cache_invalidations.tokens,
                invalidation_cost_usd: crate::number::round(r.cache_invalidations.cost_usd, 6),
                prices: s.prices.clone(),
            });
        }
    }
    out
}

/// The chart: a grid with one row per scenario and one column per client, each cell the whole
/// conversation's input tokens as a percentage of eager's (so scenarios of any size share the
/// scale), shaded by whether the client saved or added tokens. The counter most scenarios use
/// is named once; a row counted by another names its own.
pub fn chart(result: &ClientComparison) -> Result<String, ChartError> {
    let mut columns: Vec<String> = Vec::new();
    for r in result.scenarios.iter().flat_map(|s| &s.rows) {
        if !columns.contains(&r.client) {
            columns.push(r.client.clone());
        }
    }
    let mut counters: Vec<(&str, usize)> = Vec::new();
    for s in &result.scenarios {
        let name = s.counter.0.name();
        match counters.iter_mut().find(|(n, _)| *n == name) {
            Some((_, k)) => *k += 1,
            None => counters.push((name, 1)),
        }
    }
    // The most common counter, the first seen on a tie.
    let main = counters
        .iter()
        .fold(None::<(&str, usize)>, |best, &(n, k)| match best {
            Some((_, b)) if b >= k => best,
            _ => Some((n, k)),
        })
        .map_or("", |(n, _)| n);
    let rows = result
        .scenarios
        .iter()
        .map(|s| {
            let name = s.counter.0.name();
            HeatRow {
                label: if name == main {
                    s.name.clone()
                } else {
                    format!("{} (counted by {name})", s.name)
                },
                values: columns
                    .iter()
                    .map(|c| {
                        s.rows.iter().find(|r| &r.client == c).map(|r| {
                            if s.eager.total_input_tokens == 0 {
                                100.0
                            } else {
                                r.total_input_tokens as f64 / s.eager.total_input_tokens as f64
                                    * 100.0
                            }
                        })
                    })
                    .collect(),
            }
        })
        .collect();
    heat_table(&HeatTable {
        title: "Each conversation under each client's deferral policy".into(),
        note: format!(
            "Whole-conversation input tokens, % of sending every tool eagerly; counted by {main}"
        ),
        columns,
        rows,
        pivot: 100.0,
        below: "below 100: fewer tokens than eager".into(),
        at: "100: as eager".into(),
        above: "above 100: more".into(),
    })
}

/// The report's figure.
pub fn figure(result: &ClientComparison) -> Result<Figure, ChartError> {
    Ok(Figure {
        path: "charts/clients.svg".into(),
        title: "Each shipped conversation under each client's deferral policy".into(),
        caption: "One row per shipped scenario, one column per client profile: the whole \
                  conversation's input tokens as a percentage of sending every tool eagerly \
                  (100). Blue cells are clients whose deferral saved tokens, red ones whose \
                  listing or searches cost more than they saved; 100 is a client that did not \
                  defer (below its threshold, or `none`). The note names the counter; a row \
                  counted by another says so."
            .into(),
        svg: chart(result)?,
        section: Section::Clients,
    })
}

/// The report's "Client profiles" section: what it is, the chart, a table per scenario.
pub fn section(out: &mut String, result: &ClientComparison, charts: &[Figure]) {
    if result.scenarios.is_empty() {
        return;
    }
    out.push_str(
        "## Client profiles\n\nThe shipped conversations replayed under each client's deferral \
         policy (`simulate --client`): each profile's threshold, what stays eager, listing, \
         search, reveal, compaction and resume, from the client's public documentation, with \
         the scenario's own tools keys kept. Every value and whether it is documented or \
         assumed: `docs/reference/client-profiles.md`; rows: `data/clients.csv`.\n\n",
    );
    for f in figures::of(charts, &Section::Clients) {
        figures::embed(out, f);
    }
    for s in &result.scenarios {
        out.push_str(&scenario_table(s, true, true));
        out.push('\n');
    }
    out.push_str(&sources_line(result, true));
    out.push('\n');
}
