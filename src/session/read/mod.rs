//! One session file → its transcripts: detects the format from the first record, parses
//! every line, routes Claude Code records to the main conversation or a subagent, and keeps
//! the damage report (ignored record types, skipped lines, a truncated last line).

pub mod claude;
pub mod codex;
pub mod lines;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::Serialize;
use serde::de::IgnoredAny;

use claude::{Apply, Message, Record};

use crate::error::{Error, Position, Result};
use crate::session::transcript::Transcript;
use lines::{Line, for_each_line};

/// Which agent wrote the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogFormat {
    ClaudeCode,
    Codex,
}

impl LogFormat {
    pub fn name(self) -> &'static str {
        match self {
            LogFormat::ClaudeCode => "claude-code",
            LogFormat::Codex => "codex",
        }
    }
}

/// How to read.
#[derive(Debug, Clone, Copy)]
pub struct ReadOptions {
    pub keep_text: bool,
    pub skip_bad_lines: bool,
}

/// What reading a file saw besides the conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReadStats {
    pub lines: usize,
    pub bytes: u64,
    /// Malformed lines skipped under `--skip-bad-lines`.
    pub bad_lines: usize,
    /// The last line had no newline and did not parse: a record still being written.
    pub truncated_last_line: bool,
    /// Record types this reader does not use, with how often each appeared.
    pub ignored: BTreeMap<String, usize>,
}

/// Distinct ignored record types kept by name; more are counted under [`OTHER_TYPES`] (a
/// hostile file could name a new type on every line).
pub const MAX_IGNORED_TYPES: usize = 64;
pub const OTHER_TYPES: &str = "(other types)";

/// Counts one ignored record of type `kind`.
pub fn ignore(ignored: &mut BTreeMap<String, usize>, kind: &str) {
    let key = if ignored.contains_key(kind) || ignored.len() < MAX_IGNORED_TYPES {
        kind
    } else {
        OTHER_TYPES
    };
    *ignored.entry(key.to_string()).or_insert(0) += 1;
}

/// One file read.
#[derive(Debug, Clone)]
pub struct FileLog {
    pub path: PathBuf,
    pub format: LogFormat,
    /// The session the records belong to (`sessionId`, Codex `session_meta.id`).
    pub session_id: Option<String>,
    /// The main conversation (absent in a subagent's own file).
    pub main: Option<Transcript>,
    /// Subagent conversations: inline sidechains or this file's own agent.
    pub agents: Vec<Transcript>,
    pub stats: ReadStats,
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    payload: Option<IgnoredAny>,
}

fn detect(line: &str) -> Option<LogFormat> {
    let p: Probe<'_> = serde_json::from_str(line).ok()?;
    let codex = p.payload.is_some()
        && p.kind
            .as_deref()
            .is_some_and(|k| codex::TOP_TYPES.contains(&k));
    Some(if codex {
        LogFormat::Codex
    } else {
        LogFormat::ClaudeCode
    })
}

/// A line that did not parse: an error at `FILE:LINE:COL`, or counted when skipping.
pub(super) struct BadLine {
    pub column: usize,
    pub message: String,
}

impl BadLine {
    pub fn json(e: &serde_json::Error, offset: usize) -> BadLine {
        let msg = e.to_string();
        // serde_json appends " at line L column C"; the position is printed up front instead.
        let msg = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
        BadLine {
            column: offset + e.column().max(1),
            message: format!("malformed session record: {msg}"),
        }
    }
}

/// Per-line bookkeeping shared by both formats: UTF-8, the truncated last line, bad lines.
fn handle<T>(
    path: &Path,
    opts: ReadOptions,
    stats: &mut ReadStats,
    line: &Line<'_>,
    parse: impl FnOnce(&str, &mut BTreeMap<String, usize>) -> std::result::Result<T, BadLine>,
) -> Result<Option<T>> {
    let outcome = match std::str::from_utf8(line.bytes) {
        Ok(text) => parse(text, &mut stats.ignored),
        Err(e) => Err(BadLine {
            column: e.valid_up_to() + 1,
            message: "line is not UTF-8".into(),
        }),
    };
    match outcome {
        Ok(v) => Ok(Some(v)),
        Err(_) if line.unterminated => {
            stats.truncated_last_line = true;
            Ok(None)
        }
        Err(_) if opts.skip_bad_lines => {
            stats.bad_lines += 1;
            Ok(None)
        }
        Err(bad) => Err(Error::input(
            path,
            Some(Position {
                line: line.number,
                column: bad.column,
            }),
            format!("{} (--skip-bad-lines skips such lines)", bad.message),
        )),
    }
}

