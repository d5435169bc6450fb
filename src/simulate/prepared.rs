//! A scenario prepared once: its catalogs counted, its scorers built, its request parts sized (one builder; the calibration applied in one place).

use super::*;

/// A scenario's catalogs, counts and scorers, built once and reusable by every scenario that
/// shares the catalogs and the `deferred` settings (e.g. many generated conversations).
pub struct Prepared {
    pub(super) catalog: Arc<Catalog>,
    pub(super) tokens: ToolTokens,
    /// How every request part is counted.
    pub(super) counter: CounterKind,
    pub(super) scorer: Box<dyn Scorer>,
    /// The keyword scorer for `select:` queries when `scorer` is another kind.
    pub(super) select_scorer: Option<Box<dyn Scorer>>,
    pub(super) search_tool_tokens: usize,
    /// Where `search_tool_tokens` comes from: `sizes`, `catalog`, the provider's measured
    /// search overhead, or the counter counting toolbudget's default ToolSearch.
    pub(super) search_tool_source: SearchToolSource,
    pub(super) search_tool_name: String,
    /// OpenAI's `tool_search` under an openai counter: deferred namespaces (MCP servers,
    /// `deferred.namespace`) show by their surface, name and description.
    pub(super) openai_search: bool,
    /// ... and the provider runs it (not `deferred.client_search`): a search is billed inside
    /// the response that makes it, its call and output in harmony's framing.
    pub(super) hosted_search: bool,
    /// The system prompt with the counter's framing and the reply priming of a request.
    pub(super) system_tokens: usize,
    /// A subagent's system prompt when its scenario gives none (a calibration sets it).
    pub(super) subagent_system_tokens: Option<usize>,
    /// `system_tokens` before a calibration replaced it (outputs say what it changed).
    pub(super) counted_system_tokens: usize,
    /// Sending any tools: the model's tool-use preamble and the counter's tools framing.
    pub(super) overhead_tokens: usize,
    /// Provider tokens per counted token (1 unless a calibration says otherwise): applied to
    /// every counted part of a request, not to the system prompt or the tool-use preamble.
    pub(super) scale: f64,
    pub(crate) plan: Plan,
    /// Counts the anthropic-api counter fetched: they replace local counting of these texts.
    pub(super) exact: Option<ExactCounts>,
    pub(super) list_memo: Mutex<HashMap<(u64, u8), usize>>,
    /// Counts of short texts (user messages, calls, search framing), each counted once.
    pub(super) text_memo: Mutex<HashMap<String, usize>>,
    pub(super) message_memo: Mutex<HashMap<String, usize>>,
}

impl Prepared {
    /// The one way to prepare a scenario: counted by `counter`, its scorers built by `build`;
    /// the builder's other settings say what is already at hand and how sizes are set.
    pub fn builder<'a>(
        scenario: &'a Scenario,
        counter: CounterKind,
        build: &'a ScorerBuilder<'a>,
    ) -> Prepare<'a> {
        Prepare {
            scenario,
            counter,
            build,
            catalog: None,
            tokens: None,
            exact: None,
            sizing: Sizing::Counted,
        }
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }
    pub fn tokens(&self) -> &ToolTokens {
        &self.tokens
    }
    pub fn counter(&self) -> CounterKind {
        self.counter
    }
    pub fn scorer(&self) -> &dyn Scorer {
        self.scorer.as_ref()
    }
    /// The scorer of `select:` queries: the keyword scorer, or the scenario's own when it is one.
    pub fn select_scorer(&self) -> &dyn Scorer {
        self.select_scorer
            .as_deref()
            .unwrap_or(self.scorer.as_ref())
    }
    pub fn search_tool_tokens(&self) -> usize {
        self.search_tool_tokens
    }
    pub fn search_tool_source(&self) -> &SearchToolSource {
        &self.search_tool_source
    }
    pub fn system_tokens(&self) -> usize {
        self.system_tokens
    }
    pub fn counted_system_tokens(&self) -> usize {
        self.counted_system_tokens
    }
    pub fn overhead_tokens(&self) -> usize {
        self.overhead_tokens
    }
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// Whether a search is OpenAI's hosted `tool_search`, billed inside the response that
    /// makes it.
    pub fn hosted_search(&self) -> bool {
        self.hosted_search
    }
}

/// How a prepared scenario's system prompt and scale are set.
#[derive(Debug, Clone, Copy)]
pub enum Sizing<'c> {
    /// As counted: the scenario's system prompt, scale 1.
    Counted,
    /// A calibration's fitted system prompts and scale (its profile and counter match).
    Calibrated(&'c Calibration),
    /// A logged session replayed as it was, without a calibration: scale 1, and the system
    /// prompt the scenario records (a logged one) or 0.
    Raw,
}

