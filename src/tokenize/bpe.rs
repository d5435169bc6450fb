//! Counting o200k_base / cl100k_base tokens without the reference's backtracking regex.
//!
//! The reference (`tiktoken-rs`, like OpenAI's tiktoken) splits text with a `fancy_regex`
//! pattern whose `\s+(?!\S)` alternative backtracks once per character of a whitespace run:
//! about a megabyte of blanks exhausts its stack and the reference panics. Here the same
//! pattern runs on the `regex` crate (linear time, no recursion) with that one lookahead
//! emulated, and the pieces are merged by byte-pair ranks read back from the reference's own
//! vocabulary. Why the split is the same:
//!
//! - The lookahead is the only construct `regex` lacks; every other alternative is kept as
//!   written, in the same order, and `regex` finds leftmost-first matches as a backtracking
//!   engine does. cl100k's possessive quantifiers (`?+`, `++`, `{1,3}+`, `*+`) never give
//!   anything back in their pattern (what follows each cannot use what they hold), so the
//!   greedy forms match the same text.
//! - `\s+(?!\S)|\s+` (o200k) and `\s+(?!\S)|\s` (cl100k) are written `\s+`. The earlier
//!   alternatives take any run holding a line break (`\s*[\r\n]`), so a match of `\s+` is a
//!   maximal run without one; when non-blank text follows it, the reference's lookahead gives
//!   back its last character (the run's last blank joins the next word), unless the run is a
//!   single character, which the last alternative takes whole. [`split`] does exactly that.
//! - Byte-pair merging picks the leftmost pair of lowest rank until none is in the
//!   vocabulary, as the reference does; long pieces use a heap with the same order (rank, then
//!   position), short ones a scan.
//!
//! `tests` checks counts equal to the reference on ordinary and on pathological text (long
//! runs of every character class) wherever the reference does not fail.

use std::cell::OnceCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use regex::Regex;
use tiktoken_rs::CoreBPE;

/// o200k_base's split pattern (tiktoken's `O200K_BASE_PAT_STR`) with `\s+(?!\S)|\s+` as `\s+`.
const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n/]*",
    r"|\s*[\r\n]+",
    r"|\s+",
);

/// cl100k_base's split pattern, possessive quantifiers written greedy, `\s+(?!\S)|\s` as `\s+`.
const CL100K_PATTERN: &str = concat!(
    r"'(?i:[sdmt]|ll|ve|re)",
    r"|[^\r\n\p{L}\p{N}]?\p{L}+",
    r"|\p{N}{1,3}",
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*",
    r"|\s+$",
    r"|\s*[\r\n]",
    r"|\s+",
);

/// Pieces at least this long are merged through a heap (O(n log n)); shorter ones by a scan.
const HEAP_FROM: usize = 100;

/// One vocabulary: byte-pair ranks and the split pattern.
pub(super) struct Bpe {
    ranks: HashMap<Box<[u8]>, u32, BuildHasherDefault<FxHasher>>,
    regex: Regex,
}

impl Bpe {
    /// The vocabulary of `reference` (every rank decoded back to its bytes) with the split
    /// pattern of `o200k` or cl100k.
    pub(super) fn from_reference(reference: &CoreBPE, o200k: bool) -> Bpe {
        let mut ranks = HashMap::default();
        // Ordinary ranks are dense from 0; the special tokens come after them and are no
        // merge targets.
        let special = reference.special_tokens();
        let mut rank = 0u32;
        while let Ok(bytes) = reference.decode_bytes(&[rank]) {
            if std::str::from_utf8(&bytes).is_ok_and(|s| special.contains(s)) {
                break;
            }
            ranks.insert(bytes.into_boxed_slice(), rank);
            rank += 1;
        }
        let pattern = if o200k { O200K_PATTERN } else { CL100K_PATTERN };
        Bpe {
            ranks,
            regex: Regex::new(pattern).expect("the split pattern compiles"),
        }
    }

