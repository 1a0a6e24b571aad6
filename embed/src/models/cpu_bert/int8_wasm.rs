//! The int8 products' kernel in WebAssembly SIMD128, the browser build's (see `int8.rs` for the
//! panel layout and the reference it equals bit for bit). For up to 4 input rows and one
//! panel's 64 columns it computes the signed sums `Σ q·w` (the input bytes turned back to
//! signed: `u − 128`), then the reference's epilogue in the same order: convert, multiply by
//! `xscale · scale`, add the bias (no fused multiply-add: SIMD128 has none).
//!
//! SIMD128 has no byte dot product: its widest integer product is `i32x4.dot_i16x8_s`, 16-bit
//! pairs summed into 32-bit lanes. So the weights are reordered once, at load ([`reorder`]),
//! for that instruction: per pair of inputs, 16 bytes are 8 columns × the pair, and each half
//! widened is an operand whose product with a row's pair (repeated) is 4 columns' partial sums,
//! lane for column, with no shuffle after. The kernel holds 4 rows × 8 columns of sums in 8
//! registers and walks the pairs: per 64 multiply-adds, one weight load and two widenings, 4
//! row loads, 8 products and their adds. (Widening in the loop for every row, as this kernel
//! first did, took twice the time; weights kept widened to 16 bits took twice the bytes, which
//! a short text, whose rows are fewer than the kernel's 4, pays in memory traffic: a 3-token
//! text took 3.1 ms under Node's V8 that way, 2.3 ms this way.)
#![allow(unsafe_code)]

use std::arch::wasm32::*;

use super::int8_block::{Columns, Tile, ROWS};
use super::panels::PANEL;

/// The panels of `int8.rs`'s layout (`k4/4` groups of 64 columns × 4 inputs per panel)
/// reordered for the kernel, the same bytes: per panel, per input pair `p`, the 64 columns'
/// two weights (`[c0 i, c0 i+1, c1 i, c1 i+1, …]`), so 16 bytes are 8 columns × the pair and
/// their low and high halves, widened, are two product operands.
pub(super) fn reorder(panels: &[i8], k4: usize) -> Vec<i8> {
    let size = PANEL * k4;
    let mut out = Vec::with_capacity(panels.len());
    for panel in panels.chunks_exact(size) {
        for pair in 0..k4 / 2 {
            for c in 0..PANEL {
                for i in [2 * pair, 2 * pair + 1] {
                    out.push(panel[((i / 4) * PANEL + c) * 4 + i % 4]);
                }
            }
        }
    }
    out
}

/// The reference's outputs for `xscale.len()` rows on one panel.
///
/// # Safety
/// `panel` must hold one panel as [`reorder`] lays it out (`64 · k4` bytes, `k4` even), `xs`
/// `xscale.len() · k4` bytes, `xscale.len() ≤ 4`, each of `cols`' slices 64 entries, and `out`
/// `xscale.len()` rows of 64 floats that only this call touches.
pub(super) unsafe fn block_simd128(
    panel: &[i8],
    xs: &[u8],
    k4: usize,
    xscale: &[f32],
    cols: &Columns,
    out: Tile,
) {
    // The rows as signed 16-bit integers; rows past `xscale.len()` stay 0 (their sums are
    // computed and dropped: only a block's last rows are short).
    let mut rows = vec![0i16; ROWS * k4];
    for (d, &u) in rows.iter_mut().zip(xs) {
        *d = i16::from(u) - 128;
    }
    let (w, x) = (panel.as_ptr(), rows.as_ptr());
    // Two vectors of 4 columns at a time: columns 8h .. 8h + 8.
    for h in 0..PANEL / 8 {
        let mut acc = [[i32x4_splat(0); 2]; ROWS];
        for pair in 0..k4 / 2 {
            // SAFETY: pair < k4/2 and 8h + 8 ≤ 64: the 16 bytes at (pair · 64 + 8h) · 2 lie
            // inside the panel's 64 · k4 (`v128_load` has no alignment requirement).
            let eight = unsafe { v128_load(w.add((pair * PANEL + 8 * h) * 2).cast()) };
            let (w0, w1) = (
                i16x8_extend_low_i8x16(eight),
                i16x8_extend_high_i8x16(eight),
            );
            for (r, acc) in acc.iter_mut().enumerate() {
                // SAFETY: entries r · k4 + 2 · pair .. + 2 lie inside `rows` (r < 4).
                let two = unsafe { v128_load32_splat(x.add(r * k4 + 2 * pair).cast()) };
                acc[0] = i32x4_add(acc[0], i32x4_dot_i16x8(w0, two));
                acc[1] = i32x4_add(acc[1], i32x4_dot_i16x8(w1, two));
            }
        }
        for (r, &xsc) in xscale.iter().enumerate() {
            let scale_x = f32x4_splat(xsc);
            for (v, &sums) in acc[r].iter().enumerate() {
                let c = 8 * h + 4 * v;
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
