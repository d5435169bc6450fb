//! A session → a scenario the simulator replays request for request, plus the bill of each
//! request keyed by where the simulator will put it (agent, turn, position in the turn).
//!
//! Mapping (docs/guide/import-sessions.md): a user message opens a turn; each API request that
//! wrote tool calls becomes those calls (`parallel: true` for the second and later calls of the
//! same request, the request's own text counted into the first call's `call_tokens`); the
//! request that wrote no call is the turn's reply. A search-tool call becomes a recorded search
//! (`loads:` the tools its `tool_reference` blocks named). A `Task`/`Agent` call carries the
//! subagent it started. Compaction and `/clear` become events; history copied from an earlier
//! file (a resumed or forked session) becomes a `compact` event of its size followed by
//! `resume` (cold cache), its requests and calls billed and counted in the file that wrote
//! them. An interrupted turn ends where the user stopped it. Sizes only, no text, in the
//! tokens of the main profile's counter (the scenario's `counter:`).

use crate::simulate::Mode;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::group::Session;
use super::tools::resolve;
use super::transcript::{Request, Step, ToolResult, Transcript, Usage};
use super::{SEARCH_TOOL, default_profile, profile_for_model, session_counter};
use crate::catalog::Catalog;
use crate::counter::CounterKind;
use crate::number::plural;
use crate::search::text::{self, Camel};

/// A catalog as the scenario names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogOut {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeferredOut {
    pub defer_mcp: bool,
    pub scorer: &'static str,
    pub max_results: usize,
    /// In a session that searched, the MCP tools it called with no search loading them first:
    /// they were loaded from the start in that session.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub always_load: Vec<String>,
}

/// A scenario file (the keys of `scenarios/schema.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScenarioFile {
    pub name: String,
    pub description: String,
    pub model: String,
    /// The profile's counter (local): what every size here is counted with, and what the
    /// simulator counts the catalogs with.
    pub counter: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt_tokens: Option<usize>,
    pub catalogs: Vec<CatalogOut>,
    pub deferred: DeferredOut,
    pub conversation: Vec<ItemOut>,
}