    /// The split regex; [`LOCAL_REGEX`] holds each thread's copy of it.
    pub(super) fn regex(&self) -> &Regex {
        &self.regex
    }

    /// Tokens in `text`, special-token text counted as ordinary text.
    pub(super) fn count(&self, regex: &Regex, text: &str) -> usize {
        split(regex, text)
            .map(|piece| self.piece_tokens(piece.as_bytes()))
            .sum()
    }

    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.ranks.get(bytes).copied()
    }

    fn piece_tokens(&self, piece: &[u8]) -> usize {
        if piece.len() == 1 || self.ranks.contains_key(piece) {
            1
        } else if piece.len() < HEAP_FROM {
            self.merge_scan(piece)
        } else {
            self.merge_heap(piece)
        }
    }

    /// Parts left after merging, by repeated scans: `parts[i]` is a part's start and the rank
    /// of the pair that starts there (its bytes and the next part's).
    fn merge_scan(&self, piece: &[u8]) -> usize {
        let pair = |parts: &[(usize, u32)], i: usize| -> u32 {
            match (parts.get(i), parts.get(i + 2)) {
                (Some(&(start, _)), Some(&(end, _))) => {
                    self.rank(&piece[start..end]).unwrap_or(u32::MAX)
                }
                _ => u32::MAX,
            }
        };
        let mut parts: Vec<(usize, u32)> = (0..=piece.len()).map(|i| (i, u32::MAX)).collect();
        for i in 0..parts.len() {
            parts[i].1 = pair(&parts, i);
        }
        while let Some((i, _)) = parts[..parts.len() - 1]
            .iter()
            .enumerate()
            .filter(|(_, p)| p.1 != u32::MAX)
            .min_by_key(|(i, p)| (p.1, *i))
        {
            parts.remove(i + 1);
            parts[i].1 = pair(&parts, i);
            if i > 0 {
                parts[i - 1].1 = pair(&parts, i - 1);
            }
        }
        parts.len() - 1
    }

    /// Parts left after merging, with the candidate pairs in a heap ordered by (rank, start):
    /// the same leftmost lowest pair the scan picks. An entry is stale when its start was
    /// merged away or its pair changed (a different pair from the same start has different
    /// bytes, hence a different rank).
    fn merge_heap(&self, piece: &[u8]) -> usize {
        let n = piece.len();
        // end[i]: the end of the part starting at i (0 when i starts no part); prev[i]: the
        // start of the part before it; pair[i]: the rank of the pair starting at i.
        let mut end: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut pair = vec![u32::MAX; n];
        let mut heap = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            if let Some(r) = self.rank(&piece[i..i + 2]) {
                pair[i] = r;
                heap.push(Reverse((r, i)));
            }
        }
        let mut parts = n;
        while let Some(Reverse((r, start))) = heap.pop() {
            if end[start] == 0 || pair[start] != r {
                continue;
            }
            // Merge the part at `start` with the next one.
            let right = end[start];
            let new_end = end[right];
            end[right] = 0;
            pair[right] = u32::MAX;
            end[start] = new_end;
            parts -= 1;
            if new_end < n {
                prev[new_end] = start;
            }
            pair[start] = u32::MAX;
            if new_end < n
                && let Some(r) = self.rank(&piece[start..end[new_end]])
            {
                pair[start] = r;
                heap.push(Reverse((r, start)));
            }
            if start > 0 {
                let p = prev[start];
                pair[p] = u32::MAX;
                if let Some(r) = self.rank(&piece[p..new_end]) {
                    pair[p] = r;
                    heap.push(Reverse((r, p)));
                }
            }
        }
        parts
    }
}

