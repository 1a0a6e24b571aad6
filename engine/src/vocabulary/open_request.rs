//! How a door asks to open a store: the options every door offers, as plain values. The
//! engine's [`crate::options::Options::from_request`] turns them into options, checked once.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// The options of an open, as the C ABI's `options_json`, Python's and Node's keyword
/// arguments give them. Every field is optional; absent ones keep the engine's default. Only
/// a JSON object is one (no field carries `serde(default)`, so a sequence is refused).
#[derive(Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenRequest {
    /// Model directory (default: the default model's cache directory).
    pub model: Option<PathBuf>,
    /// Where the model runs: "cpu" (default), "cuda" or "cuda:N".
    pub device: Option<String>,
    /// The native encoder's matrix products: "f32" or "int8" (faster, vectors slightly
    /// different: a store records which it was written with). Absent: the store's own, f32
    /// for a new store.
    pub precision: Option<String>,
    /// A cross-encoder directory (a one-label BERT sequence classifier such as
    /// ms-marco-MiniLM-L-6-v2: config.json, tokenizer.json, model.safetensors): rerank and
    /// iterative recalls then order their best candidates by it. Default: none (score fusion).
    pub reranker_model: Option<PathBuf>,
    /// "system" (default) or "manual".
    pub clock: Option<String>,
    /// Start of a manual clock, ms since the Unix epoch (default: the epoch itself, so the
    /// first time set can be any later time).
    pub start_ms: Option<i64>,
    /// fsync every write (default true); false groups writes until checkpoint or close.
    pub sync: Option<bool>,
    /// Near-duplicate threshold (cosine); an explicit null turns near-duplicate merging off,
    /// an absent field keeps the default.
    #[serde(default, deserialize_with = "present")]
    pub dedup_threshold: Option<Option<f32>>,
    /// A model-free deterministic embedder of this dimension instead of a model (tests, demos
    /// of the plumbing; it has no notion of meaning).
    pub hashing_embedder: Option<usize>,
    /// The most memories kept; the least important are forgotten beyond it.
    pub capacity: Option<usize>,
    /// The most memories kept per user.
    pub capacity_per_user: Option<usize>,
    /// HNSW search beam for recalls.
    pub recall_ef: Option<usize>,
    /// How the index stores the vectors searches read: "f32" (default), "bf16" or "int8".
    pub index_vectors: Option<String>,
    /// The longest text one memory may hold, in bytes (default 512 KiB).
    pub max_text_bytes: Option<usize>,
    /// Encrypt the store at rest with the key ring in this file (made, with a random 256-bit
    /// key, when the store is created; needed at every open after). Keep it outside the store
    /// directory and back it up: without it the store cannot be read.
    pub key_file: Option<PathBuf>,
    /// The passphrase that unlocks `key_file` (Argon2id), for a ring made with one.
    pub passphrase: Option<String>,
}

/// Distinguishes an explicit `null` (`Some(None)`) from an absent field (`None`).
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<f32>>, D::Error> {
    Option::<f32>::deserialize(d).map(Some)
}

impl std::fmt::Debug for OpenRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Everything but the passphrase, which no log may hold.
        let mut shown = self.clone();
        if shown.passphrase.is_some() {
            shown.passphrase = Some("…".into());
        }
        let json = serde_json::to_string(&shown).map_err(|_| std::fmt::Error)?;
        write!(f, "OpenRequest {json}")
    }
}
