//! How memories fade, without the store or the handle: decay models and the forgetting
//! policy (`policy.rs`), the kinetic queue that finds the least retained memory at any time
//! (`kinetic/`), and the deadline indexes that say when a memory changes tier (`state.rs`).
//! `forget/` applies them to a store.

pub mod kinetic;
mod policy;
pub(crate) mod state;

pub(crate) use policy::DecayFields;
pub use policy::{DecayModel, ForgetPolicy};
pub use state::ForgetReason;
