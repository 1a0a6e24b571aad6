//! The int8 products' kernels on aarch64 (see `int8.rs` for the panel layout and the
//! reference they equal bit for bit). Each computes, for up to 4 input rows and one panel's 64
//! columns, the signed sums `Σ q·w` (the input bytes turned back to signed: `u − 128`, one
//! XOR), then the reference's epilogue in the same order: convert, multiply by
//! `xscale · scale`, add the bias (no fused multiply-add).
//!
//! - [`block_neon`]: Advanced SIMD alone, every aarch64 core (the Raspberry Pi 4's
//!   Cortex-A72): `smull`/`smull2` of 8 bytes by 8, `addp` of the 16-bit products in pairs (at
//!   most 2 · 128 · 127, no overflow) and `sadalp` into 32-bit lanes.
//! - [`block_dot`]: the dot-product extension (`sdot`, Armv8.2+: Pi 5's Cortex-A76, Graviton
//!   2 and later, Apple cores): 16 signed byte products summed four at a time into four
//!   32-bit lanes per instruction.
//! - [`block_i8mm`]: the int8 matrix-multiply extension (`smmla`, Armv8.6+: Graviton 3 and
//!   later, Apple M2 and later): a 2×8 by 8×2 product into a 2×2 block per instruction, twice
//!   the multiply-adds of `sdot`. Two rows and two columns share each instruction: a column
//!   pair's 8 inputs come from two of the panel's 4-input groups by one `zip`.
//!
//! `sdot` and `smmla` are written as inline assembly ([`extension_op!`]): their `std::arch`
//! intrinsics are not stable Rust yet, the instructions are.
#![allow(unsafe_code)]

use std::arch::aarch64::*;

use super::int8_block::{Columns, Tile, ROWS};
use super::panels::PANEL;

/// Every byte's top bit: XOR with it turns an offset byte `q + 128` back into `q`.
const FLIP: u32 = 0x8080_8080;

/// `acc + Σ` over each 32-bit lane's four byte products of `w` and `x`, with Advanced SIMD
/// alone.
#[inline(always)]
fn dot_neon(acc: int32x4_t, w: int8x16_t, x: int8x16_t) -> int32x4_t {
    // SAFETY: Advanced SIMD is part of the aarch64 baseline; register operations only.
    unsafe {
        let lo = vmull_s8(vget_low_s8(w), vget_low_s8(x));
        let hi = vmull_high_s8(w, x);
        vpadalq_s16(acc, vpaddq_s16(lo, hi))
    }
}

