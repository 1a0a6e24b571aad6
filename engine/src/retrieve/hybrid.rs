//! Hybrid retrieval: candidates from the vector index and the lexical (BM25) index, ordered by
//! the [`super::Reranker`]; and the iterative strategy's rounds of query refinement.

use memloop_index::UnitVector;
use rustc_hash::{FxHashMap, FxHashSet};

use super::best_first;
use super::quantities::{asks_age, states_own_age, AGE_CANDIDATES, AGE_PROBE, AGE_PROBE_WORDS};
use super::vector::WINDOW_CANDIDATES;
use crate::clock::Timestamp;
use crate::error::Result;
use crate::hooks::{RefineInput, Refinement};
use crate::invalid::InvalidInput;
use crate::item::{MemoryId, MemoryItem};
use crate::memory::Memory;
use crate::vocabulary::Cue;
use crate::vocabulary::{Explanation, Hit, Query, MAX_K};

impl Memory {
    /// The `query.k` best of the hybrid candidates (`candidates` from each index, at least k)
    /// for `text` and `vector`, ordered by the reranker, each explained.
    ///
    /// With a `window` (`[start, end)`, ms: the time the query names), the best candidates
    /// whose validity began in it join from each index too, however far below the others they
    /// rank: the time boost can only lift a memory that is among the candidates.
    pub(super) fn rerank(
        &self,
        query: &Query,
        text: &str,
        vector: &UnitVector,
        candidates: usize,
        window: Option<(Timestamp, Timestamp)>,
    ) -> Result<Vec<Hit>> {
        let mut hits =
            self.hybrid_candidates(query, text, vector, candidates.max(query.k), window)?;
        let reranker = &self.inner.options.hooks.reranker;
        if self.inner.sentences && reranker.uses_sentences() {
            self.explain_sentences(&mut hits, vector)?;
        }
        let scores = reranker.rerank(text, &hits)?;
        if scores.len() != hits.len() || scores.iter().any(|s| !s.is_finite()) {
            return Err(InvalidInput::RerankerScores {
                returned: scores.len(),
                candidates: hits.len(),
            }
            .into());
        }
        for (h, s) in hits.iter_mut().zip(scores) {
            h.score = s;
            h.explain.fused = Some(s);
        }
        best_first(&mut hits);
        // The memories of the window stay past the cut: the time boost, after this, lifts
        // them from wherever the reranker put them; so do those stating the asker's age, for a
        // query asking it.
        let asks_age = self.asks_age(query);
        let mut kept = 0;
        hits.retain(|h| {
            let of_window = window.is_some_and(|(s, e)| (s..e).contains(&h.item.valid_from));
            kept += 1;
            kept <= query.k || of_window || (asks_age && states_own_age(&h.item.text).is_some())
        });
        for (rank, h) in hits.iter_mut().enumerate() {
            h.rank = rank;
        }
        Ok(hits)
    }

    /// `rounds` rounds of `per_round` vector results, the query refined by the
    /// [`super::QueryRefiner`] after each; returns the final query text and vector.
    pub(super) fn refine(
        &self,
        query: &Query,
        vector: UnitVector,
        rounds: usize,
        per_round: usize,
    ) -> Result<(String, UnitVector)> {
        let (mut text, mut vector) = (query.text.clone(), vector);
        for round in 0..rounds {
            let hits = self.search_vector(&vector, per_round.max(1), &query.filter, query.ef)?;
            let ids: Vec<MemoryId> = hits.iter().map(|h| h.item.id).collect();
            let hit_vectors: Vec<Vec<f32>> = self
                .inner
                .store
                .vectors(&ids)?
                .into_iter()
                .map(|(_, v)| v)
                .collect();
            let input = RefineInput {
                query: &text,
                vector: vector.as_slice(),
                hits: &hits,
                hit_vectors: &hit_vectors,
                round,
            };
            match self.inner.options.hooks.refiner.refine(&input)? {
                Refinement::Text(t) if t.trim().is_empty() => {
                    return Err(InvalidInput::EmptyRefinement.into())
                }
                Refinement::Text(t) => {
                    vector = self.inner.embed_query(&t)?;
                    text = t;
                }
                Refinement::Vector(v) => {
                    vector = self
                        .inner
                        .unit(v)
                        .map_err(|e| e.at("the refiner's vector"))?;
                }
            }
        }
        Ok((text, vector))
    }

    /// The `k` best by BM25 alone, each explained with its lexical score and rank.
    /// With a `window`, the best memories whose validity began in it join as in
    /// [`Memory::rerank`].
    pub(super) fn lexical_search(
        &self,
        query: &Query,
        k: usize,
        window: Option<(Timestamp, Timestamp)>,
    ) -> Result<Vec<Hit>> {
        let ranked = self.bm25_and_window(query, &query.text, k, window)?;
        let ids: Vec<MemoryId> = ranked.iter().map(|r| r.0).collect();
        let items = self.items_by_id(&ids)?;
        let mut hits = Vec::with_capacity(ranked.len());
        for (rank, (id, score)) in ranked.into_iter().enumerate() {
            let Some(item) = items.get(&id) else { continue };
            hits.push(Hit {
                item: item.clone(),
                score,
                rank: hits.len(),
                explain: Explanation {
                    lexical: Some(score),
                    lexical_rank: Some(rank),
                    ..Default::default()
                },
            });
        }
        Ok(hits)
    }

