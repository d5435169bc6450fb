//! Real sessions in: Claude Code session JSONL and Codex CLI rollout JSONL read line by line
//! into per-agent transcripts ([`read`]), files of one session folded together ([`group`]),
//! each session turned into a scenario the simulator replays ([`convert`]), the simulator's
//! requests set against the billed ones and the unknowns fitted from the bill ([`fit`],
//! [`compare`]), and every session replayed under other settings ([`counterfactual`]).
//!
//! Scenarios hold counts and ids, never message text unless asked (`keep_text`).

pub mod adoption;
pub mod compare;
pub mod convert;
pub mod fit;
pub mod group;
pub mod import;
pub mod queries;
pub mod read;
pub mod tools;
pub mod transcript;

use std::path::{Path, PathBuf};

use crate::counter::CounterKind;
use crate::error::{Error, Result};
use crate::tokenize::Tokenizer;

pub use group::Session;
pub use read::{Copies, FileLog, LogFormat, ReadOptions, ReadStats, read_file};
pub use read::{claude, codex, lines};
pub use transcript::{Call, Request, Step, ToolResult, Transcript, Usage};

/// The search tool's name in Claude Code logs and in scenarios.
pub const SEARCH_TOOL: &str = crate::simulate::SEARCH_TOOL;

/// The tokenizer session text is counted with while reading: the basis of every counter a
/// session can be counted with (see [`session_counter`]), so one pass serves them all.
pub const BASIS: Tokenizer = Tokenizer::O200kBase;

/// The counter sizes of a session whose main conversation ran on model profile `profile`
/// are counted with: the profile's counter, or its local estimate when that needs the
/// network. The second value is the profile's own counter when it was replaced.
pub fn session_counter(profile: &str) -> (CounterKind, Option<CounterKind>) {
    let own = crate::simulate::profile::find(profile).map_or(CounterKind::O200kJson, |p| p.counter);
    let local = match own {
        CounterKind::AnthropicApi => CounterKind::AnthropicEstimate,
        // Sizes are read as o200k counts: a cl100k counter cannot be mapped from them.
        CounterKind::Cl100kJson => CounterKind::O200kJson,
        k => k,
    };
    assert_eq!(local.tokenizer(), BASIS);
    (local, (local != own).then_some(own))
}

/// o200k tokens of one piece of session text: every size the import records is counted here
/// and mapped to the session's counter ([`CounterKind::text_from_count`]) when converted.
pub fn count_text(text: &str) -> usize {
    BASIS.count(text)
}

/// A date given on the command line (`YYYY-MM-DD` or `YYYYMMDD`), as `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> std::result::Result<String, String> {
    let digits: String = s.chars().filter(|c| *c != '-').collect();
    let shape_ok = digits.len() == 8
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (s.len() == 8 || (s.len() == 10 && &s[4..5] == "-" && &s[7..8] == "-"));
    let bad = || format!("invalid date {s:?}: expected YYYY-MM-DD");
    if !shape_ok {
        return Err(bad());
    }
    let (y, m, d) = (&digits[..4], &digits[4..6], &digits[6..]);
    let (mm, dd): (u32, u32) = (m.parse().map_err(|_| bad())?, d.parse().map_err(|_| bad())?);
    if !(1..=12).contains(&mm) || !(1..=31).contains(&dd) {
        return Err(bad());
    }
    // A day the month does not have (2025-02-30) names no day at all.
    let year: u32 = y.parse().map_err(|_| bad())?;
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match mm {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if dd > days {
        return Err(format!(
            "invalid date {s:?}: {y}-{m} has {days} days, so there is no day {dd}"
        ));
    }
    Ok(format!("{y}-{m}-{d}"))
}

/// Where the agents keep their logs, as `session import` with no path reads them: Claude
/// Code's `projects/` under each folder of `CLAUDE_CONFIG_DIR` (comma-separated) or else
/// under `~/.config/claude` and `~/.claude`; Codex's `sessions/` under `CODEX_HOME` or else
/// `~/.codex`. `env` looks a variable up, `home` is the home folder. Every candidate, in that
/// order; the caller keeps those that exist.
pub fn default_roots(env: &dyn Fn(&str) -> Option<String>, home: Option<&Path>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    match env("CLAUDE_CONFIG_DIR").filter(|v| !v.trim().is_empty()) {
        Some(dirs) => out.extend(
            dirs.split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| PathBuf::from(d).join("projects")),
        ),
        None => {
            if let Some(h) = home {
                out.push(h.join(".config/claude/projects"));
                out.push(h.join(".claude/projects"));
            }
        }
    }
    match env("CODEX_HOME").filter(|v| !v.trim().is_empty()) {
        Some(d) => out.push(PathBuf::from(d).join("sessions")),
        None => {
            if let Some(h) = home {
                out.push(h.join(".codex/sessions"));
            }
        }
    }
    out
}

