//! Report rendering: pure functions from finished results to files (Markdown, CSV, JSON, SVG).
//! Nothing here reads files, measures time or computes results; `commands::report` does that.

pub mod charts;