/// The settings of [`Prepared::builder`].
pub struct Prepare<'a> {
    scenario: &'a Scenario,
    counter: CounterKind,
    build: &'a ScorerBuilder<'a>,
    catalog: Option<Arc<Catalog>>,
    tokens: Option<ToolTokens>,
    exact: Option<ExactCounts>,
    sizing: Sizing<'a>,
}

impl<'a> Prepare<'a> {
    /// The scenario's catalogs, already loaded (shared with other scenarios).
    pub fn catalog(mut self, catalog: Arc<Catalog>) -> Self {
        self.catalog = Some(catalog);
        self
    }
    /// The tools' counts, already counted (tests give fixed counts).
    pub fn tokens(mut self, tokens: ToolTokens) -> Self {
        self.tokens = Some(tokens);
        self
    }
    /// What the anthropic-api counter measured.
    pub fn exact(mut self, exact: Option<ExactCounts>) -> Self {
        self.exact = exact;
        self
    }
    pub fn sizing(mut self, sizing: Sizing<'a>) -> Self {
        self.sizing = sizing;
        self
    }

    /// Loads what is not at hand (catalogs, counts under a local counter), validates the
    /// conversation against the catalog and builds the scorers.
    pub fn build(self) -> Result<Prepared> {
        let catalog = match self.catalog {
            Some(c) => c,
            None => Arc::new(load_scenario_catalogs(self.scenario)?),
        };
        let tokens = match self.tokens {
            Some(t) => t,
            None if self.counter.is_local() => self.counter.tools(&catalog),
            // Only `simulate` reaches the API (key, cache file); the report counts locally.
            None => {
                return Err(Error::input(
                    &self.scenario.path,
                    None,
                    format!(
                        "counter {} counts through Anthropic's API: run this scenario with \
                         `toolbudget simulate` (ANTHROPIC_API_KEY or a filled --api-cache)",
                        self.counter
                    ),
                ));
            }
        };
        let mut prepared = prepare_shared(self.scenario, catalog, tokens, self.exact, self.build)?;
        prepared.counted_system_tokens = prepared.system_tokens;
        match self.sizing {
            Sizing::Counted => {}
            Sizing::Calibrated(c) => {
                prepared.system_tokens = c.system_prompt_tokens.round().max(0.0) as usize;
                prepared.subagent_system_tokens = c
                    .subagent_system_prompt_tokens
                    .map(|s| s.round().max(0.0) as usize);
                prepared.scale = c.scale;
            }
            Sizing::Raw => {
                if self.scenario.system_prompt_tokens.is_none() {
                    prepared.system_tokens = 0;
                }
                prepared.subagent_system_tokens = None;
                prepared.scale = 1.0;
            }
        }
        Ok(prepared)
    }
}

/// What the anthropic-api counter measured for one scenario (see `counter::api`): the system
/// prompt with the request framing, each user message, the fixed cost of sending tools and
/// the default search tool. Other texts (calls, search framing, lists) use the estimate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExactCounts {
    pub system: usize,
    pub messages: HashMap<String, usize>,
    pub tools_fixed: usize,
    pub search_tool: usize,
}

/// Loads the scenario's catalogs, counts every tool once under a local counter, and builds
/// its scorers: [`Prepared::builder`] with nothing at hand.
pub fn prepare(
    scenario: &Scenario,
    counter: CounterKind,
    build: &ScorerBuilder<'_>,
) -> Result<Prepared> {
    Prepared::builder(scenario, counter, build).build()
}

