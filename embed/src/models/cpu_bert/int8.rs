//! Dense layers in 8-bit integers: `out = x · Wᵀ + b` with the weight quantized once at load
//! (symmetric int8, one scale per output channel) and each input row quantized as it comes
//! (symmetric int8 per token, stored offset by 128 as unsigned bytes), the products summed in
//! 32-bit integers and scaled back to f32. Layer norm, softmax and GELU stay in f32; only the
//! matrix products change.
//!
//! The product of an unsigned row `u = q + 128` and a signed weight column `w` is
//! `Σ q·w + 128·Σ w`, so the signed result is the unsigned one less `128 · colsum`, a constant
//! of the column. That is the form AVX-512 VNNI's `vpdpbusd` computes: 64 unsigned × signed
//! byte products summed four at a time into 16 32-bit lanes per instruction, four times the
//! multiply-accumulates of an f32 FMA.
//!
//! Layout: the weight is stored in panels of 64 output columns (as `matmul.rs`), each panel
//! `k/4` groups of `64 columns × 4 consecutive inputs`, so one 64-byte load holds 16 columns ×
//! 4 inputs, exactly a `vpdpbusd` operand; the input width is padded to a multiple of 4 with
//! zero weights. The kernel keeps a 4-row × 64-column block of accumulators in 16 registers.
//!
//! Without VNNI, AVX2's `vpmaddubsw` multiplies unsigned by signed bytes into 16-bit pair sums,
//! which would saturate for `u ≤ 255`; [`Kernel::Avx2`] turns the row back to signed bytes and
//! multiplies their magnitudes by `w` with the row's sign instead (pairs of at most
//! 2 · 127 · 127; both forms of the row made once per group of inputs, for every register),
//! then `vpmaddwd` sums the pairs into the same 32-bit lanes, already signed. (Weights of 7 bits
//! would let `vpmaddubsw` take the unsigned row as it is, as onnxruntime's `reduce_range` does;
//! measured, they take the golden texts' mean cosine to sentence-transformers from 0.9951 to
//! 0.9927, under the 0.995 the encoder promises.)
//!
//! [`Kernel::Scalar`] is the reference: the same integer sums and the same float epilogue
//! (a multiply, then an add: no fused multiply-add), so every vector kernel equals it bit for
//! bit.
#![allow(unsafe_code)]

use rayon::prelude::*;

use super::int8_block::{Columns, Tile, ROWS};
#[cfg(target_arch = "aarch64")]
use super::int8_neon;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
use super::int8_wasm;
#[cfg(target_arch = "x86_64")]
use super::int8_x86;
use super::panels::{for_each_task, shared, Dst, PANEL};

use super::simd::multiversion;

/// Bytes of quantized input a task reads: its chunk of rows stays in a core's cache while
/// the task's thread runs the panels over it.
const CHUNK_BYTES: usize = 128 << 10;

/// Rows per chunk of a product whose quantized rows are `k4` bytes: a multiple of [`ROWS`].
fn chunk_rows(k4: usize) -> usize {
    (CHUNK_BYTES / k4.max(1) / ROWS).max(1) * ROWS
}

/// Which integer kernel runs the products.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kernel {
    /// Plain Rust: the reference, on any CPU.
    Scalar,
    /// AVX-512 VNNI (`vpdpbusd`), where the CPU has AVX-512 F, BW and VNNI.
    #[cfg(target_arch = "x86_64")]
    Vnni512,
    /// AVX-VNNI (`vpdpbusd` on 256-bit registers), where the CPU has AVX2 and AVX-VNNI but not
    /// AVX-512 VNNI (Intel's laptop and desktop cores since Alder Lake).
    #[cfg(target_arch = "x86_64")]
    AvxVnni256,
    /// AVX2 alone (`vpmaddubsw` and `vpmaddwd`), where the CPU has AVX2 but no VNNI (AMD before
    /// Zen 4, Intel before Ice Lake and Alder Lake).
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// aarch64's Advanced SIMD alone (`smull`, `sadalp`): every 64-bit ARM core, the
    /// Raspberry Pi 4's Cortex-A72 among them (`int8_neon.rs`).
    #[cfg(target_arch = "aarch64")]
    Neon,
    /// aarch64's dot-product extension (`sdot`), where the CPU has it (Armv8.2 and later:
    /// Pi 5, Graviton 2, Apple cores).
    #[cfg(target_arch = "aarch64")]
    NeonDot,
    /// aarch64's int8 matrix-multiply extension (`smmla`), where the CPU has it (Armv8.6 and
    /// later: Graviton 3, Apple M2).
    #[cfg(target_arch = "aarch64")]
    NeonI8mm,
    /// WebAssembly's 128-bit SIMD, which the browser build is compiled with
    /// (`int8_wasm.rs`).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    Simd128,
}

