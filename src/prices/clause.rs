//! genai-prices' match clauses and the text rules around them: lowercasing, the provider hint's
//! normalization and the compact-date rewrite (`-20251211` → `-2025-12-11`).
//!
//! Semantics follow `genai_prices` 0.2.5 (`types.py`, `Clause*.is_match`): every literal
//! comparison is on lowercased text, and `regex` is Python's `re.search`, an unanchored search of
//! the (case-sensitive) pattern in the lowercased id. Patterns compile with the `regex` crate,
//! or with `fancy-regex` when they use lookaround (`^(?!.*-tts(?:$|-))`); a pattern neither
//! compiles is a load error, never a silent non-match.
//!
//! Python's `$` also matches before a final `\n`, Rust's only at the end: a pattern with a `$`
//! runs on the id without its final line break, which gives Python's answer unless the pattern
//! itself matches that line break (`\s$`). Only ids ending in a line break can tell.

use std::sync::OnceLock;

/// A compiled pattern of a `regex` clause.
#[derive(Clone, Debug)]
pub(super) enum Pattern {
    /// Linear time, cannot fail while matching.
    Plain(regex::Regex),
    /// Lookaround or backreferences: a backtracking search with a step limit, which can fail.
    Fancy(Box<fancy_regex::Regex>),
}

impl Pattern {
    /// Compiles `source`, preferring the linear-time engine.
    pub(super) fn compile(source: &str) -> Result<Pattern, String> {
        match regex::Regex::new(source) {
            Ok(re) => Ok(Pattern::Plain(re)),
            Err(plain) => match fancy_regex::Regex::new(source) {
                Ok(re) => Ok(Pattern::Fancy(Box::new(re))),
                // The linear engine's message is the precise one unless the pattern needs the
                // backtracking engine (lookaround), whose own error then says what is wrong.
                Err(fancy) if needs_backtracking(source) => Err(fancy.to_string()),
                Err(_) => Err(plain.to_string()),
            },
        }
    }

    fn is_match(&self, text: &str) -> Result<bool, MatchError> {
        let source = match self {
            Pattern::Plain(re) => re.as_str(),
            Pattern::Fancy(re) => re.as_str(),
        };
        let text = match text.strip_suffix('\n') {
            Some(before) if source.contains('$') => before,
            _ => text,
        };
        match self {
            Pattern::Plain(re) => Ok(re.is_match(text)),
            Pattern::Fancy(re) => re.is_match(text).map_err(|e| MatchError {
                pattern: re.as_str().to_string(),
                message: e.to_string(),
            }),
        }
    }
}

/// Whether a pattern uses what only a backtracking engine has (lookaround, backreferences).
fn needs_backtracking(source: &str) -> bool {
    ["(?=", "(?!", "(?<=", "(?<!", "\\1", "\\k<"]
        .iter()
        .any(|s| source.contains(s))
}

/// A backtracking pattern gave up on a text (its step limit): the id can be neither matched nor
/// ruled out, which resolution reports instead of guessing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchError {
    pub pattern: String,
    pub message: String,
}

/// One clause of a `match`, `model_match` or `provider_match`. Literals are stored lowercased.
#[derive(Clone, Debug)]
pub(super) enum Clause {
    Equals(String),
    StartsWith(String),
    EndsWith(String),
    Contains(String),
    Regex(Pattern),
    Or(Vec<Clause>),
    And(Vec<Clause>),
}

impl Clause {
    /// Whether `text` (already lowercased) matches. `or` and `and` stop at the first decisive
    /// sub-clause, as Python's `any` and `all` do.
    pub(super) fn matches(&self, text: &str) -> Result<bool, MatchError> {
        Ok(match self {
            Clause::Equals(v) => text == v,
            Clause::StartsWith(v) => text.starts_with(v.as_str()),
            Clause::EndsWith(v) => text.ends_with(v.as_str()),
            Clause::Contains(v) => text.contains(v.as_str()),
            Clause::Regex(p) => p.is_match(text)?,
            Clause::Or(cs) => {
                for c in cs {
                    if c.matches(text)? {
                        return Ok(true);
                    }
                }
                false
            }
            Clause::And(cs) => {
                for c in cs {
                    if !c.matches(text)? {
                        return Ok(false);
                    }
                }
                true
            }
        })
    }

    /// The literals of `equals` and `starts_with` clauses: the ids a model is known by, for
    /// "closest known ids".
    pub(super) fn literals<'c>(&'c self, out: &mut Vec<&'c str>) {
        match self {
            Clause::Equals(v) | Clause::StartsWith(v) => out.push(v),
            Clause::Or(cs) | Clause::And(cs) => cs.iter().for_each(|c| c.literals(out)),
            Clause::EndsWith(_) | Clause::Contains(_) | Clause::Regex(_) => {}
        }
    }
}

