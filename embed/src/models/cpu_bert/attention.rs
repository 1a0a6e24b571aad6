//! Multi-head self-attention over packed sequences: every sequence attends only to its own
//! tokens, so there is no padding and no mask, and each (sequence, head) pair is an
//! independent task on the rayon pool.

use rayon::prelude::*;

use super::kernels::softmax;
use super::simd::multiversion;

/// Sequences packed one after another: their lengths and the row each starts at.
#[derive(Debug, Clone)]
pub(crate) struct Packing {
    pub(crate) lens: Vec<usize>,
    pub(crate) starts: Vec<usize>,
    pub(crate) total: usize,
}

impl Packing {
    pub(crate) fn new(lens: Vec<usize>) -> Self {
        let mut starts = Vec::with_capacity(lens.len());
        let mut total = 0;
        for &l in &lens {
            starts.push(total);
            total += l;
        }
        Packing {
            lens,
            starts,
            total,
        }
    }
}

/// `ctx = softmax(Q Kᵀ / √d) V` per sequence and head. `qkv` is `total × 3·hidden` (the
/// query, key and value projections side by side); `ctx` is `total × hidden`. The pairs run
/// over the current rayon pool when `parallel`.
pub(crate) fn attend(
    qkv: &[f32],
    packing: &Packing,
    heads: usize,
    hidden: usize,
    ctx: &mut [f32],
    parallel: bool,
) {
    let d = hidden / heads;
    let items: Vec<(usize, usize)> = (0..packing.lens.len())
        .flat_map(|s| (0..heads).map(move |h| (s, h)))
        .collect();
    let one = |&(s, h): &(usize, usize)| {
        let rows = &qkv[packing.starts[s] * 3 * hidden..][..packing.lens[s] * 3 * hidden];
        head(rows, packing.lens[s], h * d, d, hidden)
    };
    let outs: Vec<Vec<f32>> = if parallel {
        items.par_iter().map(one).collect()
    } else {
        items.iter().map(one).collect()
    };
    for (&(s, h), out) in items.iter().zip(&outs) {
        for (i, o) in out.chunks_exact(d).enumerate() {
            let row = (packing.starts[s] + i) * hidden + h * d;
            ctx[row..row + d].copy_from_slice(o);
        }
    }
}

/// Query rows computed together: their accumulators stay in registers and share each load.
const QUERIES: usize = 4;
/// Keys per block of scores (two AVX2 registers per query row).
const KEYS: usize = 16;

multiversion! {
    /// One head of one sequence: `rows` is its `len × 3·hidden` slice of the projections, the
    /// head's columns start at `col`, `d` is a multiple of 8. Returns `len × d`.
    fn head(rows: &[f32], len: usize, col: usize, d: usize, hidden: usize) -> Vec<f32> {
        let width = 3 * hidden;
        let scale = 1.0 / (d as f32).sqrt();
        // Keys transposed (d × padded len, zeros past len): a block of KEYS scores is then d
        // contiguous loads, each shared by QUERIES query rows.
        let padded = len.div_ceil(KEYS) * KEYS;
        let mut keys = vec![0f32; d * padded];
        for j in 0..len {
            let k = &rows[j * width + hidden + col..][..d];
            for (c, &v) in k.iter().enumerate() {
                keys[c * padded + j] = v;
            }
        }
        let mut out = vec![0f32; len * d];
        let mut scores = vec![0f32; QUERIES * padded];
        // The block's query rows, scaled once, column-major (d × QUERIES): each column's four
        // values are then one load apart from the next column's.
        let mut q = vec![0f32; d * QUERIES];
        for i0 in (0..len).step_by(QUERIES) {
            for r in 0..QUERIES {
                // Past the last row, repeat it: computed, then not written.
                let i = (i0 + r).min(len - 1);
                for (c, &x) in rows[i * width + col..][..d].iter().enumerate() {
                    q[c * QUERIES + r] = x * scale;
                }
            }
            for j0 in (0..padded).step_by(KEYS) {
                let mut acc = [[0f32; KEYS]; QUERIES];
                for c in 0..d {
                    let k = &keys[c * padded + j0..][..KEYS];
                    let qc = &q[c * QUERIES..][..QUERIES];
                    for (a, &x) in acc.iter_mut().zip(qc) {
                        for (a, &k) in a.iter_mut().zip(k) {
                            *a = x.mul_add(k, *a);
                        }
                    }
                }
                for (r, a) in acc.iter().enumerate() {
                    scores[r * padded + j0..][..KEYS].copy_from_slice(a);
                }
            }
            for r in 0..QUERIES.min(len - i0) {
                softmax(&mut scores[r * padded..r * padded + len]);
            }
            // Sixteen columns at a time where the head's width allows (one AVX-512 register
            // per query row), else eight.
            let block = &mut out[i0 * d..][..(len - i0).min(QUERIES) * d];
            if d.is_multiple_of(16) {
                weigh_values::<16>(rows, &scores, padded, len, col, d, hidden, block);
            } else {
                weigh_values::<8>(rows, &scores, padded, len, col, d, hidden, block);
            }
        }
        out
    }
}