impl Kernel {
    /// Its name, as benchmarks record it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            #[cfg(target_arch = "x86_64")]
            Kernel::Vnni512 => "avx512vnni",
            #[cfg(target_arch = "x86_64")]
            Kernel::AvxVnni256 => "avxvnni",
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => "avx2",
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => "neon",
            #[cfg(target_arch = "aarch64")]
            Kernel::NeonDot => "neon-dotprod",
            #[cfg(target_arch = "aarch64")]
            Kernel::NeonI8mm => "neon-i8mm",
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => "simd128",
        }
    }

    /// The fastest kernel this CPU runs within `MEMLOOP_SIMD`'s cap (`simd::cap`).
    #[cfg_attr(target_arch = "aarch64", allow(unreachable_code))]
    pub(crate) fn best() -> Kernel {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        use super::simd::{allows, Tier};
        #[cfg(target_arch = "x86_64")]
        if allows(Tier::Avx512)
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
        {
            return Kernel::Vnni512;
        }
        #[cfg(target_arch = "x86_64")]
        if allows(Tier::AvxVnni)
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("avxvnni")
        {
            return Kernel::AvxVnni256;
        }
        #[cfg(target_arch = "x86_64")]
        if allows(Tier::Avx2) && std::arch::is_x86_feature_detected!("avx2") {
            return Kernel::Avx2;
        }
        #[cfg(target_arch = "aarch64")]
        if allows(Tier::Avx2) {
            // Advanced SIMD is the aarch64 baseline: there is always a vector kernel (unless
            // `MEMLOOP_SIMD=scalar`; any other cap counts as "vectors").
            use std::arch::is_aarch64_feature_detected as has;
            if has!("i8mm") {
                return Kernel::NeonI8mm;
            }
            if has!("dotprod") {
                return Kernel::NeonDot;
            }
            return Kernel::Neon;
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        return Kernel::Simd128;
        #[allow(unreachable_code)]
        Kernel::Scalar
    }
}

/// A dense layer with int8 weights (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct QuantLinear {
    /// Per panel: `k4/4` groups of 64 columns × 4 inputs, signed bytes (for SIMD128's kernel
    /// the same bytes in pairs of inputs: `int8_wasm::reorder`).
    panels: Vec<i8>,
    /// Per output column, padded to whole panels: the weight's scale (max |w| / 127).
    scale: Vec<f32>,
    /// Per output column, padded: 128 × the sum of its quantized weights.
    offset: Vec<i32>,
    /// Per output column, padded.
    bias: Vec<f32>,
    pub(crate) inp: usize,
    pub(crate) out: usize,
    /// `inp` rounded up to a multiple of 4.
    k4: usize,
    kernel: Kernel,
}

/// Input rows quantized: unsigned bytes (`q + 128`), `k4` per row, and each row's scale.
///
/// The encoder fills one in the same pass that computes the rows (layer norm, GELU), while
/// each block of rows is still in cache, and hands it to [`QuantLinear::forward_quantized`]:
/// the product then reads no f32 row at all.
#[derive(Debug)]
pub(crate) struct QuantRows {
    bytes: Vec<u8>,
    scale: Vec<f32>,
    /// The rows' width as quantized (`k` rounded up to 4).
    k4: usize,
}

/// A block of a [`QuantRows`]' rows, filled by one task.
pub(crate) struct QuantBlock<'a> {
    bytes: &'a mut [u8],
    scale: &'a mut [f32],
    k4: usize,
}

impl QuantRows {
    /// Room for `rows` rows of `k` inputs; the padding past `k` is 128 (a zero).
    pub(crate) fn new(rows: usize, k: usize) -> Self {
        let k4 = k.div_ceil(4) * 4;
        QuantRows {
            bytes: vec![128u8; rows * k4],
            scale: vec![0f32; rows],
            k4,
        }
    }

