//! The `toolbudget` binary: the command line (`cli`, clap types) and one module per subcommand
//! (`commands`), over the library. Only this crate finds input files, writes output, prints
//! and reads the clock.

// As in the library: arguments and files are input, and an unwrap on their path would be a
// panic instead of an error (clippy.toml: allow-unwrap-in-tests).
#![deny(clippy::unwrap_used)]

use std::process::ExitCode;

mod cli;
mod commands;

use clap::Parser;
use cli::Cli;

fn main() -> ExitCode {
    // SAFETY: first statement of main, no other thread exists yet to read the environment.
    unsafe { toolbudget::search::embed::pin_thread_count() };
    toolbudget::output::check_stdout();
    toolbudget::output::install_interrupt_cleanup();
    toolbudget::output::become_subreaper();
    // Hidden, for the doc tests: the CLI reference as Markdown (docs/reference/cli.md).
    if std::env::var_os("TOOLBUDGET_CLI_MARKDOWN").is_some() {
        print!("{}", cli::reference_markdown());
        return ExitCode::SUCCESS;
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            // clap prints help/version to stdout (exit 0) and usage errors to stderr (exit 2).
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    // Hidden, for the doc tests: arguments accepted, nothing run (`console,no-run` blocks).
    if std::env::var_os("TOOLBUDGET_PARSE_ONLY").is_some() {
        return ExitCode::SUCCESS;
    }
    let result = commands::run(&cli).map(ExitCode::from);
    // No process the run started outlives it (a `setsid()` grandchild of a scorer included).
    toolbudget::output::end_descendants();
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
