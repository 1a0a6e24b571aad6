//! Search within one layer of the graph (Malkov & Yashunin, Algorithm 2), and the greedy descent
//! through the upper layers.
//!
//! Variants:
//! - [`greedy`]: ef = 1 walk on layers above the target, used by inserts and searches;
//! - [`search_layer`]: beam search (inserts on every level, unfiltered searches on level 0);
//! - [`search_layer_filtered`]: filtered search on level 0. Rejected nodes are traversed but
//!   never enter the results; the candidate bound stays open until `ef` accepted nodes are
//!   found (as hnswlib does), so the beam widens automatically when the filter is selective.
//!
//! Both run one loop over a [`Beam`]; they differ in how it holds the candidates.

use super::beam::Beam;
use super::scorer::Scorer;
use super::{
    scored::Scored,
    scratch::{SearchScratch, Visited},
};
use crate::graph::store::View;

/// Greedy walk on `level` from `cur` towards the query; returns the local best.
pub(crate) fn greedy(
    view: &View<'_>,
    scorer: &impl Scorer,
    mut cur: Scored,
    level: usize,
    links: &mut Vec<u32>,
) -> Scored {
    loop {
        let mut changed = false;
        view.links_into(cur.node, level, links);
        for &nb in links.iter() {
            let sim = scorer.sim(view, nb);
            if sim > cur.sim {
                cur = Scored { sim, node: nb };
                changed = true;
            }
        }
        if !changed {
            return cur;
        }
    }
}

/// Beam search of width `ef` on `level`, starting at `entry`, for a search that rejects few
/// nodes (unfiltered, or graph construction): the beam is the sorted
/// [`Pool`](super::beam::Pool) up to [`POOL_MAX_EF`], the two heaps above. Returns the
/// accepted nodes found, best first.
pub(crate) fn search_layer(
    view: &View<'_>,
    scorer: &impl Scorer,
    entry: &[Scored],
    ef: usize,
    level: usize,
    s: &mut SearchScratch,
    accept: impl Fn(u32) -> bool,
) -> Vec<Scored> {
    search_in_beam(
        view,
        scorer,
        entry,
        (ef, level),
        s,
        ef <= POOL_MAX_EF,
        accept,
    )
}

/// The widest beam kept as a sorted pool: an insert moves up to `ef` entries where a heap
/// sifts through `log ef` levels. On 100k real-text vectors the pool was 1.1-1.2x as fast as
/// the heaps at ef 512, as fast at ef 1,024, and 0.9x at ef 4,096.
const POOL_MAX_EF: usize = 1024;

/// [`search_layer`] for a filtered search, whose beam is the two
/// [`Heaps`](super::beam::Heaps): many rejected candidates come before `ef` nodes are
/// accepted.
pub(crate) fn search_layer_filtered(
    view: &View<'_>,
    scorer: &impl Scorer,
    entry: &[Scored],
    ef: usize,
    s: &mut SearchScratch,
    accept: impl Fn(u32) -> bool,
) -> Vec<Scored> {
    search_in_beam(view, scorer, entry, (ef, 0), s, false, accept)
}

/// [`beam_search`] with the scratch's sorted pool (`pooled`) or its two heaps as the beam.
fn search_in_beam(
    view: &View<'_>,
    scorer: &impl Scorer,
    entry: &[Scored],
    at: (usize, usize),
    s: &mut SearchScratch,
    pooled: bool,
    accept: impl Fn(u32) -> bool,
) -> Vec<Scored> {
    let SearchScratch {
        visited,
        pool,
        heaps,
        links,
    } = s;
    if pooled {
        beam_search(view, scorer, entry, at, visited, links, pool, accept)
    } else {
        beam_search(view, scorer, entry, at, visited, links, heaps, accept)
    }
}

/// Neighbours scored before any is offered to the beam: the scores of a chunk have no branch
/// between them, so their loads and reductions overlap (1.01-1.03x the queries per second on
/// 100k real-text vectors).
const SCORE_CHUNK: usize = 32;

/// The layer search (Malkov & Yashunin, Algorithm 2) over any [`Beam`].
#[allow(clippy::too_many_arguments)] // the hot path's parts, split borrows of one scratch
fn beam_search(
    view: &View<'_>,
    scorer: &impl Scorer,
    entry: &[Scored],
    (ef, level): (usize, usize),
    visited: &mut Visited,
    links: &mut Vec<u32>,
    beam: &mut impl Beam,
    accept: impl Fn(u32) -> bool,
) -> Vec<Scored> {
    visited.begin(view.len() as usize);
    beam.begin(ef);
    for &e in entry {
        if visited.visit(e.node) && beam.admits(e.sim) {
            beam.offer(e, accept(e.node));
        }
    }
    while let Some(c) = beam.next() {
        view.links_into(c.node, level, links);
        // The likely next candidate's links load while this one's neighbours are scored (a
        // miss per visited node otherwise: 1.1-1.2x the QPS on 100k real-text vectors). Its
        // links were prefetched when it was admitted too, but in a wide beam it waits long
        // enough to lose them: without this, ef 128 ran 0.91-1.02x.
        if let (0, Some(next)) = (level, beam.peek()) {
            view.prefetch_links0(next);
        }
        visited.prefetch(links);
        links.retain(|&nb| visited.visit(nb));
        for &nb in links.iter() {
            scorer.prefetch(view, nb);
        }
        for chunk in links.chunks(SCORE_CHUNK) {
            let mut sims = [0f32; SCORE_CHUNK];
            for (sim, &nb) in sims.iter_mut().zip(chunk) {
                *sim = scorer.sim(view, nb);
            }
            for (&sim, &nb) in sims.iter().zip(chunk) {
                if beam.admits(sim) {
                    // A node the beam admits is likely expanded soon: its links start loading
                    // now (1.01-1.02x the queries per second on 100k real-text vectors).
                    if level == 0 {
                        view.prefetch_links0(nb);
                    }
                    beam.offer(Scored { sim, node: nb }, accept(nb));
                }
            }
        }
    }
    beam.results()
}
