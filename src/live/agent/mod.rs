//! The agent loop: plays a scenario's user turns against a model, eager (every tool) or
//! deferred (the always-loaded tools plus a search tool), answering every call so a turn runs
//! to its end, at most `max_steps` requests a turn.
//!
//! - Client-side search: the model calls the search tool (the catalog's `ToolSearch`, else
//!   toolbudget's); toolbudget ranks the deferred tools with the scenario's scorer, loads the
//!   hits (and their `depends_on`) into the tools of the next request, and answers with their
//!   names and descriptions. The deferred list (the scenario's `listing`) ends the system
//!   prompt, as the simulator counts it.
//! - Provider-side search: every deferred tool is sent with `defer_loading: true` beside the
//!   provider's search tool; what the provider loaded is read from its answer.
//! - A call of a catalog tool is checked against its schema (`arguments`), then answered with
//!   the scenario's `result:` text for an expected call, a result of its `result_tokens` size
//!   without one, and a short `Done.` for a tool the turn did not expect. A call of a deferred
//!   tool not loaded yet, of an unknown name, or with malformed arguments gets an error result.
//!
//! Events: `clear` and `compact` empty the history (`compact` keeps loaded tools when it says
//! so, `clear` drops them), `connect`/`disconnect` change the servers whose tools are sent.
//! Subagents are not played (a note says how many), nor turns given only as a token count.

use std::collections::HashMap;

use serde_json::Value;

use super::arguments;
use super::cassette::canonical;
use super::conversation::{FunctionDef, Message, ProviderSearch, Request, ToolCall};
use super::endpoint::{Endpoint, LiveError};
use super::provider::SearchSide;
use super::result::{Broken, Outcome, RequestRow, SearchRow, TurnRow};
use crate::adoption::{Adoption, Tracker};
use crate::catalog::Tool;
use crate::counter::api::api_tool_name;
use crate::counter::{CounterKind, ToolChoice};
use crate::search::{SearchError, SearchRequest};
use crate::simulate::cost::{CacheBreak, CacheState, PrefixKey, cached_prefix};
use crate::simulate::scenario::{CallOrder, Event, Item, Listing, Reveal, Trajectory, Turn, When};
use crate::simulate::{Mode, Prepared, SEARCH_TOOL, Scenario, listing};

mod calls;

/// The system prompt when the scenario gives none: local chat templates (llama.cpp's
/// `chatml-function-calling`) show the tools only inside a system message.
pub const DEFAULT_SYSTEM: &str =
    "You are a helpful assistant. Use the available tools to do what the user asks.";
/// The result of a call the turn did not expect.
pub const UNEXPECTED_RESULT: &str = "Done.";
/// The most results one client-side search returns, whatever the model asks.
pub const MAX_SEARCH_RESULTS: usize = 20;

/// How the live loop runs (from the command line).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub model: String,
    pub search: SearchSide,
    /// Requests per turn at most.
    pub max_steps: usize,
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    /// Run r sends `seed + r` where the API takes a seed.
    pub seed: u64,
    pub repeat: u32,
    /// Overrides the scenario's `tool_choice`.
    pub tool_choice: Option<ToolChoice>,
}

/// What a name the model calls stands for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Target {
    Tool(usize),
    Search,
}

/// Provider-acceptable names for every tool (`api_tool_name`, made unique with `_2`, `_3`…).
struct Names {
    of_tool: Vec<String>,
    by_name: HashMap<String, Target>,
}

impl Names {
    fn new(prep: &Prepared, search_name: &str) -> Names {
        let mut by_name = HashMap::new();
        by_name.insert(search_name.to_string(), Target::Search);
        let mut of_tool = Vec::with_capacity(prep.catalog().len());
        for (i, t) in prep.catalog().tools().iter().enumerate() {
            if Some(i) == prep.plan.search_tool {
                of_tool.push(search_name.to_string());
                continue;
            }
            let base = api_tool_name(&t.id);
            let mut name = base.clone();
            let mut n = 2;
            while by_name.contains_key(&name) {
                name = format!("{}_{n}", &base[..base.len().min(60)]);
                n += 1;
            }
            by_name.insert(name.clone(), Target::Tool(i));
            of_tool.push(name);
        }
        Names { of_tool, by_name }
    }
}

