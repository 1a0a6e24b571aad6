use std::collections::HashSet;

use memloop_index::Index;

use crate::common::*;

/// Deleting 30% and inserting as many new vectors keeps recall within 0.02 of a fresh build of
/// the same final set, and no deleted id ever comes back — before and after save/open.
#[test]
fn recall_holds_after_30_percent_churn_and_deleted_ids_never_return() {
    let dim = 384;
    let n = 20_000usize;
    let mut data = Clustered::new(dim, 200, seed(2));
    let base = data.take(n);
    let extra = data.take(n * 3 / 10);
    let queries = data.take(300);

    let index = Index::new(params(dim)).unwrap();
    let ids: Vec<u64> = (0..n as u64).collect();
    index.insert_batch(&ids, &rows(&base, dim)).unwrap();
    // Delete every id ≡ 0, 3 or 6 (mod 10): 30%, spread over all clusters.
    let deleted: HashSet<u64> = ids
        .iter()
        .copied()
        .filter(|i| [0, 3, 6].contains(&(i % 10)))
        .collect();
    for &id in &deleted {
        index.delete(id).unwrap();
    }
    let new_ids: Vec<u64> = (n as u64..(n + n * 3 / 10) as u64).collect();
    index.insert_batch(&new_ids, &rows(&extra, dim)).unwrap();
    assert_eq!(index.len(), n);

    // Fresh build over exactly the surviving items.
    let fresh = Index::new(params(dim)).unwrap();
    let mut keep_ids = Vec::new();
    let mut keep_vecs = Vec::new();
    for (i, v) in base.chunks(dim).enumerate() {
        if !deleted.contains(&(i as u64)) {
            keep_ids.push(i as u64);
            keep_vecs.extend_from_slice(v);
        }
    }
    keep_ids.extend(&new_ids);
    keep_vecs.extend_from_slice(&extra);
    fresh
        .insert_batch(&keep_ids, &rows(&keep_vecs, dim))
        .unwrap();

    let want = exact_all(&fresh, &queries, dim, 10);
    let r_fresh = recall(&search_all(&fresh, &queries, dim, 10, 128), &want, 10);
    let churned = search_all(&index, &queries, dim, 10, 128);
    let r_churn = recall(&churned, &want, 10);
    eprintln!("recall@10 fresh {r_fresh:.4}, after churn {r_churn:.4}");
    assert!(
        r_churn >= r_fresh - 0.02,
        "churned {r_churn} vs fresh {r_fresh}"
    );
    let no_deleted =
        |hits: &[Vec<memloop_index::Hit>]| hits.iter().flatten().all(|h| !deleted.contains(&h.id));
    assert!(no_deleted(&churned));
    assert!(no_deleted(&search_all(&index, &queries, dim, 100, 200)));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("churned.idx");
    index.save(&path, 1).unwrap();
    let reopened = Index::open_verified(&path).unwrap();
    assert_eq!(reopened.len(), n);
    assert_eq!(reopened.stats().tombstones, 0);
    let after = search_all(&reopened, &queries, dim, 10, 128);
    let r_after = recall(&after, &want, 10);
    eprintln!("recall@10 after save/open {r_after:.4}");
    assert!(r_after >= r_fresh - 0.02);
    assert!(no_deleted(&after));
    for id in deleted.iter().take(100) {
        assert!(!reopened.contains(*id));
    }
}

#[test]
fn repeated_churn_rounds_keep_recall() {
    let dim = 64;
    let mut data = Clustered::new(dim, 40, seed(3));
    let index = Index::new(params(dim)).unwrap();
    let mut live: Vec<u64> = (0..5000).collect();
    index
        .insert_batch(&live, &rows(&data.take(5000), dim))
        .unwrap();
    let mut next = 5000u64;
    for _round in 0..5 {
        let gone: Vec<u64> = live.iter().copied().step_by(4).collect();
        for &g in &gone {
            index.delete(g).unwrap();
        }
        live.retain(|i| !gone.contains(i));
        let add: Vec<u64> = (next..next + gone.len() as u64).collect();
        next += gone.len() as u64;
        index
            .insert_batch(&add, &rows(&data.take(add.len()), dim))
            .unwrap();
        live.extend(add);
    }
    assert_eq!(index.len(), 5000);
    let queries = data.take(200);
    let r = recall(
        &search_all(&index, &queries, dim, 10, 128),
        &exact_all(&index, &queries, dim, 10),
        10,
    );
    eprintln!("recall@10 after 5 churn rounds: {r:.4}");
    assert!(r >= 0.95);
}

/// Replacing a vector (delete, then insert the same id) finds the new vector, also when the
/// replaced node was the only one (the entry point) or one of a few.
#[test]
fn a_replaced_vector_is_found_under_its_id() {
    let dim = 16;
    let mut data = Clustered::new(dim, 4, seed(9));
    for n in [1usize, 2, 5, 50] {
        let index = Index::new(params(dim)).unwrap();
        let base = data.take(n);
        let ids: Vec<u64> = (0..n as u64).collect();
        index.insert_batch(&ids, &rows(&base, dim)).unwrap();
        for round in 0..3 {
            let v = data.take(1);
            index.delete(0).unwrap();
            index.insert(0, &unit(&v)).unwrap();
            let hits = index.search(&unit(&v), n.min(3), 32).unwrap();
            assert_eq!(hits.len(), n.min(3), "n = {n}, round {round}");
            assert_eq!(hits[0].id, 0, "n = {n}, round {round}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.mlx");
        index.save(&path, 0).unwrap();
        let reopened = Index::open(&path).unwrap();
        assert_eq!(reopened.len(), n);
        let q = index.vector(0).unwrap();
        assert_eq!(
            reopened.search(&unit(&q), 1, 32).unwrap()[0].id,
            0,
            "n = {n} after save"
        );
    }
}
