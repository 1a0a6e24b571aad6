//! One trait per engine under test (redb's `BenchDatabase` pattern), so every system runs the
//! same build / save / open / search sequence on the same data.

use std::path::Path;

use anyhow::{Context, Result};
use hnsw_rs::api::AnnT;
use hnsw_rs::hnswio::HnswIo;
use hnsw_rs::prelude::{DistDot, Hnsw};
use memloop_index::{
    Index, Params, Rescore, SearchScratch, UnitVector, UnitVectors, VectorEncoding,
};

use crate::texmex::Matrix;

/// Construction parameters shared by every system.
#[derive(Debug, Clone, Copy)]
pub struct BuildParams {
    /// HNSW `M`.
    pub m: usize,
    /// HNSW `efConstruction`.
    pub ef_construction: usize,
    /// How memloop's searches read the vectors (peers here keep f32).
    pub vectors: VectorEncoding,
}

/// An ANN engine under test. Ids are row numbers of the base file.
pub trait AnnSystem: Send {
    /// Name printed in the `"system"` field.
    fn name(&self) -> &'static str;
    /// Builds over all rows of `base` on the current rayon pool.
    fn build(&mut self, base: &Matrix<f32>, p: BuildParams) -> Result<()>;
    /// Writes the built index into the empty directory `dir`.
    fn save(&self, dir: &Path) -> Result<()>;
    /// Opens what `save` wrote (replacing any built state).
    fn open(&mut self, dir: &Path) -> Result<()>;
    /// Top-`k` row ids for `query` with beam width `ef`, into `out`.
    fn search(&mut self, query: &[f32], k: usize, ef: usize, out: &mut Vec<u64>);
    /// Hands the system the caller's own copy of the base vectors (a store's), for a system
    /// that re-scores from them; most ignore it.
    fn caller_vectors(&mut self, _base: Matrix<f32>) {}
    /// Whether [`AnnSystem::caller_vectors`] is used.
    fn wants_caller_vectors(&self) -> bool {
        false
    }
}

/// Makes the system named `name`.
///
/// # Errors
/// Unknown names.
pub fn by_name(name: &str) -> Result<Box<dyn AnnSystem>> {
    match name {
        "memloop" => Ok(Box::new(Memloop::default())),
        "memloop-rescored" => Ok(Box::new(Memloop {
            rescored: true,
            ..Memloop::default()
        })),
        "hnsw_rs" => Ok(Box::new(HnswRs::default())),
        other => {
            anyhow::bail!("unknown system {other:?} (known: memloop, memloop-rescored, hnsw_rs)")
        }
    }
}

/// memloop-index; `memloop-rescored` re-scores an int8 index's best candidates on the
/// caller's f32 vectors ([`Index::search_rescored`]), as an app whose store keeps them would.
#[derive(Default)]
pub struct Memloop {
    index: Option<Index>,
    scratch: SearchScratch,
    rescored: bool,
    exact: Option<ExactRows>,
}

/// The caller's f32 rows, as a [`Rescore`].
struct ExactRows(Matrix<f32>);

impl Rescore for ExactRows {
    fn exact(&self, ids: &[u64], query: &[f32]) -> Vec<Option<f32>> {
        ids.iter()
            .map(|&id| {
                let row = usize::try_from(id).ok().filter(|&r| r < self.0.rows())?;
                Some(memloop_index::simd::dot(query, self.0.row(row)))
            })
            .collect()
    }
}

impl AnnSystem for Memloop {
    fn name(&self) -> &'static str {
        if self.rescored {
            "memloop-rescored"
        } else {
            "memloop"
        }
    }
    fn caller_vectors(&mut self, base: Matrix<f32>) {
        self.exact = Some(ExactRows(base));
    }
    fn wants_caller_vectors(&self) -> bool {
        self.rescored
    }
    fn build(&mut self, base: &Matrix<f32>, p: BuildParams) -> Result<()> {
        let params = Params::builder(base.dim)
            .m(p.m)
            .ef_construction(p.ef_construction)
            .vectors(p.vectors)
            .build()?;
        let index = Index::new(params)?;
        let ids: Vec<u64> = (0..base.rows() as u64).collect();
        index.insert_batch(&ids, &UnitVectors::new(base.data.clone(), base.dim)?)?;
        self.index = Some(index);
        Ok(())
    }
    fn save(&self, dir: &Path) -> Result<()> {
        self.index
            .as_ref()
            .context("not built")?
            .save(dir.join("memloop.idx"), 0)?;
        Ok(())
    }
    fn open(&mut self, dir: &Path) -> Result<()> {
        self.index = Some(Index::open(dir.join("memloop.idx"))?);
        Ok(())
    }
    fn search(&mut self, query: &[f32], k: usize, ef: usize, out: &mut Vec<u64>) {
        out.clear();
        if let Some(index) = &self.index {
            // The query becomes a unit vector here, as the index normalised it before.
            let Ok(query) = UnitVector::new(query.to_vec()) else {
                return;
            };
            let hits = match &self.exact {
                Some(exact) => index.search_rescored(&query, k, ef, None, exact),
                None => index.search_with(&query, k, ef, None, &mut self.scratch),
            };
            if let Ok(hits) = hits {
                out.extend(hits.iter().map(|h| h.id));
            }
        }
    }
}

/// hnsw_rs's `DistDot` asserts 1 - <a, b> >= 0 and panics when rounding makes a unit vector's
/// self-product exceed 1; scaling every base and query vector by this factor keeps all rankings
/// and the assert.
const HNSW_RS_SHRINK: f32 = 1.0 - 1e-6;

/// hnsw_rs 0.3.5 with its inner-product distance (`DistDot`, unit vectors).
#[derive(Default)]
pub struct HnswRs {
    hnsw: Option<Hnsw<'static, f32, DistDot>>,
}

impl AnnSystem for HnswRs {
    fn name(&self) -> &'static str {
        "hnsw_rs"
    }
    fn build(&mut self, base: &Matrix<f32>, p: BuildParams) -> Result<()> {
        let hnsw = Hnsw::<f32, DistDot>::new(p.m, base.rows(), 16, p.ef_construction, DistDot {});
        let shrunk: Vec<f32> = base.data.iter().map(|x| x * HNSW_RS_SHRINK).collect();
        let items: Vec<(&[f32], usize)> = shrunk
            .chunks(base.dim)
            .enumerate()
            .map(|(i, r)| (r, i))
            .collect();
        hnsw.parallel_insert_slice(&items);
        self.hnsw = Some(hnsw);
        Ok(())
    }
    fn save(&self, dir: &Path) -> Result<()> {
        self.hnsw
            .as_ref()
            .context("not built")?
            .file_dump(dir, "hnsw_rs")?;
        Ok(())
    }
    fn open(&mut self, dir: &Path) -> Result<()> {
        // The loaded graph borrows its loader for its whole life; the probe process ends right
        // after searching, so leaking the loader is the simple way to get a 'static graph.
        let io: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, "hnsw_rs")));
        let mut hnsw = io.load_hnsw::<f32, DistDot>()?;
        hnsw.set_searching_mode(true);
        self.hnsw = Some(hnsw);
        Ok(())
    }
    fn search(&mut self, query: &[f32], k: usize, ef: usize, out: &mut Vec<u64>) {
        out.clear();
        if let Some(h) = &self.hnsw {
            let q: Vec<f32> = query.iter().map(|x| x * HNSW_RS_SHRINK).collect();
            out.extend(h.search(&q, k, ef).iter().map(|n| n.d_id as u64));
        }
    }
}
