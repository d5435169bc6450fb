//! `toolbudget count`: token counts per tool, per server and in total, under one counter or
//! (`--compare-counters`) under every counter side by side (`experiment::count`).

use super::api::ApiFiles;
use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::CountArgs;
use toolbudget::error::Result;
use toolbudget::experiment::count::{self, CountRequest, CountResult};
use toolbudget::output::{Guard, Target, emit};
use toolbudget::view;

impl Run for CountArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.inputs(super::catalog_paths(&self.catalog))
            .input(&self.api.api_cache)
            .own("--api-cache", &self.api.api_cache)
            .output("--out", self.output.out.as_deref(), Target::File);
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let request = CountRequest {
            catalog: super::catalog_sources(&self.catalog)?,
            counter: self.counter,
            tokenizer: self.tokenizer,
            render: self.render,
            compare_counters: self.compare_counters,
            model: self.model.clone(),
            tool_choice: self.tool_choice,
            api_available: std::env::var("ANTHROPIC_API_KEY").is_ok_and(|k| !k.is_empty())
                || self.api.api_cache.is_file(),
        };
        let mut api = ApiFiles(self.api.clone());
        let format = self.output.format;
        let text = match count::run(&request, &Bars::new("count", quiet), Some(&mut api))? {
            CountResult::Compared(c) => view::counters::render(&c, format),
            CountResult::One(report, captured) => {
                view::count::render_captured(&report, captured.as_ref(), format)
            }
        };
        emit(self.output.out.as_deref(), &text)?;
        Ok(Outcome::Success)
    }
}
