//! Reading a price table: the JSON of `data/prices/genai-prices.json` (genai-prices' own
//! provider and model shapes, plus `source` and `provider_detection`).
//!
//! Every part that can be wrong is kept as a borrowed `RawValue` until it is checked, so an
//! error points at the `line:column` of the offending value: a malformed clause, a pattern that
//! does not compile, a price that is negative or absurd.

use std::path::Path;

use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::clause::{Clause, Pattern};
use super::cost::{Date, ModelPrices, Price, Tier};
use super::{
    Detect, MAX_CLAUSE_DEPTH, MAX_PATTERN_BYTES, MAX_PRICE_PER_MTOK, Model, PriceTable, Provider,
    Snapshot,
};
use crate::error::{Error, Position, Result, position_of_offset};

/// genai-prices 0.2.5's price keys (`data_units.py`) that toolbudget reads.
const PRICED: [&str; 6] = [
    "input_mtok",
    "output_mtok",
    "cache_write_mtok",
    "cache_write_1h_mtok",
    "cache_read_mtok",
    "requests_kcount",
];

/// Price keys that would change what text tokens cost in ways toolbudget does not model (a
/// separate text-modality price, a 5-minute write price beside the generic one): refused.
const UNSUPPORTED: [&str; 7] = [
    "cache_write_5m_mtok",
    "input_text_mtok",
    "output_text_mtok",
    "cache_text_read_mtok",
    "cache_text_write_mtok",
    "cache_text_write_5m_mtok",
    "cache_text_write_1h_mtok",
];

/// The package's other price keys: checked like every price, then left aside (audio, images,
/// video, searches, hours...). toolbudget's usage has no such units, so they would cost nothing.
const OTHER: [&str; 40] = [
    "input_audio_mtok",
    "output_audio_mtok",
    "cache_audio_read_mtok",
    "cache_audio_write_mtok",
    "cache_audio_write_5m_mtok",
    "cache_audio_write_1h_mtok",
    "input_image_mtok",
    "output_image_mtok",
    "cache_image_read_mtok",
    "cache_image_write_mtok",
    "cache_image_write_5m_mtok",
    "cache_image_write_1h_mtok",
    "input_video_mtok",
    "output_video_mtok",
    "cache_video_read_mtok",
    "cache_video_write_mtok",
    "cache_video_write_5m_mtok",
    "cache_video_write_1h_mtok",
    "input_tool_mtok",
    "input_text_tool_mtok",
    "input_audio_tool_mtok",
    "input_image_tool_mtok",
    "input_video_tool_mtok",
    "output_reasoning_mtok",
    "output_text_reasoning_mtok",
    "output_audio_reasoning_mtok",
    "output_image_reasoning_mtok",
    "output_video_reasoning_mtok",
    "output_citation_mtok",
    "output_text_citation_mtok",
    "output_audio_citation_mtok",
    "output_image_citation_mtok",
    "output_video_citation_mtok",
    "input_mchars",
    "input_text_messages_kcount",
    "audio_hours",
    "input_audio_hours",
    "output_audio_hours",
    "input_gpixels",
    "input_document_kpages",
];

/// The rest of the package's keys, per thousand: also left aside.
const OTHER_KCOUNT: [&str; 6] = [
    "input_annotated_document_kpages",
    "rerank_searches_kcount",
    "web_searches_kcount",
    "social_searches_kcount",
    "storage_searches_kcount",
    "code_executions_kcount",
];

const CLAUSES: &str = "equals, starts_with, ends_with, contains, regex, or, and";

#[derive(Deserialize)]
struct RawTable<'a> {
    #[serde(borrow)]
    source: &'a RawValue,
    #[serde(borrow, default)]
    provider_detection: Option<&'a RawValue>,
    #[serde(borrow)]
    providers: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawSource {
    package: String,
    version: String,
    snapshot_date: String,
}

#[derive(Deserialize)]
struct RawDetect<'a> {
    id: String,
    #[serde(borrow, default)]
    model_match: Option<&'a RawValue>,
    #[serde(borrow, default)]
    provider_match: Option<&'a RawValue>,
    in_snapshot: bool,
}

