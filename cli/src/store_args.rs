//! Options every store command shares, and opening the store with them.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use memloop::{
    model::DeviceChoice, model::EncoderPrecision, model::VectorEncoding, Durability, Memory,
    Options,
};

/// Closes the store after a command did its work. Every write the command reported was durable
/// already (a synced commit, or an explicit flush), so what closing still saves (the index and
/// recall access times, both caches) failing, on a full disk say, is a warning: the command's
/// answer stands, nothing acknowledged was lost, and the next open replays or rebuilds the
/// index.
pub fn close(memory: Memory) {
    if let Err(e) = memory.close() {
        eprintln!(
            "memloop: warning: closing the store: {e}; nothing acknowledged was lost (the index is replayed or rebuilt on the next open)"
        );
    }
}

/// Where the store is and how to open it.
#[derive(Args, Debug, Clone)]
pub struct StoreArgs {
    /// Store directory (created by `init` and by the commands that write: remember, ingest,
    /// import, task, observe); default `./memloop-store`, or for `mcp` the user's
    /// `$XDG_DATA_HOME/memloop/default`.
    #[arg(long, global = true)]
    pub store: Option<PathBuf>,
    /// Model directory (config.json, tokenizer.json, model.safetensors); default: the fetched
    /// all-MiniLM-L6-v2 ($MEMLOOP_MODEL_DIR or ~/.cache/memloop/models/all-MiniLM-L6-v2).
    #[arg(long, global = true)]
    pub model: Option<PathBuf>,
    /// Cosine similarity at which a new memory merges into an existing one of the same
    /// namespace and kind, or `off` (exact duplicates always merge).
    #[arg(long, global = true, default_value = "0.95", value_parser = parse_threshold)]
    pub dedup_threshold: Threshold,
    /// Where the model runs: `cpu`, or `cuda` / `cuda:N` for an NVIDIA GPU (a build with the
    /// `cuda` feature; scripts/gpu-check.sh).
    #[arg(long, global = true, default_value = "cpu", value_parser = parse_device)]
    pub device: DeviceChoice,
    /// The model's matrix products: `f32`, or `int8` (memloop's native CPU encoder: faster,
    /// vectors slightly different, so a store is written in one or the other; the store
    /// records which and refuses the other). Omitted: the store's own; a new store takes int8
    /// where the CPU has AVX2 and the model runs on the native encoder, else f32 (`embed`,
    /// which writes no store, f32).
    #[arg(long, global = true, value_parser = parse_precision)]
    pub precision: Option<EncoderPrecision>,
    /// How the index stores the vectors searches read: `f32`, `bf16` (codes beside the f32
    /// vectors) or `int8` (codes only, a third of the f32 index file; the best candidates are
    /// re-scored on the store's f32 vectors: same answers, faster searches and loads).
    /// Recorded in the store; omitted keeps the store's choice (int8 for a new store; f32 for a store made before that default). A change
    /// rebuilds the index once.
    #[arg(long, global = true)]
    pub index_vectors: Option<VectorEncoding>,
    /// A cross-encoder directory (a one-label BERT sequence classifier such as
    /// ms-marco-MiniLM-L-6-v2: config.json, tokenizer.json, model.safetensors; none ships with
    /// memloop): the rerank and iterative strategies then order their best candidates by it.
    /// It belongs to the process that opens the store: a command that would forward to a
    /// running `memloop mcp` refuses it (give it to the server).
    #[arg(long, global = true)]
    pub reranker_model: Option<PathBuf>,
    /// Open a store directory that another user owns or others can write (refused by
    /// default: whoever can write it can replace the store's files or answer on its socket).
    #[arg(long, global = true)]
    pub allow_unsafe_directory: bool,
    /// An encrypted store's key file (made with a random 256-bit key when a store is created
    /// with it; default $MEMLOOP_KEY_FILE). Keep it outside the store and back it up: without
    /// it the store cannot be read. A ring made with a passphrase reads it from $MEMLOOP_KEY.
    #[arg(long, global = true)]
    pub key_file: Option<PathBuf>,
    /// A model-free deterministic embedder of this dimension (1 to 65536) instead of the
    /// model: for tests and demos of the plumbing, it has no notion of meaning. A store
    /// records its embedder and refuses another.
    #[arg(long, global = true, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    pub hashing_embedder: Option<u32>,
    /// A manual clock standing at this time (ms since the Unix epoch) instead of the system
    /// clock: the same requests then give the same answers, times included (the contract
    /// table's runs, replays).
    #[arg(long, global = true)]
    pub manual_clock: Option<i64>,
}

