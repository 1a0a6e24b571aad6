//! How a walk through the graph scores a node against its query: exactly on the f32 vectors
//! (f32 indexes; inserts into bf16 ones), on bf16 codes whose candidates [`rescore`] then orders
//! exactly, or, in an int8 index (which keeps nothing else), on the high planes of its codes
//! ([`Nibble`]) whose candidates [`rescore`] then orders on the whole codes with a 16-bit query
//! ([`Int8`]).
//! [`Probe`] is what graph construction uses: the scorer of the index's encoding for a vector
//! or for a stored node.

use super::scored::Scored;
use crate::encoding::{
    code_as_query, int8_high, int8_planes_len, quantize_query, quantize_query_i8, VectorEncoding,
};
use crate::graph::store::View;
use crate::simd::bf16::DotBf16Fn;
use crate::simd::int8::DotI8Fn;
use crate::simd::nibble::DotNibbleFn;
use crate::simd::{prefetch, prefetch_bytes_lines, DotFn};

/// Scores nodes against one query during a graph walk.
pub(crate) trait Scorer {
    /// Similarity of `node` to the query (exact or approximate).
    fn sim(&self, view: &View<'_>, node: u32) -> f32;
    /// Starts loading what [`Scorer::sim`] will read for `node`.
    fn prefetch(&self, view: &View<'_>, node: u32);
}

/// Exact inner product with the f32 vectors.
pub(crate) struct Exact<'q> {
    pub q: &'q [f32],
    pub dot: DotFn,
}

impl Scorer for Exact<'_> {
    #[inline]
    fn sim(&self, view: &View<'_>, node: u32) -> f32 {
        (self.dot)(self.q, view.vector(node))
    }
    #[inline]
    fn prefetch(&self, view: &View<'_>, node: u32) {
        prefetch(view.vector(node));
    }
}

/// The query (as f32 and rounded to bf16) against bf16 codes.
pub(crate) struct Bf16<'q> {
    q: &'q [f32],
    q_bf16: Vec<u8>,
    dot: DotBf16Fn,
}

impl<'q> Bf16<'q> {
    pub(crate) fn new(q: &'q [f32]) -> Self {
        let mut q_bf16 = Vec::with_capacity(2 * q.len());
        VectorEncoding::Bf16.encode_into(q, &mut q_bf16);
        Bf16 {
            q,
            q_bf16,
            dot: crate::simd::bf16::kernel().1,
        }
    }
}

impl Scorer for Bf16<'_> {
    #[inline]
    fn sim(&self, view: &View<'_>, node: u32) -> f32 {
        (self.dot)(self.q, &self.q_bf16, view.code(node))
    }
    #[inline]
    fn prefetch(&self, view: &View<'_>, node: u32) {
        prefetch_bytes_lines(view.code(node), 4);
    }
}

/// A query at 16-bit precision against int8 codes, both planes (see `encoding::quantize_query`).
pub(crate) struct Int8 {
    q: Vec<i16>,
    scale: f32,
    dot: DotI8Fn,
}

impl Int8 {
    pub(crate) fn new(q: &[f32]) -> Self {
        let (scale, mut q16) = quantize_query(q);
        q16.resize(int8_planes_len(q.len()), 0);
        Int8 {
            q: q16,
            scale,
            dot: crate::simd::int8::kernel().1,
        }
    }

    /// A stored node's code as the query (graph construction comparing two nodes).
    pub(crate) fn of_node(view: &View<'_>, node: u32) -> Self {
        let (scale, q) = code_as_query(view.code(node), view.scale(node));
        Int8 {
            q,
            scale,
            dot: crate::simd::int8::kernel().1,
        }
    }
}

impl Scorer for Int8 {
    #[inline]
    fn sim(&self, view: &View<'_>, node: u32) -> f32 {
        (self.dot)(&self.q, view.code(node)) as f32 * self.scale * view.scale(node)
    }
    /// Every line of both planes (384 bytes at 384-d: 6 lines) and the scale.
    #[inline]
    fn prefetch(&self, view: &View<'_>, node: u32) {
        crate::simd::prefetch_span(view.code(node));
        view.prefetch_scale(node);
    }
}

/// An 8-bit query against the high planes of int8 codes: what a graph walk on an int8 index
/// scores nodes by (half the bytes of the whole code). A code value `c` is `16·h + l − 128`
/// with its low nibble `l` unread, taken as its mean 7.5: `c ≈ 16·h − 120.5`, so
/// `Σ q·c ≈ 16·Σ q·h − 120.5·Σ q`. The walk's best candidates are then re-scored on the whole
/// code ([`rescore`] with [`Int8`]): all of them, so a search finds what a walk on the whole
/// codes would once its beam is wide enough (re-scoring only the best 2k capped recall on
/// clustered test vectors, and re-scoring all costs 2-5% on real ones). Measured on 100k
/// real-text vectors (`ann-bench --vectors int8`): recall@10 at each ef within 0.001 of
/// walking on the whole codes, at 1.15-1.2x the queries per second. Clustered vectors with near
/// ties lose more at a narrow beam (the index's `encodings` tests).
pub(crate) struct Nibble {
    q: Vec<i8>,
    /// 16 · the query's scale.
    scale: f32,
    /// 120.5 / 16 · Σ q (the unread low nibbles' share, in units of the high one).
    offset: f32,
    dot: DotNibbleFn,
}

