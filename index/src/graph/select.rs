//! Neighbour selection: the heuristic of Malkov & Yashunin, Algorithm 4, without
//! `keepPrunedConnections` (as in hnswlib). A candidate is kept only if it is closer to the base
//! node than to every neighbour kept so far, which spreads links across directions and keeps the
//! graph navigable on clustered data. When the heuristic keeps fewer than `max / 2` (near-
//! duplicate vectors all shadow each other), the best pruned candidates fill up to `max / 2`, so
//! no node is left with one or two links. Limitation shared with every HNSW: more than `max / 2`
//! *identical* vectors shadow each other completely, and the newest copies can become
//! unreachable; callers that may store exact duplicates should merge them first.

use crate::graph::store::View;
use crate::search::scratch::Scored;
use crate::simd::DotFn;

/// Picks at most `max` of `candidates` (sorted best first, similarities to the base node).
pub(crate) fn select_neighbours(
    view: &View<'_>,
    dot: DotFn,
    candidates: &[Scored],
    max: usize,
) -> Vec<u32> {
    let mut kept: Vec<u32> = Vec::with_capacity(max);
    let mut pruned: Vec<u32> = Vec::new();
    for &c in candidates {
        if kept.len() >= max {
            break;
        }
        let vc = view.vector(c.node);
        if kept.iter().all(|&k| dot(vc, view.vector(k)) < c.sim) {
            kept.push(c.node);
        } else {
            pruned.push(c.node);
        }
    }
    let floor = max / 2;
    if kept.len() < floor {
        kept.extend(pruned.into_iter().take(floor - kept.len()));
    }
    kept
}

/// Re-selects the neighbours of `base` from `ids` (its current links plus newcomers).
pub(crate) fn reselect(
    view: &View<'_>,
    dot: DotFn,
    base: u32,
    ids: impl Iterator<Item = u32>,
    max: usize,
) -> Vec<u32> {
    let vb = view.vector(base);
    let mut cands: Vec<Scored> = ids
        .map(|node| Scored {
            sim: dot(vb, view.vector(node)),
            node,
        })
        .collect();
    cands.sort_unstable_by(|a, b| b.cmp(a));
    cands.dedup_by_key(|c| c.node);
    select_neighbours(view, dot, &cands, max)
}
