//! `toolbudget count --compare-counters`: one catalog under every counter side by side — the
//! table a design review wants ("this catalog costs X on Claude, Y on GPT").

use serde::Serialize;

use super::count::{Fixed, count_with, error_note, reference_profile};
use crate::catalog::Catalog;
use crate::cli::CountArgs;
use crate::counter::{CounterKind, count_all};
use crate::error::Result;
use crate::output::{Format, csv, to_json};

#[derive(Debug, Serialize)]
pub struct CompareReport {
    pub tool_count: usize,
    pub tool_choice: String,
    pub counters: Vec<CounterRow>,
    /// Counters left out, and why (anthropic-api without key or complete cache).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    pub tools: Vec<ToolRow>,
}

#[derive(Debug, Serialize)]
pub struct CounterRow {
    pub counter: String,
    pub tokenizer: String,
    pub render: String,
    pub model: String,
    /// Σ tool definitions.
    pub tools_tokens: usize,
    /// Tool-use preamble + the counter's framing of the tools block.
    pub fixed_tokens: usize,
    /// What the tools add to a request: tools + fixed.
    pub request_tokens: usize,
    pub per_tool_mean: f64,
    /// `request_tokens` against o200k-json's, percent (+: more).
    pub vs_o200k_json_pct: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_pct: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct Skipped {
    pub counter: String,
    pub reason: String,
}

#[derive(Debug, Serialize)]
pub struct ToolRow {
    pub id: String,
    /// One count per entry of `counters`, in that order.
    pub tokens: Vec<usize>,
}

fn api_available(args: &CountArgs) -> bool {
    std::env::var("ANTHROPIC_API_KEY").is_ok_and(|k| !k.is_empty()) || args.api.api_cache.is_file()
}

pub fn compare(catalog: &Catalog, args: &CountArgs) -> Result<CompareReport> {
    let mut skipped = Vec::new();
    // The local counters in one pass over the tools (shared renderings counted once).
    let mut counted: Vec<(CounterKind, Vec<usize>, Fixed)> = Vec::new();
    for t in count_all(&CounterKind::LOCAL, catalog) {
        let profile = reference_profile(t.counter, args.model.as_deref())?;
        let fixed = Fixed::local(t.counter, &profile, args.tool_choice);
        counted.push((t.counter, t.counts().to_vec(), fixed));
    }
    if api_available(args) {
        let api = CounterKind::AnthropicApi;
        match count_with(
            api,
            catalog,
            args.model.as_deref(),
            args.tool_choice,
            &args.api,
        ) {
            Ok((t, f)) => counted.push((api, t.counts().to_vec(), f)),
            // Optional here: a missing answer skips the API counter, with the reason.
            Err(e) => skipped.push(Skipped {
                counter: api.name().into(),
                reason: e.to_string(),
            }),
        }
    }
    let reference: usize = counted
        .iter()
        .find(|(k, ..)| *k == CounterKind::O200kJson)
        .map_or(0, |(_, c, f)| c.iter().sum::<usize>() + f.tokens);
    let n = catalog.len();
    let counters = counted
        .iter()
        .map(|(k, counts, f)| {
            let tools: usize = counts.iter().sum();
            let request = tools + f.tokens;
            CounterRow {
                counter: k.name().into(),
                tokenizer: k.tokenizer_label().into(),
                render: k.render_name().into(),
                model: f.model.clone(),
                tools_tokens: tools,
                fixed_tokens: f.tokens,
                request_tokens: request,
                per_tool_mean: if n == 0 {
                    0.0
                } else {
                    (tools as f64 / n as f64 * 100.0).round() / 100.0
                },
                vs_o200k_json_pct: if reference == 0 {
                    0.0
                } else {
                    ((request as f64 / reference as f64 - 1.0) * 1e4).round() / 100.0
                },
                error_pct: k.error_pct(),
            }
        })
        .collect();
    let tools = catalog
        .tools()
        .iter()
        .enumerate()
        .map(|(i, t)| ToolRow {
            id: t.id.clone(),
            tokens: counted.iter().map(|(_, c, _)| c[i]).collect(),
        })
        .collect();
    Ok(CompareReport {
        tool_count: n,
        tool_choice: args.tool_choice.name().into(),
        counters,
        skipped,
        tools,
    })
}

pub fn render(r: &CompareReport, format: Format) -> String {
    let summary_headers = [
        "counter",
        "tokenizer",
        "model",
        "tools",
        "fixed",
        "request",
        "per tool",
        "vs o200k-json",
    ];
    let summary: Vec<Vec<String>> = r
        .counters
        .iter()
        .map(|c| {
            vec![
                c.counter.clone(),
                c.tokenizer.clone(),
                c.model.clone(),
                format!("{}{}", c.tools_tokens, error_note(c.error_pct)),
                c.fixed_tokens.to_string(),
                c.request_tokens.to_string(),
                format!("{:.1}", c.per_tool_mean),
                format!("{:+.1}%", c.vs_o200k_json_pct),
            ]
        })
        .collect();
    let mut tool_headers = vec!["tool".to_string()];
    tool_headers.extend(r.counters.iter().map(|c| c.counter.clone()));
    let tool_rows: Vec<Vec<String>> = r
        .tools
        .iter()
        .map(|t| {
            let mut row = vec![t.id.clone()];
            row.extend(t.tokens.iter().map(usize::to_string));
            row
        })
        .collect();
    let th: Vec<&str> = tool_headers.iter().map(String::as_str).collect();
    match format {
        Format::Json => to_json(r),
        Format::Csv => csv(&th, &tool_rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let mut right = vec![false];
            right.extend(r.counters.iter().map(|_| true));
            let mut out = table(&th, &tool_rows, &right);
            out.push('\n');
            out.push_str(&table(
                &summary_headers,
                &summary,
                &[false, false, false, true, true, true, true, true],
            ));
            for s in &r.skipped {
                out.push_str(&format!("{} skipped: {}\n", s.counter, s.reason));
            }
            out.push_str(&format!(
                "{} tools, tool_choice {}; request = tools + fixed (the model's tool-use preamble and the counter's framing)\n",
                r.tool_count, r.tool_choice
            ));
            out
        }
    }
}
