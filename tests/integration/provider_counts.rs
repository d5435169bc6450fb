//! The counters against the public provider counts in `../shared/data/provider-counts`:
//! OpenAI's billed input tokens for gpt-5.4 (Responses and Chat Completions), Anthropic's
//! `count_tokens` for claude-sonnet-4-6, and the OpenAI Cookbook's tool example.

use serde::Deserialize;
use toolbudget::catalog::{CatalogSource, Tool, load_catalogs};
use toolbudget::counter::openai::{Api, Framing};
use toolbudget::counter::{CounterKind, Deferral, ToolChoice, anthropic};
use toolbudget::simulate::profile;
use toolbudget::tokenize::{Tokenizer, render_json};

#[derive(Deserialize)]
struct Series {
    system_prompt: String,
    user_prompt: String,
    inline_scale: Inline,
    static_configurations: Statics,
}

#[derive(Deserialize)]
struct Inline {
    #[serde(rename = "N")]
    n: Vec<usize>,
    #[serde(rename = "anthropic_claude-sonnet-4-6_count_tokens")]
    anthropic: Vec<usize>,
    #[serde(rename = "openai_gpt-5.4_responses")]
    responses: Vec<usize>,
    #[serde(rename = "openai_gpt-5.4_chat_completions")]
    chat: Vec<usize>,
}

#[derive(Deserialize)]
struct Statics {
    #[serde(rename = "anthropic_claude-sonnet-4-6")]
    anthropic: std::collections::BTreeMap<String, usize>,
    #[serde(rename = "openai_gpt-5.4_responses")]
    responses: std::collections::BTreeMap<String, usize>,
}

struct Data {
    series: Series,
    tools: Vec<Tool>,
}

fn data(test: &str) -> Option<Data> {
    let Some(dir) = crate::support::shared_data() else {
        crate::support::skip(test, "../shared/data not found");
        return None;
    };
    let dir = dir.join("provider-counts");
    let series: Series =
        serde_json::from_slice(&std::fs::read(dir.join("acme-series.json")).unwrap()).unwrap();
    let catalog = load_catalogs(&[CatalogSource {
        path: dir.join("acme-21-tools.anthropic.json"),
        server: None,
    }])
    .unwrap();
    Some(Data {
        series,
        tools: catalog.tools().to_vec(),
    })
}

fn within(got: usize, want: usize, pct: f64) -> bool {
    (got as f64 - want as f64).abs() / want as f64 * 100.0 <= pct
}

/// `request` over the first N tools for every N of the series, against `billed`.
fn check_series(d: &Data, billed: &[usize], pct: f64, request: impl Fn(&[&Tool]) -> usize) {
    let mut report = Vec::new();
    let mut ok = true;
    for (&n, &want) in d.series.inline_scale.n.iter().zip(billed) {
        let refs: Vec<&Tool> = d.tools[..n].iter().collect();
        let got = request(&refs);
        ok &= within(got, want, pct);
        report.push(format!(
            "N={n}: {got} vs {want} ({:+.2}%)",
            (got as f64 / want as f64 - 1.0) * 100.0
        ));
    }
    eprintln!("{}", report.join("; "));
    assert!(ok, "outside ±{pct}%: {}", report.join("; "));
}

#[test]
fn openai_responses_reproduces_the_gpt_5_4_series_within_3_pct() {
    let Some(d) = data("openai_responses_series") else {
        return;
    };
    let p = profile::find("gpt-5.4").unwrap();
    let pre = p.preamble(CounterKind::OpenaiResponses, ToolChoice::None);
    let (s, u) = (
        d.series.system_prompt.as_str(),
        d.series.user_prompt.as_str(),
    );
    check_series(&d, &d.series.inline_scale.responses, 3.0, |t| {
        CounterKind::OpenaiResponses.request(Some(s), u, t, pre)
    });
    // The static configurations of the same harness.
    let st = &d.series.static_configurations.responses;
    for (n, key) in [(3, "3_inline"), (21, "21_inline")] {
        let refs: Vec<&Tool> = d.tools[..n].iter().collect();
        let got = CounterKind::OpenaiResponses.request(Some(s), u, &refs, pre);
        assert!(within(got, st[key], 3.0), "{key}: {got} vs {}", st[key]);
    }
    assert_eq!(
        CounterKind::OpenaiResponses.request(Some(s), u, &[], pre),
        st["prompt_only"]
    );
}