#[derive(Deserialize)]
struct RawProvider<'a> {
    id: String,
    #[serde(borrow, default)]
    model_match: Option<&'a RawValue>,
    #[serde(borrow, default)]
    provider_match: Option<&'a RawValue>,
    #[serde(default)]
    fallback_model_providers: Option<Vec<String>>,
    #[serde(borrow)]
    models: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct RawModel<'a> {
    id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(rename = "match", borrow)]
    matcher: &'a RawValue,
    #[serde(default)]
    context_window: Option<u64>,
    #[serde(default)]
    deprecated: Option<bool>,
    #[serde(borrow)]
    prices: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConditional<'a> {
    #[serde(borrow, default)]
    constraint: Option<&'a RawValue>,
    #[serde(borrow)]
    prices: &'a RawValue,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTiered {
    base: f64,
    tiers: Vec<RawTier>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTier {
    start: u64,
    price: f64,
}

/// The text being read, for positions.
struct Cx<'a> {
    text: &'a str,
    path: &'a Path,
}

impl<'a> Cx<'a> {
    /// The position of a raw value: it borrows from `text`, so its address says where it is.
    fn at(&self, raw: &RawValue) -> Option<Position> {
        let offset = raw
            .get()
            .as_ptr()
            .addr()
            .checked_sub(self.text.as_ptr().addr())?;
        (offset <= self.text.len()).then(|| position_of_offset(self.text, offset))
    }

    fn error(&self, raw: &RawValue, message: impl Into<String>) -> Error {
        Error::input(self.path, self.at(raw), message)
    }

    /// Reads `raw` as `T`; a serde error is placed where it happened inside `raw`.
    fn read<T: Deserialize<'a>>(&self, raw: &'a RawValue, what: &str) -> Result<T> {
        serde_json::from_str(raw.get()).map_err(|e| self.serde_error(raw.get(), &e, what))
    }

    fn read_owned<T: DeserializeOwned>(&self, raw: &RawValue, what: &str) -> Result<T> {
        serde_json::from_str(raw.get()).map_err(|e| self.serde_error(raw.get(), &e, what))
    }

    /// A serde error in `part` (a slice of `text`), at its absolute position.
    fn serde_error(&self, part: &str, e: &serde_json::Error, what: &str) -> Error {
        let base = part
            .as_ptr()
            .addr()
            .saturating_sub(self.text.as_ptr().addr());
        // serde_json counts 1-based lines and 1-based byte columns.
        let line_start: usize = part
            .split_inclusive('\n')
            .take(e.line().saturating_sub(1))
            .map(str::len)
            .sum();
        let mut offset = (base + line_start + e.column().saturating_sub(1)).min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let message = e.to_string();
        let message = message
            .rfind(" at line ")
            .map_or(message.as_str(), |i| &message[..i]);
        let position = (e.line() > 0).then(|| position_of_offset(self.text, offset));
        Error::input(self.path, position, format!("{what}: {message}"))
    }
}

