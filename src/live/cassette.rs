//! The cassette: every request `toolbudget live` sent and the answer it got, keyed by the
//! sha256 of the provider, the run index and the canonical request (keys sorted, compact), so a
//! recorded run replays with `--offline` byte for byte, without a key or a network.
//!
//! Modelled on the count_tokens cache (`counter::api`): entries sorted by key, a checksum over
//! them, a file that does not parse or fails its checksum discarded (and refused offline),
//! never trusted. Headers are never stored, so no key reaches the file; the request body and
//! the answer are stored as sent and received (one entry a line, so diffs stay readable). The
//! latency recorded with an answer is the latency a replay reports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::provider::Provider;

pub const FORMAT: &str = "toolbudget-live-cassette/1";
/// The longest latency a cassette may record, ms: a day, the longest `--timeout-secs`.
pub const MAX_LATENCY_MS: f64 = 86_400_000.0;

/// `run 0`, `runs 0-2`, or `runs 0, 2, 5`.
fn runs_text(runs: &std::collections::BTreeSet<u32>) -> String {
    let v: Vec<u32> = runs.iter().copied().collect();
    match v.as_slice() {
        [one] => format!("run {one}"),
        [first, .., last] if (last - first) as usize + 1 == v.len() => {
            format!("runs {first}-{last}")
        }
        _ => {
            let shown: Vec<String> = v.iter().take(8).map(u32::to_string).collect();
            format!(
                "runs {}{}",
                shown.join(", "),
                if v.len() > 8 { ", ..." } else { "" }
            )
        }
    }
}

/// One recorded exchange.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub provider: Provider,
    /// The repeat this request belongs to (0-based): the same request in another run is
    /// another exchange.
    pub run: u32,
    /// The body as sent, canonical.
    pub request: Value,
    /// The answer's body (a JSON value; a body that was not JSON is never recorded).
    pub response: Value,
    /// Milliseconds from sending to the whole answer, retries excluded (the last attempt).
    pub latency_ms: f64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    format: String,
    checksum: String,
    entries: BTreeMap<String, Entry>,
}

/// What loading found.
#[derive(Debug, Clone, PartialEq)]
pub enum Load {
    Missing,
    Loaded(usize),
    /// A cassette of another version, unparsable, or with a failed checksum: not used, and
    /// written anew.
    Discarded(String),
    /// Not a cassette at all (someone's file): never written over.
    Foreign(String),
}

#[derive(Debug, Clone, Default)]
pub struct Cassette {
    entries: BTreeMap<String, Entry>,
    dirty: bool,
}

