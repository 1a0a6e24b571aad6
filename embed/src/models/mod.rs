//! One file per architecture; each turns token ids into last hidden states.

mod bert;
mod nomic_bert;

use candle_core::Tensor;
use candle_nn::VarBuilder;

use crate::config::ModelConfig;
use crate::error::Result;

/// A loaded encoder.
pub(crate) enum Encoder {
    Bert(bert::Bert),
    NomicBert(nomic_bert::NomicBert),
}

impl Encoder {
    pub(crate) fn load(config: &ModelConfig, vb: VarBuilder<'static>) -> candle_core::Result<Self> {
        Ok(match config {
            ModelConfig::Bert(c) => Encoder::Bert(bert::Bert::load(vb, c)?),
            ModelConfig::NomicBert(c) => Encoder::NomicBert(nomic_bert::NomicBert::load(vb, c)?),
        })
    }

    /// Last hidden states `(batch, seq, hidden)` for right-padded `ids` with `mask`.
    pub(crate) fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        match self {
            Encoder::Bert(m) => m.forward(ids, mask),
            Encoder::NomicBert(m) => m.forward(ids, mask),
        }
    }

    /// Text prefixes the architecture's training used for (documents, queries).
    pub(crate) fn prefixes(&self) -> (&'static str, &'static str) {
        match self {
            Encoder::Bert(_) => ("", ""),
            Encoder::NomicBert(_) => ("search_document: ", "search_query: "),
        }
    }

    /// Whether Matryoshka output dimensions are defined for this architecture.
    pub(crate) fn matryoshka(&self) -> bool {
        matches!(self, Encoder::NomicBert(_))
    }
}