impl Nibble {
    pub(crate) fn new(q: &[f32]) -> Self {
        let (scale, q8) = quantize_query_i8(q, int8_planes_len(q.len()));
        let sum: i32 = q8.iter().map(|&x| i32::from(x)).sum();
        Nibble {
            q: q8,
            scale: 16.0 * scale,
            offset: 120.5 / 16.0 * sum as f32,
            dot: crate::simd::nibble::kernel().1,
        }
    }
}

impl Scorer for Nibble {
    #[inline]
    fn sim(&self, view: &View<'_>, node: u32) -> f32 {
        let d = (self.dot)(&self.q, int8_high(view.code(node)));
        (d as f32 - self.offset) * self.scale * view.scale(node)
    }
    /// Every line of the high planes (3 at 384-d) and the scale.
    #[inline]
    fn prefetch(&self, view: &View<'_>, node: u32) {
        crate::simd::prefetch_span(int8_high(view.code(node)));
        view.prefetch_scale(node);
    }
}

/// How graph construction (insert, neighbour selection, repair) and exact scans score nodes
/// against one vector: exactly on the f32 vectors, or on the codes of an int8 index, which
/// keeps no f32 vectors.
pub(crate) enum Probe<'q> {
    Exact(Exact<'q>),
    Int8(Int8),
}

impl<'q> Probe<'q> {
    /// The probe for vector `q` in an index of `encoding`.
    pub(crate) fn of_vector(q: &'q [f32], encoding: VectorEncoding, dot: DotFn) -> Self {
        match encoding {
            VectorEncoding::Int8 => Probe::Int8(Int8::new(q)),
            VectorEncoding::F32 | VectorEncoding::Bf16 => Probe::Exact(Exact { q, dot }),
        }
    }

    /// The probe for stored `node`.
    pub(crate) fn of_node(
        view: &'q View<'_>,
        node: u32,
        encoding: VectorEncoding,
        dot: DotFn,
    ) -> Self {
        match encoding {
            VectorEncoding::Int8 => Probe::Int8(Int8::of_node(view, node)),
            VectorEncoding::F32 | VectorEncoding::Bf16 => Probe::Exact(Exact {
                q: view.vector(node),
                dot,
            }),
        }
    }
}

impl Scorer for Probe<'_> {
    #[inline]
    fn sim(&self, view: &View<'_>, node: u32) -> f32 {
        match self {
            Probe::Exact(e) => e.sim(view, node),
            Probe::Int8(i) => i.sim(view, node),
        }
    }
    #[inline]
    fn prefetch(&self, view: &View<'_>, node: u32) {
        match self {
            Probe::Exact(e) => e.prefetch(view, node),
            Probe::Int8(i) => i.prefetch(view, node),
        }
    }
}

/// Candidates of a compressed search re-scored exactly: `RESCORE_FACTOR · k`, at least
/// `k + RESCORE_EXTRA`. Measured on 20k real-text MiniLM vectors (`ann-bench --vectors int8`):
/// re-scoring 2k keeps recall@10 within 0.0005 of re-scoring all `ef` candidates at ef 16–128,
/// and is 8–15% faster; re-scoring only `k` loses up to 0.006.
const RESCORE_FACTOR: usize = 2;
const RESCORE_EXTRA: usize = 8;

/// How many of a compressed search's best candidates are re-scored exactly for `k` hits.
pub(crate) fn rescore_len(k: usize) -> usize {
    (RESCORE_FACTOR * k).max(k + RESCORE_EXTRA)
}

/// The best `keep` candidates of `found` (sorted best first by approximate similarity)
/// re-scored by `exact`, and the best `k` of them, best first. Every candidate's data is
/// prefetched before the first is scored.
pub(crate) fn rescore(
    view: &View<'_>,
    exact: &impl Scorer,
    mut found: Vec<Scored>,
    keep: usize,
    k: usize,
) -> Vec<Scored> {
    found.truncate(keep);
    for sc in &found {
        exact.prefetch(view, sc.node);
    }
    for sc in found.iter_mut() {
        sc.sim = exact.sim(view, sc.node);
    }
    let best_first = |a: &Scored, b: &Scored| b.cmp(a);
    if k < found.len() {
        // Only the top k are sorted (a search keeps ef candidates, often several times k).
        found.select_nth_unstable_by(k, best_first);
        found.truncate(k);
    }
    found.sort_unstable_by(best_first);
    found
}
