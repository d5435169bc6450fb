//! `toolbudget search`: ranks the tools of a catalog for one query with one scorer
//! (`experiment::search`).

use std::sync::Arc;

use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::SearchArgs;
use toolbudget::error::{Error, Result};
use toolbudget::experiment::ScorerConfig;
use toolbudget::experiment::search::search;
use toolbudget::output::{Guard, Target, emit};
use toolbudget::progress::Shared;

impl Run for SearchArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.inputs(super::catalog_paths(&self.catalog)).output(
            "--out",
            self.output.out.as_deref(),
            Target::File,
        );
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        // clap's own message for a non-UTF-8 argument does not say which one it was.
        let query = self.query.to_str().ok_or_else(|| {
            Error::usage(format!(
                "QUERY \"{}\" is not valid UTF-8; queries are text",
                self.query.display()
            ))
        })?;
        let bars = Arc::new(Bars::new("search", quiet));
        let catalog = toolbudget::experiment::load_catalog(
            &super::catalog_sources(&self.catalog)?,
            bars.as_ref(),
        )?;
        let mut config = ScorerConfig::default();
        self.embedding.apply(&mut config);
        self.external.apply(&mut config);
        config.progress = Some(Shared(bars));
        let report = search(
            Arc::new(catalog),
            &self.scorer,
            &config,
            query,
            self.limit,
            self.explain,
        )?;
        emit(
            self.output.out.as_deref(),
            &toolbudget::view::search::render(&report, self.output.format),
        )?;
        Ok(Outcome::Success)
    }
}
