//! Inner products with runtime CPU detection: f32 here, bf16 codes in [`bf16`], int8 codes in
//! [`int8`].
//!
//! f32 kernels, chosen once per process by [`kernel`]:
//! - `avx512`: AVX-512F, two 16-lane FMA accumulators, masked tail;
//! - `avx2`: AVX2 + FMA, four 8-lane accumulators, scalar tail;
//! - `neon`: aarch64's Advanced SIMD (part of every aarch64 CPU), four 4-lane FMA accumulators;
//! - `scalar`: portable, eight accumulators (the reference every other kernel is tested against).
//!
//! This module and `mmap` are the only places with `unsafe`: calling a function compiled with
//! `#[target_feature]` is only sound on a CPU that has the feature, which the dispatcher checks
//! with `is_x86_feature_detected!` before handing out the function pointer. On aarch64, NEON
//! is part of the baseline every target has, so its kernels need no detection.
#![allow(unsafe_code)]

pub mod bf16;
pub mod int8;
pub mod nibble;

use std::sync::OnceLock;

/// A dot-product kernel.
pub type DotFn = fn(&[f32], &[f32]) -> f32;

/// Which kernel [`dot`] uses on this CPU.
pub fn kernel() -> (&'static str, DotFn) {
    static CHOSEN: OnceLock<(&'static str, DotFn)> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let all = kernels();
        all[0]
    })
}

/// The widest instruction set the kernels may use. `MEMLOOP_SIMD=avx2` keeps them to AVX2 and
/// `MEMLOOP_SIMD=scalar` to portable code, so the path of an older CPU can be measured on a
/// newer one; unset (or any other value), kernels use what the CPU has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Isa {
    /// Portable code only.
    Scalar,
    /// Up to AVX2 + FMA.
    Avx2,
    /// Up to AVX-512 (and its extensions the CPU has).
    Avx512,
}

/// The cap set by `MEMLOOP_SIMD`, read once per process.
pub fn isa_cap() -> Isa {
    static CAP: OnceLock<Isa> = OnceLock::new();
    *CAP.get_or_init(|| match std::env::var("MEMLOOP_SIMD").as_deref() {
        Ok("scalar") => Isa::Scalar,
        Ok("avx2") => Isa::Avx2,
        _ => Isa::Avx512,
    })
}

/// Every kernel this CPU can run, fastest first; the last is always `scalar`.
pub fn kernels() -> Vec<(&'static str, DotFn)> {
    let mut v: Vec<(&'static str, DotFn)> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if isa_cap() >= Isa::Avx512 && std::is_x86_feature_detected!("avx512f") {
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
    if isa_cap() > Isa::Scalar {
        v.push(("neon", arm::dot_neon));
    }
    v.push(("scalar", dot_scalar));
    v
}

/// The x86-64 tiers the integer kernels ([`int8`], [`nibble`]) come in, each with its
/// instructions (aarch64's kernels need no tiers: NEON is its baseline).
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntTier {
    /// AVX-512F and BW with VNNI's dot-product instructions.
    Avx512Vnni,
    /// AVX-512F and BW.
    Avx512,
    /// AVX2.
    Avx2,
}

#[cfg(target_arch = "x86_64")]
impl IntTier {
    /// The kernel name a tier's kernels report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            IntTier::Avx512Vnni => "avx512vnni",
            IntTier::Avx512 => "avx512",
            IntTier::Avx2 => "avx2",
        }
    }
}

/// The integer-kernel tiers this CPU can run (within `MEMLOOP_SIMD`), fastest first; each
/// kernel family adds its portable kernel after them.
#[cfg(target_arch = "x86_64")]
pub(crate) fn int_tiers() -> Vec<IntTier> {
    let mut v = Vec::new();
    {
        let bw = isa_cap() >= Isa::Avx512
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw");
        if bw && std::is_x86_feature_detected!("avx512vnni") {
            v.push(IntTier::Avx512Vnni);
        }
        if bw {
            v.push(IntTier::Avx512);
        }
        if isa_cap() >= Isa::Avx2 && std::is_x86_feature_detected!("avx2") {
            v.push(IntTier::Avx2);
        }
    }
    v
}

/// Inner product of two equally long slices with the fastest kernel for this CPU.
///
/// Extra elements of the longer slice are ignored.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    (kernel().1)(a, b)
}

/// Portable inner product: eight independent accumulators, then a fixed-order sum. The same
/// bits on every CPU (the unit vectors an index stores are normalised with it); where the CPU
/// has FMA the multiply-adds are its instructions rather than libm's `fmaf` (one call per
/// element, 2% of a search's time when a query is normalised), with the same result: a fused
/// multiply-add is rounded once, whoever computes it.
pub fn dot_scalar(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
        #[target_feature(enable = "avx2,fma")]
        fn fused(a: &[f32], b: &[f32]) -> f32 {
            dot_fixed_order(a, b)
        }
        // SAFETY: `fused` needs AVX2 and FMA, both just detected on this CPU.
        return unsafe { fused(a, b) };
    }
    dot_fixed_order(a, b)
}

