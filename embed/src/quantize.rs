//! Int8 model folders: a copy of a model whose `model.safetensors` holds its dense layers in
//! 8-bit integers and its word-embedding table in 16-bit floats, 39% of the f32 file
//! (all-MiniLM-L6-v2: 35 MB instead of 91 MB), for where the download is the cost (the
//! browser).
//!
//! Every dense layer's weight is stored per output channel in symmetric 8-bit integers
//! ([`crate::weights::quantize_row`]: the quantization the int8 encoder makes of the dense
//! layers at load) as an `I8` tensor under its own name, with its rows' scales beside it as an
//! `F32` tensor `<name>_scale`. The word-embedding table is stored as `F16`: in 8-bit integers
//! (a scale per word, or per 16 to 384 values) it took the golden texts' mean cosine to
//! sentence-transformers at int8 from 0.99516 to 0.9949-0.9951, under the 0.995 the int8
//! encoder promises. Everything else (biases, layer norms, the position and token-type tables)
//! is copied as it is. So:
//! - at int8 precision, the dense layers read from such a file are exactly the ones the encoder
//!   makes of the f32 file; only the word table's rounding to 16 bits differs;
//! - at f32 precision the file is multiplied out at load: it runs, at int8's fidelity;
//! - it is a model of its own: its weights' sha256, so its fingerprint, differs from the f32
//!   file's, and a store made with one refuses the other (`model_mismatch`).
//!
//! Only memloop's native encoder reads the 8-bit integers (BERT-family models on the CPU, the
//! browser's encoder among them): the folder is refused for other architectures when it is
//! made.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use safetensors::tensor::TensorView;
use safetensors::Dtype;

use crate::config::ModelConfig;
use crate::error::{EmbedError, Result};
use crate::fetch::Scratch;
use crate::weights::{quantize_row, MappedTensors, SCALE_SUFFIX};

/// What [`quantize_model`] made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantizedModel {
    /// The new model folder.
    pub dir: PathBuf,
    /// Matrices stored in 8-bit integers.
    pub matrices: usize,
    /// Matrices stored in 16-bit floats.
    pub halves: usize,
    /// Tensors copied as they were.
    pub copied: usize,
    /// Bytes of the source's `model.safetensors`.
    pub bytes_before: u64,
    /// Bytes of the new `model.safetensors`.
    pub bytes_after: u64,
}

/// The metadata key an int8 model file carries (with how it was made as its value).
pub const QUANTIZED_KEY: &str = "memloop.quantized";

/// How an int8 model file stores a tensor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stored {
    /// 8-bit integers, one scale per row: every dense layer's weight.
    Int8,
    /// 16-bit floats: the word-embedding table (module docs).
    F16,
    /// As the source holds it: vectors, the position and token-type tables (added whole to
    /// every token, and small), anything not in floats.
    AsIs,
}

/// How the tensor `name` of `shape` is stored.
fn stored(name: &str, shape: &[usize], dtype: Dtype) -> Stored {
    let matrix = shape.len() == 2 && matches!(dtype, Dtype::F32 | Dtype::F16 | Dtype::BF16);
    if !matrix || name.contains("position_embeddings") || name.contains("token_type_embeddings") {
        Stored::AsIs
    } else if name.contains("word_embeddings") {
        Stored::F16
    } else {
        Stored::Int8
    }
}

