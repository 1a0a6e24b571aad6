//! What an int8 kernel call is given (`int8.rs` and its platform kernels, `int8_neon.rs`):
//! up to [`ROWS`] input rows, one weight panel's columns, and where the outputs go.

/// Input rows a kernel call computes at once.
pub(super) const ROWS: usize = 4;

/// Where a block's outputs go: row `r`'s 64 floats start at `at + r · stride`.
#[derive(Clone, Copy)]
pub(super) struct Tile {
    pub(super) at: *mut f32,
    pub(super) stride: usize,
}

impl Tile {
    /// Row `r`'s first float.
    pub(super) fn row(self, r: usize) -> *mut f32 {
        self.at.wrapping_add(r * self.stride)
    }
}

/// One panel's 64 columns: weight scales, offsets (128 · colsum) and biases.
pub(super) struct Columns<'a> {
    pub(super) scale: &'a [f32],
    pub(super) offset: &'a [i32],
    pub(super) bias: &'a [f32],
}
