//! The ground truth of `fixtures/prices/` (its README): 81 resolutions and 13 costs computed by
//! `genai-prices` 0.2.5 itself, then the edges: dates, tiers, unpriced cache kinds, located load
//! errors, and garbage that must not panic.

use std::path::Path;

use serde_json::Value;

use super::clause::normalize_compact_dates;
use super::*;

const GROUND_TRUTH: &str = include_str!("../../fixtures/prices/ground-truth.jsonl");
const COST_CASES: &str = include_str!("../../fixtures/prices/cost-cases.jsonl");

fn table() -> &'static PriceTable {
    PriceTable::bundled()
}

fn date(s: &str) -> Date {
    Date::parse(s).unwrap()
}

/// A price of the fixtures: a number, `{base, tiers}` or null.
fn expected_price(v: &Value) -> Option<Price> {
    match v {
        Value::Null => None,
        Value::Number(n) => Some(Price::Flat(n.as_f64().unwrap())),
        Value::Object(o) => Some(Price::Tiered {
            base: o["base"].as_f64().unwrap(),
            tiers: o["tiers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| Tier {
                    start: t["start"].as_u64().unwrap(),
                    price: t["price"].as_f64().unwrap(),
                })
                .collect(),
        }),
        other => panic!("not a price: {other}"),
    }
}

#[test]
fn the_bundled_table_loads_with_its_snapshot() {
    let t = table();
    assert_eq!(t.snapshot().to_string(), "genai-prices 0.2.5, 2026-12-05");
    assert_eq!(
        t.provider_ids().collect::<Vec<_>>(),
        ["anthropic", "aws", "google", "openai"]
    );
    let models: usize = t.providers.iter().map(|p| p.models.len()).sum();
    assert_eq!(models, 333);
    // Every provider of the package is known for detection, kept or not.
    assert_eq!(t.detection.len(), 47);
}

#[test]
fn the_81_resolutions_of_the_package_are_reproduced() {
    let mut checked = 0;
    for line in GROUND_TRUTH.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let id = row["ref"].as_str().unwrap();
        let hint = row.get("provider_hint").and_then(Value::as_str);
        let at = row.get("at").and_then(Value::as_str).map(date);
        let context = format!("{id} (hint {hint:?}, at {at:?})");
        let got = table().resolve(id, hint);
        if let Some(error) = row.get("error").and_then(Value::as_str) {
            let provider = row.get("provider").and_then(Value::as_str);
            match (error, got) {
                ("no_provider", Err(Unresolved::NoProvider { .. })) => {}
                ("no_model", Err(Unresolved::NoModel { provider_id, .. }))
                | (
                    "provider_not_in_snapshot",
                    Err(Unresolved::ProviderNotInTable { provider_id, .. }),
                ) => assert_eq!(Some(provider_id.as_str()), provider, "{context}"),
                (e, got) => panic!("{context}: expected {e}, got {got:?}"),
            }
            checked += 1;
            continue;
        }
        let r = got.unwrap_or_else(|e| panic!("{context}: {e}"));
        assert_eq!(
            r.provider_id,
            row["provider"].as_str().unwrap(),
            "{context}"
        );
        assert_eq!(r.model_id, row["model"].as_str().unwrap(), "{context}");
        assert_eq!(
            r.context_window,
            row["context_window"].as_u64(),
            "{context}"
        );
        let p = r.prices_at(at);
        let pairs = [
            (&p.input, "input"),
            (&p.output, "output"),
            (&p.cache_write, "cache_write"),
            (&p.cache_read, "cache_read"),
            (&p.cache_write_1h, "cache_write_1h"),
        ];
        for (got, key) in pairs {
            assert_eq!(got, &expected_price(&row[key]), "{context}: {key}");
        }
        checked += 1;
    }
    assert_eq!(checked, 81);
}

