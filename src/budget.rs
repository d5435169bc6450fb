//! The work budget: every bound on how much work an input inside the file-size limits may ask
//! for, in one place, checked by the loaders before anything is allocated. Sizes are computed
//! from the input (saturating, never by building what they measure) and compared with the
//! limits below; a run over a limit is refused with the budget and the computed size in the
//! message, at the file and `line:column` that asked for it.
//!
//! Per run (a [`Budget`] is shared by every scenario of one `simulate`, `live` or `report`):
//! requests and scenario text; and the search work of every query set of one `eval` or
//! `report` (query × tool pairs times the scorers, `select:` names × tools) and of every
//! scenario replayed (its requests, each a possible search with its retries, times the tools). Per input: labeled queries, a query set's searches times the
//! tools searched, one `select:` query's names times the catalog, one tool description.
//! Within these limits a run stays under about 1 GB of memory (docs/reference/errors-and-limits.md).

use std::fmt;

/// Most requests one run may send, over all its scenarios: every turn's user request and
/// calls, times `repeat`, subagents' conversations included, counted before anything is
/// expanded. One mode's rows at this size take about 100 MB; per-request CSV rows and the
/// report's SVGs grow with it.
pub const MAX_REQUESTS: u64 = 500_000;
/// Most turns one scenario may expand to (after `repeat`).
pub const MAX_TURNS: usize = 100_000;
/// Most bytes of scenario text one run may hold once expanded: user texts, queries, results
/// and inputs times `repeat`, and `texts:` placeholders filled (each text's expanded length
/// computed bottom-up, without building it).
pub const MAX_TEXT_BYTES: u64 = 256 * 1024 * 1024;
/// Most labeled queries in one query file.
pub const MAX_QUERIES: u64 = 100_000;
/// Most query × tool pairs one evaluation may search (queries times the searched catalog,
/// pool included), per scorer.
pub const MAX_EVAL_WORK: u64 = 2_000_000_000;
/// Most name × tool comparisons one keyword `select:` query may cost (names times the
/// catalog: a shortened name is looked up among every id).
pub const MAX_SELECT_WORK: u64 = 100_000_000;
/// Most bytes of one tool description (real ones are at most a few KB; a 10 MB one still loads
/// and counts, as a test keeps; counting holds several copies of the text while it works).
pub const MAX_DESCRIPTION_BYTES: u64 = 16 * 1024 * 1024;
/// Most search work one run may ask for, over all its query sets: each set's queries times
/// the tools searched times the scorers evaluated, plus each keyword `select:` query's names
/// times the tools, charged for every set before any is searched (`report` evaluates five
/// scorers on every set: five sets at the per-scorer bound [`MAX_EVAL_WORK`] fit, a sixth
/// does not).
pub const MAX_SEARCH_WORK: u64 = 10_000_000_000;
/// Most bytes of one tool's input schema, written as compact JSON (real ones are at most tens
/// of KB; a tool is rendered and counted whole, as a description is).
pub const MAX_SCHEMA_BYTES: u64 = 16 * 1024 * 1024;

/// What a limit bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Requests,
    TextBytes,
    Queries,
    EvalWork,
    SelectWork,
    DescriptionBytes,
    SchemaBytes,
    SearchWork,
}

impl Kind {
    /// The limit of this kind.
    pub fn limit(self) -> u64 {
        match self {
            Kind::Requests => MAX_REQUESTS,
            Kind::TextBytes => MAX_TEXT_BYTES,
            Kind::Queries => MAX_QUERIES,
            Kind::EvalWork => MAX_EVAL_WORK,
            Kind::SelectWork => MAX_SELECT_WORK,
            Kind::DescriptionBytes => MAX_DESCRIPTION_BYTES,
            Kind::SchemaBytes => MAX_SCHEMA_BYTES,
            Kind::SearchWork => MAX_SEARCH_WORK,
        }
    }
}

/// A size over its limit: `Display` says both (`expands to 16.5 GiB of text, over the 256 MiB
/// budget of one run`); the caller puts the file, place and what to change around it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Over {
    pub kind: Kind,
    /// The size computed (saturated at `u64::MAX`).
    pub size: u64,
    /// The limit it is over (`kind.limit()` unless the budget was given a smaller one).
    pub limit: u64,
}

