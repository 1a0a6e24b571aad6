//! The 4-bit pass of an int8 search: an 8-bit query against the high planes of int8 codes.
//!
//! A graph walk on an int8 index scores each node it meets on the high half of its code alone
//! (3 cache lines at 384 dimensions instead of 6): `Σ query[i] · high[i]`, each `high[i]` in
//! 0..=15 (the layout is in [`super::int8`]: in block `b`, byte `j` holds dimension `128b + j`
//! in its low nibble and `128b + 64 + j` in its high nibble). The search then re-scores its best
//! candidates on the whole code. Products of 15 and a value in -127..=127 summed over at most
//! 65,536 dimensions stay far below 2^31.
//!
//! Kernels, chosen once per process by [`kernel`]:
//! - `avx512vnni`: AVX-512BW nibble unpacking + VNNI `vpdpbusd` (unsigned bytes by signed);
//! - `avx512`: AVX-512BW unpacking + `vpmaddubsw` and `vpmaddwd` (pairs of products stay
//!   within ±3,810, so the 16-bit step never saturates);
//! - `avx2`: the same on 256-bit registers;
//! - `neon`: aarch64's Advanced SIMD: `smull` of nibbles and query bytes, pairs added into 32-bit
//!   lanes by `sadalp` (no extension needed);
//! - `simd128`: WebAssembly's 128-bit SIMD (the browser build): nibbles and query bytes
//!   widened to i16, multiplied in pairs summed into i32 lanes (`i32x4.dot_i16x8_s`);
//! - `scalar`: portable (the reference the others are tested against).
#![allow(unsafe_code)]

use std::sync::OnceLock;

use super::int8::{BLOCK_DIMS, PLANE_BLOCK};

/// A nibble kernel: `Σ query[i] · high[i]` over the whole blocks both hold (`query` 128 values
/// per block, `high` 64 bytes per block).
pub type DotNibbleFn = fn(&[i8], &[u8]) -> i32;

/// The kernel a graph walk uses on this CPU.
pub fn kernel() -> (&'static str, DotNibbleFn) {
    static CHOSEN: OnceLock<(&'static str, DotNibbleFn)> = OnceLock::new();
    *CHOSEN.get_or_init(|| kernels()[0])
}

/// Every nibble kernel this CPU can run, fastest first; the last is always `scalar`.
pub fn kernels() -> Vec<(&'static str, DotNibbleFn)> {
    #[allow(unused_mut)] // only x86-64 has other kernels
    let mut v: Vec<(&'static str, DotNibbleFn)> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    v.extend(super::int_tiers().into_iter().map(|t| {
        let f: DotNibbleFn = match t {
            super::IntTier::Avx512Vnni => x86::dot_avx512vnni_checked,
            super::IntTier::Avx512 => x86::dot_avx512_checked,
            super::IntTier::Avx2 => x86::dot_avx2_checked,
        };
        (t.name(), f)
    }));
    #[cfg(target_arch = "aarch64")]
    if super::isa_cap() > super::Isa::Scalar {
        v.push(("neon", arm::dot_neon));
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if super::isa_cap() > super::Isa::Scalar {
        v.push(("simd128", wasm::dot_simd128));
    }
    v.push(("scalar", dot_nibble_scalar));
    v
}

/// Whole blocks a query of `q` values and a high plane of `h` bytes have in common.
#[inline]
fn blocks(q: usize, h: usize) -> usize {
    (q / BLOCK_DIMS).min(h / PLANE_BLOCK)
}

