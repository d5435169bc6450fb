//! `toolbudget catalog`: `import` snapshots live MCP servers into catalog files, `generate`
//! writes a deterministic synthetic catalog.

pub mod generate;
pub mod import;
