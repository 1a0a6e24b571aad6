//! Insertion (Malkov & Yashunin, Algorithm 1), single and in parallel batches.
//!
//! A batch is applied in chunks. For each chunk, one short critical section checks the ids and
//! appends the nodes (unlinked, so no search can reach them yet); then the nodes are linked in
//! parallel with rayon, each under per-node locks, while searches keep running. The cancel flag is
//! checked between chunks, so a cancelled batch leaves a prefix of the items inserted.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use super::select::{reselect, select_neighbours};
use super::store::{FreshNode, View};
use super::Index;
use crate::encoding::VectorEncoding;
use crate::error::{IndexError, Result};
use crate::params::MAX_LEVEL;
use crate::search::layer::{greedy, search_layer};
use crate::search::scorer::{Probe, Scorer};
use crate::search::Hit;
use crate::search::{scored::Scored, scratch::SearchScratch};
use crate::unit::{check_dim, UnitVector, UnitVectors};

/// Items reserved and linked per chunk of a batch.
const CHUNK: usize = 2048;

/// What the level-0 search that linked an item found at or above a similarity threshold
/// ([`Index::insert_batch_near`]). That search keeps the `ef_construction` most similar live
/// items it meets, so it finds a near copy at least as surely as a search of that beam.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NearHits {
    /// The live items at or above the threshold, best first.
    pub hits: Vec<Hit>,
    /// Every item the search kept (`ef_construction` of them) was at or above the threshold,
    /// so more may lie beyond `hits`: a caller looking for one that passes a filter should
    /// search for it when none of `hits` does.
    pub saturated: bool,
}

impl NearHits {
    fn from_found(view: &View<'_>, found: &[Scored], threshold: f32, ef: usize) -> NearHits {
        let hits: Vec<Hit> = found
            .iter()
            .take_while(|f| f.sim >= threshold)
            .map(|f| Hit {
                id: view.ext(f.node),
                score: f.sim,
            })
            .collect();
        NearHits {
            saturated: found.len() >= ef && hits.len() == found.len(),
            hits,
        }
    }
}

impl Index {
    /// Inserts one item (a copy of its vector is stored).
    ///
    /// # Errors
    /// [`IndexError::DimensionMismatch`], or [`IndexError::DuplicateId`] if `id` is live
    /// (delete it first to replace it).
    pub fn insert(&self, id: u64, vector: &UnitVector) -> Result<()> {
        self.insert_batch(&[id], &UnitVectors::one(vector))
    }

    /// Inserts `ids.len()` items, the rows of `vectors` in order, linking them in parallel on
    /// the current rayon pool. Either every item is validated and inserted, or (on a caller
    /// error) none is.
    ///
    /// # Errors
    /// As [`Index::insert`]; a duplicate inside the batch is a [`IndexError::DuplicateId`] too.
    pub fn insert_batch(&self, ids: &[u64], vectors: &UnitVectors) -> Result<()> {
        self.insert_batch_cancellable(ids, vectors, &AtomicBool::new(false))
    }

    /// [`Index::insert_batch`] that stops between chunks when `cancel` is set.
    ///
    /// # Errors
    /// As [`Index::insert_batch`], or [`IndexError::Cancelled`] with the number of items
    /// inserted (a prefix of `ids`).
    pub fn insert_batch_cancellable(
        &self,
        ids: &[u64],
        vectors: &UnitVectors,
        cancel: &AtomicBool,
    ) -> Result<()> {
        self.insert_chunks(ids, vectors, cancel, None).map(drop)
    }

    /// [`Index::insert_batch`] that also reports, for each item in order, what the search that
    /// linked it found at or above `threshold` (see [`NearHits`]): a near-duplicate check that
    /// costs no search of its own. Items inserted concurrently, including the batch's own, may
    /// be among the hits.
    ///
    /// # Errors
    /// As [`Index::insert_batch`].
    pub fn insert_batch_near(
        &self,
        ids: &[u64],
        vectors: &UnitVectors,
        threshold: f32,
    ) -> Result<Vec<NearHits>> {
        self.insert_chunks(ids, vectors, &AtomicBool::new(false), Some(threshold))
    }

