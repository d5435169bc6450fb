//! One session file → its transcripts: detects the format from the first record, parses
//! every line (`claude.rs`, `codex.rs`), and keeps the damage report (ignored record types,
//! records read without a type, skipped lines, a truncated last line). `index.rs` is the light
//! first pass over the same files (ids, timestamps, project) that plans the import.

pub mod claude;
pub mod codex;
pub mod index;
pub mod lines;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::Serialize;
use serde::de::IgnoredAny;

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
    /// Records without a top-level `type` read by their message's role, per role.
    pub untyped: BTreeMap<String, usize>,
    /// Records of copied history, and the requests among them (a request's records count
    /// once): history an earlier file holds (a resumed or forked session), context here and
    /// billed there, or history this file already holds (a session resumed by rewriting it
    /// into the same file), read once where first written.
    pub copied_records: usize,
    pub copied_requests: usize,
    /// Records written twice in this file (the same uuid again), skipped.
    pub repeated_records: usize,
    /// Redaction placeholders (`[REDACTED_TEXT len=13131 sha=…]`): text the log does not
    /// hold, so its requests' sizes are unknown.
    pub redacted: usize,
}

impl ReadStats {
    /// Adds another file's statistics (the files of one session).
    pub fn add(&mut self, from: &ReadStats) {
        self.lines += from.lines;
        self.bytes += from.bytes;
        self.bad_lines += from.bad_lines;
        self.redacted += from.redacted;
        self.truncated_last_line |= from.truncated_last_line;
        for (k, v) in &from.ignored {
            *self.ignored.entry(k.clone()).or_insert(0) += v;
        }
        for (k, v) in &from.untyped {
            *self.untyped.entry(k.clone()).or_insert(0) += v;
        }
        self.copied_records += from.copied_records;
        self.copied_requests += from.copied_requests;
        self.repeated_records += from.repeated_records;
    }
}

/// What earlier files already hold, as hashes ([`key_hash`]) of response keys
/// (`claude::response_key`) and of record uuids (`u:UUID`): the records of a file that are
/// copies (see `group::copies`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copies {
    pub keys: HashSet<u64>,
    pub uuids: HashSet<u64>,
}

impl Copies {
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.uuids.is_empty()
    }
}

/// A stable 64-bit FNV-1a hash: ids are compared across files through it (same input, same
/// hash on every run and machine).
pub fn key_hash(key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Counts one record read without a type under its role (two roles only: bounded).
pub(super) fn count_untyped(untyped: &mut BTreeMap<String, usize>, role: &str) {
    *untyped.entry(role.to_string()).or_insert(0) += 1;
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
    /// The system prompt and system context the log records (o200k tokens; Codex
    /// `base_instructions`, developer and environment messages), when it records one.
    pub system_tokens: Option<usize>,
    /// Tools the session defined itself (Codex `dynamic_tools`).
    pub dynamic_tools: Vec<crate::catalog::Tool>,
    /// The agent's version its records name (Claude Code's `version`), when they do.
    pub agent_version: Option<(u32, u32, u32)>,
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    payload: Option<IgnoredAny>,
}

pub(super) fn detect(line: &str) -> Option<LogFormat> {
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
    parse: impl FnOnce(&str, &mut ReadStats) -> std::result::Result<T, BadLine>,
) -> Result<Option<T>> {
    let outcome = match std::str::from_utf8(line.bytes) {
        Ok(text) => parse(text, stats),
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

/// Placeholders a redacting exporter left in a line: `[REDACTED_<KIND> len=<N>`.
fn redaction_placeholders(line: &[u8]) -> usize {
    memchr::memmem::find_iter(line, b"[REDACTED_")
        .filter(|&at| {
            let rest = &line[at + 10..];
            let kind = rest
                .iter()
                .take_while(|b| b.is_ascii_uppercase() || **b == b'_')
                .count();
            kind > 0 && rest[kind..].starts_with(b" len=")
        })
        .count()
}

/// Reads one session file of either format; records `copies` names are context, not requests.
pub fn read_file(path: &Path, opts: ReadOptions, copies: &Copies) -> Result<FileLog> {
    let mut format: Option<LogFormat> = None;
    let mut claude = claude::State::new(copies);
    let mut codex = codex::State::default();
    let mut stats = ReadStats::default();
    let line_stats = for_each_line(path, opts.skip_bad_lines, |line| {
        if format.is_none() {
            format = std::str::from_utf8(line.bytes).ok().and_then(detect);
        }
        stats.redacted += redaction_placeholders(line.bytes);
        match format.unwrap_or(LogFormat::ClaudeCode) {
            LogFormat::ClaudeCode => {
                let number = line.number;
                handle(path, opts, &mut stats, &line, |text, stats| {
                    claude.line(text, number, opts, stats)
                })?;
            }
            LogFormat::Codex => {
                handle(path, opts, &mut stats, &line, |text, stats| {
                    codex.line(text, opts, stats)
                })?;
            }
        }
        Ok(())
    })?;
    stats.lines = line_stats.lines;
    stats.bytes = line_stats.bytes;
    stats.bad_lines += line_stats.too_long;
    let format = format.unwrap_or(LogFormat::ClaudeCode);
    let (mut system_tokens, mut dynamic_tools) = (None, Vec::new());
    let agent_version = claude.version;
    let (session_id, main, agents) = match format {
        LogFormat::ClaudeCode => claude.finish(),
        LogFormat::Codex => {
            system_tokens = codex.has_system.then_some(codex.system_tokens);
            dynamic_tools = std::mem::take(&mut codex.dynamic_tools);
            codex.finish()
        }
    };
    Ok(FileLog {
        path: path.to_path_buf(),
        format,
        session_id,
        main,
        agents,
        stats,
        system_tokens,
        dynamic_tools,
        agent_version,
    })
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

    #[test]
    fn redaction_placeholders_are_counted() {
        let line = br#"{"text":"[REDACTED_TEXT len=13131 sha=036b7e47] and [REDACTED_ARGUMENTS len=4 sha=1] but not [REDACTED] or [REDACTED_x len=1]"}"#;
        assert_eq!(redaction_placeholders(line), 2);
        assert_eq!(redaction_placeholders(b"[REDACTED_"), 0);
    }

    /// Codex 0.40 writes each `token_count` before the items of the response it bills.
    #[test]
    fn a_bill_written_before_its_response_goes_to_that_response() {
        let tc = |input: u64| {
            format!(
                r#"{{"type":"event_msg","payload":{{"type":"token_count","info":{{"last_token_usage":{{"input_tokens":{input},"cached_input_tokens":0,"output_tokens":9}}}}}}}}"#
            )
        };
        let lines = [
            r#"{"type":"session_meta","payload":{"id":"s","cli_version":"0.40.0"}}"#.to_string(),
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"list files"}]}}"#.to_string(),
            tc(3587),
            r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"ls\"]}","call_id":"c1"}}"#.to_string(),
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"a.txt"}}"#.to_string(),
            tc(3984),
            r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"One file: a.txt"}]}}"#.to_string(),
        ];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let log = read_file(
            &path,
            ReadOptions {
                keep_text: false,
                skip_bad_lines: false,
            },
            &Copies::default(),
        )
        .unwrap();
        let reqs = &log.main.unwrap().requests;
        let got: Vec<(u64, usize)> = reqs
            .iter()
            .map(|r| (r.usage.map_or(0, |u| u.input), r.calls.len()))
            .collect();
        // The call's request is billed 3,587 (the prompt alone), the answer 3,984.
        assert_eq!(got, [(3587, 1), (3984, 0)]);
    }
}
