//! Random operation sequences against a plain map: the index agrees with the model on
//! membership, size, stored vectors and caller errors, and every search answer is made of live
//! ids with their true scores — also across save and reopen.

use std::collections::BTreeMap;

use memloop_index::{Index, IndexError, UnitVector};
use proptest::prelude::*;

const DIM: usize = 8;

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    Delete(u64),
    Search(u64),
    SaveReopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u64..60, any::<u64>()).prop_map(|(id, seed)| Op::Insert(id, seed)),
        3 => (0u64..60).prop_map(Op::Delete),
        3 => any::<u64>().prop_map(Op::Search),
        1 => Just(Op::SaveReopen),
    ]
}

fn vector(seed: u64) -> Vec<f32> {
    let mut x = seed | 1;
    let v: Vec<f32> = (0..DIM)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        })
        .collect();
    if v.iter().all(|c| *c == 0.0) {
        vec![1.0; DIM]
    } else {
        v
    }
}

fn unit(v: &[f32]) -> UnitVector {
    UnitVector::new(v.to_vec()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn index_agrees_with_a_map(ops in prop::collection::vec(op(), 1..120)) {
        let dir = tempfile::tempdir().unwrap();
        let params = memloop_index::Params::builder(DIM).m(4).ef_construction(32).build().unwrap();
        let mut index = Index::new(params).unwrap();
        let mut model: BTreeMap<u64, Vec<f32>> = BTreeMap::new();
        let mut saves = 0;
        for op in ops {
            match op {
                Op::Insert(id, seed) => {
                    let v = vector(seed);
                    let r = index.insert(id, &unit(&v));
                    match model.entry(id) {
                        std::collections::btree_map::Entry::Occupied(_) => {
                            prop_assert!(matches!(r, Err(IndexError::DuplicateId(d)) if d == id));
                        }
                        std::collections::btree_map::Entry::Vacant(slot) => {
                            prop_assert!(r.is_ok());
                            slot.insert(unit(&v).into_vec());
                        }
                    }
                }
                Op::Delete(id) => {
                    let r = index.delete(id);
                    if model.remove(&id).is_some() {
                        prop_assert!(r.is_ok());
                    } else {
                        prop_assert!(matches!(r, Err(IndexError::NotFound(d)) if d == id));
                    }
                }
                Op::Search(seed) => {
                    let q = unit(&vector(seed));
                    let hits = index.search(&q, 5, 64).unwrap();
                    prop_assert!(hits.len() <= 5.min(model.len()));
                    prop_assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
                    let mut seen = std::collections::HashSet::new();
                    for h in &hits {
                        let v = model.get(&h.id);
                        prop_assert!(v.is_some(), "search returned {} which is not live", h.id);
                        let ip: f32 = q.iter().zip(v.unwrap()).map(|(a, b)| a * b).sum();
                        prop_assert!((ip - h.score).abs() < 1e-4);
                        prop_assert!(seen.insert(h.id));
                    }
                }
                Op::SaveReopen => {
                    saves += 1;
                    let path = dir.path().join(format!("m{saves}.idx"));
                    index.save(&path, saves).unwrap();
                    index = Index::open_verified(&path).unwrap();
                    prop_assert_eq!(index.checkpoint(), saves);
                }
            }
            prop_assert_eq!(index.len(), model.len());
        }
        for id in 0..60u64 {
            prop_assert_eq!(index.contains(id), model.contains_key(&id));
            if let Some(v) = model.get(&id) {
                let got = index.vector(id).unwrap();
                prop_assert!(got.iter().zip(v).all(|(a, b)| (a - b).abs() < 1e-6));
            }
        }
        let mut ids = index.ids();
        ids.sort_unstable();
        prop_assert_eq!(ids, model.keys().copied().collect::<Vec<_>>());
    }
}