fn parse_device(s: &str) -> Result<DeviceChoice, String> {
    let device: DeviceChoice = s
        .parse()
        .map_err(|e: memloop_embed::EmbedError| e.to_string())?;
    if !device.is_supported() {
        return Err(format!(
            "`{s}`: this memloop was built without CUDA support; rebuild with `--features cuda` (scripts/gpu-check.sh), or use `cpu`"
        ));
    }
    Ok(device)
}

fn parse_precision(s: &str) -> Result<EncoderPrecision, String> {
    EncoderPrecision::parse(s).ok_or_else(|| format!("`{s}` is neither `f32` nor `int8`"))
}

/// A de-duplication threshold or none.
#[derive(Debug, Clone, Copy)]
pub struct Threshold(pub Option<f32>);

fn parse_threshold(s: &str) -> Result<Threshold, String> {
    if s == "off" {
        return Ok(Threshold(None));
    }
    match s.parse::<f32>() {
        Ok(x) if (-1.0..=1.0).contains(&x) => Ok(Threshold(Some(x))),
        _ => Err(format!("`{s}` is not a cosine in [-1, 1] or `off`")),
    }
}

/// The store of commands given no `--store`.
const DEFAULT_STORE: &str = "./memloop-store";

impl StoreArgs {
    /// The store directory: `--store`, or `./memloop-store`.
    pub fn dir(&self) -> PathBuf {
        self.store
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_STORE))
    }

    /// True if `--store` is an existing store.
    pub fn exists(&self) -> bool {
        memloop::Memory::exists(self.dir())
    }

    /// Fails with a clear message unless `--store` is an existing store.
    fn require_existing(&self) -> Result<()> {
        if !self.exists() {
            anyhow::bail!(
                "no memloop store at {} (create one with `memloop --store {} init`, or point --store at an existing store)",
                self.dir().display(),
                self.dir().display()
            );
        }
        Ok(())
    }

    /// Opens an existing store (commands that only read or change what is there).
    pub fn open_existing(&self, durability: Durability) -> Result<Memory> {
        self.require_existing()?;
        self.open(durability)
    }

    /// Opens an existing store with a manual clock set to `t`.
    pub fn open_existing_at(&self, durability: Durability, t: i64) -> Result<Memory> {
        self.require_existing()?;
        self.open_at(durability, t)
    }

    /// Opens the store with these settings, creating it if missing.
    pub fn open(&self, durability: Durability) -> Result<Memory> {
        self.open_with(durability, self.clock())
    }

    /// The clock: `--manual-clock`'s, else the system's.
    fn clock(&self) -> memloop::Clock {
        self.manual_clock
            .map_or(memloop::Clock::System, memloop::Clock::manual)
    }

    /// Opens the store with a manual clock set to `t` (ms since the Unix epoch).
    pub fn open_at(&self, durability: Durability, t: i64) -> Result<Memory> {
        self.open_with(durability, memloop::Clock::manual(t))
    }

    fn open_with(&self, durability: Durability, clock: memloop::Clock) -> Result<Memory> {
        let options = self.options(durability, clock);
        let dir = self.dir();
        Memory::open(&dir, options).with_context(|| format!("cannot open store {}", dir.display()))
    }

    /// Opens store `dir` (not `--store`) with these settings and a system clock, keeping the
    /// engine's error (a shared store tells `Locked` apart).
    pub fn open_dir(
        &self,
        dir: &std::path::Path,
        durability: Durability,
    ) -> memloop::Result<Memory> {
        Memory::open(dir, self.options(durability, self.clock()))
    }

    /// The encryption `--key-file` (or $MEMLOOP_KEY_FILE) and $MEMLOOP_KEY ask for.
    pub fn encryption(&self) -> Option<memloop::Encryption> {
        let file = self
            .key_file
            .clone()
            .or_else(|| std::env::var_os("MEMLOOP_KEY_FILE").map(PathBuf::from))?;
        Some(match std::env::var("MEMLOOP_KEY") {
            Ok(pass) => memloop::Encryption::passphrase(file, pass),
            Err(_) => memloop::Encryption::key_file(file),
        })
    }

    fn options(&self, durability: Durability, clock: memloop::Clock) -> Options {
        Options {
            clock,
            model_dir: self.model.clone(),
            device: self.device,
            precision: self.precision,
            dedup_threshold: self.dedup_threshold.0,
            index_vectors: self.index_vectors,
            reranker_model: self.reranker_model.clone(),
            durability,
            allow_unsafe_directory: self.allow_unsafe_directory,
            encryption: self.encryption(),
            embedder: self.hashing_embedder.map(|dim| {
                std::sync::Arc::new(memloop::HashingEmbedder::new(dim as usize))
                    as std::sync::Arc<dyn memloop::TextEmbedder>
            }),
            ..Options::default()
        }
    }
}