/// The session files under `paths`: a file as given, a folder searched recursively for
/// `*.jsonl`. Sorted, each once.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        // Each session becomes a scenario named after its file: standard input has no name.
        if p.as_os_str() == "-" {
            return Err(Error::usage(
                "session import reads session files or folders, not standard input (`-`)",
            ));
        }
        let meta = std::fs::metadata(p)
            .map_err(|e| Error::usage(format!("session path {}: {e}", p.display())))?;
        if meta.is_dir() {
            walk(p, &mut out)?;
        } else {
            out.push(p.clone());
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::input(dir, None, format!("cannot list folder: {e}")))?;
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::input(dir, None, format!("cannot list folder: {e}")))?;
        let path = entry.path();
        // Symlinked folders are not followed: a link loop must not hang the import.
        let ty = entry
            .file_type()
            .map_err(|e| Error::input(&path, None, format!("cannot stat: {e}")))?;
        if ty.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            out.push(path);
        }
    }
    Ok(())
}

/// The profile a logged model id is replayed and priced as: the id itself when the price
/// table in force knows it (`claude-opus-4-6`, `gpt-5.3-codex`), else `None`: the caller says
/// so, replays the session under its format's default profile and leaves its requests unpriced.
pub fn profile_for_model(model: &str) -> Option<String> {
    crate::prices::PriceTable::active()
        .resolve_for_log(model)
        .is_ok()
        .then(|| model.to_string())
}

/// The profile of a log whose model is unknown or absent.
pub fn default_profile(format: LogFormat) -> &'static str {
    match format {
        LogFormat::ClaudeCode => "claude-sonnet-4.5",
        LogFormat::Codex => "gpt-5",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_checked_and_written_one_way() {
        assert_eq!(parse_date("2025-11-04").unwrap(), "2025-11-04");
        assert_eq!(parse_date("20251104").unwrap(), "2025-11-04");
        for bad in [
            "2025-13-01",
            "2025-1-04",
            "yesterday",
            "2025-11-32",
            "2025/11/04",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_default_roots_honour_the_agents_variables() {
        let home = Path::new("/home/u");
        let none = |_: &str| None;
        assert_eq!(
            default_roots(&none, Some(home)),
            [
                PathBuf::from("/home/u/.config/claude/projects"),
                PathBuf::from("/home/u/.claude/projects"),
                PathBuf::from("/home/u/.codex/sessions"),
            ]
        );
        let set = |k: &str| match k {
            "CLAUDE_CONFIG_DIR" => Some("/a, /b".to_string()),
            "CODEX_HOME" => Some("/c".to_string()),
            _ => None,
        };
        assert_eq!(
            default_roots(&set, Some(home)),
            [
                PathBuf::from("/a/projects"),
                PathBuf::from("/b/projects"),
                PathBuf::from("/c/sessions"),
            ]
        );
    }

    #[test]
    fn standard_input_is_refused_by_name() {
        let e = discover(&[PathBuf::from("-")]).unwrap_err().to_string();
        assert!(e.contains("not standard input"), "{e}");
    }

    #[test]
    fn the_thread_local_counter_counts_as_the_shared_one() {
        for t in [
            "",
            "hello world",
            "fn main() {\n    println!(\"héllo\");\n}",
            "  \t\n\n x",
        ] {
            assert_eq!(count_text(t), BASIS.count(t), "{t:?}");
            for k in [CounterKind::AnthropicEstimate, CounterKind::OpenaiResponses] {
                assert_eq!(k.text_from_count(count_text(t)), k.text(t), "{k} {t:?}");
            }
        }
    }

    #[test]
    fn a_session_is_counted_with_its_profiles_local_counter() {
        for p in ["claude-sonnet-4.5", "claude-opus-4.5", "claude-haiku-4.5"] {
            assert_eq!(
                session_counter(p),
                (CounterKind::AnthropicEstimate, None),
                "{p}"
            );
        }
        assert_eq!(
            session_counter("gpt-5"),
            (CounterKind::OpenaiResponses, None)
        );
        for p in crate::simulate::profile::shipped() {
            let (k, replaced) = session_counter(&p.name);
            assert!(k.is_local() && k.tokenizer() == BASIS, "{}", p.name);
            assert_eq!(replaced.is_some(), k != p.counter, "{}", p.name);
        }
    }

    #[test]
    fn logged_models_are_their_own_profiles_when_the_price_table_knows_them() {
        for m in [
            "claude-sonnet-4-5-20250929",
            "claude-opus-4-6",
            "claude-haiku-4-5-20251001",
            "gpt-5.3-codex",
            "gpt-5-codex",
        ] {
            assert_eq!(profile_for_model(m).as_deref(), Some(m), "{m}");
        }
        assert_eq!(profile_for_model("<synthetic>"), None);
        assert_eq!(profile_for_model("mystery"), None);
        assert_eq!(default_profile(LogFormat::Codex), "gpt-5");
    }
}
