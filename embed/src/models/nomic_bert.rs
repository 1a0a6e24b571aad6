//! nomic-bert encoders (nomic-embed-text) through candle-transformers' `nomic_bert`: rotary
//! position embeddings, SwiGLU, post-norm. Token type 0 is added, as nomic's code does.

use candle_core::Tensor;
use candle_nn::VarBuilder;
use candle_transformers::models::nomic_bert::{Config, NomicBertModel};

use crate::error::Result;

pub(crate) struct NomicBert {
    model: NomicBertModel,
}

impl NomicBert {
    pub(crate) fn load(vb: VarBuilder<'static>, config: &Config) -> candle_core::Result<Self> {
        Ok(NomicBert {
            model: NomicBertModel::load(vb, config)?,
        })
    }

    pub(crate) fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let type_ids = ids.zeros_like()?;
        Ok(self.model.forward(ids, Some(&type_ids), Some(mask))?)
    }
}
