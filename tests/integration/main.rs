//! The one integration-test binary: each module was a test binary of its own (each linked the
//! whole dependency graph); `support` is what they share.

mod support;

mod anthropic_api;
mod atomic_write;
mod bad_input;
mod captured_bodies;
mod catalog_roundtrip;
mod charts;
mod check;
mod cli_count;
mod cli_counters;
mod docs;
mod eval_compare;
mod eval_pool;
mod external;
mod fixtures;
mod fuzz_corpus;
mod hostile;
mod hostile_bounds;
mod hostile_numbers;
mod ir_measures;
mod live;
mod mcp_hostile;
mod mcp_import;
mod mcp_live;
mod output_bytes;
mod progress;
mod provider_counts;
mod published;
mod real_data;
mod report;
mod report_html;
mod report_interrupt;
mod roundtrip_any_form;
mod search_cli;
mod session_codex;
mod session_hostile;
mod session_import;
mod session_known;
mod session_queries;
mod session_shapes;
mod simulate_cli;
mod simulate_clients;
mod wide_integers;
mod work_budget;
