//! Reading a model directory's config.json: the architecture comes from `model_type`, through a
//! serde-tagged enum (as in text-embeddings-inference).

use std::path::Path;

use serde::Deserialize;

use crate::error::{EmbedError, Result};

/// The architecture and its configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "model_type")]
pub(crate) enum ModelConfig {
    /// BERT family (MiniLM, BGE, E5, GTE …).
    #[serde(rename = "bert")]
    Bert(candle_transformers::models::bert::Config),
    /// nomic-bert (nomic-embed-text): rotary positions, SwiGLU.
    #[serde(rename = "nomic_bert")]
    NomicBert(candle_transformers::models::nomic_bert::Config),
}

impl ModelConfig {
    pub(crate) fn read(path: &Path) -> Result<Self> {
        Ok(Self::read_with_json(path)?.0)
    }

    /// As [`ModelConfig::read`], with the file's JSON (for the fields a caller reads beside
    /// the architecture's, such as a classifier's labels).
    pub(crate) fn read_with_json(path: &Path) -> Result<(Self, serde_json::Value)> {
        let text = std::fs::read_to_string(path).map_err(|e| EmbedError::MissingFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| EmbedError::MalformedFile {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        let found = value
            .get("model_type")
            .and_then(|t| t.as_str())
            .unwrap_or("");
        if !["bert", "nomic_bert"].contains(&found) {
            let found = if found.is_empty() {
                "(none)".to_string()
            } else {
                found.to_string()
            };
            return Err(EmbedError::UnsupportedArchitecture {
                path: path.to_path_buf(),
                found,
            });
        }
        let config =
            serde_json::from_value(value.clone()).map_err(|e| EmbedError::MalformedFile {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })?;
        Ok((config, value))
    }

    /// Hidden size (the pooled embedding's dimension).
    pub(crate) fn hidden_size(&self) -> usize {
        match self {
            ModelConfig::Bert(c) => c.hidden_size,
            ModelConfig::NomicBert(c) => c.n_embd,
        }
    }

    /// Longest input the architecture can take, in tokens.
    pub(crate) fn max_positions(&self) -> usize {
        match self {
            ModelConfig::Bert(c) => c.max_position_embeddings,
            // candle implements rotary embeddings without nomic's NTK scaling, which nomic uses
            // past its 2048 trained positions: cap there so results match the reference.
            ModelConfig::NomicBert(c) => c.n_positions.min(2048),
        }
    }
}

/// `max_seq_length` from sentence-transformers' `sentence_bert_config.json`, if present.
pub(crate) fn sentence_bert_max_len(dir: &Path) -> Result<Option<usize>> {
    let path = dir.join("sentence_bert_config.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(None);
    };
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| EmbedError::MalformedFile {
            path: path.clone(),
            reason: e.to_string(),
        })?;
    Ok(value
        .get("max_seq_length")
        .and_then(serde_json::Value::as_u64)
        .map(|n| n as usize))
}