/// The provider hint as genai-prices compares it: `hint.lower().strip()`. Python's `strip()`
/// also removes the separators U+001C..U+001F, which Rust's `trim` keeps.
pub(super) fn normalize_hint(hint: &str) -> String {
    hint.to_lowercase()
        .trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
        .to_string()
}

/// genai-prices' `_normalize_compact_dated_ref`: every `-YYYYMMDD` that is a real calendar date
/// and is followed by `-`, `:` or the end becomes `-YYYY-MM-DD`. The package's pattern is
/// `(-)(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?=-|:|$)`; its lookahead is checked by hand
/// here, and a candidate that fails it is retried one character later, as `re.sub` does. A
/// candidate that is no real date (`-20250231`) is consumed and kept as written.
pub(super) fn normalize_compact_dates(id: &str) -> String {
    let chars: Vec<(usize, char)> = id.char_indices().collect();
    let mut out = String::with_capacity(id.len() + 4);
    let mut copied = 0; // bytes of `id` already in `out`
    let mut i = 0;
    while i < chars.len() {
        if chars[i].1 != '-' {
            i += 1;
            continue;
        }
        let Some((year, month, day)) = compact_date_at(&chars, i + 1) else {
            i += 1;
            continue;
        };
        let end = i + 9; // '-' and eight digits
        let next = chars.get(end).map(|&(_, c)| c);
        let lookahead = match next {
            None | Some('-' | ':') => true,
            // Python's `$` also matches before a line break that ends the text.
            Some('\n') => end + 1 == chars.len(),
            Some(_) => false,
        };
        if !lookahead {
            i += 1;
            continue;
        }
        let end_byte = chars.get(end).map_or(id.len(), |&(b, _)| b);
        if is_calendar_date(year, month, day) {
            out.push_str(&id[copied..chars[i].0]);
            out.push_str(&format!("-{year:04}-{month:02}-{day:02}"));
            copied = end_byte;
        }
        i = end;
    }
    out.push_str(&id[copied..]);
    out
}

/// The date of `20\d{2}(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])` at `chars[at..]`, if it is there.
/// `\d` is any Unicode decimal digit (Python's and the `regex` crate's meaning), read as its
/// value, as Python's `int()` reads it.
fn compact_date_at(chars: &[(usize, char)], at: usize) -> Option<(u32, u32, u32)> {
    let c: Vec<char> = chars.get(at..at + 8)?.iter().map(|&(_, c)| c).collect();
    if c[0] != '2' || c[1] != '0' {
        return None;
    }
    let year = 2000 + decimal_value(c[2])? * 10 + decimal_value(c[3])?;
    let month = match (c[4], c[5]) {
        ('0', '1'..='9') | ('1', '0'..='2') => {
            (c[4] as u32 - '0' as u32) * 10 + c[5] as u32 - '0' as u32
        }
        _ => return None,
    };
    let day = match (c[6], c[7]) {
        ('0', '1'..='9') | ('3', '0' | '1') => {
            (c[6] as u32 - '0' as u32) * 10 + c[7] as u32 - '0' as u32
        }
        ('1' | '2', d) => (c[6] as u32 - '0' as u32) * 10 + decimal_value(d)?,
        _ => return None,
    };
    Some((year, month, day))
}

/// The value of a Unicode decimal digit (general category Nd). Nd digits come in contiguous
/// runs of ten, zero first (a Unicode stability guarantee), so a digit's value is its distance
/// from the start of its run, modulo ten.
fn decimal_value(c: char) -> Option<u32> {
    if let Some(v) = c.to_digit(10) {
        return Some(v);
    }
    if !is_decimal_digit(c) {
        return None;
    }
    let mut below = 0;
    let mut code = c as u32;
    while let Some(prev) = code.checked_sub(1).and_then(char::from_u32) {
        if !is_decimal_digit(prev) {
            break;
        }
        below += 1;
        code -= 1;
    }
    Some(below % 10)
}

fn is_decimal_digit(c: char) -> bool {
    static DIGIT: OnceLock<Option<regex::Regex>> = OnceLock::new();
    let re = DIGIT.get_or_init(|| regex::Regex::new(r"^\d$").ok());
    let mut buf = [0; 4];
    re.as_ref()
        .is_some_and(|re| re.is_match(c.encode_utf8(&mut buf)))
}

/// Whether `year-month-day` exists in the proleptic Gregorian calendar (Python's `date()`).
pub(super) fn is_calendar_date(year: u32, month: u32, day: u32) -> bool {
    (1..=9999).contains(&year)
        && (1..=12).contains(&month)
        && day >= 1
        && day <= days_in_month(year, month)
}

pub(super) fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}
