//! The lexical side of retrieval, without the store or the handle: the text analyzer
//! (`analyzer.rs`: tokens, stop words, stems) and the in-memory BM25 index over the live
//! memories (`index.rs`), kept per user so no user's statistics reach another's scores.

mod analyzer;
mod index;

pub(crate) use analyzer::Analyzer;
pub(crate) use index::LexicalIndex;
