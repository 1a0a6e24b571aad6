//! Clustered test data (never uniform random: uniform high-dimensional data says nothing about
//! real recall) and recall helpers.

use memloop_index::{Hit, Index, Params, UnitVector, UnitVectors};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `n` unit vectors in `dim` dimensions drawn around `clusters` centres of varying spread.
pub struct Clustered {
    centres: Vec<Vec<f32>>,
    spread: Vec<f32>,
    rng: StdRng,
    dim: usize,
}

impl Clustered {
    pub fn new(dim: usize, clusters: usize, seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let centres = (0..clusters)
            .map(|_| (0..dim).map(|_| gauss(&mut rng)).collect())
            .collect();
        let spread = (0..clusters).map(|_| rng.gen_range(0.35..0.9)).collect();
        Clustered {
            centres,
            spread,
            rng,
            dim,
        }
    }

    pub fn next(&mut self) -> Vec<f32> {
        let c = self.rng.gen_range(0..self.centres.len());
        let s = self.spread[c];
        let mut v: Vec<f32> = (0..self.dim)
            .map(|i| self.centres[c][i] + s * gauss(&mut self.rng))
            .collect();
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= norm);
        v
    }

    pub fn take(&mut self, n: usize) -> Vec<f32> {
        (0..n).flat_map(|_| self.next()).collect()
    }
}

fn gauss(rng: &mut StdRng) -> f32 {
    let u: f32 = rng.gen_range(f32::EPSILON..1.0);
    let v: f32 = rng.gen_range(0.0..1.0);
    (-2.0 * u.ln()).sqrt() * (std::f32::consts::TAU * v).cos()
}

/// `v` as a unit vector (test data is valid).
pub fn unit(v: &[f32]) -> UnitVector {
    UnitVector::new(v.to_vec()).unwrap()
}

/// `flat` as a batch of unit vectors of `dim`.
pub fn rows(flat: &[f32], dim: usize) -> UnitVectors {
    UnitVectors::new(flat.to_vec(), dim).unwrap()
}

pub fn params(dim: usize) -> Params {
    Params::builder(dim)
        .m(16)
        .ef_construction(200)
        .build()
        .unwrap()
}

/// Seed for this run: `MEMLOOP_TEST_SEED` or a fixed default; printed so failures can be rerun.
pub fn seed(default: u64) -> u64 {
    let s = std::env::var("MEMLOOP_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    eprintln!("seed = {s} (set MEMLOOP_TEST_SEED to rerun)");
    s
}

/// Mean recall@k of `got` against `want`.
pub fn recall(got: &[Vec<Hit>], want: &[Vec<Hit>], k: usize) -> f64 {
    let mut hit = 0usize;
    let mut total = 0usize;
    for (g, w) in got.iter().zip(want) {
        let w: Vec<u64> = w.iter().take(k).map(|h| h.id).collect();
        hit += g.iter().take(k).filter(|h| w.contains(&h.id)).count();
        total += w.len();
    }
    hit as f64 / total.max(1) as f64
}

pub fn search_all(
    index: &Index,
    queries: &[f32],
    dim: usize,
    k: usize,
    ef: usize,
) -> Vec<Vec<Hit>> {
    queries
        .chunks(dim)
        .map(|q| index.search(&unit(q), k, ef).unwrap())
        .collect()
}

pub fn exact_all(index: &Index, queries: &[f32], dim: usize, k: usize) -> Vec<Vec<Hit>> {
    queries
        .chunks(dim)
        .map(|q| index.search_exact(&unit(q), k).unwrap())
        .collect()
}