/// Rows of one mode and run.
pub(crate) struct Played {
    pub turns: Vec<TurnRow>,
    pub requests: Vec<RequestRow>,
    pub searches: Vec<SearchRow>,
    pub notes: Vec<String>,
}

struct Agent<'a> {
    sc: &'a Scenario,
    prep: &'a Prepared,
    st: &'a Settings,
    ep: &'a mut Endpoint,
    mode: Mode,
    run: u32,
    counter: CounterKind,
    names: Names,
    search_def: Tool,
    search_tokens: usize,
    deferring: bool,
    provider_search: Option<ProviderSearch>,
    connected: Vec<bool>,
    loaded: Vec<bool>,
    system: String,
    /// The deferred list's share of `system`, counted.
    list_tokens: usize,
    messages: Vec<Message>,
    /// Each message's count under `counter`, beside it.
    message_tokens: Vec<usize>,
    turn_no: usize,
    /// The current turn's calls other than searches, in order: the catalog tool (None for an
    /// unknown name) and the arguments with sorted keys.
    turn_calls: Vec<(Option<usize>, String)>,
    out: Played,
    skipped_turns: usize,
    subagents: usize,
    /// The simulator's cache model over this run's requests: what the previous request left,
    /// and the history's epoch (bumped by `clear` and `compact`).
    cache: Option<CacheState>,
    epoch: u64,
    /// Adoption of the search tool over this conversation ([`crate::adoption`]): what its
    /// searches returned, and the current turn's counts.
    adoption: Tracker,
}

/// The search tool the deferred mode sends: the catalog's own, else toolbudget's.
pub fn search_tool(prep: &Prepared) -> Tool {
    match prep.plan.search_tool {
        Some(i) => prep.catalog().get(i).clone(),
        None => crate::simulate::default_search_tool(),
    }
}

/// Whether the deferred mode defers at all: `always` when anything is deferrable, `auto:N`
/// when the deferrable tools exceed N% of the context window.
pub fn decides_to_defer(sc: &Scenario, prep: &Prepared) -> bool {
    let n = prep.catalog().len();
    let deferrable =
        (0..n).filter(|&i| prep.plan.deferrable[i] && Some(i) != prep.plan.search_tool);
    match sc.deferred.when {
        When::Always => deferrable.count() > 0,
        When::Never => false,
        When::Over(limit) => {
            let tools = (0..n).filter(|&i| Some(i) != prep.plan.search_tool).count();
            tools > limit && deferrable.count() > 0
        }
        When::Auto(pct) => {
            let tokens: usize = deferrable.map(|i| prep.tokens().get(i)).sum();
            tokens as f64 > pct / 100.0 * sc.profile.context_window as f64
        }
    }
}

/// A result of about `n` tokens (o200k: one token a word).
pub fn filler(id: &str, n: usize) -> String {
    let mut s = format!("Result of {id}:");
    for _ in 0..n.saturating_sub(5) {
        s.push_str(" data");
    }
    s
}

