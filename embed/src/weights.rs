//! Memory-mapped safetensors weights.
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
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[path], DType::F32, device) };
    vb.map_err(|e| EmbedError::MalformedFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}
