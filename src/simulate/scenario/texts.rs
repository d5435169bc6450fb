//! `texts:` placeholders: `{{name}}` in `system_prompt` and the turns' `user:` texts is
//! replaced by the text of that name; a text may itself name texts that come *after* it in
//! the file (so expansion always ends: the names form a chain, never a loop), and a placeholder
//! naming no text (or an earlier one, inside a text) stays as written. A name is at most
//! [`MAX_NAME_BYTES`] long.
//!
//! Forty lines of `{"t0": "{{t1}}{{t1}}", "t1": "{{t2}}{{t2}}", …}` expand to terabytes, so the
//! expanded length of every text is computed first, bottom-up from the last (saturating, one
//! scan of each text, nothing built), and only a text whose length the budget admits is built.

use std::collections::HashMap;

use serde_json::{Map, Value};

/// Longest name a placeholder may use (longer keys are never looked up).
pub const MAX_NAME_BYTES: usize = 128;

/// One piece of a scanned text.
#[derive(Debug, PartialEq, Eq)]
enum Piece<'t> {
    Literal(&'t str),
    /// The text at this index of [`Texts::values`].
    Name(usize),
}

/// A resumable scan of one text for placeholders of names at index `from` or later.
struct Scan<'t> {
    text: &'t str,
    from: usize,
    pos: usize,
    /// The placeholder found after a literal, returned by the next call.
    pending: Option<usize>,
    /// Where the next `}}` at or after some earlier point starts (`usize::MAX`: none left):
    /// kept between calls so that a text of many `{{` is scanned once, not once per `{{`.
    close: Option<usize>,
}

impl<'t> Scan<'t> {
    fn new(text: &'t str, from: usize) -> Self {
        Scan {
            text,
            from,
            pos: 0,
            pending: None,
            close: None,
        }
    }

    fn next(&mut self, texts: &Texts<'_>) -> Option<Piece<'t>> {
        if let Some(k) = self.pending.take() {
            return Some(Piece::Name(k));
        }
        let text = self.text;
        if self.pos >= text.len() {
            return None;
        }
        let start = self.pos;
        let mut i = start;
        while let Some(open) = text[i..].find("{{").map(|o| i + o) {
            let close = match self.close {
                Some(c) if c == usize::MAX || c >= open + 2 => c,
                _ => {
                    let c = text[open + 2..]
                        .find("}}")
                        .map_or(usize::MAX, |o| open + 2 + o);
                    self.close = Some(c);
                    c
                }
            };
            if close == usize::MAX {
                break;
            }
            let name = &text[open + 2..close];
            if let Some(k) = texts.index(name).filter(|&k| k >= self.from) {
                self.pos = close + 2;
                if open > start {
                    self.pending = Some(k);
                    return Some(Piece::Literal(&text[start..open]));
                }
                return Some(Piece::Name(k));
            }
            // `{` is one byte: the next `{{` may start right after it.
            i = open + 1;
        }
        self.pos = text.len();
        Some(Piece::Literal(&text[start..]))
    }
}

/// The texts of one texts file, with every text's expanded length.
pub struct Texts<'a> {
    names: HashMap<&'a str, usize>,
    values: Vec<&'a str>,
    /// Expanded length of each text in bytes, saturating.
    expanded: Vec<u64>,
}

impl<'a> Texts<'a> {
    /// The string values of `map` in file order (other values are not texts), their expanded
    /// lengths computed from the last to the first.
    pub fn new(map: &'a Map<String, Value>) -> Self {
        let mut names = HashMap::new();
        let mut values = Vec::new();
        for (k, v) in map {
            if let Value::String(s) = v {
                if k.len() <= MAX_NAME_BYTES {
                    names.insert(k.as_str(), values.len());
                }
                values.push(s.as_str());
            }
        }
        let mut texts = Texts {
            names,
            values,
            expanded: Vec::new(),
        };
        let mut expanded = vec![0u64; texts.values.len()];
        for k in (0..texts.values.len()).rev() {
            // Only later texts are named inside text k: theirs are known already.
            let mut scan = Scan::new(texts.values[k], k + 1);
            let mut n = 0u64;
            while let Some(piece) = scan.next(&texts) {
                n = n.saturating_add(match piece {
                    Piece::Literal(s) => s.len() as u64,
                    Piece::Name(j) => expanded[j],
                });
            }
            expanded[k] = n;
        }
        texts.expanded = expanded;
        texts
    }

    fn index(&self, name: &str) -> Option<usize> {
        if name.len() > MAX_NAME_BYTES {
            return None;
        }
        self.names.get(name).copied()
    }

    /// The length `text` expands to, in bytes (saturating), without building it.
    pub fn expanded_len(&self, text: &str) -> u64 {
        let mut scan = Scan::new(text, 0);
        let mut n = 0u64;
        while let Some(piece) = scan.next(self) {
            n = n.saturating_add(match piece {
                Piece::Literal(s) => s.len() as u64,
                Piece::Name(j) => self.expanded[j],
            });
        }
        n
    }

    /// Whether `text` names any text (so that it changes when filled).
    pub fn names_any(&self, text: &str) -> bool {
        let mut scan = Scan::new(text, 0);
        while let Some(piece) = scan.next(self) {
            if matches!(piece, Piece::Name(_)) {
                return true;
            }
        }
        false
    }

