//! Element-wise kernels of the encoder, written as straight loops over slices without calls
//! into libm and with reductions in eight lanes, so the compiler vectorises them; the passes
//! over whole rows are compiled for AVX2 + FMA too (`simd.rs`): `exp` (Cephes' single-precision polynomial),
//! `erf` (the rational approximation Eigen and XLA use for f32), GELU, softmax and the fused
//! residual + layer norm.

use super::simd::multiversion;

/// The constants of Cephes' `expf` ([`exp`], and the AVX-512 form in `attention_avx512.rs`).
pub(crate) mod exp_poly {
    pub(crate) const LOG2E: f32 = std::f32::consts::LOG2_E;
    /// ln 2 in two parts: `n · LN2_HI` is exact for the n an f32 exponential meets.
    pub(crate) const LN2_HI: f32 = 0.693_359_4;
    pub(crate) const LN2_LO: f32 = -2.121_944_4e-4;
    /// e^r ≈ 1 + r + r²·p(r) on |r| ≤ ln 2 / 2, p's coefficients from the highest power.
    pub(crate) const COEFFS: [f32; 6] = [
        1.987_569_1e-4,
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        1.666_666_5e-1,
        5e-1,
    ];
}

/// `x · y + a`: one fused multiply-add where the CPU has the instruction (x86-64 with FMA,
/// aarch64), a product and a sum where it does not (WebAssembly: its `fmaf` is a software
/// routine, 40% of the encoder's time when attention called it; the golden tests hold either
/// form to sentence-transformers' vectors).
#[inline(always)]
pub(crate) fn madd(x: f32, y: f32, a: f32) -> f32 {
    #[cfg(target_family = "wasm")]
    {
        x * y + a
    }
    #[cfg(not(target_family = "wasm"))]
    {
        x.mul_add(y, a)
    }
}

/// e^x to about 2 ulp for x in [−87, 88] (Cephes `expf`: x = n·ln 2 + r, a degree-6
/// polynomial for e^r, 2ⁿ put straight into the exponent bits). Below −87 it returns ~1e-38
/// instead of a subnormal or zero, which no caller can tell apart after a sum.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    use exp_poly::{COEFFS, LN2_HI, LN2_LO, LOG2E};
    // Adding 1.5·2²³ rounds to the nearest integer n and leaves 0x4B40_0000 + n in the bits,
    // so neither the rounding nor 2ⁿ needs a libm call or a float-to-int conversion.
    const ROUND: f32 = 12_582_912.0;
    let x = x.clamp(-87.0, 88.0);
    let k = x * LOG2E + ROUND;
    let n = k - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let mut p = COEFFS[0];
    for c in &COEFFS[1..] {
        p = p * r + c;
    }
    let y = p * r * r + r + 1.0;
    let two_n = f32::from_bits(k.to_bits().wrapping_sub(0x4B40_0000).wrapping_add(127) << 23);
    y * two_n
}

/// Sum of `f(x)` over `xs` in eight interleaved lanes (the compiler keeps them in one vector
/// register; a plain sequential sum cannot be vectorised without reordering it).
#[inline(always)]
fn sum_of(xs: &[f32], f: impl Fn(f32) -> f32) -> f32 {
    let mut lanes = [0f32; 8];
    let chunks = xs.chunks_exact(8);
    let tail: f32 = chunks.remainder().iter().map(|&x| f(x)).sum();
    for c in chunks {
        for (l, &x) in lanes.iter_mut().zip(c) {
            *l += f(x);
        }
    }
    lanes.iter().sum::<f32>() + tail
}

/// Sum of `xs` (see [`sum_of`]).
#[inline(always)]
pub(crate) fn sum(xs: &[f32]) -> f32 {
    sum_of(xs, |x| x)
}

/// Largest element (−∞ for an empty slice), in eight lanes.
#[inline(always)]
fn max(xs: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let chunks = xs.chunks_exact(8);
    let mut m = f32::NEG_INFINITY;
    for &x in chunks.remainder() {
        m = if x > m { x } else { m };
    }
    for c in chunks {
        for (l, &x) in lanes.iter_mut().zip(c) {
            *l = if x > *l { x } else { *l };
        }
    }
    lanes.iter().fold(m, |m, &x| if x > m { x } else { m })
}

/// The coefficients of [`erf`]'s rational function (and the AVX-512 form in
/// `gelu_avx512.rs`), from the highest power of x².
pub(crate) mod erf_poly {
    /// The numerator, times x.
    pub(crate) const P: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.9546e-3,
        -1.609_603_3e-2,
    ];
    /// The denominator.
    pub(crate) const Q: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329_3e-3,
        -1.426_473_9e-2,
    ];
}

