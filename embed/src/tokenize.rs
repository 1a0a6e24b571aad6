//! Tokenisation: truncation at the model's max length, no fixed padding (batches are padded to
//! their own longest input after sorting by length).

use std::path::Path;

use tokenizers::{Tokenizer, TruncationParams};

use crate::error::{EmbedError, Result};

/// Loads `tokenizer.json`, overriding whatever truncation and padding it ships with
/// (all-MiniLM-L6-v2's file says truncate at 128 and pad to 128; sentence-transformers ignores
/// both, and so must we to reproduce its vectors).
pub(crate) fn load(path: &Path, max_len: usize) -> Result<(Tokenizer, Tokenizer)> {
    if let Err(e) = std::fs::metadata(path) {
        return Err(EmbedError::MissingFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        });
    }
    let mut tok = Tokenizer::from_file(path).map_err(|e| EmbedError::MalformedFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    tok.with_padding(None);
    let mut counter = tok.clone();
    counter
        .with_truncation(None)
        .map_err(|e| EmbedError::MalformedFile {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    tok.with_truncation(Some(TruncationParams {
        max_length: max_len,
        ..Default::default()
    }))
    .map_err(|e| EmbedError::MalformedFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    Ok((tok, counter))
}

/// Token ids of each input (special tokens added, truncated).
pub(crate) fn encode(tok: &Tokenizer, inputs: Vec<String>) -> Result<Vec<Vec<u32>>> {
    let enc = tok
        .encode_batch(inputs, true)
        .map_err(|e| EmbedError::Inference(format!("tokenizer: {e}")))?;
    Ok(enc.into_iter().map(|e| e.get_ids().to_vec()).collect())
}

/// Token ids of each (first, second) pair as the model's post-processor joins them (for BERT:
/// `[CLS] first [SEP] second [SEP]`, the longer text cut first), with the position where the
/// second segment (token type 1) starts: the length where there is none.
pub(crate) fn encode_pairs(
    tok: &Tokenizer,
    pairs: Vec<(String, String)>,
) -> Result<Vec<(Vec<u32>, usize)>> {
    let enc = tok
        .encode_batch(pairs, true)
        .map_err(|e| EmbedError::Inference(format!("tokenizer: {e}")))?;
    Ok(enc
        .into_iter()
        .map(|e| {
            let second = e
                .get_type_ids()
                .iter()
                .position(|&t| t != 0)
                .unwrap_or(e.len());
            (e.get_ids().to_vec(), second)
        })
        .collect())
}
