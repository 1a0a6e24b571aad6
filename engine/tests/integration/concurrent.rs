//! Readers run while a writer writes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use memloop::{Clock, MemoryFilter, NewMemory, Query};

use crate::common::{open, sentences};

#[test]
fn readers_see_consistent_results_during_writes() {
    let dir = crate::common::tempdir();
    let m = Arc::new(open(dir.path(), &Clock::manual(0)));
    let texts = sentences(1200);
    m.remember_batch(texts[..200].iter().map(NewMemory::new).collect())
        .unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|r| {
            let (m, done, texts) = (m.clone(), done.clone(), texts.clone());
            std::thread::spawn(move || {
                let (mut reads, mut misses) = (0usize, 0usize);
                while !done.load(Ordering::Acquire) || reads < 20 {
                    let t = &texts[(reads * 7 + r) % 200];
                    let hits = m.recall(&Query::new(t.as_str()).k(3)).unwrap();
                    assert_eq!(hits.len(), 3);
                    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
                    for h in &hits {
                        // Every hit is a whole, committed memory: what get returns.
                        assert_eq!(m.get(h.item.id).unwrap().unwrap().text, h.item.text);
                    }
                    misses += usize::from(hits.iter().all(|h| &h.item.text != t));
                    assert!(!m
                        .advanced()
                        .scan(&MemoryFilter::new(), 5)
                        .unwrap()
                        .is_empty());
                    // A text being written now: a large batch is in the index before its commit,
                    // yet a recall returns only committed memories, and still all three.
                    let t = &texts[200 + (reads * 13 + r * 5) % 1000];
                    let hits = m.recall(&Query::new(t.as_str()).k(3)).unwrap();
                    assert_eq!(hits.len(), 3);
                    for h in &hits {
                        assert_eq!(m.get(h.item.id).unwrap().unwrap().text, h.item.text);
                    }
                    reads += 1;
                }
                (reads, misses)
            })
        })
        .collect();
    // Batches of 40 are screened before their write, of 160 indexed ahead of it.
    let (small, large) = texts[200..].split_at(200);
    for chunk in small.chunks(40).chain(large.chunks(160)) {
        m.remember_batch(chunk.iter().map(NewMemory::new).collect())
            .unwrap();
    }
    m.admin().checkpoint().unwrap();
    done.store(true, Ordering::Release);
    let (mut reads, mut misses) = (0, 0);
    for r in readers {
        let (n, x) = r.join().unwrap();
        reads += n;
        misses += x;
    }
    // HNSW is approximate, and inserts of near-identical texts can briefly hide an old one.
    assert!(
        misses * 50 <= reads,
        "{misses} of {reads} reads missed an early memory"
    );
    assert_eq!(m.stats().unwrap().memories, 1200);
    let found = texts[..200]
        .iter()
        .filter(|t| &m.recall(&Query::new(t.as_str()).k(3)).unwrap()[0].item.text == *t)
        .count();
    assert!(
        found >= 198,
        "{found} of 200 early memories found after the writes"
    );
}