    /// The rows in blocks of `per` (the last may be shorter), in order.
    pub(crate) fn blocks_mut(&mut self, per: usize) -> Vec<QuantBlock<'_>> {
        let k4 = self.k4;
        self.bytes
            .chunks_mut(per * k4)
            .zip(self.scale.chunks_mut(per))
            .map(|(bytes, scale)| QuantBlock { bytes, scale, k4 })
            .collect()
    }
}

impl QuantBlock<'_> {
    /// Quantizes `xs` (whole rows of `k` floats, as many as the block holds) into the block.
    pub(crate) fn fill(&mut self, xs: &[f32], k: usize) {
        assert_eq!(
            xs.len(),
            self.scale.len() * k,
            "rows do not match the block"
        );
        assert!(
            k <= self.k4 && self.k4 - k < 4,
            "row width does not match the block"
        );
        for ((src, dst), s) in xs
            .chunks_exact(k)
            .zip(self.bytes.chunks_exact_mut(self.k4))
            .zip(self.scale.iter_mut())
        {
            *s = quantize_row(src, &mut dst[..k]);
        }
    }
}

multiversion! {
    /// One row quantized: `dst[i] = round(src[i] / scale) + 128` with scale = max |src| / 127
    /// (1 for a row of zeros), returned. Rounds half to even by the 1.5·2²³ trick (exact for
    /// |v| ≤ 127), so the loop needs no libm call and no float-to-int conversion, and
    /// vectorises.
    fn quantize_row(src: &[f32], dst: &mut [u8]) -> f32 {
        const ROUND: f32 = 12_582_912.0;
        // 64 independent running maxima: four 16-lane registers, so the loop is not one
        // chain of dependent `max`es.
        let mut lanes = [0f32; 64];
        let chunks = src.chunks_exact(64);
        let tail = chunks.remainder();
        for c in chunks {
            for (l, v) in lanes.iter_mut().zip(c) {
                *l = if v.abs() > *l { v.abs() } else { *l };
            }
        }
        // Halve the lanes in vector steps (64 → 32 → … → 1), not one lane at a time.
        let mut width = lanes.len();
        while width > 1 {
            width /= 2;
            let (low, high) = lanes.split_at_mut(width);
            for (l, &h) in low.iter_mut().zip(&high[..width]) {
                *l = if h > *l { h } else { *l };
            }
        }
        let max = tail
            .iter()
            .fold(lanes[0], |m, v| if v.abs() > m { v.abs() } else { m });
        let scale = if max > 0.0 && max.is_finite() {
            max / 127.0
        } else {
            1.0
        };
        let inv = 1.0 / scale;
        for (d, &v) in dst.iter_mut().zip(src) {
            // v / scale + 1.5·2²³ holds round(v / scale) in its low mantissa bits: the bits
            // less those of 1.5·2²³ are the integer, with no float-to-int conversion.
            let bits = ((v * inv).clamp(-127.0, 127.0) + ROUND).to_bits();
            *d = (bits.wrapping_sub(ROUND.to_bits()) as i32 + 128) as u8;
        }
        scale
    }
}

/// `x` (rows × `k`) quantized per row, in blocks over the rayon pool when `parallel`.
pub(crate) fn quantize_rows(x: &[f32], k: usize, parallel: bool) -> QuantRows {
    /// Rows per task.
    const PER: usize = 16;
    let mut q = QuantRows::new(x.len() / k, k);
    let blocks = q.blocks_mut(PER);
    if parallel {
        x.par_chunks(PER * k)
            .zip(blocks)
            .for_each(|(x, mut b)| b.fill(x, k));
    } else {
        x.chunks(PER * k)
            .zip(blocks)
            .for_each(|(x, mut b)| b.fill(x, k));
    }
    q
}

impl QuantLinear {
    /// A layer from PyTorch's `nn.Linear` layout (`weight` is `out × inp`, row-major),
    /// quantized per output channel ([`crate::weights::quantize_row`]), run by `kernel`.
    pub(crate) fn new(
        weight: &[f32],
        bias: Vec<f32>,
        inp: usize,
        out: usize,
        kernel: Kernel,
    ) -> Self {
        assert_eq!(weight.len(), out * inp, "weight is not out × in");
        let mut q = vec![0i8; out * inp];
        let scale: Vec<f32> = weight
            .chunks_exact(inp.max(1))
            .zip(q.chunks_exact_mut(inp.max(1)))
            .map(|(row, q)| crate::weights::quantize_row(row, q))
            .collect();
        QuantLinear::from_rows(&q, &scale, bias, inp, out, kernel)
    }

