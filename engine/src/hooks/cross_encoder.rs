//! [`CrossEncoderReranker`]: a [`Reranker`] that reads the query with each of the best
//! candidates through a cross-encoder (memloop-embed's [`CrossEncoder`], on memloop's own
//! encoder), the second stage of retrieve-then-rerank.

use std::path::Path;
use std::sync::Arc;

use memloop_embed::{CrossEncoder, CrossEncoderOptions};

use super::retrieval::{Reranker, ScoreFusion};
use crate::error::Result;
use crate::vocabulary::Hit;

/// Orders the candidates in two stages: [`ScoreFusion`] first, then a cross-encoder over the
/// fused order's best `depth`, which it places above the rest by its relevance.
///
/// Scores: a candidate the model read scores `2 + sigmoid(logit)`, in (2, 3); the others keep
/// their fused score, in [0, 2] ([`ScoreFusion`]'s first places score above 1), below them.
/// A cross-encoder such as `cross-encoder/ms-marco-MiniLM-L-6-v2` (MiniLM's architecture)
/// costs about a document embedding per candidate it reads: `depth` bounds a recall's cost.
#[derive(Clone)]
pub struct CrossEncoderReranker {
    model: Arc<CrossEncoder>,
    /// How many of the fused order's best candidates the model reads (default 32).
    pub depth: usize,
    /// The first stage.
    pub first: ScoreFusion,
}

impl std::fmt::Debug for CrossEncoderReranker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CrossEncoderReranker")
            .field("model", &self.model.dir())
            .field("depth", &self.depth)
            .field("first", &self.first)
            .finish()
    }
}

impl CrossEncoderReranker {
    /// The default depth: the fused order's best 32 candidates are read.
    pub const DEFAULT_DEPTH: usize = 32;

    /// Reranks with `model` over the default depth, after the default fusion.
    pub fn new(model: Arc<CrossEncoder>) -> Self {
        CrossEncoderReranker {
            model,
            depth: Self::DEFAULT_DEPTH,
            first: ScoreFusion::default(),
        }
    }

    /// Loads the cross-encoder in `dir` (config.json, tokenizer.json, model.safetensors of a
    /// one-label BERT sequence classifier) with its default options.
    ///
    /// # Errors
    /// [`crate::Error::Embed`] naming the file that is missing, malformed or not a cross-encoder's.
    pub fn load(dir: &Path) -> Result<Self> {
        let model = CrossEncoder::load(dir, CrossEncoderOptions::default())?;
        Ok(Self::new(Arc::new(model)))
    }
}

impl Reranker for CrossEncoderReranker {
    fn rerank(&self, query: &str, candidates: &[Hit]) -> Result<Vec<f32>> {
        let mut scores = self.first.rerank(query, candidates)?;
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        order.truncate(self.depth);
        let texts: Vec<&str> = order
            .iter()
            .map(|&i| candidates[i].item.text.as_str())
            .collect();
        let logits = self.model.score(query, &texts)?;
        for (&i, logit) in order.iter().zip(logits) {
            scores[i] = 2.0 + 1.0 / (1.0 + libm::expf(-logit));
        }
        Ok(scores)
    }
}