impl ScenarioFile {
    /// Turns and requests the scenario loader will count for this conversation, checked
    /// against its limits before anything is written: the most turns of one conversation (the
    /// main one or a subagent's, each counted on its own) and the requests of the whole (one
    /// per turn and per call, subagents' included).
    pub fn work(&self) -> (usize, u64) {
        fn walk(items: &[ItemOut], most_turns: &mut usize, work: &mut u64) {
            let mut turns = 0;
            for it in items {
                if let ItemOut::Turn(t) = it {
                    turns += 1;
                    *work += 1 + t.calls.len() as u64;
                    for s in t.calls.iter().filter_map(|c| c.subagent.as_ref()) {
                        walk(&s.conversation, most_turns, work);
                    }
                }
            }
            *most_turns = (*most_turns).max(turns);
        }
        let (mut turns, mut work) = (0, 0);
        walk(&self.conversation, &mut turns, &mut work);
        (turns, work)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ItemOut {
    Turn(TurnOut),
    Event(EventOut),
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnOut {
    pub user: String,
    pub tokens: usize,
    pub reply_tokens: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallOut>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallOut {
    pub tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    pub call_tokens: usize,
    pub result_tokens: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub parallel: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loads: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subagent: Option<SubagentOut>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SubagentOut {
    /// The tools its type is given (Claude Code's built-in types); absent: every tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
    /// Its fixed prefix measured from its first billed request (logs hold no system prompt):
    /// set after a first replay (`experiment::session_import`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt_tokens: Option<usize>,
    pub conversation: Vec<ItemOut>,
    /// Its simulator number, as `BilledRequest::agent` holds it (not written).
    #[serde(skip)]
    pub agent: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventOut {
    pub event: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_tokens: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep_discovered: Option<bool>,
}

impl EventOut {
    fn compact(summary_tokens: usize) -> ItemOut {
        ItemOut::Event(EventOut {
            event: "compact",
            summary_tokens: Some(summary_tokens),
            keep_discovered: Some(true),
        })
    }
}

/// One billed request and where the simulator puts it: `agent`/`turn` as the simulator numbers
/// them, `index` its 0-based position among the `of` requests that turn really sent. `agent`
/// is absent for a request the scenario does not hold (an unlinked subagent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[allow(clippy::struct_excessive_bools)] // independent facts of one logged request, as written
pub struct BilledRequest {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub agent: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub turn: Option<usize>,
    #[serde(default)]
    pub index: usize,
    #[serde(default)]
    pub of: usize,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub model: Option<String>,
    pub usage: Usage,
    /// The turn was stopped by the user: the replay's extra closing reply is not compared.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub interrupted: bool,
    /// A warm-up subagent's request (Claude Code primes its agents' cache): billed, not part
    /// of the conversation, never compared.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub warmup: bool,
    /// The log's turn ends on a request that wrote calls (a compaction cut it, or the log
    /// ends): the replay's closing reply has no bill, the requests before it are compared.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub cut: bool,
    /// Its agent's fixed prefix was measured on this request (billed less modeled): it is
    /// not compared, as it matches by construction.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub anchor: bool,
}

/// Tools named in the session but absent from the catalogs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnknownTools {
    /// Tool name → calls (0: only named by a search result).
    pub calls: BTreeMap<String, usize>,
    /// Calls left out of the scenario, and their tokens (call + result).
    pub left_out_calls: usize,
    pub left_out_tokens: usize,
    /// Tokens of every call + result of the session, the share's denominator.
    pub all_call_tokens: usize,
}

/// The conversion of one session.
#[derive(Debug, Clone)]
pub struct Converted {
    pub scenario: ScenarioFile,
    pub ran_as: Mode,
    pub billed: Vec<BilledRequest>,
    pub tool_calls: usize,
    pub unknown: UnknownTools,
    /// Subagent conversations no `Task` call could be linked to (billed, not modeled).
    pub unlinked_agents: usize,
    /// Warm-up subagents (billed, not part of the conversation).
    pub warmup_agents: usize,
    /// The simulator's number of each linked subagent → the profile it ran on.
    pub agent_profiles: BTreeMap<usize, String>,
    /// Logged model ids and the profile each is priced as.
    pub models: BTreeMap<String, String>,
    /// What the sizes are counted with ([`super::session_counter`] of the main profile).
    pub counter: CounterKind,
    /// The profile's own counter when it needs the network and its estimate stood in.
    pub replaced_counter: Option<CounterKind>,
}

/// What the conversion needs besides the session.
pub struct ConvertInput<'a> {
    pub catalog: &'a Catalog,
    pub catalogs: Vec<CatalogOut>,
    pub name: String,
    pub keep_text: bool,
}

/// The words a model types to find a tool by its listed name (server + name, split).
pub fn name_query(id: &str) -> String {
    let parts: Vec<&str> = match id.strip_prefix("mcp__") {
        Some(rest) => rest.splitn(2, "__").collect(),
        None => vec![id],
    };
    let mut words = Vec::new();
    for p in parts {
        text::words(p, Camel::LowerToUpper, &mut words);
    }
    words.join(" ")
}

/// A turn being collected: its user text, its requests, the results they got.
struct TurnBuild<'t> {
    user_tokens: usize,
    user_text: Option<String>,
    requests: Vec<&'t Request>,
    /// User text that arrived after request i, inside the turn (joins the next request).
    extra: Vec<usize>,
    results: HashMap<&'t str, &'t ToolResult>,
    /// The user stopped this turn: the next request opens a new one.
    interrupted: bool,
}

impl TurnBuild<'_> {
    /// A request continues this turn when the last one wrote calls and either got results or
    /// no new user message came in between.
    fn continues(&self, saw_user: bool) -> bool {
        let last = self.requests.last().expect("a turn has a request");
        !self.interrupted
            && !last.calls.is_empty()
            && (!saw_user
                || last
                    .calls
                    .iter()
                    .any(|c| self.results.contains_key(c.id.as_str())))
    }
}

/// The conversion state of one session.
struct Converter<'a> {
    input: &'a ConvertInput<'a>,
    session: &'a Session,
    agent_by_id: HashMap<&'a str, usize>,
    linked: HashSet<usize>,
    next_agent: usize,
    billed: Vec<BilledRequest>,
    unknown: UnknownTools,
    searched: bool,
    models: BTreeMap<String, String>,
    counter: CounterKind,
    agent_profiles: BTreeMap<usize, String>,
    /// MCP tools called before any search of their agent loaded them.
    direct: BTreeSet<String>,
}

/// Every size of a conversation built from o200k counts, in `counter`'s tokens: each size
/// the scenario records is mapped once, from the o200k count of everything it holds.
fn count_sizes(items: &mut [ItemOut], counter: CounterKind) {
    let k = |n: &mut usize| *n = counter.text_from_count(*n);
    for item in items {
        match item {
            ItemOut::Turn(t) => {
                k(&mut t.tokens);
                k(&mut t.reply_tokens);
                for c in &mut t.calls {
                    k(&mut c.call_tokens);
                    k(&mut c.result_tokens);
                    if let Some(sub) = &mut c.subagent {
                        count_sizes(&mut sub.conversation, counter);
                    }
                }
            }
            ItemOut::Event(e) => {
                if let Some(n) = &mut e.summary_tokens {
                    k(n);
                }
            }
        }
    }
}

/// Every tool a conversation calls (searches and its own subagents' calls apart).
fn called_tools(items: &[ItemOut], out: &mut BTreeSet<String>) {
    for it in items {
        if let ItemOut::Turn(t) = it {
            for c in t.calls.iter().filter(|c| c.tool != SEARCH_TOOL) {
                out.insert(c.tool.clone());
            }
        }
    }
}

/// Converts one session.
pub fn convert(session: &Session, input: &ConvertInput<'_>) -> Converted {
    let mut c = Converter {
        input,
        session,
        agent_by_id: session
            .agents
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.agent_id.as_deref().map(|a| (a, i)))
            .collect(),
        linked: HashSet::new(),
        next_agent: 0,
        billed: Vec::new(),
        unknown: UnknownTools::default(),
        searched: false,
        models: BTreeMap::new(),
        counter: CounterKind::O200kJson,
        agent_profiles: BTreeMap::new(),
        direct: BTreeSet::new(),
    };
    let profile = c.main_profile();
    let (counter, replaced_counter) = session_counter(&profile);
    c.counter = counter;
    let mut conversation = c.agent(&session.main, 0);
    count_sizes(&mut conversation, counter);
    let (mut unlinked, mut warmups) = (0, 0);
    for (i, a) in session.agents.iter().enumerate() {
        if c.linked.contains(&i) {
            continue;
        }
        if a.warmup {
            warmups += 1;
        } else {
            unlinked += 1;
        }
        for r in a.billed() {
            c.billed.push(BilledRequest {
                agent: None,
                turn: None,
                index: 0,
                of: 0,
                model: r.model.clone(),
                usage: r.usage.expect("billed requests have usage"),
                interrupted: false,
                warmup: a.warmup,
                cut: false,
                anchor: false,
            });
        }
    }
    c.note_models();
    let tool_calls = session.transcripts().map(Transcript::tool_calls).sum();
    let ran_as = if c.searched {
        Mode::Deferred
    } else {
        Mode::Eager
    };
    let scenario = c.scenario(profile, conversation, ran_as, tool_calls);
    Converted {
        scenario,
        ran_as,
        billed: c.billed,
        tool_calls,
        unknown: c.unknown,
        unlinked_agents: unlinked,
        warmup_agents: warmups,
        agent_profiles: c.agent_profiles,
        models: c.models,
        counter,
        replaced_counter,
    }
}

