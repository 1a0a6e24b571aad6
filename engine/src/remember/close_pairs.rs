//! Whether a batch memory has a near duplicate among the batch's earlier memories: the exact
//! cosine, computed only for the pairs that a bound on their leading dimensions cannot rule out.
//!
//! For unit vectors u and v split into a head (the first [`HEAD`] dimensions) and a tail,
//! Cauchy–Schwarz on the tails gives u·v ≤ u_head·v_head + |u_tail|·|v_tail|, with
//! |u_tail| = √(1 − |u_head|²). On real sentence embeddings (MiniLM, 384 dimensions) the bound
//! falls below a 0.95 threshold for 99.9% of pairs of different texts, so a 1,000-memory
//! batch's half million pair checks read a sixth of each vector instead of all of it. The
//! decision is the one the full cosine gives: the bound never rules out a pair whose cosine
//! reaches the threshold (it carries a slack far above float rounding), and every other pair
//! is decided by the same `cosine` as before.

use memloop_index::{simd, UnitVector};

/// Leading dimensions whose inner product, with the tails' norms, bounds the whole.
const HEAD: usize = 64;
/// Added to the bound to cover float rounding (unit vectors are unit to about 1e-6).
const SLACK: f32 = 1e-3;

/// The vectors of one batch, with what their bound needs.
pub(crate) struct BatchVectors<'a> {
    rows: Vec<&'a UnitVector>,
    /// √(1 − |head|²) per row (about 0 for a vector no longer than its head).
    tail_norm: Vec<f32>,
}

/// The leading dimensions of `v` that the bound reads.
fn head(v: &[f32]) -> &[f32] {
    &v[..HEAD.min(v.len())]
}

impl<'a> BatchVectors<'a> {
    pub(crate) fn new(rows: Vec<&'a UnitVector>) -> BatchVectors<'a> {
        let tail_norm = rows
            .iter()
            .map(|v| {
                let h = head(v);
                (1.0 - simd::dot(h, h)).max(0.0).sqrt()
            })
            .collect();
        BatchVectors { rows, tail_norm }
    }

    /// True when some row before `i` has a cosine of at least `threshold` with row `i`.
    pub(crate) fn close_to_earlier(&self, i: usize, threshold: f32) -> bool {
        let v = self.rows[i];
        let (h, tail) = (head(v), self.tail_norm[i]);
        self.rows[..i]
            .iter()
            .zip(&self.tail_norm)
            .any(|(e, &e_tail)| {
                let bound = simd::dot(head(e), h) + e_tail * tail + SLACK;
                bound >= threshold && e.cosine(v) >= threshold
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn unit(v: Vec<f32>) -> UnitVector {
        UnitVector::new(v).expect("non-zero")
    }

    /// A vector near `base`: `base + noise`, normalised.
    fn near(base: &UnitVector, noise: &[f32]) -> UnitVector {
        unit(base.iter().zip(noise).map(|(b, n)| b + n).collect())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The bounded check answers exactly as the full cosine of every earlier row does, on
        /// batches mixing unrelated vectors with near copies at every distance around the
        /// threshold.
        #[test]
        fn decides_as_the_full_cosine(
            dim in prop_oneof![Just(8usize), Just(65), Just(384)],
            seeds in prop::collection::vec(prop::collection::vec(-1.0f32..1.0, 384), 2..24),
            scales in prop::collection::vec(0.0f32..0.6, 24),
            threshold in 0.80f32..0.99,
        ) {
            let mut rows: Vec<UnitVector> = Vec::new();
            for (i, s) in seeds.iter().enumerate() {
                let s = &s[..dim];
                if let (1, Some(last)) = (i % 2, rows.last()) {
                    // A near copy of the row before, at a random distance.
                    let noise: Vec<f32> = s.iter().map(|x| x * scales[i]).collect();
                    rows.push(near(last, &noise));
                } else if s.iter().any(|&x| x != 0.0) {
                    rows.push(unit(s.to_vec()));
                }
            }
            let batch = BatchVectors::new(rows.iter().collect());
            for i in 0..rows.len() {
                let full = rows[..i].iter().any(|e| e.cosine(&rows[i]) >= threshold);
                prop_assert_eq!(batch.close_to_earlier(i, threshold), full);
            }
        }
    }

    #[test]
    fn finds_a_copy_whose_head_differs_most() {
        // All of the difference in the head: the bound must still let the pair through.
        let mut a = vec![0.0f32; 384];
        a[0] = 1.0;
        a[100] = 3.0;
        let mut b = a.clone();
        b[1] = 0.9;
        let (a, b) = (unit(a), unit(b));
        let c = a.cosine(&b);
        let batch = BatchVectors::new(vec![&a, &b]);
        assert!(batch.close_to_earlier(1, c - 1e-4));
        assert!(!batch.close_to_earlier(1, c + 1e-4));
        assert!(!batch.close_to_earlier(0, 0.0));
    }
}