#[test]
fn the_13_costs_of_the_package_are_reproduced() {
    let mut checked = 0;
    for line in COST_CASES.lines() {
        let row: Value = serde_json::from_str(line).unwrap();
        let id = row["ref"].as_str().unwrap();
        let u = &row["usage"];
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        // The package's convention: input includes the cache, 1h writes are part of writes.
        let usage = Usage::from_inclusive(
            n("input_tokens"),
            n("cache_read_tokens"),
            n("cache_write_tokens"),
            n("cache_write_1h_tokens"),
            n("output_tokens"),
        )
        .unwrap();
        assert_eq!(usage.total_input(), n("input_tokens"));
        let at = Date::of_timestamp(row["at"].as_str().unwrap()).unwrap();
        let r = table().resolve(id, None).unwrap();
        assert_eq!(r.model_id, row["model"].as_str().unwrap());
        let prices = r.prices_at(Some(at));
        let cost = prices.cost_split(&usage);
        let usd = |k: &str| row[k].as_str().unwrap().parse::<f64>().unwrap();
        let context = format!("{id} at {at} with {usage:?}: {cost:?}");
        assert!((cost.input - usd("input_usd")).abs() < 1e-9, "{context}");
        assert!((cost.output - usd("output_usd")).abs() < 1e-9, "{context}");
        assert!((cost.total - usd("total_usd")).abs() < 1e-9, "{context}");
        assert_eq!(prices.cost(&usage), cost.total);
        checked += 1;
    }
    assert_eq!(checked, 13);
}

#[test]
fn a_tier_applies_to_every_token_only_above_its_start() {
    let p = Price::Tiered {
        base: 3.0,
        tiers: vec![
            Tier {
                start: 200_000,
                price: 6.0,
            },
            Tier {
                start: 500_000,
                price: 9.0,
            },
        ],
    };
    assert_eq!(p.at(0), 3.0);
    assert_eq!(p.at(200_000), 3.0);
    assert_eq!(p.at(200_001), 6.0);
    assert_eq!(p.at(500_001), 9.0);
    assert_eq!(p.to_string(), "3 (>200000: 6, >500000: 9)");
    let sonnet = table().resolve("claude-sonnet-4-5", None).unwrap().prices();
    assert_eq!(sonnet.tier_starts(), [200_000]);
    let flat = table().resolve("claude-opus-4-7", None).unwrap().prices();
    assert!(flat.tier_starts().is_empty());
    // A cliff: one token more doubles the whole input's price.
    let usage = |input| Usage {
        input,
        ..Usage::default()
    };
    assert!((sonnet.cost(&usage(200_000)) - 0.6).abs() < 1e-12);
    assert!((sonnet.cost(&usage(200_001)) - 1.200006).abs() < 1e-12);
}

#[test]
fn unpriced_cache_kinds_cost_what_they_are_part_of() {
    let flat = |p| Some(Price::Flat(p));
    let prices = ModelPrices {
        input: flat(2.0),
        output: flat(10.0),
        ..ModelPrices::default()
    };
    let usage = Usage {
        input: 1_000_000,
        cache_write: 1_000_000,
        cache_write_1h: 1_000_000,
        cache_read: 1_000_000,
        output: 1_000_000,
    };
    // Every input kind at the input price.
    assert_eq!(prices.cost(&usage), 4.0 * 2.0 + 10.0);
    // 1-hour writes at the 5-minute price when only that is listed.
    let with_writes = ModelPrices {
        cache_write: flat(3.0),
        ..prices.clone()
    };
    assert_eq!(with_writes.cost(&usage), 2.0 + 3.0 + 3.0 + 2.0 + 10.0);
    // A model without any price (gemma) costs nothing; a per-request fee is in the total only.
    assert_eq!(ModelPrices::default().cost(&usage), 0.0);
    let fee = ModelPrices {
        requests: flat(5.0),
        ..ModelPrices::default()
    };
    let c = fee.cost_split(&usage);
    assert_eq!((c.input, c.output, c.total), (0.0, 0.0, 0.005));
    let gemma = table().resolve("gemma-3", Some("google")).unwrap();
    assert_eq!(gemma.prices(), &ModelPrices::default());
}

