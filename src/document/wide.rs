//! Integer literals that do not fit 64 bits. serde_json (without `arbitrary_precision`, which
//! this crate must not turn on: it is crate-wide through feature unification and breaks the
//! untagged and flattened reads of our dependencies) stores such a literal as an `f64`, so
//! `18446744073709551616` would be written back as `1.8446744073709552e19`: a schema changed
//! without a word. Every JSON input is scanned for them first (one pass over the text outside
//! strings, no allocation) and refused, with the place and how to write the number instead.

use std::ops::Range;

use super::Seg;

/// The first integer literal outside strings that fits neither `u64` nor `i64` (below
/// `i64::MIN` when negative), as a byte range of `text`. A literal with a fraction or an
/// exponent is a float and is not looked at. `text` is JSON that parses (or is about to be
/// parsed: on text that does not, the answer only has to be harmless).
pub fn wide_integer(text: &[u8]) -> Option<Range<usize>> {
    let n = text.len();
    let mut i = 0;
    while i < n {
        match text[i] {
            b'"' => {
                i += 1;
                while i < n {
                    match text[i] {
                        b'\\' => i += 2,
                        b'"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            b @ (b'-' | b'0'..=b'9') => {
                let start = i;
                let negative = b == b'-';
                if negative {
                    i += 1;
                }
                let digits = i;
                while i < n && text[i].is_ascii_digit() {
                    i += 1;
                }
                let end = i;
                let float = i < n && matches!(text[i], b'.' | b'e' | b'E');
                while i < n && matches!(text[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    i += 1;
                }
                if !float && !fits(&text[digits..end], negative) {
                    return Some(start..end);
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// Whether the decimal `digits` (a magnitude) fit `u64`, or `i64` when `negative`.
fn fits(digits: &[u8], negative: bool) -> bool {
    let first = digits
        .iter()
        .position(|&d| d != b'0')
        .unwrap_or(digits.len());
    let digits = &digits[first..];
    let max: &[u8] = if negative {
        b"9223372036854775808"
    } else {
        b"18446744073709551615"
    };
    // Equal lengths of ASCII digits compare as numbers.
    digits.len() < max.len() || (digits.len() == max.len() && digits <= max)
}

/// What is wrong with the wide `literal` and how to fix it, for every input's message.
pub fn wide_integer_message(literal: &str) -> String {
    let shown = if literal.len() > 40 {
        format!("{}… ({} digits)", &literal[..30], literal.len())
    } else {
        literal.to_string()
    };
    let float = literal
        .parse::<f64>()
        .ok()
        .filter(|f| f.is_finite())
        .and_then(|f| serde_json::to_string(&f).ok());
    let changed = match &float {
        Some(f) => format!(" ({shown} would become {f})"),
        None => String::new(),
    };
    format!(
        "the integer {shown} does not fit in 64 bits: JSON numbers beyond 64 bits would be \
         stored as floats and changed{changed}; write it as a string (\"{shown}\") or, if an \
         approximate value is meant, as a float{}",
        float.map_or(String::new(), |f| format!(" ({f})"))
    )
}

/// The path of the innermost value of JSON `text` whose span holds byte `offset`
/// (`tools[3].inputSchema.maximum`); empty at the top or when the text does not parse.
/// Error path only: it allocates the keys it passes. Recursion is bounded by the nesting
/// limit the caller's parser already enforced.
pub fn path_at(text: &str, offset: usize) -> Vec<Seg> {
    let mut scan = super::json::JsonScan::new(text);
    let mut path = Vec::new();
    match scan.find(offset, &mut path) {
        Some(true) => path,
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide(text: &str) -> Option<&str> {
        wide_integer(text.as_bytes()).map(|r| &text[r])
    }

    #[test]
    fn the_64_bit_bounds_are_exact() {
        assert_eq!(wide("18446744073709551615"), None);
        assert_eq!(wide("18446744073709551616"), Some("18446744073709551616"));
        assert_eq!(wide("-9223372036854775808"), None);
        assert_eq!(wide("-9223372036854775809"), Some("-9223372036854775809"));
        assert_eq!(wide("9223372036854775808"), None);
        assert_eq!(wide("99999999999999999999"), Some("99999999999999999999"));
        assert_eq!(wide("100000000000000000000"), Some("100000000000000000000"));
        assert_eq!(wide("0"), None);
        assert_eq!(wide("-0"), None);
        assert_eq!(wide("[1,-2,3]"), None);
    }

    #[test]
    fn floats_strings_and_escapes_are_not_integers() {
        // Fractions and exponents make a float: stored as one on purpose.
        assert_eq!(wide("18446744073709551616.0"), None);
        assert_eq!(wide("18446744073709551616e0"), None);
        assert_eq!(wide("18446744073709551616E+2"), None);
        assert_eq!(wide("1e400"), None);
        assert_eq!(wide("-1.5e-99999999999999999999"), None);
        // Digits inside strings, after escaped quotes and backslashes.
        assert_eq!(wide(r#"{"a": "18446744073709551616"}"#), None);
        assert_eq!(wide(r#"{"a\"18446744073709551616": 1}"#), None);
        assert_eq!(
            wide(r#"["\\", 18446744073709551616]"#),
            Some("18446744073709551616")
        );
        assert_eq!(wide(r#"["\\\"99999999999999999999", 5]"#), None);
        assert_eq!(wide(r#"["\u0030", 1]"#), None);
        assert_eq!(
            wide("{\"é\": [true, null, false, -18446744073709551616]}"),
            Some("-18446744073709551616")
        );
        // The first wide one is named.
        assert_eq!(
            wide("[1e30, 2, 30000000000000000000, 40000000000000000000]"),
            Some("30000000000000000000")
        );
    }

    /// Against serde_json itself: a literal is wide exactly when serde_json would not keep it
    /// as an integer, over random documents of numbers, strings holding digits and escapes.
    #[test]
    fn agrees_with_serde_json_on_random_documents() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..3000 {
            let mut doc = String::from("[");
            let mut expected = None;
            for k in 0..(next() % 6) {
                if k > 0 {
                    doc.push(',');
                }
                let len = 1 + (next() % 22) as usize;
                let mut digits: String = (0..len)
                    .map(|j| {
                        let d = (next() % 10) as u8;
                        char::from(b'0' + if j == 0 && len > 1 { d.max(1) } else { d })
                    })
                    .collect();
                if next() % 4 == 0 {
                    // Near the bounds, where an off-by-one would show.
                    digits = [
                        "18446744073709551615",
                        "18446744073709551616",
                        "9223372036854775808",
                        "9223372036854775809",
                    ][(next() % 4) as usize]
                        .to_string();
                }
                let negative = next() % 2 == 0;
                let literal = format!("{}{digits}", if negative { "-" } else { "" });
                if literal == "-0" {
                    // serde_json keeps it as the float -0.0 (the same number), not a loss.
                    continue;
                }
                match next() % 4 {
                    0 => doc.push_str(&format!("\"\\\"{literal}\\\\\"")),
                    1 => doc.push_str(&format!("{literal}.5")),
                    _ => {
                        let v: serde_json::Value = serde_json::from_str(&literal).unwrap();
                        let integer = v.is_i64() || v.is_u64();
                        if !integer && expected.is_none() {
                            expected = Some(literal.clone());
                        }
                        doc.push_str(&literal);
                    }
                }
            }
            doc.push(']');
            assert_eq!(wide(&doc).map(str::to_string), expected, "{doc}");
        }
    }

    #[test]
    fn the_path_of_an_offset_names_keys_and_indices() {
        let text =
            r#"{"tools": [{"name": "a"}, {"name": "b", "s": {"max": 18446744073709551616}}]}"#;
        let r = wide_integer(text.as_bytes()).unwrap();
        assert_eq!(
            super::super::dotted(&path_at(text, r.start)),
            "tools[1].s.max"
        );
        assert!(path_at("[1, 2", 99).is_empty());
        assert_eq!(
            super::super::dotted(&path_at("[1, {\"a\": 2}]", 10)),
            "[1].a"
        );
    }

    #[test]
    fn the_message_says_what_it_becomes_and_how_to_write_it() {
        let m = wide_integer_message("18446744073709551616");
        assert!(m.contains("would become 1.8446744073709552e+19"), "{m}");
        assert!(m.contains("stored as floats and changed"), "{m}");
        assert!(m.contains("as a string (\"18446744073709551616\")"), "{m}");
        let long = "9".repeat(500);
        let m = wide_integer_message(&long);
        assert!(m.contains("(500 digits)") && m.len() < 400, "{m}");
    }
}
