//! Neighbour selection: the heuristic of Malkov & Yashunin, Algorithm 4, without
//! `keepPrunedConnections` (as in hnswlib). A candidate is kept only if it is closer to the base
//! node than to every neighbour kept so far, which spreads links across directions and keeps the
//! graph navigable on clustered data. When the heuristic keeps fewer than `max / 2` (near-
//! duplicate vectors all shadow each other), the best pruned candidates fill up to `max / 2`, so
//! no node is left with one or two links. Limitation shared with every HNSW: more than `max / 2`
//! *identical* vectors shadow each other completely, and the newest copies can become
//! unreachable; callers that may store exact duplicates should merge them first.

use crate::encoding::VectorEncoding;
use crate::graph::store::View;
use crate::search::scored::Scored;
use crate::search::scorer::{Probe, Scorer};
use crate::simd::DotFn;

/// How construction compares two stored nodes: the index's encoding and its f32 kernel.
#[derive(Clone, Copy)]
pub(crate) struct NodeSim {
    pub encoding: VectorEncoding,
    pub dot: DotFn,
}

impl NodeSim {
    /// `node` as a probe for comparing it with others.
    pub(crate) fn probe<'v>(self, view: &'v View<'_>, node: u32) -> Probe<'v> {
        Probe::of_node(view, node, self.encoding, self.dot)
    }
}

/// Picks at most `max` of `candidates` (sorted best first, similarities to the base node).
pub(crate) fn select_neighbours(
    view: &View<'_>,
    sims: NodeSim,
    candidates: &[Scored],
    max: usize,
) -> Vec<u32> {
    let mut kept: Vec<u32> = Vec::with_capacity(max);
    let mut pruned: Vec<u32> = Vec::new();
    for &c in candidates {
        if kept.len() >= max {
            break;
        }
        // The first candidate is always kept: no probe (an int8 one allocates) to make for it.
        let closer_to_base = |c: Scored| {
            let pc = sims.probe(view, c.node);
            kept.iter().all(|&k| pc.sim(view, k) < c.sim)
        };
        if kept.is_empty() || closer_to_base(c) {
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
    sims: NodeSim,
    base: u32,
    ids: impl Iterator<Item = u32>,
    max: usize,
) -> Vec<u32> {
    let pb = sims.probe(view, base);
    let mut cands: Vec<Scored> = ids
        .map(|node| Scored {
            sim: pb.sim(view, node),
            node,
        })
        .collect();
    cands.sort_unstable_by(|a, b| b.cmp(a));
    cands.dedup_by_key(|c| c.node);
    select_neighbours(view, sims, &cands, max)
}