#[test]
fn inclusive_usage_converts_and_refuses_parts_larger_than_the_whole() {
    assert_eq!(
        Usage::from_inclusive(100, 60, 30, 10, 5),
        Some(Usage {
            input: 10,
            cache_write: 20,
            cache_write_1h: 10,
            cache_read: 60,
            output: 5,
        })
    );
    assert_eq!(Usage::from_inclusive(100, 80, 30, 0, 5), None);
    assert_eq!(Usage::from_inclusive(100, 0, 10, 11, 5), None);
    let huge = Usage {
        input: u64::MAX,
        cache_read: u64::MAX,
        ..Usage::default()
    };
    assert_eq!(huge.total_input(), u64::MAX);
    assert!(
        table()
            .resolve("gpt-5.4", None)
            .unwrap()
            .prices()
            .cost(&huge)
            .is_finite()
    );
}

#[test]
fn dated_prices_follow_the_requests_utc_date_and_default_to_the_snapshot() {
    let opus = table().resolve("claude-opus-4-6", None).unwrap();
    assert!(
        opus.prices_at(Some(date("2026-03-12")))
            .input
            .as_ref()
            .unwrap()
            != &Price::Flat(5.0)
    );
    assert_eq!(
        opus.prices_at(Some(date("2026-03-13"))).input,
        Some(Price::Flat(5.0))
    );
    // Before every start date the first entry applies; no date is the snapshot's, not today.
    assert_eq!(
        opus.prices_at(Some(date("2001-01-01"))),
        opus.prices_at(Some(date("2026-03-12")))
    );
    assert_eq!(
        opus.prices_at(None),
        opus.prices_at(Some(date("2026-12-05")))
    );
    let o3 = table().resolve("o3", None).unwrap();
    let at = |ts| {
        o3.prices_at(Some(Date::of_timestamp(ts).unwrap()))
            .input
            .clone()
    };
    assert_eq!(at("2025-06-09T23:59:59Z"), Some(Price::Flat(10.0)));
    assert_eq!(at("2025-06-10T00:00:00.000Z"), Some(Price::Flat(2.0)));
    // 22:30 at -02:00 is already the 10th in UTC; 01:00 at +02:00 still the 9th.
    assert_eq!(at("2025-06-09T22:30:00-02:00"), Some(Price::Flat(2.0)));
    assert_eq!(at("2025-06-10T01:00:00+02:00"), Some(Price::Flat(10.0)));
    assert_eq!(at("2025-06-10"), Some(Price::Flat(2.0)));
}

#[test]
fn dates_and_timestamps_parse_strictly() {
    assert_eq!(date("2024-02-29").to_string(), "2024-02-29");
    for bad in [
        "2025-02-29",
        "2025-13-01",
        "2025-00-10",
        "2025-1-01",
        "+025-01-01",
        "２０２５-01-01",
        "",
    ] {
        assert_eq!(Date::parse(bad), None, "{bad}");
    }
    let ts = |s| Date::of_timestamp(s).map(|d| d.to_string());
    assert_eq!(
        ts("2025-12-31T23:00:00-01:30").as_deref(),
        Some("2026-01-01")
    );
    assert_eq!(
        ts("2025-01-01T00:10:00+0100").as_deref(),
        Some("2024-12-31")
    );
    assert_eq!(
        ts("2024-02-28t23:59:59.999999-05:00").as_deref(),
        Some("2024-02-29")
    );
    assert_eq!(ts("2026-01-01 12:00:00").as_deref(), Some("2026-01-01"));
    assert_eq!(ts("9999-12-31T23:00:00-02:00"), None);
    assert_eq!(ts("0001-01-01T00:00:00+01:00"), None);
    for bad in [
        "2026-01-01T",
        "2026-01-01T24:00:00Z",
        "2026-01-01T1é:00Z",
        "2026-01-01T12:00:00+1",
        "2026-01-01T12:00:00+0é0",
        "2026-01-01X12:00",
    ] {
        assert_eq!(Date::of_timestamp(bad), None, "{bad}");
    }
}