/// Reads one session file of either format.
pub fn read_file(path: &Path, opts: ReadOptions) -> Result<FileLog> {
    let mut format: Option<LogFormat> = None;
    let mut claude = ClaudeState::default();
    let mut codex = codex::State::default();
    let mut stats = ReadStats::default();
    let line_stats = for_each_line(path, opts.skip_bad_lines, |line| {
        if format.is_none() {
            format = std::str::from_utf8(line.bytes).ok().and_then(detect);
        }
        match format.unwrap_or(LogFormat::ClaudeCode) {
            LogFormat::ClaudeCode => {
                handle(path, opts, &mut stats, &line, |text, ignored| {
                    claude.line(text, opts, ignored)
                })?;
            }
            LogFormat::Codex => {
                handle(path, opts, &mut stats, &line, |text, ignored| {
                    codex.line(text, opts, ignored)
                })?;
            }
        }
        Ok(())
    })?;
    stats.lines = line_stats.lines;
    stats.bytes = line_stats.bytes;
    stats.bad_lines += line_stats.too_long;
    let format = format.unwrap_or(LogFormat::ClaudeCode);
    let (session_id, main, agents) = match format {
        LogFormat::ClaudeCode => claude.finish(),
        LogFormat::Codex => codex.finish(),
    };
    Ok(FileLog {
        path: path.to_path_buf(),
        format,
        session_id,
        main,
        agents,
        stats,
    })
}

/// Routing of Claude Code records: the main conversation, or a subagent by `agentId`, or (in
/// older logs without it) by the sidechain its parent record belongs to.
#[derive(Default)]
struct ClaudeState {
    session_id: Option<String>,
    main: Option<Transcript>,
    agents: Vec<Transcript>,
    agent_index: HashMap<String, usize>,
    /// uuid → agent, for sidechain records that carry no `agentId`.
    chain_of: HashMap<String, usize>,
    call_names: HashMap<String, String>,
}

impl ClaudeState {
    fn line(
        &mut self,
        text: &str,
        opts: ReadOptions,
        ignored: &mut BTreeMap<String, usize>,
    ) -> std::result::Result<(), BadLine> {
        let rec: Record<'_> = serde_json::from_str(text).map_err(|e| BadLine::json(&e, 0))?;
        if !claude::KNOWN_TYPES.contains(&rec.kind.as_ref()) {
            ignore(ignored, &rec.kind);
            return Ok(());
        }
        let msg = match (rec.kind.as_ref(), rec.message) {
            ("user" | "assistant", Some(raw)) => {
                let offset = raw.get().as_ptr() as usize - text.as_ptr() as usize;
                Some(
                    serde_json::from_str::<Message<'_>>(raw.get())
                        .map_err(|e| BadLine::json(&e, offset))?,
                )
            }
            _ => None,
        };
        if self.session_id.is_none()
            && let Some(s) = &rec.session_id
        {
            self.session_id = Some(s.to_string());
        }
        let tx = match self.route(&rec) {
            None => self.main.get_or_insert_with(|| Transcript::new(None)),
            Some(i) => &mut self.agents[i],
        };
        Apply {
            tx,
            keep_text: opts.keep_text,
            call_names: &mut self.call_names,
        }
        .record(&rec, msg);
        Ok(())
    }

    /// The subagent a record belongs to (`None`: the main conversation).
    fn route(&mut self, rec: &Record<'_>) -> Option<usize> {
        if rec.is_sidechain != Some(true) {
            return None;
        }
        let idx = if let Some(a) = &rec.agent_id {
            self.agent(a)
        } else {
            let parent = rec
                .parent_uuid
                .as_deref()
                .and_then(|p| self.chain_of.get(p).copied());
            match parent {
                Some(i) => i,
                None => {
                    let name = format!("sidechain-{}", self.agents.len() + 1);
                    self.agent(&name)
                }
            }
        };
        if rec.agent_id.is_none()
            && let Some(u) = &rec.uuid
        {
            self.chain_of.insert(u.to_string(), idx);
        }
        Some(idx)
    }

    fn agent(&mut self, id: &str) -> usize {
        if let Some(&i) = self.agent_index.get(id) {
            return i;
        }
        let i = self.agents.len();
        self.agents.push(Transcript::new(Some(id.to_string())));
        self.agent_index.insert(id.to_string(), i);
        i
    }

    fn finish(self) -> (Option<String>, Option<Transcript>, Vec<Transcript>) {
        (self.session_id, self.main, self.agents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_record_types_are_bounded() {
        let mut m = BTreeMap::new();
        for i in 0..1000 {
            ignore(&mut m, &format!("kind-{i}"));
        }
        ignore(&mut m, "kind-0");
        assert_eq!(m.len(), MAX_IGNORED_TYPES + 1);
        assert_eq!(m["kind-0"], 2);
        assert_eq!(m[OTHER_TYPES], 1000 - MAX_IGNORED_TYPES);
    }

    #[test]
    fn the_format_is_told_by_the_first_record() {
        assert_eq!(
            detect(r#"{"timestamp":"t","type":"session_meta","payload":{"id":"x"}}"#),
            Some(LogFormat::Codex)
        );
        assert_eq!(
            detect(r#"{"type":"summary","summary":"s","leafUuid":"u"}"#),
            Some(LogFormat::ClaudeCode)
        );
        assert_eq!(detect("not json"), None);
    }
}
