//! Memory-mapped safetensors weights (read into memory under WebAssembly, which maps nothing).
//!
//! One of the crate's three fenced `unsafe` places (with `models/cpu_bert/matmul.rs` and
//! `models/cpu_bert/simd.rs`): candle's `VarBuilder::from_mmaped_safetensors` maps the file,
//! and a mapping is only sound while nobody modifies the file. Model files are read-only inputs
//! that memloop never writes; replacing a model while a process uses it must be done by writing
//! a new directory (as `scripts/fetch-model.sh` does), never by editing files in place.
#![allow(unsafe_code)]

use std::path::Path;

use candle_core::{DType, Device};
use candle_nn::VarBuilder;

use crate::error::{EmbedError, Result};

/// Maps `path` and returns a builder over its tensors.
pub(crate) fn load(path: &Path, device: &Device) -> Result<VarBuilder<'static>> {
    if let Err(e) = std::fs::metadata(path) {
        return Err(EmbedError::MissingFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        });
    }
    // SAFETY: the weights file is never modified by memloop, and the module docs state the
    // contract for everyone else: model directories are replaced, not edited in place.
    #[cfg(not(target_family = "wasm"))]
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[path], DType::F32, device) };
    // WebAssembly maps nothing: the file is read into memory.
    #[cfg(target_family = "wasm")]
    let vb = std::fs::read(path)
        .map_err(candle_core::Error::wrap)
        .and_then(|bytes| VarBuilder::from_buffered_safetensors(bytes, DType::F32, device));
    vb.map_err(|e| EmbedError::MalformedFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// A weights file's bytes: mapped.
#[cfg(not(target_family = "wasm"))]
pub(crate) type Map = memmap2::Mmap;

/// Maps `file`.
#[cfg(not(target_family = "wasm"))]
fn map_file(file: &std::fs::File) -> std::io::Result<Map> {
    // SAFETY: as for `load`: the weights file is never modified by memloop, and model
    // directories are replaced, not edited in place (module docs).
    unsafe { memmap2::Mmap::map(file) }
}

/// A weights file's bytes, read into memory (WebAssembly maps nothing), 4-byte aligned so f32
/// tensors are used in place as from a mapping.
#[cfg(target_family = "wasm")]
pub(crate) struct Map {
    words: Vec<u32>,
    len: usize,
}

#[cfg(target_family = "wasm")]
impl std::ops::Deref for Map {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len]
    }
}

/// Reads `file` whole.
#[cfg(target_family = "wasm")]
fn map_file(file: &std::fs::File) -> std::io::Result<Map> {
    use std::io::Read;
    let len = usize::try_from(file.metadata()?.len())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
    let mut words = vec![0u32; len.div_ceil(4)];
    let mut file = file;
    file.read_exact(&mut bytemuck::cast_slice_mut(&mut words)[..len])?;
    Ok(Map { words, len })
}

/// A safetensors file mapped and read directly, for the native CPU encoder: no tensor is made,
/// each weight is read once from the mapping — and an f32 tensor whose data is 4-byte aligned
/// in the file (every one in files written by `safetensors` ≥ 0.3, whose header is padded to
/// 8 bytes) can be used in place ([`MappedTensors::floats`]), so the 47 MB word-embedding
/// table of MiniLM is never copied.
pub(crate) struct MappedTensors {
    path: std::path::PathBuf,
    map: std::sync::Arc<Map>,
    data_start: usize,
    metadata: safetensors::tensor::Metadata,
}

/// A tensor's values: in the mapping, or copied (converted from f16 / bf16, or unaligned).
#[derive(Clone)]
pub(crate) enum Floats {
    /// `len` f32 values at byte `start` of the mapping (4-byte aligned, checked when made).
    Mapped {
        map: std::sync::Arc<Map>,
        start: usize,
        len: usize,
    },
    /// Values read out of the file.
    Owned(Vec<f32>),
}

impl std::fmt::Debug for Floats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Floats::Mapped { len, .. } => write!(f, "Floats::Mapped({len})"),
            Floats::Owned(v) => write!(f, "Floats::Owned({})", v.len()),
        }
    }
}

impl std::ops::Deref for Floats {
    type Target = [f32];

