//! Compressed vectors: bf16 and int8 indexes search their codes, re-score exactly, keep f32's
//! recall, save and reopen with their encoding; version-1 files still open.

use memloop_index::{Index, IndexError, Params, VectorEncoding};

use crate::common::*;

const DIM: usize = 96;

fn index_of(vectors: VectorEncoding, data: &[f32]) -> Index {
    let p = Params::builder(DIM)
        .m(12)
        .ef_construction(100)
        .vectors(vectors)
        .build()
        .unwrap();
    let index = Index::new(p).unwrap();
    // One at a time: linking on the calling thread makes the graph the same for every
    // encoding (the graph is built on exact similarities), so recall differences are the
    // search's alone.
    for (i, v) in data.chunks(DIM).enumerate() {
        index.insert(i as u64, &unit(v)).unwrap();
    }
    index
}

#[test]
fn compressed_searches_keep_f32_recall_and_return_exact_scores() {
    let mut gen = Clustered::new(DIM, 40, seed(23));
    let data = gen.take(4000);
    let queries = gen.take(200);
    let f32_index = index_of(VectorEncoding::F32, &data);
    let truth = exact_all(&f32_index, &queries, DIM, 10);
    for ef in [16, 48] {
        let base = recall(&search_all(&f32_index, &queries, DIM, 10, ef), &truth, 10);
        for vectors in [VectorEncoding::Bf16, VectorEncoding::Int8] {
            let index = index_of(vectors, &data);
            assert_eq!(index.params().vectors, vectors);
            let got = search_all(&index, &queries, DIM, 10, ef);
            let r = recall(&got, &truth, 10);
            assert!(
                (r - base).abs() <= 0.01,
                "{vectors} ef {ef}: recall {r} vs f32 {base}"
            );
            // Scores are exact inner products with the stored f32 vectors, best first.
            for (hits, q) in got.iter().zip(queries.chunks(DIM)) {
                for w in hits.windows(2) {
                    assert!(w[0].score >= w[1].score);
                }
                for h in hits {
                    let v = index.vector(h.id).unwrap();
                    let exact: f32 = v.iter().zip(unit(q).as_slice()).map(|(a, b)| a * b).sum();
                    assert!(
                        (h.score - exact).abs() < 1e-5,
                        "{vectors}: {} vs {exact}",
                        h.score
                    );
                }
            }
        }
    }
}

#[test]
fn compressed_indexes_save_reopen_verify_and_grow() {
    let dir = tempfile::tempdir().unwrap();
    let mut gen = Clustered::new(DIM, 10, 5);
    let data = gen.take(600);
    let more = gen.take(100);
    let queries = gen.take(20);
    for vectors in VectorEncoding::ALL {
        let index = index_of(vectors, &data);
        let path = dir.path().join(format!("{vectors}.idx"));
        index.save(&path, 3).unwrap();
        let before = search_all(&index, &queries, DIM, 10, 32);
        let reopened = Index::open_verified(&path).unwrap();
        assert_eq!(reopened.params().vectors, vectors);
        assert_eq!(
            search_all(&reopened, &queries, DIM, 10, 32),
            before,
            "{vectors}"
        );
        // Items inserted after open get codes too, and survive the next save.
        for (i, v) in more.chunks(DIM).enumerate() {
            reopened.insert(10_000 + i as u64, &unit(v)).unwrap();
        }
        let hit = reopened.search(&unit(&more[..DIM]), 1, 32).unwrap();
        assert_eq!(hit[0].id, 10_000, "{vectors}");
        let again = dir.path().join(format!("{vectors}-2.idx"));
        reopened.save(&again, 4).unwrap();
        let grown = Index::open_verified(&again).unwrap();
        assert_eq!(grown.len(), 700);
        assert_eq!(
            search_all(&grown, &queries, DIM, 10, 32),
            search_all(&reopened, &queries, DIM, 10, 32)
        );
        let file = std::fs::metadata(&again).unwrap().len() as usize;
        let codes = 700 * vectors.code_len(DIM);
        assert!(file > 700 * DIM * 4 + codes, "{vectors}: {file} bytes");
    }
}

/// Rewrites the header's version field and checksum, as a version-`v` writer would have.
fn with_version(bytes: &mut [u8], v: u32) {
    bytes[8..12].copy_from_slice(&v.to_le_bytes());
    let sum = xxhash_rust::xxh3::xxh3_64_with_seed(&bytes[..504], 0x6d6c_6864_7200_0000);
    bytes[504..512].copy_from_slice(&sum.to_le_bytes());
}

#[test]
fn version_one_files_open_as_f32_and_cannot_claim_codes() {
    let dir = tempfile::tempdir().unwrap();
    let mut gen = Clustered::new(DIM, 5, 9);
    let data = gen.take(300);
    let queries = gen.take(10);
    let index = index_of(VectorEncoding::F32, &data);
    let path = dir.path().join("v2.idx");
    index.save(&path, 1).unwrap();
    // Version 1 laid out an f32 file byte for byte as version 2 does, the encoding field
    // being reserved zero bytes then.
    let mut v1 = std::fs::read(&path).unwrap();
    with_version(&mut v1, 1);
    let old = dir.path().join("v1.idx");
    std::fs::write(&old, &v1).unwrap();
    let opened = Index::open_verified(&old).unwrap();
    assert_eq!(opened.params().vectors, VectorEncoding::F32);
    assert_eq!(
        search_all(&opened, &queries, DIM, 10, 32),
        search_all(&index, &queries, DIM, 10, 32)
    );
    // A version-1 header that claims an encoding is refused.
    let int8 = index_of(VectorEncoding::Int8, &data);
    let p8 = dir.path().join("i8.idx");
    int8.save(&p8, 1).unwrap();
    let mut claimed = std::fs::read(&p8).unwrap();
    with_version(&mut claimed, 1);
    std::fs::write(&old, &claimed).unwrap();
    assert!(matches!(
        Index::open(&old),
        Err(IndexError::Corrupted { .. })
    ));
}

#[test]
fn encodings_parse_from_their_names() {
    assert_eq!(
        "int8".parse::<VectorEncoding>().unwrap(),
        VectorEncoding::Int8
    );
    assert_eq!(
        "BF16".parse::<VectorEncoding>().unwrap(),
        VectorEncoding::Bf16
    );
    assert!(matches!(
        "f16".parse::<VectorEncoding>(),
        Err(IndexError::InvalidParameter {
            name: "vectors",
            ..
        })
    ));
}
