use std::path::Path;

use memloop_index::{Index, IndexError, Params, VectorEncoding};
use proptest::prelude::*;

use crate::common::*;

fn saved_index(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    saved_index_with(dir, VectorEncoding::F32)
}

fn saved_index_with(dir: &Path, vectors: VectorEncoding) -> (std::path::PathBuf, Vec<u8>) {
    let dim = 24;
    let mut data = Clustered::new(dim, 8, 11);
    let p = Params::builder(dim)
        .m(16)
        .ef_construction(200)
        .vectors(vectors)
        .build()
        .unwrap();
    let index = Index::new(p).unwrap();
    let ids: Vec<u64> = (0..400).collect();
    index
        .insert_batch(&ids, &rows(&data.take(400), dim))
        .unwrap();
    let path = dir.join("good.idx");
    index.save(&path, 9).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

fn open_bytes(dir: &Path, name: &str, bytes: &[u8]) -> Result<Index, IndexError> {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    Index::open(&p)
}

/// Opens and, if that succeeds, verifies and searches: must never panic.
fn open_verify_search(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), IndexError> {
    let index = open_bytes(dir, name, bytes)?;
    // Whatever the contents, searching a file that opened must not panic.
    let _ = index.search(&unit(&[0.5; 24]), 10, 32)?;
    let _ = index.search_filtered(&unit(&[0.5; 24]), 10, 32, &|id: u64| id.is_multiple_of(2))?;
    index.verify()
}

#[test]
fn truncated_files_give_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (_, good) = saved_index(dir.path());
    for len in [
        0,
        1,
        7,
        8,
        100,
        511,
        512,
        513,
        600,
        good.len() / 2,
        good.len() - 1,
    ] {
        let r = open_bytes(dir.path(), "t.idx", &good[..len]);
        assert!(
            matches!(r, Err(IndexError::Truncated { .. })),
            "len {len}: {r:?}"
        );
    }
}

#[test]
fn wrong_magic_garbage_and_future_versions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (_, good) = saved_index(dir.path());
    let mut bad = good.clone();
    bad[1] = b'X';
    assert!(matches!(
        open_bytes(dir.path(), "m.idx", &bad),
        Err(IndexError::NotAnIndex { .. })
    ));
    let garbage: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    assert!(matches!(
        open_bytes(dir.path(), "g.idx", &garbage),
        Err(IndexError::NotAnIndex { .. })
    ));
    let mut future = good.clone();
    future[8..12].copy_from_slice(&7u32.to_le_bytes());
    assert!(matches!(
        open_bytes(dir.path(), "v.idx", &future),
        Err(IndexError::UnsupportedVersion { found: 7, .. })
    ));
    assert!(matches!(
        open_bytes(dir.path(), "z.idx", &vec![0u8; 2048]),
        Err(IndexError::NotAnIndex { .. })
    ));
    let missing = Index::open(dir.path().join("nope.idx"));
    assert!(matches!(missing, Err(IndexError::Io { .. })));
    // Trailing bytes are caught by verify.
    let mut longer = good.clone();
    longer.extend_from_slice(&[1, 2, 3]);
    assert!(matches!(
        open_verify_search(dir.path(), "l.idx", &longer),
        Err(IndexError::Corrupted { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Any single flipped byte is reported by open or verify, never a panic.
    #[test]
    fn every_flipped_byte_is_detected(
        pos in any::<prop::sample::Index>(),
        flip in 1u8..=255,
        vectors in prop::sample::select(VectorEncoding::ALL.to_vec()),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (_, good) = saved_index_with(dir.path(), vectors);
        let mut bad = good.clone();
        let i = pos.index(bad.len());
        bad[i] ^= flip;
        let r = open_verify_search(dir.path(), "f.idx", &bad);
        prop_assert!(r.is_err(), "flip at {} went unnoticed", i);
    }

    /// Several random bytes overwritten anywhere: open/verify/search return, never panic.
    #[test]
    fn random_overwrites_never_panic(
        writes in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..20),
        vectors in prop::sample::select(VectorEncoding::ALL.to_vec()),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let (_, good) = saved_index_with(dir.path(), vectors);
        let mut bad = good.clone();
        for (pos, b) in writes {
            let i = pos.index(bad.len());
            bad[i] = b;
        }
        let _ = open_verify_search(dir.path(), "r.idx", &bad);
    }
}
