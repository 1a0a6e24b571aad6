//! The `sentences` table: a memory's sentences' own vectors, beside its one pooled vector.
//!
//! A memory pooled from several sentences is found by its pooled vector, and then scored by
//! its best sentence (`retrieve::sentences`): one sentence that answers a question is diluted
//! in the mean of a long text. The vectors are the ones the pooled vector averaged, kept at
//! write time at no extra embedding cost, in 8 bits with a scale each (a quarter of f32's
//! bytes; the cosine they give is within about 0.01 of f32's).
//!
//! A row: `count: u8`, then `count` scales (`f32`, little-endian), then `count × dim` signed
//! bytes, the vectors in order. A memory without a row (a text of one sentence, a store
//! written before the table, a memory imported or pulled from another device) is scored by
//! its pooled vector.

use super::{db, sealing, Store, SENTENCES};
use crate::crypt::seal::Table;
use crate::error::Result;
use crate::item::MemoryId;

/// The most sentence vectors one memory keeps (the embedder's most pieces of a text).
pub(crate) const MAX_SENTENCES: usize = memloop_embed::MAX_PIECES;

/// A memory's sentence vectors, decoded: `scales.len()` vectors of `dim` bytes each.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SentenceVectors {
    scales: Vec<f32>,
    codes: Vec<i8>,
}

impl SentenceVectors {
    /// The row for `vectors` (unit vectors of one dimension; at most [`MAX_SENTENCES`], the
    /// rest dropped).
    pub(crate) fn encode(vectors: &[Vec<f32>]) -> Vec<u8> {
        let vectors = &vectors[..vectors.len().min(MAX_SENTENCES)];
        let dim = vectors.first().map_or(0, Vec::len);
        let mut out = Vec::with_capacity(1 + vectors.len() * (4 + dim));
        out.push(vectors.len() as u8);
        let scales: Vec<f32> = vectors
            .iter()
            .map(|v| v.iter().fold(0.0f32, |m, x| m.max(x.abs())) / 127.0)
            .collect();
        for s in &scales {
            out.extend_from_slice(&s.to_le_bytes());
        }
        for (v, &s) in vectors.iter().zip(&scales) {
            for &x in v {
                let q = if s > 0.0 { (x / s).round() } else { 0.0 };
                out.push(q.clamp(-127.0, 127.0) as i8 as u8);
            }
        }
        out
    }

    /// The vectors a row holds, each of `dim` values; `None` when the row is not one: a
    /// count over [`MAX_SENTENCES`], a length that is not exactly what the count says, or a
    /// scale that is not finite and non-negative.
    pub(crate) fn decode(bytes: &[u8], dim: usize) -> Option<SentenceVectors> {
        let (&count, rest) = bytes.split_first()?;
        let count = usize::from(count);
        if count > MAX_SENTENCES || rest.len() != count.checked_mul(4 + dim)? {
            return None;
        }
        let (scales, codes) = rest.split_at(count * 4);
        let scales: Vec<f32> = scales
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        if scales.iter().any(|s| !s.is_finite() || *s < 0.0) {
            return None;
        }
        Some(SentenceVectors {
            scales,
            codes: codes.iter().map(|&b| b as i8).collect(),
        })
    }

    /// The best cosine of a sentence with the unit vector `query` (`None` for no sentence).
    pub(crate) fn best_cosine(&self, query: &[f32]) -> Option<f32> {
        let dim = query.len();
        self.scales
            .iter()
            .zip(self.codes.chunks_exact(dim.max(1)))
            .map(|(&s, codes)| {
                s * codes
                    .iter()
                    .zip(query)
                    .map(|(&c, &q)| f32::from(c) * q)
                    .sum::<f32>()
            })
            .reduce(f32::max)
    }
}

impl Store {
    /// The sentence vectors of `ids` that have them (vectors of `dim` values), in one read
    /// transaction. A store written before the table has none.
    ///
    /// # Errors
    /// [`crate::Error::Corrupt`] for a row that does not decode.
    pub(crate) fn sentences(
        &self,
        ids: &[MemoryId],
        dim: usize,
    ) -> Result<Vec<(MemoryId, SentenceVectors)>> {
        let tx = self.read_tx()?;
        let t = match tx.open_table(SENTENCES) {
            Ok(t) => t,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(db(e)),
        };
        let mut out = Vec::new();
        for &id in ids {
            let Some(v) = t.get(id.get()).map_err(db)? else {
                continue;
            };
            // An erased scope's row (a copy taken before the erasure) opens as nothing.
            let Some(plain) =
                self.sealing
                    .open(Table::Sentences, &sealing::rid(id.get()), v.value())?
            else {
                continue;
            };
            let decoded = SentenceVectors::decode(&plain, dim)
                .ok_or_else(|| self.corrupt(format!("sentence vectors of memory {id}")))?;
            out.push((id, decoded));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: Vec<f32>) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }

    #[test]
    fn a_row_round_trips_and_scores_within_a_hundredth_of_f32() {
        let a = unit((0..16).map(|i| (i as f32 * 0.7).sin()).collect());
        let b = unit((0..16).map(|i| (i as f32 * 1.3).cos()).collect());
        let q = unit((0..16).map(|i| (i as f32 * 0.5).sin() + 0.2).collect());
        let row = SentenceVectors::encode(&[a.clone(), b.clone()]);
        assert_eq!(row.len(), 1 + 2 * (4 + 16));
        let s = SentenceVectors::decode(&row, 16).unwrap();
        let dot = |x: &[f32]| x.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
        let exact = dot(&a).max(dot(&b));
        assert!((s.best_cosine(&q).unwrap() - exact).abs() < 0.01);
    }

    #[test]
    fn rows_that_lie_about_their_length_are_refused() {
        let row = SentenceVectors::encode(&[vec![1.0; 8], vec![0.5; 8]]);
        assert!(SentenceVectors::decode(&row, 8).is_some());
        // Short by a byte, long by a byte, another dimension, an empty row.
        assert!(SentenceVectors::decode(&row[..row.len() - 1], 8).is_none());
        let mut long = row.clone();
        long.push(0);
        assert!(SentenceVectors::decode(&long, 8).is_none());
        assert!(SentenceVectors::decode(&row, 7).is_none());
        assert!(SentenceVectors::decode(&[], 8).is_none());
        // A count past the most a memory keeps, with the bytes it claims.
        let n = MAX_SENTENCES + 1;
        let mut big = vec![n as u8];
        big.resize(1 + n * (4 + 8), 0);
        assert!(SentenceVectors::decode(&big, 8).is_none());
        // A scale that is not a number.
        let mut nan = row;
        nan[1..5].copy_from_slice(&f32::NAN.to_le_bytes());
        assert!(SentenceVectors::decode(&nan, 8).is_none());
    }

    #[test]
    fn no_sentence_scores_nothing() {
        let s = SentenceVectors::decode(&SentenceVectors::encode(&[]), 4).unwrap();
        assert_eq!(s.best_cosine(&[1.0, 0.0, 0.0, 0.0]), None);
    }
}
