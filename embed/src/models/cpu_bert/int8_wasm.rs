//! The int8 products' kernel in WebAssembly SIMD128, the browser build's (see `int8.rs` for the
//! panel layout and the reference it equals bit for bit). For up to 4 input rows and one
//! panel's 64 columns it computes the signed sums `Σ q·w` (the input bytes turned back to
//! signed: `u − 128`), then the reference's epilogue in the same order: convert, multiply by
//! `xscale · scale`, add the bias (no fused multiply-add: SIMD128 has none).
//!
//! SIMD128 has no byte dot product: its widest integer product is `i32x4.dot_i16x8_s`, 16-bit
//! pairs summed into 32-bit lanes. So the weights are widened to 16 bits once, at load
//! ([`widen`]), in the order that instruction wants: per pair of inputs, each vector 4 columns
//! × the pair, so one product of a weight vector and a row's pair (repeated) is the 4 columns'
//! partial sums, lane for column, with no shuffle after. The kernel holds 4 rows × 8 columns of
//! sums in 8 registers and walks the pairs: per 64 multiply-adds, 2 weight loads, 4 row loads
//! and 8 products with their adds. (Widening the bytes in the loop, as this kernel first did,
//! cost 2 more instructions per product and re-did the work for every row.)
//!
//! The widened weights take twice the bytes of the int8 ones (44 MB for MiniLM's, against
//! 88 MB as f32).
#![allow(unsafe_code)]

use std::arch::wasm32::*;

use super::int8_block::{Columns, Tile, ROWS};
use super::panels::PANEL;

/// The panels of `int8.rs`'s layout (`k4/4` groups of 64 columns × 4 inputs per panel) as the
/// kernel reads them: per panel, per input pair `p`, the 64 columns' two weights
/// (`[c0 i, c0 i+1, c1 i, c1 i+1, …]`) as 16-bit integers, handed back as their bytes (native
/// order: WebAssembly is little-endian).
pub(super) fn widen(panels: &[i8], k4: usize) -> Vec<i8> {
    let size = PANEL * k4;
    let mut wide = Vec::with_capacity(2 * panels.len());
    for panel in panels.chunks_exact(size) {
        for pair in 0..k4 / 2 {
            for c in 0..PANEL {
                for i in [2 * pair, 2 * pair + 1] {
                    let w = i16::from(panel[((i / 4) * PANEL + c) * 4 + i % 4]);
                    wide.extend(w.to_le_bytes().map(|b| b as i8));
                }
            }
        }
    }
    wide
}

/// The reference's outputs for `xscale.len()` rows on one panel.
///
/// # Safety
/// `panel` must hold one panel as [`widen`] lays it out (`128 · k4` bytes, `k4` even), `xs`
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
    let (w, x) = (panel.as_ptr().cast::<i16>(), rows.as_ptr());
    // Two vectors of 4 columns at a time: columns 8h .. 8h + 8.
    for h in 0..PANEL / 8 {
        let mut acc = [[i32x4_splat(0); 2]; ROWS];
        for pair in 0..k4 / 2 {
            // SAFETY: pair < k4/2 and 8h + 8 ≤ 64: the 16 i16 at (pair · 64 + 8h) · 2 lie
            // inside the panel's 64 · k4 (`v128_load` has no alignment requirement).
            let (w0, w1) = unsafe {
                let at = w.add((pair * PANEL + 8 * h) * 2);
                (v128_load(at.cast()), v128_load(at.add(8).cast()))
            };
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
