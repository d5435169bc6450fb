//! Model prices from a snapshot of pydantic's genai-prices table
//! (`data/prices/genai-prices.json`, see `data/prices/README.md`): which model an id names, and
//! what one request costs.
//!
//! Ids resolve exactly as `genai_prices` 0.2.5 resolves them (`DataSnapshot.find_provider_model`):
//!
//! 1. The id is lowercased, nothing else: no prefix (`anthropic/…`) or date is stripped.
//! 2. The provider is the hint's (matched on `id`, then on `provider_match`), or else the
//!    first of `provider_detection` whose `model_match` matches the id. Only that provider is
//!    searched. A provider the snapshot left out is reported by name, never priced as another.
//! 3. Its first model whose `match` matches wins; then its `fallback_model_providers`' own
//!    models (one level: google falls back to anthropic).
//! 4. Failing that, every compact date `-YYYYMMDD` becomes `-YYYY-MM-DD` and step 3 runs again.
//!
//! toolbudget adds only what the package lacks: the closest known ids when an id is unknown,
//! and one rule of its own for logs ([`PriceTable::resolve_for_log`]: Bedrock ids).
//!
//! Prices are looked up at a date: the request's (UTC) for logs, and by default the snapshot's
//! date, never the wall clock, so that the same input gives the same dollars.

use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

mod clause;
mod cost;
mod load;
#[cfg(test)]
mod tests;

use clause::{Clause, MatchError, normalize_compact_dates, normalize_hint};
pub use cost::{Cost, Date, ModelPrices, Price, Tier, Usage};

use crate::error::Result;

/// Longest model id (or provider hint) resolved, in bytes: real ids are under 100.
pub const MAX_MODEL_ID_BYTES: usize = 1024;
/// Longest `regex` pattern a price table may hold, in bytes.
pub const MAX_PATTERN_BYTES: usize = 4096;
/// Deepest nesting of `or` / `and` clauses in a price table.
pub const MAX_CLAUSE_DEPTH: usize = 32;
/// Highest price accepted, USD per million tokens (per thousand for `*_kcount` keys): anything
/// above is a typo.
pub const MAX_PRICE_PER_MTOK: f64 = 100_000.0;

/// The least Jaro-Winkler similarity of a "closest known id": below it an id is not offered.
const MIN_SIMILARITY: f64 = 0.8;

/// The snapshot bundled into the binary.
const BUNDLED_JSON: &str = include_str!("../../data/prices/genai-prices.json");
const BUNDLED_PATH: &str = "data/prices/genai-prices.json";

/// Where a price table comes from, printed beside every dollar figure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// `genai-prices`
    pub package: String,
    pub version: String,
    /// The day the snapshot was taken; prices are looked up at this date by default.
    pub date: Date,
}

/// `genai-prices 0.2.5, 2026-12-05`
impl fmt::Display for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}, {}", self.package, self.version, self.date)
    }
}

/// A loaded price table: providers with their models in the package's order.
#[derive(Debug)]
pub struct PriceTable {
    snapshot: Snapshot,
    /// Every provider of the package in its order (also those the snapshot left out).
    detection: Vec<Detect>,
    providers: Vec<Provider>,
}

#[derive(Debug)]
struct Detect {
    id: String,
    model_match: Option<Clause>,
    provider_match: Option<Clause>,
    /// Its index in `providers`; `None` when the snapshot left it out.
    provider: Option<usize>,
}

#[derive(Debug)]
struct Provider {
    id: String,
    /// Indices of `fallback_model_providers`, in order.
    fallbacks: Vec<usize>,
    models: Vec<Model>,
    /// Its models' ids and `equals` / `starts_with` literals, lowercased and sorted, without
    /// repeats: the candidates of "closest known ids".
    known: Vec<String>,
}

