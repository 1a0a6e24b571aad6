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

use super::analyzer::Analyzer;
use crate::item::MemoryId;

const K1: f32 = 1.2;
const B: f32 = 0.3;

/// The partition a memory's statistics count in: its user (xxh3 of the name), 0 without one.
/// A search naming a user scores with that user's statistics only (document count, lengths,
/// document frequencies), so what other users stored does not move its scores: no side
/// channel across users.
fn partition(user: Option<&str>) -> u64 {
    user.map_or(0, |u| xxhash_rust::xxh3::xxh3_64(u.as_bytes()) | 1)
}

/// One indexed memory.
struct Doc {
    /// Its distinct terms with their frequencies.
    terms: Vec<(u32, u32)>,
    /// Number of terms (the document length).
    len: u32,
    /// xxh3 of the indexed text: an upsert of the same text is a no-op.
    hash: u64,
    /// Its statistics partition ([`partition`]).
    partition: u64,
}

/// Document count and summed length of one partition, or of all.
#[derive(Default, Clone, Copy)]
struct Totals {
    docs: u64,
    len: u64,
}

/// BM25 postings over memory ids.
#[derive(Default)]
pub(crate) struct LexicalIndex {
    analyzer: Analyzer,
    term_ids: FxHashMap<String, u32>,
    /// Per term id: the term (so an unused term can leave the dictionary).
    terms: Vec<String>,
    /// Term ids no memory uses any more, reused before new ones.
    free: Vec<u32>,
    /// Per term id: (memory, term frequency).
    postings: Vec<FxHashMap<MemoryId, u32>>,
    docs: FxHashMap<MemoryId, Doc>,
    all: Totals,
    partitions: FxHashMap<u64, Totals>,
}

impl LexicalIndex {
    /// Indexes (or re-indexes) memory `id` of `user` with `text`.
    pub(crate) fn upsert(&mut self, id: MemoryId, user: Option<&str>, text: &str) {
        let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let partition = partition(user);
        if self
            .docs
            .get(&id)
            .is_some_and(|d| d.hash == hash && d.partition == partition)
        {
            return;
        }
        self.remove(id);
        let mut counts: FxHashMap<u32, u32> = FxHashMap::default();
        let mut len = 0u32;
        for term in self.analyzer.terms(text) {
            let tid = self.term_id(term);
            *counts.entry(tid).or_default() += 1;
            len = len.saturating_add(1);
        }
        let mut terms: Vec<(u32, u32)> = counts.into_iter().collect();
        terms.sort_unstable();
        for &(tid, tf) in &terms {
            self.postings[tid as usize].insert(id, tf);
        }
        for totals in [&mut self.all, self.partitions.entry(partition).or_default()] {
            totals.docs += 1;
            totals.len += u64::from(len);
        }
        self.docs.insert(
            id,
            Doc {
                terms,
                len,
                hash,
                partition,
            },
        );
    }

    /// The id of `term`, added to the dictionary if new (reusing a freed id).
    fn term_id(&mut self, term: String) -> u32 {
        if let Some(&tid) = self.term_ids.get(&term) {
            return tid;
        }
        let tid = match self.free.pop() {
            Some(tid) => {
                self.terms[tid as usize].clone_from(&term);
                tid
            }
            None => {
                self.terms.push(term.clone());
                self.postings.push(FxHashMap::default());
                (self.terms.len() - 1) as u32
            }
        };
        self.term_ids.insert(term, tid);
        tid
    }

    /// Drops memory `id` (no-op if absent). A term no memory uses any more leaves the
    /// dictionary, so erased text does not stay in it and churn does not grow it.
    pub(crate) fn remove(&mut self, id: MemoryId) {
        let Some(doc) = self.docs.remove(&id) else {
            return;
        };
        for (tid, _) in doc.terms {
            let postings = &mut self.postings[tid as usize];
            postings.remove(&id);
            if postings.is_empty() {
                *postings = FxHashMap::default();
                let term = std::mem::take(&mut self.terms[tid as usize]);
                self.term_ids.remove(&term);
                self.free.push(tid);
            }
        }
        self.all.docs -= 1;
        self.all.len -= u64::from(doc.len);
        if let Some(t) = self.partitions.get_mut(&doc.partition) {
            t.docs -= 1;
            t.len -= u64::from(doc.len);
            if t.docs == 0 {
                self.partitions.remove(&doc.partition);
            }
        }
        if self.docs.capacity() > 64 && self.docs.len() < self.docs.capacity() / 4 {
            self.docs.shrink_to_fit();
        }
    }

