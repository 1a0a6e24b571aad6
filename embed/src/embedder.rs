//! The [`Embedder`]: a model directory in, unit vectors out.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use candle_core::Device;
use tokenizers::Tokenizer;

use crate::config::{sentence_bert_max_len, ModelConfig};
use crate::error::{EmbedError, Result};
use crate::models::{Encoder, Kernels, Precision};
use crate::sentences::{self, DocumentPooling};
use crate::{pool, tokenize};

/// Where inference runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeviceChoice {
    /// The CPU (default).
    #[default]
    Cpu,
    /// CUDA device `n`; needs the `cuda` cargo feature (and the CUDA toolkit to build it).
    /// BERT-family and nomic-bert models run through candle's CUDA kernels in f32, batched
    /// after sorting by length, so a batch pads little.
    Cuda(usize),
}

impl std::str::FromStr for DeviceChoice {
    type Err = EmbedError;

    /// `cpu`, `cuda` (device 0) or `cuda:N`.
    fn from_str(s: &str) -> Result<Self> {
        let bad = || EmbedError::InvalidOption {
            name: "device",
            reason: format!("expected `cpu`, `cuda` or `cuda:N`, got {s:?}"),
        };
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::Cuda(0)),
            other => other
                .strip_prefix("cuda:")
                .and_then(|n| n.parse::<usize>().ok())
                .map(DeviceChoice::Cuda)
                .ok_or_else(bad),
        }
    }
}

impl std::fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceChoice::Cpu => f.write_str("cpu"),
            DeviceChoice::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

impl DeviceChoice {
    /// Whether this build can run on this device at all (CPU always; CUDA only with the `cuda`
    /// feature). A GPU being present is checked when the embedder loads.
    pub fn is_supported(self) -> bool {
        match self {
            DeviceChoice::Cpu => true,
            DeviceChoice::Cuda(_) => cfg!(feature = "cuda"),
        }
    }
}

/// Options for [`Embedder::load`].
#[derive(Debug, Clone)]
pub struct EmbedderOptions {
    /// Threads for this embedder: tokenisation, pooling and the whole native encoder (matrix
    /// products, attention, element-wise passes) run on a pool of this size; `None` uses the
    /// global rayon pool. candle's models ([`Kernels::Candle`], nomic-bert, CUDA) run their
    /// element-wise kernels on candle's own process-wide pool, sized once per process from
    /// `CANDLE_NUM_THREADS` (else `RAYON_NUM_THREADS`, else one per physical core): set that
    /// variable before the first embedding to pin the whole process to n threads.
    pub threads: Option<usize>,
    /// Inputs per forward pass (after sorting by length). 32 measured fastest for the native
    /// encoder on 2 cores (one large matrix product shares best over threads); candle's models
    /// ([`Kernels::Candle`]) were fastest at 8, which keeps their intermediates in cache
    /// (BENCHMARKS.md).
    pub batch_size: usize,
    /// Truncate inputs to this many tokens; `None` takes the model's own limit
    /// (`max_seq_length` of sentence-transformers, else the architecture's).
    pub max_len: Option<usize>,
    /// Matryoshka output dimension (nomic-style models); `None` keeps the full dimension.
    pub dimension: Option<usize>,
    /// Where to run.
    pub device: DeviceChoice,
    /// Which implementation runs BERT-family models on the CPU: memloop's own encoder
    /// (default, several times faster) or candle-transformers' `bert` (the reference).
    pub kernels: Kernels,
    /// The native encoder's arithmetic: f32 (default) or int8 matrix products. An int8
    /// embedder's fingerprint names it (`<model>+int8`): its vectors differ slightly from f32's,
    /// so a store never mixes the two.
    pub precision: Precision,
    /// How [`Embedder::embed_documents`] makes a text's vector: pooled over the whole text
    /// (default, sentence-transformers' recipe) or as the mean of its sentences' vectors
    /// (named in the fingerprint, `<model>+sentences`).
    pub pooling: DocumentPooling,
}

impl Default for EmbedderOptions {
    fn default() -> Self {
        EmbedderOptions {
            threads: None,
            batch_size: 32,
            max_len: None,
            dimension: None,
            device: DeviceChoice::Cpu,
            kernels: Kernels::Native,
            precision: Precision::F32,
            pooling: DocumentPooling::Whole,
        }
    }
}

