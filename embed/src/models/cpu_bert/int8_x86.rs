//! The int8 products' kernels on x86-64 (see `int8.rs` for the panel layout and the scalar
//! reference they equal bit for bit): AVX-512 VNNI's 512-bit `vpdpbusd`, AVX-VNNI's 256-bit
//! one, and AVX2 alone (`vpmaddubsw` on the row's magnitudes, then `vpmaddwd`).
#![allow(unsafe_code)]

use super::int8_block::{Columns, Tile, ROWS};
use super::panels::PANEL;

/// `int8.rs`'s `block_scalar` with `vpdpbusd`: per group of 4 inputs, each row's 4 bytes broadcast to 16
/// lanes and multiplied into the panel's four 16-column registers; the epilogue in vectors
/// (the same operations in the same order: subtract, convert, multiply, add).
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VNNI; `panel` must hold `64 · k4` bytes, `xs`
/// `xscale.len() · k4` bytes, `xscale.len() ≤ 4`, each of `cols`' slices 64 entries, and
/// `out` `xscale.len()` rows of 64 floats that only this call touches.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub(super) unsafe fn block_vnni512(
    panel: &[i8],
    xs: &[u8],
    k4: usize,
    xscale: &[f32],
    cols: &Columns,
    out: Tile,
) {
    use std::arch::x86_64::*;
    let block = xscale.len();
    let mut sums = [[_mm512_setzero_si512(); 4]; ROWS];
    let w = panel.as_ptr();
    let x = xs.as_ptr();
    for g in 0..k4 / 4 {
        // SAFETY: group g's 256 bytes start at g · 256 < 64 · k4 = panel.len() (g < k4/4);
        // unaligned loads.
        let (w0, w1, w2, w3) = unsafe {
            let at = w.add(g * PANEL * 4).cast::<__m512i>();
            (
                _mm512_loadu_si512(at),
                _mm512_loadu_si512(at.add(1)),
                _mm512_loadu_si512(at.add(2)),
                _mm512_loadu_si512(at.add(3)),
            )
        };
        for (r, s) in sums.iter_mut().enumerate().take(block) {
            // SAFETY: bytes r · k4 + 4g .. + 4 lie inside `xs` (r < block, 4g + 4 ≤ k4).
            let four = unsafe { x.add(r * k4 + g * 4).cast::<i32>().read_unaligned() };
            let a = _mm512_set1_epi32(four);
            s[0] = _mm512_dpbusd_epi32(s[0], a, w0);
            s[1] = _mm512_dpbusd_epi32(s[1], a, w1);
            s[2] = _mm512_dpbusd_epi32(s[2], a, w2);
            s[3] = _mm512_dpbusd_epi32(s[3], a, w3);
        }
    }
    for (r, (s, &xsc)) in sums.iter().zip(xscale).enumerate() {
        let xsc = _mm512_set1_ps(xsc);
        let o = out.row(r);
        for (j, acc) in s.iter().enumerate() {
            // SAFETY: each of `cols`' slices holds 64 entries and row r of `out` 64 floats
            // (the caller's contract); register j covers entries 16j .. 16j + 16.
            unsafe {
                let off = _mm512_loadu_si512(cols.offset.as_ptr().add(16 * j).cast::<__m512i>());
                let scale = _mm512_mul_ps(xsc, _mm512_loadu_ps(cols.scale.as_ptr().add(16 * j)));
                let bias = _mm512_loadu_ps(cols.bias.as_ptr().add(16 * j));
                let v = _mm512_cvtepi32_ps(_mm512_sub_epi32(*acc, off));
                let v = _mm512_add_ps(_mm512_mul_ps(v, scale), bias);
                _mm512_storeu_ps(o.add(16 * j), v);
            }
        }
    }
}

