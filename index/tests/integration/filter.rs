use memloop_index::{Filter, Hit, IdFilter, Index};

use crate::common::*;

fn filtered_recall(
    index: &Index,
    queries: &[f32],
    dim: usize,
    filter: &dyn Filter,
    pass: impl Fn(u64) -> bool,
) -> f64 {
    let got: Vec<Vec<Hit>> = queries
        .chunks(dim)
        .map(|q| index.search_filtered(&unit(q), 10, 128, filter).unwrap())
        .collect();
    for hits in &got {
        assert!(hits.iter().all(|h| pass(h.id)), "a hit fails the filter");
    }
    let want: Vec<Vec<Hit>> = queries
        .chunks(dim)
        .map(|q| {
            let all = index.search_exact(&unit(q), index.len()).unwrap();
            all.into_iter().filter(|h| pass(h.id)).take(10).collect()
        })
        .collect();
    recall(&got, &want, 10)
}

#[test]
fn filtered_search_keeps_recall_at_1_and_10_percent_pass_rates() {
    let dim = 128;
    let n = 20_000u64;
    let mut data = Clustered::new(dim, 100, seed(4));
    let index = Index::new(params(dim)).unwrap();
    let ids: Vec<u64> = (0..n).collect();
    index
        .insert_batch(&ids, &rows(&data.take(n as usize), dim))
        .unwrap();
    let queries = data.take(100);
    // Pass sets unrelated to the clusters: a hash of the id.
    let h = |id: u64| id.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
    for (name, modulus) in [("1%", 100u64), ("10%", 10u64)] {
        let pass = move |id: u64| h(id) % modulus == 0;
        let predicate = pass;
        let r_pred = filtered_recall(&index, &queries, dim, &predicate, pass);
        let set = IdFilter::new(ids.iter().copied().filter(|&i| pass(i)));
        let r_set = filtered_recall(&index, &queries, dim, &set, pass);
        eprintln!("{name} pass: recall@10 predicate {r_pred:.4}, id set {r_set:.4}");
        assert!(
            r_pred >= 0.95 && r_set >= 0.95,
            "{name}: {r_pred} / {r_set}"
        );
    }
}

#[test]
fn a_filter_that_passes_nothing_or_deleted_items_returns_only_live_passing_items() {
    let dim = 16;
    let mut data = Clustered::new(dim, 4, seed(5));
    let index = Index::new(params(dim)).unwrap();
    let ids: Vec<u64> = (0..500).collect();
    index
        .insert_batch(&ids, &rows(&data.take(500), dim))
        .unwrap();
    let q = data.next();
    assert!(index
        .search_filtered(&unit(&q), 10, 64, &|_: u64| false)
        .unwrap()
        .is_empty());
    index.delete(3).unwrap();
    let only = IdFilter::new([3, 4, 1_000_000]);
    let hits = index.search_filtered(&unit(&q), 10, 64, &only).unwrap();
    assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![4]);
}
