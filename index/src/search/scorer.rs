//! How a walk through the graph scores a node against its query: exactly on the f32 vectors
//! (f32 indexes; inserts into bf16 ones), on bf16 codes whose candidates [`rescore`] then orders
//! exactly, or on int8 codes with a 16-bit query (int8 indexes, which keep nothing else).
//! [`Probe`] is what graph construction uses: the scorer of the index's encoding for a vector
//! or for a stored node.

use super::scratch::Scored;
use crate::encoding::{code_as_query, int8_codes, int8_scale, quantize_query, VectorEncoding};
use crate::graph::store::View;
use crate::simd::bf16::DotBf16Fn;
use crate::simd::int8::DotI8Fn;
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

/// A query at 16-bit precision against int8 codes (see `encoding::quantize_query`).
pub(crate) struct Int8 {
    q: Vec<i16>,
    scale: f32,
    dot: DotI8Fn,
}

impl Int8 {
    pub(crate) fn new(q: &[f32]) -> Self {
        let (scale, q) = quantize_query(q);
        Int8 {
            q,
            scale,
            dot: crate::simd::int8::kernel().1,
        }
    }

    /// A stored code as the query (graph construction comparing two nodes).
    pub(crate) fn of_code(code: &[u8]) -> Self {
        let (scale, q) = code_as_query(code);
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
        let code = view.code(node);
        (self.dot)(&self.q, int8_codes(code)) as f32 * self.scale * int8_scale(code)
    }
    /// Every line of the code (388 bytes at 384-d span 7 or 8 lines). Measured on 100k real-text vectors
    /// (`ann-bench --vectors int8`): 1.13-1.2x the QPS of prefetching the first 4 lines.
    #[inline]
    fn prefetch(&self, view: &View<'_>, node: u32) {
        crate::simd::prefetch_span(view.code(node));
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
            VectorEncoding::Int8 => Probe::Int8(Int8::of_code(view.code(node))),
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

/// The best candidates of `found` (sorted best first by approximate similarity) re-scored
/// exactly and sorted best first; the rest dropped.
pub(crate) fn rescore(
    view: &View<'_>,
    q: &[f32],
    dot: DotFn,
    mut found: Vec<Scored>,
    k: usize,
) -> Vec<Scored> {
    found.truncate(rescore_len(k));
    for sc in found.iter_mut() {
        sc.sim = dot(q, view.vector(sc.node));
    }
    found.sort_unstable_by(|a, b| b.cmp(a));
    found
}
