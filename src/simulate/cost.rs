//! Dollars per request, with and without prompt caching (ACCOUNTING.md).
//!
//! Caching: the provider keeps the longest prefix it saw in the previous request. With the
//! prefix order system, tool_overhead, tools, deferred_list (list style), history, new:
//! appending to the history keeps the whole previous input cached; changing the tools or the
//! listed deferred tools re-writes everything from that part on. Not modeled: the provider's
//! minimum cacheable length (1,024 tokens on most Claude models) and cache expiry between
//! turns (the 5-minute TTL is assumed to hold, except after a `resume` event).
//!
//! A request whose cached prefix is shorter than what the previous request left (a part before
//! the history changed, the history was replaced, or the cache expired) is a cache
//! invalidation: [`prefix_break`] names the part, and the tokens that had to be written again
//! instead of read are its cost (`Invalidations`).

use serde::{Deserialize, Serialize};

use super::profile::Profile;
use super::request::Parts;

/// What identifies the cacheable static prefix of a request: a change in any field moves the
/// cache boundary to that part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefixKey {
    pub system: usize,
    pub tool_overhead: usize,
    /// A signature of the exact tool set in the tools list.
    pub tools_sig: u64,
    pub tools: usize,
    /// A signature of the listed deferred tools (list style), 0 otherwise.
    pub list_sig: u64,
    pub list: usize,
    /// Bumped when history is replaced (clear, compaction).
    pub history_epoch: u64,
}

/// What the cache remembers of the previous request.
#[derive(Debug, Clone, Copy)]
pub struct CacheState {
    pub key: PrefixKey,
    pub input: usize,
}

/// The part whose change broke a request's cached prefix (prefix order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheBreak {
    /// The system prompt changed.
    System,
    /// The tools list changed: a definition revealed into it (`reveal: tools-list`), a turn's
    /// auto-retrieved tools, a server connecting or leaving while its tools are sent.
    Tools,
    /// The deferred list in the prompt changed (`list_style: list`): a server connecting or
    /// leaving, a tool no longer deferred.
    DeferredList,
    /// The history was replaced: `/clear` or a compaction.
    History,
    /// The cache expired: the session was resumed in a new process.
    Resume,
}

impl CacheBreak {
    pub const ALL: [CacheBreak; 5] = [
        CacheBreak::System,
        CacheBreak::Tools,
        CacheBreak::DeferredList,
        CacheBreak::History,
        CacheBreak::Resume,
    ];

    pub fn name(self) -> &'static str {
        match self {
            CacheBreak::System => "system",
            CacheBreak::Tools => "tools",
            CacheBreak::DeferredList => "deferred_list",
            CacheBreak::History => "history",
            CacheBreak::Resume => "resume",
        }
    }
}

/// Which part broke the prefix `prev` left, or `None` when the whole previous static prefix
/// and history are still a prefix of this request (only appended to).
pub fn prefix_break(prev: &CacheState, key: &PrefixKey) -> Option<CacheBreak> {
    let p = &prev.key;
    if p.system != key.system {
        Some(CacheBreak::System)
    } else if p.tool_overhead != key.tool_overhead
        || (p.tools_sig, p.tools) != (key.tools_sig, key.tools)
    {
        Some(CacheBreak::Tools)
    } else if (p.list_sig, p.list) != (key.list_sig, key.list) {
        Some(CacheBreak::DeferredList)
    } else if p.history_epoch != key.history_epoch {
        Some(CacheBreak::History)
    } else {
        None
    }
}

/// Tokens of `parts` (keyed by `key`) found in the cache left by `prev`.
pub fn cached_prefix(prev: Option<&CacheState>, key: &PrefixKey) -> usize {
    let Some(prev) = prev else { return 0 };
    let p = &prev.key;
    let mut cached = 0;
    if p.system != key.system {
        return 0;
    }
    cached += key.system;
    if p.tool_overhead != key.tool_overhead {
        return cached;
    }
    cached += key.tool_overhead;
    if (p.tools_sig, p.tools) != (key.tools_sig, key.tools) {
        return cached;
    }
    cached += key.tools;
    if (p.list_sig, p.list) != (key.list_sig, key.list) {
        return cached;
    }
    cached += key.list;
    if p.history_epoch != key.history_epoch {
        return cached;
    }
    // Same static prefix, history only appended to: the whole previous input is a prefix.
    prev.input.max(cached)
}

