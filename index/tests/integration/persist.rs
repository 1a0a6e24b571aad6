use memloop_index::Index;

use crate::common::*;

#[test]
fn save_then_open_gives_identical_results_and_keeps_accepting_changes() {
    let dim = 96;
    let mut data = Clustered::new(dim, 50, seed(6));
    let index = Index::new(params(dim)).unwrap();
    let ids: Vec<u64> = (0..6000).map(|i| i * 7 + 3).collect();
    index
        .insert_batch(&ids, &rows(&data.take(6000), dim))
        .unwrap();
    let queries = data.take(100);
    let before = search_all(&index, &queries, dim, 10, 64);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.idx");
    index.save(&path, 42).unwrap();
    assert!(!dir.path().join("a.idx.tmp").exists());
    let opened = Index::open(&path).unwrap();
    opened.verify().unwrap();
    assert_eq!(opened.checkpoint(), 42);
    assert_eq!(opened.len(), 6000);
    assert_eq!(opened.params(), index.params());
    assert_eq!(search_all(&opened, &queries, dim, 10, 64), before);
    for &id in ids.iter().step_by(97) {
        assert_eq!(opened.vector(id), index.vector(id));
    }

    // The mapped index accepts inserts and deletes; a second save/open round-trips those too.
    let more: Vec<u64> = (1_000_000..1_000_500).collect();
    opened
        .insert_batch(&more, &rows(&data.take(500), dim))
        .unwrap();
    for &id in ids.iter().take(300) {
        opened.delete(id).unwrap();
    }
    assert_eq!(opened.len(), 6200);
    let mid = search_all(&opened, &queries, dim, 10, 64);
    let path2 = dir.path().join("b.idx");
    opened.save(&path2, 43).unwrap();
    let again = Index::open_verified(&path2).unwrap();
    assert_eq!(again.len(), 6200);
    assert_eq!(again.checkpoint(), 43);
    let r = recall(&search_all(&again, &queries, dim, 10, 64), &mid, 10);
    assert!(r >= 0.99, "recall of reopened vs in-memory results {r}");
    assert!(!again.contains(ids[0]) && again.contains(1_000_499));

    // Saving over the file that is currently mapped is safe: on Unix the mapping keeps the old
    // inode; Windows refuses to rename over a mapped file, so the save fails, leaving the
    // mapped file as it was (the engine writes the next generation beside it instead).
    let saved = again.save(&path2, 44);
    assert_eq!(again.len(), 6200);
    if cfg!(unix) {
        saved.unwrap();
        assert_eq!(Index::open(&path2).unwrap().checkpoint(), 44);
    } else {
        assert!(
            matches!(saved, Err(memloop_index::IndexError::Io { .. })),
            "{saved:?}"
        );
        assert_eq!(Index::open(&path2).unwrap().checkpoint(), 43);
        assert!(
            !dir.path().join("b.idx.tmp").exists(),
            "the failed save left its file"
        );
    }
}

#[test]
fn empty_index_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("empty.idx");
    let index = Index::new(params(5)).unwrap();
    index.save(&path, 0).unwrap();
    let opened = Index::open_verified(&path).unwrap();
    assert!(opened.is_empty());
    assert!(opened.search(&unit(&[1.0; 5]), 3, 10).unwrap().is_empty());
    opened.insert(1, &unit(&[1.0; 5])).unwrap();
    assert_eq!(opened.search(&unit(&[1.0; 5]), 3, 10).unwrap()[0].id, 1);
}

#[test]
fn open_reads_nothing_proportional_to_size() {
    let dim = 384;
    let mut data = Clustered::new(dim, 20, seed(7));
    let index = Index::new(params(dim)).unwrap();
    let ids: Vec<u64> = (0..3000).collect();
    index
        .insert_batch(&ids, &rows(&data.take(3000), dim))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.idx");
    index.save(&path, 0).unwrap();
    let opened = Index::open(&path).unwrap();
    let s = opened.stats();
    assert_eq!((s.mapped_nodes, s.fresh_nodes, s.tombstones), (3000, 0, 0));
}

/// The bytes a save writes, built in memory and opened from memory (what an encrypted store
/// does around its AEAD): the same file, the same answers, the same checks on damage.
#[test]
fn bytes_in_memory_are_the_file_and_open_alike() {
    let dim = 64;
    let mut data = Clustered::new(dim, 20, seed(9));
    let index = Index::new(params(dim)).unwrap();
    let ids: Vec<u64> = (0..2000).collect();
    index
        .insert_batch(&ids, &rows(&data.take(2000), dim))
        .unwrap();
    let queries = data.take(50);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.idx");
    index.save_owned(&path, 7, [3; 16]).unwrap();
    let bytes = index.to_bytes(7, [3; 16]).unwrap();
    assert!(bytes == std::fs::read(&path).unwrap());
    let held = Index::from_bytes("held", &bytes).unwrap();
    held.verify().unwrap();
    assert_eq!(
        (held.checkpoint(), held.owner(), held.len()),
        (7, Some([3; 16]), 2000)
    );
    let mapped = Index::open(&path).unwrap();
    assert_eq!(
        search_all(&held, &queries, dim, 10, 64),
        search_all(&mapped, &queries, dim, 10, 64)
    );
    // Truncated or flipped bytes: typed errors, never a panic.
    assert!(Index::from_bytes("cut", &bytes[..bytes.len() / 2]).is_err());
    assert!(Index::from_bytes("empty", &[]).is_err());
    let mut flipped = bytes.clone();
    flipped[bytes.len() - 10] ^= 1;
    let opened = Index::from_bytes("flipped", &flipped).unwrap();
    assert!(opened.verify().is_err());
}
