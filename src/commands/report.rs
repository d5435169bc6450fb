//! `toolbudget report`: finds the shipped scenarios, fixtures and (with `--data`) real data,
//! hands them to the report pipeline (`experiment::report`) with a monotonic clock and a
//! progress bar, and writes the files `view::report` renders (with `--live DIR`, the live
//! run's section appended). Nothing here computes results.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::progress::Bars;
use super::{Outcome, Run};
use crate::cli::ReportArgs;
use toolbudget::error::{Error, Result};
use toolbudget::experiment::CatalogSource;
use toolbudget::experiment::eval::EvalInput;
use toolbudget::experiment::report::{self as pipeline, ReportInputs, Variant};
use toolbudget::output::{Guard, Target, write_tree};
use toolbudget::progress::{Progress, Unit};
use toolbudget::view::report::Pages;

impl Run for ReportArgs {
    fn guard(&self) -> Guard {
        // The catalogs the scenarios (and the imported sessions) name are inputs too: a report
        // folder holding one would delete it.
        let mut scenarios = scenario_files(&shipped(&self.scenarios));
        scenarios.extend(scenario_files(&shipped(&self.scenarios).join("published")));
        if let Some(dir) = &self.sessions {
            scenarios.extend(scenario_files(dir));
        }
        let mut g = Guard::default();
        g.input(&self.scenarios)
            .inputs(toolbudget::experiment::simulate::named_inputs(&scenarios))
            .input(&self.fixtures)
            .inputs(self.data.iter().cloned())
            .inputs(self.sessions.iter().cloned())
            .inputs(self.calibration.iter().cloned())
            .inputs(self.live.iter().cloned())
            .output("--out", Some(&self.out), Target::Tree);
        g
    }

    fn run(&self, quiet: bool) -> Result<Outcome> {
        let mut inputs = gather(
            &shipped(&self.scenarios),
            &shipped(&self.fixtures),
            self.data.as_deref(),
        )?;
        inputs.calibration.clone_from(&self.calibration);
        inputs.live.clone_from(&self.live);
        inputs.sessions = self
            .sessions
            .clone()
            .map(|dir| (dir, session_variants(self)));
        inputs.scorers.clone_from(&self.scorers);
        inputs.scenario_scorer.clone_from(&self.scenario_scorer);
        inputs.external = self.external.config();
        let bars = Bars::new("report", quiet);
        let origin = Instant::now();
        let data = pipeline::build(&inputs, &|| origin.elapsed(), &bars)?;
        let mut files =
            toolbudget::view::report::render(&data).map_err(|e| Error::Missing(e.to_string()))?;
        if !data.live.is_empty() {
            toolbudget::view::report::add_live(&mut files, &data.live)
                .map_err(|e| Error::Missing(e.to_string()))?;
        }
        toolbudget::view::report::pages(&mut files, self.format);
        bars.phase("writing", 1, Unit::Items(""));
        let files: Vec<(String, Vec<u8>)> = files.into_iter().map(|f| (f.path, f.bytes)).collect();
        write_tree(&self.out, &files)?;
        bars.finish();
        if !quiet {
            eprintln!(
                "wrote {} files to {}",
                files.len(),
                self.out
                    .join(if self.format == Pages::Html {
                        "index.html"
                    } else {
                        "index.md"
                    })
                    .display()
            );
        }
        Ok(Outcome::Success)
    }
}

/// The shipped scenarios and fixtures are found from the current folder (the repository
/// root), or else beside the crate this binary was built from, so `report` works from
/// anywhere.
fn shipped(p: &Path) -> PathBuf {
    if p.is_relative() && !p.exists() {
        let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join(p);
        if beside.exists() {
            return beside;
        }
    }
    p.to_path_buf()
}

/// The scenario files of a folder, for the guard (none when it cannot be read: the run says
/// why).
fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    sorted_files(dir, &["yaml", "yml"]).unwrap_or_default()
}