    /// The stored memories among `ids`, by id (a memory forgotten meanwhile is absent).
    fn items_by_id(&self, ids: &[MemoryId]) -> Result<FxHashMap<MemoryId, MemoryItem>> {
        let items = self.inner.store.items(ids)?;
        Ok(items.into_iter().map(|i| (i.id, i)).collect())
    }

    /// The `n` best memories by BM25 for `text` that pass the query's filter, best first, and
    /// with a `window` the [`WINDOW_CANDIDATES`] best whose validity began in it after them.
    fn bm25_and_window(
        &self,
        query: &Query,
        text: &str,
        n: usize,
        window: Option<(Timestamp, Timestamp)>,
    ) -> Result<Vec<(MemoryId, f32)>> {
        let mut ranked = self.bm25(query, text, n, None)?;
        if let Some(w) = window {
            let seen: FxHashSet<MemoryId> = ranked.iter().map(|r| r.0).collect();
            let inside = self.bm25(query, text, WINDOW_CANDIDATES, Some(w))?;
            ranked.extend(inside.into_iter().filter(|r| !seen.contains(&r.0)));
        }
        Ok(ranked)
    }

    /// The `n` best memories by BM25 for `text` that pass the query's filter, best first.
    /// With a `window`, only memories whose validity began in it.
    fn bm25(
        &self,
        query: &Query,
        text: &str,
        n: usize,
        window: Option<(Timestamp, Timestamp)>,
    ) -> Result<Vec<(MemoryId, f32)>> {
        // Lock order (ARCHITECTURE.md): the lexical slot before the catalog. Its first build
        // takes the writer lock, and a write holds the writer lock while it waits for the
        // catalog: asking for the slot under the catalog's read lock deadlocked them.
        let slot = self.inner.lexical()?;
        let index = slot.as_ref().expect("built by lexical()");
        let cat = self.inner.catalog.get()?.read();
        let Some(c) = cat.compile(&query.filter) else {
            return Ok(Vec::new());
        };
        let user = query.filter.user.as_deref();
        Ok(index.search(text, n, user, &|id| {
            cat.allows(&c, id) && window.is_none_or(|(s, e)| cat.began_in(id, s, e))
        }))
    }

    /// The union of the `n` best by vector and the `n` best by BM25, each explained with both
    /// scores (a lexical-only candidate's cosine is computed from its stored vector); for a
    /// query asking an age, and the [`AGE_CANDIDATES`] best for an age stated by each.
    fn hybrid_candidates(
        &self,
        query: &Query,
        text: &str,
        vector: &UnitVector,
        n: usize,
        window: Option<(Timestamp, Timestamp)>,
    ) -> Result<Vec<Hit>> {
        let mut hits = self.search_vector_and_window(vector, n.min(MAX_K), query, window)?;
        let lexical = self.bm25_and_window(query, text, n, window)?;
        let at: FxHashMap<MemoryId, usize> = hits
            .iter()
            .enumerate()
            .map(|(i, h)| (h.item.id, i))
            .collect();
        let mut extra = Vec::new();
        for (rank, &(id, score)) in lexical.iter().enumerate() {
            match at.get(&id) {
                Some(&i) => {
                    hits[i].explain.lexical = Some(score);
                    hits[i].explain.lexical_rank = Some(rank);
                }
                None => extra.push((id, Some((score, rank)))),
            }
        }
        // A question asking an age is answered by a memory stating one, which shares neither
        // words nor much meaning with it ("how old was I when Alex was born?" and "by the
        // way, I just turned 32 last month"): the memories that best match an age stated join.
        if self.asks_age(query) {
            let mut seen: FxHashSet<MemoryId> = at
                .keys()
                .chain(extra.iter().map(|e| &e.0))
                .copied()
                .collect();
            for id in self.age_candidates(query)? {
                if seen.insert(id) {
                    extra.push((id, None));
                }
            }
        }
        let ids: Vec<MemoryId> = extra.iter().map(|e| e.0).collect();
        let items = self.items_by_id(&ids)?;
        let vectors: FxHashMap<MemoryId, Vec<f32>> =
            self.inner.store.vectors(&ids)?.into_iter().collect();
        for (id, lexical) in extra {
            let Some(item) = items.get(&id) else { continue };
            let cosine = vectors
                .get(&id)
                .map(|v| memloop_index::simd::dot(v, vector));
            hits.push(Hit {
                item: item.clone(),
                score: cosine.unwrap_or(0.0),
                rank: 0,
                explain: Explanation {
                    vector: cosine,
                    lexical: lexical.map(|l| l.0),
                    lexical_rank: lexical.map(|l| l.1),
                    ..Default::default()
                },
            });
        }
        Ok(hits)
    }

    /// Whether `query` asks its asker's age and the `age` cue is on.
    fn asks_age(&self, query: &Query) -> bool {
        self.inner.options.cues.has(Cue::Age) && asks_age(&query.text).is_some()
    }

    /// For a query asking an age: the [`AGE_CANDIDATES`] nearest to [`AGE_PROBE`] and the
    /// [`AGE_CANDIDATES`] best by BM25 for [`AGE_PROBE_WORDS`] that pass its filter.
    fn age_candidates(&self, query: &Query) -> Result<Vec<MemoryId>> {
        let probe = self.inner.embed_query(AGE_PROBE)?;
        let by_vector = self.search_vector(&probe, AGE_CANDIDATES, &query.filter, query.ef)?;
        let by_words = self.bm25(query, AGE_PROBE_WORDS, AGE_CANDIDATES, None)?;
        Ok(by_vector
            .iter()
            .map(|h| h.item.id)
            .chain(by_words.iter().map(|r| r.0))
            .collect())
    }
}