impl fmt::Display for Over {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (n, limit) = (self.size, self.limit);
        match self.kind {
            Kind::Requests => write!(
                f,
                "expands to at least {} requests (turns and calls times repeat, subagents \
                 included), over the budget of {} requests of one run",
                whole(n),
                whole(limit)
            ),
            Kind::TextBytes => write!(
                f,
                "expands to {} of text, over the {} budget of one run",
                bytes(n),
                bytes(limit)
            ),
            Kind::Queries => write!(
                f,
                "holds more than {} labeled queries, the most one query file may hold",
                whole(limit)
            ),
            Kind::EvalWork => write!(
                f,
                "asks for {} query × tool searches, over the budget of {} of one evaluation",
                whole(n),
                whole(limit)
            ),
            Kind::SelectWork => write!(
                f,
                "asks for {} name × tool lookups, over the budget of {} of one select: query",
                whole(n),
                whole(limit)
            ),
            Kind::DescriptionBytes => write!(
                f,
                "is {} long, over the {} a tool description may hold",
                bytes(n),
                bytes(limit)
            ),
            Kind::SchemaBytes => write!(
                f,
                "is {} as compact JSON, over the {} a tool's input schema may hold",
                bytes(n),
                bytes(limit)
            ),
            Kind::SearchWork => write!(
                f,
                "bring the run's search work to {} query × tool pairs (queries times tools \
                 times scorers, plus select: names times tools, over every query set and \
                 scenario), over the budget of {} of one run",
                whole(n),
                whole(limit)
            ),
        }
    }
}

/// One size against its limit, not accumulated.
pub fn check(kind: Kind, size: u64) -> Result<(), Over> {
    check_within(kind, size, kind.limit())
}

fn check_within(kind: Kind, size: u64, limit: u64) -> Result<(), Over> {
    if size > limit {
        Err(Over { kind, size, limit })
    } else {
        Ok(())
    }
}

/// What one run has used so far of the limits that hold per run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Budget {
    requests: u64,
    text_bytes: u64,
    search_work: u64,
    /// A search work limit below [`MAX_SEARCH_WORK`] (tests, which must not search 10¹⁰
    /// pairs to reach the real one).
    search_limit: Option<u64>,
}

impl Budget {
    pub fn new() -> Self {
        Self::default()
    }

    /// A budget whose run-wide search work limit is `limit` instead of [`MAX_SEARCH_WORK`].
    pub fn with_search_limit(limit: u64) -> Self {
        Budget {
            search_limit: Some(limit),
            ..Self::default()
        }
    }

    /// Adds `amount` of `kind` (requests, text bytes or search work; other kinds are per
    /// input: see [`check`]); over the limit, nothing is added and the total that would have
    /// been is returned in the error.
    pub fn charge(&mut self, kind: Kind, amount: u64) -> Result<(), Over> {
        let limit = match kind {
            Kind::SearchWork => self.search_limit.unwrap_or(MAX_SEARCH_WORK),
            _ => kind.limit(),
        };
        let used = match kind {
            Kind::Requests => &mut self.requests,
            Kind::TextBytes => &mut self.text_bytes,
            Kind::SearchWork => &mut self.search_work,
            _ => return check(kind, amount),
        };
        let total = used.saturating_add(amount);
        check_within(kind, total, limit)?;
        *used = total;
        Ok(())
    }

    /// Used so far of `kind` (0 for the per-input kinds).
    pub fn used(&self, kind: Kind) -> u64 {
        match kind {
            Kind::Requests => self.requests,
            Kind::TextBytes => self.text_bytes,
            Kind::SearchWork => self.search_work,
            _ => 0,
        }
    }
}