    fn deref(&self) -> &[f32] {
        match self {
            // Bounds and alignment were checked when the value was made; a failure here
            // (impossible) yields an empty slice, never a panic.
            Floats::Mapped { map, start, len } => map
                .get(*start..start + 4 * len)
                .and_then(|b| bytemuck::try_cast_slice(b).ok())
                .unwrap_or(&[]),
            Floats::Owned(v) => v,
        }
    }
}

/// What a matrix stored in 8-bit integers is named with beside its name: its rows' scales
/// (`<name>_scale`, F32, one per row).
pub(crate) const SCALE_SUFFIX: &str = "_scale";

/// A matrix stored in 8-bit integers, one scale per row ([`MappedTensors::int8_rows`]): the
/// integers in the mapping, the scales read out (checked finite and positive).
#[derive(Clone)]
pub(crate) struct Int8Rows {
    map: std::sync::Arc<Map>,
    /// Where the integers start in the mapping (rows × cols bytes, checked when made).
    start: usize,
    cols: usize,
    scale: Vec<f32>,
}

impl std::fmt::Debug for Int8Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Int8Rows({} × {})", self.scale.len(), self.cols)
    }
}

impl Int8Rows {
    /// Every row's integers, row after row.
    pub(crate) fn values(&self) -> &[i8] {
        // Bounds were checked when the value was made; a failure here (impossible) yields an
        // empty slice, never a panic.
        self.map
            .get(self.start..self.start + self.scale.len() * self.cols)
            .map(bytemuck::cast_slice)
            .unwrap_or(&[])
    }

    /// Row `r`'s integers (empty past the last row).
    pub(crate) fn row(&self, r: usize) -> &[i8] {
        self.values()
            .get(r * self.cols..(r + 1) * self.cols)
            .unwrap_or(&[])
    }

    /// Every row's scale.
    pub(crate) fn scales(&self) -> &[f32] {
        &self.scale
    }

    /// The matrix in f32: `q · scale` row by row.
    pub(crate) fn to_f32(&self) -> Vec<f32> {
        let mut out = Vec::with_capacity(self.scale.len() * self.cols);
        for (r, &s) in self.scale.iter().enumerate() {
            out.extend(self.row(r).iter().map(|&q| f32::from(q) * s));
        }
        out
    }
}

/// A matrix stored in 16-bit floats, read row by row from the mapping
/// ([`MappedTensors::f16_rows`]): a table looked up a row at a time (the word embeddings of an
/// int8 model file) stays at 2 bytes a value in memory.
#[derive(Clone)]
pub(crate) struct F16Rows {
    map: std::sync::Arc<Map>,
    /// Where the values start in the mapping (rows × cols × 2 bytes, checked when made).
    start: usize,
    rows: usize,
    cols: usize,
}

impl std::fmt::Debug for F16Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "F16Rows({} × {})", self.rows, self.cols)
    }
}

impl F16Rows {
    /// Row `r`'s values in f32, one by one (none past the last row).
    pub(crate) fn row(&self, r: usize) -> impl Iterator<Item = f32> + '_ {
        let at = self.start + r * self.cols * 2;
        let bytes = if r < self.rows {
            self.map.get(at..at + self.cols * 2).unwrap_or(&[])
        } else {
            &[]
        };
        bytes
            .chunks_exact(2)
            .map(|b| half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f32())
    }
}

/// One row in symmetric 8-bit integers: `out[i] = round(row[i] / scale)` with
/// `scale = max |row| / 127` (1 for a row of zeros or one that is not finite), returned. The one
/// quantization of weights: the int8 encoder's dense layers at load and the int8 model files
/// (`quantize.rs`) both take it, so a layer read from such a file holds exactly the integers
/// the encoder would have made from the f32 weights.
pub(crate) fn quantize_row(row: &[f32], out: &mut [i8]) -> f32 {
    let max = row.iter().fold(0f32, |m, v| m.max(v.abs()));
    let scale = if max > 0.0 && max.is_finite() {
        max / 127.0
    } else {
        1.0
    };
    for (q, &w) in out.iter_mut().zip(row) {
        *q = (w / scale).round().clamp(-127.0, 127.0) as i8;
    }
    scale
}

