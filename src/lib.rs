//! toolbudget: measures what deferred tool loading buys an LLM agent.
//!
//! Data flows one way: `catalog` loads and validates tool definitions; `tokenize` counts each
//! tool once; `search` ranks tools for a query; `eval` scores rankings against labels;
//! `simulate` replays conversations eagerly and deferred through the same search core;
//! `experiment` runs what the commands and the report show, each into one result value, and
//! `view` renders finished results. Loaders read the input files they are given;
//! only the binary (`src/main.rs` with its `cli` and `commands`) finds files, writes output,
//! prints and reads the clock.

// Input reaches the library as bytes: an unwrap on its path would turn bad input into a
// panic. Tests may unwrap (clippy.toml: allow-unwrap-in-tests).
#![deny(clippy::unwrap_used)]

pub mod adoption;
#[cfg(test)]
mod architecture;
pub mod budget;
pub mod catalog;
pub mod counter;
pub mod document;
pub mod error;
pub mod eval;
pub mod experiment;
pub mod generate;
pub mod input;
pub mod live;
pub mod mcp;
pub mod names;
pub mod number;
pub mod output;
pub mod prices;
pub mod process;
pub mod progress;
pub mod rng;
pub mod search;
pub mod session;
pub mod simulate;
pub mod timing;
pub mod tokenize;
pub mod view;

pub use error::{Error, InputError, Result};
