//! How a store is opened: model, clock, durability, deduplication and index settings.

use crate::crypt::Encryption;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use memloop_embed::{DeviceChoice, DocumentPooling, Precision};
use memloop_index::VectorEncoding;

use crate::clock::Clock;
use crate::decay::ForgetPolicy;
use crate::embedder::HashingEmbedder;
use crate::embedder::TextEmbedder;
use crate::hooks::{
    Extractive, Extractor, QueryRefiner, Reranker, Rocchio, ScoreFusion, Summarizer, TokenCounter,
};
use crate::invalid::InvalidInput;
use crate::store::faults::StorageFaults;
use crate::vocabulary::{Cues, OpenRequest};

/// [`Options::max_text_bytes`]'s default: 512 KiB.
pub const DEFAULT_MAX_TEXT_BYTES: usize = 512 * 1024;
/// The largest [`Options::max_text_bytes`] a store accepts: 16 MiB (a stored record must stay
/// under the decoders' 64 MiB bound, concise and brief versions included).
pub const MAX_TEXT_BYTES_LIMIT: usize = 16 << 20;

/// When a write is durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Every write (or batch) is fsynced before it returns: an acknowledged memory survives a
    /// crash or power loss. The default.
    #[default]
    Synced,
    /// Writes are committed without fsync and made durable together by
    /// [`crate::Admin::flush`], a checkpoint, or close: much faster bulk ingest; a crash loses
    /// the writes since the last flush, never older ones, and never corrupts the store.
    Grouped,
}

/// Options for [`crate::Memory::open`]. `Options::default()` loads the default model.
#[derive(Clone)]
pub struct Options {
    /// The embedder to use; when `None`, the model in `model_dir` is loaded.
    pub embedder: Option<Arc<dyn TextEmbedder>>,
    /// Model directory when `embedder` is `None` (default: the default model's cache directory).
    pub model_dir: Option<PathBuf>,
    /// Where that model runs: the CPU (default) or a CUDA GPU (needs the `cuda` feature).
    pub device: DeviceChoice,
    /// The arithmetic of that model's matrix products: [`Precision::F32`] or
    /// [`Precision::Int8`] (memloop's native CPU encoder only; its vectors are a space of their
    /// own, named in the fingerprint, so a store written in one refuses the other). `None`
    /// (default) takes the store's recorded precision; a new store takes
    /// [`Precision::preferred`]: int8 on a CPU with a vector int8 kernel (x86-64 with AVX2)
    /// where the model runs on the native encoder, else f32.
    pub precision: Option<Precision>,
    /// How that model makes a stored text's vector: whole, or as the mean of its sentences'
    /// vectors ([`DocumentPooling`]; named in the fingerprint, so a store written one way
    /// refuses the other). `None` (default) takes the store's recorded pooling; a new store
    /// takes [`DocumentPooling::Sentences`] (chosen by measurement, BENCHMARKS.md). Only for
    /// a model the engine loads: an [`Options::embedder`] of the caller's own pools as it does.
    pub pooling: Option<DocumentPooling>,
    /// A cross-encoder directory: when set, the store opens with
    /// [`crate::hooks::CrossEncoderReranker`] over it as `hooks.reranker` (rerank and iterative
    /// recalls order their best candidates by it); a `hooks.reranker` of the caller's own is
    /// then refused at open. Default `None`: `hooks.reranker` as given.
    pub reranker_model: Option<PathBuf>,
    /// Where times come from.
    pub clock: Clock,
    /// When writes are durable.
    pub durability: Durability,
    /// Cosine similarity at or above which a new memory is merged into an existing one of the
    /// same namespace and kind (`None` turns near-duplicate detection off; exact duplicates are
    /// always merged). Default 0.95.
    pub dedup_threshold: Option<f32>,
    /// The longest text one memory may hold, in bytes (a document is stored whole beside its
    /// chunks, so this bounds documents too). Longer texts are refused with
    /// [`crate::Error::InvalidInput`]. Default 512 KiB, at most [`MAX_TEXT_BYTES_LIMIT`].
    pub max_text_bytes: usize,
    /// HNSW links per node (M). Default 16.
    pub index_m: usize,
    /// HNSW construction beam (efConstruction). Default 200.
    pub index_ef_construction: usize,
    /// How the index stores the vectors its searches read: [`VectorEncoding::F32`], or
    /// compressed codes that searches walk and whose best candidates are then re-scored on
    /// f32 vectors — the same answers, faster (see BENCHMARKS.md). [`VectorEncoding::Bf16`]
    /// keeps the f32 vectors in the index beside its codes; [`VectorEncoding::Int8`] keeps
    /// only its codes (a third of the f32 index file) and re-scores on the store's vectors.
    /// `None` (default) keeps the store's recorded choice: int8 for a new store, f32 for a
    /// store made before that default that never chose; a choice is recorded in the store,
    /// and an index saved with another encoding is rebuilt on open.
    pub index_vectors: Option<VectorEncoding>,
    /// HNSW search beam for recalls (raised to k when smaller). Default 96.
    pub recall_ef: usize,
    /// Checkpoint the index in the background after this many changes, or, on an index of more
    /// than four times as many items, after changes amounting to a quarter of its items (a
    /// checkpoint writes the whole index). Default 10,000.
    pub checkpoint_every: u64,
    /// …or this long after the first unsaved change. Default 60 s.
    pub checkpoint_interval: Duration,
    /// Check every checksum of the index file on open (reads the whole file) instead of the
    /// O(1) structural checks. Default false.
    pub verify_index: bool,
    /// Decay, tiers, reinforcement and capacity ([`ForgetPolicy::default`]: Ebbinghaus decay,
    /// θ1 = 0.3, θ2 = 0.02, no capacity bound).
    pub forgetting: ForgetPolicy,
    /// The replaceable parts of retrieval and context assembly.
    pub hooks: Hooks,
    /// The cues recall applies ([`crate::retrieve::Cue`]: a time the query names, advice,
    /// quantities, things got, the asker's age, the asker's deeds, the newest value of a fact
    /// first). Default: all.
    pub cues: Cues,
    /// A storage fault seam for tests: every file operation of the store goes through it, so
    /// a test can fail any one ([`crate::faults::StorageFaults`]). `None` (default) in real use.
    pub storage_faults: Option<Arc<StorageFaults>>,
    /// Open a store directory even when another user owns it or others can write it (it is
    /// refused by default, as ssh refuses a loose home directory: whoever can write the
    /// directory can replace the store's files). Default false.
    pub allow_unsafe_directory: bool,
    /// Encrypt the store at rest under the key ring in a key file ([`Encryption`]): chosen
    /// when a store is created, needed at every open after. `None` (default): a plain store.
    pub encryption: Option<Encryption>,
}