    /// Number of indexed memories.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.docs.len()
    }

    /// Number of terms in the dictionary.
    #[cfg(test)]
    pub(crate) fn terms(&self) -> usize {
        self.term_ids.len()
    }

    /// BM25 scores of every memory sharing a term with `query` and passing `allow`, best
    /// first (equal scores by id), at most `k`. With a `user`, only that user's memories are
    /// scored, with that user's statistics.
    pub(crate) fn search(
        &self,
        query: &str,
        k: usize,
        user: Option<&str>,
        allow: &dyn Fn(MemoryId) -> bool,
    ) -> Vec<(MemoryId, f32)> {
        let only = user.map(|u| partition(Some(u)));
        let totals = match only {
            Some(p) => self.partitions.get(&p).copied().unwrap_or_default(),
            None => self.all,
        };
        if totals.docs == 0 {
            return Vec::new();
        }
        let n = totals.docs as f32;
        let avg_len = totals.len as f32 / n;
        let mut terms: Vec<u32> = self
            .analyzer
            .terms(query)
            .iter()
            .filter_map(|t| self.term_ids.get(t).copied())
            .collect();
        terms.sort_unstable();
        terms.dedup();
        let in_scope = |doc: &Doc| only.is_none_or(|p| doc.partition == p);
        // Sized once for the longest posting list: every scored memory is in one of them.
        let most = terms
            .iter()
            .map(|&t| self.postings[t as usize].len())
            .max()
            .unwrap_or(0);
        let mut scores: FxHashMap<MemoryId, f32> =
            FxHashMap::with_capacity_and_hasher(most, Default::default());
        let mut found: Vec<(MemoryId, f32, u32)> = Vec::with_capacity(most);
        for tid in terms {
            found.clear();
            for (&id, &tf) in &self.postings[tid as usize] {
                let doc = &self.docs[&id];
                if in_scope(doc) {
                    found.push((id, doc.len as f32, tf));
                }
            }
            let df = found.len() as f32;
            // `libm`'s log: the same bits on every platform (see decay::policy).
            let idf = libm::logf(1.0 + (n - df + 0.5) / (df + 0.5));
            for &(id, len, tf) in &found {
                let tf = tf as f32;
                let s = idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len / avg_len));
                *scores.entry(id).or_default() += s;
            }
        }
        best_allowed(scores.into_iter().collect(), k, allow)
    }
}

