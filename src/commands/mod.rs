//! One module per subcommand: each turns parsed arguments into library calls and output.
//! This layer (with `main.rs`) is the only one that touches files, stdout and the clock.

pub mod catalog_generate;
pub mod count;
pub mod report;

use crate::catalog::{Catalog, load_catalogs, parse_catalog_arg};
use crate::cli::CatalogArgs;
use crate::error::Result;

pub fn load(args: &CatalogArgs) -> Result<Catalog> {
    let sources: Vec<_> = args.catalogs.iter().map(|a| parse_catalog_arg(a)).collect();
    load_catalogs(&sources)
}
