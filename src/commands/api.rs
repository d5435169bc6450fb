//! The `anthropic-api` counter's client as the binary provides it: the key and base URL from
//! the environment, the real transport, the answers cached in `--api-cache`, written back
//! whenever they grew (also after a failed request, so answers paid for are kept).

use crate::cli::ApiArgs;
use toolbudget::error::{Error, Result};
use toolbudget::experiment::api::{
    ApiClient, ApiCounting, ApiSettings, CacheLoad, DEFAULT_BASE_URL, Ureq,
};
use toolbudget::output::write_atomic;

/// The command's API access: its flags, owned (the client outlives no borrow).
pub struct ApiFiles(pub ApiArgs);

impl ApiCounting for ApiFiles {
    fn client(&mut self, model: &str) -> Result<ApiClient> {
        api_client(&self.0, model)
    }
    fn keep(&mut self, client: &ApiClient) -> Result<()> {
        save_api_cache(client)
    }
}

/// An API client over the cache file, with the key and base URL from the environment.
pub fn api_client(args: &ApiArgs, model: &str) -> Result<ApiClient> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let settings = ApiSettings {
        base_url: env("ANTHROPIC_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.into()),
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
    let client = ApiClient::new(
        settings,
        bytes.as_deref(),
        Box::new(Ureq::default()),
        // Never silent while waiting: say what for (a rate limit, an overloaded API).
        Box::new(|wait, note: &str| {
            eprintln!("note: {note}");
            std::thread::sleep(wait);
        }),
    );
    if let CacheLoad::Foreign(why) = &client.load {
        return Err(Error::input(
            &args.api_cache,
            None,
            format!(
                "is not an answers cache ({why}); the cache is written only over a cache: give \
                 --api-cache another path"
            ),
        ));
    }
    if let CacheLoad::Discarded(why) = &client.load {
        eprintln!(
            "note: {} was discarded ({why}); it is rebuilt from the API's answers",
            args.api_cache.display()
        );
    }
    Ok(client)
}

/// Writes the cache if it gained answers (or replaces a discarded file).
pub fn save_api_cache(client: &ApiClient) -> Result<()> {
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
