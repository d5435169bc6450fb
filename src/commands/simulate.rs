//! `toolbudget simulate`: replays scenarios eager and deferred (`experiment::simulate`) and
//! prints what each mode costs, or (`--client`) each client's policy side by side. The search
//! latency is measured on the real scorer (table and md by default) or modeled from the
//! profile (json and csv by default, so they stay byte-identical); the output says which.

use std::time::Instant;

use super::api::ApiFiles;
use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::SimulateArgs;
use toolbudget::error::Result;
use toolbudget::experiment::simulate::{
    self, SearchLatencySource, Settings, SimulatePlan, SimulateRequest,
};
use toolbudget::output::{Format, Guard, Target, emit};

impl Run for SimulateArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.inputs(self.scenarios.iter().cloned())
            .inputs(toolbudget::experiment::simulate::named_inputs(
                &self.scenarios,
            ))
            .inputs(self.calibration.iter().cloned())
            .input(&self.api.api_cache)
            .own("--api-cache", &self.api.api_cache)
            .output("--out", self.output.out.as_deref(), Target::File);
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let plan = SimulatePlan::new(self.request())?;
        let mut api = ApiFiles(self.api.clone());
        let text = if plan.by_client() {
            let result = simulate::run_clients(&plan, Some(&mut api))?;
            toolbudget::view::clients::render(&result, self.output.format)
        } else {
            let origin = Instant::now();
            let bars = Bars::new("simulate", quiet);
            let result = simulate::run(&plan, &|| origin.elapsed(), &bars, Some(&mut api))?;
            toolbudget::view::simulate::render(&result, self.output.format, self.per_request)
        };
        emit(self.output.out.as_deref(), &text)?;
        Ok(Outcome::Success)
    }
}

impl SimulateArgs {
    fn request(&self) -> SimulateRequest {
        SimulateRequest {
            scenarios: self.scenarios.clone(),
            settings: Settings {
                counter: self.counter,
                tokenizer: self.tokenizer,
                scorer: self.scorer.clone(),
                calibration: None,
                external: self.external.config(),
            },
            calibration: self.calibration.clone(),
            per_request: self.per_request,
            latency: self.latency_source(),
            clients: self.client.clone(),
        }
    }

    /// Measured for the human formats, modeled for the byte-identical ones, unless asked.
    fn latency_source(&self) -> SearchLatencySource {
        self.search_latency.unwrap_or(match self.output.format {
            Format::Table | Format::Md => SearchLatencySource::Measured,
            Format::Json | Format::Csv => SearchLatencySource::Modeled,
        })
    }
}