    /// A layer from its weight already quantized per output channel: `q` is `out × inp`
    /// (row-major, as PyTorch's `nn.Linear`), output channel `o`'s weights are
    /// `q[o] · scale[o]`. What [`QuantLinear::new`] makes of the f32 weights, or what an int8
    /// model file holds.
    pub(crate) fn from_rows(
        q: &[i8],
        scale: &[f32],
        bias: Vec<f32>,
        inp: usize,
        out: usize,
        kernel: Kernel,
    ) -> Self {
        assert_eq!(q.len(), out * inp, "weight is not out × in");
        assert_eq!(scale.len(), out, "scale is not out");
        assert_eq!(bias.len(), out, "bias is not out");
        let k4 = inp.div_ceil(4) * 4;
        let count = out.div_ceil(PANEL);
        let mut panels = vec![0i8; count * PANEL * k4];
        let mut padded_scale = vec![0f32; count * PANEL];
        let mut offset = vec![0i32; count * PANEL];
        let mut padded_bias = vec![0f32; count * PANEL];
        padded_bias[..out].copy_from_slice(&bias);
        padded_scale[..out].copy_from_slice(scale);
        for (o, row) in q.chunks_exact(inp.max(1)).take(out).enumerate() {
            let (p, c) = (o / PANEL, o % PANEL);
            let mut sum = 0i32;
            for (i, &q) in row.iter().enumerate() {
                panels[p * PANEL * k4 + ((i / 4) * PANEL + c) * 4 + i % 4] = q;
                sum += i32::from(q);
            }
            offset[o] = 128 * sum;
        }
        let scale = padded_scale;
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        let panels = match kernel {
            Kernel::Simd128 => int8_wasm::reorder(&panels, k4),
            _ => panels,
        };
        QuantLinear {
            panels,
            scale,
            offset,
            bias: padded_bias,
            inp,
            out,
            k4,
            kernel,
        }
    }

    /// `out[r] = x[r] · Wᵀ + b` for the `rows` rows of `x` (`rows × inp`); `out` is
    /// `rows × out`. When `parallel`, the panels are shared over the current rayon pool.
    pub(crate) fn forward(&self, x: &[f32], rows: usize, out: &mut [f32], parallel: bool) {
        let k = self.inp;
        assert_eq!(x.len(), rows * k, "input is not rows × in");
        let q = quantize_rows(x, k, shared(parallel, rows, k, self.out));
        self.forward_quantized(&q, rows, out, parallel);
    }

    /// As [`QuantLinear::forward`], from rows already quantized (`rows` of them, `inp` wide).
    pub(crate) fn forward_quantized(
        &self,
        q: &QuantRows,
        rows: usize,
        out: &mut [f32],
        parallel: bool,
    ) {
        assert_eq!(q.scale.len(), rows, "quantized input is not rows × in");
        self.forward_quantized_rows(q, 0, out, parallel);
    }

