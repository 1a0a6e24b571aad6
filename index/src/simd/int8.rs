//! Integer inner product of a widened int8 query with an int8 code, for int8-quantised indexes.
//!
//! The query is quantised once per search and widened to `i16`; each stored code is `i8` (read
//! from bytes, so any alignment works). Products of two values in -127..=127 summed over at most
//! 65,536 dimensions stay below 2^31, so no accumulator can overflow.
//!
//! Kernels, chosen once per process by [`kernel`]:
//! - `avx512vnni`: AVX-512BW widening + VNNI `vpdpwssd` (multiply pairs and add in one step);
//! - `avx512`: AVX-512BW widening + `vpmaddwd`, two 32-lane accumulators;
//! - `avx2`: AVX2 widening + `vpmaddwd`, two 16-lane accumulators;
//! - `scalar`: portable (the reference the others are tested against).
#![allow(unsafe_code)]

use std::sync::OnceLock;

/// An int8 dot-product kernel: `Σ query[i] · (code[i] as i8)` over the shorter length.
pub type DotI8Fn = fn(&[i16], &[u8]) -> i32;

/// The kernel [`dot_i8`] uses on this CPU.
pub fn kernel() -> (&'static str, DotI8Fn) {
    static CHOSEN: OnceLock<(&'static str, DotI8Fn)> = OnceLock::new();
    *CHOSEN.get_or_init(|| kernels()[0])
}

/// Every int8 kernel this CPU can run, fastest first; the last is always `scalar`.
pub fn kernels() -> Vec<(&'static str, DotI8Fn)> {
    let mut v: Vec<(&'static str, DotI8Fn)> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        use super::{isa_cap, Isa};
        let bw = isa_cap() >= Isa::Avx512
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw");
        if bw && std::is_x86_feature_detected!("avx512vnni") {
            v.push(("avx512vnni", x86::dot_avx512vnni_checked));
        }
        if bw {
            v.push(("avx512", x86::dot_avx512_checked));
        }
        if isa_cap() >= Isa::Avx2 && std::is_x86_feature_detected!("avx2") {
            v.push(("avx2", x86::dot_avx2_checked));
        }
    }
    v.push(("scalar", dot_i8_scalar));
    v
}

/// Integer inner product with the fastest kernel for this CPU.
#[inline]
pub fn dot_i8(query: &[i16], code: &[u8]) -> i32 {
    (kernel().1)(query, code)
}

/// Portable integer inner product.
pub fn dot_i8_scalar(query: &[i16], code: &[u8]) -> i32 {
    query
        .iter()
        .zip(code)
        .map(|(&q, &c)| i32::from(q) * i32::from(c as i8))
        .sum()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

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

    fn tail(q: &[i16], c: &[u8], from: usize) -> i32 {
        super::dot_i8_scalar(q.get(from..).unwrap_or(&[]), c.get(from..).unwrap_or(&[]))
    }

    /// # Safety
    /// The CPU must support AVX-512F, AVX-512BW and AVX-512VNNI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    unsafe fn dot_avx512vnni(q: &[i16], c: &[u8]) -> i32 {
        let n = q.len().min(c.len());
        let (pq, pc) = (q.as_ptr(), c.as_ptr());
        let mut acc0 = _mm512_setzero_si512();
        let mut acc1 = _mm512_setzero_si512();
        let mut i = 0;
        while i + 64 <= n {
            // SAFETY: i + 64 <= n: the 32-byte code loads at i and i + 32 and the 32-lane i16
            // query loads at i and i + 32 are in bounds of c and q.
            unsafe {
                let c0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pc.add(i).cast()));
                let c1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pc.add(i + 32).cast()));
                acc0 = _mm512_dpwssd_epi32(acc0, c0, _mm512_loadu_si512(pq.add(i).cast()));
                acc1 = _mm512_dpwssd_epi32(acc1, c1, _mm512_loadu_si512(pq.add(i + 32).cast()));
            }
            i += 64;
        }
        while i + 32 <= n {
            // SAFETY: i + 32 <= n.
            unsafe {
                let c0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pc.add(i).cast()));
                acc0 = _mm512_dpwssd_epi32(acc0, c0, _mm512_loadu_si512(pq.add(i).cast()));
            }
            i += 32;
        }
        _mm512_reduce_add_epi32(_mm512_add_epi32(acc0, acc1)) + tail(q, c, i)
    }

    /// # Safety
    /// The CPU must support AVX-512F and AVX-512BW.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn dot_avx512(q: &[i16], c: &[u8]) -> i32 {
        let n = q.len().min(c.len());
        let (pq, pc) = (q.as_ptr(), c.as_ptr());
        let mut acc0 = _mm512_setzero_si512();
        let mut acc1 = _mm512_setzero_si512();
        let mut i = 0;
        while i + 64 <= n {
            // SAFETY: i + 64 <= n, as in the VNNI kernel.
            unsafe {
                let c0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pc.add(i).cast()));
                let c1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pc.add(i + 32).cast()));
                let q0 = _mm512_loadu_si512(pq.add(i).cast());
                let q1 = _mm512_loadu_si512(pq.add(i + 32).cast());
                acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(c0, q0));
                acc1 = _mm512_add_epi32(acc1, _mm512_madd_epi16(c1, q1));
            }
            i += 64;
        }
        while i + 32 <= n {
            // SAFETY: i + 32 <= n.
            unsafe {
                let c0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pc.add(i).cast()));
                let q0 = _mm512_loadu_si512(pq.add(i).cast());
                acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(c0, q0));
            }
            i += 32;
        }
        _mm512_reduce_add_epi32(_mm512_add_epi32(acc0, acc1)) + tail(q, c, i)
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn dot_avx2(q: &[i16], c: &[u8]) -> i32 {
        let n = q.len().min(c.len());
        let (pq, pc) = (q.as_ptr(), c.as_ptr());
        let mut acc0 = _mm256_setzero_si256();
        let mut acc1 = _mm256_setzero_si256();
        let mut i = 0;
        while i + 32 <= n {
            // SAFETY: i + 32 <= n: the 16-byte code loads at i and i + 16 and the 16-lane i16
            // query loads at i and i + 16 are in bounds.
            unsafe {
                let c0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pc.add(i).cast()));
                let c1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pc.add(i + 16).cast()));
                let q0 = _mm256_loadu_si256(pq.add(i).cast());
                let q1 = _mm256_loadu_si256(pq.add(i + 16).cast());
                acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(c0, q0));
                acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(c1, q1));
            }
            i += 32;
        }
        while i + 16 <= n {
            // SAFETY: i + 16 <= n.
            unsafe {
                let c0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pc.add(i).cast()));
                let q0 = _mm256_loadu_si256(pq.add(i).cast());
                acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(c0, q0));
            }
            i += 16;
        }
        let s = _mm256_add_epi32(acc0, acc1);
        let s = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256::<1>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s) + tail(q, c, i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_equals_scalar_at_every_length_and_extreme() {
        for n in (0..140).chain([255, 256, 257, 384, 768, 1023]) {
            let q: Vec<i16> = (0..n).map(|i| ((i * 37 % 255) as i16) - 127).collect();
            let c: Vec<u8> = (0..n)
                .map(|i| ((i * 91 % 255) as i32 - 127) as i8 as u8)
                .collect();
            let want = dot_i8_scalar(&q, &c);
            for (name, f) in kernels() {
                assert_eq!(f(&q, &c), want, "{name} n={n}");
                // Unequal lengths use the shorter one.
                assert_eq!(
                    f(&q, &c[..n / 2]),
                    dot_i8_scalar(&q[..n / 2], &c),
                    "{name} half n={n}"
                );
            }
        }
        let q = vec![-127i16; 4096];
        let c = vec![(-127i8) as u8; 4096];
        for (name, f) in kernels() {
            assert_eq!(f(&q, &c), 4096 * 127 * 127, "{name} extreme");
        }
    }
}