/// A 256-bit kernel: two rows at a time, each half panel (32 columns) in four 8-column
/// registers per row; the epilogue in vectors, in the same order as the reference. `$dot`
/// adds one group's 4-input products per column to a register; `$signed` says whether its sums
/// are already signed (the unsigned ones have `128 · colsum` taken off, as the reference does);
/// `$form` turns a row's broadcast bytes into what `$dot` takes, once for the four registers.
macro_rules! block_256 {
    ($(#[$meta:meta])* $name:ident, $features:literal, $form:ident, $dot:ident, $signed:expr) => {
        $(#[$meta])*
                #[target_feature(enable = $features)]
        pub(super) unsafe fn $name(
            panel: &[i8],
            xs: &[u8],
            k4: usize,
            xscale: &[f32],
            cols: &Columns,
            out: Tile,
        ) {
            use std::arch::x86_64::*;

            /// One half panel's sums over `R` rows: each weight register loaded once per group
            /// and used by every row before the next is loaded, so the accumulators, one
            /// weight and the rows' forms stay in registers (15 at `R = 2`: no spill).
            ///
            /// # Safety
            /// The CPU must have `$features`; `w` must point at a half panel's first group
            /// (`k4 / 4` groups 256 bytes apart, 128 bytes each read), `x` at `R` rows of `k4`
            /// bytes.
            #[target_feature(enable = $features)]
            #[inline]
            unsafe fn sums<const R: usize>(
                w: *const i8,
                x: *const u8,
                k4: usize,
            ) -> [[__m256i; 4]; R] {
                let mut sums = [[_mm256_setzero_si256(); 4]; R];
                for g in 0..k4 / 4 {
                    // SAFETY: this function has the features `$form` needs.
                    let mut a = [unsafe { $form(_mm256_setzero_si256()) }; R];
                    for (r, a) in a.iter_mut().enumerate() {
                        // SAFETY: bytes r · k4 + 4g .. + 4 lie inside the caller's `R` rows;
                        // this function has the features `$form` needs.
                        *a = unsafe {
                            let four = x.add(r * k4 + g * 4).cast::<i32>().read_unaligned();
                            $form(_mm256_set1_epi32(four))
                        };
                    }
                    // SAFETY: group g's 128 bytes of this half lie at g · 256 from `w` (the
                    // caller's contract).
                    let at = unsafe { w.add(g * PANEL * 4).cast::<__m256i>() };
                    for j in 0..4 {
                        // SAFETY: register j of the group's 128 bytes; unaligned load.
                        let wj = unsafe { _mm256_loadu_si256(at.add(j)) };
                        for (s, &a) in sums.iter_mut().zip(&a) {
                            // SAFETY: this function has the features `$dot` needs.
                            s[j] = unsafe { $dot(s[j], a, wj) };
                        }
                    }
                }
                sums
            }

            let w = panel.as_ptr();
            let x = xs.as_ptr();
            for r0 in (0..xscale.len()).step_by(2) {
                let rows = 2.min(xscale.len() - r0);
                for half in 0..2 {
                    let (two, one);
                    // SAFETY: this half of the panel starts 128 · half bytes into its first
                    // group (`panel` holds 64 · k4 bytes); rows r0 .. r0 + rows lie in `xs`;
                    // this function has the features `sums` needs.
                    let sums: &[[__m256i; 4]] = unsafe {
                        let (w, x) = (w.add(half * 128), x.add(r0 * k4));
                        if rows == 2 {
                            two = sums::<2>(w, x, k4);
                            &two
                        } else {
                            one = sums::<1>(w, x, k4);
                            &one
                        }
                    };
                    for (r, s) in sums.iter().enumerate() {
                        let xsc = _mm256_set1_ps(xscale[r0 + r]);
                        let o = out.row(r0 + r);
                        for (j, acc) in s.iter().enumerate() {
                            let c = half * 32 + 8 * j;
                            // SAFETY: each of `cols`' slices holds 64 entries and row r0 + r
                            // of `out` 64 floats (the caller's contract); this register covers
                            // entries c .. c + 8 ≤ 64.
                            unsafe {
                                let sum = if $signed {
                                    *acc
                                } else {
                                    let off = cols.offset.as_ptr().add(c).cast::<__m256i>();
                                    _mm256_sub_epi32(*acc, _mm256_loadu_si256(off))
                                };
                                let scale =
                                    _mm256_mul_ps(xsc, _mm256_loadu_ps(cols.scale.as_ptr().add(c)));
                                let bias = _mm256_loadu_ps(cols.bias.as_ptr().add(c));
                                let v = _mm256_cvtepi32_ps(sum);
                                let v = _mm256_add_ps(_mm256_mul_ps(v, scale), bias);
                                _mm256_storeu_ps(o.add(c), v);
                            }
                        }
                    }
                }
            }
        }
    };
}

/// AVX-VNNI's `vpdpbusd`: unsigned bytes × signed bytes, four per 32-bit lane, added to `acc`.
///
/// # Safety
/// The CPU must have AVX2 and AVX-VNNI.
#[inline(always)]
unsafe fn dot_avxvnni(
    acc: std::arch::x86_64::__m256i,
    a: std::arch::x86_64::__m256i,
    w: std::arch::x86_64::__m256i,
) -> std::arch::x86_64::__m256i {
    // SAFETY: the caller's CPU has AVX-VNNI.
    unsafe { std::arch::x86_64::_mm256_dpbusd_avx_epi32(acc, a, w) }
}

/// The same four-input sums with AVX2 alone, signed, from the row's four bytes `a` already
/// turned back to signed (`x = u − 128`) and their magnitudes `ax = |x|` (both once per row
/// and group, for all four registers): `vpmaddubsw` of `|x|` by `w` with `x`'s sign (each pair
/// of products at most 2 · 127 · 127 = 32,258 in magnitude: no 16-bit saturation) and
/// `vpmaddwd` by ones to sum the pairs into 32-bit lanes.
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn dot_avx2(
    acc: std::arch::x86_64::__m256i,
    (x, ax): (std::arch::x86_64::__m256i, std::arch::x86_64::__m256i),
    w: std::arch::x86_64::__m256i,
) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    // SAFETY: the caller's CPU has AVX2.
    unsafe {
        let pairs = _mm256_maddubs_epi16(ax, _mm256_sign_epi8(w, x));
        _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)))
    }
}

