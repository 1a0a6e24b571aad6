//! One attention head in AVX-512 intrinsics, for heads whose width is a multiple of 16.
//!
//! The portable kernel (`attention.rs`, compiled for AVX-512 by `multiversion!`) keeps a block
//! of 4 query rows × 16 keys: 4 accumulators, each a chain of dependent multiply-adds, so the
//! two FMA units wait on the 4-cycle latency about half the time. With 32 registers a block
//! can hold 8 query rows × 32 keys (16 accumulators) and, for the weighted values, 8 rows × 32
//! columns; the compiler does not keep a block that size in registers from plain loops, so it
//! is written here with intrinsics. Each key (or value) load then serves 8 multiply-adds and
//! each broadcast query (or probability) 2.
#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::panels::Dst;

/// Query rows per block.
const Q: usize = 8;
/// Floats per register.
const L: usize = 16;

/// One (sequence, head) pair: `rows` is the sequence's `len × 3·hidden` slice of the
/// projections and the head's `d` columns (a multiple of 16) start at `col`. Its output goes
/// to rows `first_row..first_row + len`, columns `col..col + d` of `ctx`, `hidden` wide and
/// `total` rows long.
pub(super) struct Head<'a> {
    pub(super) rows: &'a [f32],
    pub(super) len: usize,
    pub(super) col: usize,
    pub(super) d: usize,
    pub(super) hidden: usize,
    pub(super) ctx: Dst,
    pub(super) first_row: usize,
    pub(super) total: usize,
}

/// `ctx = softmax(Q Kᵀ / √d) V` for one head of one sequence, written in place.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VL and FMA (what `attention::Kernel::best` detects).
/// `at.ctx` must point at `at.total × at.hidden` floats that only this call writes in rows
/// `first_row..first_row + len`, columns `col..col + d`, with `first_row + len ≤ total`,
/// `col + d ≤ hidden`, and `rows.len() = len × 3·hidden`.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx2,fma")]
pub(super) unsafe fn head(at: &Head) {
    let Head {
        rows,
        len,
        col,
        d,
        hidden,
        ..
    } = *at;
    assert!(d.is_multiple_of(L) && d > 0 && col + d <= hidden);
    assert_eq!(rows.len(), len * 3 * hidden);
    assert!(at.first_row + len <= at.total);
    if len == 0 {
        return;
    }
    let scale = 1.0 / (d as f32).sqrt();
    // Keys transposed (d × padded, zeros past len): a block of scores is then d pairs of
    // contiguous loads.
    let padded = len.div_ceil(L) * L;
    let keys = gathered_keys(rows, len, col, d, hidden, padded);
    // Scores in chunks of 16 keys: keys 16b .. 16b + 16 of row r at `chunk(b, r)`, so the 8
    // rows' scores of one key are 16 floats apart (fixed offsets from one address).
    let mut scores = vec![0f32; Q * padded];
    let mut inv = [0f32; Q];
    for i0 in (0..len).step_by(Q) {
        // The block's query rows, read in place (past len the last row repeated: computed,
        // then not written).
        let mut q: [&[f32]; Q] = [&[]; Q];
        for (r, q) in q.iter_mut().enumerate() {
            let i = (i0 + r).min(len - 1);
            *q = &rows[i * 3 * hidden + col..][..d];
        }
        let mut j0 = 0;
        while j0 + 2 * L <= padded {
            // SAFETY: AVX-512 F is enabled on this function; the callee's slices are checked.
            unsafe { score_block::<2>(&keys, &q, scale, padded, j0, &mut scores) };
            j0 += 2 * L;
        }
        if j0 < padded {
            // SAFETY: as above.
            unsafe { score_block::<1>(&keys, &q, scale, padded, j0, &mut scores) };
        }
        let valid = Q.min(len - i0);
        for (r, inv) in inv.iter_mut().enumerate().take(valid) {
            *inv = exp_row(&mut scores, r, len);
        }
        let mut c0 = 0;
        while c0 < d {
            let two = c0 + 2 * L <= d;
            // SAFETY: AVX-512 F is enabled on this function; the callee's slices are checked,
            // and its writes are rows first_row + i0 .. + valid ≤ first_row + len and columns
            // col + c0 .. col + c0 + 16 or 32 ≤ col + d: this call's own part of `ctx`
            // (the caller's contract).
            unsafe {
                if two {
                    weigh_values::<2>(at, &scores, &inv, i0, valid, c0);
                } else {
                    weigh_values::<1>(at, &scores, &inv, i0, valid, c0);
                }
            }
            c0 += if two { 2 * L } else { L };
        }
    }
}