    /// Inserts in chunks; with `near`, returns each item's [`NearHits`] at that threshold
    /// (otherwise an empty list).
    fn insert_chunks(
        &self,
        ids: &[u64],
        vectors: &UnitVectors,
        cancel: &AtomicBool,
        near: Option<f32>,
    ) -> Result<Vec<NearHits>> {
        let dim = self.params.dim;
        check_dim(dim, vectors.dim())?;
        if vectors.len() != ids.len() {
            return Err(IndexError::InvalidParameter {
                name: "ids",
                reason: format!("{} ids for {} vectors", ids.len(), vectors.len()),
            });
        }
        let _gate = self.gate.read();
        // Checked up front so a caller error changes nothing; `reserve_nodes` checks again per
        // chunk under the reservation lock, against inserts racing from other threads.
        {
            let mut seen = FxHashSet::default();
            let view = self.store.view();
            for &id in ids {
                if !seen.insert(id) || view.find(id).is_some() {
                    return Err(IndexError::DuplicateId(id));
                }
            }
        }
        let mut found = Vec::with_capacity(if near.is_some() { ids.len() } else { 0 });
        let mut done = 0;
        for (chunk_ids, chunk_vecs) in ids.chunks(CHUNK).zip(vectors.as_flat().chunks(CHUNK * dim))
        {
            if cancel.load(Ordering::Relaxed) {
                return Err(IndexError::Cancelled { done });
            }
            let first = self.reserve_nodes(chunk_ids, chunk_vecs)?;
            let view = self.store.view();
            let last = first + chunk_ids.len() as u32;
            let link = |s: &mut SearchScratch, node: u32| {
                let row = (node - first) as usize * dim;
                let level0 = self.link(&view, node, &chunk_vecs[row..row + dim], s);
                near.map(|t| NearHits::from_found(&view, &level0, t, self.params.ef_construction))
            };
            if chunk_ids.len() == 1 {
                found.extend(link(&mut SearchScratch::new(), first));
            } else {
                let chunk: Vec<Option<NearHits>> = (first..last)
                    .into_par_iter()
                    .map_init(SearchScratch::new, link)
                    .collect();
                found.extend(chunk.into_iter().flatten());
            }
            done += chunk_ids.len();
        }
        Ok(found)
    }

    /// Appends unlinked nodes for `ids`; returns the first new node id.
    fn reserve_nodes(&self, ids: &[u64], vectors: &[f32]) -> Result<u32> {
        let _reserve = self.reserve.lock();
        {
            let view = self.store.view();
            if let Some(&dup) = ids.iter().find(|&&id| view.find(id).is_some()) {
                return Err(IndexError::DuplicateId(dup));
            }
            if u64::from(view.len()) + ids.len() as u64 >= u64::from(u32::MAX) {
                return Err(IndexError::InvalidParameter {
                    name: "len",
                    reason: "an index holds fewer than 2^32 - 1 nodes".into(),
                });
            }
        }
        let dim = self.params.dim;
        let first = {
            let mut fresh = self.store.fresh.write();
            let first = self.store.base_len + fresh.len() as u32;
            fresh.reserve(ids.len());
            let mut code = Vec::new();
            for (&id, v) in ids.iter().zip(vectors.chunks_exact(dim)) {
                let level = self.level_for(id);
                code.clear();
                self.params.vectors.encode_into(v, &mut code);
                let (kept, scale) = self.params.vectors.split_scale(&code);
                fresh.push(FreshNode {
                    // An int8 index keeps only the code (the caller holds the f32 vector).
                    vector: if self.params.vectors == VectorEncoding::Int8 {
                        Box::default()
                    } else {
                        v.into()
                    },
                    code: kept.into(),
                    scale,
                    ext: id,
                    level: level as u8,
                    deleted: AtomicBool::new(false),
                    links: Mutex::new(
                        (0..=level)
                            .map(|l| Vec::with_capacity(self.params.max_links(l)))
                            .collect(),
                    ),
                });
            }
            first
        };
        let mut map = self.store.fresh_ids.write();
        for (i, &id) in ids.iter().enumerate() {
            map.insert(id, first + i as u32);
        }
        Ok(first)
    }

    /// Level of a new node: ⌊-ln(U)·mL⌋ with U a hash of the seed and the id, so builds repeat.
    fn level_for(&self, id: u64) -> usize {
        let mut x = id ^ self.params.seed;
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^= x >> 31;
        let u = ((x >> 11) as f64 + 1.0) / (1u64 << 53) as f64; // (0, 1]
        ((-u.ln() * self.params.ml) as usize).min(MAX_LEVEL)
    }