/// A scenario's counts and scorers over its catalog, sized as counted.
pub(super) fn prepare_shared(
    scenario: &Scenario,
    catalog: Arc<Catalog>,
    tokens: ToolTokens,
    exact: Option<ExactCounts>,
    build: &ScorerBuilder<'_>,
) -> Result<Prepared> {
    let counter = tokens.counter;
    let plan = plan(scenario, &catalog)?;
    validate_conversation(scenario, &catalog, &plan)?;
    let d = &scenario.deferred;
    let scorer = build(&d.scorer, catalog.clone(), &d.bm25, d.scorer_dir.as_deref())?;
    let needs_select = d.discovery == scenario::Discovery::Select
        || d.retry.contains(&scenario::RetryStep::Select);
    let select_scorer = if needs_select && d.scorer.builtin() != Some(ScorerKind::Keyword) {
        let keyword = ScorerSpec::Builtin(ScorerKind::Keyword);
        Some(build(&keyword, catalog.clone(), &d.bm25, None)?)
    } else {
        None
    };
    let system = scenario.system_prompt.as_deref();
    let system_tokens = match (scenario.system_prompt_tokens, &exact) {
        (Some(n), _) => counter.system_from_count(n),
        (None, Some(e)) => e.system,
        (None, None) => counter.system(system),
    };
    let overhead_tokens = scenario
        .sizes
        .tool_overhead
        .unwrap_or_else(|| match &exact {
            Some(e) => e.tools_fixed,
            None => {
                scenario.profile.preamble(counter, scenario.tool_choice)
                    + counter.tools_fixed(system)
            }
        });
    let (mut search_tool_tokens, mut search_tool_source) =
        search_tool(scenario, &plan, &tokens, overhead_tokens, exact.as_ref());
    let openai_search = counter.is_openai()
        && matches!(
            search_tool_source.origin,
            SearchToolOrigin::Measured { fitted: true, .. }
        );
    if d.call_bridge && scenario.sizes.search_tool.is_none() {
        // The bridge's own definition rides beside the search tool on every deferred request.
        search_tool_tokens += counter.tool(&call_bridge_tool());
        search_tool_source.bridge = true;
    }
    Ok(Prepared {
        catalog,
        tokens,
        counter,
        scorer,
        select_scorer,
        search_tool_tokens,
        search_tool_source,
        search_tool_name: d
            .search_tool_name
            .clone()
            .unwrap_or_else(|| SEARCH_TOOL.into()),
        openai_search,
        hosted_search: openai_search && !d.client_search,
        system_tokens,
        subagent_system_tokens: None,
        counted_system_tokens: 0,
        overhead_tokens,
        scale: 1.0,
        plan,
        exact,
        list_memo: Mutex::new(HashMap::new()),
        text_memo: Mutex::new(HashMap::new()),
        message_memo: Mutex::new(HashMap::new()),
    })
}

/// Where a scenario's search tool size comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchToolSource {
    pub origin: SearchToolOrigin,
    /// A `tool_call` bridge's definition rides beside it (its count added).
    pub bridge: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SearchToolOrigin {
    /// The scenario's `sizes.search_tool`.
    Sizes,
    /// The catalog's own search tool.
    Catalog,
    /// A provider's measured search overhead (its variant and the measured tokens; `fitted`:
    /// the search tool's own section, fitted on billed counts).
    Measured {
        variant: String,
        tokens: usize,
        fitted: bool,
    },
    /// toolbudget's ToolSearch measured by count_tokens.
    CountTokens,
    /// toolbudget's ToolSearch counted by this counter.
    Counted(CounterKind),
}

impl std::fmt::Display for SearchToolSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.origin {
            SearchToolOrigin::Sizes => f.write_str("sizes")?,
            SearchToolOrigin::Catalog => f.write_str("catalog")?,
            SearchToolOrigin::Measured {
                variant,
                tokens,
                fitted,
            } => {
                let basis = if *fitted { "fitted" } else { "measured" };
                write!(f, "{variant} ({tokens} {basis})")?;
            }
            SearchToolOrigin::CountTokens => f.write_str("ToolSearch (count_tokens)")?,
            SearchToolOrigin::Counted(counter) => write!(f, "ToolSearch ({counter})")?,
        }
        if self.bridge {
            f.write_str(" + tool_call")?;
        }
        Ok(())
    }
}

/// The search tool's definition: given in `sizes`, the catalog's own, the provider's
/// measured tool search (under a provider counter; the measurement holds the tool-use preamble
/// and framing, which `overhead` already counts), or toolbudget's ToolSearch counted.
pub(super) fn search_tool(
    scenario: &Scenario,
    plan: &Plan,
    tokens: &ToolTokens,
    overhead: usize,
    exact: Option<&ExactCounts>,
) -> (usize, SearchToolSource) {
    let (n, origin) = search_tool_origin(scenario, plan, tokens, overhead, exact);
    (
        n,
        SearchToolSource {
            origin,
            bridge: false,
        },
    )
}