/// An instruction of an Armv8 extension on 128-bit registers, `acc` its accumulator, as an
/// `unsafe fn` to call only where the CPU has the extension. Inline assembly: the `std::arch`
/// intrinsics of `sdot` and `smmla` are not stable Rust yet, the instructions are.
macro_rules! extension_op {
    ($(#[$meta:meta])* $name:ident, $extension:literal, $instruction:literal) => {
        $(#[$meta])*
        #[inline(always)]
        unsafe fn $name(mut acc: int32x4_t, a: int8x16_t, b: int8x16_t) -> int32x4_t {
            // SAFETY: the caller's CPU has the extension; registers only, no memory or stack
            // touched.
            unsafe {
                std::arch::asm!(
                    concat!(".arch_extension ", $extension),
                    concat!($instruction, " {acc:v}.4s, {a:v}.16b, {b:v}.16b"),
                    acc = inout(vreg) acc,
                    a = in(vreg) a,
                    b = in(vreg) b,
                    options(pure, nomem, nostack, preserves_flags),
                );
            }
            acc
        }
    };
}

extension_op! {
    /// [`dot_neon`] in one `sdot` (`a` the weights, `b` the input).
    ///
    /// # Safety
    /// The CPU must have the dot-product extension.
    dot_sdot, "dotprod", "sdot"
}

extension_op! {
    /// `acc` plus the 2×2 product of `a` (two rows of 8 bytes) and `b` (two columns of 8
    /// bytes): lanes `[r0·c0, r0·c1, r1·c0, r1·c1]`.
    ///
    /// # Safety
    /// The CPU must have the int8 matrix-multiply extension.
    mmla, "i8mm", "smmla"
}

/// Row `r`'s four signed sums `sums` (columns `c .. c + 4`) through the reference's epilogue
/// into `out`.
///
/// # Safety
/// Each of `cols`' slices must hold 64 entries, `c + 4 ≤ 64`, and row `r` of `out` 64 floats
/// that only this call touches.
#[inline(always)]
unsafe fn finish(sums: int32x4_t, xsc: f32, cols: &Columns, c: usize, out: Tile, r: usize) {
    // SAFETY: the caller's contract bounds every load and the store.
    unsafe {
        let scale = vmulq_f32(vdupq_n_f32(xsc), vld1q_f32(cols.scale.as_ptr().add(c)));
        let bias = vld1q_f32(cols.bias.as_ptr().add(c));
        let v = vaddq_f32(vmulq_f32(vcvtq_f32_s32(sums), scale), bias);
        vst1q_f32(out.row(r).add(c), v);
    }
}

/// One quarter of the panel's sums (a row's 16 columns in four registers of 4) through
/// [`finish`] into `out`, for the rows `xscale` has.
///
/// # Safety
/// As [`finish`]'s for each row `r < xscale.len()` and columns `quarter · 16 .. + 16`, with
/// `quarter < 4`.
#[inline(always)]
unsafe fn finish_quarter(
    sums: &[[int32x4_t; 4]; ROWS],
    xscale: &[f32],
    cols: &Columns,
    quarter: usize,
    out: Tile,
) {
    for (r, (s, &xsc)) in sums.iter().zip(xscale).enumerate() {
        for (j, &acc) in s.iter().enumerate() {
            // SAFETY: the caller's contract; columns quarter · 16 + 4j .. + 4 ≤ 64.
            unsafe { finish(acc, xsc, cols, quarter * 16 + 4 * j, out, r) };
        }
    }
}

/// The 4-input-group kernels' shared loop: per quarter of the panel (16 columns, four
/// registers of 4 columns × 4 inputs), each row's 4 input bytes of a group broadcast to all
/// lanes and `dot` into the row's four accumulators.
///
/// # Safety
/// `dot` must be safe to run on this CPU; `panel` must hold `64 · k4` bytes, `xs`
/// `xscale.len() · k4` bytes, `xscale.len() ≤ 4`, each of `cols`' slices 64 entries, and
/// `out` `xscale.len()` rows of 64 floats that only this call touches.
#[inline(always)]
unsafe fn block_groups(
    panel: &[i8],
    xs: &[u8],
    k4: usize,
    xscale: &[f32],
    cols: &Columns,
    out: Tile,
    dot: impl Fn(int32x4_t, int8x16_t, int8x16_t) -> int32x4_t,
) {
    let block = xscale.len();
    let (w, x) = (panel.as_ptr(), xs.as_ptr());
    for quarter in 0..4 {
        // SAFETY: register setup only.
        let mut sums = [[unsafe { vdupq_n_s32(0) }; 4]; ROWS];
        for g in 0..k4 / 4 {
            // SAFETY: group g's 256 bytes start at g · 256 < 64 · k4 = panel.len(); this
            // quarter's 64 of them at + 64 · quarter.
            let ws = unsafe {
                let at = w.add(g * PANEL * 4 + quarter * 64);
                [0, 16, 32, 48].map(|o| vld1q_s8(at.add(o)))
            };
            for (r, s) in sums.iter_mut().enumerate().take(block) {
                // SAFETY: bytes r · k4 + 4g .. + 4 lie inside `xs` (r < block, 4g + 4 ≤ k4).
                let four = unsafe { x.add(r * k4 + g * 4).cast::<u32>().read_unaligned() };
                // SAFETY: register operations only.
                let xb = unsafe { vreinterpretq_s8_u32(vdupq_n_u32(four ^ FLIP)) };
                for (s, &w) in s.iter_mut().zip(&ws) {
                    *s = dot(*s, w, xb);
                }
            }
        }
        // SAFETY: the caller's contract.
        unsafe { finish_quarter(&sums, xscale, cols, quarter, out) };
    }
}

/// The reference with Advanced SIMD alone ([`dot_neon`]).
///
/// # Safety
/// As [`block_groups`]'s extents (Advanced SIMD is the aarch64 baseline).
pub(super) unsafe fn block_neon(
    panel: &[i8],
    xs: &[u8],
    k4: usize,
    xscale: &[f32],
    cols: &Columns,
    out: Tile,
) {
    // SAFETY: the caller's contract; `dot_neon` runs on every aarch64 CPU.
    unsafe { block_groups(panel, xs, k4, xscale, cols, out, dot_neon) }
}

/// The reference with `sdot` ([`dot_sdot`]).
///
/// # Safety
/// The CPU must have the dot-product extension; extents as [`block_groups`].
#[target_feature(enable = "neon,dotprod")]
pub(super) unsafe fn block_dot(
    panel: &[i8],
    xs: &[u8],
    k4: usize,
    xscale: &[f32],
    cols: &Columns,
    out: Tile,
) {
    // SAFETY: the caller's contract: this CPU has `sdot`, and the extents.
    unsafe {
        block_groups(panel, xs, k4, xscale, cols, out, |a, w, x| {
            dot_sdot(a, w, x)
        })
    }
}

/// Up to 8 bytes of an offset row from `at`, turned back to signed, the rest zeros: 8 when
/// `both`, else 4 (a product's last, odd group).
///
/// # Safety
/// `at` must point at 8 readable bytes when `both`, else 4.
#[inline(always)]
unsafe fn eight(at: *const u8, both: bool) -> u64 {
    // SAFETY: the caller's contract.
    unsafe {
        if both {
            at.cast::<u64>().read_unaligned() ^ (u64::from(FLIP) * 0x1_0000_0001)
        } else {
            u64::from(at.cast::<u32>().read_unaligned() ^ FLIP)
        }
    }
}

/// The reference with `smmla` ([`mmla`]): per quarter of the panel, each pair of rows times
/// eight column pairs, 8 inputs (two of the panel's groups) per step; a last odd group pairs
/// with zeros. Each accumulator holds a 2 × 2 block, unzipped into rows at the end.
///
/// # Safety
/// The CPU must have the int8 matrix-multiply extension; extents as [`block_groups`].
#[target_feature(enable = "neon,i8mm")]
pub(super) unsafe fn block_i8mm(
    panel: &[i8],
    xs: &[u8],
    k4: usize,
    xscale: &[f32],
    cols: &Columns,
    out: Tile,
) {
    let block = xscale.len();
    let groups = k4 / 4;
    let (w, x) = (panel.as_ptr(), xs.as_ptr());
    let zero = vdupq_n_s8(0);
    for quarter in 0..4 {
        let mut sums = [[vdupq_n_s32(0); 8]; ROWS / 2];
        for g in (0..groups).step_by(2) {
            let both = g + 1 < groups;
            // SAFETY: groups g (and g + 1 when `both`) lie inside the panel (64 · k4 bytes,
            // 256 per group); this quarter's 64 bytes of each at + 64 · quarter.
            let (a, b) = unsafe {
                let at = w.add(g * PANEL * 4 + quarter * 64);
                let a = [0, 16, 32, 48].map(|o| vld1q_s8(at.add(o)));
                let b = if both {
                    [0, 16, 32, 48].map(|o| vld1q_s8(at.add(PANEL * 4 + o)))
                } else {
                    [zero; 4]
                };
                (a, b)
            };
            // Column pair (4j, 4j + 1): their 4 inputs of group g then of group g + 1.
            let mut pairs = [zero; 8];
            for j in 0..4 {
                let (a, b) = (vreinterpretq_s32_s8(a[j]), vreinterpretq_s32_s8(b[j]));
                pairs[2 * j] = vreinterpretq_s8_s32(vzip1q_s32(a, b));
                pairs[2 * j + 1] = vreinterpretq_s8_s32(vzip2q_s32(a, b));
            }
            for (p, s) in sums.iter_mut().enumerate().take(block.div_ceil(2)) {
                let (r0, r1) = (2 * p, 2 * p + 1);
                // SAFETY: row r0 < block, and r1 when r1 < block: bytes r · k4 + 4g .. + 8
                // (+ 4 for a last odd group) lie inside `xs`.
                let xr = unsafe {
                    let lo = eight(x.add(r0 * k4 + g * 4), both);
                    let hi = if r1 < block {
                        eight(x.add(r1 * k4 + g * 4), both)
                    } else {
                        0
                    };
                    vreinterpretq_s8_u64(vcombine_u64(vcreate_u64(lo), vcreate_u64(hi)))
                };
                for (s, &pair) in s.iter_mut().zip(&pairs) {
                    // SAFETY: this function's CPU has `smmla`.
                    *s = unsafe { mmla(*s, xr, pair) };
                }
            }
        }
        // The 2 × 2 blocks unzipped into rows of four columns, as the other kernels keep them.
        let mut rows = [[vdupq_n_s32(0); 4]; ROWS];
        for (p, s) in sums.iter().enumerate() {
            for j in 0..4 {
                let (c01, c23) = (
                    vreinterpretq_s64_s32(s[2 * j]),
                    vreinterpretq_s64_s32(s[2 * j + 1]),
                );
                rows[2 * p][j] = vreinterpretq_s32_s64(vzip1q_s64(c01, c23));
                rows[2 * p + 1][j] = vreinterpretq_s32_s64(vzip2q_s64(c01, c23));
            }
        }
        // SAFETY: the caller's contract.
        unsafe { finish_quarter(&rows, xscale, cols, quarter, out) };
    }
}
