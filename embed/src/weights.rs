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

    /// True if the file holds a tensor of this name.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.metadata.info(name).is_some()
    }

    /// The values of tensor `name` of `shape`, as f32 (f16 and bf16 converted).
    pub(crate) fn floats(
        &self,
        name: &str,
        shape: &[usize],
    ) -> std::result::Result<Floats, String> {
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
        let (from, to) = info.data_offsets;
        let bytes = self
            .map
            .get(self.data_start + from..self.data_start + to)
            .ok_or_else(|| format!("{name}: data outside the file"))?;
        let len: usize = shape.iter().product();
        let width = match info.dtype {
            safetensors::Dtype::F32 => 4,
            safetensors::Dtype::F16 | safetensors::Dtype::BF16 => 2,
            other => {
                return Err(format!(
                    "{name}: dtype {other:?}, expected F32, F16 or BF16"
                ))
            }
        };
        if bytes.len() != len * width {
            return Err(format!("{name}: {} bytes for {len} values", bytes.len()));
        }
        let halves = || {
            bytes
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
        };
        Ok(match info.dtype {
            safetensors::Dtype::F32 if bytemuck::try_cast_slice::<u8, f32>(bytes).is_ok() => {
                Floats::Mapped {
                    map: self.map.clone(),
                    start: self.data_start + from,
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
}
