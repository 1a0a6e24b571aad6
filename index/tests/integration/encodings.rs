//! Compressed vectors: bf16 indexes search their codes, re-score exactly and keep f32's recall;
//! int8 indexes keep only their codes and search them as well as an exact scan of the codes
//! allows; both save and reopen with their encoding; f32 files of versions 1-3 still open.

use memloop_index::{Index, IndexError, Params, Rescore, VectorEncoding};

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

/// 4,000 clustered vectors, 200 queries, their f32 index and exact top-10.
struct Clusters {
    data: Vec<f32>,
    queries: Vec<f32>,
    f32_index: Index,
    truth: Vec<Vec<memloop_index::Hit>>,
}

fn clusters() -> Clusters {
    let mut gen = Clustered::new(DIM, 40, seed(23));
    let data = gen.take(4000);
    let queries = gen.take(200);
    let f32_index = index_of(VectorEncoding::F32, &data);
    let truth = exact_all(&f32_index, &queries, DIM, 10);
    Clusters {
        data,
        queries,
        f32_index,
        truth,
    }
}

#[test]
fn bf16_searches_keep_f32_recall_and_return_exact_scores() {
    let Clusters {
        data,
        queries,
        f32_index,
        truth,
    } = clusters();
    let index = index_of(VectorEncoding::Bf16, &data);
    for ef in [16, 48] {
        let base = recall(&search_all(&f32_index, &queries, DIM, 10, ef), &truth, 10);
        let got = search_all(&index, &queries, DIM, 10, ef);
        let r = recall(&got, &truth, 10);
        assert!(
            (r - base).abs() <= 0.01,
            "bf16 ef {ef}: recall {r} vs f32 {base}"
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
                    "bf16: {} vs {exact}",
                    h.score
                );
            }
        }
    }
}

#[test]
fn int8_searches_find_what_a_scan_of_the_codes_finds_with_scores_within_their_error() {
    let Clusters {
        data,
        queries,
        f32_index,
        truth,
    } = clusters();
    let index = index_of(VectorEncoding::Int8, &data);
    // What the codes allow: an exact scan of them against the f32 truth. These clustered
    // 96-dimensional vectors have near ties that 8 bits cannot order; real 384-d text
    // embeddings lose far less (BENCHMARKS.md).
    let scan = exact_all(&index, &queries, DIM, 10);
    let ceiling = recall(&scan, &truth, 10);
    assert!(ceiling >= 0.95, "a scan of the codes finds {ceiling}");
    // The walk scores nodes on the 4-bit high halves of their codes, then re-scores its
    // candidates on the whole codes. On these clustered near ties it needs a wider beam than
    // an f32 walk: at ef 16 it found 0.89 of its scan where f32 found 0.98 of the truth, from
    // ef 48 within 0.002 (real 384-d text vectors lose nothing measurable at any ef:
    // BENCHMARKS.md). From ef 48 it loses to its own scan what an f32 walk loses to an f32
    // scan, and a little.
    for (ef, slack) in [(16, 0.1), (48, 0.02)] {
        let base = recall(&search_all(&f32_index, &queries, DIM, 10, ef), &truth, 10);
        let got = search_all(&index, &queries, DIM, 10, ef);
        let r = recall(&got, &scan, 10);
        assert!(
            r >= base - slack,
            "int8 ef {ef}: recall {r} of the scan vs f32 {base}"
        );
        for (hits, q) in got.iter().zip(queries.chunks(DIM)) {
            for w in hits.windows(2) {
                assert!(w[0].score >= w[1].score);
            }
            let q = unit(q);
            let q_l1: f32 = q.as_slice().iter().map(|x| x.abs()).sum();
            for h in hits {
                let row = h.id as usize * DIM;
                let v = unit(&data[row..row + DIM]);
                let exact: f32 = v
                    .as_slice()
                    .iter()
                    .zip(q.as_slice())
                    .map(|(a, b)| a * b)
                    .sum();
                // Each code is within half a step (max|v| / 127 / 2) of its value; the query's
                // own rounding is 256 times finer.
                let step = v.as_slice().iter().fold(0f32, |m, x| m.max(x.abs())) / 127.0;
                let bound = q_l1 * step / 2.0 * 1.01 + 1e-5;
                assert!(
                    (h.score - exact).abs() <= bound,
                    "{} vs {exact} (bound {bound})",
                    h.score
                );
                // The vector an int8 index gives back is its code's, within the same step.
                let back = index.vector(h.id).unwrap();
                for (a, b) in back.iter().zip(v.as_slice()) {
                    assert!((a - b).abs() <= step / 2.0 + 1e-6);
                }
            }
        }
    }
}

