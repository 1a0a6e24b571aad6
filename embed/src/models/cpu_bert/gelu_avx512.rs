//! GELU (the erf form) in AVX-512 intrinsics.
//!
//! The portable pass (`kernels::gelu_erf`, compiled for AVX-512 by `multiversion!`) computes
//! `kernels::erf`'s rational function with separate multiplies and adds (Rust does not fuse
//! them) and a full-precision division, which alone takes about as long as the rest. Here the
//! same polynomials run as fused multiply-adds and the division as `vrcp14ps` refined by one
//! Newton step (about 2⁻²⁸ relative, below f32's rounding). Measured on 200-token chunks at
//! int8, the pass took 15% fewer samples: it waited on memory more than on the division
//! (`feed_forward_int8` in `mod.rs` now keeps its rows in cache).
#![allow(unsafe_code)]

use std::arch::x86_64::*;

use super::kernels::erf_poly::{P, Q};

/// Floats per register.
const L: usize = 16;

/// `x·½(1 + erf(x/√2))` for every value of `xs`, in place (the last partial register masked).
#[target_feature(enable = "avx512f,fma")]
pub(super) fn gelu_erf(xs: &mut [f32]) {
    let mut chunks = xs.chunks_exact_mut(L);
    for c in &mut chunks {
        // SAFETY: `c` holds 16 floats; an unaligned load and store.
        unsafe { _mm512_storeu_ps(c.as_mut_ptr(), gelu16(_mm512_loadu_ps(c.as_ptr()))) };
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let mask: __mmask16 = (1u16 << tail.len()) - 1;
        // SAFETY: the mask's lanes are the tail's `len < 16` floats: masked lanes are neither
        // read nor written.
        unsafe {
            let x = _mm512_maskz_loadu_ps(mask, tail.as_ptr());
            _mm512_mask_storeu_ps(tail.as_mut_ptr(), mask, gelu16(x));
        }
    }
}

/// GELU of 16 values: `kernels::erf` (Eigen's rational function, clamped to ±4) with fused
/// multiply-adds and a refined reciprocal for its division.
#[target_feature(enable = "avx512f,fma")]
fn gelu16(x: __m512) -> __m512 {
    let z = _mm512_mul_ps(x, _mm512_set1_ps(std::f32::consts::FRAC_1_SQRT_2));
    let z = _mm512_min_ps(_mm512_max_ps(z, _mm512_set1_ps(-4.0)), _mm512_set1_ps(4.0));
    let z2 = _mm512_mul_ps(z, z);
    let mut p = _mm512_set1_ps(P[0]);
    for &c in &P[1..] {
        p = _mm512_fmadd_ps(p, z2, _mm512_set1_ps(c));
    }
    let mut q = _mm512_set1_ps(Q[0]);
    for &c in &Q[1..] {
        q = _mm512_fmadd_ps(q, z2, _mm512_set1_ps(c));
    }
    // 1/q: q lies in [−0.031, −0.014] on [−4, 4], far from zero. r' = r(2 − qr).
    let r = _mm512_rcp14_ps(q);
    let r = _mm512_mul_ps(r, _mm512_fnmadd_ps(q, r, _mm512_set1_ps(2.0)));
    let erf = _mm512_mul_ps(_mm512_mul_ps(z, p), r);
    let half = _mm512_mul_ps(x, _mm512_set1_ps(0.5));
    _mm512_fmadd_ps(half, erf, half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_matches_the_portable_pass() {
        if !(std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("fma"))
        {
            eprintln!("no AVX-512 on this CPU: the AVX-512 GELU does not run");
            return;
        }
        // SAFETY: AVX-512 F and FMA were detected above.
        super::super::kernels::check_gelu_kernel(|xs| unsafe { gelu_erf(xs) });
    }
}
