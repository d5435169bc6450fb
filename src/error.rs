//! Library error types. Every input problem carries the file it came from and, when the
//! problem has a place in the text, its 1-based `line:column`, so the binary can print one
//! `error: FILE:LINE:COL: message` line and exit 2.

use std::fmt;
use std::path::{Path, PathBuf};

/// A place in an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// A problem with something the user gave us: a file, a flag, a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub path: Option<PathBuf>,
    pub position: Option<Position>,
    pub message: String,
}

impl InputError {
    pub fn in_file(path: &Path, position: Option<Position>, message: impl Into<String>) -> Self {
        Self {
            path: Some(path.to_path_buf()),
            position,
            message: message.into(),
        }
    }

    /// An error not tied to a file: a bad flag value, an invalid query.
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            path: None,
            position: None,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = &self.path {
            write!(f, "{}:", path.display())?;
            if let Some(p) = self.position {
                write!(f, "{}:{}:", p.line, p.column)?;
            }
            f.write_str(" ")?;
        }
        // Keep the whole message on one line: the first stderr line is what scripts read.
        f.write_str(&self.message.replace('\n', " "))
    }
}

impl std::error::Error for InputError {}

/// Everything the library can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: exit code 2.
    #[error("{0}")]
    Input(#[from] InputError),
    /// Writing output failed (disk full, permissions): exit code 2 as well, the user must act.
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A resource the tool needs is not installed (an embedding model, say).
    #[error("{0}")]
    Missing(String),
    /// A scorer failed while answering (an external scorer that crashed, timed out or broke
    /// its protocol): exit code 2, the message names the scorer and the query.
    #[error("{0}")]
    Scorer(String),
}

impl Error {
    pub fn input(path: &Path, position: Option<Position>, message: impl Into<String>) -> Self {
        Error::Input(InputError::in_file(path, position, message))
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Error::Input(InputError::usage(message))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Converts a byte offset in `text` to a 1-based line and a 1-based column counted in characters.
pub fn position_of_offset(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    Position { line, column }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_line_and_character_column() {
        let text = "ab\ncé d";
        assert_eq!(position_of_offset(text, 0), Position { line: 1, column: 1 });
        assert_eq!(position_of_offset(text, 3), Position { line: 2, column: 1 });
        // 'é' is two bytes but one column.
        assert_eq!(position_of_offset(text, 6), Position { line: 2, column: 3 });
    }

    #[test]
    fn display_names_file_line_and_column_on_one_line() {
        let e = InputError::in_file(
            Path::new("a.json"),
            Some(Position { line: 3, column: 7 }),
            "bad\nthing",
        );
        assert_eq!(e.to_string(), "a.json:3:7: bad thing");
    }
}
