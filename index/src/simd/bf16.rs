//! Inner product of a query with a bf16 code, for bf16 indexes.
//!
//! A bf16 value is the upper half of an f32, so widening is a shift by 16 bits: exact, no
//! rounding. Codes are read from bytes (little-endian `u16`), so any alignment works. Each
//! kernel gets the query twice, as f32 and rounded to bf16 (see [`DotBf16Fn`]).
//!
//! Kernels, chosen once per process by [`kernel`]:
//! - `avx512bf16`: AVX512-BF16 `vdpbf16ps` on the bf16 query: 32 products per instruction,
//!   accumulated in f32 (the query's rounding is the only difference, and a bf16 search
//!   re-scores its candidates exactly anyway);
//! - `avx512`: AVX-512F widen-and-shift, two 16-lane FMA accumulators;
//! - `avx2`: AVX2 + FMA, two 8-lane accumulators;
//! - `neon`: aarch64's Advanced SIMD widen-and-shift, two 4-lane FMA accumulators;
//! - `simd128`: WebAssembly's 128-bit SIMD (the browser build) widen-and-shift, two 4-lane
//!   accumulators, each product added after it is rounded (SIMD128 has no fused multiply-add;
//!   a bf16 search re-scores its candidates exactly anyway);
//! - `scalar`: portable (the reference the others are tested against).
#![allow(unsafe_code)]

use std::sync::OnceLock;

/// A bf16 dot-product kernel: `Σ query[i] · code_i` over the shorter length, where `code_i` is
/// the little-endian `u16` at bytes `2i..2i + 2`. Arguments: the query as f32, the same query
/// rounded to bf16 (little-endian bytes, as a code), the code.
pub type DotBf16Fn = fn(&[f32], &[u8], &[u8]) -> f32;

