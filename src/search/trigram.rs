//! A trigram index over the regex scorer's folded text: for every three-byte sequence, the
//! tools whose text contains it. A literal of three bytes or more can only occur in a tool that
//! holds all of the literal's trigrams, so intersecting their postings narrows a query to a few
//! tools without reading the catalog's text (the approach of Russ Cox's "Regular Expression
//! Matching with a Trigram Index", as in Google Code Search). The answer is a superset — the
//! trigrams may sit apart — which the regex then checks.

/// Postings in compressed-row form: `keys` sorted, tool ids of `keys[i]` in
/// `tools[offsets[i]..offsets[i + 1]]`, ascending.
pub struct TrigramIndex {
    keys: Vec<u32>,
    offsets: Vec<u32>,
    tools: Vec<u32>,
}

fn key(t: &[u8]) -> u32 {
    (u32::from(t[0]) << 16) | (u32::from(t[1]) << 8) | u32::from(t[2])
}

impl TrigramIndex {
    /// Indexes `text[starts[i]..starts[i + 1]]` as tool `i`.
    pub fn new(text: &[u8], starts: &[usize]) -> TrigramIndex {
        let mut pairs: Vec<u64> = Vec::new();
        let mut own: Vec<u32> = Vec::new();
        for (tool, w) in starts.windows(2).enumerate() {
            own.clear();
            own.extend(text[w[0]..w[1]].windows(3).map(key));
            own.sort_unstable();
            own.dedup();
            let tool = u64::try_from(tool).expect("usize fits u64");
            pairs.extend(own.iter().map(|&k| (u64::from(k) << 32) | tool));
        }
        pairs.sort_unstable();
        let mut keys = Vec::new();
        let mut offsets = Vec::new();
        let mut tools = Vec::with_capacity(pairs.len());
        for p in pairs {
            let k = u32::try_from(p >> 32).expect("a key is 24 bits");
            if keys.last() != Some(&k) {
                keys.push(k);
                offsets.push(u32::try_from(tools.len()).expect("postings fit u32"));
            }
            tools.push(u32::try_from(p & 0xffff_ffff).expect("masked to 32 bits"));
        }
        offsets.push(u32::try_from(tools.len()).expect("postings fit u32"));
        TrigramIndex {
            keys,
            offsets,
            tools,
        }
    }

    fn postings(&self, k: u32) -> &[u32] {
        match self.keys.binary_search(&k) {
            Ok(i) => &self.tools[self.offsets[i] as usize..self.offsets[i + 1] as usize],
            Err(_) => &[],
        }
    }

    /// Tools holding every trigram of `literal`, ascending; `None` when the literal is shorter
    /// than a trigram (the index cannot narrow it).
    pub fn candidates(&self, literal: &[u8]) -> Option<Vec<u32>> {
        if literal.len() < 3 {
            return None;
        }
        let mut keys: Vec<u32> = literal.windows(3).map(key).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut lists: Vec<&[u32]> = keys.iter().map(|&k| self.postings(k)).collect();
        lists.sort_by_key(|l| l.len());
        let mut out = lists[0].to_vec();
        for list in &lists[1..] {
            if out.is_empty() {
                break;
            }
            out.retain(|t| contains_from(list, *t));
        }
        Some(out)
    }
}

/// Binary search: `out` is much shorter than the longer lists after the rarest trigram.
fn contains_from(list: &[u32], t: u32) -> bool {
    list.binary_search(&t).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_hold_every_trigram() {
        let text = b"create issue\nlist issues\ncreate pull request\nis";
        let starts = [0, 13, 25, 45, 47];
        let idx = TrigramIndex::new(text, &starts);
        assert_eq!(idx.candidates(b"issue"), Some(vec![0, 1]));
        assert_eq!(idx.candidates(b"create"), Some(vec![0, 2]));
        // Trigrams present apart ("cre", "eat", ... of "create" and "iss" ...) still need
        // every one: "create is" spans a word boundary only tool 0 holds.
        assert_eq!(idx.candidates(b"create is"), Some(vec![0]));
        assert_eq!(idx.candidates(b"zzz"), Some(vec![]));
        assert_eq!(idx.candidates(b"is"), None);
    }
}