    /// As [`QuantLinear::forward_quantized`] for `q`'s rows `first..first + rows`, where `out`
    /// holds `rows × out` floats.
    pub(crate) fn forward_quantized_rows(
        &self,
        q: &QuantRows,
        first: usize,
        out: &mut [f32],
        parallel: bool,
    ) {
        let (k, n) = (self.inp, self.out);
        let rows = out.len() / n;
        assert_eq!(out.len(), rows * n, "output is not rows × out");
        assert!(
            q.k4 == self.k4 && first + rows <= q.scale.len(),
            "quantized input is not rows × in"
        );
        let (bytes, scale) = (
            &q.bytes[first * self.k4..(first + rows) * self.k4],
            &q.scale[first..first + rows],
        );
        if rows == 0 {
            return;
        }
        let big = shared(parallel, rows, k, n);
        let dst = Dst(out.as_mut_ptr());
        // Tasks are (chunk of rows, panel) pairs, chunk by chunk: a thread runs every panel
        // over a chunk while the chunk's bytes stay in its cache, instead of streaming all
        // the rows from memory once per panel (a batch of 32 chunks of text is 6,400 rows,
        // 9.8 MB of input to the down product).
        let chunk = chunk_rows(self.k4);
        let panels = n.div_ceil(PANEL);
        let one = |task: usize| {
            let (c, p) = (task / panels, task % panels);
            let start = p * PANEL;
            let width = PANEL.min(n - start);
            let panel = &self.panels[p * PANEL * self.k4..][..PANEL * self.k4];
            let cols = Columns {
                scale: &self.scale[start..start + PANEL],
                offset: &self.offset[start..start + PANEL],
                bias: &self.bias[start..start + PANEL],
            };
            // A narrow last panel is computed into a buffer and copied; a whole panel (every
            // panel of the models' widths) is written in place.
            let mut done = [[0f32; PANEL]; ROWS];
            for r0 in (c * chunk..rows.min((c + 1) * chunk)).step_by(ROWS) {
                let block = ROWS.min(rows - r0);
                let xs = &bytes[r0 * self.k4..(r0 + block) * self.k4];
                let xscale = &scale[r0..r0 + block];
                if width == PANEL {
                    let tile = Tile {
                        at: dst.at(r0 * n + start),
                        stride: n,
                    };
                    // SAFETY: rows r0 .. r0 + block ≤ rows and columns start .. start + 64 ≤ n
                    // lie inside `out` (`rows × n`, asserted above); tasks cover disjoint
                    // (rows, columns) blocks, so no other thread writes them, and `out` is
                    // uniquely borrowed by this call and aliases no input.
                    unsafe { self.block(panel, xs, xscale, &cols, tile) };
                    continue;
                }
                let tile = Tile {
                    at: done.as_mut_ptr().cast::<f32>(),
                    stride: PANEL,
                };
                // SAFETY: `done` holds 4 rows of 64 floats, local to this closure.
                unsafe { self.block(panel, xs, xscale, &cols, tile) };
                for (r, row) in done.iter().enumerate().take(block) {
                    // SAFETY: row r0 + r < rows and columns start..start + width ≤ n lie inside
                    // `out`, written by this task alone (as above).
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            row.as_ptr(),
                            dst.at((r0 + r) * n + start),
                            width,
                        );
                    }
                }
            }
        };
        for_each_task(rows.div_ceil(chunk) * panels, big, one);
    }

    /// The outputs of `xscale.len()` (≤ 4) unsigned rows `xs` (`rows × k4`) on one panel's 64
    /// columns `cols`, into `out`.
    ///
    /// # Safety
    /// `out` must hold `xscale.len()` rows of 64 floats that nothing else reads or writes
    /// during the call.
    unsafe fn block(&self, panel: &[i8], xs: &[u8], xscale: &[f32], cols: &Columns, out: Tile) {
        assert_eq!(panel.len(), PANEL * self.k4);
        assert_eq!(xs.len(), xscale.len() * self.k4);
        assert!(xscale.len() <= ROWS);
        assert!(
            cols.scale.len() == PANEL && cols.offset.len() == PANEL && cols.bias.len() == PANEL
        );
        match self.kernel {
            // SAFETY: the caller's contract on `out`.
            Kernel::Scalar => unsafe { scalar_into(panel, xs, self.k4, xscale, cols, out) },
            #[cfg(target_arch = "x86_64")]
            Kernel::Vnni512 => {
                // SAFETY: `Kernel::Vnni512` is only chosen where `Kernel::best` detected
                // AVX-512 F, BW and VNNI on this CPU (or a test that checked the same), the
                // asserts above fix the extents `block_vnni512` reads, and the caller's
                // contract the ones it writes.
                unsafe { int8_x86::block_vnni512(panel, xs, self.k4, xscale, cols, out) }
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::AvxVnni256 => {
                // SAFETY: `Kernel::AvxVnni256` is only chosen where `Kernel::best` detected AVX2
                // and AVX-VNNI on this CPU (or a test that checked the same), the asserts above
                // fix the extents `block_avxvnni256` reads, and the caller's contract the ones
                // it writes.
                unsafe { int8_x86::block_avxvnni256(panel, xs, self.k4, xscale, cols, out) }
            }
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => {
                // SAFETY: `Kernel::Avx2` is only chosen where `Kernel::best` detected AVX2 on
                // this CPU (or a test that checked the same), the asserts above fix the extents
                // `block_avx2` reads, and the caller's contract the ones it writes.
                unsafe { int8_x86::block_avx2(panel, xs, self.k4, xscale, cols, out) }
            }
            #[cfg(target_arch = "aarch64")]
            Kernel::Neon => {
                // SAFETY: Advanced SIMD is the aarch64 baseline; the asserts above fix the
                // extents `block_neon` reads, and the caller's contract the ones it writes.
                unsafe { int8_neon::block_neon(panel, xs, self.k4, xscale, cols, out) }
            }
            #[cfg(target_arch = "aarch64")]
            Kernel::NeonDot => {
                // SAFETY: `Kernel::NeonDot` is only chosen where the dot-product extension was
                // detected on this CPU (or a test that checked the same); extents as above.
                unsafe { int8_neon::block_dot(panel, xs, self.k4, xscale, cols, out) }
            }
            #[cfg(target_arch = "aarch64")]
            Kernel::NeonI8mm => {
                // SAFETY: `Kernel::NeonI8mm` is only chosen where the int8 matrix-multiply
                // extension was detected on this CPU (or a test that checked the same);
                // extents as above.
                unsafe { int8_neon::block_i8mm(panel, xs, self.k4, xscale, cols, out) }
            }
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            Kernel::Simd128 => {
                // SAFETY: the build has SIMD128 (the variant's cfg); the asserts above fix the
                // extents `block_simd128` reads, and the caller's contract the ones it writes.
                unsafe { int8_wasm::block_simd128(panel, xs, self.k4, xscale, cols, out) }
            }
        }
    }
}

