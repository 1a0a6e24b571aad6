//! A memory's best sentence, for the fusion: before the reranker, each candidate learns its
//! best sentence's cosine with the query (`explain.sentence`), and the default fusion
//! ([`crate::retrieve::ScoreFusion`]) adds half of it below its first places.
//!
//! A memory's one vector is the mean of its sentences' (`DocumentPooling::Sentences`): a
//! question paraphrasing one sentence of a long turn ("By the way, my 10-gallon tank …")
//! meets that sentence diluted by the others. Its sentences' own vectors, kept at write time
//! (`store::sentences`), give the cosine with that sentence alone. A memory without them (a
//! text of one sentence, whose pooled vector is that sentence's; a store written before they
//! were kept; a memory imported or pulled from another device) counts its pooled cosine.
//!
//! Measured on LongMemEval-S dev and LoCoMo (BENCHMARKS.md). A caller's reranker sees
//! `explain.sentence` too.

use memloop_index::UnitVector;
use rustc_hash::FxHashMap;

use crate::error::Result;
use crate::memory::Memory;
use crate::vocabulary::Hit;

impl Memory {
    /// Sets each hit's `explain.sentence`: its best sentence's cosine with `vector`; its
    /// pooled cosine for a memory without sentence vectors (a text of one sentence, whose
    /// pooled vector is that sentence's, or one imported or pulled).
    ///
    /// # Errors
    /// [`crate::Error::Store`], or [`crate::Error::Corrupt`] for a stored row that does not
    /// decode.
    pub(super) fn explain_sentences(&self, hits: &mut [Hit], vector: &UnitVector) -> Result<()> {
        let ids: Vec<_> = hits.iter().map(|h| h.item.id).collect();
        let stored: FxHashMap<_, _> = self
            .inner
            .store
            .sentences(&ids, vector.as_slice().len())?
            .into_iter()
            .collect();
        for h in hits.iter_mut() {
            h.explain.sentence = stored
                .get(&h.item.id)
                .and_then(|s| s.best_cosine(vector.as_slice()))
                .or(h.explain.vector);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use memloop_embed::{DocumentVectors, SentenceVector};

    use crate::store::Tx;
    use crate::{HashingEmbedder, Memory, NewMemory, Options, Query, Strategy, TextEmbedder};

    /// The hashing embedder, pooling a text by its sentences as the model does: each
    /// sentence hashed alone, the text the normalised mean. `named` says so in its
    /// fingerprint (the store keeps sentence vectors only for such a model).
    struct BySentences {
        named: bool,
    }

    fn hashed(text: &str) -> Vec<f32> {
        HashingEmbedder::new(64).embed_query(text).unwrap()
    }

    impl TextEmbedder for BySentences {
        fn fingerprint(&self) -> String {
            let pooling = if self.named { "+sentences" } else { "" };
            format!("hashing-test{pooling}:0:64")
        }
        fn dim(&self) -> usize {
            64
        }
        fn embed_documents(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f32>>> {
            Ok(self
                .embed_documents_with_sentences(texts)?
                .into_iter()
                .map(|d| d.pooled)
                .collect())
        }
        fn embed_documents_with_sentences(
            &self,
            texts: &[&str],
        ) -> crate::Result<Vec<DocumentVectors>> {
            Ok(texts
                .iter()
                .map(|t| {
                    let pieces = memloop_embed::sentences(t);
                    if pieces.len() < 2 {
                        return DocumentVectors {
                            pooled: hashed(t),
                            sentences: Vec::new(),
                        };
                    }
                    let sentences: Vec<SentenceVector> = pieces
                        .iter()
                        .map(|p| SentenceVector {
                            words: p.split_whitespace().count(),
                            vector: hashed(p),
                        })
                        .collect();
                    let mut pooled = vec![0.0f32; 64];
                    for s in &sentences {
                        for (o, x) in pooled.iter_mut().zip(&s.vector) {
                            *o += x;
                        }
                    }
                    let n = pooled.iter().map(|x| x * x).sum::<f32>().sqrt();
                    pooled.iter_mut().for_each(|x| *x /= n);
                    DocumentVectors { pooled, sentences }
                })
                .collect())
        }
        fn embed_query(&self, text: &str) -> crate::Result<Vec<f32>> {
            Ok(hashed(text))
        }
        fn count_tokens(&self, text: &str) -> usize {
            text.split_whitespace().count()
        }
    }

    /// A new temporary directory; under WebAssembly (Node's WASI runs these tests) in the
    /// `/tmp` the runner gives, the standard library having none.
    fn tempdir() -> tempfile::TempDir {
        #[cfg(target_family = "wasm")]
        let _ = tempfile::env::override_temp_dir(std::path::Path::new("/tmp"));
        tempfile::tempdir().unwrap()
    }

    fn open(dir: &std::path::Path, named: bool) -> Memory {
        Memory::open(dir, Options::with_embedder(Arc::new(BySentences { named }))).unwrap()
    }

    const LONG: &str = "We walked along the river all morning. The bakery had sold out of rye \
                        bread. My aquarium holds forty gallons of water.";
    const QUESTION: &str = "how many gallons does my aquarium hold";

    fn cosine(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    /// The memory of several sentences keeps them (the one of 3 words or fewer not), and
    /// recall explains the best: its cosine is that sentence's (8-bit, within a hundredth),
    /// above its pooled one (the fusion's use of it: `hooks::retrieval`'s tests).
    #[test]
    fn a_memory_of_sentences_is_scored_by_its_best() {
        let dir = tempdir();
        let m = open(dir.path(), true);
        assert!(m.inner.sentences);
        let long = m.remember(NewMemory::new(LONG)).unwrap();
        let short = m
            .remember(NewMemory::new("the aquarium shop sells gravel"))
            .unwrap();
        let kept = m.inner.store.sentences(&[long, short], 64).unwrap();
        assert_eq!(kept.len(), 1, "the one-sentence memory keeps none");
        let hits = m
            .retrieve(&Query::new(QUESTION).k(2), Strategy::RERANK)
            .unwrap();
        let hit = hits.iter().find(|h| h.item.id == long).unwrap();
        let best = cosine(
            &hashed("My aquarium holds forty gallons of water."),
            &hashed(QUESTION),
        );
        let sentence = hit.explain.sentence.expect("explained");
        assert!((sentence - best).abs() < 0.01, "{sentence} against {best}");
        assert!(sentence > hit.explain.vector.unwrap() + 0.1);
        let other = hits.iter().find(|h| h.item.id == short).unwrap();
        assert_eq!(
            other.explain.sentence, other.explain.vector,
            "its one sentence"
        );
        assert!(m.admin().check().unwrap().is_sound());
    }

    /// A reranker that does not read the sentence (the fusion at weight 0, reciprocal-rank
    /// fusion) gets none: the rows are not read, as before sentence vectors were kept.
    #[test]
    fn a_reranker_that_reads_no_sentence_gets_none() {
        use crate::hooks::{FusionReranker, ScoreFusion};
        let rerankers: [Arc<dyn crate::hooks::Reranker>; 2] = [
            Arc::new(ScoreFusion {
                sentence_weight: 0.0,
                ..ScoreFusion::default()
            }),
            Arc::new(FusionReranker::default()),
        ];
        for reranker in rerankers {
            let dir = tempdir();
            let mut options = Options::with_embedder(Arc::new(BySentences { named: true }));
            options.hooks.reranker = reranker;
            let m = Memory::open(dir.path(), options).unwrap();
            let long = m.remember(NewMemory::new(LONG)).unwrap();
            assert_eq!(m.inner.store.sentences(&[long], 64).unwrap().len(), 1);
            let hits = m
                .retrieve(&Query::new(QUESTION).k(1), Strategy::RERANK)
                .unwrap();
            assert_eq!(hits[0].item.id, long);
            assert_eq!(hits[0].explain.sentence, None);
        }
    }

    /// Forgetting a memory takes its sentence vectors with it; a new text makes a new
    /// version with its own.
    #[test]
    fn forget_and_update_keep_the_rows_in_step() {
        let dir = tempdir();
        let m = open(dir.path(), true);
        let a = m.remember(NewMemory::new(LONG)).unwrap();
        let b = m
            .remember(NewMemory::new(
                "One short line here. Another short line there.",
            ))
            .unwrap();
        assert_eq!(m.inner.store.sentences(&[a, b], 64).unwrap().len(), 2);
        m.forget(a).unwrap();
        assert!(m.inner.store.sentences(&[a], 64).unwrap().is_empty());
        let update = crate::requests::Update {
            text: Some("A third line now. And a fourth line too.".into()),
            ..Default::default()
        };
        let b2 = m.update(b, update).unwrap();
        assert_ne!(b2, b);
        assert_eq!(m.inner.store.sentences(&[b2], 64).unwrap().len(), 1);
        assert!(m.admin().check().unwrap().is_sound());
    }

    /// In an encrypted store the sentence vectors are sealed: no 16-byte run of a row as it
    /// would be stored plain is in any file, and they still score after a reopen.
    #[test]
    fn an_encrypted_store_seals_its_sentence_vectors() {
        let dir = tempdir();
        let store = dir.path().join("store");
        let options = || Options {
            encryption: Some(crate::Encryption::key_file(dir.path().join("key"))),
            ..Options::with_embedder(Arc::new(BySentences { named: true }))
        };
        let m = Memory::open(&store, options()).unwrap();
        let id = m.remember(NewMemory::new(LONG)).unwrap();
        m.close().unwrap();
        let pieces = memloop_embed::sentences(LONG);
        let vectors: Vec<Vec<f32>> = pieces
            .iter()
            .filter(|p| p.split_whitespace().count() >= 3)
            .map(|p| hashed(p))
            .collect();
        let row = crate::store::sentences::SentenceVectors::encode(&vectors);
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&store).unwrap() {
            files.push(std::fs::read(entry.unwrap().path()).unwrap());
        }
        // Every 16 bytes of the codes (past the count and the scales) with 6 non-zero bytes or
        // more (a run of mostly zeros is in any file).
        let runs: Vec<&[u8]> = row[1 + 4 * vectors.len()..]
            .windows(16)
            .filter(|r| r.iter().filter(|&&b| b != 0).count() >= 6)
            .collect();
        assert!(!runs.is_empty());
        for run in runs {
            assert!(
                files.iter().all(|f| !f.windows(16).any(|w| w == run)),
                "a plain run of the row is on disk"
            );
        }
        let m = Memory::open(&store, options()).unwrap();
        assert_eq!(m.inner.store.sentences(&[id], 64).unwrap().len(), 1);
        let hits = m
            .retrieve(&Query::new(QUESTION).k(1), Strategy::RERANK)
            .unwrap();
        assert!(hits[0].explain.sentence > hits[0].explain.vector);
    }

    /// A model that does not pool by sentences, and a store of format 1, keep no sentence
    /// vectors and rank by the fusion alone, as before them.
    #[test]
    fn without_sentence_pooling_or_before_format_2_nothing_changes() {
        let dir = tempdir();
        let m = open(dir.path(), false);
        assert!(!m.inner.sentences);
        let id = m.remember(NewMemory::new(LONG)).unwrap();
        assert!(m.inner.store.sentences(&[id], 64).unwrap().is_empty());
        let hits = m
            .retrieve(&Query::new(QUESTION).k(1), Strategy::RERANK)
            .unwrap();
        assert_eq!(hits[0].explain.sentence, None);
        assert_eq!(Some(hits[0].score), hits[0].explain.fused);
        drop(m);

        let dir = tempdir();
        let m = open(dir.path(), true);
        let mut tx = Tx::begin(&m.inner.store, true).unwrap();
        tx.set_meta("version", &1u64.to_le_bytes()).unwrap();
        tx.commit().unwrap();
        m.close().unwrap();
        let m = open(dir.path(), true);
        assert!(!m.inner.sentences, "a format 1 store stays as it was");
        let id = m.remember(NewMemory::new(LONG)).unwrap();
        assert!(m.inner.store.sentences(&[id], 64).unwrap().is_empty());
        let hits = m
            .retrieve(&Query::new(QUESTION).k(1), Strategy::RERANK)
            .unwrap();
        assert_eq!(hits[0].explain.sentence, None);
    }
}
