//! The one output guard: what a command will write and what it reads, checked before any work.
//! No output is one of the inputs (or a folder holding one), and each output is of the kind the
//! command may replace: a regular file, a folder written whole, or a folder files are added to.

use std::path::{Path, PathBuf};

use super::write::{check_out_dir, check_out_file, check_out_not_input};
use crate::error::Result;

/// How a command writes one output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// One file, replaced whole.
    File,
    /// A folder replaced whole by the files of one run (`write_tree`).
    Tree,
    /// Files added one by one (each written whole) to a folder that may hold others.
    AddTo,
}

/// A command's outputs and inputs.
#[derive(Debug, Default)]
pub struct Guard {
    inputs: Vec<PathBuf>,
    /// (flag, path, how it is written): the flag names the output in a refusal.
    outputs: Vec<(&'static str, PathBuf, Target)>,
    /// Files the command reads and rewrites by design (a cassette, a cache, a refit), by flag.
    own: Vec<(&'static str, PathBuf)>,
}

impl Guard {
    /// An input the command reads (a file or a folder).
    pub fn input(&mut self, path: impl Into<PathBuf>) -> &mut Self {
        self.inputs.push(path.into());
        self
    }

    /// Inputs the command reads.
    pub fn inputs<P: Into<PathBuf>>(&mut self, paths: impl IntoIterator<Item = P>) -> &mut Self {
        self.inputs.extend(paths.into_iter().map(Into::into));
        self
    }

    /// An output, when its flag (`flag`, e.g. `--out`) was given.
    pub fn output(&mut self, flag: &'static str, path: Option<&Path>, target: Target) -> &mut Self {
        if let Some(p) = path {
            self.outputs.push((flag, p.to_path_buf(), target));
        }
        self
    }

    /// A file the command reads and rewrites (a cassette, an answer cache), also given as an
    /// input (an output folder must not hold it): checked as a file output and against every
    /// other input, never against its own entry.
    pub fn own(&mut self, flag: &'static str, path: &Path) -> &mut Self {
        self.own.push((flag, path.to_path_buf()));
        self
    }

    /// Refuses, before any work, an output that is an input (this says more than "holds
    /// files", so it is checked first), then one of a kind its target may not replace.
    pub fn check(&self) -> Result<()> {
        let inputs: Vec<&Path> = self.inputs.iter().map(PathBuf::as_path).collect();
        for (flag, out, target) in &self.outputs {
            check_out_not_input(flag, out, *target == Target::Tree, &inputs)?;
        }
        for (flag, own) in &self.own {
            // Not against itself (its one entry as an input), but never over another input (a
            // cassette named like the scenario or a catalog it reads).
            let mut others = inputs.clone();
            if let Some(i) = others.iter().position(|p| *p == own) {
                others.remove(i);
            }
            check_out_not_input(flag, own, false, &others)?;
            check_out_file(own)?;
        }
        for (_, out, target) in &self.outputs {
            match target {
                Target::File => check_out_file(out)?,
                // Added to an existing folder one by one, each atomically; a new one is made.
                Target::AddTo if std::fs::symlink_metadata(out).is_ok_and(|m| m.is_dir()) => {}
                Target::Tree | Target::AddTo => check_out_dir(out)?,
            }
        }
        Ok(())
    }
}
