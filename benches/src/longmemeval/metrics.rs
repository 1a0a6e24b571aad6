//! The official retrieval metrics of LongMemEval (`src/retrieval/eval_utils.py`): for a ranking
//! of keys and the evidence keys, `recall_any@k` (any evidence in the top k), `recall_all@k`
//! (all of it) and `ndcg_any@k` (binary relevance; the first two positions undiscounted, as
//! its `dcg` computes `rel[0] + Σ rel[i] / log2(i + 1)` for i ≥ 1).

/// The three figures at one k.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct AtK {
    /// Any evidence in the top k.
    pub recall_any: f64,
    /// All evidence in the top k.
    pub recall_all: f64,
    /// nDCG over the top k.
    pub ndcg_any: f64,
}

fn dcg(relevances: &[f64]) -> f64 {
    relevances
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i == 0 {
                *r
            } else {
                r / ((i + 1) as f64).log2()
            }
        })
        .sum()
}

/// The figures of `ranking` (best first) at `k`, with `evidence` relevant; `None` when there
/// is no evidence (the question is left out).
pub fn at_k(ranking: &[String], evidence: &[String], k: usize) -> Option<AtK> {
    if evidence.is_empty() {
        return None;
    }
    let top = &ranking[..k.min(ranking.len())];
    let hit = |key: &String| top.contains(key);
    let relevances: Vec<f64> = top
        .iter()
        .map(|key| f64::from(u8::from(evidence.contains(key))))
        .collect();
    let ideal: Vec<f64> = (0..k.min(evidence.len())).map(|_| 1.0).collect();
    Some(AtK {
        recall_any: f64::from(u8::from(evidence.iter().any(hit))),
        recall_all: f64::from(u8::from(evidence.iter().all(hit))),
        ndcg_any: dcg(&relevances) / dcg(&ideal),
    })
}

/// Sessions ranked by their best turn: each session where its first turn appears.
pub fn sessions_of(turn_ranking: &[String], session_of: impl Fn(&str) -> String) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in turn_ranking {
        let s = session_of(key);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_official_definitions() {
        let ranking = keys(&["a", "x", "b", "y"]);
        let m = at_k(&ranking, &keys(&["a", "b"]), 2).unwrap();
        assert_eq!((m.recall_any, m.recall_all), (1.0, 0.0));
        assert!((m.ndcg_any - 0.5).abs() < 1e-12); // dcg 1 + 0, ideal 1 + 1
        let m = at_k(&ranking, &keys(&["a", "b"]), 3).unwrap();
        assert_eq!(m.recall_all, 1.0);
        // dcg = 1 + 0 + 1/log2(3); ideal = 1 + 1
        assert!((m.ndcg_any - (1.0 + 1.0 / 3f64.log2()) / 2.0).abs() < 1e-12);
        assert!(at_k(&ranking, &[], 5).is_none());
        let s = sessions_of(&keys(&["s1_0", "s1_2", "s2_1"]), |k| {
            k.rsplit_once('_').unwrap().0.to_string()
        });
        assert_eq!(s, keys(&["s1", "s2"]));
    }
}
