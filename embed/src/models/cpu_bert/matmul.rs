//! Dense layers on the CPU: `out = x · Wᵀ + b` through the `gemm` crate (the matrix
//! multiplication candle itself uses), called directly on our own row-major buffers, so no
//! tensor is allocated, copied or made contiguous around it.
#![allow(unsafe_code)]

/// A dense layer, its weight kept transposed (`inp × out`, row-major): gemm then reads it as a
/// column-major left operand of the transposed product, which it packs by straight copies
/// instead of a strided gather on every call.
#[derive(Debug, Clone)]
pub(crate) struct Linear {
    weight_t: Vec<f32>,
    bias: Vec<f32>,
    pub(crate) inp: usize,
    pub(crate) out: usize,
}

impl Linear {
    /// A layer from PyTorch's `nn.Linear` layout: `weight` is `out × inp`, row-major.
    pub(crate) fn new(weight: &[f32], bias: Vec<f32>, inp: usize, out: usize) -> Self {
        assert_eq!(weight.len(), out * inp, "weight is not out × in");
        assert_eq!(bias.len(), out, "bias is not out");
        let mut weight_t = vec![0f32; inp * out];
        for (o, row) in weight.chunks_exact(inp).enumerate() {
            for (i, &w) in row.iter().enumerate() {
                weight_t[i * out + o] = w;
            }
        }
        Linear {
            weight_t,
            bias,
            inp,
            out,
        }
    }

    /// `out[r] = x[r] · Wᵀ + b` for the `rows` rows of `x` (`rows × inp`); `out` is
    /// `rows × out`. With `threads > 1` it is shared over the current rayon pool when the
    /// product is large enough.
    pub(crate) fn forward(&self, x: &[f32], rows: usize, out: &mut [f32], threads: usize) {
        let (k, n) = (self.inp, self.out);
        assert_eq!(x.len(), rows * k, "input is not rows × in");
        assert_eq!(out.len(), rows * n, "output is not rows × out");
        assert_eq!(self.weight_t.len(), k * n, "weight is not in × out");
        if rows == 0 {
            return;
        }
        for row in out.chunks_exact_mut(n) {
            row.copy_from_slice(&self.bias);
        }
        let parallelism = if threads > 1 && rows * n * k >= 1 << 18 {
            gemm::Parallelism::Rayon(threads)
        } else {
            gemm::Parallelism::None
        };
        // SAFETY: the asserts above fix every extent gemm reads or writes: dst is `rows × n`
        // row-major (column stride 1, row stride n) inside `out`; lhs is `rows × k` row-major
        // inside `x`; rhs is Wᵀ, `k × n` row-major in `weight_t` (row stride n, column stride
        // 1). The three buffers are distinct Rust allocations (`out` is a
        // unique borrow), so dst aliases neither input. `read_dst` with alpha = 1 adds the
        // product to the bias rows already in `out`.
        unsafe {
            gemm::gemm(
                rows,
                n,
                k,
                out.as_mut_ptr(),
                1,
                n as isize,
                true,
                x.as_ptr(),
                1,
                k as isize,
                self.weight_t.as_ptr(),
                1,
                n as isize,
                1.0f32,
                1.0f32,
                false,
                false,
                false,
                parallelism,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_textbook_product() {
        let (rows, inp, out) = (5, 7, 3);
        let x: Vec<f32> = (0..rows * inp).map(|i| (i as f32 * 0.37).sin()).collect();
        let weight: Vec<f32> = (0..out * inp).map(|i| (i as f32 * 0.11).cos()).collect();
        let bias = vec![0.5, -1.0, 2.0];
        let lin = Linear::new(&weight, bias.clone(), inp, out);
        let mut got = vec![f32::NAN; rows * out];
        lin.forward(&x, rows, &mut got, 2);
        for r in 0..rows {
            for o in 0..out {
                let want: f32 = bias[o]
                    + (0..inp)
                        .map(|i| x[r * inp + i] * weight[o * inp + i])
                        .sum::<f32>();
                assert!((got[r * out + o] - want).abs() < 1e-5, "{r},{o}");
            }
        }
    }
}
