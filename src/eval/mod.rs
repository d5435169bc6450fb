//! Evaluation of scorers against labeled queries, and comparison of two evaluations.
//!
//! `eval` never knows which scorer produced a ranking: it sees `dyn Scorer` and tool indices.
//! `queries` loads and validates labels; `classes` names what kind of question a query asks;
//! `metrics` holds the metric definitions; `run` ranks every query and aggregates (per class,
//! refusals, the wrong-sibling rate of `siblings`, the refusal curve of `thresholds`); `pool`
//! adds distractors; `result` is the one result type (json, CSV rows, read back); `compare`
//! diffs two results (scorers named by `search::ScorerName`); `bootstrap` gives intervals and
//! the randomization test.

pub mod bootstrap;
pub mod classes;
pub mod compare;
pub mod metrics;
pub mod pool;
pub mod queries;
pub mod result;
pub mod run;
pub mod runfile;
pub mod siblings;
pub mod thresholds;
pub mod verify;

pub use crate::search::ScorerName;
pub use queries::{LabeledQuery, QuerySet, charge_work, check_work, load_queries, parse_queries};
pub use result::{EvalResult, ScorerResult, read_eval_result};
