//! Construction and search parameters, named as in Malkov & Yashunin (2018), "Efficient and
//! robust approximate nearest neighbor search using Hierarchical Navigable Small World graphs".

use crate::encoding::VectorEncoding;
use crate::error::{IndexError, Result};

/// HNSW parameters. Build one with [`Params::builder`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Vector dimension, fixed for the index's life.
    pub dim: usize,
    /// `M`: neighbours kept per node on levels ≥ 1.
    pub m: usize,
    /// `M0` = 2·M: neighbours kept per node on level 0.
    pub m0: usize,
    /// `efConstruction`: candidate list size while inserting.
    pub ef_construction: usize,
    /// `ef`: default candidate list size while searching.
    pub ef_search: usize,
    /// `mL` = 1/ln(M): level generation factor.
    pub ml: f64,
    /// Seed of the level generator (levels are a hash of seed and id, so builds repeat).
    pub seed: u64,
    /// A filtered search whose filter passes less than this fraction of the items scans them
    /// exactly instead of walking the graph (see `search::filter`).
    pub exact_below: f32,
    /// How searches read the vectors: f32, or compressed codes re-scored exactly (see
    /// [`VectorEncoding`]). Fixed for the index's life; recorded in the file.
    pub vectors: VectorEncoding,
}

/// Highest level a node can get; with M ≥ 2 reaching it needs ~2^16 more nodes than exist.
pub const MAX_LEVEL: usize = 16;
/// Largest supported `M`.
pub const MAX_M: usize = 128;
/// Largest supported dimension.
pub const MAX_DIM: usize = 65_536;
/// Default `exact_below`: measured with `ann-bench --filter-sweep` (BENCHMARKS.md).
pub const DEFAULT_EXACT_BELOW: f32 = 0.08;

impl Params {
    /// Starts a builder for `dim`-dimensional vectors with M = 16, efConstruction = 200,
    /// ef = 64, f32 vectors.
    pub fn builder(dim: usize) -> ParamsBuilder {
        ParamsBuilder {
            p: Params {
                dim,
                m: 16,
                m0: 32,
                ef_construction: 200,
                ef_search: 64,
                ml: 1.0 / (16f64).ln(),
                seed: 0x6d65_6d6c_6f6f_7021,
                exact_below: DEFAULT_EXACT_BELOW,
                vectors: VectorEncoding::F32,
            },
        }
    }

    /// Maximum neighbours on `level`.
    #[inline]
    pub fn max_links(&self, level: usize) -> usize {
        if level == 0 {
            self.m0
        } else {
            self.m
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |name, reason: String| Err(IndexError::InvalidParameter { name, reason });
        if self.dim == 0 || self.dim > MAX_DIM {
            return bad("dim", format!("must be in 1..={MAX_DIM}, got {}", self.dim));
        }
        if self.m < 2 || self.m > MAX_M {
            return bad("m", format!("must be in 2..={MAX_M}, got {}", self.m));
        }
        if self.m0 < self.m || self.m0 > 2 * MAX_M {
            return bad(
                "m0",
                format!("must be in m..={}, got {}", 2 * MAX_M, self.m0),
            );
        }
        if self.ef_construction == 0 || self.ef_construction > 1 << 16 {
            return bad(
                "ef_construction",
                format!("must be in 1..=65536, got {}", self.ef_construction),
            );
        }
        if self.ef_search == 0 || self.ef_search > 1 << 16 {
            return bad(
                "ef_search",
                format!("must be in 1..=65536, got {}", self.ef_search),
            );
        }
        if !(self.ml.is_finite() && self.ml > 0.0) {
            return bad(
                "ml",
                format!("must be finite and positive, got {}", self.ml),
            );
        }
        if !(0.0..=1.0).contains(&self.exact_below) {
            return bad(
                "exact_below",
                format!("must be in 0..=1, got {}", self.exact_below),
            );
        }
        Ok(())
    }
}

/// Builder for [`Params`]; every method has the paper's name.
#[derive(Debug, Clone)]
pub struct ParamsBuilder {
    p: Params,
}

impl ParamsBuilder {
    /// Sets `M` (and `M0` = 2·M, `mL` = 1/ln M).
    pub fn m(mut self, m: usize) -> Self {
        self.p.m = m;
        self.p.m0 = 2 * m;
        self.p.ml = 1.0 / (m.max(2) as f64).ln();
        self
    }
    /// Sets `efConstruction`.
    pub fn ef_construction(mut self, ef: usize) -> Self {
        self.p.ef_construction = ef;
        self
    }
    /// Sets the default search `ef`.
    pub fn ef_search(mut self, ef: usize) -> Self {
        self.p.ef_search = ef;
        self
    }
    /// Sets the level generator's seed.
    pub fn seed(mut self, seed: u64) -> Self {
        self.p.seed = seed;
        self
    }
    /// Sets the pass fraction below which filtered searches scan exactly.
    pub fn exact_below(mut self, fraction: f32) -> Self {
        self.p.exact_below = fraction;
        self
    }
    /// Sets how searches read the vectors (f32 by default).
    pub fn vectors(mut self, encoding: VectorEncoding) -> Self {
        self.p.vectors = encoding;
        self
    }
    /// Checks the ranges and returns the parameters.
    ///
    /// # Errors
    /// [`IndexError::InvalidParameter`] naming the first parameter out of range.
    pub fn build(self) -> Result<Params> {
        self.p.validate()?;
        Ok(self.p)
    }
}
