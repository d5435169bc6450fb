//! The views of a catalog import (`catalog import`): one row per server, the totals, and the
//! json of the [`ImportReport`].

use crate::mcp::ImportReport;
use crate::mcp::report::ServerStatus;
use crate::output::{Format, to_json};

pub fn render(report: &ImportReport, format: Format) -> String {
    let opt = |x: Option<usize>| x.map(|n| n.to_string()).unwrap_or_default();
    let rows: Vec<Vec<String>> = report
        .servers
        .iter()
        .map(|s| {
            vec![
                s.server.clone(),
                s.status.name().to_string(),
                opt(s.tools),
                opt(s.tokens),
                opt(s.pages),
                s.path
                    .clone()
                    .or_else(|| s.note.clone())
                    .unwrap_or_default(),
            ]
        })
        .collect();
    let headers = [
        "server",
        "status",
        "tools",
        "tokens",
        "pages",
        "file / note",
    ];
    let right = [false, false, true, true, true, false];
    match format {
        Format::Json => to_json(report),
        Format::Csv => crate::output::csv(&headers, &rows),
        Format::Table | Format::Md => {
            let table = crate::output::table_for(format);
            let ok = report
                .servers
                .iter()
                .filter(|s| s.status == ServerStatus::Ok)
                .count();
            format!(
                "{}\n{}, {} tokens in total ({}, {} rendering) from {} of {} server{}\n",
                table(&headers, &rows, &right),
                crate::number::plural(report.total_tools, "tool", "tools"),
                report.total_tokens,
                report.tokenizer,
                report.render,
                ok,
                report.servers.len(),
                if report.servers.len() == 1 { "" } else { "s" }
            )
        }
    }
}