    /// Connects `node`, whose vector is `q`, into the graph; returns what its level-0 search
    /// found, best first.
    fn link(&self, view: &View<'_>, node: u32, q: &[f32], s: &mut SearchScratch) -> Vec<Scored> {
        let sims = self.node_sim();
        let level = view.level(node);
        let Some((ep, top)) = self.entry_or_become(node, level) else {
            return Vec::new();
        };
        // The graph is linked on exact similarities, or on the codes of an int8 index.
        let scorer = Probe::of_vector(q, self.params.vectors, self.dot);
        let mut links = Vec::new();
        let mut cur = Scored {
            sim: scorer.sim(view, ep),
            node: ep,
        };
        for l in (level + 1..=top).rev() {
            cur = greedy(view, &scorer, cur, l, &mut links);
        }
        // First the node's own lists on every level, then the reverse links. Until a reverse
        // link exists no search can reach the node, so no search ever sees it with a lower
        // level still unlinked (a search that reached it on level 1 before its level-0 list
        // was set would stop there).
        let mut entry = vec![cur];
        let mut level0_found = false;
        let mut chosen_per_level = Vec::with_capacity(level.min(top) + 1);
        for l in (0..=level.min(top)).rev() {
            let found = search_layer(
                view,
                &scorer,
                &entry,
                self.params.ef_construction,
                l,
                s,
                |n| n != node && !view.is_deleted(n),
            );
            // A new node gets M links on every level (as in hnswlib); level-0 lists of existing
            // nodes may grow to M0 through reverse links before they are pruned.
            let mut chosen = select_neighbours(view, sims, &found, self.params.m);
            if chosen.is_empty() {
                // Only tombstones around (every other node here was deleted): link through
                // them. They stay traversable until the next save compacts them away, so the
                // new node stays reachable from the (possibly deleted) entry point.
                chosen = entry
                    .iter()
                    .map(|e| e.node)
                    .filter(|&n| n != node)
                    .take(self.params.m)
                    .collect();
            }
            view.with_links_mut(node, l, |ls| ls.clone_from(&chosen));
            chosen_per_level.push((l, chosen));
            // Level 0 comes last: `entry` is then what it found.
            level0_found = l == 0 && !found.is_empty();
            if !found.is_empty() {
                entry = found;
            }
        }
        for (l, chosen) in chosen_per_level {
            self.link_back(view, node, l, &chosen);
        }
        if level > top {
            let mut e = self.entry.write();
            if e.is_none_or(|(_, t)| level > t) {
                *e = Some((node, level));
            }
        }
        if level0_found {
            entry
        } else {
            Vec::new()
        }
    }

    /// Adds `node` to the level-`l` lists of its chosen neighbours.
    fn link_back(&self, view: &View<'_>, node: u32, l: usize, chosen: &[u32]) {
        let sims = self.node_sim();
        let max = self.params.max_links(l);
        let mut linked_back = false;
        for &nb in chosen {
            view.with_links_mut(nb, l, |ls| {
                if !ls.contains(&node) {
                    if ls.len() < max {
                        ls.push(node);
                    } else {
                        let ids = ls.iter().copied().chain(std::iter::once(node));
                        *ls = reselect(view, sims, nb, ids, max);
                    }
                }
                linked_back |= ls.contains(&node);
            });
        }
        // When every neighbour pruned the new node away (dense clusters of near-equal vectors
        // shadow each other in the heuristic), nothing would point at it and no search could
        // reach it: the nearest neighbour then trades its least similar link for it.
        if let (false, Some(&nearest)) = (linked_back, chosen.first()) {
            view.with_links_mut(nearest, l, |ls| {
                let pn = sims.probe(view, nearest);
                let worst = ls
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| (pn.sim(view, x), i))
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                if let Some((_, i)) = worst {
                    ls[i] = node;
                }
            });
        }
    }

    /// The current entry point, or `None` after making `node` the entry of an empty graph.
    fn entry_or_become(&self, node: u32, level: usize) -> Option<(u32, usize)> {
        if let Some(e) = *self.entry.read() {
            return Some(e);
        }
        let mut e = self.entry.write();
        match *e {
            Some(cur) => Some(cur),
            None => {
                *e = Some((node, level));
                None
            }
        }
    }
}
