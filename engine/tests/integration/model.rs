//! The engine on the real default model (all-MiniLM-L6-v2, fetched by scripts/fetch-model.sh).

use memloop::{Memory, NewMemory, Options, Query};

#[test]
fn recall_with_minilm_finds_the_semantically_closest_memory() {
    let dir = tempfile::tempdir().unwrap();
    let m = Memory::open(dir.path(), Options::default()).expect("default model is fetched");
    assert!(m.fingerprint().starts_with("all-MiniLM-L6-v2:53aa5117"));
    m.remember_batch(vec![
        NewMemory::new("The staging database password rotates every Monday."),
        NewMemory::new("Alice prefers tea over coffee in the morning."),
        NewMemory::new("The CI pipeline caches cargo builds between runs."),
    ])
    .unwrap();
    let hits = m
        .recall(&Query::new("What does Alice like to drink?").k(3))
        .unwrap();
    assert!(hits[0].item.text.starts_with("Alice"));
    let hits = m
        .recall(&Query::new("when do credentials change").k(1))
        .unwrap();
    assert!(hits[0].item.text.contains("password"));
    // A paraphrase is a near-duplicate for MiniLM and merges.
    let id = hits[0].item.id;
    let merged = m
        .remember(NewMemory::new(
            "The staging database password rotates every Monday!",
        ))
        .unwrap();
    assert_eq!(merged, id);
}
