//! Eager and deferred replay, request by request (ACCOUNTING.md). One `Run` per mode holds the
//! rows and counts; an `Agent` is the main conversation or a subagent, with its own history,
//! loaded tools and cache state. Sums are kept incrementally: tool definitions were counted
//! once in `Prepared`, and the tools part is re-summed only when the tool set changes.

use super::Prepared;
use super::SearchTiming;
use super::cost::{
    CacheBreak, CacheState, PrefixKey, cached_prefix, cost_cached, cost_uncached, prefix_break,
};
use super::latency::{FetchCache, duration_ms, ttft_ms};
use super::listing;
use super::profile::Profile;
use super::request::{Parts, RequestKind, RequestRow};
use super::result::{Counts, Invalidations};
use super::scenario::{
    Call, Discovery, Event, Item, ListStyle, Listing, RetryStep, Reveal, Scenario, Subagent, Turn,
};
use crate::error::{Error, Position, Result};
use crate::search::{SearchError, SearchRequest};
use crate::timing::time_search;
use std::time::Duration;

/// Result tokens when neither the call nor `sizes.result` gives them.
pub const DEFAULT_RESULT_TOKENS: usize = 300;

pub use super::request::Mode;

/// The deterministic generator behind every scenario rate.
pub use crate::rng::SplitMix64 as Rng;

mod search;

mod tokens;

fn mix(i: usize) -> u64 {
    let mut r = Rng::new(i as u64 ^ 0xA5A5_5A5A_1234_5678);
    r.next_u64()
}

/// One mode's replay of a scenario.
pub struct Run<'a> {
    pub sc: &'a Scenario,
    pub prep: &'a Prepared,
    pub mode: Mode,
    pub rows: Vec<RequestRow>,
    pub counts: Counts,
    /// Requests whose cached prefix was broken, by cause.
    pub invalidations: Invalidations,
    /// Per main-agent turn: ttft of its first request and its whole duration (ms).
    pub turn_ttft_ms: Vec<f64>,
    pub turn_ms: Vec<f64>,
    clock_s: f64,
    fetch: FetchCache,
    rng: Rng,
    subagents: usize,
    /// Whether the main agent deferred anything (false in eager mode).
    pub deferring: bool,
    timing: SearchTiming<'a>,
    /// The measured time of every search sent, in order (empty when modeled).
    pub search_times: Vec<Duration>,
}

/// The main conversation or a subagent.
struct Agent {
    id: usize,
    /// Tools this agent may use (`None`: all).
    universe: Option<Vec<bool>>,
    /// Per server (index into `Plan::servers`).
    connected: Vec<bool>,
    deferring: bool,
    discovered: Vec<bool>,
    turn_tools: Vec<usize>,
    system: usize,
    history: usize,
    /// Tool definitions inside `history` (search results expanded with `reveal: append`).
    history_definitions: usize,
    epoch: u64,
    tools_tokens: usize,
    /// Definitions in the tools list (the search tool included).
    tools_sent: usize,
    tools_sig: u64,
    list_tokens: usize,
    list_sig: u64,
    /// Delta style: what the model has been told, and what it must still be told.
    announced: Vec<bool>,
    needs_announce: bool,
    pending_delta: usize,
    prev: Option<CacheState>,
    cold: bool,
    turn: usize,
}

/// What the next request carries.
struct Next {
    kind: RequestKind,
    new: usize,
    /// Tool definitions inside `new` (a search result expanded with `reveal: append`).
    definitions: usize,
    tool: Option<usize>,
    client_ms: f64,
    /// Tokens inside `new` that the response itself added before it went on (OpenAI's hosted
    /// search: its call and output): billed with this request, not a prefix the next request
    /// finds cached.
    continuation: usize,
    /// Of `continuation`, the loaded definitions (also in `definitions`).
    continuation_definitions: usize,
}

/// Calls written in one request (parallel tool use): their outputs are that request's output,
/// their results the next request's `new`, their subagents run in between.
struct Group<'s> {
    kind: RequestKind,
    tool: Option<usize>,
    out: usize,
    result: usize,
    /// Tool definitions inside `result` (searches expanded with `reveal: append`).
    definitions: usize,
    client_ms: f64,
    subagents: Vec<&'s Subagent>,
}

impl<'s> Group<'s> {
    fn new(kind: RequestKind, tool: Option<usize>) -> Group<'s> {
        Group {
            kind,
            tool,
            out: 0,
            result: 0,
            definitions: 0,
            client_ms: 0.0,
            subagents: Vec::new(),
        }
    }

    fn add(&mut self, out: usize, result: usize, sub: Option<&'s Subagent>) {
        self.out += out;
        self.result += result;
        self.subagents.extend(sub);
    }
}

