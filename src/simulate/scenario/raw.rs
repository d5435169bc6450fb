//! The scenario file as written: the `Raw*` structs a document is decoded into
//! (`#[derive(Deserialize)]`, `deny_unknown_fields`), and the values with a meaning beyond
//! their JSON type (whole numbers, token counts, probabilities), each refused at its
//! `line:column` by serde.

use serde::Deserialize;
use serde_json::{Map, Value};

use super::*;

// ---------------------------------------------------------------------------------------------
// The file as written. A new scenario key is a field here, a field of `Scenario`, one line in
// `Reader::scenario` and its entry in `scenarios/schema.json` (the schema test names what is
// missing). Lists whose items take two shapes (`catalogs`, `conversation`, subagent `tools`)
// are kept as values and read item by item at their own path.

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a scenario (a mapping)")]
pub(crate) struct RawScenario {
    pub(super) name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) tokenizer: Option<Tokenizer>,
    #[serde(default)]
    pub(super) render: Render,
    pub(super) counter: Option<CounterKind>,
    #[serde(default)]
    pub(super) tool_choice: ToolChoice,
    pub(super) model: Option<String>,
    /// A client profile (`simulate::client`): its policy fills the `deferred` keys not written.
    pub(super) client: Option<ClientName>,
    /// Keys are read as `Override` one by one, so an unknown key is located at itself.
    #[serde(default)]
    pub(super) model_overrides: IndexMap<String, f64>,
    pub(super) system_prompt: Option<String>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub(super) system_prompt_tokens: Option<usize>,
    pub(super) catalogs: Option<Vec<Value>>,
    #[serde(default)]
    pub(super) deferred: RawDeferred,
    #[serde(default)]
    pub(super) sizes: Sizes,
    #[serde(default)]
    pub(super) failures: Failures,
    /// Checked to be a list here; its items are read where the document holds them (a copy
    /// of a conversation with a large `input` doubled the memory of a run).
    pub(super) conversation: Option<ListShape>,
    #[serde(default)]
    pub(super) published: Vec<Published>,
    pub(super) texts: Option<RawTexts>,
}

/// A JSON file of named texts (`{"system_prompt": "…", "user_prompt": "…"}`) that fill the
/// `{{name}}` placeholders of `system_prompt` and the turns' `user:` texts, so a scenario can
/// use a third-party prompt kept outside the repository without copying it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a texts file (a mapping with path:)")]
pub(crate) struct RawTexts {
    pub(super) path: String,
    #[serde(default)]
    pub(super) optional: bool,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a catalog entry (a path, or a mapping with path:)"
)]
pub(crate) struct RawCatalogEntry {
    pub(super) path: String,
    pub(super) server: Option<String>,
    pub(super) connected: Option<bool>,
    pub(super) optional: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, expecting = "deferred settings (a mapping)")]
pub(crate) struct RawDeferred {
    pub(super) when: Option<When>,
    pub(super) defer_mcp: Option<bool>,
    #[serde(default)]
    pub(super) defer_builtins: Vec<String>,
    #[serde(default)]
    pub(super) always_load: Vec<String>,
    #[serde(default)]
    pub(super) always_load_servers: Vec<String>,
    pub(super) scorer: Option<ScorerSpec>,
    #[serde(default, deserialize_with = "opt_count")]
    pub(super) max_results: Option<usize>,
    pub(super) discovery: Option<Discovery>,
    pub(super) listing: Option<Listing>,
    pub(super) list_style: Option<ListStyle>,
    pub(super) reveal: Option<Reveal>,
    pub(super) retry: Option<Vec<RetryStep>>,
    #[serde(default)]
    pub(super) depends_on: IndexMap<String, Vec<String>>,
    pub(super) bm25: Option<RawBm25>,
    pub(super) compact_keeps_loaded: Option<bool>,
    pub(super) resume_rediscovers: Option<bool>,
    pub(super) call_bridge: Option<bool>,
    pub(super) namespace: Option<Namespace>,
}

/// `deferred.bm25`: each key given replaces its default.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "bm25 settings (a mapping with k1, b, weights)"
)]
pub(crate) struct RawBm25 {
    #[serde(default, deserialize_with = "opt_nonneg")]
    pub(super) k1: Option<f64>,
    #[serde(default, deserialize_with = "opt_probability")]
    pub(super) b: Option<f64>,
    pub(super) weights: Option<RawBm25Weights>,
}