    /// `text` with every placeholder filled; call only on a text whose [`Self::expanded_len`]
    /// the budget admitted. An explicit stack: a chain of 100,000 names does not recurse.
    pub fn fill(&self, text: &str) -> String {
        let mut out = String::with_capacity(usize::try_from(self.expanded_len(text)).unwrap_or(0));
        let mut stack = vec![Scan::new(text, 0)];
        while let Some(top) = stack.last_mut() {
            match top.next(self) {
                Some(Piece::Literal(s)) => out.push_str(s),
                Some(Piece::Name(j)) => stack.push(Scan::new(self.values[j], j + 1)),
                None => {
                    stack.pop();
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn map(pairs: &[(&str, &str)]) -> Map<String, Value> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), Value::String((*v).to_string())))
            .collect()
    }

    #[test]
    fn later_names_expand_earlier_ones_stay() {
        let m = map(&[("a", "A{{b}}{{a}}"), ("b", "B{{c}}{{a}}"), ("c", "C")]);
        let t = Texts::new(&m);
        assert_eq!(
            t.fill("{{a}}|{{b}}|{{c}}|{{d}}"),
            "ABC{{a}}{{a}}|BC{{a}}|C|{{d}}"
        );
        assert_eq!(t.expanded_len("{{a}}|{{b}}|{{c}}|{{d}}"), 29);
        // `{{{a}}` is a brace and a placeholder, as `str::replace` would find it.
        assert_eq!(t.fill("{{{c}}}"), "{C}");
        assert!(t.names_any("x{{c}}"));
        assert!(!t.names_any("x{{d}} {{c"));
    }

    #[test]
    fn the_doubling_chain_is_measured_not_built() {
        let pairs: Vec<(String, String)> = (0..41)
            .map(|i| {
                let v = if i == 40 {
                    "xxxxxxxxxxxxxxxx".to_string()
                } else {
                    format!("{{{{t{}}}}}{{{{t{}}}}}", i + 1, i + 1)
                };
                (format!("t{i}"), v)
            })
            .collect();
        let m: Map<String, Value> = pairs
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let t = Texts::new(&m);
        assert_eq!(t.expanded_len("{{t0}}"), 16 << 40);
        assert_eq!(t.expanded_len("{{t30}}"), 16 << 10);
        assert_eq!(t.fill("{{t30}}").len(), 16 << 10);
        // Saturating: 100 doublings of 16 bytes do not wrap.
        let m: Map<String, Value> = (0..100)
            .map(|i| {
                let v = if i == 99 {
                    "x".repeat(16)
                } else {
                    format!("{{{{t{}}}}}{{{{t{}}}}}", i + 1, i + 1)
                };
                (format!("t{i}"), Value::String(v))
            })
            .collect();
        assert_eq!(Texts::new(&m).expanded_len("{{t0}}{{t0}}"), u64::MAX);
    }

    #[test]
    fn a_long_chain_fills_without_recursing() {
        let n = 100_000;
        let m: Map<String, Value> = (0..n)
            .map(|i| {
                let v = if i + 1 == n {
                    "end".to_string()
                } else {
                    format!("{{{{t{}}}}}", i + 1)
                };
                (format!("t{i}"), Value::String(v))
            })
            .collect();
        let t = Texts::new(&m);
        assert_eq!(t.fill("{{t0}}"), "end");
        assert_eq!(t.expanded_len("{{t0}}"), 3);
    }

    #[test]
    fn many_open_braces_scan_in_linear_time() {
        // One scan finds the single `}}` once, not once per `{{` (quadratic would take minutes).
        let text = format!("{}a}}", "{".repeat(4_000_000));
        let m = map(&[("b", "B")]);
        let t = Texts::new(&m);
        assert_eq!(t.expanded_len(&text), text.len() as u64);
    }

    /// Reference: filling by building, one name at a time, from the definition.
    fn naive(values: &[(String, String)], text: &str, from: usize) -> String {
        let mut out = String::new();
        let mut rest = text;
        'outer: while let Some(open) = rest.find("{{") {
            if let Some(close) = rest[open + 2..].find("}}") {
                let name = &rest[open + 2..open + 2 + close];
                if let Some(k) = values.iter().position(|(k, _)| k == name)
                    && k >= from
                {
                    out.push_str(&rest[..open]);
                    out.push_str(&naive(values, &values[k].1, k + 1));
                    rest = &rest[open + 2 + close + 2..];
                    continue 'outer;
                }
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            } else {
                break;
            }
        }
        out.push_str(rest);
        out
    }

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-c{}]{0,3}",
            (0usize..5).prop_map(|i| format!("{{{{n{i}}}}}")),
            Just("{{".to_string()),
            Just("}}".to_string()),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        proptest::collection::vec(piece(), 0..6).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// The computed expanded size equals the built text's length, and the built text equals
        /// the reference's, on small random texts files (names repeated, braces stray).
        #[test]
        fn computed_length_equals_built_length(
            values in proptest::collection::vec(text(), 0..5),
            target in text(),
            dup in any::<bool>(),
        ) {
            let mut pairs: Vec<(String, String)> = values
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("n{i}"), v))
                .collect();
            if dup && !pairs.is_empty() {
                // A non-string value is not a text.
                pairs.push(("skip".into(), String::new()));
            }
            let m: Map<String, Value> = pairs
                .iter()
                .map(|(k, v)| {
                    let v = if k == "skip" { Value::Bool(true) } else { Value::String(v.clone()) };
                    (k.clone(), v)
                })
                .collect();
            pairs.retain(|(k, _)| k != "skip");
            let t = Texts::new(&m);
            let built = t.fill(&target);
            prop_assert_eq!(built.len() as u64, t.expanded_len(&target));
            prop_assert_eq!(&built, &naive(&pairs, &target, 0));
            if !t.names_any(&target) {
                prop_assert_eq!(&built, &target);
            }
        }
    }
}
