//! Inner products with runtime CPU detection: f32 here, bf16 codes in [`bf16`], int8 codes in
//! [`int8`].
//!
//! f32 kernels, chosen once per process by [`kernel`], all computing [`dot_portable`]'s sum in
//! its order, so they give the same bits: the same query against the same index finds the same
//! neighbours with the same scores on every CPU, and an index written on one machine answers
//! the same on another:
//! - `avx512`: AVX-512F, two 16-lane FMA accumulators;
//! - `avx2`: AVX2 + FMA, four 8-lane accumulators;
//! - `neon`: aarch64's Advanced SIMD (part of every aarch64 CPU), eight 4-lane FMA accumulators;
//! - `simd128`: WebAssembly's 128-bit SIMD (the browser build), eight 4-lane accumulators.
//!   SIMD128 has no fused multiply-add, so each one is computed exactly in f64 lanes: the
//!   product of two f32s is exact there, the sum is rounded to odd, then to f32 (see
//!   [`wasm::fused`]);
//! - `scalar`: [`dot_portable`], 32 accumulators (the definition the others are tested equal to).
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

/// The widest instruction set the kernels may use. `MEMLOOP_SIMD=avx2` (or `avxvnni`, the
/// encoder's tier for Intel's client cores, which have no AVX-512) keeps them to AVX2 and
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
        // AVX-VNNI's CPUs (Intel's client cores) have no AVX-512: the index's AVX2 kernels.
        Ok("avx2" | "avxvnni") => Isa::Avx2,
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
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    if isa_cap() > Isa::Scalar {
        v.push(("simd128", wasm::dot_simd128));
    }
    v.push(("scalar", dot_portable));
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

/// How a portable kernel computes one fused multiply-add `x · y + z`, rounded once.
pub(crate) trait MulAdd {
    /// `x · y + z`, rounded once.
    fn mul_add(x: f32, y: f32, z: f32) -> f32;
}

/// The CPU's instruction: for code compiled with FMA enabled (the fused builds below, and
/// every aarch64 build, where FMA is part of the base architecture).
#[cfg_attr(target_arch = "wasm32", allow(dead_code))] // no FMA instruction there
pub(crate) struct Instruction;

impl MulAdd for Instruction {
    #[inline(always)]
    fn mul_add(x: f32, y: f32, z: f32) -> f32 {
        x.mul_add(y, z)
    }
}

/// Software, the same on every platform: the `libm` crate's `fmaf` (musl's algorithm), not the
/// C library's, which `f32::mul_add` calls where the build has no FMA. mingw-w64's `fmaf`
/// (Windows) is not correctly rounded: built with it, the portable kernels gave sums one ulp
/// off the fused build's under Wine (`every_kernel_equals_the_portable_one_…` failed there).
pub(crate) struct Software;

impl MulAdd for Software {
    #[inline(always)]
    fn mul_add(x: f32, y: f32, z: f32) -> f32 {
        libm::fmaf(x, y, z)
    }
}

/// The multiply-add of code built without FMA.
#[cfg(target_arch = "aarch64")]
pub(crate) type Unfused = Instruction;
/// The multiply-add of code built without FMA.
#[cfg(not(target_arch = "aarch64"))]
pub(crate) type Unfused = Software;

/// `$kernel(a, b)` for a portable kernel: on x86-64 compiled a second time with AVX2 and FMA
/// enabled and called where the CPU has them, so each multiply-add is one instruction rather
/// than a call to [`Software`]'s `fmaf`. The result is the same either way: a fused
/// multiply-add is rounded once, whoever computes it.
macro_rules! fused_where_available {
    ($kernel:ident, $a:expr, $b:expr) => {{
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            #[target_feature(enable = "avx2,fma")]
            fn fused(a: &[f32], b: &[f32]) -> f32 {
                $kernel::<Instruction>(a, b)
            }
            let (a, b): (&[f32], &[f32]) = ($a, $b);
            // SAFETY: `fused` needs AVX2 and FMA, both just detected on this CPU.
            return unsafe { fused(a, b) };
        }
        $kernel::<Unfused>($a, $b)
    }};
}

