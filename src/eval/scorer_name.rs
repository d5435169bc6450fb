//! The name a result gives its scorer: a built-in's (`bm25`), or any other name as the
//! scorer gave it (an external scorer's `exec:NAME` / `mcp:NAME`, a run file's). Written and
//! read as the bare name, so results stay what they were; compared and ordered by that name.

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::search::ScorerKind;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ScorerName {
    Builtin(ScorerKind),
    /// Any name that is not a built-in's.
    Named(String),
}

impl ScorerName {
    /// The built-in of that name, else the name as it is.
    pub fn new(name: &str) -> ScorerName {
        match name.parse::<ScorerKind>() {
            Ok(k) => ScorerName::Builtin(k),
            Err(_) => ScorerName::Named(name.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            ScorerName::Builtin(k) => k.name(),
            ScorerName::Named(n) => n,
        }
    }

    /// The built-in scorer, when it is one.
    pub fn kind(&self) -> Option<ScorerKind> {
        match self {
            ScorerName::Builtin(k) => Some(*k),
            ScorerName::Named(_) => None,
        }
    }
}

/// No name: what an empty CSV row holds (its header is read from a default row).
impl Default for ScorerName {
    fn default() -> Self {
        ScorerName::Named(String::new())
    }
}

impl From<ScorerKind> for ScorerName {
    fn from(k: ScorerKind) -> Self {
        ScorerName::Builtin(k)
    }
}

impl From<&str> for ScorerName {
    fn from(name: &str) -> Self {
        ScorerName::new(name)
    }
}

impl PartialEq<str> for ScorerName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ScorerName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl Ord for ScorerName {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for ScorerName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for ScorerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ScorerName {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ScorerName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<'de, str>::deserialize(d)?;
        Ok(ScorerName::new(&name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_and_other_names_read_and_write_as_written() {
        for name in ["bm25", "hybrid", "exec:my-ranker", "mcp:search", "bm25s"] {
            let n: ScorerName = serde_json::from_str(&format!("{name:?}")).unwrap();
            assert_eq!(n.as_str(), name);
            assert_eq!(serde_json::to_string(&n).unwrap(), format!("{name:?}"));
        }
        assert_eq!(ScorerName::new("regex").kind(), Some(ScorerKind::Regex));
        assert_eq!(ScorerName::new("exec:x").kind(), None);
        // Ordered by name, as the strings were.
        assert!(ScorerName::new("bm25") < ScorerName::new("keyword"));
        assert!(ScorerName::new("exec:a") < ScorerName::new("hybrid"));
    }
}
