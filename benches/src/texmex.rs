//! The texmex vector formats: `.fvecs` (per vector: i32 dimension, then f32 components) and
//! `.ivecs` (the same with i32 components), little-endian.

use std::io::{BufWriter, Read, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};

/// Vectors read from a file: `n` rows of `dim` values, row-major.
#[derive(Debug, Clone)]
pub struct Matrix<T> {
    /// Row length.
    pub dim: usize,
    /// Row-major values.
    pub data: Vec<T>,
}

impl<T> Matrix<T> {
    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.data.len().checked_div(self.dim).unwrap_or(0)
    }
    /// Row `i`.
    pub fn row(&self, i: usize) -> &[T] {
        &self.data[i * self.dim..(i + 1) * self.dim]
    }
}

fn read_vecs<T>(
    path: &Path,
    limit: Option<usize>,
    conv: impl Fn([u8; 4]) -> T,
) -> Result<Matrix<T>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .with_context(|| format!("open {}", path.display()))?
        .read_to_end(&mut bytes)
        .with_context(|| format!("read {}", path.display()))?;
    let mut data = Vec::new();
    let mut dim = 0usize;
    let mut pos = 0usize;
    let mut rows = 0usize;
    while pos < bytes.len() && limit.is_none_or(|l| rows < l) {
        let Some(head) = bytes.get(pos..pos + 4) else {
            bail!("{}: truncated row header", path.display())
        };
        let d = i32::from_le_bytes(head.try_into()?);
        if d <= 0 || (dim != 0 && d as usize != dim) {
            bail!(
                "{}: row {rows} has dimension {d}, expected {dim}",
                path.display()
            );
        }
        dim = d as usize;
        let body = bytes
            .get(pos + 4..pos + 4 + 4 * dim)
            .with_context(|| format!("{}: truncated row {rows}", path.display()))?;
        data.extend(body.chunks_exact(4).map(|c| conv([c[0], c[1], c[2], c[3]])));
        pos += 4 + 4 * dim;
        rows += 1;
    }
    Ok(Matrix { dim, data })
}

/// Reads up to `limit` rows of an `.fvecs` file.
///
/// # Errors
/// I/O errors and malformed files.
pub fn read_fvecs(path: &Path, limit: Option<usize>) -> Result<Matrix<f32>> {
    read_vecs(path, limit, f32::from_le_bytes)
}

/// Reads up to `limit` rows of an `.ivecs` file.
///
/// # Errors
/// I/O errors and malformed files.
pub fn read_ivecs(path: &Path, limit: Option<usize>) -> Result<Matrix<i32>> {
    read_vecs(path, limit, i32::from_le_bytes)
}

fn write_vecs<T: Copy>(
    path: &Path,
    dim: usize,
    data: &[T],
    bytes: impl Fn(T) -> [u8; 4],
) -> Result<()> {
    let mut w = BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("create {}", path.display()))?,
    );
    for row in data.chunks(dim) {
        w.write_all(&(dim as i32).to_le_bytes())?;
        for &x in row {
            w.write_all(&bytes(x))?;
        }
    }
    w.flush()?;
    Ok(())
}

/// Writes an `.fvecs` file.
///
/// # Errors
/// I/O errors.
pub fn write_fvecs(path: &Path, dim: usize, data: &[f32]) -> Result<()> {
    write_vecs(path, dim, data, f32::to_le_bytes)
}

/// Writes an `.ivecs` file.
///
/// # Errors
/// I/O errors.
pub fn write_ivecs(path: &Path, dim: usize, data: &[i32]) -> Result<()> {
    write_vecs(path, dim, data, i32::to_le_bytes)
}