/// A stored text's vectors ([`Embedder::embed_documents_with_sentences`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentVectors {
    /// The text's one vector, as [`Embedder::embed_documents`] gives it.
    pub pooled: Vec<f32>,
    /// Each of its sentences' own unit vectors, in order, when it was pooled from several
    /// (empty for a text of one piece, or pooled whole).
    pub sentences: Vec<SentenceVector>,
}

/// One sentence of a stored text, embedded alone.
#[derive(Debug, Clone, PartialEq)]
pub struct SentenceVector {
    /// Its words (white-space separated), to tell a sentence from an interjection.
    pub words: usize,
    /// Its unit vector.
    pub vector: Vec<f32>,
}

/// What identifies an embedding space: vectors from embedders with different fingerprints must
/// never be compared.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    /// The model's name (its directory name).
    pub model: String,
    /// sha256 of `model.safetensors`, lowercase hex.
    pub weights_sha256: String,
    /// Output dimension.
    pub dim: usize,
}

impl std::fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}@{}/{}",
            self.model,
            &self.weights_sha256[..self.weights_sha256.len().min(16)],
            self.dim
        )
    }
}

/// A loaded text embedding model. `Send + Sync`: share one across threads.
pub struct Embedder {
    dir: PathBuf,
    encoder: Encoder,
    tokenizer: Tokenizer,
    counter: Tokenizer,
    device: Device,
    hidden: usize,
    dim: usize,
    max_len: usize,
    batch_size: usize,
    matryoshka: Option<usize>,
    pool: Option<rayon::ThreadPool>,
    fingerprint: OnceLock<Fingerprint>,
    device_choice: DeviceChoice,
    /// The native encoder's arithmetic (part of the fingerprint).
    precision: Precision,
    /// How a stored text's vector is made (part of the fingerprint).
    pooling: DocumentPooling,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dir", &self.dir)
            .field("dim", &self.dim)
            .field("max_len", &self.max_len)
            .field("device", &self.device_choice)
            .field("precision", &self.precision)
            .field("pooling", &self.pooling)
            .finish()
    }
}

impl Embedder {
    /// Loads the model in `dir` (config.json, tokenizer.json, model.safetensors; the weights are
    /// memory-mapped, not read).
    ///
    /// # Errors
    /// [`EmbedError::MissingFile`], [`EmbedError::MalformedFile`],
    /// [`EmbedError::UnsupportedArchitecture`], [`EmbedError::WeightsMismatch`] naming the file;
    /// [`EmbedError::InvalidOption`] for options the model cannot honour.
    pub fn load(dir: impl AsRef<Path>, options: EmbedderOptions) -> Result<Self> {
        let dir = dir.as_ref().to_path_buf();
        let config = ModelConfig::read(&dir.join("config.json"))?;
        let hidden = config.hidden_size();
        let limit = config.max_positions();
        let max_len = match options.max_len {
            Some(n) if n < 2 || n > limit => {
                return Err(EmbedError::InvalidOption {
                    name: "max_len",
                    reason: format!("must be in 2..={limit}, got {n}"),
                })
            }
            Some(n) => n,
            None => sentence_bert_max_len(&dir)?.unwrap_or(limit).min(limit),
        };
        if options.batch_size == 0 {
            return Err(EmbedError::InvalidOption {
                name: "batch_size",
                reason: "must be at least 1".into(),
            });
        }
        let device = match options.device {
            DeviceChoice::Cpu => Device::Cpu,
            DeviceChoice::Cuda(n) => cuda_device(n)?,
        };
        let weights_path = dir.join("model.safetensors");
        // The weights and the tokenizer load side by side (each takes about half the time).
        let (encoder, tokenizers) = rayon::join(
            || {
                Encoder::load(
                    &config,
                    &weights_path,
                    &device,
                    options.kernels,
                    options.precision,
                )
            },
            || tokenize::load(&dir.join("tokenizer.json"), max_len),
        );
        let encoder = encoder?;
        let matryoshka = match options.dimension {
            None => None,
            Some(d) if d == 0 || d > hidden => {
                return Err(EmbedError::InvalidOption {
                    name: "dimension",
                    reason: format!("must be in 1..={hidden}, got {d}"),
                })
            }
            Some(d) if !encoder.matryoshka() && d != hidden => {
                return Err(EmbedError::InvalidOption {
                    name: "dimension",
                    reason: format!(
                        "this model was not trained for Matryoshka dimensions; only {hidden}"
                    ),
                })
            }
            // The full dimension of a non-Matryoshka model is simply the plain output.
            Some(_) if !encoder.matryoshka() => None,
            Some(d) => Some(d),
        };
        let (tokenizer, counter) = tokenizers?;
        let pool = crate::threads::own_pool(options.threads)?;
        Ok(Embedder {
            dir,
            encoder,
            tokenizer,
            counter,
            device,
            hidden,
            dim: matryoshka.unwrap_or(hidden),
            max_len,
            batch_size: options.batch_size,
            matryoshka,
            pool,
            fingerprint: OnceLock::new(),
            device_choice: options.device,
            precision: options.precision,
            pooling: options.pooling,
        })
    }

