use std::process::ExitCode;

use clap::Parser;
use toolbudget::cli::{CatalogCommand, Cli, Command};
use toolbudget::commands;

fn main() -> ExitCode {
    pin_thread_count();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let result = match &cli.command {
        Command::Count(args) => commands::count::run(args).map(|()| ExitCode::SUCCESS),
        Command::Report(args) => commands::report::run(args, cli.quiet).map(|()| ExitCode::SUCCESS),
        Command::Search(args) => commands::search::run(args).map(|()| ExitCode::SUCCESS),
        Command::Eval(args) => commands::eval::run(args, cli.quiet).map(|()| ExitCode::SUCCESS),
        Command::Compare(args) => commands::compare::run(args).map(ExitCode::from),
        Command::Simulate(args) => commands::simulate::run(args).map(|()| ExitCode::SUCCESS),
        Command::Catalog(group) => match &group.command {
            CatalogCommand::Import(args) => commands::catalog_import::run(args, cli.quiet),
            CatalogCommand::Generate(args) => {
                commands::catalog_generate::run(args).map(|()| ExitCode::SUCCESS)
            }
        },
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// candle asks for its thread count on every matrix product and, unless `RAYON_NUM_THREADS`
/// is set, answers by reading `/proc/cpuinfo`: about 3 ms of each ~10 ms query embedding
/// (measured with perf). Fixing the count once, before any thread starts, removes that.
fn pin_thread_count() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        // SAFETY: first statement of main, no other thread exists yet to read the environment.
        unsafe { std::env::set_var("RAYON_NUM_THREADS", cores.to_string()) };
    }
}