/// `1234567` → `1,234,567`.
fn whole(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes in binary units, one decimal above KiB: `256 MiB`, `16.5 GiB`.
#[allow(clippy::cast_precision_loss)]
fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    let text = format!("{v:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_size_and_the_budget() {
        let over = Over {
            kind: Kind::TextBytes,
            size: 17_716_740_096,
            limit: MAX_TEXT_BYTES,
        };
        assert_eq!(
            over.to_string(),
            "expands to 16.5 GiB of text, over the 256 MiB budget of one run"
        );
        let over = Over {
            kind: Kind::Requests,
            size: 1_500_003,
            limit: MAX_REQUESTS,
        };
        assert!(
            over.to_string().starts_with(
                "expands to at least 1,500,003 requests (turns and calls times repeat, \
                 subagents included), over the budget of 500,000 requests of one run"
            ),
            "{over}"
        );
        assert_eq!(bytes(1000), "1000 bytes");
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(bytes(u64::MAX), "16 EiB");
        assert_eq!(whole(999), "999");
        assert_eq!(whole(1000), "1,000");
        assert_eq!(whole(u64::MAX), "18,446,744,073,709,551,615");
    }

    /// Every `pub const MAX_…` of `src/` is a row of the limits table of
    /// docs/reference/errors-and-limits.md,
    /// written as `module::path::NAME` (the path of the file that defines it), so the list
    /// cannot drift from the code.
    #[test]
    fn every_limit_is_in_the_limits_table() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let section =
            std::fs::read_to_string(root.join("docs/reference/errors-and-limits.md")).unwrap();
        let mut missing = Vec::new();
        let mut seen = 0;
        let mut stack = vec![root.join("src")];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") {
                    continue;
                }
                let rel = path.strip_prefix(root.join("src")).unwrap();
                let mut parts: Vec<String> = rel
                    .with_extension("")
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                if parts.last().is_some_and(|p| p == "mod") {
                    parts.pop();
                }
                let module = parts.join("::");
                let text = std::fs::read_to_string(&path).unwrap();
                for line in text.lines() {
                    let Some(rest) = line.trim_start().strip_prefix("pub const MAX_") else {
                        continue;
                    };
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    let full = format!("`{module}::MAX_{name}`");
                    seen += 1;
                    if !section.contains(&full) {
                        missing.push(full);
                    }
                }
            }
        }
        assert!(seen > 30, "found only {seen} limits");
        missing.sort();
        assert!(
            missing.is_empty(),
            "add these to docs/reference/errors-and-limits.md: {missing:?}"
        );
    }

    #[test]
    fn a_charge_over_the_limit_adds_nothing() {
        let mut b = Budget::new();
        b.charge(Kind::Requests, MAX_REQUESTS - 1).unwrap();
        let e = b.charge(Kind::Requests, 2).unwrap_err();
        assert_eq!(e.size, MAX_REQUESTS + 1);
        assert_eq!(b.used(Kind::Requests), MAX_REQUESTS - 1);
        b.charge(Kind::Requests, 1).unwrap();
        assert!(b.charge(Kind::Requests, 1).is_err());
        // Saturating: no wrap back under the limit.
        let mut b = Budget::new();
        b.charge(Kind::TextBytes, 1).unwrap();
        assert_eq!(
            b.charge(Kind::TextBytes, u64::MAX).unwrap_err().size,
            u64::MAX
        );
        assert!(check(Kind::SelectWork, MAX_SELECT_WORK).is_ok());
        assert!(check(Kind::SelectWork, MAX_SELECT_WORK + 1).is_err());
        // Search work sums over the run, against a test-sized limit when given one.
        let mut b = Budget::with_search_limit(100);
        b.charge(Kind::SearchWork, 60).unwrap();
        let e = b.charge(Kind::SearchWork, 41).unwrap_err();
        assert_eq!((e.size, e.limit), (101, 100));
        assert!(e.to_string().contains("to 101 query × tool pairs"), "{e}");
        assert!(
            e.to_string().ends_with("over the budget of 100 of one run"),
            "{e}"
        );
        assert_eq!(b.used(Kind::SearchWork), 60);
        let mut b = Budget::new();
        b.charge(Kind::SearchWork, MAX_SEARCH_WORK).unwrap();
        assert!(b.charge(Kind::SearchWork, 1).is_err());
    }
}