/// The test's own f32 rows, as an app's store would re-score from them.
struct Rows<'a>(&'a [f32]);

impl Rows<'_> {
    fn one(&self, id: u64, query: &[f32]) -> Option<f32> {
        let row = self.0.get(id as usize * DIM..(id as usize + 1) * DIM)?;
        Some(
            unit(row)
                .as_slice()
                .iter()
                .zip(query)
                .map(|(a, b)| a * b)
                .sum(),
        )
    }
}

impl Rescore for Rows<'_> {
    fn exact(&self, ids: &[u64], query: &[f32]) -> Vec<Option<f32>> {
        ids.iter().map(|&id| self.one(id, query)).collect()
    }
}

#[test]
fn int8_searches_rescored_on_the_callers_vectors_keep_f32_recall_and_exact_scores() {
    let Clusters {
        data,
        queries,
        f32_index,
        truth,
    } = clusters();
    let index = index_of(VectorEncoding::Int8, &data);
    let rows = Rows(&data);
    // As above, a narrow beam loses some on these clustered vectors (0.944 against f32's 0.976
    // at ef 16); from ef 48, f32's recall.
    for (ef, slack) in [(16, 0.05), (48, 0.01)] {
        let base = recall(&search_all(&f32_index, &queries, DIM, 10, ef), &truth, 10);
        let got: Vec<_> = queries
            .chunks(DIM)
            .map(|q| {
                index
                    .search_rescored(&unit(q), 10, ef, None, &rows)
                    .unwrap()
            })
            .collect();
        let r = recall(&got, &truth, 10);
        assert!(r >= base - slack, "ef {ef}: recall {r} vs f32 {base}");
        for (hits, q) in got.iter().zip(queries.chunks(DIM)) {
            assert_eq!(hits.len(), 10);
            for w in hits.windows(2) {
                assert!(w[0].score >= w[1].score);
            }
            for h in hits {
                assert_eq!(Some(h.score), rows.one(h.id, unit(q).as_slice()));
            }
        }
    }
    // An f32 index is exact already: the same hits with or without a re-scorer.
    let q = unit(&queries[..DIM]);
    assert_eq!(
        f32_index.search_rescored(&q, 10, 32, None, &rows).unwrap(),
        f32_index.search(&q, 10, 32).unwrap()
    );
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
        // An int8 file holds codes and no f32 vectors; the others hold the f32 vectors.
        let file = std::fs::metadata(&again).unwrap().len() as usize;
        let codes = 700 * vectors.code_len(DIM);
        let graph = 700 * (1 + 2 * 12) * 4;
        if vectors == VectorEncoding::Int8 {
            assert!(file < codes + graph + 700 * 40, "{vectors}: {file} bytes");
        } else {
            assert!(file > 700 * DIM * 4 + codes, "{vectors}: {file} bytes");
        }
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
    // A version-1 header that claims an encoding is refused (written over the file once it is
    // unmapped: Windows refuses to write a mapped file's length).
    drop(opened);
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
    // Versions 2 and 3 lay out f32 files as version 4 does. Their int8 files held whole codes
    // (and in version 2 f32 vectors too), so an int8 file labelled 2 or 3 is refused as a
    // version this build does not read (an owner rebuilds it), never read as planes.
    for version in [2, 3] {
        for (bytes, opens) in [
            (std::fs::read(&path).unwrap(), true),
            (std::fs::read(&p8).unwrap(), false),
        ] {
            let mut older = bytes;
            with_version(&mut older, version);
            std::fs::write(&old, &older).unwrap();
            match Index::open_verified(&old) {
                Ok(_) => assert!(opens, "version {version}"),
                Err(e) => assert!(
                    !opens
                        && matches!(
                            e,
                            IndexError::UnsupportedVersion { found, min: 4, .. } if found == version
                        ),
                    "version {version}: {e}"
                ),
            }
        }
    }
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
