//! `insert_batch_near`: the near-copy report of the search that links each item.

use memloop_index::{Index, Params};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::common::*;

const THRESHOLD: f32 = 0.95;

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `v` moved by noise of about `norm` and renormalised.
fn near_copy(v: &[f32], norm: f32, rng: &mut StdRng) -> Vec<f32> {
    let sigma = norm / (v.len() as f32).sqrt();
    let mut w: Vec<f32> = v
        .iter()
        .map(|x| x + sigma * (rng.gen::<f32>() * 2.0 - 1.0) * 3f32.sqrt())
        .collect();
    let n = w.iter().map(|x| x * x).sum::<f32>().sqrt();
    w.iter_mut().for_each(|x| *x /= n);
    w
}

#[test]
fn reports_what_lies_above_the_threshold_like_an_exact_scan() {
    let dim = 64;
    let seed = seed(5);
    let mut data = Clustered::new(dim, 40, seed);
    let mut rng = StdRng::seed_from_u64(seed);
    let base = data.take(4_000);
    let index = Index::new(params(dim)).unwrap();
    let base_ids: Vec<u64> = (0..4_000).collect();
    index.insert_batch(&base_ids, &rows(&base, dim)).unwrap();
    // A deleted item is never reported, however close.
    index.delete(7).unwrap();

    // Half the batch: near copies of stored items (cosine about 0.97-0.99); half: new points.
    let mut batch = Vec::new();
    for i in 0..600 {
        if i % 2 == 0 {
            let src = if i == 0 { 7 } else { rng.gen_range(0..4_000) };
            batch.extend(near_copy(&base[src * dim..(src + 1) * dim], 0.2, &mut rng));
        } else {
            batch.extend(data.next());
        }
    }
    let ids: Vec<u64> = (10_000..10_600).collect();
    let reports = index
        .insert_batch_near(&ids, &rows(&batch, dim), THRESHOLD)
        .unwrap();
    assert_eq!(reports.len(), ids.len());
    assert_eq!(index.len(), 4_000 - 1 + 600);

    let (mut expected, mut found) = (0, 0);
    for (q, report) in batch.chunks(dim).zip(&reports) {
        // Every hit is live, above the threshold, scored exactly, best first, not the item.
        assert!(report.hits.windows(2).all(|w| w[0].score >= w[1].score));
        for h in &report.hits {
            assert!(h.score >= THRESHOLD && h.id != 7);
            let v = index.vector(h.id).expect("a reported item is live");
            assert!((dot(q, &v) - h.score).abs() < 1e-4);
        }
        assert!(
            !report.saturated,
            "far fewer than ef_construction items are this close"
        );
        // The most similar stored item above the threshold (exact scan) is reported.
        let best = (0..4_000)
            .filter(|&j| j != 7)
            .map(|j| (dot(q, &base[j * dim..(j + 1) * dim]), j as u64))
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .unwrap();
        if best.0 >= THRESHOLD {
            expected += 1;
            found += usize::from(report.hits.iter().any(|h| h.id == best.1));
        }
    }
    eprintln!("nearest stored copy reported for {found} of {expected}");
    assert!(expected >= 250, "the batch holds near copies ({expected})");
    assert!(
        found as f64 >= 0.99 * expected as f64,
        "{found} of {expected}"
    );

    // The items are searchable as after `insert_batch`.
    for (q, &id) in batch.chunks(dim).zip(&ids).step_by(37) {
        assert_eq!(index.search(&unit(q), 1, 64).unwrap()[0].id, id);
    }
}

#[test]
fn a_crowd_of_copies_saturates_the_report() {
    let dim = 32;
    let ef = 24;
    let params = Params::builder(dim)
        .m(8)
        .ef_construction(ef)
        .build()
        .unwrap();
    let mut data = Clustered::new(dim, 4, seed(6));
    let mut rng = StdRng::seed_from_u64(6);
    let centre = data.next();
    let crowd: Vec<f32> = (0..200)
        .flat_map(|_| near_copy(&centre, 0.05, &mut rng))
        .collect();
    let others = data.take(300);
    let index = Index::new(params).unwrap();
    index
        .insert_batch(&(0..200).collect::<Vec<_>>(), &rows(&crowd, dim))
        .unwrap();
    index
        .insert_batch(&(200..500).collect::<Vec<_>>(), &rows(&others, dim))
        .unwrap();
    let mut batch = near_copy(&centre, 0.05, &mut rng);
    batch.extend(data.next());
    let reports = index
        .insert_batch_near(&[1_000, 1_001], &rows(&batch, dim), THRESHOLD)
        .unwrap();
    // Another copy: every item its search kept is a copy, so more may lie beyond.
    assert_eq!(reports[0].hits.len(), ef);
    assert!(reports[0].saturated);
    assert!(reports[0].hits.iter().all(|h| h.id < 200));
    // A point of another cluster: nothing that close.
    assert!(reports[1].hits.is_empty() && !reports[1].saturated);
}

#[test]
fn the_first_item_of_an_empty_index_finds_nothing_and_errors_change_nothing() {
    let dim = 16;
    let mut data = Clustered::new(dim, 2, seed(7));
    let index = Index::new(params(dim)).unwrap();
    let reports = index
        .insert_batch_near(&[1], &rows(&data.take(1), dim), THRESHOLD)
        .unwrap();
    assert_eq!(reports.len(), 1);
    assert!(reports[0].hits.is_empty() && !reports[0].saturated);
    // A duplicate id fails before anything is inserted, as in `insert_batch`.
    let err = index.insert_batch_near(&[2, 1], &rows(&data.take(2), dim), THRESHOLD);
    assert!(err.is_err());
    assert_eq!(index.len(), 1);
}