/// Head `col..col + d`'s keys of a sequence (`rows`, `len × 3·hidden`) transposed to
/// `d × padded` (zeros past `len`), 16 keys at a time: one masked gather per column and block
/// of keys, where a scalar transpose (the portable kernel's) makes a load and a store per
/// value (about a sixth of a short sequence's attention).
#[target_feature(enable = "avx512f")]
fn gathered_keys(
    rows: &[f32],
    len: usize,
    col: usize,
    d: usize,
    hidden: usize,
    padded: usize,
) -> Vec<f32> {
    let width = 3 * hidden;
    assert!(len > 0 && rows.len() == len * width && col + d <= hidden);
    assert!(padded >= len && padded.is_multiple_of(L));
    let stride = i32::try_from(width).expect("row width fits i32");
    assert!(i32::try_from(rows.len()).is_ok(), "offsets fit i32");
    let mut keys = vec![0f32; d * padded];
    let lanes = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
        _mm512_set1_epi32(stride),
    );
    for j0 in (0..len).step_by(L) {
        let n = L.min(len - j0);
        let mask: __mmask16 = if n == L { u16::MAX } else { (1u16 << n) - 1 };
        // Key j0 + l's value of column c is at (j0 + l) · width + hidden + col + c.
        let at = _mm512_add_epi32(lanes, _mm512_set1_epi32(stride * j0 as i32));
        let base = &rows[hidden + col..];
        for c in 0..d {
            let dst = &mut keys[c * padded + j0..][..L];
            // SAFETY: lane l < n reads base[(j0 + l) · width + c] = rows[(j0 + l) · width +
            // hidden + col + c], inside `rows` (j0 + l < len and hidden + col + c < width);
            // masked lanes read nothing (offsets fit i32, asserted above). `dst` holds 16
            // floats (checked slice); an unaligned store.
            unsafe {
                let v = _mm512_mask_i32gather_ps::<4>(
                    _mm512_setzero_ps(),
                    mask,
                    at,
                    base.as_ptr().add(c),
                );
                _mm512_storeu_ps(dst.as_mut_ptr(), v);
            }
        }
    }
    keys
}

/// Where keys `16b .. 16b + 16` of query row `r` start in a block's scores.
#[inline(always)]
fn chunk(b: usize, r: usize) -> usize {
    (b * Q + r) * L
}

/// Row `r` of a block's scores (its first `len` keys, in chunks) replaced by `e^(s − max)`;
/// returns 1 / their sum, the softmax's normalisation, which the weighted values apply. The
/// lanes past `len` in the last chunk are set to −∞ first, so every pass runs on whole
/// chunks; they come out as [`exp16`]'s floor, about 1e-38, are never read, and add at most
/// 15 · 1e-38 to a sum of at least 1 (the maximum's own term).
///
/// The two reductions across the 16 lanes (the maximum and the sum) are single instruction
/// sequences (`_mm512_reduce_*`): written as folds over an array they compiled to a scalar
/// chain as long as a whole short row's exponentials.
#[target_feature(enable = "avx512f")]
fn exp_row(scores: &mut [f32], r: usize, len: usize) -> f32 {
    let chunks = len.div_ceil(L);
    let last = len - (chunks - 1) * L;
    scores[chunk(chunks - 1, r) + last..chunk(chunks - 1, r) + L].fill(f32::NEG_INFINITY);
    let mut m = [f32::NEG_INFINITY; L];
    for b in 0..chunks {
        let c = &scores[chunk(b, r)..][..L];
        for (m, &x) in m.iter_mut().zip(c) {
            *m = if x > *m { x } else { *m };
        }
    }
    // SAFETY: `m` holds 16 floats; an unaligned load.
    let max = _mm512_set1_ps(_mm512_reduce_max_ps(unsafe { _mm512_loadu_ps(m.as_ptr()) }));
    let mut sum = _mm512_setzero_ps();
    for b in 0..chunks {
        let c = &mut scores[chunk(b, r)..][..L];
        // SAFETY: `c` holds 16 floats (checked slice); an unaligned load and store.
        unsafe {
            let e = exp16(_mm512_sub_ps(_mm512_loadu_ps(c.as_ptr()), max));
            _mm512_storeu_ps(c.as_mut_ptr(), e);
            sum = _mm512_add_ps(sum, e);
        }
    }
    1.0 / _mm512_reduce_add_ps(sum)
}

