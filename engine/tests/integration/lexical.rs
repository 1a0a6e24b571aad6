//! The lexical strategy (BM25 alone) and the default fusion's promise: a hybrid ranking never
//! loses a memory that matches the query's rare words outright.

use memloop::MemoryId;
use memloop::{Clock, Kind, Memory, MemoryFilter, NewMemory, Query, Scope, Strategy};

use crate::common::hashing;

fn store(dir: &std::path::Path) -> Memory {
    Memory::open(dir, hashing(256, &Clock::manual(1_000))).unwrap()
}

#[test]
fn lexical_ranks_by_bm25_alone_within_the_filter() {
    let dir = crate::common::tempdir();
    let m = store(dir.path());
    let texts = [
        "the quarterly report mentions Zanzibar twice: Zanzibar office opened",
        "the office moved to a new building downtown",
        "Zanzibar is an island",
        "nothing related here at all",
    ];
    let ids: Vec<MemoryId> = texts
        .iter()
        .map(|t| m.remember(NewMemory::new(*t).kind(Kind::Fact)).unwrap())
        .collect();
    let other = m
        .remember(NewMemory::new("Zanzibar Zanzibar Zanzibar").scope(Scope::user("bo")))
        .unwrap();
    let hits = m
        .retrieve(
            &Query::new("Zanzibar office")
                .k(10)
                .filter(MemoryFilter::new().kind(Kind::Fact)),
            Strategy::Lexical,
        )
        .unwrap();
    let got: Vec<MemoryId> = hits.iter().map(|h| h.item.id).collect();
    // Both words first; then "office" (in two memories) before "Zanzibar" (in three: BM25
    // counts the other user's memory in the word's rarity, the filter only hides it).
    assert_eq!(got, [ids[0], ids[1], ids[2]]);
    assert!(!got.contains(&other), "the filter holds");
    assert!(hits
        .iter()
        .all(|h| h.explain.lexical.is_some() && h.explain.vector.is_none()));
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score));
    let none = m
        .retrieve(&Query::new("qwertyuiop").k(5), Strategy::Lexical)
        .unwrap();
    assert!(none.is_empty(), "no shared term, no hit");
}

#[test]
fn the_hybrid_keeps_an_outright_keyword_match_on_top() {
    let dir = crate::common::tempdir();
    let m = store(dir.path());
    for i in 0..30 {
        m.remember(NewMemory::new(format!(
            "a note about gardening and plants number {i}"
        )))
        .unwrap();
    }
    let code = m
        .remember(NewMemory::new(
            "ticket XK-4471 was closed by the night shift",
        ))
        .unwrap();
    for strategy in [Strategy::Lexical, Strategy::RERANK] {
        let hits = m
            .retrieve(&Query::new("what happened to XK-4471").k(3), strategy)
            .unwrap();
        assert_eq!(hits[0].item.id, code, "{strategy:?}");
    }
}
