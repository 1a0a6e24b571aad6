//! The BM25 lexical index over memory text, kept in memory.
//!
//! Built on first use from the store (one read of every current memory's text) and then kept
//! up to date by every write, so it costs nothing for stores that never ask for lexical
//! scores. Scores are Okapi BM25 (k1 = 1.2, b = 0.3, idf = ln(1 + (N − df + ½)/(df + ½))),
//! the weighting of Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and
//! Beyond" (2009). b = 0.3 (length normalisation weaker than the textbook 0.75) was chosen on
//! the development data (LoCoMo's 6 development conversations, SciFact's train queries): at or
//! above 0.75 on both, well above on short conversational memories (BENCHMARKS.md).

use rustc_hash::FxHashMap;

use super::text::Analyzer;
use crate::item::MemoryId;

const K1: f32 = 1.2;
const B: f32 = 0.3;

/// One indexed memory.
struct Doc {
    /// Its distinct terms with their frequencies.
    terms: Vec<(u32, u32)>,
    /// Number of terms (the document length).
    len: u32,
    /// xxh3 of the indexed text: an upsert of the same text is a no-op.
    hash: u64,
}

/// BM25 postings over memory ids.
#[derive(Default)]
pub(crate) struct LexicalIndex {
    analyzer: Analyzer,
    term_ids: FxHashMap<String, u32>,
    /// Per term id: (memory, term frequency).
    postings: Vec<FxHashMap<MemoryId, u32>>,
    docs: FxHashMap<MemoryId, Doc>,
    total_len: u64,
}

impl LexicalIndex {
    /// Indexes (or re-indexes) memory `id` with `text`.
    pub(crate) fn upsert(&mut self, id: MemoryId, text: &str) {
        let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        if self.docs.get(&id).is_some_and(|d| d.hash == hash) {
            return;
        }
        self.remove(id);
        let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
        let mut len = 0u32;
        for term in self.analyzer.terms(text) {
            let next = self.term_ids.len() as u32;
            let tid = *self.term_ids.entry(term).or_insert(next);
            if tid as usize == self.postings.len() {
                self.postings.push(FxHashMap::default());
            }
            *counts.entry(tid).or_default() += 1;
            len += 1;
        }
        let mut terms: Vec<(u32, u32)> = counts.into_iter().collect();
        terms.sort_unstable();
        for &(tid, tf) in &terms {
            self.postings[tid as usize].insert(id, tf);
        }
        self.total_len += u64::from(len);
        self.docs.insert(id, Doc { terms, len, hash });
    }

    /// Drops memory `id` (no-op if absent).
    pub(crate) fn remove(&mut self, id: MemoryId) {
        if let Some(doc) = self.docs.remove(&id) {
            for (tid, _) in doc.terms {
                self.postings[tid as usize].remove(&id);
            }
            self.total_len -= u64::from(doc.len);
        }
    }

    /// Number of indexed memories.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    /// BM25 scores of every memory sharing a term with `query` and passing `allow`, best
    /// first (equal scores by id), at most `k`.
    pub(crate) fn search(
        &self,
        query: &str,
        k: usize,
        allow: &dyn Fn(MemoryId) -> bool,
    ) -> Vec<(MemoryId, f32)> {
        let n = self.docs.len() as f32;
        if n == 0.0 {
            return Vec::new();
        }
        let avg_len = self.total_len as f32 / n;
        let mut terms: Vec<u32> = self
            .analyzer
            .terms(query)
            .iter()
            .filter_map(|t| self.term_ids.get(t).copied())
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let mut scores: FxHashMap<MemoryId, f32> = FxHashMap::default();
        for tid in terms {
            let postings = &self.postings[tid as usize];
            let df = postings.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (&id, &tf) in postings {
                let len = self.docs[&id].len as f32;
                let tf = tf as f32;
                let s = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg_len));
                *scores.entry(id).or_default() += s;
            }
        }
        let mut out: Vec<(MemoryId, f32)> =
            scores.into_iter().filter(|&(id, _)| allow(id)).collect();
        out.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(k);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_terms_outweigh_common_ones_and_removal_forgets() {
        let mut ix = LexicalIndex::default();
        ix.upsert(1, "the cat sat on the mat");
        ix.upsert(2, "the dog sat on the log");
        ix.upsert(3, "a cat and a dog");
        let hits = ix.search("cat mat", 10, &|_| true);
        assert_eq!(hits[0].0, 1);
        assert_eq!(hits.len(), 2);
        ix.remove(1);
        assert_eq!(ix.search("mat", 10, &|_| true), []);
        assert_eq!(ix.len(), 2);
        ix.upsert(2, "a mat");
        assert_eq!(ix.search("mat", 10, &|_| true)[0].0, 2);
        assert_eq!(ix.search("log", 10, &|_| true), []);
        assert_eq!(ix.search("dog", 10, &|id| id != 3), []);
    }

    #[test]
    fn scores_match_the_bm25_formula() {
        let mut ix = LexicalIndex::default();
        ix.upsert(1, "apple apple banana");
        ix.upsert(2, "cherry");
        // N = 2, df(apple) = 1, avg len = 2, len(1) = 3, tf = 2; k1 = 1.2, b = 0.3.
        let idf = (1.0f32 + (2.0 - 1.0 + 0.5) / 1.5).ln();
        let want = idf * 2.0 * 2.2 / (2.0 + 1.2 * (0.7 + 0.3 * 1.5));
        let got = ix.search("apple", 1, &|_| true)[0].1;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
}
