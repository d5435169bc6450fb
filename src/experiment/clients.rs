//! The same conversations under each client's policy, side by side (`simulate --client A,B`
//! and the report's "Client profiles" section): each scenario replayed once per profile
//! (`Scenario::with_client`: the profile's policy, the scenario's own tools keys), the deferred
//! mode of each replay a row, the eager mode once as the baseline. Search latency is modeled,
//! so the result is deterministic.

use serde::Serialize;

use crate::counter::CounterAndTokenizer;
use crate::error::Result;
use crate::simulate::client::{self, ClientName, ClientProfile, Source};
use crate::simulate::result::Invalidations;
use crate::simulate::{self, ModeResult, Prepared, Scenario};

/// Every scenario under every client asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientComparison {
    /// The clients in the order asked.
    pub clients: Vec<ClientName>,
    pub scenarios: Vec<ClientScenario>,
    /// Each client's policy with the source of every value.
    pub profiles: Vec<ProfileSummary>,
}

/// A profile as printed: its rows (setting, value, source).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct ProfileSummary {
    pub client: String,
    pub title: String,
    pub values: Vec<SourcedValue>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SourcedValue {
    pub setting: String,
    pub value: String,
    pub source: Source,
}

impl ProfileSummary {
    pub fn of(p: &ClientProfile) -> ProfileSummary {
        ProfileSummary {
            client: p.name.to_string(),
            title: p.title.to_string(),
            values: p
                .rows()
                .into_iter()
                .map(|(setting, value, source)| SourcedValue {
                    setting: setting.to_string(),
                    value,
                    source,
                })
                .collect(),
        }
    }
}

/// One scenario: its eager baseline and one row per client.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientScenario {
    pub name: String,
    #[serde(flatten)]
    pub counter: CounterAndTokenizer,
    pub tool_count: usize,
    /// Where the dollars' prices come from (the price table, its date, the model).
    pub prices: String,
    /// Every tool sent on every request (no client's policy applied).
    pub eager: ClientRow,
    pub rows: Vec<ClientRow>,
}

/// One replay's totals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClientRow {
    /// The client (`eager` for the baseline).
    pub client: String,
    /// Whether the replay deferred anything (a threshold may keep a client eager).
    pub deferring: bool,
    pub deferred_count: usize,
    pub requests: usize,
    pub first_request_tokens: usize,
    pub total_input_tokens: usize,
    /// The deferred list alone in the first request: what never-loaded tools still cost.
    pub first_request_deferred_list_tokens: usize,
    /// The deferred list over the whole conversation (every request's), and its cost without
    /// caching.
    pub deferred_list_tokens: usize,
    pub deferred_list_cost_usd: f64,
    /// The search tool (and a bridge) as sent on every deferred request.
    pub search_tool_tokens: usize,
    pub searches: usize,
    pub misses: usize,
    pub failed_calls: usize,
    pub cost_usd: f64,
    pub cost_cached_usd: f64,
    pub cache_invalidations: Invalidations,
}

impl ClientRow {
    fn of(
        client: &str,
        m: &ModeResult,
        deferring: bool,
        deferred_count: usize,
        search: usize,
    ) -> ClientRow {
        ClientRow {
            client: client.to_string(),
            deferring,
            deferred_count,
            requests: m.requests,
            first_request_tokens: m.first_request_tokens,
            total_input_tokens: m.total_input_tokens,
            first_request_deferred_list_tokens: m.first_request_deferred_list_tokens,
            deferred_list_tokens: m.parts.deferred_list,
            deferred_list_cost_usd: m.deferred_list_cost_usd,
            search_tool_tokens: if deferring { search } else { 0 },
            searches: m.counts.searches,
            misses: m.counts.misses,
            failed_calls: m.counts.failed_calls,
            cost_usd: m.cost_usd.without_caching,
            cost_cached_usd: m.cost_usd.with_caching,
            cache_invalidations: m.cache_invalidations.clone(),
        }
    }
}

/// Replays every scenario under every client; `prepare` builds a scenario's catalogs, counts
/// and scorers (the command's counter and scorer builder; tests pass fixed counts); each
/// replay's search work is charged to the run's `budget` first.
pub fn run(
    scenarios: &[Scenario],
    clients: &[ClientName],
    prepare: &mut dyn FnMut(&Scenario) -> Result<Prepared>,
    budget: &mut crate::budget::Budget,
) -> Result<ClientComparison> {
    let mut out = Vec::with_capacity(scenarios.len());
    for sc in scenarios {
        let mut eager = None;
        let mut rows = Vec::with_capacity(clients.len());
        let mut counter = None;
        let mut tool_count = 0;
        let mut prices = String::new();
        for &c in clients {
            let under = sc.with_client(c);
            let prep = prepare(&under)?;
            simulate::charge_searches(&under, &prep, budget)?;
            let r = simulate::run(&under, &prep)?;
            if eager.is_none() {
                eager = Some(ClientRow::of("eager", &r.eager, false, 0, 0));
                counter = Some(r.counter);
                tool_count = r.tool_count;
                prices.clone_from(&r.model.source);
            }
            rows.push(ClientRow::of(
                c.name(),
                &r.deferred,
                r.settings.deferring,
                r.deferred_count,
                prep.search_tool_tokens(),
            ));
        }
        let (Some(eager), Some(counter)) = (eager, counter) else {
            continue; // no client asked for
        };
        out.push(ClientScenario {
            name: sc.name.clone(),
            counter,
            tool_count,
            prices,
            eager,
            rows,
        });
    }
    Ok(ClientComparison {
        clients: clients.to_vec(),
        scenarios: out,
        profiles: clients
            .iter()
            .map(|&c| ProfileSummary::of(&client::profile(c)))
            .collect(),
    })
}