/// The pieces the reference pattern cuts `text` into (see the module comment).
pub(super) fn split<'t>(regex: &'t Regex, text: &'t str) -> impl Iterator<Item = &'t str> + 't {
    let mut at = 0;
    std::iter::from_fn(move || {
        let m = regex.find_at(text, at)?;
        let mut end = m.end();
        let piece = m.as_str();
        if end < text.len() {
            // A blank run that `\s+` took whole, non-blank text after it: give back the last
            // character, as `\s+(?!\S)` does, unless it is the run's only one.
            let mut chars = piece.chars();
            if let Some(last) = chars.next_back()
                && last != '\r'
                && last != '\n'
                && chars.clone().next().is_some()
                && piece.chars().all(char::is_whitespace)
            {
                end -= last.len_utf8();
            }
        }
        at = end;
        Some(&text[m.start()..end])
    })
}

/// rustc's Fx hash: the vocabulary lookups are most of the counting time, and the keys are
/// not attacker-chosen in a way that matters (a fixed vocabulary).
#[derive(Default, Clone, Copy)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn write_usize(&mut self, n: usize) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        self.0 = (self.0.rotate_left(5) ^ n as u64).wrapping_mul(K);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

thread_local! {
    /// Each thread's own copy of the split regex per vocabulary (o200k, cl100k): a `regex`
    /// takes its fastest path on the thread that owns its cache (a shared one cost a third of
    /// a session import's time, measured with perf on 100 synthetic sessions).
    pub(super) static LOCAL_REGEX: [OnceCell<Regex>; 2] = const { [OnceCell::new(), OnceCell::new()] };
}

#[cfg(test)]
mod tests {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::OnceLock;

    use proptest::prelude::*;

    use super::super::Tokenizer;