fn search_tool_origin(
    scenario: &Scenario,
    plan: &Plan,
    tokens: &ToolTokens,
    overhead: usize,
    exact: Option<&ExactCounts>,
) -> (usize, SearchToolOrigin) {
    let counter = tokens.counter;
    if let Some(n) = scenario.sizes.search_tool {
        return (n, SearchToolOrigin::Sizes);
    }
    if let Some(i) = plan.search_tool {
        return (tokens.get(i), SearchToolOrigin::Catalog);
    }
    let measured = |o: &super::profile::SearchOverhead| SearchToolOrigin::Measured {
        variant: o.variant.clone(),
        tokens: o.tokens,
        fitted: o.section,
    };
    let provider = !matches!(counter, CounterKind::O200kJson | CounterKind::Cl100kJson);
    // A provider's measured search overhead stands for its own server-side search, which a
    // built-in scorer models; the user's own scorer is a client-side search tool.
    if provider
        && let Some(kind) = scenario.deferred.scorer.builtin()
        && let Some(o) = scenario.profile.search_overhead(kind)
    {
        if o.section {
            return (
                openai_search_section(scenario, plan, counter, o.tokens),
                measured(o),
            );
        }
        return (o.tokens.saturating_sub(overhead), measured(o));
    }
    match exact {
        Some(e) => (e.search_tool, SearchToolOrigin::CountTokens),
        None => (
            counter.tool(&default_search_tool()),
            SearchToolOrigin::Counted(counter),
        ),
    }
}

/// OpenAI's `tool_search` section (`tokens`, fitted with its join) as the tools part carries it.
/// The tools framing counted beside it (`overhead_tokens`) holds the `## functions` section;
/// when every function is deferred no such section is sent, only the tools sections opened, so
/// the difference is taken off here and the request's total is the fitted form (messages +
/// `# Tools` + surfaces + section).
fn openai_search_section(
    scenario: &Scenario,
    plan: &Plan,
    counter: CounterKind,
    tokens: usize,
) -> usize {
    let eager =
        (0..plan.deferrable.len()).any(|i| Some(i) != plan.search_tool && !plan.deferrable[i]);
    if eager || !counter.is_openai() {
        return tokens;
    }
    let system = scenario.system_prompt.as_deref();
    let functions = counter
        .tools_fixed(system)
        .saturating_sub(counter.tools_sections_open(system));
    tokens.saturating_sub(functions)
}

impl Prepared {
    /// The index of a tool id already validated against the catalog.
    pub(crate) fn index(&self, id: &str) -> usize {
        self.catalog
            .index_of(id)
            .expect("tool ids are validated before replay")
    }

    /// A counted size in the provider's tokens (`scale`, rounded).
    pub fn scaled(&self, n: usize) -> usize {
        if self.scale == 1.0 {
            n
        } else {
            (n as f64 * self.scale).round() as usize
        }
    }

    /// A user message given as text: the API's count when it fetched one, else the counter's
    /// (content and framing), memoized.
    pub(crate) fn message_tokens(&self, text: &str) -> usize {
        if let Some(&n) = self.exact.as_ref().and_then(|e| e.messages.get(text)) {
            return n;
        }
        if let Some(&n) = self.message_memo.lock().expect("not poisoned").get(text) {
            return n;
        }
        let n = self.counter.message(text);
        let mut memo = self.message_memo.lock().expect("not poisoned");
        if memo.len() < 100_000 {
            memo.insert(text.to_string(), n);
        }
        n
    }

    /// Raw text (a call, search framing, a list) under the scenario's counter, memoized
    /// (texts repeat across turns and conversations).
    pub(crate) fn count_text(&self, text: &str) -> usize {
        if let Some(&n) = self.text_memo.lock().expect("not poisoned").get(text) {
            return n;
        }
        let n = self.counter.text(text);
        let mut memo = self.text_memo.lock().expect("not poisoned");
        // Bound the memo: long unique texts are rare and cheap to recount.
        if memo.len() < 100_000 {
            memo.insert(text.to_string(), n);
        }
        n
    }

    /// Tokens of the deferred list for one listed set, counted once per set.
    pub(crate) fn list_tokens(
        &self,
        sig: u64,
        listing: scenario::Listing,
        count: impl FnOnce() -> usize,
    ) -> usize {
        let key = (sig, listing as u8);
        if let Some(&n) = self.list_memo.lock().expect("not poisoned").get(&key) {
            return n;
        }
        let n = count();
        self.list_memo.lock().expect("not poisoned").insert(key, n);
        n
    }

    /// The rephrased query of the retry policy: the server and the tool's name split into
    /// words (`mcp__tracker__create_issue` → `tracker create issue`, `WebFetch` → `web fetch`).
    pub(crate) fn name_query(&self, tool: usize) -> String {
        let t = self.catalog.get(tool);
        let mut words: Vec<String> = Vec::new();
        for part in t.server.iter().chain(std::iter::once(&t.name)) {
            text::words(part, Camel::LowerToUpper, &mut words);
        }
        words.join(" ")
    }
}