/// Parses a whole price table.
pub(super) fn parse(text: &str, path: &Path) -> Result<PriceTable> {
    let cx = Cx { text, path };
    let whole = |e: serde_json::Error| cx.serde_error(text, &e, "invalid price table");
    let start = text.len() - text.trim_start().len();
    if !text[start..].is_empty() && !text[start..].starts_with('{') {
        return Err(Error::input(
            path,
            Some(position_of_offset(text, start)),
            "invalid price table: expected an object with `source` and `providers`",
        ));
    }
    let raw: RawTable = serde_json::from_str(text).map_err(whole)?;
    let source: RawSource = cx.read_owned(raw.source, "source")?;
    let date = Date::parse(&source.snapshot_date).ok_or_else(|| {
        cx.error(
            raw.source,
            format!(
                "source.snapshot_date `{}` is not a date YYYY-MM-DD",
                source.snapshot_date
            ),
        )
    })?;
    let mut providers = Vec::with_capacity(raw.providers.len());
    let mut own_detection = Vec::with_capacity(raw.providers.len());
    let mut fallbacks = Vec::with_capacity(raw.providers.len());
    for &raw_provider in &raw.providers {
        let (provider, mut detect, fallback) = provider(&cx, raw_provider)?;
        detect.provider = Some(providers.len());
        if providers.iter().any(|p: &Provider| p.id == provider.id) {
            return Err(cx.error(
                raw_provider,
                format!("provider `{}` is in the table twice", provider.id),
            ));
        }
        providers.push(provider);
        own_detection.push(detect);
        fallbacks.push((raw_provider, fallback));
    }
    for (i, (raw_provider, fallback)) in fallbacks.into_iter().enumerate() {
        for id in fallback {
            let Some(j) = providers.iter().position(|p| p.id == id) else {
                return Err(cx.error(
                    raw_provider,
                    format!(
                        "provider `{}` falls back to provider `{id}`, which is not in the table",
                        providers[i].id
                    ),
                ));
            };
            providers[i].fallbacks.push(j);
        }
    }
    let detection = match raw.provider_detection {
        Some(raw_detection) => detection(&cx, raw_detection, &providers)?,
        None => own_detection,
    };
    Ok(PriceTable {
        snapshot: Snapshot {
            package: source.package,
            version: source.version,
            date,
        },
        detection,
        providers,
    })
}

/// One provider, its detection entry (from its own clauses) and the ids it falls back to.
fn provider<'a>(cx: &Cx<'a>, raw: &'a RawValue) -> Result<(Provider, Detect, Vec<String>)> {
    let p: RawProvider = cx.read(raw, "provider")?;
    let what = format!("provider `{}`", p.id);
    let model_match = p.model_match.map(|c| clause(cx, c, &what, 0)).transpose()?;
    let provider_match = p
        .provider_match
        .map(|c| clause(cx, c, &what, 0))
        .transpose()?;
    let mut models = Vec::with_capacity(p.models.len());
    for (i, &m) in p.models.iter().enumerate() {
        models.push(model(cx, m, &p.id, i)?);
    }
    let detect = Detect {
        id: p.id.clone(),
        model_match,
        provider_match,
        provider: None,
    };
    let mut known: Vec<&str> = Vec::new();
    for m in &models {
        known.push(&m.id);
        m.matcher.literals(&mut known);
    }
    let mut known: Vec<String> = known.into_iter().map(str::to_lowercase).collect();
    known.retain(|k| !k.is_empty());
    known.sort_unstable();
    known.dedup();
    let provider = Provider {
        id: p.id,
        fallbacks: Vec::new(),
        models,
        known,
    };
    Ok((
        provider,
        detect,
        p.fallback_model_providers.unwrap_or_default(),
    ))
}

/// The package's provider list in its order, for detection: each entry that is in the table
/// points at its provider; every provider of the table must be listed.
fn detection<'a>(cx: &Cx<'a>, raw: &'a RawValue, providers: &[Provider]) -> Result<Vec<Detect>> {
    let entries: Vec<&RawValue> = cx.read(raw, "provider_detection")?;
    let mut out: Vec<Detect> = Vec::with_capacity(entries.len());
    for &entry in &entries {
        let d: RawDetect = cx.read(entry, "provider_detection entry")?;
        let what = format!("provider_detection `{}`", d.id);
        if out.iter().any(|o| o.id == d.id) {
            return Err(cx.error(entry, format!("{what} is listed twice")));
        }
        let provider = providers.iter().position(|p| p.id == d.id);
        match (d.in_snapshot, provider) {
            (true, None) => {
                return Err(cx.error(
                    entry,
                    format!("{what} says in_snapshot, but `providers` has no such provider"),
                ));
            }
            (false, Some(_)) => {
                return Err(cx.error(
                    entry,
                    format!("{what} says not in_snapshot, but `providers` has it"),
                ));
            }
            _ => {}
        }
        let model_match = d.model_match.map(|c| clause(cx, c, &what, 0)).transpose()?;
        let provider_match = d
            .provider_match
            .map(|c| clause(cx, c, &what, 0))
            .transpose()?;
        out.push(Detect {
            id: d.id,
            model_match,
            provider_match,
            provider,
        });
    }
    if let Some(missing) = providers.iter().find(|p| !out.iter().any(|d| d.id == p.id)) {
        return Err(cx.error(
            raw,
            format!(
                "provider_detection does not list provider `{}`, so it could never be chosen",
                missing.id
            ),
        ));
    }
    Ok(out)
}