/// erf(x) to within 5e-7 absolute: a rational function of x on [−4, 4] (outside, ±1 to f32
/// precision), from Eigen's / XLA's `erf` for floats.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    use erf_poly::{P, Q};
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let mut p = P[0];
    for c in &P[1..] {
        p = p * x2 + c;
    }
    let mut q = Q[0];
    for c in &Q[1..] {
        q = q * x2 + c;
    }
    x * p / q
}

multiversion! {
    /// GELU with the exact (erf) form, in place: x·½(1 + erf(x/√2)) (in AVX-512 intrinsics:
    /// `gelu_avx512.rs`).
    pub(crate) fn gelu_erf(xs: &mut [f32]) {
        for x in xs {
            *x = 0.5 * *x * (1.0 + erf(*x * std::f32::consts::FRAC_1_SQRT_2));
        }
    }
}

multiversion! {
    /// GELU with the tanh approximation, in place.
    pub(crate) fn gelu_tanh(xs: &mut [f32]) {
        const C: f32 = 0.797_884_6; // √(2/π)
        for x in xs {
            let u = C * (*x + 0.044_715 * *x * *x * *x);
            // tanh(u) = 1 − 2 / (e^{2u} + 1)
            let t = 1.0 - 2.0 / (exp(2.0 * u) + 1.0);
            *x = 0.5 * *x * (1.0 + t);
        }
    }
}

multiversion! {
    /// ReLU, in place.
    pub(crate) fn relu(xs: &mut [f32]) {
        for x in xs {
            *x = x.max(0.0);
        }
    }
}

/// Softmax of one row, in place.
#[inline(always)]
pub(crate) fn softmax(row: &mut [f32]) {
    let m = max(row);
    for x in row.iter_mut() {
        *x = exp(*x - m);
    }
    let inv = 1.0 / sum(row);
    for x in row.iter_mut() {
        *x *= inv;
    }
}

/// Layer-norm parameters.
#[derive(Debug, Clone)]
pub(crate) struct Norm {
    pub(crate) weight: Vec<f32>,
    pub(crate) bias: Vec<f32>,
    pub(crate) eps: f32,
}

impl Norm {
    /// Normalises one row in place (two passes: mean, then variance, as PyTorch does).
    #[inline(always)]
    pub(crate) fn apply(&self, row: &mut [f32]) {
        let n = row.len() as f32;
        let mean = sum(row) / n;
        let var = sum_of(row, |x| (x - mean) * (x - mean)) / n;
        let inv = 1.0 / (var + self.eps).sqrt();
        for ((x, w), b) in row.iter_mut().zip(&self.weight).zip(&self.bias) {
            *x = (*x - mean) * inv * w + b;
        }
    }

    /// `x = LayerNorm(x + residual)` for one row.
    #[inline(always)]
    pub(crate) fn add_apply(&self, x: &mut [f32], residual: &[f32]) {
        for (x, r) in x.iter_mut().zip(residual) {
            *x += r;
        }
        self.apply(x);
    }
}

multiversion! {
    /// Normalises every row of `xs` (rows as wide as `norm`).
    pub(crate) fn norm_rows(norm: &Norm, xs: &mut [f32]) {
        for row in xs.chunks_exact_mut(norm.weight.len()) {
            norm.apply(row);
        }
    }
}

multiversion! {
    /// `x = LayerNorm(x + residual)` for every row of `x` (rows as wide as `norm`).
    pub(crate) fn add_norm_rows(norm: &Norm, x: &mut [f32], residual: &[f32]) {
        let width = norm.weight.len();
        for (x, r) in x.chunks_exact_mut(width).zip(residual.chunks_exact(width)) {
            norm.add_apply(x, r);
        }
    }
}