/// `out = P V` for up to [`QUERIES`] query rows: `scores` holds their softmax rows (`padded`
/// apart), `out` their `d` columns each, filled `W` columns at a time (`W` divides `d`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn weigh_values<const W: usize>(
    rows: &[f32],
    scores: &[f32],
    padded: usize,
    len: usize,
    col: usize,
    d: usize,
    hidden: usize,
    out: &mut [f32],
) {
    let width = 3 * hidden;
    let queries = out.len() / d;
    for c0 in (0..d).step_by(W) {
        let mut ctx = [[0f32; W]; QUERIES];
        for j in 0..len {
            let v = &rows[j * width + 2 * hidden + col + c0..][..W];
            for (r, a) in ctx.iter_mut().enumerate() {
                let p = scores[r * padded + j];
                for (a, &v) in a.iter_mut().zip(v) {
                    *a = p.mul_add(v, *a);
                }
            }
        }
        for (r, a) in ctx.iter().enumerate().take(queries) {
            out[r * d + c0..][..W].copy_from_slice(a);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Straight from the definition, in f64.
    fn reference(qkv: &[f32], len: usize, heads: usize, hidden: usize) -> Vec<f64> {
        let d = hidden / heads;
        let at = |t: usize, c: usize| f64::from(qkv[t * 3 * hidden + c]);
        let mut out = vec![0.0; len * hidden];
        for h in 0..heads {
            for i in 0..len {
                let s: Vec<f64> = (0..len)
                    .map(|j| {
                        (0..d)
                            .map(|c| at(i, h * d + c) * at(j, hidden + h * d + c))
                            .sum::<f64>()
                            / (d as f64).sqrt()
                    })
                    .collect();
                let m = s.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let e: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
                let z: f64 = e.iter().sum();
                for c in 0..d {
                    out[i * hidden + h * d + c] = (0..len)
                        .map(|j| e[j] / z * at(j, 2 * hidden + h * d + c))
                        .sum();
                }
            }
        }
        out
    }

    #[test]
    fn packed_sequences_attend_only_to_themselves() {
        for (heads, hidden) in [(2, 32), (3, 24)] {
            check(heads, hidden, vec![4, 1, 6, 19, 33]);
        }
    }

    fn check(heads: usize, hidden: usize, lens: Vec<usize>) {
        let packing = Packing::new(lens.clone());
        let qkv: Vec<f32> = (0..packing.total * 3 * hidden)
            .map(|i| ((i as f32) * 0.731).sin())
            .collect();
        let mut ctx = vec![f32::NAN; packing.total * hidden];
        attend(&qkv, &packing, heads, hidden, &mut ctx, true);
        for (s, &len) in lens.iter().enumerate() {
            let start = packing.starts[s];
            let own = &qkv[start * 3 * hidden..(start + len) * 3 * hidden];
            let want = reference(own, len, heads, hidden);
            for (got, want) in ctx[start * hidden..(start + len) * hidden]
                .iter()
                .zip(&want)
            {
                assert!((f64::from(*got) - want).abs() < 1e-5, "{got} vs {want}");
            }
        }
    }
}