/// Portable inner product: eight independent accumulators, then a fixed-order sum. The same
/// bits on every CPU (the unit vectors an index stores are normalised with it); where the CPU
/// has FMA the multiply-adds are its instructions rather than libm's `fmaf` (one call per
/// element, 2% of a search's time when a query is normalised), with the same result: a fused
/// multiply-add is rounded once, whoever computes it.
pub fn dot_scalar(a: &[f32], b: &[f32]) -> f32 {
    fused_where_available!(dot_fixed_order, a, b)
}

/// [`dot_scalar`]'s arithmetic, inlined into each build of it.
#[inline(always)]
fn dot_fixed_order<M: MulAdd>(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..8 {
            acc[i] = M::mul_add(x[i], y[i], acc[i]);
        }
    }
    let mut tail = 0f32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail = M::mul_add(*x, *y, tail);
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// Accumulator lanes of the order every f32 kernel sums in ([`dot_portable`]).
const LANES: usize = 32;

/// The inner product every f32 kernel computes, bit for bit: element `i` is fused-multiply-added
/// into lane `i mod 32` (the lanes start at +0), then the lanes are summed by halves: lane `j`
/// plus lane `j + 16`, then `j + 8`, `j + 4`, `j + 2` and `j + 1`. Thirty-two lanes are what
/// the vector kernels keep anyway (four AVX2 registers, two AVX-512 ones, eight NEON ones), so
/// fixing the order costs them nothing; a fused multiply-add is rounded once, whoever computes
/// it, so this is the same number on every CPU. Where the CPU has FMA its instructions do the
/// multiply-adds rather than libm's `fmaf`.
///
/// Extra elements of the longer slice are ignored.
pub fn dot_portable(a: &[f32], b: &[f32]) -> f32 {
    fused_where_available!(dot_lanes, a, b)
}

/// [`dot_portable`]'s arithmetic, inlined into each build of it.
#[inline(always)]
fn dot_lanes<M: MulAdd>(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (ca, cb) = (a[..n].chunks_exact(LANES), b[..n].chunks_exact(LANES));
    let (ta, tb) = (ca.remainder(), cb.remainder());
    let mut acc = [0f32; LANES];
    for (x, y) in ca.zip(cb) {
        for j in 0..LANES {
            acc[j] = M::mul_add(x[j], y[j], acc[j]);
        }
    }
    // The last elements into the first lanes: as if the slices were padded with zeros (a lane
    // is never −0, so adding 0 · 0 would change nothing).
    for (j, (x, y)) in ta.iter().zip(tb).enumerate() {
        acc[j] = M::mul_add(*x, *y, acc[j]);
    }
    let mut width = LANES / 2;
    while width > 0 {
        for j in 0..width {
            acc[j] += acc[j + width];
        }
        width /= 2;
    }
    acc[0]
}

/// Calls `block` on each whole block of 32 floats of `a` and `b` (`n` the shorter length), then
/// once more on their last `n mod 32` zero-padded to 32 ([`padded_tails`]): each time with
/// pointers to 32 readable floats of each. The vector kernels' one loop.
#[inline(always)]
fn for_each_block(a: &[f32], b: &[f32], mut block: impl FnMut(*const f32, *const f32)) {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + LANES <= n {
        // i + 32 <= n: 32 floats of both slices from i (`wrapping_add` stays inside them).
        block(a.as_ptr().wrapping_add(i), b.as_ptr().wrapping_add(i));
        i += LANES;
    }
    if i < n {
        let (ta, tb) = padded_tails(a, b);
        block(ta.as_ptr(), tb.as_ptr());
    }
}

