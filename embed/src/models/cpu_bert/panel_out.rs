//! The output of a dense layer as the threads that fill it share it: each thread writes the
//! columns of its own weight panels, so the writes never overlap.
#![allow(unsafe_code)]

/// The output buffer shared by the threads that fill its disjoint column ranges.
#[derive(Clone, Copy)]
pub(super) struct Dst(pub(super) *mut f32);
// SAFETY: `Dst` only crosses threads inside `Linear::forward` and `QuantLinear::forward`,
// where every thread writes a column range of the output that no other thread touches, while
// `forward` holds the unique borrow of the buffer.
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