/// [`dot_scalar`]'s arithmetic, inlined into each build of it.
#[inline(always)]
fn dot_fixed_order(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..8 {
            acc[i] = x[i].mul_add(y[i], acc[i]);
        }
    }
    let mut tail = 0f32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail = x.mul_add(*y, tail);
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX-512F.
    pub(super) fn dot_avx512_checked(a: &[f32], b: &[f32]) -> f32 {
        // SAFETY: `kernels()` returns this function only when `is_x86_feature_detected!("avx512f")`
        // held, so the CPU executes every instruction `dot_avx512` was compiled with.
        unsafe { dot_avx512(a, b) }
    }

    /// Safe wrapper: only handed out by `kernels()` after detecting AVX2 and FMA.
    pub(super) fn dot_avx2_checked(a: &[f32], b: &[f32]) -> f32 {
        // SAFETY: `kernels()` returns this function only when AVX2 and FMA were both detected.
        unsafe { dot_avx2(a, b) }
    }

    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn dot_avx512(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc0 = _mm512_setzero_ps();
        let mut acc1 = _mm512_setzero_ps();
        let mut i = 0;
        while i + 32 <= n {
            // SAFETY: i + 32 <= n, so both 16-float loads at i and i + 16 are in bounds of a and b.
            unsafe {
                acc0 =
                    _mm512_fmadd_ps(_mm512_loadu_ps(pa.add(i)), _mm512_loadu_ps(pb.add(i)), acc0);
                acc1 = _mm512_fmadd_ps(
                    _mm512_loadu_ps(pa.add(i + 16)),
                    _mm512_loadu_ps(pb.add(i + 16)),
                    acc1,
                );
            }
            i += 32;
        }
        while i < n {
            let left = n - i;
            let mask: __mmask16 = if left >= 16 {
                0xffff
            } else {
                (1u16 << left) - 1
            };
            // SAFETY: the mask enables only lanes i..i + min(16, left), all < n; masked-off lanes
            // are not read (AVX-512 masked loads suppress faults on disabled lanes).
            unsafe {
                let x = _mm512_maskz_loadu_ps(mask, pa.add(i));
                let y = _mm512_maskz_loadu_ps(mask, pb.add(i));
                acc0 = _mm512_fmadd_ps(x, y, acc0);
            }
            i += 16;
        }
        _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1))
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        let mut acc = [_mm256_setzero_ps(); 4];
        let mut i = 0;
        while i + 32 <= n {
            for (k, slot) in acc.iter_mut().enumerate() {
                // SAFETY: i + 8k + 8 <= i + 32 <= n: the 8-float loads are in bounds.
                unsafe {
                    *slot = _mm256_fmadd_ps(
                        _mm256_loadu_ps(pa.add(i + 8 * k)),
                        _mm256_loadu_ps(pb.add(i + 8 * k)),
                        *slot,
                    );
                }
            }
            i += 32;
        }
        while i + 8 <= n {
            // SAFETY: i + 8 <= n.
            unsafe {
                acc[0] = _mm256_fmadd_ps(
                    _mm256_loadu_ps(pa.add(i)),
                    _mm256_loadu_ps(pb.add(i)),
                    acc[0],
                );
            }
            i += 8;
        }
        let s = _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]));
        let hi = _mm256_extractf128_ps(s, 1);
        let lo = _mm256_castps256_ps128(s);
        let q = _mm_add_ps(hi, lo);
        let q = _mm_add_ps(q, _mm_movehl_ps(q, q));
        let q = _mm_add_ss(q, _mm_shuffle_ps(q, q, 0b01));
        let mut sum = _mm_cvtss_f32(q);
        while i < n {
            sum = a[i].mul_add(b[i], sum);
            i += 1;
        }
        sum
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::*;

    /// f32 inner product on NEON: four 4-lane fused multiply-add accumulators, a scalar tail.
    pub(super) fn dot_neon(a: &[f32], b: &[f32]) -> f32 {
        let n = a.len().min(b.len());
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        // SAFETY: NEON is part of the aarch64 baseline (every target enables it), so each
        // intrinsic runs on any aarch64 CPU; every load reads 4 floats at i + 4k with
        // i + 4k + 4 <= n, in bounds of both slices.
        unsafe {
            let mut acc = [vdupq_n_f32(0.0); 4];
            let mut i = 0;
            while i + 16 <= n {
                for (k, slot) in acc.iter_mut().enumerate() {
                    let x = vld1q_f32(pa.add(i + 4 * k));
                    let y = vld1q_f32(pb.add(i + 4 * k));
                    *slot = vfmaq_f32(*slot, x, y);
                }
                i += 16;
            }
            while i + 4 <= n {
                acc[0] = vfmaq_f32(acc[0], vld1q_f32(pa.add(i)), vld1q_f32(pb.add(i)));
                i += 4;
            }
            let s = vaddq_f32(vaddq_f32(acc[0], acc[1]), vaddq_f32(acc[2], acc[3]));
            let mut sum = vaddvq_f32(s);
            while i < n {
                sum = a[i].mul_add(b[i], sum);
                i += 1;
            }
            sum
        }
    }
}

