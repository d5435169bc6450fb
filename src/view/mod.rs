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