/// The last `n mod 32` elements of `a` and `b` (`n` the shorter length), zero-padded to 32:
/// the vector kernels run them as one more whole block.
#[inline(always)]
fn padded_tails(a: &[f32], b: &[f32]) -> ([f32; LANES], [f32; LANES]) {
    let n = a.len().min(b.len());
    let from = n - n % LANES;
    let (mut ta, mut tb) = ([0f32; LANES], [0f32; LANES]);
    ta[..n - from].copy_from_slice(&a[from..n]);
    tb[..n - from].copy_from_slice(&b[from..n]);
    (ta, tb)
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

    /// [`super::dot_portable`] in two 16-lane accumulators (lanes 0–15 and 16–31).
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    unsafe fn dot_avx512(a: &[f32], b: &[f32]) -> f32 {
        let mut acc0 = _mm512_setzero_ps();
        let mut acc1 = _mm512_setzero_ps();
        let block = |pa: *const f32, pb: *const f32, acc0: &mut __m512, acc1: &mut __m512| {
            // SAFETY: `for_each_block` passes pointers to 32 readable floats each.
            unsafe {
                *acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(pa), _mm512_loadu_ps(pb), *acc0);
                *acc1 = _mm512_fmadd_ps(
                    _mm512_loadu_ps(pa.add(16)),
                    _mm512_loadu_ps(pb.add(16)),
                    *acc1,
                );
            }
        };
        super::for_each_block(a, b, |pa, pb| block(pa, pb, &mut acc0, &mut acc1));
        // Lanes j + j + 16, then the upper eight onto the lower eight (j + 8).
        let s = _mm512_add_ps(acc0, acc1);
        let s = _mm512_add_ps(s, _mm512_shuffle_f32x4::<0b11_10_11_10>(s, s));
        halves_of_eight(_mm512_castps512_ps256(s))
    }

    /// The sum of eight lanes by halves (j + j + 4, j + j + 2, j + j + 1), [`super::dot_portable`]'s
    /// last three steps.
    #[inline(always)]
    fn halves_of_eight(v: __m256) -> f32 {
        // SAFETY: AVX is implied by both callers' features (AVX-512F, AVX2); registers only.
        unsafe {
            let q = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
            let q = _mm_add_ps(q, _mm_movehl_ps(q, q));
            let q = _mm_add_ss(q, _mm_shuffle_ps::<0b01>(q, q));
            _mm_cvtss_f32(q)
        }
    }

    /// [`super::dot_portable`] in four 8-lane accumulators (lanes 0–7, 8–15, 16–23, 24–31).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    unsafe fn dot_avx2(a: &[f32], b: &[f32]) -> f32 {
        let mut acc = [_mm256_setzero_ps(); 4];
        let block = |pa: *const f32, pb: *const f32, acc: &mut [__m256; 4]| {
            for (k, slot) in acc.iter_mut().enumerate() {
                // SAFETY: `for_each_block` passes pointers to 32 readable floats each; this
                // reads 8 of them at 8k.
                unsafe {
                    *slot = _mm256_fmadd_ps(
                        _mm256_loadu_ps(pa.add(8 * k)),
                        _mm256_loadu_ps(pb.add(8 * k)),
                        *slot,
                    );
                }
            }
        };
        super::for_each_block(a, b, |pa, pb| block(pa, pb, &mut acc));
        // Lanes j + j + 16 (registers 0 + 2, 1 + 3), then j + j + 8.
        let s = _mm256_add_ps(_mm256_add_ps(acc[0], acc[2]), _mm256_add_ps(acc[1], acc[3]));
        halves_of_eight(s)
    }
}

#[cfg(target_arch = "aarch64")]
mod arm {
    use std::arch::aarch64::*;