pub(crate) fn play(
    sc: &Scenario,
    prep: &Prepared,
    st: &Settings,
    ep: &mut Endpoint,
    mode: Mode,
    run: u32,
) -> Result<Played, LiveError> {
    let counter = prep.counter();
    let search_def = search_tool(prep);
    let names = Names::new(prep, &api_tool_name(&search_def.id));
    let deferring = mode == Mode::Deferred && decides_to_defer(sc, prep);
    let provider_search = (deferring && st.search == SearchSide::Provider)
        .then(|| ep.provider.provider_search(&sc.deferred.scorer))
        .flatten();
    let mut a = Agent {
        sc,
        prep,
        st,
        mode,
        run,
        counter,
        names,
        search_tokens: counter.tool(&search_def),
        search_def,
        deferring,
        provider_search,
        connected: prep.plan.initially_connected.clone(),
        loaded: vec![false; prep.catalog().len()],
        system: String::new(),
        list_tokens: 0,
        messages: Vec::new(),
        message_tokens: Vec::new(),
        turn_no: 0,
        turn_calls: Vec::new(),
        out: Played {
            turns: Vec::new(),
            requests: Vec::new(),
            searches: Vec::new(),
            notes: Vec::new(),
        },
        skipped_turns: 0,
        subagents: 0,
        cache: None,
        epoch: 0,
        adoption: Tracker::default(),
        ep,
    };
    a.set_system();
    for item in &sc.conversation {
        match item {
            Item::Turn(t) => a.turn(t)?,
            Item::Event(e) => a.event(e),
        }
    }
    if a.subagents > 0 {
        a.out.notes.push(format!(
            "{} subagent conversation{} not played (live plays the main agent)",
            a.subagents,
            if a.subagents == 1 { "" } else { "s" }
        ));
    }
    if a.skipped_turns > 0 {
        a.out.notes.push(format!(
            "{} turn{} given only as a token count not played",
            a.skipped_turns,
            if a.skipped_turns == 1 { "" } else { "s" }
        ));
    }
    Ok(a.out)
}