/// Every (scorer, listing) asked for, keyword over names when none is.
fn session_variants(args: &ReportArgs) -> Vec<Variant> {
    let scorers = if args.session_scorers.is_empty() {
        vec![Variant::CLAUDE_CODE.scorer]
    } else {
        args.session_scorers.clone()
    };
    let listings = if args.session_listings.is_empty() {
        vec![Variant::CLAUDE_CODE.listing]
    } else {
        args.session_listings.clone()
    };
    let mut out = Vec::new();
    for &scorer in &scorers {
        for &listing in &listings {
            let v = Variant { scorer, listing };
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// Finds every input file of the report.
fn gather(scenarios: &Path, fixtures: &Path, data: Option<&Path>) -> Result<ReportInputs> {
    let mut inputs = ReportInputs::default();
    let fixture_catalogs = fixture_sources(fixtures)?;
    inputs
        .catalogs
        .push(("fixtures".into(), fixture_catalogs.clone()));
    // Snapshots of real MCP servers (`just snapshot`), when shipped.
    let live = sources(sorted_files(&fixtures.join("live"), &["json"])?);
    if !live.is_empty() {
        inputs.catalogs.push(("fixtures/live".into(), live));
    }
    if let Some(dir) = data {
        inputs.catalogs.extend(real_catalogs(dir)?);
    }
    inputs.scenarios = sorted_files(scenarios, &["yaml", "yml"])?;
    // Scenarios reproducing published figures (`scenarios/published/`), after the others.
    inputs.scenarios.extend(sorted_files(
        &scenarios.join("published"),
        &["yaml", "yml"],
    )?);
    if inputs.scenarios.is_empty() {
        inputs.notes.push(format!(
            "no scenarios under {}: the scenario sections are empty",
            scenarios.display()
        ));
    }
    for queries in sorted_files(&fixtures.join("queries"), QUERY_EXTENSIONS)? {
        inputs.evals.push(EvalInput {
            catalog_label: "fixtures/catalogs".into(),
            catalog: fixture_catalogs.clone(),
            queries,
        });
    }
    if let Some(dir) = data {
        real_evals(&mut inputs, dir)?;
    }
    Ok(inputs)
}

const QUERY_EXTENSIONS: &[&str] = &["jsonl", "json", "yaml", "yml"];
const CATALOG_EXTENSIONS: &[&str] = &["json", "yaml", "yml"];

fn sources(paths: Vec<PathBuf>) -> Vec<CatalogSource> {
    paths
        .into_iter()
        .map(|path| CatalogSource { path, server: None })
        .collect()
}

/// `DIR/queries/NAME.*` against `DIR/catalogs/NAME.json`; a set without its catalog is noted.
fn real_evals(inputs: &mut ReportInputs, dir: &Path) -> Result<()> {
    for queries in sorted_files(&dir.join("queries"), QUERY_EXTENSIONS)? {
        let name = queries
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let catalog = dir.join("catalogs").join(format!("{name}.json"));
        if !catalog.is_file() {
            inputs.notes.push(format!(
                "`{}` not evaluated: no catalog {} beside it",
                queries.display(),
                catalog.display()
            ));
            continue;
        }
        inputs.evals.push(EvalInput {
            catalog_label: format!("{name}.json"),
            catalog: sources(vec![catalog]),
            queries,
        });
    }
    Ok(())
}

/// The fixture catalogs: `catalogs/builtins.yaml` and every `catalogs/mcp/*.json` (server =
/// file stem), sorted by name so the order never depends on the file system.
fn fixture_sources(dir: &Path) -> Result<Vec<CatalogSource>> {
    let catalogs = dir.join("catalogs");
    let mut found = Vec::new();
    let builtins = catalogs.join("builtins.yaml");
    if builtins.is_file() {
        found.push(builtins);
    }
    found.extend(sorted_files(&catalogs.join("mcp"), CATALOG_EXTENSIONS)?);
    if found.is_empty() {
        return Err(Error::usage(format!(
            "no fixture catalogs under {} (run from the repository root, or pass --fixtures DIR)",
            catalogs.display()
        )));
    }
    Ok(sources(found))
}

/// Files in `dir` with one of the extensions, sorted by name; empty if `dir` does not exist.
fn sorted_files(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::input(
                dir,
                None,
                format!("cannot read the folder: {e}"),
            ));
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .and_then(|x| x.to_str())
                    .is_some_and(|x| extensions.contains(&x))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// One group per real catalog file, and one per folder of catalogs (`docker/`, `livemcpbench/`).
fn real_catalogs(dir: &Path) -> Result<Vec<(String, Vec<CatalogSource>)>> {
    let root = dir.join("catalogs");
    if !root.is_dir() {
        return Err(Error::usage(format!(
            "--data {}: no catalogs/ folder inside",
            dir.display()
        )));
    }
    let mut groups: Vec<(String, Vec<CatalogSource>)> = sorted_files(&root, CATALOG_EXTENSIONS)?
        .into_iter()
        .map(|p| (file_name(&p), sources(vec![p])))
        .collect();
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map_err(|e| Error::input(&root, None, format!("cannot read the folder: {e}")))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for sub in subdirs {
        let files = sorted_files(&sub, CATALOG_EXTENSIONS)?;
        if !files.is_empty() {
            groups.push((format!("{}/", file_name(&sub)), sources(files)));
        }
    }
    Ok(groups)
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}
