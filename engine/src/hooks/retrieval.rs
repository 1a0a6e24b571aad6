//! The parts of retrieval a caller may replace: the [`Reranker`] and the [`QueryRefiner`], with
//! their defaults ([`ScoreFusion`], [`Rocchio`]) and reciprocal-rank fusion
//! ([`FusionReranker`]) as an alternative.

use crate::error::Result;
use crate::vocabulary::Hit;

/// Orders candidates: one score per candidate, higher is better.
///
/// Candidates carry their vector and lexical scores and ranks in [`Hit::explain`].
pub trait Reranker: Send + Sync {
    /// Scores `candidates` for `query`.
    ///
    /// # Errors
    /// Any error aborts the retrieval and is returned to the caller.
    fn rerank(&self, query: &str, candidates: &[Hit]) -> Result<Vec<f32>>;

    /// Whether it reads `explain.sentence`. The candidates' sentence vectors are read and
    /// scored, in a store that keeps them, only for a reranker that does; for one that says
    /// no, the field stays `None` and a recall costs what it did before sentence vectors.
    /// Default: yes.
    fn uses_sentences(&self) -> bool {
        true
    }
}

/// The default fusion: a weighted sum of the lexical and vector scores, each scaled to [0, 1]
/// over the candidates — BM25 divided by the best BM25 among them, cosine min-max scaled over
/// the vector candidates (a lexical-only candidate below them counts 0) — with one weight for
/// the first places and another for the rest.
///
/// Unlike rank fusion it keeps how far apart the scores are: a memory matching the query's
/// rare words outright is not pulled level with the tenth-best vector match. Chosen by
/// measurement (BENCHMARKS.md): on LoCoMo and SciFact it is at or above both BM25 alone and
/// vector search alone, where RRF with k = 60 fell below BM25 alone on LoCoMo.
///
/// The first [`ScoreFusion::head`] places go to the candidates the lexical-leaning sum
/// ([`ScoreFusion::lexical_weight`], 0.7) ranks best: a question quoting a memory's words
/// finds it there. The rest are ordered by an even sum ([`ScoreFusion::tail_lexical_weight`],
/// 0.5), where a memory that says the same thing in other words (a preference stated long
/// before the question that needs it, the third of five sessions a question counts over)
/// still comes in. On LongMemEval-S dev this lifted turn recall_all@10 from 0.822 to 0.851 and
/// session recall_any@5 from 0.965 to 0.983, with LoCoMo's and SciFact's figures kept; one
/// weight of 0.5 everywhere costs LoCoMo 0.039 nDCG@10 (BENCHMARKS.md).
///
/// Below the head, in a store that keeps its memories' sentence vectors, a candidate's best
/// sentence's cosine with the query (`explain.sentence`) adds [`ScoreFusion::sentence_weight`]
/// (0.5) times itself: a long turn whose one sentence answers is not judged by the mean of all
/// of them. On LongMemEval-S dev this lifted turn recall_all@10 from 0.875 to 0.880 (the
/// preference questions from 0.800 to 0.867) and LoCoMo's R@10 by 0.005; a weight of 1 or more
/// cost LoCoMo, one that replaced the fusion cost it 0.04 (BENCHMARKS.md).
///
/// Scores: a head candidate scores `1 + sentence_weight + its lexical-leaning sum`; the others
/// their even sum (in [0, 1]) plus the sentence's share, below them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreFusion {
    /// The lexical score's weight in the first [`ScoreFusion::head`] places, in [0, 1]; the
    /// vector score gets the rest.
    pub lexical_weight: f32,
    /// How many places the lexical-leaning sum fills (at least the candidates: one weight for
    /// all).
    pub head: usize,
    /// The lexical score's weight below the head, in [0, 1].
    pub tail_lexical_weight: f32,
    /// Below the head, what a candidate's best sentence's cosine with the query
    /// (`explain.sentence`, set in a store that keeps sentence vectors) adds, times this, to
    /// the even sum; 0 for none. Such a store's head scores `1 + this + its sum`, above them;
    /// where no candidate has a sentence explained, the scores are the two sums' alone.
    pub sentence_weight: f32,
}

/// [`ScoreFusion::sentence_weight`] by default: chosen on LongMemEval-S dev and LoCoMo dev
/// (BENCHMARKS.md).
pub const SENTENCE_WEIGHT: f32 = 0.5;

