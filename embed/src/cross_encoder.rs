//! A cross-encoder: a BERT model with a sequence-classification head that reads a query and a
//! text together (`[CLS] query [SEP] text [SEP]`) and gives one relevance logit, as
//! sentence-transformers' `CrossEncoder` and Hugging Face's `BertForSequenceClassification`
//! compute it: the encoder's last hidden state of `[CLS]`, the pooler (`tanh(W·h + b)`), then
//! the classifier (`w·p + b`).
//!
//! It runs on memloop's own CPU encoder (the same kernels as the embedder, at f32 or int8), so
//! BERT-family rerankers such as `cross-encoder/ms-marco-MiniLM-L-6-v2` (MiniLM's
//! architecture) need nothing else. No weights ship with memloop: the caller supplies a model
//! directory (config.json, tokenizer.json, model.safetensors).

use std::path::{Path, PathBuf};

use tokenizers::Tokenizer;

use crate::config::ModelConfig;
use crate::error::{EmbedError, Result};
use crate::models::{PairEncoder, Precision};
use crate::tokenize;
use crate::weights::MappedTensors;

/// How to load a [`CrossEncoder`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CrossEncoderOptions {
    /// The matrix products' arithmetic (default [`Precision::F32`]: a reranker's scores are
    /// what orders the answer, so they are kept exact unless asked).
    pub precision: Precision,
    /// The longest (query, text) pair in tokens, the longer side cut first (default: the
    /// model's position table, 512 for BERT).
    pub max_len: Option<usize>,
    /// Pairs per encoder call (default 16), sorted by length first.
    pub batch_size: usize,
    /// Threads of a pool of its own (default `None`: the caller's rayon pool).
    pub threads: Option<usize>,
}

impl Default for CrossEncoderOptions {
    fn default() -> Self {
        CrossEncoderOptions {
            precision: Precision::F32,
            max_len: None,
            batch_size: 16,
            threads: None,
        }
    }
}

/// A loaded cross-encoder; [`CrossEncoder::score`] rates texts against a query.
pub struct CrossEncoder {
    dir: PathBuf,
    encoder: PairEncoder,
    tokenizer: Tokenizer,
    hidden: usize,
    max_len: usize,
    batch_size: usize,
    /// The pooler's `hidden × hidden` weight (PyTorch's `out × in`) and bias.
    pooler: (Vec<f32>, Vec<f32>),
    /// The classifier's one row and its bias.
    classifier: (Vec<f32>, f32),
    pool: Option<rayon::ThreadPool>,
}

impl std::fmt::Debug for CrossEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoder")
            .field("dir", &self.dir)
            .field("hidden", &self.hidden)
            .field("max_len", &self.max_len)
            .finish_non_exhaustive()
    }
}

impl CrossEncoder {
    /// Loads the cross-encoder in `dir`: a BERT-family `config.json` with one label (a
    /// relevance score), `tokenizer.json`, and `model.safetensors` holding the encoder, the
    /// pooler (`bert.pooler.dense`) and the classifier (`classifier`).
    ///
    /// # Errors
    /// [`EmbedError::MissingCrossEncoderFile`], [`EmbedError::MalformedFile`] (also: not exactly one
    /// label), [`EmbedError::UnsupportedArchitecture`] (not BERT),
    /// [`EmbedError::WeightsMismatch`] (no pooler or classifier, wrong shapes);
    /// [`EmbedError::InvalidOption`] for options out of range or a model memloop's encoder
    /// cannot run.
    pub fn load(dir: impl AsRef<Path>, options: CrossEncoderOptions) -> Result<Self> {
        // The embedder's message for a missing file says how to fetch its model; a
        // cross-encoder's says that its directory is the caller's own.
        Self::load_from(dir.as_ref(), options).map_err(|e| match e {
            EmbedError::MissingFile { path, reason } => {
                EmbedError::MissingCrossEncoderFile { path, reason }
            }
            e => e,
        })
    }

    fn load_from(dir: &Path, options: CrossEncoderOptions) -> Result<Self> {
        let dir = dir.to_path_buf();
        let config_path = dir.join("config.json");
        let (config, json) = ModelConfig::read_with_json(&config_path)?;
        let ModelConfig::Bert(bert) = &config else {
            return Err(EmbedError::UnsupportedArchitecture {
                path: config_path,
                found: "nomic_bert (a cross-encoder must be a BERT model)".into(),
            });
        };
        let labels = label_count(&json, &config_path)?;
        if labels != 1 {
            return Err(EmbedError::MalformedFile {
                path: config_path,
                reason: format!(
                    "a relevance cross-encoder has one output; this model has {labels} labels"
                ),
            });
        }
        let limit = config.max_positions();
        let max_len = match options.max_len {
            Some(n) if n < 3 || n > limit => {
                return Err(EmbedError::InvalidOption {
                    name: "max_len",
                    reason: format!("must be in 3..={limit}, got {n}"),
                })
            }
            Some(n) => n,
            None => limit,
        };
        if options.batch_size == 0 {
            return Err(EmbedError::InvalidOption {
                name: "batch_size",
                reason: "must be at least 1".into(),
            });
        }
        // One mapping of the weights for the encoder and the head.
        let weights = dir.join("model.safetensors");
        let tensors = MappedTensors::open(&weights)?;
        let encoder = PairEncoder::load(&tensors, bert, &weights, options.precision)?;
        let hidden = bert.hidden_size;
        let (pooler, classifier) = head(&tensors, &weights, hidden)?;
        let (tokenizer, _) = tokenize::load(&dir.join("tokenizer.json"), max_len)?;
        let pool = crate::threads::own_pool(options.threads)?;
        Ok(CrossEncoder {
            dir,
            encoder,
            tokenizer,
            hidden,
            max_len,
            batch_size: options.batch_size,
            pooler,
            classifier,
            pool,
        })
    }

