//! The `mcpServers` map of a Claude Code `.mcp.json` or a Claude Desktop
//! `claude_desktop_config.json`:
//!
//! ```json
//! {"mcpServers": {
//!   "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
//!              "env": {"MEMORY_FILE_PATH": "${HOME}/memory.json"}},
//!   "remote": {"type": "http", "url": "https://example.com/mcp"}}}
//! ```
//!
//! Each entry becomes a command to run, a remote server we skip (only stdio servers can be
//! started here), or a located problem. A problem in one entry does not stop the others; a
//! file that is not such a config at all is an input error. `${VAR}` and `${VAR:-default}` in
//! `command`, `args` and `env` are expanded as Claude Code does; the working folder of every
//! server is the config file's folder (Claude Code runs project servers from the folder of
//! `.mcp.json`). Read through derived structs (`RawConfig`, `RawEntry`), so a wrong type is
//! located and named like in every other reader.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Deserialize;
use serde_json::Value;

use super::ServerCommand;
use crate::document::{Document, Seg};
use crate::error::Result;
use crate::path;

/// One entry of `mcpServers`, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigEntry {
    pub name: String,
    pub kind: EntryKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EntryKind {
    Stdio(ServerCommand),
    /// A server reached over the network (`type: http`, `sse`, ...): not started here.
    Remote {
        transport: String,
    },
    /// The entry cannot be used; the message names the file and `line:column`.
    Invalid(String),
}

/// The file as written. Entries stay values until each is read at its own path, so that one
/// bad entry does not hide the others; keys this tool does not use are ignored (configs carry
/// settings of their own).
#[derive(Deserialize)]
#[serde(expecting = "a JSON object with an \"mcpServers\" map")]
struct RawConfig {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<IndexMap<String, Value>>,
}

/// One server entry as written.
#[derive(Deserialize)]
#[serde(expecting = "a server entry (an object)")]
struct RawEntry {
    #[serde(rename = "type")]
    transport: Option<String>,
    /// Only whether it is there matters (a remote server without `type`).
    #[serde(default, deserialize_with = "present")]
    url: bool,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<IndexMap<String, EnvValue>>,
}