/// Caller-supplied parts (an LLM reranker, a query rewriter, a summarizer, the token counter
/// of the model that reads the contexts); each defaults to a built-in that needs no model.
#[derive(Clone)]
pub struct Hooks {
    /// Orders rerank and iterative candidates. Default: [`ScoreFusion`] (the BM25 and vector
    /// scores, each normalised over the candidates, weighted 0.7 / 0.3;
    /// [`crate::hooks::FusionReranker`] is reciprocal-rank fusion).
    pub reranker: Arc<dyn Reranker>,
    /// Refines iterative queries. Default: [`Rocchio`] pseudo-relevance feedback.
    pub refiner: Arc<dyn QueryRefiner>,
    /// Makes concise and brief texts of tasks and documents, and of memories stored without
    /// them when a context needs them. Default: [`Extractive`].
    pub summarizer: Arc<dyn Summarizer>,
    /// Counts context tokens. Default (`None`): the embedder's tokenizer.
    pub token_counter: Option<Arc<dyn TokenCounter>>,
    /// Draws facts and triples from conversation turns
    /// ([`crate::Memory::remember_conversation`]). Default (`None`): none are drawn.
    pub extractor: Option<Arc<dyn Extractor>>,
}

/// The default reranker, one shared allocation: every [`Hooks::default`] holds this `Arc`, so
/// an open can tell a caller's own reranker from it ([`Hooks::reranker_is_default`]).
fn default_reranker() -> Arc<dyn Reranker> {
    static DEFAULT: std::sync::LazyLock<Arc<dyn Reranker>> =
        std::sync::LazyLock::new(|| Arc::new(ScoreFusion::default()));
    DEFAULT.clone()
}

impl Hooks {
    /// Whether `reranker` is still the default one (no caller replaced it).
    pub(crate) fn reranker_is_default(&self) -> bool {
        Arc::ptr_eq(&self.reranker, &default_reranker())
    }
}

impl Default for Hooks {
    fn default() -> Self {
        Hooks {
            reranker: default_reranker(),
            refiner: Arc::new(Rocchio::default()),
            summarizer: Arc::new(Extractive),
            token_counter: None,
            extractor: None,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            embedder: None,
            model_dir: None,
            device: DeviceChoice::Cpu,
            precision: None,
            pooling: None,
            reranker_model: None,
            clock: Clock::System,
            durability: Durability::Synced,
            dedup_threshold: Some(0.95),
            max_text_bytes: DEFAULT_MAX_TEXT_BYTES,
            index_m: 16,
            index_ef_construction: 200,
            index_vectors: None,
            recall_ef: 96,
            checkpoint_every: 10_000,
            checkpoint_interval: Duration::from_secs(60),
            verify_index: false,
            forgetting: ForgetPolicy::default(),
            hooks: Hooks::default(),
            cues: Cues::ALL,
            storage_faults: None,
            allow_unsafe_directory: false,
            encryption: None,
        }
    }
}