    /// The model directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The longest pair in tokens.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The relevance logit of each text for `query`, in the texts' order: higher is more
    /// relevant (sentence-transformers' `CrossEncoder.predict` gives the sigmoid of the same
    /// number, which orders the texts the same way).
    ///
    /// # Errors
    /// [`EmbedError::Inference`] if the tokenizer or the encoder fails.
    pub fn score(&self, query: &str, texts: &[&str]) -> Result<Vec<f32>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let run = || {
            let pairs = texts
                .iter()
                .map(|t| (query.to_string(), (*t).to_string()))
                .collect();
            let encoded = tokenize::encode_pairs(&self.tokenizer, pairs)?;
            let mut order: Vec<usize> = (0..encoded.len()).collect();
            order.sort_by_key(|&i| encoded[i].0.len());
            let mut scores = vec![0f32; encoded.len()];
            for batch in order.chunks(self.batch_size) {
                let seqs: Vec<&[u32]> = batch.iter().map(|&i| encoded[i].0.as_slice()).collect();
                let second: Vec<usize> = batch.iter().map(|&i| encoded[i].1).collect();
                let states = self.encoder.states(&seqs, &second)?;
                let mut row = 0;
                for (&i, seq) in batch.iter().zip(&seqs) {
                    // Each pair's first token is [CLS].
                    scores[i] = self.logit(&states[row * self.hidden..][..self.hidden]);
                    row += seq.len();
                }
            }
            Ok(scores)
        };
        match &self.pool {
            Some(p) => p.install(run),
            None => run(),
        }
    }

    /// The classifier's logit from the `[CLS]` hidden state: `w·tanh(P·cls + p) + b`.
    fn logit(&self, cls: &[f32]) -> f32 {
        let (pw, pb) = &self.pooler;
        let (cw, cb) = &self.classifier;
        let pooled = pw
            .chunks_exact(self.hidden)
            .zip(pb)
            .map(|(row, b)| (dot(row, cls) + b).tanh());
        pooled.zip(cw).map(|(p, w)| p * w).sum::<f32>() + cb
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The number of labels config.json (`json`, read from `path`) gives: `id2label`'s entries,
/// else `num_labels`; 2, the Hugging Face default, with neither.
fn label_count(json: &serde_json::Value, path: &Path) -> Result<usize> {
    let bad = |reason: &str| EmbedError::MalformedFile {
        path: path.to_path_buf(),
        reason: reason.into(),
    };
    if let Some(labels) = json.get("id2label") {
        return labels
            .as_object()
            .map(serde_json::Map::len)
            .ok_or_else(|| bad("id2label is not an object"));
    }
    match json.get("num_labels") {
        None => Ok(2),
        Some(n) => n
            .as_u64()
            .map(|n| n as usize)
            .ok_or_else(|| bad("num_labels is not a count")),
    }
}

/// The pooler and the one-output classifier, read from the weights file.
#[allow(clippy::type_complexity)]
fn head(
    tensors: &MappedTensors,
    weights: &Path,
    hidden: usize,
) -> Result<((Vec<f32>, Vec<f32>), (Vec<f32>, f32))> {
    let mismatch = |reason: String| EmbedError::WeightsMismatch {
        path: weights.to_path_buf(),
        reason,
    };
    let pooler = ["bert.pooler.dense", "pooler.dense"]
        .into_iter()
        .find(|p| tensors.contains(&format!("{p}.weight")))
        .ok_or_else(|| {
            mismatch("no pooler (bert.pooler.dense): not a sequence-classification model".into())
        })?;
    let get = |name: String, shape: &[usize]| -> Result<Vec<f32>> {
        Ok(tensors.floats(&name, shape).map_err(mismatch)?.to_vec())
    };
    let pooler_w = get(format!("{pooler}.weight"), &[hidden, hidden])?;
    let pooler_b = get(format!("{pooler}.bias"), &[hidden])?;
    let class_w = get("classifier.weight".into(), &[1, hidden])?;
    let class_b = get("classifier.bias".into(), &[1])?;
    Ok(((pooler_w, pooler_b), (class_w, class_b[0])))
}