/// Field weights by field name (`search::Field::LEXICAL`), each optional.
#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "bm25 field weights (a mapping of name, description, argument_names, argument_descriptions)"
)]
pub(crate) struct RawBm25Weights {
    #[serde(default, deserialize_with = "opt_nonneg")]
    pub(super) name: Option<f64>,
    #[serde(default, deserialize_with = "opt_nonneg")]
    pub(super) description: Option<f64>,
    #[serde(default, deserialize_with = "opt_nonneg")]
    pub(super) argument_names: Option<f64>,
    #[serde(default, deserialize_with = "opt_nonneg")]
    pub(super) argument_descriptions: Option<f64>,
}

impl RawBm25 {
    pub(super) fn apply(self, mut params: Bm25Params) -> Bm25Params {
        params.k1 = self.k1.unwrap_or(params.k1);
        params.b = self.b.unwrap_or(params.b);
        if let Some(w) = self.weights {
            let given = [
                w.name,
                w.description,
                w.argument_names,
                w.argument_descriptions,
            ];
            for (slot, v) in params.weights.iter_mut().zip(given) {
                *slot = v.unwrap_or(*slot);
            }
        }
        params
    }
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a turn (a mapping with user:) or an event (event:)"
)]
pub(crate) struct RawTurn {
    pub(super) user: String,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub(super) tokens: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub(super) reply_tokens: Option<usize>,
    #[serde(default)]
    pub(super) calls: Vec<RawCall>,
    pub(super) subagent: Option<RawSubagent>,
    #[serde(default, deserialize_with = "opt_count")]
    pub(super) repeat: Option<usize>,
    pub(super) must_not_call: Option<Vec<String>>,
    pub(super) order: Option<super::CallOrder>,
    #[serde(default, deserialize_with = "opt_count")]
    pub(super) max_calls: Option<usize>,
    #[serde(default)]
    pub(super) no_duplicate_calls: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "a call (a mapping with tool:)")]
pub(crate) struct RawCall {
    pub(super) tool: String,
    pub(super) query: Option<String>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub(super) result_tokens: Option<usize>,
    pub(super) result: Option<String>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub(super) call_tokens: Option<usize>,
    #[serde(default, deserialize_with = "opt_input")]
    pub(super) input: Option<Map<String, Value>>,
    #[serde(default)]
    pub(super) parallel: bool,
    pub(super) loads: Option<Vec<String>>,
    pub(super) subagent: Option<RawSubagent>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a subagent (a mapping with conversation:)"
)]
pub(crate) struct RawSubagent {
    /// `"*"` or a list of tool ids.
    pub(super) tools: Option<Value>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub(super) system_prompt_tokens: Option<usize>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub(super) result_tokens: Option<usize>,
    #[serde(deserialize_with = "tight_list")]
    pub(super) conversation: Vec<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, expecting = "an event (a mapping with event:)")]
