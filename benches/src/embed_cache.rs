//! An embedding cache for benchmarks: a [`TextEmbedder`] in front of the model that keeps every
//! vector it computed in a file keyed by the model's fingerprint, each by the SHA-256 of its
//! text (and whether it was embedded as a query), so that a second run over LongMemEval-S (whose
//! sessions recur across questions) embeds nothing. The file is a sequence of records
//! `[kind u8][sha256 32 bytes][dim × f32 LE]` (kind 0 a document, 1 a query, 2 a sentence of a
//! document embedded alone); a torn tail (a run killed mid-append) is ignored.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use memloop::model::{sentences, DocumentVectors, SentenceVector};
use memloop::TextEmbedder;
use parking_lot::Mutex;
use sha2::{Digest, Sha256};

/// How many texts were embedded and how many read from the cache.
#[derive(Debug, Default, Clone, Copy)]
pub struct CacheCounts {
    /// Computed by the model.
    pub embedded: usize,
    /// Found in the cache.
    pub cached: usize,
}

/// The caching embedder.
pub struct CachingEmbedder {
    inner: Arc<dyn TextEmbedder>,
    file: Option<PathBuf>,
    map: Mutex<HashMap<Key, Vec<f32>>>,
    counts: Mutex<CacheCounts>,
}

/// A cached text: whether it was embedded as a query (1) or a document (0), and its SHA-256.
type Key = (u8, [u8; 32]);

fn key(kind: u8, text: &str) -> Key {
    (kind, Sha256::digest(text.as_bytes()).into())
}

impl CachingEmbedder {
    /// `inner` with its cache in `dir` (none when `None`): the file named by a hash of the
    /// model's fingerprint, read now.
    pub fn new(inner: Arc<dyn TextEmbedder>, dir: Option<&Path>) -> Result<CachingEmbedder> {
        let dim = inner.dim();
        let fingerprint: [u8; 32] = Sha256::digest(inner.fingerprint().as_bytes()).into();
        let name: String = fingerprint[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let file = dir.map(|d| d.join(format!("texts-{name}.vec")));
        let mut map = HashMap::new();
        if let Some(bytes) = file.as_ref().and_then(|f| std::fs::read(f).ok()) {
            let record = 1 + 32 + dim * 4;
            for r in bytes.chunks_exact(record) {
                let mut hash = [0u8; 32];
                hash.copy_from_slice(&r[1..33]);
                let v = r[33..]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                map.insert((r[0], hash), v);
            }
        }
        Ok(CachingEmbedder {
            inner,
            file,
            map: Mutex::new(map),
            counts: Mutex::new(CacheCounts::default()),
        })
    }

    /// The counts so far.
    pub fn counts(&self) -> CacheCounts {
        *self.counts.lock()
    }

    fn keep(&self, new: &[(Key, Vec<f32>)]) -> memloop::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut bytes = Vec::new();
        for ((kind, hash), v) in new {
            bytes.push(*kind);
            bytes.extend_from_slice(hash);
            bytes.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        }
        let write = || -> std::io::Result<()> {
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)?;
            f.write_all(&bytes)
        };
        write().map_err(|source| memloop::Error::Io {
            path: file.clone(),
            op: "append to the embedding cache",
            source,
        })
    }

    fn cached_or(
        &self,
        kind: u8,
        texts: &[&str],
        compute: impl FnOnce(&[&str]) -> memloop::Result<Vec<Vec<f32>>>,
    ) -> memloop::Result<Vec<Vec<f32>>> {
        let keys: Vec<_> = texts.iter().map(|t| key(kind, t)).collect();
        let missing: Vec<usize> = {
            let map = self.map.lock();
            (0..texts.len())
                .filter(|&i| !map.contains_key(&keys[i]))
                .collect()
        };
        if !missing.is_empty() {
            let todo: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let vectors = compute(&todo)?;
            let new: Vec<_> = missing.iter().map(|&i| keys[i]).zip(vectors).collect();
            self.keep(&new)?;
            self.map.lock().extend(new);
        }
        let mut counts = self.counts.lock();
        counts.embedded += missing.len();
        counts.cached += texts.len() - missing.len();
        let map = self.map.lock();
        Ok(keys.iter().map(|k| map[k].clone()).collect())
    }
}