#[derive(Debug)]
struct Model {
    id: String,
    name: Option<String>,
    matcher: Clause,
    context_window: Option<u64>,
    deprecated: bool,
    /// In the table's order; an entry with a start date applies from that date (UTC) on.
    prices: Vec<(Option<Date>, ModelPrices)>,
}

/// A model id resolved to a model of the table.
#[derive(Debug, Clone, Copy)]
pub struct Resolved<'t> {
    /// The provider searched: the hint's or the detected one (google for a Claude model found
    /// through google's fallback to anthropic).
    pub provider_id: &'t str,
    /// The table's model id (`claude-sonnet-4-5` for `claude-sonnet-4-5-20250929`).
    pub model_id: &'t str,
    pub model_name: Option<&'t str>,
    /// `None` where the table does not say.
    pub context_window: Option<u64>,
    pub deprecated: bool,
    /// Set when toolbudget's Bedrock rule supplied the provider hint `aws`
    /// ([`PriceTable::resolve_for_log`]), so a report can label it as ours.
    pub bedrock_rule: bool,
    model: &'t Model,
    snapshot_date: Date,
}

impl<'t> Resolved<'t> {
    /// The prices in force on `date` (UTC); `None` means the snapshot's date, not today, so
    /// that outputs are reproducible. Of the table's dated entries the last one started on or
    /// before the date applies, else the first (genai-prices' `get_prices`).
    pub fn prices_at(&self, date: Option<Date>) -> &'t ModelPrices {
        let date = date.unwrap_or(self.snapshot_date);
        let entries = &self.model.prices;
        entries
            .iter()
            .rev()
            .find(|(start, _)| start.is_none_or(|s| s <= date))
            .or(entries.first())
            .map_or(&EMPTY, |(_, p)| p)
    }

    /// The prices at the snapshot's date.
    pub fn prices(&self) -> &'t ModelPrices {
        self.prices_at(None)
    }
}

/// A model without prices (never reached: every model has at least one price entry).
static EMPTY: ModelPrices = ModelPrices {
    input: None,
    output: None,
    cache_write: None,
    cache_write_1h: None,
    cache_read: None,
    requests: None,
};

/// Why a model id has no price.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// The id or hint is longer than [`MAX_MODEL_ID_BYTES`].
    TooLong { bytes: usize },
    /// No provider recognises the id (`codex-mini-latest` needs the hint `openai`).
    NoProvider {
        model_id: String,
        closest: Vec<String>,
    },
    /// The hint names no provider.
    UnknownProvider { hint: String, kept: Vec<String> },
    /// The id belongs to a provider the table left out (`grok-4` is x-ai's).
    ProviderNotInTable {
        model_id: String,
        provider_id: String,
        kept: Vec<String>,
    },
    /// The provider has no such model.
    NoModel {
        model_id: String,
        provider_id: String,
        closest: Vec<String>,
    },
    /// A backtracking pattern gave up on the id: it can be neither matched nor ruled out.
    Undecidable {
        model_id: String,
        pattern: String,
        message: String,
    },
}

impl fmt::Display for Unresolved {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let closest = |f: &mut fmt::Formatter<'_>, ids: &[String]| {
            if ids.is_empty() {
                Ok(())
            } else {
                write!(f, ": closest known ids are {}", ids.join(", "))
            }
        };
        match self {
            Unresolved::TooLong { bytes } => write!(
                f,
                "model id of {bytes} bytes, longer than the {MAX_MODEL_ID_BYTES} a price lookup accepts"
            ),
            Unresolved::NoProvider {
                model_id,
                closest: c,
            } => {
                write!(
                    f,
                    "unknown model id `{}` (no provider recognises it",
                    shown(model_id)
                )?;
                write!(f, "; a provider hint may help)")?;
                closest(f, c)
            }
            Unresolved::UnknownProvider { hint, kept } => write!(
                f,
                "unknown provider `{}`: the price table has {}",
                shown(hint),
                kept.join(", ")
            ),
            Unresolved::ProviderNotInTable {
                model_id,
                provider_id,
                kept,
            } => write!(
                f,
                "model id `{}` belongs to provider {provider_id}, which is not in the price table \
                 (it has {})",
                shown(model_id),
                kept.join(", ")
            ),
            Unresolved::NoModel {
                model_id,
                provider_id,
                closest: c,
            } => {
                write!(
                    f,
                    "unknown model id `{}` (provider {provider_id})",
                    shown(model_id)
                )?;
                closest(f, c)?;
                if provider_id != "aws" && model_id.to_lowercase().contains("anthropic.") {
                    f.write_str("; an AWS Bedrock id needs the provider hint aws")?;
                }
                Ok(())
            }
            Unresolved::Undecidable {
                model_id,
                pattern,
                message,
            } => write!(
                f,
                "model id `{}` cannot be matched against the pattern `{pattern}`: {message}",
                shown(model_id)
            ),
        }
    }
}

