//! `toolbudget count`: token counts per tool, per server and in total, under one counter or
//! (`--compare-counters`) under every counter side by side.

pub mod compare;

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
) -> Result<ApiToolCounts> {
    let mut client = api_client(args, &model.api_model)?;
    let counted = api::tool_counts(&mut client, catalog, choice);
    save_api_cache(&client)?;
    counted.map_err(|e| Error::Missing(e.to_string()))
}

/// One counter's counts and fixed cost for a catalog.
pub fn count_with(
    counter: CounterKind,
    catalog: &Catalog,
    model: Option<&str>,
    choice: ToolChoice,
    api: &ApiArgs,
) -> Result<(ToolTokens, Fixed)> {
    let profile = reference_profile(counter, model)?;
    if counter == CounterKind::AnthropicApi {
        let a = api_counts(api, catalog, &profile, choice)?;
        let fixed = Fixed {
            model: profile.name.clone(),
            choice,
            tokens: a.fixed,
        };
        return Ok((ToolTokens::of(counter, a.counts), fixed));
    }
    Ok((
        counter.tools(catalog),
        Fixed::local(counter, &profile, choice),
    ))
}

pub fn run(args: &CountArgs) -> Result<()> {
    let catalog = crate::commands::load(&args.catalog)?;
    if args.compare_counters {
        let report = compare::compare(&catalog, args)?;
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
    let (tokens, fixed) = count_with(
        counter,
        &catalog,
        args.model.as_deref(),
        args.tool_choice,
        &args.api,
    )?;
    let report = summarize(&catalog, &tokens, &fixed);
    emit(
        args.output.out.as_deref(),
        &view::count::render(&report, args.output.format),
    )
}