/// e^x in 16 lanes for x ≤ 0 (−∞ included): the polynomial of `kernels::exp` (Cephes
/// `expf`), with fused multiply-adds and `vscalefps` for the 2ⁿ, in 15 instructions where
/// the scalar form compiled to 22 (a third of a short row's attention went to them). Below
/// −87 it returns about 1e-38, as `kernels::exp` does.
#[target_feature(enable = "avx512f,fma")]
fn exp16(x: __m512) -> __m512 {
    use super::kernels::exp_poly::{COEFFS, LN2_HI, LN2_LO, LOG2E};
    let x = _mm512_max_ps(x, _mm512_set1_ps(-87.0));
    let n = _mm512_roundscale_ps::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(
        _mm512_mul_ps(x, _mm512_set1_ps(LOG2E)),
    );
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_HI), x);
    let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(LN2_LO), r);
    let mut p = _mm512_set1_ps(COEFFS[0]);
    for &c in &COEFFS[1..] {
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(c));
    }
    // y = p·r² + r + 1
    let y = _mm512_fmadd_ps(
        p,
        _mm512_mul_ps(r, r),
        _mm512_add_ps(r, _mm512_set1_ps(1.0)),
    );
    _mm512_scalef_ps(y, n)
}

/// Scores of the 8 query rows `q` (each the head's `d` columns) against keys
/// `j0..j0 + 16·N`, times `scale`, into `scores` (see [`chunk`]). Each query value is
/// broadcast straight from its row: no gathered copy of the block.
#[target_feature(enable = "avx512f")]
unsafe fn score_block<const N: usize>(
    keys: &[f32],
    q: &[&[f32]; Q],
    scale: f32,
    padded: usize,
    j0: usize,
    scores: &mut [f32],
) {
    // Every row cut to the first one's length here, in sight of the loop below, so the
    // compiler drops the bounds check of each broadcast.
    let d = q[0].len();
    let mut rows: [&[f32]; Q] = [&[]; Q];
    for (o, r) in rows.iter_mut().zip(q) {
        *o = &r[..d];
    }
    let mut acc = [[_mm512_setzero_ps(); N]; Q];
    for c in 0..d {
        let k = &keys[c * padded + j0..][..N * L];
        // SAFETY: `k` holds 16·N floats (checked slice); unaligned loads.
        let k: [__m512; N] =
            std::array::from_fn(|n| unsafe { _mm512_loadu_ps(k.as_ptr().add(n * L)) });
        for (a, row) in acc.iter_mut().zip(&rows) {
            let x = _mm512_set1_ps(row[c]);
            for (a, &k) in a.iter_mut().zip(&k) {
                *a = _mm512_fmadd_ps(x, k, *a);
            }
        }
    }
    let scale = _mm512_set1_ps(scale);
    for (r, a) in acc.iter().enumerate() {
        for (n, a) in a.iter().enumerate() {
            let s = &mut scores[chunk(j0 / L + n, r)..][..L];
            // SAFETY: `s` holds 16 floats (checked slice).
            unsafe { _mm512_storeu_ps(s.as_mut_ptr(), _mm512_mul_ps(*a, scale)) };
        }
    }
}

