//! `toolbudget count --compare-counters`: one catalog under every counter side by side — the
//! table a design review wants ("this catalog costs X on Claude, Y on GPT"). The local counts
//! and the comparison are library calls (`experiment::count`); the `anthropic-api` counts go
//! through the command's client.

use super::count_with;
use crate::cli::CountArgs;
use crate::commands::progress::Bar;
use toolbudget::catalog::Catalog;
use toolbudget::counter::CounterKind;
use toolbudget::error::Result;
use toolbudget::experiment::count::{
    Counted, CounterComparison, Skipped, compare_counters, local_counts,
};

fn api_available(args: &CountArgs) -> bool {
    std::env::var("ANTHROPIC_API_KEY").is_ok_and(|k| !k.is_empty()) || args.api.api_cache.is_file()
}

pub fn compare(catalog: &Catalog, args: &CountArgs, visible: bool) -> Result<CounterComparison> {
    let mut skipped = Vec::new();
    let local = Bar::spinner(
        visible,
        "count",
        &format!(
            "{} under every local counter",
            toolbudget::number::plural(catalog.len(), "tool", "tools")
        ),
    );
    let mut counted = local_counts(catalog, args.model.as_deref(), args.tool_choice)?;
    local.finish();
    if api_available(args) {
        let api = CounterKind::AnthropicApi;
        let bar = Bar::new(visible, "count", catalog.len(), "tools");
        bar.step(api.name());
        match count_with(
            api,
            catalog,
            args.model.as_deref(),
            args.tool_choice,
            &args.api,
            &bar,
        ) {
            Ok((t, fixed)) => counted.push(Counted {
                counter: api,
                counts: t.counts().to_vec(),
                fixed,
            }),
            // Optional here: a missing answer skips the API counter, with the reason.
            Err(e) => skipped.push(Skipped {
                counter: api,
                reason: e.to_string(),
            }),
        }
    }
    Ok(compare_counters(
        catalog,
        args.tool_choice,
        &counted,
        skipped,
    ))
}
