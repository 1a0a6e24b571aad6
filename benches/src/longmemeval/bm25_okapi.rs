//! The official flat BM25 baseline of LongMemEval: `rank_bm25.BM25Okapi` with its defaults
//! (k1 = 1.5, b = 0.75, ε = 0.25: a term whose idf `ln((N − df + ½)/(df + ½))` is negative gets
//! ε times the average idf) over texts split on whitespace, case kept (or lower-cased, the
//! variant the anchors also report).

use std::collections::HashMap;

const K1: f64 = 1.5;
const B: f64 = 0.75;
const EPSILON: f64 = 0.25;

/// A BM25Okapi index over documents numbered from 0.
pub struct Bm25Okapi {
    docs: Vec<HashMap<String, f64>>,
    lens: Vec<f64>,
    avg: f64,
    idf: HashMap<String, f64>,
    lowercase: bool,
}

impl Bm25Okapi {
    /// Indexes `docs`, split on whitespace (lower-cased first when `lowercase`).
    pub fn new<'a>(docs: impl IntoIterator<Item = &'a str>, lowercase: bool) -> Bm25Okapi {
        let mut tfs = Vec::new();
        let mut lens = Vec::new();
        let mut df: HashMap<String, f64> = HashMap::new();
        for d in docs {
            let mut tf: HashMap<String, f64> = HashMap::new();
            let tokens = split(d, lowercase);
            lens.push(tokens.len() as f64);
            for t in tokens {
                *tf.entry(t).or_default() += 1.0;
            }
            for t in tf.keys() {
                *df.entry(t.clone()).or_default() += 1.0;
            }
            tfs.push(tf);
        }
        let n = tfs.len() as f64;
        let avg = lens.iter().sum::<f64>() / n.max(1.0);
        let mut idf: HashMap<String, f64> = df
            .iter()
            .map(|(t, f)| (t.clone(), ((n - f + 0.5) / (f + 0.5)).ln()))
            .collect();
        let average = idf.values().sum::<f64>() / (idf.len().max(1) as f64);
        for v in idf.values_mut() {
            if *v < 0.0 {
                *v = EPSILON * average;
            }
        }
        Bm25Okapi {
            docs: tfs,
            lens,
            avg,
            idf,
            lowercase,
        }
    }

    /// The top `k` documents for `query`, best first (ties by document order, as a stable
    /// sort of `get_scores` gives).
    pub fn search(&self, query: &str, k: usize) -> Vec<usize> {
        let terms = split(query, self.lowercase);
        let mut scored: Vec<(f64, usize)> = self
            .docs
            .iter()
            .enumerate()
            .map(|(i, tf)| {
                let norm = K1 * (1.0 - B + B * self.lens[i] / self.avg);
                let s = terms
                    .iter()
                    .map(|t| {
                        let f = tf.get(t).copied().unwrap_or(0.0);
                        self.idf.get(t).copied().unwrap_or(0.0) * f * (K1 + 1.0) / (f + norm)
                    })
                    .sum::<f64>();
                (s, i)
            })
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.into_iter().take(k).map(|(_, i)| i).collect()
    }
}

fn split(text: &str, lowercase: bool) -> Vec<String> {
    text.split_whitespace()
        .map(|w| {
            if lowercase {
                w.to_lowercase()
            } else {
                w.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_the_matching_document_first() {
        let docs = ["the cat sat", "a dog ran", "the cat and the dog"];
        let bm = Bm25Okapi::new(docs, false);
        assert_eq!(bm.search("dog ran", 1), vec![1]);
        assert_eq!(Bm25Okapi::new(docs, true).search("DOG RAN", 1), vec![1]);
        assert_eq!(bm.search("DOG", 3).len(), 3);
    }
}
