//! The embedder's error type.
//!
//! - **model errors** (`MissingFile`, `MissingCrossEncoderFile`, `MalformedFile`,
//!   `UnsupportedArchitecture`, `WeightsMismatch`): the model directory cannot be used; each names the file.
//! - **caller errors** (`InvalidOption`): a request or option out of range.
//! - **inference errors** (`Inference`): candle or the tokenizer failed on valid input; report it.
//! - **fetch errors** (`Fetch`): downloading or checking the default model failed.

use std::path::PathBuf;

/// Everything that can go wrong in `memloop-embed`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmbedError {
    /// A file the model directory must contain is absent or unreadable.
    #[error("{path}: missing or unreadable model file ({reason}); fetch the model with `memloop model fetch` (or scripts/fetch-model.sh) or point at a directory with config.json, tokenizer.json and model.safetensors")]
    MissingFile {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// A file a cross-encoder's directory must contain is absent or unreadable. memloop
    /// ships no cross-encoder: the directory is the caller's own.
    #[error("{path}: missing or unreadable cross-encoder file ({reason}); a reranker model is a directory you supply: a BERT sequence classifier with one label (such as ms-marco-MiniLM-L-6-v2) with config.json, tokenizer.json and model.safetensors")]
    MissingCrossEncoderFile {
        /// The file.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// A model file exists but cannot be parsed.
    #[error("{path}: malformed: {reason}")]
    MalformedFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// config.json names an architecture this build cannot run.
    #[error("{path}: model_type {found:?} is not supported (supported: \"bert\", \"nomic_bert\")")]
    UnsupportedArchitecture {
        /// The config file.
        path: PathBuf,
        /// The `model_type` found.
        found: String,
    },
    /// The weights do not fit the config (missing tensor, wrong shape).
    #[error("{path}: weights do not match config.json: {reason}")]
    WeightsMismatch {
        /// The weights file.
        path: PathBuf,
        /// candle's description.
        reason: String,
    },
    /// An option or request is out of range.
    #[error("invalid option `{name}`: {reason}")]
    InvalidOption {
        /// The option.
        name: &'static str,
        /// The allowed range.
        reason: String,
    },
    /// The model failed on valid input.
    #[error("inference failed: {0}")]
    Inference(String),
    /// A file could not be written (an int8 model's folder, [`crate::quantize_model`]).
    #[error("{path}: cannot write: {reason}")]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's reason.
        reason: String,
    },
    /// Fetching the default model failed (the download, its checksum, or unpacking it).
    #[error("fetching the model failed: {0}")]
    Fetch(String),
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> Self {
        EmbedError::Inference(e.to_string())
    }
}

/// Result alias for this crate.
pub type Result<T, E = EmbedError> = std::result::Result<T, E>;
