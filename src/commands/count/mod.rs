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
    emit(
        args.output.out.as_deref(),
        &view::count::render(&report, args.output.format),
    )
}