impl<'a> Converter<'a> {
    fn note_models(&mut self) {
        for tx in self.session.transcripts() {
            for r in &tx.requests {
                if let Some(m) = &r.model {
                    self.models.entry(m.clone()).or_insert_with(|| {
                        profile_for_model(m)
                            .unwrap_or_else(|| default_profile(self.session.format).to_string())
                    });
                }
            }
        }
    }

    /// The main agent's most used model, mapped to a profile.
    fn main_profile(&self) -> String {
        self.profile_of(&self.session.main)
            .unwrap_or_else(|| default_profile(self.session.format).into())
    }

    /// The profile of an agent's most used model (ties: the name first in order).
    fn profile_of(&self, tx: &Transcript) -> Option<String> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for r in tx.billed() {
            if let Some(m) = &r.model {
                *counts.entry(m).or_insert(0) += 1;
            }
        }
        counts
            .iter()
            .max_by_key(|(m, n)| (**n, std::cmp::Reverse(**m)))
            .map(|(m, _)| {
                profile_for_model(m)
                    .unwrap_or_else(|| default_profile(self.session.format).to_string())
            })
    }

    fn scenario(
        &self,
        model: String,
        conversation: Vec<ItemOut>,
        ran_as: Mode,
        tool_calls: usize,
    ) -> ScenarioFile {
        let requests = self.billed.len();
        ScenarioFile {
            name: self.input.name.clone(),
            description: format!(
                "Imported by `toolbudget session import` from a {} session ({}, {}; ran {}).",
                self.session.format.name(),
                plural(requests, "billed request", "billed requests"),
                plural(tool_calls, "tool call", "tool calls"),
                match ran_as {
                    Mode::Eager => "eager",
                    Mode::Deferred => "deferred, with tool search",
                }
            ),
            model,
            counter: self.counter.name(),
            system_prompt_tokens: self
                .session
                .system_tokens
                .map(|n| self.counter.text_from_count(n)),
            catalogs: self.input.catalogs.clone(),
            deferred: DeferredOut {
                defer_mcp: true,
                scorer: "keyword",
                max_results: 5,
                always_load: if ran_as == Mode::Deferred {
                    self.direct.iter().cloned().collect()
                } else {
                    Vec::new()
                },
            },
            conversation,
        }
    }

    /// The tools a subagent of Claude Code's built-in `kind` is given, as its documentation
    /// says (code.claude.com/docs/en/sub-agents): no subagent spawns another; `Explore` and
    /// `Plan` are read-only (no file edits, no plan mode). Another kind (a user's own agent,
    /// whose definition the log does not hold) or none: every tool.
    fn subagent_tools(&self, kind: Option<&str>) -> Option<Vec<String>> {
        const SPAWN: &[&str] = &["Task", "Agent"];
        const WRITE: &[&str] = &[
            "Edit",
            "MultiEdit",
            "Write",
            "NotebookEdit",
            "ExitPlanMode",
            "EnterPlanMode",
        ];
        let denied: Vec<&str> = match kind? {
            "Explore" | "Plan" => SPAWN.iter().chain(WRITE).copied().collect(),
            "general-purpose" => SPAWN.to_vec(),
            _ => return None,
        };
        let catalog = self.input.catalog;
        Some(
            catalog
                .tools()
                .iter()
                .filter(|t| !denied.contains(&t.name.as_str()) || t.server.is_some())
                .map(|t| t.id.clone())
                .collect(),
        )
    }

    /// One agent's conversation as scenario items; `agent` is its simulator number.
    fn agent(&mut self, tx: &'a Transcript, agent: usize) -> Vec<ItemOut> {
        let mut items = Vec::new();
        let mut turn: Option<TurnBuild<'a>> = None;
        let mut turns = 0;
        let mut pending = 0;
        let mut pending_text: Option<String> = None;
        let mut saw_user = false;
        let mut queries: HashMap<String, String> = HashMap::new();
        let mut copied = 0;
        for step in &tx.steps {
            if let Step::Copied { tokens } = step {
                copied += tokens;
                continue;
            }
            if copied > 0 {
                // The history an earlier file wrote, as context: a summary of its size (added
                // to a compaction just before it), then a resume on a cold cache.
                match items.last_mut() {
                    Some(ItemOut::Event(EventOut {
                        event: "compact",
                        summary_tokens: Some(n),
                        ..
                    })) => *n += copied,
                    _ => items.push(EventOut::compact(copied)),
                }
                items.push(ItemOut::Event(EventOut {
                    event: "resume",
                    summary_tokens: None,
                    keep_discovered: None,
                }));
                copied = 0;
            }
            match step {
                Step::Copied { .. } => {}
                Step::Interrupt => {
                    if let Some(t) = turn.as_mut() {
                        t.interrupted = true;
                    }
                }
                Step::User { tokens, text } => {
                    pending += tokens;
                    saw_user = true;
                    if let (true, Some(t)) = (self.input.keep_text, text) {
                        pending_text.get_or_insert_with(String::new).push_str(t);
                    }
                }
                Step::Results(rs) => match turn.as_mut() {
                    Some(t) => {
                        for r in rs {
                            t.results.insert(r.call_id.as_str(), r);
                        }
                    }
                    None => pending += rs.iter().map(|r| r.tokens).sum::<usize>(),
                },
                Step::Request(i) => {
                    let req = &tx.requests[*i];
                    match turn.as_mut() {
                        Some(t) if t.continues(saw_user) => {
                            *t.extra.last_mut().expect("one per request") += pending;
                        }
                        _ => {
                            self.close(&mut turn, &mut items, agent, &mut turns, &mut queries);
                            turn = Some(TurnBuild {
                                user_tokens: pending,
                                user_text: pending_text.take(),
                                requests: Vec::new(),
                                extra: Vec::new(),
                                results: HashMap::new(),
                                interrupted: false,
                            });
                        }
                    }
                    let t = turn.as_mut().expect("opened above");
                    t.requests.push(req);
                    t.extra.push(0);
                    pending = 0;
                    saw_user = false;
                }
                Step::Compact { summary_tokens } => {
                    self.close(&mut turn, &mut items, agent, &mut turns, &mut queries);
                    items.push(EventOut::compact(*summary_tokens));
                }
                Step::Clear => {
                    self.close(&mut turn, &mut items, agent, &mut turns, &mut queries);
                    queries.clear();
                    items.push(ItemOut::Event(EventOut {
                        event: "clear",
                        summary_tokens: None,
                        keep_discovered: None,
                    }));
                }
            }
        }
        self.close(&mut turn, &mut items, agent, &mut turns, &mut queries);
        items
    }

    fn close(
        &mut self,
        turn: &mut Option<TurnBuild<'a>>,
        items: &mut Vec<ItemOut>,
        agent: usize,
        turns: &mut usize,
        queries: &mut HashMap<String, String>,
    ) {
        let Some(t) = turn.take() else { return };
        *turns += 1;
        let of = t.requests.len();
        let cut = t.requests.last().is_some_and(|r| !r.calls.is_empty());
        for (index, r) in t.requests.iter().enumerate() {
            if let Some(u) = r.usage {
                self.billed.push(BilledRequest {
                    agent: Some(agent),
                    turn: Some(*turns),
                    index,
                    of,
                    model: r.model.clone(),
                    usage: u,
                    interrupted: t.interrupted,
                    warmup: false,
                    cut,
                    anchor: false,
                });
            }
        }
        let out = self.turn(&t, queries);
        items.push(ItemOut::Turn(out));
    }

    fn turn(&mut self, t: &TurnBuild<'a>, queries: &mut HashMap<String, String>) -> TurnOut {
        let mut calls = Vec::new();
        let mut reply_tokens = 0;
        let n = t.requests.len();
        for (ri, req) in t.requests.iter().enumerate() {
            if req.calls.is_empty() {
                if ri + 1 == n {
                    reply_tokens = req.text_tokens;
                }
                continue;
            }
            let first = calls.len();
            for call in &req.calls {
                let result = t.results.get(call.id.as_str()).copied();
                if let Some(out) = self.call(call, result, calls.len() > first, queries) {
                    calls.push(out);
                }
            }
            if calls.len() > first {
                calls[first].call_tokens += req.text_tokens;
                calls.last_mut().expect("non-empty").result_tokens += t.extra[ri];
            }
        }
        TurnOut {
            user: t.user_text.clone().unwrap_or_default(),
            tokens: t.user_tokens,
            reply_tokens,
            calls,
        }
    }

    /// One logged call as a scenario call; `None` for a tool the catalogs lack.
    fn call(
        &mut self,
        call: &'a super::transcript::Call,
        result: Option<&'a ToolResult>,
        parallel: bool,
        queries: &mut HashMap<String, String>,
    ) -> Option<CallOut> {
        let result_tokens = result.map_or(0, |r| r.tokens);
        let tokens = self.counter.text_from_count(call.tokens + result_tokens);
        self.unknown.all_call_tokens += tokens;
        if call.name == SEARCH_TOOL {
            self.searched = true;
            let mut loads = Vec::new();
            for r in result.map_or(&[][..], |r| &r.references[..]) {
                match resolve(self.input.catalog, r, None) {
                    Some(id) => {
                        // A search without a query (never in practice) replays by the name.
                        let q = call.query.clone().unwrap_or_else(|| name_query(&id));
                        queries.insert(id.clone(), q);
                        loads.push(id);
                    }
                    None => {
                        self.unknown.calls.entry(r.clone()).or_insert(0);
                    }
                }
            }
            return Some(CallOut {
                tool: SEARCH_TOOL.to_string(),
                query: call.query.clone(),
                call_tokens: call.tokens,
                result_tokens,
                parallel,
                loads: Some(loads),
                subagent: None,
            });
        }
        let Some(id) = resolve(self.input.catalog, &call.name, call.alt_name.as_deref()) else {
            *self.unknown.calls.entry(call.name.clone()).or_insert(0) += 1;
            self.unknown.left_out_calls += 1;
            self.unknown.left_out_tokens += tokens;
            return None;
        };
        if !queries.contains_key(&id)
            && self
                .input
                .catalog
                .index_of(&id)
                .is_some_and(|i| self.input.catalog.get(i).is_mcp())
        {
            self.direct.insert(id.clone());
        }
        let subagent = self.subagent(&id, result, call.subagent_type.as_deref());
        Some(CallOut {
            query: Some(queries.get(&id).cloned().unwrap_or_else(|| name_query(&id))),
            tool: id,
            call_tokens: call.tokens,
            result_tokens,
            parallel,
            loads: None,
            subagent,
        })
    }

    /// The subagent a `Task`/`Agent` call started: named by its result, else (older logs
    /// without ids) the next inline sidechain not yet linked.
    fn subagent(
        &mut self,
        name: &str,
        result: Option<&'a ToolResult>,
        kind: Option<&str>,
    ) -> Option<SubagentOut> {
        if name != "Task" && name != "Agent" {
            return None;
        }
        let idx = match result.and_then(|r| r.agent.as_deref()) {
            Some(a) => self.agent_by_id.get(a).copied(),
            None => self.session.agents.iter().enumerate().position(|(i, t)| {
                !self.linked.contains(&i)
                    && t.agent_id
                        .as_deref()
                        .is_some_and(|a| a.starts_with("sidechain-"))
            }),
        }?;
        if !self.linked.insert(idx) {
            return None;
        }
        self.next_agent += 1;
        let number = self.next_agent;
        if let Some(p) = self.profile_of(&self.session.agents[idx]) {
            self.agent_profiles.insert(number, p);
        }
        let conversation = self.agent(&self.session.agents[idx], number);
        // What the log shows it called is in its set whatever its type says.
        let tools = self.subagent_tools(kind).map(|mut tools| {
            let mut called = BTreeSet::new();
            called_tools(&conversation, &mut called);
            tools.extend(
                called
                    .into_iter()
                    .filter(|c| !tools.contains(c))
                    .collect::<Vec<_>>(),
            );
            tools
        });
        Some(SubagentOut {
            tools,
            system_prompt_tokens: None,
            conversation,
            agent: number,
        })
    }
}