impl std::error::Error for Unresolved {}

/// A pattern that gave up on `model_id`.
fn undecidable(model_id: &str, e: MatchError) -> Unresolved {
    Unresolved::Undecidable {
        model_id: model_id.to_string(),
        pattern: e.pattern,
        message: e.message,
    }
}

/// An id as a message shows it: control characters escaped, at most 120 characters.
fn shown(id: &str) -> String {
    let mut out: String = id.chars().take(120).flat_map(char::escape_debug).collect();
    if id.chars().nth(120).is_some() {
        out.push('…');
    }
    out
}

/// The table `--prices FILE` set, if any.
static ACTIVE: OnceLock<PriceTable> = OnceLock::new();

impl PriceTable {
    /// The bundled snapshot, parsed once (a broken file is a build defect the tests catch).
    pub fn bundled() -> &'static PriceTable {
        static TABLE: OnceLock<PriceTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            PriceTable::parse(BUNDLED_JSON, Path::new(BUNDLED_PATH))
                .expect("the bundled price table parses")
        })
    }

    /// The table in force: the one `--prices FILE` set for this run ([`PriceTable::use_for_run`]),
    /// else the bundled snapshot.
    pub fn active() -> &'static PriceTable {
        ACTIVE.get().unwrap_or_else(|| PriceTable::bundled())
    }

    /// Makes `table` the one every price of this run comes from; `false` when a table was
    /// already set (only the first call of a run counts).
    pub fn use_for_run(table: PriceTable) -> bool {
        ACTIVE.set(table).is_ok()
    }

    /// Reads a table in the bundled file's format. Bad input is an error at its `line:column`:
    /// unknown clause or price keys, patterns that do not compile, prices that are negative or
    /// above [`MAX_PRICE_PER_MTOK`], providers that are missing or listed twice.
    pub fn parse(text: &str, path: &Path) -> Result<PriceTable> {
        load::parse(text, path)
    }

    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The providers in the table, in its order.
    pub fn provider_ids(&self) -> impl Iterator<Item = &str> {
        self.providers.iter().map(|p| p.id.as_str())
    }

    /// Resolves `model_id` as genai-prices does (see the module docs), with an optional provider
    /// hint (`aws`, `bedrock`, `vertex`, `openai`...). A known id takes microseconds; an unknown
    /// one also ranks the table's known ids for the message (a fraction of a millisecond), so
    /// resolve each distinct id once, not once per log record.
    pub fn resolve(
        &self,
        model_id: &str,
        provider_hint: Option<&str>,
    ) -> Result<Resolved<'_>, Unresolved> {
        self.lookup(model_id, provider_hint)
            .map_err(|e| self.with_closest(e))
    }

    /// [`PriceTable::resolve`] without the closest ids of a failure.
    fn lookup(
        &self,
        model_id: &str,
        provider_hint: Option<&str>,
    ) -> Result<Resolved<'_>, Unresolved> {
        let longest = model_id.len().max(provider_hint.map_or(0, str::len));
        if longest > MAX_MODEL_ID_BYTES {
            return Err(Unresolved::TooLong { bytes: longest });
        }
        let undecidable = |e| undecidable(model_id, e);
        let (reference, detected) = self.provider_of(model_id, provider_hint)?;
        let Some(p) = detected.provider else {
            return Err(Unresolved::ProviderNotInTable {
                model_id: model_id.to_string(),
                provider_id: detected.id.clone(),
                kept: self.providers.iter().map(|p| p.id.clone()).collect(),
            });
        };
        let mut model = self.first_match(p, &reference, true).map_err(undecidable)?;
        if model.is_none() {
            // The compact-date retry: `gpt-5.2-20251211` as `gpt-5.2-2025-12-11`.
            let normalized = normalize_compact_dates(&reference);
            if normalized != reference {
                model = self
                    .first_match(p, &normalized, true)
                    .map_err(undecidable)?;
            }
        }
        let Some(model) = model else {
            return Err(Unresolved::NoModel {
                model_id: model_id.to_string(),
                provider_id: self.providers[p].id.clone(),
                closest: Vec::new(),
            });
        };
        Ok(Resolved {
            provider_id: &self.providers[p].id,
            model_id: &model.id,
            model_name: model.name.as_deref(),
            context_window: model.context_window,
            deprecated: model.deprecated,
            bedrock_rule: false,
            model,
            snapshot_date: self.snapshot.date,
        })
    }

    /// The lowercased id and the provider to search it in: the hint's, or the detected one.
    fn provider_of(
        &self,
        model_id: &str,
        provider_hint: Option<&str>,
    ) -> Result<(String, &Detect), Unresolved> {
        let undecidable = |e| undecidable(model_id, e);
        let mut reference = model_id.to_lowercase();
        let mut hint = provider_hint.map(str::to_string);
        // The package's one prefix rule, for the hint `litellm`: `provider/model`.
        if provider_hint.is_some_and(|h| h.to_lowercase() == "litellm")
            && let Some((prefix, rest)) = reference.split_once('/')
            && !prefix.is_empty()
            && self.by_hint(prefix).map_err(undecidable)?.is_some()
        {
            (hint, reference) = (Some(prefix.to_string()), rest.to_string());
        }
        let detected = match &hint {
            Some(h) => match self.by_hint(h).map_err(undecidable)? {
                Some(d) => Some(d),
                // `litellm` without a known prefix: detected from the id like no hint.
                None if h.to_lowercase() == "litellm" => {
                    self.by_model(&reference).map_err(undecidable)?
                }
                None => {
                    return Err(Unresolved::UnknownProvider {
                        hint: h.clone(),
                        kept: self.providers.iter().map(|p| p.id.clone()).collect(),
                    });
                }
            },
            None => self.by_model(&reference).map_err(undecidable)?,
        };
        match detected {
            Some(d) => Ok((reference, d)),
            None => Err(Unresolved::NoProvider {
                model_id: model_id.to_string(),
                closest: Vec::new(),
            }),
        }
    }

    /// [`PriceTable::resolve`] without a hint, for ids read from session logs, which name no
    /// provider. **toolbudget's rule, not the table's:** when that fails and the id looks like an
    /// AWS Bedrock id (it contains `anthropic.` or ends in `-v1:0`, as
    /// `us.anthropic.claude-haiku-4-5-20251001-v1:0` does), it is resolved again with the hint
    /// `aws`, and the result says so ([`Resolved::bedrock_rule`]). Bedrock's regional ids cost
    /// 10% more than Anthropic's list prices; without the hint the table finds no model.
    pub fn resolve_for_log(&self, model_id: &str) -> Result<Resolved<'_>, Unresolved> {
        let result = match self.lookup(model_id, None) {
            Err(e) if !matches!(e, Unresolved::TooLong { .. }) => {
                let lower = model_id.to_lowercase();
                if lower.contains("anthropic.") || lower.ends_with("-v1:0") {
                    self.lookup(model_id, Some("aws")).map(|r| Resolved {
                        bedrock_rule: true,
                        ..r
                    })
                } else {
                    Err(e)
                }
            }
            other => other,
        };
        result.map_err(|e| self.with_closest(e))
    }

    /// The provider a hint names: by id, else the first whose `provider_match` matches.
    fn by_hint(&self, hint: &str) -> Result<Option<&Detect>, MatchError> {
        let hint = normalize_hint(hint);
        if let Some(d) = self.detection.iter().find(|d| d.id == hint) {
            return Ok(Some(d));
        }
        for d in &self.detection {
            if let Some(c) = &d.provider_match
                && c.matches(&hint)?
            {
                return Ok(Some(d));
            }
        }
        Ok(None)
    }

    /// The first provider whose `model_match` matches the (lowercased) id.
    fn by_model(&self, reference: &str) -> Result<Option<&Detect>, MatchError> {
        if reference.is_empty() {
            return Ok(None);
        }
        for d in &self.detection {
            if let Some(c) = &d.model_match
                && c.matches(reference)?
            {
                return Ok(Some(d));
            }
        }
        Ok(None)
    }

    /// The first model of provider `p` whose `match` matches, then its fallbacks' (one level).
    fn first_match(
        &self,
        p: usize,
        reference: &str,
        fallback: bool,
    ) -> Result<Option<&Model>, MatchError> {
        let provider = &self.providers[p];
        for m in &provider.models {
            if m.matcher.matches(reference)? {
                return Ok(Some(m));
            }
        }
        if fallback {
            for &f in &provider.fallbacks {
                if let Some(m) = self.first_match(f, reference, false)? {
                    return Ok(Some(m));
                }
            }
        }
        Ok(None)
    }

    /// Fills in the closest known ids of a failure: for an unknown model, among the models of
    /// the provider searched and its fallbacks; for an id no provider recognises, among all.
    fn with_closest(&self, mut e: Unresolved) -> Unresolved {
        match &mut e {
            Unresolved::NoProvider { model_id, closest } => {
                *closest = self.closest(0..self.providers.len(), model_id);
            }
            Unresolved::NoModel {
                model_id,
                provider_id,
                closest,
            } => {
                if let Some(p) = self.providers.iter().position(|p| p.id == *provider_id) {
                    let searched =
                        std::iter::once(p).chain(self.providers[p].fallbacks.iter().copied());
                    *closest = self.closest(searched, model_id);
                }
            }
            _ => {}
        }
        e
    }

    /// Up to three known ids closest to `model_id` (Jaro-Winkler similarity of the lowercased
    /// id's first 64 characters, at least [`MIN_SIMILARITY`], ties by id): the models' ids and
    /// the literals of their `equals` / `starts_with` clauses.
    fn closest(&self, providers: impl Iterator<Item = usize>, model_id: &str) -> Vec<String> {
        let lower = model_id.to_lowercase();
        let probe: String = lower.chars().take(64).collect();
        // `openai/gpt-5`: the part after a provider prefix is compared too.
        let tail: Option<String> = lower
            .rsplit_once('/')
            .map(|(_, t)| t.chars().take(64).collect());
        let score = |c: &str| {
            let whole = strsim::jaro_winkler(&probe, c);
            tail.as_deref()
                .map_or(whole, |t| whole.max(strsim::jaro_winkler(t, c)))
        };
        let mut scored: Vec<(f64, &str)> = providers
            .flat_map(|p| self.providers[p].known.iter())
            .filter(|c| **c != lower)
            .map(|c| (score(c), c.as_str()))
            .filter(|(s, _)| *s >= MIN_SIMILARITY)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored.dedup_by(|a, b| a.1 == b.1);
        scored
            .into_iter()
            .take(3)
            .map(|(_, c)| c.to_string())
            .collect()
    }
}