fn model<'a>(cx: &Cx<'a>, raw: &'a RawValue, provider: &str, index: usize) -> Result<Model> {
    let m: RawModel = cx.read(raw, &format!("provider `{provider}`, model #{}", index + 1))?;
    let what = format!("provider `{provider}`, model `{}`", m.id);
    let matcher = clause(cx, m.matcher, &what, 0)?;
    let prices = conditional_prices(cx, m.prices, &what)?;
    Ok(Model {
        id: m.id,
        name: m.name,
        matcher,
        context_window: m.context_window,
        deprecated: m.deprecated.unwrap_or(false),
        prices,
    })
}

/// A clause: an object with exactly one of the clause keys.
fn clause<'a>(cx: &Cx<'a>, raw: &'a RawValue, what: &str, depth: usize) -> Result<Clause> {
    if depth >= MAX_CLAUSE_DEPTH {
        return Err(cx.error(
            raw,
            format!("{what}: clauses nested deeper than {MAX_CLAUSE_DEPTH} levels"),
        ));
    }
    let map: IndexMap<String, &RawValue> = cx.read(raw, &format!("{what}: a clause"))?;
    let mut entries = map.into_iter();
    let (Some((key, value)), None) = (entries.next(), entries.next()) else {
        return Err(cx.error(
            raw,
            format!("{what}: a clause is an object with exactly one key of {CLAUSES}"),
        ));
    };
    let text = || -> Result<String> {
        cx.read_owned::<String>(value, &format!("{what}: `{key}`"))
            .map(|s| s.to_lowercase())
    };
    Ok(match key.as_str() {
        "equals" => Clause::Equals(text()?),
        "starts_with" => Clause::StartsWith(text()?),
        "ends_with" => Clause::EndsWith(text()?),
        "contains" => Clause::Contains(text()?),
        "regex" => {
            // The pattern itself is case-sensitive (it runs on the lowercased id).
            let source: String = cx.read_owned(value, &format!("{what}: `regex`"))?;
            if source.len() > MAX_PATTERN_BYTES {
                return Err(cx.error(
                    value,
                    format!(
                        "{what}: the pattern is {} bytes, more than the {MAX_PATTERN_BYTES} allowed",
                        source.len()
                    ),
                ));
            }
            let pattern = Pattern::compile(&source).map_err(|e| {
                cx.error(value, format!("{what}: the pattern does not compile: {e}"))
            })?;
            Clause::Regex(pattern)
        }
        "or" | "and" => {
            let items: Vec<&RawValue> = cx.read(value, &format!("{what}: `{key}`"))?;
            let clauses = items
                .into_iter()
                .map(|c| clause(cx, c, what, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            if key == "or" {
                Clause::Or(clauses)
            } else {
                Clause::And(clauses)
            }
        }
        _ => {
            return Err(cx.error(
                raw,
                format!("{what}: unknown clause `{key}`, expected one of {CLAUSES}"),
            ));
        }
    })
}

/// `prices`: one price object, or a list of `{constraint?, prices}` (a start date each).
fn conditional_prices<'a>(
    cx: &Cx<'a>,
    raw: &'a RawValue,
    what: &str,
) -> Result<Vec<(Option<Date>, ModelPrices)>> {
    if !raw.get().starts_with('[') {
        return Ok(vec![(None, model_prices(cx, raw, what)?)]);
    }
    let list: Vec<RawConditional> = cx.read(raw, &format!("{what}: `prices`"))?;
    if list.is_empty() {
        return Err(cx.error(raw, format!("{what}: `prices` is an empty list")));
    }
    let mut out = Vec::with_capacity(list.len());
    for c in list {
        let start = c
            .constraint
            .map(|raw| start_date(cx, raw, what))
            .transpose()?;
        out.push((start, model_prices(cx, c.prices, what)?));
    }
    Ok(out)
}

