//! What the dense layers (f32 in `matmul.rs`, int8 in `int8.rs`) share about their weight
//! panels: the panel width, when a product is worth spreading over threads, running the
//! panels, and the output buffer the threads fill, each thread the columns of its own panels,
//! so the writes never overlap (attention fills its output the same way, each task the
//! columns of its own head in the rows of its own sequence).
#![allow(unsafe_code)]

use rayon::prelude::*;

/// Output columns per weight panel.
pub(super) const PANEL: usize = 64;

/// Products of fewer multiply-adds than this run on one thread: sharing them costs more.
const PARALLEL_WORK: usize = 1 << 18;

/// Whether a `rows × inp` by `inp × out` product runs over the rayon pool (when `parallel`).
pub(super) fn shared(parallel: bool, rows: usize, inp: usize, out: usize) -> bool {
    parallel && rows * out * inp >= PARALLEL_WORK
}

/// Runs `one` for each of `count` tasks (panels, or blocks of rows and panels), in order, or
/// over the current rayon pool when `shared`.
pub(super) fn for_each_task(count: usize, shared: bool, one: impl Fn(usize) + Send + Sync) {
    if shared {
        (0..count).into_par_iter().for_each(one);
    } else {
        (0..count).for_each(one);
    }
}

/// The output buffer shared by the threads that fill its disjoint column ranges.
#[derive(Clone, Copy)]
pub(super) struct Dst(pub(super) *mut f32);
// SAFETY: `Dst` only crosses threads inside `Linear::forward`, `QuantLinear::forward` and
// `attention::attend`, where every thread writes a range of the output (columns, or a head's
// columns of a sequence's rows) that no other thread touches, while the function holds the
// unique borrow of the buffer.
unsafe impl Send for Dst {}
// SAFETY: as above.
unsafe impl Sync for Dst {}

impl Dst {
    /// The buffer from element `i` on (a method, so closures capture the whole `Send`
    /// wrapper rather than its raw pointer field).
    pub(super) fn at(self, i: usize) -> *mut f32 {
        self.0.wrapping_add(i)
    }
}