/// `v` with every object's keys sorted (arrays keep their order).
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::with_capacity(m.len());
            for k in keys {
                out.insert(k.clone(), canonical(&m[k]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The key of a request: sha256 of `provider \n run \n canonical body`.
pub fn key(provider: Provider, run: u32, canonical_body: &Value) -> String {
    let mut h = Sha256::new();
    h.update(provider.name().as_bytes());
    h.update(b"\n");
    h.update(run.to_string().as_bytes());
    h.update(b"\n");
    h.update(canonical_body.to_string().as_bytes());
    hex(&h.finalize())
}

fn checksum(entries: &BTreeMap<String, Entry>) -> String {
    hex(&Sha256::digest(
        serde_json::to_vec(entries).expect("entries serialize"),
    ))
}

impl Cassette {
    /// Reads the cassette file `path` holds as `bytes`, refused (located) when it holds more
    /// JSON values than any input may ([`crate::document::MAX_JSON_NODES`]), counted before
    /// anything is built: a 30 MB cassette of 400,000 tool calls took 2.1 GB. Otherwise as
    /// [`Cassette::from_bytes`].
    pub fn read(path: &std::path::Path, bytes: &[u8]) -> crate::error::Result<(Cassette, Load)> {
        crate::document::check_json_values(path, bytes, crate::document::MAX_JSON_NODES)?;
        Ok(Self::from_bytes(bytes))
    }

    /// Reads a cassette file's bytes; anything doubtful is discarded.
    pub fn from_bytes(bytes: &[u8]) -> (Cassette, Load) {
        let kind = FORMAT.split('/').next().unwrap_or(FORMAT);
        if !crate::input::is_own_kind(bytes, kind) {
            let why = format!("its \"format\" is not {kind}/N");
            return (Cassette::rebuilt(), Load::Foreign(why));
        }
        match serde_json::from_slice::<File>(bytes) {
            Ok(f) if f.format != FORMAT => (
                Cassette::rebuilt(),
                Load::Discarded(format!("unknown format {:?}", f.format)),
            ),
            Ok(f) if checksum(&f.entries) != f.checksum => (
                Cassette::rebuilt(),
                Load::Discarded("checksum mismatch".into()),
            ),
            Ok(f) => {
                let n = f.entries.len();
                (
                    Cassette {
                        entries: f.entries,
                        dirty: false,
                    },
                    Load::Loaded(n),
                )
            }
            Err(e) => (Cassette::rebuilt(), Load::Discarded(e.to_string())),
        }
    }

    fn rebuilt() -> Cassette {
        Cassette {
            entries: BTreeMap::new(),
            dirty: true,
        }
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.get(key)
    }

    pub fn insert(&mut self, key: String, entry: Entry) {
        self.entries.insert(key, entry);
        self.dirty = true;
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether exchanges were added (or a bad file discarded) since loading.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Keeps only the entries whose keys are in `used` (a re-recording drops stale ones).
    pub fn retain(&mut self, used: &std::collections::BTreeSet<String>) {
        let before = self.entries.len();
        self.entries.retain(|k, _| used.contains(k));
        self.dirty |= self.entries.len() != before;
    }

    /// What the cassette holds, for the message of a missing answer: each provider and model
    /// with its runs (`it holds 24 answers: openai-chat "m", run 0`).
    pub fn holdings(&self) -> String {
        let mut by: BTreeMap<(&str, String), (usize, std::collections::BTreeSet<u32>)> =
            BTreeMap::new();
        for e in self.entries.values() {
            let model = e
                .request
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("(no model)");
            let slot = by
                .entry((e.provider.name(), super::conversation::shown(&model.into())))
                .or_default();
            slot.0 += 1;
            slot.1.insert(e.run);
        }
        if by.is_empty() {
            return "the cassette is empty".into();
        }
        let parts: Vec<String> = by
            .iter()
            .take(5)
            .map(|((provider, model), (n, runs))| {
                format!("{n} of {provider} model {model} in {}", runs_text(runs))
            })
            .collect();
        let more = if by.len() > parts.len() { ", ..." } else { "" };
        format!(
            "it holds {} answer{}: {}{more}",
            self.entries.len(),
            if self.entries.len() == 1 { "" } else { "s" },
            parts.join("; ")
        )
    }

    /// The first entry, in key order, holding a number no reader can use: its key, the path
    /// of the value inside the entry, and why.
    pub fn out_of_range(&self) -> Option<(&str, Vec<&'static str>, String)> {
        self.entries.iter().find_map(|(k, e)| {
            if !(0.0..=MAX_LATENCY_MS).contains(&e.latency_ms) {
                return Some((
                    k.as_str(),
                    vec!["latency_ms"],
                    format!(
                        "latency_ms is {}, not a latency (from 0 to {MAX_LATENCY_MS} ms, a day: \
                         the longest --timeout-secs)",
                        super::conversation::shown(&Value::from(e.latency_ms))
                    ),
                ));
            }
            let (mut at, why) = e.provider.check_usage(&e.response).err()?;
            at.insert(0, "response");
            Some((k.as_str(), at, why))
        })
    }

    /// Refuses a cassette holding a number out of range, at its `line:column` in the file.
    pub fn check_numbers(&self, path: &std::path::Path, bytes: &[u8]) -> crate::error::Result<()> {
        let Some((key, at, why)) = self.out_of_range() else {
            return Ok(());
        };
        let message = format!(
            "the cassette's answer holds {why}; delete the entry (or the cassette) and record \
             it again"
        );
        let mut place = vec![
            crate::document::Seg::from("entries"),
            crate::document::Seg::from(key),
        ];
        place.extend(at.iter().map(|&s| crate::document::Seg::from(s)));
        Err(
            match crate::document::Document::parse(path, bytes.to_vec()) {
                Ok(doc) => doc.error_at(&place, message),
                Err(_) => crate::error::Error::input(path, None, message),
            },
        )
    }

    /// The file, refused when the next run could not read it: past the input size limit,
    /// every later run with this cassette would fail until the file was deleted. `path` names
    /// the cassette in the message; the file there is left as it was.
    pub fn to_readable_bytes(&self, path: &std::path::Path) -> crate::error::Result<Vec<u8>> {
        let bytes = self.to_bytes();
        let limit = crate::input::MAX_INPUT_BYTES;
        if bytes.len() as u64 > limit {
            return Err(crate::error::Error::usage(format!(
                "--cassette {}: the cassette would be {:.1} MiB ({} entries), over the {} MiB \
                 an input may hold, so the next run could not read it; it was not saved (the \
                 file keeps what it held before). Record into a new --cassette, with fewer \
                 scenarios or a lower --repeat per cassette",
                path.display(),
                bytes.len() as f64 / 1_048_576.0,
                self.entries.len(),
                limit / 1_048_576
            )));
        }
        // The value bound of [`Cassette::read`]: counted only when the bytes fit.
        if let Err(too) =
            crate::document::readable_back(std::str::from_utf8(&bytes).unwrap_or_default(), true)
        {
            return Err(crate::error::Error::usage(format!(
                "--cassette {}: the cassette {too} ({} entries), so the next run could not \
                 read it; it was not saved (the file keeps what it held before). Record into a \
                 new --cassette, with fewer scenarios or a lower --repeat per cassette",
                path.display(),
                self.entries.len(),
            )));
        }
        Ok(bytes)
    }

    /// The file: `format`, `checksum`, then one entry a line, sorted by key.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut s = String::new();
        s.push_str("{\"format\":");
        s.push_str(&Value::from(FORMAT).to_string());
        s.push_str(",\"checksum\":");
        s.push_str(&Value::from(checksum(&self.entries)).to_string());
        s.push_str(",\"entries\":{");
        for (i, (k, e)) in self.entries.iter().enumerate() {
            s.push_str(if i == 0 { "\n" } else { ",\n" });
            s.push_str(&Value::from(k.as_str()).to_string());
            s.push(':');
            s.push_str(&serde_json::to_string(e).expect("entry serializes"));
        }
        s.push_str("\n}}\n");
        s.into_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_bodies_key_the_same_whatever_the_key_order() {
        let a = json!({"b": 1, "a": {"y": [2, {"d": 1, "c": 0}], "x": null}});
        let b = json!({"a": {"x": null, "y": [2, {"c": 0, "d": 1}]}, "b": 1});
        assert_eq!(canonical(&a).to_string(), canonical(&b).to_string());
        assert_eq!(
            canonical(&a).to_string(),
            r#"{"a":{"x":null,"y":[2,{"c":0,"d":1}]},"b":1}"#
        );
        let k = key(Provider::OpenaiChat, 0, &canonical(&a));
        assert_eq!(k, key(Provider::OpenaiChat, 0, &canonical(&b)));
        assert_ne!(k, key(Provider::OpenaiChat, 1, &canonical(&a)));
        assert_ne!(k, key(Provider::Anthropic, 0, &canonical(&a)));
        assert_eq!(k.len(), 64);
    }

    /// A cassette grown past the input limit is not saved: the next run could not read it.
    #[test]
    fn a_cassette_the_next_run_could_not_read_is_not_saved() {
        let mut c = Cassette::default();
        let body = "x".repeat(14 * 1024 * 1024);
        for i in 0..4 {
            c.insert(
                format!("k{i}"),
                Entry {
                    provider: Provider::OpenaiChat,
                    run: 0,
                    request: json!({"model": "m"}),
                    response: json!({"choices": [], "note": body}),
                    latency_ms: 1.0,
                },
            );
        }
        let path = std::path::Path::new("cas.json");
        let bytes = c.to_readable_bytes(path).unwrap();
        assert_eq!(Cassette::from_bytes(&bytes).1, Load::Loaded(4));
        c.insert(
            "k4".into(),
            Entry {
                provider: Provider::OpenaiChat,
                run: 0,
                request: json!({"model": "m"}),
                response: json!({"note": body}),
                latency_ms: 1.0,
            },
        );
        let e = c.to_readable_bytes(path).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "--cassette cas.json: the cassette would be 70.0 MiB (5 entries), over the 64 \
                 MiB an input may hold, so the next run could not read it; it was not saved"
            ),
            "{e}"
        );
    }

    /// A cassette holding more JSON values than any input may is refused before it is parsed,
    /// at the first value past the bound; one value fewer is read (and, past its own checks,
    /// discarded as not a cassette).
    #[test]
    fn a_cassette_past_the_value_bound_is_refused_where_it_goes_over() {
        let bound = crate::document::MAX_JSON_NODES;
        // The root object, `format`, `entries`, then `n` nulls in one array.
        let text = |n: u64| {
            let mut s = String::from("{\"format\":\"x\",\"entries\":[");
            s.push_str(&vec!["null"; n as usize].join(","));
            s.push_str("]}");
            s
        };
        let path = std::path::Path::new("cas.json");
        let at = text(bound - 3);
        let (_, load) = Cassette::read(path, at.as_bytes()).unwrap();
        assert!(matches!(load, Load::Foreign(_)), "{load:?}");
        let over = text(bound - 2);
        let e = Cassette::read(path, over.as_bytes())
            .unwrap_err()
            .to_string();
        // The last null: at column 26 for the first, 5 more for each one before it.
        let column = 26 + 5 * (bound - 3);
        assert!(
            e.starts_with(&format!(
                "cas.json:1:{column}: entries[{}]: the text holds more than 2,000,000 JSON values",
                bound - 3
            )),
            "{e}"
        );
    }

    /// A recorded answer reads back from its cassette whatever doubles it holds. serde_json's
    /// fast float path read `4.5e30` one ulp off (the answer `450e28`, found by the
    /// `live_answer_parse` fuzz target), so the entries serialized differently when read, the
    /// checksum failed and the cassette was discarded (and refused with `--offline`).
    #[test]
    fn answers_holding_any_double_read_back_from_their_cassette() {
        for answer in [
            "450e28",
            r#"{"content": [], "usage": {"input_tokens": 1}, "id": 4.5e30}"#,
        ] {
            let mut c = Cassette::default();
            c.insert(
                "k".into(),
                Entry {
                    provider: Provider::Anthropic,
                    run: 0,
                    request: json!({"model": "m"}),
                    response: serde_json::from_str(answer).unwrap(),
                    latency_ms: 0.0,
                },
            );
            let bytes = c.to_bytes();
            let (back, load) = Cassette::from_bytes(&bytes);
            assert_eq!(load, Load::Loaded(1), "{answer}");
            assert_eq!(back.get("k"), c.get("k"), "{answer}");
            assert_eq!(back.to_bytes(), bytes, "{answer}");
        }
    }

    #[test]
    fn files_round_trip_and_tampering_is_refused() {
        let mut c = Cassette::default();
        c.insert(
            "k1".into(),
            Entry {
                provider: Provider::OpenaiChat,
                run: 0,
                request: json!({"model": "m"}),
                response: json!({"choices": []}),
                latency_ms: 12.5,
            },
        );
        let bytes = c.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        let (back, load) = Cassette::from_bytes(&bytes);
        assert_eq!(load, Load::Loaded(1));
        assert_eq!(back.get("k1").unwrap().latency_ms, 12.5);
        assert_eq!(back.to_bytes(), bytes);
        let tampered = text.replace("12.5", "13.5");
        let (bad, load) = Cassette::from_bytes(tampered.as_bytes());
        assert_eq!(load, Load::Discarded("checksum mismatch".into()));
        assert!(bad.is_empty() && bad.is_dirty());
    }
}
