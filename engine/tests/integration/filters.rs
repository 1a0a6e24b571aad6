//! Recall and scan with each filter.

use memloop::{Clock, Kind, MemoryFilter, NewMemory, Query};

use crate::common::open;

#[test]
fn recall_honours_namespace_kind_tag_and_time_filters() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(1_000);
    let m = open(dir.path(), &clock);
    let mut ids = Vec::new();
    for i in 0..200u64 {
        clock.set(1_000 + i as i64).unwrap();
        let kind = [Kind::Chunk, Kind::Fact, Kind::Task][i as usize % 3];
        let mut nm = NewMemory::new(format!("shared topic words item number {i} unique{i}"))
            .kind(kind)
            .namespace(if i % 2 == 0 { "even" } else { "odd" });
        if i % 5 == 0 {
            nm = nm.tag("five");
        }
        if i % 10 == 0 {
            nm = nm.tag("ten");
        }
        ids.push((i, m.remember(nm).unwrap()));
    }
    let q = |f: MemoryFilter| {
        m.recall(&Query::new("shared topic words item").k(300).filter(f))
            .unwrap()
            .into_iter()
            .map(|h| h.item)
            .collect::<Vec<_>>()
    };
    let all = q(MemoryFilter::new());
    assert_eq!(all.len(), 200);
    let even = q(MemoryFilter::new().namespace("even"));
    assert_eq!(even.len(), 100);
    assert!(even.iter().all(|i| i.namespace == "even"));
    let facts = q(MemoryFilter::new().kind(Kind::Fact));
    assert!(facts.iter().all(|i| i.kind == Kind::Fact));
    assert_eq!(facts.len(), 67);
    let ft = q(MemoryFilter::new().kind(Kind::Fact).kind(Kind::Task));
    assert_eq!(ft.len(), 133);
    let five_ten = q(MemoryFilter::new().tag("five").tag("ten"));
    assert_eq!(five_ten.len(), 20);
    let window = q(MemoryFilter::new().created_between(1_050, 1_060));
    assert_eq!(window.len(), 10);
    assert!(window.iter().all(|i| (1_050..1_060).contains(&i.created)));
    let combined = q(MemoryFilter::new()
        .namespace("even")
        .tag("ten")
        .kind(Kind::Chunk));
    // i even, multiple of 10, i % 3 == 0: 0, 30, 60, ..., 180.
    assert_eq!(combined.len(), 7);
    assert!(q(MemoryFilter::new().namespace("missing")).is_empty());
    assert!(q(MemoryFilter::new().tag("missing")).is_empty());
    // Ranks are positions, scores descend.
    let hits = m
        .recall(&Query::new("item number 17 unique17").k(5))
        .unwrap();
    assert_eq!(
        hits[0].item.text,
        "shared topic words item number 17 unique17"
    );
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    assert!(hits.iter().enumerate().all(|(r, h)| h.rank == r));
    // Scan agrees with the filters.
    let scanned = m
        .advanced()
        .scan(&MemoryFilter::new().namespace("odd").tag("five"), 1000)
        .unwrap();
    assert_eq!(scanned.len(), 20);
    assert!(scanned.windows(2).all(|w| w[0].id < w[1].id));
    assert_eq!(m.advanced().scan(&MemoryFilter::new(), 7).unwrap().len(), 7);
}

#[test]
fn recall_records_access_time_durably() {
    let dir = crate::common::tempdir();
    let clock = Clock::manual(100);
    let id = {
        let m = open(dir.path(), &clock);
        let id = m.remember(NewMemory::new("remember the milk")).unwrap();
        clock.set(500).unwrap();
        let hits = m.recall(&Query::new("milk")).unwrap();
        assert_eq!(hits[0].item.accessed, 500);
        id
    };
    let m = open(dir.path(), &clock);
    assert_eq!(m.get(id).unwrap().unwrap().accessed, 500);
}