/// A constraint: only `{"start_date": "YYYY-MM-DD"}` (prices are looked up by date).
fn start_date<'a>(cx: &Cx<'a>, raw: &'a RawValue, what: &str) -> Result<Date> {
    let map: IndexMap<String, String> = cx
        .read_owned(raw, &format!("{what}: a constraint"))
        .map_err(|_| {
            cx.error(
                raw,
                format!(
                    "{what}: a constraint must be {{\"start_date\": \"YYYY-MM-DD\"}} \
                     (time-of-day prices are not supported)"
                ),
            )
        })?;
    match (map.len(), map.get("start_date")) {
        (1, Some(d)) => Date::parse(d).ok_or_else(|| {
            cx.error(
                raw,
                format!("{what}: start_date `{d}` is not a date YYYY-MM-DD"),
            )
        }),
        _ => Err(cx.error(
            raw,
            format!(
                "{what}: a constraint must be {{\"start_date\": \"YYYY-MM-DD\"}} \
                 (time-of-day prices are not supported)"
            ),
        )),
    }
}

/// One price object: every key known, every value a sane price.
fn model_prices<'a>(cx: &Cx<'a>, raw: &'a RawValue, what: &str) -> Result<ModelPrices> {
    let map: IndexMap<String, &RawValue> = cx.read(raw, &format!("{what}: a price object"))?;
    let mut prices = ModelPrices::default();
    for (key, value) in map {
        let key = key.as_str();
        if UNSUPPORTED.contains(&key) {
            return Err(cx.error(
                value,
                format!(
                    "{what}: price key `{key}` is not supported (toolbudget prices {})",
                    PRICED.join(", ")
                ),
            ));
        }
        if !PRICED.contains(&key) && !OTHER.contains(&key) && !OTHER_KCOUNT.contains(&key) {
            return Err(cx.error(
                value,
                format!(
                    "{what}: unknown price key `{key}` (genai-prices 0.2.5 has {} and others per \
                     unit, such as input_audio_mtok or web_searches_kcount)",
                    PRICED.join(", ")
                ),
            ));
        }
        let p = price(cx, value, &format!("{what}: `{key}`"))?;
        let slot = match key {
            "input_mtok" => &mut prices.input,
            "output_mtok" => &mut prices.output,
            "cache_write_mtok" => &mut prices.cache_write,
            "cache_write_1h_mtok" => &mut prices.cache_write_1h,
            "cache_read_mtok" => &mut prices.cache_read,
            "requests_kcount" => &mut prices.requests,
            _ => continue,
        };
        *slot = Some(p);
    }
    Ok(prices)
}

/// A number, or `{base, tiers: [{start, price}]}`; tiers sorted by start, as the package does.
fn price<'a>(cx: &Cx<'a>, raw: &'a RawValue, what: &str) -> Result<Price> {
    let check = |value: f64| -> Result<f64> {
        if value.is_nan() || value < 0.0 {
            Err(cx.error(
                raw,
                format!("{what} is {value}: a price cannot be negative"),
            ))
        } else if value > MAX_PRICE_PER_MTOK {
            Err(cx.error(
                raw,
                format!(
                    "{what} is {value}, more than the {MAX_PRICE_PER_MTOK} USD per unit allowed \
                     (prices are per million tokens)"
                ),
            ))
        } else {
            Ok(value)
        }
    };
    if raw.get().starts_with('{') {
        let t: RawTiered = cx.read_owned(raw, what)?;
        let mut tiers = Vec::with_capacity(t.tiers.len());
        for tier in t.tiers {
            tiers.push(Tier {
                start: tier.start,
                price: check(tier.price)?,
            });
        }
        tiers.sort_by_key(|t| t.start);
        Ok(Price::Tiered {
            base: check(t.base)?,
            tiers,
        })
    } else {
        Ok(Price::Flat(check(cx.read_owned::<f64>(raw, what)?)?))
    }
}
