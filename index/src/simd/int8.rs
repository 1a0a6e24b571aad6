//! Integer inner product of a widened int8 query with an int8 code stored as two nibble planes,
//! for int8-quantised indexes.
//!
//! A code's values `c` (each in -127..=127) are stored as `u = c + 128`, split into a high
//! plane (`u >> 4`) and a low plane (`u & 15`) of 64 bytes per block of 128 dimensions: in
//! block `b`, byte `j` of a plane holds dimension `128b + j` in its low nibble and
//! `128b + 64 + j` in its high nibble. All high planes come first, then all low planes
//! (`encoding` lays codes out; a graph walk reads only the high planes, see [`super::nibble`]).
//! Here both planes are joined back into the exact values, so these kernels give the same
//! sums as the plain int8 dot product.
//!
//! The query is quantised once per search and widened to `i16`, zero past the vector's
//! dimension. Products of two values in -127..=127 summed over at most 65,536 dimensions stay
//! below 2^31, so no accumulator can overflow.
//!
//! Kernels, chosen once per process by [`kernel`]:
//! - `avx512vnni`: AVX-512BW unpacking and widening + VNNI `vpdpwssd`;
//! - `avx512`: AVX-512BW unpacking and widening + `vpmaddwd`;
//! - `avx2`: AVX2 unpacking and widening + `vpmaddwd`;
//! - `neon`: aarch64's Advanced SIMD unpacking and widening + `smlal` (no extension needed);
//! - `simd128`: WebAssembly's 128-bit SIMD (the browser build, which is compiled with it)
//!   unpacking and widening + `i32x4.dot_i16x8_s`;
//! - `scalar`: portable (the reference the others are tested against).
#![allow(unsafe_code)]

use std::sync::OnceLock;

/// Dimensions per block of a code's planes.
pub const BLOCK_DIMS: usize = 128;
/// Bytes of one plane per block.
pub const PLANE_BLOCK: usize = BLOCK_DIMS / 2;

/// An int8 dot-product kernel: `Σ query[i] · value[i]` over the whole blocks both hold, where
/// `planes` is a code's high planes followed by its low planes (`128 · blocks` bytes).
pub type DotI8Fn = fn(&[i16], &[u8]) -> i32;

