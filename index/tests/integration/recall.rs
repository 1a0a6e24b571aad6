use memloop_index::Index;

use crate::common::*;

#[test]
fn recall_at_10_is_at_least_095_at_ef_128_on_20k_clustered() {
    let dim = 384;
    let mut data = Clustered::new(dim, 200, seed(1));
    let base = data.take(20_000);
    let queries = data.take(300);
    let ids: Vec<u64> = (0..20_000).collect();
    let index = Index::new(params(dim)).unwrap();
    index.insert_batch(&ids, &rows(&base, dim)).unwrap();
    assert_eq!(index.len(), 20_000);
    let got = search_all(&index, &queries, dim, 10, 128);
    let want = exact_all(&index, &queries, dim, 10);
    let r = recall(&got, &want, 10);
    eprintln!("recall@10 at ef=128: {r:.4}");
    assert!(r >= 0.95, "recall@10 = {r}");
    // Results are sorted best first and carry the true inner product.
    for (q, hits) in queries.chunks(dim).zip(&got) {
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
        let v = index.vector(hits[0].id).unwrap();
        let ip: f32 = q.iter().zip(&v).map(|(a, b)| a * b).sum();
        assert!((ip - hits[0].score).abs() < 1e-4);
    }
}

#[test]
fn small_and_degenerate_indexes_answer_correctly() {
    let dim = 8;
    let index = Index::new(params(dim)).unwrap();
    assert!(index.search(&unit(&[1.0; 8]), 5, 10).unwrap().is_empty());
    index.insert(7, &unit(&[1.0; 8])).unwrap();
    let hits = index.search(&unit(&[1.0; 8]), 5, 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].id, 7);
    assert!((hits[0].score - 1.0).abs() < 1e-5);
    assert!(index.search(&unit(&[1.0; 8]), 0, 10).unwrap().is_empty());
    // Identical vectors under many ids: the top k are all exact matches. (More identical copies
    // than M0/2 can leave some copies unreachable, as in every HNSW; the engine merges
    // duplicates before they reach the index. See `graph::select`.)
    let ids: Vec<u64> = (100..150).collect();
    index
        .insert_batch(&ids, &rows(&vec![0.5; 8 * 50], dim))
        .unwrap();
    let found = index.search(&unit(&[1.0; 8]), 10, 64).unwrap();
    assert_eq!(found.len(), 10, "{found:?}");
    assert!(found.iter().all(|h| h.score > 0.9999));
    assert_eq!(index.search_exact(&unit(&[1.0; 8]), 100).unwrap().len(), 51);
}

#[test]
fn caller_errors_are_typed_and_change_nothing() {
    use memloop_index::{IndexError, UnitVector};
    let index = Index::new(params(4)).unwrap();
    index.insert(1, &unit(&[1.0, 0.0, 0.0, 0.0])).unwrap();
    assert!(matches!(
        index.insert(2, &unit(&[1.0, 0.0])),
        Err(IndexError::DimensionMismatch {
            expected: 4,
            got: 2
        })
    ));
    // A zero or non-finite vector never becomes a unit vector, so it never reaches the index.
    assert!(matches!(
        UnitVector::new(vec![0.0; 4]),
        Err(IndexError::InvalidVector { .. })
    ));
    assert!(matches!(
        UnitVector::new(vec![f32::NAN, 0.0, 0.0, 1.0]),
        Err(IndexError::InvalidVector { .. })
    ));
    assert!(matches!(
        index.insert(1, &unit(&[0.0, 1.0, 0.0, 0.0])),
        Err(IndexError::DuplicateId(1))
    ));
    assert!(matches!(
        index.insert_batch(&[5, 5], &rows(&[1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0], 4)),
        Err(IndexError::DuplicateId(5))
    ));
    assert!(matches!(index.delete(99), Err(IndexError::NotFound(99))));
    assert!(matches!(
        index.search(&unit(&[1.0; 3]), 1, 8),
        Err(IndexError::DimensionMismatch { .. })
    ));
    assert_eq!(index.len(), 1);
    assert!(matches!(
        memloop_index::Params::builder(0).build(),
        Err(IndexError::InvalidParameter { name: "dim", .. })
    ));
    assert!(matches!(
        memloop_index::Params::builder(4).m(1).build(),
        Err(IndexError::InvalidParameter { name: "m", .. })
    ));
}

#[test]
fn a_beam_wider_than_the_index_finds_the_exact_top_k_on_either_side_of_the_pool_limit() {
    // Up to ef 1,024 a search keeps its beam as one sorted pool, above that as two heaps: with
    // a beam as wide as the index, both must return exactly what a scan does.
    let dim = 32;
    let mut data = Clustered::new(dim, 20, seed(7));
    let base = data.take(1_500);
    let queries = data.take(20);
    let ids: Vec<u64> = (0..1_500).collect();
    let index = Index::new(params(dim)).unwrap();
    index.insert_batch(&ids, &rows(&base, dim)).unwrap();
    let want = exact_all(&index, &queries, dim, 50);
    for ef in [1_024, 1_500] {
        let got = search_all(&index, &queries, dim, 50, ef);
        let ids = |hits: &Vec<Vec<memloop_index::Hit>>| -> Vec<Vec<u64>> {
            hits.iter()
                .map(|h| h.iter().map(|x| x.id).collect())
                .collect()
        };
        assert_eq!(ids(&got), ids(&want), "ef {ef}");
    }
}
