//! Evaluation of scorers against labeled queries, and comparison of two evaluations.
//!
//! `eval` never knows which scorer produced a ranking: it sees `dyn Scorer` and tool indices.
//! `queries` loads and validates labels; `metrics` holds the metric definitions; `run` ranks
//! every query and aggregates; `compare` diffs two results; `bootstrap` gives intervals.

pub mod bootstrap;
pub mod compare;
pub mod metrics;
pub mod queries;
pub mod report;
pub mod run;

pub use queries::{LabeledQuery, QuerySet, load_queries, parse_queries};
