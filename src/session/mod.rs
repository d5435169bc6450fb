//! Real sessions in: Claude Code session JSONL and Codex CLI rollout JSONL read line by line
//! into per-agent transcripts ([`read`]), files of one session folded together ([`group`]),
//! each session turned into a scenario the simulator replays ([`convert`]), the simulator's
//! requests set against the billed ones and the unknowns fitted from the bill ([`fit`],
//! [`compare`]), and every session replayed under other settings ([`counterfactual`]).
//!
//! Scenarios hold counts and ids, never message text unless asked (`keep_text`).

pub mod claude;
pub mod codex;
pub mod compare;
pub mod convert;
pub mod counterfactual;
pub mod fit;
pub mod group;
pub mod import;
pub mod lines;
pub mod read;
pub mod transcript;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::tokenize::Tokenizer;

pub use group::{Session, group};
pub use read::{FileLog, LogFormat, ReadOptions, ReadStats, read_file};
pub use transcript::{Call, Request, Step, ToolResult, Transcript, Usage};

/// The search tool's name in Claude Code logs and in scenarios.
pub const SEARCH_TOOL: &str = crate::simulate::SEARCH_TOOL;

/// What session sizes are counted with.
pub type Counter = Tokenizer;

/// Tokens of one piece of session text. Every size the import records goes through here, so
/// switching to the profile's counter is this one line.
pub fn count_text(counter: Counter, text: &str) -> usize {
    local_count(counter, text)
}

thread_local! {
    static LOCAL_BPE: std::cell::RefCell<[Option<tiktoken_rs::CoreBPE>; 2]> =
        const { std::cell::RefCell::new([None, None]) };
}

/// `Tokenizer::count` with a tokenizer of this thread's own: a regex takes its fast path only
/// on the thread that first used it, and a shared one cost a third of the import's time
/// (measured with perf on 100 synthetic sessions). Same vocabulary, same counts.
fn local_count(counter: Counter, text: &str) -> usize {
    let slot = match counter {
        Tokenizer::O200kBase => 0,
        Tokenizer::Cl100kBase => 1,
    };
    LOCAL_BPE.with(|cell| {
        let mut bpes = cell.borrow_mut();
        let bpe = bpes[slot].get_or_insert_with(|| {
            match counter {
                Tokenizer::O200kBase => tiktoken_rs::o200k_base(),
                Tokenizer::Cl100kBase => tiktoken_rs::cl100k_base(),
            }
            .expect("the vocabularies are compiled in")
        });
        bpe.encode_ordinary(text).len()
    })
}

/// The session files under `paths`: a file as given, a folder searched recursively for
/// `*.jsonl`. Sorted, each once.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
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

/// The model profile a logged model id is priced as: the shipped profile of the same family
/// (`claude-sonnet-4-5-20250929` → `claude-sonnet-4.5`), else the format's default.
pub fn profile_for_model(model: &str, format: LogFormat) -> &'static str {
    let m = model.to_ascii_lowercase();
    if m.contains("opus-4-5") || m.contains("opus-4.5") {
        "claude-opus-4.5"
    } else if m.contains("opus") {
        "claude-opus-4.1"
    } else if m.contains("haiku") {
        "claude-haiku-4.5"
    } else if m.contains("sonnet") || m.starts_with("claude") {
        "claude-sonnet-4.5"
    } else if m.starts_with("gpt") || m.contains("codex") || m.starts_with('o') {
        "gpt-5"
    } else {
        match format {
            LogFormat::ClaudeCode => "claude-sonnet-4.5",
            LogFormat::Codex => "gpt-5",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_local_counter_counts_as_the_shared_one() {
        for t in [
            "",
            "hello world",
            "fn main() {\n    println!(\"héllo\");\n}",
            "  \t\n\n x",
        ] {
            for k in Tokenizer::ALL {
                assert_eq!(count_text(k, t), k.count(t), "{k} {t:?}");
            }
        }
    }

    #[test]
    fn logged_models_map_to_their_family_profile() {
        let c = LogFormat::ClaudeCode;
        assert_eq!(
            profile_for_model("claude-sonnet-4-5-20250929", c),
            "claude-sonnet-4.5"
        );
        assert_eq!(
            profile_for_model("claude-opus-4-5-20251101", c),
            "claude-opus-4.5"
        );
        assert_eq!(
            profile_for_model("claude-opus-4-1-20250805", c),
            "claude-opus-4.1"
        );
        assert_eq!(
            profile_for_model("claude-haiku-4-5-20251001", c),
            "claude-haiku-4.5"
        );
        assert_eq!(profile_for_model("gpt-5-codex", LogFormat::Codex), "gpt-5");
        assert_eq!(profile_for_model("mystery", LogFormat::Codex), "gpt-5");
    }
}
