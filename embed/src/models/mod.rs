//! One file per architecture; each turns token ids into last hidden states.

mod bert;
mod cpu_bert;
mod nomic_bert;

use std::path::Path;

use candle_core::{Device, Tensor};

use crate::config::ModelConfig;
use crate::error::{EmbedError, Result};
use crate::weights::MappedTensors;

/// Which implementation runs a BERT-family model on the CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kernels {
    /// memloop's own CPU encoder for BERT-family models (packed sequences with no padding,
    /// direct matrix multiplications, fused element-wise passes); candle for everything else.
    #[default]
    Native,
    /// candle-transformers' models everywhere (the reference implementation).
    Candle,
}

/// The arithmetic of the native encoder's matrix products.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// 32-bit floats throughout (the reference; vectors match sentence-transformers').
    #[default]
    F32,
    /// 8-bit integer matrix products (weights per output channel at load, activations per
    /// token as they come; AVX-512 VNNI where the CPU has it), layer norm, softmax and GELU in
    /// f32. Faster; its vectors differ slightly, so it is part of the model's fingerprint.
    /// Only memloop's native CPU encoder (BERT-family models on the CPU) has it.
    Int8,
}

impl Precision {
    /// "f32" or "int8".
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::Int8 => "int8",
        }
    }

    /// The precision named `name` ("f32" or "int8").
    pub fn parse(name: &str) -> Option<Precision> {
        match name {
            "f32" => Some(Precision::F32),
            "int8" => Some(Precision::Int8),
            _ => None,
        }
    }

    /// The model name a fingerprint gives at this precision: `model` itself in f32,
    /// `model+int8` in int8.
    pub fn model_name(self, model: &str) -> String {
        match self {
            Precision::F32 => model.to_string(),
            p => format!("{model}+{}", p.name()),
        }
    }

    /// The precision a new store takes when its caller names none: int8 where this CPU has a
    /// vector int8 kernel (x86-64 with AVX2; with AVX-512 VNNI, AVX-VNNI or AVX2 alone each
    /// measured faster than f32, BENCHMARKS.md), else f32 (a scalar int8 kernel is slower than
    /// f32's). Retrieval quality in int8 is within 0.005 of f32's on SciFact and LoCoMo.
    /// Only memloop's native encoder has int8: a caller falls back to f32 for models or
    /// devices it does not run (`EmbedError::InvalidOption` names "precision").
    pub fn preferred() -> Precision {
        if cpu_bert::has_vector_int8() {
            Precision::Int8
        } else {
            Precision::F32
        }
    }

    /// The precision a fingerprint's model name was made at ([`Precision::model_name`]); f32
    /// for a name without one.
    pub fn of_model_name(name: &str) -> Precision {
        name.split('+')
            .skip(1)
            .find_map(Precision::parse)
            .unwrap_or_default()
    }
}

/// What memloop's native CPU encoder runs on this CPU, within the cap `MEMLOOP_SIMD` sets
/// (`scalar`, `avx2`, `avxvnni`; unset: the CPU's best), for benchmarks and reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuKernels {
    /// The tier the f32 loops, attention and GELU are compiled for: `avx512`, `avxvnni`
    /// (AVX2 code), `avx2` or `scalar`.
    pub tier: &'static str,
    /// The int8 product's kernel: `avx512vnni`, `avxvnni`, `avx2`, `neon`, `neon-dotprod`,
    /// `neon-i8mm`, `simd128` or `scalar`.
    pub int8: &'static str,
}

impl CpuKernels {
    /// The kernels of this CPU (and this process's `MEMLOOP_SIMD`).
    pub fn detect() -> CpuKernels {
        let (tier, int8) = cpu_bert::kernel_names();
        CpuKernels { tier, int8 }
    }
}

/// Whether memloop's native encoder runs the BERT-family model `c` (absolute positions, heads
/// a multiple of 8 wide).
pub(crate) fn native_supports(c: &candle_transformers::models::bert::Config) -> bool {
    cpu_bert::supports(c)
}

/// A loaded encoder.
pub(crate) enum Encoder {
    Bert(bert::Bert),
    CpuBert(cpu_bert::CpuBert),
    NomicBert(nomic_bert::NomicBert),
}

