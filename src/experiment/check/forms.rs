//! What a model is assumed to send for a deferred tool (the forms of the module notes), and what a client defers and finds.

use super::*;

/// Which tools a client defers: the simulator's rule (the search tool never; a tool's own
/// flag, then its server's, then the client's default for MCP tools and built-ins), and
/// nothing when the client does not defer at this size.
pub(super) fn deferred_tools(catalog: &Catalog, client: CheckClient) -> Vec<bool> {
    let settings = profile(client.client).settings();
    let defers = match settings.when {
        When::Always | When::Auto(_) => true,
        When::Never => false,
        When::Over(n) => catalog.len() > n,
    };
    let search_tool = catalog.search_tool();
    catalog
        .tools()
        .iter()
        .enumerate()
        .map(|(i, t)| {
            if !defers || Some(i) == search_tool {
                return false;
            }
            let server = t.server.as_ref().and_then(|s| {
                catalog
                    .servers()
                    .iter()
                    .find(|i| &i.name == s)
                    .and_then(|i| i.flags.defer())
            });
            t.defer().or(server).unwrap_or(if t.is_mcp() {
                settings.defer_mcp
            } else {
                settings.defer_all_builtins
            })
        })
        .collect()
}

/// The content words of `text` in order: lowercase, at least one letter, no stopwords.
pub(super) fn content_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    text::words(text, Camel::Off, &mut words);
    words
        .into_iter()
        .filter(|w| w.chars().any(char::is_alphabetic) && !STOPWORDS.contains(&w.as_str()))
        .collect()
}

/// Up to the first `.`, `!` or `?` followed by whitespace (or the end), or the first line break.
pub(super) fn first_sentence(description: &str) -> &str {
    let d = description.trim_start();
    let line = d.split('\n').next().unwrap_or("");
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?') && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace) {
            return &line[..i];
        }
    }
    line
}

/// The description query's words.
pub fn description_query_words(description: &str) -> Vec<String> {
    let mut w = content_words(first_sentence(description));
    w.truncate(DESCRIPTION_WORDS);
    w
}

/// The forms a client sends for `tool`: (form, query).
pub(super) fn forms(tool: &Tool, kind: ScorerKind) -> Vec<(&'static str, String)> {
    let words: Vec<String> = text::name_words(&tool.name)
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    let description = description_query_words(&tool.description);
    let mut out = Vec::new();
    if kind == ScorerKind::Regex {
        let join = |w: &[String]| {
            w.iter()
                .map(|x| regex::escape(x))
                .collect::<Vec<_>>()
                .join(".*")
        };
        out.push(("name", regex::escape(&tool.name)));
        out.push(("words", join(&words)));
        if !description.is_empty() {
            let n = description.len().min(REGEX_DESCRIPTION_WORDS);
            out.push(("description", join(&description[..n])));
        }
    } else {
        out.push(("name", tool.name.clone()));
        out.push(("words", words.join(" ")));
        if !description.is_empty() {
            out.push(("description", description.join(" ")));
        }
    }
    if kind == ScorerKind::Keyword {
        out.push(("select", format!("select:{}", tool.id)));
    }
    out
}

pub(super) fn search(
    scorer: &dyn Scorer,
    query: &str,
    candidates: &[bool],
    limit: usize,
) -> Result<Vec<Hit>> {
    let request = SearchRequest {
        query,
        limit,
        candidates: Some(candidates),
        id: None,
    };
    match scorer.search(&request) {
        Ok(o) => {
            let mut hits = o.hits;
            hits.truncate(limit);
            Ok(hits)
        }
        // A query the scorer refuses (too long a pattern) finds nothing.
        Err(SearchError::Refused(_)) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}

pub(super) fn distinguishing(a: &str, b: &str) -> Vec<String> {
    let theirs: BTreeSet<String> = content_words(b).iter().map(|w| stem_plural(w)).collect();
    let mut seen = BTreeSet::new();
    content_words(a)
        .into_iter()
        .filter(|w| {
            let s = stem_plural(w);
            !theirs.contains(&s) && seen.insert(s)
        })
        .take(DISTINGUISHING_WORDS)
        .collect()
}

/// A name with case and punctuation gone (`Create-Issue` and `create_issue` collide).
pub(super) fn folded_name(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}