    /// Output dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Inputs longer than this many tokens (special tokens included) are truncated.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// Where inference runs.
    pub fn device(&self) -> DeviceChoice {
        self.device_choice
    }

    /// The model directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of tokens the model's tokenizer makes of `text`, without special tokens and
    /// without truncation: the count context assembly budgets with.
    pub fn count_tokens(&self, text: &str) -> usize {
        self.counter
            .encode(text, false)
            .map_or(0, |e| e.get_ids().len())
    }

    /// Model name + sha256 of the weights + dimension. The hash is computed on first call and
    /// kept for the handle's life, and between processes in `cache_dir()/fingerprints` against
    /// the file's length, times and inode (a changed file is hashed again).
    ///
    /// # Errors
    /// [`EmbedError::MissingFile`] if the weights file can no longer be read.
    pub fn fingerprint(&self) -> Result<Fingerprint> {
        if let Some(f) = self.fingerprint.get() {
            return Ok(f.clone());
        }
        let path = self.dir.join("model.safetensors");
        let cache = crate::cache_dir().join("fingerprints");
        let sha = crate::weights_hash::weights_sha256(&path, Some(&cache))?;
        let model = self
            .dir
            .file_name()
            .map_or_else(|| "model".to_string(), |n| n.to_string_lossy().into_owned());
        let model = self.pooling.model_name(&self.precision.model_name(&model));
        let f = Fingerprint {
            model,
            weights_sha256: sha,
            dim: self.dim,
        };
        Ok(self.fingerprint.get_or_init(|| f).clone())
    }

    /// Embeds texts to be stored (nomic-style models get `search_document: `), each whole or
    /// as the mean of its sentences' vectors ([`EmbedderOptions::pooling`]).
    ///
    /// # Errors
    /// [`EmbedError::Inference`] if the model fails.
    pub fn embed_documents(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if self.pooling == DocumentPooling::Whole {
            return self.embed_with_prefix(texts, self.encoder.prefixes().0);
        }
        Ok(self
            .embed_documents_with_sentences(texts)?
            .into_iter()
            .map(|d| d.pooled)
            .collect())
    }

    /// Embeds texts to be stored as [`Embedder::embed_documents`] does, and keeps each
    /// sentence's own vector beside the pooled one: pooled by sentences, a text of several
    /// pieces ([`sentences`]) gets them in [`DocumentVectors::sentences`], at no extra cost
    /// (they are what the pooled vector averages). Whole pooling, or a text of one piece,
    /// gives none.
    ///
    /// # Errors
    /// [`EmbedError::Inference`] if the model fails.
    pub fn embed_documents_with_sentences(&self, texts: &[&str]) -> Result<Vec<DocumentVectors>> {
        let prefix = self.encoder.prefixes().0;
        if self.pooling == DocumentPooling::Whole {
            return Ok(self
                .embed_with_prefix(texts, prefix)?
                .into_iter()
                .map(|pooled| DocumentVectors {
                    pooled,
                    sentences: Vec::new(),
                })
                .collect());
        }
        // Every text's pieces in one call (batched by length together), then each text's
        // pieces averaged.
        let mut all: Vec<&str> = Vec::with_capacity(texts.len());
        let mut owner: Vec<usize> = Vec::with_capacity(texts.len());
        for (i, text) in texts.iter().enumerate() {
            for piece in sentences::pieces(text) {
                all.push(piece);
                owner.push(i);
            }
        }
        let vectors = self.embed_with_prefix(&all, prefix)?;
        let mut out: Vec<DocumentVectors> = (0..texts.len())
            .map(|_| DocumentVectors {
                pooled: vec![0.0f32; self.dim],
                sentences: Vec::new(),
            })
            .collect();
        for ((v, &i), piece) in vectors.into_iter().zip(&owner).zip(&all) {
            let d = &mut out[i];
            for (o, x) in d.pooled.iter_mut().zip(&v) {
                *o += x;
            }
            d.sentences.push(SentenceVector {
                words: piece.split_whitespace().count(),
                vector: v,
            });
        }
        // A text of one piece keeps its vector as embedded (on the CPU encoder, bit for bit the
        // vector it gets alone: a packed batch has no padding; candle pads a CUDA batch to its
        // longest text, which can change the last bits).
        for d in &mut out {
            if d.sentences.len() > 1 {
                pool::l2_normalize(&mut d.pooled);
            } else if let Some(one) = d.sentences.pop() {
                d.pooled = one.vector;
            }
        }
        Ok(out)
    }