/// Cache lines of a vector prefetched ahead of its use.
const PREFETCH_LINES: usize = 4;

/// Hints the CPU to start loading the first cache lines of `data` (no-op off x86-64).
#[inline(always)]
pub fn prefetch(data: &[f32]) {
    prefetch_bytes_lines(bytemuck::cast_slice(data), PREFETCH_LINES);
}

/// Hints the CPU to start loading the first `lines` cache lines of `bytes` (no-op off x86-64).
#[inline(always)]
pub fn prefetch_bytes_lines(bytes: &[u8], lines: usize) {
    #[cfg(target_arch = "x86_64")]
    for line in bytes.chunks(64).take(lines) {
        // SAFETY: prefetch is a hint that never faults, whatever the address; SSE is part of the
        // x86-64 baseline.
        unsafe {
            std::arch::x86_64::_mm_prefetch(
                line.as_ptr().cast::<i8>(),
                std::arch::x86_64::_MM_HINT_T0,
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, lines);
}

/// Hints the CPU to start loading every cache line `bytes` touches (no-op off x86-64).
#[inline(always)]
pub fn prefetch_span(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    {
        let first = bytes.as_ptr();
        let lines = ((first as usize % 64) + bytes.len()).div_ceil(64);
        let aligned = first.wrapping_sub(first as usize % 64);
        for i in 0..lines {
            // SAFETY: prefetch is a hint that never faults, whatever the address; the pointer is
            // only formed with wrapping arithmetic and never dereferenced.
            unsafe {
                std::arch::x86_64::_mm_prefetch(
                    aligned.wrapping_add(64 * i).cast::<i8>(),
                    std::arch::x86_64::_MM_HINT_T0,
                )
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Hints the CPU to load the cache line holding `data[0]` (no-op off x86-64).
#[inline(always)]
pub fn prefetch_bytes<T>(data: &[T]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint that never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(data.as_ptr().cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| (((i as u32).wrapping_mul(2_654_435_761) ^ seed) % 2001) as f32 / 1000.0 - 1.0)
            .collect()
    }

    /// The fused build of `dot_scalar` (FMA instructions) gives the bits of the portable one
    /// (libm's `fmaf`, which this test calls from code compiled without FMA).
    #[test]
    fn dot_scalar_gives_the_same_bits_on_every_cpu() {
        for n in [0, 1, 7, 8, 9, 384, 385, 1024] {
            let (a, b) = (data(n, 3), data(n, 11));
            assert_eq!(
                dot_scalar(&a, &b).to_bits(),
                dot_fixed_order(&a, &b).to_bits(),
                "n {n}"
            );
        }
    }

    #[test]
    fn every_kernel_equals_scalar_at_every_length() {
        for n in (0..130).chain([255, 256, 257, 384, 768, 1023]) {
            let (a, b) = (data(n, 1), data(n, 7));
            let want = dot_scalar(&a, &b);
            let exact: f64 = a
                .iter()
                .zip(&b)
                .map(|(x, y)| f64::from(*x) * f64::from(*y))
                .sum();
            assert!(
                (f64::from(want) - exact).abs() < 1e-4 * (1.0 + exact.abs()),
                "scalar n={n}"
            );
            for (name, f) in kernels() {
                let got = f(&a, &b);
                assert!(
                    (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
                    "{name} n={n}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn scalar_is_always_available() {
        assert_eq!(kernels().last().map(|k| k.0), Some("scalar"));
    }

    /// On aarch64 the NEON kernels are chosen first (unless `MEMLOOP_SIMD=scalar`), so the
    /// equality tests above run them.
    #[cfg(target_arch = "aarch64")]
    #[test]
    fn neon_kernels_lead_on_aarch64() {
        if isa_cap() > Isa::Scalar {
            assert_eq!(kernel().0, "neon");
            assert_eq!(int8::kernel().0, "neon");
            assert_eq!(nibble::kernel().0, "neon");
            assert_eq!(bf16::kernel().0, "neon");
        }
    }
}