multiversion! {
    /// The reference: `out[r][c] = (Σᵢ xs[r][i] · w[c][i] − offset[c]) · (xscale[r] · scale[c]) +
    /// bias[c]`, the sum in 32-bit integers, then a float multiply and a float add. Written so
    /// the compiler vectorises the column loop: the path of CPUs without AVX2 (and of other
    /// architectures).
    fn block_scalar(
        panel: &[i8],
        xs: &[u8],
        k4: usize,
        xscale: &[f32],
        cols: &Columns,
        out: &mut [[f32; PANEL]; ROWS],
    ) {
        for (r, (o, &xsc)) in out.iter_mut().zip(xscale).enumerate() {
            let x = &xs[r * k4..(r + 1) * k4];
            let mut acc = [0i32; PANEL];
            for (four, w) in x.chunks_exact(4).zip(panel.chunks_exact(PANEL * 4)) {
                let [x0, x1, x2, x3] = [0, 1, 2, 3].map(|t| i32::from(four[t]));
                for (a, w) in acc.iter_mut().zip(w.chunks_exact(4)) {
                    *a += x0 * i32::from(w[0])
                        + x1 * i32::from(w[1])
                        + x2 * i32::from(w[2])
                        + x3 * i32::from(w[3]);
                }
            }
            for (c, v) in o.iter_mut().enumerate() {
                let s = xsc * cols.scale[c];
                *v = (acc[c] - cols.offset[c]) as f32 * s + cols.bias[c];
            }
        }
    }
}

