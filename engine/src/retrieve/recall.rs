//! The entry points of retrieval: `get`, `scan`, and every recall. A recall reads top to
//! bottom: the request is checked once here, the query embedded, candidates searched by the
//! strategy (`vector.rs`, `hybrid.rs`), the cues that are on applied (`cues.rs`), and the final hits served (`serve.rs`: explained, then
//! touched). None of them takes the writer lock.

use memloop_index::UnitVector;

use super::cue_step::Asked;
use super::cues::apply_cues;
use super::time_cues::TimeCues;
use crate::error::Result;
use crate::filter::MemoryFilter;
use crate::item::{MemoryId, MemoryItem};
use crate::memory::views::{Advanced, Scoped};
use crate::memory::Memory;
use crate::vocabulary::check_k;
use crate::vocabulary::Cue;
use crate::vocabulary::{Hit, Query, Strategy, MAX_K};

impl Memory {
    /// The memory `id`, if it exists.
    ///
    /// # Errors
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn get(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        self.inner.current(id)
    }

    /// Single-step recall: embeds the query and returns the `k` most similar memories that
    /// pass the filter, best first. Records the access time of each hit. The same as
    /// [`Memory::retrieve`] with [`crate::Strategy::Single`].
    ///
    /// # Errors
    /// [`crate::Error::InvalidInput`] for an empty query or `k` outside
    /// 1..=[`crate::retrieve::MAX_K`]; [`crate::Error::Embed`], [`crate::Error::Index`],
    /// [`crate::Error::Store`].
    pub fn recall(&self, query: &Query) -> Result<Vec<Hit>> {
        self.retrieve(query, Strategy::Single)
    }

    /// Recall by `strategy` (see [`crate::retrieve`]): every hit explains its score; the final
    /// hits are reinforced like recall hits.
    ///
    /// # Errors
    /// As [`Memory::recall`]; a reranker or refiner error is returned as is, a reranker
    /// returning the wrong number of scores or a non-finite one, or a refiner returning an
    /// empty query or a bad vector, as [`crate::Error::InvalidInput`].
    pub fn retrieve(&self, query: &Query, strategy: Strategy) -> Result<Vec<Hit>> {
        query.check()?;
        strategy.check()?;
        let reference = query.filter.as_of.unwrap_or_else(|| self.inner.now());
        let on = self.inner.options.cues;
        let cues = if on.has(Cue::Time) {
            TimeCues::parse(&query.text, reference)
        } else {
            TimeCues::default()
        };
        // A wider pool is ranked than the `k` kept: with a time in the query the time boost
        // picks from it, and the newer value of a fact ranked just below the cut can take its
        // older value's place. The pool never widens a reranking strategy's candidates.
        let widest = match strategy {
            Strategy::Rerank { candidates } => candidates.max(query.k),
            Strategy::Iterative { .. } => Strategy::DEFAULT_CANDIDATES.max(query.k),
            Strategy::Single | Strategy::Lexical => MAX_K,
        };
        let pool_k = if cues.is_empty() {
            (query.k * NEWEST_POOL)
                .max(query.k + NEWEST_POOL_MIN)
                .min(widest)
        } else {
            (query.k * TIME_POOL).min(MAX_K)
        };
        let pooled;
        let pool = if pool_k == query.k {
            query
        } else {
            pooled = Query {
                k: pool_k,
                ..query.clone()
            };
            &pooled
        };
        // Every strategy but the lexical one searches by the query's embedding.
        let embedded = || self.inner.embed_query(&query.text);
        let window = cues.window.as_ref().map(|(s, e, _)| (*s, *e));
        let mut hits = match strategy {
            Strategy::Lexical => self.lexical_search(pool, pool.k, window)?,
            Strategy::Single => {
                self.search_vector_and_window(&embedded()?, pool.k, pool, window)?
            }
            Strategy::Rerank { candidates } => {
                self.rerank(pool, &pool.text, &embedded()?, candidates, window)?
            }
            Strategy::Iterative { rounds, per_round } => {
                let (text, vector) = self.refine(pool, embedded()?, rounds, per_round)?;
                self.rerank(pool, &text, &vector, Strategy::DEFAULT_CANDIDATES, window)?
            }
        };
        let asked = Asked {
            text: &query.text,
            reference,
            time: &cues,
            cues: on,
        };
        apply_cues(&asked, &mut hits);
        hits.truncate(query.k);
        for (rank, h) in hits.iter_mut().enumerate() {
            h.rank = rank;
        }
        self.inner.serve(&mut hits)?;
        Ok(hits)
    }
}

/// How many times `k` hits are ranked before the time boost keeps `k` of them.
const TIME_POOL: usize = 3;
/// How many times `k` hits are ranked, with no time in the query, before `k` are kept (the
/// newer value of a fact below the cut may take its older value's place) …
const NEWEST_POOL: usize = 2;
/// … and at least this many more than `k`.
const NEWEST_POOL_MIN: usize = 8;

impl<'a> Advanced<'a> {
    /// The memories passing `filter`, by ascending id, at most `limit`.
    ///
    /// # Errors
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn scan(&self, filter: &MemoryFilter, limit: usize) -> Result<Vec<MemoryItem>> {
        let ids = {
            let cat = self.memory.inner.catalog.get()?.read();
            match cat.compile(filter) {
                Some(c) => cat.matching(&c),
                None => Vec::new(),
            }
        };
        let ids: Vec<MemoryId> = ids.into_iter().take(limit).collect();
        let mut items = self.memory.inner.store.items(&ids)?;
        self.memory.inner.apply_pending(items.iter_mut());
        Ok(items)
    }

    /// Recall by a query vector made with this store's model.
    ///
    /// # Errors
    /// As [`Memory::recall`]; [`crate::Error::Index`] for a vector of the wrong dimension, or
    /// zero, or not finite.
    pub fn recall_vector(
        &self,
        vector: &[f32],
        k: usize,
        filter: &MemoryFilter,
        ef: Option<usize>,
    ) -> Result<Vec<Hit>> {
        check_k(k)?;
        let vector = UnitVector::with_dim(vector.to_vec(), self.memory.inner.embedder.dim())?;
        let mut hits = self.memory.search_vector(&vector, k, filter, ef)?;
        self.memory.inner.serve(&mut hits)?;
        Ok(hits)
    }
}

impl<'a> Scoped<'a> {
    /// [`Memory::get`] for a caller confined to `scope`: a memory outside it is `None`, as if
    /// it did not exist.
    ///
    /// # Errors
    /// [`crate::Error::Store`] or [`crate::Error::Corrupt`].
    pub fn get(&self, id: MemoryId) -> Result<Option<MemoryItem>> {
        let scope = &self.scope;
        self.memory.inner.current_in(id, scope)
    }
}
