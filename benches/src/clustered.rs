//! Clustered synthetic vectors for when no real embeddings are at hand. Never uniform random:
//! uniform high-dimensional data has no neighbourhood structure and says nothing about recall.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `n` unit vectors around `clusters` Gaussian centres with per-cluster spread, deterministic in
/// `seed`.
pub fn clustered(n: usize, dim: usize, clusters: usize, seed: u64) -> Vec<f32> {
    let mut rng = StdRng::seed_from_u64(seed);
    let gauss = |rng: &mut StdRng| {
        let u: f32 = rng.gen_range(f32::EPSILON..1.0);
        let v: f32 = rng.gen_range(0.0..1.0);
        (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
    };
    let centres: Vec<Vec<f32>> = (0..clusters)
        .map(|_| (0..dim).map(|_| gauss(&mut rng)).collect())
        .collect();
    let spread: Vec<f32> = (0..clusters).map(|_| rng.gen_range(0.35..0.9)).collect();
    let mut out = Vec::with_capacity(n * dim);
    for _ in 0..n {
        let c = rng.gen_range(0..clusters);
        let start = out.len();
        for &x in &centres[c] {
            out.push(x + spread[c] * gauss(&mut rng));
        }
        let row = &mut out[start..];
        let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        row.iter_mut().for_each(|x| *x /= norm);
    }
    out
}
