//! Unit vectors: what the index stores and searches with, normalised once where they are made
//! (after embedding), so no later step normalises again.
//!
//! [`UnitVector`] is one vector, [`UnitVectors`] a batch laid out row after row (how the index
//! inserts in bulk). Both are finite and of L2 length 1 by construction.

use std::ops::Deref;

use crate::error::{IndexError, Result};
use crate::simd;

/// How far from 1 a vector's length may be and still be kept as it is: embedders emit unit
/// vectors up to rounding, and keeping them bit for bit means a memory scores the same in
/// every store that holds it.
const UNIT_TOLERANCE: f32 = 1e-6;

/// A finite vector of L2 length 1.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitVector(Vec<f32>);

impl UnitVector {
    /// Normalises `v` (a vector already of length 1 within rounding is kept bit for bit).
    ///
    /// # Errors
    /// [`IndexError::InvalidVector`] for an empty vector, a non-finite component or zero
    /// length.
    pub fn new(mut v: Vec<f32>) -> Result<UnitVector> {
        normalize(&mut v)?;
        Ok(UnitVector(v))
    }

    /// [`UnitVector::new`], checking the dimension first.
    ///
    /// # Errors
    /// [`IndexError::DimensionMismatch`], or as [`UnitVector::new`].
    pub fn with_dim(v: Vec<f32>, dim: usize) -> Result<UnitVector> {
        check_dim(dim, v.len())?;
        UnitVector::new(v)
    }

    /// Its components.
    pub fn as_slice(&self) -> &[f32] {
        &self.0
    }

    /// Its components, owned.
    pub fn into_vec(self) -> Vec<f32> {
        self.0
    }

    /// Cosine similarity with `other` (their inner product, both being unit vectors), by the
    /// fastest kernel this CPU has.
    pub fn cosine(&self, other: &UnitVector) -> f32 {
        simd::dot(&self.0, &other.0)
    }
}

impl Deref for UnitVector {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        &self.0
    }
}

impl AsRef<[f32]> for UnitVector {
    fn as_ref(&self) -> &[f32] {
        &self.0
    }
}

/// A batch of unit vectors of one dimension, stored row after row.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitVectors {
    data: Vec<f32>,
    dim: usize,
}

impl UnitVectors {
    /// Normalises each row of `flat` (`dim` components each).
    ///
    /// # Errors
    /// [`IndexError::DimensionMismatch`] when `flat` is not whole rows of `dim`;
    /// [`IndexError::InvalidVector`] as [`UnitVector::new`] for any row.
    pub fn new(mut flat: Vec<f32>, dim: usize) -> Result<UnitVectors> {
        if dim == 0 || !flat.len().is_multiple_of(dim) {
            return Err(IndexError::DimensionMismatch {
                expected: dim,
                got: flat.len(),
            });
        }
        for row in flat.chunks_exact_mut(dim) {
            normalize(row)?;
        }
        Ok(UnitVectors { data: flat, dim })
    }

    /// The rows of `vectors`, which must all have dimension `dim`.
    ///
    /// # Errors
    /// [`IndexError::DimensionMismatch`] for a row of another dimension.
    pub fn from_rows<'a>(
        vectors: impl IntoIterator<Item = &'a UnitVector>,
        dim: usize,
    ) -> Result<UnitVectors> {
        let mut data = Vec::new();
        for v in vectors {
            check_dim(dim, v.len())?;
            data.extend_from_slice(v);
        }
        Ok(UnitVectors { data, dim })
    }

    /// One row.
    pub fn one(v: &UnitVector) -> UnitVectors {
        UnitVectors {
            data: v.0.clone(),
            dim: v.len(),
        }
    }

    /// The dimension of every row.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }

    /// True if there is no row.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Every component, row after row.
    pub fn as_flat(&self) -> &[f32] {
        &self.data
    }
}

/// Fails unless `got == expected`.
pub(crate) fn check_dim(expected: usize, got: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(IndexError::DimensionMismatch { expected, got })
    }
}

/// Scales `v` to unit length in place, leaving a vector already within [`UNIT_TOLERANCE`] of
/// it untouched.
fn normalize(v: &mut [f32]) -> Result<()> {
    let invalid = |reason| Err(IndexError::InvalidVector { reason });
    if v.is_empty() {
        return invalid("vector is empty");
    }
    if v.iter().any(|x| !x.is_finite()) {
        return invalid("vector has a NaN or infinite component");
    }
    let norm = simd::dot_scalar(v, v).sqrt();
    if !(norm.is_finite() && norm > 0.0) {
        return invalid("vector has zero length");
    }
    if (norm - 1.0).abs() > UNIT_TOLERANCE {
        let inv = 1.0 / norm;
        v.iter_mut().for_each(|x| *x *= inv);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_and_keeps_unit_vectors_bit_for_bit() {
        let v = UnitVector::new(vec![3.0, 4.0]).unwrap();
        assert_eq!(v.as_slice(), &[0.6, 0.8]);
        let unit = vec![0.6f32, 0.8];
        assert_eq!(UnitVector::new(unit.clone()).unwrap().into_vec(), unit);
        assert!((v.cosine(&v) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn rejects_bad_vectors() {
        for bad in [
            vec![],
            vec![0.0, 0.0],
            vec![f32::NAN, 1.0],
            vec![f32::INFINITY],
        ] {
            assert!(matches!(
                UnitVector::new(bad),
                Err(IndexError::InvalidVector { .. })
            ));
        }
        assert!(matches!(
            UnitVector::with_dim(vec![1.0], 2),
            Err(IndexError::DimensionMismatch { .. })
        ));
    }

    #[test]
    fn batches_are_whole_rows_of_unit_vectors() {
        let b = UnitVectors::new(vec![2.0, 0.0, 0.0, 5.0], 2).unwrap();
        assert_eq!((b.len(), b.dim()), (2, 2));
        assert_eq!(b.as_flat(), &[1.0, 0.0, 0.0, 1.0]);
        assert!(UnitVectors::new(vec![1.0, 2.0, 3.0], 2).is_err());
        assert!(UnitVectors::new(vec![1.0, 0.0, 0.0, 0.0], 2).is_err());
        let rows = [UnitVector::new(vec![1.0, 0.0]).unwrap()];
        assert_eq!(UnitVectors::from_rows(&rows, 2).unwrap().len(), 1);
        assert!(UnitVectors::from_rows(&rows, 3).is_err());
    }
}
