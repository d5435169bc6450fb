//! Raw → model: the checks that need more than one value, or a position kept in the model.

use std::path::Path;

use serde_json::Value;

use super::raw::*;
use super::texts::Texts;
use super::*;
use crate::budget::{Budget, Kind, Over};
use crate::document::{Document, Seg};
use crate::error::{Error, Position, Result};

pub(super) struct Reader<'a> {
    pub(super) doc: &'a Document,
}

fn child(p: &[Seg], s: impl Into<Seg>) -> Vec<Seg> {
    let mut v = p.to_vec();
    v.push(s.into());
    v
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

impl Reader<'_> {
    /// An error at `p`, its message prefixed with the path as `Document::decode` does.
    fn err(&self, p: &[Seg], msg: impl AsRef<str>) -> Error {
        self.doc
            .error_at(p, crate::document::with_path(p, msg.as_ref()))
    }

    fn tool_ref(&self, p: &[Seg], id: String) -> Result<ToolRef> {
        let at = if id.is_empty() {
            None
        } else {
            self.doc.locate(p)
        };
        self.tool_ref_at(p, id, at)
    }

    /// A tool id written at `p`, whose place `at` the caller found.
    fn tool_ref_at(&self, p: &[Seg], id: String, at: Option<Position>) -> Result<ToolRef> {
        if id.is_empty() {
            return Err(self.err(p, "a tool id must not be empty"));
        }
        Ok(ToolRef { id, at })
    }

    fn tool_refs(&self, p: &[Seg], ids: Vec<String>) -> Result<Vec<ToolRef>> {
        ids.into_iter()
            .enumerate()
            .map(|(i, id)| self.tool_ref(&child(p, i), id))
            .collect()
    }

    /// An error at `p` for a size over the budget, with what to change.
    fn over(&self, p: &[Seg], over: Over, fix: &str) -> Error {
        self.err(p, format!("{over}; {fix}"))
    }

    pub(super) fn scenario(&self, raw: RawScenario, budget: &mut Budget) -> Result<Scenario> {
        let name = match raw.name {
            Some(n) if !n.trim().is_empty() => n,
            Some(_) => return Err(self.err(&path!["name"], "must not be empty")),
            None => self
                .doc
                .path
                .file_stem()
                .map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned()),
        };
        let profile = self.profile(raw.model, raw.model_overrides)?;
        let Some(catalogs) = raw.catalogs else {
            return Err(self.err(&[], "missing field `catalogs`: list the catalog files"));
        };
        let conversation = raw
            .conversation
            .and_then(|ListShape| self.doc.value.get("conversation").and_then(Value::as_array));
        let Some(conversation) = conversation else {
            return Err(self.err(
                &[],
                "missing field `conversation`: a scenario needs at least one turn",
            ));
        };
        let catalogs = self.catalogs(&catalogs)?;
        let catalogs_unavailable = catalogs
            .iter()
            .find(|c| c.optional && !c.is_available())
            .map(|c| (c.path.clone(), c.at));
        let explicit = self.deferred(raw.deferred)?;
        let client = raw.client.map(super::super::client::profile);
        // The client's policy, then every key the scenario writes (explicit keys win).
        let deferred = explicit.resolve(base_settings(client.as_ref()), true);
        let conversation =
            self.conversation(&path!["conversation"], conversation, &mut 0, budget)?;
        if !conversation.iter().any(|i| matches!(i, Item::Turn(_))) {
            return Err(self.err(
                &path!["conversation"],
                "no turn (a turn is a mapping with `user:`)",
            ));
        }
        let mut system_prompt = raw.system_prompt;
        let mut conversation = conversation;
        let unavailable = match &raw.texts {
            Some(t) => self
                .texts(t, &mut system_prompt, &mut conversation, budget)?
                .map(|p| (p, self.doc.locate(&child(&path!["texts"], "path")))),
            None => None,
        };
        let (unavailable, unavailable_at) = catalogs_unavailable
            .or(unavailable)
            .map_or((None, None), |(p, at)| (Some(p), at));
        for (i, p) in raw.published.iter().enumerate() {
            if let Err((key, message)) = p.check() {
                return Err(self.err(&child(&child(&path!["published"], i), key), message));
            }
        }
        Ok(Scenario {
            name,
            description: raw.description,
            path: self.doc.path.clone(),
            tokenizer: raw.tokenizer,
            render: raw.render,
            counter: raw.counter,
            tool_choice: raw.tool_choice,
            profile,
            client: raw.client,
            explicit,
            system_prompt,
            system_prompt_tokens: raw.system_prompt_tokens,
            catalogs,
            deferred,
            sizes: raw.sizes,
            failures: raw.failures,
            conversation,
            published: raw.published,
            unavailable,
            unavailable_at,
        })
    }

    /// Fills `{{name}}` placeholders from the texts file (see [`super::texts`]); `Some(path)`
    /// when the file is optional and absent (placeholders stay, and the scenario is
    /// unavailable). Every filled text's length is computed and charged to the budget before
    /// any is built.
    fn texts(
        &self,
        t: &RawTexts,
        system: &mut Option<String>,
        items: &mut [Item],
        budget: &mut Budget,
    ) -> Result<Option<PathBuf>> {
        let base = self.doc.path.parent().unwrap_or_else(|| Path::new(""));
        let path = base.join(&t.path);
        if t.optional && !path.is_file() {
            return Ok(Some(path));
        }
        let doc = Document::read(&path)?;
        let Value::Object(map) = &doc.value else {
            return Err(doc.error_at(&[], "expected an object of named texts"));
        };
        let texts = Texts::new(map);
        let fix = "the texts file's placeholders (or the turns' `repeat`) ask for more text than \
                   a run may hold";
        // The system prompt is new text; a turn's user text was charged as written (times its
        // repeat, one copy each): the growth is charged.
        if let Some(s) = system.as_deref() {
            budget
                .charge(Kind::TextBytes, texts.expanded_len(s))
                .map_err(|o| self.over(&path!["system_prompt"], o, fix))?;
        }
        let grown = |turn: &Turn| {
            texts
                .expanded_len(&turn.user)
                .saturating_sub(turn.user.len() as u64)
        };
        let turns = || {
            items.iter().filter_map(|it| match it {
                Item::Turn(t) => Some(t),
                Item::Event(_) => None,
            })
        };
        let total = turns().fold(0u64, |n, t| n.saturating_add(grown(t)));
        let before = budget.used(Kind::TextBytes);
        if let Err(o) = budget.charge(Kind::TextBytes, total) {
            // Located at the turn where the run's text goes over; the size is the whole run's.
            let mut sum = before;
            let crossing = turns().find(|t| {
                sum = sum.saturating_add(grown(t));
                sum > Kind::TextBytes.limit()
            });
            let msg = format!("user: {o}; {fix}");
            return Err(match crossing.and_then(|t| t.at) {
                Some(at) => Error::input(&self.doc.path, Some(at), msg),
                None => self.err(&path!["conversation"], msg),
            });
        }
        if let Some(s) = system
            && texts.names_any(s)
        {
            *s = texts.fill(s);
        }
        for item in items.iter_mut() {
            if let Item::Turn(t) = item
                && texts.names_any(&t.user)
            {
                t.user = texts.fill(&t.user);
            }
        }
        Ok(None)
    }

    fn profile(&self, model: Option<String>, overrides: IndexMap<String, f64>) -> Result<Profile> {
        let name = model.unwrap_or_else(|| profile::DEFAULT_PROFILE.to_string());
        let mut profile = profile::resolve(&name).map_err(|why| self.err(&path!["model"], why))?;
        for (key, value) in overrides {
            let kp = path!["model_overrides", key.as_str()];
            let key: Override = self.doc.decode(&kp, &Value::String(key.clone()))?;
            profile.set(key, value).map_err(|e| self.err(&kp, e))?;
        }
        Ok(profile)
    }

    fn catalogs(&self, items: &[Value]) -> Result<Vec<CatalogEntry>> {
        let p = path!["catalogs"];
        if items.is_empty() {
            return Err(self.err(&p, "catalogs is empty: list at least one catalog file"));
        }
        let base = self
            .doc
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        // A path is relative to the scenario's folder; a `builtin:NAME` reference names a
        // catalog embedded in the binary, checked here so an unknown name points at its line.
        let resolve = |written: &str, at: &[Seg]| -> Result<std::path::PathBuf> {
            let path = Path::new(written);
            if crate::catalog::builtin::is_reference(path) {
                crate::catalog::builtin::text(path).map_err(|m| self.err(at, m))?;
                return Ok(path.to_path_buf());
            }
            Ok(base.join(path))
        };
        let entry = |i: usize, item: &Value| -> Result<CatalogEntry> {
            let ip = child(&p, i);
            // A bare string is a path.
            if let Value::String(s) = item {
                return Ok(CatalogEntry {
                    path: resolve(s, &ip)?,
                    server: None,
                    connected: true,
                    optional: false,
                    at: self.doc.locate(&ip),
                });
            }
            let raw: RawCatalogEntry = self.doc.decode(&ip, item)?;
            let pp = child(&ip, "path");
            Ok(CatalogEntry {
                path: resolve(&raw.path, &pp)?,
                server: raw.server,
                connected: raw.connected.unwrap_or(true),
                optional: raw.optional.unwrap_or(false),
                at: self.doc.locate(&pp),
            })
        };
        items.iter().enumerate().map(|(i, v)| entry(i, v)).collect()
    }

    /// The `deferred` keys as written, each checked at its position.
    fn deferred(&self, raw: RawDeferred) -> Result<ExplicitDeferred> {
        let p = path!["deferred"];
        let defer_builtins = self.tool_refs(&child(&p, "defer_builtins"), raw.defer_builtins)?;
        if raw.max_results == Some(0) {
            return Err(self.err(&child(&p, "max_results"), "must be ≥ 1"));
        }
        // Each key's place walked in the order written (a `locate` per key searched the keys
        // before it: 80,000 keys took 45 s).
        let dp = child(&p, "depends_on");
        let spans = self.doc.spans(&dp);
        let mut depends_on = Vec::with_capacity(raw.depends_on.len());
        for (i, (id, deps)) in raw.depends_on.into_iter().enumerate() {
            let kp = child(&dp, id.as_str());
            let Some(list) = spans.and_then(|s| s.keyed(i, &id)) else {
                let deps = self.tool_refs(&kp, deps)?;
                depends_on.push((self.tool_ref(&kp, id)?, deps));
                continue;
            };
            let deps = deps
                .into_iter()
                .enumerate()
                .map(|(j, dep)| {
                    let at = list.entry(j).and_then(|(_, s)| s.position());
                    self.tool_ref_at(&child(&kp, j), dep, at)
                })
                .collect::<Result<Vec<_>>>()?;
            depends_on.push((self.tool_ref_at(&kp, id, list.position())?, deps));
        }
        let bm25 = match raw.bm25 {
            Some(b) => {
                let params = b.apply(Bm25Params::default());
                // Each value is in range; all weights 0 is the one combination left to refuse.
                params
                    .validate()
                    .map_err(|e| self.err(&child(&p, "bm25"), e))?;
                Some(params)
            }
            None => None,
        };
        let scorer = raw.scorer.map(|spec| {
            let dir = spec.is_external().then(|| {
                self.doc
                    .path
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default()
            });
            (spec, dir)
        });
        Ok(ExplicitDeferred {
            when: raw.when,
            defer_mcp: raw.defer_mcp,
            defer_builtins,
            always_load: self.tool_refs(&child(&p, "always_load"), raw.always_load)?,
            always_load_servers: self
                .tool_refs(&child(&p, "always_load_servers"), raw.always_load_servers)?,
            scorer,
            max_results: raw.max_results,
            discovery: raw.discovery,
            listing: raw.listing,
            list_style: raw.list_style,
            reveal: raw.reveal,
            retry: raw.retry,
            depends_on,
            bm25,
            compact_keeps_loaded: raw.compact_keeps_loaded,
            resume_rediscovers: raw.resume_rediscovers,
            call_bridge: raw.call_bridge,
            namespace: raw.namespace,
        })
    }

    /// Reads the items of a conversation at `p`; `turns` counts turns after `repeat` across
    /// the whole conversation, against `MAX_TURNS`; each turn's requests (nested subagents
    /// included) and text, times its `repeat`, are charged to `budget` before it is expanded.
    fn conversation(
        &self,
        p: &[Seg],
        items: &[Value],
        turns: &mut usize,
        budget: &mut Budget,
    ) -> Result<Vec<Item>> {
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let ip = child(p, i);
            match item {
                Value::Object(m) if m.contains_key("event") => {
                    out.push(Item::Event(self.event(&ip, self.doc.decode(&ip, item)?)?));
                }
                Value::Object(_) => {
                    let raw: RawTurn = self.doc.decode(&ip, item)?;
                    let repeat = raw.repeat.unwrap_or(1);
                    *turns += repeat;
                    if *turns > MAX_TURNS {
                        return Err(self.err(
                            &ip,
                            format!("more than {MAX_TURNS} turns after expanding repeat"),
                        ));
                    }
                    let turn = self.turn(&ip, raw, budget)?;
                    let fix = "lower `repeat`";
                    budget
                        .charge(
                            Kind::Requests,
                            turn_work(&turn).saturating_mul(repeat as u64),
                        )
                        .map_err(|o| self.over(&ip, o, fix))?;
                    budget
                        .charge(
                            Kind::TextBytes,
                            turn_text(&turn).saturating_mul(repeat as u64),
                        )
                        .map_err(|o| self.over(&ip, o, fix))?;
                    // The last copy is the turn itself: a large `input` is not copied again.
                    if repeat > 0 {
                        out.extend((1..repeat).map(|_| Item::Turn(Box::new(turn.clone()))));
                        out.push(Item::Turn(Box::new(turn)));
                    }
                }
                other => {
                    return Err(self.err(
                        &ip,
                        format!(
                            "expected a turn (a mapping with user:) or an event (event:), found {}",
                            type_name(other)
                        ),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// A subagent's conversation is read within what is left of `budget` (a copy: the parent
    /// turn charges it, times its own repeat).
    fn turn(&self, p: &[Seg], raw: RawTurn, budget: &Budget) -> Result<Turn> {
        let mut calls = Vec::with_capacity(raw.calls.len());
        for (i, c) in raw.calls.into_iter().enumerate() {
            let ip = child(&child(p, "calls"), i);
            let tool = self.tool_ref(&child(&ip, "tool"), c.tool)?;
            let at = match c.query {
                Some(_) => self.doc.locate(&child(&ip, "query")),
                None => tool.at,
            };
            let loads = match c.loads {
                Some(ids) => Some(self.tool_refs(&child(&ip, "loads"), ids)?),
                None => None,
            };
            let subagent = match c.subagent {
                Some(s) => Some(self.subagent(&child(&ip, "subagent"), s, budget)?),
                None => None,
            };
            calls.push(Call {
                at,
                tool,
                query: c.query,
                result_tokens: c.result_tokens,
                result: c.result,
                call_tokens: c.call_tokens,
                input: c.input.map(Value::Object),
                parallel: c.parallel,
                loads,
                subagent,
            });
        }
        let subagent = match raw.subagent {
            Some(s) => Some(self.subagent(&child(p, "subagent"), s, budget)?),
            None => None,
        };
        let must_not_call = match raw.must_not_call {
            Some(ids) => self.tool_refs(&child(p, "must_not_call"), ids)?,
            None => Vec::new(),
        };
        Ok(Turn {
            user: raw.user,
            at: self.doc.locate(&child(p, "user")),
            tokens: raw.tokens,
            reply_tokens: raw.reply_tokens,
            calls,
            subagent,
            trajectory: Trajectory {
                must_not_call,
                order: raw.order.unwrap_or_default(),
                max_calls: raw.max_calls,
                no_duplicate_calls: raw.no_duplicate_calls,
            },
        })
    }

    fn subagent(&self, p: &[Seg], raw: RawSubagent, budget: &Budget) -> Result<Subagent> {
        let tp = child(p, "tools");
        let tools = match &raw.tools {
            None => None,
            Some(Value::String(s)) if s == "*" => None,
            Some(v) => {
                let refs = self.tool_refs(&tp, self.doc.decode(&tp, v)?)?;
                (!refs.iter().any(|r| r.id == "*")).then_some(refs)
            }
        };
        let cp = child(p, "conversation");
        // A subagent's work is counted into its parent turn's (times the turn's repeat).
        let conversation =
            self.conversation(&cp, &raw.conversation, &mut 0, &mut budget.clone())?;
        let nested = conversation.iter().position(|it| match it {
            Item::Turn(t) => t.subagent.is_some(),
            Item::Event(_) => false,
        });
        if let Some(i) = nested {
            return Err(self.err(&child(&cp, i), "a subagent cannot spawn another subagent"));
        }
        Ok(Subagent {
            tools,
            system_prompt_tokens: raw.system_prompt_tokens,
            result_tokens: raw.result_tokens,
            conversation,
        })
    }

    fn event(&self, p: &[Seg], raw: RawEvent) -> Result<Event> {
        let kind = raw.event;
        let given = [
            ("server", raw.server.is_some()),
            ("summary_tokens", raw.summary_tokens.is_some()),
            ("keep_discovered", raw.keep_discovered.is_some()),
            ("rediscover", raw.rediscover.is_some()),
        ];
        let applies: &[&str] = match kind {
            EventKind::Connect | EventKind::Disconnect => &["server"],
            EventKind::Clear => &[],
            EventKind::Compact => &["summary_tokens", "keep_discovered"],
            EventKind::Resume => &["rediscover"],
        };
        if let Some((k, _)) = given.iter().find(|(k, g)| *g && !applies.contains(k)) {
            return Err(self.err(
                &child(p, *k),
                format!("`{k}` does not apply to a {} event", kind.name()),
            ));
        }
        let needs = |what: &str| self.err(p, format!("a {} event needs `{what}:`", kind.name()));
        Ok(match kind {
            EventKind::Connect | EventKind::Disconnect => {
                let server = raw.server.ok_or_else(|| needs("server"))?;
                let at = self.doc.locate(&child(p, "server"));
                if kind == EventKind::Connect {
                    Event::Connect { server, at }
                } else {
                    Event::Disconnect { server, at }
                }
            }
            EventKind::Clear => Event::Clear,
            EventKind::Compact => Event::Compact {
                summary_tokens: raw.summary_tokens.ok_or_else(|| needs("summary_tokens"))?,
                keep_discovered: raw.keep_discovered,
            },
            EventKind::Resume => Event::Resume {
                rediscover: raw.rediscover,
            },
        })
    }
}
