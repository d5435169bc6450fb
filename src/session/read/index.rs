//! The first, light pass over a session file: what planning the import needs before any text
//! is counted — the session and agent it belongs to, its working directory, its first and last
//! timestamps (for `--since`/`--until` and for which of two files holding the same records
//! wrote them first), the hashes of its response keys and record uuids (copies across files),
//! and the subagents its `Task` results name. Lines that do not parse are skipped here; the
//! full read reports them.

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::claude::{AgentRef, response_key};
use super::lines::for_each_line;
use super::{LogFormat, detect, key_hash};
use crate::error::Result;

/// What the first pass learned about one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileIndex {
    pub path: PathBuf,
    pub bytes: u64,
    pub format: Option<LogFormat>,
    /// The first `sessionId` (Claude) or `session_meta.id` (Codex).
    pub session_id: Option<String>,
    /// The first working directory a record names.
    pub cwd: Option<String>,
    /// First and last record timestamps, as written (RFC 3339, compared as text).
    pub first: Option<String>,
    pub last: Option<String>,
    /// The `agentId` of its sidechain records, and whether every message record is one (a
    /// subagent's own file).
    pub agent_id: Option<String>,
    pub sidechain_only: bool,
    /// Hashes of the response keys and of the record uuids it holds, each once.
    pub keys: Vec<u64>,
    pub uuids: Vec<u64>,
    /// Subagents its `Task`/`Agent` results name (`toolUseResult.agentId`).
    pub agents_named: Vec<String>,
}

impl FileIndex {
    /// The file name without `.jsonl`.
    pub fn stem(&self) -> String {
        stem(&self.path)
    }

    /// A subagent's own file: `agent-<id>.jsonl`, or a Claude file of sidechain records only.
    pub fn is_agent_file(&self) -> bool {
        self.stem().starts_with("agent-")
            || (self.format == Some(LogFormat::ClaudeCode)
                && self.sidechain_only
                && self.agent_id.is_some())
    }

    /// The subagent id of an agent file (from its name, else its records).
    pub fn agent(&self) -> Option<String> {
        self.stem()
            .strip_prefix("agent-")
            .map(str::to_string)
            .or_else(|| self.agent_id.clone())
    }

    /// The UTC date (`YYYY-MM-DD`) of the first and last timestamps.
    pub fn dates(&self) -> Option<(&str, &str)> {
        fn day(t: Option<&str>) -> Option<&str> {
            t.and_then(|s| s.get(..10))
        }
        Some((day(self.first.as_deref())?, day(self.last.as_deref())?))
    }
}

/// The file name of `p` without its extension.
pub fn stem(p: &Path) -> String {
    p.file_stem().map_or_else(
        || "session".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    uuid: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "requestId", borrow, default)]
    request_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", borrow, default)]
    tool_use_result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct MessageProbe<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct MetaProbe<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
}

/// Indexes one file. Only reading can fail (a missing file, a FIFO, one past the size limit);
/// malformed lines are the full read's to report.
pub fn index_file(path: &Path) -> Result<FileIndex> {
    let mut ix = FileIndex {
        path: path.to_path_buf(),
        sidechain_only: true,
        ..FileIndex::default()
    };
    let (mut keys, mut uuids) = (HashSet::new(), HashSet::new());
    let mut messages = 0usize;
    let stats = for_each_line(path, true, |line| {
        let Ok(text) = std::str::from_utf8(line.bytes) else {
            return Ok(());
        };
        if ix.format.is_none() {
            ix.format = detect(text);
        }
        let Ok(p) = serde_json::from_str::<Probe<'_>>(text) else {
            return Ok(());
        };
        if let Some(t) = p.timestamp.as_deref() {
            if ix.first.is_none() {
                ix.first = Some(t.to_string());
            }
            ix.last = Some(t.to_string());
        }
        if ix.format == Some(LogFormat::Codex) {
            if p.kind.as_deref() == Some("session_meta")
                && let Some(raw) = p.payload
                && let Ok(m) = serde_json::from_str::<MetaProbe<'_>>(raw.get())
            {
                if ix.session_id.is_none() {
                    ix.session_id = m.id.map(Cow::into_owned);
                }
                if ix.cwd.is_none() {
                    ix.cwd = m.cwd.map(Cow::into_owned);
                }
            }
            return Ok(());
        }
        if ix.session_id.is_none() {
            ix.session_id = p.session_id.as_deref().map(str::to_string);
        }
        if ix.cwd.is_none() {
            ix.cwd = p.cwd.as_deref().map(str::to_string);
        }
        if let Some(u) = p.uuid.as_deref() {
            uuids.insert(key_hash(&format!("u:{u}")));
        }
        let Some(raw) = p.message else { return Ok(()) };
        let Ok(m) = serde_json::from_str::<MessageProbe<'_>>(raw.get()) else {
            return Ok(());
        };
        let role = p.kind.as_deref().or(m.role.as_deref());
        if !matches!(role, Some("user" | "assistant")) {
            return Ok(());
        }
        messages += 1;
        if p.is_sidechain == Some(true) {
            if ix.agent_id.is_none() {
                ix.agent_id = p.agent_id.as_deref().map(str::to_string);
            }
        } else {
            ix.sidechain_only = false;
        }
        if role == Some("assistant")
            && m.usage.is_some()
            && m.model.as_deref() != Some("<synthetic>")
            && let Some(k) =
                response_key(m.id.as_deref(), p.request_id.as_deref(), p.uuid.as_deref())
        {
            keys.insert(key_hash(&k));
        }
        if let Some(r) = p.tool_use_result
            && let Ok(a) = serde_json::from_str::<AgentRef<'_>>(r.get())
            && let Some(id) = a.agent_id
            && !ix.agents_named.iter().any(|x| x == id.as_ref())
        {
            ix.agents_named.push(id.into_owned());
        }
        Ok(())
    })?;
    ix.bytes = stats.bytes;
    ix.sidechain_only &= messages > 0;
    ix.keys = keys.into_iter().collect();
    ix.keys.sort_unstable();
    ix.uuids = uuids.into_iter().collect();
    ix.uuids.sort_unstable();
    Ok(ix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_pass_reads_ids_times_and_named_agents() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s1.jsonl");
        std::fs::write(
            &p,
            concat!(
                r#"{"type":"user","uuid":"u1","sessionId":"s1","cwd":"/w/shop","timestamp":"2025-11-02T10:00:00Z","message":{"role":"user","content":"hi"}}"#,
                "\n",
                "not json\n",
                r#"{"type":"assistant","uuid":"u2","requestId":"r1","timestamp":"2025-11-03T09:00:00Z","message":{"id":"m1","role":"assistant","model":"x","content":[],"usage":{"input_tokens":1}}}"#,
                "\n",
                r#"{"type":"user","uuid":"u3","toolUseResult":{"agentId":"a7"},"message":{"role":"user","content":[]}}"#,
                "\n",
            ),
        )
        .unwrap();
        let ix = index_file(&p).unwrap();
        assert_eq!(ix.format, Some(LogFormat::ClaudeCode));
        assert_eq!(ix.session_id.as_deref(), Some("s1"));
        assert_eq!(ix.cwd.as_deref(), Some("/w/shop"));
        assert_eq!(ix.dates(), Some(("2025-11-02", "2025-11-03")));
        assert_eq!(ix.keys, vec![key_hash("m:m1:r1")]);
        assert_eq!(ix.uuids.len(), 3);
        assert_eq!(ix.agents_named, ["a7"]);
        assert!(!ix.sidechain_only && !ix.is_agent_file());
    }
}