impl Default for ScoreFusion {
    fn default() -> Self {
        ScoreFusion {
            lexical_weight: 0.7,
            head: 4,
            tail_lexical_weight: 0.5,
            sentence_weight: SENTENCE_WEIGHT,
        }
    }
}

impl ScoreFusion {
    /// One weight for every place (the fusion before the head and tail were told apart).
    pub fn uniform(lexical_weight: f32) -> Self {
        ScoreFusion {
            lexical_weight,
            head: usize::MAX,
            tail_lexical_weight: lexical_weight,
            sentence_weight: 0.0,
        }
    }

    /// Each candidate's lexical and vector scores scaled to [0, 1] over the candidates.
    fn scaled(candidates: &[Hit]) -> Vec<(f32, f32)> {
        let best_lexical = candidates
            .iter()
            .filter_map(|h| h.explain.lexical)
            .fold(0.0f32, f32::max);
        let ranked = candidates
            .iter()
            .filter(|h| h.explain.vector_rank.is_some());
        let (lo, hi) = ranked
            .filter_map(|h| h.explain.vector)
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        candidates
            .iter()
            .map(|h| {
                let lexical = match h.explain.lexical {
                    Some(s) if best_lexical > 0.0 => s / best_lexical,
                    _ => 0.0,
                };
                let vector = match h.explain.vector {
                    Some(v) if hi > lo => ((v - lo) / (hi - lo)).clamp(0.0, 1.0),
                    // One vector candidate (or all tied): it scores 1, anything below it 0.
                    Some(v) if v >= hi => 1.0,
                    _ => 0.0,
                };
                (lexical, vector)
            })
            .collect()
    }
}

impl Reranker for ScoreFusion {
    /// Only with a sentence weight above 0: at 0 the tail ignores the sentence.
    fn uses_sentences(&self) -> bool {
        self.sentence_weight > 0.0
    }

    fn rerank(&self, _query: &str, candidates: &[Hit]) -> Result<Vec<f32>> {
        let scaled = Self::scaled(candidates);
        let sum = |w: f32| -> Vec<f32> {
            let w = w.clamp(0.0, 1.0);
            scaled.iter().map(|(l, v)| w * l + (1.0 - w) * v).collect()
        };
        let head = sum(self.lexical_weight);
        if self.head >= candidates.len() {
            return Ok(head);
        }
        let mut scores = sum(self.tail_lexical_weight);
        // Only where the store explained sentences: elsewhere (a store without sentence
        // vectors) the scores are exactly the two sums', as before them.
        let explained = candidates.iter().any(|h| h.explain.sentence.is_some());
        let w = if explained {
            self.sentence_weight.max(0.0)
        } else {
            0.0
        };
        if w > 0.0 {
            for (s, h) in scores.iter_mut().zip(candidates) {
                *s += w * h.explain.sentence.unwrap_or(0.0);
            }
        }
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        // Ties by id, as the engine orders equal scores.
        order.sort_by(|&a, &b| {
            head[b]
                .total_cmp(&head[a])
                .then(candidates[a].item.id.cmp(&candidates[b].item.id))
        });
        for &i in &order[..self.head] {
            scores[i] = 1.0 + w + head[i];
        }
        Ok(scores)
    }
}

/// Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): the sum over the vector and
/// lexical rankings of 1 / (k + rank), rank from 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FusionReranker {
    /// The damping constant (60 in the paper).
    pub k: f32,
}

impl Default for FusionReranker {
    fn default() -> Self {
        FusionReranker { k: 60.0 }
    }
}

impl Reranker for FusionReranker {
    /// Ranks only: the sentence is not read.
    fn uses_sentences(&self) -> bool {
        false
    }

    fn rerank(&self, _query: &str, candidates: &[Hit]) -> Result<Vec<f32>> {
        Ok(candidates
            .iter()
            .map(|h| {
                [h.explain.vector_rank, h.explain.lexical_rank]
                    .into_iter()
                    .flatten()
                    .map(|r| 1.0 / (self.k + r as f32 + 1.0))
                    .sum()
            })
            .collect())
    }
}

/// What a refiner sees after a round.
#[derive(Debug)]
pub struct RefineInput<'a> {
    /// The query text of this round.
    pub query: &'a str,
    /// Its vector.
    pub vector: &'a [f32],
    /// The round's results, best first.
    pub hits: &'a [Hit],
    /// Their stored vectors, in the same order.
    pub hit_vectors: &'a [Vec<f32>],
    /// The round, from 0.
    pub round: usize,
}

