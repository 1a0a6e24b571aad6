//! Dense layers on the CPU: `out = x · Wᵀ + b` through the `gemm` crate (the matrix
//! multiplication candle itself uses), called directly on our own row-major buffers, so no
//! tensor is allocated, copied or made contiguous around it.
//!
//! The weight is stored pre-arranged for the way gemm reads it: transposed (`inp × out`), in
//! panels of 64 output columns, each panel one contiguous `inp × 64` block. gemm then reads a
//! panel front to back, which the hardware prefetcher streams from memory — the weights of a
//! whole model (42 MB for MiniLM) do not fit in cache, and reading them with a row stride
//! measured a third slower with one sentence per call. Panels are also the unit of
//! parallelism: threads take whole panels, each a small single-threaded product.
#![allow(unsafe_code)]

use super::panels::{for_each_task, shared, Dst, PANEL};

/// A dense layer, its weight in transposed panels (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct Linear {
    panels: Vec<f32>,
    bias: Vec<f32>,
    pub(crate) inp: usize,
    pub(crate) out: usize,
}

impl Linear {
    /// A layer from PyTorch's `nn.Linear` layout: `weight` is `out × inp`, row-major.
    pub(crate) fn new(weight: &[f32], bias: Vec<f32>, inp: usize, out: usize) -> Self {
        assert_eq!(weight.len(), out * inp, "weight is not out × in");
        assert_eq!(bias.len(), out, "bias is not out");
        let mut panels = vec![0f32; inp * out];
        for (o, row) in weight.chunks_exact(inp).enumerate() {
            let (start, width) = Self::panel(o / PANEL, out);
            let col = o - start;
            for (i, &w) in row.iter().enumerate() {
                panels[start * inp + i * width + col] = w;
            }
        }
        Linear {
            panels,
            bias,
            inp,
            out,
        }
    }

    /// First column and width of panel `p` of a layer with `out` columns.
    fn panel(p: usize, out: usize) -> (usize, usize) {
        let start = p * PANEL;
        (start, PANEL.min(out - start))
    }

    /// `out[r] = x[r] · Wᵀ + b` for the `rows` rows of `x` (`rows × inp`); `out` is
    /// `rows × out`. When `parallel`, the panels are shared over the current rayon pool.
    pub(crate) fn forward(&self, x: &[f32], rows: usize, out: &mut [f32], parallel: bool) {
        let (k, n) = (self.inp, self.out);
        assert_eq!(x.len(), rows * k, "input is not rows × in");
        assert_eq!(out.len(), rows * n, "output is not rows × out");
        assert_eq!(self.panels.len(), k * n, "weight is not in × out");
        if rows == 0 {
            return;
        }
        for row in out.chunks_exact_mut(n) {
            row.copy_from_slice(&self.bias);
        }
        let dst = Dst(out.as_mut_ptr());
        let one = |p: usize| {
            let (start, width) = Self::panel(p, n);
            // SAFETY: the asserts above fix every extent gemm reads or writes. dst: the
            // `rows × width` block of `out` starting at column `start` (column stride 1, row
            // stride n; start + width ≤ n, so it stays inside `out`); lhs: `x`, `rows × k`
            // row-major; rhs: the panel, `k × width` row-major at `start · k` in `panels`
            // (start · k + k · width ≤ k · n). Panels cover disjoint column ranges, so threads
            // running different panels never write the same element, and `out` is uniquely
            // borrowed by this call and aliases neither input. `read_dst` with alpha = 1 adds
            // the product to the bias already in `out`.
            unsafe {
                gemm::gemm(
                    rows,
                    width,
                    k,
                    dst.at(start),
                    1,
                    n as isize,
                    true,
                    x.as_ptr(),
                    1,
                    k as isize,
                    self.panels.as_ptr().add(start * k),
                    1,
                    width as isize,
                    1.0f32,
                    1.0f32,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                );
            }
        };
        for_each_task(n.div_ceil(PANEL), shared(parallel, rows, k, n), one);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_textbook_product() {
        // 3 columns: one narrow panel; 150: two full panels and a narrow one.
        for (rows, inp, out, parallel) in
            [(5, 7, 3, false), (9, 33, 150, false), (64, 130, 150, true)]
        {
            let x: Vec<f32> = (0..rows * inp).map(|i| (i as f32 * 0.37).sin()).collect();
            let weight: Vec<f32> = (0..out * inp).map(|i| (i as f32 * 0.11).cos()).collect();
            let bias: Vec<f32> = (0..out).map(|o| o as f32 * 0.5 - 1.0).collect();
            let lin = Linear::new(&weight, bias.clone(), inp, out);
            let mut got = vec![f32::NAN; rows * out];
            lin.forward(&x, rows, &mut got, parallel);
            for r in 0..rows {
                for o in 0..out {
                    let want: f32 = bias[o]
                        + (0..inp)
                            .map(|i| x[r * inp + i] * weight[o * inp + i])
                            .sum::<f32>();
                    assert!((got[r * out + o] - want).abs() < 1e-4, "{r},{o}");
                }
            }
        }
    }
}
