//! `toolbudget count`: token counts per tool, per server and in total.

use serde::Serialize;

use crate::catalog::Catalog;
use crate::cli::CountArgs;
use crate::error::Result;
use crate::output::{Format, csv, emit, md_table, text_table, to_json};
use crate::tokenize::ToolTokens;

#[derive(Debug, Serialize)]
pub struct CountReport {
    pub tokenizer: String,
    pub render: String,
    pub total_tokens: usize,
    /// Every tool, the search tool included (the count every command uses).
    pub tool_count: usize,
    /// The catalog's search tool, when it has one: sent by the deferred mode, never a search
    /// result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_tool: Option<String>,
    pub per_tool: PerToolStats,
    pub servers: Vec<ServerCount>,
    pub tools: Vec<ToolCount>,
}

#[derive(Debug, Serialize)]
pub struct PerToolStats {
    pub mean: f64,
    pub median: f64,
    pub max: usize,
}

#[derive(Debug, Serialize)]
pub struct ServerCount {
    /// The MCP server, or `(built-in)`.
    pub server: String,
    pub tools: usize,
    pub tokens: usize,
}

#[derive(Debug, Serialize)]
pub struct ToolCount {
    pub id: String,
    pub tokens: usize,
}

pub const BUILTIN_GROUP: &str = "(built-in)";

pub fn summarize(catalog: &Catalog, tokens: &ToolTokens) -> CountReport {
    let counts = tokens.counts();
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let n = sorted.len();
    let median = match n {
        0 => 0.0,
        _ if n % 2 == 1 => sorted[n / 2] as f64,
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0,
    };
    let mut servers: Vec<ServerCount> = Vec::new();
    for (t, &c) in catalog.tools().iter().zip(counts) {
        let group = t.server.as_deref().unwrap_or(BUILTIN_GROUP);
        match servers.iter_mut().find(|s| s.server == group) {
            Some(s) => {
                s.tools += 1;
                s.tokens += c;
            }
            None => servers.push(ServerCount {
                server: group.to_string(),
                tools: 1,
                tokens: c,
            }),
        }
    }
    CountReport {
        tokenizer: tokens.tokenizer.name().to_string(),
        render: tokens.render.name().to_string(),
        total_tokens: tokens.total(),
        tool_count: n,
        search_tool: catalog.search_tool().map(|i| catalog.get(i).id.clone()),
        per_tool: PerToolStats {
            mean: if n == 0 {
                0.0
            } else {
                round2(tokens.total() as f64 / n as f64)
            },
            median,
            max: sorted.last().copied().unwrap_or(0),
        },
        servers,
        tools: catalog
            .tools()
            .iter()
            .zip(counts)
            .map(|(t, &c)| ToolCount {
                id: t.id.clone(),
                tokens: c,
            })
            .collect(),
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

pub fn render(report: &CountReport, format: Format) -> String {
    let tool_rows: Vec<Vec<String>> = report
        .tools
        .iter()
        .map(|t| vec![t.id.clone(), t.tokens.to_string()])
        .collect();
    let server_rows: Vec<Vec<String>> = report
        .servers
        .iter()
        .map(|s| vec![s.server.clone(), s.tools.to_string(), s.tokens.to_string()])
        .collect();
    match format {
        Format::Json => to_json(report),
        Format::Csv => csv(&["id", "tokens"], &tool_rows),
        Format::Table | Format::Md => {
            let table = if format == Format::Md {
                md_table
            } else {
                text_table
            };
            let mut out = String::new();
            out.push_str(&table(&["tool", "tokens"], &tool_rows, &[false, true]));
            out.push('\n');
            out.push_str(&table(
                &["server", "tools", "tokens"],
                &server_rows,
                &[false, true, true],
            ));
            out.push('\n');
            out.push_str(&format!(
                "{} tools, {} tokens in total ({}, {} rendering); per tool: mean {:.1}, median {:.1}, max {}\n",
                report.tool_count,
                report.total_tokens,
                report.tokenizer,
                report.render,
                report.per_tool.mean,
                report.per_tool.median,
                report.per_tool.max
            ));
            if let Some(t) = &report.search_tool {
                out.push_str(&format!(
                    "{t} is the search tool: counted and sent in deferred mode, never sent \
                     eagerly, never a search result.\n"
                ));
            }
            out
        }
    }
}

pub fn run(args: &CountArgs) -> Result<()> {
    let catalog = super::load(&args.catalog)?;
    let tokens = ToolTokens::compute(&catalog, args.tokenizer, args.render);
    let report = summarize(&catalog, &tokens);
    emit(
        args.output.out.as_deref(),
        &render(&report, args.output.format),
    )
}