#[test]
fn compact_dates_are_rewritten_as_the_package_does() {
    let n = normalize_compact_dates;
    assert_eq!(n("gpt-5.2-20251211"), "gpt-5.2-2025-12-11");
    assert_eq!(n("x-20251211-v1:0"), "x-2025-12-11-v1:0");
    assert_eq!(n("x-20251211:0"), "x-2025-12-11:0");
    assert_eq!(n("a-20240101-20240229"), "a-2024-01-01-2024-02-29");
    // Not a real date: consumed and kept as written.
    assert_eq!(n("x-20250231"), "x-20250231");
    assert_eq!(n("x-20250229"), "x-20250229");
    // The lookahead: followed by something else, and retried one character later.
    assert_eq!(n("x-20251211x"), "x-20251211x");
    assert_eq!(n("x--20251211"), "x--2025-12-11");
    assert_eq!(n("x-1-20251211"), "x-1-2025-12-11");
    assert_eq!(n("x-2025121"), "x-2025121");
    assert_eq!(n("x-20251211\n"), "x-2025-12-11\n");
    assert_eq!(n("x-20251211\n\n"), "x-20251211\n\n");
    // Any decimal digit where the pattern says \d, written back in ASCII (Python's int()).
    assert_eq!(n("x-20\u{662}\u{665}1211"), "x-2025-12-11");
    assert_eq!(n("x-2025121\u{1d7d7}"), "x-2025-12-19");
    // Month and day digits the pattern spells out stay ASCII-only.
    assert_eq!(n("x-20251\u{662}11"), "x-20251\u{662}11");
    assert_eq!(n("é-20251211é"), "é-20251211é");
    assert_eq!(n("é-20251211"), "é-2025-12-11");
}