impl MappedTensors {
    /// Maps `path` and reads its header (checked: every tensor lies inside the file).
    pub(crate) fn open(path: &Path) -> Result<Self> {
        let bad = |reason: String| EmbedError::MalformedFile {
            path: path.to_path_buf(),
            reason,
        };
        let file = std::fs::File::open(path).map_err(|e| EmbedError::MissingFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let map = map_file(&file).map_err(|e| bad(e.to_string()))?;
        let (header, metadata) =
            safetensors::SafeTensors::read_metadata(&map).map_err(|e| bad(e.to_string()))?;
        Ok(MappedTensors {
            path: path.to_path_buf(),
            map: std::sync::Arc::new(map),
            data_start: 8 + header,
            metadata,
        })
    }

    /// Every tensor's name, type and shape, in the order of their bytes in the file.
    pub(crate) fn infos(&self) -> Vec<(String, safetensors::Dtype, Vec<usize>)> {
        self.metadata
            .offset_keys()
            .into_iter()
            .filter_map(|name| {
                let info = self.metadata.info(&name)?;
                Some((name, info.dtype, info.shape.clone()))
            })
            .collect()
    }

    /// Tensor `name`'s bytes as the file holds them (checked to lie inside the file).
    pub(crate) fn raw(&self, name: &str) -> std::result::Result<&[u8], String> {
        let info = self
            .metadata
            .info(name)
            .ok_or_else(|| format!("{}: no tensor {name}", self.path.display()))?;
        let (from, to) = info.data_offsets;
        self.map
            .get(self.data_start + from..self.data_start + to)
            .ok_or_else(|| format!("{name}: data outside the file"))
    }

    /// The file's own metadata (safetensors' `__metadata__`; empty when it has none).
    pub(crate) fn file_metadata(&self) -> std::collections::HashMap<String, String> {
        self.metadata.metadata().clone().unwrap_or_default()
    }

    /// True if the file holds a tensor of this name.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.metadata.info(name).is_some()
    }

    /// The bytes of tensor `name`, checked to be `shape` and to hold `width` bytes a value,
    /// with where they start in the mapping.
    fn bytes(
        &self,
        name: &str,
        shape: &[usize],
        width: impl Fn(safetensors::Dtype) -> Option<usize>,
        expected: &str,
    ) -> std::result::Result<(&[u8], usize, safetensors::Dtype), String> {
        let info = self
            .metadata
            .info(name)
            .ok_or_else(|| format!("{}: no tensor {name}", self.path.display()))?;
        if info.shape != shape {
            return Err(format!(
                "{name}: shape {:?}, expected {shape:?}",
                info.shape
            ));
        }
        let bytes = self.raw(name)?;
        let start = self.data_start + info.data_offsets.0;
        let len: usize = shape.iter().product();
        let width = width(info.dtype)
            .ok_or_else(|| format!("{name}: dtype {:?}, expected {expected}", info.dtype))?;
        if bytes.len() != len * width {
            return Err(format!("{name}: {} bytes for {len} values", bytes.len()));
        }
        Ok((bytes, start, info.dtype))
    }

    /// Whether tensor `name` is stored in 8-bit integers (with its rows' scales beside it,
    /// [`MappedTensors::int8_rows`]).
    pub(crate) fn is_int8(&self, name: &str) -> bool {
        self.metadata
            .info(name)
            .is_some_and(|i| i.dtype == safetensors::Dtype::I8)
    }

    /// The 8-bit integers of the `rows × cols` tensor `name` and its rows' scales (the F32
    /// tensor `name` + [`SCALE_SUFFIX`], each scale finite and positive): row `r`'s values are
    /// `q · scale[r]`. The integers stay in the mapping.
    pub(crate) fn int8_rows(
        &self,
        name: &str,
        rows: usize,
        cols: usize,
    ) -> std::result::Result<Int8Rows, String> {
        let i8_only = |d| (d == safetensors::Dtype::I8).then_some(1);
        let (_, start, _) = self.bytes(name, &[rows, cols], i8_only, "I8")?;
        let scale_name = format!("{name}{SCALE_SUFFIX}");
        let (scale_bytes, _, _) = self.bytes(
            &scale_name,
            &[rows],
            |d| (d == safetensors::Dtype::F32).then_some(4),
            "F32",
        )?;
        let scale: Vec<f32> = scale_bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if let Some(r) = scale.iter().position(|s| !(s.is_finite() && *s > 0.0)) {
            return Err(format!(
                "{scale_name}: row {r}'s scale is {}, not a positive finite number",
                scale[r]
            ));
        }
        Ok(Int8Rows {
            map: self.map.clone(),
            start,
            cols,
            scale,
        })
    }

