//! Views: pure functions from finished result values to bytes (table, Markdown, CSV, JSON,
//! SVG). Each result type has one module holding its renderers, used by the command that prints
//! it and by the report that embeds it; `report` composes the report's files from them.

pub mod calibrate;
pub mod catalog_import;
pub mod chart;
pub mod check;
pub mod clients;
pub mod compare;
pub mod count;
pub mod counters;
pub mod diff;
pub mod eval;
pub mod live;
/// `crate::number` under the path the report's views name.
pub use crate::number;
pub mod published;
pub mod report;
pub mod search;
pub mod session_import;
pub mod sessions;
pub mod simulate;

/// Lines listed in each section of a pull-request summary at most (`compare`, `diff`).
const PR_SECTION_LINES: usize = 10;

/// One section of a pull-request summary (`### TITLE`): `extra` lines first, then `items` by
/// their key (most important first), at most [`PR_SECTION_LINES`] and a count of the rest;
/// "Nothing." when both are empty.
pub fn pr_section(
    out: &mut String,
    title: &str,
    mut items: Vec<(f64, String)>,
    extra: Vec<String>,
) {
    out.push_str(&format!("\n### {title}\n\n"));
    items.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = items.len() + extra.len();
    if n == 0 {
        out.push_str("Nothing.\n");
    }
    for line in extra
        .into_iter()
        .chain(items.into_iter().map(|(_, l)| l))
        .take(PR_SECTION_LINES)
    {
        out.push_str(&line);
    }
    if n > PR_SECTION_LINES {
        out.push_str(&format!("- … and {} more\n", n - PR_SECTION_LINES));
    }
}