/// A refined query.
#[derive(Debug, Clone, PartialEq)]
pub enum Refinement {
    /// New query text (embedded, and used for lexical scores).
    Text(String),
    /// A new query vector (the text stays).
    Vector(Vec<f32>),
}

/// Refines a query from a round of results (an LLM rewriting it, or pseudo-relevance feedback).
pub trait QueryRefiner: Send + Sync {
    /// The next round's query.
    ///
    /// # Errors
    /// Any error aborts the retrieval and is returned to the caller.
    fn refine(&self, input: &RefineInput<'_>) -> Result<Refinement>;
}

/// Rocchio pseudo-relevance feedback: q' = α·q + β·mean(top results), normalised (Rocchio, "Relevance
/// feedback in information retrieval", 1971; no negative term, as usual for pseudo-feedback).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rocchio {
    /// Weight of the current query.
    pub alpha: f32,
    /// Weight of the results' centroid.
    pub beta: f32,
}

impl Default for Rocchio {
    fn default() -> Self {
        Rocchio {
            alpha: 1.0,
            beta: 0.5,
        }
    }
}

impl QueryRefiner for Rocchio {
    fn refine(&self, input: &RefineInput<'_>) -> Result<Refinement> {
        let n = input.hit_vectors.len();
        let mut q: Vec<f32> = input.vector.iter().map(|x| x * self.alpha).collect();
        if n > 0 {
            let w = self.beta / n as f32;
            for v in input.hit_vectors {
                for (qi, vi) in q.iter_mut().zip(v) {
                    *qi += w * vi;
                }
            }
        }
        // The engine makes it a unit vector; a zero vector (the hits cancelled the query out)
        // is refused there as an invalid refinement.
        Ok(Refinement::Vector(q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::MemoryId;
    use crate::item::NewMemory;
    use crate::vocabulary::Explanation;

    /// A candidate with its vector (cosine, rank) and lexical (BM25, rank) signals.
    fn hit(id: u64, vector: Option<(f32, usize)>, lexical: Option<(f32, usize)>) -> Hit {
        Hit {
            item: NewMemory::new(format!("memory {id}")).into_item(MemoryId::new(id), 0),
            score: 0.0,
            rank: 0,
            explain: Explanation {
                vector: Some(vector.map_or(0.05, |v| v.0)),
                vector_rank: vector.map(|v| v.1),
                lexical: lexical.map(|l| l.0),
                lexical_rank: lexical.map(|l| l.1),
                ..Explanation::default()
            },
        }
    }

    fn order(reranker: &dyn Reranker, hits: &[Hit]) -> Vec<u64> {
        let scores = reranker.rerank("q", hits).unwrap();
        let mut ids: Vec<(f32, u64)> = scores
            .into_iter()
            .zip(hits.iter().map(|h| h.item.id.get()))
            .collect();
        ids.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ids.into_iter().map(|(_, id)| id).collect()
    }

    #[test]
    fn the_head_follows_the_lexical_weight_and_the_rest_the_even_weight() {
        // Memories 1–3 match the query's words; 4 and 6 say it in other words (the best
        // cosines); 5 matches a few words.
        let cosine = [0.50, 0.50, 0.50, 0.90, 0.55, 0.85];
        let bm25 = [Some(10.0), Some(9.0), Some(8.0), Some(3.0), Some(6.0), None];
        let hits: Vec<Hit> = (0..6)
            .map(|i| hit(i as u64 + 1, Some((cosine[i], i)), bm25[i].map(|b| (b, i))))
            .collect();
        // 0.7 everywhere: the words' order; 0.5 everywhere: 4 first.
        assert_eq!(order(&ScoreFusion::uniform(0.7), &hits), [1, 2, 3, 4, 5, 6]);
        assert_eq!(order(&ScoreFusion::uniform(0.5), &hits), [4, 1, 2, 6, 3, 5]);
        // The default: the first four places by 0.7, then 6 (a paraphrase) before 5 (here
        // without sentence vectors' weight: `the_tail_follows_the_best_sentence`).
        let fusion = ScoreFusion {
            sentence_weight: 0.0,
            ..ScoreFusion::default()
        };
        assert_eq!(order(&fusion, &hits), [1, 2, 3, 4, 6, 5]);
        let scores = fusion.rerank("q", &hits).unwrap();
        assert!(scores[..4].iter().all(|s| (1.0..=2.0).contains(s)));
        assert!(scores[4..].iter().all(|s| (0.0..1.0).contains(s)));
        // A head as long as the candidates: one weight, no score above 1.
        let all = ScoreFusion {
            head: 6,
            ..ScoreFusion::default()
        };
        assert_eq!(
            all.rerank("q", &hits).unwrap(),
            ScoreFusion::uniform(0.7).rerank("q", &hits).unwrap()
        );
    }

    /// Below the head, a memory's best sentence's cosine (its pooled one without sentence
    /// vectors) adds ten times itself: 5, whose one sentence answers, passes 6; the head's
    /// four places stay as the words put them, above every other score.
    #[test]
    fn the_tail_follows_the_best_sentence() {
        let cosine = [0.50, 0.50, 0.50, 0.90, 0.55, 0.85];
        let bm25 = [Some(10.0), Some(9.0), Some(8.0), Some(3.0), Some(6.0), None];
        let mut hits: Vec<Hit> = (0..6)
            .map(|i| hit(i as u64 + 1, Some((cosine[i], i)), bm25[i].map(|b| (b, i))))
            .collect();
        let fusion = ScoreFusion::default();
        assert_eq!(fusion.sentence_weight, SENTENCE_WEIGHT);
        assert_eq!(order(&fusion, &hits), [1, 2, 3, 4, 6, 5]);
        hits[4].explain.sentence = Some(0.95);
        assert_eq!(order(&fusion, &hits), [1, 2, 3, 4, 5, 6]);
        let scores = fusion.rerank("q", &hits).unwrap();
        let floor = 1.0 + SENTENCE_WEIGHT;
        assert!(scores[..4]
            .iter()
            .all(|s| (floor..=floor + 1.0).contains(s)));
        assert!(scores[4..].iter().all(|s| (0.0..floor).contains(s)));
        // Its weight at 0: the even sum alone, as before sentence vectors.
        let plain = ScoreFusion {
            sentence_weight: 0.0,
            ..fusion
        };
        assert_eq!(order(&plain, &hits), [1, 2, 3, 4, 6, 5]);
        // No sentence explained (a store without sentence vectors): the very scores of a
        // weight of 0, the head's included, so boosts that scale a score act as before.
        hits[4].explain.sentence = None;
        assert_eq!(
            fusion.rerank("q", &hits).unwrap(),
            plain.rerank("q", &hits).unwrap()
        );
    }

    #[test]
    fn the_same_ranking_in_both_lists_keeps_its_order() {
        let hits: Vec<Hit> = (0..6)
            .map(|i| {
                hit(
                    i + 1,
                    Some((0.9 - 0.1 * i as f32, i as usize)),
                    Some((9.0 - i as f32, i as usize)),
                )
            })
            .collect();
        for reranker in [
            &ScoreFusion::default() as &dyn Reranker,
            &FusionReranker::default(),
        ] {
            assert_eq!(order(reranker, &hits), [1, 2, 3, 4, 5, 6]);
        }
    }

    #[test]
    fn a_lexical_only_hit_can_rank_first() {
        // Memory 9 matches the query's rare words outright and is not among the vector
        // candidates; the vector candidates share no word with the query.
        let mut hits: Vec<Hit> = (0..5)
            .map(|i| hit(i + 1, Some((0.6 - 0.02 * i as f32, i as usize)), None))
            .collect();
        hits.push(hit(9, None, Some((12.0, 0))));
        assert_eq!(order(&ScoreFusion::default(), &hits)[0], 9);
        // Rank fusion cannot: one list's first place ties the other's.
        assert_ne!(order(&FusionReranker::default(), &hits)[0], 9);
    }

    #[test]
    fn without_lexical_matches_the_vector_order_stands() {
        let hits: Vec<Hit> = (0..4)
            .map(|i| hit(i + 1, Some((0.8 - 0.1 * i as f32, i as usize)), None))
            .collect();
        assert_eq!(order(&ScoreFusion::default(), &hits), [1, 2, 3, 4]);
        let scores = ScoreFusion::default().rerank("q", &hits).unwrap();
        assert!(scores.iter().all(|s| s.is_finite()));
    }
}
