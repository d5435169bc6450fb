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
//! `.mcp.json`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

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

/// Reads the config at `path`. `env` looks up environment variables for `${VAR}` expansion.
pub fn read_config(path: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<ConfigEntry>> {
    let doc = Document::read(path)?;
    parse_config(&doc, env)
}

pub fn parse_config(
    doc: &Document,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ConfigEntry>> {
    let Value::Object(top) = &doc.value else {
        return Err(doc.error_at(&[], "expected a JSON object with an \"mcpServers\" map"));
    };
    let Some(servers) = top.get("mcpServers") else {
        return Err(doc.error_at(
            &[],
            "no \"mcpServers\" key: expected a Claude Code .mcp.json or a Claude Desktop config",
        ));
    };
    let Value::Object(servers) = servers else {
        return Err(doc.error_at(
            &path!["mcpServers"],
            "\"mcpServers\" must be an object of servers",
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
    let Value::Object(obj) = entry else {
        return Err(doc.error_at(at, "a server entry must be an object"));
    };
    if let Some(problem) = file_name_problem(name) {
        return Err(doc.error_at(at, format!("server name {name:?} {problem}")));
    }
    let sub = |key: &str| {
        let mut p = at.to_vec();
        p.push(Seg::from(key));
        p
    };
    match obj.get("type") {
        None => {
            if obj.contains_key("url") && !obj.contains_key("command") {
                return Ok(EntryKind::Remote {
                    transport: "url".into(),
                });
            }
        }
        Some(Value::String(t)) if t == "stdio" => {}
        Some(Value::String(t)) => {
            return Ok(EntryKind::Remote {
                transport: t.clone(),
            });
        }
        Some(_) => return Err(doc.error_at(&sub("type"), "\"type\" must be a string")),
    }
    let expand_at = |p: &[Seg], s: &str| expand(s, env).map_err(|m| doc.error_at(p, m));
    let program = match obj.get("command") {
        Some(Value::String(c)) if !c.trim().is_empty() => expand_at(&sub("command"), c)?,
        Some(Value::String(_)) => return Err(doc.error_at(&sub("command"), "\"command\" is empty")),
        Some(_) => return Err(doc.error_at(&sub("command"), "\"command\" must be a string")),
        None => return Err(doc.error_at(at, "missing \"command\" (a stdio server needs one)")),
    };
    let mut args = Vec::new();
    match obj.get("args") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let mut p = sub("args");
                p.push(Seg::Index(i));
                match item {
                    Value::String(s) => args.push(expand_at(&p, s)?),
                    _ => return Err(doc.error_at(&p, "each argument must be a string")),
                }
            }
        }
        Some(_) => return Err(doc.error_at(&sub("args"), "\"args\" must be an array of strings")),
    }
    let mut vars = Vec::new();
    match obj.get("env") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => vars = env_vars(doc, &sub("env"), map, env)?,
        Some(_) => return Err(doc.error_at(&sub("env"), "\"env\" must be an object of strings")),
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

fn env_vars(
    doc: &Document,
    at: &[Seg],
    map: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>> {
    let mut out = Vec::with_capacity(map.len());
    for (k, v) in map {
        let mut p = at.to_vec();
        p.push(Seg::from(k.as_str()));
        let value = match v {
            Value::String(s) => expand(s, env).map_err(|m| doc.error_at(&p, m))?,
            // Numbers and booleans are common in hand-written configs; the value is their text.
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => return Err(doc.error_at(&p, "an environment value must be a string")),
        };
        out.push((k.clone(), value));
    }
    Ok(out)
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