/// The check every GELU kernel in intrinsics passes (`gelu_avx2.rs`, `gelu_avx512.rs`):
/// 2,000,003 values from −12 to 12 (the last register partial) and edges, each within erf's
/// error of the exact value and within 1e-6 (scaled) of the portable pass.
#[cfg(test)]
pub(crate) fn check_gelu_kernel(kernel: impl Fn(&mut [f32])) {
    let mut xs: Vec<f32> = (0..2_000_003)
        .map(|i| -12.0 + 24.0 * i as f32 / 2_000_002.0)
        .collect();
    xs.extend([0.0, -0.0, 1e-30, -1e-30, 100.0, -100.0, 1e30, -1e30]);
    let mut want = xs.clone();
    gelu_erf(&mut want);
    let mut got = xs.clone();
    kernel(&mut got);
    let mut worst = 0f32;
    for ((x, g), w) in xs.iter().zip(&got).zip(&want) {
        let exact = 0.5 * f64::from(*x) * (1.0 + libm::erf(f64::from(*x) / 2f64.sqrt()));
        // erf's own error (5e-7) times x/2, and f32's rounding of the result.
        let tolerance = 5e-7 * (1.0 + f64::from(x.abs()));
        assert!(
            (f64::from(*g) - exact).abs() <= tolerance,
            "gelu({x}) = {g}, exactly {exact}"
        );
        // Both within erf's error of the exact value, so of each other twice that.
        assert!(
            (g - w).abs() <= 1e-6 * (1.0 + x.abs()),
            "at {x}: {g} against {w}"
        );
        worst = worst.max((g - w).abs() / (1.0 + x.abs()));
    }
    eprintln!("largest difference from the portable pass: {worst:e}");
    assert_eq!(got[2_000_003], 0.0);
    assert!((got[2_000_009] / 1e30 - 1.0).abs() < 1e-6);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_a_few_ulp_of_libm() {
        let mut worst = 0f32;
        for i in 0..=200_000 {
            let x = -87.0 + 175.0 * i as f32 / 200_000.0;
            let (got, want) = (exp(x), x.exp());
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 4.0 * f32::EPSILON, "relative error {worst}");
        assert_eq!(exp(0.0), 1.0);
        assert!(exp(-1000.0) < 1e-37 && exp(-1000.0) >= 0.0);
    }

    #[test]
    fn erf_is_within_5e7_of_libm() {
        let mut worst = 0f64;
        for i in 0..=100_000 {
            let x = -6.0 + 12.0 * f64::from(i) / 100_000.0;
            let got = f64::from(erf(x as f32));
            worst = worst.max((got - libm::erf(x)).abs());
        }
        assert!(worst < 5e-7, "absolute error {worst}");
    }

    #[test]
    fn gelu_forms_agree_where_they_should() {
        let mut a: Vec<f32> = (-80..=80).map(|i| i as f32 / 10.0).collect();
        let mut b = a.clone();
        gelu_erf(&mut a);
        gelu_tanh(&mut b);
        for (x, (a, b)) in (-80..=80).map(|i| i as f32 / 10.0).zip(a.iter().zip(&b)) {
            let exact = 0.5 * f64::from(x) * (1.0 + libm::erf(f64::from(x) / 2f64.sqrt()));
            assert!((f64::from(*a) - exact).abs() < 1e-6, "erf form at {x}");
            assert!((a - b).abs() < 1e-3, "tanh form at {x}");
        }
    }

    #[test]
    fn softmax_sums_to_one_and_keeps_order() {
        let mut row = vec![1.0, 3.0, -2.0, 3.0, 10.0];
        softmax(&mut row);
        assert!((row.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(row[4] > 0.99 && row[1] == row[3] && row[1] > row[0] && row[0] > row[2]);
        let mut long: Vec<f32> = (0..37).map(|i| (i as f32 * 0.7).sin() * 5.0).collect();
        let want: Vec<f64> = {
            let m = long.iter().copied().fold(f32::MIN, f32::max) as f64;
            let e: Vec<f64> = long.iter().map(|&x| (f64::from(x) - m).exp()).collect();
            let z: f64 = e.iter().sum();
            e.iter().map(|x| x / z).collect()
        };
        softmax(&mut long);
        for (g, w) in long.iter().zip(&want) {
            assert!((f64::from(*g) - w).abs() < 1e-6);
        }
        assert_eq!(sum(&[1.0; 19]), 19.0);
        assert_eq!(
            max(&[1.0, 9.0, 3.0, 2.0, 0.0, 4.0, 5.0, 6.0, 7.0, 8.5]),
            9.0
        );
    }

    #[test]
    fn layer_norm_centres_and_scales() {
        let norm = Norm {
            weight: vec![2.0; 4],
            bias: vec![1.0; 4],
            eps: 1e-12,
        };
        let mut row = vec![1.0, 2.0, 3.0, 4.0];
        norm.add_apply(&mut row, &[1.0, 1.0, 1.0, 1.0]);
        let z: Vec<f32> = row.iter().map(|x| (x - 1.0) / 2.0).collect();
        assert!(z.iter().sum::<f32>().abs() < 1e-6);
        assert!((z.iter().map(|x| x * x).sum::<f32>() / 4.0 - 1.0).abs() < 1e-5);
    }
}
