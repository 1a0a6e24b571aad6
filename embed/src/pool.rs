//! Pooling and output normalisation on the host, fused into one pass over the hidden states.
//!
//! - mean over each sequence's tokens (sentence-transformers' `Pooling(mean)` over the
//!   attention mask; the encoders hand over only real tokens), then
//! - either L2 normalisation, or for Matryoshka dimensions nomic's recipe: layer norm without
//!   affine parameters (eps 1e-5) over the full vector, keep the first `d`, L2-normalise.

/// Mean-pools packed hidden states (sequences row after row, `Σ lens × dim`): one mean per
/// sequence over all its tokens (every packed token is a real one). An empty sequence gives
/// the zero vector.
pub(crate) fn mean_packed(hidden: &[f32], lens: &[usize], dim: usize) -> Vec<Vec<f32>> {
    let mut start = 0;
    lens.iter()
        .map(|&len| {
            let mut acc = vec![0f32; dim];
            for row in hidden[start * dim..(start + len) * dim].chunks_exact(dim) {
                acc.iter_mut().zip(row).for_each(|(a, x)| *a += x);
            }
            start += len;
            let inv = 1.0 / (len.max(1) as f32);
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
    fn mean_packed_averages_each_sequence_alone() {
        // dim 2; sequences of 3, 2 and 0 tokens packed row after row.
        let hidden = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 1.0, 3.0, 3.0];
        let p = mean_packed(&hidden, &[3, 2, 0], 2);
        assert_eq!(p, vec![vec![3.0, 4.0], vec![2.0, 2.0], vec![0.0, 0.0]]);
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