impl TextEmbedder for CachingEmbedder {
    fn fingerprint(&self) -> String {
        self.inner.fingerprint()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed_documents(&self, texts: &[&str]) -> memloop::Result<Vec<Vec<f32>>> {
        self.cached_or(0, texts, |t| self.inner.embed_documents(t))
    }
    fn embed_documents_with_sentences(
        &self,
        texts: &[&str],
    ) -> memloop::Result<Vec<DocumentVectors>> {
        // A text of several sentences is cached as its pooled vector (kind 0) and each
        // sentence's (kind 2, by the sentence's text); one missing part embeds the text again.
        let split: Vec<Vec<&str>> = texts.iter().map(|t| sentences(t)).collect();
        let missing: Vec<usize> = {
            let map = self.map.lock();
            (0..texts.len())
                .filter(|&i| {
                    split[i].len() > 1
                        && (!map.contains_key(&key(0, texts[i]))
                            || split[i].iter().any(|p| !map.contains_key(&key(2, p))))
                })
                .collect()
        };
        if !missing.is_empty() {
            let todo: Vec<&str> = missing.iter().map(|&i| texts[i]).collect();
            let mut new = Vec::new();
            for (&i, d) in missing
                .iter()
                .zip(self.inner.embed_documents_with_sentences(&todo)?)
            {
                new.push((key(0, texts[i]), d.pooled));
                for (p, s) in split[i].iter().zip(d.sentences) {
                    new.push((key(2, p), s.vector));
                }
            }
            self.keep(&new)?;
            self.map.lock().extend(new);
            self.counts.lock().embedded += missing.len();
        }
        let pooled = self.embed_documents(texts)?;
        let map = self.map.lock();
        Ok(pooled
            .into_iter()
            .zip(&split)
            .map(|(pooled, pieces)| DocumentVectors {
                pooled,
                sentences: if pieces.len() > 1 {
                    pieces
                        .iter()
                        .map(|p| SentenceVector {
                            words: p.split_whitespace().count(),
                            vector: map[&key(2, p)].clone(),
                        })
                        .collect()
                } else {
                    Vec::new()
                },
            })
            .collect())
    }
    fn embed_query(&self, text: &str) -> memloop::Result<Vec<f32>> {
        let mut v = self.cached_or(1, &[text], |t| {
            t.iter().map(|q| self.inner.embed_query(q)).collect()
        })?;
        Ok(v.remove(0))
    }
    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
}

/// `dir` with a leading `~/` expanded; `none` for no cache.
pub fn dir_of(arg: &str) -> Result<Option<PathBuf>> {
    Ok(match arg {
        "none" => None,
        a => Some(match a.strip_prefix("~/") {
            Some(rest) => PathBuf::from(std::env::var("HOME").context("HOME")?).join(rest),
            None => PathBuf::from(a),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_embedder_reads_what_the_first_computed() {
        let dir = tempfile::tempdir().unwrap();
        let model: Arc<dyn TextEmbedder> = Arc::new(memloop::HashingEmbedder::new(8));
        let a = CachingEmbedder::new(model.clone(), Some(dir.path())).unwrap();
        let first = a.embed_documents(&["x", "y", "x"]).unwrap();
        assert_eq!(a.counts().embedded, 3);
        let b = CachingEmbedder::new(model.clone(), Some(dir.path())).unwrap();
        assert_eq!(
            b.embed_documents(&["y", "x"]).unwrap(),
            vec![first[1].clone(), first[0].clone()]
        );
        assert_eq!((b.counts().embedded, b.counts().cached), (0, 2));
        assert_eq!(b.embed_query("x").unwrap(), model.embed_query("x").unwrap());
        assert_eq!(b.counts().embedded, 1);
    }
}
