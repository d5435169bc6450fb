//! Files → sessions, planned from the first pass (`read::index`) before any file is read in
//! full, so each session can be read, converted and dropped on its own.
//!
//! - A session is a main file plus its subagents' files. A subagent file links by the folder
//!   layout first (`<session>/subagents/agent-<id>.jsonl` belongs to `<session>.jsonl` beside
//!   that folder), then by ids: the main file whose `Task` result names its agent, then the
//!   main file named after its `sessionId`, then one whose records carry that `sessionId`. A
//!   subagent file whose parent was not given stands alone, its agent read as the main
//!   conversation.
//! - Records two files hold (a resumed or forked session copies its history, keeping uuids,
//!   message ids and request ids) belong to the file that wrote them first: files are taken in
//!   the order of their first timestamp (then their last, then their path), and a record an
//!   earlier file holds is a copy in the later one ([`copies`]).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::read::index::FileIndex;
use super::read::{Copies, FileLog, LogFormat, ReadStats};
use super::transcript::Transcript;

/// One session: one entry of the import summary.
#[derive(Debug, Clone)]
pub struct Session {
    /// The main file (or the lone subagent file).
    pub file: PathBuf,
    /// The main file's name (Claude Code names it after the session), Codex `session_meta.id`.
    pub id: String,
    pub format: LogFormat,
    pub main: Transcript,
    /// Every subagent conversation of the session, from any of its files.
    pub agents: Vec<Transcript>,
    /// Every file folded into this session, main first.
    pub files: Vec<PathBuf>,
    /// Read statistics summed over its files.
    pub stats: ReadStats,
    /// The system prompt and context the log records (o200k tokens), when it does.
    pub system_tokens: Option<usize>,
    /// Tools the session defined itself (Codex `dynamic_tools`).
    pub dynamic_tools: Vec<crate::catalog::Tool>,
    /// The agent's version the main file names (Claude Code's `version`), when it does.
    pub agent_version: Option<(u32, u32, u32)>,
}

impl Session {
    /// Every transcript: main first, then subagents.
    pub fn transcripts(&self) -> impl Iterator<Item = &Transcript> {
        std::iter::once(&self.main).chain(self.agents.iter())
    }
}

/// A session before its files are read: indices into the indexed files, main first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub id: String,
    pub format: LogFormat,
    /// The main file, or the lone agent file read as one.
    pub main: usize,
    /// Whether `main` is a subagent's file standing alone.
    pub lone_agent: bool,
    pub agents: Vec<usize>,
}

impl Planned {
    pub fn files(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.main).chain(self.agents.iter().copied())
    }
}

/// `<dir>/<S>/subagents/agent-x.jsonl` → `<dir>/<S>.jsonl`.
fn layout_parent(p: &Path) -> Option<PathBuf> {
    let sub = p.parent()?;
    if sub.file_name()? != "subagents" {
        return None;
    }
    let session_dir = sub.parent()?;
    let name = session_dir.file_name()?.to_string_lossy().into_owned();
    Some(session_dir.parent()?.join(format!("{name}.jsonl")))
}

/// Groups indexed files (sorted by path) into sessions, in the order of their main files.
pub fn plan(files: &[FileIndex]) -> Vec<Planned> {
    let is_agent = |f: &FileIndex| f.format != Some(LogFormat::Codex) && f.is_agent_file();
    let mains: Vec<usize> = (0..files.len()).filter(|&i| !is_agent(&files[i])).collect();
    let by_path: HashMap<&Path, usize> = mains
        .iter()
        .map(|&i| (files[i].path.as_path(), i))
        .collect();
    let mut sessions: Vec<Planned> = mains
        .iter()
        .map(|&i| {
            let f = &files[i];
            let format = f.format.unwrap_or(LogFormat::ClaudeCode);
            let id = match format {
                LogFormat::Codex => f.session_id.clone().unwrap_or_else(|| f.stem()),
                LogFormat::ClaudeCode => f.stem(),
            };
            Planned {
                id,
                format,
                main: i,
                lone_agent: false,
                agents: Vec::new(),
            }
        })
        .collect();
    let session_of: HashMap<usize, usize> =
        mains.iter().enumerate().map(|(s, &i)| (i, s)).collect();
    for a in (0..files.len()).filter(|&i| is_agent(&files[i])) {
        let f = &files[a];
        let parent = link(f, files, &mains, &by_path);
        match parent.and_then(|p| session_of.get(&p)) {
            Some(&s) => sessions[s].agents.push(a),
            None => sessions.push(Planned {
                id: f.stem(),
                format: f.format.unwrap_or(LogFormat::ClaudeCode),
                main: a,
                lone_agent: true,
                agents: Vec::new(),
            }),
        }
    }
    sessions.sort_by(|x, y| files[x.main].path.cmp(&files[y.main].path));
    sessions
}

