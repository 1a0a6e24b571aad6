//! Plain Okapi BM25, the textbook baseline `retrieval-bench` runs beside memloop: lower-cased
//! alphanumeric tokens, a short stop list, no stemming, k1 = 1.2, b = 0.75,
//! idf = ln(1 + (N − df + ½)/(df + ½)).

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;
const STOP: [&str; 25] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "he", "in", "is", "it",
    "its", "of", "on", "that", "the", "to", "was", "were", "will", "with",
];

fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| !STOP.contains(&w.as_str()))
        .collect()
}

/// A BM25 index over documents numbered from 0.
pub struct PlainBm25 {
    postings: HashMap<String, Vec<(usize, f64)>>,
    lens: Vec<f64>,
    avg: f64,
}

impl PlainBm25 {
    /// Indexes `docs`.
    pub fn new<'a>(docs: impl IntoIterator<Item = &'a str>) -> PlainBm25 {
        let mut postings: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
        let mut lens = Vec::new();
        for (i, d) in docs.into_iter().enumerate() {
            let t = tokens(d);
            lens.push(t.len() as f64);
            let mut tf: HashMap<String, f64> = HashMap::new();
            for w in t {
                *tf.entry(w).or_default() += 1.0;
            }
            for (w, f) in tf {
                postings.entry(w).or_default().push((i, f));
            }
        }
        let avg = lens.iter().sum::<f64>() / lens.len().max(1) as f64;
        PlainBm25 {
            postings,
            lens,
            avg,
        }
    }

    /// The `k` best documents for `query`, best first (ties by number).
    pub fn search(&self, query: &str, k: usize) -> Vec<usize> {
        let n = self.lens.len() as f64;
        let mut terms = tokens(query);
        terms.sort();
        terms.dedup();
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for t in terms {
            let Some(p) = self.postings.get(&t) else {
                continue;
            };
            let df = p.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(i, f) in p {
                let norm = K1 * (1.0 - B + B * self.lens[i] / self.avg);
                *scores.entry(i).or_default() += idf * f * (K1 + 1.0) / (f + norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(k).map(|(i, _)| i).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_the_document_with_the_rare_word_first() {
        let ix = PlainBm25::new(["the cat sat", "the dog sat on the mat", "a cat and a dog"]);
        assert_eq!(ix.search("mat", 3), [1]);
        assert_eq!(ix.search("cat dog", 1), [2]);
        assert!(ix.search("the", 3).is_empty(), "stop words match nothing");
    }
}
