//! Running: each experiment a command or the report makes, from loaded inputs to one result
//! value (`Serialize`), with time and progress injected by the caller. Nothing here prints,
//! finds files or renders; `view` turns the results into bytes.
//!
//! `report` runs every part of the report into a `ReportData` (scenarios through
//! `simulate`, evaluations through `eval`, `sweep` and `deferral` over generated catalogs,
//! sessions through `experiment::sessions`).

pub mod calibrate;
#[cfg(feature = "mcp")]
pub mod catalog_import;
pub mod check;
pub mod clients;
pub mod compare;
pub mod count;
pub mod deferral;
pub mod diff;
pub mod eval;
pub mod generate;
pub mod live;
pub mod report;
pub mod search;
pub mod session_import;
pub mod sessions;
pub mod simulate;
pub mod sweep;

/// Loads catalogs, each note of a captured request body (what of it was not the catalog)
/// told to `progress`.
pub fn load_catalog(
    sources: &[crate::catalog::CatalogSource],
    progress: &dyn crate::progress::Progress,
) -> crate::error::Result<crate::catalog::Catalog> {
    let catalog = crate::catalog::load_catalogs(sources)?;
    for note in catalog.notes() {
        progress.note(&format!("note: {note}"));
    }
    Ok(catalog)
}

/// `--prices FILE`: every price of this run from that table instead of the bundled snapshot.
/// Read as every JSON input is (size, UTF-8, value bounds), then as a price table.
pub fn use_prices(path: &std::path::Path) -> crate::error::Result<()> {
    let doc = crate::document::Document::read(path)?;
    crate::prices::PriceTable::use_for_run(crate::prices::PriceTable::parse(doc.text(), path)?);
    Ok(())
}

// The plain values a command names when it builds a plan: arguments, not work.
pub use crate::budget::Budget;
pub use crate::catalog::{CatalogSource, builtin, parse_catalog_arg};
pub use crate::search::{ScorerConfig, ScorerKind, ScorerSpec};

/// What a command injects to reach Anthropic's count_tokens: its client, settings and transport.
pub mod api {
    pub use super::simulate::ApiCounting;
    #[cfg(feature = "http")]
    pub use crate::counter::api::Ureq;
    pub use crate::counter::api::{
        CacheLoad, Client as ApiClient, DEFAULT_BASE_URL, Settings as ApiSettings,
    };
}
