//! What the engine needs from an embedder, the default model, and a deterministic test embedder.

use std::path::Path;

use memloop_embed::{
    DeviceChoice, DocumentPooling, DocumentVectors, Embedder, EmbedderOptions, Precision,
};

use crate::error::{Error, Result};

/// A text embedder the engine can use: unit vectors of a fixed dimension, and a fingerprint
/// naming the embedding space (stores refuse vectors from another space).
pub trait TextEmbedder: Send + Sync {
    /// Names the embedding space: model, weights hash, dimension.
    fn fingerprint(&self) -> String;
    /// Output dimension.
    fn dim(&self) -> usize;
    /// Embeds texts to be stored.
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>>;
    /// Embeds texts to be stored, each with its sentences' own vectors where the embedder
    /// pools a text from its sentences (the store keeps them, and recall scores a memory by
    /// its best sentence). The default gives [`TextEmbedder::embed_documents`]'s vectors and
    /// no sentences.
    fn embed_documents_with_sentences(&self, texts: &[&str]) -> Result<Vec<DocumentVectors>> {
        Ok(self
            .embed_documents(texts)?
            .into_iter()
            .map(|pooled| DocumentVectors {
                pooled,
                sentences: Vec::new(),
            })
            .collect())
    }
    /// Embeds a query.
    fn embed_query(&self, text: &str) -> Result<Vec<f32>>;
    /// Exact number of tokens in `text` (for context budgets).
    fn count_tokens(&self, text: &str) -> usize;
}

impl TextEmbedder for Embedder {
    fn fingerprint(&self) -> String {
        // Loading succeeded, so the weights file exists; hashing it can still fail on I/O, in
        // which case the directory name alone is a weaker but honest fingerprint.
        match Embedder::fingerprint(self) {
            Ok(f) => format!("{}:{}:{}", f.model, f.weights_sha256, f.dim),
            Err(_) => format!("{}:unhashed:{}", self.dir().display(), self.dim()),
        }
    }
    fn dim(&self) -> usize {
        Embedder::dim(self)
    }
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(Embedder::embed_documents(self, texts)?)
    }
    fn embed_documents_with_sentences(&self, texts: &[&str]) -> Result<Vec<DocumentVectors>> {
        Ok(Embedder::embed_documents_with_sentences(self, texts)?)
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(Embedder::embed_query(self, text)?)
    }
    fn count_tokens(&self, text: &str) -> usize {
        Embedder::count_tokens(self, text)
    }
}

/// Loads the model in `dir` (the default model's cache directory when `None`).
///
/// # Errors
/// [`crate::Error::Embed`] naming the missing or malformed file.
pub fn load_model(dir: Option<&Path>) -> Result<Embedder> {
    load_model_on(dir, DeviceChoice::Cpu)
}

/// Loads the model in `dir` (the default model's cache directory when `None`) to run on
/// `device`.
///
/// # Errors
/// As [`load_model`]; [`crate::Error::Embed`] with an invalid `device` option when this build
/// has no CUDA support or the GPU cannot be used.
pub fn load_model_on(dir: Option<&Path>, device: DeviceChoice) -> Result<Embedder> {
    load_model_at(dir, device, Precision::F32)
}

/// Loads the model in `dir` (the default model's cache directory when `None`) to run on
/// `device` with matrix products at `precision`.
///
/// # Errors
/// As [`load_model_on`]; [`crate::Error::Embed`] with an invalid `precision` option when int8
/// is asked of a model or device only candle runs.
pub fn load_model_at(
    dir: Option<&Path>,
    device: DeviceChoice,
    precision: Precision,
) -> Result<Embedder> {
    load_model_with(dir, device, precision, DocumentPooling::Whole)
}

/// Loads the model in `dir` (the default model's cache directory when `None`) to run on
/// `device` with matrix products at `precision`, stored texts' vectors made by `pooling`.
///
/// # Errors
/// As [`load_model_at`].
pub fn load_model_with(
    dir: Option<&Path>,
    device: DeviceChoice,
    precision: Precision,
    pooling: DocumentPooling,
) -> Result<Embedder> {
    let dir = dir.map_or_else(memloop_embed::default_model_dir, Path::to_path_buf);
    Ok(Embedder::load(
        dir,
        EmbedderOptions {
            device,
            precision,
            pooling,
            ..EmbedderOptions::default()
        },
    )?)
}

/// Loads the model for a new store that names no precision, its texts' vectors made by
/// `pooling`: at [`Precision::preferred`]
/// (int8 on a CPU with a vector int8 kernel), or f32 where that model or device has no int8
/// (only memloop's native CPU encoder does).
///
/// # Errors
/// As [`load_model_at`].
pub(crate) fn load_model_for_new_store(
    dir: Option<&Path>,
    device: DeviceChoice,
    pooling: DocumentPooling,
) -> Result<Embedder> {
    let preferred = Precision::preferred();
    if preferred != Precision::F32 {
        match load_model_with(dir, device, preferred, pooling) {
            Err(Error::Embed(memloop_embed::EmbedError::InvalidOption {
                name: "precision",
                ..
            })) => {}
            loaded => return loaded,
        }
    }
    load_model_with(dir, device, Precision::F32, pooling)
}

/// A deterministic, model-free embedder for tests and simulations that are not about
/// semantics: each lowercase word is hashed to a few signed coordinates (feature hashing), so
/// texts sharing words are similar and identical texts are identical. It is not a language
/// model; do not use it for real recall.
#[derive(Debug, Clone)]
pub struct HashingEmbedder {
    dim: usize,
}

impl HashingEmbedder {
    /// A hashing embedder of dimension `dim` (at least 8).
    pub fn new(dim: usize) -> Self {
        HashingEmbedder { dim: dim.max(8) }
    }

    fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let h = xxhash_rust::xxh3::xxh3_64(word.to_lowercase().as_bytes());
            for j in 0..3 {
                let bits = h.rotate_left(j * 21);
                let sign = if bits & 1 == 0 { 1.0 } else { -1.0 };
                v[(bits >> 1) as usize % self.dim] += sign;
            }
        }
        match memloop_index::UnitVector::new(v) {
            Ok(unit) => unit.into_vec(),
            Err(_) => {
                // No words: one fixed direction.
                let mut v = vec![0.0; self.dim];
                v[0] = 1.0;
                v
            }
        }
    }
}

impl TextEmbedder for HashingEmbedder {
    fn fingerprint(&self) -> String {
        format!("hashing-v1:{}", self.dim)
    }
    fn dim(&self) -> usize {
        self.dim
    }
    fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        Ok(texts.iter().map(|t| self.embed(t)).collect())
    }
    fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed(text))
    }
    fn count_tokens(&self, text: &str) -> usize {
        text.split_whitespace().count()
    }
}
