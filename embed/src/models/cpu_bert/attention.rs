//! Multi-head self-attention over packed sequences: every sequence attends only to its own
//! tokens, so there is no padding and no mask, and each (sequence, head) pair is an
//! independent task on the rayon pool that writes its output in place. Heads a multiple of
//! 16 wide run `attention_avx512.rs` where the CPU has AVX-512.
#![allow(unsafe_code)]

use rayon::prelude::*;

#[cfg(all(target_arch = "x86_64", feature = "avx512"))]
use super::attention_avx512;
use super::kernels::{madd, softmax};
use super::panels::Dst;
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
/// over the current rayon pool when `parallel`, each writing its head's columns of its
/// sequence's rows of `ctx` in place.
pub(crate) fn attend(
    qkv: &[f32],
    packing: &Packing,
    heads: usize,
    hidden: usize,
    ctx: &mut [f32],
    parallel: bool,
) {
    attend_with(qkv, packing, heads, hidden, ctx, parallel, Kernel::best());
}

/// Which kernel runs a head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kernel {
    /// [`head`]: plain loops, compiled for the widest vectors the CPU has.
    Portable,
    /// `attention_avx512::head`: heads a multiple of 16 wide on a CPU with AVX-512 F.
    #[cfg(all(target_arch = "x86_64", feature = "avx512"))]
    Avx512,
}

impl Kernel {
    fn best() -> Kernel {
        #[cfg(all(target_arch = "x86_64", feature = "avx512"))]
        if super::simd::allows(super::simd::Tier::Avx512)
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("fma")
        {
            return Kernel::Avx512;
        }
        Kernel::Portable
    }
}

/// [`attend`] with the kernel chosen by the caller.
fn attend_with(
    qkv: &[f32],
    packing: &Packing,
    heads: usize,
    hidden: usize,
    ctx: &mut [f32],
    parallel: bool,
    kernel: Kernel,
) {
    assert!(heads > 0 && hidden.is_multiple_of(heads));
    assert_eq!(
        qkv.len(),
        packing.total * 3 * hidden,
        "qkv is not total × 3·hidden"
    );
    assert_eq!(
        ctx.len(),
        packing.total * hidden,
        "ctx is not total × hidden"
    );
    let d = hidden / heads;
    let dst = Dst(ctx.as_mut_ptr());
    let one = |(s, h): (usize, usize)| {
        let (first_row, len) = (packing.starts[s], packing.lens[s]);
        let rows = &qkv[first_row * 3 * hidden..][..len * 3 * hidden];
        #[cfg(all(target_arch = "x86_64", feature = "avx512"))]
        if kernel == Kernel::Avx512 && d.is_multiple_of(16) {
            let at = attention_avx512::Head {
                rows,
                len,
                col: h * d,
                d,
                hidden,
                ctx: dst,
                first_row,
                total: packing.total,
            };
            // SAFETY: `Kernel::Avx512` is only chosen where AVX-512 F, BW and VL and FMA were
            // detected; `ctx` holds total × hidden floats (asserted above); sequence s's rows
            // first_row..first_row + len ≤ total (`Packing`) and head h's columns
            // h·d..(h + 1)·d ≤ hidden are written by this pair alone, while this function
            // holds the unique borrow of `ctx`; `rows` is len × 3·hidden.
            unsafe { attention_avx512::head(&at) };
            return;
        }
        let out = head(rows, len, h * d, d, hidden);
        for (i, o) in out.chunks_exact(d).enumerate() {
            // SAFETY: as above: row first_row + i < total, columns h·d..(h + 1)·d ≤ hidden,
            // this pair's alone; `o` is a separate buffer.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    o.as_ptr(),
                    dst.at((first_row + i) * hidden + h * d),
                    d,
                );
            }
        }
    };
    #[cfg(not(all(target_arch = "x86_64", feature = "avx512")))]
    let _ = kernel;
    let pairs = (0..packing.lens.len()).flat_map(|s| (0..heads).map(move |h| (s, h)));
    if parallel {
        pairs.collect::<Vec<_>>().into_par_iter().for_each(one);
    } else {
        pairs.for_each(one);
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
                            *a = madd(x, k, *a);
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
                    *a = madd(p, v, *a);
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

    fn kernels() -> Vec<Kernel> {
        let mut all = vec![Kernel::Portable];
        if Kernel::best() != Kernel::Portable {
            all.push(Kernel::best());
        }
        all
    }

    #[test]
    fn packed_sequences_attend_only_to_themselves() {
        for kernel in kernels() {
            for (heads, hidden) in [(2, 32), (3, 24), (2, 64), (2, 128)] {
                check(heads, hidden, vec![4, 1, 6, 19, 33], kernel);
            }
        }
    }

    /// Lengths on and around every block edge (8, 16 and 32 keys; 4 and 8 query rows), at
    /// head widths of 32 (MiniLM), 64 (BERT-base), 48 and 16, with every kernel.
    #[test]
    fn every_block_edge_is_exact() {
        for kernel in kernels() {
            for (heads, hidden) in [(2, 64), (1, 64), (3, 96), (3, 144), (4, 64)] {
                let lens = vec![7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 65];
                check(heads, hidden, lens, kernel);
            }
            check(2, 64, vec![200], kernel);
        }
    }

    fn check(heads: usize, hidden: usize, lens: Vec<usize>, kernel: Kernel) {
        let packing = Packing::new(lens.clone());
        let qkv: Vec<f32> = (0..packing.total * 3 * hidden)
            .map(|i| ((i as f32) * 0.731).sin())
            .collect();
        let mut ctx = vec![f32::NAN; packing.total * hidden];
        attend_with(&qkv, &packing, heads, hidden, &mut ctx, true, kernel);
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
