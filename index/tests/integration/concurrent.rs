use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use memloop_index::Index;

use crate::common::*;

/// Searches running while another thread inserts and deletes only ever see complete items:
/// every hit is an id that was inserted, its score is exactly the inner product with that id's
/// known vector, results are sorted and free of duplicates.
#[test]
fn searches_during_inserts_never_see_a_torn_state() {
    let dim = 64;
    let n = 12_000usize;
    let mut data = Clustered::new(dim, 30, seed(8));
    let vectors = Arc::new(data.take(n));
    let queries = Arc::new(data.take(50));
    let index = Arc::new(Index::new(params(dim)).unwrap());
    index
        .insert_batch(
            &(0..1000).collect::<Vec<u64>>(),
            &rows(&vectors[..1000 * dim], dim),
        )
        .unwrap();
    let inserted = Arc::new(AtomicU64::new(1000));
    let stop = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..3)
        .map(|t| {
            let (index, vectors, queries, inserted, stop) = (
                index.clone(),
                vectors.clone(),
                queries.clone(),
                inserted.clone(),
                stop.clone(),
            );
            std::thread::spawn(move || {
                let mut searches = 0u64;
                while !stop.load(Ordering::Acquire) {
                    for q in queries.chunks(dim).skip(t).step_by(3) {
                        let hits = index.search(&unit(q), 10, 32).unwrap();
                        // Read after the search: anything it saw was reserved by then, and at any
                        // moment reserved ids are below `inserted` + one chunk in flight.
                        let limit = inserted.load(Ordering::Acquire) + 256;
                        // Never fewer than k: a search must not reach a node whose lower
                        // levels are still unlinked and stop there.
                        assert_eq!(hits.len(), 10, "a search during inserts came back short");
                        let mut seen = std::collections::HashSet::new();
                        for w in hits.windows(2) {
                            assert!(w[0].score >= w[1].score);
                        }
                        for h in &hits {
                            assert!(h.id < limit.min(n as u64), "id {} was never inserted", h.id);
                            assert!(seen.insert(h.id), "duplicate id {}", h.id);
                            let v = &vectors[h.id as usize * dim..(h.id as usize + 1) * dim];
                            let qn = q.iter().map(|x| x * x).sum::<f32>().sqrt();
                            let ip: f32 = q.iter().zip(v).map(|(a, b)| a * b).sum::<f32>() / qn;
                            assert!((ip - h.score).abs() < 1e-4, "score {} vs {}", h.score, ip);
                        }
                        // Filtered searches take the same locks plus the filter's estimate.
                        let even = index
                            .search_filtered(&unit(q), 10, 32, &|id: u64| id.is_multiple_of(2))
                            .unwrap();
                        let limit = inserted.load(Ordering::Acquire) + 256;
                        assert_eq!(even.len(), 10, "a filtered search came back short");
                        assert!(
                            even.iter().all(|h| h.id % 2 == 0),
                            "the filter was not applied"
                        );
                        assert!(
                            even.iter().all(|h| h.id < limit),
                            "an id that was never inserted"
                        );
                        searches += 1;
                    }
                }
                searches
            })
        })
        .collect();

    for start in (1000..n).step_by(256) {
        let end = (start + 256).min(n);
        let ids: Vec<u64> = (start as u64..end as u64).collect();
        index
            .insert_batch(&ids, &rows(&vectors[start * dim..end * dim], dim))
            .unwrap();
        inserted.store(end as u64, Ordering::Release);
        if start % 1024 == 0 {
            index.delete((start / 4) as u64).unwrap();
        }
    }
    stop.store(true, Ordering::Release);
    let total: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    eprintln!("{total} searches ran during the inserts");
    assert!(total > 0);
}
