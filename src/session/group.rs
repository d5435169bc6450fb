//! Files → sessions. A session is its main file plus every subagent file that names the same
//! `sessionId` (`agent-<id>.jsonl` beside it or under `<session>/subagents/`); a subagent file
//! whose parent was not given stands alone, its agent read as the main conversation. A request
//! already seen in an earlier file (a resumed session copies its history) is kept as context
//! but billed once.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use super::read::{FileLog, LogFormat, ReadStats};
use super::transcript::Transcript;

/// One session: one entry of the import summary.
#[derive(Debug, Clone)]
pub struct Session {
    /// The main file (or the lone subagent file).
    pub file: PathBuf,
    /// `sessionId`, else the file stem.
    pub id: String,
    pub format: LogFormat,
    pub main: Transcript,
    /// Every subagent conversation of the session, from any of its files.
    pub agents: Vec<Transcript>,
    /// Every file folded into this session, main first.
    pub files: Vec<PathBuf>,
    /// Read statistics summed over its files.
    pub stats: ReadStats,
}

impl Session {
    /// Every transcript: main first, then subagents.
    pub fn transcripts(&self) -> impl Iterator<Item = &Transcript> {
        std::iter::once(&self.main).chain(self.agents.iter())
    }
}

fn add_stats(into: &mut ReadStats, from: &ReadStats) {
    into.lines += from.lines;
    into.bytes += from.bytes;
    into.bad_lines += from.bad_lines;
    into.truncated_last_line |= from.truncated_last_line;
    for (k, v) in &from.ignored {
        *into.ignored.entry(k.clone()).or_insert(0) += v;
    }
}

fn stem(p: &std::path::Path) -> String {
    p.file_stem().map_or_else(
        || "session".to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// Folds files (sorted by path) into sessions, in the order of their main files.
pub fn group(logs: Vec<FileLog>) -> Vec<Session> {
    let logs = agent_files_as_subagents(logs);
    let (mains, subs): (Vec<FileLog>, Vec<FileLog>) =
        logs.into_iter().partition(|l| l.main.is_some());
    let mut sessions: Vec<Session> = Vec::new();
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for log in mains {
        let id = log.session_id.clone().unwrap_or_else(|| stem(&log.path));
        by_id.entry(id.clone()).or_insert(sessions.len());
        sessions.push(Session {
            file: log.path.clone(),
            id,
            format: log.format,
            main: log.main.expect("partitioned on main"),
            agents: log.agents,
            files: vec![log.path],
            stats: log.stats,
        });
    }
    for log in subs {
        let parent = log
            .session_id
            .as_ref()
            .and_then(|id| by_id.get(id).copied());
        match parent {
            Some(i) => {
                let s = &mut sessions[i];
                add_stats(&mut s.stats, &log.stats);
                s.files.push(log.path);
                s.agents.extend(log.agents);
            }
            None => {
                let mut agents = log.agents;
                let main = if agents.is_empty() {
                    Transcript::new(None)
                } else {
                    let mut m = agents.remove(0);
                    m.agent_id = None;
                    m
                };
                sessions.push(Session {
                    file: log.path.clone(),
                    id: stem(&log.path),
                    format: log.format,
                    main,
                    agents,
                    files: vec![log.path],
                    stats: log.stats,
                });
            }
        }
    }
    sessions.sort_by(|a, b| a.file.cmp(&b.file));
    mark_duplicates(&mut sessions);
    sessions
}

/// An `agent-<id>.jsonl` file of a session that was given too is that session's subagent even
/// when its records do not say `isSidechain` (the file name and `sessionId` do).
fn agent_files_as_subagents(mut logs: Vec<FileLog>) -> Vec<FileLog> {
    let agent_id = |l: &FileLog| -> Option<String> {
        let stem = l.path.file_stem()?.to_string_lossy().into_owned();
        stem.strip_prefix("agent-").map(str::to_string)
    };
    let parents: HashSet<String> = logs
        .iter()
        .filter(|l| l.main.is_some() && agent_id(l).is_none())
        .filter_map(|l| l.session_id.clone())
        .collect();
    for l in &mut logs {
        let Some(id) = agent_id(l) else { continue };
        if l.session_id.as_ref().is_some_and(|s| parents.contains(s))
            && let Some(mut main) = l.main.take()
        {
            main.agent_id = Some(id);
            l.agents.insert(0, main);
        }
    }
    logs
}

/// Claude `message.id`s are global: a request seen in an earlier session is a copy.
fn mark_duplicates(sessions: &mut [Session]) {
    let mut seen: HashSet<String> = HashSet::new();
    for s in sessions.iter_mut() {
        if s.format != LogFormat::ClaudeCode {
            continue;
        }
        let txs = std::iter::once(&mut s.main).chain(s.agents.iter_mut());
        for tx in txs {
            for r in &mut tx.requests {
                if r.key.is_empty() {
                    continue;
                }
                if !seen.insert(r.key.clone()) {
                    r.duplicate = true;
                }
            }
        }
    }
}
