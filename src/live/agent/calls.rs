//! The model's calls answered: the search tool searched (client side), a loaded tool's recorded result returned, anything else an error; each search recorded; the turn's trajectory assertions checked.
//! Searches and calls of deferred tools are counted for adoption by the one definition
//! ([`crate::adoption`]), as `session import` counts them in real logs.

use super::*;
use crate::adoption::Use;

impl Agent<'_> {
    /// Answers one call; returns the result text and whether it is an error.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answer(
        &mut self,
        c: &ToolCall,
        t: &Turn,
        expected: &[usize],
        row: &mut TurnRow,
        called: &mut Vec<usize>,
        malformed: &mut Vec<usize>,
        other_calls: &mut usize,
    ) -> Result<(String, bool), LiveError> {
        let target = self.names.by_name.get(&c.name).copied();
        if !matches!(target, Some(Target::Search)) {
            let tool = match target {
                Some(Target::Tool(i)) => Some(i),
                _ => None,
            };
            let args = serde_json::from_str::<Value>(&c.arguments)
                .map_or_else(|_| c.arguments.clone(), |v| canonical(&v).to_string());
            self.turn_calls.push((tool, args));
        }
        Ok(match target {
            Some(Target::Search) if self.deferring && self.provider_search.is_none() => {
                return self.client_search(c, expected, row);
            }
            Some(Target::Tool(i)) if self.available(i) => {
                let deferred = self.is_deferred(i);
                let came_first =
                    self.adoption.call(&self.prep.catalog().get(i).id, deferred) == Use::First;
                if self.is_deferred(i) && !self.loaded[i] {
                    self.adoption.first_failed();
                    *other_calls += 1;
                    return Ok((
                        format!(
                            "Error: {} is not loaded. Search for it with {} first.",
                            c.name,
                            api_tool_name(&self.search_def.id)
                        ),
                        true,
                    ));
                }
                let tool = self.prep.catalog().get(i);
                if let Err(why) = arguments::check(&c.arguments, &tool.input_schema) {
                    if came_first {
                        self.adoption.first_failed();
                    }
                    row.malformed_calls += 1;
                    if !malformed.contains(&i) {
                        malformed.push(i);
                    }
                    *other_calls += 1;
                    (
                        format!("Error: invalid arguments for {}: {why}", c.name),
                        true,
                    )
                } else {
                    called.push(i);
                    if !expected.contains(&i) {
                        *other_calls += 1;
                        return Ok((UNEXPECTED_RESULT.to_string(), false));
                    }
                    let call = t.calls.iter().find(|x| x.tool.id == tool.id);
                    let text = call.and_then(|x| x.result.clone()).unwrap_or_else(|| {
                        let n = call
                            .and_then(|x| x.result_tokens)
                            .or(self.sc.sizes.result)
                            .unwrap_or(100);
                        filler(&tool.id, n)
                    });
                    (text, false)
                }
            }
            _ => {
                row.unknown_calls += 1;
                *other_calls += 1;
                (format!("Error: there is no tool named {:?}.", c.name), true)
            }
        })
    }

    /// Runs toolbudget's search for a search-tool call and loads what it returns.
    pub(super) fn client_search(
        &mut self,
        c: &ToolCall,
        expected: &[usize],
        row: &mut TurnRow,
    ) -> Result<(String, bool), LiveError> {
        let args = match arguments::check(&c.arguments, &self.search_def.input_schema) {
            Ok(a) => a,
            Err(why) => {
                // A search all the same, whose answer named no tool (as a failed search in a
                // session log).
                let query = serde_json::from_str::<Value>(&c.arguments)
                    .ok()
                    .and_then(|v| v.get("query").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_default();
                self.adoption.search(query.trim(), Some(&[]));
                row.malformed_calls += 1;
                return Ok((
                    format!("Error: invalid arguments for {}: {why}", c.name),
                    true,
                ));
            }
        };
        let query = args
            .get("query")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim();
        let limit = args
            .get("max_results")
            .and_then(Value::as_f64)
            .map_or(self.sc.deferred.max_results, |n| n.max(1.0) as usize)
            .min(MAX_SEARCH_RESULTS);
        let candidates: Vec<bool> = (0..self.prep.catalog().len())
            .map(|i| self.available(i) && self.is_deferred(i))
            .collect();
        let scorer = if query.starts_with("select:") {
            self.prep.select_scorer()
        } else {
            self.prep.scorer()
        };
        let request = SearchRequest {
            query,
            limit,
            candidates: Some(&candidates),
            id: None,
        };
        let hits: Vec<usize> = match scorer.search(&request) {
            Ok(o) => o
                .hits
                .iter()
                .map(|h| h.tool)
                .filter(|&i| candidates[i])
                .take(limit)
                .collect(),
            // The query's fault is the model's: it is told. The scorer's own failure stops the run.
            Err(SearchError::Refused(e)) => {
                self.adoption.search(query, Some(&[]));
                return Ok((format!("Error: the query was refused: {}", e.message), true));
            }
            Err(SearchError::Failed(message)) => return Err(LiveError::Scorer(message)),
        };
        self.record_search(query, &hits);
        if hits.is_empty() {
            return Ok((
                format!("No deferred tool matches {query:?}. Try other keywords, or select:NAME."),
                false,
            ));
        }
        let mut text = format!(
            "Loaded {} tool{}; call {} directly now:",
            hits.len(),
            if hits.len() == 1 { "" } else { "s" },
            if hits.len() == 1 { "it" } else { "them" }
        );
        for &i in &hits {
            self.load(i);
            row.search_found_expected |= expected.contains(&i);
            let t = self.prep.catalog().get(i);
            if self.appends() {
                // `reveal: append`: the whole definition, here in the history, is all the
                // model gets of the tool; the tools list stays as it was (its cached prefix too).
                let def = serde_json::json!({"name": self.names.of_tool[i],
                    "description": t.description, "parameters": t.input_schema});
                text.push_str(&format!("\n- {def}"));
            } else {
                text.push_str(&format!(
                    "\n- {}: {}",
                    self.names.of_tool[i],
                    listing::one_line(&t.description)
                ));
            }
        }
        Ok((text, false))
    }

    /// A search that ran (client or provider side) and the tools it returned: kept as a row
    /// and counted for adoption.
    pub(super) fn record_search(&mut self, query: &str, returned: &[usize]) {
        let ids: Vec<&str> = returned
            .iter()
            .map(|&i| self.prep.catalog().get(i).id.as_str())
            .collect();
        self.adoption.search(query, Some(&ids));
        self.out.searches.push(SearchRow {
            scenario: self.sc.name.clone(),
            mode: self.mode.name().to_string(),
            run: self.run,
            turn: self.turn_no,
            query: query.to_string(),
            returned: returned
                .iter()
                .map(|&i| self.prep.catalog().get(i).id.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        });
    }

    /// The trajectory assertions the current turn's calls broke.
    pub(super) fn broken(&self, a: &Trajectory, expected: &[usize]) -> Vec<Broken> {
        let forbidden: Vec<usize> = a
            .must_not_call
            .iter()
            .map(|r| self.prep.index(&r.id))
            .collect();
        trajectory(a, &forbidden, expected, &self.turn_calls)
    }
}