/// AVX2's form of a row's four bytes `a` (broadcast): signed again, and their magnitudes.
///
/// # Safety
/// The CPU must have AVX2.
#[inline(always)]
unsafe fn signed_avx2(
    a: std::arch::x86_64::__m256i,
) -> (std::arch::x86_64::__m256i, std::arch::x86_64::__m256i) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's CPU has AVX2.
    unsafe {
        let x = _mm256_xor_si256(a, _mm256_set1_epi8(i8::MIN));
        (x, _mm256_abs_epi8(x))
    }
}

/// VNNI's form of a row's four bytes: as they are (unsigned).
///
/// # Safety
/// None: `unsafe` only to share the form of [`signed_avx2`], which `block_256!` calls.
#[inline(always)]
unsafe fn unsigned_as_is(a: std::arch::x86_64::__m256i) -> std::arch::x86_64::__m256i {
    a
}

block_256! {
    /// `int8.rs`'s `block_scalar` with AVX-VNNI's 256-bit `vpdpbusd`.
    ///
    /// # Safety
    /// The CPU must have AVX2 and AVX-VNNI; `panel` must hold `64 · k4` bytes, `xs`
    /// `xscale.len() · k4` bytes, `xscale.len() ≤ 4`, each of `cols`' slices 64 entries, and
    /// `out` `xscale.len()` rows of 64 floats that only this call touches.
    block_avxvnni256, "avx2,avxvnni", unsigned_as_is, dot_avxvnni, false
}

block_256! {
    /// `int8.rs`'s `block_scalar` with AVX2 alone ([`dot_avx2`]): the same integer sums, so the same
    /// bits.
    ///
    /// # Safety
    /// The CPU must have AVX2; `panel` must hold `64 · k4` bytes, `xs` `xscale.len() · k4`
    /// bytes, `xscale.len() ≤ 4`, each of `cols`' slices 64 entries, and `out`
    /// `xscale.len()` rows of 64 floats that only this call touches.
    block_avx2, "avx2", signed_avx2, dot_avx2, true
}