impl Options {
    /// The options an [`OpenRequest`] asks for, every value checked here once for every door.
    ///
    /// # Errors
    /// [`InvalidInput::Options`] naming the field: a test embedder's dimension outside
    /// 1..=65536, an unknown device or one this build cannot use, an unknown clock, a start
    /// without a manual clock, an unknown index encoding.
    pub fn from_request(r: OpenRequest) -> Result<Options, InvalidInput> {
        let bad = |why: String| InvalidInput::Options(why);
        let mut o = Options::default();
        if let Some(dim) = r.hashing_embedder {
            if !(1..=65_536).contains(&dim) {
                return Err(bad(format!(
                    "hashing_embedder dimension {dim} is outside 1..=65536"
                )));
            }
            o.embedder = Some(Arc::new(HashingEmbedder::new(dim)));
        }
        o.model_dir = r.model;
        o.reranker_model = r.reranker_model;
        if let Some(d) = r.device.as_deref() {
            o.device = d
                .parse::<DeviceChoice>()
                .map_err(|e| bad(format!("device: {e}")))?;
            if !o.device.is_supported() {
                return Err(bad(format!(
                    "device {d:?}: this library was built without CUDA support (rebuild with the `cuda` feature), use \"cpu\""
                )));
            }
        }
        if let Some(p) = r.precision.as_deref() {
            o.precision =
                Some(Precision::parse(p).ok_or_else(|| {
                    bad(format!("precision {p:?} is neither \"f32\" nor \"int8\""))
                })?);
        }
        o.clock = match r.clock.as_deref() {
            None | Some("system") => Clock::System,
            Some("manual") => Clock::manual(r.start_ms.unwrap_or(0)),
            Some(other) => {
                return Err(bad(format!(
                    "clock {other:?} is neither \"system\" nor \"manual\""
                )))
            }
        };
        if r.start_ms.is_some() && !o.clock.is_manual() {
            return Err(bad("start needs the manual clock".into()));
        }
        if r.sync == Some(false) {
            o.durability = Durability::Grouped;
        }
        if let Some(t) = r.dedup_threshold {
            o.dedup_threshold = t;
        }
        o.forgetting.capacity = r.capacity.or(o.forgetting.capacity);
        o.forgetting.capacity_per_user = r.capacity_per_user.or(o.forgetting.capacity_per_user);
        if let Some(ef) = r.recall_ef {
            o.recall_ef = ef;
        }
        if let Some(v) = r.index_vectors.as_deref() {
            o.index_vectors = Some(
                v.parse::<VectorEncoding>()
                    .map_err(|e| bad(format!("index_vectors: {e}")))?,
            );
        }
        if let Some(n) = r.max_text_bytes {
            o.max_text_bytes = n;
        }
        o.encryption =
            match (r.key_file, r.passphrase) {
                (Some(file), None) => Some(Encryption::key_file(file)),
                (Some(file), Some(pass)) => Some(Encryption::passphrase(file, pass)),
                (None, Some(_)) => return Err(bad(
                    "passphrase needs key_file: the file that keeps the salt and the wrapped keys"
                        .into(),
                )),
                (None, None) => None,
            };
        Ok(o)
    }

    /// Default options with this embedder.
    pub fn with_embedder(embedder: Arc<dyn TextEmbedder>) -> Self {
        Options {
            embedder: Some(embedder),
            ..Default::default()
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("embedder", &self.embedder.as_ref().map(|e| e.fingerprint()))
            .field("model_dir", &self.model_dir)
            .field("device", &self.device)
            .field("precision", &self.precision)
            .field("pooling", &self.pooling)
            .field("reranker_model", &self.reranker_model)
            .field("clock", &self.clock)
            .field("durability", &self.durability)
            .field("dedup_threshold", &self.dedup_threshold)
            .field("max_text_bytes", &self.max_text_bytes)
            .field("index_m", &self.index_m)
            .field("index_ef_construction", &self.index_ef_construction)
            .field("index_vectors", &self.index_vectors)
            .field("recall_ef", &self.recall_ef)
            .field("checkpoint_every", &self.checkpoint_every)
            .field("checkpoint_interval", &self.checkpoint_interval)
            .field("verify_index", &self.verify_index)
            .field("encryption", &self.encryption)
            .field("forgetting", &self.forgetting)
            .field("token_counter", &self.hooks.token_counter.is_some())
            .finish_non_exhaustive()
    }
}
