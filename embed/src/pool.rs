//! Pooling and output normalisation on the host, fused into one pass over the hidden states.
//!
//! - mean over the attention mask (sentence-transformers' `Pooling(mean)`), then
//! - either L2 normalisation, or for Matryoshka dimensions nomic's recipe: layer norm without
//!   affine parameters (eps 1e-5) over the full vector, keep the first `d`, L2-normalise.

/// Mean-pools `hidden` (`batch × seq × dim`, row-major) over the tokens whose `mask` is 1.
pub(crate) fn mean_pool(
    hidden: &[f32],
    mask: &[u32],
    batch: usize,
    seq: usize,
    dim: usize,
) -> Vec<Vec<f32>> {
    (0..batch)
        .map(|b| {
            let mut acc = vec![0f32; dim];
            let mut n = 0f32;
            for t in 0..seq {
                if mask[b * seq + t] == 0 {
                    continue;
                }
                n += 1.0;
                let row = &hidden[(b * seq + t) * dim..(b * seq + t + 1) * dim];
                acc.iter_mut().zip(row).for_each(|(a, x)| *a += x);
            }
            let inv = 1.0 / n.max(1e-9);
            acc.iter_mut().for_each(|a| *a *= inv);
            acc
        })
        .collect()
}

/// Scales `v` to unit L2 norm (a zero vector stays zero).
pub(crate) fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// nomic's Matryoshka step: layer norm (no affine, eps 1e-5), first `d` components, L2.
pub(crate) fn matryoshka(v: &[f32], d: usize) -> Vec<f32> {
    let n = v.len() as f32;
    let mean = v.iter().sum::<f32>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / n;
    let inv = 1.0 / (var + 1e-5).sqrt();
    let mut out: Vec<f32> = v.iter().take(d).map(|x| (x - mean) * inv).collect();
    l2_normalize(&mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pool_ignores_masked_tokens() {
        // batch 2, seq 3, dim 2; second row has one padded token.
        let hidden = [
            1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 1.0, 3.0, 3.0, 100.0, 100.0,
        ];
        let mask = [1, 1, 1, 1, 1, 0];
        let p = mean_pool(&hidden, &mask, 2, 3, 2);
        assert_eq!(p[0], vec![3.0, 4.0]);
        assert_eq!(p[1], vec![2.0, 2.0]);
    }

    #[test]
    fn matryoshka_truncates_and_normalises() {
        let v = [1.0, 2.0, 3.0, 4.0];
        let m = matryoshka(&v, 2);
        assert_eq!(m.len(), 2);
        assert!((m.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(
            m[0] < 0.0 && m[1] < 0.0,
            "both below the mean after layer norm"
        );
    }
}
