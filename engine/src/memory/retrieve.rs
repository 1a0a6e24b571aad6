//! Retrieval strategies through the engine: hybrid candidates, reranking, iterative refinement,
//! explanations, and the lexical index slot.

use rustc_hash::FxHashMap;

use super::read::check_k;
use super::{Hit, Inner, Memory, Query};
use crate::error::{Error, Result};
use crate::item::{MemoryId, MemoryItem};
use crate::retrieve::{
    Explanation, FeedbackState, LexicalIndex, RefineInput, Refinement, Strategy,
};
use crate::store::FEEDBACK;

impl Memory {
    /// Recall by `strategy` (see [`crate::retrieve`]): every hit explains its score; the final
    /// hits are reinforced like recall hits.
    ///
    /// # Errors
    /// As [`Memory::recall`]; a reranker or refiner error, or a reranker returning the wrong
    /// number of scores or a non-finite one, is returned as is or as
    /// [`Error::InvalidInput`].
    pub fn retrieve(&self, query: &Query, strategy: Strategy) -> Result<Vec<Hit>> {
        if query.text.trim().is_empty() {
            return Err(Error::InvalidInput("query text is empty".into()));
        }
        check_k(query.k)?;
        let embed = |text: &str| self.inner.embedder.embed_query(text);
        let (text, vector, candidates) = match strategy {
            Strategy::Single => return self.recall(query),
            Strategy::Rerank { candidates } => {
                (query.text.clone(), embed(&query.text)?, candidates)
            }
            Strategy::Iterative { rounds, per_round } => {
                let (mut text, mut vector) = (query.text.clone(), embed(&query.text)?);
                for round in 0..rounds {
                    let hits =
                        self.search_vector(&vector, per_round.max(1), &query.filter, query.ef)?;
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
                        vector: &vector,
                        hits: &hits,
                        hit_vectors: &hit_vectors,
                        round,
                    };
                    match self.inner.options.hooks.refiner.refine(&input)? {
                        Refinement::Text(t) if t.trim().is_empty() => {
                            return Err(Error::InvalidInput(
                                "the refiner returned an empty query".into(),
                            ))
                        }
                        Refinement::Text(t) => {
                            vector = embed(&t)?;
                            text = t;
                        }
                        Refinement::Vector(v) => {
                            vector =
                                super::write::unit(v, self.inner.embedder.dim()).map_err(|e| {
                                    Error::InvalidInput(format!("the refiner's vector: {e}"))
                                })?;
                        }
                    }
                }
                (text, vector, Strategy::DEFAULT_CANDIDATES)
            }
        };
        let mut hits = self.hybrid_candidates(query, &text, &vector, candidates.max(query.k))?;
        let scores = self.inner.options.hooks.reranker.rerank(&text, &hits)?;
        if scores.len() != hits.len() || scores.iter().any(|s| !s.is_finite()) {
            return Err(Error::InvalidInput(format!(
                "the reranker returned {} scores for {} candidates (all must be finite)",
                scores.len(),
                hits.len()
            )));
        }
        for (h, s) in hits.iter_mut().zip(scores) {
            h.score = s;
            h.explain.fused = Some(s);
        }
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.item.id.cmp(&b.item.id)));
        hits.truncate(query.k);
        for (rank, h) in hits.iter_mut().enumerate() {
            h.rank = rank;
        }
        self.inner.serve(&mut hits)?;
        Ok(hits)
    }

    /// The union of the `n` best by vector and the `n` best by BM25, each explained with both
    /// scores (a lexical-only candidate's cosine is computed from its stored vector).
    fn hybrid_candidates(
        &self,
        query: &Query,
        text: &str,
        vector: &[f32],
        n: usize,
    ) -> Result<Vec<Hit>> {
        let mut hits =
            self.search_vector(vector, n.min(super::read::MAX_K), &query.filter, query.ef)?;
        let lexical = {
            let cat = self.inner.catalog.get()?.read();
            let Some(c) = cat.compile(&query.filter) else {
                return Ok(hits);
            };
            let slot = self.inner.lexical()?;
            let index = slot.as_ref().expect("built by lexical()");
            index.search(text, n, &|id| cat.allows(&c, id))
        };
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
                None => extra.push((id, score, rank)),
            }
        }
        let ids: Vec<MemoryId> = extra.iter().map(|e| e.0).collect();
        let items: FxHashMap<MemoryId, MemoryItem> = self
            .inner
            .store
            .items(&ids)?
            .into_iter()
            .map(|i| (i.id, i))
            .collect();
        let vectors: FxHashMap<MemoryId, Vec<f32>> =
            self.inner.store.vectors(&ids)?.into_iter().collect();
        for (id, score, rank) in extra {
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
                    lexical: Some(score),
                    lexical_rank: Some(rank),
                    ..Default::default()
                },
            });
        }
        Ok(hits)
    }
}

impl Inner {
    /// Final hits leave: explained (tier as found), then touched and reinforced.
    pub(crate) fn serve(&self, hits: &mut [Hit]) -> Result<()> {
        self.explain(hits)?;
        self.touch(hits, self.now())
    }

    /// Fills in each hit's importance, tier, retention and feedback.
    fn explain(&self, hits: &mut [Hit]) -> Result<()> {
        let ids: Vec<MemoryId> = hits.iter().map(|h| h.item.id).collect();
        let feedback = self.store.sides(FEEDBACK, &ids)?;
        let policy = &self.options.forgetting;
        let now = self.now();
        for (h, fb) in hits.iter_mut().zip(feedback) {
            h.explain.importance = h.item.importance;
            h.explain.tier = h.item.tier;
            h.explain.retention = if policy.enabled && !h.item.pinned {
                policy.retention(&h.item, now)
            } else {
                1.0
            };
            h.explain.feedback = fb.map(|b| decode_feedback(&self.store, &b)).transpose()?;
        }
        Ok(())
    }

    /// The lexical index, built from every stored memory on first use (writes wait while it
    /// is built; afterwards every write keeps it current).
    pub(crate) fn lexical(&self) -> Result<parking_lot::RwLockReadGuard<'_, Option<LexicalIndex>>> {
        {
            let slot = self.lexical.read();
            if slot.is_some() {
                return Ok(slot);
            }
        }
        let _writer = self.writer.lock();
        if self.lexical.read().is_none() {
            let mut index = LexicalIndex::default();
            self.store
                .for_each_item(|item| index.upsert(item.id, &item.text))?;
            *self.lexical.write() = Some(index);
        }
        Ok(self.lexical.read())
    }
}

/// Decodes a stored feedback record.
pub(crate) fn decode_feedback(store: &crate::store::Store, bytes: &[u8]) -> Result<FeedbackState> {
    serde_json::from_slice(bytes).map_err(|e| store.corrupt(format!("feedback record: {e}")))
}