pub(crate) struct RawEvent {
    pub(super) event: EventKind,
    pub(super) server: Option<String>,
    #[serde(default, deserialize_with = "opt_tokens")]
    pub(super) summary_tokens: Option<usize>,
    pub(super) keep_discovered: Option<bool>,
    pub(super) rediscover: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EventKind {
    Connect,
    Disconnect,
    Clear,
    Compact,
    Resume,
}

crate::named_enum!(EventKind, "event");

// ---------------------------------------------------------------------------------------------
// Values with a meaning beyond their JSON type.

/// A count read from a number that must be whole and ≥ 0 (`5` and `5.0` both; YAML writes
/// either). `what` is the message's "expected …".
pub(crate) struct Whole(&'static str);

impl serde::de::Visitor<'_> for Whole {
    type Value = usize;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.0)
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> std::result::Result<usize, E> {
        usize::try_from(v)
            .ok()
            .filter(|&n| n as f64 <= MAX_WHOLE)
            .ok_or_else(|| E::custom(too_large(v as f64, self.0)))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> std::result::Result<usize, E> {
        match u64::try_from(v) {
            Ok(u) => self.visit_u64(u),
            Err(_) => Err(E::invalid_value(serde::de::Unexpected::Signed(v), &self)),
        }
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> std::result::Result<usize, E> {
        if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_WHOLE {
            Ok(v as usize)
        } else if v > MAX_WHOLE {
            Err(E::custom(too_large(v, self.0)))
        } else {
            Err(E::invalid_value(serde::de::Unexpected::Float(v), &self))
        }
    }
}

/// Larger than any real size, small enough to add up without overflow.
pub(crate) const MAX_WHOLE: f64 = 1e12;

pub(crate) fn too_large(v: f64, what: &str) -> String {
    format!(
        "{} is too large: expected {what}, at most {MAX_WHOLE:.0}",
        short(v)
    )
}

/// A number as a message shows it: as written up to 10¹⁵, past that in exponent form (`1e300`,
/// not its 301 digits).
pub(crate) fn short(v: f64) -> String {
    if v.abs() < 1e15 {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

pub(crate) struct Tokens(usize);

impl<'de> Deserialize<'de> for Tokens {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(Whole("a whole number of tokens ≥ 0"))
            .map(Tokens)
    }
}

pub(crate) struct Count(usize);

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(Whole("a whole number ≥ 0")).map(Count)
    }
}

pub(crate) fn opt_tokens<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<usize>, D::Error> {
    Ok(Option::<Tokens>::deserialize(d)?.map(|t| t.0))
}

/// A list of values copied at their exact size (`TightValue`): a conversation is copied out of
/// its document before its turns are read, and serde_json's own copy gave each small object
/// three times the room it needs.
fn tight_list<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<Value>, D::Error> {
    let items = Vec::<crate::document::TightValue>::deserialize(d)?;
    Ok(items.into_iter().map(|t| t.0).collect())
}

/// A list, checked to be one without keeping anything of it.
pub(crate) struct ListShape;

impl<'de> Deserialize<'de> for ListShape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ListShape;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<ListShape, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(ListShape)
            }
        }
        d.deserialize_seq(V)
    }
}

/// A call's `input`: a mapping, copied at its exact size (`TightValue`; serde_json's own copy
/// gave each small object three times the room it needs).
fn opt_input<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Map<String, Value>>, D::Error> {
    use serde::de::Unexpected;
    let crate::document::TightValue(v) = crate::document::TightValue::deserialize(d)?;
    let unexpected = match &v {
        Value::Object(_) | Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(_) => Unexpected::Other("a number"),
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
    };
    match v {
        Value::Object(map) => Ok(Some(map)),
        Value::Null => Ok(None),
        _ => Err(serde::de::Error::invalid_type(unexpected, &"a map")),
    }
}

pub(crate) fn opt_count<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<usize>, D::Error> {
    Ok(Option::<Count>::deserialize(d)?.map(|t| t.0))
}

/// A finite number ≥ 0.
pub(crate) fn nonneg<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    let v = f64::deserialize(d)?;
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Float(v),
            &"a number ≥ 0",
        ))
    }
}

pub(crate) fn opt_nonneg<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    struct NonNeg(#[serde(deserialize_with = "nonneg")] f64);
    Ok(Option::<NonNeg>::deserialize(d)?.map(|n| n.0))
}

pub(crate) fn opt_probability<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    struct P(#[serde(deserialize_with = "probability")] f64);
    Ok(Option::<P>::deserialize(d)?.map(|n| n.0))
}

pub(crate) fn probability<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<f64, D::Error> {
    let v = nonneg(d)?;
    if v > 1.0 {
        return Err(serde::de::Error::invalid_value(
            serde::de::Unexpected::Float(v),
            &"a probability between 0 and 1",
        ));
    }
    Ok(v)
}

impl std::str::FromStr for When {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s == "always" {
            return Ok(When::Always);
        }
        if s == "never" {
            return Ok(When::Never);
        }
        if let Some(n) = s.strip_prefix("over:") {
            return n.parse::<usize>().map(When::Over).map_err(|_| {
                format!("expected \"over:N\" with N a whole number of tools, found {s:?}")
            });
        }
        match s.strip_prefix("auto:").map(str::parse::<f64>) {
            Some(Ok(n)) if n.is_finite() && (0.0..=100.0).contains(&n) => Ok(When::Auto(n)),
            _ => Err(format!(
                "expected \"always\", \"never\", \"over:N\" (more than N tools) or \"auto:N\" with N a percentage 0-100, found {s:?}"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for When {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}
