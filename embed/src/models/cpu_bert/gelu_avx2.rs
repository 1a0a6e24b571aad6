//! GELU (the erf form) in AVX2 and FMA intrinsics, for CPUs without AVX-512 (AMD's Zen 2 and
//! Zen 3, Intel's client cores).
//!
//! The same rational function as `kernels::erf` and `gelu_avx512.rs`, eight lanes wide, with
//! fused multiply-adds; the division is `vrcpps` (about 2⁻¹² relative) refined by two Newton
//! steps (below f32's rounding), where the portable pass compiled for AVX2 divides in full.
#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::kernels::erf_poly::{P, Q};

/// Floats per register.
const L: usize = 8;

/// `x·½(1 + erf(x/√2))` for every value of `xs`, in place (the last partial register through
/// a copy).
#[target_feature(enable = "avx2,fma")]
pub(super) fn gelu_erf(xs: &mut [f32]) {
    let mut chunks = xs.chunks_exact_mut(L);
    for c in &mut chunks {
        // SAFETY: `c` holds 8 floats; an unaligned load and store.
        unsafe { _mm256_storeu_ps(c.as_mut_ptr(), gelu8(_mm256_loadu_ps(c.as_ptr()))) };
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let mut buf = [0f32; L];
        buf[..tail.len()].copy_from_slice(tail);
        // SAFETY: `buf` holds 8 floats; an unaligned load and store.
        unsafe { _mm256_storeu_ps(buf.as_mut_ptr(), gelu8(_mm256_loadu_ps(buf.as_ptr()))) };
        tail.copy_from_slice(&buf[..tail.len()]);
    }
}

/// GELU of 8 values: `kernels::erf` (Eigen's rational function, clamped to ±4) with fused
/// multiply-adds and a refined reciprocal for its division.
#[target_feature(enable = "avx2,fma")]
fn gelu8(x: __m256) -> __m256 {
    let z = _mm256_mul_ps(x, _mm256_set1_ps(std::f32::consts::FRAC_1_SQRT_2));
    let z = _mm256_min_ps(_mm256_max_ps(z, _mm256_set1_ps(-4.0)), _mm256_set1_ps(4.0));
    let z2 = _mm256_mul_ps(z, z);
    let mut p = _mm256_set1_ps(P[0]);
    for &c in &P[1..] {
        p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(c));
    }
    let mut q = _mm256_set1_ps(Q[0]);
    for &c in &Q[1..] {
        q = _mm256_fmadd_ps(q, z2, _mm256_set1_ps(c));
    }
    // 1/q: q lies in [−0.031, −0.014] on [−4, 4], far from zero. r' = r(2 − qr), twice:
    // 2⁻¹² → 2⁻²⁴ → below f32's rounding.
    let two = _mm256_set1_ps(2.0);
    let r = _mm256_rcp_ps(q);
    let r = _mm256_mul_ps(r, _mm256_fnmadd_ps(q, r, two));
    let r = _mm256_mul_ps(r, _mm256_fnmadd_ps(q, r, two));
    let erf = _mm256_mul_ps(_mm256_mul_ps(z, p), r);
    let half = _mm256_mul_ps(x, _mm256_set1_ps(0.5));
    _mm256_fmadd_ps(half, erf, half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_matches_the_portable_pass() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma"))
        {
            eprintln!("no AVX2 and FMA on this CPU: the AVX2 GELU does not run");
            return;
        }
        // SAFETY: AVX2 and FMA were detected above.
        super::super::kernels::check_gelu_kernel(|xs| unsafe { gelu_erf(xs) });
    }

    #[test]
    fn every_tail_length_is_computed() {
        if !(std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma"))
        {
            return;
        }
        for n in 0..=17 {
            let xs: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 2.0).collect();
            let mut want = xs.clone();
            super::super::kernels::gelu_erf(&mut want);
            let mut got = xs.clone();
            // SAFETY: AVX2 and FMA were detected above.
            unsafe { gelu_erf(&mut got) };
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 2e-6, "{n} values: {g} against {w}");
            }
        }
    }
}