#[test]
fn unknown_ids_say_why_with_the_closest_known_ids() {
    let err = |id: &str, hint| table().resolve(id, hint).unwrap_err();
    let e = err("claude-opus-9", None);
    let Unresolved::NoModel {
        closest,
        provider_id,
        ..
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!(provider_id, "anthropic");
    assert_eq!(closest.len(), 3);
    assert!(
        closest.iter().all(|c| c.starts_with("claude-opus-")),
        "{closest:?}"
    );
    assert!(
        e.to_string().starts_with("unknown model id `claude-opus-9` (provider anthropic): closest known ids are claude-opus-"),
        "{e}"
    );
    let e = err("gpt-5.3-codex-spark", None);
    assert!(
        e.to_string()
            .contains("closest known ids are gpt-5.3-codex"),
        "{e}"
    );
    let e = err("grok-4", None);
    assert_eq!(
        e.to_string(),
        "model id `grok-4` belongs to provider x-ai, which is not in the price table (it has \
         anthropic, aws, google, openai)"
    );
    let e = err("codex-mini-latest", None);
    assert!(e.to_string().starts_with("unknown model id `codex-mini-latest` (no provider recognises it; a provider hint may help): closest known ids are codex-mini"), "{e}");
    let e = err("gpt-5", Some("nonesuch"));
    assert_eq!(
        e.to_string(),
        "unknown provider `nonesuch`: the price table has anthropic, aws, google, openai"
    );
    // A provider prefix is looked through for suggestions; nothing is offered when nothing is
    // close; a Bedrock id without its hint is told so.
    let e = err("openai/gpt-5", None);
    assert!(
        e.to_string()
            .ends_with("closest known ids are gpt-5, gpt-5-1, gpt-5-2"),
        "{e}"
    );
    assert_eq!(
        err("<synthetic>", None).to_string(),
        "unknown model id `<synthetic>` (no provider recognises it; a provider hint may help)"
    );
    assert_eq!(
        err("us.anthropic.claude-haiku-4-5-20251001-v1:0", None).to_string(),
        "unknown model id `us.anthropic.claude-haiku-4-5-20251001-v1:0` (provider anthropic); \
         an AWS Bedrock id needs the provider hint aws"
    );
    // A hint of a provider the snapshot left out.
    assert!(
        matches!(err("gpt-5", Some("azure")), Unresolved::ProviderNotInTable { provider_id, .. } if provider_id == "azure")
    );
    // Messages stay one short line whatever the id holds.
    let e = err(&format!("claude-\n\u{7}{}", "é".repeat(300)), None);
    let text = e.to_string();
    assert!(
        !text.contains('\n') && !text.contains('\u{7}') && text.contains("claude-\\n\\u{7}é"),
        "{text}"
    );
    assert!(text.contains("é…`"), "{text}");
}

#[test]
fn hints_follow_the_package_including_litellm() {
    let ok = |id: &str, hint| {
        let r = table().resolve(id, hint).unwrap();
        (r.provider_id, r.model_id)
    };
    assert_eq!(
        ok("gemini-2.5-flash", Some(" Vertex_AI ")),
        ("google", "gemini-2.5-flash")
    );
    assert_eq!(ok("gpt-5", Some("\u{1f}OpenAI\u{1c}")), ("openai", "gpt-5"));
    assert_eq!(ok("openai/gpt-5", Some("litellm")), ("openai", "gpt-5"));
    assert_eq!(ok("gpt-5", Some("LiteLLM")), ("openai", "gpt-5"));
    assert!(matches!(
        table().resolve("openai/gpt-5", Some("litellm ")),
        Err(Unresolved::UnknownProvider { .. })
    ));
    assert!(matches!(
        table().resolve("x-ai/grok-4", Some("litellm")),
        Err(Unresolved::ProviderNotInTable { provider_id, .. }) if provider_id == "x-ai"
    ));
    // Google falls back to anthropic's models and stays the provider.
    assert_eq!(
        ok("claude-3-haiku-20240307", Some("google")),
        ("google", "claude-3-haiku")
    );
    assert!(matches!(
        table().resolve("", None),
        Err(Unresolved::NoProvider { .. })
    ));
    assert!(matches!(
        table().resolve("gpt-5", Some("")),
        Err(Unresolved::UnknownProvider { .. })
    ));
}

#[test]
fn log_ids_from_bedrock_get_the_aws_hint_by_toolbudgets_rule() {
    let t = table();
    let r = t
        .resolve_for_log("us.anthropic.claude-haiku-4-5-20251001-v1:0")
        .unwrap();
    assert_eq!(
        (r.provider_id, r.model_id, r.bedrock_rule),
        (
            "aws",
            "regional.anthropic.claude-haiku-4-5-20251001-v1:0",
            true
        )
    );
    assert_eq!(r.prices().input, Some(Price::Flat(1.1)));
    let r = t.resolve_for_log("amazon.nova-pro-v1:0").unwrap();
    assert_eq!((r.provider_id, r.bedrock_rule), ("aws", true));
    // Ids the table resolves alone keep its answer; others keep their error.
    let r = t.resolve_for_log("claude-opus-4-6").unwrap();
    assert_eq!((r.provider_id, r.bedrock_rule), ("anthropic", false));
    assert!(matches!(
        t.resolve_for_log("<synthetic>"),
        Err(Unresolved::NoProvider { .. })
    ));
    assert!(matches!(
        t.resolve_for_log("us.anthropic.claude-nonesuch-v1:0"),
        Err(Unresolved::NoModel { provider_id, .. }) if provider_id == "aws"
    ));
}

/// A price table with one model whose parts a test replaces.
fn one_model(model: &str) -> String {
    format!(
        r#"{{"source": {{"package": "p", "version": "1", "snapshot_date": "2026-01-02"}},
"providers": [
 {{"id": "acme", "model_match": {{"starts_with": "acme-"}}, "models": [
  {model}
 ]}}
]}}"#
    )
}

fn load_error(text: &str) -> String {
    PriceTable::parse(text, Path::new("p.json"))
        .map(|_| ())
        .unwrap_err()
        .to_string()
}

