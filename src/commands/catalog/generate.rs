//! `toolbudget catalog generate`: a deterministic synthetic catalog (`experiment::generate`).

use crate::cli::GenerateArgs;
use crate::commands::{Outcome, Run};
use toolbudget::error::Result;
use toolbudget::output::{Guard, Target, emit};

impl Run for GenerateArgs {
    fn guard(&self) -> Guard {
        let mut g = Guard::default();
        g.output("--out", self.out.as_deref(), Target::File);
        g
    }

    fn run(&self, _quiet: bool) -> Result<Outcome> {
        let json =
            toolbudget::experiment::generate::native_json(self.tools, self.servers, self.seed)?;
        emit(self.out.as_deref(), &json)?;
        Ok(Outcome::Success)
    }
}