/// `ctx = P V` for query rows `i0..i0 + valid` and the head's columns `c0..c0 + 16·N`:
/// `scores` holds the rows' `e^(s − max)` (see [`chunk`]), `inv` their normalisations.
///
/// # Safety
/// As [`head`], whose asserts fix the extents; `valid ≤ 8`, `i0 + valid ≤ len` and the
/// columns lie inside the head's `d`.
#[target_feature(enable = "avx512f")]
unsafe fn weigh_values<const N: usize>(
    at: &Head,
    scores: &[f32],
    inv: &[f32; Q],
    i0: usize,
    valid: usize,
    c0: usize,
) {
    let (width, hidden) = (3 * at.hidden, at.hidden);
    let base = 2 * hidden + at.col + c0;
    let mut acc = [[_mm512_setzero_ps(); N]; Q];
    // Key by key within each chunk of 16: the chunk's 8 rows of probabilities are one array,
    // so each broadcast is a fixed offset from it (no division or bounds check per key).
    for b in 0..at.len.div_ceil(L) {
        let p: &[f32; Q * L] = scores[chunk(b, 0)..][..Q * L]
            .try_into()
            .expect("a chunk of 8 rows of 16");
        for l in 0..L.min(at.len - b * L) {
            let v = &at.rows[(b * L + l) * width + base..][..N * L];
            // SAFETY: `v` holds 16·N floats (checked slice); unaligned loads.
            let v: [__m512; N] =
                std::array::from_fn(|n| unsafe { _mm512_loadu_ps(v.as_ptr().add(n * L)) });
            for (r, a) in acc.iter_mut().enumerate() {
                let x = _mm512_set1_ps(p[r * L + l % L]);
                for (a, &v) in a.iter_mut().zip(&v) {
                    *a = _mm512_fmadd_ps(x, v, *a);
                }
            }
        }
    }
    for (r, a) in acc.iter().enumerate().take(valid) {
        let to = at.ctx.at((at.first_row + i0 + r) * hidden + at.col + c0);
        let inv = _mm512_set1_ps(inv[r]);
        for (n, a) in a.iter().enumerate() {
            let a = _mm512_mul_ps(*a, inv);
            // SAFETY: the caller's contract: row first_row + i0 + r < first_row + len ≤ total
            // and columns col + c0 .. + 16·N ≤ col + d ≤ hidden lie inside `ctx` and belong to
            // this (sequence, head) pair alone.
            unsafe { _mm512_storeu_ps(to.add(n * L), a) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp16_is_within_a_few_ulp_of_libm() {
        if !(std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("fma"))
        {
            eprintln!("no AVX-512 on this CPU: exp16 does not run");
            return;
        }
        let mut worst = 0f32;
        for i in (0..=200_000).step_by(16) {
            let x: [f32; L] = std::array::from_fn(|l| -87.0 * (i + l) as f32 / 200_015.0);
            let mut got = [0f32; L];
            // SAFETY: AVX-512 F and FMA were detected above; both arrays hold 16 floats.
            unsafe { _mm512_storeu_ps(got.as_mut_ptr(), exp16(_mm512_loadu_ps(x.as_ptr()))) };
            for (g, x) in got.iter().zip(x) {
                worst = worst.max(((g - x.exp()) / x.exp()).abs());
            }
        }
        assert!(worst < 4.0 * f32::EPSILON, "relative error {worst}");
        let edges = [
            0.0,
            -0.0,
            f32::NEG_INFINITY,
            -1000.0,
            -87.5,
            -1e-30,
            0.0,
            0.0,
        ];
        let x: [f32; L] = std::array::from_fn(|l| edges[l % 8]);
        let mut got = [0f32; L];
        // SAFETY: as above.
        unsafe { _mm512_storeu_ps(got.as_mut_ptr(), exp16(_mm512_loadu_ps(x.as_ptr()))) };
        assert_eq!(&got[..2], &[1.0, 1.0]);
        for g in &got[2..5] {
            assert!(*g > 0.0 && *g < 1e-37, "the floor, not {g}");
        }
        assert_eq!(got[5], 1.0);
    }
}