#[test]
fn a_user_table_loads_without_provider_detection() {
    let text = one_model(
        r#"{"id": "acme-1", "match": {"or": [{"equals": "ACME-1"}, {"regex": "^acme-1-\\d+$"}]},
   "prices": [{"prices": {"input_mtok": 1, "output_mtok": 2}},
              {"constraint": {"start_date": "2026-01-01"}, "prices": {"input_mtok": 3, "output_mtok": 4, "web_searches_kcount": 10}}]}"#,
    );
    let t = PriceTable::parse(&text, Path::new("p.json")).unwrap();
    assert_eq!(t.snapshot().to_string(), "p 1, 2026-01-02");
    let r = t.resolve("Acme-1-7", None).unwrap();
    assert_eq!(
        (r.provider_id, r.model_id, r.model_name),
        ("acme", "acme-1", None)
    );
    assert_eq!(r.prices().input, Some(Price::Flat(3.0)));
    assert_eq!(
        r.prices_at(Some(date("2025-12-31"))).input,
        Some(Price::Flat(1.0))
    );
    assert!(matches!(
        t.resolve("acme-2", Some("acme")),
        Err(Unresolved::NoModel { .. })
    ));
}

/// Loads each table and checks that its error starts with the expected text.
fn expect_errors(cases: &[(String, &str)]) {
    let mut wrong = Vec::new();
    for (text, expected) in cases {
        let got = load_error(text);
        if !got.starts_with(expected) {
            let line = text.lines().nth(3).unwrap_or_default();
            wrong.push(format!("got      {got}\nexpected {expected}\nin {line}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn bad_prices_are_located_errors_naming_the_model() {
    let price = |p: &str| {
        one_model(&format!(
            r#"{{"id": "acme-1", "match": {{"equals": "acme-1"}}, "prices": {p}}}"#
        ))
    };
    let at = "p.json:4:";
    let model = "provider `acme`, model `acme-1`";
    expect_errors(&[
        (
            price(r#"{"input_mtok": -1}"#),
            &format!("{at}76: {model}: `input_mtok` is -1: a price cannot be negative"),
        ),
        (
            price(r#"{"input_mtok": 250000}"#),
            &format!(
                "{at}76: {model}: `input_mtok` is 250000, more than the 100000 USD per unit allowed (prices are per million tokens)"
            ),
        ),
        (
            price(r#"{"output_mtok": {"base": 1, "tiers": [{"start": 10, "price": 1e6}]}}"#),
            &format!("{at}77: {model}: `output_mtok` is 1000000, more than"),
        ),
        (
            price(r#"{"input_mtok": NaN}"#),
            &format!("{at}76: invalid price table: expected value"),
        ),
        (
            price(r#"{"input_mtok": 1e999}"#),
            &format!("{at}80: {model}: `input_mtok`: number out of range"),
        ),
        (
            price(r#"{"input_mtk": 1}"#),
            &format!("{at}75: {model}: unknown price key `input_mtk`"),
        ),
        (
            price(r#"{"input_text_mtok": 1}"#),
            &format!("{at}81: {model}: price key `input_text_mtok` is not supported"),
        ),
        (
            price(r#"{"input_mtok": "3"}"#),
            &format!("{at}78: {model}: `input_mtok`: invalid type: string \"3\", expected f64"),
        ),
        (
            price("[]"),
            &format!("{at}61: {model}: `prices` is an empty list"),
        ),
        (
            price(
                r#"[{"constraint": {"start_time": "08:00", "end_time": "09:00"}, "prices": {}}]"#,
            ),
            &format!(
                "{at}77: {model}: a constraint must be {{\"start_date\": \"YYYY-MM-DD\"}} (time-of-day prices are not supported)"
            ),
        ),
        (
            price(r#"[{"constraint": {"start_date": "2026-02-30"}, "prices": {}}]"#),
            &format!("{at}77: {model}: start_date `2026-02-30` is not a date YYYY-MM-DD"),
        ),
    ]);
}

#[test]
fn bad_clauses_and_models_are_located_errors() {
    let m = |s: &str| {
        one_model(&format!(
            r#"{{"id": "acme-1", "match": {s}, "prices": {{}}}}"#
        ))
    };
    let at = "p.json:4:";
    let model = "provider `acme`, model `acme-1`";
    expect_errors(&[
        (
            m(r#"{"regex": "^(acme"}"#),
            &format!("{at}39: {model}: the pattern does not compile: regex parse error:"),
        ),
        (
            m(r#"{"regex": "(?<!x)a(?=b"}"#),
            &format!("{at}39: {model}: the pattern does not compile: Parsing error at position 11"),
        ),
        (
            m(r#"{"equal": "acme-1"}"#),
            &format!(
                "{at}29: {model}: unknown clause `equal`, expected one of equals, starts_with, ends_with, contains, regex, or, and"
            ),
        ),
        (
            m(r#"{"equals": "a", "contains": "b"}"#),
            &format!("{at}29: {model}: a clause is an object with exactly one key"),
        ),
        (
            m(r#"{"or": {"equals": "a"}}"#),
            &format!("{at}36: {model}: `or`: invalid type: map, expected a sequence"),
        ),
        (
            m(r#"{"equals": 3}"#),
            &format!("{at}40: {model}: `equals`: invalid type: integer `3`, expected a string"),
        ),
        (
            one_model(r#"{"id": "acme-1", "prices": {}}"#),
            &format!("{at}32: provider `acme`, model #1: missing field `match`"),
        ),
        (
            one_model(r#"{"id": "acme-1", "match": {"equals": "a"}, "prices": {}"#),
            "p.json:5:2: invalid price table: expected `,` or `}`",
        ),
    ]);
}

#[test]
fn bad_table_structure_is_refused() {
    let long = format!(r#"{{"regex": "{}"}}"#, "a".repeat(MAX_PATTERN_BYTES + 1));
    let deep = format!(
        "{}{{\"equals\": \"a\"}}{}",
        r#"{"or": ["#.repeat(40),
        "]}".repeat(40)
    );
    let m = |s: &str| {
        one_model(&format!(
            r#"{{"id": "acme-1", "match": {s}, "prices": {{}}}}"#
        ))
    };
    assert!(
        load_error(&m(&long)).contains("the pattern is 4097 bytes, more than the 4096 allowed")
    );
    assert!(load_error(&m(&deep)).contains("clauses nested deeper than 32 levels"));
    let two = r#"{"source": {"package": "p", "version": "1", "snapshot_date": "2026-01-02"},
"providers": [{"id": "a", "models": []}, {"id": "a", "models": []}]}"#;
    assert_eq!(
        load_error(two),
        "p.json:2:42: provider `a` is in the table twice"
    );
    let fallback = r#"{"source": {"package": "p", "version": "1", "snapshot_date": "2026-01-02"},
"providers": [{"id": "a", "fallback_model_providers": ["b"], "models": []}]}"#;
    assert_eq!(
        load_error(fallback),
        "p.json:2:15: provider `a` falls back to provider `b`, which is not in the table"
    );
    let detection = |d: &str| {
        format!(
            r#"{{"source": {{"package": "p", "version": "1", "snapshot_date": "2026-01-02"}},
"provider_detection": [{d}], "providers": [{{"id": "a", "models": []}}]}}"#
        )
    };
    assert!(load_error(&detection("")).contains("provider_detection does not list provider `a`"));
    assert!(
        load_error(&detection(r#"{"id": "a", "in_snapshot": false}"#))
            .contains("says not in_snapshot, but `providers` has it")
    );
    assert!(
        load_error(&detection(
            r#"{"id": "a", "in_snapshot": true}, {"id": "b", "in_snapshot": true}"#
        ))
        .contains("`providers` has no such provider")
    );
    assert!(
        load_error(&detection(
            r#"{"id": "a", "in_snapshot": true}, {"id": "a", "in_snapshot": true}"#
        ))
        .contains("is listed twice")
    );
    let bad_date =
        r#"{"source": {"package": "p", "version": "1", "snapshot_date": "soon"}, "providers": []}"#;
    assert_eq!(
        load_error(bad_date),
        "p.json:1:12: source.snapshot_date `soon` is not a date YYYY-MM-DD"
    );
    assert_eq!(
        load_error(""),
        "p.json:1:1: invalid price table: EOF while parsing a value"
    );
    assert_eq!(
        load_error("[]"),
        "p.json:1:1: invalid price table: expected an object with `source` and `providers`"
    );
}

/// SplitMix64, for the garbage below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn garbage_ids_and_hints_never_panic() {
    const PIECES: [&str; 24] = [
        "claude",
        "gpt-",
        "gemini",
        "-",
        "20251211",
        "2025",
        "@",
        ".",
        ":",
        "/",
        "anthropic.",
        "-v1:0",
        "\n",
        "\0",
        "\u{7f}",
        "é",
        "İ",
        "\u{662}",
        "ΣΑ",
        "-tts",
        "o3",
        " ",
        "\u{1f}",
        "grok",
    ];
    let t = table();
    let mut rng = Rng(7);
    let hints = [
        None,
        Some("aws"),
        Some("google"),
        Some("litellm"),
        Some("\u{0}"),
        Some("x"),
    ];
    for _ in 0..5_000 {
        let mut id = String::new();
        for _ in 0..rng.below(12) {
            if rng.below(3) == 0 {
                id.push(char::from_u32(rng.below(0x11_0000) as u32).unwrap_or('\u{fffd}'));
            } else {
                id.push_str(PIECES[rng.below(PIECES.len())]);
            }
        }
        let hint = hints[rng.below(hints.len())];
        for r in [t.resolve(&id, hint), t.resolve_for_log(&id)] {
            match r {
                Ok(r) => assert!(
                    r.prices().cost(&Usage::default()) == 0.0 || r.prices().requests.is_some()
                ),
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
    // Huge ids are refused at once, ids at the limit are matched in full.
    let huge = format!("claude-{}", "x".repeat(1 << 20));
    assert_eq!(
        t.resolve(&huge, None).unwrap_err(),
        Unresolved::TooLong { bytes: huge.len() }
    );
    assert!(matches!(
        t.resolve_for_log(&huge),
        Err(Unresolved::TooLong { .. })
    ));
    assert!(matches!(
        t.resolve("gpt-5", Some(&huge)),
        Err(Unresolved::TooLong { .. })
    ));
    let at_limit = format!(
        "gemini-2.5-flash-lite-{}",
        "-tts".repeat((MAX_MODEL_ID_BYTES - 22) / 4)
    );
    assert!(at_limit.len() <= MAX_MODEL_ID_BYTES);
    assert!(t.resolve(&at_limit, None).is_ok() || t.resolve(&at_limit, None).is_err());
    let controls: String = (0u8..32).map(char::from).collect();
    assert!(t.resolve(&controls, None).is_err());
}

#[test]
fn mangled_tables_never_panic() {
    const BYTES: &[u8] = b"{}[]\",:-0123456789e.\\ atnul";
    let mut rng = Rng(11);
    let original = BUNDLED_JSON.as_bytes();
    let mut loaded = 0;
    for _ in 0..150 {
        let mut text = original.to_vec();
        for _ in 0..=rng.below(3) {
            let at = rng.below(text.len());
            text[at] = BYTES[rng.below(BYTES.len())];
        }
        let Ok(text) = String::from_utf8(text) else {
            continue;
        };
        if PriceTable::parse(&text, Path::new("p.json")).is_ok() {
            loaded += 1;
        }
    }
    // Some mangles land in strings and load; most do not.
    assert!(loaded < 150);
}

#[test]
fn a_pattern_that_gives_up_is_reported_not_guessed() {
    let text =
        one_model(r#"{"id": "acme-1", "match": {"regex": "^acme-(a|aa)+\\1b"}, "prices": {}}"#);
    let t = PriceTable::parse(&text, Path::new("p.json")).unwrap();
    let id = format!("acme-{}", "a".repeat(60));
    match t.resolve(&id, None) {
        Err(Unresolved::Undecidable {
            pattern, message, ..
        }) => {
            assert_eq!(pattern, r"^acme-(a|aa)+\1b");
            assert!(!message.is_empty());
        }
        other => panic!("{other:?}"),
    }
}