/// Portable nibble inner product.
pub fn dot_nibble_scalar(query: &[i8], high: &[u8]) -> i32 {
    let n = blocks(query.len(), high.len());
    let mut sum = 0i32;
    for b in 0..n {
        let q = &query[b * BLOCK_DIMS..][..BLOCK_DIMS];
        for (j, &byte) in high[b * PLANE_BLOCK..][..PLANE_BLOCK].iter().enumerate() {
            sum += i32::from(q[j]) * i32::from(byte & 15)
                + i32::from(q[j + PLANE_BLOCK]) * i32::from(byte >> 4);
        }
    }
    sum
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{blocks, BLOCK_DIMS, PLANE_BLOCK};

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX-512F, BW and VNNI.
    pub(super) fn dot_avx512vnni_checked(q: &[i8], h: &[u8]) -> i32 {
        // SAFETY: `kernels()` returns this function only when avx512f, avx512bw and avx512vnni
        // were all detected.
        unsafe { dot_avx512vnni(q, h) }
    }

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX-512F and BW.
    pub(super) fn dot_avx512_checked(q: &[i8], h: &[u8]) -> i32 {
        // SAFETY: `kernels()` returns this function only when avx512f and avx512bw were detected.
        unsafe { dot_avx512(q, h) }
    }

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX2.
    pub(super) fn dot_avx2_checked(q: &[i8], h: &[u8]) -> i32 {
        // SAFETY: `kernels()` returns this function only when avx2 was detected.
        unsafe { dot_avx2(q, h) }
    }

    /// The AVX-512 kernels' body, with `$madd(acc, nibbles, query)` adding 64 products.
    macro_rules! avx512_nibble_dot {
        ($q:expr, $h:expr, $madd:expr) => {{
            let (q, h): (&[i8], &[u8]) = ($q, $h);
            let n = blocks(q.len(), h.len());
            let (pq, ph) = (q.as_ptr(), h.as_ptr());
            let low = _mm512_set1_epi8(0x0f);
            let mut acc0 = _mm512_setzero_si512();
            let mut acc1 = _mm512_setzero_si512();
            for b in 0..n {
                // SAFETY: b < n: the 64-byte load at b · 64 of the plane and the 128 query
                // values at b · 128 are in bounds.
                unsafe {
                    let x = _mm512_loadu_si512(ph.add(b * PLANE_BLOCK).cast());
                    let qb = pq.add(b * BLOCK_DIMS);
                    let madd = $madd;
                    acc0 = madd(
                        acc0,
                        _mm512_and_si512(x, low),
                        _mm512_loadu_si512(qb.cast()),
                    );
                    acc1 = madd(
                        acc1,
                        _mm512_and_si512(_mm512_srli_epi16::<4>(x), low),
                        _mm512_loadu_si512(qb.add(PLANE_BLOCK).cast()),
                    );
                }
            }
            _mm512_reduce_add_epi32(_mm512_add_epi32(acc0, acc1))
        }};
    }

    /// # Safety
    /// The CPU must support AVX-512F, AVX-512BW and AVX-512VNNI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn dot_avx512vnni(q: &[i8], h: &[u8]) -> i32 {
        avx512_nibble_dot!(q, h, |acc, x, q| _mm512_dpbusd_epi32(acc, x, q))
    }

    /// # Safety
    /// The CPU must support AVX-512F and AVX-512BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn dot_avx512(q: &[i8], h: &[u8]) -> i32 {
        avx512_nibble_dot!(q, h, |acc, x, q| _mm512_add_epi32(
            acc,
            _mm512_madd_epi16(_mm512_maddubs_epi16(x, q), _mm512_set1_epi16(1))
        ))
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn dot_avx2(q: &[i8], h: &[u8]) -> i32 {
        let n = blocks(q.len(), h.len());
        let (pq, ph) = (q.as_ptr(), h.as_ptr());
        let low = _mm256_set1_epi8(0x0f);
        let ones = _mm256_set1_epi16(1);
        let mut acc0 = _mm256_setzero_si256();
        let mut acc1 = _mm256_setzero_si256();
        for b in 0..n {
            for half in 0..2 {
                // SAFETY: b < n and half < 2: the 32-byte load at b · 64 + half · 32 and the
                // query values at b · 128 + half · 32 (and 64 further, 32 each) are in bounds.
                unsafe {
                    let x = _mm256_loadu_si256(ph.add(b * PLANE_BLOCK + 32 * half).cast());
                    let qb = pq.add(b * BLOCK_DIMS + 32 * half);
                    let lo = _mm256_and_si256(x, low);
                    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(x), low);
                    let p0 = _mm256_maddubs_epi16(lo, _mm256_loadu_si256(qb.cast()));
                    let p1 =
                        _mm256_maddubs_epi16(hi, _mm256_loadu_si256(qb.add(PLANE_BLOCK).cast()));
                    acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(p0, ones));
                    acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(p1, ones));
                }
            }
        }
        let s = _mm256_add_epi32(acc0, acc1);
        let s = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::*;

    use super::{blocks, BLOCK_DIMS, PLANE_BLOCK};

    /// The nibble inner product on NEON: each 16 bytes of the high plane split into two
    /// 16-nibble vectors, multiplied with the query bytes into 16-bit products (at most
    /// 15 · 127), pairs of which are added into 32-bit accumulators.
    pub(super) fn dot_neon(q: &[i8], h: &[u8]) -> i32 {
        let n = blocks(q.len(), h.len());
        let (pq, ph) = (q.as_ptr(), h.as_ptr());
        // SAFETY: NEON is part of the aarch64 baseline, so every intrinsic runs on any aarch64
        // CPU. For b < n and quarter < 4, the 16-byte plane load at b · 64 + 16 · quarter and
        // the 16-value query loads at b · 128 + 16 · quarter (and 64 further) are in bounds.
        unsafe {
            let low = vdupq_n_u8(0x0f);
            let mut acc0 = vdupq_n_s32(0);
            let mut acc1 = vdupq_n_s32(0);
            for b in 0..n {
                let qb = pq.add(b * BLOCK_DIMS);
                for quarter in 0..4 {
                    let x = vld1q_u8(ph.add(b * PLANE_BLOCK + 16 * quarter));
                    let lo = vreinterpretq_s8_u8(vandq_u8(x, low));
                    let hi = vreinterpretq_s8_u8(vshrq_n_u8::<4>(x));
                    let q0 = vld1q_s8(qb.add(16 * quarter));
                    let q1 = vld1q_s8(qb.add(PLANE_BLOCK + 16 * quarter));
                    acc0 = vpadalq_s16(acc0, vmull_s8(vget_low_s8(lo), vget_low_s8(q0)));
                    acc1 = vpadalq_s16(acc1, vmull_high_s8(lo, q0));
                    acc0 = vpadalq_s16(acc0, vmull_s8(vget_low_s8(hi), vget_low_s8(q1)));
                    acc1 = vpadalq_s16(acc1, vmull_high_s8(hi, q1));
                }
            }
            vaddvq_s32(vaddq_s32(acc0, acc1))
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod wasm {
    use std::arch::wasm32::*;

    use super::{blocks, BLOCK_DIMS, PLANE_BLOCK};

    /// The nibble inner product in WebAssembly SIMD128: each 16 bytes of the high plane split
    /// into two 16-nibble vectors, widened with the query bytes to i16 and multiplied in pairs
    /// summed into i32 lanes (`i32x4.dot_i16x8_s`: at most 2 · 15 · 127 a pair).
    pub(super) fn dot_simd128(q: &[i8], h: &[u8]) -> i32 {
        let n = blocks(q.len(), h.len());
        let (pq, ph) = (q.as_ptr(), h.as_ptr());
        let low = u8x16_splat(0x0f);
        let mut acc0 = i32x4_splat(0);
        let mut acc1 = i32x4_splat(0);
        for b in 0..n {
            for quarter in 0..4 {
                // SAFETY: the build has SIMD128 (this module's cfg), so every instruction runs.
                // For b < n and quarter < 4, the 16-byte plane load at b · 64 + 16 · quarter and
                // the 16-value query loads at b · 128 + 16 · quarter (and 64 further) are in
                // bounds; `v128_load` has no alignment requirement.
                unsafe {
                    let x = v128_load(ph.add(b * PLANE_BLOCK + 16 * quarter).cast());
                    let qb = pq.add(b * BLOCK_DIMS + 16 * quarter);
                    let q0 = v128_load(qb.cast());
                    let q1 = v128_load(qb.add(PLANE_BLOCK).cast());
                    for (nibbles, qv) in [(v128_and(x, low), q0), (u8x16_shr(x, 4), q1)] {
                        acc0 = i32x4_add(
                            acc0,
                            i32x4_dot_i16x8(
                                u16x8_extend_low_u8x16(nibbles),
                                i16x8_extend_low_i8x16(qv),
                            ),
                        );
                        acc1 = i32x4_add(
                            acc1,
                            i32x4_dot_i16x8(
                                u16x8_extend_high_u8x16(nibbles),
                                i16x8_extend_high_i8x16(qv),
                            ),
                        );
                    }
                }
            }
        }
        let acc = i32x4_add(acc0, acc1);
        i32x4_extract_lane::<0>(acc)
            + i32x4_extract_lane::<1>(acc)
            + i32x4_extract_lane::<2>(acc)
            + i32x4_extract_lane::<3>(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_equals_scalar_at_every_block_count_and_extreme() {
        for blocks in [0usize, 1, 2, 3, 4, 8] {
            let q: Vec<i8> = (0..blocks * BLOCK_DIMS)
                .map(|i| ((i * 37 % 255) as i32 - 127) as i8)
                .collect();
            let h: Vec<u8> = (0..blocks * PLANE_BLOCK)
                .map(|i| (i * 91 % 256) as u8)
                .collect();
            let want = dot_nibble_scalar(&q, &h);
            // The scalar kernel against the definition, by dimension.
            let mut by_dim = 0i32;
            for (d, &qv) in q.iter().enumerate() {
                let (b, r) = (d / BLOCK_DIMS, d % BLOCK_DIMS);
                let byte = h[b * PLANE_BLOCK + r % PLANE_BLOCK];
                let nib = if r < PLANE_BLOCK {
                    byte & 15
                } else {
                    byte >> 4
                };
                by_dim += i32::from(qv) * i32::from(nib);
            }
            assert_eq!(want, by_dim, "blocks={blocks}");
            for (name, f) in kernels() {
                assert_eq!(f(&q, &h), want, "{name} blocks={blocks}");
                if blocks > 1 {
                    let short = &q[..(blocks - 1) * BLOCK_DIMS];
                    assert_eq!(f(short, &h), dot_nibble_scalar(short, &h), "{name} short");
                }
            }
        }
        let q = vec![-128i8; 4096];
        let h = vec![0xffu8; 2048];
        for (name, f) in kernels() {
            assert_eq!(f(&q, &h), -128 * 15 * 4096, "{name} extreme");
        }
    }
}