/// Writes an int8 copy of the model folder `from` to `to`, which must not exist: its
/// `model.safetensors` in 8-bit integers (module docs), and its other `.json` and `.txt` files
/// (configuration, tokenizer) copied. The folder is written beside `to` under another name
/// and renamed into place when complete, so `to` is either absent or whole.
///
/// # Errors
/// [`EmbedError::InvalidOption`] (`to`) if `to` exists or `from` is already an int8 model;
/// [`EmbedError::UnsupportedArchitecture`] for a model the native encoder does not run;
/// [`EmbedError::MissingFile`] / [`EmbedError::MalformedFile`] for `from`'s files;
/// [`EmbedError::Write`] if the new folder cannot be written.
pub fn quantize_model(from: &Path, to: &Path) -> Result<QuantizedModel> {
    if to.exists() {
        return Err(EmbedError::InvalidOption {
            name: "to",
            reason: format!(
                "{} exists: an int8 model is written to a new folder",
                to.display()
            ),
        });
    }
    let config_path = from.join("config.json");
    match ModelConfig::read(&config_path)? {
        ModelConfig::Bert(c) if crate::models::native_supports(&c) => {}
        ModelConfig::Bert(_) => {
            return Err(EmbedError::UnsupportedArchitecture {
                path: config_path,
                found: "bert with relative positions or heads not a multiple of 8 wide".into(),
            })
        }
        ModelConfig::NomicBert(_) => {
            return Err(EmbedError::UnsupportedArchitecture {
                path: config_path,
                found: "nomic_bert (an int8 model runs on memloop's BERT encoder only)".into(),
            })
        }
    }
    let weights = from.join("model.safetensors");
    let tensors = MappedTensors::open(&weights)?;
    if tensors.file_metadata().contains_key(QUANTIZED_KEY) {
        return Err(EmbedError::InvalidOption {
            name: "to",
            reason: format!("{} is already an int8 model", from.display()),
        });
    }
    let malformed = |reason: String| EmbedError::MalformedFile {
        path: weights.clone(),
        reason,
    };
    // The new tensors' bytes, then views of them (a view borrows its bytes).
    let mut owned: Vec<(String, Dtype, Vec<usize>, Vec<u8>)> = Vec::new();
    let (mut matrices, mut halves, mut copied) = (0, 0, 0);
    for (name, dtype, shape) in tensors.infos() {
        let how = stored(&name, &shape, dtype);
        if how == Stored::F16 {
            let values = tensors.floats(&name, &shape).map_err(malformed)?;
            let bytes = values
                .iter()
                .flat_map(|v| half::f16::from_f32(*v).to_le_bytes())
                .collect();
            owned.push((name, Dtype::F16, shape, bytes));
            halves += 1;
        } else if how == Stored::Int8 {
            if tensors.contains(&format!("{name}{SCALE_SUFFIX}")) {
                return Err(malformed(format!(
                    "{name}{SCALE_SUFFIX}: the name its int8 scales would take is taken"
                )));
            }
            let (rows, cols) = (shape[0], shape[1]);
            let values = tensors.floats(&name, &shape).map_err(malformed)?;
            let mut q = vec![0i8; rows * cols];
            let scales: Vec<f32> = values
                .chunks_exact(cols.max(1))
                .zip(q.chunks_exact_mut(cols.max(1)))
                .map(|(row, q)| quantize_row(row, q))
                .collect();
            owned.push((
                format!("{name}{SCALE_SUFFIX}"),
                Dtype::F32,
                vec![rows],
                scales.iter().flat_map(|s| s.to_le_bytes()).collect(),
            ));
            owned.push((name, Dtype::I8, shape, bytemuck::cast_slice(&q).to_vec()));
            matrices += 1;
        } else {
            let bytes = tensors.raw(&name).map_err(malformed)?.to_vec();
            owned.push((name, dtype, shape, bytes));
            copied += 1;
        }
    }
    let views = owned
        .iter()
        .map(|(name, dtype, shape, bytes)| {
            TensorView::new(*dtype, shape.clone(), bytes)
                .map(|v| (name.clone(), v))
                .map_err(|e| malformed(format!("{name}: {e}")))
        })
        .collect::<Result<Vec<_>>>()?;
    let mut metadata: HashMap<String, String> = tensors.file_metadata().clone();
    metadata.insert(
        QUANTIZED_KEY.into(),
        format!(
            "dense layers in int8: symmetric, one scale per row (<name>{SCALE_SUFFIX}); \
             the word-embedding table in f16"
        ),
    );

    let write = |path: &Path, e: &dyn std::fmt::Display| EmbedError::Write {
        path: path.to_path_buf(),
        reason: e.to_string(),
    };
    // Written beside `to` and moved into place whole (removed if anything fails).
    let scratch = Scratch::named(to, "int8").map_err(|e| write(to, &e))?;
    let out = scratch.path().join("model.safetensors");
    safetensors::serialize_to_file(views, Some(metadata), &out).map_err(|e| write(&out, &e))?;
    for entry in std::fs::read_dir(from).map_err(|e| EmbedError::MissingFile {
        path: from.to_path_buf(),
        reason: e.to_string(),
    })? {
        let entry = entry.map_err(|e| write(from, &e))?;
        let name = entry.file_name();
        let keep = Path::new(&name)
            .extension()
            .is_some_and(|x| x == "json" || x == "txt");
        if keep && entry.file_type().is_ok_and(|t| t.is_file()) {
            let dst = scratch.path().join(&name);
            std::fs::copy(entry.path(), &dst).map_err(|e| write(&dst, &e))?;
        }
    }
    let bytes_after = std::fs::metadata(&out).map_err(|e| write(&out, &e))?.len();
    let bytes_before = std::fs::metadata(&weights).map_or(0, |m| m.len());
    std::fs::rename(scratch.path(), to).map_err(|e| write(to, &e))?;
    Ok(QuantizedModel {
        dir: to.to_path_buf(),
        matrices,
        halves,
        copied,
        bytes_before,
        bytes_after,
    })
}
