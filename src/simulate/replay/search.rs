//! A call the model makes: its tool found first when deferred (recorded searches, the scorer's own, retries), its definitions loaded, its request flushed.

use super::*;

impl Run<'_> {
    /// The turn's retrieval: the top results for the user's text join this turn's tools.
    pub(super) fn auto_retrieve(&mut self, a: &mut Agent, t: &Turn, next: &mut Next) -> Result<()> {
        let (hits, search_ms) = self.search(a, &t.user, t.at, None, false)?;
        self.counts.searches += 1;
        a.turn_tools = hits
            .into_iter()
            .filter(|&i| !self.is_loaded(a, i))
            .collect();
        let fetched = self
            .fetch
            .fetch(&self.sc.profile, self.clock_s, &a.turn_tools);
        next.client_ms += search_ms + fetched;
        self.refresh_tools(a);
        Ok(())
    }

    /// One needed tool call: searched for first when not loaded (after a premature call, at
    /// the scenario's rate); not made when its server is away or no search finds it.
    pub(super) fn call<'s>(
        &mut self,
        a: &mut Agent,
        t: &Turn,
        call: &'s Call,
        group: &mut Option<Group<'s>>,
        next: &mut Next,
    ) -> Result<()> {
        let idx = self.prep.index(&call.tool.id);
        if !self.available(a, idx) {
            self.counts.unavailable_calls += 1;
            return Ok(());
        }
        if !self.is_loaded(a, idx) {
            // A search is a request of its own: whatever was written before goes first.
            self.flush(a, group, next)?;
            if self.sc.deferred.discovery == Discovery::AutoRetrieve {
                // This turn's retrieval missed the tool; the model falls back to searching.
                self.counts.misses += 1;
            }
            let rate = self.sc.failures.premature_call_rate;
            if rate > 0.0 && self.rng.unit() < rate {
                self.counts.premature_calls += 1;
                let out = self.call_tokens(idx, Some(call));
                self.send(a, next, out);
                *next = Next {
                    definitions: 0,
                    kind: RequestKind::ErrorResult,
                    new: self.error_tokens(idx),
                    tool: Some(idx),
                    client_ms: 0.0,
                    continuation: 0,
                    continuation_definitions: 0,
                };
            }
            if !self.search_for(a, idx, call, t, next)? {
                self.counts.failed_calls += 1;
                return Ok(());
            }
        } else if !call.parallel {
            self.flush(a, group, next)?;
        }
        self.counts.tool_calls += 1;
        let result = match (&call.subagent, call.result_tokens) {
            (_, Some(n)) => n,
            (Some(sub), None) => sub.result_tokens.unwrap_or(self.profile().reply_tokens),
            (None, None) => self.sc.sizes.result.unwrap_or(DEFAULT_RESULT_TOKENS),
        };
        let out = self.call_tokens(idx, Some(call));
        group
            .get_or_insert_with(|| Group::new(RequestKind::ToolResult, Some(idx)))
            .add(out, result, call.subagent.as_ref());
        Ok(())
    }

    /// Sends the request that wrote the grouped calls, runs their subagents, and makes their
    /// results the next request's `new`.
    pub(super) fn flush(
        &mut self,
        a: &mut Agent,
        group: &mut Option<Group<'_>>,
        next: &mut Next,
    ) -> Result<()> {
        let Some(g) = group.take() else {
            return Ok(());
        };
        self.send(a, next, g.out);
        for sub in &g.subagents {
            self.subagent(a, sub)?;
        }
        *next = Next {
            definitions: g.definitions,
            kind: g.kind,
            new: g.result,
            tool: g.tool,
            client_ms: g.client_ms,
            continuation: 0,
            continuation_definitions: 0,
        };
        Ok(())
    }

    /// A search recorded in a real session: the deferred replay sends it as the model did and
    /// loads what it loaded (the log's own framing size when it has one); a mode that does
    /// not defer never searched.
    pub(super) fn recorded_search<'s>(
        &mut self,
        a: &mut Agent,
        call: &'s Call,
        loads: &[crate::simulate::scenario::ToolRef],
        group: &mut Option<Group<'s>>,
        next: &mut Next,
    ) -> Result<()> {
        if !a.deferring {
            return Ok(());
        }
        if !call.parallel {
            self.flush(a, group, next)?;
        }
        self.counts.searches += 1;
        let hits: Vec<usize> = loads
            .iter()
            .map(|r| self.prep.index(&r.id))
            .filter(|&i| self.available(a, i))
            .collect();
        let (with_framing, definitions, loaded) = self.load_hits(a, &hits);
        let result = match call.result_tokens {
            Some(n) => with_framing - self.search_framing(&hits) + n,
            None => with_framing,
        };
        let fetched = self.fetch.fetch(&self.sc.profile, self.clock_s, &loaded);
        let out = call
            .call_tokens
            .unwrap_or_else(|| self.search_call_tokens(call.query.as_deref().unwrap_or("")));
        let g = group.get_or_insert_with(|| Group::new(RequestKind::Search, None));
        g.add(out, result, None);
        g.definitions += definitions;
        g.client_ms += self.profile().search_latency_ms + fetched;
        Ok(())
    }

    /// The queries the model tries for a tool: the first search, then one per retry step
    /// (repeats dropped).
    pub(super) fn search_queries(&self, tool: usize, call: &Call, t: &Turn) -> Vec<String> {
        let id = &self.prep.catalog.get(tool).id;
        let select = format!("select:{id}");
        let first = match self.sc.deferred.discovery {
            Discovery::Select => select.clone(),
            Discovery::ModelSearch | Discovery::AutoRetrieve => {
                call.query.clone().unwrap_or_else(|| t.user.clone())
            }
        };
        let mut queries = vec![first];
        for step in &self.sc.deferred.retry {
            let q = match step {
                RetryStep::Rephrase => self.prep.name_query(tool),
                RetryStep::Select => select.clone(),
            };
            if !queries.contains(&q) {
                queries.push(q);
            }
        }
        queries
    }

    /// Searches until the needed tool is loaded or the retry policy is exhausted; each search
    /// is a request (the model's search call) whose result is the next request's `new`.
    pub(super) fn search_for(
        &mut self,
        a: &mut Agent,
        tool: usize,
        call: &Call,
        t: &Turn,
        next: &mut Next,
    ) -> Result<bool> {
        // OpenAI's hosted tool_search runs inside the response that makes it: no request of
        // its own; its call and output join the pending request (billed once, with it).
        let hosted = self.prep.hosted_search;
        for (n, q) in self.search_queries(tool, call, t).iter().enumerate() {
            if !hosted {
                let out = self.search_call_tokens(q);
                self.send(a, next, out);
            }
            if n == 0 {
                self.counts.searches += 1;
            } else {
                self.counts.retries += 1;
            }
            let is_select = q.starts_with("select:");
            let scope = if self.sc.deferred.listing == Listing::Servers && !is_select {
                Some(self.prep.plan.server_of[tool])
            } else {
                None
            };
            // The user's text is written at `user:`; a call's own query or a rephrasing of the
            // tool's name belongs to the call.
            let at = if call.query.is_none() && n == 0 {
                t.at
            } else {
                call.at
            };
            let (hits, search_ms) = self.search(a, q, at, scope, is_select)?;
            let (result, definitions, loaded) = self.load_hits(a, &hits);
            let fetched = self.fetch.fetch(&self.sc.profile, self.clock_s, &loaded);
            if hosted {
                let round = self.hosted_round(&hits, &loaded);
                next.new += round;
                next.continuation += round;
                next.continuation_definitions += definitions;
                next.definitions += definitions;
                next.client_ms += search_ms + fetched;
            } else {
                *next = Next {
                    definitions,
                    kind: if n == 0 {
                        RequestKind::Search
                    } else {
                        RequestKind::Retry
                    },
                    new: result,
                    tool: None,
                    client_ms: search_ms + fetched,
                    continuation: 0,
                    continuation_definitions: 0,
                };
            }
            if hits.contains(&tool) {
                return Ok(true);
            }
            self.counts.misses += 1;
        }
        Ok(false)
    }

    /// Loads every returned tool (its reference is expanded) with its dependencies; returns the
    /// search result's tokens, the definitions among them and the tools loaded.
    pub(super) fn load_hits(&self, a: &mut Agent, hits: &[usize]) -> (usize, usize, Vec<usize>) {
        let mut loaded: Vec<usize> = Vec::new();
        for &h in hits {
            if !a.discovered[h] && self.is_deferred(a, h) {
                a.discovered[h] = true;
            }
            loaded.push(h);
        }
        let mut k = 0;
        while k < loaded.len() {
            for &d in &self.prep.plan.deps[loaded[k]] {
                if self.available(a, d) && !self.is_loaded(a, d) {
                    a.discovered[d] = true;
                    loaded.push(d);
                }
            }
            k += 1;
        }
        let framing = self.search_framing(hits);
        let definitions = match self.reveal() {
            Reveal::Append => loaded.iter().map(|&i| self.prep.tokens.get(i)).sum(),
            Reveal::ToolsList => {
                self.refresh_tools(a);
                0
            }
        };
        (framing + definitions, definitions, loaded)
    }

    /// Runs the search core over the agent's deferred tools (optionally one server's); returns
    /// the hits and the search's latency in ms (modeled, or measured on the real scorer).
    pub(super) fn search(
        &mut self,
        a: &Agent,
        query: &str,
        at: Option<Position>,
        server: Option<Option<usize>>,
        select: bool,
    ) -> Result<(Vec<usize>, f64)> {
        let plan = &self.prep.plan;
        let candidates: Vec<bool> = (0..self.prep.catalog.len())
            .map(|i| {
                self.available(a, i)
                    && self.is_deferred(a, i)
                    && server.is_none_or(|s| plan.server_of[i] == s)
            })
            .collect();
        let scorer = if select {
            self.prep
                .select_scorer
                .as_deref()
                .unwrap_or(&*self.prep.scorer)
        } else {
            &*self.prep.scorer
        };
        let request = SearchRequest {
            query,
            limit: self.sc.deferred.max_results,
            candidates: Some(&candidates),
            id: None,
        };
        let (outcome, ms) = match self.timing {
            SearchTiming::Modeled => (scorer.search(&request), self.profile().search_latency_ms),
            SearchTiming::Measured(clock) => {
                let timed = time_search(scorer, &request, clock);
                self.search_times.push(timed.elapsed);
                (timed.outcome, timed.elapsed.as_secs_f64() * 1000.0)
            }
        };
        let outcome = outcome.map_err(|e| match e {
            SearchError::Refused(e) => Error::input(
                &self.sc.path,
                at,
                format!("search query {} refused: {}", quote_short(query), e.message),
            ),
            failed @ SearchError::Failed(_) => Error::from(failed),
        })?;
        let hits = outcome
            .hits
            .iter()
            .take(self.sc.deferred.max_results)
            .map(|h| h.tool)
            .filter(|&i| candidates[i])
            .collect();
        Ok((hits, ms))
    }
}