#[test]
fn openai_chat_reproduces_the_gpt_5_4_chat_series_within_3_pct() {
    let Some(d) = data("openai_chat_series") else {
        return;
    };
    let p = profile::find("gpt-5.4").unwrap();
    let pre = p.preamble(CounterKind::OpenaiChat, ToolChoice::None);
    let (s, u) = (
        d.series.system_prompt.as_str(),
        d.series.user_prompt.as_str(),
    );
    check_series(&d, &d.series.inline_scale.chat, 3.0, |t| {
        CounterKind::OpenaiChat.request(Some(s), u, t, pre)
    });
}

#[test]
fn openai_deferred_variants_match_the_static_configurations() {
    let Some(d) = data("openai_deferred_variants") else {
        return;
    };
    let p = profile::find("gpt-5.4").unwrap();
    let (s, u) = (
        d.series.system_prompt.as_str(),
        d.series.user_prompt.as_str(),
    );
    let st = &d.series.static_configurations.responses;
    let overhead = |variant: &str| {
        p.search_overheads
            .iter()
            .find(|o| o.variant.contains(variant))
            .unwrap()
            .tokens
    };
    for (n, ns_key, flat_key) in [
        (3, "3_deferred_namespace", "3_deferred_flat_per_function"),
        (21, "21_deferred_namespace", "21_deferred_flat_per_function"),
    ] {
        let refs: Vec<&Tool> = d.tools[..n].iter().collect();
        let ns = CounterKind::OpenaiResponses.deferred_request(
            Some(s),
            u,
            &refs,
            Deferral::Namespace,
            overhead("namespace"),
        );
        assert_eq!(ns, st[ns_key], "{ns_key}");
        let flat = CounterKind::OpenaiResponses.deferred_request(
            Some(s),
            u,
            &refs,
            Deferral::Flat,
            overhead("flat"),
        );
        eprintln!("{flat_key}: {flat} vs {}", st[flat_key]);
        assert!(
            within(flat, st[flat_key], 3.0),
            "{flat_key}: {flat} vs {}",
            st[flat_key]
        );
    }
}

#[test]
fn the_anthropic_estimate_reproduces_count_tokens_within_its_stated_error() {
    let Some(d) = data("anthropic_estimate_series") else {
        return;
    };
    let p = profile::find("claude-sonnet-4-6").unwrap();
    let pre = p.preamble(CounterKind::AnthropicEstimate, ToolChoice::Auto);
    let err = CounterKind::AnthropicEstimate.error_pct().unwrap();
    let (s, u) = (
        d.series.system_prompt.as_str(),
        d.series.user_prompt.as_str(),
    );
    check_series(&d, &d.series.inline_scale.anthropic, err, |t| {
        CounterKind::AnthropicEstimate.request(Some(s), u, t, pre)
    });
    let st = &d.series.static_configurations.anthropic;
    for (n, key) in [(3, "3_inline"), (21, "21_inline")] {
        let refs: Vec<&Tool> = d.tools[..n].iter().collect();
        let got = CounterKind::AnthropicEstimate.request(Some(s), u, &refs, pre);
        assert!(
            within(got, st[key], err),
            "{key}: {got} vs {} (± {err}%)",
            st[key]
        );
    }
}

#[test]
fn the_calibration_features_are_the_public_data_counted() {
    let Some(d) = data("calibration_features") else {
        return;
    };
    let c = anthropic::Calibration::committed();
    let o200k = |s: &str| Tokenizer::O200kBase.count(s);
    let tools: Vec<usize> = d.tools.iter().map(|t| o200k(&render_json(t))).collect();
    assert_eq!(tools, c.tool_json_o200k);
    assert_eq!(
        o200k(&d.series.system_prompt) + o200k(&d.series.user_prompt),
        c.text_o200k
    );
    let billed: Vec<usize> = c.observations.iter().take(7).map(|o| o.billed).collect();
    assert_eq!(billed, d.series.inline_scale.anthropic);
}

#[derive(Deserialize)]
struct Cookbook {
    tools: serde_json::Value,
    messages: Vec<Message>,
    prompt_tokens_counted_by_the_api: std::collections::BTreeMap<String, usize>,
}

#[derive(Deserialize)]
struct Message {
    role: String,
    content: String,
}

