//! Integration tests of `memloop-embed` against reference outputs: sentence-transformers for
//! all-MiniLM-L6-v2 (the real model, fetched by `scripts/fetch-model.sh`), nomic's own PyTorch
//! code for a tiny nomic-bert checkpoint (shipped in `tests/fixtures/nomic-tiny`), Hugging Face's
//! `BertForSequenceClassification` for a tiny cross-encoder the tests build
//! (`tiny_cross_encoder.rs`, reference in `tests/fixtures/cross-encoder-tiny`).

mod common;
mod cross_encoder;
mod errors;
mod int8;
mod minilm;
mod nomic;
mod sentences;
mod tiny_cross_encoder;