/// An environment value: text, or a number or boolean (common in hand-written configs), whose
/// text is the value.
#[derive(Deserialize)]
#[serde(untagged, expecting = "an environment value must be a string")]
enum EnvValue {
    Text(String),
    Number(serde_json::Number),
    Bool(bool),
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

/// Reads the config at `path`. `env` looks up environment variables for `${VAR}` expansion.
pub fn read_config(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<ConfigEntry>> {
    let doc = Document::read(path)?;
    parse_config(&doc, env)
}

pub fn parse_config(
    doc: &Document,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ConfigEntry>> {
    // A list decodes into a struct field by field; say what was meant instead.
    if !doc.value.is_object() {
        return Err(doc.error_at(&[], "expected a JSON object with an \"mcpServers\" map"));
    }
    if doc.value.get("mcpServers").is_some_and(|s| !s.is_object()) {
        return Err(doc.error_at(
            &path!["mcpServers"],
            "\"mcpServers\" must be an object of servers",
        ));
    }
    let raw: RawConfig = doc.decode(&[], &doc.value)?;
    let Some(servers) = raw.mcp_servers else {
        return Err(doc.error_at(
            &[],
            "no \"mcpServers\" key: expected a Claude Code .mcp.json or a Claude Desktop config",
        ));
    };
    if servers.is_empty() {
        return Err(doc.error_at(&path!["mcpServers"], "\"mcpServers\" lists no servers"));
    }
    let dir = match doc.path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok(servers
        .iter()
        .map(|(name, entry)| {
            let at = path!["mcpServers", name.as_str()];
            let kind = match entry_kind(doc, &at, name, entry, &dir, env) {
                Ok(k) => k,
                Err(e) => EntryKind::Invalid(e.to_string()),
            };
            ConfigEntry {
                name: name.clone(),
                kind,
            }
        })
        .collect())
}

fn entry_kind(
    doc: &Document,
    at: &[Seg],
    name: &str,
    entry: &Value,
    dir: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<EntryKind> {
    if !entry.is_object() {
        return Err(doc.error_at(at, "a server entry must be an object"));
    }
    let raw: RawEntry = doc.decode(at, entry)?;
    if let Some(problem) = file_name_problem(name) {
        return Err(doc.error_at(at, format!("server name {name:?} {problem}")));
    }
    if let Some(problem) = crate::catalog::server_name_problem(name) {
        return Err(doc.error_at(at, problem));
    }
    let sub = |key: &str| {
        let mut p = at.to_vec();
        p.push(Seg::from(key));
        p
    };
    match raw.transport {
        None if raw.url && raw.command.is_none() => {
            return Ok(EntryKind::Remote {
                transport: "url".into(),
            });
        }
        Some(t) if t != "stdio" => return Ok(EntryKind::Remote { transport: t }),
        _ => {}
    }
    let expand_at = |p: &[Seg], s: &str| expand(s, env).map_err(|m| doc.error_at(p, m));
    let program = match &raw.command {
        Some(c) if !c.trim().is_empty() => expand_at(&sub("command"), c)?,
        Some(_) => return Err(doc.error_at(&sub("command"), "\"command\" is empty")),
        None => return Err(doc.error_at(at, "missing \"command\" (a stdio server needs one)")),
    };
    let mut args = Vec::new();
    for (i, arg) in raw.args.iter().flatten().enumerate() {
        let mut p = sub("args");
        p.push(Seg::Index(i));
        args.push(expand_at(&p, arg)?);
    }
    let mut vars = Vec::new();
    for (k, v) in raw.env.iter().flatten() {
        let mut p = sub("env");
        p.push(Seg::from(k.as_str()));
        let value = match v {
            EnvValue::Text(s) => expand_at(&p, s)?,
            EnvValue::Number(n) => n.to_string(),
            EnvValue::Bool(b) => b.to_string(),
        };
        vars.push((k.clone(), value));
    }
    // A relative program path with a folder in it is relative to the config's folder, like
    // the server's working folder; a bare name is looked up on PATH.
    // Made absolute because a relative program path combined with a working folder means
    // different things on different platforms.
    let program = if program.contains('/') && Path::new(&program).is_relative() {
        let joined = dir.join(&program);
        std::path::absolute(&joined)
            .unwrap_or(joined)
            .to_string_lossy()
            .into_owned()
    } else {
        program
    };
    Ok(EntryKind::Stdio(ServerCommand {
        program,
        args,
        env: vars,
        cwd: Some(dir.to_path_buf()),
    }))
}

/// Why a server name cannot name its snapshot file `<name>.json`, if it cannot.
pub fn file_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("is empty")
    } else if name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        Some("cannot be used as a file name")
    } else {
        None
    }
}

/// Expands `${VAR}` and `${VAR:-default}`; a `$` not followed by `{` stays as it is.
pub fn expand(
    s: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed \"${{\" in {s:?}"));
        };
        let inner = &after[..end];
        let (var, default) = match inner.split_once(":-") {
            Some((v, d)) => (v, Some(d)),
            None => (inner, None),
        };
        match (env(var), default) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(format!(
                    "environment variable {var} is not set (write ${{{var}:-default}} for a default)"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<ConfigEntry>> {
        let doc = Document::parse(Path::new("cfg/.mcp.json"), text.as_bytes().to_vec())?;
        let env = |k: &str| (k == "HOME").then(|| "/home/u".to_string());
        parse_config(&doc, &env)
    }

    #[test]
    fn stdio_remote_and_broken_entries_are_told_apart() {
        let text = r#"{"mcpServers": {
  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"],
             "env": {"MEMORY_FILE_PATH": "${HOME}/m.json", "N": 3}},
  "remote": {"type": "http", "url": "https://example.com/mcp"},
  "old": {"url": "https://example.com/sse"},
  "local": {"type": "stdio", "command": "./bin/server", "args": ["${PORT:-8080}"]},
  "broken": {"args": ["x"]},
  "unset": {"command": "x", "args": ["${NOPE}"]}
}}"#;
        let entries = parse(text).unwrap();
        let names: Vec<_> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            ["memory", "remote", "old", "local", "broken", "unset"]
        );
        let EntryKind::Stdio(m) = &entries[0].kind else {
            panic!("{:?}", entries[0])
        };
        assert_eq!(m.program, "npx");
        assert_eq!(m.args, ["-y", "@modelcontextprotocol/server-memory"]);
        assert_eq!(
            m.env,
            [
                ("MEMORY_FILE_PATH".to_string(), "/home/u/m.json".to_string()),
                ("N".to_string(), "3".to_string())
            ]
        );
        assert_eq!(m.cwd.as_deref(), Some(Path::new("cfg")));
        assert_eq!(
            entries[1].kind,
            EntryKind::Remote {
                transport: "http".into()
            }
        );
        assert_eq!(
            entries[2].kind,
            EntryKind::Remote {
                transport: "url".into()
            }
        );
        let EntryKind::Stdio(l) = &entries[3].kind else {
            panic!()
        };
        assert!(Path::new(&l.program).is_absolute(), "{}", l.program);
        assert!(l.program.ends_with("cfg/bin/server"), "{}", l.program);
        assert_eq!(l.args, ["8080"]);
        assert_eq!(
            entries[4].kind,
            EntryKind::Invalid(
                "cfg/.mcp.json:7:13: missing \"command\" (a stdio server needs one)".into()
            )
        );
        let EntryKind::Invalid(msg) = &entries[5].kind else {
            panic!()
        };
        assert!(msg.starts_with("cfg/.mcp.json:8:"), "{msg}");
        assert!(msg.contains("NOPE is not set"), "{msg}");
    }

    #[test]
    fn a_file_without_servers_is_an_input_error() {
        let e = parse(r#"{"servers": {}}"#).unwrap_err().to_string();
        assert!(e.contains("no \"mcpServers\" key"), "{e}");
        let e = parse(r#"{"mcpServers": []}"#).unwrap_err().to_string();
        assert!(e.starts_with("cfg/.mcp.json:1:"), "{e}");
        let e = parse(r#"{"mcpServers": {}}"#).unwrap_err().to_string();
        assert!(e.contains("lists no servers"), "{e}");
    }

    #[test]
    fn wrong_types_are_located_in_their_entry() {
        let entries = parse(
            r#"{"mcpServers": {
  "a": {"command": 7},
  "b": {"command": "x", "args": ["ok", 2]},
  "c": {"command": "x", "env": {"K": [1]}},
  "d": [],
  "e": {"command": "x", "args": null, "env": null, "cwd": "ignored"}
}}"#,
        )
        .unwrap();
        let msg = |i: usize| match &entries[i].kind {
            EntryKind::Invalid(m) => m.clone(),
            k => panic!("{k:?}"),
        };
        assert_eq!(
            msg(0),
            "cfg/.mcp.json:2:20: mcpServers.a.command: invalid type: integer `7`, expected a string"
        );
        assert_eq!(
            msg(1),
            "cfg/.mcp.json:3:40: mcpServers.b.args[1]: invalid type: integer `2`, expected a string"
        );
        assert_eq!(
            msg(2),
            "cfg/.mcp.json:4:38: mcpServers.c.env.K: an environment value must be a string"
        );
        assert_eq!(
            msg(3),
            "cfg/.mcp.json:5:8: a server entry must be an object"
        );
        assert!(
            matches!(&entries[4].kind, EntryKind::Stdio(c) if c.args.is_empty() && c.env.is_empty())
        );
    }

    #[test]
    fn names_that_cannot_be_file_names_are_rejected() {
        let entries = parse(r#"{"mcpServers": {"a/b": {"command": "x"}}}"#).unwrap();
        assert!(matches!(&entries[0].kind, EntryKind::Invalid(m) if m.contains("file name")));
    }

    #[test]
    fn expansion_handles_defaults_and_plain_dollars() {
        let env = |k: &str| (k == "A").then(|| "1".to_string());
        assert_eq!(expand("x${A}y$z", &env).unwrap(), "x1y$z");
        assert_eq!(expand("${B:-two}", &env).unwrap(), "two");
        assert!(expand("${A", &env).unwrap_err().contains("unclosed"));
    }
}