impl Agent<'_> {
    fn available(&self, i: usize) -> bool {
        let plan = &self.prep.plan;
        Some(i) != plan.search_tool && plan.server_of[i].is_none_or(|s| self.connected[s])
    }

    fn is_deferred(&self, i: usize) -> bool {
        self.deferring && self.prep.plan.deferrable[i]
    }

    /// Whether a client-side search puts the definitions it loads into its answer, in the
    /// history (`reveal: append`, or a call bridge), instead of the next request's tools list.
    fn appends(&self) -> bool {
        self.sc.deferred.call_bridge || self.sc.deferred.reveal == Reveal::Append
    }

    /// The system prompt, and how many of its tokens the deferred list is.
    fn set_system(&mut self) {
        let (base, full) = self.system_prompt();
        self.list_tokens = self
            .counter
            .system(Some(&full))
            .saturating_sub(self.counter.system(Some(&base)));
        self.system = full;
    }

    /// The system prompt without and with the deferred list.
    fn system_prompt(&self) -> (String, String) {
        let mut s = self
            .sc
            .system_prompt
            .clone()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_SYSTEM.to_string());
        let listing = self.sc.deferred.listing;
        if self.deferring && self.provider_search.is_none() && listing != Listing::None {
            let listed: Vec<usize> = (0..self.prep.catalog().len())
                .filter(|&i| self.available(i) && self.is_deferred(i))
                .collect();
            let text = listing::full_text(self.prep.catalog(), &listed, listing);
            if !text.is_empty() {
                let base = s.clone();
                s.push_str("\n\n");
                s.push_str(&text);
                return (base, s);
            }
        }
        (s.clone(), s)
    }

    fn def(&self, i: usize, defer_loading: bool) -> FunctionDef {
        let t = self.prep.catalog().get(i);
        FunctionDef {
            name: self.names.of_tool[i].clone(),
            description: t.description.clone(),
            parameters: t.input_schema.clone(),
            defer_loading,
        }
    }

    /// The functions of the next request, the catalog tools among them sent in full, and
    /// toolbudget's count of the tools part.
    fn tools_now(&self) -> (Vec<FunctionDef>, usize, usize) {
        let mut defs = Vec::new();
        let mut full = 0;
        let mut tokens = 0;
        for i in 0..self.prep.catalog().len() {
            if !self.available(i) {
                continue;
            }
            let deferred = self.is_deferred(i);
            if self.provider_search.is_some() && deferred {
                defs.push(self.def(i, true));
                if self.loaded[i] {
                    tokens += self.prep.tokens().get(i);
                }
                continue;
            }
            if deferred && (!self.loaded[i] || self.appends()) {
                continue;
            }
            defs.push(self.def(i, false));
            full += 1;
            tokens += self.prep.tokens().get(i);
        }
        if self.deferring {
            tokens += if self.provider_search.is_some() {
                self.prep.search_tool_tokens()
            } else {
                defs.push(FunctionDef {
                    name: api_tool_name(&self.search_def.id),
                    description: self.search_def.description.clone(),
                    parameters: self.search_def.input_schema.clone(),
                    defer_loading: false,
                });
                full += 1;
                self.search_tokens
            };
        }
        (defs, full, tokens)
    }

    fn push(&mut self, m: Message) {
        let n = match &m {
            Message::User(t) => self.counter.message(t),
            Message::Assistant { text, calls, .. } => {
                let mut s = text.clone();
                for c in calls {
                    s.push_str(&format!(
                        "{{\"name\":{:?},\"arguments\":{}}}",
                        c.name, c.arguments
                    ));
                }
                self.counter.message(&s)
            }
            Message::ToolResult { content, .. } => self.counter.message(content),
        };
        self.messages.push(m);
        self.message_tokens.push(n);
    }

    fn load(&mut self, i: usize) {
        self.loaded[i] = true;
        for &d in &self.prep.plan.deps[i] {
            self.loaded[d] = true;
        }
    }

    /// Every loaded tool dropped: for adoption, what earlier searches returned is forgotten
    /// too (a call after it comes first again, as after `/clear` in a session log).
    fn unload(&mut self) {
        self.loaded.fill(false);
        self.adoption.clear();
    }

    fn event(&mut self, e: &Event) {
        match e {
            Event::Clear => {
                self.epoch += 1;
                self.messages.clear();
                self.message_tokens.clear();
                self.unload();
            }
            Event::Compact {
                keep_discovered, ..
            } => {
                self.epoch += 1;
                self.messages.clear();
                self.message_tokens.clear();
                if !keep_discovered.unwrap_or(self.sc.deferred.compact_keeps_loaded) {
                    self.unload();
                }
            }
            Event::Connect { server, .. } | Event::Disconnect { server, .. } => {
                if let Some(s) = self.prep.plan.servers.iter().position(|x| x == server) {
                    self.connected[s] = matches!(e, Event::Connect { .. });
                    self.set_system();
                }
            }
            Event::Resume { rediscover } => {
                if !rediscover.unwrap_or(self.sc.deferred.resume_rediscovers) {
                    self.unload();
                }
            }
        }
    }

    fn turn(&mut self, t: &Turn) -> Result<(), LiveError> {
        self.subagents += usize::from(t.subagent.is_some())
            + t.calls.iter().filter(|c| c.subagent.is_some()).count();
        if t.user.trim().is_empty() {
            self.skipped_turns += 1;
            return Ok(());
        }
        self.turn_no += 1;
        let mut expected: Vec<usize> = Vec::new();
        for c in t.calls.iter().filter(|c| c.tool.id != SEARCH_TOOL) {
            let i = self.prep.index(&c.tool.id);
            if !expected.contains(&i) {
                expected.push(i);
            }
        }
        self.push(Message::User(t.user.clone()));
        self.turn_calls.clear();
        self.adoption.counts = Adoption::default();
        let mut row = TurnRow {
            scenario: self.sc.name.clone(),
            mode: self.mode.name().to_string(),
            run: self.run,
            turn: self.turn_no,
            expected: expected
                .iter()
                .map(|&i| self.prep.catalog().get(i).id.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            hit_step_limit: true,
            ..TurnRow::default()
        };
        let mut called: Vec<usize> = Vec::new();
        let mut malformed: Vec<usize> = Vec::new();
        let mut other_calls = 0usize;
        for step in 1..=self.st.max_steps {
            let (calls, paused) = self.step(step, &expected, &mut row)?;
            if calls.is_empty() {
                if paused {
                    continue;
                }
                row.hit_step_limit = false;
                break;
            }
            for c in &calls {
                let (content, is_error) = self.answer(
                    c,
                    t,
                    &expected,
                    &mut row,
                    &mut called,
                    &mut malformed,
                    &mut other_calls,
                )?;
                self.push(Message::ToolResult {
                    call_id: c.id.clone(),
                    name: c.name.clone(),
                    content,
                    is_error,
                });
            }
        }
        self.finish_turn(t, &expected, row, &called, &malformed, other_calls);
        Ok(())
    }

    /// One request of a turn: sent (or replayed), its provider searches loaded, its row and
    /// its answer recorded; returns the calls to answer and whether the provider paused.
    fn step(
        &mut self,
        step: usize,
        expected: &[usize],
        row: &mut TurnRow,
    ) -> Result<(Vec<ToolCall>, bool), LiveError> {
        let (defs, full, tools_tokens) = self.tools_now();
        let choice = self.st.tool_choice.unwrap_or(self.sc.tool_choice);
        let provider = self.ep.provider;
        let request = Request {
            model: &self.st.model,
            system: &self.system,
            messages: &self.messages,
            tools: &defs,
            provider_search: self.provider_search,
            tool_choice: choice,
            max_tokens: self.st.max_tokens,
            temperature: self.st.temperature,
            seed: provider
                .takes_seed()
                .then(|| self.st.seed.wrapping_add(u64::from(self.run))),
        };
        let body = provider.body(&request);
        let system_tokens = self.counter.system(Some(&self.system));
        let (overhead, tools_tokens) = if defs.is_empty() {
            (0, 0)
        } else {
            (
                self.sc.profile.preamble(self.counter, choice)
                    + self.counter.tools_fixed(Some(&self.system)),
                tools_tokens,
            )
        };
        let counted =
            system_tokens + overhead + tools_tokens + self.message_tokens.iter().sum::<usize>();
        let (modeled_cached, modeled_break) =
            self.model_cache(&defs, [system_tokens, overhead, tools_tokens], counted);
        let x = self
            .ep
            .exchange(self.run, &body, self.provider_search.is_some())?;
        let reply = provider
            .parse(&x.response)
            .map_err(|message| LiveError::Unreadable { provider, message })?;
        row.steps = step;
        for s in &reply.provider_searches {
            let mut returned = Vec::new();
            for name in &s.loaded {
                if let Some(&Target::Tool(i)) = self.names.by_name.get(name) {
                    self.load(i);
                    row.search_found_expected |= expected.contains(&i);
                    returned.push(i);
                }
            }
            self.record_search(&s.query, &returned);
        }
        self.out.requests.push(RequestRow {
            scenario: self.sc.name.clone(),
            mode: self.mode.name().to_string(),
            run: self.run,
            turn: self.turn_no,
            step,
            tools_sent: full,
            billed_input_tokens: reply.usage.input_tokens,
            counted_input_tokens: counted as u64,
            deferred_list_tokens: self.list_tokens as u64,
            deferred_list_cost_usd: self.list_tokens as f64 * self.sc.profile.input_per_mtok / 1e6,
            billed_output_tokens: reply.usage.output_tokens,
            cached_tokens: reply.usage.cached_tokens,
            prompt_evaluated_tokens: reply.timings.and_then(|t| t.prompt_n),
            prompt_ms: reply.timings.and_then(|t| t.prompt_ms),
            generated_tokens: reply.timings.and_then(|t| t.predicted_n),
            generation_ms: reply.timings.and_then(|t| t.predicted_ms),
            modeled_cached_tokens: modeled_cached as u64,
            modeled_cache_break: modeled_break
                .map(|b| b.name().to_string())
                .unwrap_or_default(),
            latency_ms: x.latency_ms,
            calls: reply
                .calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(" "),
            provider_searches: reply.provider_searches.len(),
            stop: reply.stop.clone().unwrap_or_default(),
        });
        let paused = reply.stop.as_deref() == Some("pause_turn");
        let calls = reply.calls.clone();
        self.push(Message::Assistant {
            text: reply.text,
            calls: reply.calls,
            native: reply.native,
        });
        Ok((calls, paused))
    }

    /// The simulator's prefix-cache model (`cached_prefix`) of the next request, whose parts
    /// go in the order a Chat Completions template renders them: the system prompt (the
    /// deferred list ends it), the tools, the history. Returns the prefix it expects cached
    /// and, when less than the whole previous request, the part that changed.
    fn model_cache(
        &mut self,
        defs: &[FunctionDef],
        [system, tool_overhead, tools]: [usize; 3],
        counted: usize,
    ) -> (usize, Option<CacheBreak>) {
        let key = PrefixKey {
            system,
            tool_overhead,
            tools_sig: signature(defs.iter().map(|d| d.name.as_str())),
            tools,
            list_sig: 0,
            list: 0,
            history_epoch: self.epoch,
        };
        let prev = self.cache.replace(CacheState {
            key,
            input: counted,
        });
        let cached = cached_prefix(prev.as_ref(), &key).min(counted);
        let broke = prev.filter(|p| cached < p.input).map(|p| {
            if p.key.system != key.system {
                CacheBreak::System
            } else if (p.key.tool_overhead, p.key.tools_sig, p.key.tools)
                != (key.tool_overhead, key.tools_sig, key.tools)
            {
                CacheBreak::Tools
            } else {
                CacheBreak::History
            }
        });
        (cached, broke)
    }

    /// The turn's row completed (what was called, broken trajectory assertions, the outcome)
    /// and kept.
    fn finish_turn(
        &mut self,
        t: &Turn,
        expected: &[usize],
        mut row: TurnRow,
        called: &[usize],
        malformed: &[usize],
        other_calls: usize,
    ) {
        row.set_adoption(&self.adoption.counts);
        row.called = called
            .iter()
            .map(|&i| self.prep.catalog().get(i).id.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let broken = self.broken(&t.trajectory, expected);
        row.trajectory = broken
            .iter()
            .map(|b| b.name())
            .collect::<Vec<_>>()
            .join(" ");
        row.outcome = if row.hit_step_limit {
            Outcome::StepLimit
        } else {
            match outcome(expected, called, malformed, other_calls, row.searches) {
                Outcome::Correct if !broken.is_empty() => Outcome::Trajectory,
                o => o,
            }
        };
        self.out.turns.push(row);
    }
}

/// A signature of a tools list: its names in order (FNV-1a; equal lists, equal signatures).
fn signature<'a>(names: impl Iterator<Item = &'a str>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for n in names {
        for b in n.bytes().chain([0]) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The assertions of `a` that `calls` (tool, canonical arguments; searches left out) break.
pub fn trajectory(
    a: &Trajectory,
    forbidden: &[usize],
    expected: &[usize],
    calls: &[(Option<usize>, String)],
) -> Vec<Broken> {
    let mut broken = Vec::new();
    if calls
        .iter()
        .any(|(t, _)| t.is_some_and(|i| forbidden.contains(&i)))
    {
        broken.push(Broken::ForbiddenCall);
    }
    if a.order == CallOrder::Strict {
        let mut first: Vec<usize> = Vec::new();
        for i in calls.iter().filter_map(|(t, _)| *t) {
            if expected.contains(&i) && !first.contains(&i) {
                first.push(i);
            }
        }
        let in_order: Vec<usize> = expected
            .iter()
            .copied()
            .filter(|i| first.contains(i))
            .collect();
        if first != in_order {
            broken.push(Broken::OutOfOrder);
        }
    }
    if a.max_calls.is_some_and(|m| calls.len() > m) {
        broken.push(Broken::OverMaxCalls);
    }
    if a.no_duplicate_calls
        && calls
            .iter()
            .enumerate()
            .any(|(j, c)| calls[..j].contains(c))
    {
        broken.push(Broken::DuplicateCall);
    }
    broken
}

/// A turn's outcome from what was called (see [`Outcome`]); `searches` counts the search
/// calls, which a turn that expects no tool must not make either.
pub fn outcome(
    expected: &[usize],
    called: &[usize],
    malformed: &[usize],
    other: usize,
    searches: usize,
) -> Outcome {
    if expected.is_empty() {
        return if called.is_empty() && malformed.is_empty() && other == 0 && searches == 0 {
            Outcome::Correct
        } else {
            Outcome::WrongTool
        };
    }
    if expected.iter().all(|i| called.contains(i)) {
        return Outcome::Correct;
    }
    if expected
        .iter()
        .all(|i| called.contains(i) || malformed.contains(i))
    {
        return Outcome::Malformed;
    }
    if called.is_empty() && malformed.is_empty() && other == 0 {
        Outcome::NoTool
    } else {
        Outcome::WrongTool
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outcomes_follow_the_labels() {
        assert_eq!(outcome(&[1], &[1], &[], 0, 0), Outcome::Correct);
        assert_eq!(outcome(&[1], &[2, 1], &[], 1, 2), Outcome::Correct);
        assert_eq!(outcome(&[1, 2], &[1], &[], 0, 0), Outcome::WrongTool);
        assert_eq!(outcome(&[1], &[], &[1], 1, 0), Outcome::Malformed);
        assert_eq!(outcome(&[1], &[], &[], 0, 0), Outcome::NoTool);
        assert_eq!(outcome(&[1], &[], &[], 0, 3), Outcome::NoTool);
        assert_eq!(outcome(&[1], &[], &[], 1, 0), Outcome::WrongTool);
        assert_eq!(outcome(&[], &[], &[], 0, 0), Outcome::Correct);
        assert_eq!(outcome(&[], &[3], &[], 1, 0), Outcome::WrongTool);
        // A turn that expects no tool and searched is not right: the search is a call.
        assert_eq!(outcome(&[], &[], &[], 0, 1), Outcome::WrongTool);
    }

    #[test]
    fn each_broken_assertion_is_named() {
        let args = |s: &str| s.to_string();
        let calls = vec![
            (Some(2), args("{}")),
            (Some(1), args(r#"{"a":1}"#)),
            (None, args("{}")),
            (Some(1), args(r#"{"a":1}"#)),
        ];
        let none = Trajectory::default();
        assert!(trajectory(&none, &[], &[1, 2], &calls).is_empty());
        let strict = Trajectory {
            order: CallOrder::Strict,
            ..Trajectory::default()
        };
        assert_eq!(
            trajectory(&strict, &[], &[1, 2], &calls),
            [Broken::OutOfOrder]
        );
        assert!(trajectory(&strict, &[], &[2, 1], &calls).is_empty());
        let all = Trajectory {
            must_not_call: vec![],
            order: CallOrder::Any,
            max_calls: Some(3),
            no_duplicate_calls: true,
        };
        assert_eq!(
            trajectory(&all, &[2], &[1], &calls),
            [
                Broken::ForbiddenCall,
                Broken::OverMaxCalls,
                Broken::DuplicateCall
            ]
        );
        assert!(trajectory(&all, &[5], &[1], &calls[..3]).is_empty());
    }

    #[test]
    fn fillers_have_about_the_declared_size() {
        let f = filler("mcp__x__y", 50);
        let n = crate::tokenize::Tokenizer::O200kBase.count(&f);
        assert!((45..=58).contains(&n), "{n}");
    }
}