/// The kernel [`dot_i8`] uses on this CPU.
pub fn kernel() -> (&'static str, DotI8Fn) {
    static CHOSEN: OnceLock<(&'static str, DotI8Fn)> = OnceLock::new();
    *CHOSEN.get_or_init(|| kernels()[0])
}

/// Every int8 kernel this CPU can run, fastest first; the last is always `scalar`.
pub fn kernels() -> Vec<(&'static str, DotI8Fn)> {
    #[allow(unused_mut)] // only x86-64 has other kernels
    let mut v: Vec<(&'static str, DotI8Fn)> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    v.extend(super::int_tiers().into_iter().map(|t| {
        let f: DotI8Fn = match t {
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
    v.push(("scalar", dot_i8_scalar));
    v
}

/// Integer inner product with the fastest kernel for this CPU.
#[inline]
pub fn dot_i8(query: &[i16], planes: &[u8]) -> i32 {
    (kernel().1)(query, planes)
}

/// Whole blocks a query of `q` values and planes of `p` bytes have in common.
#[inline]
pub(crate) fn blocks(q: usize, p: usize) -> usize {
    (q / BLOCK_DIMS).min(p / (2 * PLANE_BLOCK))
}

/// The two values a high-plane byte and a low-plane byte hold: dimensions `j` and `j + 64`
/// of their block.
#[inline]
fn join(h: u8, l: u8) -> (i8, i8) {
    (
        (((h & 15) << 4) | (l & 15)) as i8 ^ i8::MIN,
        ((h & 0xf0) | (l >> 4)) as i8 ^ i8::MIN,
    )
}

/// The values of `planes` (`128 · blocks` bytes), in dimension order.
pub fn unpack(planes: &[u8]) -> Vec<i8> {
    let (hi, lo) = planes.split_at(planes.len() / 2);
    let mut out = vec![0i8; planes.len() / (2 * PLANE_BLOCK) * BLOCK_DIMS];
    for ((o, h), l) in out
        .chunks_exact_mut(BLOCK_DIMS)
        .zip(hi.chunks_exact(PLANE_BLOCK))
        .zip(lo.chunks_exact(PLANE_BLOCK))
    {
        for j in 0..PLANE_BLOCK {
            (o[j], o[j + PLANE_BLOCK]) = join(h[j], l[j]);
        }
    }
    out
}

/// Portable integer inner product.
pub fn dot_i8_scalar(query: &[i16], planes: &[u8]) -> i32 {
    let n = blocks(query.len(), planes.len());
    let (hi, lo) = planes.split_at(planes.len() / 2);
    let mut sum = 0i32;
    for ((q, h), l) in query
        .chunks_exact(BLOCK_DIMS)
        .zip(hi.chunks_exact(PLANE_BLOCK))
        .zip(lo.chunks_exact(PLANE_BLOCK))
        .take(n)
    {
        for j in 0..PLANE_BLOCK {
            let (first, second) = join(h[j], l[j]);
            sum += i32::from(q[j]) * i32::from(first)
                + i32::from(q[j + PLANE_BLOCK]) * i32::from(second);
        }
    }
    sum
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::{blocks, BLOCK_DIMS, PLANE_BLOCK};

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX-512F, BW and VNNI.
    pub(super) fn dot_avx512vnni_checked(q: &[i16], c: &[u8]) -> i32 {
        // SAFETY: `kernels()` returns this function only when avx512f, avx512bw and avx512vnni
        // were all detected.
        unsafe { dot_avx512vnni(q, c) }
    }

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX-512F and BW.
    pub(super) fn dot_avx512_checked(q: &[i16], c: &[u8]) -> i32 {
        // SAFETY: `kernels()` returns this function only when avx512f and avx512bw were detected.
        unsafe { dot_avx512(q, c) }
    }

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX2.
    pub(super) fn dot_avx2_checked(q: &[i16], c: &[u8]) -> i32 {
        // SAFETY: `kernels()` returns this function only when avx2 was detected.
        unsafe { dot_avx2(q, c) }
    }

    /// The AVX-512 kernel's body, with `$madd(acc, values, query)` adding 32 products (a macro,
    /// not a helper function, so every intrinsic sits in the function whose target features
    /// allow it).
    macro_rules! avx512_planes_dot {
        ($q:expr, $c:expr, $madd:expr) => {{
            let (q, c): (&[i16], &[u8]) = ($q, $c);
            let n = blocks(q.len(), c.len());
            let (pq, hi, lo) = (q.as_ptr(), c.as_ptr(), c[c.len() / 2..].as_ptr());
            let low = _mm512_set1_epi8(0x0f);
            let sign = _mm512_set1_epi8(i8::MIN);
            let mut acc0 = _mm512_setzero_si512();
            let mut acc1 = _mm512_setzero_si512();
            for b in 0..n {
                // SAFETY: b < n: the 64-byte loads at b · 64 of each plane (the high planes
                // are the first half of `c`, the low ones the second) and the 128 query values
                // at b · 128 are in bounds.
                unsafe {
                    let h = _mm512_loadu_si512(hi.add(b * PLANE_BLOCK).cast());
                    let l = _mm512_loadu_si512(lo.add(b * PLANE_BLOCK).cast());
                    // Dimensions 0..64 of the block from the low nibbles, 64..128 from the high.
                    let first = _mm512_xor_si512(
                        _mm512_or_si512(
                            _mm512_slli_epi16::<4>(_mm512_and_si512(h, low)),
                            _mm512_and_si512(l, low),
                        ),
                        sign,
                    );
                    let second = _mm512_xor_si512(
                        _mm512_or_si512(
                            _mm512_andnot_si512(low, h),
                            _mm512_and_si512(_mm512_srli_epi16::<4>(l), low),
                        ),
                        sign,
                    );
                    let qb = pq.add(b * BLOCK_DIMS);
                    let madd = $madd;
                    acc0 = madd(
                        acc0,
                        _mm512_cvtepi8_epi16(_mm512_castsi512_si256(first)),
                        _mm512_loadu_si512(qb.cast()),
                    );
                    acc1 = madd(
                        acc1,
                        _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64::<1>(first)),
                        _mm512_loadu_si512(qb.add(32).cast()),
                    );
                    acc0 = madd(
                        acc0,
                        _mm512_cvtepi8_epi16(_mm512_castsi512_si256(second)),
                        _mm512_loadu_si512(qb.add(64).cast()),
                    );
                    acc1 = madd(
                        acc1,
                        _mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64::<1>(second)),
                        _mm512_loadu_si512(qb.add(96).cast()),
                    );
                }
            }
            _mm512_reduce_add_epi32(_mm512_add_epi32(acc0, acc1))
        }};
    }

    /// # Safety
    /// The CPU must support AVX-512F, AVX-512BW and AVX-512VNNI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn dot_avx512vnni(q: &[i16], c: &[u8]) -> i32 {
        avx512_planes_dot!(q, c, |acc, v, q| _mm512_dpwssd_epi32(acc, v, q))
    }

    /// # Safety
    /// The CPU must support AVX-512F and AVX-512BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn dot_avx512(q: &[i16], c: &[u8]) -> i32 {
        avx512_planes_dot!(q, c, |acc, v, q| _mm512_add_epi32(
            acc,
            _mm512_madd_epi16(v, q)
        ))
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn dot_avx2(q: &[i16], c: &[u8]) -> i32 {
        let n = blocks(q.len(), c.len());
        let (pq, hi, lo) = (q.as_ptr(), c.as_ptr(), c[c.len() / 2..].as_ptr());
        let low = _mm256_set1_epi8(0x0f);
        let sign = _mm256_set1_epi8(i8::MIN);
        let mut acc0 = _mm256_setzero_si256();
        let mut acc1 = _mm256_setzero_si256();
        for b in 0..n {
            for half in 0..2 {
                // SAFETY: b < n and half < 2: the 32-byte loads at b · 64 + half · 32 of each
                // plane and the query values at b · 128 + half · 32 (+ 64, each 32 long) are in
                // bounds.
                unsafe {
                    let at = b * PLANE_BLOCK + 32 * half;
                    let h = _mm256_loadu_si256(hi.add(at).cast());
                    let l = _mm256_loadu_si256(lo.add(at).cast());
                    let first = _mm256_or_si256(
                        _mm256_slli_epi16::<4>(_mm256_and_si256(h, low)),
                        _mm256_and_si256(l, low),
                    );
                    let second = _mm256_or_si256(
                        _mm256_andnot_si256(low, h),
                        _mm256_and_si256(_mm256_srli_epi16::<4>(l), low),
                    );
                    let (first, second) = (
                        _mm256_xor_si256(first, sign),
                        _mm256_xor_si256(second, sign),
                    );
                    let qb = pq.add(b * BLOCK_DIMS + 32 * half);
                    for (v, off) in [(first, 0), (second, PLANE_BLOCK)] {
                        let v0 = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(v));
                        let v1 = _mm256_cvtepi8_epi16(_mm256_extracti128_si256::<1>(v));
                        let q0 = _mm256_loadu_si256(qb.add(off).cast());
                        let q1 = _mm256_loadu_si256(qb.add(off + 16).cast());
                        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(v0, q0));
                        acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(v1, q1));
                    }
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

    /// The int8 inner product on NEON: each 16 bytes of both planes joined back into 32 values,
    /// widened to i16 and multiplied into i32 accumulators with the query.
    pub(super) fn dot_neon(q: &[i16], c: &[u8]) -> i32 {
        let n = blocks(q.len(), c.len());
        let (pq, hi, lo) = (q.as_ptr(), c.as_ptr(), c[c.len() / 2..].as_ptr());
        // SAFETY: NEON is part of the aarch64 baseline, so every intrinsic runs on any aarch64
        // CPU. For b < n and quarter < 4, the 16-byte loads at b · 64 + 16 · quarter of each
        // plane are inside the planes' first n blocks, and the 8-value query loads at
        // b · 128 + 16 · quarter (+ 64) (+ 8) inside the query's first n blocks.
        unsafe {
            let low = vdupq_n_u8(0x0f);
            let high = vdupq_n_u8(0xf0);
            let sign = vdupq_n_u8(0x80);
            let mut acc0 = vdupq_n_s32(0);
            let mut acc1 = vdupq_n_s32(0);
            for b in 0..n {
                for quarter in 0..4 {
                    let at = b * PLANE_BLOCK + 16 * quarter;
                    let h = vld1q_u8(hi.add(at));
                    let l = vld1q_u8(lo.add(at));
                    let first = vorrq_u8(vshlq_n_u8::<4>(vandq_u8(h, low)), vandq_u8(l, low));
                    let second = vorrq_u8(vandq_u8(h, high), vshrq_n_u8::<4>(l));
                    let qb = pq.add(b * BLOCK_DIMS + 16 * quarter);
                    for (v, off) in [(first, 0), (second, PLANE_BLOCK)] {
                        let v = vreinterpretq_s8_u8(veorq_u8(v, sign));
                        let v0 = vmovl_s8(vget_low_s8(v));
                        let v1 = vmovl_high_s8(v);
                        let q0 = vld1q_s16(qb.add(off));
                        let q1 = vld1q_s16(qb.add(off + 8));
                        acc0 = vmlal_s16(acc0, vget_low_s16(v0), vget_low_s16(q0));
                        acc1 = vmlal_high_s16(acc1, v0, q0);
                        acc0 = vmlal_s16(acc0, vget_low_s16(v1), vget_low_s16(q1));
                        acc1 = vmlal_high_s16(acc1, v1, q1);
                    }
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

    /// The int8 inner product in WebAssembly SIMD128: each 16 bytes of both planes joined back
    /// into 32 values, widened to i16, and multiplied with the query in pairs summed into i32
    /// lanes (`i32x4.dot_i16x8_s`: at most 2 · 127 · 127 a pair).
    pub(super) fn dot_simd128(q: &[i16], c: &[u8]) -> i32 {
        let n = blocks(q.len(), c.len());
        let (pq, hi, lo) = (q.as_ptr(), c.as_ptr(), c[c.len() / 2..].as_ptr());
        let low = u8x16_splat(0x0f);
        let sign = u8x16_splat(0x80);
        let mut acc0 = i32x4_splat(0);
        let mut acc1 = i32x4_splat(0);
        for b in 0..n {
            for quarter in 0..4 {
                let at = b * PLANE_BLOCK + 16 * quarter;
                // SAFETY: the build has SIMD128 (this module's cfg), so every instruction runs.
                // For b < n and quarter < 4, the 16-byte loads at b · 64 + 16 · quarter of each
                // plane are inside the planes' first n blocks, and the 8-value query loads at
                // b · 128 + 16 · quarter (+ 64) (+ 8) inside the query's first n blocks;
                // `v128_load` has no alignment requirement.
                unsafe {
                    let h = v128_load(hi.add(at).cast());
                    let l = v128_load(lo.add(at).cast());
                    let first = v128_or(u8x16_shl(v128_and(h, low), 4), v128_and(l, low));
                    let second = v128_or(v128_andnot(h, low), u8x16_shr(l, 4));
                    let qb = pq.add(b * BLOCK_DIMS + 16 * quarter);
                    for (v, off) in [(first, 0), (second, PLANE_BLOCK)] {
                        let v = v128_xor(v, sign);
                        let q0 = v128_load(qb.add(off).cast());
                        let q1 = v128_load(qb.add(off + 8).cast());
                        acc0 = i32x4_add(acc0, i32x4_dot_i16x8(i16x8_extend_low_i8x16(v), q0));
                        acc1 = i32x4_add(acc1, i32x4_dot_i16x8(i16x8_extend_high_i8x16(v), q1));
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

    /// Planes of `values` (a multiple of 128 long), packed as `encoding` packs them.
    fn planes(values: &[i8]) -> Vec<u8> {
        let mut out = Vec::new();
        crate::encoding::pack_int8_planes(values.iter().copied(), values.len(), &mut out);
        out
    }

    #[test]
    fn unpacking_returns_the_packed_values() {
        let v: Vec<i8> = (0..384i32).map(|i| (i * 91 % 255 - 127) as i8).collect();
        assert_eq!(unpack(&planes(&v)), v);
    }

    #[test]
    fn every_kernel_equals_the_plain_dot_product_at_every_block_count_and_extreme() {
        for blocks in [0usize, 1, 2, 3, 4, 8] {
            let n = blocks * BLOCK_DIMS;
            let q: Vec<i16> = (0..n).map(|i| ((i * 37 % 255) as i16) - 127).collect();
            let v: Vec<i8> = (0..n)
                .map(|i| ((i * 91 % 255) as i32 - 127) as i8)
                .collect();
            let want: i32 = q
                .iter()
                .zip(&v)
                .map(|(&a, &b)| i32::from(a) * i32::from(b))
                .sum();
            let p = planes(&v);
            for (name, f) in kernels() {
                assert_eq!(f(&q, &p), want, "{name} blocks={blocks}");
                // A query with fewer blocks uses the blocks both have.
                if blocks > 1 {
                    let short = &q[..n - BLOCK_DIMS];
                    let want: i32 = short
                        .iter()
                        .zip(&v)
                        .map(|(&a, &b)| i32::from(a) * i32::from(b))
                        .sum();
                    assert_eq!(f(short, &p), want, "{name} short blocks={blocks}");
                }
            }
        }
        let q = vec![-127i16; 4096];
        let p = planes(&vec![-127i8; 4096]);
        for (name, f) in kernels() {
            assert_eq!(f(&q, &p), 4096 * 127 * 127, "{name} extreme");
        }
    }
}