impl Encoder {
    /// Loads the weights file `weights` for `config` on `device`: memloop's own encoder reads
    /// the mapped file directly, candle's models through a `VarBuilder` over it.
    ///
    /// # Errors
    /// [`EmbedError::MissingFile`] / [`EmbedError::MalformedFile`] for the file,
    /// [`EmbedError::WeightsMismatch`] for tensors that do not fit the configuration.
    pub(crate) fn load(
        config: &ModelConfig,
        weights: &Path,
        device: &Device,
        kernels: Kernels,
        precision: Precision,
    ) -> Result<Self> {
        let mismatch = |e: candle_core::Error| EmbedError::WeightsMismatch {
            path: weights.to_path_buf(),
            reason: e.to_string(),
        };
        let native = kernels == Kernels::Native && device.is_cpu();
        let vb = || crate::weights::load(weights, device);
        let is_native = matches!(config, ModelConfig::Bert(c) if native && cpu_bert::supports(c));
        if precision == Precision::Int8 && !is_native {
            return Err(EmbedError::InvalidOption {
                name: "precision",
                reason: "int8 needs memloop's native encoder: a BERT-family model on the CPU \
                         with the native kernels"
                    .into(),
            });
        }
        Ok(match config {
            ModelConfig::Bert(c) if is_native => {
                let tensors = MappedTensors::open(weights)?;
                Encoder::CpuBert(cpu_bert::CpuBert::load(&tensors, c, precision).map_err(mismatch)?)
            }
            ModelConfig::Bert(c) => Encoder::Bert(bert::Bert::load(vb()?, c).map_err(mismatch)?),
            ModelConfig::NomicBert(c) => {
                Encoder::NomicBert(nomic_bert::NomicBert::load(vb()?, c).map_err(mismatch)?)
            }
        })
    }

    /// Last hidden states of `seqs`, packed row after row: `Σ len × hidden`.
    pub(crate) fn hidden_states(
        &self,
        seqs: &[&[u32]],
        hidden: usize,
        device: &Device,
    ) -> Result<Vec<f32>> {
        match self {
            Encoder::CpuBert(m) => m.forward(seqs).map_err(EmbedError::Inference),
            Encoder::Bert(m) => padded(seqs, hidden, device, |ids, mask| m.forward(ids, mask)),
            Encoder::NomicBert(m) => padded(seqs, hidden, device, |ids, mask| m.forward(ids, mask)),
        }
    }

    /// Text prefixes the architecture's training used for (documents, queries).
    pub(crate) fn prefixes(&self) -> (&'static str, &'static str) {
        match self {
            Encoder::Bert(_) | Encoder::CpuBert(_) => ("", ""),
            Encoder::NomicBert(_) => ("search_document: ", "search_query: "),
        }
    }

    /// Whether Matryoshka output dimensions are defined for this architecture.
    pub(crate) fn matryoshka(&self) -> bool {
        matches!(self, Encoder::NomicBert(_))
    }
}

/// memloop's own CPU encoder for text pairs (a cross-encoder's body): the tokens of the
/// second text are of segment 1.
pub(crate) struct PairEncoder(cpu_bert::CpuBert);

impl PairEncoder {
    /// The BERT model `c` from already-mapped weights (`weights` names their file), at
    /// `precision`.
    ///
    /// # Errors
    /// [`EmbedError::InvalidOption`] (`model`) for a model memloop's encoder cannot run,
    /// [`EmbedError::WeightsMismatch`] for tensors that do not fit the configuration.
    pub(crate) fn load(
        tensors: &MappedTensors,
        c: &candle_transformers::models::bert::Config,
        weights: &Path,
        precision: Precision,
    ) -> Result<Self> {
        if !cpu_bert::supports(c) {
            return Err(EmbedError::InvalidOption {
                name: "model",
                reason: "memloop's CPU encoder runs models whose attention heads are a multiple \
                         of 8 wide, with absolute positions"
                    .into(),
            });
        }
        let model = cpu_bert::CpuBert::load(tensors, c, precision).map_err(|e| {
            EmbedError::WeightsMismatch {
                path: weights.to_path_buf(),
                reason: e.to_string(),
            }
        })?;
        Ok(PairEncoder(model))
    }

    /// Last hidden states of text pairs, packed as [`Encoder::hidden_states`]: the tokens of
    /// sequence `i` from position `second[i]` on are of segment 1 (token type 1).
    pub(crate) fn states(&self, seqs: &[&[u32]], second: &[usize]) -> Result<Vec<f32>> {
        self.0
            .forward_segments(seqs, second)
            .map_err(EmbedError::Inference)
    }
}

/// Through a candle model: right-padded to the longest input with a mask, then the padding
/// rows dropped.
fn padded(
    seqs: &[&[u32]],
    hidden: usize,
    device: &Device,
    forward: impl Fn(&Tensor, &Tensor) -> Result<Tensor>,
) -> Result<Vec<f32>> {
    let b = seqs.len();
    let seq = seqs.iter().map(|s| s.len()).max().unwrap_or(0).max(1);
    let mut flat = vec![0u32; b * seq];
    let mut mask = vec![0u32; b * seq];
    for (row, s) in seqs.iter().enumerate() {
        flat[row * seq..row * seq + s.len()].copy_from_slice(s);
        mask[row * seq..row * seq + s.len()].fill(1);
    }
    let ids = Tensor::from_vec(flat, (b, seq), device)?;
    let mask = Tensor::from_vec(mask, (b, seq), device)?;
    let out: Vec<f32> = forward(&ids, &mask)?.flatten_all()?.to_vec1()?;
    let mut packed = Vec::with_capacity(seqs.iter().map(|s| s.len()).sum::<usize>() * hidden);
    for (row, s) in seqs.iter().enumerate() {
        packed.extend_from_slice(&out[row * seq * hidden..(row * seq + s.len()) * hidden]);
    }
    Ok(packed)
}
