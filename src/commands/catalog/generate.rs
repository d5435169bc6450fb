//! `toolbudget catalog generate`: a deterministic synthetic catalog (see `toolbudget::generate`).

use crate::cli::GenerateArgs;
use toolbudget::catalog::{MAX_TOOLS, to_native_json};
use toolbudget::error::{Error, Result};
use toolbudget::output::emit;

pub fn run(args: &GenerateArgs) -> Result<()> {
    if args.tools == 0 || args.tools > MAX_TOOLS {
        return Err(Error::usage(format!(
            "--tools must be between 1 and {MAX_TOOLS}, got {}",
            args.tools
        )));
    }
    if args.servers == 0 || args.servers > args.tools {
        return Err(Error::usage(format!(
            "--servers must be between 1 and --tools ({}), got {}",
            args.tools, args.servers
        )));
    }
    let catalog = toolbudget::generate::generate(args.tools, args.servers, args.seed);
    emit(args.out.as_deref(), &to_native_json(&catalog))
}
