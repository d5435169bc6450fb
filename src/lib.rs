//! toolbudget: measures what deferred tool loading buys an LLM agent.
//!
//! Data flows one way: `catalog` loads and validates tool definitions; `tokenize` counts each
//! tool once; `search` ranks tools for a query; `eval` scores rankings against labels;
//! `simulate` replays conversations eagerly and deferred through the same search core;
//! `report` runs and renders finished results. Loaders read the input files they are given;
//! only `commands` (and the binary) find files, write output, print and read the clock.

// Input reaches the library as bytes: an unwrap on its path would turn bad input into a
// panic. Tests may unwrap (clippy.toml: allow-unwrap-in-tests).
#![deny(clippy::unwrap_used)]

pub mod catalog;
pub mod cli;
pub mod commands;
pub mod counter;
pub mod document;
pub mod error;
pub mod eval;
pub mod generate;
pub mod input;
pub mod live;
pub mod mcp;
pub mod names;
pub mod output;
pub mod report;
pub mod rng;
pub mod search;
pub mod session;
pub mod simulate;
pub mod timing;
pub mod tokenize;

pub use error::{Error, InputError, Result};
