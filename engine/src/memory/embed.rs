//! The store's model as the engine sees it: texts in, [`UnitVector`]s out. The one place an
//! embedder's output, or a vector a caller hands in, becomes a unit vector (normalised once;
//! a model's unit output is kept bit for bit), so nothing downstream normalises again.

use memloop_index::UnitVector;

use super::Inner;
use crate::error::Result;
use crate::invalid::InvalidInput;

impl Inner {
    /// The unit query vector of `text`.
    pub(crate) fn embed_query(&self, text: &str) -> Result<UnitVector> {
        let v = self.embedder.embed_query(text)?;
        Ok(self.unit(v)?)
    }

    /// The unit document vectors of `texts`, in order.
    pub(crate) fn embed_documents(&self, texts: &[&str]) -> Result<Vec<UnitVector>> {
        let vectors = self.embedder.embed_documents(texts)?;
        let mut out = Vec::with_capacity(vectors.len());
        for (i, v) in vectors.into_iter().enumerate() {
            out.push(
                self.unit(v)
                    .map_err(|e| e.at(format!("the embedding of text {i}")))?,
            );
        }
        Ok(out)
    }

    /// The unit document vector of `text`.
    pub(crate) fn embed_one(&self, text: &str) -> Result<UnitVector> {
        Ok(self.embed_documents(&[text])?.remove(0))
    }

    /// `v` as a unit vector of this store's dimension.
    pub(crate) fn unit(&self, v: Vec<f32>) -> Result<UnitVector, InvalidInput> {
        UnitVector::with_dim(v, self.embedder.dim())
            .map_err(|e| InvalidInput::Vector(e.to_string()))
    }
}
