//! Synthetic catalogs (`catalog generate`): the generator's catalog as native JSON, its size
//! checked first.

use crate::catalog::{MAX_TOOLS, to_native_json};
use crate::error::{Error, Result};

/// `tools` tools over `servers` servers from `seed`, as a native catalog.
pub fn native_json(tools: usize, servers: usize, seed: u64) -> Result<String> {
    if tools == 0 || tools > MAX_TOOLS {
        return Err(Error::usage(format!(
            "--tools must be between 1 and {MAX_TOOLS}, got {tools}"
        )));
    }
    if servers == 0 || servers > tools {
        return Err(Error::usage(format!(
            "--servers must be between 1 and --tools ({tools}), got {servers}"
        )));
    }
    let text = to_native_json(&crate::generate::generate(tools, servers, seed));
    // Refused before it is written: count, search and eval would refuse the file.
    if let Err(over) = crate::document::readable_back(&text, true) {
        let fits = (tools as f64 * over.fitting_share() * 0.99).floor() as usize;
        return Err(Error::usage(format!(
            "catalog generate --tools {tools}: the catalog {over}, so count, search and eval \
             could not read it; nothing was written. Generate at most about {fits} tools"
        )));
    }
    Ok(text)
}