/// USD without caching, at the prices of a request of this size.
pub fn cost_uncached(profile: &Profile, parts: &Parts, output: usize) -> f64 {
    let r = profile.rates(parts.total());
    (parts.total() as f64 * r.input + output as f64 * r.output) / 1e6
}

/// USD with caching: `cached` at the cache-read price, the rest written to the cache, at the
/// prices of a request of this size.
pub fn cost_cached(profile: &Profile, input: usize, cached: usize, output: usize) -> f64 {
    let r = profile.rates(input);
    let written = input.saturating_sub(cached);
    (cached as f64 * r.cache_read + written as f64 * r.cache_write + output as f64 * r.output) / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::profile;

    fn key(tools_sig: u64, epoch: u64) -> PrefixKey {
        PrefixKey {
            system: 1000,
            tool_overhead: 300,
            tools_sig,
            tools: 180,
            list_sig: 7,
            list: 20,
            history_epoch: epoch,
        }
    }

    #[test]
    fn appending_keeps_the_whole_previous_input() {
        let prev = CacheState {
            key: key(1, 0),
            input: 1510,
        };
        assert_eq!(cached_prefix(Some(&prev), &key(1, 0)), 1510);
        assert_eq!(cached_prefix(None, &key(1, 0)), 0);
    }

    #[test]
    fn a_changed_tools_list_rewrites_from_the_tools() {
        let prev = CacheState {
            key: key(1, 0),
            input: 1510,
        };
        assert_eq!(cached_prefix(Some(&prev), &key(2, 0)), 1300);
        // A replaced history keeps the static prefix only.
        assert_eq!(cached_prefix(Some(&prev), &key(1, 1)), 1500);
    }

    #[test]
    fn a_break_names_the_first_changed_part() {
        let prev = CacheState {
            key: key(1, 0),
            input: 1510,
        };
        assert_eq!(prefix_break(&prev, &key(1, 0)), None);
        assert_eq!(prefix_break(&prev, &key(2, 0)), Some(CacheBreak::Tools));
        assert_eq!(prefix_break(&prev, &key(1, 1)), Some(CacheBreak::History));
        // A changed tools list is named before a replaced history: it comes first in the prefix.
        assert_eq!(prefix_break(&prev, &key(2, 1)), Some(CacheBreak::Tools));
        let mut listed = key(1, 0);
        listed.list = 25;
        assert_eq!(prefix_break(&prev, &listed), Some(CacheBreak::DeferredList));
        let mut system = key(2, 1);
        system.system = 999;
        assert_eq!(prefix_break(&prev, &system), Some(CacheBreak::System));
    }

    #[test]
    fn prices_apply_per_million() {
        let p = profile::find("claude-sonnet-4.5").unwrap();
        let parts = |system| Parts {
            system,
            ..Parts::default()
        };
        // 100k in at 3, 10k out at 15.
        assert!((cost_uncached(&p, &parts(100_000), 10_000) - (0.3 + 0.15)).abs() < 1e-9);
        // Over 200k input, every token of the request at the long-context tier: 6 in, 22.5 out.
        assert!((cost_uncached(&p, &parts(1_000_000), 1_000_000) - 28.5).abs() < 1e-9);
        // 120k read at 0.30, 80k written at 3.75; then 600k read at 0.60, 400k written at 7.5.
        assert!((cost_cached(&p, 200_000, 120_000, 0) - (0.036 + 0.3)).abs() < 1e-9);
        assert!((cost_cached(&p, 1_000_000, 600_000, 0) - (0.36 + 3.0)).abs() < 1e-9);
    }
}
