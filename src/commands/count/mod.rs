//! `toolbudget count`: token counts per tool, per server and in total, under one counter or
//! (`--compare-counters`) under every counter side by side.

pub mod compare;

use super::progress::{self, Bar, ticker};
use crate::cli::{ApiArgs, CountArgs};
use toolbudget::catalog::Catalog;
use toolbudget::counter::api::{self, ApiToolCounts, Client, Settings};
use toolbudget::counter::{CounterKind, ToolChoice, ToolTokens};
use toolbudget::error::{Error, Result};
use toolbudget::experiment::count::{Fixed, reference_profile, summarize};
use toolbudget::output::{emit, write_atomic};
use toolbudget::simulate::profile::Profile;
use toolbudget::tokenize::{Render, Tokenizer};
use toolbudget::view;
use toolbudget::view::count::{BodyEntry, CapturedCount, HostedEntry};

/// An API client over the cache file, with the key and base URL from the environment.
pub fn api_client(args: &ApiArgs, model: &str) -> Result<Client> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let settings = Settings {
        base_url: env("ANTHROPIC_BASE_URL").unwrap_or_else(|| api::DEFAULT_BASE_URL.into()),
        key: env("ANTHROPIC_API_KEY"),
        model: model.to_string(),
        cache_path: args.api_cache.clone(),
        offline: args.offline,
    };
    // A missing cache is an empty one; anything else goes through the bounded reader.
    let bytes = if args.api_cache.exists() {
        Some(toolbudget::input::read(&args.api_cache)?)
    } else {
        None
    };
    let client = Client::new(
        settings,
        bytes.as_deref(),
        Box::new(api::Ureq::default()),
        // Never silent while waiting: say what for (a rate limit, an overloaded API).
        Box::new(|wait, note: &str| {
            eprintln!("note: {note}");
            std::thread::sleep(wait);
        }),
    );
    if let api::CacheLoad::Discarded(why) = &client.load {
        eprintln!(
            "note: {} was discarded ({why}); it is rebuilt from the API's answers",
            args.api_cache.display()
        );
    }
    Ok(client)
}

/// Writes the cache if it gained answers (or replaces a discarded file).
pub fn save_api_cache(client: &Client) -> Result<()> {
    if !client.cache.is_dirty() {
        return Ok(());
    }
    let path = client.cache_path();
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Write {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    write_atomic(path, &client.cache.to_bytes())
}

/// Per-tool counts from the API; the cache is saved even when a later request fails, so
/// answers already paid for are kept.
pub fn api_counts(
    args: &ApiArgs,
    catalog: &Catalog,
    model: &Profile,
    choice: ToolChoice,
    tick: &dyn Fn(),
) -> Result<ApiToolCounts> {
    let mut client = api_client(args, &model.api_model)?;
    let counted = api::tool_counts_ticked(&mut client, catalog, choice, tick);
    save_api_cache(&client)?;
    counted.map_err(|e| Error::Missing(e.to_string()))
}

/// One counter's counts and fixed cost for a catalog, `bar` advanced once per tool.
pub fn count_with(
    counter: CounterKind,
    catalog: &Catalog,
    model: Option<&str>,
    choice: ToolChoice,
    api: &ApiArgs,
    bar: &Bar,
) -> Result<(ToolTokens, Fixed)> {
    let profile = reference_profile(counter, model)?;
    if counter == CounterKind::AnthropicApi {
        let profile = profile.expect("anthropic-api has a reference model");
        let a = api_counts(api, catalog, &profile, choice, &ticker(bar))?;
        let fixed = Fixed::measured(counter, &profile, choice, a.fixed);
        return Ok((ToolTokens::of(counter, a.counts), fixed));
    }
    Ok((
        counter.tools_ticked(catalog, &ticker(bar)),
        Fixed::local(counter, profile.as_ref(), choice),
    ))
}

pub fn run(args: &CountArgs, quiet: bool) -> Result<()> {
    let visible = progress::visible(quiet);
    let loading = Bar::spinner(visible, "count", "loading the catalogs");
    let catalog = crate::commands::load(&args.catalog)?;
    loading.finish();
    if args.compare_counters {
        let report = compare::compare(&catalog, args, visible)?;
        return emit(
            args.output.out.as_deref(),
            &view::counters::render(&report, args.output.format),
        );
    }
    let counter = args.counter.unwrap_or_else(|| {
        CounterKind::from_legacy(
            args.tokenizer.unwrap_or(Tokenizer::O200kBase),
            args.render.unwrap_or(Render::Json),
        )
    });
    let bar = Bar::new(visible, "count", catalog.len(), "tools");
    bar.step(counter.name());
    let (tokens, fixed) = count_with(
        counter,
        &catalog,
        args.model.as_deref(),
        args.tool_choice,
        &args.api,
        &bar,
    )?;
    bar.finish();
    let report = summarize(&catalog, &tokens, &fixed);
    let captured = captured_count(&catalog, tokens.counts());
    emit(
        args.output.out.as_deref(),
        &view::count::render_captured(&report, captured.as_ref(), args.output.format),
    )
}

/// What the captured request bodies (and hosted entries) of a catalog say about deferral,
/// `None` when the catalog has neither. `counts` are the tools' tokens in catalog order.
fn captured_count(catalog: &Catalog, counts: &[usize]) -> Option<CapturedCount> {
    if catalog.captured().is_empty() {
        return None;
    }
    let (mut sent_whole, mut sent_whole_tokens, mut deferred, mut deferred_tokens) = (0, 0, 0, 0);
    for (t, &c) in catalog.tools().iter().zip(counts) {
        if t.defer() == Some(true) {
            deferred += 1;
            deferred_tokens += c;
        } else {
            sent_whole += 1;
            sent_whole_tokens += c;
        }
    }
    let bodies = catalog
        .captured()
        .iter()
        .filter_map(|c| {
            c.body.as_ref().map(|b| BodyEntry {
                file: c.path.display().to_string(),
                shape: b.shape.key(),
                model: b.model.clone(),
                ignored: b.ignored.clone(),
            })
        })
        .collect();
    let hosted: Vec<HostedEntry> = catalog
        .hosted()
        .map(|h| HostedEntry {
            file: h.origin.path.display().to_string(),
            kind: h.kind.clone(),
            name: h.name.clone(),
            provider: h.provider,
            search: h.search,
            tokens: h.cost.as_ref().map(|c| c.tokens),
            basis: h.cost.as_ref().map(|c| c.basis),
            source: h.cost.as_ref().map(|c| c.source),
        })
        .collect();
    let search_tool = catalog
        .hosted()
        .find(|h| h.search)
        .map(|h| h.name.clone().unwrap_or_else(|| h.kind.clone()))
        .or_else(|| catalog.search_tool().map(|i| catalog.get(i).id.clone()));
    Some(
        CapturedCount {
            bodies,
            sent_whole,
            sent_whole_tokens,
            deferred,
            deferred_tokens,
            hosted_tokens: hosted.iter().filter_map(|h| h.tokens).sum(),
            hosted,
            search_tool,
            deferral: "",
            notes: Vec::new(),
        }
        .judge(),
    )
}