/// The kernel [`dot_bf16`] uses on this CPU.
pub fn kernel() -> (&'static str, DotBf16Fn) {
    static CHOSEN: OnceLock<(&'static str, DotBf16Fn)> = OnceLock::new();
    *CHOSEN.get_or_init(|| kernels()[0])
}

/// Every bf16 kernel this CPU can run, fastest first; the last is always `scalar`.
pub fn kernels() -> Vec<(&'static str, DotBf16Fn)> {
    #[allow(unused_mut, clippy::vec_init_then_push)] // kernels besides scalar on some targets
    let mut v: Vec<(&'static str, DotBf16Fn)> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        use super::{isa_cap, Isa};
        let avx512 = isa_cap() >= Isa::Avx512 && std::is_x86_feature_detected!("avx512f");
        if avx512 && std::is_x86_feature_detected!("avx512bf16") {
            v.push(("avx512bf16", x86::dot_avx512bf16_checked));
        }
        if avx512 {
            v.push(("avx512", x86::dot_avx512_checked));
        }
        if isa_cap() >= Isa::Avx2
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
        {
            v.push(("avx2", x86::dot_avx2_checked));
        }
    }
    #[cfg(target_arch = "aarch64")]
    if super::isa_cap() > super::Isa::Scalar {
        v.push(("neon", arm::dot_neon));
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if super::isa_cap() > super::Isa::Scalar {
        v.push(("simd128", wasm::dot_simd128));
    }
    v.push(("scalar", dot_bf16_scalar));
    v
}

/// bf16 inner product with the fastest kernel for this CPU (`query_bf16` is `query` rounded
/// to bf16, as [`DotBf16Fn`] takes it).
#[inline]
pub fn dot_bf16(query: &[f32], query_bf16: &[u8], code: &[u8]) -> f32 {
    (kernel().1)(query, query_bf16, code)
}

/// Widens one bf16 value to f32 (exact).
#[inline]
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// Portable bf16 inner product (on the f32 query).
pub fn dot_bf16_scalar(query: &[f32], _query_bf16: &[u8], code: &[u8]) -> f32 {
    dot_f32_bf16(query, code)
}

/// Σ query[i] · code_i on the f32 query.
fn dot_f32_bf16(query: &[f32], code: &[u8]) -> f32 {
    query
        .iter()
        .zip(code.chunks_exact(2))
        .fold(0f32, |acc, (&q, b)| {
            <super::Unfused as super::MulAdd>::mul_add(
                q,
                bf16_to_f32(u16::from_le_bytes([b[0], b[1]])),
                acc,
            )
        })
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX-512F and AVX512-BF16.
    pub(super) fn dot_avx512bf16_checked(_q: &[f32], qb: &[u8], c: &[u8]) -> f32 {
        // SAFETY: `kernels()` returns this function only when avx512f and avx512bf16 were
        // both detected.
        unsafe { dot_avx512bf16(qb, c) }
    }

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX-512F.
    pub(super) fn dot_avx512_checked(q: &[f32], _qb: &[u8], c: &[u8]) -> f32 {
        // SAFETY: `kernels()` returns this function only when avx512f was detected.
        unsafe { dot_avx512(q, c) }
    }

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX2 and FMA.
    pub(super) fn dot_avx2_checked(q: &[f32], _qb: &[u8], c: &[u8]) -> f32 {
        // SAFETY: `kernels()` returns this function only when avx2 and fma were detected.
        unsafe { dot_avx2(q, c) }
    }

    fn tail(q: &[f32], c: &[u8], from: usize) -> f32 {
        super::dot_f32_bf16(
            q.get(from..).unwrap_or(&[]),
            c.get(2 * from..).unwrap_or(&[]),
        )
    }

    /// # Safety
    /// The CPU must support AVX-512F and AVX512-BF16.
    #[target_feature(enable = "avx512f,avx512bf16")]
    unsafe fn dot_avx512bf16(qb: &[u8], c: &[u8]) -> f32 {
        let n = qb.len().min(c.len()) / 2;
        let (pq, pc) = (qb.as_ptr(), c.as_ptr());
        let mut acc0 = _mm512_setzero_ps();
        let mut acc1 = _mm512_setzero_ps();
        let mut i = 0;
        while i + 64 <= n {
            // SAFETY: i + 64 <= n: the 64-byte loads at bytes 2i and 2i + 64 of both end at
            // 2(i + 64) <= 2n, inside qb and c. A __m512i and a __m512bh are both 64 bytes
            // of plain lanes, so reinterpreting one as the other is sound.
            unsafe {
                let a0: __m512bh = std::mem::transmute(_mm512_loadu_si512(pq.add(2 * i).cast()));
                let b0: __m512bh = std::mem::transmute(_mm512_loadu_si512(pc.add(2 * i).cast()));
                let a1: __m512bh =
                    std::mem::transmute(_mm512_loadu_si512(pq.add(2 * i + 64).cast()));
                let b1: __m512bh =
                    std::mem::transmute(_mm512_loadu_si512(pc.add(2 * i + 64).cast()));
                acc0 = _mm512_dpbf16_ps(acc0, a0, b0);
                acc1 = _mm512_dpbf16_ps(acc1, a1, b1);
            }
            i += 64;
        }
        while i + 32 <= n {
            // SAFETY: i + 32 <= n, as above.
            unsafe {
                let a0: __m512bh = std::mem::transmute(_mm512_loadu_si512(pq.add(2 * i).cast()));
                let b0: __m512bh = std::mem::transmute(_mm512_loadu_si512(pc.add(2 * i).cast()));
                acc0 = _mm512_dpbf16_ps(acc0, a0, b0);
            }
            i += 32;
        }
        let mut sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
        for (a, b) in qb.chunks_exact(2).zip(c.chunks_exact(2)).skip(i) {
            sum += super::bf16_to_f32(u16::from_le_bytes([a[0], a[1]]))
                * super::bf16_to_f32(u16::from_le_bytes([b[0], b[1]]));
        }
        sum
    }

    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn dot_avx512(q: &[f32], c: &[u8]) -> f32 {
        let n = q.len().min(c.len() / 2);
        let (pq, pc) = (q.as_ptr(), c.as_ptr());
        let mut acc0 = _mm512_setzero_ps();
        let mut acc1 = _mm512_setzero_ps();
        let mut i = 0;
        while i + 32 <= n {
            // SAFETY: i + 32 <= n: the 16-value code loads at bytes 2i and 2i + 32 (32 bytes
            // each) end at 2(i + 32) <= c.len(), the 16-float query loads end at i + 32 <= q.len().
            unsafe {
                let w0 = _mm512_cvtepu16_epi32(_mm256_loadu_si256(pc.add(2 * i).cast()));
                let w1 = _mm512_cvtepu16_epi32(_mm256_loadu_si256(pc.add(2 * i + 32).cast()));
                let x0 = _mm512_castsi512_ps(_mm512_slli_epi32::<16>(w0));
                let x1 = _mm512_castsi512_ps(_mm512_slli_epi32::<16>(w1));
                acc0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(pq.add(i)), acc0);
                acc1 = _mm512_fmadd_ps(x1, _mm512_loadu_ps(pq.add(i + 16)), acc1);
            }
            i += 32;
        }
        while i + 16 <= n {
            // SAFETY: i + 16 <= n.
            unsafe {
                let w0 = _mm512_cvtepu16_epi32(_mm256_loadu_si256(pc.add(2 * i).cast()));
                let x0 = _mm512_castsi512_ps(_mm512_slli_epi32::<16>(w0));
                acc0 = _mm512_fmadd_ps(x0, _mm512_loadu_ps(pq.add(i)), acc0);
            }
            i += 16;
        }
        _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) + tail(q, c, i)
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn dot_avx2(q: &[f32], c: &[u8]) -> f32 {
        let n = q.len().min(c.len() / 2);
        let (pq, pc) = (q.as_ptr(), c.as_ptr());
        let mut acc0 = _mm256_setzero_ps();
        let mut acc1 = _mm256_setzero_ps();
        let mut i = 0;
        while i + 16 <= n {
            // SAFETY: i + 16 <= n: the 8-value code loads at bytes 2i and 2i + 16 end at
            // 2(i + 16) <= c.len(); the 8-float query loads end at i + 16 <= q.len().
            unsafe {
                let w0 = _mm256_cvtepu16_epi32(_mm_loadu_si128(pc.add(2 * i).cast()));
                let w1 = _mm256_cvtepu16_epi32(_mm_loadu_si128(pc.add(2 * i + 16).cast()));
                let x0 = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(w0));
                let x1 = _mm256_castsi256_ps(_mm256_slli_epi32::<16>(w1));
                acc0 = _mm256_fmadd_ps(x0, _mm256_loadu_ps(pq.add(i)), acc0);
                acc1 = _mm256_fmadd_ps(x1, _mm256_loadu_ps(pq.add(i + 8)), acc1);
            }
            i += 16;
        }
        let s = _mm256_add_ps(acc0, acc1);
        let q4 = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps::<1>(s));
        let q4 = _mm_add_ps(q4, _mm_movehl_ps(q4, q4));
        let q4 = _mm_add_ss(q4, _mm_shuffle_ps::<0b01>(q4, q4));
        _mm_cvtss_f32(q4) + tail(q, c, i)
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::*;

    use super::dot_f32_bf16;

    /// The bf16 inner product on NEON (on the f32 query): eight codes at a time widened to f32
    /// by a 16-bit left shift, fused into two accumulators; the last few portably.
    pub(super) fn dot_neon(q: &[f32], _qb: &[u8], c: &[u8]) -> f32 {
        let n = q.len().min(c.len() / 2);
        let (pq, pc) = (q.as_ptr(), c.as_ptr());
        let mut i = 0;
        // SAFETY: NEON is part of the aarch64 baseline, so every intrinsic runs on any aarch64
        // CPU. While i + 8 <= n, the 16-byte code load at byte 2i ends at 2(i + 8) <=
        // c.len() (an unaligned load of bytes, read as little-endian u16, as the codes are
        // stored), and the two 4-float query loads end at i + 8 <= q.len().
        let head = unsafe {
            let mut acc0 = vdupq_n_f32(0.0);
            let mut acc1 = vdupq_n_f32(0.0);
            while i + 8 <= n {
                let w = vreinterpretq_u16_u8(vld1q_u8(pc.add(2 * i)));
                let x0 = vreinterpretq_f32_u32(vshll_n_u16::<16>(vget_low_u16(w)));
                let x1 = vreinterpretq_f32_u32(vshll_high_n_u16::<16>(w));
                acc0 = vfmaq_f32(acc0, x0, vld1q_f32(pq.add(i)));
                acc1 = vfmaq_f32(acc1, x1, vld1q_f32(pq.add(i + 4)));
                i += 8;
            }
            vaddvq_f32(vaddq_f32(acc0, acc1))
        };
        head + dot_f32_bf16(&q[i..n], &c[2 * i..2 * n])
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use std::arch::wasm32::*;

    use super::dot_f32_bf16;

    /// The bf16 inner product in WebAssembly SIMD128 (on the f32 query): eight codes at a time
    /// widened to f32 by a 16-bit left shift, multiplied and added into two accumulators; the
    /// last few portably.
    pub(super) fn dot_simd128(q: &[f32], _qb: &[u8], c: &[u8]) -> f32 {
        let n = q.len().min(c.len() / 2);
        let (pq, pc) = (q.as_ptr(), c.as_ptr());
        let mut i = 0;
        let mut acc0 = f32x4_splat(0.0);
        let mut acc1 = f32x4_splat(0.0);
        while i + 8 <= n {
            // SAFETY: the build has SIMD128 (this module's cfg). i + 8 <= n: the 16-byte code
            // load at byte 2i ends at 2(i + 8) <= c.len() (read as little-endian u16, as the
            // codes are stored), and the two 4-float query loads end at i + 8 <= q.len();
            // `v128_load` has no alignment requirement.
            unsafe {
                let w = v128_load(pc.add(2 * i).cast());
                let x0 = i32x4_shl(u32x4_extend_low_u16x8(w), 16);
                let x1 = i32x4_shl(u32x4_extend_high_u16x8(w), 16);
                acc0 = f32x4_add(acc0, f32x4_mul(x0, v128_load(pq.add(i).cast())));
                acc1 = f32x4_add(acc1, f32x4_mul(x1, v128_load(pq.add(i + 4).cast())));
            }
            i += 8;
        }
        let acc = f32x4_add(acc0, acc1);
        let head = (f32x4_extract_lane::<0>(acc) + f32x4_extract_lane::<1>(acc))
            + (f32x4_extract_lane::<2>(acc) + f32x4_extract_lane::<3>(acc));
        head + dot_f32_bf16(&q[i..n], &c[2 * i..2 * n])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(v: &[f32]) -> Vec<u8> {
        v.iter()
            .flat_map(|x| crate::encoding::to_bf16(*x).to_le_bytes())
            .collect()
    }

    #[test]
    fn every_kernel_equals_scalar_at_every_length() {
        for n in (0..140).chain([255, 256, 257, 384, 768, 1023]) {
            // Queries already bf16 values, so the bf16-query kernel multiplies the same numbers.
            let q: Vec<f32> = (0..n)
                .map(|i| {
                    bf16_to_f32(crate::encoding::to_bf16(
                        ((i * 37 % 201) as f32 - 100.0) / 100.0,
                    ))
                })
                .collect();
            let qb = bits(&q);
            let c = bits(
                &(0..n)
                    .map(|i| ((i * 91 % 201) as f32 - 100.0) / 100.0)
                    .collect::<Vec<_>>(),
            );
            let want = dot_bf16_scalar(&q, &qb, &c);
            for (name, f) in kernels() {
                let got = f(&q, &qb, &c);
                assert!(
                    (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                    "{name} n={n}: {got} vs {want}"
                );
                // An odd byte count ignores the half value; a short code uses its length.
                let short = &c[..c.len().saturating_sub(1)];
                let (got, want) = (f(&q, &qb, short), dot_bf16_scalar(&q, &qb, short));
                assert!(
                    (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                    "{name} odd n={n}"
                );
            }
        }
    }
}