impl<'a> Run<'a> {
    pub fn new(
        sc: &'a Scenario,
        prep: &'a Prepared,
        mode: Mode,
        timing: SearchTiming<'a>,
    ) -> Run<'a> {
        Run {
            sc,
            prep,
            mode,
            rows: Vec::new(),
            counts: Counts::default(),
            invalidations: Invalidations::default(),
            turn_ttft_ms: Vec::new(),
            turn_ms: Vec::new(),
            clock_s: 0.0,
            fetch: FetchCache::default(),
            rng: Rng::new(sc.failures.seed),
            subagents: 0,
            deferring: false,
            timing,
            search_times: Vec::new(),
        }
    }

    /// Whether searches are timed on the real scorer (else the profile's latency is used).
    pub fn timing_is_measured(&self) -> bool {
        matches!(self.timing, SearchTiming::Measured(_))
    }

    /// Where a loaded definition goes: a call bridge (`tool_call`) never adds it to the tools
    /// list, whatever `reveal` says.
    fn reveal(&self) -> Reveal {
        if self.sc.deferred.call_bridge {
            Reveal::Append
        } else {
            self.sc.deferred.reveal
        }
    }

    fn profile(&self) -> &Profile {
        &self.sc.profile
    }

    fn count(&self, text: &str) -> usize {
        self.prep.count_text(text)
    }

    /// Replays the whole conversation; `Err` only for a query the scorer rejects.
    pub fn replay(&mut self) -> Result<()> {
        let n = self.prep.catalog.len();
        let connected = self.prep.plan.initially_connected.clone();
        let mut main = self.new_agent(0, None, connected, self.prep.system_tokens, n);
        self.items(&mut main, &self.sc.conversation)?;
        self.deferring = main.deferring;
        Ok(())
    }

    fn new_agent(
        &self,
        id: usize,
        universe: Option<Vec<bool>>,
        connected: Vec<bool>,
        system: usize,
        n: usize,
    ) -> Agent {
        let mut a = Agent {
            id,
            universe,
            connected,
            deferring: false,
            discovered: vec![false; n],
            turn_tools: Vec::new(),
            system,
            history: 0,
            history_definitions: 0,
            epoch: 0,
            tools_tokens: 0,
            tools_sent: 0,
            tools_sig: 0,
            list_tokens: 0,
            list_sig: 0,
            announced: vec![false; n],
            needs_announce: true,
            pending_delta: 0,
            prev: None,
            cold: true,
            turn: 0,
        };
        a.deferring = self.mode == Mode::Deferred && self.decides_to_defer(&a);
        self.refresh_tools(&mut a);
        self.refresh_list(&mut a);
        a
    }

    /// `always`: defer when anything is deferrable; `auto:N`: when the deferrable tools'
    /// definitions exceed N% of the context window.
    fn decides_to_defer(&self, a: &Agent) -> bool {
        let plan = &self.prep.plan;
        let deferrable =
            (0..self.prep.catalog.len()).filter(|&i| plan.deferrable[i] && self.available(a, i));
        match self.sc.deferred.when {
            super::scenario::When::Always => deferrable.count() > 0,
            super::scenario::When::Never => false,
            super::scenario::When::Over(n) => {
                let tools = (0..self.prep.catalog.len())
                    .filter(|&i| self.available(a, i))
                    .count();
                tools > n && deferrable.count() > 0
            }
            super::scenario::When::Auto(pct) => {
                let tokens: usize = deferrable.map(|i| self.prep.tokens.get(i)).sum();
                tokens as f64 > pct / 100.0 * self.profile().context_window as f64
            }
        }
    }

    fn available(&self, a: &Agent, i: usize) -> bool {
        let plan = &self.prep.plan;
        Some(i) != plan.search_tool
            && a.universe.as_ref().is_none_or(|u| u[i])
            && plan.server_of[i].is_none_or(|s| a.connected[s])
    }

    fn is_deferred(&self, a: &Agent, i: usize) -> bool {
        a.deferring && self.prep.plan.deferrable[i]
    }

    fn is_loaded(&self, a: &Agent, i: usize) -> bool {
        self.available(a, i)
            && (!self.is_deferred(a, i) || a.discovered[i] || a.turn_tools.contains(&i))
    }

    fn in_tools_list(&self, a: &Agent, i: usize) -> bool {
        self.available(a, i)
            && (!self.is_deferred(a, i)
                || (self.reveal() == Reveal::ToolsList && a.discovered[i])
                || a.turn_tools.contains(&i))
    }

    /// Re-sums the tools part after the tool set changed.
    fn refresh_tools(&self, a: &mut Agent) {
        let mut tokens = 0;
        let mut sent = 0;
        let mut sig = 0u64;
        for i in 0..self.prep.catalog.len() {
            if self.in_tools_list(a, i) {
                tokens += self.prep.tokens.get(i);
                sent += 1;
                sig ^= mix(i);
            }
        }
        if a.deferring {
            tokens += self.prep.search_tool_tokens;
            sent += 1;
            sig ^= mix(usize::MAX);
        }
        a.tools_tokens = tokens;
        a.tools_sent = sent;
        a.tools_sig = sig;
    }

    fn listed_now(&self, a: &Agent) -> Vec<usize> {
        (0..self.prep.catalog.len())
            .filter(|&i| self.available(a, i) && self.is_deferred(a, i))
            .collect()
    }

    /// Recomputes the deferred list (list style) or queues the announcement (delta style).
    fn refresh_list(&self, a: &mut Agent) {
        if !a.deferring {
            a.list_tokens = 0;
            a.list_sig = 0;
            return;
        }
        let listing = self.sc.deferred.listing;
        let now = self.listed_now(a);
        match self.sc.deferred.list_style {
            ListStyle::List => {
                let sig = now.iter().fold(0u64, |s, &i| s ^ mix(i));
                a.list_sig = sig;
                a.list_tokens = match self.sc.sizes.deferred_list {
                    Some(n) => n,
                    None => self
                        .prep
                        .list_tokens(sig, listing, || self.listed_tokens(&now)),
                };
            }
            ListStyle::Delta => {
                if a.needs_announce {
                    a.needs_announce = false;
                    a.announced.iter_mut().for_each(|b| *b = false);
                    for &i in &now {
                        a.announced[i] = true;
                    }
                    if !now.is_empty() {
                        a.pending_delta += self
                            .sc
                            .sizes
                            .deferred_list
                            .unwrap_or_else(|| self.listed_tokens(&now));
                    }
                } else {
                    let mut is_now = vec![false; self.prep.catalog.len()];
                    for &i in &now {
                        is_now[i] = true;
                    }
                    let added: Vec<usize> =
                        now.iter().copied().filter(|&i| !a.announced[i]).collect();
                    let removed: Vec<usize> = (0..is_now.len())
                        .filter(|&i| a.announced[i] && !is_now[i])
                        .collect();
                    let before: Vec<usize> =
                        (0..is_now.len()).filter(|&i| a.announced[i]).collect();
                    a.announced = is_now;
                    if self.shows_surfaces() {
                        // Surfaces of what was added join the tools block's surfaces.
                        let shown = self.surfaces(&before);
                        let new: Vec<(String, String)> = self
                            .surfaces(&added)
                            .into_iter()
                            .filter(|s| !shown.contains(s))
                            .collect();
                        a.pending_delta += self.surface_tokens(&new);
                    } else {
                        let text =
                            listing::delta_text(&self.prep.catalog, &added, &removed, listing);
                        if !text.is_empty() {
                            a.pending_delta += self.count(&text);
                        }
                    }
                }
            }
        }
    }

    /// Tokens of the deferred list of `tools`: the listing's text counted, or the surfaces
    /// (names and descriptions) OpenAI shows, each as the counter renders it.
    fn listed_tokens(&self, tools: &[usize]) -> usize {
        if self.shows_surfaces() {
            return self.surface_tokens(&self.surfaces(tools));
        }
        let listing = self.sc.deferred.listing;
        self.count(&listing::full_text(&self.prep.catalog, tools, listing))
    }

    /// Sends one request: counts its parts, its cached prefix, cost and latency, and appends
    /// its new message and output to the agent's history.
    fn send(&mut self, a: &mut Agent, next: &Next, output: usize) {
        let list = match self.sc.deferred.list_style {
            ListStyle::List => a.list_tokens,
            ListStyle::Delta => std::mem::take(&mut a.pending_delta),
        };
        let overhead = if a.tools_tokens > 0 {
            self.prep.overhead_tokens
        } else {
            0
        };
        // Counted sizes in the counter's tokens, scaled to the provider's by a calibration;
        // the system prompt and the preamble are already in the provider's tokens.
        let scaled = |n: usize| self.prep.scaled(n);
        let parts = Parts {
            system: a.system,
            tool_overhead: overhead,
            tools: scaled(a.tools_tokens),
            deferred_list: scaled(list),
            history: scaled(a.history),
            new: scaled(next.new),
        };
        let list_style = self.sc.deferred.list_style == ListStyle::List;
        let key = PrefixKey {
            system: a.system,
            tool_overhead: overhead,
            tools_sig: a.tools_sig,
            tools: parts.tools,
            list_sig: if list_style { a.list_sig } else { 0 },
            list: if list_style { parts.deferred_list } else { 0 },
            history_epoch: a.epoch,
        };
        let input = parts.total();
        let cached = if a.cold {
            0
        } else {
            cached_prefix(a.prev.as_ref(), &key).min(input)
        };
        let cache_break = self.invalidation(a, &key, input, cached);
        a.cold = false;
        // A hosted search's call and output are billed with this request but are not a
        // prefix the next one finds cached: that is the prompt it was sent with.
        let hosted_search_tokens = scaled(next.continuation);
        a.prev = Some(CacheState {
            key,
            input: input.saturating_sub(hosted_search_tokens),
        });
        let message_definitions = scaled(a.history_definitions + next.definitions);
        a.history += if list_style { 0 } else { list } + next.new + output;
        a.history_definitions += next.definitions;
        let output = self.prep.scaled(output);
        let profile = &self.sc.profile;
        let ttft = ttft_ms(profile, input, cached, next.client_ms);
        let dur = duration_ms(profile, ttft, output);
        self.clock_s += dur / 1000.0;
        if next.kind == RequestKind::Retry {
            self.counts.retry_input_tokens += input;
        }
        if a.id > 0 {
            self.counts.subagent_requests += 1;
        }
        let window = profile.context_window;
        self.rows.push(RequestRow {
            mode: self.mode,
            agent: a.id,
            turn: a.turn,
            index: self.rows.len() + 1,
            kind: next.kind,
            tool: next.tool.map(|i| self.prep.catalog.get(i).id.clone()),
            tools_sent: a.tools_sent,
            parts,
            input_tokens: input,
            cached_tokens: cached,
            cache_break,
            message_definitions,
            output_tokens: output,
            cost_usd: cost_uncached(profile, &parts, output),
            cost_cached_usd: cost_cached(profile, input, cached, output),
            ttft_ms: ttft,
            duration_ms: dur,
            occupancy_pct: input as f64 / window as f64 * 100.0,
            headroom_tokens: window as i64 - input as i64 - output as i64,
            fits_window: input + output <= window,
            hosted_search_tokens,
            hosted_search_definitions: scaled(next.continuation_definitions),
        });
    }

    /// Whether this request finds less of the previous request in the cache than an
    /// appended-to history would (an agent's first request has nothing to lose); counts it.
    fn invalidation(
        &mut self,
        a: &Agent,
        key: &PrefixKey,
        input: usize,
        cached: usize,
    ) -> Option<CacheBreak> {
        let prev = a.prev.as_ref()?;
        let cause = if a.cold {
            CacheBreak::Resume
        } else {
            prefix_break(prev, key)?
        };
        let lost = prev.input.min(input).saturating_sub(cached);
        let p = self.profile();
        let usd = lost as f64 * (p.cache_write_per_mtok - p.cache_read_per_mtok) / 1e6;
        self.invalidations.add(cause, lost, usd);
        Some(cause)
    }

    fn items(&mut self, a: &mut Agent, items: &[Item]) -> Result<()> {
        for item in items {
            match item {
                Item::Turn(t) => self.turn(a, t)?,
                Item::Event(e) => self.event(a, e),
            }
        }
        Ok(())
    }

    fn event(&mut self, a: &mut Agent, e: &Event) {
        let plan = &self.prep.plan;
        match e {
            Event::Connect { server: s, .. } | Event::Disconnect { server: s, .. } => {
                let Some(si) = plan.servers.iter().position(|x| x == s) else {
                    return; // checked in validation
                };
                let on = matches!(e, Event::Connect { .. });
                a.connected[si] = on;
                if !on {
                    for i in 0..a.discovered.len() {
                        if plan.server_of[i] == Some(si) {
                            a.discovered[i] = false;
                        }
                    }
                }
                // A connect after a start with nothing deferrable may turn deferral on.
                if self.mode == Mode::Deferred && !a.deferring && on && a.turn == 0 {
                    a.deferring = self.decides_to_defer(a);
                }
            }
            Event::Clear => {
                a.history = 0;
                a.history_definitions = 0;
                a.epoch += 1;
                a.discovered.iter_mut().for_each(|d| *d = false);
                a.needs_announce = true;
            }
            Event::Compact {
                summary_tokens,
                keep_discovered,
            } => {
                a.history = *summary_tokens;
                a.history_definitions = 0;
                a.epoch += 1;
                a.needs_announce = true;
                if keep_discovered.unwrap_or(self.sc.deferred.compact_keeps_loaded) {
                    if self.reveal() == Reveal::Append {
                        // Kept definitions are carried over after the summary.
                        let kept: usize = (0..a.discovered.len())
                            .filter(|&i| a.discovered[i] && self.available(a, i))
                            .map(|i| self.prep.tokens.get(i))
                            .sum();
                        a.history += kept;
                        a.history_definitions = kept;
                    }
                } else {
                    a.discovered.iter_mut().for_each(|d| *d = false);
                }
            }
            Event::Resume { rediscover } => {
                a.cold = true;
                if !rediscover.unwrap_or(self.sc.deferred.resume_rediscovers) {
                    a.discovered.iter_mut().for_each(|d| *d = false);
                }
            }
        }
        a.turn_tools.clear();
        self.refresh_tools(a);
        self.refresh_list(a);
    }

    fn turn(&mut self, a: &mut Agent, t: &Turn) -> Result<()> {
        a.turn += 1;
        if a.id == 0 {
            self.counts.turns += 1;
            if a.turn > 1 {
                self.clock_s += self.profile().turn_gap_s;
            }
        }
        let first_row = self.rows.len();
        let mut next = Next {
            definitions: 0,
            kind: RequestKind::User,
            new: self.user_tokens(t),
            tool: None,
            client_ms: 0.0,
            continuation: 0,
            continuation_definitions: 0,
        };
        // Auto-retrieve: the user's text picks this turn's extra tools.
        if !a.turn_tools.is_empty() {
            a.turn_tools.clear();
            self.refresh_tools(a);
        }
        if a.deferring && self.sc.deferred.discovery == Discovery::AutoRetrieve {
            self.auto_retrieve(a, t, &mut next)?;
        }
        let mut group: Option<Group<'_>> = None;
        for call in &t.calls {
            match &call.loads {
                Some(loads) => self.recorded_search(a, call, loads, &mut group, &mut next)?,
                None => self.call(a, t, call, &mut group, &mut next)?,
            }
        }
        self.flush(a, &mut group, &mut next)?;
        if let Some(sub) = &t.subagent {
            let out = self.sc.sizes.call.unwrap_or(self.profile().call_tokens);
            self.send(a, &next, out);
            let result = self.subagent(a, sub)?;
            next = Next {
                definitions: 0,
                kind: RequestKind::ToolResult,
                new: result,
                tool: None,
                client_ms: 0.0,
                continuation: 0,
                continuation_definitions: 0,
            };
        }
        let reply = t
            .reply_tokens
            .or(self.sc.sizes.reply)
            .unwrap_or(self.profile().reply_tokens);
        self.send(a, &next, reply);
        if a.id == 0 {
            let rows = &self.rows[first_row..];
            self.turn_ttft_ms.push(rows[0].ttft_ms);
            self.turn_ms.push(rows.iter().map(|r| r.duration_ms).sum());
        }
        Ok(())
    }

    fn subagent(&mut self, parent: &Agent, s: &Subagent) -> Result<usize> {
        self.subagents += 1;
        let n = self.prep.catalog.len();
        let universe = s.tools.as_ref().map(|refs| {
            let mut u = vec![false; n];
            for r in refs {
                u[self.prep.index(&r.id)] = true;
            }
            u
        });
        let system = s.system_prompt_tokens.map_or(
            self.prep
                .subagent_system_tokens
                .unwrap_or(self.prep.system_tokens),
            |n| self.prep.counter.system_from_count(n),
        );
        let mut a = self.new_agent(
            self.subagents,
            universe,
            parent.connected.clone(),
            system,
            n,
        );
        self.items(&mut a, &s.conversation)?;
        Ok(s.result_tokens.unwrap_or(self.profile().reply_tokens))
    }
}

/// A query quoted for an error line: at most 80 characters, so one line stays readable.
fn quote_short(query: &str) -> String {
    const SHOWN: usize = 80;
    match query.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!(
            "{:?}… ({} characters)",
            &query[..cut],
            query.chars().count()
        ),
        None => format!("{query:?}"),
    }
}
