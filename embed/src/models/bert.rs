//! BERT-family encoders through candle-transformers' `bert` (absolute positions, GELU).

use candle_core::Tensor;
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};

use crate::error::Result;

pub(crate) struct Bert {
    model: BertModel,
}

impl Bert {
    pub(crate) fn load(vb: VarBuilder<'static>, config: &Config) -> candle_core::Result<Self> {
        Ok(Bert {
            model: BertModel::load(vb, config)?,
        })
    }

    pub(crate) fn forward(&self, ids: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let type_ids = ids.zeros_like()?;
        Ok(self.model.forward(ids, &type_ids, Some(mask))?)
    }
}