    /// [`super::dot_portable`] in eight 4-lane fused multiply-add accumulators (lanes 4k to
    /// 4k + 3 in register k).
    pub(super) fn dot_neon(a: &[f32], b: &[f32]) -> f32 {
        // SAFETY: NEON is part of the aarch64 baseline (every target enables it), so each
        // intrinsic here and below runs on any aarch64 CPU; registers only.
        let mut acc = [unsafe { vdupq_n_f32(0.0) }; 8];
        let block = |pa: *const f32, pb: *const f32, acc: &mut [float32x4_t; 8]| {
            for (k, slot) in acc.iter_mut().enumerate() {
                // SAFETY: `for_each_block` passes pointers to 32 readable floats each; this
                // reads 4 of them at 4k.
                unsafe {
                    *slot = vfmaq_f32(*slot, vld1q_f32(pa.add(4 * k)), vld1q_f32(pb.add(4 * k)))
                };
            }
        };
        super::for_each_block(a, b, |pa, pb| block(pa, pb, &mut acc));
        // SAFETY: registers only. Lanes j + j + 16 (registers k + k + 4), j + j + 8, j + j + 4,
        // then j + j + 2 and j + j + 1 across the last register.
        unsafe {
            let h: [float32x4_t; 4] = std::array::from_fn(|k| vaddq_f32(acc[k], acc[k + 4]));
            let q = vaddq_f32(vaddq_f32(h[0], h[2]), vaddq_f32(h[1], h[3]));
            vpadds_f32(vadd_f32(vget_low_f32(q), vget_high_f32(q)))
        }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod wasm {
    use std::arch::wasm32::*;

    /// `x · y + c` in each f64 lane, rounded to odd: the nearest f64 whose last bit is set
    /// when the sum is not exact. For `x`, `y` and `c` widened from f32, `x · y` is exact (48
    /// significant bits), the sum's rounding error `e` is exact too (Knuth's two-sum), and a
    /// value rounded to odd on 53 bits then to nearest on f32's 24 is the exact value rounded
    /// to nearest once (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums:
    /// proved algorithms using rounding to odd", IEEE TC 2008: it needs two bits more).
    #[inline(always)]
    fn mul_add_to_odd(x: v128, y: v128, c: v128) -> v128 {
        let p = f64x2_mul(x, y);
        let s = f64x2_add(p, c);
        let bb = f64x2_sub(s, p);
        let e = f64x2_add(f64x2_sub(p, f64x2_sub(s, bb)), f64x2_sub(c, bb));
        let inexact = v128_not(f64x2_eq(e, f64x2_splat(0.0)));
        let even = i64x2_eq(v128_and(s, i64x2_splat(1)), i64x2_splat(0));
        // One unit of the last place away from zero when `e` has `s`'s sign, else towards it:
        // +1 or -1 on the bits (the sign bit of `e ^ s`, spread, or'ed with 1).
        let step = v128_or(i64x2_shr(v128_xor(e, s), 63), i64x2_splat(1));
        i64x2_add(s, v128_and(step, v128_and(inexact, even)))
    }

    /// `x · y + c` in each of four f32 lanes, rounded once: what a fused multiply-add
    /// instruction gives, which SIMD128 lacks.
    #[inline(always)]
    pub(crate) fn fused(x: v128, y: v128, c: v128) -> v128 {
        let high = |v: v128| f64x2_promote_low_f32x4(i32x4_shuffle::<2, 3, 2, 3>(v, v));
        let lo = mul_add_to_odd(
            f64x2_promote_low_f32x4(x),
            f64x2_promote_low_f32x4(y),
            f64x2_promote_low_f32x4(c),
        );
        let hi = mul_add_to_odd(high(x), high(y), high(c));
        i32x4_shuffle::<0, 1, 4, 5>(f32x4_demote_f64x2_zero(lo), f32x4_demote_f64x2_zero(hi))
    }

    /// [`super::dot_portable`] in eight 4-lane accumulators (lanes 4k to 4k + 3 in
    /// accumulator k), each multiply-add [`fused`].
    pub(super) fn dot_simd128(a: &[f32], b: &[f32]) -> f32 {
        let mut acc = [f32x4_splat(0.0); 8];
        let block = |pa: *const f32, pb: *const f32, acc: &mut [v128; 8]| {
            for (k, slot) in acc.iter_mut().enumerate() {
                // SAFETY: the build has SIMD128 (this module's cfg); `for_each_block` passes
                // pointers to 32 readable floats each, and this reads 4 of them at 4k
                // (`v128_load` has no alignment requirement).
                unsafe {
                    *slot = fused(
                        v128_load(pa.add(4 * k).cast()),
                        v128_load(pb.add(4 * k).cast()),
                        *slot,
                    )
                };
            }
        };
        super::for_each_block(a, b, |pa, pb| block(pa, pb, &mut acc));
        // Lanes j + j + 16 (accumulators k + k + 4), j + j + 8, j + j + 4, then j + j + 2 and
        // j + j + 1 across the last vector.
        let h: [v128; 4] = std::array::from_fn(|k| f32x4_add(acc[k], acc[k + 4]));
        let q = f32x4_add(f32x4_add(h[0], h[2]), f32x4_add(h[1], h[3]));
        let pair = f32x4_add(q, i32x4_shuffle::<2, 3, 2, 3>(q, q));
        f32x4_extract_lane::<0>(pair) + f32x4_extract_lane::<1>(pair)
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
    /// (the software `fmaf`, which this test calls from code compiled without FMA).
    #[test]
    fn dot_scalar_gives_the_same_bits_on_every_cpu() {
        for n in [0, 1, 7, 8, 9, 384, 385, 1024] {
            let (a, b) = (data(n, 3), data(n, 11));
            assert_eq!(
                dot_scalar(&a, &b).to_bits(),
                dot_fixed_order::<Unfused>(&a, &b).to_bits(),
                "n {n}"
            );
        }
    }

    /// Every kernel gives [`dot_portable`]'s bits, so an index answers the same on every CPU.
    #[test]
    fn every_kernel_equals_the_portable_one_bit_for_bit_at_every_length() {
        for n in (0..130).chain([255, 256, 257, 384, 768, 1023]) {
            let (a, b) = (data(n, 1), data(n, 7));
            let want = dot_portable(&a, &b);
            assert_eq!(
                want.to_bits(),
                dot_lanes::<Unfused>(&a, &b).to_bits(),
                "fused build n={n}"
            );
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
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{name} n={n}: {got} vs {want}"
                );
                // Longer slices: the extra elements are ignored.
                let mut longer = b.clone();
                longer.extend([0.5, -2.0]);
                assert_eq!(f(&a, &longer).to_bits(), want.to_bits(), "{name} n={n}+2");
            }
        }
    }

    #[test]
    fn scalar_is_always_available() {
        assert_eq!(kernels().last().map(|k| k.0), Some("scalar"));
    }

    /// The browser build's fused multiply-add ([`wasm::fused`]) rounds once, as the software
    /// `fmaf` does, on values of every magnitude and on the halfway cases where rounding twice
    /// (to f64, then to f32) would go wrong.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn the_simd128_multiply_add_is_rounded_once() {
        use std::arch::wasm32::*;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Random bits over a band of exponents, sums that cancel (c = -x·y and its neighbour),
        // and the hard case: x·y = (1 + 2^-j)(1 - 2^-j) · half a unit of c's last place, a hair
        // (2^-2j of it) below the halfway point between c and its neighbour. Rounded to f64
        // first, the sum lands on that halfway point, and then ties to even: one f32 unit off
        // whenever c's last bit is set.
        let finite = |bits: u32| {
            let v = f32::from_bits(bits & 0x8fff_ffff | 0x3000_0000);
            if v.is_finite() {
                v
            } else {
                1.0
            }
        };
        for i in 0..200_000 {
            let r = next();
            let (x, y) = (finite(r as u32), finite((r >> 32) as u32));
            let c = match i % 4 {
                0 => finite(next() as u32),
                1 => -(x * y),
                2 => f32::from_bits((x * y).to_bits() ^ 1),
                _ => f32::from_bits((next() as u32) & 0x807f_ffff | 0x3f80_0000),
            };
            let (x, y) = if i % 4 == 3 {
                let j = 13 + (r % 11) as i32;
                let half_unit = 2f32.powi(-24);
                let (sx, sy) = if r & 64 == 0 {
                    (1.0, 1.0)
                } else {
                    (-1.0, -1.0)
                };
                let sign = if c > 0.0 { 1.0 } else { -1.0 };
                (
                    sx * sign * (1.0 + 2f32.powi(-j)) * half_unit.sqrt(),
                    sy * (1.0 - 2f32.powi(-j)) * half_unit.sqrt(),
                )
            } else {
                (x, y)
            };
            let lanes = |v: f32| f32x4(v, -v, v, -v);
            let got = wasm::fused(lanes(x), lanes(y), lanes(c));
            let want = [
                libm::fmaf(x, y, c),
                libm::fmaf(-x, -y, -c),
                libm::fmaf(x, y, c),
                libm::fmaf(-x, -y, -c),
            ];
            let got = [
                f32x4_extract_lane::<0>(got),
                f32x4_extract_lane::<1>(got),
                f32x4_extract_lane::<2>(got),
                f32x4_extract_lane::<3>(got),
            ];
            for (g, w) in got.iter().zip(want) {
                assert_eq!(
                    g.to_bits(),
                    w.to_bits(),
                    "fma({x:e}, {y:e}, {c:e}): {g:e} vs {w:e}"
                );
            }
        }
    }

    /// In the browser build the SIMD128 kernels are chosen first (unless
    /// `MEMLOOP_SIMD=scalar`), so the equality tests above run them.
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    #[test]
    fn simd128_kernels_lead_in_the_browser_build() {
        if isa_cap() > Isa::Scalar {
            assert_eq!(kernel().0, "simd128");
            assert_eq!(int8::kernel().0, "simd128");
            assert_eq!(nibble::kernel().0, "simd128");
            assert_eq!(bf16::kernel().0, "simd128");
        }
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