    fn reference(t: Tokenizer) -> &'static tiktoken_rs::CoreBPE {
        static O200K: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
        static CL100K: OnceLock<tiktoken_rs::CoreBPE> = OnceLock::new();
        match t {
            Tokenizer::O200kBase => O200K.get_or_init(|| t.reference()),
            Tokenizer::Cl100kBase => CL100K.get_or_init(|| t.reference()),
        }
    }

    /// The reference's count, or None where it fails (its regex runs out of backtracking room).
    fn reference_count(t: Tokenizer, text: &str) -> Option<usize> {
        let bpe = reference(t);
        catch_unwind(AssertUnwindSafe(|| bpe.encode_ordinary(text).len())).ok()
    }

    fn assert_same(text: &str) {
        for t in Tokenizer::ALL {
            let want = reference_count(t, text)
                .unwrap_or_else(|| panic!("{t}: the reference fails on {:?}", short(text)));
            assert_eq!(t.count(text), want, "{t} on {:?}", short(text));
        }
    }

    fn short(text: &str) -> String {
        text.chars().take(60).collect()
    }

    #[test]
    fn ordinary_text_counts_as_the_reference() {
        // Prose, code, JSON, YAML and Markdown of this repository: every character class the
        // patterns distinguish, in the mixtures real tool definitions have.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = 0;
        for rel in [
            "README.md",
            "ARCHITECTURE.md",
            "src/tokenize/bpe.rs",
            "Cargo.toml",
        ] {
            let text = std::fs::read_to_string(root.join(rel)).unwrap();
            assert_same(&text);
            for line in text.lines() {
                assert_same(line);
            }
            files += 1;
        }
        for dir in [
            "fixtures/catalogs",
            "fixtures/catalogs/mcp",
            "fixtures/queries",
        ] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_file() {
                    assert_same(&std::fs::read_to_string(&path).unwrap());
                    files += 1;
                }
            }
        }
        assert!(files > 6, "{files} files");
        for text in [
            "",
            "hello world",
            "Hello, World!  How's it   going?\n\n\tI'LL see\r\n",
            "naïve café — Ünïcödé\u{300}\u{301} 中文字符 العربية 😀🎉 ½ ① ٣",
            "  leading and trailing  ",
            "x  \u{a0}\u{3000} y\u{2028}z\u{85}w",
            "path/to/file.rs:12:34 //comment\n/* */ a/b/\n",
            "'s 't 're 've 'm 'll 'd 'S 'LL DON'T don't",
            "<|endoftext|> <|endofprompt|>",
            "1234567 3.14159 -0.5e10",
        ] {
            assert_same(text);
        }
    }

    /// Runs of one kind of character, and of two alternating, at lengths the reference still
    /// handles: long pieces go through the heap merge, long blank runs through the emulated
    /// lookahead.
    #[test]
    fn long_runs_count_as_the_reference_where_it_works() {
        let units = [
            " ", "\t", "\n", "\r\n", " \n", "\u{a0}", "\u{3000}", "a", "A", "aB", "é", "\u{301}",
            "中", "1", "!", "!?", "/", " a", "  a", "a ", " !", "'s", "😀", "ab12 ",
        ];
        let mut checked = 0;
        for unit in units {
            for n in [1, 2, 3, 99, 100, 101, 1000, 5000] {
                for text in [
                    unit.repeat(n),
                    format!("x{}y", unit.repeat(n)),
                    format!("{} z", unit.repeat(n)),
                ] {
                    for t in Tokenizer::ALL {
                        if let Some(want) = reference_count(t, &text) {
                            assert_eq!(t.count(&text), want, "{t} on {unit:?} x {n}");
                            checked += 1;
                        }
                    }
                }
            }
        }
        // The reference fails only on a few of the longest blank runs.
        assert!(
            checked > units.len() * 8 * 3 * 2 * 9 / 10,
            "{checked} compared"
        );
    }

    /// The megabyte of blanks the reference panics on: counted, and equal to what the pieces
    /// the split makes cost on their own (the run less its last blank, then ` x`), each of
    /// which the heap merge handles like any long piece.
    #[test]
    fn a_megabyte_of_blanks_is_counted() {
        let n = 1_000_000;
        let text = format!("{{\"description\":\"{}x\"}}", " ".repeat(n));
        for t in Tokenizer::ALL {
            let got = t.count(&text);
            let run = t.count(&" ".repeat(n - 1));
            assert_eq!(
                got,
                t.count("{\"description\":\"") + run + t.count(" x\"}"),
                "{t}"
            );
            assert!(run >= (n - 1) / 128 && run < n / 2, "{t}: {run} tokens");
        }
        assert!(
            reference_count(Tokenizer::O200kBase, &text).is_none(),
            "the reference handles a megabyte of blanks now: the emulation could be dropped"
        );
    }

    fn piece_char() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(" ".to_string()),
            Just("  ".to_string()),
            Just("\t".to_string()),
            Just("\n".to_string()),
            Just("\r".to_string()),
            Just("\u{a0}".to_string()),
            Just("\u{3000}".to_string()),
            Just("'".to_string()),
            Just("'s".to_string()),
            Just("'LL".to_string()),
            Just("/".to_string()),
            Just("\u{301}".to_string()),
            "[a-z]{1,6}",
            "[A-Z]{1,3}",
            "[0-9]{1,5}",
            "[!-/:-@]{1,3}",
            "[é中ü😀Ω]",
            " {2,40}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(600))]
        #[test]
        fn random_text_counts_as_the_reference(parts in proptest::collection::vec(piece_char(), 0..40)) {
            let text: String = parts.concat();
            for t in Tokenizer::ALL {
                let want = reference_count(t, &text).expect("short text");
                prop_assert_eq!(t.count(&text), want, "{} on {:?}", t, text);
            }
        }

        /// The split covers the text: pieces in order, nothing dropped or repeated.
        #[test]
        fn the_split_covers_the_text(parts in proptest::collection::vec(piece_char(), 0..40)) {
            let text: String = parts.concat();
            for o200k in [true, false] {
                let regex = regex::Regex::new(if o200k { super::O200K_PATTERN } else { super::CL100K_PATTERN }).unwrap();
                let joined: String = super::split(&regex, &text).collect();
                prop_assert_eq!(&joined, &text);
            }
        }
    }
}
