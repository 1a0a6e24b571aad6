//! The store's model as the engine sees it: texts in, [`UnitVector`]s out. The one place an
//! embedder's output, or a vector a caller hands in, becomes a unit vector (normalised once;
//! a model's unit output is kept bit for bit), so nothing downstream normalises again.

use memloop_index::UnitVector;

use super::Inner;
use crate::error::Result;
use crate::invalid::InvalidInput;

/// The fewest words a sentence needs for its own vector to be kept: "Hey Mel!" or "Thanks."
/// matches too much to speak for a memory.
pub(crate) const SENTENCE_MIN_WORDS: usize = 3;

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

    /// The unit document vectors of `texts`, in order, each with the vectors of its
    /// sentences of at least [`SENTENCE_MIN_WORDS`] words when the embedder pooled it from
    /// several (none otherwise: its pooled vector stands for it).
    pub(crate) fn embed_documents_with_sentences(
        &self,
        texts: &[&str],
    ) -> Result<Vec<(UnitVector, Vec<Vec<f32>>)>> {
        let embedded = self.embedder.embed_documents_with_sentences(texts)?;
        if embedded.len() != texts.len() {
            return Err(InvalidInput::Vector(format!(
                "the embedder returned {} vectors for {} texts",
                embedded.len(),
                texts.len()
            ))
            .into());
        }
        let mut out = Vec::with_capacity(embedded.len());
        for (i, d) in embedded.into_iter().enumerate() {
            let at = |e: InvalidInput| e.at(format!("the embedding of text {i}"));
            let pooled = self.unit(d.pooled).map_err(at)?;
            let mut sentences = Vec::new();
            for s in d.sentences {
                if s.words >= SENTENCE_MIN_WORDS {
                    sentences.push(self.unit(s.vector).map_err(at)?.into_vec());
                }
            }
            out.push((pooled, sentences));
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
