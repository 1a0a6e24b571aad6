//! The int8 products' kernel in WebAssembly SIMD128, the browser build's (see `int8.rs` for the
//! panel layout and the reference it equals bit for bit). For up to 4 input rows and one
//! panel's 64 columns it computes the signed sums `Σ q·w` (the input bytes turned back to
//! signed: `u − 128`, one XOR), then the reference's epilogue in the same order: convert,
//! multiply by `xscale · scale`, add the bias (no fused multiply-add: SIMD128 has none).
//!
//! SIMD128 has no byte dot product: each 16 weight bytes (4 columns × 4 inputs) and a row's 4
//! input bytes, repeated, are widened to i16 and multiplied in pairs summed into i32 lanes
//! (`i32x4.dot_i16x8_s`, at most 2 · 128 · 127 a pair), two lanes per column; the two are
//! added once, after the last group (integer sums, so the order changes nothing).
#![allow(unsafe_code)]

use std::arch::wasm32::*;

use super::int8_block::{Columns, Tile};
use super::panels::PANEL;

/// Every byte's top bit: XOR with it turns an offset byte `q + 128` back into `q`.
const FLIP: u32 = 0x8080_8080;

/// The reference's outputs for `xscale.len()` rows on one panel.
///
/// # Safety
/// `panel` must hold `64 · k4` bytes, `xs` `xscale.len() · k4` bytes, `xscale.len() ≤ 4`,
/// each of `cols`' slices 64 entries, and `out` `xscale.len()` rows of 64 floats that only
/// this call touches.
pub(super) unsafe fn block_simd128(
    panel: &[i8],
    xs: &[u8],
    k4: usize,
    xscale: &[f32],
    cols: &Columns,
    out: Tile,
) {
    let (w, x) = (panel.as_ptr(), xs.as_ptr());
    for (r, &xsc) in xscale.iter().enumerate() {
        for quarter in 0..4 {
            // Per weight vector (4 columns), the pair sums of its low and high 8 bytes.
            let mut lo = [i32x4_splat(0); 4];
            let mut hi = [i32x4_splat(0); 4];
            for g in 0..k4 / 4 {
                // SAFETY: bytes r · k4 + 4g .. + 4 lie inside `xs` (r < xscale.len(),
                // 4g + 4 ≤ k4).
                let four = unsafe { x.add(r * k4 + g * 4).cast::<u32>().read_unaligned() };
                let xb = i32x4_splat((four ^ FLIP) as i32);
                let (xl, xh) = (i16x8_extend_low_i8x16(xb), i16x8_extend_high_i8x16(xb));
                for v in 0..4 {
                    // SAFETY: group g's 256 bytes start at g · 256 < 64 · k4 = panel.len();
                    // this quarter's 64 of them at + 64 · quarter, vector v's 16 at + 16v
                    // (`v128_load` has no alignment requirement).
                    let wv =
                        unsafe { v128_load(w.add(g * PANEL * 4 + quarter * 64 + 16 * v).cast()) };
                    lo[v] = i32x4_add(lo[v], i32x4_dot_i16x8(i16x8_extend_low_i8x16(wv), xl));
                    hi[v] = i32x4_add(hi[v], i32x4_dot_i16x8(i16x8_extend_high_i8x16(wv), xh));
                }
            }
            let scale_x = f32x4_splat(xsc);
            for v in 0..4 {
                // Lanes [c0 c0' c1 c1'] and [c2 c2' c3 c3'] into the four columns' sums.
                let sums = i32x4_add(
                    i32x4_shuffle::<0, 2, 4, 6>(lo[v], hi[v]),
                    i32x4_shuffle::<1, 3, 5, 7>(lo[v], hi[v]),
                );
                let c = quarter * 16 + 4 * v;
                // SAFETY: c + 4 ≤ 64: the 4 entries of each of `cols`' 64-entry slices at c,
                // and row r's floats c .. c + 4 of `out`, which only this call touches.
                unsafe {
                    let scale = f32x4_mul(scale_x, v128_load(cols.scale.as_ptr().add(c).cast()));
                    let bias = v128_load(cols.bias.as_ptr().add(c).cast());
                    let value = f32x4_add(f32x4_mul(f32x4_convert_i32x4(sums), scale), bias);
                    v128_store(out.row(r).add(c).cast(), value);
                }
            }
        }
    }
}
