//! Adoption of the search tool: whether the model searched before it used a deferred tool.
//! One definition, used by `live` (each turn it plays) and by `session import` (each real
//! session): the counts of [`Adoption`], and the [`Tracker`] that classifies a conversation's
//! searches and calls in order.
//!
//! - A **search** is a call of the search tool; a `select:` search names its tools
//!   (`select:A,B`), a keyword search does not. A search **returned nothing** when its result
//!   named no tool.
//! - A **deferred-tool call** is a call of a tool that was deferred (listed by name only until
//!   a search loads it); the search tool itself is never one.
//! - Such a call is **found** when an earlier search of the same conversation (since the last
//!   `/clear`) returned that tool; it **came first** otherwise: called before any search
//!   loaded it. A call that came first and whose result was an error **failed**.
//!
//! In `live` a conversation is one scenario played in one mode and run; its `clear` event,
//! and a `compact` or `resume` that drops the loaded tools, forget what was returned (the
//! tools must be searched for again). A search whose arguments were malformed or whose query
//! was refused returned nothing; a call of a name no tool has is not a deferred-tool call.
//! `live` reports the counts per turn and mode (`premature_calls` is `first_calls`).

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

/// Whether a search query selects its tools by name (`select:NAME[,NAME…]`).
pub fn is_select(query: &str) -> bool {
    query.trim_start().starts_with("select:")
}

/// The counts, per conversation, session, turn or run; sums add up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adoption {
    /// Calls of the search tool.
    pub searches: usize,
    /// Of them, `select:` searches (the rest searched by keywords).
    pub select_searches: usize,
    /// Searches whose result named no tool (searches whose result is not in the log are not
    /// counted here).
    pub empty_searches: usize,
    /// Calls of deferred tools.
    pub deferred_calls: usize,
    /// Of them, calls of a tool an earlier search returned.
    pub found_calls: usize,
    /// Of them, calls before any search returned the tool.
    pub first_calls: usize,
    /// Of `first_calls`, those whose result was an error.
    pub failed_first_calls: usize,
}

impl Adoption {
    pub fn add(&mut self, o: &Adoption) {
        self.searches += o.searches;
        self.select_searches += o.select_searches;
        self.empty_searches += o.empty_searches;
        self.deferred_calls += o.deferred_calls;
        self.found_calls += o.found_calls;
        self.first_calls += o.first_calls;
        self.failed_first_calls += o.failed_first_calls;
    }

    /// Searches by keywords (not `select:`).
    pub fn keyword_searches(&self) -> usize {
        self.searches - self.select_searches
    }

    /// Share of the deferred-tool calls an earlier search returned, in percent (0 without any).
    pub fn found_pct(&self) -> f64 {
        crate::number::percent_of(self.found_calls as f64, self.deferred_calls as f64)
    }

    /// Share of the deferred-tool calls that came before any search returned the tool.
    pub fn first_pct(&self) -> f64 {
        crate::number::percent_of(self.first_calls as f64, self.deferred_calls as f64)
    }

    /// Counts one search; `returned` is the tools its result named, `None` when the result is
    /// unknown (not in the log).
    pub fn search(&mut self, query: &str, returned: Option<usize>) {
        self.searches += 1;
        if is_select(query) {
            self.select_searches += 1;
        }
        if returned == Some(0) {
            self.empty_searches += 1;
        }
    }

    /// Counts one call as classified.
    pub fn call(&mut self, u: Use) {
        match u {
            Use::NotDeferred => {}
            Use::Found => {
                self.deferred_calls += 1;
                self.found_calls += 1;
            }
            Use::First => {
                self.deferred_calls += 1;
                self.first_calls += 1;
            }
        }
    }
}

/// How one call stands to the searches before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Not a deferred tool (or the search tool).
    NotDeferred,
    /// A deferred tool an earlier search returned.
    Found,
    /// A deferred tool no earlier search returned.
    First,
}

/// One conversation followed in order: what its searches returned, and each call classified.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    returned: HashSet<String>,
    pub counts: Adoption,
}

impl Tracker {
    /// A search and the tools its result named (`None`: the result is not known).
    pub fn search(&mut self, query: &str, returned: Option<&[&str]>) {
        self.counts.search(query, returned.map(<[&str]>::len));
        for t in returned.unwrap_or(&[]) {
            self.returned.insert((*t).to_string());
        }
    }

    /// A call of `tool`, deferred or not; returns how it was counted.
    pub fn call(&mut self, tool: &str, deferred: bool) -> Use {
        let u = if !deferred {
            Use::NotDeferred
        } else if self.returned.contains(tool) {
            Use::Found
        } else {
            Use::First
        };
        self.counts.call(u);
        u
    }

    /// The last call counted as [`Use::First`] failed (its result was an error).
    pub fn first_failed(&mut self) {
        self.counts.failed_first_calls += 1;
    }

    /// `/clear`: what earlier searches returned is forgotten.
    pub fn clear(&mut self) {
        self.returned.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_found_only_after_a_search_that_returned_it() {
        let mut t = Tracker::default();
        assert_eq!(t.call("mcp__a__x", true), Use::First);
        t.first_failed();
        t.search("select:mcp__a__x", Some(&["mcp__a__x"]));
        assert_eq!(t.call("mcp__a__x", true), Use::Found);
        assert_eq!(t.call("mcp__a__y", true), Use::First);
        assert_eq!(t.call("Read", false), Use::NotDeferred);
        t.search("weather rain", Some(&[]));
        t.search("anything", None);
        t.clear();
        assert_eq!(t.call("mcp__a__x", true), Use::First);
        assert_eq!(
            t.counts,
            Adoption {
                searches: 3,
                select_searches: 1,
                empty_searches: 1,
                deferred_calls: 4,
                found_calls: 1,
                first_calls: 3,
                failed_first_calls: 1,
            }
        );
        assert_eq!(t.counts.keyword_searches(), 2);
        assert_eq!(t.counts.found_pct(), 25.0);
        assert_eq!(t.counts.first_pct(), 75.0);
        assert_eq!(Adoption::default().found_pct(), 0.0);
    }
}