    /// The `rows × cols` tensor `name` where the file holds it in 16-bit floats (`None` for
    /// another type), read from the mapping a row at a time.
    pub(crate) fn f16_rows(
        &self,
        name: &str,
        rows: usize,
        cols: usize,
    ) -> std::result::Result<Option<F16Rows>, String> {
        let f16 = safetensors::Dtype::F16;
        if self.metadata.info(name).is_none_or(|i| i.dtype != f16) {
            return Ok(None);
        }
        let (_, start, _) = self.bytes(name, &[rows, cols], |d| (d == f16).then_some(2), "F16")?;
        Ok(Some(F16Rows {
            map: self.map.clone(),
            start,
            rows,
            cols,
        }))
    }

    /// The values of tensor `name` of `shape`, as f32 (f16 and bf16 converted, 8-bit integers
    /// multiplied by their rows' scales).
    pub(crate) fn floats(
        &self,
        name: &str,
        shape: &[usize],
    ) -> std::result::Result<Floats, String> {
        if self.is_int8(name) {
            let [rows, cols] = shape else {
                return Err(format!(
                    "{name}: 8-bit integers are stored for matrices only"
                ));
            };
            return Ok(Floats::Owned(self.int8_rows(name, *rows, *cols)?.to_f32()));
        }
        let width = |d| match d {
            safetensors::Dtype::F32 => Some(4),
            safetensors::Dtype::F16 | safetensors::Dtype::BF16 => Some(2),
            _ => None,
        };
        let (bytes, start, dtype) = self.bytes(name, shape, width, "F32, F16, BF16 or I8")?;
        let len: usize = shape.iter().product();
        let halves = || {
            bytes
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
        };
        Ok(match dtype {
            safetensors::Dtype::F32 if bytemuck::try_cast_slice::<u8, f32>(bytes).is_ok() => {
                Floats::Mapped {
                    map: self.map.clone(),
                    start,
                    len,
                }
            }
            safetensors::Dtype::F32 => Floats::Owned(
                bytes
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
            ),
            safetensors::Dtype::F16 => {
                Floats::Owned(halves().map(|h| half::f16::from_bits(h).to_f32()).collect())
            }
            _ => Floats::Owned(
                halves()
                    .map(|h| half::bf16::from_bits(h).to_f32())
                    .collect(),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use safetensors::tensor::TensorView;
    use safetensors::Dtype;

    #[test]
    fn mapped_tensors_read_f32_in_place_and_convert_halves() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.safetensors");
        let values = [1.5f32, -2.0, 0.25, 3.0];
        let f32_bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let f16_bytes: Vec<u8> = values
            .iter()
            .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
            .collect();
        let bf16_bytes: Vec<u8> = values
            .iter()
            .flat_map(|v| half::bf16::from_f32(*v).to_bits().to_le_bytes())
            .collect();
        let tensors = [
            (
                "a",
                TensorView::new(Dtype::F32, vec![2, 2], &f32_bytes).unwrap(),
            ),
            (
                "b",
                TensorView::new(Dtype::F16, vec![4], &f16_bytes).unwrap(),
            ),
            (
                "c",
                TensorView::new(Dtype::BF16, vec![4], &bf16_bytes).unwrap(),
            ),
            (
                "d",
                TensorView::new(Dtype::I64, vec![1], &[0u8; 8]).unwrap(),
            ),
        ];
        safetensors::serialize_to_file(tensors, None, &path).unwrap();
        let t = MappedTensors::open(&path).unwrap();
        assert!(t.contains("a") && !t.contains("z"));
        let a = t.floats("a", &[2, 2]).unwrap();
        assert!(matches!(a, Floats::Mapped { .. }), "{a:?}");
        assert_eq!(&a[..], &values);
        assert_eq!(&t.floats("b", &[4]).unwrap()[..], &values);
        assert_eq!(&t.floats("c", &[4]).unwrap()[..], &values);
        assert!(t.floats("a", &[4]).unwrap_err().contains("shape"));
        assert!(t.floats("d", &[1]).unwrap_err().contains("dtype"));
        assert!(t.floats("z", &[1]).unwrap_err().contains("no tensor"));
        assert!(!t.is_int8("a"));
        // A truncated file is refused when mapped, before any tensor is read (written once the
        // first mapping is gone: Windows refuses to cut a mapped file).
        drop((a, t));
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(matches!(
            MappedTensors::open(&path),
            Err(EmbedError::MalformedFile { .. })
        ));
    }

    /// A matrix in 8-bit integers is read with its rows' scales (as integers and multiplied
    /// out), and refused without them or with a scale that is not a positive finite number; a
    /// matrix in 16-bit floats is read a row at a time.
    #[test]
    fn int8_and_f16_matrices_are_read_as_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.safetensors");
        let rows = [[0.5f32, -1.0, 0.25], [3.0, 0.0, -0.75]];
        let mut q = [0i8; 6];
        let scales: Vec<f32> = rows
            .iter()
            .zip(q.chunks_exact_mut(3))
            .map(|(r, q)| quantize_row(r, q))
            .collect();
        assert_eq!(q, [64, -127, 32, 127, 0, -32]);
        let q_bytes: Vec<u8> = bytemuck::cast_slice(&q).to_vec();
        let le = |v: &[f32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        let (good, zero, nan) = (le(&scales), le(&[scales[0], 0.0]), le(&[f32::NAN, 1.0]));
        let view = |d, shape: Vec<usize>, b| TensorView::new(d, shape, b).unwrap();
        let halves: Vec<u8> = rows
            .iter()
            .flatten()
            .flat_map(|v| half::f16::from_f32(*v).to_bits().to_le_bytes())
            .collect();
        let tensors = [
            ("m", view(Dtype::I8, vec![2, 3], &q_bytes)),
            ("m_scale", view(Dtype::F32, vec![2], &good)),
            ("z", view(Dtype::I8, vec![2, 3], &q_bytes)),
            ("z_scale", view(Dtype::F32, vec![2], &zero)),
            ("n", view(Dtype::I8, vec![2, 3], &q_bytes)),
            ("n_scale", view(Dtype::F32, vec![2], &nan)),
            ("alone", view(Dtype::I8, vec![2, 3], &q_bytes)),
            ("v", view(Dtype::I8, vec![6], &q_bytes)),
            ("h", view(Dtype::F16, vec![2, 3], &halves)),
        ];
        safetensors::serialize_to_file(tensors, None, &path).unwrap();
        let t = MappedTensors::open(&path).unwrap();
        assert!(t.is_int8("m") && !t.is_int8("m_scale"));
        let m = t.int8_rows("m", 2, 3).unwrap();
        assert_eq!(m.values(), &q);
        assert_eq!(m.row(1), &q[3..]);
        assert!(m.row(2).is_empty());
        assert_eq!(m.scales(), &scales[..]);
        let back = t.floats("m", &[2, 3]).unwrap();
        for (got, want) in back.iter().zip(rows.iter().flatten()) {
            assert!((got - want).abs() <= 0.5 * 3.0 / 127.0, "{got} vs {want}");
        }
        assert!(t.int8_rows("m", 3, 2).unwrap_err().contains("shape"));
        assert!(t
            .int8_rows("z", 2, 3)
            .unwrap_err()
            .contains("row 1's scale is 0"));
        assert!(t
            .int8_rows("n", 2, 3)
            .unwrap_err()
            .contains("row 0's scale is NaN"));
        assert!(t
            .int8_rows("alone", 2, 3)
            .unwrap_err()
            .contains("no tensor alone_scale"));
        assert!(t.floats("v", &[6]).unwrap_err().contains("matrices only"));
        // A 16-bit table is read a row at a time; another type is not one.
        let h = t.f16_rows("h", 2, 3).unwrap().unwrap();
        assert_eq!(h.row(1).collect::<Vec<_>>(), rows[1]);
        assert_eq!(h.row(2).count(), 0);
        assert!(t.f16_rows("m", 2, 3).unwrap().is_none());
        assert!(t.f16_rows("h", 3, 2).unwrap_err().contains("shape"));
    }
}