    /// Embeds one search query (nomic-style models get `search_query: `).
    ///
    /// # Errors
    /// As [`Embedder::embed_documents`].
    pub fn embed_query(&self, text: &str) -> Result<Vec<f32>> {
        let mut v = self.embed_queries(&[text])?;
        v.pop()
            .ok_or_else(|| EmbedError::Inference("no output".into()))
    }

    /// Embeds several queries.
    ///
    /// # Errors
    /// As [`Embedder::embed_documents`].
    pub fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_with_prefix(texts, self.encoder.prefixes().1)
    }

    /// Last hidden states of `text` exactly as given (no task prefix), one vector per token
    /// (special tokens included): the encoder's output before pooling.
    ///
    /// # Errors
    /// As [`Embedder::embed_documents`].
    pub fn token_embeddings(&self, text: &str) -> Result<Vec<Vec<f32>>> {
        let run = || {
            let ids = tokenize::encode(&self.tokenizer, vec![text.to_string()])?;
            let ids = ids.into_iter().next().unwrap_or_default();
            let hidden = self
                .encoder
                .hidden_states(&[&ids], self.hidden, &self.device)?;
            Ok(hidden.chunks(self.hidden).map(<[f32]>::to_vec).collect())
        };
        self.in_pool(run)
    }

    /// Runs `f` on this embedder's thread pool, if it has one.
    fn in_pool<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match &self.pool {
            Some(p) => p.install(f),
            None => f(),
        }
    }

    fn embed_with_prefix(&self, texts: &[&str], prefix: &str) -> Result<Vec<Vec<f32>>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let run = || {
            let inputs: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
            let ids = tokenize::encode(&self.tokenizer, inputs)?;
            self.embed_ids(&ids)
        };
        self.in_pool(run)
    }

    /// Embeds already-tokenised inputs: sorted by length and batched (the native encoder packs
    /// each batch with no padding; candle's models pad it to its own longest input).
    fn embed_ids(&self, ids: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..ids.len()).collect();
        order.sort_by_key(|&i| ids[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); ids.len()];
        for batch in order.chunks(self.batch_size) {
            for (&i, v) in batch.iter().zip(self.embed_batch(batch, ids)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One batch (indexes into `ids`): pooled, normalised vectors.
    fn embed_batch(&self, batch: &[usize], ids: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let seqs: Vec<&[u32]> = batch.iter().map(|&i| ids[i].as_slice()).collect();
        let hidden = self
            .encoder
            .hidden_states(&seqs, self.hidden, &self.device)?;
        let lens: Vec<usize> = seqs.iter().map(|s| s.len()).collect();
        Ok(pool::mean_packed(&hidden, &lens, self.hidden)
            .into_iter()
            .map(|mut v| {
                match self.matryoshka {
                    Some(d) => v = pool::matryoshka(&v, d),
                    None => pool::l2_normalize(&mut v),
                }
                v
            })
            .collect())
    }
}

#[cfg(feature = "cuda")]
fn cuda_device(n: usize) -> Result<Device> {
    Device::new_cuda(n).map_err(|e| EmbedError::InvalidOption {
        name: "device",
        reason: format!(
            "CUDA device {n} cannot be used ({e}); check that an NVIDIA GPU and its driver are present (`nvidia-smi`), or use `cpu`"
        ),
    })
}

#[cfg(not(feature = "cuda"))]
fn cuda_device(_n: usize) -> Result<Device> {
    Err(EmbedError::InvalidOption {
        name: "device",
        reason: "this build has no CUDA support; rebuild with `--features cuda` (needs the CUDA toolkit; scripts/gpu-check.sh shows how), or use `cpu`".into(),
    })
}