#[test]
fn openai_chat_reproduces_the_cookbook_example_exactly() {
    let Some(dir) = crate::support::shared_data() else {
        return crate::support::skip("cookbook", "../shared/data not found");
    };
    let path = dir.join("provider-counts/openai-cookbook-weather.json");
    let c: Cookbook = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let tools_file = tmp.path().join("tools.json");
    std::fs::write(&tools_file, c.tools.to_string()).unwrap();
    let catalog = load_catalogs(&[CatalogSource {
        path: tools_file,
        server: None,
    }])
    .unwrap();
    let refs: Vec<&Tool> = catalog.tools().iter().collect();
    assert_eq!(c.messages[0].role, "system");
    assert_eq!(c.messages[1].role, "user");
    let (s, u) = (
        c.messages[0].content.as_str(),
        c.messages[1].content.as_str(),
    );
    let gpt4o = profile::find("gpt-4o").unwrap();
    let pre = gpt4o.preamble(CounterKind::OpenaiChat, ToolChoice::Auto);
    let got = CounterKind::OpenaiChat.request(Some(s), u, &refs, pre);
    assert_eq!(got, c.prompt_tokens_counted_by_the_api["gpt-4o"]);
    // The same framing under gpt-4's cl100k_base gives the API's gpt-4 count too.
    let f = Framing {
        api: Api::Chat,
        tokenizer: Tokenizer::Cl100kBase,
    };
    let counting = toolbudget::counter::harmony::ToolCounting {
        tokenizer: Tokenizer::Cl100kBase,
    };
    let cl100k = f.system(Some(s))
        + f.message_from_count(Tokenizer::Cl100kBase.count(u))
        + f.tools_fixed(Some(s))
        + refs.iter().map(|t| counting.tool(t)).sum::<usize>();
    assert_eq!(cl100k, c.prompt_tokens_counted_by_the_api["gpt-4"]);
}

/// The interface's promise: a scenario with `model`, a literal `system_prompt`, one `user`
/// turn and the first N tools, simulated eagerly, gives as its first request's input tokens
/// what the provider billed for that request.
#[test]
fn simulated_first_requests_are_what_the_providers_billed() {
    let Some(d) = data("simulated_first_requests") else {
        return;
    };
    let Some(dir) = crate::support::shared_data() else {
        return;
    };
    let all: Vec<serde_json::Value> = serde_json::from_slice(
        &std::fs::read(dir.join("provider-counts/acme-21-tools.anthropic.json")).unwrap(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let q = |s: &str| serde_json::to_string(s).unwrap();
    let err = CounterKind::AnthropicEstimate.error_pct().unwrap();
    // (model, extra keys, billed series, tolerance %, expected counter)
    let series: [(&str, &str, &[usize], f64, &str); 3] = [
        (
            "gpt-5.4",
            "tool_choice: none\n",
            &d.series.inline_scale.responses,
            3.0,
            "openai-responses",
        ),
        (
            "gpt-5.4",
            "tool_choice: none\ncounter: openai-chat\n",
            &d.series.inline_scale.chat,
            3.0,
            "openai-chat",
        ),
        (
            "claude-sonnet-4-6",
            "",
            &d.series.inline_scale.anthropic,
            err,
            "anthropic-estimate",
        ),
    ];
    let mut files = Vec::new();
    let mut expected = Vec::new();
    for (si, (model, extra, billed, tol, counter)) in series.iter().enumerate() {
        for (&n, &want) in d.series.inline_scale.n.iter().zip(billed.iter()) {
            let cat = tmp.path().join(format!("tools-{n}.json"));
            std::fs::write(&cat, serde_json::to_string(&all[..n]).unwrap()).unwrap();
            let sc = tmp.path().join(format!("s{si}-{n}.yaml"));
            std::fs::write(
                &sc,
                format!(
                    "name: s{si}-{n}\nmodel: {model}\n{extra}system_prompt: {}\ncatalogs: [tools-{n}.json]\nconversation:\n  - user: {}\n",
                    q(&d.series.system_prompt),
                    q(&d.series.user_prompt)
                ),
            )
            .unwrap();
            files.push(sc);
            expected.push((format!("s{si}-{n}"), want, *tol, *counter));
        }
    }
    let out = assert_cmd::Command::cargo_bin("toolbudget")
        .unwrap()
        .arg("simulate")
        .args(&files)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let scenarios = v["scenarios"].as_array().unwrap();
    assert_eq!(scenarios.len(), expected.len());
    let mut report = Vec::new();
    let mut ok = true;
    for (s, (name, want, tol, counter)) in scenarios.iter().zip(&expected) {
        assert_eq!(&s["name"], name.as_str());
        assert_eq!(&s["counter"], *counter, "{name}");
        let got = s["eager"]["first_request_tokens"].as_u64().unwrap() as usize;
        ok &= within(got, *want, *tol);
        report.push(format!("{name}: {got} vs {want}"));
    }
    eprintln!("{}", report.join("; "));
    assert!(ok, "{}", report.join("; "));
}
