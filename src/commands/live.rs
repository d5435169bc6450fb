//! `toolbudget live`: reads the scenarios and the cassette, builds the endpoint (key from the
//! environment, the real transport, a monotonic clock, `std::thread::sleep`), plays every
//! scenario eager and deferred through `live::run_scenario` (with each model of `--model A,B`
//! in turn), saves the cassette (also when a request fails) and writes the result's views.

use std::path::Path;
use std::time::{Duration, Instant};

use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::LiveArgs;
use toolbudget::error::{Error, Result};
use toolbudget::experiment::api::Ureq;
use toolbudget::experiment::live::{
    self, Cassette, CassetteLoad as Load, Endpoint, LivePlan, LiveRequest, LiveResult, Settings,
};
use toolbudget::experiment::simulate::Settings as SimulateSettings;
use toolbudget::output::{
    Format, Guard, Target, csv_rows, emit, to_json, write_atomic, write_tree,
};

fn read_cassette(path: &Path, offline: bool) -> Result<Cassette> {
    if !path.exists() {
        if offline {
            return Err(Error::input(
                path,
                None,
                "--offline replays from the cassette, and there is none here",
            ));
        }
        return Ok(Cassette::default());
    }
    let bytes = toolbudget::input::read(path)?;
    let (cassette, load) = Cassette::read(path, &bytes)?;
    // Its own kind, checksum and all, yet holding a count or latency no view can show.
    cassette.check_numbers(path, &bytes)?;
    if let Load::Foreign(why) = &load {
        return Err(Error::input(
            path,
            None,
            format!(
                "is not a cassette ({why}); a cassette is written only over a cassette: give \
                 --cassette another path"
            ),
        ));
    }
    if let Load::Discarded(why) = load {
        if offline {
            return Err(Error::input(
                path,
                None,
                format!("the cassette is not usable ({why}); record it again online"),
            ));
        }
        eprintln!(
            "note: {} was discarded ({why}); it is recorded anew",
            path.display()
        );
    }
    Ok(cassette)
}

fn save_cassette(ep: &Endpoint, path: &Path) -> Result<()> {
    if ep.cassette.is_dirty() {
        write_atomic(path, &ep.cassette.to_readable_bytes(path)?)?;
    }
    Ok(())
}

impl Run for LiveArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.inputs(self.scenarios.iter().cloned())
            .inputs(toolbudget::experiment::simulate::named_inputs(
                &self.scenarios,
            ))
            .input(&self.cassette)
            .output("--out", self.out.as_deref(), Target::Tree)
            .own("--cassette", &self.cassette);
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let plan = LivePlan::new(self.request())?;
        let cassette = read_cassette(&self.cassette, self.offline)?;
        let key = std::env::var(self.provider.key_var())
            .ok()
            .filter(|k| !k.is_empty());
        let origin = Instant::now();
        let mut ep = Endpoint::new(
            self.provider,
            self.base_url
                .as_deref()
                .unwrap_or(self.provider.default_base_url()),
            key,
            self.offline,
            self.cassette.display().to_string(),
            cassette,
            Box::new(Ureq::with_timeout(Duration::from_secs_f64(
                self.timeout_secs,
            ))),
            Box::new(std::thread::sleep),
            Box::new(move || origin.elapsed()),
        );
        let bars = Bars::new("live", quiet);
        let results = live::run(&plan, &mut ep, &bars, &mut |ep| {
            save_cassette(ep, &self.cassette)
        })?;
        if let Some(dir) = &self.out {
            let files = match results.as_slice() {
                [one] => toolbudget::view::live::files(one),
                runs => toolbudget::view::live::models_files(runs)
                    .map_err(|e| Error::Missing(e.to_string()))?,
            };
            write_tree(dir, &files)?;
        }
        if !quiet {
            eprintln!(
                "live: {} request{} sent, {} replayed from {}",
                ep.sent,
                if ep.sent == 1 { "" } else { "s" },
                ep.replayed,
                self.cassette.display()
            );
        }
        let text = match results.as_slice() {
            [one] => render(one, self.format),
            runs => render_models(runs, self.format),
        };
        emit(None, &text)?;
        Ok(Outcome::Success)
    }
}

impl LiveArgs {
    fn request(&self) -> LiveRequest {
        LiveRequest {
            scenarios: self.scenarios.clone(),
            provider: self.provider,
            counter: self.counter,
            simulate: SimulateSettings {
                scorer: self.scorer.clone(),
                external: self.external.config(),
                ..SimulateSettings::default()
            },
            models: self.model.clone(),
            settings: Settings {
                model: self.model.first().cloned().unwrap_or_default(),
                search: self.search,
                max_steps: self.max_steps as usize,
                max_tokens: self.max_tokens,
                temperature: self.temperature,
                seed: self.seed,
                repeat: self.repeat,
                tool_choice: self.tool_choice,
            },
        }
    }
}

/// Renders the result; pure.
pub fn render(result: &LiveResult, format: Format) -> String {
    match format {
        Format::Json => to_json(result),
        Format::Csv => {
            let turns: Vec<_> = result
                .scenarios
                .iter()
                .flat_map(|s| s.turns.clone())
                .collect();
            csv_rows(&turns)
        }
        Format::Table | Format::Md => toolbudget::view::live::text(result, format == Format::Md),
    }
}

/// Renders several models' results: json `{"models": [...]}`, the turns CSV with a `model`
/// column first, or each model's tables and then the models side by side; pure.
pub fn render_models(results: &[LiveResult], format: Format) -> String {
    match format {
        Format::Json => to_json(&toolbudget::experiment::live::LiveModels {
            models: results.to_vec(),
        }),
        Format::Csv => toolbudget::view::live::models_csv(results, |s| &s.turns),
        Format::Table | Format::Md => {
            toolbudget::view::live::models_text(results, format == Format::Md)
        }
    }
}
