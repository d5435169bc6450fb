//! `toolbudget search`: ranks the tools of a catalog for one query with one scorer.

use std::sync::Arc;

use crate::cli::SearchArgs;
use toolbudget::error::Result;
use toolbudget::experiment::search::search;
use toolbudget::output::emit;
use toolbudget::search::ScorerConfig;

pub fn run(args: &SearchArgs, quiet: bool) -> Result<()> {
    // clap's own message for a non-UTF-8 argument does not say which one it was.
    let query = args.query.to_str().ok_or_else(|| {
        toolbudget::error::Error::usage(format!(
            "QUERY \"{}\" is not valid UTF-8; queries are text",
            args.query.display()
        ))
    })?;
    let catalog = Arc::new(super::load(&args.catalog)?);
    let mut config = ScorerConfig::default();
    args.embedding.apply(&mut config);
    args.external.apply(&mut config);
    config.progress = super::progress::embed_progress(super::progress::visible(quiet));
    let report = search(
        catalog,
        &args.scorer,
        &config,
        query,
        args.limit,
        args.explain,
    )?;
    emit(
        args.output.out.as_deref(),
        &toolbudget::view::search::render(&report, args.output.format),
    )
}