/// The first `k` of `scored` that pass `allow`, best first (equal scores by id): what sorting
/// all of them and filtering would give, but only the best few are sorted and asked about.
fn best_allowed(
    mut scored: Vec<(MemoryId, f32)>,
    k: usize,
    allow: &dyn Fn(MemoryId) -> bool,
) -> Vec<(MemoryId, f32)> {
    let order = |a: &(MemoryId, f32), b: &(MemoryId, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut out = Vec::with_capacity(k.min(scored.len()));
    let mut rest = scored.as_mut_slice();
    while out.len() < k && !rest.is_empty() {
        // Twice what is still missing, so a filter that refuses a few needs no second round.
        let take = (2 * (k - out.len())).min(rest.len());
        if take < rest.len() {
            rest.select_nth_unstable_by(take - 1, order);
        }
        let (head, tail) = rest.split_at_mut(take);
        head.sort_unstable_by(order);
        out.extend(
            head.iter()
                .copied()
                .filter(|&(id, _)| allow(id))
                .take(k - out.len()),
        );
        rest = tail;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_terms_outweigh_common_ones_and_removal_forgets() {
        let mut ix = LexicalIndex::default();
        ix.upsert(MemoryId::new(1), None, "the cat sat on the mat");
        ix.upsert(MemoryId::new(2), None, "the dog sat on the log");
        ix.upsert(MemoryId::new(3), None, "a cat and a dog");
        let hits = ix.search("cat mat", 10, None, &|_| true);
        assert_eq!(hits[0].0, MemoryId::new(1));
        assert_eq!(hits.len(), 2);
        ix.remove(MemoryId::new(1));
        assert_eq!(ix.search("mat", 10, None, &|_| true), []);
        assert_eq!(ix.len(), 2);
        ix.upsert(MemoryId::new(2), None, "a mat");
        assert_eq!(ix.search("mat", 10, None, &|_| true)[0].0, MemoryId::new(2));
        assert_eq!(ix.search("log", 10, None, &|_| true), []);
        assert_eq!(ix.search("dog", 10, None, &|id| id != MemoryId::new(3)), []);
    }

    #[test]
    fn scores_match_the_bm25_formula() {
        let mut ix = LexicalIndex::default();
        ix.upsert(MemoryId::new(1), None, "apple apple banana");
        ix.upsert(MemoryId::new(2), None, "cherry");
        // N = 2, df(apple) = 1, avg len = 2, len(1) = 3, tf = 2; k1 = 1.2, b = 0.3.
        let idf = (1.0f32 + (2.0 - 1.0 + 0.5) / 1.5).ln();
        let want = idf * 2.0 * 2.2 / (2.0 + 1.2 * (0.7 + 0.3 * 1.5));
        let got = ix.search("apple", 1, None, &|_| true)[0].1;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }

    #[test]
    fn a_users_scores_ignore_other_users_memories() {
        let mut ix = LexicalIndex::default();
        ix.upsert(MemoryId::new(1), Some("ana"), "the zebracorn grazes");
        ix.upsert(MemoryId::new(2), Some("ana"), "a quiet meadow");
        let alone = ix.search("zebracorn", 5, Some("ana"), &|_| true);
        for id in 10..30 {
            ix.upsert(
                MemoryId::new(id),
                Some("bob"),
                "zebracorn zebracorn everywhere",
            );
        }
        let crowded = ix.search("zebracorn", 5, Some("ana"), &|_| true);
        assert_eq!(alone, crowded, "bob's memories moved ana's scores");
        assert_eq!(crowded.len(), 1);
        // Unscoped, the statistics are the whole store's.
        let all = ix.search("zebracorn", 50, None, &|_| true);
        assert_eq!(all.len(), 21);
    }

    #[test]
    fn churn_leaves_no_terms_behind() {
        let mut ix = LexicalIndex::default();
        ix.upsert(MemoryId::new(1), None, "a lasting memory");
        for round in 0..5u64 {
            for i in 0..200u64 {
                ix.upsert(
                    MemoryId::new(1000 + i),
                    Some("carol"),
                    &format!("secret{round}x{i} token{i}"),
                );
            }
            for i in 0..200u64 {
                ix.remove(MemoryId::new(1000 + i));
            }
        }
        assert_eq!(ix.terms(), 2, "only the lasting memory's terms remain");
        assert!(ix.search("secret0x1", 5, None, &|_| true).is_empty());
        assert_eq!(
            ix.search("lasting", 5, None, &|_| true)[0].0,
            MemoryId::new(1)
        );
    }

    proptest::proptest! {
        /// Selecting the best few equals sorting everything, filtering and truncating, with
        /// ties on score, any filter and any k.
        #[test]
        fn best_allowed_is_the_sorted_filtered_prefix(
            scores in proptest::collection::vec(0u8..6, 0..80),
            refused in proptest::collection::vec(proptest::bool::ANY, 80),
            k in 0usize..30,
        ) {
            let scored: Vec<(MemoryId, f32)> =
                scores.iter().enumerate().map(|(i, &s)| (MemoryId::new(i as u64 * 3 + 1), f32::from(s))).collect();
            let allow = |id: MemoryId| !refused[(id.get() / 3) as usize];
            let mut expected: Vec<_> = scored.iter().copied().filter(|&(id, _)| allow(id)).collect();
            expected.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            expected.truncate(k);
            proptest::prop_assert_eq!(best_allowed(scored, k, &allow), expected);
        }
    }
}