/// [`block_scalar`] into a [`Tile`].
///
/// # Safety
/// `out` must hold `xscale.len()` rows of 64 floats that only this call touches.
unsafe fn scalar_into(
    panel: &[i8],
    xs: &[u8],
    k4: usize,
    xscale: &[f32],
    cols: &Columns,
    out: Tile,
) {
    let mut done = [[0f32; PANEL]; ROWS];
    block_scalar(panel, xs, k4, xscale, cols, &mut done);
    for (r, row) in done.iter().enumerate().take(xscale.len()) {
        // SAFETY: the caller's contract: row r < xscale.len() of `out` holds 64 floats that
        // only this call touches.
        unsafe { out.row(r).cast::<[f32; PANEL]>().write_unaligned(*row) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::cpu_bert::matmul::Linear;

    fn case(rows: usize, inp: usize, out: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
        let x: Vec<f32> = (0..rows * inp)
            .map(|i| (i as f32 * 0.37).sin() * 3.0)
            .collect();
        let weight: Vec<f32> = (0..out * inp)
            .map(|i| (i as f32 * 0.11).cos() * 0.05)
            .collect();
        let bias: Vec<f32> = (0..out).map(|o| o as f32 * 0.01 - 0.3).collect();
        (x, weight, bias)
    }

    /// The kernels this CPU can run besides the reference.
    fn vector_kernels() -> Vec<Kernel> {
        let mut kernels = Vec::new();
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            if has!("avx512f") && has!("avx512bw") && has!("avx512vnni") {
                kernels.push(Kernel::Vnni512);
            }
            if has!("avx2") && has!("avxvnni") {
                kernels.push(Kernel::AvxVnni256);
            }
            if has!("avx2") {
                kernels.push(Kernel::Avx2);
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            use std::arch::is_aarch64_feature_detected as has;
            kernels.push(Kernel::Neon);
            if has!("dotprod") {
                kernels.push(Kernel::NeonDot);
            }
            if has!("i8mm") {
                kernels.push(Kernel::NeonI8mm);
            }
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        kernels.push(Kernel::Simd128);
        kernels
    }

    #[test]
    fn every_vector_kernel_equals_the_scalar_reference_bit_for_bit() {
        let kernels = vector_kernels();
        eprintln!("int8 kernels compared with the scalar reference: {kernels:?}");
        // Row counts around the 2- and 4-row blocks, widths with a narrow last panel and
        // inputs not a multiple of 4; 203 rows of 1,536 inputs are three chunks of rows, the
        // last one short and not a multiple of 4.
        assert_eq!(chunk_rows(1536), 84);
        for kernel in kernels {
            for (rows, inp, out, parallel) in [
                (1, 7, 3, false),
                (5, 33, 150, false),
                (7, 384, 64, false),
                (66, 130, 200, true),
                (203, 1536, 70, true),
                (203, 1536, 70, false),
            ] {
                let (x, weight, bias) = case(rows, inp, out);
                let scalar = QuantLinear::new(&weight, bias.clone(), inp, out, Kernel::Scalar);
                let fast = QuantLinear::new(&weight, bias, inp, out, kernel);
                let (mut a, mut b) = (vec![f32::NAN; rows * out], vec![f32::NAN; rows * out]);
                scalar.forward(&x, rows, &mut a, parallel);
                fast.forward(&x, rows, &mut b, parallel);
                assert!(b.iter().all(|v| v.is_finite()), "every output written");
                assert!(
                    a.iter().zip(&b).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{kernel:?} {rows}×{inp}→{out}"
                );
            }
        }
    }

    #[test]
    fn rows_quantized_in_blocks_give_the_same_product_as_rows_quantized_by_it() {
        // Blocks of 3 rows (the last one short), filled in order as the encoder's passes do.
        for (rows, inp, out) in [(1, 7, 3), (8, 33, 150), (11, 384, 64)] {
            let (x, weight, bias) = case(rows, inp, out);
            let layer = QuantLinear::new(&weight, bias, inp, out, Kernel::best());
            let mut q = QuantRows::new(rows, inp);
            for (xs, mut block) in x.chunks(3 * inp).zip(q.blocks_mut(3)) {
                block.fill(xs, inp);
            }
            let (mut a, mut b) = (vec![f32::NAN; rows * out], vec![f32::NAN; rows * out]);
            layer.forward(&x, rows, &mut a, false);
            layer.forward_quantized(&q, rows, &mut b, true);
            assert!(
                a.iter().zip(&b).all(|(a, b)| a.to_bits() == b.to_bits()),
                "{rows}×{inp}→{out}"
            );
        }
    }

    #[test]
    fn int8_is_close_to_the_f32_product() {
        for (rows, inp, out) in [(3, 5, 2), (9, 384, 150), (20, 1536, 70), (203, 1536, 70)] {
            let (x, weight, bias) = case(rows, inp, out);
            let exact = Linear::new(&weight, bias.clone(), inp, out);
            let quant = QuantLinear::new(&weight, bias, inp, out, Kernel::best());
            let (mut a, mut b) = (vec![0f32; rows * out], vec![0f32; rows * out]);
            exact.forward(&x, rows, &mut a, false);
            quant.forward(&x, rows, &mut b, true);
            // Each product is off by at most half a step of x and of w: bound the sum by the
            // row's and column's scales.
            let xmax = 3.0f32;
            let wmax = 0.05f32;
            let bound = inp as f32 * (xmax * wmax / 127.0) * 1.01 + 1e-4;
            for (i, (a, b)) in a.iter().zip(&b).enumerate() {
                assert!(
                    (a - b).abs() <= bound,
                    "{rows}×{inp}→{out} at {i}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn zero_and_empty_inputs_stay_finite() {
        let quant = QuantLinear::new(&[0.0; 8], vec![0.5, -0.5], 4, 2, Kernel::best());
        let mut out = vec![f32::NAN; 2];
        quant.forward(&[0.0; 4], 1, &mut out, false);
        assert_eq!(out, [0.5, -0.5]);
        quant.forward(&[], 0, &mut [], false);
    }
}