/// The main file a subagent's file belongs to (see the module notes for the order).
fn link(
    f: &FileIndex,
    files: &[FileIndex],
    mains: &[usize],
    by_path: &HashMap<&Path, usize>,
) -> Option<usize> {
    if let Some(p) = layout_parent(&f.path)
        && let Some(&i) = by_path.get(p.as_path())
    {
        return Some(i);
    }
    let same_dir = |i: &usize| files[*i].path.parent() == f.path.parent();
    let prefer = |c: Vec<usize>| -> Option<usize> {
        c.iter()
            .copied()
            .find(same_dir)
            .or_else(|| c.first().copied())
    };
    if let Some(agent) = f.agent() {
        let named: Vec<usize> = mains
            .iter()
            .copied()
            .filter(|&i| files[i].agents_named.contains(&agent))
            .collect();
        if let Some(i) = prefer(named) {
            return Some(i);
        }
    }
    let sid = f.session_id.as_deref()?;
    let by_stem: Vec<usize> = mains
        .iter()
        .copied()
        .filter(|&i| files[i].stem() == sid)
        .collect();
    if let Some(i) = prefer(by_stem) {
        return Some(i);
    }
    prefer(
        mains
            .iter()
            .copied()
            .filter(|&i| files[i].session_id.as_deref() == Some(sid))
            .collect(),
    )
}

/// For each file, the records an earlier file already holds (see the module notes).
pub fn copies(files: &[FileIndex]) -> Vec<Copies> {
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&files[a], &files[b]);
        // A file with no timestamps sorts last: it cannot have been written first.
        (x.first.is_none(), &x.first, &x.last, &x.path).cmp(&(
            y.first.is_none(),
            &y.first,
            &y.last,
            &y.path,
        ))
    });
    let mut seen_keys: HashSet<u64> = HashSet::new();
    let mut seen_uuids: HashSet<u64> = HashSet::new();
    let mut out = vec![Copies::default(); files.len()];
    for i in order {
        let f = &files[i];
        let c = &mut out[i];
        c.keys = f
            .keys
            .iter()
            .copied()
            .filter(|k| seen_keys.contains(k))
            .collect();
        c.uuids = f
            .uuids
            .iter()
            .copied()
            .filter(|k| seen_uuids.contains(k))
            .collect();
        seen_keys.extend(f.keys.iter().copied());
        seen_uuids.extend(f.uuids.iter().copied());
    }
    out
}

/// A planned session's files, read, folded into one session (`logs` in `planned.files()`
/// order).
pub fn assemble(planned: &Planned, logs: Vec<FileLog>) -> Session {
    let mut logs = logs.into_iter();
    let first = logs.next().expect("a session has its main file");
    let mut stats = first.stats.clone();
    let mut files = vec![first.path.clone()];
    let mut agents = first.agents;
    let main = if planned.lone_agent {
        // A subagent's file alone: its agent is the conversation.
        let mut own = first.main.unwrap_or_default();
        if own.is_empty() && !agents.is_empty() {
            own = agents.remove(0);
        }
        own.agent_id = None;
        own
    } else {
        first.main.unwrap_or_default()
    };
    for log in logs {
        stats.add(&log.stats);
        let agent = super::read::index::stem(&log.path)
            .strip_prefix("agent-")
            .map(str::to_string);
        // An agent file's records need not say `isSidechain`: its own conversation is the agent.
        if let Some(mut own) = log.main {
            own.agent_id = agent.clone().or(own.agent_id);
            agents.push(own);
        }
        agents.extend(log.agents);
        files.push(log.path);
    }
    Session {
        file: first.path,
        id: planned.id.clone(),
        format: planned.format,
        main,
        agents,
        files,
        stats,
        system_tokens: first.system_tokens,
        dynamic_tools: first.dynamic_tools,
        agent_version: first.agent_version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ix(path: &str, first: &str, keys: &[u64]) -> FileIndex {
        FileIndex {
            path: PathBuf::from(path),
            format: Some(LogFormat::ClaudeCode),
            first: Some(first.into()),
            last: Some(first.into()),
            keys: keys.to_vec(),
            ..FileIndex::default()
        }
    }

    #[test]
    fn a_copied_record_belongs_to_the_file_that_wrote_it_first_whatever_the_paths() {
        // b.jsonl sorts first by path but started later: its shared records are the copies.
        let files = [
            ix("/p/b.jsonl", "2025-11-04T11:00:00Z", &[1, 2, 9]),
            ix("/p/c.jsonl", "2025-11-04T10:00:00Z", &[1, 2]),
        ];
        let c = copies(&files);
        assert_eq!(c[0].keys, HashSet::from([1, 2]));
        assert!(c[1].is_empty());
    }

    #[test]
    fn subagent_files_link_by_folder_first_then_by_ids() {
        let mut files = vec![
            ix("/p/s1.jsonl", "2025-11-04T10:00:00Z", &[]),
            ix("/p/s2.jsonl", "2025-11-04T11:00:00Z", &[]),
            ix("/p/s2/subagents/agent-x.jsonl", "2025-11-04T11:01:00Z", &[]),
            ix("/p/agent-y.jsonl", "2025-11-04T11:02:00Z", &[]),
            ix("/q/agent-z.jsonl", "2025-11-04T11:03:00Z", &[]),
        ];
        // Every file names s1 as its session; s2's Task result names y.
        for f in &mut files {
            f.session_id = Some("s1".into());
        }
        files[1].agents_named = vec!["y".into()];
        let p = plan(&files);
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!((p[0].id.as_str(), p[0].agents.clone()), ("s1", vec![4]));
        assert_eq!((p[1].id.as_str(), p[1].agents.clone()), ("s2", vec![2, 3]));
        // Without a parent given, an agent file stands alone.
        let lone = plan(&files[2..3]);
        assert!(lone[0].lone_agent && lone[0].id == "agent-x", "{lone:?}");
    }
}
